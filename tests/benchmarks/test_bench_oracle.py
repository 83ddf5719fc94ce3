"""``advgame bench oracle`` on a tiny instance (the ``--quick`` run is in the slow tier): the CLI,
the printed table, the JSON records and their markdown table."""

import json
import re
from dataclasses import asdict

import pytest

from advgame.benchmarks import oracle
from advgame.cli import main

TINY = oracle.Settings(
    rows=50, lp_rows=10, cvxpy_rows=2, repeats=1, bulk_max_rows=100, loop_rows=10
)
#: Two losses at k = 3 and at k = 30, where the zero-one vertex table is refused.
TINY_LOSSES = {name: oracle.LOSSES[name] for name in ("zero-one", "abstain(alpha=0.3)")}
TINY_SIZES = (3, 30)


def _columns(printed, first):
    """The cells of the table's header line (the first line starting with ``first``)."""
    header = next(line for line in printed.splitlines() if line.startswith(first))
    return re.split(r"\s{2,}", header.strip())


@pytest.mark.slow  # about 7 s, mostly the bulk LP's vertex-table reference
@pytest.mark.filterwarnings("error:Solution may be inaccurate")  # counted, not leaked
def test_bench_oracle_tiny_writes_json(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(oracle, "QUICK", TINY)
    monkeypatch.setattr(oracle, "LOSSES", TINY_LOSSES)
    monkeypatch.setattr(oracle, "SIZES", TINY_SIZES)
    path = tmp_path / "bench.json"
    assert main(["bench", "oracle", "--quick", "--out", str(path)]) == 0
    captured = capsys.readouterr()
    assert "4/4 abstain(alpha=0.3) k=30 ..." in captured.err
    assert _columns(captured.out, "loss ") == [name for name, _ in oracle.COLUMNS]
    assert "vertices n/a for zero-one k=30" in captured.out
    data = json.loads(path.read_text())
    assert data["settings"] == asdict(TINY)
    records = data["records"]
    assert [(r["loss"], r["k"]) for r in records] == [
        (name, k) for name in TINY_LOSSES for k in TINY_SIZES
    ]
    for r in records:
        assert r["max_dev"] <= 1e-9 and r["cvxpy_dev"] <= oracle.CVXPY_RTOL
        assert (r["closed_form_rows"], r["lp_rows"], r["cvxpy_rows"]) == (50, 10, 2)
        assert r["closed_form_us"] > 0 and r["lp_us"] > 0 and r["cvxpy_us"] > 0
        assert r["cvxpy_failures"] == 0 and r["lp_over_closed_form"] > 0
        refused = (r["loss"], r["k"]) == ("zero-one", 30)
        assert (r["vertices_us"] is None) == refused and (r["vertices_rows"] is None) == refused
        if not refused:
            assert r["vertices_rows"] == 50 and r["vertices_count"] > 0
    (bulk,) = data["bulk"]  # bulk_max_rows=100: the n = 100 row only
    assert (bulk["k"], bulk["n"], bulk["loop_rows"]) == (oracle.BULK_K, 100, 10)
    assert max(bulk["bulk_dev"], bulk["loop_dev"]) <= 1e-9
    assert bulk["bulk_us"] > 0 and bulk["loop_us"] > 0 and bulk["query_us"] > 0
    assert bulk["table_us"] == pytest.approx(bulk["query_us"] + 1e3 * bulk["table_build_ms"] / 100)
    assert bulk["loop_over_bulk"] == pytest.approx(bulk["loop_us"] / bulk["bulk_us"])
    assert _columns(captured.out, "n rows ") == [name for name, _ in oracle.BULK_COLUMNS]
    markdown = oracle.format_report(records, data, markdown=True)
    assert markdown.count("\n| ") == 7  # header and 4 rows; bulk: header and 1 row
