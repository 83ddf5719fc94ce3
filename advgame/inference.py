r"""Exact inference on tree- and forest-structured pairwise models (chains are the special case).

A model is a :class:`networkx.Graph` on the nodes ``0..N-1`` that has no cycle, node potentials
``psi`` of shape ``(N, k)`` and edge potentials ``Psi`` of shape ``(|E|, k, k)`` listed in the order
of ``list(graph.edges())``: ``Psi[e][a, b]`` is the potential of edge ``e = (i, j)`` (as networkx
lists it) when ``y_i = a`` and ``y_j = b``.  A joint labeling ``y`` scores

.. math::  s(y) = \sum_i \psi_{i, y_i} + \sum_{e = (i, j)} \Psi_{e, y_i, y_j} .

:func:`max_sum` returns ``argmax_y s(y)`` (max-sum / Viterbi), :func:`log_partition` returns
``log Z = log sum_y exp s(y)`` and :func:`marginals` returns the node and edge marginals of
``p(y) = exp(s(y) - log Z)`` (sum-product / forward-backward), all in ``O(|E| k^2)`` per model.

Every function also takes a leading batch axis: ``psi`` of shape ``(n, N, k)`` and/or ``Psi`` of
shape ``(n, |E|, k, k)``; an unbatched argument is shared by all ``n`` models.  The message passing
loops over the tree edges in Python and is vectorised over the batch.

Message passing.  Each connected component is rooted at its smallest node and visited breadth
first.  For a node ``v`` with parent ``p`` let ``M_v[a, b]`` be the potential of the edge between
them when ``y_p = a`` and ``y_v = b`` (``Psi[e]`` or its transpose, depending on how networkx lists
the edge).  The upward (leaves-to-root) pass computes, with ``⊕`` standing for ``max`` (max-sum)
or ``logsumexp`` (sum-product),

.. math::  u_v(b) = \psi_v(b) + \sum_{c \in \mathrm{ch}(v)} m_{c \to v}(b), \qquad
           m_{v \to p}(a) = \bigoplus_b \big(M_v[a, b] + u_v(b)\big),

and a root ``r`` contributes ``⊕_b u_r(b)`` (its component's maximum or log-partition function);
components add up.  The downward pass of sum-product sends

.. math::  d_v(b) = \operatorname{logsumexp}_a \big(M_v[a, b] + d_p(a) + u_p(a)
           - m_{v \to p}(a)\big), \qquad d_r = 0,

so that ``u_v + d_v`` is the log of the unnormalised node marginal of ``v``.
"""

from collections import deque

import networkx as nx
import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from ._validation import as_float_array, check_finite
from .exceptions import SizeLimitError

__all__ = [
    "check_forest",
    "check_graph",
    "rooted_forest",
    "max_sum",
    "log_partition",
    "marginals",
    "brute_force_scores",
    "MAX_BRUTE_FORCE_LABELINGS",
]

#: Largest number of joint labelings ``k ** N`` that :func:`brute_force_scores` enumerates.
MAX_BRUTE_FORCE_LABELINGS = 2_000_000


# ------------------------------------------------------------------------------------ validation
def check_forest(graph: nx.Graph) -> int:
    """Check that ``graph`` is a forest on the nodes ``0..N-1``.

    Parameters
    ----------
    graph : networkx.Graph
        Undirected simple graph, at least one node.

    Raises
    ------
    ValueError
        If ``graph`` is not an undirected simple :class:`networkx.Graph`, has no node, its nodes
        are not exactly ``0..N-1``, it has a self-loop or it has a cycle (is not a forest).
    """
    check_graph(graph)
    if graph.number_of_edges() > graph.number_of_nodes() - 1 or not nx.is_forest(graph):
        cycle = [u for u, _ in nx.find_cycle(graph)]
        raise ValueError(
            f"graph must be a forest (a tree or disjoint trees) for exact message passing; it has "
            f"a cycle through nodes {cycle}."
        )


def check_graph(graph: nx.Graph) -> int:
    """A simple undirected ``networkx.Graph`` on the nodes ``0..N-1`` (every graph model's input):
    everything :func:`check_forest` checks except acyclicity.  Returns ``N``."""
    if not isinstance(graph, nx.Graph):
        raise ValueError(f"graph must be a networkx.Graph; got {type(graph).__name__}.")
    if graph.is_directed() or graph.is_multigraph():
        raise ValueError(
            f"graph must be an undirected simple networkx.Graph; got {type(graph).__name__}."
        )
    n_nodes = graph.number_of_nodes()
    if n_nodes == 0:
        raise ValueError("graph must have at least one node; got the empty graph.")
    nodes = set(graph.nodes())
    if nodes != set(range(n_nodes)):
        extra = sorted(map(repr, nodes - set(range(n_nodes))))[:5]
        raise ValueError(
            f"graph nodes must be exactly 0..{n_nodes - 1}; found nodes outside that range: "
            f"{', '.join(extra)}. Relabel with networkx.convert_node_labels_to_integers."
        )
    loops = list(nx.selfloop_edges(graph))
    if loops:
        raise ValueError(f"graph must not have self-loops; found {loops[0]}.")
    return n_nodes


def _as_potential_array(name, value):
    array = as_float_array(name, value)
    check_finite(name, array)
    return array


def _validate(graph, psi, Psi, forest=True):
    """Check the graph and the potentials; return ``(psi3, Psi4, batched)`` with a batch axis.

    ``psi3`` has shape ``(n, N, k)`` and ``Psi4`` shape ``(n, |E|, k, k)`` (broadcast views when one
    argument is unbatched); ``batched`` says whether either input had the batch axis.  With
    ``forest=False`` cycles are allowed.
    """
    if forest:
        check_forest(graph)
    else:
        check_graph(graph)
    n_nodes, n_edges = graph.number_of_nodes(), graph.number_of_edges()
    psi = _as_potential_array("psi", psi)
    Psi = _as_potential_array("Psi", Psi)
    if psi.ndim not in (2, 3) or psi.shape[-2] != n_nodes or psi.shape[-1] < 1:
        raise ValueError(
            f"psi must have shape (N, k) = ({n_nodes}, k) or (n, N, k) = (n, {n_nodes}, k) with "
            f"k >= 1; got {psi.shape}."
        )
    k = psi.shape[-1]
    if Psi.ndim not in (3, 4) or Psi.shape[-3:] != (n_edges, k, k):
        raise ValueError(
            f"Psi must have shape (|E|, k, k) = ({n_edges}, {k}, {k}) or (n, |E|, k, k) = "
            f"(n, {n_edges}, {k}, {k}); got {Psi.shape}."
        )
    batched = psi.ndim == 3 or Psi.ndim == 4
    if psi.ndim == 3 and Psi.ndim == 4 and psi.shape[0] != Psi.shape[0]:
        raise ValueError(
            f"psi and Psi must have the same batch size; got psi {psi.shape} (n = {psi.shape[0]}) "
            f"and Psi {Psi.shape} (n = {Psi.shape[0]})."
        )
    n = psi.shape[0] if psi.ndim == 3 else (Psi.shape[0] if Psi.ndim == 4 else 1)
    psi3 = np.broadcast_to(psi, (n, n_nodes, k))
    Psi4 = np.broadcast_to(Psi, (n, n_edges, k, k))
    return psi3, Psi4, batched


# -------------------------------------------------------------------------------- message passing
def rooted_forest(
    graph: nx.Graph,
) -> tuple[list[int], np.ndarray, np.ndarray, np.ndarray, list[int]]:
    """Breadth-first schedule of the forest (each component rooted at its smallest node).

    Returns ``(order, parent, parent_edge, flipped, roots)``: ``order`` lists the nodes so that a
    parent precedes its children; ``parent[v]`` is ``-1`` for a root; ``parent_edge[v]`` is the
    index of the edge ``{parent[v], v}`` in ``list(graph.edges())`` and ``flipped[v]`` is True when
    networkx lists it as ``(v, parent[v])`` (so ``M_v = Psi[e].T``).
    """
    n_nodes = graph.number_of_nodes()
    edge_index = {edge: e for e, edge in enumerate(graph.edges())}
    parent = np.full(n_nodes, -1, dtype=np.intp)
    parent_edge = np.full(n_nodes, -1, dtype=np.intp)
    flipped = np.zeros(n_nodes, dtype=bool)
    visited = np.zeros(n_nodes, dtype=bool)
    order, roots = [], []
    for root in range(n_nodes):
        if visited[root]:
            continue
        roots.append(root)
        visited[root] = True
        queue = deque([root])
        while queue:
            node = queue.popleft()
            order.append(node)
            for child in graph.neighbors(node):
                if visited[child]:
                    continue
                visited[child] = True
                parent[child] = node
                if (node, child) in edge_index:
                    parent_edge[child] = edge_index[(node, child)]
                else:
                    parent_edge[child] = edge_index[(child, node)]
                    flipped[child] = True
                queue.append(child)
    return order, parent, parent_edge, flipped, roots


def _parent_child_potential(Psi4, v, parent_edge, flipped):
    """``M_v`` of shape ``(n, k, k)``: rows index the parent's label, columns ``v``'s label."""
    M = Psi4[:, parent_edge[v]]
    return np.swapaxes(M, 1, 2) if flipped[v] else M


def _upward(psi3, Psi4, plan, reduce):
    """Leaves-to-root pass; returns ``(up, messages)`` with ``up[v] = u_v`` of shape ``(n, k)``.

    ``reduce`` is ``"max"`` (max-sum: ``messages[v]`` is ``(m_{v->p}, argmax)``) or ``"logsumexp"``
    (sum-product: ``messages[v]`` is ``m_{v->p}``).
    """
    order, parent, parent_edge, flipped, _ = plan
    up = psi3.transpose(1, 0, 2).copy()  # (N, n, k): u_v accumulates its children's messages
    messages = {}
    for v in reversed(order):
        p = parent[v]
        if p < 0:
            continue
        scores = _parent_child_potential(Psi4, v, parent_edge, flipped) + up[v][:, None, :]
        if reduce == "max":
            best = np.argmax(scores, axis=2)  # (n, k): best label of v given the parent's label
            message = np.take_along_axis(scores, best[:, :, None], axis=2)[:, :, 0]
            messages[v] = (message, best)
        else:
            message = logsumexp(scores, axis=2)
            messages[v] = message
        up[p] += message
    return up, messages


def _labeling_scores(psi3, Psi4, labels, edges):
    """``s(y)`` for labels of shape ``(n, N)``; returns shape ``(n,)``."""
    n, n_nodes, _ = psi3.shape
    rows = np.arange(n)[:, None]
    total = psi3[rows, np.arange(n_nodes)[None, :], labels].sum(axis=1)
    if edges.size:
        heads, tails = edges[:, 0], edges[:, 1]
        total += Psi4[rows, np.arange(len(edges))[None, :], labels[:, heads], labels[:, tails]].sum(
            axis=1
        )
    return total


def _edge_array(graph):
    return np.array(list(graph.edges()), dtype=np.intp).reshape(-1, 2)


# -------------------------------------------------------------------------------- public kernels
def max_sum(
    graph: nx.Graph, psi: ArrayLike, Psi: ArrayLike
) -> tuple[np.ndarray, np.ndarray | float]:
    r"""Exact MAP labeling of a forest model by max-sum message passing (Viterbi on a chain).

    With the components rooted at their smallest node, the upward pass computes

    .. math::  u_v(b) = \psi_v(b) + \sum_{c \in \mathrm{ch}(v)} m_{c \to v}(b), \qquad
               m_{v \to p}(a) = \max_b \big(M_v[a, b] + u_v(b)\big),

    recording the maximiser ``b^*_v(a)``; then ``y_r = argmax_b u_r(b)`` at each root and
    ``y_v = b^*_v(y_p)`` downwards.  ``M_v[a, b]`` is the edge potential with ``y_p = a``,
    ``y_v = b``.  Ties are broken towards the smallest label (``numpy.argmax``), so the result is
    deterministic.

    Parameters
    ----------
    graph : networkx.Graph
        A forest on the nodes ``0..N-1`` (see :func:`check_forest`).
    psi : array-like of shape (N, k) or (n, N, k)
        Node potentials.
    Psi : array-like of shape (n_edges, k, k) or (n, n_edges, k, k)
        Edge potentials in the order of ``list(graph.edges())``.

    Returns
    -------
    labels : ndarray of shape (N,) or (n, N), int64
        A maximiser of ``s(y)``.
    score : float or ndarray of shape (n,)
        ``s(labels)``, the maximal score.

    Raises
    ------
    ValueError
        If the graph is not a forest on ``0..N-1``, the shapes do not match or a potential is
        NaN or infinite.
    """
    psi3, Psi4, batched = _validate(graph, psi, Psi)
    plan = rooted_forest(graph)
    order, parent, _, _, roots = plan
    up, messages = _upward(psi3, Psi4, plan, "max")
    n = psi3.shape[0]
    labels = np.empty((n, graph.number_of_nodes()), dtype=np.int64)
    labels[:, roots] = np.argmax(up[roots], axis=2).T
    rows = np.arange(n)
    for v in order:
        if parent[v] >= 0:
            labels[:, v] = messages[v][1][rows, labels[:, parent[v]]]
    score = _labeling_scores(psi3, Psi4, labels, _edge_array(graph))
    return (labels, score) if batched else (labels[0], float(score[0]))


def log_partition(graph: nx.Graph, psi: ArrayLike, Psi: ArrayLike) -> np.ndarray | float:
    r"""Log-partition function ``log Z = log sum_y exp s(y)`` of a forest model (sum-product).

    The upward pass in log space,

    .. math::  u_v(b) = \psi_v(b) + \sum_{c \in \mathrm{ch}(v)} m_{c \to v}(b), \qquad
               m_{v \to p}(a) = \operatorname{logsumexp}_b \big(M_v[a, b] + u_v(b)\big),

    gives ``log Z = sum_r logsumexp_b u_r(b)`` over the roots ``r`` of the components.  Every step
    is a ``scipy.special.logsumexp``, so potentials of any finite magnitude (e.g. ``1e4``) do not
    overflow.  The arguments, and the errors raised, are those of :func:`max_sum`.

    Returns
    -------
    log_Z : float or ndarray of shape (n,)
    """
    psi3, Psi4, batched = _validate(graph, psi, Psi)
    plan = rooted_forest(graph)
    up, _ = _upward(psi3, Psi4, plan, "logsumexp")
    log_Z = logsumexp(up[plan[4]], axis=2).sum(axis=0)
    return log_Z if batched else float(log_Z[0])


def marginals(
    graph: nx.Graph, psi: ArrayLike, Psi: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray | float]:
    r"""Node and edge marginals of ``p(y) = exp(s(y) - log Z)`` on a forest (belief propagation).

    After the upward pass of :func:`log_partition` the downward pass sends, from each parent ``p``
    to its child ``v``,

    .. math::  d_v(b) = \operatorname{logsumexp}_a \big(M_v[a, b] + d_p(a) + u_p(a)
               - m_{v \to p}(a)\big), \qquad d_r = 0 \text{ at a root},

    (``u_p - m_{v->p}`` is ``p``'s belief without ``v``'s message).  Then

    .. math::  P(y_v = b) \propto \exp\big(u_v(b) + d_v(b)\big), \qquad
               P(y_p = a, y_v = b) \propto \exp\big(d_p(a) + u_p(a) - m_{v \to p}(a)
               + M_v[a, b] + u_v(b)\big),

    each normalised with ``logsumexp`` (on a chain this is forward-backward).  The arguments, and
    the errors raised, are those of :func:`max_sum`.

    Returns
    -------
    node_marginals : ndarray of shape (N, k) or (n, N, k)
        ``node_marginals[..., i, a] = P(y_i = a)``.
    edge_marginals : ndarray of shape (n_edges, k, k) or (n, n_edges, k, k)
        ``edge_marginals[..., e, a, b] = P(y_i = a, y_j = b)`` for ``e = (i, j)`` as listed by
        ``graph.edges()`` (the orientation of ``Psi``).
    log_Z : float or ndarray of shape (n,)
        As :func:`log_partition`.
    """
    psi3, Psi4, batched = _validate(graph, psi, Psi)
    plan = rooted_forest(graph)
    order, parent, parent_edge, flipped, roots = plan
    up, messages = _upward(psi3, Psi4, plan, "logsumexp")
    n, n_nodes, k = psi3.shape
    down = np.zeros((n_nodes, n, k))
    edge_log = np.empty((n, Psi4.shape[1], k, k))
    for v in order:
        p = parent[v]
        if p < 0:
            continue
        outside = down[p] + up[p] - messages[v]  # (n, k): p's belief without v's message
        from_parent = outside[:, :, None] + _parent_child_potential(Psi4, v, parent_edge, flipped)
        down[v] = logsumexp(from_parent, axis=1)
        joint = from_parent + up[v][:, None, :]  # (n, k, k): log P(y_p = a, y_v = b) + log Z
        edge_log[:, parent_edge[v]] = np.swapaxes(joint, 1, 2) if flipped[v] else joint
    node_log = up + down
    node_log -= logsumexp(node_log, axis=2, keepdims=True)
    node_marginals = np.exp(node_log).transpose(1, 0, 2)
    if edge_log.size:
        edge_log -= logsumexp(edge_log, axis=(2, 3), keepdims=True)
    edge_marginals = np.exp(edge_log)
    log_Z = logsumexp(up[roots], axis=2).sum(axis=0)
    if batched:
        return node_marginals, edge_marginals, log_Z
    return node_marginals[0], edge_marginals[0], float(log_Z[0])


def brute_force_scores(
    graph: nx.Graph, psi: ArrayLike, Psi: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    r"""Scores ``s(y)`` of all ``k ** N`` joint labelings, by enumeration (a reference for tests).

    .. math::  s(y) = \sum_i \psi_{i, y_i} + \sum_{e = (i, j)} \Psi_{e, y_i, y_j}

    for every ``y`` in lexicographic order (``y_0`` slowest, as :func:`itertools.product`).  The
    graph may have cycles here; its nodes must still be ``0..N-1``.

    Parameters
    ----------
    graph : networkx.Graph
        Graph on the nodes ``0..N-1`` (cycles allowed).
    psi, Psi
        As in :func:`max_sum`.

    Returns
    -------
    labelings : ndarray of shape (k ** N, N), int64
    scores : ndarray of shape (k ** N,) or (n, k ** N)

    Raises
    ------
    advgame.exceptions.SizeLimitError
        (a ``ValueError``) If ``k ** N`` exceeds :data:`MAX_BRUTE_FORCE_LABELINGS`.
    ValueError
        For mismatched shapes or NaN/infinite potentials.
    """
    psi3, Psi4, batched = _validate(graph, psi, Psi, forest=False)
    n_nodes, k = psi3.shape[1:]
    n_labelings = k**n_nodes
    if n_labelings > MAX_BRUTE_FORCE_LABELINGS:
        raise SizeLimitError(
            f"brute force would enumerate k ** N = {k} ** {n_nodes} = {n_labelings} labelings, "
            f"more than MAX_BRUTE_FORCE_LABELINGS = {MAX_BRUTE_FORCE_LABELINGS}; use max_sum, "
            f"log_partition or marginals instead."
        )
    index = np.arange(n_labelings, dtype=np.int64)
    powers = k ** np.arange(n_nodes - 1, -1, -1, dtype=np.int64)
    labelings = (index[:, None] // powers[None, :]) % k
    scores = np.zeros((psi3.shape[0], n_labelings))
    for i in range(n_nodes):
        scores += psi3[:, i, labelings[:, i]]
    for e, (i, j) in enumerate(graph.edges()):
        scores += Psi4[:, e, labelings[:, i], labelings[:, j]]
    return labelings, (scores if batched else scores[0])
