"""What every fitted estimator shares: its compiled program stays out of its pickle, and a fit
reports its progress on stderr when ``verbose`` is set."""

import sys
import time

import numpy as np

__all__ = [
    "CONVERGENCE_STATUSES",
    "ProgramNotPickled",
    "fit_finished",
    "fit_started",
    "check_fit_controls",
    "progress",
    "record_convergence",
]

CONVERGENCE_STATUSES = ("optimal", "certified", "uncertified")


class ProgramNotPickled:
    """Keep a fitted estimator's compiled program (``program_``, ``compiled_``) for inspection
    in memory, but not in its pickle.

    A compiled program holds the training data (its constraint matrix is built from every row),
    so a pickled model would grow with ``n``; the model's declaration ``game_`` rebuilds it:
    ``model.game_.compile(X, y)``.
    """

    _NOT_PICKLED = ("program_", "compiled_")

    def __getstate__(self):
        state = dict(super().__getstate__())  # object.__getstate__ returns __dict__ itself
        for name in self._NOT_PICKLED:
            state.pop(name, None)
        return state


def record_convergence(estimator, gap, tol, objective, *, exact=False, reason=""):
    """Set the fitted attributes every estimator shares: ``gap_``, ``converged_`` and
    ``stop_reason_``.

    ``converged_`` is one of :data:`CONVERGENCE_STATUSES`: ``'optimal'`` for an exact program
    solved to optimality (``exact=True``; ``gap_`` is the solver's own, 0 when it reports none),
    ``'certified'`` when an independent bound proves ``gap_ <= tol * max(1, |objective_|)``, and
    ``'uncertified'`` otherwise.  ``stop_reason_`` is the free-text account (``reason``) of why
    the solver stopped; the status never depends on its wording.
    """
    gap = float(gap)
    if exact:
        status = "optimal"
    elif gap <= tol * max(1.0, abs(float(objective))):
        status = "certified"
    else:
        status = "uncertified"
    estimator.gap_, estimator.converged_ = gap, status
    estimator.stop_reason_ = str(reason) or status


def progress(estimator, message, level=1):
    """Print ``[Name] message`` to stderr when the estimator's ``verbose`` is at least ``level``
    (1: the stages of a fit; 2: also its iterations)."""
    if getattr(estimator, "verbose", 0) >= level:
        print(f"[{type(estimator).__name__}] {message}", file=sys.stderr, flush=True)


def _summary(estimator):
    """What a fit found: solver, iterations, objective and its certified gap, the stop reason."""
    parts = []
    for name, label, fmt in (
        ("solver_", "solver", "{}"),
        ("n_iter_", "iterations", "{}"),
        ("objective_", "objective", "{:.6g}"),
        ("gap_", "certified gap", "{:.2g}"),
        ("converged_", "", "{}"),
    ):
        value = getattr(estimator, name, None)
        if value is not None and not (isinstance(value, float) and value != value):  # NaN
            text = fmt.format(value)
            parts.append(f"{label} {text}" if label else text)
    return "; ".join(parts)


def fit_started(estimator, X):
    """Say (``verbose >= 1``) what ``fit`` is about to do; returns the start time for
    :func:`fit_finished`.  Called inside ``fit`` itself (a wrapper would add a frame and move
    the warnings' ``stacklevel`` off the user's code)."""
    check_fit_controls(estimator)
    size = len(X) if hasattr(X, "__len__") else "?"
    progress(estimator, f"fitting on {size} samples")
    return time.perf_counter()


def check_fit_controls(estimator):
    """``verbose`` (an integer >= 0, or a bool) and ``random_state`` (None, an integer >= 0, a
    ``numpy.random.RandomState`` or ``Generator``), for every estimator that has them: a wrong
    one is an error naming it, not a TypeError deep in a solver or a seed silently ignored."""
    verbose = getattr(estimator, "verbose", 0)
    if not isinstance(verbose, (bool, int, np.integer)) or verbose < 0:
        raise ValueError(f"verbose must be an integer >= 0 (0, 1 or 2); got {verbose!r}.")
    if hasattr(estimator, "random_state"):  # not get_params: it reads the signature anew
        seed = estimator.random_state
        valid = (
            seed is None
            or isinstance(seed, (np.random.RandomState, np.random.Generator))
            or (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0)
        )
        if not valid:
            raise ValueError(
                "random_state must be None, an integer >= 0, a numpy RandomState or a "
                f"Generator; got {seed!r}."
            )


def fit_finished(estimator, started):
    """Say (``verbose >= 1``) how long ``fit`` took and what it found."""
    summary = _summary(estimator)
    seconds = time.perf_counter() - started
    progress(estimator, f"fitted in {seconds:.2f} s" + (f": {summary}" if summary else ""))
