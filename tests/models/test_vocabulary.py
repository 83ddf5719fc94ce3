"""One vocabulary of convergence (issue #36, point 5): every public estimator of advgame, fitted
on tiny data, has ``gap_`` (a float >= 0, possibly ``inf``) and ``converged_`` in
:data:`advgame._estimator.base.CONVERGENCE_STATUSES`, ``'optimal'`` exactly for the fits that
solve an exact program."""

import inspect

import numpy as np
import pytest
from sklearn.base import BaseEstimator

import advgame.baselines as baselines
import advgame.models as models
from advgame._estimator.base import CONVERGENCE_STATUSES

#: Tiny data: the prediction sets warn that their regions are unbounded; cvxpy may flag
#: Clarabel's answer as inaccurate at a weak regularisation.
pytestmark = [
    pytest.mark.filterwarnings("ignore:the acceptance regions"),
    pytest.mark.filterwarnings("ignore:Solution may be inaccurate"),
]

RNG = np.random.default_rng(0)
X = RNG.normal(size=(24, 2))
Y = np.arange(24) % 3
RANKS = np.array([RNG.permutation(3) + 1 for _ in range(24)])
XL = [RNG.normal(size=(n, 2)) for n in (2, 3, 3, 2)]
YL = [np.array([0, 1]), np.array([0, 1, 0]), np.array([1, 1, 0]), np.array([0, 0])]


#: ``case id -> (factory, fit arguments, exact)``: ``exact`` says whether the fit solves an exact
#: program (then ``converged_`` must be ``'optimal'``; otherwise it must not be).
CASES = {
    "AdversarialClassifier-compile": (
        lambda: models.AdversarialClassifier(solver="compile"),
        (X, Y),
        True,
    ),
    "AdversarialClassifierCV": (
        lambda: models.AdversarialClassifierCV(strengths=2, cv=2),
        (X, Y),
        False,
    ),
    "MinimaxClassifier-compile": (lambda: models.MinimaxClassifier(solver="compile"), (X, Y), True),
    "MinimaxClassifierCV": (
        lambda: models.MinimaxClassifierCV(loss="brier", radii=2, cv=2),
        (X, Y),
        False,
    ),
    "MinimaxRegressor-compile": (
        lambda: models.MinimaxRegressor(solver="compile"),
        (X, 2.0 * X[:, 0]),
        True,
    ),
    "ProjectionClassifier": (lambda: models.ProjectionClassifier(), (X, Y), False),
    "LabelRanker": (lambda: models.LabelRanker(), (X, RANKS), False),
    "AdversarialGraphicalModel-compile": (
        lambda: models.AdversarialGraphicalModel(solver="compile"),
        (XL, YL),
        True,
    ),
    "StructuredSVM": (lambda: models.StructuredSVM(random_state=0), (XL, YL), False),
    "AdversarialMatching-compile": (
        lambda: models.AdversarialMatching(solver="compile"),
        (X, RANKS),
        True,
    ),
    "AdversarialMatching-subgradient": (
        lambda: models.AdversarialMatching(solver="subgradient", max_iter=3, random_state=0),
        (X, RANKS),
        False,
    ),
    "GeneralizedPredictionSet": (
        lambda: models.GeneralizedPredictionSet(error_rate=0.2, n_unlabeled=8, random_state=0),
        (X, Y),
        True,
    ),
    **{
        name: (getattr(baselines, name), (X, Y), True)
        for name in baselines.__all__
        if inspect.isclass(getattr(baselines, name))
    },
    **{
        f"{name}-dual": (lambda name=name: getattr(baselines, name)(backend="dual"), (X, Y), False)
        for name in ("WestonWatkinsSVC", "CrammerSingerSVC", "LeeLinWahbaSVC", "OneVsAllAbstain")
    },
    "OneVsAllAbstain-libsvm": (
        lambda: baselines.OneVsAllAbstain(backend="libsvm"),
        (X, Y),
        False,
    ),
}


def _estimator_classes():
    """Every public estimator class of advgame.models and advgame.baselines."""
    found = set()
    for module in (models, baselines):
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isclass(value) and issubclass(value, BaseEstimator):
                found.add(name)
    return found


def test_every_estimator_has_a_case():
    covered = {case.split("-")[0] for case in CASES}
    assert _estimator_classes() <= covered, sorted(_estimator_classes() - covered)
    assert "AdversarialMatching" in _estimator_classes()  # the enumeration finds the lazy ones


@pytest.mark.parametrize("case", list(CASES))
def test_gap_and_converged(case):
    factory, data, exact = CASES[case]
    model = factory().fit(*data)
    assert isinstance(model.gap_, float)
    assert model.gap_ >= 0.0  # NaN fails here too; inf passes
    assert model.converged_ in CONVERGENCE_STATUSES
    assert (model.converged_ == "optimal") == exact, (model.converged_, model.stop_reason_)
    assert isinstance(model.stop_reason_, str) and model.stop_reason_
