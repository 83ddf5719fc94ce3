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
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from scipy.optimize import minimize

from ..exceptions import ConvergenceWarning
from ..features import psd_eigen
from ..polytopes import FenchelYoungLoss, Polytope

__all__ = ["FittedScores", "LBFGS_MEMORY", "fit_fenchel_young"]

#: L-BFGS history size.
LBFGS_MEMORY = 20


class FittedScores(NamedTuple):
    """A trained linear score model ``theta = design @ coef + intercept`` and how training ended."""

    coef: np.ndarray
    intercept: np.ndarray
    objective: float
    n_iter: int


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
    callback: Callable[[int, float], None] | None = None,
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
    callback : callable or None
        ``callback(iteration, objective)`` after every L-BFGS iteration.
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
    w = weights / weights.sum()
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

    iterations = 0

    def report(intermediate_result):
        nonlocal iterations
        iterations += 1
        callback(iterations, intermediate_result.fun)

    result = minimize(
        objective,
        np.zeros(m * p + (p if fit_intercept else 0)),
        jac=True,
        method="L-BFGS-B",
        callback=None if callback is None else report,
        options={"maxiter": max_iter, "maxcor": LBFGS_MEMORY, "gtol": tol, "ftol": 0.0},
    )
    gradient = np.max(np.abs(result.jac)) if result.jac.size else 0.0
    if not result.success and gradient > tol:
        warnings.warn(
            f"L-BFGS stopped before convergence ({result.message}); the largest gradient "
            f"entry is {gradient:.3g} > tol={tol}. Increase max_iter or alpha.",
            ConvergenceWarning,
            stacklevel=stacklevel + 1,
        )
    coef = result.x[: m * p].reshape(m, p)
    return FittedScores(
        coef if root is None else root @ coef,
        result.x[m * p :] if fit_intercept else np.zeros(p),
        float(result.fun),
        int(result.nit),
    )
