"""advgame: robust (adversarial, distributionally robust) prediction as declared minimax games.

A loss matrix, a feature map, an uncertainty set and a polytope define a game; advgame solves it
exactly (HiGHS / cvxpy) or through closed-form fast paths.  The design notes (docs/design.md,
"Stable public names") list the public names.
"""

from . import (
    closed_forms,
    datasets,
    decoding,
    features,
    inference,
    losses,
    metrics,
    polytopes,
    uncertainty,
    verify,
    vertices,
)
from .declaration import PredictionGame
from .exceptions import ConvergenceWarning, NotApplicableError, SizeLimitError, SolverError
from .game import Game
from .graph import GraphGame
from .losses import LossMatrix
from .models import (
    AdversarialClassifier,
    AdversarialGraphicalModel,
    AdversarialMatching,
    GeneralizedPredictionSet,
    LabelRanker,
    MinimaxClassifier,
    MinimaxRegressor,
    ProjectionClassifier,
    StructuredSVM,
    error_rate_curve,
    robust_feature_selection,
)
from .permutation import PermutationGame
from .polytopes import FenchelYoungLoss
from .uncertainty import Exact, MomentBalls, NormBall, SoftMoments

__version__ = "0.1.0"

__all__ = [
    "AdversarialClassifier",
    "AdversarialGraphicalModel",
    "AdversarialMatching",
    "StructuredSVM",
    "ProjectionClassifier",
    "GeneralizedPredictionSet",
    "error_rate_curve",
    "LabelRanker",
    "MinimaxClassifier",
    "MinimaxRegressor",
    "robust_feature_selection",
    "Exact",
    "Game",
    "PredictionGame",
    "MomentBalls",
    "GraphGame",
    "PermutationGame",
    "FenchelYoungLoss",
    "NormBall",
    "SoftMoments",
    "LossMatrix",
    "ConvergenceWarning",
    "NotApplicableError",
    "SizeLimitError",
    "SolverError",
    "closed_forms",
    "datasets",
    "decoding",
    "features",
    "inference",
    "losses",
    "metrics",
    "polytopes",
    "uncertainty",
    "verify",
    "vertices",
    "__version__",
]
