r"""Loss matrices and the recognition of their structure.

A loss matrix ``L[a, y]`` gives the loss of taking action ``a`` (one of ``l``) when the true label is
``y`` (one of ``k``).  It defines the per-sample game of Fathony et al. (2018a), Eq. (4),

.. math::  \mathrm{value}(f) = \max_{q \in \Delta_k} \min_{p \in \Delta_l} p^\top L q + f^\top q,

solved exactly by :class:`advgame.Game`.  Recognition works on the *numbers*: a user's
array that equals ``c * (1 - I)`` up to a relative tolerance is a zero-one game with weight ``c``,
so the closed forms of Fathony et al. (2018a, Section 3) apply to it whatever way it was built.
"""

import csv
import itertools
import math
import os
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ._files import read_text_file
from ._validation import as_float_array, check_finite, check_real
from .exceptions import SizeLimitError

__all__ = [
    "STRUCTURE_RTOL",
    "ABSTAIN_CLOSED_FORM_MAX_ALPHA",
    "LossMatrix",
    "Structure",
    "recognize",
    "permutation_items",
    "permutation_hamming_template",
    "MAX_RECOGNISED_ITEMS",
    "MAX_LABELS",
    "MAX_CSV_BYTES",
    "zero_one",
    "ordinal",
    "squared",
    "abstain",
    "as_loss_matrix",
    "Bilinear",
    "Entropy",
    "brier",
    "log",
    "quadratic",
]

#: Relative tolerance of structure recognition: ``max |L - c T| <= STRUCTURE_RTOL * max(c T)``.
STRUCTURE_RTOL = 1e-10
#: Largest abstention penalty (relative to the weight) for which Theorem 12 / 13 hold.
ABSTAIN_CLOSED_FORM_MAX_ALPHA = 0.5

KINDS = ("zero_one", "ordinal", "squared", "abstain", "permutation_hamming", "general")
#: Largest ``k`` of the built-in loss constructors: a dense ``k x k`` matrix (and its structure
#: templates) of ``4096^2`` float64 entries already takes 128 MiB each.
MAX_LABELS = 4096
#: ``LossMatrix.from_csv`` refuses larger files without reading them (10 MB).
MAX_CSV_BYTES = 10_000_000
#: Permutations of up to this many items are recognised (``6! = 720`` labels).
MAX_RECOGNISED_ITEMS = 6


@dataclass(frozen=True)
class Structure:
    """The recognised structure of a loss matrix.

    Attributes
    ----------
    kind : {'zero_one', 'ordinal', 'squared', 'abstain', 'general'}
        ``zero_one``: ``c (1 - I)``; ``ordinal``: ``c |a - y|``; ``squared``: ``c (a - y)^2``;
        ``abstain``: ``c (1 - I)`` with an extra last row ``c * alpha``; ``permutation_hamming``:
        ``c`` times the Hamming distance between the ``m!`` permutations of ``m >= 3`` items in
        ``itertools.permutations`` order (:func:`advgame.permutation.hamming_loss_matrix`; the
        Birkhoff game of Fathony et al. 2018c); ``general``: anything else.  For ``k = 2`` the first
        three coincide and ``zero_one`` is reported (two permutations: a zero-one game of weight
        ``2c``).
    weight : float or None
        The scale ``c > 0`` (Fathony et al. 2018a, Theorem 8); None for ``general``.
    alpha : float or None
        Abstention penalty relative to ``weight`` (so the abstain row holds ``weight * alpha``);
        None unless ``kind == 'abstain'``.
    """

    kind: str
    weight: float | None = None
    alpha: float | None = None

    @property
    def has_closed_form(self) -> bool:
        """Whether a closed form of Fathony et al. (2018a, Section 3) applies (abstain needs
        alpha <= 1/2)."""
        if self.kind == "abstain":
            return self.alpha <= ABSTAIN_CLOSED_FORM_MAX_ALPHA
        return self.kind not in ("general", "permutation_hamming")

    def __str__(self):
        if self.kind == "general":
            return "general"
        text = f"{self.kind}(weight={self.weight:g}"
        if self.alpha is not None:
            text += f", alpha={self.alpha:g}"
        return text + ")"


def _templates(k):
    a = np.arange(k)
    diff = a[:, None] - a[None, :]
    return {
        "zero_one": (diff != 0).astype(np.float64),
        "ordinal": np.abs(diff).astype(np.float64),
        "squared": (diff**2).astype(np.float64),
    }


def permutation_items(k: int) -> int | None:
    """``m`` with ``m! = k`` for ``3 <= m <= MAX_RECOGNISED_ITEMS``, else None."""
    for m in range(3, MAX_RECOGNISED_ITEMS + 1):
        if math.factorial(m) == k:
            return m
    return None


def permutation_hamming_template(m: int) -> np.ndarray:
    """Hamming distances ``L[a, b] = #{j : sigma_a(j) != sigma_b(j)}`` between the ``m!``
    permutations of ``m`` items in ``itertools.permutations`` order (no size check: callers
    bound ``m``; :func:`advgame.permutation.hamming_loss_matrix` is the checked public form)."""
    sigma = np.array(list(itertools.permutations(range(m))))
    return np.sum(sigma[:, None, :] != sigma[None, :, :], axis=2).astype(np.float64)


def _fit_scale(M, T):
    """Least-squares scale ``c`` with ``M ~ c T``, and whether the fit is within tolerance."""
    c = float(np.sum(M * T) / np.sum(T * T))
    ok = c > 0 and np.max(np.abs(M - c * T)) <= STRUCTURE_RTOL * c * T.max()
    return c, ok


def recognize(matrix: ArrayLike) -> Structure:
    """Recognise the structure of a loss matrix from its numbers (scale-aware, tolerance-based).

    Parameters
    ----------
    matrix : ndarray of shape (l, k)
        A validated loss matrix.

    Returns
    -------
    Structure
        The first of zero-one, ordinal, squared, permutation Hamming (square matrices) or abstain
        (``l = k + 1``) that fits ``c * template`` to relative tolerance :data:`STRUCTURE_RTOL`,
        else ``general``.

    Examples
    --------
    >>> recognize(3.0 * (1 - np.eye(5)))
    Structure(kind='zero_one', weight=3.0, alpha=None)
    """
    M = np.asarray(matrix, dtype=np.float64)
    top = float(M.max()) if M.size else 0.0
    if top <= 0:
        return Structure("general")
    # fit on M / max(M): sums of huge losses (1e308) would overflow
    structure = _recognize_unit(M / top)
    if structure.weight is None:
        return structure
    return Structure(structure.kind, structure.weight * top, structure.alpha)


def _recognize_unit(M):
    """:func:`recognize` for a matrix whose largest entry is 1."""
    l, k = M.shape
    templates = _templates(k)
    if l == k:
        for kind in ("zero_one", "ordinal", "squared"):
            c, ok = _fit_scale(M, templates[kind])
            if ok:
                return Structure(kind, c)
        m = permutation_items(k)
        if m is not None:
            c, ok = _fit_scale(M, permutation_hamming_template(m))
            if ok:
                return Structure("permutation_hamming", c)
    elif l == k + 1:
        c, ok = _fit_scale(M[:k], templates["zero_one"])
        row = M[k]
        if ok and np.max(np.abs(row - row.mean())) <= STRUCTURE_RTOL * c:
            alpha = float(row.mean() / c)
            for special in (0.0, ABSTAIN_CLOSED_FORM_MAX_ALPHA):  # where the vertex set changes
                if abs(alpha - special) <= STRUCTURE_RTOL:
                    alpha = special
            return Structure("abstain", c, alpha)
    return Structure("general")


class LossMatrix:
    r"""A loss matrix ``L[a, y]``: ``l`` actions (rows) by ``k`` labels (columns).

    Parameters
    ----------
    matrix : array-like of shape (l, k)
        Finite, non-negative losses, at least two and at most :data:`MAX_LABELS` labels
        (columns; wider matrices raise :class:`~advgame.exceptions.SizeLimitError`).
    labels : sequence of length k, optional
        Names of the true labels; default ``0..k-1``.  Names never change the recognised
        :attr:`structure`, which reads the numbers in column order: list ordinal labels in
        their order.  Given labels *declare* the classes (:attr:`labels_declared`):
        ``AdversarialClassifier`` then takes them, in this order, as its ``classes_``, and
        ``fit`` accepts a ``y`` holding any subset of them (a cross-validation fold missing a
        rare class).
    actions : sequence of length l, optional
        Names of the actions; default the labels when ``l == k``, and the labels followed by
        ``'abstain'`` for the abstain structure.

    Attributes
    ----------
    matrix : ndarray of shape (l, k)
        Read-only float64 copy.
    structure : Structure
        What :func:`recognize` found (drives the fast paths of :class:`advgame.Game`).
    labels_declared : bool
        Whether ``labels`` were given (even as ``range(k)``): declared labels fix the classes
        of a model and of a compiled program, whatever subset of them ``y`` holds.

    Examples
    --------
    >>> L = LossMatrix(3.0 * (1 - np.eye(3)))
    >>> L.structure.kind, L.structure.weight
    ('zero_one', 3.0)
    """

    def __init__(
        self,
        matrix: ArrayLike,
        labels: Sequence[Hashable] | None = None,
        actions: Sequence[Hashable] | None = None,
    ) -> None:
        shape = getattr(matrix, "shape", None)  # refuse a too-wide array before copying it
        if isinstance(shape, tuple) and len(shape) == 2:
            _check_n_labels(shape)
        M = as_float_array("matrix", matrix).copy()
        if M.ndim != 2:
            raise ValueError(
                f"matrix must be 2-D (actions x labels); got an array with shape {M.shape}."
            )
        l, k = M.shape
        if k < 2:
            raise ValueError(f"matrix must have at least 2 labels (columns); got shape {M.shape}.")
        _check_n_labels(M.shape)
        if l < 1:
            raise ValueError(f"matrix must have at least 1 action (row); got shape {M.shape}.")
        check_finite("matrix", M)
        if np.any(M < 0):
            a, y = np.argwhere(M < 0)[0]
            raise ValueError(
                f"matrix must be non-negative (losses); found {M[a, y]} at action {a}, label {y}."
            )
        M.flags.writeable = False
        self.matrix = M
        self.structure = recognize(M)
        self.labels = self._names("labels", labels, k, list(range(k)))
        self.labels_declared = labels is not None
        self.actions = self._names("actions", actions, l, self.default_actions())

    def default_actions(self) -> tuple[Hashable, ...]:
        """The action names when none are given: the labels for a square matrix, the labels
        then ``'abstain'`` for the abstain structure, else ``0..l-1``."""
        l, k = self.matrix.shape
        if l == k:
            return tuple(self.labels)
        if self.structure.kind == "abstain":
            return (*self.labels, "abstain")
        return tuple(range(l))

    @staticmethod
    def _names(name, given, size, default):
        if given is None:
            return tuple(default)
        given = tuple(given)
        if len(given) != size:
            raise ValueError(
                f"{name} must have {size} entries to match the matrix; got {len(given)}."
            )
        return given

    @property
    def n_labels(self) -> int:
        """Number of true labels ``k`` (columns)."""
        return self.matrix.shape[1]

    @property
    def n_actions(self) -> int:
        """Number of actions ``l`` (rows)."""
        return self.matrix.shape[0]

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_actions, n_labels)``."""
        return self.matrix.shape

    def __array__(self, dtype=None, copy=None):
        return self.matrix if dtype is None else self.matrix.astype(dtype)

    def __eq__(self, other):
        if not isinstance(other, LossMatrix):
            return NotImplemented
        return (
            self.shape == other.shape
            and np.array_equal(self.matrix, other.matrix)
            and self.labels == other.labels
            and self.actions == other.actions
        )

    def __hash__(self):
        # + 0.0 turns -0.0 into 0.0, so equal matrices hash equally
        return hash((self.shape, (self.matrix + 0.0).tobytes(), self.labels, self.actions))

    def __setstate__(self, state):
        self.__dict__.update(state)
        if "labels_declared" not in state:  # pickled before labels could be declared
            self.labels_declared = self.labels != tuple(range(self.n_labels))
        self.matrix.flags.writeable = False

    # numpy defers comparisons to LossMatrix instead of broadcasting over __array__
    __array_ufunc__ = None

    def __repr__(self):
        l, k = self.shape
        head = f"LossMatrix({l} actions x {k} labels, structure={self.structure})"
        if l * k > 400:
            return head
        cells = [[_fmt(x) for x in row] for row in self.matrix]
        rows = [[str(a)] + c for a, c in zip(self.actions, cells)]
        header = ["a \\ y"] + [str(y) for y in self.labels]
        widths = [max(len(r[j]) for r in [header] + rows) for j in range(k + 1)]
        lines = ["  ".join(s.rjust(w) for s, w in zip(r, widths)) for r in [header] + rows]
        return head + "\n" + "\n".join("  " + line for line in lines)

    @classmethod
    def from_csv(cls, path: str | os.PathLike[str]) -> "LossMatrix":
        """Read a loss matrix from a CSV file (numbers only; no code is ever loaded).

        Cells are separated by commas (or by spaces and tabs in a file without a comma); the
        file is UTF-8 text, a byte-order mark is dropped.  An optional first row of non-numeric
        cells (the first may be an empty corner) names the labels; an optional first column of
        non-numeric cells names the actions; a line starting with ``#`` is a comment.  Every
        other cell must be a finite number: an error names the file, the line and the column
        of the first that is not.  Only a regular file is read: a directory, device
        (``/dev/zero``) or FIFO is refused before it is opened, and files larger than
        :data:`MAX_CSV_BYTES` are refused before they are read.
        """
        path = os.fspath(path)
        text = read_text_file(
            path,
            MAX_CSV_BYTES,
            limit_name="MAX_CSV_BYTES",
            what="a loss matrix CSV",
            hint="; a loss matrix is at most a few thousand labels wide.",
        )
        lines = text.splitlines()
        try:
            if any("," in line for line in lines):
                table = list(csv.reader(lines))
            else:
                table = [line.split() for line in lines]
        except csv.Error as exc:
            raise ValueError(f"{path}: not a readable CSV text file ({exc}).") from None
        numbered = [
            (number, r)
            for number, r in enumerate(table, 1)
            if any(cell.strip() for cell in r) and not r[0].lstrip().startswith("#")
        ]
        rows = [r for _, r in numbered]
        if not rows:
            raise ValueError(f"{path}: the CSV file is empty; expected a matrix of losses.")
        if not any(_is_number(cell) for r in rows for cell in r):
            found = [line.strip() for line in lines if line.strip()]
            if len(found) == 1:
                what = f"one line, {found[0][:60]!r}, and no number (a header line alone?)"
            else:
                what = (
                    f"{len(found)} lines and no cell that is a number (line 1: {found[0][:60]!r})"
                )
            used = [sep for sep in (";", "\t", "|") if any(sep in line for line in found)]
            hint = (
                f" The lines contain {used[0]!r}: separate the numbers by commas or spaces."
                if used
                else ""
            )
            raise ValueError(
                f"{path}: no losses found: {what}. Expected comma- or whitespace-separated "
                "numbers, one row per action, e.g. '0,1,1' (optionally under a header line of "
                f"label names and after a first column of action names).{hint}"
            )
        rows = [[cell.strip() for cell in r] for r in rows]
        lines = [number for number, _ in numbered]
        labels = actions = None
        first_column = 1
        # a header names labels: none of its cells is a number (the first may be a corner)
        if not any(_is_number(c) for c in rows[0]):
            labels, rows, lines = rows[0], rows[1:], lines[1:]
        if rows and not _is_number(rows[0][0]):
            actions = [r[0] for r in rows]
            rows = [r[1:] for r in rows]
            first_column = 2
            if labels is not None and len(labels) == len(rows[0]) + 1:
                labels = labels[1:]
        rule = (
            "every loss must be a number, and finite (only a header row of label names and a "
            "first column of action names may hold text; '#' starts a comment line)"
        )
        matrix = []
        for line, r in zip(lines, rows):
            values = []
            for column, cell in enumerate(r, first_column):
                value = float(cell) if _is_number(cell) else None
                if value is None or not np.isfinite(value):
                    raise ValueError(
                        f"{path}, line {line}, column {column}: {cell!r} is not a finite "
                        f"number; {rule}."
                    )
                values.append(value)
            matrix.append(values)
        widths = [len(r) for r in matrix]
        ragged = [i for i, width in enumerate(widths) if width != widths[0]]
        if ragged:
            raise ValueError(
                f"{path}, line {lines[ragged[0]]}: rows have different lengths ("
                f"{widths[ragged[0]]} losses where line {lines[0]} has {widths[0]}); expected a "
                "rectangular matrix."
            )
        return cls(matrix, labels=labels, actions=actions)


def _is_number(cell):
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _fmt(x):
    return f"{x:.6g}"


def _check_k(k):
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
        raise ValueError(f"k (number of labels) must be an integer >= 2; got {k!r}.")
    if k > MAX_LABELS:
        raise SizeLimitError(
            f"k (number of labels) must be at most MAX_LABELS={MAX_LABELS:,} for a dense loss "
            f"matrix; got k={k:,} ({k * k:,} entries)."
        )
    return int(k)


def _check_n_labels(shape):
    """A loss matrix has at most :data:`MAX_LABELS` labels (columns), like the constructors."""
    k = shape[1]
    if k > MAX_LABELS:
        raise SizeLimitError(
            f"matrix has {k:,} labels (columns), over MAX_LABELS={MAX_LABELS:,} for a dense loss "
            f"matrix (shape {shape[0]:,} x {k:,}); its games and their structure templates would "
            "take k x k float64 entries each."
        )


def _check_weight(weight):
    return check_real("weight", weight, low=0, strict=True)


def zero_one(k: int, weight: float = 1.0) -> LossMatrix:
    """Zero-one loss ``weight * 1[a != y]`` (Fathony et al. 2018a, §2.3.1, Corollary 9)."""
    k = _check_k(k)
    return LossMatrix(_check_weight(weight) * _templates(k)["zero_one"])


def ordinal(k: int, weight: float = 1.0) -> LossMatrix:
    """Ordinal absolute loss ``weight * |a - y|`` (Fathony et al. 2018a, §3.2, Corollary 10)."""
    k = _check_k(k)
    return LossMatrix(_check_weight(weight) * _templates(k)["ordinal"])


def squared(k: int, weight: float = 1.0) -> LossMatrix:
    """Ordinal squared loss ``weight * (a - y)^2`` (Fathony et al. 2018a, §3.3, Corollary 11)."""
    k = _check_k(k)
    return LossMatrix(_check_weight(weight) * _templates(k)["squared"])


def abstain(k: int, alpha: float = 0.5, weight: float = 1.0) -> LossMatrix:
    """Zero-one loss with an abstain action costing ``weight * alpha`` (Fathony et al. 2018a, §3.5).

    The matrix is ``(k + 1) x k``; the last action is ``'abstain'``.  The closed forms
    (Theorems 12-13) hold for ``alpha <= 1/2``; larger alpha is solved by vertices or LP.
    """
    k = _check_k(k)
    alpha = check_real("alpha (abstention penalty)", alpha, low=0, high=1)
    w = _check_weight(weight)
    M = np.vstack([_templates(k)["zero_one"], np.full((1, k), float(alpha))]) * w
    return LossMatrix(M)


def as_loss_matrix(loss: "LossMatrix | ArrayLike") -> LossMatrix:
    """Accept a :class:`LossMatrix` or a plain array (converted with validation)."""
    return loss if isinstance(loss, LossMatrix) else LossMatrix(loss)


# ---------------------------------------------------------------------- bilinear losses
def _positive_count(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer; got {value!r}.")
    return int(value)


def _embeddings(name, X, d):
    """float64 ``(n, d)`` rows and whether one ``(d,)`` row was given."""
    X = as_float_array(name, X)
    if X.ndim not in (1, 2) or X.shape[-1] != d:
        raise ValueError(f"{name} must have shape ({d},) or (n, {d}); got {X.shape}.")
    check_finite(name, X)
    return np.atleast_2d(X), X.ndim == 1


class Bilinear:
    r"""A loss affine in each side's embedding: :math:`\ell(a, y) = c + u^\top a + v^\top y
    + a^\top M y`.

    ``a`` and ``y`` are the embeddings of the predictor's action and of the label, points of the
    vertex set of one polytope (:mod:`advgame.polytopes`: one-hot vectors of the simplex, 0/1
    vectors of the unit cube and the knapsack, cumulative vectors of the order simplex, rank
    vectors of the permutahedron, ``vec``'ed permutation matrices of Birkhoff, node and edge
    indicators of a marginal polytope).  Expected under mixtures ``p`` of actions and ``q`` of
    labels, the loss is bilinear in their means :math:`\bar a = E_p a`, :math:`\bar y = E_q y`,
    so the game is a bilinear saddle point over the two polytopes (the structured games of
    Fathony et al. 2018b, Theorem 1 and 2018c; the polytopes of Blondel 2019, §4) and its inner
    problem dualises to an LP wherever the polytope has a linear description
    (:meth:`advgame.polytopes.Polytope.constraints`).

    Parameters
    ----------
    M : array_like, shape ``(d, d)``
    u, v : array_like, shape ``(d,)``, optional
        Default zeros.
    c : float, default=0.0
    name : str, optional
        A short name for reports (the constructors set it).

    Attributes
    ----------
    M : ndarray ``(d, d)``; u, v : ndarray ``(d,)``; c : float (read-only arrays)
        The loss's parts; ``dim`` (a property) is ``d``, the embedding dimension.

    Notes
    -----
    Any real ``M, u, v, c`` are accepted: values on the vertices may be negative (a loss matrix
    from :meth:`matrix` then needs a constant shift before :class:`LossMatrix`, which changes
    every game value by that constant).  ``d`` is at most :data:`MAX_LABELS` (``M`` is dense).
    """

    def __init__(
        self,
        M: ArrayLike,
        u: ArrayLike | None = None,
        v: ArrayLike | None = None,
        c: float = 0.0,
        name: str | None = None,
    ) -> None:
        shape = getattr(M, "shape", None)
        if isinstance(shape, tuple) and len(shape) == 2 and shape[0] > MAX_LABELS:
            raise SizeLimitError(
                f"M must be at most MAX_LABELS={MAX_LABELS:,} square (dense); got shape {shape}."
            )
        M = as_float_array("M", M).copy()
        if M.ndim != 2 or M.shape[0] != M.shape[1] or M.shape[0] == 0:
            raise ValueError(f"M must be a non-empty square (d, d) matrix; got shape {M.shape}.")
        check_finite("M", M)
        d = M.shape[0]
        if d > MAX_LABELS:
            raise SizeLimitError(
                f"M must be at most MAX_LABELS={MAX_LABELS:,} square; got d={d:,}."
            )
        vectors = []
        for label, x in (("u", u), ("v", v)):
            x = np.zeros(d) if x is None else as_float_array(label, x).copy()
            if x.shape != (d,):
                raise ValueError(f"{label} must have shape ({d},) (M is {d} x {d}); got {x.shape}.")
            check_finite(label, x)
            vectors.append(x)
        for x in (M, *vectors):
            x.flags.writeable = False
        self.M, (self.u, self.v) = M, vectors
        self.c = check_real("c", c)
        if name is not None and not isinstance(name, str):
            raise ValueError(f"name must be a string or None; got {type(name).__name__}.")
        self.name = name

    @property
    def dim(self) -> int:
        """The embedding dimension ``d``."""
        return self.M.shape[0]

    def __call__(self, A: ArrayLike, Y: ArrayLike) -> float | np.ndarray:
        """The loss of each pair of rows of ``A`` (actions) and ``Y`` (labels).

        ``A`` and ``Y`` are ``(d,)`` or ``(n, d)``; a single row broadcasts against the other's
        ``n``.  Returns a float when both are single rows, else ``(n,)``.
        """
        A, one_a = _embeddings("A", A, self.dim)
        Y, one_y = _embeddings("Y", Y, self.dim)
        if A.shape[0] != Y.shape[0] and 1 not in (A.shape[0], Y.shape[0]):
            raise ValueError(
                f"A and Y must have the same number of rows (or one row); got {A.shape[0]} and "
                f"{Y.shape[0]}."
            )
        out = self.c + A @ self.u + Y @ self.v + np.sum((A @ self.M) * Y, axis=1)
        return float(out[0]) if one_a and one_y else out

    def matrix(self, V: ArrayLike) -> np.ndarray:
        r"""The loss matrix over an enumerated vertex list: ``L[a, y] = loss(V[a], V[y])``.

        :math:`L = c + (Vu) 1^\top + 1 (Vv)^\top + V M V^\top` for ``V`` of shape ``(m, d)``
        (e.g. ``polytope.vertices(dim)`` flattened): the ordinary multiclass game over the
        vertices, the brute-force reference of a polytope game.  Entries may be negative (see
        the class notes); at most :data:`MAX_LABELS` vertices.
        """
        V, _ = _embeddings("V", V, self.dim)
        if V.shape[0] > MAX_LABELS:
            raise SizeLimitError(
                f"V has {V.shape[0]:,} vertices, over MAX_LABELS={MAX_LABELS:,} for a dense loss "
                "matrix."
            )
        return self.c + (V @ self.u)[:, None] + (V @ self.v)[None, :] + V @ self.M @ V.T

    def __repr__(self):
        if self.name is not None:
            return f"Bilinear.{self.name}"
        return f"Bilinear(d={self.dim}, c={_fmt(self.c)})"

    # ------------------------------------------------------------------ constructors
    @classmethod
    def hamming(cls, k: int) -> "Bilinear":
        r"""Hamming distance between 0/1 vectors, :math:`\sum_j a_j + y_j - 2 a_j y_j`
        (``u = v = 1``, ``M = -2 I``).

        Multilabel prediction over the unit cube :math:`[0, 1]^k`, or with a budget over the
        knapsack polytope :math:`\{\mu \in [0,1]^k : l \le 1^\top \mu \le u\}` (Blondel
        2019, §4, "unit cube" and "knapsack polytope").
        """
        k = _positive_count("k", k)
        ones = np.ones(k)
        return cls(-2.0 * np.eye(k), ones, ones, 0.0, name=f"hamming({k})")

    @classmethod
    def absolute(cls, k: int) -> "Bilinear":
        r"""The absolute error :math:`|a - y|` of ordinal labels ``1..k``, as the Hamming distance
        of their cumulative 0/1 vectors :math:`\varphi(y) = \sum_{i < y} e_i \in \{0,1\}^{k-1}`
        (the vertices of the order simplex, :class:`advgame.polytopes.OrderSimplex`; Blondel
        2019, §4): :math:`\varphi(a)` and :math:`\varphi(y)` differ exactly in the coordinates
        between ``min(a, y)`` and ``max(a, y) - 1``.  Dimension ``k - 1``; ``k >= 2``.
        """
        k = _check_k(k)
        ones = np.ones(k - 1)
        return cls(-2.0 * np.eye(k - 1), ones, ones, 0.0, name=f"absolute({k})")

    @classmethod
    def spearman(cls, k: int) -> "Bilinear":
        r"""Spearman's squared rank distance :math:`\sum_j (a_j - y_j)^2` between rank vectors
        (permutations of ``(1, ..., k)``, the vertices of the permutahedron
        ``Permutahedron(1..k)``; Blondel 2019, §4; Spearman 1904).

        On permutations :math:`\sum_j a_j^2 = \sum_j y_j^2 = k(k+1)(2k+1)/6`, so the loss is
        :math:`c - 2 a^\top y` with :math:`c = k(k+1)(2k+1)/3`.  It is exact on the vertices
        only (inside the polytope the expected loss is the bilinear extension).
        """
        k = _positive_count("k", k)
        return cls(-2.0 * np.eye(k), c=k * (k + 1) * (2 * k + 1) / 3, name=f"spearman({k})")

    @classmethod
    def permutation_hamming(cls, k: int) -> "Bilinear":
        r"""Hamming distance between permutations, :math:`k - \langle A, Y\rangle`, over the
        row-major ``vec`` of their ``k x k`` permutation matrices (the Birkhoff polytope; the
        game of Fathony et al. 2018c, as :mod:`advgame.permutation`).  Dimension ``k^2``.
        """
        k = _positive_count("k", k)
        return cls(-np.eye(k * k), c=float(k), name=f"permutation_hamming({k})")

    @classmethod
    def node_additive(
        cls, L: "LossMatrix | ArrayLike", n_nodes: int, weights: ArrayLike | None = None
    ) -> "Bilinear":
        r"""A node-additive loss :math:`\sum_i w_i L[a_i, y_i]` on stacked one-hot node
        indicators (dimension ``n_nodes * k``, node-major: the node part of a graph's marginal
        polytope, :meth:`advgame.polytopes.Marginal.constraints`; the loss of Fathony et al.
        2018b, Eq. 5-6): ``M = diag(w) ⊗ L``.

        Parameters
        ----------
        L : LossMatrix or array_like, shape ``(k, k)``
            One node's loss; square (actions and labels embed in the same polytope).
        n_nodes : int
        weights : array_like, shape ``(n_nodes,)``, optional
            The node weights ``w_i`` (default 1), as ``Marginal(node_weights=...)``.
        """
        L = np.asarray(L.matrix if isinstance(L, LossMatrix) else as_float_array("L", L))
        if L.ndim != 2 or L.shape[0] != L.shape[1]:
            raise ValueError(f"L must be a square (k, k) loss matrix; got shape {L.shape}.")
        check_finite("L", L)
        n = _positive_count("n_nodes", n_nodes)
        w = np.ones(n) if weights is None else as_float_array("weights", weights)
        if w.shape != (n,):
            raise ValueError(f"weights must have shape ({n},) (one per node); got {w.shape}.")
        check_finite("weights", w)
        if n * L.shape[0] > MAX_LABELS:
            raise SizeLimitError(
                f"n_nodes * k = {n * L.shape[0]:,} is over MAX_LABELS={MAX_LABELS:,} (M is dense)."
            )
        return cls(np.kron(np.diag(w), L), name=f"node_additive(k={L.shape[0]}, n_nodes={n})")


# ------------------------------------------------------------------- generalised entropies
@dataclass(frozen=True)
class Entropy:
    r"""A smooth generalised entropy ``H`` (Farnia and Tse 2016, §2.2): the game
    ``F(f) = max_q H(q) + f^T q``.

    ``ag.Game(entropy)`` solves it like a loss-matrix game (both are Fenchel-Young losses: the
    design notes, docs/design.md, "The Fenchel-Young view"): ``value`` is ``F``, ``adversary``
    is ``∇F`` (Farnia and Tse 2016, Eq. 22: the worst-case conditional ``E[theta(Y) | x]``) and the
    predictor is the Bayes act of that conditional. The polyhedral entropy of the 0-1 loss,
    ``1 - max_j q_j``, is the loss matrix :func:`zero_one` (its ``H_L``), so it needs no entry here.

    Attributes
    ----------
    kind : {'brier', 'log', 'quadratic'}
    n_labels : int
        Length of a potential vector (``k`` labels; 1 for the real-valued quadratic target).
    rho : float or None
        ``quadratic`` only: the second-moment bound ``E[Y^2] <= rho^2`` (None: large enough).
    """

    kind: str
    n_labels: int
    rho: float | None = None

    @property
    def formula(self) -> str:
        """The entropy and its domain, for reports."""
        return {
            "brier": "H(q) = 1 - ||q||^2 on the simplex",
            "log": "H(q) = -sum_j q_j log q_j on the simplex",
            "quadratic": f"H(P) = Var(Y) with E[Y^2] <= rho^2 (rho = {self.rho})",
        }[self.kind]


def brier(k: int) -> Entropy:
    """Brier entropy ``1 - ||q||^2`` (Farnia and Tse 2016, §2.2.4, §3.4): the minimax Brier classifier."""
    return Entropy("brier", _check_k(k))


def log(k: int) -> Entropy:
    """Shannon entropy (Farnia and Tse 2016, §2.2.1, §3.1): multinomial logistic regression."""
    return Entropy("log", _check_k(k))


def quadratic(rho: float | None = None) -> Entropy:
    """Quadratic loss on a real target with ``E[Y^2] <= rho^2`` (Farnia and Tse 2016, §3.3, Eq. 32).

    ``rho=None`` means large enough: ``F(z) = z^2 / 4`` and least squares.
    """
    if rho is not None:
        rho = check_real("rho (second-moment bound)", rho, low=0, strict=True)
    return Entropy("quadratic", 1, rho)
