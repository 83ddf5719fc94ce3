r"""The solvers of the generalised prediction sets (Wang and Qiao 2022): the per-class kernel QP,
its offset, and kernel feature selection, which :class:`advgame.models.GeneralizedPredictionSet`
calls.

For every class ``k`` separately, with training points ``G_k`` (``n_k`` of them) and ``m``
unlabelled points, the dual of Eq. (6) of Wang and Qiao (2022) is Eq. (7), restated in the design
notes (docs/design.md, Appendix C):

.. math::

    \min_{a, b, t}\ \tfrac12 (a^\top K_{11} a + b^\top K_{22} b - 2 a^\top K_{12} b)
    - 1^\top a - 1^\top b + t\, n_k \gamma \quad\text{s.t.}\quad
    0 \le a \le t,\ 0 \le b \le C,\ 1^\top a - 1^\top b = 1,\ t \ge 0,

whose optimal value is minus the primal's.  It is solved by :func:`solve_class_dual`, a
primal-dual interior-point method for its structure on the scaffold of
:mod:`advgame.solvers.interior_point` (one dense Cholesky factorisation per iteration, then an
active-set polish), or as a :class:`~advgame.compile.Program` (:func:`class_dual_program`) by HiGHS
or cvxpy; :func:`solve_class` does either and reads off the signed coefficients and the offset.
Given ``w``, the primal is a linear program in ``(rho, eta, xi)`` (Wang and Qiao 2022, §3.2,
"plugging w back", :func:`recover_rho`), whose optimal ``rho`` has a closed form
(:func:`offset_from_scores`).

Kernel feature selection (Wang and Qiao 2022, §3.3, Eq. 8-10, Algorithm 1; :func:`select_features`)
alternates the QP with a linear program in the feature weights (:func:`feature_weight_step`,
:func:`weighted_kernel_gradient`) under a line search on Eq. (9)
(:func:`feature_selection_objective`).

:func:`fit_class` fits one class from end to end: the feature weights, the kernel width (median
heuristic, :func:`median_heuristic_gamma`) and ``C``, chosen on held-out data as in Wang and Qiao
(2022, App. A.3), then the QP; the estimator runs it for every class in parallel.
"""

from __future__ import annotations

import numbers
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.spatial.distance import pdist
from threadpoolctl import threadpool_limits

from ..compile import Program
from ..exceptions import ConvergenceWarning, SolverError
from ..features import psd_eigen
from .interior_point import NewtonSystem, PathProblem, follow_path

if TYPE_CHECKING:
    from ..compile import Solution

__all__ = [
    "class_dual_program",
    "feature_selection_objective",
    "feature_weight_step",
    "fit_class",
    "held_out_acceptance",
    "median_heuristic_gamma",
    "offset_from_scores",
    "recover_rho",
    "select_features",
    "solve_class",
    "solve_class_dual",
    "tuning_split",
    "weighted_kernel_gradient",
]

#: Dual coefficients with ``|coef| <= SUPPORT_RTOL * max|coef|`` are dropped from the support.
SUPPORT_RTOL = 1e-9
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
WEIGHTED_KERNELS = ("linear", "poly", "rbf")
#: Automatic kernel widths and ``C`` are tuned per class over these multiples of the rules'
#: values (median heuristic; ``1 / (λ m)``), on ``TUNING_FRACTION`` of the class's fitting points
#: and of the unlabelled points held out (:func:`fit_class`).
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


class _ClassDualSystem(NewtonSystem):
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

    def direction(self, tau, corrections=None):
        """The step ``(dc, dt, dλ, dw, dz1, dz2)`` that moves ``c∘z1`` and ``w∘z2`` to ``tau``
        (less the ``corrections``) to first order while zeroing the KKT residuals."""
        first, second = (0.0, 0.0) if corrections is None else corrections
        r_c, r_t, r_e, r_u = self.residuals
        c, w, z1, z2 = self.point
        r1, r2 = tau - c * z1 - first, tau - w * z2 - second
        r2_u = r2 - z2 * r_u  # dw = e dt - dc + r_u restores w = u(t) - c
        X_f = cho_solve(self.factor, -r_c + r1 / c - r2_u / w, check_finite=False)
        rhs = [r_t - (r2_u / w)[self.in_a].sum() - self.g @ X_f, -r_e - self.sign @ X_f]
        dt, dlam = np.linalg.solve(self.schur, rhs)
        dc = X_f + self.X_g * dt + self.X_s * dlam
        dw = self.in_a * dt - dc + r_u
        return dc, dt, dlam, dw, (r1 - z1 * dc) / c, (r2 - z2 * dw) / w

    def pairs(self, step):
        dc, _, _, dw, dz1, dz2 = step
        c, w, z1, z2 = self.point
        return ((c, dc, z1, dz1), (w, dw, z2, dz2))


class _ClassDualPath(PathProblem):
    """:func:`solve_class_dual` as a path-following problem: the iterate ``(c, t, λ, w, z_1,
    z_2)``, its certificate (the largest scaled KKT residual) and its Newton system."""

    def __init__(self, M, sign, n_class, beta, C, tol):
        self.M, self.sign, self.beta, self.C, self.tol = M, sign, beta, C, tol
        N = M.shape[0]
        self.in_a = np.arange(N) < n_class
        self.scale = max(1.0, float(np.abs(M).max()))
        self.c = np.where(self.in_a, 1.0 / n_class, C / 2)  # interior, not necessarily feasible
        self.t, self.lam = 2.0 / n_class, 0.0
        # the bound slacks: an iterate, so never 0 by cancellation
        self.w = np.where(self.in_a, self.t, C) - self.c
        self.z1, self.z2 = np.ones(N), np.ones(N)

    def certify(self):
        c, t, w, z1, z2, sign, in_a = self.c, self.t, self.w, self.z1, self.z2, self.sign, self.in_a
        r_u = np.where(in_a, t, self.C) - c - w
        Mc = self.M @ c
        r_c = Mc - 1 - z1 + z2 - self.lam * sign
        r_t = self.beta - z2[in_a].sum()
        r_e = sign @ c - 1
        gap = c @ z1 + w @ z2
        self.objective = 0.5 * c @ Mc - c.sum() + self.beta * t
        self.residuals = (r_c, r_t, r_e, r_u)
        merit = max(
            np.abs(r_c).max() / self.scale,
            abs(r_t) / (1 + self.beta),
            abs(r_e),
            np.abs(r_u).max() / max(t, self.C),
            gap / (1 + abs(self.objective)),
        )
        return np.array([merit])

    def keep(self, at, improved):
        self.best = (self.c, float(self.t), float(self.objective))

    def newton_system(self):
        H = self.M + np.diag(self.z1 / self.c + self.z2 / self.w)
        point = (self.c, self.w, self.z1, self.z2)
        return _ClassDualSystem(H, self.scale, self.sign, self.in_a, self.residuals, point)

    def move(self, step, t):
        dc, dt, dlam, dw, dz1, dz2 = step
        (length,) = t
        self.c, self.t, self.lam = (
            self.c + length * dc,
            self.t + length * dt,
            self.lam + length * dlam,
        )
        self.w = self.w + length * dw
        self.z1, self.z2 = self.z1 + length * dz1, self.z2 + length * dz2


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
    progress: Any = None,
) -> tuple[np.ndarray, np.ndarray, float, float]:
    r"""Solve the dual QP of one class (Wang and Qiao 2022, Eq. 7) by a primal-dual interior-point method.

    Written for this problem's structure: with ``c = [a; b]``, ``σ = [1_n; -1_m]``,
    ``M = diag(σ) K diag(σ)``, ``β = n_k γ`` and the upper bounds ``u(t) = [t 1_n; C 1_m]``,

    .. math::

        \min_{c, t}\ \tfrac12 c^\top M c - 1^\top c + β t \quad\text{s.t.}\quad
        0 \le c \le u(t),\ σ^\top c = 1.

    Mehrotra predictor-corrector steps on the perturbed KKT system
    (:func:`advgame.solvers.interior_point.follow_path`) (multipliers ``z_1`` of
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
        iterate is returned provided its largest scaled residual is at most ``IPM_ACCEPT_TOL``
        (so it is, too, when a Newton system cannot be factorised).
    max_iter : int
    progress : Phase, optional
        Told every interior-point step (:class:`advgame.solvers._progress.Phase`).

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
    path = _ClassDualPath(K * np.outer(sign, sign), sign, n_class, n_class * gamma, C, tol)
    with threadpool_limits(1, user_api="blas"):
        best = follow_path(path, max_iter, IPM_STALL_ITER, progress)[0][0]
    if best <= IPM_ACCEPT_TOL:
        c, t, objective = _polish(path.M, sign, path.beta, C, *path.best)
        return c[:n_class], c[n_class:], t, objective
    raise SolverError(
        f"the prediction-set dual (n_k={n_class}, m={N - n_class}) did not converge in "
        f"{max_iter} interior-point iterations (scaled KKT residual {best:.3g}); try "
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


def solve_class(K, n_class, error_rate, C, backend):
    """The class QP on the kernel matrix ``K`` (class points first): signed coefficients ``[a;
    -b]`` (those below :data:`SUPPORT_RTOL` of the largest zeroed), ``rho`` and the dual's optimal
    value, by :func:`solve_class_dual` (``backend='ipm'``) or :func:`class_dual_program`
    (``'highs'``, ``'cvxpy'``)."""
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


def select_features(points, n_class, kernel, error_rate, C, penalty, max_iter, tol, backend):
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
        coef, rho, _ = solve_class(K, n_class, error_rate, C, backend)
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


# ------------------------------------------------------------- one class: tuning, then the fit
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
        from sklearn.utils import check_random_state  # scikit-learn loads only when needed

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


def _class_C(C, factor, n_unlabeled):
    """``factor * C``, where ``C`` None is the ``C := (λ m)^{-1}`` of Wang and Qiao (2022) with ``λ = AUTO_LAMBDA``."""
    return factor * (1.0 / (AUTO_LAMBDA * n_unlabeled) if C is None else C)


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
        coef, rho, _ = solve_class(K, n_fit, error_rate, _class_C(C, factor, m_fit), backend)
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


def fit_class(X_class, X_unlabeled, kernel, error_rate, C, backend, selection, tuning, seed):
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
            weights, path = select_features(
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
    coef, rho, objective = solve_class(K, n_class, error_rate, C_used, backend)
    support = np.flatnonzero(coef)
    kernel.fit(weighted[support], 1)  # prediction needs K(d ∘ x, support) only
    return kernel, coef[support], rho, objective, weights, history, C_used, table
