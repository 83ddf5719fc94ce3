"""scikit-learn estimators built on the games."""

from .classifier import AdversarialClassifier
from .graphical import AdversarialGraphicalModel, StructuredSVM
from .minimax import (
    FeatureSelection,
    MinimaxClassifier,
    MinimaxRegressor,
    robust_feature_selection,
)
from .projection import LabelRanker, ProjectionClassifier

__all__ = [
    "AdversarialClassifier",
    "AdversarialGraphicalModel",
    "StructuredSVM",
    "LabelRanker",
    "ProjectionClassifier",
    "FeatureSelection",
    "MinimaxClassifier",
    "MinimaxRegressor",
    "robust_feature_selection",
]
