"""``verify_closed_form`` and ``Game.with_closed_form``: a user's closed form against the LP.

The wrong variants below are small vectorised functions written here, each a slip a person
deriving the closed forms of Fathony et al. (2018a) could make: an off-by-one set size and a sign
slip in the zero-one value (Theorem 5), a scale slip in the ordinal value (Theorem 6), a missing
constant and a wrong tie rule in the abstain value (Theorem 12), a wrong ``q*`` and a wrong
``p*``.  Each must be caught within the default budget for every seed, and its counterexample
must reproduce the error by hand against ``Game(L).value(row, method="lp")``.  The correct
closed forms (the built-in ``advgame.closed_forms`` functions and a user's sort-based zero-one
value) must pass.
"""

import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import advgame as ag
from advgame import closed_forms as cf
from advgame.verify import ClosedFormReport, verify_closed_form

K = 4
ALPHA = 0.3


# --------------------------------------------------------------------------- users' functions
def _top_sets(F, constant, sign=1.0, sizes=None):
    """``max over top-m sets of (sum f + sign * constant * (m - 1)) / m`` for m in ``sizes``."""
    top = -np.sort(-F, axis=1)
    m = np.arange(1, F.shape[1] + 1)
    means = (np.cumsum(top, axis=1) + sign * constant * (m - 1)) / m
    return means[:, : sizes or F.shape[1]].max(axis=1)


def zero_one_value(F):
    """Theorem 5 by sorting: the best top set, ``(sum_S f + |S| - 1) / |S|``."""
    return _top_sets(F, 1.0)


def off_by_one_sizes(F):
    return _top_sets(F, 1.0, sizes=F.shape[1] - 1)  # forgets the set of every label


def sign_slip(F):
    return _top_sets(F, 1.0, sign=-1.0)


def ordinal_scale_slip(F):
    return cf.ordinal(F, 1.0)[0]  # the weight-2 loss evaluated with weight 1


def _abstain_from(f1, f2, constant):
    return np.maximum(f1, (1 - ALPHA) * f1 + ALPHA * f2 + constant)


def abstain_missing_constant(F):
    top = -np.sort(-F, axis=1)
    return _abstain_from(top[:, 0], top[:, 1], 0.0)


def abstain_wrong_tie_rule(F):
    """The second largest *distinct* potential: wrong when the top two are tied."""
    f1 = F.max(axis=1)
    below = np.where(F < f1[:, None], F, -np.inf).max(axis=1)
    f2 = np.where(np.isfinite(below), below, f1)
    return _abstain_from(f1, f2, ALPHA)


def zero_one_top_label_adversary(F):
    """``q* = e_argmax``: optimal only when the best set has one label."""
    return np.eye(F.shape[1])[np.argmax(F, axis=1)]


def ordinal_argmax_predictor(F):
    return np.eye(F.shape[1])[np.argmax(F, axis=1)]


ZERO_ONE = ag.losses.zero_one(K)
ORDINAL = ag.losses.ordinal(K, weight=2.0)
ABSTAIN = ag.losses.abstain(K, alpha=ALPHA)

#: name -> (loss, value, adversary, predictor): each wrong somewhere.
WRONG = {
    "off-by-one set sizes": (ZERO_ONE, off_by_one_sizes, None, None),
    "sign slip": (ZERO_ONE, sign_slip, None, None),
    "scale slip": (ORDINAL, ordinal_scale_slip, None, None),
    "missing constant": (ABSTAIN, abstain_missing_constant, None, None),
    "wrong tie rule": (ABSTAIN, abstain_wrong_tie_rule, None, None),
    "wrong q*": (ZERO_ONE, zero_one_value, zero_one_top_label_adversary, None),
    "wrong p*": (
        ORDINAL,
        lambda F: cf.ordinal(F, 2.0)[0],
        lambda F: cf.ordinal(F, 2.0)[1],
        ordinal_argmax_predictor,
    ),
}


def _builtin(kind, *params):
    solve = getattr(cf, kind)
    predictor = getattr(cf, f"{kind}_predictor")
    return (
        lambda F: solve(F, *params)[0],
        lambda F: solve(F, *params)[1],
        lambda F: predictor(F, *params),
    )


#: name -> (loss, value, adversary, predictor): all correct.
CORRECT = {
    "zero-one": (ZERO_ONE, *_builtin("zero_one", 1.0)),
    "zero-one k=7 weight 3": (ag.losses.zero_one(7, weight=3.0), *_builtin("zero_one", 3.0)),
    "ordinal": (ORDINAL, *_builtin("ordinal", 2.0)),
    "squared": (ag.losses.squared(5), *_builtin("squared", 1.0)),
    "abstain": (ABSTAIN, *_builtin("abstain", ALPHA)),
    "abstain alpha=1/2": (ag.losses.abstain(3, alpha=0.5), *_builtin("abstain", 0.5)),
    "user's zero-one": (ZERO_ONE, zero_one_value, None, None),
}


def _row_error(loss, report, row):
    """The error of the user's functions at ``row``, by hand against the LP."""
    game = ag.Game(loss)
    L = loss.matrix
    V = game.value(row, method="lp")
    scale = L.max() - L.min() + 1e-5 * np.abs(row).max()
    _, value, adversary, predictor = {**WRONG, **CORRECT}[report.name]
    errors = [abs(value(row[None, :])[0] - V) / scale]
    if adversary is not None:
        q = adversary(row[None, :])[0]
        errors.append(abs((L @ q).min() + row @ q - V) / scale)
    if predictor is not None:
        p = predictor(row[None, :])[0]
        errors.append(abs((L.T @ p + row).max() - V) / scale)
    return max(errors)


def _check(name, seed, table):
    loss, value, adversary, predictor = table[name]
    return verify_closed_form(loss, value, adversary, predictor, seed=seed, name=name)


# ------------------------------------------------------------------------------ wrong ones
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name", list(WRONG))
def test_wrong_variant_is_caught(name, seed):
    report = _check(name, seed, WRONG)
    assert not report.passed
    assert report.max_error > 1e-3
    row = report.counterexample
    assert row.shape == (K,)
    # the shrunk counterexample reproduces the error by hand, against the LP
    assert _row_error(WRONG[name][0], report, row) > report.rtol
    assert report.counterexample_error == pytest.approx(_row_error(WRONG[name][0], report, row))
    assert report.lp_value == pytest.approx(ag.Game(WRONG[name][0]).value(row, method="lp"))
    assert "counterexample" in str(report)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3, 20))
@pytest.mark.parametrize("name", list(WRONG))
def test_wrong_variant_is_caught_for_every_seed(name, seed):
    report = _check(name, seed, WRONG)
    assert not report.passed
    assert _row_error(WRONG[name][0], report, report.counterexample) > report.rtol


def test_counterexamples_are_shrunk_to_simple_rows():
    # off by one: every constant row is a counterexample, so the simplest one is zero
    report = _check("off-by-one set sizes", 0, WRONG)
    np.testing.assert_array_equal(report.counterexample, np.zeros(K))
    assert report.lp_value == pytest.approx(0.75)
    assert report.user_value == pytest.approx(2 / 3)
    np.testing.assert_allclose(report.lp_adversary, np.full(K, 0.25))
    # the tie rule: wrong only when the two largest potentials tie
    row = _check("wrong tie rule", 0, WRONG).counterexample
    top = np.sort(row)[::-1]
    assert top[0] == top[1]
    assert np.all(row == np.round(row)) and np.unique(row).size <= 2


def test_report_fields_of_a_failure():
    report = _check("wrong q*", 1, WRONG)
    assert isinstance(report, ClosedFormReport)
    assert report.failure == "adversary"
    assert report.errors["value"] <= report.rtol < report.errors["adversary"]
    q = report.user_adversary
    assert q.shape == (K,) and report.lp_predictor.shape == (K,)
    assert report.exact_at_vertices is False
    with pytest.raises(AttributeError):
        report.passed = True  # frozen


# ---------------------------------------------------------------------------- correct ones
@pytest.mark.parametrize("name", list(CORRECT))
def test_correct_closed_form_passes(name):
    report = _check(name, 0, CORRECT)
    assert report.passed, str(report)
    assert report.max_error <= report.rtol
    assert report.counterexample is None
    assert report.exact_at_vertices is True
    assert set(report.timings_us) == {"value", "adversary", "predictor", "lp"} - (
        set() if CORRECT[name][2] else {"adversary", "predictor"}
    )
    assert all(us > 0 for us in report.timings_us.values())
    assert "PASSED" in str(report) and "after a warm-up call" in str(report)


def test_every_tie_pattern_of_small_k_is_checked():
    report = _check("user's zero-one", 0, CORRECT)
    # the 75 weak orderings of 4 labels, at three sets of levels
    assert report.rows["tie patterns"] == 3 * 75
    assert report.rows["magnitudes"] == 2 * 17 * 2 * 20


@given(k=st.integers(2, 5), weight=st.sampled_from([0.25, 1.0, 3.0, 7.5]), seed=st.integers(0, 99))
def test_property_weighted_zero_one_by_sorting(k, weight, seed):
    """Theorem 5 with weight c (Corollary 9) passes for every k, c and seed; the same formula
    shifted by c / 2 (a stray constant) fails everywhere, so its shrunk counterexample is the
    simplest row: one value, an integer."""
    loss = ag.losses.zero_one(k, weight=weight)
    good = verify_closed_form(loss, lambda F: _top_sets(F, weight), n=40, seed=seed)
    assert good.passed, str(good)
    bad = verify_closed_form(loss, lambda F: _top_sets(F + weight / 2, weight), n=40, seed=seed)
    assert not bad.passed
    row = bad.counterexample
    assert np.unique(row).size == 1 and row[0] == np.round(row[0])
    V = ag.Game(loss).value(row, method="lp")
    assert abs(_top_sets(row[None, :] + weight / 2, weight)[0] - V) > bad.rtol * weight


def test_rational_check_is_skipped_for_an_irrational_matrix():
    L = np.array([[0.0, np.sqrt(2)], [1.0, 0.0]])
    game = ag.Game(L)
    report = verify_closed_form(L, lambda F: game.value(F, method="lp"), n=40)
    assert report.passed
    assert report.exact_at_vertices is None and "not rational" in report.rational_note


# -------------------------------------------------------------------------- input checks
@pytest.mark.parametrize(
    ("value", "message"),
    [
        (lambda F: F, r"value\(F\) must return an array of shape \(2,\)"),
        (lambda F: np.full(F.shape[0], np.nan), r"value\(F\) returned a non-finite number"),
        (lambda F: 1 / 0, r"value\(F\) raised ZeroDivisionError"),
        (lambda F: "x", r"value\(F\) must return a numeric array"),
    ],
)
def test_bad_functions_are_refused_clearly(value, message):
    with pytest.raises(ValueError, match=message):
        verify_closed_form(ZERO_ONE, value)


def test_bad_arguments():
    with pytest.raises(TypeError, match="value must be a callable"):
        verify_closed_form(ZERO_ONE, 3.0)
    with pytest.raises(TypeError, match="adversary must be a callable or None"):
        verify_closed_form(ZERO_ONE, zero_one_value, adversary="q")
    with pytest.raises(ValueError, match=r"adversary\(F\) must return an array of shape \(2, 4\)"):
        verify_closed_form(ZERO_ONE, zero_one_value, adversary=lambda F: F[:, :2])
    with pytest.raises(ValueError, match="n must be an integer >= 4"):
        verify_closed_form(ZERO_ONE, zero_one_value, n=2)
    with pytest.raises(ag.NotApplicableError, match="entropy"):
        verify_closed_form(ag.losses.brier(3), zero_one_value)


# ---------------------------------------------------------------------- with_closed_form
class Counting:
    """A user's function that counts its calls."""

    def __init__(self, function):
        self.function, self.calls, self.__name__ = function, 0, function.__name__

    def __call__(self, F):
        self.calls += 1
        return self.function(F)


def test_with_closed_form_is_used_by_auto():
    value = Counting(zero_one_value)
    base = ag.Game(ZERO_ONE)
    game = base.with_closed_form(value, name="mine")
    assert game.fast_path == "mine" and base.fast_path == "zero_one"
    assert game.closed_form_report.passed and base.closed_form_report is None
    F = np.random.default_rng(0).normal(size=(50, K))
    before = value.calls
    V = game.value(F)
    assert value.calls == before + 1
    np.testing.assert_allclose(V, base.value(F, method="lp"), atol=1e-12)
    game.value(F, method="closed_form")
    game.surrogate(F, np.zeros(50, dtype=int))
    assert value.calls == before + 3
    game.value(F, method="lp")
    assert value.calls == before + 3
    # q* and p*, which the user did not give, come from the built-in closed form
    np.testing.assert_allclose(game.adversary(F), base.adversary(F))
    np.testing.assert_allclose(game.predictor(F), base.predictor(F))
    assert "your closed form 'mine'" in game.explain()
    assert "verify_closed_form" in game.explain()


def test_with_closed_form_uses_the_users_adversary_and_predictor():
    value, adversary, predictor = (Counting(f) for f in _builtin("ordinal", 2.0))
    for f, name in ((value, "v"), (adversary, "q"), (predictor, "p")):
        f.__name__ = name
    game = ag.Game(ORDINAL).with_closed_form(value, adversary, predictor)
    assert game.fast_path == "v"
    calls = adversary.calls, predictor.calls
    F = np.random.default_rng(1).normal(size=(10, K))
    game.value_and_adversary(F)
    game.predict(F)
    assert (adversary.calls, predictor.calls) == (calls[0] + 1, calls[1] + 1)


def test_with_closed_form_on_a_general_matrix_falls_back_to_the_lp():
    L = np.array([[0.0, 1.0, 2.0], [2.0, 0.0, 1.0], [1.0, 2.0, 0.0]])
    base = ag.Game(L)
    value = Counting(lambda F: base.value(F, method="vertices"))
    value.__name__ = "table"
    game = base.with_closed_form(value)
    F = np.random.default_rng(2).normal(size=(20, 3))
    np.testing.assert_allclose(game.value(F), base.value(F, method="lp"), atol=1e-12)
    game.predictor(F)  # from the built-in path: the vertex table or the LP
    np.testing.assert_allclose(game.adversary(F).sum(axis=1), 1.0)


def test_with_closed_form_refuses_a_wrong_one():
    with pytest.raises(ValueError, match="not registered") as caught:
        ag.Game(ZERO_ONE).with_closed_form(off_by_one_sizes)
    assert "counterexample" in str(caught.value)
    assert "f               = [0, 0, 0, 0]" in str(caught.value)
    with pytest.raises(ag.NotApplicableError):
        ag.Game(ag.losses.brier(3)).with_closed_form(zero_one_value)


def test_with_closed_form_pickles_with_module_level_functions():
    game = ag.Game(ZERO_ONE).with_closed_form(zero_one_value)
    again = pickle.loads(pickle.dumps(game))
    assert again.fast_path == "zero_one_value"
    assert again.closed_form_report.passed
    f = np.array([1.0, 0.5, -2.0, -2.0])
    assert again.value(f) == pytest.approx(1.25)


def test_user_row_is_a_fast_path_row():
    game = ag.Game(ZERO_ONE).with_closed_form(zero_one_value)
    row = game.fast_path_table[0]
    assert isinstance(row, ag.fast_paths.FastPath) and row.user and row.is_closed_form
    assert row.match(ZERO_ONE) == () and row.match(ag.losses.zero_one(5)) is None
    assert game.fast_path_table[1:] == ag.fast_paths.TABLE
