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
"""

import numbers

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from .._validation import check_real
from ..compile import Program
from ..features import KernelFeatures, psd_eigen
from ._inputs import check_classification_fit, check_iteration_params

__all__ = ["GeneralizedPredictionSet", "class_dual_program", "recover_rho"]

#: Dual coefficients with ``|coef| <= SUPPORT_RTOL * max|coef|`` are dropped from the support.
SUPPORT_RTOL = 1e-9
_BACKENDS = ("auto", "highs", "cvxpy")


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
    ``{k : f_k(x) >= 0}``: several classes mean ambiguity, none means an outlier.  Classes are
    independent problems, solved in parallel.

    Work in progress (issue [sets]): the data-driven defaults (kernel width and ``C`` from the
    data, class thresholds calibrated on held-out class points so that coverage ``1 - γ`` holds on
    new data), kernel feature selection (Eq. 8-10) and the tuning helpers are not built yet; the
    thresholds are the QP's ``rho_k``, whose coverage is only controlled through the hinge
    surrogate of Eq. (6).

    Parameters
    ----------
    error_rate : float, default=0.05
        ``γ`` in (0, 1): the bound on the class-specific (hinge-surrogate) error rate, Eq. (6).
    kernel : {'linear', 'poly', 'rbf'} or callable, default='rbf'
        Passed to :func:`sklearn.metrics.pairwise.pairwise_kernels`.
    gamma, degree, coef0 : kernel parameters (``gamma=None``: ``1 / n_features``).
    C : float, default=1.0
        Weight of the unlabelled hinge losses in Eq. (6) (seed 003 writes ``C = 1 / (λ m)``;
        larger ``C`` shrinks the acceptance regions).
    n_unlabeled : int, default=1000
        At most this many unlabelled points are used (a uniform subsample without replacement,
        seeded by ``random_state``); each class's QP has ``n_k + n_unlabeled`` variables.
    backend : {'auto', 'highs', 'cvxpy'}, default='auto'
        Solver of the dual QPs: HiGHS' convex QP solver, or cvxpy (Clarabel).  ``auto`` is
        ``highs``.  The offsets are always HiGHS LPs.
    n_jobs : int or None, default=None
        Classes solved in parallel by :class:`joblib.Parallel`.
    random_state : int, Generator or None
        Seeds the subsample of the unlabelled data.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    dual_coef_ : list of ndarray
        Per class, the signed coefficients ``[a; -b]`` of its support points.
    support_vectors_ : list of ndarray
        Per class, the support points (class points with ``a_i > 0``, then unlabelled points with
        ``b_j > 0``).
    rho_ : ndarray of shape (n_classes,)
        The offsets.
    dual_objective_ : ndarray of shape (n_classes,)
        Optimal values of the dual QPs (minus the primal optima).
    X_unlabeled_ : ndarray
        The unlabelled sample used.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> gps = GeneralizedPredictionSet(error_rate=0.1).fit(X, y)
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
        C=1.0,
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
        self.n_unlabeled = n_unlabeled
        self.backend = backend
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _check_params(self):
        rate = self.error_rate
        if not (isinstance(rate, numbers.Real) and not isinstance(rate, bool) and 0 < rate < 1):
            raise ValueError(f"error_rate must be a number in (0, 1); got {rate!r}.")
        check_real("C", self.C, low=0.0, strict=True)
        check_iteration_params(self, ("n_unlabeled",), check_tol=False)
        if self.backend not in _BACKENDS:
            raise ValueError(f"backend must be one of {_BACKENDS}; got {self.backend!r}.")

    def fit(self, X, y, X_unlabeled=None):
        """Learn one acceptance region per class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Labelled training points.
        y : array-like of shape (n_samples,)
            Their labels; every class needs at least 2 points.
        X_unlabeled : array-like of shape (n_unlabeled_samples, n_features), optional
            Unlabelled (test-distribution) points, seed 003's ``G_te``.  None uses ``X`` itself:
            the regions are then fitted without any information on new classes.

        Returns
        -------
        self
        """
        self._check_params()
        X, y_index, _ = check_classification_fit(self, X, y, None)
        if X_unlabeled is None:
            X_unlabeled = X
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
        if X_unlabeled.shape[0] > self.n_unlabeled:
            rng = check_random_state(self.random_state)
            rows = np.sort(rng.choice(X_unlabeled.shape[0], self.n_unlabeled, replace=False))
            X_unlabeled = X_unlabeled[rows]
        self.X_unlabeled_ = X_unlabeled
        backend = "highs" if self.backend == "auto" else self.backend
        fits = Parallel(n_jobs=self.n_jobs)(
            delayed(_fit_class)(
                X[y_index == k],
                X_unlabeled,
                KernelFeatures(self.kernel, self.gamma, self.degree, self.coef0),
                self.error_rate,
                self.C,
                backend,
            )
            for k in range(self.classes_.size)
        )
        self.kernels_ = [fit[0] for fit in fits]
        self.dual_coef_ = [fit[1] for fit in fits]
        self.support_vectors_ = [kernel.X_fit_ for kernel in self.kernels_]
        self.rho_ = np.array([fit[2] for fit in fits])
        self.dual_objective_ = np.array([fit[3].objective for fit in fits])
        return self

    def decision_function(self, X):
        """``f_k(x)`` for every class (seed 003 §3.2), shape ``(n_samples, n_classes)``.

        ``x`` is in the acceptance region of class ``k`` when ``f_k(x) >= 0``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return np.column_stack(
            [
                kernel.gram(X) @ coef - rho
                for kernel, coef, rho in zip(self.kernels_, self.dual_coef_, self.rho_)
            ]
        )

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
