r"""The Birkhoff (permutation) game: permutations as labels with the Hamming loss (Fathony et al.
2018c).

Labels are permutations of ``k`` items, encoded as permutation matrices ``P`` (label-ranking
convention: item ``j`` with rank ``r_j`` gives ``P[j, r_j - 1] = 1``).  The loss of predicting
``P̂`` when the truth is ``P`` is the Hamming loss

.. math::  \ell(\hat P, P) = \sum_j 1[\hat\pi_j \ne \pi_j] = k - \langle \hat P, P \rangle,

and the potentials are linear in the permutation matrix, ``f(π) = <Θ, P_π>`` with a score matrix
``Θ`` of shape ``(k, k)`` (``Θ[j, r]`` scores item ``j`` at position ``r``).  The game of Fathony et
al. (2018a, Eq. 4) over the ``k!`` labels,

.. math::

    \mathrm{value}(Θ) = \max_{q \in \Delta_{k!}} \min_{p \in \Delta_{k!}}
        \mathbb E_{\hat\pi \sim p, \pi \sim q}\,[k - \langle P_{\hat\pi}, P_\pi\rangle]
        + \mathbb E_{\pi \sim q} \langle Θ, P_\pi \rangle,

depends on ``q`` and ``p`` only through their marginals ``Q = E_q P_π`` and ``P̂ = E_p P_π̂``,
which range over the Birkhoff polytope ``B_k`` of doubly stochastic matrices (Birkhoff-von
Neumann).  Hence (Fathony et al. 2018c; the design notes, docs/design.md, Appendix B)

.. math::

    \mathrm{value}(Θ) &= \max_{Q \in B_k} \Big[k - \max_{P \in B_k} \langle P, Q\rangle
                        + \langle Θ, Q\rangle\Big] \\
                      &= \max_{Q, \alpha, \beta}\ k - 1^\top\alpha - 1^\top\beta
                        + \langle Θ, Q \rangle
                        \quad\text{s.t.}\quad Q \in B_k,\ \alpha_i + \beta_j \ge Q_{ij},

where the inner assignment LP ``max_{P in B_k} <P, Q>`` was replaced by its LP dual
``min 1^T alpha + 1^T beta s.t. alpha_i + beta_j >= Q_ij``: an LP with ``k^2 + 2k`` variables
instead of a game over ``k!`` classes.

**The predictor from the duals.**  Attach multipliers ``P̂_ij >= 0`` to the rows
``alpha_i + beta_j - Q_ij >= 0``.  The Lagrangian is

.. math::  k - 1^\top\alpha - 1^\top\beta + \langle Θ, Q\rangle
           + \sum_{ij} \hat P_{ij} (\alpha_i + \beta_j - Q_{ij}),

and stationarity in the free variables ``alpha_i`` and ``beta_j`` forces ``sum_j P̂_ij = 1`` and
``sum_i P̂_ij = 1``: ``P̂`` is doubly stochastic.  What is left is
``k + max_{Q in B_k} <Θ - P̂, Q>``, so the LP dual is

.. math::  \min_{\hat P \in B_k} \max_{Q \in B_k}\ k - \langle \hat P, Q \rangle
           + \langle Θ, Q \rangle
           = \min_{\hat P \in B_k}\ k + \max_\pi \langle Θ - \hat P, P_\pi\rangle,

exactly the predictor's side of the game (the inner maximum is attained at a permutation, an
assignment problem).  The optimal duals of the coupling rows are therefore the predictor's
minimax marginals ``P̂*``, and strong duality says its worst case equals the value.  ``Q*`` (the
primal) is a subgradient of ``value`` in ``Θ`` (Fathony et al. 2018a, Theorem 19), which is all
learning needs.

Fast path: for ``k = 2`` the two permutations (identity, swap) have Hamming distance 2, so the game
is the zero-one game of weight 2 (Fathony et al. 2018a, Theorem 5) on
``f = (Θ00 + Θ11, Θ01 + Θ10)``, solved in closed form, vectorised.  No exact closed form is known
here for ``k >= 3``; those use the LP.
"""

import itertools
import math
import numbers
import threading

import numpy as np
from numpy.typing import ArrayLike
from scipy import sparse
from scipy.optimize import linear_sum_assignment

from ._validation import as_float_array, check_finite
from .exceptions import NotApplicableError, SizeLimitError
from .losses import MAX_RECOGNISED_ITEMS, permutation_hamming_template
from .oracle import highs_model, run_warm

__all__ = [
    "PermutationGame",
    "METHODS",
    "DECODINGS",
    "MAX_ENUMERATION_K",
    "PERMUTATION_TOLERANCE",
    "MAX_LP_ITEMS",
    "all_permutations",
    "permutation_matrices",
    "hamming_loss_matrix",
    "ranks_to_matrices",
    "matrices_to_ranks",
    "birkhoff_decomposition",
    "permutation_index",
]

#: ``method`` values: ``auto`` is the closed form for ``k = 2`` and the LP otherwise.
METHODS = ("auto", "closed_form", "lp")
#: ``decode`` values of :meth:`PermutationGame.predict`.
DECODINGS = ("map", "predictor")
#: Largest ``k`` for which the ``k!`` permutations are enumerated (``6! = 720``), the same
#: limit as the recognition of permutation Hamming losses.
MAX_ENUMERATION_K = MAX_RECOGNISED_ITEMS
#: How far :func:`birkhoff_decomposition`'s input may be from doubly stochastic.
DOUBLY_STOCHASTIC_TOL = 1e-6
#: Largest ``k`` of :class:`PermutationGame`: its LP has ``k^2 + 2k`` columns and rows.
MAX_LP_ITEMS = 1_000
#: How far an entry of a permutation matrix may be from 0 or 1.
PERMUTATION_TOLERANCE = 1e-9


# ------------------------------------------------------------------------------ enumeration
def _check_k(k, name="k"):
    if not isinstance(k, numbers.Integral) or isinstance(k, bool) or k < 2:
        raise ValueError(f"{name} must be an integer >= 2 (the number of items); got {k!r}.")
    return int(k)


def _check_enumerable(k, what):
    k = _check_k(k)
    if k > MAX_ENUMERATION_K:
        raise SizeLimitError(
            f"{what} enumerates all k! permutations; k={k} gives {math.factorial(k)} (limit: "
            f"k <= {MAX_ENUMERATION_K}). Use PermutationGame(k), whose LP is polynomial in k."
        )
    return k


def all_permutations(k: int) -> np.ndarray:
    """All ``k!`` permutations as 0-based position vectors, in ``itertools.permutations`` order.

    Row ``m`` gives ``sigma[m, j]``, the position (rank - 1) of item ``j``; the identity is row 0.

    Raises
    ------
    SizeLimitError
        If ``k > MAX_ENUMERATION_K``.
    """
    k = _check_enumerable(k, "all_permutations")
    return np.array(list(itertools.permutations(range(k))), dtype=np.int64)


def permutation_matrices(k: int) -> np.ndarray:
    """The ``k!`` permutation matrices ``P[m, j, sigma[m, j]] = 1`` in :func:`all_permutations`
    order, shape ``(k!, k, k)``."""
    sigma = all_permutations(k)
    P = np.zeros((sigma.shape[0], k, k))
    P[np.arange(sigma.shape[0])[:, None], np.arange(k)[None, :], sigma] = 1.0
    return P


def hamming_loss_matrix(k: int) -> np.ndarray:
    r"""The ``k! x k!`` Hamming loss ``L[a, b] = k - <P_a, P_b>`` between all permutations.

    Rows and columns follow :func:`all_permutations`.  ``ag.Game(LossMatrix(L))`` with potentials
    ``f_m = <Θ, P_m>`` is the brute-force reference of :class:`PermutationGame`.

    Raises
    ------
    SizeLimitError
        If ``k > MAX_ENUMERATION_K`` (the matrix would have more than ``720^2`` entries).

    Examples
    --------
    >>> hamming_loss_matrix(2)
    array([[0., 2.],
           [2., 0.]])
    """
    return permutation_hamming_template(_check_enumerable(k, "hamming_loss_matrix"))


def ranks_to_matrices(R: ArrayLike, name: str = "R") -> np.ndarray:
    """Rank vectors (1 = best) ``(..., k)`` to permutation matrices ``P[..., j, R[..., j] - 1] = 1``.

    Raises ValueError (naming ``name``) unless every vector is a permutation of ``1..k``.
    """
    R = np.asarray(R)
    k = R.shape[-1]
    if np.any(np.sort(R, axis=-1) != np.arange(1, k + 1)):
        raise ValueError(f"{name} must hold rank vectors, permutations of 1..{k}; got {R!r}.")
    R = R.astype(np.int64)
    P = np.zeros(R.shape + (k,))
    np.put_along_axis(P, (R - 1)[..., None], 1.0, axis=-1)
    return P


def matrices_to_ranks(P: ArrayLike) -> np.ndarray:
    """Permutation matrices ``(..., k, k)`` to rank vectors ``(..., k)`` (1 = best)."""
    return np.argmax(np.asarray(P), axis=-1).astype(np.int64) + 1


def permutation_index(sigma: ArrayLike) -> int | np.ndarray:
    """Index of each position vector ``sigma`` (0-based, ``(..., k)``) in
    :func:`all_permutations` order (lexicographic: the Lehmer code read in factorial base)."""
    sigma = np.asarray(sigma)
    k = sigma.shape[-1] if sigma.ndim else 0
    if k == 0 or not np.all(np.sort(sigma, axis=-1) == np.arange(k)):
        raise ValueError(
            f"sigma must hold position vectors, permutations of 0..{max(k - 1, 0)}; got shape "
            f"{sigma.shape}."
        )
    sigma = sigma.astype(np.int64)
    smaller_later = np.sum(
        sigma[..., :, None] > sigma[..., None, :], axis=-1, where=np.triu(np.ones((k, k), bool), 1)
    )
    radix = np.array([math.factorial(k - 1 - j) for j in range(k)], dtype=np.int64)
    return smaller_later @ radix


def birkhoff_decomposition(
    M: ArrayLike, tol: float = PERMUTATION_TOLERANCE
) -> tuple[np.ndarray, np.ndarray]:
    r"""Write a doubly stochastic matrix as a convex combination of permutation matrices.

    Birkhoff-von Neumann, greedily: find a permutation inside the support of the residual (a
    perfect matching of its entries above ``tol``, by ``scipy.optimize.linear_sum_assignment``),
    take the smallest entry on it as its weight, subtract, repeat; each step empties at least one
    entry, so at most ``k^2 - 2k + 2`` permutations are used.  What is left below ``tol`` is
    spread by renormalising the weights.

    Parameters
    ----------
    M : ndarray of shape (k, k)
        Doubly stochastic up to ``tol`` (e.g. a game's ``Q*`` or ``P̂*``).

    Returns
    -------
    weights : ndarray of shape (m,), positive, summing to one
    sigma : ndarray of int, shape (m, k)
        Position vectors: permutation ``i`` puts item ``j`` at position ``sigma[i, j]``, and
        ``sum_i weights[i] P_{sigma_i}`` equals ``M`` up to ``k * tol``.
    """
    R = as_float_array("M", M).copy()
    if R.ndim != 2 or R.shape[0] != R.shape[1] or R.size == 0:
        raise ValueError(f"M must be a non-empty square (k, k) matrix; got shape {R.shape}.")
    check_finite("M", R)
    k = R.shape[0]
    error = max(np.abs(R.sum(axis=0) - 1).max(), np.abs(R.sum(axis=1) - 1).max(), -R.min())
    if error > DOUBLY_STOCHASTIC_TOL:
        raise ValueError(
            f"M must be doubly stochastic (non-negative, rows and columns summing to 1) within "
            f"{DOUBLY_STOCHASTIC_TOL:g}; it is off by {error:.3g}."
        )
    weights, sigma = [], []
    for _ in range(k * k):
        if R.max() <= tol:
            break
        rows, cols = linear_sum_assignment(R > tol, maximize=True)
        if not np.all(R[rows, cols] > tol):
            break  # the residual is below tol on some row: nothing doubly stochastic is left
        weight = R[rows, cols].min()
        R[rows, cols] -= weight
        weights.append(weight)
        sigma.append(cols)
    weights = np.array(weights)
    return weights / weights.sum(), np.array(sigma, dtype=np.int64)


# -------------------------------------------------------------------------------- the game
class PermutationGame:
    r"""The adversarial game over permutations of ``k`` items with the Hamming loss.

    Parameters
    ----------
    k : int >= 2
        Number of items.

    Notes
    -----
    Every method takes a score matrix ``Theta`` of shape ``(k, k)`` (one example; results are then
    scalars / one matrix) or a batch ``(n, k, k)``.  ``Theta[j, r]`` is the score of putting item
    ``j`` at position ``r`` (rank ``r + 1``), so ``f(π) = <Θ, P_π>``.

    ``method='lp'`` solves the compact LP (docs/design.md, Appendix B) in one persistent HiGHS model
    per game (built on first use; only the ``k^2`` costs change between examples, so the simplex
    warm-starts).  ``method='closed_form'`` is the exact ``k = 2`` reduction to the zero-one game of
    weight 2; ``'auto'`` uses it when ``k = 2`` and the LP otherwise.

    The model is shared by threads under a lock; pickling drops the HiGHS handle.

    Examples
    --------
    >>> g = PermutationGame(3)
    >>> round(float(g.value(np.zeros((3, 3)))), 9)   # uniform adversary: k - 1
    2.0
    >>> g.predict(np.eye(3))                         # MAP: item j at rank j + 1
    array([1, 2, 3])
    """

    def __init__(self, k: int) -> None:
        self.k = _check_k(k)
        if self.k > MAX_LP_ITEMS:
            raise SizeLimitError(
                f"k must be at most MAX_LP_ITEMS={MAX_LP_ITEMS:,} items: the game LP has k^2 + 2k "
                f"columns ({self.k**2 + 2 * self.k:,} for k={self.k:,})."
            )
        self._highs = None
        self._lock = threading.Lock()

    def __getstate__(self):
        return {"k": self.k}

    def __setstate__(self, state):
        self.__init__(state["k"])

    def __repr__(self):
        return f"PermutationGame(k={self.k}, fast_path={self.fast_path!r})"

    @property
    def fast_path(self) -> str | None:
        """``'zero_one'`` for ``k = 2`` (what ``method='auto'`` uses), else None (the LP)."""
        return "zero_one" if self.k == 2 else None

    # -------------------------------------------------------------------------- validation
    def _theta(self, Theta, name="Theta"):
        k = self.k
        T = as_float_array(name, Theta)
        if T.ndim not in (2, 3) or T.shape[-2:] != (k, k):
            raise ValueError(
                f"{name} must have shape ({k}, {k}) or (n, {k}, {k}) (item x position scores); got "
                f"an array with shape {T.shape}."
            )
        single = T.ndim == 2
        if single:
            T = T[None]
        if T.shape[0] == 0:
            raise ValueError(f"{name} is empty: expected at least one ({k}, {k}) score matrix.")
        check_finite(name, T if not single else T[0])
        return T, single

    def _truth(self, P_true, n, single, name="P_true"):
        """Permutation matrices ``(n, k, k)`` from matrices or 1-based rank vectors."""
        k = self.k
        P = as_float_array(name, P_true)
        matrix_shape = (k, k) if single else (n, k, k)
        rank_shape = (k,) if single else (n, k)
        if P.shape == matrix_shape:
            P = P.reshape(n, k, k)
            check_finite(name, P)
            binary = np.all(
                (np.abs(P) <= PERMUTATION_TOLERANCE) | (np.abs(P - 1) <= PERMUTATION_TOLERANCE)
            )
            if not (
                binary
                and np.all(np.abs(P.sum(axis=1) - 1) <= PERMUTATION_TOLERANCE)
                and np.all(np.abs(P.sum(axis=2) - 1) <= PERMUTATION_TOLERANCE)
            ):
                raise ValueError(
                    f"{name} must hold permutation matrices (0/1 entries, one 1 in every row and "
                    "column)."
                )
            return np.round(P)
        if P.shape == rank_shape:
            R = P.reshape(n, k)
            if not (np.all(np.isfinite(R)) and np.all(R == np.round(R))):
                raise ValueError(f"{name} rank vectors must hold integers 1..{k}; got {P_true!r}.")
            R = R.astype(np.int64)
            if not np.all(np.sort(R, axis=1) == np.arange(1, k + 1)):
                raise ValueError(
                    f"{name} rank vectors must be permutations of 1..{k} (1 = best, each rank "
                    f"once); got {P_true!r}."
                )
            return ranks_to_matrices(R)
        raise ValueError(
            f"{name} must be permutation matrices of shape {matrix_shape} or rank vectors of shape "
            f"{rank_shape} (one per score matrix); got shape {P.shape}."
        )

    def _resolve(self, method):
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}; got {method!r}.")
        if method == "auto":
            return "closed_form" if self.k == 2 else "lp"
        if method == "closed_form" and self.k != 2:
            raise NotApplicableError(
                f"the permutation game has a closed form only for k = 2 (the zero-one game of "
                f"weight 2); this game has k={self.k}. Use method='lp'."
            )
        return method

    # ---------------------------------------------------------------------------------- LP
    def _build(self):
        r"""Columns ``[vec(Q) (row-major), alpha, beta]``; rows: ``k^2`` couplings
        ``alpha_i + beta_j - Q_ij >= 0``, ``k`` row sums ``= 1`` and ``k - 1`` column sums ``= 1``
        (the last column sum is implied by the others)."""
        k = self.k
        kk = k * k
        i, j = np.divmod(np.arange(kk), k)
        cells = np.arange(kk)
        couple = sparse.coo_matrix(
            (
                np.r_[-np.ones(kk), np.ones(kk), np.ones(kk)],
                (np.r_[cells, cells, cells], np.r_[cells, kk + i, kk + k + j]),
            ),
            shape=(kk, kk + 2 * k),
        )
        rows = sparse.coo_matrix((np.ones(kk), (i, cells)), shape=(k, kk + 2 * k))
        keep = j < k - 1
        cols = sparse.coo_matrix(
            (np.ones(keep.sum()), (j[keep], cells[keep])), shape=(k - 1, kk + 2 * k)
        )
        A = sparse.vstack([couple, rows, cols]).tocsc()
        return highs_model(
            A,
            np.r_[np.zeros(kk), -np.ones(2 * k)],
            (
                np.r_[np.zeros(kk), np.full(2 * k, -np.inf)],
                np.r_[np.ones(kk), np.full(2 * k, np.inf)],
            ),
            (
                np.r_[np.zeros(kk), np.ones(2 * k - 1)],
                np.r_[np.full(kk, np.inf), np.ones(2 * k - 1)],
            ),
            maximize=True,
            presolve=False,
        )

    def _solve_lp(self, T):
        """``(value, Q*, P̂*)`` for every example, one warm-started solve each."""
        n, k, _ = T.shape
        kk = k * k
        value = np.empty(n)
        Q = np.empty((n, kk))
        P = np.empty((n, kk))
        columns = np.arange(kk, dtype=np.int32)
        # <Θ - s 1^T, Q> = <Θ, Q> - sum(s) on B_k: subtracting row maxima keeps the costs small.
        shift = T.max(axis=2, keepdims=True)
        costs = (T - shift).reshape(n, kk)
        offset = k + shift.sum(axis=(1, 2))
        with self._lock:
            if self._highs is None:
                self._highs = self._build()
            h = self._highs
            for e in range(n):
                h.changeColsCost(kk, columns, costs[e])
                run_warm(h, f"the permutation game LP for scores {T[e]!r}")
                solution = h.getSolution()
                value[e] = h.getInfo().objective_function_value + offset[e]
                Q[e] = solution.col_value[:kk]
                P[e] = solution.row_dual[:kk]
        # HiGHS reports duals of a maximisation with >= rows as non-positive numbers.
        P = np.clip(-P, 0.0, None).reshape(n, k, k)
        Q = np.clip(Q, 0.0, None).reshape(n, k, k)
        return value, Q, P

    # ------------------------------------------------------------------------- k = 2 form
    @staticmethod
    def _solve_pair(T):
        r"""``k = 2``: zero-one game of weight 2 on ``f = (<Θ, I>, <Θ, S>)`` (Fathony et al. 2018a, Theorem 5).

        ``value = max(max f, (f_1 + f_2)/2 + 1)``; with ``d = f_1 - f_2`` the adversary puts
        ``t = 1/2`` on the identity when ``|d| < 2`` (else the better vertex) and the predictor
        ``s = clip((2 + d)/4, 0, 1)``, which equalises ``2(1 - s) + f_1 = 2 s + f_2``.
        """
        f1 = T[:, 0, 0] + T[:, 1, 1]
        f2 = T[:, 0, 1] + T[:, 1, 0]
        d = f1 - f2
        value = np.maximum(np.maximum(f1, f2), 0.5 * (f1 + f2) + 1.0)
        t = np.where(d >= 2.0, 1.0, np.where(d <= -2.0, 0.0, 0.5))
        s = np.clip((2.0 + d) / 4.0, 0.0, 1.0)

        def pair(x):
            return np.stack([np.stack([x, 1 - x], -1), np.stack([1 - x, x], -1)], -2)

        return value, pair(t), pair(s)

    def _solve(self, T, method):
        if self._resolve(method) == "closed_form":
            return self._solve_pair(T)
        return self._solve_lp(T)

    # ------------------------------------------------------------------------------ public
    def value(self, Theta: ArrayLike, method: str = "auto") -> float | np.ndarray:
        r"""Game value ``max_{Q in B_k} k - max_{P in B_k} <P, Q> + <Θ, Q>`` per example.

        Equal to the ``k!``-class game of Fathony et al. (2018a), Eq. 4 with the Hamming loss matrix
        and potentials ``<Θ, P_π>`` (Fathony et al. 2018c).
        """
        T, single = self._theta(Theta)
        value = self._solve(T, method)[0]
        return value[0] if single else value

    def value_and_adversary(
        self, Theta: ArrayLike, method: str = "auto"
    ) -> tuple[float | np.ndarray, np.ndarray]:
        """``(value, Q*)`` in one solve: the objective and subgradient that learning needs."""
        T, single = self._theta(Theta)
        value, Q, _ = self._solve(T, method)
        return (value[0], Q[0]) if single else (value, Q)

    def adversary(self, Theta: ArrayLike, method: str = "auto") -> np.ndarray:
        r"""The adversary's doubly stochastic marginals ``Q*`` (a subgradient of ``value`` in
        ``Θ``, Fathony et al. 2018a, Theorem 19); shape ``(k, k)`` or ``(n, k, k)``."""
        T, single = self._theta(Theta)
        Q = self._solve(T, method)[1]
        return Q[0] if single else Q

    def predictor(self, Theta: ArrayLike, method: str = "auto") -> np.ndarray:
        r"""The predictor's minimax doubly stochastic marginals ``P̂*``.

        ``P̂* = argmin_{P̂ in B_k} k + max_π <Θ - P̂, P_π>``: the duals of the LP rows
        ``alpha_i + beta_j >= Q_ij`` (see the module docstring for the derivation).  Its worst case
        over all permutations (:meth:`predictor_value`) equals :meth:`value`.  Any permutation
        distribution with these marginals (Birkhoff-von Neumann) is a minimax randomised predictor.
        """
        T, single = self._theta(Theta)
        P = self._solve(T, method)[2]
        return P[0] if single else P

    def predict(
        self, Theta: ArrayLike, decode: str = "map", method: str = "auto", as_matrix: bool = False
    ) -> np.ndarray:
        r"""A predicted permutation per example.

        Parameters
        ----------
        Theta : array-like of shape (k, k) or (n, k, k)
        decode : {'map', 'predictor'}
            ``'map'``: the potential-based prediction ``argmax_π <Θ, P_π>``, a maximum-weight
            assignment (Hungarian method, ``scipy.optimize.linear_sum_assignment``); no LP is
            solved.  ``'predictor'``: the permutation with the largest overlap ``<P̂*, P_π>`` with
            the predictor's minimax marginals (also an assignment problem).
        method : str
            How ``P̂*`` is computed for ``decode='predictor'``.
        as_matrix : bool
            Return permutation matrices ``(n, k, k)`` instead of rank vectors.

        Returns
        -------
        ndarray of int, shape (k,) or (n, k)
            Rank vectors (1 = best): ``R[j]`` is the rank of item ``j`` (``P[j, R[j] - 1] = 1``);
            or the permutation matrices when ``as_matrix``.
        """
        if decode not in DECODINGS:
            raise ValueError(f"decode must be one of {DECODINGS}; got {decode!r}.")
        T, single = self._theta(Theta)
        scores = T if decode == "map" else self._solve(T, method)[2]
        R = np.empty((T.shape[0], self.k), dtype=np.int64)
        for e in range(T.shape[0]):
            rows, cols = linear_sum_assignment(scores[e], maximize=True)
            R[e, rows] = cols + 1
        out = ranks_to_matrices(R) if as_matrix else R
        return out[0] if single else out

    def surrogate(
        self, Theta: ArrayLike, P_true: ArrayLike, method: str = "auto"
    ) -> float | np.ndarray:
        r"""Adversarial surrogate loss ``value(Θ) - <Θ, P_true>`` (Fathony et al. 2018a, Eq. 3).

        ``P_true`` is one permutation matrix per score matrix (same number of dimensions as
        ``Theta``) or one 1-based rank vector per score matrix (one dimension fewer).
        """
        T, single = self._theta(Theta)
        P = self._truth(P_true, T.shape[0], single)
        loss = self._solve(T, method)[0] - np.einsum("nij,nij->n", T, P)
        return loss[0] if single else loss

    def predictor_value(self, Theta: ArrayLike, P_hat: ArrayLike) -> float | np.ndarray:
        r"""The predictor's worst case ``max_π k - <P̂, P_π> + <Θ, P_π> = k + max_π <Θ - P̂, P_π>``.

        An upper bound on :meth:`value` for any ``P̂`` (equal at ``P̂*``); one assignment problem.
        """
        T, single = self._theta(Theta)
        P, _ = self._theta(P_hat, name="P_hat")
        if P.shape[0] != T.shape[0]:
            raise ValueError(f"P_hat must hold one matrix per score matrix ({T.shape[0]}).")
        out = self.k + _max_assignment(T - P)
        return out[0] if single else out

    def adversary_value(self, Theta: ArrayLike, Q: ArrayLike) -> float | np.ndarray:
        r"""What the adversary ``Q`` guarantees: ``k - max_π <Q, P_π> + <Θ, Q>``.

        A lower bound on :meth:`value` for any ``Q`` in the Birkhoff polytope (equal at ``Q*``).
        """
        T, single = self._theta(Theta)
        Q, _ = self._theta(Q, name="Q")
        if Q.shape[0] != T.shape[0]:
            raise ValueError(f"Q must hold one matrix per score matrix ({T.shape[0]}).")
        out = self.k - _max_assignment(Q) + np.einsum("nij,nij->n", T, Q)
        return out[0] if single else out


def _max_assignment(W):
    """``max_π <W[e], P_π>`` for every ``(k, k)`` matrix of a batch (Hungarian method)."""
    out = np.empty(W.shape[0])
    for e in range(W.shape[0]):
        rows, cols = linear_sum_assignment(W[e], maximize=True)
        out[e] = W[e][rows, cols].sum()
    return out
