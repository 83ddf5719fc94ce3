r"""Certified training with the exact kernel: Newton steps on smoothed surrogates, and dual
coordinate ascent.

The kernel solvers work with the exact Gram matrix ``K = K(X, X)`` of the training inputs in
the representer form of :class:`advgame.features.KernelFeatures`: ``theta = sum_{m, j} A_{mj}
psi(x_m, j)``, potentials ``F = K A`` and ``||theta||_H^2 = tr(A^T K A)``.  No low-rank
approximation is made; the certificate is the RKHS form of :func:`advgame.solvers.dual_bound`
(:func:`kernel_dual_bound`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg

from .. import _kernels
from ..exceptions import NotApplicableError
from ..uncertainty import NormBall, SoftMoments
from ._progress import quiet
from .certificates import _residual, _residual_bound, entropies, exact_matching
from .dual_ascent import (
    SHRINK_EPOCHS,
    SHRINK_KEPT,
    _Ascent,
    _columns,
    _dual_obstacle,
)
from .first_order import TrainingResult, _warn_uncertified
from .smoothing import (
    MAX_STALLS,
    MU_SHRINK,
    NEXT_STAGE,
    STALLED,
    STALLED_AFTER_STEPS,
    _unsmoothed,
    continuation,
    smoothed_game,
)

__all__ = [
    "fit_kernel",
    "fit_kernel_dual",
    "kernel_dual_bound",
    "kernel_obstacle",
    "kernel_regularizer",
]


#: Relative residual (in the ``K``-norm) at which the conjugate gradients of a kernel Newton
#: step stop (at most; ``c mu`` relative to the loss range when smaller, ``c`` from
#: :data:`KERNEL_CG_FACTORS`), and their iterations at most.
KERNEL_CG_TOL, KERNEL_CG_STEPS = 1e-2, 200
#: The factors ``c`` of the CG tolerance ``c mu``: the first, then each next one when the
#: Newton decrement says a stage is solved and the dual bound says it is not (the inexact steps
#: misjudge it).  With ``10 mu`` alone the zero-one game on 150 and 300 optdigits rows with an
#: RKHS ball of radius 0.01 stalled at a gap of 4e-4 (1,000-5,000 steps, uncertified); with
#: ``0.01 mu`` from the start it certifies in 61-127 steps, but the cost-matrix fits take up to
#: 1.5x longer: so the tolerance tightens only where the bound asks for it.
KERNEL_CG_FACTORS = (10.0, 1.0, 0.1, 0.01)
#: Problems of at most this many coefficients (rows times labels) solve their Newton systems
#: exactly (:func:`_kernel_direct`) instead of by conjugate gradients.  At small ``lambda`` the
#: system is ill-conditioned and the inexact steps stall: the ordinal game on machinecpu's 146
#: rows at ``lambda = 1e-4`` took 1,000 Newton steps and 2 s without certifying (the damping
#: grows to 1e4 times ``s``), then 14 s of cutting planes; with exact steps it certifies in
#: 50 steps, 1.3 s.  Iris (150 x 3, zero-one, ``1e-4``): 0.13 s against 0.78 s.  Larger
#: systems cost more than the steps they save (300 redwine rows x 6 labels: 19 s against 2.8 s).
KERNEL_DIRECT_SIZE = 1_000
#: Factors of the Newton damping after a full step and after a shortened one (divided by the
#: step length then).  Measured on optdigits (1,000 rows, zero-one, ``tol = 1e-4``): 66 steps,
#: against 72-145 for gentler or steeper factors and 170 without damping.
DAMPING_DOWN, DAMPING_UP = 0.1, 2.0
#: :func:`fit_kernel` computes its Newton directions with a single-precision copy of ``K``
#: from this many rows when ``tol`` is at least :data:`KERNEL_SINGLE_TOL` (2.5x faster
#: products on optdigits; the objective and the certificate stay in double precision).
KERNEL_SINGLE_ROWS, KERNEL_SINGLE_TOL = 2_000, 1e-5
#: A product ``K M`` uses only the nonzero rows of ``M`` when they are at most this fraction.
_SPARSE_ROWS = 0.5


def kernel_obstacle(game: Any, uncertainty: Any) -> str | None:
    """Why :func:`fit_kernel` cannot certify this problem, or None when it can.

    ``'exact'`` for exact moment matching (``Exact``, a ball of radius 0: the dual bound needs a
    moment set with interior; the compiled program certifies instead); a sentence for a norm
    ball other than the RKHS 2-norm (no meaning in the RKHS), an uncertainty set without an
    RKHS form, or a game without a smoothing by :func:`smoothed_game`.
    """
    if exact_matching(uncertainty):
        return "exact"
    if isinstance(uncertainty, NormBall) and uncertainty.norm != 2:
        return (
            f"NormBall(norm={uncertainty.norm!r}) has no meaning in the RKHS: kernel features "
            "support norm=2 (the RKHS norm) and soft moments only"
        )
    if not isinstance(uncertainty, (SoftMoments, NormBall)):
        return f"{type(uncertainty).__name__} has no RKHS form (soft moments or an l2 ball)"
    return _unsmoothed(game)


def kernel_regularizer(uncertainty: Any, norm2: float, nu: float = 0.0) -> tuple[float, float]:
    r"""``(R, s)`` as functions of ``t = ||theta||_H^2``, with ``grad R = s theta``.

    Soft moments: ``R = lam t / 2``, ``s = lam``.  An RKHS ball of radius ``eps``:
    ``R = eps sqrt(t)`` (``nu = 0``) or its Moreau envelope
    ``R_nu = max_{||g||_H <= eps} <g, theta> - nu/2 ||g||_H^2``, which is ``t / (2 nu)`` when
    ``sqrt(t) <= eps nu`` and ``eps sqrt(t) - nu eps^2 / 2`` beyond (gradient ``s theta`` with
    ``s = 1/nu`` and ``eps / sqrt(t)``).  In the representer form the gradient with respect to
    ``A`` is ``s K A``.
    """
    if isinstance(uncertainty, SoftMoments):
        return 0.5 * uncertainty.lam * norm2, uncertainty.lam
    eps, norm = uncertainty.radius, float(np.sqrt(max(norm2, 0.0)))
    if nu > 0 and norm <= eps * nu:
        return 0.5 * norm2 / nu, 1.0 / nu
    value = eps * norm - (0.5 * nu * eps * eps if nu > 0 else 0.0)
    return value, (eps / norm if norm > 0 else 0.0)


def _kernel_product(K, M, rows=None):
    """``K M`` from the rows of ``M`` that are not zero (``rows``, found when None); ``K`` is
    symmetric, so ``K[:, rows] = K[rows].T`` is read by rows."""
    if rows is None:
        rows = np.flatnonzero(np.any(M != 0, axis=1))
    if rows.size > _SPARSE_ROWS * K.shape[0]:
        return _dot(K, M)
    if rows.size == 0:
        return np.zeros((K.shape[0], M.shape[1]))
    return _dot(K[rows].T, M[rows])


def _dot(K, M):
    """``K @ M`` in ``K``'s precision (no upcast copy of a single-precision ``K``), as doubles."""
    return np.asarray(K @ M.astype(K.dtype, copy=False), dtype=np.float64)


def kernel_dual_bound(
    game: Any,
    K: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray,
    uncertainty: Any,
    Q: np.ndarray,
) -> float:
    r"""A certified lower bound on the kernel learning optimum from adversaries ``Q``.

    Weak duality in the RKHS (Fathony et al. 2018a, Theorem 2, with the moment constraint
    relaxed as in Farnia and Tse 2016, Theorem 3): for any rows ``q_i`` in the simplex and
    ``G = diag(w) (E_y - Q)`` (``E_y`` the one-hot labels), the residual
    ``g = sum_ij G_ij psi(x_i, j)`` has ``||g||_H^2 = tr(G^T K G)``, and

    .. math::  D(Q) = \max_{0 \le r \le 1} \sum_i w_i H_L(q_{r,i}) - R^*(r g) \le J^*,
               \qquad q_r = (1 - r) e_y + r q,

    with ``R^*(g) = ||g||_H^2 / (2 lam)`` for soft moments and the indicator of
    ``||g||_H <= eps`` for an RKHS ball (the best ``r`` as in :func:`dual_bound`).  ``K`` is
    the symmetric Gram matrix of the training inputs; only the rows of ``G`` that are not zero
    are multiplied.
    """
    G, support = _residual(Q, y, weights)
    norm2 = 0.0
    if support.size:
        Gs = G[support]
        norm2 = float(np.einsum("ij,ij->", Gs, _submatrix(K, support) @ Gs))
    return _residual_bound(game.loss.matrix, y, weights, uncertainty, Q, norm2)


def _kernel_cg(K, apply_c, s, b, tolerance, max_iter):
    r"""Solve ``(s I + C K) x = b`` by conjugate gradients in the ``K`` inner product.

    ``C`` (symmetric positive semi-definite, ``apply_c``) and ``K`` make ``C K`` self-adjoint
    for ``<u, v>_K = tr(u^T K v)``, where ``s I + C K`` is positive definite: this is the
    Newton system of Chapelle (2007), which avoids the squared conditioning of
    ``K C K + s K``.  Products with ``K`` are carried by recurrence, one per iteration.
    """
    x = np.zeros_like(b)
    r = b.copy()
    Kr = _dot(K, r)
    rho = float(np.einsum("ij,ij->", r, Kr))
    if rho <= 0:
        return x, np.zeros_like(b)
    p, Kp = r.copy(), Kr.copy()
    Kx = np.zeros_like(b)
    goal = tolerance**2 * rho
    for _ in range(max_iter):
        CKp = apply_c(Kp)
        Mp = s * p + CKp
        KMp = s * Kp + _dot(K, CKp)
        denominator = float(np.einsum("ij,ij->", p, KMp))
        if denominator <= 1e-300:
            break
        alpha = rho / denominator
        x += alpha * p
        Kx += alpha * Kp
        r -= alpha * Mp
        Kr -= alpha * KMp
        new = float(np.einsum("ij,ij->", r, Kr))
        if new <= goal:
            break
        p *= new / rho
        p += r
        Kp *= new / rho
        Kp += Kr
        rho = new
    return x, Kx


def _kernel_direct(K, apply_c, s, b):
    r"""Solve ``(s I + C K) x = b`` exactly (LU of the ``rk x rk`` matrix).

    ``C`` is block diagonal (one ``k x k`` block per row), so its blocks are ``apply_c`` of the
    ``k`` unit directions given to every row at once, and ``(C K)_{(i,a),(l,b)} = C_i[a, b]
    K_il``."""
    r, k = b.shape
    blocks = np.empty((r, k, k))
    unit = np.zeros((r, k))
    for j in range(k):
        unit[:, j] = 1.0
        blocks[:, :, j] = apply_c(unit)
        unit[:, j] = 0.0
    system = np.einsum("il,iab->ialb", K, blocks).reshape(r * k, r * k)
    system[np.diag_indices_from(system)] += s
    return scipy.linalg.solve(system, b.ravel(), check_finite=False).reshape(r, k)


def _kernel_newton_step(K, gradient, curvature, weights, s, tolerance, damping=0.0):
    r"""``(dA, K dA)`` solving ``(s I + C K) dA = -gradient`` (``gradient = W (Q - E) + s A``,
    so that ``K gradient`` is the gradient of ``J_mu`` in ``A``; ``C = W dQ/dF`` the curvature).

    With ``s + damping`` on the diagonal (Levenberg-Marquardt damping in the ``K`` metric),
    rows without curvature take ``dA_i = -gradient_i / (s + damping)`` directly; the rest solve
    the system reduced to them by :func:`_kernel_cg` with ``K`` restricted to their rows and
    columns.  (Undamped, a row whose adversary plays its label would return to zero at once;
    measured on optdigits, that makes the Newton steps oscillate and stall.)
    """
    dA = -gradient / (s + damping)
    rows = curvature.rows
    if rows.size:
        dA[rows] = 0.0
    KdA = _kernel_product(K, dA)
    if rows.size == 0:
        return dA, KdA
    w = weights[rows, None]

    def apply_c(D):
        out = curvature.apply(D)
        out *= w
        return out

    b = -gradient[rows] - apply_c(KdA[rows])
    if K.shape[0] * b.shape[1] <= KERNEL_DIRECT_SIZE:
        x = _kernel_direct(_submatrix(K, rows), apply_c, s + damping, b)
    else:
        x, _ = _kernel_cg(_submatrix(K, rows), apply_c, s + damping, b, tolerance, KERNEL_CG_STEPS)
    dA[rows] = x
    KdA += _dot(K, dA) if rows.size == K.shape[0] else _dot(K[rows].T, x)
    return dA, KdA


def _submatrix(K, rows):
    """``K[rows][:, rows]`` (``K`` itself when ``rows`` are all of them)."""
    return K if rows.size == K.shape[0] else _kernels.submatrix(K, rows, K, rows)


def fit_kernel(
    game: Any,
    K: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray,
    uncertainty: Any,
    A0: np.ndarray | None = None,
    tol: float = 1e-4,
    max_iter: int = 1000,
    mu0: float | None = None,
    warn: bool = True,
    method: str = "auto",
    progress: Any = None,
) -> TrainingResult:
    r"""Certified training with the exact kernel: smoothing, Newton steps and an RKHS bound.

    Minimises ``J(A) = sum_i w_i (value(f_i) - f_{i,y_i}) + R(theta)`` with ``F = K A`` and
    ``R = lam/2 tr(A^T K A)`` (soft moments) or ``eps sqrt(tr(A^T K A))`` (an RKHS ball), the
    representer form of Fathony et al. (2018a), §6.2.  Each stage minimises the smoothed
    ``J_mu`` (the game by :func:`smoothed_game`, an RKHS ball by its Moreau envelope of
    parameter ``nu = mu / eps^2``, :func:`kernel_regularizer`) by Newton steps in the form of
    Chapelle (2007): with ``grad_A J_mu = K g``, ``g = W (Q_mu - E_y) + s A``, the step solves
    ``(s I + C K) dA = -g`` (``C = W dQ_mu/dF``, zero on the rows whose smoothed adversary is a
    vertex, so those rows take ``dA = -g / s`` and conjugate gradients run on the others only,
    with ``K`` restricted to them, or an exact solve for problems of at most
    :data:`KERNEL_DIRECT_SIZE` coefficients, where the inexact steps stall; for the ball the
    rank-one part of the envelope's Hessian is left out, which keeps a descent direction), damped by ``damping`` added to ``s``
    (Levenberg-Marquardt in the ``K`` metric: :data:`DAMPING_DOWN` after a full step,
    :data:`DAMPING_UP` over the step length after a shortened one).  An Armijo line search
    moves along the step (``K dA`` is computed once; the trial points cost one smoothed game
    each).  When the Newton decrement says the stage may be over, the smoothed adversaries give
    :func:`kernel_dual_bound` ``<= J*``; the run stops when
    ``min J - max D <= tol * max(1, |J|)``.  ``mu`` shrinks by :data:`MU_SHRINK` when the gap
    left is the smoothing part ``sum_i w_i (value(f_i) - H_L(q_i) - f_i^T q_i)`` (plus
    ``R - <theta, grad R_nu>`` for a ball), as in :func:`fit_smoothed`.  Each step costs about
    three products of ``K`` (or of its rows with curvature) with an ``n x k`` matrix, in single
    precision from :data:`KERNEL_SINGLE_ROWS` rows; the objective, its potentials at every new
    stage and the bound are computed in double precision.

    Parameters
    ----------
    game : Game
    K : ndarray of shape (n, n)
        The symmetric Gram matrix ``K(X, X)`` of the training inputs (computed once per fit).
    y, weights : ndarray of shape (n,)
        Label indices and normalised sample weights.
    uncertainty : SoftMoments or NormBall with ``norm=2``
    A0 : ndarray, optional
        Starting coefficients, shape ``(n, k)`` or flattened.
    tol, max_iter, mu0, warn :
        As for :func:`fit_smoothed` (``max_iter`` counts Newton steps, or epochs of
        ``method='dual'``).
    method : {'auto', 'newton', 'dual'}
        ``'dual'``: :func:`fit_kernel_dual` (the zero-one and abstain losses with soft
        moments, from ``A = 0`` only); ``'auto'`` uses it wherever it applies (measured on
        optdigits, 3,934 rows: 0.3 s against 2.7 s of Newton steps for zero-one; abstain on a
        56% part of satimage at ``lam = 1e-4``: 1.0 s against 15 s), Newton steps elsewhere.
    progress : Phase, optional
        Told every step or epoch (:class:`advgame.solvers._progress.Phase`).

    Returns
    -------
    TrainingResult
        ``theta = A.ravel()`` (the best ``J`` met, evaluated exactly with ``F = K A``), the
        certified ``gap`` and ``message`` (``'certified'`` exactly when
        ``gap <= tol * max(1, |objective|)``).

    Raises
    ------
    ValueError
        For a norm ball other than the RKHS 2-norm, or an unknown ``method``.
    NotApplicableError
        For the other obstacles of :func:`kernel_obstacle`.
    """
    obstacle = kernel_obstacle(game, uncertainty)
    if obstacle is not None and obstacle.startswith("NormBall"):
        raise ValueError(f"fit_kernel: {obstacle}.")
    if obstacle is not None:
        raise NotApplicableError(f"fit_kernel cannot certify this problem: {obstacle}.")
    if method not in ("auto", "newton", "dual"):
        raise ValueError(f"method must be 'auto', 'newton' or 'dual'; got {method!r}.")
    dual_obstacle = _dual_obstacle(game, uncertainty, A0)
    if method == "dual" and dual_obstacle is not None:
        raise NotApplicableError(f"fit_kernel(method='dual'): {dual_obstacle}.")
    if method != "newton" and dual_obstacle is None:
        return fit_kernel_dual(game, K, y, weights, uncertainty, tol, max_iter, warn, progress)
    smooth = smoothed_game(game)
    n, k = K.shape[0], game.n_labels
    L = game.loss.matrix
    scale = max(float(np.max(L) - np.min(L)), 1e-12)
    mu = 0.1 * scale if mu0 is None else mu0
    radius = getattr(uncertainty, "radius", 1.0)
    index = np.arange(n)
    A = np.zeros((n, k)) if A0 is None else np.array(A0, dtype=float).reshape(n, k)
    F = _kernel_product(K, A)
    best_value, best_A, lower = np.inf, A.copy(), -np.inf
    # the Newton directions in single precision on large problems (the potentials drift from
    # K A by about 1e-7 relative; they are recomputed in double precision at every stage, and
    # the objective and the bound always are)
    single = n >= KERNEL_SINGLE_ROWS and tol >= KERNEL_SINGLE_TOL
    working = K.astype(np.float32) if single else K

    def evaluate(A, F, mu):
        """``J_mu``, the gradient factor ``g``, the state kept for the checks."""
        value_mu, Q, exact, curvature = smooth(F, mu)
        observed = F[index, y]
        norm2 = float(np.einsum("ij,ij->", A, F))
        penalty, s = kernel_regularizer(uncertainty, norm2, mu / radius**2)
        gradient = Q * weights[:, None]
        gradient[index, y] -= weights
        gradient += s * A
        state = (Q, exact - observed, norm2, s, curvature)
        return float(weights @ (value_mu - observed)) + penalty, gradient, state

    def check(A, F, state):
        """The exact ``J`` (best kept) and the smoothing part of the gap."""
        nonlocal best_value, best_A
        Q, losses, norm2, s, _ = state
        penalty = kernel_regularizer(uncertainty, norm2)[0]
        J = float(weights @ losses) + penalty
        if J < best_value:
            best_value, best_A = J, A.copy()
        entropy = entropies(L, Q)
        inner = float(weights @ (losses + F[index, y] - entropy - np.einsum("ij,ij->i", F, Q)))
        if isinstance(uncertainty, NormBall):
            inner += penalty - s * norm2
        return max(inner, 0.0)

    n_iter, damping, stalled, first, accuracy = 0, 0.0, False, True, 0
    phase = quiet(progress)

    def stage(mu):
        """Newton steps on ``J_mu`` from ``A`` (``F`` recomputed from ``K`` after the first
        stage, which drops the single-precision drift)."""
        nonlocal A, F, lower, n_iter, damping, stalled, first, accuracy
        if not first and working is not K:
            F = _kernel_product(K, A)
        first = False
        J_mu, gradient, state = evaluate(A, F, mu)
        stepped = False
        while True:
            inner = check(A, F, state)
            target = tol * max(1.0, abs(best_value))
            s, curvature = state[3], state[4]()
            # smaller mu, sharper curvature: solve more accurately (measured on iris at
            # tol=1e-6: 1,000 steps did not certify with the CG tolerance fixed at 1e-2, 130
            # did with 1e-4)
            cg_tol = min(KERNEL_CG_TOL, KERNEL_CG_FACTORS[accuracy] * mu / scale)
            dA, KdA = _kernel_newton_step(working, gradient, curvature, weights, s, cg_tol, damping)
            slope = float(np.einsum("ij,ij->", gradient, KdA))
            if slope >= 0:  # an inexact solve that is no descent direction: scaled gradient
                dA = -gradient / s
                KdA = _kernel_product(working, dA)
                slope = float(np.einsum("ij,ij->", gradient, KdA))
            # -slope / 2 estimates J_mu - min J_mu (the Newton decrement): the bound (one
            # product with K) is computed only when the gap may be certified or the stage may
            # end
            decrement = -0.5 * slope
            if decrement <= max(inner, target) or decrement + inner <= target or stalled:
                lower = max(lower, kernel_dual_bound(game, K, y, weights, uncertainty, state[0]))
                gap = best_value - lower
                if gap <= target:
                    return "certified"
                if gap - inner <= max(inner, 0.5 * target):
                    stalled = False
                    return NEXT_STAGE
                # solved by the decrement, not by the bound: more accurate steps from here on
                accuracy = min(accuracy + 1, len(KERNEL_CG_FACTORS) - 1)
            phase.step(n_iter, best_value - lower, J=best_value, mu=mu)
            if n_iter >= max_iter:
                return f"max_iter={max_iter} reached"
            n_iter += 1
            t = 1.0
            while t > 1e-12 and slope < 0:
                A_t, F_t = A + t * dA, F + t * KdA
                J_t, gradient_t, state_t = evaluate(A_t, F_t, mu)
                if J_t <= J_mu + 1e-4 * t * slope:
                    A, F, J_mu, gradient, state = A_t, F_t, J_t, gradient_t, state_t
                    stalled, stepped = False, True
                    break
                t *= 0.5
            else:  # no step decreases J_mu: a smaller mu, or give up
                stalled = True
            # Levenberg-Marquardt damping in the K metric: shorter steps where the smoothed
            # adversaries change piece within a full step
            damping = damping * DAMPING_DOWN if t == 1.0 else max(damping, s) * DAMPING_UP / t
            if stalled:
                return STALLED_AFTER_STEPS if stepped else STALLED

    outcome, mu, stages = continuation(
        stage, mu, lambda mu: mu * MU_SHRINK, 1e-14 * scale, MAX_STALLS
    )
    message = f"stalled at mu={mu:.1e}" if outcome is STALLED else outcome
    # the objective of the returned coefficients with the potentials recomputed from K
    F_best = _kernel_product(K, best_A)
    norm2 = float(np.einsum("ij,ij->", best_A, F_best))
    value = game.value_and_adversary(F_best)[0]
    best_value = float(weights @ (value - F_best[index, y]))
    best_value += kernel_regularizer(uncertainty, norm2)[0]
    gap = max(best_value - lower, 0.0)
    certified = gap <= tol * max(1.0, abs(best_value))
    if message == "certified" and not certified:
        message = "certified, then lost to rounding in the final evaluation"
    if not certified:
        message = f"{message}: gap {gap:.2e} above tol={tol:g} * max(1, |J|) after {stages} stages"
        if warn:
            _warn_uncertified("kernel solver", message, best_value)
    limit_reached = message.startswith("max_iter")
    return TrainingResult(best_A.ravel(), best_value, n_iter, message, gap, limit_reached)


def fit_kernel_dual(
    game: Any,
    K: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray,
    uncertainty: SoftMoments,
    tol: float = 1e-4,
    max_iter: int = 1000,
    warn: bool = True,
    progress: Any = None,
) -> TrainingResult:
    r"""Certified kernel training of the zero-one or abstain game by dual coordinate ascent.

    The dual of the kernel learning problem with soft moments (:func:`kernel_dual_bound`,
    Fathony et al. 2018a, Theorem 2; Farnia and Tse 2016, Theorem 3) is

    .. math::  \max_{q_i \in \Delta} \sum_i w_i H(q_i)
               - \frac{1}{2\lambda} \operatorname{tr}(G^\top K G),
               \qquad G = W (E_y - Q), \quad A = G / \lambda, \quad F = K A,

    with ``H(q) = c (1 - max_j q_j)`` for zero-one and ``H(q) = min(c (1 - max_j q_j), c
    alpha)`` for abstain (``alpha <= 1/2``; Fathony et al. 2018a, Theorem 12).  With the other
    rows fixed, row ``i``'s best ``q`` maximises ``H(q) + q^T f_i - (s_i/2) ||q - q_i||^2``,
    ``s_i = w_i K_ii / lam``: the quadratically smoothed zero-one game (:func:`advgame.closed_forms.zero_one_quadratic_smoothing`)
    with ``mu = s_i`` at ``f_i + s_i q_i``, for abstain followed by a projection onto the
    simplex capped at ``1 - alpha`` when its largest entry is below that
    (:func:`advgame._kernels._ascent_step`), an exact step in closed form, as LIBLINEAR's
    Crammer-Singer solver maximises its dual one sample at a time.  Rows are visited in a
    fresh random order every epoch (seed :data:`DUAL_SEED`) in compiled code
    (:func:`advgame._kernels.kernel_dual_epoch`); a row that moves updates the potentials
    with its row of ``K``, once per label whose ``q_ij`` moved.  It starts from ``Q = E_y``
    (``A = 0``).

    The gap ``J(A) - D(Q)`` is the sum of the rows' gaps ``w_i (V(f_i) - q_i^T f_i -
    H(q_i)) >= 0``, 0 exactly when ``q_i`` is a best response to ``f_i``, a fixed point of its
    step (:func:`advgame._kernels.dual_row_gaps`).  Shrinking, as in LIBSVM and LIBLINEAR:
    a row whose ``q`` has stayed at its label for :data:`SHRINK_EPOCHS` epochs with gap 0
    leaves the active set; only the active rows are visited and only their potentials are
    updated, with the rows of ``K`` restricted to the kept rows (gathered again when fewer
    than :data:`SHRINK_KEPT` of them are active).  When the active rows' running gaps add up
    to ``tol * max(1, |J|)`` (or the budget is spent), the check recomputes ``F = K A``
    exactly from ``Q`` alone (``A = G / lam``, :func:`advgame._kernels.kernel_potentials`),
    then ``J(A)`` and the bound :func:`kernel_dual_bound` (``tr(G^T K G)`` from the same
    product), independently of the running potentials, and stops when ``J - D <= tol *
    max(1, |J|)``; otherwise every row whose exact gap is open, shrunk or not, is active
    again.  The certificate covers all rows.  Measured on optdigits (3,934 rows, Gaussian
    kernel, ``lam = 1/n``): 19 epochs to a certified ``1e-4``, the last 15 over 1,900 to 1,100
    active rows, in 0.65x the time without shrinking.

    Parameters
    ----------
    game : Game
        A zero-one game, or an abstain game with ``alpha <= 1/2``, with its closed form
        (weight ``c``).
    K : ndarray of shape (n, n)
        The symmetric Gram matrix ``K(X, X)`` of the training inputs (finite).
    y : ndarray of shape (n,)
        Label indices in ``0..k-1``.
    weights : ndarray of shape (n,)
        Normalised sample weights (non-negative; a row of weight 0 never moves).
    uncertainty : SoftMoments
        ``R = lam/2 ||theta||_H^2``.
    tol : float
        The certified relative gap to reach.
    max_iter : int
        Epochs at most (the last one is always checked).
    warn : bool
        Warn (``ConvergenceWarning``) when the certified gap stays above ``tol``.
    progress : Phase, optional
        Told every epoch (:class:`advgame.solvers._progress.Phase`).

    Returns
    -------
    TrainingResult
        ``theta = A.ravel()``, the exact ``objective`` ``J(A)``, ``n_iter`` (epochs),
        ``message`` (``'certified'`` exactly when the checked gap is within ``tol``) and the
        certified ``gap``.

    Raises
    ------
    NotApplicableError
        For a loss other than zero-one or abstain (``alpha <= 1/2``) or an uncertainty set
        other than soft moments.
    ValueError
        For a ``K`` that is not square and finite, labels outside ``0..k-1`` or weights of the
        wrong shape, negative or summing to zero.
    """
    ascent = _Ascent("kernel", game, K, y, weights, uncertainty, tol, max_iter, warn)
    K, y, weights, Q, rows = ascent.M, ascent.y, ascent.weights, ascent.Q, ascent.rows
    coef, weight, floor, still = ascent.coef, ascent.weight, ascent.floor, ascent.still
    n, k, lam = K.shape[0], game.n_labels, uncertainty.lam
    curvature = ascent.curvature(np.diag(K))
    # the running potentials FC and the Gram matrix KC of the rows `kept`, a superset of the
    # active rows (at the positions `active` in it)
    kept, active = rows, np.arange(rows.size)
    KC, FC = _submatrix(K, kept), np.zeros((k, kept.size))
    ascent.best = np.zeros(n * k)
    message, epoch = "", 0
    phase = quiet(progress)
    while not message:
        epoch += 1
        order = ascent.rng.permutation(active)
        _kernels.kernel_dual_epoch(FC, KC, Q, order, kept, coef, curvature, weight, floor, still)
        row_gaps = _kernels.dual_row_gaps(FC, Q, kept, weights, weight, floor)
        left, running = _kernels.dual_shrink(row_gaps, Q, y, active, kept, still, SHRINK_EPOCHS)
        active = active[:left]
        if active.size < SHRINK_KEPT * kept.size:
            KC = _kernels.submatrix(K, kept[active], KC, active)
            kept, FC, active = kept[active], _columns(FC, active), np.arange(active.size)
        last = epoch >= max_iter
        phase.step(epoch, ascent.gap, running_gap=running)
        if running > tol * ascent.scale and not last:
            continue
        # the active rows' gaps may be closed (or the budget is spent): check exactly, with
        # the potentials recomputed from Q alone and the bound from the same product
        G, support = _residual(Q, y, weights)
        P = _kernels.kernel_potentials(K, G, support)  # (K G)^T = lam F^T
        norm2 = float(np.einsum("ij,ji->", G[support], P[:, support]))  # tr(G^T K G)
        FT = P / lam
        message = ascent(FT, norm2, Q, (G / lam).ravel(), epoch, last)
        if not message:
            # unshrink: every row whose exact gap is open is active again, with the exact
            # potentials; KC gains the rows of K of those that were no longer kept
            open_rows = _kernels.dual_row_gaps(_columns(FT, rows), Q, rows, weights, weight, floor)
            now = np.union1d(kept[active], rows[open_rows > 0])
            position = np.searchsorted(kept, now)
            position[kept[np.minimum(position, kept.size - 1)] != now] = -1  # not kept
            if np.any(position < 0):
                KC, kept, position = (
                    _kernels.submatrix(K, now, KC, position),
                    now,
                    np.arange(now.size),
                )
            active, FC = position, _columns(FT, kept)
    return ascent.result(epoch, message)
