"""Input checks shared by the estimators (one message style everywhere)."""

import numbers
import warnings

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, validate_data

from .._validation import check_positive, check_rankings, weight_total, weight_unit
from ..declaration import classes_of, resolve_loss_matrix
from ..solvers.smoothing import SmoothingMemo

__all__ = [
    "action_labels",
    "label_kind",
    "check_strength",
    "validate_numeric",
    "check_iteration_params",
    "check_weights",
    "check_classification_fit",
    "distinct_rows",
    "TrainingRows",
    "resolve_loss_matrix",
    "check_rankings",
    "ordered_categories",
    "renamed_parameter",
    "order_classes",
]

#: Seed of the multipliers of :func:`distinct_rows`'s row hash (fixed: the order is canonical).
_ROW_HASH_SEED = 0


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
    if np.any(sample_weight < 0) or sample_weight.max() <= 0:  # max: a sum may overflow
        raise ValueError("sample_weight must be non-negative with a positive sum.")
    return sample_weight


def validate_numeric(estimator, X, y="no_validation", **options):
    """:func:`sklearn.utils.validation.validate_data` with ``dtype=float64``; non-numeric ``X``
    (strings, objects) raises an error naming ``X`` and its dtype instead of numpy's bare
    "could not convert string to float" (``ValueError``; ``TypeError`` as numpy raises it for
    objects such as dicts, which scikit-learn's ``check_dtype_object`` expects)."""
    if options.get("y_numeric") and not (isinstance(y, str) and y == "no_validation"):
        target = np.asarray(y)
        if target.dtype.kind in "US":  # objects and complex: scikit-learn's own messages
            raise ValueError(
                f"y must hold numbers (a regression target); got dtype {target.dtype} "
                f"(first value {target.flat[0]!r}). Convert it, e.g. y.astype(float)."
            )
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


def check_classification_fit(estimator, X, y, sample_weight, loss=None):
    """Validate ``fit`` input of a classifier; sets ``classes_`` and returns
    ``(X, y_index, sample_weight)`` with ``y_index`` in ``0..K-1`` (``classes_`` order).

    ``classes_`` holds the sorted labels of ``y``, or, when ``loss`` is a
    :class:`~advgame.losses.LossMatrix` whose labels name them, its labels in its order: every
    declared label (``labels_declared``) even where ``y`` holds only some of them
    (:func:`advgame.declaration.classes_of`, which raises ``ValueError`` naming the labels of
    ``y`` that are not declared)."""
    X, y = validate_numeric(estimator, X, y)
    check_classification_targets(y)
    estimator.classes_, y_index = classes_of(y, loss)
    if estimator.classes_.size < 2:
        raise ValueError(
            "y must contain at least 2 classes to train a classifier (K >= 2); got one class: "
            f"{estimator.classes_}."
        )
    return X, y_index, check_weights(sample_weight, X)


def distinct_rows(X, y_index, sample_weight):
    """The weighted empirical distribution of ``(X, y)`` in one canonical form: each distinct
    row ``(x, y)`` once, weighted by the sum of its copies' weights, rows of weight 0 dropped,
    in an order that depends on the rows' contents only.

    A learning objective weighs rows by ``sample_weight`` only through this distribution, so
    integer weights and repeated rows are the same problem; fitting its canonical form makes
    them the same *computation* too, whatever tolerance a solver stops at (scikit-learn's
    ``check_sample_weight_equivalence``), and makes a fit independent of the order of the
    rows.  The order is that of a 64-bit hash of each row's bits and label, then of the
    label; adjacent rows of equal hash and label are compared before they are merged (a hash
    collision, odds about ``n^2 / 2^64``, leaves copies unmerged: the same objective).
    4-10 ms for 16,000 x 50 and 0.22-0.24 s for 60,000 x 784 (one core, three runs of the
    script in docs/results/defaults.md, fifth run; much of it the reordered copy of ``X``).

    Returns
    -------
    X : ndarray of shape (m, d)
    y_index : ndarray of shape (m,)
    sample_weight : ndarray of shape (m,), positive
        Relative to :func:`advgame._validation.weight_unit` of the input weights (only the
        ratios matter to the objective; the minimax estimators' default radii read the total
        before this).
    """
    key = _row_hash(X, y_index)
    # a stable sort by the hash alone is the order by (hash, label) unless two labels share a
    # hash (a collision): the label is in the hash, so equal hashes are copies of one row
    order = np.argsort(key, kind="stable")
    if np.any(_adjacent_equal(key[order]) & ~_adjacent_equal(y_index[order])):
        order = np.lexsort((y_index, key))
    key, labels = key[order], y_index[order]
    same = _adjacent_equal(key) & _adjacent_equal(labels)  # as the previous row
    pairs = np.flatnonzero(same)
    same[pairs] = np.all(X[order[pairs]] == X[order[pairs + 1]], axis=1)  # not a collision
    starts = np.flatnonzero(np.r_[True, ~same])
    # relative to a power of two (exact): copies of 1e308 sum without overflow
    weight = np.add.reduceat(sample_weight[order] / weight_unit(sample_weight), starts)
    keep = weight > 0
    first = order[starts[keep]]
    return X[first], y_index[first], weight[keep]


class TrainingRows:
    """The checked training rows of a classifier's fit: as given, and in the canonical form of
    :func:`distinct_rows` that every solver fits (weights and repeats in any order are one
    computation and one model), with the feature map fitted and bound to the latter once.

    A path of strengths fits one ``TrainingRows`` per fold (the strength changes nothing
    here), so the checks, the canonical form and the bound features are computed once, not at
    every strength.

    Parameters
    ----------
    given : tuple of (X, y_index, sample_weight)
        The checked rows as given (:func:`check_classification_fit`).
    n_classes : int
        The number of classes ``k``.

    Attributes
    ----------
    distinct : tuple of (X, y_index, sample_weight)
        :func:`distinct_rows` of ``given``.
    program : tuple of (X, y_index, sample_weight)
        The rows of a compiled program: ``distinct``, unless zero weights leave a class without
        a row there (a program needs a row of every class), then ``given``.
    total_weight : float
        :func:`advgame._validation.weight_total` of the given weights (the minimax
        estimators' default radii read it).
    memo : SmoothingMemo
        What the smoothing solver keeps of one fit of the distinct rows for the next
        (:class:`advgame.solvers.smoothing.SmoothingMemo`: the next fit of a path starts
        where the last one stopped, with its curvature).
    """

    def __init__(self, given, n_classes):
        self.n_classes = int(n_classes)
        self.distinct = distinct_rows(*given)
        keeps_classes = np.unique(self.distinct[1]).size == self.n_classes
        self.program = self.distinct if keeps_classes else given
        self.total_weight = weight_total(given[2])
        self.memo = SmoothingMemo()
        self._map = self._operator = None

    def feature_map(self, make):
        """``make()`` fitted to the distinct rows, at the first call (every fit of a path has
        the same feature map)."""
        if self._map is None:
            self._map = make().fit(self.distinct[0], self.n_classes)
        return self._map

    def operator(self, make):
        """:meth:`feature_map` bound to the distinct rows (``theta -> F``), at the first call."""
        if self._operator is None:
            self._operator = self.feature_map(make).bind(self.distinct[0])
        return self._operator


def _adjacent_equal(a):
    """``a[i + 1] == a[i]`` for each ``i`` (``n - 1`` entries)."""
    return a[1:] == a[:-1]


def _row_hash(X, labels, block=1 << 16):
    """A 64-bit hash of each row ``(x, label)``: every float64 entry's bits (``-0.0`` as
    ``0.0``) and the label's (as a float64) folded (:func:`_fold`), then a sum with odd
    multipliers (one per column and one for the label, seed :data:`_ROW_HASH_SEED`).  uint64
    arithmetic wraps, exactly and in any order, so equal rows hash equally wherever they are.
    Blocks of about ``block`` entries keep the temporaries small enough to be reused rather
    than mapped afresh (16,000 x 50: 2.1-3.3 ms at ``2^16``, 5.5-8.1 ms at ``2^20``; 60,000 x
    784: 0.10-0.11 s and 0.32-0.35 s; the script of docs/results/defaults.md, fifth run)."""
    n, d = X.shape
    mix = np.random.default_rng(_ROW_HASH_SEED).integers(1, 2**63, size=d + 1, dtype=np.uint64)
    mix |= np.uint64(1)
    key = _fold(labels.astype(np.float64).view(np.uint64)) * mix[d]
    step = max(1, block // max(d, 1))
    for start in range(0, n, step):
        rows = slice(start, start + step)
        key[rows] += _fold(np.add(X[rows], 0.0).view(np.uint64)) @ mix[:d]
    return key


def _fold(v):
    """``v ^ (v >> 32)`` times an odd constant, in place: the high bits of a float64 (sign,
    exponent, leading mantissa) reach the low bits, so that the multipliers of
    :func:`_row_hash` mix them (without it, ``2.0 = 2^62`` has no low bits and two such
    entries can cancel modulo ``2^64``)."""
    v ^= v >> np.uint64(32)
    v *= np.uint64(0xBF58476D1CE4E5B9)
    return v


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


def label_kind(classes):
    """``'numeric'`` (numbers, ordered by value), ``'string'`` or ``'other'`` labels."""
    if classes.dtype.kind in "biuf":
        return "numeric"
    if classes.dtype.kind == "U":
        return "string"
    values = classes.tolist()
    if classes.dtype == object and all(isinstance(c, str) for c in values):
        return "string"
    numeric = all(isinstance(c, numbers.Real) and not isinstance(c, bool) for c in values)
    return "numeric" if classes.dtype == object and numeric else "other"


def action_labels(loss_matrix, classes, abstain_label=None):
    """What ``predict`` returns for each action (row) of ``loss_matrix``, and the abstention
    label (None when no action abstains).

    An action named like a label of the matrix predicts that class (``classes[j]`` for label
    ``j``).  The other actions abstain, returning the abstention label, when the matrix's
    actions keep their default names (:meth:`~advgame.losses.LossMatrix.default_actions`:
    unnamed rows, the abstain structure's ``'abstain'``) or are named ``'abstain'``; any other
    name is returned as it is (``LossMatrix(..., actions=[..., 'refer', 'cheap_test'])``).

    Parameters
    ----------
    loss_matrix : LossMatrix
        Aligned with ``classes`` (column ``j`` is ``classes[j]``).
    classes : ndarray of shape (k,)
    abstain_label : int, float, str or None
        The abstention label: any number or string that is not a class; None for ``-1``
        (numeric classes; ``min(classes) - 1`` when ``-1`` is a class) or ``'abstain'``.

    Returns
    -------
    actions : ndarray of shape (l,)
        Of the classes' dtype when every action is a class, a common numeric or string dtype
        when the other outputs are of the classes' kind, ``object`` when they mix.
    abstain_label : int, float, str or None

    Raises
    ------
    ValueError
        For an abstention label that is a class or neither a number nor a string, and for an
        action named like a class that is not a label of the matrix.
    """
    L, values = loss_matrix, classes.tolist()
    names = list(L.actions)
    unnamed = tuple(names) == L.default_actions()
    column = {label: j for j, label in enumerate(L.labels)}
    outputs, abstains = [], []
    for a, name in enumerate(names):
        j = (a if a < len(values) else None) if unnamed else column.get(name)
        outputs.append(values[j] if j is not None else name)
        abstains.append(j is None and (unnamed or name == "abstain"))
    label = _abstain_label(classes, abstain_label) if any(abstains) else None
    outputs = [label if abstain else out for out, abstain in zip(outputs, abstains)]
    clash = [out for out, a in zip(outputs, names) if a not in column and out in values]
    if clash and not unnamed:
        raise ValueError(
            f"the loss matrix's actions {names} name {clash}, which are classes {values} but "
            f"not labels of the matrix {list(L.labels)}: predict could not tell the action "
            "from the class. Rename those actions."
        )
    return _output_array(classes, outputs), label


def _abstain_label(classes, label):
    """The abstention label: ``label``, a number or a string that is not a class, or the
    default for the classes' kind."""
    values = classes.tolist()
    numeric = label_kind(classes) == "numeric"
    if label is None:
        default = -1 if numeric else "abstain"
        if numeric and default in values:
            # binary -1 / +1 labels are common (and scikit-learn's checks use them): take a
            # number below every class rather than refuse the default
            return min(values) - 1
        if default in values:
            raise ValueError(
                f"the default abstain_label {default!r} is one of the classes {values}: an "
                "abstention would be indistinguishable from that class. Pass "
                "abstain_label=<a value that is not a class>."
            )
        return default
    is_number = isinstance(label, numbers.Real) and not isinstance(label, bool)
    if not (is_number or isinstance(label, str)):
        raise ValueError(f"abstain_label must be None, a number or a string; got {label!r}.")
    if label in values:
        raise ValueError(
            f"abstain_label={label!r} is one of the classes {values}: an abstention would be "
            "indistinguishable from that class. Pass abstain_label=<a value that is not a class>."
        )
    return label


def _output_array(classes, outputs):
    """``outputs`` (one per action) as one array: ``classes``' own dtype when the actions are
    the classes, a common dtype for numbers only or strings only, else ``object``."""
    if len(outputs) == classes.size and all(o == c for o, c in zip(outputs, classes.tolist())):
        return classes.copy()
    kinds = {label_kind(np.asarray([o], dtype=object)) for o in outputs}
    if kinds == {label_kind(classes)} and "other" not in kinds and classes.dtype != object:
        return np.asarray(outputs, dtype=np.result_type(classes, np.asarray(outputs)))
    out = np.empty(len(outputs), dtype=object)
    out[:] = outputs
    return out


def renamed_parameter(estimator, old, new):
    """The value of parameter ``new``, or of its deprecated former name ``old`` when that is set
    (its default is the string ``'deprecated'``), with a ``FutureWarning`` pointing at the
    user's ``fit`` call (this is called from the estimator's parameter check inside ``fit``)."""
    value = getattr(estimator, old)
    if isinstance(value, str) and value == "deprecated":
        return getattr(estimator, new)
    warnings.warn(
        f"{type(estimator).__name__}: {old!r} was renamed {new!r} (the name every advgame "
        f"estimator gives a regularisation strength) and will be removed: use {new}={value!r}.",
        FutureWarning,
        stacklevel=4,
    )
    return value
