"""Pieces of the evaluation protocols that the benchmarks and the reproductions share: the progress
lines on stderr, median wall times and the Wilcoxon marks of the best models."""

import statistics
import sys
import time
from functools import partial

import numpy as np
from scipy.stats import wilcoxon

__all__ = ["SIGNIFICANCE", "Progress", "median_seconds", "over", "wilcoxon_marks"]

#: Level of the paired Wilcoxon signed-rank test behind the "indistinguishably best" marks.
SIGNIFICANCE = 0.05


def wilcoxon_marks(table, significance=SIGNIFICANCE):
    """``*`` for the model with the lowest mean loss and those not significantly worse.

    ``table`` maps a model to its losses on the same splits (paired); a model whose losses equal
    the best's is marked without a test (Wilcoxon is undefined for all-zero differences).
    """
    means = {m: np.mean(v) for m, v in table.items()}
    best = min(means, key=means.get)
    marks = {}
    for model, values in table.items():
        if model == best or np.allclose(values, table[best]):
            marks[model] = "*"
            continue
        p = wilcoxon(values, table[best]).pvalue
        marks[model] = "*" if p >= significance else ""
    return marks


def median_seconds(function, repeats):
    """Median wall time in seconds of ``function()`` over ``repeats`` calls (robust to the odd
    slow call on a shared machine)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


class Progress:
    """The progress of a benchmark on stderr: lines ``[name  elapsed s] message ...`` and, in a
    terminal, ``tqdm`` bars over its cases (:meth:`bar`).

    Calling the object prints a line now; ``later(message)`` returns a picklable callable that
    prints one when called, for a joblib worker to call when its task starts (the elapsed time
    is then that of the start, by the wall clock, so it also holds on a cluster's workers).
    ``enabled=False`` (a run's ``progress=False``) prints neither lines nor bars.  Lines print
    above any open bar (``tqdm.write``); bars show only when stderr is a terminal (``tqdm``'s
    ``disable=None``), so logs and tests get the lines alone.
    """

    def __init__(self, name, enabled=True):
        self.name, self.enabled = name, enabled
        self.start = time.time()

    def later(self, message):
        return partial(_print_progress, self.name, self.start, message, self.enabled)

    def __call__(self, message):
        self.later(message)()

    def bar(self, items, unit, total=None):
        """``items`` with a bar of them counted in ``unit``s (``total`` of them: ``len(items)``
        by default)."""
        from tqdm import tqdm

        return tqdm(
            items,
            desc=self.name,
            unit=unit,
            total=total,
            leave=False,
            disable=None if self.enabled else True,
            file=sys.stderr,
        )


def over(progress, items, unit):
    """``items`` with ``progress``'s bar (:meth:`Progress.bar`) when it is a :class:`Progress`;
    as they are for a plain line callback."""
    return progress.bar(items, unit) if isinstance(progress, Progress) else items


def _print_progress(name, start, message, enabled=True):
    if enabled:
        from tqdm import tqdm

        tqdm.write(f"[{name} {time.time() - start:6.0f}s] {message} ...", file=sys.stderr)
