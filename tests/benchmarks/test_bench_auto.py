"""``advgame bench auto`` on a tiny instance: the CLI runs it, its table has the columns, and
its records name the fastest certified solver and auto's choice (no time is asserted)."""

import json
import re
from dataclasses import replace

from advgame.benchmarks import auto as bench
from advgame.cli import main

#: iris, the zero-one loss, soft moments, exact matching and an l1 ball; one run each.
TINY = replace(
    bench.QUICK, agreement=(("iris", ("zero_one",)),), agreement_sets=("soft", "exact", "l1")
)

COLUMNS = [
    "problem",
    "k",
    "compile s",
    "smoothing s",
    "lbfgs s",
    "fastest",
    "auto",
    "auto/fastest",
]


def test_bench_auto_quick_runs_and_reports_every_column(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(bench, "QUICK", TINY)
    out = tmp_path / "auto.json"
    assert main(["bench", "auto", "--quick", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "1/3 iris zero_one soft ..." in captured.err
    header = next(line for line in captured.out.splitlines() if line.startswith("| problem"))
    assert [cell.strip() for cell in header.strip("|").split("|")] == COLUMNS
    assert re.search(r"auto/fastest over 3 problems: worst \d+\.\d\d, median", captured.out)
    records = json.loads(out.read_text())["records"]
    *problems, total = records
    assert [r["uncertainty"] for r in problems] == ["soft", "exact", "l1"]
    assert total["measure"] == "summary" and total["problems"] == 3
    exact = problems[1]
    # exact matching: no smoothing certificate and no L-BFGS; the compiled LP is the answer
    assert (exact["smoothing_status"], exact["lbfgs_status"]) == ("n/a", "n/a")
    assert exact["compile_status"] == "certified" and exact["fastest"] == "compile"
    for r in problems:
        assert r["fastest"] in bench.SOLVERS and r["auto"] in bench.SOLVERS
        assert r["rule"].startswith(r["auto"] + ": ")
        times = [r[f"{s}_s"] for s in bench.SOLVERS if r[f"{s}_status"] == "certified"]
        assert r["fastest_s"] == min(times)
        # every certified answer agrees with the compiled optimum within its gap
        for s in bench.SOLVERS:
            if r[f"{s}_status"] == "certified":
                assert r[f"{s}_objective"] - r[f"{s}_gap"] <= r["compile_objective"] + 1e-6
                assert r[f"{s}_objective"] >= r["compile_objective"] - 1e-6
