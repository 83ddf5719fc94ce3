"""Hardening of the ``advgame`` command line (issue #23): file arguments must be regular files,
size arguments are capped, loss-matrix CSVs with a byte-order mark, semicolons or only a header,
``--version`` and one-line help, and ``advgame compare`` on a user's CSV file."""

import os
import re
import time
from dataclasses import replace

import numpy as np
import pytest

from advgame import __version__, cli
from advgame.benchmarks.protocol import Progress
from advgame.cli import (
    COMPARE_MAX_JOBS,
    MATRIX_MAX_ACTIONS,
    VERIFY_MAX_ENTRIES,
    VERIFY_MAX_K,
    VERIFY_MAX_ROWS,
    build_parser,
    main,
)
from advgame.losses import LossMatrix
from advgame.reproductions.fathony2018a import compare as fathony2018a
from advgame.reproductions.fathony2018a import protocol

#: cvxpy may flag Clarabel's answer as inaccurate at a weak regularisation.
pytestmark = pytest.mark.filterwarnings("ignore:Solution may be inaccurate")


def run_cli(capsys, *args):
    """Run ``advgame ARGS``; returns (exit code, stdout, stderr)."""
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_error(code, err, *messages):
    """Exit code 2 and one ``advgame: error:`` line, the last, holding every message (progress
    lines may come before it)."""
    assert code == 2, err
    lines = err.strip().splitlines()
    errors = [line for line in lines if line.startswith("advgame: error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0] and "Traceback" not in err, err
    missing = [m for m in messages if m not in errors[0]]
    assert not missing, f"{errors[0]!r} lacks {missing}"
    return errors[0]


@pytest.fixture
def fifo(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs")
    path = tmp_path / "pipe.csv"
    os.mkfifo(path)
    return path


@pytest.fixture
def nothing_runs(monkeypatch):
    """Any benchmark started fails the test: the checks must come first."""

    def refuse(name):
        raise AssertionError(f"benchmark {name} started")

    monkeypatch.setattr(cli, "_benchmark", refuse)


# ------------------------------------------------------------------ 1. regular files only
@pytest.mark.parametrize("command", ["explain", "verify"])
def test_matrix_refuses_dev_zero(capsys, command):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    code, _, err = run_cli(capsys, command, "--matrix", "/dev/zero")
    one_error(code, err, "/dev/zero: Is a character device; --matrix FILE must be a regular file")


@pytest.mark.parametrize("command", ["explain", "verify"])
def test_matrix_refuses_a_fifo_without_opening_it(capsys, fifo, no_hang, command):
    code, _, err = run_cli(capsys, command, "--matrix", fifo)
    one_error(code, err, "Is a named pipe (FIFO); --matrix FILE must be a regular file")


def test_matrix_refuses_a_directory(capsys, tmp_path):
    code, _, err = run_cli(capsys, "explain", "--matrix", tmp_path)
    one_error(code, err, "Is a directory; --matrix FILE must be a regular file")


def test_missing_matrix_names_the_option(capsys):
    code, _, err = run_cli(capsys, "verify", "--matrix", "absent.csv")
    one_error(code, err, "--matrix: No such file or directory: absent.csv")


def test_loss_matrix_reader_refuses_non_regular_files(fifo, no_hang):
    with pytest.raises(ValueError, match="must be a regular file"):
        LossMatrix.from_csv(fifo)
    if os.path.exists("/dev/zero"):
        with pytest.raises(ValueError, match="character device"):
            LossMatrix.from_csv("/dev/zero")


def test_data_refuses_a_fifo_and_a_device(capsys, fifo, no_hang):
    code, _, err = run_cli(capsys, "compare", "--data", fifo, "--target", "y")
    one_error(code, err, "Is a named pipe (FIFO); --data FILE must be a regular file")
    if os.path.exists("/dev/zero"):
        code, _, err = run_cli(capsys, "compare", "--data", "/dev/zero", "--target", "y")
        one_error(code, err, "/dev/zero: Is a character device; --data FILE must be")
    code, _, err = run_cli(capsys, "compare", "--data", "absent.csv", "--target", "y")
    one_error(code, err, "--data: No such file or directory: absent.csv")


def test_out_is_checked_before_the_benchmark_runs(capsys, tmp_path, nothing_runs):
    fifo = tmp_path / "out.json"
    if hasattr(os, "mkfifo"):
        os.mkfifo(fifo)
        code, _, err = run_cli(capsys, "bench", "oracle", "--out", fifo)
        one_error(code, err, "Is a named pipe (FIFO); --out FILE must be a regular file")
    code, _, err = run_cli(capsys, "reproduce", "fathony2018a", "--out", tmp_path / "no" / "r.md")
    one_error(code, err, "--out", "does not exist")
    code, _, err = run_cli(capsys, "bench", "graph", "--out", tmp_path / "r.txt")
    one_error(code, err, "--out must end with .json or .md")
    plain = tmp_path / "file"
    plain.write_text("")
    code, _, err = run_cli(capsys, "bench", "all", "--out", plain)
    one_error(code, err, "--out DIR", "is not a directory")
    code, _, err = run_cli(capsys, "reproduce", "all", "--out", plain)
    one_error(code, err, "--out DIR", "is not a directory")


# ---------------------------------------------------------------------------- 2. size caps
def test_verify_n_is_capped(capsys):
    code, _, err = run_cli(capsys, "verify", "zero-one", "--k", "3", "--n", "1000000000")
    one_error(
        code,
        err,
        "argument --n: must be at most 100,000 (the cap VERIFY_MAX_ROWS); got 1,000,000,000",
    )
    assert VERIFY_MAX_ROWS == 100_000


def test_verify_k_and_n_times_k_are_capped(capsys):
    code, _, err = run_cli(capsys, "verify", "zero-one", "--k", VERIFY_MAX_K + 1)
    one_error(code, err, "--k must be at most 1,000", "VERIFY_MAX_K", "got --k 1,001")
    code, _, err = run_cli(capsys, "verify", "ordinal", "--k", "1000", "--n", "2001")
    one_error(
        code,
        err,
        "--n 2,001 rows x 1,000 labels = 2,001,000 potentials",
        f"over the limit of {VERIFY_MAX_ENTRIES:,} (VERIFY_MAX_ENTRIES)",
        "use --n <= 2,000",
    )


def test_matrix_sizes_are_capped(capsys, tmp_path):
    wide = tmp_path / "wide.csv"
    wide.write_text(
        "\n".join(",".join("0" if i == j else "1" for j in range(31)) for i in range(31))
    )
    code, _, err = run_cli(capsys, "explain", "--matrix", wide)
    one_error(code, err, "31 labels (columns), over the 30", "use 'advgame verify'")
    tall = tmp_path / "tall.csv"
    tall.write_text("\n".join("0,1" for _ in range(MATRIX_MAX_ACTIONS + 1)))
    code, _, err = run_cli(capsys, "verify", "--matrix", tall)
    one_error(code, err, "2,001 actions (rows), over the limit of 2,000 (MATRIX_MAX_ACTIONS)")


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--splits", "101"],
            "argument --splits: must be at most 100 (the cap MAX_COMPARE_SPLITS)",
        ),
        (["--splits", "0"], "argument --splits: must be a positive integer; got 0"),
        (["--bins", "1"], "argument --bins: must be an integer >= 2; got 1"),
        (["--n-jobs", "64"], f"must be at most {COMPARE_MAX_JOBS} (the cap COMPARE_MAX_JOBS)"),
        (["--max-rows", "100000"], "must be at most 5,000 (the cap MAX_COMPARE_ROWS)"),
        (["--bins", "50"], "argument --bins: must be at most 20 (the cap MAX_ORDINAL_CLASSES)"),
        (["--test-size", "1.5"], "argument --test-size: must be a fraction strictly between"),
        (["--random-state", "-1"], "argument --random-state: must be a non-negative integer"),
        (["--loss", "hinge"], "argument --loss: invalid choice: 'hinge'"),
    ],
)
def test_compare_arguments_are_checked(capsys, tmp_path, args, message):
    code, _, err = run_cli(capsys, "compare", "--data", "x.csv", "--target", "y", *args)
    one_error(code, err, message)


def test_compare_refuses_too_many_rows_without_max_rows(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(fathony2018a, "MAX_COMPARE_ROWS", 20)
    path = tmp_path / "big.csv"
    path.write_text("x,y\n" + "".join(f"{i},{i % 2}\n" for i in range(30)))
    code, _, err = run_cli(capsys, "compare", "--data", path, "--target", "y")
    one_error(code, err, "30 rows, over the 20 (MAX_COMPARE_ROWS)", "--max-rows")


# ----------------------------------------------------------- 3-4. loss-matrix CSV encodings
def test_matrix_with_a_utf8_bom_is_read_as_written(capsys, tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf0,1,1\n1,0,1\n1,1,0\n")
    code, out, _ = run_cli(capsys, "explain", "--matrix", path)
    assert code == 0
    assert "recognised structure: zero_one(weight=1)" in out
    assert "total: 7 extreme points" in out
    assert LossMatrix.from_csv(path).matrix.shape == (3, 3)


def test_matrix_with_a_bom_and_a_header(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_text("\ufeffcat,dog\n0,1\n1,0\n", encoding="utf-8")
    assert LossMatrix.from_csv(path).labels == ("cat", "dog")


def test_whitespace_separated_matrix(tmp_path):
    path = tmp_path / "spaces.txt"
    path.write_text("0 1 2\n1\t0 1\n2 1 0\n")
    assert LossMatrix.from_csv(path).structure.kind == "ordinal"


def test_semicolon_matrix_gives_one_clear_error(capsys, tmp_path):
    path = tmp_path / "semi.csv"
    path.write_text("0;1;1\n1;0;1\n1;1;0\n")
    code, _, err = run_cli(capsys, "explain", "--matrix", path)
    line = one_error(
        code,
        err,
        f"{path}: no losses found: 3 lines and no cell that is a number (line 1: '0;1;1')",
        "Expected comma- or whitespace-separated numbers",
        "The lines contain ';'",
    )
    assert "shape" not in line


def test_header_only_matrix_gives_one_clear_error(capsys, tmp_path):
    path = tmp_path / "header.csv"
    path.write_text("a,b,c\n")
    code, _, err = run_cli(capsys, "verify", "--matrix", path)
    line = one_error(
        code,
        err,
        f"{path}: no losses found: one line, 'a,b,c', and no number (a header line alone?)",
        "header line of label names",
    )
    assert "shape" not in line


# ------------------------------------------------------------------- 5. --version and --help
def test_version(capsys):
    code, out, err = run_cli(capsys, "--version")
    assert code == 0 and out == f"advgame {__version__}\n" and not err


def test_every_command_has_a_one_line_help(capsys):
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command")
    code, out, _ = run_cli(capsys, "--help")
    assert code == 0
    assert set(commands.choices) >= {"explain", "verify", "demo", "bench", "reproduce", "compare"}
    for name in commands.choices:
        line = next((line for line in out.splitlines() if line.split()[:1] == [name]), None)
        assert line is not None and len(line.split()) > 2, f"{name} has no one-line help: {out}"


# ---------------------------------------------------------------------------- 7. compare
#: Two folds, one value of lambda, no refinement: the protocol's path at the smallest cost.
TINY = replace(
    fathony2018a.COMPARE,
    linear=fathony2018a.Tuning(folds=2, grid=(1e-2,), widths=(None,), refine=()),
)


def _tiny_csv(tmp_path, rows=60, ordinal=False):
    """Three classes along one feature, a noise feature, BOM and string labels."""
    rng = np.random.default_rng(0)
    label = np.arange(rows) % 3
    signal_ = label + 0.3 * rng.standard_normal(rows)
    noise = rng.standard_normal(rows)
    names = np.array(["1", "2", "3"]) if ordinal else np.array(["low", "mid", "high"])
    text = "signal,noise,grade\n" + "".join(
        f"{a:.4f},{b:.4f},{c}\n" for a, b, c in zip(signal_, noise, names[label])
    )
    path = tmp_path / "tiny.csv"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    return path


CASES = {
    "zero_one": ("Zero-one loss: accuracy %", fathony2018a.ZERO_ONE_COLUMNS),
    "abstain": ("Abstention loss with alpha = 0.5", fathony2018a.ABSTAIN_COLUMNS),
    "ordinal": ("Ordinal loss: mean absolute error", fathony2018a.ORDINAL_COLUMNS),
}


@pytest.mark.parametrize("loss", list(CASES))
def test_compare_prints_the_table_and_progress(capsys, tmp_path, monkeypatch, loss):
    monkeypatch.setattr(fathony2018a, "COMPARE", TINY)
    path = _tiny_csv(tmp_path, ordinal=loss == "ordinal")
    start = time.perf_counter()
    code, out, err = run_cli(
        capsys, "compare", "--data", path, "--target", "grade", "--loss", loss, "--splits", "2"
    )
    seconds = time.perf_counter() - start
    assert code == 0, err
    title, columns = CASES[loss]
    lines = out.splitlines()
    assert lines[0].startswith("advgame compare tiny.csv")
    assert 'Fathony et al., "Consistent Robust Adversarial Prediction for General Multiclass' in out
    assert "60 rows, 2 features, 3 classes" in out
    assert "2 seeded stratified 70/30 splits (random state 0)" in out
    at = next(i for i, line in enumerate(lines) if line.startswith(title))
    assert re.split(r"\s{2,}", lines[at + 1].strip()) == ["data", *columns]
    row = lines[at + 2]
    assert row.startswith("tiny.csv")
    cells = re.findall(r"(\d+\.\d+)\((\d+\.\d+)\)", row)
    assert len(cells) == len(columns)
    means = [float(mean) for mean, _ in cells]
    if loss == "zero_one":
        assert means[0] > 70.0  # AL01 on an easy problem: well above chance (33%)
    else:
        assert all(0.0 <= m <= 2.0 for m in means)
    assert "# *" not in out  # 2 splits: too few for the Wilcoxon marks
    assert "seed 000" not in out and "seed000" not in out
    progress = err.splitlines()
    assert progress[0] == "advgame compare: read tiny.csv: 60 rows, 2 features, target 'grade'"
    assert any(f"tiny.csv ({loss}, linear): tuning on 42 rows ..." in p for p in progress)
    assert any("tuning stage 1:" in p for p in progress)
    assert progress[-1].endswith(f"tiny.csv ({loss}, linear): split 2/2 (42/18) ...")
    print(f"compare {loss}: {seconds:.1f} s")
    assert seconds < 60


def test_compare_uses_the_reproduce_protocol(monkeypatch, tmp_path):
    """``compare`` and ``reproduce fathony2018a`` both run :func:`fathony2018a.evaluate` (one protocol)."""
    calls = []
    original = fathony2018a.evaluate

    def spy(*args, **kwargs):
        calls.append(kwargs["dataset"])
        return original(*args, **kwargs)

    monkeypatch.setattr(fathony2018a, "evaluate", spy)
    X = np.r_[np.zeros((10, 1)), np.ones((10, 1))] + np.linspace(0, 0.1, 20)[:, None]
    y = np.repeat(["a", "b"], 10)
    records, report = fathony2018a.compare(X, y, splits=1, settings=TINY, name="toy")
    assert calls == ["toy"] and records[0]["dataset"] == "toy"
    assert tuple(records[0]["columns"]) == fathony2018a.ZERO_ONE_COLUMNS
    settings = replace(
        TINY,
        splits=1,
        multiclass=(),
        ordinal=("machinecpu",),
        ordinal_rbf=(),
        rows={"machinecpu": 40},
    )
    progress = Progress("fathony2018a")
    fathony2018a._experiment(
        "ordinal", "linear", "machinecpu", settings, np.random.default_rng(0), progress
    )
    assert calls == ["toy", "machinecpu"]


def test_stratified_splits_keep_every_class_on_both_sides():
    y = np.repeat([0, 1, 2], [30, 6, 2])
    pairs = protocol._splits(y.size, 5, None, np.random.default_rng(0), 0.3, strata=y)
    for train, test in pairs:
        assert sorted(np.r_[train, test].tolist()) == list(range(y.size))
        assert np.bincount(y[test]).tolist() == [9, 2, 1]
        assert np.bincount(y[train]).tolist() == [21, 4, 1]
    assert not np.array_equal(pairs[0][1], pairs[1][1])  # seeded, but each split differs


@pytest.mark.parametrize(
    "text, args, message",
    [
        ("a,b\n1,x\n", ["--target", "y"], "no column named 'y'; the header has 'a', 'b'"),
        (
            "a,colour,y\n1,red,u\n",
            ["--target", "y"],
            "feature column 'colour' (e.g. 'red') holds text, not numbers",
        ),
        (
            "a,y\n1,u\n2,u\n3,v\n",
            ["--target", "y"],
            "2 class(es) with fewer: 'u' (2 rows), 'v' (1 row)",
        ),
        ("a,y\n1,u\n2,u\n", ["--target", "y"], "a comparison needs at least 2 classes"),
        (
            "a,y\n" + "".join(f"{i},{'uv'[i % 2]}\n" for i in range(8)),
            ["--target", "y", "--loss", "ordinal"],
            "the ordinal loss needs ordered classes: a numeric target",
        ),
        (
            "a,y\n" + "".join(f"{i},{i}\n" for i in range(40)),
            ["--target", "y", "--loss", "ordinal"],
            "40 distinct values, over 20 ordinal classes; for a continuous target give bins",
        ),
        (
            "a,y\n" + "".join(f"{i},{i % 2}\n" for i in range(6)),
            ["--target", "y"],
            "6 rows are too few: the 3-fold tuning needs at least 6 training rows",
        ),
        ("a,y\n1,2\n", ["--target", "y", "--bins", "3"], "--bins (equal-frequency classes"),
    ],
    ids=[
        "missing-target",
        "text-feature",
        "one-row-class",
        "one-class",
        "text-ordinal",
        "continuous-ordinal",
        "too-few-rows",
        "bins-without-ordinal",
    ],
)
def test_compare_data_errors(capsys, tmp_path, text, args, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    code, _, err = run_cli(capsys, "compare", "--data", path, *args)
    one_error(code, err, message)


def test_compare_with_bins_and_a_position_target(capsys, tmp_path, monkeypatch):
    """A continuous target in 3 equal-frequency bins, given by position (-1: the last column)."""
    monkeypatch.setattr(fathony2018a, "COMPARE", TINY)
    rng = np.random.default_rng(1)
    x = rng.standard_normal(45)
    path = tmp_path / "reg.csv"
    path.write_text("x,z,t\n" + "".join(f"{a},{b},{2 * a + 0.1 * b}\n" for a, b in zip(x, x**2)))
    code, out, err = run_cli(
        capsys,
        "compare",
        "--data",
        path,
        "--target",
        "-1",
        "--loss",
        "ordinal",
        "--bins",
        "3",
        "--splits",
        "1",
    )
    assert code == 0, err
    assert "3 equal-frequency bins of the target" in out
    assert "Ordinal loss: mean absolute error in classes" in out


def test_compare_with_a_small_class(capsys, tmp_path, monkeypatch):
    """Three rows of a class suffice: stratified splits and folds give every training fold two
    classes (with plain folds a fold could hold one class and the fit fail)."""
    monkeypatch.setattr(
        fathony2018a, "COMPARE", replace(TINY, linear=replace(TINY.linear, folds=3))
    )
    rng = np.random.default_rng(0)
    path = tmp_path / "imbalanced.csv"
    rows = [f"{rng.normal()},a\n" for _ in range(40)] + [
        f"{3 + rng.normal()},b\n" for _ in range(3)
    ]
    path.write_text("x,y\n" + "".join(rows))
    code, out, err = run_cli(capsys, "compare", "--data", path, "--target", "y", "--splits", "2")
    assert code == 0, err
    assert "43 rows, 1 feature, 2 classes (a, b)" in out
    path.write_text("x,y\n" + "".join(rows[:-1]))
    code, _, err = run_cli(capsys, "compare", "--data", path, "--target", "y")
    one_error(code, err, "every class needs at least 3 rows", "'b' (2 rows)")


def test_compare_max_rows_subsamples_each_split(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(fathony2018a, "COMPARE", TINY)
    path = _tiny_csv(tmp_path, rows=90)
    args = ("--target", "grade", "--splits", "1", "--max-rows", "60", "--test-size", "0.25")
    code, out, err = run_cli(capsys, "compare", "--data", path, *args)
    assert code == 0, err
    assert "90 rows, 2 features" in out and "60 rows subsampled per split" in out
    assert "1 seeded stratified 75/25 splits" in out
    assert "tuning on 45 rows" in err and "split 1/1 (45/15)" in err
