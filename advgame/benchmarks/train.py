"""``advgame bench train``: fit time and accuracy of AdversarialClassifier next to scikit-learn.

Data: the vendored optdigits and satimage files (70/30 stratified split, ``random_state=0``,
features standardised on the training part) and a synthetic problem (``n = 100,000``, ``d = 50``,
``k = 10``) whose labels are the argmax of a random linear score plus
Gumbel noise.  Models: ``AdversarialClassifier(loss='zero_one', solver='lbfgs')`` (default soft
moments), ``LogisticRegression()`` and ``LinearSVC(multi_class='crammer_singer')``, all fitted in
the same run.  Also measured: the time of one objective + gradient evaluation of the surrogate
against the two matrix products it needs (``X @ W`` and ``X.T @ G``).  ``--quick`` uses a
stratified subsample of 2,000 rows of each problem (for tests; the numbers are not comparable).
The sizes are :data:`FULL` and :data:`QUICK` (:class:`Settings`).
"""

import warnings
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from .. import datasets
from ..features import Multiclass
from ..game import Game
from ..losses import zero_one
from ..models import AdversarialClassifier
from ..solvers import SurrogateObjective
from ..uncertainty import SoftMoments
from ._protocol import Progress, median_seconds
from .oracle import machine_info, report_header, write_results

__all__ = ["run", "Settings", "FULL", "QUICK", "PROBLEMS"]

SEED = 0
EVAL_REPEATS = 20
#: Fits per model (the median time is reported): full run, ``--quick``.
FIT_REPEATS, QUICK_FIT_REPEATS = 3, 1
#: Rows of each problem in quick mode (a stratified subsample; used by the tests).
QUICK_ROWS = 2_000
#: The problems, in the order of the table: two vendored data sets and the synthetic one.
PROBLEMS = ("optdigits", "satimage", "synthetic")


@dataclass(frozen=True)
class Settings:
    """The problems run (names of :data:`PROBLEMS`), the rows of the synthetic problem, the
    stratified subsample of every problem (None: all rows) and the fits per model."""

    problems: tuple
    synthetic_rows: int
    max_rows: int | None
    fit_repeats: int


FULL = Settings(problems=PROBLEMS, synthetic_rows=100_000, max_rows=None, fit_repeats=FIT_REPEATS)
#: ``--quick`` (for tests; seconds): every problem subsampled to 2,000 rows, one fit per model.
QUICK = Settings(
    problems=PROBLEMS,
    synthetic_rows=QUICK_ROWS,
    max_rows=QUICK_ROWS,
    fit_repeats=QUICK_FIT_REPEATS,
)


def _vendored(name):
    data = datasets.load(f"multiclass/{name}")
    return data.X, data.y


def _synthetic(n, d=50, k=10):
    rng = np.random.default_rng(SEED)
    X = rng.normal(size=(n, d))
    W = rng.normal(size=(d, k))
    return X, np.argmax(X @ W + 2.0 * rng.gumbel(size=(n, k)), axis=1)


def _split(X, y, max_rows=None):
    if max_rows is not None and len(y) > max_rows:  # quick mode: a stratified subsample
        X, _, y, _ = train_test_split(X, y, train_size=max_rows, random_state=SEED, stratify=y)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, random_state=SEED, stratify=y
    )
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train, y_test


def _models():
    return {
        "AdversarialClassifier": AdversarialClassifier(
            loss="zero_one", solver="lbfgs", random_state=SEED
        ),
        "LogisticRegression": LogisticRegression(max_iter=2000),
        "LinearSVC (CS)": LinearSVC(multi_class="crammer_singer", max_iter=5000),
    }


def evaluation_ratio(X, y):
    """Seconds of one objective+gradient call over seconds of ``X @ W`` plus ``X.T @ G``."""
    classes, index = np.unique(y, return_inverse=True)
    k = classes.size
    fmap = Multiclass().fit(X, k)
    operator = fmap.bind(X)
    weights = np.full(y.size, 1.0 / y.size)
    objective = SurrogateObjective(
        Game(zero_one(k)), operator, index, weights, SoftMoments(1.0 / y.size), fmap
    )
    theta = np.random.default_rng(SEED).normal(size=fmap.n_params) * 0.1
    G = np.random.default_rng(SEED).normal(size=(y.size, k))
    objective(theta)
    evaluation = median_seconds(lambda: objective(theta), EVAL_REPEATS)
    products = median_seconds(lambda: (operator.forward(theta), operator.adjoint(G)), EVAL_REPEATS)
    return evaluation, products


def bench_problem(name, X, y, max_rows=None, repeats=FIT_REPEATS):
    """Fit and score every model on one problem; one record with the median fit time over
    ``repeats`` fits, accuracies and ratios."""
    X_train, X_test, y_train, y_test = _split(X, y, max_rows)
    record = {"problem": name, "n_train": len(y_train), "d": X.shape[1], "k": np.unique(y).size}
    record["repeats"] = repeats
    for label, model in _models().items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence chatter; reported via the notes
            seconds = median_seconds(lambda m=model: m.fit(X_train, y_train), repeats)
        record[f"{label} fit s"] = seconds
        record[f"{label} accuracy"] = float(np.mean(model.predict(X_test) == y_test))
        if isinstance(model, AdversarialClassifier):
            record["adversarial status"] = f"{model.converged_}, gap {model.gap_:.1e}"
    evaluation, products = evaluation_ratio(X_train, y_train)
    record["eval ms"], record["two GEMMs ms"] = 1e3 * evaluation, 1e3 * products
    record["eval / GEMMs"] = evaluation / products
    record["fit / LR"] = record["AdversarialClassifier fit s"] / record["LogisticRegression fit s"]
    return record


def format_report(records, meta):
    """The printed table: per problem, each model's fit time and accuracy, then the ratios."""
    lines = [
        report_header("train", meta, ("numpy",)),
        "",
        f"{'problem':<24} {'n':>7} {'model':<22} {'fit s':>8} {'accuracy':>9}",
    ]
    notes = [
        "",
        f"fit s: median of {records[0]['repeats']} fit(s) on a 70/30 stratified split "
        "(standardised); accuracy on the 30%; one objective+gradient: median of "
        f"{EVAL_REPEATS} calls.",
    ]
    for r in records:
        for label in ("AdversarialClassifier", "LogisticRegression", "LinearSVC (CS)"):
            lines.append(
                f"{r['problem']:<24} {r['n_train']:>7} {label:<22} {r[label + ' fit s']:>8.2f} "
                f"{r[label + ' accuracy']:>9.4f}"
            )
        lines.append(
            f"{'':<24} {'':>7} ratios: fit/LR {r['fit / LR']:.1f}x, accuracy - LR "
            f"{r['AdversarialClassifier accuracy'] - r['LogisticRegression accuracy']:+.4f}; "
            f"one objective+gradient {r['eval ms']:.2f} ms = {r['eval / GEMMs']:.2f}x the two "
            f"GEMMs ({r['two GEMMs ms']:.2f} ms); {r['adversarial status']}"
        )
    return "\n".join(lines + notes)


def _problem(name, settings):
    """``(table name, make)`` of one of :data:`PROBLEMS`; ``make()`` returns ``(X, y)``."""
    if name == "synthetic":
        n = settings.synthetic_rows
        return f"synthetic n={n}", lambda: _synthetic(n)
    return name, lambda: _vendored(name)


def run(quick=False, out=None, print_fn=print):
    """Run the benchmark, print the table, optionally write ``out`` (.json or .md).

    ``quick`` uses :data:`QUICK` (seconds) instead of :data:`FULL`.
    """
    settings = QUICK if quick else FULL
    problems = [_problem(name, settings) for name in settings.problems]
    meta = {"date": datetime.now().isoformat(timespec="minutes"), "machine": machine_info()}
    records = []
    progress = Progress("train")
    for i, (name, make) in enumerate(problems, 1):
        progress(f"{i}/{len(problems)} {name}")
        X, y = make()
        records.append(
            bench_problem(name, X, y, max_rows=settings.max_rows, repeats=settings.fit_repeats)
        )
    report = format_report(records, meta)
    print_fn(report)
    if out is not None:
        write_results(out, meta, records, report)
    return records
