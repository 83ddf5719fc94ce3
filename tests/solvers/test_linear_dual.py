"""The certified linear dual coordinate ascent (advgame.solvers.fit_linear_dual) against the
compiled program, the kernel solver on K = X X^T and a numpy reference of its epoch; the
classifier's default (dual ascent, switching to smoothing on dense problems)."""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.datasets import load_digits, load_iris, make_classification
from sklearn.preprocessing import StandardScaler

import advgame as ag
from advgame import closed_forms
from advgame._estimator.inputs import distinct_rows
from advgame._kernels import dual_row_gaps, kernel_dual_epoch, linear_dual_epoch
from advgame.exceptions import NotApplicableError
from advgame.solvers import (
    SurrogateObjective,
    fit_kernel_dual,
    fit_linear_dual,
    linear_dual_obstacle,
)
from advgame.solvers import dual_ascent as solvers
from advgame.uncertainty import NormBall, SoftMoments

TOL = 1e-6


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    rows = np.random.default_rng(0).choice(len(y), 60, replace=False)
    return X[rows], y[rows]


def _compiled(X, y, weights=None, **params):
    """The classifier fitted by the compiled program (its optimum) and the linear problem:
    the game, the design matrix of its features, label indices and normalised weights."""
    weights = np.ones(len(y)) if weights is None else weights
    model = ag.AdversarialClassifier(solver="compile", **params).fit(X, y, sample_weight=weights)
    design = model.feature_map_.bind(X).X1
    y_index = np.searchsorted(model.classes_, y)
    return model, (model.game_.game(), design, y_index, weights / weights.sum())


def _without_intercept(X, y, weights):
    """The compiled optimum (objective, theta) with the features e_j ⊗ x (no constant)."""
    k = np.unique(y).size
    uncertainty = SoftMoments(1.0 / weights.sum())
    features = ag.features.Multiclass(fit_intercept=False)
    game = ag.PredictionGame(ag.losses.zero_one(k), features, uncertainty)
    solution = game.compile(X, y, weights).solve("cvxpy")
    return solution.objective, uncertainty, (game.game(), np.ascontiguousarray(X), y)


def _brackets(result, optimum):
    slack = 1e-7 * max(1.0, abs(optimum))
    assert result.message == "certified"
    assert result.gap <= TOL * max(1.0, abs(result.objective))
    assert result.objective - result.gap <= optimum + slack  # the bound never exceeds it
    assert optimum - slack <= result.objective <= optimum + result.gap + slack


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_certified_gap_brackets_the_compiled_optimum(iris, fit_intercept, weighted):
    """Iris (k = 3), with and without intercepts, uniform and integer weights (some zero):
    the certified gap brackets the compiled QP's optimum, the objective is J at the returned
    Theta (the surrogate evaluated independently), and rows of weight 0 never move."""
    X, y = iris
    rng = np.random.default_rng(3)
    weights = rng.integers(0, 4, size=len(y)) if weighted else np.ones(len(y))
    weights = weights.astype(float)
    w = weights / weights.sum()
    if fit_intercept:
        exact, (game, design, y_index, w) = _compiled(X, y, weights)
        optimum, uncertainty = exact.objective_, exact.uncertainty_
    else:
        optimum, uncertainty, (game, design, y_index) = _without_intercept(X, y, weights)
    result = fit_linear_dual(game, design, y_index, w, uncertainty, tol=TOL)
    _brackets(result, optimum)
    fmap = ag.features.Multiclass(fit_intercept=fit_intercept).fit(X, 3)
    objective = SurrogateObjective(game, fmap.bind(X), y_index, w, uncertainty, fmap)
    assert objective(result.theta)[0] == pytest.approx(result.objective, rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("alpha", [0.5, 0.25])
@pytest.mark.parametrize("weighted", [False, True])
def test_abstain_game_brackets_the_compiled_optimum(iris, alpha, weighted):
    """The abstain game (the step with ``floor = 1 - alpha``): the certified gap brackets the
    compiled QP's optimum, with uniform and integer weights (some zero)."""
    X, y = iris
    weights = np.random.default_rng(5).integers(0, 4, size=len(y)) if weighted else None
    params = {"loss": "abstain", "alpha": alpha, "strength": 0.02}
    exact, (game, design, y_index, w) = _compiled(X, y, weights, **params)
    result = fit_linear_dual(game, design, y_index, w, exact.uncertainty_, tol=TOL)
    _brackets(result, exact.objective_)


def test_tight_tolerance_reaches_the_compiled_coefficients(iris):
    """The regulariser is strongly convex, so Theta* is unique: at tol = 1e-10 the ascent's
    Theta is the compiled program's."""
    X, y = iris
    exact, (game, design, y_index, w) = _compiled(X, y, strength=0.05)
    result = fit_linear_dual(game, design, y_index, w, exact.uncertainty_, 1e-10, 100_000)
    assert result.message == "certified"
    np.testing.assert_allclose(result.theta, exact.theta_, atol=2e-4 * np.abs(exact.theta_).max())


def test_linear_and_kernel_ascent_solve_the_same_problem(iris):
    """With K = X X^T the kernel solver's A gives Theta = X^T A: the same optimum."""
    X, y = iris
    exact, (game, design, y_index, w) = _compiled(X, y)
    linear = fit_linear_dual(game, design, y_index, w, exact.uncertainty_, tol=TOL)
    kernel = fit_kernel_dual(game, design @ design.T, y_index, w, exact.uncertainty_, tol=TOL)
    assert abs(linear.objective - kernel.objective) <= linear.gap + kernel.gap + 1e-12
    Theta = design.T @ kernel.theta.reshape(len(y), -1)
    np.testing.assert_allclose(linear.theta, Theta.ravel(), atol=0.05 * np.abs(Theta).max())


def test_linear_epoch_is_the_kernel_epoch_on_the_linear_gram_matrix():
    """One epoch keeps W = Theta^T where the kernel epoch keeps F = X Theta: the same steps
    (Q), W x_i equal to the kernel's potentials, and each row's weighted gap before its step
    is that of dual_row_gaps at the potentials it met (a numpy reference, row by row)."""
    rng = np.random.default_rng(0)
    n, k, p, weight, lam = 9, 4, 3, 1.5, 0.3
    X = rng.normal(size=(n, p))
    weights = rng.dirichlet(np.ones(n))
    y = rng.integers(0, k, size=n)
    Q0 = rng.dirichlet(np.ones(k), size=n)
    G = weights[:, None] * (np.eye(k)[y] - Q0)
    WT0 = np.ascontiguousarray((X.T @ G / lam).T)
    coef = weights / lam
    curvature = coef * np.einsum("ij,ij->i", X, X)
    order = np.array([4, 0, 8, 2, 7, 1])
    WT, Q, still, gaps = WT0.copy(), Q0.copy(), np.full(n, 2), np.full(n, -1.0)
    moved = linear_dual_epoch(WT, X, Q, order, weights, coef, curvature, weight, 0.0, still, gaps)
    FT = np.ascontiguousarray((X @ WT0.T).T)
    kernel_Q, kernel_still, every = Q0.copy(), np.full(n, 2), np.arange(n)
    kernel_moved = kernel_dual_epoch(
        FT, X @ X.T, kernel_Q, order, every, coef, curvature, weight, 0.0, kernel_still
    )
    assert moved == kernel_moved
    np.testing.assert_allclose(Q, kernel_Q, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(still, kernel_still)
    np.testing.assert_allclose(X @ WT.T, FT.T, rtol=0, atol=1e-10)
    # the gaps before each step, against a numpy replay of the epoch
    W, replay = WT0.copy(), Q0.copy()
    for i in order:
        f = W @ X[i]
        before = dual_row_gaps(
            np.ascontiguousarray(f[:, None]), replay, np.array([i]), weights, weight, 0.0
        )
        assert gaps[i] == pytest.approx(before[0], rel=1e-10, abs=1e-14)
        shifted = f + curvature[i] * replay[i]
        q = closed_forms.zero_one_quadratic_smoothing(shifted[None], curvature[i], weight)[1][0]
        W -= np.outer(coef[i] * (q - replay[i]), X[i])
        replay[i] = q
    np.testing.assert_allclose(Q, replay, rtol=0, atol=1e-12)
    assert np.all(gaps[np.setdiff1d(every, order)] == -1.0)  # rows not visited: untouched


@given(
    seed=st.integers(0, 2**16),
    k=st.integers(2, 4),
    scale=st.sampled_from([1e-3, 1.0, 1e3]),
    strength=st.floats(1e-3, 1.0),
)
def test_random_small_problems_with_ties_and_extreme_scales(seed, k, scale, strength):
    """k = 2-4, duplicated rows (ties between their adversaries), inputs scaled by 1e-3 to
    1e3 and lam from 1e-3 to 1: the certificate brackets the compiled optimum every time,
    and it is within tol unless the epochs ran out (inputs of 1e-3 beside the constant
    feature make the ascent slow: the reason the classifier goes on by smoothing then)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(12, 30))
    X = rng.normal(size=(n, 3)) * scale
    X[n // 2 :] = X[: n - n // 2]
    y = rng.integers(0, k, size=n)
    y[:k] = np.arange(k)
    exact, (game, design, y_index, w) = _compiled(X, y, strength=strength)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ag.exceptions.ConvergenceWarning)
        result = fit_linear_dual(game, design, y_index, w, exact.uncertainty_, TOL, 5_000)
    slack = 1e-7 * max(1.0, abs(exact.objective_))
    assert result.objective - result.gap <= exact.objective_ + slack
    assert exact.objective_ - slack <= result.objective <= exact.objective_ + result.gap + slack
    assert result.message == "certified" or (result.limit_reached and scale != 1.0)


def test_shrinking_and_unshrinking_reach_the_compiled_optimum(iris, monkeypatch):
    """Shrinking after one epoch (rows leave too early) is undone by the exact check: rows
    found open come back, and the certificate still brackets the optimum; without shrinking
    the same optimum."""
    X, y = iris
    exact, (game, design, y_index, w) = _compiled(X, y, strength=1 / len(y))
    reopened, row_gaps = [], solvers._kernels.dual_row_gaps

    def recorded(*args):
        gaps = row_gaps(*args)
        reopened.append(int(np.sum(gaps > 0)))
        return gaps

    monkeypatch.setattr(solvers._kernels, "dual_row_gaps", recorded)
    monkeypatch.setattr(solvers, "SHRINK_EPOCHS", 1)
    result = fit_linear_dual(game, design, y_index, w, exact.uncertainty_, tol=TOL)
    _brackets(result, exact.objective_)
    assert reopened and max(reopened) > 0
    monkeypatch.setattr(solvers, "SHRINK_EPOCHS", 10**9)
    plain = fit_linear_dual(game, design, y_index, w, exact.uncertainty_, tol=TOL)
    _brackets(plain, exact.objective_)


def _noisy(n=1_500, seed=0):
    X, y = make_classification(
        n_samples=n, n_features=10, n_informative=5, n_classes=4, random_state=seed
    )
    return (X - X.mean(axis=0)) / X.std(axis=0), y


def test_switch_gives_up_on_dense_problems_and_the_classifier_goes_on_by_smoothing(monkeypatch):
    """Noisy labels: most of the first rows visited move, so with ``switch`` the ascent stops
    after them at once (no certificate claimed, no warning), at the parameters of its dual
    point; the classifier then certifies by smoothing from that point.  With the probe
    disabled, the second rule (too many rows still active after DENSE_EPOCHS epochs) gives up
    instead, after an exact check (an honest gap)."""
    X, y = _noisy()
    model = ag.AdversarialClassifier(max_iter=5)  # only to build the problem
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    fmap = model.feature_map_
    n = len(y)
    w = np.full(n, 1.0 / n)
    game, design = model.game_.game(), fmap.bind(X).X1
    objective = SurrogateObjective(game, fmap.bind(X), y, w, model.uncertainty_, fmap)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        probe = fit_linear_dual(game, design, y, w, model.uncertainty_, switch=True)
    assert probe.message.startswith("dense: ") and "of the rows 500-1000" in probe.message
    assert probe.n_iter == 1 and probe.gap == np.inf == probe.objective  # not checked
    residual = w[:, None] * (np.eye(4)[y] - probe.dual)  # Theta = X^T W (E_y - Q) / lam
    theta = design.T @ residual / model.uncertainty_.lam
    np.testing.assert_allclose(probe.theta, theta.ravel(), rtol=1e-9, atol=1e-12)
    monkeypatch.setattr(solvers, "DENSE_MOVED", 1.0)
    late = fit_linear_dual(game, design, y, w, model.uncertainty_, switch=True)
    assert late.n_iter == solvers.DENSE_EPOCHS and "still active after" in late.message
    assert late.gap > 0 and objective(late.theta)[0] == pytest.approx(late.objective, rel=1e-10)
    assert late.objective - late.gap <= objective(np.zeros(fmap.n_params))[0]
    fitted = ag.AdversarialClassifier(tol=1e-4).fit(X, y)
    assert fitted.converged_ == "certified" and fitted.gap_ <= 1e-4
    assert fitted.n_iter_ > solvers.DENSE_EPOCHS  # the ascent's epochs and the smoothing steps
    full = fit_linear_dual(game, design, y, w, model.uncertainty_, 1e-4, 100_000)
    assert abs(full.objective - fitted.objective_) <= full.gap + fitted.gap_


def test_the_classifier_certifies_by_dual_ascent_where_it_applies(iris):
    """Zero-one, soft moments, multiclass features: the default solver is the ascent (its
    epochs are n_iter_) where few rows stay active (digits), and goes on by smoothing from
    its point where many do (iris: 8 epochs, then steps), certified against the compiled
    optimum; the other problems keep the smoothing solver (linear_dual_obstacle says why)."""
    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X[:500])
    y = y[:500]
    model = ag.AdversarialClassifier(tol=1e-4).fit(X, y)
    # the classifier fits the distinct rows in their canonical order (its sample-weight rule)
    X, y, w = distinct_rows(X, y, np.ones(len(y)))
    game, design = model.game_.game(), model.feature_map_.bind(X).X1
    ascent = fit_linear_dual(game, design, y, w / w.sum(), model.uncertainty_, 1e-4, switch=True)
    assert ascent.message == model.converged_ == "certified"
    assert model.n_iter_ == ascent.n_iter > solvers.DENSE_EPOCHS
    np.testing.assert_array_equal(model.theta_, ascent.theta)
    X, y = iris
    exact, (game, design, y_index, w) = _compiled(X, y)
    ascent = fit_linear_dual(game, design, y_index, w, exact.uncertainty_, 1e-4, switch=True)
    assert "still active after 8 epochs" in ascent.message
    model = ag.AdversarialClassifier(tol=1e-4).fit(X, y)
    assert model.converged_ == "certified" and model.n_iter_ > ascent.n_iter
    assert model.objective_ - model.gap_ <= exact.objective_ + 1e-9 <= model.objective_ + 2e-9
    fmap = exact.feature_map_
    for loss, uncertainty, features, reason in [
        ("ordinal", SoftMoments(0.1), fmap, "zero-one"),
        ("zero_one", NormBall(0.1, 2), fmap, "soft moments"),
        ("zero_one", SoftMoments(0.1), None, "multiclass"),
    ]:
        other = ag.Game(getattr(ag.losses, loss)(3))
        if features is None:
            features = ag.features.Thresholded().fit(X, 3)
        objective = SurrogateObjective(other, features.bind(X), y_index, w, uncertainty, features)
        assert reason in linear_dual_obstacle(objective)
    assert (
        linear_dual_obstacle(
            SurrogateObjective(game, fmap.bind(X), y_index, w, exact.uncertainty_, fmap)
        )
        is None
    )


def test_errors_and_the_epoch_budget(iris):
    X, y = iris
    exact, (game, design, y_index, w) = _compiled(X, y)
    soft = SoftMoments(0.1)
    with pytest.raises(NotApplicableError, match="zero-one"):
        fit_linear_dual(ag.Game(ag.losses.ordinal(3)), design, y_index, w, soft)
    with pytest.raises(NotApplicableError, match="soft moments"):
        fit_linear_dual(game, design, y_index, w, NormBall(0.1, 2))
    with pytest.raises(ValueError, match="2-D design matrix"):
        fit_linear_dual(game, design[0], y_index, w, soft)
    with pytest.raises(ValueError, match="label indices"):
        fit_linear_dual(game, design, np.where(y_index == 0, -1, y_index), w, soft)
    with pytest.raises(ValueError, match="weights must have shape"):
        fit_linear_dual(game, design, y_index, w[:-1], soft)
    with pytest.raises(ValueError, match="non-negative"):
        fit_linear_dual(game, design, y_index, -w, soft)
    bad = design.copy()
    bad[1, 2] = np.inf
    with pytest.raises(ValueError, match="X must be finite"):
        fit_linear_dual(game, bad, y_index, w, soft)
    with pytest.warns(ag.exceptions.ConvergenceWarning, match="max_iter=1"):
        result = fit_linear_dual(game, design, y_index, w, SoftMoments(1.0 / len(y)), 1e-12, 1)
    assert result.limit_reached and result.n_iter == 1
    assert np.isfinite(result.gap) and result.gap > 0


@pytest.mark.parametrize("k, floor", [(2, 0.0), (4, 0.0), (4, 0.6)])
@pytest.mark.parametrize("threshold", [0.0, 1e-2])
def test_compiled_epoch_loop_is_the_python_loop(k, floor, threshold):
    """linear_dual_epochs (numba's Generator.permutation, the epochs and the shrinking in one
    compiled loop) leaves every array, the epoch, the rows left and the running gap exactly as
    the loop it replaces: numpy's permutation of the active rows, linear_dual_epoch and
    dual_shrink called from Python, stopping at the same threshold or epoch.  Zero-one and
    abstain (floor 0.6: alpha 0.4) steps, k = 2 and tied duplicate rows."""
    from advgame._kernels import dual_shrink, linear_dual_epochs

    rng = np.random.default_rng(3)
    n, p, weight, lam = 40, 5, 1.0, 0.05
    X = rng.normal(size=(n, p))
    X[20:25] = X[:5]  # ties: duplicated rows
    y = rng.integers(0, k, size=n)
    weights = rng.dirichlet(np.ones(n))
    coef = weights / lam
    curvature = coef * np.einsum("ij,ij->i", X, X)
    every = np.arange(n)

    def start():
        Q = np.zeros((n, k))
        Q[every, y] = 1.0
        return np.zeros((k, p)), Q, np.zeros(n, dtype=np.int64), np.zeros(n), every.copy()

    WT, Q, still, gaps, active = start()
    compiled = linear_dual_epochs(
        np.random.default_rng(7), WT, X, Q, y, active, weights, coef, curvature, weight, floor,
        still, gaps, every, 0, 12, 2, threshold,
    )  # fmt: skip
    WT_r, Q_r, still_r, gaps_r, active_r = start()
    generator, epoch, left, running = np.random.default_rng(7), 0, n, np.inf
    while epoch < 12:
        epoch += 1
        order = generator.permutation(active_r[:left])
        linear_dual_epoch(
            WT_r, X, Q_r, order, weights, coef, curvature, weight, floor, still_r, gaps_r
        )
        left, running = dual_shrink(gaps_r, Q_r, y, active_r[:left], every, still_r, 2)
        if running <= threshold:
            break
    assert compiled == (epoch, left, running)
    for ours, reference in ((WT, WT_r), (Q, Q_r), (still, still_r), (gaps, gaps_r)):
        np.testing.assert_array_equal(ours, reference)
    np.testing.assert_array_equal(active[:left], active_r[:left])


def test_a_watched_fit_is_the_silent_fit(capsys):
    """With lines shown (verbose=2) the ascent runs one compiled epoch per call so that each
    is reported; the fit is the silent one to the bit."""
    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X[:400])
    silent = ag.AdversarialClassifier().fit(X, y[:400])
    watched = ag.AdversarialClassifier(verbose=2).fit(X, y[:400])
    assert "linear dual ascent, epoch" in capsys.readouterr().err
    assert silent.n_iter_ == watched.n_iter_ and silent.solver_ == watched.solver_
    np.testing.assert_array_equal(silent.theta_, watched.theta_)
