"""``advgame reproduce seed000``: the quick run end to end (Tables 2, 4 and 6 of seed 000)."""

import json
import math

import pytest

from advgame.benchmarks import seed000

#: cvxpy may flag Clarabel's answer as inaccurate at the grid's weakest regularisation.
pytestmark = pytest.mark.filterwarnings("ignore:Solution may be inaccurate")


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("seed000") / "x.json"
    printed = []
    records = seed000.run(quick=True, out=out, print_fn=printed.append)
    return records, json.loads(out.read_text()), "\n".join(printed)


def test_quick_records_complete_and_in_range(quick_run):
    records, saved, _ = quick_run
    settings = seed000.QUICK
    assert saved["records"] == json.loads(json.dumps(records))
    expected = {("zero-one", d) for d in settings.multiclass}
    expected |= {("abstain", d) for d in settings.multiclass}
    expected |= {("ordinal", d) for d in settings.ordinal}
    assert {(r["table"], r["dataset"]) for r in records} == expected
    columns = {
        "zero-one": seed000.ZERO_ONE_COLUMNS,
        "abstain": seed000.ABSTAIN_COLUMNS,
        "ordinal": seed000.ORDINAL_COLUMNS,
    }
    upper = {"zero-one": 100.0, "abstain": 1.0, "ordinal": seed000.ORDINAL_BINS - 1}
    for r in records:
        assert tuple(r["columns"]) == columns[r["table"]]
        for column, (mean, sd, mark) in r["columns"].items():
            assert math.isfinite(mean) and 0.0 <= mean <= upper[r["table"]], (r["dataset"], column)
            assert math.isfinite(sd) and sd >= 0.0
            assert mark == ""  # 2 splits: too few for the Wilcoxon marks
        for chosen in r["lambda"].values():
            assert len(chosen) == settings.splits and set(chosen) <= set(settings.grid)
        if r["table"] == "abstain":
            assert all(0.0 <= v <= 100.0 for v in r["abstained"].values())
    iris = {r["table"]: r for r in records if r["dataset"] == "iris"}
    assert iris["zero-one"]["columns"]["AL01"][0] > 85.0  # linear iris is easy
    assert iris["abstain"]["columns"]["ALabs"][0] < 0.15


def test_quick_report_has_paper_numbers_and_no_marks(quick_run):
    _, _, report = quick_run
    assert report.startswith("advgame reproduce seed000")
    assert "96.3(3.1)" in report  # Table 2, iris, AL01
    assert "0.449(0.090)" in report  # Table 4, machinecpu, AL-th
    assert "0.037(0.020) [7%]" in report  # Table 6, iris, AL-abstain
    assert "# *" not in report


def test_marks_with_enough_splits():
    """With >= MIN_SPLITS_FOR_TEST splits a record carries Wilcoxon marks, the best one starred."""
    settings = seed000.QUICK.__class__(**{**seed000.QUICK.__dict__, "splits": 6})
    losses = {"a": [0.1, 0.2, 0.1, 0.2, 0.1, 0.2], "b": [0.9, 0.8, 0.9, 0.8, 0.9, 0.7]}
    record = seed000._record("abstain", "toy", losses, settings)
    assert record["columns"]["a"][2] == "*" and record["columns"]["b"][2] == ""
