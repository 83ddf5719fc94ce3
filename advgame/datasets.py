"""Benchmark data vendored with advgame (UCI-derived; see ``advgame/data/NOTICE.md``).

Each file is the shared benchmark CSV, gzip-compressed and verified against the SHA-256 in
``MANIFEST.csv`` on load.  Multiclass and ordinal files hold features and a last column ``y``;
label-ranking files hold features and ``k`` rank columns ``r0..r{k-1}`` (1 = best).
Categorical feature columns (abalone's ``sex``) are one-hot encoded as ``name=value`` columns;
string class labels are kept as strings (scikit-learn accepts them).  The ordinal
files keep the raw regression target: :func:`quantile_bins` turns it into ordered classes as the
benchmark protocol describes (equal-frequency bins, usually 5 or 10).
"""

import csv
import gzip
import hashlib
from dataclasses import dataclass
from importlib import resources

import numpy as np

__all__ = ["Dataset", "list_datasets", "load", "quantile_bins"]


@dataclass
class Dataset:
    """A loaded data set: features ``X`` (n, d), targets ``y`` ((n,) or ranks (n, k)), names."""

    name: str
    X: np.ndarray
    y: np.ndarray
    feature_names: list
    target_names: list
    task: str


def _manifest():
    with resources.files("advgame").joinpath("data/MANIFEST.csv").open() as handle:
        return {row["path"].removesuffix(".csv"): row for row in csv.DictReader(handle)}


def list_datasets():
    """Names accepted by :func:`load`, e.g. ``'multiclass/vehicle'``."""
    return sorted(_manifest())


def load(name):
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
    n_targets = int(entry["n_classes_or_labels"]) if entry["task"] == "label_ranking" else 1
    features, names = [], []
    for name_, column in zip(header[:-n_targets], columns[:-n_targets]):
        block, block_names = _feature_column(name_, column)
        features.append(block)
        names += block_names
    X = np.column_stack(features)
    targets = columns[-n_targets:]
    if entry["task"] == "label_ranking":
        y = np.array(targets, dtype=np.int64).T
    elif entry["task"] == "multiclass":
        y = _labels(targets[0])
    else:
        y = np.array(targets[0], dtype=np.float64)
    return Dataset(name, X, y, names, header[-n_targets:], entry["task"])


def _is_numeric(column):
    try:
        np.array(column, dtype=np.float64)
    except ValueError:
        return False
    return True


def _feature_column(name, column):
    """A numeric column as is; a categorical one one-hot encoded (``name=value`` columns)."""
    if _is_numeric(column):
        return np.array(column, dtype=np.float64)[:, None], [name]
    values = sorted(set(column))
    column = np.array(column)
    return (column[:, None] == np.array(values)[None, :]).astype(np.float64), [
        f"{name}={v}" for v in values
    ]


def _labels(column):
    return np.array(column, dtype=np.int64) if _is_numeric(column) else np.array(column)


def quantile_bins(y, n_bins=5):
    """Ordered classes ``0..n_bins-1`` from equal-frequency bins of a regression target.

    Returns ``(classes, edges)``; ties in ``y`` make the bins only approximately equal (record
    the edges with results, as the data notice asks).
    """
    y = np.asarray(y, dtype=np.float64)
    if not isinstance(n_bins, (int, np.integer)) or n_bins < 2:
        raise ValueError(f"n_bins must be an integer >= 2; got {n_bins!r}.")
    edges = np.quantile(y, np.linspace(0, 1, n_bins + 1)[1:-1])
    return np.digitize(y, edges, right=True), edges
