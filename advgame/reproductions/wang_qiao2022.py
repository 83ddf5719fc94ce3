r"""Wang and Qiao (2022), "Learning Acceptance Regions for Many Classes with Anomaly Detection"
(generalised prediction sets): Tables 1-3 and timings (``advgame reproduce wang_qiao2022``;
``advgame bench prediction-sets``).  Table 4 (phoneme) is not run: the data are not shipped
with the package or its dependencies.

Methods (columns, in the paper's order, :data:`METHODS`): KDE, OCSVM, BSVM, BCOPS-RF, GPS and
GPSKFS (:class:`advgame.GeneralizedPredictionSet` without and with kernel feature selection).

Experiments, one replication ``r`` each (everything seeded by ``SEED + r``, so a run is
reproducible bit for bit):

``example1`` (Wang and Qiao 2022, Table 1, ``γ = 0.05``)
    One draw of :func:`advgame.datasets.make_prediction_set_example1` with
    ``n_per_class = N + N_test`` and ``N_out`` outliers, split into a training part (``N`` points
    per class, no outliers) and a test part (the other class points and all outliers).  The class
    means and covariances are drawn per call, so training and test must come from one call.
``example2`` (Table 2, ``γ = 0.01``)
    The same with :func:`~advgame.datasets.make_prediction_set_example2` (three rings, 100
    features).
``example2_former`` (Table 2 again, the cause check)
    Example 2 with the test set this reproduction used before: 1,000 outliers against 3,000
    class points (outlier share 0.25, half the paper's; see :func:`outlier_share_bounds`).
``digits`` (in place of Table 3's zipcode data, ``γ = 0.01``)
    The vendored optdigits (8x8, 64 features, raw 0-16 scales): classes 0, 6, 8 and 9 are the
    normal classes, the other digits are outliers (label :data:`~advgame.datasets.OUTLIER`).  A
    seeded ``N`` points per normal class are the training part; the other normal points and all
    outliers are the test part.  The published numbers printed beside ours are zipcode's.

Example 1's class parameters (means, covariances) are drawn afresh in every replication, so the
tables average over class geometries.  The paper's standard errors of the set sizes are 4-10
times smaller than that averaging gives (its coverage errors are not), which a single geometry
held fixed over its 200 replications explains; :func:`example1_geometries` (the cause check)
runs every method on ``geometries`` fixed geometries, ``geometry_replications`` replications
each, and :func:`cell_status` counts a Table 1 set-size cell outside one sd as *explained* when
:func:`geometry_explains` finds the paper's value within the spread of single geometries.

The test part is split at random into an unlabelled part (``M`` points), which GPS, GPSKFS and
BSVM use in training (the paper trains on a subset of the test data), and an evaluation part (the
rest), on which alone the metrics are computed.

Every method gets split-conformal class thresholds (Wang and Qiao 2022, App. A.3): each class's
training points are split 70/30 at random; the method is fitted on the 70%, its class score is
evaluated on the 30% calibration points, and the threshold is
:func:`~advgame.models.prediction_sets.conformal_threshold` of those scores at ``γ``; the
prediction set is ``{k : score_k(x) >= tau_k}``.  GPS and GPSKFS do this internally
(``calibration=0.3``); the baselines (scikit-learn) use :class:`ConformalBaseline` with the
scores

* KDE (Hechtlinger et al.'s density score): ``KernelDensity`` with a Gaussian kernel and
  Silverman's bandwidth ``h = s (4 / ((d + 2) n))^{1 / (d + 4)}`` on the class's fit points,
  ``s`` the root mean column variance; score ``score_samples`` (log density);
* OCSVM: ``OneClassSVM(nu=γ)`` per class (App. A.3 sets ``nu`` to ``γ``); score
  ``decision_function``;
* BSVM: ``SVC(kernel='rbf')``, class-k fit points (label 1) against the unlabelled part
  (label 0); score ``decision_function``;
* BCOPS-RF (Guan and Tibshirani 2022, with a random forest as Wang and Qiao use it):
  ``RandomForestClassifier`` of the class-k fit points (1) against the unlabelled part (0),
  :data:`BCOPS_TREES` trees; score ``predict_proba`` of the class (:func:`bcops_rf_scorer`);

with the RBF width of the two SVMs from
:func:`~advgame.models.prediction_sets.median_heuristic_gamma` on the class's fit points and
the unlabelled part.  All methods are tuned as App. A.3 says, by the set size on held-out data
and without touching the calibration points: GPS and GPSKFS by the estimator's defaults (width
and ``C`` per class; GPSKFS also its selected features), the baselines by
:class:`ConformalBaseline` over :data:`BASELINE_GRIDS` (the same width factors around the rules'
values; BSVM's ``C`` in 0.1, 1, 10; BCOPS-RF's ``min_samples_leaf`` in 2, 4, 6).  Wang and
Qiao's BCOPS-RF grid (App. A.3) also crosses ``max_depth`` 10-100, ``min_samples_split`` 2, 5,
10 and 50-200 trees (270 forests per class), which would cost more than all the other columns
together; here ``min_samples_split`` is left at 2 (a leaf of ``l`` points already needs ``2 l``
to split), the trees are not tuned, and the depth is unbounded: depths 30-100 never bind (on a
class against ``M = 500`` points of Examples 1-2 the trees stop at depth 9-21, median 12-16,
for these leaf sizes), but the paper's shallower candidates 10 and 20 are not tried.

Metrics (:func:`advgame.metrics.prediction_set_metrics`): coverage per class, cardinality,
conditional cardinality (non-outliers) and outlier detection rate; the report gives the mean and
standard error (sd / sqrt(replications)) over replications beside the published mean (standard
error) over 200 replications, and says per method and class whether the mean coverage meets
``1 - γ`` within sampling error (``mean >= 1 - γ - 2 SE``).  A method whose sets are all-or-nothing
(cardinality 0 or ``K`` in every replication, as a scorer that ignores its input gives) is
flagged ``degenerate``.

Timings: (a) one class's dual QP (Wang and Qiao 2022, Eq. 7; RBF, median width) built by
:func:`~advgame.models.prediction_sets.class_dual_program` from Example 1 (``n_k`` class points
against ``m`` mixed test points) and solved by HiGHS and by cvxpy, once each; (b)
``GeneralizedPredictionSet.fit`` on an Example 1 training draw with ``n_jobs=1`` and
``n_jobs=2``, median of :data:`FIT_REPEATS` each, and the speed-up.

Sizes (:data:`FULL`): 20 replications; Example 1 ``N = 300`` per class (210 fitted, 90
calibration), 1,000 test points per class and 1,295 outliers; Example 2 ``N = 340`` (102
calibration points, the fewest with which ``γ = 0.01`` has a conformal rank ``>= 1``), 1,000
test points per class and 3,348 outliers; digits ``N = 340`` per class (about 215 test points
per class and 3,392 outliers); ``M = 500`` unlabelled points everywhere; the fixed-geometry
check 4 geometries x 5 replications of Example 1; timing (a) at
``n_k = 500, m = 1000``.  The paper does not give its simulations' test sizes, but its tables
fix their outlier shares (:func:`paper_outlier_share`: 0.2443-0.2448 in Table 1, 0.5274 in
Table 2); the outlier counts above give those shares (0.2446, 0.5274).  The unlabelled part is
drawn from the test part, so it has the same share, and the share drives every method's tuning
(the held-out acceptance of unlabelled points) and GPS's QP.  :data:`QUICK` (2 replications,
small sizes) took 7 minutes while other jobs kept the 2 cores at load average 20 (the former
quick run, without BCOPS-RF and the sensitivity study, took about 30 s on the idle machine).
"""

import statistics
import time
import warnings
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace

import numpy as np
from scipy.spatial.distance import pdist
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.neighbors import KernelDensity
from sklearn.svm import SVC, OneClassSVM
from threadpoolctl import threadpool_limits

from ..benchmarks.protocol import Progress, over
from ..benchmarks.report import publish, report_header, run_meta
from ..datasets import OUTLIER, load, make_prediction_set_example1, make_prediction_set_example2
from ..metrics import prediction_set_metrics
from ..models import prediction_sets as _gps
from ..models.prediction_sets import (
    TUNING_FRACTION,
    WIDTH_FACTORS,
    GeneralizedPredictionSet,
    calibration_size,
    class_dual_program,
    conformal_threshold,
    held_out_acceptance,
    median_heuristic_gamma,
    solve_class_dual,
    tuning_split,
)

__all__ = [
    "run",
    "Settings",
    "FULL",
    "QUICK",
    "METHODS",
    "EXPERIMENTS",
    "SCORERS",
    "ConformalBaseline",
    "PAPER",
]

#: Replication ``r`` is seeded by ``SEED + r``.
SEED = 0
#: Columns of the tables, in the paper's order.
METHODS = ("KDE", "OCSVM", "BSVM", "BCOPS-RF", "GPS", "GPSKFS")
#: Share of each class's training points held out to calibrate its threshold (Wang and Qiao 2022,
#: App. A.3).
CALIBRATION = 0.3
#: Processes per GPS fit (classes are independent QPs; this machine class has 2 cores).
N_JOBS = 2
#: BLAS threads in the main process during the run (see :func:`run`).
BLAS_THREADS = 1
#: Solvers timed on one class's dual QP: advgame's interior point, HiGHS' QP, cvxpy (Clarabel).
QP_BACKENDS = ("ipm", "highs", "cvxpy")
#: Repeats of each GPS fit timing (the median is reported).
FIT_REPEATS = 3
#: Trees of each BCOPS-RF forest: the smallest of Wang and Qiao's (2022, App. A.3) grid {50, 150,
#: 200}, not tuned (more trees only average out the forest's own randomness, at 3-4 times the
#: cost of the whole column).
BCOPS_TREES = 50
#: Normal classes of the digits experiment (the zipcode protocol of Wang and Qiao 2022); the rest
#: are outliers.
DIGITS_CLASSES = (0, 6, 8, 9)
#: (name, γ, table title).
EXPERIMENTS = (
    ("example1", 0.05, "Example 1 (Wang and Qiao (2022) Table 1)"),
    ("example2", 0.01, "Example 2 (Wang and Qiao (2022) Table 2)"),
    (
        "digits",
        0.01,
        "optdigits 0/6/8/9 vs the rest (paper: zipcode, Wang and Qiao (2022) Table 3)",
    ),
    (
        "example2_former",
        0.01,
        "Example 2 with this reproduction's former test set (outlier share 0.25, not the "
        "paper's 0.527; the cause check)",
    ),
)
#: Experiment -> the paper's table it is compared with.
PAPER_TABLE = {"example1": "example1", "example2": "example2", "digits": "digits",
               "example2_former": "example2"}  # fmt: skip


@dataclass(frozen=True)
class Settings:
    """Replications and sizes; ``*_train`` per class, ``*_test`` per class in the test part."""

    replications: int
    example1_train: int
    example1_test: int
    example1_outliers: int
    example2_train: int
    example2_test: int
    example2_outliers: int
    example2_former_outliers: int
    digits_train: int
    unlabeled: int
    qp_class: int
    qp_unlabeled: int
    geometries: int
    geometry_replications: int


FULL = Settings(
    replications=20,
    example1_train=300,
    example1_test=1000,
    example1_outliers=1295,
    example2_train=340,
    example2_test=1000,
    example2_outliers=3348,
    example2_former_outliers=1000,
    digits_train=340,
    unlabeled=500,
    qp_class=500,
    qp_unlabeled=1000,
    geometries=4,
    geometry_replications=5,
)
# example2_train and digits_train stay at 340 in QUICK: γ = 0.01 needs >= 99 calibration points
QUICK = Settings(
    replications=2,
    example1_train=100,
    example1_test=150,
    example1_outliers=194,
    example2_train=340,
    example2_test=100,
    example2_outliers=335,
    example2_former_outliers=100,
    digits_train=340,
    unlabeled=100,
    qp_class=50,
    qp_unlabeled=100,
    geometries=2,
    geometry_replications=2,
)

# Wang and Qiao (2022), Tables 1-3 (200 replications): per row, (mean, standard error) for KDE,
# OCSVM, BSVM, BCOPS-RF, GPS, GPSKFS (:data:`METHODS`).  Transcribed from the OCR'd copy; the cells in
# PAPER_DOUBTFUL were garbled there (dropped decimal points, 9 read as 0) and are the reading most
# consistent with the text ("all methods ... at least 95%") and with card = (1 - outlier share)
# cond. card.
PAPER = {
    "example1": {
        "coverage": (
            ((0.963432, 0.001161), (0.964854, 0.000852), (0.962592, 0.001013),
             (0.9601, 0.000926), (0.959798, 0.001155), (0.954419, 0.001283)),
            ((0.95531, 0.001139), (0.954323, 0.001054), (0.966999, 0.000874),
             (0.966385, 0.000941), (0.957702, 0.000931), (0.953851, 0.001021)),
            ((0.95395, 0.001079), (0.963451, 0.000816), (0.960052, 0.000807),
             (0.95673, 0.0011), (0.950188, 0.000976), (0.954885, 0.001104)),
            ((0.952608, 0.001166), (0.961199, 0.000866), (0.961176, 0.001049),
             (0.962935, 0.001001), (0.956328, 0.001053), (0.952011, 0.001275)),
        ),
        "cardinality": ((1.220944, 0.002731), (1.180821, 0.002715), (1.024036, 0.006351),
                        (1.072269, 0.003577), (0.97462, 0.001868), (0.967706, 0.002969)),
        "conditional_cardinality": ((1.620047, 0.003604), (1.562107, 0.003602), (1.334975, 0.005168),
                                    (1.341478, 0.002621), (1.288988, 0.002285), (1.277959, 0.003488)),
        "detection_rate": ((0.976643, 0.001415), (0.998787, 0.000234), (0.938637, 0.010971),
                           (0.767202, 0.008296), (0.998224, 0.000381), (0.991713, 0.003438)),
    },
    "example2": {
        "coverage": (
            ((0.987115, 0.000807), (0.976428, 0.000959), (0.989296, 0.000858),
             (0.986973, 0.0009), (0.981963, 0.000926), (0.979427, 0.000936)),
            ((0.990974, 0.000561), (0.993547, 0.000353), (0.992637, 0.000573),
             (0.994336, 0.000562), (0.992854, 0.000419), (0.994052, 0.000551)),
            ((0.988043, 0.000668), (0.988007, 0.000546), (0.987811, 0.000774),
             (0.993519, 0.000533), (0.983814, 0.000703), (0.989801, 0.00061)),
        ),
        "cardinality": ((1.742601, 0.003386), (1.080905, 0.002137), (1.163262, 0.00892),
                        (1.794714, 0.011305), (1.042262, 0.002198), (0.623107, 0.001649)),
        "conditional_cardinality": ((2.654633, 0.002671), (2.274483, 0.002598), (2.271912, 0.006102),
                                    (2.483697, 0.007604), (2.179741, 0.002661), (1.31847, 0.002458)),
        "detection_rate": ((0.333359, 0.002913), (0.988376, 0.00045), (0.832284, 0.018087),
                           (0.263899, 0.00695), (0.976481, 0.001266), (1.0, 0.0)),
    },
    "digits": {  # zipcode (16x16, 256 features), not optdigits
        "coverage": (
            ((0.991117, 0.000361), (0.990761, 0.000319), (0.993457, 0.000357),
             (0.995633, 0.000257), (0.990907, 0.000376), (0.986328, 0.000393)),
            ((0.991915, 0.000543), (0.989583, 0.000436), (0.990241, 0.000481),
             (0.986156, 0.000518), (0.987301, 0.000552), (0.982399, 0.000588)),
            ((0.987302, 0.000664), (0.982153, 0.000782), (0.985098, 0.000736),
             (0.984648, 0.000698), (0.981102, 0.000788), (0.969517, 0.000833)),
            ((0.994114, 0.000258), (0.99707, 0.000222), (0.992739, 0.000312),
             (0.992456, 0.000408), (0.990116, 0.000366), (0.985439, 0.000515)),
        ),
        "cardinality": ((2.71731, 0.01002), (2.332223, 0.016826), (0.682202, 0.012149),
                        (0.899256, 0.0103), (0.621457, 0.009297), (0.520096, 0.005579)),
        "conditional_cardinality": ((2.694657, 0.010393), (2.41925, 0.014163), (1.368261, 0.013598),
                                    (1.473345, 0.009692), (1.262108, 0.00936), (1.14894, 0.005256)),
        "detection_rate": ((0.032493, 0.000744), (0.082452, 0.002549), (0.628362, 0.007725),
                           (0.469479, 0.005752), (0.646673, 0.007275), (0.716897, 0.004804)),
    },
}  # fmt: skip
#: Paper cells whose OCR was garbled: (experiment, metric, class index or None, method).
PAPER_DOUBTFUL = {
    ("example1", "coverage", 1, "KDE"),
    ("example1", "coverage", 1, "OCSVM"),
    ("example1", "coverage", 2, "KDE"),
    ("example1", "conditional_cardinality", None, "KDE"),
    ("example2", "coverage", 1, "BSVM"),
    ("example2", "coverage", 2, "OCSVM"),
}
_PAPER_METHODS = ("KDE", "OCSVM", "BSVM", "BCOPS-RF", "GPS", "GPSKFS")
_SIZE_KEYS = ("cardinality", "conditional_cardinality", "detection_rate")


# ------------------------------------------------------------------- the paper's test sets
def outlier_share_bounds(cardinality, conditional_cardinality, detection_rate, n_classes):
    r"""The share ``p`` of outliers in a test set, bounded from its published set sizes.

    Over all test points the mean set size is ``card = (1 - p) cond + p s``, with ``cond`` the
    mean over the normal points and ``s`` the mean over the outliers.  A detected outlier has an
    empty set and one that is not has 1 to ``K`` classes, so ``1 - det <= s <= K (1 - det)``;
    solving for ``p``, ``p = (card - cond) / (s - cond)`` is monotone in ``s``, and the bounds
    are its values at the two ends of ``s`` (an end with no positive solution bounds nothing:
    1), intersected with ``[0, 1]``.  With ``det = 1`` they meet.  Wang and Qiao (2022) do not
    state their simulations' test-set sizes; their tables fix this share
    (:func:`paper_outlier_share`).

    Returns ``(low, high)``; raises ``ValueError`` if no share in ``[0, 1]`` fits.
    """
    values = (cardinality, conditional_cardinality, detection_rate)
    if not all(np.isfinite(values)) or not 0 <= detection_rate <= 1:
        raise ValueError(
            f"set sizes must be finite and the detection rate in [0, 1]; got {values}."
        )
    if not (0 <= cardinality <= n_classes and 0 <= conditional_cardinality <= n_classes):
        raise ValueError(
            f"mean set sizes must lie in [0, n_classes={n_classes}]; got {cardinality}, "
            f"{conditional_cardinality}."
        )
    gap = cardinality - conditional_cardinality
    sizes = (
        np.array([1 - detection_rate, n_classes * (1 - detection_rate)]) - conditional_cardinality
    )
    if gap == 0:  # any share whose outliers average cond classes, or none
        return (0.0, 1.0) if sizes[0] <= 0 <= sizes[1] else (0.0, 0.0)
    with np.errstate(divide="ignore"):
        shares = np.where(gap * sizes > 0, gap / sizes, 1.0)
    low, high = min(shares.min(), 1.0), min(shares.max(), 1.0)
    if np.all(gap * sizes <= 0) or low > 1:
        raise ValueError(
            f"no outlier share in [0, 1] gives cardinality {cardinality} with conditional "
            f"cardinality {conditional_cardinality} and detection rate {detection_rate}."
        )
    return float(low), float(high)


def paper_outlier_share(experiment):
    """The outlier share of the test data of Wang and Qiao's (2022) ``experiment``: the
    narrowest :func:`outlier_share_bounds` of its table's methods (published means; a method
    with a garbled cardinality cell, :data:`PAPER_DOUBTFUL`, is skipped).  The other methods'
    bounds agree with it up to the tables' six-digit rounding.  Returns ``(low, high)``."""
    table = PAPER[experiment]
    bounds = [
        outlier_share_bounds(card[0], cond[0], det[0], len(table["coverage"]))
        for method, card, cond, det in zip(
            _PAPER_METHODS,
            table["cardinality"],
            table["conditional_cardinality"],
            table["detection_rate"],
        )
        if not any((experiment, key, None, method) in PAPER_DOUBTFUL for key in _SIZE_KEYS)
    ]
    return min(bounds, key=lambda b: b[1] - b[0])


# ----------------------------------------------------------------------------- baselines
def silverman_bandwidth(X):
    """Silverman's rule ``s (4 / ((d + 2) n))^{1 / (d + 4)}`` for an isotropic Gaussian kernel,
    with ``s`` the root mean column variance of ``X`` (n, d)."""
    n, d = X.shape
    scale = float(np.sqrt(np.mean(np.var(X, axis=0, ddof=1))))
    return scale * (4.0 / ((d + 2) * n)) ** (1.0 / (d + 4))


def kde_scorer(X_fit, X_unlabeled, error_rate, params, random_state):
    """Log density of a Gaussian KDE of the class (Hechtlinger et al.); ignores the unlabelled.
    ``params = (factor, _)``: the bandwidth is Silverman's divided by ``sqrt(factor)``, so the
    factor scales the kernel's ``1 / (2 h^2)`` as it scales the SVMs' width."""
    bandwidth = silverman_bandwidth(X_fit) / np.sqrt(params[0])
    return KernelDensity(kernel="gaussian", bandwidth=bandwidth).fit(X_fit).score_samples


def ocsvm_scorer(X_fit, X_unlabeled, error_rate, params, random_state):
    """One-class SVM of the class with ``nu = γ`` (App. A.3) and ``params[0]`` times the
    median-heuristic RBF width."""
    width = params[0] * median_heuristic_gamma(np.vstack([X_fit, X_unlabeled]), random_state)
    return OneClassSVM(nu=error_rate, gamma=width).fit(X_fit).decision_function


def bsvm_scorer(X_fit, X_unlabeled, error_rate, params, random_state):
    """Binary RBF SVM of the class (1) against the unlabelled points (0), ``params = (width
    factor, C)``."""
    X = np.vstack([X_fit, X_unlabeled])
    width = params[0] * median_heuristic_gamma(X, random_state)
    y = np.concatenate([np.ones(X_fit.shape[0]), np.zeros(X_unlabeled.shape[0])])
    return SVC(kernel="rbf", gamma=width, C=params[1]).fit(X, y).decision_function


def bcops_rf_scorer(X_fit, X_unlabeled, error_rate, params, random_state):
    """BCOPS with a random forest (Guan and Tibshirani, "Prediction and outlier detection in
    classification problems", 2022): a classifier of the class's ``n_k`` points (1) against the
    ``m`` unlabelled points (0) estimates ``n_k f_k(x) / (n_k f_k(x) + m f_te(x))``, increasing
    in the density ratio ``f_k / f_te`` whose upper level sets are BCOPS's acceptance regions;
    the score is the forest's predicted probability of the class.  ``params =
    (min_samples_leaf, n_estimators)``."""
    X = np.vstack([X_fit, X_unlabeled])
    y = np.concatenate([np.ones(X_fit.shape[0]), np.zeros(X_unlabeled.shape[0])])
    leaf, trees = params
    forest = RandomForestClassifier(
        n_estimators=trees, min_samples_leaf=leaf, random_state=random_state, n_jobs=1
    ).fit(X, y)
    return lambda X_new: forest.predict_proba(X_new)[:, 1]


#: Baseline name -> ``scorer(X_fit, X_unlabeled, γ, params, seed)`` returning ``score(X) -> (n,)``.
SCORERS = {
    "KDE": kde_scorer,
    "OCSVM": ocsvm_scorer,
    "BSVM": bsvm_scorer,
    "BCOPS-RF": bcops_rf_scorer,
}
#: Baseline name -> candidate ``params``, tuned like GPS's width and C (Wang and Qiao 2022, App.
#: A.3): the same width factors; BSVM's ``C`` over App. A.3's decades around 1.
BASELINE_GRIDS = {
    "KDE": [(f, None) for f in WIDTH_FACTORS],
    "OCSVM": [(f, None) for f in WIDTH_FACTORS],
    "BSVM": [(f, C) for f in WIDTH_FACTORS for C in (0.1, 1.0, 10.0)],
    "BCOPS-RF": [(leaf, BCOPS_TREES) for leaf in (2, 4, 6)],
}


class ConformalBaseline:
    """A per-class score made a prediction set by split-conformal thresholds (Wang and Qiao 2022, App. A.3).

    The same rules as :class:`~advgame.GeneralizedPredictionSet`: per class a seeded ``n_cal =
    min(max(floor(calibration n_k), 1), n_k - 1)`` points are held out for the threshold; on the
    rest, the scorer's parameters are chosen from :data:`BASELINE_GRIDS` by the smallest
    acceptance rate of held-out unlabelled points (``TUNING_FRACTION`` of the fitting points and
    of the unlabelled points held out, each candidate thresholded at the empirical ``γ``-quantile
    of its held-out class scores), the scorer is refitted on all fitting points, and ``tau_k`` is
    the conformal threshold of the calibration scores; the set is ``{k : score_k(x) >= tau_k}``.

    Parameters
    ----------
    method : {'KDE', 'OCSVM', 'BSVM', 'BCOPS-RF'}
        Key of :data:`SCORERS` (looked up at fit time, so tests can replace a scorer).
    error_rate : float
        ``γ``.
    calibration : float, default=CALIBRATION
    random_state : int or None
        Seeds the splits and the median-heuristic subsample.
    """

    def __init__(self, method, error_rate, calibration=CALIBRATION, random_state=None):
        self.method = method
        self.error_rate = error_rate
        self.calibration = calibration
        self.random_state = random_state

    def _tuned(self, X_fit, X_unlabeled, rng):
        """The grid's parameters with the smallest held-out acceptance rate (the estimator's
        criterion, :func:`~advgame.models.prediction_sets.held_out_acceptance`)."""
        scorer, grid = SCORERS[self.method], BASELINE_GRIDS[self.method]
        class_fit, class_held, unlabeled_fit, unlabeled_held = tuning_split(
            X_fit.shape[0], X_unlabeled.shape[0], TUNING_FRACTION, rng
        )
        acceptance = []
        for params in grid:
            score = scorer(
                X_fit[class_fit], X_unlabeled[unlabeled_fit], self.error_rate, params, SEED
            )
            acceptance.append(
                held_out_acceptance(
                    score(X_fit[class_held]), score(X_unlabeled[unlabeled_held]), self.error_rate
                )
            )
        return grid[int(np.argmin(acceptance))]

    def fit(self, X, y, X_unlabeled):
        rng = np.random.default_rng(self.random_state)
        self.classes_ = np.unique(y)
        self.scorers_, self.params_, thresholds = [], [], []
        for label in self.classes_:
            rows = rng.permutation(np.flatnonzero(y == label))
            n_cal = calibration_size(rows.size, self.calibration)
            X_fit = X[rows[n_cal:]]
            params = self._tuned(X_fit, X_unlabeled, rng)
            # an int seed: median_heuristic_gamma's subsample, as GPS's
            seed = int(rng.integers(2**31))
            score = SCORERS[self.method](X_fit, X_unlabeled, self.error_rate, params, seed)
            thresholds.append(conformal_threshold(score(X[rows[:n_cal]]), self.error_rate))
            self.scorers_.append(score)
            self.params_.append(params)
        self.thresholds_ = np.array(thresholds)
        return self

    def decision_function(self, X):
        """``score_k(x) - tau_k`` per class, shape ``(n_samples, n_classes)``."""
        return np.column_stack([score(X) for score in self.scorers_]) - self.thresholds_

    def predict_set(self, X):
        return self.decision_function(X) >= 0


def make_method(method, error_rate, seed):
    """The estimator of one column: :class:`ConformalBaseline` or GPS(KFS)."""
    if method in SCORERS:
        return ConformalBaseline(method, error_rate, random_state=seed)
    extra = {"feature_selection": True} if method == "GPSKFS" else {}
    return GeneralizedPredictionSet(
        error_rate=error_rate,
        calibration=CALIBRATION,
        n_jobs=N_JOBS,
        random_state=seed,
        **extra,
    )


# ---------------------------------------------------------------------------------- data
def _split_test(X, y, train, rng, settings):
    """Training part ``train``; the rest split into unlabelled (M) and evaluation parts."""
    test = rng.permutation(np.setdiff1d(np.arange(y.size), train))
    if settings.unlabeled >= test.size:
        raise ValueError(
            f"M = {settings.unlabeled} unlabelled points leave no evaluation points: the test "
            f"part has {test.size}; expected M < {test.size}."
        )
    unlabeled, evaluation = test[: settings.unlabeled], test[settings.unlabeled :]
    return X[train], y[train], X[unlabeled], X[evaluation], y[evaluation]


def _first_per_class(y, n):
    """The first ``n`` rows of every normal class (the generators draw rows i.i.d.)."""
    labels = np.unique(y[y != OUTLIER])
    return np.concatenate([np.flatnonzero(y == label)[:n] for label in labels])


def experiment_data(name, settings, rng, digits=None, class_state=None):
    """``(X_train, y_train, X_unlabeled, X_eval, y_eval)`` of one replication; ``class_state``
    (Example 1 only) fixes the class parameters, else they are drawn from ``rng``."""
    if class_state is not None and PAPER_TABLE.get(name) != "example1":
        raise ValueError(
            f"class_state fixes Example 1's class parameters; experiment {name!r} has none "
            "(expected class_state=None)."
        )
    if name != "digits":
        table = PAPER_TABLE[name]
        generate = (
            make_prediction_set_example1 if table == "example1" else make_prediction_set_example2
        )
        n_train = getattr(settings, f"{table}_train")
        fixed = {} if class_state is None else {"class_state": class_state}
        X, y = generate(
            n_per_class=n_train + getattr(settings, f"{table}_test"),
            n_outliers=getattr(settings, f"{name}_outliers"),
            random_state=rng,
            **fixed,
        )
        return _split_test(X, y, _first_per_class(y, n_train), rng, settings)
    X, y = digits
    train = np.concatenate(
        [
            rng.choice(np.flatnonzero(y == c), settings.digits_train, replace=False)
            for c in DIGITS_CLASSES
        ]
    )
    return _split_test(X, y, np.sort(train), rng, settings)


def _digits():
    data = load("multiclass/optdigits")
    y = np.where(np.isin(data.y, DIGITS_CLASSES), data.y, OUTLIER)
    return data.X, y


# --------------------------------------------------------------------------------- tables
def run_tables(settings, progress, methods=None):
    """Per (experiment, method): metrics of every replication, summarised (``progress``: a
    :class:`advgame.benchmarks.protocol.Progress`, or a line callback).  Returns records."""
    methods = METHODS if methods is None else methods
    digits = _digits() if any(e == "digits" for e, _, _ in EXPERIMENTS) else None
    raw = {(e, m): [] for e, _, _ in EXPERIMENTS for m in methods}
    seconds = dict.fromkeys(raw, 0.0)
    for r in over(progress, range(settings.replications), "replication"):
        rng = np.random.default_rng(SEED + r)
        for e, gamma, _ in EXPERIMENTS:
            progress(f"replication {r + 1}/{settings.replications}: {e}")
            X, y, U, X_eval, y_eval = experiment_data(e, settings, rng, digits)
            seed = int(rng.integers(2**31))
            for m in methods:
                start = time.perf_counter()
                model = make_method(m, gamma, seed).fit(X, y, X_unlabeled=U)
                sets = model.predict_set(X_eval)
                seconds[e, m] += time.perf_counter() - start
                raw[e, m].append(prediction_set_metrics(y_eval, sets, model.classes_))
    return [
        _summary(e, gamma, m, raw[e, m], seconds[e, m])
        for e, gamma, _ in EXPERIMENTS
        for m in methods
    ]


def _mean_se(values):
    values = np.asarray(values, dtype=float)
    se = values.std(axis=0, ddof=1) / np.sqrt(len(values)) if len(values) > 1 else 0 * values[0]
    return values.mean(axis=0).tolist(), np.asarray(se).tolist()


def _summary(experiment, gamma, method, metrics, seconds):
    K = len(metrics[0]["coverage"])
    record = {"kind": "table", "experiment": experiment, "method": method, "error_rate": gamma}
    for key in ("coverage", "cardinality", "conditional_cardinality", "detection_rate"):
        record[key], record[f"{key}_se"] = _mean_se([m[key] for m in metrics])
    cardinality = np.array([m["cardinality"] for m in metrics])
    record["meets_coverage"] = [
        bool(mean >= 1 - gamma - 2 * se)
        for mean, se in zip(record["coverage"], record["coverage_se"])
    ]
    # a scorer that ignores its input accepts all classes or none, for every point
    record["degenerate"] = bool(np.all((cardinality == 0) | (cardinality == K)))
    record["replications"] = {key: [float(m[key]) for m in metrics] for key in _SIZE_KEYS}
    record["n_classes"] = K
    record["seconds_per_replication"] = seconds / len(metrics)
    return record


# --------------------------------------------------------------------- Example 2 causes
#: Percentiles of the pairwise distances from which Wang and Qiao (2022, App. A.3) pick the
#: RBF width ``sigma`` (their kernel is ``exp(-||x - x'||^2 / sigma^2)``).
PAPER_WIDTH_PERCENTILES = (25, 37.5, 50, 62.5, 75)
#: (label, settings -> changes to them, the paper's width grid?): GPS on Example 2 under each;
#: the first row is the former test set, the second the paper's, the others change one thing
#: more (in :data:`FULL`, M = 1000 and N = 1000).
SENSITIVITY = (
    ("outlier share 0.25 (former)", lambda s: {"example2_outliers": s.example2_former_outliers}, False),
    ("outlier share 0.527 (paper)", lambda s: {}, False),
    ("  and twice the unlabelled (M)", lambda s: {"unlabeled": 2 * s.unlabeled}, False),
    ("  and N = 1000 per class", lambda s: {"example2_train": 1000}, False),
    ("  and the paper's width grid", lambda s: {}, True),
)  # fmt: skip


def percentile_width_factors(X, percentiles=PAPER_WIDTH_PERCENTILES):
    """The paper's width grid as factors of the median heuristic: ``sigma`` at the
    ``percentiles`` of the pairwise distances of ``X`` gives ``gamma = 1 / sigma^2``, which is
    ``median(d)^2 / percentile(d)^2`` times :func:`median_heuristic_gamma`'s ``1 / median(d^2)``
    (the median of ``d^2`` is the square of the median of ``d``)."""
    distances = pdist(X)
    return tuple(float(np.median(distances) ** 2 / np.percentile(distances, q) ** 2)
                 for q in percentiles)  # fmt: skip


@contextmanager
def _gps_width_factors(factors):
    """GPS tuned over ``factors`` of the median-heuristic width while inside (the estimator's
    grid is the module constant ``WIDTH_FACTORS``, not a parameter)."""
    saved = _gps.WIDTH_FACTORS
    _gps.WIDTH_FACTORS = factors
    try:
        yield
    finally:
        _gps.WIDTH_FACTORS = saved


def example2_sensitivity(settings, progress, variants=None):
    """GPS on Example 2 under each of ``variants``: mean (SE) over ``settings.replications`` of
    cardinality, conditional cardinality and detection rate.  Replication ``r`` of every variant
    draws from ``SEED + r`` (paired comparisons).  The paper's width grid is
    :func:`percentile_width_factors` of the replication's training and unlabelled points;
    ``variants`` None means :data:`SENSITIVITY`."""
    records = []
    for label, changes, paper_grid in SENSITIVITY if variants is None else variants:
        varied = replace(settings, **changes(settings))
        metrics = []
        for r in range(settings.replications):
            progress(f"sensitivity {label.strip()}: replication {r + 1}/{settings.replications}")
            rng = np.random.default_rng(SEED + r)
            X, y, U, X_eval, y_eval = experiment_data("example2", varied, rng)
            seed = int(rng.integers(2**31))
            factors = percentile_width_factors(np.vstack([X, U])) if paper_grid else WIDTH_FACTORS
            with _gps_width_factors(factors):
                model = make_method("GPS", 0.01, seed).fit(X, y, X_unlabeled=U)
            metrics.append(
                prediction_set_metrics(y_eval, model.predict_set(X_eval), model.classes_)
            )
        record = {"kind": "sensitivity", "variant": label, "settings": asdict(varied)}
        for key in _SIZE_KEYS:
            record[key], record[f"{key}_se"] = _mean_se([m[key] for m in metrics])
        records.append(record)
    return records


def _sensitivity_lines(records):
    rows = [r for r in records if r["kind"] == "sensitivity"]
    if not rows:
        return []
    paper = PAPER["example2"]
    column = _PAPER_METHODS.index("GPS")
    lines = [
        "Example 2, GPS: what moves its detection rate (mean (SE) over replications)",
        f"{'':<34}{'cardinality':>18}{'cond. cardinality':>18}{'detection rate':>18}",
    ]
    for r in rows:
        cells = "".join(f"{_fmt(r[key], r[f'{key}_se'], 3):>18}" for key in _SIZE_KEYS)
        lines.append(f"{r['variant']:<34}{cells}")
    cells = "".join(f"{_fmt(*paper[key][column], 3):>18}" for key in _SIZE_KEYS)
    return lines + [f"{'paper (200 replications)':<34}{cells}", ""]


# ----------------------------------------------------------- Example 1: one class geometry
#: Geometry ``g`` of :func:`example1_geometries` draws Example 1's class parameters (means and
#: covariances) from ``GEOMETRY_SEED + g``; its points come from ``SEED + r`` as in the tables.
GEOMETRY_SEED = 1000
#: :func:`geometry_explains`: the share of our replications (each with its own class geometry)
#: that must lie at least as far from our mean as the paper's mean does, ...
GEOMETRY_AS_FAR = 0.1
#: ... and the largest ratio of the metric's sd over replications of one fixed geometry to the
#: paper's sd (a larger one means something other than the geometry spreads our replications).
GEOMETRY_SD_RATIO = 2.0


def example1_geometries(settings, progress, methods=None):
    """Example 1 with its class parameters held fixed (the cause check of the set sizes of
    Wang and Qiao 2022, §5.1 Example 1, Table 1).

    The generator draws the four classes' means and covariances afresh in every call
    (:func:`~advgame.datasets.make_prediction_set_example1`), so every replication of the tables
    has its own class geometry.  For ``settings.geometries`` fixed geometries (seeds
    ``GEOMETRY_SEED + g``), ``settings.geometry_replications`` replications each (points from
    ``SEED + r``) are run through every method of ``methods`` (default :data:`METHODS`).

    Returns one ``kind='geometry'`` record per method with, per metric of ``_SIZE_KEYS``, the
    mean of each geometry (``{key}_means``) and the sd over replications within a geometry,
    pooled over the geometries (``{key}_sd``).
    """
    if settings.geometry_replications < 2:
        raise ValueError(
            f"geometry_replications={settings.geometry_replications}: the sd within a geometry "
            "needs at least 2 replications."
        )
    methods = METHODS if methods is None else methods
    gamma = next(g for e, g, _ in EXPERIMENTS if e == "example1")
    raw = {m: [[] for _ in range(settings.geometries)] for m in methods}
    for g in range(settings.geometries):
        for r in range(settings.geometry_replications):
            progress(
                f"fixed geometry {g + 1}/{settings.geometries}: replication "
                f"{r + 1}/{settings.geometry_replications}"
            )
            rng = np.random.default_rng(SEED + r)
            X, y, U, X_eval, y_eval = experiment_data(
                "example1", settings, rng, class_state=GEOMETRY_SEED + g
            )
            seed = int(rng.integers(2**31))
            for m in methods:
                model = make_method(m, gamma, seed).fit(X, y, X_unlabeled=U)
                sets = model.predict_set(X_eval)
                raw[m][g].append(prediction_set_metrics(y_eval, sets, model.classes_))
    records = []
    for m in methods:
        record = {"kind": "geometry", "method": m}
        for key in _SIZE_KEYS:
            values = np.array([[x[key] for x in runs] for runs in raw[m]])  # (geometry, r)
            record[f"{key}_means"] = values.mean(axis=1).tolist()
            record[f"{key}_sd"] = float(np.sqrt(values.var(axis=1, ddof=1).mean()))
        records.append(record)
    return records


def geometry_explains(values, paper, paper_sd, within_sd):
    """Whether the paper's single class geometry explains the gap between ``paper`` and the
    mean of ``values`` (one replication each, each with its own geometry): at least
    :data:`GEOMETRY_AS_FAR` of the values lie as far from their mean as ``paper`` does (either
    side), and a fixed geometry spreads the metric by at most :data:`GEOMETRY_SD_RATIO` times the
    paper's sd (``within_sd``, from :func:`example1_geometries`, against ``paper_sd``)."""
    values = np.asarray(values, dtype=float)
    gap = abs(paper - values.mean())
    as_far = float(np.mean(np.abs(values - values.mean()) >= gap))
    return as_far >= GEOMETRY_AS_FAR and within_sd <= GEOMETRY_SD_RATIO * paper_sd


def _geometry_lines(records):
    rows = [r for r in records if r["kind"] == "geometry"]
    if not rows:
        return []
    tables = {
        r["method"]: r for r in records if r["kind"] == "table" and r["experiment"] == "example1"
    }
    paper = PAPER["example1"]
    lines = [
        f"Example 1 with one class geometry held fixed ({len(rows[0]['cardinality_means'])} "
        "geometries): sd over replications within a geometry (pooled), the paper's sd "
        "(SE sqrt(200)), our sd over the tables' replications (a geometry each), and the range "
        "of the geometries' means",
        f"{'':<26}" + "".join(f"{r['method']:>19}" for r in rows),
    ]
    for key in _SIZE_KEYS:
        label = key.replace("_", " ")
        within = [f"{r[f'{key}_sd']:.3f}" for r in rows]
        ours = [
            f"{np.std(tables[r['method']]['replications'][key], ddof=1):.3f}"
            if r["method"] in tables
            else "-"
            for r in rows
        ]
        shown = [
            f"{paper[key][_PAPER_METHODS.index(r['method'])][1] * np.sqrt(PAPER_REPLICATIONS):.3f}"
            if r["method"] in _PAPER_METHODS
            else "-"
            for r in rows
        ]
        spread = [f"{min(r[f'{key}_means']):.3f}-{max(r[f'{key}_means']):.3f}" for r in rows]
        lines += [
            f"{label:<26}",
            f"{'  sd, fixed geometry':<26}" + "".join(f"{c:>19}" for c in within),
            f"{'  sd, paper':<26}" + "".join(f"{c:>19}" for c in shown),
            f"{'  sd, a geometry each':<26}" + "".join(f"{c:>19}" for c in ours),
            f"{'  geometries means':<26}" + "".join(f"{c:>19}" for c in spread),
        ]
    return lines + [""]


# -------------------------------------------------------------------------------- timings
def _timed(call):
    start = time.perf_counter()
    result = call()
    return time.perf_counter() - start, result


def time_dual_qp(n_class, n_unlabeled, backends, seed=SEED):
    """Seconds and optimal value of one class's dual QP (Eq. 7) per backend."""
    X, y = make_prediction_set_example1(
        n_per_class=max(n_class, n_unlabeled), n_outliers=n_unlabeled // 4, random_state=seed
    )
    rng = np.random.default_rng(seed)
    cls = X[np.flatnonzero(y == 1)[:n_class]]
    U = X[rng.choice(np.flatnonzero(y != 1), n_unlabeled, replace=False)]
    points = np.vstack([cls, U])
    K = rbf_kernel(points, gamma=median_heuristic_gamma(points, seed))
    program = class_dual_program(
        K[:n_class, :n_class], K[:n_class, n_class:], K[n_class:, n_class:], 0.05, 1 / n_unlabeled
    )
    record = {"kind": "timing", "timing": "dual QP", "n_k": n_class, "m": n_unlabeled}
    for backend in backends:
        if backend == "ipm":
            secs, (*_, objective) = _timed(
                lambda: solve_class_dual(K, n_class, 0.05, 1 / n_unlabeled)
            )
        else:
            secs, solution = _timed(lambda b=backend: program.solve(b))
            objective = solution.objective
        record[f"{backend}_seconds"] = secs
        record[f"{backend}_objective"] = float(objective)
    return record


def time_fit(settings, seed=SEED):
    """Median seconds of GPS fits on an Example 1 training draw with n_jobs = 1 and 2."""
    X, y = make_prediction_set_example1(
        n_per_class=settings.example1_train + settings.example1_test,
        n_outliers=settings.example1_outliers,
        random_state=seed,
    )
    rng = np.random.default_rng(seed)
    X_train, y_train, U, _, _ = _split_test(
        X, y, _first_per_class(y, settings.example1_train), rng, settings
    )
    record = {
        "kind": "timing",
        "timing": "GPS fit",
        "n_per_class": settings.example1_train,
        "m": U.shape[0],
        "repeats": FIT_REPEATS,
    }
    for n_jobs in (1, 2):
        model = GeneralizedPredictionSet(error_rate=0.05, n_jobs=n_jobs, random_state=seed)
        times = [
            _timed(lambda m=model: m.fit(X_train, y_train, X_unlabeled=U))[0]
            for _ in range(FIT_REPEATS)
        ]
        record[f"n_jobs={n_jobs}_seconds"] = statistics.median(times)
    record["speedup"] = record["n_jobs=1_seconds"] / record["n_jobs=2_seconds"]
    return record


# --------------------------------------------------------------------------------- report
def _fmt(mean, se, digits=4):
    return f"{mean:.{digits}f} ({se:.{digits}f})"


def _paper_cell(experiment, metric, k, method):
    if method not in _PAPER_METHODS:
        return "-"
    experiment = PAPER_TABLE[experiment]
    rows = PAPER[experiment][metric]
    if k is not None and k >= len(rows):
        return "-"
    entry = rows[k] if k is not None else rows
    mean, se = entry[_PAPER_METHODS.index(method)]
    flag = "?" if (experiment, metric, k, method) in PAPER_DOUBTFUL else " "
    return _fmt(mean, se) + flag


#: Replications behind the paper's standard errors (its sd is ``SE sqrt(PAPER_REPLICATIONS)``).
PAPER_REPLICATIONS = 200


def _cells(record):
    """``(metric, class index or None, our mean)`` of every cell of a record's column."""
    cells = [("coverage", k, c) for k, c in enumerate(record["coverage"])]
    return cells + [(key, None, record[key]) for key in _SIZE_KEYS]


def cell_status(records):
    """Per paper table, the cells within one sd of the published mean, those explained and
    those outside.

    A cell is within when ``|ours - paper| <= SE sqrt(200)``, the spread of the metric over
    single replications of the paper's protocol (its published standard error times the square
    root of its 200 replications).  An Example 1 set-size cell outside is explained when the
    records hold the fixed-geometry check of its method (:func:`example1_geometries`) and
    :func:`geometry_explains` says the paper's single class geometry accounts for the gap.
    Returns ``{experiment: (within, explained, outside)}``, ``within`` a count, the others lists
    of ``(method, metric, class index or None, ours, paper)``.
    """
    geometry = {r["method"]: r for r in records if r["kind"] == "geometry"}
    status = {}
    for r in records:
        if r["kind"] != "table" or r["method"] not in _PAPER_METHODS:
            continue
        within, explained, outside = status.setdefault(r["experiment"], ([], [], []))
        table, column = PAPER[PAPER_TABLE[r["experiment"]]], _PAPER_METHODS.index(r["method"])
        fixed = geometry.get(r["method"]) if r["experiment"] == "example1" else None
        for metric, k, ours in _cells(r):
            paper, se = (table[metric][k] if k is not None else table[metric])[column]
            cell, sd = (r["method"], metric, k, ours, paper), se * np.sqrt(PAPER_REPLICATIONS)
            if abs(ours - paper) <= sd:
                within.append(cell)
            elif (
                fixed is not None
                and k is None
                and geometry_explains(r["replications"][metric], paper, sd, fixed[f"{metric}_sd"])
            ):
                explained.append(cell)
            else:
                outside.append(cell)
    return {e: (len(w), x, o) for e, (w, x, o) in status.items()}


def _status_lines(records):
    lines = [
        "Cells within one sd of the paper (|ours - paper| <= SE sqrt(200)), explained by the "
        "paper's single class geometry (Example 1, geometry_explains), and outside:"
    ]

    def shown(cells):
        return "; ".join(
            f"{m} {metric}{'' if k is None else f' {k + 1}'} {ours:.3f} vs {paper:.3f}"
            for m, metric, k, ours, paper in cells
        )

    for e, (within, explained, outside) in cell_status(records).items():
        line = f"  {e}: {within} within, {len(explained)} explained, {len(outside)} outside"
        if explained:
            line += f"; explained: {shown(explained)}"
        lines.append(line + (f"; outside: {shown(outside)}" if outside else ""))
    return lines


def _table(experiment, gamma, title, records):
    methods = [r["method"] for r in records]
    width = 19
    paper_label = "zipcode" if experiment == "digits" else "paper"
    lines = [
        f"{title}, γ = {gamma}: mean (standard error) over replications; '{paper_label}' rows: "
        "Wang and Qiao's (2022) published mean (SE) over 200 replications",
        f"{'':<26}" + "".join(f"{m:>{width}}" for m in methods),
    ]
    rows = [(f"coverage class {k + 1}", "coverage", k) for k in range(records[0]["n_classes"])]
    rows += [
        ("cardinality", "cardinality", None),
        ("conditional cardinality", "conditional_cardinality", None),
        ("detection rate", "detection_rate", None),
    ]
    for label, key, k in rows:
        cells = []
        for r in records:
            mean, se = r[key], r[f"{key}_se"]
            cells.append(_fmt(mean[k], se[k]) if k is not None else _fmt(mean, se))
        lines.append(f"{label:<26}" + "".join(f"{c:>{width}} " for c in cells).rstrip())
        shown = [_paper_cell(experiment, key, k, m) for m in methods]
        lines.append(f"{'  ' + paper_label:<26}" + "".join(f"{c:>{width + 1}}" for c in shown))
    meets = [
        "all"
        if all(r["meets_coverage"])
        else "no: class "
        + ",".join(str(k + 1) for k, ok in enumerate(r["meets_coverage"]) if not ok)
        for r in records
    ]
    lines.append(f"{'meets 1-γ within 2 SE':<26}" + "".join(f"{c:>{width}} " for c in meets))
    lines.append(
        f"{'seconds / replication':<26}"
        + "".join(f"{r['seconds_per_replication']:>{width}.2f} " for r in records)
    )
    for r in records:
        if r["degenerate"]:
            lines.append(f"WARNING: {r['method']} is degenerate (sets of size 0 or K only)")
    return lines


def format_report(records, meta, settings):
    lines = [
        report_header(
            "wang_qiao2022",
            meta,
            ("numpy", "scipy", "highspy", "cvxpy"),
            command="advgame reproduce",
        ),
        f"{settings.replications} replications (seed {SEED} + r); split-conformal thresholds "
        f"({CALIBRATION:.0%} of each class held out) for every method; metrics on the evaluation "
        f"part; M = {settings.unlabeled} unlabelled test points; ? = paper cell garbled in the "
        "OCR'd copy.",
        "",
        *_status_lines(records),
        "",
    ]
    tables = [r for r in records if r["kind"] == "table"]
    for e, gamma, title in EXPERIMENTS:
        chosen = [r for r in tables if r["experiment"] == e]
        if chosen:
            lines += _table(e, gamma, title, chosen) + [""]
    lines += _sensitivity_lines(records)
    lines += _geometry_lines(records)
    for r in records:
        if r.get("timing") == "dual QP":
            solved = [b for b in QP_BACKENDS if f"{b}_seconds" in r]
            parts = ", ".join(
                f"{b} {r[f'{b}_seconds']:.2f} s (objective {r[f'{b}_objective']:.10g}"
                + ("" if b == "ipm" else f", {r[f'{b}_seconds'] / r['ipm_seconds']:.1f}x ipm")
                + ")"
                for b in solved
            )
            lines.append(f"dual QP, one class, n_k = {r['n_k']}, m = {r['m']}: {parts}")
        elif r.get("timing") == "GPS fit":
            lines.append(
                f"GPS fit, Example 1, {r['n_per_class']} per class, m = {r['m']} (median of "
                f"{r['repeats']}): n_jobs=1 {r['n_jobs=1_seconds']:.2f} s, n_jobs=2 "
                f"{r['n_jobs=2_seconds']:.2f} s, speed-up {r['speedup']:.2f}x"
            )
    return "\n".join(lines)


def run(quick=False, out=None, print_fn=print, progress=True):
    """Run the tables, the Example 2 sensitivity study (:func:`example2_sensitivity`), the
    Example 1 fixed-geometry check (:func:`example1_geometries`) and the timings, print the
    report, optionally write ``out``.

    Parameters
    ----------
    quick : bool
        :data:`QUICK` (seconds, for tests) instead of :data:`FULL`.
    out : str or Path, optional
        ``.json`` (metadata and records) or ``.md`` (the report).
    print_fn : callable
        Receives the report text; progress goes to stderr.
    progress : bool
        Progress lines and, in a terminal, a bar over the replications; False is quiet.

    Returns
    -------
    list of dict
        One ``kind='table'`` record per (experiment, method), the ``kind='sensitivity'`` and
        ``kind='geometry'`` records of the cause checks and the timing records.
    """
    settings = QUICK if quick else FULL
    meta = run_meta(
        settings=asdict(settings),
        methods=list(METHODS),
        seed=SEED,
        n_jobs=N_JOBS,
        blas_threads=BLAS_THREADS,
    )

    progress = Progress("prediction-sets", progress)

    start = time.perf_counter()
    # One BLAS thread: the parallelism is joblib's (one process per class, whose BLAS loky limits
    # to one thread); a multi-threaded OpenBLAS in the main process competes with the workers and,
    # on a busy 2-core machine, made one 738x738 eigh take 6 s instead of 0.12 s.
    with threadpool_limits(limits=BLAS_THREADS, user_api="blas"):
        records = run_tables(settings, progress)
        records += example2_sensitivity(settings, progress)
        records += example1_geometries(settings, progress)
        progress("timing the dual QP")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # cvxpy may call Clarabel's answer inaccurate
            qp = time_dual_qp(settings.qp_class, settings.qp_unlabeled, QP_BACKENDS)
        records.append(qp)
        progress("timing GPS fits")
        records.append(time_fit(settings))
    meta["seconds"] = time.perf_counter() - start
    report = format_report(records, meta, settings)
    report += f"\nwhole run: {meta['seconds']:.0f} s"
    publish(report, meta, records, out, print_fn)
    return records
