"""The LP oracle is exact at every scale (issue #23): the game is scaled to O(1) numbers before
any solver sees it.  Checked against the closed forms and the vertex table from 1e-300 to 1e300,
for the bulk simplex and for the per-row HiGHS path."""

import numpy as np
import pytest
from conftest import assert_game_solution
from hypothesis import given, settings
from hypothesis import strategies as st

import advgame as ag
from advgame.oracle import LPOracle, scale_matrix, scale_potentials
from advgame.verify import random_potentials

SCALES = [1e-300, 1e-200, 1e-100, 1e-10, 1e-8, 1.0, 1e8, 1e15, 1e100, 1e200, 1e300]
CLOSED_FORM_LOSSES = {
    "zero_one": ag.losses.zero_one,
    "ordinal": ag.losses.ordinal,
    "squared": ag.losses.squared,
    "abstain": lambda k: ag.losses.abstain(k, alpha=0.3),
}
RTOL = 1e-9


def both_paths(L):
    oracle = LPOracle(L)
    return {"bulk": oracle.solve, "per-row HiGHS": oracle.solve_each}


# ------------------------------------------------------------------------- the cases
def test_zero_one_at_1e_minus_10():
    """Was off by a relative factor of 49 (HiGHS' absolute tolerances at 1e-10)."""
    L = 1e-10 * (1 - np.eye(4))
    F = 1e-10 * random_potentials(4, n=200, seed=0)
    reference = ag.Game(ag.LossMatrix(L)).value(F, method="closed_form")
    np.testing.assert_allclose(
        ag.Game(ag.LossMatrix(L)).value(F, method="lp"), reference, rtol=RTOL
    )


def test_general_matrix_at_1e_minus_8():
    """Was 1.9 % off."""
    G = np.random.default_rng(6).random((5, 5))
    F = random_potentials(5, n=200, seed=1)
    reference = 1e-8 * ag.Game(G).value(F, method="vertices")
    value = ag.Game(1e-8 * G).value(1e-8 * F, method="lp")
    assert np.max(np.abs(value - reference) / np.maximum(np.abs(reference), 1e-8)) <= RTOL


def test_tiny_loss_scale_keeps_the_value():
    """At loss scale 1e-300 the LP returned 1e-300 where the value is 2e-300."""
    L = 1e-300 * (1 - np.eye(2)) * 4  # zero-one of weight 4e-300: value(0) = 2e-300
    value = ag.Game(L).value(np.zeros(2), method="lp")
    assert value == pytest.approx(2e-300, rel=1e-12)


@pytest.mark.parametrize("scale", [1e15, 1e100, 1e300])
def test_huge_loss_scales_are_solved(scale):
    """At loss scales >= 1e15 the LP failed with SolverError (status 'Empty')."""
    game = ag.Game(scale * ag.losses.zero_one(4).matrix)
    F = scale * random_potentials(4, n=40, seed=2)
    np.testing.assert_allclose(
        game.value(F, method="lp"), game.value(F, method="auto"), rtol=RTOL, atol=0
    )


# ------------------------------------------------------------------------ the scaling itself
@pytest.mark.parametrize("scale", SCALES)
def test_scaled_matrix_is_in_the_unit_interval_and_exact(scale):
    L = scale * np.random.default_rng(0).uniform(0.5, 3.0, (3, 4))
    Ls, low, s = scale_matrix(L)
    assert Ls.min() == 0.0 and 0.5 < Ls.max() <= 1.0
    assert np.frexp(s)[0] == 0.5  # a power of two: dividing by it is exact
    np.testing.assert_allclose(Ls * s + low, L, rtol=1e-15)


def test_scaled_potentials_are_clipped_and_never_nan():
    big = np.finfo(float).max
    F = np.array([[big, -big, 0.0], [1e-300, 0.0, -1e-300]])
    Fs, top = scale_potentials(F, 2.0**-1000)
    assert np.all(np.isfinite(Fs)) and Fs.max(axis=1).tolist() == [0.0, 0.0]
    assert Fs.min() == -2.0
    np.testing.assert_array_equal(top, [big, 1e-300])


# ----------------------------------------------------------------------------- every scale
@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("kind", sorted(CLOSED_FORM_LOSSES))
def test_lp_matches_closed_forms_at_every_scale(kind, scale):
    k = 5
    unit = ag.Game(CLOSED_FORM_LOSSES[kind](k))
    F = random_potentials(k, n=80, seed=3)
    reference = scale * unit.value(F, method="closed_form")
    L = scale * unit.loss.matrix
    for path, solve in both_paths(L).items():
        value, Q, P = solve(scale * F)
        assert_game_solution(L, scale * F, value, Q, P, reference, f"{kind} x{scale:g} {path}")


@pytest.mark.parametrize("scale", SCALES)
def test_lp_matches_the_vertex_table_at_every_scale(scale):
    G = np.random.default_rng(11).uniform(0.0, 2.0, (4, 5))
    F = random_potentials(5, n=80, seed=4)
    reference = scale * ag.Game(G).value(F, method="vertices")
    L = scale * G
    for path, solve in both_paths(L).items():
        value, Q, P = solve(scale * F)
        assert_game_solution(L, scale * F, value, Q, P, reference, f"general x{scale:g} {path}")
    # and the vertex table of the scaled matrix itself, predictor included
    game = ag.Game(L)
    value = game.value(scale * F, method="vertices")
    P = game.predictor(scale * F, method="vertices")
    Q = game.adversary(scale * F, method="vertices")
    assert_game_solution(L, scale * F, value, Q, P, reference, f"vertex table x{scale:g}")


@st.composite
def scaled_games(draw):
    """A loss (closed form or small general integer matrix), k in 2..5, a scale 1e-300..1e300
    and integer potentials (ties everywhere) at the same scale."""
    k = draw(st.integers(2, 5))
    kind = draw(st.sampled_from(sorted(CLOSED_FORM_LOSSES) + ["general"]))
    if kind == "general":
        l = draw(st.integers(1, 4))
        entries = st.lists(st.integers(0, 4), min_size=l * k, max_size=l * k)
        G = np.array(draw(entries), dtype=float).reshape(l, k)
        if G.max() == 0:
            G[0, 0] = 1.0
    else:
        G = CLOSED_FORM_LOSSES[kind](k).matrix
    n = draw(st.integers(1, 6))
    F = np.array(draw(st.lists(st.integers(-3, 3), min_size=n * k, max_size=n * k)), float)
    exponent = draw(st.integers(-300, 300))
    return kind, G, F.reshape(n, k), 10.0**exponent


@settings(max_examples=150, deadline=None)
@given(scaled_games())
def test_lp_is_exact_at_any_scale_with_ties(case):
    kind, G, F, scale = case
    unit = ag.Game(G)
    reference_method = "closed_form" if kind != "general" else "vertices"
    reference = scale * unit.value(F, method=reference_method)
    L = scale * G
    for path, solve in both_paths(L).items():
        value, Q, P = solve(scale * F)
        assert_game_solution(L, scale * F, value, Q, P, reference, f"{kind} x{scale:g} {path}")


@pytest.mark.parametrize("scale", [1e-300, 1.0, 1e300])
def test_k2_and_potentials_far_beyond_the_loss_scale(scale):
    """k = 2, and potentials 1e6 times the loss scale (most labels clipped)."""
    L = scale * np.array([[0.0, 1.0], [3.0, 0.0], [0.5, 0.5]])
    F = scale * np.array([[0.0, 0.0], [1e6, 0.0], [-1e6, 1e6], [0.25, -0.25], [1.0, 1.0]])
    reference = scale * ag.Game(L / scale).value(F / scale, method="vertices")
    for path, solve in both_paths(L).items():
        value, Q, P = solve(F)
        assert_game_solution(L, F, value, Q, P, reference, f"k=2 x{scale:g} {path}")
