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
    "PARTS",
    "ADDED",
    "part_of",
    "part_settings",
    "FULL",
    "QUICK",
    "SUBSAMPLED",
    "GAUSSIAN",
    "COMPARE",
    "BINNING_STUDY",
    "GRID_STUDY",
    "PAPER_C",
    "PAPER_GAMMA",
    "PAPER_ORDINAL",
    "paper_tuning",
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
    :data:`~advgame.reproductions.fathony2018a.tables.COLUMNS`; empty: all of them) and the
    ordinal classes of every ordinal data set, ``(strategy, bins)`` (``'quantile'``: equal
    frequency, ``'uniform'``: equal width; None: the protocol's choice per data set,
    :data:`~advgame.reproductions.fathony2018a.tables.ORDINAL_BINNING`)."""

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
    binning: tuple = None


FULL = Settings(
    splits=20,
    jobs=2,
    linear=Tuning(folds=5, grid=(1e-5, 1e-4, 1e-3, 1e-2, 1e-1), widths=(None,), refine=(1 / 3, 3)),
    rbf=Tuning(folds=3, grid=(1e-4, 1e-3, 1e-2), widths=(0.25, 1.0, 4.0), refine=()),
    rank=50,
    multiclass=("iris", "vehicle", "redwine", "segment", "satimage", "optdigits", "glass"),
    ordinal=("machinecpu", "abalone", "boston"),
    ordinal_rbf=("machinecpu", "boston"),
    rows={},
)
#: ``advgame reproduce fathony2018a --part NAME``: the multiclass tables (2 and 6, linear and
#: Gaussian; about 42 of the full run's 60 minutes at 2 jobs), the ordinal ones (4 and 5, about
#: 20) or every table on the data sets :data:`ADDED` later, each under an hour.
PARTS = ("multiclass", "ordinal", "added")
#: Data sets vendored after the full runs of the ``multiclass`` and ``ordinal`` parts: they are
#: the part ``added``, which draws its splits from a stream of its own, so that adding them left
#: the draws of the other sets (and those parts' reported runs) as they were.
ADDED = ("glass", "boston")


def part_of(name, kind):
    """The part of :data:`PARTS` that runs a data set.

    Parameters
    ----------
    name : str
        The data set's name (``'glass'``, ``'machinecpu'``, ...).
    kind : {'multiclass', 'ordinal'}
        Its tables: the multiclass Tables 2 and 6 or the ordinal Tables 4 and 5 of Fathony et
        al. (2018a), §7.

    Returns
    -------
    str
        ``'added'`` for the sets of :data:`ADDED` (vendored after the other parts' full runs),
        else ``kind``, the part of that name.
    """
    return "added" if name in ADDED else kind


def part_settings(settings, parts):
    """``settings`` restricted to the data sets of ``parts`` (names of :data:`PARTS`; None: all
    of them)."""
    if parts is None:
        return settings
    unknown = set(parts) - set(PARTS)
    if unknown or not parts:
        raise ValueError(f"parts must name some of {PARTS}; got {parts!r}.")

    def kept(names, kind):
        return tuple(name for name in names if part_of(name, kind) in parts)

    return replace(
        settings,
        multiclass=kept(settings.multiclass, "multiclass"),
        ordinal=kept(settings.ordinal, "ordinal"),
        ordinal_rbf=kept(settings.ordinal_rbf, "ordinal"),
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

#: :func:`~advgame.reproductions.fathony2018a.protocol.binning_study`: the linear Table 4 on
#: machinecpu and abalone with AL-th, AT and AL-mc, 5 splits, 3-fold CV over 4 values of
#: ``lambda`` (one stage): enough to tell binnings whose MAEs differ by several sds apart.
BINNING_STUDY = replace(
    FULL,
    splits=5,
    jobs=1,
    linear=Tuning(folds=3, grid=(1e-4, 1e-3, 1e-2, 1e-1), widths=(None,), refine=()),
    multiclass=(),
    ordinal_rbf=(),
    models=("AL-th", "AT", "AL-mc"),
)

#: Fathony et al. (2018a), §7.1: the first stage of their tuning tries the SVMs' ``C = 2^i``,
#: ``i = 0, 3, ..., 12``, and the Gaussian ``gamma = 2^i``, ``i = -12, -9, ..., 0`` (their
#: second stage multiplies each winner by ``2^i``, ``i = -2..2``).
PAPER_C = tuple(2.0**i for i in (0, 3, 6, 9, 12))
PAPER_GAMMA = tuple(2.0**i for i in (-12, -9, -6, -3, 0))
#: Fathony et al. (2018a), §7.2: the ordinal models' ``lambda = 2^-i``, ``i = 1, 3, ..., 13``,
#: in five folds, then the winner times ``2^(i/2)``, ``i = -3..3``.
PAPER_ORDINAL = Tuning(
    folds=5,
    grid=tuple(2.0**-i for i in (13, 11, 9, 7, 5, 3, 1)),
    widths=(None,),
    refine=tuple(2.0 ** (i / 2) for i in (-3, -2, -1, 1, 2, 3)),
)
#: :func:`~advgame.reproductions.fathony2018a.protocol.grid_study`: Table 6's Gaussian models on
#: 5 splits, tuned by 3-fold CV in one stage over a data set's :func:`paper_tuning` grid.
GRID_STUDY = replace(
    FULL, splits=5, jobs=1, multiclass=(), ordinal=(), ordinal_rbf=(), kernels=("rbf",)
)


def paper_tuning(n, d, folds=3, c_grid=PAPER_C, gammas=PAPER_GAMMA):
    """The paper's grid of ``C`` and ``gamma`` (:data:`PAPER_C`, :data:`PAPER_GAMMA`) in this
    protocol's terms for ``n`` training rows of ``d`` features: ``lambda = 1 / (n C)`` (the
    baselines' ``C = 1 / (n lambda)``, in increasing order) and ``width = gamma d`` (the
    kernel's ``gamma = width / d``; ``gammas=None``: linear features); one stage of
    ``folds``-fold cross-validation."""
    if n < 1 or d < 1:
        raise ValueError(f"n and d must be positive; got n={n!r}, d={d!r}.")
    grid = tuple(sorted(1.0 / (n * c) for c in c_grid))
    widths = (None,) if gammas is None else tuple(g * d for g in gammas)
    return Tuning(folds=folds, grid=grid, widths=widths, refine=())


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
