"""``advgame bench minimax`` (:mod:`advgame.reproductions.farnia_tse2016`) on a tiny instance (the
``--quick`` run is in the slow tier): the CLI, the printed table and the JSON records."""

import json
import re

from advgame.cli import main
from advgame.reproductions import farnia_tse2016 as minimax

#: One run over two regularisation values, of the synthetic problem with 200 features (raw
#: features) and of breast cancer (standardised).
TINY = minimax.Settings(
    runs=1,
    jobs=1,
    grid=minimax.QUICK_GRID[1:3],
    synthetic_features=200,
    problems=("synthetic", "breast cancer"),
)
MODELS = ("majority class", "mmSVM", "mmBC", "mmRBC", "LinearSVC", "LogisticRegression")


def _columns(printed, first):
    """The cells of the table's header line (the first line starting with ``first``)."""
    header = next(line for line in printed.splitlines() if line.startswith(first))
    return re.split(r"\s{2,}", header.strip())


def test_bench_minimax_tiny_writes_json(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(minimax, "QUICK", TINY)
    out = tmp_path / "minimax.json"
    assert main(["bench", "minimax", "--quick", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "breast cancer: run 1/1 ..." in captured.err
    printed = captured.out
    assert _columns(printed, "model ") == ["model", "synthetic 200x200", "breast cancer", "paper"]
    rows = {line.split("  ")[0] for line in printed.splitlines()}
    assert rows >= set(MODELS)
    assert "runs: synthetic 200x200 1, breast cancer 1" in printed
    records = json.loads(out.read_text())["records"]
    assert [(r["problem"], r["n"], r["d"], r["runs"]) for r in records] == [
        ("synthetic 200x200", 200, 200, 1),
        ("breast cancer", 569, 30, 1),
    ]
    for record in records:
        assert record["marks"] == {}  # one run: no Wilcoxon marks
        for model in MODELS:
            assert 0.0 <= record[model][0] <= 100.0
    assert records[1]["mmBC"][0] < 15.0  # breast cancer is easy for every linear model
