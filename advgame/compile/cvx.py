"""cvxpy backend: any program kind (LP, QP, SOCP), and the program as a cvxpy ``Problem``."""

import time
import warnings

import cvxpy as cp
import numpy as np

from ..exceptions import SolverError
from .program import DEFAULT_TIME_LIMIT, Solution

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
#: The name of each solver's wall-clock limit option (solvers not listed get none).
TIME_LIMIT_OPTION = {cp.CLARABEL: "time_limit", cp.HIGHS: "time_limit", cp.SCS: "time_limit_secs"}
_RANK = {cp.OPTIMAL: 2, cp.OPTIMAL_INACCURATE: 1}


def _attempts(program, solver, solver_options):
    """``(solver, options)`` pairs tried in turn until one reports optimal.

    Default: Clarabel at :data:`CLARABEL_OPTIONS`, Clarabel at its own (1e-8) tolerances, and for
    LPs HiGHS' simplex (Clarabel's interior point can stall or fail on degenerate LPs).
    """
    if solver is not None:
        return [(solver, solver_options)]
    attempts = [
        (cp.CLARABEL, {**CLARABEL_OPTIONS, **solver_options}),
        (cp.CLARABEL, solver_options),
    ]
    if program.kind == "LP" and cp.HIGHS in cp.installed_solvers():
        attempts.append((cp.HIGHS, {}))
    return attempts


def solve_cvxpy(
    program, solver=None, verbose=False, time_limit=DEFAULT_TIME_LIMIT, **solver_options
):
    """Solve with cvxpy (default: Clarabel at tight tolerances, see :func:`_attempts`).

    Each attempt gets the time left of ``time_limit`` seconds (default
    :data:`~advgame.compile.program.DEFAULT_TIME_LIMIT`; None for none) through the solver's
    option in :data:`TIME_LIMIT_OPTION`.  The best attempt counts: 'optimal' is returned,
    'optimal_inaccurate' is returned with a ``RuntimeWarning`` and its status on the
    :class:`Solution`; anything else (infeasible, unbounded, their inaccurate forms, a limit
    reached, a solver error) raises ``SolverError`` naming the program and every attempt's
    status.  A partial result is never returned.
    """
    if time_limit is not None and (
        isinstance(time_limit, bool)
        or not isinstance(time_limit, (int, float, np.integer, np.floating))
        or not time_limit >= 0
    ):
        raise ValueError(f"time_limit must be a non-negative number or None; got {time_limit!r}.")
    problem, x = to_cvxpy(program)
    start = time.perf_counter()
    best, outcomes = None, []
    for name, options in _attempts(program, solver, solver_options):
        options = dict(options)
        if time_limit is not None and name in TIME_LIMIT_OPTION:
            remaining = time_limit - (time.perf_counter() - start)
            if outcomes and remaining <= 0:  # the first attempt always runs
                outcomes.append(f"{name}: not run, time_limit={time_limit:g} s spent")
                break
            remaining = max(remaining, 1e-6)
            options.setdefault(TIME_LIMIT_OPTION[name], remaining)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # status is checked below
                problem.solve(solver=name, verbose=verbose, **options)
        except cp.error.SolverError as exc:
            outcomes.append(f"{name}: {str(exc).splitlines()[0]}")
            continue
        status = problem.status
        outcomes.append(f"{name}: '{status}'")
        if status in _RANK and (best is None or _RANK[status] > _RANK[best[0]]):
            best = (status, np.asarray(x.value, dtype=np.float64))
        if status == cp.OPTIMAL or status in (cp.INFEASIBLE, cp.UNBOUNDED):
            break  # optimal, or a certificate: another attempt would not change the verdict
    seconds = time.perf_counter() - start
    if best is None:
        limit = ""
        if any(cp.USER_LIMIT in outcome or "not run" in outcome for outcome in outcomes):
            limit = (
                f" A solver limit was reached ('{cp.USER_LIMIT}': time_limit={time_limit} s, or an "
                "iteration limit in the solver options); no partial result is returned."
            )
        raise SolverError(
            f"cvxpy could not solve {program.name} ({program.kind}): "
            + "; ".join(outcomes)
            + f".{limit}"
        )
    status, value = best
    if status == cp.OPTIMAL_INACCURATE:
        warnings.warn(
            f"cvxpy reports '{status}' for {program.name} ({program.kind}): the solution "
            "meets a looser tolerance than requested; check Solution.status before relying on it.",
            RuntimeWarning,
            stacklevel=3,
        )
    return Solution(
        x=value,
        objective=program.objective(value),
        status=status,
        backend="cvxpy",
        solve_seconds=seconds,
    )
