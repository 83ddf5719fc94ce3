r"""The linear multiclass SVMs of the baselines by a primal-dual interior-point (Newton) method,
certified by their duality gaps: the Lee-Lin-Wahba SVM (:func:`fit_llw_linear`) and the ``k``
one-vs-all SVMs side by side (:func:`fit_ova_linear`), both with free offsets, on the
path-following scaffold of :mod:`advgame.solvers.interior_point` (Mehrotra's predictor-corrector
steps, the step to the boundary, the best certified iterate and the stall rule); what is
theirs is the model's residuals, the linear system of a step and the certificate.

Lee-Lin-Wahba
-------------

The model is that of the exact QP backends of :class:`~advgame.baselines.LeeLinWahbaSVC`
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
reproduction (:mod:`advgame.reproductions.fathony2018a`; 3,147 rows, ``p = 65``, ``k = 10``, one
core): 10-19 steps and 0.3-0.6 s per fit to the relative gap ``1e-4`` for ``lambda = 1 / (n C)``
from ``1e-1`` down to ``1e-5`` (0.15 s on satimage's 3,603 rows, 0.07 s on segment's 1,293),
where the dual coordinate ascent of :mod:`advgame.solvers.svm_dual` needs 5,351 epochs (35-45 s)
at ``1e-4`` and does not certify in 50,000 at ``1e-5``, and the exact QP through cvxpy (free
offsets) takes about 19 s.

A smoothed-hinge Newton method with continuation (each hinge replaced by its smoothing of width
``mu``, quadratic on ``(0, mu)``, after Nesterov, 2005, and ``mu`` shrunk between Newton solves)
was measured first and dropped: the absolute margins of LLW keep thousands of hinge arguments at
the kink at the optimum (3,329 of 28,323 on that fold, a whole class's column among them), so
each smoothing band holds a sliver of them, every shrink of ``mu`` moves most of their
multipliers, and each stage took tens of Newton steps (500 steps did not certify at ``lambda <=
1e-4``).  The barrier gives every hinge argument curvature at once.

One-vs-all
----------

The model is the training program of :class:`advgame.baselines.OneVsAllAbstain`
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
:func:`fit_llw_linear` (the Lee-Lin-Wahba SVM's method, whose classes are coupled) on the
same scaffold, but the classes, being independent, take their own step lengths and stop on
their own.

Measured on an optdigits tuning fold as in :mod:`advgame.reproductions.fathony2018a` (56% of the
rows: 3,147, ``p = 64``, ``k = 10``, standardised; one core): 12-31 steps and 0.29-0.81 s per fit to
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
Lee, Y., Lin, Y. and Wahba, G. (2004). Multicategory support vector machines: theory and
application to the classification of microarray data and satellite radiance data. JASA 99.
Mehrotra, S. (1992). On the implementation of a primal-dual interior point method. SIAM Journal
on Optimization 2.
Nesterov, Y. (2005). Smooth minimization of non-smooth functions. Mathematical Programming 103.
"""

import numpy as np
import scipy.linalg

from .interior_point import NewtonSystem, PathProblem, follow_path

__all__ = ["fit_llw_linear", "fit_ova_linear", "optimal_offsets"]

#: Stop after this many steps without a smaller certified relative gap (rounding has stalled).
PATIENCE = 10
#: The barrier parameter stays above this fraction of the target gap per hinge argument:
#: complementarity far below what the certificate asks only costs accuracy.
BARRIER_FLOOR = 1e-3


def _rows_that_count(X, y, cost, n_classes):
    """The inputs as arrays (float ``X``, integer ``y``, float ``cost``), the number of labels
    ``k`` (``n_classes``, or ``max(y) + 1`` and at least 2) and the rows of positive cost, the
    only ones a hinge model's objective sees."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    cost = np.asarray(cost, dtype=np.float64)
    k = max(int(y.max()) + 1 if y.size else 0, 2) if n_classes is None else int(n_classes)
    keep = cost > 0
    return X[keep], y[keep], cost[keep], k


class _BoxSystem(NewtonSystem):
    """The Newton system of a hinge SVM at the iterate ``(alpha, c - alpha, u, v)`` and its
    weights: multipliers ``alpha`` in the box ``[0, c]`` with the complementary pairs ``(alpha,
    u)`` and ``(c - alpha, v)``, and ``residual`` the slacks' equality ``v - u - z``.
    Eliminating ``u``, ``v`` leaves ``delta alpha = E (r + ...)`` with ``E = 1 / (u / alpha + v
    / (c - alpha))``; subclasses solve for the weights (:meth:`_solve`)."""

    def __init__(self, alpha, upper, u, v, residual):
        self.alpha, self.upper, self.u, self.v, self.residual = alpha, upper, u, v, residual
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            self.E = 1.0 / (u / alpha + v / upper)

    def direction(self, tau, corrections=None):
        """The step ``(dW, d_alpha, du, dv)`` towards ``alpha u = tau``, ``(c - alpha) v = tau``
        (``tau`` one per problem; less the second-order ``corrections``)."""
        lower_term, upper_term = (0.0, 0.0) if corrections is None else corrections
        alpha, upper, u, v = self.alpha, self.upper, self.u, self.v
        tau = np.reshape(tau, (-1, 1))
        r_lower = tau - alpha * u - lower_term
        r_upper = tau - upper * v - upper_term
        dW, d_alpha = self._solve(r_lower / alpha - r_upper / upper - self.residual)
        return dW, d_alpha, (r_lower - u * d_alpha) / alpha, (r_upper + v * d_alpha) / upper

    def pairs(self, step):
        _, d_alpha, du, dv = step
        return ((self.alpha, d_alpha, self.u, du), (self.upper, -d_alpha, self.v, dv))

    def _solve(self, r):
        """``(dW, d_alpha)`` for the linearised residuals ``r`` per hinge argument."""
        raise NotImplementedError


# --------------------------------------------------------------------------- Lee-Lin-Wahba
def _centred_basis(k):
    """An orthonormal basis ``Q`` (``k x (k - 1)``) of the vectors of ``R^k`` summing to zero."""
    return np.linalg.qr(np.eye(k)[:, : k - 1] - 1.0 / k)[0]


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


class _LLWSystem(_BoxSystem):
    """The Newton system of :func:`fit_llw_linear` at the iterate ``(alpha, c - alpha, u, v,
    W)``, its weight block factorised (raises ``LinAlgError`` if it cannot be)."""

    def __init__(self, hinges, alpha, upper, u, v, residual, mismatch):
        super().__init__(alpha, upper, u, v, residual)
        self.hinges, self.mismatch = hinges, mismatch
        X, k, p = hinges.X, hinges.k, hinges.X.shape[1]
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

    def _solve(self, r):
        h, E = self.hinges, self.E
        rhs = -((h.X.T @ h.full(E * r)) @ h.Q) - self.mismatch
        V = scipy.linalg.cho_solve(self.factor, rhs.T.reshape(-1), check_finite=False)
        dW = V.reshape(h.k - 1, -1).T @ h.Q.T
        return dW, E * (r + h.scores(dW))


class _LLWPath(PathProblem):
    """:func:`fit_llw_linear` as a path-following problem: the iterate, its certificate (the
    relative duality gap) and its Newton system."""

    duality_gap = True

    def __init__(self, hinges, tol, fit_intercept):
        self.hinges, self.tol, self.fit_intercept = hinges, tol, fit_intercept
        cap = hinges.cap
        # an interior start: alpha in the middle of its box, W = 0 (so z = 1), v - u = z with
        # u = 1 (W = W(alpha) instead took a third more steps on optdigits: W(c / 2) is far off)
        self.alpha = 0.5 * cap
        self.upper = cap - self.alpha  # c - alpha: an iterate of its own, never 0 by cancellation
        self.W = np.zeros((hinges.X.shape[1], hinges.k))
        self.u, self.v = np.ones_like(cap), np.full_like(cap, 2.0)
        self.best = (self.W, np.inf, np.inf)  # weights, P, certified gap

    def certify(self):
        hinges = self.hinges
        dual_point = np.clip(self.alpha, 0.0, hinges.cap)
        if self.fit_intercept:
            dual_point = hinges.feasible(dual_point)
        W_dual = hinges.weights_of(dual_point)
        dual = float(dual_point.sum()) - 0.5 * hinges.norm(W_dual)
        if self.fit_intercept:
            W_dual[-1] = self.W[-1]  # its last row is 1^T B = 0: the iterate's offsets instead
        self.z, primal = hinges.primal(self.W)
        primal_dual = hinges.primal(W_dual)[1]
        W, primal = (self.W, primal) if primal <= primal_dual else (W_dual, primal_dual)
        gap = max(primal - dual, 0.0)  # weak duality: a negative gap is rounding
        self.candidate = (W, primal, gap)
        return np.array([gap / max(1.0, abs(primal))])

    def keep(self, at, improved):
        self.best = self.candidate

    def floor(self):
        return BARRIER_FLOOR * self.tol * max(1.0, abs(self.best[1])) / self.hinges.cap.size

    def newton_system(self):
        # the slacks' equality v - u = z, and the stationarity R W = M^T B(alpha) (in 1^perp)
        hinges = self.hinges
        mismatch = (hinges.penalised[:, None] * self.W - hinges.weights_of(self.alpha)) @ hinges.Q
        return _LLWSystem(
            hinges, self.alpha, self.upper, self.u, self.v, self.v - self.u - self.z, mismatch
        )

    def move(self, step, t):
        dW, d_alpha, du, dv = step
        (t,) = t
        self.alpha, self.upper = self.alpha + t * d_alpha, self.upper - t * d_alpha
        self.u, self.v = self.u + t * du, self.v + t * dv
        self.W = self.W + t * dW
        self.W -= self.W.mean(axis=1, keepdims=True)  # rows summing to zero, up to rounding


def fit_llw_linear(
    X, y, cost, tol=1e-4, max_steps=100, n_classes=None, fit_intercept=True, progress=None
):
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
    :data:`~advgame.solvers.interior_point.STEP_FRACTION`) keeps ``alpha`` strictly inside its
    box.

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
    progress : Phase, optional
        Told every Newton step (:class:`advgame.solvers._progress.Phase`).

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
    path = _LLWPath(_Hinges(M, y, c, k, free_last=fit_intercept), tol, fit_intercept)
    steps = follow_path(path, max_steps, PATIENCE, progress)[1]
    W, primal, gap = path.best
    if fit_intercept:
        return W[:-1], W[-1], primal, gap, steps
    return W, np.zeros(k), primal, gap, steps


# ------------------------------------------------------------------------------ one-vs-all
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


class _OVASystem(_BoxSystem):
    """The Newton system of the classes still iterated at the iterate ``(alpha, c - alpha, u,
    v, V)`` (class-major), one bordered block per class factorised by Cholesky: see
    :func:`fit_ova_linear`.  ``failed`` marks the classes whose block is not finite or cannot
    be factorised (their ``factors`` entry is None)."""

    def __init__(self, Xa, S, alpha, upper, u, v, V, residual, free_offsets):
        super().__init__(alpha, upper, u, v, residual)
        self.Xa, self.S = Xa, S
        # D0: the identity on w, 0 on a free offset (not regularised)
        identity = np.ones(Xa.shape[1])
        if free_offsets:
            identity[-1] = 0.0
        # the stationarity residual D0 V - (S alpha) Xa; on a free offset it is the dual's
        # equality -sum_i s_ji alpha_ji
        self.mismatch = identity * V - (S * alpha) @ Xa
        self.factors = []
        for E_j in self.E:  # one syrk per class: the dominant O(n q^2) of a step
            factor = None
            if np.all(np.isfinite(E_j)):
                R = Xa * np.sqrt(E_j)[:, None]
                K = R.T @ R
                K[np.diag_indices_from(K)] += identity
                try:
                    factor = scipy.linalg.cho_factor(K, check_finite=False)
                except np.linalg.LinAlgError:
                    pass
            self.factors.append(factor)
        self.failed = np.array([factor is None for factor in self.factors])

    def _solve(self, r):
        E = self.E
        rhs = (self.S * (E * r)) @ self.Xa - self.mismatch
        dV = np.stack(
            [
                scipy.linalg.cho_solve(f, rhs_j, check_finite=False)
                for f, rhs_j in zip(self.factors, rhs)
            ]
        )
        return dV, E * (r - self.S * (dV @ self.Xa.T))


class _OVAPath(PathProblem):
    """:func:`fit_ova_linear` as ``m`` path-following problems side by side, one per class
    (class-major arrays): the iterate of the classes still iterated, their certificates (the
    duality gaps) and Newton systems, and every class's best iterate."""

    duality_gap = True

    def __init__(self, X, S, c, tol, fit_intercept):
        self.X, self.S, self.c, self.tol, self.fit_intercept = X, S, c, tol, fit_intercept
        self.Xa = np.hstack([X, np.ones((X.shape[0], 1))]) if fit_intercept else X
        m, p = S.shape[0], X.shape[1]
        self.count = m
        # each class's best iterate: its objective, weights and offset
        self.best_primal, self.best_W, self.best_b = (
            np.full(m, np.inf),
            np.zeros((m, p)),
            np.zeros(m),
        )
        # an interior start: alpha in the middle of its box, (w, b) = 0 (so z = 1), v - u = z,
        # u = 1
        self.alpha = np.repeat(0.5 * c[None, :], m, axis=0)
        self.upper = self.alpha.copy()  # c - alpha: an iterate of its own, never 0 by cancellation
        self.u, self.v = np.ones_like(self.alpha), np.full_like(self.alpha, 2.0)
        self.V = np.zeros((m, self.Xa.shape[1]))  # (w_j, b_j) per row

    def certify(self):
        p = self.X.shape[1]
        b = self.V[:, p] if self.fit_intercept else np.zeros(self.V.shape[0])
        self.primal, dual, self.b_certified = _certificate(
            self.X, self.S, self.c, self.alpha, self.V[:, :p], b, self.fit_intercept
        )
        return np.maximum(self.primal - dual, 0.0)  # weak duality: a negative gap is rounding

    def keep(self, at, improved):
        self.best_primal[at] = self.primal[improved]
        self.best_W[at] = self.V[improved, : self.X.shape[1]]
        self.best_b[at] = self.b_certified[improved]

    def _scale(self):
        """``max(1, |P|)`` of the best iterates."""
        finite = np.isfinite(self.best_primal)
        return max(1.0, abs(float(self.best_primal[finite].sum())))

    def solved(self, best):
        return not best.sum() > self.tol * self._scale()  # (not: also if NaN)

    def within(self, best):
        return best <= self.tol * self._scale() / self.count

    def drop(self, going):
        self.S, self.alpha, self.upper, self.u, self.v, self.V = (
            a[going] for a in (self.S, self.alpha, self.upper, self.u, self.v, self.V)
        )

    def newton_system(self):
        z = 1.0 - self.S * (self.V @ self.Xa.T)
        return _OVASystem(
            self.Xa,
            self.S,
            self.alpha,
            self.upper,
            self.u,
            self.v,
            self.V,
            self.v - self.u - z,
            self.fit_intercept,
        )

    def floor(self):
        return BARRIER_FLOOR * self.tol * self._scale() / (self.count * self.c.size)

    def move(self, step, t):
        dV, d_alpha, du, dv = step
        t = t[:, None]
        self.alpha, self.upper = self.alpha + t * d_alpha, self.upper - t * d_alpha
        self.u, self.v = self.u + t * du, self.v + t * dv
        self.V = self.V + t * dV


def fit_ova_linear(
    X, y, cost, tol=1e-4, max_steps=100, n_classes=None, fit_intercept=True, progress=None
):
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
    :func:`fit_llw_linear`, ``c - alpha`` is an iterate of its own (never 0 by cancellation) and
    so are ``(W, b)``, moved by the solved ``delta V`` rather than recomputed as ``X^T (s
    alpha)`` (whose rounding errors ``delta alpha`` multiplies by ``E``, unbounded at the
    kinks).

    The classes are independent problems, so each takes its own step length (the step to the
    boundary of its ``alpha``, ``c - alpha``, ``u``, ``v`` times
    :data:`~advgame.solvers.interior_point.STEP_FRACTION`) and its own ``tau_j``: on optdigits
    this took 31 steps where one step length for all classes took 49 (the slowest class held back
    the others).  A class stops being iterated once its certified
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
    progress : Phase, optional
        Told every Newton step (:class:`advgame.solvers._progress.Phase`).

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
    path = _OVAPath(X, S, c, tol, fit_intercept)
    best_gap, steps = follow_path(path, max_steps, PATIENCE, progress)
    W_out[:, classes] = path.best_W.T
    if fit_intercept:
        b_out[classes] = path.best_b
    return W_out, b_out, float(path.best_primal.sum()), float(best_gap.sum()), steps
