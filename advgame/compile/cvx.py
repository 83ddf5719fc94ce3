"""cvxpy backend: any program kind (LP, QP, SOCP, EXP), and the program as a cvxpy ``Problem``.

The ``Problem`` is a view of the same :class:`~advgame.compile.program.Program` the HiGHS backend
solves: one named ``Variable`` per block and the constraints in their named groups, so that
``print(problem)`` reads as the math (``p @ L``-style products of labelled matrices).
"""

from __future__ import annotations

import re
import time
import warnings
from typing import Any

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

from ..exceptions import SolverError
from .solution import DEFAULT_TIME_LIMIT, Solution, SolvableProgram

__all__ = ["NamedProblem", "readable", "to_cvxpy", "solve_cvxpy"]


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

    def __str__(self) -> str:
        """The problem as cvxpy prints it, with cvxpy's internal atom names written as the
        functions a user calls (:func:`readable`), then a ``where`` list: every constant and
        parameter named by a symbol (``b``, ``G``, ``radius``) with its shape (and its value
        when it is a number)."""
        return readable(super().__str__()) + _where(self)


#: cvxpy's internal atom names -> how a user writes them; each maps the atom's printed
#: arguments to the readable call.
_READABLE = {
    "quad_over_lin": lambda a: f"sum_squares({a[0]})" if a[1] == "1.0" else None,
    "PnormApprox": lambda a: (
        f"norm{a[1]}({a[0]})" if a[1] in ("1", "2") else f"pnorm({a[0]}, {a[1]})"
    ),
    "Pnorm": lambda a: f"norm{a[1]}({a[0]})" if a[1] in ("1", "2") else f"pnorm({a[0]}, {a[1]})",
    "PowerApprox": lambda a: f"power({a[0]}, {a[1]})",
    "Sum": lambda a: f"sum({a[0]})" if a[1] == "None" else f"sum({a[0]}, axis={a[1]})",
    "log_sum_exp": lambda a: (
        f"log_sum_exp({a[0]})" if a[1] == "None" else f"log_sum_exp({a[0]}, axis={a[1]})"
    ),
    "Hstack": lambda a: f"hstack({', '.join(a)})",
    "reshape": lambda a: f"reshape({a[0]}, {a[1]})",
}


def _arguments(text: str, start: int) -> tuple[list[str], int]:
    """The comma-separated arguments of the call whose ``(`` is at ``start`` (nested brackets
    kept whole), and the index after its ``)``."""
    args, depth, begin, i = [], 0, start + 1, start
    while True:
        char = text[i]
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
            if depth == 0:
                args.append(text[begin:i].strip())
                return args, i + 1
        elif char == "," and depth == 1:
            args.append(text[begin:i].strip())
            begin = i + 1
        i += 1


def readable(text: str) -> str:
    """``text`` (a printed cvxpy expression) with the internal atom names of :data:`_READABLE`
    (``quad_over_lin(x, 1.0, None, False)``, ``PnormApprox(x, 2)``, ``Sum(x, None, False)``)
    written as the user-facing functions (``sum_squares(x)``, ``norm2(x)``, ``sum(x)``)."""
    pattern = re.compile(r"\b(" + "|".join(_READABLE) + r")\(")
    out, position = [], 0
    while (match := pattern.search(text, position)) is not None:
        args, end = _arguments(text, match.end() - 1)
        call = _READABLE[match.group(1)]([readable(arg) for arg in args])
        out.append(text[position : match.start()])
        out.append(text[match.start() : end] if call is None else call)
        position = end
    return "".join(out) + text[position:]


#: A constant's name that is a symbol (``b``, ``G``, ``eps``, ``(1/lam)``), not an expression of
#: other symbols (``-Phi``, ``kron(I_n, L^T)``, whose pieces the docs define).
_SYMBOL = re.compile(r"^\(?[\w/]+\)?$")


def _where(problem: cp.Problem) -> str:
    """``where`` lines for the named constants and parameters of ``problem`` that are symbols
    (:data:`_SYMBOL`): each with its shape, and its value when it is a number."""
    lines = {}
    for leaf in [*problem.parameters(), *problem.constants()]:
        name = leaf.name()
        if not getattr(leaf, "_advgame_named", False) or name in lines or not _SYMBOL.match(name):
            continue
        value = np.asarray(leaf.value.toarray() if sp.issparse(leaf.value) else leaf.value)
        shape = " x ".join(str(n) for n in value.shape) or "scalar"
        kind = "parameter" if isinstance(leaf, cp.Parameter) else "constant"
        if value.size == 1:
            lines[name] = f"  {name} = {float(value.ravel()[0]):.6g} ({kind})"
        elif (
            value.ndim == 2
            and value.shape[0] == value.shape[1]
            and np.array_equal(value, np.eye(value.shape[0]))
        ):
            lines[name] = f"  {name}: {shape} identity ({kind})"
        else:
            lines[name] = f"  {name}: {shape} ({kind})"
    return "\nwhere\n" + "\n".join(lines[name] for name in sorted(lines)) if lines else ""


def _constant(matrix, label):
    """A cvxpy constant printed under ``label`` (its numbers when there is none)."""
    if sp.issparse(matrix):
        matrix = sp.csr_matrix(matrix)
    if not label:
        return cp.Constant(matrix)
    constant = cp.Constant(matrix, name=label)
    constant._advgame_named = True
    return constant


def _parameter(value, name, nonneg=False):
    """A cvxpy ``Parameter`` named ``name`` holding ``value`` (a number prints as its name,
    and the problem stays DPP: re-solving with a new value reuses the compiled problem)."""
    value = np.asarray(value, dtype=np.float64)
    parameter = cp.Parameter(value.shape, name=name, value=value, nonneg=nonneg)
    parameter._advgame_named = True
    return parameter


#: Labels ``"name 1"`` (a uniform cost vector: ``name * sum(x)``) and ``sqrt(name) I`` /
#: ``I/sqrt(name)`` (a multiple of the identity in a quadratic term: ``name/2 sum_squares(x)``,
#: ``(1/name)/2 sum_squares(x)``).
_UNIFORM_COST = re.compile(r"^(\w+) 1$")
_SCALED_IDENTITY = {
    re.compile(r"^sqrt\((\w+)\) I$"): "{}",
    re.compile(r"^I/sqrt\((\w+)\)$"): "(1/{})",
}


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


def _row_constraints(expression, lower, upper, label=None, named=False):
    """``[(constraint, side), ...]`` for ``lower <= expression <= upper`` (same-kind rows only);
    a bound is a parameter named ``label`` when it is not one number, or whenever ``named``
    (a lower bound ``-upper`` then prints as ``-label``)."""
    lo, hi = np.isfinite(lower), np.isfinite(upper)
    equal = lo & hi & (lower == upper)
    if equal.all():
        return [(expression == _bound(lower, label, named), "equal")]
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
    high = _bound(upper, label, named) if hi.all() else None
    if lo.all():
        symmetric = named and high is not None and np.array_equal(lower, -upper)
        low = -high if symmetric else _bound(lower, label and f"{label}_lo", named)
        pairs.append((expression >= low, "lower"))
    if high is not None:
        pairs.append((expression <= high, "upper"))
    return pairs


def _bound(values, label=None, named=False):
    """A constant row bound: a scalar when it is one number (it prints as that number) unless
    ``named``, else a parameter named ``label`` (its numbers when there is none)."""
    uniform = values.size and np.all(values == values[0])
    if uniform and not named:
        return float(values[0])
    if label is None:
        return values
    return _parameter(values[0] if uniform else values, label)


def to_cvxpy(program: SolvableProgram) -> NamedProblem:
    """The program as a :class:`NamedProblem`: one ``cp.Variable`` per named block, its
    constraints grouped by name, matrices and cost vectors printed under their labels.

    Every constant prints under a name: a block whose bounds fix it (``radius``) is a
    ``cp.Parameter`` of that name, a labelled bound vector (:meth:`Program.label_bounds`) a
    parameter of its label, a uniform labelled cost ``eps 1`` is ``eps * sum(x)``, a quadratic
    term ``sqrt(lam) I`` is ``lam/2 * sum_squares(x)``; the cones print as ``norm2(G @ x) <= t``.
    """
    lower, upper = program.bounds
    variables = {}
    for name, block in program.variables.items():
        lo, hi = lower[block], upper[block]
        if np.all(np.isfinite(lo) & (lo == hi)):
            variables[name] = _parameter(lo, name)  # a fixed block is a named constant
        else:
            variables[name] = cp.Variable(block.stop - block.start, name=name)
    sign = -1.0 if program.sense == "maximize" else 1.0
    linear = []
    for name, block in program.variables.items():
        cost = sign * program.cost[block]
        if np.any(cost):
            linear.append(_linear_cost(cost, program.labels.get(name), variables[name]))
    objective = sum(linear) if linear else cp.Constant(0.0)
    for block, factor, label in program.quadratic_terms():
        penalty = _quadratic(factor, label, _section(program, variables, block), variables)
        objective = objective + penalty if sign > 0 else objective - penalty
    for block, function, weights, label in getattr(program, "exponentials", ()):
        # sum_j w_j exp(x_j) or sum_j w_j x_j log x_j = -w @ entr(x), added to a minimisation
        # (subtracted from a maximisation); printed without a double negation
        part = _section(program, variables, block)
        weighted = _constant(weights, label)
        if function == "exp":
            term = weighted @ cp.exp(part)
            objective = objective + term if sign > 0 else objective - term
        else:
            term = weighted @ cp.entr(part)
            objective = objective - term if sign > 0 else objective + term
    groups = {}
    for name, block in program.variables.items():
        if isinstance(variables[name], cp.Variable):
            pairs = _row_constraints(variables[name], lower[block], upper[block])
            if pairs:
                groups[f"{name} bounds"] = [(c, "bounds") for c, _ in pairs]
    for name, _, terms, row_lower, row_upper in program.row_groups():
        expression = _linear(program, variables, terms)
        named = name in program.bound_labels
        label = program.bound_labels.get(name, name.replace(" ", "_") + "_rhs")
        groups[name] = _row_constraints(expression, row_lower, row_upper, label, named)
    for t, block, factor, label in program.cones:
        (t_name,) = (n for n, b in program.variables.items() if b.start <= t.start < b.stop)
        span = program.variables[t_name]
        whole = (t.start, t.stop) == (span.start, span.stop)
        bound = variables[t_name] if whole else variables[t_name][t.start - span.start]
        norm = cp.norm2(_constant(factor, label) @ _section(program, variables, block))
        groups.setdefault(f"{t_name} cone", []).append((norm <= bound, "cone"))
    sense = cp.Maximize if program.sense == "maximize" else cp.Minimize
    return NamedProblem(sense(objective), groups)


def _linear_cost(cost, label, variable):
    """``cost @ variable`` printed under ``label``; a uniform cost labelled ``name 1`` is a scalar
    parameter ``name`` times ``sum(variable)``, the cost ``name`` of a single variable that
    parameter times it."""
    match = _UNIFORM_COST.match(label or "") or (
        variable.size == 1 and re.match(r"^(\w+)$", label or "")
    )
    if match and np.all(cost == cost[0]) and isinstance(variable, cp.Variable):
        scale = _parameter(abs(cost[0]), match.group(1), nonneg=True)
        term = scale * (cp.sum(variable) if variable.size > 1 else variable[0])
        return term if cost[0] > 0 else -term
    return _constant(cost, label) @ variable


def _quadratic(factor, label, x, variables):
    """``½ ||factor @ x||²``: ``name/2 * sum_squares(x)`` (``name`` a parameter) when the factor
    is a multiple of the identity labelled as :data:`_SCALED_IDENTITY` says, else
    ``0.5 * sum_squares(factor @ x)``; ``name`` gets the suffix ``_reg`` when a variable of
    ``variables`` has it."""
    factor = sp.csr_matrix(factor)
    diagonal = factor.diagonal()
    if factor.shape[0] == factor.shape[1] and factor.nnz == np.count_nonzero(diagonal):
        if diagonal.size and np.all(diagonal == diagonal[0]):
            for pattern, form in _SCALED_IDENTITY.items():
                match = pattern.match(label or "")
                if match:
                    name = match.group(1)
                    name = f"{name}_reg" if name in variables else name  # not a variable's name
                    scale = _parameter(diagonal[0] ** 2, form.format(name), nonneg=True)
                    return 0.5 * scale * cp.sum_squares(x)
    return 0.5 * cp.sum_squares(_constant(factor, label) @ x)


def _read_solution(program, problem):
    """``(x, row_duals)`` from a solved :class:`NamedProblem` (duals in the convention of
    :class:`~advgame.compile.program.Solution`)."""
    x = np.zeros(program.n_variables)
    lower, upper = program.bounds
    for name, block in program.variables.items():
        variable = problem.var_dict.get(name)
        value = lower[block] if variable is None else variable.value  # a fixed block's value
        x[block] = np.asarray(value, dtype=np.float64).ravel()
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
