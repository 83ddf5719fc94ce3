r"""Generalised prediction sets: set-valued classification with outlier detection (Wang and Qiao
2022).

For every class ``k`` separately, with training points ``G_k`` (``n_k`` of them) and ``m``
unlabelled points, Eq. (6) of Wang and Qiao (2022) learns ``f_k(x) = w . Phi(x) - rho``:

.. math::

    \min_{w, \rho, \eta, \xi}\ \tfrac12\|w\|^2 - \rho + C \sum_j \xi_j \quad\text{s.t.}\quad
    \eta_i \ge 1 - w\cdot\Phi(x_i) + \rho,\ \eta_i \ge 0\ (i \in G_k),\quad
    \textstyle\sum_i \eta_i \le n_k \gamma,\quad
    \xi_j \ge 1 + w\cdot\Phi(x_j) - \rho,\ \xi_j \ge 0\ (j\ \text{unlabelled}).

With multipliers ``a_i`` (class margins), ``b_j`` (unlabelled margins) and ``t`` (the error budget),
stationarity gives ``w = sum_i a_i Phi(x_i) - sum_j b_j Phi(x_j)``, ``1^T a - 1^T b = 1`` (from
``rho``), ``0 <= a_i <= t`` (from ``eta_i``) and ``0 <= b_j <= C`` (from ``xi_j``), so the dual is
Eq. (7) of Wang and Qiao (2022), restated in the design notes (docs/design.md, Appendix C):

.. math::

    \min_{a, b, t}\ \tfrac12 (a^\top K_{11} a + b^\top K_{22} b - 2 a^\top K_{12} b)
    - 1^\top a - 1^\top b + t\, n_k \gamma \quad\text{s.t.}\quad
    0 \le a \le t,\ 0 \le b \le C,\ 1^\top a - 1^\top b = 1,\ t \ge 0,

whose optimal value is minus the primal's.  Given ``w``, the primal is a linear program in
``(rho, eta, xi)`` (Wang and Qiao 2022, §3.2, "plugging w back"), which gives ``rho``.  The
prediction set of ``x`` is ``{k : f_k(x) >= 0}``; an empty set flags an outlier (Wang and Qiao 2022,
§3.3).

Given ``w``, the optimal ``rho`` even has a closed form (:func:`offset_from_scores`), which the
estimator uses; the LP is its reference.

By default the class thresholds are calibrated split-conformally (Wang and Qiao 2022, App. A.3 and
Proposition 6, after Lei et al. 2015): the QP is fitted on part of each class's points and the
threshold ``tau_k`` is an order statistic of ``f_k`` on the held-out rest, so that a new class-k
point is accepted with probability at least ``1 - γ``; the set is ``{k : f_k(x) >= tau_k}``.

The dual is solved by :func:`solve_class_dual`, a primal-dual interior-point method for its
structure (one dense Cholesky factorisation per iteration, then an active-set polish), or as a
:class:`~advgame.compile.Program` by HiGHS or cvxpy.  Kernel feature selection (Wang and Qiao 2022,
§3.3, Eq. 8-10, Algorithm 1) alternates the QP with a linear program in the feature weights
(:func:`feature_weight_step`, :func:`weighted_kernel_gradient`) under a line search on Eq. (9)
(:func:`feature_selection_objective`).
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.spatial.distance import pdist
from scipy.stats import binom
from sklearn.base import BaseEstimator, clone
from sklearn.preprocessing import StandardScaler
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array, check_is_fitted
from threadpoolctl import threadpool_limits

from ..compile import Program
from ..exceptions import ConvergenceWarning, SolverError
from ..features import KernelFeatures, psd_eigen
from ..metrics import prediction_set_metrics
from ._base import fit_finished, fit_started, progress
from ._inputs import check_classification_fit, check_iteration_params, validate_numeric

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..compile import Solution

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

#: Dual coefficients with ``|coef| <= SUPPORT_RTOL * max|coef|`` are dropped from the support.
SUPPORT_RTOL = 1e-9
_BACKENDS = ("auto", "ipm", "highs", "cvxpy")
#: Tolerance and iteration limit of :func:`solve_class_dual`.
IPM_TOL = 1e-9
IPM_MAX_ITER = 100
#: When rounding stops the interior-point iterations from improving for this many steps, the best
#: iterate is returned if its scaled KKT residual is at most ``IPM_ACCEPT_TOL``.
IPM_STALL_ITER = 5
IPM_ACCEPT_TOL = 1e-7
#: :func:`_polish` fixes coordinates within this fraction of their bound's value at the bound.
POLISH_RTOL = 1e-6
#: The line search of kernel feature selection halves its step down to this, then stops.
MIN_LINE_SEARCH_STEP = 2.0**-10
#: Kernels whose gradient in the feature weights is implemented (:func:`weighted_kernel_gradient`).
_WEIGHTED = ("linear", "poly", "rbf")
#: ``feature_penalty='auto'`` runs the selection with each of these l1 weights ``C_2`` (Eq. 9, whose
#: other terms are of order one at ``C = 1 / m``); the tuning then picks among the results.
AUTO_FEATURE_PENALTIES = (0.003, 0.01, 0.03)
#: Automatic kernel widths and ``C`` are tuned per class over these multiples of the rules'
#: values (median heuristic; ``1 / (λ m)``), on ``TUNING_FRACTION`` of the class's fitting points
#: and of the unlabelled points held out (:func:`_tune`).
WIDTH_FACTORS = (0.5, 1.0, 2.0, 4.0, 8.0)
C_FACTORS = (1.0, 10.0, 100.0)
TUNING_FRACTION = 0.3
#: With fewer class or unlabelled points than this, nothing is tuned: the rules' values are used.
TUNING_MIN_POINTS = 10
#: The median heuristic uses at most this many points (a seeded subsample), i.e. ~5e5 pairs.
MEDIAN_HEURISTIC_MAX_POINTS = 1000
#: ``C='auto'`` is ``1 / (AUTO_LAMBDA * m)``: Eq. (5) of Wang and Qiao (2022) weights the mean
#: unlabelled loss against ``λ J(f)``, and Eq. (6) divides by ``λ``, so ``C = 1 / (λ m)``; ``λ = 1``
#: weighs the two equally (the unlabelled multipliers then sum to at most 1, as the class
#: multipliers' excess).
AUTO_LAMBDA = 1.0


def _check_fraction(name, value, allow_none=False):
    """``value`` must be a real number in (0, 1) (or None if ``allow_none``)."""
    if value is None and allow_none:
        return
    if not (isinstance(value, numbers.Real) and not isinstance(value, bool) and 0 < value < 1):
        raise ValueError(
            f"{name} must be {'None or ' if allow_none else ''}a number in (0, 1); got {value!r}."
        )


def _check_class_problem(K, n_class, gamma, C):
    """Inputs of one class's dual: a finite square kernel matrix with ``1 <= n_class < N``."""
    if K.ndim != 2 or K.shape[0] != K.shape[1] or not np.all(np.isfinite(K)):
        raise ValueError(f"K must be a finite square kernel matrix; got shape {K.shape}.")
    if not 1 <= n_class < K.shape[0]:
        raise ValueError(
            f"n_class must be between 1 and {K.shape[0] - 1} (K has {K.shape[0]} rows: class "
            f"points, then at least one unlabelled point); got {n_class}."
        )
    _check_fraction("gamma (the error rate)", gamma)
    if not (isinstance(C, numbers.Real) and np.isfinite(C) and C > 0):
        raise ValueError(f"C must be a finite number > 0; got {C!r}.")


def class_dual_program(
    K11: np.ndarray, K12: np.ndarray, K22: np.ndarray, gamma: float, C: float
) -> Program:
    r"""The dual QP of one class, Wang and Qiao (2022), Eq. (7), as a :class:`~advgame.compile.Program`.

    Variables (named blocks) ``a`` (``n_k``), ``b`` (``m``) and ``t`` (1), adjacent in that
    order.  The quadratic term is ``½ ||R^T [a; b]||^2`` with ``R R^T`` the PSD block kernel matrix
    ``[[K11, -K12], [-K12^T, K22]]`` (eigen-factor; eigenvalues below ``PSD_EIGEN_RTOL`` times the
    largest are dropped).  Solve with ``backend='highs'`` (convex QP) or ``'cvxpy'``.

    Parameters
    ----------
    K11 : ndarray of shape (n_k, n_k)
        Kernel matrix of the class points (``G_1`` in Wang and Qiao 2022).
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


class _NewtonSystem:
    """One interior-point iteration's Newton system for :func:`solve_class_dual`, factorised once
    and solved for the predictor's and the corrector's right-hand sides."""

    def __init__(self, H, scale, sign, in_a, residuals, point):
        N = H.shape[0]
        try:
            self.factor = cho_factor(H, lower=True, check_finite=False)
        except LinAlgError:  # M singular and D tiny on free coordinates: regularise
            H[np.diag_indices(N)] += np.finfo(float).eps * scale * N
            self.factor = cho_factor(H, lower=True, check_finite=False)
        self.sign, self.in_a, self.residuals, self.point = sign, in_a, residuals, point
        c, w, z1, z2 = point
        self.g = (z2 / w) * in_a  # how the bound slacks w = t - a move with t
        self.X_g, self.X_s = cho_solve(
            self.factor, np.column_stack([self.g, sign]), check_finite=False
        ).T
        self.schur = np.array(
            [
                [self.g @ self.X_g - self.g.sum(), self.g @ self.X_s],
                [sign @ self.X_g, sign @ self.X_s],
            ]
        )

    def direction(self, r1, r2):
        """The step ``(dc, dt, dλ, dw, dz1, dz2)`` that changes ``c∘z1`` by ``r1`` and ``w∘z2``
        by ``r2`` (to first order) while zeroing the KKT residuals."""
        r_c, r_t, r_e, r_u = self.residuals
        c, w, z1, z2 = self.point
        r2_u = r2 - z2 * r_u  # dw = e dt - dc + r_u restores w = u(t) - c
        X_f = cho_solve(self.factor, -r_c + r1 / c - r2_u / w, check_finite=False)
        rhs = [r_t - (r2_u / w)[self.in_a].sum() - self.g @ X_f, -r_e - self.sign @ X_f]
        dt, dlam = np.linalg.solve(self.schur, rhs)
        dc = X_f + self.X_g * dt + self.X_s * dlam
        dw = self.in_a * dt - dc + r_u
        return dc, dt, dlam, dw, (r1 - z1 * dc) / c, (r2 - z2 * dw) / w


def _step_to_boundary(values, steps):
    """The largest ``α <= 1`` keeping every ``value + α step`` non-negative."""
    alpha = 1.0
    for x, dx in zip(values, steps):
        down = dx < 0
        if down.any():
            alpha = min(alpha, float(np.min(-x[down] / dx[down])))
    return alpha


def _polish(M, sign, beta, C, c, t, objective):
    """Refine an interior-point solution of :func:`solve_class_dual` on its active set.

    Coordinates within ``POLISH_RTOL`` of a bound are fixed there; the KKT conditions on the
    others are then a linear system in ``(c_free, t, λ)``.  Its solution is kept if it is
    feasible, its multipliers have the right signs and it does not raise the objective: this
    turns the interior point's ``O(sqrt(gap))`` accuracy in ``w`` into the linear solve's.
    Otherwise ``(c, t, objective)`` is returned unchanged.
    """
    in_a = sign > 0
    upper = np.where(in_a, t, C)
    at_lower = c <= POLISH_RTOL * upper
    at_t = in_a & ~at_lower & (c >= (1 - POLISH_RTOL) * t)
    at_C = ~in_a & ~at_lower & (c >= (1 - POLISH_RTOL) * C)
    free = ~(at_lower | at_t | at_C)
    F = np.flatnonzero(free)
    fixed = C * M[:, at_C].sum(axis=1)  # M c restricted to the coordinates held at C
    A = np.zeros((F.size + 2, F.size + 2))
    rhs = np.zeros(F.size + 2)
    A[: F.size, : F.size] = M[np.ix_(F, F)]
    A[: F.size, F.size] = M[np.ix_(F, np.flatnonzero(at_t))].sum(axis=1)
    A[: F.size, F.size + 1] = -sign[F]
    rhs[: F.size] = 1 - fixed[F]
    A[F.size, : F.size] = M[np.ix_(np.flatnonzero(at_t), F)].sum(axis=0)
    A[F.size, F.size] = M[np.ix_(at_t, at_t)].sum()
    A[F.size, F.size + 1] = -at_t.sum()
    rhs[F.size] = at_t.sum() - beta - fixed[at_t].sum()
    A[F.size + 1, : F.size] = sign[F]
    A[F.size + 1, F.size] = at_t.sum()
    rhs[F.size + 1] = 1 + C * at_C.sum()
    solution = np.linalg.lstsq(A, rhs, rcond=None)[0]
    new_t = solution[F.size]
    new_c = np.where(at_t, new_t, np.where(at_C, C, 0.0))
    new_c[F] = solution[: F.size]
    gradient = M @ new_c - 1 - solution[-1] * sign
    scale = 1 + np.abs(gradient).max()
    tol = IPM_ACCEPT_TOL * scale
    feasible = (
        np.all(new_c >= -tol)
        and np.all(new_c <= np.where(in_a, new_t, C) + tol)
        and abs(sign @ new_c - 1) <= tol
        and np.all(gradient[at_lower] >= -tol)
        and np.all(gradient[at_t | at_C] <= tol)
        and np.abs(gradient[F]).max(initial=0.0) <= tol
        and abs(beta + gradient[at_t].sum()) <= tol * max(1.0, beta)
    )
    if not feasible:
        return c, t, objective
    new_c = np.clip(new_c, 0.0, np.where(in_a, new_t, C))
    new_objective = 0.5 * new_c @ M @ new_c - new_c.sum() + beta * new_t
    if new_objective > objective + IPM_ACCEPT_TOL * (1 + abs(objective)):
        return c, t, objective
    return new_c, float(new_t), float(new_objective)


def solve_class_dual(
    K: np.ndarray,
    n_class: int,
    gamma: float,
    C: float,
    tol: float = IPM_TOL,
    max_iter: int = IPM_MAX_ITER,
) -> tuple[np.ndarray, np.ndarray, float, float]:
    r"""Solve the dual QP of one class (Wang and Qiao 2022, Eq. 7) by a primal-dual interior-point method.

    Written for this problem's structure: with ``c = [a; b]``, ``σ = [1_n; -1_m]``,
    ``M = diag(σ) K diag(σ)``, ``β = n_k γ`` and the upper bounds ``u(t) = [t 1_n; C 1_m]``,

    .. math::

        \min_{c, t}\ \tfrac12 c^\top M c - 1^\top c + β t \quad\text{s.t.}\quad
        0 \le c \le u(t),\ σ^\top c = 1.

    Mehrotra predictor-corrector steps on the perturbed KKT system (multipliers ``z_1`` of
    ``c >= 0``, ``z_2`` of ``u(t) - c >= 0``, ``λ`` of the equality).  Each Newton step
    eliminates ``z_1``, ``z_2`` and solves ``(M + D_1 + D_2) Δc = ...`` (``D = z / slack``) by one
    Cholesky factorisation with three right-hand sides, leaving a 2x2 system in ``(Δt, Δλ)``: a
    dense ``O(N^3 / 3)`` factorisation per iteration, ``N = n_k + m``, typically a dozen
    iterations.  HiGHS' active-set QP solver needs from as long to several times longer on the
    same problems, with a wide spread (``advgame bench prediction-sets`` times both).  BLAS runs
    single-threaded here: classes are solved in parallel by joblib, and a second BLAS thread
    competing for a busy core made the factorisation 30 times slower in our measurements.

    Parameters
    ----------
    K : ndarray of shape (N, N)
        Kernel matrix of the class points (first ``n_class``) and the unlabelled points.
    n_class : int
    gamma, C : float
        The class error rate ``γ`` and the unlabelled weight ``C`` of Eq. (6).
    tol : float
        Stop when the KKT residuals (relative to the data's scale) and the complementarity gap
        ``c^T z_1 + (u - c)^T z_2`` (relative to ``1 + |objective|``) are at most ``tol``.  If
        rounding stalls progress first (``IPM_STALL_ITER`` steps without improvement), the best
        iterate is returned provided its largest scaled residual is at most ``IPM_ACCEPT_TOL``.
    max_iter : int

    Returns
    -------
    a : ndarray of shape (n_class,)
    b : ndarray of shape (N - n_class,)
    t : float
    objective : float
        The optimal value of Eq. (7), minus the primal's.

    Raises
    ------
    ValueError
        If ``K`` is not a finite square matrix, ``n_class`` not in ``1 .. N - 1``, ``gamma`` not
        in (0, 1) or ``C`` not a finite positive number.
    SolverError
        If the iterations do not converge within ``max_iter`` or become non-finite.
    """
    K = np.asarray(K, dtype=np.float64)
    _check_class_problem(K, n_class, gamma, C)
    N = K.shape[0]
    sign = np.concatenate([np.ones(n_class), -np.ones(N - n_class)])
    M = K * np.outer(sign, sign)
    in_a = np.arange(N) < n_class
    beta = n_class * gamma
    scale = max(1.0, float(np.abs(M).max()))
    c = np.where(in_a, 1.0 / n_class, C / 2)  # interior, not necessarily feasible
    t, lam = 2.0 / n_class, 0.0
    w = np.where(in_a, t, C) - c  # the bound slacks: an iterate, so never 0 by cancellation
    z1, z2 = np.ones(N), np.ones(N)
    best, stalled = (np.inf,), 0
    with threadpool_limits(1, user_api="blas"):
        for _ in range(max_iter):
            r_u = np.where(in_a, t, C) - c - w
            Mc = M @ c
            r_c = Mc - 1 - z1 + z2 - lam * sign
            r_t = beta - z2[in_a].sum()
            r_e = sign @ c - 1
            gap = c @ z1 + w @ z2
            objective = 0.5 * c @ Mc - c.sum() + beta * t
            merit = max(
                np.abs(r_c).max() / scale,
                abs(r_t) / (1 + beta),
                abs(r_e),
                np.abs(r_u).max() / max(t, C),
                gap / (1 + abs(objective)),
            )
            if not np.isfinite(merit):
                break
            if merit < best[0]:
                best, stalled = (merit, c[:n_class], c[n_class:], float(t), float(objective)), 0
            else:
                stalled += 1
            if merit <= tol or stalled >= IPM_STALL_ITER:
                break
            H = M + np.diag(z1 / c + z2 / w)
            kkt = _NewtonSystem(H, scale, sign, in_a, (r_c, r_t, r_e, r_u), (c, w, z1, z2))
            dc, _, _, dw, dz1, dz2 = kkt.direction(-c * z1, -w * z2)  # predictor
            alpha = _step_to_boundary((c, w, z1, z2), (dc, dw, dz1, dz2))
            gap_affine = (c + alpha * dc) @ (z1 + alpha * dz1) + (w + alpha * dw) @ (
                z2 + alpha * dz2
            )
            mu = (gap_affine / gap) ** 3 * gap / (2 * N)
            dc, dt, dlam, dw, dz1, dz2 = kkt.direction(
                mu - c * z1 - dc * dz1, mu - w * z2 - dw * dz2
            )
            alpha = min(1.0, 0.99 * _step_to_boundary((c, w, z1, z2), (dc, dw, dz1, dz2)))
            c, t, lam, w = c + alpha * dc, t + alpha * dt, lam + alpha * dlam, w + alpha * dw
            z1, z2 = z1 + alpha * dz1, z2 + alpha * dz2
    if best[0] <= IPM_ACCEPT_TOL:
        c, t, objective = _polish(M, sign, beta, C, np.concatenate(best[1:3]), *best[3:])
        return c[:n_class], c[n_class:], t, objective
    raise SolverError(
        f"the prediction-set dual (n_k={n_class}, m={N - n_class}) did not converge in "
        f"{max_iter} interior-point iterations (scaled KKT residual {best[0]:.3g}); try "
        "backend='highs' or 'cvxpy'."
    )


def recover_rho(
    class_scores: np.ndarray, unlabeled_scores: np.ndarray, gamma: float, C: float
) -> tuple[float, Solution, Program]:
    r"""The offset ``rho`` from the primal (Wang and Qiao 2022, Eq. 6) with ``w`` fixed: an LP (HiGHS).

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


def offset_from_scores(class_scores: np.ndarray, gamma: float) -> float:
    r"""The offset ``rho`` in closed form: the root of ``sum_i (1 - s_i + rho)_+ = n_k γ``.

    This is the primal of Wang and Qiao (2022), Eq. (6) with ``w`` fixed, :func:`recover_rho`'s LP,
    solved by hand: its objective falls with ``rho`` at slope
    ``<= -1``, so ``rho`` is the largest value for which the class slacks fit the budget.  With
    ``v = sort(s - 1)`` the left side is ``j rho - (v_1 + ... + v_j)`` on ``[v_j, v_{j+1}]``, so the
    root is ``rho_j = (n_k γ + v_1 + ... + v_j) / j`` for the ``j`` with ``v_j <= rho_j <=
    v_{j+1}``: one sort, ``O(n_k log n_k)``, no solver.

    Parameters
    ----------
    class_scores : ndarray of shape (n_k,)
        ``s_i = w . Phi(x_i)`` on the class points.
    gamma : float
        The class error rate ``γ``.

    Returns
    -------
    float
    """
    class_scores = np.asarray(class_scores, dtype=np.float64).ravel()
    if class_scores.size == 0 or not np.all(np.isfinite(class_scores)):
        raise ValueError("class_scores must be a non-empty array of finite numbers.")
    _check_fraction("gamma (the error rate)", gamma)
    v = np.sort(class_scores) - 1
    j = np.arange(1, v.size + 1)
    roots = (v.size * gamma + np.cumsum(v)) / j
    upper = np.append(v[1:], np.inf)
    return float(roots[np.flatnonzero(roots <= upper)[0]])


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


def median_heuristic_gamma(
    X: np.ndarray, random_state: int | np.random.Generator | np.random.RandomState | None = None
) -> float:
    r"""RBF width by the median heuristic: ``1 / median ||x_i - x_j||^2`` over pairs ``i < j``.

    The kernel is ``exp(-gamma ||x - x'||^2)``, so the median pair gets ``exp(-1)``.  Wang and Qiao
    (2022, App. A.3) search the width over the 25th-75th percentiles of the pairwise distances; the
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
        rng = (
            random_state
            if isinstance(random_state, np.random.Generator)
            else check_random_state(random_state)
        )
        X = X[rng.choice(X.shape[0], MEDIAN_HEURISTIC_MAX_POINTS, replace=False)]
    median = float(np.median(pdist(X, "sqeuclidean")))
    if not median > 0:
        raise ValueError(
            "the median heuristic needs distinct points (the median squared pairwise distance "
            "is 0); pass the RBF width gamma explicitly."
        )
    return 1.0 / median


def weighted_kernel_gradient(
    kernel: str,
    gamma: float,
    degree: float,
    coef0: float,
    X: np.ndarray,
    weights: np.ndarray,
    coef: np.ndarray,
    K: np.ndarray,
) -> np.ndarray:
    r"""``B_α^T`` of Wang and Qiao (2022), Eq. (10): row ``i`` is ``sum_j coef_j ∂K_d(x_i, x_j) / ∂d``.

    The weighted kernel is ``K_d(x, x') = K(d ∘ x, d ∘ x')`` (Eq. 8), so with
    ``Δ_ij = x_i - x_j``:

    * ``rbf``, ``exp(-γ ||d ∘ Δ_ij||^2)``: ``∂K_ij/∂d_l = -2 γ d_l Δ_ijl^2 K_ij``;
    * ``linear``, ``sum_l d_l^2 x_il x_jl``: ``∂K_ij/∂d_l = 2 d_l x_il x_jl``;
    * ``poly``, ``(γ <d∘x_i, d∘x_j> + c_0)^q``: ``∂K_ij/∂d_l = 2 q γ d_l x_il x_jl
      (γ <d∘x_i, d∘x_j> + c_0)^{q-1}``.

    The sums over ``j`` are matrix products (``Δ^2 = x_i^2 - 2 x_i x_j + x_j^2``), so no
    ``(N, N, p)`` array is formed.

    Parameters
    ----------
    kernel : {'rbf', 'linear', 'poly'}
    gamma, degree, coef0 : float
        Kernel parameters (``gamma`` is the kernel width, not the error rate).
    X : ndarray of shape (N, p)
        The points (unweighted).
    weights : ndarray of shape (p,)
        The feature weights ``d`` at which to differentiate.
    coef : ndarray of shape (N,)
        The signed dual coefficients ``[a; -b]``.
    K : ndarray of shape (N, N)
        ``K_d`` at ``weights``.

    Returns
    -------
    ndarray of shape (N, p)
    """
    cX = coef[:, None] * X
    if kernel == "rbf":
        spread = X**2 * (K @ coef)[:, None] - 2 * X * (K @ cX) + K @ (cX * X)
        return -2 * gamma * weights * spread
    if kernel == "linear":
        return 2 * weights * X * (X.T @ coef)
    U = X * weights
    D = (gamma * (U @ U.T) + coef0) ** (degree - 1)
    return 2 * gamma * degree * weights * X * (D @ cX)


def feature_selection_objective(
    K: np.ndarray,
    coef: np.ndarray,
    rho: float,
    n_class: int,
    C: float,
    penalty: float,
    weights: np.ndarray,
) -> tuple[float, float]:
    r"""Wang and Qiao (2022), Eq. (9) with the hinge loss, and its class-loss constraint.

    ``Ψ = ½ c^T K_d c - ρ + C sum_j (1 + (K_d c)_j - ρ)_+ + C_2 ||d||_1`` over the unlabelled
    points ``j``, and ``sum_i (1 - (K_d c)_i + ρ)_+`` over the class points ``i`` (feasible when
    at most ``n_k γ``).

    Returns
    -------
    value, class_loss : float
    """
    scores = K @ coef
    unlabeled_loss = np.maximum(1 + scores[n_class:] - rho, 0).sum()
    value = 0.5 * coef @ scores - rho + C * unlabeled_loss + penalty * weights.sum()
    return float(value), float(np.maximum(1 - scores[:n_class] + rho, 0).sum())


def feature_weight_step(
    B_T: np.ndarray,
    scores: np.ndarray,
    coef: np.ndarray,
    rho: float,
    weights: np.ndarray,
    n_class: int,
    error_rate: float,
    C: float,
    penalty: float,
) -> np.ndarray:
    r"""Wang and Qiao (2022), Eq. (10) with the hinge loss: a linear program in the feature weights ``d``.

    With ``(c, ρ)`` fixed and ``K_d`` linearised at ``d'``, ``(K_d c)_i ≈ s_i + B_i^T (d - d')``
    where ``s = K_{d'} c`` and ``B_i`` is row ``i`` of ``B_T``
    (:func:`weighted_kernel_gradient`), and ``½ c^T K_d c ≈ const + ½ (B c)^T d``:

    .. math::

        \min_{0 \le d \le 1,\ \xi, \eta \ge 0}\ \tfrac12 (B c)^\top d + C \sum_j \xi_j
        + C_2 1^\top d \quad\text{s.t.}\quad
        \xi_j \ge 1 + s_j + B_j^\top (d - d') - \rho,\
        \eta_i \ge 1 - s_i - B_i^\top (d - d') + \rho,\ \textstyle\sum_i \eta_i \le n_k γ.

    ``d = d'`` is feasible (``(c, ρ)`` solves the class QP at ``d'``) and the costs of ``ξ`` are
    positive, so the LP is feasible and bounded.

    Returns
    -------
    ndarray of shape (p,)
        The LP's optimal weights.
    """
    n_points, p = B_T.shape
    m = n_points - n_class
    shift = B_T @ weights
    program = Program(f"feature-weight step (n_k={n_class}, m={m}, p={p})")
    d = program.add_variables("d", p, lower=0.0, upper=1.0, cost=0.5 * (B_T.T @ coef) + penalty)
    xi = program.add_variables("xi", m, lower=0.0, cost=C)
    eta = program.add_variables("eta", n_class, lower=0.0)
    program.add_rows(
        "unlabelled margins",
        [(xi, sp.identity(m)), (d, -B_T[n_class:])],
        lower=1 + scores[n_class:] - rho - shift[n_class:],
    )
    program.add_rows(
        "class margins",
        [(eta, sp.identity(n_class)), (d, B_T[:n_class])],
        lower=1 - scores[:n_class] + rho + shift[:n_class],
    )
    program.add_rows("error budget", [(eta, np.ones((1, n_class)))], upper=n_class * error_rate)
    return program.solve("highs").x[d]


def _solve_class(K, n_class, error_rate, C, backend):
    """The class QP on the kernel matrix ``K``: signed coefficients ``[a; -b]``, ``rho`` and the
    dual's optimal value, by :func:`solve_class_dual` (``'ipm'``) or a :class:`Program`."""
    if backend == "ipm":
        a, b, _, objective = solve_class_dual(K, n_class, error_rate, C)
    else:
        program = class_dual_program(
            K[:n_class, :n_class], K[:n_class, n_class:], K[n_class:, n_class:], error_rate, C
        )
        solution = program.solve(backend)
        a, b = solution.x[program.variables["a"]], solution.x[program.variables["b"]]
        objective = solution.objective
    coef = np.concatenate([a, -b])
    coef[np.abs(coef) <= SUPPORT_RTOL * np.abs(coef).max()] = 0.0
    rho = offset_from_scores(K[:n_class] @ coef, error_rate)  # = recover_rho's LP, by hand
    return coef, rho, objective


def _select_features(points, n_class, kernel, error_rate, C, penalty, max_iter, tol, backend):
    """Algorithm 1 of Wang and Qiao (2022) at a fixed kernel width: alternate the class QP in ``(c, ρ)`` with the
    LP step (Eq. 10) in ``d`` and a backtracking line search on Eq. (9).

    A step is accepted only if it lowers Ψ and keeps ``(c, ρ)`` feasible (class loss at most
    ``n_k γ``) under the true weighted kernel; the next QP can then only lower Ψ further, so the
    recorded objective never increases.  Stops when no step is accepted or the weights move less
    than ``tol``; warns after ``max_iter`` alternations.

    Returns
    -------
    weights : ndarray of shape (p,)
    history : list of float
        Ψ after each QP.
    """
    params = {"gamma": kernel.gamma, "degree": kernel.degree, "coef0": kernel.coef0}
    weights = np.ones(points.shape[1])
    history = []
    budget = n_class * error_rate * (1 + 1e-9) + 1e-12
    for _ in range(max_iter):
        K = kernel.fit(points * weights, 1).gram(points * weights)
        coef, rho, _ = _solve_class(K, n_class, error_rate, C, backend)
        value = feature_selection_objective(K, coef, rho, n_class, C, penalty, weights)[0]
        history.append(value)
        B_T = weighted_kernel_gradient(
            kernel.kernel, X=points, weights=weights, coef=coef, K=K, **params
        )
        target = feature_weight_step(
            B_T, K @ coef, coef, rho, weights, n_class, error_rate, C, penalty
        )
        step = 1.0
        while step >= MIN_LINE_SEARCH_STEP:
            trial = np.clip(weights + step * (target - weights), 0.0, 1.0)
            K_trial = kernel.fit(points * trial, 1).gram(points * trial)
            trial_value, class_loss = feature_selection_objective(
                K_trial, coef, rho, n_class, C, penalty, trial
            )
            if trial_value < value - 1e-12 * max(1.0, abs(value)) and class_loss <= budget:
                break
            step /= 2
        else:
            return weights, history  # no descent along the LP direction: stationary
        moved = np.abs(trial - weights).max()
        weights = trial
        if moved <= tol:
            return weights, history
    warnings.warn(
        f"kernel feature selection stopped after max_iter={max_iter} alternations with the "
        f"weights still moving; increase max_iter.",
        ConvergenceWarning,
        stacklevel=3,
    )
    return weights, history


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


def _class_C(C, factor, n_unlabeled):
    """``factor * C``, where ``C`` None is the ``C := (λ m)^{-1}`` of Wang and Qiao (2022) with ``λ = AUTO_LAMBDA``."""
    return factor * (1.0 / (AUTO_LAMBDA * n_unlabeled) if C is None else C)


def calibration_size(n: int, fraction: float) -> int:
    """Points of an ``n``-point class held out for its conformal threshold: ``floor(fraction n)``
    clipped to ``1 .. n - 1`` (so both parts are non-empty; ``n >= 2``)."""
    return min(max(int(np.floor(fraction * n)), 1), n - 1)


def tuning_split(
    n_class: int,
    n_unlabeled: int,
    fraction: float,
    rng: np.random.Generator | np.random.RandomState,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Seeded held-out parts for tuning: ``(class_fit, class_held, unlabeled_fit,
    unlabeled_held)`` row indices, ``max(floor(fraction n), 1)`` held out of each sample."""
    class_rows, unlabeled_rows = rng.permutation(n_class), rng.permutation(n_unlabeled)
    n_held = max(int(np.floor(fraction * n_class)), 1)
    m_held = max(int(np.floor(fraction * n_unlabeled)), 1)
    return (
        class_rows[n_held:],
        class_rows[:n_held],
        unlabeled_rows[m_held:],
        unlabeled_rows[:m_held],
    )


def held_out_acceptance(
    class_scores: np.ndarray, unlabeled_scores: np.ndarray, error_rate: float
) -> float:
    """The tuning criterion of Wang and Qiao (2022, App. A.3): the share of held-out unlabelled points a class
    accepts at the empirical ``γ``-quantile of its held-out class scores (lower: smaller sets)."""
    threshold = np.quantile(class_scores, error_rate)
    return float(np.mean(unlabeled_scores >= threshold))


def _tune(X_class, X_unlabeled, kernel, candidates, C, error_rate, backend, fraction, rng):
    """Pick ``(weights, width, C factor)`` from ``candidates`` by the class's acceptance rate of
    held-out unlabelled points (Wang and Qiao 2022, App. A.3: the set size on held-out data), each
    candidate's threshold being the empirical ``γ``-quantile of its scores on held-out class
    points.

    A ``fraction`` of the class points and of the unlabelled points is held out (seeded by
    ``rng``); the rest fits each candidate's QP.  Returns the chosen candidate and one dict per
    candidate (``selected``, ``gamma``, ``C`` on the full sample, ``acceptance``).
    """
    class_fit, class_held, unlabeled_fit, unlabeled_held = tuning_split(
        X_class.shape[0], X_unlabeled.shape[0], fraction, rng
    )
    fit = np.vstack([X_class[class_fit], X_unlabeled[unlabeled_fit]])
    held_class, held_unlabeled = X_class[class_held], X_unlabeled[unlabeled_held]
    n_fit, m_fit = class_fit.size, unlabeled_fit.size
    table = []
    for weights, width, factor in candidates:
        kernel.gamma = width
        K = kernel.fit(fit * weights, 1).gram(fit * weights)
        coef, rho, _ = _solve_class(K, n_fit, error_rate, _class_C(C, factor, m_fit), backend)
        accepted = held_out_acceptance(
            kernel.gram(held_class * weights) @ coef - rho,
            kernel.gram(held_unlabeled * weights) @ coef - rho,
            error_rate,
        )
        table.append(
            {
                "selected": not np.all(weights == 1),
                "gamma": width,
                "C": _class_C(C, factor, X_unlabeled.shape[0]),
                "acceptance": accepted,
            }
        )
    return candidates[int(np.argmin([row["acceptance"] for row in table]))], table


def _fit_class(X_class, X_unlabeled, kernel, error_rate, C, backend, selection, tuning, seed):
    """Fit one class: feature weights, kernel width and ``C``, dual QP, support, offset.

    ``kernel.gamma`` None means the median heuristic (RBF) on the (weighted) points, and ``C``
    None means ``1 / (λ m)``.  ``selection`` is None or ``(penalties, max_iter, tol)``: kernel
    feature selection at the rule's width and ``C``, once per penalty; each distinct non-zero
    weight vector becomes a candidate.  ``tuning`` is ``(width factors, C factors,
    held-out fraction)``: the factors multiply the rule's values of whichever of width and ``C``
    are automatic; with selection, the unweighted kernel is a candidate too (a selection that
    does not help on held-out data is dropped); :func:`_tune` picks one when there are several.

    Returns ``(kernel map, coef, rho, dual objective, weights, history, C, tuning table)``.
    """
    with threadpool_limits(1, user_api="blas"):  # classes run in parallel instead
        return _fit_class_serial(
            X_class, X_unlabeled, kernel, error_rate, C, backend, selection, tuning, seed
        )


def _fit_class_serial(
    X_class, X_unlabeled, kernel, error_rate, C, backend, selection, tuning, seed
):
    rng = np.random.default_rng(seed)
    n_class, m = X_class.shape[0], X_unlabeled.shape[0]
    points = np.vstack([X_class, X_unlabeled])
    auto_width = kernel.gamma is None and kernel.kernel == "rbf"
    ones = np.ones(points.shape[1])
    if auto_width:
        kernel.gamma = median_heuristic_gamma(points, rng)
    choices, history = [(ones, kernel.gamma)], []
    if selection is not None:
        penalties, max_iter, tol = selection
        for penalty in penalties:
            weights, path = _select_features(
                points,
                n_class,
                kernel,
                error_rate,
                _class_C(C, 1.0, m),
                penalty,
                max_iter,
                tol,
                backend,
            )
            history.append(path)
            if weights.any() and not any(np.array_equal(weights, w) for w, _ in choices):
                width = (
                    median_heuristic_gamma(points * weights, rng) if auto_width else kernel.gamma
                )
                choices.append((weights, width))
    width_factors, C_factors, fraction = tuning
    # ties in held-out acceptance go to the first candidate: the sparsest weights, then the
    # factors closest to the rules' values
    choices.sort(key=lambda choice: np.count_nonzero(choice[0]))
    closest = lambda factors: sorted(factors, key=lambda f: abs(np.log(f)))  # noqa: E731
    candidates = [
        (weights, width * wf, cf)
        for weights, width in choices
        for wf in (closest(width_factors) if auto_width else (1.0,))
        for cf in (closest(C_factors) if C is None else (1.0,))
    ]
    weights, width, factor = candidates[0]
    table = []
    if len(candidates) > 1 and min(n_class, m) >= TUNING_MIN_POINTS:
        (weights, width, factor), table = _tune(
            X_class, X_unlabeled, kernel, candidates, C, error_rate, backend, fraction, rng
        )
    kernel.gamma = width
    weighted = points * weights
    K = kernel.fit(weighted, 1).gram(weighted)
    C_used = _class_C(C, factor, m)
    coef, rho, objective = _solve_class(K, n_class, error_rate, C_used, backend)
    support = np.flatnonzero(coef)
    kernel.fit(weighted[support], 1)  # prediction needs K(d ∘ x, support) only
    return kernel, coef[support], rho, objective, weights, history, C_used, table


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
    X_unlabeled_ : ndarray
        The unlabelled sample used (standardised if ``standardize``).
    outlier_label_, ambiguous_label_ : the markers :meth:`predict` uses.

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
        if self.feature_selection and (callable(self.kernel) or self.kernel not in _WEIGHTED):
            raise ValueError(
                f"feature_selection needs the kernel's gradient in the feature weights, available "
                f"for kernel in {_WEIGHTED}; got kernel={self.kernel!r}."
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
            delayed(_fit_class)(
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
