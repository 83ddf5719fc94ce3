r"""``advgame bench defaults``: the default ``strength`` of ``AdversarialClassifier`` against
``LogisticRegression()``'s default, and ``AdversarialClassifierCV``'s path against cold fits.

Part 1, the defaults: on every multiclass and ordinal set vendored in
:mod:`advgame.datasets` (vehicle, segment, satimage, optdigits, redwine; abalone and machine
CPU, their targets cut into :data:`ORDINAL_BINS` equal-frequency classes) and scikit-learn's
bundled ones (digits, wine, iris, breast cancer), on :data:`SPLITS` stratified 70/30 splits
(standardised on the training part), ``AdversarialClassifier(loss=L, strength=s)`` for every
candidate default ``s`` of :data:`CANDIDATES` and ``LogisticRegression()`` are fitted, and both
are scored on the test part with the loss ``L`` (zero-one and abstain, ``alpha = 0.5``, on every
set; ordinal on the sets with ordered classes: redwine, abalone, machine CPU): the mean loss of
the predicted actions, ``LogisticRegression`` never abstaining.  A candidate passes for ``L``
when, in points (100 x the mean loss), it is at least as good as logistic regression on the
median set and never more than 1 point worse on any (medians of the splits).  Fit times are
CPU seconds (``time.process_time``, one BLAS thread), medians of the splits.

Part 2, the speed of the default fit and of the cross-validated one: on digits, optdigits,
satimage, segment and ``make_classification`` with 20,000 training rows (as
:mod:`advgame.benchmarks.train`), CPU time and test error of the default
``AdversarialClassifier()`` (``tol=1e-3``) and of the former default ``tol=1e-4`` against
``LogisticRegression()``, and of ``AdversarialClassifierCV()`` (10 strengths x 5 folds, warm
paths) against ``LogisticRegressionCV(Cs=10, cv=5)`` and a ``GridSearchCV`` of cold
``AdversarialClassifier`` fits over the same strengths and folds (``refit=True`` in both), each
the median of :data:`SPLITS` splits.

Part 3, whether any default can pass: on the sets of :data:`ORACLE_SPLITS`, with that many
splits each, the margin ``LR points - AdversarialClassifier(loss=L, strength=s) points`` for
every ``s`` of :data:`ORACLE_STRENGTHS` and for ``1/n``, its mean over the splits and the
standard error of that mean (paired: the same splits for both), and the best ``s`` *in
hindsight*, chosen per set and loss on the test parts themselves.  No rule for the default
(a constant, a function of ``n``, anything that picks one strength per data set) can do better
on a set than its best strength in hindsight, up to the grid's spacing (half a decade), so
when the criterion of part 1 fails with the best-in-hindsight margins it fails for every
default.
"""

import time
import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.linear_model import LogisticRegression, LogisticRegressionCV
from sklearn.model_selection import GridSearchCV, StratifiedKFold, train_test_split
from sklearn.preprocessing import StandardScaler

from .. import datasets
from ..metrics import make_loss_scorer, mean_matrix_loss
from ..models import AdversarialClassifier, AdversarialClassifierCV
from ..models.classifier_cv import strength_grid
from .protocol import Progress
from .report import publish, report_header, run_meta, table
from .train import _classification

__all__ = ["run", "Settings", "FULL", "QUICK", "CANDIDATES"]

#: Splits (seeds 0, 1, ...) of part 1; the medians over them are reported.
SPLITS = 3
#: The classes of the regression targets of the ordinal sets (equal-frequency bins).
ORDINAL_BINS = 5
#: The candidate defaults of ``strength`` (``lam`` of soft moments), as functions of the
#: training rows' total weight ``n``: ``c / n`` is scikit-learn's ``C = 1 / c``, a constant
#: does not change when rows are duplicated.
CANDIDATES = {
    "0.3/n": lambda n: 0.3 / n,
    "1/n": lambda n: 1.0 / n,
    "3/n": lambda n: 3.0 / n,
    "10/n": lambda n: 10.0 / n,
    "0.0001": lambda n: 1e-4,
    "0.0003": lambda n: 3e-4,
    "0.001": lambda n: 1e-3,
}
#: Sets with ordered classes (scored with the ordinal loss too).
ORDINAL = ("redwine", "abalone", "machinecpu")
LOSSES = ("zero_one", "abstain", "ordinal")
#: The sets and their order in the tables.
SETS = (
    "iris",
    "wine",
    "breast_cancer",
    "digits",
    "vehicle",
    "segment",
    "satimage",
    "optdigits",
    "redwine",
    "abalone",
    "machinecpu",
)
SPEED_SETS = ("digits", "optdigits", "satimage", "segment", "classification n=20000")
#: The default ``tol`` before this benchmark chose ``1e-3`` (part 2 measures both).
FORMER_TOL = 1e-4
#: Part 2 times each single fit (the default, the former default, logistic regression) this
#: many times per split, the three interleaved, and takes the median: a fit of 20-30 ms
#: timed once varied by up to 1.3x between runs on the 2-core machine of the reports.
SPEED_REPEATS = 5
#: Strengths and folds of the cross-validated fits (``AdversarialClassifierCV``'s defaults).
CV_STRENGTHS, CV_FOLDS = 10, 5
#: Part 3: the strengths searched for the best in hindsight (1e-6 to 1, half decades), and the
#: sets searched with their splits (the sets where the candidates missed by most; many splits
#: on the small ones, whose test parts have 30-180 rows).
ORACLE_STRENGTHS = tuple(float(s) for s in np.logspace(-6, 0, 13))
ORACLE_SPLITS = {
    "iris": 50,
    "wine": 50,
    "breast_cancer": 50,
    "machinecpu": 50,
    "vehicle": 20,
    "redwine": 10,
    "abalone": 10,
}


@dataclass(frozen=True)
class Settings:
    """The sets of part 1, its splits, the sets of part 2 (speed), and the sets of part 3 (the
    best strength in hindsight) with their splits and strengths."""

    sets: tuple
    splits: int
    speed_sets: tuple
    oracle_splits: dict
    oracle_strengths: tuple = ORACLE_STRENGTHS


FULL = Settings(SETS, SPLITS, SPEED_SETS, ORACLE_SPLITS)
QUICK = Settings(("iris", "wine"), 1, ("iris",), {"iris": 2}, (1e-4, 1e-2, 1.0))


def load_set(name):
    """``(X, y)`` of one set (ordinal targets binned, :data:`ORDINAL_BINS`)."""
    bundled = {
        "iris": load_iris,
        "wine": load_wine,
        "breast_cancer": load_breast_cancer,
        "digits": load_digits,
    }
    if name in bundled:
        return bundled[name](return_X_y=True)
    if name.startswith("classification"):
        return _classification(int(name.split("=")[1]))
    if name in ("abalone", "machinecpu"):
        data = datasets.load(f"ordinal/{name}")
        return data.X, datasets.quantile_bins(data.y, ORDINAL_BINS)[0]
    data = datasets.load(f"multiclass/{name}")
    return data.X, data.y


def split(X, y, seed):
    """A stratified 70/30 split, standardised on the training part."""
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, random_state=seed, stratify=y
    )
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train, y_test


def cpu_fit(model, X, y):
    """CPU seconds of ``model.fit(X, y)`` (warnings silenced: the status is reported)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.process_time()
        model.fit(X, y)
        return time.process_time() - start


def bench_set(name, candidates, splits, progress):
    """Part 1 on one set: per loss and model (logistic regression, each candidate), the median
    over the splits of the test loss (points) and of the CPU fit time, and the worst
    certified gap."""
    X, y = load_set(name)
    losses = [loss for loss in LOSSES if loss != "ordinal" or name in ORDINAL]
    runs = {}  # (loss, model) -> [(points, seconds, gap)], one per split
    for seed in range(splits):
        progress(f"{name} split {seed}")
        X_train, X_test, y_train, y_test = split(X, y, seed)
        logistic = LogisticRegression()
        seconds = cpu_fit(logistic, X_train, y_train)
        predicted = logistic.predict(X_test)
        for loss in losses:
            for label, rule in candidates.items():
                model = AdversarialClassifier(loss=loss, strength=rule(y_train.size))
                fit_seconds = cpu_fit(model, X_train, y_train)
                points = -100.0 * make_loss_scorer()(model, X_test, y_test)
                runs.setdefault((loss, label), []).append((points, fit_seconds, model.gap_))
            L, labels = model.loss_matrix_, model.classes_.tolist()
            points = 100.0 * mean_matrix_loss(y_test, predicted, L, labels=labels)
            runs.setdefault((loss, "LR"), []).append((points, seconds, 0.0))
    records = []
    for (loss, model), values in runs.items():
        points, seconds, gaps = np.array(values).T
        records.append(
            {
                "set": name,
                "n_train": int(round(0.7 * y.size)),
                "k": int(np.unique(y).size),
                "loss": loss,
                "model": model,
                "points": float(np.median(points)),
                "cpu s": float(np.median(seconds)),
                "worst gap": float(gaps.max()),
            }
        )
    return records


def verdicts(records):
    """Per (loss, candidate): the median and the worst over the sets of ``LR points -
    candidate points`` (positive: the candidate is better), and whether the criterion holds
    (median >= 0, worst >= -1)."""
    lr = {(r["set"], r["loss"]): r["points"] for r in records if r["model"] == "LR"}
    out = []
    for loss in LOSSES:
        for label in dict.fromkeys(r["model"] for r in records if r["model"] != "LR"):
            margins = [
                lr[r["set"], loss] - r["points"]
                for r in records
                if r["loss"] == loss and r["model"] == label
            ]
            if margins:
                median, worst = float(np.median(margins)), float(min(margins))
                out.append(
                    {
                        "loss": loss,
                        "model": label,
                        "sets": len(margins),
                        "median margin": median,
                        "worst margin": worst,
                        "passes": median >= 0 and worst >= -1,
                    }
                )
    return out


def bench_speed(name, progress, splits=SPLITS):
    """Part 2 on one set, medians over ``splits`` splits: the CPU seconds (each the median of
    :data:`SPEED_REPEATS` interleaved fits) and test errors of the default fit, of the former
    default ``tol=1e-4`` (:data:`FORMER_TOL`) and of ``LogisticRegression()``; the CPU
    seconds of ``AdversarialClassifierCV()``, of ``LogisticRegressionCV(Cs=10, cv=5)`` and of
    the cold ``GridSearchCV`` over the same strengths and folds, with the default fits and with
    the fits of the former default ``tol``
    (:data:`FORMER_TOL`, the cold grid search as it was before the path), each on the training
    part of every split; the splits on which the path and each grid chose the same strength,
    and how much worse the grid's choice scores on the path's own fits (points of the mean
    fold loss: a near tie when small); the worst certified gaps."""
    X, y = load_set(name)
    single = {
        "default": AdversarialClassifier,
        "former": lambda: AdversarialClassifier(tol=FORMER_TOL),
        "LR": LogisticRegression,
    }
    strengths = strength_grid(CV_STRENGTHS, "soft")
    searches = ("CV", "LRCV", "grid", "former grid")
    seconds = {label: [] for label in (*single, *searches)}
    errors = {label: [] for label in single}
    chosen = {label: [] for label in ("CV", "grid", "former grid")}
    gaps = {"default": [], "CV": []}
    margins = {"grid": [], "former grid": []}  # how much worse the grid's choice scores
    for seed in range(splits):
        progress(f"speed: {name} split {seed}")
        X_train, X_test, y_train, y_test = split(X, y, seed)
        fitted = {}
        repeats = {label: [] for label in single}
        for _ in range(SPEED_REPEATS):  # interleaved, so drift in the machine's speed hits all
            for label, make in single.items():
                model = make()
                repeats[label].append(cpu_fit(model, X_train, y_train))
                fitted[label] = model
        for label, model in fitted.items():
            seconds[label].append(float(np.median(repeats[label])))
            errors[label].append(100 * (1 - model.score(X_test, y_test)))
            if label == "default":
                gaps["default"].append(float(model.gap_) / max(1.0, abs(model.objective_)))
        folds = StratifiedKFold(CV_FOLDS, shuffle=True, random_state=seed)
        grids = {
            label: GridSearchCV(
                single[base](), {"strength": list(strengths)}, cv=folds, scoring=make_loss_scorer()
            )
            for label, base in (("grid", "default"), ("former grid", "former"))
        }
        models = {
            "CV": AdversarialClassifierCV(strengths=strengths, cv=folds),
            "LRCV": LogisticRegressionCV(Cs=CV_STRENGTHS, cv=folds),
            **grids,
        }
        for label, model in models.items():
            seconds[label].append(cpu_fit(model, X_train, y_train))
        path = models["CV"]
        chosen["CV"].append(path.strength_)
        mean_loss = -100.0 * path.scores_.mean(axis=0)  # points, by the path's own fits
        for label, grid in grids.items():
            chosen[label].append(float(grid.best_params_["strength"]))
            picked = mean_loss[np.flatnonzero(strengths == chosen[label][-1])[0]]
            margins[label].append(float(picked - mean_loss.min()))
        gaps["CV"].append(float(path.gaps_.max()))
    record = {"set": name, "n_train": int(y_train.size), "splits": splits}
    for label, values in seconds.items():
        record[label + " s"] = float(np.median(values))
    for label, values in errors.items():
        record[label + " error"] = float(np.median(values))
    for label, values in chosen.items():
        record[label + " strengths"] = values
    for label in ("grid", "former grid"):
        record[f"CV = {label}"] = sum(a == b for a, b in zip(chosen["CV"], chosen[label]))
        record[f"{label} choice margin"] = max(margins[label])
    record["default gap"], record["CV worst gap"] = max(gaps["default"]), max(gaps["CV"])
    return record


def bench_oracle(name, splits, strengths, progress):
    """Part 3 on one set: per loss, the mean over ``splits`` splits of ``LR points - points``
    (the margin; positive: the adversarial classifier is better) of ``strength = 1/n`` and of
    every strength of ``strengths``, with its paired standard error, and the best strength in
    hindsight (the largest mean margin)."""
    X, y = load_set(name)
    losses = [loss for loss in LOSSES if loss != "ordinal" or name in ORDINAL]
    labels = ["1/n", *strengths]
    margins = {(loss, label): [] for loss in losses for label in labels}
    for seed in range(splits):
        progress(f"hindsight: {name} split {seed}")
        X_train, X_test, y_train, y_test = split(X, y, seed)
        predicted = LogisticRegression().fit(X_train, y_train).predict(X_test)
        for loss in losses:
            for label in labels:
                strength = 1.0 / y_train.size if label == "1/n" else label
                model = AdversarialClassifier(loss=loss, strength=strength)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model.fit(X_train, y_train)
                points = -100.0 * make_loss_scorer()(model, X_test, y_test)
                L, classes = model.loss_matrix_, model.classes_.tolist()
                lr = 100.0 * mean_matrix_loss(y_test, predicted, L, labels=classes)
                margins[loss, label].append(lr - points)
    records = []
    for loss in losses:
        mean = {label: float(np.mean(margins[loss, label])) for label in labels}
        se = {
            label: float(np.std(margins[loss, label], ddof=1) / np.sqrt(splits))
            if splits > 1
            else float("nan")
            for label in labels
        }
        best = max(strengths, key=lambda s: mean[s])
        records.append(
            {
                "set": name,
                "loss": loss,
                "splits": splits,
                "default margin": mean["1/n"],
                "default se": se["1/n"],
                "best strength": best,
                "best margin": mean[best],
                "best se": se[best],
                "margins": [mean[s] for s in strengths],
            }
        )
    return records


def oracle_verdicts(records):
    """Part 1's criterion (median >= 0, worst >= -1) on the best-in-hindsight margins, per loss."""
    out = []
    for loss in LOSSES:
        best = [r["best margin"] for r in records if r["loss"] == loss]
        if best:
            median, worst = float(np.median(best)), float(min(best))
            out.append(
                {
                    "loss": loss,
                    "sets": len(best),
                    "median margin": median,
                    "worst margin": worst,
                    "passes": median >= 0 and worst >= -1,
                }
            )
    return out


def format_oracle(records, verdict):
    """Part 3's tables: per set and loss, the margins of ``1/n`` and of the best strength in
    hindsight; the criterion on the best margins."""
    return [
        "Part 3: the best strength in hindsight (chosen per set and loss on the test parts), "
        "margins in points (LR - AdversarialClassifier; mean over the splits +- paired standard "
        "error):",
        "",
        *table(
            records,
            [
                ("set", lambda r: r["set"]),
                ("loss", lambda r: r["loss"]),
                ("splits", lambda r: str(r["splits"])),
                ("1/n", lambda r: f"{r['default margin']:+.2f} +- {r['default se']:.2f}"),
                ("best strength", lambda r: f"{r['best strength']:.0e}"),
                ("best", lambda r: f"{r['best margin']:+.2f} +- {r['best se']:.2f}"),
            ],
            left=2,
            markdown=True,
        ),
        "",
        "The criterion on the best-in-hindsight margins (no default can do better on a set):",
        "",
        *_criterion_table(verdict, [("loss", lambda r: r["loss"])]),
    ]


def _criterion_table(verdict, leading):
    """The markdown table of verdicts (:func:`verdicts`, :func:`oracle_verdicts`): the
    ``leading`` columns, then the sets, the median and worst margins and whether they pass."""
    columns = [
        *leading,
        ("sets", lambda r: str(r["sets"])),
        ("median margin", lambda r: f"{r['median margin']:+.2f}"),
        ("worst margin", lambda r: f"{r['worst margin']:+.2f}"),
        ("passes", lambda r: "yes" if r["passes"] else "no"),
    ]
    return table(verdict, columns, left=len(leading), markdown=True)


def format_report(records, verdict, speed, meta):
    """The tables: per set and loss, points and CPU time of each model; the criterion per
    candidate; the speed ratios."""
    labels = list(dict.fromkeys(r["model"] for r in records))
    cells = {(r["set"], r["loss"], r["model"]): r for r in records}
    rows = []
    for key in dict.fromkeys((r["set"], r["loss"]) for r in records):
        row = {"set": key[0], "loss": key[1], "n": cells[key + ("LR",)]["n_train"]}
        for label in labels:
            r = cells[key + (label,)]
            row[label] = f"{r['points']:.1f} / {r['cpu s']:.2f}"
        rows.append(row)
    columns = [
        ("set", lambda r: r["set"]),
        ("loss", lambda r: r["loss"]),
        ("n", lambda r: str(r["n"])),
    ]
    columns += [(label, lambda r, label=label: r[label]) for label in labels]
    lines = [
        report_header("defaults", meta, ("numpy",)),
        "",
        f"Part 1: test loss in points (100 x mean loss, lower is better) / CPU fit seconds, "
        f"medians of {meta['splits']} split(s); columns: LogisticRegression() and "
        "AdversarialClassifier(strength=candidate), n = training rows.",
        "",
        *table(rows, columns, left=2, markdown=True),
        "",
        "The criterion (margin = LR points - candidate points; passes: median >= 0 and worst >= -1):",
        "",
        *_criterion_table(
            verdict, [("loss", lambda r: r["loss"]), ("candidate", lambda r: r["model"])]
        ),
    ]
    if speed:
        lines += [
            "",
            f"Part 2: the default fit (tol=1e-3), the former default (tol={FORMER_TOL:g}) and "
            "LogisticRegression(): CPU seconds (each the median of "
            f"{SPEED_REPEATS} interleaved fits) and test error in %, medians of "
            f"{speed[0]['splits']} splits:",
            "",
            *table(
                speed,
                [
                    ("set", lambda r: r["set"]),
                    ("n", lambda r: str(r["n_train"])),
                    _seconds("default", 3),
                    _seconds("former", 3),
                    _seconds("LR", 3),
                    _ratio("default", "LR"),
                    _ratio("former", "LR"),
                    (
                        "error default / former / LR",
                        lambda r: (
                            f"{r['default error']:.2f} / {r['former error']:.2f} / "
                            f"{r['LR error']:.2f}"
                        ),
                    ),
                ],
                markdown=True,
            ),
            "",
            "The cross-validated fits on the training part of each split (folds seeded by "
            "the split): CPU seconds (medians), ratios to LogisticRegressionCV and to the "
            "cold grid search (default fits; former grid: the fits of "
            f"tol={FORMER_TOL:g}, the default before the path), the splits on which the "
            "path chose the grid's strength, and the largest margin (in points of the mean "
            "fold loss, by the path's own fits) by which a grid's choice trails the path's:",
            "",
            *table(
                speed,
                [
                    ("set", lambda r: r["set"]),
                    _seconds("CV", 2),
                    _seconds("LRCV", 2),
                    _ratio("CV", "LRCV"),
                    _seconds("grid", 2),
                    _ratio("CV", "grid"),
                    _seconds("former grid", 2),
                    _ratio("CV", "former grid"),
                    (
                        "same strength: grid / former",
                        lambda r: f"{r['CV = grid']} / {r['CV = former grid']} of {r['splits']}",
                    ),
                    (
                        "their worst margin",
                        lambda r: (
                            f"{r['grid choice margin']:.2f} / {r['former grid choice margin']:.2f}"
                        ),
                    ),
                    ("gaps", lambda r: f"{max(r['default gap'], r['CV worst gap']):.1e}"),
                ],
                markdown=True,
            ),
        ]
    if meta.get("oracle"):
        lines += ["", *format_oracle(meta["oracle"], meta["oracle verdicts"])]
    return "\n".join(lines)


def _seconds(label, digits):
    """Part 2's column of a speed record's ``'<label> s'`` CPU seconds."""
    return f"{label} s", lambda r: f"{r[label + ' s']:.{digits}f}"


def _ratio(label, base):
    """Part 2's column of the ratio of ``label``'s CPU seconds to ``base``'s."""
    return f"{label} / {base}", lambda r: f"{r[label + ' s'] / r[base + ' s']:.2f}x"


def run(quick=False, out=None, print_fn=print, progress=True):
    """Run the benchmark (the protocol of :mod:`advgame.benchmarks`); returns the part 1
    records (the verdicts and the speed records are in the metadata)."""
    settings = QUICK if quick else FULL
    meta = run_meta(splits=settings.splits)
    progress = Progress("defaults", progress)
    for loss in LOSSES:  # compile every loss's kernels before any fit is timed
        cpu_fit(AdversarialClassifier(loss=loss), *load_iris(return_X_y=True))
    records = []
    for name in progress.bar(settings.sets, "set"):
        records += bench_set(name, CANDIDATES, settings.splits, progress)
    verdict = verdicts(records)
    speed = [bench_speed(name, progress, settings.splits) for name in settings.speed_sets]
    oracle = []
    for name, splits in settings.oracle_splits.items():
        oracle += bench_oracle(name, splits, settings.oracle_strengths, progress)
    meta["verdicts"], meta["speed"] = verdict, speed
    meta["oracle"], meta["oracle verdicts"] = oracle, oracle_verdicts(oracle)
    report = format_report(records, verdict, speed, meta)
    publish(report, meta, records, out, print_fn)
    return records
