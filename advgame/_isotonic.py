r"""Sort-based exact projection kernels of :mod:`advgame.polytopes` (Blondel 2019, §4).

Pool-adjacent-violators isotonic optimisation with the Euclidean (mean) and KL (log-sum-exp)
block values, vectorised over a batch (the order simplex and the permutahedron), the clusters
at which a sorted permutahedron problem separates, and the exact projection onto the capped sum
``{mu in [0, 1]^k : sum(mu) = m}`` (the knapsack, Blondel 2019, Prop. 3).  numpy only.
"""

import numpy as np


def _pav_decreasing(stats, combine, value, barrier=None):
    r"""Pool-adjacent-violators: non-increasing isotonic optimisation of every row, vectorised.

    Minimises a separable objective :math:`\sum_i f_i(x_i)` subject to :math:`x_1 \ge \dots \ge
    x_k` for each row of the batch.  Each coordinate enters as a singleton block described by
    statistics ``stats[t][:, i]``; two adjacent blocks pool by combining their statistics with the
    binary ufuncs ``combine[t]``, and ``value(*block_stats)`` is the block's common optimal value
    (the minimiser of :math:`\sum_{i \in B} f_i(x)`).  For the block functions used here (the mean,
    and the log-sum-exp block of the KL permutahedron) pooling a violating pair is optimal
    (Robertson, Wright & Dykstra 1988; Lim & Wright 2016), so the result is exact.

    The loop runs over the ``k`` coordinates; every row keeps its own stack of blocks in ``(n, k)``
    arrays with a stack height per row, and the pops of all rows that still violate are done
    together (the inner ``while`` stops when no row violates).  ``O(k)`` amortised pools per row.
    Pooled blocks hold one value, and the blocks left on a stack are non-increasing by the exact
    comparison that ends the merges, so ``x`` is exactly monotone in floating point.

    Parameters
    ----------
    stats : tuple of ndarray, each ``(n, k)``
    combine : tuple of binary ufuncs, one per statistic (e.g. ``np.add``, ``np.logaddexp``)
    value : callable
        ``value(*stats) -> values``, elementwise on arrays of equal shape.
    barrier : None or bool ndarray ``(n, k)``
        Where True, a block starting at that coordinate never pools with the block before it:
        the row is solved as independent problems split at the barriers (whose values need not
        be comparable across a barrier).

    Returns
    -------
    x : ndarray ``(n, k)``
    """
    n, k = stats[0].shape
    rows = np.arange(n)
    base = rows * k  # offset of each row's stack in the ravelled (n, k) arrays
    singles = value(*stats)  # value of every one-coordinate block
    block = [np.empty(n * k) for _ in stats]
    vals = np.empty(n * k)
    start = np.empty(n * k, dtype=np.intp)
    height = np.zeros(n, dtype=np.intp)
    fence = None if barrier is None else np.ascontiguousarray(barrier, dtype=bool).ravel()
    for i in range(k):
        top = base + height  # push coordinate i on every row's stack
        for b, s in zip(block, stats):
            b[top] = s[:, i]
        vals[top] = singles[:, i]
        start[top] = i
        height += 1
        live = rows[height >= 2]
        while live.size:
            top = base[live] + height[live] - 1
            bad = vals[top] > vals[top - 1]  # the non-increasing order is violated: pool
            if fence is not None:
                bad &= ~fence[base[live] + start[top]]
            live, top = live[bad], top[bad]
            if not live.size:
                break
            below = top - 1
            for b, op in zip(block, combine):
                b[below] = op(b[below], b[top])
            vals[below] = value(*(b[below] for b in block))
            height[live] -= 1
            live = live[height[live] >= 2]
    # expand blocks to coordinates: mark block starts, the running count is the block index
    level = np.arange(k)[None, :] < height[:, None]
    marks = np.zeros((n, k), dtype=np.intp)
    marks[np.nonzero(level)[0], start.reshape(n, k)[level]] = 1
    index = np.cumsum(marks, axis=1) - 1
    return np.take_along_axis(vals.reshape(n, k), index, axis=1)


def _isotonic_decreasing_mean(Y, barrier=None):
    r"""Euclidean isotonic regression :math:`\operatorname{argmin}_{x_1 \ge \dots \ge x_k}
    \|x - y\|^2` of every row of ``Y`` by PAV (block value: the mean).

    Rows with entries above ``2^900`` are scaled by a power of two (exact) so that block sums
    cannot overflow; the entries that scaling pushes into subnormals are below ``2^-170`` times
    the row's largest and only move block means by that relative amount.
    """
    big = np.abs(Y).max(axis=1) > 2.0**900
    if not np.any(big):
        return _pav_decreasing((Y, np.ones_like(Y)), (np.add, np.add), np.divide, barrier)
    shift = np.where(big, -np.frexp(np.abs(Y).max(axis=1))[1], 0)[:, None]
    X = _pav_decreasing((np.ldexp(Y, shift), np.ones_like(Y)), (np.add, np.add), np.divide, barrier)
    return np.ldexp(X, -shift)


def _kl_block_value(lse_s, sum_w):
    return lse_s - np.log(sum_w)


def _isotonic_decreasing_kl(S, W, barrier=None):
    r"""KL isotonic optimisation :math:`\operatorname{argmin}_{v_1 \ge \dots \ge v_k}
    \sum_i e^{s_i - v_i} + w_i v_i` (``w > 0``; Blondel et al. 2020, Lim & Wright 2016) by PAV.

    Block value :math:`\mathrm{LSE}(s_B) - \log \sum_{i \in B} w_i`; each block keeps its running
    ``logaddexp`` of ``s`` (exact, no overflow or cancellation) and its sum of ``w`` (positive
    terms: no cancellation either).
    """
    return _pav_decreasing((S, W), (np.logaddexp, np.add), _kl_block_value, barrier)


def _clusters(s, gap):
    r"""Split rows of ``s`` (sorted decreasingly) where consecutive entries differ by more than
    ``gap``: returns ``(barrier, rel)``, ``barrier[:, i]`` True where a cluster starts and
    ``rel = s - (the first entry of its cluster)``.

    For the permutahedron projections the isotonic problem of ``s - w`` (or of ``s`` with the
    KL block values) separates at such a gap: every value before it is at least every value after
    it, so the solutions of the two parts are already monotone across (Best & Chakravarti 1990).
    Inside a cluster the entries are within ``k * gap`` of each other, so ``rel`` is exact to a
    few ulps of that span even when ``|theta|`` is ``1e17`` or more (where ``theta - w`` would
    round away ``w``).
    """
    n, k = s.shape
    with np.errstate(over="ignore", invalid="ignore"):
        barrier = np.ones((n, k), dtype=bool)
        barrier[:, 1:] = ~(s[:, :-1] - s[:, 1:] <= gap)
    first = np.maximum.accumulate(np.where(barrier, np.arange(k)[None, :], 0), axis=1)
    rel = s - np.take_along_axis(s, first, axis=1)
    return barrier, rel


def _capped_sum_tau_euclidean(u, m):
    r"""Multiplier :math:`\tau` with :math:`\sum_i \mathrm{clip}_{[0,1]}(u_i - \tau) = m`, per row
    of ``u`` (sorted decreasingly), ``0 < m < k``.

    The sum :math:`f(\tau) = \sum_b \sigma_b \max(b - \tau, 0)` is piecewise linear and
    non-increasing, with breakpoints :math:`b = u_i` (:math:`\sigma = +1`, where coordinate ``i``
    leaves 0) and :math:`b = u_i - 1` (:math:`\sigma = -1`, where it reaches 1).  With the ``2k``
    breakpoints sorted decreasingly, :math:`f(c_j) = \sum_{l \le j} \sigma_l (c_l - c_j)` for any
    order among ties; the root lies on the last segment with :math:`f(c_j) < m`.  There the ``b``
    largest coordinates are at 1 and the next ``a - b`` are free, so :math:`\tau = (\sum_{\rm free}
    u - (m - b)) / (a - b)`, summed relative to the largest free coordinate so that large common
    offsets (``1e8``) do not cancel.  Exact while ``u - 1`` is (``|theta| < 2^53``); beyond, the
    two breakpoints of a coordinate round to one float: ``_capped_sum_projection`` therefore
    calls it on ``theta`` shifted and clipped to ``[-1, 1]``.
    """
    k = u.shape[1]
    breakpoints = np.concatenate([u, u - 1.0], axis=1)
    order = np.argsort(-breakpoints, axis=1, kind="stable")
    c = np.take_along_axis(breakpoints, order, axis=1)
    leaves_zero = order < k  # breakpoint u_i (sign +1) rather than u_i - 1 (sign -1)
    above = np.cumsum(leaves_zero, axis=1)  # a: coordinates > 0 just right of c_j
    at_one = np.arange(1, 2 * k + 1) - above  # b: coordinates at 1 just right of c_j
    slope = above - at_one
    f = np.cumsum(np.where(leaves_zero, c, -c), axis=1) - slope * c  # f(c_j), up to rounding
    # f(c_1) = 0 < m and f(c_2k) = k > m, so the segment index j is in [0, 2k - 2]
    j = np.clip(np.count_nonzero(f < m[:, None], axis=1) - 1, 0, 2 * k - 2)[:, None]
    a = np.take_along_axis(above, j, axis=1)
    b = np.take_along_axis(at_one, j, axis=1)
    ref = np.take_along_axis(u, np.minimum(b, k - 1), axis=1)
    idx = np.arange(k)[None, :]
    free_sum = np.where((idx >= b) & (idx < a), u - ref, 0.0).sum(axis=1, keepdims=True)
    tau = ref + (free_sum - (m[:, None] - b)) / np.maximum(a - b, 1)
    # rounding in f can pick a neighbouring segment; the root then sits at their common breakpoint
    lo = np.take_along_axis(c, j + 1, axis=1)
    hi = np.take_along_axis(c, j, axis=1)
    return np.clip(tau, lo, hi)


def _capped_sum_kl_sorted(u, m):
    r"""KL projection onto :math:`\{\mu \in [0,1]^k : \langle \mu, 1 \rangle = m\}` of rows ``u``
    sorted decreasingly, ``0 < m < k``; returned in the same (sorted) order.

    The solution is :math:`\mu = \min(1, e^{u - 1 - \tau})`.  If the ``j`` largest coordinates
    are at 1, the others are :math:`(m - j)\, e^{u_i - u_{j+1}} / S_j` with :math:`S_j =
    \sum_{l > j} e^{u_l - u_{j+1}} \ge 1`; the answer is the smallest ``j < m`` whose next
    coordinate is not capped, :math:`m - j \le S_j` (``j = ceil(m) - 1`` always qualifies).  The
    sums are carried relative to their own largest term by the recurrence
    :math:`\log S_j = \mathrm{logaddexp}(0, (u_{j+2} - u_{j+1}) + \log S_{j+1})`, and ``mu`` is
    formed from the differences ``u_i - u_{j+1}``: no ``tau`` of the size of ``theta`` is ever
    subtracted, so the result sums to ``m`` to a few ulps at every finite scale (``theta ~ 1e17``
    included, where ``theta - 1`` rounds to ``theta``).
    """
    n, k = u.shape
    log_s = np.zeros((n, k))  # log S for the tail starting at each position
    with np.errstate(over="ignore", invalid="ignore"):
        step = u[:, 1:] - u[:, :-1]  # <= 0; -inf when the difference overflows
        for i in range(k - 2, -1, -1):
            log_s[:, i] = np.logaddexp(0.0, step[:, i] + log_s[:, i + 1])
        j = np.arange(k)[None, :]
        room = m[:, None] - j
        fits = (room > 0) & (np.log(np.where(room > 0, room, 1.0)) <= log_s)
        first = np.argmax(fits, axis=1)[:, None]
        lead = np.take_along_axis(u, first, axis=1)
        scale = np.take_along_axis(room, first, axis=1) * np.exp(
            -np.take_along_axis(log_s, first, axis=1)
        )
        free = np.minimum(scale * np.exp(np.minimum(u - lead, 0.0)), 1.0)
    return np.where(j < first, 1.0, free)


def _capped_sum_projection(T, m, geometry):
    r"""Projection onto :math:`\{\mu \in [0,1]^k : \langle \mu, 1 \rangle = m\}` per row
    (Blondel 2019, Prop. 3, §C.2), exact and sort-based, ``O(k log k)`` per row.

    Euclidean: :math:`\mu = \mathrm{clip}_{[0,1]}(\theta - \tau)` with :math:`\tau` from the
    sorted ``theta`` (``_capped_sum_tau_euclidean``); KL: :math:`\mu = \min(1, e^{\theta - 1 -
    \tau})` (``_capped_sum_kl_sorted``).  ``m = 0`` gives 0 and ``m = k`` gives 1 (the set is one
    point).

    Scale: the Euclidean multiplier satisfies :math:`u_c - 1 \le \tau < u_c` with ``u_c`` the
    ``ceil(m)``-th largest coordinate (with ``tau`` below, ``ceil(m)`` coordinates would be at 1;
    above, fewer than ``m`` would be positive).  So ``theta`` is shifted by ``u_c`` and clipped to
    ``[-1, 1]``: coordinates above ``u_c + 1`` are at 1 and those below ``u_c - 1`` at 0 either way,
    and the bounded shifted problem is solved exactly at every finite scale of ``theta``.
    """
    out = np.zeros_like(T)
    out[m >= T.shape[1]] = 1.0
    rows = (m > 0) & (m < T.shape[1])
    if not np.any(rows):
        return out
    T, m = T[rows], m[rows]
    k = T.shape[1]
    if geometry == "euclidean":
        u = -np.sort(-T, axis=1)
        c = np.clip(np.ceil(m).astype(np.intp) - 1, 0, k - 1)[:, None]
        with np.errstate(over="ignore"):
            D = np.clip(T - np.take_along_axis(u, c, axis=1), -1.0, 1.0)
        v = -np.sort(-D, axis=1)
        out[rows] = np.clip(D - _capped_sum_tau_euclidean(v, m), 0.0, 1.0)
    else:
        order = np.argsort(-T, axis=1, kind="stable")
        mu = _capped_sum_kl_sorted(np.take_along_axis(T, order, axis=1), m)
        sub = np.empty_like(T)
        np.put_along_axis(sub, order, mu, axis=1)
        out[rows] = sub
    return out
