"""Pieces of the evaluation protocols that the benchmarks and the reproductions share: the progress
lines on stderr, median wall times and the Wilcoxon marks of the best models."""

import statistics
import sys
import time
from functools import partial

import numpy as np
from scipy.stats import wilcoxon

__all__ = ["SIGNIFICANCE", "Progress", "median_seconds", "wilcoxon_marks"]

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
    """The progress lines of a benchmark on stderr: ``[name  elapsed s] message ...``.

    Calling the object prints one now; ``later(message)`` returns a picklable callable that
    prints one when called, for a joblib worker to call when its task starts (the elapsed time
    is then that of the start, by the wall clock, so it also holds on a cluster's workers).
    """

    def __init__(self, name):
        self.name = name
        self.start = time.time()

    def later(self, message):
        return partial(_print_progress, self.name, self.start, message)

    def __call__(self, message):
        self.later(message)()


def _print_progress(name, start, message):
    print(f"[{name} {time.time() - start:6.0f}s] {message} ...", file=sys.stderr, flush=True)
