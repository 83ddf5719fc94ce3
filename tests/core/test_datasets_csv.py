"""``advgame.datasets.load_csv``: a user's data CSV (header row, a target column), and the guarded
reader behind it (``read_text_file``: regular files only, bounded, UTF-8 with or without BOM)."""

import os
import sys

import numpy as np
import pytest

from advgame._files import check_regular_file, read_text_file
from advgame.datasets import MAX_CSV_BYTES, load_csv
from advgame.exceptions import SizeLimitError


def write(tmp_path, text, name="data.csv"):
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_reads_features_and_string_labels(tmp_path):
    text = "\ufeffsepal length, sepal width ,species\n5.1,3.5,setosa\n\n7.0, 3.2 ,versicolor\n"
    X, y = load_csv(write(tmp_path, text), "species")
    np.testing.assert_array_equal(X, [[5.1, 3.5], [7.0, 3.2]])
    assert X.dtype == np.float64 and X.flags.writeable
    assert y.tolist() == ["setosa", "versicolor"]


def test_utf8_bom_does_not_rename_the_first_column(tmp_path):
    path = write(tmp_path, b"\xef\xbb\xbflabel,x\n1,0.5\n2,1.5\n")
    X, y = load_csv(path, "label")
    np.testing.assert_array_equal(X, [[0.5], [1.5]])
    assert y.tolist() == [1, 2]


def test_target_by_position_and_label_types(tmp_path):
    path = write(tmp_path, "a,b,c\n1,2,3\n4,5,6\n")
    X, y = load_csv(path, 0)
    np.testing.assert_array_equal(X, [[2, 3], [5, 6]])
    assert y.dtype == np.int64 and y.tolist() == [1, 4]
    X, y = load_csv(path, -1)
    np.testing.assert_array_equal(X, [[1, 2], [4, 5]])
    X, y = load_csv(path, "1")  # as on the command line: no column is named '1'
    np.testing.assert_array_equal(X, [[1, 3], [4, 6]])
    _, y = load_csv(write(tmp_path, "x,t\n1,0.5\n2,1.0\n", "f.csv"), "t")
    assert y.dtype == np.float64 and y.tolist() == [0.5, 1.0]


def test_a_column_named_with_digits_wins_over_a_position(tmp_path):
    path = write(tmp_path, "x,0\n1,7\n2,8\n")
    X, y = load_csv(path, "0")
    assert y.tolist() == [7, 8] and X.ravel().tolist() == [1.0, 2.0]


def test_semicolon_delimiter(tmp_path):
    X, y = load_csv(write(tmp_path, "a;b;y\n1;2;u\n3;4;v\n"), "y", delimiter=";")
    np.testing.assert_array_equal(X, [[1, 2], [3, 4]])
    assert y.tolist() == ["u", "v"]


@pytest.mark.parametrize(
    "text, target, messages",
    [
        ("a,b,y\n1,2,u\n", "label", ["no column named 'label'", "'a', 'b', 'y'"]),
        ("a,b,y\n1,2,u\n", 3, ["target column 3 is out of range", "3 columns"]),
        (
            "a,colour,size,y\n1,red,big,u\n2,blue,small,v\n",
            "y",
            ["feature columns 'colour' (e.g. 'red'), 'size' (e.g. 'big')", "text", "one-hot"],
        ),
        ("a,b,y\n1,,u\n2,3,v\n", "y", ["empty or NaN cells: line 2, column 'b'"]),
        ("a,b,y\n1,2,u\n2,nan,v\n", "y", ["line 3, column 'b'", "finite number"]),
        ("a,b,y\n1,2,\n", "y", ["line 2, column 'y'"]),
        ("a,b,y\n1,inf,u\n", "y", ["infinite cells: line 2, column 'b'"]),
        ("", "y", ["the file is empty", "header row of column names"]),
        ("\n \n", "y", ["the file is empty"]),
        ("a,b,y\n", "y", ["only a header line (a, b, y) and no data rows"]),
        ("1,2,3\n4,5,6\n", "y", ["line 1 holds numbers only", "Add a header line"]),
        ("a,b,y\n1,2,u\n1,2\n", "y", ["line 3 has 2 cells but the header has 3"]),
        ("a;b;y\n1;2;u\n", "y", ["no column named 'y'", "holds ';'", "delimiter=';'"]),
        ("y,y,a\n1,2,3\n", "y", ["2 columns are named 'y'", "by position"]),
        ("y\n1\n2\n", "y", ["the target 'y' is the only column"]),
        (b"a,y\n\xff\xfe,1\n", "y", ["not a readable CSV text file", "UTF-8"]),
    ],
    ids=[
        "missing-target",
        "position-out-of-range",
        "text-features",
        "empty-cell",
        "nan-cell",
        "missing-label",
        "infinite-cell",
        "empty-file",
        "blank-file",
        "header-only",
        "no-header",
        "ragged",
        "semicolons",
        "duplicate-target",
        "target-only",
        "not-utf8",
    ],
)
def test_clear_errors(tmp_path, text, target, messages):
    path = write(tmp_path, text)
    with pytest.raises(ValueError) as info:
        load_csv(path, target)
    message = str(info.value)
    assert message.startswith(str(path)), message  # names the file
    missing = [m for m in messages if m not in message]
    assert not missing, f"{message!r} lacks {missing}"


def test_target_of_a_wrong_type(tmp_path):
    with pytest.raises(TypeError, match="column name"):
        load_csv(write(tmp_path, "a,y\n1,2\n"), 1.5)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_csv(tmp_path / "absent.csv", "y")


def test_refuses_a_directory(tmp_path):
    with pytest.raises(ValueError, match="Is a directory; the data file must be a regular file"):
        load_csv(tmp_path, "y")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_refuses_dev_zero_without_reading_it():
    with pytest.raises(ValueError, match="Is a character device"):
        load_csv("/dev/zero", "y")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_refuses_a_fifo_without_opening_it(tmp_path, no_hang):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    with pytest.raises(
        ValueError, match=r"Is a named pipe \(FIFO\); the data file must be a regular file"
    ):
        load_csv(fifo, "y")
    with pytest.raises(ValueError, match="FIFO"):
        check_regular_file(fifo, "the data file")


def test_refuses_a_file_over_the_limit_before_reading_it(tmp_path):
    path = write(tmp_path, "a,y\n1,2\n3,4\n")
    with pytest.raises(
        SizeLimitError, match=r"has 12 bytes, over the limit of 8 \(MAX_CSV_BYTES\)"
    ):
        load_csv(path, "y", max_bytes=8)
    assert MAX_CSV_BYTES == 20_000_000


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux")
def test_read_is_bounded_even_when_the_reported_size_is_zero():
    """Files under /proc report size 0; at most ``max_bytes + 1`` bytes are read."""
    assert os.stat("/proc/self/status").st_size == 0
    with pytest.raises(SizeLimitError, match="more than 10"):
        read_text_file("/proc/self/status", 10)


def test_many_rows_are_read_compactly(tmp_path):
    rows = "".join(f"{i},{i % 7}.5,{'abc'[i % 3]}\n" for i in range(20_000))
    X, y = load_csv(write(tmp_path, "a,b,y\n" + rows), "y")
    assert X.shape == (20_000, 2) and X[-1, 0] == 19_999.0
    assert set(y.tolist()) == {"a", "b", "c"}
