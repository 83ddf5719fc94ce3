r"""Compile the learning problem of a graph game (Fathony et al. 2018b; docs/design.md, Appendix A).

Each example ``s`` is a graph with the additive loss ``sum_i w_i L[a_i, y_i]`` and the adversary's
region marginals ``mu_s`` in the marginal polytope (:meth:`advgame.GraphGame.inner_program`):

.. math::  \mathrm{value}_s(\theta) = \max_{\mu \ge 0,\, v}\ (C_s D \theta)^\top \mu + \sum_i v_i
           \quad\text{s.t.}\quad E_s \mu = b_s,\ \ v_i \le (W_s \mu)_{i l + a},

with ``W_s`` stacking ``w_i L M_i`` (``M_i`` reads node ``i``'s marginal off ``mu``), ``C_s`` the
map from the stacked potentials ``[vec psi; vec Psi]`` to the marginal costs and ``D`` the
feature design.  Its LP dual ``min b_s^T alpha_s`` s.t. ``E_s^T alpha_s - W_s^T p_s >= C_s D
theta``, ``p_{s,i} in Δ_l`` (``p_{s,i}`` the predictor's node marginal) substituted for every
example gives the **primal**

.. math::  \min_{\theta, \alpha, p}\ \sum_s \omega_s \big(b_s^\top \alpha_s
           - \theta^\top\phi(x_s, y_s)\big) + R(\theta)
           \quad\text{s.t.}\quad E_s^\top\alpha_s - W_s^\top p_s \ge C_s D\theta,\ \
           p_{s,i} \in \Delta_l,

(``omega_s`` the normalised example weights) and its Lagrangian dual, the **adversary's
program**

.. math::  \max_{\mu, v}\ \sum_s \omega_s \sum_i v_{si} - R^*(m(\mu)) \quad\text{s.t.}\quad
           E_s \mu_s = b_s,\ \mu_s \ge 0,\ v_{si} \le (W_s \mu_s)_{i l + a},\qquad
           m(\mu) = \sum_s \omega_s (C_s D)^\top \mu_s - \sum_s \omega_s \phi(x_s, y_s),

with the uncertainty set bounding (or penalising) the moment residual ``m``.  The primal's
``game`` multipliers are ``omega_s mu*_s`` (the adversary's marginals), the dual's ``game``
multipliers ``omega_s p*_s``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from ..features import GraphFeatures
from ..graph import GraphGame
from ..graph_data import ExampleBinding
from .inputs import check_sample_weight, declared_loss_matrix, graph_loss, normalised_weights
from .learning import (
    LearningProgram,
    _rows_to_distributions,
    label_moments,
    latex_loss,
    latex_programs,
    moments_of,
)
from .program import Program

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..losses import LossMatrix
    from ..polytopes import Marginal
    from ..uncertainty import UncertaintySet

__all__ = [
    "GraphLearningProgram",
    "compile_graph",
    "build_graph",
    "compile_graph_cuts",
    "graph_latex",
]


@dataclass
class _Layout:
    """Where each example's pieces sit in the stacked programs."""

    mu_sizes: np.ndarray  # region-marginal entries per example
    node_counts: np.ndarray  # nodes per example
    node_maps: sp.csr_matrix  # stacked mu -> stacked vec q (block diagonal)
    n_labels: int
    n_actions: int

    def node_marginals(self, mu_stacked):
        """Per example (N_s, k) node marginals of stacked region marginals."""
        q = (self.node_maps @ mu_stacked).reshape(-1, self.n_labels)
        return [
            _rows_to_distributions(part) for part in np.split(q, np.cumsum(self.node_counts)[:-1])
        ]

    def predictor(self, p):
        P = p.reshape(-1, self.n_actions)
        return [
            _rows_to_distributions(part) for part in np.split(P, np.cumsum(self.node_counts)[:-1])
        ]


class GraphLearningProgram(LearningProgram):
    r"""The compiled learning problem of a graph game: the predictor's program (the primal:
    ``theta``, ``alpha`` per region constraint, ``p`` the predictor's node marginals; rows
    ``game``, ``predictor simplex`` and the uncertainty set's), the adversary's program
    (:meth:`dual`: ``mu`` the region marginals, ``v``; rows ``marginal polytope``, ``game``,
    ``moments``) and their LaTeX.  See :mod:`advgame.compile.graph`.

    ``solve`` returns a :class:`~advgame.compile.LearningSolution` whose ``P`` and ``Q`` are
    lists with one ``(N_s, l)`` / ``(N_s, k)`` array of node marginals per example (examples may
    differ in size); so does the adversary's ``Q``.
    """

    def __init__(
        self,
        primal: Program,
        dual_builder: Callable[[], Program],
        layout: _Layout,
        weights: np.ndarray,
        latex: str,
        exact: bool = True,
    ) -> None:
        super().__init__(
            primal,
            dual_builder,
            len(weights),
            layout.n_labels,
            layout.n_actions,
            weights,
            latex,
        )
        self.layout = layout
        self.exact = exact

    def _predictor(self, x):
        return self.layout.predictor(x[self.program.variables["p"]])

    def _adversary_from_multipliers(self, multipliers):
        scale = np.repeat(np.where(self.weights > 0, self.weights, 1.0), self.layout.mu_sizes)
        return self.layout.node_marginals(multipliers / scale)

    def _adversary_q(self, x):
        return self.layout.node_marginals(x[self._dual.program.variables["mu"]])


# ----------------------------------------------------------------------------------- builder
@dataclass(frozen=True)
class GraphData:
    """What both programs of a graph game are built from: every example's inner program
    stacked (``E``, ``b``, ``W``, ``CD`` = ``C D``, ``b_sizes`` the rows of each example's
    ``E``), the layout, the feature map, the uncertainty set, the observed moments and the
    normalised example weights ``w``."""

    E: sp.csr_matrix
    b: np.ndarray
    W: sp.csr_matrix
    CD: sp.csr_matrix
    layout: _Layout
    b_sizes: Sequence[int]
    fmap: GraphFeatures
    uncertainty: UncertaintySet
    observed: np.ndarray
    w: np.ndarray


def _pieces(games, data, fmap, n_actions):
    """Each example's inner program stacked: ``E``, ``b``, ``W``, ``C D``, the layout and the
    rows of each example's ``E``."""
    n, k = data.n_examples, fmap.n_classes_
    n_nodes = data.X1.shape[0]
    programs = [None] * n
    for g, group in enumerate(data.groups):
        inner = games[g].inner_program()
        for s, nodes, edges in zip(group.examples, group.nodes, group.edges):
            columns = np.concatenate(
                [
                    (nodes[:, None] * k + np.arange(k)).ravel(),
                    n_nodes * k + (edges[:, None] * k * k + np.arange(k * k)).ravel(),
                ]
            )
            programs[s] = (inner, columns)
    n_u = n_nodes * k + data.Z1.shape[0] * k * k
    cost_maps = []
    for inner, columns in programs:
        C = inner.cost_map.tocoo()
        cost_maps.append(sp.csr_matrix((C.data, (C.row, columns[C.col])), shape=(C.shape[0], n_u)))
    E = sp.block_diag([inner.equalities for inner, _ in programs], format="csr")
    W = sp.block_diag([inner.losses for inner, _ in programs], format="csr")
    b = np.concatenate([inner.rhs for inner, _ in programs])
    CD = (sp.vstack(cost_maps) @ fmap.design(data.X1, data.Z1)).tocsr()
    layout = _Layout(
        mu_sizes=np.array([inner.equalities.shape[1] for inner, _ in programs]),
        node_counts=np.array([inner.n_nodes for inner, _ in programs]),
        node_maps=sp.block_diag([inner.node_maps for inner, _ in programs], format="csr"),
        n_labels=k,
        n_actions=n_actions,
    )
    return E, b, W, CD, layout, [inner.rhs.size for inner, _ in programs]


def _observed_moments(data, fmap, w):
    """``sum_s omega_s phi(x_s, y_s)``: the weighted empirical clique moments."""
    k = fmap.n_classes_
    node_w = np.zeros(data.X1.shape[0])
    edge_w = np.zeros(data.Z1.shape[0])
    Y_node, Y_edge = np.zeros((data.X1.shape[0], k)), np.zeros((data.Z1.shape[0], k, k))
    for group in data.groups:
        Y_node[group.nodes], Y_edge[group.edges] = _one_hot(group.graph, data.y[group.nodes], k)
        node_w[group.nodes] = w[group.examples][:, None]
        edge_w[group.edges] = w[group.examples][:, None]
    return fmap.adjoint(data.X1, data.Z1, Y_node * node_w[:, None], Y_edge * edge_w[:, None, None])


def _one_hot(graph, y, k):
    """The node (n_g, N, k) and edge (n_g, E, k, k) indicator tables of labelings ``y``."""
    n_g = y.shape[0]
    pairs = np.array(list(graph.edges()), dtype=int).reshape(-1, 2)
    YY = np.zeros((n_g, len(pairs), k, k))
    g, e = np.meshgrid(np.arange(n_g), np.arange(len(pairs)), indexing="ij")
    YY[g, e, y[:, pairs[:, 0]], y[:, pairs[:, 1]]] = 1.0
    return np.eye(k)[y], YY


def graph_primal(data: GraphData) -> Program:
    """The predictor's program (blocks ``theta``, ``alpha``, ``p``; rows ``game``,
    ``predictor simplex``, then the uncertainty set's regulariser)."""
    uncertainty, b, W, n_actions = data.uncertainty, data.b, data.W, data.layout.n_actions
    program = Program(f"adversarial graphical model ({uncertainty.program_kind})")
    theta = program.add_variables("theta", data.fmap.n_params, cost=-data.observed, label="-b_obs")
    alpha = program.add_variables(
        "alpha", b.size, cost=b * np.repeat(data.w, data.b_sizes), label="w b"
    )
    p = program.add_variables("p", W.shape[0], lower=0.0)
    program.add_rows(
        "game",
        [(alpha, data.E.T.tocsr(), "E^T"), (p, -W.T.tocsr(), "-W^T"), (theta, -data.CD, "-C Phi")],
        lower=0.0,
    )
    program.add_simplex_rows("predictor simplex", p, n_actions, "kron(I_nodes, 1_l^T)")
    uncertainty.add_to_program(program, theta, data.fmap)
    return program


def graph_dual(data: GraphData) -> Program:
    """The adversary's program (blocks ``mu``, ``v``, moment-gap variables; rows ``marginal
    polytope``, ``game``, ``moments`` and the uncertainty set's)."""
    uncertainty, layout, W, w = data.uncertainty, data.layout, data.W, data.w
    program = Program(f"graph adversary ({uncertainty.program_kind})", sense="maximize")
    mu = program.add_variables("mu", data.E.shape[1], lower=0.0)
    n_nodes = W.shape[0] // layout.n_actions
    v = program.add_variables("v", n_nodes, cost=np.repeat(w, layout.node_counts), label="omega")
    program.add_rows("marginal polytope", [(mu, data.E, "E")], data.b, data.b)
    program.label_bounds("marginal polytope", "b")
    program.add_rows(
        "game",
        [
            (mu, W, "W"),
            (
                v,
                -sp.kron(sp.identity(n_nodes), np.ones((layout.n_actions, 1))).tocsr(),
                "-kron(I, 1_l)",
            ),
        ],
        lower=0.0,
    )
    weighted = (data.CD.T @ sp.diags(np.repeat(w, layout.mu_sizes))).tocsr()
    uncertainty.add_to_dual(program, [(mu, weighted, "(C Phi)^T Omega")], data.observed, data.fmap)
    label_moments(program, "b_obs")
    return program


def compile_graph(
    loss_matrix: ArrayLike,
    games: list[GraphGame],
    data: Any,
    fmap: GraphFeatures,
    uncertainty: UncertaintySet,
    sample_weight: np.ndarray | None = None,
    latex: str = "",
) -> GraphLearningProgram:
    """The :class:`GraphLearningProgram` of stacked graph examples.

    Parameters
    ----------
    loss_matrix : ndarray (l, k)
    games : list of GraphGame
        One per group of ``data`` (examples sharing a graph), with its node weights and polytope.
    data : stacked examples
        ``X1`` (node inputs with a ones column), ``Z1`` (edge inputs with a ones column), ``y``
        (node label indices), ``groups`` (``graph``, ``examples``, ``nodes``, ``edges``) and
        ``n_examples`` (as :meth:`advgame.graph_data.ExampleBinding._bind` builds them).
    fmap : GraphFeatures
    uncertainty : UncertaintySet
    sample_weight : ndarray (n_examples,), optional
        One non-negative weight per example (normalised to sum to one).
    latex : str
    """
    w = normalised_weights(sample_weight, data.n_examples)
    E, b, W, CD, layout, b_sizes = _pieces(games, data, fmap, np.shape(loss_matrix)[0])
    observed = _observed_moments(data, fmap, w)
    stacked = GraphData(E, b, W, CD, layout, b_sizes, fmap, uncertainty, observed, w)
    return GraphLearningProgram(
        graph_primal(stacked),
        partial(graph_dual, stacked),
        layout,
        w,
        latex,
        exact=all(game.exact for game in games),
    )


def compile_graph_cuts(
    fmap: GraphFeatures,
    uncertainty: UncertaintySet,
    observed: np.ndarray,
    weights: np.ndarray,
    cut_examples: np.ndarray,
    cut_moments: np.ndarray,
    cut_entropies: np.ndarray,
) -> Program:
    r"""The cutting-plane master of the graph learning problem: each example's game replaced by
    cuts (Kelley's method with one cut set per example).

    Every adversary ``mu`` in example ``s``'s marginal polytope (node marginals ``q_i`` and edge
    marginals ``Q_ij``) gives the cut ``value_s(theta) >= H_s(mu) + theta^T Phi_s^T mu`` with
    ``H_s(mu) = sum_i w_i min_a (L q_i)_a`` (Fathony et al. 2018b, Eq. 6: the game value is the
    maximum over ``mu``), so

    .. math::  \min_{\theta, u}\ \sum_s \omega_s u_s - \theta^\top \sum_s \omega_s
               \phi(x_s, y_s) + R(\theta) \quad\text{s.t.}\quad
               u_s \ge h_t + a_t^\top \theta \ \ \text{for every cut } t \text{ of } s,
               \qquad h_t = H_s(\mu_t),\ a_t = \Phi_s^\top \mu_t,

    is a relaxation of the learning problem (its optimum is at most ``J*``).  Its multipliers
    ``lambda_t >= 0`` on the cuts sum to ``omega_s`` over each example's cuts at an optimum
    (stationarity in ``u_s``): they mix the cut adversaries into one feasible adversary per
    example, whose weak-duality bound
    (:func:`advgame.models.graphical.graph_dual_bound`) is the master's optimum.

    Parameters
    ----------
    fmap : GraphFeatures
    uncertainty : UncertaintySet
        Adds its regulariser ``R`` (:meth:`~advgame.uncertainty.UncertaintySet.add_to_program`).
    observed : ndarray (n_params,)
        ``sum_s omega_s phi(x_s, y_s)``.
    weights : ndarray (n_examples,)
        ``omega_s`` (summing to one).
    cut_examples : ndarray of int (m,)
        The example of each cut.
    cut_moments : ndarray (m, n_params)
        ``a_t = Phi_s^T mu_t``: the expected features under the cut's adversary.
    cut_entropies : ndarray (m,)
        ``h_t = H_s(mu_t)``.

    Returns
    -------
    Program
        Blocks ``theta`` and ``u``, the regulariser's blocks and the rows ``cuts``.
    """
    program = Program("graph cutting-plane master")
    theta = program.add_variables("theta", fmap.n_params, cost=-observed, label="-b_obs")
    u = program.add_variables("u", weights.size, cost=weights, label="omega")
    uncertainty.add_to_program(program, theta, fmap)
    m = cut_examples.size
    select = sp.csr_matrix((np.ones(m), (np.arange(m), cut_examples)), shape=(m, weights.size))
    program.add_rows(
        "cuts",
        [(u, select, "S"), (theta, -sp.csr_matrix(cut_moments), "-A")],
        lower=cut_entropies,
    )
    return program


# ------------------------------------------------------------------------ from a declaration
def _split_inputs(X):
    """``X`` = list of node inputs, or of ``(node_inputs, edge_inputs)`` pairs."""
    if isinstance(X, np.ndarray) and X.dtype != object:
        raise ValueError(
            "X of a graph game must be a list with one (N_s, d) array of node inputs per example "
            f"(or (node_inputs, edge_inputs) pairs); got a single {X.ndim}-d array."
        )
    try:
        X = list(X)
    except TypeError:
        raise ValueError("X of a graph game must be a list with one array per example.") from None
    paired = [isinstance(x, tuple) for x in X]
    if any(paired) and not all(paired):
        raise ValueError(
            "X must hold node-input arrays for every example, or (node_inputs, edge_inputs) "
            "pairs for every example; not a mixture."
        )
    if X and all(paired):
        if any(len(x) != 2 for x in X):
            raise ValueError("each pair of X must be (node_inputs, edge_inputs).")
        return [x[0] for x in X], [x[1] for x in X]
    return X, None


class _Examples(ExampleBinding):
    """The examples of one declaration (its Marginal polytope's graph and node weights)."""

    def __init__(self, graph, node_weights):
        self.graph, self.node_weights = graph, node_weights


def build_graph(
    loss: str | LossMatrix,
    features: GraphFeatures,
    uncertainty: UncertaintySet,
    polytope: Marginal,
    X: Sequence[Any],
    y: Sequence[ArrayLike],
    sample_weight: ArrayLike | None = None,
    alpha: float = 0.5,
) -> GraphLearningProgram:
    """The graph family's :class:`GraphLearningProgram` from a declaration's parts and data.

    ``loss``: a loss matrix over the node labels or a name built for them (``alpha`` the
    abstention cost of ``'abstain'``); ``features``: the declared :class:`GraphFeatures` (sizes
    it declares are checked against the data); ``polytope``: the :class:`Marginal` polytope
    (the graph, node weights and relaxation).  ``X``: one ``(N_s, d)`` array of node inputs per
    example, or ``(node_inputs, edge_inputs)`` pairs (edge inputs ``(|E_s|, d_e)``, rows in
    ``list(graph.edges())`` order); ``y``: one label array ``(N_s,)`` per example;
    ``sample_weight``: one weight per example.
    """
    X_list, edge_X_list = _split_inputs(X)
    binder = _Examples(polytope.graph, polytope.node_weights)
    data = binder._bind(X_list, edge_X_list, y, fitting=True)
    classes = binder.classes_
    k = classes.size
    loss = graph_loss(loss)
    L = declared_loss_matrix(loss, k, alpha, classes=None if isinstance(loss, str) else classes)
    fmap = GraphFeatures(binder.n_features_in_, binder.n_edge_features_in_, k)
    for name, value in (
        ("n_node_inputs", binder.n_features_in_),
        ("n_edge_inputs", binder.n_edge_features_in_),
        ("n_labels", k),
    ):
        expected = getattr(features, name, None)
        if expected is not None and expected != value:
            raise ValueError(
                f"features = {features!r} declares {name}={expected}, but the data give {value}."
            )
    sample_weight = check_sample_weight(sample_weight, data.n_examples, "example")
    games = [
        GraphGame(L, group.graph, group.node_weights, polytope.polytope) for group in data.groups
    ]
    latex = graph_latex(L, loss, alpha, uncertainty, polytope)
    return compile_graph(L.matrix, games, data, fmap, uncertainty, sample_weight, latex=latex)


# ------------------------------------------------------------------------------------ LaTeX
def graph_latex(
    L: LossMatrix | None,
    loss: str | LossMatrix,
    alpha: float | None,
    uncertainty: UncertaintySet,
    polytope: Marginal,
) -> str:
    r"""The primal and dual graph learning programs as LaTeX, the declarations substituted:
    the loss (``L``, or None while the declared ``loss`` name waits for ``k``), ``M(G)``
    (junction tree) or its local relaxation, the norm and radius."""
    if polytope.relaxation == "local" and polytope.has_cycles:
        region = [
            r"\mathbb L(G) \supseteq \mathcal M(G): \text{the local polytope}",
            r"\text{(a relaxation: pairwise consistency only)}",
        ]
        set_name = r"\mathbb L(G)"
    else:
        region = [
            r"\mathcal M(G): \text{the marginal polytope"
            + (r", through a junction tree}" if polytope.has_cycles else r"}"),
        ]
        if not polytope.has_cycles:
            region.append(r"\text{(on a forest the local polytope is exact)}")
        set_name = r"\mathcal M(G)"
    weights = (
        r"w_i = 1"
        if polytope.node_weights is None
        else (r"w_i = i" if polytope.node_weights == "position" else r"w_i \text{ given}")
    )
    primal = [
        r"\min_{\theta,\, \alpha,\, p}\quad & \sum_{s=1}^{n} \omega_s\,\big(b_s^\top\alpha_s - "
        r"\theta^\top\phi(x_s, y_s)\big)",
        r"\text{s.t.}\quad & E_s^\top \alpha_s - W_s^\top p_s \ge C_s \Phi_s \theta"
        r" \quad \forall s \quad (\text{game})\\",
        r"& p_{s,i} \in \Delta_l \quad \forall s,\ \forall i \quad (\text{predictor simplex})",
    ]
    dual = [
        r"\max_{\mu,\, v}\quad & \sum_{s=1}^{n} \omega_s \sum_{i} v_{si}",
        r"\text{s.t.}\quad & v_{si} \le w_i\,(L\, q_{si}(\mu_s))_a \quad \forall s, i,\ "
        r"\forall a \in [l] \quad (\text{game})\\",
        r"& E_s \mu_s = b_s,\ \mu_s \ge 0 \quad \forall s \quad (\text{marginal polytope})\\",
    ]
    residual = (
        r"& m(\mu) = \sum_{s=1}^{n} \omega_s \big(\mathbb E_{\mu_s}[\phi(x_s, Y)] - "
        r"\phi(x_s, y_s)\big)"
    )
    where = [
        r"(x_s, y_s),\ s = 1, \dots, n: \text{the examples, graphs } G = (V, E)",
        r"i \in V: \text{nodes},\ y_i \in [k]: \text{labels},\ a \in [l]: \text{actions}",
        r"L(\hat y, y) = \textstyle\sum_i w_i L_{\hat y_i y_i}",
        latex_loss(L, loss, alpha),
        weights,
        r"\phi(x, y) = \textstyle\sum_i e_{y_i} \otimes [x_i; 1]",
        r"\qquad + \textstyle\sum_{(i,j) \in E} e_{(y_i, y_j)} \otimes [z_{ij}; 1]",
        r"e_{y_i}, e_{(y_i, y_j)}: \text{unit vectors},\ z_{ij}: \text{the edge inputs}",
        r"\mu_s: \text{the node and edge marginals of example } s",
        *region,
        r"E_s, b_s: \text{the equalities of } " + set_name + r" \text{ (with } \mu_s \ge 0\text{)}",
        r"\mathbb E_{\mu_s}[f(Y)]: \text{the mean over labelings } Y \text{ of marginals } \mu_s",
        r"\alpha_s: \text{the multipliers of } E_s \mu_s = b_s",
        r"q_{si}(\mu_s) \in \Delta_k: \text{node } i\text{'s marginal in } \mu_s",
        r"p_{s,i} \in \Delta_l: \text{the predictor's distribution at node } i",
        r"(W_s \mu_s)_{(i, a)} = w_i\,(L\, q_{si}(\mu_s))_a",
        r"\Phi_s \theta: \text{the node and edge potentials } \theta^\top\phi(x_s, \cdot)",
        r"(C_s \Phi_s \theta)^\top \mu_s = \mathbb E_{\mu_s}[\theta^\top\phi(x_s, Y)]",
        r"\Delta_m = \{p \in \mathbb R^m : p \ge 0,\ \textstyle\sum_j p_j = 1\}",
        r"\omega_s = \tfrac{1}{n} \text{ (or the normalised sample weights)}",
    ]
    return latex_programs(
        primal,
        dual,
        residual,
        where,
        uncertainty,
        "the adversary's maximisation over each example's marginals",
        "the predictor's regularised risk over node marginals",
        rename=moments_of(r"\mu"),
    )
