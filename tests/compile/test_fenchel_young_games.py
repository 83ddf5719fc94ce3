"""The Brier entropy's game over a polytope (``PredictionGame(ag.losses.brier(d), polytope=P)``):
the compiled QP against independent references.

References: (1) the polytope's own Euclidean projection (``P.project``), which is the
adversary's best point ``mu* = project(g / 2)`` and gives the objective in closed form,
``sum_i w_i (1 - ||y_i||^2 + 2 L(g_i / 2; y_i)) + R(Theta)`` with the Fenchel-Young loss ``L``
of :class:`advgame.polytopes.FenchelYoungLoss`, and its gradient ``sum_i w_i [x_i; 1] (mu*_i -
y_i)^T + lam Theta``, zero at the optimum; (2) the projection estimators' L-BFGS objective
(``ProjectionClassifier``, ``LabelRanker``), which the compiled optimum equals after the
correspondence of :mod:`advgame.compile.fenchel_young`.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import advgame as ag
from advgame.compile.fenchel_young import FenchelYoungProgram
from advgame.exceptions import NotApplicableError
from advgame.polytopes import (
    FenchelYoungLoss,
    OrderSimplex,
    Permutahedron,
    Simplex,
    UnitCube,
)

#: Agreement of optima (objectives are O(1)): HiGHS' QP and cvxpy's interior point.
ATOL = 1e-6
#: The ``theta``-gradient at the compiled optimum (solver tolerances).
GRADIENT_ATOL = 1e-4
LAM = 0.1


def _data(polytope, n, seed, d=3, dx=2):
    """Inputs, outputs as embeddings (vertices of ``polytope``) and sample weights."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, dx))
    if isinstance(polytope, Simplex):
        Y = np.eye(d)[rng.integers(0, d, n)]
    elif isinstance(polytope, UnitCube):
        Y = (rng.random((n, d)) < 0.5).astype(float)
    elif isinstance(polytope, OrderSimplex):
        Y = (np.arange(d)[None, :] < rng.integers(0, d + 1, n)[:, None]).astype(float)
    else:
        Y = np.array([rng.permutation(polytope.w) for _ in range(n)])
    return X, Y, rng.uniform(0.5, 2.0, n)


def _reference(polytope, X, Y, w, Theta, lam):
    """The learning objective and its Theta-gradient from the polytope's projection alone."""
    X1 = np.hstack([X, np.ones((X.shape[0], 1))])
    G = X1 @ Theta
    w = w / w.sum()
    loss = FenchelYoungLoss(polytope, "euclidean")
    value, _ = loss._evaluate(G / 2, Y)
    objective = w @ (1 - np.sum(Y * Y, axis=1) + 2 * value) + 0.5 * lam * np.sum(Theta**2)
    mu = polytope.project(G / 2, "euclidean")
    gradient = X1.T @ (w[:, None] * (mu - Y)) + lam * Theta
    return objective, gradient, mu


POLYTOPES = [Simplex(), UnitCube(), OrderSimplex(), Permutahedron([1.0, 2.0, 3.0])]


@pytest.mark.parametrize("polytope", POLYTOPES, ids=repr)
def test_compiled_qp_is_the_projection_loss(polytope):
    X, Y, w = _data(polytope, 10, 0)
    game = ag.PredictionGame(ag.losses.brier(3), uncertainty=ag.SoftMoments(LAM), polytope=polytope)
    assert game.family == "fenchel-young"
    program = game.compile(X, Y, sample_weight=w)
    assert isinstance(program, FenchelYoungProgram) and program.program.kind == "QP"
    assert {"theta", "s", "constant"} <= set(program.program.variables)
    highs = program.solve(backend="highs")
    cvx = program.solve(backend="cvxpy")
    dual = program.dual().solve(backend="cvxpy")
    assert highs.objective == pytest.approx(cvx.objective, abs=ATOL)
    assert dual.value == pytest.approx(highs.objective, abs=ATOL)
    Theta = highs.theta.reshape(X.shape[1] + 1, 3)
    objective, gradient, mu = _reference(polytope, X, Y, w, Theta, LAM)
    assert highs.objective == pytest.approx(objective, abs=ATOL)
    np.testing.assert_allclose(gradient, 0.0, atol=GRADIENT_ATOL)
    for points in (highs.P, highs.Q, dual.Q):
        np.testing.assert_allclose(points, mu, atol=1e-4)


def test_exact_moments_fit_the_training_moments():
    """Without a regulariser the optimum matches the empirical moments: sum_i w_i (mu*_i - y_i)
    ⊗ [x_i; 1] = 0 (the dual's moment constraint), read from the dual's points."""
    polytope = UnitCube()
    X, Y, w = _data(polytope, 12, 1)
    program = ag.PredictionGame(ag.losses.brier(3), polytope=polytope).compile(X, Y, w)
    solution = program.dual().solve(backend="cvxpy")
    X1 = np.hstack([X, np.ones((X.shape[0], 1))])
    gap = X1.T @ ((w / w.sum())[:, None] * (solution.Q - Y))
    np.testing.assert_allclose(gap, 0.0, atol=1e-5)
    assert program.solve(backend="highs").objective == pytest.approx(solution.value, abs=ATOL)


@given(seed=st.integers(0, 2**16), lam=st.floats(0.01, 2.0))
def test_unit_cube_qp_against_projection_property(seed, lam):
    polytope = UnitCube()
    X, Y, w = _data(polytope, 6, seed)
    game = ag.PredictionGame(ag.losses.brier(3), uncertainty=ag.SoftMoments(lam), polytope=polytope)
    solution = game.compile(X, Y, w).solve(backend="highs")
    Theta = solution.theta.reshape(X.shape[1] + 1, 3)
    objective, gradient, _ = _reference(polytope, X, Y, w, Theta, lam)
    assert solution.objective == pytest.approx(objective, abs=ATOL)
    np.testing.assert_allclose(gradient, 0.0, atol=GRADIENT_ATOL)


# ------------------------------------------------------------ the projection estimators
def _estimators(rng, n):
    y = rng.integers(0, 3, n)
    multilabel = (rng.random((n, 3)) < 0.5).astype(np.int64)
    ranks = np.array([rng.permutation(3) + 1 for _ in range(n)])
    options = {"fit_intercept": False, "alpha": 0.1, "tol": 1e-10}
    return [
        (ag.ProjectionClassifier(**options), y),
        (ag.ProjectionClassifier(polytope="unit_cube", **options), y),
        (ag.ProjectionClassifier(loss="hamming", polytope="unit_cube", **options), multilabel),
        (ag.ProjectionClassifier(loss="absolute", **options), y),
        (ag.LabelRanker(polytope="permutahedron", **options), ranks),
        (ag.LabelRanker(**options), ranks),
        (ag.ProjectionClassifier(loss="absolute", **options), y % 2),  # one coordinate
    ]


@pytest.mark.parametrize("case", range(7))
def test_estimator_objective_equals_its_compiled_game(case):
    rng = np.random.default_rng(case)
    n = 12
    X = rng.normal(size=(n, 2))
    estimator, y = _estimators(rng, n)[case]
    estimator.fit(X, y)
    game = estimator.game_
    assert game.family == "fenchel-young" and game.polytope is estimator.projection_set_
    targets = estimator.decomposition_.phi(y).reshape(n, -1)
    solution = game.compile(X, targets).solve(backend="highs")
    constant = np.mean(1.0 - np.sum(targets**2, axis=1))
    assert solution.objective == pytest.approx(constant + 2 * estimator.objective_, abs=ATOL)
    np.testing.assert_allclose(
        solution.theta.reshape(2, -1),
        2 * estimator.coef_,
        atol=1e-3 * max(1, abs(estimator.coef_).max()),
    )


def test_estimator_games_kl_and_kernel():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(9, 2)), np.arange(9) % 3
    kl = ag.ProjectionClassifier(geometry="kl", alpha=0.2).fit(X, y)
    assert kl.game_.loss == ag.losses.log(3) and kl.game_.uncertainty.lam == 0.2
    with pytest.raises(NotApplicableError, match="exponential cone"):
        kl.game_.compile(X, np.eye(3)[y])
    assert ag.ProjectionClassifier(kernel="rbf").fit(X, y).game_ is None
    exact = ag.ProjectionClassifier(alpha=0.0, max_iter=5)
    with pytest.warns(ag.exceptions.ConvergenceWarning):
        exact.fit(X, y)
    assert isinstance(exact.game_.uncertainty, ag.Exact)


def test_declarations_that_do_not_fit():
    with pytest.raises(ValueError, match="loss.*polytope.*coordinates"):
        ag.PredictionGame(ag.losses.brier(4), polytope=Permutahedron([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="features"):
        ag.PredictionGame(ag.losses.brier(3), features="thresholded", polytope=UnitCube())
    with pytest.raises(ValueError, match="class labels"):
        ag.PredictionGame(ag.losses.brier(3)).compile(np.zeros((2, 1)), [0, 3])


def test_explain_and_latex_name_the_program():
    game = ag.PredictionGame(
        ag.losses.brier(3), uncertainty=ag.SoftMoments(LAM), polytope=OrderSimplex()
    )
    text = game.explain()
    for word in ("Fenchel-Young", "program: QP", "project(g / 2)", "Blondel"):
        assert word in text, (word, text)
    assert r"\tfrac14\|s_i\|^2" in game.latex()
