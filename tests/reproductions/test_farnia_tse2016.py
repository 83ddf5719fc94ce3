"""``advgame bench minimax`` (:mod:`advgame.reproductions.farnia_tse2016`) on a tiny instance (the
``--quick`` run is in the slow tier): the CLI, the printed table and the JSON records."""

import json
import re

import numpy as np

from advgame.cli import main
from advgame.datasets import load
from advgame.reproductions import farnia_tse2016 as minimax

#: One run over two regularisation values, of Table 1's promoters (one-hot, imputed,
#: standardised), the synthetic problem with 200 features (raw features) and breast cancer
#: (standardised).
TINY = minimax.Settings(
    runs=1,
    jobs=1,
    grid=minimax.QUICK_GRID[1:3],
    synthetic_features=200,
    problems=("synthetic", "breast cancer"),
    table1_runs={"promoters": 1},
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
    assert "Table 1 (Farnia and Tse 2016" in printed
    promoters = next(line for line in printed.splitlines() if line.startswith("promoters"))
    assert promoters.count("(") == 4  # the paper's figure beside each of the four columns run
    assert "24 not run (DCC, MPM, TAN, DRC" in printed
    records = json.loads(out.read_text())["records"]
    assert [(r["problem"], r["n"], r["d"], r["runs"]) for r in records] == [
        ("promoters", 106, 228, 1),
        ("synthetic 200x200", 200, 200, 1),
        ("breast cancer", 569, 30, 1),
    ]
    for record in records:
        assert record["marks"] == {}  # one run: no Wilcoxon marks
        for model in MODELS:
            assert 0.0 <= record[model][0] <= 100.0
    assert records[2]["mmBC"][0] < 15.0  # breast cancer is easy for every linear model


def test_table1_data_sets_load_as_the_notice_describes():
    """Rows, classes and missing cells of the six sets (their NOTICE's counts)."""
    expected = {
        "adult": (48842, 11687, 0),
        "credit": (690, 383, 12 + 13),  # A2, A14 numeric; A1, A4-A7 missing are categories
        "kr-vs-kp": (3196, 1669, 0),
        "promoters": (106, 53, 0),
        "votes": (435, 168, 0),
        "hepatitis": (155, 123, 6 + 29 + 4 + 16 + 67),
    }
    for name, (rows, positives, numeric_missing) in expected.items():
        X, y = minimax.load_table1(name)
        assert X.shape[0] == rows and set(np.unique(y)) == {-1, 1}
        assert np.sum(y == 1) == positives
        assert int(np.isnan(X).sum()) == numeric_missing
    data = load("binary/adult")
    assert dict(zip(*np.unique(data.split, return_counts=True))) == {"test": 16281, "train": 32561}
    assert "workclass=?" in data.feature_names  # a missing category is one more category
    votes = load("binary/votes")
    assert sum(name.endswith("=?") for name in votes.feature_names) == 16


def test_table1_preprocessor_imputes_on_the_training_part():
    X = np.array([[1.0, np.nan], [3.0, 2.0], [5.0, 4.0], [np.nan, 6.0]])
    Z = minimax.table1_preprocessor().fit(X[:3]).transform(X[3:])
    # two values and the indicator of the column missing in training (scikit-learn's
    # features="missing-only"); the test row's missing value is the training median
    assert Z.shape == (1, 3) and np.all(np.isfinite(Z))


def test_table1_status_uses_rounding_and_standard_error():
    assert minimax.table1_status((16.4, 0.0), 16) == "within"
    assert minimax.table1_status((16.6, 0.0), 16) == "outside"
    assert minimax.table1_status((17.4, 0.5), 16) == "within"
    assert minimax.table1_status((17.6, 0.5), 16) == "outside"
