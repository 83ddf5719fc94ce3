"""Input checks shared by the estimators (one message style everywhere)."""

import numbers

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, validate_data

__all__ = ["check_iteration_params", "check_weights", "check_classification_fit"]


def check_iteration_params(estimator, integers=("max_iter",), check_tol=True):
    """``integers`` must be integers >= 1 and (if ``check_tol``) ``tol`` a finite positive number."""
    for name in integers:
        value = getattr(estimator, name)
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1; got {value!r}.")
    if not check_tol:
        return
    tol = estimator.tol
    if (
        not isinstance(tol, numbers.Real)
        or isinstance(tol, bool)
        or not np.isfinite(tol)
        or tol <= 0
    ):
        raise ValueError(f"tol must be a finite positive number; got {tol!r}.")


def check_weights(sample_weight, X):
    """Sample weights as float64, one per row of ``X``: non-negative with a positive sum."""
    sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
    if np.any(sample_weight < 0) or sample_weight.sum() <= 0:
        raise ValueError("sample_weight must be non-negative with a positive sum.")
    return sample_weight


def check_classification_fit(estimator, X, y, sample_weight):
    """Validate ``fit`` input of a classifier; sets ``classes_`` and returns
    ``(X, y_index, sample_weight)`` with ``y_index`` in ``0..K-1`` (``classes_`` order)."""
    X, y = validate_data(estimator, X, y, dtype=np.float64)
    check_classification_targets(y)
    estimator.classes_, y_index = np.unique(y, return_inverse=True)
    if estimator.classes_.size < 2:
        raise ValueError(
            "y must contain at least 2 classes to train a classifier (K >= 2); got one class: "
            f"{estimator.classes_}."
        )
    return X, y_index, check_weights(sample_weight, X)
