"""``ag.losses.Bilinear``: every constructor reproduces its loss on the enumerated vertices of its
polytope, counted independently (Hamming by counting differing coordinates, ``|a - y|`` of the
ordinal labels, Spearman's sum of squared rank differences, mismatched items of permutations,
sums of per-node losses); ``__call__`` and ``matrix`` agree with the formula on random data."""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import advgame as ag
from advgame.exceptions import SizeLimitError
from advgame.permutation import hamming_loss_matrix
from advgame.polytopes import Birkhoff, Knapsack, OrderSimplex, Permutahedron, UnitCube

Bilinear = ag.losses.Bilinear


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_hamming_on_the_unit_cube(k):
    V = UnitCube().vertices(k)
    counted = np.array([[np.sum(a != y) for y in V] for a in V], dtype=float)
    np.testing.assert_array_equal(Bilinear.hamming(k).matrix(V), counted)


@pytest.mark.parametrize("k, low, high", [(3, 1, 2), (4, 2, 2), (4, 1, 3)])
def test_hamming_with_a_budget(k, low, high):
    V = Knapsack(low, high).vertices(k)
    counted = np.array([[np.sum(a != y) for y in V] for a in V], dtype=float)
    np.testing.assert_array_equal(Bilinear.hamming(k).matrix(V), counted)


@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_absolute_error_on_the_order_simplex(k):
    V = OrderSimplex().vertices(k - 1)  # row y - 1 is label y: y - 1 leading ones
    labels = 1 + V.sum(axis=1)
    np.testing.assert_array_equal(labels, np.arange(1, k + 1))
    expected = np.abs(labels[:, None] - labels[None, :])
    np.testing.assert_array_equal(Bilinear.absolute(k).matrix(V), expected)
    np.testing.assert_array_equal(Bilinear.absolute(k).matrix(V), ag.losses.ordinal(k).matrix)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_spearman_on_the_permutahedron(k):
    V = Permutahedron(np.arange(1.0, k + 1)).vertices(k)
    expected = np.array([[sum((x - z) ** 2 for x, z in zip(a, y)) for y in V] for a in V])
    np.testing.assert_array_equal(Bilinear.spearman(k).matrix(V), expected)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_permutation_hamming_on_birkhoff(k):
    perms = list(itertools.permutations(range(k)))
    V = Birkhoff().vertices(k).reshape(-1, k * k)  # itertools.permutations order
    expected = np.array([[sum(i != j for i, j in zip(p, q)) for q in perms] for p in perms])
    np.testing.assert_array_equal(Bilinear.permutation_hamming(k).matrix(V), expected)
    if k >= 2:
        np.testing.assert_array_equal(
            Bilinear.permutation_hamming(k).matrix(V), hamming_loss_matrix(k)
        )


@pytest.mark.parametrize("n_nodes, k", [(1, 3), (2, 2), (3, 3)])
def test_node_additive(n_nodes, k):
    rng = np.random.default_rng(n_nodes)
    L = rng.integers(0, 5, size=(k, k)).astype(float)
    w = rng.uniform(0.5, 2.0, size=n_nodes)
    labelings = list(itertools.product(range(k), repeat=n_nodes))
    V = np.array([np.eye(k)[list(y)].ravel() for y in labelings])
    expected = np.array(
        [[sum(w[i] * L[a[i], y[i]] for i in range(n_nodes)) for y in labelings] for a in labelings]
    )
    np.testing.assert_allclose(
        Bilinear.node_additive(L, n_nodes, w).matrix(V), expected, rtol=1e-14
    )
    plain = Bilinear.node_additive(ag.losses.zero_one(k), n_nodes)
    hamming = np.array([[sum(i != j for i, j in zip(a, y)) for y in labelings] for a in labelings])
    np.testing.assert_array_equal(plain.matrix(V), hamming)


@given(
    st.integers(1, 4).flatmap(
        lambda d: st.tuples(
            arrays(float, (d, d), elements=st.floats(-5, 5)),
            arrays(float, d, elements=st.floats(-5, 5)),
            arrays(float, d, elements=st.floats(-5, 5)),
            st.floats(-5, 5),
            arrays(float, (3, d), elements=st.floats(-2, 2)),
            arrays(float, (3, d), elements=st.floats(-2, 2)),
        )
    )
)
def test_call_and_matrix_follow_the_formula(data):
    M, u, v, c, A, Y = data
    loss = Bilinear(M, u, v, c)
    by_hand = np.array([c + u @ a + v @ y + a @ M @ y for a, y in zip(A, Y)])
    np.testing.assert_allclose(loss(A, Y), by_hand, atol=1e-12)
    assert loss(A[0], Y[0]) == pytest.approx(by_hand[0], abs=1e-12)
    np.testing.assert_allclose(loss(A[0], Y), [c + u @ A[0] + v @ y + A[0] @ M @ y for y in Y])
    table = loss.matrix(np.vstack([A, Y]))
    np.testing.assert_allclose(table[:3, 3:].diagonal(), by_hand, atol=1e-12)


def test_attributes_and_repr():
    loss = Bilinear(np.eye(2), c=1)
    assert loss.dim == 2 and loss.c == 1.0
    np.testing.assert_array_equal(loss.u, 0.0)
    with pytest.raises(ValueError):
        loss.M[0, 0] = 3.0  # read-only
    assert repr(Bilinear.hamming(3)) == "Bilinear.hamming(3)"
    assert "d=2" in repr(loss)
    assert isinstance(loss([1.0, 0.0], [0.0, 1.0]), float)


@pytest.mark.parametrize(
    "call",
    [
        lambda: Bilinear(np.ones((2, 3))),
        lambda: Bilinear(np.ones(3)),
        lambda: Bilinear(np.zeros((0, 0))),
        lambda: Bilinear([[np.nan]]),
        lambda: Bilinear(np.eye(2), u=np.ones(3)),
        lambda: Bilinear(np.eye(2), v=[np.inf, 0.0]),
        lambda: Bilinear(np.eye(2), c=np.nan),
        lambda: Bilinear(np.eye(2), name=3),
        lambda: Bilinear.hamming(0),
        lambda: Bilinear.absolute(1),
        lambda: Bilinear.spearman(True),
        lambda: Bilinear.node_additive(np.ones((2, 3)), 2),
        lambda: Bilinear.node_additive(np.eye(2), 2, weights=[1.0]),
        lambda: Bilinear(np.eye(2))(np.ones((2, 2)), np.ones((3, 2))),
        lambda: Bilinear(np.eye(2))(np.ones(3), np.ones(2)),
        lambda: Bilinear(np.eye(2)).matrix(np.ones((2, 3))),
    ],
)
def test_validation(call):
    with pytest.raises(ValueError):
        call()


def test_size_limits():
    with pytest.raises(SizeLimitError):
        Bilinear.permutation_hamming(65)  # 65^2 > MAX_LABELS
    with pytest.raises(SizeLimitError):
        Bilinear.hamming(1).matrix(np.zeros((ag.losses.MAX_LABELS + 1, 1)))
