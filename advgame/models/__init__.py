"""scikit-learn estimators built on the games."""

from .classifier import AdversarialClassifier
from .graphical import AdversarialGraphicalModel, StructuredSVM
from .matching import AdversarialMatching
from .minimax import (
    FeatureSelection,
    MinimaxClassifier,
    MinimaxRegressor,
    robust_feature_selection,
)
from .prediction_sets import GeneralizedPredictionSet, error_rate_curve
from .projection import LabelRanker, ProjectionClassifier

__all__ = [
    "AdversarialClassifier",
    "AdversarialGraphicalModel",
    "AdversarialMatching",
    "StructuredSVM",
    "GeneralizedPredictionSet",
    "error_rate_curve",
    "LabelRanker",
    "ProjectionClassifier",
    "FeatureSelection",
    "MinimaxClassifier",
    "MinimaxRegressor",
    "robust_feature_selection",
]
