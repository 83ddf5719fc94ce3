"""``advgame bench train``: fit time and accuracy of AdversarialClassifier next to scikit-learn.

Data: scikit-learn's digits, the vendored optdigits, satimage and segment files, a synthetic
problem (``n = 100,000``, ``d = 50``, ``k = 10``) whose labels are the argmax of a random linear
score plus Gumbel noise, and ``make_classification`` problems (``d = 50``, ``k = 5``) with 2,000,
20,000 and 200,000 training rows; each split 70/30 (stratified, ``random_state=0``; the
``make_classification`` rows are the training rows) and standardised on the training part.
Models: ``AdversarialClassifier(loss='zero_one', strength=1/n, tol=1e-4)`` (``1/n``: the scale
of logistic regression's ``C = 1``, and the default strength until 2026-11-28) with its default
(certified) solver, ``LogisticRegression()`` and ``LinearSVC(multi_class='crammer_singer')`` (up to
:data:`SVC_MAX_ROWS` training rows), all fitted in the same run; the adversarial model's certified gap and solver are reported.  Also measured: the
time of one objective + gradient evaluation of the surrogate against the two matrix products it
needs (``X @ W`` and ``X.T @ G``): on each problem for the zero-one loss, and per loss
(zero-one, ordinal, squared, abstain) on Gaussian data with ``d = 100``, ``k = 10`` and
``n = 1,000`` and ``20,000`` (:data:`EVAL_SIZES`); and the squared closed form in microseconds
per row at ``k = 10`` and ``100``.  Run it with one BLAS thread (``OPENBLAS_NUM_THREADS=1``).
``--quick`` uses a stratified subsample of 2,000 rows of each problem and small evaluation
sizes (for tests; the numbers are not comparable).  The sizes are :data:`FULL` and
:data:`QUICK` (:class:`Settings`).
"""

import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.datasets import load_digits, make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from .. import closed_forms, datasets, losses
from ..features import Multiclass
from ..game import Game
from ..losses import zero_one
from ..models import AdversarialClassifier
from ..solvers import SurrogateObjective
from ..uncertainty import SoftMoments
from .protocol import Progress, median_seconds
from .report import publish, report_header, run_meta

__all__ = ["run", "Settings", "FULL", "QUICK", "PROBLEMS"]

SEED = 0
EVAL_REPEATS = 20
#: Fits per model (the median time is reported): full run, ``--quick``.
FIT_REPEATS, QUICK_FIT_REPEATS = 3, 1
#: Rows of each problem in quick mode (a stratified subsample; used by the tests).
QUICK_ROWS = 2_000
#: The certified relative gap asked of the adversarial model (``tol``).
TOL = 1e-4
#: The problems, in the order of the table: digits, the vendored data sets, the synthetic one
#: and the ``make_classification`` ones (``classification``: one per size of
#: :attr:`Settings.classification_rows`).
PROBLEMS = ("digits", "optdigits", "satimage", "segment", "synthetic", "classification")
#: ``(n, d, k)`` of the per-loss objective+gradient measurement, and the losses measured.
EVAL_SIZES = ((1_000, 100, 10), (20_000, 100, 10))
EVAL_LOSSES = ("zero_one", "ordinal", "squared", "abstain")
#: Labels of the squared closed-form timing (microseconds per row) and its rows.
SQUARED_K, SQUARED_ROWS = (10, 100), 2_000


@dataclass(frozen=True)
class Settings:
    """The problems run (names of :data:`PROBLEMS`), the rows of the synthetic problem, the
    stratified subsample of every problem (None: all rows), the fits per model, the training
    rows of the ``make_classification`` problems and the per-loss evaluation sizes (small by
    default, as in quick mode; :data:`FULL` sets the full ones)."""

    problems: tuple
    synthetic_rows: int
    max_rows: int | None
    fit_repeats: int
    classification_rows: tuple = (2_000,)
    eval_sizes: tuple = ((500, 20, 10),)


FULL = Settings(
    problems=PROBLEMS,
    synthetic_rows=100_000,
    max_rows=None,
    fit_repeats=FIT_REPEATS,
    classification_rows=(2_000, 20_000, 200_000),
    eval_sizes=EVAL_SIZES,
)
#: ``--quick`` (for tests; seconds): every problem subsampled to 2,000 rows, one fit per model.
QUICK = Settings(
    problems=PROBLEMS,
    synthetic_rows=QUICK_ROWS,
    max_rows=QUICK_ROWS,
    fit_repeats=QUICK_FIT_REPEATS,
    classification_rows=(QUICK_ROWS,),
)


def _vendored(name):
    if name == "digits":
        return load_digits(return_X_y=True)
    data = datasets.load(f"multiclass/{name}")
    return data.X, data.y


def _classification(n_train):
    """``make_classification`` with ``n_train`` training rows after the 70/30 split."""
    n = int(round(n_train / 0.7))
    return make_classification(
        n_samples=n, n_features=50, n_informative=20, n_classes=5, random_state=SEED
    )


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


#: Crammer-Singer ``LinearSVC`` is skipped beyond this many training rows (34 s per fit at
#: 70,000 rows; minutes at 200,000).
SVC_MAX_ROWS = 100_000


def _models(n_train):
    models = {
        "AdversarialClassifier": AdversarialClassifier(
            loss="zero_one", strength=1.0 / n_train, tol=TOL, random_state=SEED
        ),
        "LogisticRegression": LogisticRegression(max_iter=2000),
    }
    if n_train <= SVC_MAX_ROWS:
        models["LinearSVC (CS)"] = LinearSVC(multi_class="crammer_singer", max_iter=5000)
    return models


def evaluation_ratio(X, y, loss=None):
    """Seconds of one objective+gradient call over seconds of ``X @ W`` plus ``X.T @ G``
    (zero-one loss unless ``loss``, a LossMatrix, is given).  The two are timed alternately
    and each reported as its median, so that a change of load hits both."""
    classes, index = np.unique(y, return_inverse=True)
    k = classes.size
    fmap = Multiclass().fit(X, k)
    operator = fmap.bind(X)
    weights = np.full(y.size, 1.0 / y.size)
    objective = SurrogateObjective(
        Game(zero_one(k) if loss is None else loss),
        operator,
        index,
        weights,
        SoftMoments(1.0 / y.size),
        fmap,
    )
    theta = np.random.default_rng(SEED).normal(size=fmap.n_params) * 0.1
    G = np.random.default_rng(SEED).normal(size=(y.size, k))
    objective(theta)
    evaluations, products = [], []
    for _ in range(EVAL_REPEATS):
        evaluations.append(median_seconds(lambda: objective(theta), 1))
        products.append(median_seconds(lambda: (operator.forward(theta), operator.adjoint(G)), 1))
    return float(np.median(evaluations)), float(np.median(products))


def _loss(name, k):
    return losses.abstain(k, 0.3) if name == "abstain" else getattr(losses, name)(k)


def loss_evaluation_records(sizes=EVAL_SIZES):
    """One record per ``(n, d, k)`` of ``sizes`` and loss of :data:`EVAL_LOSSES`: one
    objective+gradient over the two GEMMs, on Gaussian data with random labels."""
    records = []
    for n, d, k in sizes:
        rng = np.random.default_rng(SEED)
        X, y = rng.normal(size=(n, d)), rng.integers(0, k, n)
        y[:k] = np.arange(k)  # every label present
        for name in EVAL_LOSSES:
            evaluation, products = evaluation_ratio(X, y, _loss(name, k))
            records.append(
                {
                    "loss": name,
                    "n": n,
                    "d": d,
                    "k": k,
                    "eval ms": 1e3 * evaluation,
                    "two GEMMs ms": 1e3 * products,
                    "eval / GEMMs": evaluation / products,
                }
            )
    return records


def squared_microseconds(k, rows=SQUARED_ROWS):
    """Median microseconds per row of :func:`advgame.closed_forms.squared` with ``k`` labels."""
    F = np.random.default_rng(SEED).normal(size=(rows, k))
    closed_forms.squared(F)
    return 1e6 * median_seconds(lambda: closed_forms.squared(F), 5) / rows


def bench_problem(name, X, y, max_rows=None, repeats=FIT_REPEATS):
    """Fit and score every model on one problem; one record with the median fit time over
    ``repeats`` fits, accuracies and ratios."""
    X_train, X_test, y_train, y_test = _split(X, y, max_rows)
    record = {"problem": name, "n_train": len(y_train), "d": X.shape[1], "k": np.unique(y).size}
    record["repeats"] = repeats
    for label, model in _models(len(y_train)).items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence chatter; reported via the notes
            seconds = median_seconds(lambda m=model: m.fit(X_train, y_train), repeats)
        record[f"{label} fit s"] = seconds
        record[f"{label} accuracy"] = float(np.mean(model.predict(X_test) == y_test))
        if isinstance(model, AdversarialClassifier):
            record["adversarial gap"] = float(model.gap_)
            record["adversarial status"] = (
                f"{model.solver_}: {model.converged_} ({model.stop_reason_}), gap "
                f"{model.gap_:.1e}, {model.n_iter_} steps"
            )
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
            if label + " fit s" not in r:
                lines.append(f"{r['problem']:<24} {r['n_train']:>7} {label:<22} (skipped)")
                continue
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


def format_extras(loss_records, squared):
    """The per-loss objective+gradient table and the squared closed-form timings."""
    lines = ["", f"{'loss':<10} {'n':>7} {'d':>4} {'k':>4} {'eval ms':>9} {'GEMMs ms':>9} ratio"]
    for r in loss_records:
        lines.append(
            f"{r['loss']:<10} {r['n']:>7} {r['d']:>4} {r['k']:>4} {r['eval ms']:>9.2f} "
            f"{r['two GEMMs ms']:>9.2f} {r['eval / GEMMs']:.2f}x"
        )
    lines.append(
        "squared closed form: " + ", ".join(f"k={k}: {us:.1f} us/row" for k, us in squared.items())
    )
    return "\n".join(lines)


def _problems(name, settings):
    """``[(table name, make, max_rows, split)]`` of one of :data:`PROBLEMS`; ``make()`` returns
    ``(X, y)``."""
    if name == "synthetic":
        n = settings.synthetic_rows
        return [(f"synthetic n={n}", lambda: _synthetic(n), settings.max_rows)]
    if name == "classification":
        return [
            (f"classification n={n}", lambda n=n: _classification(n), None)
            for n in settings.classification_rows
        ]
    return [(name, lambda: _vendored(name), settings.max_rows)]


def run(quick=False, out=None, print_fn=print, progress=True):
    """Run the benchmark (the protocol of :mod:`advgame.benchmarks`); returns one record per
    problem."""
    settings = QUICK if quick else FULL
    problems = [entry for name in settings.problems for entry in _problems(name, settings)]
    meta = run_meta()
    records = []
    progress = Progress("train", progress)
    for i, (name, make, max_rows) in enumerate(progress.bar(problems, "problem"), 1):
        progress(f"{i}/{len(problems)} {name}")
        X, y = make()
        records.append(bench_problem(name, X, y, max_rows=max_rows, repeats=settings.fit_repeats))
    progress("objective+gradient per loss")
    loss_records = loss_evaluation_records(settings.eval_sizes)
    squared = {k: squared_microseconds(k) for k in SQUARED_K}
    report = format_report(records, meta) + "\n" + format_extras(loss_records, squared)
    meta["losses"] = loss_records
    meta["squared us/row"] = {str(k): v for k, v in squared.items()}
    publish(report, meta, records, out, print_fn)
    return records
