"""The minimax family of ``PredictionGame`` (Farnia and Tse's model: a generalised entropy, or a
loss matrix, with per-class moment balls): compiled primal and dual against references computed
another way (numpy evaluations of the objective and the entropy, the estimators' first-order
solvers with their own weak-duality certificates)."""

import pickle

import cvxpy as cp
import numpy as np
import pytest

import advgame as ag
from advgame.compile.minimax import MinimaxProgram

ENTROPIES = {
    "brier": lambda k: ag.losses.brier(k),
    "log": lambda k: ag.losses.log(k),
    "zero_one": lambda k: ag.losses.zero_one(k),
    "ordinal": lambda k: ag.losses.ordinal(k),
    "cost": lambda k: ag.LossMatrix(
        np.random.default_rng(k).uniform(0.2, 2.0, (k, k)) * (1 - np.eye(k))
    ),
}
BALLS = {
    "l2": lambda: ag.MomentBalls(0.15, norm=2),
    "inf": lambda: ag.MomentBalls(0.05, norm="inf"),
    "l1": lambda: ag.MomentBalls(0.2, norm=1),
    "ridge": lambda: ag.MomentBalls(0.05, norm=2, squared=True),
    "group": lambda: ag.MomentBalls(0.1, norm="group", groups=[0, 0, 1]),
    "l1inf": lambda: ag.MomentBalls(0.1, norm="l1inf"),
}


def _data(seed, n, k, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.arange(n) % k  # every class present
    rng.shuffle(y)
    return X + 0.8 * np.eye(k, d)[y], y


def _primal_in_numpy(program, A):
    """Eq. 21 at ``A`` evaluated without cvxpy: the per-sample game (closed form / vertex table)
    and the balls' numpy penalty."""
    F = program.X1 @ A.T
    if not program.regression:
        F = np.hstack([F, np.zeros((F.shape[0], 1))])
    value = ag.Game(program.loss).value(F)
    fit = program.weights @ (value - np.einsum("ij,ij->i", program.Theta, F))
    return fit + program.balls.penalty(A[:, : program.n_features])


def _dual_in_numpy(program, Q):
    """The adversary's average entropy at ``Q``, the squared balls' penalty ``R^*(G)``, the
    intercept residual and the moment residual ``G`` (checked against the balls)."""
    t, w = program.n_rows, program.weights
    residual = (w[:, None] * (program.Theta - Q))[:, :t]
    G = residual.T @ program.X1[:, : program.n_features]
    entropy = w @ ag.Game(program.loss).entropy(Q)
    penalty = program.balls.conjugate(G) if program.balls.squared else 0.0
    return entropy, penalty, residual.sum(axis=0), G


CASES = [
    (loss, balls, k, seed)
    for seed, (loss, balls, k) in enumerate(
        (loss, balls, k) for loss in ENTROPIES for balls in BALLS for k in (2, 3)
    )
]


@pytest.mark.parametrize("loss, balls, k, seed", CASES)
def test_primal_equals_dual_and_the_numpy_evaluations(loss, balls, k, seed):
    X, y = _data(seed, 12 + seed % 5, k)
    declared = ag.PredictionGame(ENTROPIES[loss](k), uncertainty=BALLS[balls]())
    assert declared.family == "minimax"
    program = declared.compile(X, y)
    assert isinstance(program, MinimaxProgram)
    primal = program.solve()
    adversary = program.dual().solve()
    scale = max(1.0, abs(primal.objective))
    assert abs(primal.objective - adversary.value) <= 1e-6 * scale
    # the primal's A, evaluated by the per-sample game's own fast path
    assert _primal_in_numpy(program, primal.theta) == pytest.approx(primal.objective, abs=1e-6)
    # the dual's q: feasible, and its entropy (numpy) is the optimum
    entropy, penalty, intercept, G = _dual_in_numpy(program, adversary.Q)
    assert np.allclose(adversary.Q.sum(axis=1), 1) and adversary.Q.min() >= -1e-9
    np.testing.assert_allclose(intercept, 0, atol=1e-6)
    if program.balls.squared:
        value = entropy - penalty
    else:  # inside the balls (to the solver's tolerance), where R* is 0
        norms, eps = program.balls._norms_and_radii(G)
        assert np.all(norms <= eps + 1e-6)
        value = entropy
    assert value == pytest.approx(primal.objective, abs=2e-6 * scale)


@pytest.mark.parametrize("rho", [None, 2.5])
@pytest.mark.parametrize("balls", ["inf", "l2", "ridge"])
def test_regression_primal_equals_dual(rho, balls):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(25, 3))
    y = X @ [1.0, -0.5, 0.0] + 0.2 * rng.normal(size=25)
    program = ag.PredictionGame(ag.losses.quadratic(rho), uncertainty=BALLS[balls]()).compile(X, y)
    primal, adversary = program.solve(), program.dual().solve()
    assert primal.objective == pytest.approx(adversary.value, abs=1e-6)
    assert _primal_in_numpy(program, primal.theta) == pytest.approx(primal.objective, abs=1e-6)
    m = adversary.Q[:, 0]
    assert rho is None or np.all(np.abs(m) <= rho + 1e-7)
    np.testing.assert_allclose(
        primal.P,
        np.clip(program.X1 @ primal.theta[0] / 2, -(rho or np.inf), rho or np.inf),
        atol=1e-6,
    )


@pytest.mark.parametrize(
    "make, loss",
    [
        (lambda: ag.MinimaxClassifier("zero_one", radius=0.1, solver="fast", tol=1e-7), "zero_one"),
        (lambda: ag.MinimaxClassifier("brier", radius=0.1, solver="fast", tol=1e-9), "brier"),
        (lambda: ag.MinimaxClassifier("log", radius=0.1, solver="fast", tol=1e-9), "log"),
        (lambda: ag.MinimaxRegressor(radius=0.1, rho=3.0, solver="fast", tol=1e-9), "quadratic"),
    ],
    ids=["zero_one", "brier", "log", "quadratic"],
)
def test_fast_fit_meets_the_compiled_optimum_of_its_declaration(make, loss):
    """The first-order solver (its own certificate) and the declaration's program agree."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=60) > 0).astype(int) + (X[:, 1] > 0.8)
    if loss == "quadratic":
        y = X @ [1.0, 0.5, 0.0] + 0.3 * rng.normal(size=60)
    model = make().fit(X, y)
    assert model.game_.family == "minimax"
    optimum = model.game_.compile(X, y).solve().objective
    assert model.objective_ - model.duality_gap_ <= optimum + 1e-7
    assert optimum <= model.objective_ + 1e-7
    assert model.objective_ - optimum <= max(model.duality_gap_, 1e-6)


def test_compiled_estimator_keeps_its_program_and_pickles_without_it():
    X, y = _data(0, 30, 3)
    model = ag.MinimaxClassifier("zero_one", radius=0.1, solver="compile").fit(X, y)
    assert isinstance(model.program_, MinimaxProgram)
    problem = model.program_.to_cvxpy()
    assert problem.value == pytest.approx(model.objective_, abs=1e-7)
    clone = pickle.loads(pickle.dumps(model))
    assert not hasattr(clone, "program_")
    np.testing.assert_array_equal(clone.predict(X), model.predict(X))


def test_printed_programs_read_as_the_math():
    X, y = _data(1, 10, 3)
    program = ag.PredictionGame("zero_one", uncertainty=ag.MomentBalls(0.1, "inf")).compile(X, y)
    assert program.kind == "LP"
    primal, dual = program.to_cvxpy(), program.dual().to_cvxpy()
    assert isinstance(primal, cp.Problem) and isinstance(dual, cp.Problem)
    assert set(primal.var_dict) == {"A", "u", "p"} and set(dual.var_dict) == {
        "q",
        "v",
        "moment_gap",
    }
    assert set(primal.constraint_groups) == {"game", "simplex"}
    assert set(dual.constraint_groups) == {"simplex", "game", "intercept", "moment_gap", "moments"}
    text = str(primal) + str(dual)
    for piece in ("[X, 1] @ A.T", "p @ L", "Theta", "q @ L^T", "norm_inf", "<= radius[0]"):
        assert piece in text, piece
    assert "minimax program (LP)" in program.describe()


@pytest.mark.parametrize(
    "loss, balls, pieces",
    [
        (
            ag.losses.log(3),
            ag.MomentBalls(0.1),
            (r"\log \sum_j e^{f_j}", r"0.1\, \|A_r\|_{2}", r"q_j \log q_j"),
        ),
        (
            "zero_one",
            ag.MomentBalls(0.2, "inf"),
            (r"L^\top p", r"0.2\, \|A_r\|_{1}", r"\|G_r\|_{\infty} \le 0.2"),
        ),
        (
            ag.losses.brier(3),
            ag.MomentBalls(0.3, squared=True),
            (r"(f_j - \tau)_+^2", r"0.3 \|A_r\|_{2}^2", r"(4 \cdot 0.3)"),
        ),
        (
            ag.losses.quadratic(2.0),
            ag.MomentBalls([0.1, 0.2], "group", groups=[0, 1]),
            (r"\mathrm{huber}", r"\epsilon_g \|A_{r,g}\|_2", r"|m_i| \le \rho", r"\rho = 2"),
        ),
    ],
    ids=["log-l2", "zero_one-inf", "brier-ridge", "quadratic-group"],
)
def test_latex_substitutes_the_declared_pieces(loss, balls, pieces):
    declared = ag.PredictionGame(loss, uncertainty=balls)
    text = declared.latex()
    for piece in pieces:
        assert piece in text, (piece, text)
    assert text.count(r"\begin{aligned}") == 3 and text.count("$$") == 6  # primal, dual, where


@pytest.mark.parametrize(
    "loss, kind, words",
    [
        (ag.losses.log(3), "EXP", ("softmax", "L-BFGS")),
        (ag.losses.brier(3), "SOCP", ("projection", "Brier")),
        ("zero_one", "SOCP", ("zero_one", "smooths")),
    ],
)
def test_explain_names_the_fast_path_and_the_program(loss, kind, words):
    text = ag.PredictionGame(loss, uncertainty=ag.MomentBalls(0.1)).explain()
    assert f"program: {kind}" in text
    for word in words:
        assert word in text, (word, text)


def test_invalid_minimax_declarations_name_both_declarations():
    with pytest.raises(ValueError, match="features.*uncertainty.*Valid"):
        ag.PredictionGame("zero_one", features="rbf", uncertainty=ag.MomentBalls(0.1))
    with pytest.raises(ValueError, match="loss.*uncertainty.*Birkhoff"):
        ag.PredictionGame("hamming", uncertainty=ag.MomentBalls(0.1))
    with pytest.raises(ValueError, match="4 labels but y has 3 classes"):
        ag.PredictionGame(ag.losses.log(4), uncertainty=ag.MomentBalls(0.1)).compile(
            *_data(0, 9, 3)
        )
    with pytest.raises(ValueError, match="backend='highs' solves LPs"):
        ag.PredictionGame(ag.losses.log(3), uncertainty=ag.MomentBalls(0.1)).compile(
            *_data(0, 9, 3)
        ).solve(backend="highs")
