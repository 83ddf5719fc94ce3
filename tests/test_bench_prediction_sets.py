"""``advgame bench prediction-sets``: the quick run through the CLI, a scorer that ignores its input
is flagged, and the baselines' split-conformal thresholds give the promised coverage."""

import json
import math

import numpy as np
import pytest

from advgame.benchmarks import prediction_sets as ps
from advgame.cli import main
from advgame.datasets import OUTLIER, make_prediction_set_example1

#: cvxpy may flag Clarabel's answer as inaccurate; the benchmark compares the objectives itself.
pytestmark = pytest.mark.filterwarnings("ignore:Solution may be inaccurate")


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
