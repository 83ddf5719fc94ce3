"""``verbose``: silent by default; 1 prints a fit's stages and what it found on stderr; 2 also
its iterations.  Warnings still point at the caller's line (no wrapper frame)."""

import warnings

import networkx as nx
import numpy as np
import pytest

import advgame as ag

RNG = np.random.default_rng(0)
X = RNG.normal(size=(40, 3))
Y = np.arange(40) % 3
RANKS = np.array([RNG.permutation(3) + 1 for _ in range(40)])
X_LIST = [RNG.normal(size=(3, 2)) for _ in range(6)]
Y_LIST = [RNG.integers(0, 2, size=3) for _ in range(6)]

FITS = {
    "AdversarialClassifier": (lambda v: ag.AdversarialClassifier(verbose=v), (X, Y)),
    "MinimaxClassifier": (lambda v: ag.MinimaxClassifier(verbose=v), (X, Y)),
    "MinimaxRegressor": (lambda v: ag.MinimaxRegressor(verbose=v), (X, X[:, 0])),
    "ProjectionClassifier": (lambda v: ag.ProjectionClassifier(verbose=v), (X, Y)),
    "LabelRanker": (lambda v: ag.LabelRanker(verbose=v, max_iter=50), (X, RANKS)),
    "AdversarialMatching": (lambda v: ag.AdversarialMatching(verbose=v), (X, RANKS)),
    "GeneralizedPredictionSet": (
        lambda v: ag.GeneralizedPredictionSet(verbose=v, error_rate=0.3, random_state=0),
        (X, Y),
    ),
    "AdversarialGraphicalModel": (
        lambda v: ag.AdversarialGraphicalModel(graph=nx.path_graph(3), verbose=v),
        (X_LIST, Y_LIST),
    ),
    "StructuredSVM": (
        lambda v: ag.StructuredSVM(graph=nx.path_graph(3), verbose=v, max_iter=5),
        (X_LIST, Y_LIST),
    ),
}


@pytest.mark.parametrize("name", list(FITS))
def test_verbose_prints_the_fit_on_stderr_and_nothing_by_default(name, capsys):
    make, data = FITS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        make(0).fit(*data)
        quiet = capsys.readouterr()
        make(1).fit(*data)
        loud = capsys.readouterr()
    assert quiet.out == quiet.err == "" and loud.out == ""
    lines = loud.err.strip().splitlines()
    assert lines[0] == f"[{name}] fitting on {len(data[0])} samples"
    assert lines[-1].startswith(f"[{name}] fitted in ")


@pytest.mark.parametrize("name", ["ProjectionClassifier", "MinimaxClassifier"])
def test_verbose_two_reports_iterations(name, capsys):
    model = (
        ag.ProjectionClassifier(verbose=2)
        if name == "ProjectionClassifier"
        else ag.MinimaxClassifier(verbose=2, solver="fast")
    )
    model.fit(X, Y)
    err = capsys.readouterr().err
    assert "iteration" in err and err.count(f"[{name}]") >= 3


@pytest.mark.parametrize(
    "model",
    [
        ag.GeneralizedPredictionSet(verbose=1, random_state=0),
        ag.MinimaxClassifier(solver="fast", max_iter=3, verbose=1),  # FISTA's budget
    ],
    ids=lambda model: type(model).__name__,
)
def test_warnings_still_point_at_the_caller(model):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, Y)
    assert any(w.filename == __file__ for w in caught), [w.filename for w in caught]
