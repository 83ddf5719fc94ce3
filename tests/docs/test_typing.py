"""The package ships type information (PEP 561) and annotates its declaration layer."""

import importlib.resources
import inspect

import pytest

import advgame as ag
from advgame import (
    cli,
    closed_forms,
    datasets,
    declaration,
    decoding,
    features,
    game,
    graph,
    inference,
    losses,
    metrics,
    models,
    oracle,
    permutation,
    plotting,
    polytopes,
    solvers,
    uncertainty,
    verify,
    vertices,
)
from advgame.compile import cvx as compile_cvx
from advgame.compile import graph as compile_graph
from advgame.compile import highs as compile_highs
from advgame.compile import learning as compile_learning
from advgame.compile import matching as compile_matching
from advgame.compile import minimax as compile_minimax
from advgame.compile import program as compile_program
from advgame.models import classifier as models_classifier
from advgame.models import graphical as models_graphical
from advgame.models import matching as models_matching
from advgame.models import minimax as models_minimax
from advgame.models import prediction_sets as models_prediction_sets
from advgame.models import projection as models_projection


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


# ---------------------------------------------------------------- issue #23: the public API
#: Modules whose whole ``__all__`` (functions, and classes with their public methods) is annotated.
FULLY_ANNOTATED_MODULES = (
    declaration,
    game,
    datasets,
    losses,
    uncertainty,
    polytopes,
    features,
    metrics,
    closed_forms,
    permutation,
    inference,
    decoding,
    graph,
    oracle,
    solvers,
    vertices,
    verify,
    plotting,
    cli,
    compile_program,
    compile_learning,
    compile_minimax,
    compile_matching,
    compile_graph,
    compile_cvx,
    compile_highs,
    models_classifier,
    models_graphical,
    models_matching,
    models_minimax,
    models_prediction_sets,
    models_projection,
)


def _unannotated(function):
    """Names of the parameters of ``function`` without an annotation (``self``, ``cls``,
    ``*args`` and ``**kwargs`` are exempt)."""
    signature = inspect.signature(function)
    return [
        p.name
        for p in signature.parameters.values()
        if p.name not in ("self", "cls")
        and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        and p.annotation is inspect.Parameter.empty
    ]


def _public_callables(obj):
    """``obj`` itself if a function; for a class its ``__init__`` and the public methods it
    defines or inherits from advgame classes (not from scikit-learn or ``object``)."""
    if not inspect.isclass(obj):
        return [(obj.__qualname__, obj)] if callable(obj) else []
    found = {}
    for klass in reversed(obj.__mro__):
        if not klass.__module__.startswith("advgame"):
            continue
        for name, member in vars(klass).items():
            if name != "__init__" and name.startswith("_"):
                continue
            if isinstance(member, (staticmethod, classmethod)):
                member = member.__func__
            if inspect.isfunction(member):
                found[name] = member
    return [(f"{obj.__name__}.{name}", member) for name, member in sorted(found.items())]


def _targets():
    for module in FULLY_ANNOTATED_MODULES:
        for name in module.__all__:
            yield from _public_callables(getattr(module, name))
    for name in models.__all__:  # the estimators as re-exported by advgame.models
        yield from _public_callables(getattr(models, name))


_TARGETS = list(_targets())


@pytest.mark.parametrize("qualname, function", _TARGETS, ids=[name for name, _ in _TARGETS])
def test_public_callables_have_annotated_parameters(qualname, function):
    assert not _unannotated(function), (qualname, _unannotated(function))
    assert inspect.signature(function).return_annotation is not inspect.Signature.empty, qualname


def test_annotated_estimators_keep_their_sklearn_signatures():
    """scikit-learn reads ``__init__`` signatures: every parameter keeps a default and is a
    parameter of ``get_params``."""
    for name in models.__all__:
        obj = getattr(models, name)
        if inspect.isclass(obj) and hasattr(obj, "get_params"):
            params = obj().get_params()
            assert all(
                p.default is not inspect.Parameter.empty
                for p in inspect.signature(obj.__init__).parameters.values()
                if p.name != "self"
            )
            assert set(params) == set(inspect.signature(obj.__init__).parameters) - {"self"}
