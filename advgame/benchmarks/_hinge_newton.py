r"""The linear Lee-Lin-Wahba multiclass SVM with free offsets by a primal-dual interior-point
(Newton) method, certified by its duality gap.

The model is that of the exact QP backends of :class:`~advgame.benchmarks.baselines.LeeLinWahbaSVC`
(Lee, Lin & Wahba, 2004): inputs ``x_i`` (``d`` features), labels ``y_i`` in ``0..k-1``, costs
``c_i = C * sample_weight_i >= 0``, weights ``W`` (``d x k``) and offsets ``b`` whose rows sum to
zero (``sum_j w_j = 0``, ``sum_j b_j = 0``), scores ``F = X W + 1 b^T`` and

.. math::

    P(W, b) = \tfrac12 \|W\|_F^2 + \sum_i c_i \sum_{j \ne y_i} [1 + F_{ij}]_+ ,
    \qquad
    D(\alpha) = \sum_{ij} \alpha_{ij} - \tfrac12 \|X^\top B\|_F^2 ,

with ``0 <= alpha_ij <= c_i`` for ``j != y_i`` (``alpha_{i y_i} = 0``), ``B_i = -(alpha_i -
mean(alpha_i))`` (the mean over all ``k`` labels) and, the offsets being free, ``1^T B = 0``:
every label's multipliers have the same sum over the rows.  Weak duality ``P(W, b) >= D(alpha)``
holds for every such pair.  Below, ``M = [X, 1]`` and ``W`` has the offsets as its last row (the
weights of the constant column, left out of the regulariser); without offsets ``M = X`` and the
equality is absent.

The dual's Hessian has rank at most ``p (k - 1)``, so each Newton step of a primal-dual
interior-point method reduces, through the Sherman-Morrison-Woodbury identity (as for the linear
SVMs of Ferris & Munson, 2002), to one positive definite system of size ``p (k - 1)`` in the
weights: :func:`fit_llw_linear`.  Measured on an optdigits tuning fold of the Table 2
reproduction (:mod:`advgame.benchmarks.seed000`; 3,147 rows, ``p = 65``, ``k = 10``, one core): 10-19 steps and 0.3-0.6 s per fit to
the relative gap ``1e-4`` for ``lambda = 1 / (n C)`` from ``1e-1`` down to ``1e-5`` (0.15 s on
satimage's 3,603 rows, 0.07 s on segment's 1,293), where the dual coordinate ascent of
:mod:`advgame.benchmarks._hinge_dual` needs 5,351 epochs (35-45 s) at ``1e-4`` and does not
certify in 50,000 at ``1e-5``, and the exact QP through cvxpy (free offsets) takes about 19 s.

A smoothed-hinge Newton method with continuation (each hinge replaced by its smoothing of width
``mu``, quadratic on ``(0, mu)``, after Nesterov, 2005, and ``mu`` shrunk between Newton solves)
was measured first and dropped: the absolute margins of LLW keep thousands of hinge arguments at
the kink at the optimum (3,329 of 28,323 on that fold, a whole class's column among them), so
each smoothing band holds a sliver of them, every shrink of ``mu`` moves most of their
multipliers, and each stage took tens of Newton steps (500 steps did not certify at ``lambda <=
1e-4``).  The barrier gives every hinge argument curvature at once.

References
----------
Lee, Y., Lin, Y. and Wahba, G. (2004). Multicategory support vector machines: theory and
application to the classification of microarray data and satellite radiance data. JASA 99.
Nesterov, Y. (2005). Smooth minimization of non-smooth functions. Mathematical Programming 103.
Mehrotra, S. (1992). On the implementation of a primal-dual interior point method. SIAM Journal
on Optimization 2.
Ferris, M. C. and Munson, T. S. (2002). Interior-point methods for massive support vector
machines. SIAM Journal on Optimization 13.
"""

import numpy as np
import scipy.linalg

__all__ = ["fit_llw_linear"]

#: Fraction of the step to the boundary taken (keeps the iterates strictly interior).
STEP_FRACTION = 0.99
#: Stop after this many steps without a smaller certified relative gap (rounding has stalled).
PATIENCE = 10
#: The barrier parameter stays above this fraction of the target gap per hinge argument:
#: complementarity far below what the certificate asks only costs accuracy.
BARRIER_FLOOR = 1e-3


def _centred_basis(k):
    """An orthonormal basis ``Q`` (``k x (k - 1)``) of the vectors of ``R^k`` summing to zero."""
    return np.linalg.qr(np.eye(k)[:, : k - 1] - 1.0 / k)[0]


def _step_to_boundary(pairs):
    """The longest step ``t <= 1`` keeping every ``x + t dx`` of ``pairs`` positive."""
    t = 1.0
    with np.errstate(over="ignore"):  # x / tiny where dx >= 0: no bound
        for x, dx in pairs:
            t = min(t, float(np.min(x / np.maximum(-dx, np.finfo(float).tiny))))
    return t


def _rows_that_count(X, y, cost, n_classes):
    """The inputs as arrays (float ``X``, integer ``y``, float ``cost``), the number of labels
    ``k`` (``n_classes``, or ``max(y) + 1`` and at least 2) and the rows of positive cost, the
    only ones a hinge model's objective sees (shared with
    :func:`advgame.benchmarks._ova_newton.fit_ova_linear`)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    cost = np.asarray(cost, dtype=np.float64)
    k = max(int(y.max()) + 1 if y.size else 0, 2) if n_classes is None else int(n_classes)
    keep = cost > 0
    return X[keep], y[keep], cost[keep], k


class _Hinges:
    """The data of one fit: rows of positive cost ``X`` (``n x p``, the constant column last
    when ``free_last``), their costs ``c`` and the hinge arguments ``(i, j != y_i)``, held as
    ``(n, k - 1)`` arrays (labels in increasing order).  ``penalised`` is 1 on the rows of
    ``W`` the objective regularises, 0 on the offsets' row (free)."""

    def __init__(self, X, labels, c, k, free_last):
        self.X, self.c, self.k = X, c, k
        self.penalised = np.ones(X.shape[1])
        if free_last:
            self.penalised[-1] = 0.0
        n = X.shape[0]
        hinged = np.ones((n, k), dtype=bool)
        hinged[np.arange(n), labels] = False
        self.where = np.flatnonzero(hinged)  # their positions in row-major (n, k) arrays
        self.cap = np.repeat(c[:, None], k - 1, axis=1)
        self.Q = _centred_basis(k)
        self.outer = np.einsum("ja,jb->jab", self.Q, self.Q).reshape(k, -1)  # q_j q_j^T

    def full(self, values):
        """``(n, k - 1)`` per hinge argument -> ``(n, k)`` per label, 0 at ``y_i``."""
        out = np.zeros(self.X.shape[0] * self.k)
        out[self.where] = values.ravel()
        return out.reshape(-1, self.k)

    def scores(self, W):
        """``F_ij = (M W)_ij`` of the hinge arguments."""
        return (self.X @ W).ravel()[self.where].reshape(-1, self.k - 1)

    def weights_of(self, alpha):
        """``W(alpha) = M^T B = -(M^T alpha) Pi``, with ``Pi = Q Q^T``; with free offsets its
        last row is ``1^T B``, the stationarity residual of the offsets (0 at a dual point)."""
        return -((self.X.T @ self.full(alpha)) @ self.Q) @ self.Q.T

    def norm(self, W):
        """``||W||^2`` over the regularised rows."""
        return float(np.einsum("ij,ij,i->", W, W, self.penalised))

    def primal(self, W):
        """The hinge arguments ``z = 1 + F`` and ``P(W)``."""
        z = 1.0 + self.scores(W)
        hinge = float(self.c @ np.maximum(z, 0.0).sum(axis=1))
        return z, 0.5 * self.norm(W) + hinge

    def feasible(self, alpha):
        """``alpha`` (in its box) scaled, per label, down to equal sums over the rows
        ``sum_i alpha_ij`` (each column to the smallest): the offsets' stationarity ``1^T B =
        0``, so a dual point of the free-offsets model, still in the box."""
        full = self.full(alpha)
        sums = full.sum(axis=0)
        scale = np.divide(sums.min(), sums, out=np.zeros_like(sums), where=sums > 0)
        return (full * scale).ravel()[self.where].reshape(alpha.shape)


class _NewtonSystem:
    """The Newton system at the iterate ``(alpha, c - alpha, u, v, W)``, its weight block
    factorised (raises ``LinAlgError`` if it cannot be): see :func:`fit_llw_linear`."""

    def __init__(self, hinges, alpha, upper, u, v, residual, mismatch):
        self.hinges, self.alpha, self.upper, self.u, self.v = hinges, alpha, upper, u, v
        self.residual, self.mismatch = residual, mismatch
        X, k, p = hinges.X, hinges.k, hinges.X.shape[1]
        self.E = 1.0 / (u / alpha + v / upper)
        if not np.all(np.isfinite(self.E)):
            raise np.linalg.LinAlgError("the barrier's scaling is not finite")
        spread = hinges.full(self.E)
        K = np.empty((k, p, p))
        for j in range(k):
            R = X * np.sqrt(spread[:, j])[:, None]
            K[j] = R.T @ R
        # I + sum_j (q_j q_j^T) ⊗ K_j, rows and columns ordered (a, x) for V[x, a]
        system = (hinges.outer.T @ K.reshape(k, -1)).reshape(k - 1, k - 1, p, p)
        system = system.transpose(0, 2, 1, 3).reshape((k - 1) * p, (k - 1) * p)
        system[np.diag_indices_from(system)] += np.tile(hinges.penalised, k - 1)
        self.factor = scipy.linalg.cho_factor(system, check_finite=False)

    def direction(self, tau, lower_term=0.0, upper_term=0.0):
        """The step ``(dW, d_alpha, du, dv)`` towards ``alpha u = tau``, ``(c - alpha) v =
        tau`` (less the second-order terms ``lower_term``, ``upper_term``)."""
        h, alpha, upper, u, v, E = self.hinges, self.alpha, self.upper, self.u, self.v, self.E
        r_lower = tau - alpha * u - lower_term
        r_upper = tau - upper * v - upper_term
        r = r_lower / alpha - r_upper / upper - self.residual
        rhs = -((h.X.T @ h.full(E * r)) @ h.Q) - self.mismatch
        V = scipy.linalg.cho_solve(self.factor, rhs.T.reshape(-1), check_finite=False)
        dW = V.reshape(h.k - 1, -1).T @ h.Q.T
        d_alpha = E * (r + h.scores(dW))
        return dW, d_alpha, (r_lower - u * d_alpha) / alpha, (r_upper + v * d_alpha) / upper

    def longest(self, d_alpha, du, dv):
        """The longest step (at most 1) keeping ``alpha``, ``c - alpha``, ``u``, ``v``
        positive."""
        return _step_to_boundary(
            ((self.alpha, d_alpha), (self.upper, -d_alpha), (self.u, du), (self.v, dv))
        )

    def complementarity(self, t=0.0, d_alpha=0.0, du=0.0, dv=0.0):
        """The mean product ``alpha u``, ``(c - alpha) v`` after the step ``t``."""
        lower = (self.alpha + t * d_alpha) * (self.u + t * du)
        upper = (self.upper - t * d_alpha) * (self.v + t * dv)
        return (float(lower.sum()) + float(upper.sum())) / (2 * lower.size)


def fit_llw_linear(X, y, cost, tol=1e-4, max_steps=100, n_classes=None, fit_intercept=True):
    r"""Train the linear Lee-Lin-Wahba SVM (free offsets) to the relative duality gap ``tol`` by
    Mehrotra's predictor-corrector interior-point method.

    The training problem as a QP in ``W`` (zero row sums; the offsets its last row) and the
    slacks ``v_ij >= 0``,

    .. math::

        \min\ \tfrac12 \|R W\|_F^2 + \sum_{i, j \ne y_i} c_i v_{ij}
        \quad\text{s.t.}\quad v_{ij} - u_{ij} = z_{ij} = 1 + F_{ij},\ u, v \ge 0,

    (``R`` the diagonal of 1 on the weights' rows and 0 on the offsets') has multipliers
    ``alpha`` (of ``u >= 0``) and ``c - alpha`` (of ``v >= 0``) and the optimality conditions
    ``R W = M^T B(alpha)`` (whose offsets' row is ``1^T B = 0``), ``alpha u = 0``, ``(c - alpha)
    v = 0``.  Each step linearises them with the products relaxed to ``tau`` (Mehrotra's
    predictor, then his corrector with the second-order terms).  Eliminating ``u``, ``v`` leaves
    ``delta alpha = E (r + M delta W)`` per hinge argument, ``E = 1 / (u / alpha + v / (c -
    alpha))`` and ``r`` the linearised residuals, and for the weights the Woodbury form

    .. math::

        R\, \delta W + \big[K_j\, \delta w_j\big]_j \Pi
        = -M^\top \big[(E r)^{\mathrm{full}}\, \Pi\big] - (R W - M^\top B(\alpha)),
        \qquad K_j = M^\top \operatorname{diag}(E_{:j}) M, \quad \Pi = I - \tfrac1k 11^\top,

    (``E_{:j}`` zero where ``y_i = j``).  In the coordinates ``delta W = V Q^T``, ``Q`` an
    orthonormal basis of ``1^perp``, this is the system ``(R ⊗ I + sum_j (q_j q_j^T) ⊗ K_j) vec
    V = vec(Y Q)`` of size ``p (k - 1)``, positive definite also without the offsets' ``R``
    (``sum_j (q_j q_j^T) sum_i E_ij`` is, once two labels occur), factorised once by Cholesky for
    both of a step's solves.  A step costs ``O(n p^2 k + p^3 k^3)``: forming the ``K_j``
    dominates for ``n >> p k`` (suited to the moderate ``p k`` of the benchmark's linear
    tables).  One step length for all variables (the step to the boundary times
    :data:`STEP_FRACTION`) keeps ``alpha`` strictly inside its box.

    The weights ``W`` are an iterate of their own, moved by the solved ``delta W``, rather than
    ``M^T B(alpha)``: ``delta alpha`` multiplies rounding errors by ``E``, which grows without
    bound on the hinge arguments that end at the kink, while ``P`` is sensitive to them at
    first order through ``M^T B(alpha)`` and ``D`` only at second order (its gradient is ``z``,
    which vanishes there).  Certifying with ``M^T B(alpha)`` alone stalled near relative gaps of
    ``1e-6`` (small problems at large ``C``, optdigits at ``lambda = 1e-5``); with the iterate
    ``W`` the gap reaches ``1e-11`` and below.

    The certificate is weak duality at each iterate, computed afresh: ``gap = P(W') -
    D(alpha')`` with ``alpha'`` the iterate clipped into its box and (offsets) scaled per label
    down to equal sums (:meth:`_Hinges.feasible`; the iterate satisfies ``1^T B = 0`` only in the
    limit), and ``W'`` the better of ``W`` (rows re-centred) and ``X^T B(alpha')`` with ``W``'s
    offsets, independent of the Newton system's accuracy.  The best iterate is returned.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Inputs; finite.
    y : ndarray of shape (n,)
        Label indices in ``0..k-1``.
    cost : ndarray of shape (n,)
        ``c_i = C * sample_weight_i >= 0``; rows of cost 0 are left out (their multipliers are
        0 and they add nothing to ``P``).
    tol : float
        Stop when ``P - D <= tol * max(1, |P|)``.
    max_steps : int
        The most Newton steps.  The run also stops after :data:`PATIENCE` steps without a
        smaller certified relative gap (rounding), or if the system is not finite or cannot be
        factorised; it then returns its best iterate with its honest ``gap`` (the caller
        decides).
    n_classes : int or None
        ``k``; None means ``max(y) + 1`` (at least 2).
    fit_intercept : bool
        Free offsets ``b``; else ``b = 0``.

    Returns
    -------
    W : ndarray of shape (d, k)
        The weights (rows summing to zero).
    b : ndarray of shape (k,)
        The offsets (summing to zero; 0 without ``fit_intercept``).
    objective : float
        ``P(W, b)``.
    gap : float
        The certified ``P(W, b) - D(alpha) >= P(W, b) - min P`` (non-negative).
    steps : int
        Newton steps taken.
    """
    X, y, c, k = _rows_that_count(X, y, cost, n_classes)
    if c.size == 0:  # no hinge counts: W = 0 is optimal, P = D = 0
        return np.zeros((X.shape[1], k)), np.zeros(k), 0.0, 0.0, 0
    M = np.hstack([X, np.ones((X.shape[0], 1))]) if fit_intercept else X
    p = M.shape[1]
    hinges = _Hinges(M, y, c, k, free_last=fit_intercept)
    cap, penalised = hinges.cap, hinges.penalised[:, None]
    # an interior start: alpha in the middle of its box, W = 0 (so z = 1), v - u = z with u = 1
    # (W = W(alpha) instead took a third more steps on optdigits: W(c / 2) is far off)
    alpha = 0.5 * cap
    upper = cap - alpha  # c - alpha: an iterate of its own, so never 0 by cancellation
    W = np.zeros((p, k))
    u, v = np.ones_like(cap), np.full_like(cap, 2.0)
    best = (np.inf, W, np.inf, np.inf)
    steps, stalled = 0, 0
    while True:
        dual_point = np.clip(alpha, 0.0, cap)
        if fit_intercept:
            dual_point = hinges.feasible(dual_point)
        W_dual = hinges.weights_of(dual_point)
        dual = float(dual_point.sum()) - 0.5 * hinges.norm(W_dual)
        if fit_intercept:
            W_dual[-1] = W[-1]  # its last row is 1^T B = 0: the iterate's offsets instead
        z, primal = hinges.primal(W)
        primal_dual = hinges.primal(W_dual)[1]
        certified = (W, primal) if primal <= primal_dual else (W_dual, primal_dual)
        gap = max(certified[1] - dual, 0.0)  # weak duality: a negative gap is rounding
        relative = gap / max(1.0, abs(certified[1]))
        if not np.isfinite(relative):
            break
        if relative < best[0]:
            best, stalled = (relative, *certified, gap), 0
        else:
            stalled += 1
        if best[0] <= tol or steps >= max_steps or stalled >= PATIENCE:
            break
        steps += 1
        # the slacks' equality v - u = z, and the stationarity R W = M^T B(alpha) (in 1^perp)
        residual = v - u - z
        mismatch = (penalised * W - hinges.weights_of(alpha)) @ hinges.Q
        try:
            newton = _NewtonSystem(hinges, alpha, upper, u, v, residual, mismatch)
        except np.linalg.LinAlgError:
            break
        _, d_alpha, du, dv = newton.direction(0.0)  # predictor: the affine scaling step
        mu = newton.complementarity()
        mu_affine = newton.complementarity(newton.longest(d_alpha, du, dv), d_alpha, du, dv)
        floor = BARRIER_FLOOR * tol * max(1.0, abs(best[2])) / cap.size
        tau = max((mu_affine / mu) ** 3 * mu, floor)
        dW, d_alpha, du, dv = newton.direction(tau, d_alpha * du, -d_alpha * dv)  # corrector
        t = min(1.0, STEP_FRACTION * newton.longest(d_alpha, du, dv))
        alpha, upper = alpha + t * d_alpha, upper - t * d_alpha
        u, v = u + t * du, v + t * dv
        W = W + t * dW
        W -= W.mean(axis=1, keepdims=True)  # rows summing to zero, exactly up to rounding
    _, W, primal, gap = best
    if fit_intercept:
        return W[:-1], W[-1], primal, gap, steps
    return W, np.zeros(k), primal, gap, steps
