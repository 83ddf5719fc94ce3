"""``advgame bench graphical`` (:mod:`advgame.reproductions.fathony2018b`) on a tiny instance (the
``--quick`` run is in the slow tier): the CLI, the printed table and the JSON records."""

import json
import re

from advgame.cli import main
from advgame.reproductions import fathony2018b as graphical

#: Six sequences (four for training), two splits, one strength and one (weighted) metric.
TINY = graphical.Settings(
    n_sequences=6, n_train=4, splits=2, grid=(1.0,), metrics=("absolute, weighted",)
)


def _columns(printed, first):
    """The cells of the table's header line (the first line starting with ``first``)."""
    header = next(line for line in printed.splitlines() if line.startswith(first))
    return re.split(r"\s{2,}", header.strip())


def test_bench_graphical_tiny_writes_json(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(graphical, "QUICK", TINY)
    out = tmp_path / "graphical.json"
    assert main(["bench", "graphical", "--quick", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "absolute, weighted: SSVM, tuning and 2 splits ..." in captured.err
    printed = captured.out
    assert _columns(printed, "metric ") == ["metric", *graphical.MODELS, "paper"]
    assert "make_ordinal_sequences(6), 2 splits of 4 train / 2 test sequences" in printed
    (row,) = [line for line in printed.splitlines() if line.startswith("absolute, weighted")]
    assert row.endswith("0.29 / 0.36 / 0.29")  # Fathony et al. (2018b) Table 1 beside ours
    records = json.loads(out.read_text())["records"]
    assert [r["metric"] for r in records] == ["absolute, weighted"]
    for model in graphical.MODELS:
        mean, spread, mark = records[0][model]
        assert 0.0 <= mean <= 2.0 and spread >= 0.0  # absolute loss of 3 labels: at most 2
        assert mark == ""  # 2 splits: too few for the Wilcoxon marks
