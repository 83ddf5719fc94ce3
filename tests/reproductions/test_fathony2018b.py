"""``advgame bench graphical`` (:mod:`advgame.reproductions.fathony2018b`) on tiny instances (the
``--quick`` run is in the slow tier): the CLI, the printed tables, the JSON records, the OCR part
and the cost-sensitive loss of a label order."""

import json
import re

import numpy as np
import pytest

from advgame.cli import main
from advgame.reproductions import fathony2018b as graphical

#: Six sequences (four for training), two splits, one strength and one (weighted) metric.
TINY = graphical.Settings(
    n_sequences=6,
    n_train=4,
    splits=2,
    grid=(1.0,),
    metrics=("absolute, weighted",),
    parts=("log-linear",),
)
#: The OCR part on the first 12 words of each fold, 2 training folds, one epoch.
TINY_OCR = graphical.Settings(
    n_sequences=6,
    n_train=4,
    splits=2,
    grid=(1.0,),
    metrics=(),
    parts=("ocr-hamming", "ocr-cost-sensitive"),
    ocr_folds=2,
    ocr_grid=(1.0,),
    ocr_epochs=1,
    ocr_words=12,
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
    assert "log-linear, absolute, weighted: SSVM, tuning and 2 splits ..." in captured.err
    printed = captured.out
    assert _columns(printed, "metric ") == ["metric", *graphical.MODELS, "paper"]
    assert "log-linear: make_ordinal_sequences(6), 2 splits of 4 train / 2 test" in printed
    (row,) = [line for line in printed.splitlines() if line.startswith("absolute, weighted")]
    assert row.endswith("0.29 / 0.36 / 0.29")  # Fathony et al. (2018b) Table 1 beside ours
    records = json.loads(out.read_text())["records"]
    assert [(r["part"], r["metric"]) for r in records] == [("log-linear", "absolute, weighted")]
    for model in graphical.MODELS:
        mean, spread, mark = records[0][model]
        assert 0.0 <= mean <= 2.0 and spread >= 0.0  # absolute loss of 3 labels: at most 2
        assert mark == ""  # 2 splits: too few for the Wilcoxon marks


def test_ocr_part_trains_on_one_fold_and_tests_on_the_others(capsys):
    records = graphical.run(settings=TINY_OCR, progress=False)
    assert [(r["part"], r["metric"]) for r in records] == [
        ("ocr-hamming", "Hamming"),
        ("ocr-cost-sensitive", "cost-sensitive"),
    ]
    for record in records:
        worst = 1.0 if record["metric"] == "Hamming" else 25.0  # |r(a) - r(b)| <= 25
        for model in graphical.OCR_MODELS:
            mean, spread, mark = record[model]
            assert 0.0 <= mean <= worst and spread >= 0.0 and mark == ""
        # 12 training words cannot show all 26 letters: test words with others are left out
        assert 0 < record["dropped"] < 2 * 9 * 12
    printed = capsys.readouterr().out
    assert "train on fold f, test on the other nine, f = 0..1" in printed
    assert _columns(printed, "metric ") == ["metric", *graphical.OCR_MODELS, "paper"]
    (row,) = [line for line in printed.splitlines() if line.startswith("cost-sensitive")]
    assert row.endswith("0.14 / 0.19 / 0.14")  # Fathony et al. (2018b) Table 2 beside ours


def test_cost_sensitive_matrix_is_ordinal_in_the_ranks():
    # order (2, 0, 1): label 2 has rank 0, label 0 rank 1, label 1 rank 2
    expected = np.array([[0, 1, 1], [1, 0, 2], [1, 2, 0]], dtype=float)
    np.testing.assert_array_equal(graphical.cost_sensitive_matrix([2, 0, 1]).matrix, expected)
    order = np.random.default_rng(3).permutation(9)
    L = graphical.cost_sensitive_matrix(order).matrix
    for i in range(8):  # neighbours in the order cost 1, the two ends k - 1
        assert L[order[i], order[i + 1]] == 1.0
    assert L[order[0], order[-1]] == 8.0
    with pytest.raises(ValueError, match="permutation of 0..k-1"):
        graphical.cost_sensitive_matrix([0, 2, 2])


def test_unknown_part_is_refused():
    with pytest.raises(ValueError, match=r"unknown parts \['facial'\]; the parts are"):
        graphical.run(settings=TINY, parts=("facial",), progress=False)
