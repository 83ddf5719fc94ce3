"""The settings of the reproduction and of ``advgame compare``: splits, tuning grids, data sets
and sizes, and the limits of ``compare``
(:func:`~advgame.reproductions.fathony2018a.compare.compare`).

This module imports nothing but the standard library, so that the command line can show these
numbers in its help without loading the models.
"""

from dataclasses import dataclass, replace

__all__ = [
    "Settings",
    "Tuning",
    "FULL",
    "QUICK",
    "SUBSAMPLED",
    "GAUSSIAN",
    "COMPARE",
    "COMPARE_LOSSES",
    "MAX_COMPARE_SPLITS",
    "MAX_COMPARE_ROWS",
    "MAX_ORDINAL_CLASSES",
]

#: Seed of the splits, subsamples and folds.
SEED = 0
TEST_FRACTION = 0.3
#: Gaussian models of :class:`Settings`: the exact kernel, or kernel principal components.
GAUSSIAN = ("exact", "kpca")
#: Rows per split (subsample, then split 70/30) of the larger data sets in :data:`SUBSAMPLED`.
FULL_ROWS = {"redwine": 1000, "segment": 1000, "abalone": 1000, "satimage": 600, "optdigits": 500}
#: Fewer splits than this print no marks (with 5 pairs the smallest exact Wilcoxon p is 0.0625).
MIN_SPLITS_FOR_TEST = 6


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
    :data:`~advgame.reproductions.fathony2018a.tables.COLUMNS`; empty: all of them)."""

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

#: ``advgame compare --loss``: the table of Fathony et al.'s (2018a) protocol that each loss is
#: scored by.
COMPARE_LOSSES = {"zero_one": "zero-one", "ordinal": "ordinal", "abstain": "abstain"}
#: Default settings of ``compare``: 10 splits (enough for the Wilcoxon marks); linear:
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
#: Most splits ``compare`` accepts (each split refits every model).
MAX_COMPARE_SPLITS = 100
#: Most rows ``compare`` fits a model on: larger data need ``max_rows`` (a fresh random
#: subsample per split, as :data:`FULL_ROWS` does for the larger vendored sets); the exact SVM QPs
#: and the dense Gaussian kernel (``n x n``) grow fast with the rows.
MAX_COMPARE_ROWS = 5_000
#: Most distinct ordinal classes ``compare`` accepts without ``bins``.
MAX_ORDINAL_CLASSES = 20
