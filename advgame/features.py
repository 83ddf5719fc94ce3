r"""Feature maps ``phi(x, y)``: the statistics the adversary must match (Fathony et al. 2018a, §2-3, §6.2).

Potentials are linear in the parameters, ``f_{ij}(theta) = theta . phi(x_i, j)``.  A feature map is
fitted once (dimensions, training inputs for kernels) and then *bound* to an input matrix ``X``,
giving a linear operator with

* ``forward(theta) -> F`` of shape ``(n, k)``,
* ``adjoint(G) -> sum_ij G_ij phi(x_i, j)`` (the gradient of ``sum_ij G_ij f_ij``), and
* ``matrix()``: the sparse design ``D`` with ``vec(F) = D theta``, rows ordered ``i * k + j``
  (used by the compiler), and
* ``subset(rows)``: the operator of a subset of the samples (mini-batches).

For the built-in maps ``forward`` and ``adjoint`` are one or two matrix products with ``X``; no
``n x k x d`` array is ever formed.  ``norm_factor()`` gives ``G`` with ``||theta||^2 = ||G theta||^2``
for the norm the uncertainty sets use (identity, or the RKHS norm ``tr(A^T K A)`` for kernels).
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ._validation import as_float_array, check_finite, check_positive, check_real

__all__ = [
    "FeatureMap",
    "Multiclass",
    "Thresholded",
    "KernelFeatures",
    "CallableFeatures",
    "GraphFeatures",
    "psd_eigen",
    "PSD_EIGEN_RTOL",
]

#: Eigenvalues of a PSD (kernel) matrix below this fraction of the largest count as zero: rounding
#: makes kernel matrices slightly indefinite, and the dropped directions are numerically empty.
PSD_EIGEN_RTOL = 1e-12


def psd_eigen(M: np.ndarray, rtol: float = PSD_EIGEN_RTOL) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvectors ``U`` and positive eigenvalues ``s`` of a symmetric PSD matrix with
    ``M ≈ U diag(s) U^T``, modes below ``rtol * max(s)`` dropped (``U * sqrt(s)`` is a factor).

    Raises ValueError if nothing is left (the matrix is zero or negative).
    """
    s, U = np.linalg.eigh(M)
    keep = s > rtol * max(s[-1], 0.0)
    if not np.any(keep):
        raise ValueError("the kernel matrix has no positive eigenvalue (it is zero).")
    return U[:, keep], s[keep]


class FeatureMap:
    """Base class: subclasses implement ``_fit``, ``bind`` and may override ``blocks``."""

    n_params = None
    #: Whether ``theta`` lives in a finite coordinate space where l1 / linf norms make sense.
    coordinate_norms = True

    def __repr__(self):
        names = [n for n in inspect.signature(type(self).__init__).parameters if n != "self"]
        params = ", ".join(f"{n}={getattr(self, n)!r}" for n in names if hasattr(self, n))
        return f"{type(self).__name__}({params})"

    def fit(self, X: np.ndarray, n_classes: int) -> FeatureMap:
        """Fix the dimensions from training inputs ``X`` (n, d) and the number of classes."""
        self.n_classes_ = int(n_classes)
        self.n_features_in_ = X.shape[1]
        self._fit(X)
        return self

    def _fit(self, X):
        raise NotImplementedError

    def bind(self, X: np.ndarray) -> Any:
        """The linear operator ``theta -> F`` for inputs ``X``."""
        raise NotImplementedError

    def blocks(self) -> list[np.ndarray]:
        """Index arrays partitioning ``theta`` (per-class blocks for group norms)."""
        return [np.arange(self.n_params)]

    def norm_factor(self) -> sp.csr_matrix:
        """Sparse ``G`` with ``||theta||_2^2 = ||G theta||^2`` (identity for explicit features)."""
        return sp.identity(self.n_params, format="csr")

    def norm_metric(self, theta: np.ndarray) -> np.ndarray:
        """``G^T G theta``, so that ``||theta||^2 = theta . norm_metric(theta)`` and
        ``norm_metric`` is the gradient of ``||theta||^2 / 2``: ``theta`` itself for explicit
        features."""
        return theta


#: ``_DenseOperator.forward`` computes ``F^T = Theta^T X1^T`` (``F`` column-major) for ``X1``
#: with at least this many entries.  Measured at one OpenBLAS thread (``d + 1 = 65, 101``,
#: ``k = 10``): ``X1 @ Theta`` is up to 30% faster below ~1 MB of ``X1``, the transposed product
#: 1.2-4x faster above (``n = 20,000``, ``d = 100``: 1.4-1.5 ms instead of 2.2-6 ms).
TRANSPOSED_FORWARD_ENTRIES = 100_000


class _DenseOperator:
    """``F = X1 @ Theta`` with ``Theta = theta.reshape(p, k)``: the multiclass / kernel form.

    Both products are arranged for BLAS with ``k`` small: ``adjoint`` as ``(G^T X1)^T`` (for
    ``G`` in either memory order; 1-3.4x faster than ``X1^T G``), ``forward`` as ``(Theta^T
    X1^T)^T`` for a large float64 ``X1`` (:data:`TRANSPOSED_FORWARD_ENTRIES`), which returns a
    column-major ``F``: the layout the closed forms of :mod:`advgame.closed_forms` work in.
    The products run in ``X1``'s precision (:meth:`astype`); ``F`` and the adjoint are float64
    whatever it is.
    """

    def __init__(self, X1, k):
        self.X1 = X1
        self.k = k
        self._converted = {}

    def astype(self, dtype):
        """This operator with ``X1`` converted to ``dtype`` once: its products in that
        precision (float32 halves the bytes each product reads), their inputs rounded to it.
        Kept, so that the fits of a path over one bound operator convert once."""
        dtype = np.dtype(dtype)
        if dtype not in self._converted:
            self._converted[dtype] = _DenseOperator(self.X1.astype(dtype), self.k)
        return self._converted[dtype]

    def forward(self, theta):
        Theta = theta.reshape(-1, self.k)
        if self.X1.dtype != np.float64:
            # single precision: X1 Theta is 2-2.5x faster than the transposed product
            # (measured, n = 20,000-200,000, d = 50-100, k = 5-10), and the conversion back
            # to float64 writes the column-major F
            return (self.X1 @ Theta.astype(self.X1.dtype)).astype(np.float64, order="F")
        if self.X1.size >= TRANSPOSED_FORWARD_ENTRIES:
            return (Theta.T @ self.X1.T).T
        return self.X1 @ Theta

    def adjoint(self, G):
        G = G.astype(self.X1.dtype, copy=False)
        return (G.T @ self.X1).T.ravel().astype(np.float64, copy=False)

    def matrix(self):
        """``kron(X1, I_k)`` (CSR).  For an ``X1`` without zero entries (the usual case) its
        arrays are written directly, each entry once: no Kronecker intermediates (``sp.kron``
        peaks at 2.8x the result and is 10x slower at 62 million nonzeros)."""
        X1, k = np.asarray(self.X1), self.k
        n, p = X1.shape
        if np.count_nonzero(X1) != X1.size:
            return sp.kron(sp.csr_matrix(X1), sp.identity(k), format="csr")
        nnz = n * k * p
        index = np.int32 if max(nnz, p * k) < np.iinfo(np.int32).max else np.int64
        columns = np.arange(p, dtype=index)[None, :] * k + np.arange(k, dtype=index)[:, None]
        indices = np.broadcast_to(columns, (n, k, p)).ravel()
        data = np.broadcast_to(X1[:, None, :], (n, k, p)).ravel()
        indptr = np.arange(0, nnz + 1, p, dtype=index)
        return sp.csr_matrix((data, indices, indptr), shape=(n * k, p * k))

    def subset(self, rows):
        return _DenseOperator(self.X1[rows], self.k)


class Multiclass(FeatureMap):
    r"""Multiclass blocks ``phi_mc(x, y) = e_y ⊗ [x; 1]`` (Fathony et al. 2018a, §3.2.1).

    ``theta`` is ``Theta.ravel()`` with ``Theta`` of shape ``(d + 1, k)``: column ``j`` is the
    weight vector of class ``j`` (last row the intercepts), so ``F = [X, 1] @ Theta``.

    Parameters
    ----------
    fit_intercept : bool
        Append the constant feature (its moment is the class frequency).
    penalize_intercept : bool, default=True
        Whether the uncertainty set's regulariser covers the intercepts.  ``False`` leaves them
        out of the norm (``norm_factor`` selects the other coordinates), which in the
        adversary's program is exact matching of the constant feature's moments, the class
        frequencies (the estimators of Blondel 2019 fit an unpenalised bias).  Such a map has no
        plain coordinate norm (``coordinate_norms`` is False): the first-order solvers that need
        one refuse it, the compiled programs take it.
    """

    def __init__(self, fit_intercept: bool = True, penalize_intercept: bool = True) -> None:
        self.fit_intercept = fit_intercept
        self.penalize_intercept = penalize_intercept

    @property
    def coordinate_norms(self) -> bool:
        return self.penalize_intercept or not self.fit_intercept

    def _fit(self, X):
        self.n_params = (self.n_features_in_ + self.fit_intercept) * self.n_classes_

    def _penalised(self) -> np.ndarray:
        """The coordinates of ``theta`` the regulariser covers (all but the intercepts when
        ``penalize_intercept`` is False)."""
        if self.coordinate_norms:
            return np.arange(self.n_params)
        return np.arange(self.n_features_in_ * self.n_classes_)  # the last row are intercepts

    def norm_factor(self) -> sp.csr_matrix:
        """``G`` with ``||G theta||^2`` the penalised part of ``||theta||^2``: the identity, or
        the selection of every coordinate but the intercepts."""
        if self.coordinate_norms:
            return super().norm_factor()
        return sp.identity(self.n_params, format="csr")[self._penalised()]

    def norm_metric(self, theta: np.ndarray) -> np.ndarray:
        """``G^T G theta``: ``theta`` with its intercepts zeroed when they are not penalised."""
        if self.coordinate_norms:
            return theta
        out = np.zeros_like(theta)
        kept = self._penalised()
        out[kept] = theta[kept]
        return out

    def _augment(self, X):
        return np.hstack([X, np.ones((X.shape[0], 1))]) if self.fit_intercept else X

    def bind(self, X: np.ndarray) -> Any:
        return _DenseOperator(self._augment(X), self.n_classes_)

    def blocks(self) -> list[np.ndarray]:
        return [np.arange(j, self.n_params, self.n_classes_) for j in range(self.n_classes_)]

    def coef(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(coef, intercept)`` in scikit-learn layout ``(k, d)`` and ``(k,)``."""
        Theta = theta.reshape(-1, self.n_classes_)
        if self.fit_intercept:
            return Theta[:-1].T.copy(), Theta[-1].copy()
        return Theta.T.copy(), np.zeros(self.n_classes_)


class _ThresholdedOperator:
    def __init__(self, X, levels, cumulative):
        self.X, self.levels, self.cumulative = X, levels, cumulative

    def forward(self, theta):
        d = self.X.shape[1]
        return np.outer(self.X @ theta[:d], self.levels) + self.cumulative @ theta[d:]

    def adjoint(self, G):
        return np.concatenate([self.X.T @ (G @ self.levels), self.cumulative.T @ G.sum(axis=0)])

    def subset(self, rows):
        return _ThresholdedOperator(self.X[rows], self.levels, self.cumulative)

    def matrix(self):
        n = self.X.shape[0]
        shared = sp.kron(sp.csr_matrix(self.X), self.levels[:, None])
        thresholds = sp.vstack([sp.csr_matrix(self.cumulative)] * n) if n else None
        return sp.hstack([shared, thresholds], format="csr")


class Thresholded(FeatureMap):
    r"""Thresholded ordinal features ``phi_th(x, y) = [y x; 1(y <= 1), ..., 1(y <= k-1)]``.

    Fathony et al. (2018a), §3.2.1: one shared weight vector ``w`` and ``k - 1`` thresholds ``eta``,
    with labels numbered ``y = 1..k`` in ``classes_`` order, so
    ``f_y = y (w . x) + sum_{t >= y} eta_t``. ``theta = [w; eta]``.
    """

    def _fit(self, X):
        k = self.n_classes_
        self.n_params = self.n_features_in_ + k - 1
        self.levels_ = np.arange(1, k + 1, dtype=np.float64)
        self.cumulative_ = (self.levels_[:, None] <= np.arange(1, k)[None, :]).astype(np.float64)

    def bind(self, X: np.ndarray) -> Any:
        return _ThresholdedOperator(X, self.levels_, self.cumulative_)

    def blocks(self) -> list[np.ndarray]:
        d = self.n_features_in_
        return [np.arange(d), np.arange(d, self.n_params)]


def check_kernel_params(gamma, degree, coef0):
    """Kernel parameters as :func:`sklearn.metrics.pairwise.pairwise_kernels` needs them.

    ``gamma`` is None (``1 / n_features``) or a finite number > 0, ``degree`` an integer >= 1
    and ``coef0`` a finite number; ``ValueError`` naming the parameter otherwise.
    """
    if gamma is not None:
        check_positive("gamma", gamma)
    if (
        not isinstance(degree, numbers.Real)
        or isinstance(degree, bool)
        or not np.isfinite(degree)
        or int(degree) != degree
        or degree < 1
    ):
        raise ValueError(f"degree must be an integer >= 1; got {degree!r}.")
    check_real("coef0", coef0)


def _gaussian_gram(X: np.ndarray, Z: np.ndarray, gamma: float) -> np.ndarray:
    r"""``K_ij = exp(-gamma ||x_i - z_j||^2)`` by one matrix product and one exponential in place.

    The inputs augmented by their squared norms have the exponents as inner products,

    .. math::  [\sqrt{2\gamma} x, -\gamma ||x||^2, 1] \cdot [\sqrt{2\gamma} z, 1, -\gamma ||z||^2]
               = -\gamma ||x - z||^2,

    so no ``n x m`` temporary is made (``pairwise_kernels`` makes several full passes: measured
    2x slower for the 3,934 rows of optdigits).  The expansion has the rounding of
    :func:`sklearn.metrics.pairwise.euclidean_distances`; a pair at distance 0 can get an
    exponent of a few ``eps`` above 0 and an entry of ``1 + O(eps)`` (the diagonal of
    ``K(X, X)`` is set to 1).  The entries are finite when the scaled squared norms are: the
    exponents and their partial sums are then bounded by twice their sum (Cauchy-Schwarz).
    Returns None when they are not (non-finite or huge inputs).
    """
    x2 = gamma * np.einsum("ij,ij->i", X, X)
    z2 = x2 if Z is X else gamma * np.einsum("ij,ij->i", Z, Z)
    if not np.isfinite(2.0 * (x2.max(initial=0.0) + z2.max(initial=0.0))):
        return None
    scale = np.sqrt(2.0 * gamma)
    left = np.hstack([scale * X, -x2[:, None], np.ones((X.shape[0], 1))])
    right = np.hstack([scale * Z, np.ones((Z.shape[0], 1)), -z2[:, None]])
    K = left @ right.T  # different operands: numpy would use syrk and copy the triangle slowly
    np.exp(K, out=K)
    if Z is X:
        np.fill_diagonal(K, 1.0)
    return K


class KernelFeatures(FeatureMap):
    r"""Kernel features by the representer theorem (Fathony et al. 2018a, §6.2).

    With training inputs ``X_t`` and the block kernel ``K((x, y), (x', y')) = K(x, x') 1[y = y']``,
    ``theta = sum_{m, j} A_{mj} omega(phi(x_m, j))`` so ``F = K(X, X_t) A`` and
    ``||theta||^2 = tr(A^T K A)``.  ``theta = A.ravel()`` with ``A`` of shape ``(n_t, k)``.

    Parameters
    ----------
    kernel : {'linear', 'poly', 'rbf'} or callable
        Passed to :func:`sklearn.metrics.pairwise.pairwise_kernels`.
    gamma, degree, coef0 : float
        Kernel parameters (``gamma=None`` means ``1 / n_features``).
    fit_intercept : bool, default=False
        Add an unpenalised intercept per class, ``F = K(X, X_t) A + 1 b^T`` (``theta =
        [A; b].ravel()``): the RKHS norm leaves ``b`` out, so the adversary matches the class
        frequencies exactly (the kernel models of Blondel 2019, App. B.1).
    """

    coordinate_norms = False

    def __init__(
        self,
        kernel: str | Callable[..., float] = "rbf",
        gamma: float | None = None,
        degree: int = 3,
        coef0: float = 1.0,
        fit_intercept: bool = False,
    ) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.fit_intercept = fit_intercept

    def _params(self):
        if callable(self.kernel):
            return {}
        from sklearn.metrics.pairwise import PAIRWISE_KERNEL_FUNCTIONS

        if not isinstance(self.kernel, str) or self.kernel not in PAIRWISE_KERNEL_FUNCTIONS:
            raise ValueError(
                f"kernel must be a callable or one of {sorted(PAIRWISE_KERNEL_FUNCTIONS)}; got "
                f"{self.kernel!r}."
            )
        check_kernel_params(self.gamma, self.degree, self.coef0)
        gamma = 1.0 / self.n_features_in_ if self.gamma is None else float(self.gamma)
        if self.kernel == "rbf":
            return {"gamma": gamma}
        if self.kernel == "poly":
            return {"gamma": gamma, "degree": int(self.degree), "coef0": float(self.coef0)}
        if self.kernel == "linear":
            return {}
        # the other kernels of scikit-learn take the parameters they know
        options = {"gamma": gamma, "degree": self.degree, "coef0": self.coef0}
        return {"filter_params": True, **options}

    def _fit(self, X):
        self._kernel_params = self._params()
        self.X_fit_ = X
        self.n_params = (X.shape[0] + bool(self.fit_intercept)) * self.n_classes_
        self._factor = self._train_gram = None

    def gram(self, X: np.ndarray) -> np.ndarray:
        """``K(X, X_fit)`` (:func:`_gaussian_gram` for ``'rbf'`` on dense float64 inputs with
        finite norms)."""
        Z = self.X_fit_
        dense = all(isinstance(A, np.ndarray) and A.dtype == np.float64 for A in (X, Z))
        if self.kernel == "rbf" and dense:
            K = _gaussian_gram(X, Z, self._kernel_params["gamma"])
            if K is not None:
                return K
        from sklearn.metrics.pairwise import pairwise_kernels

        K = pairwise_kernels(X, Z, metric=self.kernel, **self._kernel_params)
        check_finite("kernel matrix", K)
        return K

    def bind(self, X: np.ndarray) -> Any:
        K = self.gram(X)
        if self.fit_intercept:
            K = np.hstack([K, np.ones((K.shape[0], 1))])
        return _DenseOperator(K, self.n_classes_)

    def blocks(self) -> list[np.ndarray]:
        return [np.arange(j, self.n_params, self.n_classes_) for j in range(self.n_classes_)]

    def norm_factor(self) -> sp.csr_matrix:
        r"""``G = (R^T ⊗ I_k)`` with ``K = R R^T`` (eigen-factor, tiny negative eigenvalues
        clipped; a zero column block for the unpenalised intercepts), for the compiled
        programs; the first-order solvers use :meth:`norm_metric`."""
        if self._factor is None:
            eigenvalues, vectors = np.linalg.eigh(self._training_gram())
            R = vectors * np.sqrt(np.clip(eigenvalues, 0.0, None))
            G = sp.kron(sp.csr_matrix(R.T), sp.identity(self.n_classes_), format="csr")
            if self.fit_intercept:
                G = sp.hstack([G, sp.csr_matrix((G.shape[0], self.n_classes_))], format="csr")
            self._factor = G
        return self._factor

    def norm_metric(self, theta: np.ndarray) -> np.ndarray:
        r"""``(K ⊗ I_k) theta = (K A).ravel()`` for ``theta = A.ravel()``, so that
        ``||theta||_H^2 = tr(A^T K A)``: one product with the training Gram matrix (computed
        once), where the factor :meth:`norm_factor` needs an ``n x n`` eigendecomposition and
        ``n^2 k`` nonzeros.  The intercepts' entries are zero (they are not penalised)."""
        A = np.asarray(theta).reshape(-1, self.n_classes_)
        if not self.fit_intercept:
            return (self._training_gram() @ A).ravel()
        return np.vstack([self._training_gram() @ A[:-1], np.zeros((1, A.shape[1]))]).ravel()

    def _training_gram(self):
        if self._train_gram is None:
            self._train_gram = self.gram(self.X_fit_)
        return self._train_gram

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_factor"] = state["_train_gram"] = None  # caches, rebuilt on demand
        return state


class _StackedOperator:
    def __init__(self, D, n, k):
        self.D, self.n, self.k = D, n, k

    def forward(self, theta):
        return (self.D @ theta).reshape(self.n, self.k)

    def adjoint(self, G):
        return self.D.T @ G.ravel()

    def matrix(self):
        return sp.csr_matrix(self.D)

    def subset(self, rows):
        D = self.D.reshape(self.n, self.k, -1)[rows].reshape(len(rows) * self.k, -1)
        return _StackedOperator(D, len(rows), self.k)


class CallableFeatures(FeatureMap):
    r"""A user feature map ``phi(X, j) -> (n, p)`` array: the features of every sample for label ``j``.

    The per-label matrices are stacked into the design ``D`` (``n k x p``) once per bound ``X``;
    a general callable has no structure to exploit, so this costs ``n k p`` memory.
    """

    def __init__(self, phi: Callable[[np.ndarray, int], ArrayLike]) -> None:
        if not callable(phi):
            raise ValueError(f"phi must be callable as phi(X, label_index); got {phi!r}.")
        self.phi = phi

    def _blocks_for(self, X):
        blocks = []
        for j in range(self.n_classes_):
            B = self.phi(X, j)
            if sp.issparse(B):  # a sparse block is fine: the design is built dense per label
                B = B.toarray()
            try:
                blocks.append(as_float_array(f"phi(X, {j})", B))
            except ValueError as exc:
                raise ValueError(
                    f"the feature map phi(X, {j}) must return numbers, an (n_samples, n_params) "
                    f"array; {exc}"
                ) from None
        for j, B in enumerate(blocks):
            if B.ndim != 2 or B.shape[0] != X.shape[0]:
                raise ValueError(
                    f"phi(X, {j}) must return an array of shape (n_samples, n_params); got {B.shape}."
                )
            check_finite(f"phi(X, {j})", B)
        return blocks

    def _fit(self, X):
        self.n_params = self._blocks_for(X[:1])[0].shape[1]

    def bind(self, X: np.ndarray) -> Any:
        blocks = self._blocks_for(X)
        if any(B.shape[1] != self.n_params for B in blocks):
            raise ValueError(f"phi must return {self.n_params} features for every label.")
        D = np.stack(blocks, axis=1).reshape(X.shape[0] * self.n_classes_, self.n_params)
        return _StackedOperator(D, X.shape[0], self.n_classes_)


class GraphFeatures(FeatureMap):
    r"""Node and edge features of a pairwise graph model (Fathony et al. 2018b, §3.2).

    ``theta = [vec Theta_node, vec Theta_edge]`` with ``Theta_node`` of shape ``(d + 1, k)``
    (column ``c`` the weights of label ``c``, last row the intercepts) and ``Theta_edge`` of
    shape ``(d_e + 1, k^2)`` (column ``a k + b`` the weights of the transition ``(a, b)``).
    Blocks for group norms: one per label (node part) and one per transition (edge part).

    ``GraphFeatures()`` without dimensions is a declaration (for
    ``ag.PredictionGame(loss, GraphFeatures(), uncertainty, ag.polytopes.Marginal(graph))``):
    the dimensions are read off the data at compile time (given ones are checked against them).
    """

    def __init__(
        self,
        n_node_inputs: int | None = None,
        n_edge_inputs: int | None = None,
        n_labels: int | None = None,
    ) -> None:
        self.n_node_inputs, self.n_edge_inputs, self.n_labels = (
            n_node_inputs,
            n_edge_inputs,
            n_labels,
        )
        if n_node_inputs is None or n_edge_inputs is None or n_labels is None:
            return  # a declaration: dimensions from the data
        self.n_classes_ = k = int(n_labels)
        self.n_node_params = (n_node_inputs + 1) * k
        self.n_params = self.n_node_params + (n_edge_inputs + 1) * k * k

    def _fit(self, X):  # dimensions are fixed at construction
        return None

    def blocks(self) -> list[np.ndarray]:
        k, split = self.n_classes_, self.n_node_params
        node = [np.arange(c, split, k) for c in range(k)]
        edge = [np.arange(split + t, self.n_params, k * k) for t in range(k * k)]
        return node + edge

    def potentials(
        self, theta: np.ndarray, X1: np.ndarray, Z1: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``psi`` (nodes, k) and ``Psi`` (edges, k, k) of all stacked nodes and edges."""
        k, split = self.n_classes_, self.n_node_params
        psi = X1 @ theta[:split].reshape(-1, k)
        Psi = (Z1 @ theta[split:].reshape(-1, k * k)).reshape(-1, k, k)
        return psi, Psi

    def adjoint(
        self, X1: np.ndarray, Z1: np.ndarray, G_node: np.ndarray, G_edge: np.ndarray
    ) -> np.ndarray:
        """The gradient of ``sum G_node . psi + sum G_edge . Psi`` with respect to ``theta``."""
        k = self.n_classes_
        return np.concatenate([(X1.T @ G_node).ravel(), (Z1.T @ G_edge.reshape(-1, k * k)).ravel()])

    def design(self, X1: np.ndarray, Z1: np.ndarray) -> sp.csr_matrix:
        """Sparse ``D`` with ``[vec psi; vec Psi] = D theta`` (row-major node and edge blocks)."""
        k = self.n_classes_
        return sp.block_diag(
            [
                sp.kron(sp.csr_matrix(X1), sp.identity(k)),
                sp.kron(sp.csr_matrix(Z1), sp.identity(k * k)),
            ],
            format="csr",
        )
