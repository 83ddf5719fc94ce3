"""The speed measurements of ``advgame bench train`` (issue #22) on tiny sizes: the per-loss
objective+gradient records and the squared closed-form timing.  No wall-clock assertion: only
that every figure is measured and is a positive ratio / time, and that the fast closed forms the
solver relies on agree with the exact game."""

import numpy as np
import pytest

import advgame as ag
from advgame import closed_forms
from advgame.benchmarks import train


def test_loss_evaluation_records_cover_every_loss_and_size():
    sizes = ((200, 10, 5), (300, 8, 4))
    records = train.loss_evaluation_records(sizes)
    assert [(r["loss"], r["n"], r["k"]) for r in records] == [
        (loss, n, k) for n, _, k in sizes for loss in train.EVAL_LOSSES
    ]
    for r in records:
        assert r["eval ms"] > 0 and r["two GEMMs ms"] > 0
        assert r["eval / GEMMs"] == pytest.approx(r["eval ms"] / r["two GEMMs ms"])


@pytest.mark.parametrize("k", [3, 10])
def test_squared_microseconds_per_row_is_measured(k):
    assert train.squared_microseconds(k, rows=50) > 0


def test_full_settings_measure_the_issue_sizes():
    assert train.FULL.eval_sizes == ((1_000, 100, 10), (20_000, 100, 10))
    assert train.FULL.classification_rows == (2_000, 20_000, 200_000)
    assert {"digits", "optdigits", "satimage", "segment"} <= set(train.FULL.problems)
    assert train.SQUARED_K == (10, 100)


@pytest.mark.parametrize("k", [2, 7, 40])
def test_the_smoothing_gives_the_exact_zero_one_value_for_free(k):
    """``V = top + u + c``: the level of the first water-filling is Theorem 5's value, so the
    smoothed evaluation certifies without a second closed-form call."""
    F = np.random.default_rng(k).normal(size=(300, k)) * 3.0
    F[:30, -1] = F[:30, 0]
    for weight in (1.0, 0.4):
        _, _, (top, u, _) = closed_forms.zero_one_quadratic_smoothing(
            F, 0.01, weight, return_levels=True
        )
        np.testing.assert_allclose(
            top + u + weight, closed_forms.zero_one(F, weight)[0], atol=1e-12
        )


def test_the_smoothed_adversary_solves_its_lp_relaxation_on_one_row():
    """One row against the cvxpy program ``max f^T q + c (1 - t) - mu/2 ||q||^2, q <= t``."""
    cp = pytest.importorskip("cvxpy")
    f = np.array([0.3, -1.0, 0.29, 2.0, 1.7])
    c, mu = 2.5, 0.3
    q, t = cp.Variable(5, nonneg=True), cp.Variable()
    problem = cp.Problem(
        cp.Maximize(f @ q + c * (1 - t) - mu / 2 * cp.sum_squares(q)), [cp.sum(q) == 1, q <= t]
    )
    problem.solve(solver=cp.CLARABEL)
    value, Q = closed_forms.zero_one_quadratic_smoothing(f[None], mu, c)
    assert value[0] == pytest.approx(problem.value, abs=1e-7)
    np.testing.assert_allclose(Q[0], q.value, atol=1e-6)
    assert ag.Game(ag.losses.zero_one(5, c)).value(f) >= value[0]


@pytest.mark.parametrize("k", [1, 2, 3, 7, 25, 60])
def test_squared_hull_matches_the_vertex_table(k):
    """The O(k) hull search (issue #22: below O(k^2) per row) against Theorem 7's vertex table,
    on continuous and integer (tied) potentials; q* attains the value."""
    rng = np.random.default_rng(k)
    F = rng.normal(size=(40, k)) * rng.uniform(0.1, 2.0 * k, size=(40, 1))
    F[:15] = np.round(F[:15])
    F[15] = 0.0
    for weight in (1.0, 0.3):
        value, Q = closed_forms.squared(F, weight)
        Qv, v = closed_forms.squared_vertices(k, weight)
        np.testing.assert_allclose(value, np.max(F @ Qv.T + v, axis=1), rtol=1e-12, atol=1e-12)
        L = weight * (np.arange(k)[:, None] - np.arange(k)[None, :]) ** 2.0
        attained = np.min(Q @ L.T, axis=1) + np.einsum("ij,ij->i", F, Q)
        np.testing.assert_allclose(attained, value, rtol=1e-12, atol=1e-12)
        P = closed_forms.squared_predictor(F, weight)
        np.testing.assert_allclose(np.max(P @ L + F, axis=1), value, rtol=1e-9, atol=1e-9)
