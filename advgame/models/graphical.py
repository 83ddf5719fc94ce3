r"""Adversarial graphical models and their peers on sequences and graphs (Fathony et al. 2018b).

Every example is a graph (a chain by default) with node inputs ``x_i``, optional edge inputs
``z_e`` and labels ``y_i in {0..k-1}``.  Features decompose over nodes and edges (the design
notes, docs/design.md, Appendix A),

.. math::  \phi(x, y) = \sum_i e_{y_i} \otimes [x_i; 1]
           + \sum_{e = (i, j)} e_{(y_i, y_j)} \otimes [z_e; 1],

so the potentials ``psi_i = Theta_node^T [x_i; 1]`` (k) and
``Psi_e = reshape(Theta_edge^T [z_e; 1], (k, k))`` are linear in ``theta`` (without edge inputs
``Psi_e`` is one learnt table of label-transition weights).  Three models minimise

.. math::  \frac1n \sum_s \big(\mathrm{inner}_s(\psi_s, \Psi_s) - s_\theta(y_s)\big) + R(\theta),
           \qquad s_\theta(y) = \sum_i \psi_{i, y_i} + \sum_e \Psi_{e, y_i, y_j},

with ``R`` the regulariser of an uncertainty set on the clique (node and edge) moments
(Farnia and Tse 2016, Theorem 3; :mod:`advgame.uncertainty`), and differ only in ``inner``:

* :class:`AdversarialGraphicalModel` (Fathony et al. 2018b, Eq. 5): ``inner`` is the value of the
  graph game :class:`advgame.GraphGame` (the adversary's node and edge marginals ``q, Q`` give the
  subgradient ``E_q[phi] - phi(y)``); ``loss='log'`` turns the same game into a CRF:
  ``inner = log Z`` and the marginals come from belief propagation.
* :class:`StructuredSVM`: ``inner = max_y' [loss(y', y) + s_theta(y')]`` by loss-augmented
  max-sum (Viterbi on chains), the structured hinge.

Solvers: ``compile`` writes the whole data set's problem as one LP/QP/SOCP by dualising each
example's inner LP; ``cutting_plane`` (:func:`fit_cutting_plane`) re-solves a small master
program over the adversaries met (one cut set per example) and certifies its result by weak
duality (:func:`graph_dual_bound`: any feasible node and edge marginals give a lower bound);
``subgradient`` is averaged mini-batch AdaGrad calling the graph game's fast path
(:func:`advgame.solvers.fit_adagrad`), certified afterwards by the cutting planes; and
``lbfgs`` serves the smooth CRF.  Decoding is max-sum on the potentials (Fathony et al. 2018b, §3.2.2, non-probabilistic
prediction;
forests by message passing, other graphs by the junction-tree LP).
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import networkx as nx
import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .. import losses
from ..compile.graph import _one_hot, compile_graph_cuts
from ..declaration import PredictionGame
from ..exceptions import ConvergenceWarning, NotApplicableError
from ..features import GraphFeatures
from ..graph import GRAPH_METHODS, GraphGame
from ..graph_data import ExampleBinding
from ..inference import marginals, max_sum
from ..polytopes import Marginal
from ..solvers import TrainingResult, fit_adagrad, fit_lbfgs
from ..uncertainty import Exact, NormBall, SoftMoments, as_uncertainty
from ._base import ProgramNotPickled, fit_finished, fit_started, progress
from ._inputs import check_iteration_params, check_strength, resolve_loss_matrix

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..losses import LossMatrix
    from ..uncertainty import UncertaintySet

__all__ = [
    "AdversarialGraphicalModel",
    "StructuredSVM",
    "GraphFeatures",
    "crf_dual_bound",
    "fit_cutting_plane",
    "graph_dual_bound",
]

_LOSSES = ("zero_one", "ordinal", "absolute", "squared", "log")
_SOLVERS = ("auto", "compile", "cutting_plane", "subgradient", "lbfgs")
#: ``solver='auto'`` compiles the whole-data program while it has at most this many
#: adversary marginal entries (sum over examples of ``N k + |E| k^2``), and beyond uses the
#: certified cutting planes (:func:`fit_cutting_plane`).
AUTO_COMPILE_SIZE = 200_000

#: Rounds of cutting planes at most when they certify a ``subgradient`` fit (``max_iter`` counts
#: its epochs): 12-27 rounds certified ``tol = 1e-6`` on ``make_ordinal_sequences``.
CERTIFY_ROUNDS = 100


def _loss_matrix(loss, k, name="loss"):
    return resolve_loss_matrix(loss, k, _LOSSES, name=name)


# ------------------------------------------------------------------------ inner problems
def _observed(group, psi, Psi, y):
    """Scores ``s(y)`` (n_g,) and the one-hot tables of the labelings ``y`` (n_g, N)."""
    Y, YY = _one_hot(group.graph, y, psi.shape[-1])
    return np.sum(psi * Y, axis=(1, 2)) + np.sum(Psi * YY, axis=(1, 2, 3)), Y, YY


class _AdversarialInner:
    """The graph game of each example (Fathony et al. 2018b, Eq. 6): value and adversary marginals."""

    def __init__(self, games, method):
        self.games, self.method = games, method

    def __call__(self, g, group, psi, Psi, y):
        game = self.games[g]
        solutions = [game.solve(p, P, self.method) for p, P in zip(psi, Psi)]
        return (
            np.array([s.value for s in solutions]),
            np.array([s.node_marginals for s in solutions]),
            np.array([s.edge_marginals for s in solutions]).reshape(Psi.shape),
        )


def _crf_inner(g, group, psi, Psi, y):
    """``log Z`` and the marginals by belief propagation (the log-loss game is a CRF)."""
    q, Q, log_Z = marginals(group.graph, psi, Psi)
    return log_Z, q, Q.reshape(Psi.shape)


class _HingeInner:
    """Loss-augmented max-sum: ``max_y' sum_i w_i L[y'_i, y_i] + s(y')`` and its one-hot tables."""

    def __init__(self, matrix):
        self.matrix = matrix

    def __call__(self, g, group, psi, Psi, y):
        augmented = psi + group.node_weights[None, :, None] * self.matrix.T[y]
        labels, value = max_sum(group.graph, augmented, Psi)
        return (value, *_one_hot(group.graph, labels, psi.shape[-1]))


class _StructuredObjective:
    r"""``J(theta) = (1/n) sum_s [inner_s - s_theta(y_s)] + R(theta)`` and a subgradient.

    Has the interface of :class:`advgame.solvers.SurrogateObjective` used by
    :func:`advgame.solvers.fit_adagrad` (``y`` for the example count, ``batch``).
    """

    def __init__(self, inner, data, fmap, uncertainty):
        self.inner, self.data, self.fmap, self.uncertainty = inner, data, fmap, uncertainty
        self.y = np.arange(data.n_examples)

    def __call__(self, theta):
        return self.batch(theta, self.y)

    def batch(self, theta, rows):
        data, fmap = self.data, self.fmap
        psi, Psi = fmap.potentials(theta, data.X1, data.Z1)
        G_node, G_edge = np.zeros_like(psi), np.zeros_like(Psi)
        chosen = np.zeros(data.n_examples, dtype=bool)
        chosen[rows] = True
        total = 0.0
        for g, group in enumerate(data.groups):
            take = chosen[group.examples]
            if not take.any():
                continue
            nodes, edges = group.nodes[take], group.edges[take]
            p, P, y = psi[nodes], Psi[edges], data.y[nodes]
            value, q, Q = self.inner(g, group, p, P, y)
            score, Y, YY = _observed(group, p, P, y)
            total += float(np.sum(value - score))
            G_node[nodes] = q - Y
            G_edge[edges] = Q - YY
        m = int(chosen.sum())
        objective = total / m + self.uncertainty.penalty(theta, fmap)
        gradient = fmap.adjoint(data.X1, data.Z1, G_node, G_edge) / m
        return objective, gradient + self.uncertainty.subgradient(theta, fmap)


# ------------------------------------------------------------------------- certification
def _example_weights(data, weights):
    """``omega_s`` per example (``1/n`` by default) and repeated onto its node and edge rows."""
    n = data.n_examples
    omega = np.full(n, 1.0 / n) if weights is None else np.asarray(weights, dtype=np.float64)
    node_omega = np.empty(data.X1.shape[0])
    edge_omega = np.empty(data.Z1.shape[0])
    for group in data.groups:
        node_omega[group.nodes] = omega[group.examples][:, None]
        edge_omega[group.edges] = omega[group.examples][:, None]
    return omega, node_omega, edge_omega


def graph_dual_bound(
    loss_matrix: ArrayLike,
    fmap: GraphFeatures,
    uncertainty: UncertaintySet,
    data: Any,
    node_marginals: ArrayLike,
    edge_marginals: ArrayLike,
    weights: ArrayLike | None = None,
) -> float:
    r"""A lower bound on the graph learning optimum from feasible adversary marginals (weak duality).

    The learning problem of :class:`AdversarialGraphicalModel` is
    ``J* = min_theta sum_s omega_s (value_s(theta) - theta^T phi(x_s, y_s)) + R(theta)``, with
    ``value_s`` the game of example ``s`` (Fathony et al. 2018b, Eq. 5-6),
    ``value_s(theta) = max_{mu in M(G_s)} H_s(mu) + theta^T Phi_s^T mu``, where ``mu = (q, Q)``
    are node and edge marginals in the marginal polytope (the local polytope on a forest),
    ``Phi_s^T mu`` the expected clique features and, the loss being additive over nodes,

    .. math::  H_s(\mu) = \min_{p} \mathbb E_{\hat y \sim p,\, y \sim \mu}
               \sum_i w_i L[\hat y_i, y_i] = \sum_i w_i \min_a (L q_i)_a

    (the predictor needs only its node marginals; Fathony et al. 2018b, Theorem 1).  For any
    feasible ``mu_s`` and every ``theta``, ``value_s(theta) >= H_s(mu_s) + theta^T Phi_s^T
    mu_s``; minimising over ``theta`` with ``R``'s conjugate gives

    .. math::  J^* \ge D(\mu) = \max_{0 \le r \le 1} \sum_s \omega_s H_s(\mu_{r,s})
               - R^*\big(r\, g(\mu)\big), \qquad
               g(\mu) = \sum_s \omega_s \Phi_s^\top (e_{y_s} - \mu_s),

    with ``mu_r = (1 - r) e_y + r mu`` the mixture with the labels' own (vertex) marginals
    ``e_{y_s}``: its residual is ``r g`` and, ``H_s`` being concave, its entropy is at least
    ``(1 - r) H_s(e_y) + r H_s(mu)``, which lets ``mu`` enter a norm ball (Farnia and Tse 2016,
    Theorem 3; :meth:`advgame.uncertainty.UncertaintySet.dual_bound` picks the best ``r``).
    Exact moment matching admits only ``g = 0`` exactly, so there ``D`` is the labels' bound
    ``sum_s omega_s H_s(e_{y_s})`` unless the residual vanishes.  Pure: it depends on its
    arguments only, never on how ``mu`` was found.

    Parameters
    ----------
    loss_matrix : ndarray (l, k)
        ``L[a, y]``.
    fmap : GraphFeatures
    uncertainty : UncertaintySet
        Supplies ``R^*`` (explicit coordinates: ``GraphFeatures`` has them).
    data : stacked examples
        As :meth:`advgame.graph_data.ExampleBinding._bind` builds them (``X1``, ``Z1``, ``y``,
        node loss weights ``weights``, ``groups``).
    node_marginals : ndarray (n_nodes, k)
        ``q`` of every node of every example, rows in ``data``'s stacked order.
    edge_marginals : ndarray (n_edges, k, k)
        ``Q`` of every edge (``Q[e][a, b]`` for ``y_i = a, y_j = b``, ``e = (i, j)`` in
        ``list(graph.edges())`` order), consistent with ``q`` (each example's ``(q, Q)`` in its
        marginal polytope: the bound is only valid for feasible marginals).
    weights : ndarray (n_examples,), optional
        ``omega_s`` (summing to one); default ``1 / n``.

    Returns
    -------
    float
        ``D(mu) <= J*`` (finite: ``r = 0`` is always feasible).
    """
    L = np.asarray(loss_matrix, dtype=np.float64)
    q = np.asarray(node_marginals, dtype=np.float64)
    Q = np.asarray(edge_marginals, dtype=np.float64).reshape(data.Z1.shape[0], *L.shape[1:] * 2)
    k = L.shape[1]
    _, node_omega, edge_omega = _example_weights(data, weights)
    scale = node_omega * data.weights
    entropy = float(scale @ (L @ q.T).min(axis=0))
    base = float(scale @ L.min(axis=0)[data.y])
    Y = np.eye(k)[data.y]
    YY = np.zeros_like(Q)
    for group in data.groups:
        YY[group.edges] = _one_hot(group.graph, data.y[group.nodes], k)[1]
    G_node = node_omega[:, None] * (Y - q)
    G_edge = edge_omega[:, None, None] * (YY - Q)
    moment = fmap.adjoint(data.X1, data.Z1, G_node, G_edge)
    return float(uncertainty.dual_bound(moment, base, entropy - base, fmap))


def _entropy(P, axes):
    """Shannon entropy ``-sum p log p`` over ``axes`` (``0 log 0 = 0``)."""
    P = np.clip(P, 0.0, None)
    return -np.sum(np.where(P > 0, P * np.log(np.where(P > 0, P, 1.0)), 0.0), axis=axes)


def crf_dual_bound(
    fmap: GraphFeatures,
    uncertainty: UncertaintySet,
    data: Any,
    node_marginals: ArrayLike,
    edge_marginals: ArrayLike,
    weights: ArrayLike | None = None,
) -> float:
    r"""A lower bound on the CRF's optimum (``loss='log'``) from feasible marginals on forests.

    The CRF minimises ``J(theta) = sum_s omega_s (log Z_s(theta) - theta^T phi(x_s, y_s)) +
    R(theta)``.  On a forest ``log Z_s(theta) = max_{mu in M(G_s)} H_s(mu) + theta^T Phi_s^T
    mu`` with the entropy of the tree-factored distribution with marginals ``mu = (q, Q)``,

    .. math::  H_s(\mu) = \sum_{(i,j)} H(Q_{ij}) - \sum_i (\deg i - 1)\, H(q_i),

    the largest entropy of a distribution with these marginals (concave in ``mu``; the log-loss
    game's generalised entropy, as in :func:`graph_dual_bound` with ``min_a (L q_i)_a``
    replaced).  Weak duality gives ``J* >= max_{0<=r<=1} sum_s omega_s H_s(mu_{r,s}) - R^*(r
    g(mu))``, ``g(mu) = sum_s omega_s Phi_s^T (e_{y_s} - mu_s)``, and concavity with
    ``H_s(e_y) = 0`` bounds the mixture's entropy by ``r sum_s omega_s H_s(mu_s)``
    (:meth:`advgame.uncertainty.UncertaintySet.dual_bound` with ``base = 0``).  At the belief
    propagation marginals of a smooth fit's ``theta`` the bound meets ``J*`` as ``theta``
    converges (soft moments: ``R^*(g) = theta^T g - R(theta)`` at the optimum).

    Parameters are those of :func:`graph_dual_bound` without the loss; every graph of ``data``
    must be a forest and ``(q, Q)`` consistent.
    """
    q = np.asarray(node_marginals, dtype=np.float64)
    k = q.shape[1]
    Q = np.asarray(edge_marginals, dtype=np.float64).reshape(-1, k, k)
    omega, node_omega, edge_omega = _example_weights(data, weights)
    entropy = 0.0
    for group in data.groups:
        degree = np.array([group.graph.degree(i) for i in range(group.nodes.shape[1])])
        per_example = _entropy(Q[group.edges], (2, 3)).sum(axis=1)
        per_example -= _entropy(q[group.nodes], 2) @ (degree - 1.0)
        entropy += float(omega[group.examples] @ per_example)
    YY = np.zeros_like(Q)
    for group in data.groups:
        YY[group.edges] = _one_hot(group.graph, data.y[group.nodes], k)[1]
    G_node = node_omega[:, None] * (np.eye(k)[data.y] - q)
    G_edge = edge_omega[:, None, None] * (YY - Q)
    moment = fmap.adjoint(data.X1, data.Z1, G_node, G_edge)
    return float(uncertainty.dual_bound(moment, 0.0, entropy, fmap))


def _exact_matching(uncertainty):
    """Whether the moment set is ``{0}`` (no residual, so no mixture of adversaries is feasible
    in floating point and the weak-duality bound degenerates)."""
    return isinstance(uncertainty, Exact) or (
        isinstance(uncertainty, NormBall) and uncertainty.radius == 0
    )


class _ExampleTerms:
    """Per example ``s``: the game value, the observed score, and the cut ``(h_s, a_s)`` of the
    adversary found (``h_s = H_s(mu_s)``, ``a_s = Phi_s^T mu_s``); also the labels' cut."""

    def __init__(self, objective, loss_matrix):
        self.objective, self.L = objective, np.asarray(loss_matrix, dtype=np.float64)
        data = objective.data
        self.labels = self._cuts(data, [(np.eye(self.L.shape[1])[data.y[g.nodes]],
                                         _one_hot(g.graph, data.y[g.nodes], self.L.shape[1])[1])
                                        for g in data.groups])  # fmt: skip

    def _cuts(self, data, marginals):
        n, k = data.n_examples, self.L.shape[1]
        h = np.empty(n)
        A = np.empty((n, self.objective.fmap.n_params))
        for group, (q, Q) in zip(data.groups, marginals):
            X1, Z1 = data.X1[group.nodes], data.Z1[group.edges]
            node = np.einsum("gnd,gnk->gdk", X1, q).reshape(len(q), -1)
            edge = np.einsum("ged,gem->gdm", Z1, Q.reshape(*Q.shape[:2], k * k))
            A[group.examples] = np.hstack([node, edge.reshape(len(q), -1)])
            h[group.examples] = np.sum(
                group.node_weights * np.min(np.einsum("ak,gnk->gna", self.L, q), axis=2), axis=1
            )
        return h, A

    def __call__(self, theta):
        """``(J(theta), values - scores (n,), h (n,), A (n, p))``."""
        o = self.objective
        data = o.data
        psi, Psi = o.fmap.potentials(theta, data.X1, data.Z1)
        margin = np.empty(data.n_examples)
        marginals = []
        for g, group in enumerate(data.groups):
            p, P, y = psi[group.nodes], Psi[group.edges], data.y[group.nodes]
            value, q, Q = o.inner(g, group, p, P, y)
            margin[group.examples] = value - _observed(group, p, P, y)[0]
            marginals.append((q, Q))
        h, A = self._cuts(data, marginals)
        J = float(np.mean(margin)) + o.uncertainty.penalty(theta, o.fmap)
        return J, margin, h, A


def fit_cutting_plane(
    objective: Any,
    loss_matrix: ArrayLike,
    theta0: np.ndarray,
    tol: float = 1e-6,
    max_rounds: int = 100,
    backend: str = "auto",
    report: Callable[[str], None] | None = None,
) -> TrainingResult:
    r"""Minimise the graph learning objective by cutting planes, certified by weak duality.

    Each round solves the master :func:`advgame.compile.graph.compile_graph_cuts` over the cuts
    met so far (first each example's labels ``e_{y_s}``, which keep it bounded, and its
    adversary at ``theta0``), evaluates every example's game at the master's ``theta``
    (:class:`advgame.GraphGame`: the exact value, an upper bound ``J(theta) >= J*``) and adds the
    adversary of each example whose value exceeds its master variable ``u_s``.  The lower bound
    does not trust the master's optimum: the master's cut multipliers, normalised per example,
    mix the cut adversaries into one feasible adversary ``mu_s`` per example, and

    .. math::  D = \max_{0 \le r \le 1} \sum_s \omega_s \big((1 - r) H_s(e_{y_s})
               + r \textstyle\sum_t \pi_t h_t\big) - R^*(r\, g), \qquad
               g = \sum_s \omega_s \big(\phi(x_s, y_s) - \textstyle\sum_t \pi_t a_t\big),

    is :func:`graph_dual_bound` at ``mu`` with ``H_s(mu_s)`` replaced by its concave lower
    estimate ``sum_t pi_t H_s(mu_t)``: a certified bound ``D <= J*`` computed from the cuts'
    summaries ``(h_t, a_t)`` alone.  For exact moment matching (``R^*`` the indicator of
    ``{0}``) no mixture has an exactly zero residual in floating point, and the bound is the
    master's optimum as its solver reports it (only when it reports 'optimal').  Stops when
    ``min J - max D <= tol * max(1, |min J|)`` (message ``'certified'``); when no cut is violated
    (``'stalled: ...'``) or after ``max_rounds`` rounds (``limit_reached``) it warns with the
    certified gap reached.

    Measured (``make_ordinal_sequences``, 3 labels, ``tol = 1e-6``, a shared 2-core machine):
    on 120 sequences 15-16 rounds from ``theta = 0`` (17 and 16 after 3 and 10 AdaGrad epochs:
    warm starts do not pay), 3-5 s, against 15-18 s for 100 AdaGrad epochs (uncertified,
    0.5-0.8% above the optimum) and for the compiled program 1.5-2.6 s (soft, a QP) or
    15-19 s (``l1``, an LP); on 2,000 sequences (beyond :data:`AUTO_COMPILE_SIZE`) 13-15 rounds,
    53-280 s depending on the load, against 32-51 s per 10 AdaGrad epochs.  Smoothing, the
    classifier's certified finish, has no closed form here (each smoothed game is a program over
    the marginal polytope), hence cutting planes.

    Parameters
    ----------
    objective : _StructuredObjective
        With the adversarial graph game as its ``inner``.
    loss_matrix : ndarray (l, k)
    theta0 : ndarray
        Where the first adversaries are taken (e.g. zero, or a subgradient method's result).
    tol : float
        Relative gap to certify.
    max_rounds : int
    backend : {'auto', 'highs', 'cvxpy'}
        The master's solver: HiGHS for an LP master (``l1``, ``linf``, ``exact``), cvxpy
        (Clarabel) for a QP or SOCP master unless ``'highs'`` is asked for a QP.
    report : callable, optional
        Called with a line per round (progress).

    Returns
    -------
    TrainingResult
        ``theta`` (the smallest ``J`` met), ``objective``, ``n_iter`` (rounds), ``message`` and
        the certified ``gap``.
    """
    if (
        isinstance(max_rounds, bool)
        or not isinstance(max_rounds, numbers.Integral)
        or max_rounds < 1
    ):
        raise ValueError(f"max_rounds must be a positive integer; got {max_rounds!r}.")
    o = objective
    data, fmap, uncertainty = o.data, o.fmap, o.uncertainty
    terms = _ExampleTerms(o, loss_matrix)
    n = data.n_examples
    omega = np.full(n, 1.0 / n)
    h_label, A_label = terms.labels
    observed = omega @ A_label
    base = float(omega @ h_label)
    exact = _exact_matching(uncertainty)
    best_value, margin, h, A = terms(np.asarray(theta0, dtype=np.float64))
    best_theta = np.asarray(theta0, dtype=np.float64).copy()
    examples, H, C = np.r_[np.arange(n), np.arange(n)], np.r_[h_label, h], np.vstack([A_label, A])
    lower, gap, violated = -np.inf, np.inf, np.arange(n)
    for round_ in range(1, max_rounds + 1):
        master = compile_graph_cuts(fmap, uncertainty, observed, omega, examples, C, H)
        solver = "highs" if master.kind == "LP" or backend == "highs" else "cvxpy"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an inaccurate master still gives a valid D below
            solution = master.solve(solver)
        theta = solution.x[master.variables["theta"]]
        lam = None
        if solution.row_duals is not None:
            lam = np.clip(master.duals(solution)["cuts"], 0.0, None)
        if exact:
            if solution.status.lower() == "optimal":
                lower = max(lower, solution.objective)
        elif lam is not None:
            total = np.bincount(examples, lam, n)
            pi = lam / np.where(total > 0, total, 1.0)[examples]
            pi[:n][total <= 0] = 1.0  # no multiplier on this example: its labels' cut
            mixed = np.bincount(examples, pi * H, n)
            moment = observed - (omega[examples] * pi) @ C
            entropy = float(omega @ mixed)
            lower = max(lower, uncertainty.dual_bound(moment, base, entropy - base, fmap))
        J, margin, h, A = terms(theta)
        if J < best_value:
            best_value, best_theta = J, theta.copy()
        gap = max(best_value - lower, 0.0)
        u = solution.x[master.variables["u"]] - theta @ A_label.T  # u_s - s_theta(y_s)
        violated = np.flatnonzero(margin > u + 1e-12 * np.maximum(1.0, np.abs(margin)))
        if report is not None:
            report(
                f"cutting planes, round {round_}: J {J:.10g}, bound {lower:.10g}, gap "
                f"{gap:.2e}, {examples.size} cuts, {violated.size} violated"
            )
        if gap <= tol * max(1.0, abs(best_value)):
            return TrainingResult(best_theta, best_value, round_, "certified", gap)
        if violated.size == 0:
            break
        examples = np.r_[examples, violated]
        H, C = np.r_[H, h[violated]], np.vstack([C, A[violated]])
    limit_reached = violated.size > 0
    state = f"gap {gap:.2e} above tol={tol:g} * max(1, |J|) after {round_} rounds"
    message = f"max_rounds={max_rounds} reached: {state}" if limit_reached else (
        f"stalled: no violated cut left, {state}"
    )  # fmt: skip
    warnings.warn(
        f"cutting-plane certification not reached ({message}); objective {best_value:.10g}.",
        ConvergenceWarning,
        stacklevel=3,
    )
    return TrainingResult(best_theta, best_value, round_, message, gap, limit_reached)


# ----------------------------------------------------------------------------- estimator
class _GraphicalModel(ProgramNotPickled, ExampleBinding, BaseEstimator):
    """Shared input handling, features, training and decoding of the graph estimators."""

    def _uncertainty(self, n_examples):
        if self.uncertainty == "soft" and self.strength is None:
            return SoftMoments(1.0 / n_examples)
        return as_uncertainty(self.uncertainty, self.strength)

    def _check_common(self):
        check_iteration_params(self, ("max_iter", "batch_size"), check_tol=hasattr(self, "tol"))
        check_strength(self.strength, self.uncertainty)
        if (
            not isinstance(self.learning_rate, numbers.Real)
            or isinstance(self.learning_rate, bool)
            or not np.isfinite(self.learning_rate)
            or self.learning_rate <= 0
        ):
            raise ValueError(
                f"learning_rate must be a finite positive number; got {self.learning_rate!r}."
            )

    def _train(self, inner, data, solver):
        fmap, uncertainty = self.feature_map_, self.uncertainty_
        objective = _StructuredObjective(inner, data, fmap, uncertainty)
        theta0 = np.zeros(fmap.n_params)
        if solver == "lbfgs":
            escape = {"batch_size": self.batch_size, "random_state": self.random_state}
            result = fit_lbfgs(objective, theta0, self.max_iter, self.tol, escape=escape)
        else:
            result = self._fit_adagrad(objective, theta0)
        self.theta_, self.objective_, self.n_iter_ = result.theta, result.objective, result.n_iter
        return result

    def _fit_adagrad(self, objective, theta0):
        return fit_adagrad(
            objective,
            theta0,
            n_epochs=self.max_iter,
            batch_size=self.batch_size,
            step=self.learning_rate,
            random_state=self.random_state,
        )

    def _potentials(self, data):
        return self.feature_map_.potentials(self.theta_, data.X1, data.Z1)

    def _split(self, data, rows):
        """Per-example pieces of node-row arrays, in the order of the input list."""
        ends = np.r_[data.starts[1:], data.X1.shape[0]]
        return [rows[a:b] for a, b in zip(data.starts, ends)]

    def _decode(self, data):
        """Max-sum labels of every example (Viterbi / tree max-product / junction-tree LP)."""
        psi, Psi = self._potentials(data)
        labels = np.empty(data.X1.shape[0], dtype=int)
        for group in data.groups:
            if nx.is_forest(group.graph):
                labels[group.nodes] = max_sum(group.graph, psi[group.nodes], Psi[group.edges])[0]
            else:
                game = GraphGame(losses.zero_one(len(self.classes_)), group.graph)
                for nodes, edges in zip(group.nodes, group.edges):
                    labels[nodes] = game.decode(psi[nodes], Psi[edges])
        return labels

    def predict(
        self, X_list: Sequence[ArrayLike], edge_X_list: Sequence[ArrayLike] | None = None
    ) -> list[np.ndarray]:
        """Joint labels of each example by max-sum decoding of the learnt potentials."""
        check_is_fitted(self, "theta_")
        data = self._bind(X_list, edge_X_list)
        return [self.classes_[y] for y in self._split(data, self._decode(data))]

    def _node_losses(self, data, predicted):
        L = self.decision_matrix_.matrix
        return data.weights * L[predicted, data.y]

    def score(
        self,
        X_list: Sequence[ArrayLike],
        y_list: Sequence[ArrayLike],
        edge_X_list: Sequence[ArrayLike] | None = None,
    ) -> float:
        """Minus the node-weighted mean loss of ``predict`` (greater is better, for model
        selection): ``-sum_i w_i L[ŷ_i, y_i] / sum_i w_i`` over all nodes of all examples."""
        check_is_fitted(self, "theta_")
        data = self._bind(X_list, edge_X_list, y_list)
        predicted = np.searchsorted(
            self.classes_, np.concatenate(self.predict(X_list, edge_X_list))
        )
        return -float(self._node_losses(data, predicted).sum() / data.weights.sum())


class AdversarialGraphicalModel(_GraphicalModel):
    r"""Adversarial graphical model (Fathony et al. 2018b): robust structured prediction for additive losses.

    Training minimises ``(1/n) sum_s [value_s(psi, Psi) - s_theta(y_s)] + R(theta)`` where
    ``value_s`` is the game of :class:`advgame.GraphGame` on example ``s`` (Fathony et al. 2018b,
    Eq. 5-6): the predictor and an adversary that matches the node and edge feature moments play
    over the node-weighted loss ``sum_i w_i L[ŷ_i, y_i]``.  ``loss='log'`` is the same game with the
    logarithmic loss, i.e. a conditional random field (``value = log Z``, marginals by
    forward-backward / belief propagation).

    Parameters
    ----------
    loss : {'zero_one', 'ordinal' (= 'absolute'), 'squared', 'log'} or LossMatrix, default='zero_one'
        The per-node loss ``L[ŷ, y]`` (one column per class in sorted label order).
    graph : 'chain' or networkx.Graph, default='chain'
        ``'chain'``: each example is a sequence (a path over its rows).  A graph on the nodes
        ``0..N-1``: every example has ``N`` rows, row ``i`` for node ``i``; edge inputs follow
        ``list(graph.edges())``.  Forests are solved directly, other graphs through a junction
        tree (:class:`advgame.GraphGame`).
    node_weights : None, 'position', array-like or callable, default=None
        ``w_i`` of the loss: all 1, the position ``i + 1`` in the example (the weighted
        losses of Fathony et al. 2018b, §4.1), one weight per node of ``graph``, or
        ``f(N) -> (N,)``.
    uncertainty : {'soft', 'exact', 'l1', 'l2', 'linf', 'group'} or UncertaintySet
        The moment set on the clique (node and edge) moments; its regulariser ``R``
        (``soft``: ``strength/2 ||theta||^2``; balls: the dual norm times ``strength``).
    strength : float or None
        ``lam`` or ``radius``; None: ``1 / n_examples`` for ``soft``, 0.01 for the balls.
    solver : {'auto', 'compile', 'cutting_plane', 'subgradient', 'lbfgs'}, default='auto'
        ``compile``: one exact program for the whole data set (adversarial losses only).
        ``cutting_plane``: Kelley's cutting planes on the learning problem
        (:func:`fit_cutting_plane`): a master program over the adversaries met, one cut set per
        example, re-solved until the weak-duality bound below certifies ``tol``.
        ``subgradient``: averaged mini-batch AdaGrad over examples with the graph game's fast
        path, then certified by cutting planes (see ``certify``).  ``lbfgs``: for ``loss='log'`` (smooth with ``exact``/``soft``).
        ``auto``: ``lbfgs`` for the CRF with a smooth regulariser (``subgradient`` otherwise),
        ``compile`` up to :data:`AUTO_COMPILE_SIZE` marginal entries, else
        ``cutting_plane``.  Measured on ``make_ordinal_sequences`` (3 labels, 6 features,
        zero-one and ordinal losses, 12 to 2,000 sequences): cutting planes certify ``tol =
        1e-6`` in 12-27 rounds (15-16 from 120 sequences up), each one game per example and one
        master solve; 100 epochs of AdaGrad cost 5-6 times as many games and stop 0.5-0.8%
        above the optimum.
    backend : {'auto', 'highs', 'cvxpy'}, default='auto'
        For ``compile``: HiGHS for LPs, cvxpy (Clarabel) for QPs and SOCPs.  For the
        cutting-plane master: HiGHS for an LP master, cvxpy otherwise (``'highs'`` sends a QP
        master to HiGHS as well).
    inner : {'auto', 'lp', 'dual_decomposition'}, default='auto'
        How ``cutting_plane`` and ``subgradient`` solve each example's game
        (:meth:`advgame.GraphGame.solve`).
    max_iter : int, default=100
        Rounds of ``cutting_plane``, epochs of ``subgradient`` (its certification has
        :data:`CERTIFY_ROUNDS` rounds), iterations of ``lbfgs``.
    tol : float, default=1e-6
        The certified relative gap: cutting planes stop when ``gap_ <= tol * max(1,
        |objective_|)``; also the L-BFGS tolerance of the CRF.
    certify : {'auto', True, False}, default='auto'
        For ``subgradient``: ``True`` and ``'auto'`` finish with cutting planes started from the
        AdaGrad result's adversaries (the smallest objective met is kept); ``False`` returns the
        AdaGrad average uncertified (``gap_ = inf``, ``converged_`` says so).  ``compile`` and
        ``cutting_plane`` are certified by construction; the CRF's gap is reported, not
        enforced (see ``gap_``).
    batch_size : int, default=16
        Examples per ``subgradient`` step.
    learning_rate : float, default=1.0
        AdaGrad step.
    decision_loss : None or loss, default=None
        Loss used by ``score`` and, for ``loss='log'``, by ``predict``'s Bayes decision per node
        (``argmin_a (L p_i)_a`` on the CRF marginals, as Fathony et al. 2018b, §4.1, decode their
        CRF).  None: the training loss (zero-one for ``loss='log'``).
    random_state : int, Generator or None
        Seeds the mini-batch order.

    verbose : int, default=0
        Progress on stderr: 1 prints the stages of ``fit`` and what it found (time, objective,
        certified gap), 2 also its iterations.

    Attributes
    ----------
    classes_, theta_, n_iter_, solver_
    objective_ : float
        The training objective ``J(theta_)``, evaluated exactly (every example's game solved).
    gap_ : float
        A certified bound on ``objective_ - J*`` (Fathony et al. 2018b, with the moment set
        relaxed as in Farnia and Tse 2016): ``objective_`` minus the best lower bound met,

        .. math::  D(\mu) = \max_{0 \le r \le 1} \sum_s \omega_s \sum_i w_i
                   \min_a (L q_{r,s,i})_a - R^*\Big(r \sum_s \omega_s
                   \Phi_s^\top (e_{y_s} - \mu_s)\Big) \le J^*,

        at feasible adversary marginals ``mu_s = (q, Q)`` of every example, mixed with the
        labels by ``r`` (:func:`graph_dual_bound`; the cutting planes take ``mu_s`` as the mixture of
        the cut adversaries weighted by the master's multipliers).  For exact moment matching
        the bound is the cutting-plane master's optimum as its solver reports it.  0 for
        ``compile`` (its solver certifies it), ``inf`` when ``certify=False``.  For the CRF
        (``loss='log'``, a likelihood fit) the same bound with the tree entropy
        ``sum_(i,j) H(Q_ij) - sum_i (deg i - 1) H(q_i)`` in place of ``min_a (L q_i)_a``, at the
        belief-propagation marginals of ``theta_`` (:func:`crf_dual_bound`): tight at an
        L-BFGS optimum with ``uncertainty='soft'``, loose elsewhere (for ``exact`` it is the
        whole objective); reported, never enforced.
    converged_ : str
        ``'certified'`` exactly when ``gap_ <= tol * max(1, |objective_|)`` (every fit but
        ``compile``), otherwise why not (``'max_rounds=... reached: ...'``, ``'stalled: ...'``,
        which warn with a ``ConvergenceWarning``; ``'uncertified subgradient: ...'`` for
        ``certify=False``; the L-BFGS or AdaGrad message and the gap for the CRF); the
        solver status for ``compile``.
    coef_node_ : ndarray (k, d + 1)
        Per-label node weights (last column the intercept).
    transitions_ : ndarray (k, k) or (d_e + 1, k, k)
        Learnt edge weights (``transitions_[a, b]`` for ``y_i = a, y_j = b``).
    game_ : PredictionGame
        The declaration: ``PredictionGame(loss_matrix_, GraphFeatures(d, d_e, k),
        uncertainty_, ag.polytopes.Marginal(graph, node_weights=node_weights))``;
        ``game_.compile(X_list, y_list)`` (``(X_s, Z_s)`` pairs with edge inputs) gives the
        primal, the adversary's dual and their LaTeX (:class:`advgame.compile.GraphLearningProgram`)
        whatever the solver.  For ``loss='log'`` (the CRF) its loss is ``ag.losses.log(k)``
        and ``compile`` raises :class:`NotApplicableError` (``log Z`` is not an LP).
    program_ : Program
        The compiled program (``solver='compile'``); ``program_.to_cvxpy()`` hands it to cvxpy.
        Not pickled (it holds the training data): ``game_.compile(...)`` rebuilds it.
    compiled_ : GraphLearningProgram
        ``game_.compile(...)`` of the training data (``solver='compile'``): ``program_`` with
        its dual (``compiled_.dual()``) and ``compiled_.latex()``.
    """

    def __init__(
        self,
        loss: str | LossMatrix = "zero_one",
        graph: str | nx.Graph = "chain",
        node_weights: str | ArrayLike | Callable[[int], ArrayLike] | None = None,
        uncertainty: str | UncertaintySet = "soft",
        strength: float | None = None,
        solver: str = "auto",
        backend: str = "auto",
        inner: str = "auto",
        max_iter: int = 100,
        tol: float = 1e-6,
        certify: str | bool = "auto",
        batch_size: int = 16,
        learning_rate: float = 1.0,
        decision_loss: str | LossMatrix | ArrayLike | None = None,
        random_state: int | np.random.Generator | None = None,
        verbose: int = 0,
    ) -> None:
        self.loss = loss
        self.graph = graph
        self.node_weights = node_weights
        self.uncertainty = uncertainty
        self.strength = strength
        self.solver = solver
        self.backend = backend
        self.inner = inner
        self.max_iter = max_iter
        self.tol = tol
        self.certify = certify
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.decision_loss = decision_loss
        self.random_state = random_state
        self.verbose = verbose

    @property
    def _is_crf(self):
        return isinstance(self.loss, str) and self.loss == "log"

    def _choose_solver(self, data, k):
        solver = self.solver
        if solver not in _SOLVERS:
            raise ValueError(f"solver must be one of {_SOLVERS}; got {solver!r}.")
        smooth = self.uncertainty_.smooth
        if self._is_crf:
            if solver == "compile":
                raise NotApplicableError(
                    "the CRF (loss='log') has no LP/QP program (its inner problem is log Z); use "
                    "solver='lbfgs' or 'subgradient'."
                )
            if solver == "cutting_plane":
                raise NotApplicableError(
                    "cutting planes need the adversarial game's cuts; the CRF (loss='log') is a "
                    "smooth likelihood: use solver='lbfgs' or 'subgradient'."
                )
            return solver if solver != "auto" else ("lbfgs" if smooth else "subgradient")
        if solver == "lbfgs":
            raise NotApplicableError(
                "lbfgs needs a smooth objective; the adversarial loss is piecewise linear. Use "
                "solver='compile' or 'subgradient'."
            )
        if solver == "auto":
            size = data.X1.shape[0] * k + data.Z1.shape[0] * k * k
            return "compile" if size <= AUTO_COMPILE_SIZE else "cutting_plane"
        return solver

    def fit(
        self,
        X_list: Sequence[ArrayLike],
        y_list: Sequence[ArrayLike],
        edge_X_list: Sequence[ArrayLike] | None = None,
    ) -> AdversarialGraphicalModel:
        """Learn from examples ``X_list[s]`` (N_s, d) with labels ``y_list[s]`` (N_s,)."""
        started = fit_started(self, X_list)
        self._check_common()
        if self.certify not in ("auto", True, False):
            raise ValueError(f"certify must be 'auto', True or False; got {self.certify!r}.")
        if self.inner not in GRAPH_METHODS:
            raise ValueError(f"inner must be one of {GRAPH_METHODS}; got {self.inner!r}.")
        if self.backend not in ("auto", "highs", "cvxpy"):
            raise ValueError(f"backend must be 'auto', 'highs' or 'cvxpy'; got {self.backend!r}.")
        data = self._bind(X_list, edge_X_list, y_list, fitting=True)
        k = self.classes_.size
        self.feature_map_ = GraphFeatures(self.n_features_in_, self.n_edge_features_in_, k)
        self.uncertainty_ = self._uncertainty(data.n_examples)
        if self._is_crf:
            self.loss_matrix_ = None
            decision = "zero_one" if self.decision_loss is None else self.decision_loss
            for group in data.groups:
                if not nx.is_forest(group.graph):
                    raise NotApplicableError(
                        "the CRF (loss='log') runs belief propagation, exact on forests; this "
                        "graph has cycles."
                    )
        else:
            self.loss_matrix_ = _loss_matrix(self.loss, k)
            decision = self.loss_matrix_ if self.decision_loss is None else self.decision_loss
        self.decision_matrix_ = _loss_matrix(
            decision, k, "loss" if self.decision_loss is None else "decision_loss"
        )
        solver = self._choose_solver(data, k)
        if self._is_crf:
            inner = _crf_inner
        else:
            games = [GraphGame(self.loss_matrix_, g.graph, g.node_weights) for g in data.groups]
            inner = _AdversarialInner(games, self.inner)
        self.game_ = PredictionGame(
            losses.log(k) if self._is_crf else self.loss_matrix_,
            GraphFeatures(self.n_features_in_, self.n_edge_features_in_, k),
            self.uncertainty_,
            Marginal(self.graph, node_weights=self.node_weights),
        )
        if solver == "compile":
            inputs = X_list if edge_X_list is None else list(zip(X_list, edge_X_list))
            self.compiled_ = self.game_.compile(inputs, y_list)
            self.program_ = self.compiled_.program
            backend = self.backend
            if backend == "auto":
                backend = "highs" if self.program_.kind == "LP" else "cvxpy"
            solution = self.program_.solve(backend)
            self.theta_ = solution.x[self.program_.variables["theta"]].copy()
            self.objective_, self.n_iter_ = solution.objective, 1
            self.gap_, self.converged_ = 0.0, solution.status
        elif self._is_crf:
            result = self._train(inner, data, solver)
            self._certify_crf(data, result)
        else:
            self._fit_game(inner, data, solver)
        self.solver_ = solver
        self._set_coefficients()
        fit_finished(self, started)
        return self

    def _certify_crf(self, data, result):
        """``gap_`` of a CRF fit: ``objective_`` minus :func:`crf_dual_bound` at the belief
        propagation marginals of ``theta_`` (reported, not enforced: a likelihood fit)."""
        psi, Psi = self._potentials(data)
        q, Q = np.empty_like(psi), np.empty_like(Psi)
        for group in data.groups:
            q[group.nodes], Q[group.edges] = _crf_inner(
                0, group, psi[group.nodes], Psi[group.edges], None
            )[1:]
        bound = crf_dual_bound(self.feature_map_, self.uncertainty_, data, q, Q)
        self.gap_ = max(self.objective_ - bound, 0.0)
        if self.gap_ <= self.tol * max(1.0, abs(self.objective_)):
            self.converged_ = "certified"
        else:
            self.converged_ = (
                f"{result.message}: gap {self.gap_:.2e} above tol={self.tol:g} * max(1, |J|)"
            )

    def _fit_game(self, inner, data, solver):
        """Cutting planes, or averaged AdaGrad then (``certify``) cutting planes from its result."""
        objective = _StructuredObjective(inner, data, self.feature_map_, self.uncertainty_)
        theta0 = np.zeros(self.feature_map_.n_params)
        progress(self, f"solver {solver!r}: {data.n_examples} examples, {self.uncertainty_!r}")

        def report(line):
            progress(self, line, level=2)

        def refine(theta, rounds):
            return fit_cutting_plane(
                objective, self.loss_matrix_.matrix, theta, self.tol, rounds, self.backend, report
            )

        if solver == "cutting_plane":
            result = refine(theta0, self.max_iter)
            n_iter = result.n_iter
        else:
            result = self._fit_adagrad(objective, theta0)
            n_iter = result.n_iter
            progress(self, f"subgradient: {result.message}, objective {result.objective:.10g}")
            if self.certify:
                # its theta's adversaries are the first cuts; the smallest J met is kept
                result = refine(result.theta, CERTIFY_ROUNDS)
                n_iter += result.n_iter
            else:
                result.message = f"uncertified subgradient: {result.message} (certify=False)"
        self.theta_, self.objective_, self.n_iter_ = result.theta, result.objective, n_iter
        self.gap_, self.converged_ = result.gap, result.message

    def _set_coefficients(self):
        k, split = self.classes_.size, self.feature_map_.n_node_params
        self.coef_node_ = self.theta_[:split].reshape(-1, k).T.copy()
        edge = self.theta_[split:].reshape(-1, k, k)
        self.transitions_ = edge[0].copy() if edge.shape[0] == 1 else edge.copy()

    def predict(
        self, X_list: Sequence[ArrayLike], edge_X_list: Sequence[ArrayLike] | None = None
    ) -> list[np.ndarray]:
        """Joint labels: max-sum decoding of the potentials (Fathony et al. 2018b, §3.2.2); for the CRF the
        per-node Bayes decision ``argmin_a (L p_i)_a`` for ``decision_loss`` on its marginals."""
        if not self._is_crf:
            return super().predict(X_list, edge_X_list)
        marginals_list = self.predict_marginals(X_list, edge_X_list)
        L = self.decision_matrix_.matrix
        return [self.classes_[np.argmin(p @ L.T, axis=1)] for p in marginals_list]

    def predict_marginals(
        self, X_list: Sequence[ArrayLike], edge_X_list: Sequence[ArrayLike] | None = None
    ) -> list[np.ndarray]:
        """Per example, the node marginals ``(N_s, l)``: the minimax predictor's ``p_i``
        (Fathony et al. 2018b, Eq. 10), or the CRF's ``P(y_i = a)`` for ``loss='log'``."""
        check_is_fitted(self, "theta_")
        data = self._bind(X_list, edge_X_list)
        psi, Psi = self._potentials(data)
        width = self.classes_.size if self._is_crf else self.loss_matrix_.n_actions
        out = np.empty((data.X1.shape[0], width))
        for group in data.groups:
            if self._is_crf:
                out[group.nodes] = marginals(group.graph, psi[group.nodes], Psi[group.edges])[0]
                continue
            game = GraphGame(self.loss_matrix_, group.graph, group.node_weights)
            for nodes, edges in zip(group.nodes, group.edges):
                out[nodes] = game.predictor(psi[nodes], Psi[edges], self.inner)
        return self._split(data, out)


class StructuredSVM(_GraphicalModel):
    r"""Structured SVM with the node-weighted additive loss (the baseline of Fathony et al. 2018b, §4).

    Minimises ``(1/n) sum_s max_y' [sum_i w_i L[y'_i, y_s,i] + s_theta(y') - s_theta(y_s)]
    + R(theta)`` by averaged mini-batch AdaGrad; the maximisation is loss-augmented max-sum
    (Viterbi on chains, tree max-product).  Same features, inputs and decoding as
    :class:`AdversarialGraphicalModel`; the graph must be a forest.

    Parameters
    ----------
    loss : {'zero_one', 'ordinal' (= 'absolute'), 'squared'} or square LossMatrix
    graph, node_weights, uncertainty, strength, max_iter, batch_size, learning_rate, random_state, verbose
        As for :class:`AdversarialGraphicalModel`.
    """

    def __init__(
        self,
        loss: str | LossMatrix = "zero_one",
        graph: str | nx.Graph = "chain",
        node_weights: str | ArrayLike | Callable[[int], ArrayLike] | None = None,
        uncertainty: str | UncertaintySet = "soft",
        strength: float | None = None,
        max_iter: int = 100,
        batch_size: int = 16,
        learning_rate: float = 1.0,
        random_state: int | np.random.Generator | None = None,
        verbose: int = 0,
    ) -> None:
        self.loss = loss
        self.graph = graph
        self.node_weights = node_weights
        self.uncertainty = uncertainty
        self.strength = strength
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.random_state = random_state
        self.verbose = verbose

    def fit(
        self,
        X_list: Sequence[ArrayLike],
        y_list: Sequence[ArrayLike],
        edge_X_list: Sequence[ArrayLike] | None = None,
    ) -> StructuredSVM:
        """Learn from examples ``X_list[s]`` (N_s, d) with labels ``y_list[s]`` (N_s,)."""
        started = fit_started(self, X_list)
        self._check_common()
        if isinstance(self.loss, str) and self.loss == "log":
            raise ValueError("loss='log' is the CRF: use AdversarialGraphicalModel(loss='log').")
        data = self._bind(X_list, edge_X_list, y_list, fitting=True)
        k = self.classes_.size
        self.loss_matrix_ = self.decision_matrix_ = _loss_matrix(self.loss, k)
        if self.loss_matrix_.n_actions != k:
            raise ValueError("the structured SVM needs a square loss matrix (actions = labels).")
        for group in data.groups:
            if not nx.is_forest(group.graph):
                raise NotApplicableError(
                    "loss-augmented max-sum here is exact on forests; this graph has cycles."
                )
        self.feature_map_ = GraphFeatures(self.n_features_in_, self.n_edge_features_in_, k)
        self.uncertainty_ = self._uncertainty(data.n_examples)
        self._train(_HingeInner(self.loss_matrix_.matrix), data, "subgradient")
        self.solver_ = "subgradient"
        fit_finished(self, started)
        return self
