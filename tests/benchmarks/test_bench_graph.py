"""``advgame bench graph`` on a tiny instance (the ``--quick`` run is in the slow tier):
the CLI, the printed table and the JSON records."""

import json
import re

from advgame.benchmarks import graph
from advgame.cli import main

#: One example of a forest (chain 6: LP, DD and brute force) and of a graph with cycles (grid:
#: the junction-tree LP alone), each under the three losses.
TINY = graph.Settings(examples=1, cases=(("chain 6", (2,)), ("grid 4x4", (3,))))


def _columns(printed, first):
    """The cells of the table's header line (the first line starting with ``first``)."""
    header = next(line for line in printed.splitlines() if line.startswith(first))
    return re.split(r"\s{2,}", header.strip())


def test_bench_graph_tiny_writes_json(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(graph, "QUICK", TINY)
    out = tmp_path / "graph.json"
    assert main(["bench", "graph", "--quick", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "6/6 grid 4x4 k=3 squared ..." in captured.err
    assert _columns(captured.out, "graph ") == [
        "graph",
        "k",
        "loss",
        "LP ms",
        "DD/LP",
        "brute/LP",
        "DD certified",
        "max |DD-LP|",
        "max |brute-LP|",
    ]
    assert "DD certified 3 of 3 forest examples" in captured.out
    data = json.loads(out.read_text())
    assert data["settings"] == {"examples": 1, "cases": [["chain 6", [2]], ["grid 4x4", [3]]]}
    records = data["records"]
    assert [(r["graph"], r["k"], r["loss"]) for r in records] == [
        (g, k, loss) for g, ks in TINY.cases for k in ks for loss in graph.LOSSES
    ]
    for r in records:
        assert r["examples"] == 1 and r["lp_ms"] > 0
        forest = r["graph"] == "chain 6"
        assert (r["nodes"], r["edges"]) == ((6, 5) if forest else (16, 24))
        assert (r["dd_ms"] is not None) == forest  # no decomposition with cycles
        assert (r["brute_ms"] is not None) == forest  # 2^6 labelings; 3^16 is too many
        if forest:  # certified by the decomposition itself, close to the LP and to brute force
            assert r["dd_certified"] == 1 and r["dd_dev"] <= graph.CHECK_ATOL
            assert r["brute_dev"] <= graph.CHECK_ATOL and r["dd_ms"] > 0 and r["brute_ms"] > 0
