r"""Graph examples stacked for the graph games' programs and estimators (Fathony et al. 2018b).

A data set of graph examples is a list of node-input arrays ``(N_s, d)``, optional edge inputs
``(|E_s|, d_e)`` (rows in ``list(graph.edges())`` order) and label arrays ``(N_s,)``.
:class:`ExampleBinding` validates and stacks them once (node rows ``X1 = [X, 1]``, edge rows
``Z1 = [Z, 1]``, labels as indices into ``classes_``), grouping the examples that share one graph,
so the compiler (:mod:`advgame.compile.graph`) and the estimators
(:mod:`advgame.models.graphical`) work on the same arrays without per-example loops in their
hot paths.
"""

from dataclasses import dataclass

import networkx as nx
import numpy as np

from ._validation import as_float_array, check_feature_scale
from .inference import check_graph

__all__ = ["ExampleBinding"]


@dataclass
class _Group:
    """Examples sharing one graph: their stacked node rows (n_g, N) and edge rows (n_g, E)."""

    graph: nx.Graph
    node_weights: np.ndarray
    examples: np.ndarray
    nodes: np.ndarray
    edges: np.ndarray


@dataclass
class _Data:
    """A list of examples stacked: node inputs ``X1``, edge inputs ``Z1``, labels, groups."""

    X1: np.ndarray
    Z1: np.ndarray
    y: np.ndarray
    weights: np.ndarray
    groups: list
    n_examples: int
    starts: np.ndarray  # first node row of each example


def _as_example_list(name, values):
    if isinstance(values, np.ndarray) and values.dtype != object:
        raise ValueError(
            f"{name} must be a list with one array per example (sequence or graph); got a single "
            f"{values.ndim}-d array."
        )
    try:
        values = list(values)
    except TypeError:
        raise ValueError(f"{name} must be a list with one array per example.") from None
    if not values:
        raise ValueError(f"{name} must hold at least one example; got an empty list.")
    return values


def _check_inputs(name, values, n_columns=None):
    """Each element a finite 2-d float array with ``n_columns`` columns."""
    arrays = []
    for s, value in enumerate(values):
        A = as_float_array(f"{name}[{s}]", value)
        if A.ndim != 2 or A.shape[0] == 0:
            raise ValueError(f"{name}[{s}] must be a non-empty 2-d array; got shape {A.shape}.")
        if not np.all(np.isfinite(A)):
            raise ValueError(f"{name}[{s}] contains NaN or infinite values.")
        check_feature_scale(A, f"{name}[{s}]")
        if n_columns is not None and A.shape[1] != n_columns:
            raise ValueError(
                f"{name}[{s}] has {A.shape[1]} columns; expected {n_columns} (as in fit)."
            )
        n_columns = A.shape[1]
        arrays.append(A)
    return arrays


class ExampleBinding:
    """Validation and stacking of graph examples (a mixin).

    Reads ``graph`` (``'chain'`` or a networkx graph) and ``node_weights`` (None, 'position',
    an array or a callable) from the instance; ``_bind(..., fitting=True)`` sets
    ``n_features_in_``, ``n_edge_features_in_`` and ``classes_``.
    """

    def _graph_for(self, n_nodes):
        if isinstance(self.graph, str):
            if self.graph != "chain":
                raise ValueError(f"graph must be 'chain' or a networkx.Graph; got {self.graph!r}.")
            return nx.path_graph(n_nodes)
        return self.graph

    def _weights_for(self, n_nodes):
        w = self.node_weights
        if w is None:
            return np.ones(n_nodes)
        if isinstance(w, str):
            if w != "position":
                raise ValueError(
                    f"node_weights must be None, 'position', an array or a callable; got {w!r}."
                )
            return np.arange(1.0, n_nodes + 1.0)
        w = np.asarray(w(n_nodes) if callable(w) else w, dtype=np.float64)
        if w.shape != (n_nodes,) or not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError(
                f"node_weights must give {n_nodes} finite non-negative weights for an example "
                f"with {n_nodes} nodes; got {w!r}."
            )
        return w

    def _bind(self, X_list, edge_X_list=None, y_list=None, fitting=False):
        """Validate and stack a list of examples; returns :class:`_Data`."""
        X_list = _as_example_list("X_list", X_list)
        arrays = _check_inputs("X_list", X_list, None if fitting else self.n_features_in_)
        if fitting:
            self.n_features_in_ = arrays[0].shape[1]
        if not isinstance(self.graph, str):
            n_graph = check_graph(self.graph)
            bad = [s for s, A in enumerate(arrays) if A.shape[0] != n_graph]
            if bad:
                raise ValueError(
                    f"X_list[{bad[0]}] has {arrays[bad[0]].shape[0]} rows but the graph has "
                    f"{n_graph} nodes; every example needs one row per node."
                )
        graphs = {}
        for A in arrays:
            if A.shape[0] not in graphs:
                graph = self._graph_for(A.shape[0])
                graphs[A.shape[0]] = (graph, self._weights_for(A.shape[0]))
        sizes = np.array([A.shape[0] for A in arrays])
        n_edges = {N: graphs[N][0].number_of_edges() for N in graphs}
        edge_counts = np.array([n_edges[N] for N in sizes])
        if edge_X_list is None:
            if fitting:
                self.n_edge_features_in_ = 0
            elif self.n_edge_features_in_:
                raise ValueError("this model was fitted with edge_X_list; pass it again.")
            Z1 = np.ones((int(edge_counts.sum()), 1))
        else:
            Z = self._edge_inputs(edge_X_list, edge_counts, fitting)
            Z1 = np.hstack([Z, np.ones((Z.shape[0], 1))])
        X1 = np.hstack([np.vstack(arrays), np.ones((int(sizes.sum()), 1))])
        y = np.zeros(X1.shape[0], dtype=int)
        if y_list is not None:
            y = self._encode(y_list, sizes, fitting)
        node_starts = np.concatenate([[0], np.cumsum(sizes)])
        edge_starts = np.concatenate([[0], np.cumsum(edge_counts)])
        groups = []
        for N, (graph, w) in graphs.items():
            examples = np.flatnonzero(sizes == N)
            groups.append(
                _Group(
                    graph,
                    w,
                    examples,
                    node_starts[examples][:, None] + np.arange(N),
                    edge_starts[examples][:, None] + np.arange(n_edges[N]),
                )
            )
        weights = np.concatenate([graphs[N][1] for N in sizes])
        return _Data(X1, Z1, y, weights, groups, len(arrays), node_starts[:-1])

    def _edge_inputs(self, edge_X_list, edge_counts, fitting):
        """Stack ``edge_X_list`` (one ``(|E_s|, d_e)`` array per example) after checking it."""
        edge_X_list = _as_example_list("edge_X_list", edge_X_list)
        if len(edge_X_list) != edge_counts.size:
            raise ValueError(
                f"edge_X_list has {len(edge_X_list)} examples; X_list has {edge_counts.size}."
            )
        if not fitting and self.n_edge_features_in_ == 0:
            raise ValueError("this model was fitted without edge_X_list; do not pass one.")
        width = None if fitting else self.n_edge_features_in_
        arrays = []
        for s, (value, count) in enumerate(zip(edge_X_list, edge_counts)):
            Z = as_float_array(f"edge_X_list[{s}]", value)
            if Z.ndim != 2 or Z.shape[0] != count or (width is not None and Z.shape[1] != width):
                raise ValueError(
                    f"edge_X_list[{s}] must have shape ({count}, {width or 'd_e'}): one row per "
                    f"edge of list(graph.edges()); got {Z.shape}."
                )
            if not np.all(np.isfinite(Z)):
                raise ValueError(f"edge_X_list[{s}] contains NaN or infinite values.")
            width = Z.shape[1]
            arrays.append(Z)
        if fitting:
            self.n_edge_features_in_ = width
        return np.vstack(arrays)

    def _encode(self, y_list, sizes, fitting):
        y_list = _as_example_list("y_list", y_list)
        if len(y_list) != sizes.size:
            raise ValueError(f"y_list has {len(y_list)} examples; X_list has {sizes.size}.")
        labels = []
        for s, (value, N) in enumerate(zip(y_list, sizes)):
            y = np.asarray(value)
            if y.shape != (N,):
                raise ValueError(
                    f"y_list[{s}] must hold {N} labels (one per node); got shape {y.shape}."
                )
            if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
                raise ValueError(
                    f"y_list[{s}] holds NaN or infinite labels; every node needs a label."
                )
            if y.dtype.kind == "O":
                raise ValueError(
                    f"y_list[{s}] must hold numbers or strings (one dtype); got an object array."
                )
            labels.append(y)
        y = np.concatenate(labels)
        if fitting:
            self.classes_ = np.unique(y)
            if self.classes_.size < 2:
                raise ValueError(
                    f"y_list must contain at least 2 distinct labels; got {self.classes_}."
                )
        index = np.searchsorted(self.classes_, y)
        index = np.clip(index, 0, self.classes_.size - 1)
        unknown = self.classes_[index] != y
        if np.any(unknown):
            raise ValueError(
                f"y_list holds labels not seen in fit: {np.unique(y[unknown])[:5]}; known labels "
                f"are {self.classes_}."
            )
        return index
