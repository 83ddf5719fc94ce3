"""AdversarialMatching: exactness of the compiled QP, the subgradient solver, conventions, input."""

import dataclasses
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

import advgame as ag
from advgame.metrics import permutation_hamming_loss
from advgame.models import matching
from advgame.models.matching import MatchingObjective

#: Relative agreement of the compiled optimum with independent recomputations.
OBJECTIVE_RTOL = 1e-6
#: How close (relative) averaged AdaGrad must get to the compiled optimum on iris.
SUBGRADIENT_RTOL = 0.02
#: Slack allowed below the optimum when perturbing it (solver tolerance).
PERTURBATION_SLACK = 1e-7

ONE_D_TARGET_REASON = (
    "the check fits on 1-D class labels; this estimator's target is a full ranking per sample "
    "(R of shape (n_samples, n_labels), each row a permutation of 1..n_labels), so fit refuses "
    "it with a ValueError."
)
#: The checks that fail only because they feed 1-D class labels instead of rankings.
ONE_D_TARGET_CHECKS = dict.fromkeys(
    [
        "check_all_zero_sample_weights_error",
        "check_dict_unchanged",
        "check_dont_overwrite_parameters",
        "check_dtype_object",
        "check_estimators_dtypes",
        "check_estimators_fit_returns_self",
        "check_estimators_nan_inf",
        "check_estimators_overwrite_params",
        "check_estimators_pickle",
        "check_f_contiguous_array_estimator",
        "check_fit2d_1feature",
        "check_fit2d_1sample",
        "check_fit2d_predict1d",
        "check_fit_check_is_fitted",
        "check_fit_idempotent",
        "check_fit_score_takes_y",
        "check_methods_sample_order_invariance",
        "check_methods_subset_invariance",
        "check_n_features_in",
        "check_n_features_in_after_fitting",
        "check_pipeline_consistency",
        "check_positive_only_tag_during_fit",
        "check_readonly_memmap_input",
        "check_sample_weights_list",
        "check_sample_weights_not_an_array",
        "check_sample_weights_not_overwritten",
        "check_sample_weights_pandas_series",
        "check_sample_weights_shape",
        "check_sample_weight_equivalence_on_dense_data",
    ],
    ONE_D_TARGET_REASON,
)


def _iris(standardise=True):
    data = ag.datasets.load("label_ranking/iris")
    X = StandardScaler().fit_transform(data.X) if standardise else data.X
    return X, data.y


def _noisy(n=40, d=3, k=3, seed=0):
    """Features with random rankings: nothing is separable, so the LP optimum is positive."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), np.argsort(rng.random((n, k)), axis=1) + 1


def _recomputed(model, X, R, sample_weight=None, coef=None, intercept=None):
    """``sum_i w_i surrogate(Θ_i, R_i) + strength/2 ||W||^2`` from PermutationGame, not the fit."""
    W = model.coef_ if coef is None else coef
    b = model.intercept_ if intercept is None else intercept
    k = R.shape[1]
    w = np.ones(len(X)) if sample_weight is None else np.asarray(sample_weight, float)
    T = (X @ W + b).reshape(-1, k, k)
    loss = ag.PermutationGame(k).surrogate(T, R)
    return float(w @ loss / w.sum()) + 0.5 * model.strength * float(np.sum(W * W))


# ------------------------------------------------------------------------------ exactness
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_compiled_objective_equals_recomputed(fit_intercept, weighted):
    X, R = _iris()
    w = np.random.default_rng(1).uniform(0.2, 2.0, len(X)) if weighted else None
    model = ag.AdversarialMatching(fit_intercept=fit_intercept).fit(X, R, sample_weight=w)
    assert model.solver_ == "compile" and model.program_.kind == "QP"
    assert model.objective_ == pytest.approx(_recomputed(model, X, R, w), rel=OBJECTIVE_RTOL)
    if not fit_intercept:
        np.testing.assert_array_equal(model.intercept_, 0.0)


def test_program_is_the_training_objective():
    """The program's optimum has no constant offset, and cvxpy re-solves it to the same value."""
    X, R = _noisy()
    model = ag.AdversarialMatching(strength=0.1).fit(X, R)
    problem = model.program_.to_cvxpy()
    problem.solve()
    assert problem.value == pytest.approx(model.objective_, rel=1e-5)
    assert set(model.program_.variables) == {"W", "b", "predictor", "a", "c"}


def test_backends_agree_on_the_lp():
    X, R = _noisy()
    objectives = [
        ag.AdversarialMatching(strength=0.0, backend=backend).fit(X, R).objective_
        for backend in ("highs", "cvxpy")
    ]
    assert objectives[0] > 0.1  # a non-trivial optimum
    assert objectives[0] == pytest.approx(objectives[1], rel=OBJECTIVE_RTOL)
    model = ag.AdversarialMatching(strength=0.0).fit(X, R)
    assert model.program_.kind == "LP"
    assert model.objective_ == pytest.approx(_recomputed(model, X, R), rel=OBJECTIVE_RTOL)


def test_highs_refuses_the_qp():
    X, R = _noisy()
    with pytest.raises(ag.NotApplicableError, match="backend='highs'"):
        ag.AdversarialMatching(backend="highs").fit(X, R)


def test_inaccurate_solution_raises(monkeypatch):
    X, R = _noisy()
    solve = ag.compile.Program.solve

    def inaccurate(program, backend, **options):
        return dataclasses.replace(solve(program, backend, **options), status="optimal_inaccurate")

    monkeypatch.setattr(ag.compile.Program, "solve", inaccurate)
    with pytest.raises(ag.SolverError, match="optimal_inaccurate"):
        ag.AdversarialMatching().fit(X, R)


def test_perturbations_never_lower_the_objective():
    """Convexity + optimality, checked without the solver: J(optimum + t d) >= J(optimum)."""
    X, R = _noisy(n=30)
    model = ag.AdversarialMatching(strength=0.05).fit(X, R)
    best = _recomputed(model, X, R)
    rng = np.random.default_rng(2)
    for _ in range(10):
        dW, db = rng.normal(size=model.coef_.shape), rng.normal(size=model.intercept_.shape)
        for step in (1e-3, 1e-1):
            moved = _recomputed(
                model, X, R, coef=model.coef_ + step * dW, intercept=model.intercept_ + step * db
            )
            assert moved >= best - PERTURBATION_SLACK


@pytest.mark.slow  # thousands of subgradient epochs (about 12 s)
def test_subgradient_reaches_the_compiled_optimum():
    X, R = _iris()
    exact = ag.AdversarialMatching(solver="compile").fit(X, R).objective_
    model = ag.AdversarialMatching(solver="subgradient", random_state=0).fit(X, R)
    assert model.program_ is None and model.n_iter_ > 0
    assert model.objective_ == pytest.approx(_recomputed(model, X, R), rel=OBJECTIVE_RTOL)
    assert exact <= model.objective_ <= exact * (1 + SUBGRADIENT_RTOL)


def test_auto_switches_to_subgradient_beyond_the_size_limit(monkeypatch):
    X, R = _noisy(n=20)
    assert ag.AdversarialMatching().fit(X, R).solver_ == "compile"
    monkeypatch.setattr(matching, "AUTO_COMPILE_SIZE", 20 * 9 - 1)
    model = ag.AdversarialMatching(max_iter=2, random_state=0).fit(X, R)
    assert model.solver_ == "subgradient" and model.program_ is None


# ------------------------------------------------------------------------------ prediction
@pytest.mark.parametrize("decode", ["map", "predictor"])
def test_iris_beats_the_most_frequent_ranking(decode):
    X, R = _iris(standardise=False)
    X_train, X_test, R_train, R_test = train_test_split(X, R, test_size=0.3, random_state=0)
    scaler = StandardScaler().fit(X_train)
    model = ag.AdversarialMatching(decode=decode).fit(scaler.transform(X_train), R_train)
    predicted = model.predict(scaler.transform(X_test))
    assert predicted.shape == R_test.shape and predicted.dtype.kind == "i"
    np.testing.assert_array_equal(np.sort(predicted, axis=1), np.tile([1, 2, 3], (len(R_test), 1)))
    rankings, counts = np.unique(R_train, axis=0, return_counts=True)
    baseline = np.tile(rankings[counts.argmax()], (len(R_test), 1))
    loss = permutation_hamming_loss(R_test, predicted)
    assert loss < permutation_hamming_loss(R_test, baseline)
    assert model.score(scaler.transform(X_test), R_test) == pytest.approx(1 - loss)
    P = model.predict_matrix(scaler.transform(X_test))
    np.testing.assert_array_equal(P.argmax(axis=2) + 1, predicted)


def test_decision_scores_shape_and_map_decoding():
    X, R = _noisy()
    model = ag.AdversarialMatching().fit(X, R)
    T = model.decision_scores(X[:5])
    assert T.shape == (5, 3, 3)
    np.testing.assert_array_equal(model.predict(X[:5]), ag.PermutationGame(3).predict(T))


# --------------------------------------------------------------------------- conventions
def test_clone_get_params_and_pickle():
    X, R = _noisy()
    model = ag.AdversarialMatching(strength=0.1, decode="predictor")
    assert clone(model).get_params() == model.get_params()
    model.fit(X, R)
    before = model.predict(X)  # decode='predictor' solves the game LP: builds a HiGHS model
    assert model.permutation_game_._highs is not None
    blob = pickle.dumps(model)
    assert b"highspy" not in blob
    restored = pickle.loads(blob)
    assert restored.permutation_game_._highs is None
    np.testing.assert_array_equal(restored.predict(X), before)
    assert not hasattr(restored, "program_")  # the training data stay out of the pickle
    assert restored.game_.compile(X, R).describe() == model.program_.describe()


def _chain(exception):
    """The messages of an exception and of everything it was raised from."""
    messages = []
    while exception is not None:
        messages.append(str(exception))
        exception = exception.__cause__ or exception.__context__
    return " | ".join(messages)


@pytest.mark.parametrize("estimator", [ag.AdversarialMatching(), ag.LabelRanker()], ids=repr)
def test_check_estimator(estimator):
    """The listed checks fail, each on the 1-D target; no other check fails."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(
            estimator, expected_failed_checks=ONE_D_TARGET_CHECKS, on_fail=None
        )
    status = {r["check_name"]: r["status"] for r in results}
    assert not [name for name, s in status.items() if s == "failed"]
    assert all(status[name] == "xfail" for name in ONE_D_TARGET_CHECKS)
    for result in results:
        if result["status"] == "xfail":
            assert "2-D array of ranks" in _chain(result["exception"]), result["check_name"]


# ------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "params, match",
    [
        ({"strength": -1.0}, "strength"),
        ({"strength": np.nan}, "strength"),
        ({"alpha": -1.0}, "alpha"),
        ({"solver": "lbfgs"}, "solver"),
        ({"backend": "gurobi"}, "backend"),
        ({"decode": "argmax"}, "decode"),
        ({"max_iter": 0}, "max_iter"),
        ({"batch_size": 1.5}, "batch_size"),
        ({"learning_rate": 0.0}, "learning_rate"),
        ({"tol": -1e-3}, "tol"),
    ],
)
def test_bad_parameters(params, match):
    X, R = _noisy(n=10)
    with pytest.raises(ValueError, match=match):
        ag.AdversarialMatching(**params).fit(X, R)


def test_bad_input():
    X, R = _noisy(n=10)
    model = ag.AdversarialMatching()
    ties = R.copy()
    ties[3] = [1, 1, 2]
    with pytest.raises(ValueError, match="permutation of 1..3"):
        model.fit(X, ties)
    with pytest.raises(ValueError, match="9 rows but X has 10"):
        model.fit(X, R[:9])
    with pytest.raises(ValueError, match="2-D array of ranks"):
        model.fit(X, R[:, 0])
    with pytest.raises(ValueError, match="requires y to be passed"):
        model.fit(X, None)
    nan = X.copy()
    nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        model.fit(nan, R)
    model.fit(X, R)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :2])
    with pytest.raises(ValueError, match="fitted on 3"):
        model.score(X, np.tile([1, 2, 3, 4], (10, 1)))


# ------------------------------------------------------------------------ certified gap, names
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_gap_is_certified_against_the_exact_optimum(fit_intercept):
    """``gap_`` comes from a dual bound: tiny for the compiled QP, and for AdaGrad at least its
    true distance to the compiled optimum (the independent reference) yet finite."""
    X, R = _iris()
    params = {"strength": 0.1, "fit_intercept": fit_intercept}
    exact = ag.AdversarialMatching(solver="compile", **params).fit(X, R)
    assert exact.converged_ == "optimal"
    assert 0.0 <= exact.gap_ < 1e-6
    approx = ag.AdversarialMatching(
        solver="subgradient", max_iter=20, random_state=0, **params
    ).fit(X, R)
    assert approx.converged_ == "uncertified"
    assert approx.objective_ - exact.objective_ - 1e-8 <= approx.gap_ < np.inf
    objective = MatchingObjective(
        approx.permutation_game_, X, R, np.full(len(X), 1 / len(X)), 0.1, fit_intercept
    )
    bound = objective.dual_bound(objective.adversary(approx.coef_, approx.intercept_))
    assert bound <= exact.objective_ + 1e-8  # weak duality
    assert approx.gap_ == pytest.approx(approx.objective_ - bound)


def test_gap_without_a_penalty():
    """``strength=0`` has no dual bound: the LP's optimal status, or an uncertified AdaGrad."""
    X, R = _noisy()
    exact = ag.AdversarialMatching(strength=0.0).fit(X, R)
    assert (exact.converged_, exact.gap_) == ("optimal", 0.0)
    approx = ag.AdversarialMatching(strength=0.0, solver="subgradient", max_iter=2).fit(X, R)
    assert (approx.converged_, approx.gap_) == ("uncertified", np.inf)


def test_alpha_is_a_deprecated_name_of_strength():
    X, R = _noisy()
    new = ag.AdversarialMatching(strength=0.3).fit(X, R)
    with pytest.warns(FutureWarning, match="use strength="):
        old = ag.AdversarialMatching(alpha=0.3).fit(X, R)
    np.testing.assert_allclose(old.coef_, new.coef_, atol=1e-8)
    assert repr(old.game_.uncertainty) == repr(new.game_.uncertainty) == "SoftMoments(lam=0.3)"
