r"""The engine of :func:`advgame.verify.verify_closed_form`: a user's closed form of the
per-sample game against the exact LP.

For a loss matrix ``L`` (``l`` actions x ``k`` labels) and potentials ``f``, the game of
Fathony et al. (2018a, Eq. 4 and its dual, Eq. 10) is

.. math::

    V(f) = \max_{q \in \Delta_k} \min_a (L q)_a + f^\top q
         = \min_{p \in \Delta_l} \max_j (L^\top p + f)_j .

A user's vectorised ``value(F)`` is compared with the LP's ``V``; a user's ``q*`` is checked for
optimality, not for equality (it need not be unique): it lies in the simplex and attains the
value, ``min_a (L q)_a + f.q = V``; a user's ``p*`` likewise, ``max_j (L^T p + f)_j = V``.
An error is measured relative to the loss scale ``s = max L - min L``, with a float64 allowance
for large potentials: the error of a row is ``|difference| / (s + FLOAT_SLACK * max_j |f_j|)``
(a float64 of size ``M`` carries a rounding error of about ``1e-16 M``, so no formula, the LP's
included, is exact to ``1e-9 s`` at ``M = 1e8 s``).  Probabilities (the simplex) are checked in
absolute terms.

The rows checked: random rows (normal, small integers with ties, duplicated maxima); every tie
pattern (weak ordering) of the labels for ``k <= TIE_MAX_K`` (random ones beyond) at integer
levels; every magnitude ``1e-8 .. 1e8`` times ``s``, with and without a common offset; then an
adversarial search (a batched coordinate and random-direction search maximising the error from
the worst rows found).  The worst row is then shrunk (:func:`_shrink`) to a simple one: fewest
distinct values, then fewest non-integers, then the smallest entries, keeping the error.

The engine takes the LP (``solve(F) -> (value, q*, p*)``) and the extreme points from its
caller (:class:`advgame.Game`), so that it imports no game: ``Game.with_closed_form`` and
:func:`advgame.verify.verify_closed_form` both run it.
"""

from __future__ import annotations

import itertools
import math
import numbers
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ._validation import check_real

__all__ = ["ClosedFormReport", "check_closed_form", "CLOSED_FORM_RTOL"]

#: Largest error (relative to the loss scale) a user's closed form may have on any row.
CLOSED_FORM_RTOL = 1e-9
#: The float64 allowance: a row's error is divided by ``s + FLOAT_SLACK * max|f|``.
FLOAT_SLACK = 1e-5
#: Every weak ordering of the labels is checked up to this ``k`` (4,683 orderings at ``k = 6``).
TIE_MAX_K = 6
#: The magnitudes, in units of the loss scale.
MAGNITUDES = 10.0 ** np.arange(-8, 9)
#: Starts and rounds of the adversarial search, and most coordinates / tie moves per round.
SEARCH_STARTS, SEARCH_ROUNDS, SEARCH_MOVES = 6, 25, 32
#: Most rounds of shrinking a counterexample, and most candidates tried per round.
SHRINK_ROUNDS, SHRINK_CANDIDATES = 60, 400
#: The rational check runs for ``k`` up to this and at most this many extreme points.
RATIONAL_MAX_K, RATIONAL_MAX_VERTICES, RATIONAL_ROWS = 8, 5_000, 300
#: Largest denominator of an exact fraction (as ``Game.extreme_points`` is printed).
MAX_DENOMINATOR = 10**6


@dataclass(frozen=True)
class ClosedFormReport:
    """The result of :func:`advgame.verify.verify_closed_form`; ``str(report)`` reads it.

    Attributes
    ----------
    name : str
        The closed form's name.
    passed : bool
        Whether every checked row has an error of at most ``rtol``.
    max_error : float
        The largest error over all rows and functions, relative to the loss scale
        ``max L - min L`` (module docstring).
    errors : dict
        The largest error of each given function (``'value'``, ``'adversary'``,
        ``'predictor'``).
    counterexample : ndarray of shape (k,) or None
        When the check fails: the row with the largest error, shrunk to a simple one (fewest
        distinct values, small integers or ties) on which the error persists.  None otherwise.
    counterexample_error : float or None
        The error there.
    lp_value, lp_adversary, lp_predictor : float, ndarray, ndarray or None
        The exact LP's value, ``q*`` and ``p*`` at the counterexample.
    user_value, user_adversary, user_predictor : float, ndarray, ndarray or None
        What the user's functions return there (None for a function not given).
    rows : dict
        How many rows each family checked (random, tie patterns, magnitudes, search).
    exact_at_vertices : bool or None
        The rational check: whether the value (and ``q*``, ``p*``) equals, in exact fractions,
        the value of the extreme points of ``Game(L).extreme_points()`` on integer rows; None when
        the matrix is not rational or too large.
    rational_note : str
        What the rational check did.
    timings_us : dict
        Microseconds per row of each user function and of the LP (value, ``q*`` and ``p*`` in
        one solve), each measured after a warm-up call.
    loss_scale, rtol : float
    failure : str
        Which function the counterexample shows wrong (``'value'``, ``'adversary'`` or
        ``'predictor'``), or ``''``.
    """

    name: str
    passed: bool
    max_error: float
    errors: dict
    rows: dict
    exact_at_vertices: bool | None
    rational_note: str
    timings_us: dict
    loss_scale: float
    rtol: float = CLOSED_FORM_RTOL
    counterexample: np.ndarray | None = None
    counterexample_error: float | None = None
    failure: str = ""
    lp_value: float | None = None
    lp_adversary: np.ndarray | None = None
    lp_predictor: np.ndarray | None = None
    user_value: float | None = None
    user_adversary: np.ndarray | None = None
    user_predictor: np.ndarray | None = None

    @property
    def speedup(self) -> float:
        """The LP's time per row over the user's value function's (both after warm-up)."""
        return self.timings_us["lp"] / max(self.timings_us["value"], 1e-9)

    def __str__(self) -> str:
        total = sum(self.rows.values())
        verdict = "PASSED" if self.passed else "FAILED"
        lines = [
            f"closed form {self.name!r}: {verdict} (max error {self.max_error:.1e} relative to the "
            f"loss scale {self.loss_scale:g}; tolerance {self.rtol:g})",
            f"rows checked against the exact LP: {total:,} ("
            + ", ".join(f"{name} {count:,}" for name, count in self.rows.items())
            + ")",
            "largest error: "
            + ", ".join(f"{name} {error:.1e}" for name, error in self.errors.items()),
            f"rational check: {self.rational_note}",
            "us/row after a warm-up call: "
            + ", ".join(f"{name} {us:.2f}" for name, us in self.timings_us.items())
            + f"  (LP / value: {self.speedup:.1f}x)",
        ]
        if self.counterexample is None:
            return "\n".join(lines)
        lines += [
            f"counterexample ({self.failure}, error {self.counterexample_error:.2e}), shrunk:",
            f"  f               = {_vector(self.counterexample)}",
            f"  LP value        = {self.lp_value:.12g}",
        ]
        if self.user_value is not None:
            lines.append(f"  your value      = {self.user_value:.12g}")
        lines.append(f"  LP q*           = {_vector(self.lp_adversary)}")
        if self.user_adversary is not None:
            lines.append(f"  your q*         = {_vector(self.user_adversary)}")
        lines.append(f"  LP p*           = {_vector(self.lp_predictor)}")
        if self.user_predictor is not None:
            lines.append(f"  your p*         = {_vector(self.user_predictor)}")
        return "\n".join(lines)


def _vector(x: np.ndarray) -> str:
    return "[" + ", ".join(f"{float(v) + 0.0:.6g}" for v in x) + "]"


# ------------------------------------------------------------------------------ the user's calls
def _call(function: Callable, name: str, F: np.ndarray, columns: int | None) -> np.ndarray:
    """``function(F)`` checked: it must not raise and must return finite numbers of shape
    ``(n,)`` (``columns`` None) or ``(n, columns)``."""
    n, k = F.shape
    expected = (n,) if columns is None else (n, columns)
    try:
        out = function(F.copy())
    except Exception as exc:
        raise ValueError(
            f"{name}(F) raised {type(exc).__name__}: {exc} (F of shape {F.shape}; {name} must be "
            f"vectorised: an (n, {k}) array of potentials in, shape {expected} out)."
        ) from exc
    try:
        out = np.asarray(out, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}(F) must return a numeric array; could not convert it.") from exc
    if out.shape != expected:
        raise ValueError(
            f"{name}(F) must return an array of shape {expected} for F of shape {F.shape}; got "
            f"shape {out.shape}."
        )
    if not np.all(np.isfinite(out)):
        row = int(np.argwhere(~np.isfinite(out))[0][0])
        raise ValueError(
            f"{name}(F) returned a non-finite number at row {row}, potentials f = "
            f"{_vector(F[row])}."
        )
    return out


class _Checker:
    """The errors of the user's functions on rows of potentials, against the LP."""

    def __init__(self, matrix, solve, functions):
        self.L = matrix
        self.s = float(matrix.max() - matrix.min()) or 1.0
        self.solve = solve
        self.functions = {name: f for name, f in functions.items() if f is not None}
        self.columns = {"value": None, "adversary": matrix.shape[1], "predictor": matrix.shape[0]}

    def outputs(self, F):
        return {name: _call(f, name, F, self.columns[name]) for name, f in self.functions.items()}

    def errors(self, F):
        """``(total, parts, lp, outputs)``: the largest error of each row, per function."""
        V, Q, P = self.solve(F)
        out = self.outputs(F)
        scale = self.s + FLOAT_SLACK * np.abs(F).max(axis=1)
        parts = {}
        if "value" in out:
            parts["value"] = np.abs(out["value"] - V) / scale
        if "adversary" in out:
            q = out["adversary"]
            attained = (q @ self.L.T).min(axis=1) + np.einsum("ij,ij->i", F, q)
            parts["adversary"] = np.maximum(np.abs(attained - V) / scale, _infeasible(q))
        if "predictor" in out:
            p = out["predictor"]
            guaranteed = (p @ self.L + F).max(axis=1)
            parts["predictor"] = np.maximum(np.abs(guaranteed - V) / scale, _infeasible(p))
        total = np.max(np.stack(list(parts.values())), axis=0)
        return total, parts, (V, Q, P), out

    def total(self, F):
        return self.errors(F)[0]


def _infeasible(X):
    """How far each row is from the simplex (absolute)."""
    return np.maximum(np.maximum(-X.min(axis=1), np.abs(X.sum(axis=1) - 1.0)), 0.0)


# ------------------------------------------------------------------------------------ the rows
def _random_rows(k, n, rng, s):
    """A quarter each: normal; small integers (ties); normal with the maximum duplicated; wide."""
    parts = np.array_split(np.arange(n), 4)
    F = rng.normal(size=(n, k)) * s
    F[parts[1]] = rng.integers(-3, 4, size=(parts[1].size, k)) * (s / 2)
    top = np.argmax(F[parts[2]], axis=1)
    other = (top + 1 + rng.integers(0, max(k - 1, 1), size=top.size)) % k
    F[parts[2], other] = F[parts[2], top]
    F[parts[3]] = rng.uniform(-4, 4, size=(parts[3].size, k)) * s
    return F


def _tie_patterns(k, rng, count):
    """Label codes ``(m, k)``: every weak ordering for ``k <= TIE_MAX_K``, else ``count`` random
    ones (equal codes are tied labels)."""
    if k <= TIE_MAX_K:
        codes = np.array(list(itertools.product(range(k), repeat=k)))
        ordered = np.sort(codes, axis=1)
        distinct = 1 + np.count_nonzero(np.diff(ordered, axis=1), axis=1)
        return codes[distinct == codes.max(axis=1) + 1]  # dense ranks: each ordering once
    levels = rng.integers(1, k + 1, size=count)
    return np.floor(rng.uniform(size=(count, k)) * levels[:, None]).astype(np.int64)


def _tie_rows(k, rng, s, count):
    """Each tie pattern at consecutive levels ``s/2`` and ``s`` apart and at random increasing
    integer levels (in units of ``s/2``)."""
    codes = _tie_patterns(k, rng, count)
    steps = rng.integers(1, 4, size=codes.shape)
    levels = np.cumsum(steps, axis=1) - steps[:, :1] - rng.integers(0, 3, size=(codes.shape[0], 1))
    uneven = np.take_along_axis(levels, codes, axis=1)
    return np.vstack([codes * (s / 2), codes * s, uneven * (s / 2)])


def _magnitude_rows(k, rng, s, count):
    """``count`` base rows times every magnitude, with and without a common offset."""
    base = np.vstack([rng.normal(size=(count, k)), rng.integers(-2, 3, size=(count, k))])
    shift = rng.normal(size=(2 * count, 1))
    rows = [base * (m * s) for m in MAGNITUDES] + [(base + 3 * shift) * (m * s) for m in MAGNITUDES]
    return np.vstack(rows)


# --------------------------------------------------------------------- search and shrinking
def _search(checker, X, s, rng):
    """A batched local search maximising the error from each row of ``X``: each round tries
    ``+-step`` on the coordinates, ties ``f_j := f_i`` (at most :data:`SEARCH_MOVES` of each,
    drawn at random when there are more) and random directions, keeps the best move of each
    start and halves the step of a start that did not move.  Returns the rows, their errors
    and how many rows were evaluated."""
    m, k = X.shape
    X = X.copy()
    err = checker.total(X)
    evaluated = m
    step = 0.5 * (s + 1e-3 * np.abs(X).max(axis=1))
    pairs = np.transpose(np.nonzero(~np.eye(k, dtype=bool)))
    for _ in range(SEARCH_ROUNDS):
        axes = np.eye(k)[rng.permutation(k)[:SEARCH_MOVES]]
        moves = np.concatenate([axes, -axes, rng.normal(size=(6, k)) / math.sqrt(k)], axis=0)
        cand = X[:, None, :] + step[:, None, None] * moves[None]
        i, j = pairs[rng.permutation(len(pairs))[:SEARCH_MOVES]].T
        ties = np.repeat(X[:, None, :], i.size, axis=1)
        ties[:, np.arange(i.size), j] = X[:, i]
        cand = np.concatenate([cand, ties], axis=1)
        evaluated += cand.shape[0] * cand.shape[1]
        c = checker.total(cand.reshape(-1, k)).reshape(m, -1)
        best = np.argmax(c, axis=1)
        better = c[np.arange(m), best] > err
        X[better] = cand[better, best[better]]
        err[better] = c[better, best[better]]
        step[~better] /= 2
    return X, err, evaluated


def _cost(f):
    """Simplicity of a row: distinct values, then non-integers, then size."""
    return (np.unique(f).size, int(np.count_nonzero(f != np.round(f))), float(np.abs(f).sum()))


def _simpler(f, s, rng):
    """Candidate simplifications of one row: rounded to grids, shifted so an entry is 0, two
    neighbouring values merged into a tie, one value moved toward 0 (at most
    :data:`SHRINK_CANDIDATES`, drawn at random when there are more)."""
    units = sorted({1.0, 0.5, 0.25, s, s / 2, s / 4})
    cand = [np.round(f / u) * u for u in units]
    values = np.unique(f)
    cand += [f - v for v in values]
    for a, b in zip(values[:-1], values[1:]):
        cand += [np.where(f == a, b, f), np.where(f == b, a, f)]
    for v in values[values != 0]:
        cand.append(np.where(f == v, 0.0, f))
        cand.append(np.where(f == v, np.round(v / 2), f))
        for u in {1.0, s}:
            if abs(v) >= u:
                cand.append(np.where(f == v, v - math.copysign(u, v), f))
    cand = np.array(cand)
    return cand[rng.permutation(len(cand))[:SHRINK_CANDIDATES]]


def _shrink(checker, f, tol, s, rng):
    """The simplest row reached from ``f`` by :func:`_simpler` moves on which the error stays
    above ``tol`` (greedy: the simplest such candidate, while it is simpler)."""
    current, cost = f.copy(), _cost(f)
    for _ in range(SHRINK_ROUNDS):
        cand = _simpler(current, s, rng)
        keep = cand[checker.total(cand) > tol]
        if not keep.shape[0]:
            break
        costs = [_cost(c) for c in keep]
        best = min(range(len(costs)), key=costs.__getitem__)
        if costs[best] >= cost:
            break
        current, cost = keep[best], costs[best]
    return current + 0.0  # no -0.0


# ---------------------------------------------------------------------------- rational check
def _fractions(array, exact=True):
    """The entries of ``array`` as the nearest fractions with denominator <= MAX_DENOMINATOR
    (an object array); None when ``exact`` and one of them is not such a fraction (to 1e-12)."""
    out = np.empty(array.shape, dtype=object)
    for index, x in np.ndenumerate(array):
        fraction = Fraction(float(x)).limit_denominator(MAX_DENOMINATOR)
        if exact and abs(float(fraction) - x) > 1e-12 * max(1.0, abs(x)):
            return None
        out[index] = fraction
    return out


def _rational_check(checker, F, extreme_points):
    """``(exact, note)``: the user's functions in exact fractions at integer rows ``F``, against
    the value ``max_t f.Q_t + v_t`` of the extreme points (Fathony et al. 2018a, Prop. 4)."""
    L = checker.L
    Lf = _fractions(L)
    if Lf is None:
        return None, "skipped (the loss matrix is not rational)"
    if L.shape[1] > RATIONAL_MAX_K or extreme_points is None:
        return None, f"skipped (k > {RATIONAL_MAX_K})"
    try:
        Q = extreme_points()[0]
    except ValueError as exc:  # SizeLimitError
        return None, f"skipped ({exc})"
    Qf = _fractions(Q) if Q.shape[0] <= RATIONAL_MAX_VERTICES else None
    if Qf is None:
        return None, "skipped (the extreme points are too many or not exact fractions)"
    v = (Qf @ Lf.T).min(axis=1)  # v_t = min_a (L Q_t)_a, exactly
    Ff = _fractions(F)
    if Ff is None:
        return None, "skipped (the potentials of the integer rows are not exact fractions)"
    exact_value = (Ff @ Qf.T + v[None, :]).max(axis=1)
    out = checker.outputs(F)
    wrong = []
    if "value" in out:
        got = _fractions(out["value"], exact=False)
        wrong.append(np.any(got != exact_value))
    if "adversary" in out:
        q = _fractions(out["adversary"], exact=False)
        attained = (q @ Lf.T).min(axis=1) + (Ff * q).sum(axis=1)
        wrong.append(np.any((attained != exact_value) | (q.sum(axis=1) != 1)))
    if "predictor" in out:
        p = _fractions(out["predictor"], exact=False)
        guaranteed = (p @ Lf + Ff).max(axis=1)
        wrong.append(np.any((guaranteed != exact_value) | (p.sum(axis=1) != 1)))
    exact = not any(wrong)
    what = "exact" if exact else "NOT exact"
    return exact, (
        f"{what} in fractions at {F.shape[0]:,} integer rows against the {Q.shape[0]:,} extreme "
        "points of Game(L).extreme_points()"
    )


# ----------------------------------------------------------------------------------- timings
def _per_row_us(function, F):
    """Microseconds per row of ``function(F)``, after a warm-up call on two rows (the first
    call may compile a kernel or build a table)."""
    function(F[:2].copy())
    start = time.perf_counter()
    function(F.copy())
    return 1e6 * (time.perf_counter() - start) / F.shape[0]


# ------------------------------------------------------------------------------------ driver
def check_closed_form(
    matrix: np.ndarray,
    functions: dict[str, Callable | None],
    solve: Callable[[np.ndarray], tuple[Any, Any, Any]],
    extreme_points: Callable[[], Any] | None,
    n: int,
    seed: int,
    rtol: float,
    name: str | None,
) -> ClosedFormReport:
    """Check ``functions`` (``'value'``, ``'adversary'``, ``'predictor'``) of the game of
    ``matrix`` against ``solve`` (the exact LP); see :func:`advgame.verify.verify_closed_form`.
    ``name`` defaults to the value function's ``__name__`` (``'user'`` for a lambda)."""
    if not callable(functions.get("value")):
        raise TypeError(
            f"value must be a callable value(F) -> (n,) values; got {functions.get('value')!r}."
        )
    for label, count, low in (("n", n, 4), ("seed", seed, 0)):
        if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < low:
            raise ValueError(f"{label} must be an integer >= {low}; got {count!r}.")
    check_real("rtol", rtol, low=0, strict=True)
    n, seed, rtol = int(n), int(seed), float(rtol)
    if name is None:
        name = getattr(functions["value"], "__name__", "user")
        name = "user" if name == "<lambda>" else name
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty string; got {name!r}.")
    for key in ("adversary", "predictor"):
        if functions.get(key) is not None and not callable(functions[key]):
            raise TypeError(f"{key} must be a callable or None; got {functions[key]!r}.")
    rng = np.random.default_rng(seed)
    checker = _Checker(np.asarray(matrix, dtype=np.float64), solve, functions)
    s, k = checker.s, matrix.shape[1]
    families = {
        "random": _random_rows(k, n, rng, s),
        "tie patterns": _tie_rows(k, rng, s, max(n // 4, 1)),
        "magnitudes": _magnitude_rows(k, rng, s, max(n // 100, 4)),
    }
    F = np.vstack(list(families.values()))
    rows = {name: block.shape[0] for name, block in families.items()}
    checker.errors(F[:2])  # shapes and warm-up before the first timed or large call
    total = checker.total(F)
    worst = np.argsort(total)[::-1][: SEARCH_STARTS - 2]
    starts = np.vstack([F[worst], families["random"][rng.integers(0, n, size=2)]])
    found, found_err, rows["search"] = _search(checker, starts, s, rng)
    every, every_err = np.vstack([F, found]), np.concatenate([total, found_err])
    _, parts, _, _ = checker.errors(every)
    errors = {key: float(part.max()) for key, part in parts.items()}
    max_error = float(every_err.max())
    passed = max_error <= rtol
    integer_rows = families["tie patterns"][:RATIONAL_ROWS]
    exact, note = _rational_check(checker, integer_rows, extreme_points)
    random_rows = families["random"]
    timings = {key: _per_row_us(f, random_rows) for key, f in checker.functions.items()}
    timings["lp"] = _per_row_us(solve, random_rows)
    found_row = None if passed else _shrink(checker, every[np.argmax(every_err)], rtol, s, rng)
    detail: dict[str, Any] = {}
    if found_row is not None:
        err, row_parts, (V, Q, P), out = checker.errors(found_row[None, :])
        detail = {
            "counterexample": found_row,
            "counterexample_error": float(err[0]),
            "failure": max(row_parts, key=lambda key: row_parts[key][0]),
            "lp_value": float(V[0]),
            "lp_adversary": Q[0],
            "lp_predictor": P[0],
            "user_value": float(out["value"][0]),
            **{f"user_{key}": out[key][0] for key in ("adversary", "predictor") if key in out},
        }
    return ClosedFormReport(
        name=name,
        passed=passed,
        max_error=max_error,
        errors=errors,
        rows=rows,
        exact_at_vertices=exact,
        rational_note=note,
        timings_us=timings,
        loss_scale=s,
        rtol=rtol,
        **detail,
    )
