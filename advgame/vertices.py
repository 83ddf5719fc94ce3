r"""Extreme points of the adversary's polytope and vertex tables (Fathony et al. 2018a, §3, Proposition 4).

For a loss matrix ``L`` (``l x k``) the per-sample game is the LP of Fathony et al. 2018a, Eq. (4),

.. math::  V(f) = \max_{(q, v) \in C} v + f^\top q, \qquad
           C = \{(q, v) : L q \ge v \mathbf 1,\ q \ge 0,\ \mathbf 1^\top q = 1\}.

Proposition 4: an optimum is attained at a point of ``C`` whose active constraints have rank
``k + 1``.  Every such point is a vertex of ``C`` and, because ``C`` recedes only along
``(0, -1)``, every vertex is optimal for some ``f``.  So once the vertex set ``(Q, v)`` is known,
``V(F) = max(F Q^T + v)`` row-wise: one matrix product for all samples.

Enumeration is by bases: a vertex solves ``L[S, R] q_R = v 1, sum(q_R) = 1`` for a set ``R`` of
free coordinates and an equal-sized set ``S`` of tight loss rows; all ``sum_r C(k, r) C(l, r)``
systems are solved in batches with numpy and the feasible, distinct solutions kept.
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np
from numpy.typing import ArrayLike

from .exceptions import SizeLimitError

__all__ = [
    "DEFAULT_MAX_BASES",
    "VERTEX_TOL",
    "basis_count",
    "enumerate_extreme_points",
    "VertexTable",
]

#: Largest number of candidate bases :func:`enumerate_extreme_points` solves by default.
DEFAULT_MAX_BASES = 3_000_000
#: Tolerance (relative to ``max(L)``) for feasibility, tightness and deduplication of vertices.
VERTEX_TOL = 1e-9
_BATCH = 50_000  # candidate systems solved per numpy call
_CHUNK_ENTRIES = 1 << 22  # entries of an (n, m) score block in VertexTable


def basis_count(n_actions: int, n_labels: int) -> int:
    """Number of candidate bases ``sum_r C(k, r) C(l, r) = C(k + l, k) - 1``."""
    return comb(n_actions + n_labels, n_labels) - 1


def enumerate_extreme_points(
    matrix: ArrayLike, max_bases: int = DEFAULT_MAX_BASES
) -> tuple[np.ndarray, np.ndarray]:
    r"""All extreme points of ``C = {(q, v) : L q >= v 1, q in Δ}`` (Fathony et al. 2018a, Proposition 4).

    Parameters
    ----------
    matrix : ndarray of shape (l, k)
        A non-negative loss matrix.
    max_bases : int
        Refuse (``SizeLimitError``) when more than this many candidate bases would be solved.

    Returns
    -------
    Q : ndarray of shape (m, k)
        The adversary distributions at the vertices, sorted by ``v`` then lexicographically.
    v : ndarray of shape (m,)
        ``v_t = min_a (L q_t)_a``, the Bayes risk ``H_L(q_t)``.
    """
    L = np.asarray(matrix, dtype=np.float64)
    l, k = L.shape
    total = basis_count(l, k)
    if total > max_bases:
        raise SizeLimitError(
            f"enumerating the extreme points of a {l}x{k} loss matrix needs {total:,} basis solves, "
            f"over max_bases={max_bases:,}; raise max_bases or use method='lp'."
        )
    scale = L.max() if L.max() > 0 else 1.0
    Ls = L / scale
    found = []
    for r in range(1, min(k, l) + 1):
        R = np.array(list(combinations(range(k), r)))
        S = np.array(list(combinations(range(l), r)))
        pairs = np.stack(np.meshgrid(np.arange(len(R)), np.arange(len(S)), indexing="ij"), -1)
        pairs = pairs.reshape(-1, 2)
        for start in range(0, len(pairs), _BATCH):
            block = pairs[start : start + _BATCH]
            found.append(_solve_bases(Ls, R[block[:, 0]], S[block[:, 1]]))
    Q = np.vstack(found)
    return _distinct(Q, Ls, scale)


def _solve_bases(Ls, R, S):
    """Solve the basis systems for free coordinates ``R`` and tight rows ``S`` (both (N, r))."""
    N, r = R.shape
    l, k = Ls.shape
    M = np.zeros((N, r + 1, r + 1))
    M[:, :r, :r] = Ls[S[:, :, None], R[:, None, :]]
    M[:, :r, r] = -1.0
    M[:, r, :r] = 1.0
    singular_values = np.linalg.svd(M, compute_uv=False)
    regular = singular_values[:, -1] > 1e-10 * singular_values[:, 0]
    rhs = np.zeros((regular.sum(), r + 1, 1))
    rhs[:, r, 0] = 1.0
    x = np.linalg.solve(M[regular], rhs)[..., 0]
    Q = np.zeros((x.shape[0], k))
    np.put_along_axis(Q, R[regular], x[:, :r], axis=1)
    v = x[:, r]
    feasible = (Q.min(axis=1) >= -VERTEX_TOL) & ((Q @ Ls.T - v[:, None]).min(axis=1) >= -VERTEX_TOL)
    return Q[feasible]


def _distinct(Q, Ls, scale):
    """Snap to the simplex, recompute ``v = min(L q)``, drop duplicates, sort."""
    Q = np.clip(Q, 0.0, None)
    Q /= Q.sum(axis=1, keepdims=True)
    _, first = np.unique(np.round(Q / VERTEX_TOL).astype(np.int64), axis=0, return_index=True)
    Q = Q[np.sort(first)]
    v = (Q @ Ls.T).min(axis=1)
    order = np.lexsort(tuple(-Q.T[::-1]) + (np.round(v / VERTEX_TOL),))
    return Q[order], v[order] * scale


class VertexTable:
    r"""A vertex table ``(Q, v)`` of a loss matrix, evaluated by one matrix product.

    ``value(F) = max_t (F Q^T + v)_t`` row-wise and the maximising vertex is ``q*``.  The
    predictor ``p*`` follows from complementary slackness with that vertex: ``p*`` lives on the
    loss rows tight at ``q*`` (``S``) and makes ``(L^T p + f)_y = V`` on the support ``R`` of
    ``q*``.  That linear system is pre-factored per vertex (pseudo-inverse), so ``p*`` is affine in
    ``f`` per vertex.  Rows whose solution fails the optimality check (degenerate vertices, where
    the system does not pin ``p*`` down) are reported so the caller can use the LP instead.

    Parameters
    ----------
    matrix : ndarray of shape (l, k)
    Q : ndarray of shape (m, k)
    v : ndarray of shape (m,)
    """

    def __init__(self, matrix: ArrayLike, Q: np.ndarray, v: np.ndarray) -> None:
        self.matrix = np.asarray(matrix, dtype=np.float64)
        self.Q = np.asarray(Q, dtype=np.float64)
        self.v = np.asarray(v, dtype=np.float64)
        # tolerances are relative to the matrix' own scale (a loss matrix of 1e-300s is fine)
        top = float(self.matrix.max())
        self._scale = top if top > 0 else 1.0
        self._systems = {}

    def __len__(self):
        return self.Q.shape[0]

    def value(self, F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Row-wise ``max(F Q^T + v)`` and the index of the maximising vertex, chunked by rows."""
        n = F.shape[0]
        step = max(1, _CHUNK_ENTRIES // max(len(self), 1))
        value = np.empty(n)
        index = np.empty(n, dtype=np.int64)
        for start in range(0, n, step):
            scores = F[start : start + step] @ self.Q.T + self.v
            index[start : start + step] = np.argmax(scores, axis=1)
            value[start : start + step] = np.take_along_axis(
                scores, index[start : start + step, None], axis=1
            )[:, 0]
        return value, index

    def _system(self, t):
        """Pseudo-inverse of vertex ``t``'s complementary-slackness system (built on first use)."""
        if t not in self._systems:
            q = self.Q[t]
            slack = self.matrix @ q - self.v[t]
            R = np.flatnonzero(q > VERTEX_TOL)
            S = np.flatnonzero(slack <= VERTEX_TOL * self._scale)
            A = np.zeros((R.size + 1, S.size + 1))
            A[: R.size, : S.size] = self.matrix[np.ix_(S, R)].T
            A[: R.size, S.size] = -1.0
            A[R.size, : S.size] = 1.0
            self._systems[t] = (R, S, np.linalg.pinv(A))
        return self._systems[t]

    def predictor(self, F: np.ndarray, index: np.ndarray, value: np.ndarray) -> np.ndarray:
        """``p*`` for each row from its optimal vertex; returns ``(P, ok)``.

        ``ok[i]`` is False where the complementary-slackness solution is not optimal (within
        ``VERTEX_TOL``); such rows must be solved another way.
        """
        n = F.shape[0]
        l = self.matrix.shape[0]
        P = np.zeros((n, l))
        order = np.argsort(index, kind="stable")
        vertices, starts = np.unique(index[order], return_index=True)
        for t, rows in zip(vertices, np.split(order, starts[1:])):
            R, S, pinv = self._system(t)
            rhs = np.hstack([-F[np.ix_(rows, R)], np.ones((rows.size, 1))])
            P[np.ix_(rows, S)] = rhs @ pinv[: S.size].T
        tol = VERTEX_TOL * np.maximum(self._scale, np.abs(value))
        worst = (P @ self.matrix + F).max(axis=1)
        ok = (
            (P.min(axis=1) >= -VERTEX_TOL)
            & (np.abs(P.sum(axis=1) - 1.0) <= VERTEX_TOL)
            & (worst <= value + tol)
        )
        P = np.clip(P, 0.0, None)
        P /= np.where(ok, P.sum(axis=1), 1.0)[:, None]
        return P, ok
