r"""Certified linear training by dual coordinate ascent (:func:`fit_linear_dual`).

:func:`fit_linear_dual` (and :func:`advgame.solvers.fit_kernel_dual` for kernels) is dual
coordinate ascent over the ``q_i`` for the zero-one game with soft moments (the LIBLINEAR
Crammer-Singer scheme, compiled per sample, with shrinking), certified by the same bound from
``Q`` alone.  Measured (one BLAS thread, ``tol = 1e-4``): 309 epochs in 0.08 s on digits against
406 smoothing steps in 0.40 s, but 1,092 epochs (16 s) against 38 steps (0.13 s) on
``make_classification`` with 20,000 rows, whose noisy labels keep every row active; the
classifier therefore starts with it and hands over to :func:`advgame.solvers.fit_smoothed` when
the rows say so (its ``switch``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _kernels, closed_forms
from .._validation import as_float_array, as_labels, check_finite
from ..exceptions import NotApplicableError
from ..features import Multiclass
from ..uncertainty import SoftMoments
from ._progress import quiet
from .certificates import _residual, _residual_bound
from .first_order import TrainingResult, _warn_uncertified

__all__ = ["fit_linear_dual", "linear_dual_obstacle", "rescaled_dual"]


#: Seed of the row order of :func:`fit_kernel_dual` (a fresh permutation every epoch), fixed
#: so that fits are reproducible.
DUAL_SEED = 0
#: Shrinking in :func:`fit_kernel_dual`: a row whose adversary has stayed at its label for
#: this many epochs and is a best response leaves the active set.  Measured on optdigits
#: (3,934 rows, 10 labels) and digits (1,257): 19 and 21 epochs to the certified ``1e-4``
#: (20 and 21 without shrinking) in 0.65x and 0.75x the time; 2 epochs shrink rows that come
#: back (24 and 31 epochs), 5-8 are slower.
SHRINK_EPOCHS = 4
#: The rows whose potentials and Gram matrix :func:`fit_kernel_dual` keeps are cut down to
#: the active ones when these are fewer than this fraction of them (a gather of ``K``: twice
#: per fit on optdigits, from 3,934 to 1,879 rows after the fourth epoch, then to about
#: 1,200; 0.5 and 0.85 measured 5% slower).
SHRINK_KEPT = 0.75


#: :func:`fit_linear_dual` with ``switch``: it gives up when more than ``DENSE_MOVED`` of the
#: rows ``PROBE_ROWS / 2`` to ``PROBE_ROWS`` that it visits first move (problems with more rows
#: than ``PROBE_ROWS``), or more than ``DENSE_ACTIVE`` of the rows are still active after
#: ``DENSE_EPOCHS`` epochs (the measurements in its docstring: 0.39-0.50 against 0.84-0.88
#: moved, 0.33-0.57 against 0.68-1.00 active).
PROBE_ROWS, DENSE_MOVED = 1_000, 0.7
DENSE_EPOCHS, DENSE_ACTIVE = 2 * SHRINK_EPOCHS, 0.6


def linear_dual_obstacle(objective: Any) -> str | None:
    r"""Why :func:`fit_linear_dual` does not apply to ``objective``, or None.

    The ascent's per-row step is the quadratically smoothed zero-one or abstain game (Fathony
    et al. 2018a, Theorems 5 and 12), its dual needs the smooth ``R^*(g) = ||g||^2 / (2 lam)`` of soft
    moments (Farnia and Tse 2016, Theorem 3), and it keeps ``W = Theta^T`` of the features
    ``phi(x, j) = e_j ⊗ x``.

    Parameters
    ----------
    objective : SurrogateObjective
        The learning problem (its game, uncertainty set and feature map are read).

    Returns
    -------
    str or None
        A sentence naming the obstacle (neither the zero-one nor the abstain game with
        ``alpha <= 1/2``, not soft moments, not
        :class:`advgame.features.Multiclass` features), or None when the ascent applies.
    """
    if not isinstance(objective.fmap, Multiclass):
        return "the linear dual ascent keeps Theta^T for the multiclass features e_j ⊗ x"
    return _dual_obstacle(objective.game, objective.uncertainty, None)


def _dual_obstacle(game, uncertainty, A0):
    """Why :func:`fit_kernel_dual` does not apply, or None."""
    structure = game.structure
    if (
        structure is None
        or structure.kind not in ("zero_one", "abstain")
        or not structure.has_closed_form
    ):
        return (
            "the per-row ascent step is the smoothed zero-one or abstain game (zero-one losses, "
            "or abstain with alpha <= 1/2)"
        )
    if not isinstance(uncertainty, SoftMoments):
        return "the per-row ascent step needs soft moments (a smooth R*)"
    if A0 is not None and np.any(np.asarray(A0) != 0):
        return "it starts from A = 0, where the dual point (Q = the labels) is known"
    return None


def _ascent_game(game):
    """``(c, floor)`` of the per-row step (:func:`advgame._kernels._ascent_step`): the weight
    and ``floor = 1 - alpha`` for the abstain game, 0 for zero-one; and ``max(1, J(0))`` per
    unit of weight, ``J(0) = V(0) = c (1 - max(1/k, floor))``."""
    structure = game.structure
    floor = 1.0 - structure.alpha if structure.kind == "abstain" else 0.0
    return structure.weight, floor, structure.weight * (1.0 - max(1.0 / game.n_labels, floor))


def _dual_inputs(K, y, weights, k, name="K"):
    """``K`` (finite, C-contiguous float64; square unless ``name`` is ``'X'``), ``y`` (indices
    in ``0..k-1``) and ``weights`` (non-negative, summing to a positive total) checked: the
    compiled epochs read them without bounds checks."""
    K = np.ascontiguousarray(as_float_array(name, K))
    if name == "K" and (K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] == 0):
        raise ValueError(f"K must be a square, non-empty Gram matrix; got shape {K.shape}.")
    if K.ndim != 2 or 0 in K.shape:
        raise ValueError(f"X must be a non-empty 2-D design matrix; got shape {K.shape}.")
    if not np.isfinite(K.sum()):  # one pass with no boolean temporary (measured 1.2x faster)
        check_finite(name, K)  # names the entry (or passes: finite entries whose sum overflows)
    n = K.shape[0]
    y = as_labels(y, n, k)
    weights = as_float_array("weights", weights)
    if weights.shape != (n,):
        raise ValueError(
            f"weights must have shape ({n},), one per row of {name}; got {weights.shape}."
        )
    check_finite("weights", weights)
    if np.any(weights < 0) or not weights.sum() > 0:
        raise ValueError("weights must be non-negative with a positive sum.")
    return K, y, weights


def _dual_primal(FT, y, weights, game):
    """The loss part ``sum_i w_i (V(f_i) - f_{i,y_i})`` of ``J`` at the potentials ``FT``."""
    F = FT.T
    structure = game.structure
    if structure.kind == "abstain":
        value = closed_forms.abstain(F, structure.alpha, structure.weight)[0]
    else:
        value = _kernels.zero_one_value(FT, structure.weight)  # numpy: nothing to compile
    return float(weights @ (value - F[np.arange(y.size), y]))


def _dual_start(Q0, shape):
    """``Q0`` checked as a dual point of ``shape`` ``(n, k)``: one distribution per row."""
    Q0 = as_float_array("Q0", Q0)
    if Q0.shape != shape:
        raise ValueError(
            f"Q0 must have shape {shape}, one distribution over the labels per row; got {Q0.shape}."
        )
    check_finite("Q0", Q0)
    if np.any(Q0 < 0) or not np.allclose(Q0.sum(axis=1), 1.0, rtol=0.0, atol=1e-9):
        raise ValueError("Q0 must hold non-negative rows that sum to 1 (distributions).")
    return Q0


def _columns(FT, columns):
    """``FT[:, columns]`` C-contiguous (numpy's gather along the last axis is not), as the
    compiled epoch needs for loops it can vectorise."""
    return np.ascontiguousarray(FT[:, columns])


class _Ascent:
    """What the dual ascents (``kind``: ``'kernel'``, :func:`advgame.solvers.fit_kernel_dual`, or
    ``'linear'``, :func:`fit_linear_dual`) share: the checked inputs (``M`` is ``K`` or ``X``),
    the start ``Q = E_y`` (``A = 0``), the per-row step's constants, and the exact check
    (:meth:`__call__`): ``J`` at the potentials ``FT`` recomputed from ``Q`` alone (the best
    kept), the bound :func:`advgame.solvers.kernel_dual_bound` from the same residual
    (``norm2 = ||g||^2``), the certified gap, and the verdict."""

    def __init__(self, kind, game, M, y, weights, uncertainty, tol, max_iter, warn):
        obstacle = _dual_obstacle(game, uncertainty, None)
        if obstacle is not None:
            raise NotApplicableError(f"fit_{kind}_dual: {obstacle}.")
        name = "K" if kind == "kernel" else "X"
        self.M, self.y, self.weights = _dual_inputs(M, y, weights, game.n_labels, name=name)
        n, k = self.M.shape[0], game.n_labels
        self.weight, self.floor, start = _ascent_game(game)
        self.rows = np.flatnonzero(self.weights > 0)  # a row of weight 0 keeps q = e_y, A = 0
        self.Q = np.zeros((n, k))
        self.Q[np.arange(n), self.y] = 1.0
        self.coef = self.weights / uncertainty.lam
        self.still = np.zeros(n, dtype=np.int64)
        self.rng = np.random.default_rng(DUAL_SEED)
        # max(1, J(0)) >= max(1, J*) until a check: J(0) = sum_i w_i V(0)
        self.scale = max(1.0, start * float(self.weights.sum()))
        self.solver, self.game, self.uncertainty = f"{kind} dual ascent", game, uncertainty
        self.tol, self.max_iter, self.warn = tol, max_iter, warn
        self.best_value, self.best, self.lower, self.gap = np.inf, None, -np.inf, np.inf

    def curvature(self, squares):
        """The steps' ``s_i = w_i ||x_i||^2 / lam`` from the squared norms (``K_ii``); a row of
        norm 0 moves no potential: its step is the exact game's (``mu -> 0``)."""
        return np.maximum(self.coef * squares, 1e-12 * self.weight)

    def __call__(self, FT, norm2, Q, point, epoch, last, dense=""):
        """The message that ends the run ('' to go on), and ``max(1, |J|)`` in ``scale``;
        ``point`` (the parameters of ``FT``) is kept when its ``J`` is the smallest met."""
        y, weights, lam = self.y, self.weights, self.uncertainty.lam
        J = _dual_primal(FT, y, weights, self.game) + 0.5 * max(norm2, 0.0) / lam
        if J < self.best_value:
            self.best_value, self.best = J, point
        L = self.game.loss.matrix
        self.lower = max(self.lower, _residual_bound(L, y, weights, self.uncertainty, Q, norm2))
        gap, self.scale = max(self.best_value - self.lower, 0.0), max(1.0, abs(self.best_value))
        self.gap, tol = gap, self.tol
        if gap <= tol * self.scale:
            return "certified"
        if dense:
            return f"dense: {dense}; gap {gap:.2e} above tol={tol:g} * max(1, |J|)"
        if not last:
            return ""
        message = (
            f"max_iter={self.max_iter} reached: gap {gap:.2e} above tol={tol:g} * max(1, |J|) "
            f"after {epoch} epochs"
        )
        if self.warn:  # attributed to the caller of the fit
            _warn_uncertified(self.solver, message, self.best_value, stacklevel=4)
        return message

    def result(self, epoch, message):
        limit_reached = message.startswith("max_iter")
        return TrainingResult(
            self.best, self.best_value, epoch, message, self.gap, limit_reached, dual=self.Q
        )


def fit_linear_dual(
    game: Any,
    X: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray,
    uncertainty: SoftMoments,
    tol: float = 1e-4,
    max_iter: int = 1000,
    warn: bool = True,
    switch: bool = False,
    progress: Any = None,
    Q0: np.ndarray | None = None,
) -> TrainingResult:
    r"""Certified linear training of the zero-one or abstain game by dual coordinate ascent.

    The linear case of :func:`fit_kernel_dual` (``K = X X^T``) with the weights kept instead
    of the potentials, as LIBLINEAR keeps ``w`` for its Crammer-Singer solver: for the
    multiclass features ``phi(x, j) = e_j ⊗ x`` (:class:`advgame.features.Multiclass`, ``X``
    with its constant column) and soft moments the dual (Fathony et al. 2018a, Theorem 2;
    Farnia and Tse 2016, Theorem 3) is

    .. math::  \max_{q_i \in \Delta} \sum_i w_i H(q_i)
               - \frac{1}{2\lambda} \|X^\top G\|_F^2,
               \qquad G = W (E_y - Q), \quad \Theta = X^\top G / \lambda, \quad F = X \Theta.

    Each epoch visits the active rows in a fresh random order (seed :data:`DUAL_SEED`) in
    compiled code (:func:`advgame._kernels.linear_dual_epoch`): row ``i``'s potentials
    ``f_i = Theta^T x_i`` cost ``O(k p)``, its exact step is the one of the kernel solver
    (``s_i = w_i ||x_i||^2 / lam``), and a move updates ``Theta`` with ``x_i`` once per label
    whose ``q_ij`` moved.  The rows' gaps at their potentials after their step add up to the
    running gap; shrinking is that of :func:`fit_kernel_dual` (:data:`SHRINK_EPOCHS`).  The
    epochs between two checks run as one compiled loop (:func:`advgame._kernels.linear_dual_epochs`,
    the same row orders: 2-7% off digits' default fit of 155 epochs of 0.1 ms).  When
    the running gap is within ``tol * max(1, |J|)`` (or the budget is spent), the check
    recomputes ``Theta = X^T G / lam`` and ``F = X Theta`` from ``Q`` alone (two products),
    then ``J(Theta)`` and the bound :func:`kernel_dual_bound` (``||X^T G||^2 = tr(G^T K G)``),
    independently of the running weights, and stops when ``J - D <= tol * max(1, |J|)``;
    otherwise every row whose exact gap is open is active again, from the exact ``Theta``.

    Its epochs cost ``O(k p)`` per active row, and it needs many of them when many rows stay
    active (rows that keep a loss: noisy labels); the smoothing solver's steps cost the same
    whatever the rows do.  With ``switch`` it therefore gives up early (message ``'dense:
    ...'``, no warning) for :func:`fit_smoothed` to go on from its point: when more than
    :data:`DENSE_MOVED` of the rows it visits after the first ``PROBE_ROWS / 2`` (up to
    :data:`PROBE_ROWS`) move (at once, from the running ``Theta``: no certificate is in reach
    after a fraction of an epoch, so the exact check's two products over all the rows are
    skipped and ``gap`` stays ``inf``), or, after an exact check, when more than
    :data:`DENSE_ACTIVE` of the rows are still active after :data:`DENSE_EPOCHS` epochs.  Measured (one BLAS thread, ``lam = 1/n``, ``tol = 1e-4``,
    standardised 70% training parts; "moved": the share of the rows visited 500-1,000 of the
    first epoch that moved, "active": the share still active after 8 epochs), with the time of
    smoothing alone:

    ===================  ======  ==============  ================  ===============
    data                 rows    moved / active  dual ascent       smoothing
    ===================  ======  ==============  ================  ===============
    digits               1,257   0.43 / 0.45     309 ep., 0.08 s   406 st., 0.40 s
    optdigits            3,934   0.39 / 0.33     716 ep., 0.28 s   288 st., 0.58 s
    segment              1,617   0.42 / 0.57     406 ep., 0.13 s   170 st., 0.13 s
    satimage             4,504   0.50 / 0.68     776 ep., 0.91 s   210 st., 0.28 s
    make_classification  1,999   0.84 / 0.99     1,260 ep., 1.5 s  59 st., 0.05 s
    make_classification  19,999  0.88 / 1.00     1,092 ep., 16 s   38 st., 0.13 s
    ===================  ======  ==============  ================  ===============

    A warm start ``Q0`` (any dual point: the ``dual`` of a fit of the same rows at another
    ``lam``, as on a regularisation path) replaces the start ``Q = E_y`` (``Theta = 0``);
    ``Theta = X^T G / lam`` is computed from it, so every certificate holds whatever ``Q0`` is.

    Parameters
    ----------
    game : Game
        A zero-one game, or an abstain game with ``alpha <= 1/2``, with its closed form
        (weight ``c``).
    X : ndarray of shape (n, p)
        The design matrix (finite), with a column of ones for the intercepts.
    y : ndarray of shape (n,)
        Label indices in ``0..k-1``.
    weights : ndarray of shape (n,)
        Normalised sample weights (non-negative; a row of weight 0 never moves).
    uncertainty : SoftMoments
        ``R = lam/2 ||Theta||_F^2``.
    tol : float
        The certified relative gap to reach.
    max_iter : int
        Epochs at most (the last one is always checked).
    warn : bool
        Warn (``ConvergenceWarning``) when the certified gap stays above ``tol``.
    switch : bool
        Give up early where :func:`fit_smoothed` is the faster method (see above).
    progress : Phase, optional
        Told every epoch (:class:`advgame.solvers._progress.Phase`).
    Q0 : ndarray of shape (n, k), optional
        The dual point to start from: one distribution over the labels per row (the start
        ``E_y``, the labels, when None).

    Returns
    -------
    TrainingResult
        ``theta = Theta.ravel()`` (``Theta`` of shape ``(p, k)``, the layout of
        :class:`advgame.features.Multiclass`), the exact ``objective`` ``J(Theta)``,
        ``n_iter`` (epochs), ``message`` (``'certified'`` exactly when the checked gap is
        within ``tol``), the certified ``gap`` and the final dual point ``dual`` (``Q``).

    Raises
    ------
    NotApplicableError
        For a loss other than zero-one or abstain (``alpha <= 1/2``) or an uncertainty set
        other than soft moments.
    ValueError
        For an ``X`` that is not 2-D and finite, labels outside ``0..k-1``, weights of the
        wrong shape, negative or summing to zero, or a ``Q0`` that is not one distribution
        per row.
    """
    ascent = _Ascent("linear", game, X, y, weights, uncertainty, tol, max_iter, warn)
    X, y, weights, Q, rows = ascent.M, ascent.y, ascent.weights, ascent.Q, ascent.rows
    coef, weight, floor, still = ascent.coef, ascent.weight, ascent.floor, ascent.still
    (n, p), k, lam = X.shape, game.n_labels, uncertainty.lam
    curvature = ascent.curvature(np.einsum("ij,ij->i", X, X))
    every, row_gaps = np.arange(n), np.zeros(n)
    WT, active = np.zeros((k, p)), rows.copy()  # Theta^T of the start E_y
    if Q0 is not None:
        Q[...] = _dual_start(Q0, Q.shape)
        G, support = _residual(Q, y, weights)
        WT = (G[support].T @ X[support]) / lam
    ascent.best = np.zeros(p * k)
    message, epoch, dense, running = "", 0, "", np.inf
    phase = quiet(progress)
    while not message:
        if switch and epoch == 0 and active.size > PROBE_ROWS:
            epoch, order = 1, ascent.rng.permutation(active)
            # the first rows all move (W = 0 at first): count the moves of the next ones
            half = PROBE_ROWS // 2
            first, probe, order = order[:half], order[half:PROBE_ROWS], order[PROBE_ROWS:]
            for part in (first, probe):
                moved = _kernels.linear_dual_epoch(
                    WT, X, Q, part, weights, coef, curvature, weight, floor, still, row_gaps
                )
            if moved > DENSE_MOVED * probe.size:
                # no certificate is in reach after PROBE_ROWS of the rows: hand over from the
                # running Theta without the exact check (two products over all the rows)
                ascent.best = WT.T.ravel().copy()
                message = (
                    f"dense: {moved} of the rows {half}-{PROBE_ROWS} visited first moved "
                    "(not checked)"
                )
                phase.step(epoch, ascent.gap)
                break
            _kernels.linear_dual_epoch(  # the rest of the epoch
                WT, X, Q, order, weights, coef, curvature, weight, floor, still, row_gaps
            )
            left, running = _kernels.dual_shrink(
                row_gaps, Q, y, active, every, still, SHRINK_EPOCHS
            )
        else:
            # compiled epochs up to the next check: the running gap within tol, the dense
            # test's epoch, the budget (one at a time when someone watches the progress)
            stop = DENSE_EPOCHS if switch and epoch < DENSE_EPOCHS else max_iter
            stop = min(stop, max_iter, epoch + 1 if phase.watched else max_iter)
            epoch, left, running = _kernels.linear_dual_epochs(
                ascent.rng, WT, X, Q, y, active, weights, coef, curvature, weight, floor, still,
                row_gaps, every, epoch, stop, SHRINK_EPOCHS, tol * ascent.scale,
            )  # fmt: skip
        active = active[:left]
        if switch and epoch == DENSE_EPOCHS and left > DENSE_ACTIVE * rows.size:
            dense = f"{left} of {rows.size} rows still active after {epoch} epochs"
        last = epoch >= max_iter
        phase.step(epoch, ascent.gap, running_gap=running)
        if not dense and running > tol * ascent.scale and not last:
            continue
        G, support = _residual(Q, y, weights)
        WT = (G[support].T @ X[support]) / lam  # Theta^T, from Q alone
        FT = WT @ X.T
        norm2 = lam * lam * float(np.einsum("ij,ij->", WT, WT))  # ||X^T G||^2
        message = ascent(FT, norm2, Q, WT.T.ravel(), epoch, last, dense)
        if not message:  # unshrink every row whose exact gap is open
            open_rows = _kernels.dual_row_gaps(_columns(FT, rows), Q, rows, weights, weight, floor)
            active = np.union1d(active, rows[open_rows > 0])
    return ascent.result(epoch, message)


def rescaled_dual(Q: np.ndarray, y: np.ndarray, ratio: float) -> np.ndarray:
    r"""The dual point ``E_y + r (Q - E_y)``, ``r = min(1, ratio)``: for soft moments at
    ``lam = ratio * lam_Q`` its parameters ``Theta = X^T W (E_y - Q_r) / lam`` equal those of
    ``Q`` at ``lam_Q`` when ``ratio <= 1`` (the residual ``G`` scales by ``r``), the primal
    point the path is at.  A convex combination of distributions, so a dual point.

    Measured on digits (standardised, ``lam`` from ``3.6 lam`` to ``lam``, ``tol = 1e-4``):
    517 epochs cold, 547 from ``Q`` itself, 354 from this point at ``lam = 1e-4``; 77, 77 and
    67 at ``1e-2``; 523, - and 5 at ``1e-5``.
    """
    E = np.zeros_like(Q)
    E[np.arange(y.size), y] = 1.0
    return E + min(1.0, ratio) * (Q - E)
