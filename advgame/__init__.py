"""advgame: robust (adversarial, distributionally robust) prediction as declared minimax games.

A loss matrix, a feature map, an uncertainty set and a polytope define a game; advgame solves it
exactly (HiGHS / cvxpy) or through closed-form fast paths.  The design notes (docs/design.md,
"Stable public names") list the public names.

Every public name and submodule is imported on first access (PEP 562), so ``import advgame`` is
quick: scikit-learn, cvxpy, numba and scipy load only with the estimator, solver or kernel that
needs them.  Only highspy loads at once (:mod:`advgame._highs`): the first HiGHS model of a
process prints a banner, and importing advgame spends it silently, so that no later HiGHS model
(advgame's or cvxpy's) prints it.
"""

from . import _highs  # noqa: F401  (spends highspy's banner; see the docstring)
from ._lazy import lazy_attributes

__version__ = "0.1.0"

#: Public name -> the module (relative to this package) that defines it; ``None`` for the public
#: submodules.
_LAZY = {
    "AdversarialClassifier": ".models",
    "AdversarialClassifierCV": ".models",
    "AdversarialGraphicalModel": ".models",
    "AdversarialMatching": ".models",
    "StructuredSVM": ".models",
    "ProjectionClassifier": ".models",
    "GeneralizedPredictionSet": ".models",
    "error_rate_curve": ".models",
    "LabelRanker": ".models",
    "MinimaxClassifier": ".models",
    "MinimaxClassifierCV": ".models",
    "MinimaxRegressor": ".models",
    "robust_feature_selection": ".models",
    "Exact": ".uncertainty",
    "Game": ".game",
    "PredictionGame": ".declaration",
    "MomentBalls": ".uncertainty",
    "GraphGame": ".graph",
    "PermutationGame": ".permutation",
    "FenchelYoungLoss": ".polytopes",
    "NormBall": ".uncertainty",
    "SoftMoments": ".uncertainty",
    "LossMatrix": ".losses",
    "ConvergenceWarning": ".exceptions",
    "NotApplicableError": ".exceptions",
    "SizeLimitError": ".exceptions",
    "SolverError": ".exceptions",
    "verify_closed_form": ".verify",
    "latex_preamble": ".compile.latex",
    "closed_forms": None,
    "datasets": None,
    "decoding": None,
    "features": None,
    "inference": None,
    "losses": None,
    "metrics": None,
    "polytopes": None,
    "uncertainty": None,
    "verify": None,
    "vertices": None,
}

__all__ = [*_LAZY, "__version__"]


__getattr__, __dir__ = lazy_attributes(globals(), _LAZY, __all__)
