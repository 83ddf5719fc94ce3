"""Concurrency ([reliability] item 4): estimators and the persistent HiGHS oracle give the serial
results when used from several threads (joblib threading, ThreadPoolExecutor) and processes
(joblib loky), including one fitted estimator and one ``Game`` shared by every thread."""

import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from joblib import Parallel, delayed

import advgame as ag
from advgame.models import (
    AdversarialClassifier,
    AdversarialGraphicalModel,
    GeneralizedPredictionSet,
)

RNG = np.random.default_rng(2)
X = RNG.normal(size=(15, 2))
Y = np.arange(15) % 3
#: No closed form: the game is solved by the LP oracle (``method='lp'``) or vertex tables.
GENERAL = np.array([[0.0, 1.0, 2.5], [1.3, 0.0, 0.7], [2.0, 0.4, 0.0], [0.9, 0.8, 0.6]])
SIZES = [2, 3, 3, 2]
XL = [RNG.normal(size=(n, 2)) for n in SIZES]
YL = [np.array([0, 1]), np.array([0, 1, 0]), np.array([1, 1, 0]), np.array([0, 0])]
N_TASKS = 8


def _fit_predict(kind, seed):
    """Fit one estimator from scratch and return its outputs (run in workers)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "graphical":
            model = AdversarialGraphicalModel(solver="compile").fit(XL, YL)
            return np.concatenate(model.predict(XL)), model.theta_
        if kind == "prediction_set":
            model = GeneralizedPredictionSet(
                error_rate=0.2, n_unlabeled=5, n_jobs=2, random_state=seed
            ).fit(X, Y)
            return model.predict_set(X), model.decision_function(X)
        model = AdversarialClassifier(loss=GENERAL, solver=kind, random_state=seed).fit(X, Y)
        return model.predict_action_proba(X), model.theta_


def _assert_equal(results, reference):
    for result in results:
        for got, expected in zip(result, reference):
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


KINDS = [
    "compile",
    "lbfgs",
    "graphical",
    pytest.param("prediction_set", marks=pytest.mark.slow),  # 11 s
]


@pytest.mark.parametrize("kind", KINDS)
def test_fits_in_threads_equal_serial(kind):
    reference = _fit_predict(kind, 0)
    tasks = 3 if kind == "prediction_set" else N_TASKS  # each one also runs n_jobs=2 inside
    threaded = Parallel(n_jobs=4, backend="threading")(
        delayed(_fit_predict)(kind, 0) for _ in range(tasks)
    )
    _assert_equal(threaded, reference)
    with ThreadPoolExecutor(max_workers=4) as pool:
        pooled = list(pool.map(_fit_predict, [kind] * tasks, [0] * tasks))
    _assert_equal(pooled, reference)


@pytest.mark.slow  # loky worker start-up and a compiled fit each (8-10 s)
@pytest.mark.parametrize("kind", ["compile", "graphical"])
def test_fits_in_processes_equal_serial(kind):
    reference = _fit_predict(kind, 0)
    results = Parallel(n_jobs=2, backend="loky")(delayed(_fit_predict)(kind, 0) for _ in range(2))
    _assert_equal(results, reference)


def test_one_fitted_estimator_shared_by_threads():
    """predict / predict_action_proba of ONE fitted model from many threads at once."""
    model = AdversarialClassifier(loss=GENERAL, solver="compile").fit(X, Y)
    blocks = [RNG.normal(size=(20, 2)) for _ in range(N_TASKS)]
    serial = [(model.predict(B), model.predict_action_proba(B)) for B in blocks]
    threaded = Parallel(n_jobs=4, backend="threading")(
        delayed(lambda B: (model.predict(B), model.predict_action_proba(B)))(B) for B in blocks
    )
    for (p, q), (p2, q2) in zip(serial, threaded):
        np.testing.assert_array_equal(p, p2)
        np.testing.assert_allclose(q, q2, rtol=0, atol=1e-12)


def test_one_game_lp_oracle_shared_by_threads():
    """The persistent HiGHS model of one Game, solved from several threads on different rows:
    every thread gets its own rows' values (the oracle's lock serialises the model)."""
    game = ag.Game(GENERAL)
    blocks = [RNG.normal(scale=3.0, size=(25, 3)) for _ in range(3 * N_TASKS)]
    serial = [game.value(F, method="lp") for F in blocks]
    fresh = ag.Game(GENERAL)
    threaded = Parallel(n_jobs=4, backend="threading")(
        delayed(fresh.value)(F, method="lp") for F in blocks
    )
    with ThreadPoolExecutor(max_workers=4) as pool:
        pooled = list(pool.map(lambda F: fresh.value(F, method="lp"), blocks))
    for expected, got, again in zip(serial, threaded, pooled):
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
        np.testing.assert_allclose(again, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        serial[0], ag.Game(GENERAL).value(blocks[0], method="vertices"), atol=1e-9
    )
