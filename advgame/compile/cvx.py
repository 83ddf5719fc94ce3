"""cvxpy backend: any program kind (LP, QP, SOCP, EXP), and the program as a cvxpy ``Problem``.

The ``Problem`` is a view of the same :class:`~advgame.compile.program.Program` the HiGHS backend
solves: one named ``Variable`` per block and the constraints in their named groups, so that
``print(problem)`` reads as the math (``p @ L``-style products of labelled matrices).
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

from ..exceptions import SolverError
from .solution import DEFAULT_TIME_LIMIT, Solution, SolvableProgram

__all__ = ["NamedProblem", "to_cvxpy", "solve_cvxpy"]


class NamedProblem(cp.Problem):
    """A cvxpy ``Problem`` that remembers which constraints came from which named group.

    ``constraint_groups[name]`` is a list of ``(constraint, side)`` pairs, ``side`` being
    ``'lower'``, ``'upper'``, ``'equal'`` (a group of linear rows) or ``'cone'`` / ``'bounds'``.
    """

    def __init__(
        self, objective: cp.Minimize | cp.Maximize, groups: dict[str, list[tuple[Any, str]]]
    ) -> None:
        self.constraint_groups = groups
        super().__init__(objective, [c for pairs in groups.values() for c, _ in pairs])


def _constant(matrix, label):
    """A cvxpy constant printed under ``label`` (its numbers when there is none)."""
    if sp.issparse(matrix):
        matrix = sp.csr_matrix(matrix)
    return cp.Constant(matrix, name=label) if label else cp.Constant(matrix)


def _section(program, variables, block):
    """``x[block]`` as a cvxpy expression: a named variable, a part of one, or the
    concatenation of the variables the slice spans."""
    pieces = []
    for name, span in program.variables.items():
        start, stop = max(span.start, block.start), min(span.stop, block.stop)
        if start < stop:
            whole = (start, stop) == (span.start, span.stop)
            variable = variables[name]
            pieces.append(variable if whole else variable[start - span.start : stop - span.start])
    return pieces[0] if len(pieces) == 1 else cp.hstack(pieces)


def _linear(program, variables, terms):
    """``sum_b A_b @ x_b`` over a row group's terms."""
    return sum(
        _constant(A, label) @ _section(program, variables, block) for block, A, label in terms
    )


def _row_constraints(expression, lower, upper):
    """``[(constraint, side), ...]`` for ``lower <= expression <= upper`` (same-kind rows only)."""
    lo, hi = np.isfinite(lower), np.isfinite(upper)
    equal = lo & hi & (lower == upper)
    if equal.all():
        return [(expression == _bound(lower), "equal")]
    pairs = []
    if equal.any() or (lo.any() and not lo.all()) or (hi.any() and not hi.all()):
        for side, rows, bound in (
            ("equal", np.flatnonzero(equal), lower),
            ("lower", np.flatnonzero(lo & ~equal), lower),
            ("upper", np.flatnonzero(hi & ~equal), upper),
        ):
            if rows.size:
                part = expression[rows]
                relation = {"equal": part == bound[rows], "lower": part >= bound[rows]}
                pairs.append((relation.get(side, part <= bound[rows]), side))
        return pairs
    if lo.all():
        pairs.append((expression >= _bound(lower), "lower"))
    if hi.all():
        pairs.append((expression <= _bound(upper), "upper"))
    return pairs


def _bound(values):
    """A constant row bound as a scalar when it is one number (it prints as that number)."""
    return float(values[0]) if values.size and np.all(values == values[0]) else values


def to_cvxpy(program: SolvableProgram) -> NamedProblem:
    """The program as a :class:`NamedProblem`: one ``cp.Variable`` per named block, its
    constraints grouped by name, matrices and cost vectors printed under their labels."""
    variables = {
        name: cp.Variable(block.stop - block.start, name=name)
        for name, block in program.variables.items()
    }
    sign = -1.0 if program.sense == "maximize" else 1.0
    linear = []
    for name, block in program.variables.items():
        cost = sign * program.cost[block]
        if np.any(cost):
            label = program.labels.get(name)
            linear.append(_constant(cost, label) @ variables[name])
    objective = sum(linear) if linear else cp.Constant(0.0)
    for block, factor, label in program.quadratic_terms():
        penalty = 0.5 * cp.sum_squares(
            _constant(factor, label) @ _section(program, variables, block)
        )
        objective = objective + penalty if sign > 0 else objective - penalty
    for block, function, weights, label in getattr(program, "exponentials", ()):
        part = _section(program, variables, block)
        atom = cp.exp(part) if function == "exp" else -cp.entr(part)
        term = _constant(weights, label) @ atom
        objective = objective + term if sign > 0 else objective - term
    groups = {}
    lower, upper = program.bounds
    for name, block in program.variables.items():
        pairs = _row_constraints(variables[name], lower[block], upper[block])
        if pairs:
            groups[f"{name} bounds"] = [(c, "bounds") for c, _ in pairs]
    for name, _, terms, row_lower, row_upper in program.row_groups():
        expression = _linear(program, variables, terms)
        groups[name] = _row_constraints(expression, row_lower, row_upper)
    for t, block, factor, label in program.cones:
        (t_name,) = (n for n, b in program.variables.items() if b.start <= t.start < b.stop)
        bound = _section(program, variables, t)
        cone = cp.SOC(
            cp.reshape(bound, (), order="C"),
            _constant(factor, label) @ _section(program, variables, block),
        )
        groups.setdefault(f"{t_name} cone", []).append((cone, "cone"))
    sense = cp.Maximize if program.sense == "maximize" else cp.Minimize
    return NamedProblem(sense(objective), groups)


def _read_solution(program, problem):
    """``(x, row_duals)`` from a solved :class:`NamedProblem` (duals in the convention of
    :class:`~advgame.compile.program.Solution`)."""
    x = np.zeros(program.n_variables)
    for name, variable in problem.var_dict.items():
        x[program.variables[name]] = np.asarray(variable.value, dtype=np.float64).ravel()
    y = np.zeros(program.n_rows)
    for name, rows, _, row_lower, row_upper in program.row_groups():
        lo, hi = np.isfinite(row_lower), np.isfinite(row_upper)
        equal = lo & hi & (row_lower == row_upper)
        masks = {"equal": equal, "lower": lo & ~equal, "upper": hi & ~equal}
        part = np.zeros(rows.stop - rows.start)
        for constraint, side in problem.constraint_groups[name]:
            dual = constraint.dual_value
            if dual is None:
                return x, None
            dual = np.broadcast_to(np.asarray(dual, dtype=np.float64).ravel(), (masks[side].sum(),))
            # cvxpy's multipliers are >= 0 for both inequality sides and have the opposite
            # sign of HiGHS' for equalities; y >= 0 at an active lower bound here
            part[masks[side]] += dual if side == "lower" else -dual
        y[rows] = part
    return x, y


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
    program: SolvableProgram,
    solver: str | None = None,
    verbose: bool = False,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    **solver_options: Any,
) -> Solution:
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
    problem = to_cvxpy(program)
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
            best = (status, *_read_solution(program, problem))
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
    status, value, row_duals = best
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
        row_duals=row_duals,
    )
