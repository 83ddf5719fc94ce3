r"""Compiled per-row kernels (numba, ``cache=True``).

The zero-one game (Theorem 5), its quadratic smoothing and the squared-ordinal vertex (Theorem
7) of Fathony et al. 2018a each need a small iterative computation per row: a water level found
by Newton passes, or an upper concave hull.  numpy can only run those passes over all rows at
once, each pass a dozen full-size temporaries; here the water levels finish a block of
:data:`BLOCK` rows at a time in scratch arrays that stay in the L1 cache, and the hull one row
at a time in a stack of ``k`` entries.  These kernels take the potentials in the column layout
``FT`` (``(k, n)``, C-contiguous; see :func:`advgame.closed_forms._columns`) and return arrays
in that layout; the public functions of :mod:`advgame.closed_forms` wrap them, and each is
tested against the LP.  :func:`kernel_dual_epoch` is one epoch of the kernel solver
:func:`advgame.solvers.fit_kernel_dual` and :func:`linear_dual_epoch` one of the linear
solver :func:`advgame.solvers.fit_linear_dual`, whose per-row step (:func:`_ascent_step`) is
the smoothed zero-one or abstain game; their
shrinking (:func:`dual_shrink`), the rows' duality gaps (:func:`dual_row_gaps`), the
exact potentials of the kernel solver's checks (:func:`kernel_potentials`) and its gathers of ``K``
(:func:`submatrix`) are compiled beside it.

The kernels are compiled on their first call and cached beside this file (``cache=True``), so a
fresh install pays for each one once; the default fit (zero-one loss, linear dual ascent)
compiles for about 2 s of CPU (numba's own start-up, about 0.5 s, included; 7.4-7.8 s before
the rules below, on the same 2-core machine).  What a compilation costs
grows with the code typed and the calls linked, so:

* no slice assignments (``a[:m] = b``): numba's shape check formats its error message, which
  alone compiled its string machinery for 2-4 s;
* no allocations in the compiled code of the default path: each ``np.empty`` signature is one
  more compilation, so the Python wrappers allocate (:func:`_row_work`, :func:`_work`);
* the zero-one game passes ``floor=None`` (:func:`_abstain_floor`), so the abstain branches and
  :func:`_capped_projection` are left out when its kernels are typed;
* one signature per kernel (float64, C-contiguous, int64 indices);
* no builtin ``min`` / ``max`` of two numbers in the default path's kernels: numba types each
  as a generic overload, one more compilation apiece, where a conditional expression (the same
  result, NaN included) costs nothing; and small helpers with one caller are written in it;
* the few zero-one values of a certificate are computed by numpy (:func:`zero_one_value`, the
  kernel's arithmetic to the last bit), not by :func:`zero_one_set`, whose compilation (about
  2 s) the first fit then skips; the closed forms keep the kernel (3-10x faster), so the
  first prediction compiles it.
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
        for i in range(m):
            total[i], count[i], high[i] = 0.0, 0.0, 0.0
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
    for i in range(m):
        top[i] = FT[0, start + i]
    for j in range(1, k):
        for i in range(m):
            f = FT[j, start + i]
            if f > top[i] or f != f:
                top[i] = f
    for j in range(k):
        for i in range(m):
            gaps[j, i] = min(top[i] - FT[j, start + i], _HUGE)


def zero_one_set(FT, weight):
    r"""The value and the best set ``S`` of Theorem 5 for every row (column of ``FT``).

    ``V = top + c - d`` with ``d`` the water level of the gaps ``top - f`` for the volume ``c``
    and ``S = {f_j > top - d}``; labels within a rounding slack of the level are left out (ties
    up to rounding, which a shift of ``F`` changes).  Returns the values ``(n,)``, ``q*``
    uniform on ``S`` (``(k, n)``; written here rather than from a boolean mask by numpy, which
    cost one more full-size array and pass: 5-10% of an objective evaluation) and the sizes of
    the sets ``(n,)``.
    """
    k, n = FT.shape
    value, members, count = np.empty(n), np.empty((k, n)), np.empty(n, dtype=np.int64)
    gaps, block = np.empty((k, BLOCK)), np.empty((3, BLOCK))
    size = np.empty(BLOCK, dtype=np.int64)
    _zero_one_set(FT, weight, value, members, count, gaps, block, size, _work())
    return value, members, count


def _sum_in_order(A):
    """The sum of the rows of ``A`` (``(k, m)``) from 0.0, one row after the other: the order of
    the compiled loops over the labels, which numpy's reductions keep only along an axis that is
    not contiguous in memory (along a contiguous one they add pairwise)."""
    total = np.zeros(A.shape[1])
    for row in A:
        total += row
    return total


def zero_one_value(FT, weight):
    """The values of :func:`zero_one_set` (``(n,)``) by numpy, all rows at once: the arithmetic
    of :func:`_block_gaps` and :func:`_water_levels` operation for operation
    (:func:`_sum_in_order`), so the numbers are the compiled kernel's to the last bit.

    For the few evaluations of the dual ascent's certificate (the objective ``J`` at each
    check): 3-10x slower than the kernel (0.35 ms against 0.1 ms at 1,797 x 10), but the first
    default fit on a fresh install then does not compile the kernel (about 2 s of CPU)."""
    k = FT.shape[0]
    weight = float(weight)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        top = FT.max(axis=0)
        gaps = np.minimum(top - FT, _HUGE)
        slack = 8 * k * _EPS * (np.abs(top) + weight)
        sloppy = slack >= 0  # False for NaN potentials
        bound = np.where(sloppy, np.maximum(weight - slack, _TINY), weight)
        for _ in range(k):
            inside = gaps < bound
            kept = np.where(inside, gaps, 0.0)
            count = inside.sum(axis=0)
            level = (_sum_in_order(kept) + weight) / count
            new = np.where(sloppy, np.maximum(level - slack, _TINY), level)
            moving = kept.max(axis=0) >= new
            if not moving.any():
                break
            bound = np.where(moving, new, bound)
        return top + (weight - level)


@njit(cache=True, error_model="numpy")  # NaN potentials: an empty set, q* NaN (reported)
def _zero_one_set(FT, weight, value, members, count, gaps, block, size, scratch):
    """:func:`zero_one_set` into its outputs, with the block's gaps, its top, level and slack
    (the rows of ``block``), the sizes of its sets and the work arrays ``scratch``."""
    k, n = FT.shape
    top, level, slack = block[0], block[1], block[2]
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
            level[i] = 1.0 / size[i]
        for j in range(k):
            for i in range(m):
                members[j, start + i] *= level[i]


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


def _work():
    """Work arrays of :func:`_water_levels` (rows 0-3) and a row of negative slacks (4)."""
    scratch = np.empty((5, BLOCK))
    scratch[4] = -1.0
    return scratch


def zero_one_smoothing(FT, mu, weight):
    r"""The quadratically smoothed zero-one game for every row (column of ``FT``).

    ``q* = (min(f, u) - tau)_+ / mu`` with ``sum_j (f_j - u)_+ = c`` and ``sum_j (min(f_j, u) -
    tau)_+ = mu``: two water levels per row (:func:`_smoothed_levels`).  Returns ``V_mu``
    ``(n,)``, ``q*`` ``(k, n)``, ``top``, ``d = top - u`` and ``e = u - tau`` ``(n,)``, the
    capped labels (``f_j > u``, ``(k, n)`` bool) and their number, and the active ones
    (``q_j > 0``) and their number.
    """
    return _zero_one_smoothing(FT, mu, weight, _work())


@njit(cache=True)
def _zero_one_smoothing(FT, mu, weight, scratch):
    """:func:`zero_one_smoothing` with the work arrays ``scratch`` (:func:`_work`)."""
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
    scale = 1.0 / mu
    for start in range(0, n, BLOCK):
        m = min(BLOCK, n - start)
        _block_gaps(FT, start, m, block_top, gaps)
        _smoothed_levels(gaps, excess, m, mu, weight, d, e, sizes, capped, active, start, scratch)
        for i in range(m):
            total[i] = 0.0
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


# ------------------------------------------------------------------ kernel dual coordinate ascent
# One row at a time: a row's step depends on the potentials every earlier step moved, so these
# kernels cannot work on blocks of rows; :func:`_level` is the water level of a single row
# (measured 7x faster than :func:`_water_levels` on a block of one).


@njit(cache=True, error_model="numpy")
def _level(gaps, volume):
    r"""The level ``d`` with ``sum_j (d - g_j)_+ = volume`` of one row of non-negative
    ``gaps`` (a zero among them), by the Newton passes of :func:`_water_levels` (no slack)."""
    k = gaps.size
    bound = level = volume
    for _ in range(k):
        total, count, high = 0.0, 0.0, 0.0
        for j in range(k):
            if gaps[j] < bound:
                count += 1.0
                total += gaps[j]
                high = gaps[j] if gaps[j] > high else high
        level = (total + volume) / count
        if high < level:  # the next set keeps every member: this one is final
            break
        bound = level
    return level


@njit(cache=True)
def _add_row(FT, row, step, labels, m):
    """``FT[j] += step[j] row`` for the first ``m`` labels ``j`` in ``labels``: ``row`` is read
    once per label (from the cache after the first), in a loop the compiler vectorises."""
    n = FT.shape[1]
    for a in range(m):
        j = labels[a]
        s, potentials = step[j], FT[j]
        for t in range(n):
            potentials[t] += row[t] * s


@njit(cache=True)
def _ascent_step(f, Q, i, mu, coef, weight, floor, gaps, step, labels):
    r"""Row ``i``'s exact step of dual coordinate ascent at its potentials ``f``.

    Row ``i``'s best adversary with the others fixed maximises ``H(q) + q^T f - (s_i / 2)
    ||q - q_i||^2`` with ``s_i = mu`` and ``H(q) = c (1 - max(max_j q_j, floor))``: the
    zero-one game for ``floor = 0``, the abstain game of penalty ``alpha = 1 - floor`` else
    (``min_a (L q)_a = min(c (1 - max_j q_j), c alpha)``).  With ``g = f + mu q_i``:

    * the smoothed zero-one game of :func:`zero_one_smoothing` at ``g``, two water levels
      (:func:`_level`): ``d`` for the volume ``c`` on the gaps ``max(g) - g``, then ``e`` for
      the volume ``mu`` on the excesses ``x = (max(g) - g - d)_+``, and ``q = (e - x)_+ /
      mu``, whose largest entry is ``e / mu``;
    * if that is below ``floor``: with ``t = max(max_j q_j, floor)`` the objective is
      concave in ``t`` and the zero-one step maximises it over all ``t``, so the best ``t``
      is ``floor``, where ``H`` is constant and ``q`` the projection of ``g / mu`` onto the
      simplex capped at ``floor`` (:func:`_capped_projection`).

    ``Q[i]`` is updated in place; the first ``m`` entries of ``labels`` name the labels ``j``
    whose ``q_ij`` moved and ``step[j] = coef (q_ij - q_new)`` (``coef = w_i / lam``) how far
    their coefficient moved.  Returns ``m``."""
    k = f.size
    top = -np.inf
    for j in range(k):
        gaps[j] = f[j] + mu * Q[i, j]
        top = gaps[j] if gaps[j] > top else top
    for j in range(k):
        gap = top - gaps[j]
        gaps[j] = _HUGE if _HUGE < gap else gap
    d = _level(gaps, weight)
    for j in range(k):
        gap = gaps[j] - d
        gaps[j] = 0.0 if 0.0 > gap else gap
    e = _level(gaps, mu)
    if floor is not None and e < floor * mu:
        for j in range(k):
            gap = (top - (f[j] + mu * Q[i, j])) / mu
            gaps[j] = _HUGE if _HUGE < gap else gap
        _capped_projection(gaps, floor)
    else:
        for j in range(k):
            q = e - gaps[j]
            gaps[j] = (0.0 if 0.0 > q else q) / mu
    m = 0
    for j in range(k):
        q = gaps[j]
        if q != Q[i, j]:
            step[j] = coef * (Q[i, j] - q)
            labels[m] = j
            m += 1
            Q[i, j] = q
    return m


@njit(cache=True)
def _capped_projection(gaps, cap):
    r"""Overwrite ``gaps = (max(v) - v)`` (non-negative, a zero among them) with the projection
    ``q`` of ``v`` onto ``{q in simplex, q_j <= cap}`` for ``cap >= 1/2``: the simplex
    projection ``q_j = (d - gaps_j)_+`` (:func:`_level` with volume 1); if its largest entry
    exceeds ``cap`` (only a unique top can), that label is capped and the others take the
    volume ``1 - cap <= cap`` the same way, from their own top."""
    k = gaps.size
    d = _level(gaps, 1.0)
    first, second = 0, _HUGE
    for j in range(1, k):
        if gaps[j] < gaps[first]:
            first, second = j, gaps[first]
        elif gaps[j] < second:
            second = gaps[j]
    if d <= cap:
        for j in range(k):
            gaps[j] = max(d - gaps[j], 0.0)
        return
    gaps[first] = _HUGE  # out of the second level
    for j in range(k):
        if j != first:
            gaps[j] -= second
    d = _level(gaps, 1.0 - cap)
    for j in range(k):
        gaps[j] = max(d - gaps[j], 0.0)
    gaps[first] = cap


def _abstain_floor(floor):
    """``floor`` for the abstain game, ``None`` for the zero-one game (``floor = 0``): the
    compiled kernels then drop the abstain branches when they are typed (``floor is not None``),
    so the zero-one game, the default, compiles neither them nor :func:`_capped_projection`."""
    return float(floor) if floor > 0.0 else None


def _row_work(k):
    """The per-row work arrays of the ascent kernels: ``f``, ``gaps`` and ``step`` (the rows of
    a ``(3, k)`` array) and ``labels``.  Allocated here rather than in compiled code, whose
    every allocation signature is one more compilation on a fresh install."""
    return np.empty((3, k)), np.empty(k, dtype=np.int64)


def kernel_dual_epoch(FT, K, Q, order, rows, coef, curvature, weight, floor, still):
    r"""One epoch of dual coordinate ascent for the kernel zero-one or abstain game (``floor``,
    :func:`_ascent_step`) with soft moments
    (:func:`advgame.solvers.fit_kernel_dual`) on the rows ``rows`` (``m`` of them), visited in
    the order ``order`` (positions in ``rows``).

    Each row takes the exact step of :func:`_ascent_step` with ``s_i = w_i K_ii / lam``
    (``curvature``).  When ``q_i`` moves, ``A_i = (w_i / lam) (e_{y_i} - q_i)`` (``coef = w /
    lam``) moves by ``-D``, ``D = (w_i / lam) (q_new - q_i)``, and the potentials ``F = K A`` by
    ``-K[:, i] D^T``.  Only the potentials of ``rows`` are kept, in the column layout ``FT``
    (``(k, m)``), with ``K`` their Gram matrix (``(m, m)``, symmetric: row ``i`` is read
    contiguously, once per label whose ``q_ij`` moved, about a third of them).  ``Q``
    (``(n, k)``) and ``FT`` are updated in place; ``still[i]`` counts the epochs in a row in
    which ``q_i`` stayed (0 after a move).  Returns the number of rows that moved.
    """
    work, labels = _row_work(FT.shape[0])
    return _kernel_dual_epoch(
        FT, K, Q, order, rows, coef, curvature, weight, _abstain_floor(floor), still, work, labels
    )


@njit(cache=True)
def _kernel_dual_epoch(FT, K, Q, order, rows, coef, curvature, weight, floor, still, work, labels):
    """:func:`kernel_dual_epoch` with the per-row work arrays (:func:`_row_work`)."""
    k = FT.shape[0]
    f, gaps, step = work[0], work[1], work[2]
    moved_rows = 0
    for p in order:
        i = rows[p]
        for j in range(k):
            f[j] = FT[j, p]
        m = _ascent_step(f, Q, i, curvature[i], coef[i], weight, floor, gaps, step, labels)
        if m == 0:
            still[i] += 1
            continue
        still[i] = 0
        moved_rows += 1
        _add_row(FT, K[p], step, labels, m)
    return moved_rows


def linear_dual_epoch(WT, X, Q, order, weights, coef, curvature, weight, floor, still, gap):
    r"""One epoch of dual coordinate ascent for the linear zero-one or abstain game (``floor``,
    :func:`_ascent_step`) with soft moments
    (:func:`advgame.solvers.fit_linear_dual`) on the rows ``order`` (visited in that order).

    The potentials of row ``i`` are ``f_i = W x_i`` (``W = Theta^T = A^T X``, ``WT``, ``(k,
    p)``) computed afresh (``k`` dot products the compiler may reassociate, so that it
    vectorises them: 4x faster than ``Theta^T x`` over a ``(p, k)`` layout at ``p = 65``,
    ``k = 10``), then the exact step of :func:`_ascent_step`
    with ``s_i = w_i ||x_i||^2 / lam`` (``curvature``, ``coef = w / lam``); when ``q_i``
    moves, ``W`` moves by ``-D x_i^T`` (``D = (w_i / lam) (q_new - q_i)``), one contiguous
    pass over ``x_i`` per label whose ``q_ij`` moved (:func:`_add_row`).  ``gap[i]`` becomes
    row ``i``'s weighted duality gap (:func:`dual_row_gaps`) before its step (after it the
    gap is 0: the step makes ``q_i`` a best response to the potentials it leaves),
    ``still[i]`` as in :func:`kernel_dual_epoch`; ``Q`` and ``WT`` are updated in place.
    Returns the number of rows that moved.
    """
    work, labels = _row_work(WT.shape[0])
    floor = _abstain_floor(floor)
    return _linear_dual_epoch(
        WT, X, Q, order, weights, coef, curvature, weight, floor, still, gap, work, labels
    )


# fastmath lets the compiler reassociate the running potentials' dot products (written here, not
# in a helper: one compilation less on a fresh install); the rest of the epoch is calls and
# single products, which it leaves as they are.
@njit(cache=True, fastmath={"reassoc", "contract"})
def _linear_dual_epoch(
    WT, X, Q, order, weights, coef, curvature, weight, floor, still, gap, work, labels
):
    """:func:`linear_dual_epoch` with the per-row work arrays (:func:`_row_work`)."""
    k, p = WT.shape
    f, gaps, step = work[0], work[1], work[2]
    moved_rows = 0
    for i in order:
        x = X[i]
        for j in range(k):
            w, total = WT[j], 0.0
            for t in range(p):
                total += w[t] * x[t]
            f[j] = total
        gap[i] = weights[i] * _row_gap(f, Q, i, weight, floor, gaps)
        m = _ascent_step(f, Q, i, curvature[i], coef[i], weight, floor, gaps, step, labels)
        if m == 0:
            still[i] += 1
            continue
        still[i] = 0
        moved_rows += 1
        _add_row(WT, x, step, labels, m)
    return moved_rows


def linear_dual_epochs(
    rng, WT, X, Q, y, active, weights, coef, curvature, weight, floor, still, gap, rows, epoch,
    stop, patience, threshold,
):  # fmt: skip
    r"""Epochs ``epoch + 1, ...`` of :func:`linear_dual_epoch`, each on the rows ``active`` in a
    fresh order (``rng.permutation``: numba's shares the generator and its stream with numpy's)
    followed by :func:`dual_shrink` (``rows``, ``patience``), until the running gap is within
    ``threshold`` or epoch ``stop`` is done: the loop of :func:`advgame.solvers.fit_linear_dual`
    compiled, so that an epoch of a few hundred rows (0.1 ms) does not also pay for four calls
    from Python.  Returns ``(epoch, left, running)``: the last epoch, the number of rows left
    active (at the front of ``active``) and the running gap."""
    work, labels = _row_work(WT.shape[0])
    floor = _abstain_floor(floor)
    return _linear_dual_epochs(
        rng, WT, X, Q, y, active, weights, coef, curvature, weight, floor, still, gap, rows,
        epoch, stop, patience, threshold, work, labels,
    )  # fmt: skip


@njit(cache=True)
def _linear_dual_epochs(
    rng, WT, X, Q, y, active, weights, coef, curvature, weight, floor, still, gap, rows, epoch,
    stop, patience, threshold, work, labels,
):  # fmt: skip
    """:func:`linear_dual_epochs` with the per-row work arrays (:func:`_row_work`)."""
    left, running = active.size, np.inf
    while epoch < stop:
        epoch += 1
        order = rng.permutation(active[:left])
        _linear_dual_epoch(
            WT, X, Q, order, weights, coef, curvature, weight, floor, still, gap, work, labels
        )
        left, running = dual_shrink(gap, Q, y, active[:left], rows, still, patience)
        if running <= threshold:
            break
    return epoch, left, running


@njit(cache=True)
def _row_gap(f, Q, i, weight, floor, gaps):
    r"""``V(f) - q^T f - H(q)`` for the potentials ``f`` and ``q = Q[i]`` in the game of
    :func:`_ascent_step`: for ``floor = 0`` the zero-one value ``V = max(f) + c - d``
    (:func:`zero_one_set`, ``d`` the level of the gaps for the volume ``c``) and ``H(q) = c
    (sum_j q_j - max_j q_j)``; else the abstain value ``V = max(f_(1), (1 - alpha) f_(1) +
    alpha f_(2) + c alpha)`` (Fathony et al. 2018a, Theorem 12; ``alpha = 1 - floor``) and
    ``H(q) = c (sum_j q_j - max(max_j q_j, floor))``."""
    k = f.size
    top, second, qf, total, high = -np.inf, -np.inf, 0.0, 0.0, 0.0
    for j in range(k):
        if f[j] > top:
            top, second = f[j], top
        elif f[j] > second:
            second = f[j]
        qf += Q[i, j] * f[j]
        total += Q[i, j]
        high = Q[i, j] if Q[i, j] > high else high
    if floor is not None and floor > 0.0:
        alpha = 1.0 - floor
        mixed = floor * top + alpha * second + weight * alpha
        value = mixed if mixed > top else top
        return value - qf - weight * (total - (floor if floor > high else high))
    for j in range(k):
        gap = top - f[j]
        gaps[j] = _HUGE if _HUGE < gap else gap
    return top + (weight - _level(gaps, weight)) - qf - weight * (total - high)


def dual_row_gaps(FT, Q, rows, weights, weight, floor):
    r"""The duality gaps ``w_i (V(f_i) - q_i^T f_i - H(q_i))`` of the rows ``rows``, whose
    potentials are the columns of ``FT`` (``(k, rows.size)``): non-negative (up to rounding),
    0 exactly when ``q_i`` is a best response to ``f_i``, and summing to ``J(A) - D(Q)`` at
    ``A = diag(w) (E_y - Q) / lam`` (:func:`advgame.solvers.fit_kernel_dual`)."""
    work, _ = _row_work(FT.shape[0])
    out = np.empty(rows.size)
    _dual_row_gaps(FT, Q, rows, weights, weight, _abstain_floor(floor), work, out)
    return out


@njit(cache=True)
def _dual_row_gaps(FT, Q, rows, weights, weight, floor, work, out):
    """:func:`dual_row_gaps` into ``out``, with the per-row work arrays (:func:`_row_work`)."""
    k = FT.shape[0]
    f, gaps = work[0], work[1]
    for p in range(rows.size):
        for j in range(k):
            f[j] = FT[j, p]
        out[p] = weights[rows[p]] * _row_gap(f, Q, rows[p], weight, floor, gaps)


@njit(cache=True)
def dual_shrink(gap, Q, y, active, rows, still, patience):
    r"""After an epoch of dual coordinate ascent: the running gaps of the active rows and
    their shrinking.

    For each position ``p`` in ``active`` (row ``i = rows[p]``) the weighted gap ``gap[p]``
    (:func:`dual_row_gaps`) is added up; the row leaves the active set when its adversary
    has stayed at its label (``q_i = e_{y_i}``) for ``patience`` epochs (``still``) and is a
    best response (gap 0: ``f_y - max_{j != y} f_j >= c``).  The rows left are written to the
    front of ``active``, in order; returns their number and the sum of the gaps.
    """
    left, total = 0, 0.0
    for a in range(active.size):
        p = active[a]
        i = rows[p]
        total += gap[p]
        if Q[i, y[i]] == 1.0 and still[i] >= patience and gap[p] <= 0.0:
            continue
        active[left] = p
        left += 1
    return left, total


@njit(cache=True)
def kernel_potentials(K, G, rows):
    r"""``(K G)^T``, ``(k, n)``, from the rows of ``G`` (``(n, k)``) in ``rows`` (the others
    zero): each of those rows of ``K`` (symmetric, ``K[:, i] = K[i]``) is read contiguously,
    once per nonzero entry of ``G_i``, with no copy of ``K[rows]``."""
    n, k = G.shape
    FT = np.zeros((k, n))
    labels = np.empty(k, dtype=np.int64)
    for i in rows:
        m = 0
        for j in range(k):
            if G[i, j] != 0.0:
                labels[m] = j
                m += 1
        _add_row(FT, K[i], G[i], labels, m)
    return FT


@njit(cache=True)
def submatrix(K, rows, KC, position):
    """``K[rows][:, rows]`` for a symmetric ``K``, reading ``KC[position[a]]`` for the rows
    ``a`` with ``position[a] >= 0`` (``KC = K[kept][:, kept]`` with ``kept[position[a]] =
    rows[a]``: the rows already gathered, smaller and contiguous) and ``K`` for the others.
    ``submatrix(K, rows, K, rows)`` is ``np.ix_``'s gather without its indexing overhead
    (twice as fast)."""
    m = rows.size
    out = np.empty((m, m), dtype=K.dtype)
    for a in range(m):
        if position[a] < 0:  # a new row: from K, and its column by symmetry
            source, target = K[rows[a]], out[a]
            for b in range(m):
                target[b] = source[rows[b]]
    for a in range(m):
        if position[a] >= 0:
            source, target = KC[position[a]], out[a]
            for b in range(m):
                target[b] = source[position[b]] if position[b] >= 0 else out[b, a]
    return out


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
