r"""Cross-checks of every method of a game against each other and against optimality certificates.

For each available method the report gives, over random potentials (Gaussian, integer-valued with
ties, duplicated maxima, magnitudes up to ``1e6``):

* ``value_error``: ``max |V_method - V_lp|`` relative to ``max(1, |V_lp|, max L)``;
* ``adversary_gap``: ``max |V - (H_L(q*) + f^T q*)|`` (``q*`` attains the value);
* ``predictor_gap``: ``max |max_j (L^T p* + f)_j - V|`` (``p*`` attains the value, LP duality);
* ``feasibility``: the largest violation of ``q* in Δ_k`` and ``p* in Δ_l``;
* ``seconds`` and ``per_row_us``: time for value + adversary + predictor on all rows, measured
  after a warm-up call on two rows (the first call of a compiled closed form compiles its kernel,
  the first of ``vertices`` builds the table).

A method is correct when all four are below the tolerance (``1e-9`` by default).

:func:`verify_closed_form` checks a *user's* closed form (vectorised ``value``, ``q*`` and ``p*``
functions) against the exact LP, and shrinks the worst row it finds to a simple counterexample;
:meth:`advgame.Game.with_closed_form` registers one that passes.
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._closed_form_check import CLOSED_FORM_RTOL, ClosedFormReport
from ._validation import as_potentials, check_real
from .exceptions import NotApplicableError, SizeLimitError
from .game import EntropyGame, Game

__all__ = [
    "MethodCheck",
    "VerificationReport",
    "ClosedFormReport",
    "random_potentials",
    "verify_game",
    "verify_closed_form",
    "VERIFY_RTOL",
]

#: Relative tolerance a method must meet against the LP and its own certificates.
VERIFY_RTOL = 1e-9


def random_potentials(k: int, n: int = 200, seed: int = 0, scale: float = 1e6) -> np.ndarray:
    """Random potentials that exercise the edge cases of the closed forms.

    A quarter each: standard normal; small integers (many exact ties); normal with the maximum
    duplicated; normal times ``scale`` (large magnitudes) with a constant offset.

    Parameters
    ----------
    k : int
        Number of labels.
    n : int
        Number of rows (at least 4).
    seed : int
        Seed of the numpy generator; the same seed gives the same potentials.
    scale : float
        Magnitude of the last quarter.
    """
    for name, value, low in (("k", k, 2), ("n", n, 1)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}; got {value!r}.")
    check_real("scale", scale, low=0, strict=True)
    rng = np.random.default_rng(seed)
    parts = np.array_split(np.arange(n), 4)
    F = rng.normal(size=(n, k))
    F[parts[1]] = rng.integers(-2, 3, size=(parts[1].size, k))
    top = np.argmax(F[parts[2]], axis=1)
    other = (top + 1 + rng.integers(0, k - 1, size=top.size)) % k
    F[parts[2], other] = F[parts[2], top]
    F[parts[3]] = scale * rng.normal(size=(parts[3].size, k)) + rng.normal() * scale
    return F


@dataclass
class MethodCheck:
    """The result of checking one method (see the module docstring for the fields)."""

    method: str
    value_error: float
    adversary_gap: float
    predictor_gap: float
    feasibility: float
    seconds: float
    per_row_us: float

    @property
    def max_error(self) -> float:
        """The largest of the value error, the two certificate gaps and the infeasibility;
        ``inf`` when any is NaN (``max`` would let a NaN through, depending on its place)."""
        errors = (self.value_error, self.adversary_gap, self.predictor_gap, self.feasibility)
        return float("inf") if any(e != e for e in errors) else max(errors)

    def ok(self, rtol: float = VERIFY_RTOL) -> bool:
        """Whether every error and gap is at most ``rtol``."""
        return self.max_error <= rtol


@dataclass
class VerificationReport:
    """All method checks for one game; ``str(report)`` is a readable table."""

    game: Game
    n_rows: int
    checks: list = field(default_factory=list)
    skipped: dict = field(default_factory=dict)

    @property
    def max_error(self) -> float:
        """The largest error or gap over all checked methods."""
        return max(c.max_error for c in self.checks)

    def ok(self, rtol: float = VERIFY_RTOL) -> bool:
        """Whether every checked method passes (skipped methods do not count)."""
        return all(c.ok(rtol) for c in self.checks)

    def __str__(self):
        head = (
            f"{'method':<12} {'value err':>10} {'q* gap':>10} {'p* gap':>10} {'feasib.':>10} "
            f"{'us/row':>10}  ok"
        )
        lines = [f"{self.game.loss.structure} loss, {self.n_rows} random potential rows", head]
        for c in self.checks:
            lines.append(
                f"{c.method:<12} {c.value_error:>10.1e} {c.adversary_gap:>10.1e} "
                f"{c.predictor_gap:>10.1e} {c.feasibility:>10.1e} {c.per_row_us:>10.1f}  "
                f"{'yes' if c.ok() else 'NO'}"
            )
        for method, reason in self.skipped.items():
            lines.append(f"{method:<12} skipped: {reason}")
        return "\n".join(lines)


def _check(game, F, method, reference):
    L = game.loss.matrix
    for solve in (game.value, game.adversary, game.predictor):  # warm-up: compile, build tables
        solve(F[:2], method=method)
    start = time.perf_counter()
    value = game.value(F, method=method)
    Q = game.adversary(F, method=method)
    P = game.predictor(F, method=method)
    seconds = time.perf_counter() - start
    ref = value if reference is None else reference
    scale = np.maximum(np.maximum(np.abs(ref), L.max()), 1.0)
    certified_q = (Q @ L.T).min(axis=1) + np.sum(F * Q, axis=1)
    certified_p = (P @ L + F).max(axis=1)
    feasibility = max(
        -Q.min(), -P.min(), np.abs(Q.sum(axis=1) - 1).max(), np.abs(P.sum(axis=1) - 1).max(), 0.0
    )
    return MethodCheck(
        method=method,
        value_error=float(np.max(np.abs(value - ref) / scale)),
        adversary_gap=float(np.max(np.abs(certified_q - value) / scale)),
        predictor_gap=float(np.max(np.abs(certified_p - value) / scale)),
        feasibility=float(feasibility) + 0.0,
        seconds=seconds,
        per_row_us=1e6 * seconds / F.shape[0],
    ), value


def verify_game(
    loss: Any, n: int = 200, seed: int = 0, F: ArrayLike | None = None
) -> VerificationReport:
    """Compare every applicable method of ``Game(loss)`` on random potentials.

    Parameters
    ----------
    loss : LossMatrix, array-like or Game
    n : int
        Rows of random potentials (ignored when ``F`` is given).
    seed : int
        Seed for :func:`random_potentials`.
    F : ndarray of shape (n, k), optional
        Potentials to use instead of random ones.

    Returns
    -------
    VerificationReport
        Methods that do not apply (no closed form, vertex table too large) are listed as skipped.
    """
    game = loss if isinstance(loss, Game) else Game(loss)
    if isinstance(game, EntropyGame):
        raise NotApplicableError(
            f"verify_game checks the methods of a loss-matrix game; got the {game.loss.kind} "
            "entropy, which has no LP, vertices or Birkhoff method."
        )
    if F is None:
        F = random_potentials(game.n_labels, n=n, seed=seed)
    F = as_potentials(F, game.n_labels)[0]
    report = VerificationReport(game=game, n_rows=F.shape[0])
    lp_check, reference = _check(game, F, "lp", None)
    report.checks.append(lp_check)
    birkhoff = ("birkhoff",) if game.structure.kind == "permutation_hamming" else ()
    for method in ("closed_form", *birkhoff, "vertices"):
        try:
            report.checks.append(_check(game, F, method, reference)[0])
        except (NotApplicableError, SizeLimitError) as exc:
            report.skipped[method] = str(exc)
    return report


def verify_closed_form(
    loss: Any,
    value: Any,
    adversary: Any = None,
    predictor: Any = None,
    n: int = 2000,
    seed: int = 0,
    *,
    rtol: float = CLOSED_FORM_RTOL,
    name: str | None = None,
) -> ClosedFormReport:
    r"""Check a user's closed form of the per-sample game against the exact LP.

    The game of a loss matrix ``L`` (Fathony et al. 2018a, Eq. 4 and its dual, Eq. 10) is

    .. math::

        V(f) = \max_{q \in \Delta_k} \min_a (Lq)_a + f^\top q
             = \min_{p \in \Delta_l} \max_j (L^\top p + f)_j .

    ``value`` is compared with ``Game(L).value(F, method="lp")``; ``q*`` and ``p*`` are checked
    for optimality, not equality (they need not be unique): each lies in the simplex and attains
    the LP's value, ``min_a (L q)_a + f^T q = V`` and ``max_j (L^T p + f)_j = V``.  The rows:
    ``n`` random rows (normal, small integers with ties, duplicated maxima); every tie pattern
    (weak ordering) of the labels for ``k <= 6`` (random patterns beyond) at integer levels;
    magnitudes ``1e-8`` to ``1e8`` times the loss scale, with and without an offset; and an
    adversarial search maximising the error from the worst rows found.  The worst row is shrunk
    to a simple counterexample (fewest distinct values, small integers, ties) on which the error
    persists.  Where ``L`` is rational, the functions are also checked in exact fractions
    against the extreme points of :meth:`advgame.Game.extreme_points` on integer rows.

    Parameters
    ----------
    loss : LossMatrix, array-like of shape (l, k) or Game
    value : callable
        ``value(F)``: an ``(n, k)`` array of potentials to the ``(n,)`` game values.
    adversary : callable, optional
        ``adversary(F)``: ``(n, k)`` distributions ``q*`` over the labels.
    predictor : callable, optional
        ``predictor(F)``: ``(n, l)`` distributions ``p*`` over the actions.
    n : int
        Random rows (the other families add their own; about ``n + 14,000`` rows for ``k = 6``).
    seed : int
        Seed of the random rows and of the search.
    rtol : float
        Largest error allowed, relative to the loss scale ``max L - min L`` (with a float64
        allowance of ``1e-5 max|f|`` for large potentials).
    name : str, optional
        The closed form's name in the report (default: ``value.__name__``).

    Returns
    -------
    ClosedFormReport
        ``passed``, ``max_error``, ``counterexample`` (a 1-d row, shrunk) with the LP's value,
        ``q*`` and ``p*`` there, ``exact_at_vertices`` and the time per row of each function
        and of the LP, measured after a warm-up call.

    Raises
    ------
    ValueError
        When a function raises, returns the wrong shape or a non-finite number.
    TypeError
        When ``value`` is not callable.

    Examples
    --------
    >>> import numpy as np
    >>> import advgame as ag
    >>> def zero_one(F):   # Theorem 5: max over top sets S of (sum_S f + |S| - 1) / |S|
    ...     top = -np.sort(-F, axis=1)
    ...     m = np.arange(1, F.shape[1] + 1)
    ...     return ((np.cumsum(top, axis=1) + m - 1) / m).max(axis=1)
    >>> ag.verify_closed_form(ag.losses.zero_one(4), zero_one).passed
    True
    >>> def wrong(F):      # off by one: |S| instead of |S| - 1
    ...     top = -np.sort(-F, axis=1)
    ...     m = np.arange(1, F.shape[1] + 1)
    ...     return ((np.cumsum(top, axis=1) + m) / m).max(axis=1)
    >>> ag.verify_closed_form(ag.losses.zero_one(4), wrong).counterexample
    array([0., 0., 0., 0.])
    """
    game = loss if isinstance(loss, Game) else Game(loss)
    return game._verify_closed_form(value, adversary, predictor, n, seed, rtol, name)
