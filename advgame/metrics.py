"""Evaluation metrics for the structured predictions advgame makes."""

import numpy as np

from ._validation import as_float_array
from .permutation import ranks_to_matrices

__all__ = ["permutation_hamming_loss", "prediction_set_metrics"]


def _as_matrices(name, A):
    """0/1 matrices ``(n, k, k)`` from matrices, or from rank vectors ``(n, k)`` (1 = best)."""
    A = as_float_array(name, A)
    if A.ndim == 2:  # rank vectors: item j at position R[j] - 1
        return ranks_to_matrices(A, name)
    if A.ndim != 3 or A.shape[1] != A.shape[2] or not np.all((A == 0) | (A == 1)):
        raise ValueError(
            f"{name} must be rank vectors (n, k) or 0/1 matrices (n, k, k); got shape {A.shape}."
        )
    return A


def permutation_hamming_loss(truth, predicted):
    r"""Fraction of wrong entries between (permutation) matrices, as in seed 004 Tables 1-3.

    .. math::  \frac{1}{n k^2} \sum_{i} \sum_{a, b} 1\big[\hat P_{i,ab} \ne P_{i,ab}\big]

    Between two permutations this is ``2 / k^2`` times the number of misplaced items (each
    misplaced item has a wrong 1 and a wrong 0).  ``predicted`` may be any 0/1 matrices, e.g. a
    decoding onto the unit cube that is not a permutation.

    Parameters
    ----------
    truth, predicted : array-like, (n, k) rank vectors (1 = best) or (n, k, k) 0/1 matrices
    """
    P, Q = _as_matrices("truth", truth), _as_matrices("predicted", predicted)
    if P.shape != Q.shape:
        raise ValueError(f"truth and predicted must match; got {P.shape} and {Q.shape}.")
    if P.size == 0:
        raise ValueError(f"truth and predicted are empty (shape {P.shape}); nothing to score.")
    return float(np.mean(P != Q))


def prediction_set_metrics(y_true, sets, classes):
    r"""The four metrics of seed 003 §5 for set-valued predictions with outliers.

    Test points whose label is not in ``classes`` are the outliers.  With prediction sets
    :math:`\phi(x_j)` (row ``j`` of ``sets``):

    * ``coverage[k]`` = :math:`|\{j : Y_j = k,\ k \in \phi(x_j)\}| / |\{j : Y_j = k\}|`, per class
      in ``classes`` order (NaN for a class absent from ``y_true``);
    * ``cardinality`` = the mean of :math:`|\phi(x_j)|` over all test points;
    * ``conditional_cardinality`` = the mean of :math:`|\phi(x_j)|` over the non-outliers;
    * ``detection_rate`` = the fraction of outliers with an empty set (NaN without outliers).

    Parameters
    ----------
    y_true : array-like of shape (n,)
        True labels; anything not in ``classes`` is an outlier.
    sets : array-like of bool, shape (n, K)
        ``sets[j, k]``: class ``classes[k]`` is in the prediction set of point ``j`` (e.g.
        :meth:`advgame.GeneralizedPredictionSet.predict_set`).
    classes : array-like of shape (K,)

    Returns
    -------
    dict with keys ``coverage`` (ndarray), ``cardinality``, ``conditional_cardinality``,
    ``detection_rate`` (floats)
    """
    y_true = np.asarray(y_true)
    classes = np.asarray(classes)
    sets = np.asarray(sets)
    if y_true.ndim != 1 or y_true.size == 0:
        raise ValueError(
            f"y_true must be a non-empty 1-D array of labels; got shape {y_true.shape}."
        )
    if classes.ndim != 1 or classes.size == 0 or np.unique(classes).size != classes.size:
        raise ValueError(
            f"classes must be a non-empty 1-D array of distinct labels; got {classes!r}."
        )
    if sets.dtype != bool or sets.shape != (y_true.shape[0], classes.shape[0]):
        raise ValueError(
            f"sets must be a boolean (n_samples, n_classes) = ({y_true.shape[0]}, "
            f"{classes.shape[0]}) array; got dtype {sets.dtype} and shape {sets.shape}."
        )
    member = y_true[:, None] == classes[None, :]
    inlier = member.any(axis=1)
    counts = member.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        coverage = (member & sets).sum(axis=0) / counts
    size = sets.sum(axis=1)
    return {
        "coverage": np.where(counts > 0, coverage, np.nan),
        "cardinality": float(size.mean()) if size.size else np.nan,
        "conditional_cardinality": float(size[inlier].mean()) if inlier.any() else np.nan,
        "detection_rate": float(np.mean(size[~inlier] == 0)) if (~inlier).any() else np.nan,
    }
