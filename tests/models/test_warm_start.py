"""Warm starts of AdversarialClassifier along a path of strengths (issue 39): every warm fit
reaches the certified optimum of a cold fit, and of the compiled program, within ``tol``."""

import numpy as np
import pytest
from sklearn.datasets import load_wine, make_classification
from sklearn.preprocessing import StandardScaler

import advgame as ag
from advgame import solvers
from advgame.features import Multiclass
from advgame.game import Game
from advgame.losses import zero_one
from advgame.solvers.dual_ascent import rescaled_dual

#: strong to weak, as AdversarialClassifierCV runs them
PATH = np.geomspace(1.0, 1e-4, 6)


@pytest.fixture(scope="module")
def wine():
    X, y = load_wine(return_X_y=True)
    rows = np.random.default_rng(0).choice(y.size, 90, replace=False)
    return StandardScaler().fit_transform(X[rows]), y[rows]


def _within(fit, tol):
    return fit.gap_ <= tol * max(1.0, abs(fit.objective_))


@pytest.mark.parametrize("loss", ["zero_one", "abstain", "ordinal"])
def test_warm_path_reaches_the_cold_optimum(wine, loss):
    """At every strength of the path the warm fit and a cold fit are certified within ``tol``
    and bracket one optimum: each objective minus its gap is a lower bound on the other's."""
    X, y = wine
    tol = 1e-4
    warm = ag.AdversarialClassifier(loss=loss, warm_start=True, tol=tol)
    for strength in PATH:
        warm.set_params(strength=strength).fit(X, y)
        cold = ag.AdversarialClassifier(loss=loss, strength=strength, tol=tol).fit(X, y)
        assert warm.converged_ == cold.converged_ == "certified"
        assert _within(warm, tol) and _within(cold, tol)
        assert warm.objective_ - warm.gap_ <= cold.objective_ + 1e-12
        assert cold.objective_ - cold.gap_ <= warm.objective_ + 1e-12


@pytest.mark.parametrize(
    "loss", ["zero_one", pytest.param("abstain", marks=pytest.mark.slow), "ordinal"]
)
def test_warm_path_brackets_the_compiled_optimum(wine, loss):
    """The compiled program's exact optimum (an independent solver: HiGHS or Clarabel) lies
    in the certified bracket ``[objective_ - gap_, objective_]`` of every warm fit."""
    X, y = wine[0][:40], wine[1][:40]
    warm = ag.AdversarialClassifier(loss=loss, warm_start=True)
    for strength in PATH[::2]:
        warm.set_params(strength=strength).fit(X, y)
        exact = ag.AdversarialClassifier(loss=loss, strength=strength, solver="compile").fit(X, y)
        slack = 1e-6 * max(1.0, abs(exact.objective_))  # the QP solver's own accuracy
        assert warm.objective_ - warm.gap_ - slack <= exact.objective_
        assert exact.objective_ <= warm.objective_ + slack


def test_warm_start_resumes_from_the_previous_dual_point(wine):
    """A second fit at the same strength starts at the first one's certified dual point, so
    it certifies at once (in a few epochs) where the cold fit needs many; a fit of
    other shapes (here, fewer classes) starts cold.  The first fit certifies at a tighter
    tolerance than the second, so that its point is inside the second's whatever the row
    order of the epochs."""
    X, y = wine
    params = {"strength": 1e-3, "tol": 1e-6}
    warm = ag.AdversarialClassifier(warm_start=True, **{**params, "tol": 1e-8}).fit(X, y)
    assert warm.dual_ is not None and warm.dual_.shape == (y.size, 3)
    cold_epochs = ag.AdversarialClassifier(**params).fit(X, y).n_iter_
    warm.set_params(**params).fit(X, y)
    assert warm.converged_ == "certified" and warm.n_iter_ <= 3 and 5 * warm.n_iter_ < cold_epochs
    two = y < 2
    cold = ag.AdversarialClassifier(**params).fit(X[two], y[two])
    warm.fit(X[two], y[two])
    assert warm.n_iter_ == cold.n_iter_ and np.array_equal(warm.theta_, cold.theta_)


def test_warm_start_without_a_dual_point_steps_on_from_the_previous_parameters(capsys):
    """Dense rows: the dual ascent gives up after an epoch and the fit ends in smoothing steps,
    so it leaves no dual point.  The next fit of the path runs the ascent cold, and when that
    gives up again the steps go on from the previous parameters (not from the ascent's point,
    a restart): fewer steps than the cold fit, the same certified optimum."""
    X, y = make_classification(1500, 20, n_informative=5, n_classes=4, flip_y=0.3, random_state=0)
    X = StandardScaler().fit_transform(X)
    warm = ag.AdversarialClassifier(warm_start=True, strength=1e-3).fit(X, y)
    assert warm.dual_ is None and warm.converged_ == "certified"
    warm.set_params(strength=1e-4, verbose=1).fit(X, y)
    assert "smoothing (from the warm start): certified" in capsys.readouterr().err
    cold = ag.AdversarialClassifier(strength=1e-4).fit(X, y)
    assert warm.converged_ == cold.converged_ == "certified"
    assert warm.n_iter_ < cold.n_iter_
    assert warm.objective_ - warm.gap_ <= cold.objective_ + 1e-12
    assert cold.objective_ - cold.gap_ <= warm.objective_ + 1e-12


def test_linear_dual_ascent_from_a_dual_point(wine):
    """fit_linear_dual from ``Q0``: the optimum's own dual point (certified at a tighter
    tolerance) certifies in one check; any other dual point (here the uniform one) reaches
    the same certified optimum as the start ``E_y``."""
    X, y = wine
    X1 = np.hstack([X, np.ones((y.size, 1))])
    game, weights = Game(zero_one(3)), np.full(y.size, 1.0 / y.size)
    soft, tol = ag.SoftMoments(1e-3), 1e-6
    cold = solvers.fit_linear_dual(game, X1, y, weights, soft, tol)
    tight = solvers.fit_linear_dual(game, X1, y, weights, soft, 1e-8)
    again = solvers.fit_linear_dual(game, X1, y, weights, soft, tol, Q0=tight.dual)
    uniform = solvers.fit_linear_dual(
        game, X1, y, weights, soft, tol, Q0=np.full((y.size, 3), 1 / 3)
    )
    assert again.n_iter <= 2 < cold.n_iter
    for fit in (again, uniform):
        assert fit.message == "certified"
        assert abs(fit.objective - cold.objective) <= fit.gap + cold.gap + 1e-12
    assert Multiclass().fit(X, 3).n_params == cold.theta.size


@pytest.mark.parametrize(
    "Q0, match",
    [
        (np.full((5, 3), 1 / 3), r"Q0 must have shape \(90, 3\)"),
        (np.full((90, 3), 0.5), "rows that sum to 1"),
        (np.tile([1.5, -0.5, 0.0], (90, 1)), "non-negative"),
        (np.full((90, 3), np.nan), "Q0"),
    ],
)
def test_linear_dual_ascent_refuses_a_start_that_is_no_dual_point(wine, Q0, match):
    X, y = wine
    X1 = np.hstack([X, np.ones((y.size, 1))])
    with pytest.raises(ValueError, match=match):
        solvers.fit_linear_dual(
            Game(zero_one(3)), X1, y, np.full(y.size, 1 / 90), ag.SoftMoments(0.01), Q0=Q0
        )


def test_warm_start_must_be_a_bool(wine):
    with pytest.raises(ValueError, match="warm_start must be True or False"):
        ag.AdversarialClassifier(warm_start="yes").fit(*wine)


def test_rescaled_dual_keeps_the_parameters_at_the_weaker_strength(wine):
    """``Theta = X^T W (E_y - Q) / lam``: the rescaled point at ``lam / 4`` gives the previous
    ``Theta`` (the primal point), and its rows stay distributions; stronger strengths keep Q."""
    X, y = wine
    rng = np.random.default_rng(1)
    Q = rng.dirichlet(np.ones(3), size=y.size)
    E = np.eye(3)[y]
    w = np.full(y.size, 1 / y.size)

    def theta(Q, lam):
        return X.T @ (w[:, None] * (E - Q)) / lam

    moved = rescaled_dual(Q, y, 0.25)
    np.testing.assert_allclose(theta(moved, 0.25e-2), theta(Q, 1e-2), rtol=1e-12, atol=1e-12)
    assert np.all(moved >= 0) and np.allclose(moved.sum(axis=1), 1)
    np.testing.assert_allclose(rescaled_dual(Q, y, 4.0), Q, rtol=0, atol=1e-15)
