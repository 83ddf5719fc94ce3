"""Numeric edge cases (issue #23): huge and tiny magnitudes, ties, k = 2.

Every projection of :mod:`advgame.polytopes` is compared with an independent reference computed
here with exact arithmetic (``fractions.Fraction`` for the Euclidean geometry, ``decimal`` at 400
digits for the KL one), or, for the Birkhoff polytope, with a brute-force assignment (huge scores),
a plain log-domain Sinkhorn (moderate scores), cvxpy, and the optimality conditions.  Also: the
validation of ``GeneralizedPredictionSet.fit``'s ``X_unlabeled`` and the named tuple returned by
``Game.extreme_points``.
"""

import decimal
import itertools
import warnings
from fractions import Fraction

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp

import advgame as ag
import advgame.polytopes as pt
from advgame.exceptions import ConvergenceWarning, SolverError
from advgame.game import ExtremePoints
from advgame.models.prediction_sets import GeneralizedPredictionSet

SCALES = [5e-324, 1e-300, 1e-12, 0.5, 1.0, 3.0, 1e8, 1e16, 1e17, 1e100, 1e300]
OFFSETS = [0.0, 1.0, -7.0, 1e8, -1e17, 2.0**60, 1e300]
DEC = decimal.Context(prec=400, Emin=-(10**9), Emax=10**9)


@st.composite
def vectors(draw, k_min=2, k_max=6):
    """Finite vectors mixing per-coordinate scales from 5e-324 to 1e300, a common offset and
    ties (a coordinate copied onto another)."""
    k = draw(st.integers(k_min, k_max))
    base = np.array(draw(st.lists(st.floats(-1, 1), min_size=k, max_size=k)))
    scale = np.array(draw(st.lists(st.sampled_from(SCALES), min_size=k, max_size=k)))
    x = base * scale + draw(st.sampled_from(OFFSETS))
    if draw(st.booleans()):
        i, j = draw(st.integers(0, k - 1)), draw(st.integers(0, k - 1))
        x[i] = x[j]
    assume(np.all(np.isfinite(x)))
    return x


# ------------------------------------------------------------------------- exact references
def in_dec(fn):
    """Run a reference with DEC as the decimal context (so +, -, sum use 400 digits)."""

    def run(*args):
        with decimal.localcontext(DEC):
            return fn(*args)

    return run


def frac(x):
    return [Fraction(float(v)) for v in x]


def dec(v):
    """A float or Fraction as a Decimal of DEC."""
    if isinstance(v, Fraction):
        return DEC.divide(decimal.Decimal(v.numerator), decimal.Decimal(v.denominator))
    return decimal.Decimal(float(v))


def simplex_reference(x):
    """Exact Euclidean projection onto the simplex: try every support of top-j coordinates."""
    u = sorted(frac(x), reverse=True)
    for j in range(1, len(u) + 1):
        tau = (sum(u[:j]) - 1) / j
        if u[j - 1] > tau and (j == len(u) or u[j] <= tau):
            return np.array([float(max(v - tau, 0)) for v in frac(x)])
    raise AssertionError("no support found")


def capped_reference(x, m):
    """Exact Euclidean projection onto {mu in [0, 1]^k : sum(mu) = m}: every split into ``b``
    coordinates at 1, ``a - b`` free and the rest at 0 (of the sorted coordinates)."""
    xs = frac(x)
    k = len(xs)
    if m == 0 or m == k:
        return np.full(k, float(m > 0))
    u = sorted(xs, reverse=True)
    for b in range(0, m + 1):
        for a in range(b, k + 1):
            if a == b:
                if b != m or (m < k and u[m - 1] - 1 < u[m]):
                    continue
                return np.array([1.0 if v >= u[m - 1] else 0.0 for v in xs])
            tau = (sum(u[b:a]) - (m - b)) / (a - b)
            ok = u[b] - tau <= 1 and u[a - 1] - tau >= 0
            ok &= b == 0 or u[b - 1] - tau >= 1
            ok &= a == k or u[a] - tau <= 0
            if ok:
                return np.array([float(min(max(v - tau, 0), 1)) for v in xs])
    raise AssertionError("no split found")


@in_dec
def capped_kl_reference(x, m):
    """KL projection onto {mu in [0, 1]^k : sum(mu) = m} in 400-digit decimals: the smallest
    number ``j`` of coordinates at 1 whose free part stays <= 1."""
    k = len(x)
    if m == 0 or m == k:
        return np.full(k, float(m > 0))
    order = np.argsort(-x, kind="stable")
    u = [dec(x[i]) for i in order]
    for j in range(m):
        weights = [DEC.exp(DEC.subtract(v, u[j])) for v in u[j:]]
        total = sum(weights, decimal.Decimal(0))
        free = [DEC.divide(DEC.multiply(decimal.Decimal(m - j), w_), total) for w_ in weights]
        if free[0] <= 1:
            mu = [decimal.Decimal(1)] * j + free
            out = np.empty(k)
            out[order] = [float(v) for v in mu]
            return out
    raise AssertionError("no split found")


def pav_exact(y, value):
    """Non-increasing isotonic fit of ``y`` (a list): blocks pooled while a later one is
    larger; ``value(block_items)`` is a block's optimal common value."""
    blocks = []  # lists of indices
    values = []
    for i in range(len(y)):
        blocks.append([i])
        values.append(value([i]))
        while len(blocks) > 1 and values[-1] > values[-2]:
            blocks[-2:] = [blocks[-2] + blocks[-1]]
            values[-2:] = [value(blocks[-1])]
    out = [None] * len(y)
    for block, v in zip(blocks, values):
        for i in block:
            out[i] = v
    return out


@in_dec
def permutahedron_reference(x, w, geometry):
    order = np.argsort(-x, kind="stable")
    s = [Fraction(float(x[i])) for i in order]
    wd = sorted((Fraction(float(v)) for v in w), reverse=True)
    if geometry == "euclidean":
        y = [a - b for a, b in zip(s, wd)]
        v = pav_exact(y, lambda B: sum(y[i] for i in B) / len(B))
        mu = [float(a - b) for a, b in zip(s, v)]
    else:
        sd = [dec(a) for a in s]

        def value(B):
            top = max(sd[i] for i in B)
            lse = top + DEC.ln(sum((DEC.exp(sd[i] - top) for i in B), decimal.Decimal(0)))
            return lse - DEC.ln(sum((dec(wd[i]) for i in B), decimal.Decimal(0)))

        v = pav_exact(sd, value)
        mu = [float(DEC.exp(a - b)) for a, b in zip(sd, v)]
    out = np.empty(len(x))
    out[order] = mu
    return out


@in_dec
def order_simplex_reference(x, geometry):
    y = frac(x)
    v = pav_exact(y, lambda B: sum(y[i] for i in B) / len(B))
    if geometry == "euclidean":
        return np.array([float(min(max(a, 0), 1)) for a in v])
    return np.array([float(DEC.exp(min(dec(a) - 1, decimal.Decimal(0)))) for a in v])


@in_dec
def softmax_reference(x):
    d = [dec(v) for v in x]
    top = max(d)
    e = [DEC.exp(v - top) for v in d]
    total = sum(e, decimal.Decimal(0))
    return np.array([float(v / total) for v in e])


# ------------------------------------------------------------------- simplex (the reported case)
def test_simplex_projection_of_the_reported_case_is_exact():
    """It used to return [6.7e16, 0, 0] (from about 1e16 on)."""
    np.testing.assert_array_equal(pt.Simplex().project([1e17, 1, 0.5]), [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(pt.Simplex().project([1e16, 1, 0.5]), [1.0, 0.0, 0.0])
    np.testing.assert_allclose(pt.Simplex().project([1e17, 1e17, 0.5]), [0.5, 0.5, 0.0])
    np.testing.assert_array_equal(pt.Simplex().project([1.7e308, -1.7e308]), [1.0, 0.0])
    np.testing.assert_allclose(pt.Simplex().project([1e-300, 0.0, 5e-324]), [1 / 3] * 3)


@given(x=vectors())
def test_simplex_euclidean_matches_exact_reference(x):
    mu = pt.Simplex().project(x)
    assert np.all(mu >= 0) and abs(mu.sum() - 1.0) <= 1e-12
    np.testing.assert_allclose(mu, simplex_reference(x), rtol=0, atol=1e-12)
    rows = pt.RowStochastic().project(np.stack([np.roll(x, i) for i in range(x.size)]))
    np.testing.assert_allclose(rows[0], mu, rtol=0, atol=1e-15)


@given(x=vectors())
def test_simplex_kl_matches_exact_reference(x):
    with np.errstate(over="ignore"):
        mu = pt.Simplex().project(x, "kl")
    np.testing.assert_allclose(mu, softmax_reference(x), rtol=0, atol=1e-12)


@given(x=vectors())
def test_unit_cube_is_exact_at_every_scale(x):
    np.testing.assert_array_equal(pt.UnitCube().project(x), np.clip(x, 0, 1))
    ref = [float(DEC.exp(min(dec(v) - 1, decimal.Decimal(0)))) for v in x]
    np.testing.assert_allclose(pt.UnitCube().project(x, "kl"), ref, rtol=1e-14, atol=0)


# ------------------------------------------------------------------------ capped simplex
@settings(max_examples=40)
@given(x=vectors(), data=st.data())
def test_capped_sum_euclidean_matches_exact_reference(x, data):
    k = x.size
    m = data.draw(st.integers(0, k))
    mu = pt.Knapsack(m, m).project(x)
    assert np.all((mu >= 0) & (mu <= 1)) and abs(mu.sum() - m) <= 1e-12 * k
    np.testing.assert_allclose(mu, capped_reference(x, m), rtol=0, atol=1e-12)


@settings(max_examples=40)
@given(x=vectors(), data=st.data())
def test_capped_sum_kl_matches_exact_reference(x, data):
    k = x.size
    m = data.draw(st.integers(0, k))
    mu = pt.Knapsack(m, m).project(x, "kl")
    assert np.all((mu >= 0) & (mu <= 1)) and abs(mu.sum() - m) <= 1e-12 * k
    np.testing.assert_allclose(mu, capped_kl_reference(x, m), rtol=0, atol=1e-12)


@settings(max_examples=30)
@given(x=vectors(k_min=3), data=st.data())
def test_knapsack_matches_exact_reference(x, data):
    k = x.size
    low = data.draw(st.integers(0, k))
    high = data.draw(st.integers(low, k))
    for geometry in ("euclidean", "kl"):
        mu = pt.Knapsack(low, high).project(x, geometry)
        assert pt.Knapsack(low, high).contains(mu, atol=1e-12)
        cube = np.clip(x, 0, 1) if geometry == "euclidean" else pt.UnitCube().project(x, "kl")
        if low <= cube.sum() <= high:
            ref = cube
        else:
            m = high if cube.sum() > high else low
            ref = capped_reference(x, m) if geometry == "euclidean" else capped_kl_reference(x, m)
        np.testing.assert_allclose(mu, ref, rtol=0, atol=1e-12)


def test_capped_sum_reported_scale_cases():
    """At 1e17 ``theta - 1`` rounds to ``theta``: both geometries used to miss the sum."""
    for geometry in ("euclidean", "kl"):
        np.testing.assert_allclose(
            pt.Knapsack(2, 2).project([1e17] * 4, geometry), [0.5] * 4, atol=1e-15
        )
        np.testing.assert_allclose(
            pt.Knapsack(2, 2).project([0.0, -1e17, -1e17, -1e17], geometry),
            [1.0, 1 / 3, 1 / 3, 1 / 3],
            atol=1e-15,
        )


# ------------------------------------------------------------------ order simplex, permutahedron
@given(x=vectors())
def test_order_simplex_matches_exact_reference(x):
    for geometry in ("euclidean", "kl"):
        mu = pt.OrderSimplex().project(x, geometry)
        assert pt.OrderSimplex().contains(mu, atol=0)
        np.testing.assert_allclose(mu, order_simplex_reference(x, geometry), rtol=0, atol=1e-12)


def test_order_simplex_block_sums_near_the_float_maximum():
    """Pooled sums of entries near 1.8e308 used to overflow (here to -inf, giving 0)."""
    x = [-1.7e308, -1e308, 1e308, 1.7e308, 1.7e308]
    np.testing.assert_array_equal(pt.OrderSimplex().project(x), [1.0] * 5)


@settings(max_examples=40)
@given(
    x=vectors(),
    w=st.lists(st.floats(0.125, 8.0), min_size=6, max_size=6),
    classical=st.booleans(),
)
def test_permutahedron_matches_exact_reference(x, w, classical):
    k = x.size
    w = np.arange(k, 0, -1.0) if classical else np.array(w[:k])
    P = pt.Permutahedron(w)
    for geometry in ("euclidean", "kl"):
        mu = P.project(x, geometry)
        assert P.contains(mu, atol=1e-12)
        ref = permutahedron_reference(x, w, geometry)
        np.testing.assert_allclose(mu, ref, rtol=0, atol=1e-12 * k * w.max())


def test_permutahedron_reported_scale_cases():
    P = pt.Permutahedron([3.0, 2.0, 1.0])
    for geometry in ("euclidean", "kl"):
        np.testing.assert_allclose(P.project([1e17] * 3, geometry), [2.0] * 3, atol=1e-14)
        np.testing.assert_allclose(P.project([1e17, 0, 0], geometry), [3.0, 1.5, 1.5])


def test_unconstrained_kl_overflow_names_theta():
    with pytest.raises(ValueError, match=r"theta must be at most 710\.78.*got max\(theta\)"):
        pt.Unconstrained().project([1000.0, 0.0], "kl")
    np.testing.assert_allclose(pt.Unconstrained().project([700.0], "kl"), np.exp([699.0]))


def test_frank_wolfe_refuses_theta_whose_gap_rounds():
    """At [3, 1e17, 1e17] the gap rounds to 0 at the vertex [0, 1, 0] (the projection is
    [0, 0.5, 0.5]): refused with an error naming theta rather than returned."""
    with pytest.raises(ValueError, match=r"theta is too large for frank_wolfe_projection"):
        pt.frank_wolfe_projection(pt.Simplex().argmax, np.array([3.0, 1e17, 1e17]))
    mu = pt.frank_wolfe_projection(pt.Simplex().argmax, np.array([3.0, 1e3, 1e3]))
    np.testing.assert_allclose(mu, [0.0, 0.5, 0.5], atol=1e-6)
    mu = pt.frank_wolfe_projection(pt.Simplex().argmax, np.array([1e-300, 0.0, 5e-324]))
    np.testing.assert_allclose(mu, [1 / 3] * 3, atol=1e-6)


# --------------------------------------------------------------------------- Birkhoff
def best_permutation(theta):
    """Brute-force maximum assignment in exact arithmetic, and its margin over the second best."""
    k = theta.shape[0]
    exact = [[Fraction(float(v)) for v in row] for row in theta]
    scores = sorted(
        ((sum(exact[i][p[i]] for i in range(k)), p) for p in itertools.permutations(range(k))),
        reverse=True,
    )
    P = np.zeros((k, k))
    P[np.arange(k), scores[0][1]] = 1.0
    return P, float(scores[0][0] - scores[1][0])


def sinkhorn_reference(theta, iters=20000):
    """Plain log-domain Sinkhorn (no Newton steps): the KL projection for moderate scores,
    iterated until the row sums are within 1e-14."""
    f = np.zeros(theta.shape[0])
    g = np.zeros(theta.shape[1])
    for _ in range(iters):
        f = -logsumexp(theta + g[None, :], axis=1)
        g = -logsumexp(theta + f[:, None], axis=0)
        P = np.exp(theta + f[:, None] + g[None, :])
        if np.abs(P.sum(axis=1) - 1.0).max() <= 1e-14:
            break
    return P


def assert_doubly_stochastic(P, atol=1e-9):
    assert np.all(np.isfinite(P)) and np.all(P >= 0)
    np.testing.assert_allclose(P.sum(axis=-1), 1.0, rtol=0, atol=atol)
    np.testing.assert_allclose(P.sum(axis=-2), 1.0, rtol=0, atol=atol)


@settings(max_examples=30)
@given(
    k=st.integers(2, 5),
    scale=st.sampled_from([1e6, 1e17, 1e100, 1e300]),
    seed=st.integers(0, 2**16),
)
def test_birkhoff_huge_scores_give_the_assignment(k, scale, seed):
    """Huge scores: both projections are the maximum assignment's permutation matrix (the
    KL one used to return a non doubly stochastic matrix with a ConvergenceWarning)."""
    theta = np.random.default_rng(seed).normal(size=(k, k)) * scale
    vertex, margin = best_permutation(theta)
    assume(margin > 100)  # the projections are then within exp(-50) of the vertex
    for geometry in ("kl", "euclidean"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            P = pt.Birkhoff().project(theta, geometry)
        assert_doubly_stochastic(P)
        np.testing.assert_allclose(P, vertex, rtol=0, atol=1e-9)


def test_birkhoff_kl_reported_case():
    theta = np.random.default_rng(0).normal(size=(3, 4, 4)) * 1e300
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        P = pt.Birkhoff().project(theta, "kl")
    assert_doubly_stochastic(P)
    for t, p in zip(theta, P):
        np.testing.assert_allclose(p, best_permutation(t)[0], atol=1e-9)


def test_birkhoff_kl_huge_entries_with_a_unit_cycle():
    """Entries of 1e300 whose cycle sum is 1: the answer is sigmoid(1/2) on the diagonal,
    which rescaling theta (rather than reducing it) would lose."""
    P = pt.Birkhoff().project(np.array([[1e300, 1e300], [0.0, 1.0]]), "kl")
    a = 1.0 / (1.0 + np.exp(-0.5))
    np.testing.assert_allclose(P, [[a, 1 - a], [1 - a, a]], rtol=0, atol=1e-10)


@settings(max_examples=15)
@given(
    k=st.integers(2, 4),
    scale=st.sampled_from([1e-300, 1e-3, 0.5, 2.0]),
    offset=st.sampled_from([0.0, 1e8]),
    seed=st.integers(0, 2**16),
)
def test_birkhoff_kl_matches_plain_sinkhorn(k, scale, offset, seed):
    theta = np.random.default_rng(seed).normal(size=(k, k)) * scale + offset
    P = pt.Birkhoff().project(theta, "kl")
    assert_doubly_stochastic(P)
    np.testing.assert_allclose(P, sinkhorn_reference(theta - offset), rtol=0, atol=1e-8)


@settings(max_examples=15)
@given(
    k=st.integers(2, 4),
    scale=st.sampled_from([30.0, 300.0, 3000.0]),
    seed=st.integers(0, 2**16),
)
def test_birkhoff_kl_optimality_conditions_at_large_scores(k, scale, seed):
    """Scores spread over thousands (reduced and clipped internally): doubly stochastic and
    ``log P - theta = f 1^T + 1 g^T`` on the entries that carry mass (the KKT conditions of the
    strictly convex problem, so ``P`` is the projection)."""
    theta = np.random.default_rng(seed).normal(size=(k, k)) * scale
    P = pt.Birkhoff().project(theta, "kl")
    assert_doubly_stochastic(P)
    with np.errstate(divide="ignore"):
        D = np.log(P) - theta
    live = P > 1e-100
    for i, j, a, b in itertools.product(range(k), repeat=4):
        if live[i, j] and live[i, b] and live[a, j] and live[a, b]:
            cycle = D[i, j] - D[i, b] - D[a, j] + D[a, b]
            assert abs(cycle) <= 1e-6 * max(1.0, scale), (i, j, a, b, cycle)


@settings(max_examples=10)
@given(
    k=st.integers(2, 4),
    scale=st.sampled_from([1e-300, 1.0, 30.0, 300.0]),
    seed=st.integers(0, 2**16),
)
def test_birkhoff_euclidean_matches_cvxpy(k, scale, seed):
    theta = np.random.default_rng(seed).normal(size=(k, k)) * scale
    P = pt.Birkhoff().project(theta)
    assert_doubly_stochastic(P)
    if scale < 1e-100:  # cvxpy rounds such inputs to 0; the projection is then uniform
        np.testing.assert_allclose(P, np.full((k, k), 1.0 / k), atol=1e-12)
        return
    X = cp.Variable((k, k), nonneg=True)
    cons = [cp.sum(X, axis=0) == 1, cp.sum(X, axis=1) == 1]
    cp.Problem(cp.Minimize(cp.sum_squares(X - theta)), cons).solve(
        solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12
    )
    np.testing.assert_allclose(P, X.value, atol=1e-6)


def test_birkhoff_entries_near_the_float_maximum():
    """Entries of +-1.7e308: reduced without overflow when the differences fit in float64, a
    ValueError naming theta when they do not."""
    theta = np.array([[1.7e308, -1.7e308], [1.7e308, 1.0]])  # the identity wins by 1.7e308
    for geometry in ("kl", "euclidean"):
        P = pt.Birkhoff().project(theta, geometry)
        np.testing.assert_allclose(P, np.eye(2), atol=pt.BIRKHOFF_TOL)  # within the tolerance
    theta = np.array([[1.7e308, -1.7e308], [1.7e308, -1.7e308]])
    with pytest.raises(ValueError, match=r"theta's entries are too far apart.*Rescale theta"):
        pt.Birkhoff().project(theta, "kl")


def test_birkhoff_not_converged_error_or_warning():
    """max_iter reached: an error when the result is not doubly stochastic (marginal error above
    CONTAINS_ATOL), only a warning when it is within that tolerance."""
    theta = np.random.default_rng(3).normal(size=(2, 4, 4)) * 5.0
    for geometry in ("kl", "euclidean"):
        with pytest.raises(SolverError, match=r"max marginal error .*not doubly stochastic"):
            pt.Birkhoff().project(theta, geometry, max_iter=2)
    found = False
    for max_iter in range(2, 60):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                P = pt.Birkhoff().project(theta, "kl", max_iter=max_iter, tol=0.0)
            except SolverError:
                continue
        if any(issubclass(w.category, ConvergenceWarning) for w in caught):
            assert_doubly_stochastic(P, atol=pt.CONTAINS_ATOL)
            found = True
            break
    assert found


# ------------------------------------------------------------------------ X_unlabeled
@pytest.fixture(scope="module")
def labelled():
    X = np.random.default_rng(0).normal(size=(20, 2))
    return X, np.repeat([0, 1], 10)


@pytest.mark.parametrize(
    "X_unlabeled, match",
    [
        (np.zeros((0, 2)), r"X_unlabeled has 0 rows .*expected None"),
        (np.zeros((3, 3)), r"X_unlabeled has 3 features but X has 2"),
        (np.zeros(3), r"X_unlabeled must be None or an array of shape .*got .*shape \(3,\)"),
        (np.zeros((2, 2, 2)), r"X_unlabeled must be None or an array"),
        (np.full((3, 2), np.nan), r"X_unlabeled.*NaN"),
        (np.array([[1.0, np.inf]]), r"X_unlabeled.*infinity"),
        ([["a", "b"]], r"X_unlabeled must be None or an array"),
    ],
    ids=["zero-rows", "features", "1-D", "3-D", "nan", "inf", "strings"],
)
def test_x_unlabeled_is_validated_by_name(labelled, X_unlabeled, match):
    X, y = labelled
    with pytest.raises(ValueError, match=match):
        GeneralizedPredictionSet().fit(X, y, X_unlabeled=X_unlabeled)


def test_x_unlabeled_none_and_one_row_are_accepted(labelled):
    X, y = labelled
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few calibration points: documented warnings
        for X_unlabeled in (None, X[:1]):
            model = GeneralizedPredictionSet().fit(X, y, X_unlabeled=X_unlabeled)
            assert model.X_unlabeled_.shape[1] == 2


# ------------------------------------------------------------------------ extreme points
@pytest.mark.parametrize(
    "loss",
    [ag.losses.zero_one(4), ag.losses.ordinal(4), np.array([[0, 1, 3], [2, 0, 1], [1, 2, 0.0]])],
    ids=["zero-one", "ordinal", "matrix"],
)
def test_extreme_points_is_a_documented_named_tuple(loss):
    game = ag.Game(loss)
    points = game.extreme_points()
    assert isinstance(points, ExtremePoints) and points._fields == ("Q", "v")
    Q, v = points  # unpacking still works
    assert Q is points.Q and v is points.v
    L = np.asarray(game.loss.matrix)
    np.testing.assert_allclose(Q.sum(axis=1), 1.0)
    np.testing.assert_allclose(v, (Q @ L.T).min(axis=1), atol=1e-12)  # v_t = min_a (L q_t)_a
    f = np.random.default_rng(1).normal(size=Q.shape[1])
    np.testing.assert_allclose(np.max(Q @ f + v), game.value(f), atol=1e-9)
    assert "v_t" in ag.Game.extreme_points.__doc__ or "v[t]" in ag.Game.extreme_points.__doc__
