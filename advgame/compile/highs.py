r"""HiGHS backend for LP and convex QP programs (``highspy``, sparse matrices, no Python loops).

LPs go to the dual simplex.  A QP ``min c^T x + ½||G x||² s.t. r_lo <= A x <= r_hi,
x_lo <= x <= x_hi`` is first solved through its Lagrangian dual

.. math::

    \max_{y, s, v}\ r_{lo}^\top y^+ - r_{hi}^\top y^- + x_{lo}^\top s^+ - x_{hi}^\top s^-
    - \tfrac12 \|v\|^2 \quad\text{s.t.}\quad A^\top y + s - G^\top v = c,

whose Hessian is the identity on ``v`` (one entry per row of ``G``): HiGHS' primal active-set
QP solver stalls for minutes on the degenerate primal of the learning QPs (thousands of steps that
barely move the objective; vehicle, n=100: no answer after 4 minutes) and solves their dual in
a fraction of a second.  ``x`` is read from the dual's row multipliers and accepted only if it is
feasible and its objective meets the dual's (a certificate of optimality); otherwise the primal
QP is solved as before.  Every solve stops at ``time_limit`` (default
:data:`~advgame.compile.solution.DEFAULT_TIME_LIMIT`) and a stop short of optimality raises
:class:`~advgame.exceptions.SolverError` with the objective reached and the best bound known.
"""

from __future__ import annotations

import time

import highspy
import numpy as np
import scipy.sparse as sp

from ..exceptions import NotApplicableError, SolverError
from ..oracle import highs_model, run_warm
from .solution import DEFAULT_TIME_LIMIT, Solution, SolvableProgram

__all__ = ["RowGeneration", "solve_highs"]

_STATUS = highspy.HighsModelStatus
_OK = {_STATUS.kOptimal}
_LIMITS = {_STATUS.kTimeLimit: "time_limit", _STATUS.kIterationLimit: "iteration_limit"}
_FEASIBLE = 2  # HiGHS' kSolutionStatusFeasible
#: A dual-recovered ``x`` must be feasible, and meet the dual objective, within this many times
#: the solver tolerance (relative to ``max(1, |bound|)``).
CERTIFICATE_FACTOR = 10.0
#: Feasibility tolerance of the second try at the dual when the first stops short of optimality.
DUAL_RETRY_TOLERANCE = 1e-7
#: With ``formulation='auto'`` each try at the dual may take this many active-set iterations per
#: variable and row of the program before the primal is tried: on some badly scaled duals (a
#: prediction-set QP with 200 variables) HiGHS' active-set solver cycles at a constant objective
#: for 100,000 iterations a second, and would otherwise spend half the time limit there.
DUAL_ITERATIONS_PER_SIZE = 50
#: LPs of at least this many rows run HiGHS's interior-point method (with crossover to an
#: optimal basis, as the simplex method ends) rather than its default simplex: on the compiled
#: learning LPs of 2,400-4,600 rows it measured 1.5-4.4x faster (one thread, CPU time: the l1
#: ball on 100 optdigits rows with a cost matrix 1.49 s -> 0.64 s, the linf ball on 300 rows
#: 6.4 s -> 1.5 s, vehicle's l1 and linf balls 1.9-2.4 s -> 1.2-1.4 s), while below 1,000 rows
#: the two are within noise (iris 630 rows: 0.013 s simplex, 0.021 s IPM; wine 796 rows: 0.068
#: against 0.065 s).
IPM_MIN_ROWS = 1_000


def solve_highs(
    program: SolvableProgram,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    iteration_limit: int | None = None,
    tolerance: float = 1e-9,
    verbose: bool = False,
    formulation: str = "auto",
) -> Solution:
    """Solve an LP or QP ``program`` with HiGHS.

    Parameters
    ----------
    time_limit : float or None, default=DEFAULT_TIME_LIMIT (300 s)
        Wall-clock limit of the whole call in seconds (None: no limit).  For a QP solved with
        ``formulation='auto'`` the dual gets at most half of it and the primal the rest.
    iteration_limit : int or None
        Limit on simplex and QP active-set iterations (None: HiGHS' default, none).
    tolerance : float
        HiGHS' primal and dual feasibility tolerance.
    formulation : {'auto', 'dual', 'primal'}
        For QPs: the dual first and the primal if the dual gives no certified answer
        (``'auto'``; the dual then gets half the time limit and at most
        :data:`DUAL_ITERATIONS_PER_SIZE` iterations per variable and row), or only one of
        them.  Ignored for LPs.

    Raises
    ------
    NotApplicableError
        For SOCP programs (use ``backend='cvxpy'``).
    SolverError
        When HiGHS does not report an optimal solution: infeasible, unbounded, an error status,
        or ``time_limit`` / ``iteration_limit`` reached (the message gives the objective of the
        last iterate, its infeasibilities and the best bound known).  A partial result is never
        returned.
    """
    if program.kind in ("SOCP", "EXP"):
        what = {
            "SOCP": "second-order cones (an l2 or group norm ball)",
            "EXP": "exponential-cone terms (the Shannon entropy)",
        }[program.kind]
        raise NotApplicableError(
            f"HiGHS solves LPs and QPs; this program has {what}. Use backend='cvxpy'."
        )
    if formulation not in ("auto", "dual", "primal"):
        raise ValueError(f"formulation must be 'auto', 'dual' or 'primal'; got {formulation!r}.")
    _check_limit("time_limit", time_limit)
    _check_limit("iteration_limit", iteration_limit, integer=True)
    _check_tolerance(tolerance)
    scaled = Equilibrated.of(program)
    if scaled is not None:  # HiGHS sees entries of order one; the answer is unscaled
        solution = _solve(scaled, time_limit, iteration_limit, tolerance, verbose, formulation)
        return scaled.unscale(solution)
    return _solve(program, time_limit, iteration_limit, tolerance, verbose, formulation)


def _solve(program, time_limit, iteration_limit, tolerance, verbose, formulation):
    """:func:`solve_highs` on validated arguments."""
    start = time.perf_counter()
    limits = {"iteration_limit": iteration_limit, "tolerance": tolerance, "verbose": verbose}
    bound = None
    if program.kind == "QP" and formulation != "primal":
        budget = time_limit if formulation == "dual" or time_limit is None else time_limit / 2
        dual_limits = dict(limits)
        if formulation == "auto" and iteration_limit is None:
            size = program.n_variables + program.n_rows
            dual_limits["iteration_limit"] = DUAL_ITERATIONS_PER_SIZE * size
        x, y, bound, failure = _solve_dual(program, time_limit=budget, **dual_limits)
        if x is not None:
            return _solution(program, x, y, "Optimal", start)
        if formulation == "dual":
            raise SolverError(failure)
    remaining = None if time_limit is None else max(time_limit - _elapsed(start), 0.0)
    h = _primal_model(program, remaining, **limits)
    h.run()
    status = h.getModelStatus()
    if status not in _OK:
        raise SolverError(_failure(program, h, status, time_limit, iteration_limit, bound))
    solution = h.getSolution()
    x, y = np.asarray(solution.col_value), np.asarray(solution.row_dual)
    return _solution(program, x, y, h.modelStatusToString(status), start)


class RowGeneration:
    r"""An LP solved again and again as rows join it (constraint generation, Kelley's cutting
    planes): one ``highspy.Highs`` model holds it, and :meth:`solve` passes HiGHS only the rows
    added to ``program`` since the last solve, so the dual simplex restarts from the previous
    optimal basis (the new rows only cut it off).  :func:`solve_highs` would build and solve
    the grown program from scratch every round: on the classifier's cutting-plane masters
    (1,500-3,000 rows; vehicle, 800 red wine rows, 700 segment rows) the rounds after the first
    took 0.04-0.13 s instead of 0.2-0.25 s each, and a whole L-BFGS certification 1.5-3x less
    CPU time.

    The first solve runs as :func:`solve_highs` would (the interior-point method from
    :data:`IPM_MIN_ROWS` rows, its crossover giving the basis the later ones start from) on the
    equilibrated program when the program needs it (:class:`Equilibrated`); rows added later
    are scaled by the same columns and by powers of two of their own.  Only rows may be added:
    the variables, their bounds and the cost stay those of the first solve.

    Parameters
    ----------
    program : Program
        An LP (``program.kind == 'LP'``); rows added to it later (``program.add_rows``) join
        the model at the next :meth:`solve`.
    time_limit : float or None, default=DEFAULT_TIME_LIMIT
        HiGHS' time limit, as in :func:`solve_highs`.
    tolerance : float, default=1e-9
        HiGHS' primal and dual feasibility tolerance, in :data:`TOLERANCE_RANGE`.

    Raises
    ------
    NotApplicableError
        For a QP, SOCP or exponential-cone program.
    ValueError
        For a bad ``time_limit`` or ``tolerance``.
    """

    def __init__(
        self,
        program: SolvableProgram,
        time_limit: float | None = DEFAULT_TIME_LIMIT,
        tolerance: float = 1e-9,
    ) -> None:
        if program.kind != "LP":
            raise NotApplicableError(
                f"row generation keeps an LP in HiGHS; this program is a {program.kind}."
            )
        _check_limit("time_limit", time_limit)
        _check_tolerance(tolerance)
        self.program, self.n_variables = program, program.n_variables
        self.scaled = Equilibrated.of(program)
        self._h = _primal_model(self.scaled or program, time_limit, None, tolerance, False)
        self._rows = program.n_rows

    def solve(self) -> Solution:
        """Solve the program with the rows added since the last call.

        Raises
        ------
        SolverError
            When HiGHS reports no optimal solution, from the previous basis and again from
            scratch (:func:`advgame.oracle.run_warm`).
        """
        program, start = self.program, time.perf_counter()
        if program.n_variables != self.n_variables:
            raise ValueError(
                f"row generation adds rows only; the program's {self.n_variables} variables "
                f"became {program.n_variables}."
            )
        if program.n_rows > self._rows:
            self._add(
                program.matrix()[self._rows :], *(b[self._rows :] for b in program.row_bounds)
            )
            self._rows = program.n_rows
        run_warm(self._h, program.name)
        self._h.setOptionValue("solver", "choose")  # later rounds: the simplex from this basis
        x = np.asarray(self._h.getSolution().col_value)
        if self.scaled is not None:
            x = self.scaled.columns * x
        return _solution(program, x, None, "Optimal", start)

    def _add(self, A, lower, upper):
        if self.scaled is not None:  # the same columns; rows scaled by their own powers of two
            A = A @ sp.diags(self.scaled.columns)
            rows = _power_of_two(np.asarray(abs(A).max(axis=1).todense()).ravel())
            A, lower, upper = sp.diags(rows) @ A, lower * rows, upper * rows
        A = sp.csr_matrix(A)
        infinity = highspy.kHighsInf
        self._h.addRows(
            A.shape[0],
            np.clip(lower, -infinity, infinity),
            np.clip(upper, -infinity, infinity),
            A.nnz,
            A.indptr.astype(np.int32),
            A.indices.astype(np.int32),
            A.data.astype(float),
        )


def _check_limit(name, value, integer=False):
    """``time_limit``: a number >= 0 (0 stops at once); ``iteration_limit``: an integer >= 1."""
    kinds = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, kinds) or not value >= int(integer):
        expected = "a positive integer" if integer else "a non-negative number"
        raise ValueError(f"{name} must be {expected} or None; got {value!r}.")


#: The feasibility tolerances HiGHS accepts (its own bounds on primal / dual feasibility).
TOLERANCE_RANGE = (1e-12, 1e-3)


def _check_tolerance(tolerance):
    """``tolerance``: a number within :data:`TOLERANCE_RANGE` (HiGHS would silently clamp or
    ignore one outside it)."""
    low, high = TOLERANCE_RANGE
    if (
        isinstance(tolerance, bool)
        or not isinstance(tolerance, (int, float, np.integer, np.floating))
        or not low <= tolerance <= high
    ):
        raise ValueError(
            f"tolerance must be a number in [{low:g}, {high:g}] (HiGHS' primal and dual "
            f"feasibility tolerance); got {tolerance!r}."
        )


#: An LP whose rows, columns or costs leave this range is solved equilibrated
#: (:class:`Equilibrated`): HiGHS drops matrix entries below 1e-9 (``small_matrix_value``) and
#: its feasibility tolerances are absolute, so features of 1e-8 or 1e-12 changed the optimum.
NATIVE_ENTRIES = (2.0**-16, 2.0**16)
#: Passes of Ruiz's equilibration (each divides rows and columns by the square roots of their
#: largest entries, rounded to powers of two).
EQUILIBRATION_PASSES = 8


def _power_of_two(values):
    """The powers of two nearest ``1 / values`` (1 where a value is 0): exact scalings."""
    values = np.asarray(values, dtype=np.float64)
    exponents = np.where(values > 0, -np.round(np.log2(np.where(values > 0, values, 1.0))), 0)
    return np.ldexp(1.0, exponents.astype(np.int64))


def _column_max(A):
    return np.asarray(abs(A).max(axis=0).todense()).ravel() if A.shape[0] else np.zeros(A.shape[1])


class Equilibrated:
    r"""An LP rescaled for HiGHS by powers of two (exact): columns ``x = C x'``, rows
    ``A' = R A C`` and the objective by ``kappa``, so that every column, row and the cost have
    largest entry about 1.  It implements what :func:`solve_highs` reads of a program, and
    :meth:`unscale` maps a solution back: ``x = C x'``, row multipliers ``R y' / kappa``, the
    objective recomputed on the original program.  (Scaling is an equivalence of programs: the
    certificate checked on the scaled one is a certificate of the original.)  QPs are left as
    they are: HiGHS's QP solver failed at these scales with and without it (measured on the
    soft-moment learning problem at features of 1e-8 and 1e4), and cvxpy is their default."""

    def __init__(self, program, columns, rows, kappa):
        self.original, self.columns, self.rows, self.kappa = program, columns, rows, kappa
        self.name, self.sense, self.kind = program.name, program.sense, program.kind
        self.variables, self.n_variables, self.n_rows = (
            program.variables,
            program.n_variables,
            program.n_rows,
        )
        self._A = (sp.diags(rows) @ program.matrix() @ sp.diags(columns)).tocsr()

    @classmethod
    def of(cls, program):
        """The equilibrated LP, or None for a QP and when the largest entry of every row,
        every column and the cost is already within :data:`NATIVE_ENTRIES` (single small
        entries are ordinary data; a whole column of them is a badly scaled variable)."""
        if program.quadratic_factor() is not None:
            return None
        A, c = program.matrix(), program.cost
        magnitude = abs(A).tocsr()
        maxima = [_column_max(magnitude), np.asarray(magnitude.max(axis=1).todense()).ravel()]
        maxima.append(np.array([np.max(np.abs(c), initial=0.0)]))
        values = np.concatenate(maxima)
        values = values[values > 0]
        low, high = NATIVE_ENTRIES
        if not values.size or (values.min() >= low and values.max() <= high):
            return None
        columns, rows = np.ones(A.shape[1]), np.ones(A.shape[0])
        for _ in range(EQUILIBRATION_PASSES):  # Ruiz: rows and columns by sqrt of their maxima
            scaled = sp.diags(rows) @ magnitude @ sp.diags(columns)
            rows *= _power_of_two(np.sqrt(np.asarray(scaled.max(axis=1).todense()).ravel()))
            columns *= _power_of_two(np.sqrt(_column_max(scaled)))
        weight = float(np.max(np.abs(c * columns), initial=0.0))
        kappa = float(_power_of_two([weight])[0]) if weight > 0 else 1.0
        return cls(program, columns, rows, kappa)

    @property
    def cost(self):
        return self.kappa * self.original.cost * self.columns

    @property
    def bounds(self):
        lo, hi = self.original.bounds
        return lo / self.columns, hi / self.columns

    @property
    def row_bounds(self):
        lo, hi = self.original.row_bounds
        return lo * self.rows, hi * self.rows

    def matrix(self):
        return self._A

    def quadratic_factor(self):
        return None

    def minimized_objective(self, x):
        return float(self.cost @ x)

    def objective(self, x):
        return self.original.objective(self.columns * x)

    def unscale(self, solution):
        """The solution of the original program."""
        x = self.columns * solution.x
        y = None if solution.row_duals is None else self.rows * solution.row_duals / self.kappa
        return Solution(
            x=x,
            objective=self.original.objective(x),
            status=solution.status,
            backend=solution.backend,
            solve_seconds=solution.solve_seconds,
            row_duals=y,
        )


def _elapsed(start):
    return time.perf_counter() - start


def _solution(program, x, row_duals, status, start):
    return Solution(
        x=x,
        objective=program.objective(x),
        status=status,
        backend="highs",
        solve_seconds=_elapsed(start),
        row_duals=row_duals,
    )


def _configure(h, time_limit, iteration_limit):
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    if iteration_limit is not None:
        for option in ("simplex_iteration_limit", "qp_iteration_limit", "ipm_iteration_limit"):
            h.setOptionValue(option, int(iteration_limit))


def _pass_hessian(h, H):
    """Pass the upper triangle of the symmetric ``H`` (HiGHS' column-wise triangular format)."""
    H = sp.triu(H, format="csc")
    h.passHessian(
        H.shape[0],
        H.nnz,
        highspy.HessianFormat.kTriangular,
        H.indptr.astype(np.int32),
        H.indices.astype(np.int32),
        H.data.astype(np.float64),
    )


def _primal_model(program, time_limit, iteration_limit, tolerance, verbose):
    h = highs_model(
        program.matrix(),
        program.cost,
        program.bounds,
        program.row_bounds,
        tolerance=tolerance,
        verbose=verbose,
    )
    _configure(h, time_limit, iteration_limit)
    G = program.quadratic_factor()
    if G is not None:
        _pass_hessian(h, (G.T @ G).tocsc())
    elif program.n_rows >= IPM_MIN_ROWS:
        h.setOptionValue("solver", "ipm")
    return h


def dual_program(program):
    r"""The Lagrangian dual of a QP as HiGHS data, minimised (the negated maximisation).

    Variables ``z = (y, y_ranged, v, s_lo, s_hi)``: one multiplier per row (sign set by which
    row bounds are finite), a second one for each ranged row, ``v`` (``G x`` at the optimum)
    and, for each variable bounded on both sides, two bound multipliers.  One row per primal
    variable: ``(A^T y - G^T v + s)_j`` equals ``c_j`` if ``x_j`` is free or boxed, is
    ``<= c_j`` if only ``x_lo`` is finite (``>= c_j`` if only ``x_hi``) with ``x_lo (c_j - ...)``
    folded into the objective, and is free if ``x_j`` is fixed.

    Returns ``(M, cost, column_bounds, row_bounds, hessian, constant, shift)``: the optimum of
    the program is ``constant - min`` and ``x = shift - row_dual`` (``shift`` holds the folded
    bounds: the multiplier of row ``j`` is ``x_lo - x_j`` there, ``-x_j`` elsewhere).
    """
    A, G, c = program.matrix(), program.quadratic_factor(), program.cost
    (x_lo, x_hi), (r_lo, r_hi) = program.bounds, program.row_bounds
    lo, hi = np.isfinite(r_lo), np.isfinite(r_hi)
    equal = lo & hi & (r_lo == r_hi)
    ranged = lo & hi & ~equal
    y_lo = np.where(lo & ~equal, 0.0, np.where(lo | hi, -np.inf, 0.0))
    y_hi = np.where(~lo & hi, 0.0, np.where(lo, np.inf, 0.0))
    y_cost = -np.where(lo, r_lo, np.where(hi, r_hi, 0.0))
    below, above = np.isfinite(x_lo), np.isfinite(x_hi)
    fixed = below & above & (x_lo == x_hi)
    boxed = below & above & ~fixed
    one_sided = (below | above) & ~boxed
    b = np.where(one_sided, np.where(below, x_lo, x_hi), 0.0)  # folded bound values
    n, m = c.size, G.shape[0]
    E = sp.identity(n, format="csc")[:, np.flatnonzero(boxed)]
    M = sp.hstack([A.T, A[ranged].T, -G.T, E, -E], format="csc")
    cost = np.concatenate([y_cost, -r_hi[ranged], np.zeros(m), -x_lo[boxed], x_hi[boxed]]) + (
        M.T @ b
    )
    n_boxed, n_ranged = int(boxed.sum()), int(ranged.sum())
    column_bounds = (
        np.concatenate(
            [y_lo, np.full(n_ranged, -np.inf), np.full(m, -np.inf), np.zeros(2 * n_boxed)]
        ),
        np.concatenate([y_hi, np.zeros(n_ranged), np.full(m + 2 * n_boxed, np.inf)]),
    )
    row_bounds = (
        np.where(fixed | (below & ~above), -np.inf, c),
        np.where(fixed | (above & ~below), np.inf, c),
    )
    v = np.arange(m) + program.n_rows + n_ranged
    hessian = sp.csc_matrix((np.ones(m), (v, v)), shape=(M.shape[1],) * 2)
    return M, cost, column_bounds, row_bounds, hessian, float(b @ c), b


def _solve_dual(program, time_limit, iteration_limit, tolerance, verbose):
    """``(x, y, None, None)`` if the dual certifies an optimum (``y``: the row multipliers, the
    dual's own variables), else ``(None, None, bound, message)``.

    The dual is run at ``tolerance`` and, if HiGHS does not reach optimality there, once more
    at :data:`DUAL_RETRY_TOLERANCE` (the certificate still uses ``tolerance``).  ``bound`` is a
    lower bound on the optimum (the objective of a dual-feasible iterate) or None.
    """
    start = time.perf_counter()
    M, cost, columns, rows, hessian, constant, shift = dual_program(program)
    bound, message = None, None
    for attempt in dict.fromkeys((tolerance, max(tolerance, DUAL_RETRY_TOLERANCE))):
        remaining = None if time_limit is None else time_limit - _elapsed(start)
        if remaining is not None and remaining <= 0:
            break
        h = highs_model(M, cost, columns, rows, tolerance=attempt, verbose=verbose)
        _configure(h, remaining, iteration_limit)
        _pass_hessian(h, hessian)
        h.run()
        status, info = h.getModelStatus(), h.getInfo()
        value = constant - float(info.objective_function_value)
        if info.primal_solution_status == _FEASIBLE and np.isfinite(value):
            bound = value if bound is None else max(bound, value)
        if status in _OK:
            solution = h.getSolution()
            x = shift - np.asarray(solution.row_dual)  # from the dual's row multipliers
            x, message = _certify(program, x, constant - info.objective_function_value, tolerance)
            if message is None:
                return x, _row_multipliers(program, solution.col_value), None, None
        else:
            message = _failure(program, h, status, time_limit, iteration_limit, bound, "dual")
    return None, None, bound, message


def _row_multipliers(program, z):
    """The program's row multipliers from the dual's variables ``(y, y_ranged, ...)``: ``y``,
    plus the upper-side multiplier of each ranged row (see :func:`dual_program`)."""
    r_lo, r_hi = program.row_bounds
    ranged = np.isfinite(r_lo) & np.isfinite(r_hi) & (r_lo != r_hi)
    y = np.array(z[: program.n_rows], dtype=np.float64)
    y[ranged] += np.asarray(z[program.n_rows : program.n_rows + int(ranged.sum())])
    return y


def _certify(program, x, bound, tolerance):
    """``(x, None)`` if ``x`` (clipped to its bounds) is feasible and meets the dual ``bound``."""
    x_lo, x_hi = program.bounds
    x = np.clip(x, x_lo, x_hi)
    r_lo, r_hi = program.row_bounds
    Ax = program.matrix() @ x
    slack = CERTIFICATE_FACTOR * tolerance
    excess = np.maximum(r_lo - Ax, Ax - r_hi) / np.maximum(1.0, np.abs(Ax))
    violation = float(np.max(excess, initial=0.0))
    objective = program.minimized_objective(x)
    if violation <= slack and abs(objective - bound) <= slack * max(1.0, abs(bound)):
        return x, None
    return x, (
        f"the dual of {program.name} was solved but the primal read from it is not certified "
        f"(row violation {violation:.2e}, objective {objective:.10g} against the dual bound "
        f"{bound:.10g})."
    )


def _failure(program, h, status, time_limit, iteration_limit, bound=None, formulation="primal"):
    """The message of a non-optimal HiGHS stop: status, and on a limit the progress made."""
    name = h.modelStatusToString(status)
    head = f"HiGHS could not solve {program.name} ({program.kind}"
    head += ", through its dual)" if formulation == "dual" else ")"
    limit = _LIMITS.get(status)
    if limit is None:
        hint = ""
        if status == _STATUS.kUnboundedOrInfeasible:
            hint = " (HiGHS cannot tell which)"
        return f"{head}: status '{name}'{hint}."
    info = h.getInfo()
    value = time_limit if limit == "time_limit" else iteration_limit
    message = f"{head}: status '{name}' ({limit}={value}) before optimality."
    if formulation == "dual":
        message += "" if bound is None else f" The best lower bound reached is {bound:.10g}."
    elif h.getSolution().value_valid:
        message += (
            f" Its last iterate has objective {info.objective_function_value:.10g}, "
            f"max primal infeasibility {info.max_primal_infeasibility:.2e}, max dual "
            f"infeasibility {info.max_dual_infeasibility:.2e}"
        )
        if bound is not None:
            gap = info.objective_function_value - bound
            message += f"; the best lower bound is {bound:.10g} (gap {gap:.2e})"
        message += "."
    else:
        message += " No iterate is available."  # e.g. stopped in presolve
    return message + f" No partial result is returned; raise {limit}, or use backend='cvxpy'."
