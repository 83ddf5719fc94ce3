"""Issue #36, point 5: every estimator reports ``gap_``, ``converged_`` and ``stop_reason_`` in
one vocabulary ('optimal' for exact programs, 'certified', 'uncertified'), whatever its solver."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.preprocessing import StandardScaler

import advgame as ag
from advgame._estimator.base import CONVERGENCE_STATUSES
from advgame.datasets import make_ordinal_sequences
from advgame.models.graphical import AdversarialGraphicalModel, StructuredSVM


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.fixture(scope="module")
def sequences():
    return make_ordinal_sequences(n_sequences=6, length=(3, 4), random_state=7)


def _check(model, expected):
    assert model.converged_ in CONVERGENCE_STATUSES and model.converged_ == expected
    assert isinstance(model.stop_reason_, str) and model.stop_reason_
    if expected == "optimal":
        assert model.gap_ >= 0.0
    elif expected == "certified":
        assert model.gap_ <= model.tol * max(1.0, abs(model.objective_))
    else:
        assert not model.gap_ <= getattr(model, "tol", 0.0) * max(1.0, abs(model.objective_))


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda: ag.AdversarialClassifier(solver="compile"), "optimal"),
        (lambda: ag.AdversarialClassifier(), "certified"),
        (lambda: ag.AdversarialClassifier(solver="lbfgs", certify=False), "uncertified"),
        (lambda: ag.MinimaxClassifier(solver="compile"), "optimal"),
        (lambda: ag.MinimaxClassifier(loss="log", tol=1e-4), "certified"),
        (lambda: ag.MinimaxClassifier(loss="log", max_iter=2), "uncertified"),
    ],
    ids=["clf-compile", "clf-smoothing", "clf-raw", "mm-compile", "mm-fast", "mm-budget"],
)
def test_classifiers_share_the_vocabulary(iris, make, expected):
    X, y = iris
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make().fit(X, y)
    _check(model, expected)


def test_regressor_shares_the_vocabulary(iris):
    X, y = iris
    _check(ag.MinimaxRegressor(solver="compile").fit(X[:, 1:], X[:, 0]), "optimal")
    _check(ag.MinimaxRegressor(solver="fast", tol=1e-6).fit(X[:, 1:], X[:, 0]), "certified")


def test_graphical_models_share_the_vocabulary(sequences):
    X, y = sequences
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled = AdversarialGraphicalModel(solver="compile").fit(X, y)
        planes = AdversarialGraphicalModel(solver="cutting_plane").fit(X, y)
        raw = AdversarialGraphicalModel(solver="subgradient", certify=False, max_iter=3).fit(X, y)
        svm = StructuredSVM(max_iter=3, random_state=0).fit(X, y)
        certified_svm = StructuredSVM(solver="frank_wolfe", tol=1e-3, max_iter=500).fit(X, y)
        frank_wolfe = AdversarialGraphicalModel(solver="frank_wolfe", tol=1e-3, max_iter=500)
        frank_wolfe.fit(X, y)
    _check(certified_svm, "certified")
    _check(frank_wolfe, "certified")
    _check(compiled, "optimal")
    _check(planes, "certified")
    _check(raw, "uncertified")
    _check(svm, "uncertified")
    assert svm.gap_ == np.inf
