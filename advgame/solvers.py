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
from .exceptions import ConvergenceWarning

__all__ = [
    "SurrogateObjective",
    "TrainingResult",
    "fit_adagrad",
    "fit_lbfgs",
    "fit_pegasos",
    "refine_cutting_plane",
]


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

    def __call__(self, theta):
        return self._evaluate(theta, self.operator, self.y, self.weights)

    def batch(self, theta, rows):
        """Objective and subgradient on ``rows`` only, loss weights rescaled to sum to one."""
        w = self.weights[rows]
        return self._evaluate(theta, self.operator.subset(rows), self.y[rows], w / w.sum())

    def _evaluate(self, theta, operator, y, weights):
        F = operator.forward(theta)
        value, Q = self.game.value_and_adversary(F, self.method)
        rows = np.arange(y.size)
        loss = weights @ (value - F[rows, y])
        Q *= weights[:, None]  # Q is a fresh array: turn it into the loss gradient in place
        Q[rows, y] -= weights
        objective = loss + self.uncertainty.penalty(theta, self.fmap)
        return objective, operator.adjoint(Q) + self.uncertainty.subgradient(theta, self.fmap)


#: Averaged AdaGrad epochs that move L-BFGS off a kink it cannot leave (see :func:`fit_lbfgs`).
KINK_EPOCHS = 5


@dataclass
class TrainingResult:
    """Parameters, their exact objective, and the certified gap (``inf`` when uncertified).

    ``limit_reached`` is True when the method stopped at its iteration budget (``max_iter``,
    ``max_rounds``) rather than at its own stopping test; ``message`` then says so.
    """

    theta: np.ndarray
    objective: float
    n_iter: int
    message: str
    gap: float = np.inf
    limit_reached: bool = False


def fit_lbfgs(objective, theta0, max_iter=1000, tol=1e-6, memory=20, escape=None):
    """Minimise ``objective`` (returning value and subgradient) with scipy's L-BFGS-B.

    Stops when one iteration lowers the objective by less than ``tol`` relative to
    ``max(|J|, 1)`` or the projected subgradient is below ``tol``.  At a kink of the piecewise-
    linear surrogate neither says the point is optimal, hence the result is uncertified.

    Parameters
    ----------
    escape : dict or None
        For surrogates with ``batch`` (mini-batches): keyword arguments of :func:`fit_adagrad`
        (``batch_size``, ``random_state``).  If L-BFGS-B accepts no step from ``theta0``,
        :data:`KINK_EPOCHS` epochs of averaged AdaGrad move it off and L-BFGS-B restarts;
        the better of the two results is returned, with a ``ConvergenceWarning`` if neither
        moved.  ``theta0 = 0`` ties every potential: a kink where the subgradient the game
        returns need not be a descent direction (e.g. the abstain loss, where every vertex with
        ``v = alpha`` is active), so the line search fails at once ("ABNORMAL").

    Warns
    -----
    ConvergenceWarning
        When L-BFGS-B stops at ``max_iter`` (or its evaluation budget) before either test: the
        message gives the objective and the largest subgradient entry reached, and the result
        has ``limit_reached=True``.
    """
    result = _lbfgs(objective, theta0, max_iter, tol, memory)
    if escape is not None and result.n_iter == 0:
        warm = fit_adagrad(objective, theta0, KINK_EPOCHS, **escape)
        retry = _lbfgs(objective, warm.theta, max_iter, tol, memory)
        retry.n_iter += warm.n_iter
        if retry.n_iter == warm.n_iter and warm.objective >= result.objective:
            warnings.warn(
                f"L-BFGS could not leave its starting point ({result.message}) even after "
                f"{KINK_EPOCHS} subgradient epochs; use an exact solver or certification.",
                ConvergenceWarning,
                stacklevel=3,
            )
        result = retry if retry.objective <= result.objective else result
    if result.limit_reached:
        warnings.warn(
            f"L-BFGS stopped at its iteration budget before converging: {result.message}",
            ConvergenceWarning,
            stacklevel=3,
        )
    return result


def _lbfgs(objective, theta0, max_iter, tol, memory):
    result = minimize(
        objective,
        theta0,
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": max_iter, "maxcor": memory, "ftol": tol, "gtol": tol},
    )
    message = str(result.message)
    limit_reached = result.status == 1  # scipy: iteration or evaluation limit
    if limit_reached:
        message = (
            f"max_iter={max_iter} reached ({result.nit} iterations, scipy: {message}); objective "
            f"{float(result.fun):.10g}, largest subgradient entry "
            f"{float(np.max(np.abs(result.jac), initial=0.0)):.2e} (tol={tol:g})"
        )
    return TrainingResult(
        result.x, float(result.fun), int(result.nit), message, limit_reached=limit_reached
    )


def refine_cutting_plane(objective, theta, tol=1e-6, max_rounds=30, backend=None):
    r"""Certify (and finish) a solution by constraint generation on the adversaries.

    Each round solves the master program :func:`advgame.compile.compile_cuts` over the cuts
    collected so far: ``q = e_{y_i}`` (which keeps it bounded) and every ``q*`` returned by the
    game at the iterates.  The master optimum ``lower`` satisfies ``lower <= J*``, and
    ``J(theta)`` at the best iterate is ``>= J*``, so ``gap = J(theta) - lower`` bounds the
    suboptimality.  A master that its solver reports as only approximately optimal does not
    lower the bound.  Stops when ``gap <= tol * max(1, |J|)`` (message ``'certified'``), when no
    cut is violated (``'stalled: ...'``: the master is as tight as its solver's tolerance) or
    after ``max_rounds`` (``'max_rounds=... reached: ...'``, ``limit_reached=True``); the last two
    warn with the gap reached.

    Parameters
    ----------
    objective : SurrogateObjective
    theta : ndarray
        Starting point (e.g. from :func:`fit_lbfgs`); its ``q*`` are the first cuts.
    backend : {'highs', 'cvxpy'} or None
        Master solver; None picks HiGHS for LP masters and cvxpy otherwise.
    """
    if (
        isinstance(max_rounds, bool)
        or not isinstance(max_rounds, (int, np.integer))
        or max_rounds < 1
    ):
        raise ValueError(f"max_rounds must be a positive integer; got {max_rounds!r}.")
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
    limit_reached = violated.size > 0
    state = f"gap {gap:.2e} above tol={tol:g} * max(1, |J|) after {round_} rounds"
    if limit_reached:
        message = f"max_rounds={max_rounds} reached: {state}"
    else:
        message = f"stalled: no violated cut left, {state}"
    warnings.warn(
        f"cutting-plane certification not reached ({message}); objective {best_value:.10g}.",
        ConvergenceWarning,
        stacklevel=2,
    )
    return TrainingResult(best_theta, best_value, round_, message, gap, limit_reached)


def _batches(n, batch_size, rng):
    """An endless stream of index batches, each epoch a fresh permutation."""
    while True:
        order = rng.permutation(n)
        for start in range(0, n, batch_size):
            yield order[start : start + batch_size]


def fit_adagrad(
    objective, theta0, n_epochs=50, batch_size=64, step=1.0, random_state=None, tol=None
):
    r"""Averaged mini-batch AdaGrad on the surrogate (seed 000 §6.1).

    ``theta <- theta - step * g / sqrt(sum of past g^2)`` per coordinate with ``g`` the
    subgradient of the objective on a batch (loss weights rescaled to the batch), and the average
    of the iterates returned (the usual ``O(1/sqrt(T))`` guarantee for non-smooth convex
    objectives).  The returned objective is evaluated exactly on all samples.

    It runs exactly ``n_epochs`` epochs (a budget, not a convergence test: the message says so).
    With ``tol``, the objective of the averaged iterate one epoch before the end (``theta0``
    for one epoch) is evaluated too, and if the last epoch still changed it by more than
    ``tol * max(1, |J|)`` a ``ConvergenceWarning`` reports that change and the result has
    ``limit_reached=True``.
    """
    rng = np.random.default_rng(random_state)
    n = objective.y.size
    theta = theta0.copy()
    average = np.zeros_like(theta)
    squares = np.full_like(theta, 1e-12)
    batches = _batches(n, batch_size, rng)
    per_epoch = -(-n // batch_size)
    n_steps = n_epochs * per_epoch
    previous = theta0.copy()
    for t in range(1, n_steps + 1):
        g = objective.batch(theta, next(batches))[1]
        squares += g * g
        theta -= step * g / np.sqrt(squares)
        average += (theta - average) / t
        if t == n_steps - per_epoch:
            previous = average.copy()
    value = float(objective(average)[0])
    message = f"averaged AdaGrad: fixed budget of {n_epochs} epochs, no convergence test"
    limit_reached = False
    if tol is not None:
        change = value - float(objective(previous)[0])
        limit_reached = abs(change) > tol * max(1.0, abs(value))
        progress = f"the last epoch changed the objective by {change:+.2e}"
        message = f"averaged AdaGrad: {progress}"
        if limit_reached:
            message = (
                f"n_epochs={n_epochs} reached while {progress}, beyond tol={tol:g} * max(1, |J|)"
            )
            warnings.warn(
                f"AdaGrad stopped at its epoch budget before converging: {message}; objective "
                f"{value:.10g}.",
                ConvergenceWarning,
                stacklevel=2,
            )
    return TrainingResult(average, value, n_steps, message, limit_reached=limit_reached)


def fit_pegasos(game, gram, y, weights, lam, n_epochs=50, batch_size=16, random_state=None):
    r"""Kernel PEGASOS for the adversarial surrogate (seed 000 Algorithm 1, mini-batch form).

    ``theta_t = -(1 / (lam t)) sum_i sum_j alpha_ij phi(x_i, j)``: each step draws a batch ``B``,
    computes its potentials ``f = -(1/(lam (t-1))) K[B] alpha`` (zero at ``t = 1``), asks the
    game for ``q*`` and adds ``n w_i (q*_i - e_{y_i}) / |B|`` to ``alpha_i`` (``i`` in ``B``): the
    batch-average subgradient with the ``1 / (lam t)`` rate of Algorithm 1.  The loop
    runs over steps; each step is vectorised over its batch.

    Returns the kernel expansion ``A = -alpha / (lam T)`` (potentials ``K(X, X_fit) A``) as
    ``theta = A.ravel()``.
    """
    rng = np.random.default_rng(random_state)
    n, k = y.size, game.n_labels
    alpha = np.zeros((n, k))
    batches = _batches(n, batch_size, rng)
    n_steps = n_epochs * -(-n // batch_size)
    scale = weights * n  # relative sample weights (1 when unweighted)
    for t in range(1, n_steps + 1):
        batch = next(batches)
        F = gram[batch] @ alpha * (-1.0 / (lam * (t - 1))) if t > 1 else np.zeros((batch.size, k))
        _, Q = game.value_and_adversary(F)
        Q[np.arange(batch.size), y[batch]] -= 1.0
        alpha[batch] += scale[batch, None] * Q / batch.size  # indices are unique in a batch
    A = -alpha / (lam * n_steps)
    return TrainingResult(A.ravel(), np.nan, n_steps, "PEGASOS")
