"""The Brier and Shannon entropies' games over a polytope (``PredictionGame(ag.losses.brier(d), polytope=P)``):
the compiled QP against independent references.

References: (1) the polytope's own Euclidean projection (``P.project``), which is the
adversary's best point ``mu* = project(g / 2)`` and gives the objective in closed form,
``sum_i w_i (1 - ||y_i||^2 + 2 L(g_i / 2; y_i)) + R(Theta)`` with the Fenchel-Young loss ``L``
of :class:`advgame.polytopes.FenchelYoungLoss`, and its gradient ``sum_i w_i [x_i; 1] (mu*_i -
y_i)^T + lam Theta``, zero at the optimum; (2) the projection estimators' L-BFGS objective
(``ProjectionClassifier``, ``LabelRanker``), which the compiled optimum equals after the
correspondence of :mod:`advgame.compile.fenchel_young`.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import minimize
from scipy.special import logsumexp, softmax, xlogy
from sklearn.metrics.pairwise import pairwise_kernels

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
from advgame.solvers.projection import fit_fenchel_young

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
def _estimators(rng, n, **options):
    y = rng.integers(0, 3, n)
    multilabel = (rng.random((n, 3)) < 0.5).astype(np.int64)
    ranks = np.array([rng.permutation(3) + 1 for _ in range(n)])
    options = {"strength": 0.1, "tol": 1e-10, **options}
    return [
        (ag.ProjectionClassifier(**options), y),
        (ag.ProjectionClassifier(polytope="unit_cube", **options), y),
        (ag.ProjectionClassifier(loss="hamming", polytope="unit_cube", **options), multilabel),
        (ag.ProjectionClassifier(loss="absolute", **options), y),
        (ag.LabelRanker(polytope="permutahedron", **options), ranks),
        (ag.LabelRanker(**options), ranks),
        (ag.ProjectionClassifier(loss="absolute", **options), y % 2),  # one coordinate
    ]


def _compiled_optimum(estimator, X, targets):
    """The estimator's objective mapped to its declared game's units (the correspondence of
    :mod:`advgame.compile.fenchel_young`) and the game's ``theta``."""
    if estimator.geometry == "euclidean":
        constant, scale = np.mean(1.0 - np.sum(targets**2, axis=1)), 2.0
        value = constant + 2 * estimator.objective_
    else:
        value, scale = estimator.objective_ - np.mean(xlogy(targets, targets).sum(axis=1)), 1.0
    rows = [estimator.coef_] + ([estimator.intercept_[None, :]] if estimator.fit_intercept else [])
    return value, scale * np.vstack(rows)


@pytest.mark.filterwarnings("ignore::advgame.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("geometry", ["euclidean", "kl"])
@pytest.mark.parametrize("case", range(7))
def test_estimator_objective_equals_its_compiled_game(case, geometry, fit_intercept):
    """Every projection estimator's objective is its declared game's exact optimum (a QP for
    Euclidean, an exponential-cone program for KL), the bias unpenalised in both."""
    rng = np.random.default_rng(case)
    n = 12
    X = rng.normal(size=(n, 2))
    estimator, y = _estimators(rng, n, geometry=geometry, fit_intercept=fit_intercept)[case]
    estimator.fit(X, y)
    game = estimator.game_
    assert game.family == "fenchel-young" and game.polytope is estimator.projection_set_
    targets = estimator.decomposition_.phi(y).reshape(n, -1).astype(float)
    solution = game.compile(X, targets).solve()
    value, theta = _compiled_optimum(estimator, X, targets)
    assert solution.objective == pytest.approx(value, abs=ATOL)
    # the penalised rows are unique (a free bias is not on the simplex: shifts leave it)
    np.testing.assert_allclose(
        solution.theta.reshape(theta.shape)[:2], theta[:2], atol=1e-3 * max(1, abs(theta).max())
    )
    # the certificate bounds the distance to the compiled optimum (in the estimator's units)
    scale = 2.0 if geometry == "euclidean" else 1.0
    assert estimator.gap_ >= (value - solution.objective) / scale - ATOL


def test_kernel_estimator_objective_equals_its_compiled_game():
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(10, 2)), np.arange(10) % 3
    for geometry in ("euclidean", "kl"):
        model = ag.ProjectionClassifier(kernel="rbf", geometry=geometry, strength=0.2, tol=1e-10)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ag.exceptions.ConvergenceWarning)
            model.fit(X, y)
        assert isinstance(model.game_.features, ag.features.KernelFeatures)
        targets = np.eye(3)[y]
        value, _ = _compiled_optimum(model, X, targets)
        assert model.game_.compile(X, y).solve().objective == pytest.approx(value, abs=ATOL)


def test_fit_through_the_declaration_leaves_results_unchanged():
    """The estimator's one path (declare, then solve the declared problem) gives what L-BFGS on
    the estimator's own objective gives (:func:`fit_fenchel_young`, the path before)."""
    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(30, 4)), rng.integers(0, 3, 30)
    for options in ({}, {"geometry": "kl"}, {"fit_intercept": False}, {"kernel": "poly"}):
        model = ag.ProjectionClassifier(strength=0.05, **options).fit(X, y)
        design = X
        if "kernel" in options:
            design = pairwise_kernels(X, X, metric="poly", gamma=1 / 4, degree=3, coef0=1)
        before = fit_fenchel_young(
            design,
            np.eye(3)[y],
            np.ones(30),
            model.projection_set_,
            model.geometry,
            0.05,
            fit_intercept=model.fit_intercept,
            kernel="kernel" in options,
        )
        assert model.objective_ == pytest.approx(before.objective, rel=1e-9)
        np.testing.assert_allclose(model.coef_, before.coef, atol=1e-6)
        np.testing.assert_allclose(model.intercept_, before.intercept, atol=1e-6)


def test_default_fit_is_certified():
    """The free bias's certificate (the mixture dual point) makes the default fit certified,
    and ``gap_`` bounds the distance to the exact optimum."""
    rng = np.random.default_rng(7)
    X, y = rng.normal(size=(40, 3)), rng.integers(0, 3, 40)
    for geometry in ("euclidean", "kl"):
        model = ag.ProjectionClassifier(geometry=geometry).fit(X, y)
        assert model.converged_ == "certified" and 0 <= model.gap_ <= 1e-6
        value, _ = _compiled_optimum(model, X, np.eye(3)[y])
        optimum = model.game_.compile(X, y).solve().objective
        scale = 2.0 if geometry == "euclidean" else 1.0
        assert (value - optimum) / scale <= model.gap_ + 1e-7


def test_alpha_is_a_deprecated_name_of_strength():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(12, 2)), np.arange(12) % 3
    with pytest.warns(FutureWarning, match="'alpha' was renamed 'strength'"):
        old = ag.ProjectionClassifier(alpha=0.3).fit(X, y)
    new = ag.ProjectionClassifier(strength=0.3).fit(X, y)
    np.testing.assert_allclose(old.coef_, new.coef_)
    assert old.strength_ == new.strength_ == 0.3


def test_estimator_games_declare_the_estimators_parameters():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(9, 2)), np.arange(9) % 3
    kl = ag.ProjectionClassifier(geometry="kl", strength=0.2).fit(X, y)
    assert kl.game_.loss == ag.losses.log(3) and kl.game_.uncertainty.lam == 0.2
    assert kl.game_.compile(X, np.eye(3)[y]).kind == "EXP"
    assert not kl.game_.features.penalize_intercept
    exact = ag.ProjectionClassifier(strength=0.0, max_iter=5)
    with pytest.warns(ag.exceptions.ConvergenceWarning):
        exact.fit(X, y)
    assert isinstance(exact.game_.uncertainty, ag.Exact)
    assert exact.gap_ == np.inf and exact.converged_ == "uncertified"


# ------------------------------------------------------------ the Shannon entropy's game
@pytest.mark.parametrize("uncertainty", [ag.SoftMoments(0.3), ag.NormBall(0.1, norm=2)], ids=repr)
def test_shannon_game_on_the_simplex_is_logistic_regression(uncertainty):
    """``F(g) = log sum_j exp(g_j)``: the compiled exponential-cone program's optimum is the
    regularised multinomial logistic loss, minimised here by scipy (an independent path)."""
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(12, 2)), rng.integers(0, 3, 12)
    game = ag.PredictionGame(ag.losses.log(3), uncertainty=uncertainty, polytope=Simplex())
    program = game.compile(X, y)
    assert program.kind == "EXP"
    primal, dual = program.solve(), program.dual().solve()
    assert dual.value == pytest.approx(primal.objective, abs=ATOL)
    X1 = np.hstack([X, np.ones((12, 1))])

    def objective(theta):
        G = X1 @ theta.reshape(3, 3)
        risk = np.mean(logsumexp(G, axis=1) - G[np.arange(12), y])
        if isinstance(uncertainty, ag.SoftMoments):
            return risk + 0.5 * uncertainty.lam * theta @ theta
        return risk + uncertainty.radius * np.linalg.norm(theta)

    reference = minimize(objective, np.zeros(9), method="BFGS")
    assert primal.objective == pytest.approx(reference.fun, abs=1e-5)
    np.testing.assert_allclose(
        primal.P, softmax(X1 @ primal.theta.reshape(3, 3), axis=1), atol=1e-4
    )


@given(seed=st.integers(0, 2**16), lam=st.floats(0.05, 2.0))
def test_shannon_unit_cube_game_against_its_separable_conjugate(seed, lam):
    """On the unit cube the conjugate separates: ``max_{m in [0, 1]} g m - m log m`` is
    ``exp(g - 1)`` below ``g = 1`` and ``g`` above; the compiled optimum equals this objective
    minimised by L-BFGS."""
    polytope = UnitCube()
    X, Y, w = _data(polytope, 6, seed)
    game = ag.PredictionGame(ag.losses.log(3), uncertainty=ag.SoftMoments(lam), polytope=polytope)
    solution = game.compile(X, Y, w).solve()
    X1 = np.hstack([X, np.ones((6, 1))])
    weights = w / w.sum()

    def objective(theta):
        G = X1 @ theta.reshape(3, 3)
        conjugate = np.where(G < 1, np.exp(np.minimum(G, 1) - 1), G)
        return weights @ (conjugate - G * Y).sum(axis=1) + 0.5 * lam * theta @ theta

    reference = minimize(objective, np.zeros(9), method="BFGS", options={"gtol": 1e-10})
    assert solution.objective == pytest.approx(reference.fun, abs=1e-6)


def test_highs_refuses_an_exponential_cone_program():
    game = ag.PredictionGame(ag.losses.log(3), uncertainty=ag.SoftMoments(0.3), polytope=UnitCube())
    program = game.compile(np.zeros((2, 1)), np.array([[0, 1, 0], [1, 1, 0]]))
    with pytest.raises(NotApplicableError, match="exponential-cone terms.*backend='cvxpy'"):
        program.solve(backend="highs")


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


def test_shannon_game_explains_and_prints_its_program():
    game = ag.PredictionGame(ag.losses.log(3), uncertainty=ag.SoftMoments(LAM), polytope=UnitCube())
    text = game.explain()
    for word in ("program: EXP", "exp(r_ij)", "project(g_i, 'kl')", "Blondel"):
        assert word in text, (word, text)
    assert r"\sum_j e^{r_{ij}}" in game.latex()
    problem = game.compile(np.zeros((2, 1)), np.array([[0, 1, 0], [1, 1, 0]])).to_cvxpy()
    assert "exp(r)" in str(problem)
    model = ag.ProjectionClassifier(fit_intercept=True).fit(np.eye(3), [0, 1, 2])
    assert "penalize_intercept=False" in repr(model.game_)
