"""HiGHS backend for LP and convex QP programs (``highspy``, sparse matrices, no Python loops)."""

import time

import highspy
import numpy as np
import scipy.sparse as sp

from ..exceptions import NotApplicableError, SolverError
from ..oracle import highs_model
from .program import Solution

__all__ = ["solve_highs"]

_OK = {highspy.HighsModelStatus.kOptimal}


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
    h = highs_model(
        program.matrix(),
        program.cost,
        program.bounds,
        program.row_bounds,
        tolerance=tolerance,
        verbose=verbose,
    )
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
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
