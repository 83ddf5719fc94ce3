"""HiGHS backend for LP and convex QP programs (``highspy``, sparse matrices, no Python loops)."""

import time

import highspy
import numpy as np
import scipy.sparse as sp

from ..exceptions import NotApplicableError, SolverError
from .program import Solution

__all__ = ["solve_highs"]

_OK = {highspy.HighsModelStatus.kOptimal}


def _finite(a):
    return np.clip(a, -highspy.kHighsInf, highspy.kHighsInf)


def solve_highs(program, time_limit=None, tolerance=1e-9, verbose=False):
    """Solve an LP or QP ``program`` with HiGHS.

    Raises
    ------
    NotApplicableError
        For SOCP programs (use ``backend='cvxpy'``).
    SolverError
        When HiGHS does not report an optimal solution (infeasible, unbounded, time limit).
    """
    if program.kind == "SOCP":
        raise NotApplicableError(
            "HiGHS solves LPs and QPs; this program has second-order cones (an l2 or group norm "
            "ball). Use backend='cvxpy'."
        )
    A = program.matrix().tocsc()
    lp = highspy.HighsLp()
    lp.num_col_ = program.n_variables
    lp.num_row_ = program.n_rows
    lp.col_cost_ = program.cost
    lower, upper = program.bounds
    lp.col_lower_, lp.col_upper_ = _finite(lower), _finite(upper)
    row_lower, row_upper = program.row_bounds
    lp.row_lower_, lp.row_upper_ = _finite(row_lower), _finite(row_upper)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = A.indptr.astype(np.int32)
    lp.a_matrix_.index_ = A.indices.astype(np.int32)
    lp.a_matrix_.value_ = A.data
    h = highspy.Highs()
    h.setOptionValue("output_flag", bool(verbose))
    h.setOptionValue("primal_feasibility_tolerance", tolerance)
    h.setOptionValue("dual_feasibility_tolerance", tolerance)
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    h.passModel(lp)
    G = program.quadratic_factor()
    if G is not None:
        H = sp.triu(G.T @ G, format="csc")  # HiGHS takes the upper triangle, column-wise
        h.passHessian(
            program.n_variables,
            H.nnz,
            highspy.HessianFormat.kTriangular,
            H.indptr.astype(np.int32),
            H.indices.astype(np.int32),
            H.data,
        )
    start = time.perf_counter()
    h.run()
    seconds = time.perf_counter() - start
    status = h.getModelStatus()
    if status not in _OK:
        raise SolverError(
            f"HiGHS could not solve {program.name} ({program.kind}): status "
            f"'{h.modelStatusToString(status)}'."
        )
    x = np.asarray(h.getSolution().col_value)
    return Solution(
        x=x,
        objective=program.objective(x),
        status=h.modelStatusToString(status),
        backend="highs",
        solve_seconds=seconds,
    )
