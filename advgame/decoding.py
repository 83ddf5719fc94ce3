r"""Calibrated decoding from an affine loss decomposition (Blondel 2019, §5, Eq. 9, 11, 12; App. A).

A target loss between an output :math:`\hat y` and a ground truth :math:`y` is *decomposed* as

.. math::  L(\hat y, y) = \langle \psi(\hat y), V \varphi(y) + b \rangle + c(y)
           \qquad \text{(Blondel 2019, Eq. 12; Eq. 9 when } \psi = \varphi\text{)},

with encodings :math:`\varphi` (ground truths, the points a projection loss regresses) and
:math:`\psi` (outputs, the vertices of the *output set* :math:`\mathrm{conv}\,\psi(\mathcal O)`).
For any :math:`u` in the convex hull of :math:`\varphi(\mathcal Y)` (e.g. the projection
:math:`P_{\mathcal C}^\Psi(\theta)`), the **calibrated decoding** (Eq. 11)

.. math::  \hat y_L(u) = \operatorname*{argmin}_{\hat y} \langle \psi(\hat y), V u + b\rangle
           = \mathrm{MAP}(-Vu - b)

is the Bayes decision for every distribution :math:`q` over ground truths whose mean encoding is
:math:`u = \mathbb E_q \varphi(Y)`, because the expected loss is affine in that mean.  It is one
call to the output set's linear maximisation oracle (:meth:`advgame.polytopes.Polytope.argmax`).
Proposition 5 bounds the target excess risk of :math:`\hat y_L \circ P_{\mathcal C}^\Psi` by the
projection loss's excess risk, whence Fisher consistency.

Built-in decompositions (Blondel 2019, App. A): :func:`zero_one`, :func:`general` (any loss matrix),
:func:`hamming_multilabel`, :func:`hamming_ranking`, :func:`absolute`, :func:`spearman`,
:func:`ndcg` and :func:`precision_at`.  Each carries its encoder ``phi`` and constant ``c`` so that
:meth:`LossDecomposition.loss` evaluates the target loss from the decomposition alone (the tests
compare it with the loss computed directly).
"""

import dataclasses
from collections.abc import Callable
from functools import partial

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_float_array, check_finite
from .losses import LossMatrix
from .permutation import ranks_to_matrices
from .polytopes import Birkhoff, Knapsack, OrderSimplex, Permutahedron, Polytope, Simplex

__all__ = [
    "LossDecomposition",
    "zero_one",
    "general",
    "hamming_multilabel",
    "hamming_ranking",
    "absolute",
    "spearman",
    "ndcg",
    "precision_at",
    "apply_flat",
]


def apply_flat(
    method: Callable[..., np.ndarray],
    polytope: Polytope,
    points: np.ndarray,
    point_shape: tuple[int, ...],
) -> np.ndarray:
    """Call ``method`` (a polytope's ``project``/``argmax``) on a batch ``(n, *point_shape)``.

    Vector polytopes (``point_ndim == 1``) receive matrix points flattened, so that e.g. the unit
    cube can act on ``k x k`` score matrices; the result takes the batch's shape back.
    """
    n = points.shape[0]
    flat = polytope.point_ndim == 1 and len(point_shape) > 1
    out = method(points.reshape(n, -1) if flat else points)
    return out.reshape(points.shape)


@dataclasses.dataclass(frozen=True)
class LossDecomposition:
    r"""A target loss written as :math:`\langle\psi(\hat y), V\varphi(y) + b\rangle + c(y)`.

    Attributes
    ----------
    name : str
    output_set : Polytope
        :math:`\mathrm{conv}\,\psi(\mathcal O)`; decoding returns one of its vertices.  Replace it
        (:meth:`with_output_set`) to decode onto a superset, as in Blondel (2019), Tables 1-2.
    V : float or ndarray
        A scalar stands for ``V * I``; otherwise a matrix acting on flattened encodings.
    b : float or ndarray
        Added to ``V u`` (broadcast over points).
    phi : callable
        Encodes a batch of ground truths as ``(n, *point_shape)`` floats.
    constant : callable
        :math:`c(y)` of a batch of ground truths, shape ``(n,)``.
    point_shape : tuple
        Shape of one encoding (``(k,)``, ``(k - 1,)`` or ``(k, k)``).
    """

    name: str
    output_set: Polytope
    V: object
    b: object
    phi: Callable
    constant: Callable
    point_shape: tuple

    def with_output_set(self, output_set: Polytope) -> "LossDecomposition":
        """The same decomposition decoded onto another set (e.g. a superset of the hull)."""
        if not isinstance(output_set, Polytope):
            raise ValueError(f"output_set must be a Polytope; got {type(output_set).__name__}.")
        return dataclasses.replace(self, output_set=output_set)

    def _points(self, u, name):
        U = as_float_array(name, u)
        single = U.shape == self.point_shape
        U = U.reshape((1, *self.point_shape)) if single else U
        if U.shape[1:] != self.point_shape or U.shape[0] == 0:
            raise ValueError(
                f"{name} must be one point of shape {self.point_shape} or a non-empty batch "
                f"(n, {', '.join(map(str, self.point_shape))}) for the {self.name} loss; got "
                f"shape {np.shape(u)}."
            )
        check_finite(name, U)
        return U, single

    def _affine(self, U):
        """``V u + b`` for every point of a batch, in the points' shape."""
        if np.isscalar(self.V):
            return self.V * U + self.b
        flat = U.reshape(U.shape[0], -1) @ np.asarray(self.V).T
        return flat.reshape(U.shape) + self.b

    def scores(self, u: ArrayLike) -> np.ndarray:
        r"""The MAP input :math:`-Vu - b` of Eq. 11 (one point or a batch)."""
        U, single = self._points(u, "u")
        out = -self._affine(U)
        return out[0] if single else out

    def decode(self, u: ArrayLike) -> np.ndarray:
        r"""Calibrated decoding :math:`\psi(\hat y_L(u)) = \mathrm{MAP}(-Vu - b)` (Eq. 11).

        Returns the output set's maximising vertex for each point (same shape as ``u``); ties
        resolve as the output set's ``argmax`` documents.
        """
        U, single = self._points(u, "u")
        out = apply_flat(
            self.output_set.argmax, self.output_set, -self._affine(U), self.point_shape
        )
        return out[0] if single else out

    def loss(self, psi_hat: ArrayLike, y: ArrayLike) -> float | np.ndarray:
        r""":math:`\langle\psi(\hat y), V\varphi(y) + b\rangle + c(y)` for a batch (or one pair)."""
        P, single = self._points(psi_hat, "psi_hat")
        Y = self.phi(y)
        Y = Y.reshape((-1, *self.point_shape))
        if Y.shape[0] != P.shape[0]:
            raise ValueError(f"y holds {Y.shape[0]} ground truths for {P.shape[0]} outputs.")
        axes = tuple(range(1, P.ndim))
        out = np.sum(P * self._affine(Y), axis=axes) + self.constant(y)
        return float(out[0]) if single else out


# ----------------------------------------------------------------------------------- encoders
def _labels(y, k, name="y"):
    y = np.atleast_1d(np.asarray(y))
    if y.ndim != 1 or not np.issubdtype(y.dtype, np.integer) or np.any((y < 0) | (y >= k)):
        raise ValueError(f"{name} must hold integer labels in 0..{k - 1}; got {y!r}.")
    return y


def _indicators(y, k, name="y"):
    Y = np.atleast_2d(np.asarray(y, dtype=np.float64))
    if Y.shape[-1] != k or not np.all((Y == 0) | (Y == 1)):
        raise ValueError(f"{name} must hold 0/1 indicator vectors of length {k}; got {y!r}.")
    return Y


def _check_size(k, minimum, name="k"):
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {k!r}.")
    return int(k)


def _one_hot(y, k):
    return np.eye(k)[_labels(y, k)]


def _zeros(y, k):
    return np.zeros(_labels(y, k).size)


def _indicator_count(y, k):
    return _indicators(y, k).sum(axis=1)


def _cumulative(y, k):
    return (np.arange(k - 1)[None, :] < _labels(y, k)[:, None]).astype(np.float64)


def _label_value(y, k):
    return _labels(y, k).astype(np.float64)


def _rank_scores(R, k):
    R = np.atleast_2d(np.asarray(R))
    _rank_matrices(R, k)  # validates the rankings
    return k + 1.0 - R


def _sum_of_squares(R, k):
    return np.full(np.atleast_2d(R).shape[0], float(np.sum(np.arange(1, k + 1) ** 2)))


def _ranking_constant(R, k):
    return np.full(_rank_matrices(R, k).shape[0], float(k))


def _ndcg_phi(y, m, w):
    Y = _relevances(y, m)
    norm = -np.sort(-Y, axis=1) @ w
    if np.any(norm <= 0):
        raise ValueError("NDCG needs at least one positive relevance per ground truth.")
    return Y / norm[:, None]


def _ones(y, m):
    return np.ones(_relevances(y, m).shape[0])


def _indicator_count_ones(y, m):
    return np.ones(_indicators(y, m).shape[0])


def _precision_phi(y, m, top):
    Y = _indicators(y, m)
    count = np.minimum(Y.sum(axis=1), top)
    if np.any(count == 0):
        raise ValueError("precision@k needs at least one relevant document per ground truth.")
    return Y / count[:, None]


# ----------------------------------------------------------------------- built-in decompositions
def _per_label(name, output_set, V, b, phi, constant, k, point_shape):
    """A decomposition whose encoder and constant are ``phi(y, k)`` and ``constant(y, k)``."""
    return LossDecomposition(
        name, output_set, V, b, partial(phi, k=k), partial(constant, k=k), point_shape
    )


def _sorting(name, w, phi, constant):
    r"""A decomposition decoded by sorting: :math:`V = -I`, :math:`b = 0` and the output set the
    permutahedron of the weights ``w`` (App. A), whose MAP sorts the scores."""
    return LossDecomposition(name, Permutahedron(w), -1.0, 0.0, phi, constant, (len(w),))


def general(loss_matrix: LossMatrix | ArrayLike) -> LossDecomposition:
    r"""Any finite loss as ``V = L`` with one-hot encodings (Blondel 2019, App. A, "General loss").

    ``L[a, y]`` is the loss of action ``a`` against label ``y`` (a ``LossMatrix`` or an array);
    decoding is the Bayes action :math:`\operatorname{argmin}_a (Lu)_a` of the label
    distribution ``u``.  This ignores structure; prefer the structured decompositions below.
    """
    L = as_float_array("loss_matrix", getattr(loss_matrix, "matrix", loss_matrix))
    if L.ndim != 2 or min(L.shape) < 1:
        raise ValueError(f"loss_matrix must be a 2-D (actions, labels) array; got {L.shape}.")
    check_finite("loss_matrix", L)
    n_actions, k = L.shape
    # psi lives in R^{n_actions} and phi in R^k; Eq. 12 allows V to be rectangular
    return _per_label("general", Simplex(), L, np.zeros(n_actions), _one_hot, _zeros, k, (k,))


def zero_one(k: int) -> LossDecomposition:
    r"""Zero-one loss: :math:`\varphi = \psi = e_y`, :math:`V = 1 - I` (App. A); decoding is
    ``argmax u`` over the simplex."""
    k = _check_size(k, 2)
    V = np.ones((k, k)) - np.eye(k)
    return _per_label("zero_one", Simplex(), V, 0.0, _one_hot, _zeros, k, (k,))


def hamming_multilabel(k: int, low: int = 0, high: int | None = None) -> LossDecomposition:
    r"""Hamming loss of label sets: :math:`\varphi(y) = y \in \{0,1\}^k`, :math:`V = -2I`,
    :math:`b = 1`, :math:`c(y) = \langle y, 1\rangle` (App. A).

    The output set is the knapsack polytope ``Knapsack(low, high)`` (``high=None``: ``k``, i.e. the
    unit cube): decoding keeps the labels with :math:`u_i > 1/2`, at least ``low`` and at most
    ``high`` of them.
    """
    k = _check_size(k, 1)
    high = k if high is None else high
    output_set = Knapsack(low, high)
    output_set._check_dim(k)  # refuse high > k now rather than at the first decode
    return _per_label(
        "hamming_multilabel", output_set, -2.0, 1.0, _indicators, _indicator_count, k, (k,)
    )


def _rank_matrices(R, k):
    R = np.atleast_2d(np.asarray(R))
    if R.shape[-1] != k:
        raise ValueError(f"y must hold rank vectors, permutations of 1..{k}; got {R!r}.")
    return ranks_to_matrices(R, "y")


def hamming_ranking(k: int) -> LossDecomposition:
    r"""Hamming loss of permutations: :math:`\varphi = \psi` = the permutation matrix,
    :math:`V = -I`, :math:`c = k` (App. A), so :math:`L = k - \langle\hat P, P\rangle`.

    Ground truths are rank vectors (``R[j]`` = rank of item ``j``, 1 = best, ``P[j, R_j - 1] =
    1``).  The output set is the Birkhoff polytope: decoding is the assignment problem
    :math:`\max_P \langle P, u\rangle` (Hungarian method).
    """
    k = _check_size(k, 2)
    return _per_label(
        "hamming_ranking", Birkhoff(), -1.0, 0.0, _rank_matrices, _ranking_constant, k, (k, k)
    )


def absolute(k: int) -> LossDecomposition:
    r"""Absolute loss :math:`|\hat y - y|` of ``k`` ordered classes: :math:`\varphi(y) =
    \sum_{i < y} e_i \in \{0,1\}^{k-1}`, :math:`V = -2I`, :math:`b = 1`, :math:`c(y) = y` (App. A).

    Classes are ``0..k-1``; the output set is the order simplex, so decoding picks the class
    maximising the cumulative sums of :math:`2u - 1` (the median of the distribution ``u``
    encodes).
    """
    k = _check_size(k, 2)
    return _per_label("absolute", OrderSimplex(), -2.0, 1.0, _cumulative, _label_value, k, (k - 1,))


def spearman(k: int) -> LossDecomposition:
    r"""Squared rank distance :math:`\tfrac12 \sum_j (\hat R_j - R_j)^2` (Spearman's footrule
    squared, an affine function of Spearman's rho): :math:`\varphi(R) = \psi(R) = k + 1 - R`
    (item ``j`` gets the weight :math:`w_{R_j}` of its rank, :math:`w = (k, \dots, 1)`),
    :math:`V = -I`, :math:`c = \sum_{j \le k} j^2`, because :math:`\|\psi\|^2` is the same for
    every permutation.

    The output set is the permutahedron of ``w``; decoding sorts ``u`` (the largest score gets
    rank 1): the MAP of Blondel (2019, §4) is calibrated for this loss.
    """
    k = _check_size(k, 2)
    w = np.arange(k, 0, -1.0)
    return _sorting("spearman", w, partial(_rank_scores, k=k), partial(_sum_of_squares, k=k))


def _relevances(y, m):
    Y = np.atleast_2d(as_float_array("y", y))
    if Y.shape[-1] != m or np.any(Y < 0) or not np.all(np.isfinite(Y)):
        raise ValueError(f"y must hold non-negative relevance vectors of length {m}; got {y!r}.")
    return Y


def ndcg(m: int, w: ArrayLike | None = None) -> LossDecomposition:
    r"""NDCG loss :math:`1 - \frac{1}{N(y)} \sum_i y_i w_{\pi_i}` of a ranking ``pi`` of ``m``
    documents with relevances ``y`` (App. A): :math:`\psi(\pi) = w_\pi`,
    :math:`\varphi(y) = y / N(y)` with :math:`N(y) = \langle \mathrm{sort}(y), w\rangle`,
    :math:`V = -I`, :math:`c = 1`.

    ``w`` are the discounts (default :math:`1/\log_2(1 + i)`); decoding is sorting (the
    permutahedron of ``w``): the output vector holds the discount given to each document.
    Relevances must not be all zero (``N(y) = 0``).
    """
    m = _check_size(m, 2, "m")
    w = 1.0 / np.log2(np.arange(2, m + 2)) if w is None else as_float_array("w", w)
    if w.shape != (m,) or np.any(np.diff(w) > 0) or np.any(w < 0):
        raise ValueError(f"w must be {m} non-negative, non-increasing discounts; got {w!r}.")
    return _sorting("ndcg", w, partial(_ndcg_phi, m=m, w=w), partial(_ones, m=m))


def precision_at(m: int, top: int) -> LossDecomposition:
    r"""Precision-at-``top`` loss :math:`1 - \frac{1}{\min(top, |y|)} \sum_i y_i w_{\pi_i}` with
    :math:`w = (1, \dots, 1, 0, \dots, 0)` (``top`` ones) for binary relevances ``y`` (App. A):
    :math:`\varphi(y) = y / \min(top, |y|)`, :math:`V = -I`, :math:`c = 1`.

    Decoding is sorting: the output marks the ``top`` documents ranked first.  Each ground truth
    needs at least one relevant document.
    """
    m = _check_size(m, 2, "m")
    top = _check_size(top, 1, "top")
    if top > m:
        raise ValueError(f"top must be at most m={m}; got {top}.")
    w = (np.arange(m) < top).astype(np.float64)
    phi = partial(_precision_phi, m=m, top=top)
    return _sorting("precision_at", w, phi, partial(_indicator_count_ones, m=m))
