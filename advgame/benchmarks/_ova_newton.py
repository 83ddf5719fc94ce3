r"""The linear one-vs-all hinge SVMs with free (unregularised) offsets by a primal-dual
interior-point (Newton) method, certified by its duality gap.

The model is the training program of :class:`advgame.benchmarks.baselines.OneVsAllAbstain`
with the linear kernel: features ``X`` (``n x p``), labels ``y_i`` in ``0..k-1``, costs ``c_i =
C * sample_weight_i >= 0``, signs ``s_ij = +1`` if ``y_i = j`` else ``-1``, and ``k``
independent binary SVMs, class ``j`` against the rest,

.. math::

    P(W, b) = \sum_j P_j, \qquad P_j = \tfrac12 \|w_j\|^2
    + \sum_i c_i \big[1 - s_{ij} (w_j \cdot x_i + b_j)\big]_+ ,

with the offsets ``b_j`` free (not in the norm).  Its Lagrange dual has one multiplier per
hinge argument and is a sum over the classes too,

.. math::

    D(\alpha) = \sum_j D_j, \qquad
    D_j = \sum_i \alpha_{ij} - \tfrac12 \big\|X^\top (s_j \circ \alpha_j)\big\|^2
    \quad\text{s.t.}\quad 0 \le \alpha_{ij} \le c_i,\quad \sum_i s_{ij} \alpha_{ij} = 0,

with one equality per class, from stationarity in the free offset (without offsets there is no
equality); at the optimum ``w_j = X^T (s_j alpha_j)``.  Weak duality ``P_j(w_j, b_j) >=
D_j(alpha_j)`` holds for every such pair, class by class.

A primal-dual interior-point method (Mehrotra's predictor-corrector, 1992) linearises the
optimality conditions; eliminating the slacks and multipliers leaves, per class and per step,
the bordered system in ``(delta w_j, delta b_j)``

.. math::

    \begin{bmatrix} I + X^\top E_j X & X^\top E_j 1 \\ 1^\top E_j X & 1^\top E_j 1 \end{bmatrix}
    \begin{bmatrix} \delta w_j \\ \delta b_j \end{bmatrix} = \text{rhs}_j,
    \qquad E_j = \operatorname{diag}\big(1 / (u_{ij} / \alpha_{ij} + v_{ij} / (c_i -
    \alpha_{ij}))\big),

of size ``p + 1`` (``p`` without offsets), positive definite whenever ``E_j > 0`` (no
regularisation of ``delta b``): the Sherman-Morrison-Woodbury form of the linear SVMs of Ferris &
Munson (2002), for the ``k`` classes side by side.  A step costs ``O(n p^2 k + p^3 k)``: forming
the ``X^T E_j X`` (one BLAS ``syrk`` per class) dominates.  See :func:`fit_ova_linear`; it follows
:func:`advgame.benchmarks._hinge_newton.fit_llw_linear` (the Lee-Lin-Wahba SVM's method, whose
classes are coupled) and shares its step rules, but the classes, being independent, take their
own step lengths and stop on their own.

Measured on an optdigits tuning fold as in :mod:`advgame.benchmarks.seed000` (56% of the rows:
3,147, ``p = 64``, ``k = 10``, standardised; one core): 12-31 steps and 0.29-0.81 s per fit to
the relative gap ``1e-4`` for ``lambda = 1 / (n C)`` from ``1e-1`` down to ``1e-5``, against
4.8 s (``lambda = 1e-3``) and 8.6 s (``1e-5``) for the QP through cvxpy, whose optimum lies in
the certified interval (its relative distance to ``P`` was ``1e-6`` where the certified gap was
``3e-5``) and whose abstaining predictions on the other 2,473 rows are the same.  At ``lambda =
1e-5``: satimage (3,604 rows, ``k = 6``) 0.27 s against 3.9 s, segment (1,294 rows, ``k = 7``)
0.15 s against 1.6 s.

References
----------
Ferris, M. C. and Munson, T. S. (2002). Interior-point methods for massive support vector
machines. SIAM Journal on Optimization 13.
Mehrotra, S. (1992). On the implementation of a primal-dual interior point method. SIAM Journal
on Optimization 2.
"""

import numpy as np
import scipy.linalg

from ._hinge_newton import (
    BARRIER_FLOOR,
    PATIENCE,
    STEP_FRACTION,
    _rows_that_count,
    _step_to_boundary,
)

__all__ = ["fit_ova_linear", "optimal_offsets"]


def optimal_offsets(F, S, c):
    """Per class ``j``, an offset ``b_j`` minimising the hinge sum ``h_j(b) = sum_i c_i [1 -
    S_ji (F_ji + b)]_+`` exactly, and ``h_j(b_j)``.

    ``h_j`` is convex and piecewise linear with breakpoints ``t_ji = S_ji - F_ji``; its right
    derivative at ``b`` is ``-sum_{S_ji = +1} c_i + sum_{t_ji <= b} c_i`` (passing a breakpoint
    of either sign adds ``c_i``), so the smallest breakpoint where the running sum of the costs
    in the order of ``t`` reaches ``sum_{S_ji = +1} c_i`` is a minimiser: the smallest ``t``
    when the class has no positive row (every ``b <= min t`` zeroes its hinges), the largest
    when it has no negative row.  Sorting costs ``O(n k log n)``.

    Parameters
    ----------
    F : ndarray of shape (k, n)
        Scores without offsets, ``F_ji = w_j . x_i`` (one row per class).
    S : ndarray of shape (k, n)
        Signs ``+-1``.
    c : ndarray of shape (n,)
        Costs, positive.

    Returns
    -------
    b : ndarray of shape (k,)
    hinge : ndarray of shape (k,)
        ``h_j(b_j)``.
    """
    k, n = F.shape
    t = S - F
    order = np.argsort(t, axis=1)
    running = np.cumsum(c[order], axis=1)
    reached = running >= ((S > 0) @ c)[:, None]
    # rounding can leave the last running sum a hair under the total: then the largest t
    first = np.where(reached.any(axis=1), np.argmax(reached, axis=1), n - 1)
    rows = np.arange(k)
    b = t[rows, order[rows, first]]
    return b, _hinge_sums(F + b[:, None], S, c)


def _hinge_sums(F, S, c):
    """``sum_i c_i [1 - S_ji F_ji]_+`` per class ``j`` (``F`` with the offsets)."""
    return np.maximum(1.0 - S * F, 0.0) @ c


def _certificate(X, S, c, alpha, W, b, fit_intercept):
    """Weak duality per class at an iterate, computed afresh: ``(P_j, D_j, b')`` with ``P_j =
    P_j(w_j, b'_j)``, ``b'_j`` the better of the iterate's offset and the exactly optimal one
    for ``w_j`` (:func:`optimal_offsets`), and ``D_j = D_j(alpha')``, ``alpha'`` the multipliers
    clipped into ``[0, c]`` and, with offsets, repaired to ``sum_i s_ji alpha'_ji = 0`` by
    scaling down the side (``s = +1`` or ``-1``) of the larger sum (so it stays in the box).

    Arrays are class-major: ``S``, ``alpha`` of shape ``(k, n)``, ``W`` of shape ``(k, p)``."""
    clipped = np.clip(alpha, 0.0, c)
    if fit_intercept:
        positive = np.where(S > 0, clipped, 0.0)
        negative = clipped - positive
        plus, minus = positive.sum(axis=1), negative.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):  # 0 / 0 where both sums are 0
            shrink_plus = np.where(plus > minus, minus / plus, 1.0)
            shrink_minus = np.where(minus > plus, plus / minus, 1.0)
        clipped = positive * shrink_plus[:, None] + negative * shrink_minus[:, None]
    W_alpha = (S * clipped) @ X
    dual = clipped.sum(axis=1) - 0.5 * np.einsum("jp,jp->j", W_alpha, W_alpha)
    F = W @ X.T
    norm = 0.5 * np.einsum("jp,jp->j", W, W)
    hinge = _hinge_sums(F + b[:, None], S, c)
    if fit_intercept:
        b_exact, hinge_exact = optimal_offsets(F, S, c)
        better = hinge_exact <= hinge
        b, hinge = np.where(better, b_exact, b), np.where(better, hinge_exact, hinge)
    return norm + hinge, dual, b


class _NewtonSystem:
    """The Newton system of the classes still iterated at the iterate ``(alpha, c - alpha, u,
    v, V)`` (class-major), one bordered block per class factorised by Cholesky: see
    :func:`fit_ova_linear`.  ``failed`` marks the classes whose block is not finite or cannot
    be factorised (their ``factors`` entry is None)."""

    def __init__(self, Xa, S, alpha, upper, u, v, V, residual, free_offsets):
        self.Xa, self.S, self.alpha, self.upper, self.u, self.v = Xa, S, alpha, upper, u, v
        self.residual = residual
        # D0: the identity on w, 0 on a free offset (not regularised)
        self.identity = np.ones(Xa.shape[1])
        if free_offsets:
            self.identity[-1] = 0.0
        # the stationarity residual D0 V - (S alpha) Xa; on a free offset it is the dual's
        # equality -sum_i s_ji alpha_ji
        self.mismatch = self.identity * V - (S * alpha) @ Xa
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            self.E = 1.0 / (u / alpha + v / upper)
        self.factors = []
        for E_j in self.E:  # one syrk per class: the dominant O(n q^2) of a step
            factor = None
            if np.all(np.isfinite(E_j)):
                R = Xa * np.sqrt(E_j)[:, None]
                K = R.T @ R
                K[np.diag_indices_from(K)] += self.identity
                try:
                    factor = scipy.linalg.cho_factor(K, check_finite=False)
                except np.linalg.LinAlgError:
                    pass
            self.factors.append(factor)
        self.failed = np.array([factor is None for factor in self.factors])

    def direction(self, tau, lower_term=0.0, upper_term=0.0):
        """The step ``(dV, d_alpha, du, dv)`` towards ``alpha u = tau``, ``(c - alpha) v = tau``
        (``tau`` one per class; less the second-order terms ``lower_term``, ``upper_term``)."""
        alpha, upper, u, v, E = self.alpha, self.upper, self.u, self.v, self.E
        r_lower = tau - alpha * u - lower_term
        r_upper = tau - upper * v - upper_term
        r = r_lower / alpha - r_upper / upper - self.residual
        rhs = (self.S * (E * r)) @ self.Xa - self.mismatch
        dV = np.stack(
            [
                scipy.linalg.cho_solve(f, rhs_j, check_finite=False)
                for f, rhs_j in zip(self.factors, rhs)
            ]
        )
        d_alpha = E * (r - self.S * (dV @ self.Xa.T))
        return dV, d_alpha, (r_lower - u * d_alpha) / alpha, (r_upper + v * d_alpha) / upper

    def longest(self, d_alpha, du, dv):
        """Per class, the longest step (at most 1) keeping ``alpha``, ``c - alpha``, ``u``,
        ``v`` positive."""
        pairs = ((self.alpha, d_alpha), (self.upper, -d_alpha), (self.u, du), (self.v, dv))
        return np.array(
            [_step_to_boundary((x[j], dx[j]) for x, dx in pairs) for j in range(len(self.E))]
        )

    def complementarity(self, t=0.0, d_alpha=0.0, du=0.0, dv=0.0):
        """Per class, the mean product ``alpha u``, ``(c - alpha) v`` after the step ``t`` (one
        per class)."""
        t = np.reshape(t, (-1, 1))
        lower = (self.alpha + t * d_alpha) * (self.u + t * du)
        upper = (self.upper - t * d_alpha) * (self.v + t * dv)
        return (lower.sum(axis=1) + upper.sum(axis=1)) / (2 * lower.shape[1])


def fit_ova_linear(X, y, cost, tol=1e-4, max_steps=100, n_classes=None, fit_intercept=True):
    r"""Train the ``k`` linear one-vs-all hinge SVMs with free offsets to the relative duality
    gap ``tol`` by Mehrotra's predictor-corrector interior-point method.

    Per class the training problem as a QP in ``(w_j, b_j)`` and the slacks ``v_ji >= 0``,

    .. math::

        \min\ \tfrac12 \|w_j\|^2 + \sum_i c_i v_{ji}
        \quad\text{s.t.}\quad v_{ji} - u_{ji} = z_{ji} = 1 - s_{ji} (w_j \cdot x_i + b_j),
        \ u, v \ge 0,

    has multipliers ``alpha`` (of ``u >= 0``) and ``c - alpha`` (of ``v >= 0``) and the
    optimality conditions ``w_j = X^T (s_j alpha_j)``, ``sum_i s_ji alpha_ji = 0`` (with
    offsets), ``alpha u = 0``, ``(c - alpha) v = 0``.  Each step linearises them with the
    products relaxed to ``tau_j`` (Mehrotra's predictor, then his corrector with the
    second-order terms).  Eliminating ``u``, ``v`` leaves ``delta alpha_j = E_j (r_j - s_j (X
    delta w_j + delta b_j))``, ``E = 1 / (u / alpha + v / (c - alpha))`` and ``r`` the
    linearised residuals, and in ``delta V_j = (delta w_j, delta b_j)``, with ``X_a = [X, 1]``,

    .. math::

        (D_0 + X_a^\top E_j X_a)\, \delta V_j = X_a^\top (s_j E_j r_j)
        - \big(D_0 V_j - X_a^\top (s_j \alpha_j)\big),
        \qquad D_0 = \operatorname{diag}(1, \dots, 1, 0),

    whose last row is the linearised equality ``sum_i s_ji (alpha + delta alpha)_ji = 0``
    (without offsets ``X_a = X`` and ``D_0 = I``).  It is positive definite when ``E_j > 0``, so
    each class's block is factorised once by Cholesky for both of a step's solves.  A step
    costs ``O(n p^2 k + p^3 k)``; forming the ``X_a^T E_j X_a`` dominates.  As in
    :func:`~advgame.benchmarks._hinge_newton.fit_llw_linear`, ``c - alpha`` is an iterate of its
    own (never 0 by cancellation) and so are ``(W, b)``, moved by the solved ``delta V`` rather
    than recomputed as ``X^T (s alpha)`` (whose rounding errors ``delta alpha`` multiplies by
    ``E``, unbounded at the kinks).

    The classes are independent problems, so each takes its own step length (the step to the
    boundary of its ``alpha``, ``c - alpha``, ``u``, ``v`` times :data:`STEP_FRACTION`) and its
    own ``tau_j``: on optdigits this took 31 steps where one step length for all classes took 49
    (the slowest class held back the others).  A class stops being iterated once its certified
    gap is within its share ``tol * max(1, |P|) / k`` of the tolerance, after :data:`PATIENCE`
    steps without a smaller gap (rounding), or if its block is not finite or cannot be
    factorised; the run stops when the total certified gap is within ``tol``, when no class is
    iterated, or after ``max_steps``.

    The certificate is weak duality per class at each iterate, computed afresh and independent
    of the Newton system's accuracy: ``gap_j = P_j(w_j, b'_j) - D_j(alpha'_j)`` with ``alpha'``
    clipped into ``[0, c]`` and, with offsets, repaired to the equality by scaling down the side
    (``s = +1`` or ``s = -1`` multipliers) of the larger sum, and ``b'_j`` the better of the
    iterate's offset and the exactly optimal one for ``w_j`` (:func:`optimal_offsets`).  Each
    class keeps its best iterate (smallest ``gap_j``); the sums over the classes of these are
    the returned objective and gap.

    A class with no positive row (or no negative one) among the rows of positive cost, with
    offsets, is solved in closed form: its equality forces ``alpha_j = 0``, so ``w_j = 0`` and
    ``b_j = -1`` (``+1``) zero its hinges and ``P_j = D_j = 0`` (the interior-point method's
    offset would run off to infinity).

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Features (no constant column: the offsets are separate); finite.
    y : ndarray of shape (n,)
        Label indices in ``0..k-1``.
    cost : ndarray of shape (n,)
        ``c_i = C * sample_weight_i >= 0``; rows of cost 0 are left out (their multipliers are
        0 and they add nothing to ``P``).
    tol : float
        Stop when ``P - D <= tol * max(1, |P|)``.
    max_steps : int
        The most Newton steps.  The run returns its best iterate with its honest ``gap`` however
        it stops (the caller decides).
    n_classes : int or None
        ``k``; None means ``max(y) + 1`` (at least 2).
    fit_intercept : bool
        Fit the free offsets ``b``; False: ``b = 0`` (and no equalities in the dual).

    Returns
    -------
    W : ndarray of shape (p, k)
        The weights, one column per class.
    b : ndarray of shape (k,)
        The offsets (zeros without ``fit_intercept``).
    objective : float
        ``P(W, b)``.
    gap : float
        The certified ``P(W, b) - D(alpha) >= P(W, b) - min P`` (non-negative).
    steps : int
        Newton steps taken.
    """
    X, y, c, k = _rows_that_count(X, y, cost, n_classes)
    p = X.shape[1]
    W_out, b_out = np.zeros((p, k)), np.zeros(k)
    if c.size == 0:  # no hinge counts: W = 0 (and any b) is optimal, P = D = 0
        return W_out, b_out, 0.0, 0.0, 0
    S = np.where(np.arange(k)[:, None] == y, 1.0, -1.0)  # class-major (k, n)
    classes = np.arange(k)
    if fit_intercept:  # one-sided classes: w_j = 0, b_j = -1 or +1, exactly optimal
        has_positive, has_negative = (S > 0).any(axis=1), (S < 0).any(axis=1)
        b_out[~has_positive], b_out[~has_negative] = -1.0, 1.0
        classes = np.flatnonzero(has_positive & has_negative)
        if classes.size == 0:
            return W_out, b_out, 0.0, 0.0, 0
        S = S[classes]
    Xa = np.hstack([X, np.ones((X.shape[0], 1))]) if fit_intercept else X
    m = classes.size
    # each class's best iterate: its certified gap and objective, weights and offset
    best_gap, best_primal = np.full(m, np.inf), np.full(m, np.inf)
    best_W, best_b = np.zeros((m, p)), np.zeros(m)
    stalled = np.zeros(m, dtype=np.int64)
    live = np.arange(m)  # the classes still iterated: the rows of the iterate
    # an interior start: alpha in the middle of its box, (w, b) = 0 (so z = 1), v - u = z, u = 1
    alpha = np.repeat(0.5 * c[None, :], m, axis=0)
    upper = alpha.copy()  # c - alpha: an iterate of its own, so never 0 by cancellation
    u, v = np.ones_like(alpha), np.full_like(alpha, 2.0)
    V = np.zeros((m, Xa.shape[1]))  # (w_j, b_j) per row
    steps = 0
    while True:
        b = V[:, p] if fit_intercept else np.zeros(live.size)
        primal, dual, b_certified = _certificate(X, S, c, alpha, V[:, :p], b, fit_intercept)
        gap = np.maximum(primal - dual, 0.0)  # weak duality: a negative gap is rounding
        improved = gap < best_gap[live]  # False where not finite
        at = live[improved]
        best_gap[at], best_primal[at] = gap[improved], primal[improved]
        best_W[at], best_b[at] = V[improved, :p], b_certified[improved]
        stalled[live] = np.where(improved, 0, stalled[live] + 1)
        finite = np.isfinite(best_primal)
        scale = max(1.0, abs(float(best_primal[finite].sum())))
        if not best_gap.sum() > tol * scale or steps >= max_steps:  # (not: also if NaN)
            break
        done = (best_gap[live] <= tol * scale / m) | (stalled[live] >= PATIENCE)
        done |= ~np.isfinite(gap)
        if done.all():
            break
        if done.any():  # the rest go on
            going = ~done
            live = live[going]
            S, alpha, upper, u, v, V = (a[going] for a in (S, alpha, upper, u, v, V))
        z = 1.0 - S * (V @ Xa.T)
        newton = _NewtonSystem(Xa, S, alpha, upper, u, v, V, v - u - z, fit_intercept)
        if newton.failed.any():  # those classes stop at their best iterates
            stalled[live[newton.failed]] = PATIENCE
            continue
        steps += 1
        _, d_alpha, du, dv = newton.direction(0.0)  # predictor: the affine scaling step
        mu = newton.complementarity()
        mu_affine = newton.complementarity(newton.longest(d_alpha, du, dv), d_alpha, du, dv)
        floor = BARRIER_FLOOR * tol * scale / (m * c.size)
        tau = np.maximum((mu_affine / mu) ** 3 * mu, floor)[:, None]
        dV, d_alpha, du, dv = newton.direction(tau, d_alpha * du, -d_alpha * dv)  # corrector
        t = np.minimum(1.0, STEP_FRACTION * newton.longest(d_alpha, du, dv))[:, None]
        alpha, upper = alpha + t * d_alpha, upper - t * d_alpha
        u, v = u + t * du, v + t * dv
        V = V + t * dV
    W_out[:, classes] = best_W.T
    if fit_intercept:
        b_out[classes] = best_b
    return W_out, b_out, float(best_primal.sum()), float(best_gap.sum()), steps
