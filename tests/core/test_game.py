"""Game: input validation, dispatch, the cvxpy teaching LP, pickling, threads and verify."""

import pickle
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import advgame as ag
from advgame.verify import random_potentials, verify_game

K = 3


@pytest.fixture(scope="module")
def game():
    return ag.Game(ag.losses.zero_one(K))


def assert_close(actual, reference, L, what, rtol=1e-9):
    scale = np.maximum(np.maximum(1.0, np.abs(reference)), np.max(L))
    err = np.abs(np.asarray(actual) - reference) / scale
    assert np.all(err <= rtol), f"{what}: relative error {err.max():.3e}"


# ---------------------------------------------------------------------------------- bad inputs
BAD_POTENTIALS = [
    (np.array([[0.0, np.nan, 1.0]]), r"F must be finite.*nan.*\(0, 1\)"),
    (np.array([0.0, 1.0, np.inf]), r"F must be finite.*inf"),
    (np.array([[0.0, 1.0, 2.0], [-np.inf, 0.0, 0.0]]), r"F must be finite.*\(1, 0\)"),
    (np.zeros((2, 4)), r"F must have 3 columns.*\(2, 4\)"),
    (np.zeros(2), r"F must have 3 columns"),
    (np.zeros((2, 3, 1)), r"F must have shape \(n, 3\) or \(3,\).*\(2, 3, 1\)"),
    (np.zeros(()), r"F must have shape"),
    (np.zeros((0, 3)), r"F is empty"),
    ("abc", r"F must be a numeric array"),
    ([["a", "b", "c"]], r"F must be a numeric array"),
    ([[0.0, 1.0, 2.0], [1.0]], r"F must be a numeric array"),
]
BAD_IDS = [
    "nan",
    "inf",
    "minus-inf",
    "columns",
    "short-row",
    "3d",
    "0d",
    "empty",
    "string",
    "strings",
    "ragged",
]


@pytest.mark.parametrize("F, match", BAD_POTENTIALS, ids=BAD_IDS)
@pytest.mark.parametrize("call", ["value", "adversary", "predictor", "predict"])
def test_bad_potentials_raise_value_error(game, call, F, match):
    with pytest.raises(ValueError, match=match):
        getattr(game, call)(F)


@pytest.mark.parametrize("F, match", BAD_POTENTIALS, ids=BAD_IDS)
def test_bad_potentials_in_surrogate(game, F, match):
    with pytest.raises(ValueError, match=match):
        game.surrogate(F, 0)


@pytest.mark.parametrize("method", ["lp", "vertices", "closed_form"])
def test_bad_potentials_are_checked_for_every_method(game, method):
    with pytest.raises(ValueError, match=r"finite"):
        game.value([0.0, np.nan, 0.0], method=method)


@pytest.mark.parametrize(
    "y, match",
    [
        ([0, K], r"y must be label indices in 0\.\.2; got values from 0 to 3"),
        ([-1, 0], r"y must be label indices in 0\.\.2; got values from -1 to 0"),
        ([0, 1, 2], r"y must hold one label per row \(2\)"),
        ([0], r"y must hold one label per row \(2\)"),
        ([[0, 1]], r"y must hold one label per row"),
        ([1.5, 0.0], r"y must be integer label indices"),
        ([np.nan, 0.0], r"y must be integer label indices"),
        (["a", "b"], r"y must be integer label indices"),
    ],
    ids=["too-large", "negative", "too-long", "too-short", "2d", "non-integer", "nan", "strings"],
)
def test_bad_labels_raise_value_error(game, y, match):
    F = np.zeros((2, K))
    with pytest.raises(ValueError, match=match):
        game.surrogate(F, y)


def test_integer_valued_float_labels_are_accepted(game):
    F = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
    np.testing.assert_array_equal(game.surrogate(F, [0.0, 2.0]), game.surrogate(F, [0, 2]))
    np.testing.assert_array_equal(
        game.surrogate(F, np.array([0, 2], dtype=np.int8)), game.surrogate(F, [0, 2])
    )


@pytest.mark.parametrize("method", ["best", "LP", "", None, "closed-form"])
def test_unknown_method_raises(game, method):
    with pytest.raises(ValueError, match=r"method must be one of"):
        game.value(np.zeros(K), method=method)
    with pytest.raises(ValueError, match=r"method must be one of"):
        game.predictor(np.zeros(K), method=method)


@pytest.mark.parametrize(
    "matrix, match",
    [
        (np.zeros((3, 1)), r"at least 2 labels"),
        (np.array([1.0, 2.0]), r"2-D"),
        (np.array([[0.0, -1.0], [1.0, 0.0]]), r"non-negative"),
    ],
)
def test_bad_game_matrix_raises(matrix, match):
    with pytest.raises(ValueError, match=match):
        ag.Game(matrix)


def test_game_attributes_and_repr():
    game = ag.Game(ag.losses.abstain(4, alpha=0.3))
    assert (game.n_labels, game.n_actions) == (4, 5)
    assert game.loss == ag.losses.abstain(4, alpha=0.3)
    assert game.structure.kind == "abstain"
    assert repr(game) == "Game(5 actions x 4 labels, fast_path='abstain')"
    # a plain array is accepted and recognised
    assert ag.Game(2 * (1 - np.eye(3))).structure == ag.losses.zero_one(3, 2.0).structure


# -------------------------------------------------------------------------------- fast paths
@pytest.mark.parametrize(
    "loss, expected",
    [
        (ag.losses.zero_one(5), "zero_one"),
        (ag.losses.zero_one(40, weight=2.0), "zero_one"),
        (ag.losses.ordinal(6, weight=0.5), "ordinal"),
        (ag.losses.squared(7), "squared"),
        (ag.losses.ordinal(2), "zero_one"),
        (ag.losses.abstain(4, alpha=0.5), "abstain"),
        (ag.losses.abstain(30, alpha=0.0), "abstain"),
        (ag.losses.abstain(4, alpha=0.7), "vertices"),
        (np.random.default_rng(0).uniform(0, 1, (4, 4)), "vertices"),
        (np.random.default_rng(0).uniform(0, 1, (3, 6)), "vertices"),
        (np.random.default_rng(0).uniform(0, 1, (12, 12)), None),
        (ag.losses.abstain(14, alpha=0.8), None),
    ],
    ids=[
        "zero_one",
        "zero_one-40",
        "ordinal",
        "squared",
        "ordinal-k2",
        "abstain.5",
        "abstain0-30",
        "abstain.7",
        "general-4x4",
        "general-3x6",
        "general-12x12",
        "abstain.8-14",
    ],
)
def test_fast_path(loss, expected):
    assert ag.Game(loss).fast_path == expected


@pytest.mark.parametrize(
    "loss",
    [
        ag.losses.abstain(4, alpha=0.7),
        np.random.default_rng(2).uniform(0, 1, (4, 4)),
        np.random.default_rng(2).uniform(0, 1, (12, 12)),
    ],
    ids=["vertices-abstain", "vertices-general", "lp-general"],
)
def test_auto_agrees_with_lp_when_there_is_no_closed_form(loss):
    game = ag.Game(loss)
    F = random_potentials(game.n_labels, n=40, seed=4)
    L = game.loss.matrix
    value = game.value(F)
    assert_close(value, game.value(F, method="lp"), L, "auto vs LP")
    Q, P = game.adversary(F), game.predictor(F)
    assert_close((Q @ L.T).min(axis=1) + np.sum(F * Q, axis=1), value, L, "q*")
    assert_close((P @ L + F).max(axis=1), value, L, "p*")
    np.testing.assert_array_equal(game.predict(F), np.argmax(P, axis=1))


@pytest.mark.parametrize("method", ["auto", "closed_form", "vertices", "lp"])
def test_value_and_adversary_is_one_consistent_solve(method):
    game = ag.Game(ag.losses.squared(5, weight=2.0))
    F = random_potentials(5, n=40, seed=3)
    value, Q = game.value_and_adversary(F, method=method)
    np.testing.assert_array_equal(value, game.value(F, method=method))
    L = game.loss.matrix
    assert_close((Q @ L.T).min(axis=1) + np.sum(F * Q, axis=1), value, L, "q*")
    v1, q1 = game.value_and_adversary(F[0], method=method)
    assert np.ndim(v1) == 0 and q1.shape == (5,)
    assert v1 == value[0]


# ---------------------------------------------------------------------------------- cvxpy LP
@pytest.mark.parametrize(
    "loss, f",
    [
        (ag.losses.zero_one(3), [1.0, 0.5, -2.0]),
        (ag.losses.ordinal(4, weight=2.0), [0.3, -0.2, 1.0, 0.0]),
        (ag.losses.abstain(3, alpha=0.7), [0.1, 0.0, 0.4]),
        (np.random.default_rng(5).uniform(0, 2, (5, 4)), [0.5, -1.0, 0.25, 0.0]),
    ],
    ids=["zero_one", "ordinal", "abstain.7", "general"],
)
def test_cvxpy_lp_matches_the_game(loss, f):
    cp = pytest.importorskip("cvxpy")
    game = ag.Game(loss)
    L = game.loss.matrix
    problem = game.lp(f)
    assert isinstance(problem, cp.Problem)
    assert set(problem.var_dict) >= {"q"}
    value = problem.solve()
    expected = game.value(f, method="lp")
    assert value == pytest.approx(expected, rel=1e-6, abs=1e-6)
    assert problem.value == pytest.approx(expected, rel=1e-6, abs=1e-6)
    q = problem.var_dict["q"].value
    assert np.all(q >= -1e-6) and q.sum() == pytest.approx(1.0, abs=1e-6)
    p = np.asarray(problem.constraints[0].dual_value)
    assert p.shape == (game.n_actions,)
    assert np.all(p >= -1e-6) and p.sum() == pytest.approx(1.0, abs=1e-6)
    assert np.max(L.T @ p + np.asarray(f)) == pytest.approx(expected, rel=1e-6, abs=1e-6)


def test_cvxpy_lp_rejects_batches_and_bad_input(game):
    with pytest.raises(ValueError, match=r"one potential vector"):
        game.lp(np.zeros((2, K)))
    with pytest.raises(ValueError, match=r"f must be finite"):
        game.lp([0.0, np.nan, 1.0])
    with pytest.raises(ValueError, match=r"f must have 3 columns"):
        game.lp([0.0, 1.0])


# ---------------------------------------------------------------------------------- pickling
@pytest.mark.parametrize(
    "loss",
    [
        ag.losses.squared(5),
        ag.losses.abstain(4, alpha=0.8),
        np.random.default_rng(6).random((5, 5)),
    ],
    ids=["squared", "abstain.8", "general"],
)
def test_pickle_after_use(loss):
    game = ag.Game(loss)
    F = random_potentials(game.n_labels, n=30, seed=2)
    values = {m: game.value(F, method=m) for m in ("auto", "lp", "vertices")}
    P = game.predictor(F, method="lp")
    assert game._oracle._highs is not None  # the HiGHS model exists before pickling
    clone = pickle.loads(pickle.dumps(game))
    assert clone.loss == game.loss
    assert clone.structure == game.structure
    assert clone.fast_path == game.fast_path
    for method, value in values.items():
        np.testing.assert_allclose(clone.value(F, method=method), value, rtol=1e-12, atol=1e-12)
    L = clone.loss.matrix
    P_clone = clone.predictor(F, method="lp")
    assert_close((P_clone @ L + F).max(axis=1), (P @ L + F).max(axis=1), L, "p* after pickle")
    # the original keeps working after being pickled
    np.testing.assert_allclose(game.value(F, method="lp"), values["lp"], rtol=1e-12, atol=1e-12)


def test_pickled_oracle_solves():
    game = ag.Game(ag.losses.ordinal(4))
    game.value(np.zeros(4), method="lp")
    oracle = pickle.loads(pickle.dumps(game._oracle))
    value, Q, P = oracle.solve(np.zeros((1, 4)))
    assert value[0] == pytest.approx(1.5, rel=1e-9)
    np.testing.assert_allclose(Q[0], [0.5, 0, 0, 0.5], atol=1e-9)


# --------------------------------------------------------------------------------- threads
@pytest.mark.parametrize(
    "loss",
    [ag.losses.squared(6), np.random.default_rng(8).uniform(0, 3, (6, 6))],
    ids=["squared", "general"],
)
def test_concurrent_lp_calls_match_serial(loss):
    game = ag.Game(loss)
    batches = [random_potentials(6, n=150, seed=s) for s in range(8)]
    serial = [game.value(F, method="lp") for F in batches]
    with ThreadPoolExecutor(max_workers=4) as pool:
        parallel = list(pool.map(lambda F: game.value(F, method="lp"), batches))
        predictors = list(pool.map(lambda F: game.predictor(F, method="lp"), batches))
    L = game.loss.matrix
    for F, s, p, P in zip(batches, serial, parallel, predictors):
        assert_close(p, s, L, "threaded LP", rtol=1e-12)
        assert_close((P @ L + F).max(axis=1), s, L, "threaded p*")


def test_concurrent_first_use_of_the_vertex_table():
    L = np.random.default_rng(9).uniform(0, 3, (5, 5))
    game = ag.Game(L)
    batches = [random_potentials(5, n=50, seed=s) for s in range(4)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        values = list(pool.map(lambda F: game.value(F, method="vertices"), batches))
    for F, value in zip(batches, values):
        assert_close(value, game.value(F, method="lp"), L, "vertices in threads")


def test_concurrent_vertex_predictors_match_serial():
    L = np.random.default_rng(12).integers(0, 3, (5, 5)).astype(float) + np.eye(5)
    batches = [random_potentials(5, n=60, seed=s) for s in range(8)]
    serial = [ag.Game(L).predictor(F, method="vertices") for F in batches]
    game = ag.Game(L)
    with ThreadPoolExecutor(max_workers=4) as pool:
        parallel = list(pool.map(lambda F: game.predictor(F, method="vertices"), batches))
    for F, s, p in zip(batches, serial, parallel):
        value = game.value(F, method="lp")
        assert_close((p @ L + F).max(axis=1), value, L, "threaded vertex p*")
        assert_close((s @ L + F).max(axis=1), value, L, "serial vertex p*")


# ---------------------------------------------------------------------------------- verify
@pytest.mark.parametrize(
    "loss",
    [
        ag.losses.zero_one(5),
        ag.losses.zero_one(4, weight=3.0),
        ag.losses.ordinal(6, weight=0.5),
        ag.losses.squared(5),
        ag.losses.abstain(4, alpha=0.0),
        ag.losses.abstain(4, alpha=1 / 3),
        ag.losses.abstain(4, alpha=0.5, weight=2.0),
        ag.losses.abstain(4, alpha=0.75),
        np.random.default_rng(10).uniform(0, 3, (5, 5)),
    ],
    ids=[
        "zero_one",
        "zero_one*3",
        "ordinal",
        "squared",
        "abstain0",
        "abstain1/3",
        "abstain.5",
        "abstain.75",
        "general",
    ],
)
def test_verify_game_ok(loss):
    report = verify_game(loss, n=120, seed=1)
    assert report.ok(), str(report)
    assert report.n_rows == 120
    assert report.max_error <= 1e-9
    methods = [c.method for c in report.checks]
    text = str(report)
    assert methods[0] == "lp"
    for method in ("lp", "closed_form", "vertices"):
        assert method in text
    if report.game.structure.has_closed_form:
        assert methods == ["lp", "closed_form", "vertices"]
        assert not report.skipped
    else:
        assert methods == ["lp", "vertices"]
        assert "closed_form" in report.skipped and "skipped" in text
    assert str(report.game.structure) in text


def test_verify_game_skips_vertices_when_too_large():
    L = np.random.default_rng(11).uniform(0, 1, (14, 14))
    report = verify_game(ag.Game(L), n=8)
    assert [c.method for c in report.checks] == ["lp"]
    assert set(report.skipped) == {"closed_form", "vertices"}
    assert report.ok()


def test_verify_report_detects_a_wrong_method():
    """The report is not a rubber stamp: a method far from the LP is flagged."""
    report = verify_game(ag.losses.zero_one(3), n=40)
    check = report.checks[1]
    check.value_error = 1e-3
    assert not check.ok() and not report.ok()
    assert "NO" in str(report)


def test_verify_game_with_given_potentials():
    F = np.array([[0.0, 0.0, 0.0], [1.0, -1.0, 0.5]])
    report = verify_game(ag.losses.ordinal(3), F=F)
    assert report.n_rows == 2 and report.ok()


def test_random_potentials_is_reproducible():
    a = random_potentials(5, n=40, seed=123)
    b = random_potentials(5, n=40, seed=123)
    c = random_potentials(5, n=40, seed=124)
    assert a.shape == (40, 5)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert np.all(np.isfinite(a))
    # the documented edge cases are present: integer rows with ties, duplicated maxima, 1e6 scale
    integer_rows = a[10:20]
    np.testing.assert_array_equal(integer_rows, np.round(integer_rows))
    top = np.sort(a[20:30], axis=1)
    np.testing.assert_array_equal(top[:, -1], top[:, -2])
    assert np.abs(a[30:]).max() > 1e4
