r"""Every optimisation loop of the adversarial models, one module per algorithm family.

* :mod:`~advgame.solvers.first_order`: the surrogate objective ``J(theta)`` (Fathony et al.
  2018a, §6.1), :class:`TrainingResult`, L-BFGS, averaged AdaGrad and PEGASOS;
* :mod:`~advgame.solvers.certificates`: weak-duality lower bounds from any adversaries;
* :mod:`~advgame.solvers.smoothing`: the certified smoothing solver :func:`fit_smoothed` and the
  one smoothing continuation (:func:`~advgame.solvers.smoothing.continuation`) that it and the
  minimax models' FISTA stages share;
* :mod:`~advgame.solvers.kernel`: exact-kernel Newton steps and kernel dual coordinate ascent;
* :mod:`~advgame.solvers.dual_ascent`: linear dual coordinate ascent;
* :mod:`~advgame.solvers.cutting_plane`: the one cutting-plane loop, with the classifier's
  master (:func:`refine_cutting_plane`);
* :mod:`~advgame.solvers.fista`: accelerated proximal gradient for Farnia and Tse's models;
* :mod:`~advgame.solvers.structured`: the graphical models' objective, bounds and master;
* :mod:`~advgame.solvers.auto`: the classifier's ``solver='auto'`` and ``certify`` policy;
* the baseline SVMs' solvers, the interior-point scaffold and the prediction-set programs;
* :mod:`~advgame.solvers._progress`: the one progress reporter every loop above reports to
  (``verbose``: a line per phase, rate-limited iteration lines, a ``tqdm`` bar in a terminal).

This module re-exports the names ``advgame.solvers`` has always had.
"""

from __future__ import annotations

from .. import _kernels as _kernels  # patched by tests as advgame.solvers._kernels
from .certificates import dual_bound, entropies
from .cutting_plane import refine_cutting_plane
from .dual_ascent import (
    DENSE_ACTIVE,
    DENSE_EPOCHS,
    DENSE_MOVED,
    DUAL_SEED,
    PROBE_ROWS,
    SHRINK_EPOCHS,
    SHRINK_KEPT,
    fit_linear_dual,
    linear_dual_obstacle,
)
from .first_order import (
    KINK_EPOCHS,
    SurrogateObjective,
    TrainingResult,
    fit_adagrad,
    fit_lbfgs,
    fit_pegasos,
)
from .first_order import _Memory as _Memory
from .kernel import (
    DAMPING_DOWN,
    DAMPING_UP,
    KERNEL_CG_STEPS,
    KERNEL_CG_TOL,
    KERNEL_DIRECT_SIZE,
    KERNEL_SINGLE_ROWS,
    KERNEL_SINGLE_TOL,
    fit_kernel,
    fit_kernel_dual,
    kernel_dual_bound,
    kernel_obstacle,
    kernel_regularizer,
)
from .kernel import _kernel_cg as _kernel_cg
from .kernel import _kernel_direct as _kernel_direct
from .smoothing import (
    CG_STEPS,
    COARSE_MIN_ROWS,
    COARSE_STEP,
    COARSE_TOL,
    DEFAULT_METHOD,
    LBFGS_MEMORY,
    LBFGS_PATIENCE,
    MAX_SMOOTHED_VERTICES,
    MAX_STALLS,
    MU_SHRINK,
    NEWTON_STAGE_STEPS,
    SINGLE_MIN_ROWS,
    SmoothedSurrogate,
    fit_smoothed,
    smoothed_game,
    smoothing_obstacle,
)

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
    "fit_kernel",
    "kernel_dual_bound",
    "kernel_obstacle",
    "kernel_regularizer",
    "fit_kernel_dual",
    "fit_linear_dual",
    "linear_dual_obstacle",
    "DENSE_ACTIVE",
    "DENSE_EPOCHS",
    "DENSE_MOVED",
    "DUAL_SEED",
    "PROBE_ROWS",
    "SHRINK_EPOCHS",
    "SHRINK_KEPT",
    "KINK_EPOCHS",
    "DAMPING_DOWN",
    "DAMPING_UP",
    "KERNEL_CG_STEPS",
    "KERNEL_CG_TOL",
    "KERNEL_DIRECT_SIZE",
    "KERNEL_SINGLE_ROWS",
    "KERNEL_SINGLE_TOL",
    "CG_STEPS",
    "COARSE_MIN_ROWS",
    "COARSE_STEP",
    "COARSE_TOL",
    "DEFAULT_METHOD",
    "LBFGS_MEMORY",
    "LBFGS_PATIENCE",
    "MAX_SMOOTHED_VERTICES",
    "MAX_STALLS",
    "MU_SHRINK",
    "NEWTON_STAGE_STEPS",
    "SINGLE_MIN_ROWS",
]
