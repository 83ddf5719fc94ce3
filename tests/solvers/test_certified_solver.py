"""The certified default solver (issue #22): dual bounds from any adversaries, the smoothed
games, ``fit_smoothed`` against the compiled program's optimum (HiGHS / Clarabel), and the
classifier's default path ending with a certified gap."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.preprocessing import StandardScaler

import advgame as ag
from advgame import closed_forms
from advgame.features import Multiclass
from advgame.solvers import (
    SurrogateObjective,
    dual_bound,
    fit_linear_dual,
    fit_smoothed,
    smoothed_game,
    smoothing_obstacle,
)
from advgame.solvers import smoothing as solvers
from advgame.uncertainty import Exact, NormBall, SoftMoments

K = 4
LOSSES = ("zero_one", "ordinal", "squared", "abstain", "cost_sensitive")
SETS = ("soft", "l1", "l2", "linf", "group")


def _loss(name):
    if name == "cost_sensitive":
        M = np.random.default_rng(7).uniform(0.2, 2.0, (K, K)) * (1 - np.eye(K))
        return ag.LossMatrix(M)
    if name == "abstain":
        return ag.losses.abstain(K, 0.3)
    return getattr(ag.losses, name)(K)


def _uncertainty(name, n):
    if name == "soft":
        return SoftMoments(1.0 / n)
    return NormBall(0.02, {"l1": 1, "l2": 2, "linf": np.inf, "group": "group"}[name])


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    n, d = 80, 3
    X = StandardScaler().fit_transform(rng.normal(size=(n, d)))
    y = np.argmax(X @ rng.normal(size=(d, K)) + rng.gumbel(size=(n, K)), axis=1)
    return X, y


def _problem(X, y, loss, uncertainty):
    fmap = Multiclass().fit(X, K)
    weights = np.full(y.size, 1.0 / y.size)
    game = ag.Game(loss)
    objective = SurrogateObjective(game, fmap.bind(X), y, weights, uncertainty, fmap)
    optimum = ag.PredictionGame(loss, Multiclass(), uncertainty).compile(X, y).solve()
    return objective, optimum


def _assert_brackets(result, optimum):
    """``result``'s certificate brackets the compiled optimum: ``objective - gap <= optimum <=
    objective``, up to the LP solver's tolerance."""
    slack = 1e-7 * max(1.0, abs(optimum.objective))  # the interior-point / simplex tolerance
    assert result.objective - result.gap <= optimum.objective + slack
    assert optimum.objective <= result.objective + slack


@pytest.mark.parametrize("uncertainty", SETS)
@pytest.mark.parametrize("loss", LOSSES)
def test_certificate_brackets_the_compiled_optimum(data, loss, uncertainty):
    """certificate <= optimum <= objective_, the gap within tol, for every loss x set."""
    X, y = data
    objective, optimum = _problem(X, y, _loss(loss), _uncertainty(uncertainty, y.size))
    tol = 1e-6
    result = fit_smoothed(objective, np.zeros(objective.fmap.n_params), tol=tol)
    assert result.message == "certified"
    assert result.gap <= tol * max(1.0, abs(result.objective))
    _assert_brackets(result, optimum)
    assert result.objective == pytest.approx(objective(result.theta)[0], abs=1e-12)


def test_linear_dual_ascent_brackets_the_same_compiled_optimum(data):
    """The matrix's zero-one x soft cell by the classifier's first solver, the linear dual
    ascent (fit_linear_dual), at the same tol; with ``switch`` it either certifies the same
    way or gives up with an honest gap (and the smoothing solver goes on from its point)."""
    X, y = data
    loss, uncertainty = _loss("zero_one"), _uncertainty("soft", y.size)
    objective, optimum = _problem(X, y, loss, uncertainty)
    design = objective.operator.X1
    tol = 1e-6
    args = (objective.game, design, y, objective.weights, uncertainty, tol, 100_000)
    for switch in (False, True):
        result = fit_linear_dual(*args, switch=switch)
        assert result.message == "certified" or result.message.startswith("dense")
        _assert_brackets(result, optimum)
        assert result.objective == pytest.approx(objective(result.theta)[0], abs=1e-12)
    assert fit_linear_dual(*args).message == "certified"


def _mixture_bound(uncertainty, first, second, s, fmap):
    (g1, gain1), (g2, gain2) = first, second
    return uncertainty.dual_bound((1 - s) * g1 + s * g2, 0.0, (1 - s) * gain1 + s * gain2, fmap)


def _best_on_triangle(uncertainty, first, second, fmap, steps=400):
    """Brute force: the best bound of ``a first + b second`` over a grid of the triangle (the
    ``r`` of ``dual_bound`` ranges over ``[0, 1]`` on each ray)."""
    return max(
        _mixture_bound(uncertainty, first, second, s, fmap) for s in np.linspace(0, 1, steps + 1)
    )


_scales = st.sampled_from([1e-6, 1e-2, 1.0, 1e3])


@settings(max_examples=40)
@given(
    seed=st.integers(0, 2**16),
    scale=_scales,
    lam=st.sampled_from([1e-4, 0.1, 10.0]),
    gains=st.tuples(st.floats(-1, 1), st.floats(-1, 1)),
    same=st.booleans(),
)
def test_soft_mixture_is_the_best_mixture_of_two_dual_points(seed, scale, lam, gains, same):
    """``SoftMoments.mixture`` against a fine grid over the triangle: never worse (up to the
    grid's resolution), a weight in [0, 1]; ties (the same point twice), zero and negative
    gains, huge and tiny residuals."""
    fmap = Multiclass().fit(np.zeros((1, 2)), 3)  # 9 parameters, blocks per class
    rng = np.random.default_rng(seed)
    g1 = scale * rng.normal(size=9)
    g2 = g1.copy() if same else scale * rng.normal(size=9)
    soft = SoftMoments(lam)
    first, second = (g1, gains[0]), (g2, gains[1])
    s = soft.mixture(first, second, fmap)
    assert 0.0 <= s <= 1.0
    found = _mixture_bound(soft, first, second, s, fmap)
    best = _best_on_triangle(soft, first, second, fmap)
    assert found >= best - 1e-9 * max(1.0, abs(best))


def test_norm_balls_mix_nothing():
    """Without a closed form the newest point is kept alone (``s = 1``)."""
    fmap = Multiclass().fit(np.zeros((1, 2)), 3)
    first, second = (np.ones(9), 0.2), (-np.ones(9), 0.1)
    for norm in (1, 2, np.inf, "group"):
        assert NormBall(0.5, norm).mixture(first, second, fmap) == 1.0


def test_soft_mixture_is_exact_where_the_grid_misses_it():
    """The stationary point inside the triangle (SoftMoments' closed form) beats every point
    of a coarse grid and matches a fine one."""
    fmap = Multiclass().fit(np.zeros((1, 2)), 3)
    soft = SoftMoments(1.0)
    first, second = (np.r_[1.0, np.zeros(8)], 0.3), (np.r_[0.0, 1.0, np.zeros(7)], 0.2)
    s = soft.mixture(first, second, fmap)
    # orthogonal residuals with R^*(e_j) = 1/2: a = 0.3, b = 0.2 (each its gain), s = 0.2 / 0.5
    assert s == pytest.approx(0.4)
    value = _mixture_bound(soft, first, second, s, fmap)
    assert value == pytest.approx(0.3 * 0.3 + 0.2 * 0.2 - (0.3**2 + 0.2**2) / 2)
    assert value >= _best_on_triangle(soft, first, second, fmap, steps=7)


@settings(max_examples=30)
@given(
    seed=st.integers(0, 2**16),
    dim=st.integers(1, 40),
    count=st.integers(1, 30),
    size=st.integers(1, 20),
)
def test_lbfgs_memory_direction_is_the_two_loop_recursion(seed, dim, count, size):
    """The compact L-BFGS form against the two-loop recursion (Nocedal and Wright, Algorithm
    7.4) on the newest ``size`` pairs of a positive definite quadratic."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(dim, dim))
    A = A @ A.T + 1e-3 * np.eye(dim)
    memory, pairs = solvers._Memory(size), []
    for _ in range(count):
        s = rng.normal(size=dim) * 10.0 ** rng.integers(-3, 3)
        memory.push(s, A @ s)
        pairs.append((s, A @ s))
    pairs = pairs[-size:]
    gradient = rng.normal(size=dim)
    q, alphas = -gradient, []
    for s, y in reversed(pairs):
        alphas.append((s @ q) / (s @ y))
        q = q - alphas[-1] * y
    s, y = pairs[-1]
    q = q * (s @ y) / (y @ y)
    for (s, y), alpha in zip(pairs, reversed(alphas)):
        q = q + (alpha - (y @ q) / (s @ y)) * s
    assert len(memory) == len(pairs)
    np.testing.assert_allclose(
        memory.direction(gradient), q, rtol=1e-6, atol=1e-9 * np.abs(q).max()
    )


def test_lbfgs_memory_skips_pairs_without_curvature():
    memory = solvers._Memory(3)
    np.testing.assert_array_equal(memory.direction(np.ones(2)), -np.ones(2))
    memory.push(np.array([1.0, 0.0]), np.array([-1.0, 0.0]))  # s . y < 0: not a pair
    assert len(memory) == 0


@pytest.mark.parametrize("uncertainty", SETS)
@pytest.mark.parametrize("loss", ("zero_one", "squared", "cost_sensitive"))
def test_dual_bound_is_valid_for_any_adversaries_and_tight_at_the_optimal_ones(
    data, loss, uncertainty
):
    X, y = data
    objective, optimum = _problem(X, y, _loss(loss), _uncertainty(uncertainty, y.size))
    args = (objective.game, objective.operator, y, objective.weights, objective.uncertainty)
    rng = np.random.default_rng(0)
    slack = 1e-7 * max(1.0, abs(optimum.objective))
    for Q in (rng.dirichlet(np.ones(K), y.size), np.eye(K)[y], np.full((y.size, K), 1.0 / K)):
        assert dual_bound(*args, objective.fmap, Q) <= optimum.objective + slack
    if optimum.Q is not None:  # the program's adversaries attain the optimum
        tight = dual_bound(*args, objective.fmap, optimum.Q)
        assert tight == pytest.approx(optimum.objective, abs=1e-6)


def test_uncertainty_dual_bounds_are_the_conjugates_mixed_with_the_labels():
    fmap = Multiclass().fit(np.zeros((1, 2)), 2)  # 6 parameters, blocks per class
    g = np.array([3.0, -4.0, 0.0, 0.0, 0.0, 0.0])
    soft = SoftMoments(2.0)
    assert soft.conjugate(g, fmap) == pytest.approx(25.0 / 4.0)
    # base + r gain - r^2 R*(g), r = gain / (2 R*) = 0.2
    assert soft.dual_bound(g, 0.1, 2.5, fmap) == pytest.approx(0.1 + 0.2 * 2.5 - 0.04 * 6.25)
    assert soft.dual_bound(g, 0.1, 100.0, fmap) == pytest.approx(0.1 + 100.0 - 6.25)  # r = 1
    for norm, size in ((1, 7.0), (2, 5.0), (np.inf, 4.0)):
        ball = NormBall(1.0, norm)
        assert ball.conjugate(g, fmap) == np.inf and ball.conjugate(g / size, fmap) == 0.0
        assert ball.dual_bound(g, 0.5, 2.0, fmap) == pytest.approx(0.5 + 2.0 / size)
        assert ball.dual_bound(g, 0.5, -2.0, fmap) == 0.5  # r = 0: the labels themselves
        projected = ball.project_moments(g, fmap)
        assert ball.moment_norm(projected, fmap) == pytest.approx(1.0)
    assert Exact().dual_bound(g, 0.5, 2.0, fmap) == 0.5
    assert Exact().dual_bound(0 * g, 0.5, 2.0, fmap) == 2.5


@pytest.mark.parametrize("weight", [1.0, 2.5])
@pytest.mark.parametrize("mu", [1.0, 0.05, 1e-4])
def test_zero_one_quadratic_smoothing_matches_the_enumeration_and_brackets_the_game(weight, mu):
    rng = np.random.default_rng(1)
    F = rng.normal(size=(200, 6)) * rng.uniform(0.01, 5.0, size=(200, 1))
    F[:20, 1] = F[:20, 0]  # ties
    value, Q = closed_forms.zero_one_quadratic_smoothing(F, mu, weight)
    np.testing.assert_allclose(Q.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(Q >= 0)
    if weight == 1.0:  # the O(k^3) enumeration of the same problem
        reference, Q_ref = closed_forms.zero_one_smoothed(F, mu)
        np.testing.assert_allclose(value, reference, atol=1e-9)
        np.testing.assert_allclose(Q, Q_ref, atol=1e-9)
    exact = closed_forms.zero_one(F, weight)[0]
    rounding = 1e-12 * np.abs(F).max() / mu  # max q = (u - tau) / mu: conditioned by 1 / mu
    assert np.all(value <= exact + rounding) and np.all(exact <= value + mu / 2 + rounding)
    # Q is the gradient of the smoothed value
    direction = rng.normal(size=F.shape)
    step = 1e-7  # central differences are exact on a quadratic piece
    up = closed_forms.zero_one_quadratic_smoothing(F + step * direction, mu, weight)[0]
    down = closed_forms.zero_one_quadratic_smoothing(F - step * direction, mu, weight)[0]
    np.testing.assert_allclose(
        (up - down) / (2 * step), np.einsum("ij,ij->i", Q, direction), atol=1e-4
    )  # a step across a kink of the gradient (at 1e-7 of one) costs ~ step / mu


@pytest.mark.parametrize("loss", ["ordinal", "squared", "abstain", "cost_sensitive"])
def test_entropic_smoothing_of_the_vertex_table(loss):
    game = ag.Game(_loss(loss))
    smooth = smoothed_game(game)
    F = np.random.default_rng(2).normal(size=(50, K))
    mu = 0.01
    value, Q, exact_value, _ = smooth(F, mu)
    exact = game.value(F)
    np.testing.assert_allclose(exact_value, exact, atol=1e-12)
    size = len(game.vertex_table())
    assert np.all(exact <= value + 1e-12) and np.all(value <= exact + mu * np.log(size) + 1e-12)
    np.testing.assert_allclose(Q.sum(axis=1), 1.0, atol=1e-12)
    # a feasible adversary: H(q) + f^T q never exceeds the game value
    H = game.entropy(Q)
    assert np.all(H + np.einsum("ij,ij->i", F, Q) <= exact + 1e-9)


def test_obstacles_name_what_the_smoothing_solver_cannot_certify(data):
    X, _ = data
    fmap = Multiclass().fit(X, K)
    game = ag.Game(ag.losses.zero_one(K))
    assert smoothing_obstacle(game, SoftMoments(0.1), fmap) is None
    assert smoothing_obstacle(game, Exact(), fmap) == "exact"
    assert smoothing_obstacle(game, NormBall(0.0, 2), fmap) == "exact"
    kernel = ag.features.KernelFeatures("rbf").fit(X, K)
    assert "kernel" in smoothing_obstacle(game, SoftMoments(0.1), kernel)
    with pytest.raises(ag.exceptions.NotApplicableError, match="exact"):
        objective = SurrogateObjective(
            game, fmap.bind(X), np.zeros(len(X), int), None, Exact(), fmap
        )
        fit_smoothed(objective, np.zeros(fmap.n_params))


@pytest.fixture(scope="module")
def vehicle():
    data = ag.datasets.load("multiclass/vehicle")
    return StandardScaler().fit_transform(data.X), np.unique(data.y, return_inverse=True)[1]


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"loss": "ordinal"},
        {"loss": "abstain", "alpha": 0.3},
        pytest.param(  # 20 s; auto compiles an LP ball of this size (docs/results/auto.md)
            {"uncertainty": "linf", "strength": 0.01, "solver": "smoothing"},
            marks=pytest.mark.slow,
        ),
        {"uncertainty": "l2", "strength": 0.01, "loss": "squared"},
    ],
    ids=repr,
)
def test_default_fit_ends_certified(vehicle, params):
    """Beyond the compile threshold the default solver is the smoothing one, and every fit ends
    with ``gap_ <= tol * max(1, |objective_|)`` against the compiled optimum (for this size,
    with the cutting-plane finish when smoothing alone stops short, as for the linf set)."""
    X, y = vehicle
    tol = 1e-6
    model = ag.AdversarialClassifier(tol=tol, **params).fit(X, y)
    assert model.solver_ == "smoothing"
    assert model.converged_ == "certified"
    assert model.gap_ <= tol * max(1.0, abs(model.objective_))
    exact = ag.AdversarialClassifier(**{**params, "solver": "compile"}).fit(X, y)
    slack = 1e-7 * max(1.0, exact.objective_)
    assert model.objective_ - model.gap_ <= exact.objective_ + slack
    assert exact.objective_ <= model.objective_ + slack


def test_exact_moments_fall_back_to_the_compiled_program(vehicle):
    X, y = vehicle
    model = ag.AdversarialClassifier(uncertainty="exact").fit(X[:300], y[:300])
    assert model.solver_ == "compile" and model.gap_ == 0.0


def test_an_uncertified_smoothing_run_says_so_and_keeps_a_valid_gap(monkeypatch, vehicle):
    from advgame.solvers import auto as classifier

    monkeypatch.setattr(classifier, "AUTO_CERTIFY_SIZE", 10)  # no cutting-plane finish
    X, y = vehicle
    with pytest.warns(ag.exceptions.ConvergenceWarning, match="not certified"):
        model = ag.AdversarialClassifier(solver="smoothing", max_iter=3, tol=1e-9).fit(X, y)
    assert model.converged_ == "uncertified"
    assert model.stop_reason_.startswith("max_iter=3 reached")
    exact = ag.AdversarialClassifier(solver="compile").fit(X, y)
    assert np.isfinite(model.gap_) and model.gap_ > 1e-9 * model.objective_
    assert model.objective_ - model.gap_ <= exact.objective_ + 1e-7


def test_large_lbfgs_fits_are_finished_by_the_smoothing_certificate(monkeypatch, vehicle):
    """certify='auto' beyond the cutting-plane size: smoothing finishes the L-BFGS result."""
    from advgame.solvers import auto as classifier

    monkeypatch.setattr(classifier, "AUTO_CERTIFY_SIZE", 10)
    X, y = vehicle
    with warnings.catch_warnings():
        warnings.simplefilter("error", ag.exceptions.ConvergenceWarning)
        model = ag.AdversarialClassifier(solver="lbfgs", strength=1 / len(y), tol=1e-6).fit(X, y)
    assert model.converged_ == "certified" and model.gap_ <= 1e-6
    assert solvers.MAX_SMOOTHED_VERTICES >= len(ag.Game(ag.losses.squared(10)).vertex_table())


@pytest.mark.parametrize("uncertainty", ("soft", "linf"))
@pytest.mark.parametrize("loss", ("zero_one", "ordinal", "cost_sensitive"))
def test_coarse_warm_start_keeps_the_certificate(data, loss, uncertainty, monkeypatch):
    """The subsample warm start of large problems (here forced on 80 rows) changes the path,
    not the answer: certified, bracketing the compiled optimum, and ``coarse=False`` agrees."""
    X, y = data
    monkeypatch.setattr(solvers, "COARSE_MIN_ROWS", 40)
    monkeypatch.setattr(solvers, "COARSE_STEP", 3)
    objective, optimum = _problem(X, y, _loss(loss), _uncertainty(uncertainty, y.size))
    theta0 = np.zeros(objective.fmap.n_params)
    tol = 1e-6
    warm = fit_smoothed(objective, theta0, tol=tol)
    cold = fit_smoothed(objective, theta0, tol=tol, coarse=False)
    assert warm.message == cold.message == "certified"
    for result in (warm, cold):
        _assert_brackets(result, optimum)
    slack = 1e-7 * max(1.0, abs(optimum.objective))
    assert warm.objective == pytest.approx(cold.objective, abs=2 * tol + slack)


def test_coarse_warm_start_only_below_its_own_tolerance(data, monkeypatch):
    """At ``tol >= COARSE_TOL`` the subsample would be solved as tightly as the full problem:
    the run is the one of ``coarse=False``, step for step; below it the path differs."""
    X, y = data
    monkeypatch.setattr(solvers, "COARSE_MIN_ROWS", 40)
    monkeypatch.setattr(solvers, "COARSE_STEP", 3)
    objective, _ = _problem(X, y, _loss("zero_one"), _uncertainty("soft", y.size))
    theta0 = np.zeros(objective.fmap.n_params)
    for tol, same in ((solvers.COARSE_TOL, True), (1e-6, False)):
        default = fit_smoothed(objective, theta0, tol=tol)
        off = fit_smoothed(objective, theta0, tol=tol, coarse=False)
        assert default.message == off.message == "certified"
        assert (default.n_iter == off.n_iter and np.array_equal(default.theta, off.theta)) == same


def test_subset_objective_renormalises_the_weights(data):
    X, y = data
    objective, _ = _problem(X, y, _loss("zero_one"), _uncertainty("soft", y.size))
    rows = np.arange(0, y.size, 4)
    theta = np.random.default_rng(0).normal(size=objective.fmap.n_params)
    part = objective.subset(rows)
    assert part.weights.sum() == pytest.approx(1.0)
    value, gradient = part(theta)
    batch_value, batch_gradient = objective.batch(theta, rows)
    assert value == pytest.approx(batch_value, abs=1e-14)
    np.testing.assert_allclose(gradient, batch_gradient, atol=1e-14)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 6).flatmap(
        lambda k: st.tuples(
            arrays(np.float64, (k + 1, k), elements=st.floats(0, 1e6)),
            arrays(np.float64, (5, k), elements=st.floats(0, 1)),
        )
    )
)
def test_entropies_are_the_row_minima_of_the_expected_losses(case):
    """``H_L(q) = min_a (L q)_a`` row by row, with an extra action, ties and huge losses."""
    L, Q = case
    expected = np.min(Q @ L.T, axis=1)  # the same products, summed in another order
    np.testing.assert_allclose(solvers.entropies(L, Q), expected, rtol=1e-12, atol=1e-9)


def test_label_entries_are_found_in_either_memory_order(data, monkeypatch):
    """The smoothed surrogate reads ``f_{i,y_i}`` and writes the gradient at the labels in the
    potentials' own memory order: C-ordered, column-major (large inputs) and strided give the
    same value and gradient."""
    X, y = data
    objective, _ = _problem(X, y, _loss("zero_one"), _uncertainty("soft", y.size))
    surrogate = solvers.SmoothedSurrogate(objective, smoothed_game(objective.game), 0.1, 0.1)
    theta = np.random.default_rng(1).normal(size=objective.fmap.n_params)
    expected = surrogate(theta)
    forward = objective.operator.forward
    for layout in (np.asfortranarray, lambda F: np.hstack([F, F])[:, : F.shape[1]]):
        monkeypatch.setattr(objective.operator, "forward", lambda t, f=layout: f(forward(t)))
        value, gradient = surrogate(theta)
        assert value == pytest.approx(expected[0], abs=1e-14)
        np.testing.assert_allclose(gradient, expected[1], atol=1e-14)


@pytest.mark.parametrize("n", [300, 30_000])
def test_single_precision_operator(n):
    """``astype(float32)``: the same products to float32 rounding, returned in float64 (``F``
    column-major, the closed forms' layout), for small and large inputs; converted once."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(n, 7))
    fmap = Multiclass().fit(X, K)
    double = fmap.bind(X)
    single = double.astype(np.float32)
    assert single.X1.dtype == np.float32 and single.X1.shape == double.X1.shape
    assert double.astype("float32") is single  # converted once: a path's fits share it
    theta, G = rng.normal(size=fmap.n_params), rng.normal(size=(n, K)) / n
    F = single.forward(theta)
    assert F.dtype == np.float64 and F.flags.f_contiguous
    np.testing.assert_allclose(F, double.forward(theta), rtol=1e-5, atol=1e-5)
    for layout in (G, np.asfortranarray(G)):
        moment = single.adjoint(layout)
        assert moment.dtype == np.float64
        np.testing.assert_allclose(moment, double.adjoint(G), rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(single.subset(np.arange(5)).forward(theta), F[:5])


@pytest.mark.parametrize("uncertainty", ("soft", "linf"))
@pytest.mark.parametrize("loss", ("zero_one", "ordinal"))
@pytest.mark.parametrize("coarse_rows", [10**9, 40])
def test_single_precision_steps_certify_the_compiled_optimum(
    data, loss, uncertainty, coarse_rows, monkeypatch
):
    """Float32 products in the steps (and the coarse warm start), the certificate in float64:
    certified, bracketing the compiled optimum, and the objective is the float64 one."""
    X, y = data
    monkeypatch.setattr(solvers, "COARSE_MIN_ROWS", coarse_rows)
    monkeypatch.setattr(solvers, "COARSE_STEP", 3)
    objective, optimum = _problem(X, y, _loss(loss), _uncertainty(uncertainty, y.size))
    tol = 1e-6
    result = fit_smoothed(objective, np.zeros(objective.fmap.n_params), tol, precision="single")
    assert result.message == "certified"
    assert result.gap <= tol * max(1.0, abs(result.objective))
    _assert_brackets(result, optimum)
    assert result.objective == pytest.approx(objective(result.theta)[0], abs=1e-12)


def test_single_precision_falls_back_to_float64_when_the_check_fails(data, monkeypatch):
    """When the float64 check of the point the float32 steps certified fails, the run goes on
    in float64: here the "float32" objective is a different problem (X scaled by 1.2), whose
    certified optimum is far from the true one, and the result still brackets the optimum."""
    X, y = data
    objective, optimum = _problem(X, y, _loss("zero_one"), _uncertainty("soft", y.size))
    wrong, _ = _problem(1.2 * X, y, _loss("zero_one"), _uncertainty("soft", y.size))
    monkeypatch.setattr(SurrogateObjective, "astype", lambda self, dtype: wrong)
    theta0, tol = np.zeros(objective.fmap.n_params), 1e-6
    misled = fit_smoothed(wrong, theta0, tol, precision="double")
    assert objective(misled.theta)[0] > optimum.objective + 100 * tol  # not the answer
    result = fit_smoothed(objective, theta0, tol, precision="single")
    assert result.message == "certified"
    _assert_brackets(result, optimum)
    assert result.objective == pytest.approx(objective(result.theta)[0], abs=1e-12)


def test_precision_is_checked(data):
    X, y = data
    objective, _ = _problem(X, y, _loss("zero_one"), _uncertainty("soft", y.size))
    theta0 = np.zeros(objective.fmap.n_params)
    with pytest.raises(ValueError, match="precision must be"):
        fit_smoothed(objective, theta0, precision="half")
    fmap = ag.features.Thresholded().fit(X, K)
    thresholded = SurrogateObjective(
        objective.game, fmap.bind(X), y, objective.weights, objective.uncertainty, fmap
    )
    with pytest.raises(ValueError, match="astype"):
        fit_smoothed(thresholded, np.zeros(fmap.n_params), precision="single")


def test_a_surrogate_given_its_potentials_skips_the_product(data, monkeypatch):
    """``surrogate(theta, F)`` with ``F`` the potentials at ``theta`` (a stage starting where
    the last one stopped) is ``surrogate(theta)`` to the bit, without the forward product."""
    X, y = data
    objective, _ = _problem(X, y, _loss("zero_one"), _uncertainty("soft", y.size))
    surrogate = solvers.SmoothedSurrogate(objective, smoothed_game(objective.game), 0.1, 0.1)
    theta = np.random.default_rng(2).normal(size=objective.fmap.n_params)
    F = objective.operator.forward(theta)
    value, gradient = surrogate(theta)
    monkeypatch.setattr(objective.operator, "forward", lambda t: pytest.fail("recomputed F"))
    given_value, given_gradient = surrogate(theta, F)
    assert given_value == value
    np.testing.assert_array_equal(given_gradient, gradient)


def _with_memo(objective, memo):
    o = objective
    return SurrogateObjective(o.game, o.operator, o.y, o.weights, o.uncertainty, o.fmap, memo=memo)


def _at(objective, uncertainty):
    o = objective
    return SurrogateObjective(
        o.game, o.operator, o.y, o.weights, uncertainty, o.fmap, memo=objective.memo
    )


def _counting_evaluations(monkeypatch):
    """The number of surrogate evaluations (``SmoothedSurrogate.__call__``) made so far."""
    count = [0]
    call = solvers.SmoothedSurrogate.__call__

    def counted(self, theta, F=None):
        count[0] += 1
        return call(self, theta, F)

    monkeypatch.setattr(solvers.SmoothedSurrogate, "__call__", counted)
    return count


def _path(base, sets, memo, count):
    """Fits of ``base`` at each of ``sets`` in turn, each from the last one's parameters (a
    path of strengths), with ``memo``: the results and the evaluations each made.  At
    ``tol = 1e-2`` these fits end at their first smoothing, where the next one starts (as the
    20,000-row paths of docs/results/defaults.md do at ``1e-3``), so the memo serves."""
    theta, fits, evaluations = np.zeros(base.fmap.n_params), [], []
    for uncertainty_set in sets:
        before = count[0]
        result = fit_smoothed(_at(_with_memo(base, memo), uncertainty_set), theta, 1e-2)
        theta = result.theta
        fits.append(result)
        evaluations.append(count[0] - before)
    return fits, evaluations


def test_a_memo_along_a_path_of_strengths_saves_evaluations(data, monkeypatch):
    """A path of ``lam`` (each fit from the last one's parameters) with a
    :class:`SmoothingMemo` (the last evaluation and the L-BFGS pairs moved to the new ``lam``)
    makes fewer evaluations than without it, and every fit is certified and brackets the
    compiled optimum at its ``lam``; the first fit, with nothing kept, is the same to the
    bit."""
    X, y = data
    count = _counting_evaluations(monkeypatch)
    sets = [SoftMoments(s / y.size) for s in (10.0, 1.0, 0.1, 0.01)]
    base, _ = _problem(X, y, _loss("zero_one"), sets[0])
    plain, plain_count = _path(base, sets, None, count)
    kept, kept_count = _path(base, sets, solvers.SmoothingMemo(), count)
    np.testing.assert_array_equal(kept[0].theta, plain[0].theta)
    assert kept_count[0] == plain_count[0]
    assert sum(kept_count[1:]) < sum(plain_count[1:])
    for result, uncertainty_set in zip(kept, sets):
        _, optimum = _problem(X, y, _loss("zero_one"), uncertainty_set)
        assert result.message == "certified"
        _assert_brackets(result, optimum)


def test_a_memo_of_a_norm_ball_keeps_the_evaluation_only_and_changes_no_bit(data, monkeypatch):
    """For a norm ball (no pairs carried: the Moreau envelope's curvature changes with the
    smoothing) the memo serves the first evaluation only, which is the one a fresh evaluation
    computes: the path's fits are those without the memo to the bit, with fewer evaluations."""
    X, y = data
    count = _counting_evaluations(monkeypatch)
    sets = [NormBall(r, 2) for r in (0.5, 0.05, 0.005)]
    base, _ = _problem(X, y, _loss("zero_one"), sets[0])
    plain, plain_count = _path(base, sets, None, count)
    kept, kept_count = _path(base, sets, solvers.SmoothingMemo(), count)
    for a, b in zip(plain, kept):
        np.testing.assert_array_equal(a.theta, b.theta)
        assert (a.objective, a.gap, a.n_iter, a.message) == (
            b.objective,
            b.gap,
            b.n_iter,
            b.message,
        )
    assert all(k in (p, p - 1) for k, p in zip(kept_count, plain_count))
    assert sum(kept_count) < sum(plain_count)


def test_shifted_pairs_are_the_pairs_of_the_shifted_objective():
    """``_Memory.shifted(delta)``: the pairs ``(s, y + delta s)`` of ``J + delta/2
    ||theta||^2`` in their order, a pair whose curvature ``s . y`` the shift takes away
    dropped, as :meth:`push` drops it."""
    from advgame.solvers.first_order import _Memory

    rng = np.random.default_rng(6)
    pairs = [(rng.normal(size=7), rng.normal(size=7)) for _ in range(5)]
    pairs = [(s, y if s @ y > 0 else -y) for s, y in pairs]
    memory = _Memory(3)
    for s, y in pairs:
        memory.push(s, y)
    delta = -min(float(s @ y) / float(s @ s) for s, y in pairs[-3:]) * 1.01
    expected = _Memory(3)
    for s, y in zip(memory.S, memory.Y):
        expected.push(s, y + delta * s)
    shifted = memory.shifted(delta)
    assert len(shifted) == len(expected) < 3  # one pair lost its curvature
    g = rng.normal(size=7)
    np.testing.assert_array_equal(shifted.direction(g), expected.direction(g))
    np.testing.assert_array_equal(memory.shifted(0.0).direction(g), memory.direction(g))
    assert len(_Memory(3).shifted(1.0)) == 0


def test_a_fit_certified_where_the_last_one_stopped_costs_no_evaluation(data, monkeypatch):
    """With float32 steps the kept evaluation is float64: a fit that starts certified at the
    kept point (here the same problem again) needs no evaluation, its float64 check included,
    and returns the same certified point; a fit at a new strength from there is certified."""
    X, y = data
    count = _counting_evaluations(monkeypatch)
    loss, lam = _loss("zero_one"), 1.0 / y.size
    objective, optimum = _problem(X, y, loss, SoftMoments(lam))
    objective = _with_memo(objective, solvers.SmoothingMemo())
    tol = 1e-2  # the fits end at their first smoothing (see _path)
    first = fit_smoothed(objective, np.zeros(objective.fmap.n_params), tol, precision="single")
    assert first.message == "certified"
    before = count[0]
    again = fit_smoothed(objective, first.theta, tol, precision="single")
    assert count[0] == before
    assert again.message == "certified" and again.objective == first.objective
    np.testing.assert_array_equal(again.theta, first.theta)
    weaker, weaker_optimum = _problem(X, y, loss, SoftMoments(lam / 10))
    result = fit_smoothed(_at(objective, weaker.uncertainty), first.theta, tol, precision="single")
    assert result.message == "certified"
    _assert_brackets(result, weaker_optimum)
    assert result.objective == pytest.approx(weaker(result.theta)[0], abs=1e-12)


def test_a_memo_recalls_only_the_point_smoothing_and_loss_it_kept(data):
    """``recall`` answers for the kept ``theta``, ``mu`` and loss matrix only; the pairs serve
    soft moments only, moved to the new ``lam``; ``astype`` shares an objective's memo,
    ``subset`` (other rows) does not."""
    X, y = data
    objective, _ = _problem(X, y, _loss("zero_one"), _uncertainty("soft", y.size))
    memo = solvers.SmoothingMemo()
    objective = _with_memo(objective, memo)
    L = objective.game.loss.matrix
    theta = np.random.default_rng(4).normal(size=objective.fmap.n_params)
    assert memo.recall(theta, 0.1, L) is None
    surrogate = solvers.SmoothedSurrogate(objective, smoothed_game(objective.game), 0.1, 0.1)
    surrogate(theta)
    from advgame.solvers.first_order import _Memory

    pairs = _Memory(5)
    pairs.push(np.ones(theta.size), 2.0 * np.ones(theta.size))
    memo.keep(surrogate, pairs, SoftMoments(0.5), 0.1)
    assert memo.recall(theta.copy(), 0.1, L) is surrogate.part
    assert memo.recall(theta + 1e-12, 0.1, L) is None
    assert memo.recall(theta, 0.05, L) is None
    assert memo.recall(theta, 0.1, _loss("ordinal").matrix) is None
    assert memo.pairs(NormBall(0.1, 2), 0.1) is None
    assert memo.pairs(SoftMoments(0.25), 0.05) is None  # pairs of another smoothing
    moved = memo.pairs(SoftMoments(0.25), 0.1)
    np.testing.assert_array_equal(moved.Y[0], 1.75 * np.ones(theta.size))
    memo.keep(None, pairs, NormBall(0.1, 2), 0.1)  # a norm ball's fit: no pairs kept
    assert memo.pairs(SoftMoments(0.25), 0.1) is None
    assert memo.recall(theta, 0.1, L) is surrogate.part  # the evaluation stays
    assert objective.astype(np.float32).memo is memo
    assert objective.subset(np.arange(10)).memo is None


def test_a_resumed_surrogate_is_the_evaluated_one(data):
    """``resume(theta, part)`` with the part of an evaluation at ``theta`` gives that
    evaluation's value and gradient at another regulariser, and its state (``last``)."""
    X, y = data
    objective, _ = _problem(X, y, _loss("zero_one"), SoftMoments(0.01))
    other = _at(objective, SoftMoments(0.003))
    smooth = smoothed_game(objective.game)
    theta = np.random.default_rng(5).normal(size=objective.fmap.n_params)
    evaluated = solvers.SmoothedSurrogate(objective, smooth, 0.1, 0.1)
    evaluated(theta)
    fresh = solvers.SmoothedSurrogate(other, smooth, 0.1, 0.1)
    value, gradient = fresh(theta)
    resumed = solvers.SmoothedSurrogate(other, smooth, 0.1, 0.1)
    resumed_value, resumed_gradient = resumed.resume(theta, evaluated.part)
    assert resumed_value == value
    np.testing.assert_array_equal(resumed_gradient, gradient)
    for a, b in zip(resumed.last, fresh.last):
        np.testing.assert_array_equal(a, b)


class _HalfMemo:
    """Keeps and recalls, but has no pairs: not a memo the smoothing solver can read."""

    def keep(self, *args):
        pass

    def recall(self, *args):
        return None


@pytest.mark.parametrize("memo", [{"theta": None}, _HalfMemo()], ids=["dict", "no pairs"])
def test_a_memo_that_is_not_one_is_refused(data, memo):
    """``SurrogateObjective(memo=...)`` names the argument and what it expects."""
    X, y = data
    objective, _ = _problem(X, y, _loss("zero_one"), _uncertainty("soft", y.size))
    with pytest.raises(TypeError, match="memo must be an advgame.solvers.smoothing.SmoothingMemo"):
        _with_memo(objective, memo)
