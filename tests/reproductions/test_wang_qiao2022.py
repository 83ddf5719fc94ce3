"""``advgame bench prediction-sets`` (:mod:`advgame.reproductions.wang_qiao2022`): the quick run
through the CLI (slow tier) and a tiny run of the same path, a scorer that ignores its input is
flagged, and the baselines' split-conformal thresholds give the promised coverage."""

import json
import math
import re
from dataclasses import asdict, replace

import joblib
import numpy as np
import pytest

from advgame.cli import main
from advgame.datasets import OUTLIER, make_prediction_set_example1
from advgame.metrics import prediction_set_metrics
from advgame.reproductions import wang_qiao2022 as ps

#: cvxpy may flag Clarabel's answer as inaccurate; the benchmark compares the objectives itself.
pytestmark = pytest.mark.filterwarnings("ignore:Solution may be inaccurate")


@pytest.mark.slow
def test_bench_prediction_sets_quick_writes_json(tmp_path, capsys):
    out = tmp_path / "prediction_sets.json"
    assert main(["bench", "prediction-sets", "--quick", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Example 1" in printed and "zipcode" in printed and "speed-up" in printed
    records = json.loads(out.read_text())["records"]
    tables = [r for r in records if r["kind"] == "table"]
    assert {(r["experiment"], r["method"]) for r in tables} == {
        (e, m) for e, _, _ in ps.EXPERIMENTS for m in ps.METHODS
    }
    assert len(tables) == len(ps.EXPERIMENTS) * len(ps.METHODS)
    for r in tables:
        case = (r["experiment"], r["method"])
        K = r["n_classes"]
        assert (
            K == {"example1": 4, "example2": 3, "digits": 4, "example2_former": 3}[r["experiment"]]
        ), case
        assert len(r["coverage"]) == K and len(r["meets_coverage"]) == K, case
        assert all(0 <= c <= 1 for c in r["coverage"]), case
        assert 0 <= r["cardinality"] <= K and 0 <= r["conditional_cardinality"] <= K, case
        assert 0 <= r["detection_rate"] <= 1, case
        values = [*r["coverage"], r["cardinality"], r["conditional_cardinality"]]
        assert all(math.isfinite(v) for v in [*values, r["detection_rate"]]), case
        # every method's sets depend on the point: some outliers rejected, some points accepted
        assert not r["degenerate"], case
    (qp,) = [r for r in records if r.get("timing") == "dual QP"]
    assert (qp["n_k"], qp["m"]) == (ps.QUICK.qp_class, ps.QUICK.qp_unlabeled)
    assert qp["ipm_seconds"] > 0 and qp["highs_seconds"] > 0 and qp["cvxpy_seconds"] > 0
    assert qp["highs_objective"] == pytest.approx(qp["cvxpy_objective"], rel=1e-4)
    assert qp["ipm_objective"] == pytest.approx(qp["highs_objective"], rel=1e-7)
    (fit,) = [r for r in records if r.get("timing") == "GPS fit"]
    assert fit["n_jobs=1_seconds"] > 0 and fit["n_jobs=2_seconds"] > 0 and fit["speedup"] > 0


#: One replication of Example 1 with 70 training points per class (21 calibration points: γ = 0.05
#: needs 19 for a finite threshold), 20 test points per class, 20 outliers and 20 unlabelled
#: points; the dual QP of 10 class points against 20.
TINY = replace(
    ps.QUICK,
    replications=1,
    example1_train=70,
    example1_test=20,
    example1_outliers=20,
    unlabeled=20,
    qp_class=10,
    qp_unlabeled=20,
)


#: The columns of the tiny run: GPSKFS is GPS with ``feature_selection=True`` (checked below; its
#: fit is tested in test_prediction_sets.py) and takes a second on its own.
TINY_METHODS = ("KDE", "OCSVM", "BSVM", "GPS")


# a tiny unlabelled part does not cover the test distribution (the warning is tested elsewhere)
@pytest.mark.filterwarnings("ignore:the acceptance regions of classes")
def test_bench_prediction_sets_tiny_writes_json(tmp_path, capsys, monkeypatch):
    """The quick run's path (the tables, the QP and fit timings) on Example 1 alone."""
    monkeypatch.setattr(ps, "QUICK", TINY)
    monkeypatch.setattr(ps, "EXPERIMENTS", ps.EXPERIMENTS[:1])
    monkeypatch.setattr(ps, "METHODS", TINY_METHODS)
    monkeypatch.setattr(ps, "FIT_REPEATS", 1)
    monkeypatch.setattr(ps, "SENSITIVITY", ps.SENSITIVITY[:1])
    out = tmp_path / "prediction_sets.json"
    # n_jobs=2 by threads: the same joblib calls without starting a process pool (seconds)
    with joblib.parallel_config(backend="threading"):
        assert main(["bench", "prediction-sets", "--quick", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "replication 1/1: example1 ..." in captured.err and "timing GPS fits" in captured.err
    printed = captured.out
    title = next(i for i, line in enumerate(printed.splitlines()) if line.startswith("Example 1"))
    header = printed.splitlines()[title + 1]
    assert re.split(r"\s{2,}", header.strip()) == list(TINY_METHODS)
    for row in ("coverage class 4", "conditional cardinality", "detection rate", "meets 1-γ"):
        assert f"\n{row}" in printed, row
    assert "zipcode" not in printed and "dual QP, one class, n_k = 10, m = 20" in printed
    assert "GPS fit, Example 1, 70 per class, m = 20 (median of 1)" in printed
    data = json.loads(out.read_text())
    assert data["settings"] == asdict(TINY) and data["methods"] == list(TINY_METHODS)
    records = data["records"]
    tables = [r for r in records if r["kind"] == "table"]
    assert [(r["experiment"], r["method"]) for r in tables] == [
        ("example1", m) for m in TINY_METHODS
    ]
    for r in tables:
        assert r["n_classes"] == 4 and r["error_rate"] == 0.05, r["method"]
        assert len(r["coverage"]) == 4 and len(r["meets_coverage"]) == 4, r["method"]
        assert all(0 <= c <= 1 for c in r["coverage"]), r["method"]
        assert 0 <= r["cardinality"] <= 4 and 0 <= r["conditional_cardinality"] <= 4, r["method"]
        assert 0 <= r["detection_rate"] <= 1 and r["seconds_per_replication"] > 0, r["method"]
        # one replication: standard errors 0
        assert r["coverage_se"] == [0.0] * 4 and r["cardinality_se"] == 0.0, r["method"]
        # every method's sets depend on the point
        assert not r["degenerate"], r["method"]
    (qp,) = [r for r in records if r.get("timing") == "dual QP"]
    assert (qp["n_k"], qp["m"]) == (10, 20)
    assert qp["ipm_seconds"] > 0 and qp["highs_seconds"] > 0 and qp["cvxpy_seconds"] > 0
    assert qp["highs_objective"] == pytest.approx(qp["cvxpy_objective"], rel=1e-4)
    assert qp["ipm_objective"] == pytest.approx(qp["highs_objective"], rel=1e-7)
    (fit,) = [r for r in records if r.get("timing") == "GPS fit"]
    assert (fit["n_per_class"], fit["m"], fit["repeats"]) == (70, 20, 1)
    assert fit["n_jobs=1_seconds"] > 0 and fit["n_jobs=2_seconds"] > 0 and fit["speedup"] > 0
    gps, kfs = (ps.make_method(m, 0.05, seed=3).get_params() for m in ("GPS", "GPSKFS"))
    assert kfs == {**gps, "feature_selection": True} and not gps["feature_selection"]


def test_scorer_ignoring_its_input_is_flagged(monkeypatch):
    """A constant score puts every class in every set: cardinality K, no outlier detected."""

    def constant(X_fit, X_unlabeled, error_rate, params, random_state):
        return lambda X: np.zeros(X.shape[0])

    monkeypatch.setitem(ps.SCORERS, "KDE", constant)
    monkeypatch.setattr(ps, "EXPERIMENTS", ps.EXPERIMENTS[:1])
    records = ps.run_tables(ps.QUICK, lambda message: None, methods=("KDE", "OCSVM"))
    kde, ocsvm = records
    assert kde["degenerate"] and kde["cardinality"] == 4 and kde["detection_rate"] == 0
    assert not ocsvm["degenerate"] and ocsvm["detection_rate"] > 0.5


@pytest.mark.slow  # repeated fits on fresh samples (15-20 s for KDE and BSVM)
@pytest.mark.parametrize("method", sorted(ps.SCORERS))
def test_baseline_thresholds_cover(method):
    """On a large fresh Example 1 sample every class is covered at 1 - γ within sampling error,
    and not much more (a threshold at the wrong order statistic, or -inf, fails one side)."""
    gamma, n_train, n_test = 0.05, 2000, 5000
    X, y = make_prediction_set_example1(
        n_per_class=n_train + n_test, n_outliers=1000, random_state=7
    )
    train = np.concatenate([np.flatnonzero(y == k)[:n_train] for k in range(1, 5)])
    rest = np.setdiff1d(np.arange(y.size), train)
    rng = np.random.default_rng(7)
    U = X[rng.choice(rest, 500, replace=False)]
    model = ps.ConformalBaseline(method, gamma, random_state=7).fit(X[train], y[train], U)
    sets = model.predict_set(X[rest])
    n_cal = int(np.floor(ps.CALIBRATION * n_train))
    for k, label in enumerate(model.classes_):
        rows = y[rest] == label
        coverage = sets[rows, k].mean()
        # the coverage given the calibration sample varies by ~sqrt(γ(1-γ)/n_cal); the test
        # estimate adds the binomial error of rows.sum() points
        se = math.sqrt(gamma * (1 - gamma) * (1 / n_cal + 1 / rows.sum()))
        assert 1 - gamma - 3 * se <= coverage <= 1 - gamma + 1 / (n_cal + 1) + 3 * se, (k, coverage)
    assert OUTLIER not in model.classes_


# ------------------------------------------------------------ the paper's test composition
def _random_sets(rng, n_normal, n_outliers, K):
    """Labels and random prediction sets: normal points of classes 1..K, outliers -1; each
    outlier's set is empty with probability 0.6."""
    y = np.concatenate([rng.integers(1, K + 1, n_normal), np.full(n_outliers, OUTLIER)])
    sets = rng.random((y.size, K)) < 0.5
    sets[y == OUTLIER] &= (rng.random(n_outliers) < 0.4)[:, None]
    return y, sets


@pytest.mark.parametrize("n_normal, n_outliers", [(300, 100), (200, 700), (50, 5)])
def test_outlier_share_bounds_hold_the_share_that_made_the_metrics(n_normal, n_outliers):
    """Metrics computed from sets of a known outlier share bound that share; with every outlier
    detected the bounds meet at it."""
    rng = np.random.default_rng(n_normal)
    K = 4
    y, sets = _random_sets(rng, n_normal, n_outliers, K)
    share = n_outliers / y.size
    met = prediction_set_metrics(y, sets, np.arange(1, K + 1))
    low, high = ps.outlier_share_bounds(
        met["cardinality"], met["conditional_cardinality"], met["detection_rate"], K
    )
    assert low - 1e-12 <= share <= high + 1e-12 and high - low > 0.01
    sets[y == OUTLIER] = False
    met = prediction_set_metrics(y, sets, np.arange(1, K + 1))
    bounds = ps.outlier_share_bounds(
        met["cardinality"], met["conditional_cardinality"], met["detection_rate"], K
    )
    assert bounds == pytest.approx((share, share), abs=1e-12)


def test_outlier_share_bounds_when_outliers_get_larger_sets():
    """Outliers in more classes than normal points (the zipcode KDE cell): card > cond."""
    rng = np.random.default_rng(5)
    y = np.concatenate([np.ones(100, int), np.full(300, OUTLIER)])
    sets = np.zeros((400, 3), bool)
    sets[:100, 0] = True
    sets[100:] = rng.random((300, 3)) < 0.9
    met = prediction_set_metrics(y, sets, [1, 2, 3])
    assert met["cardinality"] > met["conditional_cardinality"]
    low, high = ps.outlier_share_bounds(
        met["cardinality"], met["conditional_cardinality"], met["detection_rate"], 3
    )
    assert low <= 0.75 <= high


@pytest.mark.parametrize(
    "args, message",
    [
        ((1.0, 1.2, 1.5, 3), "detection rate in"),
        ((1.0, 4.5, 0.5, 3), "n_classes=3"),
        ((0.5, 0.8, 0.0, 3), "no outlier share"),  # outliers in >= 1 class: card >= cond
        ((float("nan"), 2.0, 0.5, 3), "finite"),
    ],
)
def test_outlier_share_bounds_reject_impossible_metrics(args, message):
    with pytest.raises(ValueError, match=message):
        ps.outlier_share_bounds(*args)


def test_simulation_sizes_have_the_papers_outlier_share():
    """The full run's test sets of Examples 1-2 have the outlier share the paper's Tables 1-2
    imply (to the granularity of one point); the former Example 2 set had half of it."""
    for table, K in (("example1", 4), ("example2", 3)):
        n_normal = K * getattr(ps.FULL, f"{table}_test")
        n_out = getattr(ps.FULL, f"{table}_outliers")
        low, high = ps.paper_outlier_share(table)
        share = n_out / (n_normal + n_out)
        assert low - 1 / (n_normal + n_out) <= share <= high + 1 / (n_normal + n_out), table
    assert ps.paper_outlier_share("example2") == pytest.approx((0.5274, 0.5274), abs=1e-4)
    former = ps.FULL.example2_former_outliers / (3 * ps.FULL.example2_test + 1000)
    assert former == 0.25


# ------------------------------------------------------------------------------- BCOPS-RF
def test_bcops_rf_score_estimates_the_class_share_of_the_density():
    """Class N(0, 1) against an unlabelled half-half mixture with N(4, 1), as many points each:
    the forest's probability estimates ``f_k / (f_k + f_te)`` (2/3 in the class's bulk, falling
    to 0 past the mixture's second mode) within the error of a 300-point forest, far below a
    constant score's (0.33 on this grid)."""
    rng = np.random.default_rng(0)
    X_class = rng.normal(0, 1, (300, 1))
    X_unlabeled = np.vstack([rng.normal(0, 1, (150, 1)), rng.normal(4, 1, (150, 1))])
    score = ps.bcops_rf_scorer(X_class, X_unlabeled, 0.05, (6, ps.BCOPS_TREES), 0)
    x = np.linspace(-1, 5, 25)
    f_k = np.exp(-(x**2) / 2)
    truth = f_k / (f_k + 0.5 * f_k + 0.5 * np.exp(-((x - 4) ** 2) / 2))
    ours = score(x[:, None])
    assert ours.shape == (25,) and np.all((0 <= ours) & (ours <= 1))
    assert np.abs(ours - truth).mean() < 0.15
    bulk, middle, far = ours[x < 1].mean(), ours[(x > 1.5) & (x < 2.5)].mean(), ours[x > 3].mean()
    assert bulk > middle > far and abs(bulk - 2 / 3) < 0.15 and far < 0.1


# ---------------------------------------------------------------------------- cell status
def _paper_record(experiment, method):
    """A table record whose means are the paper's published means for ``method``."""
    table, j = ps.PAPER[experiment], ps.METHODS.index(method)
    record = {"kind": "table", "experiment": experiment, "method": method}
    record["coverage"] = [row[j][0] for row in table["coverage"]]
    for key in ("cardinality", "conditional_cardinality", "detection_rate"):
        record[key] = table[key][j][0]
    return record


def test_cell_status_counts_cells_outside_one_sd():
    gps, kfs = _paper_record("example2", "GPS"), _paper_record("example2", "GPSKFS")
    assert ps.cell_status([gps, kfs]) == {"example2": (12, [], [])}
    se = ps.PAPER["example2"]["detection_rate"][ps.METHODS.index("GPS")][1]
    sd = se * math.sqrt(ps.PAPER_REPLICATIONS)
    gps["detection_rate"] -= 1.01 * sd
    kfs["cardinality"] += 0.99 * ps.PAPER["example2"]["cardinality"][-1][1] * math.sqrt(200)
    ((within, explained, outside),) = ps.cell_status([gps, kfs]).values()
    assert within == 11 and explained == []
    assert [cell[:3] for cell in outside] == [("GPS", "detection_rate", None)]
    former = dict(gps, experiment="example2_former")  # compared with the same paper table
    assert ps.cell_status([former])["example2_former"][2][0][:3] == outside[0][:3]


def _paper_sd(experiment, metric, method):
    return ps.PAPER[experiment][metric][ps.METHODS.index(method)][1] * math.sqrt(200)


def test_geometry_explains_a_gap_within_the_spread_of_geometries():
    """The paper's mean 2 sd of ours away: explained when a tenth of the replications are as
    far and a fixed geometry spreads no more than twice the paper's sd; not when the
    replications are tight, or when the fixed geometry is itself wide."""
    values = np.linspace(-1, 1, 21)  # mean 0; 4 of 21 values at |v| >= 0.85
    assert ps.geometry_explains(values, 0.85, paper_sd=0.1, within_sd=0.2)
    assert not ps.geometry_explains(values, 0.95, paper_sd=0.1, within_sd=0.2)  # 2 of 21
    assert not ps.geometry_explains(values, 0.85, paper_sd=0.1, within_sd=0.21)
    assert ps.geometry_explains(values, -0.85, paper_sd=0.1, within_sd=0.1)  # either side


def test_cell_status_credits_the_geometry_only_to_example1_size_cells():
    gps = _paper_record("example1", "GPS")
    sd = _paper_sd("example1", "cardinality", "GPS")
    gps["cardinality"] += 2 * sd
    gps["coverage"][0] += 0.1
    spread = gps["cardinality"] + np.linspace(-3, 3, 20) * sd  # mean unchanged
    gps["replications"] = {"cardinality": spread.tolist()}
    fixed = {"kind": "geometry", "method": "GPS", "cardinality_sd": sd}
    without = ps.cell_status([gps])["example1"]
    assert without[0] == 5 and without[1] == [] and len(without[2]) == 2
    within, explained, outside = ps.cell_status([gps, fixed])["example1"]
    assert [c[:3] for c in explained] == [("GPS", "cardinality", None)]
    assert [c[:3] for c in outside] == [("GPS", "coverage", 0)]  # coverage: not the geometry
    other = _paper_record("example2", "GPS")  # Example 2 has no class geometry to draw
    other["cardinality"] += 2 * _paper_sd("example2", "cardinality", "GPS")
    other["replications"] = {
        "cardinality": (other["cardinality"] + spread - spread.mean()).tolist()
    }
    assert ps.cell_status([other, fixed])["example2"][1:] == ([], [("GPS", "cardinality", None,
        other["cardinality"], ps.PAPER["example2"]["cardinality"][4][0])])  # fmt: skip


def test_example1_geometries_hold_the_class_parameters_fixed(monkeypatch):
    """Every replication of a geometry draws its classes from the geometry's seed and its
    points from the replication's; the record pools the sd within geometries."""
    seen = []
    original = ps.experiment_data

    def spy(name, settings, rng, digits=None, class_state=None):
        seen.append(class_state)
        return original(name, settings, rng, digits, class_state)

    monkeypatch.setattr(ps, "experiment_data", spy)
    tiny = replace(TINY, geometries=2, geometry_replications=2)
    (record,) = ps.example1_geometries(tiny, lambda message: None, methods=("KDE",))
    assert seen == [ps.GEOMETRY_SEED, ps.GEOMETRY_SEED, ps.GEOMETRY_SEED + 1, ps.GEOMETRY_SEED + 1]
    assert record["kind"] == "geometry" and len(record["cardinality_means"]) == 2
    assert record["cardinality_sd"] >= 0 and 0 <= min(record["detection_rate_means"])
    lines = ps._geometry_lines([record])
    assert lines[0].startswith("Example 1 with one class geometry held fixed (2 geometries)")
    with pytest.raises(ValueError, match="at least 2 replications"):
        ps.example1_geometries(replace(tiny, geometry_replications=1), print, ("KDE",))
    with pytest.raises(ValueError, match="experiment 'example2' has none"):
        ps.experiment_data("example2", tiny, np.random.default_rng(0), class_state=1)


# ------------------------------------------------------------------- Example 2 sensitivity
def test_percentile_width_factors_match_the_pairwise_distances():
    """Against distances computed pair by pair: the median's factor is 1 and the factors fall
    as the percentile grows."""
    X = np.random.default_rng(1).normal(size=(9, 3))  # 36 pairs
    d = np.array([np.linalg.norm(X[i] - X[j]) for i in range(9) for j in range(i + 1, 9)])
    factors = ps.percentile_width_factors(X, (25, 50, 75))
    expected = [np.median(d) ** 2 / np.percentile(d, q) ** 2 for q in (25, 50, 75)]
    assert factors == pytest.approx(expected, rel=1e-12)
    assert factors[1] == pytest.approx(1.0) and factors[0] > 1 > factors[2]


# tiny classes: too few calibration points for γ = 0.01 (thresholds -inf); only the plumbing
@pytest.mark.filterwarnings("ignore:the acceptance regions of classes")
@pytest.mark.filterwarnings("ignore:12 calibration points are too few")
def test_example2_sensitivity_runs_each_variant_and_restores_the_grid(monkeypatch):
    tiny = replace(ps.QUICK, replications=1, example2_train=40, example2_test=10, unlabeled=30)
    variants = (
        ("share", lambda s: {"example2_outliers": 10}, False),
        ("paper grid", lambda s: {}, True),
    )
    used = []
    original = ps.make_method

    def spy(method, gamma, seed):  # the grid in force when each GPS is made and fitted
        used.append(ps._gps.WIDTH_FACTORS)
        return original(method, gamma, seed)

    monkeypatch.setattr(ps, "make_method", spy)
    monkeypatch.setattr(ps, "N_JOBS", 1)
    records = ps.example2_sensitivity(tiny, lambda message: None, variants)
    assert [r["variant"] for r in records] == ["share", "paper grid"]
    assert records[0]["settings"]["example2_outliers"] == 10
    for r in records:
        assert 0 <= r["detection_rate"] <= 1 and 0 <= r["cardinality"] <= 3
    assert used[0] == ps.WIDTH_FACTORS and used[1] != ps.WIDTH_FACTORS
    assert len(used) == 2 and ps._gps.WIDTH_FACTORS == ps.WIDTH_FACTORS
    assert ps._sensitivity_lines(records)[-2].startswith("paper (200 replications)")


def test_unlabelled_part_must_leave_evaluation_points():
    too_many = replace(ps.QUICK, example2_test=10, example2_outliers=10, unlabeled=40)
    with pytest.raises(ValueError, match="M = 40 unlabelled points leave no evaluation points"):
        ps.experiment_data("example2", too_many, np.random.default_rng(0))
    # every variant of the sensitivity study keeps evaluation points at the quick sizes
    for _, changes, _ in ps.SENSITIVITY:
        varied = replace(ps.QUICK, **changes(ps.QUICK))
        *_, y_eval = ps.experiment_data("example2", varied, np.random.default_rng(0))
        assert y_eval.size > 0
