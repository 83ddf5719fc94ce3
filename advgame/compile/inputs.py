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
import scipy.sparse as sp
from numpy.typing import ArrayLike

from .. import losses
from .._validation import (
    MAX_COMPILED_MAGNITUDE,
    as_float_array,
    check_feature_scale,
    check_finite,
    check_rankings,
    unit_weights,
)
from ..losses import STRUCTURE_RTOL, LossMatrix

if TYPE_CHECKING:
    from ..features import FeatureMap

__all__ = [
    "HAMMING",
    "LOSS_ALIASES",
    "LOSS_NAMES",
    "check_data",
    "check_inputs",
    "check_sample_weight",
    "classes_of",
    "declared_loss_matrix",
    "fresh",
    "graph_loss",
    "hamming_items",
    "label_array",
    "normalised_weights",
    "point_shape",
    "polytope_outputs",
    "resolve_loss_matrix",
]

#: A row of ``Y`` is a vertex of the declared polytope when it is within this distance (in
#: each coordinate) of one: outputs are exact embeddings, 0/1 vectors or ranks.
VERTEX_ATOL = 1e-9

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
            "one column per class in sorted label order, or declare the labels "
            "(LossMatrix(matrix, labels=[...])) so that y may hold any of them."
        )
    return L if classes is None else _align_to_classes(L, list(classes))


def graph_loss(loss: object) -> object:
    """A graph game's loss with ``'hamming'`` resolved to ``'zero_one'``.

    Over the nodes of a graph the Hamming loss ``sum_i w_i [a_i != y_i]`` is additive with the
    node-wise zero-one loss ``L[a, y] = [a != y]`` (the additive losses of Fathony et al.,
    2018b, "Distributionally robust graphical models", Eq. 1), so a graph game's ``'hamming'``
    is ``'zero_one'``; over the Birkhoff polytope ``'hamming'`` is the loss between permutations
    (:data:`HAMMING`).  Any other loss is returned as it is.
    """
    return "zero_one" if isinstance(loss, str) and loss == HAMMING else loss


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

    The classes are sorted, unless ``loss`` is a :class:`LossMatrix` whose labels name the
    classes of ``y``: then they are its labels in its label order, so that a declared order (an
    ordinal scale of string labels, ``['low', 'mid', 'high']``) and the matrix's structure
    survive.  Declared labels (``LossMatrix(..., labels=...)``, :attr:`LossMatrix.labels_declared`)
    are the classes even when ``y`` holds only some of them (a cross-validation fold missing a
    rare class): the absent classes have no rows.

    Parameters
    ----------
    y : array-like of shape (n,)
        Labels.
    loss : LossMatrix or other, optional
        The declared loss; only a :class:`LossMatrix` whose labels name the classes fixes them.

    Returns
    -------
    classes : ndarray of shape (k,)
    y_index : ndarray of shape (n,)
        ``classes[y_index] == y``.

    Raises
    ------
    ValueError
        When ``loss`` declares labels, names some classes of ``y`` and not others.
    """
    classes, y_index = np.unique(y, return_inverse=True)
    if not isinstance(loss, LossMatrix):
        return classes, y_index
    declared = loss.labels_declared
    if not declared and len(loss.labels) != classes.size:
        return classes, y_index
    labels = list(loss.labels)
    try:
        position = {label: j for j, label in enumerate(labels)}
        found = [position.get(c, -1) for c in classes.tolist()]
    except TypeError:  # unhashable names: display names, not the classes
        return classes, y_index
    order = np.array(found, dtype=np.intp)
    if np.all(order < 0) or (not declared and np.any(order < 0)):
        return classes, y_index  # the labels are display names, not the classes
    if np.any(order < 0):
        undeclared = classes[order < 0].tolist()
        raise ValueError(
            f"y holds the labels {undeclared}, which the loss matrix does not declare: its "
            f"labels are {labels}. Add them to LossMatrix(..., labels=...) (with their columns), "
            "or remove those samples."
        )
    return label_array(labels), order[y_index]


def label_array(labels: Sequence[Any]) -> np.ndarray:
    """``labels`` as a 1-D array that keeps each entry: numbers or strings in their numpy dtype,
    anything else (a mix of both, tuples) as ``object``."""
    values = list(labels)
    numeric = all(
        isinstance(v, (int, float, np.number)) and not isinstance(v, bool) for v in values
    )
    if numeric or all(isinstance(v, str) for v in values):
        return np.asarray(values)
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


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


def check_inputs(X: ArrayLike) -> np.ndarray:
    """``X`` as a non-empty finite ``(n, d)`` float array (a scipy sparse matrix is made dense:
    the compiled program builds its own sparse design from it)."""
    if sp.issparse(X):
        X = X.toarray()
    X = as_float_array("X", X)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(
            f"X must be a non-empty 2-D array (n_samples, n_features); got shape {X.shape}."
        )
    check_finite("X", X)
    check_feature_scale(X, limit=MAX_COMPILED_MAGNITUDE)
    return X


def check_data(X: ArrayLike, y: ArrayLike, rankings: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``X`` as a non-empty finite ``(n, d)`` float array and ``y`` as one label per row (or,
    with ``rankings``, one full ranking ``R[i, j]`` = rank of item ``j`` per row)."""
    X = check_inputs(X)
    y = np.asarray(y)
    if rankings:
        y = check_rankings(y, X.shape[0], name="y (rankings R[i, j] = rank of item j)")
    elif y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(
            f"y must be a 1-D array with one label per row of X ({X.shape[0]}); got shape "
            f"{y.shape}."
        )
    else:
        y = check_labels(y)
    return X, y


def check_labels(y: np.ndarray) -> np.ndarray:
    """Class labels: numbers (finite) or strings, of one kind; a NaN, ``None`` or any other
    object is refused with the first offending position."""
    if y.dtype.kind in "biuU":
        return y
    if y.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(y))
        if bad.size:
            raise ValueError(
                f"y must hold class labels (numbers or strings); y[{bad[0]}] is "
                f"{float(y[bad[0]])} ({bad.size} NaN or infinite labels). Remove those samples "
                "or give them a class."
            )
        return y
    kinds = {bool(isinstance(v, str)) for v in y.tolist()}
    for i, value in enumerate(y.tolist()):
        number = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
            value, bool
        )
        if not (isinstance(value, str) or (number and np.isfinite(value))):
            raise ValueError(
                f"y must hold class labels (numbers or strings); y[{i}] is {value!r} of type "
                f"{type(value).__name__}."
            )
    if len(kinds) > 1:
        raise ValueError("y must hold labels of one kind: all numbers or all strings; got both.")
    return y


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
    if np.any(sample_weight < 0) or sample_weight.max() <= 0:  # a sum may overflow
        raise ValueError("sample_weight must be non-negative with a positive sum.")
    return sample_weight


def normalised_weights(sample_weight: np.ndarray | None, n: int) -> np.ndarray:
    """``sample_weight`` scaled to sum to one; uniform ``1/n`` when it is None.

    Divided by its largest entry first, so that a total beyond float64 (``n`` weights of
    ``1e308``) or in its subnormal range (``1e-310``) normalises like any other: the learning
    problem does not depend on a common scale of the weights."""
    if sample_weight is None:
        return np.full(n, 1.0 / n)
    return unit_weights(np.asarray(sample_weight, dtype=np.float64))


def fresh(fmap: FeatureMap) -> FeatureMap:
    """An unfitted copy of a declared feature map (the declaration is never mutated)."""
    fresh_map = copy.copy(fmap)
    for name in [n for n in vars(fresh_map) if n.endswith("_") and not n.startswith("__")]:
        delattr(fresh_map, name)
    return fresh_map


def polytope_outputs(polytope: object, Y: ArrayLike, dim: int, n: int) -> np.ndarray:
    """Each sample's output as its embedding, a vertex of ``polytope`` (a row of ``(n, dim)``).

    ``Y`` holds the embeddings themselves (one row of ``dim`` numbers per sample: 0/1 vectors for
    the unit cube and the knapsack, rank vectors for the permutahedron, node and edge indicators
    for a marginal polytope, ``(n, k, k)`` or row-major ``(n, k^2)`` permutation matrices for the
    Birkhoff polytope), or labels converted here: the ordinal labels ``1..dim + 1`` for the order
    simplex (a 1-D ``Y``: label ``y`` is the cumulative vector ``sum_{i < y} e_i``), rankings
    ``R[i, j]`` = rank of item ``j`` for the Birkhoff polytope (``dim = k^2``).

    Every row must be a vertex of the polytope (to :data:`VERTEX_ATOL`): among
    ``polytope.vertices`` when it can list them, else a point of the polytope that its linear
    maximisation oracle returns for its own direction (``argmax(y) = y``, which holds at every
    vertex of a 0/1 polytope and of a permutahedron), else a point of its linear description.
    """
    Y = np.asarray(Y)
    if Y.dtype.kind not in "biuf":
        raise ValueError(f"y must be numeric embeddings (or labels); got dtype {Y.dtype}.")
    Y = Y.astype(np.float64)
    if Y.shape[:1] != (n,):
        raise ValueError(f"y must have one row per row of X ({n}); got shape {Y.shape}.")
    check_finite("y", Y)
    E = _label_embeddings(polytope, Y, dim)
    if E is None:
        E = Y.reshape(n, -1)
        if E.shape[1] != dim:
            raise ValueError(
                f"y must hold each sample's embedding, a vertex of {polytope!r} with {dim} "
                f"coordinates (the size of the loss's matrix M); got rows of {E.shape[1]}."
            )
    bad = np.flatnonzero(~_are_vertices(polytope, E, dim))
    if bad.size:
        raise ValueError(
            f"every row of y must be a vertex of {polytope!r} (an output's embedding); "
            f"{bad.size} rows are not, e.g. row {bad[0]}: {E[bad[0]].tolist()}."
        )
    return E


def _label_embeddings(polytope: object, Y: np.ndarray, dim: int) -> np.ndarray | None:
    """``Y`` given as labels converted to embeddings, or None when ``Y`` holds embeddings."""
    from ..polytopes import Birkhoff, Marginal, OrderSimplex

    if isinstance(polytope, OrderSimplex) and Y.ndim == 1:
        if not np.all(np.isin(Y, np.arange(1, dim + 2))):
            raise ValueError(
                f"y must hold the ordinal labels 1..{dim + 1} (or their cumulative vectors, rows "
                f"of length {dim}) for the order simplex of the loss's {dim} coordinates; got "
                f"labels {np.unique(Y)[:10].tolist()}."
            )
        return (np.arange(dim)[None, :] < Y[:, None] - 1).astype(np.float64)
    if isinstance(polytope, Marginal) and Y.ndim == 2 and not isinstance(polytope.graph, str):
        if Y.shape[1] == polytope.graph.number_of_nodes() != dim:
            return _node_and_edge_indicators(Y, polytope.graph, dim)
    if isinstance(polytope, Birkhoff) and Y.ndim == 2 and Y.shape[1] ** 2 == dim:
        R = check_rankings(Y, Y.shape[0], name="y (rankings R[i, j] = rank of item j)")
        k = R.shape[1]
        rows = np.zeros((R.shape[0], k, k))
        np.put_along_axis(rows, (R - 1)[..., None], 1.0, axis=-1)
        return rows.reshape(R.shape[0], k * k)
    return None


def _node_and_edge_indicators(Y: np.ndarray, graph: Any, dim: int) -> np.ndarray:
    """Node labels ``Y[s, i]`` in ``0..k-1`` (nodes in ``graph.nodes()`` order) to the marginal
    polytope's vertices: one-hot node indicators (node-major), then each edge ``(i, j)`` of
    ``graph.edges()``'s ``k x k`` indicator, row-major with rows the label of ``i``
    (:meth:`advgame.polytopes.Marginal.constraints`)."""
    nodes = list(graph.nodes())
    N, E = len(nodes), graph.number_of_edges()
    k = round((math.sqrt(N * N + 4 * E * dim) - N) / (2 * E)) if E else dim // N
    if N * k + E * k * k != dim:
        raise ValueError(
            f"the loss's M has {dim} coordinates, not N k + |E| k^2 for this graph's N = {N} "
            f"nodes and |E| = {E} edges."
        )
    if not np.all(np.isin(Y, np.arange(k))):
        raise ValueError(f"y must hold node labels 0..{k - 1}, one column per node of the graph.")
    labels = Y.astype(np.int64)
    n = labels.shape[0]
    position = {node: i for i, node in enumerate(nodes)}
    first = np.array([position[a] for a, _ in graph.edges()], dtype=np.int64)
    second = np.array([position[b] for _, b in graph.edges()], dtype=np.int64)
    Z = np.zeros((n, dim))
    rows = np.arange(n)[:, None]
    Z[rows, np.arange(N)[None, :] * k + labels] = 1.0
    cells = labels[:, first] * k + labels[:, second]
    Z[rows, N * k + np.arange(E)[None, :] * k * k + cells] = 1.0
    return Z


def _are_vertices(polytope: object, E: np.ndarray, dim: int) -> np.ndarray:
    """Whether each row of ``E`` is a vertex of ``polytope`` (see :func:`polytope_outputs`)."""
    from ..exceptions import NotApplicableError, SizeLimitError

    shape = point_shape(polytope, dim)
    try:
        V = polytope.vertices(shape[0]).reshape(-1, dim)
    except (SizeLimitError, NotApplicableError, NotImplementedError):
        V = None
    if V is not None:
        scale = max(1.0, float(np.abs(V).max(initial=0.0)))
        keys = np.round(np.vstack([V, E]) / (scale * VERTEX_ATOL * 10)).astype(np.int64)
        _, inverse = np.unique(keys, axis=0, return_inverse=True)
        inverse = inverse.ravel()
        return np.isin(inverse[len(V) :], inverse[: len(V)])
    try:
        points = E.reshape(E.shape[0], *shape)
        inside = np.atleast_1d(polytope.contains(points, atol=VERTEX_ATOL))
        chosen = polytope.argmax(points).reshape(E.shape[0], dim)
        return inside & np.all(np.abs(chosen - E) <= VERTEX_ATOL, axis=1)
    except (NotApplicableError, NotImplementedError):
        return _in_description(polytope.constraints(dim), E)


def point_shape(polytope: object, dim: int) -> tuple[int, ...]:
    """The shape of one point with ``dim`` coordinates (``(k, k)`` for matrix polytopes)."""
    if getattr(polytope, "point_ndim", 1) == 2:
        k = math.isqrt(dim)
        if k * k != dim:
            raise ValueError(
                f"{polytope!r} holds k x k matrices, but the loss's matrix M has {dim} "
                "coordinates, not a square number."
            )
        return (k, k)
    return (dim,)


def _in_description(description: Any, E: np.ndarray) -> np.ndarray:
    """Whether each row of ``E`` satisfies a linear description without auxiliary variables."""
    if description.n_aux:
        raise ValueError(
            "the outputs' vertices cannot be checked: the polytope lists no vertices, has no "
            "linear maximisation oracle, and its linear description has auxiliary variables."
        )
    ok = np.all(description.A_ub @ E.T <= np.asarray(description.b_ub)[:, None] + VERTEX_ATOL, 0)
    if description.A_eq is not None and description.A_eq.shape[0]:
        gap = description.A_eq @ E.T - np.asarray(description.b_eq)[:, None]
        ok &= np.all(np.abs(gap) <= VERTEX_ATOL, axis=0)
    return np.asarray(ok).ravel()
