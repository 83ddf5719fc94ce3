"""``advgame bench compile`` on a tiny instance (the ``--quick`` run is in the slow tier):
the CLI, the printed table and the JSON records."""

import json
import math
import re

import pytest

from advgame.benchmarks import compile as bench
from advgame.cli import main

#: One tiny size, one build, a 10-row solve and 20 rows of potentials.
TINY = bench.Settings(
    sizes=(50,), build_repeats=1, solve_rows=10, solve_time_limit=60.0, value_rows=20
)


def _columns(printed, first):
    """The cells of the table's header line (the first line starting with ``first``)."""
    header = next(line for line in printed.splitlines() if line.strip().startswith(first))
    return re.split(r"\s{2,}", header.strip())


def _positive(value):
    return isinstance(value, (int, float)) and math.isfinite(value) and value > 0


def test_bench_compile_tiny_writes_json(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(bench, "QUICK", TINY)
    out = tmp_path / "compile.json"
    assert main(["bench", "compile", "--quick", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "1/1 build n=50 ..." in captured.err
    assert _columns(captured.out, "n ") == [
        "n",
        "rows",
        "columns",
        "nnz",
        "compile s",
        "matrix s",
        "build s",
        "ns/nnz",
        "peak MB",
        "A MB",
        "peak/A",
    ]
    assert "ns/nnz at n = 50 / at n = 50: 1.00x" in captured.out
    assert "program.dual().solve('highs')" in captured.out
    assert "max |closed form - LP|" in captured.out
    data = json.loads(out.read_text())
    assert data["settings"]["sizes"] == [50] and data["blas_threads"] == 1
    build, total, solve, values = data["records"]
    assert [r["measure"] for r in data["records"]] == ["build", "summary", "solve", "value"]
    assert (build["n"], build["d"], build["k"]) == (50, bench.D, bench.K)
    for field in (
        "rows",
        "columns",
        "nnz",
        "build_s",
        "compile_s",
        "matrix_s",
        "ns_per_nnz",
        "peak_mb",
        "matrix_mb",
        "peak_over_matrix",
    ):
        assert _positive(build[field]), field
    assert build["build_s"] >= build["compile_s"]
    assert build["ns_per_nnz"] == pytest.approx(1e9 * build["build_s"] / build["nnz"])
    assert total["ns_per_nnz_ratio"] == 1.0
    assert total["max_peak_over_matrix"] == build["peak_over_matrix"]
    assert solve["kind"] == "LP" and solve["primal_status"] == solve["dual_status"] == "optimal"
    assert _positive(solve["primal_s"]) and _positive(solve["dual_s"])
    assert solve["gap"] <= bench.CHECK_ATOL
    assert solve["primal_objective"] == pytest.approx(solve["dual_value"], abs=bench.CHECK_ATOL)
    assert values["rows"] == 20 and values["max_deviation"] <= bench.CHECK_ATOL
    for field in ("closed_form_s", "lp_s", "closed_form_us_per_row", "lp_us_per_row"):
        assert _positive(values[field]), field


@pytest.mark.slow
def test_bench_compile_quick(capsys):
    records = bench.run(quick=True)
    out = capsys.readouterr().out
    builds = [r for r in records if r["measure"] == "build"]
    assert [r["n"] for r in builds] == list(bench.QUICK.sizes)
    assert builds[1]["nnz"] > 9 * builds[0]["nnz"]  # nnz grows linearly with n
    assert "ns/nnz at n = 10,000 / at n = 1,000" in out
