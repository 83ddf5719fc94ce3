"""Polytopes of Blondel 2019 Section 4 against independent references.

* Euclidean projections equal a cvxpy QP written with the polytope's explicit constraints (the
  permutahedron by majorisation, ``sum_largest(mu, j) <= w_(1) + ... + w_(j)``) to 1e-6;
* KL projections: the cvxpy exponential-cone program ``max theta.mu + sum entr(mu)`` (whose solver
  only reaches ~1e-5 on points, so its *objective* is compared to 1e-7 and points to 1e-4), and
  pairwise Frank-Wolfe through ``argmax`` (points to 1e-6);
* first-order optimality against every vertex (variational inequality) on hypothesis-generated
  inputs with ties, k = 2, and 1e-8 / 1e6 scales; batch and single-point results agree;
* ``argmax`` equals brute force over ``vertices()``; bad inputs raise.
"""

import warnings

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import advgame.polytopes as pt
from advgame.exceptions import ConvergenceWarning, NotApplicableError, SizeLimitError, SolverError

EUCLIDEAN_ATOL = 1e-6
FW_ATOL = 1e-6
CVX_KL_POINT_ATOL = 1e-4
CVX_KL_OBJECTIVE_ATOL = 1e-7
VI_RTOL = 1e-9
CLARABEL = {"solver": "CLARABEL", "tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}


def w_for(k):
    return np.arange(k, 0, -1.0) + 0.5 * np.arange(k) ** 2 / k  # distinct, positive, unsorted


# name -> (factory(k), cvxpy constraints(mu, k), matrix points?)
POLYTOPES = {
    "simplex": (lambda k: pt.Simplex(), lambda m, k: [m >= 0, cp.sum(m) == 1], False),
    "cube": (lambda k: pt.UnitCube(), lambda m, k: [m >= 0, m <= 1], False),
    "knapsack": (
        lambda k: pt.Knapsack(1, max(1, k - 1)),
        lambda m, k: [m >= 0, m <= 1, cp.sum(m) >= 1, cp.sum(m) <= max(1, k - 1)],
        False,
    ),
    "knapsack_eq": (
        lambda k: pt.Knapsack(k // 2, k // 2),
        lambda m, k: [m >= 0, m <= 1, cp.sum(m) == k // 2],
        False,
    ),
    "order": (
        lambda k: pt.OrderSimplex(),
        lambda m, k: [m[0] <= 1, m[k - 1] >= 0] + ([m[:-1] >= m[1:]] if k > 1 else []),
        False,
    ),
    "permutahedron": (
        lambda k: pt.Permutahedron(w_for(k)),
        lambda m, k: (
            [cp.sum(m) == w_for(k).sum()]
            + [cp.sum_largest(m, j) <= np.sort(w_for(k))[::-1][:j].sum() for j in range(1, k)]
        ),
        False,
    ),
    "birkhoff": (
        lambda k: pt.Birkhoff(),
        lambda m, k: [m >= 0, cp.sum(m, axis=0) == 1, cp.sum(m, axis=1) == 1],
        True,
    ),
    "rowstochastic": (
        lambda k: pt.RowStochastic(),
        lambda m, k: [m >= 0, cp.sum(m, axis=1) == 1],
        True,
    ),
}
NAMES = list(POLYTOPES)
GEOMS = ["euclidean", "kl"]


def shape_of(name, k):
    return (k, k) if POLYTOPES[name][2] else (k,)


def cvx_project(name, theta, geometry):
    k = theta.shape[0]
    mu = cp.Variable(theta.shape, nonneg=geometry == "kl")
    cons = POLYTOPES[name][1](mu, k)
    if geometry == "euclidean":
        prob = cp.Problem(cp.Minimize(cp.sum_squares(mu - theta)), cons)
    else:
        prob = cp.Problem(cp.Maximize(cp.sum(cp.multiply(theta, mu)) + cp.sum(cp.entr(mu))), cons)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prob.solve(**CLARABEL)
    return mu.value


def kl_objective(theta, mu):
    mu = np.asarray(mu)
    ent = np.where(mu > 0, -mu * np.log(np.where(mu > 0, mu, 1.0)), 0.0)
    return float(np.sum(theta * mu) + ent.sum())


def thetas(name, k, count, seed, scale=2.0):
    rng = np.random.default_rng(seed)
    return rng.normal(scale=scale, size=(count, *shape_of(name, k)))


# ------------------------------------------------------------------------ cvxpy references
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("k", [2, 3, 5])
def test_euclidean_matches_cvxpy_qp(name, k):
    poly = POLYTOPES[name][0](k)
    T = thetas(name, k, 4, seed=10 * k + NAMES.index(name))
    out = poly.project(T)
    for theta, mu in zip(T, out):
        ref = cvx_project(name, theta, "euclidean")
        np.testing.assert_allclose(mu, ref, atol=EUCLIDEAN_ATOL, rtol=0)
    assert np.all(poly.contains(out))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("k", [2, 4])
def test_kl_matches_cvxpy_exponential_cone(name, k):
    poly = POLYTOPES[name][0](k)
    T = thetas(name, k, 3, seed=100 + 10 * k + NAMES.index(name))
    out = poly.project(T, geometry="kl")
    assert np.all(poly.contains(out))
    for theta, mu in zip(T, out):
        ref = cvx_project(name, theta, "kl")
        np.testing.assert_allclose(mu, ref, atol=CVX_KL_POINT_ATOL, rtol=0)
        # ours is feasible, so its objective is at most the optimum: it must reach cvxpy's
        assert kl_objective(theta, mu) >= kl_objective(theta, ref) - CVX_KL_OBJECTIVE_ATOL


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("geometry", GEOMS)
def test_frank_wolfe_reference(name, geometry):
    k = 3
    poly = POLYTOPES[name][0](k)
    T = thetas(name, k, 2, seed=200 + NAMES.index(name))
    out = poly.project(T, geometry=geometry)
    for theta, mu in zip(T, out):
        # the KL line search resolves gaps down to about 1e-9 (see the docstring)
        fw = pt.frank_wolfe_projection(
            poly.argmax, theta, geometry, max_iter=3000, tol=1e-8 if geometry == "kl" else 1e-14
        )
        np.testing.assert_allclose(mu, fw, atol=FW_ATOL, rtol=0)


def test_frank_wolfe_warns_with_the_gap_reached():
    with pytest.warns(ConvergenceWarning, match="last Frank-Wolfe gap"):
        pt.frank_wolfe_projection(pt.Simplex().argmax, np.array([0.3, 0.1, -0.2]), "kl", max_iter=3)


def test_birkhoff_projection_converges_on_spread_and_structured_scores():
    """Regression: scores at unit scale with block-structured supports used to stall the
    Euclidean Newton step (singular Hessian) at marginal errors ~1e-8 for 2,000 iterations."""
    rng = np.random.default_rng(7)
    for k in (3, 4, 8):
        gauss = 3.0 * rng.normal(size=(300, k, k))
        rank_one = 3.0 * rng.normal(size=(300, k, 1)) * rng.normal(size=(1, 1, k))
        for T in (gauss, rank_one):
            for geometry in GEOMS:
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    P = pt.Birkhoff().project(T, geometry)
                assert pt.Birkhoff().contains(P, atol=1e-9).all()
    # optimality against cvxpy on a few of them
    T = 3.0 * rng.normal(size=(3, 4, 4))
    for theta, P in zip(T, pt.Birkhoff().project(T)):
        X = cp.Variable((4, 4), nonneg=True)
        cons = [cp.sum(X, axis=0) == 1, cp.sum(X, axis=1) == 1]
        cp.Problem(cp.Minimize(cp.sum_squares(X - theta)), cons).solve(
            solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12
        )
        np.testing.assert_allclose(P, X.value, atol=1e-6)


# ------------------------------------------------------------------------ closed-form identities
def test_simplex_kl_is_softmax_and_cube_kl_formula():
    T = thetas("simplex", 6, 5, seed=1)
    e = np.exp(T - T.max(axis=1, keepdims=True))
    np.testing.assert_allclose(pt.Simplex().project(T, "kl"), e / e.sum(1, keepdims=True))
    np.testing.assert_allclose(pt.UnitCube().project(T, "kl"), np.minimum(1, np.exp(T - 1)))
    np.testing.assert_allclose(pt.UnitCube().project(T), np.clip(T, 0, 1))


@pytest.mark.parametrize("geometry", GEOMS)
def test_special_cases_agree(geometry):
    """Knapsack(1, 1) is the simplex, Knapsack(0, k) the cube; Birkhoff rows of a rank-one
    (row-constant) theta are uniform."""
    T = thetas("simplex", 5, 6, seed=2)
    simplex = pt.Simplex().project(T, geometry)
    np.testing.assert_allclose(pt.Knapsack(1, 1).project(T, geometry), simplex, atol=1e-12)
    cube = pt.UnitCube().project(T, geometry)
    np.testing.assert_allclose(pt.Knapsack(0, 5).project(T, geometry), cube, atol=1e-12)
    B = pt.Birkhoff().project(np.repeat(T[:, :, None], 5, axis=2), geometry)
    np.testing.assert_allclose(B, np.full_like(B, 0.2), atol=1e-9)


def test_permutahedron_simplex_weights():
    """The permutahedron of w = e_1 is the simplex (Euclidean)."""
    T = thetas("simplex", 5, 6, seed=3)
    w = np.zeros(5)
    w[0] = 1
    np.testing.assert_allclose(pt.Permutahedron(w).project(T), pt.Simplex().project(T), atol=1e-12)


# ------------------------------------------------------------------------ argmax and vertices
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_argmax_is_a_best_vertex(name, k):
    poly = POLYTOPES[name][0](k)
    V = poly.vertices(k)
    rng = np.random.default_rng(k)
    T = np.concatenate(
        [
            rng.normal(size=(6, *shape_of(name, k))),
            rng.integers(-1, 2, size=(6, *shape_of(name, k))).astype(float),  # ties
        ]
    )
    A = poly.argmax(T)
    axes = tuple(range(1, T.ndim))
    for theta, a in zip(T, A):
        best = max(np.sum(theta * v) for v in V)
        assert np.sum(theta * a) == pytest.approx(best, abs=1e-12)
        assert np.any([np.array_equal(a, v) for v in V]), "argmax is not a vertex"
    np.testing.assert_array_equal(poly.argmax(T[0]), A[0])
    assert np.all(poly.contains(V.reshape(len(V), *T.shape[1:])))
    assert A.shape == T.shape and np.sum(A, axis=axes).shape == (len(T),)


def test_argmax_tie_breaking():
    np.testing.assert_array_equal(pt.Simplex().argmax([1.0, 3.0, 3.0]), [0, 1, 0])
    np.testing.assert_array_equal(pt.UnitCube().argmax([0.0, 1.0, -1.0]), [0, 1, 0])
    np.testing.assert_array_equal(pt.Knapsack(1, 2).argmax([-1.0, -1.0, -2.0]), [1, 0, 0])
    np.testing.assert_array_equal(pt.Knapsack(0, 2).argmax([5.0, 5.0, 5.0]), [1, 1, 0])
    np.testing.assert_array_equal(pt.OrderSimplex().argmax([1.0, -1.0, 0.5]), [1, 0, 0])
    np.testing.assert_array_equal(pt.Permutahedron([1, 3, 2]).argmax([0.0, 0.0, 1.0]), [2, 1, 3])
    np.testing.assert_array_equal(pt.Permutahedron([3, 2, 1]).argmax([0.1, 0.3, 0.2]), [1, 3, 2])
    perm = pt.Birkhoff().argmax(np.array([[0.0, 1.0], [1.0, 0.0]]))
    np.testing.assert_array_equal(perm, [[0, 1], [1, 0]])


def test_vertex_counts_and_size_limit():
    assert pt.Simplex().vertices(4).shape == (4, 4)
    assert pt.UnitCube().vertices(3).shape == (8, 3)
    assert pt.Knapsack(1, 2).vertices(4).shape == (4 + 6, 4)
    np.testing.assert_array_equal(
        pt.OrderSimplex().vertices(3), [[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1]]
    )
    assert pt.Permutahedron([1, 1, 2]).vertices(3).shape == (3, 3)
    assert pt.Birkhoff().vertices(4).shape == (24, 4, 4)
    assert pt.RowStochastic().vertices(3).shape == (27, 3, 3)
    for poly, dim in [
        (pt.UnitCube(), 40),
        (pt.Birkhoff(), 12),
        (pt.RowStochastic(), 9),
        (pt.Permutahedron(np.arange(12.0)), 12),
    ]:
        with pytest.raises(SizeLimitError, match="MAX_VERTICES"):
            poly.vertices(dim)


# ------------------------------------------------------------------------ hypothesis properties
SCALES = st.sampled_from([1e-8, 1.0, 3.0, 1e6])


@st.composite
def cases(draw, name, geometry):
    k = draw(st.integers(1 if name not in ("birkhoff", "rowstochastic") else 2, 4))
    shape = shape_of(name, k)
    n = draw(st.integers(1, 3))
    size = n * int(np.prod(shape))
    scale = draw(SCALES)
    if geometry == "kl" and scale > 10:
        scale = 10.0  # exp(theta) of huge theta underflows; checked separately below
    ints = st.integers(-2, 2).map(float)  # exact ties
    floats = st.floats(-1, 1, allow_nan=False)
    flat = np.array(draw(st.lists(st.one_of(ints, floats), min_size=size, max_size=size)))
    return k, scale * flat.reshape(n, *shape)


def check_projection(name, geometry, k, T):
    poly = POLYTOPES[name][0](k)
    out = poly.project(T, geometry)
    assert out.shape == T.shape
    scale = max(1.0, np.abs(T).max())
    assert np.all(poly.contains(out, atol=1e-9 * scale)), out
    single = np.stack([poly.project(t, geometry) for t in T])
    np.testing.assert_allclose(single, out, atol=1e-9 * scale, rtol=0)
    # first-order optimality against every vertex:  <grad, v - mu> <= 0
    V = poly.vertices(k)
    for theta, mu in zip(T, out):
        if geometry == "euclidean":
            grad = theta - mu
        else:
            grad = theta - np.log(np.maximum(mu, 1e-300)) - 1.0
        slack = np.tensordot(V - mu, grad, axes=mu.ndim)
        bound = VI_RTOL * scale * max(1.0, np.abs(grad).max()) * mu.size
        assert slack.max() <= bound, (theta, mu, slack)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("geometry", GEOMS)
@settings(max_examples=25)
@given(data=st.data())
def test_projection_properties(name, geometry, data):
    k, T = data.draw(cases(name, geometry))
    check_projection(name, geometry, k, T)


@pytest.mark.parametrize("name", ["simplex", "cube", "knapsack", "order", "permutahedron"])
def test_kl_huge_values_stay_feasible(name):
    k = 4
    poly = POLYTOPES[name][0](k)
    T = thetas(name, k, 3, seed=5, scale=1e6)
    out = poly.project(T, "kl")
    assert np.all(np.isfinite(out)) and np.all(poly.contains(out, atol=1e-9))
    # at this scale the KL projection is the Euclidean one's limit: an LMO vertex or a face
    assert np.all(
        np.abs(np.sum(T * out, axis=1) - np.sum(T * poly.argmax(T), axis=1)) <= 1e-3 * 1e6
    )


def test_birkhoff_kl_spread_theta_converges_by_newton():
    T = thetas("birkhoff", 5, 3, seed=6, scale=30.0)
    out = pt.Birkhoff().project(T, "kl")
    assert np.all(pt.Birkhoff().contains(out, atol=1e-9))


# ------------------------------------------------------------------------ bad inputs
@pytest.mark.parametrize("name", NAMES)
def test_bad_inputs_raise(name):
    poly = POLYTOPES[name][0](3)
    good = np.zeros(shape_of(name, 3))
    for bad in (np.nan, np.inf):
        theta = good.copy()
        theta.flat[1] = bad
        with pytest.raises(ValueError, match="finite"):
            poly.project(theta)
        with pytest.raises(ValueError, match="finite"):
            poly.argmax(theta)
    with pytest.raises(ValueError, match="shape"):
        poly.project(np.zeros((2, 2, 3, 3)))
    with pytest.raises(ValueError, match="geometry"):
        poly.project(good, geometry="l1")
    with pytest.raises(ValueError, match="empty"):
        poly.project(np.zeros((0, *good.shape)))
    with pytest.raises(ValueError, match="numeric"):
        poly.project("abc")


def test_polytope_specific_errors():
    with pytest.raises(ValueError, match="square"):
        pt.Birkhoff().project(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="len\\(w\\)"):
        pt.Permutahedron([3, 2, 1]).project(np.zeros(4))
    with pytest.raises(NotApplicableError, match="positive"):
        pt.Permutahedron([1, 0, 0]).project(np.zeros(3), "kl")
    with pytest.raises(ValueError, match="high <= k"):
        pt.Knapsack(1, 4).project(np.zeros(3))
    with pytest.raises(ValueError, match="low <= high"):
        pt.Knapsack(2, 1)
    with pytest.raises(ValueError, match="integer"):
        pt.Knapsack(0.5, 1)
    with pytest.raises(ValueError, match="1-D"):
        pt.Permutahedron(np.zeros((2, 2)))


def test_birkhoff_not_converged_raises():
    """max_iter reached far from doubly stochastic: an error, never an infeasible point (a
    warning only when the marginal error is within CONTAINS_ATOL, see test_numeric_edges)."""
    T = thetas("birkhoff", 4, 2, seed=7, scale=5.0)
    for geometry in GEOMS:
        with pytest.raises(SolverError, match="marginal error.*not doubly stochastic"):
            pt.Birkhoff().project(T, geometry, max_iter=1, tol=1e-14)


def test_frank_wolfe_generic_user_polytope():
    """A user polytope given only by its LMO: the cross-polytope conv(+-e_i)."""

    def lmo(v):
        i = np.argmax(np.abs(v))
        out = np.zeros_like(v)
        out[i] = np.sign(v[i]) or 1.0
        return out

    theta = np.array([2.0, -0.5, 0.25])
    mu = pt.frank_wolfe_projection(lmo, theta, tol=1e-14)
    # projection onto the l1 ball: soft-threshold with sum |mu| = 1 -> (1, 0, 0)
    np.testing.assert_allclose(mu, [1.0, 0.0, 0.0], atol=1e-7)
    with pytest.raises(ValueError, match="finite"):
        pt.frank_wolfe_projection(lmo, [np.nan, 0.0])


def test_all_vertex_enumerations_are_distinct():
    for name in NAMES:
        V = POLYTOPES[name][0](3).vertices(3)
        flat = V.reshape(len(V), -1)
        assert len({tuple(r) for r in flat}) == len(flat)
        assert all(np.isin(flat, np.unique(flat)).ravel())


# ------------------------------------------ PAV and capped-sum kernels vs independent references
# Knapsack(m, m) is the capped sum {mu in [0,1]^k : sum mu = m} (Blondel 2019 Prop. 3's active case);
# the isotonic kernels are checked directly.  Inputs mix exact ties with free floats, k = 1..8,
# at scales 1e-8, 1 and 1e8; errors are measured relative to the scale of the input.
KERNEL_SCALES = [1e-8, 1.0, 1e8]
KERNEL_RTOL = 64 * np.finfo(float).eps  # times k and max|input|: a few roundings per coordinate


@st.composite
def kernel_rows(draw, max_k=8):
    k = draw(st.integers(1, max_k))
    n = draw(st.integers(1, 4))
    scale = draw(st.sampled_from(KERNEL_SCALES))
    entry = st.one_of(
        st.sampled_from([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5]),  # repeated values: ties
        st.floats(-3.0, 3.0, allow_nan=False),
    )
    rows = draw(st.lists(st.lists(entry, min_size=k, max_size=k), min_size=n, max_size=n))
    return np.array(rows) * scale


def kernel_atol(X):
    return KERNEL_RTOL * X.shape[-1] * max(np.abs(X).max(), np.finfo(float).tiny)


def minmax_isotonic_decreasing(block_value, k):
    """x_i = min_{l <= i} max_{j >= i} m(l, j) (Robertson, Wright & Dykstra 1988, Thm 1.4.4, for a
    non-increasing fit), by plain loops."""
    return np.array(
        [min(max(block_value(l, j) for j in range(i, k)) for l in range(i + 1)) for i in range(k)]
    )


@settings(max_examples=60, deadline=None)
@given(Y=kernel_rows())
def test_pav_mean_matches_sklearn(Y):
    from sklearn.isotonic import IsotonicRegression

    X = pt._isotonic_decreasing_mean(Y)
    k = Y.shape[1]
    for x, y in zip(X, Y):
        ref = IsotonicRegression(increasing=False).fit_transform(np.arange(k), y)
        np.testing.assert_allclose(x, ref, rtol=0, atol=kernel_atol(Y))
    assert np.all(X[:, :-1] >= X[:, 1:])  # exactly monotone: pooled blocks share one float


@settings(max_examples=60, deadline=None)
@given(S=kernel_rows(), data=st.data())
def test_pav_kl_matches_minmax_formula(S, data):
    from scipy.special import logsumexp

    k = S.shape[1]
    w = np.array(data.draw(st.lists(st.sampled_from([0.25, 1.0, 3.0]), min_size=k, max_size=k)))
    V = pt._isotonic_decreasing_kl(S, np.broadcast_to(w, S.shape))
    for v, s in zip(V, S):
        ref = minmax_isotonic_decreasing(
            lambda l, j, s=s: logsumexp(s[l : j + 1]) - np.log(w[l : j + 1].sum()), k
        )
        np.testing.assert_allclose(v, ref, rtol=0, atol=kernel_atol(S) + 1e-13)
    assert np.all(V[:, :-1] >= V[:, 1:])


def capped_sum_reference(theta, m, geometry):
    """Brute force over which coordinates sit at 1 (and, Euclidean, which are positive): the
    closed-form tau of every choice, keeping the choice whose tau violates its caps least."""
    k = theta.size
    if m == 0 or m == k:
        return np.full(k, float(m == k))
    u = np.sort(theta)[::-1]
    best, best_tau = np.inf, None
    for b in range(int(m)):  # b coordinates at 1
        if geometry == "kl":
            from scipy.special import logsumexp

            tau = logsumexp(u[b:] - 1.0) - np.log(m - b)
            bad = max(u[b] - 1.0 - tau, 0.0) + (max(tau - (u[b - 1] - 1.0), 0.0) if b else 0.0)
            if bad < best:
                best, best_tau = bad, tau
            continue
        for a in range(b + 1, k + 1):  # coordinates b..a-1 free, a.. at 0
            tau = (u[b:a].sum() - (m - b)) / (a - b)
            bad = max(u[b] - 1.0 - tau, 0.0) + max(tau - u[a - 1], 0.0)
            bad += max(tau - (u[b - 1] - 1.0), 0.0) if b else 0.0
            bad += max(u[a] - tau, 0.0) if a < k else 0.0
            if bad < best:
                best, best_tau = bad, tau
    if geometry == "kl":
        return np.exp(np.minimum(theta - 1.0 - best_tau, 0.0))
    return np.clip(theta - best_tau, 0.0, 1.0)


@pytest.mark.parametrize("geometry", GEOMS)
@settings(max_examples=60, deadline=None)
@given(T=kernel_rows(), data=st.data())
def test_capped_sum_matches_brute_force(geometry, T, data):
    k = T.shape[1]
    m = data.draw(st.integers(0, k))
    mu = pt.Knapsack(m, m).project(T, geometry)
    # mu = theta - tau is exact to rounding of theta (Euclidean) or of the exponent (KL)
    atol = kernel_atol(T) + 1e-12
    for row, theta in zip(mu, T):
        ref = capped_sum_reference(theta, m, geometry)
        np.testing.assert_allclose(row, ref, rtol=0, atol=atol)
    np.testing.assert_allclose(mu.sum(axis=1), m, rtol=0, atol=k * atol)
    assert np.all((mu >= 0) & (mu <= 1))


@pytest.mark.parametrize(
    "polytope",
    [pt.OrderSimplex(), pt.Permutahedron(w_for(6)), pt.Knapsack(2, 2), pt.Knapsack(1, 4)],
    ids=repr,
)
@pytest.mark.parametrize("geometry", GEOMS)
def test_vectorised_kernels_do_not_mix_rows(polytope, geometry):
    """Each row of a batch is projected exactly as when it is alone (rows pool independently)."""
    T = thetas("permutahedron", 6, 40, seed=9)
    T[::3, 2:5] = T[::3, 1:2]  # ties
    batch = polytope.project(T, geometry)
    for theta, mu in zip(T, batch):
        np.testing.assert_array_equal(polytope.project(theta, geometry), mu)
