"""The linear one-vs-all interior-point method (``advgame.solvers.svm_newton``) and
``OneVsAllAbstain(backend='dual')``: every certificate against independent references (the same
QP written directly in cvxpy, the HiGHS backend, brute force for the exact offsets), sample
weights as dropped and repeated rows, degenerate classes, honest gaps on any data and any step
budget, and the estimator's conventions."""

import functools

import cvxpy as cp
import numpy as np
import pytest
from conftest import standardised_iris, standardised_optdigits
from hypothesis import given
from hypothesis import strategies as st
from sklearn.datasets import load_iris
from sklearn.preprocessing import StandardScaler

from advgame.baselines import svm as bl
from advgame.compile.cvx import CLARABEL_OPTIONS
from advgame.datasets import load
from advgame.solvers.svm_newton import fit_ova_linear, optimal_offsets

#: Relative accuracy allowed to the cvxpy (Clarabel) reference optimum.
REFERENCE_RTOL = 1e-7
#: Relative accuracy allowed to the HiGHS backend's optimum (its feasibility tolerance is
#: 1e-9, or 1e-7 on a retry).
HIGHS_RTOL = 1e-6


# ------------------------------------------------------------------------------ references
def _signs(y, k):
    """``s_ij = +1`` if ``y_i = j`` else ``-1``, shape ``(n, k)``."""
    return np.where(y[:, None] == np.arange(k), 1.0, -1.0)


def _primal(X, y, cost, W, b):
    """``P(W, b) = ½||W||² + Σ_i c_i Σ_j [1 - s_ij (w_j . x_i + b_j)]_+``, computed
    independently (numpy, all rows)."""
    S = _signs(y, W.shape[1])
    return 0.5 * np.sum(W**2) + np.sum(cost[:, None] * np.maximum(0.0, 1.0 - S * (X @ W + b)))


def _reference(X, y, cost, k, fit_intercept=True):
    """The one-vs-all primal with free offsets written directly in cvxpy; returns ``(P*, W*)``."""
    W = cp.Variable((X.shape[1], k))
    scores = X @ W
    if fit_intercept:
        scores = scores + np.ones((X.shape[0], 1)) @ cp.reshape(cp.Variable(k), (1, k), order="C")
    hinges = cp.pos(1 - cp.multiply(_signs(y, k), scores))
    objective = 0.5 * cp.sum_squares(W) + cp.sum(cp.multiply(cost[:, None], hinges))
    problem = cp.Problem(cp.Minimize(objective))
    problem.solve(solver=cp.CLARABEL, canon_backend=cp.SCIPY_CANON_BACKEND, **CLARABEL_OPTIONS)
    return problem.value, W.value


def _optdigits():
    return standardised_optdigits(60)


def _assert_brackets(X, y, cost, k, fit_intercept, result, tol=1e-4):
    """``result`` of ``fit_ova_linear``: its objective is ``P`` at its ``(W, b)``, its gap is
    within ``tol``, ``D = P - gap <= P* <= P`` for the cvxpy optimum ``P*``, and ``W`` is within
    ``sqrt(2 gap)`` of the reference's (strong convexity in ``W``; the offsets are not)."""
    W, b, objective, gap, steps = result
    assert W.shape == (X.shape[1], k) and b.shape == (k,)
    if not fit_intercept:
        assert np.all(b == 0.0)
    np.testing.assert_allclose(objective, _primal(X, y, cost, W, b), rtol=1e-12, atol=1e-300)
    assert 0.0 <= gap <= tol * max(1.0, objective)
    value, W_ref = _reference(X, y, cost, k, fit_intercept)
    slack = REFERENCE_RTOL * max(1.0, abs(value))
    assert objective - gap - slack <= value <= objective + slack
    bound = np.sqrt(2.0 * (gap + slack)) + np.sqrt(2.0 * slack)  # ours, and the reference's
    assert np.linalg.norm(W - W_ref) <= bound
    return value


# ---------------------------------------------------------------------- the certificate
@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
@pytest.mark.parametrize("data", [standardised_iris, _optdigits], ids=["iris", "optdigits"])
def test_brackets_the_cvxpy_optimum(data, C):
    """On real data (iris, 3 classes; 60 optdigits rows, all 10 classes, ``p = 64``): the
    certified interval ``[P - gap, P]`` holds the optimum of the same QP written in cvxpy, and
    the weights are within ``sqrt(2 gap)`` of its weights."""
    X, y = data()
    k = int(y.max()) + 1
    cost = np.full(y.size, C)
    result = fit_ova_linear(X, y, cost)
    assert result[4] > 0
    _assert_brackets(X, y, cost, k, True, result)


@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
def test_brackets_the_cvxpy_optimum_without_offsets(C):
    """``fit_intercept=False``: no offsets (and no equalities in the dual), the same brackets."""
    X, y = standardised_iris()
    cost = np.full(y.size, C)
    result = fit_ova_linear(X, y, cost, fit_intercept=False)
    _assert_brackets(X, y, cost, 3, False, result)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_tight_tolerance_reaches_the_optimum(fit_intercept):
    """Asked for ``tol = 1e-10`` the method certifies it (rounding does not stall it first) and
    agrees with the cvxpy optimum to the reference's own accuracy."""
    X, y = standardised_iris()
    rng = np.random.default_rng(0)
    cost = 3.0 * rng.uniform(0.5, 2.0, size=y.size)
    result = fit_ova_linear(X, y, cost, tol=1e-10, fit_intercept=fit_intercept)
    value = _assert_brackets(X, y, cost, 3, fit_intercept, result, tol=1e-10)
    np.testing.assert_allclose(result[2], value, rtol=REFERENCE_RTOL)


def test_agrees_with_the_highs_backend():
    """``backend='dual'`` and the exact QP through HiGHS (``backend='highs'``) on weighted
    data: the QP's optimum lies in the certified interval, the weights agree to the accuracy
    the gap allows, and the abstaining predictions of the two agree on new inputs."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    y = np.concatenate([np.arange(4), rng.integers(0, 4, size=36)])
    X_new = rng.normal(size=(200, 3))
    weights = rng.uniform(0.5, 2.0, size=y.size)
    dual = bl.OneVsAllAbstain(C=2.0, backend="dual").fit(X, y, sample_weight=weights)
    qp = bl.OneVsAllAbstain(C=2.0, backend="highs").fit(X, y, sample_weight=weights)
    slack = HIGHS_RTOL * max(1.0, qp.objective_)
    assert dual.objective_ - dual.gap_ - slack <= qp.objective_ <= dual.objective_ + slack
    assert np.linalg.norm(dual.coef_ - qp.coef_) <= np.sqrt(2 * (dual.gap_ + slack)) + 1e-6
    F_dual, F_qp = dual.decision_function(X_new), qp.decision_function(X_new)
    # the offsets are not strongly convex: compare where both rules are clear of their ties
    clear = (np.abs(F_dual.max(axis=1)) > 0.05) & (np.abs(F_qp.max(axis=1)) > 0.05)
    top = np.sort(F_qp, axis=1)
    clear &= top[:, -1] - top[:, -2] > 0.05
    assert clear.mean() > 0.5
    np.testing.assert_array_equal(dual.predict(X_new)[clear], qp.predict(X_new)[clear])


def test_sample_weights_are_dropped_and_repeated_rows():
    """Rows of weight 0 are left out, and an integer weight is that many copies of the row:
    the same optimum (tight tolerance), through the function and through the estimator."""
    X, y = standardised_iris()
    counts = np.random.default_rng(0).integers(0, 4, size=y.size)  # 0: dropped
    fit = functools.partial(fit_ova_linear, tol=1e-10, n_classes=3)
    W, _, objective, _, _ = fit(X, y, 2.0 * counts)
    repeated = np.repeat(np.arange(y.size), counts)
    W_copies, _, objective_copies, _, _ = fit(X[repeated], y[repeated], np.full(repeated.size, 2.0))
    kept = counts > 0
    W_kept, _, objective_kept, _, _ = fit(X[kept], y[kept], 2.0 * counts[kept])
    for other, W_other in ((objective_copies, W_copies), (objective_kept, W_kept)):
        np.testing.assert_allclose(objective, other, rtol=1e-9)
        np.testing.assert_allclose(W, W_other, atol=1e-4)
    weighted = bl.OneVsAllAbstain(C=2.0, backend="dual").fit(X, y, sample_weight=counts)
    copies = bl.OneVsAllAbstain(C=2.0, backend="dual").fit(X[repeated], y[repeated])
    for model in (weighted, copies):  # both within DUAL_TOL of the same optimum
        assert objective - 1e-9 * objective <= model.objective_
        assert model.objective_ <= objective + model.gap_ + 1e-9 * objective


# ------------------------------------------------------------------------- degenerate classes
def test_absent_and_zero_weight_classes_are_solved_exactly():
    """A class with no positive row (absent from ``y``, or all its rows of weight 0) has, with
    offsets, the exact solution ``w_j = 0``, ``b_j = -1`` (hinges all zero, ``alpha_j = 0``): the
    other classes' solution is that of the problem without it.  Without offsets it is an
    ordinary class of the interior-point method (no equality): bracketed by cvxpy."""
    X, y = standardised_iris()
    cost = np.ones(y.size)
    W, b, objective, gap, _ = fit_ova_linear(X, y, cost, n_classes=5)
    W3, b3, objective3, gap3, _ = fit_ova_linear(X, y, cost)
    np.testing.assert_array_equal(W[:, 3:], 0.0)
    np.testing.assert_array_equal(b[3:], -1.0)
    np.testing.assert_array_equal(W[:, :3], W3)
    np.testing.assert_array_equal(b[:3], b3)
    assert (objective, gap) == (objective3, gap3)
    _assert_brackets(X, y, cost, 5, True, (W, b, objective, gap, 0))
    without = fit_ova_linear(X, y, cost, n_classes=5, fit_intercept=False)
    _assert_brackets(X, y, cost, 5, False, without)
    zeroed = np.where(y == 1, 0.0, 1.0)  # class 1's rows all weigh 0: dropped, class 1 absent
    W, b, objective, gap, _ = fit_ova_linear(X, y, zeroed)
    assert np.all(W[:, 1] == 0.0) and b[1] == -1.0
    kept = y != 1
    _assert_brackets(X[kept], y[kept], zeroed[kept], 3, True, (W, b, objective, gap, 0))


def test_one_class_everywhere_and_no_cost():
    """Every row of one class: that class has no negative row (``w = 0``, ``b = +1``), the others
    no positive one (``b = -1``), ``P = 0`` exactly.  No row of positive cost: ``W = 0``, ``P =
    0``."""
    X, y = standardised_iris()
    W, b, objective, gap, steps = fit_ova_linear(X, np.full(y.size, 2), np.ones(y.size))
    assert np.all(W == 0.0) and list(b) == [-1.0, -1.0, 1.0]
    assert (objective, gap, steps) == (0.0, 0.0, 0)
    W, b, objective, gap, steps = fit_ova_linear(X, y, np.zeros(y.size))
    assert np.all(W == 0.0) and np.all(b == 0.0) and (objective, gap, steps) == (0.0, 0.0, 0)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("C", [0.1, 100.0])
def test_tiny_class(C, fit_intercept):
    """A class of one row among 150 (its offset far from the others'): bracketed by cvxpy."""
    X, y = standardised_iris()
    y = np.where(y == 2, 1, y)
    y[7] = 2
    cost = np.full(y.size, C)
    result = fit_ova_linear(X, y, cost, fit_intercept=fit_intercept)
    _assert_brackets(X, y, cost, 3, fit_intercept, result)


@given(
    k=st.integers(1, 4),
    n=st.integers(1, 12),
    seed=st.integers(0, 2**32 - 1),
    ties=st.booleans(),
)
def test_optimal_offsets_minimise_the_hinge_sum(k, n, seed, ties):
    """The exact offsets: no breakpoint (where a minimum of a convex piecewise linear function
    lies) gives a smaller weighted hinge sum, and the returned sum is that at the offset."""
    rng = np.random.default_rng(seed)
    F = rng.normal(size=(k, n))
    if ties:
        F = np.round(F)
    S = np.where(rng.random((k, n)) < 0.3, 1.0, -1.0)
    c = rng.uniform(0.1, 2.0, size=n) * (rng.integers(1, 3, size=n) if ties else 1.0)
    b, hinge = optimal_offsets(F, S, c)

    def h(j, offset):
        return float(c @ np.maximum(0.0, 1.0 - S[j] * (F[j] + offset)))

    for j in range(k):
        np.testing.assert_allclose(hinge[j], h(j, b[j]), rtol=1e-12, atol=1e-12)
        breakpoints = S[j] - F[j]
        assert hinge[j] <= min(h(j, t) for t in breakpoints) + 1e-12 * (1.0 + hinge[j])


# ------------------------------------------------------------------ honesty on any data
@given(
    k=st.integers(2, 4),
    rows=st.integers(2, 10),
    p=st.integers(1, 3),
    copies=st.integers(0, 6),
    scale=st.floats(-3.0, 3.0),
    log_C=st.floats(-3.0, 3.0),
    fit_intercept=st.booleans(),
    budget=st.one_of(st.none(), st.integers(0, 3)),
    seed=st.integers(0, 2**32 - 1),
)
def test_gap_is_an_honest_certificate(
    k, rows, p, copies, scale, log_C, fit_intercept, budget, seed
):
    """For any data (duplicated rows, so ties; inputs scaled by 1e-3..1e3; C in 1e-3..1e3;
    absent classes; with and without offsets) and any step budget, the returned gap bounds the
    true suboptimality, ``P(W, b) - P* <= gap`` with ``P*`` from cvxpy; with the default budget
    the run certifies the default tolerance, with a budget of 0-3 steps it stops there."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, p)) * 10.0**scale
    y = rng.integers(0, k, size=rows)
    X, y = np.vstack([X, X[:copies]]), np.concatenate([y, y[:copies]])  # duplicated rows
    cost = np.full(y.size, 10.0**log_C)
    options = {} if budget is None else {"max_steps": budget}
    W, b, objective, gap, steps = fit_ova_linear(
        X, y, cost, n_classes=k, fit_intercept=fit_intercept, **options
    )
    value, _ = _reference(X, y, cost, k, fit_intercept)
    slack = REFERENCE_RTOL * max(1.0, abs(value))
    np.testing.assert_allclose(objective, _primal(X, y, cost, W, b), rtol=1e-12, atol=1e-300)
    suboptimality = objective - value
    assert suboptimality >= -slack
    assert gap >= suboptimality - slack
    if budget is None:
        assert gap <= 1e-4 * max(1.0, objective)
    else:
        assert steps <= budget


# ----------------------------------------------------------------------------- the estimator
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_dual_backend_fits_and_predicts(fit_intercept):
    """``OneVsAllAbstain(backend='dual')``: the interior-point weights as ``coef_`` (k, d) and
    ``intercept_``, certified, the objective ``P`` at them, and ``predict`` the abstaining rule
    on ``decision_function``."""
    X, y = standardised_iris()
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    model = bl.OneVsAllAbstain(
        C=1.0, fit_intercept=fit_intercept, backend="dual", abstain_label="none"
    ).fit(X, names)
    assert model.coef_.shape == (3, 4) and model.intercept_.shape == (3,)
    assert model.dual_coef_ is None and model.program_ is None and model.n_rounds_ == 0
    assert model.n_iter_ > 0
    if not fit_intercept:
        assert np.all(model.intercept_ == 0.0)
    assert 0.0 <= model.gap_ <= bl.DUAL_TOL * max(1.0, model.objective_)
    objective = _primal(X, y, np.ones(y.size), model.coef_.T, model.intercept_)
    np.testing.assert_allclose(model.objective_, objective, rtol=1e-12)
    F = model.decision_function(X)
    np.testing.assert_allclose(F, X @ model.coef_.T + model.intercept_)
    predicted = model.predict(X)
    answered = F.max(axis=1) >= model.threshold
    np.testing.assert_array_equal(predicted[answered], model.classes_[F[answered].argmax(axis=1)])
    assert np.all(predicted[~answered] == "none")
    assert np.mean(predicted == names) > 0.6


def test_dual_backend_matches_the_cvxpy_backend():
    """``backend='dual'`` and ``backend='cvxpy'`` on 60 optdigits rows: the QP's objective lies
    in the certified interval and both give the same abstaining predictions on held-out rows
    clear of the rule's ties."""
    data = load("multiclass/optdigits")
    X = StandardScaler().fit_transform(data.X[:200])
    y = data.y[:200]
    dual = bl.OneVsAllAbstain(C=1.0, backend="dual").fit(X[:60], y[:60])
    qp = bl.OneVsAllAbstain(C=1.0, backend="cvxpy").fit(X[:60], y[:60])
    slack = REFERENCE_RTOL * max(1.0, qp.objective_)
    assert dual.objective_ - dual.gap_ - slack <= qp.objective_ <= dual.objective_ + slack
    F = qp.decision_function(X[60:])
    top = np.sort(F, axis=1)
    clear = (np.abs(top[:, -1]) > 0.05) & (top[:, -1] - top[:, -2] > 0.05)
    assert clear.mean() > 0.5
    np.testing.assert_array_equal(dual.predict(X[60:])[clear], qp.predict(X[60:])[clear])


def test_dual_backend_refuses_kernels():
    X, y = standardised_iris()
    with pytest.raises(ValueError, match="use backend='libsvm' for kernels"):
        bl.OneVsAllAbstain(kernel="rbf", backend="dual").fit(X, y)


def test_dual_backend_reports_an_uncertified_stop(monkeypatch):
    """A step budget too small for the tolerance is an error, never a silent answer; so is a
    tolerance tighter than the one asked of the method."""
    X, y = load_iris(return_X_y=True)
    original = bl.fit_ova_linear
    monkeypatch.setattr(bl, "fit_ova_linear", lambda *a, **kw: original(*a, **kw, max_steps=1))
    with pytest.raises(bl.SolverError, match="interior-point method stopped at the relative gap"):
        bl.OneVsAllAbstain(C=100.0, backend="dual").fit(X, y)
    monkeypatch.setattr(bl, "fit_ova_linear", lambda *a, **kw: original(*a, **{**kw, "tol": 1e-2}))
    monkeypatch.setattr(bl, "DUAL_TOL", 1e-12)
    with pytest.raises(bl.SolverError, match=r"after \d+ steps \(asked: 1e-12\)"):
        bl.OneVsAllAbstain(C=100.0, backend="dual").fit(X, y)


ABSTAIN_REASON = (
    "predict abstains (returns abstain_label) where the argmax score names a class: that is "
    "the threshold rule of Ramaswamy et al. (2018), while the check expects predict to be "
    "the argmax of decision_function."
)
DUAL_WEIGHT_REASON = (
    "backend='dual' stops at the certified relative gap DUAL_TOL = 1e-4: the weighted and the "
    "repeated fit are two points within it of the same optimum, not equal to the check's 1e-7 "
    "(with DUAL_TOL = 1e-11 the check passes)."
)


def test_dual_backend_check_estimator(conforms):
    """``backend='dual'`` follows scikit-learn's conventions, but for the abstaining predict
    (as every ``OneVsAllAbstain``) and the exact sample-weight equivalence its tolerance does
    not give."""
    conforms(
        bl.OneVsAllAbstain(backend="dual"),
        {
            "check_classifiers_train": ABSTAIN_REASON,
            "check_sample_weight_equivalence_on_dense_data": DUAL_WEIGHT_REASON,
        },
    )
