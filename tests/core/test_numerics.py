"""Numerical robustness of the core ([reliability] item 2), as hypothesis property tests.

* the closed forms (zero-one, ordinal, squared, abstain with alpha <= 1/2) equal the LP
  (``method="lp"``) for potentials of magnitude 1e-12..1e12 (scale-relative tolerance), exact
  ties (integer-valued potentials) and k = 2; k up to 200 on a few rows;
* the surrogate is >= 0 and translation invariant; q* and p* lie on the simplex;
* the KL (Sinkhorn, log domain) projection onto the Birkhoff polytope stays finite and doubly
  stochastic for tiny regularisation (scores multiplied by up to 1e6) and huge magnitudes;
* Euclidean projections of points already inside a polytope return them; projections are
  idempotent.
"""

import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import advgame as ag
from advgame import polytopes as pt
from advgame.exceptions import ConvergenceWarning

RTOL = 1e-9
LOSSES = {
    "zero_one": lambda k: ag.losses.zero_one(k, weight=1.5),
    "ordinal": lambda k: ag.losses.ordinal(k, weight=0.7),
    "squared": lambda k: ag.losses.squared(k, weight=0.3),
    "abstain-0.3": lambda k: ag.losses.abstain(k, alpha=0.3, weight=2.0),
    "abstain-0.5": lambda k: ag.losses.abstain(k, alpha=0.5),
    "abstain-0": lambda k: ag.losses.abstain(k, alpha=0.0),
}
_GAMES = {}


def game(kind, k):
    """One cached Game per (loss, k): the persistent HiGHS model is reused across examples."""
    if (kind, k) not in _GAMES:
        _GAMES[kind, k] = ag.Game(LOSSES[kind](k))
    return _GAMES[kind, k]


def scale_of(F, g):
    """The problem's scale: ``max(1, max |F|, max L)`` per row (what the tolerances are relative to)."""
    return np.maximum(np.maximum(1.0, np.abs(F).max(axis=1)), g.loss.matrix.max())


@st.composite
def potentials(draw, k_max=6, rows=3):
    """Rows of potentials ``mantissa * 10^e`` with e in -12..12, optionally rounded to integers
    (exact ties) and offset by a common constant."""
    k = draw(st.integers(2, k_max))
    exponent = draw(st.integers(-12, 12))
    mantissa = draw(
        arrays(np.float64, (rows, k), elements=st.floats(-3, 3, allow_nan=False, width=32))
    )
    F = mantissa * 10.0**exponent
    if draw(st.booleans()):
        F = np.round(mantissa * draw(st.sampled_from([1, 2, 10])))  # integer-valued: exact ties
    return F + draw(st.sampled_from([0.0, 1.0, -1e6, 1e9]))


def assert_on_simplex(P, tol=1e-9):
    assert np.all(P >= -tol)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=tol)


# --------------------------------------------------------------------- closed forms against LP
@pytest.mark.parametrize("kind", list(LOSSES))
@settings(max_examples=25, deadline=None)
@given(F=potentials())
def test_closed_form_equals_lp(kind, F):
    g = game(kind, F.shape[1])
    scale = scale_of(F, g)
    closed, lp = g.value(F, method="closed_form"), g.value(F, method="lp")
    assert np.all(np.abs(closed - lp) <= RTOL * scale)
    # q* and p* of the closed form certify the value (they are optimal, not just feasible)
    L = g.loss.matrix
    Q, P = g.adversary(F, method="closed_form"), g.predictor(F, method="closed_form")
    assert_on_simplex(Q)
    assert_on_simplex(P)
    assert np.all(np.abs((Q @ L.T).min(axis=1) + np.sum(F * Q, axis=1) - lp) <= RTOL * scale)
    assert np.all(np.abs((P @ L + F).max(axis=1) - lp) <= RTOL * scale)


@pytest.mark.parametrize("kind", list(LOSSES))
@pytest.mark.parametrize("k", [2, 50, 200])
def test_closed_form_equals_lp_large_k(kind, k):
    """k up to 200 on four rows (Gaussian, integer ties, 1e6 scale, duplicated maximum): the LP
    has ``k`` columns, so this stays fast."""
    F = ag.verify.random_potentials(k, n=4, seed=k)
    g = game(kind, k)
    scale = scale_of(F, g)
    assert np.all(
        np.abs(g.value(F, method="closed_form") - g.value(F, method="lp")) <= RTOL * scale
    )
    P = g.predictor(F, method="closed_form")
    assert_on_simplex(P)
    assert np.all(np.abs((P @ g.loss.matrix + F).max(axis=1) - g.value(F)) <= RTOL * scale)


@pytest.mark.parametrize("kind", ["zero_one", "ordinal", "squared", "abstain-0.3"])
def test_huge_potentials_stay_finite(kind):
    g = game(kind, 4)
    F = np.array([[1e308, 1e308, 1e308, 1e308], [1e300, -1e300, 0.0, 1.0]])
    value = g.value(F, method="closed_form")
    assert np.all(np.isfinite(value))
    np.testing.assert_allclose(value, F.max(axis=1), rtol=1e-12)


# ----------------------------------------------------------------------- surrogate and simplex
@pytest.mark.parametrize("kind", ["zero_one", "ordinal", "squared", "abstain-0.3"])
@settings(max_examples=25, deadline=None)
@given(F=potentials(), shift=st.floats(-1e6, 1e6), data=st.data())
def test_surrogate_nonnegative_and_translation_invariant(kind, F, shift, data):
    g = game(kind, F.shape[1])
    y = data.draw(arrays(np.int64, F.shape[0], elements=st.integers(0, F.shape[1] - 1)))
    scale = scale_of(F, g) + abs(shift)
    loss = g.surrogate(F, y)
    assert np.all(loss >= -RTOL * scale)
    shifted = g.surrogate(F + shift, y)
    assert np.all(np.abs(shifted - loss) <= RTOL * scale)
    for method in ("auto", "lp"):
        assert_on_simplex(g.adversary(F, method=method))
        assert_on_simplex(g.predictor(F, method=method))


# ----------------------------------------------------------------------- Birkhoff / Sinkhorn
@settings(max_examples=20, deadline=None)
@given(
    k=st.integers(2, 5),
    inverse_reg=st.sampled_from([1.0, 1e2, 1e4, 1e6]),
    offset=st.sampled_from([0.0, 1e8, -1e12]),
    seed=st.integers(0, 2**16),
)
def test_sinkhorn_tiny_regularisation_stays_doubly_stochastic(k, inverse_reg, offset, seed):
    """``theta / reg`` with reg down to 1e-6 (entries up to ~1e6, plus a huge common offset):
    the log-domain projection must return a finite, doubly stochastic matrix."""
    theta = np.random.default_rng(seed).normal(size=(k, k)) * inverse_reg + offset
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # near-permutation: slow, still valid
        P = pt.Birkhoff().project(theta, "kl")
    assert np.all(np.isfinite(P)) and np.all(P >= 0)
    tol = 1e-6
    np.testing.assert_allclose(P.sum(axis=0), 1.0, atol=tol)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=tol)
    if inverse_reg >= 1e4:  # tiny regularisation: the projection is the assignment's vertex
        np.testing.assert_allclose(P, pt.Birkhoff().argmax(theta), atol=1e-3)


# ---------------------------------------------------------------- projections of inside points
def inside_points(rng, n, k):
    """``(polytope, points)`` pairs: convex combinations of vertices of each polytope."""

    def mix(V):
        w = rng.dirichlet(np.ones(len(V)), size=n)
        return np.tensordot(w, V, axes=1)

    w = np.arange(k, 0, -1.0)
    return [
        (pt.Simplex(), mix(np.eye(k))),
        (pt.UnitCube(), rng.random((n, k))),
        (pt.Knapsack(1, 2), mix(pt.Knapsack(1, 2).vertices(k))),
        (pt.OrderSimplex(), mix(pt.OrderSimplex().vertices(k))),
        (pt.Permutahedron(w), mix(pt.Permutahedron(w).vertices(k))),
        (pt.Birkhoff(), mix(pt.Birkhoff().vertices(k))),
        (pt.RowStochastic(), mix(pt.RowStochastic().vertices(k))),
    ]


@settings(max_examples=15, deadline=None)
@given(k=st.integers(2, 4), seed=st.integers(0, 2**16))
def test_euclidean_projection_of_an_inside_point_is_itself(k, seed):
    for polytope, points in inside_points(np.random.default_rng(seed), 3, k):
        assert np.all(polytope.contains(points))
        np.testing.assert_allclose(
            polytope.project(points, "euclidean"), points, atol=1e-8, err_msg=repr(polytope)
        )


@pytest.mark.parametrize("geometry", ["euclidean", "kl"])
@settings(max_examples=15, deadline=None)
@given(
    k=st.integers(2, 4), seed=st.integers(0, 2**16), magnitude=st.sampled_from([1e-12, 1.0, 1e3])
)
def test_projection_is_idempotent(geometry, k, seed, magnitude):
    theta_rng = np.random.default_rng(seed)
    for polytope, _ in inside_points(theta_rng, 1, k):
        shape = (2, k, k) if polytope.point_ndim == 2 else (2, k)
        theta = theta_rng.normal(size=shape) * magnitude
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            mu = polytope.project(theta, geometry)
            if geometry == "kl":  # the KL projection's fixed point is log(mu) + 1
                assume(np.all(mu > 1e-300))
                again = polytope.project(np.log(mu) + 1.0, "kl")
            else:
                again = polytope.project(mu, "euclidean")
        assert np.all(polytope.contains(mu, atol=1e-7)), repr(polytope)
        np.testing.assert_allclose(again, mu, atol=1e-7, err_msg=repr(polytope))
