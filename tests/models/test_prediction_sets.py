"""Generalised prediction sets (Wang and Qiao 2022, Eqs. 6-7; design notes, Appendix C): the dual QP against the
primal's KKT conditions and a direct primal solve, backend agreement, parallel determinism,
set-valued behaviour on blobs with outliers, and input checks."""

import warnings

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog
from scipy.stats import beta as beta_law
from sklearn.metrics.pairwise import pairwise_kernels, rbf_kernel
from sklearn.utils.estimator_checks import check_estimator

import advgame as ag
from advgame.compile import Program
from advgame.datasets import OUTLIER, make_prediction_set_example1
from advgame.exceptions import ConvergenceWarning, SolverError
from advgame.features import KernelFeatures
from advgame.models.prediction_sets import (
    AUTO_FEATURE_PENALTIES,
    C_FACTORS,
    MEDIAN_HEURISTIC_MAX_POINTS,
    WIDTH_FACTORS,
    GeneralizedPredictionSet,
    calibration_size,
    class_dual_program,
    conformal_rank,
    conformal_threshold,
    feature_selection_objective,
    feature_weight_step,
    held_out_acceptance,
    median_heuristic_gamma,
    offset_from_scores,
    recover_rho,
    solve_class_dual,
    tuning_split,
    weighted_kernel_gradient,
)
from advgame.solvers.prediction_sets import select_features as _select_features

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


def _solve_dual(K, n_k, gamma, C, backend):
    """``(a, b, t, objective)`` of the class dual by one backend."""
    if backend == "ipm":
        return solve_class_dual(K, n_k, gamma, C)
    program = class_dual_program(K[:n_k, :n_k], K[:n_k, n_k:], K[n_k:, n_k:], gamma, C)
    # HiGHS' QP solver has stalled for minutes on degenerate kernels: bound it
    dual = program.solve(backend, **({"time_limit": 20.0} if backend == "highs" else {}))
    x = dual.x
    return (
        x[program.variables["a"]],
        x[program.variables["b"]],
        x[program.variables["t"]][0],
        dual.objective,
    )


@pytest.mark.parametrize("backend", ["ipm", "highs", "cvxpy"])
def test_dual_solution_satisfies_primal_kkt(backend):
    rng = np.random.default_rng(1)
    X_class, X_unl = rng.normal(0.0, 1.0, (15, 2)), rng.normal(0.5, 2.0, (20, 2))
    gamma, C = 0.1, 0.3
    K = rbf_kernel(np.vstack([X_class, X_unl]), gamma=0.5)
    n_k = X_class.shape[0]
    a, b, t, dual_objective = _solve_dual(K, n_k, gamma, C, backend)
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
    assert primal == pytest.approx(-dual_objective, abs=KKT_TOL)


@pytest.mark.slow  # both backends' fits (about 7 s)
def test_backends_give_the_same_decision_function():
    X, y, X_unl = _blobs()
    fits = [
        GeneralizedPredictionSet(
            error_rate=0.1, gamma=0.3, C=0.05, backend=backend, random_state=0
        ).fit(X, y, X_unl)
        for backend in ("ipm", "highs", "cvxpy")
    ]
    grid = np.random.default_rng(2).uniform(-6, 6, (200, 2))
    F_ipm, F_highs, F_cvx = (fit.decision_function(grid) for fit in fits)
    np.testing.assert_allclose(F_ipm, F_highs, atol=AGREE_TOL)
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


@pytest.mark.slow  # two fits with a process pool (about 8 s)
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
    np.testing.assert_array_equal(labels, ["a", "outlier", "outlier", "outlier"])


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


@pytest.mark.slow  # repeated fits on fresh samples (about 20 s)
def test_default_thresholds_give_coverage_on_fresh_data():
    """Split-conformal coverage >= 1 - γ (Wang and Qiao 2022, Proposition 6), averaged over replications."""
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
    m = gps.X_unlabeled_.shape[0]
    assert all(np.isclose(C * m, C_FACTORS).any() for C in gps.C_)
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
    size = sets.sum(axis=1)
    assert np.all(labels[size == 1] == np.argmax(sets[size == 1], axis=1))
    assert np.all(labels[size == 0] == -1) and np.all(labels[size == 2] == -2)
    assert labels.dtype.kind == "i" and (size == 0).any() and (size == 2).any()


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


def test_tuned_width_is_a_multiple_of_the_median_heuristic():
    """The candidates are ``WIDTH_FACTORS`` times the median heuristic on the class's fitting
    points and the unlabelled sample (computed here directly), and the chosen one has the
    smallest held-out acceptance rate."""
    X, y, X_unl = _blobs(seed=10, n=30)
    gps = GeneralizedPredictionSet(error_rate=0.1, C=0.05, random_state=0).fit(X, y, X_unl)
    for k, label in enumerate(gps.classes_):
        held_out = gps.calibration_index_[k]
        fitted = np.setdiff1d(np.flatnonzero(y == label), held_out)
        points = np.vstack([X[fitted], X_unl])
        squared = ((points[:, None, :] - points[None, :, :]) ** 2).sum(axis=-1)
        median = 1.0 / np.median(squared[np.triu_indices(points.shape[0], k=1)])
        table = gps.tuning_results_[k]
        np.testing.assert_allclose(
            sorted(row["gamma"] for row in table), median * np.sort(WIDTH_FACTORS), rtol=1e-12
        )
        best = min(table, key=lambda row: row["acceptance"])
        assert gps.kernel_gamma_[k] == best["gamma"] and gps.C_[k] == 0.05
    big = np.random.default_rng(11).normal(size=(MEDIAN_HEURISTIC_MAX_POINTS + 200, 3))
    rows = np.random.RandomState(5).choice(big.shape[0], MEDIAN_HEURISTIC_MAX_POINTS, replace=False)
    sub = big[rows]
    squared = ((sub[:, None, :] - sub[None, :, :]) ** 2).sum(axis=-1)
    direct = 1.0 / np.median(squared[np.triu_indices(sub.shape[0], k=1)])
    assert median_heuristic_gamma(big, 5) == pytest.approx(direct, rel=1e-12)
    generator = np.random.default_rng(5)
    rows = generator.choice(big.shape[0], MEDIAN_HEURISTIC_MAX_POINTS, replace=False)
    sub = big[rows]
    squared = ((sub[:, None, :] - sub[None, :, :]) ** 2).sum(axis=-1)
    direct = 1.0 / np.median(squared[np.triu_indices(sub.shape[0], k=1)])
    assert median_heuristic_gamma(big, np.random.default_rng(5)) == pytest.approx(direct, rel=1e-12)
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


@settings(max_examples=60, deadline=None)
@given(
    scores=st.lists(
        st.sampled_from([-3.0, -1.0, 0.0, 0.5, 1.0, 1.0, 2.0, 1e-9, 40.0]), min_size=1, max_size=25
    ),
    unlabeled=st.lists(st.floats(-5, 5), min_size=1, max_size=10),
    gamma=st.sampled_from([1e-3, 0.05, 0.5, 0.99]),
    C=st.sampled_from([1e-3, 0.5, 30.0]),
)
def test_offset_closed_form_equals_the_primal_lp(scores, unlabeled, gamma, C):
    """:func:`offset_from_scores` (one sort) against :func:`recover_rho` (the primal LP with
    ``w`` fixed), with ties and one-point classes."""
    s, u = np.array(scores), np.array(unlabeled)
    rho = offset_from_scores(s, gamma)
    assert rho == pytest.approx(recover_rho(s, u, gamma, C)[0], abs=1e-7 * (1 + abs(rho)))
    assert np.maximum(1 - s + rho, 0).sum() == pytest.approx(s.size * gamma, rel=1e-9)


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


# --------------------------------------------------------------------------- interior point
@settings(max_examples=40, deadline=None)
@given(
    n_k=st.integers(1, 40),
    m=st.integers(1, 60),
    width=st.sampled_from([1e-3, 0.05, 0.5, 5.0, 500.0]),
    gamma=st.sampled_from([0.005, 0.05, 0.3, 0.9]),
    C_scale=st.sampled_from([1e-4, 1.0, 100.0]),
    ties=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_interior_point_matches_highs_on_random_duals(n_k, m, width, gamma, C_scale, ties, seed):
    """:func:`solve_class_dual` against HiGHS' QP (Clarabel where HiGHS fails) on the same problem: equal optimal values and
    decision scores ``K c`` (relative to their scale), feasible; duplicated points (``ties``) make
    the kernel matrix singular; widths 1e-3..500 run from a near-constant to a near-identity
    kernel, and ``n_k = 1`` or ``m = 1`` are allowed."""
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(0.0, 1.0, (n_k, 2)), rng.normal(0.5, 2.0, (m, 2))])
    if ties:
        X[1::2] = X[::2][: X[1::2].shape[0]]
    K = rbf_kernel(X, gamma=width)
    C = C_scale / m
    a, b, t, value = solve_class_dual(K, n_k, gamma, C)
    try:
        a_h, b_h, t_h, value_h = _solve_dual(K, n_k, gamma, C, "highs")
    except SolverError:  # HiGHS' QP solver reports 'Solve error' on some near-constant kernels
        a_h, b_h, t_h, value_h = _solve_dual(K, n_k, gamma, C, "cvxpy")
    scale = 1 + abs(value_h)
    assert value == pytest.approx(value_h, abs=1e-7 * scale)
    assert np.all(a >= 0) and np.all(a <= t * (1 + 1e-9)) and np.all(b >= 0) and np.all(b <= C)
    assert a.sum() - b.sum() == pytest.approx(1.0, abs=1e-8)
    scores, scores_h = K @ np.r_[a, -b], K @ np.r_[a_h, -b_h]
    np.testing.assert_allclose(scores, scores_h, atol=1e-4 * (1 + np.abs(scores_h).max()))


def test_interior_point_failure_is_a_solver_error():
    K = rbf_kernel(np.random.default_rng(0).normal(size=(12, 2)))
    with pytest.raises(SolverError, match="did not converge in 2 interior-point iterations"):
        solve_class_dual(K, 6, 0.1, 0.5, max_iter=2)


# --------------------------------------------------------------------------- feature selection
@pytest.mark.parametrize(
    "kernel, params",
    [("rbf", {"gamma": 0.3}), ("linear", {}), ("poly", {"gamma": 0.2, "degree": 3, "coef0": 1.0})],
)
def test_weighted_kernel_gradient_matches_finite_differences(kernel, params):
    """``B^T`` (Wang and Qiao 2022, Eq. 10) against central differences of ``K_d c`` in each weight."""
    rng = np.random.default_rng(20)
    X, coef = rng.normal(size=(9, 4)), rng.normal(size=9)
    weights = rng.uniform(0.2, 1.0, 4)
    full = {"gamma": 1.0, "degree": 3, "coef0": 1.0, **params}
    gram = lambda d: pairwise_kernels(X * d, metric=kernel, **params)  # noqa: E731
    B_T = weighted_kernel_gradient(kernel, X=X, weights=weights, coef=coef, K=gram(weights), **full)
    step = 1e-6
    for l in range(4):
        e = np.zeros(4)
        e[l] = step
        numeric = (gram(weights + e) @ coef - gram(weights - e) @ coef) / (2 * step)
        np.testing.assert_allclose(B_T[:, l], numeric, rtol=1e-6, atol=1e-8)


def _selection_problem(seed=21, n_k=30, m=60, noise=6):
    """One class (a tight blob) against wider unlabelled points, in 2 informative dimensions
    plus ``noise`` pure-noise dimensions."""
    rng = np.random.default_rng(seed)
    informative = np.vstack([rng.normal(0.0, 0.5, (n_k, 2)), rng.uniform(-4.0, 4.0, (m, 2))])
    points = np.hstack([informative, rng.normal(0.0, 1.0, (n_k + m, noise))])
    return points, n_k


def test_feature_weight_step_is_the_linear_program_solved_independently():
    """Eq. (10) built from scratch for :func:`scipy.optimize.linprog`: same optimal value."""
    points, n_k = _selection_problem()
    m = points.shape[0] - n_k
    gamma, C, penalty, width = 0.1, 1.0 / m, 0.01, 0.1
    weights = np.full(points.shape[1], 0.8)
    K = rbf_kernel(points * weights, gamma=width)
    a, b, _, _ = solve_class_dual(K, n_k, gamma, C)
    coef = np.r_[a, -b]
    scores = K @ coef
    rho = recover_rho(scores[:n_k], scores[n_k:], gamma, C)[0]
    B_T = weighted_kernel_gradient("rbf", width, 3, 1.0, points, weights, coef, K)
    d = feature_weight_step(B_T, scores, coef, rho, weights, n_k, gamma, C, penalty)
    p = points.shape[1]
    # variables [d (p), xi (m), eta (n_k)]; rows as "<=" constraints
    cost = np.r_[0.5 * B_T.T @ coef + penalty, np.full(m, C), np.zeros(n_k)]
    shift = B_T @ weights
    A_unl = np.hstack([B_T[n_k:], -np.eye(m), np.zeros((m, n_k))])  # B d - xi <= ...
    b_unl = -(1 + scores[n_k:] - rho - shift[n_k:])
    A_cls = np.hstack([-B_T[:n_k], np.zeros((n_k, m)), -np.eye(n_k)])
    b_cls = -(1 - scores[:n_k] + rho + shift[:n_k])
    A_budget = np.r_[np.zeros(p + m), np.ones(n_k)][None, :]
    reference = linprog(
        cost,
        A_ub=np.vstack([A_unl, A_cls, A_budget]),
        b_ub=np.r_[b_unl, b_cls, n_k * gamma],
        bounds=[(0, 1)] * p + [(0, None)] * (m + n_k),
        method="highs",
    )
    assert reference.status == 0
    xi = np.maximum(1 + scores[n_k:] - rho + B_T[n_k:] @ (d - weights), 0)
    eta = np.maximum(1 - scores[:n_k] + rho - B_T[:n_k] @ (d - weights), 0)
    assert eta.sum() <= n_k * gamma + 1e-8 and np.all((d >= 0) & (d <= 1))
    assert cost[:p] @ d + C * xi.sum() == pytest.approx(reference.fun, abs=1e-8)


def test_feature_selection_never_increases_its_objective():
    """Algorithm 1 at a fixed width: Eq. (9) after each QP never increases (the line search's
    promise), here over a long run (penalty 0.1 shrinks the weights gradually); the recorded
    first value is Eq. (9) recomputed from its definition at ``d = 1``."""
    points, n_k = _selection_problem()
    m = points.shape[0] - n_k
    kernel = KernelFeatures("rbf", 0.05, 3, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        weights, history = _select_features(points, n_k, kernel, 0.1, 1.0 / m, 0.1, 20, 1e-3, "ipm")
    assert len(history) >= 10 and np.all(np.diff(history) <= 1e-12 * np.abs(history[:-1]))
    assert np.all((weights >= 0) & (weights <= 1)) and weights.min() < 1
    K = rbf_kernel(points, gamma=0.05)
    a, b, _, _ = solve_class_dual(K, n_k, 0.1, 1.0 / m)
    coef = np.r_[a, -b]
    rho = recover_rho((K @ coef)[:n_k], (K @ coef)[n_k:], 0.1, 1.0 / m)[0]
    value, class_loss = feature_selection_objective(K, coef, rho, n_k, 1.0 / m, 0.1, np.ones(8))
    assert class_loss <= n_k * 0.1 + 1e-8 and value == pytest.approx(history[0], rel=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_feature_selection_drops_the_noise_features_of_example_1(seed):
    """Seed 003 Example 1: 2 informative dimensions and 8 N(0, 0.1²) noise dimensions; one class
    against the others and the outliers, at the median-heuristic width."""
    X, y = make_prediction_set_example1(n_per_class=100, n_outliers=40, random_state=seed)
    points = np.vstack([X[y == 1][:50], X[y != 1][::2][:100]])
    width = median_heuristic_gamma(points, 0)
    weights, _ = _select_features(
        points, 50, KernelFeatures("rbf", width, 3, 1.0), 0.1, 0.01, 0.01, 20, 1e-3, "ipm"
    )
    np.testing.assert_array_equal(weights, [1, 1] + [0] * 8)


@pytest.mark.slow  # a feature-selection path of GPS fits (about 9 s)
def test_gpskfs_estimator_selects_features_and_scores_with_the_weights():
    X, y = make_prediction_set_example1(n_per_class=150, n_outliers=60, random_state=3)
    normal = y != OUTLIER
    train = np.flatnonzero(normal)[::2]
    gps = GeneralizedPredictionSet(error_rate=0.1, feature_selection=True, random_state=0)
    gps.fit(X[train], y[train], np.delete(X, train, axis=0))
    assert gps.feature_weights_.shape == (4, 10)
    assert len(gps.selection_history_[0]) == len(AUTO_FEATURE_PENALTIES)
    assert all(any(row["selected"] for row in table) for table in gps.tuning_results_)
    assert np.any(gps.feature_weights_[:, 2:] == 0)
    grid = np.random.default_rng(23).normal(0.0, 3.0, (40, 10))
    for k in range(4):  # f_k(d_k ∘ x) - tau_k, recomputed from the stored support
        d = gps.feature_weights_[k]
        expected = (
            rbf_kernel(grid * d, gps.support_vectors_[k], gamma=gps.kernel_gamma_[k])
            @ gps.dual_coef_[k]
            - gps.rho_[k]
            - gps.thresholds_[k]
        )
        np.testing.assert_allclose(gps.decision_function(grid)[:, k], expected, atol=1e-10)


# --------------------------------------------------------------------------- thresholds, markers
@pytest.mark.parametrize(
    "n, gamma, confidence", [(50, 0.1, 0.9), (200, 0.05, 0.95), (99, 0.01, 0.5)]
)
def test_conformal_rank_with_confidence_against_the_beta_law(n, gamma, confidence):
    """The non-coverage of the ``j``-th order statistic is ``Beta(j, n + 1 - j)``: the chosen
    rank keeps ``P(non-coverage > γ) <= 1 - confidence`` and the next rank does not."""
    j = conformal_rank(n, gamma, confidence)
    assert beta_law.sf(gamma, j, n + 1 - j) <= 1 - confidence + 1e-12 if j else True
    assert beta_law.sf(gamma, j + 1, n - j) > 1 - confidence
    assert j <= conformal_rank(n, gamma)  # tighter than the marginal rank


def test_confident_thresholds_cover_with_the_promised_probability():
    """Over 400 simulated calibration samples of uniform scores, the fraction whose threshold
    covers less than ``1 - γ`` is at most ``1 - confidence`` (plus 3 standard errors)."""
    rng = np.random.default_rng(24)
    gamma, confidence, n, reps = 0.1, 0.9, 80, 400
    thresholds = np.array(
        [conformal_threshold(rng.uniform(size=n), gamma, confidence) for _ in range(reps)]
    )
    failures = np.mean(thresholds > gamma)  # uniform scores: non-coverage = threshold
    assert failures <= (1 - confidence) + 3 * np.sqrt(0.09 / reps)
    with pytest.warns(UserWarning, match="at coverage_confidence=0.99.*at least 44"):
        conformal_threshold(rng.uniform(size=30), 0.1, 0.99)


def test_predict_markers_follow_the_labels():
    X, y, X_unl = _blobs(seed=25, n=30)
    far = np.array([[40.0, 40.0]])
    for labels, outlier, ambiguous in (
        ([0, 1], -1, -2),
        ([-1, 1], -2, -3),
        ([2, 7], -1, -2),
        ([-5, 3], -6, -7),
        (["a", "b"], "outlier", "ambiguous"),
    ):
        y_mapped = np.where(y == "a", labels[0], labels[1])
        gps = GeneralizedPredictionSet(error_rate=0.1, gamma=0.3, C=0.05, random_state=0)
        gps.fit(X, y_mapped, X_unl)
        assert (gps.outlier_label_, gps.ambiguous_label_) == (outlier, ambiguous)
        assert gps.predict(far)[0] == outlier
    gps = GeneralizedPredictionSet(
        outlier_label=None,
        ambiguous_label="both",
        error_rate=0.1,
        gamma=0.3,
        C=0.05,
        random_state=0,
    )
    predicted = gps.fit(X, y, X_unl).predict(far)
    assert predicted.dtype == object and predicted[0] is None
    with pytest.raises(ValueError, match="outlier_label='a' is one of the classes"):
        GeneralizedPredictionSet(outlier_label="a").fit(X, y, X_unl)
    with pytest.raises(ValueError, match="must differ; both are 7"):
        GeneralizedPredictionSet(outlier_label=7, ambiguous_label=7).fit(X, y, X_unl)


@pytest.mark.filterwarnings(FEW_CALIBRATION)
def test_new_parameters_are_checked():
    X, y, X_unl = _blobs(n=5)
    cases = [
        ({"feature_selection": True, "kernel": rbf_kernel}, "feature_selection needs the kernel"),
        ({"feature_selection": "yes"}, "feature_selection must be True or False"),
        ({"feature_penalty": -1.0}, "feature_penalty must be 'auto' or a finite number >= 0"),
        ({"feature_penalty": np.nan}, "feature_penalty must be"),
        ({"coverage_confidence": 1.0}, "coverage_confidence must be None or a number in"),
        ({"max_iter": 0}, "max_iter must be an integer >= 1"),
        ({"tol": -1.0}, "tol must be a finite positive number"),
    ]
    for params, message in cases:
        with pytest.raises(ValueError, match=message):
            GeneralizedPredictionSet(**params).fit(X, y, X_unl)


@pytest.mark.slow  # the estimator checks: 8 s
def test_passes_check_estimator():
    check_estimator(GeneralizedPredictionSet(random_state=0))


# --------------------------------------------------------------------------- tuning helper
def test_error_rate_curve_traces_the_trade_off():
    """Seed 003 Fig. 3: as ``γ`` grows the sets shrink (cardinality falls) and detection rises;
    each point of the curve equals a direct fit at that ``γ``."""
    rng = np.random.default_rng(26)
    X, y = _two_gaussians(rng, 80)
    X_test, y_test = _two_gaussians(rng, 300)
    X_test = np.vstack([X_test, rng.uniform(-9, 9, (200, 2))])
    y_test = np.r_[y_test, np.full(200, 7)]
    template = GeneralizedPredictionSet(gamma=0.3, C=0.05, random_state=0)
    rates = [0.05, 0.2, 0.4]
    curve = ag.error_rate_curve(template, X, y, X_test, y_test, rates)
    assert curve["coverage"].shape == (3, 2) and list(curve["classes"]) == [0, 1]
    assert np.all(np.diff(curve["cardinality"]) < 0)
    assert np.all(np.diff(curve["detection_rate"]) >= 0)
    direct = GeneralizedPredictionSet(gamma=0.3, C=0.05, random_state=0, error_rate=0.2)
    sets = direct.fit(X, y).predict_set(X_test)
    assert curve["cardinality"][1] == pytest.approx(sets.sum(axis=1).mean())
    with pytest.raises(ValueError, match="error_rates must be non-empty values in"):
        ag.error_rate_curve(template, X, y, X_test, y_test, [0.1, 1.0])
    with pytest.raises(TypeError, match="GeneralizedPredictionSet"):
        ag.error_rate_curve(object(), X, y, X_test, y_test, [0.1])


def test_dual_and_offset_kernels_check_their_inputs():
    K = rbf_kernel(np.random.default_rng(30).normal(size=(6, 2)))
    cases = [
        (lambda: solve_class_dual(K[:, :5], 3, 0.1, 0.5), "K must be a finite square"),
        (lambda: solve_class_dual(np.where(K > 0.5, np.nan, K), 3, 0.1, 0.5), "K must be"),
        (lambda: solve_class_dual(K, 6, 0.1, 0.5), "n_class must be between 1 and 5"),
        (lambda: solve_class_dual(K, 0, 0.1, 0.5), "n_class must be between 1 and 5"),
        (lambda: solve_class_dual(K, 3, 1.0, 0.5), r"gamma \(the error rate\) must be"),
        (lambda: solve_class_dual(K, 3, 0.1, 0.0), "C must be a finite number > 0"),
        (lambda: offset_from_scores(np.array([]), 0.1), "class_scores must be a non-empty"),
        (lambda: offset_from_scores(np.array([1.0, np.inf]), 0.1), "finite numbers"),
        (lambda: offset_from_scores(np.array([1.0]), 0.0), r"gamma \(the error rate\) must be"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()


def test_shared_tuning_pieces():
    """The calibration and tuning splits the estimator and the benchmark baselines share."""
    assert [calibration_size(n, 0.3) for n in (2, 3, 10, 100)] == [1, 1, 3, 30]
    parts = tuning_split(10, 7, 0.3, np.random.default_rng(0))
    assert [p.size for p in parts] == [7, 3, 5, 2]
    assert sorted(np.r_[parts[0], parts[1]]) == list(range(10))
    assert sorted(np.r_[parts[2], parts[3]]) == list(range(7))
    # threshold = 10% quantile of 0..9 = 0.9: accepts 2 of the 4 unlabelled scores
    assert held_out_acceptance(np.arange(10.0), np.array([0.5, 0.9, 3.0, -1.0]), 0.1) == 0.5


def test_unbounded_acceptance_regions_warn_and_the_warning_is_true():
    """Seed 003's RBF regions accept the far field when -rho_k >= tau_k (notebook 08's draw)."""
    X, y = ag.datasets.make_prediction_set_example1(n_per_class=200, n_outliers=100, random_state=2)
    normal = np.random.default_rng(0).permutation(np.flatnonzero(y != -1))
    train = np.concatenate([normal[y[normal] == k][:100] for k in range(1, 5)])
    with pytest.warns(UserWarning, match=r"acceptance regions of classes 2 .* are unbounded"):
        gps = ag.GeneralizedPredictionSet(error_rate=0.05, random_state=0)
        gps.fit(X[train, :2], y[train])
    unbounded = -gps.rho_ >= gps.thresholds_
    far = np.array([[1e3, 1e3], [-1e3, 5e2]])
    assert np.array_equal(gps.predict_set(far), np.tile(unbounded, (2, 1)))


def test_class_gap_brackets_the_primal_optimum():
    """``class_gap_``: the primal (Eq. 6) at the fitted ``w`` and its best offset minus the dual
    bound; the primal solved directly by cvxpy (the independent reference) lies in between."""
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(0.0, 1.0, (8, 2)), rng.normal(4.0, 1.0, (8, 2))])
    y = np.repeat([0, 1], 8)
    X_unl = rng.normal(1.0, 2.0, (10, 2))
    gamma, C = 0.2, 0.3
    gps = GeneralizedPredictionSet(error_rate=gamma, kernel="linear", C=C, calibration=None)
    gps.fit(X, y, X_unl)
    for k, X_k in enumerate((X[:8], X[8:])):
        w, rho = cp.Variable(2), cp.Variable()
        eta, xi = cp.Variable(8, nonneg=True), cp.Variable(10, nonneg=True)
        problem = cp.Problem(
            cp.Minimize(0.5 * cp.sum_squares(w) - rho + C * cp.sum(xi)),
            [eta >= 1 - X_k @ w + rho, cp.sum(eta) <= 8 * gamma, xi >= 1 + X_unl @ w - rho],
        )
        problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
        lower = -gps.dual_objective_[k]
        assert lower <= problem.value + 1e-7
        assert lower + gps.class_gap_[k] >= problem.value - 1e-7
        assert 0.0 <= gps.class_gap_[k] < 1e-6
    assert gps.gap_ == pytest.approx(gps.class_gap_.sum())
    assert gps.converged_ == "optimal"
