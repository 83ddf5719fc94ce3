"""PermutationGame (DESIGN Appendix B): the compact Birkhoff LP against the k!-class game.

References are independent of the module's LP: the general ``ag.Game`` over all ``k!``
permutations with the Hamming loss matrix (method='lp'), and brute force over permutations.
"""

import functools
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import advgame as ag
from advgame.exceptions import NotApplicableError, SizeLimitError
from advgame.permutation import (
    PermutationGame,
    all_permutations,
    birkhoff_decomposition,
    hamming_loss_matrix,
    matrices_to_ranks,
    permutation_index,
    permutation_matrices,
    ranks_to_matrices,
)
from advgame.polytopes import Birkhoff

#: Value agreement with the k!-class game (relative to max(1, |value|)).
RTOL = 1e-8
#: Row/column sums of Q* and P̂* and their non-negativity.
STOCHASTIC_TOL = 1e-8
KS = [2, 3, 4, 5]


@functools.cache
def game(k):
    return PermutationGame(k)


@functools.cache
def reference(k):
    """The general game over all k! permutations and their matrices (same order)."""
    return ag.Game(ag.LossMatrix(hamming_loss_matrix(k))), permutation_matrices(k)


def brute_value(T):
    """Value of the k!-class game with potentials f_m = <Θ, P_m>, by the general LP."""
    T = np.asarray(T, dtype=float).reshape(-1, T.shape[-1], T.shape[-1])
    G, Pm = reference(T.shape[-1])
    return G.value(np.einsum("mij,nij->nm", Pm, T), method="lp")


def assert_close(actual, expected, what, rtol=RTOL):
    expected = np.asarray(expected, dtype=float)
    err = np.abs(np.asarray(actual) - expected) / np.maximum(1.0, np.abs(expected))
    assert np.all(err <= rtol), f"{what}: relative error {err.max():.3e}"


def assert_doubly_stochastic(M, what):
    assert M.min() >= -STOCHASTIC_TOL, f"{what}: negative entry {M.min():.3e}"
    assert np.abs(M.sum(axis=-1) - 1).max() <= STOCHASTIC_TOL, f"{what}: row sums"
    assert np.abs(M.sum(axis=-2) - 1).max() <= STOCHASTIC_TOL, f"{what}: column sums"


def scores(k, case, n=4, seed=0):
    rng = np.random.default_rng([seed, k])
    if case == "random":
        return rng.normal(size=(n, k, k))
    if case == "zeros":
        return np.zeros((n, k, k))
    if case == "repeated":  # exact ties: few distinct values, repeated rows and columns
        T = rng.integers(-2, 3, size=(n, k, k)).astype(float)
        T[:, -1] = T[:, 0]
        return T
    if case == "large":
        return 1e4 * rng.normal(size=(n, k, k))
    if case == "tiny":
        return 1e-6 * rng.normal(size=(n, k, k))
    if case == "offset":  # a large common offset on a small signal
        return 1e3 + rng.normal(size=(n, k, k))
    raise AssertionError(case)


CASES = ["random", "zeros", "repeated", "large", "tiny", "offset"]


def methods(k):
    return ["lp", "closed_form"] if k == 2 else ["lp"]


# --------------------------------------------------------------------------- value vs k! game
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("k", KS)
def test_value_equals_kfactorial_game(k, case):
    T = scores(k, case)
    expected = brute_value(T)
    for method in methods(k):
        assert_close(game(k).value(T, method=method), expected, f"k={k} {case} {method}")
    assert_close(game(k).value(T[0]), expected[0], "single example")
    assert np.ndim(game(k).value(T[0])) == 0


@pytest.mark.parametrize("k", KS)
def test_value_at_zero_scores_is_k_minus_one(k):
    # the uniform adversary: every prediction loses k - 1 in expectation
    assert_close(game(k).value(np.zeros((k, k))), k - 1, "value(0)")


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("k", KS)
def test_adversary_is_doubly_stochastic_and_attains_value(k, case):
    T = scores(k, case)
    _, Pm = reference(k)
    for method in methods(k):
        value, Q = game(k).value_and_adversary(T, method=method)
        assert_doubly_stochastic(Q, f"Q* k={k} {case}")
        # brute force: k - max_π <Q, P_π> + <Θ, Q>
        attained = k - np.einsum("mij,nij->nm", Pm, Q).max(axis=1) + np.einsum("nij,nij->n", T, Q)
        assert_close(attained, value, f"Q* guarantee k={k} {case} {method}")
        assert_close(game(k).adversary_value(T, Q), value, "adversary_value")
        # ties make Q* non-unique: adversary() must be optimal, not identical
        again = game(k).adversary(T, method=method)
        assert_close(game(k).adversary_value(T, again), value, "adversary()")


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("k", KS)
def test_predictor_is_doubly_stochastic_and_minimax(k, case):
    T = scores(k, case)
    _, Pm = reference(k)
    for method in methods(k):
        value = game(k).value(T, method=method)
        P = game(k).predictor(T, method=method)
        assert_doubly_stochastic(P, f"P̂* k={k} {case}")
        # brute force worst case: max_π k - <P̂, P_π> + <Θ, P_π>
        worst = (k + np.einsum("mij,nij->nm", Pm, T - P)).max(axis=1)
        assert_close(worst, value, f"P̂* worst case k={k} {case} {method}")
        assert_close(game(k).predictor_value(T, P), value, "predictor_value")


@pytest.mark.parametrize("k", [8, 12, 20])
def test_no_duality_gap_for_larger_k(k):
    T = scores(k, "random", n=3)
    g = game(k)
    value, Q = g.value_and_adversary(T)
    P = g.predictor(T)
    assert_doubly_stochastic(Q, "Q*")
    assert_doubly_stochastic(P, "P̂*")
    assert_close(g.adversary_value(T, Q), value, "adversary side")
    assert_close(g.predictor_value(T, P), value, "predictor side")


@pytest.mark.parametrize("k", [3, 6])
def test_value_shifts_with_row_and_column_offsets(k):
    # <a 1^T + 1 b^T, Q> = sum(a) + sum(b) on the Birkhoff polytope
    rng = np.random.default_rng(3)
    T = rng.normal(size=(2, k, k))
    a, b = rng.normal(size=(2, k))
    shifted = T + a[:, None] + b[None, :]
    assert_close(game(k).value(shifted), game(k).value(T) + a.sum() + b.sum(), "shift")


# ---------------------------------------------------------------------------------- predict
@pytest.mark.parametrize("k", KS + [6])
def test_predict_is_brute_force_map(k):
    T = scores(k, "random", n=6, seed=1)
    Pm = permutation_matrices(k)
    best = np.einsum("mij,nij->nm", Pm, T).argmax(axis=1)
    R = game(k).predict(T)
    assert R.dtype.kind == "i" and R.shape == (6, k)
    np.testing.assert_array_equal(R, all_permutations(k)[best] + 1)
    np.testing.assert_array_equal(game(k).predict(T, as_matrix=True), Pm[best])
    np.testing.assert_array_equal(game(k).predict(T[0]), R[0])


@pytest.mark.parametrize("k", [3, 4])
def test_predict_decoding_the_predictor(k, monkeypatch):
    """The decoded permutation has the largest overlap with the minimax marginals ``P̂*`` that
    ``predict`` solved for.  (``P̂*`` need not be unique, and the warm-started LP can return
    another optimal one on another call, so the test reads the one ``predict`` used; that one is
    checked to be minimax: its worst case equals the game value.)"""
    T = scores(k, "random", n=5, seed=2)
    Pm = permutation_matrices(k)
    g = PermutationGame(k)
    solved = []
    solve = g._solve
    monkeypatch.setattr(
        g, "_solve", lambda T, method: solved.append(solve(T, method)) or solved[-1]
    )
    R = g.predict(T, decode="predictor")
    value, _, P = solved[-1]
    assert_close(g.predictor_value(T, P), value, "P̂* minimax")
    overlap = np.einsum("nij,nij->n", ranks_to_matrices(R), P)
    assert_close(overlap, np.einsum("mij,nij->nm", Pm, P).max(axis=1), "max overlap")


def test_rank_matrix_round_trip():
    R = all_permutations(4) + 1
    P = ranks_to_matrices(R)
    assert P.shape == (24, 4, 4)
    np.testing.assert_array_equal(matrices_to_ranks(P), R)
    # item j with rank r_j gives P[j, r_j - 1] = 1
    assert ranks_to_matrices([2, 3, 1])[0, 1] == 1.0


# -------------------------------------------------------------------------------- surrogate
@pytest.mark.parametrize("k", [2, 3, 5])
def test_surrogate_is_value_minus_true_potential(k):
    T = scores(k, "random", n=4, seed=4)
    rng = np.random.default_rng(k)
    R = np.array([rng.permutation(k) + 1 for _ in range(4)])
    P = ranks_to_matrices(R)
    expected = brute_value(T) - np.einsum("nij,nij->n", T, P)
    g = game(k)
    assert_close(g.surrogate(T, P), expected, "matrices")
    assert_close(g.surrogate(T, R), expected, "rank vectors")
    assert_close(g.surrogate(T[1], P[1]), expected[1], "single matrix")
    assert_close(g.surrogate(T[1], R[1]), expected[1], "single rank vector")
    assert np.all(g.surrogate(T, R) >= -1e-9)


# --------------------------------------------------------------------------- closed form k=2
def test_k2_fast_path_and_dispatch():
    assert PermutationGame(2).fast_path == "zero_one"
    assert PermutationGame(3).fast_path is None
    with pytest.raises(NotApplicableError, match=r"closed form only for k = 2.*k=3"):
        PermutationGame(3).value(np.zeros((3, 3)), method="closed_form")
    # |d| = 2 boundary and far from it
    T = np.array([[[1.0, 0.0], [0.0, 1.0]], [[5.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]])
    for method in ("closed_form", "lp"):
        assert_close(PermutationGame(2).value(T, method=method), [2.0, 5.0, 1.0], method)


# ------------------------------------------------------------------------------- hypothesis
FLOATS = st.one_of(
    st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False),
    st.integers(-2, 2).map(float),
)


@st.composite
def score_matrices(draw, k_max=4):
    k = draw(st.integers(2, k_max))
    n = draw(st.integers(1, 3))
    flat = draw(st.lists(FLOATS, min_size=n * k * k, max_size=n * k * k))
    return np.array(flat).reshape(n, k, k)


@given(score_matrices())
def test_value_equals_brute_force_property(T):
    k = T.shape[-1]
    value = game(k).value(T)
    assert_close(value, brute_value(T), "hypothesis value")
    P = game(k).predictor(T)
    assert_doubly_stochastic(P, "hypothesis P̂*")
    assert_close(game(k).predictor_value(T, P), value, "hypothesis predictor", rtol=1e-7)


# --------------------------------------------------------------------------- loss matrix
def test_hamming_loss_matrix():
    L = hamming_loss_matrix(3)
    assert L.shape == (6, 6)
    np.testing.assert_array_equal(np.diag(L), 0)
    np.testing.assert_array_equal(L, L.T)
    # from the identity: 3 transpositions (distance 2) and 2 three-cycles (distance 3)
    assert sorted(L[0]) == [0, 2, 2, 2, 3, 3]
    Pm = permutation_matrices(4)
    np.testing.assert_array_equal(hamming_loss_matrix(4), 4 - np.einsum("aij,bij->ab", Pm, Pm))
    with pytest.raises(SizeLimitError, match=r"k=7 gives 5040.*k <= 6"):
        hamming_loss_matrix(7)


def test_pickle_and_repr():
    g = pickle.loads(pickle.dumps(game(3)))
    T = scores(3, "random")
    assert_close(g.value(T), game(3).value(T), "pickled")
    assert repr(g) == "PermutationGame(k=3, fast_path=None)"


# ------------------------------------------------------------------------------- bad inputs
@pytest.mark.parametrize("k", [1, 0, -3, 2.5, True, "3", None])
def test_bad_k(k):
    with pytest.raises(ValueError, match=r"k must be an integer >= 2"):
        PermutationGame(k)


BAD_THETA = [
    (np.array([[0.0, np.nan, 1.0]] * 3), r"Theta must be finite.*nan.*\(0, 1\)"),
    (np.full((2, 3, 3), np.inf), r"Theta must be finite.*inf.*\(0, 0, 0\)"),
    (np.zeros((3, 4)), r"Theta must have shape \(3, 3\) or \(n, 3, 3\).*\(3, 4\)"),
    (np.zeros(3), r"Theta must have shape"),
    (np.zeros((1, 1, 3, 3)), r"Theta must have shape"),
    (np.zeros((0, 3, 3)), r"Theta is empty"),
    ("abc", r"Theta must be a numeric array"),
]


@pytest.mark.parametrize("T, match", BAD_THETA)
@pytest.mark.parametrize("call", ["value", "adversary", "predictor", "predict"])
def test_bad_theta(call, T, match):
    with pytest.raises(ValueError, match=match):
        getattr(game(3), call)(T)


@pytest.mark.parametrize(
    "P, match",
    [
        (np.ones((3, 3)), r"P_true must hold permutation matrices"),
        (0.5 * np.eye(3) + 0.5 * np.eye(3)[::-1], r"P_true must hold permutation matrices"),
        (np.eye(4), r"P_true must be permutation matrices of shape \(3, 3\) or rank vectors"),
        ([1, 1, 2], r"rank vectors must be permutations of 1\.\.3"),
        ([0, 1, 2], r"rank vectors must be permutations of 1\.\.3"),
        ([1.5, 2, 3], r"rank vectors must hold integers 1\.\.3"),
        ([[1, 2, 3]], r"P_true must be permutation matrices of shape"),
    ],
)
def test_bad_truth(P, match):
    with pytest.raises(ValueError, match=match):
        game(3).surrogate(np.zeros((3, 3)), P)


def test_bad_method_and_decode():
    with pytest.raises(ValueError, match=r"method must be one of"):
        game(3).value(np.zeros((3, 3)), method="vertices")
    with pytest.raises(ValueError, match=r"decode must be one of"):
        game(3).predict(np.zeros((3, 3)), decode="sinkhorn")


# ------------------------------------------------- recognition and the Game's Birkhoff fast path
@pytest.mark.parametrize("m", [3, 4, 5])
def test_hamming_over_permutations_is_recognised(m):
    L = ag.LossMatrix(2.5 * hamming_loss_matrix(m))
    assert L.structure.kind == "permutation_hamming" and L.structure.weight == pytest.approx(2.5)
    assert ag.Game(L).fast_path == ("vertices" if m == 3 else "birkhoff")  # 6 x 6: a table
    shuffled = np.random.default_rng(m).permutation(L.n_labels)
    other = hamming_loss_matrix(m)[np.ix_(shuffled, shuffled)]
    if not np.array_equal(other, hamming_loss_matrix(m)):
        assert ag.LossMatrix(other).structure.kind == "general"  # order matters (documented)
    noisy = hamming_loss_matrix(m) + 1e-3 * np.eye(L.n_labels)[::-1]
    assert ag.LossMatrix(noisy).structure.kind == "general"
    assert ag.LossMatrix(hamming_loss_matrix(2)).structure.kind == "zero_one"


@pytest.mark.parametrize("m", [3, 4, 5])
@given(seed=st.integers(0, 2**32 - 1), scale=st.sampled_from([1e-3, 1.0, 30.0]))
@settings(max_examples=8, deadline=None)
def test_game_birkhoff_path_equals_the_lp(m, seed, scale):
    """Linear rows take the compact LP, the others the k!-class LP; q* and p* certify value."""
    rng = np.random.default_rng(seed)
    weight = rng.choice([0.5, 1.0, 3.0])
    game = ag.Game(weight * hamming_loss_matrix(m))
    Theta = scale * rng.normal(size=(6, m, m))
    F = np.einsum("nij,pij->np", Theta, permutation_matrices(m))
    F[0] += scale * rng.normal(size=F.shape[1])  # not linear in the permutation matrices
    value, Q = game.value_and_adversary(F, method="birkhoff")
    np.testing.assert_allclose(value, game.value(F, method="lp"), rtol=1e-9, atol=1e-9 * scale)
    P = game.predictor(F, method="birkhoff")
    L = game.loss.matrix
    assert np.all(Q >= 0) and np.allclose(Q.sum(axis=1), 1.0)
    assert np.all(P >= 0) and np.allclose(P.sum(axis=1), 1.0)
    atol = 1e-7 * max(1.0, scale)
    np.testing.assert_allclose(np.min(Q @ L.T, axis=1) + np.sum(Q * F, axis=1), value, atol=atol)
    np.testing.assert_allclose(np.max(P @ L + F, axis=1), value, atol=atol)


def test_birkhoff_method_refuses_other_losses():
    with pytest.raises(NotApplicableError, match="permutations"):
        ag.Game(ag.losses.zero_one(6)).value(np.zeros(6), method="birkhoff")


@given(seed=st.integers(0, 2**32 - 1), k=st.integers(2, 7), scale=st.sampled_from([0.1, 3.0, 50.0]))
@settings(max_examples=40, deadline=None)
def test_birkhoff_decomposition_reconstructs(seed, k, scale):
    rng = np.random.default_rng(seed)
    M = Birkhoff().project(scale * rng.normal(size=(k, k)))
    weights, sigma = birkhoff_decomposition(M)
    assert np.all(weights > 0) and weights.sum() == pytest.approx(1.0)
    assert len(weights) <= k * k - 2 * k + 2
    assert np.array_equal(np.sort(sigma, axis=1), np.tile(np.arange(k), (len(sigma), 1)))
    P = np.zeros((len(weights), k, k))
    P[np.arange(len(weights))[:, None], np.arange(k)[None, :], sigma] = 1.0
    np.testing.assert_allclose(np.tensordot(weights, P, axes=1), M, atol=1e-7)


def test_permutation_index_is_the_enumeration_order():
    for k in (2, 3, 5):
        sigma = all_permutations(k)
        np.testing.assert_array_equal(permutation_index(sigma), np.arange(len(sigma)))


def test_verify_checks_the_birkhoff_path_on_linear_potentials():
    m = 4
    Theta = np.random.default_rng(0).normal(size=(30, m, m))
    F = np.einsum("nij,pij->np", Theta, permutation_matrices(m))
    report = ag.verify.verify_game(hamming_loss_matrix(m), F=F)
    assert "birkhoff" in {check.method for check in report.checks}
    assert report.ok(), str(report)
