"""AdversarialClassifier: scikit-learn conformance, exactness of the compiled solver, bad input."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris, load_wine
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

import advgame as ag
from advgame import datasets, solvers
from advgame.models.classifier import AdversarialClassifier

ABSTAIN_REASON = (
    "predict abstains (returns abstain_label) where the potentials' argmax names a class: the "
    "minimax predictor of Fathony et al. (2018a), Corollary 14, abstains when "
    "f_(1) - f_(2) < 1/2, while this check expects predict == argmax decision_function."
)


@pytest.mark.parametrize(
    "estimator, expected_failed",
    [
        (ag.AdversarialClassifier(), {}),
        (ag.AdversarialClassifier(solver="compile"), {}),
        pytest.param(ag.AdversarialClassifier(solver="lbfgs"), {}, marks=pytest.mark.slow),  # 5 s
        pytest.param(  # 10 s
            ag.AdversarialClassifier(uncertainty="linf", strength=0.01), {}, marks=pytest.mark.slow
        ),
        (ag.AdversarialClassifier(kernel="rbf", gamma=0.5), {}),
        (
            ag.AdversarialClassifier(loss="abstain", alpha=0.3),
            {"check_classifiers_train": ABSTAIN_REASON},
        ),
    ],
    ids=repr,
)
def test_check_estimator(estimator, expected_failed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(estimator, expected_failed_checks=expected_failed)


@pytest.mark.parametrize("uncertainty", ["soft", "linf"])
def test_sample_weights_are_repeated_rows(uncertainty):
    """Integer weights (zeros included) and repeated rows, in any order, are one learning
    problem and one computation: the certified fits are identical, and both are within their
    certified gap of the exact optimum of the compiled program."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = rng.integers(0, 3, 60)
    w = rng.integers(0, 4, 60)
    params = {"uncertainty": uncertainty, "strength": None if uncertainty == "soft" else 0.01}
    params["solver"] = "smoothing"  # auto compiles the linf ball of this size
    weighted = ag.AdversarialClassifier(**params).fit(X, y, sample_weight=w)
    shuffle = rng.permutation(int(w.sum()))
    repeated = ag.AdversarialClassifier(**params).fit(
        np.repeat(X, w, 0)[shuffle], np.repeat(y, w)[shuffle]
    )
    assert weighted.solver_ == repeated.solver_ == "smoothing"
    assert weighted.converged_ == repeated.converged_ == "certified"
    np.testing.assert_array_equal(weighted.theta_, repeated.theta_)
    exact = ag.AdversarialClassifier(**{**params, "solver": "compile"}).fit(X, y, sample_weight=w)
    assert exact.converged_ == "optimal"
    assert exact.objective_ - 1e-7 <= weighted.objective_ <= exact.objective_ + weighted.gap_


def test_distinct_rows_is_the_weighted_empirical_distribution():
    """distinct_rows against a dictionary count of the rows: each distinct (x, y) once with
    its total weight, zero weights dropped; the same output for any order of the rows."""
    from advgame._estimator.inputs import distinct_rows
    from advgame._validation import weight_unit

    rng = np.random.default_rng(3)
    base = rng.integers(0, 3, size=(12, 2)).astype(float)  # few values: many repeats
    rows = rng.integers(0, 12, 200)
    X, y = base[rows], rng.integers(0, 2, 200)
    w = rng.integers(0, 3, 200).astype(float)
    expected = {}
    for x, label, weight in zip(X.tolist(), y.tolist(), w.tolist()):
        key = (*x, label)
        expected[key] = expected.get(key, 0.0) + weight
    expected = {key: weight for key, weight in expected.items() if weight > 0}
    Xd, yd, wd = distinct_rows(X, y, w)
    assert len(wd) == len(expected) and np.all(wd > 0)
    unit = weight_unit(w)  # the weights come back relative to it (exactly: a power of two)
    assert {
        (*x, label): weight * unit for x, label, weight in zip(Xd.tolist(), yd.tolist(), wd)
    } == (expected)
    order = rng.permutation(200)
    for a, b in zip(distinct_rows(X[order], y[order], w[order]), (Xd, yd, wd)):
        np.testing.assert_array_equal(a, b)


def test_compiled_program_is_built_from_the_distinct_rows():
    """solver='compile' compiles the canonical form of the weighted rows (iris repeats a row):
    weights and repeats give one program, whose optimum is that of the rows as given
    (``game_.compile(X, y)``); zero weights that empty a class keep the rows as given."""
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    model = ag.AdversarialClassifier(solver="compile", strength=0.01).fit(X, y)
    as_given = model.game_.compile(X, y).solve("cvxpy")
    assert model.objective_ == pytest.approx(as_given.objective, abs=1e-8)
    n_distinct = len(np.unique(np.column_stack([X, y]), axis=0))
    assert n_distinct < len(y)
    assert model.program_.describe() != model.game_.compile(X, y).describe()
    weights = np.ones(len(y))
    weights[::3] = 2.0
    repeated = np.r_[np.arange(len(y)), np.arange(len(y))[::3]]
    weighted = ag.AdversarialClassifier(solver="compile", strength=0.01)
    weighted.fit(X, y, sample_weight=weights)
    twice = ag.AdversarialClassifier(solver="compile", strength=0.01).fit(X[repeated], y[repeated])
    assert weighted.program_.describe() == twice.program_.describe()
    np.testing.assert_array_equal(weighted.theta_, twice.theta_)
    emptied = ag.AdversarialClassifier(solver="compile", strength=0.01)
    emptied.fit(X, y, sample_weight=np.where(y == 2, 0.0, 1.0))
    assert emptied.classes_.tolist() == [0, 1, 2] and emptied.converged_ == "optimal"


def test_row_hash_is_its_definition_entry_by_entry():
    """The vectorised row hash against the definition computed one entry at a time with
    Python integers mod 2^64 (struct for the bits): -0.0 hashes as 0.0, the label as its
    float64, blocks of any size give the same keys."""
    import struct

    from advgame._estimator.inputs import _ROW_HASH_SEED, _row_hash

    def fold(v):
        return ((v ^ (v >> 32)) * 0xBF58476D1CE4E5B9) % 2**64

    def bits(x):
        return struct.unpack("<Q", struct.pack("<d", x + 0.0))[0]

    rng = np.random.default_rng(5)
    X = rng.standard_normal((7, 4)) * 10.0 ** rng.integers(-300, 300, (7, 4))
    X[0, :2] = -0.0, 0.0
    y = rng.integers(0, 3, 7)
    mix = np.random.default_rng(_ROW_HASH_SEED).integers(1, 2**63, size=5, dtype=np.uint64)
    mix = [int(m) | 1 for m in mix]
    expected = [
        sum(fold(bits(v)) * m for v, m in zip([*x, float(label)], mix)) % 2**64
        for x, label in zip(X.tolist(), y.tolist())
    ]
    for block in (1, 5, 1 << 20):
        assert _row_hash(X, y, block=block).tolist() == expected
    signed_zeros = np.array([[-0.0, 0.0, -0.0], [0.0, 0.0, 0.0]])
    key = _row_hash(signed_zeros, np.zeros(2, int))
    assert key[0] == key[1]


def test_distinct_rows_survives_hash_collisions(monkeypatch):
    """With every row hashing alike (collisions everywhere) distinct_rows still keeps each
    row's total weight, merges no two different rows and orders by label within a hash."""
    from advgame._estimator import inputs

    rng = np.random.default_rng(4)
    X, y = rng.integers(0, 2, size=(40, 2)).astype(float), rng.integers(0, 3, 40)
    w = np.ones(40)
    expected = {}
    for x, label in zip(X.tolist(), y.tolist()):
        expected[(*x, label)] = expected.get((*x, label), 0.0) + 1.0
    monkeypatch.setattr(inputs, "_row_hash", lambda X, labels: np.zeros(len(X), np.uint64))
    Xd, yd, wd = inputs.distinct_rows(X, y, w)
    assert np.all(np.diff(yd) >= 0)  # one hash: the label orders
    counts = {}
    for x, label, weight in zip(Xd.tolist(), yd.tolist(), wd):
        counts[(*x, label)] = counts.get((*x, label), 0.0) + weight
    # equal hash and label but different x are compared, not merged: copies of a row may stay
    # apart only when another row lies between them (the objective is the same either way)
    assert counts == expected


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def recomputed_objective(clf, X, y):
    F = clf.feature_map_.bind(X).forward(clf.theta_)
    index = np.searchsorted(clf.classes_, y)
    return clf.game_.game().surrogate(F, index).mean() + clf.uncertainty_.penalty(
        clf.theta_, clf.feature_map_
    )


def _agreement_data(name):
    if name == "iris":
        X, y = load_iris(return_X_y=True)
    elif name == "wine":
        X, y = load_wine(return_X_y=True)
    else:
        data = ag.datasets.load("multiclass/vehicle")
        X, y = data.X, data.y
    return StandardScaler().fit_transform(X), y


AGREEMENT_LOSSES = {
    "zero_one": {"loss": "zero_one"},
    "ordinal": {"loss": "ordinal"},
    "squared": {"loss": "squared"},
    "abstain_0.3": {"loss": "abstain", "alpha": 0.3},
    "abstain_0.5": {"loss": "abstain", "alpha": 0.5},
    "cost_sensitive": {},  # a random k x k matrix, drawn per dataset
}
LP_SETS = ("exact", "l1", "linf")


@pytest.mark.parametrize(
    "dataset",
    ["iris", "wine", pytest.param("vehicle", marks=pytest.mark.slow)],  # 846 rows
)
@pytest.mark.parametrize("loss", list(AGREEMENT_LOSSES))
@pytest.mark.parametrize("uncertainty", ["soft", "l1", "l2", "linf", "group", "exact"])
def test_compiled_and_fast_solvers_reach_the_same_optimum(dataset, loss, uncertainty):
    """The issue's agreement matrix: compiled program vs certified L-BFGS to 1e-4 relative,
    and, for the LP sets, the HiGHS and cvxpy backends against each other."""
    X, y = _agreement_data(dataset)
    params = {"uncertainty": uncertainty, **AGREEMENT_LOSSES[loss]}
    if loss == "cost_sensitive":
        k = np.unique(y).size
        params["loss"] = np.random.default_rng(7).uniform(0.2, 2.0, (k, k)) * (1 - np.eye(k))
    if uncertainty != "soft":
        params["strength"] = 0.01
    if loss in ("ordinal", "squared") and y.dtype.kind not in "iu":
        # vehicle's classes are names: an ordinal loss needs their order (any fixed one will do)
        params["classes_order"] = np.unique(y)
    exact = ag.AdversarialClassifier(solver="compile", **params).fit(X, y)
    assert abs(recomputed_objective(exact, X, y) - exact.objective_) <= 1e-7 * max(
        1.0, exact.objective_
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a refinement stopped by max_rounds still reports gap_
        fast = ag.AdversarialClassifier(solver="lbfgs", certify=True, tol=1e-6, **params).fit(X, y)
    assert abs(fast.objective_ - exact.objective_) <= 1e-4 * max(exact.objective_, 1e-3)
    assert np.isfinite(fast.gap_)
    assert exact.objective_ >= fast.objective_ - fast.gap_ - 1e-7  # the certificate holds
    if uncertainty in LP_SETS:
        assert exact.program_.kind == "LP"
        other = ag.AdversarialClassifier(solver="compile", backend="cvxpy", **params).fit(X, y)
        assert abs(other.objective_ - exact.objective_) <= 1e-6 * max(1.0, exact.objective_)


def test_pipeline_gridsearch_pandas_and_string_labels():
    X, y = load_wine(return_X_y=True, as_frame=True)
    names = np.array(["barolo", "grignolino", "barbera"])[y.to_numpy()]
    pipe = make_pipeline(StandardScaler(), ag.AdversarialClassifier())
    search = GridSearchCV(pipe, {"adversarialclassifier__strength": [1e-3, 1e-1]}, cv=3)
    search.fit(pd.DataFrame(X), pd.Series(names))
    assert search.best_score_ > 0.9
    assert set(search.predict(X)) <= set(names)


def test_sample_weight_equals_duplication(iris):
    X, y = iris
    w = np.ones(len(y))
    w[::3] = 2.0
    weighted = ag.AdversarialClassifier(tol=1e-8).fit(X, y, sample_weight=w)
    duplicated = ag.AdversarialClassifier(tol=1e-8)
    duplicated.fit(np.vstack([X, X[::3]]), np.concatenate([y, y[::3]]))
    # J is lam-strongly convex, so a certified gap bounds the distance to the one optimum:
    # lam/2 ||theta - theta*||^2 <= J(theta) - J* <= gap_
    lam = weighted.uncertainty_.lam
    assert lam == duplicated.uncertainty_.lam
    radius = np.sqrt(2 * weighted.gap_ / lam) + np.sqrt(2 * duplicated.gap_ / lam)
    assert np.linalg.norm(weighted.theta_ - duplicated.theta_) <= radius


def test_abstain_predictions_follow_corollary_14(iris):
    X, y = iris
    clf = ag.AdversarialClassifier(loss="abstain", alpha=0.3, abstain_label=-7).fit(X, y)
    F = clf._potentials(X)
    top = np.sort(F, axis=1)
    abstains = top[:, -1] - top[:, -2] < 0.5
    predicted = clf.predict(X)
    assert np.array_equal(predicted == -7, abstains)
    assert clf.predict_action_proba(X).shape == (len(y), 4)
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)


@pytest.mark.parametrize("abstain_label", [None, "abstain", "?"])
def test_abstentions_keep_their_label_with_string_classes(iris, abstain_label):
    X, y = iris
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    numeric = ag.AdversarialClassifier(loss="abstain", alpha=0.3, abstain_label=-1).fit(X, y)
    clf = ag.AdversarialClassifier(loss="abstain", alpha=0.3, abstain_label=abstain_label)
    predicted = clf.fit(X, names).predict(X)
    abstains = numeric.predict(X) == -1
    assert abstains.any()
    # a string label for string classes (None: 'abstain'), in one string dtype
    assert clf.abstain_label_ == (abstain_label or "abstain") and predicted.dtype.kind == "U"
    assert np.array_equal(predicted == clf.abstain_label_, abstains)
    # the rows it answers, as the numeric fit answers them (the same canonical computation)
    answered = numeric.predict(X)[~abstains].astype(int)
    assert np.array_equal(
        predicted[~abstains], np.array(["setosa", "versicolor", "virginica"])[answered]
    )
    assert clf.score(X, names) == pytest.approx(np.mean(predicted == names))  # abstaining = wrong


def test_ordinal_uses_class_order_and_thresholded_features():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    score = X @ np.array([2.0, -1.0])
    y = np.digitize(score, [-1.5, 0.0, 1.5]) * 10  # labels 0, 10, 20, 30 in ordinal order
    clf = ag.AdversarialClassifier(loss="ordinal", features="thresholded").fit(X, y)
    assert list(clf.classes_) == [0, 10, 20, 30]
    assert np.mean(np.abs(clf.predict(X) - y)) / 10 < 0.3


@pytest.mark.parametrize(
    "params, fit_args, match",
    [
        ({}, (np.array([[np.nan, 1.0], [0.0, 1.0]]), [0, 1]), "NaN"),
        ({}, (np.zeros((4, 2)), [1, 1, 1, 1]), "2 classes"),
        ({"loss": np.ones((3, 3)) - np.eye(3)}, (np.zeros((4, 2)), [0, 1, 0, 1]), "label columns"),
        ({"loss": "hinge"}, (np.zeros((4, 2)), [0, 1, 0, 1]), "loss must be"),
        ({"kernel": "rbf", "gamma": -1.0}, (np.zeros((4, 2)), [0, 1, 0, 1]), "gamma"),
        ({"solver": "newton"}, (np.zeros((4, 2)), [0, 1, 0, 1]), "solver"),
        ({"uncertainty": "box"}, (np.zeros((4, 2)), [0, 1, 0, 1]), "uncertainty"),
        ({"features": "polar"}, (np.zeros((4, 2)), [0, 1, 0, 1]), "features"),
        ({"max_iter": 0}, (np.zeros((4, 2)), [0, 1, 0, 1]), "max_iter"),
    ],
)
def test_bad_input(params, fit_args, match):
    with pytest.raises(ValueError, match=match):
        ag.AdversarialClassifier(**params).fit(*fit_args)


@pytest.mark.slow  # thousands of epochs (about 6 s)
def test_subgradient_and_pegasos_approach_and_certify_the_optimum(iris):
    X, y = iris
    lam = 1 / len(y)  # the solvers' behaviour at the scale of C = 1
    exact = ag.AdversarialClassifier(strength=lam, solver="compile").fit(X, y)
    rough = ag.AdversarialClassifier(
        strength=lam, solver="subgradient", max_iter=50, certify=False, random_state=0
    )
    rough.fit(X, y)
    assert exact.objective_ - 1e-9 <= rough.objective_ <= 1.2 * exact.objective_
    assert rough.gap_ == np.inf and rough.converged_ == "uncertified"
    assert rough.stop_reason_.startswith("uncertified")
    # the cutting planes stop once the certified gap is below tol * max(1, |J|): ask for 1e-8
    certified = ag.AdversarialClassifier(
        strength=lam, solver="subgradient", max_iter=50, random_state=0, tol=1e-8
    ).fit(X, y)
    assert certified.converged_ == "certified" and certified.gap_ <= 1e-8
    assert abs(certified.objective_ - exact.objective_) <= 1e-6 * exact.objective_

    kernel = {"kernel": "rbf", "gamma": 0.5}
    optimum = (
        ag.AdversarialClassifier(strength=lam, solver="compile", **kernel).fit(X, y).objective_
    )
    gaps = []
    for epochs in (5, 50, 400):
        model = ag.AdversarialClassifier(
            strength=lam, solver="pegasos", max_iter=epochs, certify=False, random_state=0, **kernel
        ).fit(X, y)
        gaps.append(model.objective_ - optimum)
    assert gaps[0] > gaps[1] > gaps[2] >= -1e-9 and gaps[2] <= 1e-2 * optimum
    same = ag.AdversarialClassifier(
        strength=lam, solver="pegasos", max_iter=50, certify=False, random_state=0, **kernel
    )
    np.testing.assert_array_equal(same.fit(X, y).theta_, same.fit(X, y).theta_)  # reproducible
    certified = ag.AdversarialClassifier(
        strength=lam, solver="pegasos", max_iter=20, random_state=0, tol=1e-8, **kernel
    ).fit(X, y)
    assert abs(certified.objective_ - optimum) <= 1e-6 * optimum


def test_pegasos_needs_a_kernel_and_soft_moments(iris):
    X, y = iris
    with pytest.raises(ValueError, match="Algorithm 1"):
        ag.AdversarialClassifier(solver="pegasos").fit(X, y)
    with pytest.raises(ValueError, match="Algorithm 1"):
        ag.AdversarialClassifier(solver="pegasos", kernel="rbf", uncertainty="l2").fit(X, y)
    with pytest.raises(ValueError, match="batch_size"):
        ag.AdversarialClassifier(solver="subgradient", batch_size=0).fit(X, y)


def test_lbfgs_leaves_the_kink_at_zero():
    """Uncertified L-BFGS on the abstain surrogate: at theta = 0 every potential ties and the
    game's subgradient is not a descent direction, so L-BFGS-B alone stops after 0 iterations
    (and would abstain on everything).  The AdaGrad restart reaches the certified objective."""
    data = datasets.load("multiclass/vehicle")
    X, y = StandardScaler().fit_transform(data.X), data.y
    options = {"loss": "abstain", "alpha": 0.5, "solver": "lbfgs", "random_state": 0, "tol": 1e-6}
    plain = AdversarialClassifier(**options, certify=False).fit(X, y)
    certified = AdversarialClassifier(**options, certify=True).fit(X, y)
    assert certified.converged_ == "certified"
    assert plain.n_iter_ > solvers.KINK_EPOCHS
    assert np.any(plain.theta_ != 0.0)
    assert plain.objective_ <= certified.objective_ * 1.02
    assert np.mean(plain.predict(X) == -1) < 0.5


def test_named_loss_matrix_declares_the_classes_and_their_order():
    """A LossMatrix with labels= gives classes_ its label order: the same game relabelled, so
    the exact fit is the sorted one with its classes permuted."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 2))
    y = np.array(["a", "b", "c"])[np.argmax(X @ rng.normal(size=(2, 3)), axis=1)]
    M = np.array([[0.0, 1.0, 4.0], [2.0, 0.0, 1.0], [3.0, 5.0, 0.0]])  # rows/columns a, b, c
    reference = ag.AdversarialClassifier(loss=M, solver="compile").fit(X, y)
    order = [2, 0, 1]  # the same matrix, written in the order c, a, b
    named = ag.LossMatrix(M[np.ix_(order, order)], labels=["c", "a", "b"])
    clf = ag.AdversarialClassifier(loss=named, solver="compile").fit(X, y)
    assert clf.classes_.tolist() == ["c", "a", "b"]
    np.testing.assert_array_equal(clf.loss_matrix_.matrix, M[np.ix_(order, order)])
    np.testing.assert_allclose(clf.coef_, reference.coef_[order], atol=1e-6)
    np.testing.assert_allclose(
        clf.predict_proba(X), reference.predict_proba(X)[:, order], atol=1e-6
    )
    np.testing.assert_array_equal(clf.predict(X), reference.predict(X))
    display = ag.LossMatrix(M, labels=["low", "mid", "high"])  # names only: sorted class order
    np.testing.assert_array_equal(
        ag.AdversarialClassifier(loss=display).fit(X, y).theta_,
        ag.AdversarialClassifier(loss=M).fit(X, y).theta_,
    )
    with pytest.raises(ValueError, match=r"y holds the labels \['c'\], which the loss matrix"):
        ag.AdversarialClassifier(loss=ag.LossMatrix(M, labels=["x", "a", "b"])).fit(X, y)


def test_auto_states_its_rule():
    """solver='auto' records which branch of the measured rule applied (solver_reason_), and
    the declaration's explain() states the whole rule."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 12)), np.arange(30) % 3  # 90 game rows, 39 parameters
    ball = ag.AdversarialClassifier(uncertainty="l1", strength=0.1).fit(X, y)
    assert ball.solver_ == "compile" and ball.solver_reason_.startswith("compile: NormBall")
    many_rows = ag.AdversarialClassifier(uncertainty="l1", strength=0.1).fit(X[:, :3], y)
    assert many_rows.solver_ == "lbfgs" and "game rows per parameter" in many_rows.solver_reason_
    soft = ag.AdversarialClassifier().fit(X, y)
    assert soft.solver_reason_.startswith(f"{soft.solver_}:")
    given = ag.AdversarialClassifier(solver="lbfgs").fit(X, y)
    assert given.solver_reason_ == "lbfgs: given by solver='lbfgs'"
    assert "advgame bench auto" in ag.PredictionGame("zero_one", uncertainty="l1").explain()
