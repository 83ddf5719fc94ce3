"""The declared loss and the data as every builder reads them: loss names resolved for the
classes of ``y``, the classes in the loss matrix's order, checked arrays and sample weights.

:class:`~advgame.declaration.PredictionGame` re-exports the public names (``LOSS_NAMES``,
``resolve_loss_matrix``, ``classes_of``, ...); the builders of :mod:`advgame.compile` use them
without the declaration.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .. import losses
from .._validation import as_float_array, check_finite, check_rankings
from ..losses import STRUCTURE_RTOL, LossMatrix

if TYPE_CHECKING:
    from ..features import FeatureMap

__all__ = [
    "HAMMING",
    "LOSS_ALIASES",
    "LOSS_NAMES",
    "check_data",
    "check_sample_weight",
    "classes_of",
    "declared_loss_matrix",
    "fresh",
    "hamming_items",
    "normalised_weights",
    "resolve_loss_matrix",
]

#: Loss names a declaration accepts (built for ``k`` classes when the data are seen).
LOSS_NAMES = ("zero_one", "ordinal", "squared", "abstain")
#: Accepted aliases of loss names.
LOSS_ALIASES = {"absolute": "ordinal", "zero-one": "zero_one"}
#: The Hamming loss between permutations, ``k - <P_hat, P>``, for the ``k`` items of the rankings
#: (the loss of the Birkhoff game, Fathony et al. 2018c).
HAMMING = "hamming"


def resolve_loss_matrix(
    loss: str | LossMatrix | ArrayLike,
    k: int,
    names: Sequence[str] = LOSS_NAMES,
    classes: ArrayLike | None = None,
    name: str = "loss",
    **options: Any,
) -> LossMatrix:
    """A named loss ``losses.<name>(k, **options)`` (``names`` lists the accepted ones) or a
    user matrix with one column per class.  A matrix whose labels were named is aligned with
    ``classes`` (columns, and the actions named like them, reordered to class order)."""
    if isinstance(loss, str):
        loss = LOSS_ALIASES.get(loss, loss)
        if loss not in names:
            raise ValueError(f"{name} must be one of {names} or a loss matrix; got {loss!r}.")
        return getattr(losses, loss)(k, **options)
    try:
        L = losses.as_loss_matrix(loss)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} is not a valid loss matrix: {exc}") from exc
    if L.n_labels != k:
        seen = "" if classes is None else f" {list(classes)}"
        raise ValueError(
            f"the {name} matrix has {L.n_labels} label columns but y has {k} classes{seen}; give "
            "one column per class in sorted label order."
        )
    return L if classes is None else _align_to_classes(L, list(classes))


def declared_loss_matrix(
    loss: str | LossMatrix, k: int, alpha: float, classes: ArrayLike | None = None
) -> LossMatrix:
    """The loss matrix of a declared loss for ``k`` classes: a name built for ``k`` (``alpha``
    the abstention cost of ``'abstain'``), a matrix checked against ``k`` and aligned with
    ``classes`` when its labels name them."""
    options = {"alpha": alpha} if isinstance(loss, str) and loss == "abstain" else {}
    return resolve_loss_matrix(loss, k, classes=classes, **options)


def classes_of(y: ArrayLike, loss: object = None) -> tuple[np.ndarray, np.ndarray]:
    """The classes of ``y`` and each label's class index.

    The classes are sorted, unless ``loss`` is a :class:`LossMatrix` whose labels name exactly
    the classes of ``y``: then they are in its label order, so that a declared order (an ordinal
    scale of string labels, ``['low', 'mid', 'high']``) and the matrix's structure survive.

    Parameters
    ----------
    y : array-like of shape (n,)
        Labels.
    loss : LossMatrix or other, optional
        The declared loss; only a :class:`LossMatrix` whose labels name the classes fixes the
        order.

    Returns
    -------
    classes : ndarray of shape (k,)
    y_index : ndarray of shape (n,)
        ``classes[y_index] == y``.
    """
    classes, y_index = np.unique(y, return_inverse=True)
    if not isinstance(loss, LossMatrix) or len(loss.labels) != classes.size:
        return classes, y_index
    labels = list(loss.labels)
    try:
        position = {label: j for j, label in enumerate(labels)}
        order = np.array([position[c] for c in classes.tolist()])
    except (KeyError, TypeError):  # the labels are display names, not the classes
        return classes, y_index
    ordered = np.empty_like(classes)
    ordered[order] = classes
    return ordered, order[y_index]


def _align_to_classes(L, classes):
    """``L`` with its columns in ``classes`` order when its labels name the classes.  Labels
    that share no name with the classes (display names such as 'poor', 'good' for classes 0, 1)
    and the default names ``0..k-1`` are taken in sorted class order; labels that name some
    classes but not all are an error."""
    if list(L.labels) in (list(range(L.n_labels)), classes):
        return L
    column = {label: j for j, label in enumerate(L.labels)}
    named = [c for c in classes if c in column]
    if not named:
        return L
    if len(named) < len(classes):
        raise ValueError(
            f"the loss matrix's labels {list(L.labels)} are not the classes of y {classes}; "
            "name its columns by the class labels, or leave them unnamed and give them in "
            "sorted label order."
        )
    order = [column[c] for c in classes]
    k = len(classes)
    rows = list(range(L.n_actions))
    actions = list(L.actions)
    if actions[:k] == list(L.labels):  # actions named like the labels move with them
        rows[:k] = order
    return losses.LossMatrix(
        L.matrix[np.ix_(rows, order)], labels=classes, actions=[actions[r] for r in rows]
    )


def hamming_items(loss: object) -> int | None:
    """``k`` when ``loss`` is the Hamming loss matrix between the ``k!`` permutations of ``k``
    items (:func:`advgame.permutation.hamming_loss_matrix`, weight 1), else None."""
    if not isinstance(loss, LossMatrix) or loss.n_actions != loss.n_labels:
        return None
    for k in range(2, losses.MAX_RECOGNISED_ITEMS + 1):
        if math.factorial(k) == loss.n_labels:
            template = losses.permutation_hamming_template(k)
            return k if np.allclose(loss.matrix, template, rtol=0, atol=STRUCTURE_RTOL) else None
    return None


def check_data(X: ArrayLike, y: ArrayLike, rankings: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``X`` as a non-empty finite ``(n, d)`` float array and ``y`` as one label per row (or,
    with ``rankings``, one full ranking ``R[i, j]`` = rank of item ``j`` per row)."""
    X = as_float_array("X", X)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(
            f"X must be a non-empty 2-D array (n_samples, n_features); got shape {X.shape}."
        )
    check_finite("X", X)
    y = np.asarray(y)
    if rankings:
        y = check_rankings(y, X.shape[0], name="y (rankings R[i, j] = rank of item j)")
    elif y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(
            f"y must be a 1-D array with one label per row of X ({X.shape[0]}); got shape "
            f"{y.shape}."
        )
    return X, y


def check_sample_weight(
    sample_weight: ArrayLike | None, n: int, unit: str = "row of X"
) -> np.ndarray | None:
    """``sample_weight`` as ``n`` finite, non-negative floats with a positive sum (one per
    ``unit``), or None."""
    if sample_weight is None:
        return None
    sample_weight = as_float_array("sample_weight", sample_weight)
    if sample_weight.shape != (n,) or not np.all(np.isfinite(sample_weight)):
        raise ValueError(f"sample_weight must hold one finite weight per {unit} ({n}).")
    if np.any(sample_weight < 0) or sample_weight.sum() <= 0:
        raise ValueError("sample_weight must be non-negative with a positive sum.")
    return sample_weight


def normalised_weights(sample_weight: np.ndarray | None, n: int) -> np.ndarray:
    """``sample_weight`` scaled to sum to one; uniform ``1/n`` when it is None."""
    if sample_weight is None:
        return np.full(n, 1.0 / n)
    sample_weight = np.asarray(sample_weight, dtype=np.float64)
    return sample_weight / sample_weight.sum()


def fresh(fmap: FeatureMap) -> FeatureMap:
    """An unfitted copy of a declared feature map (the declaration is never mutated)."""
    fresh_map = copy.copy(fmap)
    for name in [n for n in vars(fresh_map) if n.endswith("_") and not n.startswith("__")]:
        delattr(fresh_map, name)
    return fresh_map
