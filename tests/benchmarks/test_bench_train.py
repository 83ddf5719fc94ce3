"""``advgame bench train`` on a tiny instance (the ``--quick`` run is in the slow tier): the CLI,
the printed table and the JSON records."""

import json

from advgame.benchmarks import train
from advgame.cli import main

#: A vendored problem and the synthetic one, 600 rows each (420 fitted), one fit per model.
TINY = train.Settings(
    problems=("optdigits", "synthetic"), synthetic_rows=600, max_rows=600, fit_repeats=1
)
MODELS = ("AdversarialClassifier", "LogisticRegression", "LinearSVC (CS)")


def _header(printed, first):
    """The words of the table's header line (the first line starting with ``first``)."""
    return next(line for line in printed.splitlines() if line.startswith(first)).split()


def test_bench_train_tiny_writes_json(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(train, "QUICK", TINY)
    out = tmp_path / "train.json"
    assert main(["bench", "train", "--quick", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "2/2 synthetic n=600 ..." in captured.err
    printed = captured.out
    assert _header(printed, "problem ") == ["problem", "n", "model", "fit", "s", "accuracy"]
    assert printed.count("ratios: fit/LR") == 2 and "median of 1 fit(s)" in printed
    records = json.loads(out.read_text())["records"]
    assert [(r["problem"], r["n_train"], r["k"]) for r in records] == [
        ("optdigits", 420, 10),
        ("synthetic n=600", 420, 10),
    ]
    for r in records:  # every model was fitted and scored in the same run
        assert r["repeats"] == 1
        for label in MODELS:
            # well above chance (1/k) on 180 test rows; the synthetic labels are noisy
            assert r[f"{label} fit s"] > 0 and 2 / r["k"] < r[f"{label} accuracy"] <= 1.0
        assert r["eval / GEMMs"] > 0 and r["fit / LR"] > 0
    assert records[0]["AdversarialClassifier accuracy"] > 0.8  # optdigits is easy
