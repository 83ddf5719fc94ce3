r"""The certified smoothing solver :func:`fit_smoothed` and the smoothing continuation.

:func:`fit_smoothed` (the classifier's default beyond the compiled sizes) minimises smoothed
surrogates with continuation (quadratic smoothing of the zero-one adversary in closed form,
entropic smoothing of small vertex tables; the Moreau envelope of a norm-ball ``R``) and stops
when the bound at the smoothed adversaries (:func:`advgame.solvers.dual_bound`) certifies
``tol``; from :data:`SINGLE_MIN_ROWS` rows its steps use float32 feature products and only the
final check (and whatever steps follow if it fails) runs in float64.

Measured for :func:`fit_smoothed` (one BLAS thread, ``tol = 1e-4``): Newton steps alone took
fewer steps but more time than L-BFGS, yet certify the norm balls at ``tol = 1e-6`` where
L-BFGS stalls; hence the default ``method='auto'``.  Mixing every new dual point into the best
one met (an exact line search on the dual, for soft moments) made the bound certify at
227 instead of 360 steps on digits: the bound of a single smoothed adversary loses
``||grad J_mu||^2 / (2 lam)``, so only points near a smoothed optimum gave useful bounds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import closed_forms
from ..exceptions import NotApplicableError, SizeLimitError
from ..uncertainty import NormBall, SoftMoments
from ._progress import quiet
from .certificates import _dual_point, entropies, exact_matching
from .first_order import TrainingResult, _Memory, _warn_uncertified

__all__ = [
    "SmoothingMemo",
    "SmoothedSurrogate",
    "fit_smoothed",
    "smoothed_game",
    "smoothing_obstacle",
]


#: Vertex tables up to this many rows are smoothed (entropically) for :func:`fit_smoothed`;
#: each evaluation costs ``n * rows * k``.
MAX_SMOOTHED_VERTICES = 4_096
#: Rows whose smoothed adversary is a vertex up to this much mass elsewhere have no curvature.
_FLAT = 1e-12


class _Curvature:
    """The Jacobian of the smoothed adversaries ``Q_mu(F)`` (the Hessian of ``value_mu``) on
    the rows where it is not zero: ``rows`` and ``apply(D)`` for directions ``D`` of those rows."""

    def __init__(self, rows, apply):
        self.rows, self.apply = rows, apply


def _zero_one_smoother(weight):
    def smooth(F, mu):
        value, Q, top, level, _, (capped, n_capped), (active, count) = (
            closed_forms._zero_one_smoothing(F, mu, weight)
        )

        def curvature():
            # q_j = (min(f_j, u) - tau)/mu, u = (sum of the capped f - c) / m and
            # tau = (sum of min(f, u) over the active labels - mu) / r; in the column layout
            # (labels x rows) of the closed form
            rows = np.flatnonzero(count > 1)  # a single active label: q = e_j, locally constant
            on, top_set = active[:, rows], capped[:, rows]
            active_mean = on * (1.0 / count[rows])
            capped_mean = top_set * (1.0 / n_capped[rows])
            free = (on & ~top_set) * (1.0 / mu)
            top_set = top_set * (1.0 / mu)

            def apply(D):
                DT = D.T
                total = np.einsum("ij,ij->j", DT, active_mean)
                out = DT - total
                out *= free
                total -= np.einsum("ij,ij->j", DT, capped_mean)
                out -= top_set * total
                return out.T

            return _Curvature(rows, apply)

        return value, Q.T, top + (weight - level), curvature  # V = u + c (Theorem 5)

    return smooth


def _vertex_smoother(table):
    Qv, v = table.Q, table.v

    ones = np.ones(len(v))

    def smooth(F, mu):
        scores = F @ Qv.T
        scores += v
        top = scores.max(axis=1)  # the exact game value
        scores -= top[:, None]
        scores *= 1.0 / mu
        np.exp(scores, out=scores)  # the softmax weights of the vertices, times total
        total = scores @ ones
        Q = scores @ Qv
        Q /= total[:, None]

        def curvature():
            # the largest softmax weight is 1 / total (the best vertex has exp(0) = 1)
            rows = np.flatnonzero(1.0 / total < 1.0 - _FLAT)
            weights = scores[rows]
            weights *= (1.0 / mu) / total[rows, None]
            means = Q[rows]

            def apply(D):
                # the covariance of the vertices under the weights, applied to D, over mu:
                # sum_t w_t q_t (q_t . D) - Q (Q . D) with Q = sum_t w_t q_t
                S = D @ Qv.T
                S *= weights
                out = S @ Qv
                out -= means * (np.einsum("ij,ij->i", D, means) * (1.0 / mu))[:, None]
                return out

            return _Curvature(rows, apply)

        return top + mu * np.log(total), Q, top, curvature

    return smooth


def smoothed_game(game: Any) -> Any:
    r"""``smooth(F, mu) -> (value_mu, Q_mu, value, curvature)``: a smoothed game, or None.

    * zero-one: quadratic smoothing of the adversary,
      :func:`advgame.closed_forms.zero_one_quadratic_smoothing`
      (``value_mu <= value <= value_mu + mu/2``), piecewise quadratic;
    * any matrix whose vertex table ``D`` has at most :data:`MAX_SMOOTHED_VERTICES` rows
      (ordinal, squared and abstain for moderate ``k``, small general matrices): entropic
      smoothing of the maximum over ``D``, ``mu log sum_t exp((v_t + f^T q_t) / mu)``
      (``value <= value_mu <= value + mu log |D|``), whose gradient is the softmax mixture of
      the vertices' ``q_t``.

    Either way ``Q_mu`` is a distribution per row (a feasible adversary) and the gradient of
    ``value_mu``, ``value`` is the exact game value (a by-product: the level of Theorem 5, the
    best vertex), and ``curvature()`` gives the Jacobian of ``Q_mu`` (the Hessian of
    ``value_mu``) on the rows where it is not zero.  None when neither applies.
    """
    structure = game.structure
    if structure is not None and structure.kind == "zero_one" and structure.has_closed_form:
        return _zero_one_smoother(structure.weight)
    try:
        table = game.vertex_table()
    except (SizeLimitError, NotApplicableError):
        return None
    if len(table) > MAX_SMOOTHED_VERTICES:
        return None
    return _vertex_smoother(table)


def smoothing_obstacle(game: Any, uncertainty: Any, fmap: Any) -> str | None:
    """Why :func:`fit_smoothed` cannot certify this problem, or None when it can.

    ``'exact'`` for exact moment matching (``Exact`` or a ball of radius 0): ``R^*`` is the
    indicator of ``{0}``, which no mixture of smoothed adversaries reaches, so the dual bound
    is useless; the compiled LP certifies instead.  Otherwise a sentence (kernel features, or a
    game without a smoothing by :func:`smoothed_game`).
    """
    if exact_matching(uncertainty):
        return "exact"
    if not fmap.coordinate_norms:
        return (
            "kernel features (the bound needs R^* in explicit coordinates; fit_kernel certifies "
            "kernels with the Gram matrix)"
        )
    return _unsmoothed(game)


def _unsmoothed(game):
    """Why :func:`smoothed_game` has no smoothing of ``game`` (a sentence), or None."""
    if smoothed_game(game) is None:
        return (
            "the loss has no zero-one closed form and no vertex table with at most "
            f"{MAX_SMOOTHED_VERTICES} rows to smooth"
        )
    return None


def _smoothed_penalty(uncertainty, theta, nu, fmap):
    """``(R_nu, gradient, hessian_apply)``: ``R`` itself when smooth (soft moments), else its
    Moreau envelope ``max_{g in B} g . theta - nu/2 ||g||^2`` for the norm balls (``B`` the
    moment set), whose gradient is the projection of ``theta / nu`` onto ``B``."""
    if isinstance(uncertainty, SoftMoments):
        lam = uncertainty.lam
        return (0.5 * lam * float(theta @ theta), lam * theta, lambda v: lam * v)
    point = theta / nu
    g = uncertainty.project_moments(point, fmap)
    value = float(g @ theta) - 0.5 * nu * float(g @ g)
    eps, norm = uncertainty.radius, uncertainty.norm
    if norm == np.inf:
        inside = np.abs(point) < eps

        def hessian(v):
            return np.where(inside, v, 0.0) / nu

    elif norm == 1:
        support = g != 0
        signs = np.sign(point) * support
        outside = np.abs(point).sum() > eps
        size = max(np.count_nonzero(support), 1)

        def hessian(v):
            if not outside:
                return v / nu
            return (np.where(support, v, 0.0) - signs * (signs @ v) / size) / nu

    else:
        blocks = [np.arange(theta.size)] if norm == 2 else fmap.blocks()

        def hessian(v):
            out = v.copy()
            for b in blocks:
                length = np.linalg.norm(point[b])
                if length > eps:
                    unit = point[b] / length
                    out[b] = (eps / length) * (v[b] - unit * (unit @ v[b]))
            return out / nu

    return value, g, hessian


class SmoothedSurrogate:
    """``J_mu(theta)``: the surrogate with the game smoothed by ``mu`` (and a norm-ball ``R`` by
    its Moreau envelope of parameter ``nu``); value and gradient, and :meth:`hessian` at the
    last point evaluated.

    Keeps the potentials and adversaries of its last evaluation (``last``), which
    :func:`fit_smoothed` reuses for the exact objective and the dual bound.
    """

    def __init__(self, objective: Any, smooth: Any, mu: float, nu: float) -> None:
        self.objective, self.smooth, self.mu, self.nu = objective, smooth, mu, nu
        self.last = self.part = None
        n, k = objective.y.size, objective.game.n_labels
        rows = np.arange(n)
        #: flat positions of the entries (i, y_i) in C order and in column-major order
        self._labels = {"C": rows * k + objective.y, "F": objective.y * n + rows}

    def __call__(self, theta: np.ndarray, F: np.ndarray | None = None) -> tuple[float, np.ndarray]:
        """``(J_mu(theta), its gradient)``; ``F``, the potentials at ``theta`` when they are
        known (a stage starting where the last one stopped), saves their product."""
        o = self.objective
        F = o.operator.forward(theta) if F is None else F
        value, Q, exact, curvature = self.smooth(F, self.mu)
        observed = _flat(F).take(self._labels[_order(F)])
        G = Q * o.weights[:, None]  # in Q's memory order (column-major from the closed forms)
        _flat(G)[self._labels[_order(G)]] -= o.weights  # G is contiguous: a view
        moment = -o.operator.adjoint(G)
        loss = o.weights @ (value - observed)
        return self.resume(theta, (loss, F, Q, exact, observed, moment, curvature))

    def resume(self, theta: np.ndarray, part: tuple) -> tuple[float, np.ndarray]:
        """``(J_mu(theta), its gradient)`` from the game's part of an evaluation at ``theta``
        and this ``mu`` (``part``, kept by :class:`SmoothingMemo`): only the regulariser's
        part is computed."""
        loss, F, Q, exact, observed, moment, curvature = part
        o = self.objective
        penalty, gradient, hessian = _smoothed_penalty(o.uncertainty, theta, self.nu, o.fmap)
        #: theta, potentials, adversaries, exact game values, observed potentials f_{i,y_i}
        #: and moment residual
        self.last, self.part = (theta.copy(), F, Q, exact, observed, moment), part
        self.penalty_gradient = gradient
        self._curvature, self._penalty_hessian = curvature, hessian
        return loss + penalty, gradient - moment

    def hessian(self) -> Any:
        """``v -> (Hessian of J_mu at the last point) v``: two products with the rows that
        have curvature, plus the regulariser's part."""
        o, curvature = self.objective, self._curvature()
        operator = o.operator.subset(curvature.rows)
        weights = o.weights[curvature.rows, None]
        penalty = self._penalty_hessian

        def apply(v):
            M = curvature.apply(operator.forward(v))
            M *= weights
            return operator.adjoint(M) + penalty(v)

        return apply


class SmoothingMemo:
    """What :func:`fit_smoothed` keeps of one fit of a set of rows for the next fit of the same
    rows (the ``memo`` of :class:`~advgame.solvers.SurrogateObjective`; a path of strengths
    keeps one per fold, :class:`advgame._estimator.inputs.TrainingRows`):

    * the last float64 evaluation.  The game's part of ``J_mu(theta)`` (the weighted loss,
      potentials, smoothed adversaries, exact game values, observed potentials and moment
      residual) depends on the rows, the loss, ``theta`` and ``mu``, not on the regulariser.
      A warm fit on a path starts at the last fit's parameters and at the same first
      smoothing, where that fit's final evaluation was made: its first evaluation is taken from
      here, in float64 even where the steps run in float32, so a fit already certified there
      costs no evaluation at all.
    * the L-BFGS pairs of its last smoothing, for soft moments: a pair ``(s, y)`` of
      ``J_mu`` with ``R = lam/2 ||theta||^2`` is the game's pair plus ``lam s``, so at
      ``lam'`` it is ``(s, y + (lam' - lam) s)``
      (:meth:`~advgame.solvers.first_order._Memory.shifted`), and the next fit's first step
      is a quasi-Newton step, not a gradient step.  Only for a fit that starts at that
      smoothing: the curvature of ``J_mu`` grows as ``mu`` shrinks, and the pairs of a small
      ``mu`` cost the next fit's first, larger smoothing more steps than a fresh start
      (measured once, on a version that kept them for any smoothing, since changed: an
      ordinal path on 80 rows at ``tol = 1e-3``, 155 -> 190 evaluations).

    Measured on the fold paths of ``AdversarialClassifierCV`` (10 strengths x 5 folds, split 0
    of docs/results/defaults.md, ninth run, ``count.py``): at 20,000 rows 275 evaluations
    without the memo and 182 with it (230 with an uncommitted version that kept the
    evaluation only); on satimage 2,275 and 2,126 (its fits start from the dual ascent's
    point, so only the pairs serve).

    Parameters
    ----------
    None: a memo starts empty; :func:`fit_smoothed` fills it through :meth:`keep` and reads
    it through :meth:`recall` and :meth:`pairs`.
    """

    def __init__(self) -> None:
        self._kept = self._pairs = None

    def keep(
        self, surrogate: SmoothedSurrogate | None, pairs: Any, uncertainty: Any, mu: float
    ) -> None:
        """Keep what a fit of the rows ended with.

        Parameters
        ----------
        surrogate : SmoothedSurrogate or None
            Its last evaluation is kept (it must be of the float64 objective); None keeps the
            evaluation kept before.
        pairs : _Memory
            The fit's L-BFGS pairs, kept for soft moments only (see the class notes).
        uncertainty : UncertaintySet
            The fit's uncertainty set (its ``lam``).
        mu : float
            The smoothing the fit ended at, the one the pairs belong to.
        """
        if surrogate is not None:
            loss = surrogate.objective.game.loss.matrix
            self._kept = (surrogate.last[0], surrogate.mu, loss, surrogate.part)
        soft = isinstance(uncertainty, SoftMoments)
        self._pairs = (pairs, uncertainty.lam, mu) if soft and len(pairs) else None

    def recall(self, theta: np.ndarray, mu: float, loss: np.ndarray) -> tuple | None:
        """The game's part of the kept evaluation if it was made at ``theta`` and ``mu`` with
        the loss matrix ``loss``.

        Returns
        -------
        tuple or None
            The ``part`` that :meth:`SmoothedSurrogate.resume` takes, or None.
        """
        if self._kept is None:
            return None
        kept_theta, kept_mu, kept_loss, part = self._kept
        same = kept_mu == mu and np.array_equal(kept_theta, theta)
        return part if same and np.array_equal(kept_loss, loss) else None

    def pairs(self, uncertainty: Any, mu: float) -> Any:
        """The kept pairs moved to ``uncertainty``'s ``lam``: ``(s, y + (lam' - lam) s)``.

        Returns
        -------
        _Memory or None
            A new memory of the moved pairs for a fit starting at the smoothing ``mu``; None
            when none were kept at ``mu`` or either set is not soft moments.
        """
        if self._pairs is None or not isinstance(uncertainty, SoftMoments):
            return None
        pairs, lam, kept_mu = self._pairs
        return pairs.shifted(uncertainty.lam - lam) if kept_mu == mu else None


def _order(A):
    """``'F'`` for a column-major 2-D array, else ``'C'``."""
    return "F" if A.flags.f_contiguous and not A.flags.c_contiguous else "C"


def _flat(A):
    """``A`` (2-D) as 1-D in its memory order :func:`_order`: a view when ``A`` is contiguous
    (a C-ordered copy otherwise)."""
    return A.T.reshape(-1) if _order(A) == "F" else A.reshape(-1)


def _conjugate_gradient(apply, b, tolerance, max_iter):
    """Approximately solve ``A x = b`` (``A`` positive semi-definite) from ``x = 0``."""
    x = np.zeros_like(b)
    r = b.copy()
    d = r.copy()
    rr = float(r @ r)
    goal = tolerance**2 * rr
    for _ in range(max_iter):
        Ad = apply(d)
        curvature = float(d @ Ad)
        if curvature <= 1e-300:
            break
        step = rr / curvature
        x += step * d
        r -= step * Ad
        new = float(r @ r)
        if new <= goal:
            break
        d *= new / rr
        d += r
        rr = new
    return x if np.any(x) else b.copy()


#: Consecutive stalled stages (no step decreases ``J_mu``, or the stage budget spent) after
#: which :func:`fit_smoothed` gives up.
MAX_STALLS = 3
#: The factor by which each stage shrinks the smoothing (measured: jumps of up to 1e-3, sized
#: by the smoothing part of the gap, left Newton steps stalled on the norm balls).
MU_SHRINK = 0.1
#: Steps of one smoothing stage at most; CG iterations per Newton step at most.
NEWTON_STAGE_STEPS, CG_STEPS = 200, 100
#: ``method='auto'`` with a norm-ball ``R``: L-BFGS steps in a stage before switching to
#: Newton steps (with soft moments it switches only after a failed line search).  Measured
#: (one BLAS thread, ``tol = 1e-4``): Newton's conjugate gradients certify the l1 ball on
#: segment (980 steps; L-BFGS alone stalls at gap 5e-3), but with soft moments they cost more
#: than they save: digits 3,249 Hessian products for 243 steps against 475 L-BFGS steps in
#: two thirds of the time, optdigits 7,014 against none (3.6 s against 1.0 s, same run).
LBFGS_PATIENCE = 100
#: Pairs kept by ``method='lbfgs'``.
LBFGS_MEMORY = 20
#: The stage solver of :func:`fit_smoothed` (chosen by measurement, see the module notes).
DEFAULT_METHOD = "auto"
#: :func:`fit_smoothed` warm-starts problems of at least ``COARSE_MIN_ROWS`` rows on every
#: ``COARSE_STEP``-th row solved to the relative gap ``COARSE_TOL``.  Measured (one BLAS
#: thread, zero-one, ``tol = 1e-4``): full-data steps 27 -> 17 on ``make_classification``
#: with 20,000 rows, 24 -> 10 with 200,000, 33 -> 22 on 70,000 synthetic rows (fit time
#: 0.55-0.75x); on 1,000-5,000 rows (digits, satimage, optdigits) it did not help.  It runs
#: only for ``tol < COARSE_TOL``: at ``tol = 1e-3`` (the estimators' default) the subsample is
#: solved as tightly as the full problem and the full steps start at a tenth of the first
#: smoothing, which costs more than it saves: the default fit (then ``lam = 1/n``; the default
#: is ``3e-4`` since 2026-11-28) on the 20,000 synthetic rows of
#: ``advgame bench defaults`` part 2 takes 14 steps without it against 38 with it, and 1.01-1.10x
#: ``LogisticRegression()``'s CPU time against 1.26x (one BLAS thread, medians of 3 splits;
#: docs/results/defaults.md, third run; 0.84-0.91x in the fourth, with the dense probe's change).
COARSE_MIN_ROWS, COARSE_STEP, COARSE_TOL = 10_000, 10, 1e-3
#: ``precision='auto'`` of :func:`fit_smoothed` runs the steps with float32 feature products
#: from this many rows on.  Measured (one BLAS thread, zero-one, ``tol = 1e-4``, a loaded
#: 2-core machine): at 200,000 x 51 and ``k = 5`` the products take 19 and 15-18 ms against
#: 34-36 and 26-28 ms in float64; the same steps plus one float64 check make the fit 5% faster
#: at 200,000 rows and 12% at 20,000.  Smaller problems run to small ``mu``, where the float32
#: rounding of ``F`` over ``mu`` reaches the adversaries, and stay in float64.
SINGLE_MIN_ROWS = 10_000


def _damped(hessian, sigma):
    return lambda v: hessian(v) + sigma * v


def fit_smoothed(
    objective: Any,
    theta0: np.ndarray,
    tol: float = 1e-6,
    max_iter: int = 1000,
    mu0: float | None = None,
    method: str | None = None,
    warn: bool = True,
    coarse: bool = True,
    precision: str = "auto",
    progress: Any = None,
) -> TrainingResult:
    r"""Minimise ``J`` on smoothed surrogates with continuation; certified by weak duality.

    Each stage minimises ``J_mu`` (:class:`SmoothedSurrogate`: the game smoothed by
    :func:`smoothed_game`, a norm-ball ``R`` by its Moreau envelope of parameter
    ``nu = mu / radius^2``), warm-started, with an Armijo backtracking line search along
    ``method``'s directions: ``'lbfgs'`` (:class:`_Memory`, :data:`LBFGS_MEMORY` pairs),
    ``'newton'`` (regularised Newton, ``(H + ||g|| I) d = -g`` by conjugate gradients on
    Hessian-vector products that touch only the rows whose smoothed adversary is not a vertex)
    or ``'auto'`` (:data:`DEFAULT_METHOD`: L-BFGS, switching to Newton for the rest of a stage
    after a failed line search or, for a norm ball, :data:`LBFGS_PATIENCE` steps).  After every
    step the smoothed adversaries ``Q_mu`` give a dual point, which is mixed with the best dual
    point met so far (:meth:`~advgame.uncertainty.UncertaintySet.mixture`: for soft moments
    the best convex combination; ``H_L`` is concave, so a mixture's bound holds), and the
    bound of :func:`dual_bound` gives ``lower <= J*``, while ``J(theta)`` (the exact game value
    comes with the smoothed one) is an upper bound; the run stops as soon as ``min J - max
    lower <= tol * max(1, |J|)`` (message ``'certified'``).  At a smoothed optimum the point's own gap is the
    *smoothing part* ``sum_i w_i (value(f_i) - H_L(q_i) - f_i^T q_i)`` (plus ``R(theta) -
    theta . grad R_nu`` for a norm ball); once the rest of its own gap falls below it (the
    mixed bound would end stages before their problems are solved), ``mu`` shrinks by
    :data:`MU_SHRINK` and a new stage starts.  After :data:`MAX_STALLS` stalled stages in a
    row (no decrease of ``J_mu`` left, or :data:`NEWTON_STAGE_STEPS` spent) it gives up.

    With ``coarse``, at least :data:`COARSE_MIN_ROWS` rows and ``tol < COARSE_TOL``, the
    stages first run on every :data:`COARSE_STEP`-th row (to the relative gap
    :data:`COARSE_TOL`) and the full problem
    starts from their solution and L-BFGS pairs (and at most a tenth of ``mu0``): the
    subsample's curvature is the full problem's up to sampling noise, so the full-data steps,
    which dominate the time, are about halved.

    With ``precision='single'`` (``'auto'``: from :data:`SINGLE_MIN_ROWS` rows, for operators
    with an ``astype``) the two matrix products of every step run in float32 (``X`` converted
    once; ``F``, the adversaries, the gradient and all sums stay float64), so the gaps the
    steps see are estimates.  When the steps would stop (an estimated certificate, a stalled
    stage or ``max_iter``) the point is evaluated again in float64 and the run goes on in
    float64 from there: the returned objective, gap and message are float64 ones, as
    rigorous as with ``'double'``.  The float32 products differ from float64 ones by about
    ``1e-7 |x| |theta|`` per potential, which moves ``q_mu`` by that over ``mu``: far below
    the certified gaps at the smoothings of ``tol >= 1e-6``.

    ``max_iter`` bounds the steps over all stages (``limit_reached``; the coarse stages have a
    budget of their own).  The returned ``gap`` is certified whatever happened: the smallest
    ``J`` met minus the largest bound met; a ``ConvergenceWarning`` (unless ``warn=False``)
    says when it is above ``tol``.  Raises
    ``NotApplicableError`` when :func:`smoothing_obstacle` names one.

    Parameters
    ----------
    objective : SurrogateObjective
        ``J(theta) = sum_i w_i (value(f_i) - f_{i,y_i}) + R(theta)`` (Fathony et al. 2018a,
        Eq. 2, with the uncertainty set's regulariser).
    theta0 : ndarray
        Starting point.
    tol : float
        The certified relative gap to reach.
    max_iter : int
        Steps over all stages.
    mu0 : float, optional
        First smoothing parameter (default a tenth of the loss range).
    method : {'auto', 'lbfgs', 'newton'}, optional
        Step directions (default :data:`DEFAULT_METHOD`).
    warn : bool
        Warn when the certified gap stays above ``tol``.
    coarse : bool
        Warm-start large problems on a subsample (see above).
    precision : {'auto', 'single', 'double'}
        The precision of the steps' matrix products (see above); the certificate is float64.
    progress : Phase, optional
        Told every step (:class:`advgame.solvers._progress.Phase`).

    Returns
    -------
    TrainingResult
        ``theta`` (the best ``J`` met), ``objective``, ``n_iter``, ``message`` (``'certified'``
        exactly when ``gap <= tol * max(1, |objective|)``) and the certified ``gap``.
    """
    game, o = objective.game, objective
    obstacle = smoothing_obstacle(game, o.uncertainty, o.fmap)
    if obstacle is not None:
        raise NotApplicableError(f"fit_smoothed cannot certify this problem: {obstacle}.")
    smooth = smoothed_game(game)
    method = method or DEFAULT_METHOD
    L = game.loss.matrix
    scale = max(float(np.max(L) - np.min(L)), 1e-12)
    mu = 0.1 * scale if mu0 is None else mu0
    single = _single_precision(o, precision)
    theta, pairs, coarse_steps = np.asarray(theta0, dtype=float), None, 0
    if coarse and o.y.size >= COARSE_MIN_ROWS and tol < COARSE_TOL:
        # only a starting point: the coarse stages need no float64 check
        part = (o if single is None else single).subset(np.arange(0, o.y.size, COARSE_STEP))
        warm = _continuation(
            part, smooth, theta, COARSE_TOL, max_iter, mu, method, scale, phase=progress
        )
        theta, pairs, coarse_steps = warm.theta, warm.pairs, warm.n_iter
        mu = min(warm.mu, MU_SHRINK * mu)  # the loose coarse tolerance stops at a large mu
    run = _continuation(o, smooth, theta, tol, max_iter, mu, method, scale, pairs, single, progress)
    gap = max(run.objective - run.lower, 0.0)
    message = run.message
    certified = message == "certified"
    if not certified:
        message = (
            f"{message}: gap {gap:.2e} above tol={tol:g} * max(1, |J|) after {run.stages} stages"
        )
    if not certified and warn:
        _warn_uncertified("smoothing solver", message, run.objective)
    limit_reached = message.startswith("max_iter")
    n_iter = run.n_iter + coarse_steps
    return TrainingResult(run.theta, run.objective, n_iter, message, gap, limit_reached)


def _single_precision(objective, precision):
    """``objective`` with float32 feature products for :func:`fit_smoothed`'s steps, or None
    (``precision='double'``, or ``'auto'`` below :data:`SINGLE_MIN_ROWS` rows or for an
    operator without ``astype``)."""
    if precision not in ("auto", "single", "double"):
        raise ValueError(f"precision must be 'auto', 'single' or 'double'; got {precision!r}.")
    supported = hasattr(objective.operator, "astype")
    if precision == "single" and not supported:
        raise ValueError("precision='single' needs a feature operator with an astype method.")
    if precision == "double" or not supported:
        return None
    if precision == "auto" and objective.y.size < SINGLE_MIN_ROWS:
        return None
    return objective.astype(np.float32)


def _mixed(first, second, s):
    """The dual point ``(1 - s) first + s second`` (moment residuals and entropy gains; the
    gain is a lower bound for the mixed adversaries, ``H_L`` being concave)."""
    return (1 - s) * first[0] + s * second[0], (1 - s) * first[1] + s * second[1]


@dataclass
class _Continuation:
    """What one run of smoothing stages reached: the best ``J`` met and its ``theta``, the
    largest dual bound met, steps, stages, why it stopped, its last smoothing and L-BFGS pairs
    (a :class:`_Memory`)."""

    theta: np.ndarray
    objective: float
    lower: float
    n_iter: int
    stages: int
    message: str
    mu: float
    pairs: _Memory


def _continuation(
    objective, smooth, theta0, tol, max_iter, mu, method, scale, pairs=None, single=None, phase=None
):
    """The stages of :func:`fit_smoothed` from ``theta0`` at smoothing ``mu``, starting with the
    L-BFGS ``pairs`` given (a :class:`_Memory`; kept from stage to stage unless ``R`` is a norm
    ball).

    With ``single`` (``objective`` with float32 products) the steps run on it until they would
    stop; the bests met so far, estimates, are then dropped, and the same stage goes on from
    the same point and pairs with ``objective``'s float64 evaluations, which alone make the
    result.  ``phase`` is told every step."""
    o, phase = objective, quiet(phase)
    radius = getattr(o.uncertainty, "radius", 1.0)
    best_value, best_theta, lower = np.inf, np.asarray(theta0, dtype=float).copy(), -np.inf
    L = o.game.loss.matrix
    current = o if single is None else single
    dual = None  # the best dual point met: a mixture of the adversaries met (moment, gain)

    def check(surrogate, theta):
        nonlocal best_value, best_theta, lower, dual
        _, F, Q, exact, observed, moment = surrogate.last
        penalty = o.uncertainty.penalty(theta, o.fmap)
        J = float(o.weights @ (exact - observed)) + penalty
        if J < best_value:
            best_value, best_theta = J, theta.copy()
        entropy = entropies(L, Q)
        base, own = _dual_point(L, o.y, o.weights, moment, entropy)
        point = own if dual is None else _mixed(dual, own, o.uncertainty.mixture(dual, own, o.fmap))
        bound = o.uncertainty.dual_bound(point[0], base, point[1], o.fmap)
        if bound > lower:
            lower, dual = bound, point
        # the gap left at the smoothed optimum: the adversaries' suboptimality in the exact
        # game and, for a norm ball, R(theta) - theta . g with g = grad R_nu in the ball
        inner = float(o.weights @ (exact - entropy - np.einsum("ij,ij->i", F, Q)))
        if isinstance(o.uncertainty, NormBall):
            inner += penalty - float(theta @ surrogate.penalty_gradient)
        inner = max(inner, 0.0)
        # this point's own gap less the smoothing part: what the stage's steps can close (the
        # mixed bound would end a stage before its smoothed problem is solved)
        rest = J - o.uncertainty.dual_bound(own[0], base, own[1], o.fmap) - inner
        return best_value - lower, rest, inner

    theta = best_theta.copy()
    n_iter, previous_mu = 0, mu
    # norm balls: Newton steps after LBFGS_PATIENCE steps, and fresh pairs in every stage
    patience = LBFGS_PATIENCE if isinstance(o.uncertainty, NormBall) else np.inf
    if pairs is None and o.memo is not None:
        pairs = o.memo.pairs(o.uncertainty, mu)  # the last fit's of these rows, if any
    pairs = _Memory(LBFGS_MEMORY) if pairs is None else pairs

    last = None  # the last stage's surrogate: the next one starts at its last point

    def stage(mu):
        nonlocal theta, n_iter, pairs, previous_mu, last
        # with soft moments the L-BFGS pairs go on into the next stage: its curvature is
        # steeper, but they beat a fresh start (measured, steps: digits 475 -> 406, optdigits
        # 309 -> 288, satimage 219 -> 210, segment 178 -> 170, ordinal and squared 3-30% fewer);
        # the norm balls' envelopes change shape with nu, and stale pairs cost them max_iter
        # at tol = 1e-6 (ordinal, l1)
        if mu != previous_mu and patience < np.inf:
            pairs = _Memory(LBFGS_MEMORY)
        previous_mu = mu
        surrogate = SmoothedSurrogate(current, smooth, mu, mu / radius**2)
        kept = None if o.memo is None else o.memo.recall(theta, mu, L)
        if kept is not None:  # the last fit of these rows ended here (a path of strengths)
            J, gradient = surrogate.resume(theta, kept)
        else:
            known = last is not None and last.objective is current and last.last is not None
            known = known and np.array_equal(last.last[0], theta)
            J, gradient = surrogate(theta, last.last[1] if known else None)
        last = surrogate
        newton, stage_steps = method == "newton", 0
        while True:
            gap, rest, inner = check(surrogate, theta)
            phase.step(n_iter, gap, J=best_value, mu=mu)
            target = tol * max(1.0, abs(best_value))
            if gap <= target:
                return "certified"
            if n_iter >= max_iter:
                return f"max_iter={max_iter} reached"
            if rest <= max(inner, 0.5 * target):
                return NEXT_STAGE
            if stage_steps >= NEWTON_STAGE_STEPS and (newton or method == "lbfgs"):
                return STALLED
            n_iter += 1
            stage_steps += 1
            if method == "auto" and not newton and stage_steps > patience:
                newton, stage_steps = True, 0
            norm = float(np.linalg.norm(gradient))
            if newton:
                # regularised Newton: (H + sigma I) d = -g with sigma = ||g|| keeps the step
                # bounded where J_mu is nearly flat (a Moreau envelope with a large nu)
                step = _conjugate_gradient(
                    _damped(surrogate.hessian(), norm), -gradient, min(0.1, norm), CG_STEPS
                )
            else:
                step = pairs.direction(gradient)
            slope = float(gradient @ step)
            if slope >= 0:
                step, slope = -gradient, -(norm**2)
            t = 1.0
            while t > 1e-12:
                trial = theta + t * step
                J_trial, g_trial = surrogate(trial)
                if J_trial <= J + 1e-4 * t * slope:
                    break
                t *= 0.5
            else:
                # no decrease along this direction (in float32 this may be rounding: stall)
                if method == "auto" and not newton and current is o:
                    surrogate(theta)  # restore the cache
                    newton, stage_steps = True, 0
                    continue
                return STALLED
            if not newton:
                pairs.push(trial - theta, g_trial - gradient)
            theta, J, gradient = trial, J_trial, g_trial

    def retry():
        """Float32 steps stop here: check this point in float64 and go on in float64."""
        nonlocal current, best_value, best_theta, lower, dual
        if current is o:
            return False
        current = o
        best_value, best_theta, lower, dual = np.inf, theta.copy(), -np.inf, None
        return True

    # the steps no longer close the rest of the gap and smaller mu did not help either (they
    # worsen the conditioning; measured on optdigits, no later stage helps): MAX_STALLS
    outcome, mu, stages = continuation(
        stage, mu, lambda mu: mu * MU_SHRINK, 1e-14 * scale, MAX_STALLS, retry
    )
    message = f"stalled at mu={mu:.1e}" if outcome is STALLED else outcome
    if o.memo is not None:  # for the next fit of these rows (only float64 evaluations)
        exact = last if last is not None and last.objective is o else None
        o.memo.keep(exact, pairs, o.uncertainty, mu)
    return _Continuation(best_theta, best_value, lower, n_iter, stages, message, mu, pairs)


#: What a stage of :func:`continuation` returns when the run may go on: its smoothed problem
#: is solved as far as the smoothing allows (go on at a smaller ``mu``), its steps no longer
#: decrease the smoothed objective, or they stopped doing so after some did (the first stall in
#: a row again).
NEXT_STAGE, STALLED, STALLED_AFTER_STEPS = object(), object(), object()


def continuation(
    stage: Any,
    mu: float,
    shrink: Any,
    floor: float,
    max_stalls: float = np.inf,
    retry: Any = None,
) -> tuple[Any, float, int]:
    r"""The smoothing continuation: minimise smoothed objectives ``J_mu`` for a decreasing ``mu``.

    A non-smooth ``J`` (a game value, a norm) is replaced by a smooth ``J_mu`` with
    ``J_mu <= J <= J_mu + c mu`` (Nesterov 2005, "Smooth minimization of non-smooth
    functions"); a stage minimises ``J_mu`` warm-started where the last one stopped, and
    ``mu`` shrinks when the smoothed problem is solved as far as its smoothing allows.  The
    stage's steps are the caller's: ``stage(mu)`` runs one stage and returns
    :data:`NEXT_STAGE`, :data:`STALLED` (or :data:`STALLED_AFTER_STEPS`, which restarts the
    count of stalls in a row) or anything else, which ends the run (a message: certified, a
    budget spent).  The run also ends, with :data:`STALLED`, after ``max_stalls`` stalled
    stages in a row or when ``shrink(mu) < floor``.  When the run would end, or a stage
    stalled, ``retry()`` (if given) may return True to run the stage again at the same ``mu``
    (the stall count reset): :func:`fit_smoothed` then goes on in float64 from its float32 steps.

    Returns
    -------
    (outcome, mu, stages)
        What ended the run (the last stage's message, or :data:`STALLED`), the last ``mu`` and
        the number of stages run.
    """
    stages = stalls = 0
    while True:
        stages += 1
        outcome = stage(mu)
        stalled = outcome is STALLED or outcome is STALLED_AFTER_STEPS
        if stalled or outcome is NEXT_STAGE:
            stalls = 1 if outcome is STALLED_AFTER_STEPS else stalls + 1 if stalled else 0
            outcome = STALLED if stalls >= max_stalls or shrink(mu) < floor else None
        if retry is not None and (outcome is not None or stalled) and retry():
            stalls = 0
            continue
        if outcome is not None:
            return outcome, mu, stages
        mu = shrink(mu)
