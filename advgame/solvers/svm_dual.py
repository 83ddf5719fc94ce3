r"""Dual coordinate ascent for the multiclass SVMs of Table 2 (WW, CS, LLW), certified by their
duality gap, on a Gram matrix or on linear features.

With scores ``F = K B`` (``B`` of shape ``(n, k)``, ``w_c = sum_i B_ic phi(x_i)``) each model
is

.. math::  \min_B\ \tfrac12 \operatorname{tr}(B^\top K B) + \sum_i c_i\, \ell(F_i, y_i),

with the hinge rows of :mod:`advgame.baselines` (``ell`` the Weston-Watkins sum, the
Crammer-Singer maximum or the Lee-Lin-Wahba absolute sum of ``[1 + ...]_+``).  Their duals
have one block of variables per sample (Weston & Watkins 1999; Crammer & Singer 2001; Lee, Lin
& Wahba 2004), ``alpha_ij >= 0`` for ``j != y_i``:

* WW: ``alpha_ij <= c_i``, ``B_ij = -alpha_ij``, ``B_{i y_i} = sum_j alpha_ij``;
* CS: ``sum_j alpha_ij <= c_i``, the same ``B`` (so ``sum_c B_ic = 0`` and
  ``B_ic <= c_i [c = y_i]``: the constraints of the dual in ``B`` alone);
* LLW: ``alpha_ij <= c_i`` and ``B_i = -(alpha_i - mean(alpha_i))`` (the mean over all ``k``
  labels, ``alpha_{i y_i} = 0``: the multiplier of ``sum_c w_c = 0``);

and dual objective ``D = sum alpha - 1/2 tr(B^T K B)``, whose gradient in ``alpha_ij`` is the
hinge argument ``1 + f_j - f_{y_i}`` (``1 + f_j`` for LLW).  One epoch visits the samples in a
random order and maximises ``D`` over each sample's block exactly, the others fixed (the block
problem is a small QP with Hessian ``K_ii (I + 11^T)``, ``K_ii I`` in ``B`` for CS and
``K_ii (I - 11^T / k)`` for LLW), then moves every score with the sample's row of ``K``
(:func:`kernel_epoch`), or, with linear features ``K = X X^T``, the weights ``W = B^T X``
(:func:`linear_epoch`, ``O(dk)`` per sample): the decomposition LIBLINEAR uses for the linear
Crammer-Singer machine.  Offsets, where wanted, are the weights of a constant feature
(regularised; the Gram matrix gains a constant), so the duals keep no equality constraint.

The certificate is weak duality: ``P(B) - D(alpha)`` with the scores recomputed exactly.
Measured on optdigits (3,934 rows, ``tol = 1e-4``): 0.4-10 s of one core per RBF fit over the
tuning grid of :mod:`advgame.reproductions.fathony2018a`; with linear features thousands of epochs
at ``C >= 1`` (its rate degrades as ``C max ||x||^2`` grows; LLW on the 3,147-row optdigits tuning
fold: 5,351 epochs, 35-45 s, at ``C = 1 / (n 1e-4)``, and no certificate in 50,000 epochs at
``1e-5``).  So the benchmark's linear programs stay with the exact QP, whose first working
set a few epochs of this ascent name
(:meth:`advgame.baselines.svm._MulticlassHinge._first_working_set`), and
``backend='dual'`` sends the linear LLW to the interior-point method
:func:`advgame.solvers.svm_newton.fit_llw_linear` (the QP's model, free offsets; 0.4-0.7 s per
fit on that fold).
"""

import numpy as np
from numba import njit

from ._progress import quiet

__all__ = ["KINDS", "fit_hinge_dual", "hinge_losses", "kernel_epoch", "linear_epoch"]

#: The models, as the integer codes of the compiled epoch.
KINDS = {"ww": 0, "cs": 1, "llw": 2}
#: Sweeps over a sample's labels at most when its block QP is solved by coordinates (WW, LLW),
#: and the change below which they stop.
BLOCK_SWEEPS, BLOCK_TOL = 100, 1e-13
#: Seed of the visiting orders.
SEED = 0


@njit(cache=True)
def _project_capped(v, cap, out, d, order):
    """``out = argmin ||b - v||`` over ``sum b = 0, b_c <= cap_c`` (``sum cap >= 0``):
    ``b_c = min(v_c - tau, cap_c)`` with ``tau`` found over the breakpoints ``d = v - cap``
    in decreasing order (``d`` and ``order`` are scratch arrays of ``v``'s size)."""
    k = v.size
    for c in range(k):  # insertion sort: k is small
        d[c] = v[c] - cap[c]
        m = c
        while m > 0 and d[order[m - 1]] < d[c]:
            order[m] = order[m - 1]
            m -= 1
        order[m] = c
    capped_sum, free_sum = 0.0, v.sum()
    tau = free_sum / k
    for m in range(k):
        # the top m labels capped: tau from the others; valid when d_(m) >= tau >= d_(m+1)
        tau = (free_sum + capped_sum) / (k - m)
        if (m == 0 or d[order[m - 1]] >= tau) and d[order[m]] <= tau:
            break
        c = order[m]
        capped_sum += cap[c]
        free_sum -= v[c]
    for c in range(k):
        out[c] = min(v[c] - tau, cap[c])


@njit(cache=True)
def _block_change(f, kii, alpha_i, b_i, yi, c, kind, scratch, order_k, change):
    """Maximise the dual over one sample's block exactly, the others fixed, from its scores
    ``f`` (``k``): updates ``alpha_i`` in place and writes the change of its coefficients
    ``b_i`` to ``change``; returns whether anything moved."""
    k = f.size
    delta, v, cap, new, d = scratch[0], scratch[1], scratch[2], scratch[3], scratch[4]
    kii = max(kii, 1e-12)
    if kind == 1:  # CS: b_i = argmin ||b - (b_i + (e_y - f) / K_ii)|| over its set
        for j in range(k):
            v[j] = b_i[j] - f[j] / kii
            cap[j] = 0.0
        v[yi] += 1.0 / kii
        cap[yi] = c
        _project_capped(v, cap, new, d, order_k)
        for j in range(k):
            change[j] = new[j] - b_i[j]
    else:  # WW, LLW: coordinate sweeps over the box [0, c] of the block
        delta[:] = 0.0
        total = 0.0
        curve = 2.0 * kii if kind == 0 else kii * (1.0 - 1.0 / k)
        for _ in range(BLOCK_SWEEPS):
            largest = 0.0
            for j in range(k):
                if j == yi:
                    continue
                if kind == 0:
                    g = 1.0 + f[j] - f[yi] - kii * (delta[j] + total)
                else:
                    g = 1.0 + f[j] - kii * (delta[j] - total / k)
                a = min(max(alpha_i[j] + delta[j] + g / curve, 0.0), c)
                step = a - alpha_i[j] - delta[j]
                if step != 0.0:
                    delta[j] += step
                    total += step
                    largest = max(largest, abs(step))
            if largest <= BLOCK_TOL * max(c, 1.0):
                break
        for j in range(k):
            alpha_i[j] += delta[j]
            change[j] = -delta[j] if kind == 0 else -(delta[j] - total / k)
        if kind == 0:
            change[yi] = total
    moved = False
    for j in range(k):
        if change[j] != 0.0:
            moved = True
            b_i[j] += change[j]
    return moved


@njit(cache=True)
def kernel_epoch(FT, shift, K, alpha, B, y, cost, order, kind):
    """One epoch over the samples in ``order`` on the Gram matrix ``K``: updates ``alpha``,
    ``B`` (``(n, k)``) and the scores in place, a moved sample's row of ``K`` into every
    score that moved.  The scores are ``FT = (K B)^T`` (``(k, n)``) for WW and CS; for LLW,
    whose ``B_i = -(alpha_i - mean(alpha_i))`` moves in all ``k`` labels whenever one
    ``alpha_ij`` does, they are ``FT + shift`` with ``FT = -(K alpha)^T`` and ``shift = K
    mean(alpha)`` (``(n,)``), so a move costs one pass over the row of ``K`` per moved
    ``alpha_ij`` plus one, not ``k``."""
    k, n = FT.shape
    scratch = np.zeros((5, k))
    f, change = np.zeros(k), np.zeros(k)
    order_k = np.zeros(k, dtype=np.int64)
    delta = scratch[0]  # the block's change of alpha_i (WW, LLW)
    for i in order:
        for j in range(k):
            f[j] = FT[j, i] + (shift[i] if kind == 2 else 0.0)
        if not _block_change(
            f, K[i, i], alpha[i], B[i], y[i], cost[i], kind, scratch, order_k, change
        ):
            continue
        row = K[i]
        if kind == 2:
            total = 0.0
            for j in range(k):
                total += delta[j]
            for j in range(k):
                if delta[j] != 0.0:
                    _axpy(FT[j], row, -delta[j])
            if total != 0.0:
                _axpy(shift, row, total / k)
            continue
        for j in range(k):
            if change[j] != 0.0:
                _axpy(FT[j], row, change[j])


@njit(cache=True)
def _axpy(target, row, step):
    """``target += step row``."""
    for t in range(target.size):
        target[t] += row[t] * step


@njit(cache=True)
def linear_epoch(W, X, squares, alpha, B, y, cost, order, kind):
    """One epoch over the samples in ``order`` with linear features ``X`` (``(n, d)``, ``K = X
    X^T`` never formed): updates ``alpha``, ``B`` and the weights ``W = B^T X`` (``(k, d)``) in
    place; ``squares`` are the ``K_ii = ||x_i||^2``."""
    k, p = W.shape
    scratch = np.zeros((5, k))
    f, change = np.zeros(k), np.zeros(k)
    order_k = np.zeros(k, dtype=np.int64)
    for i in order:
        x = X[i]
        for j in range(k):
            total = 0.0
            for t in range(p):
                total += W[j, t] * x[t]
            f[j] = total
        if not _block_change(
            f, squares[i], alpha[i], B[i], y[i], cost[i], kind, scratch, order_k, change
        ):
            continue
        for j in range(k):
            step = change[j]
            if step != 0.0:
                for t in range(p):
                    W[j, t] += x[t] * step


def hinge_losses(F, y, kind):
    """``ell(F_i, y_i)`` of every row: the WW sum, the CS maximum or the LLW sum of hinges."""
    n, k = F.shape
    rows = np.arange(n)
    other = np.ones((n, k), dtype=bool)
    other[rows, y] = False
    if kind == "llw":
        return np.where(other, np.maximum(0.0, 1.0 + F), 0.0).sum(axis=1)
    margins = np.where(other, 1.0 + F - F[rows, y][:, None], 0.0)
    if kind == "ww":
        return np.maximum(margins, 0.0).sum(axis=1)
    return np.maximum(margins.max(axis=1), 0.0)


def fit_hinge_dual(M, y, cost, kind, linear=False, tol=1e-4, max_epochs=50_000, progress=None):
    """Train the SVM ``kind`` (:data:`KINDS`) by dual coordinate ascent, to the relative
    duality gap ``tol``, on the Gram matrix ``M`` or (``linear``) on the features ``M``.

    Parameters
    ----------
    M : ndarray of shape (n, n) or (n, d)
        The symmetric positive semi-definite Gram matrix of the training inputs, or with
        ``linear`` their features (``K = M M^T``, never formed: the ascent keeps the weights
        ``W = B^T M``, ``O(dk)`` per sample instead of ``O(nk)``); finite.
    y : ndarray of shape (n,)
        Label indices in ``0..k-1`` (``k`` the number of classes, at least 2).
    cost : ndarray of shape (n,)
        ``c_i = C * sample_weight_i`` (non-negative).
    kind : {'ww', 'cs', 'llw'}
    linear : bool
        Whether ``M`` holds features rather than a Gram matrix.
    tol : float
        Stop when ``P - D <= tol * max(1, |P|)``, ``P`` computed from scores recomputed
        afresh (``F = K B``, or ``F = M W^T`` with ``W = B^T M``).
    max_epochs : int
    progress : Phase, optional
        Told every epoch (:class:`advgame.solvers._progress.Phase`).

    Returns
    -------
    B : ndarray of shape (n, k)
        The expansion coefficients (``F(x) = K(x, X) B``; with ``linear``, ``W = B^T M``).
    objective : float
        ``P(B)``.
    gap : float
        The certified ``P(B) - D(alpha)``.
    epochs : int
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {sorted(KINDS)}; got {kind!r}.")
    code = KINDS[kind]
    M = np.ascontiguousarray(M, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    cost = np.ascontiguousarray(cost, dtype=np.float64)
    n, k = M.shape[0], max(int(y.max()) + 1 if y.size else 0, 2)
    alpha, B = np.zeros((n, k)), np.zeros((n, k))
    # the scores (K B)^T (LLW: minus shift, see kernel_epoch), or the weights B^T M
    state, shift = np.zeros((k, M.shape[1])), np.zeros(n)
    squares = np.einsum("ij,ij->i", M, M) if linear else None
    rows = np.flatnonzero(cost > 0)
    rng = np.random.default_rng(SEED)

    def exact_state():
        if linear:
            return np.ascontiguousarray((M.T @ B).T), shift
        if code == 2:
            return np.ascontiguousarray(-(M @ alpha).T), M @ alpha.mean(axis=1)
        return np.ascontiguousarray((M @ B).T), shift

    def gap_at(state, shift):
        F = M @ state.T if linear else state.T + shift[:, None]
        norm2 = float(np.einsum("ij,ij->", state, state) if linear else np.einsum("ij,ij->", B, F))
        primal = 0.5 * norm2 + float(cost @ hinge_losses(F, y, kind))
        dual = float(alpha.sum() if code != 1 else B[np.arange(n), y].sum()) - 0.5 * norm2
        return primal, max(primal - dual, 0.0)  # weak duality: a negative gap is rounding

    primal, gap, epoch = np.inf, np.inf, 0
    phase = quiet(progress)
    while epoch < max_epochs:
        epoch += 1
        order = rng.permutation(rows)
        if linear:
            linear_epoch(state, M, squares, alpha, B, y, cost, order, code)
        else:
            kernel_epoch(state, shift, M, alpha, B, y, cost, order, code)
        primal, gap = gap_at(state, shift)
        phase.step(epoch, objective=primal, running_gap=gap)  # the state drifts: uncertified
        if gap > tol * max(1.0, abs(primal)) and epoch < max_epochs:
            continue
        state, shift = exact_state()  # the running state drifts: recompute, check
        primal, gap = gap_at(state, shift)
        if gap <= tol * max(1.0, abs(primal)):
            break
    return B, primal, gap, epoch
