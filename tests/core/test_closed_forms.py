"""Closed forms of Fathony et al. 2018a Theorems 5-7 and 12-13 against the LP and independent references.

Every structure (zero-one, ordinal, squared, abstain with several alphas) and several weights is
checked on hypothesis-generated potentials that mix huge magnitudes, exact ties and duplicated
entries:

* the closed-form value equals the persistent-HiGHS LP (``method="lp"``);
* ``q*`` and ``p*`` are optimality certificates (both attain the value, both are distributions);
* the value equals the seed's formula evaluated by brute force in this file, and an LP built
  independently with ``scipy.optimize.linprog``;
* surrogate, predict (Corollary 14 for abstain), single-row shapes, shift invariance, Theorem 8.
"""

import functools
import itertools

import numpy as np
import pytest
import scipy.optimize
from hypothesis import given
from hypothesis import strategies as st

import advgame as ag

RTOL = 1e-9

# (kind, alpha) of every structure with a closed form; abstain alphas cover both ends and 1/3.
STRUCTURES = [
    ("zero_one", None),
    ("ordinal", None),
    ("squared", None),
    ("abstain", 0.0),
    ("abstain", 0.2),
    ("abstain", 1 / 3),
    ("abstain", 0.5),
]
STRUCTURE_IDS = [
    "zero_one",
    "ordinal",
    "squared",
    "abstain0",
    "abstain.2",
    "abstain1/3",
    "abstain.5",
]
WEIGHTS = [0.5, 1.0, 3.0]

structures = pytest.mark.parametrize("kind, alpha", STRUCTURES, ids=STRUCTURE_IDS)
weights = pytest.mark.parametrize("weight", WEIGHTS)


def make_loss(kind, alpha, k, weight=1.0):
    if kind == "abstain":
        return ag.losses.abstain(k, alpha=alpha, weight=weight)
    return getattr(ag.losses, kind)(k, weight=weight)


@functools.cache
def make_game(kind, alpha, k, weight=1.0):
    """One Game per (structure, k, weight), so the HiGHS model is built once and reused."""
    game = ag.Game(make_loss(kind, alpha, k, weight))
    expected = "zero_one" if k == 2 and kind in ("ordinal", "squared") else kind
    assert game.structure.kind == expected
    assert game.structure.has_closed_form
    return game


# ----------------------------------------------------------------------------------- strategies
FLOATS = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
SMALL_INTS = st.integers(-3, 3).map(float)
QUARTERS = st.integers(-16, 16).map(lambda i: i / 4)
ELEMENTS = st.one_of(FLOATS, SMALL_INTS, QUARTERS)
OFFSETS = st.one_of(st.just(0.0), st.just(0.0), FLOATS)


@st.composite
def potentials(draw, k_min=2, k_max=12, n_max=6, elements=ELEMENTS, offsets=OFFSETS):
    """``(n, k)`` potentials: mixed magnitudes, exact ties, copied entries, per-row offsets."""
    k = draw(st.integers(k_min, k_max))
    n = draw(st.integers(1, n_max))
    flat = np.array(draw(st.lists(elements, min_size=n * k, max_size=n * k)), dtype=np.float64)
    index = st.integers(0, n * k - 1)
    for src, dst in draw(st.lists(st.tuples(index, index), max_size=2 * k)):
        flat[dst] = flat[src]
    F = flat.reshape(n, k)
    return F + np.array(draw(st.lists(offsets, min_size=n, max_size=n)))[:, None]


# -------------------------------------------------------------------------------------- helpers
def scale_of(reference, L):
    return np.maximum(np.maximum(1.0, np.abs(reference)), L.max())


def assert_close(actual, reference, L, what, rtol=RTOL):
    actual, reference = np.asarray(actual), np.asarray(reference)
    err = np.abs(actual - reference) / scale_of(reference, L)
    assert np.all(err <= rtol), (
        f"{what}: relative error {err.max():.3e} > {rtol:g}\nactual={actual}\nref={reference}"
    )


def assert_simplex(P, what):
    assert np.all(P >= -1e-12), f"{what} has a negative entry: {P.min()}"
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12, err_msg=what)


def assert_certificates(L, F, value, Q, P):
    """``q*`` attains the value from below, ``p*`` from above (LP duality)."""
    assert Q.shape == F.shape and P.shape == (F.shape[0], L.shape[0])
    assert_simplex(Q, "q*")
    assert_simplex(P, "p*")
    assert_close((Q @ L.T).min(axis=1) + np.sum(F * Q, axis=1), value, L, "min_a (Lq)_a + f.q")
    assert_close((P @ L + F).max(axis=1), value, L, "max_j (L^T p + f)_j")


# ------------------------------------------------- independent references (Fathony et al. 2018a formulas)
def brute_zero_one(f, c):
    """Theorem 5 / Corollary 9: max over every nonempty subset S (k <= 8)."""
    k = f.size
    return max(
        (sum(f[i] for i in S) + c * (len(S) - 1)) / len(S)
        for r in range(1, k + 1)
        for S in itertools.combinations(range(k), r)
    )


def brute_ordinal(f, c):
    """Theorem 6 / Corollary 10: max over all i, j of (f_i + f_j + c (j - i)) / 2."""
    k = f.size
    return max((f[i] + f[j] + c * (j - i)) / 2 for i in range(k) for j in range(k))


def brute_squared(f, c):
    """Theorem 7 / Corollary 11: the triple loop over i < l <= j, and max f."""
    k = f.size
    best = max(f)
    for i in range(k):
        for j in range(i + 1, k):
            for l in range(i + 1, j + 1):
                num = (2 * (j - l) + 1) * (f[i] + c * (l - i) ** 2) + (2 * (l - i) - 1) * (
                    f[j] + c * (j - l) ** 2
                )
                best = max(best, num / (2 * (j - i)))
    return best


def brute_abstain(f, c, alpha):
    """Theorem 12 (scaled by Theorem 8): max over i != j of (1-a) f_i + a f_j + c a, and max f."""
    k = f.size
    pairs = (
        (1 - alpha) * f[i] + alpha * f[j] + c * alpha for i in range(k) for j in range(k) if i != j
    )
    return max(max(f), max(pairs))


def brute_value(kind, alpha, f, c):
    if kind == "zero_one":
        return brute_zero_one(f, c)
    if kind == "ordinal":
        return brute_ordinal(f, c)
    if kind == "squared":
        return brute_squared(f, c)
    return brute_abstain(f, c, alpha)


def linprog_value(L, f):
    """``max v + f.q  s.t.  L q >= v 1, sum q = 1, q >= 0`` with scipy's linprog (no advgame).

    The costs are shifted by ``max f`` (the value shifts by the same constant), which keeps HiGHS
    away from numerical trouble with potentials of magnitude 1e6.
    """
    l, k = L.shape
    top = f.max()
    res = scipy.optimize.linprog(
        c=-np.r_[f - top, 1.0],
        A_ub=np.c_[-L, np.ones(l)],
        b_ub=np.zeros(l),
        A_eq=np.r_[np.ones(k), 0.0][None, :],
        b_eq=[1.0],
        bounds=[(0, None)] * k + [(None, None)],
        method="highs",
        options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
    )
    assert res.status == 0, res.message
    return -res.fun + top


# ------------------------------------------------------------------------------- LP agreement
@structures
@weights
@given(F=potentials())
def test_closed_form_value_matches_lp(kind, alpha, weight, F):
    game = make_game(kind, alpha, F.shape[1], weight)
    closed = game.value(F, method="closed_form")
    lp = game.value(F, method="lp")
    assert closed.shape == (F.shape[0],)
    assert_close(closed, lp, game.loss.matrix, "closed form vs LP")
    # auto uses the closed form for every recognised structure
    np.testing.assert_array_equal(game.value(F), closed)


@structures
@weights
@given(F=potentials())
def test_closed_form_certificates(kind, alpha, weight, F):
    game = make_game(kind, alpha, F.shape[1], weight)
    value = game.value(F, method="closed_form")
    Q = game.adversary(F, method="closed_form")
    P = game.predictor(F, method="closed_form")
    assert_certificates(game.loss.matrix, F, value, Q, P)


@structures
@weights
@given(data=st.data())
def test_closed_form_matches_seed_formula_by_brute_force(kind, alpha, weight, data):
    F = data.draw(potentials(k_max=8 if kind == "zero_one" else 12, n_max=4))
    game = make_game(kind, alpha, F.shape[1], weight)
    closed = game.value(F, method="closed_form")
    reference = np.array([brute_value(kind, alpha, f, weight) for f in F])
    assert_close(closed, reference, game.loss.matrix, "closed form vs seed formula")


@structures
@pytest.mark.parametrize("weight", [0.5, 3.0])
@given(F=potentials(k_max=8, n_max=2))
def test_closed_form_matches_scipy_linprog(kind, alpha, weight, F):
    game = make_game(kind, alpha, F.shape[1], weight)
    closed = game.value(F, method="closed_form")
    reference = np.array([linprog_value(game.loss.matrix, f) for f in F])
    assert_close(closed, reference, game.loss.matrix, "closed form vs scipy linprog")


@pytest.mark.parametrize(
    "kind, alpha, f, c, expected",
    [
        ("zero_one", None, [1.0, 0.5, -2.0], 1.0, 1.25),  # S = {0, 1}: (1.5 + 1) / 2
        ("zero_one", None, [0.0, 0.0, 0.0], 2.0, 4 / 3),  # S = all: 2 * 2 / 3
        ("zero_one", None, [5.0, 0.0, 0.0], 1.0, 5.0),  # S = {0}
        ("ordinal", None, [0.0, 0.0, 0.0, 0.0], 1.0, 1.5),  # i = 0, j = 3
        ("ordinal", None, [0.0, 0.0, 0.0, 0.0], 0.5, 0.75),
        ("squared", None, [0.0, 0.0, 0.0], 1.0, 1.0),  # half mass on 0 and 2, predict 1
        ("squared", None, [0.0, 0.0], 1.0, 0.5),
        ("abstain", 0.5, [1.0, 0.0, 0.0], 1.0, 1.0),  # gap 1: both terms equal 1
        ("abstain", 0.25, [0.0, 0.0, 0.0], 2.0, 0.5),
        ("abstain", 0.0, [0.3, 0.1], 1.0, 0.3),
    ],
)
def test_closed_form_hand_computed_values(kind, alpha, f, c, expected):
    game = ag.Game(make_loss(kind, alpha, len(f), c))
    assert game.value(f, method="closed_form") == pytest.approx(expected, rel=1e-14)
    assert game.value(f, method="lp") == pytest.approx(expected, rel=1e-9)


# ------------------------------------------------------------------------- surrogate, predict
@structures
@pytest.mark.parametrize("weight", [1.0, 3.0])
@given(data=st.data())
def test_surrogate_is_value_minus_true_potential(kind, alpha, weight, data):
    F = data.draw(potentials())
    n, k = F.shape
    y = np.array(data.draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    game = make_game(kind, alpha, k, weight)
    value = game.value(F, method="closed_form")
    rows = np.arange(n)
    np.testing.assert_array_equal(game.surrogate(F, y, method="closed_form"), value - F[rows, y])
    np.testing.assert_array_equal(game.surrogate(F, list(y)), value - F[rows, y])
    L = game.loss.matrix
    lp_surrogate = game.surrogate(F, y, method="lp")
    assert_close(lp_surrogate, value - F[rows, y], L, "LP surrogate", rtol=RTOL)
    # AL(f, y) >= max_j f_j - f_y >= 0: the adversary can always play e_argmax(f)
    slack = game.surrogate(F, y) - (F.max(axis=1) - F[rows, y])
    assert np.all(slack >= -RTOL * scale_of(value, L))


@weights
@given(F=potentials())
def test_zero_one_predict_is_an_argmax_of_the_potentials(weight, F):
    game = make_game("zero_one", None, F.shape[1], weight)
    pred = game.predict(F, method="closed_form")
    assert pred.shape == (F.shape[0],) and np.issubdtype(pred.dtype, np.integer)
    top = F.max(axis=1)
    chosen = F[np.arange(F.shape[0]), pred]
    # p*_j = max(0, f_j + c - V) / c is increasing in f_j, so its argmax is an argmax of f; only
    # potentials closer than the rounding of f_j + c can be confused (then either is optimal).
    resolution = 4 * np.finfo(float).eps * (np.abs(F).max(axis=1) + weight)
    assert np.all(chosen >= top - resolution)
    exact = np.sort(F, axis=1)[:, -2] < top - resolution  # a clear maximum ...
    np.testing.assert_array_equal(pred[exact], np.argmax(F, axis=1)[exact])  # ... is predicted


@weights
@given(F=potentials(elements=QUARTERS, offsets=st.just(0.0)))
def test_zero_one_predict_is_an_exact_argmax_with_exact_ties(weight, F):
    game = make_game("zero_one", None, F.shape[1], weight)
    pred = game.predict(F, method="closed_form")
    np.testing.assert_array_equal(F[np.arange(F.shape[0]), pred], F.max(axis=1))


@pytest.mark.parametrize("alpha", [0.0, 0.2, 1 / 3, 0.5])
@weights
@given(F=potentials())
def test_abstain_predictor_is_theorem_13_and_predict_is_corollary_14(alpha, weight, F):
    n, k = F.shape
    game = make_game("abstain", alpha, k, weight)
    rows = np.arange(n)
    top = np.argmax(F, axis=1)
    ordered = np.sort(F, axis=1)
    gap = ordered[:, -1] - ordered[:, -2]  # ties (duplicated maxima) give a gap of 0
    # Theorem 13 scaled by Theorem 8: p*_{i*} = min(gap / c, 1), the rest abstains
    expected = np.zeros((n, k + 1))
    confident = np.minimum(gap / weight, 1.0)
    expected[rows, top] = confident
    expected[:, k] += 1.0 - confident
    P = game.predictor(F, method="closed_form")
    np.testing.assert_allclose(P, expected, rtol=0, atol=1e-12)
    # Corollary 14: predict i* when f_(1) - f_(2) >= c / 2, else abstain (index k)
    pred = game.predict(F, method="closed_form")
    for i in range(n):
        if gap[i] == weight / 2 or abs(gap[i] - weight / 2) > 1e-9 * max(1.0, abs(F[i]).max()):
            want = top[i] if gap[i] >= weight / 2 else k
            assert pred[i] == want, (F[i], gap[i], pred[i])
        else:  # rounding right at the threshold: either answer is optimal
            assert pred[i] in (top[i], k)


@pytest.mark.parametrize("kind", ["ordinal", "squared"])
@weights
@given(F=potentials(k_min=3))
def test_ordinal_predict_is_a_mode_of_a_two_point_predictor(kind, weight, F):
    game = make_game(kind, None, F.shape[1], weight)
    P = game.predictor(F, method="closed_form")
    pred = game.predict(F, method="closed_form")
    rows = np.arange(F.shape[0])
    np.testing.assert_array_equal(P[rows, pred], P.max(axis=1))
    assert np.all(P[rows, pred] >= 0.5 - 1e-12)
    for p in P:  # p* lives on at most two adjacent actions (floor/ceil of a mean)
        support = np.flatnonzero(p > 1e-12)
        assert support.size <= 2 and np.ptp(support) <= 1, p


# ------------------------------------------------------------------------------ shapes, shifts
@structures
def test_single_row_returns_scalars_and_vectors(kind, alpha):
    k = 5
    game = make_game(kind, alpha, k, 1.0)
    l = game.n_actions
    f = np.array([0.3, -1.0, 0.25, 2.0, 1.9])
    value = game.value(f, method="closed_form")
    assert np.ndim(value) == 0
    assert float(value) == game.value(f[None, :], method="closed_form")[0]
    assert game.adversary(f, method="closed_form").shape == (k,)
    assert game.predictor(f, method="closed_form").shape == (l,)
    pred = game.predict(f, method="closed_form")
    assert np.ndim(pred) == 0 and 0 <= int(pred) < l
    surrogate = game.surrogate(f, 3, method="closed_form")
    assert np.ndim(surrogate) == 0
    assert float(surrogate) == pytest.approx(float(value) - 2.0, abs=1e-15)
    assert game.surrogate(f, [3], method="closed_form") == surrogate
    # lists are accepted too
    assert game.value(list(f), method="closed_form") == value


@structures
@weights
@given(
    F=potentials(elements=QUARTERS, offsets=st.just(0.0)),
    shift=st.integers(-1000, 1000).map(float),
)
def test_shift_changes_value_by_the_shift_and_keeps_q(kind, alpha, weight, F, shift):
    game = make_game(kind, alpha, F.shape[1], weight)
    value = game.value(F, method="closed_form")
    shifted = game.value(F + shift, method="closed_form")
    np.testing.assert_allclose(shifted, value + shift, rtol=1e-13, atol=1e-12)
    Q = game.adversary(F, method="closed_form")
    Q_shifted = game.adversary(F + shift, method="closed_form")
    L = game.loss.matrix
    # the shifted q* is optimal for the unshifted potentials ...
    attained = (Q_shifted @ L.T).min(axis=1) + np.sum(F * Q_shifted, axis=1)
    assert_close(attained, value, L, "shifted q* on unshifted potentials")
    # ... and with exact (dyadic) arithmetic the closed form picks the same vertex
    if kind in ("zero_one", "ordinal"):
        np.testing.assert_array_equal(Q_shifted, Q)


@structures
def test_shift_keeps_q_on_generic_potentials(kind, alpha):
    rng = np.random.default_rng(7)
    k = 7
    game = make_game(kind, alpha, k, 1.0)
    F = rng.normal(size=(300, k)) * rng.choice([0.1, 1.0, 10.0], size=(300, 1))
    for shift in (-123.0, 0.5, 1e4):
        np.testing.assert_allclose(
            game.value(F + shift, method="closed_form"),
            game.value(F, method="closed_form") + shift,
            rtol=1e-12,
            atol=1e-9,
        )
        np.testing.assert_allclose(
            game.adversary(F + shift, method="closed_form"),
            game.adversary(F, method="closed_form"),
            rtol=0,
            atol=1e-12,
        )


@structures
@pytest.mark.parametrize("weight", [0.5, 3.0])
@given(F=potentials(n_max=4))
def test_theorem_8_weighted_game_is_a_rescaled_game(kind, alpha, weight, F):
    """``V_{cL}(f) = c V_L(f / c)`` and ``q*`` is the same (Fathony et al. 2018a Theorem 8)."""
    k = F.shape[1]
    weighted = make_game(kind, alpha, k, weight)
    unit = make_game(kind, alpha, k, 1.0)
    assert_close(
        weighted.value(F, method="closed_form"),
        weight * unit.value(F / weight, method="closed_form"),
        weighted.loss.matrix,
        "Theorem 8",
    )


# --------------------------------------------------------------------------- not applicable
def test_closed_form_not_applicable_for_large_alpha():
    game = ag.Game(ag.losses.abstain(4, alpha=0.7))
    F = np.random.default_rng(0).normal(size=(20, 4))
    with pytest.raises(ag.NotApplicableError, match=r"alpha"):
        game.value(F, method="closed_form")
    for call in (game.adversary, game.predictor, game.predict):
        with pytest.raises(ag.NotApplicableError):
            call(F, method="closed_form")
    with pytest.raises(ag.NotApplicableError):
        game.surrogate(F, np.zeros(20, dtype=int), method="closed_form")
    # NotApplicableError is a ValueError, as documented
    with pytest.raises(ValueError):
        game.value(F, method="closed_form")
    assert_close(game.value(F), game.value(F, method="lp"), game.loss.matrix, "auto vs LP")
    assert_certificates(game.loss.matrix, F, game.value(F), game.adversary(F), game.predictor(F))


def test_closed_form_not_applicable_for_general_matrix():
    rng = np.random.default_rng(3)
    L = rng.uniform(0, 3, size=(4, 4))
    game = ag.Game(L)
    assert game.structure.kind == "general"
    F = rng.normal(size=(20, 4))
    with pytest.raises(ag.NotApplicableError, match=r"no closed form"):
        game.value(F, method="closed_form")
    assert_close(game.value(F), game.value(F, method="lp"), L, "auto vs LP")
    assert_certificates(L, F, game.value(F), game.adversary(F), game.predictor(F))


@pytest.mark.parametrize("alpha", [0.51, 0.7, 1.0])
def test_closed_form_functions_refuse_large_alpha(alpha):
    F = np.zeros((1, 3))
    with pytest.raises(ag.NotApplicableError):
        ag.closed_forms.abstain(F, alpha)
    with pytest.raises(ag.NotApplicableError):
        ag.closed_forms.abstain_predictor(F, alpha)
    with pytest.raises(ag.NotApplicableError):
        ag.closed_forms.abstain_vertices(3, alpha)
