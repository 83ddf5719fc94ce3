r"""Linear descriptions of polytopes, and the LP / QP machinery of a polytope known only by one.

A bilinear game over a polytope (Fathony et al. 2018c, §3; the polytopes of Blondel 2019, §4)
dualises to a linear program whenever the polytope has a linear description

.. math::  \mathcal P = \{z \in \mathbb R^d : \exists\, w \in \mathbb R^{n_{aux}},\
           A_{ub} [z; w] \le b_{ub},\ A_{eq} [z; w] = b_{eq}\},

possibly an *extended formulation* (Conforti, Cornuéjols & Zambelli 2010) with auxiliary
variables ``w`` when that is smaller than the facets of ``P`` itself: the permutahedron of ``w``
has ``2^k - 2`` facets but is the image ``z = B w`` of the Birkhoff polytope (Rado 1952; Goemans
2015), ``k^2`` auxiliary variables and ``O(k^2)`` rows.  This module builds the descriptions of
the polytopes of :mod:`advgame.polytopes` (:class:`LinearDescription`), enumerates the vertices
of a small one by its bases (:func:`enumerate_vertices`), and runs the linear maximisation
oracle, the Euclidean projection and the membership test over any description with HiGHS
(:class:`DescriptionSolver`); :class:`advgame.polytopes.Polyhedron` and
:class:`advgame.polytopes.ConvexHull` (a user's own polytopes) are built on these.

Nothing here imports :mod:`advgame.polytopes`; HiGHS is imported on first use.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import sparse

from ._validation import as_float_array, check_finite
from .exceptions import SizeLimitError, SolverError

__all__ = [
    "LinearDescription",
    "MAX_BASES",
    "VERTEX_RTOL",
    "check_constraints",
    "simplex",
    "unit_cube",
    "knapsack",
    "order_simplex",
    "permutahedron",
    "birkhoff",
    "row_stochastic",
    "from_maps",
    "hull",
    "enumerate_vertices",
    "row_scales",
    "hull_projection",
    "DescriptionSolver",
]

#: Largest number of candidate bases :func:`enumerate_vertices` solves (``C(rows, d)``).
MAX_BASES = 2_000_000
#: Relative tolerance (to the description's scale) of feasibility and deduplication of vertices.
VERTEX_RTOL = 1e-9
_BATCH = 20_000  # basis systems solved per numpy call
_MERGE_ENTRIES = 1 << 24  # largest (vertices^2 * d) array of the pairwise deduplication
_QP_ITERATIONS_PER_VARIABLE = 100  # HiGHS QP iteration cap per column and row


# ------------------------------------------------------------------------------ the dataclass
@dataclass(frozen=True, eq=False)
class LinearDescription:
    r"""``P = {z : exists w, A_ub [z; w] <= b_ub, A_eq [z; w] = b_eq}`` (every bound a row).

    Attributes
    ----------
    A_ub, A_eq : ndarray or scipy.sparse.csr_matrix, shapes ``(m_ub, dim + n_aux)``,
        ``(m_eq, dim + n_aux)``
        Dense float64 for the vector polytopes, CSR for the matrix ones (Birkhoff,
        row-stochastic, the permutahedron's extended formulation, a graph's marginal polytope);
        an absent block is an empty ``(0, dim + n_aux)`` array.
    b_ub, b_eq : ndarray, shapes ``(m_ub,)``, ``(m_eq,)``
    n_aux : int
        Auxiliary variables ``w`` of an extended formulation (0: the columns are ``z``).

    The variables are ``x = [z; w]``: the first :attr:`dim` columns are the point ``z``.
    """

    A_ub: Any
    b_ub: np.ndarray
    A_eq: Any
    b_eq: np.ndarray
    n_aux: int = 0

    def __post_init__(self):
        n = self.A_ub.shape[1]
        if self.A_eq.shape[1] != n:
            raise ValueError(
                f"A_ub and A_eq must have the same number of columns; got {self.A_ub.shape} "
                f"and {self.A_eq.shape}."
            )
        if self.b_ub.shape != (self.A_ub.shape[0],) or self.b_eq.shape != (self.A_eq.shape[0],):
            raise ValueError(
                f"b_ub and b_eq must have one entry per row of A_ub and A_eq; got shapes "
                f"{self.b_ub.shape} for {self.A_ub.shape[0]} rows and {self.b_eq.shape} for "
                f"{self.A_eq.shape[0]} rows."
            )
        if not 0 <= self.n_aux < n:
            raise ValueError(f"n_aux must be in [0, {n - 1}]; got {self.n_aux}.")

    @property
    def dim(self) -> int:
        """Dimension of the point ``z`` (columns minus :attr:`n_aux`)."""
        return self.A_ub.shape[1] - self.n_aux

    @property
    def n_vars(self) -> int:
        """Columns of ``A_ub`` / ``A_eq``: ``dim + n_aux``."""
        return self.A_ub.shape[1]

    def __repr__(self):
        kind = "sparse" if sparse.issparse(self.A_ub) else "dense"
        return (
            f"LinearDescription(dim={self.dim}, n_aux={self.n_aux}, {self.A_ub.shape[0]} "
            f"inequalities, {self.A_eq.shape[0]} equalities, {kind})"
        )


def _description(A_ub, b_ub, A_eq, b_eq, n_aux=0, csr=False):
    """A :class:`LinearDescription` of float64 blocks (CSR when ``csr``)."""
    convert = sparse.csr_matrix if csr else np.asarray
    return LinearDescription(
        convert(A_ub, dtype=np.float64),
        np.asarray(b_ub, dtype=np.float64),
        convert(A_eq, dtype=np.float64),
        np.asarray(b_eq, dtype=np.float64),
        n_aux,
    )


def _none(n):
    return np.zeros((0, n)), np.zeros(0)


def check_constraints(
    A_ub: ArrayLike, b_ub: ArrayLike, A_eq: ArrayLike | None = None, b_eq: ArrayLike | None = None
) -> LinearDescription:
    """A user's ``A_ub z <= b_ub, A_eq z = b_eq`` as a :class:`LinearDescription` (``n_aux = 0``):
    2-D / 1-D finite blocks of matching shapes (ValueError naming the argument otherwise).
    Sparse matrices stay sparse (CSR)."""
    if (A_eq is None) != (b_eq is None):
        raise ValueError("A_eq and b_eq must be given together (or both left None).")

    def matrix(name, A):
        if sparse.issparse(A):
            A = sparse.csr_matrix(A, dtype=np.float64)
            check_finite(name, A.data)
            return A
        A = as_float_array(name, A)
        if A.ndim != 2:
            raise ValueError(f"{name} must be a 2-D matrix; got an array with shape {A.shape}.")
        check_finite(name, A)
        return A

    def vector(name, b, rows):
        b = as_float_array(name, b)
        if b.shape != (rows,):
            raise ValueError(f"{name} must have shape ({rows},) (one per row); got {b.shape}.")
        check_finite(name, b)
        return b

    A_ub = matrix("A_ub", A_ub)
    if A_ub.shape[1] == 0:
        raise ValueError("A_ub must have at least one column (the dimension of the points).")
    b_ub = vector("b_ub", b_ub, A_ub.shape[0])
    if A_eq is None:
        A_eq, b_eq = _none(A_ub.shape[1])
        A_eq = sparse.csr_matrix(A_eq) if sparse.issparse(A_ub) else A_eq
    else:
        A_eq = matrix("A_eq", A_eq)
        if A_eq.shape[1] != A_ub.shape[1]:
            raise ValueError(
                f"A_eq must have as many columns as A_ub ({A_ub.shape[1]}); got {A_eq.shape[1]}."
            )
        b_eq = vector("b_eq", b_eq, A_eq.shape[0])
    return LinearDescription(A_ub, b_ub, A_eq, b_eq, 0)


# -------------------------------------------------------------------- the built-in polytopes
def simplex(d: int) -> LinearDescription:
    """``z >= 0, 1^T z = 1`` (dense)."""
    return _description(-np.eye(d), np.zeros(d), np.ones((1, d)), [1.0])


def unit_cube(d: int) -> LinearDescription:
    """``0 <= z <= 1`` (dense)."""
    return _description(
        np.vstack([np.eye(d), -np.eye(d)]), np.r_[np.ones(d), np.zeros(d)], *_none(d)
    )


def knapsack(d: int, low: int, high: int) -> LinearDescription:
    """``0 <= z <= 1, low <= 1^T z <= high`` (dense)."""
    one = np.ones((1, d))
    A = np.vstack([np.eye(d), -np.eye(d), one, -one])
    return _description(A, np.r_[np.ones(d), np.zeros(d), high, -low], *_none(d))


def order_simplex(d: int) -> LinearDescription:
    """``1 >= z_1 >= ... >= z_d >= 0``: ``d + 1`` rows, one per facet (dense)."""
    A = np.zeros((d + 1, d))
    A[0, 0] = 1.0
    A[np.arange(1, d), np.arange(1, d)] = 1.0  # z_{i+1} - z_i <= 0
    A[np.arange(1, d), np.arange(d - 1)] = -1.0
    A[d, d - 1] = -1.0
    b = np.zeros(d + 1)
    b[0] = 1.0
    return _description(A, b, *_none(d))


def _doubly_stochastic_rows(k):
    """Row and column sums of a row-major ``vec(B)``: ``(2k, k^2)`` CSR."""
    eye, one = sparse.identity(k), np.ones((1, k))
    return sparse.vstack([sparse.kron(eye, one), sparse.kron(one, eye)]).tocsr()


def birkhoff(k: int) -> LinearDescription:
    """``vec(B) >= 0``, ``B 1 = 1``, ``B^T 1 = 1`` over the row-major ``vec(B)`` (CSR)."""
    n = k * k
    return _description(
        -sparse.identity(n), np.zeros(n), _doubly_stochastic_rows(k), np.ones(2 * k), csr=True
    )


def row_stochastic(k: int) -> LinearDescription:
    """``vec(B) >= 0``, ``B 1 = 1`` over the row-major ``vec(B)`` (CSR)."""
    n = k * k
    rows = sparse.kron(sparse.identity(k), np.ones((1, k)))
    return _description(-sparse.identity(n), np.zeros(n), rows, np.ones(k), csr=True)


def permutahedron(w: np.ndarray) -> LinearDescription:
    r"""The permutahedron of ``w`` as the image of the Birkhoff polytope: ``z = B w`` with ``B``
    doubly stochastic (``n_aux = k^2``, row-major ``vec(B)``; CSR).

    Exact: by Birkhoff-von Neumann ``B`` is a mixture of permutation matrices, so ``B w`` is a
    mixture of permutations of ``w``, and every such mixture is of that form (Rado 1952;
    Goemans 2015 for extended formulations of the permutahedron).
    """
    k = w.size
    n = k * k
    image = sparse.hstack([sparse.identity(k), -sparse.kron(sparse.identity(k), w[None, :])])
    sums = sparse.hstack([sparse.csr_matrix((2 * k, k)), _doubly_stochastic_rows(k)])
    bounds = sparse.hstack([sparse.csr_matrix((n, k)), -sparse.identity(n)])
    return _description(
        bounds,
        np.zeros(n),
        sparse.vstack([image, sums]),
        np.r_[np.zeros(k), np.ones(2 * k)],
        n,
        csr=True,
    )


def from_maps(maps: Any, equalities: Any, rhs: np.ndarray) -> LinearDescription:
    r"""``{z = M mu : E mu = rhs, mu >= 0}`` for a linear map ``M`` (``maps``, ``d x n``) of
    variables ``mu`` (a graph's region marginals, Fathony et al. 2018b; CSR).

    Where ``M`` is a permutation (each row and column one 1: the regions are the nodes and edges
    themselves, a forest or the local polytope), ``mu = M^T z`` is substituted and there is no
    auxiliary variable; otherwise (a junction tree's bags) ``mu`` is kept as ``n_aux = n``
    auxiliary variables.
    """
    M = sparse.csr_matrix(maps, dtype=np.float64)
    E = sparse.csr_matrix(equalities, dtype=np.float64)
    d, n = M.shape
    ones_per_row = np.diff(M.indptr)
    permutation = (
        d == n
        and np.all(ones_per_row == 1)
        and np.all(M.data == 1.0)
        and np.all(np.bincount(M.indices, minlength=n) == 1)
    )
    if permutation:
        return _description(-sparse.identity(d), np.zeros(d), E @ M.T, rhs, csr=True)
    A_eq = sparse.vstack(
        [
            sparse.hstack([sparse.identity(d), -M]),
            sparse.hstack([sparse.csr_matrix((E.shape[0], d)), E]),
        ]
    )
    bounds = sparse.hstack([sparse.csr_matrix((n, d)), -sparse.identity(n)])
    return _description(bounds, np.zeros(n), A_eq, np.r_[np.zeros(d), rhs], n, csr=True)


def hull(V: np.ndarray) -> LinearDescription:
    r"""``conv(V)`` as ``z = V^T lambda``, ``lambda`` in the simplex (``n_aux = m``, dense)."""
    m, d = V.shape
    A_eq = np.block([[np.eye(d), -V.T], [np.zeros((1, d)), np.ones((1, m))]])
    A_ub = np.hstack([np.zeros((m, d)), -np.eye(m)])
    return _description(A_ub, np.zeros(m), A_eq, np.r_[np.zeros(d), 1.0], m)


# --------------------------------------------------------------------------- vertex enumeration
def _dense(A):
    return A.toarray() if sparse.issparse(A) else np.asarray(A)


def row_scales(A: Any) -> np.ndarray:
    """The largest ``|coefficient|`` of each row of ``A`` (1 for a zero row): tolerances apply to
    the rows scaled by it."""
    top = (
        np.asarray(abs(A).max(axis=1).todense()).ravel()
        if sparse.issparse(A)
        else (np.abs(A).max(axis=1, initial=0.0))
    )
    return np.where(top > 0, top, 1.0)


def enumerate_vertices(description: LinearDescription, max_bases: int = MAX_BASES) -> np.ndarray:
    r"""All vertices of a bounded description without auxiliary variables, by its bases.

    The equalities are eliminated (``z = z_0 + N t`` with ``N`` an orthonormal basis of the null
    space of ``A_eq``), leaving ``G t <= h`` in ``r = dim - rank(A_eq)`` dimensions; a vertex is
    the solution of ``r`` linearly independent tight rows that satisfies every other row
    (Motzkin, Raiffa, Thompson & Thrall 1953, the brute-force double description).  All
    ``C(m, r)`` systems are solved in batches with numpy; the feasible ones (to
    :data:`VERTEX_RTOL` of the description's scale) are deduplicated (solutions within
    ``sqrt(VERTEX_RTOL)`` of the scale are one vertex) and returned sorted lexicographically.

    Raises
    ------
    SizeLimitError
        More than ``max_bases`` candidate bases.
    ValueError
        The equalities are inconsistent (an empty polytope).
    """
    if description.n_aux:
        raise ValueError("enumerate_vertices needs a description without auxiliary variables.")
    A, b = _dense(description.A_ub), description.b_ub
    E, e = _dense(description.A_eq), description.b_eq
    d = description.dim
    scale = max(1.0, float(np.abs(b).max(initial=0)), float(np.abs(e).max(initial=0)))
    if E.shape[0]:
        z0, *_ = np.linalg.lstsq(E, e, rcond=None)
        if np.abs(E @ z0 - e).max() > VERTEX_RTOL * scale:
            raise ValueError(
                "the equalities A_eq z = b_eq have no solution: the polytope is empty."
            )
        _, s, vt = np.linalg.svd(E)
        rank = int(np.sum(s > 1e-12 * max(1.0, s[0])))
        N = vt[rank:].T
    else:
        z0, N = np.zeros(d), np.eye(d)
    r = N.shape[1]
    G, h = A @ N, b - A @ z0
    norms = np.abs(G).max(axis=1)
    keep = norms > 1e-12 * max(1.0, norms.max(initial=0))
    tol = VERTEX_RTOL * scale
    if np.any(h[~keep] < -tol):
        raise ValueError("a row 0 <= b_ub[i] < 0 fails: the polytope is empty.")
    G, h = G[keep] / norms[keep, None], h[keep] / norms[keep]
    if r == 0:
        return z0[None, :]
    m = G.shape[0]
    total = math.comb(m, r)
    if total > max_bases:
        raise SizeLimitError(
            f"enumerating the vertices of this polytope needs C({m}, {r}) = {total:,} basis "
            f"solves, over max_bases={max_bases:,}; use argmax (an LP) instead of the vertices."
        )
    found = []
    bases = combinations(range(m), r)
    while True:
        S = np.array([s for _, s in zip(range(_BATCH), bases)], dtype=np.intp).reshape(-1, r)
        if not S.size:
            break
        M = G[S]  # (N, r, r)
        sv = np.linalg.svd(M, compute_uv=False)
        regular = sv[:, -1] > 1e-10 * sv[:, 0]
        T = np.linalg.solve(M[regular], h[S[regular]][..., None])[..., 0]
        found.append(T[(T @ G.T - h).max(axis=1, initial=-np.inf) <= tol])
    T = np.vstack(found)
    Z = z0 + T @ N.T
    grid = np.sqrt(VERTEX_RTOL) * scale
    _, first = np.unique(np.round(Z / grid), axis=0, return_index=True)
    Z = Z[np.sort(first)]
    if Z.shape[0] ** 2 * d <= _MERGE_ENTRIES:  # copies that straddled a rounding boundary
        close = np.abs(Z[:, None, :] - Z[None, :, :]).max(axis=2) <= grid
        Z = Z[~np.any(np.triu(close, 1), axis=0)]
    return Z[np.lexsort(Z.T[::-1])]


# ---------------------------------------------------------------- projection onto a hull
def _affine_minimiser(Q):
    """Weights ``a`` (summing to 1) of the point of smallest norm in the affine hull of the rows
    of ``Q``: ``[[Q Q^T, 1], [1^T, 0]] [a; mu] = [0; 1]`` (least squares if singular)."""
    m = Q.shape[0]
    K = np.zeros((m + 1, m + 1))
    K[:m, :m] = Q @ Q.T
    K[:m, m] = K[m, :m] = 1.0
    rhs = np.zeros(m + 1)
    rhs[m] = 1.0
    return np.linalg.lstsq(K, rhs, rcond=None)[0][:m]


def hull_projection(V: np.ndarray, theta: np.ndarray) -> np.ndarray:
    r"""Euclidean projection of ``theta`` onto ``conv(rows of V)`` by Wolfe's minimum-norm-point
    algorithm (Wolfe 1976) on the points ``V - theta``: an active-set method that ends after
    finitely many steps, each an exact affine least-squares solve, so the result is exact to
    rounding (HiGHS' QP over the weights stalls on degenerate hulls, where many weight vectors
    give the same point).

    Major cycle: add the point minimising ``<p, x>`` unless ``|x|^2 - <p, x>`` is within
    rounding of 0 (``x`` is optimal); minor cycle: move to the affine minimiser of the active
    points, dropping the points whose weight it would make negative.
    """
    P = V - theta
    scale = max(1.0, float(np.abs(P).max()))
    tol = 1e-12 * scale * scale
    first = int(np.argmin(np.einsum("ij,ij->i", P, P)))
    active, weights = [first], np.ones(1)
    x = P[first].copy()
    for _ in range(50 * (V.shape[0] + V.shape[1]) + 100):
        j = int(np.argmin(P @ x))
        if x @ x - P[j] @ x <= tol or j in active:
            break
        active.append(j)
        weights = np.r_[weights, 0.0]
        while True:
            a = _affine_minimiser(P[active])
            if np.all(a > 1e-14):
                weights = a
                break
            falling = a <= 1e-14
            step = np.min(weights[falling] / (weights[falling] - a[falling]))
            weights = (1.0 - step) * weights + step * a
            keep = weights > 1e-14
            active = [i for i, kept in zip(active, keep) if kept]
            weights = weights[keep] / weights[keep].sum()
        x = weights @ P[active]
    return theta + x


# ------------------------------------------------------------------------------ HiGHS solver
class DescriptionSolver:
    r"""Linear maximisation, Euclidean projection and distance over a :class:`LinearDescription`,
    one persistent HiGHS model each (built on first use; only costs or bounds change per point).

    * :meth:`argmax`: ``max theta^T z`` over the description, a vertex (HiGHS' simplex returns a
      basic solution).
    * :meth:`project`: the QP ``min 1/2 ||z||^2 - theta^T z`` (HiGHS' active-set QP solver),
      *polished*: the KKT system of the constraints HiGHS leaves tight (equalities with them) is
      solved exactly by least squares and the polished point kept when it is feasible and at
      least as good, so the projection is exact to rounding, not only to the solver's tolerance.
    * :meth:`distance`: ``min ||z - mu||_inf`` over the description (an LP with ``t``), the
      membership test of a description with auxiliary variables.

    Per-point loops (one solve per point): HiGHS solves one program at a time.
    """

    def __init__(self, description: LinearDescription) -> None:
        self.description = description
        self._models: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._A_ub, self._A_eq = _dense(description.A_ub), _dense(description.A_eq)

    def _rows(self):
        desc = self.description
        A = sparse.vstack([sparse.csr_matrix(desc.A_ub), sparse.csr_matrix(desc.A_eq)])
        lower = np.r_[np.full(desc.A_ub.shape[0], -np.inf), desc.b_eq]
        upper = np.r_[desc.b_ub, desc.b_eq]
        return A, lower, upper

    def _model(self, kind):
        if kind in self._models:
            return self._models[kind]
        from .oracle import highs_model

        desc = self.description
        A, lower, upper = self._rows()
        n = desc.n_vars
        free = (np.full(n, -np.inf), np.full(n, np.inf))
        if kind == "distance":  # columns [x; t], rows |z - mu| <= t appended (bounds set per point)
            d = desc.dim
            pick = sparse.hstack([sparse.identity(d), sparse.csr_matrix((d, desc.n_aux))])
            t = sparse.csr_matrix(np.ones((d, 1)))
            A = sparse.vstack(
                [
                    sparse.hstack([A, sparse.csr_matrix((A.shape[0], 1))]),
                    sparse.hstack([pick, -t]),
                    sparse.hstack([pick, t]),
                ]
            )
            lower = np.r_[lower, np.full(d, -np.inf), np.zeros(d)]
            upper = np.r_[upper, np.zeros(d), np.full(d, np.inf)]
            cost = np.r_[np.zeros(n), 1.0]
            free = (np.r_[free[0], 0.0], np.r_[free[1], np.inf])
            h = highs_model(A, cost, free, (lower, upper))
        else:
            h = highs_model(A, np.zeros(n), free, (lower, upper), maximize=kind == "argmax")
        if kind == "project":
            import highspy

            hessian = highspy.HighsHessian()
            hessian.dim_ = n
            hessian.format_ = highspy.HessianFormat.kTriangular
            d = desc.dim
            hessian.start_ = np.r_[np.arange(d + 1), np.full(n - d, d)].astype(np.int32)
            hessian.index_ = np.arange(d, dtype=np.int32)
            hessian.value_ = np.ones(d)
            h.passHessian(hessian)
            # a stalling active-set QP ends with a SolverError instead of running on
            h.setOptionValue("qp_iteration_limit", _QP_ITERATIONS_PER_VARIABLE * (n + A.shape[0]))
        self._models[kind] = h
        return h

    @staticmethod
    def _solve(h, what):
        from .oracle import run_warm

        run_warm(h, what)
        return np.array(h.getSolution().col_value)

    def status(self, cost: np.ndarray) -> tuple[str, np.ndarray | None]:
        """``('optimal', z)``, ``('infeasible', None)`` or ``('unbounded', None)`` of
        ``max cost^T z`` (the checks of a user's description)."""
        import highspy

        with self._lock:
            h = self._model("argmax")
            h.changeColsCost(cost.size, np.arange(cost.size, dtype=np.int32), cost)
            h.run()
            status = h.getModelStatus()
            if status == highspy.HighsModelStatus.kOptimal:
                return "optimal", np.array(h.getSolution().col_value)[: self.description.dim]
            if status == highspy.HighsModelStatus.kInfeasible:
                return "infeasible", None
            if status in (
                highspy.HighsModelStatus.kUnbounded,
                highspy.HighsModelStatus.kUnboundedOrInfeasible,
            ):
                return "unbounded", None
            raise SolverError(
                f"HiGHS could not solve an LP: status '{h.modelStatusToString(status)}'."
            )

    def argmax(self, T: np.ndarray) -> np.ndarray:
        """A maximiser of ``theta^T z`` per row of ``T`` ``(n, dim)``."""
        return self._per_point("argmax", T, 1.0, "the linear maximisation over the polytope")

    def project(self, T: np.ndarray) -> np.ndarray:
        """The Euclidean projection of each row of ``T`` (the polished QP)."""
        return self._per_point("project", T, -1.0, "the Euclidean projection onto the polytope")

    def _per_point(self, kind, T, sign, what):
        """Solve model ``kind`` with costs ``sign * theta`` on ``z`` for each row of ``T``."""
        d = self.description.dim
        out = np.empty_like(T)
        index = np.arange(d, dtype=np.int32)
        with self._lock:
            h = self._model(kind)
            for i, theta in enumerate(T):
                h.changeColsCost(d, index, sign * theta)
                x = self._solve(h, what)
                out[i] = self._polish(x, theta) if kind == "project" else x[:d]
        return out

    def _polish(self, x, theta):
        """The KKT point of the constraints tight at ``x`` (least squares), if feasible and no
        farther from ``theta``; else ``x``'s point."""
        desc = self.description
        d, n = desc.dim, desc.n_vars
        A_ub, A_eq = self._A_ub, self._A_eq
        scale = max(1.0, float(np.abs(x).max()), float(np.abs(theta).max()))
        tight = desc.b_ub - A_ub @ x <= 1e-7 * scale * np.maximum(1.0, np.abs(A_ub).max(axis=1))
        C = np.vstack([A_ub[tight], A_eq])
        c = np.r_[desc.b_ub[tight], desc.b_eq]
        H = np.zeros((n, n))
        H[np.arange(d), np.arange(d)] = 1.0
        K = np.block([[H, C.T], [C, np.zeros((C.shape[0], C.shape[0]))]])
        rhs = np.r_[np.r_[theta, np.zeros(n - d)], c]
        y = np.linalg.lstsq(K, rhs, rcond=None)[0][:n]
        ok = np.all(A_ub @ y <= desc.b_ub + 1e-12 * scale) and np.all(
            np.abs(A_eq @ y - desc.b_eq) <= 1e-12 * scale
        )
        if ok and np.sum((y[:d] - theta) ** 2) <= np.sum((x[:d] - theta) ** 2) + 1e-12 * scale**2:
            return y[:d]
        return x[:d]

    def distance(self, M: np.ndarray) -> np.ndarray:
        """``min_{z in P} ||z - mu||_inf`` per row of ``M``."""
        desc = self.description
        d = desc.dim
        base = desc.A_ub.shape[0] + desc.A_eq.shape[0]
        rows = np.arange(base, base + 2 * d, dtype=np.int32)
        out = np.empty(M.shape[0])
        with self._lock:
            h = self._model("distance")
            for i, mu in enumerate(M):
                h.changeRowsBounds(
                    2 * d, rows, np.r_[np.full(d, -np.inf), mu], np.r_[mu, np.full(d, np.inf)]
                )
                out[i] = self._solve(h, "the distance to the polytope")[-1]
        return out
