r"""The classifier's solver policy: which solver ``solver='auto'`` runs, and how ``certify``
finishes an uncertified one.

The certified solvers (:func:`certified_fit`) are the smoothing family: exact-kernel Newton steps
or dual ascent (:func:`advgame.solvers.fit_kernel`) for kernel features, otherwise linear dual
ascent (:func:`advgame.solvers.fit_linear_dual`) handing over to the smoothing steps
(:func:`advgame.solvers.fit_smoothed`) where it applies, and the smoothing steps alone elsewhere.
``solver='auto'`` picks the compiled program or one of them by a rule measured by ``advgame bench
auto`` (:func:`auto_solver`, stated for a problem by :func:`describe_auto_choice`; the table is
docs/results/auto.md): compile for exact matching, LP balls with few rows per parameter and
small-radius SOCP balls, certified L-BFGS for the other LP balls, smoothing for soft moments,
kernels, larger SOCP balls and large problems.  The other solvers
(L-BFGS, AdaGrad, PEGASOS) are certified afterwards by cutting planes
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
from ..uncertainty import NormBall, SoftMoments
from ._progress import Progress
from .cutting_plane import refine_cutting_plane
from .dual_ascent import _dual_obstacle, fit_linear_dual, linear_dual_obstacle
from .first_order import TrainingResult, fit_adagrad, fit_lbfgs, fit_pegasos
from .kernel import fit_kernel, kernel_obstacle
from .smoothing import fit_smoothed, smoothing_obstacle

__all__ = [
    "auto_solver",
    "certified_fit",
    "certified_obstacle",
    "AUTO_RULE",
    "describe_auto_choice",
    "fit_first_order",
]

#: ``certify='auto'`` refines L-BFGS by cutting planes when ``n_samples * n_params`` is at most
#: this (and finishes with the certified smoothing solver beyond).
AUTO_CERTIFY_SIZE = 200_000
#: ``solver='auto'`` on a moment norm ball compiles the exact LP / SOCP up to this many game rows
#: (``n k``) and runs the certified smoothing solver beyond (the l1 ball's LP on 1,000 optdigits
#: rows, 10,000 game rows, ran past HiGHS's 300 s limit), or for an SOCP ball of radius from
#: :data:`AUTO_SOCP_SMOOTHING_RADIUS` L-BFGS certified by the smoothing solver from its point
#: (5,000 optdigits rows, l2 ball 0.01: 0.39 s against smoothing's 0.51 s in two runs; its
#: Newton-CG steps cost more than L-BFGS's).
AUTO_BALL_COMPILE_ROWS = 5_000
#: On the SOCP balls (l2, group) of at least this radius, ``solver='auto'`` smooths (measured
#: 1.2-8x faster than the SOCP, 6.4x for a general loss on vehicle's l2 ball), except the
#: zero-one and general losses on a group ball up to :data:`AUTO_SOCP_SMALL_ROWS` game rows,
#: which are compiled (1.0-1.1x the fastest there, smoothing 1.2-2.1x), and a general loss with
#: fewer than :data:`AUTO_LBFGS_ROWS_PER_PARAM` game rows per parameter, also compiled (100
#: optdigits rows with a cost matrix, 1.5 rows per parameter: the SOCP 1.36-1.39 s, smoothing
#: 1.60-2.10 s in two runs).
AUTO_SOCP_SMOOTHING_RADIUS = 0.01
#: See :data:`AUTO_SOCP_SMOOTHING_RADIUS`.
AUTO_SOCP_SMALL_ROWS = 1_000
#: The linf ball (moments within ``radius`` coordinate-wise) of at least this radius, with a
#: closed-form loss, is smoothed: there the regulariser ``radius ||theta||_1`` keeps the optimum
#: at or near ``theta = 0``, which smoothing certifies in a few steps (measured under 0.01 s
#: against 0.9-5 s compiled; with a general loss the compiled LP stays faster).
AUTO_LINF_SMOOTHING_RADIUS = 0.1
#: On an LP ball (l1, linf) with at least this many game rows (``n k``) per parameter, ``solver=
#: 'auto'`` runs L-BFGS, certified afterwards by cutting planes (whose master stays in one HiGHS
#: model, :class:`advgame.compile.highs.RowGeneration`): the compiled LP grows with the rows and
#: the master with the parameters.  Measured on one idle core (``advgame bench auto``): from 4.6
#: rows per parameter (300 optdigits rows) to 67 (800 red wine rows) L-BFGS is the fastest or
#: within 1.2x on all but one of the 48 LP-ball problems (the compiled LP up to 3.7x slower);
#: at 1.5 (100 optdigits rows, 650 parameters) the compiled LP is the fastest on all but one.
AUTO_LBFGS_ROWS_PER_PARAM = 3
#: Kernel features on an RKHS ball (``NormBall``) of radius below this run L-BFGS, certified
#: afterwards: with radius 0.01 the exact-Gram smoothing solver stopped uncertified on the zero-one
#: loss (its gap stalls near 3e-4 relative; 150 and 300 optdigits rows) where L-BFGS certified at
#: 300 rows in 1.8 s, and with a cost matrix L-BFGS was the fastest (1.07-1.16x faster); from
#: radius 0.1 smoothing is the fastest or within 1.02x (14x faster than L-BFGS with the zero-one
#: loss).
AUTO_KERNEL_LBFGS_RADIUS = 0.1
#: Where the smoothing solver does not apply (nor exact matching), ``solver='auto'`` compiles up
#: to this many game rows and runs L-BFGS (certified afterwards) beyond.
AUTO_COMPILE_ROWS = 2_000
#: Rounds of the cutting planes that certify a first-order result, at most.
CUTTING_ROUNDS = 30


def certified_obstacle(game: Any, uncertainty: Any, fmap: Any) -> str | None:
    """Why the certified smoothing solver (:func:`advgame.solvers.fit_kernel` for kernel
    features, :func:`advgame.solvers.fit_smoothed` otherwise) does not apply, or None."""
    if isinstance(fmap, KernelFeatures):
        return kernel_obstacle(game, uncertainty)
    return smoothing_obstacle(game, uncertainty, fmap)


def _auto_choice(game: Any, uncertainty: Any, fmap: Any, n_samples: int) -> tuple[str, str]:
    """``(solver, reason)``: the rule of ``solver='auto'`` (:func:`auto_solver`)."""
    obstacle = certified_obstacle(game, uncertainty, fmap)
    rows = n_samples * game.n_labels
    size = f"{n_samples:,} samples x {game.n_labels} classes = {rows:,} game rows"
    if obstacle == "exact":
        return "compile", (
            "exact moment matching: the compiled LP is exact, and the first-order solvers' dual "
            "bound needs a moment set with interior"
        )
    if obstacle is not None:
        if rows <= AUTO_COMPILE_ROWS:
            return (
                "compile",
                f"no certified smoothing ({obstacle}); {size} <= {AUTO_COMPILE_ROWS:,}",
            )
        return "lbfgs", (
            f"no certified smoothing ({obstacle}) and {size} > {AUTO_COMPILE_ROWS:,}: L-BFGS, "
            "certified afterwards"
        )
    if isinstance(fmap, KernelFeatures):
        radius = uncertainty.radius if isinstance(uncertainty, NormBall) else None
        if radius is not None and radius < AUTO_KERNEL_LBFGS_RADIUS:
            return "lbfgs", (
                f"kernel features on an RKHS ball of radius < {AUTO_KERNEL_LBFGS_RADIUS:g}: "
                "L-BFGS, certified afterwards (the exact-Gram solver's gap stalls on small balls)"
            )
        return "smoothing", "kernel features: the exact-Gram certified solver (fit_kernel)"
    if isinstance(uncertainty, SoftMoments):
        return "smoothing", (
            "soft moments: the certified smoothing solver (dual ascent, then smoothing steps), "
            "the fastest certified answer at every measured size"
        )
    norm = uncertainty.norm if isinstance(uncertainty, NormBall) else None
    radius = uncertainty.radius if isinstance(uncertainty, NormBall) else 0.0
    ball = type(uncertainty).__name__
    if norm is not None:
        ball = f"NormBall(radius={radius:.3g}, norm={norm!r})"
    socp = norm in (2, "group")
    if rows > AUTO_BALL_COMPILE_ROWS:
        if socp and radius >= AUTO_SOCP_SMOOTHING_RADIUS:
            return "lbfgs", (
                f"{ball} (an SOCP) of radius >= {AUTO_SOCP_SMOOTHING_RADIUS:g} on {size} > "
                f"{AUTO_BALL_COMPILE_ROWS:,}: L-BFGS, then certified by the smoothing solver "
                "from its point (fewer Newton-CG steps than smoothing from zero)"
            )
        return "smoothing", (
            f"{ball} on {size} > {AUTO_BALL_COMPILE_ROWS:,}: the certified smoothing solver "
            "(the compiled program grows too slow)"
        )
    structure = game.structure.kind
    small = rows <= AUTO_SOCP_SMALL_ROWS
    per_param = rows / fmap.n_params
    if socp and radius >= AUTO_SOCP_SMOOTHING_RADIUS:
        if norm == "group" and structure in ("zero_one", "general") and small:
            return "compile", (
                f"{ball} on {size}: the compiled SOCP, faster than smoothing for the {structure} "
                f"loss on a group ball up to {AUTO_SOCP_SMALL_ROWS:,} game rows"
            )
        if structure == "general" and per_param < AUTO_LBFGS_ROWS_PER_PARAM:
            return "compile", (
                f"{ball} with a general loss on {size}, {per_param:.1f} game rows per "
                f"parameter < {AUTO_LBFGS_ROWS_PER_PARAM}: the compiled SOCP, faster than "
                "smoothing (whose general-loss steps cost more per parameter)"
            )
        return "smoothing", (
            f"{ball} (an SOCP) of radius >= {AUTO_SOCP_SMOOTHING_RADIUS:g} with the "
            f"{structure} loss on {size}: the certified smoothing solver beats the SOCP"
        )
    if norm == np.inf and radius >= AUTO_LINF_SMOOTHING_RADIUS and structure != "general":
        return "smoothing", (
            f"{ball} of radius >= {AUTO_LINF_SMOOTHING_RADIUS:g} with the {structure} loss on "
            f"{size}: the l1 regulariser keeps theta (nearly) at 0, which smoothing certifies "
            "in a few steps"
        )
    if not socp and per_param >= AUTO_LBFGS_ROWS_PER_PARAM:
        return "lbfgs", (
            f"{ball} on {size}, {per_param:.0f} game rows per parameter >= "
            f"{AUTO_LBFGS_ROWS_PER_PARAM}: L-BFGS certified by cutting planes beats the LP, "
            "which grows with the rows"
        )
    kind = "SOCP" if socp else "LP"
    return "compile", (
        f"{ball} on {size} <= {AUTO_BALL_COMPILE_ROWS:,}: the compiled {kind}, faster than "
        "smoothing on LP balls and small radii"
    )


#: The rule of ``solver='auto'`` in one paragraph (``PredictionGame.explain()`` prints it for the
#: simplex family; :func:`describe_auto_choice` states it for one problem).
AUTO_RULE = (
    "AdversarialClassifier(solver='auto') picks by a rule measured by 'advgame bench auto' "
    "(docs/results/auto.md: at most 1.2x, median 1.00x, the CPU time of the fastest certified "
    "solver on each of 135 problems): the compiled program for exact moment matching, for l1 and linf balls up "
    f"to {AUTO_BALL_COMPILE_ROWS:,} game rows (n k) with fewer than {AUTO_LBFGS_ROWS_PER_PARAM} "
    "game rows per parameter, for l2 and group balls of radius below "
    f"{AUTO_SOCP_SMOOTHING_RADIUS:g}, for the zero-one and general losses on group balls up "
    f"to {AUTO_SOCP_SMALL_ROWS:,} game rows and for a general loss on an l2 or group ball with "
    f"fewer than {AUTO_LBFGS_ROWS_PER_PARAM} game rows per parameter; L-BFGS (then certified) "
    "on the LP balls with more rows per parameter, on l2 and group balls of radius from "
    f"{AUTO_SOCP_SMOOTHING_RADIUS:g} beyond {AUTO_BALL_COMPILE_ROWS:,} game rows and on RKHS "
    "balls of radius below "
    f"{AUTO_KERNEL_LBFGS_RADIUS:g}; the certified smoothing solver for soft moments, other kernel "
    "fits, the other l2 / group balls and larger LP balls; L-BFGS where no smoothing applies "
    f"beyond {AUTO_COMPILE_ROWS:,} game rows. The fitted model's solver_reason_ says which "
    "branch applied."
)


def auto_solver(game: Any, uncertainty: Any, fmap: Any, n_samples: int) -> str:
    """The solver ``solver='auto'`` runs on ``n_samples`` rows: ``'compile'``, ``'smoothing'``
    or ``'lbfgs'``, by the measured rule that :func:`describe_auto_choice` states."""
    return _auto_choice(game, uncertainty, fmap, n_samples)[0]


def describe_auto_choice(game: Any, uncertainty: Any, fmap: Any, n_samples: int) -> str:
    """The rule of ``solver='auto'`` for this problem, as one line: ``"<solver>: <reason>"``.

    Parameters
    ----------
    game : Game
        The per-sample game (its loss structure and number of labels ``k``).
    uncertainty : UncertaintySet
        The moment set (its type and radius).
    fmap : FeatureMap
        The fitted feature map (kernel features or explicit ones).
    n_samples : int
        The training rows ``n``; the compiled program has ``n k`` game rows.

    Returns
    -------
    str
        E.g. ``"compile: a moment norm ball up to 10,000 game rows (...)"``; the measurements
        behind the rule are in docs/results/auto.md (``advgame bench auto``).
    """
    solver, reason = _auto_choice(game, uncertainty, fmap, n_samples)
    return f"{solver}: {reason} (measured: docs/results/auto.md)"


def certified_fit(
    objective: Any,
    theta0: np.ndarray,
    tol: float,
    max_iter: int,
    warn: bool,
    progress: Any = None,
    reason: str = "",
    then: str | None = None,
    dual0: np.ndarray | None = None,
) -> TrainingResult:
    """The certified smoothing solver from ``theta0``: with the exact Gram matrix ``K(X, X)``
    (the bound operator's, computed once) for kernel features; linear dual ascent first where
    it applies, from the dual point ``dual0`` (a warm start) or else from ``Q = E_y`` (it gives
    up, uncertified and silently, where the smoothing steps are faster, which then go on from
    its point, or from ``theta0`` when that is given without ``dual0``; ``n_iter`` counts
    both).  A start ``theta0 != 0`` or ``dual0`` skips the smoothing's coarse subsample
    (:func:`~advgame.solvers.fit_smoothed`'s ``coarse``): the start is already the solution of
    a neighbouring problem.

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
    warm = dual0 is not None or np.any(theta0)
    if linear_dual_obstacle(o) is None:
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
            Q0=dual0,
        )
        if ascent.message == "certified":
            return _ended(phase, ascent, then)
        phase.finish(ascent, handover="smoothing")
        start = theta0 if dual0 is None and warm else ascent.theta
        origin = "the warm start" if start is theta0 else "the dual ascent's point"
        phase = progress.phase("smoothing", f"from {origin}", "step", max_iter)
        result = fit_smoothed(o, start, tol, max_iter, warn=warn, coarse=not warm, progress=phase)
        result.n_iter += ascent.n_iter
        return _ended(phase, result, then)
    phase = progress.phase("smoothing", reason, "step", max_iter)
    result = fit_smoothed(o, theta0, tol, max_iter, warn=warn, coarse=not warm, progress=phase)
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
    theta0: np.ndarray | None = None,
    dual0: np.ndarray | None = None,
) -> tuple[TrainingResult, int]:
    """Certified smoothing (``'smoothing'``), or L-BFGS, averaged AdaGrad or PEGASOS
    (``'lbfgs'``, ``'subgradient'``, ``'pegasos'``) then, by ``certify``, certification.

    ``'smoothing'`` runs :func:`certified_fit` and, when it stops above ``tol`` on a problem of
    at most :data:`AUTO_CERTIFY_SIZE` ``n * p``, finishes by cutting planes.  It may start warm
    (a regularisation path, ``warm_start``): the linear dual ascent from the dual point
    ``dual0`` where it applies (:func:`advgame.solvers.dual_ascent.rescaled_dual` moves a
    previous one to the new strength), else the smoothing steps from ``theta0``; without
    ``dual0`` the ascent starts cold where it applies (from ``Q = E_y``: at strong
    regularisation it certifies within a few epochs, faster than smoothing steps from
    ``theta0``) and, where it gives up, the smoothing steps go on from ``theta0``, not from the
    ascent's point (``advgame bench defaults``, part 2, the fourth run, which measured this
    choice: ``AdversarialClassifierCV`` over 10 strengths x 5 folds took 0.54-0.83x the CPU
    time of a ``GridSearchCV`` of cold fits on digits, optdigits, satimage, segment and 20,000
    synthetic rows, against 0.65-1.08x when the smoothing restarted from the ascent's point;
    docs/results/defaults.md, where the later runs give today's ratios).  The
    certificate is a cold fit's, so a warm fit reaches the same certified optimum.  The others
    start at 0 and are certified by cutting planes when ``certify`` is True, or ``'auto'`` up
    to that size; ``'auto'`` beyond finishes with :func:`certified_fit` from their result where
    it applies (a ``ConvergenceWarning`` and an ``'uncertified ...'`` message where it does
    not); ``False`` leaves them uncertified.  ``report`` (a line callback, or a
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
    warm = theta0 is not None and solver == "smoothing"
    if not warm:
        theta0, dual0 = np.zeros(fmap.n_params), None
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
            "warm start" if warm else f"solver={solver!r}",
            cutting if small else None,
            dual0,
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
        # the user's fit: fit_first_order <- AdversarialClassifier._fit_rows <- fit
        warnings.warn(result.message, ConvergenceWarning, stacklevel=4)
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
