r"""Cutting planes on the learning problem (Kelley's method), certified by weak duality.

One loop, :func:`cutting_planes`, serves every master program: each round solves the master
over the cuts met so far (a lower bound ``D <= J*`` when its solver, or its multipliers, certify
one), evaluates the exact objective ``J(theta) >= J*`` at the master's ``theta`` and adds the
cuts its value shows violated, until ``min J - max D <= tol * max(1, |J|)``.  The masters:

* :class:`_LearningMaster` (:func:`refine_cutting_plane`): the classifier's surrogate, cuts
  ``q*`` per sample (:func:`advgame.compile.compile_cuts`); it closes the gap a first-order
  method leaves (feasible while ``n * p`` is moderate);
* :class:`advgame.solvers.structured._GraphMaster`
  (:func:`advgame.solvers.structured.fit_cutting_plane`): the graphical models, cuts
  ``(H_s(mu), Phi_s^T mu)`` per example.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..compile import add_cuts, compile_cuts
from ..compile.highs import RowGeneration
from ..exceptions import ConvergenceWarning
from ._progress import quiet
from .first_order import TrainingResult

__all__ = ["cutting_planes", "refine_cutting_plane"]


def _check_rounds(max_rounds, name="max_rounds"):
    if (
        isinstance(max_rounds, bool)
        or not isinstance(max_rounds, (int, np.integer))
        or max_rounds < 1
    ):
        raise ValueError(f"{name} must be a positive integer; got {max_rounds!r}.")


def cutting_planes(
    master: Any,
    theta: np.ndarray,
    objective: float,
    tol: float,
    max_rounds: int,
    stacklevel: int = 2,
    progress: Any = None,
) -> TrainingResult:
    r"""Kelley's cutting planes over ``master``, from ``theta`` (of objective ``objective``).

    ``master.solve()`` solves the master program over its cuts and returns ``(theta, u,
    bound)``: its minimiser, the per-row (sample or example) value ``u`` it assumes and a
    certified lower bound on ``J*`` (``-inf`` when none); ``master.evaluate(theta)`` returns
    the exact ``J(theta)`` and the per-row values, and keeps the adversaries found, which
    ``master.add(rows)`` turns into cuts.  A row is violated when its value exceeds ``u`` by
    more than ``1e-12`` relative.  Stops when ``gap = min J - max bound <= tol * max(1, |min
    J|)`` (message ``'certified'``), when no cut is violated (``'stalled: ...'``: the master
    is as tight as its solver's tolerance) or after ``max_rounds`` (``'max_rounds=... reached:
    ...'``, ``limit_reached=True``); the last two warn (``ConvergenceWarning``, attributed
    ``stacklevel`` frames up from this function's caller) with the certified gap reached.
    ``progress`` (a :class:`advgame.solvers._progress.Phase`, optional) is told every round.

    Returns
    -------
    TrainingResult
        ``theta`` (the smallest ``J`` met), ``objective``, ``n_iter`` (rounds), ``message``
        and the certified ``gap``.
    """
    _check_rounds(max_rounds)
    phase = quiet(progress)
    best_value, best_theta, lower, gap = objective, theta, -np.inf, np.inf
    for round_ in range(1, max_rounds + 1):
        theta, u, bound = master.solve()
        lower = max(lower, bound)
        current, values = master.evaluate(theta)
        if current < best_value:
            best_value, best_theta = current, theta
        gap = max(best_value - lower, 0.0)
        violated = np.flatnonzero(values > u + 1e-12 * np.maximum(1.0, np.abs(values)))
        phase.step(round_, gap, J=current, cuts=master.n_cuts, violated=violated.size)
        if gap <= tol * max(1.0, abs(best_value)):
            return TrainingResult(best_theta, best_value, round_, "certified", gap)
        if violated.size == 0:
            break  # nothing left to add: the master is as tight as its solver's tolerance
        master.add(violated)
    limit_reached = violated.size > 0
    state = f"gap {gap:.2e} above tol={tol:g} * max(1, |J|) after {round_} rounds"
    if limit_reached:
        message = f"max_rounds={max_rounds} reached: {state}"
    else:
        message = f"stalled: no violated cut left, {state}"
    warnings.warn(
        f"cutting-plane certification not reached ({message}); objective {best_value:.10g}.",
        ConvergenceWarning,
        stacklevel=stacklevel + 1,
    )
    return TrainingResult(best_theta, best_value, round_, message, gap, limit_reached)


class _LearningMaster:
    """The master of :func:`refine_cutting_plane`: :func:`advgame.compile.compile_cuts` over the
    labels ``e_{y_i}`` and the adversaries ``q*`` met, one cut set per sample, growing by
    :func:`advgame.compile.add_cuts` each round; an LP master stays in one HiGHS model that
    restarts from its previous basis (:class:`advgame.compile.highs.RowGeneration`).  Its bound
    is the master's optimum when its solver reports it 'optimal'."""

    def __init__(self, objective, theta, backend):
        self.objective = objective
        o, k = objective, objective.game.loss.matrix.shape[1]
        self.L, self.D = o.game.loss.matrix, o.operator.matrix()
        truth = np.eye(k)[o.y]
        _, Q = o.game.value_and_adversary(o.operator.forward(theta), o.method)
        new = np.flatnonzero(np.any(Q != truth, axis=1))  # q* = e_y adds nothing to the e_y cut
        rows = np.concatenate([np.arange(o.y.size), new])
        self.program = compile_cuts(
            self.L, o.fmap, o.uncertainty, self.D, o.y, o.weights, rows, np.vstack([truth, Q[new]])
        )
        self.n_cuts = rows.size
        self.solver = backend or ("highs" if self.program.kind == "LP" else "cvxpy")
        self._highs = None  # the LP master's HiGHS model, made at the first solve

    def solve(self):
        master = self.program
        if self.solver == "highs" and master.kind == "LP":
            self._highs = self._highs or RowGeneration(master)
            solution = self._highs.solve()
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # inaccurate masters are handled by their status
                solution = master.solve(self.solver)
        # only exact masters certify a lower bound
        bound = solution.objective if solution.status.lower() == "optimal" else -np.inf
        theta = solution.x[master.variables["theta"]]
        return theta, solution.x[master.variables["u"]], bound

    def evaluate(self, theta):
        o = self.objective
        values, self.adversaries = o.game.value_and_adversary(o.operator.forward(theta), o.method)
        return o(theta)[0], values

    def add(self, rows):
        add_cuts(self.program, self.L, self.D, rows, self.adversaries[rows], f"cuts {self.n_cuts}")
        self.n_cuts += rows.size


def refine_cutting_plane(
    objective: Any,
    theta: np.ndarray,
    tol: float = 1e-6,
    max_rounds: int = 30,
    backend: str | None = None,
    progress: Any = None,
) -> TrainingResult:
    r"""Certify (and finish) a solution by constraint generation on the adversaries.

    Each round solves the master program :func:`advgame.compile.compile_cuts` over the cuts
    collected so far: ``q = e_{y_i}`` (which keeps it bounded) and every ``q*`` returned by the
    game at the iterates.  The master optimum ``lower`` satisfies ``lower <= J*``, and
    ``J(theta)`` at the best iterate is ``>= J*``, so ``gap = J(theta) - lower`` bounds the
    suboptimality.  A master that its solver reports as only approximately optimal does not
    lower the bound.  Stops when ``gap <= tol * max(1, |J|)`` (message ``'certified'``), when no
    cut is violated (``'stalled: ...'``: the master is as tight as its solver's tolerance) or
    after ``max_rounds`` (``'max_rounds=... reached: ...'``, ``limit_reached=True``); the last two
    warn with the gap reached (:func:`cutting_planes`).

    Parameters
    ----------
    objective : SurrogateObjective
    theta : ndarray
        Starting point (e.g. from :func:`advgame.solvers.fit_lbfgs`); its ``q*`` are the first
        cuts.
    backend : {'highs', 'cvxpy'} or None
        Master solver; None picks HiGHS for LP masters and cvxpy otherwise.
    progress : Phase, optional
        Told every round (:class:`advgame.solvers._progress.Phase`).
    """
    _check_rounds(max_rounds)
    master = _LearningMaster(objective, theta, backend)
    return cutting_planes(
        master, theta, objective(theta)[0], tol, max_rounds, stacklevel=2, progress=progress
    )
