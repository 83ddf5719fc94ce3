"""Seed 001's minimax models: MinimaxClassifier, MinimaxRegressor, robust feature selection.

Each optimum is checked against an independent computation: scikit-learn's Lasso and
LogisticRegression, numpy least squares, a group-lasso program written here in cvxpy, and the
potentials ``F`` (log-sum-exp, Brier simplex projection, 0-1 subset formula, Huber) and dual-norm
penalties recomputed here from the formulas of Farnia and Tse 2016 rather than taken from advgame.
"""

import pickle
import warnings

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp
from sklearn.datasets import load_diabetes, load_iris, load_wine
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import Lasso, LogisticRegression
from sklearn.metrics import log_loss
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

import advgame as ag
from advgame.exceptions import SolverError

# cvxpy's bound propagation multiplies infinite bounds by zero while canonicalising some of the
# compiled programs; the warning comes from cvxpy's internals, not from the fitted model.
pytestmark = pytest.mark.filterwarnings(
    "ignore:invalid value encountered in matmul:RuntimeWarning:cvxpy"
)

ZERO_ONE_TIES_REASON = (
    "the 0-1 loss's worst-case conditional grad F(f) is piecewise constant and ties the top "
    "classes on regions of positive measure (e.g. (1/2, 1/2) whenever |f_0 - f_1| < 1, Farnia and Tse 2016 "
    "Eq. 29-31); predict breaks such ties by the larger potential (the sign of "
    "decision_function), while the check expects predict == argmax predict_proba (the first tied "
    "index)."
)


@pytest.mark.parametrize(
    "estimator, expected_failed",
    [
        (ag.MinimaxClassifier(), {"check_classifiers_train": ZERO_ONE_TIES_REASON}),
        pytest.param(ag.MinimaxClassifier(loss="brier"), {}, marks=pytest.mark.slow),  # 4 s
        pytest.param(ag.MinimaxClassifier(loss="log"), {}, marks=pytest.mark.slow),  # 8 s
        (ag.MinimaxRegressor(), {}),
    ],
    ids=["zero_one", "brier", "log", "regressor"],
)
def test_check_estimator(estimator, expected_failed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(estimator, expected_failed_checks=expected_failed)


# --------------------------------------------------------------------------------- data
def _standardised(loader):
    X, y = loader(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.fixture(scope="module")
def diabetes():
    X, y = _standardised(load_diabetes)
    return X, (y - y.mean()) / y.std()


@pytest.fixture(scope="module")
def wine():
    return _standardised(load_wine)


@pytest.fixture(scope="module")
def iris():
    return _standardised(load_iris)


# ---------------------------------------------- independent potentials and penalties
def _simplex_projection(V):
    """Euclidean projection of each row onto the probability simplex (sort-based)."""
    U = -np.sort(-V, axis=1)
    excess = np.cumsum(U, axis=1) - 1.0
    k = np.arange(1, V.shape[1] + 1)
    support = (U - excess / k > 0).sum(axis=1)
    tau = excess[np.arange(V.shape[0]), support - 1] / support
    return np.maximum(V - tau[:, None], 0.0)


def _potential_value(loss, F):
    """``F(f) = max_q H(q) + f^T q`` per row, from the entropies of Farnia and Tse 2016 §2.2."""
    if loss == "log":
        return logsumexp(F, axis=1)
    if loss == "brier":  # H(q) = 1 - ||q||^2, maximised at the projection of f / 2
        Q = _simplex_projection(F / 2)
        return 1.0 - np.sum(Q**2, axis=1) + np.sum(F * Q, axis=1)
    # 0-1: H(q) = 1 - max_j q_j; the maximiser is uniform on a top set S of size k
    top = -np.sort(-F, axis=1)
    k = np.arange(1, F.shape[1] + 1)
    return np.max((np.cumsum(top, axis=1) + k - 1) / k, axis=1)


def _penalty(W, radius, norm, squared=False, groups=None):
    """The dual-norm penalty of the moment balls (Farnia and Tse 2016 Theorem 3, 5; Eq. 34, 43)."""
    eps = np.broadcast_to(np.asarray(radius, dtype=float), (W.shape[0],))
    if norm == "l1inf":
        return float(np.asarray(radius) * np.abs(W).max(axis=0).sum())
    if norm == "group":
        labels = np.unique(groups)
        eps_g = np.broadcast_to(np.asarray(radius, dtype=float), labels.shape)
        return float(
            sum(e * np.linalg.norm(W[:, groups == g], axis=1).sum() for g, e in zip(labels, eps_g))
        )
    dual = {2: 2, "inf": 1, 1: np.inf}[norm]
    norms = np.linalg.norm(W, ord=dual, axis=1)
    return float(eps @ (norms**2 if squared else norms))


def _classifier_objective(model, X, y, radius, norm, squared=False, groups=None):
    """Eq. 21 for a fitted classifier: ``mean F(f_i) - f_{i, y_i} + penalty``, ``f = (Ax, 0)``."""
    Z = X @ model.coef_.T + model.intercept_
    F = np.hstack([Z, np.zeros((X.shape[0], 1))])
    index = np.searchsorted(model.classes_, y)
    fit = np.mean(_potential_value(model.loss, F) - F[np.arange(len(y)), index])
    return fit + _penalty(model.coef_, radius, norm, squared, groups)


# ------------------------------------------------------------------- regression: lasso
def _check_lasso(X, y, eps, fit_intercept, solver):
    model = ag.MinimaxRegressor(
        norm="inf",
        radius=eps,
        fit_intercept=fit_intercept,
        solver=solver,
        tol=1e-10,
        max_iter=20000,
    ).fit(X, y)
    lasso = Lasso(alpha=eps, fit_intercept=fit_intercept, tol=1e-12, max_iter=10**6).fit(X, y)
    np.testing.assert_allclose(model.coef_, lasso.coef_, rtol=0, atol=1e-6)
    np.testing.assert_allclose(model.intercept_, lasso.intercept_, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(model.coef_, model.A_[0, : X.shape[1]] / 2)
    residual = y - X @ lasso.coef_ - lasso.intercept_
    lasso_objective = residual @ residual / (2 * len(y)) + eps * np.abs(lasso.coef_).sum()
    assert model.objective_ == pytest.approx(2 * lasso_objective - np.mean(y**2), abs=1e-9)
    assert model.solver_ == solver
    if solver == "compile":
        problem = model.program_.to_cvxpy()  # the declaration's compiled program
        assert isinstance(problem, cp.Problem) and "A" in problem.var_dict
        assert model.game_.family == "minimax"


@pytest.mark.parametrize("solver", ["fast", "compile"])
@pytest.mark.parametrize("eps", [0.01, 0.1])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_inf_ball_regressor_is_the_lasso(diabetes, solver, eps, fit_intercept):
    """With ``rho=None`` the quadratic minimax objective (Eq. 32, inf-norm moment ball) is

    ``mean[(a^T x)^2 / 4 - y a^T x] + eps ||a||_1 = 2 [||y - X w||^2 / (2n) + eps ||w||_1] - mean(y^2)``

    with ``w = a / 2``: the factor is ``coef_ = A_ / 2``, which is sklearn's
    ``Lasso(alpha=eps)`` solution with the same ``eps`` (the objective identity is checked too)."""
    X, y = diabetes
    _check_lasso(X, y, eps, fit_intercept, solver)


@pytest.mark.parametrize("solver", ["fast", "compile"])
def test_lasso_with_an_intercept_on_uncentred_data(diabetes, solver):
    """As above with a non-zero intercept that depends on the weights (uncentred X and y);
    ``tol=1e-10`` asks both solvers for the 1e-6 accuracy of the weights."""
    X, y = diabetes
    _check_lasso(X + 1.5, y + 3.0, 0.01, True, solver)


# ------------------------------------------------------------ regression: OLS and rho
@pytest.mark.parametrize("solver", ["fast", "compile"])
def test_radius_zero_without_rho_is_least_squares(solver):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 5)) + 0.5
    y = X @ np.array([1.0, -2.0, 0.5, 0.0, 3.0]) + 1.5 + rng.normal(size=200)
    ols = np.linalg.lstsq(np.hstack([X, np.ones((200, 1))]), y, rcond=None)[0]
    model = ag.MinimaxRegressor(radius=0.0, solver=solver, tol=1e-12, max_iter=20000).fit(X, y)
    np.testing.assert_allclose(model.coef_, ols[:-1], rtol=0, atol=1e-6)
    assert model.intercept_ == pytest.approx(ols[-1], abs=1e-6)
    np.testing.assert_allclose(model.predict(X), X @ ols[:-1] + ols[-1], rtol=0, atol=1e-6)


def _huber_potential(z, rho):
    """Eq. 32: ``F(z) = max_{|m| <= rho} rho^2 - m^2 + z m``."""
    return np.where(np.abs(z) <= 2 * rho, rho**2 + z**2 / 4, rho * np.abs(z))


@pytest.mark.parametrize("rho, eps", [(1.0, 0.05), pytest.param(1.0, 0.2, marks=pytest.mark.slow)])
def test_finite_rho_clips_the_prediction(diabetes, rho, eps):
    X, y = diabetes
    objectives = {}
    for solver in ("fast", "compile"):
        model = ag.MinimaxRegressor(
            radius=eps, rho=rho, solver=solver, tol=1e-10, max_iter=20000
        ).fit(X, y)
        z = X @ model.A_[0, :-1] + model.A_[0, -1]
        predicted = model.predict(X)
        assert np.all(np.abs(predicted) <= rho)
        assert np.any(np.abs(z / 2) > rho)  # the clipping is active on some rows
        np.testing.assert_allclose(predicted, np.clip(z / 2, -rho, rho), rtol=0, atol=1e-12)
        recomputed = (
            np.mean(_huber_potential(z, rho) - y * z) + eps * np.abs(model.A_[0, :-1]).sum()
        )
        assert model.objective_ == pytest.approx(recomputed, rel=1e-10)
        objectives[solver] = model.objective_
    assert objectives["fast"] == pytest.approx(objectives["compile"], rel=1e-6)


# ---------------------------------------------------------- log loss: logistic regression
@pytest.mark.parametrize("solver", ["fast", "compile"])
def test_unpenalised_log_loss_is_logistic_regression(wine, solver):
    X, y = wine
    reference = LogisticRegression(C=np.inf, max_iter=10000, tol=1e-12).fit(X, y)
    model = ag.MinimaxClassifier(loss="log", radius=0.0, solver=solver, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(
        model.predict_proba(X), reference.predict_proba(X), rtol=0, atol=1e-5
    )


@pytest.mark.parametrize("solver", ["fast", "compile"])
def test_unpenalised_log_loss_coefficients_on_overlapping_classes(wine, solver):
    """Wine is separable (the full model's weights diverge), three features are not: there the
    maximum-likelihood weights are unique up to a shift, pinned here at the last class."""
    X, y = wine[0][:, :3], wine[1]
    reference = LogisticRegression(C=np.inf, max_iter=10000, tol=1e-12).fit(X, y)
    model = ag.MinimaxClassifier(loss="log", radius=0.0, solver=solver, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(
        model.coef_, reference.coef_[:-1] - reference.coef_[-1], rtol=0, atol=1e-5
    )
    np.testing.assert_allclose(
        model.intercept_, reference.intercept_[:-1] - reference.intercept_[-1], rtol=0, atol=1e-5
    )
    np.testing.assert_allclose(
        model.predict_proba(X), reference.predict_proba(X), rtol=0, atol=1e-5
    )
    assert model.objective_ == pytest.approx(log_loss(y, reference.predict_proba(X)), rel=1e-9)


# ------------------------------------------------------------------------- group lasso
@pytest.mark.parametrize("solver", ["fast", "compile"])
def test_group_ball_regressor_is_the_group_lasso(diabetes, solver):
    """Eq. 34 with ``w = a / 2``: the minimax objective is
    ``2 [||y - X w - b||^2 / (2n) + sum_g eps_g ||w_g||_2] - mean(y^2)``, so the per-group radii
    are the group-lasso weights as they stand (checked on the objective values too)."""
    X, y = diabetes
    y = y + 1.0
    n, d = X.shape
    groups = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2, 2])
    radii = np.array([0.05, 0.3, 0.02])
    w, b = cp.Variable(d), cp.Variable()
    penalty = sum(radii[g] * cp.norm(w[np.flatnonzero(groups == g)], 2) for g in range(3))
    reference = cp.Problem(cp.Minimize(cp.sum_squares(y - X @ w - b) / (2 * n) + penalty))
    reference.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert reference.status == cp.OPTIMAL
    assert np.all(w.value[groups == 1] == pytest.approx(0.0, abs=1e-8))  # a whole group is out

    model = ag.MinimaxRegressor(
        norm="group", groups=groups, radius=radii, rho=None, solver=solver, tol=1e-10
    ).fit(X, y)
    np.testing.assert_allclose(model.coef_, w.value, rtol=0, atol=1e-6)
    assert model.intercept_ == pytest.approx(b.value, abs=1e-6)
    assert model.objective_ == pytest.approx(2 * reference.value - np.mean(y**2), abs=1e-8)


# ---------------------------------------------------------- compiled vs fast agreement
NORMS = [(2, False), ("inf", False), (1, False), ("group", False), ("l1inf", False), (2, True)]


# the smoothed 0-1 solver runs to max_iter at tol=1e-10 by design; it warns with its gap
@pytest.mark.filterwarnings("ignore:MinimaxClassifier. FISTA. max_iter reached")
@pytest.mark.parametrize("dataset", [pytest.param("wine", marks=pytest.mark.slow), "iris"])
# the zero-one runs go to max_iter (5,000 FISTA steps, 6-9 s each): slow tier
@pytest.mark.parametrize("loss", ["brier", "log", pytest.param("zero_one", marks=pytest.mark.slow)])
@pytest.mark.parametrize("norm, squared", NORMS, ids=lambda v: str(v))
def test_compiled_and_fast_solvers_agree(request, dataset, loss, norm, squared):
    X, y = request.getfixturevalue(dataset)
    groups = np.arange(X.shape[1]) % 3 if norm == "group" else None
    params = {"loss": loss, "norm": norm, "squared": squared, "groups": groups}
    radius = 1.0 / len(y) if squared else 1.0 / np.sqrt(len(y))  # the default radius
    exact = ag.MinimaxClassifier(solver="compile", **params).fit(X, y)
    fast = ag.MinimaxClassifier(solver="fast", tol=1e-10, max_iter=5000, **params).fit(X, y)
    for model in (exact, fast):
        recomputed = _classifier_objective(model, X, y, radius, norm, squared, groups)
        assert model.objective_ == pytest.approx(recomputed, rel=1e-9)
    # the certificate is a true lower bound on the exact optimum
    assert fast.objective_ - fast.duality_gap_ <= exact.objective_ + 1e-7
    if loss == "zero_one":  # first-order on the smoothed entropy: certified to its gap
        assert fast.objective_ >= exact.objective_ - 1e-7
        assert fast.objective_ <= exact.objective_ * (1 + 1e-3)
        assert fast.duality_gap_ <= 5e-3
        assert np.isnan(exact.duality_gap_)
    else:
        assert fast.objective_ == pytest.approx(exact.objective_, rel=1e-6)
        assert 0 <= exact.duality_gap_ <= 1e-4
        assert 0 <= fast.duality_gap_ <= 1e-6
        assert "max_iter" not in fast.stop_reason_
        assert fast.gap_ == fast.duality_gap_ and exact.converged_ == "optimal"


@pytest.mark.parametrize("loss", ["brier", "log"])
def test_per_class_radii(wine, loss):
    X, y = wine
    radii = np.array([0.02, 0.3])  # one per class classes_[:-1]
    fits = {
        solver: ag.MinimaxClassifier(loss=loss, radius=radii, solver=solver, tol=1e-10).fit(X, y)
        for solver in ("fast", "compile")
    }
    for model in fits.values():
        recomputed = _classifier_objective(model, X, y, radii, 2)
        assert model.objective_ == pytest.approx(recomputed, rel=1e-9)
    assert fits["fast"].objective_ == pytest.approx(fits["compile"].objective_, rel=1e-6)
    norms = np.linalg.norm(fits["fast"].coef_, axis=1)
    for row, scalar in enumerate(radii):
        same = ag.MinimaxClassifier(loss=loss, radius=scalar, solver="fast", tol=1e-10).fit(X, y)
        assert np.abs(same.A_ - fits["fast"].A_).max() > 1e-2
        # raising one row's weight in a penalised sum cannot raise that row's norm at the optimum
        # (add the two optimality inequalities): row 1 goes 0.02 -> 0.3, row 0 goes 0.3 -> 0.02
        scalar_norms = np.linalg.norm(same.coef_, axis=1)
        if row == 0:
            assert norms[1] <= scalar_norms[1] + 1e-8
        else:
            assert norms[0] >= scalar_norms[0] - 1e-8


# ------------------------------------------------------------ binary 0-1: Farnia and Tse 2016 Eq. 31
@pytest.mark.parametrize("radius", [None, 0.05, 0.3])
def test_binary_zero_one_objective_is_eq_31(iris, radius):
    """With ``f = (z, 0)`` (class 1 pinned), ``F(f) = max{0, (z + 1) / 2, z}``; subtracting
    ``theta(y)^T f`` (``z`` for class 0, ``0`` for class 1) gives
    ``max{0, (1 - s z) / 2, -s z}`` with ``s = +1`` for class 0 and ``s = -1`` for class 1."""
    X, y = iris
    keep = y > 0  # versicolor vs virginica: overlapping classes
    X, labels = X[keep], np.where(y[keep] == 1, "versicolor", "virginica")
    model = ag.MinimaxClassifier(radius=radius, norm=2, solver="compile", tol=1e-10)
    model.fit(X, labels)
    eps = 1.0 / np.sqrt(len(labels)) if radius is None else radius
    z = X @ model.coef_.ravel() + model.intercept_[0]
    s = np.where(labels == model.classes_[0], 1.0, -1.0)
    hinge = np.maximum(np.maximum(0.0, (1.0 - s * z) / 2), -s * z)
    expected = hinge.mean() + eps * np.linalg.norm(model.coef_)
    assert model.objective_ == pytest.approx(expected, rel=1e-10)
    assert model.program_.to_cvxpy().value == pytest.approx(expected, rel=1e-7)
    assert model.solver_ == "compile" and model.converged_ == "optimal"
    assert model.stop_reason_.startswith("compiled")


# ---------------------------------------------------------------------------- prediction
@pytest.mark.parametrize("loss", ["zero_one", "brier", "log"])
def test_predictions_are_consistent(iris, loss):
    X, y = iris
    model = ag.MinimaxClassifier(loss=loss).fit(X, y)
    P = model.predict_proba(X)
    assert P.shape == (len(y), 3)
    assert np.all(P >= 0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    if loss != "zero_one":  # 0-1 ties: see ZERO_ONE_TIES_REASON
        np.testing.assert_array_equal(model.predict(X), model.classes_[P.argmax(axis=1)])
    assert np.mean(model.predict(X) == y) > 0.8

    keep = y > 0
    binary = ag.MinimaxClassifier(loss=loss).fit(X[keep], y[keep])
    decision = binary.decision_function(X[keep])
    assert decision.shape == (keep.sum(),)
    np.testing.assert_array_equal(
        binary.predict(X[keep]), np.where(decision > 0, binary.classes_[1], binary.classes_[0])
    )


def test_randomized_brier_follows_eq_38(iris):
    X, y = iris[0][:, :2], iris[1]  # two features: the classes overlap
    rule = ag.MinimaxClassifier(loss="brier", randomized=True, random_state=0).fit(X, y)
    mapped = ag.MinimaxClassifier(loss="brier").fit(X, y)
    np.testing.assert_array_equal(rule.A_, mapped.A_)  # the randomisation is in predict only
    draws = rule.predict(X)
    np.testing.assert_array_equal(draws, rule.predict(X))  # a fixed seed: the same draws
    assert np.any(draws != mapped.predict(X))
    assert np.mean(draws == mapped.predict(X)) > 0.5

    P = rule.predict_proba(X)
    row = np.argmax(P.min(axis=1))  # a row where every class has real mass
    assert P[row].min() > 0.2
    n = 20_000
    repeated = rule.predict(np.repeat(X[row : row + 1], n, axis=0))
    frequency = np.array([np.mean(repeated == c) for c in rule.classes_])
    expected = P[row] ** 2 / np.sum(P[row] ** 2)
    assert np.all(np.abs(frequency - expected) <= 5 * np.sqrt(expected * (1 - expected) / n))
    # ... which is not the MAP rule nor sampling from p itself
    assert np.abs(expected - P[row]).max() > 0.01


def test_unfitted_models_raise_not_fitted_error():
    for model in (ag.MinimaxClassifier(), ag.MinimaxRegressor()):
        for method in ("predict", "predict_proba", "decision_function"):
            if hasattr(model, method):
                with pytest.raises(NotFittedError):
                    getattr(model, method)(TOY_X)


def test_randomized_accepts_a_generator(iris):
    """The docstring's ``random_state : int, Generator or None``."""
    X, y = iris
    rule = ag.MinimaxClassifier(
        loss="brier", randomized=True, random_state=np.random.default_rng(0)
    ).fit(X, y)
    assert set(rule.predict(X)) <= set(rule.classes_)


# ------------------------------------------------------------- robust feature selection
def _log_r_max(X, y):
    """``max_j sum_c |mean((pi_c - 1[y = c]) x_j)|`` over the unpinned classes: the gradient of
    the log objective at zero weights with the intercepts at the class marginals ``pi``."""
    classes = np.unique(y)
    onehot = (y[:, None] == classes[None, :]).astype(float)[:, :-1]
    gradient = (onehot.mean(axis=0) - onehot).T @ X / len(y)
    return np.abs(gradient).sum(axis=0).max()


@pytest.mark.parametrize("n_classes", [2, 3])
def test_robust_feature_selection_finds_the_informative_features(n_classes):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 30))
    informative = [4, 11, 23]
    weights = np.array([[2.0, -1.5, 1.0], [-1.0, 2.0, 0.5], [0.0, 0.0, 0.0]])[:n_classes]
    scores = X[:, informative] @ weights.T
    y = (scores[:, 0] > 0).astype(int) if n_classes == 2 else scores.argmax(axis=1)
    estimator = ag.MinimaxClassifier(loss="log")
    result = ag.robust_feature_selection(estimator, X, y, n_features=3)
    assert sorted(result.selected.tolist()) == informative
    assert len(result.counts) == len(result.radii) >= 2
    assert result.counts[0] == 0 and result.counts[-1] >= 3 and np.all(result.counts[:-1] < 3)
    assert result.radius == result.radii[-1]
    r_max = _log_r_max(X, y)
    np.testing.assert_allclose(
        result.radii, np.geomspace(r_max, 1e-3 * r_max, 30)[: len(result.radii)]
    )
    # r_max is where the weights leave zero: the l1,inf KKT condition
    path = dict(loss="log", norm="l1inf", solver="fast", tol=1e-10)
    above = ag.MinimaxClassifier(radius=1.01 * r_max, **path).fit(X, y)
    below = ag.MinimaxClassifier(radius=0.95 * r_max, **path).fit(X, y)
    assert np.abs(above.coef_).max() < 1e-8 < np.abs(below.coef_).max()
    assert estimator.get_params()["norm"] == 2  # the estimator passed in is not modified


def test_robust_feature_selection_recovers_a_sparse_regression():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 30))
    beta = np.zeros(30)
    support = [2, 9, 17, 28]
    beta[support] = [1.5, -2.0, 1.0, 0.8]
    y = X @ beta + 0.3 * rng.normal(size=300)
    result = ag.robust_feature_selection(ag.MinimaxRegressor(), X, y, n_features=4)
    assert sorted(result.selected.tolist()) == support
    assert len(result.counts) == len(result.radii) and result.counts[-1] >= 4
    # the regressor's r_max: the gradient mean((z / 2 - y) x) at a = 0 with the mean intercept
    r_max = np.abs((y.mean() - y) @ X / len(y)).max()
    assert result.radii[0] == pytest.approx(r_max, rel=1e-6)


def test_robust_feature_selection_rejects_too_many_features(iris):
    X, y = iris
    with pytest.raises(ValueError, match="exceeds"):
        ag.robust_feature_selection(ag.MinimaxClassifier(loss="log"), X, y, n_features=5)
    with pytest.raises(ValueError, match="n_features"):
        ag.robust_feature_selection(ag.MinimaxClassifier(loss="log"), X, y, n_features=0)


# ------------------------------------------------------------------------------ bad input
TOY_X, TOY_Y = np.random.default_rng(0).normal(size=(12, 3)), np.arange(12) % 3


@pytest.mark.parametrize(
    "params, match",
    [
        ({"radius": -1.0}, "radius must be a finite non-negative"),
        ({"radius": np.nan}, "radius must be a finite non-negative"),
        ({"radius": [0.1, 0.2, 0.3]}, r"one value per row \(class\) \(2\)"),
        ({"norm": "l3"}, "norm must be one of"),
        ({"norm": 3}, "norm must be one of"),
        ({"norm": "group", "squared": True, "groups": [0, 0, 1]}, "squared=True"),
        ({"norm": "group"}, "needs groups"),
        ({"norm": "group", "groups": [0, 1]}, "one label per feature"),
        ({"norm": "group", "groups": [0, 0, 1], "radius": [1.0, 2.0, 3.0]}, "per group"),
        ({"loss": "hinge"}, "loss must be one of"),
        ({"solver": "newton"}, "solver must be one of"),
        ({"max_iter": 0}, "max_iter"),
        ({"tol": 0.0}, "tol"),
        ({"loss": "log", "randomized": True}, "randomized"),
        ({"loss": "zero_one", "randomized": True}, "randomized"),
    ],
)
def test_classifier_bad_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        ag.MinimaxClassifier(**params).fit(TOY_X, TOY_Y)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"rho": 0}, "rho"),
        ({"rho": -1.0}, "rho"),
        ({"radius": -1.0}, "radius must be a finite non-negative"),
        ({"radius": [0.1, 0.2]}, "one value per row"),
        ({"norm": 3}, "norm must be one of"),
        ({"norm": "group", "squared": True, "groups": [0, 0, 1]}, "squared=True"),
        ({"norm": "group"}, "needs groups"),
        ({"solver": "newton"}, "solver must be one of"),
        ({"max_iter": 0}, "max_iter"),
    ],
)
def test_regressor_bad_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        ag.MinimaxRegressor(**params).fit(TOY_X, TOY_X[:, 0])


@pytest.mark.parametrize(
    "estimator", [ag.MinimaxClassifier(), ag.MinimaxRegressor()], ids=lambda e: type(e).__name__
)
@pytest.mark.parametrize("bad, match", [(np.nan, "NaN"), (np.inf, "infinity")])
def test_non_finite_X(estimator, bad, match):
    X = TOY_X.copy()
    X[3, 1] = bad
    with pytest.raises(ValueError, match=match):
        estimator.fit(X, TOY_Y)


def test_single_class():
    with pytest.raises(ValueError, match="at least 2 classes"):
        ag.MinimaxClassifier().fit(TOY_X, np.zeros(12))


# ------------------------------------------------------------------- scikit-learn plumbing
def test_pandas_pipeline_and_gridsearch():
    X, y = load_wine(return_X_y=True, as_frame=True)
    names = pd.Series(np.array(["barolo", "grignolino", "barbera"])[y.to_numpy()])
    pipe = make_pipeline(StandardScaler(), ag.MinimaxClassifier(loss="brier"))
    search = GridSearchCV(pipe, {"minimaxclassifier__radius": [1e-3, 1e-1]}, cv=3).fit(X, names)
    assert search.best_score_ > 0.9
    assert search.best_params_["minimaxclassifier__radius"] in (1e-3, 1e-1)
    assert set(search.predict(X)) <= set(names)

    frame = pd.DataFrame(StandardScaler().fit_transform(X), columns=X.columns)
    clf = ag.MinimaxClassifier(loss="log").fit(frame, names)
    assert list(clf.feature_names_in_) == list(X.columns)
    with pytest.warns(UserWarning, match="feature names"):
        unnamed = clf.predict(frame.to_numpy())
    np.testing.assert_array_equal(clf.predict(frame), unnamed)

    Xr, yr = load_diabetes(return_X_y=True, as_frame=True)
    pipe = make_pipeline(StandardScaler(), ag.MinimaxRegressor())
    search = GridSearchCV(pipe, {"minimaxregressor__radius": [1e-2, 100.0]}, cv=3).fit(Xr, yr)
    assert search.best_params_["minimaxregressor__radius"] == 1e-2  # 100 zeroes the weights
    assert search.best_score_ > 0.4
    np.testing.assert_array_equal(
        search.best_estimator_[-1]
        .set_params(radius=100.0)
        .fit(StandardScaler().fit_transform(Xr), yr)
        .coef_,
        0.0,
    )


@pytest.mark.parametrize(
    "estimator",
    [ag.MinimaxClassifier(solver="compile"), ag.MinimaxRegressor(solver="compile")],
    ids=lambda e: type(e).__name__,
)
def test_compiled_estimators_pickle(iris, estimator):
    X, y = iris
    target = y if isinstance(estimator, ag.MinimaxClassifier) else X[:, 0]
    fitted = estimator.fit(X[:, 1:], target)
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.predict(X[:, 1:]), fitted.predict(X[:, 1:]))


PROX_CASES = [
    ({"radius": [0.3, 0.5], "norm": "inf"}, None),
    ({"radius": [0.3, 0.5], "norm": 2}, None),
    ({"radius": [0.3, 0.5], "norm": 1}, None),
    ({"radius": 0.4, "norm": "l1inf"}, None),
    ({"radius": [0.2, 0.6], "norm": "group", "groups": [0, 0, 1, 1, 1]}, None),
    ({"radius": [0.3, 0.5], "norm": 2, "squared": True}, None),
    ({"radius": [0.3, 0.0], "norm": "inf", "squared": True}, None),
    ({"radius": [0.0, 0.5], "norm": 1, "squared": True}, None),
]


@pytest.mark.parametrize("params, _", PROX_CASES, ids=lambda v: str(v))
@pytest.mark.parametrize(
    "W",
    [
        np.array([[1.0, -2.0, 0.5, 0.0, 3.0], [0.1, 0.1, 0.1, 0.1, 0.1]]),  # ties in a row
        np.array([[1e4, -1e4, 2.0, 1e-9, 0.0], [-3.0, 3.0, 3.0, -3.0, 0.0]]),  # huge and tiny
        np.zeros((2, 5)),
    ],
    ids=["ties", "magnitudes", "zero"],
)
def test_moment_ball_prox_matches_a_cvxpy_prox_program(params, _, W):
    """The prox of every MomentBalls penalty (t = 2 rows) against cvxpy's solution of
    min_V penalty(V) + ||V - W||^2 / (2 step), and penalty() against its cvxpy expression."""
    import cvxpy as cp

    from advgame.uncertainty import MomentBalls

    balls = MomentBalls(**params).bind(2, 5)
    step = 0.7
    scale = max(1.0, np.abs(W).max())
    # a squared penalty is 2-homogeneous and acts row by row, so its prox commutes with scaling
    # each row: solve at unit scale (Clarabel is inaccurate on squared norms of 1e4)
    unit = np.maximum(1.0, np.abs(W).max(axis=1, keepdims=True)) if balls.squared else 1.0
    V = cp.Variable(W.shape)
    problem = cp.Problem(cp.Minimize(balls.cvxpy(V) + cp.sum_squares(V - W / unit) / (2 * step)))
    problem.solve(solver=cp.CLARABEL)
    np.testing.assert_allclose(balls.prox(W, step), unit * V.value, atol=1e-6 * scale)
    assert abs(balls.penalty(W) - balls.cvxpy(cp.Constant(W)).value) <= 1e-9 * scale**2


def test_l1_ball_projection_is_the_nearest_point_of_the_ball():
    """Sort-based projection vs brute force: the QP over the ball, with ties and k = 2."""
    import cvxpy as cp

    from advgame.uncertainty import _project_l1_ball

    rng = np.random.default_rng(3)
    rows = [
        rng.normal(size=2),
        np.array([1.0, 1.0]),
        np.array([2.0, -2.0, 2.0]),
        rng.normal(size=6),
    ]
    for v in rows:
        for radius in (0.0, 0.5, 1.0, 10.0):
            x = cp.Variable(v.size)
            cp.Problem(cp.Minimize(cp.sum_squares(x - v)), [cp.norm1(x) <= radius]).solve(
                solver=cp.CLARABEL
            )
            np.testing.assert_allclose(_project_l1_ball(v[None], radius)[0], x.value, atol=1e-6)


@pytest.mark.parametrize("params, _", PROX_CASES, ids=lambda v: str(v))
def test_moment_ball_conjugate_and_dual_bound(params, _):
    """``conjugate`` against ``sup_W <G, W> - penalty(W)`` in cvxpy (bounded to detect +inf),
    and ``dual_bound`` as the best mix ``r`` found by a grid search."""
    import cvxpy as cp

    from advgame.uncertainty import MomentBalls

    balls = MomentBalls(**params).bind(2, 5)
    rng = np.random.default_rng(5)
    for scale in (0.05, 3.0):
        G = scale * rng.normal(size=(2, 5))
        W = cp.Variable(G.shape)
        box = 1e4
        problem = cp.Problem(
            cp.Maximize(cp.sum(cp.multiply(G, W)) - balls.cvxpy(W)), [cp.abs(W) <= box]
        )
        problem.solve(solver=cp.CLARABEL)
        conjugate = balls.conjugate(G)
        if np.isinf(conjugate):
            assert problem.value > 1.0  # grows with the box: unbounded without it
        else:
            assert conjugate == pytest.approx(problem.value, rel=1e-6, abs=1e-6)
        for entropy in (0.0, 0.3):
            grid = np.linspace(0, 1, 2001)
            best = max(r * entropy - balls.conjugate(r * G) for r in grid)
            assert balls.dual_bound(G, entropy) >= best - 1e-9
            assert balls.dual_bound(G, entropy) <= entropy + 1e-12


def test_fast_solver_detects_unbounded_programs():
    """Small rho next to the targets makes the regression program unbounded: the fast solver
    runs out of iterations and the recession program says why."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = 5.0 + X[:, 0]
    with pytest.raises(SolverError, match="unbounded"):
        ag.MinimaxRegressor(rho=0.5, radius=0.0, solver="fast", max_iter=200).fit(X, y)
    # bounded but not converged: no error, the message says so
    model = ag.MinimaxRegressor(rho=10.0, radius=0.1, solver="fast", max_iter=3).fit(X, y)
    assert model.converged_ == "uncertified" and "max_iter" in model.stop_reason_


@pytest.mark.slow  # thousands of smoothed steps (about 5 s)
def test_zero_one_fast_solver_certifies_its_gap(iris):
    """With a generous budget the smoothing continuation meets the tolerance: the certified
    gap bounds the distance to the compiled optimum."""
    X, y = iris
    exact = ag.MinimaxClassifier(norm="inf", solver="compile").fit(X, y)
    fast = ag.MinimaxClassifier(norm="inf", solver="fast", tol=1e-4, max_iter=20_000).fit(X, y)
    assert fast.converged_ == "certified"
    assert fast.stop_reason_.startswith("FISTA: converged (smoothing")
    assert fast.duality_gap_ <= 1e-4 * max(1.0, fast.objective_)
    assert exact.objective_ - 1e-9 <= fast.objective_ <= exact.objective_ + fast.duality_gap_


def test_regressor_refuses_targets_beyond_float64_and_names_y():
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(
        ValueError, match=r"y has targets of magnitude up to .*MAX_TARGET_MAGNITUDE"
    ):
        ag.MinimaxRegressor(radius=0.1).fit(X, X[:, 0] * 1e300)


@pytest.mark.parametrize("groups", [[[0, 1], [7]], [[0, 1], [2]], [[0, 1, 2]]])
def test_groups_as_index_lists_get_one_clear_error(groups):
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(ValueError, match=r"groups must give one label per feature \(its group\)"):
        ag.MinimaxRegressor(norm="group", groups=groups).fit(X, X[:, 0])
