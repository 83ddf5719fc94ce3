"""The closed forms' kernels (issue #22, evaluation speed).

The zero-one game and its quadratic smoothing find their water levels by Newton's method instead
of a sort and the squared game's vertex comes from an upper concave hull, each compiled per row
(:mod:`advgame._kernels`); every closed form works on ``F.T``.  Each is checked here against an
independent sort-based or brute-force reference (ties, huge and tiny potentials, ``k = 1, 2``),
for both memory orders of ``F``, and the squared hull on deep stacks against the vertex table.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import advgame as ag
from advgame import closed_forms, solvers
from advgame.features import TRANSPOSED_FORWARD_ENTRIES, Multiclass

FLOATS = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
TINY = st.floats(-1e-300, 1e-300, allow_nan=False, allow_infinity=False)
QUARTERS = st.integers(-16, 16).map(lambda i: i / 4)
HUGE = st.sampled_from([1e300, -1e300, 1e308, -1e308, 0.0])
ELEMENTS = st.one_of(FLOATS, QUARTERS, QUARTERS, TINY)


@st.composite
def potentials(draw, k_min=1, k_max=12, elements=ELEMENTS):
    k = draw(st.integers(k_min, k_max))
    n = draw(st.integers(1, 5))
    values = draw(st.lists(elements, min_size=n * k, max_size=n * k))
    F = np.array(values, dtype=np.float64).reshape(n, k)
    return np.asfortranarray(F) if draw(st.booleans()) else F


def sorted_levels(F, mu, c):
    """``V``, ``u`` and ``tau`` of the (smoothed) zero-one game by the prefix sums of the sorted
    potentials (the former sort-based kernel), row by row."""
    V, U, T = [], [], []
    for f in F:
        top = f.max()
        s = np.sort(f - top)[::-1]
        m = np.arange(1, s.size + 1)
        u = np.max((np.cumsum(s) - c) / m)
        tau = np.max((np.cumsum(np.minimum(s, u)) - mu) / m)
        V.append(top + u + c)
        U.append(u)
        T.append(tau)
    return np.array(V), np.array(U), np.array(T)


@settings(max_examples=200, deadline=None)
@given(F=potentials(), c=st.sampled_from([0.5, 1.0, 3.0]), mu=st.sampled_from([1e-3, 0.1, 2.0]))
def test_water_levels_match_the_sorted_prefix_levels(F, c, mu):
    value, Q = closed_forms.zero_one(F, c)
    V, u, tau = sorted_levels(F, mu, c)
    scale = np.maximum(1.0, np.abs(F).max(axis=1))
    assert np.all(np.abs(value - V) <= 1e-12 * scale)
    # q* is uniform on a set of largest potentials that attains the value
    assert np.allclose(Q.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    attained = (F * Q).sum(axis=1) + c * (1.0 - Q.max(axis=1))
    assert np.all(np.abs(attained - V) <= 1e-12 * scale)
    _, Qmu, (top, u_mu, tau_mu) = closed_forms.zero_one_quadratic_smoothing(F, mu, c, True)
    assert np.all(np.abs(top + u_mu + c - V) <= 1e-12 * scale)
    assert np.all(np.abs(tau_mu - tau) <= 1e-12 * scale)
    expected = np.maximum(np.minimum(F - top[:, None], u[:, None]) - tau[:, None], 0.0) / mu
    assert np.allclose(Qmu, expected, rtol=0, atol=1e-12 * scale.max() / mu)


@settings(max_examples=100, deadline=None)
@given(F=potentials(k_min=2, elements=st.one_of(QUARTERS, HUGE)))
def test_huge_and_tied_potentials_stay_finite(F):
    with np.errstate(over="ignore"):  # gaps of 2e308 overflow (and are clipped), as before
        results = (closed_forms.zero_one(F), closed_forms.zero_one_quadratic_smoothing(F, 0.1))
    for value, Q in results:
        assert np.all(np.isfinite(value)) and np.all(np.isfinite(Q))
        np.testing.assert_allclose(Q.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        assert np.all(value <= F.max(axis=1) + 1.0 + 1e-12 * np.abs(F).max(axis=1))


@pytest.mark.parametrize("kind", ["zero_one", "ordinal", "squared", "abstain"])
def test_memory_order_does_not_change_the_results(kind):
    rng = np.random.default_rng(3)
    F = np.round(rng.normal(size=(200, 7)) * 4) / 4  # ties
    game = ag.Game(ag.losses.abstain(7, 0.3) if kind == "abstain" else getattr(ag.losses, kind)(7))
    for a, b in zip(game.value_and_adversary(F), game.value_and_adversary(np.asfortranarray(F))):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(game.predictor(F), game.predictor(np.asfortranarray(F)))


@pytest.mark.parametrize("k", [2, 3, 20, 40])
def test_squared_hull_agrees_with_the_vertex_table(k):
    """Concave potentials make every label a hull vertex (deep stacks, long pop chains)."""
    rng = np.random.default_rng(k)
    labels = np.arange(k)
    F = np.vstack(
        [
            -1.5 * labels**2 + rng.normal(size=(20, k)) * 0.01,  # deep hulls
            rng.normal(size=(20, k)) * k,
            np.round(rng.normal(size=(20, k)) * k),  # ties
            np.zeros((1, k)),
        ]
    )
    value, Q = closed_forms.squared(F, 0.7)
    Qv, v = closed_forms.squared_vertices(k, 0.7)
    np.testing.assert_allclose(value, np.max(F @ Qv.T + v, axis=1), rtol=1e-12, atol=1e-12)
    match = np.abs(Q[:, None, :] - Qv[None]).sum(axis=2).argmin(axis=1)  # q* is a vertex
    np.testing.assert_allclose(Q, Qv[match], rtol=0, atol=1e-12)
    np.testing.assert_allclose((F * Qv[match]).sum(axis=1) + v[match], value, rtol=1e-12, atol=1e-9)


@settings(max_examples=100, deadline=None)
@given(F=potentials(k_min=2, k_max=9, elements=st.one_of(QUARTERS, FLOATS)))
def test_ordinal_abstain_and_squared_pick_a_best_vertex(F):
    k = F.shape[1]
    scale = np.maximum(1.0, np.abs(F).max(axis=1))
    for value, Q, (Qv, v) in (
        (*closed_forms.ordinal(F), closed_forms.ordinal_vertices(k)),
        (*closed_forms.squared(F), closed_forms.squared_vertices(k)),
        (*closed_forms.abstain(F, 0.3), closed_forms.abstain_vertices(k, 0.3)),
    ):
        assert np.all(np.abs(value - np.max(F @ Qv.T + v, axis=1)) <= 1e-9 * scale)
        distance = np.abs(Q[:, None, :] - Qv[None]).sum(axis=2).min(axis=1)
        assert np.all(distance <= 1e-12)  # q* is a vertex of the table


def test_first_and_last_true():
    rng = np.random.default_rng(0)
    for k in (1, 2, 7, 300):
        mask = rng.random((k, 50)) < 0.3
        mask[rng.integers(0, k, 50), np.arange(50)] = True
        np.testing.assert_array_equal(closed_forms._first_true(mask), np.argmax(mask, axis=0))
        last = k - 1 - np.argmax(mask[::-1], axis=0)
        np.testing.assert_array_equal(closed_forms._last_true(mask), last)


@pytest.mark.parametrize("n", [50, TRANSPOSED_FORWARD_ENTRIES // 20 + 1])
def test_dense_operator_products(n):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(n, 19))
    fmap = Multiclass().fit(X, 4)
    operator = fmap.bind(X)
    theta = rng.normal(size=fmap.n_params)
    X1 = np.hstack([X, np.ones((n, 1))])
    F = operator.forward(theta)
    assert F.flags.f_contiguous == (X1.size >= TRANSPOSED_FORWARD_ENTRIES)
    np.testing.assert_allclose(F, X1 @ theta.reshape(-1, 4), rtol=1e-13, atol=1e-12)
    G = rng.normal(size=(n, 4))
    for layout in (G, np.asfortranarray(G)):
        np.testing.assert_allclose(
            operator.adjoint(layout), (X1.T @ G).ravel(), rtol=1e-13, atol=1e-11
        )


@pytest.mark.parametrize("kind", ["zero_one", "ordinal"])
def test_smoothed_curvature_is_the_jacobian(kind):
    """``apply`` is the derivative of ``Q_mu`` (finite differences), for both memory orders."""
    game = ag.Game(getattr(ag.losses, kind)(5))
    smooth = solvers.smoothed_game(game)
    rng = np.random.default_rng(2)
    F, mu, h = rng.normal(size=(30, 5)), 0.3, 1e-6
    _, Q, _, curvature = smooth(F, mu)
    c = curvature()
    D = rng.normal(size=(c.rows.size, 5))
    shifted = F.copy()
    shifted[c.rows] += h * D
    numeric = (smooth(shifted, mu)[1] - Q)[c.rows] / h
    for layout in (D, np.asfortranarray(D)):
        np.testing.assert_allclose(c.apply(layout), numeric, rtol=0, atol=1e-4)
    rest = np.setdiff1d(np.arange(30), c.rows)  # rows without curvature: Q_mu locally constant
    np.testing.assert_allclose(
        smooth(shifted, mu)[1][rest] if rest.size else 0.0, Q[rest] if rest.size else 0.0
    )


@pytest.mark.parametrize("column", [0, 2])
def test_a_nan_potential_makes_the_value_nan(column):
    """Never a finite value from a row with a NaN (the callers report non-finite potentials)."""
    F = np.random.default_rng(0).normal(size=(3, 4))
    F[1, column] = np.nan
    with np.errstate(divide="ignore", invalid="ignore"):  # q* of the NaN row: 0 / 0
        values = (
            closed_forms.zero_one(F)[0],
            closed_forms.zero_one_quadratic_smoothing(F, 0.1)[0],
            closed_forms.squared(F)[0],
        )
    for value in values:
        assert np.isnan(value[1]) and np.all(np.isfinite(value[[0, 2]]))


def test_surrogate_objective_reports_non_finite_potentials():
    X = np.array([[1.0, 2.0], [3.0, 4.0]])
    fmap = Multiclass().fit(X, 3)
    objective = solvers.SurrogateObjective(
        ag.Game(ag.losses.zero_one(3)),
        fmap.bind(X),
        np.array([0, 1]),
        np.full(2, 0.5),
        ag.uncertainty.SoftMoments(0.1),
        fmap,
    )
    theta = np.zeros(fmap.n_params)
    value, gradient = objective(theta)
    assert np.isfinite(value) and np.all(np.isfinite(gradient))
    theta[0] = np.nan
    with pytest.raises(ValueError, match="finite"), np.errstate(all="ignore"):
        objective(theta)
