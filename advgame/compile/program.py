r"""One description of a convex program, shared by the HiGHS and cvxpy backends.

.. math::

    \min_x\ c^\top x + \tfrac12 \|G x\|^2 \quad \text{s.t.}\quad
    r_{lo} \le A x \le r_{hi},\quad x_{lo} \le x \le x_{hi},\quad
    \|M_c\, x_{S_c}\|_2 \le x_{t_c}\ \ (c = 1..C).

Variables and rows are added in named blocks, so a solution can be read back by name and the
program can describe itself.  The kind is ``LP`` (no ``G``, no cones), ``QP`` (``G``) or ``SOCP``
(cones; cvxpy only).
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["DEFAULT_TIME_LIMIT", "Program", "Solution"]

#: Wall-clock limit (seconds) of one :meth:`Program.solve` unless ``time_limit`` is given; a solve
#: that reaches it raises :class:`~advgame.exceptions.SolverError` (never a partial result).
DEFAULT_TIME_LIMIT = 300.0


@dataclass
class Solution:
    """A solved program: the variable vector, objective and solver status."""

    x: np.ndarray
    objective: float
    status: str
    backend: str
    solve_seconds: float


class Program:
    """A convex program assembled from named blocks of variables and constraints."""

    def __init__(self, name="program"):
        self.name = name
        self.variables = {}  # name -> slice
        self.rows = {}  # name -> slice
        self._cost, self._lower, self._upper = [], [], []
        self._row_terms, self._row_lower, self._row_upper = [], [], []
        self._quadratic = []  # (slice, factor)
        self.cones = []  # (t_slice, x_slice, factor)
        self.n_variables = 0
        self.n_rows = 0

    # ------------------------------------------------------------------------------ building
    def add_variables(self, name, size, lower=-np.inf, upper=np.inf, cost=0.0):
        """Add ``size`` variables; returns their slice of ``x``."""
        block = slice(self.n_variables, self.n_variables + size)
        self.variables[name] = block
        self.n_variables += size
        self._cost.append(np.broadcast_to(np.asarray(cost, dtype=np.float64), (size,)))
        self._lower.append(np.broadcast_to(np.asarray(lower, dtype=np.float64), (size,)))
        self._upper.append(np.broadcast_to(np.asarray(upper, dtype=np.float64), (size,)))
        return block

    def add_rows(self, name, terms, lower=-np.inf, upper=np.inf):
        """Add rows ``lower <= sum_b A_b x_b <= upper`` from ``terms = [(slice_b, A_b), ...]``."""
        size = terms[0][1].shape[0]
        block = slice(self.n_rows, self.n_rows + size)
        self.rows[name] = block
        self.n_rows += size
        self._row_terms.append((block, terms))
        self._row_lower.append(np.broadcast_to(np.asarray(lower, dtype=np.float64), (size,)))
        self._row_upper.append(np.broadcast_to(np.asarray(upper, dtype=np.float64), (size,)))
        return block

    def add_quadratic(self, block, factor):
        """Add ``½ ||factor @ x[block]||^2`` to the objective."""
        self._quadratic.append((block, sp.csr_matrix(factor)))

    def add_cone(self, t, block, factor):
        """Add the second-order cone ``||factor @ x[block]||_2 <= x[t]``."""
        self.cones.append((t, block, sp.csr_matrix(factor)))

    # ---------------------------------------------------------------------------- assembled
    @property
    def kind(self):
        """'SOCP' if there are cones, 'QP' if there is a quadratic term, else 'LP'."""
        return "SOCP" if self.cones else ("QP" if self._quadratic else "LP")

    @property
    def cost(self):
        """The linear objective ``c`` (length ``n_variables``)."""
        return np.concatenate(self._cost)

    @property
    def bounds(self):
        """``(x_lo, x_hi)`` variable bounds (``±inf`` where free)."""
        return np.concatenate(self._lower), np.concatenate(self._upper)

    @property
    def row_bounds(self):
        """``(r_lo, r_hi)`` constraint bounds (equal for equality rows)."""
        return np.concatenate(self._row_lower), np.concatenate(self._row_upper)

    def matrix(self):
        """The constraint matrix ``A`` (CSR, ``n_rows x n_variables``)."""
        pieces = []
        for rows, terms in self._row_terms:
            for cols, A in terms:
                A = sp.coo_matrix(A)
                pieces.append((A.row + rows.start, A.col + cols.start, A.data))
        r, c, v = (np.concatenate(p) for p in zip(*pieces))
        return sp.csr_matrix((v, (r, c)), shape=(self.n_rows, self.n_variables))

    def quadratic_factor(self):
        """``G`` with the objective's quadratic part ``½ ||G x||^2`` (None for LP/SOCP)."""
        if not self._quadratic:
            return None
        parts = []
        for block, factor in self._quadratic:
            full = sp.hstack(
                [
                    sp.csr_matrix((factor.shape[0], block.start)),
                    factor,
                    sp.csr_matrix((factor.shape[0], self.n_variables - block.stop)),
                ],
                format="csr",
            )
            parts.append(full)
        return sp.vstack(parts, format="csr")

    def objective(self, x):
        """Evaluate ``c^T x + ½ ||G x||^2`` at ``x``."""
        value = float(self.cost @ x)
        G = self.quadratic_factor()
        if G is not None:
            z = G @ x
            value += 0.5 * float(z @ z)
        return value

    def describe(self):
        """A readable summary: kind, variable blocks, constraint blocks, sizes."""
        A = self.matrix() if self._row_terms else None
        lines = [
            f"{self.name}: {self.kind} with {self.n_variables:,} variables, {self.n_rows:,} "
            f"linear constraints ({0 if A is None else A.nnz:,} nonzeros)"
            + (f", {len(self.cones)} second-order cones" if self.cones else "")
            + (", quadratic objective" if self._quadratic else ""),
            "  variables:",
        ]
        lines += [f"    {n:<20} {b.stop - b.start:>9,}" for n, b in self.variables.items()]
        lines.append("  constraints:")
        lines += [f"    {n:<20} {b.stop - b.start:>9,}" for n, b in self.rows.items()]
        return "\n".join(lines)

    def __repr__(self):
        return f"Program({self.name!r}, kind={self.kind}, n_variables={self.n_variables})"

    # -------------------------------------------------------------------------------- solving
    def solve(self, backend="highs", **options):
        """Solve with ``backend='highs'`` (LP and QP) or ``'cvxpy'`` (any kind).

        ``options`` go to :func:`advgame.compile.highs.solve_highs` (``time_limit``,
        ``iteration_limit``, ``tolerance``, ``verbose``, ``formulation``) or
        :func:`advgame.compile.cvx.solve_cvxpy` (``solver``, ``time_limit``, ``verbose`` and the
        solver's own options).  Both stop after ``time_limit`` seconds, by default
        :data:`DEFAULT_TIME_LIMIT` (300 s; ``None`` for no limit).

        Raises
        ------
        SolverError
            Unless the solver reports an optimal solution (infeasible, unbounded, a solver error,
            or a time / iteration limit reached; the message names the program and the status,
            and for a limit the objective reached and the best bound known).  cvxpy's
            'optimal_inaccurate' is returned with a ``RuntimeWarning`` instead.
        """
        if backend == "highs":
            from .highs import solve_highs

            return solve_highs(self, **options)
        if backend == "cvxpy":
            from .cvx import solve_cvxpy

            return solve_cvxpy(self, **options)
        raise ValueError(f"backend must be 'highs' or 'cvxpy'; got {backend!r}.")

    def to_cvxpy(self):
        """The program as a cvxpy ``Problem`` and its variable vector ``x``."""
        from .cvx import to_cvxpy

        return to_cvxpy(self)
