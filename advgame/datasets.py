"""Benchmark data vendored with advgame (UCI-derived; see ``advgame/data/NOTICE.md``).

Each file is the shared benchmark CSV, gzip-compressed and verified against the SHA-256 in
``MANIFEST.csv`` on load.  Multiclass and ordinal files hold features and a last column ``y``;
label-ranking files hold features and ``k`` rank columns ``r0..r{k-1}`` (1 = best); the
multilabel file holds features and ``L`` 0/1 columns ``label_0..label_{L-1}``.
Binary files (the six UCI sets of Farnia and Tse 2016, Table 1) hold features and a last column
``y`` of two string labels; ``binary/adult`` also has the UCI train/test split (``Dataset.split``).
Categorical feature columns (abalone's ``sex``, the binary sets' attributes) are one-hot encoded
as ``name=value`` columns, a missing (empty) cell being one more category ``name=?`` (the UCI
mark; for votes it means "neither yea nor nay"); a missing cell of a numeric column is NaN, for
the user's imputer.  String class labels are kept as strings (scikit-learn accepts them).  The ordinal
files keep the raw regression target: :func:`quantile_bins` turns it into ordered classes as the
benchmark protocol describes (equal-frequency bins, usually 5 or 10).
"""

import csv
import gzip
import hashlib
import io
import itertools
import math
import os
from array import array
from dataclasses import dataclass
from importlib import resources

import numpy as np

from ._files import read_text_file

__all__ = [
    "Dataset",
    "list_datasets",
    "load",
    "load_csv",
    "load_ocr_letters",
    "make_ordinal_sequences",
    "make_prediction_set_example1",
    "make_prediction_set_example2",
    "quantile_bins",
    "OUTLIER",
    "MAX_CSV_BYTES",
]

#: :func:`load_csv` refuses larger files before reading them (20 MB: at most 10 million cells,
#: 80 MB as float64; the whole read stays well under 1 GiB).
MAX_CSV_BYTES = 20_000_000

#: Label of the outliers drawn by the prediction-set generators (not one of the classes).
OUTLIER = -1
#: Example 1's outliers: four rectangles forming a frame 8 <= max(|x1|, |x2|) <= 10 around the
#: classes (Wang and Qiao, 2022, draw them on "four rectangle regions" shown only in its Figure 1).
_EXAMPLE1_RECTANGLES = (
    ((8.0, 10.0), (-10.0, 10.0)),
    ((-10.0, -8.0), (-10.0, 10.0)),
    ((-8.0, 8.0), (8.0, 10.0)),
    ((-8.0, 8.0), (-10.0, -8.0)),
)


@dataclass
class Dataset:
    """A loaded data set: features ``X`` (n, d; NaN where a numeric cell is missing), targets
    ``y`` ((n,), ranks (n, k) or 0/1 indicators (n, L)), names, and the original authors'
    train/test split (``'train'`` / ``'test'`` per row) where the file has one."""

    name: str
    X: np.ndarray
    y: np.ndarray
    feature_names: list
    target_names: list
    task: str
    split: np.ndarray | None = None


def _manifest():
    with resources.files("advgame").joinpath("data/MANIFEST.csv").open() as handle:
        return {row["path"].removesuffix(".csv"): row for row in csv.DictReader(handle)}


def list_datasets() -> list[str]:
    """Names accepted by :func:`load`, e.g. ``'multiclass/vehicle'``."""
    return sorted(_manifest())


def load(name: str) -> "Dataset":
    """Load a vendored data set by name (``'multiclass/optdigits'``, ``'ordinal/abalone'``, ...).

    Raises
    ------
    ValueError
        For an unknown name (the message lists the available ones) or a file whose checksum
        does not match the manifest.
    """
    manifest = _manifest()
    if name not in manifest:
        raise ValueError(f"unknown data set {name!r}; available: {', '.join(sorted(manifest))}.")
    entry = manifest[name]
    raw = gzip.decompress(resources.files("advgame").joinpath(f"data/{name}.csv.gz").read_bytes())
    if hashlib.sha256(raw).hexdigest() != entry["sha256"]:
        raise ValueError(f"{name}: the vendored file does not match its SHA-256 in MANIFEST.csv.")
    header, *rows = csv.reader(raw.decode("utf-8").splitlines())
    columns = list(zip(*rows))
    split = None
    if header[0] == "split":  # the authors' train/test split: not a feature
        split, header, columns = np.array(columns[0]), header[1:], columns[1:]
    multi = entry["task"] in ("label_ranking", "multilabel")
    n_targets = int(entry["n_classes_or_labels"]) if multi else 1
    features, names = [], []
    for name_, column in zip(header[:-n_targets], columns[:-n_targets]):
        block, block_names = _feature_column(name_, column)
        features.append(block)
        names += block_names
    X = np.column_stack(features)
    targets = columns[-n_targets:]
    if multi:
        y = np.array(targets, dtype=np.int64).T
    elif entry["task"] in ("multiclass", "binary"):
        y = _labels(targets[0])
    else:
        y = np.array(targets[0], dtype=np.float64)
    return Dataset(name, X, y, names, header[-n_targets:], entry["task"], split)


#: SHA-256 of the vendored OCR letters, ``data/sequences/ocr_letters.npz`` (the stored file).
_OCR_LETTERS_SHA256 = "a6a62fa95ca0b75eb3376fb8a6be53f6b85d9f4ec3485c3960241170bb7c44f1"


def load_ocr_letters() -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    """Taskar's OCR handwritten words as chains, with their 10 folds.

    The data of B. Taskar, C. Guestrin and D. Koller (2003), "Max-Margin Markov Networks",
    NIPS 16: 6,877 words (3-14 letters; the capitalised first letter of each word was removed
    by the authors), each letter a 16 x 8 binary image and one of 26 labels; the words come
    with a split into 10 folds (the classic protocol trains on one fold and tests on the other
    nine).  Stored with the pixels bit-packed (``numpy.packbits``) in a compressed ``.npz``,
    verified against its SHA-256 on load; see ``advgame/data/NOTICE.md``.

    Returns
    -------
    X_list : list of ndarray of shape (T_s, 128), float64
        The 0/1 pixels of each letter, row-major (pixel ``(r, c)`` is column ``8 r + c``).
    y_list : list of ndarray of shape (T_s,), int64
        The letters, ``0..25`` for ``a..z``.
    folds : ndarray of shape (6877,), int64
        The fold ``0..9`` of each word.

    Raises
    ------
    ValueError
        If the vendored file does not match its SHA-256.
    """
    stored = resources.files("advgame").joinpath("data/sequences/ocr_letters.npz").read_bytes()
    if hashlib.sha256(stored).hexdigest() != _OCR_LETTERS_SHA256:
        raise ValueError("sequences/ocr_letters: the vendored file does not match its SHA-256.")
    with np.load(io.BytesIO(stored), allow_pickle=False) as arrays:
        pixels = np.unpackbits(arrays["pixels"], axis=1).astype(np.float64)
        letters = arrays["letters"].astype(np.int64)
        ends = np.cumsum(arrays["lengths"], dtype=np.int64)
        folds = arrays["folds"].astype(np.int64)
    return np.split(pixels, ends[:-1]), np.split(letters, ends[:-1]), folds


def _is_numeric(column):
    try:
        np.array(column, dtype=np.float64)
    except ValueError:
        return False
    return True


#: The category of a missing (empty) categorical cell.
MISSING_CATEGORY = "?"


def _feature_column(name, column):
    """A numeric column as is (NaN for an empty cell); a categorical one one-hot encoded
    (``name=value`` columns, an empty cell being the category :data:`MISSING_CATEGORY`)."""
    present = [cell for cell in column if cell != ""]
    if present and _is_numeric(present):
        return np.array([c if c != "" else "nan" for c in column], dtype=np.float64)[:, None], [
            name
        ]
    column = np.array([c if c != "" else MISSING_CATEGORY for c in column])
    values = sorted(set(column))
    return (column[:, None] == np.array(values)[None, :]).astype(np.float64), [
        f"{name}={v}" for v in values
    ]


def _labels(column):
    return np.array(column, dtype=np.int64) if _is_numeric(column) else np.array(column)


# --------------------------------------------------------------------------- reading CSV files
def _cell_number(cell):
    """``float(cell)``, or None for text that is not a number."""
    try:
        return float(cell)
    except ValueError:
        return None


def _listing(names, limit=10):
    shown = ", ".join(repr(n) for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def load_csv(
    path: "str | os.PathLike",
    target: "str | int",
    *,
    delimiter: str = ",",
    max_bytes: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Read your data set from a CSV file: a header row of column names, then one row per example.

    Parameters
    ----------
    path : str or path-like
        A regular UTF-8 text file (a byte-order mark is fine) of at most :data:`MAX_CSV_BYTES`
        bytes.  Blank lines are skipped; cells are stripped of surrounding spaces.
    target : str or int
        The label column: its name in the header, or its position (0 = first column, -1 = last;
        a string of digits such as ``'3'`` is a position when no column has that name, as on the
        command line).
    delimiter : str, default=','
        The cell separator (``';'`` for semicolon-separated files); numbers must use ``.`` as
        the decimal mark.
    max_bytes : int or None
        Refuse larger files (default :data:`MAX_CSV_BYTES`).

    Returns
    -------
    X : ndarray of shape (n, d), float64
        Every column but the target, in file order; each must hold finite numbers only.
    y : ndarray of shape (n,)
        The target: int64 when every label is a whole number, float64 when numeric, else the
        labels as strings.

    Raises
    ------
    OSError
        The file does not exist or cannot be read.
    ValueError
        Not a regular file (a device, FIFO or directory: refused before opening), not UTF-8
        text, empty, no data rows, no header, an unknown target column, rows of different
        lengths, non-numeric feature columns (named; encode categories as 0/1 columns first),
        empty or NaN cells (located by line and column).
    SizeLimitError
        The file is over ``max_bytes`` bytes.

    Examples
    --------
    >>> X, y = load_csv("patients.csv", target="diagnosis")  # doctest: +SKIP
    """
    limit = MAX_CSV_BYTES if max_bytes is None else max_bytes
    path = os.fspath(path)
    text = read_text_file(path, limit, what="the data file")
    rows = _csv_rows(path, csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    header_line, header = next(rows, (None, None))
    if header is None:
        raise ValueError(
            f"{path}: the file is empty; expected a header row of column names, then one row per "
            "example."
        )
    if all(_cell_number(c) is not None for c in header):
        raise ValueError(
            f"{path}: line {header_line} holds numbers only ({','.join(header[:5])}"
            f"{',...' if len(header) > 5 else ''}); the first line must name the columns. Add a "
            "header line such as 'x1,x2,label'."
        )
    hint = ""
    if len(header) == 1:
        used = [s for s in (";", "\t", "|", ",") if s != delimiter and s in header[0]]
        if used:
            hint = (
                f" The header holds {used[0]!r} but the delimiter is {delimiter!r}: is the file "
                f"separated by {used[0]!r}? (load_csv(..., delimiter={used[0]!r}))"
            )
    first = next(rows, None)
    if first is None:
        raise ValueError(
            f"{path}: only a header line ({', '.join(header[:5])}"
            f"{', ...' if len(header) > 5 else ''}) and no data rows."
        )
    column = _target_column(path, header, target, hint)
    features = [j for j in range(len(header)) if j != column]
    if not features:
        raise ValueError(f"{path}: the target {header[column]!r} is the only column; no features.")
    values = array("d")  # 8 bytes a cell, filled row by row (no list of rows is kept)
    labels, distinct = [], {}
    ragged, text_columns, missing, infinite = [], {}, [], []
    for n, row in itertools.chain([first], rows):
        if len(row) != len(header):
            ragged.append((n, len(row)))
            continue
        label = row[column]
        if not label or label.lower() in _MISSING:
            if len(missing) <= 100:
                missing.append((n, header[column]))
        elif label[-1] in "fFyY" and math.isinf(_cell_number(label) or 0.0):  # inf, Infinity
            infinite.append((n, header[column]))
        labels.append(distinct.setdefault(label, label))  # one string per distinct label
        for j in features:
            cell = row[j]
            number = _cell_number(cell) if cell else math.nan
            if number is None:
                text_columns.setdefault(j, cell)
                number = math.nan
            elif math.isnan(number):
                if j not in text_columns and len(missing) <= 100:
                    missing.append((n, header[j]))
            elif math.isinf(number) and len(infinite) <= 100:
                infinite.append((n, header[j]))
            values.append(number)
    del text
    if ragged:
        n, width = ragged[0]
        raise ValueError(
            f"{path}: line {n} has {width} cells but the header has {len(header)}"
            f" ({len(ragged)} such line{'s' if len(ragged) > 1 else ''}); every row needs one cell "
            f"per column.{hint}"
        )
    if text_columns:
        named = ", ".join(f"{header[j]!r} (e.g. {v!r})" for j, v in list(text_columns.items())[:10])
        more = f" and {len(text_columns) - 10} more" if len(text_columns) > 10 else ""
        plural = len(text_columns) > 1
        raise ValueError(
            f"{path}: feature column{'s' if plural else ''} {named}{more} "
            f"{'hold' if plural else 'holds'} text, not numbers. Encode a categorical column as "
            "numbers first, e.g. one-hot: one 0/1 column per category (name=value), or drop it."
        )
    if missing or infinite:
        kind, where = ("empty or NaN", missing) if missing else ("infinite", infinite)
        shown = "; ".join(f"line {n}, column {name!r}" for n, name in where[:5])
        more = "" if len(where) <= 5 else " and more"
        raise ValueError(
            f"{path}: {kind} cells: {shown}{more}. Every feature cell must hold a finite number "
            "and every target cell a label; fill in or drop those rows."
        )
    X = np.frombuffer(values, dtype=np.float64).reshape(len(labels), len(features)).copy()
    return X, _target_values(labels)


#: Target cells read as missing.
_MISSING = ("nan", "na", "n/a", "null", "none")


def _csv_rows(path, reader):
    """``(line number, stripped cells)`` of each row with a non-blank cell."""
    try:
        for row in reader:
            cells = [c.strip() for c in row]
            if any(cells):
                yield reader.line_num, cells
    except csv.Error as exc:
        raise ValueError(
            f"{path}: not a readable CSV file (line {reader.line_num}: {exc})."
        ) from None


def _target_column(path, header, target, hint):
    """The index of the target column (a name or a position)."""
    if isinstance(target, (int, np.integer)) and not isinstance(target, bool):
        if not -len(header) <= target < len(header):
            raise ValueError(
                f"{path}: target column {target} is out of range; the file has {len(header)} "
                f"columns (0..{len(header) - 1}, or -1 for the last).{hint}"
            )
        return int(target) % len(header)
    if not isinstance(target, str):
        raise TypeError(f"target must be a column name (str) or position (int); got {target!r}.")
    matches = [j for j, name in enumerate(header) if name == target.strip()]
    if not matches and _is_position(target):
        return _target_column(path, header, int(target), hint)
    if not matches:
        raise ValueError(
            f"{path}: no column named {target!r}; the header has {_listing(header)}.{hint}"
        )
    if len(matches) > 1:
        raise ValueError(
            f"{path}: {len(matches)} columns are named {target!r} (columns "
            f"{', '.join(map(str, matches))}); give the target by position instead."
        )
    return matches[0]


def _is_position(text):
    text = text.strip()
    return text.lstrip("-").isdigit() and text.count("-") <= 1 and text.isascii()


def _target_values(labels):
    """int64 for whole numbers, float64 for other numbers, else the strings."""
    numbers = [_cell_number(label) for label in labels]
    if any(x is None for x in numbers):
        return np.array(labels)
    y = np.array(numbers, dtype=np.float64)
    if np.all(np.isfinite(y)) and np.all(y == np.round(y)) and np.all(np.abs(y) < 2**53):
        return y.astype(np.int64)
    return y


def quantile_bins(y: "np.typing.ArrayLike", n_bins: int = 5) -> np.ndarray:
    """Ordered classes ``0..n_bins-1`` from equal-frequency bins of a regression target.

    Returns ``(classes, edges)``; ties in ``y`` make the bins only approximately equal (record
    the edges with results, as the data notice asks).
    """
    y = np.asarray(y, dtype=np.float64)
    if not isinstance(n_bins, (int, np.integer)) or n_bins < 2:
        raise ValueError(f"n_bins must be an integer >= 2; got {n_bins!r}.")
    edges = np.quantile(y, np.linspace(0, 1, n_bins + 1)[1:-1])
    return np.digitize(y, edges, right=True), edges


#: Fixed constants of :func:`make_ordinal_sequences` (documented in its docstring).
_ORDINAL_START_AT_ZERO = 0.8
_ORDINAL_UP_PROBABILITY = 0.75
_ORDINAL_FEATURE_NOISE = 0.5
_ORDINAL_MEAN_OFFSET = 0.1
_ORDINAL_NOISE_KINDS = ("symmetric", "downward")


def _check_count(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}.")


def _check_probability(name, value, upper_open):
    bound = "[0, 1)" if upper_open else "[0, 1]"
    try:
        ok = 0.0 <= float(value) and (float(value) < 1.0 if upper_open else float(value) <= 1.0)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"{name} must be a probability in {bound}; got {value!r}.")


def make_ordinal_sequences(
    n_sequences: int = 200,
    length: int | tuple[int, int] = (8, 16),
    n_features: int = 6,
    n_labels: int = 3,
    noise: float = 0.1,
    transition_stickiness: float = 0.8,
    random_state: int | np.random.Generator | None = None,
    noise_kind: str = "symmetric",
    scale_growth: float = 1.0,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    r"""Synthetic sequences with ordinal labels that rise over time (e.g. emotion intensity).

    Each sequence mimics an expression that starts neutral and builds up to an apex
    (``0 < 1 < ... < n_labels - 1``).  For sequence ``s`` of length ``T_s`` (drawn uniformly from
    the integers ``length[0]..length[1]``, both included):

    * **Labels** form a Markov chain.  ``y_0 = 0`` with probability 0.8, otherwise uniform on
      ``1..n_labels-1``; then, with ``rho = transition_stickiness``,

      .. math::  y_{t+1} = \begin{cases} y_t & \text{with probability } \rho, \\
                 \min(y_t + 1, K - 1) & \text{with probability } 0.75 (1 - \rho), \\
                 \max(y_t - 1, 0) & \text{with probability } 0.25 (1 - \rho), \end{cases}

      so moves are one ordinal step, biased upwards, and clipped at the ends (``K = n_labels``).
    * **Features** are drawn from the clean labels:

      .. math::  X_t = \mu_{y_t} + 0.5\, g^{y_t} \varepsilon_t, \qquad
                 \varepsilon_t \sim N(0, I), \qquad \mu_c = c\, u + 0.1\, \delta_c ,

      with one random unit ``direction`` ``u`` and small offsets ``delta_c ~ N(0, I)`` shared by
      all sequences, so the classes are ordered along ``u`` (consecutive means about 1 apart),
      and ``g = scale_growth``.  With ``g = 1`` the classes share one covariance, so the label
      posterior given the frames is log-linear in ``[x_t; 1]`` and the chain's transitions: a
      linear-chain CRF is then the correctly specified model.  ``g != 1`` gives every class its
      own spread (quadratic class boundaries), which no linear chain model can represent.
    * **Label noise**: each returned label is corrupted independently with probability
      ``noise`` (the noisy annotations that motivate robust prediction); ``X`` is not changed.
      ``noise_kind='symmetric'``: replaced by a label drawn uniformly from the other
      ``n_labels - 1`` values.  ``noise_kind='downward'``: lowered one step, ``max(y - 1, 0)``
      (an annotator who under-rates the intensity; neutral labels stay neutral), so the noise
      depends on the label and is not symmetric.

    Parameters
    ----------
    n_sequences : int, default=200
        Number of sequences, ``>= 1``.
    length : int or (int, int), default=(8, 16)
        Inclusive range of sequence lengths ``(min, max)`` with ``1 <= min <= max``; an integer
        gives every sequence that length.
    n_features : int, default=6
        Feature dimension, ``>= 1``.
    n_labels : int, default=3
        Number of ordered labels ``K``, ``>= 2``.
    noise : float in [0, 1), default=0.1
        Probability of corrupting each label.
    transition_stickiness : float in [0, 1], default=0.8
        Probability ``rho`` that the clean label stays the same from one step to the next.
    random_state : int, numpy.random.Generator or None, default=None
        Seed or generator (passed to :func:`numpy.random.default_rng`).
    noise_kind : {'symmetric', 'downward'}, default='symmetric'
        How a corrupted label changes (see above).
    scale_growth : float > 0, default=1.0
        Ratio ``g`` of the feature noise scales of consecutive classes (1: a shared covariance).

    Both defaults draw the same random numbers as before these options existed; the other
    settings use the same draws, so only the changed part of the data differs.

    Returns
    -------
    X_list : list of ndarray of shape (T_s, n_features), float64
    y_list : list of ndarray of shape (T_s,), int64
        Labels in ``0..n_labels-1`` (after label noise).

    Raises
    ------
    ValueError
        For a non-positive size, ``n_labels < 2``, a bad ``length`` range, ``noise`` outside
        ``[0, 1)``, ``transition_stickiness`` outside ``[0, 1]``, an unknown ``noise_kind``
        or a ``scale_growth`` that is not a finite positive number.
    """
    _check_count("n_sequences", n_sequences, 1)
    _check_count("n_features", n_features, 1)
    _check_count("n_labels", n_labels, 2)
    _check_probability("noise", noise, upper_open=True)
    _check_probability("transition_stickiness", transition_stickiness, upper_open=False)
    if noise_kind not in _ORDINAL_NOISE_KINDS:
        raise ValueError(f"noise_kind must be one of {_ORDINAL_NOISE_KINDS}; got {noise_kind!r}.")
    if (
        isinstance(scale_growth, bool)
        or not isinstance(scale_growth, (int, float, np.integer, np.floating))
        or not np.isfinite(scale_growth)
        or scale_growth <= 0
    ):
        raise ValueError(f"scale_growth must be a finite positive number; got {scale_growth!r}.")
    if isinstance(length, (int, np.integer)) and not isinstance(length, bool):
        length = (length, length)
    try:
        low, high = length
    except (TypeError, ValueError):
        low = high = None
    for value in (low, high):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ValueError(
                f"length must be a positive integer or a pair (min, max) of integers with "
                f"1 <= min <= max; got {length!r}."
            )
    if not 1 <= low <= high:
        raise ValueError(f"length must satisfy 1 <= min <= max; got (min, max) = {tuple(length)}.")

    rng = np.random.default_rng(random_state)
    direction = rng.standard_normal(n_features)
    direction /= np.linalg.norm(direction)
    means = np.arange(n_labels)[:, None] * direction[None, :]
    means += _ORDINAL_MEAN_OFFSET * rng.standard_normal((n_labels, n_features))
    lengths = rng.integers(low, high + 1, size=n_sequences)

    # Clean chains for all sequences at once: padded to the longest length, then cut.
    longest = int(lengths.max())
    start_up = rng.random(n_sequences) >= _ORDINAL_START_AT_ZERO
    starts = np.where(start_up, rng.integers(1, n_labels, size=n_sequences), 0)
    moves = rng.random((n_sequences, longest - 1))
    stay = moves < transition_stickiness
    up = moves < transition_stickiness + _ORDINAL_UP_PROBABILITY * (1.0 - transition_stickiness)
    steps = np.where(stay, 0, np.where(up, 1, -1))
    clean = np.empty((n_sequences, longest), dtype=np.int64)
    clean[:, 0] = starts
    for t in range(1, longest):  # clipping makes the chain sequential in t (not in sequences)
        clean[:, t] = np.clip(clean[:, t - 1] + steps[:, t - 1], 0, n_labels - 1)

    scales = _ORDINAL_FEATURE_NOISE * float(scale_growth) ** clean[:, :, None]
    features = means[clean] + scales * rng.standard_normal((n_sequences, longest, n_features))
    flip = rng.random((n_sequences, longest)) < noise
    shift = rng.integers(1, n_labels, size=(n_sequences, longest))  # drawn for both kinds
    if noise_kind == "symmetric":
        corrupted = (clean + shift) % n_labels
    else:
        corrupted = np.maximum(clean - 1, 0)
    noisy = np.where(flip, corrupted, clean)

    X_list = [features[s, :T].copy() for s, T in enumerate(lengths)]
    y_list = [noisy[s, :T].copy() for s, T in enumerate(lengths)]
    return X_list, y_list


def _prediction_set_rng(n_per_class, n_outliers, random_state):
    """Check the sizes of a prediction-set example; its random generator."""
    _check_count("n_per_class", n_per_class, 1)
    _check_count("n_outliers", n_outliers, 0)
    return np.random.default_rng(random_state)


def make_prediction_set_example1(
    n_per_class: int = 200,
    n_outliers: int = 200,
    random_state: int | np.random.Generator | None = None,
    class_state: int | np.random.Generator | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Wang and Qiao (2022), §5.1 Example 1: four Gaussian classes in 2-D, a frame of uniform outliers, and
    eight noise features.

    Class ``k = 1..4``: :math:`X \mid Y = k \sim N(\mu_k, \Sigma_k)` with
    :math:`\mu_k = r_k (\cos\theta_k, \sin\theta_k)`, :math:`r_k \sim U(0, 6)`,
    :math:`\theta_k \sim U(0, 2\pi)`, and :math:`\Sigma_k^{1/2} = \sigma_k I + \epsilon_k
    (11^\top - I)` with :math:`\sigma_k \sim U(0.8, 1.2)`, :math:`\epsilon_k \sim U(-0.5, 0.5)`
    (the paper's "diag(σ_k, σ_k) + ε_k", read as ε_k off the diagonal so the root stays
    symmetric positive definite).  Outliers: an equal-weight mixture of uniforms on four
    rectangles; the paper shows them only in its Figure 1, so they are chosen here as the frame
    :math:`8 \le \max(|x_1|, |x_2|) \le 10`.  Eight independent :math:`N(0, 0.1^2)` features are
    appended to every point.  The class parameters :math:`r_k, \theta_k, \sigma_k, \epsilon_k`
    are drawn from ``class_state`` when it is given (so one class geometry can be held fixed
    while the points are redrawn), else from ``random_state``, once per call.

    Parameters
    ----------
    n_per_class : int, default=200
        Points per class (the text of Wang and Qiao (2022) we worked from does not state its
        sample sizes).
    n_outliers : int, default=200
        Outliers (label :data:`OUTLIER`), ``0`` for none (training data).
    random_state : int, numpy.random.Generator or None
        The points (and the class parameters, when ``class_state`` is None).
    class_state : int, numpy.random.Generator or None, default=None
        The class parameters alone.

    Returns
    -------
    X : ndarray of shape (4 n_per_class + n_outliers, 10)
    y : ndarray of int, labels ``1..4`` and ``OUTLIER`` (-1)
    """
    rng = _prediction_set_rng(n_per_class, n_outliers, random_state)
    classes = rng if class_state is None else np.random.default_rng(class_state)
    radius, angle = classes.uniform(0, 6, 4), classes.uniform(0, 2 * np.pi, 4)
    means = radius[:, None] * np.column_stack([np.cos(angle), np.sin(angle)])
    sigma, eps = classes.uniform(0.8, 1.2, 4), classes.uniform(-0.5, 0.5, 4)
    roots = sigma[:, None, None] * np.eye(2) + eps[:, None, None] * (1 - np.eye(2))
    y = np.repeat(np.arange(1, 5), n_per_class)
    z = rng.standard_normal((y.size, 2))
    points = means[y - 1] + np.einsum("nij,nj->ni", roots[y - 1], z)
    which = rng.integers(0, 4, n_outliers)
    bounds = np.array(_EXAMPLE1_RECTANGLES)[which]  # (n, 2 coordinates, (low, high))
    outliers = rng.uniform(bounds[:, :, 0], bounds[:, :, 1])
    X = np.vstack([points, outliers])
    X = np.hstack([X, 0.1 * rng.standard_normal((X.shape[0], 8))])
    return X, np.concatenate([y, np.full(n_outliers, OUTLIER)])


def make_prediction_set_example2(
    n_per_class: int = 200,
    n_outliers: int = 200,
    random_state: int | np.random.Generator | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Wang and Qiao (2022), §5.1 Example 2 (after Wang & Qiao 2018, Example 3): three nested rings and an
    outer ring of outliers in 2-D, plus 98 noise features.

    :math:`\theta \sim U(0, 2\pi)`; :math:`R \mid Y=1 \sim U(0, 5)`, :math:`R \mid Y=2 \sim
    U(4, 9)`, :math:`R \mid Y=3 \sim U(8, 13)`, outliers :math:`R \sim U(15, 20)`; the point is
    :math:`(R\cos\theta, R\sin\theta)` followed by 98 independent :math:`N(0, 1)` features.

    Parameters
    ----------
    n_per_class, n_outliers, random_state
        As in :func:`make_prediction_set_example1`.

    Returns
    -------
    X : ndarray of shape (3 n_per_class + n_outliers, 100)
    y : ndarray of int, labels ``1..3`` and ``OUTLIER`` (-1)
    """
    rng = _prediction_set_rng(n_per_class, n_outliers, random_state)
    y = np.concatenate([np.repeat(np.arange(1, 4), n_per_class), np.full(n_outliers, OUTLIER)])
    low = np.where(y == OUTLIER, 15.0, 4.0 * (y - 1))
    radius = rng.uniform(low, low + 5.0)
    angle = rng.uniform(0, 2 * np.pi, y.size)
    ring = radius[:, None] * np.column_stack([np.cos(angle), np.sin(angle)])
    return np.hstack([ring, rng.standard_normal((y.size, 98))]), y
