"""``advgame compare``: your data by the evaluation protocol of Fathony et al. (2018a, §7).

:func:`compare` runs the protocol of the reproduction (:func:`evaluate`;
:func:`~advgame.reproductions.fathony2018a.protocol.run` takes the same steps on the vendored
data) on a user's ``X, y`` for one loss: the adversarial model of Fathony et al., "Consistent
Robust Adversarial Prediction for General Multiclass Classification" (arXiv:1812.07526, 2018)
against the baselines of the matching table, with stratified splits and folds (every class on
both sides) and the settings :data:`COMPARE`; the table has no published row.  The settings'
types and the columns of each table are exported here too, for a caller who builds its own
settings or reads the table.
"""

import time
from dataclasses import asdict, replace
from functools import partial

import numpy as np

from ...benchmarks.protocol import Progress
from ...benchmarks.report import report_header, run_meta
from ...datasets import quantile_bins
from ...losses import LossMatrix
from .plans import compare_plans, matrix_plans
from .protocol import (
    _class_labels,
    _experiment_args,
    _ordinal_labels,
    _stratum_sizes,
    evaluate,
)
from .report import describe, format_table
from .settings import (
    COMPARE,
    COMPARE_LOSSES,
    MAX_COMPARE_ROWS,
    MAX_COMPARE_SPLITS,
    MAX_ORDINAL_CLASSES,
    MIN_SPLITS_FOR_TEST,
    SEED,
    TEST_FRACTION,
    Settings,
    Tuning,
)
from .tables import ABSTAIN_COLUMNS, ALPHA, ORDINAL_COLUMNS, ZERO_ONE_COLUMNS

__all__ = [
    "compare",
    "compare_plans",
    "evaluate",
    "COMPARE",
    "COMPARE_LOSSES",
    "MAX_COMPARE_SPLITS",
    "MAX_COMPARE_ROWS",
    "MAX_ORDINAL_CLASSES",
    "Settings",
    "Tuning",
    "ZERO_ONE_COLUMNS",
    "ORDINAL_COLUMNS",
    "ABSTAIN_COLUMNS",
]

COMPARE_TITLES = {
    "zero-one": "Zero-one loss: accuracy % (higher is better)",
    "ordinal": "Ordinal loss: mean absolute error in classes (lower is better)",
    "abstain": "Abstention loss with alpha = {alpha:g} [% abstained] (lower is better)",
    "matrix": "Your loss matrix ({shape}): mean loss L[a, y] of the actions played (lower is "
    "better)",
}
_CITATION = (
    'Fathony et al., "Consistent Robust Adversarial Prediction for General Multiclass '
    'Classification" (arXiv:1812.07526, 2018)'
)


def _check_classes(names, counts, what, test_fraction):
    names = np.asarray(names).tolist()  # Python values: their repr reads as in the file
    if len(names) < 2:
        raise ValueError(
            f"{what} has {len(names)} distinct value ({names[0]!r}); a comparison needs at least 2 "
            "classes."
        )
    # two training rows: every training fold of the tuning then sees the class
    needed = next(n for n in range(3, 1000) if _stratum_sizes(n, test_fraction)[0] >= 2)
    few = [(n, c) for n, c in zip(names, counts) if c < needed]
    if few:
        shown = ", ".join(f"{n!r} ({c} row{'s' if c > 1 else ''})" for n, c in few[:10])
        raise ValueError(
            f"every class needs at least {needed} rows (two to train on, one to test on, with "
            f"test_size {test_fraction:g}); {what} has {len(few)} class(es) with fewer: {shown}. "
            "Merge or drop them."
        )


def _compare_target(y, table, bins, test_fraction):
    """``(target, labeler, strata, description)`` of :func:`compare`'s labels."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be one label per row (1-D); got shape {y.shape}.")
    if bins is not None:
        if table != "ordinal":
            raise ValueError(
                "bins (equal-frequency classes of a numeric target) needs the ordinal loss."
            )
        if (
            isinstance(bins, bool)
            or not isinstance(bins, (int, np.integer))
            or not 2 <= bins <= MAX_ORDINAL_CLASSES
        ):
            raise ValueError(
                f"bins must be an integer in [2, {MAX_ORDINAL_CLASSES}]; got {bins!r}."
            )
        if y.dtype.kind not in "biuf":
            raise ValueError("bins needs a numeric target; the target column holds text.")
        target = y.astype(np.float64)
        strata = quantile_bins(target, bins)[0]
        _check_classes(
            *np.unique(strata, return_counts=True), f"the target in {bins} bins", test_fraction
        )
        labeler = partial(_ordinal_labels, bins=bins)
        return target, labeler, strata, f"{bins} equal-frequency bins of the target"
    names, classes, counts = np.unique(y, return_inverse=True, return_counts=True)
    if table == "ordinal":
        if y.dtype.kind not in "biuf":
            raise ValueError(
                "the ordinal loss needs ordered classes: a numeric target (e.g. 1-5 ratings); the "
                f"target column holds text such as {str(names[0])!r}. Map its values to numbers "
                "in their order."
            )
        if len(names) > MAX_ORDINAL_CLASSES:
            raise ValueError(
                f"the target has {len(names)} distinct values, over {MAX_ORDINAL_CLASSES} ordinal "
                "classes; for a continuous target give bins (--bins 5: equal-frequency classes, "
                "as in the protocol of Fathony et al. 2018a)."
            )
    _check_classes(names, counts, "the target", test_fraction)
    shown = ", ".join(str(n) for n in names[:10]) + (", ..." if len(names) > 10 else "")
    return classes, _class_labels, classes, f"{len(names)} classes ({shown})"


def compare(
    X,
    y,
    loss="zero_one",
    *,
    splits=COMPARE.splits,
    test_size=TEST_FRACTION,
    random_state=SEED,
    n_jobs=1,
    kernel="linear",
    bins=None,
    max_rows=None,
    settings=None,
    name="data",
    progress=None,
    alpha=None,
):
    """The adversarial model against its baselines on your data, by Fathony et al.'s (2018a)
    protocol.

    Runs the evaluation protocol of Fathony et al., "Consistent Robust Adversarial Prediction
    for General Multiclass Classification" (arXiv:1812.07526, 2018), §7 -- the protocol of
    ``advgame reproduce fathony2018a`` (:func:`evaluate`): ``splits`` seeded, stratified random
    splits with ``test_size`` of the rows tested; features standardised on each training part;
    the regularisation ``lambda`` of every model tuned once by stratified k-fold
    cross-validation on the first split's training part (:data:`COMPARE`: 3 folds over 5
    values, then a refinement); then every model fitted with its chosen value on every split.

    Parameters
    ----------
    X : array-like of shape (n, d)
        Numeric features, all finite.
    y : array-like of shape (n,)
        Labels: any values for ``'zero_one'`` and ``'abstain'``; ordered numbers for
        ``'ordinal'`` (or a continuous target with ``bins``).
    loss : {'zero_one', 'ordinal', 'abstain'} or LossMatrix
        ``'zero_one'``: accuracy of AL01 against WW, CS, LLW (multiclass SVMs) and logistic
        regression; ``'ordinal'``: mean absolute error of AL-th / AL-mc against threshold SVMs
        and the reductions; ``'abstain'``: abstention loss (cost ``alpha``) of ALabs against OVA
        and CS with abstention (their abstain rules are the paper's, consistent for
        ``alpha = 1/2``).  A :class:`~advgame.losses.LossMatrix` ``L[a, y]`` (its columns the
        sorted distinct labels of ``y``): the mean ``L[a, y]`` of the actions played by
        ``AdversarialClassifier(loss=L)`` (AL) and by logistic regression deciding by the Bayes
        rule for ``L``, ``argmin_a sum_y L[a, y] p_y`` (LR-Bayes).
    splits : int, default=10
        Random splits, at most :data:`MAX_COMPARE_SPLITS`; with 6 or more the best model and
        those not significantly worse are marked ``*`` (paired Wilcoxon test).
    test_size : float in (0, 1), default=0.3
    random_state : int, default=0
        Seed of the splits and folds.
    n_jobs : int, default=1
        Parallel jobs (joblib) for the tuning and the splits.
    kernel : {'linear', 'rbf'}
        ``'rbf'``: Gaussian kernel principal components as features, the width tuned too.
    bins : int or None
        Ordinal loss only: turn a numeric target into this many equal-frequency classes, edges
        from each training part (as Fathony et al. 2018a do for regression data).
    max_rows : int or None
        Subsample this many rows afresh for each split (before splitting); needed, at most
        :data:`MAX_COMPARE_ROWS`, for data with more rows than that.
    settings : Settings or None
        The tuning grids (default :data:`COMPARE`); ``splits`` and ``n_jobs`` override its own.
    name : str
        Name of the data set in the table.
    progress : Progress or None
        Progress lines on stderr (default ``Progress('compare')``).
    alpha : float in (0, 1) or None
        The abstention cost of ``loss='abstain'`` (None: 1/2, as in the paper); only with that
        loss.

    Returns
    -------
    records : list of dict
        One record (see :func:`run`).
    report : str
        The table, with a header describing the data and the protocol.
    """
    matrix = loss if isinstance(loss, LossMatrix) else None
    if matrix is None and loss not in COMPARE_LOSSES:
        raise ValueError(
            f"loss must be one of {', '.join(COMPARE_LOSSES)} or a LossMatrix; got {loss!r}."
        )
    if alpha is not None:
        if loss != "abstain":
            raise ValueError(f"alpha (the abstention cost) needs loss='abstain'; got {loss!r}.")
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating)):
            raise ValueError(f"alpha must be a number in (0, 1); got {alpha!r}.")
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"alpha must be in (0, 1), the cost of abstaining; got {alpha!r}.")
    alpha = ALPHA if alpha is None else float(alpha)
    if kernel not in ("linear", "rbf"):
        raise ValueError(f"kernel must be 'linear' or 'rbf'; got {kernel!r}.")
    for label, value, high in (("splits", splits, MAX_COMPARE_SPLITS), ("n_jobs", n_jobs, None)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{label} must be a positive integer; got {value!r}.")
        if high is not None and value > high:
            raise ValueError(f"{label} must be at most {high}; got {value}.")
    if not isinstance(test_size, (float, int, np.floating)) or not 0.0 < test_size < 1.0:
        raise ValueError(f"test_size must be a fraction in (0, 1), e.g. 0.3; got {test_size!r}.")
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] == 0:
        raise ValueError(f"X must be a 2-D array with at least one feature; got shape {X.shape}.")
    if not np.all(np.isfinite(X)):
        raise ValueError("X has NaN or infinite values; every feature must be a finite number.")
    if len(y) != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {len(y)} labels.")
    if max_rows is not None:
        if isinstance(max_rows, bool) or not isinstance(max_rows, (int, np.integer)):
            raise ValueError(f"max_rows must be a positive integer; got {max_rows!r}.")
        if not 1 <= max_rows <= MAX_COMPARE_ROWS:
            raise ValueError(
                f"max_rows must be between 1 and {MAX_COMPARE_ROWS:,} (MAX_COMPARE_ROWS); got "
                f"{max_rows:,}."
            )
    elif X.shape[0] > MAX_COMPARE_ROWS:
        raise ValueError(
            f"the data have {X.shape[0]:,} rows, over the {MAX_COMPARE_ROWS:,} (MAX_COMPARE_ROWS) "
            "that the exact baselines are fitted on; give max_rows (--max-rows) to subsample that "
            "many rows afresh for each split."
        )
    table = "matrix" if matrix is not None else COMPARE_LOSSES[loss]
    target, labeler, strata, classes = _compare_target(y, table, bins, test_size)
    if matrix is not None and matrix.n_labels != np.unique(target).size:
        raise ValueError(
            f"the loss matrix has {matrix.n_labels} label columns but the target has "
            f"{np.unique(target).size} classes ({classes}); its columns are the sorted labels."
        )
    settings = replace(settings or COMPARE, splits=int(splits), jobs=int(n_jobs))
    tuning = settings.linear if kernel == "linear" else settings.rbf
    rows = X.shape[0] if max_rows is None else min(max_rows, X.shape[0])
    n_train = int(round(rows * (1 - test_size)))
    if n_train < 2 * tuning.folds:
        raise ValueError(
            f"{rows} rows are too few: the {tuning.folds}-fold tuning needs at least "
            f"{2 * tuning.folds} training rows (test_size {test_size:g})."
        )
    progress = Progress("compare") if progress is None else progress
    meta = run_meta(settings=asdict(settings))
    start = time.perf_counter()
    records = evaluate(
        X,
        target,
        matrix_plans(matrix) if matrix is not None else compare_plans(table, kernel, alpha),
        labeler,
        (table,),
        kernel,
        settings,
        np.random.default_rng(random_state),
        progress,
        dataset=name,
        label=f"{name} ({'matrix' if matrix is not None else loss}, {kernel})",
        rows=max_rows,
        test_fraction=float(test_size),
        strata=strata,
    )
    meta["seconds"] = round(time.perf_counter() - start, 1)
    features = (
        "standardised features"
        if kernel == "linear"
        else f"the top {settings.rank} Gaussian kernel principal components of the standardised "
        "features"
    )
    test_percent = f"{100 * test_size:g}"
    train_percent = f"{100 - 100 * test_size:g}"
    lines = [
        report_header(
            name, meta, ("numpy", "scipy", "highspy", "cvxpy"), command="advgame compare"
        ),
        f"protocol of {_CITATION}, §7:",
        f"{X.shape[0]} rows, {X.shape[1]} feature{'s' if X.shape[1] > 1 else ''}, {classes}; "
        f"{settings.splits} seeded stratified "
        f"{train_percent}/{test_percent} splits (random state {random_state}"
        + ("" if max_rows is None else f"; {rows} rows subsampled per split")
        + f"); {features}, fitted on each training part.",
        f"lambda tuned once per model on the first split's training part: {describe(tuning)} "
        "(SVMs, LR: C = 1/(n lambda)).",
        f"mean(sd) over splits; * = best or not significantly worse (Wilcoxon p >= 0.05, >= "
        f"{MIN_SPLITS_FOR_TEST} splits); {meta['seconds']:g} s.",
        "",
    ]
    shape = None if matrix is None else f"{matrix.n_actions} actions x {matrix.n_labels} labels"
    title = COMPARE_TITLES[table].format(alpha=alpha, shape=shape)
    title += ", Gaussian kernel" if kernel == "rbf" else ""
    lines += format_table(title, records, None, 1 if table == "zero-one" else 3, table == "abstain")
    return records, "\n".join(lines)


def _experiment(kind, kernel, name, settings, rng, progress):
    """Records of one vendored data set of the reproduction, by the :func:`evaluate` that
    :func:`compare` runs on the user's data."""
    return evaluate(rng=rng, progress=progress, **_experiment_args(kind, kernel, name, settings))
