r"""``advgame reproduce seed000``: Fathony et al.'s (2018a) experiments (§7, Tables 2, 4, 5 and 6)
on vendored data.

Models
    ``zero-one`` (Table 2, accuracy %): :class:`advgame.AdversarialClassifier` with
    ``loss='zero_one'`` (AL01) against :class:`~advgame.benchmarks.baselines.WestonWatkinsSVC`
    (WW), :class:`~advgame.benchmarks.baselines.CrammerSingerSVC` (CS),
    :class:`~advgame.benchmarks.baselines.LeeLinWahbaSVC` (LLW) and scikit-learn's
    ``LogisticRegression`` (LR, not in the paper).
    ``ordinal`` (Table 4, mean absolute error in classes): ``AdversarialClassifier(loss='ordinal')``
    with thresholded features (AL-th, Fathony et al. 2018a, §3.2.1 ``phi_th``) and with multiclass
    features (AL-mc), against :class:`~advgame.benchmarks.baselines.AllThresholdSVOR` (AT),
    :class:`~advgame.benchmarks.baselines.ImmediateThresholdSVOR` (IT) and the reductions of
    :mod:`advgame.benchmarks.reductions` (RED-th, RED-mc, CSOSR, CSOVO, CSOVA).
    Table 5 (Gaussian kernel): AL-th against AT (SVORIM) and IT (SVOREX).
    ``abstain`` (Table 6, abstention loss with ``alpha = 1/2``, and % abstained):
    ``AdversarialClassifier(loss='abstain', alpha=0.5)`` (ALabs; ``predict`` returns ``-1`` for
    the abstain action, Corollary 14) against
    :class:`~advgame.benchmarks.baselines.OneVsAllAbstain` (OVA, ``tau = 0``) and
    :class:`~advgame.benchmarks.baselines.CrammerSingerAbstain` (CS, ``tau = 1/2``).

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
      (:mod:`advgame.benchmarks.baselines`).  LR (not in the paper) has no kernel form here and
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
    * Baselines' solvers: each fit is its exact program (:mod:`advgame.benchmarks.baselines`);
      large linear ones go through a working set of hinge rows (constraint generation, the
      same optimum; the multiclass SVMs' first working set is named by a few epochs of dual
      ascent), the Gaussian OVA through libsvm's SMO on its ``k`` binary SVMs
      (``backend='libsvm'``), and the Gaussian WW, CS and LLW through certified dual
      coordinate ascent on the Gram matrix (``backend='dual'``, relative duality gap
      ``1e-4``), whose offsets are regularised: their exact programs with free offsets, QPs on
      the explicit eigen features of the Gram matrix, cost more than ``n^2`` (6 s of one core
      for 210 optdigits rows) and put the full run at hundreds of hours.  The Gaussian SVORIM
      and SVOREX (Table 5: machinecpu, 146 training rows) stay exact QPs.  The linear LLW goes
      through the certified interior-point method of :mod:`advgame.benchmarks._hinge_newton`
      (``backend='dual'``, the QP's model with free offsets, the same ``1e-4``): 0.4-0.7 s of
      one core per optdigits tuning fit at any ``lambda``, where its exact QP took about 20 s
      (absolute margins keep most hinge rows tight, so no working set helps).  So does the
      linear OVA (:mod:`advgame.benchmarks._ova_newton`, its ``k`` binary SVMs side by side):
      0.3-0.8 s against 5-9 s for its QP.
    * Solver: the adversarial models use the estimator's defaults (``solver='auto'``: the
      certified smoothing solver, with the exact Gram matrix for kernels; ``tol = 1e-4``).
      Uncertified L-BFGS (``certify=False``) was tried for speed and rejected: for
      ``loss='abstain'`` on vehicle it stops at ``theta = 0`` after 0 iterations (line search
      ABNORMAL at the non-smooth start), i.e. always abstains.
    * Settings: ``advgame reproduce seed000`` runs :data:`FULL` (every row, exact Gaussian
      kernels: 46 minutes at 2 jobs on an idle 2-core machine); ``--subsampled`` runs
      :data:`SUBSAMPLED`, the earlier runs' settings; ``--gaussian`` switches either between
      exact kernels and kernel principal components.
    * Data: the data sets of the tables available offline -- iris (scikit-learn), vehicle,
      redwine, segment, satimage (the paper's "sat") and optdigits for Tables 2 and 6;
      machinecpu and abalone, discretised into :data:`ORDINAL_BINS` = 5 equal-frequency bins on
      the training part (:func:`advgame.datasets.quantile_bins`), for Tables 4 and 5.  Table 3
      of Fathony et al. (2018a) lists 10 classes for both, but its MAEs match 5 bins, not 10: on
      machinecpu (4 splits) every model scores 0.41-0.47 with 5 bins (published 0.45-0.52) and
      0.91-1.06 with 10.  Glass, ecoli, pageblocks, libras, vertebral, breasttissue and the other
      ordinal sets are not vendored.  :data:`FULL` uses every row (70/30: redwine 1119,
      segment 1617, abalone 2924, satimage 4504 and optdigits 3934 training rows, against the
      paper's 1119, 1617, 2923, 4435 and 3823).  :data:`SUBSAMPLED` (the earlier runs)
      subsamples the larger sets per split to the rows of :data:`FULL_ROWS` (a fresh subsample
      each split) before the 70/30 split: redwine, segment and abalone 1000 (700 train),
      satimage 600 (420), optdigits 500 (350).
    * Parallel runs: ``n_jobs`` (``advgame reproduce seed000 --n-jobs J``) runs every data set's
      tuning fits (each stage one batch over data sets, models, values and folds), then every
      (data set, split, model) fit, through ``joblib.Parallel`` with the active backend, so
      ``joblib.parallel_config(backend='dask')`` (or ``'ray'``, ``'threading'``) runs them on
      a cluster; each worker's BLAS runs on one thread.  Each batch is dispatched longest
      first (the times measured in the tuning estimate the splits' fits), so that no long fit
      starts last while the other workers wait.  Every fit is seeded on its own and
      the results are assembled in a fixed order, so the tables do not depend on ``n_jobs``.
    * Marks: ``*`` for the best mean and those not significantly worse (paired Wilcoxon
      signed-rank test, p >= 0.05; :func:`advgame.benchmarks._protocol.wilcoxon_marks`) when
      there are at least :data:`MIN_SPLITS_FOR_TEST` splits, as the paper's bold numbers.

The published numbers are printed beside ours; the paper's averages cover its twelve data sets,
so the ``paper`` average row here is recomputed over ours.

Your data (``advgame compare``)
    :func:`compare` runs the same protocol (:func:`evaluate`, which :func:`run` also calls) on a
    user's ``X, y`` for one loss: the adversarial model of Fathony et al., "Consistent Robust
    Adversarial Prediction for General Multiclass Classification" (arXiv:1812.07526,
    2018) against the baselines of the matching table above, with stratified splits and folds
    (every class on both sides) and the settings :data:`COMPARE`; the table has no published
    row.
"""

import time
import warnings
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from functools import partial
from itertools import product

import numpy as np
from joblib import Parallel, delayed
from sklearn.datasets import load_iris
from sklearn.decomposition import KernelPCA
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from ..datasets import load, quantile_bins
from ..models.classifier import AdversarialClassifier
from ._protocol import Progress, wilcoxon_marks
from .baselines import (
    AllThresholdSVOR,
    CrammerSingerAbstain,
    ImmediateThresholdSVOR,
    LeeLinWahbaSVC,
    OneVsAllAbstain,
    WestonWatkinsSVC,
)
from .oracle import machine_info, report_header, write_results
from .reductions import (
    CostSensitiveOneVsAllSVC,
    CostSensitiveOneVsOneSVC,
    OneSidedRegressionSVC,
    ReductionMulticlassSVOR,
    ReductionThresholdSVOR,
)

__all__ = [
    "run",
    "compare",
    "compare_plans",
    "columns",
    "check_jobs",
    "evaluate",
    "tune",
    "Settings",
    "Tuning",
    "FULL",
    "QUICK",
    "SUBSAMPLED",
    "GAUSSIAN",
    "COMPARE",
    "PAPER",
]

#: Seed of the splits, subsamples and folds.
SEED = 0
TEST_FRACTION = 0.3
#: Abstention cost of Table 6.
ALPHA = 0.5
#: Gaussian models of :class:`Settings`: the exact kernel, or kernel principal components.
GAUSSIAN = ("exact", "kpca")
#: Rows per split (subsample, then split 70/30) of the larger data sets in :data:`SUBSAMPLED`.
FULL_ROWS = {"redwine": 1000, "segment": 1000, "abalone": 1000, "satimage": 600, "optdigits": 500}
#: Fewer splits than this print no marks (with 5 pairs the smallest exact Wilcoxon p is 0.0625).
MIN_SPLITS_FOR_TEST = 6
#: Ordinal classes: 5, which the published MAEs match (Table 3 of Fathony et al. 2018a says 10; see
#: above).
ORDINAL_BINS = 5

ZERO_ONE_COLUMNS = ("AL01", "WW", "CS", "LLW", "LR")
ABSTAIN_COLUMNS = ("ALabs", "OVA", "CS")
ORDINAL_COLUMNS = ("AL-th", "RED-th", "AT", "IT", "AL-mc", "RED-mc", "CSOSR", "CSOVO", "CSOVA")
ORDINAL_RBF_COLUMNS = ("AL-th", "SVORIM", "SVOREX")
#: Column order of each (table, kernel).
COLUMNS = {
    ("zero-one", "linear"): ZERO_ONE_COLUMNS,
    ("zero-one", "rbf"): ZERO_ONE_COLUMNS,
    ("ordinal", "linear"): ORDINAL_COLUMNS,
    ("ordinal", "rbf"): ORDINAL_RBF_COLUMNS,
    ("abstain", "linear"): ABSTAIN_COLUMNS,
    ("abstain", "rbf"): ABSTAIN_COLUMNS,
}


def columns(table, kernel, gaussian="exact"):
    """The columns of ``(table, kernel)`` (:data:`COLUMNS`), without LR for exact Gaussian
    kernels (``gaussian='exact'``: LR, not in the paper, has no kernel form here)."""
    order = COLUMNS[table, kernel]
    if kernel == "rbf" and gaussian == "exact":
        return tuple(c for c in order if c != "LR")
    return order


#: Fathony et al.'s (2018a) published mean (sd) per (table, kernel) and data set, in the column
#: order above (LR is not in the paper); abstention cells add the % abstained.
PAPER = {
    ("zero-one", "linear"): {
        "iris": ((96.3, 3.1), (96.0, 2.6), (96.3, 2.4), (79.7, 5.5)),
        "redwine": ((58.8, 2.0), (59.1, 1.9), (56.6, 2.0), (57.7, 1.7)),
        "vehicle": ((78.8, 2.2), (78.8, 1.7), (78.4, 2.3), (69.8, 3.7)),
        "segment": ((94.9, 0.7), (94.9, 0.8), (95.2, 0.8), (75.8, 1.5)),
        "satimage": ((84.9, 0.7), (85.4, 0.7), (84.7, 0.7), (74.9, 0.9)),
        "optdigits": ((96.6, 0.6), (96.5, 0.7), (96.3, 0.6), (76.2, 2.2)),
    },
    ("zero-one", "rbf"): {
        "iris": ((96.7, 2.4), (96.4, 2.4), (96.2, 2.3), (95.4, 2.1)),
        "redwine": ((63.3, 1.8), (64.2, 2.0), (64.2, 1.9), (64.7, 2.1)),
        "vehicle": ((84.3, 2.5), (84.4, 2.6), (83.8, 2.3), (84.4, 2.6)),
        "segment": ((96.5, 0.6), (96.6, 0.5), (96.3, 0.6), (96.4, 0.5)),
        "satimage": ((91.9, 0.5), (92.0, 0.6), (91.9, 0.5), (91.9, 0.4)),
        "optdigits": ((98.7, 0.4), (98.8, 0.4), (98.8, 0.3), (98.9, 0.3)),
    },
    ("ordinal", "linear"): {
        "machinecpu": (
            (0.449, 0.09),
            (0.456, 0.09),
            (0.458, 0.09),
            (0.467, 0.10),
            (0.518, 0.11),
            (0.515, 0.10),
            (0.646, 0.10),
            (0.602, 0.09),
            (0.702, 0.14),
        ),  # fmt: skip
        "abalone": (
            (0.551, 0.02),
            (0.547, 0.02),
            (0.546, 0.02),
            (0.571, 0.02),
            (0.521, 0.02),
            (0.520, 0.02),
            (0.545, 0.02),
            (0.558, 0.02),
            (0.556, 0.02),
        ),  # fmt: skip
    },
    ("ordinal", "rbf"): {"machinecpu": ((0.452, 0.09), (0.652, 0.12), (0.628, 0.13))},
    ("abstain", "linear"): {
        "iris": ((0.037, 0.02, 7), (0.122, 0.04, 13), (0.038, 0.02, 6)),
        "redwine": ((0.418, 0.01, 58), (0.742, 0.04, 50), (0.423, 0.01, 54)),
        "vehicle": ((0.214, 0.02, 23), (0.231, 0.02, 17), (0.216, 0.02, 20)),
        "segment": ((0.061, 0.01, 7), (0.082, 0.01, 11), (0.052, 0.01, 6)),
        "satimage": ((0.147, 0.01, 14), (0.356, 0.01, 20), (0.337, 0.01, 14)),
        "optdigits": ((0.037, 0.01, 4), (0.045, 0.01, 5), (0.038, 0.01, 5)),
    },
    ("abstain", "rbf"): {
        "iris": ((0.051, 0.03, 6), (0.120, 0.04, 14), (0.043, 0.03, 1)),
        "redwine": ((0.373, 0.01, 42), (0.742, 0.04, 50), (0.391, 0.01, 58)),
        "vehicle": ((0.206, 0.03, 20), (0.226, 0.03, 15), (0.300, 0.02, 31)),
        "segment": ((0.042, 0.01, 5), (0.084, 0.01, 11), (0.102, 0.01, 13)),
        "satimage": ((0.094, 0.01, 9), (0.356, 0.01, 20), (0.181, 0.01, 4)),
        "optdigits": ((0.062, 0.01, 12), (0.051, 0.01, 5), (0.072, 0.01, 8)),
    },
}
TITLES = {
    ("zero-one", "linear"): "Zero-one: accuracy % (Fathony et al. (2018a) Table 2, linear; LR not "
    "in the paper)",
    ("zero-one", "rbf"): "Zero-one: accuracy % (Fathony et al. (2018a) Table 2, Gaussian; LR not "
    "in the paper)",
    ("ordinal", "linear"): f"Ordinal: MAE in classes, {ORDINAL_BINS} bins (Fathony et al. (2018a) "
    "Table 4)",
    ("ordinal", "rbf"): f"Ordinal: MAE in classes, {ORDINAL_BINS} bins (Fathony et al. (2018a) "
    "Table 5, Gaussian)",
    ("abstain", "linear"): f"Abstention: loss with alpha = {ALPHA:g} [% abstained] (Fathony et al. "
    "(2018a) Table 6, linear)",
    ("abstain", "rbf"): f"Abstention: loss with alpha = {ALPHA:g} [% abstained] (Fathony et al. "
    "(2018a) Table 6, Gaussian)",
}


@dataclass(frozen=True)
class Tuning:
    """Two-stage ``folds``-fold cross-validation: stage 1 over ``grid`` (``lambda``) times
    ``widths`` (Gaussian ``gamma = width / d``; ``(None,)`` for linear features), stage 2 over
    the winner's values times each factor of ``refine`` (empty: one stage)."""

    folds: int
    grid: tuple
    widths: tuple
    refine: tuple


@dataclass(frozen=True)
class Settings:
    """Splits, parallel jobs, tuning per kernel, Gaussian rank, data sets, the rows per split
    of the data sets subsampled (absent: all rows), the Gaussian models (:data:`GAUSSIAN`):
    ``'exact'`` kernels, or ``'kpca'`` features (the top ``rank`` kernel principal components,
    one linear model on them), the kernels of the multiclass tables (Tables 2 and 6; e.g.
    ``('linear',)`` for the linear halves alone) and the models run (column names of
    :data:`COLUMNS`; empty: all of them)."""

    splits: int
    jobs: int
    linear: Tuning
    rbf: Tuning
    rank: int
    multiclass: tuple
    ordinal: tuple
    ordinal_rbf: tuple
    rows: dict
    gaussian: str = "exact"
    kernels: tuple = ("linear", "rbf")
    models: tuple = ()


FULL = Settings(
    splits=20,
    jobs=2,
    linear=Tuning(folds=5, grid=(1e-5, 1e-4, 1e-3, 1e-2, 1e-1), widths=(None,), refine=(1 / 3, 3)),
    rbf=Tuning(folds=3, grid=(1e-4, 1e-3, 1e-2), widths=(0.25, 1.0, 4.0), refine=()),
    rank=50,
    multiclass=("iris", "vehicle", "redwine", "segment", "satimage", "optdigits"),
    ordinal=("machinecpu", "abalone"),
    ordinal_rbf=("machinecpu",),
    rows={},
)
#: The earlier full run: :data:`FULL` with the larger data sets subsampled (:data:`FULL_ROWS`)
#: and Gaussian kernel principal components.
SUBSAMPLED = replace(FULL, rows=FULL_ROWS, gaussian="kpca")
QUICK = Settings(
    splits=2,
    jobs=1,
    linear=Tuning(folds=2, grid=(1e-3, 1e-1), widths=(None,), refine=(3,)),
    rbf=Tuning(folds=2, grid=(1e-2,), widths=(1.0,), refine=()),
    rank=10,
    multiclass=("iris",),
    ordinal=("machinecpu",),
    ordinal_rbf=("machinecpu",),
    rows={},
)


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


def _ordinal_labels(target, train, bins=ORDINAL_BINS):
    """``bins`` (:data:`ORDINAL_BINS`) equal-frequency classes of the target, edges from
    ``train``."""
    _, edges = quantile_bins(target[train], bins)
    y = np.digitize(target, edges, right=True)
    return np.unique(y, return_inverse=True)[1]  # tied edges leave empty bins: close the gaps


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


# ------------------------------------------------------------------------------- the models
def _adversarial(loss, **options):
    """``make(lam, n, gamma)``: the adversarial model; with ``gamma``, on the exact Gaussian
    kernel ``exp(-gamma ||x - x'||^2)`` (representer form, Fathony et al. 2018a, §6.2)."""

    def make(lam, n, gamma=None):
        kernel = {} if gamma is None else {"kernel": "rbf", "gamma": gamma}
        return AdversarialClassifier(
            loss=loss, strength=lam, random_state=SEED, **kernel, **options
        )

    return make


def _svm(cls, kernel_options=None, **options):
    """``make(lam, n, gamma)``: a baseline with ``C = 1 / (n lam)``; with ``gamma``, its exact
    kernel program on the Gaussian Gram matrix (and ``kernel_options``)."""

    def make(lam, n, gamma=None):
        kernel = {}
        if gamma is not None:
            kernel = {"kernel": "rbf", "gamma": gamma, **(kernel_options or {})}
        return cls(C=1.0 / (n * lam), **{**options, **kernel})

    return make


def _logistic(lam, n, gamma=None):
    if gamma is not None:
        raise ValueError("LR has no exact Gaussian form here; use kernel-PCA features.")
    return LogisticRegression(C=1.0 / (n * lam), max_iter=2000)


def _zero_one_loss(predicted, y):
    return float(np.mean(predicted != y))


def _abstention_loss(predicted, y):
    """Fathony et al. (2018a), §7.3: 0 if right, 1 if wrong, ``ALPHA`` if abstained (``-1``)."""
    abstained = predicted == -1
    return float(np.mean(np.where(abstained, ALPHA, predicted != y)))


def _absolute_error(predicted, y):
    return float(np.mean(np.abs(predicted - y)))


def _predict(model, X):
    return model.predict(X)


def _predict_plain(model, X):
    """A Crammer-Singer abstainer's plain argmax (the classifier of Table 2)."""
    scores = model.decision_function(X)
    if scores.ndim == 1:  # two classes: f_1 - f_0 (argmax picks class 0 on ties)
        return model.classes_[(scores > 0).astype(np.int64)]
    return model.classes_[np.argmax(scores, axis=1)]


def _multiclass_plans(exact_kernel=False):
    """(column, model factory, {table: (scorer, predict)}) of Tables 2 and 6; without LR when
    ``exact_kernel`` (exact Gaussian kernels: LR, not in the paper, has no kernel form here)."""
    zero_one = (_zero_one_loss, _predict)
    abstention = (_abstention_loss, _predict)
    cs_scorers = {"zero-one": (_zero_one_loss, _predict_plain), "abstain": abstention}
    # Gaussian: dual coordinate ascent on the Gram matrix (regularised offsets)
    dual = {"backend": "dual", "fit_intercept": True}
    plans = (
        ("AL01", _adversarial("zero_one"), {"zero-one": zero_one}),
        ("WW", _svm(WestonWatkinsSVC, dual), {"zero-one": zero_one}),
        ("CS", _svm(CrammerSingerAbstain, dual, threshold=0.5, fit_intercept=True), cs_scorers),
        # linear too: the interior-point method of backend='dual' (free offsets)
        ("LLW", _svm(LeeLinWahbaSVC, **dual), {"zero-one": zero_one}),
        ("LR", _logistic, {"zero-one": zero_one}),
        ("ALabs", _adversarial("abstain", alpha=ALPHA), {"abstain": abstention}),
        # linear: the interior-point method of backend='dual' (free offsets, as the QP);
        # Gaussian: libsvm's SMO on the k binary SVMs (the same program, no eigen features)
        (
            "OVA",
            _svm(OneVsAllAbstain, {"backend": "libsvm"}, threshold=0.0, backend="dual"),
            {"abstain": abstention},
        ),
    )
    return tuple(plan for plan in plans if not (exact_kernel and plan[0] == "LR"))


def _ordinal_plans(kernel):
    """(column, model factory, {'ordinal': (scorer, predict)}) of Table 4 or (Gaussian) 5."""
    mae = {"ordinal": (_absolute_error, _predict)}
    threshold = _adversarial("ordinal", features="thresholded")
    if kernel == "rbf":
        models = (
            ("AL-th", threshold),
            ("SVORIM", _svm(AllThresholdSVOR)),
            ("SVOREX", _svm(ImmediateThresholdSVOR)),
        )
    else:
        models = (
            ("AL-th", threshold),
            ("RED-th", _svm(ReductionThresholdSVOR)),
            ("AT", _svm(AllThresholdSVOR)),
            ("IT", _svm(ImmediateThresholdSVOR)),
            ("AL-mc", _adversarial("ordinal", features="multiclass")),
            ("RED-mc", _svm(ReductionMulticlassSVOR)),
            ("CSOSR", _svm(OneSidedRegressionSVC)),
            ("CSOVO", _svm(CostSensitiveOneVsOneSVC)),
            ("CSOVA", _svm(CostSensitiveOneVsAllSVC)),
        )
    return tuple((column, make, mae) for column, make in models)


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


def _parallel(units, n_jobs, costs):
    """``[function(*args) for function, args in units]`` through ``joblib.Parallel`` with the
    active backend (``joblib.parallel_config`` chooses loky, threading, dask, ray, ...), and
    each unit's seconds; both in the order of ``units``.

    The units are dispatched in decreasing order of their estimated ``costs`` (longest
    processing time first), so that a long unit does not start last and leave the other
    workers idle while it runs; results do not depend on the order (every unit is seeded on
    its own)."""
    units = list(units)
    order = sorted(range(len(units)), key=lambda i: -costs[i])
    single = n_jobs != 1
    done = Parallel(n_jobs=n_jobs)(delayed(_unit)(*units[i], single) for i in order)
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


def _tune_all(tuners, n_jobs, messages):
    """Run the tuners' stages, each stage of every tuner in one parallel batch; ``messages[i]``
    receives tuner ``i``'s progress lines."""
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
        results, seconds = _parallel(units, n_jobs, costs)
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
    X,
    target,
    plans,
    labeler,
    tables,
    kernel,
    settings,
    rng,
    dataset,
    label=None,
    rows=None,
    test_fraction=TEST_FRACTION,
    strata=None,
):
    """Draw ``settings.splits`` splits and the folds' seed from ``rng`` (in this order)."""
    if settings.gaussian not in GAUSSIAN:
        raise ValueError(f"gaussian must be one of {GAUSSIAN}; got {settings.gaussian!r}.")
    pairs = _splits(len(target), settings.splits, rows, rng, test_fraction, strata)
    seed = int(rng.integers(2**31))
    return _Job(
        X,
        target,
        plans,
        labeler,
        tables,
        kernel,
        settings,
        pairs,
        seed,
        dataset,
        dataset if label is None else label,
        strata is not None,
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
    chosen = _tune_all(tuners, n_jobs, messages)
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

    results, seconds = _parallel(units, n_jobs, costs)
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
    """The evaluation protocol of Fathony et al. (§7; see :func:`compare`) on one data set: tune
    on the first split, then evaluate every split.

    The one implementation behind ``advgame reproduce seed000`` (:func:`run`, which evaluates
    several data sets at once) and ``advgame compare`` (:func:`compare`).  ``settings.splits``
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
        X, target, plans, labeler, tables, kernel, settings, rng, dataset, label, rows,
        test_fraction, strata,
    )  # fmt: skip
    jobs = check_jobs(settings.jobs if n_jobs is None else n_jobs)
    return _evaluate_all([job], jobs, progress)[0]


def _experiment_args(kind, kernel, name, settings):
    """The arguments of :func:`evaluate` for one vendored data set, but the generator."""
    X, raw = _load(name)
    if kind == "ordinal":
        plans, labeler, tables = _ordinal_plans(kernel), _ordinal_labels, ("ordinal",)
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


def _experiment(kind, kernel, name, settings, rng, progress):
    """Records of one vendored data set (:func:`evaluate`)."""
    return evaluate(rng=rng, progress=progress, **_experiment_args(kind, kernel, name, settings))


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


# ---------------------------------------------------------------------------------- report
def _table(title, records, paper, digits, abstained=False, published_columns=()):
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


def _describe(tuning):
    grid = f"{len(tuning.grid)} values in [{min(tuning.grid):g}, {max(tuning.grid):g}]"
    if tuning.widths != (None,):
        grid += " x widths " + "/".join(f"{w:g}" for w in tuning.widths)
    stage2 = f", then x {'/'.join(f'{f:.3g}' for f in tuning.refine)}" if tuning.refine else ""
    return f"{tuning.folds}-fold CV over lambda {grid}{stage2}"


def format_report(records, meta, settings):
    """Tables 2, 4, 5 and 6 with the published numbers beside ours."""
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
            "seed000", meta, ("numpy", "scipy", "highspy", "cvxpy"), command="advgame reproduce"
        ),
        f"{settings.splits} random 70/30 splits (rows subsampled per split: {rows}); features "
        f"standardised; Gaussian: {gaussian}.",
        "Tuned once per data set and model on the first split's training part: linear "
        f"{_describe(settings.linear)}; Gaussian {_describe(settings.rbf)} (SVMs, LR: "
        "C = 1/(n lambda)).",
        "mean(sd) over splits; * = best or not significantly worse (Wilcoxon p >= 0.05, >= "
        f"{MIN_SPLITS_FOR_TEST} splits); paper rows: the numbers of Fathony et al. (2018a) "
        "(their 20 splits of the "
        "full data), averages recomputed over the data sets shown",
        "",
    ]
    for key, title in TITLES.items():
        if key in by_table:
            digits = 1 if key[0] == "zero-one" else 3
            lines += _table(
                title, by_table[key], PAPER[key], digits, key[0] == "abstain", COLUMNS[key]
            )
            lines.append("")
    lines.append(
        "data sets not vendored: glass, ecoli, pageblocks, libras, vertebral, breasttissue and "
        "10 of Table 4's 12 (8 of Table 5's)"
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


def run(quick=False, out=None, print_fn=print, n_jobs=None, settings=None):
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
    rng = np.random.default_rng(SEED)
    meta = {
        "date": datetime.now().isoformat(timespec="minutes"),
        "machine": machine_info(),
        "settings": asdict(settings),
    }
    start = time.perf_counter()
    progress = Progress("seed000")

    plan = [
        ("multiclass", kernel, name) for kernel in settings.kernels for name in settings.multiclass
    ]
    plan += [("ordinal", "linear", name) for name in settings.ordinal]
    plan += [("ordinal", "rbf", name) for name in settings.ordinal_rbf]
    # splits and seeds drawn in the plan's order, then every data set evaluated at once
    jobs = [_job(rng=rng, **_experiment_args(*p, settings)) for p in plan]
    records = [r for job in _evaluate_all(jobs, n_jobs, progress) for r in job]
    meta["seconds"] = round(time.perf_counter() - start, 1)
    report = format_report(records, meta, settings)
    print_fn(report)
    if out is not None:
        write_results(out, meta, records, report)
    return records


# --------------------------------------------------------------------- advgame compare (your data)
#: ``advgame compare --loss``: the table of Fathony et al.'s (2018a) protocol that each loss is
#: scored by.
COMPARE_LOSSES = {"zero_one": "zero-one", "ordinal": "ordinal", "abstain": "abstain"}
#: Default settings of :func:`compare`: 10 splits (enough for the Wilcoxon marks); linear:
#: 3-fold CV over 5 values of ``lambda``, then the winner times 1/3 and 3 (the paper's two
#: stages, with 3 folds instead of 5); Gaussian: as :data:`FULL`.  A 300-row file with 20
#: features and 5 classes takes about 20-30 s on one core.
COMPARE = Settings(
    splits=10,
    jobs=1,
    linear=Tuning(folds=3, grid=(1e-5, 1e-4, 1e-3, 1e-2, 1e-1), widths=(None,), refine=(1 / 3, 3)),
    rbf=FULL.rbf,
    rank=FULL.rank,
    multiclass=(),
    ordinal=(),
    ordinal_rbf=(),
    rows={},
    gaussian="kpca",
)
#: Most splits :func:`compare` accepts (each split refits every model).
MAX_COMPARE_SPLITS = 100
#: Most rows :func:`compare` fits a model on: larger data need ``max_rows`` (a fresh random
#: subsample per split, as :data:`FULL_ROWS` does for the larger vendored sets); the exact SVM QPs
#: and the dense Gaussian kernel (``n x n``) grow fast with the rows.
MAX_COMPARE_ROWS = 5_000
#: Most distinct ordinal classes :func:`compare` accepts without ``bins``.
MAX_ORDINAL_CLASSES = 20
COMPARE_TITLES = {
    "zero-one": "Zero-one loss: accuracy % (higher is better)",
    "ordinal": "Ordinal loss: mean absolute error in classes (lower is better)",
    "abstain": f"Abstention loss with alpha = {ALPHA:g} [% abstained] (lower is better)",
}
_CITATION = (
    'Fathony et al., "Consistent Robust Adversarial Prediction for General Multiclass '
    'Classification" (arXiv:1812.07526, 2018)'
)


def compare_plans(table, kernel="linear"):
    """The models of ``table`` (``'zero-one'``, ``'ordinal'``, ``'abstain'``): the adversarial
    model first, then the baselines Fathony et al. (2018a) compare it with (:data:`COLUMNS`)."""
    if table == "ordinal":
        return _ordinal_plans(kernel)
    plans = [
        (column, make, {table: scorers[table]})
        for column, make, scorers in _multiclass_plans()
        if table in scorers
    ]
    order = COLUMNS[table, kernel]
    return tuple(sorted(plans, key=lambda plan: order.index(plan[0])))


def _stratum_sizes(size, test_fraction):
    """``(train, test)`` rows of a stratum of ``size`` rows in :func:`_splits`."""
    test = int(round(size * test_fraction))
    if size >= 2:
        test = min(max(test, 1), size - 1)
    return size - test, test


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
):
    """The adversarial model against its baselines on your data, by Fathony et al.'s (2018a) protocol.

    Runs the evaluation protocol of Fathony et al., "Consistent Robust Adversarial Prediction
    for General Multiclass Classification" (arXiv:1812.07526, 2018), §7 -- the same
    function as ``advgame reproduce seed000`` (:func:`evaluate`): ``splits`` seeded, stratified
    random splits with ``test_size`` of the rows tested; features standardised on each training
    part; the regularisation ``lambda`` of every model tuned once by stratified k-fold
    cross-validation on the first split's training part (:data:`COMPARE`: 3 folds over 5 values, then a refinement);
    then every model
    fitted with its chosen value on every split.

    Parameters
    ----------
    X : array-like of shape (n, d)
        Numeric features, all finite.
    y : array-like of shape (n,)
        Labels: any values for ``'zero_one'`` and ``'abstain'``; ordered numbers for
        ``'ordinal'`` (or a continuous target with ``bins``).
    loss : {'zero_one', 'ordinal', 'abstain'}
        ``'zero_one'``: accuracy of AL01 against WW, CS, LLW (multiclass SVMs) and logistic
        regression; ``'ordinal'``: mean absolute error of AL-th / AL-mc against threshold SVMs
        and the reductions; ``'abstain'``: abstention loss (``alpha = 1/2``) of ALabs against OVA
        and CS with abstention.
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

    Returns
    -------
    records : list of dict
        One record (see :func:`run`).
    report : str
        The table, with a header describing the data and the protocol.
    """
    if loss not in COMPARE_LOSSES:
        raise ValueError(f"loss must be one of {', '.join(COMPARE_LOSSES)}; got {loss!r}.")
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
    table = COMPARE_LOSSES[loss]
    target, labeler, strata, classes = _compare_target(y, table, bins, test_size)
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
    meta = {
        "date": datetime.now().isoformat(timespec="minutes"),
        "machine": machine_info(),
        "settings": asdict(settings),
    }
    start = time.perf_counter()
    records = evaluate(
        X,
        target,
        compare_plans(table, kernel),
        labeler,
        (table,),
        kernel,
        settings,
        np.random.default_rng(random_state),
        progress,
        dataset=name,
        label=f"{name} ({loss}, {kernel})",
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
        f"lambda tuned once per model on the first split's training part: {_describe(tuning)} "
        "(SVMs, LR: C = 1/(n lambda)).",
        f"mean(sd) over splits; * = best or not significantly worse (Wilcoxon p >= 0.05, >= "
        f"{MIN_SPLITS_FOR_TEST} splits); {meta['seconds']:g} s.",
        "",
    ]
    title = COMPARE_TITLES[table] + (", Gaussian kernel" if kernel == "rbf" else "")
    lines += _table(title, records, None, 1 if table == "zero-one" else 3, table == "abstain")
    return records, "\n".join(lines)
