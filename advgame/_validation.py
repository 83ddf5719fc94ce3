"""Input checks shared by the public entry points (one message style everywhere)."""

import numbers

import numpy as np

__all__ = ["as_potentials", "as_labels", "check_finite", "check_positive", "check_rankings"]


def check_finite(name, array):
    """Raise ``ValueError`` naming ``name`` if ``array`` holds NaN or infinite entries."""
    if not np.all(np.isfinite(array)):
        bad = np.argwhere(~np.isfinite(array))[0]
        where = tuple(int(i) for i in bad) if array.ndim else ()
        raise ValueError(
            f"{name} must be finite; found {array[tuple(bad)] if array.ndim else array} at index "
            f"{where}. Remove or impute NaN/inf values first."
        )


def as_float_array(name, value):
    """``value`` as a float64 array; ``ValueError`` naming ``name`` if it is not real-valued.

    Complex input is refused (numpy would drop the imaginary part with only a warning).
    """
    try:
        array = np.asarray(value)
        complex_values = np.iscomplexobj(array) or (
            array.dtype == object and any(isinstance(x, complex) for x in array.flat)
        )
        if not complex_values:
            array = np.asarray(array, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric array; could not convert it ({exc}).") from exc
    if complex_values:
        raise ValueError(f"{name} must be a real numeric array; got complex values.")
    return array


def as_potentials(F, k, name="F"):
    """Validate potentials: ``(n, k)`` or ``(k,)``, finite, non-empty.

    Returns
    -------
    F2 : ndarray of shape (n, k), float64 (a view where possible)
    single : bool
        True when the input was one row ``(k,)``; callers then return scalars / 1-D results.
    """
    F = as_float_array(name, F)
    if F.ndim == 1:
        single = True
        F = F[None, :]
    elif F.ndim == 2:
        single = False
    else:
        raise ValueError(
            f"{name} must have shape (n, {k}) or ({k},); got an array with shape {F.shape}."
        )
    if F.shape[1] != k:
        raise ValueError(
            f"{name} must have {k} columns (one potential per label); got shape "
            f"{F.shape if not single else F.shape[1:]}."
        )
    if F.shape[0] == 0:
        raise ValueError(f"{name} is empty: expected at least one row of {k} potentials.")
    check_finite(name, F)
    return F, single


def as_labels(y, n, k, name="y"):
    """Validate integer labels in ``0..k-1``, one per row of potentials."""
    y = np.asarray(y)
    if y.ndim == 0:
        y = y[None]
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"{name} must hold one label per row ({n}); got shape {y.shape}.")
    integral = np.issubdtype(y.dtype, np.integer) or np.issubdtype(y.dtype, np.bool_)
    if not integral and not (
        np.issubdtype(y.dtype, np.floating) and np.all(np.isfinite(y)) and np.all(y == np.round(y))
    ):
        raise ValueError(
            f"{name} must be integer label indices in 0..{k - 1}; got dtype {y.dtype}."
        )
    if y.min() < 0 or y.max() >= k:  # before the cast, which would wrap huge floats
        raise ValueError(
            f"{name} must be label indices in 0..{k - 1}; got values from {y.min():g} to "
            f"{y.max():g}."
        )
    return y.astype(np.int64)


def check_real(name, value, *, low=None, strict=False, high=None):
    """A finite real scalar (not bool) with optional bounds; returns it as float.

    ``strict`` makes the lower bound exclusive.  The message names the argument and the range.
    """
    valid = isinstance(value, numbers.Real) and not isinstance(value, bool) and np.isfinite(value)
    if valid and low is not None:
        valid = value > low if strict else value >= low
    if valid and high is not None:
        valid = value <= high
    if not valid:
        lo = "" if low is None else f"{'>' if strict else '>='} {low}"
        hi = "" if high is None else f"<= {high}"
        bounds = " and ".join(b for b in (lo, hi) if b)
        raise ValueError(
            f"{name} must be a finite number{' ' + bounds if bounds else ''}; got {value!r}."
        )
    return float(value)


def check_positive(name, value):
    """``value`` must be a finite positive real number (not a bool); ``name`` is for the message."""
    if (
        not isinstance(value, numbers.Real)
        or isinstance(value, bool)
        or not np.isfinite(value)
        or value <= 0
    ):
        raise ValueError(f"{name} must be a finite positive number; got {value!r}.")


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


#: The range a weight total is clipped to where it sets a default radius (the minimax
#: estimators': ``1 / sqrt(total)``, ``1 / total`` for squared norms): weights of 1e308 or
#: 1e-310 per row give a total beyond float64, and a radius of 0 or inf.
WEIGHT_TOTAL_RANGE = (1e-12, 1e12)


def power_of_two_unit(values, native=None):
    """The power of two that puts the largest ``|value|`` in ``[1, 2)`` (``2^(e - 1)`` for a
    largest entry ``m 2^e``, ``1/2 <= m < 1``), or 1 when that entry is 0 or within ``native``
    (a range ``(low, high)``; None: always scale).
    Dividing by it is exact, so every ratio, sum and comparison keeps its bits: the one scaling
    the games, the compiled programs and the sample weights use near the ends of float64."""
    top = float(np.max(np.abs(values))) if np.size(values) else 0.0
    if top == 0.0 or (native is not None and native[0] <= top <= native[1]):
        return 1.0
    return float(np.ldexp(1.0, int(np.frexp(top)[1]) - 1))


def weight_unit(sample_weight):
    """:func:`power_of_two_unit` of the weights: weights relative to it keep every ratio and sum
    bit for bit (integer weights and repeated rows stay one computation) while their total stays
    within float64."""
    return power_of_two_unit(sample_weight)


def unit_weights(sample_weight):
    """Non-negative weights scaled to sum to one, divided by :func:`weight_unit` first so that a
    total beyond float64 (``1e308`` per row) or subnormal (``1e-310``) normalises like any
    other: only the ratios matter."""
    relative = sample_weight / weight_unit(sample_weight)
    return relative / relative.sum()


def weight_total(sample_weight):
    """The sum of the weights, computed without overflow and clipped to
    :data:`WEIGHT_TOTAL_RANGE` (for the minimax estimators' default radii)."""
    top = weight_unit(sample_weight)
    relative = float((sample_weight / top).sum())
    low, high = WEIGHT_TOTAL_RANGE
    if top >= high or top * relative >= high:
        return high
    return float(min(max(top * relative, low), high))


#: Features (and feature-map outputs) over this magnitude are refused by the estimators'
#: first-order solvers: their float64 arithmetic (squared features, Gram matrices, linear
#: systems) overflows or fails beyond it.
MAX_FEATURE_MAGNITUDE = 1e20
#: The compiled programs hold the features in their constraint rows; measured on the zero-one
#: learning problem (40 rows), HiGHS and Clarabel stop giving right optima beyond 1e8 (the l2
#: ball's SOCP; 1e10 for the l1 ball's LP, 1e13 for exact moments), so compile refuses more.
MAX_COMPILED_MAGNITUDE = 1e7


def check_feature_scale(X, name="X", limit=MAX_FEATURE_MAGNITUDE):
    """Refuse features of magnitude over ``limit`` with an error naming ``name`` and what to do
    (standardise: the exact-moment game is equivariant in the features), instead of a solver
    failure, NaN or a wrong optimum later.  One check for the estimators and ``compile``."""
    top = max(float(np.max(X)), -float(np.min(X))) if np.size(X) else 0.0
    if top > limit:
        where = ""
        if np.ndim(X) == 2:
            where = f" (column {int(np.argmax(np.max(np.abs(X), axis=0)))})"
        raise ValueError(
            f"{name} has features of magnitude up to {top:.3g}{where}, over the limit of "
            f"{limit:.0e} at which the solvers' float64 arithmetic stays exact. Standardise the "
            "features first, e.g. make_pipeline(StandardScaler(), ...) (with exact moments the "
            "optimum does not depend on the features' scale)."
        )
    return X
