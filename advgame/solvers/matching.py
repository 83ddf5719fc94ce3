r"""Training of the Birkhoff (permutation) game's learner (Fathony et al. 2018c).

A linear model scores every item at every position, :math:`\Theta_i = \mathrm{reshape}(W^\top x_i
+ b, (k, k))`, and is trained on (Fathony et al. 2018a, Eq. 2-3, with the permutation game of
Fathony et al. 2018c)

.. math::  \min_{W, b}\ \sum_i w_i \big[\mathrm{value}(\Theta_i) - \langle \Theta_i, P_i\rangle\big]
           + \frac{\alpha}{2} \|W\|_F^2,

either exactly, by solving the compiled program (:func:`solve_matching_program`, the game
replaced by its LP dual, :func:`advgame.compile.compile_matching`), or by averaged mini-batch
AdaGrad with the adversary's ``Q*`` as the subgradient (:func:`fit_matching_subgradient`).
:class:`advgame.AdversarialMatching` declares the game and calls these.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..compile.cvx import CLARABEL_OPTIONS
from ..exceptions import NotApplicableError, SolverError
from ..permutation import PermutationGame, ranks_to_matrices
from .first_order import fit_adagrad
from .projection import FittedScores

__all__ = [
    "MatchingObjective",
    "fit_matching_subgradient",
    "matching_backend",
    "solve_matching_program",
]


class MatchingObjective:
    r"""The training objective of :class:`advgame.AdversarialMatching` and a subgradient.

    ``theta = [vec W (row-major, d k^2), b (k^2, if fit_intercept)]``.  The subgradient of
    ``value`` at ``Θ_i`` is the adversary's ``Q*_i`` (Fathony et al. 2018a, Theorem 19), so

    .. math::  \partial_W J \ni X^\top G + \alpha W,\quad \partial_b J \ni 1^\top G,\qquad
               G_i = w_i\,\mathrm{vec}(Q^*_i - P_i),

    with all samples of a batch solved by one :meth:`PermutationGame.value_and_adversary` call.
    Has the interface :func:`advgame.solvers.fit_adagrad` expects (``__call__``, ``batch`` and
    ``y``, whose size is the number of samples).

    Parameters
    ----------
    game : PermutationGame
    X : ndarray of shape (n, d)
    R : ndarray of int, shape (n, k)
    weights : ndarray of shape (n,), summing to one
    alpha : float >= 0
    fit_intercept : bool
    """

    def __init__(
        self,
        game: PermutationGame,
        X: np.ndarray,
        R: np.ndarray,
        weights: np.ndarray,
        alpha: float,
        fit_intercept: bool,
    ) -> None:
        self.game, self.X, self.weights = game, X, weights
        self.alpha, self.fit_intercept = alpha, fit_intercept
        self.truth = ranks_to_matrices(R).reshape(X.shape[0], -1)
        self.y = np.arange(X.shape[0])  # sample indices: fit_adagrad reads the count from y

    def split(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(W, b)`` from the parameter vector (``b`` is zero without an intercept)."""
        d, kk = self.X.shape[1], self.truth.shape[1]
        W = theta[: d * kk].reshape(d, kk)
        return W, (theta[d * kk :] if self.fit_intercept else np.zeros(kk))

    def __call__(self, theta):
        return self.batch(theta, self.y)

    def batch(self, theta: np.ndarray, rows: np.ndarray) -> tuple[float, np.ndarray]:
        """Objective and subgradient on ``rows`` only, loss weights rescaled to sum to one."""
        W, b = self.split(theta)
        X, P, k = self.X[rows], self.truth[rows], self.game.k
        w = self.weights[rows] / self.weights[rows].sum()
        T = X @ W + b
        value, Q = self.game.value_and_adversary(T.reshape(-1, k, k))
        G = w[:, None] * (Q.reshape(T.shape) - P)
        objective = w @ (value - np.sum(T * P, axis=1)) + 0.5 * self.alpha * np.sum(W * W)
        parts = [(X.T @ G + self.alpha * W).ravel()]
        if self.fit_intercept:
            parts.append(G.sum(axis=0))
        return float(objective), np.concatenate(parts)

    def adversary(self, W: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The adversary's best responses ``Q*_i`` (n, k, k) to the scores of ``(W, b)``."""
        k = self.game.k
        return self.game.value_and_adversary((self.X @ W + b).reshape(-1, k, k))[1]

    def dual_bound(self, Q: np.ndarray) -> float:
        r"""A certified lower bound on the minimum of the objective from adversary marginals
        ``Q`` (n, k, k): the Lagrangian dual function of the training problem,

        .. math::  D(Q) = \sum_i w_i \big(k - \max_\pi \langle Q_i, P_\pi\rangle\big)
                   - \frac{1}{2\alpha} \|X^\top G\|_F^2,
                   \qquad G_i = w_i\,\mathrm{vec}(Q_i - P_i),

        the objective's value at any ``(W, b)`` once the game's value is bounded below by what
        ``Q_i`` guarantees (weak duality), minimised in closed form over ``W``.  ``Q`` is made
        exactly feasible first: clipped at zero and scaled to doubly stochastic (Sinkhorn), and,
        with an intercept (whose minimisation asks ``sum_i G_i = 0``), mixed with one common
        matrix, ``(1 - t) Q_i + t Z``, with the smallest ``t`` that matches the weighted mean of
        the ``P_i``.  ``-inf`` for ``alpha = 0``, where the bound asks ``X^T G = 0`` exactly.
        """
        if self.alpha <= 0:
            return -np.inf
        k, w = self.game.k, self.weights
        P = self.truth.reshape(-1, k, k)
        Q = np.clip(np.asarray(Q, dtype=np.float64), 0.0, None) + 1e-300
        for _ in range(_SINKHORN_STEPS):
            Q = Q / Q.sum(axis=2, keepdims=True)
            Q = Q / Q.sum(axis=1, keepdims=True)
        if self.fit_intercept:
            mean, target = np.einsum("i,ijr->jr", w, Q), np.einsum("i,ijr->jr", w, P)
            t = max(0.0, 1.0 - float(np.min(target / mean)))
            if t > 0:
                Q = (1 - t) * Q + (target - (1 - t) * mean)
        G = (w[:, None, None] * (Q - P)).reshape(len(w), -1)
        guaranteed = self.game.adversary_value(np.zeros_like(Q), Q)
        return float(w @ guaranteed - np.sum((self.X.T @ G) ** 2) / (2 * self.alpha))


#: Sinkhorn scalings that make a solver's (nearly) doubly stochastic duals exactly so.
_SINKHORN_STEPS = 20


def matching_backend(backend: str, alpha: float) -> str:
    """The solver of the compiled program: ``'auto'`` is cvxpy (Clarabel), for the QP and the LP
    alike; HiGHS only for the LP of ``alpha = 0``.

    Raises
    ------
    advgame.NotApplicableError
        For ``'highs'`` with ``alpha > 0``: HiGHS's active-set QP solver stalls on this program's
        degenerate QP.
    """
    backend = "cvxpy" if backend == "auto" else backend
    if backend == "highs" and alpha > 0:
        raise NotApplicableError(
            "backend='highs' solves the LP of alpha=0 only: HiGHS's active-set QP solver "
            "stalls on this program's degenerate QP (alpha > 0). Use backend='cvxpy' or 'auto'."
        )
    return backend


def solve_matching_program(
    program: Any, backend: str, tol: float, n_labels: int, fit_intercept: bool, weights: np.ndarray
) -> tuple[FittedScores, np.ndarray | None]:
    """Solve the compiled matching program (a :class:`advgame.compile.MatchingProgram`'s
    ``program``, for ``k = n_labels`` and normalised sample ``weights``) with ``backend``
    (``'highs'`` or ``'cvxpy'``, see :func:`matching_backend`) at tolerance ``tol``; ``coef`` is
    ``W`` of shape ``(d, k^2)``, ``n_iter`` is 1.  Also returns the adversary's marginals
    ``Q_i`` (n, k, k), the multipliers of the ``game`` rows divided by ``w_i`` (None when the
    backend gives no multipliers), for :meth:`MatchingObjective.dual_bound`.

    Raises
    ------
    advgame.SolverError
        When the solver does not report an optimal solution (an inaccurate one included).
    """
    if backend == "highs":
        solution = program.solve("highs", tolerance=tol)
    else:
        solution = program.solve("cvxpy", **dict.fromkeys(CLARABEL_OPTIONS, tol))
    if solution.status.lower() != "optimal":
        raise SolverError(
            f"{backend} returned status '{solution.status}' for {program.name}, not an "
            "optimal solution; try a larger tol."
        )
    kk = n_labels**2
    W = solution.x[program.variables["W"]].reshape(-1, kk)
    b = solution.x[program.variables["b"]] if fit_intercept else np.zeros(kk)
    adversary = None
    if solution.row_duals is not None:
        game_duals = program.duals(solution)["game"].reshape(-1, n_labels, n_labels)
        positive = weights[:, None, None] > 0
        adversary = np.divide(
            game_duals, weights[:, None, None], out=np.zeros_like(game_duals), where=positive
        )
    return FittedScores(W, b, solution.objective, 1), adversary


def fit_matching_subgradient(objective: MatchingObjective, **adagrad: Any) -> FittedScores:
    """Averaged mini-batch AdaGrad (:func:`advgame.solvers.fit_adagrad`, keyword arguments
    ``adagrad``) on ``objective`` from zero; ``n_iter`` counts AdaGrad steps."""
    d, kk = objective.X.shape[1], objective.truth.shape[1]
    theta0 = np.zeros(d * kk + (kk if objective.fit_intercept else 0))
    result = fit_adagrad(objective, theta0, **adagrad)
    return FittedScores(*objective.split(result.theta), result.objective, result.n_iter)
