"""Fathony et al. (2018b), "Distributionally Robust Graphical Models": the protocol of Table 1 on
synthetic ordinal sequences (``advgame reproduce fathony2018b``, alias ``seed002``; ``advgame
bench graphical``).

Fathony et al. (2018b, §4.1) predict ordinal emotion intensity (neutral < increasing < apex) along
167 facial image sequences, 20 random splits of 120 training and 47 test sequences, and compares the
adversarial graphical model (AGM) with a CRF and a structured SVM (SSVM) under six metrics: the
zero-one, absolute and squared node losses, unweighted and weighted by the position in the
sequence.  That data set is not redistributable, so this benchmark runs the same protocol on
:func:`advgame.datasets.make_ordinal_sequences` (167 sequences of 8-16 frames, 6 features,
3 ordered labels, 10% label noise, the generator's defaults).

Models (all linear chain models with node features ``[x_i; 1]`` per label and a learnt
transition table): the AGM (:class:`advgame.AdversarialGraphicalModel` trained with each
metric's loss and weights and decoded by Viterbi on the potentials, as in the paper) twice,
solved exactly by the compiled program (``AGM exact``) and by the paper's stochastic subgradient
method, :data:`EPOCHS` epochs of averaged AdaGrad (``AGM SGD``), since the piecewise-linear
objective has wide near-optimal faces and the two land on different parameters; the
CRF (``loss='log'``, one per split, decoded per metric by the Bayes decision on its marginals)
and the SSVM (:class:`advgame.StructuredSVM`, loss-augmented Viterbi, averaged AdaGrad).  The
regularisation strength of each (model, metric) is chosen on the first split by training on a
random 70% of its training sequences and validating on the rest, over :data:`GRID` times
``1 / n``, then used for all splits (the paper's protocol).  The table gives the mean test loss
per node (weighted metrics: ``sum w_i loss_i / sum w_i``) and its standard deviation over the
splits; ``*`` marks the best model and those not significantly worse (Wilcoxon signed-rank,
p < 0.05), as the paper's bold face.
"""

import warnings
from dataclasses import dataclass

import numpy as np

from ..benchmarks.protocol import Progress, wilcoxon_marks
from ..benchmarks.report import publish, report_header, run_meta
from ..datasets import make_ordinal_sequences
from ..models.graphical import AdversarialGraphicalModel, StructuredSVM

__all__ = ["run", "Settings", "FULL", "QUICK", "METRICS", "PAPER_TABLE"]

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
MODELS = ("AGM exact", "AGM SGD", "CRF", "SSVM")
#: Strength multipliers of ``1 / n_train`` tried on the first split.
GRID = (0.01, 0.1, 1.0, 10.0, 100.0)
N_SEQUENCES, N_TRAIN, SPLITS = 167, 120, 20
#: Epochs of the stochastic subgradient solvers (AGM SGD, SSVM).
EPOCHS = 30


@dataclass(frozen=True)
class Settings:
    """Sequences generated, training sequences per split, splits, the strength multipliers tried
    and the metrics run (names of :data:`METRICS`, the rows of the table)."""

    n_sequences: int
    n_train: int
    splits: int
    grid: tuple
    metrics: tuple


FULL = Settings(
    n_sequences=N_SEQUENCES,
    n_train=N_TRAIN,
    splits=SPLITS,
    grid=GRID,
    metrics=tuple(name for name, _, _ in METRICS),
)
#: ``--quick`` (for tests; seconds): 30 sequences, 2 splits, one strength.
QUICK = Settings(n_sequences=30, n_train=20, splits=2, grid=GRID[2:3], metrics=FULL.metrics)


def _make(model, loss, weights, strength):
    if model.startswith("AGM"):
        sgd = model == "AGM SGD"
        return AdversarialGraphicalModel(
            loss=loss,
            node_weights=weights,
            strength=strength,
            solver="subgradient" if sgd else "compile",
            certify=False,  # the paper's method as it stands: no cutting-plane finish
            max_iter=EPOCHS,
            random_state=0,
        )
    if model == "CRF":
        return AdversarialGraphicalModel(
            loss="log", node_weights=weights, decision_loss=loss, strength=strength
        )
    return StructuredSVM(
        loss=loss, node_weights=weights, strength=strength, max_iter=EPOCHS, random_state=0
    )


def _subset(items, rows):
    return [items[i] for i in rows]


def _loss(model, X, y):
    return -model.score(X, y)


def _choose_strength(model, loss, weights, X, y, rng, grid):
    """Strength chosen on a 70/30 split of the first split's training sequences."""
    order = rng.permutation(len(X))
    cut = int(0.7 * len(X))
    fit, val = order[:cut], order[cut:]
    scores = []
    for factor in grid:
        estimator = _make(model, loss, weights, factor / cut)
        estimator.fit(_subset(X, fit), _subset(y, fit))
        scores.append(_loss(estimator, _subset(X, val), _subset(y, val)))
    return grid[int(np.argmin(scores))] / len(X)


def run(quick=False, out=None, print_fn=print, progress=True):
    """Run the protocol, print the table, optionally write ``out`` (.json or .md).

    ``quick`` uses :data:`QUICK` (seconds) instead of :data:`FULL`.
    """
    settings = QUICK if quick else FULL
    n_sequences, n_train, splits = settings.n_sequences, settings.n_train, settings.splits
    grid = settings.grid
    metrics = [metric for metric in METRICS if metric[0] in settings.metrics]
    X, y = make_ordinal_sequences(n_sequences=n_sequences, random_state=0)
    rng = np.random.default_rng(0)
    partitions = [rng.permutation(n_sequences) for _ in range(splits)]
    meta = run_meta()
    records = []
    progress = Progress("graphical", progress)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # L-BFGS chatter at the grid's weak regularisation
        for name, loss, weights in progress.bar(metrics, "metric"):
            first = partitions[0][:n_train]
            X0, y0 = _subset(X, first), _subset(y, first)
            table = {}
            for model in MODELS:
                progress(f"{name}: {model}, tuning and {splits} splits")
                strength = _choose_strength(model, loss, weights, X0, y0, rng, grid)
                losses = []
                for order in partitions:
                    train, test = order[:n_train], order[n_train:]
                    estimator = _make(model, loss, weights, strength)
                    estimator.fit(_subset(X, train), _subset(y, train))
                    losses.append(_loss(estimator, _subset(X, test), _subset(y, test)))
                table[model] = losses
            marks = wilcoxon_marks(table) if splits > 5 else dict.fromkeys(MODELS, "")
            records.append(
                {
                    "metric": name,
                    **{
                        m: (float(np.mean(v)), float(np.std(v, ddof=1)), marks[m])
                        for m, v in table.items()
                    },
                }
            )
    report = format_report(records, meta, splits, n_sequences, n_train)
    publish(report, meta, records, out, print_fn)
    return records


def format_report(records, meta, splits, n_sequences, n_train):
    lines = [
        report_header("graphical", meta),
        f"make_ordinal_sequences({n_sequences}), {splits} splits of {n_train} train / "
        f"{n_sequences - n_train} test sequences; mean test loss per node +- std over splits",
        "(* best or not significantly worse, Wilcoxon p >= 0.05); paper = Fathony et al. (2018b) "
        "Table 1 "
        "(facial emotion data: AGM / CRF / SSVM)",
        "",
        f"{'metric':<22}" + "".join(f"{m:>17}" for m in MODELS) + f"{'paper':>20}",
    ]
    for r in records:
        cells = "".join(f"{r[m][0]:>9.3f} +- {r[m][1]:.3f}{r[m][2]:<1}" for m in MODELS)
        paper = " / ".join(f"{v:.2f}" for v in PAPER_TABLE[r["metric"]])  # AGM, CRF, SSVM
        lines.append(f"{r['metric']:<22}{cells}{paper:>20}")
    averages = [np.mean([r[m][0] for r in records]) for m in MODELS]
    stars = [sum(r[m][2] == "*" for r in records) for m in MODELS]
    lines.append(
        f"{'average':<22}"
        + "".join(f"{a:>17.3f}" for a in averages)
        + f"{'0.33 / 0.35 / 0.35':>20}"
    )
    lines.append(f"{'# best (*)':<22}" + "".join(f"{s:>17d}" for s in stars) + f"{'4 / 2 / 2':>20}")
    return "\n".join(lines)
