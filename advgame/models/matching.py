r"""``AdversarialMatching``: label ranking with the Birkhoff (permutation) game (Fathony et al. 2018c).

Labels are permutations of ``k`` items, given as rankings ``R[i, j]`` = rank of item ``j`` (1 =
best) and encoded as permutation matrices ``P_i[j, R_ij - 1] = 1``.  A linear model scores every
item at every position, ``Θ_i = reshape(W^T x_i + b, (k, k))``, and training solves Eq. 2
of Fathony et al. (2018a) for the Hamming loss ``k - <P̂, P>`` with a soft moment-matching penalty:

.. math::  \min_{W, b}\ \sum_i w_i \big[\mathrm{value}(Θ_i) - \langle Θ_i, P_i\rangle\big]
           + \frac{\lambda}{2} \|W\|_F^2,

``λ`` being ``strength`` and ``value`` the game of :class:`advgame.PermutationGame` (Fathony
et al. 2018c, "Efficient and Consistent Adversarial Bipartite Matching"; docs/design.md,
Appendix B).  Since every doubly
stochastic ``Q`` has ``1^T Q 1 = k``, the Hamming loss is ``<E - P̂, Q>`` with ``E`` the
all-ones matrix, and LP duality of the inner assignment problem gives

.. math::  \mathrm{value}(Θ) = \min_{\hat P \in B_k} \max_{Q \in B_k} \langle Θ + E - \hat P,
           Q\rangle = \min_{\hat P \in B_k,\, a,\, c}\ 1^\top a + 1^\top c
           \quad\text{s.t.}\quad a_j + c_r + \hat P_{jr} - Θ_{jr} \ge 1,

so the whole training problem is one convex QP (an LP when ``strength = 0``) in
``(W, b, P̂_i, a_i, c_i)``: "compiling the game into its dual" (docs/design.md).  At its optimum
``P̂_i`` is the predictor's minimax marginal matrix of sample ``i``.  The estimator declares this
game (``game_``, a :class:`advgame.PredictionGame` with the Birkhoff polytope) and compiles it
through :func:`advgame.compile.compile_matching`, which also gives the adversary's program; both
training methods are in :mod:`advgame.solvers.matching`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .. import polytopes
from .._estimator.base import (
    ProgramNotPickled,
    fit_finished,
    fit_started,
    record_convergence,
)
from .._estimator.inputs import (
    check_iteration_params,
    check_rankings,
    check_weights,
    renamed_parameter,
    validate_numeric,
)
from .._validation import check_real, unit_weights
from ..declaration import HAMMING, PredictionGame
from ..features import Multiclass
from ..permutation import DECODINGS, PermutationGame
from ..solvers.matching import (
    MatchingObjective,
    fit_matching_subgradient,
    matching_backend,
    solve_matching_program,
)
from ..uncertainty import Exact, SoftMoments
from .projection import RankingMixin

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["AdversarialMatching", "MatchingObjective"]

_SOLVERS = ("auto", "compile", "subgradient")
_BACKENDS = ("auto", "highs", "cvxpy")
#: ``solver='auto'`` compiles only while the program has at most this many predictor marginals
#: (``n_samples * k^2``) ...
AUTO_COMPILE_SIZE = 50_000
#: ... and at most this much factorisation work ``n_samples * k^2 * n_params^2``: the model
#: parameters couple every sample's rows, so each interior-point step factorises a KKT system
#: whose fill grows like that (vehicle, 846 x 18 with k = 4: 1.25e9, about 20 s with Clarabel).
AUTO_COMPILE_WORK = 5e9


class AdversarialMatching(ProgramNotPickled, RankingMixin, BaseEstimator):
    r"""Adversarial bipartite matching for label ranking: the Birkhoff game's learner.

    ``fit(X, R)`` takes full rankings ``R[i, j]`` = rank of label ``j`` (1 = best), as
    :class:`advgame.LabelRanker` does, and ``predict`` returns rankings of the same form.  A
    linear model scores label ``j`` at position ``r``,
    ``Θ_i[j, r] = (W^T x_i + b)_{j k + r}``, and is trained by (Fathony et al. 2018a, Eq. 2-3,
    with the permutation game of Fathony et al. 2018c; docs/design.md, Appendix B)

    .. math::  \min_{W, b}\ \sum_i w_i \big[\mathrm{value}(Θ_i) - \langle Θ_i, P_i\rangle\big]
               + \frac{\lambda}{2} \|W\|_F^2,
               \qquad \mathrm{value}(Θ) = \max_{Q \in B_k} \min_{\hat P \in B_k}
               k - \langle \hat P, Q\rangle + \langle Θ, Q\rangle,

    where ``λ`` is ``strength``, ``P_i`` the permutation matrix of ``R_i``, ``B_k`` the
    Birkhoff polytope, ``w`` the sample weights normalised to sum to one, and the squared-norm
    penalty is the soft moment matching uncertainty set (docs/design.md, "Uncertainty sets are regularisers").  The
    surrogate ``value(Θ) - <Θ, P>`` upper-bounds the Hamming loss of the minimax predictor and is
    Fisher consistent (Fathony et al. 2018c).

    Parameters
    ----------
    strength : float, default=1e-2
        ``strength >= 0``, the weight ``λ`` of the penalty ``λ/2 ||W||_F^2`` (the intercept is
        not penalised): the regularisation strength, named as in every other estimator.
        ``strength = 0`` (exact moment matching) makes the compiled program an LP.
    fit_intercept : bool, default=True
        Add an unpenalised score matrix ``b``.
    solver : {'auto', 'compile', 'subgradient'}, default='auto'
        ``'compile'``: the exact QP of ``game_.compile(X, R)``
        (:func:`advgame.compile.compile_matching`: the game replaced by its LP dual).
        ``'subgradient'``: averaged mini-batch AdaGrad
        (:func:`advgame.solvers.fit_adagrad`) with the adversary's ``Q*`` as the subgradient
        (:class:`MatchingObjective`).  ``'auto'`` compiles while ``n_samples * k^2 <=
        AUTO_COMPILE_SIZE`` (50,000) and ``n_samples * k^2 * n_params^2 <= AUTO_COMPILE_WORK``
        (5e9; ``n_params = (n_features + 1) k^2``, the interior-point factorisation cost) and
        uses ``'subgradient'`` beyond.
    backend : {'auto', 'highs', 'cvxpy'}, default='auto'
        Solver of the compiled program.  ``'auto'`` is cvxpy (Clarabel's interior-point
        method), for the QP and the LP alike.  ``'highs'`` solves the LP (``strength = 0``) only:
        HiGHS's active-set QP solver stalls on this degenerate QP (30 iris samples do not finish
        in minutes, where Clarabel takes 0.02 s), and its simplex is slower than Clarabel on
        the LP (vehicle: over 100 s against 89 s; iris: 0.4 s against 0.2 s).
    decode : {'map', 'predictor'}, default='map'
        ``'map'``: the maximum-score assignment ``argmax_π <Θ, P_π>`` (Hungarian method).
        ``'predictor'``: the permutation closest to the predictor's minimax marginals ``P̂*``
        (one game LP per sample).  See :meth:`advgame.PermutationGame.predict`.
    max_iter : int, default=100
        Epochs of ``'subgradient'``.
    tol : float, default=1e-9
        Tolerance of the compiled program's solver: HiGHS's primal and dual feasibility
        tolerance, Clarabel's gap and feasibility tolerances; ``'subgradient'`` reports
        ``converged_ = 'certified'`` when its certified gap is at most
        ``tol * max(1, |objective_|)``.
    batch_size : int, default=16
        Samples per ``'subgradient'`` step.
    learning_rate : float, default=1.0
        AdaGrad step.
    random_state : int, Generator or None, default=None
        Seeds the mini-batch order of ``'subgradient'``.
    verbose : int, default=0
        Progress on stderr: 1 prints the stages of ``fit`` and what it found (time, solver,
        iterations, objective); neither solver reports its iterations.
    alpha : float, default="deprecated"
        The former name of ``strength``; setting it warns (FutureWarning) and sets
        ``strength``.  It will be removed in a future release.

    Attributes
    ----------
    n_labels_ : int
        ``k``, the number of ranked labels.
    n_features_in_ : int
    coef_ : ndarray of shape (n_features, k * k)
        ``W``; column ``j k + r`` scores label ``j`` at position ``r``.
    intercept_ : ndarray of shape (k * k,)
        ``b`` (zeros without an intercept).
    objective_ : float
        The training objective at ``(coef_, intercept_)`` (the compiled program's optimum, or
        the exact objective at AdaGrad's averaged iterate).
    game_ : PredictionGame
        The declared game: ``PredictionGame('hamming', Multiclass(fit_intercept),
        SoftMoments(strength) (Exact() when strength = 0), ag.polytopes.Birkhoff())``;
        ``game_.compile(X, R)`` gives the training program (with its dual and LaTeX) whatever
        the solver.
    permutation_game_ : PermutationGame
        The per-sample game (value, adversary, predictor; used by ``predict``).
    program_ : MatchingProgram or None
        The compiled program (:class:`advgame.compile.MatchingProgram`: ``to_cvxpy()`` gives it to
        cvxpy, ``describe()`` summarises it, ``dual()`` is the adversary's program); None for
        ``'subgradient'``.  Not pickled (it holds the training data): ``game_.compile(X, R)``
        rebuilds it.
    n_iter_ : int
        1 for ``'compile'``; AdaGrad steps for ``'subgradient'``.
    solver_ : str
        The solver used (``'auto'`` resolved).
    gap_ : float
        A certified bound on ``objective_ - min``: ``objective_`` minus the Lagrangian dual
        bound at adversary marginals (:meth:`MatchingObjective.dual_bound`; the program's
        multipliers for ``'compile'``, the adversary's best responses at the final iterate for
        ``'subgradient'``).  With ``strength = 0`` no such bound exists (it asks ``X^T G = 0``
        exactly): ``gap_`` is 0 for the compiled LP solved to optimality, ``inf`` for
        ``'subgradient'``.
    converged_ : {'optimal', 'certified', 'uncertified'}
        ``'optimal'`` for the compiled program (an exact program its solver reports optimal);
        for ``'subgradient'``, ``'certified'`` when ``gap_ <= tol * max(1, |objective_|)``,
        else ``'uncertified'``.
    stop_reason_ : str
        Why the solver stopped.

    See Also
    --------
    advgame.PermutationGame : the per-sample game (value, adversary, predictor).
    advgame.LabelRanker : label ranking with projection (Fenchel-Young) losses.

    Examples
    --------
    >>> import advgame as ag
    >>> from sklearn.preprocessing import StandardScaler
    >>> data = ag.datasets.load("label_ranking/iris")
    >>> X = StandardScaler().fit_transform(data.X)
    >>> model = ag.AdversarialMatching().fit(X, data.y)
    >>> model.predict(X[:2]).shape
    (2, 3)
    """

    def __init__(
        self,
        strength: float = 1e-2,
        fit_intercept: bool = True,
        solver: str = "auto",
        backend: str = "auto",
        decode: str = "map",
        max_iter: int = 100,
        tol: float = 1e-9,
        batch_size: int = 16,
        learning_rate: float = 1.0,
        random_state: int | np.random.Generator | None = None,
        verbose: int = 0,
        alpha: float | str = "deprecated",
    ) -> None:
        self.strength = strength
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.backend = backend
        self.decode = decode
        self.max_iter = max_iter
        self.tol = tol
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.random_state = random_state
        self.verbose = verbose
        self.alpha = alpha

    def _strength(self) -> float:
        """``strength``, or the deprecated ``alpha`` when it is set (with a FutureWarning)."""
        given = "strength" if isinstance(self.alpha, str) else "alpha"  # name what was set
        return check_real(given, renamed_parameter(self, "alpha", "strength"), low=0.0)

    def _check_params(self):
        check_iteration_params(self, ("max_iter", "batch_size"))
        check_real("learning_rate", self.learning_rate, low=0.0, strict=True)
        for name, allowed in (("solver", _SOLVERS), ("backend", _BACKENDS), ("decode", DECODINGS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}; got {getattr(self, name)!r}.")

    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> AdversarialMatching:
        """Fit on features ``X`` (n, d) and rankings ``y = R`` (n, k), ``R[i, j]`` = rank of label j
        (named ``y`` as scikit-learn passes it by keyword).

        Raises
        ------
        ValueError
            For invalid parameters or inputs (rows of ``R`` that are not permutations of
            ``1..k``, a row count different from ``X``'s, non-finite ``X``);
            :class:`advgame.NotApplicableError` for ``backend='highs'`` with ``strength > 0``.
        advgame.SolverError
            When the compiled program's solver does not report an optimal solution (an
            inaccurate one included).
        """
        started = fit_started(self, X)
        self._check_params()
        strength = self._strength()
        X = validate_numeric(self, X)
        R = check_rankings(y, X.shape[0], estimator=self)
        sample_weight = check_weights(sample_weight, X)
        k = self.n_labels_ = R.shape[1]
        self.permutation_game_ = PermutationGame(k)
        self.game_ = PredictionGame(
            HAMMING,
            features=Multiclass(fit_intercept=self.fit_intercept),
            uncertainty=SoftMoments(strength) if strength > 0 else Exact(),
            polytope=polytopes.Birkhoff(),
        )
        solver = self.solver
        if solver == "auto":
            size = X.shape[0] * k * k
            work = size * ((X.shape[1] + self.fit_intercept) * k * k) ** 2
            small = size <= AUTO_COMPILE_SIZE and work <= AUTO_COMPILE_WORK
            solver = "compile" if small else "subgradient"
        self.solver_ = solver
        weights = unit_weights(sample_weight)
        objective = MatchingObjective(
            self.permutation_game_, X, R, weights, strength, self.fit_intercept
        )
        if solver == "compile":
            backend = matching_backend(self.backend, strength)
            compiled = self.game_.compile(X, R, sample_weight)
            fitted, adversary = solve_matching_program(
                compiled.program, backend, self.tol, k, self.fit_intercept, weights
            )
            reason = f"{backend} solved the compiled program to optimality"
        else:
            compiled = None
            fitted = fit_matching_subgradient(
                objective,
                n_epochs=self.max_iter,
                batch_size=self.batch_size,
                step=self.learning_rate,
                random_state=self.random_state,
            )
            adversary = objective.adversary(fitted.coef, fitted.intercept)
            reason = f"{fitted.n_iter} AdaGrad steps ({self.max_iter} epochs)"
        bound = -np.inf if adversary is None else objective.dual_bound(adversary)
        gap = max(fitted.objective - bound, 0.0)
        if solver == "compile" and not np.isfinite(gap):
            gap = 0.0  # the LP solver's optimal status is the only certificate (strength = 0)
        record_convergence(
            self, gap, self.tol, fitted.objective, exact=solver == "compile", reason=reason
        )
        self.coef_, self.intercept_, self.objective_, self.n_iter_ = fitted[:4]
        self.program_ = compiled
        fit_finished(self, started)
        return self

    # ------------------------------------------------------------------------------ predict
    def decision_scores(self, X: ArrayLike) -> np.ndarray:
        """The score matrices ``Θ`` of shape ``(n, k, k)``; ``Θ[i, j, r]`` scores label ``j`` at
        position ``r``."""
        check_is_fitted(self)
        X = validate_numeric(self, X, reset=False)
        k = self.n_labels_
        return (X @ self.coef_ + self.intercept_).reshape(-1, k, k)

    def predict_matrix(self, X: ArrayLike) -> np.ndarray:
        """Predicted permutation matrices ``(n, k, k)`` (``P[i, j, r] = 1``: label ``j`` at
        position ``r``), decoded as set by ``decode``."""
        scores = self.decision_scores(X)
        return self.permutation_game_.predict(scores, decode=self.decode, as_matrix=True)

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predicted rankings ``(n, k)``: ``R[i, j]`` is the rank of label ``j`` (1 = best)."""
        scores = self.decision_scores(X)
        return self.permutation_game_.predict(scores, decode=self.decode)
