"""Calibrated decoding (Blondel 2019 Eq. 11-12) against brute force over outputs and ground truths."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advgame import decoding, losses
from advgame.polytopes import Birkhoff, Knapsack, UnitCube


def _ranks(k):
    return np.array(list(itertools.permutations(range(1, k + 1))))


def _perm_matrix(R):
    k = R.size
    P = np.zeros((k, k))
    P[np.arange(k), R - 1] = 1.0
    return P


def _direct_cases():
    """(decomposition, outputs psi, ground truths, direct loss L(psi_index, y_index))."""
    k = 3
    eye = np.eye(k)
    yield decoding.zero_one(k), eye, np.arange(k), lambda a, y: float(a != y)
    L = losses.ordinal(4, weight=2.0).matrix + 0.5
    yield decoding.general(L), np.eye(4), np.arange(4), lambda a, y: L[a, y]
    cube = UnitCube().vertices(4)
    yield (
        decoding.hamming_multilabel(4),
        cube,
        cube,
        lambda a, y: float(np.sum(cube[a] != cube[y])),
    )
    R = _ranks(3)
    P = np.array([_perm_matrix(r) for r in R])
    yield (
        decoding.hamming_ranking(3),
        P,
        R,
        lambda a, y: float(np.sum(R[a] != R[y])),
    )
    yield (
        decoding.spearman(3),
        4.0 - R,
        R,
        lambda a, y: 0.5 * float(np.sum((R[a] - R[y]) ** 2)),
    )
    yield (
        decoding.absolute(5),
        decoding.absolute(5).output_set.vertices(4),
        np.arange(5),
        lambda a, y: float(abs(a - y)),
    )
    m = 4
    w = 1.0 / np.log2(np.arange(2, m + 2))
    positions = np.array(list(itertools.permutations(range(m))))  # position of each document
    relevances = np.array([[3, 0, 1, 2], [0, 0, 1, 0], [1, 1, 1, 1], [2, 2, 0, 1]], float)
    yield (
        decoding.ndcg(m),
        w[positions],
        relevances,
        lambda a, y: 1.0 - relevances[y] @ w[positions[a]] / (np.sort(relevances[y])[::-1] @ w),
    )
    binary = np.array([[1, 0, 1, 0], [0, 0, 0, 1], [1, 1, 1, 0]], float)
    top = 2
    wt = (np.arange(m) < top).astype(float)
    yield (
        decoding.precision_at(m, top),
        wt[positions],
        binary,
        lambda a, y: 1.0 - binary[y] @ wt[positions[a]] / min(top, binary[y].sum()),
    )


CASES = list(_direct_cases())


@pytest.mark.parametrize("case", CASES, ids=[c[0].name for c in CASES])
def test_decomposition_reproduces_the_loss(case):
    dec, outputs, truths, direct = case
    for a, y in itertools.product(range(len(outputs)), range(len(truths))):
        value = dec.loss(outputs[a], truths[y : y + 1])
        assert value == pytest.approx(direct(a, y), abs=1e-12)


@pytest.mark.parametrize("case", CASES, ids=[c[0].name for c in CASES])
@given(seed=st.integers(0, 2**32 - 1), concentration=st.sampled_from([0.05, 1.0, 20.0]))
@settings(max_examples=25, deadline=None)
def test_calibrated_decoding_is_the_bayes_decision(case, seed, concentration):
    """For u = E_q phi(Y), decode(u) minimises the expected loss over all outputs (Eq. 11)."""
    dec, outputs, truths, direct = case
    rng = np.random.default_rng(seed)
    q = rng.dirichlet(np.full(len(truths), concentration))
    u = np.tensordot(q, dec.phi(truths), axes=1)
    risk = np.array(
        [sum(q[y] * direct(a, y) for y in range(len(truths))) for a in range(len(outputs))]
    )
    chosen = dec.decode(u)
    chosen_risk = sum(q[y] * dec.loss(chosen, truths[y : y + 1]) for y in range(len(truths)))
    assert chosen_risk <= risk.min() + 1e-9


def test_decode_is_vectorised_and_keeps_shapes():
    dec = decoding.hamming_ranking(4)
    rng = np.random.default_rng(0)
    U = Birkhoff().project(rng.normal(size=(7, 4, 4)))
    out = dec.decode(U)
    assert out.shape == (7, 4, 4)
    np.testing.assert_array_equal(out[2], dec.decode(U[2]))
    assert np.all(out.sum(axis=1) == 1) and np.all(out.sum(axis=2) == 1)


def test_output_set_can_be_a_superset():
    """Decoding a ranking on the unit cube gives 0/1 matrices that need not be permutations."""
    dec = decoding.hamming_ranking(3).with_output_set(UnitCube())
    u = np.full((3, 3), 0.6)
    np.testing.assert_array_equal(dec.decode(u), np.ones((3, 3)))
    capped = decoding.hamming_multilabel(5).with_output_set(Knapsack(0, 2))
    assert capped.decode(np.full(5, 0.9)).sum() == 2


def test_absolute_decoding_is_the_median():
    rng = np.random.default_rng(1)
    q = rng.dirichlet(np.ones(6), size=50)
    dec = decoding.absolute(6)
    u = q @ dec.phi(np.arange(6))
    label = dec.decode(u).sum(axis=1)
    cdf = np.cumsum(q, axis=1)
    median = np.argmax(cdf >= 0.5, axis=1)
    expected = np.abs(np.arange(6)[None, :, None] - np.arange(6)[None, None, :])  # |a - y|
    risk = np.einsum("ny,ay->na", q, expected[0])
    np.testing.assert_allclose(risk[np.arange(50), label.astype(int)], risk[np.arange(50), median])


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: decoding.zero_one(1), "k must be an integer >= 2"),
        (lambda: decoding.zero_one(3).decode(np.ones(4)), r"shape \(3,\)"),
        (lambda: decoding.zero_one(3).decode([np.nan, 0, 0]), "finite"),
        (lambda: decoding.hamming_ranking(3).phi([[1, 1, 2]]), "permutations of 1..3"),
        (lambda: decoding.ndcg(3).phi([[0, 0, 0]]), "positive relevance"),
        (lambda: decoding.ndcg(3, w=[0.1, 0.5, 1.0]), "non-increasing"),
        (lambda: decoding.precision_at(3, 4), "top must be at most"),
        (lambda: decoding.precision_at(3, 1).phi([[0, 0, 0]]), "relevant document"),
        (lambda: decoding.absolute(4).phi([4]), "labels in 0..3"),
        (lambda: decoding.hamming_multilabel(3).phi([[0, 2, 1]]), "0/1 indicator"),
        (lambda: decoding.hamming_multilabel(3, 2, 4), "high <= k"),
        (lambda: decoding.general(np.ones(3)), "2-D"),
        (lambda: decoding.zero_one(3).with_output_set("cube"), "Polytope"),
    ],
)
def test_bad_input_is_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def _k2_cases():
    """k = 2 versions, brute force over outputs and truths as above."""
    yield decoding.zero_one(2), np.eye(2), np.arange(2), lambda a, y: float(a != y)
    R = _ranks(2)
    P = np.array([_perm_matrix(r) for r in R])
    yield decoding.hamming_ranking(2), P, R, lambda a, y: float(np.sum(R[a] != R[y]))
    yield (
        decoding.absolute(2),
        decoding.absolute(2).output_set.vertices(1),
        np.arange(2),
        lambda a, y: float(abs(a - y)),
    )


@pytest.mark.parametrize("case", list(_k2_cases()), ids=["zero_one", "ranking", "absolute"])
def test_k2_decodings_are_bayes_decisions(case):
    dec, outputs, truths, direct = case
    for t in np.linspace(0.0, 1.0, 21):  # includes the tie t = 1/2
        q = np.array([t, 1 - t])
        u = np.tensordot(q, dec.phi(truths), axes=1)
        risk = [sum(q[y] * direct(a, y) for y in range(2)) for a in range(len(outputs))]
        chosen = dec.decode(u)
        chosen_risk = sum(q[y] * dec.loss(chosen, truths[y : y + 1]) for y in range(2))
        assert chosen_risk <= min(risk) + 1e-12


@pytest.mark.parametrize("scale", [1e-12, 1.0, 1e12])
def test_linear_decodings_ignore_the_scale_of_u(scale):
    """With b = 0 (ranking, Spearman, NDCG) Eq. 11 is invariant to scaling u, huge or tiny."""
    rng = np.random.default_rng(5)
    for dec, shape in (
        (decoding.hamming_ranking(4), (6, 4, 4)),
        (decoding.spearman(5), (6, 5)),
        (decoding.ndcg(5), (6, 5)),
    ):
        u = rng.random(shape)
        np.testing.assert_array_equal(dec.decode(scale * u), dec.decode(u))


def test_permutation_hamming_loss_checks_its_inputs():
    from advgame.metrics import permutation_hamming_loss

    R = np.array([[1, 2, 3], [3, 1, 2]])
    assert permutation_hamming_loss(R, R) == 0.0
    # each row has all 3 items moved: 6 wrong entries of 9, in both rows
    assert permutation_hamming_loss(R, R[::-1]) == pytest.approx(12 / 18)
    with pytest.raises(ValueError, match="truth must hold rank vectors"):
        permutation_hamming_loss([[1, 1, 3]], R[:1])
    with pytest.raises(ValueError, match="must match"):
        permutation_hamming_loss(R, R[:1])
