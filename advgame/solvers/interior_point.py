r"""One primal-dual interior-point scaffold: Mehrotra's predictor-corrector path following, with
the step to the boundary, the best certified iterate and the stall rule written once.

Three methods of the package use it, each keeping only what is its own (the residuals, the
linear system of a Newton step and the certificate):

* :func:`advgame.solvers.prediction_sets.solve_class_dual`, the per-class kernel QP of the
  prediction sets (Wang & Qiao, 2022, Eq. 7), certified by its scaled KKT residual;
* :func:`advgame.solvers.svm_newton.fit_llw_linear`, the linear Lee-Lin-Wahba SVM, certified by
  its duality gap;
* :func:`advgame.solvers.svm_newton.fit_ova_linear`, the ``k`` linear one-vs-all SVMs side by
  side, each certified by its own duality gap.

A problem (:class:`PathProblem`) holds its iterate and may stand for ``count`` independent
problems side by side (the one-vs-all SVMs: one per class), whose arrays then carry the
problems along their first axis; each takes its own step length and barrier target, and stops
on its own.  Each iteration of :func:`follow_path`

1. certifies the iterate afresh (a measure per problem: a duality gap, a KKT residual; smaller
   is better), keeps it if it beats the best so far, and stops a problem when its best is
   within the tolerance, after ``patience`` iterations without a better one (rounding has
   stalled), or when the measure is not finite;
2. forms the Newton system at the iterate (a problem whose system is not finite or cannot be
   factorised stops at its best iterate);
3. takes Mehrotra's step (:func:`mehrotra_step`): the affine-scaling predictor towards ``x z =
   0`` for every complementary pair ``(x, z)``, the barrier target ``tau = (mu_aff / mu)^3 mu``
   (``mu`` the mean product, ``mu_aff`` that after the predictor's step to the boundary; at
   least a model's floor), the corrector towards ``x z = tau`` less the predictor's
   second-order terms ``dx dz``, and :data:`STEP_FRACTION` of the step to the boundary.

The run returns with the best certified iterate however it stops; what a model makes of an
uncertified stop (an error, a fallback) is its own.

References
----------
Mehrotra, S. (1992). On the implementation of a primal-dual interior point method. SIAM Journal
on Optimization 2.
Wright, S. J. (1997). Primal-Dual Interior-Point Methods. SIAM.
"""

import numpy as np

from ._progress import quiet

__all__ = [
    "STEP_FRACTION",
    "NewtonSystem",
    "PathProblem",
    "complementarity",
    "follow_path",
    "mehrotra_step",
    "step_to_boundary",
]

#: Fraction of the step to the boundary taken (keeps the iterates strictly interior).
STEP_FRACTION = 0.99


def _per_problem(a, count):
    """``a`` as ``(count, -1)``: one row per problem."""
    return np.reshape(a, (count, -1))


def step_to_boundary(pairs, count=1):
    """Per problem, the longest step ``t <= 1`` keeping every ``x + t dx`` and ``z + t dz`` of the
    complementary ``pairs`` ``(x, dx, z, dz)`` positive (shape ``(count,)``; NaN ratios bound
    nothing)."""
    t = np.ones(count)
    with np.errstate(divide="ignore", invalid="ignore"):
        for x, dx, z, dz in pairs:
            for value, change in ((x, dx), (z, dz)):
                ratio = np.where(change < 0, -value / change, np.inf)
                t = np.fmin(t, np.min(_per_problem(ratio, count), axis=1, initial=np.inf))
    return t


def complementarity(pairs, t=0.0, count=1):
    """Per problem, the mean product ``(x + t dx)(z + t dz)`` over the complementary ``pairs``
    after the step ``t`` (a number, or one per problem)."""
    t = np.reshape(t, (-1, 1))
    total, size = 0.0, 0
    for x, dx, z, dz in pairs:
        x, dx, z, dz = (_per_problem(a, count) for a in (x, dx, z, dz))
        products = (x + t * dx) * (z + t * dz)
        total, size = total + products.sum(axis=1), size + products.shape[1]
    return total / size


class NewtonSystem:
    """The Newton system of a problem at its iterate, factorised once for both of a step's
    solves.

    Subclasses implement :meth:`direction` and :meth:`pairs`.  ``failed`` marks the problems
    (one entry per live problem) whose system is not finite or could not be factorised; a
    system of one problem may instead raise :class:`numpy.linalg.LinAlgError` when built.
    """

    failed = np.zeros(1, dtype=bool)

    def direction(self, tau, corrections=None):
        """The step that moves every complementary product ``x z`` to ``tau`` (one per problem,
        shape ``(count,)``) to first order, less ``corrections`` (one array per pair of
        :meth:`pairs`, the predictor's ``dx dz``; None: none), while zeroing the linearised
        residuals.  Returns the model's tuple of changes."""
        raise NotImplementedError

    def pairs(self, step):
        """The complementary pairs ``(x, dx, z, dz)`` of the iterate along ``step``."""
        raise NotImplementedError


def mehrotra_step(system, count=1, floor=0.0):
    """Mehrotra's predictor-corrector step from the factorised ``system``: returns the
    corrector's ``step`` and its length ``t`` per problem (shape ``(count,)``).

    ``floor`` (a number or one per problem) bounds the barrier target from below."""
    predictor = system.direction(np.zeros(count))  # affine scaling: towards x z = 0
    pairs = system.pairs(predictor)
    mu = complementarity(pairs, count=count)
    mu_affine = complementarity(pairs, step_to_boundary(pairs, count), count)
    tau = np.maximum((mu_affine / mu) ** 3 * mu, floor)
    step = system.direction(tau, [dx * dz for _, dx, _, dz in pairs])
    return step, np.minimum(1.0, STEP_FRACTION * step_to_boundary(system.pairs(step), count))


class PathProblem:
    """A problem (or ``count`` independent ones side by side) for :func:`follow_path`: its
    iterate, certificate and Newton system.

    Subclasses implement :meth:`certify`, :meth:`keep`, :meth:`newton_system` and :meth:`move`
    (and :meth:`drop` when ``count > 1``); ``tol`` is the tolerance on the certified measure.
    """

    count = 1
    tol = 0.0
    #: True when the certified measure is a duality gap (reported as the certified gap).
    duality_gap = False

    def certify(self):
        """The certified measure of the current iterate of each live problem (smaller is
        better; NaN or inf where it cannot be certified)."""
        raise NotImplementedError

    def keep(self, at, improved):
        """Record the current iterate as the best of the live problems ``improved`` (a mask of
        them), whose indices among all ``count`` problems are ``at``."""
        raise NotImplementedError

    def within(self, best):
        """Which live problems, of best measures ``best``, are within the tolerance."""
        return best <= self.tol

    def solved(self, best):
        """Whether the whole run is within the tolerance, given the best measures of all
        problems."""
        return bool(np.all(self.within(best)))

    def drop(self, going):
        """Keep only the live problems ``going`` (a mask of them) in the iterate."""
        raise NotImplementedError

    def newton_system(self):
        """The :class:`NewtonSystem` at the iterate."""
        raise NotImplementedError

    def floor(self):
        """The barrier target's floor, per live problem (0: none)."""
        return 0.0

    def move(self, step, t):
        """Move the iterate by ``t`` (one per live problem) times ``step``."""
        raise NotImplementedError


def follow_path(problem, max_steps, patience, progress=None):
    """Mehrotra's predictor-corrector path following on ``problem`` (:class:`PathProblem`).

    Stops when ``problem.solved`` holds of the best certified measures, after ``max_steps``
    steps, or when every problem has stopped: within the tolerance, ``patience`` iterations
    without a better certified measure, a measure that is not finite, or a Newton system that
    failed.  The problem keeps its best iterates (:meth:`PathProblem.keep`).  ``progress`` (a
    :class:`advgame.solvers._progress.Phase`, optional) is told every step the largest best
    measure.

    Returns
    -------
    best : ndarray of shape (count,)
        The best certified measure of each problem.
    steps : int
        Newton steps taken.
    """
    best = np.full(problem.count, np.inf)
    stalled = np.zeros(problem.count, dtype=np.int64)
    live = np.arange(problem.count)  # the problems still iterated: the rows of the iterate
    steps, phase = 0, quiet(progress)
    while True:
        measure = problem.certify()
        improved = measure < best[live]  # False where not finite
        if improved.any():
            problem.keep(live[improved], improved)
        best[live[improved]] = measure[improved]
        worst = float(np.max(best))
        if problem.duality_gap:
            phase.step(steps, worst)
        else:
            phase.step(steps, best_measure=worst)
        stalled[live] = np.where(improved, 0, stalled[live] + 1)
        if problem.solved(best) or steps >= max_steps:
            break
        done = problem.within(best[live]) | (stalled[live] >= patience) | ~np.isfinite(measure)
        if done.all():
            break
        if done.any():  # the rest go on
            live = live[~done]
            problem.drop(~done)
        try:
            system = problem.newton_system()
            failed = system.failed
        except np.linalg.LinAlgError:
            failed = np.ones(live.size, dtype=bool)
        if failed.any():  # those stop at their best iterates
            stalled[live[failed]] = patience
            continue
        steps += 1
        step, t = mehrotra_step(system, live.size, problem.floor())
        problem.move(step, t)
    return best, steps
