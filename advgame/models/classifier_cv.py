r"""``AdversarialClassifierCV``: the strength of :class:`AdversarialClassifier` chosen by
cross-validation along a warm-started, certified path (scikit-learn's ``LogisticRegressionCV``
pattern).

Each fold fits the strengths from strong to weak regularisation, every fit starting from the
previous one's primal and dual points (``warm_start``, :func:`advgame.solvers.auto.fit_first_order`)
and certified like a cold fit; the folds run in parallel (joblib).  The score is the declared
loss (:func:`advgame.metrics.make_loss_scorer`) unless ``scoring`` is given, and the model is
refitted on all the data at the strength of the best mean score.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv
from sklearn.utils import _safe_indexing, indexable
from sklearn.utils.validation import column_or_1d

from .._estimator.base import fit_finished, fit_started
from .._estimator.inputs import check_classification_fit, check_strength
from ..losses import LossMatrix
from ..metrics import make_loss_scorer
from .classifier import AdversarialClassifier

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..uncertainty import UncertaintySet

__all__ = ["AdversarialClassifierCV", "cross_validated_path", "path_estimator", "strength_grid"]

#: ``strengths=n`` is ``n`` strengths evenly spaced in log scale from ``STRENGTH_RANGE[0]``
#: (strong) to ``STRENGTH_RANGE[1]`` (weak): ``lam`` of soft moments (the weighted mean loss
#: plus ``lam/2 ||theta||^2``; ``1/n`` is scikit-learn's ``C = 1``) or a ball's radius.
STRENGTH_RANGE = (1.0, 1e-5)


def strength_grid(
    strengths: int | ArrayLike, uncertainty: str | UncertaintySet, name: str = "strengths"
) -> np.ndarray:
    """The strengths of a path, strong to weak (decreasing).

    Parameters
    ----------
    strengths : int or array-like of float
        A number of strengths (at least 1) spaced evenly in log scale over
        :data:`STRENGTH_RANGE`, or the strengths themselves (each valid for ``uncertainty``:
        ``> 0`` for ``'soft'``, ``>= 0`` for a ball's radius; distinct).
    uncertainty : str or UncertaintySet
        The estimator's ``uncertainty`` (for the check of the strengths).
    name : str, default='strengths'
        The parameter's name in the error messages.

    Returns
    -------
    ndarray of shape (n_strengths,)
        Decreasing strengths.

    Raises
    ------
    ValueError
        For a count below 1, an empty or repeated list, or a strength that is not valid.
    """
    if isinstance(strengths, (int, np.integer)) and not isinstance(strengths, bool):
        if strengths < 1:
            raise ValueError(f"{name} must be a count >= 1 or a list; got {strengths!r}.")
        return np.geomspace(*STRENGTH_RANGE, int(strengths))
    grid = np.asarray(strengths, dtype=float).ravel() if np.ndim(strengths) else None
    if grid is None or grid.size == 0:
        raise ValueError(f"{name} must be a count >= 1 or a non-empty list; got {strengths!r}.")
    for strength in grid:
        check_strength(float(strength), uncertainty)
    grid = np.sort(grid)[::-1]
    if np.any(grid[1:] == grid[:-1]):
        raise ValueError(f"{name} must be distinct; got {strengths!r}.")
    return grid


def fold_path(estimator, parameter, X, y, sample_weight, train, test, values, scorer):
    """Fit ``estimator`` (warm-started) on the rows ``train`` with its ``parameter`` set to each
    of ``values`` in turn and score it on the rows ``test``: ``(scores, gaps, points)``, one
    per value, ``points`` the fits' parameters where they mean the same on other rows (the
    estimator's ``_path_point``; None otherwise).

    Each fit is ``fit`` but for the training rows: checked, put in canonical form and bound
    to the feature map once for the fold (``_training_rows``), since only ``parameter``
    changes along the path.  The rows also carry the smoothing solver's memo
    (:class:`~advgame.solvers.smoothing.SmoothingMemo`): a fit that starts where the last one
    ended, at the same smoothing, takes its first evaluation and L-BFGS pairs from there.
    Where the memo serves, the fits reach the certified optima of a loop of ``fit`` calls
    with ``warm_start`` in fewer steps rather than the same bits; elsewhere they are those
    fits to the bit."""
    estimator = clone(estimator).set_params(warm_start=True)
    X_train, y_train = _safe_indexing(X, train), _safe_indexing(y, train)
    X_test, y_test = _safe_indexing(X, test), _safe_indexing(y, test)
    weights = None if sample_weight is None else _safe_indexing(sample_weight, train)
    estimator._check_params()
    rows = estimator._training_rows(X_train, y_train, weights)
    scores, gaps, points = np.empty(values.size), np.empty(values.size), []
    for j, value in enumerate(values):
        setattr(estimator, parameter, float(value))  # set_params would re-read the signature
        started = fit_started(estimator, X_train)
        estimator._check_params()
        estimator._fit_rows(rows)
        fit_finished(estimator, started)
        scores[j], gaps[j] = scorer(estimator, X_test, y_test), estimator.gap_
        point = estimator._path_point()
        points.append(None if point is None else point.copy())
    return scores, gaps, points


def path_estimator(cv_estimator, base_class, parameter):
    """The ``base_class`` estimator of a CV estimator's paths: every parameter of
    ``base_class`` but ``parameter`` (the one the paths vary) and ``warm_start``, read from
    ``cv_estimator``."""
    names = base_class._get_param_names()
    shared = (name for name in names if name not in (parameter, "warm_start"))
    return base_class(**{name: getattr(cv_estimator, name) for name in shared})


def cross_validated_path(base, parameter, values, X, y, sample_weight, cv, scorer, n_jobs):
    """The scores and certified gaps ``(n_folds, n_values)`` of one warm-started path over
    ``values`` of ``base``'s ``parameter`` per fold of ``cv`` (:func:`fold_path`; the folds in
    parallel through joblib), the value of the best mean score (the first of ties, in the order
    of ``values``), the start of the refit at it and the inputs as the refit takes them:
    ``(scores, gaps, best, start, X, y, sample_weight)``.

    ``start`` is the mean over the folds of the paths' parameters at ``best`` (the refit of
    scikit-learn's ``LogisticRegressionCV`` starts there too), or None where the fits'
    parameters are tied to their rows (kernel features) or differ in shape."""
    X, y, sample_weight = indexable(X, y, sample_weight)
    if np.ndim(y) == 2:  # a column vector (warned about by the fit checks): scorers want 1-D
        y = column_or_1d(y)
    folds = list(check_cv(cv, y, classifier=True).split(X, y))
    paths = Parallel(n_jobs=n_jobs)(
        delayed(fold_path)(base, parameter, X, y, sample_weight, train, test, values, scorer)
        for train, test in folds
    )
    scores = np.array([scores for scores, _, _ in paths])
    best_index = int(np.argmax(scores.mean(axis=0)))
    points = [points[best_index] for _, _, points in paths]
    shapes = {None if point is None else point.shape for point in points}
    start = np.mean(points, axis=0) if len(shapes) == 1 and None not in shapes else None
    gaps = np.array([gaps for _, gaps, _ in paths])
    return scores, gaps, float(values[best_index]), start, X, y, sample_weight


class AdversarialClassifierCV(AdversarialClassifier):
    r""":class:`AdversarialClassifier` with its ``strength`` chosen by cross-validation.

    For each fold one path over ``strengths`` from strong to weak regularisation, each fit
    warm-started from the previous one's primal and dual points (the ``warm_start`` of
    :class:`AdversarialClassifier`) and certified as a cold fit is; the folds in parallel
    (joblib); the strength of the best mean score; a refit on all the data at it, starting
    from the mean over the folds of the paths' parameters at that strength (as
    ``LogisticRegressionCV``'s refit does; explicit features only: kernel features' parameters
    are tied to the rows they were fitted on), certified as a cold fit is.  A fold's
    training rows are checked, put in canonical form and bound to the feature map once, not
    at every strength (at 20,000 rows this took about a third off the cross-validated fit:
    docs/results/defaults.md, seventh run), and each fit that starts where the last one
    ended resumes from the smoothing solver's memo of the fold (its last evaluation and
    L-BFGS pairs, :class:`~advgame.solvers.smoothing.SmoothingMemo`: a third fewer
    evaluations at 20,000 rows, ninth run).  The choice equals a ``GridSearchCV`` over the
    same folds and strengths with ``AdversarialClassifier`` and the same ``scoring``, up to a test row whose prediction
    flips within the certified tolerance ``tol`` (warm and cold fits reach the same certified
    optimum, not the same point).

    Parameters
    ----------
    strengths : int or array-like of float, default=10
        The candidate strengths (``lam`` of soft moments, a ball's radius): a count spaced
        evenly in log scale from 1 to 1e-5 (:data:`STRENGTH_RANGE`), or the values.
    cv : int, cross-validation generator or iterable, default=5
        As in scikit-learn (``check_cv``: stratified ``k``-fold for an integer).
    scoring : str, callable or None, default=None
        None scores with the declared loss (:func:`advgame.metrics.make_loss_scorer`: minus
        its mean, so that the choice minimises it); otherwise a scikit-learn scoring.
    n_jobs : int or None, default=None
        Folds fitted in parallel (joblib; None is one unless in a ``parallel_config``).
    loss, alpha, features, kernel, gamma, degree, coef0, uncertainty, solver, backend
        As in :class:`AdversarialClassifier` (the warm starts serve its ``'smoothing'``
        solver, the default for soft moments; the other solvers fit each strength cold).
        ``sample_weight`` weights the training rows of every fit, not the scores (as
        ``GridSearchCV`` without metadata routing).
    max_iter, tol, certify, batch_size, random_state, verbose, abstain_label, classes_order
        As in :class:`AdversarialClassifier`.

    Attributes
    ----------
    strength_ : float
        The chosen strength (the first of the best mean scores, strong to weak).
    strengths_ : ndarray of shape (n_strengths,)
        The strengths, strong to weak.
    scores_ : ndarray of shape (n_folds, n_strengths)
        The score of each fold's fit at each strength.
    gaps_ : ndarray of shape (n_folds, n_strengths)
        The certified gap (``gap_``) of each fit on the paths.
    others
        Those of :class:`AdversarialClassifier`, from the refit at ``strength_``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = AdversarialClassifierCV(strengths=5, cv=3).fit(X, y)
    >>> clf.scores_.shape
    (3, 5)
    """

    #: The refit at ``strength_`` starts from the folds' mean parameters at it (``theta_``,
    #: set by :meth:`fit`; cold for kernel features).
    warm_start = True

    def __init__(
        self,
        strengths: int | ArrayLike = 10,
        cv: int | object = 5,
        scoring: str | Callable | None = None,
        n_jobs: int | None = None,
        loss: str | LossMatrix | ArrayLike = "zero_one",
        alpha: float = 0.5,
        features: str | Callable[[np.ndarray, int], ArrayLike] = "multiclass",
        kernel: str | Callable[..., float] | None = None,
        gamma: float | None = None,
        degree: int = 3,
        coef0: float = 1.0,
        uncertainty: str | UncertaintySet = "soft",
        solver: str = "auto",
        backend: str = "auto",
        max_iter: int = 1000,
        tol: float = 1e-3,
        certify: str | bool = "auto",
        batch_size: int = 64,
        random_state: int | np.random.Generator | None = None,
        verbose: int = 0,
        abstain_label: int | float | str | None = None,
        classes_order: ArrayLike | None = None,
    ) -> None:
        self.strengths = strengths
        self.cv = cv
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.loss = loss
        self.alpha = alpha
        self.features = features
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.uncertainty = uncertainty
        self.solver = solver
        self.backend = backend
        self.max_iter = max_iter
        self.tol = tol
        self.certify = certify
        self.batch_size = batch_size
        self.random_state = random_state
        self.verbose = verbose
        self.abstain_label = abstain_label
        self.classes_order = classes_order

    def _fit_strength(self):
        """The strength of the refit: ``strength_`` (None while the paths run)."""
        return getattr(self, "strength_", None)

    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> AdversarialClassifierCV:
        """Score every strength on every fold (one warm-started path per fold), choose the
        best mean score, and refit on ``X`` (n, d), ``y`` (n,) at it (see the class)."""
        self._check_params()  # the estimator's own parameters, before any fold runs
        strengths = strength_grid(self.strengths, self.uncertainty)
        base = path_estimator(self, AdversarialClassifier, "strength")
        # X, y and the weights checked as the refit will check them, before the folds split them
        declared = self.loss if isinstance(self.loss, LossMatrix) else None
        check_classification_fit(clone(base), X, y, sample_weight, declared)
        scorer = make_loss_scorer() if self.scoring is None else check_scoring(base, self.scoring)
        self.scores_, self.gaps_, self.strength_, start, X, y, sample_weight = cross_validated_path(
            base, "strength", strengths, X, y, sample_weight, self.cv, scorer, self.n_jobs
        )
        self.strengths_ = strengths
        self.theta_, self.dual_ = start, None  # the refit's start (a dual point is per row)
        return super().fit(X, y, sample_weight=sample_weight)
