"""Generalised-entropy games (Farnia and Tse 2016 §3.1-3.4, appendix 6.6-6.8) against independent references.

``ag.Game(entropy)`` solves ``F(f) = max_q H(q) + f^T q`` and returns ``∇F`` as the adversary.
Each closed form is checked against a computation that does not share its code path:

* Brier: the cvxpy QP (``method='cvxpy'``), a Euclidean projection onto the simplex written here
  with a bisection on the threshold, and Farnia and Tse 2016 Eq. 35/73 and Eq. 36 written literally;
* log: ``scipy.special.logsumexp`` / softmax, the exponential-cone program, Farnia and Tse 2016 Eq. 28 and the
  Fenchel-Young identity ``F = H(q) + f.q`` with the Shannon entropy;
* zero-one (the loss-matrix game ``ag.losses.zero_one``): Farnia and Tse 2016 Eq. 29 (subgradient), 30 and
  ``F(0) = t / (t + 1)``;
* quadratic: Farnia and Tse 2016 Eq. 32/75 (Huber) and 33 (clipped mean), and the cvxpy QP;
* the API: non-polyhedral methods refuse, argument checks, ``program``, pickling, ``predict``.

Seed 001 pins the last potential at 0 (``z~ = (z, 0)``); here the games take all ``t + 1``
potentials, so the seed's formulas are applied to ``np.append(z, 0)``.
"""

import pickle
import warnings
from fractions import Fraction

import cvxpy as cp
import numpy as np
import pytest
import scipy.special
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import advgame as ag
from advgame.exceptions import NotApplicableError
from advgame.game import EntropyGame
from advgame.losses import brier, log, quadratic

EPS = np.finfo(np.float64).eps
CVXPY_Q_TOL = 1e-6
CVXPY_VALUE_TOL = 1e-6
LOG_CVXPY_Q_TOL = 1e-4
RHOS = [0.5, 1.0, 3.0]

# ----------------------------------------------------------------------------------- strategies
# Mixed magnitudes: huge (1e6), tiny (1e-9), small integers and a few fixed values (exact ties).
ELEMENTS = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
    st.floats(-1e-9, 1e-9, allow_nan=False, allow_infinity=False),
    st.integers(-4, 4).map(float),
    st.sampled_from([0.0, 1.0, 2.0, -2.0, 1e-9, -1e-9, 1e6, -1e6]),
)


def potential_arrays(k_min=2, k_max=6, n_max=4, elements=ELEMENTS):
    """``(n, k)`` float64 potentials; the small element pool makes exact ties common."""
    shapes = st.tuples(st.integers(1, n_max), st.integers(k_min, k_max))
    return hnp.arrays(np.float64, shapes, elements=elements)


SHIFTS = st.one_of(
    st.just(0.0),
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
    st.integers(-3, 3).map(float),
)


# -------------------------------------------------------------------------------------- helpers
def rounding_tol(F, k, extra=0.0):
    """Absolute tolerance of a quantity computed from ``F`` in float64: ``O(k eps max|F|)``."""
    return extra + 16 * k * EPS * max(1.0, float(np.max(np.abs(F))))


def brier_entropy(Q):
    return 1.0 - np.sum(Q * Q, axis=-1)


def shannon_entropy(Q):
    return -np.sum(scipy.special.xlogy(Q, Q), axis=-1)


def project_simplex_bisection(v):
    """Euclidean projection of ``v`` onto the simplex: ``max(v - tau, 0)`` with
    ``sum max(v - tau, 0) = 1``, tau found by bisection until the bracket cannot shrink."""
    lo, hi = v.max() - 1.0, v.max()  # mass(lo) >= 1 > mass(hi) = 0
    for _ in range(2000):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            break
        if np.maximum(v - mid, 0.0).sum() >= 1.0:
            lo = mid
        else:
            hi = mid
    mass_lo = np.maximum(v - lo, 0.0).sum()
    mass_hi = np.maximum(v - hi, 0.0).sum()
    tau = lo if abs(mass_lo - 1.0) <= abs(mass_hi - 1.0) else hi
    return np.maximum(v - tau, 0.0)


def brier_value_from(f, q):
    """``1 - ||q||^2 + f.q`` evaluated as ``max f + (1 - ||q||^2 + (f - max f).q)``.

    The two are equal because ``sum q = 1``; the second keeps the rounding of ``q`` (about
    ``eps max|f|``) from being multiplied by ``max|f|``: on the support ``|f - max f| < 2``.
    """
    top = f.max()
    return top + (1.0 - q @ q + (f - top) @ q)


def exact_brier(f):
    """``(F(f), q)`` in exact rational arithmetic: projection of ``f / 2`` onto the simplex."""
    v = [Fraction(x) / 2 for x in f]
    s = sorted(v, reverse=True)
    m = max(j for j in range(1, len(s) + 1) if s[j - 1] - (sum(s[:j]) - 1) / j > 0)
    tau = (sum(s[:m]) - 1) / m
    q = [max(x - tau, Fraction(0)) for x in v]
    value = 1 - sum(x * x for x in q) + sum(Fraction(a) * b for a, b in zip(f, q))
    return value, q


def seed_brier_gradient(z):
    """Seed 001 Eq. 35 / 73 on ``z~ = (z, 0)``, literally; returns all ``t + 1`` entries."""
    t = len(z)
    zt = np.append(np.asarray(z, dtype=float), 0.0)
    sigma = np.argsort(-zt, kind="stable")  # descending
    s = zt[sigma]
    k = t + 1
    for kk in range(1, t + 1):  # smallest k with sum_{i<=k} (z~_(i) - z~_(k+1)) > 2
        if sum(s[i] - s[kk] for i in range(kk)) > 2:
            k = kk
            break
    p = np.zeros(t + 1)
    top = sigma[:k]
    p[top] = (2.0 - s[:k].sum()) / (2.0 * k) + zt[top] / 2.0
    return p


def seed_zero_one_gradient(z):
    """Seed 001 Eq. 29 on ``z~ = (z, 0)``, literally; returns all ``t + 1`` entries."""
    t = len(z)
    zt = np.append(np.asarray(z, dtype=float), 0.0)
    sigma = np.argsort(-zt, kind="stable")
    s = zt[sigma]
    k = t + 1
    for kk in range(1, t + 1):  # smallest k with sum_{i<=k} (z~_(i) - z~_(k+1)) > 1
        if sum(s[i] - s[kk] for i in range(kk)) > 1:
            k = kk
            break
    p = np.zeros(t + 1)
    p[sigma[:k]] = 1.0 / k
    return p


def cvxpy_reference_rows():
    """Moderate potentials for the cvxpy comparisons, per k: random rows plus ties and a gap."""
    rng = np.random.default_rng(20240501)
    cases = []
    for k in range(2, 7):
        F = rng.normal(scale=2.0, size=(4, k))
        # an exact tie; integer rows are avoided here: they put Brier on the boundary of its
        # support (a q_j exactly 0 with zero multiplier), where the interior-point QP reaches only
        # ~sqrt(tolerance) in q.  Those rows are covered by the bisection and seed references.
        F[1, -1] = F[1, 0]
        F[2, 0] += 6.0  # one dominant label: a sparse Brier adversary
        F[3, :] = 0.0  # uniform
        cases.append(F)
    return cases


CVXPY_CASES = cvxpy_reference_rows()
CVXPY_IDS = [f"k{F.shape[1]}" for F in CVXPY_CASES]


# ------------------------------------------------------------------------------------ 1. Brier
@pytest.mark.parametrize("F", CVXPY_CASES, ids=CVXPY_IDS)
def test_brier_closed_form_matches_cvxpy_qp(F):
    game = ag.Game(brier(F.shape[1]))
    value, Q = game.value_and_adversary(F)
    value_cvx, Q_cvx = game.value_and_adversary(F, method="cvxpy")
    np.testing.assert_allclose(Q, Q_cvx, rtol=0, atol=CVXPY_Q_TOL)
    np.testing.assert_allclose(value, value_cvx, rtol=0, atol=CVXPY_VALUE_TOL)
    np.testing.assert_array_equal(game.value(F, method="closed_form"), value)


def test_brier_matches_bisection_projection():
    rng = np.random.default_rng(7)
    for k in range(2, 9):
        for scale in (0.1, 1.0, 5.0, 50.0):
            F = rng.normal(scale=scale, size=(20, k))
            value, Q = ag.Game(brier(k)).value_and_adversary(F)
            for f, q, v in zip(F, Q, value):
                ref = project_simplex_bisection(f / 2.0)
                np.testing.assert_allclose(q, ref, rtol=0, atol=1e-10)
                expected = 1.0 - ref @ ref + f @ ref
                np.testing.assert_allclose(v, expected, rtol=1e-12, atol=1e-10)


@given(F=potential_arrays())
def test_brier_properties(F):
    n, k = F.shape
    game = ag.Game(brier(k))
    value, Q = game.value_and_adversary(F)
    assert value.shape == (n,) and Q.shape == (n, k)
    for f, q, v in zip(F, Q, value):
        tol = rounding_tol(f, k)
        assert np.all(q >= 0.0)
        assert abs(q.sum() - 1.0) <= tol
        # the projection reference (bisection) and the value 1 - ||q||^2 + f.q
        ref = project_simplex_bisection(f / 2.0)
        np.testing.assert_allclose(q, ref, rtol=0, atol=rounding_tol(f, k, extra=1e-10))
        np.testing.assert_allclose(v, brier_value_from(f, ref), rtol=0, atol=rounding_tol(f, k))
        # ordering of q follows ordering of f (exactly: the rounding of f/2 + shift is monotone)
        q_i, q_j = np.broadcast_arrays(q[:, None], q[None, :])
        bigger = f[:, None] > f[None, :]
        assert np.all(q_i[bigger] >= q_j[bigger])
        tied = f[:, None] == f[None, :]
        assert np.all(q_i[tied] == q_j[tied])
        # F is a max over q: at least every vertex (f_j) and the centre (1 - 1/k + mean f)
        assert v >= f.max() - tol
        assert v >= 1.0 - 1.0 / k + f.mean() - tol


@given(F=potential_arrays(), c=SHIFTS)
def test_brier_shift_equivariance(F, c):
    """``F(f + c) = F(f) + c`` and ``q(f + c) = q(f)``, to the backward-stable ``O(k eps max|f, c|)``."""
    game = ag.Game(brier(F.shape[1]))
    value, Q = game.value_and_adversary(F)
    value_c, Q_c = game.value_and_adversary(F + c)
    tol = rounding_tol(np.append(F, c), F.shape[1])
    np.testing.assert_allclose(value_c, value + c, rtol=0, atol=tol)
    np.testing.assert_allclose(Q_c, Q, rtol=0, atol=tol)


@pytest.mark.parametrize("offset", [0.0, 1e3, 1e6, -1e6])
def test_brier_value_accuracy_against_exact_arithmetic(offset):
    """Backward stability: the value's error is ``O(k eps max|f|)``, like logsumexp's.

    ``F`` is 1-Lipschitz in the max-norm (its gradient is a distribution), so rounding ``f`` to
    float64 alone moves it by ``eps max|f|``; the exact reference uses ``Fraction``.
    """
    rng = np.random.default_rng(36)
    for k in range(2, 7):
        game = ag.Game(brier(k))
        F = rng.normal(size=(10, k)) + offset
        value, Q = game.value_and_adversary(F)
        for f, v, q in zip(F, value, Q):
            exact_value, exact_q = exact_brier(f)
            tol = rounding_tol(f, k)
            assert abs(float(Fraction(float(v)) - exact_value)) <= tol, (
                f"F(f) off by {float(Fraction(float(v)) - exact_value):.3e} (tolerance {tol:.1e}) "
                f"at f={f.tolist()}"
            )
            np.testing.assert_allclose(q, [float(x) for x in exact_q], rtol=0, atol=tol)


# ---------------------------------------------------------------- 2. Farnia and Tse 2016 Eq. 35/73 (Brier)
@given(
    z=hnp.arrays(np.float64, st.integers(1, 6), elements=ELEMENTS),
)
def test_brier_matches_seed_eq35(z):
    t = z.size
    p = seed_brier_gradient(z)
    q = ag.Game(brier(t + 1)).adversary(np.append(z, 0.0))
    np.testing.assert_allclose(q, p, rtol=0, atol=rounding_tol(z, t + 1, extra=1e-12))


def test_brier_seed_eq35_random():
    rng = np.random.default_rng(35)
    for t in range(1, 7):
        game = ag.Game(brier(t + 1))
        for z in rng.normal(scale=1.5, size=(40, t)):
            q = game.adversary(np.append(z, 0.0))
            np.testing.assert_allclose(q, seed_brier_gradient(z), rtol=0, atol=1e-12)


# -------------------------------------------------------------- 3. binary Brier = Huber (Eq. 36)
def test_binary_brier_is_huber_eq36():
    """Seed 001 Eq. 36: ``F(z) - z/2 = z^2/8`` for ``|z| <= 2``, else ``|z|/2 - 1/2``.

    The seed's ``F`` there omits the constant ``1/2``, the maximum Brier entropy ``1 - 1/2`` of
    two labels (at ``z = 0`` the game value is ``H(1/2, 1/2) = 1/2``, not 0), so the game value
    satisfies ``F(z) - z/2 - 1/2 = huber(z)``.
    """
    z = np.concatenate([np.arange(-120, 121) / 20.0, [-2.0, 2.0, 1e6, -1e6, 1e-9, -1e-9]])
    value = ag.Game(brier(2)).value(np.c_[z, np.zeros_like(z)])
    huber = np.where(np.abs(z) <= 2, z**2 / 8, np.abs(z) / 2 - 0.5)
    np.testing.assert_allclose(value - z / 2 - 0.5, huber, rtol=1e-12, atol=1e-12)
    assert ag.Game(brier(2)).value([0.0, 0.0]) == 0.5


# -------------------------------------------------------------------------------------- 4. log
@given(F=potential_arrays())
def test_log_is_logsumexp_and_softmax(F):
    n, k = F.shape
    with warnings.catch_warnings(), np.errstate(over="raise", invalid="raise"):
        warnings.simplefilter("error")
        value, Q = ag.Game(log(k)).value_and_adversary(F)
    assert np.all(np.isfinite(value)) and np.all(np.isfinite(Q))
    np.testing.assert_allclose(value, scipy.special.logsumexp(F, axis=1), rtol=1e-14, atol=0)
    np.testing.assert_allclose(Q, scipy.special.softmax(F, axis=1), rtol=1e-12, atol=1e-15)
    for f, q, v in zip(F, Q, value):
        # independent: max-shifted sum of exponentials, written out
        top = f.max()
        np.testing.assert_allclose(v, top + np.log(np.sum(np.exp(f - top))), rtol=1e-14)
        # Fenchel-Young: the maximiser attains H(q) + f.q
        np.testing.assert_allclose(
            v, shannon_entropy(q) + f @ q, rtol=1e-12, atol=rounding_tol(f, k, extra=1e-12)
        )
        assert abs(q.sum() - 1.0) <= 1e-12 and np.all(q >= 0)


@pytest.mark.parametrize("F", CVXPY_CASES, ids=CVXPY_IDS)
def test_log_closed_form_matches_cvxpy_exp_cone(F):
    game = ag.Game(log(F.shape[1]))
    value, Q = game.value_and_adversary(F)
    value_cvx, Q_cvx = game.value_and_adversary(F, method="cvxpy")
    np.testing.assert_allclose(Q, Q_cvx, rtol=0, atol=LOG_CVXPY_Q_TOL)
    np.testing.assert_allclose(value, value_cvx, rtol=0, atol=CVXPY_VALUE_TOL)


def test_log_matches_seed_eq28():
    """Seed 001 Eq. 28: ``F(z) = log(1 + sum exp z)`` and ``∇F_i = exp(z_i) / (1 + sum exp z)``."""
    rng = np.random.default_rng(28)
    for t in range(1, 6):
        Z = rng.normal(scale=2.0, size=(10, t))
        value, Q = ag.Game(log(t + 1)).value_and_adversary(np.c_[Z, np.zeros(10)])
        denom = 1.0 + np.exp(Z).sum(axis=1)
        np.testing.assert_allclose(value, np.log(denom), rtol=1e-13)
        np.testing.assert_allclose(Q[:, :t], np.exp(Z) / denom[:, None], rtol=1e-12)


@given(F=potential_arrays(), c=SHIFTS)
def test_log_shift_equivariance(F, c):
    game = ag.Game(log(F.shape[1]))
    value, Q = game.value_and_adversary(F)
    value_c, Q_c = game.value_and_adversary(F + c)
    tol = rounding_tol(np.append(F, c), F.shape[1])
    np.testing.assert_allclose(value_c, value + c, rtol=0, atol=tol)
    # softmax of rounded potentials: an O(tol) change in f moves q by at most O(tol)
    np.testing.assert_allclose(Q_c, Q, rtol=0, atol=tol)


def test_log_huge_potentials_do_not_overflow():
    F = np.array([[1e6, 0.0, -1e6], [1e6, 1e6, 1e6], [-1e6, -1e6, -1e6 + 1.0]])
    # exp(-2e6) underflowing to 0 is the correct result; overflow or NaN would not be
    with warnings.catch_warnings(), np.errstate(over="raise", invalid="raise", divide="raise"):
        warnings.simplefilter("error")
        value, Q = ag.Game(log(3)).value_and_adversary(F)
    np.testing.assert_allclose(value, [1e6, 1e6 + np.log(3), -1e6 + 1 + np.log1p(2 / np.e)])
    np.testing.assert_allclose(Q[0], [1.0, 0.0, 0.0], atol=0)
    np.testing.assert_allclose(Q[1], [1 / 3] * 3, rtol=1e-15)
    assert np.all(np.isfinite(Q)) and np.all(np.isfinite(value))


# ---------------------------------------------------------------- 5. zero-one via Farnia and Tse 2016 §3.2
@pytest.mark.parametrize("t", range(1, 7))
def test_zero_one_matches_seed_eq29(t):
    """Seed 001 Eq. 29 equals the zero-one game's adversary on ``(z, 0)`` for continuous ``z``
    (no ties, so the seed's strict inequality holds almost surely) and is a subgradient."""
    rng = np.random.default_rng(29 + t)
    game = ag.Game(ag.losses.zero_one(t + 1))
    Z = rng.normal(size=(60, t)) * rng.choice([0.05, 0.3, 1.0, 3.0], size=(60, 1))
    Zt = np.c_[Z, np.zeros(len(Z))]
    Q = game.adversary(Zt)
    for z, q in zip(Z, Q):
        np.testing.assert_allclose(q, seed_zero_one_gradient(z), rtol=0, atol=1e-15)
    seen_k = {np.count_nonzero(q) for q in Q}
    assert len(seen_k) > 1 or t == 1, "the sample should reach several support sizes"
    _assert_subgradient(game, Z)


@given(
    z=hnp.arrays(np.float64, st.integers(1, 5), elements=st.integers(-8, 8).map(lambda i: i / 4))
)
def test_zero_one_seed_eq29_is_subgradient_with_ties(z):
    """The seed says Eq. 29 stays a subgradient where its inequality is not strict (ties)."""
    _assert_subgradient(ag.Game(ag.losses.zero_one(z.size + 1)), z[None, :])


def _assert_subgradient(game, Z):
    """``F(z') >= F(z) + g.(z' - z)`` with ``F_theta(z) = value((z, 0))``, ``g`` from Eq. 29."""
    rng = np.random.default_rng(0)
    n, t = Z.shape
    steps = [1e-3, 0.1, 1.0, 10.0]
    for z in Z:
        g = seed_zero_one_gradient(z)[:t]
        directions = np.vstack([np.eye(t), -np.eye(t), rng.normal(size=(8, t))])
        points = np.vstack([z + s * directions for s in steps])
        F_points = game.value(np.c_[points, np.zeros(len(points))])
        F_z = game.value(np.append(z, 0.0))
        gap = F_points - F_z - (points - z) @ g
        assert gap.min() >= -1e-12, f"Eq. 29 is not a subgradient at z={z}: gap {gap.min()}"


@pytest.mark.parametrize("t", range(1, 9))
def test_zero_one_value_at_zero(t):
    """Seed 001 §3.2: ``F_theta(0) = t / (t + 1)``, the 0-1 entropy of a uniform label."""
    value = ag.Game(ag.losses.zero_one(t + 1)).value(np.zeros(t + 1))
    np.testing.assert_allclose(value, t / (t + 1), rtol=1e-15)


def test_binary_zero_one_eq30():
    z = np.concatenate([np.arange(-80, 81) / 20.0, [-1.0, 1.0, 1e6, -1e6, 1e-9, -1e-9]])
    assert -1.0 in z and 1.0 in z
    value = ag.Game(ag.losses.zero_one(2)).value(np.c_[z, np.zeros_like(z)])
    expected = np.maximum.reduce([np.zeros_like(z), (z + 1) / 2, z])
    np.testing.assert_allclose(value, expected, rtol=1e-15, atol=1e-15)


# ------------------------------------------------------ 5b. the smoothed zero-one entropy
MUS = [1e-6, 1e-3, 0.1, 1.0, 10.0]


def _smoothed_zero_one_qp(f, mu):
    """``max_{q in Δ, t} f.q + 1 - t - (mu/2)||q||^2`` s.t. ``q <= t`` in cvxpy."""
    q, t = cp.Variable(f.size), cp.Variable()
    problem = cp.Problem(
        cp.Maximize(f @ q + 1 - t - mu / 2 * cp.sum_squares(q)),
        [q >= 0, cp.sum(q) == 1, q <= t],
    )
    problem.solve(solver=cp.CLARABEL)
    return problem.value, q.value


@pytest.mark.parametrize("mu", MUS)
@pytest.mark.parametrize("k", [2, 3, 5, 8])
def test_smoothed_zero_one_matches_cvxpy_qp(k, mu):
    rng = np.random.default_rng(k)
    F = rng.normal(size=(8, k)) * np.array([0.01, 0.1, 1, 1, 3, 10, 100, 1])[:, None]
    F[0] = 0.0  # all tied
    F[-1, : k // 2 + 1] = 0.7  # a tied top set
    value, Q = ag.closed_forms.zero_one_smoothed(F, mu)
    for f, v, q in zip(F, value, Q):
        reference, q_ref = _smoothed_zero_one_qp(f, mu)
        assert v == pytest.approx(reference, rel=1e-6, abs=1e-6)
        np.testing.assert_allclose(q, q_ref, atol=5e-5 * max(1.0, 1.0 / (mu * 1e3)))


@given(F=potential_arrays(), mu=st.sampled_from(MUS))
def test_smoothed_zero_one_sandwich_and_fenchel_young(F, mu):
    """``F_mu <= F <= F_mu + mu / 2``, ``q`` in the simplex, ``F_mu = H_mu(q) + f.q`` at ``q``."""
    value, Q = ag.closed_forms.zero_one_smoothed(F, mu)
    exact = ag.Game(ag.losses.zero_one(F.shape[1])).value(F)
    scale = np.maximum(1.0, np.abs(F).max(axis=1))
    assert np.all(value <= exact + 1e-12 * scale)
    assert np.all(exact <= value + mu / 2 + 1e-12 * scale)
    assert np.all(Q >= 0) and np.allclose(Q.sum(axis=1), 1.0, atol=1e-12)
    entropy = 1 - Q.max(axis=1) - mu / 2 * np.sum(Q * Q, axis=1)
    np.testing.assert_allclose(value, entropy + np.sum(F * Q, axis=1), rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("mu", [1e-2, 1.0])
def test_smoothed_zero_one_gradient_is_the_argmax(mu):
    """Central differences of ``F_mu`` equal ``q*`` (Danskin) and move by at most ``1/mu``."""
    rng = np.random.default_rng(1)
    F = rng.normal(size=(20, 4))
    value, Q = ag.closed_forms.zero_one_smoothed(F, mu)
    h = 1e-6
    for j in range(4):
        E = np.zeros_like(F)
        E[:, j] = h
        slope = (
            ag.closed_forms.zero_one_smoothed(F + E, mu)[0]
            - ag.closed_forms.zero_one_smoothed(F - E, mu)[0]
        ) / (2 * h)
        np.testing.assert_allclose(slope, Q[:, j], atol=1e-5)
    G = F + 1e-3 * rng.normal(size=F.shape)
    Q2 = ag.closed_forms.zero_one_smoothed(G, mu)[1]
    assert np.all(np.linalg.norm(Q2 - Q, axis=1) <= np.linalg.norm(G - F, axis=1) / mu + 1e-12)


@pytest.mark.parametrize("mu", [0.0, -1.0, np.nan])
def test_smoothed_zero_one_needs_positive_mu(mu):
    with pytest.raises(ValueError, match="mu must be positive"):
        ag.closed_forms.zero_one_smoothed(np.zeros((1, 3)), mu)


@pytest.mark.parametrize(
    "game",
    [
        ag.Game(ag.losses.zero_one(4)),
        ag.Game(ag.losses.ordinal(4)),
        ag.Game(brier(4)),
        ag.Game(log(4)),
    ],
    ids=repr,
)
def test_entropy_is_the_fenchel_young_partner_of_value(game):
    """``value(f) = H(q*) + f.q*`` with ``Game.entropy`` (Farnia and Tse 2016 Eq. 20)."""
    F = np.random.default_rng(2).normal(size=(30, 4)) * 2
    value, Q = game.value_and_adversary(F)
    np.testing.assert_allclose(game.entropy(Q), value - np.sum(F * Q, axis=1), atol=1e-12)
    assert np.all(game.entropy(np.eye(4)) == pytest.approx(0.0, abs=1e-15))


@pytest.mark.parametrize("rho", [None, 2.0])
def test_quadratic_entropy(rho):
    game = ag.Game(quadratic(rho))
    Z = np.linspace(-10, 10, 41)[:, None]
    value, M = game.value_and_adversary(Z)
    np.testing.assert_allclose(game.entropy(M), value - Z[:, 0] * M[:, 0], atol=1e-12)


# -------------------------------------------------------------------------------- 6. quadratic
def quadratic_grid(rho):
    base = np.arange(-80, 81) / 10.0
    extra = [2 * rho, -2 * rho, 1e6, -1e6, 1e-9, -1e-9, 0.0]
    return np.concatenate([base, extra])[:, None]


def huber_eq32(z, rho):
    """Seed 001 Eq. 32 / 75, literally: ``rho^2 + z^2/4`` if ``|z/2| <= rho`` else ``rho |z|``."""
    return np.where(np.abs(z / 2) <= rho, rho**2 + z**2 / 4, rho * np.abs(z))


def clipped_mean_eq33(z, rho):
    """Seed 001 Eq. 33 written case by case."""
    return np.where(z / 2 <= -rho, -rho, np.where(z / 2 <= rho, z / 2, rho))


@pytest.mark.parametrize("rho", RHOS)
def test_quadratic_closed_form_eq32_eq33(rho):
    game = ag.Game(quadratic(rho))
    Z = quadratic_grid(rho)
    value, M = game.value_and_adversary(Z)
    assert value.shape == (len(Z),) and M.shape == Z.shape
    z = Z[:, 0]
    np.testing.assert_allclose(value, huber_eq32(z, rho), rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(M[:, 0], clipped_mean_eq33(z, rho), rtol=0, atol=0)
    np.testing.assert_array_equal(game.predict(Z), clipped_mean_eq33(z, rho))
    np.testing.assert_array_equal(game.predictor(Z), M)


@pytest.mark.parametrize("rho", RHOS + [None])
def test_quadratic_matches_cvxpy(rho):
    game = ag.Game(quadratic(rho))
    r = 1.0 if rho is None else rho
    # near (not at) the kinks |z| = 2 rho: at a kink the bound |m| <= rho is active with a zero
    # multiplier and the interior-point solver reaches only ~sqrt(tolerance) in m; the kinks
    # themselves are checked against Eq. 32/33 above
    Z = np.array([-7.0, -2 * r - 0.1, -2 * r + 0.1, -1.3, -0.2, 0.0, 0.4, 2 * r - 0.1, 2 * r + 0.1])
    Z = Z[:, None]
    value, M = game.value_and_adversary(Z)
    value_cvx, M_cvx = game.value_and_adversary(Z, method="cvxpy")
    np.testing.assert_allclose(M, M_cvx, rtol=0, atol=CVXPY_Q_TOL)
    np.testing.assert_allclose(value, value_cvx, rtol=0, atol=CVXPY_VALUE_TOL)


def test_quadratic_unbounded_rho_is_least_squares():
    game = ag.Game(quadratic(None))
    Z = quadratic_grid(1.0)
    value, M = game.value_and_adversary(Z)
    np.testing.assert_allclose(value, Z[:, 0] ** 2 / 4, rtol=1e-15)
    np.testing.assert_array_equal(M, Z / 2)
    np.testing.assert_array_equal(game.predict(Z), Z[:, 0] / 2)
    # a large enough rho gives the same mean and the value plus rho^2 (Farnia and Tse 2016 §3.3)
    small = Z[np.abs(Z[:, 0]) <= 10]
    big = ag.Game(quadratic(100.0)).value_and_adversary(small)
    np.testing.assert_allclose(big[0], small[:, 0] ** 2 / 4 + 100.0**2, rtol=1e-15)
    np.testing.assert_array_equal(big[1], small / 2)


@pytest.mark.parametrize("rho", RHOS + [None])
def test_quadratic_surrogate_and_shapes(rho):
    game = ag.Game(quadratic(rho))
    rng = np.random.default_rng(33)
    Z = rng.normal(scale=3.0, size=(12, 1))
    y = rng.normal(scale=2.0, size=12)
    np.testing.assert_allclose(game.surrogate(Z, y), game.value(Z) - y * Z[:, 0], rtol=1e-15)
    # a single (1,) row gives scalars and a (1,) adversary
    z = Z[3]
    assert z.shape == (1,)
    value = game.value(z)
    assert np.ndim(value) == 0 and value == game.value(Z)[3]
    assert game.adversary(z).shape == (1,)
    assert np.ndim(game.predict(z)) == 0 and game.predict(z) == game.predict(Z)[3]
    surrogate = game.surrogate(z, y[3])
    assert np.ndim(surrogate) == 0
    np.testing.assert_allclose(surrogate, value - y[3] * z[0], rtol=1e-15)
    with pytest.raises(ValueError):
        game.surrogate(Z, y[:5])  # one target per row
    with pytest.raises(ValueError):
        game.surrogate(Z[:1], [np.nan])


# ----------------------------------------------------------------------------- 7. API / errors
ENTROPIES = [brier(3), log(3), quadratic(1.0), quadratic(None)]
ENTROPY_IDS = ["brier", "log", "quadratic", "quadratic_none"]


@pytest.mark.parametrize("method", ["extreme_points", "vertex_table"])
@pytest.mark.parametrize("entropy", ENTROPIES, ids=ENTROPY_IDS)
def test_not_polyhedral_methods_refuse(entropy, method):
    game = ag.Game(entropy)
    with pytest.raises(NotApplicableError):
        getattr(game, method)()


@pytest.mark.parametrize("entropy", ENTROPIES, ids=ENTROPY_IDS)
def test_lp_refuses_and_unknown_method_raises(entropy):
    game = ag.Game(entropy)
    f = np.zeros(entropy.n_labels)
    with pytest.raises(NotApplicableError):
        game.lp(f)
    for method in ("lp", "vertices", "bogus", None):
        with pytest.raises(ValueError, match="method"):
            game.value(f, method=method)
    with pytest.raises(ValueError, match="method"):
        game.predict(f, method="lp")


def test_entropy_game_type_and_properties():
    game = ag.Game(brier(4))
    assert isinstance(game, EntropyGame) and isinstance(game, ag.Game)
    assert game.n_labels == game.n_actions == 4
    assert game.fast_path == "brier"
    assert ag.Game(quadratic(2.0)).n_labels == 1
    assert not isinstance(ag.Game(ag.losses.zero_one(3)), EntropyGame)
    with pytest.raises(TypeError):
        EntropyGame(ag.losses.zero_one(3))
    # maximum entropies at f = 0
    np.testing.assert_allclose(ag.Game(brier(4)).value(np.zeros(4)), 1 - 1 / 4, rtol=1e-15)
    np.testing.assert_allclose(ag.Game(log(4)).value(np.zeros(4)), np.log(4), rtol=1e-15)
    np.testing.assert_allclose(ag.Game(quadratic(2.0)).value([0.0]), 4.0, rtol=1e-15)


@pytest.mark.parametrize(
    "make",
    [
        lambda: brier(1),
        lambda: brier(0),
        lambda: brier(2.0),
        lambda: brier(True),
        lambda: log(1),
        lambda: quadratic(0),
        lambda: quadratic(-1),
        lambda: quadratic(float("nan")),
        lambda: quadratic(float("inf")),
    ],
    ids=[
        "brier1",
        "brier0",
        "brier_float",
        "brier_bool",
        "log1",
        "rho0",
        "rho-1",
        "rhonan",
        "rhoinf",
    ],
)
def test_bad_entropy_arguments(make):
    with pytest.raises(ValueError):
        make()


@pytest.mark.parametrize("entropy", ENTROPIES, ids=ENTROPY_IDS)
def test_program_matches_closed_form(entropy):
    game = ag.Game(entropy)
    k = entropy.n_labels
    f = np.array([0.7, -0.4, 1.9])[:k] if k > 1 else np.array([1.3])
    problem = game.program(f)
    assert isinstance(problem, cp.Problem)
    problem.solve(solver=cp.CLARABEL)
    assert problem.status == cp.OPTIMAL
    name = "mean" if entropy.kind == "quadratic" else "q"
    solution = np.asarray(problem.var_dict[name].value).reshape(-1)
    value, q = game.value_and_adversary(f)
    tol = LOG_CVXPY_Q_TOL if entropy.kind == "log" else CVXPY_Q_TOL
    np.testing.assert_allclose(solution, q, rtol=0, atol=tol)
    # the program leaves out the constant 1 (Brier) or rho^2 (quadratic)
    constant = {"brier": 1.0, "log": 0.0}.get(entropy.kind, (entropy.rho or 0.0) ** 2)
    np.testing.assert_allclose(problem.value + constant, value, rtol=0, atol=CVXPY_VALUE_TOL)
    with pytest.raises(ValueError):
        game.program(np.zeros((2, k)))


@pytest.mark.parametrize("entropy", ENTROPIES, ids=ENTROPY_IDS)
def test_pickle_round_trip(entropy):
    game = ag.Game(entropy)
    clone = pickle.loads(pickle.dumps(game))
    assert type(clone) is EntropyGame
    assert clone.loss == game.loss
    F = np.random.default_rng(1).normal(size=(5, entropy.n_labels))
    np.testing.assert_array_equal(clone.value(F), game.value(F))
    np.testing.assert_array_equal(clone.adversary(F), game.adversary(F))


@pytest.mark.parametrize("make", [brier, log], ids=["brier", "log"])
def test_surrogate_labels(make):
    game = ag.Game(make(3))
    F = np.array([[0.5, -1.0, 2.0], [0.0, 0.0, 0.0]])
    y = np.array([2, 0])
    np.testing.assert_allclose(game.surrogate(F, y), game.value(F) - F[[0, 1], y], rtol=1e-15)
    assert np.ndim(game.surrogate(F[0], 1)) == 0
    for bad in ([3, 0], [-1, 0], [0.5, 1], [0]):
        with pytest.raises(ValueError):
            game.surrogate(F, bad)


@pytest.mark.parametrize("entropy", ENTROPIES, ids=ENTROPY_IDS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_potentials_raise(entropy, bad):
    game = ag.Game(entropy)
    f = np.zeros(entropy.n_labels)
    f[0] = bad
    for call in (game.value, game.adversary, game.predict, game.value_and_adversary):
        with pytest.raises(ValueError, match="finite"):
            call(f)
    with pytest.raises(ValueError, match="finite"):
        game.value(np.vstack([np.zeros_like(f), f]), method="cvxpy")


@pytest.mark.parametrize("make", [brier, log], ids=["brier", "log"])
@given(F=potential_arrays())
def test_predict_is_map_with_ties_to_larger_potential(make, F):
    game = ag.Game(make(F.shape[1]))
    Q = game.adversary(F)
    labels = game.predict(F)
    for f, q, label in zip(F, Q, labels):
        # independent: among labels whose q is within 1e-12 of the max, the largest potential
        tied = np.flatnonzero(q >= q.max() - 1e-12)
        assert label == tied[np.argmax(f[tied])]
        assert f[label] == f.max()  # q is monotone in f, so the MAP label has the top potential
    assert game.predict(F[0]) == labels[0]


@pytest.mark.parametrize("make", [brier, log], ids=["brier", "log"])
def test_predict_ties(make):
    game = ag.Game(make(3))
    np.testing.assert_array_equal(
        game.predict([[1.0, 2.0, 2.0], [2.0, 2.0, 1.0], [0, 0, 0]]), [1, 0, 0]
    )
    # q tied within 1e-12 (log: softmax of a 1e-13 gap; Brier: both on the support): larger f wins
    np.testing.assert_array_equal(game.predict([[1e-13, 0.0, -5.0], [0.0, 1e-13, -5.0]]), [0, 1])
