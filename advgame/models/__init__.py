"""scikit-learn estimators built on the games."""

from .classifier import AdversarialClassifier
from .minimax import (
    FeatureSelection,
    MinimaxClassifier,
    MinimaxRegressor,
    robust_feature_selection,
)

__all__ = [
    "AdversarialClassifier",
    "FeatureSelection",
    "MinimaxClassifier",
    "MinimaxRegressor",
    "robust_feature_selection",
]
