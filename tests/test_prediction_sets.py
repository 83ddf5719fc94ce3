"""Generalised prediction sets (seed 003 Eqs. 6-7, DESIGN Appendix C): the dual QP against the
primal's KKT conditions and a direct primal solve, backend agreement, parallel determinism,
set-valued behaviour on blobs with outliers, and input checks."""

import cvxpy as cp
import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

import advgame as ag
from advgame.compile import Program
from advgame.exceptions import SolverError
from advgame.models.prediction_sets import (
    GeneralizedPredictionSet,
    class_dual_program,
    recover_rho,
)

#: Feasibility / complementary-slackness tolerance on the KKT conditions (solver tolerance ~1e-9).
KKT_TOL = 1e-6
#: Agreement of decision functions computed by different solvers or routes.
AGREE_TOL = 1e-5


def _blobs(seed=0, n=60):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal([-3.0, 0.0], 0.7, (n, 2)), rng.normal([3.0, 0.0], 0.7, (n, 2))])
    y = np.repeat(["a", "b"], n)
    outliers = rng.uniform(-8.0, 8.0, (n // 3, 2))
    return X, y, np.vstack([X, outliers])


@pytest.mark.parametrize("backend", ["highs", "cvxpy"])
def test_dual_solution_satisfies_primal_kkt(backend):
    rng = np.random.default_rng(1)
    X_class, X_unl = rng.normal(0.0, 1.0, (15, 2)), rng.normal(0.5, 2.0, (20, 2))
    gamma, C = 0.1, 0.3
    K = rbf_kernel(np.vstack([X_class, X_unl]), gamma=0.5)
    n_k = X_class.shape[0]
    program = class_dual_program(K[:n_k, :n_k], K[:n_k, n_k:], K[n_k:, n_k:], gamma, C)
    dual = program.solve(backend)
    a, b = dual.x[program.variables["a"]], dual.x[program.variables["b"]]
    t = dual.x[program.variables["t"]][0]
    coef = np.r_[a, -b]
    scores = K @ coef
    s, u = scores[:n_k], scores[n_k:]
    rho, lp, offset = recover_rho(s, u, gamma, C)
    eta, xi = lp.x[offset.variables["eta"]], lp.x[offset.variables["xi"]]
    # dual feasibility
    assert np.all(a >= -KKT_TOL) and np.all(a <= t + KKT_TOL)
    assert np.all(b >= -KKT_TOL) and np.all(b <= C + KKT_TOL)
    assert a.sum() - b.sum() == pytest.approx(1.0, abs=KKT_TOL)
    # primal feasibility
    class_slack = eta - (1 - s + rho)
    unl_slack = xi - (1 + u - rho)
    budget_slack = n_k * gamma - eta.sum()
    assert min(class_slack.min(), unl_slack.min(), budget_slack, eta.min(), xi.min()) >= -KKT_TOL
    # complementary slackness
    assert np.abs(a * class_slack).max() <= KKT_TOL
    assert np.abs((t - a) * eta).max() <= KKT_TOL
    assert abs(t * budget_slack) <= KKT_TOL
    assert np.abs(b * unl_slack).max() <= KKT_TOL
    assert np.abs((C - b) * xi).max() <= KKT_TOL
    # strong duality: the dual (a minimisation) is minus the primal
    primal = 0.5 * coef @ K @ coef - rho + C * xi.sum()
    assert primal == pytest.approx(-dual.objective, abs=KKT_TOL)


def test_backends_give_the_same_decision_function():
    X, y, X_unl = _blobs()
    fits = [
        GeneralizedPredictionSet(error_rate=0.1, C=0.05, backend=backend).fit(X, y, X_unl)
        for backend in ("highs", "cvxpy")
    ]
    grid = np.random.default_rng(2).uniform(-6, 6, (200, 2))
    F_highs, F_cvx = (fit.decision_function(grid) for fit in fits)
    np.testing.assert_allclose(F_highs, F_cvx, atol=AGREE_TOL)


def test_dual_route_equals_primal_solved_directly_for_linear_kernel():
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(0.0, 1.0, (8, 2)), rng.normal(4.0, 1.0, (8, 2))])
    y = np.repeat([0, 1], 8)
    X_unl = rng.normal(1.0, 2.0, (10, 2))
    gamma, C = 0.2, 0.3
    gps = GeneralizedPredictionSet(error_rate=gamma, kernel="linear", C=C).fit(X, y, X_unl)
    X_k = X[:8]
    w, rho = cp.Variable(2), cp.Variable()
    eta, xi = cp.Variable(8, nonneg=True), cp.Variable(10, nonneg=True)
    problem = cp.Problem(
        cp.Minimize(0.5 * cp.sum_squares(w) - rho + C * cp.sum(xi)),
        [eta >= 1 - X_k @ w + rho, cp.sum(eta) <= 8 * gamma, xi >= 1 + X_unl @ w - rho],
    )
    problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    grid = rng.uniform(-4, 8, (50, 2))
    np.testing.assert_allclose(
        gps.decision_function(grid)[:, 0], grid @ w.value - rho.value, atol=AGREE_TOL
    )
    assert gps.dual_objective_[0] == pytest.approx(-problem.value, abs=AGREE_TOL)


def test_parallel_fit_is_identical_to_serial():
    X, y, X_unl = _blobs(seed=4, n=30)
    fits = [
        GeneralizedPredictionSet(error_rate=0.1, C=0.1, n_jobs=n_jobs).fit(X, y, X_unl)
        for n_jobs in (1, 2)
    ]
    np.testing.assert_array_equal(fits[0].rho_, fits[1].rho_)
    for coef_1, coef_2 in zip(fits[0].dual_coef_, fits[1].dual_coef_):
        np.testing.assert_array_equal(coef_1, coef_2)
    np.testing.assert_array_equal(fits[0].decision_function(X), fits[1].decision_function(X))


def test_blobs_are_covered_and_far_points_rejected():
    X, y, X_unl = _blobs(seed=5)
    gps = GeneralizedPredictionSet(error_rate=0.05, C=0.05, random_state=0).fit(X, y, X_unl)
    sets = gps.predict_set(X)
    assert sets.shape == (X.shape[0], 2) and sets.dtype == bool
    assert sets[y == "a", 0].mean() >= 0.9 and sets[y == "b", 1].mean() >= 0.9
    far = np.array([[20.0, 20.0], [0.0, 10.0], [-15.0, -5.0]])
    assert not gps.predict_set(far).any()
    labels = gps.predict(np.vstack([X[:1], far]))
    assert labels.dtype == object and labels[0] == "a" and all(v is None for v in labels[1:])


def test_unlabelled_sample_defaults_to_x_and_is_subsampled():
    X, y, X_unl = _blobs(seed=6, n=20)
    assert np.array_equal(GeneralizedPredictionSet().fit(X, y).X_unlabeled_, X)
    gps = GeneralizedPredictionSet(n_unlabeled=15, random_state=0).fit(X, y, X_unl)
    assert gps.X_unlabeled_.shape == (15, 2)
    again = GeneralizedPredictionSet(n_unlabeled=15, random_state=0).fit(X, y, X_unl)
    np.testing.assert_array_equal(gps.X_unlabeled_, again.X_unlabeled_)


@pytest.mark.parametrize("rate", [0, 1, 1.5, -0.1, True, "0.1"])
def test_error_rate_must_be_in_open_unit_interval(rate):
    X, y, _ = _blobs(n=5)
    with pytest.raises(ValueError, match="error_rate must be a number in \\(0, 1\\)"):
        GeneralizedPredictionSet(error_rate=rate).fit(X, y)


def test_bad_inputs_are_rejected_with_clear_messages():
    X, y, X_unl = _blobs(n=5)
    with pytest.raises(ValueError, match="X_unlabeled has 3 features but X has 2"):
        GeneralizedPredictionSet().fit(X, y, np.ones((4, 3)))
    y_small = y.astype(object)
    y_small[0] = "lonely"
    with pytest.raises(ValueError, match="class 'lonely' has 1"):
        GeneralizedPredictionSet().fit(X, y_small, X_unl)
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        GeneralizedPredictionSet().fit(X_nan, y, X_unl)
    X_inf = X_unl.copy()
    X_inf[1, 1] = np.inf
    with pytest.raises(ValueError, match="X_unlabeled"):
        GeneralizedPredictionSet().fit(X, y, X_inf)
    with pytest.raises(ValueError, match="C must be"):
        GeneralizedPredictionSet(C=0.0).fit(X, y)
    with pytest.raises(ValueError, match="backend must be"):
        GeneralizedPredictionSet(backend="gurobi").fit(X, y)
    gps = GeneralizedPredictionSet().fit(X, y, X_unl)
    with pytest.raises(ValueError, match="features"):
        gps.predict_set(np.ones((2, 3)))


def test_solver_failure_raises_solver_error_with_status(monkeypatch):
    X, y, X_unl = _blobs(n=5)
    solve = Program.solve
    monkeypatch.setattr(
        Program, "solve", lambda self, backend="highs": solve(self, backend, time_limit=0.0)
    )
    with pytest.raises(SolverError, match="status 'Time limit reached'"):
        GeneralizedPredictionSet(backend="highs").fit(X, y, X_unl)


def test_prediction_set_metrics_by_hand():
    """Seed 003 §5's four metrics on a hand-checked example (two classes, label 9 = outlier)."""
    y = np.array([0, 0, 1, 1, 9, 9])
    sets = np.array(
        [[True, False], [False, False], [True, True], [False, True], [False, False], [True, False]]
    )
    m = ag.metrics.prediction_set_metrics(y, sets, classes=[0, 1])
    np.testing.assert_allclose(m["coverage"], [0.5, 1.0])
    assert m["cardinality"] == pytest.approx(5 / 6)  # sizes 1, 0, 2, 1, 0, 1
    assert m["conditional_cardinality"] == pytest.approx(4 / 4)
    assert m["detection_rate"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="boolean"):
        ag.metrics.prediction_set_metrics(y, sets.astype(int), classes=[0, 1])
