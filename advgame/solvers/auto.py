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
from ._progress import Progress
from .cutting_plane import refine_cutting_plane
from .dual_ascent import _dual_obstacle, fit_linear_dual, linear_dual_obstacle
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
#: Rounds of the cutting planes that certify a first-order result, at most.
CUTTING_ROUNDS = 30


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
    objective: Any,
    theta0: np.ndarray,
    tol: float,
    max_iter: int,
    warn: bool,
    progress: Any = None,
    reason: str = "",
    then: str | None = None,
) -> TrainingResult:
    """The certified smoothing solver from ``theta0``: with the exact Gram matrix ``K(X, X)``
    (the bound operator's, computed once) for kernel features; linear dual ascent first from
    ``theta0 = 0`` where it applies (it gives up, uncertified and silently, where the smoothing
    steps are faster, which then go on from its point; ``n_iter`` counts both).

    ``progress`` (a :class:`advgame.solvers._progress.Progress`, or a line callback) gets a
    phase per solver run, the first saying why it runs (``reason``), the last ``handing over
    to`` ``then`` when it stops above ``tol`` (the caller's next solver, if any)."""
    o, progress = objective, Progress.of(progress)
    if isinstance(o.fmap, KernelFeatures):
        gram = o.operator.X1  # the bound kernel operator's K(X, X_fit), X_fit = X
        dual = _dual_obstacle(o.game, o.uncertainty, theta0) is None
        name, unit = ("kernel dual ascent", "epoch") if dual else ("kernel Newton", "step")
        phase = progress.phase(name, reason, unit, max_iter)
        result = fit_kernel(
            o.game,
            gram,
            o.y,
            o.weights,
            o.uncertainty,
            theta0,
            tol,
            max_iter,
            warn=warn,
            progress=phase,
        )
        return _ended(phase, result, then)
    if linear_dual_obstacle(o) is None and not np.any(theta0):
        X1 = o.operator.X1
        phase = progress.phase("linear dual ascent", reason, "epoch", max_iter)
        ascent = fit_linear_dual(
            o.game,
            X1,
            o.y,
            o.weights,
            o.uncertainty,
            tol,
            max_iter,
            warn=False,
            switch=True,
            progress=phase,
        )
        if ascent.message == "certified":
            return _ended(phase, ascent, then)
        phase.finish(ascent, handover="smoothing")
        phase = progress.phase("smoothing", "from the dual ascent's point", "step", max_iter)
        result = fit_smoothed(o, ascent.theta, tol, max_iter, warn=warn, progress=phase)
        result.n_iter += ascent.n_iter
        return _ended(phase, result, then)
    phase = progress.phase("smoothing", reason, "step", max_iter)
    result = fit_smoothed(o, theta0, tol, max_iter, warn=warn, progress=phase)
    return _ended(phase, result, then)


def _ended(phase, result, then):
    """End ``phase`` with ``result``, handing over to ``then`` unless it certified."""
    phase.finish(result, handover=None if result.message == "certified" else then)
    return result


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
    ``False`` leaves them uncertified.  ``report`` (a line callback, or a
    :class:`advgame.solvers._progress.Progress` carrying the estimator's ``verbose``) hears a
    line per solver run (phase) and, at ``verbose >= 2``, per iteration block.

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
    progress = Progress.of(report)
    theta0 = np.zeros(fmap.n_params)
    size = objective.y.size * fmap.n_params
    small = size <= AUTO_CERTIFY_SIZE
    cutting = "cutting planes"
    why_cutting = f"n * p = {size:,} <= {AUTO_CERTIFY_SIZE:,}: certified exactly"
    if solver == "smoothing":
        # warns (with the certified gap) when it cannot certify within tol
        result = certified_fit(
            objective,
            theta0,
            tol,
            max_iter,
            not small,
            progress,
            f"solver={solver!r}",
            cutting if small else None,
        )
        n_iter = result.n_iter
        if result.message != "certified" and small:
            # finish exactly by cutting planes (warns when that cannot certify either)
            result = _cutting_planes(objective, result.theta, tol, progress, why_cutting)
            n_iter += result.n_iter
        return result, n_iter
    exact = certify is True or (certify == "auto" and small)
    obstacle = None
    if certify == "auto" and not small:
        obstacle = certified_obstacle(objective.game, uncertainty, fmap)
    if exact:
        then = cutting
    else:
        then = "the certified solver" if certify == "auto" and obstacle is None else None
    if solver == "lbfgs":
        phase = progress.phase("L-BFGS", f"solver={solver!r}", "iteration", max_iter)
        escape = {"batch_size": batch_size, "random_state": random_state}
        result = fit_lbfgs(objective, theta0, max_iter, tol, escape=escape, progress=phase)
    elif solver == "subgradient":
        phase = progress.phase("averaged AdaGrad", f"solver={solver!r}", "epoch", max_iter)
        result = fit_adagrad(
            objective, theta0, max_iter, batch_size, random_state=random_state, progress=phase
        )
    else:
        if not isinstance(fmap, KernelFeatures) or not isinstance(uncertainty, SoftMoments):
            raise ValueError(
                "solver='pegasos' is Fathony et al. (2018a), Algorithm 1: it needs a kernel (kernel=...) and "
                "the ridge objective of uncertainty='soft'."
            )
        gram = objective.operator.X1  # the bound kernel operator's K(X, X_fit)
        o = objective
        phase = progress.phase("PEGASOS", f"solver={solver!r}", "epoch", max_iter)
        result = fit_pegasos(
            o.game,
            gram,
            o.y,
            o.weights,
            uncertainty.lam,
            max_iter,
            batch_size,
            random_state,
            progress=phase,
        )
        result.objective = float(objective(result.theta)[0])
    phase.finish(result, handover=then)
    n_iter = result.n_iter
    if exact:
        # warns (with the certified gap) when it cannot certify within tol
        why = "certify=True" if certify is True else why_cutting
        result = _cutting_planes(objective, result.theta, tol, progress, why)
        n_iter += result.n_iter
    elif certify == "auto" and obstacle is None:
        result = certified_fit(
            objective,
            result.theta,
            tol,
            max_iter,
            True,
            progress,
            f"certify='auto', n * p = {size:,} > {AUTO_CERTIFY_SIZE:,}: from {solver}'s point",
        )
        n_iter += result.n_iter
    elif certify == "auto":
        result.message = (
            f"uncertified {solver}: {result.message} (too large for cutting planes and "
            f"no smoothing certificate: {obstacle})"
        )
        warnings.warn(result.message, ConvergenceWarning, stacklevel=3)
    elif not certify:
        result.message = f"uncertified {solver}: {result.message}"
    return result, n_iter


def _cutting_planes(objective, theta, tol, progress, reason):
    """:func:`refine_cutting_plane` from ``theta`` as a phase of ``progress``."""
    phase = progress.phase("cutting planes", reason, "round", CUTTING_ROUNDS)
    result = refine_cutting_plane(
        objective, theta, tol=tol, max_rounds=CUTTING_ROUNDS, progress=phase
    )
    phase.finish(result)
    return result
