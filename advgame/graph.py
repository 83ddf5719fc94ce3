r"""Graph games: the adversarial game of one structured example (Fathony et al. 2018b).

The formulation is restated in the design notes (docs/design.md, Appendix A).

Labels ``y = (y_1..y_N)`` on a networkx graph, an additive node-weighted loss
``sum_i w_i L[ŷ_i, y_i]`` and potentials ``psi`` (N, k) on nodes and ``Psi`` ``(|E|, k, k)`` on edges
(``Psi[e][a, b]`` for edge ``e = (i, j)`` of ``list(graph.edges())`` with ``y_i = a, y_j = b``).
The predictor needs only node marginals and the adversary only node and edge marginals
(Fathony et al. 2018b, Theorem 1), so

.. math::  \mathrm{value} = \max_{\mu \in \mathcal M(G)} \sum_i w_i \min_a (L q_i)_a
           + \sum_i \psi_i^\top q_i + \sum_{(i,j)} \langle \Psi_{ij}, Q_{ij} \rangle ,

(Fathony et al. 2018b, Eq. 5-6) with ``M(G)`` the marginal polytope.  It is written over *regions*:
on a forest the edges and nodes with ``Q_ij 1 = q_i``, ``Q_ij^T 1 = q_j`` (the local polytope, exact
on trees); otherwise the bags of networkx's tree decomposition (a junction tree) with consistent
separator marginals, exact by the junction-tree theorem while ``k^(width + 1)`` stays under
:data:`MAX_CLIQUE_STATES`.  The local polytope on a graph with cycles is a relaxation: it is only
used when asked for (``polytope='local'``) and ``exact`` is then False.

Two methods compute the game: ``lp`` (one persistent HiGHS model per game; only costs change)
and ``dual_decomposition`` (forests, Fathony et al. 2018b, Theorem 2).  The latter relaxes the
constraints ``Q_e^T 1 = q_parent`` of each tree edge ``e`` (child to parent) with multipliers
``lambda_e``; the dual function

.. math::  D(\lambda) = \sum_i \mathrm{value}_{w_i L}(s_i(\lambda)), \qquad
           s_i(\lambda)_a = \psi_{i,a} + \max_b \big(\Phi_i[a, b] + \lambda_i[b]\big)
                            - \sum_{c \in \mathrm{ch}(i)} \lambda_c[a]

(``Phi_i`` the table of the edge to ``i``'s parent, rows ``i``'s labels) is a sum of ordinary
multiclass games (Eq. 8), each evaluated by the closed forms of :mod:`advgame.closed_forms`, and
every ``D(lambda)`` bounds the value from above.  ``D`` is minimised by column generation
(Dantzig-Wolfe, the LP dual of Kelley's cutting planes on ``D``): a small *master* LP holds the
node marginals as mixtures of the subproblems' solutions and the edge marginals as transport
plans between them (Eq. 9, all edges in one HiGHS model), its solution is a feasible adversary
(a lower bound) and its row duals are the next multipliers.  The difference of the two bounds
is an exact certificate; when it does not close the LP is used instead.
"""

import itertools
import numbers
import threading
from dataclasses import dataclass

import highspy
import networkx as nx
import numpy as np
from numpy.typing import ArrayLike
from scipy import sparse

from ._validation import as_float_array, check_finite, check_real
from .exceptions import NotApplicableError, SizeLimitError
from .game import Game
from .inference import check_graph, max_sum, rooted_forest
from .losses import LossMatrix, as_loss_matrix
from .oracle import LP_TOLERANCE, highs_model, run_warm

__all__ = [
    "GraphGame",
    "GraphSolution",
    "Regions",
    "build_regions",
    "brute_force_game",
    "GRAPH_METHODS",
    "MAX_CLIQUE_STATES",
]

#: ``method`` values of :meth:`GraphGame.solve`.
GRAPH_METHODS = ("auto", "lp", "dual_decomposition")
#: ``polytope`` values of :func:`build_regions`.
POLYTOPES = ("marginal", "local")
#: Largest joint state count ``k^|bag|`` of one junction-tree bag (the treewidth limit).
MAX_CLIQUE_STATES = 100_000
#: Dual decomposition: most rounds of column generation (one evaluation of ``D`` by the closed
#: forms and one warm re-solve of the master each).  Chains of 50 nodes took 3-23 (k = 3-10,
#: potentials of scale 0.1-10); column generation is finite, the budget only guards against
#: numerical stalling.
DD_MAX_ITER = 200
#: Certified relative gap: ``D(lambda) - primal <= DD_TOL * max(1, |value|)``, i.e. at most 1e-6
#: in absolute terms for values up to 1e4.  Both bounds are evaluated directly (the node games and
#: an exactly consistent adversary): with the closed forms their rounding is about 1e-13.
DD_TOL = 1e-10
#: A column enters the master when its reduced cost exceeds this, relative to
#: ``max(1, |master value|)``: below HiGHS's own dual tolerance (``LP_TOLERANCE``) so no improving
#: column is missed; a column already in the master is never added twice, so rounds still end.
DD_PRICE_TOL = 1e-12
#: Slack on each relaxed constraint costs ``DD_SLACK_PENALTY`` times the potentials' magnitude
#: (keeps the first masters feasible before enough transport pairs are in); multiplied by
#: ``DD_SLACK_GROWTH`` whenever the slack is still used at a master optimum.
DD_SLACK_PENALTY = 4.0
DD_SLACK_GROWTH = 4.0
#: Largest ``k^N`` for :func:`brute_force_game`.
MAX_BRUTE_FORCE_LABELINGS = 5_000


@dataclass(frozen=True)
class Regions:
    """The variables of the marginal polytope: region marginals and their consistency pairs.

    Attributes
    ----------
    regions : tuple of tuple of int
        Sorted graph nodes of each region (a bag, an edge or a single node).
    pairs : tuple of (int, int, tuple of int)
        ``(r, s, shared)``: regions ``r`` and ``s`` must agree on their marginal over ``shared``.
    node_region, edge_region : ndarray of int
        A region holding each node / each edge of ``list(graph.edges())``.
    exact : bool
        Whether the polytope is the marginal polytope (False: the local relaxation with cycles).
    width : int
        Largest region size minus one (the treewidth of the decomposition used).
    """

    regions: tuple
    pairs: tuple
    node_region: np.ndarray
    edge_region: np.ndarray
    exact: bool
    width: int


def build_regions(graph: nx.Graph, k: int, polytope: str = "marginal") -> Regions:
    """Regions of ``graph`` for ``k`` labels (see :class:`Regions`).

    Forests (and ``polytope='local'``): one region per node and per edge, each edge tied to its
    two nodes.  Graphs with cycles: the bags of
    ``networkx.algorithms.approximation.treewidth_min_fill_in`` tied along the decomposition
    tree by their separators; :class:`SizeLimitError` when a bag has more than
    :data:`MAX_CLIQUE_STATES` joint states.
    """
    if polytope not in POLYTOPES:
        raise ValueError(f"polytope must be one of {POLYTOPES}; got {polytope!r}.")
    n = check_graph(graph)
    edges = list(graph.edges())
    forest = nx.is_forest(graph)
    if forest or polytope == "local":
        regions = [(i,) for i in range(n)] + [tuple(sorted(e)) for e in edges]
        pairs = []
        for e, (i, j) in enumerate(edges):
            pairs += [(n + e, i, (i,)), (n + e, j, (j,))]
        return Regions(
            tuple(regions), tuple(pairs), np.arange(n), n + np.arange(len(edges)), forest, 1
        )
    from networkx.algorithms.approximation import treewidth_min_fill_in

    width, tree = treewidth_min_fill_in(graph)
    if k ** (width + 1) > MAX_CLIQUE_STATES:
        raise SizeLimitError(
            f"the junction tree of this graph has a bag of {width + 1} nodes: {k}^{width + 1} = "
            f"{k ** (width + 1):,} joint states, over the limit of {MAX_CLIQUE_STATES:,} "
            "(treewidth too large). Use polytope='local' for the local-polytope relaxation."
        )
    bags = list(tree.nodes())
    index = {bag: r for r, bag in enumerate(bags)}
    regions = tuple(tuple(sorted(bag)) for bag in bags)
    pairs = tuple((index[a], index[b], tuple(sorted(a & b))) for a, b in tree.edges() if len(a & b))
    node_region = np.array([next(r for r, bag in enumerate(bags) if i in bag) for i in range(n)])
    edge_region = np.array(
        [next(r for r, bag in enumerate(bags) if i in bag and j in bag) for i, j in edges],
        dtype=int,
    )
    return Regions(regions, pairs, node_region, edge_region, True, width)


def _marginalizer(region, onto, k):
    """Sparse ``(k^|onto|, k^|region|)`` 0/1 matrix summing a region marginal onto ``onto``
    (axes in the order given, e.g. an edge's ``(i, j)``)."""
    states = np.indices((k,) * len(region)).reshape(len(region), -1)
    position = [region.index(v) for v in onto]
    rows = np.ravel_multi_index(states[position], (k,) * len(onto)) if onto else 0
    columns = np.arange(states.shape[1])
    return sparse.csr_matrix(
        (np.ones(columns.size), (np.broadcast_to(rows, columns.shape), columns)),
        shape=(k ** len(onto), states.shape[1]),
    )


class _GraphLP:
    r"""The exact program of :meth:`GraphGame.inner_program` with a persistent HiGHS model.

    Columns: the region marginals ``mu >= 0`` then one ``v_i`` per node.  Rows: ``E mu = b``
    (normalisation and separator consistency), then ``(W mu)_{il+a} - v_i >= 0`` per node and
    action.  Objective ``max c^T mu + sum_i v_i``; only the costs ``c`` change between solves.
    The loss rows' duals are the predictor's node marginals ``p_i``.
    """

    def __init__(self, inner_program):
        self._inner_program = inner_program
        self._highs = None
        self._lock = threading.Lock()

    def _build(self):
        inner = self.inner = self._inner_program()
        n_mu = inner.equalities.shape[1]
        n, l = inner.n_nodes, inner.n_actions
        values = sparse.kron(sparse.identity(n), -np.ones((l, 1)))
        A = sparse.vstack(
            [
                sparse.hstack([inner.equalities, sparse.csr_matrix((inner.rhs.size, n))]),
                sparse.hstack([inner.losses, values]),
            ]
        ).tocsc()
        return highs_model(
            A,
            np.r_[np.zeros(n_mu), np.ones(n)],
            (np.r_[np.zeros(n_mu), np.full(n, -np.inf)], np.full(A.shape[1], np.inf)),
            (np.r_[inner.rhs, np.zeros(n * l)], np.r_[inner.rhs, np.full(n * l, np.inf)]),
            maximize=True,
        )

    def solve(self, psi, Psi):
        """``(value, q (N, k), Q (|E|, k, k), p (N, l))`` for one example."""
        with self._lock:
            if self._highs is None:
                self._highs = self._build()
            h, inner = self._highs, self.inner
            mu_costs = inner.costs(psi, Psi)
            h.changeColsCost(mu_costs.size, np.arange(mu_costs.size, dtype=np.int32), mu_costs)
            run_warm(h, "the graph game LP")
            solution = h.getSolution()
            mu = np.asarray(solution.col_value)[: mu_costs.size]
            duals = -np.asarray(solution.row_dual)[inner.rhs.size :]
            value = h.getInfo().objective_function_value
        n, k, l = inner.n_nodes, psi.shape[1], inner.n_actions
        q = (inner.node_maps @ mu).reshape(n, k)
        Q = (inner.edge_maps @ mu).reshape(Psi.shape)
        P = np.clip(duals.reshape(n, l), 0.0, None)
        totals = P.sum(axis=1, keepdims=True)
        P = np.where(totals > 0, P / np.where(totals > 0, totals, 1.0), 1.0 / l)
        return value, np.clip(q, 0.0, None), np.clip(Q, 0.0, None), P


@dataclass(frozen=True)
class _Forest:
    """A forest rooted by :func:`advgame.inference.rooted_forest`, as arrays over its tree edges
    (one per non-root node, ``E`` in all).

    Attributes
    ----------
    order : ndarray (N,)
        Nodes, each parent before its children.
    child, parent, edge : ndarray (E,)
        Child and parent node of each tree edge and its index in ``list(graph.edges())``.
    child_first : ndarray of bool (E,)
        networkx lists the edge as ``(child, parent)``: ``Psi[edge]`` rows are the child's labels.
    slot : ndarray (N,)
        The tree edge from each node to its parent, -1 for roots.
    kids : ndarray (N, c)
        The tree edges to each node's children, padded with -1.
    """

    order: np.ndarray
    child: np.ndarray
    parent: np.ndarray
    edge: np.ndarray
    child_first: np.ndarray
    slot: np.ndarray
    kids: np.ndarray


def _forest(graph):
    """The :class:`_Forest` of a forest ``graph``."""
    order, parent, edge, flipped, _ = rooted_forest(graph)
    child = np.flatnonzero(parent >= 0)
    n, n_edges = len(parent), len(child)
    slot = np.full(n, -1)
    slot[child] = np.arange(n_edges)
    counts = np.bincount(parent[child], minlength=n)
    kids = np.full((n, max(counts.max(initial=0), 1)), -1)
    by_parent = np.argsort(parent[child], kind="stable")
    column = np.arange(n_edges) - np.repeat(np.cumsum(counts) - counts, counts)
    kids[parent[child][by_parent], column] = by_parent
    return _Forest(np.asarray(order), child, parent[child], edge[child], flipped[child], slot, kids)


def _edge_tables(forest, Psi):
    """``Phi`` (E, k, k): the potential of each tree edge with rows the child's labels."""
    tables = Psi[forest.edge]
    return np.where(forest.child_first[:, None, None], tables, tables.transpose(0, 2, 1))


def _node_scores(forest, psi, Phi, lam, rows=None):
    r"""The potentials ``s_i(lambda)`` of the node subproblems (Theorem 2, Eq. 8).

    ``rows`` (E, k) replaces ``max_b (Phi_e[a, b] + lambda_e[b])`` as the edge term of each child
    label (the master prices with its own row duals).
    """
    s = psi.copy()
    if len(forest.child):
        s[forest.child] += (Phi + lam[:, None, :]).max(axis=2) if rows is None else rows
        np.subtract.at(s, forest.parent, lam)
    return s


def _consistent(forest, q, Q):
    """Exactly consistent marginals near ``(q, Q)`` (a master solution, consistent only up to
    HiGHS's tolerance), so that their value is a true lower bound.

    Top-down: each root's ``q`` is normalised; each child's plan gets its columns rescaled to the
    parent's marginal (a column with no mass takes it on the child's likeliest label), and the
    child's marginal becomes the plan's row sums.
    """
    q = np.clip(q, 0.0, None)
    Q = np.clip(Q, 0.0, None)
    roots = forest.slot < 0
    q[roots] /= q[roots].sum(axis=1, keepdims=True)
    for node in forest.order:
        e = forest.slot[node]
        if e < 0:
            continue
        target = q[forest.parent[e]]
        mass = Q[e].sum(axis=0)
        Q[e] *= np.divide(target, mass, out=np.zeros_like(mass), where=mass > 0)
        empty = mass <= 0
        Q[e, np.argmax(q[node]), empty] = target[empty]
        q[node] = Q[e].sum(axis=1)
    return q, Q


class _Master:
    r"""The Dantzig-Wolfe master of the dual decomposition: a HiGHS LP built for one example.

    Columns: a mixture weight ``alpha`` per (node, subproblem solution ``q``) with value
    ``w_i H_L(q) + psi_i . q``; a transport entry ``Q_e[a, b]`` per tree edge and label pair with
    value ``Phi_e[a, b]``; a slack pair on each relaxed row, valued ``-penalty``.  Rows:
    ``sum alpha = 1`` per node, and per tree edge ``Q_e 1 = q_child`` and ``Q_e^T 1 = q_parent``
    (the relaxed constraints, whose duals are ``-lambda``).  Maximised.
    """

    def __init__(self, forest, n_nodes, k, penalty):
        self.forest, self.n_nodes, self.k = forest, n_nodes, k
        n_edges = len(forest.child)
        self.relaxed = n_nodes + n_edges * k  # first row of Q_e^T 1 = q_parent
        rows = self.relaxed + np.arange(n_edges * k)
        self.n_slack = 2 * rows.size
        slack = sparse.csc_matrix(
            (
                np.r_[np.ones(rows.size), -np.ones(rows.size)],
                (np.r_[rows, rows], np.arange(self.n_slack)),
            ),
            shape=(self.relaxed + n_edges * k, self.n_slack),
        )
        bounds = np.r_[np.ones(n_nodes), np.zeros(2 * n_edges * k)]
        self.highs = highs_model(
            slack,
            np.full(self.n_slack, -penalty),
            (np.zeros(self.n_slack), np.full(self.n_slack, np.inf)),
            (bounds, bounds),
            maximize=True,
        )
        self.blocks = []  # ('nodes', nodes, q) / ('pairs', e, a, b) in column order
        self.seen = set()
        self.pairs = np.zeros((n_edges, k, k), dtype=bool)

    def penalise(self, penalty):
        """Set the slack columns' cost to ``-penalty``."""
        columns = np.arange(self.n_slack, dtype=np.int32)
        self.highs.changeColsCost(self.n_slack, columns, np.full(self.n_slack, -penalty))

    def _add(self, costs, starts, rows, values):
        n = len(costs)
        self.highs.addCols(
            n,
            costs,
            np.zeros(n),
            np.full(n, highspy.kHighsInf),
            len(rows),
            starts.astype(np.int32),
            rows.astype(np.int32),
            values,
        )

    def add_nodes(self, nodes, q, costs):
        """Mixture columns for the node marginals ``q`` (n, k); returns how many were new."""
        fresh = [j for j, i in enumerate(nodes) if (i, q[j].tobytes()) not in self.seen]
        if not fresh:
            return 0
        nodes, q, costs = nodes[fresh], q[fresh], costs[fresh]
        self.seen.update((i, row.tobytes()) for i, row in zip(nodes, q))
        forest, n, k = self.forest, self.n_nodes, self.k
        labels = np.arange(k)
        own = forest.slot[nodes]
        kids = forest.kids[nodes]
        rows = np.concatenate(
            [
                nodes[:, None],
                n + own[:, None] * k + labels,
                (self.relaxed + kids[:, :, None] * k + labels).reshape(len(nodes), -1),
            ],
            axis=1,
        )
        values = np.concatenate([np.ones((len(nodes), 1)), -q, -np.tile(q, kids.shape[1])], axis=1)
        valid = np.concatenate(
            [
                np.ones((len(nodes), 1), dtype=bool),
                (own[:, None] >= 0) & (q != 0),
                np.repeat(kids >= 0, k, axis=1) & np.tile(q != 0, kids.shape[1]),
            ],
            axis=1,
        )
        starts = np.r_[0, np.cumsum(valid.sum(axis=1))[:-1]]
        self._add(costs, starts, rows[valid], values[valid])
        self.blocks.append(("nodes", nodes, q))
        return len(nodes)

    def add_pairs(self, mask, Phi):
        """Transport columns for the label pairs ``mask`` (E, k, k); returns how many were new."""
        e, a, b = np.nonzero(mask & ~self.pairs)
        if not e.size:
            return 0
        self.pairs[e, a, b] = True
        rows = np.stack([self.n_nodes + e * self.k + a, self.relaxed + e * self.k + b], axis=1)
        self._add(Phi[e, a, b], 2 * np.arange(e.size), rows.ravel(), np.ones(2 * e.size))
        self.blocks.append(("pairs", e, a, b))
        return e.size

    def solve(self):
        """``(value, pi, rho, lam, slack, x)``: the master's optimum, the duals of its rows
        (``pi`` per node, ``rho`` (E, k) of ``Q 1 = q_child``, ``lam`` (E, k) the multipliers of
        Theorem 2), the total slack and the non-slack columns' values."""
        run_warm(self.highs, "the dual decomposition's master LP (Fathony et al. 2018b, Eq. 9)")
        solution = self.highs.getSolution()
        y = np.asarray(solution.row_dual)
        x = np.asarray(solution.col_value)
        n, shape = self.n_nodes, (len(self.forest.child), self.k)
        return (
            self.highs.getInfo().objective_function_value,
            y[:n],
            y[n : self.relaxed].reshape(shape),
            -y[self.relaxed :].reshape(shape),
            x[: self.n_slack].sum(),
            x[self.n_slack :],
        )

    def marginals(self, x):
        """Node and edge marginals ``(q (N, k), Q (E, k, k))`` of the master columns ``x``."""
        k = self.k
        q = np.zeros((self.n_nodes, k))
        Q = np.zeros((len(self.forest.child), k, k))
        start = 0
        for kind, *index in self.blocks:
            if kind == "nodes":
                nodes, mixed = index
                weights = x[start : start + len(nodes), None]
                np.add.at(q, nodes, weights * mixed)
                start += len(nodes)
            else:
                e, a, b = index
                np.add.at(Q, (e, a, b), x[start : start + e.size])
                start += e.size
        return q, Q


def brute_force_game(
    loss: LossMatrix | ArrayLike,
    graph: nx.Graph,
    psi: ArrayLike,
    Psi: ArrayLike,
    node_weights: ArrayLike | None = None,
) -> float:
    r"""The graph game as the ordinary game over all ``k^N`` joint labelings (the reference).

    ``L_joint[ŷ, y] = sum_i w_i L[ŷ_i, y_i]`` and ``f(y) = sum_i psi_i[y_i] + sum_e Psi_e[y_i,
    y_j]``; returns ``Game(L_joint).value(f)``.  Refuses more than
    :data:`MAX_BRUTE_FORCE_LABELINGS` labelings.
    """
    L = as_loss_matrix(loss).matrix
    n = check_graph(graph)
    l, k = L.shape
    if k**n > MAX_BRUTE_FORCE_LABELINGS or l**n > MAX_BRUTE_FORCE_LABELINGS:
        raise SizeLimitError(
            f"brute force needs {max(k, l)}^{n} joint labelings, over the limit "
            f"MAX_BRUTE_FORCE_LABELINGS={MAX_BRUTE_FORCE_LABELINGS:,}; use GraphGame."
        )
    game = GraphGame(loss, graph, node_weights)  # validates the potentials and weights
    psi, Psi = game.check_potentials(psi, Psi)
    w = game.node_weights
    labelings = np.array(list(itertools.product(range(k), repeat=n)))
    actions = np.array(list(itertools.product(range(l), repeat=n)))
    joint = sum(w[i] * L[actions[:, i]][:, labelings[:, i]] for i in range(n))
    scores = psi[np.arange(n), labelings].sum(axis=1)
    for e, (i, j) in enumerate(graph.edges()):
        scores = scores + Psi[e][labelings[:, i], labelings[:, j]]
    return float(Game(joint).value(scores, method="lp"))


@dataclass(frozen=True)
class GraphSolution:
    """The solved game of one example.

    Attributes
    ----------
    value : float
    node_marginals : ndarray (N, k)
        The adversary's ``q_i``.
    edge_marginals : ndarray of shape (n_edges, k, k)
        The adversary's ``Q_ij`` (orientation of ``list(graph.edges())``).
    predictor : ndarray (N, l)
        The predictor's node marginals ``p_i`` over actions.
    method : str
        ``'lp'`` or ``'dual_decomposition'`` (``'lp'`` also when decomposition fell back).
    gap : float
        Certified duality gap of the dual decomposition (0 for the LP).
    """

    value: float
    node_marginals: np.ndarray
    edge_marginals: np.ndarray
    predictor: np.ndarray
    method: str
    gap: float


#: Potentials may reach this many times the loss scale (2^50: the loss still has bits in them).
POTENTIAL_SPAN = 2.0**50


class GraphGame:
    r"""The adversarial game of one structured example on a graph (Fathony et al. 2018b).

    Parameters
    ----------
    loss : LossMatrix or array-like (l, k)
        The per-node loss; the total loss is ``sum_i w_i L[ŷ_i, y_i]``.
    graph : networkx.Graph
        Nodes ``0..N-1``; edge potentials follow ``list(graph.edges())``.
    node_weights : array-like (N,) or None
        ``w_i >= 0`` (None: all 1), the node-weighted losses of Fathony et al. (2018b).
    polytope : {'marginal', 'local'}, default='marginal'
        ``marginal``: exact (forests directly, other graphs through a junction tree up to
        :data:`MAX_CLIQUE_STATES` joint bag states).  ``local``: the local-polytope
        *relaxation* (an upper bound on the value when the graph has cycles; ``exact`` False).

    Examples
    --------
    >>> import networkx as nx, numpy as np, advgame as ag
    >>> gg = ag.GraphGame(ag.losses.zero_one(2), nx.path_graph(3))
    >>> round(gg.value(np.zeros((3, 2)), np.zeros((2, 2, 2))), 6)   # three uniform nodes
    1.5
    """

    def __init__(
        self,
        loss: LossMatrix | ArrayLike,
        graph: nx.Graph,
        node_weights: ArrayLike | None = None,
        polytope: str = "marginal",
    ) -> None:
        self.loss = as_loss_matrix(loss)
        self.graph = graph
        self.n_nodes = check_graph(graph)
        self.edges = list(graph.edges())
        self.polytope = polytope
        self.node_weights = self._check_weights(node_weights)
        self.regions = build_regions(graph, self.loss.n_labels, polytope)
        self._game = Game(self.loss)
        self._inner, self._map, self._lock = None, None, threading.RLock()
        self._lp = _GraphLP(self.inner_program)
        self._rooted = _forest(graph) if nx.is_forest(graph) else None

    def _check_weights(self, node_weights):
        if node_weights is None:
            return np.ones(self.n_nodes)
        w = as_float_array("node_weights", node_weights)
        if w.shape != (self.n_nodes,) or not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError(
                f"node_weights must hold {self.n_nodes} finite non-negative numbers (one per "
                f"node); got {node_weights!r}."
            )
        return w

    def __getstate__(self):
        return {
            "loss": self.loss,
            "graph": self.graph,
            "node_weights": self.node_weights,
            "polytope": self.polytope,
        }

    def __setstate__(self, state):
        self.__init__(**state)

    def __repr__(self):
        if nx.is_forest(self.graph):
            kind = "forest"
        elif self.exact:
            kind = f"treewidth {self.regions.width}"
        else:  # the local relaxation's regions are the edges, whatever the treewidth
            kind = "with cycles, local relaxation"
        return (
            f"GraphGame({self.n_nodes} nodes, {len(self.edges)} edges, {kind}, "
            f"k={self.n_labels}, exact={self.exact})"
        )

    @property
    def n_labels(self) -> int:
        """Number of labels ``k`` per node."""
        return self.loss.n_labels

    @property
    def exact(self) -> bool:
        """False only for the local relaxation of a graph with cycles."""
        return self.regions.exact

    def check_potentials(
        self, node_potentials: ArrayLike, edge_potentials: ArrayLike
    ) -> tuple[np.ndarray, np.ndarray]:
        """Validate ``(N, k)`` and ``(|E|, k, k)`` float potentials; returns float64 arrays."""
        N, E, k = self.n_nodes, len(self.edges), self.n_labels
        psi = as_float_array("node_potentials", node_potentials)
        Psi = as_float_array("edge_potentials", edge_potentials)
        if psi.shape != (N, k):
            raise ValueError(f"node_potentials must have shape ({N}, {k}); got {psi.shape}.")
        if E == 0 and Psi.size == 0:
            Psi = np.zeros((0, k, k))
        if Psi.shape != (E, k, k):
            raise ValueError(
                f"edge_potentials must have shape ({E}, {k}, {k}) (one k x k table per edge of "
                f"list(graph.edges())); got {Psi.shape}."
            )
        check_finite("node_potentials", psi)
        check_finite("edge_potentials", Psi)
        limit = POTENTIAL_SPAN * max(float(np.abs(self.loss.matrix).max()), 1e-300)
        for name, values in (("node_potentials", psi), ("edge_potentials", Psi)):
            top = float(np.abs(values).max(initial=0.0))
            if top > limit:
                raise ValueError(
                    f"{name} reach {top:.3g}, over 2^50 times the loss scale "
                    f"({limit / POTENTIAL_SPAN:.3g}): the loss is then below the potentials' "
                    "rounding and the LP's tolerances. Divide potentials and loss by a common "
                    "factor (the game is positively homogeneous: value(c L, c f) = c value(L, f))."
                )
        return psi, Psi

    @property
    def fast_path(self) -> str | None:
        """``'dual_decomposition'`` where it applies (forests), else None.

        ``method='auto'`` nevertheless uses the LP: the warm persistent HiGHS model is faster
        (``advgame bench graph``: the decomposition takes 1-3 times the LP's time on chains and
        trees of 50 nodes, k = 3..10).  The decomposition is Fathony et al.'s (2018b) algorithm and
        certifies its own gap; ask for it by name."""
        return "dual_decomposition" if self._rooted is not None else None

    def solve(
        self,
        node_potentials: ArrayLike,
        edge_potentials: ArrayLike,
        method: str = "auto",
        max_iter: int = DD_MAX_ITER,
        tol: float = DD_TOL,
    ) -> GraphSolution:
        """Solve the game of one example; returns a :class:`GraphSolution`.

        ``dual_decomposition`` (forests only) stops once its certified gap is below
        ``tol * max(1, |value|)``; when that has not happened after ``max_iter`` rounds of
        column generation it falls back to the LP (``method`` of the result then says ``'lp'``).
        """
        if method not in GRAPH_METHODS:
            raise ValueError(f"method must be one of {GRAPH_METHODS}; got {method!r}.")
        if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) or max_iter < 1:
            raise ValueError(f"max_iter must be an integer >= 1; got {max_iter!r}.")
        check_real("tol", tol, low=0.0, strict=True)
        psi, Psi = self.check_potentials(node_potentials, edge_potentials)
        if method == "auto":
            method = "lp"
        if method == "dual_decomposition":
            if self._rooted is None:
                raise NotApplicableError(
                    "dual decomposition (Fathony et al. 2018b, Theorem 2) needs a forest; this graph has "
                    "cycles. Use method='lp' (exact through the junction tree)."
                )
            solution = self._dual_decomposition(psi, Psi, max_iter, tol)
            if solution is not None:
                return solution
        value, q, Q, P = self._lp.solve(psi, Psi)
        return GraphSolution(value, q, Q, P, "lp", 0.0)

    def _node_games(self, S):
        """Value, ``q*`` and ``p*`` of each node's game with loss ``w_i L`` and potentials ``S``
        (Eq. 8): ``w value_L(S / w)`` by homogeneity, the argmax for ``w = 0``."""
        w = self.node_weights
        positive = w > 0
        scale = np.where(positive, w, 1.0)[:, None]
        value, q = self._game.value_and_adversary(S / scale)
        value = value * scale[:, 0]
        if not positive.all():
            top = np.argmax(S, axis=1)
            value = np.where(positive, value, S.max(axis=1))
            q = np.where(positive[:, None], q, np.eye(S.shape[1])[top])
        return value, q

    def _objective(self, nodes, q, scores):
        """``w_i H_L(q_i) + scores_i . q_i`` for node marginals ``q`` (n, k) of ``nodes``."""
        entropy = np.min(q @ self.loss.matrix.T, axis=1)
        return self.node_weights[nodes] * entropy + np.einsum("na,na->n", q, scores)

    def _dual_decomposition(self, psi, Psi, max_iter, tol):
        r"""Fathony et al. (2018b), Theorem 2 by column generation; a certified :class:`GraphSolution` or None.

        Each round solves the master (:class:`_Master`), takes its duals as multipliers
        ``lambda``, evaluates ``D(lambda)`` by the node games at ``s_i(lambda)`` (an upper bound)
        and adds the columns that price out: each node's game solution (the subproblem of
        Theorem 2, priced with the master's own row duals ``rho`` in place of the max over parent
        labels) and every transport pair with reduced cost ``Phi_e[a, b] + lambda_e[b] -
        rho_e[a] > 0``.  The master's solution, made exactly consistent by :func:`_consistent`,
        is a feasible adversary (a lower bound).  When nothing prices out the master is optimal
        and its duals minimise ``D``.  Returns None when the certified gap is still above
        ``tol * max(1, |value|)`` (the caller uses the LP).
        """
        forest, nodes = self._rooted, np.arange(self.n_nodes)
        Phi = _edge_tables(forest, Psi)
        scale = np.abs(Phi).max(initial=0.0) + np.abs(psi).max() + 1.0
        scale += np.abs(self.loss.matrix).max() * self.node_weights.max()
        penalty = DD_SLACK_PENALTY * scale
        master = _Master(forest, self.n_nodes, self.n_labels, penalty)
        _, q = self._node_games(_node_scores(forest, psi, Phi, np.zeros((len(Phi), self.n_labels))))
        master.add_nodes(nodes, q, self._objective(nodes, q, psi))
        master.add_pairs(Phi >= Phi.max(axis=2, keepdims=True), Phi)
        best_dual, best_scores = np.inf, None
        for _ in range(max_iter):
            value, pi, rho, lam, slack, x = master.solve()
            scores = _node_scores(forest, psi, Phi, lam)
            values, q = self._node_games(scores)
            if values.sum() < best_dual:
                best_dual, best_scores = float(values.sum()), scores
            feasible = slack <= LP_TOLERANCE
            if feasible and best_dual - value <= tol * max(1.0, abs(value)):
                return self._certified(psi, Phi, master, x, best_dual, best_scores, tol)
            threshold = DD_PRICE_TOL * max(1.0, abs(value))
            priced = self._objective(nodes, q, _node_scores(forest, psi, Phi, lam, rho)) - pi
            fresh = nodes[priced > threshold]
            added = master.add_nodes(fresh, q[fresh], self._objective(fresh, q[fresh], psi[fresh]))
            added += master.add_pairs(Phi + lam[:, None, :] - rho[:, :, None] > threshold, Phi)
            if added:
                continue
            if not feasible:
                penalty *= DD_SLACK_GROWTH  # the slack still pays: the multipliers need more room
                master.penalise(penalty)
                continue
            # nothing prices out: the master is optimal and only HiGHS's tolerances can leave a
            # gap, which the exact bounds either certify or not
            return self._certified(psi, Phi, master, x, best_dual, best_scores, tol)
        return None

    def _certified(self, psi, Phi, master, x, upper, scores, tol):
        """The master's adversary as a :class:`GraphSolution` if ``upper`` certifies it."""
        forest = self._rooted
        q, Q = _consistent(forest, *master.marginals(x))
        w, L = self.node_weights, self.loss.matrix
        value = float(w @ np.min(q @ L.T, axis=1) + np.sum(psi * q) + np.sum(Phi * Q))
        gap = upper - value
        if gap > tol * max(1.0, abs(value)):
            return None
        edge_marginals = np.zeros((len(self.edges), self.n_labels, self.n_labels))
        edge_marginals[forest.edge] = np.where(
            forest.child_first[:, None, None], Q, Q.transpose(0, 2, 1)
        )
        predictor = self._game.predictor(scores / np.where(w > 0, w, 1.0)[:, None])
        return GraphSolution(value, q, edge_marginals, predictor, "dual_decomposition", gap)

    def value(
        self, node_potentials: ArrayLike, edge_potentials: ArrayLike, method: str = "auto"
    ) -> float:
        """The game value (Fathony et al. 2018b, Eq. 6)."""
        return self.solve(node_potentials, edge_potentials, method).value

    def score(self, node_potentials: ArrayLike, edge_potentials: ArrayLike, y: ArrayLike) -> float:
        """``sum_i psi_i[y_i] + sum_e Psi_e[y_i, y_j]`` of a joint labeling ``y`` (N,)."""
        psi, Psi = self.check_potentials(node_potentials, edge_potentials)
        y = np.asarray(y)
        if y.shape != (self.n_nodes,) or not np.issubdtype(y.dtype, np.integer):
            raise ValueError(f"y must hold {self.n_nodes} integer labels; got {y!r}.")
        if y.min() < 0 or y.max() >= self.n_labels:
            raise ValueError(f"y must hold labels in 0..{self.n_labels - 1}; got {y!r}.")
        total = psi[np.arange(self.n_nodes), y].sum()
        if self.edges:
            i, j = np.array(self.edges).T
            total += Psi[np.arange(len(self.edges)), y[i], y[j]].sum()
        return float(total)

    def surrogate(
        self,
        node_potentials: ArrayLike,
        edge_potentials: ArrayLike,
        y: ArrayLike,
        method: str = "auto",
    ) -> float:
        """The adversarial surrogate ``value - score(y)`` (Fathony et al. 2018b, Eq. 5)."""
        value = self.value(node_potentials, edge_potentials, method)
        return value - self.score(node_potentials, edge_potentials, y)

    def adversary(
        self, node_potentials: ArrayLike, edge_potentials: ArrayLike, method: str = "auto"
    ) -> tuple[np.ndarray, np.ndarray]:
        """The adversary's node and edge marginals ``(q (N, k), Q (|E|, k, k))``."""
        solution = self.solve(node_potentials, edge_potentials, method)
        return solution.node_marginals, solution.edge_marginals

    def predictor(
        self, node_potentials: ArrayLike, edge_potentials: ArrayLike, method: str = "auto"
    ) -> np.ndarray:
        """The predictor's node marginals ``p_i`` over actions, shape ``(N, l)``."""
        return self.solve(node_potentials, edge_potentials, method).predictor

    def inner_program(self) -> "InnerProgram":
        r"""This example's game LP over region marginals, for compilers.

        .. math::  \max_{\mu \ge 0,\, v}\ c^\top \mu + \sum_i v_i \quad\text{s.t.}\quad
                   E \mu = b, \qquad v_i \le (W \mu)_{i l + a}\ \ \forall i, a,

        with ``E mu = b`` the normalisation and separator consistency of the regions,
        ``W`` stacking ``w_i L M_i`` (``M_i`` sums a region marginal onto node ``i``) and the
        costs ``c = C [vec psi; vec Psi]``.  Its dual, ``min b^T alpha`` s.t.
        ``E^T alpha - W^T beta >= c``, ``beta_i in Δ_l``, is what a whole-data program
        substitutes for each example's value.
        """
        with self._lock:
            if self._inner is None:
                self._inner = _inner_program(
                    self.loss.matrix, self.node_weights, self.regions, self.edges, self.n_labels
                )
        return self._inner

    def decode(self, node_potentials: ArrayLike, edge_potentials: ArrayLike) -> np.ndarray:
        """A maximiser ``argmax_y s(y)`` (MAP labels, (N,)): max-sum on forests, otherwise
        the linear program over the junction tree's region marginals, whose basic optimal
        solutions are integral (the polytope is the marginal polytope of a chordal graph)."""
        psi, Psi = self.check_potentials(node_potentials, edge_potentials)
        if self._rooted is not None:
            return max_sum(self.graph, psi, Psi)[0]
        if not self.exact:
            raise NotApplicableError(
                "MAP decoding over the local relaxation may be fractional; use polytope='marginal'."
            )
        inner = self.inner_program()
        with self._lock:
            if self._map is None:
                self._map = _MapLP(inner)
        mu = self._map.solve(inner.costs(psi, Psi))
        q = (inner.node_maps @ mu).reshape(self.n_nodes, self.n_labels)
        return np.argmax(q, axis=1)


@dataclass(frozen=True)
class InnerProgram:
    """The pieces of :meth:`GraphGame.inner_program`: sparse matrices over the region
    marginals ``mu`` (see there).  ``node_maps`` and ``edge_maps`` read ``vec q`` (N k) and
    ``vec Q`` (|E| k^2) off ``mu``; the costs are ``c = node_maps^T vec psi +
    edge_maps^T vec Psi``."""

    equalities: sparse.csr_matrix
    rhs: np.ndarray
    losses: sparse.csr_matrix
    node_maps: sparse.csr_matrix
    edge_maps: sparse.csr_matrix
    n_actions: int

    @property
    def n_nodes(self):
        """Number of graph nodes ``N`` (the loss rows are ``N l``)."""
        return self.losses.shape[0] // self.n_actions

    @property
    def cost_map(self):
        """``C`` with ``c = C [vec psi; vec Psi]`` ``(n_mu, N k + |E| k^2)``."""
        return sparse.vstack([self.node_maps, self.edge_maps]).T.tocsr()

    def costs(self, psi, Psi):
        """The marginal costs ``c`` of potentials ``psi`` (N, k) and ``Psi`` ``(|E|, k, k)``."""
        return self.node_maps.T @ psi.ravel() + self.edge_maps.T @ Psi.ravel()


def _inner_program(matrix, weights, regions, edges, k):
    """Assemble :class:`InnerProgram` (see :meth:`GraphGame.inner_program`)."""
    sizes = [k ** len(r) for r in regions.regions]
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    n_mu = offsets[-1]

    def place(block, r):  # a row block over region r's columns
        return sparse.hstack(
            [
                sparse.csr_matrix((block.shape[0], offsets[r])),
                block,
                sparse.csr_matrix((block.shape[0], n_mu - offsets[r + 1])),
            ]
        )

    def onto(variables, r):  # sums region r's marginal onto ``variables``
        return place(_marginalizer(regions.regions[r], variables, k), r)

    node_maps = sparse.vstack(
        [onto((i,), r) for i, r in enumerate(regions.node_region)] or [sparse.csr_matrix((0, n_mu))]
    ).tocsr()
    edge_maps = sparse.vstack(
        [onto(edge, regions.edge_region[e]) for e, edge in enumerate(edges)]
        or [sparse.csr_matrix((0, n_mu))]
    ).tocsr()
    rows = [place(sparse.csr_matrix(np.ones((1, size))), r) for r, size in enumerate(sizes)]
    rows += [onto(shared, r) - onto(shared, s) for r, s, shared in regions.pairs]
    rhs = np.concatenate(
        [np.ones(len(sizes))] + [np.zeros(k ** len(shared)) for _, _, shared in regions.pairs]
    )
    losses = sparse.kron(sparse.diags(weights), sparse.csr_matrix(matrix)) @ node_maps
    return InnerProgram(
        sparse.vstack(rows).tocsr(), rhs, losses.tocsr(), node_maps, edge_maps, matrix.shape[0]
    )


class _MapLP:
    """``max c^T mu`` s.t. ``E mu = b``, ``mu >= 0``: MAP over region marginals (persistent)."""

    def __init__(self, inner):
        A = inner.equalities.tocsc()
        self._highs = highs_model(
            A,
            np.zeros(A.shape[1]),
            (np.zeros(A.shape[1]), np.full(A.shape[1], np.inf)),
            (inner.rhs, inner.rhs),
            maximize=True,
        )
        self._lock = threading.Lock()

    def solve(self, cost):
        with self._lock:
            h = self._highs
            h.changeColsCost(cost.size, np.arange(cost.size, dtype=np.int32), cost)
            run_warm(h, "MAP decoding")
            return np.asarray(h.getSolution().col_value)
