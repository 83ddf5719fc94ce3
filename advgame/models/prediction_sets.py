r"""Generalised prediction sets: set-valued classification with outlier detection (Wang and Qiao
2022).

For every class ``k`` separately, Eq. (6) of Wang and Qiao (2022) learns ``f_k(x) = w . Phi(x) -
rho`` from the class's training points against ``m`` unlabelled points, through its dual QP, Eq.
(7), restated in the design notes (docs/design.md, Appendix C); given ``w``, the optimal ``rho``
has a closed form.  The prediction set of ``x`` is ``{k : f_k(x) >= tau_k}``: several classes mean
ambiguity, none flags an outlier (Wang and Qiao 2022, §3.3).  By default the class thresholds
``tau_k`` are calibrated split-conformally (Wang and Qiao 2022, App. A.3 and Proposition 6, after
Lei et al. 2015): the QP is fitted on part of each class's points and ``tau_k`` is an order
statistic of ``f_k`` on the held-out rest, so that a new class-k point is accepted with
probability at least ``1 - γ``.

This module holds the estimator, its calibration and its tuning.  The solvers (the dual QP's
interior-point method :func:`solve_class_dual` or a :class:`~advgame.compile.Program` for HiGHS or
cvxpy, the offset, and kernel feature selection, Wang and Qiao 2022, §3.3, Eq. 8-10, Algorithm 1)
live in :mod:`advgame.solvers.prediction_sets`; their public names are re-exported here.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from joblib import Parallel, delayed
from scipy.stats import binom
from sklearn.base import BaseEstimator, clone
from sklearn.preprocessing import StandardScaler
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array, check_is_fitted

from .._estimator.base import fit_finished, fit_started, progress, record_convergence
from .._estimator.inputs import check_classification_fit, check_iteration_params, validate_numeric
from ..features import KernelFeatures
from ..metrics import prediction_set_metrics
from ..solvers.prediction_sets import (
    C_FACTORS,
    IPM_TOL,
    MEDIAN_HEURISTIC_MAX_POINTS,  # noqa: F401 (re-exported: the median heuristic's bound)
    TUNING_FRACTION,
    WEIGHTED_KERNELS,
    WIDTH_FACTORS,
    _check_fraction,
    class_dual_program,
    feature_selection_objective,
    feature_weight_step,
    fit_class,
    held_out_acceptance,
    median_heuristic_gamma,
    offset_from_scores,
    recover_rho,
    solve_class_dual,
    tuning_split,
    weighted_kernel_gradient,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


__all__ = [
    "GeneralizedPredictionSet",
    "calibration_size",
    "class_dual_program",
    "conformal_rank",
    "conformal_threshold",
    "error_rate_curve",
    "feature_selection_objective",
    "feature_weight_step",
    "held_out_acceptance",
    "median_heuristic_gamma",
    "offset_from_scores",
    "recover_rho",
    "solve_class_dual",
    "tuning_split",
    "weighted_kernel_gradient",
]


_BACKENDS = ("auto", "ipm", "highs", "cvxpy")
#: ``feature_penalty='auto'`` runs the selection with each of these l1 weights ``C_2`` (Eq. 9, whose
#: other terms are of order one at ``C = 1 / m``); the tuning then picks among the results.
AUTO_FEATURE_PENALTIES = (0.003, 0.01, 0.03)


def conformal_rank(n: int, gamma: float, confidence: float | None = None) -> int:
    r"""How many calibration scores may fall below the class threshold (Wang and Qiao 2022, App. A.3).

    The threshold is the ``j``-th smallest of ``n`` calibration scores.  For a new point
    exchangeable with them, ``P(f(X) < τ_j) <= j / (n + 1)`` marginally (Lei et al. 2015;
    Wang and Qiao 2022, Proposition 6), so ``j = floor(γ (n + 1))`` gives coverage ``>= 1 - γ``.

    With ``confidence = 1 - δ`` the guarantee is tightened, in the spirit of Theorem 1, to hold
    for the fitted threshold itself with probability ``>= 1 - δ`` over the calibration sample:
    for continuous scores the non-coverage of ``τ_j`` is ``F(τ_j) ~ Beta(j, n + 1 - j)``, and
    ``F(τ_j) > γ`` exactly when fewer than ``j`` of the ``n`` scores fall below the
    ``γ``-quantile, so ``P(F(τ_j) > γ) = P(Binomial(n, γ) <= j - 1)``; ``j`` is the largest rank
    with that probability ``<= δ``.  Unlike Theorem 1's ``ε = r(ζ) / sqrt(n_k)``, this involves no
    unknown constant.

    Parameters
    ----------
    n : int
        Number of calibration scores.
    gamma : float
        The class error rate ``γ`` in (0, 1).
    confidence : float in (0, 1) or None
        None for the marginal guarantee.

    Returns
    -------
    int
        ``j`` in ``0..n``; ``0`` means no finite threshold keeps the guarantee.
    """
    if confidence is None:
        return int(np.floor(gamma * (n + 1)))
    below = binom.cdf(np.arange(n), n, gamma)  # below[j - 1] = P(Binomial(n, γ) <= j - 1)
    return int(np.count_nonzero(below <= 1 - confidence))


def conformal_threshold(scores: np.ndarray, gamma: float, confidence: float | None = None) -> float:
    r"""Split-conformal class threshold (Wang and Qiao 2022, App. A.3, Proposition 6; Lei et al. 2015).

    The ``j``-th smallest calibration score with ``j = conformal_rank(n, γ, confidence)``
    (:func:`conformal_rank`): a new class point is accepted (``f_k(x) >= τ``) with probability
    at least ``1 - γ``, marginally, or with probability ``>= confidence`` over the calibration
    sample when ``confidence`` is given.

    Parameters
    ----------
    scores : ndarray of shape (n,)
        Scores of the held-out class points.
    gamma : float
        The class error rate ``γ`` in (0, 1).
    confidence : float in (0, 1) or None

    Returns
    -------
    float
        ``-inf`` (accept everything) when ``j = 0``, i.e. too few calibration points; a warning
        says so.
    """
    rank = conformal_rank(scores.size, gamma, confidence)
    if rank == 0:
        needed = (
            int(np.ceil(1 / gamma)) - 1
            if confidence is None
            else int(np.ceil(np.log(1 - confidence) / np.log1p(-gamma)))
        )
        warnings.warn(
            f"{scores.size} calibration points are too few for error_rate={gamma}"
            + ("" if confidence is None else f" at coverage_confidence={confidence}")
            + f": the class threshold is -inf (every point is accepted); at least {needed} "
            "are needed.",
            UserWarning,
            stacklevel=2,
        )
        return -np.inf
    return float(np.partition(scores, rank - 1)[rank - 1])


def _check_unlabeled(X_unlabeled, n_features):
    """``X_unlabeled`` as a float64 ``(m, n_features)`` array of finite numbers, ``m >= 1``, or None.

    0 rows is refused rather than read as None: an empty array is more likely a filtering mistake
    than a request to fit on the labelled points.
    """
    if X_unlabeled is None:
        return None
    expected = (
        f"an array of shape (n_unlabeled_samples, {n_features}) with n_unlabeled_samples >= 1"
    )
    try:
        array = check_array(
            X_unlabeled,
            dtype=np.float64,
            input_name="X_unlabeled",
            ensure_2d=False,
            ensure_min_samples=0,
            ensure_min_features=0,
        )
    except (TypeError, ValueError) as exc:
        raise ValueError(f"X_unlabeled must be None or {expected}; {exc}") from None
    if array.ndim != 2:
        raise ValueError(
            f"X_unlabeled must be None or {expected}; got an array with shape {array.shape}."
        )
    if array.shape[0] == 0:
        raise ValueError(
            f"X_unlabeled has 0 rows (shape {array.shape}); expected None (fit without "
            f"unlabelled points) or {expected}."
        )
    if array.shape[1] != n_features:
        raise ValueError(
            f"X_unlabeled has {array.shape[1]} features but X has {n_features}; expected "
            f"{expected}."
        )
    return array


def calibration_size(n: int, fraction: float) -> int:
    """Points of an ``n``-point class held out for its conformal threshold: ``floor(fraction n)``
    clipped to ``1 .. n - 1`` (so both parts are non-empty; ``n >= 2``)."""
    return min(max(int(np.floor(fraction * n)), 1), n - 1)


class GeneralizedPredictionSet(BaseEstimator):
    r"""Generalised prediction sets: one acceptance region per class, outliers rejected.

    Each class ``k`` gets ``f_k(x) = sum_i a_i K(d_k∘x_i, d_k∘x) - sum_j b_j K(d_k∘x_j, d_k∘x)
    - rho_k`` (Wang and Qiao 2022, §3.2-3.3) from the dual QP Eq. (7) of its training points
    against an unlabelled sample, and ``rho_k`` from the primal Eq. (6) with ``w`` fixed (an LP, solved in
    closed form by :func:`offset_from_scores`; :func:`recover_rho` is the LP reference).  The
    prediction set is ``{k : f_k(x) >= tau_k}``: several classes mean ambiguity, none means an
    outlier.  Classes are independent problems, solved in parallel (``n_jobs``); each QP is
    solved by :func:`solve_class_dual`, an interior-point method for its structure (or by HiGHS
    or cvxpy, ``backend``).  The feature weights ``d_k`` are ones unless ``feature_selection``.

    With the defaults every choice is made from the data, and each can be overridden:

    * **Thresholds** (``calibration=0.3``): a seeded random ``n_cal = min(max(floor(0.3 n_k), 1),
      n_k - 1)`` of each class's points are held out of everything else, and ``tau_k`` is the
      split-conformal quantile of ``f_k`` on them (:func:`conformal_threshold`; Wang and Qiao
      2022, App. A.3 and Proposition 6), so that a new class-``k`` point is in the set with
      probability at least ``1 - γ``; ``coverage_confidence=1-δ`` tightens this to hold with
      probability ``1 - δ`` over the calibration sample (:func:`conformal_rank`; the finite-sample,
      constant-free counterpart of Theorem 1's ``γ - ε``).  When ``X_unlabeled`` is None the
      unlabelled sample is ``X`` without the held-out points.  The guarantee is for new points; a
      point that is also in ``X_unlabeled`` shaped the regions and is not covered by it.
      ``calibration=None`` gives ``tau_k = 0``: the QP's own ``rho_k``, whose coverage is only
      controlled through the hinge surrogate of Eq. (6).
    * **Kernel width and C** (``gamma=None`` with the RBF kernel; ``C='auto'``): per class, the
      rules' values, the median heuristic (:func:`median_heuristic_gamma`) and the
      ``C := (λ m)^{-1}`` of Wang and Qiao (2022) with ``λ = AUTO_LAMBDA = 1``, are multiplied by
      ``WIDTH_FACTORS`` and ``C_FACTORS``, and the pair is chosen as in Wang and Qiao (2022, App.
      A.3), by the smallest set size on held-out data: ``TUNING_FRACTION`` of the class's fitting
      points and of the unlabelled points are held out, each candidate's QP is fitted on the rest,
      thresholded at the empirical ``γ``-quantile of its held-out class scores, and the candidate
      accepting the fewest held-out unlabelled points wins (``tuning_results_``).  The calibration
      points take no part, so the conformal guarantee is untouched.  A given ``gamma`` or ``C`` is
      used as is; with both given, or fewer than ``TUNING_MIN_POINTS`` class or unlabelled points,
      nothing is tuned (with feature selection, the sparsest selected weights are then used).
    * **Feature selection** (``feature_selection=True``, Wang and Qiao 2022, Eq. 8-10, Algorithm 1):
      the QP alternates with the linearised LP in the weights ``d ∈ [0, 1]^p`` with an l1 penalty
      ``feature_penalty`` (:func:`feature_weight_step`) and a line search that keeps Eq. (9)
      decreasing, at the rules' width and ``C``.  With ``feature_penalty='auto'`` this runs for
      each of ``AUTO_FEATURE_PENALTIES``; every distinct weight vector, and the unweighted
      kernel, enter the tuning above, so a selection that does not shrink the sets on held-out
      data is dropped (``feature_weights_`` then stays all ones).  Supported for the RBF,
      linear and polynomial kernels (:func:`weighted_kernel_gradient`).

    Features keep their raw scales by default, as in the experiments of Wang and Qiao (2022);
    ``standardize=True`` rescales them.  :func:`error_rate_curve` traces coverage, set size and
    detection against ``error_rate`` (Wang and Qiao 2022, Fig. 3) to help choose ``γ``.

    Parameters
    ----------
    error_rate : float, default=0.05
        ``γ`` in (0, 1): the class error rate.  With calibration, the guaranteed bound on
        ``P(k not in set | Y = k)``; without it, the bound on the hinge surrogate in Eq. (6).
    kernel : {'linear', 'poly', 'rbf'} or callable, default='rbf'
        Passed to :func:`sklearn.metrics.pairwise.pairwise_kernels`.
    gamma : float or None, default=None
        Kernel width.  None: tuned around the median heuristic per class for ``'rbf'``;
        ``1 / n_features`` for the other kernels.
    degree, coef0 : kernel parameters.
    C : float or 'auto', default='auto'
        Weight of the unlabelled hinge losses in Eq. (6) (larger ``C`` shrinks the acceptance
        regions); ``'auto'`` tunes it around ``1 / m``.
    calibration : float in (0, 1) or None, default=0.3
        Fraction of each class's training points held out to calibrate its threshold; None
        uses them all in the QP and keeps ``tau_k = 0``.
    coverage_confidence : float in (0, 1) or None, default=None
        If given, each threshold keeps coverage ``>= 1 - γ`` with this probability over the
        calibration sample (needs more calibration points: ``n >= log(1 - confidence) /
        log(1 - γ)``), instead of on average.
    feature_selection : bool, default=False
        Kernel feature selection (GPSKFS).
    feature_penalty : float >= 0 or 'auto', default='auto'
        ``C_2`` of Eq. (9), the l1 weight on ``d``.
    max_iter : int, default=20
        Alternations of feature selection (a ``ConvergenceWarning`` when reached).
    tol : float, default=1e-3
        Feature selection stops when no weight moves more than ``tol``.
    standardize : bool, default=False
        If True, a :class:`~sklearn.preprocessing.StandardScaler` fitted on the labelled ``X`` is
        applied to every input (``X``, ``X_unlabeled`` and at prediction).
    n_unlabeled : int, default=1000
        At most this many unlabelled points are used (a uniform subsample without replacement,
        seeded by ``random_state``); each class's QP has ``n_k + n_unlabeled`` variables.
    backend : {'auto', 'ipm', 'highs', 'cvxpy'}, default='auto'
        Solver of the dual QPs: :func:`solve_class_dual` (``'ipm'``, which ``'auto'`` means),
        HiGHS' convex QP solver, or cvxpy (Clarabel).  The offsets always come from the closed
        form :func:`offset_from_scores` (the LP's solution).
    outlier_label, ambiguous_label : default='auto'
        What :meth:`predict` returns for an empty set and for a set of two or more classes.
        ``'auto'``: -1 and -2 for numeric labels (``min(classes_) - 1`` and ``- 2`` if some label
        is negative), ``'outlier'`` and ``'ambiguous'`` otherwise.  Neither may be a class label.
    n_jobs : int or None, default=None
        Classes solved in parallel by :class:`joblib.Parallel`.
    random_state : int, RandomState instance or None
        Seeds the calibration split, the unlabelled subsample, the tuning split and the
        median-heuristic subsample; a fit is reproducible for a fixed seed, also with ``n_jobs``.

    verbose : int, default=0
        Progress on stderr: 1 prints the stages of ``fit`` and what it found (time, objective,
        certified gap), 2 also its iterations.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    dual_coef_ : list of ndarray
        Per class, the signed coefficients ``[a; -b]`` of its support points.
    support_vectors_ : list of ndarray
        Per class, the weighted support points ``d_k ∘ x`` (class points with ``a_i > 0``, then
        unlabelled points with ``b_j > 0``), standardised if ``standardize``.
    rho_ : ndarray of shape (n_classes,)
        The offsets.
    thresholds_ : ndarray of shape (n_classes,)
        The calibrated thresholds ``tau_k`` on ``f_k`` (zeros without calibration).
    kernel_gamma_ : ndarray of shape (n_classes,)
        The kernel width used for each class (NaN for a callable kernel).
    C_ : ndarray of shape (n_classes,)
        The ``C`` used for each class.
    feature_weights_ : ndarray of shape (n_classes, n_features)
        The feature weights ``d_k`` (all ones without feature selection).
    selection_history_ : list of list
        Per class and feature penalty, the values of Eq. (9) after each QP of the selection.
    tuning_results_ : list of list of dict
        Per class, each tuning candidate's ``selected`` (weighted kernel?), ``gamma``, ``C`` and
        held-out ``acceptance`` rate (empty when nothing was tuned).
    calibration_index_ : list of ndarray
        Per class, the rows of ``X`` held out for calibration (empty without calibration).
    scaler_ : StandardScaler or None
    dual_objective_ : ndarray of shape (n_classes,)
        Optimal values of the dual QPs (minus the primal optima).
    class_gap_ : ndarray of shape (n_classes,)
        Per class, the certified duality gap of its QP: the primal (Eq. 6) at the fitted ``w``
        and its best offset plus ``dual_objective_``.
    gap_ : float
        The sum of ``class_gap_``: the certified gap of the whole fit (the classes are
        independent problems).
    converged_ : str
        ``'optimal'``: every class's dual QP is an exact program solved to optimality.
    stop_reason_ : str
    X_unlabeled_ : ndarray
        The unlabelled sample used (standardised if ``standardize``).
    outlier_label_, ambiguous_label_ : the markers :meth:`predict` uses.

    Notes
    -----
    There is no ``game_`` (the declared :class:`advgame.PredictionGame` of the adversarial
    estimators): this model is not a game against a moment-matching adversary but the per-class
    QP of Wang and Qiao (2022), Eq. (6)-(7), of a class's points against unlabelled data (design
    notes, docs/design.md, Appendix C); it shares only the kernels and the solvers.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> gps = GeneralizedPredictionSet(error_rate=0.1, random_state=0).fit(X, y)
    >>> gps.predict_set(X[:2]).shape
    (2, 3)
    """

    def __init__(
        self,
        error_rate: float = 0.05,
        kernel: str | Callable[..., float] = "rbf",
        gamma: float | None = None,
        degree: int = 3,
        coef0: float = 1.0,
        C: float | str = "auto",
        calibration: float | None = 0.3,
        coverage_confidence: float | None = None,
        feature_selection: bool = False,
        feature_penalty: float | str = "auto",
        max_iter: int = 20,
        tol: float = 1e-3,
        standardize: bool = False,
        n_unlabeled: int = 1000,
        backend: str = "auto",
        outlier_label: Any = "auto",
        ambiguous_label: Any = "auto",
        n_jobs: int | None = None,
        random_state: int | np.random.RandomState | None = None,
        verbose: int = 0,
    ) -> None:
        self.error_rate = error_rate
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.calibration = calibration
        self.coverage_confidence = coverage_confidence
        self.feature_selection = feature_selection
        self.feature_penalty = feature_penalty
        self.max_iter = max_iter
        self.tol = tol
        self.standardize = standardize
        self.n_unlabeled = n_unlabeled
        self.backend = backend
        self.outlier_label = outlier_label
        self.ambiguous_label = ambiguous_label
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _check_params(self):
        _check_fraction("error_rate", self.error_rate)
        if not (isinstance(self.C, str) and self.C == "auto"):
            C = self.C
            if not (
                isinstance(C, numbers.Real) and not isinstance(C, bool) and np.isfinite(C) and C > 0
            ):
                raise ValueError(f"C must be a finite number > 0 or 'auto'; got {C!r}.")
        _check_fraction("calibration", self.calibration, allow_none=True)
        _check_fraction("coverage_confidence", self.coverage_confidence, allow_none=True)
        for name in ("standardize", "feature_selection"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False; got {getattr(self, name)!r}.")
        if self.feature_selection and (
            callable(self.kernel) or self.kernel not in WEIGHTED_KERNELS
        ):
            raise ValueError(
                f"feature_selection needs the kernel's gradient in the feature weights, available "
                f"for kernel in {WEIGHTED_KERNELS}; got kernel={self.kernel!r}."
            )
        penalty = self.feature_penalty
        if not (isinstance(penalty, str) and penalty == "auto") and not (
            isinstance(penalty, numbers.Real)
            and not isinstance(penalty, bool)
            and np.isfinite(penalty)
            and penalty >= 0
        ):
            raise ValueError(
                f"feature_penalty must be 'auto' or a finite number >= 0; got {penalty!r}."
            )
        check_iteration_params(self, ("n_unlabeled", "max_iter"))
        if self.backend not in _BACKENDS:
            raise ValueError(f"backend must be one of {_BACKENDS}; got {self.backend!r}.")

    def _split(self, y_index, rng):
        """Per class, the rows fitted by its QP and the rows held out for calibration."""
        fit_rows, cal_rows = [], []
        for k in range(self.classes_.size):
            rows = np.flatnonzero(y_index == k)
            if self.calibration is None:
                fit_rows.append(rows)
                cal_rows.append(rows[:0])
                continue
            n_cal = calibration_size(rows.size, self.calibration)
            rows = rng.permutation(rows)
            cal_rows.append(np.sort(rows[:n_cal]))
            fit_rows.append(np.sort(rows[n_cal:]))
        return fit_rows, cal_rows

    def fit(
        self, X: ArrayLike, y: ArrayLike, X_unlabeled: ArrayLike | None = None
    ) -> GeneralizedPredictionSet:
        """Learn one acceptance region per class, and calibrate its threshold.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Labelled training points.
        y : array-like of shape (n_samples,)
            Their labels; every class needs at least 2 points.
        X_unlabeled : array-like of shape (n_unlabeled_samples, n_features), optional
            Unlabelled (test-distribution) points (``G_te`` in Wang and Qiao 2022): a 2-D array of
            finite numbers with at least one row and as many columns as ``X``.  None uses ``X``
            itself (without the calibration points): the regions are then fitted without any
            information on new classes.  An array with 0 rows is an error, not a synonym for
            None (pass None to mean "no unlabelled points").

        Raises
        ------
        ValueError
            If ``X_unlabeled`` is not None and is not 2-D, has 0 rows, has a different number of
            columns than ``X``, or holds NaN or infinite values (the message names
            ``X_unlabeled``).

        Returns
        -------
        self
        """
        started = fit_started(self, X)
        self._check_params()
        X, y_index, _ = check_classification_fit(self, X, y, None)
        X_unlabeled = _check_unlabeled(X_unlabeled, X.shape[1])
        counts = np.bincount(y_index, minlength=self.classes_.size)
        if np.any(counts < 2):
            small = counts < 2
            found = ", ".join(
                f"class {label!r} has {count}"
                for label, count in zip(self.classes_[small].tolist(), counts[small])
            )
            raise ValueError(f"every class needs at least 2 training points; {found}.")
        self._set_markers()
        self.scaler_ = StandardScaler().fit(X) if self.standardize else None
        if self.scaler_ is not None:
            X = self.scaler_.transform(X)
            if X_unlabeled is not None:
                X_unlabeled = self.scaler_.transform(X_unlabeled)
        rng = check_random_state(self.random_state)
        fit_rows, self.calibration_index_ = self._split(y_index, rng)
        if X_unlabeled is None:
            X_unlabeled = X[np.sort(np.concatenate(fit_rows))]
        if X_unlabeled.shape[0] > self.n_unlabeled:
            rows = np.sort(rng.choice(X_unlabeled.shape[0], self.n_unlabeled, replace=False))
            X_unlabeled = X_unlabeled[rows]
        self.X_unlabeled_ = X_unlabeled
        selection = None
        if self.feature_selection:
            selection = (self._feature_penalties(), self.max_iter, self.tol)
        tuning = (WIDTH_FACTORS, C_FACTORS, TUNING_FRACTION)
        C = None if isinstance(self.C, str) else self.C
        gamma = self.gamma
        if gamma is None and not callable(self.kernel) and self.kernel != "rbf":
            gamma = 1.0 / X.shape[1]
        backend = "ipm" if self.backend == "auto" else self.backend
        progress(
            self,
            f"{len(fit_rows)} per-class kernel QPs ({backend}, n_jobs={self.n_jobs}) against "
            f"{X_unlabeled.shape[0]} unlabelled points",
        )
        fits = Parallel(n_jobs=self.n_jobs)(
            delayed(fit_class)(
                X[rows],
                X_unlabeled,
                KernelFeatures(self.kernel, gamma, self.degree, self.coef0),
                self.error_rate,
                C,
                backend,
                selection,
                tuning,
                seed,
            )
            for rows, seed in zip(fit_rows, rng.randint(2**31 - 1, size=len(fit_rows)))
        )
        self.kernels_ = [fit[0] for fit in fits]
        self.dual_coef_ = [fit[1] for fit in fits]
        self.support_vectors_ = [kernel.X_fit_ for kernel in self.kernels_]
        self.rho_ = np.array([fit[2] for fit in fits])
        self.dual_objective_ = np.array([fit[3] for fit in fits])
        self.feature_weights_ = np.array([fit[4] for fit in fits])
        self.selection_history_ = [fit[5] for fit in fits]
        self.C_ = np.array([fit[6] for fit in fits])
        self.tuning_results_ = [fit[7] for fit in fits]
        self.kernel_gamma_ = np.array(
            [np.nan if kernel.gamma is None else kernel.gamma for kernel in self.kernels_]
        )
        self.class_gap_ = np.array(
            [self._class_gap(k, X[rows], X_unlabeled) for k, rows in enumerate(fit_rows)]
        )
        record_convergence(
            self,
            self.class_gap_.sum(),
            IPM_TOL,
            -self.dual_objective_.sum(),
            exact=True,
            reason=f"{backend} solved every class's dual QP",
        )
        for k, label in enumerate(self.classes_.tolist()):
            progress(
                self,
                f"class {label!r}: {self.dual_coef_[k].size} dual coefficients, C = {self.C_[k]:.3g}, "
                f"dual objective {self.dual_objective_[k]:.6g}",
                level=2,
            )
        self.thresholds_ = np.zeros(self.classes_.size)
        if self.calibration is not None:
            scores = self._scores(X)
            self.thresholds_ = np.array(
                [
                    conformal_threshold(scores[rows, k], self.error_rate, self.coverage_confidence)
                    for k, rows in enumerate(self.calibration_index_)
                ]
            )
        self._warn_unbounded_regions()
        progress(self, f"class thresholds tau = {np.round(self.thresholds_, 4).tolist()}")
        fit_finished(self, started)
        return self

    def _warn_unbounded_regions(self):
        """Far from every fitted point an RBF decision function tends to ``-rho_k``; when that is
        at least ``tau_k``, class ``k`` accepts everything far away, outliers included."""
        far = [
            k
            for k, kernel in enumerate(self.kernels_)
            if kernel.kernel == "rbf" and -self.rho_[k] >= self.thresholds_[k]
        ]
        if far:
            detail = ", ".join(
                f"{self.classes_[k]} (-rho = {-self.rho_[k]:.3g} >= tau = {self.thresholds_[k]:.3g})"
                for k in far
            )
            warnings.warn(
                f"the acceptance regions of classes {detail} are unbounded: far from all fitted "
                "points f_k(x) tends to -rho_k, so every distant point (outliers included) is "
                "accepted as these classes. Give X_unlabeled that covers the test distribution "
                "(a larger error_rate also raises tau_k, at the cost of coverage).",
                UserWarning,
                stacklevel=3,
            )

    def _feature_penalties(self):
        """The values of ``C_2`` (Eq. 9) tried: ``feature_penalty``, or ``AUTO_FEATURE_PENALTIES``."""
        if isinstance(self.feature_penalty, str):
            return AUTO_FEATURE_PENALTIES
        return (self.feature_penalty,)

    def _set_markers(self):
        """``outlier_label_``, ``ambiguous_label_`` and ``_labels`` (classes, then the two markers,
        in one array whose dtype holds them all)."""
        classes = self.classes_.tolist()
        numeric = all(isinstance(c, numbers.Number) and not isinstance(c, bool) for c in classes)
        low = min(0, min(classes)) if numeric else None  # -1, -2 unless a class label is < 0
        auto = (low - 1, low - 2) if numeric else ("outlier", "ambiguous")
        markers = [
            auto[i] if isinstance(marker, str) and marker == "auto" else marker
            for i, marker in enumerate((self.outlier_label, self.ambiguous_label))
        ]
        for name, marker in zip(("outlier_label", "ambiguous_label"), markers):
            if marker in classes:
                raise ValueError(
                    f"{name}={marker!r} is one of the classes {classes}; choose a value that is "
                    "not a class label."
                )
        if markers[0] == markers[1]:
            raise ValueError(
                f"outlier_label and ambiguous_label must differ; both are {markers[0]!r}."
            )
        self.outlier_label_, self.ambiguous_label_ = markers
        values = classes + markers
        same_kind = len({isinstance(v, str) for v in values}) == 1
        self._labels = np.array(values, dtype=None if same_kind else object)

    def _class_gap(self, k, X_class, X_unlabeled):
        r"""Class ``k``'s certified duality gap: the primal of Wang and Qiao (2022), Eq. (6) at
        the fitted ``w`` and its best offset, plus the dual's optimal value (design notes,
        Appendix C).  With ``s = w . Phi`` on the class points and ``u`` on the unlabelled ones,
        the primal in ``rho``, ``-rho + C sum_j (u_j + 1 - rho)_+``, falls with ``rho``, so its
        best offset is the largest for which the class slacks fit the budget,
        :func:`offset_from_scores`."""
        kernel, coef, weights = self.kernels_[k], self.dual_coef_[k], self.feature_weights_[k]
        class_scores = kernel.gram(X_class * weights) @ coef
        unlabeled = kernel.gram(X_unlabeled * weights) @ coef
        squared_norm = coef @ kernel.gram(kernel.X_fit_) @ coef
        rho = offset_from_scores(class_scores, self.error_rate)
        hinges = np.maximum(unlabeled + 1.0 - rho, 0.0).sum()
        primal = 0.5 * squared_norm - rho + self.C_[k] * hinges
        return max(float(primal + self.dual_objective_[k]), 0.0)

    def _scores(self, X):
        """``f_k(d_k ∘ x) = w_k . Phi(d_k ∘ x) - rho_k`` of (already scaled) ``X``, one column per
        class."""
        return np.column_stack(
            [
                kernel.gram(X * weights) @ coef - rho
                for kernel, coef, rho, weights in zip(
                    self.kernels_, self.dual_coef_, self.rho_, self.feature_weights_
                )
            ]
        )

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """``f_k(x) - tau_k`` for every class (Wang and Qiao 2022, §3.2), shape ``(n_samples, n_classes)``.

        ``x`` is in the acceptance region of class ``k`` when the value is ``>= 0``; ``tau_k``
        is the calibrated threshold ``thresholds_[k]`` (``+inf`` when ``tau_k = -inf``).
        """
        check_is_fitted(self)
        X = validate_numeric(self, X, reset=False)
        if self.scaler_ is not None:
            X = self.scaler_.transform(X)
        return self._scores(X) - self.thresholds_

    def predict_set(self, X: ArrayLike) -> np.ndarray:
        """Boolean ``(n_samples, n_classes)`` membership in ``classes_`` order; an all-false row is
        an outlier."""
        return self.decision_function(X) >= 0

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The label when exactly one class accepts ``x``; otherwise a marker.

        Outliers (empty set) get ``outlier_label_`` and ambiguous points (two or more classes)
        get ``ambiguous_label_``; :meth:`predict_set` gives the sets themselves.
        """
        sets = self.predict_set(X)
        size = sets.sum(axis=1)
        index = np.where(size == 0, -2, np.where(size == 1, np.argmax(sets, axis=1), -1))
        return self._labels[index]


def error_rate_curve(
    estimator: GeneralizedPredictionSet,
    X: ArrayLike,
    y: ArrayLike,
    X_test: ArrayLike,
    y_test: ArrayLike,
    error_rates: ArrayLike,
    X_unlabeled: ArrayLike | None = None,
) -> dict[str, Any]:
    r"""Coverage, set size and outlier detection against ``error_rate`` (Wang and Qiao 2022, Fig. 3).

    For each ``γ`` in ``error_rates`` a clone of ``estimator`` with ``error_rate=γ`` is fitted on
    ``(X, y, X_unlabeled)`` and its prediction sets on a labelled tuning set ``(X_test, y_test)``
    are scored by :func:`advgame.metrics.prediction_set_metrics`; tuning points whose label is not
    a training class count as outliers.  Wang and Qiao (2022, §5.1) read such curves for an elbow: a
    ``γ`` after which the set size stops falling fast, with acceptable detection.  To tighten each
    class's bound by Theorem 1's ``ε``, set the estimator's ``coverage_confidence``.

    Parameters
    ----------
    estimator : GeneralizedPredictionSet
        Unfitted template; its other parameters are kept.
    X, y : array-like
        Labelled training data.
    X_test, y_test : array-like
        Labelled tuning data, not used for fitting; may contain outliers (any label not in ``y``).
    error_rates : array-like of float
        Values of ``γ`` in (0, 1).
    X_unlabeled : array-like, optional
        Passed to ``fit``.

    Returns
    -------
    dict
        ``error_rate`` (n_rates,), ``coverage`` (n_rates, n_classes), ``cardinality``,
        ``conditional_cardinality`` and ``detection_rate`` (n_rates,), and ``classes``.
    """
    if not isinstance(estimator, GeneralizedPredictionSet):
        raise TypeError(
            f"estimator must be a GeneralizedPredictionSet; got {type(estimator).__name__}."
        )
    try:
        rates = np.asarray(error_rates, dtype=float).ravel()
    except (TypeError, ValueError):
        rates = np.empty(0)
    if rates.size == 0 or not np.all((rates > 0) & (rates < 1)):
        raise ValueError(f"error_rates must be non-empty values in (0, 1); got {error_rates!r}.")
    n_test, y_test = np.shape(X_test)[0] if np.ndim(X_test) else 0, np.asarray(y_test)
    if y_test.ndim != 1 or y_test.shape[0] != n_test:
        raise ValueError(
            f"y_test must hold one label per row of X_test ({n_test}); got shape {y_test.shape}."
        )
    rows = []
    for rate in rates:
        fitted = clone(estimator).set_params(error_rate=float(rate)).fit(X, y, X_unlabeled)
        metrics = prediction_set_metrics(y_test, fitted.predict_set(X_test), fitted.classes_)
        rows.append(metrics)
    if not np.any(np.isin(y_test, fitted.classes_)):
        warnings.warn(
            f"no label of y_test is a training class {fitted.classes_.tolist()}: every tuning "
            "point counts as an outlier and the coverage is undefined (nan); check that y_test "
            "uses the labels (and dtype) of y.",
            UserWarning,
            stacklevel=2,
        )
    curve = {"error_rate": rates, "classes": fitted.classes_}
    for key in ("coverage", "cardinality", "conditional_cardinality", "detection_rate"):
        curve[key] = np.array([row[key] for row in rows])
    return curve
