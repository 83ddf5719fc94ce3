r"""``AdversarialClassifier``: a scikit-learn classifier that optimises the loss you declare.

Training solves Fathony et al. (2018a), Eq. (2), with the uncertainty set's regulariser (the
design notes, docs/design.md, "Uncertainty sets are regularisers"):

.. math::  \min_\theta \sum_i w_i \big(\mathrm{value}(f_i(\theta)) - f_{i,y_i}(\theta)\big) + R(\theta),
           \qquad f_{ij}(\theta) = \theta \cdot \phi(x_i, j),

and prediction plays the game at the learnt potentials: the predictor's minimax distribution
``p*`` (Eq. 9) is ``predict_action_proba`` and its argmax is ``predict`` (for abstention this is
Corollary 14).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, column_or_1d

from .._estimator.base import (
    ProgramNotPickled,
    fit_finished,
    fit_started,
    progress,
    record_convergence,
)
from .._estimator.inputs import (
    TrainingRows,
    action_labels,
    check_classification_fit,
    check_iteration_params,
    check_strength,
    label_kind,
    order_classes,
    ordered_categories,
    resolve_loss_matrix,
    validate_numeric,
)
from .._validation import check_feature_scale, unit_weights
from ..declaration import LOSS_ALIASES, PredictionGame
from ..features import CallableFeatures, KernelFeatures, Multiclass, Thresholded
from ..losses import LossMatrix, as_loss_matrix
from ..solvers import SurrogateObjective
from ..solvers._progress import Progress
from ..solvers.auto import AUTO_CERTIFY_SIZE as AUTO_CERTIFY_SIZE  # its home: solvers.auto
from ..solvers.auto import AUTO_COMPILE_ROWS as AUTO_COMPILE_ROWS
from ..solvers.auto import describe_auto_choice, fit_first_order
from ..solvers.dual_ascent import rescaled_dual
from ..uncertainty import SoftMoments, as_uncertainty

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..uncertainty import UncertaintySet

__all__ = ["AdversarialClassifier", "DEFAULT_STRENGTH"]

#: ``lam`` of the soft moment set when ``strength`` is None: a constant, so the default does
#: not change when rows are duplicated or the weights rescaled (``advgame bench defaults``,
#: docs/results/defaults.md; the estimator's docstring gives the measurements).
DEFAULT_STRENGTH = 3e-4

_LOSSES = ("zero_one", "ordinal", "squared", "abstain")
#: Loss structures whose numbers depend on the order of the classes.
_ORDINAL_KINDS = ("ordinal", "squared")
_SOLVERS = ("auto", "compile", "smoothing", "lbfgs", "subgradient", "pegasos")


class AdversarialClassifier(ProgramNotPickled, ClassifierMixin, BaseEstimator):
    r"""Adversarial (minimax) classifier for any loss matrix (Fathony et al. 2018a).

    Parameters
    ----------
    loss : {'zero_one', 'ordinal', 'squared', 'abstain'} or LossMatrix or array-like
        The loss to optimise.  A matrix has one column per class in ``classes_`` order (see
        ``classes_order``; for ordinal losses this order is the ordinal order) and may have extra
        rows (actions).  A :class:`~advgame.losses.LossMatrix` given ``labels=`` declares the
        classes: ``classes_`` is its labels in its order (an ordinal matrix keeps its ordinal
        structure), ``y`` may hold any subset of them (a cross-validation fold missing a rare
        class: the absent classes have no rows, and ``predict_proba`` keeps their columns), and
        a label of ``y`` it does not declare raises ``ValueError``.  Its actions (rows) named
        like labels predict those classes, other named actions are returned by ``predict``
        under their names, and unnamed extra rows (or one named ``'abstain'``) return
        ``abstain_label_``.  ``'abstain'`` adds an abstain action costing ``alpha``.
    alpha : float, default=0.5
        Abstention cost for ``loss='abstain'``.
    features : {'multiclass', 'thresholded'} or callable, default='multiclass'
        ``phi_mc(x, y) = e_y ⊗ [x; 1]`` or ``phi_th(x, y) = [y x; 1(y<=1) .. 1(y<=k-1)]``
        (Fathony et al. 2018a, §3.2.1), or ``phi(X, j) -> (n, p)``.  Ignored when ``kernel`` is set.
    kernel : {None, 'linear', 'poly', 'rbf'} or callable, default=None
        Kernel features by the representer theorem (Fathony et al. 2018a, §6.2).
    gamma, degree, coef0 : kernel parameters (``gamma=None``: ``1 / n_features``).
    uncertainty : {'soft', 'exact', 'l1', 'l2', 'linf', 'group'} or UncertaintySet, default='soft'
        How closely the adversary matches the training moments; it becomes the regulariser:
        ``soft`` -> ``strength/2 ||theta||^2``, a moment norm ball of radius ``strength`` -> the
        dual norm times ``strength``, ``exact`` -> none (Farnia and Tse 2016, Theorem 3).
    strength : float or None, default=None
        ``lam`` or ``radius``.  None means :data:`DEFAULT_STRENGTH` ``= 3e-4`` for ``soft`` and
        ``0.01`` for the norm balls: constants, which do not change when rows are duplicated
        or the weights rescaled (until 2026-11-28 ``soft`` defaulted to ``1 / sum(sample_weight)``,
        the scale of scikit-learn's ``C = 1``).  Chosen by measurement (``advgame bench
        defaults``, docs/results/defaults.md), in points of test loss against
        ``LogisticRegression()``.  Part 1 (11 multiclass and ordinal sets, medians of 3
        splits): no candidate (``0.3/n`` to ``10/n``, or ``1e-4`` to ``1e-3``) is within a
        point of logistic regression on every set, and ``3e-4`` is at least as good as ``1/n``
        on the median and on the worst set for all three losses.  Part 3 (the sets where they
        missed most, 10-50 splits, strengths 1e-6 to 1): with ``3e-4`` the ordinal loss is
        ahead on the median set (+2.16 points) and at most 0.25 behind on any (``1/n``: +0.57,
        -0.23); the abstain loss -0.02 on the median set (``1/n``: -1.37), and no strength
        comes within a point on wine (best -1.93); the zero-one loss -0.97 / -1.90 against
        ``1/n``'s -0.69 / -5.87 (machine CPU's 146 rows make ``1/n`` 6.8e-3, where that set
        wants 1e-6), while even the best strength per set in hindsight only reaches -0.04 /
        -1.00.  Gaussian-kernel fits (``gamma = 1/d``, zero-one, medians of 3 splits):
        ``3e-4`` errs less than ``1/n`` on iris, breast cancer, vehicle (18.9% against 26.4%)
        and segment, more on wine, digits and optdigits (by 0.1-1.9 points).  The default fit
        takes 0.67-0.76x the CPU time of ``LogisticRegression()`` on optdigits, satimage,
        segment and 20,000 synthetic rows and about the same on digits (0.92x in that run,
        0.90-1.01x interleaved with the code before; medians of 3 splits of 5 interleaved
        fits, docs/results/defaults.md, eighth run).  A per-set choice is what helps most:
        :class:`advgame.AdversarialClassifierCV` chooses it by cross-validation.
    solver : {'auto', 'compile', 'smoothing', 'lbfgs', 'subgradient', 'pegasos'}, default='auto'
        ``compile``: the exact LP/QP/SOCP of the learning problem (docs/design.md).  ``smoothing``: L-BFGS (then Newton steps)
        on the surrogate with the game smoothed (and a norm-ball regulariser by its Moreau
        envelope), the smoothing decreased until a dual point built from the smoothed
        adversaries certifies a relative gap of ``tol``, finished by cutting planes when that
        stalls and ``n_samples * n_params <= 200,000`` (:func:`advgame.solvers.fit_smoothed`; explicit features, any
        uncertainty set but ``exact``, zero-one or a loss whose vertex table is small).  For
        the zero-one and abstain losses with soft moments and multiclass features it starts with dual
        coordinate ascent (:func:`advgame.solvers.fit_linear_dual`, certified the same way),
        which hands over to the smoothing steps from its point where many rows keep a loss
        (then ``n_iter_`` counts its epochs and the steps).  For
        ``kernel=...`` it is :func:`advgame.solvers.fit_kernel` on the exact Gram matrix (no
        low-rank approximation): dual coordinate ascent for the zero-one and abstain losses
        with soft moments, Newton steps otherwise, certified by the RKHS dual bound, for ``'soft'``
        and ``'l2'`` (the RKHS norm; the other balls have no RKHS meaning and raise
        ``ValueError``).
        ``lbfgs``: L-BFGS on the non-smooth surrogate with the fast path for ``q*``;
        ``subgradient``: averaged mini-batch AdaGrad; ``pegasos``: Fathony et al. 2018a, Algorithm 1, in
        mini-batch form (kernels, ``uncertainty='soft'``).  These three are certified afterwards
        (see ``certify``): ``gap_`` bounds ``objective_ - optimum``.  ``auto`` chooses by
        measurement (``advgame bench auto``, docs/results/auto.md: at most 1.2x the fastest
        certified solver on 135 problems; :func:`advgame.solvers.auto.describe_auto_choice`
        states the rule for a problem, :data:`advgame.solvers.auto.AUTO_RULE` the whole of it):
        ``compile`` for ``uncertainty='exact'`` (the dual bound needs a strictly feasible
        moment set), ``smoothing`` for soft moments and kernels (``lbfgs`` on an RKHS ball of
        radius below 0.1); on the l1 and linf balls ``compile`` below 3 game rows
        (``n_samples * n_classes``) per parameter and ``lbfgs`` from 3, up to 5,000 game rows;
        on the l2 and group balls ``smoothing`` from radius 0.01 (``compile`` below it, and for
        a general loss with few rows per parameter) up to 5,000 game rows; beyond, ``smoothing``
        (``lbfgs`` on l2 and group balls from radius 0.01); where no smoothing applies,
        ``compile`` up to 2,000 game rows and ``lbfgs`` beyond.
    backend : {'auto', 'highs', 'cvxpy'}, default='auto'
        For ``compile``: HiGHS for LPs, cvxpy (Clarabel) for QPs and SOCPs.
    max_iter : int, default=1000
        Steps of ``smoothing`` (over all its stages; its dual ascent has as many epochs of its
        own), L-BFGS iterations, or epochs of ``subgradient`` / ``pegasos``.
    tol : float, default=1e-3
        The certified relative gap: ``smoothing`` and cutting-plane refinement stop when
        ``gap_ <= tol * max(1, |objective_|)``; L-BFGS itself stops when an iteration lowers the
        objective by less than ``tol`` (relative to ``max(|objective|, 1)``).  The default is
        chosen by measurement (``advgame bench defaults``, docs/results/defaults.md; medians of
        3 splits, CPU time, one BLAS thread): on digits, segment, satimage and optdigits the
        default fit at ``1e-3`` takes 0.67-0.92x ``LogisticRegression()``'s time against
        1.5-2.4x at ``1e-4`` (eighth run; on the faster host of the ninth run digits 1.22x,
        the others 0.71-1.00x), with test errors within 0.3 points of those at ``1e-4``
        (``1e-4`` is scikit-learn's gradient tolerance, not a gap); pass ``tol=1e-4`` or below
        for an objective certified closer to the optimum.
    certify : {'auto', True, False}, default='auto'
        For ``lbfgs``, ``subgradient`` and ``pegasos``: ``True`` refines and certifies by
        cutting planes (:func:`advgame.solvers.refine_cutting_plane`); ``auto`` does so when
        ``n_samples * n_params <= 200,000`` (the master program grows with both) and otherwise
        finishes with the ``smoothing`` solver from the result (where it applies; if it does
        not, ``gap_`` is ``inf``, ``converged_`` says why and a ``ConvergenceWarning`` is
        raised).  ``False``: no certification (``gap_ = inf``).  ``converged_ == 'certified'``
        exactly when ``gap_ <= tol * max(1, |objective_|)``.
    batch_size : int, default=64
        Mini-batch size of ``subgradient`` and ``pegasos``.
    random_state : int, Generator or None
        Seeds the mini-batch order (results are reproducible for a fixed seed).
    abstain_label : int, float, str or None, default=None
        What ``predict`` returns when the minimax predictor abstains (an unnamed action beyond
        the classes, or the action named ``'abstain'``): the shorthand for the abstain loss.
        None means ``-1`` for numeric classes (``min(classes_) - 1`` when ``-1`` is a class)
        and ``'abstain'`` for string classes (a class named ``'abstain'`` asks for an explicit
        ``abstain_label``).  Any number or string that is not a class (``fit`` raises
        ``ValueError`` for a class: an abstention would be indistinguishable from it); one of
        the other kind (``'refer'`` for numeric classes) makes ``predict`` return an ``object``
        array.  The value used is ``abstain_label_``.
    classes_order : array-like of labels or None, default=None
        The order of ``classes_``, e.g. ``['low', 'mid', 'high']``: it must list every label of
        ``y`` (every declared label of a loss matrix with ``labels=``), and other labels absent
        from ``y`` are skipped.  For ordinal losses (``'ordinal'``, ``'squared'``, an ordinal matrix) and
        ``features='thresholded'`` it is the ordinal order.  None takes, in turn,
        the labels of a :class:`~advgame.losses.LossMatrix` that names the classes,
        the categories of ``y`` when ``y`` is an ordered pandas ``Categorical`` (or categorical
        ``Series``), and otherwise the sorted labels.  Sorted string labels are no ordinal
        order, so an ordinal loss with three or more string classes and no order raises
        ``ValueError``; numeric labels keep their numeric order.
    verbose : int, default=0
        Progress on stderr: 1 prints the stages of ``fit`` and what it found (time, objective,
        certified gap), 2 also its iterations.
    warm_start : bool, default=False
        Start ``fit`` from the previous fit's solution (scikit-learn's ``warm_start``), as on a
        path of strengths (:class:`advgame.AdversarialClassifierCV`): the smoothing solver (the
        default for soft moments and kernels) resumes from ``theta_`` and, for its linear dual
        ascent, from the dual point ``dual_`` (:func:`advgame.solvers.auto.fit_first_order`).  A
        previous fit of other shapes (other classes, features or rows), and the other
        solvers, start cold.  The certificate is that of a cold fit: the same certified
        optimum within ``tol``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted labels, the labels a loss matrix declares, or the order given by
        ``classes_order`` (see there).
    loss_matrix_ : LossMatrix
    actions_ : ndarray of shape (l,)
        What ``predict`` returns for each of the ``l`` actions (rows of ``loss_matrix_``): a class, an
        action's name or ``abstain_label_``; its dtype is ``predict``'s.
    abstain_label_ : int, float, str or None
        What ``predict`` returns for an abstention; None when no action abstains.
    theta_ : ndarray
        The moment multipliers (model parameters).
    coef_, intercept_ : ndarray
        For multiclass features: ``(n_classes, n_features)`` and ``(n_classes,)``.
    dual_coef_ : ndarray of shape (n_distinct, n_classes)
        For kernels: ``A`` with potentials ``K(X, X_fit) A``, one row per distinct training
        row ``X_fit = feature_map_.X_fit_`` (see ``fit``).
    objective_ : float
        The training objective at ``theta_``.
    gap_ : float
        Certified bound on ``objective_`` minus the optimum (0 for ``compile``).
    converged_ : {'optimal', 'certified', 'uncertified'}
        ``'optimal'`` for ``compile``, ``'certified'`` exactly when ``gap_ <= tol * max(1,
        |objective_|)``, ``'uncertified'`` otherwise.
    stop_reason_ : str
        Why the solver stopped, in its words (the program's status for ``compile``).
    dual_ : ndarray of shape (n_distinct, n_classes) or None
        The dual point ``Q`` (the adversary's distribution for each distinct training row) when
        the fit ended in a dual ascent, the start of a ``warm_start`` fit; None otherwise.
    game_ : PredictionGame
        The declaration the parameters translate to (loss matrix, feature map, uncertainty set,
        simplex): ``game_.compile(X, y)`` gives the learning program whatever the solver was,
        ``game_.explain()`` the fast path, ``game_.game()`` the per-sample game.
    program_ : LearningProgram
        The compiled program (``solver='compile'``) of the distinct training rows, each weighted
        by its copies (the canonical form ``fit`` uses); ``program_.to_cvxpy()`` gives it to
        cvxpy.  Not pickled (it holds the training data): ``game_.compile(X, y)`` builds the
        program of the rows as given, with the same optimum.

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
        loss: str | LossMatrix | ArrayLike = "zero_one",
        alpha: float = 0.5,
        features: str | Callable[[np.ndarray, int], ArrayLike] = "multiclass",
        kernel: str | Callable[..., float] | None = None,
        gamma: float | None = None,
        degree: int = 3,
        coef0: float = 1.0,
        uncertainty: str | UncertaintySet = "soft",
        strength: float | None = None,
        solver: str = "auto",
        backend: str = "auto",
        max_iter: int = 1000,
        tol: float = 1e-3,
        certify: str | bool = "auto",
        batch_size: int = 64,
        random_state: int | np.random.Generator | None = None,
        verbose: int = 0,
        abstain_label: int | float | str | None = None,
        classes_order: ArrayLike | None = None,
        warm_start: bool = False,
    ) -> None:
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
        self.verbose = verbose
        self.abstain_label = abstain_label
        self.classes_order = classes_order
        self.warm_start = warm_start

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

    def _uncertainty(self):
        strength = self._fit_strength()
        if self.uncertainty == "soft" and strength is None:
            return SoftMoments(DEFAULT_STRENGTH)
        return as_uncertainty(self.uncertainty, strength)

    def _fit_strength(self):
        """The strength ``fit`` uses: ``strength`` (the one chosen by cross-validation in
        :class:`advgame.AdversarialClassifierCV`)."""
        return self.strength

    def _check_params(self):
        check_iteration_params(self, ("max_iter", "batch_size"))
        if self.solver not in _SOLVERS:
            raise ValueError(f"solver must be one of {_SOLVERS}; got {self.solver!r}.")
        if self.certify not in ("auto", True, False):
            raise ValueError(f"certify must be 'auto', True or False; got {self.certify!r}.")
        if self.backend not in ("auto", "highs", "cvxpy"):
            raise ValueError(f"backend must be 'auto', 'highs' or 'cvxpy'; got {self.backend!r}.")
        check_strength(self._fit_strength(), self.uncertainty)
        if not isinstance(self.warm_start, (bool, np.bool_)):
            raise ValueError(f"warm_start must be True or False; got {self.warm_start!r}.")

    # -------------------------------------------------------------------------------- labels
    def _order_classes(self, y_index, categories):
        """Put ``classes_`` (sorted, or declared by the loss matrix, by
        ``check_classification_fit``) in the declared order and return ``y_index`` re-indexed
        to it (see ``classes_order``)."""
        if self.classes_order is not None:
            return order_classes(self, y_index, self.classes_order)
        if self._labels_declared():
            return y_index  # the loss matrix's labels, in its order
        if categories is not None:
            return order_classes(self, y_index, categories, name="the categories of y")
        reason = self._needs_order()
        if reason and self.classes_.size >= 3 and label_kind(self.classes_) != "numeric":
            raise ValueError(
                f"{reason} needs the ordinal order of the classes, but y has non-numeric labels "
                f"{self.classes_.tolist()}, whose sorted (alphabetical) order is no ordinal "
                "order. Pass classes_order=[...] listing the classes from lowest to highest, or "
                "give y as an ordered pandas Categorical."
            )
        return y_index

    def _labels_declared(self):
        """Whether ``classes_`` are the labels of the loss matrix (they name the classes)."""
        L = self.loss
        return isinstance(L, LossMatrix) and self.classes_.tolist() == list(L.labels)

    def _needs_order(self):
        """What makes the model depend on the order of the classes (for the error), or None."""
        if self.kernel is None and isinstance(self.features, str):
            if self.features == "thresholded":
                return "features='thresholded'"
        if isinstance(self.loss, str):
            if LOSS_ALIASES.get(self.loss, self.loss) in _ORDINAL_KINDS:
                return f"loss={self.loss!r}"
            return None
        try:
            L = as_loss_matrix(self.loss)
        except (TypeError, ValueError):
            return None  # resolve_loss_matrix reports it
        if L.structure.kind in _ORDINAL_KINDS:
            return f"an {L.structure.kind} loss matrix"
        return None

    def _declared_loss(self):
        """The loss matrix of ``game_``: labelled by the classes when ``classes_`` is not in
        sorted order (``classes_order``, an ordered categorical), so that ``game_.compile(X, y)``
        takes the classes in ``classes_`` order (:func:`advgame.declaration.classes_of`)."""
        L = self.loss_matrix_
        if np.array_equal(self.classes_, np.unique(self.classes_)):
            return L
        return LossMatrix(L.matrix, labels=self.classes_.tolist(), actions=L.actions)

    # ----------------------------------------------------------------------------------- fit
    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> AdversarialClassifier:
        """Learn ``theta`` from ``X`` (n, d) and labels ``y`` (n,), optionally weighted.

        Integer ``sample_weight`` equals repeated rows: every solver fits the weighted data in
        one canonical form (each distinct row ``(x, y)`` once with the sum of its weights, zero
        weights dropped, a fixed order; :func:`advgame._estimator.inputs.distinct_rows`; the
        compiled program keeps the given rows where zero weights would leave a class without
        any), so weights and repeats in any order are one computation and one model, whatever
        tolerance the solver stops at.
        """
        started = fit_started(self, X)
        self._check_params()
        self._fit_rows(self._training_rows(X, y, sample_weight))
        fit_finished(self, started)
        return self

    def _training_rows(self, X, y, sample_weight):
        """Check ``X``, ``y`` and the weights, set ``classes_``, ``loss_matrix_``, ``actions_``
        and ``abstain_label_``, and return the rows :meth:`_fit_rows` fits
        (:class:`advgame._estimator.inputs.TrainingRows`): what depends on the data and not on
        the strength, computed once per fold by a path of strengths
        (:func:`advgame.models.classifier_cv.fold_path`)."""
        categories = ordered_categories(y)  # before validation turns y into a plain array
        declared = self.loss if isinstance(self.loss, LossMatrix) else None
        X, y_index, sample_weight = check_classification_fit(self, X, y, sample_weight, declared)
        check_feature_scale(X)
        y_index = self._order_classes(y_index, categories)
        self.loss_matrix_ = self._loss_matrix(self.classes_.size)
        self.actions_, self.abstain_label_ = action_labels(
            self.loss_matrix_, self.classes_, self.abstain_label
        )
        return TrainingRows((X, y_index, sample_weight), self.classes_.size)

    def _fit_rows(self, rows):
        """Fit ``rows`` (:meth:`_training_rows`) at the estimator's strength."""
        k = self.classes_.size
        uncertainty = self._uncertainty()
        previous = getattr(self, "uncertainty_", None)  # of the fit a warm start resumes
        self.uncertainty_ = uncertainty
        self.game_ = PredictionGame(self._declared_loss(), self._feature_map(), uncertainty)
        solver = self.solver
        X, y_index, sample_weight = rows.distinct
        if solver == "auto":
            fmap = rows.feature_map(self._feature_map)
            self.solver_reason_ = describe_auto_choice(
                self.game_.game(), uncertainty, fmap, rows.program[0].shape[0]
            )
            solver = self.solver_reason_.split(":", 1)[0]
            progress(self, f"solver='auto' -> {self.solver_reason_}")
        else:
            self.solver_reason_ = f"{solver}: given by solver={solver!r}"
        n_rows = rows.program[0].shape[0] if solver == "compile" else X.shape[0]
        progress(self, f"solver {solver!r}: {n_rows} samples x {k} classes, {uncertainty!r}")
        if solver == "compile":
            X, y_index, sample_weight = rows.program
            self.feature_map_ = self._feature_map().fit(X, k)
            self.program_ = self.game_.compile(X, self.classes_[y_index], sample_weight)
            backend = self.backend
            if backend == "auto":
                backend = "highs" if self.program_.kind == "LP" else "cvxpy"
            solution = self.program_.solve(backend)
            self.theta_, self.objective_, self.n_iter_ = solution.theta, solution.objective, 1
            self.dual_ = None
            record_convergence(
                self, 0.0, self.tol, solution.objective, exact=True, reason=solution.solution.status
            )
        else:
            fmap = self.feature_map_ = rows.feature_map(self._feature_map)
            objective = SurrogateObjective(
                self.game_.game(),
                rows.operator(self._feature_map),
                y_index,
                unit_weights(sample_weight),
                uncertainty,
                fmap,
                memo=rows.memo,
            )
            report = Progress(lambda line: progress(self, line), self.verbose)
            theta0, dual0 = self._warm_point(solver, fmap.n_params, y_index, k, previous)
            result, self.n_iter_ = fit_first_order(
                objective,
                solver,
                self.certify,
                self.tol,
                self.max_iter,
                self.batch_size,
                self.random_state,
                report,
                theta0,
                dual0,
            )
            self.theta_, self.objective_, self.dual_ = result.theta, result.objective, result.dual
            record_convergence(self, result.gap, self.tol, result.objective, reason=result.message)
        self.solver_ = solver
        self._set_coefficients()

    def _warm_point(self, solver, n_params, y_index, k, previous):
        """``(theta0, dual0)`` of the previous fit for a ``warm_start`` fit of the smoothing
        solver, ``(None, None)`` for a cold fit: ``theta_`` when it has ``n_params`` entries, and
        ``dual_`` when it is one row per distinct row by the ``k`` classes, moved to this fit's
        strength (:func:`~advgame.solvers.dual_ascent.rescaled_dual`, soft moments: the ascent
        then starts at the previous parameters)."""
        theta = getattr(self, "theta_", None)
        if not self.warm_start or solver != "smoothing" or theta is None:
            return None, None
        if theta.shape != (n_params,):
            return None, None
        dual = getattr(self, "dual_", None)
        if dual is None or dual.shape != (y_index.size, k):
            return theta, None
        lam, previous_lam = getattr(self.uncertainty_, "lam", None), getattr(previous, "lam", None)
        if lam is None or not previous_lam:
            return theta, dual
        return theta, rescaled_dual(dual, y_index, lam / previous_lam)

    def _path_point(self):
        """The fitted parameters where they mean the same on other rows (explicit features),
        for the refit of :class:`advgame.AdversarialClassifierCV` to start from their mean over
        the folds; None for kernel features (one coefficient per row fitted on)."""
        return None if isinstance(self.feature_map_, KernelFeatures) else self.theta_

    def _set_coefficients(self):
        fmap = self.feature_map_
        if isinstance(fmap, Multiclass):
            self.coef_, self.intercept_ = fmap.coef(self.theta_)
        elif isinstance(fmap, KernelFeatures):
            self.dual_coef_ = self.theta_.reshape(-1, self.classes_.size)

    # ------------------------------------------------------------------------------ predict
    def _potentials(self, X):
        check_is_fitted(self)
        X = check_feature_scale(validate_numeric(self, X, reset=False))
        return self.feature_map_.bind(X).forward(self.theta_)

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """Potentials ``f_j(x) = theta . phi(x, j)``, shape ``(n_samples, n_classes)``.

        For two classes, scikit-learn's convention: ``f_1 - f_0``, shape ``(n_samples,)``.
        """
        F = self._potentials(X)
        return F[:, 1] - F[:, 0] if self.classes_.size == 2 else F

    def predict_action_proba(self, X: ArrayLike) -> np.ndarray:
        """The predictor's minimax distribution ``p*`` over actions (Eq. 9), shape ``(n, l)``.

        For ``loss='abstain'`` the last column is the abstain action.
        """
        F = self._potentials(X)
        return self.game_.game().predictor(F)

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """``p*`` over the classes (all of ``classes_``, in its order); for abstention and
        actions that are no class, conditional on answering.

        Column ``j`` is the probability of the actions that predict ``classes_[j]``, renormalised
        over the actions that predict a class (uniform where the predictor never does; a
        declared class that no action predicts has probability 0).  The full distribution is
        :meth:`predict_action_proba`.
        """
        P = self.predict_action_proba(X)  # checks that the model is fitted
        P = P @ (self.actions_[:, None] == self.classes_[None, :])  # actions -> classes
        total = P.sum(axis=1, keepdims=True)
        uniform = np.full_like(P, 1.0 / P.shape[1])
        return np.where(total > 0, P / np.where(total > 0, total, 1.0), uniform)

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> float:
        """Mean accuracy of :meth:`predict` on ``(X, y)``; an abstention counts as an error.

        This is scikit-learn's convention for classifiers, whatever ``loss`` declares.  To
        score (or tune) with the declared loss instead, e.g. the abstain or ordinal loss, use
        :func:`advgame.metrics.make_loss_scorer`: ``make_loss_scorer()(clf, X, y)`` is minus the
        mean of ``loss_matrix_`` over the predicted actions, and
        ``GridSearchCV(clf, grid, scoring=make_loss_scorer())`` selects the smallest loss.
        """
        y = column_or_1d(y, warn=True)
        return float(np.average(self.predict(X) == y, weights=sample_weight))

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The action maximising ``p*`` (Corollary 14 for abstention), as ``actions_`` names it:
        a class label, the action's own name, or ``abstain_label_``.

        The output's dtype is that of ``classes_`` when every action is a class, a common
        numeric or string dtype when the other actions' names are of the classes' kind, and
        ``object`` when they mix (``'refer'`` among numeric classes): scikit-learn's
        classification metrics refuse such a mix, :meth:`score` and
        :func:`advgame.metrics.make_loss_scorer` take it.
        """
        chosen = np.argmax(self.predict_action_proba(X), axis=1)  # checks that it is fitted
        return self.actions_[chosen]
