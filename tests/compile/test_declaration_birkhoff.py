"""The Birkhoff (permutation) family of ``PredictionGame``: declarations, compiled programs, and
the estimator on top, against independent references.

The reference is the same learning problem written as a ``k!``-class game over the simplex
(labels = permutations, loss matrix = the Hamming distances, potentials ``f(π) = <Θ_i, P_π>``),
each sample's game ``max_{q in Δ} min_a (L q)_a + f^T q`` dualised by hand into
``min_{p in Δ} max_m (L^T p)_m + f_m`` and solved directly in cvxpy.
"""

import itertools

import cvxpy as cp
import numpy as np
import pytest
from conftest import assert_raises_naming

import advgame as ag
from advgame.compile import MatchingProgram

BIRKHOFF = ag.polytopes.Birkhoff()
TOLERANCES = dict(tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
#: Absolute agreement of optima (objectives are O(1)): interior-point at 1e-10 tolerances.
ATOL = 1e-6

UNCERTAINTIES = {
    "exact": ag.Exact(),
    "soft": ag.SoftMoments(0.3),
    "l1": ag.NormBall(0.05, 1),
    "linf": ag.NormBall(0.05, np.inf),
    "l2": ag.NormBall(0.1, 2),
}


def _data(n, d, k, seed):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), np.argsort(rng.random((n, k)), axis=1) + 1


def _reference(X, R, uncertainty, sample_weight=None, fit_intercept=True):
    """The learning problem as the k!-class game, solved in cvxpy."""
    n, d = X.shape
    k = R.shape[1]
    perms = list(itertools.permutations(range(k)))  # perms[m][j] = position of item j
    m = len(perms)
    Pm = np.zeros((m, k, k))
    for index, sigma in enumerate(perms):
        Pm[index, np.arange(k), sigma] = 1.0
    L = np.array([[k - np.sum(A * B) for B in Pm] for A in Pm])
    truth = np.array([perms.index(tuple(r - 1)) for r in R])
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
    w = w / w.sum()
    W = cp.Variable((d, k * k))
    b = cp.Variable(k * k) if fit_intercept else np.zeros(k * k)
    scores = X @ W + np.ones((n, 1)) @ cp.reshape(b, (1, k * k), order="C")  # vec(Θ_i) rows
    F = scores @ Pm.reshape(m, k * k).T  # F[i, m] = <Θ_i, P_m>
    u, p = cp.Variable(n), cp.Variable((n, m), nonneg=True)
    observed = cp.hstack([F[i, truth[i]] for i in range(n)])
    regulariser = {
        ag.Exact: lambda: 0,
        ag.SoftMoments: lambda: uncertainty.lam / 2 * cp.sum_squares(W),
    }.get(type(uncertainty))
    if regulariser is None:  # NormBall: the dual norm of W
        dual = {1: cp.max(cp.abs(W)), np.inf: cp.sum(cp.abs(W)), 2: cp.norm(W, "fro")}
        regulariser = lambda: uncertainty.radius * dual[uncertainty.norm]  # noqa: E731
    problem = cp.Problem(
        cp.Minimize(w @ (u - observed) + regulariser()),
        [cp.sum(p, axis=1) == 1, u[:, None] @ np.ones((1, m)) >= p @ L + F],
    )
    problem.solve(solver=cp.CLARABEL, **TOLERANCES)
    assert problem.status == cp.OPTIMAL
    return problem.value


def _solve_all(program):
    """Primal and dual with cvxpy, and with HiGHS for LPs (HiGHS's QP solver stalls on the
    degenerate matching QPs, see ag.AdversarialMatching's backend)."""
    values = {
        "primal cvxpy": program.solve("cvxpy", **TOLERANCES).objective,
        "dual cvxpy": program.dual().solve("cvxpy", **TOLERANCES).value,
    }
    if program.kind == "LP":
        values["primal highs"] = program.solve("highs").objective
        values["dual highs"] = program.dual().solve("highs").value
    return values


@pytest.mark.parametrize("name", list(UNCERTAINTIES))
def test_k3_compiled_optimum_equals_the_permutation_class_game(name):
    X, R = _data(5, 1, 3, seed=1)
    uncertainty = UNCERTAINTIES[name]
    pg = ag.PredictionGame("hamming", uncertainty=uncertainty, polytope=BIRKHOFF)
    program = pg.compile(X, R)
    assert isinstance(program, MatchingProgram)
    assert program.kind == uncertainty.program_kind
    reference = _reference(X, R, uncertainty)
    assert reference > 0.1  # not separable: a non-trivial optimum
    for label, value in _solve_all(program).items():
        assert value == pytest.approx(reference, abs=ATOL), (label, value, reference)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_weights_intercept_and_the_loss_matrix_declaration(fit_intercept):
    X, R = _data(5, 2, 3, seed=2)
    sw = np.array([0.5, 2.0, 1.0, 0.1, 1.5])
    pg = ag.PredictionGame(
        ag.permutation.hamming_loss_matrix(3),
        features=ag.features.Multiclass(fit_intercept=fit_intercept),
        uncertainty=ag.NormBall(0.05, 1),
        polytope=BIRKHOFF,
    )
    program = pg.compile(X, R, sample_weight=sw)
    reference = _reference(X, R, pg.uncertainty, sw, fit_intercept)
    for label, value in _solve_all(program).items():
        assert value == pytest.approx(reference, abs=ATOL), (label, value, reference)
    assert ("b" in program.variables) == fit_intercept


@pytest.mark.parametrize("name", ["exact", "soft"])
def test_k4_compiled_optimum_equals_the_permutation_class_game(name):
    X, R = _data(4, 1, 4, seed=3)
    uncertainty = UNCERTAINTIES[name]
    program = ag.PredictionGame("hamming", uncertainty=uncertainty, polytope=BIRKHOFF).compile(X, R)
    reference = _reference(X, R, uncertainty)
    for label, value in _solve_all(program).items():
        assert value == pytest.approx(reference, abs=ATOL), (label, value, reference)


def test_solution_holds_doubly_stochastic_predictor_and_adversary():
    X, R = _data(5, 2, 3, seed=4)
    pg = ag.PredictionGame("hamming", uncertainty=ag.NormBall(0.05, 1), polytope=BIRKHOFF)
    program = pg.compile(X, R)
    solution = program.solve("highs")
    adversary = program.dual().solve("highs")
    for M in (solution.P, solution.Q, adversary.Q):
        assert M.shape == (5, 3, 3) and M.min() >= 0
        np.testing.assert_allclose(M.sum(axis=1), 1.0, atol=1e-7)
        np.testing.assert_allclose(M.sum(axis=2), 1.0, atol=1e-7)
    assert solution.theta.shape == (2 * 9 + 9,)
    # the surrogate at theta, from PermutationGame: the learning objective
    W, b = solution.theta[:18].reshape(2, 9), solution.theta[18:]
    surrogate = ag.PermutationGame(3).surrogate((X @ W + b).reshape(-1, 3, 3), R)
    recomputed = surrogate.mean() + 0.05 * np.abs(W).max()
    assert solution.objective == pytest.approx(recomputed, abs=ATOL)


def test_printed_programs_and_latex_name_the_declared_pieces():
    X, R = _data(5, 2, 3, seed=5)
    program = ag.PredictionGame("hamming", uncertainty=ag.NormBall(0.25, 1), polytope=BIRKHOFF)
    program = program.compile(X, R)
    primal, dual = str(program.to_cvxpy()), str(program.dual().to_cvxpy())
    assert "kron(X, I_k²)" in primal and "predictor" in primal and len(primal) < 2000
    assert "kron(w^T, I_k²) @ Q" in dual and "moment_gap" in dual
    latex = program.latex()
    for piece in (r"B_{3}", "Hamming", r"\|m(Q)\|_{1} \le 0.25", r"0.25 \|W\|_{\infty}"):
        assert piece in latex, (piece, latex)
    assert (
        r"\frac{0.5}{2}"
        in ag.PredictionGame("hamming", uncertainty=ag.SoftMoments(0.5), polytope=BIRKHOFF).latex()
    )


# ------------------------------------------------------------------------------ estimator
@pytest.mark.parametrize("solver", ["compile", "subgradient"])
def test_estimator_declares_its_game(solver):
    X, R = _data(20, 2, 3, seed=6)
    model = ag.AdversarialMatching(strength=0.1, solver=solver, max_iter=2, random_state=0)
    model.fit(X, R)
    game = model.game_
    assert isinstance(game, ag.PredictionGame) and game.family == "birkhoff"
    assert isinstance(game.uncertainty, ag.SoftMoments) and game.uncertainty.lam == 0.1
    program = game.compile(X, R)
    solution = program.solve("cvxpy")
    if solver == "compile":
        assert solution.objective == pytest.approx(model.objective_, rel=1e-6)
        assert model.program_.describe() == program.describe()
    else:
        assert solution.objective <= model.objective_ + 1e-8
    exact = ag.AdversarialMatching(strength=0.0).fit(X, R)
    assert isinstance(exact.game_.uncertainty, ag.Exact) and exact.program_.kind == "LP"


# --------------------------------------------------------------------------- invalid input
@pytest.mark.parametrize(
    "declare, names",
    [
        (
            lambda: ag.PredictionGame("zero_one", polytope=BIRKHOFF),
            ("polytope", "loss", "Birkhoff", "zero_one", "Valid", "hamming"),
        ),
        (
            lambda: ag.PredictionGame(ag.losses.ordinal(6), polytope=BIRKHOFF),
            ("polytope", "loss", "Birkhoff", "LossMatrix", "hamming_loss_matrix"),
        ),
        (
            lambda: ag.PredictionGame(2 * ag.permutation.hamming_loss_matrix(3), polytope=BIRKHOFF),
            ("polytope", "loss", "Birkhoff", "Valid"),
        ),
        (
            lambda: ag.PredictionGame("hamming"),
            ("loss", "polytope", "'hamming'", "Simplex", "Birkhoff()"),
        ),
        (
            lambda: ag.PredictionGame(ag.permutation.hamming_loss_matrix(6)),
            ("loss", "polytope", "6 items", "Simplex", "Birkhoff()"),
        ),
        (
            lambda: ag.PredictionGame("hamming", features="thresholded", polytope=BIRKHOFF),
            ("features", "polytope", "Thresholded", "Birkhoff", "multiclass"),
        ),
        (
            lambda: ag.PredictionGame(
                "hamming", uncertainty=ag.MomentBalls(0.1), polytope=BIRKHOFF
            ),
            ("uncertainty", "loss", "MomentBalls", "hamming"),
        ),
    ],
    ids=[
        "zero-one",
        "ordinal-matrix",
        "scaled-hamming",
        "hamming-simplex",
        "hamming6-simplex",
        "thresholded",
        "momentballs",
    ],
)
def test_invalid_combinations_name_both_declarations(declare, names):
    assert_raises_naming(declare, names)


def test_small_hamming_matrix_over_the_simplex_is_valid():
    pg = ag.PredictionGame(ag.permutation.hamming_loss_matrix(3))
    assert pg.family == "simplex"


@pytest.mark.parametrize(
    "R, match",
    [
        (np.array([[1, 2, 3]] * 4 + [[1, 1, 3]]), "must be a permutation of 1..3"),
        (np.array([1, 2, 3, 1, 2]), "must be a 2-D array of ranks"),
        (np.array([[1, 2, 3]] * 4), "4 rows but X has 5"),
        (np.array([[1, 2, 3, 4]] * 5), "permutations of 3 items but the rankings order 4"),
    ],
)
def test_invalid_rankings(R, match):
    X, _ = _data(5, 2, 3, seed=7)
    pg = ag.PredictionGame(ag.permutation.hamming_loss_matrix(3), polytope=BIRKHOFF)
    with pytest.raises(ValueError, match=match):
        pg.compile(X, R)


def test_explain_describes_the_birkhoff_game():
    pg = ag.PredictionGame(
        "hamming", uncertainty=ag.SoftMoments(0.1), polytope=ag.polytopes.Birkhoff()
    )
    text = pg.explain()
    assert "doubly stochastic" in text and "k^2 + 2k variables" in text and "program: QP" in text
