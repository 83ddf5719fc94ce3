r"""First-order training on the surrogate objective (seed 000 §6.1, Theorem 19).

.. math::  J(\theta) = \sum_i w_i \big(\mathrm{value}(f_i(\theta)) - f_{i, y_i}(\theta)\big)
                       + R(\theta),
           \qquad \partial J \ni \sum_i w_i \big(\Phi_i^\top q_i^* - \phi(x_i, y_i)\big)
                       + \partial R(\theta).

``value`` and ``q*`` come from :meth:`advgame.Game.value_and_adversary` for all samples at once
(closed forms, vertex tables or the persistent-HiGHS oracle); the feature operator maps ``q*``
back with one matrix product.  The objective is piecewise linear plus ``R``, so it is not smooth:
L-BFGS stops when the line search can no longer make progress, and the result is reported as
approximate by itself.  :func:`refine_cutting_plane` then closes the gap exactly: it
re-solves a small program over the adversaries ``q*`` met so far (cuts) and adds the new ``q*``
until the master's lower bound meets the true objective, which *certifies* the result.
"""

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from .compile import compile_cuts

__all__ = ["SurrogateObjective", "TrainingResult", "fit_lbfgs", "refine_cutting_plane"]


class SurrogateObjective:
    """``J(theta)`` and a subgradient, vectorised over all samples.

    Parameters
    ----------
    game : Game
    operator : bound feature operator (``fmap.bind(X)``)
    y : ndarray of label indices
    weights : ndarray, normalised sample weights (sum to one)
    uncertainty : UncertaintySet
    fmap : FeatureMap
    method : str
        Game method (``'auto'`` picks the fast path).
    """

    def __init__(self, game, operator, y, weights, uncertainty, fmap, method="auto"):
        self.game, self.operator, self.y, self.weights = game, operator, y, weights
        self.uncertainty, self.fmap, self.method = uncertainty, fmap, method
        self._rows = np.arange(y.size)

    def __call__(self, theta):
        F = self.operator.forward(theta)
        value, Q = self.game.value_and_adversary(F, self.method)
        loss = self.weights @ (value - F[self._rows, self.y])
        G = self.weights[:, None] * Q
        G[self._rows, self.y] -= self.weights
        objective = loss + self.uncertainty.penalty(theta, self.fmap)
        return objective, self.operator.adjoint(G) + self.uncertainty.subgradient(theta, self.fmap)


@dataclass
class TrainingResult:
    """Parameters, their exact objective, and the certified gap (``inf`` when uncertified)."""

    theta: np.ndarray
    objective: float
    n_iter: int
    message: str
    gap: float = np.inf


def fit_lbfgs(objective, theta0, max_iter=1000, tol=1e-6, memory=20):
    """Minimise ``objective`` (returning value and subgradient) with scipy's L-BFGS-B."""
    result = minimize(
        objective,
        theta0,
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": max_iter, "maxcor": memory, "ftol": tol * 1e-3, "gtol": tol},
    )
    return TrainingResult(result.x, float(result.fun), int(result.nit), str(result.message))


def refine_cutting_plane(objective, theta, tol=1e-6, max_rounds=30, backend=None):
    r"""Certify (and finish) a solution by constraint generation on the adversaries.

    Each round solves the master program :func:`advgame.compile.compile_cuts` over the cuts
    collected so far: ``q = e_{y_i}`` (which keeps it bounded) and every ``q*`` returned by the
    game at the iterates.  The master optimum ``lower`` satisfies ``lower <= J*``, and
    ``J(theta)`` at the best iterate is ``>= J*``, so ``gap = J(theta) - lower`` bounds the
    suboptimality.  A master that its solver reports as only approximately optimal does not
    lower the bound.  Stops when ``gap <= tol * max(1, |J|)`` or after ``max_rounds``.

    Parameters
    ----------
    objective : SurrogateObjective
    theta : ndarray
        Starting point (e.g. from :func:`fit_lbfgs`); its ``q*`` are the first cuts.
    backend : {'highs', 'cvxpy'} or None
        Master solver; None picks HiGHS for LP masters and cvxpy otherwise.
    """
    game, operator, y, w = objective.game, objective.operator, objective.y, objective.weights
    L = game.loss.matrix
    D = operator.matrix()
    truth = np.eye(L.shape[1])[y]
    best_value = objective(theta)[0]
    best_theta, lower, gap = theta, -np.inf, np.inf
    _, Q = game.value_and_adversary(operator.forward(theta), objective.method)
    new = np.flatnonzero(np.any(Q != truth, axis=1))  # q* = e_y adds nothing to the e_y cut
    cut_rows = np.concatenate([np.arange(y.size), new])
    cut_Q = np.vstack([truth, Q[new]])
    for round_ in range(1, max_rounds + 1):
        master = compile_cuts(L, objective.fmap, objective.uncertainty, D, y, w, cut_rows, cut_Q)
        solver = backend or ("highs" if master.kind == "LP" else "cvxpy")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # inaccurate masters are handled by their status
            solution = master.solve(solver)
        if solution.status.lower() == "optimal":  # only exact masters certify a lower bound
            lower = max(lower, solution.objective)
        theta = solution.x[master.variables["theta"]]
        F = operator.forward(theta)
        value, Q = game.value_and_adversary(F, objective.method)
        current = objective(theta)[0]
        if current < best_value:
            best_value, best_theta = current, theta
        gap = max(best_value - lower, 0.0)
        if gap <= tol * max(1.0, abs(best_value)):
            return TrainingResult(best_theta, best_value, round_, "certified", gap)
        u = solution.x[master.variables["u"]]
        violated = np.flatnonzero(value > u + 1e-12 * np.maximum(1.0, np.abs(value)))
        if violated.size == 0:
            break  # nothing left to add: the master is as tight as its solver's tolerance
        cut_rows = np.concatenate([cut_rows, violated])
        cut_Q = np.vstack([cut_Q, Q[violated]])
    return TrainingResult(best_theta, best_value, round_, "max_rounds", gap)
