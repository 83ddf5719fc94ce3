"""``advgame bench minimax`` (:mod:`advgame.reproductions.farnia_tse2016`) on a tiny instance (the
``--quick`` run is in the slow tier): the CLI, the printed table and the JSON records."""

import json
import re

import numpy as np
import pytest
from sklearn.preprocessing import KBinsDiscretizer

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
    table1_study={"quantised": {"hepatitis": 1}},
    learnability_cases=((30, 1.0, None),),
    learnability_runs=1,
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
    assert "4 not run (DCC, MPM, TAN, DRC" in printed
    assert "features quantised" in printed
    assert any(line.startswith("hepatitis") for line in printed.splitlines())
    assert "Learnability of the synthetic generator" in printed
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


def test_quantiser_matches_scikit_learns_quantile_bins():
    """Continuous columns cut at the same quantiles as scikit-learn's KBinsDiscretizer (an
    independent implementation), 0/1 columns passed through, a missing value its own level."""
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(size=103), rng.exponential(size=103), rng.random(103) < 0.3])
    Z = minimax.Quantiser(5).fit(X).transform(X)
    reference = KBinsDiscretizer(
        5, encode="onehot-dense", strategy="quantile", quantile_method="linear"
    ).fit_transform(X[:, :2])
    np.testing.assert_array_equal(Z[:, :10], reference)
    np.testing.assert_array_equal(Z[:, 10], X[:, 2])
    X_missing = X.copy()
    X_missing[:5, 0] = np.nan
    quantiser = minimax.Quantiser(5).fit(X_missing)
    Z = quantiser.transform(X_missing)
    assert Z.shape == (103, 12)  # five levels and the missing one, five levels, the 0/1 column
    np.testing.assert_array_equal(Z[:5, :6].argmax(axis=1), 5)
    np.testing.assert_array_equal(Z[:, :6].sum(axis=1), 1)
    with pytest.raises(ValueError, match="X must have 3 columns"):
        quantiser.transform(X[:, :2])


def test_grid_end_share_counts_choices_at_either_end():
    grid = 2.0 ** np.arange(-2, 3)
    choices = [{"a": 0.25, "b": 1.0}, {"a": 4.0, "b": 2.0}, {"a": 1.0, "b": 2.0}]
    assert minimax.grid_end_share(choices, grid) == {"a": 2 / 3, "b": 0.0}


def test_synthetic_gamma_scale_and_support():
    X, y = minimax.synthetic(n=50, d=20, random_state=3, support=2, scale=100.0)
    # two strong coordinates decide the sign almost always: y follows 100 (g1 x1 + g2 x2)
    _, _, gamma = minimax._synthetic_draw(50, 20, False, 3, 100.0, 2)
    assert np.count_nonzero(gamma) == 2 and np.all(gamma[2:] == 0)
    assert np.mean(y == np.where(X @ gamma >= 0, 1, -1)) > 0.9
    with pytest.raises(ValueError, match="support must be None or an integer"):
        minimax.synthetic(d=20, support=21)


def test_learnability_separates_small_from_large_d():
    """With n = 200, d = 30 is learnt (logistic regression well under the majority rate) while
    d = 10,000 is not (logistic regression on the majority rate, though the Bayes error is
    far lower): the reason the paper's synthetic setting cannot rank the models."""
    small, large = minimax.learnability(
        [(30, 1.0, None), (10_000, 1.0, None)], runs=6, grid=minimax.QUICK_GRID
    )
    assert small["used"] >= 2 and large["used"] >= 2
    assert small["logistic"] < small["majority"] - 3
    assert abs(large["logistic"] - large["majority"]) < 2
    assert large["bayes"] < large["majority"] - 5
