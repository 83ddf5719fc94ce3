r"""The per-sample adversarial game (Fathony et al. 2018a, Eq. 3-4, 9-10), vectorised over rows of potentials.

For potentials ``f`` (one per label) and a loss matrix ``L`` (actions x labels),

.. math::

    \mathrm{value}(f) &= \max_{q \in \Delta_k} \min_{p \in \Delta_l} p^\top L q + f^\top q
                       = \max_{q \in \Delta_k} H_L(q) + f^\top q,
                       \qquad H_L(q) = \min_a (L q)_a, \\
    \mathrm{AL}(f, y) &= \mathrm{value}(f) - f_y \quad \text{(adversarial surrogate loss)}.

``q*`` (the adversary) is a subgradient of ``value`` (Theorem 19); ``p*`` (the predictor, Eq. 9)
attains ``value = max_j (L^T p* + f)_j``.  Methods, which all agree:

``closed_form``
    the closed form of the recognised structure;
``vertices``
    a vertex table (Proposition 4): one matrix product, then complementary slackness for ``p*``;
``lp``
    the exact LP oracle (:class:`advgame.oracle.LPOracle`): the game scaled to O(1) numbers and
    solved for all rows at once by a vectorised simplex whose answers are certified by duality
    (HiGHS for any row that is not);
``birkhoff``
    for the Hamming loss between the ``m!`` permutations of ``m`` items, the compact LP of
    :class:`advgame.PermutationGame` over the Birkhoff polytope; other rows go to the LP;
``auto``
    the first row of :data:`advgame.fast_paths.TABLE` that matches the loss: its structures,
    formulas, theorems and costs are written there once (:meth:`Game.explain` prints them).

:meth:`Game.with_closed_form` puts a user's closed form, once verified against the LP
(:func:`advgame.verify_closed_form`), first in one game's table: ``auto`` and ``closed_form``
then use it.
"""

import threading
from typing import Any, NamedTuple, NoReturn

import numpy as np
from numpy.typing import ArrayLike

from . import fast_paths, vertices
from ._closed_form_check import CLOSED_FORM_RTOL, ClosedFormReport, check_closed_form
from ._validation import as_labels, as_potentials, power_of_two_unit
from .exceptions import NotApplicableError, SizeLimitError, SolverError
from .fast_paths import (
    AUTO_LP_CALL_ROWS,
    AUTO_TABLE_ROWS_PER_BASIS,
    AUTO_VERTEX_BASES,
    game_explanation,
)
from .losses import Entropy, LossMatrix, as_loss_matrix, permutation_items
from .oracle import LPOracle
from .permutation import (
    PermutationGame,
    birkhoff_decomposition,
    permutation_index,
    permutation_matrices,
)

__all__ = [
    "Game",
    "EntropyGame",
    "GameLPs",
    "ExtremePoints",
    "METHODS",
    "ENTROPY_METHODS",
    "AUTO_VERTEX_BASES",
    "AUTO_TABLE_ROWS_PER_BASIS",
    "AUTO_LP_CALL_ROWS",
]

METHODS = ("auto", "closed_form", "birkhoff", "vertices", "lp")
#: A row of potentials counts as linear in the permutation matrices when its least-squares
#: residual is at most this times ``max(1, max|f|)``.
LINEAR_POTENTIALS_RTOL = 1e-9
#: Methods of an :class:`EntropyGame`: its closed form or the exact convex program via cvxpy.
ENTROPY_METHODS = ("auto", "closed_form", "cvxpy")


#: The loss scales within which a game works in the loss's own units: ``2^-100 .. 2^100``.
NATIVE_SCALES = (2.0**-100, 2.0**100)
#: In units of the loss scale, the potentials of a label that is not a row's maximum when the
#: row spans more than float64 (see :meth:`Game._in_units`).
UNIT_FLOOR = 1e300


def loss_scale(matrix: np.ndarray) -> float:
    """The power of two a game divides its loss by (exactly, ``power_of_two_unit``): 1 for
    a largest entry within :data:`NATIVE_SCALES`, else the one that puts it in ``[1, 2)``."""
    return power_of_two_unit(matrix, NATIVE_SCALES)


def _check_value_range(value: np.ndarray, what: str = "the game value") -> None:
    """Refuse a result beyond float64 (an infinite value from finite inputs)."""
    if not np.all(np.isfinite(value)):
        raise ValueError(
            f"{what} exceeds float64's range (about 1.8e308) for these potentials and this "
            "loss: rescale both (the game is positively homogeneous: value(c L, c f) = c "
            "value(L, f))."
        )


class GameLPs(NamedTuple):
    """Both players' LPs of one sample (:meth:`Game.to_cvxpy`): two ``cvxpy.Problem``."""

    #: ``max v + f^T q  s.t.  L q >= v 1, sum(q) = 1, q >= 0`` (Fathony et al. 2018a, Eq. 4); ``'q'``, ``'v'``.
    adversary: object
    #: ``min u  s.t.  L^T p + f <= u 1, sum(p) = 1, p >= 0`` (Fathony et al. 2018a, Eq. 10); ``'p'``, ``'u'``.
    predictor: object


class ExtremePoints(NamedTuple):
    """The extreme points ``(Q, v)`` of ``{(q, v) : L q >= v 1, q in the simplex}``
    (:meth:`Game.extreme_points`)."""

    #: ``(m, k)``: one distribution over the labels per extreme point.
    Q: np.ndarray
    #: ``(m,)``: ``v[t] = min_a (L @ Q[t])_a``, the loss ``Q[t]`` guarantees against every action.
    v: np.ndarray


class Game:
    r"""The per-sample minimax game of a loss matrix.

    Parameters
    ----------
    loss : LossMatrix or array-like of shape (l, k), or Entropy
        ``loss[a, y]`` is the loss of action ``a`` when the label is ``y``.  A generalised entropy
        (:func:`advgame.losses.brier`, ``log``, ``quadratic``) gives an :class:`EntropyGame`.

    Attributes
    ----------
    loss : LossMatrix
    structure : Structure
        Recognised from the numbers; drives ``fast_path``.

    Notes
    -----
    Every method takes ``F`` of shape ``(n, k)`` (one row of potentials per sample) or ``(k,)``
    (one sample; results are then scalars / 1-D).  Potentials must be finite.

    Examples
    --------
    >>> import advgame as ag
    >>> g = ag.Game(ag.losses.zero_one(3))
    >>> float(g.value([1.0, 0.5, -2.0]))   # (1 + 0.5 + 1) / 2
    1.25
    >>> g.fast_path
    'zero_one'
    """

    def __new__(cls, loss=None):
        if cls is Game and isinstance(loss, Entropy):
            return super().__new__(EntropyGame)
        return super().__new__(cls)

    def __init__(self, loss: LossMatrix | Entropy | ArrayLike) -> None:
        self.loss = as_loss_matrix(loss)
        self.structure = self.loss.structure
        # the built-in machinery works on the loss in units of its scale (a power of two, so
        # the rescaling is exact) when that scale is near the ends of float64
        self._scale = loss_scale(self.loss.matrix)
        unit = self.loss if self._scale == 1.0 else LossMatrix(self.loss.matrix / self._scale)
        self._unit_loss = unit
        self._builtin, self._builtin_params = fast_paths.find(unit)
        self._rows = fast_paths.TABLE
        self._path, self._params = self._builtin, self._builtin_params
        self._oracle = LPOracle(unit.matrix)
        self._table = None
        self._table_lock = threading.Lock()
        items = permutation_items(self.n_labels)
        self._permutations = (
            PermutationGame(items) if self.structure.kind == "permutation_hamming" else None
        )

    def __getstate__(self):
        if self._path.user:  # a user's row pickles when the user's functions do
            return {"loss": self.loss, "closed_form": (self._path, self._report)}
        return {"loss": self.loss}

    def __setstate__(self, state):
        self.__init__(state["loss"])
        if "closed_form" in state:
            self._use(*state["closed_form"])

    def __repr__(self):
        return (
            f"Game({self.n_actions} actions x {self.n_labels} labels, fast_path={self.fast_path!r})"
        )

    @property
    def fast_path_table(self) -> tuple[fast_paths.FastPath, ...]:
        """The rows ``auto`` tries, in order: :data:`advgame.fast_paths.TABLE`, after a user's
        closed form when :meth:`with_closed_form` made the game."""
        return self._rows

    @property
    def closed_form_report(self) -> ClosedFormReport | None:
        """The verification of the user's closed form (:meth:`with_closed_form`), or None."""
        return self._report if self._path.user else None

    def _use(self, row: fast_paths.FastPath, report: ClosedFormReport) -> None:
        self._rows = (row, *fast_paths.TABLE)
        self._path, self._params = row, ()
        self._report = report

    def with_closed_form(
        self,
        value: Any,
        adversary: Any = None,
        predictor: Any = None,
        name: str | None = None,
        *,
        n: int = 2000,
        seed: int = 0,
        rtol: float = CLOSED_FORM_RTOL,
    ) -> "Game":
        r"""A new game whose ``method='auto'`` and ``method='closed_form'`` use your closed form.

        The functions are first checked against the exact LP by
        :func:`advgame.verify_closed_form` (same arguments); only if the check passes is the
        closed form registered, as a row of the fast-path table
        (:func:`advgame.fast_paths.user_row`) put before the built-in rows.  Where you give no
        ``adversary`` (``q*``) or ``predictor`` (``p*``), the built-in path supplies it (a
        closed form of Fathony et al. 2018a, the vertex table or the LP).  :meth:`explain` names
        your closed form, its verification and its measured cost.

        Parameters
        ----------
        value : callable
            ``value(F)``: an ``(n, k)`` array of potentials to the ``(n,)`` game values.
        adversary, predictor : callable, optional
            ``(n, k)`` distributions ``q*`` and ``(n, l)`` distributions ``p*``.
        name : str, optional
            What :attr:`fast_path` reports (default: ``value.__name__``).
        n, seed, rtol
            Of :func:`advgame.verify_closed_form`.

        Returns
        -------
        Game
            A new game; this one is unchanged.  Its :attr:`closed_form_report` is the check.

        Raises
        ------
        ValueError
            When the check fails; the message prints the report with its shrunk
            counterexample.  Also when a function raises or returns a wrong shape.

        Examples
        --------
        >>> import numpy as np
        >>> import advgame as ag
        >>> def zero_one(F):   # Fathony et al. 2018a, Theorem 5
        ...     top = -np.sort(-F, axis=1)
        ...     m = np.arange(1, F.shape[1] + 1)
        ...     return ((np.cumsum(top, axis=1) + m - 1) / m).max(axis=1)
        >>> game = ag.Game(ag.losses.zero_one(4)).with_closed_form(zero_one)
        >>> game.fast_path
        'zero_one'
        >>> float(game.value([1.0, 0.5, -2.0, -2.0]))
        1.25
        """
        report = self._verify_closed_form(value, adversary, predictor, n, seed, rtol, name)
        name = report.name
        if not report.passed:
            raise ValueError(
                f"the closed form {name!r} disagrees with the exact LP, so it is not "
                f"registered:\n{report}"
            )
        builtin = Game(self.loss)
        row = fast_paths.user_row(
            self.loss,
            name,
            value,
            adversary,
            predictor,
            builtin=self._builtin,
            fallback_adversary=builtin.adversary,
            fallback_predictor=builtin.predictor,
            report=report,
        )
        game = Game(self.loss)
        game._use(row, report)
        return game

    @property
    def n_labels(self) -> int:
        """Number of labels ``k`` (length of a potential vector)."""
        return self.loss.n_labels

    @property
    def n_actions(self) -> int:
        """Number of predictor actions ``l`` (length of ``p*``)."""
        return self.loss.n_actions

    @property
    def fast_path(self) -> str | None:
        """What ``method='auto'`` uses: the name of the first row of
        :data:`advgame.fast_paths.TABLE` that matches the loss (a closed-form kind,
        ``'vertices'``, ``'birkhoff'``), or None (the LP).  ``'vertices'``: the vertex table for
        calls with enough rows to pay for its construction, and for every call once it is built
        (:data:`AUTO_TABLE_ROWS_PER_BASIS`); the LP for the others.  The name of your closed form
        on a game made by :meth:`with_closed_form`."""
        return None if self._path is fast_paths.LP else self._path.name

    def explain(self) -> str:
        """Readable text: the recognised structure, the fast path ``method='auto'`` takes and
        why (formula, theorem, cost), and those it does not use (written from
        :data:`advgame.fast_paths.TABLE`)."""
        return game_explanation(self)

    # ------------------------------------------------------------------------------- dispatch
    def _table_pays_off(self, rows):
        """Whether ``auto`` uses the vertex table for a call of ``rows`` rows: it exists, or it
        is cheaper to build than the LP for this call (:data:`AUTO_TABLE_ROWS_PER_BASIS`)."""
        with self._table_lock:
            if self._table is not None:
                return True
        bases = vertices.basis_count(self.n_actions, self.n_labels)
        return rows >= AUTO_TABLE_ROWS_PER_BASIS * bases - AUTO_LP_CALL_ROWS

    def _resolve(self, method, rows=0):
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}; got {method!r}.")
        if method == "auto":
            path = self._path
            if path is fast_paths.VERTEX_TABLE and not self._table_pays_off(rows):
                return "lp"
            return "closed_form" if path.is_closed_form else path.name
        if method == "birkhoff" and self._permutations is None:
            raise NotApplicableError(
                "method='birkhoff' needs the Hamming loss between all permutations of m >= 3 "
                "items in itertools.permutations order (advgame.permutation.hamming_loss_matrix), "
                f"up to scale; this matrix is {self.structure}."
            )
        if method == "closed_form" and not self._path.is_closed_form:
            if self.structure.kind == "abstain":
                raise NotApplicableError(
                    f"the abstain closed form (Fathony et al. 2018a, Theorems 12-13) needs alpha <= 1/2; this "
                    f"matrix has alpha={self.structure.alpha:g}. Use method='vertices' or 'lp'."
                )
            raise NotApplicableError(
                "no closed form applies: the loss matrix is not zero-one, ordinal, squared or "
                "abstain (alpha <= 1/2) up to scale. Use method='vertices' or 'lp'."
            )
        return method

    def _birkhoff(self, F):
        """``(value, q*, p*)`` by the Birkhoff fast path; rows not linear in the permutation
        matrices (and only those) are solved by the LP."""
        game, c = self._permutations, self._unit_loss.structure.weight
        m, k = game.k, self.n_labels
        design = permutation_matrices(m).reshape(k, m * m)  # f = design @ vec(Theta)
        Theta = np.linalg.lstsq(design, F.T, rcond=None)[0].T
        residual = np.abs(Theta @ design.T - F).max(axis=1)
        linear = residual <= LINEAR_POTENTIALS_RTOL * np.maximum(1.0, np.abs(F).max(axis=1))
        value, Q, P = np.empty(F.shape[0]), np.zeros(F.shape), np.zeros((F.shape[0], k))
        rows = np.flatnonzero(linear)
        if rows.size:  # loss c L: value_c(f) = c value_1(f / c), same Q* and P̂*
            v, Qm, Pm = game._solve(Theta[rows].reshape(-1, m, m) / c, "auto")
            value[rows] = c * v
            for out, marginals in ((Q, Qm), (P, Pm)):
                for row, M in zip(rows, marginals):  # one small decomposition per sample
                    weights, sigma = birkhoff_decomposition(M)
                    np.add.at(out[row], permutation_index(sigma), weights)
        other = np.flatnonzero(~linear)
        if other.size:
            value[other], Q[other], P[other] = self._oracle.solve(F[other])
        return value, Q, P

    def _verify_closed_form(self, value, adversary, predictor, n, seed, rtol, name):
        """:func:`advgame.verify_closed_form` of this game: the user's functions against the
        exact LP oracle (``method='lp'``: value, ``q*`` and ``p*`` in one solve) and the
        extreme points of :meth:`extreme_points`."""
        if isinstance(self, EntropyGame):
            raise NotApplicableError(
                "a closed form is checked against the LP of a loss-matrix game; the "
                f"{self.loss.kind} entropy has no LP."
            )
        return check_closed_form(
            self.loss.matrix,
            {"value": value, "adversary": adversary, "predictor": predictor},
            solve=self._lp,
            extreme_points=self.extreme_points,
            n=n,
            seed=seed,
            rtol=rtol,
            name=name,
        )

    def _lp(self, F):
        """``(value, q*, p*)`` by the LP oracle, in the loss's own units."""
        value, Q, P = self._in_units(F, lambda U: self._oracle.solve(U))
        return value, Q, P

    def _in_units(self, F, solve):
        """``solve`` (returning ``(value, ...)``) on the potentials in units of the loss scale,
        its value scaled back.  A row whose potentials exceed float64 in those units spans more
        than ``2^1000`` loss scales: its value is the largest potential (the loss is below its
        last bit), its players those of the game on the maximising labels alone."""
        s = self._scale
        if s == 1.0:
            return solve(F)
        with np.errstate(over="ignore"):
            U = F / s
        beyond = ~np.all(np.isfinite(U), axis=1)
        if beyond.any():
            top = F[beyond].max(axis=1, keepdims=True)
            U[beyond] = np.where(F[beyond] == top, 0.0, -UNIT_FLOOR)
        value, *players = solve(U)
        with np.errstate(over="ignore"):
            value = value * s
        if beyond.any():
            value[beyond] = top[:, 0]
        _check_value_range(value)
        return (value, *players)

    def _solve_value(self, F, method):
        """The value alone: a user's row computes it without ``q*``."""
        alone = self._path.value_alone
        if alone is not None and self._resolve(method, F.shape[0]) == "closed_form":
            return np.asarray(alone(F, *self._params), dtype=np.float64)
        return self._solve_adversary(F, method)[0]

    def _solve_adversary(self, F, method):
        if self._path.user and self._resolve(method, F.shape[0]) == "closed_form":
            return self._path.value(F, *self._params)
        return self._in_units(F, lambda U: self._solve_unit_adversary(U, method))

    def _solve_unit_adversary(self, F, method):
        method = self._resolve(method, F.shape[0])
        if method == "birkhoff":
            return self._birkhoff(F)[:2]
        if method == "closed_form":
            return self._path.value(F, *self._params)
        if method == "vertices":
            table = self.vertex_table()
            value, index = table.value(F)
            return value, table.Q[index]
        value, Q, _ = self._oracle.solve(F)
        return value, Q

    def _predictor(self, F, method):
        if self._path.user and self._resolve(method, F.shape[0]) == "closed_form":
            return self._path.predictor(F, *self._params)
        return self._in_units(F, lambda U: (np.zeros(len(U)), self._unit_predictor(U, method)))[1]

    def _unit_predictor(self, F, method):
        method = self._resolve(method, F.shape[0])
        if method == "birkhoff":
            return self._birkhoff(F)[2]
        if method == "closed_form":
            return self._path.predictor(F, *self._params)
        if method == "vertices":
            table = self.vertex_table()
            value, index = table.value(F)
            P, ok = table.predictor(F, index, value)
            if not ok.all():
                P[~ok] = self._oracle.solve(F[~ok])[2]
            return P
        return self._oracle.solve(F)[2]

    # -------------------------------------------------------------------------------- public
    def value(self, F: ArrayLike, method: str = "auto") -> np.ndarray | float:
        r"""Game value ``max_q min_p p^T L q + f^T q`` for each row of ``F`` (Fathony et al. 2018a, Eq. 4)."""
        F, single = as_potentials(F, self.n_labels)
        value = self._solve_value(F, method)
        return value[0] if single else value

    def surrogate(self, F: ArrayLike, y: ArrayLike, method: str = "auto") -> np.ndarray | float:
        r"""Adversarial surrogate loss ``AL(f, y) = value(f) - f_y`` (Fathony et al. 2018a, Eq. 3).

        ``y`` holds label indices ``0..k-1``, one per row of ``F``.
        """
        F, single = as_potentials(F, self.n_labels)
        y = as_labels(y, F.shape[0], self.n_labels)
        with np.errstate(over="ignore"):
            loss = self._solve_value(F, method) - F[np.arange(F.shape[0]), y]
        _check_value_range(loss, "the surrogate loss value(f) - f_y")
        return loss[0] if single else loss

    def value_and_adversary(
        self, F: ArrayLike, method: str = "auto"
    ) -> tuple[np.ndarray, np.ndarray]:
        r"""``(value, q*)`` in one solve: the objective and subgradient that learning needs."""
        F, single = as_potentials(F, self.n_labels)
        value, Q = self._solve_adversary(F, method)
        return (value[0], Q[0]) if single else (value, Q)

    def _value_and_adversary(self, F: np.ndarray, method: str = "auto") -> tuple[Any, Any]:
        """:meth:`value_and_adversary` for trusted callers (the learners' objectives): ``F`` is
        already a float64 ``(n, k)`` array, so the validation pass is skipped.  Non-finite
        potentials give non-finite results instead of an error; callers check their output."""
        return self._solve_adversary(F, method)

    def adversary(self, F: ArrayLike, method: str = "auto") -> np.ndarray:
        r"""An optimal adversary ``q*`` per row: a subgradient of ``value`` (Theorem 19)."""
        F, single = as_potentials(F, self.n_labels)
        Q = self._solve_adversary(F, method)[1]
        return Q[0] if single else Q

    def predictor(self, F: ArrayLike, method: str = "auto") -> np.ndarray:
        r"""An optimal predictor ``p* = argmin_p max_j (L^T p + f)_j`` per row (Eq. 9/10).

        Shape ``(n, l)``: a distribution over actions (for abstain the last action abstains).
        """
        F, single = as_potentials(F, self.n_labels)
        P = self._predictor(F, method)
        return P[0] if single else P

    def predict(self, F: ArrayLike, method: str = "auto") -> np.ndarray | int | float:
        r"""The action ``argmax_a p*_a`` per row (for abstain, index ``k`` means abstain; Cor. 14)."""
        F, single = as_potentials(F, self.n_labels)
        actions = np.argmax(self._predictor(F, method), axis=1)
        return actions[0] if single else actions

    def entropy(self, Q: ArrayLike) -> np.ndarray | float:
        r"""The generalised entropy ``H_L(q) = min_a (L q)_a`` of each row of ``Q`` (Farnia and Tse 2016, Eq. 20).

        ``value(f) = max_q H_L(q) + f^T q``; for the zero-one loss ``H_L(q) = 1 - max_j q_j``.
        """
        Q, single = as_potentials(Q, self.n_labels, name="Q")
        H = np.min(Q @ self.loss.matrix.T, axis=1)
        return H[0] if single else H

    def extreme_points(self) -> "ExtremePoints":
        r"""The extreme points of :math:`\{(q, v) : Lq \ge v\mathbf 1, q \in \Delta_k\}`, the
        hypograph of :math:`H_L`, as an :class:`ExtremePoints` named tuple ``(Q, v)``.

        Each row ``t`` is one extreme point: ``Q[t]`` a distribution over the ``k`` labels and

        .. math::  v_t = H_L(Q_t) = \min_a (L Q_t)_a,

        the loss the adversary's distribution ``Q[t]`` guarantees against the best action (the
        predictor's best response).  The game value of potentials ``f`` is the maximum over the
        table, :math:`\mathrm{value}(f) = \max_t\ f^\top Q_t + v_t`: the linear function
        :math:`f^\top q + v` is maximised over the polytope at one of its vertices.

        For a recognised structure this is the closed-form vertex set (``2^k - 1`` points for
        zero-one, ``k(k+1)/2`` for ordinal, ...); otherwise it is enumerated from the matrix
        (:func:`advgame.vertices.enumerate_extreme_points`), which refuses with
        ``SizeLimitError`` when the matrix is too large.

        Returns
        -------
        ExtremePoints
            ``Q`` : ndarray of shape (m, k), rows in the simplex; ``v`` : ndarray of shape (m,),
            ``v[t] = min_a (L @ Q[t])_a``.  Copies: modifying them leaves the cached table
            intact.  Unpacks as ``Q, v = game.extreme_points()``.
        """
        table = self.vertex_table()
        return ExtremePoints(table.Q.copy(), table.v * self._scale)

    def vertex_table(self) -> vertices.VertexTable:
        """The cached :class:`advgame.vertices.VertexTable` (built on first use)."""
        with self._table_lock:
            if self._table is None:
                if self._builtin.vertices is not None:
                    Q, v = self._builtin.vertices(self.n_labels, *self._builtin_params)
                else:
                    try:
                        Q, v = vertices.enumerate_extreme_points(self._unit_loss.matrix)
                    except SizeLimitError as exc:
                        raise SizeLimitError(f"{exc} (Game.vertex_table)") from None
                self._table = vertices.VertexTable(self._unit_loss.matrix, Q, v)
            return self._table

    def to_cvxpy(self, f: ArrayLike) -> GameLPs:
        r"""Both players' LPs for one potential vector, as named cvxpy problems (for teaching).

        The adversary's LP (Fathony et al. 2018a, Eq. 4) and the predictor's LP (Fathony et al. 2018a, Eq. 10, its LP dual),
        for the loss matrix ``L`` (``l`` actions x ``k`` labels, any shape) and ``f``:

        .. math::

            \text{adversary:}\quad &\max_{q \in \mathbb{R}^k,\, v \in \mathbb{R}}\ v + f^\top q
                \quad \text{s.t.}\quad L q \ge v \mathbf{1},\ \mathbf{1}^\top q = 1,\ q \ge 0,
                \\
            \text{predictor:}\quad &\min_{p \in \mathbb{R}^l,\, u \in \mathbb{R}}\ u
                \quad \text{s.t.}\quad L^\top p + f \le u \mathbf{1},
                \ \mathbf{1}^\top p = 1,\ p \ge 0.

        Both optima equal ``value(f)`` (LP duality: Eq. 4 and Eq. 10 of Fathony et al. (2018a) have the same value).

        Parameters
        ----------
        f : array-like of shape (k,)
            One finite potential vector (one potential per label).

        Returns
        -------
        GameLPs
            A named pair ``(adversary, predictor)`` of ``cvxpy.Problem``.  ``L`` and ``f`` are the
            named constants ``cp.Constant(L, name="L")`` and ``cp.Constant(f, name="f")``, so
            ``print(problem)`` reads as the math above.  ``adversary.var_dict`` holds ``'q'`` and
            ``'v'``, ``predictor.var_dict`` holds ``'p'`` and ``'u'``; each problem's
            ``constraints`` are in the order written above, so after ``solve()``
            ``adversary.constraints[0].dual_value`` is a ``p*`` and
            ``predictor.constraints[0].dual_value`` a ``q*``.

        Raises
        ------
        ValueError
            When ``f`` is not one vector of ``k`` finite potentials (e.g. a 2-D batch).
        NotApplicableError
            For an :class:`EntropyGame` (not polyhedral: no LP; use :meth:`EntropyGame.program`).

        See Also
        --------
        lp : the adversary's problem alone (``to_cvxpy(f).adversary``).

        Examples
        --------
        >>> import advgame as ag
        >>> lps = ag.Game(ag.losses.zero_one(3)).to_cvxpy([1.0, 0.5, -2.0])
        >>> print(lps.adversary)
        maximize v + f @ q
        subject to v <= L @ q
                   Sum(q, None, False) == 1.0
                   0.0 <= q
        >>> print(lps.predictor)
        minimize u
        subject to L.T @ p + f <= u
                   Sum(p, None, False) == 1.0
                   0.0 <= p
        >>> [round(float(lp.solve()), 6) for lp in lps]   # both optima: (1 + 0.5 + 1) / 2
        [1.25, 1.25]
        """
        import cvxpy as cp

        F, single = as_potentials(f, self.n_labels, name="f")
        if not single:
            raise ValueError(
                f"f must be one potential vector of shape ({self.n_labels},); got {F.shape}."
            )
        L = cp.Constant(self.loss.matrix, name="L")
        f = cp.Constant(F[0], name="f")
        q = cp.Variable(self.n_labels, name="q")
        v = cp.Variable(name="v")
        adversary = cp.Problem(cp.Maximize(v + f @ q), [L @ q >= v, cp.sum(q) == 1, q >= 0])
        p = cp.Variable(self.n_actions, name="p")
        u = cp.Variable(name="u")
        predictor = cp.Problem(cp.Minimize(u), [L.T @ p + f <= u, cp.sum(p) == 1, p >= 0])
        return GameLPs(adversary=adversary, predictor=predictor)

    def lp(self, f: ArrayLike) -> Any:
        r"""The adversary's game LP for one potential vector as a cvxpy ``Problem`` (for teaching).

        ``max v + f^T q  s.t.  L q >= v 1,  sum(q) = 1,  q >= 0`` (Fathony et al. 2018a, Eq. 4); the same
        problem as ``to_cvxpy(f).adversary`` (:meth:`to_cvxpy` also gives the predictor's LP).
        After ``problem.solve()``, ``problem.value`` is the game value, ``problem.var_dict['q']``
        the adversary and ``problem.constraints[0].dual_value`` the predictor ``p*``.
        """
        return self.to_cvxpy(f).adversary


class EntropyGame(Game):
    r"""The game of a smooth generalised entropy (Farnia and Tse 2016, Eq. 20): ``F(f) = max_q H(q) + f^T q``.

    Built by ``ag.Game(entropy)``.  ``value`` is ``F``, ``adversary`` is ``∇F`` (the worst-case
    conditional, Farnia and Tse 2016, Eq. 22) and ``predictor`` is its Bayes act: the distribution itself for
    Brier and log (Eq. 9, 13), the conditional mean for the quadratic loss (Eq. 11).  ``surrogate``
    is ``F(f) - theta(y)^T f`` with the one-hot ``theta`` (so ``f_y``) for classification and
    ``theta(y) = y`` (a real target) for the quadratic loss.  Methods: ``closed_form`` (Farnia and Tse 2016,
    Eq. 28, 35/73, 32-33) and ``cvxpy``, the exact program ``max_q H(q) + f^T q`` (a QP for Brier
    and quadratic, an exponential-cone program for log) solved by Clarabel, for reference.

    Examples
    --------
    >>> import advgame as ag
    >>> g = ag.Game(ag.losses.brier(3))
    >>> g.adversary([2.0, 0.0, 0.0]).round(3)   # projection of f / 2 onto the simplex
    array([1., 0., 0.])
    """

    def __init__(self, loss: Entropy) -> None:
        if not isinstance(loss, Entropy):
            raise TypeError(f"EntropyGame needs an Entropy; got {type(loss).__name__}.")
        self.loss = loss
        self.structure = None
        self._path, self._params = fast_paths.find(loss)

    def __getstate__(self):
        return {"loss": self.loss}

    def __repr__(self):
        return f"Game({self.loss.kind} entropy, {self.n_labels} potentials)"

    @property
    def n_actions(self) -> int:
        """Its Bayes act is a distribution over the labels (or the mean): ``n_labels``."""
        return self.loss.n_labels

    @property
    def fast_path(self) -> str | None:
        """The entropy's closed form (``'brier'``, ``'log'`` or ``'quadratic'``)."""
        return self.loss.kind

    def _resolve(self, method):
        if method not in ENTROPY_METHODS:
            raise ValueError(
                f"method must be one of {ENTROPY_METHODS} for an entropy game; got {method!r}."
            )
        return "closed_form" if method == "auto" else method

    def _solve_adversary(self, F, method):
        if self._resolve(method) == "closed_form":
            return self._path.value(F, *self._params)
        return self._solve_program(F)

    def _solve_program(self, F):
        import cvxpy as cp

        problem, q = self._program(F)
        problem.solve(solver=cp.CLARABEL)
        if problem.status != cp.OPTIMAL:
            raise SolverError(f"the {self.loss.kind} entropy program ended with {problem.status}.")
        Q = np.asarray(q.value, dtype=float).reshape(F.shape)
        if self.loss.kind == "quadratic":
            value = self._quadratic_constant() - Q[:, 0] ** 2 + F[:, 0] * Q[:, 0]
        else:
            Q = np.clip(Q, 0.0, None)
            Q /= Q.sum(axis=1, keepdims=True)
            value = self.entropy(Q) + np.einsum("ij,ij->i", F, Q)
        return value, Q

    def _quadratic_constant(self):
        return 0.0 if self.loss.rho is None else self.loss.rho**2

    def entropy(self, Q: ArrayLike) -> np.ndarray | float:
        """The generalised entropy ``H(q)`` of each row of ``Q`` (``rho^2 - m^2`` for the
        quadratic loss, with ``m`` the conditional mean in column 0)."""
        Q, single = as_potentials(Q, self.n_labels, name="Q")
        if self.loss.kind == "quadratic":
            H = self._quadratic_constant() - Q[:, 0] ** 2
        elif self.loss.kind == "brier":
            H = 1.0 - np.einsum("ij,ij->i", Q, Q)
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                H = -np.sum(np.where(Q > 0, Q * np.log(Q), 0.0), axis=1)
        return H[0] if single else H

    def _program(self, F):
        import cvxpy as cp

        n, k = F.shape
        if self.loss.kind == "quadratic":
            m = cp.Variable(n, name="mean")
            rho = self.loss.rho
            constraints = [] if rho is None else [cp.abs(m) <= rho]
            objective = cp.sum(cp.multiply(F[:, 0], m) - cp.square(m))
            return cp.Problem(cp.Maximize(objective), constraints), m
        q = cp.Variable((n, k), nonneg=True, name="q")
        entropy = -cp.sum_squares(q) if self.loss.kind == "brier" else cp.sum(cp.entr(q))
        problem = cp.Problem(
            cp.Maximize(entropy + cp.sum(cp.multiply(F, q))), [cp.sum(q, axis=1) == 1]
        )
        return problem, q

    def _predictor(self, F, method):
        return self._solve_adversary(F, method)[1]

    def program(self, f: ArrayLike) -> Any:
        """The exact program ``max_q H(q) + f^T q`` for one potential vector, as a cvxpy Problem.

        After ``problem.solve()``, ``problem.var_dict`` holds the maximiser (``'q'``, or ``'mean'``
        for the quadratic loss); ``problem.value`` is ``F(f)`` minus the constant ``1`` (Brier) or
        ``rho^2`` (quadratic), which the program leaves out.
        """
        F, single = as_potentials(f, self.n_labels, name="f")
        if not single:
            raise ValueError(
                f"f must be one potential vector of shape ({self.n_labels},); got {F.shape}."
            )
        return self._program(F)[0]

    def surrogate(self, F: ArrayLike, y: ArrayLike, method: str = "auto") -> np.ndarray | float:
        r"""``F(f) - theta(y)^T f``: ``f_y`` for labels, ``y f`` for the real quadratic target."""
        F, single = as_potentials(F, self.n_labels)
        value = self._solve_adversary(F, method)[0]
        if self.loss.kind == "quadratic":
            y = np.asarray(y, dtype=float).reshape(-1)
            if y.shape != (F.shape[0],) or not np.all(np.isfinite(y)):
                raise ValueError(
                    f"y must hold one finite real target per row ({F.shape[0]}); got {y!r}."
                )
            loss = value - y * F[:, 0]
        else:
            y = as_labels(y, F.shape[0], self.n_labels)
            loss = value - F[np.arange(F.shape[0]), y]
        return loss[0] if single else loss

    def predict(self, F: ArrayLike, method: str = "auto") -> np.ndarray | int | float:
        """MAP label of ``∇F`` (ties broken by the larger potential), or the quadratic mean."""
        F, single = as_potentials(F, self.n_labels)
        Q = self._predictor(F, method)
        if self.loss.kind == "quadratic":
            out = Q[:, 0]
        else:
            out = map_label(Q, F)
        return out[0] if single else out

    def _not_polyhedral(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise NotApplicableError(
            f"the {self.loss.kind} entropy is not polyhedral: it has no vertex table or LP. "
            "Use method='closed_form' or 'cvxpy', or EntropyGame.program(f)."
        )

    #: Not polyhedral, so no LP pair either: raises ``NotApplicableError`` (use :meth:`program`).
    extreme_points = vertex_table = lp = to_cvxpy = _not_polyhedral


def map_label(Q: np.ndarray, F: np.ndarray) -> np.ndarray:
    """``argmax_j Q_j`` per row, ties (within 1e-12) broken by the larger potential ``F_j``."""
    best = Q >= Q.max(axis=1, keepdims=True) - 1e-12
    return np.argmax(np.where(best, F, -np.inf), axis=1)
