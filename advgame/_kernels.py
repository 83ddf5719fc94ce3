r"""Compiled per-row kernels (numba, ``cache=True``).

The zero-one game (Theorem 5), its quadratic smoothing and the squared-ordinal vertex (Theorem
7) of Fathony et al. 2018a each need a small iterative computation per row: a water level found
by Newton passes, or an upper concave hull.  numpy can only run those passes over all rows at
once, each pass a dozen full-size temporaries; here the water levels finish a block of
:data:`BLOCK` rows at a time in scratch arrays that stay in the L1 cache, and the hull one row
at a time in a stack of ``k`` entries.  These kernels take the potentials in the column layout
``FT`` (``(k, n)``, C-contiguous; see :func:`advgame.closed_forms._columns`) and return arrays
in that layout; the public functions of :mod:`advgame.closed_forms` wrap them, and each is
tested against the LP.  :func:`zero_one_dual_epoch` is one epoch of the kernel solver
:func:`advgame.solvers.fit_kernel_dual`, whose per-row step is the smoothed zero-one game.

The kernels are compiled on their first call and cached beside this file (``cache=True``).
Measured on a fresh install: 3.5 s for the first kernel (numba's own start-up included), 0.7-1.4
s for each of the others; ``advgame demo`` takes 7.5 s the first time and 2.6 s once cached.
"""

import numpy as np
from numba import njit

#: The smallest normal float: with a slack, gaps below it count as ties with the maximum.
_TINY = float(np.finfo(np.float64).tiny)
#: Gaps ``top - f`` past the largest float (potentials ``1e308`` apart) overflow to ``inf``;
#: they are clipped to it, far above every level.
_HUGE = float(np.finfo(np.float64).max)
_EPS = float(np.finfo(np.float64).eps)


#: Rows per block: the kernels run each step over a block of rows at once (loops the compiler
#: vectorises across rows), with the block's gaps in a ``(k, BLOCK)`` scratch array that stays
#: in the L1 cache.  Measured at ``k = 10``: 2.5-3x faster than finishing each row alone
#: (short, branchy loops) and than 512-row blocks.
BLOCK = 128


@njit(cache=True, error_model="numpy")
def _water_levels(gaps, m, volume, slack, level, size, members, start, scratch):
    r"""The levels ``d`` with ``sum_j (d - g_j)_+ = volume`` for the first ``m`` columns of
    ``gaps`` (a block, ``(k, BLOCK)``, non-negative, a zero in each column), by Newton's
    method from ``d = volume``.

    ``psi(d) = sum_j (d - g_j)_+`` is convex, piecewise linear and increasing, so the iterates
    ``d <- (sum_{g_j < d} g_j + volume) / |{g_j < d}|`` decrease monotonically to the root and
    the sets shrink: a set is final when its largest member stays below the new level (no
    confirming pass), at most ``k`` passes, usually two or three.  With ``slack[i] >= 0`` a
    label within ``slack`` of the level (which leaves it unchanged) is left out of the set,
    which is then the shortest optimal one; a negative slack keeps the labels strictly below
    the level.  Writes the levels into ``level``, the sets' sizes into ``size`` and the sets
    into ``members[:, start:start + m]``; ``scratch`` has at least 4 rows of ``BLOCK``.  NaN gaps give a NaN
    or infinite level (the callers report the non-finite potentials).
    """
    k = gaps.shape[0]
    total, count, high, bound = scratch[0], scratch[1], scratch[2], scratch[3]
    for i in range(m):
        bound[i] = max(volume - slack[i], _TINY) if slack[i] >= 0 else volume
    for _ in range(k):
        total[:m], count[:m], high[:m] = 0.0, 0.0, 0.0
        for j in range(k):
            for i in range(m):
                g = gaps[j, i]
                inside = g < bound[i]
                count[i] += 1.0 if inside else 0.0
                total[i] += g if inside else 0.0
                high[i] = max(high[i], g if inside else 0.0)
        moving = 0
        for i in range(m):
            level[i] = (total[i] + volume) / count[i]
            new = max(level[i] - slack[i], _TINY) if slack[i] >= 0 else level[i]
            # the next set keeps every member: this set is final (and so is its level)
            moving += high[i] >= new
            if high[i] >= new:
                bound[i] = new
        if moving == 0:
            break
    for j in range(k):
        for i in range(m):
            members[j, start + i] = gaps[j, i] < bound[i]
    for i in range(m):
        size[i] = int(count[i])


@njit(cache=True)
def _block_gaps(FT, start, m, top, gaps):
    """The block's row maxima ``top`` (NaN when a row has one) and gaps ``top - f`` (clipped
    to the largest float)."""
    k = FT.shape[0]
    top[:m] = FT[0, start : start + m]
    for j in range(1, k):
        for i in range(m):
            f = FT[j, start + i]
            if f > top[i] or f != f:
                top[i] = f
    for j in range(k):
        for i in range(m):
            gaps[j, i] = min(top[i] - FT[j, start + i], _HUGE)


@njit(cache=True)
def zero_one_set(FT, weight):
    r"""The value and the best set ``S`` of Theorem 5 for every row (column of ``FT``).

    ``V = top + c - d`` with ``d`` the water level of the gaps ``top - f`` for the volume ``c``
    and ``S = {f_j > top - d}``; labels within a rounding slack of the level are left out (ties
    up to rounding, which a shift of ``F`` changes).  Returns the values ``(n,)``, the members
    ``(k, n)`` (bool) and their number ``(n,)``.
    """
    k, n = FT.shape
    value = np.empty(n)
    members = np.empty((k, n), dtype=np.bool_)
    count = np.empty(n, dtype=np.int64)
    gaps = np.empty((k, BLOCK))
    top, level, slack = np.empty(BLOCK), np.empty(BLOCK), np.empty(BLOCK)
    size = np.empty(BLOCK, dtype=np.int64)
    scratch = _work()
    for start in range(0, n, BLOCK):
        m = min(BLOCK, n - start)
        _block_gaps(FT, start, m, top, gaps)
        for i in range(m):
            # the level and the gaps compared with it are at most c: their rounding errors,
            # and those of a shift of F, are below this
            slack[i] = 8 * k * _EPS * (abs(top[i]) + weight)
        _water_levels(gaps, m, weight, slack, level, size, members, start, scratch)
        for i in range(m):
            value[start + i] = top[i] + (weight - level[i])
            count[start + i] = size[i]
    return value, members, count


@njit(cache=True)
def _smoothed_levels(gaps, excess, m, mu, weight, d, e, sizes, capped, active, start, scratch):
    r"""The two water levels of the smoothed zero-one game for the first ``m`` columns of
    ``gaps`` (``top - f``): ``d = top - u`` for the volume ``c`` on the gaps, then ``e = u -
    tau`` for the volume ``mu`` on the excesses ``(g - d)_+`` (written into ``excess``), so
    that ``mu q* = (e - excess)_+``.  The capped and the active sets go to ``capped`` and
    ``active`` (columns ``start:start + m``), their sizes to ``sizes[0]`` and ``sizes[1]``."""
    k = gaps.shape[0]
    no_slack = scratch[4]
    _water_levels(gaps, m, weight, no_slack, d, sizes[0], capped, start, scratch)
    for j in range(k):
        for i in range(m):
            excess[j, i] = max(gaps[j, i] - d[i], 0.0)
    _water_levels(excess, m, mu, no_slack, e, sizes[1], active, start, scratch)


@njit(cache=True)
def _work():
    """Work arrays of :func:`_water_levels` (rows 0-3) and a row of negative slacks (4)."""
    scratch = np.empty((5, BLOCK))
    scratch[4] = -1.0
    return scratch


@njit(cache=True)
def zero_one_smoothing(FT, mu, weight):
    r"""The quadratically smoothed zero-one game for every row (column of ``FT``).

    ``q* = (min(f, u) - tau)_+ / mu`` with ``sum_j (f_j - u)_+ = c`` and ``sum_j (min(f_j, u) -
    tau)_+ = mu``: two water levels per row (:func:`_smoothed_levels`).  Returns ``V_mu``
    ``(n,)``, ``q*`` ``(k, n)``, ``top``, ``d = top - u`` and ``e = u - tau`` ``(n,)``, the
    capped labels (``f_j > u``, ``(k, n)`` bool) and their number, and the active ones
    (``q_j > 0``) and their number.
    """
    k, n = FT.shape
    value, top, level, fill = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    Q = np.empty((k, n))
    capped = np.empty((k, n), dtype=np.bool_)
    active = np.empty((k, n), dtype=np.bool_)
    n_capped = np.empty(n, dtype=np.int64)
    n_active = np.empty(n, dtype=np.int64)
    gaps, excess = np.empty((k, BLOCK)), np.empty((k, BLOCK))
    block_top, d, e, total = np.empty(BLOCK), np.empty(BLOCK), np.empty(BLOCK), np.empty(BLOCK)
    sizes = np.empty((2, BLOCK), dtype=np.int64)
    scratch = _work()
    scale = 1.0 / mu
    for start in range(0, n, BLOCK):
        m = min(BLOCK, n - start)
        _block_gaps(FT, start, m, block_top, gaps)
        _smoothed_levels(gaps, excess, m, mu, weight, d, e, sizes, capped, active, start, scratch)
        total[:m] = 0.0
        for j in range(k):
            for i in range(m):
                q = max(e[i] - excess[j, i], 0.0) * scale
                Q[j, start + i] = q
                total[i] += (gaps[j, i] + 0.5 * mu * q) * q
        for i in range(m):
            r = start + i
            top[r], level[r], fill[r] = block_top[i], d[i], e[i]
            n_capped[r], n_active[r] = sizes[0, i], sizes[1, i]
            # the cap max_j q_j is e / mu
            value[r] = block_top[i] - (total[i] - weight * (1.0 - e[i] * scale))
    return value, Q, top, level, fill, capped, n_capped, active, n_active


@njit(cache=True)
def zero_one_dual_epoch(FT, K, Q, A, order, coef, curvature, weight):
    r"""One epoch of dual coordinate ascent for the kernel zero-one game with soft moments
    (:func:`advgame.solvers.fit_kernel_dual`), over the rows in ``order``.

    Row ``i``'s best adversary with the others fixed maximises ``H(q) + q^T f_i - (s_i / 2)
    ||q - q_i||^2`` with ``s_i = w_i K_ii / lam`` (``curvature``): the smoothed game of
    :func:`zero_one_smoothing` with ``mu = s_i`` at the potentials ``f_i + s_i q_i``.  When
    ``q_i`` moves, ``D = (w_i / lam) (q_new - q_i)`` (``coef = w / lam``) leaves ``A_i`` and
    every potential moves by ``-K[:, i] D^T`` (``K`` symmetric: its row ``i``, read
    contiguously, once per label of the column layout ``FT``, ``(k, n)``).  ``Q``, ``A`` and
    ``FT`` are updated in place; returns the number of rows that moved.
    """
    k, n = FT.shape
    gaps, excess = np.empty((k, 1)), np.empty((k, 1))
    members = np.empty((k, 1), dtype=np.bool_)
    d, e = np.empty(1), np.empty(1)
    sizes = np.empty((2, 1), dtype=np.int64)
    scratch = _work()
    g, D = np.empty(k), np.empty(k)
    moved_rows = 0
    for i in order:
        mu = curvature[i]
        for j in range(k):
            g[j] = FT[j, i] + mu * Q[i, j]
        top = g.max()
        for j in range(k):
            gaps[j, 0] = min(top - g[j], _HUGE)
        _smoothed_levels(gaps, excess, 1, mu, weight, d, e, sizes, members, members, 0, scratch)
        moved = False
        for j in range(k):
            q = max(e[0] - excess[j, 0], 0.0) / mu
            D[j] = coef[i] * (q - Q[i, j])
            moved |= q != Q[i, j]
            Q[i, j] = q
        if not moved:
            continue
        moved_rows += 1
        row = K[i]
        for j in range(k):
            A[i, j] -= D[j]
            step, potentials = D[j], FT[j]
            for t in range(n):
                potentials[t] -= row[t] * step
    return moved_rows


@njit(cache=True)
def squared_vertex(FT, weight):
    r"""The best vertex of Theorem 7 for every row (column of ``FT``): ``O(k)`` per row.

    With ``b_j = f_j + c j^2`` the value of the pair vertex on ``i < j`` with mean
    ``theta = l - 1/2`` is the chord of the points ``(j, b_j)`` at ``theta`` minus ``c (l - 1)
    l``, so the best pair for each ``l`` lies on the upper concave hull of the points.  The hull
    is built by the monotone chain (collinear points kept: a segment is then the shortest chord
    through ``theta``); on each segment the value is a concave quadratic in ``theta``, best at
    the half-integer nearest to its vertex ``slope / (2c)`` (the larger ``l`` on a tie).  Exact
    ties between segments go to the shortest gap ``j - i``, then the smallest ``i``; a pair
    must beat the best single point ``e_i`` (the first maximum) strictly.  Returns the value,
    ``i``, the gap ``d`` (0 for a single point) and ``u = theta - i``, each ``(n,)``.
    """
    k, n = FT.shape
    value, shift = np.empty(n), np.zeros(n)
    first = np.empty(n, dtype=np.int64)
    gap = np.zeros(n, dtype=np.int64)
    hull = np.empty(k, dtype=np.int64)
    hull_b, b = np.empty(k), np.empty(k)
    for r in range(n):
        best, best_i = FT[0, r], 0
        for j in range(1, k):
            if FT[j, r] > best or FT[j, r] != FT[j, r]:  # a NaN stays: the value is NaN
                best, best_i = FT[j, r], j
        for j in range(k):
            b[j] = FT[j, r] + weight * j * j
        size = 0
        for j in range(k):
            # pop the top while it lies strictly below the chord from the one beneath it to j
            while size >= 2:
                below, last = hull[size - 2], hull[size - 1]
                base = hull_b[size - 2]
                if (hull_b[size - 1] - base) * (j - below) < (b[j] - base) * (last - below):
                    size -= 1
                else:
                    break
            hull[size], hull_b[size] = j, b[j]
            size += 1
        pair, pair_i, pair_d, pair_l = -np.inf, 0, 0, 0.0
        for m in range(size - 1):
            low, high = hull[m], hull[m + 1]
            slope = (hull_b[m + 1] - hull_b[m]) / (high - low)
            l = np.floor(slope * (0.5 / weight)) + 1.0
            l = min(max(l, low + 1.0), float(high))
            v = slope * (l - 0.5 - low) + hull_b[m] - weight * (l - 1.0) * l
            if v > pair or (v == pair and high - low < pair_d):
                pair, pair_i, pair_d, pair_l = v, low, high - low, l
        if pair > best:  # False for a NaN best
            value[r], first[r], gap[r], shift[r] = pair, pair_i, pair_d, pair_l - 0.5 - pair_i
        else:
            value[r], first[r] = best, best_i
    return value, first, gap, shift
