"""Evaluation metrics for the structured predictions advgame makes."""

import numpy as np

from ._validation import as_float_array
from .permutation import ranks_to_matrices

__all__ = ["permutation_hamming_loss"]


def _as_matrices(name, A):
    """0/1 matrices ``(n, k, k)`` from matrices, or from rank vectors ``(n, k)`` (1 = best)."""
    A = as_float_array(name, A)
    if A.ndim == 2:  # rank vectors: item j at position R[j] - 1
        k = A.shape[1]
        if np.any(np.sort(A, axis=1) != np.arange(1, k + 1)):
            raise ValueError(f"{name}: every rank vector must be a permutation of 1..{k}.")
        return ranks_to_matrices(A)
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
    return float(np.mean(P != Q))
