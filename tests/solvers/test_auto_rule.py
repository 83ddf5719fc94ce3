"""``solver='auto'``: the measured rule (docs/results/auto.md) picks its solver on representative
problems, and a fit with ``solver='auto'`` on a norm ball is certified against the compiled
optimum."""

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.preprocessing import StandardScaler

import advgame as ag
from advgame.features import KernelFeatures, Multiclass
from advgame.game import Game
from advgame.solvers import auto
from advgame.uncertainty import Exact, NormBall, SoftMoments

K, D = 4, 5
GENERAL = np.random.default_rng(7).uniform(0.2, 2.0, (K, K)) * (1 - np.eye(K))


def _choice(loss, uncertainty, n, kernel=False):
    """``(auto_solver, describe_auto_choice)`` for ``n`` rows of ``K`` classes."""
    fmap = KernelFeatures() if kernel else Multiclass()
    fmap.fit(np.zeros((n, D)), K)
    game = Game(loss)
    return (
        auto.auto_solver(game, uncertainty, fmap, n),
        auto.describe_auto_choice(game, uncertainty, fmap, n),
    )


ball_rows = auto.AUTO_BALL_COMPILE_ROWS // K  # the largest n compiled on a ball
small_rows = auto.AUTO_SOCP_SMALL_ROWS // K
# the fewest rows with AUTO_LBFGS_ROWS_PER_PARAM game rows per parameter ((D + 1) K parameters)
lp_rows = auto.AUTO_LBFGS_ROWS_PER_PARAM * (D + 1) * K // K
radius = auto.AUTO_SOCP_SMOOTHING_RADIUS
linf_radius = auto.AUTO_LINF_SMOOTHING_RADIUS


@pytest.mark.parametrize(
    "loss, uncertainty, n, kernel, expected",
    [
        # exact matching: only the compiled LP certifies, at every size
        (ag.losses.zero_one(K), Exact(), 50, False, "compile"),
        (ag.losses.zero_one(K), Exact(), 100_000, False, "compile"),
        # soft moments: smoothing at every size, kernels included
        (ag.losses.zero_one(K), SoftMoments(0.01), 50, False, "smoothing"),
        (GENERAL, SoftMoments(0.01), 100_000, False, "smoothing"),
        (ag.losses.zero_one(K), SoftMoments(0.01), 50, True, "smoothing"),
        (GENERAL, NormBall(0.1, norm=2), 50, True, "smoothing"),
        # ... but an RKHS ball below radius 0.1 runs L-BFGS, certified afterwards
        (ag.losses.zero_one(K), NormBall(0.01, norm=2), 50, True, "lbfgs"),
        # LP balls: compiled below AUTO_LBFGS_ROWS_PER_PARAM game rows per parameter, L-BFGS
        # from there up to the limit, smoothing beyond ...
        (ag.losses.zero_one(K), NormBall(1.0, norm=1), lp_rows - 1, False, "compile"),
        (GENERAL, NormBall(1e-3, norm=np.inf), lp_rows - 1, False, "compile"),
        (ag.losses.zero_one(K), NormBall(1.0, norm=1), lp_rows, False, "lbfgs"),
        (GENERAL, NormBall(1e-3, norm=np.inf), ball_rows, False, "lbfgs"),
        (ag.losses.zero_one(K), NormBall(0.1, norm=1), ball_rows + 1, False, "smoothing"),
        # ... except a linf ball so large that theta stays (nearly) at 0 (closed-form losses)
        (GENERAL, NormBall(linf_radius / 10, norm=np.inf), lp_rows - 1, False, "compile"),
        (ag.losses.ordinal(K), NormBall(linf_radius, norm=np.inf), lp_rows, False, "smoothing"),
        (GENERAL, NormBall(linf_radius, norm=np.inf), lp_rows - 1, False, "compile"),
        (GENERAL, NormBall(linf_radius, norm=np.inf), lp_rows, False, "lbfgs"),
        # SOCP balls: small radii compiled (at any rows per parameter); from the threshold
        # smoothed ...
        (ag.losses.zero_one(K), NormBall(radius / 10, norm=2), ball_rows, False, "compile"),
        (ag.losses.zero_one(K), NormBall(radius, norm=2), ball_rows, False, "smoothing"),
        (ag.losses.ordinal(K), NormBall(radius, norm="group"), 50, False, "smoothing"),
        (GENERAL, NormBall(radius, norm=2), small_rows, False, "smoothing"),
        (GENERAL, NormBall(radius, norm=2), small_rows + 1, False, "smoothing"),
        # ... except the zero-one and general losses on a small group ball, compiled
        (ag.losses.zero_one(K), NormBall(radius, norm="group"), small_rows, False, "compile"),
        (GENERAL, NormBall(radius, norm="group"), small_rows, False, "compile"),
        (ag.losses.zero_one(K), NormBall(radius, norm="group"), small_rows + 1, False, "smoothing"),
        # ... and a general loss with few game rows per parameter, compiled
        (GENERAL, NormBall(radius, norm=2), lp_rows - 1, False, "compile"),
        (GENERAL, NormBall(radius, norm=2), lp_rows, False, "smoothing"),
        # beyond the compiled sizes: L-BFGS certified by smoothing from radius 0.01, else smoothing
        (GENERAL, NormBall(1.0, norm=2), ball_rows + 1, False, "lbfgs"),
        (ag.losses.zero_one(K), NormBall(radius / 10, norm=2), ball_rows + 1, False, "smoothing"),
    ],
)
def test_auto_picks_the_measured_rules_solver(loss, uncertainty, n, kernel, expected):
    solver, description = _choice(loss, uncertainty, n, kernel)
    assert solver == expected
    assert description.startswith(f"{expected}: ") and "docs/results/auto.md" in description


def test_auto_without_a_smoothing_compiles_then_runs_lbfgs(monkeypatch):
    reason = "the loss has no smoothing"
    monkeypatch.setattr(auto, "certified_obstacle", lambda game, uncertainty, fmap: reason)
    rows = auto.AUTO_COMPILE_ROWS // K
    small, text = _choice(GENERAL, NormBall(0.1, norm=1), rows)
    assert small == "compile" and reason in text
    assert _choice(GENERAL, NormBall(0.1, norm=1), rows + 1)[0] == "lbfgs"


def test_auto_descriptions_name_the_problem():
    text = _choice(GENERAL, NormBall(0.05, norm=2), 100)[1]
    assert "NormBall(radius=0.05, norm=2)" in text and "100 samples x 4 classes" in text
    assert "exact moment matching" in _choice(GENERAL, Exact(), 100)[1]


@pytest.mark.parametrize("uncertainty, strength", [("l1", 0.1), ("linf", 0.01), ("l2", 0.1)])
def test_auto_fit_on_a_norm_ball_is_certified(uncertainty, strength):
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    params = {"loss": "zero_one", "uncertainty": uncertainty, "strength": strength}
    fit = ag.AdversarialClassifier(solver="auto", **params).fit(X, y)
    expected = auto.auto_solver(fit.game_.game(), fit.uncertainty_, fit.feature_map_, len(y))
    assert fit.solver_ == expected
    # the reference: the compiled program solved by the other backend (cvxpy)
    reference = ag.AdversarialClassifier(solver="compile", backend="cvxpy", **params).fit(X, y)
    assert fit.gap_ <= fit.tol * max(1.0, abs(fit.objective_))
    scale = 1e-6 * max(1.0, abs(reference.objective_))
    assert fit.objective_ >= reference.objective_ - scale
    assert fit.objective_ - fit.gap_ <= reference.objective_ + scale


def test_auto_fit_with_many_rows_per_parameter_runs_certified_lbfgs():
    """Two iris features: 450 game rows over 9 parameters, above AUTO_LBFGS_ROWS_PER_PARAM:
    L-BFGS, certified against the compiled optimum."""
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X[:, :2])
    params = {"loss": "zero_one", "uncertainty": "l1", "strength": 0.01}
    fit = ag.AdversarialClassifier(solver="auto", **params).fit(X, y)
    assert fit.solver_ == "lbfgs" and "game rows per parameter" in fit.solver_reason_
    reference = ag.AdversarialClassifier(solver="compile", **params).fit(X, y)
    assert fit.gap_ <= fit.tol * max(1.0, abs(fit.objective_))
    assert fit.objective_ - fit.gap_ <= reference.objective_ + 1e-6
    assert fit.objective_ >= reference.objective_ - 1e-6
