r"""Blondel (2019), "Structured Prediction with Projection Oracles": the experiments of Tables 1,
2, 3, 4, 6 and 7 on vendored data (``advgame reproduce blondel2019``;
``advgame bench projection-losses``).

Protocol (Blondel 2019, §6 and App. B): features standardised on the training part; the data
set's own train/test split when it has one (scene), stratified 75/25 splits for the two rows of
the ordinal benchmark (below), else a random 80/20 split (the test part rounded up,
:func:`test_size`); 25% of the training part held out to choose :math:`\lambda`
(``alpha``) among ten log-spaced values in :math:`[10^{-4}, 10^4]`; the model refitted on the
whole training part with the chosen value and scored on the test part.  The paper reports one
split; this benchmark repeats the protocol over seeded random splits (six in the full run) and
gives the mean and standard deviation, with ``*`` marking the best column and those not
significantly worse (paired Wilcoxon signed-rank test, p >= 0.05) when there are at least
:data:`MIN_SPLITS_FOR_TEST` splits.  Published numbers are printed beside ours.  The full run is
longer than an hour on two cores; :data:`PARTS` splits it into pieces that are not, and the
full run is those pieces (each from its own stream), so either gives the same tables.

``label ranking`` (Tables 1, 2 and 3)
    :class:`advgame.LabelRanker` with every (projection set, decoding set) pair of Tables 1-2, in
    the Euclidean (Table 1) and KL (Table 2) geometries, plus :class:`advgame.AdversarialMatching`
    (the Birkhoff game of Fathony et al. 2018c, not in the paper; ``alpha`` from
    :data:`MATCHING_GRID`).  Table 3 sets B/B beside the permutahedron (:class:`PermutahedronRanker`)
    with a linear model and the polynomial kernels of degree 2 and 3, each in two encodings of the
    ranking: the paper's (§4, each label's rank weight) and its published code's (the label at
    each rank as a number, :func:`order_encoded`), which is what the paper's P/P figures match.
    Metric: the entry-wise Hamming loss between the true and decoded permutation matrices in %, as
    in the tables.  Data: the six vendored label-ranking files of the paper (Cheng, Hühn and
    Hüllermeier's 2009 versions of authorship, glass, iris, vehicle, vowel and wine); the
    matching column is left out on the sets of :data:`MATCHING_SKIPPED`.
``multilabel`` (Tables 6 and 7)
    :class:`advgame.ProjectionClassifier` on yeast (random splits of the paper's sizes,
    :data:`MULTILABEL_TRAIN_ROWS`: the vendored file has no train/test column) and scene (its
    MULAN train/test split, as Table 5 of the paper) with the unit cube and the knapsack polytope (bounds
    ``0 .. ceil(E|Y| + sd|Y|)`` from the training label counts) as projection and decoding sets.
    Metrics: accuracy (1 - Hamming loss, Table 6), micro-averaged and example-based F1 (the paper
    says only "F1"; both are printed); ``alpha`` is chosen on the validation Hamming loss, the
    loss the decoding is calibrated for.
``ordinal`` (Table 4)
    :class:`advgame.ProjectionClassifier` with ``loss='absolute'`` (order-simplex decoding) and the
    projection sets of Table 4, against the median-label baseline and ridge regression rounded
    to the nearest class (``sklearn.linear_model.Ridge``, ``alpha`` chosen the same way).  Metric:
    mean absolute error in classes.  Data: machine CPU and abalone discretised into 5 and 10
    equal-frequency bins (:func:`advgame.datasets.quantile_bins` on the training part, as the data
    notice asks), and two rows of Table 4 of Blondel (2019): the red-wine quality scores and
    Weka's contact lenses (classes in :data:`CONTACT_LENSES_ORDER`, the nominal attributes one-hot
    encoded).  Those two rows come from the ordinal benchmark the paper cites (Gutiérrez et
    al. 2016), whose partitions are stratified 75/25 holdouts: they are split so
    (:data:`BENCHMARK_ORDINAL`, :func:`stratified_splits`).  The evidence: the published
    contact-lenses errors are multiples of 1/6 (six test rows of 24, where 20% gives five), and
    on stratified six-row test parts the median baseline scores the published 0.5 on every
    split (0.53 +- 0.33 on random five-row ones).
"""

import warnings
from dataclasses import dataclass, replace

import numpy as np
from sklearn.linear_model import Ridge
from sklearn.metrics import f1_score
from sklearn.metrics.pairwise import polynomial_kernel
from sklearn.model_selection import StratifiedShuffleSplit
from sklearn.preprocessing import StandardScaler

from ..benchmarks.protocol import Progress, wilcoxon_marks
from ..benchmarks.report import publish, report_header, run_meta
from ..datasets import load, quantile_bins
from ..metrics import permutation_hamming_loss
from ..models.matching import AdversarialMatching
from ..models.projection import LabelRanker, ProjectionClassifier
from ..permutation import ranks_to_matrices

__all__ = [
    "run",
    "Settings",
    "FULL",
    "QUICK",
    "PARTS",
    "RANKING_COLUMNS",
    "PAPER_RANKING",
    "TABLE3_COLUMNS",
    "PAPER_TABLE3",
    "PAPER_ORDINAL",
    "MATCHING_SKIPPED",
    "CONTACT_LENSES_ORDER",
    "BENCHMARK_ORDINAL",
    "BENCHMARK_TEST_FRACTION",
    "stratified_splits",
    "order_encoded",
    "order_decoded",
    "PermutahedronRanker",
    "split_shift",
]

#: Seed of the splits.
SEED = 0
#: Regularisation values tried on the validation part (Blondel 2019, App. B).
GRID = tuple(np.logspace(-4, 4, 10))
TEST_FRACTION, VALIDATION_FRACTION = 0.2, 0.25
#: The ordinal rows of Table 4 from the benchmark of Gutiérrez et al. (2016), split as its
#: partitions are: stratified, :data:`BENCHMARK_TEST_FRACTION` of the rows in test.
BENCHMARK_ORDINAL = ("redwine", "contact-lenses")
BENCHMARK_TEST_FRACTION = 0.25
#: Training rows of the multilabel sets whose vendored file has no train/test column: the MULAN
#: split's sizes (Blondel 2019, Table 5: yeast 1,500 train, 917 test), kept by random splits.
#: Measured (6 splits): 80/20 splits (1,934 training rows) put yeast's example F1 0.9-1.1
#: points above the paper in all four columns (just outside one sd); with 1,500 training rows
#: three of the four are within.
MULTILABEL_TRAIN_ROWS = {"yeast": 1500}
#: Fewer splits than this print no significance marks: with 5 pairs the smallest two-sided
#: exact Wilcoxon p-value is 2 / 2^5 = 0.0625, so nothing could be marked significant.
MIN_SPLITS_FOR_TEST = 6
#: AdversarialMatching's values of alpha: its exact QP takes ~20 s per fit on vehicle, so the
#: full ten-value grid is cut to the decades where the other models' choices fall.
MATCHING_GRID = (1e-3, 1e-2, 1e-1, 1.0)
#: Data sets whose matching column (not in the paper) is not run, and why: its exact QP has
#: ``n k^2`` unknowns, and on vowel (k = 11) one fit takes ~100 s, so the column alone (6 splits
#: x 5 fits) would take about an hour, a part's whole budget.
MATCHING_SKIPPED = {"vowel": "k = 11: the exact QP takes ~100 s a fit, an hour for the column"}

#: (table, column name, projection set, geometry, decoding set); "matching" is the Birkhoff game.
RANKING_COLUMNS = (
    ("Euclidean", "[0,1]/[0,1]", "unit_cube", "euclidean", "unit_cube"),
    ("Euclidean", "row/row", "row_stochastic", "euclidean", "row_stochastic"),
    ("Euclidean", "R/B", "none", "euclidean", "birkhoff"),
    ("Euclidean", "[0,1]/B", "unit_cube", "euclidean", "birkhoff"),
    ("Euclidean", "row/B", "row_stochastic", "euclidean", "birkhoff"),
    ("Euclidean", "B/B", "birkhoff", "euclidean", "birkhoff"),
    ("Euclidean", "matching", None, None, None),
    ("KL", "row/row", "row_stochastic", "kl", "row_stochastic"),
    ("KL", "R+/B", "none", "kl", "birkhoff"),
    ("KL", "[0,1]/B", "unit_cube", "kl", "birkhoff"),
    ("KL", "row/B", "row_stochastic", "kl", "birkhoff"),
    ("KL", "B/B", "birkhoff", "kl", "birkhoff"),
)
#: Blondel (2019), Tables 1 and 2 (Hamming loss %, one split).
PAPER_RANKING = {
    "Euclidean": {
        "authorship": (12.83, 5.62, 5.70, 5.18, 5.70, 5.10, None),
        "glass": (24.35, 5.43, 7.11, 5.68, 5.04, 4.65, None),
        "iris": (27.78, 10.37, 19.26, 4.44, 1.48, 2.96, None),
        "vehicle": (26.36, 7.43, 9.04, 7.57, 6.99, 5.88, None),
        "vowel": (43.71, 9.65, 10.57, 9.56, 9.18, 8.76, None),
        "wine": (10.19, 1.85, 1.23, 1.85, 1.85, 1.85, None),
    },
    "KL": {
        "authorship": (5.84, 5.10, 5.62, 5.84, 5.10),
        "glass": (5.43, 5.81, 5.94, 5.68, 4.65),
        "iris": (11.11, 18.52, 4.44, 1.48, 2.96),
        "vehicle": (7.57, 8.46, 7.43, 7.21, 6.25),
        "vowel": (9.50, 9.40, 9.42, 9.28, 9.17),
        "wine": (4.32, 1.85, 1.85, 1.85, 1.85),
    },
}
#: Table 3 (App. B.1): the permutahedron P (projection and decoding), with a linear model or the
#: polynomial kernel of degree D, beside B/B (Table 1's column).  (column, D or None, encoding):
#: each P column in the two encodings of :class:`PermutahedronRanker`.
TABLE3_COLUMNS = (
    ("P/P ranks", None, "ranks"),
    ("P/P order", None, "order"),
    ("P/P D=2 ranks", 2, "ranks"),
    ("P/P D=2 order", 2, "order"),
    ("P/P D=3 ranks", 3, "ranks"),
    ("P/P D=3 order", 3, "order"),
)
#: L-BFGS iterations of :class:`PermutahedronRanker`: the limit of the paper's published code.
#: The polynomial models, whose kernel features are badly conditioned, often stop there.
MAX_ITER = 500
#: Blondel (2019), Table 3 (Hamming loss %, one split): B/B linear, P/P linear, D=2, D=3, each
#: P/P value repeated under both encodings of ours.
PAPER_TABLE3 = {
    name: (b, p1, p1, p2, p2, p3, p3)
    for name, (b, p1, p2, p3) in {
        "authorship": (5.10, 10.06, 10.50, 8.59),
        "glass": (4.65, 7.49, 7.10, 8.14),
        "iris": (2.96, 27.41, 20.00, 5.93),
        "vehicle": (5.88, 11.62, 8.30, 9.26),
        "vowel": (8.76, 14.35, 11.74, 10.21),
        "wine": (1.85, 8.02, 3.08, 6.79),
    }.items()
}
#: (column, projection set, decoding set) of Tables 6-7 (Euclidean); K = knapsack.
MULTILABEL_COLUMNS = (
    ("[0,1]/[0,1]", "unit_cube", "unit_cube"),
    ("R/K", "none", "knapsack"),
    ("[0,1]/K", "unit_cube", "knapsack"),
    ("K/K", "knapsack", "knapsack"),
)
#: Blondel (2019), the yeast and scene rows of Table 6 (accuracy %) and Table 7 (F1 %).
PAPER_MULTILABEL = {
    "yeast": {"accuracy": (79.75, 79.70, 79.75, 79.71), "F1": (60.24, 60.20, 60.23, 60.06)},
    "scene": {"accuracy": (90.05, 88.34, 89.62, 90.79), "F1": (61.06, 50.33, 58.95, 69.01)},
}
#: (column, projection set) of Table 4, all decoded on the order simplex (O).
ORDINAL_COLUMNS = (("R/O", "none"), ("[0,1]/O", "unit_cube"), ("O/O", "order_simplex"))
#: Blondel (2019), Table 4 (median, ridge, R/O, [0,1]/O, O/O), the rows of the data sets run.
PAPER_ORDINAL = {
    "redwine": (0.66, 0.46, 0.45, 0.46, 0.46),
    "contact-lenses": (0.5, 0.50, 0.33, 0.17, 0.17),
}
#: Contact lenses' classes in order (the UCI codes 3, 2, 1 of the lenses data: none, soft,
#: hard; the mean absolute error is the same in reverse order, and soft is the middle class in
#: either).
CONTACT_LENSES_ORDER = ("none", "soft", "hard")


@dataclass(frozen=True)
class Settings:
    splits: int
    grid: tuple
    matching_grid: tuple
    ranking: tuple
    ranking_columns: tuple
    table3: tuple
    ordinal: tuple
    multilabel: tuple
    multilabel_rows: int | None


FULL = Settings(
    splits=6,
    grid=GRID,
    matching_grid=MATCHING_GRID,
    ranking=("iris", "wine", "vehicle", "authorship", "glass", "vowel"),
    ranking_columns=tuple(column[:2] for column in RANKING_COLUMNS),
    table3=tuple(column for column, _, _ in TABLE3_COLUMNS),
    ordinal=(
        "machinecpu/5",
        "machinecpu/10",
        "abalone/5",
        "abalone/10",
        "redwine",
        "contact-lenses",
    ),
    multilabel=("yeast", "scene"),
    multilabel_rows=None,
)
QUICK = Settings(
    splits=1,
    grid=(1e-2, 1.0),
    matching_grid=(1e-2,),
    ranking=("iris",),
    ranking_columns=tuple(column[:2] for column in RANKING_COLUMNS),
    table3=("P/P ranks", "P/P order"),
    ordinal=("machinecpu/5",),
    multilabel=("yeast",),
    multilabel_rows=300,
)

#: The full run in parts for ``run(settings=PARTS[name])``: Tables 1-2; Table 3 (with its B/B
#: column) on the two small and on the two larger data sets; Tables 1-3 on glass and vowel; the
#: multilabel and ordinal tables.
#: Each part draws its splits and validation parts from its own stream (``SEED``), and the full
#: run is the parts in this order, each reporting the tables of :data:`PART_TABLES`: so the
#: full run prints exactly the tables its parts print (a Table 3 part repeats Table 1's B/B
#: column on its own splits, and that repeat is not a Table 1 of the full run).
PARTS = {
    "tables-1-2": replace(
        FULL,
        ranking=("iris", "wine", "vehicle", "authorship"),
        table3=(),
        multilabel=(),
        ordinal=(),
    ),
    "table-3-small": replace(
        FULL,
        ranking=("iris", "wine"),
        ranking_columns=(("Euclidean", "B/B"),),
        multilabel=(),
        ordinal=(),
    ),
    "table-3-large": replace(
        FULL,
        ranking=("vehicle", "authorship"),
        ranking_columns=(("Euclidean", "B/B"),),
        multilabel=(),
        ordinal=(),
    ),
    "glass-vowel": replace(FULL, ranking=("glass", "vowel"), multilabel=(), ordinal=()),
    "multilabel-ordinal": replace(FULL, ranking=()),
}
#: The tables each part of :data:`PARTS` contributes to the full run.
PART_TABLES = {
    "tables-1-2": ("Euclidean", "KL"),
    "table-3-small": ("Table 3",),
    "table-3-large": ("Table 3",),
    "glass-vowel": ("Euclidean", "KL", "Table 3"),
    "multilabel-ordinal": ("accuracy", "F1", "micro F1", "ordinal"),
}


def test_size(n):
    """Rows in the test part: ``TEST_FRACTION * n`` rounded up.  Blondel's (2019) Hamming losses
    (Tables 1 and 2) are whole multiples of ``100 / (k^2 n_test)`` for this size: iris 30, wine 36,
    vehicle 170, authorship 169, glass 43 test rows (rounding to nearest gives 169, 168 and 42
    for the last three, which the published vehicle, authorship and glass values are not
    multiples of; vowel's 106 rows cannot be told from 105 this way)."""
    return int(np.ceil(TEST_FRACTION * n - 1e-9))


def _splits(n, count, rng):
    """``count`` random (train, test) index pairs with :func:`test_size` rows in test."""
    return [np.split(rng.permutation(n), [n - test_size(n)]) for _ in range(count)]


def stratified_splits(y, count, rng):
    """Stratified train/test splits, as the holdouts of the ordinal benchmark of Gutiérrez et
    al. (2016) from which Blondel (2019) takes the rows of Table 4.

    Each class keeps its share of the rows in both parts (``sklearn``'s
    ``StratifiedShuffleSplit``), with :data:`BENCHMARK_TEST_FRACTION` of the rows in test.

    Parameters
    ----------
    y : ndarray (n,)
        The class of each row.
    count : int
        Number of splits.
    rng : numpy.random.Generator
        Draws the splits' seed (one integer).

    Returns
    -------
    list of (ndarray, ndarray)
        ``count`` pairs of row indices ``(train, test)``.
    """
    seed = int(rng.integers(2**31))
    cv = StratifiedShuffleSplit(count, test_size=BENCHMARK_TEST_FRACTION, random_state=seed)
    return list(cv.split(np.zeros((len(y), 1)), y))


def _standardised(X, train, test):
    scaler = StandardScaler().fit(X[train])
    return scaler.transform(X[train]), scaler.transform(X[test])


def _select_and_refit(make, X, y, loss, grid, rng):
    """The estimator ``make(alpha)`` refitted on ``(X, y)`` with ``alpha`` chosen on a validation
    part of ``(X, y)`` by ``loss(estimator, X, y)`` (lower is better)."""
    order = rng.permutation(len(X))
    cut = int(round(len(X) * (1 - VALIDATION_FRACTION)))
    fit, val = order[:cut], order[cut:]
    scores = [loss(make(a).fit(X[fit], y[fit]), X[val], y[val]) for a in grid]
    return make(grid[int(np.argmin(scores))]).fit(X, y)


# ----------------------------------------------------------------------------- label ranking
def _ranking_model(polytope, geometry, decoding):
    if polytope is None:
        return lambda a: AdversarialMatching(strength=a)
    return lambda a: LabelRanker(
        polytope=polytope, geometry=geometry, decoding=decoding, strength=a
    )


def order_encoded(R):
    r"""Rankings ``R'`` whose permutahedron encoding :math:`k + 1 - R'_p` is :math:`1 + \pi^{-1}(p)`,
    one plus the label (0-based) that ``R`` puts at rank ``p + 1``.

    Blondel (2019), §4, encodes a ranking on the permutahedron by the weight of each label's rank,
    :math:`\varphi(y)_j = w_{R_j}` with :math:`w = (k, \dots, 1)`, and its MAP is "the ranks of
    :math:`\theta`".  The published code of the paper (``projection-losses``, 2019) reads each
    ranking as the labels in order of preference (``y[rank] = label``) and its permutahedron
    encodes ``y`` as itself: the regression target there is the *label index at each rank*, a
    permutation of :math:`0..k-1`, treated as a number.  Training :class:`advgame.LabelRanker`
    on ``order_encoded(R)`` gives that target up to the shift by one (absorbed by the intercept:
    the permutahedron of :math:`w + 1` is that of :math:`w` shifted by :math:`\mathbf 1`).
    """
    R = np.asarray(R)
    return R.shape[1] - np.argsort(R, axis=1)


def order_decoded(R_prime):
    """The rankings (rank of each label, 1 = best) that :func:`order_encoded` maps to ``R_prime``."""
    R_prime = np.asarray(R_prime)
    return np.argsort(R_prime.shape[1] - R_prime, axis=1) + 1


class PermutahedronRanker:
    r"""P/P label ranker of Blondel (2019), Table 3: Euclidean projection onto the permutahedron
    of :math:`w = (k, \dots, 1)` and decoding by sorting, with a linear model or, for ``degree``
    :math:`D`, the polynomial model :math:`g(x) = \sum_i w_i \kappa(x, x_i)`,
    :math:`\kappa(x, x') = (\langle x, x'\rangle + 1)^D` (App. B.1): the kernel values against the
    training inputs are the linear model's features, penalised by
    :math:`\frac{\lambda}{2}\|W\|_F^2` as the paper's objective (§6) writes it.

    ``encoding='ranks'`` is the paper's §4 encoding (each label's rank weight); ``'order'`` is its
    published code's (the label at each rank as a number, :func:`order_encoded`).
    """

    def __init__(self, strength, degree=None, encoding="ranks"):
        if encoding not in ("ranks", "order"):
            raise ValueError(f"encoding must be 'ranks' or 'order'; got {encoding!r}.")
        if degree is not None and (not isinstance(degree, int) or degree < 1):
            raise ValueError(f"degree must be None (linear) or an integer >= 1; got {degree!r}.")
        self.strength, self.degree, self.encoding = strength, degree, encoding

    def _features(self, X):
        if self.degree is None:
            return X
        return polynomial_kernel(X, self.X_fit_, degree=self.degree, gamma=1.0, coef0=1.0)

    def fit(self, X, R):
        self.X_fit_ = np.asarray(X, dtype=np.float64)
        targets = R if self.encoding == "ranks" else order_encoded(R)
        ranker = LabelRanker(polytope="permutahedron", strength=self.strength, max_iter=MAX_ITER)
        self.ranker_ = ranker.fit(self._features(self.X_fit_), targets)
        return self

    def predict(self, X):
        """Rankings ``(n, k)`` (rank of each label, 1 = best)."""
        R = self.ranker_.predict(self._features(X))
        return R if self.encoding == "ranks" else order_decoded(R)

    def predict_matrix(self, X):
        return ranks_to_matrices(self.predict(X))


def _ranking_loss(estimator, X, R):
    return 100.0 * permutation_hamming_loss(R, estimator.predict_matrix(X))


def label_ranking(settings, rng, progress):
    """Mean/std Hamming loss (%) per (table, data set, column): Tables 1, 2 and 3 (B/B from
    Table 1's run, the P/P columns of :data:`TABLE3_COLUMNS` named in ``settings.table3``)."""
    records = []
    columns = [c for c in RANKING_COLUMNS if c[:2] in settings.ranking_columns]
    table3 = [c for c in TABLE3_COLUMNS if c[0] in settings.table3]
    for name in settings.ranking:
        data = load(f"label_ranking/{name}")
        run_here = [c for c in columns if not (c[2] is None and name in MATCHING_SKIPPED)]
        table = {column[:2]: [] for column in run_here}
        table |= {("Table 3", column): [] for column, _, _ in table3}
        splits = _splits(len(data.y), settings.splits, rng)
        for s, (train, test) in enumerate(progress.bar(splits, "split"), 1):
            progress(f"label ranking {name}: split {s}/{settings.splits}")
            X_train, X_test = _standardised(data.X, train, test)
            for geometry_table, column, polytope, geometry, decoding in run_here:
                make = _ranking_model(polytope, geometry, decoding)
                grid = settings.grid if polytope is not None else settings.matching_grid
                model = _select_and_refit(make, X_train, data.y[train], _ranking_loss, grid, rng)
                table[geometry_table, column].append(_ranking_loss(model, X_test, data.y[test]))
            for column, degree, encoding in table3:

                def make(a, degree=degree, encoding=encoding):
                    return PermutahedronRanker(a, degree, encoding)

                model = _select_and_refit(
                    make, X_train, data.y[train], _ranking_loss, settings.grid, rng
                )
                table["Table 3", column].append(_ranking_loss(model, X_test, data.y[test]))
        for geometry_table in ("Euclidean", "KL", "Table 3"):
            sub = {c: v for (t, c), v in table.items() if t == geometry_table}
            if geometry_table == "Table 3" and sub and ("Euclidean", "B/B") in table:
                sub = {"B/B": table["Euclidean", "B/B"], **sub}  # first, as in the paper
            if sub:
                records.append(_record(geometry_table, name, sub, settings.splits))
    return records


def _record(table, dataset, columns, splits):
    marks = wilcoxon_marks(columns) if splits >= MIN_SPLITS_FOR_TEST else dict.fromkeys(columns, "")
    return {
        "table": table,
        "dataset": dataset,
        "columns": {
            c: (float(np.mean(v)), float(np.std(v, ddof=1)) if len(v) > 1 else 0.0, marks[c])
            for c, v in columns.items()
        },
        "splits": {c: [float(x) for x in v] for c, v in columns.items()},
    }


def split_shift(splits, paper):
    r"""How far a single split moves all columns together, against the paper's offset.

    ``splits`` maps a column to its losses on the same splits (a record's ``"splits"``), ``paper``
    a column to the published value (one split).  With :math:`x_{cs}` the loss of column ``c`` on
    split ``s`` and :math:`\bar x_c` its mean, the split's common shift is
    :math:`d_s = \mathrm{mean}_c (x_{cs} - \bar x_c)` and the paper's is
    :math:`o = \mathrm{mean}_c (p_c - \bar x_c)` over the columns the paper reports.  If ``o``
    lies within the spread of the :math:`d_s`, the paper's one split explains a gap shared by
    every column (all better, or all worse, than our mean).

    Returns ``{"paper": o, "shifts": [d_s], "sd": sd of d_s, "as_far": the share of splits
    with d_s beyond o on its side of zero}``.
    """
    columns = [c for c in splits if paper.get(c) is not None]
    if not columns:
        raise ValueError(f"no column of {sorted(splits)} has a published value in {paper}.")
    x = np.array([splits[c] for c in columns], dtype=np.float64)
    means = x.mean(axis=1)
    shifts = (x - means[:, None]).mean(axis=0)
    offset = float(np.mean([paper[c] for c in columns] - means))
    beyond = shifts <= offset if offset < 0 else shifts >= offset
    return {
        "paper": offset,
        "shifts": [float(d) for d in shifts],
        "sd": float(np.std(shifts, ddof=1)) if len(shifts) > 1 else 0.0,
        "as_far": float(np.mean(beyond)),
    }


# -------------------------------------------------------------------------------- multilabel
def _hamming_percent(estimator, X, Y):
    return 100.0 * float(np.mean(estimator.predict(X) != Y))


def _multilabel_splits(name, data, settings, rng):
    """Features, labels and (train, test) pairs: the authors' split when the file has one
    (scene: Blondel 2019, Table 5 uses it); else ``settings.splits`` random splits with the
    paper's training rows (:data:`MULTILABEL_TRAIN_ROWS`) or, for a set without them or on at
    most ``settings.multilabel_rows`` rows, 80/20 splits."""
    X, Y = data.X, data.y
    if data.split is not None:
        return X, Y, [(np.flatnonzero(data.split == "train"), np.flatnonzero(data.split == "test"))]
    if settings.multilabel_rows is not None:
        keep = rng.permutation(len(Y))[: settings.multilabel_rows]
        X, Y = X[keep], Y[keep]
    elif name in MULTILABEL_TRAIN_ROWS:
        train_rows = MULTILABEL_TRAIN_ROWS[name]
        orders = (rng.permutation(len(Y)) for _ in range(settings.splits))
        return X, Y, [np.split(order, [train_rows]) for order in orders]
    return X, Y, _splits(len(Y), settings.splits, rng)


def multilabel(settings, rng, progress):
    """Accuracy and F1 (%) per data set and column of Tables 6-7."""
    records = []
    for name in settings.multilabel:
        X, Y, splits = _multilabel_splits(name, load(f"multilabel/{name}"), settings, rng)
        metrics = {
            m: {c[0]: [] for c in MULTILABEL_COLUMNS} for m in ("accuracy", "micro F1", "F1")
        }
        for s, (train, test) in enumerate(progress.bar(splits, "split"), 1):
            progress(f"multilabel {name}: split {s}/{len(splits)}")
            X_train, X_test = _standardised(X, train, test)
            for column, polytope, decoding in MULTILABEL_COLUMNS:

                def make(a, polytope=polytope, decoding=decoding):
                    return ProjectionClassifier(polytope=polytope, decoding=decoding, strength=a)

                model = _select_and_refit(
                    make, X_train, Y[train], _hamming_percent, settings.grid, rng
                )
                predicted, truth = model.predict(X_test), Y[test]
                metrics["accuracy"][column].append(100.0 * float(np.mean(predicted == truth)))
                metrics["micro F1"][column].append(
                    100.0 * f1_score(truth, predicted, average="micro")
                )
                metrics["F1"][column].append(
                    100.0 * f1_score(truth, predicted, average="samples", zero_division=0.0)
                )
        # higher is better for all three: mark on the negated values
        for metric, columns in metrics.items():
            record = _record(
                metric, name, {c: [-v for v in vs] for c, vs in columns.items()}, len(splits)
            )
            record["columns"] = {c: (-m, sd, k) for c, (m, sd, k) in record["columns"].items()}
            record["splits"] = columns
            records.append(record)
    return records


# ----------------------------------------------------------------------------------- ordinal
def _ordinal_data(spec):
    """Features and raw target, the number of bins (None: classes as given)."""
    if spec == "redwine":
        data = load("multiclass/redwine")
        return data.X, data.y.astype(np.float64), None
    if spec == "contact-lenses":
        data = load("multiclass/contact-lenses")
        order = {name: rank for rank, name in enumerate(CONTACT_LENSES_ORDER)}
        return data.X, np.array([order[name] for name in data.y], dtype=np.float64), None
    name, bins = spec.split("/")
    data = load(f"ordinal/{name}")
    return data.X, data.y, int(bins)


def _mae(estimator, X, y):
    return float(np.mean(np.abs(estimator.predict(X) - y)))


class _RoundedRidge:
    """Ridge regression on the class index, rounded to the nearest class (Blondel 2019, Table 4)."""

    def __init__(self, alpha, n_classes):
        self.alpha, self.n_classes = alpha, n_classes

    def fit(self, X, y):
        self.ridge_ = Ridge(alpha=self.alpha).fit(X, y)
        return self

    def predict(self, X):
        return np.clip(np.rint(self.ridge_.predict(X)), 0, self.n_classes - 1)


def ordinal(settings, rng, progress):
    """MAE per data set for the median baseline, rounded ridge and the order-simplex losses."""
    records = []
    for spec in settings.ordinal:
        X, target, bins = _ordinal_data(spec)
        columns = {"median": [], "ridge": [], **{c: [] for c, _ in ORDINAL_COLUMNS}}
        if spec in BENCHMARK_ORDINAL:
            splits = stratified_splits(target, settings.splits, rng)
        else:
            splits = _splits(len(target), settings.splits, rng)
        for s, (train, test) in enumerate(progress.bar(splits, "split"), 1):
            progress(f"ordinal {spec}: split {s}/{settings.splits}")
            if bins is None:
                y = np.searchsorted(np.unique(target), target)
            else:  # bin edges from the training part only
                _, edges = quantile_bins(target[train], bins)
                y = np.digitize(target, edges, right=True)
            k = int(y.max()) + 1
            X_train, X_test = _standardised(X, train, test)
            y_train, y_test = y[train], y[test]
            columns["median"].append(float(np.mean(np.abs(np.median(y_train).round() - y_test))))
            ridge = _select_and_refit(
                lambda a, k=k: _RoundedRidge(a, k), X_train, y_train, _mae, settings.grid, rng
            )
            columns["ridge"].append(_mae(ridge, X_test, y_test))
            for column, polytope in ORDINAL_COLUMNS:

                def make(a, polytope=polytope):
                    return ProjectionClassifier(loss="absolute", polytope=polytope, strength=a)

                model = _select_and_refit(make, X_train, y_train, _mae, settings.grid, rng)
                columns[column].append(_mae(model, X_test, y_test))
        records.append(_record("ordinal", spec, columns, settings.splits))
    return records


# -------------------------------------------------------------------------------------- report
def _cell(mean, sd, mark, digits):
    return f"{mean:.{digits}f}±{sd:.{digits}f}{mark or ' '}"


def _table(title, records, paper, digits):
    """The table's lines: a row per record, ``-`` where a record lacks a column (a column not
    run on that data set, :data:`MATCHING_SKIPPED`), the paper's row under each."""
    columns = list(dict.fromkeys(c for r in records for c in r["columns"]))
    width = max(14, 2 * digits + 8)
    lines = [title, f"{'data':<14}" + "".join(f"{c:>{width}}" for c in columns)]
    for r in records:
        cells = "".join(
            f"{_cell(*r['columns'][c], digits) if c in r['columns'] else '-':>{width}}"
            for c in columns
        )
        lines.append(f"{r['dataset']:<14}{cells}")
        published = paper.get(r["dataset"]) if paper else None
        if published:
            shown = [published.get(c) for c in columns]
            shown = [f"{v:.2f}" if v is not None else "-" for v in shown]
            lines.append(f"{'  paper':<14}" + "".join(f"{v:>{width}}" for v in shown))
    return lines


def _published():
    """The paper's values by table, data set and column name."""
    names = {t: [c for table, c, *_ in RANKING_COLUMNS if table == t] for t in ("Euclidean", "KL")}
    names["Table 3"] = ["B/B"] + [c for c, _, _ in TABLE3_COLUMNS]
    names["accuracy"] = names["F1"] = [c for c, _, _ in MULTILABEL_COLUMNS]
    names["ordinal"] = ["median", "ridge"] + [c for c, _ in ORDINAL_COLUMNS]
    values = {
        **PAPER_RANKING,
        "Table 3": PAPER_TABLE3,
        "accuracy": {name: paper["accuracy"] for name, paper in PAPER_MULTILABEL.items()},
        "F1": {name: paper["F1"] for name, paper in PAPER_MULTILABEL.items()},
        "ordinal": PAPER_ORDINAL,
    }
    return {
        t: {name: dict(zip(names[t], row)) for name, row in rows.items()}
        for t, rows in values.items()
    }


def format_report(records, meta, settings):
    by_table = {}
    for r in records:
        by_table.setdefault(r["table"], []).append(r)
    lines = [
        report_header("blondel2019", meta, command="advgame reproduce"),
        f"{settings.splits} random 80/20 splits (scene: its own train/test split; red wine and "
        "contact lenses: stratified 75/25, the ordinal benchmark's); alpha from "
        f"{len(settings.grid)} values in "
        f"[{min(settings.grid):g}, {max(settings.grid):g}] on a 25% validation part; mean±std over "
        "splits; * = best or not significantly worse (Wilcoxon p >= 0.05, >= 6 splits)",
        "columns: projection set / decoding set (B Birkhoff, row row-stochastic, P permutahedron, "
        "K knapsack, O order simplex, R no projection, R+ orthant); matching = AdversarialMatching",
        "",
    ]
    titles = (
        ("Euclidean", "Label ranking, Hamming loss % (Blondel (2019) Table 1)", 2),
        ("KL", "Label ranking, Hamming loss %, KL projections (Blondel (2019) Table 2)", 2),
        (
            "Table 3",
            "Label ranking, Hamming loss %, Birkhoff vs permutahedron (Blondel (2019) Table 3; "
            "D = polynomial degree; ranks / order = the two encodings of PermutahedronRanker)",
            2,
        ),
        ("accuracy", "Multilabel, accuracy % = 1 - Hamming (Blondel (2019) Table 6)", 2),
        ("F1", "Multilabel, example-based F1 % (Blondel (2019) Table 7)", 2),
        ("micro F1", "Multilabel, micro-averaged F1 %", 2),
        ("ordinal", "Ordinal regression, MAE in classes (Blondel (2019) Table 4)", 3),
    )
    papers = _published()
    for key, title, digits in titles:
        if key in by_table:
            lines += _table(title, by_table[key], papers.get(key), digits) + [""]
    shifts = [
        (r, split_shift(r["splits"], papers[r["table"]][r["dataset"]]))
        for r in records
        if r["table"] in ("Euclidean", "KL")
        and settings.splits > 1
        and any(
            v is not None for c, v in papers[r["table"]][r["dataset"]].items() if c in r["splits"]
        )
    ]
    if shifts:
        lines.append(
            "Shift shared by all columns (split_shift): the paper's mean offset from our means "
            "against the per-split common shifts"
        )
        lines += [
            f"{r['table']:<10}{r['dataset']:<12} paper {s['paper']:+.2f}; splits sd "
            f"{s['sd']:.2f}, range [{min(s['shifts']):+.2f}, {max(s['shifts']):+.2f}]; "
            f"{s['as_far']:.0%} of splits as far"
            for r, s in shifts
        ]
    return "\n".join(lines)


def run(quick=False, out=None, print_fn=print, progress=True, settings=None, parts=None):
    """Run the three experiments, print the tables, optionally write ``out`` (.json or .md).

    ``settings`` (default :data:`QUICK`, or the full run) may be one of :data:`PARTS`, the full
    run split into pieces that each take under an hour on two cores; ``parts`` (one name of
    :data:`PARTS`, ``advgame reproduce blondel2019 --part NAME``) selects it by name.  Without
    either, ``quick=False`` runs every part from its own stream and prints the tables of
    :data:`PART_TABLES`: the same numbers as the parts run one by one."""
    if parts is not None:
        unknown = [part for part in parts if part not in PARTS]
        if unknown or len(parts) != 1:
            raise ValueError(f"parts must name one part of {tuple(PARTS)}; got {tuple(parts)}.")
        settings = PARTS[parts[0]]
    if settings is None and not quick:
        records = [
            record
            for name, part in PARTS.items()
            for record in _experiments(part, progress)
            if record["table"] in PART_TABLES[name]
        ]
        settings = FULL
    else:
        settings = settings or QUICK
        records = _experiments(settings, progress)
    meta = run_meta(
        settings={
            **settings.__dict__,
            "grid": list(settings.grid),
            "matching_grid": list(settings.matching_grid),
        }
    )
    publish(format_report(records, meta, settings), meta, records, out, print_fn)
    return records


def _experiments(settings, progress):
    """The records of the three experiments under ``settings``, drawn from one stream seeded
    by :data:`SEED`."""
    rng = np.random.default_rng(SEED)
    progress = Progress("projection-losses", progress)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # L-BFGS at the grid's weakest regularisation
        records = label_ranking(settings, rng, progress)
        records += multilabel(settings, rng, progress)
        records += ordinal(settings, rng, progress)
    return records
