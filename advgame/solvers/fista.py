r"""Farnia and Tse's (2016) minimax models: their objective, accelerated proximal gradient (FISTA)
and the smoothed 0-1 model.

Theorem 3 turns the maximum conditional entropy problem into a regularised generalised linear
model (Eq. 21),

.. math::  P(A) = \sum_i w_i \big[F(A x_i) - \theta(y_i)^\top A x_i\big]
           + \sum_{r} \epsilon_r \|A_r\|_*,

with ``F`` the conjugate of the loss's generalised entropy and the penalty of the moment balls
(:class:`advgame.uncertainty.MomentBalls`); :class:`MinimaxObjective` evaluates it and the weak
duality bound of its dual.  :func:`fit_proximal` minimises it for smooth losses (L-BFGS when the
penalty is smooth too, else :func:`fista` certified by the duality gap), and
:func:`fit_smoothed_zero_one` for the non-smooth 0-1 loss (the minimax SVM): FISTA on the
Nesterov smoothing ``F_mu`` (:func:`advgame.closed_forms.zero_one_smoothed`) in the stages of the
package's one smoothing continuation, :func:`advgame.solvers.smoothing.continuation`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import closed_forms
from ._progress import Progress, quiet
from .first_order import fit_lbfgs
from .smoothing import NEXT_STAGE, continuation

__all__ = ["MinimaxObjective", "fista", "fit_proximal", "fit_smoothed_zero_one"]

#: :func:`fit_smoothed_zero_one` stops smoothing below this ``mu`` (``F_mu`` is then within
#: 5e-13 of ``F``).
SMOOTHING_FLOOR = 1e-12
#: :func:`fista` calls its monitor (the duality gap checks) every this many iterations.
MONITOR_EVERY = 20


class MinimaxObjective:
    r"""``P(A)`` of Eq. 21 (Farnia and Tse 2016), its (sub)gradient and the dual bound.

    Parameters
    ----------
    game : Game
        The per-sample game of the loss: ``F`` (``value_and_adversary``), ``∇F``
        (``adversary``) and the entropy ``H``.
    X1 : ndarray of shape (n, p)
        The design, ``[x; 1]`` with an intercept.
    Theta : ndarray of shape (n, K)
        The encodings ``theta(y_i)`` (one-hot, or the targets for regression).
    weights : ndarray of shape (n,)
        Normalised sample weights ``w``.
    balls : MomentBalls
        Bound to ``A``'s shape: ``penalty``, ``subgradient``, ``prox``, ``dual_bound``.
    n_features : int
        The columns of ``A`` that the balls penalise (the intercept column is free).
    n_rows : int
        The rows of ``A``: ``K - 1`` for classification (the last class pinned at 0), 1 for
        regression.
    potentials : callable
        ``Z = X1 A^T -> F`` (the classifier appends the pinned class's zero).
    match_mean : callable or None
        ``(Q, Theta, w) -> Q'`` mixing conditionals so the intercept moments match (None
        without an intercept; it may return None when no mixture exists).
    labels_in_set : bool
        Whether the labels' own conditionals lie in the moment set (mixing with them is then
        allowed in the bound).
    """

    def __init__(
        self,
        game: Any,
        X1: np.ndarray,
        Theta: np.ndarray,
        weights: np.ndarray,
        balls: Any,
        n_features: int,
        n_rows: int,
        potentials: Any,
        match_mean: Any,
        labels_in_set: bool,
    ) -> None:
        self.game, self.X1, self.Theta, self.weights, self.balls = game, X1, Theta, weights, balls
        self.n_features, self.n_rows, self.potentials = n_features, n_rows, potentials
        self.match_mean, self.labels_in_set = match_mean, labels_in_set

    def smooth_part(self, A: np.ndarray, mu: float | None = None) -> tuple[float, Any, Any]:
        """``sum_i w_i [F(f_i) - theta(y_i)^T f_i]``, its (sub)gradient in ``A`` and the
        conditionals ``Q``; with ``mu`` the 0-1 ``F`` is replaced by its smoothing ``F_mu``
        (:func:`advgame.closed_forms.zero_one_smoothed`)."""
        F = self.potentials(self.X1 @ A.T)
        if mu is None:
            value, Q = self.game.value_and_adversary(F)
        else:
            value, Q = closed_forms.zero_one_smoothed(F, mu)
        w = self.weights
        loss = w @ (value - np.einsum("ij,ij->i", self.Theta, F))
        G = (w[:, None] * (Q - self.Theta))[:, : A.shape[0]]
        return float(loss), G.T @ self.X1, Q

    def penalty(self, A: np.ndarray) -> float:
        return self.balls.penalty(A[:, : self.n_features])

    def __call__(self, A: np.ndarray) -> tuple[float, np.ndarray]:
        """``P(A)`` and a subgradient."""
        loss, grad, _ = self.smooth_part(A)
        d = self.n_features
        grad[:, :d] += self.balls.subgradient(A[:, :d])
        return loss + self.penalty(A), grad

    def adversary(self, A: np.ndarray) -> np.ndarray:
        """``∇F`` at the potentials of ``A`` (the worst-case conditionals, Eq. 22)."""
        return self.game.adversary(self.potentials(self.X1 @ A.T))

    def lower_bound(self, Q: np.ndarray, entropy: Any = None) -> float:
        r"""A lower bound on the optimum of Eq. 21 from conditionals ``Q`` (weak duality, Thm 3).

        The dual of Eq. 21 maximises the average entropy of ``q_i`` over the moment set:
        intercept moments matched exactly, feature moments within the balls.  ``Q`` is first
        mixed with one constant conditional so the intercept moments match (``match_mean``),
        then :meth:`MomentBalls.dual_bound` mixes it with the labels to enter the balls.
        ``entropy`` defaults to the game's ``H`` (any concave ``H`` gives the bound of its model).
        """
        Theta, w = self.Theta, self.weights
        entropy = self.game.entropy if entropy is None else entropy
        Q = Q if self.match_mean is None else self.match_mean(Q, Theta, w)
        if Q is None:
            return -np.inf
        d = self.n_features
        G = ((w[:, None] * (Theta - Q))[:, : self.n_rows]).T @ self.X1[:, :d]
        average = w @ entropy(Q)
        if not self.labels_in_set:  # no mixing with the labels: r = 1 only
            return average - self.balls.conjugate(G)
        base = w @ entropy(Theta)
        return base + self.balls.dual_bound(G, average - base)


def fista(
    objective: MinimaxObjective,
    A: np.ndarray,
    budget: int,
    tol: float,
    mu: float | None = None,
    monitor: Any = None,
    small_steps: bool = True,
    progress: Any = None,
) -> tuple[np.ndarray, int, str]:
    """Accelerated proximal gradient with adaptive restart (Beck and Teboulle 2009, FISTA;
    O'Donoghue and Candès 2015, the restart) on :class:`MinimaxObjective`.

    Step ``1 / L``, ``L = Lip(∇F) * lambda_max(X1^T diag(w) X1)`` with ``Lip(∇F) = 1/2`` for
    Brier, log and quadratic (Eq. 28, 33, 35 of Farnia and Tse 2016 are 1/2-Lipschitz in the
    potentials) and ``1 / mu`` for the smoothed 0-1 entropy; the balls' penalty enters by its
    closed-form prox.  Stops when the gradient mapping ``(A - A+) / step`` is below ``tol
    max(1, |A|)`` (entrywise; unless ``small_steps`` is False), or when ``monitor(A,
    average)`` (called every :data:`MONITOR_EVERY` iterations with the running average of the
    conditionals, weights proportional to the iteration) returns ``(message, gap)`` with a
    message (the certified duality ``gap`` it found is told to ``progress``, a
    :class:`advgame.solvers._progress.Phase`, optional).

    Returns
    -------
    (A, iterations, message)
    """
    d = objective.n_features
    w, X1 = objective.weights, objective.X1
    S = np.sqrt(w)[:, None] * X1
    gram = S @ S.T if S.shape[0] <= S.shape[1] else S.T @ S
    lipschitz = 0.5 if mu is None else 1.0 / mu
    step = 1.0 / max(lipschitz * np.linalg.eigvalsh(gram)[-1], 1e-12)
    Y, momentum, average = A.copy(), 1.0, 0.0
    phase = quiet(progress)
    for iteration in range(1, budget + 1):
        grad, Q = objective.smooth_part(Y, mu)[1:]
        average += (2.0 / (iteration + 1)) * (Q - average)  # weights proportional to k
        new = Y - step * grad
        new[:, :d] = objective.balls.prox(new[:, :d], step)
        change = new - A
        if np.sum((Y - new) * change) > 0:  # objective would go up: restart the momentum
            momentum = 1.0
        following = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * momentum**2))
        Y = new + ((momentum - 1.0) / following) * change
        momentum, A = following, new
        small = np.max(np.abs(change)) / step <= tol * max(1.0, np.max(np.abs(A)))
        if small_steps and small:
            return A, iteration, "FISTA: converged"
        if monitor is not None and iteration % MONITOR_EVERY == 0:
            message, gap = monitor(A, average)
            phase.step(iteration, gap, **({"mu": mu} if mu else {}))
            if message:
                return A, iteration, message
    return A, budget, "FISTA: max_iter reached"


def fit_proximal(
    objective: MinimaxObjective, A0: np.ndarray, max_iter: int, tol: float, progress: Any = None
) -> tuple[np.ndarray, int, str]:
    """Smooth losses: L-BFGS when the penalty is smooth too, else :func:`fista` stopped by the
    certified duality gap (weak duality at ``q = ∇F``, unique for smooth losses).

    ``progress`` (a :class:`advgame.solvers._progress.Progress`, or a line callback) gets the
    run as a phase.  Returns ``(A, iterations, message)``; the message starts with
    ``'L-BFGS: '`` or ``'FISTA: '``.
    """
    progress = Progress.of(progress)
    if objective.balls.smooth:
        shape = A0.shape

        def flat(a):
            value, grad = objective(a.reshape(shape))
            return value, grad.ravel()

        phase = progress.phase("L-BFGS", "smooth loss and penalty", "iteration", max_iter)
        # fit_lbfgs attributes its warnings to the caller of this function's caller
        result = fit_lbfgs(flat, A0.ravel(), max_iter, tol, progress=phase)
        phase.finish(result)
        return result.theta.reshape(shape), result.n_iter, "L-BFGS: " + result.message
    gaps = []

    def certified(A, average):
        value = objective(A)[0]
        gap = value - objective.lower_bound(objective.adversary(A))
        gaps.append(gap)
        if gap <= tol * max(1.0, abs(value)):
            return f"FISTA: converged (duality gap {gap:.2g})", gap
        return None, gap

    phase = progress.phase("FISTA", "a penalty with a closed-form prox", "iteration", max_iter)
    # only the certificate ends the run: small steps are not optimality on badly scaled X
    A, n_iter, message = fista(
        objective, A0, max_iter, tol, monitor=certified, small_steps=False, progress=phase
    )
    phase.end(message, n_iter, min(gaps, default=None), limit_reached=n_iter >= max_iter)
    return A, n_iter, message


def fit_smoothed_zero_one(
    objective: MinimaxObjective, A: np.ndarray, max_iter: int, tol: float, progress: Any = None
) -> tuple[np.ndarray, int, str, float]:
    r"""The 0-1 model (minimax SVM) by FISTA on ``F_mu`` for ``mu = 1, 1/10, ...``.

    ``P(A) - P* <= P_mu(A) - P_mu* + mu / 2`` since ``F_mu <= F <= F_mu + mu/2``.  Every
    :data:`MONITOR_EVERY` iterations two dual bounds (:meth:`MinimaxObjective.lower_bound`) at
    ``q = ∇F_mu`` are computed: one of the smoothed model (entropy ``H - mu ||q||^2 / 2``; once
    its gap is below ``mu / 4`` the stage is done and ``mu`` shrinks) and one of the exact
    model (the best so far certifies the result: stop when ``P(A) - bound <= tol max(1,
    |P|)``).  The stages are those of :func:`advgame.solvers.smoothing.continuation`, down to
    :data:`SMOOTHING_FLOOR`; ``max_iter`` counts FISTA iterations over all of them.

    ``progress`` (a :class:`advgame.solvers._progress.Progress`, or a line callback) gets the
    run as a phase.

    Returns
    -------
    (A, iterations, message, bound)
        ``message`` starts with ``'FISTA: converged'`` exactly when the best ``bound`` met
        certifies ``tol``.
    """
    used, best = 0, -np.inf
    phase = Progress.of(progress).phase("smoothed FISTA", "the 0-1 loss", "iteration", max_iter)

    def stage(mu):
        nonlocal A, used

        def monitor(A, average):
            nonlocal best
            smoothed_value, _, Q = objective.smooth_part(A, mu)
            value = objective(A)[0]
            for R in (Q, average):
                best = max(best, objective.lower_bound(R))
            gap = value - best
            if gap <= tol * max(1.0, abs(value)):
                return f"FISTA: converged (smoothing mu={mu:g}, duality gap {gap:.2g})", gap

            def entropy(R):
                return objective.game.entropy(R) - 0.5 * mu * np.einsum("ij,ij->i", R, R)

            smoothed_value += objective.penalty(A)
            bound = objective.lower_bound(Q, entropy)
            return ("next mu" if smoothed_value - bound <= mu / 4 else None), gap

        A, n_iter, message = fista(  # a stage ends on its smoothed gap, not on steps
            objective, A, max_iter - used, tol, mu, monitor, small_steps=False, progress=phase
        )
        used += n_iter
        if message.startswith("FISTA: converged ("):
            return message
        return "max_iter" if used >= max_iter else NEXT_STAGE

    outcome = continuation(stage, 1.0, lambda mu: mu / 10.0, SMOOTHING_FLOOR)[0]
    value = objective(A)[0]
    if isinstance(outcome, str) and outcome.startswith("FISTA: converged ("):
        message = outcome
    elif value - best <= tol * max(1.0, abs(value)):  # certified between two monitors
        message = f"FISTA: converged (duality gap {value - best:.2g})"
    else:
        stop = "max_iter reached" if used >= max_iter else f"smoothing mu < {SMOOTHING_FLOOR:g}"
        message = f"FISTA: {stop} (duality gap {value - best:.2g})"
    phase.end(message, used, value - best, limit_reached=used >= max_iter)
    return A, used, message, best
