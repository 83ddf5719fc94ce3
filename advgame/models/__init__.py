"""scikit-learn estimators built on the games.

Each estimator's module (and scikit-learn with it) is imported on first access (PEP 562).
"""

from .._lazy import lazy_attributes

#: Public name -> the module of this package that defines it.
_LAZY = {
    "AdversarialClassifier": ".classifier",
    "AdversarialClassifierCV": ".classifier_cv",
    "AdversarialGraphicalModel": ".graphical",
    "AdversarialMatching": ".matching",
    "StructuredSVM": ".graphical",
    "GeneralizedPredictionSet": ".prediction_sets",
    "error_rate_curve": ".prediction_sets",
    "LabelRanker": ".projection",
    "ProjectionClassifier": ".projection",
    "FeatureSelection": ".minimax",
    "MinimaxClassifier": ".minimax",
    "MinimaxClassifierCV": ".minimax_cv",
    "MinimaxRegressor": ".minimax",
    "robust_feature_selection": ".minimax",
}

__all__ = list(_LAZY)


__getattr__, __dir__ = lazy_attributes(globals(), _LAZY, __all__)
