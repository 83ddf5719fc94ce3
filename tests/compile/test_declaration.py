"""``PredictionGame`` declarations against references written here, independently of the compiler.

Every reference is built from the math alone (the loss matrix, the feature map, the weights and
the uncertainty set), never from the compiled program:

* the learning problem ``min_theta sum_i w_i (value(f_i) - f_{i, y_i}) + R(theta)`` written
  directly in cvxpy, each sample's game dualised by hand (``u_i >= (L^T p_i)_j + f_ij``,
  ``p_i`` in the simplex), the regulariser from cvxpy's own norms;
* each game's value ``max_{q in simplex} min_a (L q)_a + f . q`` by brute force over the vertices
  of ``{(q, v) : L q >= v 1, q in simplex}`` (every subset of active constraints, numpy) and by
  ``scipy.optimize.linprog``;
* the adversary's objective ``sum_i w_i min_a (L q_i)_a - R^*(m(q))`` and its moment residual
  ``m(q)``, computed from a hand-built feature tensor ``Phi[i, j] = phi(x_i, j)``;
* for tiny instances, the adversary's optimum as the best vertex of its whole feasible polytope
  (every choice of active constraints).

A primal ``theta`` and an adversary ``Q`` whose independently recomputed objectives meet certify
that both are optimal (weak duality), whatever program produced them.
"""

import functools
import itertools
import re
import warnings
from dataclasses import dataclass

import cvxpy as cp
import numpy as np
import pytest
from conftest import assert_raises_naming
from scipy.optimize import linprog

import advgame as ag
from advgame.features import KernelFeatures, Multiclass, Thresholded

#: Relative tolerance of optimum comparisons: ``|a - b| <= RTOL * max(1, |b|)``.
RTOL = 1e-6
#: Absolute tolerance of feasibility (simplex, moment set) and game-value checks on O(1) numbers.
ATOL = 1e-6

LOSS_KINDS = (
    "zero_one",
    "ordinal",
    "squared",
    "abstain_low",
    "abstain_high",
    "cost_sensitive",
    "non_square",
)
SET_KINDS = ("exact", "l1", "linf", "l2", "group", "soft")
#: The program kind each uncertainty set compiles to.
SET_PROGRAM = {"exact": "LP", "l1": "LP", "linf": "LP", "l2": "SOCP", "group": "SOCP", "soft": "QP"}
#: Every (loss kind, set kind) pair three times: multiclass, thresholded, then alternating.
N_RANDOM = 3 * len(LOSS_KINDS) * len(SET_KINDS)
N_KERNEL = 8
N_CHUNKS = 8


def close(a, b, rtol=RTOL):
    return abs(a - b) <= rtol * max(1.0, abs(b))


def relative(a, b):
    return abs(a - b) / max(1.0, abs(b))


# ------------------------------------------------------------------------------- declarations
@dataclass(eq=False)  # hashed by identity: the helpers below cache per case
class Case:
    """One declaration on data, with everything the references need (built here, by hand)."""

    name: str
    pg: ag.PredictionGame
    X: np.ndarray
    y: np.ndarray  # labels as given to compile (sorted-class order = index order)
    y_index: np.ndarray
    sample_weight: np.ndarray | None
    L: np.ndarray  # the reference loss matrix (l, k)
    features: str  # 'multiclass', 'thresholded' or 'kernel'
    set_kind: str
    strength: float  # radius or lam (0 for exact)
    gamma: float | None = None  # rbf kernel parameter

    @property
    def k(self):
        return self.L.shape[1]

    @property
    def n(self):
        return self.X.shape[0]

    @property
    def w(self):
        if self.sample_weight is None:
            return np.full(self.n, 1.0 / self.n)
        return self.sample_weight / self.sample_weight.sum()

    @property
    def Y(self):
        return np.eye(self.k)[self.y_index]

    def __repr__(self):
        return self.name


def reference_loss(kind, k, rng):
    """``(declared loss, its matrix built here, the declaration's keyword options)``."""
    a = np.arange(k)
    if kind == "zero_one":
        return "zero_one", 1.0 - np.eye(k), {}
    if kind == "ordinal":
        return "ordinal", np.abs(a[:, None] - a[None, :]).astype(float), {}
    if kind == "squared":
        return "squared", ((a[:, None] - a[None, :]) ** 2).astype(float), {}
    if kind in ("abstain_low", "abstain_high"):
        alpha = float(rng.choice([0.2, 0.3, 0.45] if kind == "abstain_low" else [0.6, 0.7, 0.9]))
        return "abstain", np.vstack([1.0 - np.eye(k), np.full((1, k), alpha)]), {"alpha": alpha}
    if kind == "cost_sensitive":
        L = np.round(rng.uniform(0.2, 2.0, (k, k)), 3) * (1 - np.eye(k))
        return ag.LossMatrix(L), L, {}
    rows = [r for r in range(max(1, k - 2), k + 3) if r != k]
    L = np.round(rng.uniform(0.0, 2.0, (int(rng.choice(rows)), k)), 3)
    return ag.LossMatrix(L), L, {}


def reference_set(kind, rng):
    """``(uncertainty set, strength)``."""
    if kind == "exact":
        return (ag.Exact() if rng.random() < 0.5 else None), 0.0
    if kind == "soft":
        lam = float(rng.choice([0.05, 0.2, 1.0]))
        return ag.SoftMoments(lam), lam
    radius = float(rng.choice([0.02, 0.1, 0.3]))
    norm = {"l1": 1, "linf": rng.choice([np.inf, "inf"]), "l2": 2, "group": "group"}[kind]
    return ag.NormBall(radius, norm=norm), radius


def labelled_data(rng, n, k, d):
    """``X`` (n, d), label indices covering all ``k`` classes, and the labels as given (sorted
    distinct integers, so their sorted order is the index order)."""
    y_index = rng.permutation(np.concatenate([np.arange(k), rng.integers(0, k, n - k)]))
    X = np.round(rng.normal(size=(n, d)) + 0.8 * y_index[:, None], 3)
    classes = np.arange(k) if rng.random() < 0.5 else np.sort(rng.choice(20, k, replace=False))
    return X, y_index, classes[y_index]


def random_weights(rng, n):
    if rng.random() >= 0.3:
        return None
    weights = np.round(rng.uniform(0.2, 3.0, n), 2)
    if rng.random() < 0.5:
        weights[rng.integers(n)] = 0.0  # a sample the adversary ignores
    return weights


def make_case(seed):
    """Declaration ``seed``: every (loss kind, set kind) pair once with multiclass features (seeds
    ``0..41``), once with thresholded ones (``42..83``) and once with either (``84..125``, by the
    seed's parity); sizes, parameters and weights drawn from the seed."""
    rng = np.random.default_rng(1000 + seed)
    loss_kind = LOSS_KINDS[seed % len(LOSS_KINDS)]
    set_kind = SET_KINDS[(seed // len(LOSS_KINDS)) % len(SET_KINDS)]
    pairs = len(LOSS_KINDS) * len(SET_KINDS)
    features = ("multiclass", "thresholded")[seed // pairs if seed < 2 * pairs else seed % 2]
    k = int(rng.integers(2, 6))
    n = int(rng.integers(max(3, k), 13 if k > 3 else 21))
    d = int(rng.integers(1, 4))
    loss, L, options = reference_loss(loss_kind, k, rng)
    uncertainty, strength = reference_set(set_kind, rng)
    declared = {
        "multiclass": rng.choice(["multiclass", "object"]),
        "thresholded": rng.choice(["thresholded", "object"]),
    }[features]
    if declared == "object":
        declared = Multiclass() if features == "multiclass" else Thresholded()
    X, y_index, y = labelled_data(rng, n, k, d)
    pg = ag.PredictionGame(loss, features=declared, uncertainty=uncertainty, **options)
    name = f"{seed}-{loss_kind}-{set_kind}-{features}-k{k}-n{n}-l{L.shape[0]}"
    sample_weight = random_weights(rng, n)
    if sample_weight is not None:
        name += "-weighted"
    return Case(name, pg, X, y, y_index, sample_weight, L, features, set_kind, strength)


def make_kernel_case(seed):
    """RBF kernel features (the representer form) with soft moments or the RKHS ball."""
    rng = np.random.default_rng(2000 + seed)
    k = int(rng.integers(2, 5))
    n = int(rng.integers(max(3, k), 11))
    d = int(rng.integers(1, 3))
    loss_kind = LOSS_KINDS[(3 * seed) % len(LOSS_KINDS)]
    loss, L, options = reference_loss(loss_kind, k, rng)
    set_kind = "soft" if seed % 2 == 0 else "l2"
    uncertainty, strength = reference_set(set_kind, rng)
    if seed % 4 < 2:
        features, gamma = "rbf", 1.0 / d  # scikit-learn's default gamma, 1 / n_features
    else:
        gamma = float(rng.choice([0.3, 1.5]))
        features = KernelFeatures("rbf", gamma=gamma)
    X, y_index, y = labelled_data(rng, n, k, d)
    pg = ag.PredictionGame(loss, features=features, uncertainty=uncertainty, **options)
    name = f"kernel{seed}-{loss_kind}-{set_kind}-k{k}-n{n}"
    return Case(
        name, pg, X, y, y_index, random_weights(rng, n), L, "kernel", set_kind, strength, gamma
    )


CASES = [make_case(seed) for seed in range(N_RANDOM)] + [
    make_kernel_case(seed) for seed in range(N_KERNEL)
]
CHUNKS = [CASES[i::N_CHUNKS] for i in range(N_CHUNKS)]


# ----------------------------------------------------------------- the feature map, by hand
@functools.cache
def model(case):
    """``(Phi, G, blocks)`` of ``case``: ``Phi[i, j] = phi(x_i, j)`` (n, k, p) so that
    ``F = Phi @ theta``; ``G`` with ``||theta||^2 = ||G theta||^2``; the group-norm blocks."""
    X, k, n = case.X, case.k, case.n
    E = np.eye(k)
    if case.features == "multiclass":
        # theta = Theta.ravel() with Theta (d + 1, k): phi(x, j) = [x; 1] kron e_j, F = X1 Theta
        X1 = np.hstack([X, np.ones((n, 1))])
        Phi = np.stack([np.stack([np.kron(X1[i], E[j]) for j in range(k)]) for i in range(n)])
        p = Phi.shape[2]
        return Phi, np.eye(p), [np.arange(j, p, k) for j in range(k)]
    if case.features == "thresholded":
        # theta = [w; eta]: phi(x, j) = [(j + 1) x; 1(j + 1 <= t) for t = 1..k-1]
        d = X.shape[1]
        Phi = np.stack(
            [
                np.stack(
                    [
                        np.concatenate([(j + 1) * X[i], [float(j + 1 <= t) for t in range(1, k)]])
                        for j in range(k)
                    ]
                )
                for i in range(n)
            ]
        )
        p = d + k - 1
        return Phi, np.eye(p), [np.arange(d), np.arange(d, p)]
    # kernel: theta = A.ravel() with A (n, k), F = K A, ||theta||^2 = tr(A^T K A) = ||R^T A||^2
    K = kernel_matrix(case)
    Phi = np.stack([np.stack([np.kron(K[i], E[j]) for j in range(k)]) for i in range(n)])
    s, U = np.linalg.eigh(K)
    R = U * np.sqrt(np.clip(s, 0.0, None))
    return Phi, np.kron(R.T, E), None


def kernel_matrix(case):
    sq = ((case.X[:, None, :] - case.X[None, :, :]) ** 2).sum(axis=2)
    return np.exp(-case.gamma * sq)


def potentials(case, theta):
    return model(case)[0] @ theta


def regularizer(case, theta):
    """``R(theta)`` in numpy."""
    _, G, blocks = model(case)
    eps = case.strength
    return {
        "exact": lambda: 0.0,
        "l1": lambda: eps * np.max(np.abs(theta)),
        "linf": lambda: eps * np.sum(np.abs(theta)),
        "l2": lambda: eps * np.linalg.norm(G @ theta),
        "group": lambda: eps * sum(np.linalg.norm(theta[b]) for b in blocks),
        "soft": lambda: 0.5 * eps * np.sum((G @ theta) ** 2),
    }[case.set_kind]()


def cvxpy_regularizer(case, theta):
    """``R(theta)`` with cvxpy's own norms."""
    _, G, blocks = model(case)
    eps = case.strength
    return {
        "exact": lambda: 0.0,
        "l1": lambda: eps * cp.norm(theta, "inf"),
        "linf": lambda: eps * cp.norm(theta, 1),
        "l2": lambda: eps * cp.norm(G @ theta, 2),
        "group": lambda: eps * sum(cp.norm(theta[b], 2) for b in blocks),
        "soft": lambda: 0.5 * eps * cp.sum_squares(G @ theta),
    }[case.set_kind]()


def moment_residual(case, Q):
    """``C = w (Q - Y)`` and ``m(Q) = sum_ij C_ij phi(x_i, j)`` (coordinates of ``theta``)."""
    C = case.w[:, None] * (Q - case.Y)
    return C, np.einsum("ijp,ij->p", model(case)[0], C)


def moment_norms(case, Q):
    """The moment-set norm of ``m(Q)`` (one number per block for the group norm); for kernels the
    RKHS norm ``sqrt(sum_j C_j^T K C_j)``."""
    C, m = moment_residual(case, Q)
    if case.features == "kernel":
        K = kernel_matrix(case)
        return np.array([np.sqrt(max(np.einsum("ij,ik,kj->", C, K, C), 0.0))])
    blocks = model(case)[2]
    return {
        "exact": lambda: np.abs(m),
        "l1": lambda: np.array([np.sum(np.abs(m))]),
        "linf": lambda: np.abs(m),
        "l2": lambda: np.array([np.linalg.norm(m)]),
        "group": lambda: np.array([np.linalg.norm(m[b]) for b in blocks]),
        "soft": lambda: np.array([np.linalg.norm(m)]),
    }[case.set_kind]()


def adversary_objective(case, Q):
    """``(sum_i w_i min_a (L Q_i)_a - R^*(m(Q)), violation of the moment set)``."""
    base = float(case.w @ (Q @ case.L.T).min(axis=1))
    norms = moment_norms(case, Q)
    if case.set_kind == "soft":
        return base - norms[0] ** 2 / (2 * case.strength), 0.0
    return base, max(float(norms.max() - case.strength), 0.0)


# ----------------------------------------------------------------- the game value, by hand
@functools.cache
def _vertices(key, shape):
    L = np.frombuffer(key).reshape(shape)
    l, k = shape
    # z = (q, v): the inequalities q_j >= 0 and (L q)_a - v >= 0 as rows >= 0, and sum q = 1
    rows = np.vstack([np.hstack([np.eye(k), np.zeros((k, 1))]), np.hstack([L, -np.ones((l, 1))])])
    total = np.append(np.ones(k), 0.0)
    rhs = np.zeros(k + 1)
    rhs[0] = 1.0
    found = []
    for active in itertools.combinations(range(k + l), k):
        A = np.vstack([total, rows[list(active)]])
        if np.linalg.matrix_rank(A) < k + 1:
            continue
        z = np.linalg.solve(A, rhs)
        if np.all(rows @ z >= -1e-10):
            found.append(z)
    Z = np.unique(np.round(np.array(found), 12), axis=0)
    return Z[:, :k], Z[:, k]


def adversary_vertices(L):
    """The vertices ``(q, v)`` of ``{L q >= v 1, q in simplex}`` by enumerating active sets."""
    L = np.ascontiguousarray(L, dtype=np.float64)
    return _vertices(L.tobytes(), L.shape)


def game_value(L, F):
    """``value(f_i) = max_q min_a (L q)_a + f_i . q`` for every row of ``F``: the best vertex."""
    Qv, v = adversary_vertices(L)
    return np.max(F @ Qv.T + v, axis=1)


def game_value_linprog(L, f):
    """``value(f)`` by ``scipy.optimize.linprog`` over ``(q, v)``."""
    l, k = L.shape
    result = linprog(
        -np.append(f, 1.0),
        A_ub=np.hstack([-L, np.ones((l, 1))]),
        b_ub=np.zeros(l),
        A_eq=np.append(np.ones(k), 0.0)[None, :],
        b_eq=[1.0],
        bounds=[(0, None)] * k + [(None, None)],
        method="highs",
    )
    assert result.status == 0
    return -result.fun


def learning_objective(case, theta):
    """``sum_i w_i (value(f_i) - f_{i, y_i}) + R(theta)`` with the brute-force game value."""
    F = potentials(case, theta)
    risk = game_value(case.L, F) - F[np.arange(case.n), case.y_index]
    return float(case.w @ risk) + regularizer(case, theta)


# --------------------------------------------------------------- the saddle problem, by hand
def reference_primal(case):
    """The learning problem written directly in cvxpy (each game dualised by hand)."""
    Phi = model(case)[0]
    n, k, p = Phi.shape
    l = case.L.shape[0]
    theta = cp.Variable(p)
    u = cp.Variable(n)
    P = cp.Variable((n, l), nonneg=True)
    F = cp.reshape(Phi.reshape(n * k, p) @ theta, (n, k), order="C")
    f_true = cp.sum(cp.multiply(F, case.Y), axis=1)
    objective = case.w @ (u - f_true) + cvxpy_regularizer(case, theta)
    constraints = [
        cp.reshape(u, (n, 1), order="C") @ np.ones((1, k)) >= P @ case.L + F,
        cp.sum(P, axis=1) == 1,
    ]
    problem = cp.Problem(cp.Minimize(objective), constraints)
    solve_tightly(problem)
    return problem.value, theta.value


def solve_tightly(problem):
    """Clarabel at 1e-10, or at its own 1e-8 tolerances where 1e-10 is out of reach.  An
    ill-conditioned kernel matrix (eigenvalues down to 1e-14) can leave it 'optimal_inaccurate'
    even there: accepted, since the optimum is then compared at ``RTOL`` and certified
    independently by :func:`test_theta_and_adversary_certify_each_other`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # 'inaccurate': checked below
        problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
        if problem.status != cp.OPTIMAL:
            problem.solve(solver=cp.CLARABEL)
    assert problem.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE), problem.status


# ------------------------------------------------------------------- the library's answers
#: Wall-clock limit of each HiGHS solve of a QP here: HiGHS' QP solver can stall on degenerate
#: QPs (documented at ``Program.solve``); the small QPs here take milliseconds when it does not.
HIGHS_QP_TIME_LIMIT = 5.0
#: ``(case name, message)`` of the QPs HiGHS did not solve (a documented limitation).
HIGHS_QP_FAILURES = []


@functools.cache
def solved(case):
    """Compile ``case`` and solve: the primal and the dual with the default backend
    ('auto': HiGHS for an LP, cvxpy for a QP or SOCP), and the primal once more with the other
    backend (cvxpy for an LP, HiGHS for a QP; None for an SOCP, or where HiGHS stops with the
    documented ``SolverError`` on a QP)."""
    program = case.pg.compile(case.X, case.y, sample_weight=case.sample_weight)
    with warnings.catch_warnings():  # the optima are checked against the references instead
        warnings.filterwarnings("ignore", "cvxpy reports 'optimal_inaccurate'", RuntimeWarning)
        primal = program.solve()
        dual = program.dual().solve()
        other = None
        if program.kind == "LP":
            other = program.solve("cvxpy")
        elif program.kind == "QP":
            try:
                other = program.solve("highs", time_limit=HIGHS_QP_TIME_LIMIT)
            except ag.SolverError as exc:
                HIGHS_QP_FAILURES.append((case.name, str(exc)))
    return program, primal, dual, other


def check_all(chunk, check):
    """Run ``check(case)`` on every case of ``chunk``; fail listing every case that failed."""
    failures = []
    for case in chunk:
        try:
            check(case)
        except AssertionError as exc:
            failures.append(f"{case.name}: {exc}")
    assert not failures, "\n".join(failures)


def chunk_id(chunk):
    return f"{len(chunk)}cases-from-{chunk[0].name.split('-')[0]}"


# ------------------------------------------------------------------------------------ tests
def test_the_declarations_cover_the_brief():
    kinds = {(case.features, case.set_kind) for case in CASES}
    assert len(CASES) >= 100
    for features in ("multiclass", "thresholded"):
        assert {s for f, s in kinds if f == features} == set(SET_KINDS)
    assert {s for f, s in kinds if f == "kernel"} == {"soft", "l2"}
    assert {c.k for c in CASES} == {2, 3, 4, 5}
    assert min(c.n for c in CASES) == 3 and max(c.n for c in CASES) <= 20
    assert sum(c.sample_weight is not None for c in CASES) >= 10
    assert any(c.sample_weight is not None and 0 in c.sample_weight for c in CASES)
    assert any(c.L.shape[0] < c.k for c in CASES) and any(c.L.shape[0] > c.k + 1 for c in CASES)


def test_hand_built_pieces_match_the_declaration():
    """The matrices built here are the declared ones (so the references play the same game)."""
    for case in CASES:
        assert np.array_equal(case.pg.loss_matrix(case.k).matrix, case.L), case
        program = case.pg.compile(case.X, case.y, sample_weight=case.sample_weight)
        assert program.kind == SET_PROGRAM[case.set_kind], case
        assert (program.n_samples, program.n_labels, program.n_actions) == (
            case.n,
            case.k,
            case.L.shape[0],
        )
        assert np.allclose(program.weights, case.w, rtol=0, atol=1e-15)


def test_vertex_enumeration_matches_linprog():
    rng = np.random.default_rng(7)
    for case in CASES[:: len(CASES) // 12]:
        F = rng.normal(scale=2.0, size=(4, case.k))
        brute = game_value(case.L, F)
        for f, value in zip(F, brute):
            assert abs(value - game_value_linprog(case.L, f)) <= 1e-9, case


@pytest.mark.parametrize("chunk", CHUNKS, ids=chunk_id)
def test_primal_equals_handwritten_saddle_dual_and_other_backend(chunk):
    def check(case):
        program, primal, dual, other = solved(case)
        reference, _ = reference_primal(case)
        assert close(primal.objective, reference), (primal.objective, reference)
        assert close(dual.value, primal.objective), (dual.value, primal.objective)
        if other is not None:  # LP / QP: HiGHS against cvxpy
            assert close(other.objective, primal.objective), (other.objective, primal.objective)
        assert primal.theta.shape == (model(case)[0].shape[2],), case

    check_all(chunk, check)


@pytest.mark.parametrize("chunk", CHUNKS, ids=chunk_id)
def test_theta_and_adversary_certify_each_other(chunk):
    """Weak duality by hand: the primal's ``theta`` (its objective recomputed with brute-force
    game values) and the dual's ``Q`` (feasible for the moment set, its objective recomputed)
    both reach the optimum."""

    def check(case):
        _, primal, dual, _ = solved(case)
        assert learning_objective(case, primal.theta) == pytest.approx(
            primal.objective, rel=RTOL, abs=RTOL
        )
        Q = dual.Q
        assert Q.min() >= -ATOL and np.allclose(Q.sum(axis=1), 1, atol=ATOL), case
        value, violation = adversary_objective(case, Q)
        assert violation <= ATOL, violation
        assert close(value, primal.objective), (value, primal.objective)

    check_all(chunk, check)


@pytest.mark.parametrize("chunk", CHUNKS, ids=chunk_id)
def test_primal_Q_is_a_worst_case_conditional(chunk):
    """Each sample's ``Q_i`` (from the primal's game multipliers) is in the simplex and attains
    the game value at ``f_i(theta*)``; ``m(Q)`` meets the declared set and ``theta*`` is its
    conjugate point (``grad R(theta*) = -m(Q)``)."""

    def check(case):
        _, primal, _, _ = solved(case)
        w, Q, theta = case.w, primal.Q, primal.theta
        multipliers = primal.duals["game"].reshape(case.n, case.k)
        assert np.allclose(multipliers.sum(axis=1), w, atol=ATOL), "multipliers are w_i q_i"
        F = potentials(case, theta)
        for i in np.flatnonzero(w > 0):
            assert Q[i].min() >= -ATOL and abs(Q[i].sum() - 1) <= ATOL, (i, Q[i])
            attained = (case.L @ Q[i]).min() + F[i] @ Q[i]
            value = game_value_linprog(case.L, F[i])
            assert abs(attained - value) <= ATOL * max(1.0, abs(value)), (i, attained, value)
        _, violation = adversary_objective(case, Q)
        assert violation <= ATOL, violation
        _, m = moment_residual(case, Q)
        eps = case.strength
        scale = max(1.0, np.abs(theta).max())
        if case.features == "kernel":
            C, _ = moment_residual(case, Q)
            A = theta.reshape(case.n, case.k)
            if case.set_kind == "soft":  # K (C + lam A) = 0
                residual = kernel_matrix(case) @ (C + eps * A)
                assert np.abs(residual).max() <= ATOL * scale
            return
        stationarity = {
            "exact": lambda: np.abs(m).max(),
            "soft": lambda: np.abs(eps * theta + m).max() / scale,
            # -m is a subgradient of eps ||theta||_*: the pairing meets the support function
            "l1": lambda: abs(-m @ theta - eps * np.abs(theta).max()) / scale,
            "linf": lambda: abs(-m @ theta - eps * np.abs(theta).sum()) / scale,
            "l2": lambda: abs(-m @ theta - eps * np.linalg.norm(theta)) / scale,
            "group": lambda: (
                abs(-m @ theta - eps * sum(np.linalg.norm(theta[b]) for b in model(case)[2]))
                / scale
            ),
        }[case.set_kind]()
        assert stationarity <= ATOL, stationarity

    check_all(chunk, check)


def test_highs_solves_the_lps_and_most_qps():
    """'auto' solves LPs with HiGHS and QPs / SOCPs with cvxpy.  HiGHS' answer to an LP or a QP
    agrees with cvxpy's, or, for a QP only, is the documented ``SolverError`` (its QP solver can
    stall or report 'Solve error'); here that stays the exception."""
    failed = set()
    for case in CASES:
        program, primal, _, other = solved(case)
        assert primal.solution.backend == ("highs" if program.kind == "LP" else "cvxpy"), case
        if program.kind != "SOCP":
            assert (other is None) == (case.name in {name for name, _ in HIGHS_QP_FAILURES})
        if other is None and program.kind != "SOCP":
            assert program.kind == "QP", case
            failed.add(case.name)
    assert len(failed) <= sum(case.set_kind == "soft" for case in CASES) // 4, HIGHS_QP_FAILURES


def test_zero_radius_ball_is_exact_matching():
    case = next(c for c in CASES if c.set_kind == "exact" and c.features == "multiclass")
    exact = solved(case)[1].objective
    for norm in (1, np.inf, 2, "group"):
        pg = ag.PredictionGame(
            case.pg.loss, uncertainty=ag.NormBall(0.0, norm), alpha=case.pg.alpha
        )
        program = pg.compile(case.X, case.y, sample_weight=case.sample_weight)
        assert close(program.solve("cvxpy").objective, exact), norm
        assert close(program.dual().solve("cvxpy").value, exact), norm


def test_sample_weights_are_replication():
    """Integer weights give the optimum of the data with each row repeated that many times."""
    case = next(c for c in CASES if c.set_kind == "l1" and c.features == "multiclass")
    counts = np.random.default_rng(3).integers(1, 4, case.n)
    weighted = case.pg.compile(case.X, case.y, sample_weight=counts.astype(float)).solve()
    repeated = case.pg.compile(np.repeat(case.X, counts, axis=0), np.repeat(case.y, counts))
    assert close(weighted.objective, repeated.solve().objective)


# ------------------------------------------------- brute force over the adversary's vertices
def make_tiny_case(seed):
    """A declaration small enough to enumerate the vertices of the adversary's whole program
    (exact matching with at most 4 samples, the linf ball with 3, the l1 ball with 2)."""
    rng = np.random.default_rng(3000 + seed)
    set_kind = ("exact", "linf", "l1")[seed % 3]
    features = ("multiclass", "thresholded")[(seed // 3) % 2]
    k, n = 2, {"exact": 4, "linf": int(rng.integers(2, 4)), "l1": 2}[set_kind]
    if set_kind == "exact" and features == "thresholded" and seed % 2:
        k, n = 3, 3
    loss_kind = LOSS_KINDS[(5 * seed) % len(LOSS_KINDS)]
    loss, L, options = reference_loss(loss_kind, k, rng)
    uncertainty, strength = reference_set(set_kind, rng)
    X, y_index, y = labelled_data(rng, n, k, 1)
    X = np.round(rng.normal(size=(n, 1)), 2)  # inputs unrelated to the labels
    if set_kind == "exact":
        X[-1] = X[np.flatnonzero(y_index != y_index[-1])[0]]  # a tie: one x, two labels
    pg = ag.PredictionGame(loss, features=features, uncertainty=uncertainty, **options)
    name = f"tiny{seed}-{loss_kind}-{set_kind}-{features}-k{k}-n{n}-l{L.shape[0]}"
    return Case(name, pg, X, y, y_index, random_weights(rng, n), L, features, set_kind, strength)


TINY = [make_tiny_case(seed) for seed in range(12)]


def brute_force_adversary(case):
    """``max sum_i w_i v_i`` over ``z = (Q, v)`` with ``v_i <= (L q_i)_a``, ``q_i`` in the
    simplex and ``m(Q)`` in the (polyhedral) moment set, as the best vertex: every choice of
    active inequalities that completes the equalities to a nonsingular system."""
    Phi = model(case)[0]
    n, k, p = Phi.shape
    l = case.L.shape[0]
    w, dim = case.w, n * k + n
    # m(Q) = M z - c
    M = np.hstack([(w[:, None, None] * Phi).reshape(n * k, p).T, np.zeros((p, n))])
    c = np.einsum("i,ip->p", w, Phi[np.arange(n), case.y_index])
    equalities = [np.hstack([np.kron(np.eye(n), np.ones(k)), np.zeros((n, n))])]
    rhs = [np.ones(n)]
    # inequalities G z >= h: q >= 0 and (L q_i)_a - v_i >= 0
    G = [
        np.hstack([np.eye(n * k), np.zeros((n * k, n))]),
        np.hstack([np.kron(np.eye(n), case.L), -np.kron(np.eye(n), np.ones((l, 1)))]),
    ]
    h = [np.zeros(n * k), np.zeros(n * l)]
    eps = case.strength
    if case.set_kind == "exact":
        equalities.append(M)
        rhs.append(c)
    elif case.set_kind == "linf":  # -eps <= m_j <= eps
        G += [M, -M]
        h += [c - eps, -c - eps]
    else:  # sum_j |m_j| <= eps: s . m <= eps for every sign vector s
        signs = np.array(list(itertools.product((-1.0, 1.0), repeat=p)))
        G.append(-signs @ M)
        h.append(-eps - signs @ c)
    E, e, G, h = np.vstack(equalities), np.concatenate(rhs), np.vstack(G), np.concatenate(h)
    # keep independent equality rows (the intercept moments repeat the simplex rows)
    keep = []
    for row in range(E.shape[0]):
        if np.linalg.matrix_rank(E[keep + [row]]) == len(keep) + 1:
            keep.append(row)
    E, e = E[keep], e[keep]
    combos = np.array(list(itertools.combinations(range(G.shape[0]), dim - E.shape[0])))
    assert len(combos) <= 60_000, len(combos)
    A = np.concatenate([np.broadcast_to(E, (len(combos), *E.shape)), G[combos]], axis=1)
    b = np.concatenate([np.broadcast_to(e, (len(combos), e.size)), h[combos]], axis=1)
    regular = np.linalg.cond(A) < 1e10
    Z = np.linalg.solve(A[regular], b[regular][..., None])[..., 0]
    feasible = np.all(Z @ G.T >= h - 1e-9, axis=1) & np.allclose(Z @ E.T, e, atol=1e-9)
    assert feasible.any()
    return float(np.max(Z[feasible][:, n * k :] @ w))


@pytest.mark.parametrize("case", TINY, ids=repr)
def test_adversary_optimum_is_its_best_vertex(case):
    program = case.pg.compile(case.X, case.y, sample_weight=case.sample_weight)
    brute = brute_force_adversary(case)
    assert close(program.solve().objective, brute), brute
    assert close(program.dual().solve().value, brute), brute
    reference, _ = reference_primal(case)
    assert close(reference, brute), (reference, brute)


# ------------------------------------------------------------------------------- to_cvxpy
TO_CVXPY = [
    next(c for c in CASES if c.set_kind == kind and c.features == features)
    for kind, features in [
        ("exact", "multiclass"),
        ("l1", "thresholded"),
        ("linf", "multiclass"),
        ("soft", "multiclass"),
        ("l2", "thresholded"),
        ("group", "multiclass"),
        ("soft", "kernel"),
        ("l2", "kernel"),
    ]
]


@pytest.mark.parametrize("case", TO_CVXPY, ids=repr)
def test_to_cvxpy_is_the_same_named_program(case):
    program = solved(case)[0]
    problem = program.to_cvxpy()
    assert isinstance(problem, cp.Problem)
    assert {"theta", "u", "p"} <= set(problem.var_dict)
    assert problem.var_dict["theta"].shape == (model(case)[0].shape[2],)
    assert problem.var_dict["p"].shape == (case.n * case.L.shape[0],)
    assert {"game", "simplex"} <= set(problem.constraint_groups)
    assert isinstance(problem.objective, cp.Minimize)
    solve_tightly(problem)
    reference, _ = reference_primal(case)
    assert close(problem.value, reference), (problem.value, reference)
    assert close(learning_objective(case, problem.var_dict["theta"].value), reference)
    text = str(problem)
    assert "theta" in text
    game = [line for line in text.splitlines() if "L^T" in line]
    assert len(game) == 1 and "kron(I_n, L^T)" in game[0] and "Phi" in game[0], text
    assert not re.search(r"\d{11,}", game[0]), game[0]
    assert len(text) < 2000, "labelled matrices print as names, not as numbers"
    adversary = program.dual().to_cvxpy()
    assert isinstance(adversary.objective, cp.Maximize)
    assert "q" in adversary.var_dict
    solve_tightly(adversary)
    assert close(adversary.value, reference), (adversary.value, reference)


# ------------------------------------------------------------------------ invalid declarations
@pytest.mark.parametrize(
    "declare, names",
    [
        (
            lambda: ag.PredictionGame("zero_one", polytope=ag.polytopes.Birkhoff()),
            ("polytope", "loss", "Birkhoff", "zero_one"),
        ),
        (
            lambda: ag.PredictionGame(ag.losses.brier(3), features="thresholded"),
            ("features", "loss", "Thresholded", "brier"),
        ),
        (
            lambda: ag.PredictionGame(
                "zero_one", features="thresholded", uncertainty=ag.MomentBalls(0.1)
            ),
            ("features", "uncertainty", "Thresholded", "MomentBalls"),
        ),
        (
            lambda: ag.PredictionGame(
                ag.losses.log(3), uncertainty=ag.MomentBalls(0.1), polytope=ag.polytopes.Birkhoff()
            ),
            ("polytope", "loss", "Birkhoff", "log"),
        ),
        (
            lambda: ag.PredictionGame("zero_one", features="rbf", uncertainty=ag.NormBall(0.1, 1)),
            ("uncertainty", "features", "NormBall", "KernelFeatures"),
        ),
        (
            lambda: ag.PredictionGame(
                "ordinal", features="rbf", uncertainty=ag.NormBall(0.1, "group")
            ),
            ("uncertainty", "features", "NormBall", "KernelFeatures"),
        ),
    ],
    ids=[
        "birkhoff-zero-one",
        "entropy-exact",
        "momentballs-thresholded",
        "entropy-birkhoff",
        "l1-rbf",
        "group-rbf",
    ],
)
def test_invalid_combinations_name_both_declarations(declare, names):
    assert_raises_naming(declare, names)


@pytest.mark.parametrize(
    "declare, names",
    [
        (lambda: ag.PredictionGame("hinge"), ("loss", "'hinge'", "zero_one")),
        (lambda: ag.PredictionGame("zero_one", features="fourier"), ("features", "'fourier'")),
        (lambda: ag.PredictionGame("zero_one", uncertainty="l3"), ("uncertainty", "'l3'")),
        (lambda: ag.NormBall(-0.1, 1), ("radius",)),
        (lambda: ag.NormBall(0.1, 3), ("norm",)),
        (lambda: ag.SoftMoments(0.0), ("lam",)),
        (lambda: ag.PredictionGame("abstain", alpha=1.5), ("alpha",)),
    ],
    ids=["loss-name", "features-name", "uncertainty-name", "radius", "norm", "lam", "alpha"],
)
def test_invalid_declarations_name_the_culprit(declare, names):
    assert_raises_naming(declare, names)


def test_loss_matrix_must_have_one_column_per_class():
    X = np.zeros((4, 1))
    with pytest.raises(ValueError, match="3 label columns but y has 2 classes"):
        ag.PredictionGame(ag.losses.zero_one(3)).compile(X, [0, 1, 0, 1])


# -------------------------------------------------------------------------- explain and latex
def test_explain_names_the_fast_path_and_program():
    zero_one = ag.PredictionGame("zero_one", uncertainty=ag.NormBall(0.1, 1)).explain()
    assert "closed form for zero_one" in zero_one and "program: LP" in zero_one
    general = ag.PredictionGame(
        np.array([[0.0, 1.0, 2.0], [1.5, 0.0, 1.0], [3.0, 1.0, 0.0]]),
        uncertainty=ag.SoftMoments(0.1),
    ).explain()
    assert "general" in general and "vertex table" in general and "program: QP" in general
    abstain = ag.PredictionGame("abstain", alpha=0.7, uncertainty=ag.NormBall(0.1, 2)).explain()
    assert "alpha = 0.7" in abstain and "no closed form" in abstain and "program: SOCP" in abstain
    low = ag.PredictionGame("abstain", alpha=0.3).explain(k=4)
    assert "closed form for abstain" in low and "program: LP" in low
    kernel = ag.PredictionGame("ordinal", features="rbf", uncertainty=ag.SoftMoments(1.0))
    assert "n * k parameters" in kernel.explain()


def test_explain_matches_compiled_kind():
    for case in CASES[::7]:
        program = solved(case)[0]
        assert f"program: {program.kind}" in case.pg.explain(k=case.k), case


@pytest.mark.parametrize("norm", [2, "group"])
def test_explain_kind_of_a_zero_radius_ball_is_the_compiled_kind(norm):
    pg = ag.PredictionGame("zero_one", uncertainty=ag.NormBall(0.0, norm))
    program = pg.compile(np.array([[0.0], [1.0], [2.0], [3.0]]), [0, 1, 2, 1])
    assert f"program: {program.kind}" in pg.explain(k=3)


@pytest.mark.parametrize(
    "uncertainty, regularizer",
    [
        (ag.NormBall(0.1, 1), r"0.1 \|\theta\|_{\infty}"),
        (ag.NormBall(0.25, np.inf), r"0.25 \|\theta\|_{1}"),
        (ag.NormBall(0.1, 2), r"0.1 \|\theta\|_{2}"),
        (ag.NormBall(0.1, "group"), r"0.1 \sum_b \|\theta_b\|_2"),
        (ag.SoftMoments(0.3), r"\frac{0.3}{2} \|\theta\|_2^2"),
        (ag.Exact(), None),
    ],
    ids=repr,
)
def test_latex_shows_both_programs_and_the_regularizer(uncertainty, regularizer):
    pg = ag.PredictionGame("zero_one", uncertainty=uncertainty)
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    program = pg.compile(X, [0, 1, 2, 1])
    for text in (pg.latex(), program.latex()):
        assert r"\min" in text and r"\max" in text and r"\Delta" in text
        assert r"\mathbf{1}[a \ne y]" in text
        if regularizer is None:
            assert r"\|\theta" not in text and r"m(q) = 0" in text
        else:
            assert regularizer in text, text
    assert program.latex() == program._repr_latex_()


def test_latex_prints_a_small_general_matrix():
    L = np.array([[0.0, 1.0, 2.0], [1.5, 0.0, 1.0], [3.0, 1.0, 0.0]])
    text = ag.PredictionGame(L, uncertainty=ag.NormBall(0.1, 1)).latex()
    assert r"\begin{pmatrix} 0 & 1 & 2 \\ 1.5 & 0 & 1 \\ 3 & 1 & 0 \end{pmatrix}" in text


def test_a_labelled_matrix_orders_the_classes_and_keeps_its_structure():
    """String labels named by the loss matrix keep the matrix's (ordinal) order: the program
    equals the one on integer labels 0 < 1 < 2, column for column."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    index = np.clip(np.round(1.2 * X[:, 0] + 1).astype(int), 0, 2)
    names = np.array(["low", "mid", "high"])
    L = ag.LossMatrix(ag.losses.ordinal(3).matrix, labels=list(names))
    classes, y_index = ag.declaration.classes_of(names[index], L)
    assert list(classes) == list(names) and np.array_equal(y_index, index)
    named = ag.PredictionGame(L, uncertainty=ag.SoftMoments(0.1)).compile(X, names[index]).solve()
    plain = ag.PredictionGame("ordinal", uncertainty=ag.SoftMoments(0.1)).compile(X, index).solve()
    assert named.objective == pytest.approx(plain.objective, rel=1e-9)
    np.testing.assert_allclose(named.P, plain.P, atol=1e-6)
    # labels that do not name the classes (display names) leave the sorted order
    display = ag.LossMatrix(ag.losses.ordinal(3).matrix, labels=["a", "b", "c"])
    assert list(ag.declaration.classes_of(names[index], display)[0]) == sorted(names)


def _rounding_cases():
    """One declaration of each family with the strength 0.0013192612137203166."""
    import networkx as nx

    from advgame.models.graphical import GraphFeatures

    lam = 0.0013192612137203166
    soft = ag.SoftMoments(lam)
    return lam, {
        "simplex": ag.PredictionGame("zero_one", uncertainty=soft),
        "minimax": ag.PredictionGame("zero_one", uncertainty=ag.MomentBalls(lam)),
        "birkhoff": ag.PredictionGame(
            "hamming", uncertainty=soft, polytope=ag.polytopes.Birkhoff()
        ),
        "graph": ag.PredictionGame(
            "zero_one", GraphFeatures(), soft, ag.polytopes.Marginal(nx.path_graph(3))
        ),
        "fenchel-young": ag.PredictionGame(ag.losses.brier(3), uncertainty=soft),
        "polytope": ag.PredictionGame(
            ag.losses.Bilinear(-np.eye(3), c=1.0), uncertainty=soft, polytope=ag.polytopes.Simplex()
        ),
    }


def test_explain_prints_declarations_rounded_and_repr_keeps_full_precision():
    lam, games = _rounding_cases()
    for family, game in games.items():
        assert game.family == family
        text = game.explain(k=3)
        assert "(lam=0.001319)" in text or "(radius=0.001319," in text, family
        assert repr(lam) not in text, family
        assert repr(lam) in repr(game), family
        assert text.splitlines()[0] == ag.explain.rounded(game), family


@pytest.mark.parametrize(
    "value, expected",
    [
        (ag.SoftMoments(0.0013192612137203166), "SoftMoments(lam=0.001319)"),
        (ag.SoftMoments(1.0), "SoftMoments(lam=1.0)"),  # unchanged by rounding: kept as written
        (ag.SoftMoments(0.1), "SoftMoments(lam=0.1)"),
        (ag.NormBall(123.456789, 2), "NormBall(radius=123.5, norm=2)"),
        (ag.SoftMoments(2.5e-07), "SoftMoments(lam=2.5e-07)"),
        (ag.SoftMoments(1.23456789e-07), "SoftMoments(lam=1.235e-07)"),
    ],
)
def test_rounded_keeps_four_significant_digits(value, expected):
    assert ag.explain.rounded(value) == expected
