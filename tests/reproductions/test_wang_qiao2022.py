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
        assert K == {"example1": 4, "example2": 3, "digits": 4}[r["experiment"]], case
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
