"""Linear descriptions of the polytopes, and a user's own polytopes, against independent references.

* Every built-in description (simplex, unit cube, knapsack, order simplex, permutahedron through
  Birkhoff, Birkhoff, row-stochastic, a tree's and a cycle's marginal polytope): every row of
  ``vertices(dim)`` is feasible (an LP with ``z`` fixed, scipy's ``linprog``), and for many random
  and tied directions the LP's optimum over the description equals the maximum over the vertex
  list and ``argmax``'s value; for a generic direction the LP's point is the unique best vertex.
* ``Polytope.from_vertices`` and ``Polytope.from_constraints`` of the same polytope (facets from
  ``scipy.spatial.ConvexHull`` or written by hand) agree on ``argmax``, ``contains``,
  ``vertices`` and ``project``; projections satisfy the variational inequality against every
  vertex and equal a cvxpy QP.
"""

import cvxpy as cp
import networkx as nx
import numpy as np
import pytest
import scipy.spatial
from hypothesis import given
from hypothesis import strategies as st
from scipy import sparse
from scipy.optimize import linprog

import advgame.polytopes as pt
from advgame.exceptions import NotApplicableError, SizeLimitError
from advgame.polyhedra import enumerate_vertices

LP_ATOL = 1e-8
QP_ATOL = 1e-5
VI_ATOL = 1e-9
CLARABEL = {"solver": "CLARABEL", "tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}


def lp_max(desc, theta, fixed=None):
    """``max theta.z`` over the description with scipy's HiGHS (z fixed to ``fixed`` if given):
    ``(value, z)``, or None if infeasible."""
    n = desc.dim + desc.n_aux
    bounds = [(None, None)] * n
    if fixed is not None:
        bounds[: desc.dim] = [(x, x) for x in fixed]
    has_eq = desc.A_eq.shape[0] > 0
    result = linprog(
        -np.r_[theta, np.zeros(desc.n_aux)],
        A_ub=desc.A_ub,
        b_ub=desc.b_ub,
        A_eq=desc.A_eq if has_eq else None,
        b_eq=desc.b_eq if has_eq else None,
        bounds=bounds,
        method="highs",
    )
    if result.status == 2:
        return None
    assert result.status == 0, result.message
    return -result.fun, result.x[: desc.dim]


def marginal_vertices(graph, k):
    """Node one-hots then edge one-hot outer products (row-major, ``list(graph.edges())``) of
    every labeling: the vertices of the marginal polytope, by brute force."""
    n = graph.number_of_nodes()
    labelings = np.array(np.meshgrid(*[np.arange(k)] * n, indexing="ij")).reshape(n, -1).T
    rows = []
    for y in labelings:
        nodes = np.eye(k)[y].ravel()
        edges = [np.outer(np.eye(k)[y[i]], np.eye(k)[y[j]]).ravel() for i, j in graph.edges()]
        rows.append(np.concatenate([nodes, *edges]))
    return np.array(rows)


def w_perm(k):
    return np.arange(1.0, k + 1)


# name -> (polytope, dim, vertex list (flat), argmax on a flat direction or None)
def cases():
    out = {}
    for k in range(2, 6):
        out[f"simplex-{k}"] = (pt.Simplex(), k, pt.Simplex().vertices(k))
    for k in range(1, 5):
        out[f"cube-{k}"] = (pt.UnitCube(), k, pt.UnitCube().vertices(k))
    for k, low, high in [(3, 1, 2), (4, 1, 2), (4, 2, 2), (4, 0, 4), (3, 0, 1)]:
        P = pt.Knapsack(low, high)
        out[f"knapsack-{k}-{low}-{high}"] = (P, k, P.vertices(k))
    for labels in range(2, 6):
        out[f"order-{labels}"] = (
            pt.OrderSimplex(),
            labels - 1,
            pt.OrderSimplex().vertices(labels - 1),
        )
    for w in [w_perm(2), w_perm(3), w_perm(4), np.array([2.0, -1.0, 2.0, 0.5])]:
        P = pt.Permutahedron(w)
        out[f"permutahedron-{w.tolist()}"] = (P, w.size, P.vertices(w.size))
    for k in (2, 3):
        out[f"birkhoff-{k}"] = (pt.Birkhoff(), k * k, pt.Birkhoff().vertices(k).reshape(-1, k * k))
        V = pt.RowStochastic().vertices(k).reshape(-1, k * k)
        out[f"row-stochastic-{k}"] = (pt.RowStochastic(), k * k, V)
    tree = nx.Graph([(0, 1), (2, 1), (1, 3)])  # an edge listed against the node order
    for k in (2, 3):
        out[f"tree-{k}"] = (pt.Marginal(tree), None, marginal_vertices(tree, k), {"k": k})
    out["chain-4"] = (
        pt.Marginal("chain"),
        None,
        marginal_vertices(nx.path_graph(4), 2),
        {"k": 2, "n_nodes": 4},
    )
    cycle = nx.cycle_graph(4)
    out["cycle-junction-tree"] = (pt.Marginal(cycle), None, marginal_vertices(cycle, 2), {"k": 2})
    return out


CASES = cases()


def describe(case):
    P, dim, V, *extra = case
    return P.constraints(dim, **(extra[0] if extra else {})), V


def argmax_value(P, theta, V):
    """``theta . argmax(theta)`` through the polytope's own oracle (None where it has none)."""
    if isinstance(P, pt.Marginal):
        return None
    if P.point_ndim == 2:
        k = int(np.sqrt(theta.size))
        return float(theta @ P.argmax(theta.reshape(k, k)).ravel())
    return float(theta @ P.argmax(theta))


@pytest.mark.parametrize("name", list(CASES))
def test_vertices_are_feasible(name):
    desc, V = describe(CASES[name])
    assert desc.dim == V.shape[1]
    for v in V:
        assert lp_max(desc, np.zeros(desc.dim), fixed=v) is not None, v


@pytest.mark.parametrize("name", list(CASES))
def test_lp_over_the_description_is_the_max_over_the_vertices(name):
    P = CASES[name][0]
    desc, V = describe(CASES[name])
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    directions = list(rng.normal(size=(30, desc.dim))) + list(
        rng.integers(-2, 3, size=(15, desc.dim))
    )
    for theta in directions:
        theta = theta.astype(float)
        value, z = lp_max(desc, theta)
        scores = V @ theta
        np.testing.assert_allclose(value, scores.max(), atol=LP_ATOL)
        own = argmax_value(P, theta, V)
        if own is not None:
            np.testing.assert_allclose(own, value, atol=LP_ATOL)
        if np.sort(scores)[-2] < scores.max() - 1e-6:  # a unique best vertex: the LP finds it
            np.testing.assert_allclose(z, V[np.argmax(scores)], atol=1e-7)


@given(
    st.integers(2, 5),
    st.lists(st.integers(-3, 3), min_size=5, max_size=5),
    st.sampled_from(["order", "cube", "knapsack", "permutahedron"]),
)
def test_tied_directions(k, entries, kind):
    """Integer directions (many ties): LP optimum = max over vertices = argmax's value."""
    P, dim = {
        "order": (pt.OrderSimplex(), k - 1),
        "cube": (pt.UnitCube(), k),
        "knapsack": (pt.Knapsack(1, max(1, k - 2)), k),
        "permutahedron": (pt.Permutahedron(w_perm(k)), k),
    }[kind]
    theta = np.array(entries[:dim], dtype=float)
    desc, V = P.constraints(dim), P.vertices(dim)
    value, _ = lp_max(desc, theta)
    assert value == pytest.approx((V @ theta).max(), abs=LP_ATOL)
    assert float(theta @ P.argmax(theta)) == pytest.approx(value, abs=LP_ATOL)


def test_formats_and_sizes():
    simplex = pt.Simplex().constraints(4)
    assert isinstance(simplex.A_ub, np.ndarray) and simplex.n_aux == 0 and simplex.dim == 4
    assert simplex.A_eq.shape == (1, 4) and simplex.b_ub.dtype == np.float64
    cube = pt.UnitCube().constraints(3)
    assert cube.A_eq.shape == (0, 3) and cube.b_eq.shape == (0,)
    perm = pt.Permutahedron(w_perm(5)).constraints()
    assert sparse.isspmatrix_csr(perm.A_eq) and perm.n_aux == 25 and perm.dim == 5
    assert perm.A_ub.shape[0] < 2**5 - 2  # smaller than the facets
    birkhoff = pt.Birkhoff().constraints(16)
    assert sparse.isspmatrix_csr(birkhoff.A_ub) and birkhoff.dim == 16
    tree = pt.Marginal(nx.path_graph(3)).constraints(k=2)
    assert tree.n_aux == 0 and tree.dim == 3 * 2 + 2 * 4
    assert pt.Marginal(nx.path_graph(3)).constraints(3 * 2 + 2 * 4).dim == 14  # k from dim
    assert pt.Marginal(nx.cycle_graph(4)).constraints(k=2).n_aux > 0  # the junction tree's bags
    assert "n_aux=25" in repr(perm)


def test_the_local_polytope_of_a_cycle_is_a_relaxation():
    """On a frustrated 3-cycle the local polytope has a fractional vertex above every labeling."""
    cycle = nx.cycle_graph(3)
    local = pt.Marginal(cycle, relaxation="local").constraints(k=2)
    exact = pt.Marginal(cycle).constraints(k=2)
    V = marginal_vertices(cycle, 2)
    disagree = np.r_[np.zeros(6), np.tile([0.0, 1.0, 1.0, 0.0], 3)]  # reward y_i != y_j on edges
    assert lp_max(local, disagree)[0] == pytest.approx(3.0)
    assert lp_max(exact, disagree)[0] == pytest.approx((V @ disagree).max()) == pytest.approx(2.0)


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: pt.Simplex().constraints(), ValueError),
        (lambda: pt.Simplex().constraints(0), ValueError),
        (lambda: pt.Simplex().constraints(2.5), ValueError),
        (lambda: pt.Birkhoff().constraints(8), ValueError),
        (lambda: pt.Birkhoff().constraints(), ValueError),
        (lambda: pt.Permutahedron([1.0, 2.0]).constraints(3), ValueError),
        (lambda: pt.Knapsack(1, 3).constraints(2), ValueError),
        (lambda: pt.Unconstrained().constraints(3), NotApplicableError),
        (lambda: pt.Marginal("chain").constraints(k=2), ValueError),
        (lambda: pt.Marginal(nx.path_graph(3)).constraints(), ValueError),
        (lambda: pt.Marginal(nx.path_graph(3)).constraints(13), ValueError),
        (lambda: pt.Marginal(nx.path_graph(3)).constraints(k=2, n_nodes=4), ValueError),
    ],
)
def test_bad_dimensions(call, error):
    with pytest.raises(error):
        call()


# ------------------------------------------------------------------------- user polytopes
def hull_pair(points):
    """``(from_vertices, from_constraints, extreme points)`` of ``conv(points)`` (full-dimensional),
    the facets from ``scipy.spatial.ConvexHull`` (Qhull)."""
    hull = scipy.spatial.ConvexHull(points)
    V = points[hull.vertices]
    A, b = hull.equations[:, :-1], -hull.equations[:, -1]
    return pt.Polytope.from_vertices(V), pt.Polytope.from_constraints(A, b), V


def sorted_rows(X):
    return X[np.lexsort(np.round(X, 8).T[::-1])]


def user_cases():
    rng = np.random.default_rng(3)
    out = {f"random-{d}d": hull_pair(rng.normal(size=(12, d))) for d in (2, 3)}
    knap = pt.Knapsack(1, 2)
    desc = knap.constraints(3)
    out["knapsack"] = (
        pt.Polytope.from_vertices(knap.vertices(3)),
        pt.Polytope.from_constraints(desc.A_ub, desc.b_ub),
        knap.vertices(3),
    )
    # a hexagon in the plane sum = 6: the permutahedron of (1, 2, 3) by its majorisation facets
    perm = pt.Permutahedron([1.0, 2.0, 3.0])
    A_ub = np.vstack([np.eye(3), -np.eye(3)])
    b_ub = np.r_[np.full(3, 3.0), -np.ones(3)]
    out["hexagon"] = (
        pt.Polytope.from_vertices(perm.vertices(3)),
        pt.Polytope.from_constraints(A_ub, b_ub, np.ones((1, 3)), [6.0]),
        perm.vertices(3),
    )
    return out


USER = user_cases()


@pytest.mark.parametrize("name", list(USER))
def test_user_vertices_and_argmax_agree(name):
    hull, poly, V = USER[name]
    np.testing.assert_allclose(sorted_rows(poly.vertices()), sorted_rows(V), atol=1e-9)
    np.testing.assert_array_equal(hull.vertices(), V)
    rng = np.random.default_rng(0)
    T = rng.normal(size=(40, V.shape[1]))
    best = (T @ V.T).max(axis=1)
    for P in (hull, poly):
        np.testing.assert_allclose(np.sum(T * P.argmax(T), axis=1), best, atol=1e-9)
        np.testing.assert_allclose(P.argmax(T[0]), P.argmax(T[:1])[0])
    np.testing.assert_allclose(hull.argmax(T), poly.argmax(T), atol=1e-9)


def test_polyhedron_argmax_by_lp_when_the_vertices_are_many(monkeypatch):
    _, poly, V = USER["random-3d"]
    T = np.random.default_rng(1).normal(size=(10, 3))
    monkeypatch.setattr(pt, "VERTEX_TABLE_BASES", 0)
    fresh = pt.Polytope.from_constraints(*(lambda d: (d.A_ub, d.b_ub))(poly.constraints()))
    np.testing.assert_allclose(fresh.argmax(T), V[np.argmax(T @ V.T, axis=1)], atol=1e-8)
    assert fresh._table is None  # answered by HiGHS, not by the vertex table


@pytest.mark.parametrize("name", list(USER))
def test_user_contains_agree(name):
    hull, poly, V = USER[name]
    rng = np.random.default_rng(2)
    lam = rng.dirichlet(np.ones(len(V)), size=20)
    inside = lam @ V
    outside = inside + rng.normal(size=inside.shape) * 2
    for P in (hull, poly):
        assert P.contains(inside).all() and P.contains(V).all() and P.contains(V[0])
    np.testing.assert_array_equal(hull.contains(outside), poly.contains(outside))
    reference = [
        lp_max(poly.constraints(), np.zeros(V.shape[1]), fixed=z) is not None for z in outside
    ]
    np.testing.assert_array_equal(hull.contains(outside), reference)
    # just outside a vertex, along the direction that vertex maximises
    theta = V[0] - V.mean(axis=0)
    top = V[np.argmax(V @ theta)]
    for P in (hull, poly):
        assert not P.contains(top + 1e-5 * theta / np.linalg.norm(theta))


@pytest.mark.parametrize("name", list(USER))
def test_user_projection(name):
    hull, poly, V = USER[name]
    rng = np.random.default_rng(4)
    T = rng.normal(size=(8, V.shape[1])) * 3
    T[0] = V[0]  # a vertex projects onto itself
    T[1] = V.mean(axis=0)  # an interior point (the mean of the vertices) too
    mu_h, mu_p = hull.project(T), poly.project(T)
    np.testing.assert_allclose(mu_h, mu_p, atol=1e-9)
    for theta, mu in zip(T, mu_p):
        # variational inequality: (theta - mu).(v - mu) <= 0 for every vertex v
        assert ((V - mu) @ (theta - mu)).max() <= VI_ATOL * max(1.0, np.abs(theta).max())
        z = cp.Variable(V.shape[1])
        lam = cp.Variable(len(V), nonneg=True)
        cp.Problem(
            cp.Minimize(cp.sum_squares(z - theta)), [z == V.T @ lam, cp.sum(lam) == 1]
        ).solve(**CLARABEL)
        # at least as close as the interior-point solution (only ~1e-6 accurate at a vertex)
        assert np.sum((mu - theta) ** 2) <= np.sum((z.value - theta) ** 2) + 1e-9
        np.testing.assert_allclose(mu, z.value, atol=QP_ATOL)
    np.testing.assert_allclose(mu_p[:2], T[:2], atol=1e-12)
    np.testing.assert_allclose(poly.project(T[2]), mu_p[2])
    with pytest.raises(NotApplicableError):
        poly.project(T, geometry="kl")


def test_user_polytope_matches_the_built_in():
    """``from_vertices`` of the simplex's vertices is the simplex: same argmax, projection and
    Fenchel-Young loss."""
    hull = pt.Polytope.from_vertices(np.eye(4))
    T = np.random.default_rng(5).normal(size=(6, 4))
    np.testing.assert_allclose(hull.project(T), pt.Simplex().project(T), atol=1e-10)
    np.testing.assert_array_equal(hull.argmax(T), pt.Simplex().argmax(T))
    Y = np.eye(4)[[0, 1, 2, 3, 0, 1]]
    ours = pt.FenchelYoungLoss(hull)(T, Y)
    np.testing.assert_allclose(ours, pt.FenchelYoungLoss(pt.Simplex())(T, Y), atol=1e-9)


def test_user_descriptions():
    hull, poly, V = USER["knapsack"]
    d = hull.constraints()
    assert d.n_aux == len(V) and d.dim == 3
    assert poly.constraints(3).n_aux == 0
    value, _ = lp_max(d, np.array([1.0, 2.0, 3.0]))
    assert value == pytest.approx(5.0)
    np.testing.assert_allclose(poly.lower, 0.0)
    np.testing.assert_allclose(poly.upper, 1.0)
    with pytest.raises(ValueError):
        hull.constraints(4)
    with pytest.raises(ValueError):
        hull.vertices(2)
    with pytest.raises(ValueError):
        poly.argmax(np.ones(4))


def test_vertex_enumeration_limit():
    cube = pt.UnitCube().constraints(12)
    with pytest.raises(SizeLimitError):
        enumerate_vertices(cube, max_bases=1000)
    assert len(enumerate_vertices(pt.UnitCube().constraints(4))) == 16


@pytest.mark.parametrize(
    "args, match",
    [
        ((np.eye(2), np.ones(2)), "unbounded"),
        ((np.vstack([np.eye(2), -np.eye(2)]), -np.ones(4)), "empty"),
        ((np.vstack([np.eye(2), -np.eye(2)]), np.ones(4), np.ones((1, 2)), [5.0]), "empty"),
        ((np.eye(2), np.ones(3)), "b_ub"),
        ((np.ones(3), np.ones(3)), "A_ub"),
        ((np.array([[np.nan, 1.0]]), np.ones(1)), "A_ub"),
        ((np.eye(2), np.array([1.0, np.inf])), "b_ub"),
        ((np.eye(2), np.ones(2), np.ones((1, 2)), None), "together"),
        ((np.eye(2), np.ones(2), np.ones((1, 3)), [1.0]), "columns"),
    ],
)
def test_from_constraints_validation(args, match):
    with pytest.raises(ValueError, match=match):
        pt.Polytope.from_constraints(*args)


@pytest.mark.parametrize("V", [np.ones(3), np.zeros((0, 2)), np.array([[1.0, np.nan]]), [["a"]]])
def test_from_vertices_validation(V):
    with pytest.raises(ValueError, match="V"):
        pt.Polytope.from_vertices(V)


@given(st.integers(0, 2**32 - 1), st.integers(2, 3), st.integers(5, 10))
def test_random_hulls_agree(seed, d, m):
    """Random point clouds: the hull by its points and by Qhull's facets give the same argmax
    values, membership and projections."""
    rng = np.random.default_rng(seed)
    hull, poly, V = hull_pair(rng.normal(size=(m, d)))
    T = rng.normal(size=(6, d)) * 2
    np.testing.assert_allclose(
        np.sum(T * hull.argmax(T), axis=1), np.sum(T * poly.argmax(T), axis=1), atol=1e-9
    )
    np.testing.assert_allclose(hull.project(T), poly.project(T), atol=1e-8)
    probe = np.vstack([rng.dirichlet(np.ones(len(V)), size=4) @ V, T])
    np.testing.assert_array_equal(hull.contains(probe), poly.contains(probe))


def test_sparse_constraints():
    """A user's sparse description (Birkhoff's, k = 2) is kept sparse and gives its vertices."""
    desc = pt.Birkhoff().constraints(4)
    poly = pt.Polytope.from_constraints(desc.A_ub, desc.b_ub, desc.A_eq, desc.b_eq)
    assert sparse.issparse(poly.constraints().A_ub)
    np.testing.assert_allclose(
        sorted_rows(poly.vertices()),
        sorted_rows(pt.Birkhoff().vertices(2).reshape(-1, 4)),
        atol=1e-12,
    )
    assert poly.contains(np.full(4, 0.5)) and not poly.contains(np.array([1.0, 0.0, 1.0, 0.0]))
    np.testing.assert_allclose(
        poly.project(np.array([2.0, 0.0, 0.0, 1.0])), [1, 0, 0, 1], atol=1e-12
    )
