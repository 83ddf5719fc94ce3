r"""Farnia and Tse's (2016) minimax models: ``MinimaxClassifier``, ``MinimaxRegressor``, robust
feature selection.

Theorem 3 turns the maximum conditional entropy problem over the moment set ``Gamma(Q)`` (Eq. 19)
into a regularised generalised linear model (Eq. 21):

.. math::  \min_A \; \sum_i w_i \big[F(A x_i) - \theta(y_i)^\top A x_i\big]
           + \sum_{r} \epsilon_r \|A_r\|_*,

with ``F`` the conjugate of the loss's generalised entropy (:class:`advgame.Game` of
``losses.zero_one`` (minimax SVM, Eq. 29), ``losses.brier`` (Eq. 35), ``losses.log`` (Eq. 28) or
``losses.quadratic`` (Eq. 32)), the one-hot encoding ``theta(Y)`` of the first ``t = K - 1``
classes (the last class is pinned at potential 0) or ``theta(Y) = Y`` for regression, and the
penalty of :class:`advgame.uncertainty.MomentBalls`.  Prediction applies the Bayes rule to the
worst-case conditional ``∇F(A x)`` (Eq. 22).

Each estimator declares its game (``game_``, a :class:`advgame.PredictionGame` of the loss,
``[x; 1]`` features and the moment balls).  Two solvers reach the same optimum: ``compile`` solves
the program ``game_.compile(X, y)`` (:class:`advgame.compile.minimax.MinimaxProgram`: an LP for
the 0-1 loss with a polyhedral penalty, solved by HiGHS; otherwise Clarabel) and ``fast``
runs L-BFGS (smooth loss and penalty) or accelerated proximal gradient (FISTA with restarts; every
penalty has a closed-form prox; :func:`advgame.solvers.fista.fit_proximal`).  The non-smooth 0-1
loss is smoothed (Nesterov) with a decreasing ``mu`` (:func:`advgame.closed_forms.zero_one_smoothed`)
and stops when a dual bound certifies the tolerance
(:func:`advgame.solvers.fista.fit_smoothed_zero_one`).  Every fit records ``duality_gap_``: the objective minus a lower bound
from a dual-feasible conditional (weak duality, Theorem 3), so ``objective_ - duality_gap_ <=
optimum <= objective_``; ``gap_`` and ``converged_`` say the same in the vocabulary every
estimator shares (:func:`advgame._estimator.base.record_convergence`).
"""

from __future__ import annotations

import copy
import numbers
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.utils.validation import check_array, check_is_fitted

from .. import losses
from .._estimator.base import (
    ProgramNotPickled,
    fit_finished,
    fit_started,
    progress,
    record_convergence,
)
from .._estimator.inputs import (
    TrainingRows,
    check_classification_fit,
    check_iteration_params,
    check_weights,
    validate_numeric,
)
from .._validation import check_real, unit_weights, weight_total
from ..declaration import PredictionGame
from ..exceptions import ConvergenceWarning, SolverError
from ..features import Multiclass
from ..game import map_label
from ..solvers._progress import Progress
from ..solvers.fista import MONITOR_EVERY as MONITOR_EVERY  # its home: solvers.fista
from ..solvers.fista import SMOOTHING_FLOOR as SMOOTHING_FLOOR
from ..solvers.fista import MinimaxObjective, fit_proximal, fit_smoothed_zero_one
from ..uncertainty import MomentBalls

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["MinimaxClassifier", "MinimaxRegressor", "FeatureSelection", "robust_feature_selection"]

_CLASSIFIER_LOSSES = ("zero_one", "brier", "log")
_SOLVERS = ("auto", "compile", "fast")
#: ``solver='auto'`` compiles a 0-1 model (an LP / SOCP that HiGHS / Clarabel solve exactly; the
#: fast solver is first order on a non-smooth problem) up to this many game rows ``n * K``.
AUTO_COMPILE_ROWS = 100_000
#: Largest target magnitude ``max |y|`` :class:`MinimaxRegressor` accepts: its objective holds
#: ``y a^T x`` and the second moments of ``y``, which overflow float64 from about ``1e154``, and
#: the solvers lose all accuracy long before (as for features, the limit is ``1e20``).
MAX_TARGET_MAGNITUDE = 1e20


class _MinimaxModel(ProgramNotPickled, BaseEstimator):
    """Shared fitting machinery; subclasses define the game, the encoding and prediction."""

    # ----------------------------------------------------------------------- configuration
    def _check_params(self):
        check_iteration_params(self)
        if self.solver not in _SOLVERS:
            raise ValueError(f"solver must be one of {_SOLVERS}; got {self.solver!r}.")

    def _declare(self, loss, total_weight):
        """The declaration ``game_``: the loss, ``[x; 1]``, the moment balls, the simplex."""
        radius = self._fit_radius()
        if radius is None:  # the 1/sqrt(n) scale of Theorem 4's bound (1/n for Theorem 5)
            radius = 1.0 / total_weight if self.squared else 1.0 / np.sqrt(total_weight)
        balls = MomentBalls(radius, self.norm, self.squared, self.groups)
        self.game_ = PredictionGame(loss, Multiclass(self.fit_intercept), balls)

    def _fit_radius(self):
        """The radius ``fit`` uses: ``radius`` (the one chosen by cross-validation in
        :class:`advgame.MinimaxClassifierCV`)."""
        return self.radius

    @property
    def _game(self):
        """The per-sample game of the declared loss (``F``, ``∇F``, ``H``)."""
        return self.game_.game()

    def _n_rows(self, Theta):
        """Rows of ``A``: ``K - 1`` (last class pinned) for classification, 1 for regression."""
        return Theta.shape[1] - 1 if self._pinned else 1

    def _design(self, X):
        return np.hstack([X, np.ones((X.shape[0], 1))]) if self.fit_intercept else X

    # -------------------------------------------------------------------------- objective
    def _objective(self, X1, Theta, w, balls):
        """Eq. 21 on the training data (:class:`advgame.solvers.fista.MinimaxObjective`)."""
        match_mean = self._match_mean if self.fit_intercept else None
        return MinimaxObjective(
            self._game,
            X1,
            Theta,
            w,
            balls,
            self.n_features_in_,
            self._n_rows(Theta),
            self._full_potentials,
            match_mean,
            self._labels_in_set(Theta),
        )

    # ---------------------------------------------------------------------------- fitting
    def _fit(self, X, y, Theta, sample_weight, t):
        X1 = self._design(X)
        w = unit_weights(sample_weight)
        balls = copy.deepcopy(self.game_.uncertainty).bind(t, self.n_features_in_)
        self.uncertainty_ = balls
        objective = self._objective(X1, Theta, w, balls)
        solver = self.solver
        if solver == "auto":
            nonsmooth = self._game.structure is not None  # the 0-1 loss matrix game
            solver = (
                "compile" if nonsmooth and X.shape[0] * (t + 1) <= AUTO_COMPILE_ROWS else "fast"
            )
        A0 = np.zeros((t, X1.shape[1]))
        if getattr(self, "warm_start", False) and getattr(self, "A_", None) is not None:
            if self.A_.shape == A0.shape:
                A0 = self.A_.copy()

        report = Progress(lambda line: progress(self, line), self.verbose)
        bound = np.nan  # a compiled 0-1 model is certified by HiGHS / Clarabel themselves
        if solver == "compile":
            A, message = self._compile(X, y, sample_weight)
            n_iter = 1
        elif self._game.structure is not None:
            A, n_iter, message, bound = fit_smoothed_zero_one(
                objective, A0, self.max_iter, self.tol, report
            )
        else:
            A, n_iter, message = fit_proximal(objective, A0, self.max_iter, self.tol, report)
        self.objective_ = objective(A)[0]
        if not (np.all(np.isfinite(A)) and np.isfinite(self.objective_)):
            raise SolverError(
                f"the {solver} solver diverged (objective {self.objective_:g}): the program is "
                "unbounded below (give a positive radius), or the data are beyond float64's range "
                f"in its arithmetic (max |X| = {np.max(np.abs(X)):.3g}, max |theta(y)| = "
                f"{np.max(np.abs(Theta)):.3g}; standardise them)."
            )
        if self._game.structure is None:  # ∇F is unique: the adversary is the dual solution
            bound = objective.lower_bound(objective.adversary(A))
        self.duality_gap_ = self.objective_ - bound
        if not message.startswith(("compiled", "L-BFGS: CONVERGENCE", "FISTA: converged")):
            self._check_bounded(X1, Theta, w, balls)
        if message.startswith("FISTA") and not message.startswith("FISTA: converged"):
            warnings.warn(
                f"{type(self).__name__}: {message.split(' (')[0]}; the certified duality gap is "
                f"{self.duality_gap_:.3g} (objective {self.objective_:.6g}). Increase max_iter, "
                "or standardise the features: badly scaled features slow the first-order solver.",
                ConvergenceWarning,
                stacklevel=4,  # the user's fit: _fit <- _fit_rows <- fit
            )
        self.A_ = A
        self.n_iter_, self.solver_ = n_iter, solver
        exact = solver == "compile"  # HiGHS / Clarabel certify the compiled program themselves
        gap = self.duality_gap_ if np.isfinite(self.duality_gap_) else (0.0 if exact else np.inf)
        record_convergence(self, gap, self.tol, self.objective_, exact=exact, reason=message)
        return self

    def _check_bounded(self, X1, Theta, w, balls):
        """Raise if Eq. 21 is unbounded below: some direction ``D`` has a negative recession
        value ``sum_i w_i F_inf(D x_i) - theta_i^T D x_i + R(D)`` (an LP/SOCP in cvxpy, run
        only when the fast solver did not converge)."""
        import cvxpy as cp

        D = cp.Variable((self._n_rows(Theta), X1.shape[1]))
        recession = self._recession(X1 @ D.T, Theta)
        if recession is None:
            return
        problem = cp.Problem(
            cp.Minimize(w @ recession + balls.cvxpy(D[:, : self.n_features_in_])),
            [cp.abs(D) <= 1],
        )
        problem.solve(solver=cp.CLARABEL)
        if problem.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) and problem.value < -1e-7:
            raise SolverError(
                f"the program is unbounded below (a direction lowers the objective by "
                f"{-problem.value:.3g} per unit): {self._unbounded_hint}"
            )

    def _compile(self, X, y, sample_weight):
        """The exact program through the declaration (``game_.compile``; HiGHS for an LP,
        Clarabel otherwise, to ``min(tol, 1e-8)``)."""
        self.program_ = self.game_.compile(X, y, sample_weight)
        solution = self.program_.solve(tol=self.tol)
        return solution.theta, f"compiled ({solution.solution.status})"


class MinimaxClassifier(ClassifierMixin, _MinimaxModel):
    r"""Robust Bayes classifier of Farnia and Tse (2016): minimax SVM, minimax Brier, logistic
    regression.

    Parameters
    ----------
    loss : {'zero_one', 'brier', 'log'}, default='zero_one'
        ``zero_one``: the minimax SVM (Eq. 29-31); ``brier``: the minimax Brier classifier
        (Eq. 35-36); ``log``: multinomial logistic regression (Eq. 28).
    radius : float, array-like or None, default=None
        ``eps_i`` of the moment balls (one per class ``classes_[:-1]``, per group for
        ``norm='group'``), or ``lam_i`` with ``squared=True``.  None: ``1 / sqrt(sum w)``
        (``1 / sum w`` when squared).
    norm : {2, 1, 'inf', 'group', 'l1inf'}, default=2
        The moment-ball norm; the penalty is its dual norm (see
        :class:`advgame.uncertainty.MomentBalls`).
    squared : bool, default=False
        Theorem 5's ``sum_i lam_i ||A_i||_*^2`` instead of ``sum_i eps_i ||A_i||_*``.
    groups : array-like of shape (n_features,) or None
        Feature groups for ``norm='group'``.
    fit_intercept : bool, default=True
        Add a constant feature whose moments (the class marginals) are matched exactly.
    solver : {'auto', 'compile', 'fast'}, default='auto'
        ``compile``: the exact program of the declaration, ``game_.compile(X, y)``
        (``program_``); ``fast``: FISTA / L-BFGS.  ``auto``
        compiles the non-smooth 0-1 model up to 100,000 game rows ``n K`` and is ``fast``
        otherwise (for 0-1 a first-order method certified to ``duality_gap_``).
    max_iter : int, default=1000
    tol : float, default=1e-6
    warm_start : bool, default=False
        Start the fast solver from the previous ``A_`` (radius paths).
    randomized : bool, default=False
        ``loss='brier'`` only: predict with the randomised rule of Theorem 6 (Eq. 38),
        ``P(class i) = p_i^2 / sum_j p_j^2`` (the minimax randomised Brier classifier, mmRBC).
    random_state : int, Generator or None
        Seeds the randomised predictions (an integer seed gives the same draws each call).

    verbose : int, default=0
        Progress on stderr: 1 prints the stages of ``fit`` and what it found (time, objective,
        certified gap), 2 also its iterations.

    Attributes
    ----------
    classes_ : ndarray
    A_ : ndarray of shape (K - 1, n_features + fit_intercept)
        The dual variables of the moment constraints (Eq. 21); the last class is pinned at 0.
    coef_, intercept_ : ndarray
        ``A_`` split into feature weights ``(K - 1, n_features)`` and intercepts.
    game_ : PredictionGame
        The declaration (the loss, ``[x; 1]`` features, the moment balls, the simplex):
        ``game_.compile(X, y)`` gives the program whatever the solver, ``game_.explain()`` the
        fast path, ``game_.game()`` the per-sample game (``F`` and ``∇F``).
    uncertainty_ : MomentBalls
        The balls bound to ``A_``'s shape.
    objective_ : float
        The value of Eq. 21 at ``A_``: the worst-case conditional entropy (Theorem 3).
    duality_gap_ : float
        ``objective_`` minus a certified lower bound on the optimum (NaN for a compiled 0-1
        model, which HiGHS / Clarabel certify themselves).
    gap_ : float
        ``duality_gap_``, 0 for a compiled 0-1 model and ``inf`` where no bound was found.
    converged_ : {'optimal', 'certified', 'uncertified'}
        ``'optimal'`` for the compiled program, ``'certified'`` exactly when
        ``gap_ <= tol * max(1, |objective_|)``, ``'uncertified'`` otherwise.
    stop_reason_ : str
        Why the solver stopped, in its words (``'FISTA: converged (duality gap ...)'``,
        ``'max_iter=... reached'``, the compiled program's status).
    program_ : MinimaxProgram
        When compiled: ``program_.to_cvxpy()`` and ``program_.dual()`` (not kept when the
        estimator is pickled: it holds the training data).
    n_iter_, solver_

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.model_selection import GridSearchCV
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> import advgame as ag
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> model = make_pipeline(StandardScaler(), ag.MinimaxClassifier(loss="brier"))
    >>> search = GridSearchCV(model, {"minimaxclassifier__radius": [0.01, 0.1]}, cv=3)
    >>> bool(search.fit(X, y).best_score_ > 0.9)
    True
    """

    _pinned = True

    def __init__(
        self,
        loss: str = "zero_one",
        radius: float | ArrayLike | None = None,
        norm: int | str = 2,
        squared: bool = False,
        groups: ArrayLike | None = None,
        fit_intercept: bool = True,
        solver: str = "auto",
        max_iter: int = 1000,
        tol: float = 1e-6,
        warm_start: bool = False,
        randomized: bool = False,
        random_state: int | np.random.Generator | None = None,
        verbose: int = 0,
    ) -> None:
        self.loss = loss
        self.radius = radius
        self.norm = norm
        self.squared = squared
        self.groups = groups
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.warm_start = warm_start
        self.randomized = randomized
        self.random_state = random_state
        self.verbose = verbose

    def _full_potentials(self, Z):
        return np.hstack([Z, np.zeros((Z.shape[0], 1))])

    def _match_mean(self, Q, Theta, w):
        """Mix ``Q`` with one constant distribution ``pi`` so the class marginals equal the labels'
        (the smallest weight ``s`` that keeps ``pi`` in the simplex)."""
        mean_q, mean_y = w @ Q, w @ Theta
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(mean_q > 0, mean_y / mean_q, np.inf)
        s = max(0.0, 1.0 - float(ratio.min()))
        if s == 0.0:
            return Q
        pi = np.maximum(mean_y - (1.0 - s) * mean_q, 0.0)
        if pi.sum() <= 0.0:  # s is rounding noise: the marginals already match
            return Q
        return (1.0 - s) * Q + s * pi / pi.sum()

    def _labels_in_set(self, Theta):
        return True

    def _recession(self, Z, Theta):
        return None  # F(f) - f_y >= 0: Eq. 21 is bounded below (its infimum may not be attained)

    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> MinimaxClassifier:
        """Solve Eq. 21 for ``A`` on ``X`` (n, d), labels ``y``, optional sample weights.

        Integer ``sample_weight`` equals repeated rows: the weighted data are fitted in one
        canonical form (each distinct row ``(x, y)`` once with the sum of its weights, zero
        weights dropped unless a class would lose all its rows, a fixed order;
        :func:`advgame._estimator.inputs.distinct_rows`), so weights and repeats are one
        program (``program_`` is compiled from the distinct rows) and one model.
        """
        started = fit_started(self, X)
        self._check_params()
        self._fit_rows(self._training_rows(X, y, sample_weight))
        fit_finished(self, started)
        return self

    def _training_rows(self, X, y, sample_weight):
        """Check the loss and the data, set ``classes_`` and return the rows
        :meth:`_fit_rows` fits (:class:`advgame._estimator.inputs.TrainingRows`; once per fold
        of a path of radii)."""
        if self.loss not in _CLASSIFIER_LOSSES:
            raise ValueError(f"loss must be one of {_CLASSIFIER_LOSSES}; got {self.loss!r}.")
        if self.randomized and self.loss != "brier":
            raise ValueError("randomized=True is the Brier rule of Theorem 6: use loss='brier'.")
        given = check_classification_fit(self, X, y, sample_weight)
        return TrainingRows(given, self.classes_.size)

    def _fit_rows(self, rows):
        """Fit ``rows`` (:meth:`_training_rows`) at the estimator's radius: the program rows
        (one canonical form of the weighted data: weights are repeated rows exactly, and the
        0-1 LP, whose optimal ``A_`` need not be unique, reaches the same vertex for both; a
        class of zero total weight keeps its rows), the default radius read from the total
        weight of the rows as given."""
        K = self.classes_.size
        X, y_index, sample_weight = rows.program
        self._declare(getattr(losses, self.loss)(K), rows.total_weight)
        self._fit(X, y_index, np.eye(K)[y_index], sample_weight, K - 1)
        d = self.n_features_in_
        self.coef_ = self.A_[:, :d]
        self.intercept_ = self.A_[:, d] if self.fit_intercept else np.zeros(K - 1)

    def _path_point(self):
        """The fitted ``A_`` (its meaning does not depend on the rows), for the refit of
        :class:`advgame.MinimaxClassifierCV` to start from its mean over the folds."""
        return self.A_

    def _potentials(self, X):
        check_is_fitted(self)
        X = validate_numeric(self, X, reset=False)
        return self._full_potentials(self._design(X) @ self.A_.T)

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """Potentials ``f = (A x, 0)`` per class; for two classes ``f_1 - f_0`` (shape (n,))."""
        F = self._potentials(X)
        return F[:, 1] - F[:, 0] if self.classes_.size == 2 else F

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """The worst-case conditional ``∇F(A x)`` over ``classes_`` (Farnia and Tse 2016, Eq. 22)."""
        F = self._potentials(X)
        return self._game.adversary(F)

    def predict(self, X: ArrayLike) -> np.ndarray:
        """MAP on ``∇F`` (ties to the larger potential); with ``randomized``, Eq. 38 draws."""
        F = self._potentials(X)
        Q = self._game.adversary(F)
        if not self.randomized:
            return self.classes_[map_label(Q, F)]
        weights = Q**2 / np.sum(Q**2, axis=1, keepdims=True)
        draws = np.random.default_rng(self.random_state).random(Q.shape[0])
        index = np.minimum(
            (np.cumsum(weights, axis=1) < draws[:, None]).sum(axis=1), Q.shape[1] - 1
        )
        return self.classes_[index]


class MinimaxRegressor(RegressorMixin, _MinimaxModel):
    r"""Minimax regression under the quadratic loss (Farnia and Tse 2016, §3.3, Eq. 32-34).

    ``F`` is the Huber function of Eq. 32 with ``E[Y^2] <= rho^2`` and the prediction is
    ``F'(a^T x) = clip(a^T x / 2, -rho, rho)``.  With ``rho=None`` (large enough) the model is
    least squares: for the moment ball ``norm='inf'`` of radius ``eps`` it is the lasso,

    .. math::  \min_a \tfrac1n \sum_i \big[(a^\top x_i)^2/4 - y_i a^\top x_i\big] + \epsilon\|a\|_1
               = 2 \Big[\tfrac1{2n} \|y - X w\|^2 + \epsilon \|w\|_1\Big] - \overline{y^2},
               \qquad w = a / 2,

    so ``coef_ = A_ / 2`` equals ``sklearn.linear_model.Lasso(alpha=eps).coef_`` (and ``norm=2``
    gives the l2-norm penalty ``2 eps ||w||_2``, ``norm='group'`` the group lasso of Eq. 34,
    ``squared=True`` with ``norm=2`` ridge with ``4 lam ||w||^2``).

    Parameters
    ----------
    radius : float, array-like or None, default=None
        ``eps`` (per group for ``norm='group'``), or ``lam`` with ``squared=True``.  None:
        ``1 / sqrt(sum w)`` (``1 / sum w`` when squared).
    norm : {'inf', 1, 2, 'group', 'l1inf'}, default='inf'
    rho : float or None, default=None
        Second-moment bound of the target; must be positive.
    squared, groups, fit_intercept, solver, max_iter, tol, warm_start
        As in :class:`MinimaxClassifier`.

    verbose : int, default=0
        Progress on stderr: 1 prints the stages of ``fit`` and what it found (time, objective,
        certified gap), 2 also its iterations.

    Attributes
    ----------
    A_ : ndarray of shape (1, n_features + fit_intercept)
    coef_, intercept_ : the predictor's weights ``A_ / 2`` (exact for ``rho=None``).
    game_, uncertainty_, objective_, duality_gap_, gap_, converged_, stop_reason_, program_,
    n_iter_, solver_
        As for :class:`MinimaxClassifier`.
    """

    _pinned = False

    def __init__(
        self,
        radius: float | ArrayLike | None = None,
        norm: int | str = "inf",
        rho: float | None = None,
        squared: bool = False,
        groups: ArrayLike | None = None,
        fit_intercept: bool = True,
        solver: str = "auto",
        max_iter: int = 1000,
        tol: float = 1e-6,
        warm_start: bool = False,
        verbose: int = 0,
    ) -> None:
        self.radius = radius
        self.norm = norm
        self.rho = rho
        self.squared = squared
        self.groups = groups
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.warm_start = warm_start
        self.verbose = verbose

    def _full_potentials(self, Z):
        return Z

    #: Why the program may be unbounded below (``_check_bounded``).
    _unbounded_hint = "rho is small next to the targets; increase rho or the radius."

    def _match_mean(self, M, Theta, w):
        """Move the conditional means ``M`` so their average equals the targets': a shift for
        ``rho=None``; else a mix with a constant in ``[-rho, rho]`` (None when none exists)."""
        mean_m, mean_y = float(w @ M[:, 0]), float(w @ Theta[:, 0])
        if self.rho is None:
            return M + (mean_y - mean_m)
        rho = self.rho
        with np.errstate(divide="ignore", invalid="ignore"):
            s = max(
                0.0,
                (mean_y - mean_m) / (rho - mean_m) if mean_y > mean_m else 0.0,
                (mean_m - mean_y) / (rho + mean_m) if mean_y < mean_m else 0.0,
            )
        if not s <= 1.0:
            return None
        if s == 0.0:
            return M
        return (1.0 - s) * M + (mean_y - (1.0 - s) * mean_m)

    def _labels_in_set(self, Theta):
        return self.rho is None or bool(np.all(np.abs(Theta) <= self.rho))

    def _recession(self, Z, Theta):
        import cvxpy as cp

        if self.rho is None:  # F grows quadratically: Eq. 21 is bounded below
            return None
        return self.rho * cp.abs(Z[:, 0]) - cp.multiply(Theta[:, 0], Z[:, 0])

    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> MinimaxRegressor:
        """Solve Eq. 21 with ``theta(Y) = Y`` on ``X`` (n, d) and real targets ``y``."""
        started = fit_started(self, X)
        self._check_params()
        X, y = validate_numeric(self, X, y, y_numeric=True)
        sample_weight = check_weights(sample_weight, X)
        top = float(np.max(np.abs(y))) if y.size else 0.0
        if top > MAX_TARGET_MAGNITUDE:
            raise ValueError(
                f"y has targets of magnitude up to {top:.3g}, over the limit of "
                f"{MAX_TARGET_MAGNITUDE:.0e} (MAX_TARGET_MAGNITUDE): the program squares the "
                "targets' scale, which float64 cannot hold. Rescale y, e.g. "
                "TransformedTargetRegressor(MinimaxRegressor(), transformer=StandardScaler())."
            )
        self._declare(losses.quadratic(self.rho), weight_total(sample_weight))
        self._fit(X, y, y[:, None].astype(float), sample_weight, 1)
        d = self.n_features_in_
        self.coef_ = self.A_[0, :d] / 2
        self.intercept_ = self.A_[0, d] / 2 if self.fit_intercept else 0.0
        fit_finished(self, started)
        return self

    def predict(self, X: ArrayLike) -> np.ndarray:
        """``F'(a^T x)``: the worst-case conditional mean (Eq. 33)."""
        check_is_fitted(self)
        X = validate_numeric(self, X, reset=False)
        return self._game.adversary(self._design(X) @ self.A_.T)[:, 0]


# ---------------------------------------------------------------- robust feature selection
@dataclass
class FeatureSelection:
    """Result of :func:`robust_feature_selection`.

    Attributes
    ----------
    selected : ndarray of int
        The chosen feature indices (by decreasing ``max_i |A_ij|``).
    radius : float
        The largest radius on the path with at least the target count of features.
    radii, counts : ndarray
        The path visited and the number of features in use at each radius.
    """

    selected: np.ndarray
    radius: float
    radii: np.ndarray
    counts: np.ndarray


def robust_feature_selection(
    estimator: _MinimaxModel,
    X: ArrayLike,
    y: ArrayLike,
    n_features: int,
    n_radii: int = 30,
    min_ratio: float = 1e-3,
) -> FeatureSelection:
    r"""Select ``n_features`` features by the ``l_{1,inf}`` relaxation of Farnia and Tse (2016), Eq. 39-43.

    Fits ``estimator`` (a :class:`MinimaxClassifier` or :class:`MinimaxRegressor`, cloned with
    ``norm='l1inf'`` and warm starts) along a geometric radius path from ``r_max`` (where every
    feature weight is zero) down to ``min_ratio * r_max``, and stops at the first radius that
    uses at least ``n_features`` features (columns ``j`` with ``max_i |A_ij| > 0``).

    ``r_max = max_j sum_i |G_ij|``: the dual norm of the loss gradient ``G`` at zero weights
    (intercepts fitted), the smallest ``eps`` for which 0 is optimal.
    """
    if not isinstance(estimator, _MinimaxModel):
        raise TypeError(
            "estimator must be a MinimaxClassifier or MinimaxRegressor; got "
            f"{type(estimator).__name__}."
        )
    if (
        not isinstance(n_features, numbers.Integral)
        or isinstance(n_features, bool)
        or n_features < 1
    ):
        raise ValueError(f"n_features must be an integer >= 1; got {n_features!r}.")
    if not isinstance(n_radii, numbers.Integral) or isinstance(n_radii, bool) or n_radii < 1:
        raise ValueError(f"n_radii must be an integer >= 1; got {n_radii!r}.")
    check_real("min_ratio", min_ratio, low=0.0, strict=True, high=1.0)
    model = clone(estimator).set_params(norm="l1inf", warm_start=True, solver="fast")
    try:
        X = check_array(X, dtype=np.float64, input_name="X")
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"X must be a finite numeric 2-D array (n_samples, n_features): {exc}"
        ) from exc
    if n_features > X.shape[1]:
        raise ValueError(f"n_features={n_features} exceeds the {X.shape[1]} features of X.")
    model.set_params(radius=1e6).fit(X, y)  # all weights zero, intercepts fitted
    Theta = (
        np.eye(model.classes_.size)[np.searchsorted(model.classes_, y)]
        if hasattr(model, "classes_")
        else np.asarray(y, dtype=float)[:, None]
    )
    weights = np.full(X.shape[0], 1.0 / X.shape[0])
    problem = model._objective(model._design(X), Theta, weights, model.uncertainty_)
    gradient = problem.smooth_part(model.A_)[1]
    r_max = float(np.abs(gradient[:, : X.shape[1]]).sum(axis=0).max())
    radii = np.geomspace(r_max, r_max * min_ratio, n_radii)
    counts = []
    for radius in radii:
        W = model.set_params(radius=radius).fit(X, y).A_[:, : X.shape[1]]
        strength = np.abs(W).max(axis=0)
        used = strength > 1e-9 * max(1.0, strength.max())
        counts.append(int(used.sum()))
        if counts[-1] >= n_features:
            selected = np.argsort(-strength, kind="stable")[:n_features]
            return FeatureSelection(selected, float(radius), radii[: len(counts)], np.array(counts))
    raise SolverError(
        f"the radius path reached {radii[-1]:.3g} with only {counts[-1]} features in use; "
        f"lower min_ratio to select {n_features}."
    )
