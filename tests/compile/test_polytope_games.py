"""Games over polytopes with a bilinear loss (``PredictionGame(Bilinear(...), polytope=P)``):
the compiled programs against independent references.

The reference is the same learning problem as an ordinary multiclass game over the enumerated
vertices ``V`` of the polytope: the loss matrix ``L_joint[a, y] = loss(V[a], V[y])``
(``Bilinear.matrix(V)``), the features ``phi(x, j) = V[j] ⊗ [x; 1]`` (a callable feature map,
so the same ``theta`` coordinates and regulariser), compiled by the simplex family's builder.
The optimum ``theta`` is also checked by evaluating every sample's vertex game
(``ag.Game(L_joint).value``) at its potentials.  Polytopes known only by their oracles are
solved by mirror-prox, whose certified interval must hold the compiled program's optimum.
"""

import itertools

import networkx as nx
import numpy as np
import pytest
import scipy.linalg
from conftest import assert_raises_naming
from hypothesis import given
from hypothesis import strategies as st

import advgame as ag
from advgame.compile import compile_learning
from advgame.compile.polytope import PolytopeProgram
from advgame.exceptions import ConvergenceWarning, NotApplicableError
from advgame.features import CallableFeatures
from advgame.losses import Bilinear
from advgame.polytopes import (
    Knapsack,
    OrderSimplex,
    Permutahedron,
    Polytope,
    Simplex,
    UnitCube,
)
from advgame.solvers.polytope_game import OracleProgram

#: Absolute agreement of optima (objectives are O(1)): HiGHS' LP tolerances, and cvxpy's
#: interior point at its default ones.
ATOL_HIGHS = 1e-7
ATOL_CVXPY = 2e-5

UNCERTAINTIES = {
    "exact": ag.Exact(),
    "l1": ag.NormBall(0.1, 1),
    "linf": ag.NormBall(0.05, np.inf),
    "l2": ag.NormBall(0.2, 2),
    "soft": ag.SoftMoments(0.1),
}


def _user_vertices():
    """A user polytope in R^3 from five vertices (a pyramid over a unit square)."""
    V = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0.5, 0.5, 1.0]])
    return Polytope.from_vertices(V)


def _user_constraints():
    """A user polytope ``{z in [0, 1]^3 : z_1 + z_2 + z_3 <= 2, z_1 >= z_2}``."""
    A_ub = np.vstack([np.eye(3), -np.eye(3), np.ones((1, 3)), [[-1.0, 1.0, 0.0]]])
    b_ub = np.r_[np.ones(3), np.zeros(3), 2.0, 0.0]
    return Polytope.from_constraints(A_ub, b_ub)


def _random_bilinear(d, seed):
    rng = np.random.default_rng(seed)
    return Bilinear(rng.normal(size=(d, d)), rng.normal(size=d), rng.normal(size=d), 2.0)


#: name -> (polytope, loss, dimension of a point)
CASES = {
    "unit cube k=2": (UnitCube(), Bilinear.hamming(2), 2),
    "unit cube k=4": (UnitCube(), Bilinear.hamming(4), 4),
    "knapsack 1..2 of 4": (Knapsack(1, 2), Bilinear.hamming(4), 4),
    "order simplex k=3": (OrderSimplex(), Bilinear.absolute(3), 2),
    "order simplex k=5": (OrderSimplex(), Bilinear.absolute(5), 4),
    "permutahedron k=3": (Permutahedron(np.arange(1.0, 4.0)), Bilinear.spearman(3), 3),
    "permutahedron k=4": (Permutahedron(np.arange(1.0, 5.0)), Bilinear.spearman(4), 4),
    "user from_vertices": (_user_vertices(), _random_bilinear(3, 0), 3),
    "user from_constraints": (_user_constraints(), _random_bilinear(3, 1), 3),
}


def _data(n, d_x, V, seed):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d_x)), rng.integers(0, len(V), n)


def _vertices(polytope, d):
    return polytope.vertices(d).reshape(-1, d)


def _joint_features(V):
    """``phi(X, j) = [X, 1] ⊗ V[j]`` in the coordinates of ``Multiclass`` with one class per
    coordinate (``theta = Theta.ravel()``, ``Theta`` of shape ``(d_x + 1, d)``)."""

    def phi(X, j):
        X1 = np.hstack([X, np.ones((X.shape[0], 1))])
        return np.einsum("na,b->nab", X1, V[j]).reshape(X.shape[0], -1)

    return phi


def _brute_force(loss, V, X, index, uncertainty, sample_weight=None):
    """The learning problem as the ``len(V)``-label game over the vertices (simplex family)."""
    fmap = CallableFeatures(_joint_features(V)).fit(X, len(V))
    return compile_learning(loss.matrix(V), fmap, uncertainty, X, index, sample_weight)


@pytest.mark.filterwarnings("ignore:cvxpy reports 'optimal_inaccurate'")
@pytest.mark.parametrize("uncertainty", ["exact", "l1", "l2"])
@pytest.mark.parametrize("case", list(CASES))
def test_against_the_game_over_the_vertices(case, uncertainty):
    polytope, loss, d = CASES[case]
    V = _vertices(polytope, d)
    X, index = _data(8, 2, V, seed=len(case))
    U = UNCERTAINTIES[uncertainty]
    program = ag.PredictionGame(loss, uncertainty=U, polytope=polytope).compile(X, V[index])
    assert isinstance(program, PolytopeProgram)
    reference = _brute_force(loss, V, X, index, U).solve().objective
    primal = program.solve()
    dual = program.dual().solve()
    atol = ATOL_HIGHS if program.kind == "LP" else ATOL_CVXPY
    assert primal.objective == pytest.approx(reference, abs=atol)
    assert dual.value == pytest.approx(reference, abs=atol)
    if program.kind == "LP":
        assert program.solve("cvxpy").objective == pytest.approx(reference, abs=ATOL_CVXPY)
        assert program.dual().solve("cvxpy").value == pytest.approx(reference, abs=ATOL_CVXPY)


@pytest.mark.parametrize("case", list(CASES))
def test_the_optimum_theta_prices_every_vertex_game(case):
    """Exact moments: the objective is the weighted sum of the vertex games' surrogates at the
    potentials ``F = [X, 1] Theta V^T`` of the optimum ``theta``, and both sides' points lie in
    the polytope."""
    polytope, loss, d = CASES[case]
    V = _vertices(polytope, d)
    X, index = _data(7, 2, V, seed=3)
    weights = np.random.default_rng(4).uniform(0.5, 2.0, size=7)
    program = ag.PredictionGame(loss, polytope=polytope).compile(X, V[index], weights)
    solution = program.solve()
    Theta = solution.theta.reshape(X.shape[1] + 1, d)
    F = np.hstack([X, np.ones((7, 1))]) @ Theta @ V.T
    L = loss.matrix(V)
    game = ag.Game(L - L.min())  # a constant shift keeps the loss matrix non-negative
    surrogate = game.value(F, method="lp") + L.min() - F[np.arange(7), index]
    w = weights / weights.sum()
    assert solution.objective == pytest.approx(w @ surrogate, abs=ATOL_HIGHS)
    dual = program.dual().solve()
    shape = (7, *polytope.vertices(d).shape[1:])
    for Q in (solution.P, solution.Q, dual.Q):
        assert np.all(polytope.contains(Q.reshape(shape), atol=1e-6))


@pytest.mark.parametrize("uncertainty", list(UNCERTAINTIES))
def test_zero_one_over_the_simplex_is_the_zero_one_game(uncertainty):
    """``Bilinear(-I, c=1)`` over the simplex is the zero-one loss: the same optimum as the
    simplex family's ``'zero_one'`` declaration, both sides."""
    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(10, 3)), rng.integers(0, 3, 10)
    U = UNCERTAINTIES[uncertainty]
    game = ag.PredictionGame(Bilinear(-np.eye(3), c=1.0), uncertainty=U, polytope=Simplex())
    program = game.compile(X, np.eye(3)[y])
    reference = ag.PredictionGame("zero_one", uncertainty=U).compile(X, y).solve().objective
    atol = ATOL_HIGHS if program.kind == "LP" else ATOL_CVXPY
    assert program.solve().objective == pytest.approx(reference, abs=atol)
    assert program.dual().solve().value == pytest.approx(reference, abs=atol)


def test_birkhoff_hamming_is_the_matching_game():
    """The permutation Hamming loss as a bilinear loss over the Birkhoff polytope (rankings
    converted to row-major permutation matrices) is the Birkhoff family's game."""
    rng = np.random.default_rng(6)
    X, R = rng.normal(size=(6, 2)), np.argsort(rng.random((6, 3)), axis=1) + 1
    birkhoff = ag.polytopes.Birkhoff()
    program = ag.PredictionGame(Bilinear.permutation_hamming(3), polytope=birkhoff).compile(X, R)
    reference = ag.PredictionGame("hamming", polytope=birkhoff).compile(X, R).solve().objective
    assert program.solve().objective == pytest.approx(reference, abs=ATOL_HIGHS)
    assert program.dual().solve().value == pytest.approx(reference, abs=ATOL_HIGHS)


@pytest.mark.parametrize("uncertainty", ["exact", "linf"])
def test_a_tree_marginal_polytope_against_its_joint_labelings(uncertainty):
    """Node labels on a 3-node path as node and edge indicators: the node-additive zero-one
    loss (zero on the edge coordinates) over the marginal polytope is the game over the ``2^3``
    joint labelings."""
    graph = nx.Graph([(0, 1), (1, 2)])
    k, N, E = 2, 3, 2
    node = Bilinear.node_additive(1.0 - np.eye(k), N)
    loss = Bilinear(scipy.linalg.block_diag(node.M, np.zeros((E * k * k, E * k * k))))
    labelings = np.array(list(itertools.product(range(k), repeat=N)))
    V = np.zeros((len(labelings), N * k + E * k * k))
    for row, labels in enumerate(labelings):  # the indicators written out by hand
        V[row, np.arange(N) * k + labels] = 1.0
        for e, (a, b) in enumerate(graph.edges()):
            V[row, N * k + e * k * k + labels[a] * k + labels[b]] = 1.0
    X, index = _data(20, 1, V, seed=9)
    U = UNCERTAINTIES[uncertainty]
    game = ag.PredictionGame(loss, uncertainty=U, polytope=ag.polytopes.Marginal(graph))
    program = game.compile(X, labelings[index])
    reference = _brute_force(loss, V, X, index, U).solve().objective
    assert program.solve().objective == pytest.approx(reference, abs=ATOL_HIGHS)
    assert program.dual().solve().value == pytest.approx(reference, abs=ATOL_HIGHS)
    assert game.compile(X, V[index]).solve().objective == pytest.approx(reference, abs=ATOL_HIGHS)


def test_ordinal_labels_and_cumulative_vectors_are_the_same_outputs():
    rng = np.random.default_rng(7)
    X, y = rng.normal(size=(9, 2)), rng.integers(1, 6, 9)
    game = ag.PredictionGame(Bilinear.absolute(5), polytope=OrderSimplex())
    cumulative = (np.arange(4)[None, :] < y[:, None] - 1).astype(float)
    by_label = game.compile(X, y).solve().objective
    assert game.compile(X, cumulative).solve().objective == pytest.approx(by_label, abs=1e-10)


@given(
    d=st.integers(2, 3),
    n=st.integers(3, 7),
    seed=st.integers(0, 2**16),
    radius=st.sampled_from([0.0, 0.05, 0.3]),
)
def test_primal_equals_dual_for_random_bilinear_losses_on_the_cube(d, n, seed, radius):
    """Any bilinear loss (negative entries included) on the unit cube: primal = dual = the
    vertex game, with an l1 ball of any radius."""
    loss = _random_bilinear(d, seed)
    V = _vertices(UnitCube(), d)
    X, index = _data(n, 2, V, seed)
    U = ag.NormBall(radius, 1)
    program = ag.PredictionGame(loss, uncertainty=U, polytope=UnitCube()).compile(X, V[index])
    primal = program.solve().objective
    scale = 1.0 + abs(primal)
    assert program.dual().solve().value == pytest.approx(primal, abs=ATOL_HIGHS * scale)
    reference = _brute_force(loss, V, X, index, U).solve().objective
    assert reference == pytest.approx(primal, abs=ATOL_HIGHS * scale)


def test_blocks_latex_and_explanation_name_the_pieces():
    game = ag.PredictionGame(
        Bilinear.spearman(3), uncertainty=ag.NormBall(0.1, 1), polytope=Permutahedron([1, 2, 3])
    )
    X = np.random.default_rng(8).normal(size=(5, 2))
    R = np.array([[1, 2, 3], [3, 1, 2], [2, 3, 1], [1, 3, 2], [3, 2, 1]])
    program = game.compile(X, R)
    assert {"theta", "nu", "nu_aux", "lam", "eta"} <= set(program.variables)
    assert {"game", "game aux", "polytope", "polytope eq"} <= set(program.constraints)
    dual = program.dual()
    assert {"mu", "mu_aux", "alpha", "beta"} <= set(dual.variables)
    assert {"game", "polytope", "moments"} <= set(dual.constraints)
    problem = program.to_cvxpy()
    assert "nu" in problem.var_dict and "game" in problem.constraint_groups
    latex = program.latex()
    assert r"\nu_i \in \mathcal P" in latex and r"\|m(\mu)\|_{1} \le 0.1" in latex
    assert latex == game.latex()
    text = game.explain()
    assert "bilinear" in text and "auxiliary variables" in text and "LP" in text
    assert game.family == "polytope"


def test_outputs_must_be_vertices():
    X = np.zeros((3, 2))
    cube = ag.PredictionGame(Bilinear.hamming(3), polytope=UnitCube())
    assert_raises_naming(
        lambda: cube.compile(X, [[0, 1, 0], [0.5, 0, 1], [1, 1, 1]]), ["vertex", "row 1"]
    )
    assert_raises_naming(lambda: cube.compile(X, np.zeros((3, 2))), ["3 coordinates"])
    ordinal = ag.PredictionGame(Bilinear.absolute(4), polytope=OrderSimplex())
    assert_raises_naming(lambda: ordinal.compile(X, [1, 2, 5]), ["ordinal labels 1..4"])
    # a vector of the order simplex that is not cumulative (0, 1, 0) is no vertex
    assert_raises_naming(
        lambda: ordinal.compile(X, [[1, 0, 0], [0, 1, 0], [0, 0, 0]]), ["vertex", "row 1"]
    )
    ranking = ag.PredictionGame(Bilinear.spearman(3), polytope=Permutahedron([1, 2, 3]))
    assert_raises_naming(
        lambda: ranking.compile(X, [[1, 2, 3], [1, 1, 3], [3, 2, 1]]), ["vertex", "row 1"]
    )


def test_declarations_that_do_not_fit():
    with pytest.raises(ValueError, match="features"):
        ag.PredictionGame(Bilinear.hamming(3), features="thresholded", polytope=UnitCube())
    with pytest.raises(ValueError, match="MomentBalls"):
        ag.PredictionGame(Bilinear.hamming(3), uncertainty=ag.MomentBalls(0.1), polytope=UnitCube())
    with pytest.raises(ValueError, match="3 x 3"):
        ag.PredictionGame(Bilinear.spearman(3), polytope=Permutahedron([1, 2, 3, 4]))


# ------------------------------------------------ polytopes known only by their oracles
class OracleCube(UnitCube):
    """The unit cube without its linear description: projection and linear maximisation only."""

    def _constraints(self, dim):
        raise NotApplicableError("no linear description")


class OraclePermutahedron(Permutahedron):
    def _constraints(self, dim):
        raise NotApplicableError("no linear description")


ORACLE_CASES = {
    "cube": (OracleCube(), UnitCube(), Bilinear.hamming(3), 3),
    "permutahedron": (
        OraclePermutahedron([1.0, 2.0, 3.0]),
        Permutahedron([1.0, 2.0, 3.0]),
        Bilinear.spearman(3),
        3,
    ),
}


@pytest.mark.parametrize("uncertainty", ["soft", "l1", "l2"])
@pytest.mark.parametrize("case", list(ORACLE_CASES))
def test_mirror_prox_certifies_the_compiled_optimum(case, uncertainty):
    """Without ``constraints()``, ``compile(X, Y).solve()`` runs mirror-prox; its certified
    interval ``[lower_bound, objective]`` holds the compiled program's optimum (over the same
    polytope with its description) and is at most ``tol`` wide (relative)."""
    oracle, described, loss, d = ORACLE_CASES[case]
    V = _vertices(described, d)
    X, index = _data(10, 2, V, seed=11)
    U = UNCERTAINTIES[uncertainty]
    optimum = (
        ag.PredictionGame(loss, uncertainty=U, polytope=described).compile(X, V[index]).solve()
    ).objective
    program = ag.PredictionGame(loss, uncertainty=U, polytope=oracle).compile(X, V[index])
    assert isinstance(program, OracleProgram)
    solution = program.solve(tol=1e-3)
    assert solution.converged
    assert solution.lower_bound - 1e-9 <= optimum <= solution.objective + 1e-9
    assert solution.gap <= 1e-3 * max(1.0, abs(solution.objective))
    shape = (10, *described.vertices(d).shape[1:])
    for points in (solution.P, solution.Q):
        assert np.all(described.contains(points.reshape(shape), atol=1e-6))


def test_mirror_prox_reports_an_open_gap_and_has_no_compiled_programs():
    V = _vertices(UnitCube(), 3)
    X, index = _data(8, 2, V, seed=12)
    game = ag.PredictionGame(Bilinear.hamming(3), polytope=OracleCube())
    optimum = ag.PredictionGame(Bilinear.hamming(3), polytope=UnitCube()).compile(X, V[index])
    program = game.compile(X, V[index])
    with pytest.warns(ConvergenceWarning, match="exact moment matching"):
        solution = program.solve(max_iter=200)
    assert solution.lower_bound - 1e-9 <= optimum.solve().objective <= solution.objective + 1e-9
    for method in (program.dual, program.to_cvxpy):
        assert_raises_naming(method, ["no linear description"], NotApplicableError)
    assert "mirror-prox" in game.explain()
