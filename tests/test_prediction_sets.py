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
    MEDIAN_HEURISTIC_MAX_POINTS,
    GeneralizedPredictionSet,
    class_dual_program,
    conformal_threshold,
    median_heuristic_gamma,
    recover_rho,
)

#: Feasibility / complementary-slackness tolerance on the KKT conditions (solver tolerance ~1e-9).
KKT_TOL = 1e-6
#: Agreement of decision functions computed by different solvers or routes.
AGREE_TOL = 1e-5
#: Warning raised when a class has fewer than ``1 / γ - 1`` calibration points.
FEW_CALIBRATION = "ignore:.*calibration points are too few"


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
        GeneralizedPredictionSet(error_rate=0.1, C=0.05, backend=backend, random_state=0).fit(
            X, y, X_unl
        )
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
    gps = GeneralizedPredictionSet(error_rate=gamma, kernel="linear", C=C, calibration=None)
    gps.fit(X, y, X_unl)
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
        GeneralizedPredictionSet(error_rate=0.1, C=0.1, n_jobs=n_jobs, random_state=0).fit(
            X, y, X_unl
        )
        for n_jobs in (1, 2)
    ]
    np.testing.assert_array_equal(fits[0].rho_, fits[1].rho_)
    for coef_1, coef_2 in zip(fits[0].dual_coef_, fits[1].dual_coef_):
        np.testing.assert_array_equal(coef_1, coef_2)
    np.testing.assert_array_equal(fits[0].decision_function(X), fits[1].decision_function(X))


def test_blobs_are_covered_and_far_points_rejected():
    X, y, X_unl = _blobs(seed=5)
    gps = GeneralizedPredictionSet(error_rate=0.1, C=0.05, random_state=0).fit(X, y, X_unl)
    sets = gps.predict_set(X)
    assert sets.shape == (X.shape[0], 2) and sets.dtype == bool
    assert sets[y == "a", 0].mean() >= 0.9 and sets[y == "b", 1].mean() >= 0.9
    far = np.array([[20.0, 20.0], [0.0, 10.0], [-15.0, -5.0]])
    assert not gps.predict_set(far).any()
    labels = gps.predict(np.vstack([X[:1], far]))
    assert labels.dtype == object and labels[0] == "a" and all(v is None for v in labels[1:])


@pytest.mark.filterwarnings(FEW_CALIBRATION)
def test_unlabelled_sample_defaults_to_x_and_is_subsampled():
    X, y, X_unl = _blobs(seed=6, n=20)
    assert np.array_equal(GeneralizedPredictionSet(calibration=None).fit(X, y).X_unlabeled_, X)
    gps = GeneralizedPredictionSet(random_state=0).fit(X, y)
    held_out = np.concatenate(gps.calibration_index_)
    assert held_out.size == 2 * 6  # floor(0.3 * 20) per class
    np.testing.assert_array_equal(gps.X_unlabeled_, np.delete(X, held_out, axis=0))
    gps = GeneralizedPredictionSet(n_unlabeled=15, random_state=0).fit(X, y, X_unl)
    assert gps.X_unlabeled_.shape == (15, 2)
    again = GeneralizedPredictionSet(n_unlabeled=15, random_state=0).fit(X, y, X_unl)
    np.testing.assert_array_equal(gps.X_unlabeled_, again.X_unlabeled_)


@pytest.mark.parametrize("rate", [0, 1, 1.5, -0.1, True, "0.1"])
def test_error_rate_must_be_in_open_unit_interval(rate):
    X, y, _ = _blobs(n=5)
    with pytest.raises(ValueError, match="error_rate must be a number in \\(0, 1\\)"):
        GeneralizedPredictionSet(error_rate=rate).fit(X, y)


@pytest.mark.filterwarnings(FEW_CALIBRATION)
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
    for C in (0.0, -1.0, np.inf, True, "fast", None):
        with pytest.raises(ValueError, match="C must be a finite number > 0 or 'auto'"):
            GeneralizedPredictionSet(C=C).fit(X, y)
    for fraction in (0, 1, 1.5, -0.1, True, "0.3"):
        with pytest.raises(ValueError, match="calibration must be None or a number in \\(0, 1\\)"):
            GeneralizedPredictionSet(calibration=fraction).fit(X, y)
    with pytest.raises(ValueError, match="standardize must be True or False"):
        GeneralizedPredictionSet(standardize="yes").fit(X, y)
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


def _two_gaussians(rng, n):
    """``n`` points of each of two overlapping Gaussian classes in 2-D (labels 0, 1)."""
    X = np.vstack([rng.normal([-1.5, 0.0], 1.0, (n, 2)), rng.normal([1.5, 1.0], 1.5, (n, 2))])
    return X, np.repeat([0, 1], n)


def test_default_thresholds_give_coverage_on_fresh_data():
    """Split-conformal coverage >= 1 - γ (seed 003 Proposition 6), averaged over replications."""
    gamma, n_k, n_test, reps = 0.1, 100, 2000, 20
    coverage = np.empty((reps, 2))
    for rep in range(reps):
        rng = np.random.default_rng(100 + rep)
        X, y = _two_gaussians(rng, n_k)
        gps = GeneralizedPredictionSet(error_rate=gamma, random_state=rep).fit(X, y)
        X_new, y_new = _two_gaussians(rng, n_test)
        sets = gps.predict_set(X_new)
        coverage[rep] = [sets[y_new == k, k].mean() for k in (0, 1)]
    n_cal = int(0.3 * n_k)
    standard_error = np.sqrt(gamma * (1 - gamma) / (reps * n_cal))
    assert np.all(coverage.mean(axis=0) >= 1 - gamma - 3 * standard_error), coverage.mean(axis=0)


def test_calibrated_thresholds_are_the_conformal_quantile_and_are_applied():
    rng = np.random.default_rng(7)
    X, y = _two_gaussians(rng, 50)
    gamma = 0.1
    gps = GeneralizedPredictionSet(error_rate=gamma, random_state=0).fit(X, y)
    assert gps.C_ == pytest.approx(1.0 / gps.X_unlabeled_.shape[0])
    grid = rng.uniform(-5.0, 5.0, (300, 2))
    raw = np.column_stack(  # f_k = w.Phi - rho, computed from the stored support
        [
            rbf_kernel(grid, sv, gamma=g) @ coef - rho
            for sv, coef, rho, g in zip(
                gps.support_vectors_, gps.dual_coef_, gps.rho_, gps.kernel_gamma_
            )
        ]
    )
    for k, rows in enumerate(gps.calibration_index_):
        assert rows.size == 15 and np.all(y[rows] == k)
        scores = np.sort(
            rbf_kernel(X[rows], gps.support_vectors_[k], gamma=gps.kernel_gamma_[k])
            @ gps.dual_coef_[k]
            - gps.rho_[k]
        )
        assert gps.thresholds_[k] == pytest.approx(scores[int(gamma * 16) - 1], abs=AGREE_TOL)
    assert np.all(gps.thresholds_ != 0.0)
    np.testing.assert_allclose(gps.decision_function(grid), raw - gps.thresholds_, atol=AGREE_TOL)
    sets = gps.predict_set(grid)
    decided = np.abs(raw - gps.thresholds_) > AGREE_TOL
    np.testing.assert_array_equal(sets[decided], (raw >= gps.thresholds_)[decided])
    assert np.any(sets[decided] != (raw >= 0)[decided])  # the thresholds change some sets
    labels = gps.predict(grid)
    single = sets.sum(axis=1) == 1
    assert np.all(labels[single] == np.argmax(sets[single], axis=1))
    assert all(label is None for label in labels[~single])


def test_without_calibration_the_threshold_is_rho_as_before():
    """``calibration=None``: every class point in the QP, ``f_k >= 0`` with the QP's ``rho``."""
    X, y, X_unl = _blobs(seed=8, n=25)
    gamma, C, width = 0.1, 0.05, 0.5
    gps = GeneralizedPredictionSet(error_rate=gamma, gamma=width, C=C, calibration=None)
    gps.fit(X, y, X_unl)
    np.testing.assert_array_equal(gps.thresholds_, 0.0)
    grid = np.random.default_rng(9).uniform(-6, 6, (100, 2))
    for k, label in enumerate(gps.classes_):
        X_k = X[y == label]
        points = np.vstack([X_k, X_unl])
        K = rbf_kernel(points, gamma=width)
        n_k = X_k.shape[0]
        program = class_dual_program(K[:n_k, :n_k], K[:n_k, n_k:], K[n_k:, n_k:], gamma, C)
        dual = program.solve("highs")
        coef = np.r_[dual.x[program.variables["a"]], -dual.x[program.variables["b"]]]
        scores = K @ coef
        rho = recover_rho(scores[:n_k], scores[n_k:], gamma, C)[0]
        expected = rbf_kernel(grid, points, gamma=width) @ coef - rho
        np.testing.assert_allclose(gps.decision_function(grid)[:, k], expected, atol=AGREE_TOL)


def test_median_heuristic_width_equals_a_direct_computation():
    X, y, X_unl = _blobs(seed=10, n=30)
    gps = GeneralizedPredictionSet(error_rate=0.1, random_state=0).fit(X, y, X_unl)
    for k, label in enumerate(gps.classes_):
        held_out = gps.calibration_index_[k]
        fitted = np.setdiff1d(np.flatnonzero(y == label), held_out)
        points = np.vstack([X[fitted], X_unl])
        squared = ((points[:, None, :] - points[None, :, :]) ** 2).sum(axis=-1)
        pairs = squared[np.triu_indices(points.shape[0], k=1)]
        assert gps.kernel_gamma_[k] == pytest.approx(1.0 / np.median(pairs), rel=1e-12)
    big = np.random.default_rng(11).normal(size=(MEDIAN_HEURISTIC_MAX_POINTS + 200, 3))
    rows = np.random.RandomState(5).choice(big.shape[0], MEDIAN_HEURISTIC_MAX_POINTS, replace=False)
    sub = big[rows]
    squared = ((sub[:, None, :] - sub[None, :, :]) ** 2).sum(axis=-1)
    direct = 1.0 / np.median(squared[np.triu_indices(sub.shape[0], k=1)])
    assert median_heuristic_gamma(big, 5) == pytest.approx(direct, rel=1e-12)
    with pytest.raises(ValueError, match="pass the RBF width gamma"):
        median_heuristic_gamma(np.ones((4, 2)))


def test_standardize_is_off_by_default_and_makes_the_fit_scale_invariant():
    X, y, X_unl = _blobs(seed=12, n=30)
    scale = np.array([1000.0, 0.01])
    grid = np.random.default_rng(13).uniform(-6, 6, (50, 2))
    assert GeneralizedPredictionSet(error_rate=0.1).fit(X, y, X_unl).scaler_ is None
    fits = [
        GeneralizedPredictionSet(error_rate=0.1, standardize=True, random_state=0).fit(
            X * s, y, X_unl * s
        )
        for s in (1.0, scale)
    ]
    np.testing.assert_allclose(
        fits[0].decision_function(grid), fits[1].decision_function(grid * scale), atol=AGREE_TOL
    )
    np.testing.assert_allclose(fits[1].scaler_.scale_, X.std(axis=0) * scale)


def test_conformal_threshold_rank_and_too_few_points():
    scores = np.array([5.0, -1.0, 3.0, 0.5, 2.0, 4.0, 1.0, -2.0, 6.0])  # n = 9
    assert conformal_threshold(scores, 0.2) == -1.0  # floor(0.2 * 10) = 2: the 2nd smallest
    assert conformal_threshold(scores, 0.35) == 0.5  # floor(3.5) = 3
    with pytest.warns(UserWarning, match="9 calibration points are too few.*at least 11 are"):
        assert conformal_threshold(scores, 0.09) == -np.inf
    X, y, _ = _blobs(seed=14, n=10)  # 3 calibration points per class
    with pytest.warns(UserWarning, match="too few for error_rate=0.1"):
        gps = GeneralizedPredictionSet(error_rate=0.1, random_state=0).fit(X, y)
    np.testing.assert_array_equal(gps.thresholds_, -np.inf)
    assert gps.predict_set(np.array([[100.0, -100.0]])).all()


def test_offset_is_the_unique_root_even_when_c_times_active_points_is_one():
    """``C × #{unlabelled points inside the margin} = 1``: the offset LP still has one optimum,
    the root of ``sum_i (1 - s_i + rho)_+ = n_k γ`` (see :func:`recover_rho`)."""
    s = np.array([2.0, 0.5, 1.0, 3.0])
    u = np.array([-0.5, 0.2, -5.0])
    gamma, C = 0.25, 0.5  # budget n_k γ = 1; two unlabelled points active near the optimum
    # root: (1 - 0.5 + rho)_+ + (1 - 1 + rho)_+ = 1 with both terms active -> 2 rho + 0.5 = 1
    rho_star = 0.25
    assert np.sum(u > rho_star - 1) * C == 1.0
    rho, solution, program = recover_rho(s, u, gamma, C)
    assert rho == pytest.approx(rho_star, abs=KKT_TOL)
    order = np.array([3, 1, 0, 2])
    assert recover_rho(s[order], u[::-1], gamma, C)[0] == pytest.approx(rho_star, abs=KKT_TOL)
    objective = lambda r: -r + C * np.maximum(1 + u - r, 0).sum()  # noqa: E731
    assert solution.objective == pytest.approx(objective(rho_star), abs=KKT_TOL)
    assert objective(rho_star - 0.1) > objective(rho_star) + 0.1  # slope <= -1: no flat piece
