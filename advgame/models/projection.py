r"""Projection-based (Fenchel-Young) estimators with calibrated decoding (Blondel 2019, §3-6).

A linear (or kernel) model gives scores :math:`\theta = g(x) = W^\top x + b` and is trained by
L-BFGS (:func:`advgame.solvers.projection.fit_fenchel_young`) on (Blondel 2019, §6)

.. math::  \min_{W, b}\ \sum_i w_i\, S^\Psi_{\mathcal C}(\theta_i, \varphi(y_i))
           + \frac{\lambda}{2} \|W\|_F^2,
           \qquad S^\Psi_{\mathcal C}(\theta, \varphi(y)) = \Psi^*_{\mathcal C}(\theta)
           + \Psi(\varphi(y)) - \langle\theta, \varphi(y)\rangle

(Eq. 5-6; :class:`advgame.polytopes.FenchelYoungLoss`), a smooth convex objective whose gradient
in :math:`\theta` is :math:`P^\Psi_{\mathcal C}(\theta) - \varphi(y)`.  Prediction follows the
pipeline of Eq. 10: scores, projection :math:`u = P^\Psi_{\mathcal C}(\theta)` (the *marginals*,
``predict_marginals``), then calibrated decoding :math:`\hat y_L(u) = \mathrm{MAP}(-Vu - b)` for the
target loss (Eq. 11, :mod:`advgame.decoding`).  The projection set :math:`\mathcal C` and the
decoding set are chosen independently, as in Blondel (2019), Tables 1, 2, 4, 6 and 7; the default
uses the marginal polytope (the convex hull of the encodings) for both, the combination Proposition
5 and the experiments favour.

With a kernel, :math:`\theta(x) = \sum_j A_j \kappa(x, x_j) + b` over the training points and the
penalty is :math:`\frac{\lambda}{2}\operatorname{tr}(A^\top K A)` (Blondel 2019, App. B.1 uses the
polynomial kernel :math:`(\langle x, x'\rangle + 1)^D`: ``kernel='poly', gamma=1, coef0=1``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.metrics.pairwise import PAIRWISE_KERNEL_FUNCTIONS
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted

from .. import decoding as decompositions
from .._estimator.base import fit_finished, fit_started, progress, record_convergence
from .._estimator.inputs import (
    check_classification_fit,
    check_iteration_params,
    check_rankings,
    check_weights,
    renamed_parameter,
    validate_numeric,
)
from .._validation import check_real
from ..compile.inputs import fresh
from ..declaration import PredictionGame
from ..decoding import apply_flat
from ..exceptions import NotApplicableError
from ..features import KernelFeatures, Multiclass, check_kernel_params
from ..losses import Entropy
from ..permutation import ranks_to_matrices
from ..polytopes import (
    GEOMETRIES,
    Birkhoff,
    Knapsack,
    OrderSimplex,
    Permutahedron,
    Polytope,
    RowStochastic,
    Simplex,
    Unconstrained,
    UnitCube,
)
from ..solvers._progress import Progress
from ..solvers.projection import fit_fenchel_young_game
from ..uncertainty import Exact, SoftMoments

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["ProjectionClassifier", "LabelRanker", "RankingMixin", "knapsack_bounds"]

#: ``loss`` -> (projection sets, decoding sets); the first of each is what ``'auto'`` picks.
CLASSIFIER_SETS = {
    "zero_one": (("simplex", "unit_cube", "none"), ("simplex",)),
    "absolute": (("order_simplex", "unit_cube", "none"), ("order_simplex",)),
    "hamming": (("knapsack", "unit_cube", "none"), ("knapsack", "unit_cube")),
}
#: Label-ranking sets on permutation matrices, and on the permutahedron's score vectors.
RANKING_MATRIX_SETS = (
    ("birkhoff", "row_stochastic", "unit_cube", "none"),
    ("birkhoff", "row_stochastic", "unit_cube"),
)
RANKING_VECTOR_SETS = (("permutahedron", "none"), ("permutahedron",))


def knapsack_bounds(Y: ArrayLike) -> tuple[int, int]:
    r"""``(0, ceil(E|Y| + sqrt(V|Y|)))`` from the label counts of a training indicator matrix,
    the bounds of Blondel (2019, §6; multilabel), capped at the number of labels."""
    counts = np.asarray(Y, dtype=np.float64).sum(axis=1)
    high = int(np.ceil(counts.mean() + counts.std() - 1e-12))
    return 0, int(min(max(high, 1), np.shape(Y)[1]))


def _named_set(name, k, bounds):
    """The polytope behind a set name (``k``: labels; ``bounds``: the knapsack's)."""
    return {
        "simplex": Simplex,
        "unit_cube": UnitCube,
        "order_simplex": OrderSimplex,
        "birkhoff": Birkhoff,
        "row_stochastic": RowStochastic,
        "none": Unconstrained,
        "knapsack": lambda: Knapsack(*bounds),
        "permutahedron": lambda: Permutahedron(np.arange(k, 0, -1.0)),
    }[name]()


def _choose(value, allowed, what, context, instances=False):
    """Resolve ``'auto'`` and check a set name (or, if ``instances``, a Polytope) is allowed."""
    if instances and isinstance(value, Polytope):
        return value
    if value == "auto":
        return allowed[0]
    if not isinstance(value, str) or value not in allowed:
        extra = " or an advgame.polytopes.Polytope" if instances else ""
        raise ValueError(
            f"{what} must be 'auto', one of {allowed}{extra} {context}; got {value!r}."
        )
    return value


class _FenchelYoungModel(BaseEstimator):
    """Shared training of the linear / kernel score model on a projection loss."""

    def __init__(
        self,
        polytope,
        geometry,
        decoding,
        strength,
        fit_intercept,
        kernel,
        gamma,
        degree,
        coef0,
        max_iter,
        tol,
        verbose,
        alpha,
    ):
        # the parameters both estimators share; each still lists them in its own signature,
        # which scikit-learn reads for get_params
        self.polytope = polytope
        self.geometry = geometry
        self.decoding = decoding
        self.strength = strength
        self.fit_intercept = fit_intercept
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.alpha = alpha

    def _check_params(self):
        check_iteration_params(self)
        if self.geometry not in GEOMETRIES:
            raise ValueError(f"geometry must be one of {GEOMETRIES}; got {self.geometry!r}.")
        self.strength_ = renamed_parameter(self, "alpha", "strength")
        check_real("strength", self.strength_, low=0)
        if self.kernel is not None and self.strength_ == 0:
            raise ValueError(
                "a kernel model needs strength > 0 (the RKHS penalty keeps it bounded)."
            )
        if self.kernel is not None:
            if not callable(self.kernel) and self.kernel not in PAIRWISE_KERNEL_FUNCTIONS:
                raise ValueError(
                    f"kernel must be None, a callable or one of {sorted(PAIRWISE_KERNEL_FUNCTIONS)}"
                    f"; got {self.kernel!r}."
                )
            check_kernel_params(self.gamma, self.degree, self.coef0)

    def _design(self, X):
        return X if self.kernel is None else self.feature_map_.gram(X)

    def _fit_scores(self, X, targets, sample_weight):
        """Declare the game (``game_``) and solve its learning problem
        (:func:`advgame.solvers.projection.fit_fenchel_young_game`); sets ``coef_`` and
        friends.

        ``targets`` are the encodings ``(n, *point_shape_)``; ``self.projection_set_`` and
        ``self.point_shape_`` must be set.
        """
        Y = targets.reshape((X.shape[0], *self._set_shape(self.projection_set_)))
        self._check_targets(Y)
        self.game_ = self._declare_game(int(np.prod(Y.shape[1:])))
        self.feature_map_ = fresh(self.game_.features).fit(X, int(np.prod(Y.shape[1:])))
        if self.kernel is not None:
            self.X_fit_ = X

        reporter = Progress(lambda line: progress(self, line), self.verbose)
        phase = reporter.phase(
            "L-BFGS", "the Fenchel-Young objective is smooth", "iteration", self.max_iter
        )
        fitted = fit_fenchel_young_game(
            self.game_,
            self.feature_map_,
            X,
            Y,
            sample_weight,
            max_iter=self.max_iter,
            tol=self.tol,
            progress=phase,
            stacklevel=3,
        )
        self.coef_, self.intercept_, self.objective_, self.n_iter_ = fitted[:4]
        record_convergence(
            self, fitted.gap, self.tol, self.objective_, reason=f"L-BFGS: {fitted.n_iter} steps"
        )
        phase.end(self.converged_, fitted.n_iter, fitted.gap)

    def _declare_game(self, dim):
        r"""The :class:`advgame.PredictionGame` of this model on points of ``dim`` coordinates:
        the entropy of the geometry (Euclidean: ``ag.losses.brier``; KL: ``ag.losses.log``)
        over the projection set, the model's features (:class:`~advgame.features.Multiclass`
        with an unpenalised intercept, or :class:`~advgame.features.KernelFeatures`), soft
        moments of ``strength / 2`` (Euclidean: the game's potentials are twice the scores) or
        ``strength`` (KL), exact moments for ``strength = 0``."""
        euclidean = self.geometry == "euclidean"
        lam = self.strength_ / 2 if euclidean else self.strength_
        if self.kernel is None:
            features = Multiclass(fit_intercept=self.fit_intercept, penalize_intercept=False)
        else:
            features = KernelFeatures(
                self.kernel, self.gamma, self.degree, self.coef0, fit_intercept=self.fit_intercept
            )
        return PredictionGame(
            Entropy("brier" if euclidean else "log", dim),  # dim = 1: two ordinal classes
            features=features,
            uncertainty=SoftMoments(lam) if lam > 0 else Exact(),
            polytope=self.projection_set_,
        )

    def _check_targets(self, Y):
        """The encodings must lie in the projection set, except for the knapsack, whose count
        bounds may exclude some training label sets (Blondel 2019, §6 bounds them by mean + std):
        the loss then uses the unconstrained regulariser for those targets (still convex and
        smooth)."""
        if isinstance(self.projection_set_, Knapsack):
            return
        inside = np.atleast_1d(self.projection_set_.contains(Y))
        if not inside.all():
            raise ValueError(
                f"the target encodings must lie in the projection set {self.projection_set_!r}; "
                f"sample {int(np.argmin(inside))}'s does not. Choose a polytope containing the "
                "encodings (see the polytope parameter)."
            )

    def _set_shape(self, polytope):
        """How points of this model's encodings are shaped for ``polytope``."""
        flat = polytope.point_ndim == 1
        return (int(np.prod(self.point_shape_)),) if flat else self.point_shape_

    def _scores(self, X):
        check_is_fitted(self)
        X = validate_numeric(self, X, reset=False)
        T = self._design(X) @ self.coef_ + self.intercept_
        return T.reshape((X.shape[0], *self.point_shape_))

    def decision_scores(self, X: ArrayLike) -> np.ndarray:
        r"""The model's scores :math:`\theta = g(x)`, shape ``(n, *point_shape_)``."""
        return self._scores(X)

    def predict_marginals(self, X: ArrayLike) -> np.ndarray:
        r"""The projection :math:`u = P^\Psi_{\mathcal C}(\theta)` of the scores (Blondel 2019, Eq. 4),
        e.g. a soft permutation matrix on the Birkhoff polytope (Fig. 3)."""
        T = self._scores(X)
        project = lambda A: self.projection_set_.project(A, self.geometry)  # noqa: E731
        return apply_flat(project, self.projection_set_, T, self.point_shape_)

    def _decode(self, X):
        """Calibrated decoding of the marginals: one output-set vertex per sample."""
        u = self.predict_marginals(X)  # checks that the model is fitted
        return self.decomposition_.decode(u)


class ProjectionClassifier(ClassifierMixin, _FenchelYoungModel):
    r"""Multiclass, ordinal or multilabel classifier trained on a projection loss (Blondel 2019).

    Parameters
    ----------
    loss : {'auto', 'zero_one', 'absolute', 'hamming'}, default='auto'
        The target loss; it fixes the encoding :math:`\varphi` and the calibrated decoding
        (Blondel 2019, App. A).  ``'zero_one'``: one-hot :math:`e_y`; ``'absolute'``: ordinal
        classes in sorted label order with :math:`\varphi(y) = \sum_{i<y} e_i` (the mean absolute
        error); ``'hamming'``: a 2-D 0/1 indicator target (multilabel).  ``'auto'`` is ``'hamming'``
        for an indicator matrix and ``'zero_one'`` otherwise.
    polytope : str or Polytope, default='auto'
        The projection set :math:`\mathcal C`: ``'zero_one'``: ``'simplex'`` (auto),
        ``'unit_cube'``, ``'none'`` (no projection: the squared loss); ``'absolute'``:
        ``'order_simplex'`` (auto), ``'unit_cube'``, ``'none'``; ``'hamming'``: ``'knapsack'``
        (auto), ``'unit_cube'``, ``'none'``.  Any :class:`advgame.polytopes.Polytope` instance
        containing the encodings may be given instead.
    geometry : {'euclidean', 'kl'}, default='euclidean'
        The projection's regulariser :math:`\Psi`; on the simplex KL gives logistic regression.
    decoding : str, default='auto'
        The decoding set of Eq. 11: the marginal polytope (auto; ``'simplex'``,
        ``'order_simplex'``, ``'knapsack'``), or ``'unit_cube'`` for ``'hamming'`` (each label by
        itself, without the knapsack's count bounds).
    knapsack_bounds : 'auto' or (int, int), default='auto'
        ``(low, high)`` label counts of the knapsack; ``'auto'``: ``(0, ceil(mean + std))`` of the
        training label counts (Blondel 2019, §6), see :func:`knapsack_bounds`.
    strength : float, default=1e-2
        :math:`\lambda \ge 0`, the squared-norm penalty (Blondel 2019, §6).
    fit_intercept : bool, default=True
        Add an unpenalised bias :math:`b`.
    kernel : {None, 'linear', 'poly', 'rbf', ...} or callable, default=None
        Kernel model over the training points (:func:`sklearn.metrics.pairwise.pairwise_kernels`).
    gamma, degree, coef0 : kernel parameters (``gamma=None``: ``1 / n_features``).
    max_iter : int, default=1000
        L-BFGS iterations.
    tol : float, default=1e-6
        L-BFGS stops when the largest gradient entry is below ``tol``.
    verbose : int, default=0
        Progress on stderr: 1 prints the stages of ``fit`` and what it found (time, iterations,
        objective) and one line for the L-BFGS phase with its certified gap, 2 also its
        objective at most once a second (the reporter of every solver,
        :mod:`advgame.solvers._progress`).
    alpha : float, deprecated
        The old name of ``strength``; still accepted with a ``FutureWarning``.

    Attributes
    ----------
    classes_ : ndarray
        Labels (sorted; the ordinal order for ``'absolute'``), or ``arange(n_labels)`` for
        multilabel targets.
    decomposition_ : advgame.decoding.LossDecomposition
        The target loss's decomposition, decoded onto the decoding set.
    projection_set_ : Polytope
    coef_, intercept_ : the score model; ``objective_`` and ``n_iter_`` from training.
    gap_ : float
        A certified bound on ``objective_ - optimum`` from a dual point
        (:func:`advgame.solvers.projection.fenchel_young_gap`); ``inf`` where none exists.
    converged_ : {'certified', 'uncertified'}
        ``'certified'`` exactly when ``gap_ <= tol * max(1, |objective_|)``; ``stop_reason_``
        says how L-BFGS stopped.
    strength_ : float
        The penalty used (``strength``, or the deprecated ``alpha`` when given).
    game_ : PredictionGame
        The declared game of the model (see the Notes).
    feature_map_ : Multiclass or KernelFeatures
        The game's feature map fitted on the training inputs.

    Notes
    -----
    ``game_`` is the declared :class:`advgame.PredictionGame` of the model, built from its
    parameters before training, and ``fit`` solves that game's learning problem
    (:func:`advgame.solvers.projection.fit_fenchel_young_game`): the Fenchel-Young loss of
    Blondel (2019) over a polytope :math:`\mathcal C` is a game, since
    :math:`\Psi^*_{\mathcal C}(\theta) = \max_{\mu \in \mathcal C} \langle\theta, \mu\rangle
    - \Psi(\mu)` is the value of an adversary maximising the generalised entropy :math:`-\Psi`
    plus the potentials over :math:`\mathcal C` (Euclidean geometry: ``ag.losses.brier``, KL:
    ``ag.losses.log``; :mod:`advgame.compile.fenchel_young` states the exact correspondence).
    Where the polytope has a linear description, ``game_.compile(X, Y)`` is this model's
    training problem as one exact program (a QP for the Euclidean geometry, an
    exponential-cone program for KL), the bias unpenalised as in the estimator: its optimum is
    ``sum_i w_i (1 - ||phi(y_i)||^2) + 2 objective_`` (Euclidean, at ``theta = 2 [coef_;
    intercept_]``) or ``objective_ - sum_i w_i Psi(phi(y_i))`` (KL, at ``theta = [coef_;
    intercept_]``).  A knapsack whose count bounds exclude some training label sets is the
    exception: the estimator scores those targets with the unconstrained regulariser, which no
    game over the knapsack declares, so ``compile`` refuses them.
    """

    def __init__(
        self,
        loss: str = "auto",
        polytope: str | Polytope = "auto",
        geometry: str = "euclidean",
        decoding: str = "auto",
        knapsack_bounds: str | tuple[int, int] = "auto",
        strength: float = 1e-2,
        fit_intercept: bool = True,
        kernel: str | Callable[..., float] | None = None,
        gamma: float | None = None,
        degree: int = 3,
        coef0: float = 1.0,
        max_iter: int = 1000,
        tol: float = 1e-6,
        verbose: int = 0,
        alpha: float | str = "deprecated",
    ) -> None:
        self.loss = loss
        self.knapsack_bounds = knapsack_bounds
        super().__init__(
            polytope, geometry, decoding, strength, fit_intercept, kernel, gamma, degree, coef0,
            max_iter, tol, verbose, alpha,
        )  # fmt: skip

    def _targets(self, X, y, sample_weight):
        """Validated ``X``, label indices (or indicators), weights, and the resolved loss."""
        try:
            multilabel = type_of_target(y, input_name="y") == "multilabel-indicator"
        except ValueError as exc:
            raise ValueError(f"y must be class labels or a 0/1 indicator matrix: {exc}") from exc
        loss = ("hamming" if multilabel else "zero_one") if self.loss == "auto" else self.loss
        if loss not in CLASSIFIER_SETS:
            raise ValueError(
                f"loss must be 'auto' or one of {tuple(CLASSIFIER_SETS)}; got {self.loss!r}."
            )
        if (loss == "hamming") != multilabel:
            raise ValueError(
                "loss='hamming' needs a 2-D 0/1 indicator target (multilabel) and the other "
                f"losses a 1-D target; got loss={loss!r} with a {type_of_target(y)} target."
            )
        if not multilabel:
            X, index, sample_weight = check_classification_fit(self, X, y, sample_weight)
            return X, index, sample_weight, loss
        X, Y = validate_numeric(self, X, y, multi_output=True)
        self.classes_ = np.arange(Y.shape[1])
        return X, Y.astype(np.int64), check_weights(sample_weight, X), loss

    def _knapsack(self, Y):
        if isinstance(self.knapsack_bounds, str) and self.knapsack_bounds == "auto":
            return knapsack_bounds(Y)
        bounds = self.knapsack_bounds
        if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
            raise ValueError(f"knapsack_bounds must be 'auto' or (low, high); got {bounds!r}.")
        return tuple(bounds)

    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> ProjectionClassifier:
        """Fit on features ``X`` and labels ``y`` (1-D) or a 0/1 indicator matrix (multilabel)."""
        started = fit_started(self, X)
        self._check_params()
        X, y, sample_weight, loss = self._targets(X, y, sample_weight)
        k = self.classes_.size
        if loss == "hamming":
            bounds = self._knapsack(y)
            decomposition = decompositions.hamming_multilabel(k, *bounds)
        else:
            bounds = None
            decomposition = getattr(decompositions, loss)(k)
        projections, decodings = CLASSIFIER_SETS[loss]
        context = f"for loss={loss!r}"
        chosen = _choose(self.polytope, projections, "polytope", context, instances=True)
        if isinstance(chosen, Polytope) and chosen.point_ndim != 1:
            raise ValueError(
                f"polytope={chosen!r} holds {chosen.point_ndim}-D points (matrices), but "
                f"loss={loss!r} encodes each label as a vector of "
                f"{int(np.prod(decomposition.point_shape))} coordinates: give a polytope of "
                "vectors (Simplex, UnitCube, OrderSimplex, Knapsack, ...); rankings go to "
                "LabelRanker."
            )
        self.projection_set_ = (
            chosen if isinstance(chosen, Polytope) else _named_set(chosen, k, bounds)
        )
        decode_on = _named_set(_choose(self.decoding, decodings, "decoding", context), k, bounds)
        self.decomposition_ = decomposition.with_output_set(decode_on)
        self.loss_ = loss
        self.point_shape_ = decomposition.point_shape
        self._fit_scores(X, decomposition.phi(y), sample_weight)
        fit_finished(self, started)
        return self

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Labels (1-D) or a 0/1 indicator matrix (multilabel) by calibrated decoding (Eq. 11)."""
        vertex = self._decode(X)
        if self.loss_ == "hamming":
            return vertex.astype(np.int64)
        index = vertex.argmax(axis=1) if self.loss_ == "zero_one" else vertex.sum(axis=1)
        return self.classes_[index.astype(np.int64)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        multilabel = self.loss in ("auto", "hamming")
        tags.classifier_tags.multi_label = multilabel
        tags.target_tags.multi_output = multilabel
        tags.target_tags.single_output = self.loss != "hamming"
        return tags


class RankingMixin:
    """``score`` and tags shared by the label rankers (targets: rankings, scored by Hamming)."""

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> float:
        """``1 -`` the (weighted) mean entry-wise Hamming loss between the true permutation
        matrices and :meth:`predict_matrix` (Blondel 2019, Tables 1-3)."""
        check_is_fitted(self)
        R = check_rankings(y, np.shape(X)[0], self.n_labels_)
        wrong = np.mean(ranks_to_matrices(R) != self.predict_matrix(X), axis=(1, 2))
        weights = None if sample_weight is None else check_weights(sample_weight, R)
        return 1.0 - float(np.average(wrong, weights=weights))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags


class LabelRanker(RankingMixin, _FenchelYoungModel):
    r"""Label ranking with projection losses and calibrated decoding (Blondel 2019, §6, Tables 1-3).

    ``fit(X, R)`` takes full rankings ``R[i, j]`` = rank of label ``j`` (1 = best); ``predict``
    returns rankings of the same form.

    Parameters
    ----------
    polytope : str or Polytope, default='birkhoff'
        Projection set.  On permutation matrices (scores :math:`\theta \in \mathbb R^{k\times k}`,
        :math:`\varphi(y)` the permutation matrix): ``'birkhoff'`` (the marginal polytope),
        ``'row_stochastic'`` (:math:`\triangle^{k\times k}`), ``'unit_cube'``
        (:math:`[0,1]^{k\times k}`), ``'none'`` (:math:`\mathbb R^{k\times k}`, the squared loss;
        with ``geometry='kl'`` the orthant :math:`\mathbb R^{k\times k}_+`), or a Polytope instance
        on ``k x k`` (or flattened) points.  ``'permutahedron'``: scores
        :math:`\theta \in \mathbb R^k` and :math:`\varphi(y)_j = k + 1 - R_j` (App. B.1).
    geometry : {'euclidean', 'kl'}, default='euclidean'
    decoding : {'auto', 'birkhoff', 'row_stochastic', 'unit_cube', 'permutahedron'}, default='auto'
        Decoding set of Eq. 11 for the Hamming loss (:math:`V = -I`): ``'birkhoff'`` (auto) solves
        an assignment problem; ``'row_stochastic'`` / ``'unit_cube'`` give 0/1 matrices that need
        not be permutations (the supersets of Tables 1-2: use :meth:`predict_matrix` and
        :meth:`score`; :meth:`predict` refuses).  With the permutahedron the decoding is sorting
        the scores (its MAP), the only choice.
    strength, fit_intercept, kernel, gamma, degree, coef0, max_iter, tol, verbose, alpha
        As in :class:`ProjectionClassifier`.

    Attributes
    ----------
    n_labels_ : int
    projection_set_, decomposition_, point_shape_, coef_, intercept_, objective_, n_iter_,
    gap_, converged_, stop_reason_, strength_, game_, feature_map_

    Notes
    -----
    ``game_`` is the declared :class:`advgame.PredictionGame` of the model and ``fit`` solves
    its learning problem, as for :class:`ProjectionClassifier` (its Notes say how
    ``game_.compile`` relates to ``objective_``).
    """

    def __init__(
        self,
        polytope: str | Polytope = "birkhoff",
        geometry: str = "euclidean",
        decoding: str = "auto",
        strength: float = 1e-2,
        fit_intercept: bool = True,
        kernel: str | Callable[..., float] | None = None,
        gamma: float | None = None,
        degree: int = 3,
        coef0: float = 1.0,
        max_iter: int = 1000,
        tol: float = 1e-6,
        verbose: int = 0,
        alpha: float | str = "deprecated",
    ) -> None:
        super().__init__(
            polytope, geometry, decoding, strength, fit_intercept, kernel, gamma, degree, coef0,
            max_iter, tol, verbose, alpha,
        )  # fmt: skip

    def _vector_encoding(self):
        return "permutahedron" in (self.polytope, self.decoding)

    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> LabelRanker:
        """Fit on features ``X`` (n, d) and rankings ``y = R`` (n, k), ``R[i, j]`` = rank of label j
        (named ``y`` as scikit-learn passes it by keyword)."""
        started = fit_started(self, X)
        self._check_params()
        X = validate_numeric(self, X)
        R = check_rankings(y, X.shape[0], estimator=self)
        sample_weight = check_weights(sample_weight, X)
        k = self.n_labels_ = R.shape[1]
        if self._vector_encoding():
            projections, decodings = RANKING_VECTOR_SETS
            context = "with the permutahedron (score vectors)"
            decomposition = decompositions.spearman(k)
        else:
            projections, decodings = RANKING_MATRIX_SETS
            context = "on permutation matrices"
            decomposition = decompositions.hamming_ranking(k)
        self.point_shape_ = decomposition.point_shape
        chosen = _choose(self.polytope, projections, "polytope", context, instances=True)
        self.projection_set_ = (
            chosen if isinstance(chosen, Polytope) else _named_set(chosen, k, None)
        )
        decode_on = _named_set(_choose(self.decoding, decodings, "decoding", context), k, None)
        self.decomposition_ = decomposition.with_output_set(decode_on)
        self._fit_scores(X, decomposition.phi(R), sample_weight)
        fit_finished(self, started)
        return self

    def predict_matrix(self, X: ArrayLike) -> np.ndarray:
        """Decoded 0/1 matrices ``(n, k, k)`` (permutation matrices unless decoding on a superset)."""
        vertex = self._decode(X)
        if self.point_shape_ != (self.n_labels_,):
            return vertex
        ranks = self.n_labels_ + 1 - np.rint(vertex).astype(np.int64)
        return decompositions.hamming_ranking(self.n_labels_).phi(ranks)

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Rankings ``(n, k)``: ``R[i, j]`` is the predicted rank of label ``j`` (1 = best)."""
        P = self.predict_matrix(X)
        if not (np.all(P.sum(axis=1) == 1) and np.all(P.sum(axis=2) == 1)):
            raise NotApplicableError(
                f"decoding on {self.decomposition_.output_set!r} does not produce permutations; "
                "use predict_matrix (0/1 matrices) and score, or decoding='birkhoff'."
            )
        return P.argmax(axis=2) + 1
