r"""``MinimaxClassifierCV``: the radius of :class:`MinimaxClassifier` chosen by cross-validation
along a warm-started path (the path machinery of :class:`advgame.AdversarialClassifierCV`).

Each fold fits the radii from large to small (strong to weak regularisation), every fit of the
fast solver starting from the previous one's ``A_`` (``warm_start``); the compiled 0-1 program
is solved exactly at each radius.  The folds run in parallel (joblib) and the model is refitted
on all the data at the radius of the best mean score.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import clone
from sklearn.metrics import check_scoring

from .._estimator.inputs import check_classification_fit
from .classifier_cv import cross_validated_path, path_estimator, strength_grid
from .minimax import MinimaxClassifier

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["MinimaxClassifierCV", "neg_brier_score"]


def neg_brier_score(estimator, X, y) -> float:
    r"""Minus the multiclass Brier score ``mean_i sum_j (p_ij - [y_i = c_j])^2`` of
    ``estimator.predict_proba(X)`` over ``estimator.classes_`` (the loss of the minimax Brier
    classifier, Farnia and Tse 2016, Eq. 35; scikit-learn's ``'neg_brier_score'`` needs a
    ``pos_label`` for two classes that are not 0/1 or -1/1)."""
    P = estimator.predict_proba(X)
    Y = np.asarray(y)[:, None] == estimator.classes_[None, :]
    return -float(np.mean(np.sum((P - Y) ** 2, axis=1)))


#: The default score of each loss: the one the model minimises (accuracy for the minimax SVM's
#: 0-1 loss; the Brier score and the log loss on ``predict_proba`` for the others).
DEFAULT_SCORING = {"zero_one": "accuracy", "brier": neg_brier_score, "log": "neg_log_loss"}


class MinimaxClassifierCV(MinimaxClassifier):
    r""":class:`MinimaxClassifier` with its ``radius`` chosen by cross-validation.

    For each fold one path over ``radii`` from large to small, each fit of the fast solver
    warm-started from the previous one's ``A_`` (the ``warm_start`` of
    :class:`MinimaxClassifier`; the compiled 0-1 program, ``solver='auto'`` up to 100,000 game
    rows, is solved exactly at each radius) and certified as a cold fit is; the folds in
    parallel (joblib); the radius of the best mean score; a refit on all the data at it,
    starting from the mean over the folds of the paths' ``A_`` at that radius.  The
    choice equals a ``GridSearchCV`` over the same folds and radii with ``MinimaxClassifier``
    and the same ``scoring``, up to a test row whose prediction flips within the certified
    tolerance ``tol``.

    Parameters
    ----------
    radii : int or array-like of float, default=10
        The candidate radii ``eps`` (``lam`` with ``squared=True``), one for every class's
        ball: a count spaced evenly in log scale from 1 to 1e-5, or the values.
    cv : int, cross-validation generator or iterable, default=5
        As in scikit-learn (``check_cv``: stratified ``k``-fold for an integer).
    scoring : str, callable or None, default=None
        None scores with the loss the model minimises (:data:`DEFAULT_SCORING`: accuracy for
        ``'zero_one'``, :func:`neg_brier_score` for ``'brier'``, ``'neg_log_loss'`` for
        ``'log'``); otherwise a scikit-learn scoring.
    n_jobs : int or None, default=None
        Folds fitted in parallel (joblib; None is one unless in a ``parallel_config``).
    loss, norm, squared, groups, fit_intercept, solver, max_iter, tol, randomized
        As in :class:`MinimaxClassifier`.
    random_state, verbose
        As in :class:`MinimaxClassifier`.

    Attributes
    ----------
    radius_ : float
        The chosen radius (the first of the best mean scores, large to small).
    radii_ : ndarray of shape (n_radii,)
        The radii, large to small.
    scores_ : ndarray of shape (n_folds, n_radii)
        The score of each fold's fit at each radius.
    gaps_ : ndarray of shape (n_folds, n_radii)
        The certified gap (``gap_``) of each fit on the paths.
    others
        Those of :class:`MinimaxClassifier`, from the refit at ``radius_``.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.preprocessing import scale
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> clf = MinimaxClassifierCV(loss="brier", radii=4, cv=3).fit(scale(X), y)
    >>> clf.scores_.shape
    (3, 4)
    """

    #: The refit at ``radius_`` starts from the folds' mean ``A_`` at it (set by :meth:`fit`).
    warm_start = True

    def __init__(
        self,
        radii: int | ArrayLike = 10,
        cv: int | object = 5,
        scoring: str | Callable | None = None,
        n_jobs: int | None = None,
        loss: str = "zero_one",
        norm: int | str = 2,
        squared: bool = False,
        groups: ArrayLike | None = None,
        fit_intercept: bool = True,
        solver: str = "auto",
        max_iter: int = 1000,
        tol: float = 1e-6,
        randomized: bool = False,
        random_state: int | np.random.Generator | None = None,
        verbose: int = 0,
    ) -> None:
        self.radii = radii
        self.cv = cv
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.loss = loss
        self.norm = norm
        self.squared = squared
        self.groups = groups
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.randomized = randomized
        self.random_state = random_state
        self.verbose = verbose

    def _fit_radius(self):
        """The radius of the refit: ``radius_`` (None while the paths run)."""
        return getattr(self, "radius_", None)

    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> MinimaxClassifierCV:
        """Score every radius on every fold (one warm-started path per fold), choose the best
        mean score, and refit on ``X`` (n, d), ``y`` (n,) at it (see the class)."""
        self._check_params()
        if self.loss not in DEFAULT_SCORING:  # before any fold runs (the refit checks it too)
            raise ValueError(f"loss must be one of {tuple(DEFAULT_SCORING)}; got {self.loss!r}.")
        radii = strength_grid(self.radii, "ball", name="radii")
        base = path_estimator(self, MinimaxClassifier, "radius")
        check_classification_fit(clone(base), X, y, sample_weight)  # before the folds split it
        scoring = DEFAULT_SCORING[self.loss] if self.scoring is None else self.scoring
        scorer = check_scoring(base, scoring)
        self.scores_, self.gaps_, self.radius_, self.A_, X, y, sample_weight = cross_validated_path(
            base, "radius", radii, X, y, sample_weight, self.cv, scorer, self.n_jobs
        )
        self.radii_ = radii
        return super().fit(X, y, sample_weight=sample_weight)  # from A_, the folds' mean
