"""The LP oracle in bulk (issue #22 item 3): a simplex vectorised over rows, certified by duality,
with HiGHS for rows it cannot certify; and ``auto``'s choice between the LP and the vertex table
by the number of rows (:data:`advgame.game.AUTO_TABLE_ROWS_PER_BASIS`)."""

import numpy as np
import pytest
from conftest import assert_game_solution

import advgame as ag
from advgame import oracle as oracle_module
from advgame.benchmarks.oracle import bulk_matrix
from advgame.game import AUTO_LP_CALL_ROWS, AUTO_TABLE_ROWS_PER_BASIS
from advgame.oracle import LPOracle
from advgame.verify import random_potentials
from advgame.vertices import basis_count


def test_bulk_matches_the_vertex_table_at_k10():
    L = bulk_matrix(10)
    F = random_potentials(10, n=3000, seed=0)
    reference = ag.Game(L).value(F, method="vertices")
    assert_game_solution(L, F, *LPOracle(L).solve(F), reference, "bulk k=10")


@pytest.mark.parametrize("kind", ["zero_one", "ordinal", "squared"])
def test_bulk_matches_closed_forms_with_ties(kind):
    game = ag.Game(getattr(ag.losses, kind)(7))
    F = np.random.default_rng(1).integers(-2, 3, size=(500, 7)).astype(float)  # ties
    F[:50] = 0.0  # all tied
    reference = game.value(F, method="closed_form")
    assert_game_solution(game.loss.matrix, F, *LPOracle(game.loss.matrix).solve(F), reference, kind)


@pytest.mark.parametrize("shape", [(1, 4), (2, 6), (6, 2), (5, 3), (3, 9)])
def test_bulk_on_rectangular_matrices(shape):
    L = np.random.default_rng(sum(shape)).uniform(0, 2, size=shape)
    F = random_potentials(shape[1], n=200, seed=2)
    reference = ag.Game(L).value(F, method="vertices")
    assert_game_solution(L, F, *LPOracle(L).solve(F), reference, f"{shape}")


def test_bulk_equals_the_per_row_highs_loop():
    L = bulk_matrix(6, seed=3)
    F = random_potentials(6, n=120, seed=5)
    oracle = LPOracle(L)
    bulk, loop = oracle.solve(F), oracle.solve_each(F)
    np.testing.assert_allclose(bulk[0], loop[0], rtol=1e-12, atol=1e-12)


def test_blands_rule_gives_the_same_answers(monkeypatch):
    """From the first pivot on Bland's rule (no cycling) instead of Dantzig's."""
    L = ag.losses.abstain(5, alpha=0.8).matrix  # degenerate: many tied vertices
    F = np.random.default_rng(2).integers(-1, 2, size=(300, 5)).astype(float)
    reference = ag.Game(L).value(F, method="vertices")
    monkeypatch.setattr(oracle_module, "BLAND_AFTER", 0)
    assert_game_solution(L, F, *LPOracle(L).solve(F), reference, "Bland")


@pytest.mark.parametrize("limit", ["pivots", "certificate"])
def test_uncertified_rows_go_to_highs(monkeypatch, limit):
    """Rows the bulk simplex leaves unsolved or uncertified are solved by HiGHS, exactly."""
    L = bulk_matrix(5, seed=7)
    F = random_potentials(5, n=60, seed=8)
    reference = ag.Game(L).value(F, method="vertices")
    if limit == "pivots":
        monkeypatch.setattr(oracle_module, "_MAX_PIVOTS_PER_VARIABLE", 0)
    else:
        monkeypatch.setattr(oracle_module, "CERTIFICATE_GAP", -1.0)
    calls = []
    original = LPOracle._solve_scaled
    monkeypatch.setattr(
        LPOracle, "_solve_scaled", lambda self, Fs, F: calls.append(len(F)) or original(self, Fs, F)
    )
    assert_game_solution(L, F, *LPOracle(L).solve(F), reference, limit)
    assert calls == [60]


def test_chunks_of_rows(monkeypatch):
    monkeypatch.setattr(oracle_module, "_CHUNK_ENTRIES", 500)  # a few rows per block
    L = bulk_matrix(4, seed=9)
    F = random_potentials(4, n=77, seed=9)
    reference = ag.Game(L).value(F, method="vertices")
    assert_game_solution(L, F, *LPOracle(L).solve(F), reference, "chunks")


def test_single_row_and_empty():
    L = bulk_matrix(4, seed=10)
    oracle = LPOracle(L)
    value, Q, P = oracle.solve(np.zeros((0, 4)))
    assert value.shape == (0,) and Q.shape == (0, 4) and P.shape == (0, 4)
    f = np.array([[0.3, -1.0, 0.3, 0.2]])
    assert_game_solution(L, f, *oracle.solve(f), ag.Game(L).value(f, method="vertices"), "one row")


# ---------------------------------------------------------------------------- auto dispatch
def crossover_rows(l, k):
    return AUTO_TABLE_ROWS_PER_BASIS * basis_count(l, k) - AUTO_LP_CALL_ROWS


def test_auto_uses_the_lp_for_calls_too_small_for_the_table():
    L = bulk_matrix(4, seed=12)  # 69 candidate bases
    threshold = int(np.ceil(crossover_rows(4, 4)))
    game = ag.Game(L)
    assert game.fast_path == "vertices"
    F = random_potentials(4, n=threshold, seed=1)
    reference = ag.Game(L).value(F, method="vertices")
    few = F[: threshold - 1]
    for _ in range(3):  # the rule looks at each call alone
        np.testing.assert_allclose(game.value(few, method="auto"), reference[:-1], rtol=1e-12)
    assert game._table is None  # the LP served these rows
    # predictor and predict of the same rows take the same path
    np.testing.assert_array_equal(
        game.predict(few, method="auto"), np.argmax(game.predictor(few, method="auto"), axis=1)
    )
    np.testing.assert_allclose(game.value(F, method="auto"), reference, rtol=1e-12)
    assert game._table is not None  # this call has rows enough: the table is built
    np.testing.assert_allclose(game.value(few, method="auto"), reference[:-1], rtol=1e-12)
    assert game.value(F[0], method="auto") == pytest.approx(reference[0], rel=1e-12)


def test_auto_builds_a_tiny_table_at_once():
    """At most AUTO_LP_CALL_ROWS candidate bases (3 x 3: 19): the table, even for one row."""
    L = bulk_matrix(3, seed=14)
    assert crossover_rows(3, 3) <= 1
    game = ag.Game(L)
    game.value(np.zeros(3), method="auto")
    assert game._table is not None


def test_auto_builds_the_table_for_many_rows():
    L = bulk_matrix(4, seed=13)
    game = ag.Game(L)
    F = random_potentials(4, n=int(np.ceil(crossover_rows(4, 4))), seed=2)
    P = game.predictor(F, method="auto")
    assert game._table is not None
    value = game.value(F, method="vertices")
    np.testing.assert_allclose((P @ L + F).max(axis=1), value, rtol=1e-9, atol=1e-12)


def test_auto_for_ten_by_ten_and_a_thousand_rows_does_not_build_the_table():
    """The case of the issue: 1,000 rows of a general 10 x 10 matrix go to the bulk LP."""
    L = bulk_matrix(10)
    game = ag.Game(L)
    F = random_potentials(10, n=1000, seed=3)
    value, Q = game.value_and_adversary(F, method="auto")
    assert game._table is None
    attained = (Q @ L.T).min(axis=1) + np.einsum("ij,ij->i", F, Q)
    np.testing.assert_allclose(attained, value, rtol=1e-9, atol=1e-12)
