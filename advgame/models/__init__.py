"""scikit-learn estimators built on the games."""

from .classifier import AdversarialClassifier

__all__ = ["AdversarialClassifier"]
