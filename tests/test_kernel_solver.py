"""The certified exact-kernel solver (advgame.solvers.fit_kernel) against the compiled program."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris

import advgame as ag
from advgame.exceptions import NotApplicableError
from advgame.solvers import (
    fit_kernel,
    kernel_dual_bound,
    kernel_obstacle,
    kernel_regularizer,
    smoothing_obstacle,
)
from advgame.uncertainty import Exact, NormBall, SoftMoments

GENERAL = np.array([[0.0, 1.0, 3.0], [2.0, 0.0, 1.0], [1.0, 2.0, 0.0]])
TOL = 1e-6


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    rows = np.random.default_rng(0).choice(len(y), 60, replace=False)
    return X[rows], y[rows]


def _compiled(X, y, **params):
    """The classifier fitted by the compiled program (its optimum) and the kernel problem."""
    model = ag.AdversarialClassifier(gamma=0.5, solver="compile", **params).fit(X, y)
    y_index = np.searchsorted(model.classes_, y)
    K = model.feature_map_.gram(X)
    return model, (model.game_.game(), K, y_index, np.full(len(y), 1.0 / len(y)))


@pytest.mark.parametrize(
    ("loss", "kernel", "uncertainty"),
    [
        ("zero_one", "rbf", "soft"),
        ("zero_one", "linear", "soft"),
        ("zero_one", "rbf", "l2"),
        ("ordinal", "rbf", "soft"),
        ("ordinal", "linear", "soft"),
        (GENERAL, "rbf", "soft"),
        (GENERAL, "linear", "soft"),
        (GENERAL, "rbf", "l2"),
    ],
)
def test_certified_gap_brackets_the_compiled_optimum(iris, loss, kernel, uncertainty):
    X, y = iris
    strength = 0.05 if uncertainty == "l2" else None
    exact, (game, K, y_index, w) = _compiled(
        X, y, loss=loss, kernel=kernel, uncertainty=uncertainty, strength=strength
    )
    optimum = exact.objective_
    result = fit_kernel(game, K, y_index, w, exact.uncertainty_, tol=TOL)
    assert result.message == "certified"
    assert result.gap <= TOL * max(1.0, abs(result.objective))
    lower = result.objective - result.gap
    assert lower <= optimum + 1e-7  # the bound never exceeds the optimum
    assert optimum - 1e-7 <= result.objective <= optimum + result.gap + 1e-7
    # the reported objective is J at the returned coefficients
    A = result.theta.reshape(len(y), -1)
    F = K @ A
    value = game.value_and_adversary(F)[0]
    J = np.mean(value - F[np.arange(len(y)), y_index])
    J += kernel_regularizer(exact.uncertainty_, float(np.sum(A * F)))[0]
    assert J == pytest.approx(result.objective, rel=1e-9)


def test_any_adversaries_give_a_lower_bound(iris):
    X, y = iris
    exact, (game, K, y_index, w) = _compiled(X, y, kernel="rbf")
    rng = np.random.default_rng(1)
    for _ in range(5):
        Q = rng.dirichlet(np.ones(3), size=len(y))
        bound = kernel_dual_bound(game, K, y_index, w, exact.uncertainty_, Q)
        assert bound <= exact.objective_ + 1e-9
    # the labels themselves: the bound is the Bayes risk of the truth
    truth = np.eye(3)[y_index]
    assert kernel_dual_bound(game, K, y_index, w, exact.uncertainty_, truth) == 0.0


def test_classifier_uses_the_certified_kernel_solver_beyond_the_compile_size():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(700, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=700) > 0).astype(int) + (X[:, 1] > 0.8)
    model = ag.AdversarialClassifier(kernel="rbf", gamma=0.5).fit(X, y)  # 2,100 game rows
    assert model.solver_ == "smoothing"
    assert model.converged_ == "certified"
    assert model.gap_ <= model.tol * max(1.0, abs(model.objective_))
    assert model.dual_coef_.shape == (700, 3)
    assert model.score(X, y) > 0.8


def test_lbfgs_on_kernels_is_finished_by_the_kernel_solver(iris, monkeypatch):
    X, y = iris
    import advgame.models.classifier as classifier

    monkeypatch.setattr(classifier, "AUTO_CERTIFY_SIZE", 0)  # too large for cutting planes
    exact = ag.AdversarialClassifier(kernel="rbf", gamma=0.5, solver="compile").fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # L-BFGS's own convergence chatter
        model = ag.AdversarialClassifier(kernel="rbf", gamma=0.5, solver="lbfgs", max_iter=50)
        model.fit(X, y)
    assert model.converged_ == "certified"
    assert model.objective_ - model.gap_ <= exact.objective_ + 1e-7
    assert model.objective_ - exact.objective_ <= model.gap_ + 1e-7


def test_invalid_combinations_raise_clear_errors(iris):
    X, y = iris
    _, (game, K, y_index, w) = _compiled(X, y, kernel="rbf")
    with pytest.raises(ValueError, match="RKHS"):
        fit_kernel(game, K, y_index, w, NormBall(0.1, norm=1))
    with pytest.raises(NotApplicableError, match="exact"):
        fit_kernel(game, K, y_index, w, Exact())
    assert kernel_obstacle(game, NormBall(0.0, 2)) == "exact"
    assert kernel_obstacle(game, SoftMoments(0.1)) is None
    assert kernel_obstacle(game, NormBall(0.1, 2)) is None
    assert "RKHS" in kernel_obstacle(game, NormBall(0.1, "group"))
    fmap = ag.features.KernelFeatures("rbf").fit(X, 3)
    assert "fit_kernel" in smoothing_obstacle(game, SoftMoments(0.1), fmap)
    for uncertainty in ("l1", "linf"):
        with pytest.raises(ValueError, match="RKHS"):
            ag.AdversarialClassifier(kernel="rbf", uncertainty=uncertainty).fit(X, y)
