r"""The fast paths of the per-sample game: one table of the structures advgame recognises.

The game of a loss matrix ``L`` and potentials ``f`` (Fathony et al. 2018a, Eq. 4),

.. math::  \mathrm{value}(f) = \max_{q \in \Delta_k} \min_{p \in \Delta_l} p^\top L q + f^\top q,

is an LP for every row of potentials.  When the numbers of ``L`` have a structure
(:func:`advgame.losses.recognize`) the value, the adversary ``q*`` and the predictor ``p*``
have a closed form; a small matrix has a table of extreme points; a Hamming loss between
permutations has a compact LP over the Birkhoff polytope; anything else is the LP.  Each of these
is one row of :data:`TABLE`: how it is recognised, the functions that solve it, the extreme
points where they are known, the formula, the theorem and the cost.

A user's closed form is a row of the same kind (:func:`user_row`), put first in the table of
one game by :meth:`advgame.Game.with_closed_form` once :func:`advgame.verify_closed_form`
has passed; for what the user did not give (``q*`` or ``p*``) it calls the built-in path.

``method='auto'`` of :class:`advgame.Game` takes the first row that matches its loss
(:func:`find`); :func:`game_explanation` (``Game.explain``) and :mod:`advgame.explain`
(``PredictionGame.explain``, ``advgame explain``) write their explanations from the same rows:
nothing else describes a fast path.  Every fast path agrees with the LP to a relative ``1e-9`` (:func:`advgame.verify_game`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from . import closed_forms
from .losses import ABSTAIN_CLOSED_FORM_MAX_ALPHA, STRUCTURE_RTOL, Entropy, LossMatrix
from .vertices import basis_count

if TYPE_CHECKING:
    from .losses import Structure

__all__ = [
    "FastPath",
    "TABLE",
    "ZERO_ONE",
    "ORDINAL",
    "SQUARED",
    "ABSTAIN",
    "VERTEX_TABLE",
    "BIRKHOFF",
    "LP",
    "BRIER",
    "LOG",
    "QUADRATIC",
    "AUTO_VERTEX_BASES",
    "AUTO_TABLE_ROWS_PER_BASIS",
    "AUTO_LP_CALL_ROWS",
    "find",
    "user_row",
    "closed_form",
    "fast_path_lines",
    "game_explanation",
]

#: ``auto`` uses a vertex table for a general matrix when enumeration needs at most this many bases.
AUTO_VERTEX_BASES = 200_000
#: ``auto`` uses the vertex table of such a matrix for a call of ``n`` rows when the table exists
#: or ``n >= AUTO_TABLE_ROWS_PER_BASIS * bases - AUTO_LP_CALL_ROWS`` (``bases``:
#: :func:`vertices.basis_count`), i.e. when building it costs no more than the LP oracle would
#: for this call; otherwise the LP oracle.  The rule looks at the call alone, so ``predictor``
#: and ``predict`` of the same rows take the same path (optimal ``p*`` need not be unique).
#: Measured at one BLAS thread on a shared 2-core machine (``advgame bench oracle`` has the
#: 10 x 10 case): the build costs 3-10 us per candidate basis (0.6-1.9 s for 10 x 10, 184,755
#: bases); per row, the bulk LP oracle costs 5-25 us for k = 7-12 and the table's product 0.6-13
#: us (it grows with the vertex count: 161 for 7 x 7, 1,148-1,909 for 10 x 10).  So the table
#: pays for itself after ``build / (LP - table)`` = 0.35-1.8 rows per basis for the value and
#: ``q*`` and 0.45-2.8 for ``p*`` (13 for an 8 x 12 matrix with 1,040 vertices; never in a run
#: where the 10 x 10 table's product cost as much as the LP); 1 is in the middle.  10 x 10 and
#: 1,000 rows: the LP, 0.01-0.02 s instead of a ~1 s build.
AUTO_TABLE_ROWS_PER_BASIS = 1.0
#: The fixed cost of one call of the LP oracle (~150 us) in rows of the difference above: matrices
#: with at most this many candidate bases (3 x 3 has 19) always use the table, as before.
AUTO_LP_CALL_ROWS = 20


@dataclass(frozen=True)
class FastPath:
    """One recognised structure of the per-sample game and how it is solved.

    Attributes
    ----------
    name : str
        What :attr:`advgame.Game.fast_path` reports (``'lp'`` is reported as None).
    structure : str
        What is recognised, in words.
    match : callable
        ``match(loss) -> params or None``: the parameters the functions below take after ``F``
        (or ``k``) when the loss (a :class:`~advgame.losses.LossMatrix` or an
        :class:`~advgame.losses.Entropy`) has this structure, else None.
    summary : str
        What ``method='auto'`` uses, in one phrase.
    formula : str
        The value and ``q*``; ``{c}`` and ``{alpha}`` stand for the weight and the abstention
        cost.
    theorem : str
        Where it is proved.
    cost : str
        Its cost.
    value : callable or None
        ``value(F, *params) -> (value, q*)`` for a closed form.
    predictor : callable or None
        ``predictor(F, *params) -> p*`` for a closed form.
    vertices : callable or None
        ``vertices(k, *params) -> (Q, v)``: the extreme points of the proof, where known.
    vertex_count : callable or None
        ``vertex_count(k, *params) -> (count, formula)``: how many extreme points the theorem
        predicts.
    prediction : str
        How the predicted action follows from ``p*``, when the paper says it apart.
    value_alone : callable or None
        ``value_alone(F, *params) -> value`` without ``q*``, where that is cheaper (a user's
        row: the user's ``value``).
    user : bool
        Whether the row is a user's closed form (:func:`user_row`).
    """

    name: str
    structure: str
    match: Callable[[Any], tuple | None]
    summary: str
    formula: str
    theorem: str
    cost: str
    value: Callable[..., tuple[Any, Any]] | None = None
    predictor: Callable[..., Any] | None = None
    vertices: Callable[..., tuple[Any, Any]] | None = None
    vertex_count: Callable[..., tuple[int, str]] | None = None
    prediction: str = ""
    value_alone: Callable[..., Any] | None = None
    user: bool = False

    @property
    def is_closed_form(self) -> bool:
        """Whether the row solves the game by its own functions (a closed form)."""
        return self.value is not None


def _structured(kind: str) -> Callable[[Any], tuple | None]:
    """The recogniser of a closed form of Fathony et al. (2018a): ``(weight,)``, or
    ``(alpha, weight)`` for abstain, when the loss matrix is recognised as ``kind`` and the
    closed form applies (:attr:`advgame.losses.Structure.has_closed_form`)."""

    def match(loss: Any) -> tuple | None:
        if not isinstance(loss, LossMatrix):
            return None
        s = loss.structure
        if s.kind != kind or not s.has_closed_form:
            return None
        return (s.alpha, s.weight) if kind == "abstain" else (s.weight,)

    return match


def _entropy(kind: str) -> Callable[[Any], tuple | None]:
    """The recogniser of a generalised entropy's conjugate (Farnia and Tse 2016)."""

    def match(loss: Any) -> tuple | None:
        if not isinstance(loss, Entropy) or loss.kind != kind:
            return None
        return (loss.rho,) if kind == "quadratic" else ()

    return match


def _closed_form(name: str, **text: Any) -> FastPath:
    """A closed form of Fathony et al. (2018a): ``closed_forms.<name>``, ``<name>_predictor``
    and ``<name>_vertices``, recognised by :func:`_structured`."""
    return FastPath(
        name=name,
        match=_structured(name),
        summary=f"{name} closed form",
        value=getattr(closed_forms, name),
        predictor=getattr(closed_forms, f"{name}_predictor"),
        vertices=getattr(closed_forms, f"{name}_vertices"),
        **text,
    )


def _entropy_form(name: str, **text: Any) -> FastPath:
    """The conjugate ``F`` of a generalised entropy and its gradient, ``closed_forms.<name>``."""
    return FastPath(
        name=name,
        match=_entropy(name),
        summary=f"{name} closed form",
        value=getattr(closed_forms, name),
        **text,
    )


def _abstain_vertex_count(k: int, alpha: float, weight: float = 1.0) -> tuple[int, str]:
    if alpha == 0:
        return k, "k at alpha = 0 (Theorem 12)"
    if alpha == 0.5:
        return k * (k + 1) // 2, "k(k+1)/2 at alpha = 1/2 (Theorem 12)"
    return k * k, "k^2 for 0 < alpha < 1/2 (Theorem 12)"


ZERO_ONE = _closed_form(
    "zero_one",
    structure="zero-one, c (1 - I)",
    formula="value(f) = max over nonempty S of (sum_(i in S) f_i + c (|S| - 1)) / |S|,  "
    "c = {c};  q* is uniform on the best S",
    theorem="Fathony et al. 2018a, Theorem 5, Corollary 9",
    cost="the water level u of sum_j (f_j - u)_+ = c (V = u + c, S = {f_j > u}) by Newton "
    "passes, no sort: O(k) per row and pass (a few passes), compiled (numba) over blocks of rows",
    vertex_count=lambda k, weight=1.0: (2**k - 1, "2^k - 1 (Theorem 5)"),
)
ORDINAL = _closed_form(
    "ordinal",
    structure="ordinal, c |a - y|",
    formula="value(f) = 1/2 max_i (f_i - c i) + 1/2 max_j (f_j + c j),  c = {c};  "
    "q* = (e_i* + e_j*) / 2",
    theorem="Fathony et al. 2018a, Theorem 6, Eq. 7, Corollary 10",
    cost="the best pair (i, j) by two running maxima: O(k) per row, vectorised numpy over rows",
    vertex_count=lambda k, weight=1.0: (k * (k + 1) // 2, "k(k+1)/2 (Theorem 6)"),
)
SQUARED = _closed_form(
    "squared",
    structure="squared ordinal, c (a - y)^2",
    formula="value(f) = max{ max_(i < l <= j) ((2(j-l)+1) [f_i + c (l-i)^2] + (2(l-i)-1) "
    "[f_j + c (j-l)^2]) / (2(j-i)),  max_i f_i },  c = {c}",
    theorem="Fathony et al. 2018a, Theorem 7, Corollary 11",
    cost="the best of the pair and single vertex sets from the upper concave hull of the points "
    "(j, f_j + c j^2): O(k) per row (the paper's algorithm is O(k^3)), compiled (numba)",
    vertex_count=lambda k, weight=1.0: (
        k + (k + 1) * k * (k - 1) // 6,
        "k + (k+1)k(k-1)/6 (Theorem 7)",
    ),
)
ABSTAIN = _closed_form(
    "abstain",
    structure="abstain with alpha <= 1/2, c (1 - I) and a last row c alpha",
    formula="value(f) = max{ f_(1),  (1 - alpha) f_(1) + alpha f_(2) + c alpha } over the two "
    "largest potentials,  c = {c}, alpha = {alpha}",
    theorem="Fathony et al. 2018a, Theorem 12",
    cost="the two largest potentials: O(k) per row, vectorised numpy over rows",
    vertex_count=_abstain_vertex_count,
    prediction="p* from the top two potentials [Theorem 13]; predict argmax f if "
    "f_(1) - f_(2) >= c/2, else abstain [Corollary 14]",
)
VERTEX_TABLE = FastPath(
    name="vertices",
    structure=f"any loss matrix whose extreme points need at most {AUTO_VERTEX_BASES:,} "
    "candidate bases to enumerate",
    match=lambda loss: (
        ()
        if isinstance(loss, LossMatrix)
        and basis_count(loss.n_actions, loss.n_labels) <= AUTO_VERTEX_BASES
        else None
    ),
    summary="vertex table (one matrix product for all rows) for calls with enough rows to pay "
    "for building it, else the LP oracle",
    formula="enumerating the extreme points (Q, v) of {(q, v): L q >= v 1, q in the simplex} "
    "once; then value(F) = max(F @ Q.T + v), one matrix product",
    theorem="the proof technique of Fathony et al. 2018a, §3 (Proposition 4), automated",
    cost="one matrix product per call; building the table costs 3-10 us per candidate basis, "
    "so auto uses it for a call of at least AUTO_TABLE_ROWS_PER_BASIS * bases - "
    "AUTO_LP_CALL_ROWS rows, or once it is built",
)
BIRKHOFF = FastPath(
    name="birkhoff",
    structure="c times the Hamming loss between the m! permutations of m >= 3 items",
    match=lambda loss: (
        ()
        if isinstance(loss, LossMatrix) and loss.structure.kind == "permutation_hamming"
        else None
    ),
    summary="the Birkhoff game's compact LP for potentials linear in the permutation matrices, "
    "else the LP oracle",
    formula="potentials linear in the permutation matrices, f_pi = <Theta, P_pi>, are solved by "
    "the compact LP max_(Q in Birkhoff, a, b) c (m - 1'a - 1'b) + <Theta, Q> s.t. "
    "a_i + b_j >= Q_ij,  c = {c} (advgame.PermutationGame), q* and p* by Birkhoff-von Neumann; "
    "other rows by the LP",
    theorem="Fathony et al. 2018c",
    cost="m^2 + 2m variables instead of m! labels",
    prediction="by an assignment problem (Hungarian, scipy's linear_sum_assignment)",
)
LP = FastPath(
    name="lp",
    structure="any loss matrix",
    match=lambda loss: () if isinstance(loss, LossMatrix) else None,
    summary="the LP oracle (one vectorised simplex over all rows of a call)",
    formula="one vectorised simplex over all rows of a call, each row certified by its duality "
    "gap (HiGHS for any row it cannot certify)",
    theorem="Fathony et al. 2018a, Eq. 4 and its dual, Eq. 10",
    cost="5-25 us per row for k = 7-12, plus about 150 us per call",
)
BRIER = _entropy_form(
    "brier",
    structure="the Brier entropy 1 - ||q||^2",
    formula="grad F = the Euclidean projection of f / 2 onto the simplex",
    theorem="Farnia and Tse 2016, Eq. 35 and 70-73",
    cost="O(k log k) per row (a sort), vectorised numpy over rows",
)
LOG = _entropy_form(
    "log",
    structure="the Shannon entropy -sum q log q",
    formula="log-sum-exp; grad F = softmax",
    theorem="Farnia and Tse 2016, Eq. 28",
    cost="O(k) per row, vectorised numpy over rows",
)
QUADRATIC = _entropy_form(
    "quadratic",
    structure="the quadratic loss on a real target with E[Y^2] <= rho^2",
    formula="Huber; grad F = clip(z / 2, -rho, rho)",
    theorem="Farnia and Tse 2016, Eq. 32-33",
    cost="O(1) per row",
)

#: Every fast path, in the order ``method='auto'`` tries them: the first whose ``match``
#: accepts the loss is used (:func:`find`).
TABLE: tuple[FastPath, ...] = (
    ZERO_ONE,
    ORDINAL,
    SQUARED,
    ABSTAIN,
    VERTEX_TABLE,
    BIRKHOFF,
    LP,
    BRIER,
    LOG,
    QUADRATIC,
)


class _SameMatrix:
    """The recogniser of a user's row: the loss matrix it was verified on, and no other."""

    def __init__(self, matrix: Any) -> None:
        self.matrix = matrix

    def __call__(self, loss: Any) -> tuple | None:
        same = isinstance(loss, LossMatrix) and loss.matrix.shape == self.matrix.shape
        return () if same and bool((loss.matrix == self.matrix).all()) else None


class _UserSolution:
    """``F -> (value, q*)`` of a user's row: the user's value, and ``adversary`` (the user's
    ``q*``, or the built-in path's where the user gave none)."""

    def __init__(self, value: Callable, adversary: Callable) -> None:
        self.value, self.adversary = value, adversary

    def __call__(self, F: Any) -> tuple[Any, Any]:
        value = np.asarray(self.value(F), dtype=np.float64)
        return value, np.asarray(self.adversary(F), dtype=np.float64)


def user_row(
    loss: LossMatrix,
    name: str,
    value: Callable,
    adversary: Callable | None,
    predictor: Callable | None,
    builtin: FastPath,
    fallback_adversary: Callable,
    fallback_predictor: Callable,
    report: Any,
) -> FastPath:
    """The fast-path row of a user's closed form of ``loss``, verified by ``report``
    (:class:`advgame.verify.ClosedFormReport`, which has passed).

    ``fallback_adversary(F)`` and ``fallback_predictor(F)`` are the built-in path's (the row
    ``builtin``, or the vertex table or the LP it stands for), used where the user gave no
    function.
    """
    gave = [f for f, given in (("q*", adversary), ("p*", predictor)) if given is not None]
    rest = [f for f in ("q*", "p*") if f not in gave]
    builtin_text = f"the built-in {builtin.summary}"
    formula = "value(F) = your function" + "".join(f", {f} = yours" for f in gave)
    if rest:
        formula += f"; {' and '.join(rest)} from {builtin_text}"
    us = report.timings_us
    return FastPath(
        name=name,
        structure=f"your closed form {name!r} of this {loss.n_actions} x {loss.n_labels} matrix",
        match=_SameMatrix(loss.matrix.copy()),
        summary=f"your closed form {name!r}",
        formula=formula,
        theorem=f"yours, verified by advgame.verify_closed_form against the exact LP on "
        f"{sum(report.rows.values()):,} rows (max error {report.max_error:.1e}, exact at the "
        f"vertices: {report.exact_at_vertices})",
        cost=f"{us['value']:.2f} us/row for the value against the LP's {us['lp']:.2f} us/row "
        "(value, q* and p*), both measured after a warm-up call",
        value=_UserSolution(value, adversary or fallback_adversary),
        predictor=predictor or fallback_predictor,
        value_alone=value,
        user=True,
    )


def find(loss: LossMatrix | Entropy, table: tuple[FastPath, ...] = TABLE) -> tuple[FastPath, tuple]:
    """The first row of ``table`` (:data:`TABLE`, or a game's with a user's row first) that
    matches ``loss``, with its parameters."""
    for row in table:
        params = row.match(loss)
        if params is not None:
            return row, params
    raise ValueError(f"no fast path matches {loss!r}.")


def closed_form(loss: LossMatrix | Entropy) -> tuple[FastPath, tuple] | None:
    """The closed form that applies to ``loss`` with its parameters, or None."""
    row, params = find(loss)
    return (row, params) if row.is_closed_form else None


# ------------------------------------------------------------------------------ explanations
class PerSampleGame(Protocol):
    """What an explanation reads of an :class:`advgame.Game` (or an ``EntropyGame``)."""

    loss: Any
    structure: Any

    @property
    def fast_path(self) -> str | None: ...


def _no_closed_form(structure: Structure) -> str:
    """Why no closed form applies to a recognised structure."""
    if structure.kind == "abstain":
        return (
            f"no closed form: abstain with alpha = {structure.alpha:g} > "
            f"{ABSTAIN_CLOSED_FORM_MAX_ALPHA:g} (Theorems 12-13 hold only for alpha <= 1/2)."
        )
    if structure.kind == "permutation_hamming":
        return (
            "no closed form over labels: the Hamming loss between permutations is solved by the "
            "Birkhoff game's compact LP (k^2 + 2k variables instead of k!)."
        )
    return (
        "no closed form: the matrix is not zero-one, ordinal, squared or abstain "
        "(alpha <= 1/2) up to scale."
    )


def fast_path_lines(
    L: LossMatrix | None, example: LossMatrix, table: tuple[FastPath, ...] = TABLE
) -> list[str]:
    """The fast path ``Game(L).value(F, method='auto')`` takes, and why; and what it does not.

    ``L`` is None while a loss name waits for the number of classes; ``example`` is a matrix of
    the same structure (the loss itself when ``L`` is known); ``table`` is the game's (a user's
    row first, :meth:`advgame.Game.with_closed_form`).
    """
    row, _ = find(example, table)
    if row.user:
        builtin = find(example)[0]
        return [
            f"fast path: {row.summary} ({row.formula}).",
            f"verified: {row.theorem}.",
            f"cost: {row.cost}.",
            f"not used for the value: the built-in {builtin.summary} ({builtin.theorem}).",
        ]
    if row.is_closed_form:
        return [
            f"fast path: closed form for {row.name} ({row.theorem}: {row.cost}).",
            "not used: the vertex table and the LP (the closed form is exact and cheaper).",
        ]
    lines = [_no_closed_form(example.structure)]
    if L is None:
        lines.append(
            "fast path: decided once k is known (a vertex table when it is small and a call has "
            "enough rows to pay for building it, else the bulk LP oracle)."
        )
        return lines
    bases = basis_count(L.n_actions, L.n_labels)
    lp = f"the LP oracle: {LP.formula}"
    path = find(L)[0]
    if path is VERTEX_TABLE:
        rows = max(0, math.ceil(AUTO_TABLE_ROWS_PER_BASIS * bases - AUTO_LP_CALL_ROWS))
        lines.append(
            f"fast path: the vertex table ({bases:,} candidate bases <= {AUTO_VERTEX_BASES:,}: "
            f"{path.formula}) for a call of at least {rows:,} rows or once it is built; {lp} for "
            "smaller calls (building the table would cost more than it saves)."
        )
        return lines
    lines.append(f"not used: the vertex table ({bases:,} candidate bases > {AUTO_VERTEX_BASES:,}).")
    if path is BIRKHOFF:
        lines.append(f"fast path: {path.summary} ({path.theorem}; {path.cost}).")
    else:
        lines.append(f"fast path: {lp}.")
    return lines


def game_explanation(game: PerSampleGame) -> str:
    """:meth:`advgame.Game.explain`: the loss, its structure and the fast path ``auto`` takes."""
    if isinstance(game.loss, Entropy):
        row, _ = find(game.loss)
        return "\n".join(
            [
                repr(game),
                f"loss: generalised entropy {game.loss.kind} ({game.loss.formula}).",
                f"fast path: F, the conjugate of the entropy, in closed form ({row.formula}; "
                f"{row.theorem}; {row.cost}).",
            ]
        )
    L = game.loss
    lines = [
        repr(game),
        f"loss: {L.n_actions} actions x {L.n_labels} labels, recognised as {L.structure} "
        f"(from its numbers, to relative tolerance {STRUCTURE_RTOL:g}).",
    ]
    return "\n".join(lines + fast_path_lines(L, L, getattr(game, "fast_path_table", TABLE)))
