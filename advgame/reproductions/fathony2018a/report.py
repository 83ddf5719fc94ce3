"""The report of the reproduction: Fathony et al.'s (2018a) tables with the published numbers
beside ours, then the fit times."""

import numpy as np

from ...benchmarks.report import report_header
from .settings import MIN_SPLITS_FOR_TEST
from .tables import COLUMNS, ORDINAL_BINNING, PAPER, PAPER_CLASSES, TITLES

__all__ = [
    "format_report",
    "format_table",
    "format_binning_study",
    "describe",
    "describe_binning",
]


def format_table(title, records, paper, digits, abstained=False, published_columns=()):
    """The lines of one table: a row of ``mean(sd)`` per record, then (``paper`` not None) the
    published row under each (``paper``'s values are those of ``published_columns``, in
    order) and the averages of both."""
    columns = list(records[0]["columns"])
    width = 2 * digits + 14 if abstained else 2 * digits + 9
    lines = [title, f"{'data':<12}" + "".join(f"{c:>{width}}" for c in columns)]
    ours_avg, paper_avg = {c: [] for c in columns}, {c: [] for c in columns}
    stars = dict.fromkeys(columns, 0)
    for r in records:
        cells = []
        for c in columns:
            mean, sd, mark = r["columns"][c]
            ours_avg[c].append(mean)
            stars[c] += mark == "*"
            cell = f"{mean:.{digits}f}({sd:.{digits}f}){mark or ' '}"
            if abstained:
                cell += f"[{r['abstained'][c]:.0f}%]"
            cells.append(f"{cell:>{width}}")
        lines.append(f"{r['dataset']:<12}" + "".join(cells))
        if paper is None:
            continue
        published = dict(zip(published_columns, paper.get(r["dataset"], ())))
        shown = []
        for c in columns:
            if c not in published:
                shown.append(f"{'-':>{width}}")
                continue
            mean, sd, *rest = published[c]
            paper_avg[c].append(mean)
            cell = f"{mean:.{digits}f}({sd:.{digits}f}) " + (f"[{rest[0]}%]" if rest else "")
            shown.append(f"{cell:>{width}}")
        lines.append(f"{'  paper':<12}" + "".join(shown))
    if paper is None:
        return lines + _star_counts(records, stars, width)
    average = "".join(f"{np.mean(v):>{width}.{digits + 1}f}" for v in ours_avg.values())
    lines.append(f"{'average':<12}" + average)
    lines.append(
        f"{'  paper':<12}"
        + "".join(
            f"{np.mean(v):>{width}.{digits + 1}f}" if v else f"{'-':>{width}}"
            for v in paper_avg.values()
        )
    )
    return lines + _star_counts(records, stars, width)


def _star_counts(records, stars, width):
    """The ``# *`` line (marks per model), when there are enough splits for the marks."""
    if records[0]["splits"] < MIN_SPLITS_FOR_TEST:
        return []
    return [f"{'# *':<12}" + "".join(f"{count:>{width}}" for count in stars.values())]


def describe(tuning):
    grid = f"{len(tuning.grid)} values in [{min(tuning.grid):g}, {max(tuning.grid):g}]"
    if tuning.widths != (None,):
        grid += " x widths " + "/".join(f"{w:g}" for w in tuning.widths)
    stage2 = f", then x {'/'.join(f'{f:.3g}' for f in tuning.refine)}" if tuning.refine else ""
    return f"{tuning.folds}-fold CV over lambda {grid}{stage2}"


def describe_binning(names, binning=None):
    """How the ordinal data sets ``names`` are binned: ``binning`` ``(strategy, bins)`` for all,
    or (None) :data:`~.tables.ORDINAL_BINNING`'s choice for each."""
    kinds = {"quantile": "equal-frequency", "uniform": "equal-width"}
    parts = []
    for name in names:
        strategy, bins = binning or ORDINAL_BINNING[name]
        parts.append(f"{name} {bins} {kinds[strategy]} bins")
    return ", ".join(parts)


def format_report(records, meta, settings, tuning=None):
    """Tables 2, 4, 5 and 6 with the published numbers beside ours; ``tuning`` describes the
    tuning (default: that of ``settings.linear`` and ``settings.rbf``)."""
    by_table = {}
    for r in records:
        by_table.setdefault((r["table"], r["kernel"]), []).append(r)
    rows = ", ".join(f"{name} {n}" for name, n in settings.rows.items()) or "none"
    if settings.gaussian == "exact":
        gaussian = (
            "the exact kernel exp(-width/d ||x - x'||^2) (LR, having no kernel form, left out)"
        )
    else:
        gaussian = (
            f"the top {settings.rank} kernel principal components of exp(-width/d ||x - x'||^2)"
        )
    lines = [
        report_header(
            "fathony2018a",
            meta,
            ("numpy", "scipy", "highspy", "cvxpy"),
            command="advgame reproduce",
        ),
        f"{settings.splits} random 70/30 splits (rows subsampled per split: {rows}); features "
        f"standardised; Gaussian: {gaussian}.",
        "Tuned once per data set and model on the first split's training part: "
        + (tuning or f"linear {describe(settings.linear)}; Gaussian {describe(settings.rbf)}")
        + " (SVMs, LR: C = 1/(n lambda)).",
        "mean(sd) over splits; * = best or not significantly worse (Wilcoxon p >= 0.05, >= "
        f"{MIN_SPLITS_FOR_TEST} splits); paper rows: the numbers of Fathony et al. (2018a) "
        "(their 20 splits of the "
        "full data), averages recomputed over the data sets shown",
        "",
    ]
    ordinal = list(dict.fromkeys(r["dataset"] for r in records if r["table"] == "ordinal"))
    if ordinal:
        lines.insert(
            -1,
            "Ordinal classes (bin edges from all rows): "
            + describe_binning(ordinal, settings.binning)
            + ".",
        )
    for key, title in TITLES.items():
        if key in by_table:
            digits = 1 if key[0] == "zero-one" else 3
            lines += format_table(
                title, by_table[key], PAPER[key], digits, key[0] == "abstain", COLUMNS[key]
            )
            lines.append("")
    lines.append(
        "data sets not vendored (Tables 2 and 6): ecoli, pageblocks, libras, vertebral, "
        "breasttissue; (Table 4) diabetes, pyrimidines, triazines, wisconsin, autompg, stocks, "
        "bank, computer, calhousing; (Table 5) the first six of these"
    )
    lines += ["", *_time_lines(records)]
    return "\n".join(lines)


def _time_lines(records):
    """The seconds of every model's fits (tuning and splits, one worker each) per data set and
    kernel, largest first, and their total."""
    spent = {}
    for r in records:  # a data set's tables share its fits
        for column, seconds in r.get("seconds", {}).items():
            spent[r["dataset"], r["kernel"], column] = seconds
    if not spent:
        return []
    ranked = sorted(spent.items(), key=lambda item: -item[1])
    total = sum(spent.values())
    lines = [f"fit time: {total / 60:.1f} worker minutes; the largest (data set, kernel, model):"]
    shown = [f"{d} {k} {c} {v:.0f} s" for (d, k, c), v in ranked[:12]]
    return lines + [", ".join(shown[i : i + 4]) for i in range(0, len(shown), 4)]


def format_binning_study(records, meta, settings):
    """The table of :func:`~.protocol.binning_study`: per data set and binning, its classes
    (rows per class over all rows) and the MAEs, then the published row."""
    columns = list(records[0]["columns"])
    published = dict(zip(COLUMNS["ordinal", "linear"], zip(*PAPER["ordinal", "linear"].values())))
    names = list(PAPER["ordinal", "linear"])
    lines = [
        report_header(
            "fathony2018a (binnings)", meta, ("numpy", "scipy"), command="advgame reproduce"
        ),
        f"{settings.splits} random 70/30 splits, the same for every binning; linear "
        f"{describe(settings.linear)}; bin edges from all rows",
        "Ordinal: MAE in classes, mean(sd) (Fathony et al. (2018a) Table 4, and the classes its "
        "Table 3 lists); rows per class over all rows",
        f"{'data':<12}{'binning':<13}{'rows per class':<46}" + "".join(f"{c:>15}" for c in columns),
    ]
    for name in dict.fromkeys(r["dataset"] for r in records):
        for r in (r for r in records if r["dataset"] == name):
            strategy, bins = r["binning"]
            chosen = " <-" if ORDINAL_BINNING.get(name) == (strategy, bins) else ""
            counts = "/".join(str(c) for c in r["class_counts"])
            cells = "".join(
                f"{f'{mean:.3f}({sd:.3f})':>15}" for mean, sd, _ in r["columns"].values()
            )
            lines.append(f"{name:<12}{f'{strategy} {bins}':<13}{counts:<46}{cells}{chosen}")
        paper = [published[c][names.index(name)] for c in columns]
        cells = "".join(f"{f'{mean:.3f}({sd:.3f})':>15}" for mean, sd in paper)
        classes = f"{PAPER_CLASSES[name]} classes (Table 3)"
        lines.append(f"{'  paper':<12}{'':<13}{classes:<46}{cells}")
    return "\n".join(lines)
