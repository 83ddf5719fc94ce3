"""What a backend returns and what it reads: :class:`Solution`, the time limit of a solve, and
:class:`SolvableProgram`, the part of a :class:`~advgame.compile.program.Program` the HiGHS and
cvxpy backends use.

The backends (:mod:`advgame.compile.highs`, :mod:`advgame.compile.cvx`) import this module and
not :mod:`advgame.compile.program`, which dispatches to them: the dependencies point one way,
``program -> highs, cvx -> solution``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import scipy.sparse as sp

__all__ = ["DEFAULT_TIME_LIMIT", "Solution", "SolvableProgram"]

#: Wall-clock limit (seconds) of one :meth:`Program.solve` unless ``time_limit`` is given; a solve
#: that reaches it raises :class:`~advgame.exceptions.SolverError` (never a partial result).
DEFAULT_TIME_LIMIT = 300.0


@dataclass
class Solution:
    """A solved program: the variable vector, objective (in the program's sense) and status.

    ``row_duals`` are the multipliers ``y`` of the linear rows in the minimisation form
    ``min c^T x + ½||Gx||^2`` (``c + G^T G x = A^T y + `` bound multipliers): ``y >= 0`` on a row
    held at its lower bound, ``<= 0`` at its upper bound; None when the backend gave none.
    """

    x: np.ndarray
    objective: float
    status: str
    backend: str
    solve_seconds: float
    row_duals: np.ndarray | None = None


class SolvableProgram(Protocol):
    """The assembled program a backend solves (:class:`~advgame.compile.program.Program`
    implements it): ``min c^T x + ½||G x||^2`` s.t. ``r_lo <= A x <= r_hi``,
    ``x_lo <= x <= x_hi`` and second-order cones, with named blocks."""

    name: str
    sense: str
    variables: dict[str, slice]
    labels: dict[str, str]
    cones: list[tuple[Any, ...]]
    n_variables: int
    n_rows: int

    @property
    def kind(self) -> str: ...
    @property
    def cost(self) -> np.ndarray: ...
    @property
    def bounds(self) -> tuple[np.ndarray, np.ndarray]: ...
    @property
    def row_bounds(self) -> tuple[np.ndarray, np.ndarray]: ...
    def matrix(self) -> sp.csr_matrix: ...
    def quadratic_factor(self) -> sp.csr_matrix | None: ...
    def quadratic_terms(self) -> list[tuple[Any, ...]]: ...
    def row_groups(self) -> list[tuple[Any, ...]]: ...
    def minimized_objective(self, x: np.ndarray) -> float: ...
    def objective(self, x: np.ndarray) -> float: ...
