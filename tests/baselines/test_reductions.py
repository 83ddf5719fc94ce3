"""Seed 000's reduction baselines (Table 4): each QP against the same problem written directly in
cvxpy, the known special cases, the prediction rules, scikit-learn conventions and bad input."""

import cvxpy as cp
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_blobs
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from advgame.baselines import reductions as rd
from advgame.compile.cvx import CLARABEL_OPTIONS

#: Relative agreement of the optimal objective with the cvxpy reference.
OBJECTIVE_RTOL = 1e-6
#: Absolute agreement of decision values with the reference (scores are O(1)).
DECISION_ATOL = 1e-5
#: RBF width of the small exactness problems.
GAMMA = 0.5

RED = [rd.ReductionThresholdSVOR, rd.ReductionMulticlassSVOR]
ALL = [*RED, rd.OneSidedRegressionSVC, rd.CostSensitiveOneVsOneSVC, rd.CostSensitiveOneVsAllSVC]


def _ordinal(seed, k, p=3, n=30):
    """Noisy ordinal data (a binned projection), every class present, plus 5 new inputs."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n + 5, p))
    u = X[:n] @ rng.normal(size=p) + 0.5 * rng.normal(size=n)
    y = np.searchsorted(np.quantile(u, np.arange(1, k) / k), u)
    weights = rng.uniform(0.5, 2.0, size=n)
    return X[:n], y, weights, X[n:]


def _random_cost(k, seed):
    """Positive off-diagonal costs, zero diagonal except one small entry: every class is still
    the cheapest in its own row, so every one-sided/binary problem sees both sides."""
    rng = np.random.default_rng(seed)
    cost = rng.uniform(0.5, 3.0, size=(k, k))
    np.fill_diagonal(cost, 0.0)
    cost[1, 1] = 0.2
    return cost


# ------------------------------------------------------------------- cvxpy references
def _linear_scores(X, X_new, kernel, width):
    """Scores ``S = z(X) V`` (n, width), ``V -> z(X_new) V``, ½||W||² and ``V``; for RBF ``V``
    holds the representer coefficients (``w_m = Σ_i V_im phi(x_i)``, ``||W||² = tr(V^T K V)``)."""
    if kernel == "linear":
        V = cp.Variable((X.shape[1], width))
        return X @ V, lambda v: X_new @ v, 0.5 * cp.sum_squares(V), V
    K = rbf_kernel(X, gamma=GAMMA)
    V = cp.Variable((X.shape[0], width))
    norm = 0.5 * sum(cp.quad_form(V[:, m], cp.psd_wrap(K)) for m in range(width))
    K_new = rbf_kernel(X_new, X, gamma=GAMMA)
    return K @ V, lambda v: K_new @ v, norm, V


def _solve(problem):
    """Clarabel (cvxpy's default QP solver) at tight tolerances: its defaults leave ~1e-6."""
    problem.solve(solver=cp.CLARABEL, **CLARABEL_OPTIONS)


def _red_reference(model, X, y, weights, X_new, cost, k):
    width = 1 if isinstance(model, rd.ReductionThresholdSVOR) else k - 1
    S, new, norm, V = _linear_scores(X, X_new, model.kernel, width)
    theta = cp.Variable(k - 1)
    ones = np.ones((X.shape[0], 1))
    G = S @ np.ones((width, k - 1)) if width == 1 else S
    G = G - ones @ cp.reshape(theta, (1, k - 1), order="C")
    s = np.array([[1.0 if y[n] > t else -1.0 for t in range(k - 1)] for n in range(y.size)])
    omega = np.array(
        [[abs(cost[y[n], t] - cost[y[n], t + 1]) for t in range(k - 1)] for n in range(y.size)]
    )
    hinge = cp.sum(cp.multiply(weights[:, None] * omega, cp.pos(1 - cp.multiply(s, G))))
    objective = norm + 0.5 * cp.sum_squares(theta) + model.C * hinge
    problem = cp.Problem(cp.Minimize(objective))
    _solve(problem)
    scores = new(V.value) @ np.ones((width, k - 1)) if width == 1 else new(V.value)
    return problem.value, scores - theta.value


def _osr_reference(model, X, y, weights, X_new, cost, k):
    S, new, norm, V = _linear_scores(X, X_new, model.kernel, k)
    b = cp.Variable(k)
    R = S + np.ones((X.shape[0], 1)) @ cp.reshape(b, (1, k), order="C")
    c = cost[y]
    Zs = np.where(c == c.min(axis=1, keepdims=True), 1.0, -1.0)
    hinge = cp.sum(cp.multiply(weights[:, None], cp.pos(cp.multiply(Zs, R - c))))
    problem = cp.Problem(cp.Minimize(norm + model.C * hinge))
    _solve(problem)
    return problem.value, new(V.value) + b.value


def _ovo_reference(model, X, y, weights, X_new, cost, k):
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    S, new, norm, V = _linear_scores(X, X_new, model.kernel, len(pairs))
    b = cp.Variable(len(pairs))
    hinge = 0
    for m, (i, j) in enumerate(pairs):
        d = cost[y, i] - cost[y, j]
        s = np.where(d < 0, 1.0, -1.0)
        hinge += cp.sum(
            cp.multiply(weights * np.abs(d), cp.pos(1 - cp.multiply(s, S[:, m] + b[m])))
        )
    problem = cp.Problem(cp.Minimize(norm + model.C * hinge))
    _solve(problem)
    return problem.value, new(V.value) + b.value


def _ova_reference(model, X, y, weights, X_new, cost, k):
    """With the relabelled copies typed out one by one (the model merges a sample's negatives)."""
    S, new, norm, V = _linear_scores(X, X_new, model.kernel, k)
    b = cp.Variable(k)
    c = cost[y]
    q = c.max(axis=1, keepdims=True) - c
    copy_of = np.repeat(np.arange(y.size), k)  # copy (n, l) for every n, l
    label = np.tile(np.arange(k), y.size)
    copy_weight = weights[copy_of] * q[copy_of, label]
    hinge = 0
    for m in range(k):
        s = np.where(label == m, 1.0, -1.0)
        f = S[copy_of, m] + b[m]
        hinge += cp.sum(cp.multiply(copy_weight, cp.pos(1 - cp.multiply(s, f))))
    problem = cp.Problem(cp.Minimize(norm + model.C * hinge))
    _solve(problem)
    return problem.value, new(V.value) + b.value


REFERENCES = {
    rd.ReductionThresholdSVOR: _red_reference,
    rd.ReductionMulticlassSVOR: _red_reference,
    rd.OneSidedRegressionSVC: _osr_reference,
    rd.CostSensitiveOneVsOneSVC: _ovo_reference,
    rd.CostSensitiveOneVsAllSVC: _ova_reference,
}


@pytest.mark.parametrize(
    "kernel, k, cost_seed", [("linear", 3, None), ("linear", 4, 7), ("rbf", 4, None)]
)
@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_qp_equals_cvxpy_reference(cls, kernel, k, cost_seed):
    X, y, weights, X_new = _ordinal(k, k)
    cost = None if cost_seed is None else _random_cost(k, cost_seed)
    model = cls(C=1.5, kernel=kernel, gamma=GAMMA, cost=cost).fit(X, y, sample_weight=weights)
    used = rd.absolute_cost(k) if cost is None else cost
    np.testing.assert_array_equal(model.cost_matrix_, used)
    value, decisions = REFERENCES[cls](model, X, y, weights, X_new, used, k)
    assert model.program_.kind == "QP"
    np.testing.assert_allclose(model.objective_, value, rtol=OBJECTIVE_RTOL)
    np.testing.assert_allclose(model._binary_scores(X_new), decisions, atol=DECISION_ATOL)


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_highs_backend_agrees(cls):
    X, y, weights, X_new = _ordinal(0, 3)
    clarabel = cls().fit(X, y, sample_weight=weights)
    highs = clone(clarabel).set_params(backend="highs").fit(X, y, sample_weight=weights)
    np.testing.assert_allclose(highs.objective_, clarabel.objective_, rtol=OBJECTIVE_RTOL)
    np.testing.assert_allclose(
        highs._binary_scores(X_new), clarabel._binary_scores(X_new), atol=DECISION_ATOL
    )


# ------------------------------------------------------------------- known reductions
def test_csovo_with_two_classes_is_the_binary_svm():
    """One pair, every sample weight |0 - 1| = 1, label +1 for class 0: libsvm's SVM with the
    sign flipped (libsvm's positive class is 1)."""
    X, y = make_blobs(40, centers=2, cluster_std=2.5, random_state=3)
    C = 0.7
    model = rd.CostSensitiveOneVsOneSVC(C=C).fit(X, y)
    svc = SVC(kernel="linear", C=C, tol=1e-10).fit(X, y)
    u = svc.decision_function(X)
    svc_objective = 0.5 * svc.coef_.ravel() @ svc.coef_.ravel() + C * np.sum(
        np.maximum(0.0, 1 - np.where(y == 1, 1, -1) * u)
    )
    np.testing.assert_allclose(model.objective_, svc_objective, rtol=OBJECTIVE_RTOL)
    np.testing.assert_allclose(model._binary_scores(X)[:, 0], -u, atol=DECISION_ATOL)
    np.testing.assert_array_equal(model.predict(X), svc.predict(X))


def test_red_mc_with_two_classes_is_red_th():
    X, y, weights, _ = _ordinal(2, 2)
    th = rd.ReductionThresholdSVOR(C=2.0).fit(X, y, sample_weight=weights)
    mc = rd.ReductionMulticlassSVOR(C=2.0).fit(X, y, sample_weight=weights)
    np.testing.assert_allclose(mc.objective_, th.objective_, rtol=OBJECTIVE_RTOL)
    np.testing.assert_allclose(mc.coef_, th.coef_, atol=DECISION_ATOL)
    np.testing.assert_allclose(mc.thresholds_, th.thresholds_, atol=DECISION_ATOL)


def test_sample_weight_multiplies_every_hinge():
    """A weight of 2 on every sample is C doubled."""
    X, y, _, X_new = _ordinal(3, 3)
    for cls in ALL:
        weighted = cls(C=0.5).fit(X, y, sample_weight=np.full(y.size, 2.0))
        doubled = cls(C=1.0).fit(X, y)
        np.testing.assert_allclose(weighted.objective_, doubled.objective_, rtol=OBJECTIVE_RTOL)
        np.testing.assert_allclose(
            weighted._binary_scores(X_new), doubled._binary_scores(X_new), atol=DECISION_ATOL
        )


# --------------------------------------------------------------------- prediction rules
def _with_identity_scores(cls, k, width):
    """A fitted model whose binary scores are the inputs themselves (``g(x) = x``)."""
    rng = np.random.default_rng(0)
    y = np.arange(60) % k
    model = cls().fit(rng.normal(size=(60, width)), y)
    model.coef_ = np.eye(width)
    if isinstance(model, rd._ExtendedBinary):
        model.thresholds_ = np.zeros(width)
    else:
        model.intercept_ = np.zeros(width)
    return model


def _check_rule(model, G, expected):
    np.testing.assert_array_equal(model._binary_scores(G), G)
    np.testing.assert_array_equal(model.predict(G), expected)
    np.testing.assert_array_equal(np.argmax(model.decision_function(G), axis=1), expected)


def test_red_th_predicts_the_number_of_positive_thresholds():
    model = _with_identity_scores(rd.ReductionThresholdSVOR, 4, 1)
    model.thresholds_ = np.array([-1.0, 0.5, 0.0])  # need not be ordered
    u = np.array([[-2.0], [-0.5], [0.0], [0.25], [0.6]])
    # g = u - theta > 0 counted by hand; at u = 0 the third threshold ties (g = 0: not counted)
    expected = [sum(float(x[0]) - t > 0 for t in model.thresholds_) for x in u]
    assert expected == [0, 1, 1, 2, 3]
    np.testing.assert_array_equal(model.predict(u), expected)
    np.testing.assert_array_equal(np.argmax(model.decision_function(u), axis=1), expected)


def test_red_mc_counts_positive_decisions_even_when_not_monotone():
    model = _with_identity_scores(rd.ReductionMulticlassSVOR, 4, 3)
    G = np.array([[1.0, -1.0, 2.0], [0.0, 0.0, 0.0], [-1.0, -1.0, 0.5], [3.0, 1.0, 0.0]])
    _check_rule(model, G, [2, 0, 1, 2])


def test_csosr_predicts_the_smallest_regressed_cost():
    model = _with_identity_scores(rd.OneSidedRegressionSVC, 3, 3)
    R = np.array([[0.5, 0.2, 0.9], [1.0, 1.0, 2.0], [0.3, 0.1, 0.1], [2.0, 1.5, -1.0]])
    expected = [min(range(3), key=lambda j, r=r: (r[j], j)) for r in R]  # ties: lowest index
    assert expected == [1, 0, 1, 2]
    _check_rule(model, R, expected)
    np.testing.assert_array_equal(model.decision_function(R), -R)


def test_csovo_votes_with_ties_to_the_first_class():
    model = _with_identity_scores(rd.CostSensitiveOneVsOneSVC, 3, 3)
    np.testing.assert_array_equal(model.pairs_, [[0, 1], [0, 2], [1, 2]])
    G = np.array([[1.0, -1.0, 1.0], [-1.0, -1.0, 1.0], [0.0, 0.0, 0.0], [1.0, 1.0, -1.0]])
    votes = np.zeros((len(G), 3))
    for n, g in enumerate(G):
        for (i, j), value in zip([(0, 1), (0, 2), (1, 2)], g):
            votes[n, i if value > 0 else j] += 1
    # a cycle (1 vote each: class 0), 1 beats everyone, g = 0 votes for j (class 2), 0 wins
    _check_rule(model, G, [0, 1, 2, 0])
    np.testing.assert_array_equal(model.decision_function(G), votes)


def test_csova_predicts_the_largest_score():
    model = _with_identity_scores(rd.CostSensitiveOneVsAllSVC, 3, 3)
    F = np.array([[0.5, 0.2, 0.9], [1.0, 1.0, -2.0], [-0.3, 0.1, 0.1]])
    _check_rule(model, F, [2, 0, 1])


def test_two_class_decision_function_sign_matches_predict():
    X, y, _, X_new = _ordinal(5, 2)
    for cls in ALL:
        model = cls().fit(X, y)
        np.testing.assert_array_equal(
            model.predict(X_new), (model.decision_function(X_new) > 0).astype(int)
        )


# ------------------------------------------------------------------------ scikit-learn
RED_TH_REASON = (
    "the check's classes are nominal blobs, not ordered: one direction w cannot rank them "
    "linearly (training accuracy below the check's 0.83); with the RBF features it can."
)


def expected_failures(estimator):
    """The checks each estimator fails, with the reason (the others all pass)."""
    if isinstance(estimator, rd.ReductionThresholdSVOR) and estimator.kernel == "linear":
        return {"check_classifiers_train": RED_TH_REASON}
    return {}


@pytest.mark.parametrize(
    "estimator",
    [cls() for cls in ALL]
    + [pytest.param(rd.ReductionThresholdSVOR(kernel="rbf"), marks=pytest.mark.slow)],  # 7 s
    ids=repr,
)
def test_check_estimator(estimator, conforms):
    conforms(estimator, expected_failures(estimator))


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_pipeline_and_grid_search(cls):
    X, y, _, _ = _ordinal(6, 4, n=60)
    name = cls.__name__.lower()
    pipe = make_pipeline(StandardScaler(), cls(cost=rd.absolute_cost(4)))
    search = GridSearchCV(pipe, {f"{name}__C": [0.1, 1.0]}, cv=3).fit(X, y)
    assert search.best_score_ > 0.4  # chance is 0.25
    assert search.predict(X).shape == y.shape


# -------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "params, match",
    [
        ({"C": 0.0}, "C must be a finite positive number"),
        ({"C": np.nan}, "C must be a finite positive number"),
        ({"kernel": "poly"}, "kernel must be one of"),
        ({"backend": "gurobi"}, "backend must be one of"),
        ({"cost": np.ones((2, 2))}, r"cost must be a \(K, K\) matrix for the K=3"),
        ({"cost": np.ones(3)}, r"got shape \(3,\)"),
        ({"cost": [["a", "b", "c"]] * 3}, "cost must be a numeric"),
        ({"cost": -rd.absolute_cost(3)}, "cost must be non-negative"),
        ({"cost": np.full((3, 3), np.nan)}, "cost must hold finite values"),
        ({"cost": np.full((3, 3), np.inf)}, "cost must hold finite values"),
        ({"cost": np.zeros((3, 3))}, "nothing to learn"),
    ],
)
@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_bad_input(cls, params, match):
    X, y, _, _ = _ordinal(0, 3, n=12)
    if cls is rd.OneSidedRegressionSVC and "cost" in params and not np.any(params["cost"]):
        # A zero cost is a valid regression target: every class is the cheapest, r_k <= 0.
        cls(**params).fit(X, y)
        return
    with pytest.raises(ValueError, match=match):
        cls(**params).fit(X, y)
