r"""The classifier's solver policy: which solver ``solver='auto'`` runs, and how ``certify``
finishes an uncertified one.

The certified solvers (:func:`certified_fit`) are the smoothing family: exact-kernel Newton steps
or dual ascent (:func:`advgame.solvers.fit_kernel`) for kernel features, otherwise linear dual
ascent (:func:`advgame.solvers.fit_linear_dual`) handing over to the smoothing steps
(:func:`advgame.solvers.fit_smoothed`) where it applies, and the smoothing steps alone elsewhere.
``solver='auto'`` runs them wherever they apply (:func:`auto_solver`); the other solvers (L-BFGS,
AdaGrad, PEGASOS) are certified afterwards by cutting planes
(:func:`advgame.solvers.refine_cutting_plane`) while ``n * p`` is at most
:data:`AUTO_CERTIFY_SIZE`, and by the certified solvers from their result beyond
(:func:`fit_first_order`).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..exceptions import ConvergenceWarning
from ..features import KernelFeatures
from ..uncertainty import SoftMoments
from .cutting_plane import refine_cutting_plane
from .dual_ascent import fit_linear_dual, linear_dual_obstacle
from .first_order import TrainingResult, fit_adagrad, fit_lbfgs, fit_pegasos
from .kernel import fit_kernel, kernel_obstacle
from .smoothing import fit_smoothed, smoothing_obstacle

__all__ = ["auto_solver", "certified_fit", "certified_obstacle", "fit_first_order"]

#: ``certify='auto'`` refines L-BFGS by cutting planes when ``n_samples * n_params`` is at most
#: this (and finishes with the certified smoothing solver beyond).
AUTO_CERTIFY_SIZE = 200_000
#: ``solver='auto'`` compiles the exact program, when the smoothing solver does not apply, up to
#: this many game rows (n k).  Where smoothing applies it is the default at every size: measured
#: (one BLAS thread, ``tol=1e-4``) 1.4-11x faster than the compiled program at 300-2,000 game
#: rows with linear features (zero-one, ordinal, abstain) and 25-240x with an RBF kernel.
AUTO_COMPILE_ROWS = 2_000


def certified_obstacle(game: Any, uncertainty: Any, fmap: Any) -> str | None:
    """Why the certified smoothing solver (:func:`advgame.solvers.fit_kernel` for kernel
    features, :func:`advgame.solvers.fit_smoothed` otherwise) does not apply, or None."""
    if isinstance(fmap, KernelFeatures):
        return kernel_obstacle(game, uncertainty)
    return smoothing_obstacle(game, uncertainty, fmap)


def auto_solver(game: Any, uncertainty: Any, fmap: Any, n_samples: int) -> str:
    """``solver='auto'``: ``'smoothing'`` wherever it applies, ``'compile'`` for exact moment
    matching and up to :data:`AUTO_COMPILE_ROWS` game rows (``n_samples * k``), ``'lbfgs'``
    beyond."""
    obstacle = certified_obstacle(game, uncertainty, fmap)
    if obstacle is None:
        return "smoothing"
    game_rows = n_samples * game.n_labels
    return "compile" if obstacle == "exact" or game_rows <= AUTO_COMPILE_ROWS else "lbfgs"


def certified_fit(
    objective: Any, theta0: np.ndarray, tol: float, max_iter: int, warn: bool
) -> TrainingResult:
    """The certified smoothing solver from ``theta0``: with the exact Gram matrix ``K(X, X)``
    (the bound operator's, computed once) for kernel features; linear dual ascent first from
    ``theta0 = 0`` where it applies (it gives up, uncertified and silently, where the smoothing
    steps are faster, which then go on from its point; ``n_iter`` counts both)."""
    o = objective
    if isinstance(o.fmap, KernelFeatures):
        gram = o.operator.X1  # the bound kernel operator's K(X, X_fit), X_fit = X
        return fit_kernel(
            o.game, gram, o.y, o.weights, o.uncertainty, theta0, tol, max_iter, warn=warn
        )
    if linear_dual_obstacle(o) is None and not np.any(theta0):
        X1 = o.operator.X1
        ascent = fit_linear_dual(
            o.game, X1, o.y, o.weights, o.uncertainty, tol, max_iter, warn=False, switch=True
        )
        if ascent.message == "certified":
            return ascent
        result = fit_smoothed(o, ascent.theta, tol, max_iter, warn=warn)
        result.n_iter += ascent.n_iter
        return result
    return fit_smoothed(o, theta0, tol, max_iter, warn=warn)


def fit_first_order(
    objective: Any,
    solver: str,
    certify: str | bool,
    tol: float,
    max_iter: int,
    batch_size: int,
    random_state: Any,
    report: Any = None,
) -> tuple[TrainingResult, int]:
    """Certified smoothing (``'smoothing'``), or L-BFGS, averaged AdaGrad or PEGASOS
    (``'lbfgs'``, ``'subgradient'``, ``'pegasos'``) then, by ``certify``, certification.

    ``'smoothing'`` runs :func:`certified_fit` and, when it stops above ``tol`` on a problem of
    at most :data:`AUTO_CERTIFY_SIZE` ``n * p``, finishes by cutting planes.  The others are
    certified by cutting planes when ``certify`` is True, or ``'auto'`` up to that size;
    ``'auto'`` beyond finishes with :func:`certified_fit` from their result where it applies
    (a ``ConvergenceWarning`` and an ``'uncertified ...'`` message where it does not);
    ``False`` leaves them uncertified.  ``report`` is called with the smoothing's outcome.

    Returns
    -------
    (result, n_iter)
        The final result and the iterations of every solver run.

    Raises
    ------
    ValueError
        For ``'pegasos'`` without kernel features and soft moments.
    """
    fmap, uncertainty = objective.fmap, objective.uncertainty
    theta0 = np.zeros(fmap.n_params)
    small = objective.y.size * fmap.n_params <= AUTO_CERTIFY_SIZE
    if solver == "smoothing":
        # warns (with the certified gap) when it cannot certify within tol
        result = certified_fit(objective, theta0, tol, max_iter, warn=not small)
        n_iter = result.n_iter
        if report is not None:
            report(f"smoothing: {result.message} after {n_iter} steps, gap {result.gap:.2g}")
        if result.message != "certified" and small:
            # finish exactly by cutting planes (warns when that cannot certify either)
            result = refine_cutting_plane(objective, result.theta, tol=tol)
            n_iter += result.n_iter
        return result, n_iter
    if solver == "lbfgs":
        escape = {"batch_size": batch_size, "random_state": random_state}
        result = fit_lbfgs(objective, theta0, max_iter, tol, escape=escape)
    elif solver == "subgradient":
        result = fit_adagrad(objective, theta0, max_iter, batch_size, random_state=random_state)
    else:
        if not isinstance(fmap, KernelFeatures) or not isinstance(uncertainty, SoftMoments):
            raise ValueError(
                "solver='pegasos' is Fathony et al. (2018a), Algorithm 1: it needs a kernel (kernel=...) and "
                "the ridge objective of uncertainty='soft'."
            )
        gram = objective.operator.X1  # the bound kernel operator's K(X, X_fit)
        o = objective
        result = fit_pegasos(
            o.game, gram, o.y, o.weights, uncertainty.lam, max_iter, batch_size, random_state
        )
        result.objective = float(objective(result.theta)[0])
    n_iter = result.n_iter
    obstacle = None
    if certify is True or (certify == "auto" and small):
        # warns (with the certified gap) when it cannot certify within tol
        result = refine_cutting_plane(objective, result.theta, tol=tol)
        n_iter += result.n_iter
    elif certify == "auto":
        obstacle = certified_obstacle(objective.game, uncertainty, fmap)
    if certify == "auto" and not small and obstacle is None:
        result = certified_fit(objective, result.theta, tol, max_iter, warn=True)
        n_iter += result.n_iter
    elif certify == "auto" and not small:
        result.message = (
            f"uncertified {solver}: {result.message} (too large for cutting planes and "
            f"no smoothing certificate: {obstacle})"
        )
        warnings.warn(result.message, ConvergenceWarning, stacklevel=3)
    elif not certify:
        result.message = f"uncertified {solver}: {result.message}"
    return result, n_iter
