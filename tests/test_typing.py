"""The package ships type information (PEP 561) and annotates its declaration layer."""

import importlib.resources
import inspect

import advgame as ag


def test_package_is_marked_typed():
    assert importlib.resources.files("advgame").joinpath("py.typed").is_file()


def test_public_entry_points_are_annotated():
    for function in (
        ag.PredictionGame.__init__,
        ag.PredictionGame.compile,
        ag.PredictionGame.explain,
        ag.Game.value,
        ag.Game.value_and_adversary,
        ag.datasets.load_csv,
    ):
        signature = inspect.signature(function)
        annotated = [p for p in signature.parameters.values() if p.name != "self"]
        assert all(p.annotation is not inspect.Parameter.empty for p in annotated), function
