r"""First-order training on the surrogate objective (Fathony et al. 2018a, §6.1, Theorem 19).

.. math::  J(\theta) = \sum_i w_i \big(\mathrm{value}(f_i(\theta)) - f_{i, y_i}(\theta)\big)
                       + R(\theta),
           \qquad \partial J \ni \sum_i w_i \big(\Phi_i^\top q_i^* - \phi(x_i, y_i)\big)
                       + \partial R(\theta).

``value`` and ``q*`` come from :meth:`advgame.Game.value_and_adversary` for all samples at once
(closed forms, vertex tables or the persistent-HiGHS oracle); the feature operator maps ``q*``
back with one matrix product.  The objective is piecewise linear plus ``R``, so it is not smooth.

Certification is by weak duality: any adversaries ``q_i`` give the lower bound
:func:`dual_bound` ``sum_i w_i H_L(q_i) - R^*(sum_i w_i Phi_i^T (e_{y_i} - q_i))`` (mixed with
the labels to enter a norm ball), so ``J(theta) - bound`` certifies ``theta``.

* :func:`fit_smoothed` (the classifier's default beyond the compiled sizes) minimises smoothed
  surrogates with continuation (quadratic smoothing of the zero-one adversary in closed form,
  entropic smoothing of small vertex tables; the Moreau envelope of a norm-ball ``R``) and stops
  when the bound at the smoothed adversaries certifies ``tol``; from
  :data:`SINGLE_MIN_ROWS` rows its steps use float32 feature products and only the final
  check (and whatever steps follow if it fails) runs in float64.
* :func:`fit_lbfgs` runs L-BFGS on the non-smooth objective: it stops when the line search can
  no longer make progress, and its result is uncertified by itself.
  :func:`refine_cutting_plane` then closes the gap exactly: it re-solves a small program over
  the adversaries ``q*`` met so far (cuts) and adds the new ``q*`` until the master's lower
  bound meets the true objective (feasible while ``n * p`` is moderate).

* :func:`fit_linear_dual` (and :func:`fit_kernel_dual` for kernels) is dual coordinate ascent
  over the ``q_i`` for the zero-one game with soft moments (the LIBLINEAR Crammer-Singer
  scheme, compiled per sample, with shrinking), certified by the same bound from ``Q`` alone.
  Measured (one BLAS thread, ``tol = 1e-4``): 309 epochs in 0.08 s on digits against 406
  smoothing steps in 0.40 s, but 1,092 epochs (16 s) against 38 steps (0.13 s) on
  ``make_classification`` with 20,000 rows, whose noisy labels keep every row active; the
  classifier therefore starts with it and hands over to :func:`fit_smoothed` when the rows
  say so (its ``switch``).

Measured for :func:`fit_smoothed` (one BLAS thread, ``tol = 1e-4``): Newton steps alone took
fewer steps but more time than L-BFGS, yet certify the norm balls at ``tol = 1e-6`` where
L-BFGS stalls; hence the default ``method='auto'``.  Mixing every new dual point into the best
one met (an exact line search on the dual, for soft moments) made the bound certify at
227 instead of 360 steps on digits: the bound of a single smoothed adversary loses
``||grad J_mu||^2 / (2 lam)``, so only points near a smoothed optimum gave useful bounds.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg
from scipy.linalg.lapack import dtrtrs
from scipy.optimize import minimize

from . import _kernels, closed_forms
from ._validation import as_float_array, as_labels, check_finite
from .compile import compile_cuts
from .exceptions import ConvergenceWarning, NotApplicableError, SizeLimitError
from .features import Multiclass
from .uncertainty import Exact, NormBall, SoftMoments

__all__ = [
    "SurrogateObjective",
    "SmoothedSurrogate",
    "TrainingResult",
    "dual_bound",
    "entropies",
    "fit_adagrad",
    "fit_lbfgs",
    "fit_pegasos",
    "fit_smoothed",
    "refine_cutting_plane",
    "smoothed_game",
    "smoothing_obstacle",
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

    def __init__(
        self,
        game: Any,
        operator: Any,
        y: np.ndarray,
        weights: np.ndarray,
        uncertainty: Any,
        fmap: Any,
        method: str = "auto",
    ) -> None:
        self.game, self.operator, self.y, self.weights = game, operator, y, weights
        self.uncertainty, self.fmap, self.method = uncertainty, fmap, method

    def __call__(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        return self._evaluate(theta, self.operator, self.y, self.weights)

    def batch(self, theta: np.ndarray, rows: np.ndarray) -> tuple[float, np.ndarray]:
        """Objective and subgradient on ``rows`` only, loss weights rescaled to sum to one."""
        w = self.weights[rows]
        return self._evaluate(theta, self.operator.subset(rows), self.y[rows], w / w.sum())

    def subset(self, rows: np.ndarray) -> SurrogateObjective:
        """The objective on ``rows`` only, loss weights rescaled to sum to one."""
        w = self.weights[rows]
        return self._replace(self.operator.subset(rows), self.y[rows], w / w.sum())

    def astype(self, dtype: Any) -> SurrogateObjective:
        """The objective with the feature products in ``dtype`` (the operator's ``astype``:
        ``X`` converted once); everything else stays float64."""
        return self._replace(self.operator.astype(dtype), self.y, self.weights)

    def _replace(self, operator, y, weights):
        return SurrogateObjective(
            self.game, operator, y, weights, self.uncertainty, self.fmap, self.method
        )

    def _evaluate(self, theta, operator, y, weights):
        F = np.asarray(operator.forward(theta), dtype=np.float64)
        trusted = getattr(self.game, "_value_and_adversary", None)
        if trusted is not None and F.shape != (y.size, self.game.n_labels):
            trusted = None
        if trusted is None:  # a game without the trusted path (or a bad F) validates as before
            value, Q = self.game.value_and_adversary(F, self.method)
        else:  # F has the right shape and dtype: skip the validation pass (checked below)
            value, Q = trusted(F, self.method)
        rows = np.arange(y.size)
        loss = weights @ (value - F[rows, y])
        Q *= weights[:, None]  # Q is a fresh array: turn it into the loss gradient in place
        Q[rows, y] -= weights
        objective = loss + self.uncertainty.penalty(theta, self.fmap)
        gradient = operator.adjoint(Q) + self.uncertainty.subgradient(theta, self.fmap)
        if trusted is not None and not (np.isfinite(objective) and np.isfinite(gradient).all()):
            self.game.value_and_adversary(F, self.method)  # raises the usual error on bad F
        return objective, gradient


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


def fit_lbfgs(
    objective: Any,
    theta0: np.ndarray,
    max_iter: int = 1000,
    tol: float = 1e-6,
    memory: int = 20,
    escape: dict | None = None,
) -> TrainingResult:
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


def refine_cutting_plane(
    objective: Any,
    theta: np.ndarray,
    tol: float = 1e-6,
    max_rounds: int = 30,
    backend: str | None = None,
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
    objective: Any,
    theta0: np.ndarray,
    n_epochs: int = 50,
    batch_size: int = 64,
    step: float = 1.0,
    random_state: Any = None,
    tol: float | None = None,
) -> TrainingResult:
    r"""Averaged mini-batch AdaGrad on the surrogate (Fathony et al. 2018a, §6.1).

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


def fit_pegasos(
    game: Any,
    gram: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray,
    lam: float,
    n_epochs: int = 50,
    batch_size: int = 16,
    random_state: Any = None,
) -> TrainingResult:
    r"""Kernel PEGASOS for the adversarial surrogate (Fathony et al. 2018a, Algorithm 1, mini-batch form).

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


# ----------------------------------------------------------------- certified smoothing solver
#: Vertex tables up to this many rows are smoothed (entropically) for :func:`fit_smoothed`;
#: each evaluation costs ``n * rows * k``.
MAX_SMOOTHED_VERTICES = 4_096
#: Rows whose smoothed adversary is a vertex up to this much mass elsewhere have no curvature.
_FLAT = 1e-12


class _Curvature:
    """The Jacobian of the smoothed adversaries ``Q_mu(F)`` (the Hessian of ``value_mu``) on
    the rows where it is not zero: ``rows`` and ``apply(D)`` for directions ``D`` of those rows."""

    def __init__(self, rows, apply):
        self.rows, self.apply = rows, apply


def _zero_one_smoother(weight):
    def smooth(F, mu):
        value, Q, top, level, _, (capped, n_capped), (active, count) = (
            closed_forms._zero_one_smoothing(F, mu, weight)
        )

        def curvature():
            # q_j = (min(f_j, u) - tau)/mu, u = (sum of the capped f - c) / m and
            # tau = (sum of min(f, u) over the active labels - mu) / r; in the column layout
            # (labels x rows) of the closed form
            rows = np.flatnonzero(count > 1)  # a single active label: q = e_j, locally constant
            on, top_set = active[:, rows], capped[:, rows]
            active_mean = on * (1.0 / count[rows])
            capped_mean = top_set * (1.0 / n_capped[rows])
            free = (on & ~top_set) * (1.0 / mu)
            top_set = top_set * (1.0 / mu)

            def apply(D):
                DT = D.T
                total = np.einsum("ij,ij->j", DT, active_mean)
                out = DT - total
                out *= free
                total -= np.einsum("ij,ij->j", DT, capped_mean)
                out -= top_set * total
                return out.T

            return _Curvature(rows, apply)

        return value, Q.T, top + (weight - level), curvature  # V = u + c (Theorem 5)

    return smooth


def _vertex_smoother(table):
    Qv, v = table.Q, table.v

    ones = np.ones(len(v))

    def smooth(F, mu):
        scores = F @ Qv.T
        scores += v
        top = scores.max(axis=1)  # the exact game value
        scores -= top[:, None]
        scores *= 1.0 / mu
        np.exp(scores, out=scores)  # the softmax weights of the vertices, times total
        total = scores @ ones
        Q = scores @ Qv
        Q /= total[:, None]

        def curvature():
            # the largest softmax weight is 1 / total (the best vertex has exp(0) = 1)
            rows = np.flatnonzero(1.0 / total < 1.0 - _FLAT)
            weights = scores[rows]
            weights *= (1.0 / mu) / total[rows, None]
            means = Q[rows]

            def apply(D):
                # the covariance of the vertices under the weights, applied to D, over mu:
                # sum_t w_t q_t (q_t . D) - Q (Q . D) with Q = sum_t w_t q_t
                S = D @ Qv.T
                S *= weights
                out = S @ Qv
                out -= means * (np.einsum("ij,ij->i", D, means) * (1.0 / mu))[:, None]
                return out

            return _Curvature(rows, apply)

        return top + mu * np.log(total), Q, top, curvature

    return smooth


def smoothed_game(game: Any) -> Any:
    r"""``smooth(F, mu) -> (value_mu, Q_mu, value, curvature)``: a smoothed game, or None.

    * zero-one: quadratic smoothing of the adversary,
      :func:`advgame.closed_forms.zero_one_quadratic_smoothing`
      (``value_mu <= value <= value_mu + mu/2``), piecewise quadratic;
    * any matrix whose vertex table ``D`` has at most :data:`MAX_SMOOTHED_VERTICES` rows
      (ordinal, squared and abstain for moderate ``k``, small general matrices): entropic
      smoothing of the maximum over ``D``, ``mu log sum_t exp((v_t + f^T q_t) / mu)``
      (``value <= value_mu <= value + mu log |D|``), whose gradient is the softmax mixture of
      the vertices' ``q_t``.

    Either way ``Q_mu`` is a distribution per row (a feasible adversary) and the gradient of
    ``value_mu``, ``value`` is the exact game value (a by-product: the level of Theorem 5, the
    best vertex), and ``curvature()`` gives the Jacobian of ``Q_mu`` (the Hessian of
    ``value_mu``) on the rows where it is not zero.  None when neither applies.
    """
    structure = game.structure
    if structure is not None and structure.kind == "zero_one" and structure.has_closed_form:
        return _zero_one_smoother(structure.weight)
    try:
        table = game.vertex_table()
    except (SizeLimitError, NotApplicableError):
        return None
    if len(table) > MAX_SMOOTHED_VERTICES:
        return None
    return _vertex_smoother(table)


def smoothing_obstacle(game: Any, uncertainty: Any, fmap: Any) -> str | None:
    """Why :func:`fit_smoothed` cannot certify this problem, or None when it can.

    ``'exact'`` for exact moment matching (``Exact`` or a ball of radius 0): ``R^*`` is the
    indicator of ``{0}``, which no mixture of smoothed adversaries reaches, so the dual bound
    is useless; the compiled LP certifies instead.  Otherwise a sentence (kernel features, or a
    game without a smoothing by :func:`smoothed_game`).
    """
    if isinstance(uncertainty, Exact) or (
        isinstance(uncertainty, NormBall) and uncertainty.radius == 0
    ):
        return "exact"
    if not fmap.coordinate_norms:
        return (
            "kernel features (the bound needs R^* in explicit coordinates; fit_kernel certifies "
            "kernels with the Gram matrix)"
        )
    if smoothed_game(game) is None:
        return (
            "the loss has no zero-one closed form and no vertex table with at most "
            f"{MAX_SMOOTHED_VERTICES} rows to smooth"
        )
    return None


def dual_bound(
    game: Any,
    operator: Any,
    y: np.ndarray,
    weights: np.ndarray,
    uncertainty: Any,
    fmap: Any,
    Q: np.ndarray,
    moment: np.ndarray | None = None,
    entropy: np.ndarray | None = None,
) -> float:
    r"""A certified lower bound on ``min_theta J(theta)`` from adversaries ``Q`` (weak duality).

    .. math::  D(q) = \max_{0 \le r \le 1} \sum_i w_i H_L(q_{r,i})
               - R^*\Big(\sum_i w_i \Phi_i^\top (e_{y_i} - q_{r,i})\Big) \le J^*,
               \qquad q_r = (1 - r) e_y + r q,

    with ``H_L(q) = min_a (L q)_a``; the mixture (``r``) brings the residual into the domain of
    ``R^*`` for norm balls (:meth:`advgame.uncertainty.UncertaintySet.dual_bound`).  Any rows of
    distributions ``Q`` give a bound, independently of how they were found.  ``moment``, if
    given, is the residual ``sum_i w_i Phi_i^T (e_{y_i} - q_i)`` of these ``Q`` already
    computed (it is minus the loss part of the surrogate's gradient).  ``D`` is the Lagrangian
    dual of the learning problem (Fathony et al. 2018a, Theorem 2, with the moment constraint
    relaxed by the uncertainty set as in Farnia and Tse 2016, Theorem 3).

    Parameters
    ----------
    game : Game
        The per-sample game of the loss matrix ``L``.
    operator : bound feature operator
        ``fmap.bind(X)``: its ``adjoint`` maps ``(n, k)`` residuals to ``theta``'s coordinates.
    y : ndarray of shape (n,)
        Label indices.
    weights : ndarray of shape (n,)
        Normalised sample weights ``w``.
    uncertainty : UncertaintySet
        Provides ``R^*`` through its ``dual_bound``.
    fmap : FeatureMap
    Q : ndarray of shape (n, k)
        Any conditional distributions (rows in the simplex).
    moment : ndarray, optional
        Their residual, when already computed.
    entropy : ndarray of shape (n,), optional
        Their entropies ``H_L(q_i)``, when already computed (:func:`entropies`).

    Returns
    -------
    float
        ``D(q) <= J*`` (finite: ``r = 0``, the labels themselves, is always feasible).
    """
    L = game.loss.matrix
    if entropy is None:
        entropy = entropies(L, Q)
    if moment is None:
        G = Q * -weights[:, None]
        G[np.arange(y.size), y] += weights
        moment = operator.adjoint(G)
    base, (g, gain) = _dual_point(L, y, weights, moment, entropy)
    return uncertainty.dual_bound(g, base, gain, fmap)


def _dual_point(L, y, weights, moment, entropy):
    """``(base, (g, gain))`` of :meth:`advgame.uncertainty.UncertaintySet.dual_bound` for
    adversaries with residual ``moment`` and entropies ``entropy``: ``base = sum_i w_i
    H_L(e_{y_i})`` and ``gain = sum_i w_i H_L(q_i) - base``."""
    base = float(weights @ L.min(axis=0)[y])
    return base, (moment, float(weights @ entropy) - base)


def entropies(L: np.ndarray, Q: np.ndarray) -> np.ndarray:
    r"""The generalised entropies ``H_L(q_i) = min_a (L q_i)_a`` of the rows of ``Q``.

    .. math::  H_L(q) = \min_{a} (L q)_a,

    the predictor's best expected loss against the adversary ``q`` (Fathony et al. 2018a,
    Eq. 1; Farnia and Tse 2016, Eq. 11), the term of the dual bound :func:`dual_bound`.
    Computed as ``(L Q^T).min(axis=0)``: the minimum over a few actions runs along the long
    axis, three to four times faster than ``(Q L^T).min(axis=1)`` for ``k <= 10``.

    Parameters
    ----------
    L : ndarray of shape (l, k)
        The loss matrix, one row per action (validated by :class:`advgame.losses.LossMatrix`).
    Q : ndarray of shape (n, k)
        Distributions over the labels, one per row.

    Returns
    -------
    ndarray of shape (n,)
    """
    return (L @ Q.T).min(axis=0)


def _smoothed_penalty(uncertainty, theta, nu, fmap):
    """``(R_nu, gradient, hessian_apply)``: ``R`` itself when smooth (soft moments), else its
    Moreau envelope ``max_{g in B} g . theta - nu/2 ||g||^2`` for the norm balls (``B`` the
    moment set), whose gradient is the projection of ``theta / nu`` onto ``B``."""
    if isinstance(uncertainty, SoftMoments):
        lam = uncertainty.lam
        return (0.5 * lam * float(theta @ theta), lam * theta, lambda v: lam * v)
    point = theta / nu
    g = uncertainty.project_moments(point, fmap)
    value = float(g @ theta) - 0.5 * nu * float(g @ g)
    eps, norm = uncertainty.radius, uncertainty.norm
    if norm == np.inf:
        inside = np.abs(point) < eps

        def hessian(v):
            return np.where(inside, v, 0.0) / nu

    elif norm == 1:
        support = g != 0
        signs = np.sign(point) * support
        outside = np.abs(point).sum() > eps
        size = max(np.count_nonzero(support), 1)

        def hessian(v):
            if not outside:
                return v / nu
            return (np.where(support, v, 0.0) - signs * (signs @ v) / size) / nu

    else:
        blocks = [np.arange(theta.size)] if norm == 2 else fmap.blocks()

        def hessian(v):
            out = v.copy()
            for b in blocks:
                length = np.linalg.norm(point[b])
                if length > eps:
                    unit = point[b] / length
                    out[b] = (eps / length) * (v[b] - unit * (unit @ v[b]))
            return out / nu

    return value, g, hessian


class SmoothedSurrogate:
    """``J_mu(theta)``: the surrogate with the game smoothed by ``mu`` (and a norm-ball ``R`` by
    its Moreau envelope of parameter ``nu``); value and gradient, and :meth:`hessian` at the
    last point evaluated.

    Keeps the potentials and adversaries of its last evaluation (``last``), which
    :func:`fit_smoothed` reuses for the exact objective and the dual bound.
    """

    def __init__(self, objective: Any, smooth: Any, mu: float, nu: float) -> None:
        self.objective, self.smooth, self.mu, self.nu = objective, smooth, mu, nu
        self.last = None
        n, k = objective.y.size, objective.game.n_labels
        rows = np.arange(n)
        #: flat positions of the entries (i, y_i) in C order and in column-major order
        self._labels = {"C": rows * k + objective.y, "F": objective.y * n + rows}

    def __call__(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        o = self.objective
        F = o.operator.forward(theta)
        value, Q, exact, curvature = self.smooth(F, self.mu)
        observed = _flat(F).take(self._labels[_order(F)])
        loss = o.weights @ (value - observed)
        G = Q * o.weights[:, None]  # in Q's memory order (column-major from the closed forms)
        _flat(G)[self._labels[_order(G)]] -= o.weights  # G is contiguous: a view
        moment = -o.operator.adjoint(G)
        penalty, gradient, hessian = _smoothed_penalty(o.uncertainty, theta, self.nu, o.fmap)
        #: theta, potentials, adversaries, exact game values, observed potentials f_{i,y_i}
        #: and moment residual
        self.last = (theta.copy(), F, Q, exact, observed, moment)
        self.penalty_gradient = gradient
        self._curvature, self._penalty_hessian = curvature, hessian
        return loss + penalty, gradient - moment

    def hessian(self) -> Any:
        """``v -> (Hessian of J_mu at the last point) v``: two products with the rows that
        have curvature, plus the regulariser's part."""
        o, curvature = self.objective, self._curvature()
        operator = o.operator.subset(curvature.rows)
        weights = o.weights[curvature.rows, None]
        penalty = self._penalty_hessian

        def apply(v):
            M = curvature.apply(operator.forward(v))
            M *= weights
            return operator.adjoint(M) + penalty(v)

        return apply


def _order(A):
    """``'F'`` for a column-major 2-D array, else ``'C'``."""
    return "F" if A.flags.f_contiguous and not A.flags.c_contiguous else "C"


def _flat(A):
    """``A`` (2-D) as 1-D in its memory order :func:`_order`: a view when ``A`` is contiguous
    (a C-ordered copy otherwise)."""
    return A.T.reshape(-1) if _order(A) == "F" else A.reshape(-1)


def _conjugate_gradient(apply, b, tolerance, max_iter):
    """Approximately solve ``A x = b`` (``A`` positive semi-definite) from ``x = 0``."""
    x = np.zeros_like(b)
    r = b.copy()
    d = r.copy()
    rr = float(r @ r)
    goal = tolerance**2 * rr
    for _ in range(max_iter):
        Ad = apply(d)
        curvature = float(d @ Ad)
        if curvature <= 1e-300:
            break
        step = rr / curvature
        x += step * d
        r -= step * Ad
        new = float(r @ r)
        if new <= goal:
            break
        d *= new / rr
        d += r
        rr = new
    return x if np.any(x) else b.copy()


#: Consecutive stalled stages (no step decreases ``J_mu``, or the stage budget spent) after
#: which :func:`fit_smoothed` gives up.
MAX_STALLS = 3
#: The factor by which each stage shrinks the smoothing (measured: jumps of up to 1e-3, sized
#: by the smoothing part of the gap, left Newton steps stalled on the norm balls).
MU_SHRINK = 0.1
#: Steps of one smoothing stage at most; CG iterations per Newton step at most.
NEWTON_STAGE_STEPS, CG_STEPS = 200, 100
#: ``method='auto'`` with a norm-ball ``R``: L-BFGS steps in a stage before switching to
#: Newton steps (with soft moments it switches only after a failed line search).  Measured
#: (one BLAS thread, ``tol = 1e-4``): Newton's conjugate gradients certify the l1 ball on
#: segment (980 steps; L-BFGS alone stalls at gap 5e-3), but with soft moments they cost more
#: than they save: digits 3,249 Hessian products for 243 steps against 475 L-BFGS steps in
#: two thirds of the time, optdigits 7,014 against none (3.6 s against 1.0 s, same run).
LBFGS_PATIENCE = 100
#: Pairs kept by ``method='lbfgs'``.
LBFGS_MEMORY = 20
#: The stage solver of :func:`fit_smoothed` (chosen by measurement, see the module notes).
DEFAULT_METHOD = "auto"
#: :func:`fit_smoothed` warm-starts problems of at least ``COARSE_MIN_ROWS`` rows on every
#: ``COARSE_STEP``-th row solved to the relative gap ``COARSE_TOL``.  Measured (one BLAS
#: thread, zero-one, ``tol = 1e-4``): full-data steps 27 -> 17 on ``make_classification``
#: with 20,000 rows, 24 -> 10 with 200,000, 33 -> 22 on 70,000 synthetic rows (fit time
#: 0.55-0.75x); on 1,000-5,000 rows (digits, satimage, optdigits) it did not help.
COARSE_MIN_ROWS, COARSE_STEP, COARSE_TOL = 10_000, 10, 1e-3
#: ``precision='auto'`` of :func:`fit_smoothed` runs the steps with float32 feature products
#: from this many rows on.  Measured (one BLAS thread, zero-one, ``tol = 1e-4``, a loaded
#: 2-core machine): at 200,000 x 51 and ``k = 5`` the products take 19 and 15-18 ms against
#: 34-36 and 26-28 ms in float64; the same steps plus one float64 check make the fit 5% faster
#: at 200,000 rows and 12% at 20,000.  Smaller problems run to small ``mu``, where the float32
#: rounding of ``F`` over ``mu`` reaches the adversaries, and stay in float64.
SINGLE_MIN_ROWS = 10_000


def _warn_uncertified(solver, message, objective):
    """The ``ConvergenceWarning`` of a certified solver that stopped above its ``tol``,
    attributed to the solver's caller."""
    warnings.warn(
        f"{solver} not certified ({message}); objective {objective:.10g}.",
        ConvergenceWarning,
        stacklevel=3,
    )


def _damped(hessian, sigma):
    return lambda v: hessian(v) + sigma * v


class _Memory:
    r"""The newest L-BFGS pairs ``(s, y)`` (at most ``size``), as the rows of ``S`` and ``Y``
    with their products ``S Y^T`` and ``Y Y^T`` kept up to date.

    :meth:`direction` is ``-H g`` for the L-BFGS inverse Hessian in the compact form of Byrd,
    Nocedal and Schnabel (1994, Theorem 2.2), with ``H_0 = gamma I`` and ``gamma = s^T y /
    y^T y`` of the newest pair, ``R`` the upper triangle of ``S Y^T`` and ``D`` its diagonal:

    .. math::  H g = \gamma g + S^\top R^{-\top}\big((D + \gamma Y Y^\top) w
               - \gamma Y g\big) - \gamma Y^\top w, \qquad w = R^{-1} S g,

    the matrix of the two-loop recursion in four matrix-vector products and two small
    triangular solves (measured: about 70 us against 0.8 ms for 20 pairs of 650 coordinates,
    where the recursion's 80 vector operations are mostly interpreter time).
    """

    def __init__(self, size: int) -> None:
        self.size, self.count = size, 0
        self.S = self.Y = None  # allocated at the first pair, whose length is theta's
        self.SY, self.YY = np.zeros((size, size)), np.zeros((size, size))

    def __len__(self) -> int:
        return self.count

    def push(self, s: np.ndarray, y: np.ndarray) -> None:
        """Keep the pair (dropping the oldest beyond ``size``) if ``s . y > 0`` clearly."""
        sy, yy = float(s @ y), float(y @ y)
        if sy <= 1e-12 * yy:
            return
        if self.S is None:
            self.S, self.Y = np.zeros((self.size, s.size)), np.zeros((self.size, s.size))
        m = self.count
        if m == self.size:
            for A in (self.S, self.Y):
                A[:-1] = A[1:]
            for A in (self.SY, self.YY):
                A[:-1, :-1] = A[1:, 1:]
            m -= 1
        S, Y = self.S[:m], self.Y[:m]
        self.SY[:m, m], self.SY[m, :m], self.SY[m, m] = S @ y, Y @ s, sy
        self.YY[:m, m] = self.YY[m, :m] = Y @ y
        self.YY[m, m] = yy
        self.S[m], self.Y[m], self.count = s, y, m + 1

    def direction(self, gradient: np.ndarray) -> np.ndarray:
        """``-H g`` (``-g`` without pairs)."""
        m = self.count
        if m == 0:
            return -gradient
        S, Y, SY, YY = self.S[:m], self.Y[:m], self.SY[:m, :m], self.YY[:m, :m]
        gamma = SY[-1, -1] / YY[-1, -1]
        # LAPACK's triangular solve reads only the upper triangle of S Y^T, which is R
        w = dtrtrs(SY, S @ gradient)[0]
        u = dtrtrs(SY, SY.diagonal() * w + gamma * (YY @ w - Y @ gradient), trans=1)[0]
        return -(gamma * gradient + S.T @ u - gamma * (Y.T @ w))


def fit_smoothed(
    objective: Any,
    theta0: np.ndarray,
    tol: float = 1e-6,
    max_iter: int = 1000,
    mu0: float | None = None,
    method: str | None = None,
    warn: bool = True,
    coarse: bool = True,
    precision: str = "auto",
) -> TrainingResult:
    r"""Minimise ``J`` on smoothed surrogates with continuation; certified by weak duality.

    Each stage minimises ``J_mu`` (:class:`SmoothedSurrogate`: the game smoothed by
    :func:`smoothed_game`, a norm-ball ``R`` by its Moreau envelope of parameter
    ``nu = mu / radius^2``), warm-started, with an Armijo backtracking line search along
    ``method``'s directions: ``'lbfgs'`` (:class:`_Memory`, :data:`LBFGS_MEMORY` pairs),
    ``'newton'`` (regularised Newton, ``(H + ||g|| I) d = -g`` by conjugate gradients on
    Hessian-vector products that touch only the rows whose smoothed adversary is not a vertex)
    or ``'auto'`` (:data:`DEFAULT_METHOD`: L-BFGS, switching to Newton for the rest of a stage
    after a failed line search or, for a norm ball, :data:`LBFGS_PATIENCE` steps).  After every
    step the smoothed adversaries ``Q_mu`` give a dual point, which is mixed with the best dual
    point met so far (:meth:`~advgame.uncertainty.UncertaintySet.mixture`: for soft moments
    the best convex combination; ``H_L`` is concave, so a mixture's bound holds), and the
    bound of :func:`dual_bound` gives ``lower <= J*``, while ``J(theta)`` (the exact game value
    comes with the smoothed one) is an upper bound; the run stops as soon as ``min J - max
    lower <= tol * max(1, |J|)`` (message ``'certified'``).  At a smoothed optimum the point's own gap is the
    *smoothing part* ``sum_i w_i (value(f_i) - H_L(q_i) - f_i^T q_i)`` (plus ``R(theta) -
    theta . grad R_nu`` for a norm ball); once the rest of its own gap falls below it (the
    mixed bound would end stages before their problems are solved), ``mu`` shrinks by
    :data:`MU_SHRINK` and a new stage starts.  After :data:`MAX_STALLS` stalled stages in a
    row (no decrease of ``J_mu`` left, or :data:`NEWTON_STAGE_STEPS` spent) it gives up.

    With ``coarse`` and at least :data:`COARSE_MIN_ROWS` rows, the stages first run on every
    :data:`COARSE_STEP`-th row (to the relative gap :data:`COARSE_TOL`) and the full problem
    starts from their solution and L-BFGS pairs (and at most a tenth of ``mu0``): the
    subsample's curvature is the full problem's up to sampling noise, so the full-data steps,
    which dominate the time, are about halved.

    With ``precision='single'`` (``'auto'``: from :data:`SINGLE_MIN_ROWS` rows, for operators
    with an ``astype``) the two matrix products of every step run in float32 (``X`` converted
    once; ``F``, the adversaries, the gradient and all sums stay float64), so the gaps the
    steps see are estimates.  When the steps would stop (an estimated certificate, a stalled
    stage or ``max_iter``) the point is evaluated again in float64 and the run goes on in
    float64 from there: the returned objective, gap and message are float64 ones, as
    rigorous as with ``'double'``.  The float32 products differ from float64 ones by about
    ``1e-7 |x| |theta|`` per potential, which moves ``q_mu`` by that over ``mu``: far below
    the certified gaps at the smoothings of ``tol >= 1e-6``.

    ``max_iter`` bounds the steps over all stages (``limit_reached``; the coarse stages have a
    budget of their own).  The returned ``gap`` is certified whatever happened: the smallest
    ``J`` met minus the largest bound met; a ``ConvergenceWarning`` (unless ``warn=False``)
    says when it is above ``tol``.  Raises
    ``NotApplicableError`` when :func:`smoothing_obstacle` names one.

    Parameters
    ----------
    objective : SurrogateObjective
        ``J(theta) = sum_i w_i (value(f_i) - f_{i,y_i}) + R(theta)`` (Fathony et al. 2018a,
        Eq. 2, with the uncertainty set's regulariser).
    theta0 : ndarray
        Starting point.
    tol : float
        The certified relative gap to reach.
    max_iter : int
        Steps over all stages.
    mu0 : float, optional
        First smoothing parameter (default a tenth of the loss range).
    method : {'auto', 'lbfgs', 'newton'}, optional
        Step directions (default :data:`DEFAULT_METHOD`).
    warn : bool
        Warn when the certified gap stays above ``tol``.
    coarse : bool
        Warm-start large problems on a subsample (see above).
    precision : {'auto', 'single', 'double'}
        The precision of the steps' matrix products (see above); the certificate is float64.

    Returns
    -------
    TrainingResult
        ``theta`` (the best ``J`` met), ``objective``, ``n_iter``, ``message`` (``'certified'``
        exactly when ``gap <= tol * max(1, |objective|)``) and the certified ``gap``.
    """
    game, o = objective.game, objective
    obstacle = smoothing_obstacle(game, o.uncertainty, o.fmap)
    if obstacle is not None:
        raise NotApplicableError(f"fit_smoothed cannot certify this problem: {obstacle}.")
    smooth = smoothed_game(game)
    method = method or DEFAULT_METHOD
    L = game.loss.matrix
    scale = max(float(np.max(L) - np.min(L)), 1e-12)
    mu = 0.1 * scale if mu0 is None else mu0
    single = _single_precision(o, precision)
    theta, pairs, coarse_steps = np.asarray(theta0, dtype=float), None, 0
    if coarse and o.y.size >= COARSE_MIN_ROWS:
        # only a starting point: the coarse stages need no float64 check
        part = (o if single is None else single).subset(np.arange(0, o.y.size, COARSE_STEP))
        warm = _continuation(part, smooth, theta, COARSE_TOL, max_iter, mu, method, scale)
        theta, pairs, coarse_steps = warm.theta, warm.pairs, warm.n_iter
        mu = min(warm.mu, MU_SHRINK * mu)  # the loose coarse tolerance stops at a large mu
    run = _continuation(o, smooth, theta, tol, max_iter, mu, method, scale, pairs, single)
    gap = max(run.objective - run.lower, 0.0)
    message = run.message
    certified = message == "certified"
    if not certified:
        message = (
            f"{message}: gap {gap:.2e} above tol={tol:g} * max(1, |J|) after {run.stages} stages"
        )
    if not certified and warn:
        _warn_uncertified("smoothing solver", message, run.objective)
    limit_reached = message.startswith("max_iter")
    n_iter = run.n_iter + coarse_steps
    return TrainingResult(run.theta, run.objective, n_iter, message, gap, limit_reached)


def _single_precision(objective, precision):
    """``objective`` with float32 feature products for :func:`fit_smoothed`'s steps, or None
    (``precision='double'``, or ``'auto'`` below :data:`SINGLE_MIN_ROWS` rows or for an
    operator without ``astype``)."""
    if precision not in ("auto", "single", "double"):
        raise ValueError(f"precision must be 'auto', 'single' or 'double'; got {precision!r}.")
    supported = hasattr(objective.operator, "astype")
    if precision == "single" and not supported:
        raise ValueError("precision='single' needs a feature operator with an astype method.")
    if precision == "double" or not supported:
        return None
    if precision == "auto" and objective.y.size < SINGLE_MIN_ROWS:
        return None
    return objective.astype(np.float32)


def _mixed(first, second, s):
    """The dual point ``(1 - s) first + s second`` (moment residuals and entropy gains; the
    gain is a lower bound for the mixed adversaries, ``H_L`` being concave)."""
    return (1 - s) * first[0] + s * second[0], (1 - s) * first[1] + s * second[1]


@dataclass
class _Continuation:
    """What one run of smoothing stages reached: the best ``J`` met and its ``theta``, the
    largest dual bound met, steps, stages, why it stopped, its last smoothing and L-BFGS pairs
    (a :class:`_Memory`)."""

    theta: np.ndarray
    objective: float
    lower: float
    n_iter: int
    stages: int
    message: str
    mu: float
    pairs: _Memory


def _continuation(
    objective, smooth, theta0, tol, max_iter, mu, method, scale, pairs=None, single=None
):
    """The stages of :func:`fit_smoothed` from ``theta0`` at smoothing ``mu``, starting with the
    L-BFGS ``pairs`` given (a :class:`_Memory`; kept from stage to stage unless ``R`` is a norm
    ball).

    With ``single`` (``objective`` with float32 products) the steps run on it until they would
    stop; the bests met so far, estimates, are then dropped, and the same stage goes on from
    the same point and pairs with ``objective``'s float64 evaluations, which alone make the
    result."""
    o = objective
    radius = getattr(o.uncertainty, "radius", 1.0)
    best_value, best_theta, lower = np.inf, np.asarray(theta0, dtype=float).copy(), -np.inf
    L = o.game.loss.matrix
    current = o if single is None else single
    dual = None  # the best dual point met: a mixture of the adversaries met (moment, gain)

    def check(surrogate, theta):
        nonlocal best_value, best_theta, lower, dual
        _, F, Q, exact, observed, moment = surrogate.last
        penalty = o.uncertainty.penalty(theta, o.fmap)
        J = float(o.weights @ (exact - observed)) + penalty
        if J < best_value:
            best_value, best_theta = J, theta.copy()
        entropy = entropies(L, Q)
        base, own = _dual_point(L, o.y, o.weights, moment, entropy)
        point = own if dual is None else _mixed(dual, own, o.uncertainty.mixture(dual, own, o.fmap))
        bound = o.uncertainty.dual_bound(point[0], base, point[1], o.fmap)
        if bound > lower:
            lower, dual = bound, point
        # the gap left at the smoothed optimum: the adversaries' suboptimality in the exact
        # game and, for a norm ball, R(theta) - theta . g with g = grad R_nu in the ball
        inner = float(o.weights @ (exact - entropy - np.einsum("ij,ij->i", F, Q)))
        if isinstance(o.uncertainty, NormBall):
            inner += penalty - float(theta @ surrogate.penalty_gradient)
        inner = max(inner, 0.0)
        # this point's own gap less the smoothing part: what the stage's steps can close (the
        # mixed bound would end a stage before its smoothed problem is solved)
        rest = J - o.uncertainty.dual_bound(own[0], base, own[1], o.fmap) - inner
        return best_value - lower, rest, inner

    theta = best_theta.copy()
    n_iter, stages, stalls, message = 0, 0, 0, ""
    # norm balls: Newton steps after LBFGS_PATIENCE steps, and fresh pairs in every stage
    patience = LBFGS_PATIENCE if isinstance(o.uncertainty, NormBall) else np.inf
    pairs = _Memory(LBFGS_MEMORY) if pairs is None else pairs
    while True:
        stages += 1
        surrogate = SmoothedSurrogate(current, smooth, mu, mu / radius**2)
        J, gradient = surrogate(theta)
        why = "stalled"
        newton, stage_steps = method == "newton", 0
        while True:
            gap, rest, inner = check(surrogate, theta)
            target = tol * max(1.0, abs(best_value))
            if gap <= target:
                message = "certified"
                break
            if n_iter >= max_iter:
                message = f"max_iter={max_iter} reached"
                break
            if rest <= max(inner, 0.5 * target):
                why = "next stage"
                break
            if stage_steps >= NEWTON_STAGE_STEPS and (newton or method == "lbfgs"):
                break
            n_iter += 1
            stage_steps += 1
            if method == "auto" and not newton and stage_steps > patience:
                newton, stage_steps = True, 0
            norm = float(np.linalg.norm(gradient))
            if newton:
                # regularised Newton: (H + sigma I) d = -g with sigma = ||g|| keeps the step
                # bounded where J_mu is nearly flat (a Moreau envelope with a large nu)
                step = _conjugate_gradient(
                    _damped(surrogate.hessian(), norm), -gradient, min(0.1, norm), CG_STEPS
                )
            else:
                step = pairs.direction(gradient)
            slope = float(gradient @ step)
            if slope >= 0:
                step, slope = -gradient, -(norm**2)
            t = 1.0
            while t > 1e-12:
                trial = theta + t * step
                J_trial, g_trial = surrogate(trial)
                if J_trial <= J + 1e-4 * t * slope:
                    break
                t *= 0.5
            else:
                # no decrease along this direction (in float32 this may be rounding: stall)
                if method == "auto" and not newton and current is o:
                    surrogate(theta)  # restore the cache
                    newton, stage_steps = True, 0
                    continue
                break
            if not newton:
                pairs.push(trial - theta, g_trial - gradient)
            theta, J, gradient = trial, J_trial, g_trial
        if not message:
            stalls = stalls + 1 if why == "stalled" else 0
            # the steps no longer close the rest of the gap and smaller mu did not help either
            # (they worsen the conditioning; measured on optdigits, no later stage helps)
            if stalls >= MAX_STALLS or mu * MU_SHRINK < 1e-14 * scale:
                message = f"stalled at mu={mu:.1e}"
        if current is not o and (message or why == "stalled"):
            # float32 steps stop here: check this point in float64 and go on in float64
            current, message, stalls = o, "", 0
            best_value, best_theta, lower, dual = np.inf, theta.copy(), -np.inf, None
            continue
        if message:
            break
        # with soft moments the L-BFGS pairs go on into the next stage: its curvature is
        # steeper, but they beat a fresh start (measured, steps: digits 475 -> 406, optdigits
        # 309 -> 288, satimage 219 -> 210, segment 178 -> 170, ordinal and squared 3-30% fewer);
        # the norm balls' envelopes change shape with nu, and stale pairs cost them max_iter
        # at tol = 1e-6 (ordinal, l1)
        if patience < np.inf:
            pairs = _Memory(LBFGS_MEMORY)
        mu *= MU_SHRINK
    return _Continuation(best_theta, best_value, lower, n_iter, stages, message, mu, pairs)


# ------------------------------------------------------------------------------ exact kernels
# The kernel solver works with the exact Gram matrix ``K = K(X, X)`` of the training inputs in
# the representer form of :class:`advgame.features.KernelFeatures`: ``theta = sum_{m, j} A_{mj}
# psi(x_m, j)``, potentials ``F = K A`` and ``||theta||_H^2 = tr(A^T K A)``.  No low-rank
# approximation is made; the certificate is the RKHS form of :func:`dual_bound`.

__all__ += ["fit_kernel", "kernel_dual_bound", "kernel_obstacle", "kernel_regularizer"]

#: Relative residual (in the ``K``-norm) at which the conjugate gradients of a kernel Newton
#: step stop (at most; ``10 mu`` relative to the loss range when smaller), and their
#: iterations at most.
KERNEL_CG_TOL, KERNEL_CG_STEPS = 1e-2, 200
#: Problems of at most this many coefficients (rows times labels) solve their Newton systems
#: exactly (:func:`_kernel_direct`) instead of by conjugate gradients.  At small ``lambda`` the
#: system is ill-conditioned and the inexact steps stall: the ordinal game on machinecpu's 146
#: rows at ``lambda = 1e-4`` took 1,000 Newton steps and 2 s without certifying (the damping
#: grows to 1e4 times ``s``), then 14 s of cutting planes; with exact steps it certifies in
#: 50 steps, 1.3 s.  Iris (150 x 3, zero-one, ``1e-4``): 0.13 s against 0.78 s.  Larger
#: systems cost more than the steps they save (300 redwine rows x 6 labels: 19 s against 2.8 s).
KERNEL_DIRECT_SIZE = 1_000
#: Factors of the Newton damping after a full step and after a shortened one (divided by the
#: step length then).  Measured on optdigits (1,000 rows, zero-one, ``tol = 1e-4``): 66 steps,
#: against 72-145 for gentler or steeper factors and 170 without damping.
DAMPING_DOWN, DAMPING_UP = 0.1, 2.0
#: :func:`fit_kernel` computes its Newton directions with a single-precision copy of ``K``
#: from this many rows when ``tol`` is at least :data:`KERNEL_SINGLE_TOL` (2.5x faster
#: products on optdigits; the objective and the certificate stay in double precision).
KERNEL_SINGLE_ROWS, KERNEL_SINGLE_TOL = 2_000, 1e-5
#: A product ``K M`` uses only the nonzero rows of ``M`` when they are at most this fraction.
_SPARSE_ROWS = 0.5


def kernel_obstacle(game: Any, uncertainty: Any) -> str | None:
    """Why :func:`fit_kernel` cannot certify this problem, or None when it can.

    ``'exact'`` for exact moment matching (``Exact``, a ball of radius 0: the dual bound needs a
    moment set with interior; the compiled program certifies instead); a sentence for a norm
    ball other than the RKHS 2-norm (no meaning in the RKHS), an uncertainty set without an
    RKHS form, or a game without a smoothing by :func:`smoothed_game`.
    """
    if isinstance(uncertainty, Exact) or (
        isinstance(uncertainty, NormBall) and uncertainty.radius == 0
    ):
        return "exact"
    if isinstance(uncertainty, NormBall) and uncertainty.norm != 2:
        return (
            f"NormBall(norm={uncertainty.norm!r}) has no meaning in the RKHS: kernel features "
            "support norm=2 (the RKHS norm) and soft moments only"
        )
    if not isinstance(uncertainty, (SoftMoments, NormBall)):
        return f"{type(uncertainty).__name__} has no RKHS form (soft moments or an l2 ball)"
    if smoothed_game(game) is None:
        return (
            "the loss has no zero-one closed form and no vertex table with at most "
            f"{MAX_SMOOTHED_VERTICES} rows to smooth"
        )
    return None


def kernel_regularizer(uncertainty: Any, norm2: float, nu: float = 0.0) -> tuple[float, float]:
    r"""``(R, s)`` as functions of ``t = ||theta||_H^2``, with ``grad R = s theta``.

    Soft moments: ``R = lam t / 2``, ``s = lam``.  An RKHS ball of radius ``eps``:
    ``R = eps sqrt(t)`` (``nu = 0``) or its Moreau envelope
    ``R_nu = max_{||g||_H <= eps} <g, theta> - nu/2 ||g||_H^2``, which is ``t / (2 nu)`` when
    ``sqrt(t) <= eps nu`` and ``eps sqrt(t) - nu eps^2 / 2`` beyond (gradient ``s theta`` with
    ``s = 1/nu`` and ``eps / sqrt(t)``).  In the representer form the gradient with respect to
    ``A`` is ``s K A``.
    """
    if isinstance(uncertainty, SoftMoments):
        return 0.5 * uncertainty.lam * norm2, uncertainty.lam
    eps, norm = uncertainty.radius, float(np.sqrt(max(norm2, 0.0)))
    if nu > 0 and norm <= eps * nu:
        return 0.5 * norm2 / nu, 1.0 / nu
    value = eps * norm - (0.5 * nu * eps * eps if nu > 0 else 0.0)
    return value, (eps / norm if norm > 0 else 0.0)


def _kernel_product(K, M, rows=None):
    """``K M`` from the rows of ``M`` that are not zero (``rows``, found when None); ``K`` is
    symmetric, so ``K[:, rows] = K[rows].T`` is read by rows."""
    if rows is None:
        rows = np.flatnonzero(np.any(M != 0, axis=1))
    if rows.size > _SPARSE_ROWS * K.shape[0]:
        return _dot(K, M)
    if rows.size == 0:
        return np.zeros((K.shape[0], M.shape[1]))
    return _dot(K[rows].T, M[rows])


def _dot(K, M):
    """``K @ M`` in ``K``'s precision (no upcast copy of a single-precision ``K``), as doubles."""
    return np.asarray(K @ M.astype(K.dtype, copy=False), dtype=np.float64)


def kernel_dual_bound(
    game: Any,
    K: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray,
    uncertainty: Any,
    Q: np.ndarray,
) -> float:
    r"""A certified lower bound on the kernel learning optimum from adversaries ``Q``.

    Weak duality in the RKHS (Fathony et al. 2018a, Theorem 2, with the moment constraint
    relaxed as in Farnia and Tse 2016, Theorem 3): for any rows ``q_i`` in the simplex and
    ``G = diag(w) (E_y - Q)`` (``E_y`` the one-hot labels), the residual
    ``g = sum_ij G_ij psi(x_i, j)`` has ``||g||_H^2 = tr(G^T K G)``, and

    .. math::  D(Q) = \max_{0 \le r \le 1} \sum_i w_i H_L(q_{r,i}) - R^*(r g) \le J^*,
               \qquad q_r = (1 - r) e_y + r q,

    with ``R^*(g) = ||g||_H^2 / (2 lam)`` for soft moments and the indicator of
    ``||g||_H <= eps`` for an RKHS ball (the best ``r`` as in :func:`dual_bound`).  ``K`` is
    the symmetric Gram matrix of the training inputs; only the rows of ``G`` that are not zero
    are multiplied.
    """
    G, support = _residual(Q, y, weights)
    norm2 = 0.0
    if support.size:
        Gs = G[support]
        norm2 = float(np.einsum("ij,ij->", Gs, _submatrix(K, support) @ Gs))
    return _residual_bound(game.loss.matrix, y, weights, uncertainty, Q, norm2)


def _residual(Q, y, weights):
    """``G = diag(w) (E_y - Q)`` and its rows that are not zero."""
    G = Q * -weights[:, None]
    G[np.arange(y.size), y] += weights
    return G, np.flatnonzero(np.any(G != 0, axis=1))


def _residual_bound(L, y, weights, uncertainty, Q, norm2):
    """:func:`kernel_dual_bound` given ``||g||_H^2 = tr(G^T K G) = norm2``."""
    base = float(weights @ L.min(axis=0)[y])
    gain = float(weights @ entropies(L, Q)) - base
    return _rkhs_bound(uncertainty, base, gain, max(norm2, 0.0))


def _rkhs_bound(uncertainty, base, gain, norm2):
    """``max_{0 <= r <= 1} base + r gain - R^*(r g)`` given ``||g||_H^2 = norm2``."""
    if isinstance(uncertainty, SoftMoments):
        curvature = norm2 / (2.0 * uncertainty.lam)
        if curvature == 0:
            return base + max(gain, 0.0)
        r = min(1.0, max(gain, 0.0) / (2.0 * curvature))
        return base + r * gain - r * r * curvature
    norm = np.sqrt(norm2)
    r = 1.0 if norm <= uncertainty.radius else uncertainty.radius / norm
    return base + max(r * gain, 0.0)


def _kernel_cg(K, apply_c, s, b, tolerance, max_iter):
    r"""Solve ``(s I + C K) x = b`` by conjugate gradients in the ``K`` inner product.

    ``C`` (symmetric positive semi-definite, ``apply_c``) and ``K`` make ``C K`` self-adjoint
    for ``<u, v>_K = tr(u^T K v)``, where ``s I + C K`` is positive definite: this is the
    Newton system of Chapelle (2007), which avoids the squared conditioning of
    ``K C K + s K``.  Products with ``K`` are carried by recurrence, one per iteration.
    """
    x = np.zeros_like(b)
    r = b.copy()
    Kr = _dot(K, r)
    rho = float(np.einsum("ij,ij->", r, Kr))
    if rho <= 0:
        return x, np.zeros_like(b)
    p, Kp = r.copy(), Kr.copy()
    Kx = np.zeros_like(b)
    goal = tolerance**2 * rho
    for _ in range(max_iter):
        CKp = apply_c(Kp)
        Mp = s * p + CKp
        KMp = s * Kp + _dot(K, CKp)
        denominator = float(np.einsum("ij,ij->", p, KMp))
        if denominator <= 1e-300:
            break
        alpha = rho / denominator
        x += alpha * p
        Kx += alpha * Kp
        r -= alpha * Mp
        Kr -= alpha * KMp
        new = float(np.einsum("ij,ij->", r, Kr))
        if new <= goal:
            break
        p *= new / rho
        p += r
        Kp *= new / rho
        Kp += Kr
        rho = new
    return x, Kx


def _kernel_direct(K, apply_c, s, b):
    r"""Solve ``(s I + C K) x = b`` exactly (LU of the ``rk x rk`` matrix).

    ``C`` is block diagonal (one ``k x k`` block per row), so its blocks are ``apply_c`` of the
    ``k`` unit directions given to every row at once, and ``(C K)_{(i,a),(l,b)} = C_i[a, b]
    K_il``."""
    r, k = b.shape
    blocks = np.empty((r, k, k))
    unit = np.zeros((r, k))
    for j in range(k):
        unit[:, j] = 1.0
        blocks[:, :, j] = apply_c(unit)
        unit[:, j] = 0.0
    system = np.einsum("il,iab->ialb", K, blocks).reshape(r * k, r * k)
    system[np.diag_indices_from(system)] += s
    return scipy.linalg.solve(system, b.ravel(), check_finite=False).reshape(r, k)


def _kernel_newton_step(K, gradient, curvature, weights, s, tolerance, damping=0.0):
    r"""``(dA, K dA)`` solving ``(s I + C K) dA = -gradient`` (``gradient = W (Q - E) + s A``,
    so that ``K gradient`` is the gradient of ``J_mu`` in ``A``; ``C = W dQ/dF`` the curvature).

    With ``s + damping`` on the diagonal (Levenberg-Marquardt damping in the ``K`` metric),
    rows without curvature take ``dA_i = -gradient_i / (s + damping)`` directly; the rest solve
    the system reduced to them by :func:`_kernel_cg` with ``K`` restricted to their rows and
    columns.  (Undamped, a row whose adversary plays its label would return to zero at once;
    measured on optdigits, that makes the Newton steps oscillate and stall.)
    """
    dA = -gradient / (s + damping)
    rows = curvature.rows
    if rows.size:
        dA[rows] = 0.0
    KdA = _kernel_product(K, dA)
    if rows.size == 0:
        return dA, KdA
    w = weights[rows, None]

    def apply_c(D):
        out = curvature.apply(D)
        out *= w
        return out

    b = -gradient[rows] - apply_c(KdA[rows])
    if K.shape[0] * b.shape[1] <= KERNEL_DIRECT_SIZE:
        x = _kernel_direct(_submatrix(K, rows), apply_c, s + damping, b)
    else:
        x, _ = _kernel_cg(_submatrix(K, rows), apply_c, s + damping, b, tolerance, KERNEL_CG_STEPS)
    dA[rows] = x
    KdA += _dot(K, dA) if rows.size == K.shape[0] else _dot(K[rows].T, x)
    return dA, KdA


def _submatrix(K, rows):
    """``K[rows][:, rows]`` (``K`` itself when ``rows`` are all of them)."""
    return K if rows.size == K.shape[0] else _kernels.submatrix(K, rows, K, rows)


def fit_kernel(
    game: Any,
    K: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray,
    uncertainty: Any,
    A0: np.ndarray | None = None,
    tol: float = 1e-4,
    max_iter: int = 1000,
    mu0: float | None = None,
    warn: bool = True,
    method: str = "auto",
) -> TrainingResult:
    r"""Certified training with the exact kernel: smoothing, Newton steps and an RKHS bound.

    Minimises ``J(A) = sum_i w_i (value(f_i) - f_{i,y_i}) + R(theta)`` with ``F = K A`` and
    ``R = lam/2 tr(A^T K A)`` (soft moments) or ``eps sqrt(tr(A^T K A))`` (an RKHS ball), the
    representer form of Fathony et al. (2018a), §6.2.  Each stage minimises the smoothed
    ``J_mu`` (the game by :func:`smoothed_game`, an RKHS ball by its Moreau envelope of
    parameter ``nu = mu / eps^2``, :func:`kernel_regularizer`) by Newton steps in the form of
    Chapelle (2007): with ``grad_A J_mu = K g``, ``g = W (Q_mu - E_y) + s A``, the step solves
    ``(s I + C K) dA = -g`` (``C = W dQ_mu/dF``, zero on the rows whose smoothed adversary is a
    vertex, so those rows take ``dA = -g / s`` and conjugate gradients run on the others only,
    with ``K`` restricted to them, or an exact solve for problems of at most
    :data:`KERNEL_DIRECT_SIZE` coefficients, where the inexact steps stall; for the ball the
    rank-one part of the envelope's Hessian is left out, which keeps a descent direction), damped by ``damping`` added to ``s``
    (Levenberg-Marquardt in the ``K`` metric: :data:`DAMPING_DOWN` after a full step,
    :data:`DAMPING_UP` over the step length after a shortened one).  An Armijo line search
    moves along the step (``K dA`` is computed once; the trial points cost one smoothed game
    each).  When the Newton decrement says the stage may be over, the smoothed adversaries give
    :func:`kernel_dual_bound` ``<= J*``; the run stops when
    ``min J - max D <= tol * max(1, |J|)``.  ``mu`` shrinks by :data:`MU_SHRINK` when the gap
    left is the smoothing part ``sum_i w_i (value(f_i) - H_L(q_i) - f_i^T q_i)`` (plus
    ``R - <theta, grad R_nu>`` for a ball), as in :func:`fit_smoothed`.  Each step costs about
    three products of ``K`` (or of its rows with curvature) with an ``n x k`` matrix, in single
    precision from :data:`KERNEL_SINGLE_ROWS` rows; the objective, its potentials at every new
    stage and the bound are computed in double precision.

    Parameters
    ----------
    game : Game
    K : ndarray of shape (n, n)
        The symmetric Gram matrix ``K(X, X)`` of the training inputs (computed once per fit).
    y, weights : ndarray of shape (n,)
        Label indices and normalised sample weights.
    uncertainty : SoftMoments or NormBall with ``norm=2``
    A0 : ndarray, optional
        Starting coefficients, shape ``(n, k)`` or flattened.
    tol, max_iter, mu0, warn :
        As for :func:`fit_smoothed` (``max_iter`` counts Newton steps, or epochs of
        ``method='dual'``).
    method : {'auto', 'newton', 'dual'}
        ``'dual'``: :func:`fit_kernel_dual` (the zero-one and abstain losses with soft
        moments, from ``A = 0`` only); ``'auto'`` uses it wherever it applies (measured on
        optdigits, 3,934 rows: 0.3 s against 2.7 s of Newton steps for zero-one; abstain on a
        56% part of satimage at ``lam = 1e-4``: 1.0 s against 15 s), Newton steps elsewhere.

    Returns
    -------
    TrainingResult
        ``theta = A.ravel()`` (the best ``J`` met, evaluated exactly with ``F = K A``), the
        certified ``gap`` and ``message`` (``'certified'`` exactly when
        ``gap <= tol * max(1, |objective|)``).

    Raises
    ------
    ValueError
        For a norm ball other than the RKHS 2-norm, or an unknown ``method``.
    NotApplicableError
        For the other obstacles of :func:`kernel_obstacle`.
    """
    obstacle = kernel_obstacle(game, uncertainty)
    if obstacle is not None and obstacle.startswith("NormBall"):
        raise ValueError(f"fit_kernel: {obstacle}.")
    if obstacle is not None:
        raise NotApplicableError(f"fit_kernel cannot certify this problem: {obstacle}.")
    if method not in ("auto", "newton", "dual"):
        raise ValueError(f"method must be 'auto', 'newton' or 'dual'; got {method!r}.")
    dual_obstacle = _dual_obstacle(game, uncertainty, A0)
    if method == "dual" and dual_obstacle is not None:
        raise NotApplicableError(f"fit_kernel(method='dual'): {dual_obstacle}.")
    if method != "newton" and dual_obstacle is None:
        return fit_kernel_dual(game, K, y, weights, uncertainty, tol, max_iter, warn)
    smooth = smoothed_game(game)
    n, k = K.shape[0], game.n_labels
    L = game.loss.matrix
    scale = max(float(np.max(L) - np.min(L)), 1e-12)
    mu = 0.1 * scale if mu0 is None else mu0
    radius = getattr(uncertainty, "radius", 1.0)
    index = np.arange(n)
    A = np.zeros((n, k)) if A0 is None else np.array(A0, dtype=float).reshape(n, k)
    F = _kernel_product(K, A)
    best_value, best_A, lower = np.inf, A.copy(), -np.inf
    # the Newton directions in single precision on large problems (the potentials drift from
    # K A by about 1e-7 relative; they are recomputed in double precision at every stage, and
    # the objective and the bound always are)
    single = n >= KERNEL_SINGLE_ROWS and tol >= KERNEL_SINGLE_TOL
    working = K.astype(np.float32) if single else K

    def evaluate(A, F, mu):
        """``J_mu``, the gradient factor ``g``, the state kept for the checks."""
        value_mu, Q, exact, curvature = smooth(F, mu)
        observed = F[index, y]
        norm2 = float(np.einsum("ij,ij->", A, F))
        penalty, s = kernel_regularizer(uncertainty, norm2, mu / radius**2)
        gradient = Q * weights[:, None]
        gradient[index, y] -= weights
        gradient += s * A
        state = (Q, exact - observed, norm2, s, curvature)
        return float(weights @ (value_mu - observed)) + penalty, gradient, state

    def check(A, F, state):
        """The exact ``J`` (best kept) and the smoothing part of the gap."""
        nonlocal best_value, best_A
        Q, losses, norm2, s, _ = state
        penalty = kernel_regularizer(uncertainty, norm2)[0]
        J = float(weights @ losses) + penalty
        if J < best_value:
            best_value, best_A = J, A.copy()
        entropy = entropies(L, Q)
        inner = float(weights @ (losses + F[index, y] - entropy - np.einsum("ij,ij->i", F, Q)))
        if isinstance(uncertainty, NormBall):
            inner += penalty - s * norm2
        return max(inner, 0.0)

    n_iter, stages, stalls, message, damping = 0, 1, 0, "", 0.0
    J_mu, gradient, state = evaluate(A, F, mu)
    while True:
        inner = check(A, F, state)
        target = tol * max(1.0, abs(best_value))
        s, curvature = state[3], state[4]()
        # smaller mu, sharper curvature: solve more accurately (measured on iris at tol=1e-6:
        # 1,000 steps did not certify with the CG tolerance fixed at 1e-2, 130 did with 1e-4)
        cg_tol = min(KERNEL_CG_TOL, 10.0 * mu / scale)
        dA, KdA = _kernel_newton_step(working, gradient, curvature, weights, s, cg_tol, damping)
        slope = float(np.einsum("ij,ij->", gradient, KdA))
        if slope >= 0:  # an inexact solve that is no descent direction: scaled gradient
            dA = -gradient / s
            KdA = _kernel_product(working, dA)
            slope = float(np.einsum("ij,ij->", gradient, KdA))
        # -slope / 2 estimates J_mu - min J_mu (the Newton decrement): the bound (one product
        # with K) is computed only when the gap may be certified or the stage may end
        decrement = -0.5 * slope
        if decrement <= max(inner, target) or decrement + inner <= target or stalls:
            lower = max(lower, kernel_dual_bound(game, K, y, weights, uncertainty, state[0]))
            gap = best_value - lower
            if gap <= target:
                message = "certified"
                break
            if gap - inner <= max(inner, 0.5 * target):
                stalls = 0
                if mu * MU_SHRINK < 1e-14 * scale:
                    message = f"stalled at mu={mu:.1e}"
                    break
                mu *= MU_SHRINK
                stages += 1
                F = _kernel_product(K, A) if working is not K else F  # drop the drift
                J_mu, gradient, state = evaluate(A, F, mu)
                continue
        if n_iter >= max_iter:
            message = f"max_iter={max_iter} reached"
            break
        n_iter += 1
        t = 1.0
        while t > 1e-12 and slope < 0:
            A_t, F_t = A + t * dA, F + t * KdA
            J_t, gradient_t, state_t = evaluate(A_t, F_t, mu)
            if J_t <= J_mu + 1e-4 * t * slope:
                A, F, J_mu, gradient, state = A_t, F_t, J_t, gradient_t, state_t
                stalls = 0
                break
            t *= 0.5
        else:  # no step decreases J_mu: a smaller mu, or give up
            stalls += 1
            if stalls >= MAX_STALLS or mu * MU_SHRINK < 1e-14 * scale:
                message = f"stalled at mu={mu:.1e}"
                break
            mu *= MU_SHRINK
            stages += 1
            F = _kernel_product(K, A) if working is not K else F
            J_mu, gradient, state = evaluate(A, F, mu)
        # Levenberg-Marquardt damping in the K metric: shorter steps where the smoothed
        # adversaries change piece within a full step
        damping = damping * DAMPING_DOWN if t == 1.0 else max(damping, s) * DAMPING_UP / t
    # the objective of the returned coefficients with the potentials recomputed from K
    F_best = _kernel_product(K, best_A)
    norm2 = float(np.einsum("ij,ij->", best_A, F_best))
    value = game.value_and_adversary(F_best)[0]
    best_value = float(weights @ (value - F_best[index, y]))
    best_value += kernel_regularizer(uncertainty, norm2)[0]
    gap = max(best_value - lower, 0.0)
    certified = gap <= tol * max(1.0, abs(best_value))
    if message == "certified" and not certified:
        message = "certified, then lost to rounding in the final evaluation"
    if not certified:
        message = f"{message}: gap {gap:.2e} above tol={tol:g} * max(1, |J|) after {stages} stages"
        if warn:
            _warn_uncertified("kernel solver", message, best_value)
    limit_reached = message.startswith("max_iter")
    return TrainingResult(best_A.ravel(), best_value, n_iter, message, gap, limit_reached)


__all__ += ["fit_kernel_dual", "fit_linear_dual", "linear_dual_obstacle"]

#: Seed of the row order of :func:`fit_kernel_dual` (a fresh permutation every epoch), fixed
#: so that fits are reproducible.
DUAL_SEED = 0
#: Shrinking in :func:`fit_kernel_dual`: a row whose adversary has stayed at its label for
#: this many epochs and is a best response leaves the active set.  Measured on optdigits
#: (3,934 rows, 10 labels) and digits (1,257): 19 and 21 epochs to the certified ``1e-4``
#: (20 and 21 without shrinking) in 0.65x and 0.75x the time; 2 epochs shrink rows that come
#: back (24 and 31 epochs), 5-8 are slower.
SHRINK_EPOCHS = 4
#: The rows whose potentials and Gram matrix :func:`fit_kernel_dual` keeps are cut down to
#: the active ones when these are fewer than this fraction of them (a gather of ``K``: twice
#: per fit on optdigits, from 3,934 to 1,879 rows after the fourth epoch, then to about
#: 1,200; 0.5 and 0.85 measured 5% slower).
SHRINK_KEPT = 0.75


#: :func:`fit_linear_dual` with ``switch``: it gives up when more than ``DENSE_MOVED`` of the
#: rows ``PROBE_ROWS / 2`` to ``PROBE_ROWS`` that it visits first move (problems with more rows
#: than ``PROBE_ROWS``), or more than ``DENSE_ACTIVE`` of the rows are still active after
#: ``DENSE_EPOCHS`` epochs (the measurements in its docstring: 0.39-0.50 against 0.84-0.88
#: moved, 0.33-0.57 against 0.68-1.00 active).
PROBE_ROWS, DENSE_MOVED = 1_000, 0.7
DENSE_EPOCHS, DENSE_ACTIVE = 2 * SHRINK_EPOCHS, 0.6


def linear_dual_obstacle(objective: Any) -> str | None:
    r"""Why :func:`fit_linear_dual` does not apply to ``objective``, or None.

    The ascent's per-row step is the quadratically smoothed zero-one or abstain game (Fathony
    et al. 2018a, Theorems 5 and 12), its dual needs the smooth ``R^*(g) = ||g||^2 / (2 lam)`` of soft
    moments (Farnia and Tse 2016, Theorem 3), and it keeps ``W = Theta^T`` of the features
    ``phi(x, j) = e_j ⊗ x``.

    Parameters
    ----------
    objective : SurrogateObjective
        The learning problem (its game, uncertainty set and feature map are read).

    Returns
    -------
    str or None
        A sentence naming the obstacle (neither the zero-one nor the abstain game with
        ``alpha <= 1/2``, not soft moments, not
        :class:`advgame.features.Multiclass` features), or None when the ascent applies.
    """
    if not isinstance(objective.fmap, Multiclass):
        return "the linear dual ascent keeps Theta^T for the multiclass features e_j ⊗ x"
    return _dual_obstacle(objective.game, objective.uncertainty, None)


def _dual_obstacle(game, uncertainty, A0):
    """Why :func:`fit_kernel_dual` does not apply, or None."""
    structure = game.structure
    if (
        structure is None
        or structure.kind not in ("zero_one", "abstain")
        or not structure.has_closed_form
    ):
        return (
            "the per-row ascent step is the smoothed zero-one or abstain game (zero-one losses, "
            "or abstain with alpha <= 1/2)"
        )
    if not isinstance(uncertainty, SoftMoments):
        return "the per-row ascent step needs soft moments (a smooth R*)"
    if A0 is not None and np.any(np.asarray(A0) != 0):
        return "it starts from A = 0, where the dual point (Q = the labels) is known"
    return None


def _ascent_game(game):
    """``(c, floor)`` of the per-row step (:func:`advgame._kernels._ascent_step`): the weight
    and ``floor = 1 - alpha`` for the abstain game, 0 for zero-one; and ``max(1, J(0))`` per
    unit of weight, ``J(0) = V(0) = c (1 - max(1/k, floor))``."""
    structure = game.structure
    floor = 1.0 - structure.alpha if structure.kind == "abstain" else 0.0
    return structure.weight, floor, structure.weight * (1.0 - max(1.0 / game.n_labels, floor))


def _dual_inputs(K, y, weights, k, name="K"):
    """``K`` (finite, C-contiguous float64; square unless ``name`` is ``'X'``), ``y`` (indices
    in ``0..k-1``) and ``weights`` (non-negative, summing to a positive total) checked: the
    compiled epochs read them without bounds checks."""
    K = np.ascontiguousarray(as_float_array(name, K))
    if name == "K" and (K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] == 0):
        raise ValueError(f"K must be a square, non-empty Gram matrix; got shape {K.shape}.")
    if K.ndim != 2 or 0 in K.shape:
        raise ValueError(f"X must be a non-empty 2-D design matrix; got shape {K.shape}.")
    if not np.isfinite(K.sum()):  # one pass with no boolean temporary (measured 1.2x faster)
        check_finite(name, K)  # names the entry (or passes: finite entries whose sum overflows)
    n = K.shape[0]
    y = as_labels(y, n, k)
    weights = as_float_array("weights", weights)
    if weights.shape != (n,):
        raise ValueError(
            f"weights must have shape ({n},), one per row of {name}; got {weights.shape}."
        )
    check_finite("weights", weights)
    if np.any(weights < 0) or not weights.sum() > 0:
        raise ValueError("weights must be non-negative with a positive sum.")
    return K, y, weights


def _dual_primal(FT, y, weights, game):
    """The loss part ``sum_i w_i (V(f_i) - f_{i,y_i})`` of ``J`` at the potentials ``FT``."""
    F = FT.T
    structure = game.structure
    if structure.kind == "abstain":
        value = closed_forms.abstain(F, structure.alpha, structure.weight)[0]
    else:
        value = closed_forms._zero_one_set(F, structure.weight)[0]
    return float(weights @ (value - F[np.arange(y.size), y]))


def _columns(FT, columns):
    """``FT[:, columns]`` C-contiguous (numpy's gather along the last axis is not), as the
    compiled epoch needs for loops it can vectorise."""
    return np.ascontiguousarray(FT[:, columns])


def fit_kernel_dual(
    game: Any,
    K: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray,
    uncertainty: SoftMoments,
    tol: float = 1e-4,
    max_iter: int = 1000,
    warn: bool = True,
) -> TrainingResult:
    r"""Certified kernel training of the zero-one or abstain game by dual coordinate ascent.

    The dual of the kernel learning problem with soft moments (:func:`kernel_dual_bound`,
    Fathony et al. 2018a, Theorem 2; Farnia and Tse 2016, Theorem 3) is

    .. math::  \max_{q_i \in \Delta} \sum_i w_i H(q_i)
               - \frac{1}{2\lambda} \operatorname{tr}(G^\top K G),
               \qquad G = W (E_y - Q), \quad A = G / \lambda, \quad F = K A,

    with ``H(q) = c (1 - max_j q_j)`` for zero-one and ``H(q) = min(c (1 - max_j q_j), c
    alpha)`` for abstain (``alpha <= 1/2``; Fathony et al. 2018a, Theorem 12).  With the other
    rows fixed, row ``i``'s best ``q`` maximises ``H(q) + q^T f_i - (s_i/2) ||q - q_i||^2``,
    ``s_i = w_i K_ii / lam``: the quadratically smoothed zero-one game (:func:`advgame.closed_forms.zero_one_quadratic_smoothing`)
    with ``mu = s_i`` at ``f_i + s_i q_i``, for abstain followed by a projection onto the
    simplex capped at ``1 - alpha`` when its largest entry is below that
    (:func:`advgame._kernels._ascent_step`), an exact step in closed form, as LIBLINEAR's
    Crammer-Singer solver maximises its dual one sample at a time.  Rows are visited in a
    fresh random order every epoch (seed :data:`DUAL_SEED`) in compiled code
    (:func:`advgame._kernels.kernel_dual_epoch`); a row that moves updates the potentials
    with its row of ``K``, once per label whose ``q_ij`` moved.  It starts from ``Q = E_y``
    (``A = 0``).

    The gap ``J(A) - D(Q)`` is the sum of the rows' gaps ``w_i (V(f_i) - q_i^T f_i -
    H(q_i)) >= 0``, 0 exactly when ``q_i`` is a best response to ``f_i``, a fixed point of its
    step (:func:`advgame._kernels.dual_row_gaps`).  Shrinking, as in LIBSVM and LIBLINEAR:
    a row whose ``q`` has stayed at its label for :data:`SHRINK_EPOCHS` epochs with gap 0
    leaves the active set; only the active rows are visited and only their potentials are
    updated, with the rows of ``K`` restricted to the kept rows (gathered again when fewer
    than :data:`SHRINK_KEPT` of them are active).  When the active rows' running gaps add up
    to ``tol * max(1, |J|)`` (or the budget is spent), the check recomputes ``F = K A``
    exactly from ``Q`` alone (``A = G / lam``, :func:`advgame._kernels.kernel_potentials`),
    then ``J(A)`` and the bound :func:`kernel_dual_bound` (``tr(G^T K G)`` from the same
    product), independently of the running potentials, and stops when ``J - D <= tol *
    max(1, |J|)``; otherwise every row whose exact gap is open, shrunk or not, is active
    again.  The certificate covers all rows.  Measured on optdigits (3,934 rows, Gaussian
    kernel, ``lam = 1/n``): 19 epochs to a certified ``1e-4``, the last 15 over 1,900 to 1,100
    active rows, in 0.65x the time without shrinking.

    Parameters
    ----------
    game : Game
        A zero-one game, or an abstain game with ``alpha <= 1/2``, with its closed form
        (weight ``c``).
    K : ndarray of shape (n, n)
        The symmetric Gram matrix ``K(X, X)`` of the training inputs (finite).
    y : ndarray of shape (n,)
        Label indices in ``0..k-1``.
    weights : ndarray of shape (n,)
        Normalised sample weights (non-negative; a row of weight 0 never moves).
    uncertainty : SoftMoments
        ``R = lam/2 ||theta||_H^2``.
    tol : float
        The certified relative gap to reach.
    max_iter : int
        Epochs at most (the last one is always checked).
    warn : bool
        Warn (``ConvergenceWarning``) when the certified gap stays above ``tol``.

    Returns
    -------
    TrainingResult
        ``theta = A.ravel()``, the exact ``objective`` ``J(A)``, ``n_iter`` (epochs),
        ``message`` (``'certified'`` exactly when the checked gap is within ``tol``) and the
        certified ``gap``.

    Raises
    ------
    NotApplicableError
        For a loss other than zero-one or abstain (``alpha <= 1/2``) or an uncertainty set
        other than soft moments.
    ValueError
        For a ``K`` that is not square and finite, labels outside ``0..k-1`` or weights of the
        wrong shape, negative or summing to zero.
    """
    obstacle = _dual_obstacle(game, uncertainty, None)
    if obstacle is not None:
        raise NotApplicableError(f"fit_kernel_dual: {obstacle}.")
    K, y, weights = _dual_inputs(K, y, weights, game.n_labels)
    n, k = K.shape[0], game.n_labels
    L, lam = game.loss.matrix, uncertainty.lam
    weight, floor, start = _ascent_game(game)
    rows = np.flatnonzero(weights > 0)  # a row of weight 0 keeps q = e_y and A = 0
    Q = np.zeros((n, k))
    Q[np.arange(n), y] = 1.0
    coef = weights / lam
    # a row with K_ii = 0 moves no potential: its step is the exact game's (mu -> 0)
    curvature = np.maximum(coef * np.diag(K), 1e-12 * weight)
    still = np.zeros(n, dtype=np.int64)
    rng = np.random.default_rng(DUAL_SEED)
    # the running potentials FC and the Gram matrix KC of the rows `kept`, a superset of the
    # active rows (at the positions `active` in it)
    kept, active = rows, np.arange(rows.size)
    KC, FC = _submatrix(K, kept), np.zeros((k, kept.size))
    best_value, best_A, lower, gap = np.inf, np.zeros((n, k)), -np.inf, np.inf
    # max(1, J(0)) >= max(1, J*) until a check: J(0) = sum_i w_i V(0)
    scale = max(1.0, start * float(weights.sum()))
    message, epoch = "", 0
    while not message:
        epoch += 1
        order = rng.permutation(active)
        _kernels.kernel_dual_epoch(FC, KC, Q, order, kept, coef, curvature, weight, floor, still)
        row_gaps = _kernels.dual_row_gaps(FC, Q, kept, weights, weight, floor)
        left, running = _kernels.dual_shrink(row_gaps, Q, y, active, kept, still, SHRINK_EPOCHS)
        active = active[:left]
        if active.size < SHRINK_KEPT * kept.size:
            KC = _kernels.submatrix(K, kept[active], KC, active)
            kept, FC, active = kept[active], _columns(FC, active), np.arange(active.size)
        last = epoch >= max_iter
        if running > tol * scale and not last:
            continue
        # the active rows' gaps may be closed (or the budget is spent): check exactly, with
        # the potentials recomputed from Q alone and the bound from the same product
        G, support = _residual(Q, y, weights)
        P = _kernels.kernel_potentials(K, G, support)  # (K G)^T = lam F^T
        norm2 = float(np.einsum("ij,ji->", G[support], P[:, support]))  # tr(G^T K G)
        FT = P / lam
        J = _dual_primal(FT, y, weights, game) + 0.5 * max(norm2, 0.0) / lam
        if J < best_value:
            best_value, best_A = J, G / lam
        lower = max(lower, _residual_bound(L, y, weights, uncertainty, Q, norm2))
        gap, scale = max(best_value - lower, 0.0), max(1.0, abs(best_value))
        if gap <= tol * scale:
            message = "certified"
        elif last:
            message = (
                f"max_iter={max_iter} reached: gap {gap:.2e} above tol={tol:g} * max(1, |J|) "
                f"after {epoch} epochs"
            )
            if warn:
                _warn_uncertified("kernel dual ascent", message, best_value)
        else:
            # unshrink: every row whose exact gap is open is active again, with the exact
            # potentials; KC gains the rows of K of those that were no longer kept
            open_rows = _kernels.dual_row_gaps(_columns(FT, rows), Q, rows, weights, weight, floor)
            now = np.union1d(kept[active], rows[open_rows > 0])
            position = np.searchsorted(kept, now)
            position[kept[np.minimum(position, kept.size - 1)] != now] = -1  # not kept
            if np.any(position < 0):
                KC, kept, position = (
                    _kernels.submatrix(K, now, KC, position),
                    now,
                    np.arange(now.size),
                )
            active, FC = position, _columns(FT, kept)
    limit_reached = message.startswith("max_iter")
    return TrainingResult(best_A.ravel(), best_value, epoch, message, gap, limit_reached)


def fit_linear_dual(
    game: Any,
    X: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray,
    uncertainty: SoftMoments,
    tol: float = 1e-4,
    max_iter: int = 1000,
    warn: bool = True,
    switch: bool = False,
) -> TrainingResult:
    r"""Certified linear training of the zero-one or abstain game by dual coordinate ascent.

    The linear case of :func:`fit_kernel_dual` (``K = X X^T``) with the weights kept instead
    of the potentials, as LIBLINEAR keeps ``w`` for its Crammer-Singer solver: for the
    multiclass features ``phi(x, j) = e_j ⊗ x`` (:class:`advgame.features.Multiclass`, ``X``
    with its constant column) and soft moments the dual (Fathony et al. 2018a, Theorem 2;
    Farnia and Tse 2016, Theorem 3) is

    .. math::  \max_{q_i \in \Delta} \sum_i w_i H(q_i)
               - \frac{1}{2\lambda} \|X^\top G\|_F^2,
               \qquad G = W (E_y - Q), \quad \Theta = X^\top G / \lambda, \quad F = X \Theta.

    Each epoch visits the active rows in a fresh random order (seed :data:`DUAL_SEED`) in
    compiled code (:func:`advgame._kernels.linear_dual_epoch`): row ``i``'s potentials
    ``f_i = Theta^T x_i`` cost ``O(k p)``, its exact step is the one of the kernel solver
    (``s_i = w_i ||x_i||^2 / lam``), and a move updates ``Theta`` with ``x_i`` once per label
    whose ``q_ij`` moved.  The rows' gaps at their potentials after their step add up to the
    running gap; shrinking is that of :func:`fit_kernel_dual` (:data:`SHRINK_EPOCHS`).  When
    the running gap is within ``tol * max(1, |J|)`` (or the budget is spent), the check
    recomputes ``Theta = X^T G / lam`` and ``F = X Theta`` from ``Q`` alone (two products),
    then ``J(Theta)`` and the bound :func:`kernel_dual_bound` (``||X^T G||^2 = tr(G^T K G)``),
    independently of the running weights, and stops when ``J - D <= tol * max(1, |J|)``;
    otherwise every row whose exact gap is open is active again, from the exact ``Theta``.

    Its epochs cost ``O(k p)`` per active row, and it needs many of them when many rows stay
    active (rows that keep a loss: noisy labels); the smoothing solver's steps cost the same
    whatever the rows do.  With ``switch`` it therefore gives up early (message ``'dense:
    ...'``, after an exact check, no warning) for :func:`fit_smoothed` to go on from its
    point: when more than :data:`DENSE_MOVED` of the rows it visits after the first
    ``PROBE_ROWS / 2`` (up to :data:`PROBE_ROWS`) move, or more than :data:`DENSE_ACTIVE` of the rows are still active after
    :data:`DENSE_EPOCHS` epochs.  Measured (one BLAS thread, ``lam = 1/n``, ``tol = 1e-4``,
    standardised 70% training parts; "moved": the share of the rows visited 500-1,000 of the
    first epoch that moved, "active": the share still active after 8 epochs), with the time of
    smoothing alone:

    ===================  ======  ==============  ================  ===============
    data                 rows    moved / active  dual ascent       smoothing
    ===================  ======  ==============  ================  ===============
    digits               1,257   0.43 / 0.45     309 ep., 0.08 s   406 st., 0.40 s
    optdigits            3,934   0.39 / 0.33     716 ep., 0.28 s   288 st., 0.58 s
    segment              1,617   0.42 / 0.57     406 ep., 0.13 s   170 st., 0.13 s
    satimage             4,504   0.50 / 0.68     776 ep., 0.91 s   210 st., 0.28 s
    make_classification  1,999   0.84 / 0.99     1,260 ep., 1.5 s  59 st., 0.05 s
    make_classification  19,999  0.88 / 1.00     1,092 ep., 16 s   38 st., 0.13 s
    ===================  ======  ==============  ================  ===============

    Parameters
    ----------
    game : Game
        A zero-one game, or an abstain game with ``alpha <= 1/2``, with its closed form
        (weight ``c``).
    X : ndarray of shape (n, p)
        The design matrix (finite), with a column of ones for the intercepts.
    y : ndarray of shape (n,)
        Label indices in ``0..k-1``.
    weights : ndarray of shape (n,)
        Normalised sample weights (non-negative; a row of weight 0 never moves).
    uncertainty : SoftMoments
        ``R = lam/2 ||Theta||_F^2``.
    tol : float
        The certified relative gap to reach.
    max_iter : int
        Epochs at most (the last one is always checked).
    warn : bool
        Warn (``ConvergenceWarning``) when the certified gap stays above ``tol``.
    switch : bool
        Give up early where :func:`fit_smoothed` is the faster method (see above).

    Returns
    -------
    TrainingResult
        ``theta = Theta.ravel()`` (``Theta`` of shape ``(p, k)``, the layout of
        :class:`advgame.features.Multiclass`), the exact ``objective`` ``J(Theta)``,
        ``n_iter`` (epochs), ``message`` (``'certified'`` exactly when the checked gap is
        within ``tol``) and the certified ``gap``.

    Raises
    ------
    NotApplicableError
        For a loss other than zero-one or abstain (``alpha <= 1/2``) or an uncertainty set
        other than soft moments.
    ValueError
        For an ``X`` that is not 2-D and finite, labels outside ``0..k-1`` or weights of the
        wrong shape, negative or summing to zero.
    """
    obstacle = _dual_obstacle(game, uncertainty, None)
    if obstacle is not None:
        raise NotApplicableError(f"fit_linear_dual: {obstacle}.")
    X, y, weights = _dual_inputs(X, y, weights, game.n_labels, name="X")
    (n, p), k = X.shape, game.n_labels
    L, lam = game.loss.matrix, uncertainty.lam
    weight, floor, start = _ascent_game(game)
    rows, every = np.flatnonzero(weights > 0), np.arange(n)
    Q = np.zeros((n, k))
    Q[every, y] = 1.0
    coef = weights / lam
    # a zero row moves no weight: its step is the exact game's (mu -> 0)
    curvature = np.maximum(coef * np.einsum("ij,ij->i", X, X), 1e-12 * weight)
    still, row_gaps = np.zeros(n, dtype=np.int64), np.zeros(n)
    rng = np.random.default_rng(DUAL_SEED)
    WT, active = np.zeros((k, p)), rows.copy()
    best_value, best_theta, lower, gap = np.inf, np.zeros(p * k), -np.inf, np.inf
    scale = max(1.0, start * float(weights.sum()))  # max(1, J(0))
    message, epoch, dense = "", 0, ""
    while not message:
        epoch += 1
        order = rng.permutation(active)
        if switch and epoch == 1 and order.size > PROBE_ROWS:
            # the first rows all move (W = 0 at first): count the moves of the next ones
            half = PROBE_ROWS // 2
            first, probe, order = order[:half], order[half:PROBE_ROWS], order[PROBE_ROWS:]
            for part in (first, probe):
                moved = _kernels.linear_dual_epoch(
                    WT, X, Q, part, weights, coef, curvature, weight, floor, still, row_gaps
                )
            if moved > DENSE_MOVED * probe.size:
                dense = f"{moved} of the rows {half}-{PROBE_ROWS} visited first moved"
        if not dense:
            _kernels.linear_dual_epoch(
                WT, X, Q, order, weights, coef, curvature, weight, floor, still, row_gaps
            )
            left, running = _kernels.dual_shrink(
                row_gaps, Q, y, active, every, still, SHRINK_EPOCHS
            )
            active = active[:left]
            if switch and epoch == DENSE_EPOCHS and left > DENSE_ACTIVE * rows.size:
                dense = f"{left} of {rows.size} rows still active after {epoch} epochs"
        last = epoch >= max_iter
        if not dense and running > tol * scale and not last:
            continue
        G, support = _residual(Q, y, weights)
        WT = (G[support].T @ X[support]) / lam  # Theta^T, from Q alone
        FT = WT @ X.T
        norm2 = lam * lam * float(np.einsum("ij,ij->", WT, WT))  # ||X^T G||^2
        J = _dual_primal(FT, y, weights, game) + 0.5 * norm2 / lam
        if J < best_value:
            best_value, best_theta = J, WT.T.ravel()
        lower = max(lower, _residual_bound(L, y, weights, uncertainty, Q, norm2))
        gap, scale = max(best_value - lower, 0.0), max(1.0, abs(best_value))
        if gap <= tol * scale:
            message = "certified"
        elif dense:
            message = f"dense: {dense}; gap {gap:.2e} above tol={tol:g} * max(1, |J|)"
        elif last:
            message = (
                f"max_iter={max_iter} reached: gap {gap:.2e} above tol={tol:g} * max(1, |J|) "
                f"after {epoch} epochs"
            )
            if warn:
                _warn_uncertified("linear dual ascent", message, best_value)
        else:  # unshrink every row whose exact gap is open
            open_rows = _kernels.dual_row_gaps(_columns(FT, rows), Q, rows, weights, weight, floor)
            active = np.union1d(active, rows[open_rows > 0])
    limit_reached = message.startswith("max_iter")
    return TrainingResult(best_theta, best_value, epoch, message, gap, limit_reached)
