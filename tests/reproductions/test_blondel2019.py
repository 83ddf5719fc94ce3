"""``advgame bench projection-losses`` (:mod:`advgame.reproductions.blondel2019`) on a tiny
instance (the ``--quick`` run is in the slow tier): the CLI, the printed tables and the JSON
records."""

import json
import re
from dataclasses import replace

import numpy as np

from advgame.cli import main
from advgame.reproductions import blondel2019 as pl

#: One split, one alpha, iris, 100 yeast rows and machine CPU in 5 bins.
TINY = replace(
    pl.QUICK,
    splits=1,
    grid=(1.0,),
    matching_grid=(1e-2,),
    ranking=("iris",),
    ordinal=("machinecpu/5",),
    multilabel_rows=100,
)


def _columns(printed, title):
    """The cells of the header line under the table titled ``title ...``."""
    lines = printed.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    return re.split(r"\s{2,}", lines[start + 1].strip())


def test_bench_projection_losses_tiny_writes_json(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(pl, "QUICK", TINY)
    out = tmp_path / "projection_losses.json"
    assert main(["bench", "projection-losses", "--quick", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "ordinal machinecpu/5: split 1/1 ..." in captured.err
    printed = captured.out
    ranking = [column for table, column, *_ in pl.RANKING_COLUMNS if table == "Euclidean"]
    kl = [column for table, column, *_ in pl.RANKING_COLUMNS if table == "KL"]
    table3 = ["B/B", *pl.QUICK.table3]
    multilabel = [column for column, _, _ in pl.MULTILABEL_COLUMNS]
    ordinal = ["median", "ridge", *(column for column, _ in pl.ORDINAL_COLUMNS)]
    assert _columns(printed, "Label ranking, Hamming loss % (Blondel (2019) Table 1") == [
        "data",
        *ranking,
    ]
    assert _columns(printed, "Label ranking, Hamming loss %, KL") == ["data", *kl]
    assert _columns(printed, "Label ranking, Hamming loss %, Birkhoff") == ["data", *table3]
    for title in ("Multilabel, accuracy", "Multilabel, example", "Multilabel, micro"):
        assert _columns(printed, title) == ["data", *multilabel]
    assert _columns(printed, "Ordinal regression") == ["data", *ordinal]
    assert (
        "1 random 80/20 splits (scene: its own train/test split; red wine and contact lenses: "
        "stratified 75/25, the ordinal benchmark's); alpha from 1 values in [1, 1]" in printed
    )
    records = json.loads(out.read_text())["records"]
    assert [(r["table"], r["dataset"]) for r in records] == [
        ("Euclidean", "iris"),
        ("KL", "iris"),
        ("Table 3", "iris"),
        ("accuracy", "yeast"),
        ("micro F1", "yeast"),
        ("F1", "yeast"),
        ("ordinal", "machinecpu/5"),
    ]
    columns = {r["table"]: r["columns"] for r in records}
    assert list(columns["Euclidean"]) == ranking and list(columns["KL"]) == kl
    assert list(columns["Table 3"]) == table3
    assert all(list(columns[t]) == multilabel for t in ("accuracy", "micro F1", "F1"))
    assert list(columns["ordinal"]) == ordinal
    for r in records:  # percentages, and MAEs of 5 classes; one split: sd 0, no marks
        upper = 4.0 if r["table"] == "ordinal" else 100.0
        assert all(
            0 <= mean <= upper and (sd, mark) == (0, "") for mean, sd, mark in r["columns"].values()
        )


def test_yeast_splits_have_the_papers_sizes():
    """Yeast's vendored file has no train/test column: its random splits keep the MULAN
    split's sizes (Blondel 2019, Table 5: 1,500 training and 917 test rows), each row in one
    part; a subsample (``multilabel_rows``) falls back to 80/20."""
    from advgame.datasets import load

    data = load("multilabel/yeast")
    settings = replace(pl.FULL, splits=2)
    X, Y, splits = pl._multilabel_splits("yeast", data, settings, np.random.default_rng(0))
    assert len(splits) == 2 and X.shape[0] == Y.shape[0] == 2417
    for train, test in splits:
        assert (train.size, test.size) == (1500, 917)
        assert np.array_equal(np.sort(np.r_[train, test]), np.arange(2417))
    small = replace(settings, multilabel_rows=100)
    _, _, splits = pl._multilabel_splits("yeast", data, small, np.random.default_rng(0))
    assert [(train.size, test.size) for train, test in splits] == [(80, 20), (80, 20)]


def test_full_run_is_its_parts(monkeypatch):
    """The full run (no settings, no part) prints exactly what its parts print one by one:
    each part draws from its own stream, and contributes the tables of ``PART_TABLES`` (a
    Table 3 part's repeat of Table 1's B/B column on its own splits is not a Table 1 row)."""
    ranking = replace(TINY, ranking_columns=(("Euclidean", "B/B"), ("KL", "R+/B")), table3=())
    table3 = replace(TINY, ranking_columns=(("Euclidean", "B/B"),), table3=("P/P ranks",))
    parts = {
        "tables-1-2": replace(ranking, multilabel=(), ordinal=()),
        "table-3-small": replace(table3, multilabel=(), ordinal=()),
        "multilabel-ordinal": replace(TINY, ranking=()),
    }
    monkeypatch.setattr(pl, "PARTS", parts)
    monkeypatch.setattr(pl, "FULL", TINY)
    quiet = {"print_fn": lambda *a: None, "progress": False}
    full = pl.run(**quiet)
    one_by_one = [
        record
        for name in parts
        for record in pl.run(parts=(name,), **quiet)
        if record["table"] in pl.PART_TABLES[name]
    ]
    assert full == one_by_one
    assert [(r["table"], r["dataset"]) for r in full][:3] == [
        ("Euclidean", "iris"),
        ("KL", "iris"),
        ("Table 3", "iris"),
    ]
    assert {r["table"] for r in full} >= {"accuracy", "F1", "ordinal"}
    # the Table 3 part's own B/B (Table 1) row is left out, its Table 3 keeps B/B first
    assert sum(r["table"] == "Euclidean" for r in full) == 1
    assert list(full[2]["columns"]) == ["B/B", "P/P ranks"]


def test_matching_is_left_out_where_skipped_and_shown_as_a_dash(monkeypatch):
    """A data set of ``MATCHING_SKIPPED`` gets every ranking column but the matching one (the
    exact Birkhoff game, not in the paper); the table prints ``-`` in its place, beside a set
    that has it, and takes its columns from every record, not the first."""
    settings = replace(
        TINY,
        ranking=("iris", "wine"),
        ranking_columns=(("Euclidean", "B/B"), ("Euclidean", "matching")),
        table3=(),
    )
    monkeypatch.setattr(pl, "MATCHING_SKIPPED", {"iris": "for the test"})
    progress = pl.Progress("test", False)
    records = pl.label_ranking(settings, np.random.default_rng(0), progress)
    assert [(r["dataset"], list(r["columns"])) for r in records] == [
        ("iris", ["B/B"]),
        ("wine", ["B/B", "matching"]),
    ]
    lines = pl._table("T", records, pl._published()["Euclidean"], 2)
    assert re.split(r"\s{2,}", lines[1].strip()) == ["data", "B/B", "matching"]
    iris = next(line for line in lines if line.startswith("iris"))
    assert iris.split()[-1] == "-"
    wine_paper = lines[lines.index(next(line for line in lines if line.startswith("wine"))) + 1]
    assert wine_paper.split() == ["paper", "1.85", "-"]


def test_glass_and_vowel_have_the_papers_values_and_their_own_part():
    """Glass and vowel (Cheng et al.'s label-ranking versions, vendored) carry Blondel's (2019)
    published values in Tables 1-3 and run as one part; the four earlier sets keep theirs."""
    papers = pl._published()
    assert papers["Euclidean"]["glass"]["B/B"] == 4.65
    assert papers["KL"]["vowel"]["B/B"] == 9.17
    assert papers["Table 3"]["vowel"]["P/P D=3 order"] == 10.21
    assert pl.PARTS["glass-vowel"].ranking == ("glass", "vowel")
    assert pl.PARTS["tables-1-2"].ranking == ("iris", "wine", "vehicle", "authorship")
    covered = [name for part in pl.PARTS.values() for name in part.ranking]
    assert sorted(set(covered)) == sorted(pl.FULL.ranking)
    assert set(pl.PART_TABLES) == set(pl.PARTS)


def test_contact_lenses_is_an_ordinal_row_with_its_classes_in_order():
    """Weka's contact lenses (Blondel 2019, Table 4): the nominal attributes one-hot, the lens
    classes as 0 (none) < 1 (soft) < 2 (hard), the paper's row beside it."""
    X, target, bins = pl._ordinal_data("contact-lenses")
    assert X.shape == (24, 9) and bins is None
    assert np.array_equal(np.bincount(target.astype(int)), [15, 5, 4])
    assert pl._published()["ordinal"]["contact-lenses"]["O/O"] == 0.17
    assert pl.FULL.ordinal[-1] == "contact-lenses"  # last: the earlier rows' draws unchanged


def test_benchmark_rows_are_split_as_the_ordinal_benchmark_is():
    """Red wine and contact lenses get stratified 75/25 holdouts (Gutiérrez et al. 2016): six of
    contact lenses' 24 rows in test, the classes in proportion, so the median baseline (class 0
    from any training part) scores (0 * 4 + 1 + 2) / 6 = 0.5, the published value, on every
    split; the other rows keep the random 80/20 splits."""
    assert set(pl.BENCHMARK_ORDINAL) <= set(pl.PAPER_ORDINAL)
    target = pl._ordinal_data("contact-lenses")[1].astype(int)
    splits = pl.stratified_splits(target, 5, np.random.default_rng(0))
    assert len(splits) == 5
    for train, test in splits:
        assert len(test) == 6 and len(np.intersect1d(train, test)) == 0
        assert len(train) + len(test) == 24
        assert np.array_equal(np.bincount(target[test], minlength=3), [4, 1, 1])
        median = np.median(target[train]).round()
        assert np.mean(np.abs(median - target[test])) == 0.5
    settings = replace(pl.QUICK, ordinal=("contact-lenses",), splits=2, grid=(1.0,))
    record = pl.ordinal(settings, np.random.default_rng(0), pl.Progress("t", None))[0]
    assert record["splits"]["median"] == [0.5, 0.5]
