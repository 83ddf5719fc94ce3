r"""Certificates by weak duality: lower bounds on the learning optimum from any adversaries.

Any adversaries ``q_i`` give the lower bound :func:`dual_bound`
``sum_i w_i H_L(q_i) - R^*(sum_i w_i Phi_i^T (e_{y_i} - q_i))`` (mixed with the labels to enter
a norm ball), so ``J(theta) - bound`` certifies ``theta`` (Fathony et al. 2018a, Theorem 2,
with the moment constraint relaxed as in Farnia and Tse 2016, Theorem 3).  The RKHS form of the
bound (given ``||g||_H^2``) serves the kernel solvers and the dual ascents.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..uncertainty import Exact, NormBall, SoftMoments

__all__ = ["dual_bound", "entropies"]


def dual_bound(
    game: Any,
    operator: Any,
    y: np.ndarray,
    weights: np.ndarray,
    uncertainty: Any,
    fmap: Any,
    Q: np.ndarray,
    moment: np.ndarray | None = None,
    entropy: np.ndarray | None = None,
) -> float:
    r"""A certified lower bound on ``min_theta J(theta)`` from adversaries ``Q`` (weak duality).

    .. math::  D(q) = \max_{0 \le r \le 1} \sum_i w_i H_L(q_{r,i})
               - R^*\Big(\sum_i w_i \Phi_i^\top (e_{y_i} - q_{r,i})\Big) \le J^*,
               \qquad q_r = (1 - r) e_y + r q,

    with ``H_L(q) = min_a (L q)_a``; the mixture (``r``) brings the residual into the domain of
    ``R^*`` for norm balls (:meth:`advgame.uncertainty.UncertaintySet.dual_bound`).  Any rows of
    distributions ``Q`` give a bound, independently of how they were found.  ``moment``, if
    given, is the residual ``sum_i w_i Phi_i^T (e_{y_i} - q_i)`` of these ``Q`` already
    computed (it is minus the loss part of the surrogate's gradient).  ``D`` is the Lagrangian
    dual of the learning problem (Fathony et al. 2018a, Theorem 2, with the moment constraint
    relaxed by the uncertainty set as in Farnia and Tse 2016, Theorem 3).

    Parameters
    ----------
    game : Game
        The per-sample game of the loss matrix ``L``.
    operator : bound feature operator
        ``fmap.bind(X)``: its ``adjoint`` maps ``(n, k)`` residuals to ``theta``'s coordinates.
    y : ndarray of shape (n,)
        Label indices.
    weights : ndarray of shape (n,)
        Normalised sample weights ``w``.
    uncertainty : UncertaintySet
        Provides ``R^*`` through its ``dual_bound``.
    fmap : FeatureMap
    Q : ndarray of shape (n, k)
        Any conditional distributions (rows in the simplex).
    moment : ndarray, optional
        Their residual, when already computed.
    entropy : ndarray of shape (n,), optional
        Their entropies ``H_L(q_i)``, when already computed (:func:`entropies`).

    Returns
    -------
    float
        ``D(q) <= J*`` (finite: ``r = 0``, the labels themselves, is always feasible).
    """
    L = game.loss.matrix
    if entropy is None:
        entropy = entropies(L, Q)
    if moment is None:
        G = Q * -weights[:, None]
        G[np.arange(y.size), y] += weights
        moment = operator.adjoint(G)
    base, (g, gain) = _dual_point(L, y, weights, moment, entropy)
    return uncertainty.dual_bound(g, base, gain, fmap)


def _dual_point(L, y, weights, moment, entropy):
    """``(base, (g, gain))`` of :meth:`advgame.uncertainty.UncertaintySet.dual_bound` for
    adversaries with residual ``moment`` and entropies ``entropy``: ``base = sum_i w_i
    H_L(e_{y_i})`` and ``gain = sum_i w_i H_L(q_i) - base``."""
    base = float(weights @ L.min(axis=0)[y])
    return base, (moment, float(weights @ entropy) - base)


def entropies(L: np.ndarray, Q: np.ndarray) -> np.ndarray:
    r"""The generalised entropies ``H_L(q_i) = min_a (L q_i)_a`` of the rows of ``Q``.

    .. math::  H_L(q) = \min_{a} (L q)_a,

    the predictor's best expected loss against the adversary ``q`` (Fathony et al. 2018a,
    Eq. 1; Farnia and Tse 2016, Eq. 11), the term of the dual bound :func:`dual_bound`.
    Computed as ``(L Q^T).min(axis=0)``: the minimum over a few actions runs along the long
    axis, three to four times faster than ``(Q L^T).min(axis=1)`` for ``k <= 10``.

    Parameters
    ----------
    L : ndarray of shape (l, k)
        The loss matrix, one row per action (validated by :class:`advgame.losses.LossMatrix`).
    Q : ndarray of shape (n, k)
        Distributions over the labels, one per row.

    Returns
    -------
    ndarray of shape (n,)
    """
    return (L @ Q.T).min(axis=0)


def _residual(Q, y, weights):
    """``G = diag(w) (E_y - Q)`` and its rows that are not zero."""
    G = Q * -weights[:, None]
    G[np.arange(y.size), y] += weights
    return G, np.flatnonzero(np.any(G != 0, axis=1))


def _residual_bound(L, y, weights, uncertainty, Q, norm2):
    """:func:`kernel_dual_bound` given ``||g||_H^2 = tr(G^T K G) = norm2``."""
    base = float(weights @ L.min(axis=0)[y])
    gain = float(weights @ entropies(L, Q)) - base
    return _rkhs_bound(uncertainty, base, gain, max(norm2, 0.0))


def _rkhs_bound(uncertainty, base, gain, norm2):
    """``max_{0 <= r <= 1} base + r gain - R^*(r g)`` given ``||g||_H^2 = norm2``."""
    if isinstance(uncertainty, SoftMoments):
        curvature = norm2 / (2.0 * uncertainty.lam)
        if curvature == 0:
            return base + max(gain, 0.0)
        r = min(1.0, max(gain, 0.0) / (2.0 * curvature))
        return base + r * gain - r * r * curvature
    norm = np.sqrt(norm2)
    r = 1.0 if norm <= uncertainty.radius else uncertainty.radius / norm
    return base + max(r * gain, 0.0)


def exact_matching(uncertainty: Any) -> bool:
    """Whether the moment set is ``{0}`` (``Exact``, or a ball of radius 0): ``R^*`` is then the
    indicator of ``{0}``, which no mixture of adversaries reaches in floating point, so the
    weak-duality bounds degenerate to the labels' own."""
    return isinstance(uncertainty, Exact) or (
        isinstance(uncertainty, NormBall) and uncertainty.radius == 0
    )
