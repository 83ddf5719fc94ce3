r"""Vectorised closed forms of the per-sample game (Fathony et al. 2018a, Sections 3-4).

Every function takes potentials ``F`` of shape ``(n, k)`` (already validated, float64) and works on
all rows at once with numpy; none loops over rows in Python.  For a loss matrix ``c L`` the game
value is

.. math::  V(f) = \max_{q \in \Delta} \min_{p \in \Delta} p^\top (c L) q + f^\top q
            = \min_{p \in \Delta} \max_j \big((c L)^\top p + f\big)_j ,

``q*`` (the adversary) is a subgradient of ``V`` (Fathony et al. 2018a, Theorem 19) and ``p*`` (the predictor,
Eq. 9/10) is the LP dual.  Weighted losses follow Fathony et al. 2018a, Theorem 8: the extreme points of
``{(q, v) : c L q >= v 1, q in Δ}`` are those of ``L`` with ``v`` scaled by ``c``.

Each structure has three functions: ``<kind>(F, ...) -> (value, q)``, ``<kind>_predictor(F, ...)
-> p`` and ``<kind>_vertices(k, ...) -> (Q, v)``, the extreme-point set ``D`` of the paper's proof.
When ``method='auto'`` uses them, and at what cost, is said once, in :mod:`advgame.fast_paths`.
"""

from typing import Any

import numpy as np
from scipy.special import logsumexp, softmax

from . import _kernels
from .exceptions import NotApplicableError, SizeLimitError
from .losses import ABSTAIN_CLOSED_FORM_MAX_ALPHA

__all__ = [
    "zero_one",
    "zero_one_predictor",
    "zero_one_vertices",
    "ordinal",
    "ordinal_predictor",
    "ordinal_vertices",
    "squared",
    "squared_predictor",
    "squared_vertices",
    "abstain",
    "abstain_predictor",
    "abstain_vertices",
    "brier",
    "log",
    "zero_one_smoothed",
    "zero_one_quadratic_smoothing",
    "quadratic",
    "MAX_THEOREM_VERTICES",
]

#: Largest vertex set the ``*_vertices`` functions build (rows of the table).
MAX_THEOREM_VERTICES = 2_000_000


def _rows(F):
    return np.arange(F.shape[0])


# ------------------------------------------------------------------------------- column layout
def _columns(F):
    """``F.T`` as a C-contiguous ``(k, n)`` array: a view when ``F`` is column-major (as the
    feature operators return the potentials), otherwise one transposed copy.

    The numpy kernels below reduce over the labels, the first axis of this array, which numpy
    does with loops over whole rows of ``n`` entries; reducing a C-ordered ``(n, k)`` array along
    its short rows costs several times more (a fixed overhead per row of ``k`` entries).  The
    compiled kernels of :mod:`advgame._kernels` take this layout too (one specialisation each).
    """
    return np.ascontiguousarray(F.T)


def _small_uint(top):
    return np.uint8 if top < 2**8 else np.uint16 if top < 2**16 else np.uint64


def _first_true(mask):
    """Index of the first True of each column of a ``(k, n)`` bool array with one in every
    column (``np.argmax(mask, axis=0)``, which has no fast path along that axis)."""
    k = mask.shape[0]
    dtype = _small_uint(k + 1)
    rank = np.arange(k, 0, -1, dtype=dtype)[:, None]  # k - index
    return k - (mask.view(np.uint8) * rank).max(axis=0).astype(np.intp)


def _last_true(mask):
    """Index of the last True of each column of a ``(k, n)`` bool array with one in every column."""
    k = mask.shape[0]
    rank = np.arange(1, k + 1, dtype=_small_uint(k + 1))[:, None]  # index + 1
    return (mask.view(np.uint8) * rank).max(axis=0).astype(np.intp) - 1


def _scatter(k, n, index, values, plus=None, more=None):
    """A ``(k, n)`` array of zeros with ``values`` at ``(index[c], c)`` for every column ``c``
    (and ``more`` added at ``(plus[c], c)``); returned transposed, as ``(n, k)``."""
    Q = np.zeros((k, n))
    flat, cols = Q.reshape(-1), np.arange(n)
    flat[index * n + cols] = values
    if plus is not None:
        flat[plus * n + cols] += more
    return Q.T


# --------------------------------------------------------------------------------------- zero-one
def _zero_one_set(F, weight):
    """The value, ``q*`` uniform on the best set ``S`` of Theorem 5 (``(k, n)``) and ``|S|``:
    :func:`advgame._kernels.zero_one_set`.  Working on the gaps ``top - f`` (``V(f + a) = V(f) +
    a``) keeps huge potentials (``1e308``) from overflowing, and leaving labels within a
    rounding slack of the level out of ``S`` keeps ``q*`` from flipping between equally optimal
    vertices under ``F + a``."""
    return _kernels.zero_one_set(_columns(F), float(weight))


def zero_one(F: np.ndarray, weight: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    r"""Weighted zero-one game (Fathony et al. 2018a, Theorem 5, Corollary 9; Corollary 20 for ``q*``).

    .. math::  V(f) = \max_{\emptyset \ne S \subseteq [k]} \frac{\sum_{i \in S} f_i + c(|S|-1)}{|S|}

    The maximising ``S`` is a set of largest potentials, ``{f_j > V - c}``: the labels above the
    water level ``u`` with ``sum_j (f_j - u)_+ = c`` (``V = u + c``), found for all rows at once
    by Newton passes (:func:`advgame._kernels.zero_one_set`); ``q*`` is uniform on ``S``.  Labels tied with the smallest member of ``S`` are in ``S``; labels at
    the level itself (which leave the value unchanged) are not.
    """
    value, Q, _ = _zero_one_set(F, weight)
    return value, Q.T


def zero_one_predictor(F: np.ndarray, weight: float = 1.0) -> np.ndarray:
    r"""Predictor ``p*`` of the weighted zero-one game (Fathony et al. 2018a, Eq. 9).

    With ``V`` the value, ``p*_j = max(0, f_j + c - V) / c``: the water-filling that equalises
    ``c (1 - p_j) + f_j = V`` on the optimal set ``S`` and leaves it below ``V`` elsewhere.
    Computed on the gaps to the top potential, ``c - (V - top) - (top - f_j)``, so that
    potentials far beyond ``c`` (``1e308`` against ``c = 1``) do not absorb ``c`` and leave
    ``0 / 0``; where rounding still leaves no positive entry (potentials whose last bit exceeds
    ``c``), the optimal set's uniform distribution, also optimal then.
    """
    value, Q, _ = _zero_one_set(F, weight)
    top = F.max(axis=1, keepdims=True)
    with np.errstate(over="ignore", invalid="ignore"):
        slack = weight - (value[:, None] - top)
        p = np.maximum(slack - (top - F), 0.0)
    total = p.sum(axis=1, keepdims=True)
    good = (total > 0) & np.isfinite(total)
    return np.where(good, p / np.where(good, total, 1.0), Q.T)


def zero_one_vertices(k: int, weight: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    r"""Extreme points ``D`` of Theorem 5: ``q = 1_S / |S|``, ``v = c (|S|-1)/|S|``; ``2^k - 1`` of them."""
    _check_size(2**k - 1, "zero-one", k)
    masks = (np.arange(1, 2**k)[:, None] >> np.arange(k)) & 1
    sizes = masks.sum(axis=1)
    return masks / sizes[:, None], weight * (sizes - 1) / sizes


# ---------------------------------------------------------------------------------------- ordinal
def _ordinal_ends(F, weight):
    FT = _columns(F)
    shift = (weight * np.arange(FT.shape[0]))[:, None]
    low = FT - shift
    high = FT + shift
    a, b = low.max(axis=0), high.max(axis=0)
    i = _first_true(low == a)  # first maximiser
    j = _last_true(high == b)  # last maximiser, so i <= j
    return a, b, i, j


def ordinal(F: np.ndarray, weight: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    r"""Weighted absolute (ordinal) game (Fathony et al. 2018a, Theorem 6, Eq. 7, Corollaries 10 and 21).

    .. math::  V(f) = \tfrac12 \max_i (f_i - c\,i) + \tfrac12 \max_j (f_j + c\,j),
               \qquad q^* = \tfrac12 (e_{i^*} + e_{j^*}).

    The two maximisations are independent.
    """
    a, b, i, j = _ordinal_ends(F, weight)
    q = _scatter(F.shape[1], F.shape[0], i, 0.5, j, 0.5)
    return 0.5 * a + 0.5 * b, q  # not 0.5 * (a + b), which overflows for f near 1e308


def ordinal_predictor(F: np.ndarray, weight: float = 1.0) -> np.ndarray:
    r"""Predictor ``p*`` of the weighted absolute game.

    With ``A = max_i (f_i - c i)`` and ``B = max_j (f_j + c j)``, every label satisfies
    ``V - f_y >= c |y - m|`` for ``m = (B - A) / (2c)``, and ``m`` lies in ``[i*, j*]``.  A predictor
    whose mean is ``m`` and whose support is ``{floor(m), ceil(m)}`` has expected absolute loss
    exactly ``|y - m|`` for every integer ``y``, so it attains ``V``: that is ``p*``.
    """
    a, b, _, _ = _ordinal_ends(F, weight)
    k = F.shape[1]
    m = np.clip((b - a) / (2.0 * weight), 0.0, k - 1)
    low = np.minimum(np.floor(m).astype(np.int64), k - 2)
    t = m - low
    p = np.zeros_like(F)
    rows = _rows(F)
    p[rows, low] = 1.0 - t
    p[rows, low + 1] += t
    return p


def ordinal_vertices(k: int, weight: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    r"""Extreme points ``D`` of Theorem 6: ``q = (e_i + e_j)/2``, ``v = c (j - i)/2``, ``i <= j``."""
    _check_size(k * (k + 1) // 2, "ordinal", k)
    i, j = np.triu_indices(k)
    Q = np.zeros((i.size, k))
    np.add.at(Q, (np.arange(i.size), i), 0.5)
    np.add.at(Q, (np.arange(i.size), j), 0.5)
    return Q, weight * (j - i) / 2.0


# ---------------------------------------------------------------------------------------- squared
def _squared_vertex(F, weight):
    r"""Best vertex of Theorem 7 by :func:`advgame._kernels.squared_vertex`, an upper concave
    hull of the points ``(j, f_j + c j^2)``.  Returns the value, ``i``, ``d`` (0 for a single
    point ``e_i``) and ``u = theta - i``."""
    return _kernels.squared_vertex(_columns(F), float(weight))


def squared(F: np.ndarray, weight: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    r"""Weighted squared-ordinal game (Fathony et al. 2018a, Theorem 7, Corollary 11).

    .. math::  V(f) = \max\Big\{ \max_{i < l \le j}
        \frac{(2(j-l)+1)[f_i + c(l-i)^2] + (2(l-i)-1)[f_j + c(j-l)^2]}{2(j-i)},\ \max_i f_i \Big\}

    evaluated by :func:`_squared_vertex`, an upper concave hull (``l = i + u + 1/2``).
    """
    value, i, d, u = _squared_vertex(F, weight)
    share = u / np.maximum(d, 1)  # u = 0 for a single point (d = 0)
    return value, _scatter(F.shape[1], F.shape[0], i, 1.0 - share, i + d, share)


def squared_predictor(F: np.ndarray, weight: float = 1.0) -> np.ndarray:
    r"""Predictor ``p*`` of the weighted squared game, from complementary slackness.

    ``(L q*)_a = c E_{q*}(a - y)^2`` is a convex quadratic in ``a`` minimised at the mean of ``q*``,
    so ``p*`` lives on the integers nearest that mean.  A single-point vertex ``e_i`` forces
    ``p* = e_i``.  A pair vertex has mean ``l - 1/2``, so ``p* = (1 - t) e_{l-1} + t e_l`` with
    ``t`` fixed by ``(L^T p* + f)_i = V``:
    ``t = ((V - f_i)/c - (l-1-i)^2) / (2(l-i) - 1)``.  The equations have a unique solution and
    any optimal ``p*`` satisfies them, so this is the optimal predictor.
    """
    value, i, d, u = _squared_vertex(F, weight)
    rows = _rows(F)
    k = F.shape[1]
    l = np.where(d > 0, i + u + 0.5, i).astype(np.int64)
    reach = (l - i).astype(np.float64)
    t = ((value - F[rows, i]) / weight - (reach - 1.0) ** 2) / np.maximum(2.0 * reach - 1.0, 1.0)
    t = np.where(d > 0, np.clip(t, 0.0, 1.0), 1.0)
    p = np.zeros((F.shape[0], k))
    np.add.at(p, (rows, np.maximum(l - 1, 0)), 1.0 - t)
    np.add.at(p, (rows, l), t)
    return p


def squared_vertices(k: int, weight: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    r"""Extreme points ``D`` of Theorem 7: ``k`` single points and ``(k+1)k(k-1)/6`` pairs."""
    _check_size(k + (k + 1) * k * (k - 1) // 6, "squared", k)
    i, l, j = (a.ravel() for a in np.meshgrid(*(np.arange(k),) * 3, indexing="ij"))
    keep = (i < l) & (l <= j)
    i, l, j = i[keep], l[keep], j[keep]
    wi = (2 * (j - l) + 1) / (2 * (j - i))
    wj = (2 * (l - i) - 1) / (2 * (j - i))
    pairs = np.zeros((i.size, k))
    pairs[np.arange(i.size), i] = wi
    pairs[np.arange(i.size), j] = wj
    v_pairs = weight * (wi * (l - i) ** 2 + wj * (j - l) ** 2)
    return np.vstack([np.eye(k), pairs]), np.concatenate([np.zeros(k), v_pairs])


# ---------------------------------------------------------------------------------------- abstain
def _check_alpha(alpha):
    if not 0 <= alpha <= ABSTAIN_CLOSED_FORM_MAX_ALPHA:
        raise NotApplicableError(
            f"the abstain closed form (Fathony et al. 2018a, Theorems 12-13) needs 0 <= alpha <= 1/2; got "
            f"alpha={alpha:g}. Use method='vertices' or method='lp' for larger alpha."
        )


def _top_two(F):
    FT = _columns(F)
    top = FT.max(axis=0)
    first = _first_true(FT == top)
    rest = FT.copy()
    rest.reshape(-1)[first * FT.shape[1] + np.arange(FT.shape[1])] = -np.inf
    second_value = rest.max(axis=0)
    return first, _first_true(rest == second_value), top, second_value


def abstain(F: np.ndarray, alpha: float, weight: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    r"""Abstain game for ``alpha <= 1/2`` (Fathony et al. 2018a, Theorem 12, Corollary 22).

    .. math::  V(f) = \max\{ f_{(1)},\ (1-\alpha) f_{(1)} + \alpha f_{(2)} + c\,\alpha \}

    with ``f_(1) >= f_(2)`` the two largest potentials.  ``q*`` is
    ``e_{i*}`` or ``(1 - alpha) e_{i*} + alpha e_{j*}``.
    """
    _check_alpha(alpha)
    i, j, f1, f2 = _top_two(F)
    mixed = (1.0 - alpha) * f1 + alpha * f2 + weight * alpha
    use_mixed = mixed > f1
    q = _scatter(
        F.shape[1],
        F.shape[0],
        i,
        np.where(use_mixed, 1.0 - alpha, 1.0),
        j,
        np.where(use_mixed, alpha, 0.0),
    )
    return np.maximum(f1, mixed), q


def abstain_predictor(F: np.ndarray, alpha: float, weight: float = 1.0) -> np.ndarray:
    r"""Predictor ``p*`` for abstention (Fathony et al. 2018a, Theorem 13, scaled by Theorem 8).

    ``p* = e_{i*}`` when ``f_(1) - f_(2) >= c``; otherwise ``p*_{i*} = (f_(1) - f_(2))/c`` and the
    abstain action (index ``k``) gets the rest.  Its argmax is Corollary 14: predict ``i*`` when the
    gap is at least ``c/2``, abstain otherwise.  Returns shape ``(n, k + 1)``.
    """
    _check_alpha(alpha)
    i, _, f1, f2 = _top_two(F)
    n, k = F.shape
    confident = np.minimum((f1 - f2) / weight, 1.0)
    p = np.zeros((n, k + 1))
    p[_rows(F), i] = confident
    p[:, k] = 1.0 - confident
    return p


def abstain_vertices(k: int, alpha: float, weight: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    r"""Extreme points ``D`` of Theorem 12 (as a set of distinct points).

    ``(e_i, 0)`` for every ``i`` and ``((1-alpha) e_i + alpha e_j, c alpha)`` for ``i != j``:
    ``k^2`` points for ``0 < alpha < 1/2``, ``k(k+1)/2`` at ``alpha = 1/2`` (the pairs coincide) and
    ``k`` at ``alpha = 0`` (the pairs are the single points).
    """
    _check_alpha(alpha)
    if alpha == 0:
        return np.eye(k), np.zeros(k)
    _check_size(k + (k * (k - 1) // 2 if alpha == 0.5 else k * (k - 1)), "abstain", k)
    i, j = np.triu_indices(k, 1) if alpha == 0.5 else np.nonzero(~np.eye(k, dtype=bool))
    pairs = np.zeros((i.size, k))
    pairs[np.arange(i.size), i] = 1.0 - alpha
    pairs[np.arange(i.size), j] += alpha
    return np.vstack([np.eye(k), pairs]), np.concatenate(
        [np.zeros(k), np.full(i.size, weight * alpha)]
    )


def _check_size(count, kind, k):
    if count > MAX_THEOREM_VERTICES:
        raise SizeLimitError(
            f"the {kind} vertex table for k={k} has {count:,} extreme points, over the limit of "
            f"{MAX_THEOREM_VERTICES:,}; use the closed form (method='closed_form') instead."
        )


# ------------------------------------------------------- generalised entropies (Farnia and Tse 2016, §3, §6.6-8)
def brier(F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Brier entropy ``H(q) = 1 - ||q||^2``: ``F(f) = max_{q in Δ} H(q) + f^T q`` and ``∇F``.

    ``∇F(f) = argmax_q f^T q - ||q||^2`` is the Euclidean projection of ``f / 2`` onto the
    simplex (Farnia and Tse 2016, Eq. 70-73; sparsemax of ``f / 2``).  On the potentials sorted in decreasing
    order ``s``, the support is the largest ``m`` with ``s_m / 2 + (2 - sum_{j<=m} s_j) / (2m) > 0``
    (equivalently the paper's smallest ``k`` with ``sum_{j<=k} (s_j - s_{k+1}) > 2``) and
    ``q_j = max(0, f_j / 2 + (2 - sum_{j<=m} s_j) / (2m))`` (Eq. 35/73 with all ``k`` potentials;
    Farnia and Tse pin the last one at 0, which changes ``F`` by that constant only).
    """
    k = F.shape[1]
    top = F.max(axis=1)
    G = F - top[:, None]  # F(f + c) = F(f) + c: work near 0 so rounding stays O(eps |f|)
    descending = -np.sort(-G, axis=1)
    sizes = np.arange(1, k + 1)
    shifts = (2.0 - np.cumsum(descending, axis=1)) / (2.0 * sizes)
    support = np.count_nonzero(descending / 2 + shifts > 0, axis=1)  # a prefix: >= 1 always
    shift = shifts[_rows(F), support - 1]
    q = np.maximum(G / 2 + shift[:, None], 0.0)
    return top + 1.0 - np.einsum("ij,ij->i", q, q) + np.einsum("ij,ij->i", G, q), q


def log(F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Shannon entropy ``H(q) = -sum q log q``: ``F(f) = log sum exp f``, ``∇F = softmax(f)``.

    Farnia and Tse 2016, Eq. 28 (multinomial logistic regression; the paper pins the last potential at 0).
    """
    return logsumexp(F, axis=1), softmax(F, axis=1)


def zero_one_smoothed(F: np.ndarray, mu: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Nesterov smoothing of the 0-1 entropy: ``H_mu(q) = 1 - max_j q_j - (mu/2) ||q||^2``.

    .. math::  F_\mu(f) = \max_{q \in \Delta} f^\top q + 1 - \max_j q_j - \tfrac{\mu}{2}\|q\|^2,
               \qquad F_\mu \le F \le F_\mu + \tfrac{\mu}{2},

    with ``F`` the 0-1 conjugate of Farnia and Tse 2016, Eq. 29 (= :func:`zero_one`), and ``∇F_mu = q*`` is
    ``1/mu``-Lipschitz (``-H_mu`` is ``mu``-strongly convex), so accelerated gradient methods
    apply to the minimax SVM.  With ``t = max_j q_j`` the KKT conditions give, on the potentials
    sorted in decreasing order ``s`` with prefix sums ``S``, ``m`` labels capped at ``t``, the
    next ``r - m`` free at ``(s_j - tau) / mu`` and the rest at 0, where

    .. math::  t = \frac{1}{r}\Big[1 - \frac{1}{\mu}\Big(S_r - S_m
                   - (r - m)\frac{S_m - 1}{m}\Big)\Big], \qquad
               \tau = \frac{S_m - 1}{m} - \mu t .

    Every ``1 <= m <= r <= k`` is tried at once (each candidate, clipped into the simplex, is a
    feasible point and the KKT one is among them), and the best is kept: ``O(k^3)`` per row,
    vectorised over rows.  Returns ``(F_mu(f), q*)``.
    """
    if not mu > 0:
        raise ValueError(f"the smoothing mu must be positive; got {mu!r}.")
    n, k = F.shape
    top = F.max(axis=1)
    order = np.argsort(-F, axis=1, kind="stable")
    s = np.take_along_axis(F, order, axis=1) - top[:, None]  # F_mu(f + c) = F_mu(f) + c
    S = np.hstack([np.zeros((n, 1)), np.cumsum(s, axis=1)])
    best_value = np.full(n, -np.inf)
    best_q = np.zeros((n, k))
    rows = _rows(F)
    for m in range(1, k + 1):
        r = np.arange(m, k + 1)
        mean = (S[:, m : m + 1] - 1.0) / m
        t = (1.0 - (S[:, r] - S[:, m : m + 1] - (r - m) * mean) / mu) / r
        tau = mean - mu * t
        q = np.clip((s[:, None, :] - tau[:, :, None]) / mu, 0.0, t[:, :, None])
        total = q.sum(axis=2, keepdims=True)
        q = q / np.where(total > 0, total, 1.0)
        value = np.einsum("nrk,nk->nr", q, s) - q.max(axis=2) - 0.5 * mu * np.sum(q * q, axis=2)
        value[total[:, :, 0] <= 0] = -np.inf
        pick = np.argmax(value, axis=1)
        better = value[rows, pick] > best_value
        best_value = np.where(better, value[rows, pick], best_value)
        best_q[better] = q[rows[better], pick[better]]
    Q = np.empty_like(best_q)
    np.put_along_axis(Q, order, best_q, axis=1)
    return top + 1.0 + best_value, Q


def zero_one_quadratic_smoothing(
    F: np.ndarray, mu: float, weight: float = 1.0, return_levels: bool = False
) -> tuple[Any, ...]:
    r"""Quadratically smoothed weighted zero-one game in ``O(k)`` per row and Newton pass.

    .. math::  V_\mu(f) = \max_{q \in \Delta} f^\top q + c\,(1 - \max_j q_j)
                          - \tfrac{\mu}{2}\|q\|^2,
               \qquad V_\mu \le V \le V_\mu + \tfrac{\mu}{2},

    the game of :func:`zero_one` with the strongly concave term ``-mu/2 ||q||^2`` added for the
    adversary, so that ``q*`` is unique and ``1/mu``-Lipschitz in ``f`` (the gradient of
    ``V_mu``).  Same problem as :func:`zero_one_smoothed` (``c = 1``), solved without enumerating
    the supports.  With ``t = max_j q_j`` the KKT conditions give ``q_j = clip((f_j - tau)/mu, 0,
    t)``; the multipliers of the caps ``q_j <= t`` sum to ``c``, i.e. ``sum_j (f_j - u)_+ = c``
    with ``u = tau + mu t``, which fixes ``u`` alone, and then ``sum_j q_j = 1`` fixes ``tau``:

    .. math::  q^* = \frac{(\min(f, u) - \tau)_+}{\mu}, \qquad
               \sum_j (f_j - u)_+ = c, \qquad \sum_j (\min(f_j, u) - \tau)_+ = \mu,

    two water-fillings (``u`` from the top with volume ``c``, then the simplex projection of
    ``min(f, u) / mu``), each by a few Newton passes (:func:`advgame._kernels.zero_one_smoothing`).  ``u``
    does not depend on ``mu``: it is the level of Theorem 5, ``V(f) = u + c``.  Returns
    ``(V_mu(f), q*)``, and with ``return_levels`` also ``(top, u, tau)`` (``u`` and ``tau``
    relative to the row maximum ``top``, so ``V = top + u + c``), from which the Jacobian of
    ``q*`` (piecewise constant) follows.
    """
    value, Q, top, level, fill, _, _ = _zero_one_smoothing(F, mu, weight)
    if return_levels:
        return value, Q.T, (top, -level, -(level + fill))
    return value, Q.T


def _zero_one_smoothing(F, mu, weight):
    """:func:`zero_one_quadratic_smoothing` in the column layout (:func:`_columns`),
    :func:`advgame._kernels.zero_one_smoothing`: ``V_mu``, ``q*`` as a ``(k, n)`` array, the row
    maximum ``top``, the levels ``d = -u`` and ``e`` (``tau = -(d + e)``) and the two
    water-fillings' sets: the capped labels (``f_j > u``) and the active ones (``q_j > 0``),
    both ``(k, n)`` bool, each with its size per row."""
    if not mu > 0:
        raise ValueError(f"the smoothing mu must be positive; got {mu!r}.")
    value, Q, top, level, fill, capped, n_capped, active, n_active = _kernels.zero_one_smoothing(
        _columns(F), float(mu), float(weight)
    )
    return value, Q, top, level, fill, (capped, n_capped), (active, n_active)


def quadratic(Z: np.ndarray, rho: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    r"""Quadratic loss on a real target with ``E[Y^2] <= rho^2`` (Farnia and Tse 2016, Eq. 32-33, 74-75).

    .. math::  F(z) = \max_{|m| \le \rho} \rho^2 - m^2 + z m
               = \begin{cases} \rho^2 + z^2/4 & |z/2| \le \rho \\ \rho |z| & \text{else,}
               \end{cases}
               \qquad F'(z) = \mathrm{clip}(z/2, -\rho, \rho),

    the Huber function; ``F'`` is the worst-case conditional mean (the MMSE prediction).
    ``rho=None`` ("large enough") drops the constant ``rho^2``: ``F(z) = z^2/4``, ``F' = z/2``
    (linear regression).  ``Z`` has shape ``(n, 1)``.
    """
    if rho is None:
        return Z[:, 0] ** 2 / 4, Z / 2
    mean = np.clip(Z / 2, -rho, rho)
    return (rho**2 - mean**2 + Z * mean)[:, 0], mean
