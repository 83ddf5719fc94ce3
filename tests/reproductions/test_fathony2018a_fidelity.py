"""Fathony et al. (2018a) reproduction, the fidelity studies of issue 37: the ordinal binnings
(:func:`bin_edges`, :func:`binning_study`) and the paper's tuning grids (:func:`paper_tuning`,
:data:`PAPER_ORDINAL`, :func:`grid_study`), each checked against a computation done another way."""

import math
from dataclasses import replace

import numpy as np
import pytest

from advgame.datasets import load
from advgame.reproductions.fathony2018a import protocol, settings, tables
from advgame.reproductions.fathony2018a.report import describe_binning, format_report

pytestmark = pytest.mark.filterwarnings("ignore:Solution may be inaccurate")


def _uniform_classes(values, bins):
    """Equal-width classes by arithmetic: ``floor(bins (v - min) / (max - min))``, the maximum
    in the last class (agrees with :func:`bin_edges` off the edges)."""
    low, high = values.min(), values.max()
    return np.minimum((bins * (values - low) / (high - low)).astype(int), bins - 1)


@pytest.mark.parametrize("bins", [2, 5, 10])
def test_uniform_bins_match_arithmetic(bins):
    values = np.random.default_rng(bins).normal(size=500) ** 2  # skewed, no value on an edge
    edges = protocol.bin_edges(values, "uniform", bins)
    assert edges.shape == (bins - 1,)
    assert np.allclose(np.diff(edges), (values.max() - values.min()) / bins)
    classes = np.digitize(values, edges, right=True)
    assert np.array_equal(classes, _uniform_classes(values, bins))


def test_quantile_bins_have_equal_counts_on_distinct_values():
    values = np.random.default_rng(0).permutation(1000).astype(float)
    classes = np.digitize(values, protocol.bin_edges(values, "quantile", 5), right=True)
    assert np.array_equal(np.bincount(classes), [200] * 5)
    # rank arithmetic: the j-th fifth of the sorted values is class j
    assert np.array_equal(classes, np.argsort(np.argsort(values)) // 200)


def test_bin_edges_reject_bad_arguments():
    with pytest.raises(ValueError, match="strategy must be 'quantile' or 'uniform'; got 'width'"):
        protocol.bin_edges(np.arange(10.0), "width", 5)
    for bins in (1, 2.5, True):
        with pytest.raises(ValueError, match="bins must be an integer >= 2"):
            protocol.bin_edges(np.arange(10.0), "uniform", bins)


def test_ordinal_labels_close_empty_bins_and_use_training_edges():
    target = np.array([0.0, 1.0, 2.0, 9.0, 10.0, 100.0])
    train = np.arange(5)  # edges 2, 4, 6, 8 on [0, 10]: the bins (4, 6] and (6, 8] are empty
    labels = protocol._ordinal_labels(target, train, bins=5, strategy="uniform")
    # bins 0, 0, 0, 4, 4 and 4 (100 beyond the training maximum): one class after closing
    assert labels.tolist() == [0, 0, 0, 1, 1, 1]


def test_abalone_equal_width_ten_bins_class_counts():
    """Rings 1..29 in ten bins 2.8 wide: the counts of integer rings in each interval."""
    rings = load("ordinal/abalone").y.astype(float)
    classes = np.digitize(rings, protocol.bin_edges(rings, "uniform", 10), right=True)
    by_hand = [np.sum((rings > 1 + 2.8 * (j - 1)) & (rings <= 1 + 2.8 * j)) for j in range(1, 11)]
    by_hand[0] += np.sum(rings == 1)  # the minimum belongs to the first bin
    assert np.bincount(classes, minlength=10).tolist() == by_hand
    assert sum(by_hand) == 4177


def test_protocol_binning_is_a_candidate_and_described():
    for name, choice in tables.ORDINAL_BINNING.items():
        assert choice in tables.BINNING_CANDIDATES, name
    text = describe_binning(["machinecpu", "abalone"])
    assert text == "machinecpu 5 equal-frequency bins, abalone 10 equal-width bins"
    assert describe_binning(["abalone"], ("quantile", 5)) == "abalone 5 equal-frequency bins"


def test_paper_tuning_round_trips_the_published_grid():
    n, d = 592, 18  # vehicle's training part
    tuning = settings.paper_tuning(n, d)
    assert list(tuning.grid) == sorted(tuning.grid) and tuning.refine == () and tuning.folds == 3
    c_values = sorted(1.0 / (n * lam) for lam in tuning.grid)  # the baselines' C = 1/(n lambda)
    assert np.allclose(c_values, [1, 8, 64, 512, 4096])
    gammas = [width / d for width in tuning.widths]  # the kernel's gamma = width / d
    assert np.allclose(gammas, [2.0**-12, 2.0**-9, 2.0**-6, 2.0**-3, 1.0])
    assert settings.paper_tuning(n, d, gammas=None).widths == (None,)
    with pytest.raises(ValueError, match="n and d must be positive"):
        settings.paper_tuning(0, d)


def test_paper_ordinal_grid_is_the_published_one():
    """§7.2: lambda = 2^-i, i = 1, 3, ..., 13, then 2^(i/2) lambda_0, i = -3..3."""
    grid = settings.PAPER_ORDINAL
    assert sorted(np.log2(grid.grid).round(12)) == [-13, -11, -9, -7, -5, -3, -1]
    assert sorted(np.log2(grid.refine).round(12) * 2) == [-3, -2, -1, 1, 2, 3]
    assert grid.folds == 5 and grid.widths == (None,)


def test_binning_study_tiny_run():
    tiny = replace(
        settings.BINNING_STUDY,
        splits=2,
        ordinal=("machinecpu",),
        models=("AT",),
        linear=settings.Tuning(folds=2, grid=(1e-2,), widths=(None,), refine=()),
    )
    printed = []
    candidates = (("quantile", 5), ("uniform", 10))
    records = protocol.binning_study(tiny, candidates, print_fn=printed.append, progress=False)
    assert [r["binning"] for r in records] == [list(c) for c in candidates]
    target = load("ordinal/machinecpu").y.astype(float)
    uniform = np.bincount(_uniform_classes(target, 10))
    assert records[1]["class_counts"] == uniform[uniform > 0].tolist()  # empty bins closed
    assert sum(records[0]["class_counts"]) == 209 and len(records[0]["class_counts"]) == 5
    for r, (_, bins) in zip(records, candidates):
        mean, sd, _ = r["columns"]["AT"]
        assert 0.0 <= mean <= bins - 1 and math.isfinite(sd)
    report = printed[0]
    assert "machinecpu  quantile 5   45/41/39/43/41" in report and report.count("<-") == 1
    assert "0.458(0.090)" in report  # the published AT on machinecpu


def test_grid_study_tunes_over_the_paper_grid():
    tiny = replace(settings.GRID_STUDY, splits=2, models=("OVA",))
    printed = []
    records = protocol.grid_study(
        ("iris",), tiny, c_grid=(1.0, 8.0), gammas=(0.125,), print_fn=printed.append,
        progress=False,
    )  # fmt: skip
    (record,) = records
    assert record["table"] == "abstain" and record["kernel"] == "rbf"
    lam, width = record["chosen"]["OVA"]
    assert any(math.isclose(lam, 1.0 / (105 * c)) for c in (1.0, 8.0))  # 105 training rows
    assert math.isclose(width, 0.125 * 4)  # gamma = width / d, 4 iris features
    assert "part: Gaussian: the paper's grid, C in {1, 8} x gamma in {0.125}, 3-fold" in printed[0]
    linear = protocol.grid_study(
        ("iris",), tiny, c_grid=(1.0,), gammas=None, print_fn=printed.append, progress=False
    )
    assert linear[0]["kernel"] == "linear" and linear[0]["chosen"]["OVA"][1] is None


def test_report_names_each_data_sets_binning():
    keys = ("platform", "cpu", "cpu_count", "load_average", "numpy", "scipy", "highspy", "cvxpy")
    meta = {"date": "d", "machine": dict.fromkeys(keys, "x")}
    losses = {c: [0.5, 0.6] for c in tables.ORDINAL_COLUMNS}
    names = tables.PAPER["ordinal", "linear"]
    records = [protocol._record("ordinal", "linear", name, losses, 2) for name in names]
    text = format_report(records, meta, settings.FULL)
    line = "Ordinal classes (bin edges from all rows): machinecpu 5 equal-frequency bins"
    assert line + ", abalone 10 equal-width bins, boston 5 equal-width bins." in text
    text = format_report(records, meta, replace(settings.FULL, binning=("uniform", 5)))
    assert "machinecpu 5 equal-width bins, abalone 5 equal-width bins, boston 5 equal-width" in text


def test_task_labels_do_not_depend_on_the_split():
    """The reproduction's classes are fixed on all rows: abalone's equal-width bins computed on
    a training part without its one 29-ring row would move every edge."""
    rings = load("ordinal/abalone").y.astype(float)
    without_max = np.flatnonzero(rings < rings.max())
    moved = protocol._ordinal_labels(rings, without_max, bins=10, strategy="uniform")
    fixed = protocol._task_labels(rings, without_max, bins=10, strategy="uniform")
    assert np.array_equal(fixed, protocol._task_labels(rings, np.arange(5), 10, "uniform"))
    assert np.array_equal(fixed, np.digitize(rings, 1 + 2.8 * np.arange(1, 10), right=True))
    assert not np.array_equal(moved, fixed)
