r"""The exact LP oracle of the per-sample game (Fathony et al. 2018a, Eq. 4 and Eq. 10), many rows at a time.

For a loss matrix ``L`` (``l x k``) and potentials ``f`` the game is the LP

.. math::  \max_{q, v}\ v + f^\top q \quad \text{s.t.}\quad L q - v \mathbf 1 \ge 0,\
           \mathbf 1^\top q = 1,\ q \ge 0,

whose dual (Eq. 10) gives the predictor's ``p*`` as the multipliers of the ``l`` loss rows.

**Scaling.**  The solvers only ever see O(1) numbers.  With ``m = min L`` and ``s`` the power of
two with ``s / 2 < max L - m <= s`` the game is solved for

.. math::  L' = (L - m) / s \in [0, 1], \qquad
           f' = \max\big((f - \max f) / s,\ -2\big) \in [-2, 0],

and ``value(L, f) = m + max f + s value(L', f')`` with the same ``q*`` and ``p*``.  Exactness:
``p^T (L - m 1 1^T) q = p^T L q - m`` on the simplices; ``value`` is shift-equivariant in
``f`` (``1^T q = 1``) and positively homogeneous in ``(L, f)``; dividing by a power of two is
exact in floating point.  The clip is exact too: a label with ``f'_y < -1 <= -(max L' - min
L')`` has ``q*_y = 0`` in every optimum (moving mass ``d`` from it to the best label ``y*``,
``f'_{y*} = 0``, gains ``-d f'_y > d`` in ``f'^T q`` and loses at most ``d (max L' - min L')
<= d`` in ``min_a (L' q)_a``), and its row of the predictor's LP is strictly slack
(``(L'^T p + f')_y <= 1 + f'_y < 0 <= u``), so moving ``f'_y`` anywhere below -1 (to -2)
changes neither optimum.

**Bulk solve.**  All rows are solved together by a primal simplex vectorised over rows
(:func:`_simplex`): standard form ``A x = b, x >= 0`` with ``x = (q, v, s)`` (``v >= 0`` is
implied by ``L' >= 0``), one compact tableau per row, started from the best pure strategy
``q = e_{argmax f}``; Dantzig's rule, then Bland's (no cycling) after :data:`BLAND_AFTER` pivots
per variable.  Every answer is certified: ``q`` (primal, from the final basis solved afresh) and
``p`` (the basis' duals) are turned into distributions and must satisfy

.. math::  \max_j (L'^\top p + f')_j - \big(\min_a (L' q)_a + f'^\top q\big) \le
           \text{CERTIFICATE_GAP},

a bound on the error of both (weak duality).  A row that fails (none did in 300,000 random and
tied rows of the benchmark's losses, k = 2 to 30) is solved by one persistent HiGHS model of the
same scaled game, warm-started from the previous row.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

import highspy
import numpy as np
from numpy.typing import ArrayLike
from scipy import sparse

from ._highs import new_highs
from .exceptions import SolverError

__all__ = [
    "LPOracle",
    "LP_TOLERANCE",
    "CERTIFICATE_GAP",
    "BLAND_AFTER",
    "highs_model",
    "new_highs",
    "run_warm",
]

#: Primal and dual feasibility tolerance passed to HiGHS.
LP_TOLERANCE = 1e-10
#: Largest duality gap (in units of ``max L - min L``) the bulk simplex may leave on a row; a row
#: over it is re-solved by HiGHS.
CERTIFICATE_GAP = 1e-11
#: The bulk simplex switches from Dantzig's to Bland's pivoting rule after this many pivots per
#: variable of the standard form (``k + l + 1``), and hands rows still unsolved after
#: :data:`_MAX_PIVOTS_PER_VARIABLE` times that to HiGHS.
BLAND_AFTER = 4
_MAX_PIVOTS_PER_VARIABLE = 50
_COST_TOL = 1e-12  # a reduced cost above this enters the basis
_PIVOT_TOL = 1e-9  # smallest tableau entry accepted as a pivot
_CHUNK_ENTRIES = 1 << 21  # tableau entries per block of rows solved together
_CLIP = -2.0  # lower clip of the scaled, shifted potentials (see the module docstring)


# ------------------------------------------------------------------------ HiGHS construction


def highs_model(
    A: Any,
    cost: ArrayLike,
    col_bounds: tuple[ArrayLike, ArrayLike],
    row_bounds: tuple[ArrayLike, ArrayLike],
    *,
    maximize: bool = False,
    tolerance: float = LP_TOLERANCE,
    verbose: bool = False,
    presolve: bool = True,
) -> Any:
    """A ``highspy.Highs`` holding ``opt cost^T x`` s.t. ``row_lower <= A x <= row_upper``,
    ``col_lower <= x <= col_upper`` (every HiGHS model of the package is built here).

    Infinite bounds may be given as ``numpy.inf``; ``A`` is any scipy sparse or dense matrix.
    Nothing is printed unless ``verbose``.
    """
    A = sparse.csc_matrix(A)
    infinity = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_row_, lp.num_col_ = A.shape
    lp.col_cost_ = np.asarray(cost, dtype=float)
    lp.col_lower_, lp.col_upper_ = (np.clip(b, -infinity, infinity) for b in col_bounds)
    lp.row_lower_, lp.row_upper_ = (np.clip(b, -infinity, infinity) for b in row_bounds)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = A.indptr.astype(np.int32)
    lp.a_matrix_.index_ = A.indices.astype(np.int32)
    lp.a_matrix_.value_ = A.data.astype(float)
    if maximize:
        lp.sense_ = highspy.ObjSense.kMaximize
    h = new_highs()
    h.setOptionValue("output_flag", bool(verbose))
    h.setOptionValue("primal_feasibility_tolerance", tolerance)
    h.setOptionValue("dual_feasibility_tolerance", tolerance)
    if not presolve:
        h.setOptionValue("presolve", "off")
    h.passModel(lp)
    return h


def run_warm(h: Any, what: str) -> Any:
    """Run ``h`` from its previous basis; on failure retry once from scratch, then raise a
    :class:`SolverError` naming ``what`` was being solved."""
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        h.clearSolver()
        h.run()
    status = h.getModelStatus()
    if status != highspy.HighsModelStatus.kOptimal:
        raise SolverError(
            f"HiGHS did not solve {what}: status '{h.modelStatusToString(status)}' (after a cold "
            "restart)."
        )


# ------------------------------------------------------------------------------- scaling
def scale_matrix(matrix):
    """``(L', m, s)`` with ``L' = (L - m) / s`` in ``[0, 1]``, ``m = min L`` and ``s`` a power
    of two (1 for a constant matrix); see the module docstring."""
    L = np.asarray(matrix, dtype=np.float64)
    low = float(L.min())
    half_span = float((L / 2 - low / 2).max())  # no overflow near the largest float
    s = 2.0 ** (np.frexp(half_span)[1] + 1) if half_span > 0 else 1.0
    return L / s - low / s, low, s


def scale_potentials(F, s):
    """``(F', max F)``: ``F' = max((F - max F) / s, -2)`` per row (see the module docstring)."""
    top = F.max(axis=1)
    with np.errstate(over="ignore"):
        scaled = np.maximum((F - top[:, None]) / s, _CLIP)
    return scaled, top


# ------------------------------------------------------------------------------ bulk simplex
def _standard_form(Ls):
    """``A`` (``(l + 1) x (k + 1 + l)``) of ``L' q - v - s = 0, 1^T q = 1`` over ``x = (q, v, s)``."""
    l, k = Ls.shape
    A = np.zeros((l + 1, k + 1 + l))
    A[:l, :k] = Ls
    A[:l, k] = -1.0
    A[:l, k + 1 :] = -np.eye(l)
    A[l, :k] = 1.0
    return A


def _start(Ls, Fs):
    """The starting basis of each row: ``q = e_j`` (``j = argmax f'``), ``v = min_a L'_{a j}``
    and the slacks of every loss row but the tightest one."""
    l, k = Ls.shape
    n = Fs.shape[0]
    j = np.argmax(Fs, axis=1)
    tight = np.argmin(Ls[:, j], axis=0)
    slacks = np.broadcast_to(np.arange(l), (n, l))
    basic = np.empty((n, l + 1), dtype=np.int64)
    basic[:, 0] = j
    basic[:, 1] = k
    basic[:, 2:] = k + 1 + slacks[slacks != tight[:, None]].reshape(n, l - 1)
    return basic


def _nonbasic(basic, size):
    is_basic = np.zeros((basic.shape[0], size), dtype=bool)
    np.put_along_axis(is_basic, basic, True, axis=1)
    return np.nonzero(~is_basic)[1].reshape(basic.shape[0], size - basic.shape[1])


def _simplex(A, C, basic):
    """Primal simplex on every row at once: ``max C_i^T x s.t. A x = e_last, x >= 0`` from the
    feasible bases ``basic`` (``(n, m)``).  Returns the final bases and which rows are optimal
    (the others stopped at the pivot limit or found no pivot above :data:`_PIVOT_TOL`)."""
    n = C.shape[0]
    m, size = A.shape
    nonbasic = _nonbasic(basic, size)
    AB = A[:, basic].transpose(1, 0, 2)
    rhs = np.concatenate([A[:, nonbasic].transpose(1, 0, 2), np.zeros((n, m, 1))], axis=2)
    rhs[:, -1, -1] = 1.0
    solved = np.linalg.solve(AB, rhs)  # the starting bases are regular by construction
    T, beta = np.ascontiguousarray(solved[..., :-1]), np.ascontiguousarray(solved[..., -1])
    cB = np.take_along_axis(C, basic, axis=1)
    d = np.take_along_axis(C, nonbasic, axis=1) - np.einsum("nm,nmj->nj", cB, T)
    out, optimal = basic.copy(), np.zeros(n, dtype=bool)
    rows = np.arange(n)
    bland_after, limit = BLAND_AFTER * size, _MAX_PIVOTS_PER_VARIABLE * size
    for pivot in range(limit):
        bland = pivot >= bland_after
        if bland:  # smallest eligible variable enters
            eligible = np.where(d > _COST_TOL, nonbasic, size)
            j = np.argmin(eligible, axis=1)
            done = eligible[np.arange(rows.size), j] == size
        else:  # largest reduced cost enters
            j = np.argmax(d, axis=1)
            done = d[np.arange(rows.size), j] <= _COST_TOL
        if done.any():
            out[rows[done]] = basic[done]
            optimal[rows[done]] = True
            keep = ~done
            rows, T, beta, d, basic, nonbasic, j = (
                a[keep] for a in (rows, T, beta, d, basic, nonbasic, j)
            )
            if not rows.size:
                break
        column = T[np.arange(rows.size), :, j]
        usable = column > _PIVOT_TOL
        stuck = ~usable.any(axis=1)  # no acceptable pivot (numerically): leave it to HiGHS
        if stuck.any():
            out[rows[stuck]] = basic[stuck]
            keep = ~stuck
            rows, T, beta, d, basic, nonbasic, j, column, usable = (
                a[keep] for a in (rows, T, beta, d, basic, nonbasic, j, column, usable)
            )
            if not rows.size:
                break
        r_ = np.arange(rows.size)
        ratio = np.where(usable, beta / np.where(usable, column, 1.0), np.inf)
        if bland:  # among the tied leaving rows, the smallest variable leaves
            tied = ratio <= ratio.min(axis=1, keepdims=True) + _COST_TOL
            r = np.argmin(np.where(tied, basic, size + 1), axis=1)
        else:
            r = np.argmin(ratio, axis=1)
        p = column[r_, r]
        row = T[r_, r, :] / p[:, None]
        row[r_, j] = 1.0 / p
        T[r_, :, j] = 0.0
        T -= column[:, :, None] * row[:, None, :]
        T[r_, r, :] = row
        leaving = beta[r_, r] / p
        beta -= column * leaving[:, None]
        beta[r_, r] = leaving
        gain = d[r_, j]
        d[r_, j] = 0.0
        d -= gain[:, None] * row
        entering = nonbasic[r_, j]
        nonbasic[r_, j] = basic[r_, r]
        basic[r_, r] = entering
    out[rows] = basic
    return out, optimal


def _basis_solution(A, C, basic):
    """``(x_B, y)`` of each basis, solved afresh: ``A_B x_B = e_last``, ``A_B^T y = c_B``.
    Singular bases (possible only after tiny pivots) give NaN."""
    n = C.shape[0]
    m = A.shape[0]
    AB = A[:, basic].transpose(1, 0, 2)
    cB = np.take_along_axis(C, basic, axis=1)
    e = np.zeros((n, m))
    e[:, -1] = 1.0
    try:
        x = np.linalg.solve(AB, e[..., None])[..., 0]
        y = np.linalg.solve(AB.transpose(0, 2, 1), cB[..., None])[..., 0]
    except np.linalg.LinAlgError:
        x, y = np.full((n, m), np.nan), np.full((n, m), np.nan)
        for i in range(n):
            with contextlib.suppress(np.linalg.LinAlgError):
                x[i] = np.linalg.solve(AB[i], e[i])
                y[i] = np.linalg.solve(AB[i].T, cB[i])
    return x, y


def _distributions(X):
    X = np.clip(X, 0.0, None)
    total = X.sum(axis=1, keepdims=True)
    return X / np.where(total > 0, total, 1.0)


def _bulk(Ls, A, Fs):
    """``(lower, Q, P, certified)`` for the scaled rows ``Fs`` by the bulk simplex."""
    l, k = Ls.shape
    C = np.zeros((Fs.shape[0], k + 1 + l))  # costs of x = (q, v, s)
    C[:, :k] = Fs
    C[:, k] = 1.0
    basic, optimal = _simplex(A, C, _start(Ls, Fs))
    xB, y = _basis_solution(A, C, basic)
    x = np.zeros(C.shape)
    np.put_along_axis(x, basic, xB, axis=1)
    Q = _distributions(x[:, :k])
    P = _distributions(-y[:, :l])
    with np.errstate(invalid="ignore"):
        lower = (Q @ Ls.T).min(axis=1) + np.einsum("ij,ij->i", Fs, Q)
        upper = (P @ Ls + Fs).max(axis=1)
        certified = optimal & (upper - lower <= CERTIFICATE_GAP)
    return lower, Q, P, certified


class LPOracle:
    """The exact per-sample game of one loss matrix, solved for many rows at once.

    :meth:`solve` scales the game to O(1) numbers and runs the bulk simplex (module docstring);
    rows it cannot certify go to one persistent HiGHS model (:meth:`solve_each`, also the
    reference per-row loop), built on the first solve.  Thread-safe: the bulk simplex shares no
    state and a lock serialises use of the HiGHS model.  Pickling drops the HiGHS handle; it is
    rebuilt on first use.

    Parameters
    ----------
    matrix : ndarray of shape (l, k)
    """

    def __init__(self, matrix: ArrayLike) -> None:
        self.matrix = np.asarray(matrix, dtype=np.float64)
        self._scaled, self._offset, self._scale = scale_matrix(self.matrix)
        self._A = _standard_form(self._scaled)
        self._highs = None
        self._lock = threading.Lock()

    def __getstate__(self):
        return {"matrix": self.matrix}

    def __setstate__(self, state):
        self.__init__(state["matrix"])

    def _build(self):
        l, k = self._scaled.shape
        A = np.zeros((l + 1, k + 1))
        A[:l, :k] = self._scaled
        A[:l, k] = -1.0
        A[l, :k] = 1.0
        return highs_model(
            A,
            np.r_[np.zeros(k), 1.0],
            (np.r_[np.zeros(k), -np.inf], np.full(k + 1, np.inf)),
            (np.r_[np.zeros(l), 1.0], np.r_[np.full(l, np.inf), 1.0]),
            maximize=True,
            presolve=False,
        )

    def _model(self):
        """The HiGHS model (call with the lock held)."""
        if self._highs is None:
            self._highs = self._build()
        return self._highs

    def _unscale(self, lower, top):
        return self._offset + top + self._scale * lower

    def solve(self, F: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Solve the game for every row of ``F`` (shape (n, k)).

        Returns
        -------
        value : ndarray (n,)
        Q : ndarray (n, k)
            Optimal adversary distributions (primal).
        P : ndarray (n, l)
            Optimal predictor distributions (duals of the loss rows).
        """
        F = np.asarray(F, dtype=np.float64)
        n, k = F.shape
        l = self.matrix.shape[0]
        with self._lock:
            self._model()
        Fs, top = scale_potentials(F, self._scale)
        lower, Q, P = np.empty(n), np.empty((n, k)), np.empty((n, l))
        certified = np.zeros(n, dtype=bool)
        step = max(1, _CHUNK_ENTRIES // ((l + 1) * (k + 1)))
        for start in range(0, n, step):
            block = slice(start, start + step)
            lower[block], Q[block], P[block], certified[block] = _bulk(
                self._scaled, self._A, Fs[block]
            )
        if not certified.all():
            rows = np.flatnonzero(~certified)
            lower[rows], Q[rows], P[rows] = self._solve_scaled(Fs[rows], F[rows])
        return self._unscale(lower, top), Q, P

    def solve_each(self, F: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`solve` by HiGHS, one warm-started run per row (the fallback and reference)."""
        F = np.asarray(F, dtype=np.float64)
        Fs, top = scale_potentials(F, self._scale)
        lower, Q, P = self._solve_scaled(Fs, F)
        return self._unscale(lower, top), Q, P

    def _solve_scaled(self, Fs, F):
        n, k = Fs.shape
        l = self.matrix.shape[0]
        lower, Q, P = np.empty(n), np.empty((n, k)), np.empty((n, l))
        columns = np.arange(k, dtype=np.int32)
        with self._lock:
            h = self._model()
            for i in range(n):
                h.changeColsCost(k, columns, Fs[i])
                run_warm(h, f"the game LP for potentials {F[i]!r}")
                solution = h.getSolution()
                lower[i] = h.getInfo().objective_function_value
                Q[i] = solution.col_value[:k]
                P[i] = solution.row_dual[:l]
        # HiGHS reports duals of a maximisation with >= rows as non-positive numbers.
        return lower, _distributions(Q), _distributions(-P)
