"""cvxpy backend: any program kind (LP, QP, SOCP), and the program as a cvxpy ``Problem``."""

import time
import warnings

import cvxpy as cp
import numpy as np

from ..exceptions import SolverError
from .program import Solution

__all__ = ["to_cvxpy", "solve_cvxpy"]


def to_cvxpy(program):
    """Build ``(problem, x)``: the same objective and constraints over one vector variable ``x``."""
    x = cp.Variable(program.n_variables, name="x")
    objective = program.cost @ x
    G = program.quadratic_factor()
    if G is not None:
        objective = objective + 0.5 * cp.sum_squares(G @ x)
    constraints = []
    lower, upper = program.bounds
    for bound, sign in ((lower, 1), (upper, -1)):
        finite = np.flatnonzero(np.isfinite(bound))
        if finite.size:
            constraints.append(sign * x[finite] >= sign * bound[finite])
    A = program.matrix()
    row_lower, row_upper = program.row_bounds
    equal = np.flatnonzero(row_lower == row_upper)
    if equal.size:
        constraints.append(A[equal] @ x == row_lower[equal])
    for bound, sign in ((row_lower, 1), (row_upper, -1)):
        rows = np.flatnonzero(np.isfinite(bound) & (row_lower != row_upper))
        if rows.size:
            constraints.append(sign * (A[rows] @ x) >= sign * bound[rows])
    for t, block, factor in program.cones:
        constraints.append(cp.SOC(x[t.start], factor @ x[block]))
    return cp.Problem(cp.Minimize(objective), constraints), x


#: Clarabel tolerances used by default (its own defaults leave ~1e-4 relative objective error).
CLARABEL_OPTIONS = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}


def solve_cvxpy(program, solver=None, verbose=False, **solver_options):
    """Solve with cvxpy (default: Clarabel at tight tolerances).

    With the default solver, a solve that Clarabel reports as inaccurate at the tight tolerances
    is retried at Clarabel's own.  Raises ``SolverError`` unless cvxpy reports optimal;
    'optimal_inaccurate' is returned with a ``RuntimeWarning`` and its status on the
    :class:`Solution`.
    """
    problem, x = to_cvxpy(program)
    attempts = [(solver, solver_options)]
    if solver is None:  # tight Clarabel first; its own (1e-8) tolerances if that stalls
        attempts = [(cp.CLARABEL, {**CLARABEL_OPTIONS, **solver_options}), (cp.CLARABEL, {})]
    start = time.perf_counter()
    for name, options in attempts:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # status is checked below
                problem.solve(solver=name, verbose=verbose, **options)
        except cp.error.SolverError as exc:
            raise SolverError(f"cvxpy could not solve {program.name}: {exc}") from exc
        if problem.status == cp.OPTIMAL:
            break
    seconds = time.perf_counter() - start
    if problem.status == cp.OPTIMAL_INACCURATE:
        warnings.warn(
            f"cvxpy reports '{problem.status}' for {program.name} ({program.kind}): the solution "
            "meets a looser tolerance than requested; check Solution.status before relying on it.",
            RuntimeWarning,
            stacklevel=3,
        )
    elif problem.status != cp.OPTIMAL:
        raise SolverError(
            f"cvxpy could not solve {program.name} ({program.kind}): status '{problem.status}'."
        )
    return Solution(
        x=np.asarray(x.value, dtype=np.float64),
        objective=program.objective(x.value),
        status=problem.status,
        backend="cvxpy",
        solve_seconds=seconds,
    )
