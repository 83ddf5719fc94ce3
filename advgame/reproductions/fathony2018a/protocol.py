r"""The evaluation protocol of Fathony et al. (2018a, §7), and :func:`run`, the reproduction of
their Tables 2, 4, 5 and 6 on vendored data (``advgame reproduce fathony2018a``).

Protocol (Fathony et al. 2018a, §7) and its deviations
    * Tuning, as the paper: once per data set and model, by two-stage k-fold cross-validation on
      the training part of the first split (:func:`tune`); then every model is trained with its
      chosen values on each of the random 70/30 splits (20 in the full run) and tested on the
      rest.  Stage 1 tries the log grid of ``lambda`` (the adversarial models' ``strength``:
      mean surrogate + ``lambda/2 ||theta||^2``; the SVMs and LR take the equivalent
      ``C = 1 / (n lambda)``, ``n`` the rows fitted, so every model sees the same grid), times
      the Gaussian widths; stage 2 multiplies the winner by :attr:`Tuning.refine`.  The paper
      uses five folds and five values per parameter in each stage; the Gaussian runs here use
      3 folds, 3 x 3 values and no second stage (:data:`FULL`), because each exact kernel fit
      is costly.  CS is trained once per value and scored both as a classifier (Table 2) and
      with its abstain rule (Table 6), each with its own choice.
    * Features: standardised on the training part.  Gaussian (:attr:`Settings.gaussian`):
      ``'exact'`` (the default, as the paper) fits every model on the exact kernel
      ``exp(-gamma ||x - x'||^2)``, ``gamma = width / d`` with the width tuned: the adversarial
      models through ``AdversarialClassifier(kernel='rbf', gamma=...)`` (representer form,
      Fathony et al. 2018a, §6.2), the SVMs through their exact kernel programs
      (:mod:`advgame.baselines`).  LR (not in the paper) has no kernel form here and
      is left out of the exact Gaussian tables.  With a kernel the estimator ignores
      ``features``, so the Gaussian AL-th of Table 5 is the adversarial ordinal model with the
      block kernel of multiclass potentials, not the thresholded kernel of the paper.
      ``'kpca'`` (the earlier runs, :data:`SUBSAMPLED`) gives every model the top
      :attr:`Settings.rank` kernel principal components on the training part (scikit-learn's
      ``KernelPCA``, a rank-``rank`` approximation of the kernel machine) and keeps LR.
    * Offsets: every model has class offsets (ours through ``[x; 1]``), so CS is trained with
      ``fit_intercept=True`` (Crammer & Singer's original has none; without them linear CS
      loses about 15 points of accuracy on standardised iris).  The Gaussian WW, CS and LLW
      have regularised offsets (the weights of a constant feature, as ours; see below); the
      others' are free, as published.
    * Baselines' solvers: each fit is its exact program (:mod:`advgame.baselines`);
      large linear ones go through a working set of hinge rows (constraint generation, the
      same optimum; the multiclass SVMs' first working set is named by a few epochs of dual
      ascent), the Gaussian OVA through libsvm's SMO on its ``k`` binary SVMs
      (``backend='libsvm'``), and the Gaussian WW, CS and LLW through certified dual
      coordinate ascent on the Gram matrix (``backend='dual'``, relative duality gap
      ``1e-4``), whose offsets are regularised: their exact programs with free offsets, QPs on
      the explicit eigen features of the Gram matrix, cost more than ``n^2`` (6 s of one core
      for 210 optdigits rows) and put the full run at hundreds of hours.  The Gaussian SVORIM
      and SVOREX (Table 5: machinecpu, 146 training rows) stay exact QPs.  The linear LLW goes
      through the certified interior-point method of :mod:`advgame.solvers.svm_newton`
      (``backend='dual'``, the QP's model with free offsets, the same ``1e-4``): 0.4-0.7 s of
      one core per optdigits tuning fit at any ``lambda``, where its exact QP took about 20 s
      (absolute margins keep most hinge rows tight, so no working set helps).  So does the
      linear OVA (the same module, its ``k`` binary SVMs side by side):
      0.3-0.8 s against 5-9 s for its QP.
    * Solver: the adversarial models use the estimator's defaults (``solver='auto'``: the
      certified smoothing solver, with the exact Gram matrix for kernels; ``tol = 1e-4``).
      Uncertified L-BFGS (``certify=False``) was tried for speed and rejected: for
      ``loss='abstain'`` on vehicle it stops at ``theta = 0`` after 0 iterations (line search
      ABNORMAL at the non-smooth start), i.e. always abstains.
    * Settings: ``advgame reproduce fathony2018a`` runs :data:`FULL` (every row, exact Gaussian
      kernels: 46 minutes at 2 jobs on an idle 2-core machine); ``--subsampled`` runs
      :data:`SUBSAMPLED`, the earlier runs' settings; ``--gaussian`` switches either between
      exact kernels and kernel principal components.
    * Data: the data sets of the tables available offline -- iris (scikit-learn), vehicle,
      redwine, segment, satimage (the paper's "sat"), optdigits and glass for Tables 2 and 6;
      machinecpu, abalone and boston for Tables 4 and 5, their regression targets cut into
      ordinal classes once on all rows (:func:`bin_edges`, :func:`_task_labels`) as
      :data:`~.tables.ORDINAL_BINNING` says: machinecpu into 5 equal-frequency bins, abalone
      into 10 and boston into 5 equal-width bins (boston's AL-th, AT and AL-mc in the
      :func:`binning_study`: 0.283, 0.291, 0.283 against the published 0.316, 0.306, 0.311;
      5 equal-frequency bins 0.40-0.42, 10 bins 0.54-0.90).  The paper's Table 3 gives only the number of classes (10 for machinecpu and abalone, 5 for boston), so the binning was chosen
      by :func:`binning_study` (equal-frequency and equal-width, 5 and 10 bins; 5 splits, AL-th,
      AT and AL-mc): on abalone only 10 equal-width bins come within one published sd (0.540,
      0.532, 0.507 against 0.551, 0.546, 0.521; 5 equal-frequency bins, the earlier choice,
      0.66-0.67), on machinecpu only 5 equal-frequency bins (0.39-0.47 against 0.45-0.52; 10
      equal-frequency bins 0.91-0.96, equal-width bins 0.11-0.25).  Ecoli, pageblocks,
      libras, vertebral, breasttissue and the other ordinal sets are not vendored; glass and
      boston, vendored later, are the part ``added`` (:data:`~.settings.ADDED`).  :data:`FULL` uses every row (70/30: redwine 1119,
      segment 1617, abalone 2924, satimage 4504 and optdigits 3934 training rows, against the
      paper's 1119, 1617, 2923, 4435 and 3823).  :data:`SUBSAMPLED` (the earlier runs)
      subsamples the larger sets per split to the rows of :data:`FULL_ROWS` (a fresh subsample
      each split) before the 70/30 split: redwine, segment and abalone 1000 (700 train),
      satimage 600 (420), optdigits 500 (350).
    * Parallel runs: ``n_jobs`` (``advgame reproduce fathony2018a --n-jobs J``) runs every
      data set's tuning fits (each stage one batch over data sets, models, values and folds),
      then every (data set, split, model) fit, through ``joblib.Parallel`` with the active
      backend, so ``joblib.parallel_config(backend='dask')`` (or ``'ray'``, ``'threading'``)
      runs them on a cluster; each worker's BLAS runs on one thread.  Each batch is dispatched
      longest first (the times measured in the tuning estimate the splits' fits), so that no
      long fit starts last while the other workers wait.  Every fit is seeded on its own and
      the results are assembled in a fixed order, so the tables do not depend on ``n_jobs``.
    * Marks: ``*`` for the best mean and those not significantly worse (paired Wilcoxon
      signed-rank test, p >= 0.05; :func:`advgame.benchmarks.protocol.wilcoxon_marks`) when
      there are at least :data:`MIN_SPLITS_FOR_TEST` splits, as the paper's bold numbers.
"""

import time
import warnings
from dataclasses import asdict, dataclass, replace
from functools import partial
from itertools import product

import numpy as np
from joblib import Parallel, delayed
from joblib.parallel import get_active_backend
from sklearn.datasets import load_iris
from sklearn.decomposition import KernelPCA
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from ...benchmarks.protocol import Progress, wilcoxon_marks
from ...benchmarks.report import publish, run_meta
from ...datasets import load, quantile_bins
from .plans import _multiclass_plans, _ordinal_plans
from .report import format_binning_study, format_report
from .settings import (
    BINNING_STUDY,
    FULL,
    GAUSSIAN,
    GRID_STUDY,
    MIN_SPLITS_FOR_TEST,
    PAPER_C,
    PAPER_GAMMA,
    PARTS,
    QUICK,
    SEED,
    SUBSAMPLED,
    TEST_FRACTION,
    Settings,
    Tuning,
    paper_tuning,
    part_of,
    part_settings,
)
from .tables import BINNING_CANDIDATES, COLUMNS, ORDINAL_BINNING, PAPER

__all__ = [
    "run",
    "evaluate",
    "tune",
    "check_jobs",
    "Settings",
    "Tuning",
    "FULL",
    "QUICK",
    "SUBSAMPLED",
    "bin_edges",
    "binning_study",
    "grid_study",
]


# ------------------------------------------------------------------------------------ data
def _load(name):
    if name == "iris":
        X, y = load_iris(return_X_y=True)
    elif name in PAPER["ordinal", "linear"]:
        data = load(f"ordinal/{name}")
        return data.X, data.y
    else:
        data = load(f"multiclass/{name}")
        X, y = data.X, data.y
    return X, np.unique(y, return_inverse=True)[1]  # classes 0..k-1: -1 is free for abstaining


def _splits(n, count, rows, rng, test_fraction=TEST_FRACTION, strata=None):
    """``count`` (train, test) index pairs: a subsample of ``rows`` rows (None: all), split
    ``1 - test_fraction`` / ``test_fraction`` (70/30).

    With ``strata`` (a label per row), each split is stratified: every stratum of the subsample
    sends ``round(test_fraction * size)`` of its rows to the test part, and at least one row to
    each part when it has two or more.
    """
    pairs = []
    for _ in range(count):
        order = rng.permutation(n)[: n if rows is None else min(n, rows)]
        if strata is None:
            cut = int(round(order.size * (1 - test_fraction)))
            pairs.append((order[:cut], order[cut:]))
            continue
        labels = np.asarray(strata)[order]
        test = np.zeros(order.size, dtype=bool)
        for stratum in np.unique(labels):
            where = np.flatnonzero(labels == stratum)  # in random order within the stratum
            test[where[: _stratum_sizes(where.size, test_fraction)[1]]] = True
        pairs.append((order[~test], order[test]))
    return pairs


def _class_labels(y, train):
    """Multiclass targets are the labels."""
    return y


def bin_edges(values, strategy, bins):
    """The ``bins - 1`` inner edges that cut ``values`` into ``bins`` ordered classes.

    ``strategy='quantile'``: equal-frequency bins, the edges at the ``j / bins`` quantiles
    (:func:`advgame.datasets.quantile_bins`); ``'uniform'``: equal-width bins, the edges at
    ``min + j (max - min) / bins``, ``j = 1 .. bins - 1``.  A value on an edge falls in the lower
    class (``numpy.digitize(values, edges, right=True)``).
    """
    values = np.asarray(values, dtype=np.float64)
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 2:
        raise ValueError(f"bins must be an integer >= 2; got {bins!r}.")
    if strategy == "quantile":
        return quantile_bins(values, bins)[1]
    if strategy == "uniform":
        return np.linspace(values.min(), values.max(), bins + 1)[1:-1]
    raise ValueError(f"strategy must be 'quantile' or 'uniform'; got {strategy!r}.")


def _ordinal_labels(target, train, bins=5, strategy="quantile"):
    """The ordinal classes of the target: ``bins`` bins by ``strategy`` (:func:`bin_edges`),
    edges from ``train``."""
    y = np.digitize(target, bin_edges(target[train], strategy, bins), right=True)
    return np.unique(y, return_inverse=True)[1]  # empty bins (ties, gaps): close the gaps


def _task_labels(target, train, bins=5, strategy="quantile"):
    """The ordinal classes of a vendored data set, the same on every split: edges from all its
    rows (``train`` unused; the classes are the task's, not fitted).  Equal-width
    edges from each training part would move with its extremes (abalone's 29 rings are one row:
    without it every class of 10 equal-width bins changes), and the classes with them."""
    return _ordinal_labels(target, np.arange(len(target)), bins, strategy)


def _features(X, fit, other, width, rank):
    """Features of ``X[fit]`` and ``X[other]``: standardised on ``fit``; Gaussian (``width`` not
    None): its top ``rank`` kernel principal components, ``gamma = width / d``."""
    scaler = StandardScaler().fit(X[fit])
    A, B = scaler.transform(X[fit]), scaler.transform(X[other])
    if width is None:
        return A, B
    pca = KernelPCA(
        min(rank, len(fit)), kernel="rbf", gamma=width / X.shape[1], eigen_solver="dense"
    ).fit(A)
    return pca.transform(A), pca.transform(B)


def _stratum_sizes(size, test_fraction):
    """``(train, test)`` rows of a stratum of ``size`` rows in :func:`_splits`."""
    test = int(round(size * test_fraction))
    if size >= 2:
        test = min(max(test, 1), size - 1)
    return size - test, test


# ------------------------------------------------------------------------------ experiments
def _trial(plan, X, y, fit, other, params, rank, exact_kernel=False):
    """``{table: (loss, % abstained)}`` of ``plan``'s model fitted on ``fit`` with
    ``params = (lambda, width)`` and tested on ``other``.

    ``width`` None: standardised features; else the Gaussian kernel ``gamma = width / d`` on
    them, exact (``exact_kernel``, the model's own kernel form) or through the top ``rank``
    kernel principal components (:func:`_features`)."""
    _, make, scorers = plan
    lam, width = params
    exact = exact_kernel and width is not None
    A, B = _features(X, fit, other, None if exact else width, rank)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # solver accuracy notes at the grid's weakest lambda
        gamma = width / X.shape[1] if exact else None
        model = make(lam, len(fit), gamma).fit(A, y[fit])
    out = {}
    for table, (scorer, predict) in scorers.items():
        predicted = predict(model, B)
        out[table] = (scorer(predicted, y[other]), 100.0 * float(np.mean(predicted == -1)))
    return out


def _neighbours(params, factors):
    """Stage-2 candidates: each tuned value of ``params`` times 1 or a factor."""
    lam, width = params
    scales = (1.0, *factors)
    widths = (None,) if width is None else [width * f for f in scales]
    return [(lam * f, w) for f, w in product(scales, widths)]


def check_jobs(n_jobs):
    """``n_jobs`` as an int: a positive integer, or -1 (every core, as joblib)."""
    if (
        isinstance(n_jobs, bool)
        or not isinstance(n_jobs, (int, np.integer))
        or not (n_jobs >= 1 or n_jobs == -1)
    ):
        raise ValueError(f"n_jobs must be a positive integer or -1; got {n_jobs!r}.")
    return int(n_jobs)


def _unit(function, args, single_thread):
    """One unit of work and its seconds; with ``single_thread`` (parallel runs), BLAS and
    OpenMP on one thread so that the workers do not oversubscribe the cores."""
    start = time.perf_counter()
    if not single_thread:
        return function(*args), time.perf_counter() - start
    with threadpool_limits(limits=1):
        return function(*args), time.perf_counter() - start


def _parallel(units, n_jobs, costs, bar=None):
    """``[function(*args) for function, args in units]`` through ``joblib.Parallel`` with the
    active backend (``joblib.parallel_config`` chooses loky, threading, dask, ray, ...), and
    each unit's seconds; both in the order of ``units``.

    The units are dispatched in decreasing order of their estimated ``costs`` (longest
    processing time first), so that a long unit does not start last and leave the other
    workers idle while it runs; results do not depend on the order (every unit is seeded on
    its own).  ``bar(results, total)``, if given, wraps the results as they come (a progress
    bar; all at once with a backend that cannot stream them, such as multiprocessing)."""
    units = list(units)
    order = sorted(range(len(units)), key=lambda i: -costs[i])
    single = n_jobs != 1
    streams = getattr(get_active_backend()[0], "supports_return_generator", False)
    done = Parallel(n_jobs=n_jobs, return_as="generator" if streams and bar else "list")(
        delayed(_unit)(*units[i], single) for i in order
    )
    if bar is not None:
        done = bar(done, len(order))
    results, seconds = [None] * len(units), [0.0] * len(units)
    for i, (result, elapsed) in zip(order, done):
        results[i], seconds[i] = result, elapsed
    return results, seconds


class _Tuner:
    """The state of one data set's two-stage cross-validation (:func:`tune`)."""

    def __init__(self, plans, X, y, train, tuning, rank, seed, stratified, exact_kernel):
        if stratified:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # classes with fewer rows than folds
                splitter = StratifiedKFold(tuning.folds, shuffle=True, random_state=seed)
                self.folds = list(splitter.split(train, y[train]))
        else:
            self.folds = list(KFold(tuning.folds, shuffle=True, random_state=seed).split(train))
        self.plans, self.X, self.y, self.train = plans, X, y, train
        self.tuning, self.rank, self.exact_kernel = tuning, rank, exact_kernel
        self.losses = {}  # (column, params) -> {table: [fold losses]}
        self.seconds = {}  # (column, params) -> mean seconds of a fold's fit
        self.spent = dict.fromkeys((plan[0] for plan in plans), 0.0)  # column -> seconds

    def stages(self):
        return 2 if self.tuning.refine else 1

    def todo(self, stage):
        """The (plan, params) pairs stage ``stage`` (1 or 2) has not yet scored."""
        if stage == 1:
            stage1 = list(product(self.tuning.grid, self.tuning.widths))
            candidates = {p[0]: stage1 for p in self.plans}
        else:
            candidates = {
                column: [
                    c for params in tables.values() for c in _neighbours(params, self.tuning.refine)
                ]
                for column, tables in self.best().items()
            }
        todo = []
        for plan in self.plans:
            for params in dict.fromkeys(candidates[plan[0]]):  # unique, in order
                if (plan[0], params) not in self.losses:
                    todo.append((plan, params))
        return todo

    def units(self, todo):
        """The (function, args) of every fold's fit of ``todo``, and their estimated costs."""
        train, X, y = self.train, self.X, self.y
        units, costs = [], []
        for plan, params in todo:
            cost = self.cost(plan[0], params)
            for a, b in self.folds:
                args = (plan, X, y, train[a], train[b], params, self.rank, self.exact_kernel)
                units.append((_trial, args))
                costs.append(cost)
        return units, costs

    def cost(self, column, params):
        """The estimated seconds of one fold's fit: measured, else those measured for the
        nearest values (log scale) of the same model, else (nothing measured yet) a size
        estimate, rows times rows (Gaussian) or features (linear), comparable only with its
        kind."""
        if (column, params) in self.seconds:
            return self.seconds[column, params]
        measured = [(c, t) for (col, c), t in self.seconds.items() if col == column]
        if measured:
            return min(measured, key=lambda m: _distance(m[0], params))[1]
        rows = self.train.size * (1.0 - 1.0 / len(self.folds))
        return rows * (rows if params[1] is not None else self.X.shape[1]) * 1e-8

    def absorb(self, todo, results, seconds):
        folds = len(self.folds)
        for i, (plan, params) in enumerate(todo):
            chunk = results[i * folds : (i + 1) * folds]
            self.losses[plan[0], params] = {t: [r[t][0] for r in chunk] for t in plan[2]}
            spent = seconds[i * folds : (i + 1) * folds]
            self.seconds[plan[0], params] = float(np.mean(spent))
            self.spent[plan[0]] += float(np.sum(spent))

    def best(self):
        """Per model and table, the values with the lowest mean validation loss (ties: the
        first tried)."""
        chosen = {}
        for column, _, scorers in self.plans:
            tried = [c for (col, c) in self.losses if col == column]
            chosen[column] = {
                t: min(tried, key=lambda c: np.mean(self.losses[column, c][t])) for t in scorers
            }
        return chosen


def _tune_all(tuners, n_jobs, messages, bar=None):
    """Run the tuners' stages, each stage of every tuner in one parallel batch; ``messages[i]``
    receives tuner ``i``'s progress lines, ``bar`` wraps each batch (:func:`_parallel`)."""
    for stage in (1, 2):
        batch = [(t, t.todo(stage), m) for t, m in zip(tuners, messages) if t.stages() >= stage]
        for tuner, todo, message in batch:
            message(
                f"tuning stage {stage}: {len(todo)} (model, value) pairs x {len(tuner.folds)} folds"
            )
        units, costs = [], []
        for tuner, todo, _ in batch:
            more, estimates = tuner.units(todo)
            units += more
            costs += estimates
        results, seconds = _parallel(units, n_jobs, costs, bar)
        start = 0
        for tuner, todo, _ in batch:
            end = start + len(todo) * len(tuner.folds)
            tuner.absorb(todo, results[start:end], seconds[start:end])
            start = end
    return [t.best() for t in tuners]


def _distance(params, other):
    """How far apart two ``(lambda, width)`` are on log scales (widths None: linear)."""
    far = abs(np.log(params[0] / other[0]))
    if params[1] is not None and other[1] is not None:
        far += abs(np.log(params[1] / other[1]))
    return far


def tune(
    plans,
    X,
    y,
    train,
    tuning,
    rank,
    seed,
    jobs=1,
    progress=None,
    stratified=False,
    exact_kernel=False,
):
    """The two-stage k-fold cross-validation of Fathony et al. (2018a, §7) on the rows ``train``.

    ``progress``, if given, is called with a line before each stage; ``stratified`` folds keep
    the class proportions of ``y[train]`` (so that every training fold sees every class with two
    or more rows); ``jobs`` parallel joblib jobs run the (model, value, fold) fits;
    ``exact_kernel``: Gaussian widths on the exact kernel (else kernel principal components).

    Returns ``{column: {table: (lambda, width)}}``: per model and table, the values with the
    lowest mean validation loss (ties: the first tried, i.e. the smaller ``lambda``).
    """
    tuner = _Tuner(plans, X, y, train, tuning, rank, seed, stratified, exact_kernel)
    return _tune_all([tuner], check_jobs(jobs), [progress or (lambda message: None)])[0]


def _split_unit(plan, chosen, X, target, labeler, train, test, rank, exact_kernel, announce):
    """One model on one split: ``{table: (loss, % abstained)}``, fitted once per distinct value
    in ``chosen`` (``{table: (lambda, width)}``); calls ``announce`` first, if any (a progress
    line)."""
    if announce is not None:
        announce()
    y = labeler(target, train)
    out = {}
    for params in dict.fromkeys(chosen.values()):
        result = _trial(plan, X, y, train, test, params, rank, exact_kernel)
        for table, value in result.items():
            if chosen[table] == params:
                out[table] = value
    return out


@dataclass
class _Job:
    """One data set's evaluation (:func:`evaluate`): its data, models and drawn splits."""

    X: np.ndarray
    target: np.ndarray
    plans: tuple
    labeler: object
    tables: tuple
    kernel: str
    settings: Settings
    pairs: list
    seed: int
    dataset: str
    label: str
    stratified: bool

    @property
    def exact_kernel(self):
        return self.kernel == "rbf" and self.settings.gaussian == "exact"


def _job(
    rng,
    settings,
    target,
    dataset,
    label=None,
    rows=None,
    test_fraction=TEST_FRACTION,
    strata=None,
    **fields,
):
    """Draw ``settings.splits`` splits and the folds' seed from ``rng`` (in this order); the
    arguments are those of :func:`evaluate`, ``fields`` the rest of the :class:`_Job` (``X``,
    ``plans``, ``labeler``, ``tables``, ``kernel``)."""
    if settings.gaussian not in GAUSSIAN:
        raise ValueError(f"gaussian must be one of {GAUSSIAN}; got {settings.gaussian!r}.")
    pairs = _splits(len(target), settings.splits, rows, rng, test_fraction, strata)
    seed = int(rng.integers(2**31))
    return _Job(
        target=target,
        settings=settings,
        pairs=pairs,
        seed=seed,
        dataset=dataset,
        label=dataset if label is None else label,
        stratified=strata is not None,
        **fields,
    )


def _evaluate_all(jobs, n_jobs, progress):
    """Records of every job, in order: all tunings (each stage one parallel batch over every
    data set, model, value and fold), then one parallel batch over every (data set, split,
    model) fit, each batch dispatched longest first by the tuning's measured times.  Every unit
    is seeded on its own, so the records depend neither on ``n_jobs`` nor on the order."""
    tuners = []
    for job in jobs:
        tuning = job.settings.linear if job.kernel == "linear" else job.settings.rbf
        train = job.pairs[0][0]
        progress(f"{job.label}: tuning on {train.size} rows")
        tuners.append(
            _Tuner(
                job.plans,
                job.X,
                job.labeler(job.target, train),
                train,
                tuning,
                job.settings.rank,
                job.seed,
                job.stratified,
                job.exact_kernel,
            )
        )
    messages = [partial(lambda label, m: progress(f"{label}: {m}"), job.label) for job in jobs]

    def bar(results, total):
        return progress.bar(results, "fit", total)

    chosen = _tune_all(tuners, n_jobs, messages, bar)
    units, costs = [], []
    for job, tuner, picked in zip(jobs, tuners, chosen):
        count, fold_rows = len(job.pairs), tuner.train.size * (1.0 - 1.0 / len(tuner.folds))
        # the tuning's time of each model's chosen values (a fold's rows)
        tuned = [
            sum(tuner.cost(plan[0], params) for params in dict.fromkeys(picked[plan[0]].values()))
            for plan in job.plans
        ]
        lead = int(np.argmax(tuned))  # a split's longest fit starts first: it announces it
        for s, (train, test) in enumerate(job.pairs, 1):
            for p, plan in enumerate(job.plans):
                announce = None
                if p == lead:
                    line = f"{job.label}: split {s}/{count} ({train.size}/{test.size})"
                    announce = progress.later(line)
                args = (
                    plan,
                    picked[plan[0]],
                    job.X,
                    job.target,
                    job.labeler,
                    train,
                    test,
                    job.settings.rank,
                    job.exact_kernel,
                    announce,
                )
                units.append((_split_unit, args))
                costs.append(tuned[p] * train.size / fold_rows)

    results, seconds = _parallel(units, n_jobs, costs, bar)
    results, seconds = iter(results), iter(seconds)
    out = []
    for job, tuner, picked in zip(jobs, tuners, chosen):
        spent = dict(tuner.spent)
        splits = []
        for _ in job.pairs:
            split = {}
            for plan in job.plans:
                split.update({(t, plan[0]): v for t, v in next(results).items()})
                spent[plan[0]] += next(seconds)
            splits.append(split)
        out.append(_records(job, picked, splits, spent))
    return out


def _records(job, chosen, splits, spent):
    """One record per table of ``job`` from its per-split ``{(table, column): value}``;
    ``spent``: the seconds of each model's fits (tuning and splits)."""
    records = []
    available = {plan[0] for plan in job.plans}
    for table in job.tables:
        shown = [c for c in COLUMNS[table, job.kernel] if c in available]
        losses = {c: [sp[table, c][0] for sp in splits] for c in shown}
        record = _record(table, job.kernel, job.dataset, losses, len(splits))
        record["chosen"] = {c: list(chosen[c][table]) for c in shown}
        record["seconds"] = {c: round(spent[c], 2) for c in shown}
        if table == "abstain":
            record["abstained"] = {
                c: float(np.mean([sp[table, c][1] for sp in splits])) for c in shown
            }
        records.append(record)
    return records


def evaluate(
    X,
    target,
    plans,
    labeler,
    tables,
    kernel,
    settings,
    rng,
    progress,
    dataset,
    label=None,
    rows=None,
    test_fraction=TEST_FRACTION,
    strata=None,
    n_jobs=None,
):
    """The evaluation protocol of Fathony et al. (2018a, §7) on one data set: tune on the first
    split, then evaluate every split.

    ``advgame compare`` (:func:`~advgame.reproductions.fathony2018a.compare.compare`) runs it
    on the user's data; :func:`run` evaluates the vendored data sets by the same steps
    (:func:`_job`, :func:`_evaluate_all`), all at once.  ``settings.splits``
    random splits of ``rows`` rows (None: all; stratified by ``strata`` when given) with
    ``test_fraction`` of them tested; the models of ``plans`` are tuned once by :func:`tune` on
    the first split's training part (stratified folds when the splits are stratified), then
    fitted with their chosen values on every split (features standardised on the training
    part).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    target : ndarray of shape (n,)
        What ``labeler(target, train)`` turns into the classes ``0..k-1`` of a split.
    plans : tuple
        ``(column, model factory, {table: (scorer, predict)})`` per model.
    tables : tuple of str
        The tables to report (``'zero-one'``, ``'abstain'``, ``'ordinal'``).
    kernel : {'linear', 'rbf'}
    settings : Settings
    rng : numpy.random.Generator
        Draws the splits, then the seed of the folds.
    progress : Progress
        Prints the progress lines on stderr.
    dataset : str
        Name of the data set in the records.
    label : str, optional
        Prefix of the progress lines (default ``dataset``).
    rows : int or None
        Rows subsampled afresh for each split (None: all).
    test_fraction : float, default=0.3
    strata : ndarray of shape (n,) or None
        A class per row: stratified splits and tuning folds (``compare``); None: plain random
        splits and folds (``reproduce``, as published).
    n_jobs : int or None
        Parallel joblib jobs over the (model, value, fold) fits of the tuning and the (split,
        model) fits (None: ``settings.jobs``); the records do not depend on it.

    Returns
    -------
    list of dict
        One record per table (see :func:`run`).
    """
    job = _job(
        rng, settings, target, dataset, label, rows, test_fraction, strata,
        X=X, plans=plans, labeler=labeler, tables=tables, kernel=kernel,
    )  # fmt: skip
    jobs = check_jobs(settings.jobs if n_jobs is None else n_jobs)
    return _evaluate_all([job], jobs, progress)[0]


def _experiment_args(kind, kernel, name, settings):
    """The arguments of :func:`evaluate` for one vendored data set, but the generator."""
    X, raw = _load(name)
    if kind == "ordinal":
        strategy, bins = settings.binning or ORDINAL_BINNING[name]
        labeler = partial(_task_labels, bins=bins, strategy=strategy)
        plans, tables = _ordinal_plans(kernel), ("ordinal",)
    else:
        exact = kernel == "rbf" and settings.gaussian == "exact"
        plans, labeler, tables = _multiclass_plans(exact), _class_labels, ("zero-one", "abstain")
    if settings.models:
        plans = tuple(plan for plan in plans if plan[0] in settings.models)
        tables = tuple(t for t in tables if any(t in plan[2] for plan in plans))
    return {
        "X": X,
        "target": raw,
        "plans": plans,
        "labeler": labeler,
        "tables": tables,
        "kernel": kernel,
        "settings": settings,
        "dataset": name,
        "label": f"{kind} {name} ({kernel})",
        "rows": settings.rows.get(name),
    }


def _record(table, kernel, dataset, losses, splits):
    """Mean, sd and mark per column; zero-one losses are reported as accuracy %."""
    if splits >= MIN_SPLITS_FOR_TEST:
        marks = wilcoxon_marks(losses)
    else:
        marks = dict.fromkeys(losses, "")
    columns = {}
    for c, v in losses.items():
        v = np.asarray(v, dtype=float)
        if table == "zero-one":
            v = 100.0 * (1.0 - v)
        columns[c] = (float(np.mean(v)), float(np.std(v, ddof=1)) if v.size > 1 else 0.0, marks[c])
    return {
        "table": table,
        "kernel": kernel,
        "dataset": dataset,
        "splits": splits,
        "columns": columns,
    }


def run(
    quick=False, out=None, print_fn=print, n_jobs=None, settings=None, progress=True, parts=None
):
    """Run Tables 2, 4, 5 and 6, print them, optionally write ``out`` (.json or .md).

    Parameters
    ----------
    quick : bool, default=False
        :data:`QUICK` settings (iris and machinecpu, 2 splits, small grids) instead of
        :data:`FULL` (every row and exact Gaussian kernels, the paper's protocol: 46 minutes
        at ``n_jobs=2`` on 2 cores).
    out : str or Path or None
        Where to write the records (``.json``) or the report (anything else).
    print_fn : callable
        Receives the report.
    n_jobs : int or None
        Parallel joblib jobs (None: the settings' ``jobs``): every data set's tuning fits, then
        every (data set, split, model) fit, go through ``joblib.Parallel`` with the active
        backend, so ``joblib.parallel_config(backend=...)`` runs them on loky (the default),
        threads, or a Dask or Ray cluster.  The records do not depend on it.
    settings : Settings or None
        Overrides ``quick``: e.g. :data:`SUBSAMPLED`, the earlier runs' subsampled rows and
        kernel principal components (see the module's notes).
    progress : bool
        Progress lines and, in a terminal, a bar over each parallel batch of fits; False is
        quiet.
    parts : tuple of str or None
        Names of :data:`~advgame.reproductions.fathony2018a.settings.PARTS`: ``'multiclass'``
        (Tables 2 and 6), ``'ordinal'`` (Tables 4 and 5) and/or ``'added'`` (every table on the
        sets of :data:`~advgame.reproductions.fathony2018a.settings.ADDED`, vendored later, on a
        stream of their own); None runs all three.

    Returns
    -------
    list of dict
        One record per (table, kernel, data set): ``columns`` maps a model to
        ``(mean, sd, mark)``; ``chosen`` gives its tuned ``[lambda, width]``; ``seconds`` the
        seconds of its fits (tuning and splits, one worker each); abstention records add
        ``abstained`` (% of test rows).
    """
    if settings is None:
        settings = QUICK if quick else FULL
    settings = part_settings(settings, parts)
    if settings.gaussian not in GAUSSIAN:
        raise ValueError(f"gaussian must be one of {GAUSSIAN}; got {settings.gaussian!r}.")
    if not settings.kernels or not set(settings.kernels) <= {"linear", "rbf"}:
        raise ValueError(
            "Settings.kernels must list 'linear' and/or 'rbf' (the multiclass tables' kernels); "
            f"got {settings.kernels!r}."
        )
    known = {column for order in COLUMNS.values() for column in order}
    if not set(settings.models) <= known:
        raise ValueError(
            f"Settings.models must name columns of the tables ({', '.join(sorted(known))}); "
            f"got {settings.models!r}."
        )
    n_jobs = check_jobs(settings.jobs if n_jobs is None else n_jobs)
    settings = replace(settings, jobs=n_jobs)
    meta = run_meta(settings=asdict(settings))
    start = time.perf_counter()
    progress = Progress("fathony2018a", progress)

    experiments = (
        [
            ("multiclass", kernel, name)
            for kernel in settings.kernels
            for name in settings.multiclass
        ]
        + [("ordinal", "linear", name) for name in settings.ordinal]
        + [("ordinal", "rbf", name) for name in settings.ordinal_rbf]
    )
    plans = {part: [e for e in experiments if part_of(e[2], e[0]) == part] for part in PARTS}
    # splits and seeds drawn in each part's plan order from the part's own stream (so the full
    # run's tables are those of its parts run one by one), then every data set evaluated at once
    jobs = []
    for plan in plans.values():
        rng = np.random.default_rng(SEED)
        jobs += [_job(rng=rng, **_experiment_args(*p, settings)) for p in plan]
    records = [r for job in _evaluate_all(jobs, n_jobs, progress) for r in job]
    meta["seconds"] = round(time.perf_counter() - start, 1)
    publish(format_report(records, meta, settings), meta, records, out, print_fn)
    return records


def binning_study(
    settings=BINNING_STUDY,
    candidates=BINNING_CANDIDATES,
    out=None,
    print_fn=print,
    n_jobs=None,
    progress=True,
):
    """Table 4 (linear) of Fathony et al. (2018a) under each binning of ``candidates`` (by
    default equal-frequency and equal-width, 5 and 10 bins; :func:`bin_edges`) on the ordinal
    data sets of ``settings`` (:data:`BINNING_STUDY`), with the same splits and folds for every
    candidate; print the MAEs beside the published ones, with each candidate's classes.

    The paper's Table 3 gives only the number of classes (10 for machinecpu and abalone); its
    source, the benchmark of Chu and Ghahramani (2005), "Gaussian processes for ordinal
    regression", bins regression targets into ordinal classes, so the binning is chosen here by
    which candidate's MAEs match Table 4 (:data:`~.tables.ORDINAL_BINNING`).

    Returns the records of :func:`run`, each with ``binning`` ``[strategy, bins]`` and
    ``class_counts`` (rows per class); ``out`` as in :func:`run`.
    """
    n_jobs = check_jobs(settings.jobs if n_jobs is None else n_jobs)
    meta = run_meta(settings=asdict(settings), candidates=[list(c) for c in candidates])
    start = time.perf_counter()
    jobs, extra = [], []
    for strategy, bins in candidates:
        rng = np.random.default_rng(SEED)  # the same splits and folds for every candidate
        candidate = replace(settings, binning=(strategy, bins))
        for name in settings.ordinal:
            args = _experiment_args("ordinal", "linear", name, candidate)
            args["label"] = f"{name} ({strategy} {bins})"
            jobs.append(_job(rng=rng, **args))
            counts = np.bincount(_task_labels(args["target"], None, bins, strategy))
            extra.append({"binning": [strategy, bins], "class_counts": counts.tolist()})
    results = _evaluate_all(jobs, n_jobs, Progress("fathony2018a binnings", progress))
    records = [{**r, **more} for job, more in zip(results, extra) for r in job]
    meta["seconds"] = round(time.perf_counter() - start, 1)
    publish(format_binning_study(records, meta, settings), meta, records, out, print_fn)
    return records


def grid_study(
    names,
    settings=GRID_STUDY,
    c_grid=PAPER_C,
    gammas=PAPER_GAMMA,
    out=None,
    print_fn=print,
    n_jobs=None,
    progress=True,
):
    """Tables 2 and 6 of Fathony et al. (2018a) on the data sets ``names`` with the models
    ``settings.models``, each data set tuned over the paper's grid (:func:`~.settings.paper_tuning`
    with ``c_grid`` and ``gammas``; by default the first stage of §7.1,
    :data:`~.settings.PAPER_C` x :data:`~.settings.PAPER_GAMMA`) instead of ``settings.rbf``
    (``gammas=None``: the linear tables, tuned over ``c_grid`` instead of ``settings.linear``);
    print the tables with the published numbers.

    It tests whether the grids of :data:`FULL` explain cells far from the paper.  Returns the
    records of :func:`run`; ``out`` as in :func:`run`.
    """
    n_jobs = check_jobs(settings.jobs if n_jobs is None else n_jobs)
    kernel = "linear" if gammas is None else "rbf"
    meta = run_meta(settings=asdict(settings), c_grid=list(c_grid), gammas=gammas and list(gammas))
    start = time.perf_counter()
    rng = np.random.default_rng(SEED)
    jobs = []
    for name in names:
        args = _experiment_args("multiclass", kernel, name, settings)
        n = int(round(len(args["target"]) * (1 - TEST_FRACTION)))
        tuning = paper_tuning(n, args["X"].shape[1], settings.rbf.folds, c_grid, gammas)
        args["settings"] = replace(settings, **{kernel: tuning})
        jobs.append(_job(rng=rng, **args))
    progress = Progress("fathony2018a grid", progress)
    records = [r for job in _evaluate_all(jobs, n_jobs, progress) for r in job]
    meta["seconds"] = round(time.perf_counter() - start, 1)
    grid = f"the paper's grid, C in {{{', '.join(f'{c:g}' for c in c_grid)}}}"
    if gammas is not None:
        grid += f" x gamma in {{{', '.join(f'{g:g}' for g in gammas)}}}"
    tuning = (
        f"{'Gaussian' if gammas else 'linear'}: {grid}, {settings.rbf.folds}-fold CV, one stage"
    )
    publish(format_report(records, meta, settings, tuning), meta, records, out, print_fn)
    return records
