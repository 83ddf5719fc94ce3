r"""First-order training on the surrogate objective (seed 000 §6.1, Theorem 19).

.. math::  J(\theta) = \sum_i w_i \big(\mathrm{value}(f_i(\theta)) - f_{i, y_i}(\theta)\big)
                       + R(\theta),
           \qquad \partial J \ni \sum_i w_i \big(\Phi_i^\top q_i^* - \phi(x_i, y_i)\big)
                       + \partial R(\theta).

``value`` and ``q*`` come from :meth:`advgame.Game.value_and_adversary` for all samples at once
(closed forms, vertex tables or the persistent-HiGHS oracle); the feature operator maps ``q*``
back with one matrix product.  The objective is piecewise linear plus ``R``, so it is not smooth:
L-BFGS stops when the line search can no longer make progress, and the result is reported as
approximate (its objective is exact; its distance to the optimum is not certified).
"""

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

__all__ = ["SurrogateObjective", "TrainingResult", "fit_lbfgs"]


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
    theta: np.ndarray
    objective: float
    n_iter: int
    message: str


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
