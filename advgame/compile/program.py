r"""One description of a convex program, shared by the HiGHS and cvxpy backends.

.. math::

    \min_x\ c^\top x + \tfrac12 \|G x\|^2 \quad \text{s.t.}\quad
    r_{lo} \le A x \le r_{hi},\quad x_{lo} \le x \le x_{hi},\quad
    \|M_c\, x_{S_c}\|_2 \le x_{t_c}\ \ (c = 1..C),

plus, for the Shannon entropy's games, separable exponential-cone terms :math:`\sum_j a_j
e^{x_j}` and :math:`\sum_j a_j x_j \log x_j` (:meth:`Program.add_exponential`, weights
:math:`a_j \ge 0`) in the minimised objective.  Variables and rows are added in named blocks, so
a solution can be read back by name and the program can describe itself.  The kind is ``LP``
(no ``G``, no cones), ``QP`` (``G``), ``SOCP`` (cones; cvxpy only) or ``EXP`` (exponential
terms; cvxpy only).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from scipy.special import xlogy

from .solution import DEFAULT_TIME_LIMIT, Solution

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from .cvx import NamedProblem

__all__ = ["DEFAULT_TIME_LIMIT", "Program", "Solution"]

#: :meth:`Program.matrix` places the entries of a term this many at a time.
ASSEMBLY_CHUNK = 1 << 16


def _term(term):
    """``(slice, matrix, label)`` from ``(slice, matrix)`` or ``(slice, matrix, label)``."""
    block, matrix, *label = term
    return block, matrix, (label[0] if label else None)


class Program:
    """A convex program assembled from named blocks of variables and constraints.

    ``sense='maximize'`` keeps the objective of a maximisation (``c^T x - ½||G x||^2``) for
    :meth:`objective`, :meth:`to_cvxpy` and the solution; the backends always minimise
    :attr:`cost` (its negation) plus ``½||G x||^2``.  Every matrix may carry a label, the name it
    is printed under in :meth:`to_cvxpy` (the view of the program that reads as the math).
    """

    def __init__(self, name: str = "program", sense: str = "minimize") -> None:
        if sense not in ("minimize", "maximize"):
            raise ValueError(f"sense must be 'minimize' or 'maximize'; got {sense!r}.")
        self.name = name
        self.sense = sense
        self.variables = {}  # name -> slice
        self.rows = {}  # name -> slice
        self.labels = {}  # variable name -> label of its cost vector
        self.bound_labels = {}  # row group name -> label of its bound vector
        self._cost, self._lower, self._upper = [], [], []
        self._row_terms, self._row_lower, self._row_upper = [], [], []
        self._quadratic = []  # (slice, factor, label)
        self.cones = []  # (t_slice, x_slice, factor, label)
        self.exponentials = []  # (slice, function 'exp' | 'xlogx', weights, label)
        self.n_variables = 0
        self.n_rows = 0

    # ------------------------------------------------------------------------------ building
    def add_variables(
        self,
        name: str,
        size: int,
        lower: float | ArrayLike = -np.inf,
        upper: float | ArrayLike = np.inf,
        cost: float | ArrayLike = 0.0,
        label: str | None = None,
    ) -> slice:
        """Add ``size`` variables; returns their slice of ``x``.

        ``cost`` is their objective coefficient in the program's sense, ``label`` the name of
        that cost vector when printed.
        """
        if name in self.variables:
            raise ValueError(f"the program already has a variable block named {name!r}.")
        block = slice(self.n_variables, self.n_variables + size)
        self.variables[name] = block
        self.n_variables += size
        if label is not None:
            self.labels[name] = label
        self._cost.append(np.broadcast_to(np.asarray(cost, dtype=np.float64), (size,)))
        self._lower.append(np.broadcast_to(np.asarray(lower, dtype=np.float64), (size,)))
        self._upper.append(np.broadcast_to(np.asarray(upper, dtype=np.float64), (size,)))
        return block

    def add_rows(
        self,
        name: str,
        terms: list[tuple[Any, ...]],
        lower: float | ArrayLike = -np.inf,
        upper: float | ArrayLike = np.inf,
    ) -> slice:
        """Add rows ``lower <= sum_b A_b x_b <= upper`` from ``terms = [(slice_b, A_b), ...]``.

        A term may be ``(slice_b, A_b, label)``: ``A_b`` is then printed as ``label``.
        """
        if name in self.rows:
            raise ValueError(f"the program already has a constraint group named {name!r}.")
        terms = [_term(term) for term in terms]
        size = terms[0][1].shape[0]
        block = slice(self.n_rows, self.n_rows + size)
        self.rows[name] = block
        self.n_rows += size
        self._row_terms.append((block, terms))
        self._row_lower.append(np.broadcast_to(np.asarray(lower, dtype=np.float64), (size,)))
        self._row_upper.append(np.broadcast_to(np.asarray(upper, dtype=np.float64), (size,)))
        return block

    def label_bounds(self, name: str, label: str) -> None:
        """Print the bound vector of the row group ``name`` as ``label`` in :meth:`to_cvxpy` (a
        named ``cp.Parameter``; by default ``<name>_rhs``)."""
        if name not in self.rows:
            raise ValueError(
                f"the program has no constraint group named {name!r}; its groups: "
                f"{list(self.rows)}."
            )
        self.bound_labels[name] = label

    def add_simplex_rows(
        self, name: str, block: slice, size: int, label: str | None = None
    ) -> slice:
        """Add the rows ``sum_j x[block][s size + j] = 1``: each run of ``size`` variables of
        ``block`` is a distribution (its nonnegativity is the block's lower bound)."""
        count = (block.stop - block.start) // size
        ones = sp.kron(sp.identity(count, format="csr"), np.ones((1, size)), format="csr")
        return self.add_rows(name, [(block, ones, label)], 1.0, 1.0)

    def add_quadratic(self, block: slice, factor: Any, label: str | None = None) -> None:
        """Add ``½ ||factor @ x[block]||^2`` to the minimised form of the objective (a penalty:
        subtracted from a maximisation)."""
        self._quadratic.append((block, sp.csr_matrix(factor), label))

    def add_cone(self, t: slice, block: slice, factor: Any, label: str | None = None) -> None:
        """Add the second-order cone ``||factor @ x[block]||_2 <= x[t]``."""
        self.cones.append((t, block, sp.csr_matrix(factor), label))

    def add_exponential(
        self, block: slice, function: str, weights: ArrayLike, label: str | None = None
    ) -> None:
        """Add ``sum_j weights_j f(x_j)`` over ``x[block]`` to the minimised form of the objective
        (subtracted from a maximisation), with ``f = exp`` (``function='exp'``) or ``f(x) = x log
        x`` (``'xlogx'``, which keeps ``x >= 0``); ``weights >= 0`` keep it convex."""
        if function not in ("exp", "xlogx"):
            raise ValueError(f"function must be 'exp' or 'xlogx'; got {function!r}.")
        weights = np.broadcast_to(
            np.asarray(weights, dtype=np.float64), (block.stop - block.start,)
        )
        if not np.all(weights >= 0):
            raise ValueError("the weights of an exponential-cone term must be non-negative.")
        self.exponentials.append((block, function, weights.copy(), label))

    # ---------------------------------------------------------------------------- assembled
    @property
    def kind(self) -> str:
        """'EXP' with exponential terms, 'SOCP' with cones, 'QP' with a quadratic term, else
        'LP'."""
        if self.exponentials:
            return "EXP"
        return "SOCP" if self.cones else ("QP" if self._quadratic else "LP")

    @property
    def _sign(self):
        return -1.0 if self.sense == "maximize" else 1.0

    @property
    def cost(self) -> np.ndarray:
        """The linear objective ``c`` of the minimised form (length ``n_variables``)."""
        return self._sign * np.concatenate(self._cost)

    @property
    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(x_lo, x_hi)`` variable bounds (``±inf`` where free)."""
        return np.concatenate(self._lower), np.concatenate(self._upper)

    @property
    def row_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(r_lo, r_hi)`` constraint bounds (equal for equality rows)."""
        return np.concatenate(self._row_lower), np.concatenate(self._row_upper)

    def row_groups(self) -> list[tuple[Any, ...]]:
        """``[(name, rows, [(variable slice, matrix, label), ...], lower, upper), ...]``."""
        return [
            (name, rows, terms, lower, upper)
            for name, (rows, terms), lower, upper in zip(
                self.rows, self._row_terms, self._row_lower, self._row_upper
            )
        ]

    def quadratic_terms(self) -> list[tuple[Any, ...]]:
        """``[(variable slice, factor, label), ...]`` of ``½ ||factor x_b||^2``."""
        return list(self._quadratic)

    def matrix(self) -> sp.csr_matrix:
        """The constraint matrix ``A`` (CSR, ``n_rows x n_variables``).

        Written straight into the final CSR arrays, one row group at a time: each term's
        entries go to their place in their rows, so building costs a few passes over the
        nonzeros and no per-term copies are concatenated (the cost per nonzero stays flat as the
        program grows; see ``advgame bench compile``).
        """
        groups = [
            (rows, [(cols, sp.csr_matrix(A)) for cols, A, _ in terms])
            for rows, terms in self._row_terms
        ]
        row_counts = np.zeros(self.n_rows, dtype=np.int64)
        for rows, terms in groups:
            for _, A in terms:
                row_counts[rows] += np.diff(A.indptr)
        indptr = np.zeros(self.n_rows + 1, dtype=np.int64)
        np.cumsum(row_counts, out=indptr[1:])
        nnz = int(indptr[-1])
        index = np.int32 if max(nnz, self.n_variables) < np.iinfo(np.int32).max else np.int64
        indices = np.empty(nnz, dtype=index)
        data = np.empty(nnz, dtype=np.float64)
        duplicated = False
        for rows, terms in groups:
            filled = indptr[rows.start : rows.stop].copy()  # next free slot of each row
            blocks = [cols.start for cols, _ in terms]
            duplicated |= len(set(blocks)) < len(blocks)
            for cols, A in terms:
                # in chunks of about ASSEMBLY_CHUNK entries: the index temporaries stay small
                bounds = np.searchsorted(A.indptr, np.arange(0, A.nnz, ASSEMBLY_CHUNK), "right")
                for start, stop in zip(bounds - 1, [*bounds[1:] - 1, A.shape[0]]):
                    lo, hi = A.indptr[start], A.indptr[stop]
                    counts = np.diff(A.indptr[start : stop + 1])
                    row_of = np.repeat(np.arange(start, stop), counts)
                    slot = filled[row_of] + (np.arange(lo, hi) - A.indptr[row_of])
                    indices[slot] = A.indices[lo:hi] + cols.start
                    data[slot] = A.data[lo:hi]
                filled += np.diff(A.indptr)
        A = sp.csr_matrix((data, indices, indptr), shape=(self.n_rows, self.n_variables))
        if duplicated:  # two terms on one block: add their entries
            A.sum_duplicates()
        return A

    def quadratic_factor(self) -> sp.csr_matrix | None:
        """``G`` with the minimised objective's quadratic part ``½ ||G x||^2`` (None for
        LP/SOCP)."""
        if not self._quadratic:
            return None
        parts = []
        for block, factor, _ in self._quadratic:
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

    def minimized_objective(self, x: np.ndarray) -> float:
        """``c^T x + ½ ||G x||^2``: the form the backends minimise."""
        value = float(self.cost @ x)
        G = self.quadratic_factor()
        if G is not None:
            z = G @ x
            value += 0.5 * float(z @ z)
        for block, function, weights, _ in self.exponentials:
            part = x[block]
            with np.errstate(over="ignore"):
                terms = np.exp(part) if function == "exp" else xlogy(part, part)
            value += float(weights @ terms)
        return value

    def objective(self, x: np.ndarray) -> float:
        """The objective at ``x`` in the program's sense."""
        return self._sign * self.minimized_objective(x)

    def duals(self, solution: Solution) -> dict[str, np.ndarray]:
        """The row multipliers of ``solution`` by constraint group (see :class:`Solution`)."""
        if solution.row_duals is None:
            raise ValueError(f"the {solution.backend} solution carries no row multipliers.")
        return {name: solution.row_duals[rows] for name, rows in self.rows.items()}

    def describe(self) -> str:
        """A readable summary: kind, variable blocks, constraint blocks, sizes."""
        A = self.matrix() if self._row_terms else None
        lines = [
            f"{self.name}: {self.kind} with {self.n_variables:,} variables, {self.n_rows:,} "
            f"linear constraints ({0 if A is None else A.nnz:,} nonzeros)"
            + (f", {len(self.cones)} second-order cones" if self.cones else "")
            + (", exponential-cone terms" if self.exponentials else "")
            + (", quadratic objective" if self._quadratic else "")
            + (" (a maximisation)" if self.sense == "maximize" else ""),
            "  variables:",
        ]
        lines += [f"    {n:<20} {b.stop - b.start:>9,}" for n, b in self.variables.items()]
        lines.append("  constraints:")
        lines += [f"    {n:<20} {b.stop - b.start:>9,}" for n, b in self.rows.items()]
        return "\n".join(lines)

    def __repr__(self):
        return f"Program({self.name!r}, kind={self.kind}, n_variables={self.n_variables})"

    # -------------------------------------------------------------------------------- solving
    def solve(self, backend: str = "highs", **options: Any) -> Solution:
        """Solve with ``backend='highs'`` (LP and QP), ``'cvxpy'`` (any kind) or ``'auto'``
        (HiGHS for an LP, cvxpy for a QP, SOCP or EXP: HiGHS' QP solver can stall or report 'Solve
        error' on degenerate QPs that Clarabel solves).

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
        if backend == "auto":
            backend = "highs" if self.kind == "LP" else "cvxpy"
        if backend == "highs":
            from .highs import solve_highs

            return solve_highs(self, **options)
        if backend == "cvxpy":
            from .cvx import solve_cvxpy

            return solve_cvxpy(self, **options)
        raise ValueError(f"backend must be 'auto', 'highs' or 'cvxpy'; got {backend!r}.")

    def to_cvxpy(self) -> NamedProblem:
        """The program as a cvxpy ``Problem`` with one named ``Variable`` per block
        (``problem.var_dict[name]``) and its constraints grouped by name
        (``problem.constraint_groups[name]``); matrices print under their labels, and every
        other constant is a named ``Parameter`` (a block its bounds fix, a labelled bound vector,
        a radius or strength): :func:`advgame.compile.cvx.to_cvxpy`."""
        from .cvx import to_cvxpy

        return to_cvxpy(self)
