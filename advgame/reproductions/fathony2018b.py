"""Fathony et al. (2018b), "Distributionally Robust Graphical Models" (NeurIPS 2018): the protocol
of its Table 1 on synthetic ordinal sequences, from a correctly specified and a misspecified
generator, and of its Table 2 (a cost-sensitive loss from a random order of the labels) on
Taskar's OCR handwritten words (``advgame reproduce fathony2018b``; ``advgame bench graphical``).

Fathony et al. (2018b, §4.1) predict ordinal emotion intensity (neutral < increasing < apex) along
167 facial image sequences, 20 random splits of 120 training and 47 test sequences, and compares the
adversarial graphical model (AGM) with a CRF and a structured SVM (SSVM) under six metrics: the
zero-one, absolute and squared node losses, unweighted and weighted by the position in the
sequence.  That data set is not redistributable, so the parts ``log-linear`` and ``misspecified``
run the same protocol on :func:`advgame.datasets.make_ordinal_sequences` (167 sequences of 8-16
frames, 6 features, 3 ordered labels, 10% label noise):

* ``log-linear``: the generator's defaults, symmetric label noise and one feature covariance
  shared by the classes, so that a linear-chain CRF is the correctly specified model of the
  (noisy) labels;
* ``misspecified``: :data:`MISSPECIFIED`, the noise moving labels one step down (towards
  neutral) and each class's feature spread twice the previous one's, so that no linear chain
  model is correct (the setting in which matching the loss, as AGM and SSVM do, can beat
  fitting a likelihood).

Models (all linear chain models with node features ``[x_i; 1]`` per label and a learnt
transition table): the AGM (:class:`advgame.AdversarialGraphicalModel` trained with each
metric's loss and weights and decoded by Viterbi on the potentials, as in the paper) twice,
solved exactly by the compiled program (``AGM exact``) and by the paper's stochastic subgradient
method, :data:`EPOCHS` epochs of averaged AdaGrad (``AGM SGD``), since the piecewise-linear
objective has wide near-optimal faces and the two land on different parameters; the
CRF (``loss='log'``, decoded per metric by the Bayes decision on its marginals)
and the SSVM (:class:`advgame.StructuredSVM`, loss-augmented Viterbi, averaged AdaGrad).  The
regularisation strength of each (model, metric) is chosen on the first split by training on a
random 70% of its training sequences and validating on the rest, over :data:`GRID` times
``1 / n``, then used for all splits (the paper's protocol).  The table gives the mean test loss
per node (weighted metrics: ``sum w_i loss_i / sum w_i``) and its standard deviation over the
splits; ``*`` marks the best model and those not significantly worse (Wilcoxon signed-rank,
p < 0.05), as the paper's bold face.

Parts ``ocr-hamming`` and ``ocr-cost-sensitive``: the paper's Table 2 (semantic role labelling on CoNLL 2005, not redistributable)
scores a cost-sensitive loss built "by picking a random order of the class label and assigning
an ordinal loss based on the order of the labels", ``L[a, b] = |r(a) - r(b)|`` for the rank
``r`` of a label in a random order (:func:`cost_sensitive_matrix`, order drawn with seed 0).  We
run it, and the Hamming loss, on :func:`advgame.datasets.load_ocr_letters` (6,877 words, 26
letters, 128 binary pixels) with Taskar et al.'s (2003) protocol: train on one fold, test on the
other nine, for each of the 10 folds; the strength is chosen on the first training fold as
above (over :data:`OCR_GRID`).  AGM runs only by the paper's stochastic method
(:data:`OCR_EPOCHS` epochs): the exact compiled program of one fold (704 words, about 3.2
million adversary marginal entries) is out of reach.
"""

import warnings
from dataclasses import dataclass

import numpy as np

from ..benchmarks.protocol import Progress, wilcoxon_marks
from ..benchmarks.report import publish, report_header, run_meta
from ..datasets import load_ocr_letters, make_ordinal_sequences
from ..losses import LossMatrix
from ..models.graphical import AdversarialGraphicalModel, StructuredSVM

__all__ = [
    "run",
    "Settings",
    "FULL",
    "QUICK",
    "REDUCED",
    "METRICS",
    "OCR_METRICS",
    "PARTS",
    "PAPER_TABLE",
    "cost_sensitive_matrix",
]

#: (name, loss, node weights) of the six metrics of Fathony et al. (2018b), Table 1.
METRICS = (
    ("zero-one, unweighted", "zero_one", None),
    ("absolute, unweighted", "ordinal", None),
    ("squared, unweighted", "squared", None),
    ("zero-one, weighted", "zero_one", "position"),
    ("absolute, weighted", "ordinal", "position"),
    ("squared, weighted", "squared", "position"),
)
#: Fathony et al. (2018b), Table 1 (facial emotion data): AGM, CRF, SSVM.
PAPER_TABLE = {
    "zero-one, unweighted": (0.34, 0.32, 0.37),
    "absolute, unweighted": (0.33, 0.34, 0.40),
    "squared, unweighted": (0.38, 0.38, 0.40),
    "zero-one, weighted": (0.28, 0.32, 0.29),
    "absolute, weighted": (0.29, 0.36, 0.29),
    "squared, weighted": (0.36, 0.40, 0.33),
}
#: Fathony et al. (2018b), Table 2 (semantic role labelling, 9 labels): AGM, CRF, SSVM.
PAPER_TABLE2 = {"cost-sensitive": (0.14, 0.19, 0.14)}
#: The OCR metrics: Hamming (node zero-one) and the cost-sensitive loss of a random label order.
OCR_METRICS = ("Hamming", "cost-sensitive")
MODELS = ("AGM exact", "AGM SGD", "CRF", "SSVM")
OCR_MODELS = ("AGM SGD", "CRF", "SSVM")
#: The parts of the run: the synthetic Table 1 from two generators, then the OCR words under
#: each of :data:`OCR_METRICS` (each part under an hour on an idle core).
OCR_PARTS = {"ocr-hamming": "Hamming", "ocr-cost-sensitive": "cost-sensitive"}
PARTS = ("log-linear", "misspecified", *OCR_PARTS)
#: ``make_ordinal_sequences`` options of each synthetic part.
MISSPECIFIED = {"noise_kind": "downward", "scale_growth": 2.0}
GENERATORS = {"log-linear": {}, "misspecified": MISSPECIFIED}
#: Strength multipliers of ``1 / n_train`` tried on the first split.
GRID = (0.01, 0.1, 1.0, 10.0, 100.0)
OCR_GRID = (0.1, 1.0, 10.0)
N_SEQUENCES, N_TRAIN, SPLITS = 167, 120, 20
#: Epochs of the stochastic subgradient solvers (AGM SGD, SSVM) on the synthetic parts and OCR.
EPOCHS = 30
OCR_EPOCHS = 15
#: Taskar et al.'s (2003) OCR data come in 10 folds.
OCR_FOLDS = 10


@dataclass(frozen=True)
class Settings:
    """Synthetic parts: sequences generated, training sequences per split, splits, the strength
    multipliers tried and the metrics run (names of :data:`METRICS`, the rows of the table).
    OCR: the training folds run (each tested on the other nine), the strength multipliers, the
    epochs and, for quick runs, a cap on the words per fold (None: all).  ``parts``: of
    :data:`PARTS`."""

    n_sequences: int
    n_train: int
    splits: int
    grid: tuple
    metrics: tuple
    parts: tuple = PARTS
    ocr_folds: int = OCR_FOLDS
    ocr_grid: tuple = OCR_GRID
    ocr_epochs: int = OCR_EPOCHS
    ocr_words: int | None = None


FULL = Settings(
    n_sequences=N_SEQUENCES,
    n_train=N_TRAIN,
    splits=SPLITS,
    grid=GRID,
    metrics=tuple(name for name, _, _ in METRICS),
)
#: The reduced run committed in docs/results/graphical.md (on a shared machine): 6 splits of
#: the synthetic parts (the fewest for which the Wilcoxon marks can be significant), 2 OCR
#: training folds with the strength fixed at ``1 / n`` (no tuning).
REDUCED = Settings(
    n_sequences=N_SEQUENCES,
    n_train=N_TRAIN,
    splits=6,
    grid=GRID,
    metrics=FULL.metrics,
    ocr_folds=2,
    ocr_grid=(1.0,),
)
#: ``--quick`` (for tests; seconds): 30 sequences, 2 splits, one strength; OCR on 2 folds of 40
#: words, 2 epochs.
QUICK = Settings(
    n_sequences=30,
    n_train=20,
    splits=2,
    grid=GRID[2:3],
    metrics=FULL.metrics,
    ocr_folds=2,
    ocr_grid=OCR_GRID[1:2],
    ocr_epochs=2,
    ocr_words=40,
)


def cost_sensitive_matrix(order):
    """The cost-sensitive loss of Fathony et al. (2018b, §4.2, Table 2) from a label order.

    ``order`` lists the labels ``0..k-1`` in a (random) order; a label's rank ``r`` is its
    position there, and the loss is ordinal in the ranks: ``L[a, b] = |r(a) - r(b)|``.
    """
    order = np.asarray(order)
    k = order.size
    if order.ndim != 1 or not np.array_equal(np.sort(order), np.arange(k)):
        raise ValueError(f"order must be a permutation of 0..k-1; got {order!r}.")
    rank = np.argsort(order)
    return LossMatrix(np.abs(rank[:, None] - rank[None, :]).astype(np.float64))


def _make(model, loss, weights, strength, epochs=EPOCHS):
    if model.startswith("AGM"):
        sgd = model == "AGM SGD"
        return AdversarialGraphicalModel(
            loss=loss,
            node_weights=weights,
            strength=strength,
            solver="subgradient" if sgd else "compile",
            certify=False,  # the paper's method as it stands: no cutting-plane finish
            max_iter=epochs,
            random_state=0,
        )
    if model == "CRF":
        return AdversarialGraphicalModel(
            loss="log", node_weights=weights, decision_loss=loss, strength=strength
        )
    return StructuredSVM(
        loss=loss, node_weights=weights, strength=strength, max_iter=epochs, random_state=0
    )


def _maker(model, loss, weights, epochs=EPOCHS, order=None):
    """``make(strength, y_fit)``: the estimator of ``model``; with a label ``order`` (OCR),
    ``loss`` names an OCR metric, resolved on the letters of ``y_fit`` (:func:`_ocr_loss`)."""

    def make(strength, y_fit):
        resolved = loss if order is None else _ocr_loss(loss, order, y_fit)
        return _make(model, resolved, weights, strength, epochs)

    return make


def _subset(items, rows):
    return [items[i] for i in rows]


def _loss(model, X, y):
    return -model.score(X, y)


def _choose_strength(make, X, y, rng, grid):
    """Strength chosen on a 70/30 split of the first split's training sequences; ``make(strength,
    y_fit)`` builds the estimator (validation sequences with labels unseen in the fit part are
    left out: they cannot be scored).  A grid of one value is used as it is, without fits."""
    if len(grid) == 1:
        return grid[0] / len(X)
    order = rng.permutation(len(X))
    cut = int(0.7 * len(X))
    fit, val = _subset(X, order[:cut]), _subset(y, order[:cut])
    X_val, y_val = _known(_subset(X, order[cut:]), _subset(y, order[cut:]), val)
    scores = []
    for factor in grid:
        estimator = make(factor / cut, val).fit(fit, val)
        scores.append(_loss(estimator, X_val, y_val))
    return grid[int(np.argmin(scores))] / len(X)


def _known(X, y, y_train):
    """The sequences of ``(X, y)`` whose labels all occur in ``y_train``."""
    seen = np.unique(np.concatenate(y_train))
    keep = [s for s, labels in enumerate(y) if np.isin(labels, seen).all()]
    return _subset(X, keep), _subset(y, keep)


def _row(part, metric, table, splits):
    marks = wilcoxon_marks(table) if splits > 5 else dict.fromkeys(table, "")
    return {
        "part": part,
        "metric": metric,
        **{m: (float(np.mean(v)), float(np.std(v, ddof=1)), marks[m]) for m, v in table.items()},
    }


def _run_synthetic(part, settings, progress):
    """One synthetic part: the six metrics of Table 1 on :data:`GENERATORS` ``[part]``."""
    n_sequences, n_train, splits = settings.n_sequences, settings.n_train, settings.splits
    metrics = [metric for metric in METRICS if metric[0] in settings.metrics]
    X, y = make_ordinal_sequences(n_sequences=n_sequences, random_state=0, **GENERATORS[part])
    rng = np.random.default_rng(0)
    partitions = [rng.permutation(n_sequences) for _ in range(splits)]
    records = []
    for name, loss, weights in progress.bar(metrics, "metric"):
        first = partitions[0][:n_train]
        X0, y0 = _subset(X, first), _subset(y, first)
        table = {}
        for model in MODELS:
            progress(f"{part}, {name}: {model}, tuning and {splits} splits")
            make = _maker(model, loss, weights)
            strength = _choose_strength(make, X0, y0, rng, settings.grid)
            losses = []
            for order in partitions:
                train, test = order[:n_train], order[n_train:]
                estimator = make(strength, None)
                estimator.fit(_subset(X, train), _subset(y, train))
                losses.append(_loss(estimator, _subset(X, test), _subset(y, test)))
            table[model] = losses
        records.append(_row(part, name, table, splits))
    return records


def _ocr_loss(metric, order, y_train):
    """The loss of an OCR metric on the letters of ``y_train`` (all 26 in a whole fold; a quick
    run's few words may miss some: the cost matrix is then restricted to those seen)."""
    if metric == "Hamming":
        return "zero_one"
    seen = np.unique(np.concatenate(y_train))
    return LossMatrix(cost_sensitive_matrix(order).matrix[np.ix_(seen, seen)])


def _run_ocr(part, settings, progress):
    """An OCR part (:data:`OCR_PARTS`): train on one fold, test on the other nine (Taskar et al.
    2003), under the part's metric."""
    X, y, folds = load_ocr_letters()
    order = np.random.default_rng(0).permutation(26)  # the cost-sensitive loss's label order
    words = [np.flatnonzero(folds == f)[: settings.ocr_words] for f in range(OCR_FOLDS)]
    rng = np.random.default_rng(0)
    metric = OCR_PARTS[part]
    table, dropped = {}, 0
    for model in progress.bar(OCR_MODELS, "model"):
        progress(f"{part}: {model}, tuning and {settings.ocr_folds} folds")
        make = _maker(model, metric, None, settings.ocr_epochs, order)
        strength = _choose_strength(
            make, _subset(X, words[0]), _subset(y, words[0]), rng, settings.ocr_grid
        )
        losses = []
        for fold in range(settings.ocr_folds):
            test = np.concatenate([w for f, w in enumerate(words) if f != fold])
            X_fit, y_fit = _subset(X, words[fold]), _subset(y, words[fold])
            X_test, y_test = _known(_subset(X, test), _subset(y, test), y_fit)
            dropped += len(test) - len(X_test)
            estimator = make(strength, y_fit).fit(X_fit, y_fit)
            losses.append(_loss(estimator, X_test, y_test))
        table[model] = losses
    return [{**_row(part, metric, table, settings.ocr_folds), "dropped": dropped}]


def run(quick=False, out=None, print_fn=print, progress=True, settings=None, parts=None):
    """Run the protocol, print the tables, optionally write ``out`` (.json or .md).

    ``quick`` uses :data:`QUICK` (seconds) instead of :data:`FULL`; ``settings`` replaces
    both; ``parts`` (names of :data:`PARTS`) runs only those parts (default: the settings').
    """
    settings = settings or (QUICK if quick else FULL)
    parts = settings.parts if parts is None else tuple(parts)
    unknown = [part for part in parts if part not in PARTS]
    if unknown:
        raise ValueError(f"unknown parts {unknown}; the parts are {PARTS}.")
    meta = run_meta()
    records = []
    progress = Progress("graphical", progress)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # L-BFGS chatter at the grid's weak regularisation
        for part in parts:
            if part in OCR_PARTS:
                records += _run_ocr(part, settings, progress)
            else:
                records += _run_synthetic(part, settings, progress)
    report = format_report(records, meta, settings)
    publish(report, meta, records, out, print_fn)
    return records


def _cells(record, models):
    return "".join(f"{record[m][0]:>9.3f} +- {record[m][1]:.3f}{record[m][2]:<1}" for m in models)


def _rows(records, models, paper_table):
    """The header and one line per metric: each model's cell, then the paper's numbers ('-'
    where ``paper_table`` has none)."""
    lines = [f"{'metric':<22}" + "".join(f"{m:>17}" for m in models) + f"{'paper':>20}"]
    for r in records:
        paper = " / ".join(f"{v:.2f}" for v in paper_table.get(r["metric"], ()))
        lines.append(f"{r['metric']:<22}{_cells(r, models)}{paper or '-':>20}")
    return lines


def _synthetic_lines(part, records, settings):
    n_sequences, n_train, splits = settings.n_sequences, settings.n_train, settings.splits
    options = "".join(f", {k}={v!r}" for k, v in GENERATORS[part].items())
    lines = [
        f"{part}: make_ordinal_sequences({n_sequences}{options}), {splits} splits of {n_train} "
        f"train / {n_sequences - n_train} test sequences; mean test loss per node +- std over "
        "splits",
        "(* best or not significantly worse, Wilcoxon p >= 0.05, from 6 splits on); paper = "
        "Fathony et al. (2018b) Table 1 (facial emotion data: AGM / CRF / SSVM)",
        "",
        *_rows(records, MODELS, PAPER_TABLE),  # the paper's AGM, CRF, SSVM
    ]
    averages = [np.mean([r[m][0] for r in records]) for m in MODELS]
    stars = [sum(r[m][2] == "*" for r in records) for m in MODELS]
    lines.append(
        f"{'average':<22}"
        + "".join(f"{a:>17.3f}" for a in averages)
        + f"{'0.33 / 0.35 / 0.35':>20}"
    )
    lines.append(f"{'# best (*)':<22}" + "".join(f"{s:>17d}" for s in stars) + f"{'4 / 2 / 2':>20}")
    return lines


def _ocr_lines(records, settings):
    words = "all" if settings.ocr_words is None else f"the first {settings.ocr_words}"
    lines = [
        f"ocr: load_ocr_letters(), {words} words of each fold; train on fold f, test on the "
        f"other nine, f = 0..{settings.ocr_folds - 1}; mean test loss per letter +- std over "
        "folds",
        "(* as above); cost-sensitive: |r(a) - r(b)| for a random order r of the 26 letters; "
        "paper = Fathony et al. (2018b) Table 2 (semantic role labelling: AGM / CRF / SSVM)",
        "",
        *_rows(records, OCR_MODELS, PAPER_TABLE2),
    ]
    dropped = sum(r["dropped"] for r in records)
    if dropped:
        lines.append(f"(test words left out for letters unseen in training: {dropped})")
    return lines


def _section(part):
    """The table a part's records go to: the OCR parts share one."""
    return "ocr" if part in OCR_PARTS else part


def format_report(records, meta, settings):
    lines = [report_header("graphical", meta)]
    for part in dict.fromkeys(_section(r["part"]) for r in records):
        mine = [r for r in records if _section(r["part"]) == part]
        lines.append("")
        if part == "ocr":
            lines += _ocr_lines(mine, settings)
        else:
            lines += _synthetic_lines(part, mine, settings)
    return "\n".join(lines)
