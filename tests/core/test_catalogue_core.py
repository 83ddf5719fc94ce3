"""Bad-input catalogue of the core (non-estimator) public API and the CLI ([reliability] item 1).

Each case is one row of a table: the call, the exception type and a ``match`` on the message that
names the argument.  Cases already covered by the modules' own tests (``test_game.py``,
``test_losses.py``, ...) are not repeated; the ids are what the reliability note counts.
"""

import re
import time

import networkx as nx
import numpy as np
import pytest

import advgame as ag
from advgame import decoding, inference, metrics, permutation, uncertainty, verify, vertices
from advgame import polytopes as pt
from advgame.cli import main
from advgame.exceptions import NotApplicableError, SizeLimitError
from advgame.graph import brute_force_game

NAN, INF = np.nan, np.inf


def case(id_, call, exc, match):
    return pytest.param(call, exc, match, id=id_)


def check(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# --------------------------------------------------------------------- LossMatrix and losses
LOSS_CASES = [
    case("complex", lambda: ag.LossMatrix([[0, 1j], [1, 0]]), ValueError, r"matrix must be a real"),
    case("none", lambda: ag.LossMatrix(None), ValueError, r"matrix must be 2-D"),
    case(
        "empty", lambda: ag.LossMatrix(np.zeros((0, 0))), ValueError, r"matrix must have at least 2"
    ),
    case(
        "object", lambda: ag.LossMatrix([[0, {}], [1, 0]]), ValueError, r"matrix must be a numeric"
    ),
    case(
        "names-actions",
        lambda: ag.LossMatrix(np.eye(2), actions=["a"]),
        ValueError,
        r"actions must have 2",
    ),
    case("zero_one-k-huge", lambda: ag.losses.zero_one(10**6), SizeLimitError, r"MAX_LABELS=4,096"),
    case("ordinal-k-float", lambda: ag.losses.ordinal(3.0), ValueError, r"k \(number of labels\)"),
    case("squared-k-str", lambda: ag.losses.squared("3"), ValueError, r"k \(number of labels\)"),
    case("abstain-k-huge", lambda: ag.losses.abstain(5000), SizeLimitError, r"MAX_LABELS"),
    case("weight-nan", lambda: ag.losses.zero_one(3, weight=NAN), ValueError, r"weight must be"),
    case(
        "weight-zero", lambda: ag.losses.squared(3, weight=0.0), ValueError, r"weight must be .*> 0"
    ),
    case("weight-bool", lambda: ag.losses.ordinal(3, weight=True), ValueError, r"weight must be"),
    case("alpha-nan", lambda: ag.losses.abstain(3, alpha=NAN), ValueError, r"alpha \(abstention"),
    case("alpha-str", lambda: ag.losses.abstain(3, alpha="0.3"), ValueError, r"alpha \(abstention"),
    case("brier-k-1", lambda: ag.losses.brier(1), ValueError, r"k \(number of labels\)"),
    case("log-k-none", lambda: ag.losses.log(None), ValueError, r"k \(number of labels\)"),
    case(
        "quadratic-rho-neg", lambda: ag.losses.quadratic(-1.0), ValueError, r"rho \(second-moment"
    ),
    case("quadratic-rho-inf", lambda: ag.losses.quadratic(INF), ValueError, r"rho \(second-moment"),
]


@pytest.mark.parametrize("call, exc, match", LOSS_CASES)
def test_loss_matrix_and_constructors(call, exc, match):
    check(call, exc, match)


def test_huge_losses_are_recognised_without_overflow():
    L = ag.LossMatrix(1e308 * (1 - np.eye(2)))
    assert (L.structure.kind, L.structure.weight) == ("zero_one", 1e308)


@pytest.mark.parametrize(
    "text, match",
    [
        ("0,1+2j\n1,0\n", r"every loss must be a number"),  # once read as a label header
        ("0,cat\n1,0\n", r"every loss must be a number"),
        (b"\xff\xfe\x00,1\n", r"not a readable CSV text file"),
    ],
    ids=["complex-cell", "numeric-corner", "binary"],
)
def test_loss_matrix_from_csv(tmp_path, text, match):
    path = tmp_path / "bad.csv"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ValueError, match=match):
        ag.LossMatrix.from_csv(path)


# --------------------------------------------------------------------------------------- Game
GAME = ag.Game(ag.losses.zero_one(3))
GENERAL = ag.Game(np.array([[0.0, 1.0, 2.0], [2.0, 0.0, 1.0], [1.0, 2.0, 0.5]]))
BRIER = ag.Game(ag.losses.brier(3))
F3 = np.zeros(3)

GAME_CASES = [
    case("value-complex", lambda: GAME.value(F3 + 1j), ValueError, r"F must be a real"),
    case(
        "value-bool-matrix-ok-but-object",
        lambda: GAME.value({}),
        ValueError,
        r"F must be a numeric",
    ),
    case(
        "value-method-int", lambda: GAME.value(F3, method=3), ValueError, r"method must be one of"
    ),
    case(
        "value-closed_form-general",
        lambda: GENERAL.value(F3, method="closed_form"),
        NotApplicableError,
        r"no closed form",
    ),
    case(
        "value-birkhoff-zero_one",
        lambda: GAME.value(F3, method="birkhoff"),
        NotApplicableError,
        r"method='birkhoff' needs",
    ),
    case(
        "value_and_adversary-nan",
        lambda: GAME.value_and_adversary([NAN, 0, 0]),
        ValueError,
        r"F must be finite",
    ),
    case(
        "value_and_adversary-3d",
        lambda: GAME.value_and_adversary(np.zeros((1, 1, 3))),
        ValueError,
        r"F must have shape",
    ),
    case(
        "adversary-method",
        lambda: GAME.adversary(F3, method="LP"),
        ValueError,
        r"method must be one of",
    ),
    case(
        "predictor-columns",
        lambda: GAME.predictor(np.zeros((2, 2))),
        ValueError,
        r"F must have 3 columns",
    ),
    case("predict-empty", lambda: GAME.predict(np.zeros((0, 3))), ValueError, r"F is empty"),
    case(
        "predict-method-list",
        lambda: GAME.predict(F3, method=[]),
        ValueError,
        r"method must be one of",
    ),
    case(
        "surrogate-y-huge-float",
        lambda: GAME.surrogate(F3, 1e20),
        ValueError,
        r"y must be label indices in 0\.\.2; got values from 1e\+20",
    ),
    case(
        "surrogate-y-uint-out",
        lambda: GAME.surrogate(F3, np.uint64(7)),
        ValueError,
        r"y must be label indices",
    ),
    case(
        "surrogate-y-complex",
        lambda: GAME.surrogate(F3, 1j),
        ValueError,
        r"y must be integer label",
    ),
    case(
        "surrogate-y-none", lambda: GAME.surrogate(F3, None), ValueError, r"y must be integer label"
    ),
    case(
        "surrogate-y-inf", lambda: GAME.surrogate(F3, INF), ValueError, r"y must be integer label"
    ),
    case(
        "surrogate-F-strings",
        lambda: GAME.surrogate(["a", "b", "c"], 0),
        ValueError,
        r"F must be a numeric",
    ),
    case(
        "entropy-wrong-width",
        lambda: GAME.entropy([[0.5, 0.5]]),
        ValueError,
        r"Q must have 3 columns",
    ),
    case("entropy-nan", lambda: GAME.entropy([[NAN, 0.5, 0.5]]), ValueError, r"Q must be finite"),
    case("entropy-strings", lambda: GAME.entropy("abc"), ValueError, r"Q must be a numeric"),
    case("lp-nan", lambda: GAME.lp([0.0, NAN, 0.0]), ValueError, r"f must be finite"),
    case("lp-strings", lambda: GAME.lp(["a", "b", "c"]), ValueError, r"f must be a numeric"),
    case("lp-3d", lambda: GAME.lp(np.zeros((1, 1, 3))), ValueError, r"f must have shape"),
    case("brier-entropy-nan", lambda: BRIER.entropy([NAN, 0, 1]), ValueError, r"Q must be finite"),
    case(
        "brier-extreme_points",
        lambda: BRIER.extreme_points(),
        NotApplicableError,
        r"not polyhedral",
    ),
    case("brier-vertex_table", lambda: BRIER.vertex_table(), NotApplicableError, r"not polyhedral"),
    case("brier-lp", lambda: BRIER.lp(F3), NotApplicableError, r"not polyhedral"),
    case(
        "brier-method", lambda: BRIER.value(F3, method="lp"), ValueError, r"method must be one of"
    ),
    case("game-none", lambda: ag.Game(None), ValueError, r"matrix must be 2-D"),
    case("game-loss-name", lambda: ag.Game("zero-one"), ValueError, r"matrix must be a numeric"),
]


@pytest.mark.parametrize("call, exc, match", GAME_CASES)
def test_game_methods(call, exc, match):
    check(call, exc, match)


def test_entropy_of_one_distribution_is_a_scalar():
    assert GAME.entropy([1 / 3, 1 / 3, 1 / 3]) == pytest.approx(2 / 3)


# ------------------------------------------------------------------------------------ GraphGame
PATH = nx.path_graph(3)
GG = ag.GraphGame(ag.losses.zero_one(2), PATH)
PSI, PSI_E = np.zeros((3, 2)), np.zeros((2, 2, 2))
Z2 = ag.losses.zero_one(2)

GRAPH_CASES = [
    case(
        "graph-none", lambda: ag.GraphGame(Z2, None), ValueError, r"graph must be a networkx\.Graph"
    ),
    case(
        "graph-edge-list",
        lambda: ag.GraphGame(Z2, [(0, 1)]),
        ValueError,
        r"graph must be a networkx\.Graph",
    ),
    case(
        "graph-directed",
        lambda: ag.GraphGame(Z2, nx.DiGraph([(0, 1)])),
        ValueError,
        r"graph must be an undirected",
    ),
    case(
        "graph-multigraph",
        lambda: ag.GraphGame(Z2, nx.MultiGraph([(0, 1)])),
        ValueError,
        r"graph must be an undirected",
    ),
    case(
        "graph-empty",
        lambda: ag.GraphGame(Z2, nx.Graph()),
        ValueError,
        r"graph must have at least one node",
    ),
    case(
        "graph-string-nodes",
        lambda: ag.GraphGame(Z2, nx.Graph([("a", "b")])),
        ValueError,
        r"graph nodes must be exactly 0\.\.1",
    ),
    case(
        "loss-negative",
        lambda: ag.GraphGame([[0, -1], [1, 0]], PATH),
        ValueError,
        r"matrix must be non-negative",
    ),
    case(
        "node_weights-strings",
        lambda: ag.GraphGame(Z2, PATH, node_weights="abc"),
        ValueError,
        r"node_weights must be a numeric",
    ),
    case(
        "node_weights-2d",
        lambda: ag.GraphGame(Z2, PATH, node_weights=np.ones((3, 1))),
        ValueError,
        r"node_weights must hold 3",
    ),
    case(
        "node_weights-inf",
        lambda: ag.GraphGame(Z2, PATH, node_weights=[1, INF, 1]),
        ValueError,
        r"node_weights must hold 3 finite",
    ),
    case(
        "node_weights-short",
        lambda: ag.GraphGame(Z2, PATH, node_weights=[1, 1]),
        ValueError,
        r"node_weights must hold 3",
    ),
    case(
        "psi-strings",
        lambda: GG.value([["a", "b"]] * 3, PSI_E),
        ValueError,
        r"node_potentials must be a numeric",
    ),
    case(
        "psi-complex",
        lambda: GG.value(PSI + 1j, PSI_E),
        ValueError,
        r"node_potentials must be a real",
    ),
    case(
        "psi-none",
        lambda: GG.value(None, PSI_E),
        ValueError,
        r"node_potentials must have shape \(3, 2\)",
    ),
    case(
        "psi-batch-3d",
        lambda: GG.value(np.zeros((1, 3, 2)), PSI_E),
        ValueError,
        r"node_potentials must have shape",
    ),
    case(
        "psi-transposed",
        lambda: GG.value(np.zeros((2, 3)), PSI_E),
        ValueError,
        r"node_potentials must have shape \(3, 2\); got \(2, 3\)",
    ),
    case(
        "psi-too-many-labels",
        lambda: GG.value(np.zeros((3, 3)), PSI_E),
        ValueError,
        r"node_potentials must have shape",
    ),
    case(
        "psi-empty",
        lambda: GG.value(np.zeros((0, 2)), PSI_E),
        ValueError,
        r"node_potentials must have shape",
    ),
    case(
        "psi-inf",
        lambda: GG.adversary(PSI + INF, PSI_E),
        ValueError,
        r"node_potentials must be finite",
    ),
    case(
        "Psi-wrong-k",
        lambda: GG.value(PSI, np.zeros((2, 3, 3))),
        ValueError,
        r"edge_potentials must have shape \(2, 2, 2\)",
    ),
    case(
        "Psi-wrong-edges",
        lambda: GG.value(PSI, np.zeros((3, 2, 2))),
        ValueError,
        r"edge_potentials must have shape \(2, 2, 2\)",
    ),
    case(
        "Psi-empty",
        lambda: GG.value(PSI, np.zeros((0, 2, 2))),
        ValueError,
        r"edge_potentials must have shape",
    ),
    case(
        "Psi-strings",
        lambda: GG.predictor(PSI, "abc"),
        ValueError,
        r"edge_potentials must be a numeric",
    ),
    case(
        "Psi-nan",
        lambda: GG.predictor(PSI, np.full((2, 2, 2), NAN)),
        ValueError,
        r"edge_potentials must be finite",
    ),
    case(
        "surrogate-y-float",
        lambda: GG.surrogate(PSI, PSI_E, [0.5, 1, 0]),
        ValueError,
        r"y must hold 3 integer labels",
    ),
    case(
        "surrogate-y-short",
        lambda: GG.surrogate(PSI, PSI_E, [0, 1]),
        ValueError,
        r"y must hold 3 integer labels",
    ),
    case(
        "surrogate-y-strings",
        lambda: GG.surrogate(PSI, PSI_E, ["a", "b", "c"]),
        ValueError,
        r"y must hold 3 integer labels",
    ),
    case(
        "surrogate-y-range",
        lambda: GG.surrogate(PSI, PSI_E, [0, 1, 5]),
        ValueError,
        r"y must hold labels in 0\.\.1",
    ),
    case(
        "score-y-2d",
        lambda: GG.score(PSI, PSI_E, [[0, 1, 0]]),
        ValueError,
        r"y must hold 3 integer labels",
    ),
    case(
        "decode-psi-short",
        lambda: GG.decode(PSI[:2], PSI_E),
        ValueError,
        r"node_potentials must have shape",
    ),
    case(
        "solve-method",
        lambda: GG.solve(PSI, PSI_E, method="bp"),
        ValueError,
        r"method must be one of",
    ),
    case(
        "solve-max_iter-float",
        lambda: GG.solve(PSI, PSI_E, max_iter=2.5),
        ValueError,
        r"max_iter must be an integer",
    ),
    case(
        "solve-tol-nan", lambda: GG.solve(PSI, PSI_E, tol=NAN), ValueError, r"tol must be a finite"
    ),
    case(
        "dd-on-cycle",
        lambda: ag.GraphGame(Z2, nx.cycle_graph(3)).solve(
            np.zeros((3, 2)), np.zeros((3, 2, 2)), method="dual_decomposition"
        ),
        NotApplicableError,
        r"needs a forest",
    ),
    case(
        "brute-psi-shape",
        lambda: brute_force_game(Z2, PATH, np.zeros((2, 2)), PSI_E),
        ValueError,
        r"node_potentials must have shape",
    ),
    case(
        "brute-Psi-nan",
        lambda: brute_force_game(Z2, PATH, PSI, np.full((2, 2, 2), NAN)),
        ValueError,
        r"edge_potentials must be finite",
    ),
    case(
        "brute-weights",
        lambda: brute_force_game(Z2, PATH, PSI, PSI_E, node_weights=[-1, 1, 1]),
        ValueError,
        r"node_weights",
    ),
]


@pytest.mark.parametrize("call, exc, match", GRAPH_CASES)
def test_graph_game(call, exc, match):
    check(call, exc, match)


# -------------------------------------------------------------------------------- inference
INFERENCE_CASES = [
    case(f"{fn.__name__}-{name}", (lambda fn=fn, a=args: fn(*a)), exc, match)
    for fn in (inference.max_sum, inference.marginals, inference.log_partition)
    for name, args, exc, match in [
        (
            "Psi-edges",
            (PATH, PSI, np.zeros((3, 2, 2))),
            ValueError,
            r"Psi must have shape \(\|E\|, k, k\) = \(2, 2, 2\)",
        ),
        ("Psi-k", (PATH, PSI, np.zeros((2, 3, 3))), ValueError, r"Psi must have shape"),
        (
            "psi-nodes",
            (PATH, np.zeros((4, 2)), PSI_E),
            ValueError,
            r"psi must have shape \(N, k\) = \(3, k\)",
        ),
        ("psi-1d", (PATH, np.zeros(3), PSI_E), ValueError, r"psi must have shape"),
        (
            "batch-mismatch",
            (PATH, np.zeros((2, 3, 2)), np.zeros((3, 2, 2, 2))),
            ValueError,
            r"psi and Psi must have the same batch size",
        ),
        ("psi-complex", (PATH, PSI + 1j, PSI_E), ValueError, r"psi must be a real"),
        ("psi-nan", (PATH, PSI + NAN, PSI_E), ValueError, r"psi must be finite"),
        ("Psi-strings", (PATH, PSI, "abc"), ValueError, r"Psi must be a numeric"),
        (
            "cycle",
            (nx.cycle_graph(3), np.zeros((3, 2)), np.zeros((3, 2, 2))),
            ValueError,
            r"graph must be a forest",
        ),
        (
            "directed",
            (nx.DiGraph([(0, 1)]), np.zeros((2, 2)), np.zeros((1, 2, 2))),
            ValueError,
            r"graph must be an undirected",
        ),
        (
            "empty-graph",
            (nx.Graph(), np.zeros((0, 2)), np.zeros((0, 2, 2))),
            ValueError,
            r"graph must have at least one node",
        ),
    ]
] + [
    case(
        "brute_force_scores-size",
        lambda: inference.brute_force_scores(
            nx.path_graph(30), np.zeros((30, 2)), np.zeros((29, 2, 2))
        ),
        SizeLimitError,
        r"MAX_BRUTE_FORCE_LABELINGS = 2000000",
    ),
    case(
        "brute_force_scores-Psi",
        lambda: inference.brute_force_scores(PATH, PSI, np.zeros((1, 2, 2))),
        ValueError,
        r"Psi must have shape",
    ),
]


@pytest.mark.parametrize("call, exc, match", INFERENCE_CASES)
def test_inference(call, exc, match):
    check(call, exc, match)


# --------------------------------------------------------------------------- PermutationGame
PG = ag.PermutationGame(3)
T3 = np.zeros((3, 3))

PERMUTATION_CASES = [
    case("k-huge", lambda: ag.PermutationGame(10**6), SizeLimitError, r"MAX_LP_ITEMS=1,000"),
    case("k-str", lambda: ag.PermutationGame("3"), ValueError, r"k must be an integer >= 2"),
    case("k-bool", lambda: ag.PermutationGame(True), ValueError, r"k must be an integer >= 2"),
    case("value-complex", lambda: PG.value(T3 + 1j), ValueError, r"Theta must be a real"),
    case("value-1d", lambda: PG.value(np.zeros(9)), ValueError, r"Theta must have shape \(3, 3\)"),
    case(
        "value-inf", lambda: PG.value(np.full((2, 3, 3), INF)), ValueError, r"Theta must be finite"
    ),
    case(
        "adversary-4d",
        lambda: PG.adversary(np.zeros((1, 1, 3, 3))),
        ValueError,
        r"Theta must have shape",
    ),
    case(
        "predictor-method",
        lambda: PG.predictor(T3, method="vertices"),
        ValueError,
        r"method must be one of",
    ),
    case(
        "predict-decode",
        lambda: PG.predict(T3, decode="argmax"),
        ValueError,
        r"decode must be one of",
    ),
    case("predict-strings", lambda: PG.predict("abc"), ValueError, r"Theta must be a numeric"),
    case(
        "surrogate-P-nan",
        lambda: PG.surrogate(T3, np.full((3, 3), NAN)),
        ValueError,
        r"P_true must be finite",
    ),
    case(
        "surrogate-P-count",
        lambda: PG.surrogate(np.zeros((2, 3, 3)), [[1, 2, 3]]),
        ValueError,
        r"P_true must be permutation matrices of shape \(2, 3, 3\)",
    ),
    case(
        "surrogate-ranks-0based",
        lambda: PG.surrogate(T3, [0, 1, 2]),
        ValueError,
        r"P_true rank vectors must be permutations of 1\.\.3",
    ),
    case(
        "predictor_value-shape",
        lambda: PG.predictor_value(T3, np.zeros((2, 2))),
        ValueError,
        r"P_hat must have shape",
    ),
    case(
        "adversary_value-nan",
        lambda: PG.adversary_value(T3, np.full((3, 3), NAN)),
        ValueError,
        r"Q must be finite",
    ),
    case(
        "birkhoff_decomposition-nonsquare",
        lambda: permutation.birkhoff_decomposition(np.ones((2, 3)) / 3),
        ValueError,
        r"M must be a non-empty square",
    ),
    case(
        "birkhoff_decomposition-nan",
        lambda: permutation.birkhoff_decomposition(np.full((3, 3), NAN)),
        ValueError,
        r"M must be finite",
    ),
    case(
        "birkhoff_decomposition-zeros",
        lambda: permutation.birkhoff_decomposition(np.zeros((3, 3))),
        ValueError,
        r"M must be doubly stochastic",
    ),
    case(
        "birkhoff_decomposition-negative",
        lambda: permutation.birkhoff_decomposition([[1.5, -0.5], [-0.5, 1.5]]),
        ValueError,
        r"M must be doubly stochastic",
    ),
    case(
        "permutation_index-repeat",
        lambda: permutation.permutation_index([0, 0, 1]),
        ValueError,
        r"sigma must hold position vectors",
    ),
    case(
        "permutation_index-1based",
        lambda: permutation.permutation_index([1, 2, 3]),
        ValueError,
        r"sigma must hold position vectors",
    ),
    case(
        "ranks_to_matrices-strings",
        lambda: permutation.ranks_to_matrices(["a", "b"]),
        ValueError,
        r"R must hold rank vectors",
    ),
]


@pytest.mark.parametrize("call, exc, match", PERMUTATION_CASES)
def test_permutation(call, exc, match):
    check(call, exc, match)


# ------------------------------------------------------------------ polytopes and Fenchel-Young
SIMPLEX, BIRKHOFF, FY = pt.Simplex(), pt.Birkhoff(), pt.FenchelYoungLoss(pt.Simplex(), "kl")
RAND33 = np.random.default_rng(0).random((3, 3))

POLYTOPE_CASES = [
    case(
        "project-complex",
        lambda: SIMPLEX.project(np.array([1j, 0])),
        ValueError,
        r"theta must be a real",
    ),
    case(
        "project-geometry-KL",
        lambda: SIMPLEX.project([1, 0], geometry="KL"),
        ValueError,
        r"geometry must be one of",
    ),
    case(
        "project-geometry-none",
        lambda: SIMPLEX.project([1, 0], geometry=None),
        ValueError,
        r"geometry must be one of",
    ),
    case(
        "project-3d-vector",
        lambda: SIMPLEX.project(np.zeros((1, 1, 2))),
        ValueError,
        r"theta must have shape \(k,\) or \(n, k\)",
    ),
    case(
        "project-permutahedron-size",
        lambda: pt.Permutahedron([3, 2, 1]).project([1, 0]),
        ValueError,
        r"points must have 3 coordinates",
    ),
    case(
        "birkhoff-max_iter-0",
        lambda: BIRKHOFF.project(RAND33, max_iter=0),
        ValueError,
        r"max_iter must be an integer >= 1",
    ),
    case(
        "birkhoff-max_iter-neg",
        lambda: BIRKHOFF.project(RAND33, "kl", max_iter=-5),
        ValueError,
        r"max_iter must be an integer >= 1",
    ),
    case(
        "birkhoff-max_iter-str",
        lambda: BIRKHOFF.project(RAND33, max_iter="a"),
        ValueError,
        r"max_iter must be an integer",
    ),
    case(
        "birkhoff-tol-nan",
        lambda: BIRKHOFF.project(RAND33, "kl", tol=NAN),
        ValueError,
        r"tol must be a finite number >= 0",
    ),
    case(
        "birkhoff-tol-neg",
        lambda: BIRKHOFF.project(RAND33, tol=-1.0),
        ValueError,
        r"tol must be a finite number >= 0",
    ),
    case(
        "birkhoff-nonsquare",
        lambda: BIRKHOFF.argmax(np.zeros((2, 3))),
        ValueError,
        r"theta must hold square",
    ),
    case(
        "argmax-nan",
        lambda: pt.Knapsack(0, 2).argmax([NAN, 0, 1]),
        ValueError,
        r"theta must be finite",
    ),
    case(
        "argmax-unconstrained",
        lambda: pt.Unconstrained().argmax([1.0, 2.0]),
        NotApplicableError,
        r"unbounded",
    ),
    case(
        "contains-atol-nan",
        lambda: SIMPLEX.contains([0.5, 0.5], atol=NAN),
        ValueError,
        r"atol must be a finite",
    ),
    case(
        "contains-atol-neg",
        lambda: SIMPLEX.contains([0.5, 0.5], atol=-1),
        ValueError,
        r"atol must be a finite number >= 0",
    ),
    case(
        "vertices-str", lambda: SIMPLEX.vertices("a"), ValueError, r"dim must be a positive integer"
    ),
    case(
        "vertices-float",
        lambda: SIMPLEX.vertices(2.5),
        ValueError,
        r"dim must be a positive integer; got 2\.5",
    ),
    case(
        "vertices-zero",
        lambda: pt.UnitCube().vertices(0),
        ValueError,
        r"dim must be a positive integer",
    ),
    case(
        "knapsack-low-str", lambda: pt.Knapsack("a", 2), ValueError, r"low must be a finite integer"
    ),
    case(
        "knapsack-high-float",
        lambda: pt.Knapsack(0, 2.5),
        ValueError,
        r"high must be a finite integer",
    ),
    case(
        "knapsack-high-bool",
        lambda: pt.Knapsack(0, True),
        ValueError,
        r"high must be a finite integer",
    ),
    case(
        "permutahedron-w-str",
        lambda: pt.Permutahedron(["a", "b"]),
        ValueError,
        r"w must be a numeric",
    ),
    case(
        "permutahedron-w-empty",
        lambda: pt.Permutahedron([]),
        ValueError,
        r"w must be a non-empty 1-D",
    ),
    case(
        "frank_wolfe-argmax-none",
        lambda: pt.frank_wolfe_projection(None, [1.0, 0.0]),
        ValueError,
        r"argmax must be a callable",
    ),
    case(
        "frank_wolfe-max_iter",
        lambda: pt.frank_wolfe_projection(SIMPLEX.argmax, [1.0, 0.0], max_iter=-1),
        ValueError,
        r"max_iter must be an integer >= 1",
    ),
    case(
        "frank_wolfe-strings",
        lambda: pt.frank_wolfe_projection(SIMPLEX.argmax, ["a", 0]),
        ValueError,
        r"theta must be a numeric",
    ),
    case(
        "frank_wolfe-geometry",
        lambda: pt.frank_wolfe_projection(SIMPLEX.argmax, [1.0, 0.0], geometry="l2"),
        ValueError,
        r"geometry must be one of",
    ),
    case(
        "fy-polytope-class",
        lambda: pt.FenchelYoungLoss(pt.Simplex, "kl"),
        ValueError,
        r"polytope must be an advgame\.polytopes\.Polytope",
    ),
    case(
        "fy-geometry",
        lambda: pt.FenchelYoungLoss(SIMPLEX, "l1"),
        ValueError,
        r"geometry must be one of",
    ),
    case("fy-theta-nan", lambda: FY([NAN, 0.0], [1.0, 0.0]), ValueError, r"theta must be finite"),
    case("fy-target-nan", lambda: FY([1.0, 0.0], [NAN, 0.0]), ValueError, r"target must be finite"),
    case(
        "fy-target-size",
        lambda: FY([1.0, 0.0, 0.0], [1.0, 0.0]),
        ValueError,
        r"target must have the shape of theta",
    ),
    case(
        "fy-batch-mismatch",
        lambda: FY(np.zeros((2, 2)), np.eye(2)[[0, 1, 0]]),
        ValueError,
        r"target must have the shape of theta \(2, 2\)",
    ),
    case(
        "fy-target-outside", lambda: FY([1.0, 0.0], [2.0, 0.0]), ValueError, r"target must lie in"
    ),
    case("fy-regularizer-str", lambda: FY.regularizer("ab"), ValueError, r"mu must be a numeric"),
]


@pytest.mark.parametrize("call, exc, match", POLYTOPE_CASES)
def test_polytopes_and_fenchel_young(call, exc, match):
    check(call, exc, match)


# -------------------------------------------------------------------------------- decoding
ZO = decoding.zero_one(3)

DECODING_CASES = [
    case(
        "general-strings",
        lambda: decoding.general("abc"),
        ValueError,
        r"loss_matrix must be a numeric",
    ),
    case(
        "general-1d", lambda: decoding.general([0.0, 1.0]), ValueError, r"loss_matrix must be a 2-D"
    ),
    case(
        "general-inf",
        lambda: decoding.general([[0, INF], [1, 0]]),
        ValueError,
        r"loss_matrix must be finite",
    ),
    case(
        "zero_one-k-bool", lambda: decoding.zero_one(True), ValueError, r"k must be an integer >= 2"
    ),
    case("absolute-k-1", lambda: decoding.absolute(1), ValueError, r"k must be an integer >= 2"),
    case(
        "ndcg-w-increasing",
        lambda: decoding.ndcg(3, w=[1, 2, 3]),
        ValueError,
        r"w must be 3 non-negative, non-increasing",
    ),
    case("ndcg-w-nan", lambda: decoding.ndcg(3, w=[1, NAN, 0]), ValueError, r"w must be finite"),
    case(
        "precision_at-top",
        lambda: decoding.precision_at(3, 4),
        ValueError,
        r"top must be at most m=3",
    ),
    case(
        "hamming_multilabel-high",
        lambda: decoding.hamming_multilabel(3, high=4),
        ValueError,
        r"needs high <= k",
    ),
    case(
        "decode-size",
        lambda: ZO.decode([1.0, 0.0]),
        ValueError,
        r"u must be one point of shape \(3,\)",
    ),
    case("decode-nan", lambda: ZO.decode([NAN, 0, 0]), ValueError, r"u must be finite"),
    case(
        "decode-complex", lambda: ZO.decode(np.array([1j, 0, 0])), ValueError, r"u must be a real"
    ),
    case("decode-empty", lambda: ZO.decode(np.zeros((0, 3))), ValueError, r"u must be one point"),
    case("scores-inf", lambda: ZO.scores([INF, 0, 0]), ValueError, r"u must be finite"),
    case(
        "loss-y-range",
        lambda: ZO.loss([1.0, 0, 0], 5),
        ValueError,
        r"y must hold integer labels in 0\.\.2",
    ),
    case(
        "loss-y-count",
        lambda: ZO.loss(np.eye(3), [0, 1]),
        ValueError,
        r"y holds 2 ground truths for 3 outputs",
    ),
    case(
        "loss-psi_hat-nan", lambda: ZO.loss([NAN, 0, 0], 0), ValueError, r"psi_hat must be finite"
    ),
    case(
        "spearman-y",
        lambda: decoding.spearman(3).loss([3.0, 2, 1], [1, 1, 2]),
        ValueError,
        r"y must hold rank vectors",
    ),
    case(
        "ndcg-y-zero",
        lambda: decoding.ndcg(3).loss([1.0, 0.5, 0.3], [0, 0, 0]),
        ValueError,
        r"at least one positive relevance",
    ),
    case(
        "with_output_set",
        lambda: ZO.with_output_set("simplex"),
        ValueError,
        r"output_set must be a Polytope",
    ),
]


@pytest.mark.parametrize("call, exc, match", DECODING_CASES)
def test_decoding(call, exc, match):
    check(call, exc, match)


# --------------------------------------------------------------------------------- metrics
SETS = np.ones((2, 2), dtype=bool)

METRICS_CASES = [
    case(
        "phl-empty",
        lambda: metrics.permutation_hamming_loss(np.zeros((0, 3)), np.zeros((0, 3))),
        ValueError,
        r"truth and predicted are empty",
    ),
    case(
        "phl-shape",
        lambda: metrics.permutation_hamming_loss([[1, 2, 3]], [[1, 2]]),
        ValueError,
        r"truth and predicted must match",
    ),
    case(
        "phl-strings",
        lambda: metrics.permutation_hamming_loss("abc", [[1, 2]]),
        ValueError,
        r"truth must be a numeric",
    ),
    case(
        "phl-fractional",
        lambda: metrics.permutation_hamming_loss(np.full((1, 2, 2), 0.5), np.eye(2)[None]),
        ValueError,
        r"truth must be rank vectors",
    ),
    case(
        "phl-nan",
        lambda: metrics.permutation_hamming_loss([[1, NAN]], [[1, 2]]),
        ValueError,
        r"truth must hold rank vectors",
    ),
    case(
        "phl-predicted-1d",
        lambda: metrics.permutation_hamming_loss([[1, 2]], [1, 2]),
        ValueError,
        r"predicted must be rank vectors",
    ),
    case(
        "psm-y-2d",
        lambda: metrics.prediction_set_metrics([[0, 1]], SETS, [0, 1]),
        ValueError,
        r"y_true must be a non-empty 1-D",
    ),
    case(
        "psm-y-scalar",
        lambda: metrics.prediction_set_metrics(0, SETS[:1], [0, 1]),
        ValueError,
        r"y_true must be a non-empty 1-D",
    ),
    case(
        "psm-y-empty",
        lambda: metrics.prediction_set_metrics([], SETS[:0], [0, 1]),
        ValueError,
        r"y_true must be a non-empty 1-D",
    ),
    case(
        "psm-classes-2d",
        lambda: metrics.prediction_set_metrics([0, 1], SETS, [[0, 1]]),
        ValueError,
        r"classes must be a non-empty 1-D",
    ),
    case(
        "psm-classes-duplicate",
        lambda: metrics.prediction_set_metrics([0, 1], SETS, [0, 0]),
        ValueError,
        r"classes must be .*distinct",
    ),
    case(
        "psm-sets-shape",
        lambda: metrics.prediction_set_metrics([0, 1], SETS[:1], [0, 1]),
        ValueError,
        r"sets must be a boolean \(n_samples, n_classes\) = \(2, 2\)",
    ),
]


@pytest.mark.parametrize("call, exc, match", METRICS_CASES)
def test_metrics(call, exc, match):
    check(call, exc, match)


# ------------------------------------------------------------------------- uncertainty sets
UNCERTAINTY_CASES = [
    case(
        "normball-radius-neg",
        lambda: ag.NormBall(-1.0),
        ValueError,
        r"radius must be a finite number >= 0",
    ),
    case("normball-radius-nan", lambda: ag.NormBall(NAN), ValueError, r"radius must be a finite"),
    case("normball-radius-inf", lambda: ag.NormBall(INF), ValueError, r"radius must be a finite"),
    case("normball-radius-str", lambda: ag.NormBall("1"), ValueError, r"radius must be a finite"),
    case(
        "normball-radius-array",
        lambda: ag.NormBall(np.array([1.0])),
        ValueError,
        r"radius must be a finite",
    ),
    case(
        "normball-norm-3",
        lambda: ag.NormBall(1.0, norm=3),
        ValueError,
        r"norm must be one of 1, 2, inf, 'group'",
    ),
    case(
        "normball-norm-l2", lambda: ag.NormBall(1.0, norm="l2"), ValueError, r"norm must be one of"
    ),
    case(
        "normball-norm-bool",
        lambda: ag.NormBall(1.0, norm=True),
        ValueError,
        r"norm must be one of",
    ),
    case(
        "soft-lam-zero", lambda: ag.SoftMoments(0.0), ValueError, r"lam must be a finite number > 0"
    ),
    case("soft-lam-inf", lambda: ag.SoftMoments(INF), ValueError, r"lam must be a finite"),
    case("soft-lam-nan", lambda: ag.SoftMoments(NAN), ValueError, r"lam must be a finite"),
    case(
        "as_uncertainty-name",
        lambda: uncertainty.as_uncertainty("l3"),
        ValueError,
        r"uncertainty must be an UncertaintySet",
    ),
    case(
        "as_uncertainty-list",
        lambda: uncertainty.as_uncertainty(["l2"]),
        ValueError,
        r"uncertainty must be an UncertaintySet",
    ),
    case(
        "as_uncertainty-strength-neg",
        lambda: uncertainty.as_uncertainty("l2", -1.0),
        ValueError,
        r"radius must be a finite number >= 0",
    ),
    case(
        "as_uncertainty-strength-nan",
        lambda: uncertainty.as_uncertainty("soft", NAN),
        ValueError,
        r"lam must be a finite",
    ),
    case(
        "momentballs-radius-neg",
        lambda: uncertainty.MomentBalls(-1.0),
        ValueError,
        r"radius must be a finite non-negative",
    ),
    case(
        "momentballs-radius-nan",
        lambda: uncertainty.MomentBalls([1.0, NAN]),
        ValueError,
        r"radius must be a finite non-negative",
    ),
    case(
        "momentballs-radius-2d",
        lambda: uncertainty.MomentBalls(np.ones((2, 2))),
        ValueError,
        r"radius must be a finite non-negative scalar or 1-D",
    ),
    case(
        "momentballs-radius-str",
        lambda: uncertainty.MomentBalls("a"),
        ValueError,
        r"radius must be a numeric",
    ),
    case(
        "momentballs-norm",
        lambda: uncertainty.MomentBalls(1.0, norm=3),
        ValueError,
        r"norm must be one of",
    ),
    case(
        "momentballs-norm-list",
        lambda: uncertainty.MomentBalls(1.0, norm=[2]),
        ValueError,
        r"norm must be one of",
    ),
    case(
        "momentballs-squared-str",
        lambda: uncertainty.MomentBalls(1.0, squared="no"),
        ValueError,
        r"squared must be True or False",
    ),
    case(
        "momentballs-group-no-groups",
        lambda: uncertainty.MomentBalls(1.0, norm="group"),
        ValueError,
        r"norm='group' needs groups",
    ),
    case(
        "momentballs-bind-radius",
        lambda: uncertainty.MomentBalls([1.0, 2.0, 3.0]).bind(2, 4),
        ValueError,
        r"radius must be a scalar or hold one value per row",
    ),
    case(
        "momentballs-bind-groups",
        lambda: uncertainty.MomentBalls(1.0, norm="group", groups=[0, 1]).bind(2, 4),
        ValueError,
        r"groups must give one label per feature \(4\)",
    ),
]


@pytest.mark.parametrize("call, exc, match", UNCERTAINTY_CASES)
def test_uncertainty_sets(call, exc, match):
    check(call, exc, match)


# ------------------------------------------------------------------------------------ verify
Z3 = ag.losses.zero_one(3)

VERIFY_CASES = [
    case("n-zero", lambda: verify.verify_game(Z3, n=0), ValueError, r"n must be an integer >= 1"),
    case(
        "n-negative", lambda: verify.verify_game(Z3, n=-1), ValueError, r"n must be an integer >= 1"
    ),
    case(
        "n-float", lambda: verify.verify_game(Z3, n=2.5), ValueError, r"n must be an integer >= 1"
    ),
    case(
        "F-columns",
        lambda: verify.verify_game(Z3, F=np.zeros((2, 4))),
        ValueError,
        r"F must have 3 columns",
    ),
    case(
        "F-nan",
        lambda: verify.verify_game(Z3, F=np.full((2, 3), NAN)),
        ValueError,
        r"F must be finite",
    ),
    case(
        "F-strings",
        lambda: verify.verify_game(Z3, F=[["a", "b", "c"]]),
        ValueError,
        r"F must be a numeric",
    ),
    case("F-empty", lambda: verify.verify_game(Z3, F=np.zeros((0, 3))), ValueError, r"F is empty"),
    case(
        "loss-name", lambda: verify.verify_game("zero-one"), ValueError, r"matrix must be a numeric"
    ),
    case(
        "loss-entropy",
        lambda: verify.verify_game(ag.losses.brier(3)),
        NotApplicableError,
        r"verify_game checks .*loss-matrix game",
    ),
    case(
        "random_potentials-k",
        lambda: verify.random_potentials(1),
        ValueError,
        r"k must be an integer >= 2",
    ),
    case(
        "random_potentials-n",
        lambda: verify.random_potentials(3, n=0),
        ValueError,
        r"n must be an integer >= 1",
    ),
    case(
        "random_potentials-scale",
        lambda: verify.random_potentials(3, scale=NAN),
        ValueError,
        r"scale must be a finite number > 0",
    ),
]


@pytest.mark.parametrize("call, exc, match", VERIFY_CASES)
def test_verify(call, exc, match):
    check(call, exc, match)


def test_verify_game_accepts_one_potential_row():
    report = verify.verify_game(Z3, F=np.array([1.0, 0.5, -2.0]))
    assert report.n_rows == 1 and report.ok()


# ------------------------------------------------------------------------------------ the CLI
CSV_FILES = {
    "negative.csv": "0,1\n1,-1\n",
    "nan.csv": "0,1\n1,nan\n",
    "inf.csv": "0,1\n1,inf\n",
    "overflow.csv": "0,1e400\n1,0\n",
    "text.csv": "0,1\n1,x\n",
    "complex.csv": "0,1+2j\n1,0\n",
    "ragged.csv": "0,1,2\n1,0\n",
    "onecolumn.csv": "0\n1\n",
    "empty.csv": "",
    "semicolon.csv": "0;1;1\n1;0;1\n1;1;0\n",
    "header_only.csv": "a,b,c\n",
}

CLI_CASES = [
    (["explain", "hinge", "--k", "3"], r"argument loss: invalid choice: 'hinge'"),
    (["verify", "squared-hinge", "--k", "3"], r"invalid choice"),
    (["bogus"], r"invalid choice: 'bogus'"),
    (["explain", "zero-one", "--k", "abc"], r"argument --k: invalid int value"),
    (["explain", "zero-one", "--k", "0"], r"k \(number of labels\) must be an integer >= 2"),
    (["verify", "zero-one", "--k", "100000"], r"k \(number of labels\) must be at most MAX_LABELS"),
    (["explain", "ordinal", "--k", "31"], r"limited to k <= 30"),
    (["verify", "zero-one", "--k", "3", "--weight", "nan"], r"weight must be a finite number"),
    (["verify", "abstain", "--k", "3", "--alpha", "inf"], r"alpha \(abstention penalty\)"),
    (["verify", "zero-one", "--k", "3", "--n", "0"], r"argument --n: must be a positive integer"),
    (
        ["verify", "zero-one", "--k", "3", "--seed", "-1"],
        r"argument --seed: must be a non-negative",
    ),
    (
        ["explain", "zero-one", "--k", "3", "--potentials=1,2,x"],
        r"--potentials must be comma-separated",
    ),
    (["explain", "zero-one", "--k", "3", "--potentials="], r"--potentials must be comma-separated"),
    (
        ["explain", "zero-one", "--k", "3", "--potentials=1;2;3"],
        r"--potentials must be comma-separated",
    ),
    (["explain", "zero-one", "--k", "3", "--potentials=1,2,nan"], r"F must be finite"),
    (["explain", "zero-one", "--k", "3", "--potentials=1,2,3,4"], r"--potentials has 4 numbers"),
    (["verify", "--matrix", "{tmp}/negative.csv"], r"matrix must be non-negative"),
    (["verify", "--matrix", "{tmp}/nan.csv"], r"line 2, column 2: .nan. is not a finite number"),
    (["verify", "--matrix", "{tmp}/inf.csv"], r"line 2, column 2: .inf. is not a finite number"),
    (
        ["verify", "--matrix", "{tmp}/overflow.csv"],
        r"line 1, column 2: .1e400. is not a finite number",
    ),
    (["explain", "--matrix", "{tmp}/text.csv"], r"every loss must be a number"),
    (["explain", "--matrix", "{tmp}/complex.csv"], r"every loss must be a number"),
    (["explain", "--matrix", "{tmp}/ragged.csv"], r"rows have different lengths"),
    (["explain", "--matrix", "{tmp}/onecolumn.csv"], r"matrix must have at least 2 labels"),
    (["explain", "--matrix", "{tmp}/empty.csv"], r"the CSV file is empty"),
    (["verify", "--matrix", "{tmp}/missing.csv"], r"No such file or directory: .*missing\.csv"),
    (["verify", "--matrix", "{tmp}"], r"(Is a directory|Permission denied)"),
    (["verify", "--matrix", "{tmp}/nan.csv", "--k", "3"], r"--matrix replaces the loss name"),
    (["verify"], r"give a loss"),
    # round two (hardening issue): devices, caps, delimiters
    (
        ["explain", "--matrix", "/dev/zero"],
        r"Is a character device; --matrix FILE must be a regular",
    ),
    (["verify", "zero-one", "--k", "3", "--n", "1000000000"], r"--n: must be at most 100,000"),
    (["verify", "zero-one", "--k", "1001"], r"--k must be at most 1,000"),
    (
        ["explain", "--matrix", "{tmp}/semicolon.csv"],
        r"contain ';': separate the numbers by commas",
    ),
    (["explain", "--matrix", "{tmp}/header_only.csv"], r"a header line alone\?"),
    (["compare", "--data", "/dev/zero", "--target", "y"], r"Is a character device"),
]


@pytest.mark.parametrize(
    "args, match", CLI_CASES, ids=["-".join(a).replace("{tmp}/", "") for a, _ in CLI_CASES]
)
def test_cli_bad_input(capsys, tmp_path, args, match):
    for name, text in CSV_FILES.items():
        (tmp_path / name).write_text(text)
    code = main([a.replace("{tmp}", str(tmp_path)) for a in args])
    err = capsys.readouterr().err
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("advgame: error: ")
    assert re.search(match, lines[0]), lines[0]


# ------------------------------------------------------------------------------- size limits
SIZE_CASES = [
    case(
        "vertices-max_bases",
        lambda: vertices.enumerate_extreme_points(np.ones((13, 13)) - np.eye(13)),
        SizeLimitError,
        r"over max_bases=3,000,000",
    ),
    case(
        "game-vertex_table",
        lambda: ag.Game(np.random.default_rng(0).random((13, 13))).vertex_table(),
        SizeLimitError,
        r"max_bases=3,000,000.*Game\.vertex_table",
    ),
    case(
        "game-extreme_points-zero_one",
        lambda: ag.Game(ag.losses.zero_one(25)).extreme_points(),
        SizeLimitError,
        r"over the limit of 2,000,000",
    ),
    case(
        "game-value-vertices",
        lambda: ag.Game(np.random.default_rng(0).random((13, 13))).value(
            np.zeros(13), method="vertices"
        ),
        SizeLimitError,
        r"max_bases",
    ),
    case(
        "all_permutations-k!",
        lambda: permutation.all_permutations(12),
        SizeLimitError,
        r"k=12 gives 479001600 \(limit: k <= 6\)",
    ),
    case(
        "hamming_loss_matrix-k!",
        lambda: permutation.hamming_loss_matrix(9),
        SizeLimitError,
        r"limit: k <= 6",
    ),
    case(
        "permutation_game-k",
        lambda: ag.PermutationGame(5000),
        SizeLimitError,
        r"MAX_LP_ITEMS=1,000",
    ),
    case(
        "junction-tree-grid",
        lambda: ag.GraphGame(
            ag.losses.zero_one(10), nx.convert_node_labels_to_integers(nx.grid_2d_graph(6, 6))
        ),
        SizeLimitError,
        r"over the limit of 100,000",
    ),
    case(
        "junction-tree-complete",
        lambda: ag.GraphGame(Z2, nx.complete_graph(40)),
        SizeLimitError,
        r"2\^40 .* over the limit of 100,000",
    ),
    case(
        "brute_force_game",
        lambda: brute_force_game(
            ag.losses.zero_one(3), nx.path_graph(10), np.zeros((10, 3)), np.zeros((9, 3, 3))
        ),
        SizeLimitError,
        r"MAX_BRUTE_FORCE_LABELINGS=5,000",
    ),
    case(
        "polytope-cube-vertices",
        lambda: pt.UnitCube().vertices(100),
        SizeLimitError,
        r"MAX_VERTICES=100000",
    ),
    case(
        "polytope-birkhoff-vertices",
        lambda: pt.Birkhoff().vertices(12),
        SizeLimitError,
        r"MAX_VERTICES=100000",
    ),
    case(
        "polytope-rowstochastic-vertices",
        lambda: pt.RowStochastic().vertices(50),
        SizeLimitError,
        r"MAX_VERTICES=100000",
    ),
    case(
        "loss-constructor-k", lambda: ag.losses.ordinal(10**5), SizeLimitError, r"MAX_LABELS=4,096"
    ),
]


@pytest.mark.parametrize("call, exc, match", SIZE_CASES)
def test_size_limits_refuse_quickly(call, exc, match):
    start = time.perf_counter()
    check(call, exc, match)
    assert time.perf_counter() - start < 2.0


def test_from_csv_refuses_a_huge_file_without_reading_it(tmp_path, monkeypatch):
    path = tmp_path / "big.csv"
    path.write_text("0,1\n1,0\n")
    monkeypatch.setattr(ag.losses, "MAX_CSV_BYTES", 4)
    with pytest.raises(
        ag.SizeLimitError, match=r"big.csv: the CSV file has 8 bytes, over the limit"
    ):
        ag.LossMatrix.from_csv(path)


# ------------------------------------------- round two: silent wrong numbers are now right numbers
def _lp_at_scale(scale):
    game = ag.Game(ag.LossMatrix(scale * (1 - np.eye(4))))
    F = scale * np.array([[1.0, 0.0, 0.0, 0.0], [0.3, -0.2, 0.1, 0.0]])
    return game.value(F, method="lp"), game.value(F, method="closed_form")


RIGHT_NUMBERS = [
    pytest.param(lambda: _lp_at_scale(1e-10), id="lp-zero-one-at-1e-10"),
    pytest.param(lambda: _lp_at_scale(1e-300), id="lp-zero-one-at-1e-300"),
    pytest.param(lambda: _lp_at_scale(1e15), id="lp-zero-one-at-1e15"),
    pytest.param(
        lambda: (pt.Simplex().project(np.array([1e17, 1.0, 0.5])), np.array([1.0, 0.0, 0.0])),
        id="simplex-projection-at-1e17",
    ),
    pytest.param(
        lambda: (
            pt.Birkhoff().project(1e300 * np.eye(3), geometry="kl").sum(axis=0),
            np.ones(3),
        ),
        id="birkhoff-kl-at-1e300-doubly-stochastic",
    ),
]


@pytest.mark.parametrize("compute", RIGHT_NUMBERS)
def test_formerly_wrong_numbers_are_right(compute):
    got, expected = compute()
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)


def test_bom_matrix_is_read_as_written(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes("\ufeff0,1,1\n1,0,1\n1,1,0\n".encode())
    L = ag.LossMatrix.from_csv(path)
    assert L.shape == (3, 3) and L.structure.kind == "zero_one"
