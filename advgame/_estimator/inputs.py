"""Input checks shared by the estimators (one message style everywhere)."""

import numbers

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, validate_data

from .._validation import check_positive, check_rankings
from ..declaration import resolve_loss_matrix

__all__ = [
    "check_strength",
    "validate_numeric",
    "check_iteration_params",
    "check_weights",
    "check_classification_fit",
    "resolve_loss_matrix",
    "check_rankings",
    "check_feature_scale",
    "ordered_categories",
    "order_classes",
    "MAX_FEATURE_MAGNITUDE",
]

#: Largest feature magnitude ``max |X|`` the classifier accepts.  Beyond it the games' arithmetic
#: breaks down in float64: a feature ``1e22`` times larger than the intercept's ``1`` already makes
#: the solvers' linear systems fail (measured on iris), and from ``~1e154`` squared features and
#: Gram matrices overflow to ``inf`` (and the parameters' squares, ``~1 / x^2``, underflow to 0).
MAX_FEATURE_MAGNITUDE = 1e20


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


def check_feature_scale(X, name="X", limit=MAX_FEATURE_MAGNITUDE):
    """Refuse features of magnitude over ``limit`` (:data:`MAX_FEATURE_MAGNITUDE`) with an error
    naming ``X`` and suggesting standardisation, instead of a solver failure or NaN later."""
    top = max(float(X.max()), -float(X.min())) if X.size else 0.0  # max |X| without a copy
    if top > limit:
        column = int(np.argmax(np.max(np.abs(X), axis=0)))
        raise ValueError(
            f"{name} has features of magnitude up to {top:.3g} (column {column}), over the "
            f"limit of {limit:.0e} (MAX_FEATURE_MAGNITUDE): at that scale the solvers' float64 "
            "arithmetic (squared features, Gram matrices, linear systems) fails or overflows. "
            "Standardise the features first, e.g. "
            "make_pipeline(StandardScaler(), AdversarialClassifier())."
        )
    return X


def ordered_categories(y):
    """The categories of an *ordered* pandas ``Categorical`` (or categorical ``Series`` /
    ``Index``) ``y``, in their order; None for anything else.  Duck-typed on
    ``y.dtype.ordered`` / ``y.dtype.categories``, so pandas is never imported."""
    dtype = getattr(y, "dtype", None)
    if getattr(dtype, "ordered", None) is True and hasattr(dtype, "categories"):
        return np.asarray(dtype.categories)
    return None


def order_classes(estimator, y_index, order, name="classes_order"):
    """Put ``estimator.classes_`` (the sorted labels of ``y`` that ``check_classification_fit``
    set) in the order of ``order``, a sequence of distinct labels listing every class of ``y``,
    and return ``y_index`` re-indexed to it.  Labels of ``order`` absent from ``y`` are skipped
    (like a pandas category no sample uses): ``classes_`` holds the labels of ``y``."""
    if isinstance(order, (str, bytes)) or not hasattr(order, "__iter__"):
        raise ValueError(
            f"{name} must be a 1-D sequence of at least 2 class labels; got {order!r}."
        )
    values = order.tolist() if isinstance(order, np.ndarray) else list(order)
    if np.ndim(np.asarray(values, dtype=object)) != 1 or len(values) < 2:
        raise ValueError(
            f"{name} must be a 1-D sequence of at least 2 class labels; got {order!r}."
        )
    position = {}
    try:
        for j, label in enumerate(values):
            if label in position:
                raise ValueError(f"{name} must list each class once; {label!r} appears twice.")
            position[label] = j
    except TypeError as exc:  # unhashable entries
        raise ValueError(f"{name} must hold class labels; got {order!r} ({exc}).") from None
    observed = estimator.classes_.tolist()
    missing = [label for label in observed if label not in position]
    if missing:
        raise ValueError(
            f"{name} {values} must list every class of y; missing {missing} (the classes of y "
            f"are {observed})."
        )
    rank = np.argsort([position[label] for label in observed], kind="stable")
    new_index = np.empty(len(observed), dtype=np.intp)
    new_index[rank] = np.arange(len(observed))
    estimator.classes_ = estimator.classes_[rank]
    return new_index[y_index]
