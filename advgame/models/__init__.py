"""scikit-learn estimators built on the games."""

from .classifier import AdversarialClassifier
from .graphical import AdversarialGraphicalModel, StructuredSVM
from .minimax import (
    FeatureSelection,
    MinimaxClassifier,
    MinimaxRegressor,
    robust_feature_selection,
)

__all__ = [
    "AdversarialClassifier",
    "AdversarialGraphicalModel",
    "StructuredSVM",
    "FeatureSelection",
    "MinimaxClassifier",
    "MinimaxRegressor",
    "robust_feature_selection",
]
