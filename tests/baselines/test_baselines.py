"""Seed 000's baselines: each QP against the same problem written directly in cvxpy, sanity
checks of the formulations, the abstain rules, scikit-learn conventions and bad input, and the
certificates of ``backend='dual'`` (dual coordinate ascent; the linear LLW's interior-point
method)."""

import cvxpy as cp
import numpy as np
import pytest
from conftest import standardised_iris, standardised_optdigits
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.base import clone
from sklearn.datasets import load_iris, make_blobs
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from advgame.baselines import svm as bl
from advgame.compile.cvx import CLARABEL_OPTIONS
from advgame.solvers.svm_dual import _project_capped

#: Relative agreement of the optimal objective with the cvxpy reference.
OBJECTIVE_RTOL = 1e-6
#: Absolute agreement of decision functions with the reference (scores are O(1)).
DECISION_ATOL = 1e-5
#: Agreement with libsvm (``tol=1e-10``) in the Crammer-Singer / binary SVM identity.
LIBSVM_ATOL = 1e-5
#: RBF width of the small exactness problems.
GAMMA = 0.5

MULTICLASS = [bl.WestonWatkinsSVC, bl.CrammerSingerSVC, bl.LeeLinWahbaSVC, bl.OneVsAllAbstain]
ORDINAL = [bl.AllThresholdSVOR, bl.ImmediateThresholdSVOR]
ALL = [*MULTICLASS, bl.CrammerSingerAbstain, *ORDINAL]


# ------------------------------------------------------------------- cvxpy references
def _small(seed, k, p, n=20):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n + 5, p))
    y = np.concatenate([np.arange(k), rng.integers(0, k, size=n - k)])  # every class present
    weights = rng.uniform(0.5, 2.0, size=n)
    return X[:n], y, weights, X[n:]


def _scores_and_norm(X, X_new, kernel, width, intercept, constant=0.0):
    """Scores ``S`` (n, width) on ``X``, a function ``(V, b) -> scores on X_new``, ½||W||², and
    the variables ``V`` (W, or the representer coefficients A for RBF) and ``b``; ``constant``
    appends that constant feature (regularised offsets: the RBF kernel gains its square)."""
    b = cp.Variable(width) if intercept else np.zeros(width)
    if constant:
        X, X_new = (np.hstack([Z, np.full((Z.shape[0], 1), constant)]) for Z in (X, X_new))
    if kernel == "linear":
        V = cp.Variable((X.shape[1], width))
        return X @ V + b, lambda v, bv: X_new @ v + bv, 0.5 * cp.sum_squares(V), V, b
    # Representer theorem: w_j = sum_m A_mj phi(x_m), ||W||^2 = tr(A^T K A).
    K = _rbf(X, X, constant)
    V = cp.Variable((X.shape[0], width))
    norm = 0.5 * sum(cp.quad_form(V[:, j], cp.psd_wrap(K)) for j in range(width))
    K_new = _rbf(X_new, X, constant)
    return K @ V + b, lambda v, bv: K_new @ v + bv, norm, V, b


def _rbf(A, B, constant):
    """The RBF kernel of the inputs (the last column, with ``constant``, enters as a product)."""
    if not constant:
        return rbf_kernel(A, B, gamma=GAMMA)
    return rbf_kernel(A[:, :-1], B[:, :-1], gamma=GAMMA) + constant**2


def _value(b):
    return b.value if isinstance(b, cp.Variable) else b


def reference(model, X, y, weights, X_new):
    """The model's training problem written directly with cvxpy hinge sums; returns the optimal
    objective and the model's decision values on ``X_new`` (multiclass scores, or the
    ordinal ``(u, thresholds)``).  The offsets of ``backend='dual'``'s ascent are the weights
    of a constant feature 1 (the linear LLW and OVA interior-point methods' are free)."""
    k = int(y.max()) + 1
    Y = np.eye(k)[y]
    C = model.C
    intercept = getattr(model, "fit_intercept", False)
    constant = 0.0
    free = model.kernel == "linear" and isinstance(model, (bl.LeeLinWahbaSVC, bl.OneVsAllAbstain))
    if getattr(model, "backend", None) == "dual" and intercept and not free:
        intercept, constant = False, 1.0
    constraints = []
    if isinstance(model, bl._ThresholdHinge):
        S, new, norm, V, _ = _scores_and_norm(X, X_new, model.kernel, 1, False)
        theta = cp.Variable(k - 1)
        excess = cp.reshape(S, (-1, 1), order="C") - cp.reshape(theta, (1, -1), order="C")
        t = np.arange(k - 1)[None, :]
        side = np.where(t < y[:, None], 1.0, -1.0)
        mask = np.ones_like(side)
        if isinstance(model, bl.ImmediateThresholdSVOR):
            mask = ((t == y[:, None] - 1) | (t == y[:, None])).astype(float)
            constraints.append(cp.diff(theta) >= 0)  # SVORIM gets no ordering rows: implied
        loss = cp.sum(weights @ cp.multiply(mask, cp.pos(1 - cp.multiply(side, excess))))
        problem = cp.Problem(cp.Minimize(norm + C * loss), constraints)
        problem.solve(solver=cp.CLARABEL, canon_backend=cp.SCIPY_CANON_BACKEND, **CLARABEL_OPTIONS)
        return problem.value, (new(V.value, 0.0).ravel(), theta.value)
    S, new, norm, V, b = _scores_and_norm(X, X_new, model.kernel, k, intercept, constant)
    margins = cp.reshape(cp.sum(cp.multiply(Y, S), axis=1), (-1, 1), order="C") - S  # f_y - f_j
    if isinstance(model, (bl.WestonWatkinsSVC, bl.CrammerSingerSVC)) and intercept:
        # Relative margins see only differences of offsets: pin the free common shift of b as
        # the model does (the optimal objective is unchanged).
        constraints.append(cp.sum(b) == 0)
    if isinstance(model, bl.WestonWatkinsSVC):
        per_sample = cp.sum(cp.multiply(1 - Y, cp.pos(1 - margins)), axis=1)
    elif isinstance(model, bl.CrammerSingerSVC):
        per_sample = cp.max(1 - margins - Y, axis=1)  # the j = y_i term is 0: the hinge's floor
    elif isinstance(model, bl.LeeLinWahbaSVC):
        per_sample = cp.sum(cp.multiply(1 - Y, cp.pos(1 + S)), axis=1)
        if model.kernel == "linear":
            constraints.append(cp.sum(V, axis=1) == 0)
        else:  # sum_j w_j = 0 in the RKHS  <=>  K (A 1) = 0
            K = rbf_kernel(X, gamma=GAMMA) + constant
            constraints.append(K @ cp.sum(V, axis=1) == 0)
        if intercept:
            constraints.append(cp.sum(b) == 0)
    else:  # one-vs-all
        per_sample = cp.sum(cp.pos(1 - cp.multiply(2 * Y - 1, S)), axis=1)
    problem = cp.Problem(cp.Minimize(norm + C * weights @ per_sample), constraints)
    problem.solve(solver=cp.CLARABEL, canon_backend=cp.SCIPY_CANON_BACKEND, **CLARABEL_OPTIONS)
    return problem.value, new(V.value, _value(b))


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
@pytest.mark.parametrize("k, p, seed", [(3, 2, 0), (4, 3, 1)])
def test_qp_equals_cvxpy_reference(cls, kernel, k, p, seed):
    X, y, weights, X_new = _small(seed, k, p)
    model = cls(C=1.5, kernel=kernel, gamma=GAMMA).fit(X, y, sample_weight=weights)
    value, decision = reference(model, X, y, weights, X_new)
    assert model.program_.kind == "QP"
    np.testing.assert_allclose(model.objective_, value, rtol=OBJECTIVE_RTOL)
    if isinstance(model, bl._ThresholdHinge):
        u, theta = decision
        np.testing.assert_allclose(
            model._features(X_new) @ model.coef_, u, atol=DECISION_ATOL, rtol=0
        )
        np.testing.assert_allclose(model.thresholds_, theta, atol=DECISION_ATOL, rtol=0)
    else:
        np.testing.assert_allclose(model._scores(X_new), decision, atol=DECISION_ATOL, rtol=0)


@pytest.mark.parametrize("cls", [bl.WestonWatkinsSVC, bl.CrammerSingerSVC, bl.LeeLinWahbaSVC])
def test_intercept_switch_matches_reference(cls):
    X, y, weights, X_new = _small(2, 3, 2)
    flipped = not cls().fit_intercept
    model = cls(fit_intercept=flipped).fit(X, y, sample_weight=weights)
    value, decision = reference(model, X, y, weights, X_new)
    np.testing.assert_allclose(model.objective_, value, rtol=OBJECTIVE_RTOL)
    np.testing.assert_allclose(model._scores(X_new), decision, atol=DECISION_ATOL, rtol=0)
    assert ("b" in model.program_.variables) == flipped
    np.testing.assert_allclose(model.intercept_.sum(), 0.0, atol=1e-8)  # the offsets' gauge


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_highs_backend_agrees(cls):
    """HiGHS's active-set QP solver on the same program (generic data: it terminates)."""
    X, y, weights, X_new = _small(0, 3, 2)
    clarabel = cls().fit(X, y, sample_weight=weights)
    highs = clone(clarabel).set_params(backend="highs").fit(X, y, sample_weight=weights)
    np.testing.assert_allclose(highs.objective_, clarabel.objective_, rtol=OBJECTIVE_RTOL)
    np.testing.assert_allclose(
        highs.decision_function(X_new), clarabel.decision_function(X_new), atol=DECISION_ATOL
    )


def test_rbf_features_reproduce_the_gram_matrix():
    X, y, _, X_new = _small(4, 3, 2)
    model = bl.CrammerSingerSVC(kernel="rbf", gamma=GAMMA).fit(X, y)
    Z, Z_new = model._features(X), model._features(X_new)
    np.testing.assert_allclose(Z @ Z.T, rbf_kernel(X, gamma=GAMMA), atol=1e-9)
    np.testing.assert_allclose(Z_new @ Z.T, rbf_kernel(X_new, X, gamma=GAMMA), atol=1e-9)


# ----------------------------------------------------------------------------- sanity
def _blobs(k, n=60, seed=0):
    """Well-separated blobs at the corners ``5 e_j`` of R^k.  (With k >= 4 classes around a
    circle in the plane, LLW's absolute margins cannot all be met and its linear model fails:
    the low-dimensional weakness Fathony et al. 2018a §7.1 reports, after Doğan et al., 2016.)"""
    return make_blobs(n, centers=5 * np.eye(k), cluster_std=0.4, random_state=seed)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("k", [3, 4])
@pytest.mark.parametrize("cls", MULTICLASS[:3], ids=lambda c: c.__name__)
def test_separable_blobs_are_fitted_perfectly(cls, k, kernel):
    X, y = _blobs(k)
    model = cls(C=10.0, kernel=kernel, gamma=GAMMA).fit(X, y)
    np.testing.assert_array_equal(model.predict(X), y)


def test_crammer_singer_two_classes_is_the_binary_svm_with_twice_c():
    """With w_0 = -w_1 optimal (it minimises ||w_0||^2 + ||w_1||^2 for fixed v = w_1 - w_0),
    the CS objective is ||v||^2 / 4 + C sum hinge(v) = ½ (½||v||^2 + 2C sum hinge(v)): the binary
    SVM with C' = 2C, half its objective, the same decision function."""
    X, y = make_blobs(40, centers=2, cluster_std=2.5, random_state=3)
    C = 0.7
    cs = bl.CrammerSingerSVC(C=C, fit_intercept=True).fit(X, y)
    svc = SVC(kernel="linear", C=2 * C, tol=1e-10).fit(X, y)
    u = svc.decision_function(X)
    svc_objective = 0.5 * svc.coef_.ravel() @ svc.coef_.ravel() + 2 * C * np.sum(
        np.maximum(0.0, 1 - np.where(y == 1, 1, -1) * u)
    )
    np.testing.assert_allclose(cs.objective_, svc_objective / 2, rtol=OBJECTIVE_RTOL)
    np.testing.assert_allclose(cs.decision_function(X), u, atol=LIBSVM_ATOL)
    np.testing.assert_allclose(cs.coef_[0], -cs.coef_[1], atol=LIBSVM_ATOL)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("cls", ORDINAL, ids=lambda c: c.__name__)
def test_ordinal_thresholds_sorted_and_ordered_toy_problem_solved(cls, kernel):
    rng = np.random.default_rng(5)
    k = 5
    y = np.repeat(np.arange(k), 8)
    X = np.column_stack([2.0 * y + rng.uniform(-0.5, 0.5, y.size), rng.normal(size=y.size)])
    labels = 10 * (y + 1)  # any sortable labels: classes_ order is the ordinal order
    model = cls(C=10.0, kernel=kernel, gamma=GAMMA).fit(X, labels)
    assert np.all(np.diff(model.thresholds_) >= 0)
    np.testing.assert_array_equal(model.predict(X), labels)
    # predict is the argmax of the ordinal potentials (= the threshold count)
    F = model.decision_function(X)
    np.testing.assert_array_equal(model.classes_[np.argmax(F, axis=1)], labels)


# ---------------------------------------------------------------------------- abstain
def test_abstain_rules_on_hand_built_scores():
    F = np.array([[0.2, -0.5, -1.0], [-0.1, -0.3, -0.9], [0.0, -1.0, -1.0]])
    np.testing.assert_array_equal(bl.one_vs_all_answers(F, 0.0), [True, False, True])
    G = np.array([[1.0, 0.4, 0.0], [0.0, 0.8, 1.0], [-1.0, 0.5, 0.0]])
    np.testing.assert_array_equal(bl.top_two_gap_answers(G, 0.5), [True, False, True])
    np.testing.assert_array_equal(bl.top_two_gap_answers(G, 0.6), [True, False, False])


@pytest.mark.parametrize(
    "cls, F, expected",
    [
        (bl.OneVsAllAbstain, [[0.2, -0.5, -1.0], [-0.1, -0.3, -0.9]], ["a", "abstain"]),
        (bl.CrammerSingerAbstain, [[0.0, 0.8, 1.0], [-1.0, 0.7, 0.0]], ["abstain", "b"]),
    ],
)
def test_abstaining_predict(cls, F, expected, monkeypatch):
    X, y = _blobs(3, n=30)
    names = np.array(["a", "b", "c"])[y]
    model = cls(abstain_label="abstain").fit(X, names)
    monkeypatch.setattr(model, "_scores", lambda X: np.asarray(F))
    np.testing.assert_array_equal(model.predict(X[:2]), expected)


def test_abstain_label_matches_the_adversarial_classifier():
    import advgame as ag

    X, y = _blobs(3, n=30)
    ours = bl.CrammerSingerAbstain().get_params()["abstain_label"]
    # the classifier's default (None) is -1 for numeric classes such as these
    ag_label = ag.AdversarialClassifier(loss="abstain").fit(X, y).abstain_label_
    assert ours == ag_label == -1
    predicted = bl.CrammerSingerAbstain(C=1e-4).fit(X, y).predict(X)  # tiny scores: abstains
    assert predicted.dtype == y.dtype and -1 in predicted


# ------------------------------------------------------------------------ scikit-learn
ABSTAIN_REASON = (
    "predict abstains (returns abstain_label) where the argmax score names a class: that is "
    "the threshold rule of Ramaswamy et al. (2018), while the check expects predict to be "
    "the argmax of decision_function."
)
ORDINAL_REASON = (
    "the check's classes are nominal blobs, not ordered: one direction w with ordered "
    "thresholds cannot separate them linearly (training accuracy below the check's 0.83); "
    "with the RBF features it can."
)


def expected_failures(estimator):
    """The checks each estimator fails, with the reason (the others all pass)."""
    if isinstance(estimator, bl._Abstains):
        return {"check_classifiers_train": ABSTAIN_REASON}
    if isinstance(estimator, bl._ThresholdHinge) and estimator.kernel == "linear":
        return {"check_classifiers_train": ORDINAL_REASON}
    return {}


@pytest.mark.parametrize(
    "estimator",
    # The RBF feature map is shared code: one multiclass and one ordinal model check it.
    [cls() for cls in ALL]
    + [  # the Gaussian kernels' checks take 7-12 s each: slow tier
        pytest.param(bl.WestonWatkinsSVC(kernel="rbf"), marks=pytest.mark.slow),
        pytest.param(bl.AllThresholdSVOR(kernel="rbf"), marks=pytest.mark.slow),
    ],
    ids=repr,
)
def test_check_estimator(estimator, conforms):
    conforms(estimator, expected_failures(estimator))


@pytest.mark.parametrize(  # one model in the fast tier; the searches take 2-3 s each
    "cls",
    [ALL[0]] + [pytest.param(cls, marks=pytest.mark.slow) for cls in ALL[1:]],
    ids=lambda c: c.__name__,
)
def test_pipeline_and_grid_search(cls):
    X, y = load_iris(return_X_y=True)
    pipe = make_pipeline(StandardScaler(), cls(kernel="rbf"))
    search = GridSearchCV(
        pipe,
        {f"{cls.__name__.lower()}__C": [0.1, 1.0], f"{cls.__name__.lower()}__gamma": [0.1]},
        cv=3,
    ).fit(X, y)
    assert search.best_score_ > 0.6
    assert search.predict(X).shape == y.shape


# -------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "params, match",
    [
        ({"C": 0.0}, "C must be a finite positive number"),
        ({"C": -1.0}, "C must be a finite positive number"),
        ({"C": np.nan}, "C must be a finite positive number"),
        ({"C": "1"}, "C must be a finite positive number"),
        ({"kernel": "poly"}, "kernel must be one of"),
        ({"kernel": rbf_kernel}, "kernel must be one of"),
        ({"kernel": "rbf", "gamma": -1.0}, "gamma must be a finite positive number"),
        ({"backend": "gurobi"}, "backend must be one of"),
    ],
)
@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_bad_parameters(cls, params, match):
    X, y = _blobs(3, n=12)
    with pytest.raises(ValueError, match=match):
        cls(**params).fit(X, y)


@pytest.mark.parametrize("cls", [bl.OneVsAllAbstain, bl.CrammerSingerAbstain])
def test_bad_threshold(cls):
    X, y = _blobs(3, n=12)
    with pytest.raises(ValueError, match="threshold must be a finite number"):
        cls(threshold=np.inf).fit(X, y)


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_one_class_is_refused(cls):
    X, _ = _blobs(3, n=12)
    with pytest.raises(ValueError, match="at least 2 classes"):
        cls().fit(X, np.zeros(12))


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_working_set_reaches_the_full_optimum(cls, kernel, monkeypatch):
    """Constraint generation from a working set of 5 hinge rows ends at the reference optimum:
    every row satisfied, the same objective and decision values."""
    monkeypatch.setattr(bl, "WORKING_SET_ROWS", 5)
    monkeypatch.setattr(cls, "_working_set_kernels", ("linear", "rbf"))  # on for every model
    if getattr(cls, "_dual_kind", None):  # a random first set, not the warm one: rows to add
        monkeypatch.setattr(cls, "_first_working_set", bl._ExactHingeModel._first_working_set)
    X, y, weights, X_new = _small(2, 4, 3, n=30)
    model = cls(C=1.5, kernel=kernel, gamma=GAMMA).fit(X, y, sample_weight=weights)
    assert model.n_rounds_ > 1  # it did start from a working set
    value, decision = reference(model, X, y, weights, X_new)
    np.testing.assert_allclose(model.objective_, value, rtol=OBJECTIVE_RTOL)
    if isinstance(model, bl._ThresholdHinge):
        u, theta = decision
        np.testing.assert_allclose(
            model._features(X_new) @ model.coef_, u, atol=DECISION_ATOL, rtol=0
        )
    else:
        np.testing.assert_allclose(model._scores(X_new), decision, atol=DECISION_ATOL, rtol=0)


@pytest.mark.parametrize(
    "kernel, k, p, seed",
    # (linear, 4, 3, 1) is left out: libsvm's SMO at tol=1e-8 on that rank-3 Gram matrix takes
    # about 45 s (the linear kernel has the QP backends for that)
    [("linear", 3, 2, 0), ("rbf", 3, 2, 0), ("rbf", 4, 3, 1)],
)
def test_one_vs_all_libsvm_backend_equals_the_qp(kernel, k, p, seed):
    """``OneVsAllAbstain(backend='libsvm')`` (k binary SMO fits) reaches the QP's optimum: the
    cvxpy reference's objective, scores and abstentions."""
    X, y, weights, X_new = _small(seed, k, p)
    model = bl.OneVsAllAbstain(C=1.5, kernel=kernel, gamma=GAMMA, backend="libsvm")
    model.fit(X, y, sample_weight=weights)
    value, decision = reference(model, X, y, weights, X_new)
    np.testing.assert_allclose(model.objective_, value, rtol=OBJECTIVE_RTOL)
    np.testing.assert_allclose(model._scores(X_new), decision, atol=DECISION_ATOL, rtol=0)
    qp = bl.OneVsAllAbstain(C=1.5, kernel=kernel, gamma=GAMMA).fit(X, y, sample_weight=weights)
    assert np.array_equal(model.predict(X_new), qp.predict(X_new))
    if kernel == "linear":
        np.testing.assert_allclose(model.coef_, qp.coef_, atol=DECISION_ATOL)
    with pytest.raises(ValueError, match="needs fit_intercept=True"):
        bl.OneVsAllAbstain(backend="libsvm", fit_intercept=False).fit(X, y)


# ------------------------------------------------------------------ dual coordinate ascent
DUAL = [bl.WestonWatkinsSVC, bl.CrammerSingerSVC, bl.LeeLinWahbaSVC]


@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("cls", DUAL, ids=lambda c: c.__name__)
@pytest.mark.parametrize("k, p, seed, C", [(3, 2, 0, 1.5), (4, 3, 1, 20.0), (2, 2, 3, 0.2)])
def test_dual_backend_is_certified_against_the_cvxpy_reference(
    cls, kernel, intercept, k, p, seed, C
):
    """``backend='dual'`` (on the Gram matrix for RBF, on the weights for linear; offsets as
    the weights of a constant feature): the cvxpy optimum lies in the certified interval
    ``[objective_ - gap_, objective_]`` (the gap within ``DUAL_TOL``), and the scores agree
    with the reference's to the accuracy the gap allows."""
    X, y, weights, X_new = _small(seed, k, p)
    model = cls(C=C, kernel=kernel, gamma=GAMMA, fit_intercept=intercept, backend="dual")
    model.fit(X, y, sample_weight=weights)
    value, decision = reference(model, X, y, weights, X_new)
    assert model.program_ is None
    if kernel == "rbf":
        assert model.coef_ is None and model.dual_coef_.shape == (X.shape[0], max(k, 2))
    else:
        assert model.dual_coef_ is None and model.coef_.shape == (max(k, 2), p)
    assert 0.0 <= model.gap_ <= bl.DUAL_TOL * max(1.0, model.objective_)
    assert model.objective_ - model.gap_ - 1e-7 * value <= value <= model.objective_ + 1e-7 * value
    # strong convexity in w: ||w - w*||^2 / 2 <= gap, so each score is off by at most
    # sqrt(2 gap K(x, x)) (plus the reference's own accuracy); K(x, x) <= 1 + 1 for RBF with
    # the constant feature, ||x||^2 + 1 for linear
    size = np.sqrt(2.0) if kernel == "rbf" else np.sqrt((X_new**2).sum(1).max() + 1.0)
    bound = np.sqrt(2.0 * model.gap_) * size
    np.testing.assert_allclose(model._scores(X_new), decision, atol=bound + DECISION_ATOL, rtol=0)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("cls", DUAL, ids=lambda c: c.__name__)
def test_dual_backend_tight_tolerance_reaches_the_qp(cls, kernel, monkeypatch):
    """At a tight tolerance the ascent lands on the QP backend's optimum and predictions."""
    monkeypatch.setattr(bl, "DUAL_TOL", 1e-10)
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)[::3]
    y = y[::3]
    dual = cls(C=3.0, kernel=kernel, fit_intercept=False, backend="dual").fit(X, y)
    qp = cls(C=3.0, kernel=kernel, fit_intercept=False).fit(X, y)
    np.testing.assert_allclose(dual.objective_, qp.objective_, rtol=1e-7)
    np.testing.assert_allclose(dual.decision_function(X), qp.decision_function(X), atol=1e-4)
    assert np.array_equal(dual.predict(X), qp.predict(X))


@pytest.mark.parametrize("seed, C", [(0, 1.5), (1, 50.0)])
@pytest.mark.parametrize("cls", DUAL, ids=lambda c: c.__name__)
def test_warm_first_working_set_reaches_the_full_optimum(cls, seed, C, monkeypatch):
    """The first working set named by a rough dual ascent (a strict subset of the hinge rows
    here) ends, through constraint generation, at the reference optimum."""
    monkeypatch.setattr(bl, "WORKING_SET_ROWS", 5)
    monkeypatch.setattr(cls, "_working_set_kernels", ("linear",))
    first = []
    warm = cls._first_working_set
    monkeypatch.setattr(cls, "_first_working_set", lambda *a: first.append(warm(*a)) or first[0])
    X, y = _blobs(4, n=45, seed=seed)  # separable: few rows stay near their hinge
    X, X_new, y = X[:40], X[40:], y[:40]
    weights = np.random.default_rng(seed).uniform(0.5, 2.0, size=40)
    model = cls(C=C).fit(X, y, sample_weight=weights)
    value, decision = reference(model, X, y, weights, X_new)
    assert 0 < first[0].sum() < first[0].size
    np.testing.assert_allclose(model.objective_, value, rtol=OBJECTIVE_RTOL)
    np.testing.assert_allclose(model.decision_function(X_new), decision, atol=DECISION_ATOL)


def test_dual_ascent_names_an_unknown_model():
    X, y = _blobs(3, n=12)
    with pytest.raises(ValueError, match=r"kind must be one of \['cs', 'llw', 'ww'\]; got None"):
        bl.fit_hinge_dual(X, y, np.ones(12), None, linear=True)


@pytest.mark.parametrize("cls", ORDINAL, ids=lambda c: c.__name__)
def test_dual_backend_is_offered_to_the_multiclass_svms_only(cls):
    """The three multiclass SVMs and the linear one-vs-all ones have ``backend='dual'``; the
    ordinal SVMs do not."""
    X, y = _blobs(3, n=12)
    with pytest.raises(ValueError, match="backend must be one of"):
        cls(backend="dual").fit(X, y)


def test_dual_backend_reports_an_uncertified_stop(monkeypatch):
    """An epoch budget too small for the tolerance is an error, never a silent answer."""
    X, y = load_iris(return_X_y=True)
    monkeypatch.setattr(bl, "DUAL_TOL", 1e-12)
    model = bl.CrammerSingerSVC(C=100.0, kernel="rbf", backend="dual")
    original = bl.fit_hinge_dual
    monkeypatch.setattr(
        bl, "fit_hinge_dual", lambda *args, **kw: original(*args, **kw, max_epochs=2)
    )
    with pytest.raises(bl.SolverError, match="stopped at the relative gap"):
        model.fit(X, y)


@given(
    v=arrays(np.float64, st.integers(2, 8), elements=st.floats(-1e3, 1e3)),
    cap=st.floats(0.0, 1e3),
    label=st.integers(0, 7),
    ties=st.booleans(),
)
@settings(max_examples=200, deadline=None)
def test_capped_projection_is_the_euclidean_projection(v, cap, label, ties):
    """The Crammer-Singer block step projects onto ``{sum b = 0, b <= cap e_y}``: its result is
    feasible and satisfies the projection's optimality condition (``v - b`` is a constant
    ``tau`` on the uncapped labels and at least ``tau`` on the capped ones)."""
    if ties:
        v = np.round(v / 100.0) * 100.0
    k = v.size
    caps = np.zeros(k)
    caps[label % k] = cap
    out, d, order = np.empty(k), np.empty(k), np.empty(k, dtype=np.int64)
    _project_capped(v, caps, out, d, order)
    scale = 1.0 + np.abs(v).max() + cap
    assert abs(out.sum()) <= 1e-9 * scale * k
    assert np.all(out <= caps + 1e-12 * scale)
    residual = v - out
    free = out < caps - 1e-9 * scale
    tau = residual[free].mean() if free.any() else residual.min()
    np.testing.assert_allclose(residual[free], tau, atol=1e-9 * scale)
    assert np.all(residual[~free] >= tau - 1e-9 * scale)


# ------------------------------------------------------- linear LLW: the interior-point method
#: Relative accuracy allowed to the cvxpy (Clarabel) reference optimum of the LLW tests.
REFERENCE_RTOL = 1e-7


def _llw_hinged(y, k):
    """``1`` where ``j != y_i`` (the hinge arguments of LLW), ``0`` at the labels."""
    hinged = np.ones((y.size, k))
    hinged[np.arange(y.size), y] = 0.0
    return hinged


def _llw_primal(X, y, cost, W, b):
    """``P(W, b) = ½||W||² + Σ_i c_i Σ_{j≠y_i} [1 + (X W + b)_ij]_+`` (free offsets), computed
    independently."""
    hinged = _llw_hinged(y, W.shape[1])
    return 0.5 * np.sum(W**2) + np.sum(cost[:, None] * hinged * np.maximum(0.0, 1.0 + X @ W + b))


def _llw_reference(X, y, cost, k, intercept=True):
    """The LLW primal with free offsets written directly in cvxpy: ``W`` (d, k) and ``b`` (k,)
    summing to zero over the labels; returns ``(P*, W*)``."""
    W, b = cp.Variable((X.shape[1], k)), cp.Variable((1, k))
    scores = X @ W + (np.ones((X.shape[0], 1)) @ b if intercept else 0.0)
    weights = cost[:, None] * _llw_hinged(y, k)
    objective = 0.5 * cp.sum_squares(W) + cp.sum(cp.multiply(weights, cp.pos(1 + scores)))
    constraints = [cp.sum(W, axis=1) == 0, cp.sum(b) == 0 if intercept else b == 0]
    problem = cp.Problem(cp.Minimize(objective), constraints)
    problem.solve(solver=cp.CLARABEL, canon_backend=cp.SCIPY_CANON_BACKEND, **CLARABEL_OPTIONS)
    return problem.value, W.value


def _optdigits_features():
    return standardised_optdigits(40)


@pytest.mark.parametrize("intercept", [True, False])
@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
@pytest.mark.parametrize(
    "data", [standardised_iris, _optdigits_features], ids=["iris", "optdigits"]
)
def test_llw_interior_point_brackets_the_cvxpy_optimum(data, C, intercept):
    """``fit_llw_linear`` on real data (iris, 3 classes; 40 optdigits rows, all 10 classes): the
    objective is ``P`` at the returned weights and offsets (each summing to zero over the
    labels), the gap is within the tolerance, and the certificate brackets the optimum of the
    same primal (free offsets) written in cvxpy, ``D = P - gap <= P* <= P``, with the weights
    within ``sqrt(2 gap)`` of the reference's (strong convexity in ``W``)."""
    X, y = data()
    k = int(y.max()) + 1
    cost = np.full(y.size, C)
    W, b, objective, gap, steps = bl.fit_llw_linear(X, y, cost, fit_intercept=intercept)
    value, W_ref = _llw_reference(X, y, cost, k, intercept)
    slack = REFERENCE_RTOL * max(1.0, abs(value))
    assert W.shape == (X.shape[1], k) and b.shape == (k,) and steps > 0
    np.testing.assert_allclose(W.sum(axis=1), 0.0, atol=1e-10 * max(1.0, np.abs(W).max()))
    np.testing.assert_allclose(b.sum(), 0.0, atol=1e-10 * max(1.0, np.abs(b).max()))
    if not intercept:
        assert np.all(b == 0.0)
    np.testing.assert_allclose(objective, _llw_primal(X, y, cost, W, b), rtol=1e-12)
    assert 0.0 <= gap <= 1e-4 * max(1.0, objective)
    assert objective - gap - slack <= value <= objective + slack
    bound = np.sqrt(2.0 * (gap + slack)) + np.sqrt(2.0 * slack)  # ours, and the reference's
    assert np.linalg.norm(W - W_ref) <= bound


@pytest.mark.parametrize("intercept", [True, False])
def test_llw_interior_point_agrees_with_the_exact_qp(intercept):
    """At a tight tolerance the interior-point method and the estimator's own compiled QP
    solved by HiGHS (``backend='highs'``, the program of ``_hinges`` and ``_extra_rows``) reach
    the same optimum of the same model: objectives, weights and offsets agree."""
    X, y = standardised_iris()
    X, y = X[::2], y[::2]
    W, b, objective, gap, _ = bl.fit_llw_linear(
        X, y, np.full(y.size, 3.0), tol=1e-10, fit_intercept=intercept
    )
    assert gap <= 1e-10 * max(1.0, objective)
    qp = bl.LeeLinWahbaSVC(C=3.0, fit_intercept=intercept, backend="highs").fit(X, y)
    np.testing.assert_allclose(objective, qp.objective_, rtol=1e-9)
    np.testing.assert_allclose(W.T, qp.coef_, atol=1e-5)
    np.testing.assert_allclose(b, qp.intercept_, atol=1e-5)


def test_llw_interior_point_sample_weights():
    """Rows of weight 0 are left out, and an integer weight is that many copies of the row:
    the same optimum (tight tolerance), through the function and through the estimator."""
    X, y = standardised_iris()
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 4, size=y.size)  # 0: dropped
    fit = lambda X, y, cost: bl.fit_llw_linear(X, y, cost, tol=1e-10, n_classes=3)  # noqa: E731
    W, _, objective, _, _ = fit(X, y, 2.0 * counts)
    repeated = np.repeat(np.arange(y.size), counts)
    W_copies, _, objective_copies, _, _ = fit(X[repeated], y[repeated], np.full(repeated.size, 2.0))
    np.testing.assert_allclose(objective, objective_copies, rtol=1e-9)
    np.testing.assert_allclose(W, W_copies, atol=1e-5)
    kept = counts > 0
    W_kept, _, objective_kept, _, _ = fit(X[kept], y[kept], 2.0 * counts[kept])
    np.testing.assert_allclose(objective, objective_kept, rtol=1e-9)
    np.testing.assert_allclose(W, W_kept, atol=1e-5)
    weighted = bl.LeeLinWahbaSVC(C=2.0, backend="dual").fit(X, y, sample_weight=counts)
    copies = bl.LeeLinWahbaSVC(C=2.0, backend="dual").fit(X[repeated], y[repeated])
    for model in (weighted, copies):  # both within DUAL_TOL of the same optimum
        assert objective <= model.objective_ <= objective + model.gap_ + 1e-9 * objective
    # strong convexity: each one's weights are within sqrt(2 gap_) of the optimal weights
    bound = np.sqrt(2.0 * weighted.gap_) + np.sqrt(2.0 * copies.gap_)
    assert np.linalg.norm(weighted.coef_ - copies.coef_) <= bound


@given(
    k=st.integers(2, 4),
    rows=st.integers(2, 10),
    p=st.integers(1, 3),
    copies=st.integers(0, 6),
    scale=st.floats(-3.0, 3.0),
    log_C=st.floats(-3.0, 3.0),
    intercept=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
@settings(deadline=None)
def test_llw_interior_point_gap_is_an_honest_certificate(
    k, rows, p, copies, scale, log_C, intercept, seed
):
    """For any data (duplicated rows, inputs scaled by 1e-3..1e3, C in 1e-3..1e3, with and
    without offsets) the returned gap bounds the true suboptimality, ``P(W, b) - P* <= gap``,
    with ``P*`` from cvxpy, and the run certifies the default tolerance."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, p)) * 10.0**scale
    y = rng.integers(0, k, size=rows)
    X, y = np.vstack([X, X[:copies]]), np.concatenate([y, y[:copies]])  # duplicated rows
    cost = np.full(y.size, 10.0**log_C)
    W, b, objective, gap, _ = bl.fit_llw_linear(X, y, cost, n_classes=k, fit_intercept=intercept)
    value, _ = _llw_reference(X, y, cost, k, intercept)
    slack = REFERENCE_RTOL * max(1.0, abs(value))
    suboptimality = _llw_primal(X, y, cost, W, b) - value
    assert suboptimality >= -slack
    assert gap >= suboptimality - slack
    assert gap <= 1e-4 * max(1.0, objective)


@pytest.mark.parametrize("intercept", [True, False])
def test_llw_dual_backend_linear_fits_and_predicts(intercept):
    """``LeeLinWahbaSVC(backend='dual')`` with the linear kernel: the interior-point weights as
    ``coef_`` and ``intercept_`` (each summing to zero over the classes), certified, and
    ``predict`` the argmax of ``decision_function``."""
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    model = bl.LeeLinWahbaSVC(C=1.0, fit_intercept=intercept, backend="dual").fit(X, names)
    assert model.coef_.shape == (3, 4) and model.intercept_.shape == (3,)
    assert model.dual_coef_ is None and model.program_ is None and model.n_iter_ > 0
    np.testing.assert_allclose(model.coef_.sum(axis=0), 0.0, atol=1e-10)
    np.testing.assert_allclose(model.intercept_.sum(), 0.0, atol=1e-10)
    if not intercept:
        assert np.all(model.intercept_ == 0.0)
    assert 0.0 <= model.gap_ <= bl.DUAL_TOL * max(1.0, model.objective_)
    primal = _llw_primal(X, y, np.ones(y.size), model.coef_.T, model.intercept_)
    np.testing.assert_allclose(model.objective_, primal, rtol=1e-12)
    F = model.decision_function(X)
    np.testing.assert_allclose(F, X @ model.coef_.T + model.intercept_)
    np.testing.assert_array_equal(model.predict(X), model.classes_[np.argmax(F, axis=1)])
    assert np.mean(model.predict(X) == names) > 0.7  # LLW on iris: about 79% (Table 2)


def test_llw_dual_backend_reports_an_uncertified_stop(monkeypatch):
    """A step budget too small for the tolerance is an error, never a silent answer."""
    X, y = load_iris(return_X_y=True)
    original = bl.fit_llw_linear
    monkeypatch.setattr(bl, "fit_llw_linear", lambda *a, **kw: original(*a, **kw, max_steps=1))
    with pytest.raises(bl.SolverError, match="interior-point method stopped at the relative gap"):
        bl.LeeLinWahbaSVC(C=100.0, backend="dual").fit(X, y)


DUAL_WEIGHT_REASON = (
    "backend='dual' stops at the certified relative gap DUAL_TOL = 1e-4: the weighted and the "
    "repeated fit are two points within it of the same optimum, not equal to the check's 1e-7 "
    "(with DUAL_TOL = 1e-11 the check passes)."
)


def test_llw_dual_backend_linear_check_estimator(conforms):
    """The linear ``backend='dual'`` path (the interior-point method) follows scikit-learn's
    conventions, but for the exact sample-weight equivalence its tolerance does not give."""
    conforms(
        bl.LeeLinWahbaSVC(backend="dual"),
        {"check_sample_weight_equivalence_on_dense_data": DUAL_WEIGHT_REASON},
    )


def test_convergence_vocabulary():
    """The QP backends are exact programs ('optimal'); the dual solvers certify their gap, and
    libsvm's multipliers give one too: the QP's optimum lies between the bound and the value."""
    X, y = standardised_iris()
    exact = bl.OneVsAllAbstain().fit(X, y)
    assert (exact.gap_, exact.converged_) == (0.0, "optimal")
    for backend in ("dual", "libsvm"):
        model = bl.OneVsAllAbstain(backend=backend).fit(X, y)
        assert model.converged_ == "certified", model.stop_reason_
        assert model.objective_ - model.gap_ <= exact.objective_ * (1 + 1e-6)
        assert model.objective_ >= exact.objective_ * (1 - 1e-6)
    dual = bl.WestonWatkinsSVC(backend="dual").fit(X, y)
    assert dual.converged_ == "certified" and "epochs" in dual.stop_reason_
