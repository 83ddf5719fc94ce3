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

from .exceptions import SolverError

__all__ = ["LPOracle", "LP_TOLERANCE"]

#: Primal and dual feasibility tolerance passed to HiGHS.
LP_TOLERANCE = 1e-10


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
        inf = highspy.kHighsInf
        lp = highspy.HighsLp()
        lp.num_col_ = k + 1
        lp.num_row_ = l + 1
        lp.col_cost_ = np.r_[np.zeros(k), 1.0]
        lp.col_lower_ = np.r_[np.zeros(k), -inf]
        lp.col_upper_ = np.full(k + 1, inf)
        lp.row_lower_ = np.r_[np.zeros(l), 1.0]
        lp.row_upper_ = np.r_[np.full(l, inf), 1.0]
        A = np.zeros((l + 1, k + 1))
        A[:l, :k] = self.matrix
        A[:l, k] = -1.0
        A[l, :k] = 1.0
        cols, rows = np.nonzero(A.T)  # column-wise (CSC) order
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = np.searchsorted(cols, np.arange(k + 2)).astype(np.int32)
        lp.a_matrix_.index_ = rows.astype(np.int32)
        lp.a_matrix_.value_ = A[rows, cols]
        lp.sense_ = highspy.ObjSense.kMaximize
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("primal_feasibility_tolerance", LP_TOLERANCE)
        h.setOptionValue("dual_feasibility_tolerance", LP_TOLERANCE)
        h.setOptionValue("presolve", "off")
        h.passModel(lp)
        return h

    @staticmethod
    def _run(h, f):
        """Run from the previous basis; on failure retry once from scratch, then raise."""
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            h.clearSolver()
            h.run()
        status = h.getModelStatus()
        if status != highspy.HighsModelStatus.kOptimal:
            raise SolverError(
                f"HiGHS did not solve the game LP: status '{h.modelStatusToString(status)}' "
                f"(after a cold restart). Potentials: {f!r}."
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
                self._run(h, F[i])
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
