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

Solvers (their loops, objective and bounds live in :mod:`advgame.solvers.structured`):
``compile`` writes the whole data set's problem as one LP/QP/SOCP by dualising each example's
inner LP; ``cutting_plane`` (:func:`fit_cutting_plane`) re-solves a small master
program over the adversaries met (one cut set per example) and certifies its result by weak
duality (:func:`graph_dual_bound`: any feasible node and edge marginals give a lower bound);
``frank_wolfe`` (:func:`~advgame.solvers.structured.fit_block_frank_wolfe`) is block
Frank-Wolfe on the dual, one example's game per step, certified by the same bound;
``subgradient`` is averaged mini-batch AdaGrad calling the graph game's fast path
(:func:`advgame.solvers.fit_adagrad`), certified afterwards by the cutting planes; and
``lbfgs`` serves the smooth CRF.  Decoding is max-sum on the potentials (Fathony et al. 2018b, §3.2.2, non-probabilistic
prediction;
forests by message passing, other graphs by the junction-tree LP).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import networkx as nx
import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .. import losses
from .._estimator.base import (
    ProgramNotPickled,
    fit_finished,
    fit_started,
    progress,
    record_convergence,
)
from .._estimator.inputs import (
    action_labels,
    check_iteration_params,
    check_strength,
    resolve_loss_matrix,
)
from ..compile.inputs import graph_loss
from ..declaration import PredictionGame
from ..exceptions import NotApplicableError
from ..features import GraphFeatures
from ..graph import GRAPH_METHODS, GraphGame
from ..graph_data import ExampleBinding
from ..inference import marginals, max_sum
from ..polytopes import Marginal
from ..solvers import fit_adagrad, fit_lbfgs
from ..solvers._progress import Progress
from ..solvers.structured import CERTIFY_ROUNDS as CERTIFY_ROUNDS
from ..solvers.structured import (
    _AdversarialInner,
    _crf_inner,
    _HingeInner,
    _StructuredObjective,
    crf_dual_bound,
    crf_gap,
    fit_cutting_plane,
    fit_graph_game,
    graph_dual_bound,
)
from ..solvers.structured import _entropy as _entropy  # tests reach it here
from ..uncertainty import SoftMoments, as_uncertainty

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

#: Loss names of the graphical models; ``'hamming'`` is the node-wise zero-one loss (the Hamming
#: loss over the nodes, as in ``PredictionGame('hamming', polytope=Marginal(graph))``).
_LOSSES = ("zero_one", "ordinal", "absolute", "squared", "hamming", "log")
_SOLVERS = ("auto", "compile", "cutting_plane", "frank_wolfe", "subgradient", "lbfgs")
#: ``solver='auto'`` compiles the whole-data program while it has at most this many
#: adversary marginal entries (sum over examples of ``N k + |E| k^2``), and beyond uses the
#: certified cutting planes (:func:`fit_cutting_plane`).
AUTO_COMPILE_SIZE = 200_000


def _loss_matrix(loss, k, name="loss"):
    return resolve_loss_matrix(graph_loss(loss), k, _LOSSES, name=name)


def _require_forests(data, why):
    """Raise ``NotApplicableError`` (``why``; this graph has cycles) unless every graph of
    ``data`` is a forest."""
    for group in data.groups:
        if not nx.is_forest(group.graph):
            raise NotApplicableError(f"{why}; this graph has cycles.")


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
            result = fit_adagrad(objective, theta0, self.max_iter, **self._adagrad_options())
        self.theta_, self.objective_, self.n_iter_ = result.theta, result.objective, result.n_iter
        return result

    def _adagrad_options(self):
        return {
            "batch_size": self.batch_size,
            "step": self.learning_rate,
            "random_state": self.random_state,
        }

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

    def _predicted_rows(self, X_list, edge_X_list):
        """Per example, the row of ``decision_matrix_`` (the class index) each node predicts:
        max-sum decoding of the learnt potentials."""
        data = self._bind(X_list, edge_X_list)
        return self._split(data, self._decode(data))

    def predict(
        self, X_list: Sequence[ArrayLike], edge_X_list: Sequence[ArrayLike] | None = None
    ) -> list[np.ndarray]:
        """Joint labels of each example by max-sum decoding of the learnt potentials (named
        actions where the loss has actions beyond the labels: see ``actions_``)."""
        check_is_fitted(self, "theta_")
        return [self.actions_[rows] for rows in self._predicted_rows(X_list, edge_X_list)]

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
        predicted = np.concatenate(self._predicted_rows(X_list, edge_X_list))
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
    loss : {'zero_one', 'ordinal' (= 'absolute'), 'squared', 'hamming', 'log'} or LossMatrix, default='zero_one'
        The per-node loss ``L[ŷ, y]`` (one column per class in sorted label order);
        ``'hamming'`` (the Hamming loss over the nodes) is the node-wise ``'zero_one'``.
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
    solver : {'auto', 'compile', 'cutting_plane', 'frank_wolfe', 'subgradient', 'lbfgs'}, default='auto'
        ``compile``: one exact program for the whole data set (adversarial losses only).
        ``cutting_plane``: Kelley's cutting planes on the learning problem
        (:func:`fit_cutting_plane`): a master program over the adversaries met, one cut set per
        example, re-solved until the weak-duality bound below certifies ``tol``.
        ``frank_wolfe``: block Frank-Wolfe on the adversary's dual with cached adversaries
        (:func:`advgame.solvers.structured.fit_block_frank_wolfe`; ``uncertainty='soft'``
        only), certified by the same bound; one game per example per pass, no master program,
        so it scales where the cutting planes' master does not (a fold of the 26-letter OCR
        words: ``J`` 10.51 and certified gap 0.77 after 20 passes, 98 s CPU, where 90 AdaGrad
        epochs reach ``J`` 12.31 uncertified in 612 s).
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
        Rounds of ``cutting_plane``, passes of ``frank_wolfe``, epochs of ``subgradient`` (its certification has
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
        CRF; its actions are named as for ``loss``).  None: the training loss (zero-one for
        ``loss='log'``).  When ``loss`` has actions beyond its labels, ``decision_loss`` must
        have as many actions.
    random_state : int, Generator or None
        Seeds the mini-batch order (the example order of ``frank_wolfe``).

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
    actions_ : ndarray of shape (l,)
        What ``predict`` returns for each action (row) of the loss (of ``decision_loss`` for
        the CRF), as for :class:`advgame.AdversarialClassifier`: the class of an action named
        like a label, the name of another named action (``LossMatrix(..., actions=[...,
        'refer'])``), ``-1`` (``'abstain'`` for string classes) for unnamed extra actions and
        the one named ``'abstain'``.
    converged_ : {'optimal', 'certified', 'uncertified'}
        ``'optimal'`` for ``compile``, ``'certified'`` exactly when ``gap_ <= tol * max(1,
        |objective_|)``, ``'uncertified'`` otherwise (:func:`advgame._estimator.base.record_convergence`).
    stop_reason_ : str
        Why the solver stopped: ``'certified'``, ``'max_rounds=... reached: ...'`` or
        ``'stalled: ...'`` (which warn with a ``ConvergenceWarning``), ``'uncertified
        subgradient: ...'`` for ``certify=False``, the L-BFGS or AdaGrad message and the gap for
        the CRF, the solver status for ``compile``.
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
            if solver in ("cutting_plane", "frank_wolfe"):
                method = "cutting planes" if solver == "cutting_plane" else "block Frank-Wolfe"
                raise NotApplicableError(
                    f"{method} (solver={solver!r}) need the adversarial game's adversaries; the "
                    "CRF (loss='log') is a smooth likelihood: use solver='lbfgs' or 'subgradient'."
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
            _require_forests(data, "the CRF (loss='log') runs belief propagation, exact on forests")
        else:
            self.loss_matrix_ = _loss_matrix(self.loss, k)
            decision = self.loss_matrix_ if self.decision_loss is None else self.decision_loss
        self.decision_matrix_ = _loss_matrix(
            decision, k, "loss" if self.decision_loss is None else "decision_loss"
        )
        acting = self.decision_matrix_ if self._is_crf else self.loss_matrix_
        self.actions_ = action_labels(acting, self.classes_)[0]
        rows = self.decision_matrix_.n_actions
        if not (self._is_crf or self._labels_only()) and rows != self.loss_matrix_.n_actions:
            raise ValueError(
                f"decision_loss has {rows} actions (rows) but loss "
                f"has {self.loss_matrix_.n_actions}: score rates the loss's actions with it."
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
            record_convergence(
                self, 0.0, self.tol, self.objective_, exact=True, reason=solution.status
            )
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
        """``gap_`` and ``converged_`` of a CRF fit (:func:`advgame.solvers.structured.crf_gap`)."""
        gap = crf_gap(self.feature_map_, self.uncertainty_, data, self.theta_, self.objective_)
        reason = f"{result.message}: gap {gap:.2e}, tol={self.tol:g} * max(1, |J|)"
        record_convergence(self, gap, self.tol, self.objective_, reason=reason)

    def _fit_game(self, inner, data, solver):
        """Cutting planes, or averaged AdaGrad then (``certify``) cutting planes from its result
        (:func:`advgame.solvers.structured.fit_graph_game`)."""
        objective = _StructuredObjective(inner, data, self.feature_map_, self.uncertainty_)
        progress(self, f"solver {solver!r}: {data.n_examples} examples, {self.uncertainty_!r}")
        result = fit_graph_game(
            objective,
            self.loss_matrix_.matrix,
            solver,
            self.max_iter,
            self.tol,
            self.backend,
            self.certify,
            self._adagrad_options(),
            Progress(lambda line: progress(self, line), self.verbose),
        )
        self.theta_, self.objective_, self.n_iter_ = result.theta, result.objective, result.n_iter
        record_convergence(self, result.gap, self.tol, result.objective, reason=result.message)

    def _set_coefficients(self):
        k, split = self.classes_.size, self.feature_map_.n_node_params
        self.coef_node_ = self.theta_[:split].reshape(-1, k).T.copy()
        edge = self.theta_[split:].reshape(-1, k, k)
        self.transitions_ = edge[0].copy() if edge.shape[0] == 1 else edge.copy()

    def _predicted_rows(self, X_list, edge_X_list):
        if self._is_crf:  # the Bayes decision argmin_a (L p_i)_a on the CRF's marginals
            L = self.decision_matrix_.matrix
            return [np.argmin(p @ L.T, axis=1) for p in self.predict_marginals(X_list, edge_X_list)]
        if self._labels_only():
            return super()._predicted_rows(X_list, edge_X_list)
        # actions beyond the labels: each node's most likely action under the predictor's p_i
        return [np.argmax(p, axis=1) for p in self.predict_marginals(X_list, edge_X_list)]

    def _labels_only(self):
        """Whether every action of the loss is a class (max-sum decoding over the labels)."""
        return self.actions_.size == self.classes_.size and bool(
            np.all(self.actions_ == self.classes_)
        )

    def predict(
        self, X_list: Sequence[ArrayLike], edge_X_list: Sequence[ArrayLike] | None = None
    ) -> list[np.ndarray]:
        """Per example, each node's prediction, named by ``actions_``: the joint labels of
        max-sum decoding of the potentials (Fathony et al. 2018b, §3.2.2) when the loss's
        actions are its labels; each node's most likely action under the minimax predictor's
        ``p_i`` (:meth:`predict_marginals`) when the loss has other actions; for the CRF the
        per-node Bayes decision ``argmin_a (L p_i)_a`` for ``decision_loss`` on its marginals."""
        return super().predict(X_list, edge_X_list)

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
    + R(theta)``; the maximisation is loss-augmented max-sum (Viterbi on chains, tree
    max-product).  Same features, inputs and decoding as :class:`AdversarialGraphicalModel`; the
    graph must be a forest.

    Parameters
    ----------
    loss : {'zero_one', 'ordinal' (= 'absolute'), 'squared'} or square LossMatrix
    graph, node_weights, uncertainty, strength, batch_size, learning_rate, random_state, verbose
        As for :class:`AdversarialGraphicalModel`.
    solver : {'subgradient', 'frank_wolfe'}, default='subgradient'
        ``subgradient``: averaged mini-batch AdaGrad, uncertified.  ``frank_wolfe``: block
        Frank-Wolfe on the dual (Lacoste-Julien, Jaggi, Schmidt and Pletscher 2013, with cached
        labelings; :func:`advgame.solvers.structured.fit_block_frank_wolfe`), certified by weak
        duality; ``uncertainty='soft'`` only.
    max_iter : int, default=100
        Epochs of AdaGrad, passes of block Frank-Wolfe.
    tol : float, default=1e-6
        The certified relative gap at which ``frank_wolfe`` stops.

    Attributes
    ----------
    classes_, theta_, objective_, n_iter_, solver_
        As for :class:`AdversarialGraphicalModel`.
    gap_ : float
        ``frank_wolfe``: the objective minus the block Frank-Wolfe's dual bound.  ``subgradient``:
        ``inf``, the averaged AdaGrad iterate is not certified.
    converged_ : str
        ``'certified'`` when ``gap_ <= tol * max(1, |objective_|)``, else ``'uncertified'``;
        ``stop_reason_`` holds the solver's message.
    """

    def __init__(
        self,
        loss: str | LossMatrix = "zero_one",
        graph: str | nx.Graph = "chain",
        node_weights: str | ArrayLike | Callable[[int], ArrayLike] | None = None,
        uncertainty: str | UncertaintySet = "soft",
        strength: float | None = None,
        solver: str = "subgradient",
        max_iter: int = 100,
        tol: float = 1e-6,
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
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
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
        if self.solver not in ("subgradient", "frank_wolfe"):
            raise ValueError(f"solver must be 'subgradient' or 'frank_wolfe'; got {self.solver!r}.")
        data = self._bind(X_list, edge_X_list, y_list, fitting=True)
        k = self.classes_.size
        self.loss_matrix_ = self.decision_matrix_ = _loss_matrix(self.loss, k)
        if self.loss_matrix_.n_actions != k:
            raise ValueError("the structured SVM needs a square loss matrix (actions = labels).")
        self.actions_ = self.classes_.copy()
        _require_forests(data, "loss-augmented max-sum here is exact on forests")
        self.feature_map_ = GraphFeatures(self.n_features_in_, self.n_edge_features_in_, k)
        self.uncertainty_ = self._uncertainty(data.n_examples)
        inner = _HingeInner(self.loss_matrix_.matrix)
        if self.solver == "frank_wolfe":
            objective = _StructuredObjective(inner, data, self.feature_map_, self.uncertainty_)
            result = fit_graph_game(
                objective,
                self.loss_matrix_.matrix,
                "frank_wolfe",
                self.max_iter,
                self.tol,
                "auto",
                False,
                self._adagrad_options(),
                Progress(lambda line: progress(self, line), self.verbose),
            )
            self.theta_, self.objective_, self.n_iter_ = (
                result.theta,
                result.objective,
                result.n_iter,
            )
            record_convergence(self, result.gap, self.tol, result.objective, reason=result.message)
        else:
            result = self._train(inner, data, "subgradient")
            # the averaged AdaGrad iterate has no certificate: gap_ = inf, 'uncertified'
            record_convergence(self, np.inf, 0.0, result.objective, reason=result.message)
        self.solver_ = self.solver
        fit_finished(self, started)
        return self
