r"""Generalised prediction sets: set-valued classification with outlier detection (seed 003).

For every class ``k`` separately, with training points ``G_k`` (``n_k`` of them) and ``m``
unlabelled points, seed 003 Eq. (6) learns ``f_k(x) = w . Phi(x) - rho``:

.. math::

    \min_{w, \rho, \eta, \xi}\ \tfrac12\|w\|^2 - \rho + C \sum_j \xi_j \quad\text{s.t.}\quad
    \eta_i \ge 1 - w\cdot\Phi(x_i) + \rho,\ \eta_i \ge 0\ (i \in G_k),\quad
    \textstyle\sum_i \eta_i \le n_k \gamma,\quad
    \xi_j \ge 1 + w\cdot\Phi(x_j) - \rho,\ \xi_j \ge 0\ (j\ \text{unlabelled}).

With multipliers ``a_i`` (class margins), ``b_j`` (unlabelled margins) and ``t`` (the error budget),
stationarity gives ``w = sum_i a_i Phi(x_i) - sum_j b_j Phi(x_j)``, ``1^T a - 1^T b = 1`` (from
``rho``), ``0 <= a_i <= t`` (from ``eta_i``) and ``0 <= b_j <= C`` (from ``xi_j``), so the dual is
seed 003 Eq. (7) (DESIGN Appendix C):

.. math::

    \min_{a, b, t}\ \tfrac12 (a^\top K_{11} a + b^\top K_{22} b - 2 a^\top K_{12} b)
    - 1^\top a - 1^\top b + t\, n_k \gamma \quad\text{s.t.}\quad
    0 \le a \le t,\ 0 \le b \le C,\ 1^\top a - 1^\top b = 1,\ t \ge 0,

whose optimal value is minus the primal's.  Given ``w``, the primal is a linear program in
``(rho, eta, xi)`` (seed 003 §3.2, "plugging w back"), which gives ``rho``.  The prediction set
of ``x`` is ``{k : f_k(x) >= 0}``; an empty set flags an outlier (seed 003 §3.3).

By default the class thresholds are calibrated split-conformally (seed 003 App. A.3 and
Proposition 6, after Lei et al. 2015): the QP is fitted on part of each class's points and the
threshold ``tau_k`` is an order statistic of ``f_k`` on the held-out rest, so that a new class-k
point is accepted with probability at least ``1 - γ``; the set is ``{k : f_k(x) >= tau_k}``.
"""

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from scipy.spatial.distance import pdist
from sklearn.base import BaseEstimator
from sklearn.preprocessing import StandardScaler
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from ..compile import Program
from ..features import KernelFeatures, psd_eigen
from ._inputs import check_classification_fit, check_iteration_params

__all__ = [
    "GeneralizedPredictionSet",
    "class_dual_program",
    "conformal_threshold",
    "median_heuristic_gamma",
    "recover_rho",
]

#: Dual coefficients with ``|coef| <= SUPPORT_RTOL * max|coef|`` are dropped from the support.
SUPPORT_RTOL = 1e-9
_BACKENDS = ("auto", "highs", "cvxpy")
#: The median heuristic uses at most this many points (a seeded subsample), i.e. ~5e5 pairs.
MEDIAN_HEURISTIC_MAX_POINTS = 1000
#: ``C='auto'`` is ``1 / (AUTO_LAMBDA * m)``: seed 003 Eq. (5) weights the mean unlabelled loss
#: against ``λ J(f)``, and Eq. (6) divides by ``λ``, so ``C = 1 / (λ m)``; ``λ = 1`` weighs the two
#: equally (the unlabelled multipliers then sum to at most 1, as the class multipliers' excess).
AUTO_LAMBDA = 1.0


def class_dual_program(K11, K12, K22, gamma, C):
    r"""The dual QP of one class, seed 003 Eq. (7), as a :class:`~advgame.compile.Program`.

    Variables (named blocks) ``a`` (``n_k``), ``b`` (``m``) and ``t`` (1), adjacent in that
    order.  The quadratic term is ``½ ||R^T [a; b]||^2`` with ``R R^T`` the PSD block kernel matrix
    ``[[K11, -K12], [-K12^T, K22]]`` (eigen-factor; eigenvalues below ``PSD_EIGEN_RTOL`` times the
    largest are dropped).  Solve with ``backend='highs'`` (convex QP) or ``'cvxpy'``.

    Parameters
    ----------
    K11 : ndarray of shape (n_k, n_k)
        Kernel matrix of the class points (seed 003's ``G_1``).
    K12 : ndarray of shape (n_k, m)
        Kernel between class points and unlabelled points (``G_3``).
    K22 : ndarray of shape (m, m)
        Kernel matrix of the unlabelled points (``G_2``).
    gamma : float
        The class error rate ``γ`` of Eq. (6) (not a kernel width).
    C : float
        Weight of the unlabelled hinge losses (Eq. 6).

    Returns
    -------
    Program
    """
    n_k, m = K12.shape
    M = np.block([[K11, -K12], [-K12.T, K22]])
    program = Program(f"prediction-set dual (n_k={n_k}, m={m})")
    a = program.add_variables("a", n_k, lower=0.0, cost=-1.0)
    b = program.add_variables("b", m, lower=0.0, upper=C, cost=-1.0)
    t = program.add_variables("t", 1, lower=0.0, cost=n_k * gamma)
    program.add_rows("a <= t", [(a, sp.identity(n_k)), (t, -np.ones((n_k, 1)))], upper=0.0)
    program.add_rows(
        "1'a - 1'b = 1", [(a, np.ones((1, n_k))), (b, -np.ones((1, m)))], lower=1.0, upper=1.0
    )
    U, s = psd_eigen(M)
    program.add_quadratic(slice(a.start, b.stop), (U * np.sqrt(s)).T)
    return program


def recover_rho(class_scores, unlabeled_scores, gamma, C):
    r"""The offset ``rho`` from the primal (seed 003 Eq. 6) with ``w`` fixed: an LP (HiGHS).

    .. math::

        \min_{\rho, \eta \ge 0, \xi \ge 0}\ -\rho + C \sum_j \xi_j \quad\text{s.t.}\quad
        \eta_i \ge 1 - s_i + \rho,\ \ \textstyle\sum_i \eta_i \le n_k\gamma,\ \
        \xi_j \ge 1 + u_j - \rho.

    The optimal ``rho`` is unique, so no tie-breaking rule is needed: at the optimum
    ``xi_j = (1 + u_j - rho)_+``, so the objective ``-rho + C sum_j (1 + u_j - rho)_+`` has slope
    ``-1 - C #{j : u_j > rho - 1} <= -1`` (it cannot be flat for any ``C > 0``), and ``rho`` is
    the largest feasible value, the unique root of ``sum_i (1 - s_i + rho)_+ = n_k γ`` (the left
    side is zero below ``min_i s_i - 1`` and strictly increasing above it).

    Parameters
    ----------
    class_scores : ndarray of shape (n_k,)
        ``s_i = w . Phi(x_i)`` on the class points.
    unlabeled_scores : ndarray of shape (m,)
        ``u_j = w . Phi(x_j)`` on the unlabelled points.
    gamma, C : float
        As in :func:`class_dual_program`.

    Returns
    -------
    rho : float
    solution : Solution
        The LP solution; ``program.variables`` names the blocks ``rho``, ``eta`` and ``xi``.
    program : Program
    """
    n_k, m = class_scores.size, unlabeled_scores.size
    program = Program(f"prediction-set offset (n_k={n_k}, m={m})")
    rho = program.add_variables("rho", 1, cost=-1.0)
    eta = program.add_variables("eta", n_k, lower=0.0)
    xi = program.add_variables("xi", m, lower=0.0, cost=C)
    program.add_rows(
        "class margins",
        [(eta, sp.identity(n_k)), (rho, -np.ones((n_k, 1)))],
        lower=1 - class_scores,
    )
    program.add_rows("error budget", [(eta, np.ones((1, n_k)))], upper=n_k * gamma)
    program.add_rows(
        "unlabelled margins",
        [(xi, sp.identity(m)), (rho, np.ones((m, 1)))],
        lower=1 + unlabeled_scores,
    )
    solution = program.solve("highs")
    return float(solution.x[rho][0]), solution, program


def conformal_threshold(scores, gamma):
    r"""Split-conformal class threshold (seed 003 App. A.3, Proposition 6; Lei et al. 2015).

    With ``n`` calibration scores ``f_k(x_i)`` of held-out class points, the threshold is the
    ``j``-th smallest score, ``j = floor(γ (n + 1))``.  A new class point exchangeable with the
    calibration points has ``f_k(x) < tau`` only if its score is among the ``j`` smallest of the
    ``n + 1``, so ``P(f_k(X) >= tau | Y = k) >= 1 - j / (n + 1) >= 1 - γ`` (marginally over the
    calibration sample), for any distribution and any fitted ``f_k``.

    Parameters
    ----------
    scores : ndarray of shape (n,)
        Scores of the held-out class points.
    gamma : float
        The class error rate ``γ`` in (0, 1).

    Returns
    -------
    float
        ``-inf`` (accept everything) when ``j = 0``, i.e. ``n < 1 / γ - 1``; a warning says so.
    """
    rank = int(np.floor(gamma * (scores.size + 1)))
    if rank == 0:
        warnings.warn(
            f"{scores.size} calibration points are too few for error_rate={gamma}: "
            f"floor(γ (n + 1)) = 0, so the class threshold is -inf (every point is accepted); "
            f"at least {int(np.ceil(1 / gamma)) - 1} are needed.",
            UserWarning,
            stacklevel=2,
        )
        return -np.inf
    return float(np.partition(scores, rank - 1)[rank - 1])


def median_heuristic_gamma(X, random_state=None):
    r"""RBF width by the median heuristic: ``1 / median ||x_i - x_j||^2`` over pairs ``i < j``.

    The kernel is ``exp(-gamma ||x - x'||^2)``, so the median pair gets ``exp(-1)``.  Seed 003
    (App. A.3) searches the width over the 25th-75th percentiles of the pairwise distances; the
    median is the centre of that grid.  At most ``MEDIAN_HEURISTIC_MAX_POINTS`` points are used, a
    uniform subsample without replacement seeded by ``random_state``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    random_state : int, Generator, RandomState or None

    Returns
    -------
    float
    """
    if X.shape[0] > MEDIAN_HEURISTIC_MAX_POINTS:
        rng = check_random_state(random_state)
        X = X[rng.choice(X.shape[0], MEDIAN_HEURISTIC_MAX_POINTS, replace=False)]
    median = float(np.median(pdist(X, "sqeuclidean")))
    if not median > 0:
        raise ValueError(
            "the median heuristic needs distinct points (the median squared pairwise distance "
            "is 0); pass the RBF width gamma explicitly."
        )
    return 1.0 / median


def _fit_class(X_class, X_unlabeled, kernel, gamma, C, backend):
    """Solve one class: dual QP, support, offset.  Returns ``(kernel map, coef, rho, dual)``."""
    n_k = X_class.shape[0]
    points = np.vstack([X_class, X_unlabeled])
    K = kernel.fit(points, 1).gram(points)
    program = class_dual_program(K[:n_k, :n_k], K[:n_k, n_k:], K[n_k:, n_k:], gamma, C)
    solution = program.solve(backend)
    a, b = solution.x[program.variables["a"]], solution.x[program.variables["b"]]
    coef = np.concatenate([a, -b])
    coef[np.abs(coef) <= SUPPORT_RTOL * np.abs(coef).max()] = 0.0
    scores = K @ coef  # w . Phi on the class points, then on the unlabelled points
    rho = recover_rho(scores[:n_k], scores[n_k:], gamma, C)[0]
    support = np.flatnonzero(coef)
    kernel.fit(points[support], 1)  # prediction needs K(x, support) only
    return kernel, coef[support], rho, solution


class GeneralizedPredictionSet(BaseEstimator):
    r"""Generalised prediction sets: one acceptance region per class, outliers rejected (seed 003).

    Each class ``k`` gets ``f_k(x) = sum_i a_i K(x_i, x) - sum_j b_j K(x_j, x) - rho_k``
    (seed 003 §3.2) from the dual QP Eq. (7) of its training points against an unlabelled
    sample, and ``rho_k`` from the primal Eq. (6) with ``w`` fixed (an LP).  The prediction set is
    ``{k : f_k(x) >= tau_k}``: several classes mean ambiguity, none means an outlier.  Classes are
    independent problems, solved in parallel.

    With the defaults every choice is made from the data (each can be overridden):

    * ``calibration=0.3``: a seeded random ``n_cal = min(max(floor(0.3 n_k), 1), n_k - 1)`` of
      each class's points are held out of its QP, and the threshold ``tau_k`` is the
      split-conformal quantile of ``f_k`` on them (:func:`conformal_threshold`, seed 003 App. A.3
      and Proposition 6), so that a new class-k point is in the set with probability at least
      ``1 - γ``.  When ``X_unlabeled`` is None the unlabelled sample is ``X`` without the held-out
      points, which therefore never influence any ``f_k``.  The guarantee is for new points; a
      point that is also in ``X_unlabeled`` shaped the regions and is not covered by it.
      ``calibration=None`` gives ``tau_k = 0``: the QP's own ``rho_k``, whose coverage is only
      controlled through the hinge surrogate of Eq. (6).
    * ``gamma=None`` with the RBF kernel: the median heuristic (:func:`median_heuristic_gamma`) on
      each class's fitting points together with the unlabelled sample.
    * ``C='auto'``: ``C = 1 / (λ m)`` (seed 003's ``C := (λ m)^{-1}``) with ``λ = AUTO_LAMBDA = 1``
      and ``m`` the number of unlabelled points used.

    Features keep their raw scales by default, as in seed 003's experiments; ``standardize=True``
    rescales them.  Kernel feature selection (Eq. 8-10) and a tuning helper are not built yet.

    Parameters
    ----------
    error_rate : float, default=0.05
        ``γ`` in (0, 1): the class error rate.  With calibration, the guaranteed bound on
        ``P(k not in set | Y = k)``; without it, the bound on the hinge surrogate in Eq. (6).
    kernel : {'linear', 'poly', 'rbf'} or callable, default='rbf'
        Passed to :func:`sklearn.metrics.pairwise.pairwise_kernels`.
    gamma : float or None, default=None
        Kernel width.  None: the median heuristic per class for ``'rbf'``, ``1 / n_features``
        for the other kernels.
    degree, coef0 : kernel parameters.
    C : float or 'auto', default='auto'
        Weight of the unlabelled hinge losses in Eq. (6) (larger ``C`` shrinks the acceptance
        regions); ``'auto'`` is ``1 / m``.
    calibration : float in (0, 1) or None, default=0.3
        Fraction of each class's training points held out to calibrate its threshold; None
        uses them all in the QP and keeps ``tau_k = 0``.
    standardize : bool, default=False
        If True, a :class:`~sklearn.preprocessing.StandardScaler` fitted on the labelled ``X`` is
        applied to every input (``X``, ``X_unlabeled`` and at prediction).
    n_unlabeled : int, default=1000
        At most this many unlabelled points are used (a uniform subsample without replacement,
        seeded by ``random_state``); each class's QP has ``n_k + n_unlabeled`` variables.
    backend : {'auto', 'highs', 'cvxpy'}, default='auto'
        Solver of the dual QPs: HiGHS' convex QP solver, or cvxpy (Clarabel).  ``auto`` is
        ``highs``.  The offsets are always HiGHS LPs.
    n_jobs : int or None, default=None
        Classes solved in parallel by :class:`joblib.Parallel`.
    random_state : int, RandomState instance or None
        Seeds the calibration split, the unlabelled subsample and the median-heuristic subsample.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    dual_coef_ : list of ndarray
        Per class, the signed coefficients ``[a; -b]`` of its support points.
    support_vectors_ : list of ndarray
        Per class, the support points (class points with ``a_i > 0``, then unlabelled points with
        ``b_j > 0``), standardised if ``standardize``.
    rho_ : ndarray of shape (n_classes,)
        The offsets.
    thresholds_ : ndarray of shape (n_classes,)
        The calibrated thresholds ``tau_k`` on ``f_k`` (zeros without calibration).
    kernel_gamma_ : ndarray of shape (n_classes,)
        The kernel width used for each class (NaN for a callable kernel).
    C_ : float
        The ``C`` used.
    calibration_index_ : list of ndarray
        Per class, the rows of ``X`` held out for calibration (empty without calibration).
    scaler_ : StandardScaler or None
    dual_objective_ : ndarray of shape (n_classes,)
        Optimal values of the dual QPs (minus the primal optima).
    X_unlabeled_ : ndarray
        The unlabelled sample used (standardised if ``standardize``).

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
        error_rate=0.05,
        kernel="rbf",
        gamma=None,
        degree=3,
        coef0=1.0,
        C="auto",
        calibration=0.3,
        standardize=False,
        n_unlabeled=1000,
        backend="auto",
        n_jobs=None,
        random_state=None,
    ):
        self.error_rate = error_rate
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.calibration = calibration
        self.standardize = standardize
        self.n_unlabeled = n_unlabeled
        self.backend = backend
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _check_params(self):
        rate = self.error_rate
        if not (isinstance(rate, numbers.Real) and not isinstance(rate, bool) and 0 < rate < 1):
            raise ValueError(f"error_rate must be a number in (0, 1); got {rate!r}.")
        if not (isinstance(self.C, str) and self.C == "auto"):
            C = self.C
            if not (
                isinstance(C, numbers.Real) and not isinstance(C, bool) and np.isfinite(C) and C > 0
            ):
                raise ValueError(f"C must be a finite number > 0 or 'auto'; got {C!r}.")
        frac = self.calibration
        if frac is not None and not (
            isinstance(frac, numbers.Real) and not isinstance(frac, bool) and 0 < frac < 1
        ):
            raise ValueError(f"calibration must be None or a number in (0, 1); got {frac!r}.")
        if not isinstance(self.standardize, (bool, np.bool_)):
            raise ValueError(f"standardize must be True or False; got {self.standardize!r}.")
        check_iteration_params(self, ("n_unlabeled",), check_tol=False)
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
            n_cal = min(max(int(np.floor(self.calibration * rows.size)), 1), rows.size - 1)
            rows = rng.permutation(rows)
            cal_rows.append(np.sort(rows[:n_cal]))
            fit_rows.append(np.sort(rows[n_cal:]))
        return fit_rows, cal_rows

    def _kernel_gamma(self, X_class, X_unlabeled, n_features, rng):
        """The kernel width of one class: given, median heuristic (RBF) or ``1 / n_features``."""
        if self.gamma is not None:
            return self.gamma
        if callable(self.kernel):
            return None
        if self.kernel == "rbf":
            return median_heuristic_gamma(np.vstack([X_class, X_unlabeled]), rng)
        return 1.0 / n_features

    def fit(self, X, y, X_unlabeled=None):
        """Learn one acceptance region per class, and calibrate its threshold.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Labelled training points.
        y : array-like of shape (n_samples,)
            Their labels; every class needs at least 2 points.
        X_unlabeled : array-like of shape (n_unlabeled_samples, n_features), optional
            Unlabelled (test-distribution) points, seed 003's ``G_te``.  None uses ``X`` itself
            (without the calibration points): the regions are then fitted without any
            information on new classes.

        Returns
        -------
        self
        """
        self._check_params()
        X, y_index, _ = check_classification_fit(self, X, y, None)
        if X_unlabeled is not None:
            X_unlabeled = check_array(X_unlabeled, dtype=np.float64, input_name="X_unlabeled")
            if X_unlabeled.shape[1] != X.shape[1]:
                raise ValueError(
                    f"X_unlabeled has {X_unlabeled.shape[1]} features but X has {X.shape[1]}."
                )
        counts = np.bincount(y_index, minlength=self.classes_.size)
        if np.any(counts < 2):
            small = counts < 2
            found = ", ".join(
                f"class {label!r} has {count}"
                for label, count in zip(self.classes_[small].tolist(), counts[small])
            )
            raise ValueError(f"every class needs at least 2 training points; {found}.")
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
        self.C_ = 1.0 / (AUTO_LAMBDA * X_unlabeled.shape[0]) if self.C == "auto" else self.C
        gammas = [self._kernel_gamma(X[rows], X_unlabeled, X.shape[1], rng) for rows in fit_rows]
        backend = "highs" if self.backend == "auto" else self.backend
        fits = Parallel(n_jobs=self.n_jobs)(
            delayed(_fit_class)(
                X[rows],
                X_unlabeled,
                KernelFeatures(self.kernel, gamma, self.degree, self.coef0),
                self.error_rate,
                self.C_,
                backend,
            )
            for rows, gamma in zip(fit_rows, gammas)
        )
        self.kernels_ = [fit[0] for fit in fits]
        self.dual_coef_ = [fit[1] for fit in fits]
        self.support_vectors_ = [kernel.X_fit_ for kernel in self.kernels_]
        self.rho_ = np.array([fit[2] for fit in fits])
        self.dual_objective_ = np.array([fit[3].objective for fit in fits])
        self.kernel_gamma_ = np.array([np.nan if g is None else g for g in gammas], dtype=float)
        self.thresholds_ = np.zeros(self.classes_.size)
        if self.calibration is not None:
            scores = self._scores(X)
            self.thresholds_ = np.array(
                [
                    conformal_threshold(scores[rows, k], self.error_rate)
                    for k, rows in enumerate(self.calibration_index_)
                ]
            )
        return self

    def _scores(self, X):
        """``f_k(x) = w_k . Phi(x) - rho_k`` of (already scaled) ``X``, one column per class."""
        return np.column_stack(
            [
                kernel.gram(X) @ coef - rho
                for kernel, coef, rho in zip(self.kernels_, self.dual_coef_, self.rho_)
            ]
        )

    def decision_function(self, X):
        """``f_k(x) - tau_k`` for every class (seed 003 §3.2), shape ``(n_samples, n_classes)``.

        ``x`` is in the acceptance region of class ``k`` when the value is ``>= 0``; ``tau_k``
        is the calibrated threshold ``thresholds_[k]`` (``+inf`` when ``tau_k = -inf``).
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if self.scaler_ is not None:
            X = self.scaler_.transform(X)
        return self._scores(X) - self.thresholds_

    def predict_set(self, X):
        """Boolean ``(n_samples, n_classes)`` membership in ``classes_`` order; an all-false row is
        an outlier."""
        return self.decision_function(X) >= 0

    def predict(self, X):
        """The label when exactly one class accepts ``x``, else ``None``.

        Returns an object array: ``None`` marks both outliers (empty set) and ambiguous points
        (several classes), which :meth:`predict_set` tells apart.  ``None`` is used rather than a
        sentinel such as ``-1`` because any number or string may be a genuine label.
        """
        sets = self.predict_set(X)
        single = sets.sum(axis=1) == 1
        out = np.full(sets.shape[0], None, dtype=object)
        out[single] = self.classes_[np.argmax(sets[single], axis=1)]
        return out
