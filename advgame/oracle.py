r"""The exact LP oracle: one persistent HiGHS model per loss matrix (seed 000 Eq. 4 and Eq. 10).

The model is built once,

.. math::  \max_{q, v}\ v + f^\top q \quad \text{s.t.}\quad L q - v \mathbf 1 \ge 0,\
           \mathbf 1^\top q = 1,\ q \ge 0,

and only the costs ``f`` change between rows, so HiGHS warm-starts the simplex from the previous
basis.  The primal gives ``value`` and ``q*``; the duals of the ``l`` loss rows are the predictor's
``p*`` (the LP of Eq. 10 is the dual of Eq. 4).
"""

import threading

import highspy
import numpy as np
from scipy import sparse

from .exceptions import SolverError

__all__ = ["LPOracle", "LP_TOLERANCE", "highs_model", "run_warm"]

#: Primal and dual feasibility tolerance passed to HiGHS.
LP_TOLERANCE = 1e-10


def highs_model(
    A,
    cost,
    col_bounds,
    row_bounds,
    *,
    maximize=False,
    tolerance=LP_TOLERANCE,
    verbose=False,
    presolve=True,
):
    """A ``highspy.Highs`` holding ``opt cost^T x`` s.t. ``row_lower <= A x <= row_upper``,
    ``col_lower <= x <= col_upper`` (every HiGHS model of the package is built here).

    Infinite bounds may be given as ``numpy.inf``; ``A`` is any scipy sparse or dense matrix.
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
    h = highspy.Highs()
    h.setOptionValue("output_flag", bool(verbose))
    h.setOptionValue("primal_feasibility_tolerance", tolerance)
    h.setOptionValue("dual_feasibility_tolerance", tolerance)
    if not presolve:
        h.setOptionValue("presolve", "off")
    h.passModel(lp)
    return h


def run_warm(h, what):
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


class LPOracle:
    """Persistent HiGHS model of the per-sample game for one loss matrix.

    Thread-safe: a lock serialises use of the single model.  Pickling drops the HiGHS handle; it is
    rebuilt on first use.

    Parameters
    ----------
    matrix : ndarray of shape (l, k)
    """

    def __init__(self, matrix):
        self.matrix = np.asarray(matrix, dtype=np.float64)
        self._highs = None
        self._lock = threading.Lock()

    def __getstate__(self):
        return {"matrix": self.matrix}

    def __setstate__(self, state):
        self.__init__(state["matrix"])

    def _build(self):
        l, k = self.matrix.shape
        A = np.zeros((l + 1, k + 1))
        A[:l, :k] = self.matrix
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

    def solve(self, F):
        """Solve the game for every row of ``F`` (shape (n, k)).

        Returns
        -------
        value : ndarray (n,)
        Q : ndarray (n, k)
            Optimal adversary distributions (primal).
        P : ndarray (n, l)
            Optimal predictor distributions (duals of the loss rows).
        """
        n, k = F.shape
        l = self.matrix.shape[0]
        value = np.empty(n)
        Q = np.empty((n, k))
        P = np.empty((n, l))
        columns = np.arange(k, dtype=np.int32)
        # value(f - c 1) = value(f) - c: solving the shifted row keeps the costs small.
        shift = F.max(axis=1)
        with self._lock:
            if self._highs is None:
                self._highs = self._build()
            h = self._highs
            for i in range(n):
                h.changeColsCost(k, columns, F[i] - shift[i])
                run_warm(h, f"the game LP for potentials {F[i]!r}")
                solution = h.getSolution()
                value[i] = h.getInfo().objective_function_value + shift[i]
                Q[i] = solution.col_value[:k]
                P[i] = solution.row_dual[:l]
        # HiGHS reports duals of a maximisation with >= rows as non-positive numbers.
        P = np.clip(-P, 0.0, None)
        P /= P.sum(axis=1, keepdims=True)
        Q = np.clip(Q, 0.0, None)
        Q /= Q.sum(axis=1, keepdims=True)
        return value, Q, P
