r"""Polytopes of Blondel (2019), Section 4: projections (Euclidean and KL), linear maximisation,
vertices.

A projection-based (Fenchel-Young) loss needs, for a convex set :math:`\mathcal{C}`, the
regularised prediction

.. math::  P^\Psi_{\mathcal{C}}(\theta) = \operatorname*{argmax}_{\mu \in \mathcal{C}}
           \langle \theta, \mu \rangle - \Psi(\mu)

(the Bregman projection of Blondel 2019, Eq. 5) and the linear maximisation oracle (LMO / MAP)
:math:`\operatorname{argmax}_{\mu \in \mathcal{C}} \langle \theta, \mu \rangle`.  Two geometries:

``"euclidean"``
    :math:`\Psi(\mu) = \tfrac12 \|\mu\|^2`, i.e. :math:`\operatorname{argmin}_{\mu \in \mathcal{C}}
    \|\mu - \theta\|^2`.
``"kl"``
    :math:`\Psi(\mu) = \langle \mu, \log \mu \rangle` (Blondel 2019, §3, §C.2), i.e.
    :math:`\operatorname{argmax}_{\mu \in \mathcal{C}} \langle \theta, \mu \rangle -
    \sum_i \mu_i \log \mu_i = \operatorname{argmin}_{\mu \in \mathcal{C}} \mathrm{KL}(\mu,
    e^{\theta - 1})` with the generalised KL :math:`\sum \mu \log(\mu / b) - \mu + b`.  With this
    convention the KL projection onto the simplex is ``softmax(theta)`` and onto the unit cube
    ``min(1, exp(theta - 1))`` (Blondel 2019, §4).

Exact algorithms (Blondel 2019, §4, Proposition 3, §C.2): knapsack projections reduce to the unit
cube or to the capped sum ``{mu in [0,1]^k : sum(mu) = m}``, solved in closed form from ``theta``
sorted per point; order-simplex and permutahedron projections are sorting plus isotonic regression
by pool-adjacent-violators (Euclidean and KL / Bregman block values, one vectorised kernel).

Every method takes one point or a batch along a leading axis and returns the same shape: points are
vectors ``(k,)`` / ``(n, k)``, except :class:`Birkhoff` and :class:`RowStochastic` whose points are
matrices ``(k, k)`` / ``(n, k, k)``.  All computations are vectorised numpy over the batch, except
:meth:`Birkhoff.argmax` (one ``scipy.optimize.linear_sum_assignment`` per matrix: scipy has no batched
assignment solver) and the generic :func:`frank_wolfe_projection` (one point per call).
"""

from __future__ import annotations

import itertools
import math
import numbers
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import linear_sum_assignment, minimize_scalar
from scipy.special import logsumexp, softmax, xlogy

from . import polyhedra as _linear
from ._isotonic import (
    _capped_sum_projection,
    _clusters,
    _isotonic_decreasing_kl,
    _isotonic_decreasing_mean,
)
from ._validation import as_float_array, check_finite, check_real
from .exceptions import NotApplicableError, SizeLimitError, SolverError
from .polyhedra import LinearDescription

if TYPE_CHECKING:
    import networkx as nx

    from .graph import Regions

__all__ = [
    "Polytope",
    "Simplex",
    "UnitCube",
    "Knapsack",
    "OrderSimplex",
    "Permutahedron",
    "Birkhoff",
    "RowStochastic",
    "Unconstrained",
    "Marginal",
    "Polyhedron",
    "ConvexHull",
    "LinearDescription",
    "frank_wolfe_projection",
    "FenchelYoungLoss",
    "GEOMETRIES",
    "MAX_VERTICES",
    "CONTAINS_ATOL",
    "BIRKHOFF_TOL",
    "BIRKHOFF_MAX_ITER",
]

#: Geometries accepted by :meth:`Polytope.project`.
GEOMETRIES = ("euclidean", "kl")
#: Largest vertex set :meth:`Polytope.vertices` builds; above it :class:`SizeLimitError` is raised.
MAX_VERTICES = 100_000
#: Default absolute tolerance of :meth:`Polytope.contains`.
CONTAINS_ATOL = 1e-8
#: Default stopping tolerance (max marginal error) of the iterative Birkhoff projections.
BIRKHOFF_TOL = 1e-10
#: Default iteration cap of the iterative Birkhoff projections (Sinkhorn, Dykstra).
BIRKHOFF_MAX_ITER = 2_000
#: Sinkhorn sweeps before switching to Newton steps on the dual (KL Birkhoff projection).
SINKHORN_WARM_START = 20
#: Smallest Levenberg-Marquardt damping of the Birkhoff Newton steps (the Hessian's entries are
#: marginal sums, of order 1).
_NEWTON_DAMPING_FLOOR = 1e-12
#: Stopping tolerances are floored at this times ``k`` (times ``max|theta|`` for Euclidean Birkhoff).
_ROUNDING_FLOOR = 64 * np.finfo(float).eps


# ------------------------------------------------------------------------------------- helpers
def _as_points(theta, point_ndim, name="theta"):
    """float64 array of shape ``(n, *point)``, and whether one point was given."""
    array = as_float_array(name, theta)
    if array.ndim == point_ndim:
        single = True
        array = array[None]
    elif array.ndim == point_ndim + 1:
        single = False
    else:
        what = "(k,) or (n, k)" if point_ndim == 1 else "(k, k) or (n, k, k)"
        raise ValueError(f"{name} must have shape {what}; got an array with shape {array.shape}.")
    if array.shape[0] == 0 or any(s == 0 for s in array.shape[1:]):
        raise ValueError(f"{name} is empty (shape {array.shape}); expected at least one point.")
    if point_ndim == 2 and array.shape[1] != array.shape[2]:
        raise ValueError(f"{name} must hold square (k, k) matrices; got shape {array.shape}.")
    check_finite(name, array)
    return np.ascontiguousarray(array), single


def _check_iterations(max_iter, tol):
    """``max_iter`` an integer >= 1 and ``tol`` a finite number >= 0 (None: the default)."""
    if max_iter is not None and (
        isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) or max_iter < 1
    ):
        raise ValueError(f"max_iter must be an integer >= 1; got {max_iter!r}.")
    if tol is not None:
        check_real("tol", tol, low=0)


def _check_geometry(geometry):
    if geometry not in GEOMETRIES:
        raise ValueError(f"geometry must be one of {GEOMETRIES}; got {geometry!r}.")


def _check_size(count, what, limit=MAX_VERTICES):
    if count > limit:
        raise SizeLimitError(
            f"the {what} has {count} vertices, more than MAX_VERTICES={limit}; use argmax (the "
            "linear maximisation oracle) instead of enumerating vertices."
        )


def _positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer; got {value!r}.")
    return int(value)


def _first_argmax_onehot(T):
    """One-hot of the first maximiser along the last axis."""
    out = np.zeros_like(T)
    np.put_along_axis(out, np.argmax(T, axis=-1)[..., None], 1.0, axis=-1)
    return out


def _shift_by_max(T):
    """``(top, D)``: the row maxima (last axis, kept) and ``D = T - top <= 0``.

    ``D`` is computed once per entry, so close entries keep their exact difference even at
    ``|theta| ~ 1e300``; a difference that overflows is ``-inf`` (an entry that far below the
    maximum is never in the support of a simplex projection).
    """
    top = T.max(axis=-1, keepdims=True)
    with np.errstate(over="ignore"):
        return top, T - top


def _simplex_threshold_shifted(D):
    r"""Threshold :math:`\tau \in [-1, 0)` of the simplex projection of rows ``D`` with maximum 0.

    Sort-based (Held, Wolfe & Crowder 1974; Duchi, Shalev-Shwartz, Singer & Chandra 2008): with
    :math:`u` sorted decreasingly, :math:`\rho = \max\{j : u_j - (\sum_{i \le j} u_i - 1)/j > 0\}`
    and :math:`\tau = (\sum_{i \le \rho} u_i - 1)/\rho`.  Since :math:`\tau \ge \max_i u_i - 1
    = -1`, entries below ``-1`` are never in the support, and clipping them to ``-1`` leaves
    :math:`\tau` unchanged; the clipped rows are bounded, so the cumulative sums neither overflow
    nor lose the unit-scale terms to a huge one.
    """
    k = D.shape[-1]
    u = -np.sort(-np.maximum(D, -1.0), axis=-1)
    css = np.cumsum(u, axis=-1) - 1.0
    ind = np.arange(1, k + 1)
    cond = u - css / ind > 0
    rho = k - 1 - np.argmax(cond[..., ::-1], axis=-1)  # last True; cond[..., 0] is always True
    return np.take_along_axis(css, rho[..., None], axis=-1) / (rho[..., None] + 1)


def _simplex_euclidean(T):
    """Euclidean projection of every row (last axis) of ``T`` onto the simplex (sparsemax).

    Computed relative to the row maximum (``_shift_by_max``), so it is exact to a few ulps of 1 at
    every finite scale: ``[1e17, 1, 0.5]`` projects to ``[1, 0, 0]``.
    """
    _, D = _shift_by_max(T)
    return np.maximum(D - _simplex_threshold_shifted(D), 0.0)


def _simplex_threshold(T):
    r"""Threshold :math:`\tau` with :math:`\sum_i \max(\theta_i - \tau, 0) = 1`, rows of ``T``
    (the row maximum plus ``_simplex_threshold_shifted`` of the shifted row)."""
    top, D = _shift_by_max(T)
    return top + _simplex_threshold_shifted(D)


# ------------------------------------------------------------------------------------ base class
class Polytope:
    """A convex polytope with projections, a linear maximisation oracle and (small) vertices.

    Subclasses implement ``_project_euclidean``, ``_project_kl``, ``_argmax``, ``_contains`` and
    ``_vertices`` on a validated batch ``(n, *point)`` of float64 points.
    """

    #: Dimensions of one point (1: vectors, 2: square matrices).
    point_ndim = 1

    def _validate(self, theta, name="theta"):
        T, single = _as_points(theta, self.point_ndim, name)
        self._check_dim(T.shape[-1])
        return T, single

    def _check_dim(self, k):
        """Hook: raise ``ValueError`` if points of size ``k`` are not allowed."""

    def project(
        self,
        theta: ArrayLike,
        geometry: str = "euclidean",
        max_iter: int | None = None,
        tol: float | None = None,
    ) -> np.ndarray:
        r"""Regularised prediction :math:`\operatorname{argmax}_{\mu} \langle\theta,\mu\rangle -
        \Psi(\mu)` over the polytope: the Bregman projection of Blondel (2019), Eq. 5.

        Parameters
        ----------
        theta : array_like, one point or a batch along the leading axis
        geometry : {"euclidean", "kl"}
            ``"euclidean"``: :math:`\operatorname{argmin}_\mu \|\mu - \theta\|^2`; ``"kl"``:
            :math:`\operatorname{argmax}_\mu \langle\theta,\mu\rangle - \sum \mu\log\mu`, i.e. the
            KL projection of :math:`e^{\theta - 1}` (softmax on the simplex).
        max_iter, tol : int, float, optional
            Only used by iterative projections (Birkhoff); ignored by the exact ones.

        Returns
        -------
        mu : ndarray, same shape as ``theta``

        Raises
        ------
        ValueError
            ``theta`` not finite or of the wrong shape; or a result that float64 cannot
            represent (``Unconstrained`` KL above ``theta ~ 710.8``, Birkhoff scores whose
            differences overflow).
        SolverError
            An iterative (Birkhoff) projection reached ``max_iter`` with a marginal error above
            :data:`CONTAINS_ATOL` (never returned as if it were in the polytope).

        Notes
        -----
        The exact (non-Birkhoff) projections are computed relative to a per-point reference (the
        row maximum, the ``ceil(m)``-th largest coordinate, cluster heads), so they are right to a
        few ulps of the polytope's own scale for ``theta`` anywhere from ``5e-324`` to ``1e308``.
        The Birkhoff projections are doubly stochastic to ``tol`` at every scale (see
        :class:`Birkhoff`).
        """
        _check_geometry(geometry)
        _check_iterations(max_iter, tol)
        T, single = self._validate(theta)
        if geometry == "euclidean":
            out = self._project_euclidean(T, max_iter, tol)
        else:
            out = self._project_kl(T, max_iter, tol)
        return out[0] if single else out

    def argmax(self, theta: ArrayLike) -> np.ndarray:
        r"""Linear maximisation oracle :math:`\operatorname{argmax}_{\mu} \langle\theta,\mu\rangle`,
        a vertex (MAP inference, Blondel 2019, §3); ties resolve deterministically (documented per
        class).
        """
        T, single = self._validate(theta)
        out = self._argmax(T)
        return out[0] if single else out

    def contains(self, mu: ArrayLike, atol: float = CONTAINS_ATOL) -> bool | np.ndarray:
        """Whether each point satisfies the polytope's constraints up to ``atol`` (bool or array)."""
        M, single = self._validate(mu, "mu")
        out = self._contains(M, check_real("atol", atol, low=0))
        return bool(out[0]) if single else out

    def vertices(self, dim: int) -> np.ndarray:
        """All vertices for points of size ``dim`` (the last axis of ``theta``), one per row.

        Raises :class:`~advgame.exceptions.SizeLimitError` above :data:`MAX_VERTICES`.
        """
        dim = _positive_int("dim", dim)
        self._check_dim(dim)
        return self._vertices(dim)

    def constraints(self, dim: int | None = None) -> LinearDescription:
        r"""A linear description :math:`\{z : \exists w,\ A_{ub}[z; w] \le b_{ub},\
        A_{eq}[z; w] = b_{eq}\}` of the polytope (every bound a row; ``w`` the ``n_aux``
        auxiliary variables of an extended formulation), see :class:`LinearDescription`.

        Parameters
        ----------
        dim : int, optional
            The embedding dimension of a point: ``k`` for the vector polytopes (the order simplex:
            ``k - 1`` cumulative coordinates for ``k`` ordinal labels, as :meth:`vertices`),
            ``k * k`` for :class:`Birkhoff` and :class:`RowStochastic` (the row-major ``vec`` of
            the matrix).  Polytopes that know their size (:class:`Permutahedron`, user
            polytopes) need none; a ``dim`` given to them must agree.  :class:`Marginal` also
            takes ``k`` and ``n_nodes`` (:meth:`Marginal.constraints`).

        Raises
        ------
        NotApplicableError
            The set has no linear description (:class:`Unconstrained`).
        """
        return self._constraints(None if dim is None else _positive_int("dim", dim))

    def _constraints(self, dim):
        raise NotApplicableError(f"{self!r} has no linear description.")

    def _needs_dim(self, dim):
        """``dim`` checked against the polytope (ValueError when it is None)."""
        if dim is None:
            raise ValueError(
                f"{self!r}.constraints needs dim, the dimension of a point (it does not know it)."
            )
        self._check_dim(dim)
        return dim

    def _matrix_side(self, dim):
        """``k`` of a ``k x k`` matrix polytope from ``dim = k * k``."""
        if dim is None or math.isqrt(dim) ** 2 != dim:
            raise ValueError(
                f"{self!r}.constraints needs dim = k * k, the size of the row-major vec of a "
                f"k x k matrix; got {dim!r}."
            )
        k = math.isqrt(dim)
        self._check_dim(k)
        return k

    @staticmethod
    def from_constraints(
        A_ub: ArrayLike,
        b_ub: ArrayLike,
        A_eq: ArrayLike | None = None,
        b_eq: ArrayLike | None = None,
    ) -> Polyhedron:
        """A user's polytope ``{z : A_ub z <= b_ub, A_eq z = b_eq}`` (see :class:`Polyhedron`)."""
        return Polyhedron(A_ub, b_ub, A_eq, b_eq)

    @staticmethod
    def from_vertices(V: ArrayLike) -> ConvexHull:
        """A user's polytope ``conv(rows of V)`` (see :class:`ConvexHull`)."""
        return ConvexHull(V)

    def _project_kl(self, T, max_iter, tol):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}()"


# ------------------------------------------------------------------------------------- simplex
class Simplex(Polytope):
    r"""Probability simplex :math:`\Delta^k` (multiclass; Blondel 2019, §4).

    Euclidean projection: sparsemax by the sort-based threshold, ``O(k log k)``; KL projection:
    ``softmax(theta)``; ``argmax``: the one-hot of the first maximiser.
    """

    def _project_euclidean(self, T, max_iter, tol):
        return _simplex_euclidean(T)

    def _project_kl(self, T, max_iter, tol):
        return softmax(T, axis=-1)

    def _argmax(self, T):
        return _first_argmax_onehot(T)

    def _contains(self, M, atol):
        return np.all(M >= -atol, axis=1) & (np.abs(M.sum(axis=1) - 1.0) <= atol)

    def _vertices(self, dim):
        _check_size(dim, "simplex")
        return np.eye(dim)

    def _constraints(self, dim):
        return _linear.simplex(self._needs_dim(dim))


class UnitCube(Polytope):
    r"""Unit cube :math:`[0,1]^k` (multilabel; Blondel 2019, §4).

    Euclidean: ``clip(theta, 0, 1)``; KL: ``min(1, exp(theta - 1))``; ``argmax``: ``1[theta > 0]``
    (ties at 0 go to 0).
    """

    def _project_euclidean(self, T, max_iter, tol):
        return np.clip(T, 0.0, 1.0)

    def _project_kl(self, T, max_iter, tol):
        return np.exp(np.minimum(T - 1.0, 0.0))

    def _argmax(self, T):
        return (T > 0).astype(np.float64)

    def _contains(self, M, atol):
        return np.all((M >= -atol) & (M <= 1.0 + atol), axis=1)

    def _vertices(self, dim):
        _check_size(2**dim, "unit cube")
        return ((np.arange(2**dim)[:, None] >> np.arange(dim)) & 1).astype(np.float64)

    def _constraints(self, dim):
        return _linear.unit_cube(self._needs_dim(dim))


class Knapsack(Polytope):
    r"""Knapsack polytope :math:`\{\mu \in [0,1]^k : l \le \langle\mu, 1\rangle \le u\}`
    (multilabel with ``l..u`` labels; Blondel 2019, §4, Proposition 3, §C.2).

    Projection (Prop. 3): ``nu`` = the unit-cube projection; if ``l <= sum(nu) <= u`` it is
    optimal, else project onto ``{mu in [0,1]^k : sum(mu) = m}`` with ``m = u`` (sum too large) or
    ``m = l``, exactly, from ``theta`` sorted per point (``O(k log k)``; see
    ``_capped_sum_projection``).  Euclidean: ``clip(theta - tau, 0, 1)``, the sum is piecewise
    linear in ``tau`` with breakpoints ``theta_i`` and ``theta_i - 1``, and ``tau`` solves the
    linear piece containing ``m``; KL: ``min(1, exp(theta - 1 - tau))`` with the ``j`` largest
    coordinates at 1 and ``tau = LSE(theta_(j+1..k) - 1) - log(m - j)`` for the consistent ``j``.
    ``argmax`` (Blondel 2019, §4): with ``pi`` sorting ``theta`` decreasingly (stable, so ties go to
    the smaller index), coordinates ``pi_1..pi_l`` are 1 and ``pi_{l+1}..pi_u`` are 1 where
    ``theta > 0``.

    Parameters
    ----------
    low, high : int
        ``0 <= low <= high``; ``high <= k`` is checked when a point of size ``k`` is given.
    """

    def __init__(self, low: int, high: int) -> None:
        for name, value in (("low", low), ("high", high)):
            if (
                isinstance(value, bool)
                or not isinstance(value, numbers.Real)
                or not np.isfinite(value)
                or float(value) != int(float(value))
            ):
                raise ValueError(f"{name} must be a finite integer; got {value!r}.")
        self.low, self.high = int(low), int(high)
        if not 0 <= self.low <= self.high:
            raise ValueError(f"Knapsack needs 0 <= low <= high; got low={low}, high={high}.")

    def __repr__(self):
        return f"Knapsack(low={self.low}, high={self.high})"

    def _check_dim(self, k):
        if self.high > k:
            raise ValueError(
                f"Knapsack(low={self.low}, high={self.high}) needs high <= k, the number of "
                f"coordinates; got points with k={k}."
            )

    def _project(self, T, geometry):
        nu = np.clip(T, 0.0, 1.0) if geometry == "euclidean" else np.exp(np.minimum(T - 1.0, 0.0))
        s = nu.sum(axis=1)
        over, under = s > self.high, s < self.low
        fix = over | under
        if np.any(fix):
            m = np.where(over, self.high, self.low)[fix].astype(np.float64)
            nu[fix] = _capped_sum_projection(T[fix], m, geometry)
        return nu

    def _project_euclidean(self, T, max_iter, tol):
        return self._project(T, "euclidean")

    def _project_kl(self, T, max_iter, tol):
        return self._project(T, "kl")

    def _argmax(self, T):
        order = np.argsort(-T, axis=1, kind="stable")
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.arange(T.shape[1])[None, :], axis=1)
        return ((rank < self.low) | ((rank < self.high) & (T > 0))).astype(np.float64)

    def _contains(self, M, atol):
        s = M.sum(axis=1)
        box = np.all((M >= -atol) & (M <= 1.0 + atol), axis=1)
        return box & (s >= self.low - atol) & (s <= self.high + atol)

    def _vertices(self, dim):
        count = sum(math.comb(dim, j) for j in range(self.low, self.high + 1))
        _check_size(count, "knapsack polytope")
        cube = UnitCube()._vertices(dim)
        sizes = cube.sum(axis=1)
        return cube[(sizes >= self.low) & (sizes <= self.high)]

    def _constraints(self, dim):
        return _linear.knapsack(self._needs_dim(dim), self.low, self.high)


class OrderSimplex(Polytope):
    r"""Order simplex :math:`\{\mu \in \mathbb{R}^{d} : 1 \ge \mu_1 \ge \dots \ge \mu_d \ge 0\}`
    (ordinal regression with ``d + 1`` classes; Blondel 2019, §4, Proposition 4, §C.3).

    Its vertices are :math:`\varphi(y) = \sum_{i < y} e_i`, ``y = 1..d+1``: ``0, e_1, e_1 + e_2,
    ..., 1``.  Points have size ``d`` = number of classes - 1.

    Euclidean projection: the non-increasing isotonic regression of ``theta`` clipped to ``[0, 1]``
    (isotonic regression with bounds, Blondel 2019, §4 / Best & Chakravarti 1990; clipping the
    unbounded solution is optimal for separable convex objectives).  KL projection: the block
    solution of :math:`\sum_{i\in B} \mu\log\mu - \theta_i\mu` is :math:`\exp(\bar\theta_B - 1)`,
    a monotone map of the mean, so :math:`\mu = \min(1, \exp(x - 1))` with ``x`` the same isotonic
    regression.  The isotonic regression is pool-adjacent-violators, ``O(k)`` per point,
    vectorised over the batch (``_pav_decreasing``).  ``argmax``: the cumulative scores
    :math:`\langle\theta, \varphi(y)\rangle = \sum_{i<y}\theta_i`, first maximiser (ties go to the
    smaller class).
    """

    def _project_euclidean(self, T, max_iter, tol):
        return np.clip(_isotonic_decreasing_mean(T), 0.0, 1.0)

    def _project_kl(self, T, max_iter, tol):
        return np.exp(np.minimum(_isotonic_decreasing_mean(T) - 1.0, 0.0))

    def _argmax(self, T):
        n, d = T.shape
        scores = np.concatenate([np.zeros((n, 1)), np.cumsum(T, axis=1)], axis=1)
        y = np.argmax(scores, axis=1)  # number of leading ones
        return (np.arange(d)[None, :] < y[:, None]).astype(np.float64)

    def _contains(self, M, atol):
        order = np.all(M[:, :-1] >= M[:, 1:] - atol, axis=1)
        return order & (M[:, 0] <= 1.0 + atol) & (M[:, -1] >= -atol)

    def _vertices(self, dim):
        _check_size(dim + 1, "order simplex")
        return np.tril(np.ones((dim + 1, dim)), k=-1)

    def _constraints(self, dim):
        return _linear.order_simplex(self._needs_dim(dim))


class Permutahedron(Polytope):
    r"""Permutahedron induced by ``w``: the convex hull of the permutations of ``w`` (ranking;
    Blondel 2019, §4; ``w = (k, ..., 1)`` gives the classical permutahedron).

    Projections (Lim & Wright 2016; Blondel, Teboul, Berthet & Djolonga 2020, Prop. 3): with ``s``
    = ``theta`` sorted decreasingly and ``w`` sorted decreasingly,

    * Euclidean: :math:`\mu = \theta - v` (un-permuted) with :math:`v = \operatorname{argmin}_{v_1
      \ge \dots \ge v_k} \|v - (s - w)\|^2`, an isotonic regression;
    * KL (requires ``w > 0``): :math:`\mu = \exp(\theta - v)` with :math:`v =
      \operatorname{argmin}_{v_1\ge\dots\ge v_k} \sum_i e^{s_i - v_i} + w_i v_i`, block value
      :math:`\mathrm{LSE}(s_B) - \log\sum_B w_i`.  The ``-sum(mu)`` term of the generalised KL is
      constant on the permutahedron, so this is the convention of this module.

    The isotonic problems are solved exactly by pool-adjacent-violators, ``O(k)`` pools per point
    after the ``O(k log k)`` sort, vectorised over the batch (one kernel for both block values, see
    ``_pav_decreasing``).  Sorted ``theta`` is split where consecutive entries differ by more than
    ``max(w) - min(w)`` (KL: ``log(max(w) / min(w))``), where the isotonic problem separates, and
    each part is solved relative to its largest entry (``_clusters``): exact at every finite scale
    (``theta ~ 1e17``, where ``theta - w`` would round ``w`` away, included).  ``argmax``: the largest ``w`` goes to the largest ``theta`` (stable sort:
    among tied ``theta`` the smaller index gets the larger weight).
    """

    def __init__(self, w: ArrayLike) -> None:
        w = as_float_array("w", w)
        if w.ndim != 1 or w.size == 0:
            raise ValueError(f"w must be a non-empty 1-D array of weights; got shape {w.shape}.")
        check_finite("w", w)
        self.w = w
        self._w_desc = -np.sort(-w)

    def __repr__(self):
        return f"Permutahedron(w={self.w.tolist()})"

    def _check_dim(self, k):
        if k != self.w.size:
            raise ValueError(
                f"points must have {self.w.size} coordinates (len(w)) for this permutahedron; "
                f"got {k}."
            )

    def _sorted(self, T):
        order = np.argsort(-T, axis=1, kind="stable")
        return order, np.take_along_axis(T, order, axis=1)

    def _project_euclidean(self, T, max_iter, tol):
        order, s = self._sorted(T)
        barrier, rel = _clusters(s, self._w_desc[0] - self._w_desc[-1])
        v = _isotonic_decreasing_mean(rel - self._w_desc, barrier)
        out = np.empty_like(T)
        np.put_along_axis(out, order, rel - v, axis=1)
        return out

    def _project_kl(self, T, max_iter, tol):
        if np.any(self.w <= 0):
            raise NotApplicableError(
                "the KL projection onto the permutahedron needs strictly positive weights w "
                f"(it uses log w); got min(w) = {self.w.min()}."
            )
        order, s = self._sorted(T)
        log_w = np.log(self._w_desc)
        barrier, rel = _clusters(s, log_w[0] - log_w[-1])
        v = _isotonic_decreasing_kl(rel, np.broadcast_to(self._w_desc, s.shape), barrier)
        out = np.empty_like(T)
        np.put_along_axis(out, order, np.exp(rel - v), axis=1)
        return out

    def _argmax(self, T):
        order = np.argsort(-T, axis=1, kind="stable")
        out = np.empty_like(T)
        np.put_along_axis(out, order, np.broadcast_to(self._w_desc, T.shape), axis=1)
        return out

    def _contains(self, M, atol):
        top = np.cumsum(-np.sort(-M, axis=1), axis=1)
        bound = np.cumsum(self._w_desc)
        scale = atol * max(1.0, np.abs(self.w).max())
        return np.all(top <= bound + scale, axis=1) & (np.abs(top[:, -1] - bound[-1]) <= scale)

    def _vertices(self, dim):
        _check_size(math.factorial(dim), "permutahedron")
        perms = np.array(list(itertools.permutations(range(dim))))
        return np.unique(self.w[perms], axis=0)

    def _constraints(self, dim):
        """Through the Birkhoff polytope: ``z = B w``, ``n_aux = k^2`` (see
        :func:`advgame.polyhedra.permutahedron`), not the ``2^k - 2`` facets."""
        if dim is not None:
            self._check_dim(dim)
        return _linear.permutahedron(self.w)


# ------------------------------------------------------------------------------------ matrices
#: Matrices whose scores spread (KL: max - min; Euclidean: max|.| after double centring) beyond
#: this are first reduced by the assignment problem's dual potentials (``_assignment_reduction``).
_BIRKHOFF_REDUCE_SPREAD = 64.0
#: KL: reduced scores are clipped below at ``-_BIRKHOFF_KL_CLIP`` (entries there have mass of
#: order ``exp(-_BIRKHOFF_KL_CLIP / 2)``); widened while a clipped entry keeps more mass than
#: ``_BIRKHOFF_CLIPPED_MASS``.
_BIRKHOFF_KL_CLIP = 1000.0
_BIRKHOFF_CLIPPED_MASS = 1e-30
#: Euclidean: reduced scores are clipped below at ``-_BIRKHOFF_EUCLIDEAN_CLIP * k``, widened while a
#: clipped entry is in the support.
_BIRKHOFF_EUCLIDEAN_CLIP = 8.0


def _double_centre(T):
    """``T - row means - column means + mean`` of each matrix (a copy)."""
    return (
        T
        - T.mean(axis=2, keepdims=True)
        - T.mean(axis=1, keepdims=True)
        + T.mean(axis=(1, 2), keepdims=True)
    )


def _birkhoff_affine(X):
    r"""Projection onto the affine set :math:`\{P : P1 = 1, P^\top 1 = 1\}`:
    :math:`X + r 1^\top/k + 1 c^\top/k - (\sum r)/k^2\, 11^\top` with ``r``, ``c`` the row/column
    deficits."""
    k = X.shape[-1]
    r = 1.0 - X.sum(axis=2)
    c = 1.0 - X.sum(axis=1)
    t = r.sum(axis=1)
    return X + r[:, :, None] / k + c[:, None, :] / k - (t / k**2)[:, None, None]


def _marginal_error(P):
    return np.maximum(
        np.abs(P.sum(axis=2) - 1.0).max(axis=1), np.abs(P.sum(axis=1) - 1.0).max(axis=1)
    )


def _birkhoff_primal(Z, geometry):
    """Primal matrix for dual potentials ``Z = theta + f 1^T + 1 g^T``."""
    return np.exp(Z) if geometry == "kl" else np.maximum(Z, 0.0)


def _birkhoff_dual(T, f, g, geometry):
    r"""Concave dual ``sum f + sum g - sum h(theta + f 1^T + 1 g^T)``, ``h = exp`` (KL) or
    ``h = max(., 0)^2 / 2`` (Euclidean), per matrix; its gradient is ``(1 - P1, 1 - P^T 1)``."""
    Z = T + f[:, :, None] + g[:, None, :]
    h = np.exp(Z) if geometry == "kl" else 0.5 * np.maximum(Z, 0.0) ** 2
    return f.sum(axis=1) + g.sum(axis=1) - h.sum(axis=(1, 2))


def _birkhoff_sweep(T, f, g, geometry):
    """Exact maximisation of the dual over ``f`` then ``g``: Sinkhorn (KL) or its Euclidean analogue
    (each row / column shifted so that its simplex projection sums to one)."""
    if geometry == "kl":
        f = -logsumexp(T + g[:, None, :], axis=2)
        g = -logsumexp(T + f[:, :, None], axis=1)
    else:
        f = -_simplex_threshold(T + g[:, None, :])[..., 0]
        g = -_simplex_threshold(np.swapaxes(T + f[:, :, None], 1, 2))[..., 0]
    return f, g


def _birkhoff_gradient(T, f, g, geometry):
    """Dual gradient ``(1 - P1, 1 - P^T 1)`` (the last column's entry dropped: ``g_k`` is fixed)
    and the primal matrix ``P``."""
    P = _birkhoff_primal(T + f[:, :, None] + g[:, None, :], geometry)
    return np.concatenate([1.0 - P.sum(axis=2), 1.0 - P.sum(axis=1)[:, :-1]], axis=1), P


def _birkhoff_newton_step(T, f, g, geometry):
    r"""One regularised (semismooth for Euclidean) Newton step on the dual, ``g_k`` fixed.

    Negative (generalised) Hessian ``H = [[diag(W1), W], [W^T, diag(W^T 1)]]`` with ``W = P``
    (KL) or ``W = 1[P > 0]`` (Euclidean).  For Euclidean ``H`` is singular whenever the support of
    ``P`` splits into blocks, so the step solves ``(H + mu I) d = grad`` with
    ``mu = |grad| / max(1, max|theta|)`` (Levenberg-Marquardt: a gradient step along the
    singular directions, the Newton step as the gradient vanishes, hence quadratic convergence
    near the solution).  A step is accepted when
    the dual rises (Armijo) or, once dual values no longer resolve the progress (rounding), when
    it does not fall and the gradient shrinks; otherwise it is halved.  Points whose search fails
    keep their potentials (the caller's sweep follows).
    """
    n, k, _ = T.shape
    grad, P = _birkhoff_gradient(T, f, g, geometry)
    W = P if geometry == "kl" else (P > 0).astype(np.float64)
    H = np.zeros((n, 2 * k - 1, 2 * k - 1))
    idx = np.arange(k)
    H[:, idx, idx] = W.sum(axis=2)
    H[:, k + idx[:-1], k + idx[:-1]] = W.sum(axis=1)[:, :-1]
    H[:, :k, k:] = W[:, :, :-1]
    H[:, k:, :k] = np.swapaxes(W[:, :, :-1], 1, 2)
    norm = np.linalg.norm(grad, axis=1)
    diag = np.arange(2 * k - 1)
    # potentials scale like theta, so the damping does too (a unit-less mu would cap the steps)
    scale = np.maximum(1.0, np.abs(T).max(axis=(1, 2)))
    # floored so that H stays invertible when P is a permutation matrix to machine precision
    # (tiny regularisation): there H's diagonal is 1 and norm / scale can round away
    H[:, diag, diag] += np.maximum(norm / scale, _NEWTON_DAMPING_FLOOR)[:, None]
    d = np.linalg.solve(H, grad[:, :, None])[:, :, 0]
    df = d[:, :k]
    dg = np.concatenate([d[:, k:], np.zeros((n, 1))], axis=1)
    base = _birkhoff_dual(T, f, g, geometry)
    slack = 8 * np.finfo(float).eps * (1.0 + np.abs(base))
    slope = np.sum(grad * d, axis=1)
    step = np.ones(n)
    for _ in range(40):
        f_try, g_try = f + step[:, None] * df, g + step[:, None] * dg
        with np.errstate(over="ignore", invalid="ignore"):  # an overflowing trial is rejected
            trial = _birkhoff_dual(T, f_try, g_try, geometry)
            trial_grad = _birkhoff_gradient(T, f_try, g_try, geometry)[0]
            shrinks = np.linalg.norm(trial_grad, axis=1) < norm
        ok = (trial >= base + 1e-4 * step * slope) | ((trial >= base - slack) & shrinks)
        if np.all(ok):
            break
        step = np.where(ok, step, step / 2)
    step = np.where(ok, step, 0.0)
    return f + step[:, None] * df, g + step[:, None] * dg


def _birkhoff_project(T, geometry, max_iter, tol, start=None):
    """Dual sweeps (Sinkhorn or Euclidean analogue) as a warm start, then Newton steps on the dual,
    each followed by one sweep; a point leaves the loop once its marginal error is at most
    ``tol``.  ``start``: dual potentials ``(f, g)`` to begin from (Newton steps at once).
    Returns the projections and the final potentials."""
    n, k, _ = T.shape
    f, g = (
        (np.zeros((n, k)), np.zeros((n, k)))
        if start is None
        else (start[0].copy(), start[1].copy())
    )
    sweeps_first = SINKHORN_WARM_START if start is None else 0
    err = np.full(n, np.inf)
    active = np.arange(n)
    for it in range(max_iter):
        Ta, fa, ga = T[active], f[active], g[active]
        if it >= sweeps_first:
            fa, ga = _birkhoff_newton_step(Ta, fa, ga, geometry)
        fa, ga = _birkhoff_sweep(Ta, fa, ga, geometry)
        f[active], g[active] = fa, ga
        err[active] = _marginal_error(
            _birkhoff_primal(Ta + fa[:, :, None] + ga[:, None, :], geometry)
        )
        active = active[err[active] > tol]
        if active.size == 0:
            break
    else:
        name = "KL" if geometry == "kl" else "Euclidean"
        worst = float(err.max())
        head = (
            f"the {name} projection onto the Birkhoff polytope did not reach tol={tol:g} in "
            f"max_iter={max_iter} iterations for {active.size} of {n} points; max marginal error "
            f"{worst:.3e}"
        )
        if not worst <= CONTAINS_ATOL:
            raise SolverError(
                f"{head}, so the result is not doubly stochastic (above CONTAINS_ATOL="
                f"{CONTAINS_ATOL:g}) and is not returned. Increase max_iter (or tol)."
            )
        from .exceptions import ConvergenceWarning  # scikit-learn's subclass, loaded on use

        warnings.warn(
            f"{head} (within CONTAINS_ATOL={CONTAINS_ATOL:g}: the result is doubly stochastic "
            "to that tolerance).",
            ConvergenceWarning,
            stacklevel=4,
        )
    return _birkhoff_primal(T + f[:, :, None] + g[:, None, :], geometry), (f, g)


def _assignment_reduction(T, name="theta"):
    r"""Reduced scores ``C = theta - a 1^T - 1 b^T <= 0`` (up to rounding), zero on a maximum
    assignment ``sigma``, for each matrix of ``T``.

    Adding ``a 1^T + 1 b^T`` to ``theta`` leaves both Birkhoff projections unchanged (the term is
    constant on the polytope), and ``(a, b)`` are dual potentials of the assignment problem
    :math:`\max_\sigma \sum_i \theta_{i\sigma(i)}`: ``sigma`` from
    ``scipy.optimize.linear_sum_assignment``, then each row is shifted by its assigned entry
    (exact zeros on ``sigma``) and the column potentials are the longest paths of Bellman-Ford on
    the reduced costs (at most ``k`` rounds; the assignment being optimal, there is no positive
    cycle).  Entries of ``C`` that are far below 0 cannot be in the support of the projection,
    which lets the caller clip them: the iterations then work on bounded numbers whatever the
    scale of ``theta``.  Each entry of ``C`` costs two roundings of the size of ``theta``'s
    entries, the backward error of any float method at that scale.
    """
    n, k, _ = T.shape
    sigma = np.empty((n, k), dtype=np.intp)
    for i, t in enumerate(T):  # scipy has no batched assignment solver
        sigma[i] = linear_sum_assignment(t, maximize=True)[1]
    with np.errstate(over="ignore", invalid="ignore"):
        R = T - np.take_along_axis(T, sigma[:, :, None], axis=2)
        w = np.zeros((n, k))
        for _ in range(k):
            reach = (R + np.take_along_axis(w, sigma, axis=1)[:, :, None]).max(axis=1)
            new = np.maximum(w, reach)
            if np.array_equal(new, w):
                break
            w = new
        C = (R + np.take_along_axis(w, sigma, axis=1)[:, :, None]) - w[:, None, :]
    if np.any(np.isnan(C) | (C == np.inf)):
        raise ValueError(
            f"{name}'s entries are too far apart for float64: differences between them overflow "
            f"(max|{name}| = {np.abs(T).max():.3e}); the Birkhoff projection needs "
            f"max({name}) - min({name}) below {np.finfo(float).max:.3e}. Rescale {name}."
        )
    return np.minimum(C, 0.0)


class Birkhoff(Polytope):
    r"""Birkhoff polytope of doubly stochastic ``k x k`` matrices (ranking; Blondel 2019, §4).

    Both projections maximise the concave dual :math:`\sum f + \sum g - \sum_{ij}
    h(\theta_{ij} + f_i + g_j)` whose maximiser gives :math:`P = h'(\theta + f1^\top + 1g^\top)`:

    * KL: :math:`h = \exp` (the maximiser of :math:`\langle\theta,P\rangle - \sum P\log P`
      is :math:`\exp(\theta + f1^\top + 1g^\top)`, the ``-1`` absorbed in ``f``); the exact
      row/column sweeps are log-domain Sinkhorn (Blondel 2019, §4, refs [47, 18]).
    * Euclidean: :math:`h = \max(\cdot, 0)^2/2`, :math:`P = \max(\theta + f1^\top + 1g^\top, 0)`
      (the dual approach of Blondel 2019, ref. [13]); the exact sweeps shift each row/column by its
      simplex-projection threshold.

    After :data:`SINKHORN_WARM_START` sweeps, each iteration adds a damped Newton step on the dual
    (semismooth for Euclidean, Armijo line search; the ``(1, -1)`` null direction removed by fixing
    ``g_k``), which turns Sinkhorn's slow convergence for spread-out ``theta`` into a few steps.
    Iteration stops when the maximal row/column marginal error is at most ``tol`` (floored at
    ``64 k eps``, times ``max|theta|`` after double centring for Euclidean: the rounding level).
    ``theta`` is first shifted (KL) or double-centred (Euclidean); both leave the projection
    unchanged since :math:`\langle a1^\top + 1b^\top, P\rangle` is constant on the polytope.

    Scale: a matrix whose scores spread by more than 64 (KL: ``max - min``; Euclidean: ``max|.|``
    after double centring) is first reduced by the dual potentials of its assignment problem
    (another ``a1^T + 1b^T``): the reduced scores are ``<= 0`` with zeros on a maximum assignment,
    and are clipped below (KL at ``-1000``, Euclidean at ``-8k``; widened until no clipped entry
    matters: KL mass at most ``1e-30``, Euclidean outside the support).  The iterations then work
    on bounded numbers, so scores of ``1e300`` give a doubly stochastic result (the maximum
    assignment's permutation matrix when it wins by a margin); each reduced score carries the
    rounding of ``theta``'s own entries, the backward error of any float method at that scale.
    Scores whose differences overflow float64 (``~1.8e308``) raise ``ValueError``.

    If ``max_iter`` is reached with a marginal error above :data:`CONTAINS_ATOL`,
    :class:`~advgame.exceptions.SolverError` is raised (the result would not be doubly
    stochastic); between ``tol`` and :data:`CONTAINS_ATOL` the result is returned with a
    :class:`ConvergenceWarning` stating the marginal error.
    ``argmax``: the assignment problem by ``scipy.optimize.linear_sum_assignment`` (Hungarian /
    Jonker-Volgenant), one call per matrix since scipy has no batched solver.

    Parameters
    ----------
    warm_start : bool, default=False
        Start each projection from the dual potentials of the previous call when the batch has
        the same shape and geometry (for optimisers that project slowly changing scores many
        times, e.g. :class:`advgame.LabelRanker`'s L-BFGS).  The instance then holds state: do
        not share a warm-starting instance between threads.
    """

    point_ndim = 2

    def __init__(self, warm_start: bool = False) -> None:
        self.warm_start = bool(warm_start)
        self._duals = None

    def __repr__(self):
        return "Birkhoff(warm_start=True)" if self.warm_start else "Birkhoff()"

    def _iterate(self, T, geometry, max_iter, tol):
        """Run the dual method, from the last call's potentials when warm starting on a batch of
        the same shape and geometry (consecutive optimiser iterates barely move them)."""
        start = None
        if self.warm_start and self._duals is not None and self._duals[0] == (geometry, T.shape):
            start = self._duals[1]
        P, duals = _birkhoff_project(T, geometry, max_iter, tol, start)
        if self.warm_start:
            self._duals = ((geometry, T.shape), duals)
        return P

    def _project_kl(self, T, max_iter, tol):
        max_iter = BIRKHOFF_MAX_ITER if max_iter is None else int(max_iter)
        k = T.shape[-1]
        tol = max(BIRKHOFF_TOL if tol is None else float(tol), _ROUNDING_FLOOR * k)
        with np.errstate(over="ignore"):
            spread = T.max(axis=(1, 2)) - T.min(axis=(1, 2))
        # a constant shift leaves the maximiser unchanged (an overflow gives -inf: a wide matrix)
        with np.errstate(over="ignore"):
            work = T - T.max(axis=(1, 2), keepdims=True)
        wide = spread > _BIRKHOFF_REDUCE_SPREAD
        if not np.any(wide):
            return self._iterate(work, "kl", max_iter, tol)
        C = _assignment_reduction(T[wide])
        bound = _BIRKHOFF_KL_CLIP
        while True:
            work[wide] = np.maximum(C, -bound)
            P = self._iterate(work, "kl", max_iter, tol)
            # entries clipped at -bound stand for smaller scores: harmless while their mass is
            # negligible (the true projection has them even smaller)
            clipped = np.where(C < -bound, P[wide], 0.0)
            if clipped.max() <= _BIRKHOFF_CLIPPED_MASS or bound >= spread[wide].max():
                return P
            bound *= 8.0

    def _project_euclidean(self, T, max_iter, tol):
        max_iter = BIRKHOFF_MAX_ITER if max_iter is None else int(max_iter)
        k = T.shape[-1]
        # adding a 1^T + 1 b^T to theta leaves the projection unchanged: double-centre it
        with np.errstate(over="ignore", invalid="ignore"):
            work = _double_centre(T)
            spread = np.abs(work).max(axis=(1, 2))
        spread[~np.isfinite(spread)] = np.inf  # the sums overflowed: reduce instead
        wide = spread > _BIRKHOFF_REDUCE_SPREAD
        C = _assignment_reduction(T[wide]) if np.any(wide) else None
        bound = float(_BIRKHOFF_EUCLIDEAN_CLIP * k)
        while True:
            if C is not None:
                work[wide] = _double_centre(np.maximum(C, -bound))
            scale = max(1.0, float(np.abs(work).max()))
            tol_k = max(BIRKHOFF_TOL if tol is None else float(tol), _ROUNDING_FLOOR * k * scale)
            P = self._iterate(work, "euclidean", max_iter, tol_k)
            # an entry clipped at -bound that stays at 0 satisfies the optimality conditions for
            # its true (smaller) score too, so the projection is exact; else widen the clip
            if C is None or not np.any(np.where(C < -bound, P[wide], 0.0) > 0):
                return P
            if bound >= spread[wide].max():
                return P
            bound *= 8.0

    def _argmax(self, T):
        out = np.zeros_like(T)
        for i, t in enumerate(T):  # scipy has no batched assignment solver
            rows, cols = linear_sum_assignment(t, maximize=True)
            out[i, rows, cols] = 1.0
        return out

    def _contains(self, M, atol):
        return np.all(M >= -atol, axis=(1, 2)) & (_marginal_error(M) <= atol)

    def _vertices(self, dim):
        _check_size(math.factorial(dim), "Birkhoff polytope")
        perms = np.array(list(itertools.permutations(range(dim))))
        out = np.zeros((len(perms), dim, dim))
        out[np.arange(len(perms))[:, None], np.arange(dim)[None, :], perms] = 1.0
        return out

    def _constraints(self, dim):
        return _linear.birkhoff(self._matrix_side(dim))


class RowStochastic(Simplex):
    r"""Row-stochastic ``k x k`` matrices :math:`\Delta^k \times \dots \times \Delta^k`, a superset
    of the Birkhoff polytope with cheaper projections (Blondel 2019, §4).

    Each row is projected onto the simplex independently (sparsemax / softmax); ``argmax`` is the
    one-hot of the first maximiser of each row.
    """

    point_ndim = 2  # the simplex's projections and argmax act row by row (last axis)

    def _contains(self, M, atol):
        return np.all(M >= -atol, axis=(1, 2)) & np.all(np.abs(M.sum(axis=2) - 1.0) <= atol, axis=1)

    def _vertices(self, dim):
        _check_size(dim**dim, "row-stochastic polytope")
        choice = np.array(list(itertools.product(range(dim), repeat=dim)))
        out = np.zeros((len(choice), dim, dim))
        out[np.arange(len(choice))[:, None], np.arange(dim)[None, :], choice] = 1.0
        return out

    def _constraints(self, dim):
        return _linear.row_stochastic(self._matrix_side(dim))


class Unconstrained(Polytope):
    r"""No constraint beyond the regulariser's domain: :math:`\mathcal C = \mathrm{dom}\,\Psi`.

    The baseline column of Blondel (2019), Tables 1, 2, 4 and 7: Euclidean geometry gives
    :math:`\mathcal C = \mathbb R^p` (projection = identity, the Fenchel-Young loss is the squared
    loss :math:`\tfrac12\|\theta - \varphi(y)\|^2`); KL geometry gives the non-negative orthant
    :math:`\mathbb R^p_+` (projection :math:`e^{\theta - 1}`, loss
    :math:`\sum e^{\theta - 1} - \langle\theta, \varphi(y)\rangle` up to a constant).  Points
    are vectors (flatten matrices).  The set is unbounded: ``argmax`` and ``vertices`` raise
    :class:`NotApplicableError`, so it can be projected on but not decoded on.  ``contains``
    accepts every finite point (membership in the orthant depends on the geometry).
    """

    def _project_euclidean(self, T, max_iter, tol):
        return T.copy()

    def _project_kl(self, T, max_iter, tol):
        limit = 1.0 + np.log(np.finfo(float).max)
        if np.any(T > limit):
            raise ValueError(
                f"theta must be at most {limit:.6g} for the KL projection onto Unconstrained: it "
                f"is exp(theta - 1), which overflows float64 above that; got max(theta) = "
                f"{T.max():.6g}."
            )
        return np.exp(T - 1.0)

    def _argmax(self, T):
        raise NotApplicableError(
            "Unconstrained is unbounded: linear maximisation (MAP decoding) has no solution; "
            "decode on a polytope instead."
        )

    def _contains(self, M, atol):
        return np.all(np.isfinite(M), axis=1)

    def _vertices(self, dim):
        raise NotApplicableError("Unconstrained is unbounded and has no vertices.")

    def _constraints(self, dim):
        raise NotApplicableError(
            "Unconstrained is unbounded (R^p, or the orthant for KL): it has no linear "
            "description as a polytope."
        )


class Marginal(Polytope):
    r"""The marginal polytope :math:`\mathcal M(G)` of a graph: node and edge (clique) marginals
    ``mu = (q_i, Q_ij)`` of some joint distribution over the labelings of ``graph`` (Fathony et al.
    2018b).

    The polytope of :class:`advgame.GraphGame`'s adversary, and the declaration of a graph game:
    ``ag.PredictionGame(loss, GraphFeatures(), uncertainty, ag.polytopes.Marginal(graph))``.

    Parameters
    ----------
    graph : networkx.Graph or 'chain'
        A simple undirected graph on the nodes ``0..N-1`` (every example has ``N`` nodes; edge
        inputs follow ``list(graph.edges())``), or ``'chain'``: each example is a sequence, a
        path over its own rows (its length may vary).
    relaxation : None or 'local', default=None
        None: the exact marginal polytope, written through a junction tree (forests directly:
        there the local polytope is exact).  ``'local'``: the local polytope (pairwise
        consistency only), a *relaxation* on graphs with cycles (the game value is then an upper
        bound; :attr:`exact` is False).
    node_weights : None, 'position', array-like or callable, default=None
        The weights ``w_i`` of the additive loss ``sum_i w_i L[a_i, y_i]`` the game is played
        over (as :class:`advgame.AdversarialGraphicalModel`'s ``node_weights``): all 1, the
        position ``i + 1``, one weight per node of ``graph``, or ``f(N) -> (N,)``.

    Notes
    -----
    The polytope is described by its constraints for the compilers (:meth:`regions`, and as a
    :class:`LinearDescription` by :meth:`constraints`); it has no Bregman projections here (``project``, ``argmax``, ``contains`` and ``vertices`` raise
    :class:`NotApplicableError`; MAP decoding is :meth:`advgame.GraphGame.decode`).
    """

    def __init__(
        self,
        graph: nx.Graph | str,
        relaxation: str | None = None,
        node_weights: str | ArrayLike | Callable[[int], ArrayLike] | None = None,
    ) -> None:
        if isinstance(graph, str):
            if graph != "chain":
                raise ValueError(
                    f"graph must be a networkx.Graph on the nodes 0..N-1 or 'chain'; got {graph!r}."
                )
        else:
            from .inference import check_graph  # lazy: keeps polytopes free of graph imports

            try:
                check_graph(graph)
            except ValueError as exc:
                raise ValueError(f"Marginal(graph): {exc}") from None
        if relaxation not in (None, "local"):
            raise ValueError(
                "relaxation must be None (the exact marginal polytope, through a junction tree) "
                f"or 'local' (the local polytope, a relaxation on graphs with cycles); got "
                f"{relaxation!r}."
            )
        if isinstance(node_weights, str) and node_weights != "position":
            raise ValueError(
                f"node_weights must be None, 'position', an array or a callable; got {node_weights!r}."
            )
        self.graph = graph
        self.relaxation = relaxation
        self.node_weights = node_weights

    @property
    def polytope(self) -> str:
        """The :class:`advgame.GraphGame` polytope name: ``'marginal'`` or ``'local'``."""
        return "marginal" if self.relaxation is None else "local"

    @property
    def has_cycles(self) -> bool:
        """Whether the graph has cycles (False for chains and forests)."""
        if isinstance(self.graph, str):
            return False
        import networkx as nx

        return not nx.is_forest(self.graph)

    @property
    def exact(self) -> bool:
        """False only for the local relaxation of a graph with cycles."""
        return self.relaxation is None or not self.has_cycles

    def graph_for(self, n_nodes: int | None) -> nx.Graph:
        """The graph of an example with ``n_nodes`` rows (a path for ``'chain'``)."""
        if isinstance(self.graph, str):
            import networkx as nx

            return nx.path_graph(n_nodes)
        return self.graph

    def regions(self, k: int, n_nodes: int | None = None) -> Regions:
        """The region marginals and consistency pairs for ``k`` labels
        (:func:`advgame.graph.build_regions`; ``n_nodes`` for a chain)."""
        from .graph import build_regions

        return build_regions(self.graph_for(n_nodes), k, self.polytope)

    def describe(self) -> str:
        """One line: the graph and which polytope (exact or the local relaxation)."""
        if isinstance(self.graph, str):
            return "chains (one path per example); exact (local polytope of a tree)"
        n, e = self.graph.number_of_nodes(), self.graph.number_of_edges()
        head = f"a graph of {n} nodes and {e} edges"
        if not self.has_cycles:
            return f"{head} (a forest); exact (local polytope of a tree)"
        if self.relaxation == "local":
            return f"{head} with cycles; the local polytope, a RELAXATION of M(G) (not exact)"
        return f"{head} with cycles; exact, through a junction tree"

    def _unavailable(self, what: str) -> NoReturn:
        raise NotApplicableError(
            f"Marginal(graph) has no {what}: it declares a graph game's adversary polytope for "
            "PredictionGame.compile; use advgame.GraphGame (solve, decode) on one example."
        )

    def project(
        self,
        theta: ArrayLike,
        geometry: str = "euclidean",
        max_iter: int | None = None,
        tol: float | None = None,
    ) -> np.ndarray:
        self._unavailable("Bregman projection")

    def argmax(self, theta: ArrayLike) -> np.ndarray:
        self._unavailable("flat linear maximisation oracle (MAP decoding is GraphGame.decode)")

    def contains(self, mu: ArrayLike, atol: float = CONTAINS_ATOL) -> bool | np.ndarray:
        self._unavailable("membership test")

    def vertices(self, dim: int) -> np.ndarray:
        self._unavailable("vertex enumeration")

    def constraints(
        self, dim: int | None = None, *, k: int | None = None, n_nodes: int | None = None
    ) -> LinearDescription:
        r"""The polytope's linear description over ``z = [q_1; ...; q_N; Q_1; ...; Q_|E|]``.

        ``q_i`` is node ``i``'s marginal (``k`` entries, node-major) and ``Q_e`` the ``k x k``
        marginal of edge ``e = (i, j)`` of ``list(graph.edges())``, row-major with rows the label
        of ``i``: the variables of :meth:`advgame.GraphGame.inner_program` (Fathony et al.
        2018b).  On a forest, and for ``relaxation='local'``, the regions are the nodes and edges
        themselves and the description is the local polytope (``z >= 0``, normalisation,
        edge-node consistency; ``n_aux = 0``), which is the marginal polytope of a forest
        (Wainwright & Jordan 2008, Prop. 4.1); on a graph with cycles it is the relaxation this
        object declares (:attr:`exact` is False).  With cycles and ``relaxation=None`` the bag
        marginals of the junction tree are ``n_aux`` auxiliary variables and ``z`` their
        marginals: exact.

        Parameters
        ----------
        dim : int, optional
            ``N k + |E| k^2``; gives ``k`` when ``k`` is None.
        k : int, optional
            The number of labels per node.
        n_nodes : int, optional
            The number of nodes of a ``'chain'`` example (required for chains).
        """
        from scipy import sparse

        from .graph import _inner_program, build_regions

        if isinstance(self.graph, str) and n_nodes is None:
            raise ValueError("Marginal('chain').constraints needs n_nodes, the chain's length.")
        if n_nodes is not None:
            n_nodes = _positive_int("n_nodes", n_nodes)
        graph = self.graph_for(n_nodes)
        N, E = graph.number_of_nodes(), graph.number_of_edges()
        if n_nodes is not None and n_nodes != N:
            raise ValueError(f"n_nodes must be the graph's number of nodes ({N}); got {n_nodes}.")
        if k is None:
            if dim is None:
                raise ValueError("Marginal.constraints needs k (labels per node) or dim.")
            dim = _positive_int("dim", dim)
            k = round((math.sqrt(N * N + 4 * E * dim) - N) / (2 * E)) if E else dim // N
        k = _positive_int("k", k)
        if dim is not None and dim != N * k + E * k * k:
            raise ValueError(
                f"dim must be N k + |E| k^2 = {N * k + E * k * k} for this graph (N = {N} nodes, "
                f"|E| = {E} edges) and k = {k} labels; got {dim}."
            )
        regions = build_regions(graph, k, self.polytope)
        inner = _inner_program(np.zeros((k, k)), np.ones(N), regions, list(graph.edges()), k)
        maps = sparse.vstack([inner.node_maps, inner.edge_maps])
        return _linear.from_maps(maps, inner.equalities, inner.rhs)

    def __repr__(self):
        graph = (
            "'chain'"
            if isinstance(self.graph, str)
            else f"<{self.graph.number_of_nodes()} nodes, {self.graph.number_of_edges()} edges>"
        )
        if self.relaxation == "local":
            kind = "local polytope, a relaxation" if self.has_cycles else "local polytope, exact"
        else:
            kind = "junction tree, exact" if self.has_cycles else "a forest, exact"
        weights = "" if self.node_weights is None else ", node_weights=..."
        return f"Marginal({graph}{weights}: {kind})"


# ------------------------------------------------------------------------ a user's own polytopes
#: :class:`Polyhedron` answers ``argmax`` from its vertex table (one matrix product for a batch)
#: when enumerating the vertices takes at most this many basis solves; above, one LP per point.
VERTEX_TABLE_BASES = 100_000


class _Described(Polytope):
    """A polytope known by a :class:`LinearDescription` of fixed dimension (the user's own):
    the Euclidean projection is the QP over the description (:class:`polyhedra.DescriptionSolver`,
    polished to rounding) unless the subclass has a better one; the KL one is not built
    (``frank_wolfe_projection(P.argmax, theta, 'kl')`` computes it from the oracle)."""

    def __init__(self, description: LinearDescription) -> None:
        self._description = description
        self._solver = _linear.DescriptionSolver(description)
        self.dim = description.dim

    def _check_dim(self, k):
        if k != self.dim:
            raise ValueError(f"points of {self!r} must have {self.dim} coordinates; got {k}.")

    def _constraints(self, dim):
        if dim is not None:
            self._check_dim(dim)
        return self._description

    def _project_euclidean(self, T, max_iter, tol):
        return self._solver.project(T)

    def _project_kl(self, T, max_iter, tol):
        raise NotApplicableError(
            f"{type(self).__name__} has no exact KL projection; use "
            "advgame.polytopes.frank_wolfe_projection(P.argmax, theta, 'kl') (one point)."
        )

    def vertices(self, dim: int | None = None) -> np.ndarray:
        """The vertices, one per row (``dim``, if given, must be :attr:`dim`)."""
        if dim is not None:
            self._check_dim(_positive_int("dim", dim))
        return self._vertices(self.dim)


class Polyhedron(_Described):
    r"""A user's polytope :math:`\{z \in \mathbb R^d : A_{ub} z \le b_{ub},\ A_{eq} z =
    b_{eq}\}` (``Polytope.from_constraints``).

    It must be non-empty and bounded: ``2 d`` LPs (``max`` and ``min`` of every coordinate, HiGHS)
    check it at construction and give its bounding box (:attr:`lower`, :attr:`upper`).

    * ``argmax``: from the vertex table (first maximiser in :meth:`vertices` order; one matrix
      product for the batch) when the enumeration takes at most :data:`VERTEX_TABLE_BASES` basis
      solves, else one HiGHS LP per point (a basic optimal solution, ties as HiGHS resolves them).
    * ``vertices``: enumeration of the bases (:func:`advgame.polyhedra.enumerate_vertices`),
      sorted lexicographically; :class:`SizeLimitError` above
      :data:`advgame.polyhedra.MAX_BASES` candidate bases.
    * ``contains``: every row with ``atol`` applied to the row scaled to a largest coefficient of
      1 (vectorised).
    * ``project``: Euclidean (the polished QP, exact to rounding); ``'kl'`` raises
      :class:`NotApplicableError`.

    Parameters
    ----------
    A_ub : array_like or sparse, shape ``(m, d)``
    b_ub : array_like, shape ``(m,)``
    A_eq : array_like or sparse, shape ``(p, d)``, optional
    b_eq : array_like, shape ``(p,)``, optional
    """

    def __init__(
        self,
        A_ub: ArrayLike,
        b_ub: ArrayLike,
        A_eq: ArrayLike | None = None,
        b_eq: ArrayLike | None = None,
    ) -> None:
        super().__init__(_linear.check_constraints(A_ub, b_ub, A_eq, b_eq))
        d = self.dim
        box = []
        for cost in np.vstack([np.eye(d), -np.eye(d)]):
            status, z = self._solver.status(cost)
            if status != "optimal":
                what = {
                    "infeasible": "empty: no point satisfies the constraints",
                    "unbounded": f"unbounded: coordinate {int(np.argmax(np.abs(cost)))} is not "
                    "bounded by the constraints",
                }[status]
                raise ValueError(
                    f"the set A_ub z <= b_ub, A_eq z = b_eq is {what}; a polytope must be "
                    "non-empty and bounded."
                )
            box.append(cost @ z)
        self.lower, self.upper = 0.0 - np.array(box[d:]), np.array(box[:d])
        self._table = None

    def __repr__(self):
        desc = self._description
        return f"Polyhedron(d={self.dim}, {desc.A_ub.shape[0]} inequalities, {desc.A_eq.shape[0]} equalities)"

    def _vertices(self, dim):
        if self._table is None:
            self._table = _linear.enumerate_vertices(self._description)
        return self._table.copy()

    def _argmax(self, T):
        if self._table is None:
            try:
                self._table = _linear.enumerate_vertices(self._description, VERTEX_TABLE_BASES)
            except SizeLimitError:
                return self._solver.argmax(T)
        return self._table[np.argmax(T @ self._table.T, axis=1)]

    def _contains(self, M, atol):
        desc = self._description
        out = np.ones(M.shape[0], dtype=bool)
        for A, b, equal in ((desc.A_ub, desc.b_ub, False), (desc.A_eq, desc.b_eq, True)):
            excess = ((A @ M.T).T - b) / _linear.row_scales(A)
            out &= np.all((np.abs(excess) if equal else excess) <= atol, axis=1)
        return out


class ConvexHull(_Described):
    r"""A user's polytope :math:`\operatorname{conv}\{v_1, \dots, v_m\}`, the rows of ``V``
    (``Polytope.from_vertices``).

    Its description is ``z = V^T lambda``, ``lambda`` in the simplex (``n_aux = m``).

    * ``argmax``: the first row of ``V`` maximising ``<theta, v>`` (one matrix product).
    * ``vertices``: ``V`` as given: rows that are not extreme points (inside the hull) or
      repeated are kept.  A bilinear game's value depends on the mixtures' means only, so it is
      the same over ``V`` as over its extreme points.
    * ``contains``: a row of ``V`` within ``atol`` (max-norm) directly, else the LP
      ``min ||V^T lambda - mu||_inf <= atol`` (HiGHS, one per point).
    * ``project``: Euclidean, by Wolfe's minimum-norm-point algorithm (exact to rounding; one
      point at a time, :func:`advgame.polyhedra.hull_projection`); ``'kl'`` raises
      :class:`NotApplicableError`.

    Parameters
    ----------
    V : array_like, shape ``(m, d)``
        The points, one per row (finite, ``m, d >= 1``).
    """

    def __init__(self, V: ArrayLike) -> None:
        V = as_float_array("V", V)
        if V.ndim != 2 or 0 in V.shape:
            raise ValueError(f"V must be a non-empty (m, d) array of points; got shape {V.shape}.")
        check_finite("V", V)
        self.V = V
        super().__init__(_linear.hull(V))

    def __repr__(self):
        return f"ConvexHull({self.V.shape[0]} points in R^{self.dim})"

    def _vertices(self, dim):
        return self.V.copy()

    def _argmax(self, T):
        return self.V[np.argmax(T @ self.V.T, axis=1)]

    def _project_euclidean(self, T, max_iter, tol):
        return np.array([_linear.hull_projection(self.V, theta) for theta in T]).reshape(T.shape)

    def _contains(self, M, atol):
        out = np.zeros(M.shape[0], dtype=bool)
        step = max(1, (1 << 20) // self.V.size)  # (step, m, d) differences per block
        for start in range(0, M.shape[0], step):
            gap = np.abs(M[start : start + step, None, :] - self.V[None]).max(axis=2)
            out[start : start + step] = gap.min(axis=1) <= atol
        rest = np.flatnonzero(~out)
        if rest.size:
            out[rest] = self._solver.distance(M[rest]) <= atol
        return out


# ---------------------------------------------------------------------------------- Frank-Wolfe
#: ``frank_wolfe_projection`` refuses ``theta`` whose gap rounding ``eps * size * max|theta|``
#: exceeds ``max(tol, _FW_NOISE_LIMIT)``: its stopping test could then pass at a wrong point.
_FW_NOISE_LIMIT = 1e-8


def _kl_objective(mu, t):
    """``sum mu log mu - <t, mu>`` with ``0 log 0 = 0``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = np.where(mu > 0, mu * np.log(np.where(mu > 0, mu, 1.0)), 0.0)
    return ent.sum() - t @ mu


def frank_wolfe_projection(
    argmax: Callable[[np.ndarray], np.ndarray],
    theta: ArrayLike,
    geometry: str = "euclidean",
    max_iter: int = 10_000,
    tol: float = 1e-12,
) -> np.ndarray:
    r"""Projection of one point onto ``conv(argmax(.)'s range)`` by pairwise Frank-Wolfe.

    Works for any polytope given its linear maximisation oracle (Blondel 2019, §3 "Computation";
    Lacoste-Julien & Jaggi 2015).  Minimises :math:`f(\mu) = \tfrac12\|\mu-\theta\|^2`
    (``"euclidean"``) or :math:`\sum\mu\log\mu - \langle\theta,\mu\rangle` (``"kl"``) over the
    active-set representation :math:`\mu = \sum_a \lambda_a a`: each step moves weight from the
    away atom to the Frank-Wolfe atom with an exact (Euclidean) or bounded Brent (KL) line search.
    Stops when the Frank-Wolfe gap :math:`\langle -\nabla f(\mu), s - \mu\rangle \ge f(\mu) - f^*`
    is at most ``tol``; Euclidean accuracy is then :math:`\|\mu - \mu^*\| \le \sqrt{2\,tol}`.
    KL starts at the average of the vertices returned for ``theta`` and ``+/-`` every coordinate
    direction so the iterate is in the relative interior; its Brent line search limits the gap
    reached to about ``1e-9`` (points agree with the exact projections to ~``1e-9`` after a few
    hundred iterations on small cases), so a KL ``tol`` below that runs to ``max_iter``.

    Parameters
    ----------
    argmax : callable
        ``argmax(direction)`` returns a vertex maximising ``<direction, vertex>``; ``direction``
        has ``theta``'s shape.
    theta : array_like
        One point (any shape the oracle accepts); loop over a batch yourself.
    geometry : {"euclidean", "kl"}
    max_iter : int
    tol : float

    Returns
    -------
    mu : ndarray, shape of ``theta``

    Raises
    ------
    ValueError
        If ``theta`` is so large that the gap rounds above ``max(tol, 1e-8)``
        (``eps * theta.size * max|theta|``, e.g. ``|theta| ~ 1e17``): the stopping test would
        not certify anything (at ``[3, 1e17, 1e17]`` on the simplex it stopped at ``[0, 1, 0]``
        instead of ``[0, 0.5, 0.5]``).

    Warns
    -----
    ConvergenceWarning
        If ``max_iter`` iterations end with a gap above ``tol`` (the gap reached is stated); the
        result is still a convex combination of vertices, so it is in the polytope.
    """
    _check_geometry(geometry)
    if not callable(argmax):
        raise ValueError(
            f"argmax must be a callable linear maximisation oracle; got {type(argmax).__name__}."
        )
    _check_iterations(max_iter, tol)
    theta = as_float_array("theta", theta)
    if theta.size == 0:
        raise ValueError("theta is empty; expected one point.")
    check_finite("theta", theta)
    shape = theta.shape
    t = theta.ravel()
    noise = np.finfo(float).eps * t.size * float(np.abs(t).max())
    if noise > max(tol, _FW_NOISE_LIMIT):
        raise ValueError(
            f"theta is too large for frank_wolfe_projection: at max|theta| = "
            f"{np.abs(t).max():.3e} the Frank-Wolfe gap rounds at about eps * size * max|theta| "
            f"= {noise:.3e}, above max(tol, {_FW_NOISE_LIMIT:g}), so the projection cannot be "
            "certified (the oracle sees rounded directions). Rescale or shift theta, or use the "
            "polytope's exact projection (Polytope.project)."
        )

    def lmo(direction):
        return np.asarray(argmax(direction.reshape(shape)), dtype=np.float64).ravel()

    atoms = {}
    starts = [t]
    if geometry == "kl":
        eye = np.eye(t.size)
        starts += list(eye) + list(-eye)
    for d in starts:
        a = lmo(d)
        atoms[a.tobytes()] = [a, 0.0]
    for entry in atoms.values():
        entry[1] = 1.0 / len(atoms)
    mu = sum(a * lam for a, lam in atoms.values())

    gap = np.inf
    for _ in range(max_iter):
        if geometry == "euclidean":
            grad = mu - t
        else:
            grad = np.log(np.maximum(mu, 1e-300)) + 1.0 - t
        s = lmo(-grad)
        gap = -grad @ (s - mu)
        if gap <= tol:
            break
        away_key = max(atoms, key=lambda key: grad @ atoms[key][0])
        v, gmax = atoms[away_key]
        d = s - v
        dd = d @ d
        if dd == 0:
            break
        if geometry == "euclidean":
            gamma = min(max(-grad @ d / dd, 0.0), gmax)
        else:
            gamma = minimize_scalar(
                lambda g, mu=mu, d=d: _kl_objective(mu + g * d, t),
                bounds=(0.0, gmax),
                method="bounded",
                options={"xatol": 1e-15 * max(1.0, gmax)},
            ).x
        mu = mu + gamma * d
        atoms[away_key][1] -= gamma
        if atoms[away_key][1] <= 1e-15:
            del atoms[away_key]
        key = s.tobytes()
        if key in atoms:
            atoms[key][1] += gamma
        else:
            atoms[key] = [s, gamma]
    else:
        from .exceptions import ConvergenceWarning  # scikit-learn's subclass, loaded on use

        warnings.warn(
            f"Frank-Wolfe did not reach tol={tol:g} in max_iter={max_iter} iterations; the last "
            f"Frank-Wolfe gap (a bound on f(mu) - f*) was {gap:.3e}.",
            ConvergenceWarning,
            stacklevel=2,
        )
    return mu.reshape(shape)


# ----------------------------------------------------------------------------- the loss
class FenchelYoungLoss:
    r"""Fenchel-Young loss of a polytope and a geometry (Blondel 2019, Eq. 5-6, Proposition 1).

    .. math::  L_\Psi(\theta; \mu_y) = \Psi^*(\theta) + \Psi(\mu_y) - \langle \theta, \mu_y
               \rangle, \qquad \Psi^*(\theta) = \max_{\mu \in \mathcal C}\ \langle\theta,\mu
               \rangle - \Psi(\mu),

    with :math:`\Psi(\mu) = \tfrac12\|\mu\|^2` (``'euclidean'``) or :math:`\sum \mu \log \mu`
    (``'kl'``) restricted to the polytope :math:`\mathcal C`, and :math:`\mu_y = \varphi(y)` a
    point of :math:`\mathcal C` (a vertex for a label).  Properties (Blondel 2019, after Eq. 4):
    ``L >= 0`` (the Fenchel-Young inequality), ``L = 0`` iff the regularised prediction
    :math:`\hat\mu = \nabla\Psi^*(\theta)` (``polytope.project``) equals :math:`\mu_y`, ``L`` is
    convex in ``theta`` and differentiable with gradient :math:`\hat\mu - \mu_y`, Lipschitz (the
    loss is smooth) for the Euclidean geometry.  On the simplex the KL geometry gives the logistic
    loss ``logsumexp(theta) - theta_y`` and the Euclidean one the sparsemax loss.

    Parameters
    ----------
    polytope : Polytope
    geometry : {'euclidean', 'kl'}
    """

    def __init__(self, polytope: Polytope, geometry: str = "euclidean") -> None:
        if not isinstance(polytope, Polytope):
            raise ValueError(
                f"polytope must be an advgame.polytopes.Polytope; got {type(polytope).__name__}."
            )
        _check_geometry(geometry)
        self.polytope, self.geometry = polytope, geometry

    def regularizer(self, mu: ArrayLike) -> float | np.ndarray:
        """``Psi(mu)`` of each point of a batch (or one point)."""
        M, single = self.polytope._validate(mu, "mu")
        axes = tuple(range(1, M.ndim))
        out = (
            0.5 * np.sum(M * M, axis=axes)
            if self.geometry == "euclidean"
            else np.sum(xlogy(M, M), axis=axes)
        )
        return float(out[0]) if single else out

    def value_and_gradient(
        self, theta: ArrayLike, target: ArrayLike
    ) -> tuple[float | np.ndarray, np.ndarray]:
        """``L(theta; target)`` and its gradient ``project(theta) - target`` (batch or one point).

        ``target`` must lie in the polytope (e.g. ``phi(y)``); otherwise ValueError.
        """
        T, single = self.polytope._validate(theta)
        Y, _ = self.polytope._validate(target, "target")
        if Y.shape != T.shape:
            raise ValueError(f"target must have the shape of theta {T.shape}; got {Y.shape}.")
        inside = np.atleast_1d(self.polytope.contains(Y))
        if not inside.all():
            raise ValueError(
                f"target must lie in {self.polytope!r} (e.g. phi(y) of a label); point "
                f"{int(np.argmin(inside))} does not."
            )
        value, gradient = self._evaluate(T, Y)
        value = np.maximum(value, 0.0)  # rounding below the Fenchel-Young bound
        return (float(value[0]), gradient[0]) if single else (value, gradient)

    def _evaluate(self, T, Y):
        r"""Value and gradient on validated batches, ``Y`` not checked for membership: outside the
        polytope this is :math:`\Psi^*(\theta) + \Psi_0(y) - \langle\theta, y\rangle` with
        the unconstrained :math:`\Psi_0` (convex and smooth in ``theta``, gradient
        ``project(theta) - y``), what an estimator needs when a training target falls outside a
        superset it chose (e.g. a knapsack bounded by typical label counts); the value may then be
        negative."""
        mu = self.polytope.project(T, self.geometry)
        axes = tuple(range(1, T.ndim))
        value = np.sum(T * (mu - Y), axis=axes) - self.regularizer(mu) + self.regularizer(Y)
        return value, mu - Y

    def __call__(self, theta: ArrayLike, target: ArrayLike) -> float | np.ndarray:
        """``L(theta; target)``."""
        return self.value_and_gradient(theta, target)[0]

    def __repr__(self):
        return f"FenchelYoungLoss({self.polytope!r}, geometry={self.geometry!r})"
