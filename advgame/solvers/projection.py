r"""L-BFGS training of a linear or kernel score model on a projection (Fenchel-Young) loss.

The model gives scores :math:`\theta_i = W^\top z_i + b` and is trained on (Blondel 2019, §6,
Eq. 5-6)

.. math::  \min_{W, b}\ \sum_i w_i\, S^\Psi_{\mathcal C}(\theta_i, \varphi(y_i))
           + \frac{\alpha}{2} \|W\|_F^2,

a smooth convex objective whose gradient in :math:`\theta_i` is
:math:`P^\Psi_{\mathcal C}(\theta_i) - \varphi(y_i)`
(:class:`advgame.polytopes.FenchelYoungLoss`), so scipy's L-BFGS-B minimises it directly.
:class:`advgame.ProjectionClassifier` and :class:`advgame.LabelRanker` train with it.
"""

from __future__ import annotations

import copy
import warnings
from typing import Any, NamedTuple

import numpy as np
from scipy.optimize import minimize

from .._validation import unit_weights
from ..exceptions import ConvergenceWarning, NotApplicableError
from ..features import psd_eigen
from ..polytopes import FenchelYoungLoss, Polytope
from ._progress import Phase, quiet

__all__ = [
    "FittedScores",
    "LBFGS_MEMORY",
    "declared_fenchel_young",
    "fenchel_young_gap",
    "fit_fenchel_young",
    "fit_fenchel_young_game",
]

#: L-BFGS history size.
LBFGS_MEMORY = 20
#: How far outside the polytope (its own ``contains`` tolerance) the mixture point of a
#: bias's dual certificate may be: rounding only.
MIXTURE_ATOL = 1e-12


class FittedScores(NamedTuple):
    """A trained linear score model ``theta = design @ coef + intercept`` and how training
    ended: the objective, L-BFGS's iterations and a certified bound ``gap >= objective -
    optimum`` (:func:`fenchel_young_gap`; ``inf`` where weak duality gives none)."""

    coef: np.ndarray
    intercept: np.ndarray
    objective: float
    n_iter: int
    gap: float = np.inf


def fenchel_young_gap(
    loss: FenchelYoungLoss,
    Z: np.ndarray,
    T: np.ndarray,
    targets: np.ndarray,
    w: np.ndarray,
    alpha: float,
    objective: float,
    intercept: bool = False,
) -> float:
    r"""A certified bound on ``objective - optimum`` of the penalised Fenchel-Young problem,
    from a dual point built from the projections :math:`\hat\mu_i = \hat\mu(\theta_i)`.

    For any :math:`\mu_i \in \mathcal C` (with :math:`\sum_i w_i (\mu_i - y_i) = 0` when the
    model has a free bias), the Fenchel-Young inequality :math:`\Psi^*(\theta) \ge
    \langle\theta,\mu\rangle - \Psi(\mu)` and :math:`\min_W \langle W, M\rangle +
    \tfrac\alpha2\|W\|^2 = -\|M\|^2 / (2\alpha)` give weak duality (Blondel 2019, Eq. 5;
    Farnia and Tse 2016, Theorem 3)

    .. math::  J^* \ge \sum_i w_i\,[\Psi(y_i) - \Psi(\mu_i)] - \frac{1}{2\alpha}
               \Big\|\sum_i w_i\, z_i (\mu_i - y_i)^\top\Big\|_F^2 ,

    so ``objective`` minus this is a bound computed independently of the optimiser.  Without a
    bias :math:`\mu = \hat\mu`, tight at the optimum.  With one, the bias's moments must match
    exactly: with :math:`r = \sum_i w_i (\hat\mu_i - y_i)` and :math:`\bar y = \sum_i w_i y_i`,
    the mixture :math:`\mu_i = (1 - t)\hat\mu_i + t\,(\bar y - s r)`, :math:`t = 1 / (1 + s)`,
    has zero residual and lies in :math:`\mathcal C` when :math:`\bar y - s r` does; ``s`` is
    the largest such step (bisection), so ``t`` is of the order of :math:`\|r\|`, small at a
    converged fit.  ``inf`` when no such point exists (:math:`\bar y` on the boundary with
    :math:`r` pointing out) or ``alpha = 0``.
    """
    if alpha <= 0:
        return np.inf
    n = T.shape[0]
    mu = loss.polytope.project(T, loss.geometry)
    if intercept:
        Y = targets.reshape(n, -1)
        mean, r = w @ Y, w @ (mu.reshape(n, -1) - Y)
        shape = mu.shape[1:]
        inside = lambda s: bool(  # noqa: E731
            loss.polytope.contains((mean - s * r).reshape(shape), atol=MIXTURE_ATOL)
        )
        if not inside(0.0):
            return np.inf
        low, high = 0.0, 1.0
        while inside(high) and high < 1e300:
            low, high = high, 2.0 * high
        for _ in range(60):
            middle = 0.5 * (low + high)
            low, high = (middle, high) if inside(middle) else (low, middle)
        t = 1.0 / (1.0 + low)
        mu = (1.0 - t) * mu + t * (mean - low * r).reshape(shape)
    residual = (mu - targets).reshape(n, -1)
    M = Z.T @ (w[:, None] * residual)
    dual = float(w @ (loss.regularizer(targets) - loss.regularizer(mu)))
    dual -= float(np.sum(M * M)) / (2.0 * alpha)
    return max(objective - dual, 0.0)


def fit_fenchel_young(
    design: np.ndarray,
    targets: np.ndarray,
    weights: np.ndarray,
    polytope: Polytope,
    geometry: str,
    alpha: float,
    fit_intercept: bool = True,
    kernel: bool = False,
    max_iter: int = 1000,
    tol: float = 1e-6,
    progress: Phase | None = None,
    stacklevel: int = 2,
) -> FittedScores:
    r"""Minimise the weighted Fenchel-Young loss over ``polytope`` plus the squared-norm penalty.

    With ``kernel=True``, ``design`` is the Gram matrix :math:`K` of the training points and the
    model is :math:`\theta = K A + b` with penalty :math:`\frac{\alpha}{2}\operatorname{tr}(A^\top
    K A)`: the linear model on :math:`Z = K^{1/2}` (:math:`B = K^{1/2} A`, penalty
    :math:`\|B\|^2`), the same problem, as well conditioned as the linear one; ``coef`` is ``A``.

    Parameters
    ----------
    design : ndarray of shape (n, m)
        The features, or the Gram matrix with ``kernel=True``.
    targets : ndarray of shape (n, ...)
        The encodings :math:`\varphi(y_i)`, shaped as ``polytope``'s points.
    weights : ndarray of shape (n,)
        Sample weights (normalised here to sum to one).
    polytope : Polytope
        The projection set :math:`\mathcal C`.
    geometry : {'euclidean', 'kl'}
        The regulariser :math:`\Psi`.
    alpha : float >= 0
    fit_intercept : bool
        Add an unpenalised bias ``b``.
    kernel : bool
        Whether ``design`` is a Gram matrix.
    max_iter, tol : int, float
        L-BFGS iterations, and its stopping test on the largest gradient entry.
    progress : Phase or None
        The fit's progress phase (:mod:`advgame.solvers._progress`): one step per L-BFGS
        iteration, with its objective.
    stacklevel : int
        Of the ``ConvergenceWarning``, as for :func:`warnings.warn` called by the caller.

    Returns
    -------
    FittedScores
        ``coef`` of shape ``(m, p)`` with ``p`` the size of one target, ``intercept`` of shape
        ``(p,)`` (zeros without an intercept), the objective and L-BFGS's iteration count.

    Warns
    -----
    ConvergenceWarning
        When L-BFGS stops before the largest gradient entry falls to ``tol``.
    """
    root = None
    Z = design
    if kernel:
        U, s = psd_eigen(design)
        root = U / np.sqrt(s)  # maps B back to A = U s^{-1/2} B
        Z = U * np.sqrt(s)
    n, m = Z.shape
    shape = targets.shape[1:]
    p = int(np.prod(shape))
    w = unit_weights(weights)
    if hasattr(polytope, "warm_start"):  # iterative projections restart from the last duals
        polytope = copy.copy(polytope)
        polytope.warm_start = True
    loss = FenchelYoungLoss(polytope, geometry)

    def objective(params):
        W = params[: m * p].reshape(m, p)
        T = Z @ W + (params[m * p :] if fit_intercept else 0.0)
        with np.errstate(over="ignore"):  # exp overflow in a line-search trial is rejected
            value, G = loss._evaluate(T.reshape((n, *shape)), targets)
        G = w[:, None] * G.reshape(n, p)
        J = float(w @ value) + 0.5 * alpha * float(np.sum(W * W))
        grad_W = Z.T @ G + alpha * W
        parts = [grad_W.ravel()] + ([G.sum(axis=0)] if fit_intercept else [])
        return J, np.concatenate(parts)

    phase, iterations = quiet(progress), 0

    def report(intermediate_result):
        nonlocal iterations
        iterations += 1
        phase.step(iterations, objective=intermediate_result.fun)

    result = minimize(
        objective,
        np.zeros(m * p + (p if fit_intercept else 0)),
        jac=True,
        method="L-BFGS-B",
        callback=None if progress is None else report,
        options={"maxiter": max_iter, "maxcor": LBFGS_MEMORY, "gtol": tol, "ftol": 0.0},
    )
    gradient = np.max(np.abs(result.jac)) if result.jac.size else 0.0
    if not result.success and gradient > tol:
        warnings.warn(
            f"L-BFGS stopped before convergence ({result.message}); the largest gradient "
            f"entry is {gradient:.3g} > tol={tol}. Increase max_iter or strength.",
            ConvergenceWarning,
            stacklevel=stacklevel + 1,
        )
    coef = result.x[: m * p].reshape(m, p)
    T = (Z @ coef + (result.x[m * p :] if fit_intercept else 0.0)).reshape((n, *shape))
    gap = fenchel_young_gap(loss, Z, T, targets, w, alpha, float(result.fun), fit_intercept)
    return FittedScores(
        coef if root is None else root @ coef,
        result.x[m * p :] if fit_intercept else np.zeros(p),
        float(result.fun),
        int(result.nit),
        gap,
    )


def declared_fenchel_young(loss: Any, uncertainty: Any) -> tuple[str, float]:
    r"""``(geometry, alpha)`` of the estimator's problem that a declared Fenchel-Young game
    solves: the Brier entropy is the Euclidean geometry with potentials twice the scores, so
    soft moments of ``lam`` are ``alpha = 2 lam``; the Shannon entropy is the KL geometry with
    ``alpha = lam`` (:mod:`advgame.compile.fenchel_young` derives both); exact moments are
    ``alpha = 0``."""
    geometry = {"brier": "euclidean", "log": "kl"}.get(getattr(loss, "kind", None))
    if geometry is None:
        raise NotApplicableError(
            f"loss = {loss!r}: a Fenchel-Young game is declared with ag.losses.brier(d) "
            "(Euclidean) or ag.losses.log(d) (KL)."
        )
    lam = getattr(uncertainty, "lam", None)
    if lam is None and type(uncertainty).__name__ != "Exact":
        raise NotApplicableError(
            f"uncertainty = {uncertainty!r}: the projection-loss solver takes SoftMoments(lam) "
            "(the squared-norm penalty) or Exact(); compile the game for a norm ball."
        )
    scale = 2.0 if geometry == "euclidean" else 1.0
    return geometry, scale * (lam or 0.0)


def fit_fenchel_young_game(
    game: Any,
    fmap: Any,
    X: np.ndarray,
    targets: np.ndarray,
    weights: np.ndarray,
    max_iter: int = 1000,
    tol: float = 1e-6,
    progress: Phase | None = None,
    stacklevel: int = 2,
) -> FittedScores:
    r"""Solve the learning problem of a declared Fenchel-Young game (a generalised entropy over
    a polytope, :class:`advgame.PredictionGame`) by L-BFGS with the polytope's projection.

    ``game`` gives the geometry and penalty (:func:`declared_fenchel_young`) and the polytope;
    ``fmap`` is its feature map fitted on ``X``: :class:`~advgame.features.Multiclass` (a
    linear model; an intercept penalised with the rest when ``penalize_intercept``, else a
    free bias) or :class:`~advgame.features.KernelFeatures` (the kernel model on its training
    Gram matrix, with a free bias when ``fit_intercept``).  The scores are ``g / 2``
    (Euclidean) or ``g`` (KL) of the game's potentials, and the result is in the estimator's
    units (:func:`fit_fenchel_young`); ``game.compile(X, targets)`` is the same problem as one
    exact program (tested to 1e-6).
    """
    geometry, alpha = declared_fenchel_young(game.loss, game.uncertainty)
    kernel = hasattr(fmap, "gram")
    intercept = bool(fmap.fit_intercept)
    design = fmap.gram(X) if kernel else X
    folded = intercept and not kernel and fmap.penalize_intercept
    if folded:  # the bias is one more penalised feature
        design, intercept = np.hstack([X, np.ones((X.shape[0], 1))]), False
    fitted = fit_fenchel_young(
        design,
        targets,
        weights,
        game.polytope,
        geometry,
        alpha,
        fit_intercept=intercept,
        kernel=kernel,
        max_iter=max_iter,
        tol=tol,
        progress=progress,
        stacklevel=stacklevel + 1,
    )
    if folded:
        return fitted._replace(coef=fitted.coef[:-1], intercept=fitted.coef[-1])
    return fitted
