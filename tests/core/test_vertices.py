"""Extreme points of ``C = {(q, v) : L q >= v 1, q in simplex}`` and vertex tables.

The enumeration (Fathony et al. 2018a Proposition 4, automated) must reproduce the sets ``D`` of Theorems 5,
6, 7 and 12 for the structured losses, every point it returns must be a genuine extreme point,
and a vertex table must solve the game exactly (against the LP) for general matrices.
"""

from math import comb

import numpy as np
import pytest

import advgame as ag
from advgame import closed_forms
from advgame.verify import random_potentials
from advgame.vertices import basis_count, enumerate_extreme_points

RTOL = 1e-9
KS = range(2, 9)

# name, loss constructor, theorem vertex set, expected count
STRUCTURED = {
    "zero_one": (ag.losses.zero_one, closed_forms.zero_one_vertices, lambda k: 2**k - 1),
    "ordinal": (ag.losses.ordinal, closed_forms.ordinal_vertices, lambda k: k * (k + 1) // 2),
    "squared": (
        ag.losses.squared,
        closed_forms.squared_vertices,
        lambda k: k + (k + 1) * k * (k - 1) // 6,
    ),
    "abstain1/3": (
        lambda k: ag.losses.abstain(k, alpha=1 / 3),
        lambda k: closed_forms.abstain_vertices(k, 1 / 3),
        lambda k: k * k,
    ),
    "abstain1/2": (
        lambda k: ag.losses.abstain(k, alpha=0.5),
        lambda k: closed_forms.abstain_vertices(k, 0.5),
        lambda k: k * (k + 1) // 2,
    ),
    "abstain0": (
        lambda k: ag.losses.abstain(k, alpha=0.0),
        lambda k: closed_forms.abstain_vertices(k, 0.0),
        lambda k: k,
    ),
}


def point_set(Q, v):
    """The vertex table as a set of rounded points ``(q, v)``."""
    points = np.round(np.c_[Q, v], 9) + 0.0  # + 0.0 turns -0.0 into 0.0
    return {tuple(p) for p in points}


def assert_extreme_points(L, Q, v):
    """Every ``(q, v)`` is in ``C``, has ``v = min(L q)`` and active constraints of rank k + 1."""
    l, k = L.shape
    tol = 1e-9 * max(L.max(), 1.0)
    assert Q.shape[1] == k and v.shape == (Q.shape[0],)
    assert np.all(Q >= -1e-12)
    np.testing.assert_allclose(Q.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(v, (Q @ L.T).min(axis=1), rtol=0, atol=tol)
    for q, value in zip(Q, v):
        tight_losses = np.abs(L @ q - value) <= tol
        zero_coords = q <= 1e-12
        active = np.vstack(
            [
                np.c_[L[tight_losses], -np.ones(tight_losses.sum())],
                np.c_[np.eye(k)[zero_coords], np.zeros(zero_coords.sum())],
                np.r_[np.ones(k), 0.0][None, :],
            ]
        )
        assert np.linalg.matrix_rank(active) == k + 1, (q, value)


def assert_close(actual, reference, L, what, rtol=RTOL):
    scale = np.maximum(np.maximum(1.0, np.abs(reference)), L.max())
    err = np.abs(np.asarray(actual) - reference) / scale
    assert np.all(err <= rtol), f"{what}: relative error {err.max():.3e}"


# ------------------------------------------------------------------- structured: theorem sets
@pytest.mark.parametrize("name", list(STRUCTURED))
@pytest.mark.parametrize("k", KS)
def test_enumeration_reproduces_theorem_vertex_sets(name, k):
    make_loss, theorem, count = STRUCTURED[name]
    L = make_loss(k).matrix
    Q, v = enumerate_extreme_points(L)
    Qt, vt = theorem(k)
    assert len(v) == count(k)
    assert len(vt) == count(k)
    assert len(point_set(Qt, vt)) == count(k)  # the theorem's points are distinct
    assert point_set(Q, v) == point_set(Qt, vt)
    assert_extreme_points(L, Q, v)
    assert_extreme_points(L, Qt, vt)


@pytest.mark.parametrize("name", list(STRUCTURED))
def test_game_extreme_points_are_the_theorem_sets(name):
    make_loss, theorem, count = STRUCTURED[name]
    k = 5
    Q, v = ag.Game(make_loss(k)).extreme_points()
    assert point_set(Q, v) == point_set(*theorem(k))
    assert len(v) == count(k)


@pytest.mark.parametrize("weight", [0.1, 0.2])
def test_abstain_half_vertex_table_is_distinct_for_any_weight(weight):
    """Regression: alpha recognised as 0.49999999999999994 gave 16 near-duplicate points."""
    k = 4
    Q, v = ag.Game(ag.losses.abstain(k, alpha=0.5, weight=weight)).extreme_points()
    assert len(v) == k * (k + 1) // 2


@pytest.mark.parametrize("weight", [0.5, 3.0])
@pytest.mark.parametrize("kind", ["zero_one", "ordinal", "squared"])
def test_weighted_theorem_sets_scale_v_only(kind, weight):
    """Theorem 8: the extreme points of ``c L`` are those of ``L`` with ``v`` times ``c``."""
    k = 5
    L = getattr(ag.losses, kind)(k, weight=weight).matrix
    Q, v = enumerate_extreme_points(L)
    Qt, vt = getattr(closed_forms, f"{kind}_vertices")(k, weight)
    Q1, v1 = getattr(closed_forms, f"{kind}_vertices")(k)
    assert point_set(Q, v) == point_set(Qt, vt)
    assert point_set(Qt, vt) == point_set(Q1, weight * v1)


def test_abstain_weighted_theorem_set():
    L = ag.losses.abstain(4, alpha=0.25, weight=2.0).matrix
    assert point_set(*enumerate_extreme_points(L)) == point_set(
        *closed_forms.abstain_vertices(4, 0.25, weight=2.0)
    )


def test_enumeration_is_sorted_by_v():
    _, v = enumerate_extreme_points(ag.losses.squared(6).matrix)
    assert np.all(np.diff(v) >= -1e-12)
    assert v[0] == 0.0


def test_extreme_points_returns_copies():
    game = ag.Game(ag.losses.ordinal(4))
    Q, v = game.extreme_points()
    Q[:] = 0.0
    v[:] = -1.0
    Q2, v2 = game.extreme_points()
    assert np.all(v2 >= 0) and np.allclose(Q2.sum(axis=1), 1.0)


@pytest.mark.parametrize("l, k", [(1, 2), (2, 2), (3, 5), (5, 3), (8, 8), (9, 8), (14, 14)])
def test_basis_count(l, k):
    assert basis_count(l, k) == sum(comb(k, r) * comb(l, r) for r in range(1, min(k, l) + 1))


# ------------------------------------------------------------------- general matrices vs LP
def random_loss(k, variant, seed):
    rng = np.random.default_rng(seed)
    L = rng.uniform(0, 3, size=(k, k))
    if variant == "zeros":
        L[rng.random((k, k)) < 0.3] = 0.0
        np.fill_diagonal(L, 0.0)
    elif variant == "duplicated":
        L = np.vstack([L, L[rng.integers(0, k, size=2)]])
    elif variant == "integers":  # small integer losses: many degenerate (tied) vertices
        L = rng.integers(0, 3, size=(k, k)).astype(float)
        L[0, 1] = 1.0  # never all zero
    return L


def check_vertex_method(L, F):
    game = ag.Game(L)
    value = game.value(F, method="vertices")
    lp = game.value(F, method="lp")
    assert_close(value, lp, L, "vertex table vs LP")
    Q = game.adversary(F, method="vertices")
    assert_close((Q @ L.T).min(axis=1) + np.sum(F * Q, axis=1), value, L, "q* certificate")
    P = game.predictor(F, method="vertices")
    assert P.shape == (F.shape[0], L.shape[0])
    assert np.all(P >= -1e-12)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert_close((P @ L + F).max(axis=1), value, L, "p* certificate")
    return game


@pytest.mark.parametrize("variant", ["uniform", "zeros", "duplicated", "integers"])
@pytest.mark.parametrize("k", KS)
def test_vertex_table_matches_lp_on_cost_sensitive_matrices(k, variant):
    L = random_loss(k, variant, seed=100 * k + len(variant))
    F = random_potentials(k, n=60, seed=k)
    game = check_vertex_method(L, F)
    Q, v = game.extreme_points()
    assert_extreme_points(L, Q, v)
    assert point_set(Q, v) == point_set(*enumerate_extreme_points(L))


@pytest.mark.parametrize(
    "constants",
    [[0.3], [0.5], [0.7], [0.95], [1.4], [0.2, 0.8], [0.6, 0.9], [0.5, 0.5]],
    ids=lambda c: "+".join(map(str, c)),
)
@pytest.mark.parametrize("k", [2, 3, 5, 6])
def test_vertex_table_matches_lp_on_abstain_like_matrices(k, constants):
    L = np.vstack([1 - np.eye(k), np.repeat(np.array(constants)[:, None], k, axis=1)])
    F = random_potentials(k, n=60, seed=k + len(constants))
    check_vertex_method(L, F)
    assert_extreme_points(L, *ag.Game(L).extreme_points())


@pytest.mark.parametrize("alpha", [0.6, 0.75, 1.0])
def test_abstain_large_alpha_uses_the_vertex_table(alpha):
    k = 5
    game = ag.Game(ag.losses.abstain(k, alpha=alpha, weight=2.0))
    assert game.fast_path == "vertices"
    F = random_potentials(k, n=80, seed=3)
    check_vertex_method(game.loss.matrix, F)


@pytest.mark.parametrize("shape", [(2, 5), (3, 6), (6, 3), (1, 4)])
def test_vertex_table_matches_lp_on_rectangular_matrices(shape):
    rng = np.random.default_rng(sum(shape))
    L = rng.uniform(0, 2, size=shape)
    F = random_potentials(shape[1], n=40, seed=1)
    check_vertex_method(L, F)


def test_vertex_table_chunks_many_rows():
    """More rows than one score block holds: the chunked evaluation equals the closed form."""
    k = 12  # 4095 vertices, so a block holds ~1000 rows
    game = ag.Game(ag.losses.zero_one(k))
    F = random_potentials(k, n=2500, seed=5)
    value = game.value(F, method="vertices")
    np.testing.assert_allclose(value, game.value(F, method="closed_form"), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", ["zero_one", "ordinal", "squared"])
def test_vertex_method_on_structured_matrices_matches_closed_form(kind):
    k = 6
    game = ag.Game(getattr(ag.losses, kind)(k, weight=1.5))
    F = random_potentials(k, n=100, seed=11)
    value = game.value(F, method="vertices")
    assert_close(value, game.value(F, method="closed_form"), game.loss.matrix, "vertices")
    P = game.predictor(F, method="vertices")
    assert_close((P @ game.loss.matrix + F).max(axis=1), value, game.loss.matrix, "p*")


# ----------------------------------------------------------------------------------- limits
def test_size_limit_for_a_large_general_matrix():
    L = np.random.default_rng(0).uniform(0, 1, size=(14, 14))
    game = ag.Game(L)
    assert game.fast_path is None
    with pytest.raises(ag.SizeLimitError, match=r"max_bases"):
        enumerate_extreme_points(L)
    with pytest.raises(ag.SizeLimitError, match=r"Game.vertex_table"):
        game.value(np.zeros(14), method="vertices")
    with pytest.raises(ag.SizeLimitError):
        game.extreme_points()
    # the LP still works, and auto uses it
    assert game.value(np.zeros(14)) == pytest.approx(game.value(np.zeros(14), method="lp"))


def test_size_limit_with_small_max_bases():
    L = np.random.default_rng(1).uniform(0, 1, size=(4, 4))
    assert basis_count(4, 4) == 69
    with pytest.raises(ag.SizeLimitError, match=r"max_bases=10"):
        enumerate_extreme_points(L, max_bases=10)
    Q, v = enumerate_extreme_points(L, max_bases=69)  # exactly at the limit is allowed
    assert_extreme_points(L, Q, v)


def test_size_limit_is_a_value_error():
    assert issubclass(ag.SizeLimitError, ValueError)
    assert issubclass(ag.NotApplicableError, ValueError)
    assert issubclass(ag.SolverError, RuntimeError)


@pytest.mark.parametrize(
    "build",
    [
        lambda: closed_forms.zero_one_vertices(25),
        lambda: closed_forms.ordinal_vertices(3000),
        lambda: closed_forms.squared_vertices(300),
    ],
    ids=["zero_one-25", "ordinal-3000", "squared-300"],
)
def test_theorem_vertex_tables_refuse_huge_sizes(build):
    with pytest.raises(ag.SizeLimitError, match=r"extreme points"):
        build()


def test_zero_one_game_with_25_labels_refuses_vertex_table():
    game = ag.Game(ag.losses.zero_one(25))
    with pytest.raises(ag.SizeLimitError):
        game.extreme_points()
    f = np.linspace(-1, 1, 25)
    assert game.value(f) == pytest.approx(game.value(f, method="lp"), rel=1e-9)


def test_abstain_vertices_refuses_before_allocating(monkeypatch):
    import tracemalloc

    monkeypatch.setattr(closed_forms, "MAX_THEOREM_VERTICES", 1000)
    k = 200  # 40,000 > 1,000 points; the full table would be 40,000 x 200 floats = 64 MB
    tracemalloc.start()
    try:
        with pytest.raises(ag.SizeLimitError):
            closed_forms.abstain_vertices(k, 0.3)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16e6, f"allocated {peak / 1e6:.0f} MB before refusing"
