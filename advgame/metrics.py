"""Evaluation metrics for the structured predictions advgame makes.

:func:`mean_matrix_loss` scores predictions under a declared loss matrix, and
:func:`make_loss_scorer` turns it into a scorer for ``GridSearchCV(scoring=...)`` and
``cross_val_score``: classifiers' ``score`` is accuracy (scikit-learn's convention), which is not
what an abstain or ordinal loss asks to minimise.
"""

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_float_array
from .losses import LossMatrix, as_loss_matrix
from .permutation import ranks_to_matrices

__all__ = [
    "permutation_hamming_loss",
    "prediction_set_metrics",
    "mean_matrix_loss",
    "make_loss_scorer",
    "LossScorer",
]


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


def permutation_hamming_loss(truth: ArrayLike, predicted: ArrayLike) -> float:
    r"""Fraction of wrong entries between (permutation) matrices, as in Blondel (2019), Tables 1-3.

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


def prediction_set_metrics(
    y_true: ArrayLike, sets: ArrayLike, classes: ArrayLike
) -> dict[str, Any]:
    r"""The four metrics of Wang and Qiao (2022, §5) for set-valued predictions with outliers.

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


# ---------------------------------------------------------------------- declared loss matrices
def _as_loss(loss):
    try:
        return as_loss_matrix(loss)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"loss is not a valid loss matrix: {exc}") from exc


def _names(name, given, size, what):
    values = given.tolist() if isinstance(given, np.ndarray) else list(given)
    if len(values) != size:
        raise ValueError(f"{name} must have {size} entries, one per {what}; got {len(values)}.")
    return values


def _as_labels(values):
    """An array of labels; lists keep their entries' types (``[0, 'abstain']`` stays mixed)."""
    return values if isinstance(values, np.ndarray) else np.asarray(values, dtype=object)


def _positions(name, values, names, what):
    """Index in ``names`` of each entry of ``values`` (1-D), with errors naming ``name``.

    Integer values among the names ``0..m-1`` (an unnamed loss matrix's, or classes and
    actions that are their positions) are their own positions: no lookup and no sort of the
    values (a scorer calls this twice per score)."""
    in_place = values.ndim == 1 and values.dtype.kind in "iu" and values.size > 0
    if in_place and names == list(range(len(names))):
        if 0 <= values.min() and values.max() < len(names):
            return values.astype(np.intp, copy=False)
    index = {}
    try:
        for j, label in enumerate(names):
            if label in index:
                raise ValueError(f"the {what} names {names} repeat {label!r}: they must differ.")
            index[label] = j
    except TypeError as exc:
        raise ValueError(
            f"the {what} names must be hashable labels; got {names} ({exc})."
        ) from None
    if values.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one label per sample); got shape {values.shape}.")
    try:  # one lookup per distinct label, not per sample
        distinct, inverse = np.unique(values, return_inverse=True)
    except TypeError:  # labels of mixed, unorderable types: one lookup per entry
        distinct, inverse = values, np.arange(values.size)
    flat = distinct.tolist()
    try:
        found = np.array([index.get(v, -1) for v in flat], dtype=np.intp)
    except TypeError as exc:
        raise ValueError(f"{name} must hold hashable labels ({exc}).") from None
    if np.any(found < 0):
        unknown = list(dict.fromkeys(v for v, j in zip(flat, found) if j < 0))
        raise ValueError(
            f"{name} holds {unknown[:5]}{' ...' if len(unknown) > 5 else ''}, which are not "
            f"{what} of the loss matrix {names}; name them with labels= / actions= (or "
            "abstain_label= for the abstain action)."
        )
    return found[inverse.ravel()]


def _row_names(L, labels, actions, abstain_label):
    """Names of the loss matrix's rows (actions), as ``mean_matrix_loss`` documents them."""
    l, k = L.shape
    if actions is not None:
        if abstain_label is not None:
            raise ValueError("give actions= or abstain_label=, not both (actions names every row).")
        return _names("actions", actions, l, "row (action) of the loss matrix")
    names = list(L.actions)
    if names[:k] == list(L.labels):  # the actions that are the labels get the labels' names
        names[:k] = labels
    if abstain_label is not None:
        extra = names[k:]
        if "abstain" in extra:
            names[k + extra.index("abstain")] = abstain_label
        elif l == k + 1:
            names[k] = abstain_label
        else:
            raise ValueError(
                f"abstain_label names the abstain action, but the loss matrix has {l - k} "
                f"actions beyond its {k} labels and none is named 'abstain'; name the rows with "
                "actions= instead."
            )
    return names


def mean_matrix_loss(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    loss: LossMatrix | ArrayLike,
    *,
    labels: Sequence[Any] | None = None,
    actions: Sequence[Any] | None = None,
    abstain_label: Any = None,
    sample_weight: ArrayLike | None = None,
) -> float:
    r"""The mean loss of predictions under a loss matrix ``L[a, y]`` (the declared loss).

    .. math::  \frac{\sum_i w_i\, L[a(\hat y_i), y_i]}{\sum_i w_i}

    where ``a(y_hat)`` is the row (action) named by the prediction and ``y_i`` the column named
    by the true label: the empirical risk of which :class:`~advgame.AdversarialClassifier`
    minimises a robust bound (Fathony et al. (2018a), "Consistent Robust Adversarial Prediction
    for General Multiclass Classification").  For the zero-one loss it is the error rate, for
    ``ag.losses.ordinal(k)`` the mean absolute error in class steps, and for
    ``ag.losses.abstain(k, alpha)`` the error rate with each abstention costing ``alpha``.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        True labels, each one of ``labels``.
    y_pred : array-like of shape (n,)
        Predicted actions: a label (an action named like it), or the name of another action,
        e.g. ``abstain_label`` for the abstain action.
    loss : LossMatrix or array-like of shape (l, k)
        Finite, non-negative losses; row ``a`` is an action, column ``y`` a true label.
    labels : sequence of k labels, optional
        The labels of the columns, in column order (for ordinal losses this is the ordinal
        order, e.g. ``['low', 'mid', 'high']`` or a fitted classifier's ``classes_``).  Default:
        ``loss.labels`` (``0..k-1`` for an unnamed matrix).
    actions : sequence of l names, optional
        The names of the rows.  Default: the labels for the first ``k`` rows when the matrix's
        actions are its labels (square matrices, :func:`advgame.losses.abstain`), then the
        matrix's own action names (``'abstain'`` for the abstain row).
    abstain_label : optional
        The prediction that stands for the abstain action (e.g. ``-1``, a fitted classifier's
        ``abstain_label_``): it renames the action named ``'abstain'``, or the only action
        beyond the labels of a ``(k + 1) x k`` matrix.
    sample_weight : array-like of shape (n,), optional

    Returns
    -------
    float
        Lower is better; see :func:`make_loss_scorer` for its negative as a scorer.

    Examples
    --------
    >>> import advgame as ag
    >>> L = ag.losses.abstain(3, alpha=0.2)
    >>> mean_matrix_loss([0, 1, 2, 2], [0, -1, 1, 2], L, abstain_label=-1)
    0.3
    >>> mean_matrix_loss(["low", "high"], ["mid", "low"], ag.losses.ordinal(3),
    ...                  labels=["low", "mid", "high"])
    1.5
    """
    L = _as_loss(loss)
    l, k = L.shape
    labels = list(L.labels) if labels is None else _names("labels", labels, k, "column (label)")
    rows = _row_names(L, labels, actions, abstain_label)
    y_true, y_pred = _as_labels(y_true), _as_labels(y_pred)
    if y_true.shape != y_pred.shape:
        raise ValueError(
            f"y_true and y_pred must have the same shape; got {y_true.shape} and {y_pred.shape}."
        )
    if y_true.size == 0:
        raise ValueError("y_true and y_pred are empty; nothing to score.")
    columns = _positions("y_true", y_true, labels, "labels (columns)")
    actions_index = _positions("y_pred", y_pred, rows, "actions (rows)")
    losses = L.matrix[actions_index, columns]
    if sample_weight is None:
        return float(losses.mean())
    weight = as_float_array("sample_weight", sample_weight)
    if weight.shape != losses.shape or np.any(weight < 0) or not weight.sum() > 0:
        raise ValueError(
            f"sample_weight must hold {losses.size} non-negative weights with a positive sum."
        )
    return float(np.average(losses, weights=weight))


def _final_step(estimator):
    """The last step of a :class:`~sklearn.pipeline.Pipeline` (the estimator itself else) and a
    function giving its input from ``X``."""
    steps = getattr(estimator, "steps", None)
    if not steps:
        return estimator, lambda X: X
    if len(steps) == 1:
        return steps[0][1], lambda X: X
    return steps[-1][1], lambda X: estimator[:-1].transform(X)


class LossScorer:
    """A scorer (``scorer(estimator, X, y)``, greater is better) returning minus
    :func:`mean_matrix_loss`; build it with :func:`make_loss_scorer`."""

    def __init__(
        self,
        loss: LossMatrix | ArrayLike | None = None,
        labels: Sequence[Any] | None = None,
        actions: Sequence[Any] | None = None,
        abstain_label: Any = None,
    ) -> None:
        self.loss = None if loss is None else _as_loss(loss)
        self.labels = labels
        self.actions = actions
        self.abstain_label = abstain_label

    def __call__(
        self,
        estimator: Any,
        X: ArrayLike,
        y_true: ArrayLike,
        sample_weight: ArrayLike | None = None,
    ) -> float:
        final, transform = _final_step(estimator)
        if self.loss is not None:
            abstain = self.abstain_label
            if abstain is None and self.actions is None:
                abstain = getattr(final, "abstain_label_", None)
                if abstain is not None and "abstain" not in self.loss.actions:
                    if self.loss.n_actions != self.loss.n_labels + 1:
                        abstain = None
            loss = mean_matrix_loss(
                y_true,
                estimator.predict(X),
                self.loss,
                labels=self.labels,
                actions=self.actions,
                abstain_label=abstain,
                sample_weight=sample_weight,
            )
            return 0.0 - loss  # not -0.0
        L, classes = getattr(final, "loss_matrix_", None), getattr(final, "classes_", None)
        if L is None or classes is None:
            raise ValueError(
                "make_loss_scorer() without a loss scores with the fitted estimator's declared "
                f"loss (its loss_matrix_ and classes_), and {type(final).__name__} has none: "
                "pass the loss, e.g. make_loss_scorer(ag.losses.ordinal(k), labels=[...])."
            )
        index = list(range(L.n_actions))
        if hasattr(final, "predict_action_proba"):  # the chosen action itself (as predict)
            y_pred = np.argmax(final.predict_action_proba(transform(X)), axis=1)
        else:
            y_pred, index = estimator.predict(X), None
        loss = mean_matrix_loss(
            y_true,
            y_pred,
            L,
            labels=classes,
            actions=index,
            abstain_label=None if index is not None else getattr(final, "abstain_label_", None),
            sample_weight=sample_weight,
        )
        return 0.0 - loss

    def __repr__(self):
        args = [] if self.loss is None else [f"loss={self.loss.shape[0]}x{self.loss.shape[1]}"]
        for name in ("labels", "actions", "abstain_label"):
            if getattr(self, name) is not None:
                args.append(f"{name}={getattr(self, name)!r}")
        return f"make_loss_scorer({', '.join(args)})"


def make_loss_scorer(
    loss: LossMatrix | ArrayLike | None = None,
    *,
    labels: Sequence[Any] | None = None,
    actions: Sequence[Any] | None = None,
    abstain_label: Any = None,
) -> LossScorer:
    """A scorer for ``GridSearchCV(scoring=...)``, ``cross_val_score`` and friends: minus the
    mean declared loss (:func:`mean_matrix_loss`), so greater is better like scikit-learn's
    ``'neg_mean_absolute_error'``.

    Parameters
    ----------
    loss : LossMatrix, array-like of shape (l, k) or None, default=None
        None scores every fitted model with its own declared loss: ``loss_matrix_`` over
        ``classes_`` (so the ordinal order and the abstain action are the model's) and, for an
        :class:`~advgame.AdversarialClassifier` (also as the last step of a ``Pipeline``), the
        action :meth:`~advgame.AdversarialClassifier.predict` takes, read from
        ``predict_action_proba``.  A matrix scores any classifier's ``predict`` with it, as
        :func:`mean_matrix_loss` with the parameters below.
    labels, actions, abstain_label
        As in :func:`mean_matrix_loss`, for a given ``loss``.  ``abstain_label=None`` takes the
        fitted estimator's ``abstain_label_`` when it has one and the matrix has an abstain
        action.

    Returns
    -------
    LossScorer
        ``scorer(estimator, X, y, sample_weight=None) -> -mean_matrix_loss``.

    Examples
    --------
    >>> import advgame as ag
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.model_selection import GridSearchCV
    >>> X, y = load_iris(return_X_y=True)
    >>> search = GridSearchCV(
    ...     ag.AdversarialClassifier(loss="abstain", alpha=0.2),
    ...     {"strength": [1e-3, 1e-1]},
    ...     scoring=make_loss_scorer(),
    ... ).fit(X, y)
    >>> -search.best_score_  # the mean abstain loss of the best model, cross-validated
    ... # doctest: +SKIP
    """
    if loss is None and (labels is not None or actions is not None or abstain_label is not None):
        raise ValueError(
            "labels, actions and abstain_label describe a given loss matrix; make_loss_scorer() "
            "without a loss reads them from the fitted model."
        )
    return LossScorer(loss, labels, actions, abstain_label)
