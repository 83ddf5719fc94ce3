"""The one progress reporter of every solver loop: phase lines, rate-limited iteration lines and
the terminal's progress bar.

A fit makes one :class:`Progress` from its line callback and its ``verbose`` level and hands it
to each solver it runs; each solver opens a :class:`Phase`, calls :meth:`Phase.step` once per
iteration block (a step, an epoch, a round) and :meth:`Phase.end` with its result:

* ``verbose >= 1``: one line per phase, when it ends: the solver, why it ran (``reason``), its
  outcome, its iterations, the time since the fit started and its certified gap, and ``handing
  over to X`` when another solver goes on from its point;
* ``verbose >= 2``: also one line per iteration block, at most one every :data:`INTERVAL`
  seconds (plus the phase's first and last), each with the elapsed time and the certified gap
  where one is known (``gap not yet certified`` otherwise);
* ``verbose >= 1`` with stderr a terminal: a ``tqdm`` bar of each phase's iterations against
  its budget, under the lines (``tqdm``'s ``disable=None``: no bar in a pipe, a log or a test).

``report=None`` (or ``verbose=0``) makes a silent reporter whose calls cost a comparison.
"""

from __future__ import annotations

import re
import sys
import time
from typing import Any

import numpy as np

__all__ = ["INTERVAL", "Phase", "Progress", "clock", "quiet"]

#: Seconds between two iteration lines of a phase, at least (its first and last always print).
INTERVAL = 1.0


def clock() -> float:
    """The reporter's clock in seconds (tests replace it with a fake one)."""
    return time.perf_counter()


def _gap_text(gap):
    if gap is None or not np.isfinite(gap):
        return "gap not yet certified"
    return f"certified gap {gap:.2e}"


class Progress:
    """A fit's progress reporter (see the module notes).

    Parameters
    ----------
    report : callable or None
        Called with each line (the estimator prefixes and prints it); None is silent.
    verbose : int
        1: phase lines; 2: also iteration lines; 0: nothing.
    interval : float
        The rate limit of the iteration lines, in seconds.
    clock : callable, optional
        The time in seconds (default the module's :func:`clock`, looked up at each call).
    """

    def __init__(
        self, report: Any = None, verbose: int = 1, interval: float = INTERVAL, clock: Any = None
    ) -> None:
        self.report = report if verbose >= 1 else None
        self.verbose, self.interval, self._clock = verbose, interval, clock
        self.started = self.now()

    @classmethod
    def of(cls, progress: Any) -> Progress:
        """``progress`` itself when it is a :class:`Progress`, else a reporter of the line
        callback ``progress`` at ``verbose=1`` (None: a silent one)."""
        return progress if isinstance(progress, Progress) else cls(progress)

    def now(self) -> float:
        """The reporter's clock, in seconds."""
        return (self._clock or clock)()

    def elapsed(self) -> float:
        """Seconds since the reporter was made (the fit started)."""
        return self.now() - self.started

    def say(self, line: str) -> None:
        """Emit ``line`` (above any progress bar)."""
        if self.report is None:
            return
        if _Bar.active:
            from tqdm import tqdm

            with tqdm.external_write_mode(file=sys.stderr):
                self.report(line)
        else:
            self.report(line)

    def phase(self, solver: str, reason: str = "", unit: str = "step", total: int | None = None):
        """Open the phase of ``solver`` (why it runs: ``reason``) counting ``unit``s, of which
        it may run ``total`` (the bar's length)."""
        return Phase(self, solver, reason, unit, total)


class _Bar:
    """The ``tqdm`` bar of a phase; ``active`` while one is open (lines go above it)."""

    active = 0

    def __init__(self, solver, unit, total):
        from tqdm import tqdm

        self.bar = tqdm(
            total=total, desc=solver, unit=unit, leave=False, disable=None, file=sys.stderr
        )
        _Bar.active += 1

    def update(self, n):
        self.bar.update(n - self.bar.n)

    def close(self):
        self.bar.close()
        _Bar.active -= 1


class Phase:
    """One solver's run inside a fit (made by :meth:`Progress.phase`): the solver calls
    :meth:`step`, whoever opened it :meth:`end` (or :meth:`finish`)."""

    def __init__(self, progress, solver, reason, unit, total):
        self.progress, self.solver, self.reason, self.unit = progress, solver, reason, unit
        self.lines = progress.report is not None and progress.verbose >= 2
        self.last = None  # when the last iteration line printed (None: none yet)
        self.pending = None  # the last iteration not printed: (n, gap, details, elapsed)
        self.bar = _Bar(solver, unit, total) if progress.report is not None and total else None
        #: whether anyone sees the steps (a line or a bar): else a solver may report in blocks
        self.watched = self.lines or self.bar is not None

    def step(self, n: int, gap: float | None = None, **details: Any) -> None:
        """Iteration block ``n`` done; ``gap`` is the certified gap known now (None or inf:
        none yet); ``details`` (``name=value``) describe it (``J``, ``mu``, ...).  Prints the
        line (``verbose >= 2``) when it is the phase's first or :data:`INTERVAL` seconds after
        the last one printed; otherwise keeps it for :meth:`end`."""
        if self.bar is not None:
            self.bar.update(n)
        if not self.lines:
            return
        now = self.progress.now()
        entry = (n, gap, details, now - self.progress.started)
        if self.last is not None and now - self.last < self.progress.interval:
            self.pending = entry
            return
        self.last, self.pending = now, None
        self._print(*entry)

    def _print(self, n, gap, details, elapsed):
        values = "".join(
            f"{name.replace('_', ' ')} {_format(value)}, " for name, value in details.items()
        )
        self.progress.say(
            f"  {self.solver}, {self.unit} {n}: {values}{_gap_text(gap)}, {elapsed:.1f} s"
        )

    def finish(self, result: Any, handover: str | None = None) -> None:
        """:meth:`end` with a :class:`advgame.solvers.TrainingResult`'s ``message``, ``n_iter``,
        ``gap`` and ``limit_reached``."""
        self.end(result.message, result.n_iter, result.gap, handover, result.limit_reached)

    def end(
        self,
        message: str,
        n_iter: int,
        gap: float | None = None,
        handover: str | None = None,
        limit_reached: bool = False,
    ) -> None:
        """The phase's line (``verbose >= 1``): it stopped (``message``) after ``n_iter``
        iteration blocks with the certified ``gap`` (None: none); ``handover`` names the solver
        that goes on from its point, and then the line says ``stopped at its budget``
        (``limit_reached``) or why it stopped, in place of the message's "reached"."""
        if self.pending is not None:
            self._print(*self.pending)
            self.pending = None
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        if self.progress.report is None:
            return
        outcome = str(message)
        if handover is not None and outcome != "certified":
            outcome = _stopped(outcome, limit_reached)
        reason = f" ({self.reason})" if self.reason else ""
        units = f"{n_iter} {self.unit}{'' if n_iter == 1 else 's'}"
        line = (
            f"{self.solver}{reason}: {outcome}; {units}, {self.progress.elapsed():.1f} s, "
            f"{_gap_text(gap)}"
        )
        self.progress.say(line + (f"; handing over to {handover}" if handover else ""))


def _stopped(message, limit_reached):
    """What a phase that hands over did, without its stop reason's "reached": its budget spent,
    or why it gave up."""
    if limit_reached:
        return f"stopped at its budget ({message.split(' reached')[0]})"
    return f"stopped ({re.split('[:;] gap ', message)[0]})"


def _format(value):
    if isinstance(value, (float, np.floating)):
        return f"{value:.6g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.1e}"
    return str(value)


#: The phase of a silent reporter: what a solver called without ``progress`` reports to.
SILENT = Progress(None, verbose=0).phase("")


def quiet(progress: Phase | None) -> Phase:
    """``progress``, or :data:`SILENT` when it is None (a solver called on its own)."""
    return SILENT if progress is None else progress
