r"""The reduction baselines of Fathony et al. (2018a), Table 4 (ordinal / cost-sensitive), each
trained exactly.

Each model reduces cost-sensitive classification with a cost matrix ``C[y, j]`` (the loss of
predicting class ``j`` when the truth is ``y``; by default the absolute cost ``|y - j|`` of
ordinal regression) to a set of weighted binary or one-sided hinge problems on scores that are
linear in (explicit) features,

.. math::

    g_m(x) = w_m \cdot z(x) + b_m \qquad (m = 1..M),

trained jointly as one convex QP

.. math::

    \min_{W, b}\ \tfrac12 \|W\|_F^2 + [\tfrac12 \|b\|^2] + C \sum_r \omega_r\,
    \big[\mu_r - s_r\, g_{m_r}(x_{n_r})\big]_+ ,

where hinge row ``r`` belongs to sample ``n_r``, acts on binary problem ``m_r`` with sign
``s_r = \pm 1``, margin ``\mu_r`` (1 for the SVMs) and weight ``\omega_r`` (the reduction's
example weight times ``sample_weight[n_r]``).  The offsets are regularised only where the
reduction says so (the threshold terms of Li & Lin's extended kernel).  The models differ only
in their hinge rows and in how the ``M`` binary decisions are turned into a class, so each is a
small function of the labels; the QP is built with :class:`advgame.compile.Program` by the
machinery of :mod:`advgame.baselines` and solved by cvxpy (Clarabel) or HiGHS.
``kernel='rbf'`` uses the explicit eigen features described there.

Models (Fathony et al. 2018a, §7.2, Table 4):

* :class:`ReductionThresholdSVOR` (RED-th) and :class:`ReductionMulticlassSVOR` (RED-mc), Li &
  Lin (2007);
* :class:`OneSidedRegressionSVC` (CSOSR), Tu & Lin (2010);
* :class:`CostSensitiveOneVsOneSVC` (CSOVO), Lin (2014);
* :class:`CostSensitiveOneVsAllSVC` (CSOVA), after Lin (2008).

References
----------
Li, L. and Lin, H.-T. (2007). Ordinal regression by extended binary classification. NIPS 19.
Tu, H.-H. and Lin, H.-T. (2010). One-sided support vector regression for multiclass
cost-sensitive classification. ICML.
Lin, H.-T. (2008). From ordinal ranking to binary classification. PhD thesis, Caltech.
Lin, H.-T. (2014). Reduction from cost-sensitive multiclass classification to one-versus-one
binary classification. ACML.
"""

from collections import namedtuple

import numpy as np
import scipy.sparse as sp

from .svm import _ExactHingeModel, _hinge_program, _rows

__all__ = [
    "ReductionThresholdSVOR",
    "ReductionMulticlassSVOR",
    "OneSidedRegressionSVC",
    "CostSensitiveOneVsOneSVC",
    "CostSensitiveOneVsAllSVC",
    "absolute_cost",
]

#: Hinge rows of a reduction: row ``r`` reads
#: ``ξ_r >= margin_r - sign_r g_{problem_r}(x_{sample_r})`` with slack cost
#: ``C sample_weight[sample_r] weight_r``.  ``direction`` is the column of ``W`` used by the row
#: (``problem`` itself, except for RED-th's single shared direction).
_Hinges = namedtuple("_Hinges", "sample problem direction sign weight margin")


def absolute_cost(k):
    """The absolute (ordinal) cost matrix ``|y - j|`` of ``k`` classes."""
    classes = np.arange(k, dtype=np.float64)
    return np.abs(classes[:, None] - classes[None, :])


def _cost_matrix(cost, k):
    """``cost`` (or the absolute cost when None) as a finite, non-negative ``(k, k)`` float array."""
    if cost is None:
        return absolute_cost(k)
    try:
        matrix = np.array(cost, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"cost must be a numeric (K, K) matrix; got {cost!r}.") from None
    if matrix.shape != (k, k):
        raise ValueError(
            f"cost must be a (K, K) matrix for the K={k} classes (rows: true class, columns: "
            f"predicted class, in sorted label order); got shape {matrix.shape}."
        )
    if not np.all(np.isfinite(matrix)):
        raise ValueError("cost must hold finite values; found NaN or infinity.")
    if np.any(matrix < 0):
        raise ValueError("cost must be non-negative; found a negative entry.")
    return matrix


def _pairs(k):
    """The one-versus-one problems ``(i, j)``, ``i < j``, in lexicographic order: ``(P, 2)``."""
    return np.column_stack(np.triu_indices(k, 1))


class _ReductionSVC(_ExactHingeModel):
    """Shared fit and predict of the reductions: weighted hinge rows on ``M`` linear scores.

    Subclasses give ``_hinges(y, costs)`` (the rows, from the class indices ``y`` and each
    sample's cost row ``costs = cost[y]``), ``_widths(k)`` (the number of columns of ``W`` and of
    ``b``) and ``_scores(X)`` (class scores whose argmax is ``predict``).
    """

    #: Whether ``½||b||²`` joins the objective (Li & Lin's thresholds; plain SVM offsets are free).
    _regularised_offsets = False

    def __init__(self, C=1.0, kernel="linear", gamma=None, cost=None, backend="cvxpy"):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.cost = cost
        self.backend = backend

    def _program(self, Z, y, sample_cost):
        k = self.classes_.size
        self.cost_matrix_ = _cost_matrix(self.cost, k)
        rows = self._hinges(y, self.cost_matrix_[y])
        weight = sample_cost[rows.sample] * rows.weight
        # A zero-weight row is vacuous (its slack is free); dropping it makes a sample of zero
        # weight exactly a removed sample and keeps the QP small.
        keep = weight > 0
        if not np.any(keep):
            raise ValueError(
                "every hinge of the reduction has zero weight under this cost matrix and "
                "sample_weight: there is nothing to learn."
            )
        rows = _Hinges(*(np.broadcast_to(a, weight.shape)[keep] for a in rows))
        n_directions, n_offsets = self._widths(k)
        A_W = _rows(rows.sample, rows.direction, -rows.sign, n_directions, Z)
        A_b = _rows(rows.sample, rows.problem, -rows.sign, n_offsets)
        m = rows.sample.size
        program = _hinge_program(
            type(self).__name__,
            Z,
            n_directions,
            A_W,
            np.arange(m),
            weight[keep],
            A_b,
            margin=rows.margin,
        )
        if self._regularised_offsets:
            program.add_quadratic(program.variables["b"], sp.identity(n_offsets, format="csr"))
        return program

    def _solution(self, program, x):
        """``(W, b)`` from the solution: ``W`` of shape ``(n_directions, p)``."""
        n_directions = self._widths(self.classes_.size)[0]
        W = x[program.variables["W"]].reshape(-1, n_directions).T.copy()
        return W, x[program.variables["b"]].copy()

    def _read(self, program, x):
        self.coef_, self.intercept_ = self._solution(program, x)

    def _binary_scores(self, X):
        """The ``M`` scores ``g_m(x) = w_m . z(x) + b_m``, shape ``(n_samples, M)``."""
        return self._features(X) @ self.coef_.T + self.intercept_

    def predict(self, X):
        """The class with the largest score (ties: the first in ``classes_``)."""
        F = self._scores(X)  # checks fitted before classes_ is read
        return self.classes_[np.argmax(F, axis=1)]


_PARAMETERS = """
    Parameters
    ----------
    C : float, default=1.0
        Cost of the hinge slacks (times the reduction's weights and ``sample_weight``).
    kernel : {'linear', 'rbf'}, default='linear'
        ``'rbf'`` uses the explicit eigen feature map of the training Gram matrix.
    gamma : float or None, default=None
        RBF width ``exp(-gamma ||x - x'||^2)``; None means ``1 / n_features``.
    cost : array-like of shape (n_classes, n_classes) or None, default=None
        ``cost[y, j]``: the loss of predicting class ``j`` when the truth is ``y`` (classes in
        sorted label order), finite and non-negative; None means the absolute cost ``|y - j|``.
    backend : {'cvxpy', 'highs'}, default='cvxpy'
        Solver of the QP, as for :class:`advgame.baselines.WestonWatkinsSVC`.
"""

_COMMON_ATTRIBUTES = """
    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted labels (for the ordinal models: the ordinal order).
    cost_matrix_ : ndarray of shape (n_classes, n_classes)
        The cost matrix used.
    objective_ : float
        The optimal training objective.
    program_ : Program
        The solved QP (``program_.describe()``, ``program_.to_cvxpy()``).
"""


# ------------------------------------------------------------------------------ RED (ordinal)
class _ExtendedBinary(_ReductionSVC):
    r"""Li & Lin's extended binary examples ``((x_n, t), s_{nt})``, one per threshold ``t``.

    ``b_t = -theta_t`` is regularised (the ``<e_t, e_t'>`` term of their extended kernel).
    """

    _regularised_offsets = True
    _shared_direction = True

    def _widths(self, k):
        return (1 if self._shared_direction else k - 1), k - 1

    def _hinges(self, y, costs):
        k = costs.shape[1]
        n, t = np.divmod(np.arange(y.size * (k - 1)), k - 1)
        sign = np.where(y[n] > t, 1.0, -1.0)  # +1: the rank exceeds threshold t
        weight = np.abs(costs[n, t] - costs[n, t + 1])
        direction = np.zeros_like(t) if self._shared_direction else t
        return _Hinges(n, t, direction, sign, weight, 1.0)

    def _read(self, program, x):
        self.coef_, b = self._solution(program, x)
        self.thresholds_ = -b

    def _binary_scores(self, X):
        """``g(x, t) = w_t . z(x) - theta_t``, shape ``(n_samples, n_classes - 1)``."""
        return self._features(X) @ self.coef_.T - self.thresholds_

    def _scores(self, X):
        """Ordinal potentials of the sorted decisions: ``f_j = Σ_{t < j} g_(t)(x)`` with
        ``g_(0) >= g_(1) >= ...``.  The partial sums of a decreasing sequence peak (first) after
        its last positive term, so ``argmax_j f_j`` is the number of positive ``g(x, t)``: the
        prediction.  Where the ``g(x, t)`` already decrease in ``t`` (ordered thresholds) these
        are the potentials of :class:`~advgame.baselines.AllThresholdSVOR`."""
        G = -np.sort(-self._binary_scores(X), axis=1)
        return np.hstack([np.zeros((G.shape[0], 1)), np.cumsum(G, axis=1)])

    def predict(self, X):
        """The class whose index is the number of thresholds ``t`` with ``g(x, t) > 0``."""
        G = self._binary_scores(X)
        return self.classes_[np.sum(G > 0, axis=1)]


_RED_NOTES = """
    Notes
    -----
    ``decision_function`` gives ``f_j(x) = Σ_{t < j} g_(t)(x)``, the partial sums of the
    ``g(x, t)`` sorted in decreasing order (for two classes ``g(x, 0)``); its argmax is
    ``predict`` (the number of positive ``g(x, t)``) even where the ``g(x, t)`` are not monotone
    in ``t``.  The raw ``g(x, t)`` are ``_binary_scores(X)``.
"""


class ReductionThresholdSVOR(_ExtendedBinary):
    r"""RED-th: SVM on Li & Lin's extended binary examples, threshold model (Fathony et al. 2018a, Table 4).

    Li & Lin (2007), "Ordinal regression by extended binary classification", with the threshold
    model and an SVM as binary learner.  Classes ``0..k-1`` in ``classes_`` order; every sample
    ``n`` and threshold ``t = 0..k-2`` give an extended example with label
    ``s_{nt} = +1`` if ``y_n > t`` else ``-1`` and weight
    ``\omega_{nt} = |C[y_n, t] - C[y_n, t+1]|`` (all 1 for the absolute cost).  With one
    direction ``w`` and ``g(x, t) = w \cdot z(x) - \theta_t``, their extended kernel
    ``K(x, x') + \langle e_t, e_{t'} \rangle`` regularises the thresholds like the weights:

    .. math::

        \min_{w, \theta}\ \tfrac12 \|w\|^2 + \tfrac12 \|\theta\|^2
        + C \sum_n \sum_{t=0}^{k-2} \omega_{nt}\, [1 - s_{nt}\, g(x_n, t)]_+ .

    Predicts the class whose index is ``#{t : g(x, t) > 0}``.  Li & Lin's cost bound needs
    V-shaped cost rows (``C[y, :]`` non-increasing up to ``y``, non-decreasing after it), as the
    absolute cost is; other cost matrices are accepted and used through the same weights.
    """

    __doc__ += (
        _PARAMETERS
        + _COMMON_ATTRIBUTES
        + """    coef_ : ndarray of shape (1, n_features_z)
        The direction ``w`` (inputs for ``'linear'``, eigen features for ``'rbf'``).
    thresholds_ : ndarray of shape (n_classes - 1,)
        ``theta_t`` (not constrained to be ordered).
"""
        + _RED_NOTES
    )


class ReductionMulticlassSVOR(_ExtendedBinary):
    r"""RED-mc: Li & Lin's extended binary examples with a direction per threshold (Table 4).

    Fathony et al. (2018a) call it the "reduction framework algorithm using multiclass features" (Li
    & Lin, 2007).  *Our reading*: the extended examples, labels, weights and threshold
    regularisation of :class:`ReductionThresholdSVOR`, but with a separate direction per threshold,
    ``g(x, t) = w_t \cdot z(x) - \theta_t`` (features ``z(x) \otimes e_t``):

    .. math::

        \min_{W, \theta}\ \tfrac12 \sum_t \|w_t\|^2 + \tfrac12 \|\theta\|^2
        + C \sum_n \sum_{t=0}^{k-2} \omega_{nt}\, [1 - s_{nt}\, g(x_n, t)]_+ ,

    i.e. ``k - 1`` independent weighted binary SVMs with regularised offsets.  Predicts the
    class whose index is ``#{t : g(x, t) > 0}``.  With two classes it is RED-th.
    """

    __doc__ += (
        _PARAMETERS
        + _COMMON_ATTRIBUTES
        + """    coef_ : ndarray of shape (n_classes - 1, n_features_z)
        The directions ``w_t``.
    thresholds_ : ndarray of shape (n_classes - 1,)
        ``theta_t``.
"""
        + _RED_NOTES
    )
    _shared_direction = False


# ----------------------------------------------------------------------------------- CSOSR
class OneSidedRegressionSVC(_ReductionSVC):
    r"""CSOSR: cost-sensitive one-sided support vector regression (Fathony et al. 2018a, Table 4).

    Tu & Lin (2010), "One-sided support vector regression for multiclass cost-sensitive
    classification".  One regressor per class, ``r_k(x) = w_k \cdot z(x) + b_k`` (``b_k``
    unregularised), estimates the cost ``c_n[k] = C[y_n, k]`` from one side: with
    ``Z_{nk} = +1`` if ``c_n[k] = \min_j c_n[j]`` (a best class: ``r_k`` should not exceed its
    cost) else ``-1`` (``r_k`` should not fall below it),

    .. math::

        \min_{W, b}\ \sum_k \Big(\tfrac12 \|w_k\|^2
        + C \sum_n [Z_{nk} (r_k(x_n) - c_n[k])]_+\Big) .

    This is the plain one-sided loss of their reduction, with no margin (a hinge at 0, not at
    1), whose sum over ``k`` bounds the cost of ``argmin_k r_k`` when the smallest cost is 0.
    Predicts ``argmin_k r_k(x)`` (ties: the first class).
    """

    __doc__ += (
        _PARAMETERS
        + _COMMON_ATTRIBUTES
        + """    coef_ : ndarray of shape (n_classes, n_features_z)
        The directions ``w_k``.
    intercept_ : ndarray of shape (n_classes,)
        The offsets ``b_k``.

    Notes
    -----
    ``decision_function`` is ``-r_k(x)`` (for two classes ``r_0(x) - r_1(x)``), so its argmax
    is ``predict``.
"""
    )

    def _widths(self, k):
        return k, k

    def _hinges(self, y, costs):
        k = costs.shape[1]
        n, c = np.divmod(np.arange(y.size * k), k)
        target = costs[n, c]
        side = np.where(target == costs.min(axis=1)[n], 1.0, -1.0)  # Z_{nk}
        # ξ >= Z (r - c) = -Z c - (-Z) r: sign -Z, margin -Z c.
        return _Hinges(n, c, c, -side, 1.0, -side * target)

    def _scores(self, X):
        return -self._binary_scores(X)


# ----------------------------------------------------------------------------- CSOVO, CSOVA
class CostSensitiveOneVsOneSVC(_ReductionSVC):
    r"""CSOVO: cost-sensitive one-versus-one SVMs (Fathony et al. 2018a, Table 4).

    Lin (2014), "Reduction from cost-sensitive multiclass classification to one-versus-one binary
    classification".  For every pair ``i < j`` a binary hinge SVM
    ``g_{ij}(x) = w_{ij} \cdot z(x) + b_{ij}`` (``b_{ij}`` unregularised) learns which of the two
    classes is cheaper, on the samples with ``c_n[i] \ne c_n[j]`` (``c_n = C[y_n, :]``), each
    weighted by the cost difference:

    .. math::

        \min_{w_{ij}, b_{ij}}\ \tfrac12 \|w_{ij}\|^2 + C \sum_n |c_n[i] - c_n[j]|\,
        [1 - s_{nij}\, g_{ij}(x_n)]_+ ,\qquad s_{nij} = +1 \text{ if } c_n[i] < c_n[j]
        \text{ else } -1 .

    The ``k (k - 1) / 2`` SVMs are independent and solved as one QP.  Each pair votes for ``i``
    if ``g_{ij}(x) > 0``, else for ``j``; the class with the most votes is predicted (ties: the
    first class).
    """

    __doc__ += (
        _PARAMETERS
        + _COMMON_ATTRIBUTES
        + """    pairs_ : ndarray of shape (n_pairs, 2)
        The pairs ``(i, j)``, ``i < j``, as indices into ``classes_``.
    coef_ : ndarray of shape (n_pairs, n_features_z)
        The directions ``w_ij``.
    intercept_ : ndarray of shape (n_pairs,)
        The offsets ``b_ij``.

    Notes
    -----
    ``decision_function`` gives the vote counts (for two classes: ``+1`` for class 1, ``-1``
    for class 0); its argmax is ``predict``.  The raw ``g_ij(x)`` are ``_binary_scores(X)``.
"""
    )

    def _widths(self, k):
        n_pairs = k * (k - 1) // 2
        return n_pairs, n_pairs

    def _hinges(self, y, costs):
        pairs = _pairs(costs.shape[1])
        n, p = np.divmod(np.arange(y.size * len(pairs)), len(pairs))
        difference = costs[n, pairs[p, 0]] - costs[n, pairs[p, 1]]
        # Equal costs give weight 0: those samples drop out of the pair's SVM.
        return _Hinges(n, p, p, np.where(difference < 0, 1.0, -1.0), np.abs(difference), 1.0)

    def _read(self, program, x):
        super()._read(program, x)
        self.pairs_ = _pairs(self.classes_.size)

    def _scores(self, X):
        G = self._binary_scores(X)
        winner = np.where(G > 0, self.pairs_[:, 0], self.pairs_[:, 1])
        votes = np.zeros((G.shape[0], self.classes_.size))
        np.add.at(votes, (np.arange(G.shape[0])[:, None], winner), 1.0)
        return votes


class CostSensitiveOneVsAllSVC(_ReductionSVC):
    r"""CSOVA: cost transformation plus one-versus-all SVMs (Fathony et al. 2018a, Table 4).

    *Our reading* of the cost-sensitive one-versus-all baseline of Fathony et al. (2018a) (Lin,
    2008: the cost transformation that reduces cost-sensitive to weighted multiclass classification,
    followed by one-versus-all SVMs).  With ``c_n = C[y_n, :]`` and
    ``q_n[l] = \max_j c_n[j] - c_n[l] \ge 0``, sample ``n`` becomes the relabelled copies
    ``(x_n, l)`` with weights ``q_n[l]``; class ``l``'s binary hinge SVM
    ``f_l(x) = w_l \cdot z(x) + b_l`` (``b_l`` unregularised) takes the copies labelled ``l`` as
    positives and those labelled ``l' \ne l`` as negatives, each with its weight:

    .. math::

        \min_{W, b}\ \sum_l \Big(\tfrac12 \|w_l\|^2 + C \sum_n \big(q_n[l]\, [1 - f_l(x_n)]_+
        + \textstyle\sum_{l' \ne l} q_n[l']\, [1 + f_l(x_n)]_+\big)\Big)

    (the negative copies of one sample share a hinge, so they are one row of weight
    ``Σ_{l' != l} q_n[l']``; zero-weight copies drop out).  Predicts ``argmax_l f_l(x)``.
    """

    __doc__ += (
        _PARAMETERS
        + _COMMON_ATTRIBUTES
        + """    coef_ : ndarray of shape (n_classes, n_features_z)
        The directions ``w_l``.
    intercept_ : ndarray of shape (n_classes,)
        The offsets ``b_l``.
"""
    )

    def _widths(self, k):
        return k, k

    def _hinges(self, y, costs):
        k = costs.shape[1]
        q = costs.max(axis=1, keepdims=True) - costs
        n, c = np.divmod(np.arange(y.size * k), k)
        positive = q[n, c]
        negative = q.sum(axis=1)[n] - positive
        # Two rows per (sample, class): the positive copy, then the merged negative copies.
        return _Hinges(
            np.repeat(n, 2),
            np.repeat(c, 2),
            np.repeat(c, 2),
            np.tile([1.0, -1.0], n.size),
            np.column_stack([positive, negative]).ravel(),
            1.0,
        )

    def _scores(self, X):
        return self._binary_scores(X)
