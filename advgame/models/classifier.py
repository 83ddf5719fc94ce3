r"""``AdversarialClassifier``: a scikit-learn classifier that optimises the loss you declare.

Training solves seed 000 Eq. (2) with the uncertainty set's regulariser (DESIGN §2):

.. math::  \min_\theta \sum_i w_i \big(\mathrm{value}(f_i(\theta)) - f_{i,y_i}(\theta)\big) + R(\theta),
           \qquad f_{ij}(\theta) = \theta \cdot \phi(x_i, j),

and prediction plays the game at the learnt potentials: the predictor's minimax distribution
``p*`` (Eq. 9) is ``predict_action_proba`` and its argmax is ``predict`` (for abstention this is
Corollary 14).
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, column_or_1d

from ..declaration import PredictionGame
from ..features import CallableFeatures, KernelFeatures, Multiclass, Thresholded
from ..solvers import (
    SurrogateObjective,
    fit_adagrad,
    fit_lbfgs,
    fit_pegasos,
    refine_cutting_plane,
)
from ..uncertainty import SoftMoments, as_uncertainty
from ._inputs import (
    check_classification_fit,
    check_iteration_params,
    check_strength,
    resolve_loss_matrix,
    validate_numeric,
)

__all__ = ["AdversarialClassifier"]

_LOSSES = ("zero_one", "ordinal", "squared", "abstain")
_SOLVERS = ("auto", "compile", "lbfgs", "subgradient", "pegasos")
#: ``certify='auto'`` refines L-BFGS when ``n_samples * n_params`` is at most this.
AUTO_CERTIFY_SIZE = 200_000
#: ``solver='auto'`` compiles the exact program when it has at most this many game rows (n k).
AUTO_COMPILE_ROWS = 2_000


class AdversarialClassifier(ClassifierMixin, BaseEstimator):
    r"""Adversarial (minimax) classifier for any loss matrix (seed 000).

    Parameters
    ----------
    loss : {'zero_one', 'ordinal', 'squared', 'abstain'} or LossMatrix or array-like
        The loss to optimise.  A matrix has one column per class in ``classes_`` order (sorted
        labels; for ordinal losses this order is the ordinal order) and may have extra rows
        (actions).  A :class:`~advgame.losses.LossMatrix` whose ``labels`` are the classes may
        list them in any order: its columns (and the actions named like them) are reordered.  ``'abstain'`` adds an abstain action costing ``alpha``.
    alpha : float, default=0.5
        Abstention cost for ``loss='abstain'``.
    features : {'multiclass', 'thresholded'} or callable, default='multiclass'
        ``phi_mc(x, y) = e_y ⊗ [x; 1]`` or ``phi_th(x, y) = [y x; 1(y<=1) .. 1(y<=k-1)]``
        (seed 000 §3.2.1), or ``phi(X, j) -> (n, p)``.  Ignored when ``kernel`` is set.
    kernel : {None, 'linear', 'poly', 'rbf'} or callable, default=None
        Kernel features by the representer theorem (seed 000 §6.2).
    gamma, degree, coef0 : kernel parameters (``gamma=None``: ``1 / n_features``).
    uncertainty : {'soft', 'exact', 'l1', 'l2', 'linf', 'group'} or UncertaintySet, default='soft'
        How closely the adversary matches the training moments; it becomes the regulariser:
        ``soft`` -> ``strength/2 ||theta||^2``, a moment norm ball of radius ``strength`` -> the
        dual norm times ``strength``, ``exact`` -> none (seed 001 Theorem 3).
    strength : float or None, default=None
        ``lam`` or ``radius``.  None means ``1 / sum(sample_weight)`` for ``soft`` (the scale
        of scikit-learn's ``C = 1``) and ``0.01`` for the norm balls.
    solver : {'auto', 'compile', 'lbfgs', 'subgradient', 'pegasos'}, default='auto'
        ``compile``: the exact LP/QP/SOCP of DESIGN §2.  ``lbfgs``: L-BFGS on the surrogate with
        the fast path for ``q*``; ``subgradient``: averaged mini-batch AdaGrad; ``pegasos``: seed
        000 Algorithm 1 in mini-batch form (kernels, ``uncertainty='soft'``).  Each first-order
        solver is followed by cutting-plane refinement over the adversaries (see ``certify``),
        which certifies the result: ``gap_`` bounds ``objective_ - optimum``
        (:func:`advgame.solvers.refine_cutting_plane`).  ``auto`` compiles up to 2,000 game rows
        (``n_samples * n_classes``) and uses ``lbfgs`` beyond.
    backend : {'auto', 'highs', 'cvxpy'}, default='auto'
        For ``compile``: HiGHS for LPs, cvxpy (Clarabel) for QPs and SOCPs.
    max_iter : int, default=1000
        L-BFGS iterations, or epochs of ``subgradient`` / ``pegasos``.
    tol : float, default=1e-6
        L-BFGS stops when an iteration lowers the objective by less than ``tol`` (relative to
        ``max(|objective|, 1)``); cutting-plane refinement stops at a certified relative gap of
        ``tol``.
    certify : {'auto', True, False}, default='auto'
        For ``lbfgs``: refine and certify by cutting planes.  ``auto`` does so when
        ``n_samples * n_params <= 200,000`` (the master program grows with both); otherwise
        ``gap_`` is ``inf`` and ``converged_`` says the result is uncertified.
    batch_size : int, default=64
        Mini-batch size of ``subgradient`` and ``pegasos``.
    random_state : int, Generator or None
        Seeds the mini-batch order (results are reproducible for a fixed seed).
    abstain_label : default=-1
        What ``predict`` returns when the minimax predictor abstains.  When it is a number and the
        classes are strings (or the reverse), ``predict`` returns an object array, so that
        ``predict(X) == abstain_label`` still finds the abstentions.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    loss_matrix_ : LossMatrix
    theta_ : ndarray
        The moment multipliers (model parameters).
    coef_, intercept_ : ndarray
        For multiclass features: ``(n_classes, n_features)`` and ``(n_classes,)``.
    dual_coef_ : ndarray of shape (n_samples, n_classes)
        For kernels: ``A`` with potentials ``K(X, X_fit) A``.
    objective_ : float
        The training objective at ``theta_``.
    gap_ : float
        Certified bound on ``objective_`` minus the optimum (0 for ``compile``).
    game_ : PredictionGame
        The declaration the parameters translate to (loss matrix, feature map, uncertainty set,
        simplex): ``game_.compile(X, y)`` gives the learning program whatever the solver was,
        ``game_.explain()`` the fast path, ``game_.game()`` the per-sample game.
    program_ : LearningProgram
        The compiled program (``solver='compile'``); ``program_.to_cvxpy()`` gives it to cvxpy.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.model_selection import GridSearchCV
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = AdversarialClassifier(loss="zero_one").fit(X, y)
    >>> search = GridSearchCV(AdversarialClassifier(), {"strength": [1e-3, 1e-2, 1e-1]}).fit(X, y)
    """

    def __init__(
        self,
        loss="zero_one",
        alpha=0.5,
        features="multiclass",
        kernel=None,
        gamma=None,
        degree=3,
        coef0=1.0,
        uncertainty="soft",
        strength=None,
        solver="auto",
        backend="auto",
        max_iter=1000,
        tol=1e-6,
        certify="auto",
        batch_size=64,
        random_state=None,
        abstain_label=-1,
    ):
        self.loss = loss
        self.alpha = alpha
        self.features = features
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.uncertainty = uncertainty
        self.strength = strength
        self.solver = solver
        self.backend = backend
        self.max_iter = max_iter
        self.tol = tol
        self.certify = certify
        self.batch_size = batch_size
        self.random_state = random_state
        self.abstain_label = abstain_label

    # ------------------------------------------------------------------------------ building
    def _loss_matrix(self, k):
        abstain = isinstance(self.loss, str) and self.loss == "abstain"
        options = {"alpha": self.alpha} if abstain else {}
        return resolve_loss_matrix(self.loss, k, _LOSSES, self.classes_, **options)

    def _feature_map(self):
        if self.kernel is not None:
            return KernelFeatures(self.kernel, self.gamma, self.degree, self.coef0)
        if callable(self.features):
            return CallableFeatures(self.features)
        if self.features == "multiclass":
            return Multiclass()
        if self.features == "thresholded":
            return Thresholded()
        raise ValueError(
            f"features must be 'multiclass', 'thresholded' or a callable; got {self.features!r}."
        )

    def _uncertainty(self, total_weight):
        if self.uncertainty == "soft" and self.strength is None:
            return SoftMoments(1.0 / total_weight)
        return as_uncertainty(self.uncertainty, self.strength)

    def _check_params(self):
        check_iteration_params(self, ("max_iter", "batch_size"))
        if self.solver not in _SOLVERS:
            raise ValueError(f"solver must be one of {_SOLVERS}; got {self.solver!r}.")
        if self.certify not in ("auto", True, False):
            raise ValueError(f"certify must be 'auto', True or False; got {self.certify!r}.")
        if self.backend not in ("auto", "highs", "cvxpy"):
            raise ValueError(f"backend must be 'auto', 'highs' or 'cvxpy'; got {self.backend!r}.")
        check_strength(self.strength, self.uncertainty)

    # ----------------------------------------------------------------------------------- fit
    def fit(self, X, y, sample_weight=None):
        """Learn ``theta`` from ``X`` (n, d) and labels ``y`` (n,), optionally weighted."""
        self._check_params()
        X, y_index, sample_weight = check_classification_fit(self, X, y, sample_weight)
        k = self.classes_.size
        self.loss_matrix_ = self._loss_matrix(k)
        uncertainty = self._uncertainty(sample_weight.sum())
        self.uncertainty_ = uncertainty
        self.game_ = PredictionGame(self.loss_matrix_, self._feature_map(), uncertainty)
        self.feature_map_ = self._feature_map().fit(X, k)
        weights = sample_weight / sample_weight.sum()
        solver = self.solver
        if solver == "auto":
            solver = "compile" if X.shape[0] * k <= AUTO_COMPILE_ROWS else "lbfgs"
        if solver == "compile":
            self.program_ = self.game_.compile(X, self.classes_[y_index], sample_weight)
            backend = self.backend
            if backend == "auto":
                backend = "highs" if self.program_.kind == "LP" else "cvxpy"
            solution = self.program_.solve(backend)
            self.theta_, self.objective_, self.gap_ = solution.theta, solution.objective, 0.0
            self.n_iter_, self.converged_ = 1, solution.solution.status
        else:
            self._fit_first_order(solver, X, y_index, weights, uncertainty)
        self.solver_ = solver
        self._set_coefficients()
        return self

    def _fit_first_order(self, solver, X, y_index, weights, uncertainty):
        """L-BFGS, averaged AdaGrad or PEGASOS, then (optionally) certification."""
        fmap = self.feature_map_
        objective = SurrogateObjective(
            self.game_.game(), fmap.bind(X), y_index, weights, uncertainty, fmap
        )
        theta0 = np.zeros(fmap.n_params)
        if solver == "lbfgs":
            escape = {"batch_size": self.batch_size, "random_state": self.random_state}
            result = fit_lbfgs(objective, theta0, self.max_iter, self.tol, escape=escape)
        elif solver == "subgradient":
            result = fit_adagrad(
                objective, theta0, self.max_iter, self.batch_size, random_state=self.random_state
            )
        else:
            if not isinstance(fmap, KernelFeatures) or not isinstance(uncertainty, SoftMoments):
                raise ValueError(
                    "solver='pegasos' is seed 000 Algorithm 1: it needs a kernel (kernel=...) and "
                    "the ridge objective of uncertainty='soft'."
                )
            gram = objective.operator.X1  # the bound kernel operator's K(X, X_fit)
            result = fit_pegasos(
                self.game_.game(),
                gram,
                y_index,
                weights,
                uncertainty.lam,
                self.max_iter,
                self.batch_size,
                self.random_state,
            )
            result.objective = float(objective(result.theta)[0])
        certify = self.certify
        if certify == "auto":
            certify = X.shape[0] * fmap.n_params <= AUTO_CERTIFY_SIZE
        n_iter = result.n_iter
        if certify:
            # warns (with the certified gap) when it cannot certify within tol
            result = refine_cutting_plane(objective, result.theta, tol=self.tol)
            n_iter += result.n_iter
        else:
            result.message = f"uncertified {solver}: {result.message}"
        self.theta_, self.objective_, self.gap_ = result.theta, result.objective, result.gap
        self.n_iter_, self.converged_ = n_iter, result.message

    def _set_coefficients(self):
        fmap = self.feature_map_
        if isinstance(fmap, Multiclass):
            self.coef_, self.intercept_ = fmap.coef(self.theta_)
        elif isinstance(fmap, KernelFeatures):
            self.dual_coef_ = self.theta_.reshape(-1, self.classes_.size)

    # ------------------------------------------------------------------------------ predict
    def _potentials(self, X):
        check_is_fitted(self)
        X = validate_numeric(self, X, reset=False)
        return self.feature_map_.bind(X).forward(self.theta_)

    def decision_function(self, X):
        """Potentials ``f_j(x) = theta . phi(x, j)``, shape ``(n_samples, n_classes)``.

        For two classes, scikit-learn's convention: ``f_1 - f_0``, shape ``(n_samples,)``.
        """
        F = self._potentials(X)
        return F[:, 1] - F[:, 0] if self.classes_.size == 2 else F

    def predict_action_proba(self, X):
        """The predictor's minimax distribution ``p*`` over actions (Eq. 9), shape ``(n, l)``.

        For ``loss='abstain'`` the last column is the abstain action.
        """
        F = self._potentials(X)
        return self.game_.game().predictor(F)

    def predict_proba(self, X):
        """``p*`` over the classes; for abstention, conditional on answering.

        With an abstain action the class part of ``p*`` is renormalised (uniform where the
        predictor always abstains); the full distribution is :meth:`predict_action_proba`.
        """
        P = self.predict_action_proba(X)[:, : self.classes_.size]
        total = P.sum(axis=1, keepdims=True)
        uniform = np.full_like(P, 1.0 / P.shape[1])
        return np.where(total > 0, P / np.where(total > 0, total, 1.0), uniform)

    def score(self, X, y, sample_weight=None):
        """Mean accuracy of :meth:`predict` on ``(X, y)``; an abstention counts as an error.

        To tune for the declared loss instead (e.g. the abstain loss), pass ``GridSearchCV`` a
        scorer that averages ``loss_matrix_`` over the predicted actions.
        """
        y = column_or_1d(y, warn=True)
        return float(np.average(self.predict(X) == y, weights=sample_weight))

    def predict(self, X):
        """The action maximising ``p*``: a class label, or ``abstain_label`` (Corollary 14)."""
        actions = np.argmax(self.predict_action_proba(X), axis=1)
        k = self.classes_.size
        if self.loss_matrix_.n_actions == k:
            return self.classes_[actions]
        out = np.empty(actions.size, dtype=object)
        answered = actions < k
        out[answered] = self.classes_[actions[answered]]
        out[~answered] = self.abstain_label
        label = np.asarray(self.abstain_label)
        if (label.dtype.kind in "biuf") != (self.classes_.dtype.kind in "biuf"):
            return out  # a common dtype would turn -1 into '-1': keep both kinds as they are
        return out.astype(np.result_type(self.classes_, label))
