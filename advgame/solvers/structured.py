r"""The graphical models' solver pieces (Fathony et al. 2018b): objective, bounds, cutting planes.

Every example ``s`` is a graph with node and edge potentials linear in ``theta``; the learning
objective is

.. math::  J(\theta) = \frac1n \sum_s \big(\mathrm{inner}_s(\psi_s, \Psi_s)
           - s_\theta(y_s)\big) + R(\theta),

with ``inner`` the graph game's value (:class:`_AdversarialInner`), ``log Z`` of the CRF
(:func:`_crf_inner`) or the loss-augmented max-sum of the structured SVM (:class:`_HingeInner`);
:class:`_StructuredObjective` evaluates it for :func:`advgame.solvers.fit_adagrad` and
:func:`advgame.solvers.fit_lbfgs`.  Certificates by weak duality from feasible node and edge
marginals (:func:`graph_dual_bound`, :func:`crf_dual_bound`), and :func:`fit_cutting_plane`:
the one cutting-plane loop (:func:`advgame.solvers.cutting_plane.cutting_planes`) with the
graph master :func:`advgame.compile.graph.compile_graph_cuts`.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from ..compile.graph import _one_hot, compile_graph_cuts
from ..exceptions import ConvergenceWarning, NotApplicableError
from ..inference import marginals, max_sum
from ..uncertainty import SoftMoments
from ._progress import Progress, quiet
from .certificates import exact_matching
from .cutting_plane import _check_rounds, cutting_planes
from .first_order import TrainingResult, fit_adagrad

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..features import GraphFeatures
    from ..uncertainty import UncertaintySet

__all__ = [
    "crf_dual_bound",
    "crf_gap",
    "fit_block_frank_wolfe",
    "fit_cutting_plane",
    "fit_graph_game",
    "graph_dual_bound",
]

#: Adversaries each example keeps for the cached steps of :func:`fit_block_frank_wolfe`, and
#: the cached passes after each pass of games.  Measured on OCR training fold 0 (626 words,
#: 26 letters, ``lam = 0.1 / n``), the certified lower bound after 20 passes of games: 5.11
#: without a cache (85 s CPU), 8.93 with 5 and 5, 9.49 with 10 and 10, 9.73 with 20 and 20 (98
#: s); docs/results/graphical.md, "Block Frank-Wolfe: the cache".
FW_CACHE = 20
FW_CACHED_PASSES = 20
#: At most this many bytes for the cached adversaries' ``Phi_s^T mu`` (``n * cache * p``
#: floats): fewer kept per example beyond it (at least one).
FW_CACHE_BYTES = 512 * 2**20

#: Rounds of cutting planes at most when they certify a ``subgradient`` fit (``max_iter`` counts
#: its epochs): 12-27 rounds certified ``tol = 1e-6`` on ``make_ordinal_sequences``.
CERTIFY_ROUNDS = 100


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
    _, node_omega, edge_omega = _example_weights(data, weights)
    scale = node_omega * data.weights
    entropy = float(scale @ (L @ q.T).min(axis=0))
    base = float(scale @ L.min(axis=0)[data.y])
    moment = _residual_moment(fmap, data, q, Q, node_omega, edge_omega)
    return float(uncertainty.dual_bound(moment, base, entropy - base, fmap))


def _residual_moment(fmap, data, q, Q, node_omega, edge_omega):
    """``g(mu) = sum_s omega_s Phi_s^T (e_{y_s} - mu_s)`` for the marginals ``mu = (q, Q)``."""
    k = q.shape[1]
    YY = np.zeros_like(Q)
    for group in data.groups:
        YY[group.edges] = _one_hot(group.graph, data.y[group.nodes], k)[1]
    G_node = node_omega[:, None] * (np.eye(k)[data.y] - q)
    G_edge = edge_omega[:, None, None] * (YY - Q)
    return fmap.adjoint(data.X1, data.Z1, G_node, G_edge)


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
    moment = _residual_moment(fmap, data, q, Q, node_omega, edge_omega)
    return float(uncertainty.dual_bound(moment, 0.0, entropy, fmap))


class _ExampleTerms:
    """Per example ``s``: the game value, the observed score, and the cut ``(h_s, a_s)`` of the
    adversary found (``h_s = H_s(mu_s)``, ``a_s = Phi_s^T mu_s``); also the labels' cut.

    For the structured SVM (an :class:`_HingeInner`) ``mu_s`` is the loss-augmented labeling's
    one-hot tables and ``H_s(mu) = sum_i w_i sum_a q_i[a] L[a, y_i]`` the expected loss, linear
    in ``mu``: the cuts of the SSVM's dual (Lacoste-Julien et al. 2013, §3)."""

    def __init__(self, objective, loss_matrix):
        self.objective, self.L = objective, np.asarray(loss_matrix, dtype=np.float64)
        self.hinge = isinstance(objective.inner, _HingeInner)
        data = objective.data
        self.labels = self._cuts(data, [(np.eye(self.L.shape[1])[data.y[g.nodes]],
                                         _one_hot(g.graph, data.y[g.nodes], self.L.shape[1])[1])
                                        for g in data.groups])  # fmt: skip

    def _cuts(self, data, marginals):
        n = data.n_examples
        h = np.empty(n)
        A = np.empty((n, self.objective.fmap.n_params))
        for group, (q, Q) in zip(data.groups, marginals):
            X1, Z1, y = data.X1[group.nodes], data.Z1[group.edges], data.y[group.nodes]
            h[group.examples], A[group.examples] = self.cut(group, X1, Z1, y, q, Q)
        return h, A

    def cut(self, group, X1, Z1, y, q, Q):
        """``(h (m,), A (m, p))`` of ``m`` examples of ``group`` with node inputs ``X1`` (m, N,
        d + 1), edge inputs ``Z1`` (m, E, d_e + 1), labels ``y`` (m, N) and marginals ``q``
        (m, N, k), ``Q`` (m, E, k, k)."""
        k = self.L.shape[1]
        node = np.einsum("gnd,gnk->gdk", X1, q).reshape(len(q), -1)
        edge = np.einsum("ged,gem->gdm", Z1, Q.reshape(*Q.shape[:2], k * k))
        if self.hinge:
            values = np.sum(q * self.L.T[y], axis=2)
        else:
            values = np.min(np.einsum("ak,gnk->gna", self.L, q), axis=2)
        return np.sum(group.node_weights * values, axis=1), np.hstack(
            [node, edge.reshape(len(q), -1)]
        )

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
    progress: Any = None,
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
    15-19 s (``l1``, an LP); on 2,000 sequences (beyond
    :data:`advgame.models.graphical.AUTO_COMPILE_SIZE`) 13-15 rounds,
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
    progress : Phase, optional
        Told every round (:class:`advgame.solvers._progress.Phase`).

    Returns
    -------
    TrainingResult
        ``theta`` (the smallest ``J`` met), ``objective``, ``n_iter`` (rounds), ``message`` and
        the certified ``gap``.
    """
    _check_rounds(max_rounds)
    theta0 = np.asarray(theta0, dtype=np.float64)
    master = _GraphMaster(_ExampleTerms(objective, loss_matrix), theta0, backend)
    objective0 = master.evaluate(theta0)[0]
    master.add(np.arange(objective.data.n_examples))  # every example's adversary at theta0
    return cutting_planes(
        master, theta0.copy(), objective0, tol, max_rounds, stacklevel=3, progress=progress
    )


def fit_block_frank_wolfe(
    objective: _StructuredObjective,
    loss_matrix: ArrayLike,
    tol: float = 1e-6,
    max_passes: int = 100,
    random_state: Any = None,
    progress: Any = None,
) -> TrainingResult:
    r"""Block-coordinate Frank-Wolfe on the adversary's dual (soft moments), certified by weak duality.

    With ``R(theta) = lam/2 ||theta||^2`` the learning problem of :func:`fit_cutting_plane` has
    the dual (Fathony et al. 2018b, Eq. 5-6, with the conjugate of ``R``)

    .. math::  \max_{\mu_s \in M(G_s)}\ \sum_s \omega_s H_s(\mu_s)
               - \frac{\lVert g(\mu) \rVert^2}{2\lambda}, \qquad
               g(\mu) = \sum_s \omega_s \Phi_s^\top (e_{y_s} - \mu_s),
               \qquad \theta(\mu) = g(\mu) / \lambda,

    one block per example (:func:`graph_dual_bound`).  Each example's dual point is a mixture
    of the adversaries met, kept as its summary ``(h_s, a_s)``, the mixture of their
    ``(H_s(mu_t), Phi_s^T mu_t)``, as the cutting planes keep their cuts; ``H_s`` being
    concave, ``D = sum_s omega_s h_s - ||g||^2 / (2 lam)`` is a lower bound on the dual, and
    over the mixtures its maximum is the dual's.  The linear oracle of a block at ``theta = g /
    lam`` is the example's graph game ``max_mu H_s(mu) + theta^T Phi_s^T mu``, so a step is the
    structured SVM's block Frank-Wolfe step (Lacoste-Julien, Jaggi, Schmidt and Pletscher 2013,
    Algorithm 3) with the adversary's ``(H_s(mu_hat), Phi_s^T mu_hat)`` in place of the
    loss-augmented labeling's: the block gap ``gap_s = omega_s [(h_hat + theta^T a_hat) - (h_s
    + theta^T a_s)] >= 0`` and the exact line search ``gamma = clip(lam gap_s / ||d||^2, 0,
    1)``, ``d = omega_s (a_hat - a_s)``.  A pass visits the examples in a random order and sums
    their block gaps (each at the ``theta`` of its step): an estimate of ``J(theta) - D``.

    Each example also keeps its last :data:`FW_CACHE` adversaries, and after every pass of
    games :data:`FW_CACHED_PASSES` passes step towards the best cached one at the current
    ``theta`` (no game solved: a few dot products), as Osokin, Alayrac, Lukasewitz, Dokania
    and Lacoste-Julien (2016) do for the structured SVM.

    The certificate does not trust the estimate: when it falls below ``tol * max(1, |J|)``
    (and after the last pass), every game is solved at the last ``theta`` and at the weighted
    average of the iterates (weights ``t``, Lacoste-Julien et al. 2013, §4) for their exact
    ``J`` (the smaller is kept), and the
    summaries give the bound of :func:`fit_cutting_plane` (``D`` at its best mixture with the
    labels, :meth:`advgame.uncertainty.UncertaintySet.dual_bound`).  Stops when ``min J - max
    D <= tol * max(1, |min J|)`` (message ``'certified'``); after ``max_passes`` passes it warns
    (``ConvergenceWarning``) with the certified gap reached (``limit_reached``).  A pass costs
    one game per example, as an AdaGrad epoch; unlike AdaGrad it carries a certificate, and
    unlike cutting planes it has no master program growing with the rounds.

    Measured on OCR training fold 0 (626 words, 26 letters, the cost-sensitive loss, ``lam =
    0.1 / n``; docs/results/graphical.md, "Block Frank-Wolfe: the cache"): after 20 passes
    ``J = 10.51`` with a certified gap of 0.77 (98 s CPU), against ``J = 12.10``
    and a gap of 6.99 without the cache (85 s); 90 epochs of averaged AdaGrad reach ``J = 12.31`` in 612 s, uncertified.

    Parameters
    ----------
    objective : _StructuredObjective
        With the adversarial graph game or the structured SVM's loss-augmented max-sum
        (:class:`_HingeInner`: then ``H_s`` is the expected loss, see :class:`_ExampleTerms`,
        and this is Lacoste-Julien et al.'s algorithm itself) as its ``inner`` and
        :class:`advgame.uncertainty.SoftMoments` as its uncertainty (a norm ball's or exact
        matching's dual has no closed-form ``theta(mu)``: use :func:`fit_cutting_plane`).
    loss_matrix : ndarray (l, k)
    tol : float
        Relative gap to certify.
    max_passes : int
        Passes of games (the cached passes not counted).
    random_state : int, Generator or None
        Seeds the order of the examples in each pass.
    progress : Phase, optional
        Told every pass (:class:`advgame.solvers._progress.Phase`).

    Returns
    -------
    TrainingResult
        ``theta`` (the smallest ``J`` evaluated), ``objective``, ``n_iter`` (passes of
        games), ``message`` and the certified ``gap``.
    """
    _check_rounds(max_passes, "max_passes")
    uncertainty, fmap, data = objective.uncertainty, objective.fmap, objective.data
    if not isinstance(uncertainty, SoftMoments):
        raise NotApplicableError(
            f"block Frank-Wolfe needs uncertainty='soft' (theta = g / lam in closed form); got "
            f"{uncertainty!r}. Use solver='cutting_plane'."
        )
    lam, n, size = uncertainty.lam, data.n_examples, fmap.n_params
    phase, rng = quiet(progress), np.random.default_rng(random_state)
    terms = _ExampleTerms(objective, loss_matrix)
    h_label, A_label = terms.labels
    h, A, omega = h_label.copy(), A_label.copy(), 1.0 / n
    base = float(omega * h_label.sum())
    located = np.empty((n, 2), dtype=np.intp)  # (group, position) of each example
    for g, group in enumerate(data.groups):
        located[group.examples, 0] = g
        located[group.examples, 1] = np.arange(group.examples.size)
    cache = max(1, min(FW_CACHE, FW_CACHE_BYTES // (8 * n * size)))
    cached_h, cached_a = np.empty((n, cache)), np.empty((n, cache, size))
    met = np.zeros(n, dtype=np.intp)
    moment, averaged, steps = np.zeros(size), np.zeros(size), 0

    def step(s, h_hat, a_hat):
        """Move example ``s`` towards ``(h_hat, a_hat)`` by the exact line search; its gap."""
        nonlocal moment, averaged, steps
        d = omega * (a_hat - A[s])
        block_gap = omega * (h_hat - h[s]) + moment @ d / lam
        length = float(d @ d)
        gamma = 1.0 if length == 0 else min(max(lam * block_gap / length, 0.0), 1.0)
        if gamma > 0:
            h[s] += gamma * (h_hat - h[s])
            A[s] += gamma * (a_hat - A[s])
            moment = moment - gamma * d
        steps += 1
        averaged += 2.0 / (steps + 2.0) * (moment - averaged)
        return block_gap

    best_value, best_theta, lower, gap = np.inf, moment, -np.inf, np.inf
    for pass_ in range(1, max_passes + 1):
        estimate = 0.0
        for s in rng.permutation(n):
            g, j = located[s]
            group = data.groups[g]
            nodes, edges = group.nodes[j], group.edges[j]
            X1, Z1 = data.X1[nodes], data.Z1[edges]
            psi, Psi = fmap.potentials(moment / lam, X1, Z1)
            y = data.y[nodes][None]
            _, q_hat, Q_hat = objective.inner(g, group, psi[None], Psi[None], y)
            h_hat, a_hat = terms.cut(group, X1[None], Z1[None], y, q_hat, Q_hat)
            estimate += step(s, h_hat[0], a_hat[0])
            cached_h[s, met[s] % cache], cached_a[s, met[s] % cache] = h_hat[0], a_hat[0]
            met[s] += 1
        for _ in range(FW_CACHED_PASSES):
            for s in rng.permutation(n):
                kept = min(met[s], cache)
                best = np.argmax(cached_h[s, :kept] + cached_a[s, :kept] @ (moment / lam))
                step(s, cached_h[s, best], cached_a[s, best])
        moment = omega * (A_label - A).sum(axis=0)  # no drift from the running updates
        dual = omega * float(h.sum()) - float(moment @ moment) / (2.0 * lam)
        if estimate <= tol * max(1.0, abs(dual)) or pass_ == max_passes:
            for theta in (averaged / lam, moment / lam):
                value = terms(theta)[0]
                if value < best_value:
                    best_value, best_theta = value, theta
            gain = omega * float(h.sum()) - base
            lower = max(lower, dual, uncertainty.dual_bound(moment, base, gain, fmap))
            gap = max(best_value - lower, 0.0)
        phase.step(pass_, gap, D=dual, estimate=estimate)
        if np.isfinite(gap) and gap <= tol * max(1.0, abs(best_value)):
            return TrainingResult(best_theta, best_value, pass_, "certified", gap)
    message = f"max_passes={max_passes} reached: gap {gap:.2e} above tol={tol:g} * max(1, |J|)"
    warnings.warn(
        f"block Frank-Wolfe certification not reached ({message}); objective {best_value:.10g}.",
        ConvergenceWarning,
        stacklevel=2,
    )
    return TrainingResult(best_theta, best_value, max_passes, message, gap, limit_reached=True)


class _GraphMaster:
    """The master of :func:`fit_cutting_plane`: :func:`advgame.compile.graph.compile_graph_cuts`
    over the cuts ``(h_t, a_t)`` met, one cut set per example, first the labels' own; its bound
    mixes the cut adversaries by the master's multipliers (the optimum it reports, for exact
    moment matching)."""

    def __init__(self, terms, theta0, backend):
        self.terms, self.backend = terms, backend
        o = terms.objective
        self.fmap, self.uncertainty = o.fmap, o.uncertainty
        n = o.data.n_examples
        self.omega = np.full(n, 1.0 / n)
        h_label, self.A_label = terms.labels
        self.observed = self.omega @ self.A_label
        self.base = float(self.omega @ h_label)
        self.exact = exact_matching(self.uncertainty)
        self.examples, self.H, self.C = np.arange(n), h_label, self.A_label

    @property
    def n_cuts(self):
        return self.examples.size

    def solve(self):
        master = compile_graph_cuts(
            self.fmap, self.uncertainty, self.observed, self.omega, self.examples, self.C, self.H
        )
        solver = "highs" if master.kind == "LP" or self.backend == "highs" else "cvxpy"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an inaccurate master still gives a valid D below
            solution = master.solve(solver)
        theta = solution.x[master.variables["theta"]]
        bound = -np.inf
        if self.exact:
            if solution.status.lower() == "optimal":
                bound = solution.objective
        elif solution.row_duals is not None:
            bound = self._mixed_bound(np.clip(master.duals(solution)["cuts"], 0.0, None))
        u = solution.x[master.variables["u"]] - theta @ self.A_label.T  # u_s - s_theta(y_s)
        return theta.copy(), u, bound

    def _mixed_bound(self, lam):
        """:func:`graph_dual_bound` at the cut adversaries mixed by the multipliers ``lam``
        normalised per example, with the concave lower estimate ``sum_t pi_t h_t``."""
        examples, omega, n = self.examples, self.omega, self.omega.size
        total = np.bincount(examples, lam, n)
        pi = lam / np.where(total > 0, total, 1.0)[examples]
        pi[:n][total <= 0] = 1.0  # no multiplier on this example: its labels' cut
        mixed = np.bincount(examples, pi * self.H, n)
        moment = self.observed - (omega[examples] * pi) @ self.C
        gain = float(omega @ mixed) - self.base
        return self.uncertainty.dual_bound(moment, self.base, gain, self.fmap)

    def evaluate(self, theta):
        J, margin, self.h, self.A = self.terms(theta)
        return J, margin

    def add(self, rows):
        self.examples = np.r_[self.examples, rows]
        self.H, self.C = np.r_[self.H, self.h[rows]], np.vstack([self.C, self.A[rows]])


def fit_graph_game(
    objective: _StructuredObjective,
    loss_matrix: ArrayLike,
    solver: str,
    max_iter: int,
    tol: float,
    backend: str,
    certify: Any,
    adagrad: dict,
    progress: Any = None,
) -> TrainingResult:
    """The adversarial graph game's fit: cutting planes (``solver='cutting_plane'``,
    :func:`fit_cutting_plane`, ``max_iter`` rounds), block Frank-Wolfe (``'frank_wolfe'``,
    :func:`fit_block_frank_wolfe`, ``max_iter`` passes, the order seeded by ``adagrad``'s
    ``random_state``), or averaged AdaGrad
    (:func:`advgame.solvers.fit_adagrad` with the keyword arguments ``adagrad``) then, with
    ``certify``, cutting planes from its result (:data:`CERTIFY_ROUNDS` rounds at most; its
    ``theta``'s adversaries are the first cuts and the smallest ``J`` met is kept).

    ``progress`` (a :class:`advgame.solvers._progress.Progress`, or a line callback) gets a
    phase per solver run.  The result's ``n_iter`` counts the AdaGrad steps and the rounds.
    """
    theta0 = np.zeros(objective.fmap.n_params)
    progress = Progress.of(progress)

    def refine(theta, rounds, reason):
        phase = progress.phase("cutting planes", reason, "round", rounds)
        result = fit_cutting_plane(objective, loss_matrix, theta, tol, rounds, backend, phase)
        phase.finish(result)
        return result

    if solver == "cutting_plane":
        return refine(theta0, max_iter, "solver='cutting_plane'")
    if solver == "frank_wolfe":
        phase = progress.phase("block Frank-Wolfe", "solver='frank_wolfe'", "epoch", max_iter)
        result = fit_block_frank_wolfe(
            objective, loss_matrix, tol, max_iter, adagrad.get("random_state"), phase
        )
        phase.finish(result)
        return result
    phase = progress.phase("averaged AdaGrad", f"solver={solver!r}", "epoch", max_iter)
    result = fit_adagrad(objective, theta0, n_epochs=max_iter, progress=phase, **adagrad)
    phase.finish(result, handover="cutting planes" if certify else None)
    n_iter = result.n_iter
    if certify:
        result = refine(result.theta, CERTIFY_ROUNDS, f"certify={certify!r}")
        result.n_iter += n_iter
    else:
        result.message = f"uncertified subgradient: {result.message} (certify=False)"
    return result


def crf_gap(
    fmap: GraphFeatures, uncertainty: UncertaintySet, data: Any, theta: np.ndarray, value: float
) -> float:
    """``value`` (the CRF's objective at ``theta``) minus :func:`crf_dual_bound` at the belief
    propagation marginals of ``theta``, at least 0 (reported, not enforced: a likelihood fit)."""
    psi, Psi = fmap.potentials(theta, data.X1, data.Z1)
    q, Q = np.empty_like(psi), np.empty_like(Psi)
    for group in data.groups:
        q[group.nodes], Q[group.edges] = _crf_inner(
            0, group, psi[group.nodes], Psi[group.edges], None
        )[1:]
    return max(value - crf_dual_bound(fmap, uncertainty, data, q, Q), 0.0)
