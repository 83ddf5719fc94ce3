"""Input checks shared by the estimators (one message style everywhere)."""

import numbers

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, validate_data

from .._validation import check_positive
from ..declaration import resolve_loss_matrix

__all__ = [
    "check_strength",
    "validate_numeric",
    "check_iteration_params",
    "check_weights",
    "check_classification_fit",
    "resolve_loss_matrix",
    "check_rankings",
]


def check_iteration_params(estimator, integers=("max_iter",), check_tol=True):
    """``integers`` must be integers >= 1 and (if ``check_tol``) ``tol`` a finite positive number."""
    for name in integers:
        value = getattr(estimator, name)
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1; got {value!r}.")
    if check_tol:
        check_positive("tol", estimator.tol)


def check_weights(sample_weight, X):
    """Sample weights as float64, one per row of ``X``: non-negative with a positive sum."""
    sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
    if np.any(sample_weight < 0) or sample_weight.sum() <= 0:
        raise ValueError("sample_weight must be non-negative with a positive sum.")
    return sample_weight


def validate_numeric(estimator, X, y="no_validation", **options):
    """:func:`sklearn.utils.validation.validate_data` with ``dtype=float64``; non-numeric ``X``
    (strings, objects) raises an error naming ``X`` and its dtype instead of numpy's bare
    "could not convert string to float" (``ValueError``; ``TypeError`` as numpy raises it for
    objects such as dicts, which scikit-learn's ``check_dtype_object`` expects)."""
    try:
        return validate_data(estimator, X, y, dtype=np.float64, **options)
    except (TypeError, ValueError) as exc:
        if np.iscomplexobj(X):
            raise  # scikit-learn's "Complex data not supported" already says what is wrong
        try:
            np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError):
            pass
        else:
            raise  # X converts: the problem is elsewhere (y, shapes, NaN), keep sklearn's message
        dtype = X.dtype if hasattr(X, "dtype") else np.asarray(X, dtype=object).dtype
        raise type(exc)(  # keep numpy's type: TypeError for unconvertible objects
            f"X must be a numeric array (float64-convertible features); got dtype {dtype} "
            f"({exc}). Encode categorical or text features first."
        ) from exc


def check_strength(strength, uncertainty):
    """``strength`` must be None or a finite number, > 0 for ``'soft'`` (``lam``) and >= 0 for
    the norm balls (``radius``); the message names ``strength``."""
    if strength is None:
        return
    soft = isinstance(uncertainty, str) and uncertainty == "soft"
    valid = isinstance(strength, numbers.Real) and not isinstance(strength, bool)
    valid = valid and np.isfinite(strength) and (strength > 0 if soft else strength >= 0)
    if not valid:
        expected = "> 0 (lam of uncertainty='soft')" if soft else ">= 0 (the radius)"
        raise ValueError(f"strength must be None or a finite number {expected}; got {strength!r}.")


def check_classification_fit(estimator, X, y, sample_weight):
    """Validate ``fit`` input of a classifier; sets ``classes_`` and returns
    ``(X, y_index, sample_weight)`` with ``y_index`` in ``0..K-1`` (``classes_`` order)."""
    X, y = validate_numeric(estimator, X, y)
    check_classification_targets(y)
    estimator.classes_, y_index = np.unique(y, return_inverse=True)
    if estimator.classes_.size < 2:
        raise ValueError(
            "y must contain at least 2 classes to train a classifier (K >= 2); got one class: "
            f"{estimator.classes_}."
        )
    return X, y_index, check_weights(sample_weight, X)


def check_rankings(R, n_samples, n_labels=None, name="R", estimator=None):
    """Full rankings ``R[i, j]`` = rank of label ``j`` (1 = best) as an int64 ``(n, k)`` array.

    Every row must be a permutation of ``1..k`` (no ties, no missing labels), ``k >= 2``, one row
    per sample, and ``k == n_labels`` when that is given (at predict or score time).
    ``estimator`` names the caller in the message for a missing target.
    """
    if R is None:
        who = "this estimator" if estimator is None else type(estimator).__name__
        raise ValueError(
            f"{who} requires y to be passed, but the target y is None: give the rankings R of "
            "shape (n_samples, n_labels)."
        )
    try:
        R = np.asarray(R, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be a numeric (n_samples, n_labels) array of ranks."
        ) from None
    if R.ndim != 2 or R.shape[1] < 2:
        raise ValueError(
            f"{name} must be a 2-D array of ranks with at least 2 labels (R[i, j] = rank of label "
            f"j, 1 = best); got shape {R.shape}."
        )
    if R.shape[0] != n_samples:
        raise ValueError(f"{name} has {R.shape[0]} rows but X has {n_samples} samples.")
    if n_labels is not None and R.shape[1] != n_labels:
        raise ValueError(f"{name} ranks {R.shape[1]} labels; the model was fitted on {n_labels}.")
    k = R.shape[1]
    if not np.all(np.isfinite(R)) or np.any(R != np.round(R)):
        raise ValueError(
            f"{name} must hold integer ranks 1..{k}; found non-integer or non-finite values."
        )
    R = R.astype(np.int64)
    bad = np.flatnonzero(np.any(np.sort(R, axis=1) != np.arange(1, k + 1), axis=1))
    if bad.size:
        raise ValueError(
            f"every row of {name} must be a permutation of 1..{k} (full rankings, no ties); "
            f"{bad.size} rows are not, e.g. row {bad[0]}: {R[bad[0]].tolist()}."
        )
    return R
