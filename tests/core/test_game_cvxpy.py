"""Game.to_cvxpy: both players' LPs of one sample (Fathony et al. 2018a Eq. 4 and Eq. 10), checked against
the game's closed forms and vertex tables and against scipy's linprog written out here."""

import numpy as np
import pytest
from scipy.optimize import linprog

import advgame as ag
from advgame.exceptions import NotApplicableError
from advgame.game import GameLPs

cp = pytest.importorskip("cvxpy")

RTOL = 1e-7
ROWS = 2  # random potential vectors per loss matrix


def _cases():
    rng = np.random.default_rng(20240607)
    cases = []  # (id, loss, seed of the potentials)
    for k in range(2, 7):
        cases += [
            (f"zero_one{k}", ag.losses.zero_one(k)),
            (f"ordinal{k}", ag.losses.ordinal(k, weight=1.5)),
            (f"squared{k}", ag.losses.squared(k)),
            (f"abstain.3_{k}", ag.losses.abstain(k, alpha=0.3)),
            (f"abstain.7_{k}", ag.losses.abstain(k, alpha=0.7)),
            (f"cost{k}x{k}", rng.uniform(0.0, 2.0, (k, k))),
            (f"cost{k + 2}x{k}", rng.uniform(0.0, 2.0, (k + 2, k))),
            (f"cost{k - 1}x{k}", rng.uniform(0.0, 2.0, (k - 1, k))),
        ]
    return [(name, loss, seed) for seed, (name, loss) in enumerate(cases)]


CASES = _cases()


def close(actual, reference, what):
    err = abs(float(actual) - float(reference)) / max(1.0, abs(float(reference)))
    assert err <= RTOL, f"{what}: {actual!r} vs {reference!r} (relative error {err:.2e})"
    return err


def linprog_value(L, f):
    """Both LPs by scipy's HiGHS, written out independently of advgame: (adversary, predictor)."""
    l, k = L.shape
    # adversary: x = (q, v); min -(f q + v)  s.t.  -L q + v 1 <= 0,  1^T q = 1,  q >= 0
    adversary = linprog(
        -np.append(f, 1.0),
        A_ub=np.hstack([-L, np.ones((l, 1))]),
        b_ub=np.zeros(l),
        A_eq=np.append(np.ones(k), 0.0)[None],
        b_eq=[1.0],
        bounds=[(0, None)] * k + [(None, None)],
        method="highs",
    )
    # predictor: x = (p, u); min u  s.t.  L^T p - u 1 <= -f,  1^T p = 1,  p >= 0
    predictor = linprog(
        np.append(np.zeros(l), 1.0),
        A_ub=np.hstack([L.T, -np.ones((k, 1))]),
        b_ub=-f,
        A_eq=np.append(np.ones(l), 0.0)[None],
        b_eq=[1.0],
        bounds=[(0, None)] * l + [(None, None)],
        method="highs",
    )
    assert adversary.status == 0 and predictor.status == 0
    return -adversary.fun, predictor.fun


def assert_distribution(x, n, what):
    x = np.asarray(x, dtype=float)
    assert x.shape == (n,), what
    assert np.all(x >= -1e-9), f"{what} has a negative entry: {x}"
    assert abs(x.sum() - 1.0) <= 1e-8, f"{what} sums to {x.sum()}"
    return x


@pytest.mark.parametrize("name, loss, seed", CASES, ids=[case[0] for case in CASES])
def test_both_lps_give_the_game_value(name, loss, seed):
    game = ag.Game(loss)
    L = game.loss.matrix
    l, k = L.shape
    rng = np.random.default_rng(seed)
    F = rng.normal(0.0, 1.0, (ROWS, k)) * np.array([[1.0], [3.0]])
    references = {"vertices": game.value(F, method="vertices")}
    if game.structure.has_closed_form:
        references["closed_form"] = game.value(F, method="closed_form")
    for i, f in enumerate(F):
        lps = game.to_cvxpy(f)
        assert isinstance(lps, GameLPs)
        adversary, predictor = lps
        max_value = adversary.solve(solver=cp.HIGHS)
        min_value = predictor.solve(solver=cp.HIGHS)
        assert adversary.status == predictor.status == cp.OPTIMAL
        by_linprog = linprog_value(L, f)
        value = references["vertices"][i]
        checks = {
            "adversary LP": max_value,
            "predictor LP": min_value,
            "linprog adversary": by_linprog[0],
            "linprog predictor": by_linprog[1],
        }
        if "closed_form" in references:
            checks["closed form"] = references["closed_form"][i]
        # the adversary's q is in the simplex and attains the value: min_a (L q)_a + f^T q
        q = assert_distribution(adversary.var_dict["q"].value, k, "q")
        checks["min(Lq) + f q"] = np.min(L @ q) + f @ q
        checks["v + f q"] = adversary.var_dict["v"].value + f @ q
        # the predictor's p attains it: max_j (L^T p + f)_j
        p = assert_distribution(predictor.var_dict["p"].value, l, "p")
        checks["max(L^T p + f)"] = np.max(L.T @ p + f)
        checks["u"] = predictor.var_dict["u"].value
        # the duals of the first constraints are the other player's strategies
        p_dual = assert_distribution(adversary.constraints[0].dual_value, l, "dual p")
        checks["max(L^T p_dual + f)"] = np.max(L.T @ p_dual + f)
        q_dual = assert_distribution(predictor.constraints[0].dual_value, k, "dual q")
        checks["min(L q_dual) + f q_dual"] = np.min(L @ q_dual) + f @ q_dual
        for what, got in checks.items():
            close(got, value, f"{name} row {i}: {what}")
        close(max_value, min_value, f"{name} row {i}: strong duality")


@pytest.mark.parametrize(
    "loss",
    [ag.losses.abstain(4, alpha=0.7), np.random.default_rng(3).uniform(0, 2, (6, 4))],
    ids=["abstain.7", "cost6x4"],
)
@pytest.mark.parametrize("solver", [None, "CLARABEL"])
def test_other_solvers(loss, solver):
    game = ag.Game(loss)
    f = np.random.default_rng(11).normal(size=game.n_labels)
    value = game.value(f, method="vertices")
    for problem in game.to_cvxpy(f):
        close(problem.solve(solver=solver), value, f"{problem.objective.NAME} with {solver}")


def test_names_read_as_math():
    game = ag.Game(ag.losses.abstain(3, alpha=0.7))  # non-square: 4 actions x 3 labels
    lps = game.to_cvxpy([0.1, 0.0, 0.4])
    assert lps._fields == ("adversary", "predictor")
    assert lps.adversary is lps[0] and lps.predictor is lps[1]
    text = str(lps.adversary)
    assert "maximize v + f @ q" in text and "L @ q" in text and "0.0 <= q" in text
    assert "minimize u" in str(lps.predictor) and "L.T @ p + f <= u" in str(lps.predictor)
    assert set(lps.adversary.var_dict) == {"q", "v"}
    assert set(lps.predictor.var_dict) == {"p", "u"}
    assert lps.adversary.var_dict["q"].shape == (3,)
    assert lps.predictor.var_dict["p"].shape == (4,)
    names = {c.name() for c in lps.adversary.constants()} | {
        c.name() for c in lps.predictor.constants()
    }
    assert {"L", "f"} <= names
    constant = next(c for c in lps.adversary.constants() if c.name() == "L")
    np.testing.assert_array_equal(constant.value, game.loss.matrix)


def test_lp_is_the_adversary_problem():
    game = ag.Game(np.random.default_rng(2).uniform(0, 2, (5, 3)))
    f = [0.5, -1.0, 0.25]
    assert str(game.lp(f)) == str(game.to_cvxpy(f).adversary)
    assert game.lp(f).solve(solver=cp.HIGHS) == pytest.approx(game.value(f), rel=RTOL)


@pytest.mark.parametrize(
    "f, match",
    [
        ([0.0, 1.0], r"f must have 3 columns"),
        ([0.0, 1.0, 2.0, 3.0], r"f must have 3 columns"),
        ([0.0, np.nan, 1.0], r"f must be finite"),
        ([0.0, np.inf, 1.0], r"f must be finite"),
        (np.zeros((2, 3)), r"one potential vector of shape \(3,\)"),
        (np.zeros((1, 3)), r"one potential vector of shape \(3,\)"),
        (np.zeros((1, 3, 1)), r"f must have shape"),
    ],
    ids=["short", "long", "nan", "inf", "2d", "2d-one-row", "3d"],
)
def test_bad_f(f, match):
    game = ag.Game(ag.losses.zero_one(3))
    with pytest.raises(ValueError, match=match):
        game.to_cvxpy(f)
    with pytest.raises(ValueError, match=match):
        game.lp(f)


@pytest.mark.parametrize("entropy", [ag.losses.brier(3), ag.losses.log(3)], ids=["brier", "log"])
def test_entropy_game_has_no_lps(entropy):
    game = ag.Game(entropy)
    with pytest.raises(NotApplicableError, match="not polyhedral.*program"):
        game.to_cvxpy([0.0, 1.0, 2.0])
    assert isinstance(game.program([0.0, 1.0, 2.0]), cp.Problem)
