r"""Graph games: the adversarial game of one structured example (seed 002; DESIGN Appendix A).

Labels ``y = (y_1..y_N)`` on a networkx graph, an additive node-weighted loss
``sum_i w_i L[ŷ_i, y_i]`` and potentials ``psi`` (N, k) on nodes and ``Psi`` (|E|, k, k) on edges
(``Psi[e][a, b]`` for edge ``e = (i, j)`` of ``list(graph.edges())`` with ``y_i = a, y_j = b``).
The predictor needs only node marginals and the adversary only node and edge marginals
(seed 002 Theorem 1), so

.. math::  \mathrm{value} = \max_{\mu \in \mathcal M(G)} \sum_i w_i \min_a (L q_i)_a
           + \sum_i \psi_i^\top q_i + \sum_{(i,j)} \langle \Psi_{ij}, Q_{ij} \rangle ,

(seed 002 Eq. 5-6) with ``M(G)`` the marginal polytope.  It is written over *regions*: on a
forest the edges and nodes with ``Q_ij 1 = q_i``, ``Q_ij^T 1 = q_j`` (the local polytope, exact
on trees); otherwise the bags of networkx's tree decomposition (a junction tree) with consistent
separator marginals, exact by the junction-tree theorem while ``k^(width + 1)`` stays under
:data:`MAX_CLIQUE_STATES`.  The local polytope on a graph with cycles is a relaxation: it is only
used when asked for (``polytope='local'``) and ``exact`` is then False.

Two methods compute the game: ``lp`` (one persistent HiGHS model per game; only costs change)
and ``dual_decomposition`` (forests; seed 002 Theorem 2 with the closed forms of
:mod:`advgame.closed_forms` per node and an optimal-transport LP per edge, Eq. 8-9), which
reports its duality gap and falls back to the LP when the gap does not close.
"""

import itertools
import numbers
import threading
from dataclasses import dataclass

import networkx as nx
import numpy as np
from scipy import sparse

from ._validation import check_finite, check_real
from .exceptions import NotApplicableError, SizeLimitError
from .game import Game
from .inference import check_graph, rooted_forest
from .losses import as_loss_matrix
from .oracle import highs_model, run_warm

__all__ = [
    "GraphGame",
    "GraphSolution",
    "Regions",
    "build_regions",
    "brute_force_game",
    "GRAPH_METHODS",
    "MAX_CLIQUE_STATES",
]

GRAPH_METHODS = ("auto", "lp", "dual_decomposition")
POLYTOPES = ("marginal", "local")
#: Largest joint state count ``k^|bag|`` of one junction-tree bag (the treewidth limit).
MAX_CLIQUE_STATES = 100_000
#: Dual decomposition: iteration budget, relative gap tolerance, and how often (in iterations) a
#: primal point is recovered by optimal transport.
DD_MAX_ITER = 2_000
DD_TOL = 1e-9
DD_RECOVER_EVERY = 10
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


def build_regions(graph, k, polytope="marginal"):
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
    r"""The exact program over region marginals, built once, with a persistent HiGHS model.

    Columns: each region's marginal ``mu_r >= 0`` then one ``v_i`` per node.  Rows:
    ``sum mu_r = 1`` per region, separator consistency per pair, and
    ``w_i (L q_i)_a - v_i >= 0`` per node and action.  Objective
    ``max sum_i v_i + psi . q + Psi . Q`` (costs are the only thing that changes).
    """

    def __init__(self, matrix, weights, regions, edges, k):
        self.matrix, self.weights, self.k = matrix, weights, k
        self.regions, self.edges = regions, edges
        self._highs = None
        self._lock = threading.Lock()

    def _build(self):
        k, R = self.k, self.regions
        sizes = [k ** len(r) for r in R.regions]
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        n_mu, n = offsets[-1], len(R.node_region)
        self.offsets = offsets
        self.node_maps = [_marginalizer(R.regions[R.node_region[i]], (i,), k) for i in range(n)]
        self.edge_maps = [
            _marginalizer(R.regions[R.edge_region[e]], edge, k) for e, edge in enumerate(self.edges)
        ]
        blocks, lower, upper = [], [], []

        def place(matrix, region):  # a row block over region r's columns
            return sparse.hstack(
                [
                    sparse.csr_matrix((matrix.shape[0], offsets[region])),
                    matrix,
                    sparse.csr_matrix((matrix.shape[0], n_mu - offsets[region + 1] + n)),
                ]
            )

        for r, size in enumerate(sizes):
            blocks.append(place(sparse.csr_matrix(np.ones((1, size))), r))
            lower.append([1.0])
            upper.append([1.0])
        for r, s, shared in R.pairs:
            blocks.append(
                place(_marginalizer(R.regions[r], shared, k), r)
                - place(_marginalizer(R.regions[s], shared, k), s)
            )
            lower.append(np.zeros(k ** len(shared)))
            upper.append(np.zeros(k ** len(shared)))
        l = self.matrix.shape[0]
        for i in range(n):
            loss = place(
                sparse.csr_matrix(self.weights[i] * self.matrix) @ self.node_maps[i],
                R.node_region[i],
            )
            value = sparse.csr_matrix(
                (-np.ones(l), (np.arange(l), np.full(l, n_mu + i))), shape=(l, n_mu + n)
            )
            blocks.append(loss + value)
            lower.append(np.zeros(l))
            upper.append(np.full(l, np.inf))
        A = sparse.vstack(blocks).tocsc()
        h = highs_model(
            A,
            np.r_[np.zeros(n_mu), np.ones(n)],
            (np.r_[np.zeros(n_mu), np.full(n, -np.inf)], np.full(A.shape[1], np.inf)),
            (np.concatenate(lower), np.concatenate(upper)),
            maximize=True,
        )
        self.loss_rows = A.shape[0] - n * l
        return h

    def costs(self, psi, Psi):
        """Region-marginal costs ``M^T psi_i`` and ``M^T vec(Psi_e)`` summed per column."""
        c = np.zeros(self.offsets[-1])
        R = self.regions
        for i, M in enumerate(self.node_maps):
            r = R.node_region[i]
            c[self.offsets[r] : self.offsets[r + 1]] += M.T @ psi[i]
        for e, M in enumerate(self.edge_maps):
            r = R.edge_region[e]
            c[self.offsets[r] : self.offsets[r + 1]] += M.T @ Psi[e].ravel()
        return c

    def solve(self, psi, Psi):
        """``(value, q (N, k), Q (|E|, k, k), p (N, l))`` for one example."""
        with self._lock:
            if self._highs is None:
                self._highs = self._build()
            h, n = self._highs, len(self.node_maps)
            mu_costs = self.costs(psi, Psi)
            columns = np.arange(mu_costs.size, dtype=np.int32)
            h.changeColsCost(mu_costs.size, columns, mu_costs)
            run_warm(h, "the graph game LP")
            solution = h.getSolution()
            x = np.asarray(solution.col_value)
            duals = -np.asarray(solution.row_dual)[self.loss_rows :]
            value = h.getInfo().objective_function_value
        mu = x[: self.offsets[-1]]
        R, k, l = self.regions, self.k, self.matrix.shape[0]
        q = np.array(
            [
                M @ mu[self.offsets[R.node_region[i]] : self.offsets[R.node_region[i] + 1]]
                for i, M in enumerate(self.node_maps)
            ]
        ).reshape(n, k)
        Q = np.array(
            [
                (M @ mu[self.offsets[R.edge_region[e]] : self.offsets[R.edge_region[e] + 1]])
                for e, M in enumerate(self.edge_maps)
            ]
        ).reshape(len(self.edge_maps), k, k)
        P = np.clip(duals.reshape(n, l), 0.0, None)
        totals = P.sum(axis=1, keepdims=True)
        P = np.where(totals > 0, P / np.where(totals > 0, totals, 1.0), 1.0 / l)
        return value, np.clip(q, 0.0, None), np.clip(Q, 0.0, None), P


class _Transport:
    r"""Optimal transport ``max <C, Q>`` s.t. ``Q 1 = a``, ``Q^T 1 = b``, ``Q >= 0`` (seed 002 Eq. 9),
    one persistent HiGHS model for ``k x k`` plans: costs and marginals change between edges.
    The last column-sum row is left out (implied by the others, and rounding in ``a``, ``b``
    would make it inconsistent)."""

    def __init__(self, k):
        self.k = k
        self._highs = None

    def _build(self):
        k = self.k
        rows = np.r_[np.repeat(np.arange(k), k), k + np.tile(np.arange(k), k)]
        cols = np.r_[np.arange(k * k), np.arange(k * k)]
        keep = rows < 2 * k - 1
        A = sparse.csc_matrix(
            (np.ones(keep.sum()), (rows[keep], cols[keep])), shape=(2 * k - 1, k * k)
        )
        zeros = np.zeros(2 * k - 1)
        return highs_model(
            A,
            np.zeros(k * k),
            (np.zeros(k * k), np.full(k * k, np.inf)),
            (zeros, zeros),
            maximize=True,
        )

    def solve(self, C, a, b):
        if self._highs is None:
            self._highs = self._build()
        h, k = self._highs, self.k
        marginals = np.r_[a, b[:-1]]
        rows = np.arange(2 * k - 1, dtype=np.int32)
        h.changeRowsBounds(2 * k - 1, rows, marginals, marginals)
        h.changeColsCost(k * k, np.arange(k * k, dtype=np.int32), C.ravel())
        run_warm(h, "an edge's optimal-transport LP (seed 002 Eq. 9)")
        return np.clip(np.asarray(h.getSolution().col_value).reshape(k, k), 0.0, None)


def brute_force_game(loss, graph, psi, Psi, node_weights=None):
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
            f"brute force needs {max(k, l)}^{n} joint labelings, over "
            f"{MAX_BRUTE_FORCE_LABELINGS:,}."
        )
    w = np.ones(n) if node_weights is None else np.asarray(node_weights, dtype=float)
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
    edge_marginals : ndarray (|E|, k, k)
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


class GraphGame:
    r"""The adversarial game of one structured example on a graph (seed 002; DESIGN Appendix A).

    Parameters
    ----------
    loss : LossMatrix or array-like (l, k)
        The per-node loss; the total loss is ``sum_i w_i L[ŷ_i, y_i]``.
    graph : networkx.Graph
        Nodes ``0..N-1``; edge potentials follow ``list(graph.edges())``.
    node_weights : array-like (N,) or None
        ``w_i >= 0`` (None: all 1), seed 002's node-weighted losses.
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

    def __init__(self, loss, graph, node_weights=None, polytope="marginal"):
        self.loss = as_loss_matrix(loss)
        self.graph = graph
        self.n_nodes = check_graph(graph)
        self.edges = list(graph.edges())
        self.polytope = polytope
        self.node_weights = self._check_weights(node_weights)
        self.regions = build_regions(graph, self.loss.n_labels, polytope)
        self._game = Game(self.loss)
        self._lp = _GraphLP(
            self.loss.matrix, self.node_weights, self.regions, self.edges, self.loss.n_labels
        )
        self._transport = _Transport(self.loss.n_labels)
        self._rooted = rooted_forest(graph) if nx.is_forest(graph) else None

    def _check_weights(self, node_weights):
        if node_weights is None:
            return np.ones(self.n_nodes)
        w = np.asarray(node_weights, dtype=float)
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
        kind = "forest" if nx.is_forest(self.graph) else f"treewidth {self.regions.width}"
        return (
            f"GraphGame({self.n_nodes} nodes, {len(self.edges)} edges, {kind}, "
            f"k={self.n_labels}, exact={self.exact})"
        )

    @property
    def n_labels(self):
        """Number of labels ``k`` per node."""
        return self.loss.n_labels

    @property
    def exact(self):
        """False only for the local relaxation of a graph with cycles."""
        return self.regions.exact

    def check_potentials(self, node_potentials, edge_potentials):
        """Validate ``(N, k)`` and ``(|E|, k, k)`` float potentials; returns float64 arrays."""
        N, E, k = self.n_nodes, len(self.edges), self.n_labels
        psi = np.asarray(node_potentials, dtype=float)
        Psi = np.asarray(edge_potentials, dtype=float)
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
        return psi, Psi

    @property
    def fast_path(self):
        """``'dual_decomposition'`` on forests (what ``auto`` uses), else None (the LP)."""
        return "dual_decomposition" if self._rooted is not None else None

    def solve(
        self, node_potentials, edge_potentials, method="auto", max_iter=DD_MAX_ITER, tol=DD_TOL
    ):
        """Solve the game of one example; returns a :class:`GraphSolution`.

        ``dual_decomposition`` (forests only) stops once its certified gap is below
        ``tol * max(1, |value|)``; after ``max_iter`` iterations it falls back to the LP
        (``method`` of the result then says ``'lp'``).
        """
        if method not in GRAPH_METHODS:
            raise ValueError(f"method must be one of {GRAPH_METHODS}; got {method!r}.")
        if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) or max_iter < 1:
            raise ValueError(f"max_iter must be an integer >= 1; got {max_iter!r}.")
        check_real("tol", tol, low=0.0, strict=True)
        psi, Psi = self.check_potentials(node_potentials, edge_potentials)
        if method == "auto":
            method = self.fast_path or "lp"
        if method == "dual_decomposition":
            if self._rooted is None:
                raise NotApplicableError(
                    "dual decomposition (seed 002 Theorem 2) needs a forest; this graph has "
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

    def _primal_value(self, psi, Psi, q, Q):
        w, L = self.node_weights, self.loss.matrix
        return float(
            w @ np.min(q @ L.T, axis=1) + np.sum(psi * q) + (np.sum(Psi * Q) if len(Q) else 0.0)
        )

    def _recover(self, psi, Psi, q):
        """Edge marginals by the optimal transport of Eq. 9 between the node marginals."""
        q = np.clip(q, 0.0, None)
        q /= q.sum(axis=1, keepdims=True)
        Q = np.array(
            [self._transport.solve(Psi[e], q[i], q[j]) for e, (i, j) in enumerate(self.edges)]
        ).reshape(len(self.edges), self.n_labels, self.n_labels)
        return q, Q, self._primal_value(psi, Psi, q, Q)

    def _dual_decomposition(self, psi, Psi, max_iter, tol):
        r"""Seed 002 Theorem 2: minimise ``D(lambda) = sum_i value_i(s_i(lambda))`` over the
        multipliers of ``Q_i^T 1 = q_parent(i)`` with
        ``s_i = psi_i + max_b (Phi_i[:, b] + lambda_i[b]) - sum_{c child of i} lambda_c``
        (``Phi_i`` the edge to the parent, rows the child's label), by subgradient steps with
        Polyak's step size towards the best primal value.  Primal points come from the node
        marginals (current and averaged) with edge marginals by optimal transport (Eq. 9);
        ``D - primal`` is a certified gap.  Returns None when the gap does not close."""
        _, parent, edge, child_first, _ = self._rooted
        child = parent >= 0
        N, k = psi.shape
        Phi = np.zeros((N, k, k))
        if child.any():
            tables = Psi[edge[child]]
            Phi[child] = np.where(
                child_first[child][:, None, None], tables, tables.transpose(0, 2, 1)
            )
        lam = np.zeros((N, k))
        best_dual, best = np.inf, (-np.inf, None, None)
        average = np.zeros((N, k))
        for iteration in range(1, max_iter + 1):
            M = Phi + lam[:, None, :]
            S = psi + np.where(child[:, None], M.max(axis=2), 0.0)
            np.subtract.at(S, parent[child], lam[child])
            values, q = self._node_games(S)
            dual = float(values.sum())
            best_dual = min(best_dual, dual)
            average += (q - average) / iteration
            if iteration == 1 or iteration % DD_RECOVER_EVERY == 0:
                for candidate in (q, average):
                    recovered = self._recover(psi, Psi, candidate.copy())
                    if recovered[2] > best[0]:
                        best = (recovered[2], recovered[0], recovered[1])
            gap = best_dual - best[0]
            if gap <= tol * max(1.0, abs(best[0])):
                predictor = self._game.predictor(
                    S / np.where(self.node_weights > 0, self.node_weights, 1.0)[:, None]
                )
                return GraphSolution(
                    best[0], best[1], best[2], predictor, "dual_decomposition", gap
                )
            top = np.eye(k)[M.argmax(axis=2)]  # (N, k, k): the child's label -> parent's label
            G = np.einsum("ia,iab->ib", q, top)
            G[child] -= q[parent[child]]
            G[~child] = 0.0
            norm = np.sum(G * G)
            if norm == 0:
                continue
            lam -= (dual - best[0]) / norm * G
        return None

    def value(self, node_potentials, edge_potentials, method="auto"):
        """The game value (seed 002 Eq. 6)."""
        return self.solve(node_potentials, edge_potentials, method).value

    def score(self, node_potentials, edge_potentials, y):
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

    def surrogate(self, node_potentials, edge_potentials, y, method="auto"):
        """The adversarial surrogate ``value - score(y)`` (seed 002 Eq. 5)."""
        value = self.value(node_potentials, edge_potentials, method)
        return value - self.score(node_potentials, edge_potentials, y)

    def adversary(self, node_potentials, edge_potentials, method="auto"):
        """The adversary's node and edge marginals ``(q (N, k), Q (|E|, k, k))``."""
        solution = self.solve(node_potentials, edge_potentials, method)
        return solution.node_marginals, solution.edge_marginals

    def predictor(self, node_potentials, edge_potentials, method="auto"):
        """The predictor's node marginals ``p_i`` over actions, shape ``(N, l)``."""
        return self.solve(node_potentials, edge_potentials, method).predictor
