"""AdversarialClassifier labels (issue #23): abstention labels, class order for ordinal losses,
loss-matrix size and feature-scale limits, and scoring with the declared loss."""

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import advgame as ag
from advgame._validation import MAX_COMPILED_MAGNITUDE, MAX_FEATURE_MAGNITUDE
from advgame.losses import MAX_LABELS
from advgame.metrics import LossScorer, make_loss_scorer, mean_matrix_loss

ORDER = ["low", "mid", "high"]


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.fixture(scope="module")
def graded(iris):
    """Iris with string grades whose alphabetical order (high, low, mid) is not the order."""
    X, y = iris
    return X, np.array(ORDER)[y]


# ------------------------------------------------------------------- 1. abstain_label collision
def test_abstain_label_that_is_a_class_is_refused(iris):
    X, y = iris
    clf = ag.AdversarialClassifier(loss="abstain", alpha=0.1, abstain_label=0)
    with pytest.raises(ValueError, match=r"abstain_label=0 is one of the classes \[0, 1, 2\]"):
        clf.fit(X, y)
    ag.AdversarialClassifier(loss="abstain", alpha=0.1, abstain_label=3).fit(X, y)


def test_abstain_label_is_not_checked_without_an_abstain_action(iris):
    X, y = iris
    clf = ag.AdversarialClassifier(abstain_label=0).fit(X, y)  # zero-one: never abstains
    assert clf.abstain_label_ is None
    assert clf.predict(X).dtype == y.dtype


# -------------------------------------------------------- 2. the abstention label's type
def test_default_abstain_label_follows_the_classes_type(iris, graded):
    X, y = iris
    numeric = ag.AdversarialClassifier(loss="abstain", alpha=0.3, tol=1e-4).fit(X, y)
    assert numeric.abstain_label is None and numeric.abstain_label_ == -1
    predicted = numeric.predict(X)
    assert predicted.dtype == y.dtype and -1 in predicted

    X, names = graded
    clf = ag.AdversarialClassifier(loss="abstain", alpha=0.3, tol=1e-4).fit(X, names)
    assert clf.abstain_label_ == "abstain"
    predicted = clf.predict(X)
    assert predicted.dtype.kind == "U"
    abstains = numeric.predict(X) == -1
    np.testing.assert_array_equal(predicted == "abstain", abstains)
    # the reported failures: both raised TypeError on a mix of strings and -1
    assert set(np.unique(predicted)) == {"abstain", *ORDER}
    assert accuracy_score(names, predicted) == pytest.approx(clf.score(X, names))
    assert predicted[:0].dtype == clf.predict(X[:1]).dtype  # one dtype, abstaining or not


def test_float_classes_get_a_float_abstention(iris):
    X, y = iris
    predicted = ag.AdversarialClassifier(loss="abstain", alpha=0.3).fit(X, y + 0.0).predict(X)
    assert predicted.dtype == np.float64 and -1.0 in predicted


def test_abstain_label_of_another_type_gives_object_predictions(iris, graded):
    """abstain_label='refer' for numeric classes (and -1 for string classes) is allowed: the
    predictions mix types in an object array, which score() and the loss scorer read."""
    X, y = iris
    reference = ag.AdversarialClassifier(loss="abstain", alpha=0.3).fit(X, y)
    clf = ag.AdversarialClassifier(loss="abstain", alpha=0.3, abstain_label="refer").fit(X, y)
    predicted = clf.predict(X)
    assert clf.abstain_label_ == "refer" and predicted.dtype == object
    abstains = reference.predict(X) == -1
    assert abstains.any()
    np.testing.assert_array_equal(predicted == "refer", abstains)
    np.testing.assert_array_equal(predicted[~abstains].astype(int), reference.predict(X)[~abstains])
    assert clf.score(X, y) == pytest.approx(reference.score(X, y))
    assert make_loss_scorer()(clf, X, y) == pytest.approx(make_loss_scorer()(reference, X, y))
    X, names = graded
    mixed = ag.AdversarialClassifier(loss="abstain", alpha=0.3, abstain_label=-1).fit(X, names)
    assert mixed.predict(X).dtype == object and -1 in mixed.predict(X).tolist()
    with pytest.raises(ValueError, match="abstain_label must be None, a number or a string"):
        ag.AdversarialClassifier(loss="abstain", abstain_label=(1,)).fit(X, y)


def test_default_abstain_label_never_collides_with_a_class(iris):
    X, y = iris
    names = np.array(["abstain", "b", "c"])[y]
    with pytest.raises(ValueError, match=r"default abstain_label 'abstain' is one of the classes"):
        ag.AdversarialClassifier(loss="abstain").fit(X, names)
    clf = ag.AdversarialClassifier(loss="abstain", alpha=0.3, abstain_label="none").fit(X, names)
    assert clf.abstain_label_ == "none" and "none" in clf.predict(X)
    # numeric classes holding -1 (e.g. binary -1 / +1) abstain below the smallest class
    clf = ag.AdversarialClassifier(loss="abstain", alpha=0.3).fit(X, y - 1)
    assert clf.abstain_label_ == -2 and -2 in clf.predict(X)
    assert clf.predict(X).dtype == y.dtype


# ------------------------------------------------------------------ 3. the order of the classes
def test_ordinal_loss_with_string_labels_needs_an_order(graded):
    X, names = graded
    for params in ({"loss": "ordinal"}, {"loss": "squared"}, {"features": "thresholded"}):
        with pytest.raises(ValueError, match=r"needs the ordinal order of the classes.*"):
            ag.AdversarialClassifier(**params).fit(X, names)
    with pytest.raises(ValueError, match="an ordinal loss matrix needs the ordinal order"):
        ag.AdversarialClassifier(loss=ag.losses.ordinal(3).matrix).fit(X, names)
    # zero-one does not depend on the order; two classes are symmetric
    ag.AdversarialClassifier().fit(X, names)
    two = names != "mid"
    ag.AdversarialClassifier(loss="ordinal").fit(X[two], names[two])


def test_classes_order_fixes_the_ordinal_order(iris, graded):
    X, y = iris
    _, names = graded
    exact = {"loss": "ordinal", "solver": "compile"}  # the reference optimum, not a certified fit
    reference = ag.AdversarialClassifier(**exact).fit(X, y)
    clf = ag.AdversarialClassifier(**exact, classes_order=ORDER).fit(X, names)
    assert list(clf.classes_) == ORDER
    assert clf.loss_matrix_.structure.kind == "ordinal"
    np.testing.assert_allclose(clf.theta_, reference.theta_, atol=1e-8)
    np.testing.assert_array_equal(clf.predict(X), np.array(ORDER)[reference.predict(X)])
    # the first-order solver agrees (it indexes the classes directly)
    lbfgs = ag.AdversarialClassifier(loss="ordinal", classes_order=ORDER, solver="lbfgs")
    np.testing.assert_allclose(lbfgs.fit(X, names).objective_, reference.objective_, rtol=1e-6)


def test_classes_order_reorders_numeric_classes(iris):
    X, y = iris
    clf = ag.AdversarialClassifier(loss="ordinal", classes_order=[2, 1, 0]).fit(X, y)
    assert list(clf.classes_) == [2, 1, 0] and clf.classes_.dtype == y.dtype
    reference = ag.AdversarialClassifier(loss="ordinal").fit(X, y)
    assert clf.objective_ == pytest.approx(reference.objective_, rel=1e-6)
    assert np.mean(clf.predict(X) == y) == pytest.approx(np.mean(reference.predict(X) == y))


@pytest.mark.parametrize(
    "order, match",
    [
        (["low", "mid"], r"must list every class of y; missing \['high'\]"),
        (["low", "mid", "mid", "high"], "'mid' appears twice"),
        ("low", "at least 2 class labels"),
        ([["low", "mid"], ["high", "x"]], "1-D sequence"),
    ],
)
def test_bad_classes_order(graded, order, match):
    X, names = graded
    with pytest.raises(ValueError, match=match):
        ag.AdversarialClassifier(loss="ordinal", classes_order=order).fit(X, names)


def test_labels_of_classes_order_absent_from_y_are_skipped(graded):
    X, names = graded
    clf = ag.AdversarialClassifier(loss="ordinal", classes_order=["low", "x", "mid", "high"])
    assert list(clf.fit(X, names).classes_) == ORDER


def test_ordered_categorical_y_gives_the_order(iris, graded):
    pd = pytest.importorskip("pandas")
    X, y = iris
    _, names = graded
    reference = ag.AdversarialClassifier(loss="ordinal").fit(X, y)
    categories = ["low", "unused", "mid", "high"]
    ordered = pd.Categorical(names, categories=categories, ordered=True)
    for target in (ordered, pd.Series(ordered)):
        clf = ag.AdversarialClassifier(loss="ordinal").fit(X, target)
        assert list(clf.classes_) == ORDER
        np.testing.assert_allclose(clf.theta_, reference.theta_, atol=1e-8)
    unordered = pd.Categorical(names, categories=ORDER, ordered=False)
    with pytest.raises(ValueError, match="ordered pandas Categorical"):
        ag.AdversarialClassifier(loss="ordinal").fit(X, unordered)
    # an explicit classes_order wins over the categories
    clf = ag.AdversarialClassifier(loss="ordinal", classes_order=ORDER[::-1]).fit(X, ordered)
    assert list(clf.classes_) == ORDER[::-1]


def test_named_ordinal_loss_matrix_keeps_its_order_and_structure(iris, graded):
    X, y = iris
    _, names = graded
    L = ag.LossMatrix(ag.losses.ordinal(3).matrix, labels=ORDER)
    reference = ag.AdversarialClassifier(loss="ordinal").fit(X, y)
    clf = ag.AdversarialClassifier(loss=L).fit(X, names)
    assert list(clf.classes_) == ORDER
    assert clf.loss_matrix_.structure.kind == "ordinal"
    assert clf.game_.game().fast_path == ag.Game(ag.losses.ordinal(3)).fast_path
    np.testing.assert_allclose(clf.theta_, reference.theta_, atol=1e-8)


@pytest.mark.parametrize("make", [ag.losses.ordinal, ag.losses.squared, ag.losses.zero_one])
def test_recognition_does_not_depend_on_label_names(make):
    matrix = make(4).matrix
    kinds = {
        ag.LossMatrix(matrix, labels=labels).structure
        for labels in (None, ["d", "c", "b", "a"], ["low", "mid", "high", "top"], [3, 1, 2, 0])
    }
    assert kinds == {make(4).structure}


# ---------------------------------------------------------------------- 4. loss-matrix size
def test_loss_matrix_wider_than_max_labels_is_refused():
    assert MAX_LABELS == 4096
    with pytest.raises(ag.SizeLimitError, match=r"5,000 labels \(columns\), over MAX_LABELS=4,096"):
        ag.LossMatrix(np.ones((5000, 5000)))
    with pytest.raises(ag.SizeLimitError, match="MAX_LABELS=4,096"):
        ag.LossMatrix(np.ones((2, MAX_LABELS + 1)).tolist())  # a list is checked too
    assert ag.LossMatrix(np.ones((2, MAX_LABELS))).n_labels == MAX_LABELS


# -------------------------------------------------------------------------- 5. feature scale
@pytest.mark.parametrize("scale", [1e300, 1e30])
def test_huge_features_are_refused_with_advice(iris, scale):
    X, y = iris
    with pytest.raises(ValueError, match=r"X has features of magnitude up to .*Standardise"):
        ag.AdversarialClassifier().fit(X * scale, y)


def test_feature_scale_limit_and_predict(iris):
    """The first-order solvers take features up to MAX_FEATURE_MAGNITUDE; the compiled program,
    whose solvers lose the optimum far earlier, refuses beyond MAX_COMPILED_MAGNITUDE."""
    X, y = iris
    large = X / np.abs(X).max() * MAX_FEATURE_MAGNITUDE / 10
    clf = ag.AdversarialClassifier().fit(large, y)
    assert clf.predict(large).shape == y.shape
    with pytest.raises(ValueError, match=r"over the limit of 1e\+07.*Standardise"):
        ag.AdversarialClassifier(solver="compile").fit(X * 10 * MAX_COMPILED_MAGNITUDE, y)
    fitted = ag.AdversarialClassifier().fit(X, y)
    with pytest.raises(ValueError, match=r"over the limit of 1e\+20"):
        fitted.predict(X * 1e300)


# ------------------------------------------------------------------ 6. the declared loss
def test_mean_matrix_loss():
    L = ag.losses.abstain(3, alpha=0.2)
    assert mean_matrix_loss([0, 1, 2, 2], [0, -1, 1, 2], L, abstain_label=-1) == pytest.approx(0.3)
    assert mean_matrix_loss([0, 1], [0, "abstain"], L) == pytest.approx(0.1)
    ordinal = ag.losses.ordinal(3)
    assert mean_matrix_loss(["low", "high"], ["mid", "low"], ordinal, labels=ORDER) == 1.5
    weighted = mean_matrix_loss(["low", "high"], ["mid", "low"], ordinal, labels=ORDER,
                                sample_weight=[3, 1])  # fmt: skip
    assert weighted == pytest.approx(1.25)
    zero_one = mean_matrix_loss([0, 1, 2, 1], [0, 2, 2, 1], ag.losses.zero_one(3))
    assert zero_one == pytest.approx(0.25)
    named = ag.LossMatrix(ordinal.matrix, labels=ORDER)  # labels default to the matrix's
    assert mean_matrix_loss(["low"], ["high"], named) == 2.0


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: mean_matrix_loss([0, 5], [0, 1], ag.losses.zero_one(3)), r"y_true holds \[5\]"),
        (lambda: mean_matrix_loss([0, 1], [0, -1], ag.losses.abstain(3)), r"y_pred holds \[-1\]"),
        (lambda: mean_matrix_loss([0], [0, 1], ag.losses.zero_one(3)), "same shape"),
        (lambda: mean_matrix_loss([], [], ag.losses.zero_one(3)), "empty"),
        (lambda: mean_matrix_loss([0], [0], ag.losses.zero_one(3), labels=[0, 1]), "3 entries"),
        (lambda: mean_matrix_loss([0], [0], -np.ones((2, 2))), "not a valid loss matrix"),
        (
            lambda: mean_matrix_loss([0], [0], ag.losses.zero_one(3), abstain_label=-1),
            "none is named 'abstain'",
        ),
    ],
)
def test_mean_matrix_loss_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize(
    "values, names",
    [
        (np.array([2, 0, 1, 1, 2, 0]), [0, 1, 2]),
        (np.array([0.0, -0.0, 1.0, np.nan, 1]), [0.0, 1.0]),  # -0.0 is 0.0, NaN is no label
        (np.array(["b", "a", "c", "a"]), ["a", "b"]),
        (np.array([0, "abstain", 1, 0], dtype=object), [0, 1, "abstain"]),  # mixed types
        (np.array([0, "abstain", 1, "refer"], dtype=object), [0, 1, "abstain"]),
        (np.array([True, 1, 0], dtype=object), [0, 1]),  # True is 1, as in a dict
        (np.array([], dtype=int), [0, 1]),
        # integers named by their positions: read in place, unless out of range
        (np.array([2, 0, 1, 1], dtype=np.uint8), [0, 1, 2]),
        (np.array([0, 3, 1]), [0, 1, 2]),
        (np.array([-1, 0]), [0, 1]),
        (np.array([1, 0, 1]), [False, True]),
        (np.array([1, 0, 1]), [np.int64(0), np.int64(1)]),
        (np.array([1, 0, 1]), [0.0, 1.0]),
        (np.array([1, 0, 1]), [1, 0]),  # not in position order: looked up
        (np.array([1, 0, 1]), ["0", "1"]),
    ],
)
def test_label_positions_equal_a_lookup_per_sample(values, names):
    """The positions of labels (one lookup per distinct label) against a dict lookup per
    sample, the unknown labels named in the order of first appearance among the distinct."""
    from advgame.metrics import _positions

    index = {name: j for j, name in enumerate(names)}
    expected = [index.get(v, -1) for v in values.tolist()]
    if min(expected, default=0) >= 0:
        assert _positions("y", values, names, "labels").tolist() == expected
    else:
        with pytest.raises(ValueError, match="y holds"):
            _positions("y", values, names, "labels")


def test_loss_scorer_reads_the_models_declared_loss(graded):
    X, names = graded
    clf = ag.AdversarialClassifier(loss="abstain", alpha=0.2).fit(X, names)
    scorer = make_loss_scorer()
    assert isinstance(scorer, LossScorer) and repr(scorer) == "make_loss_scorer()"
    expected = mean_matrix_loss(
        names, clf.predict(X), ag.losses.abstain(3, 0.2), labels=clf.classes_
    )
    assert scorer(clf, X, names) == pytest.approx(-expected)
    assert expected > 0 and (clf.predict(X) == "abstain").any()
    # an explicit matrix reads the model's abstain_label_ for its abstain action
    explicit = make_loss_scorer(ag.losses.abstain(3, 0.2), labels=clf.classes_)
    assert explicit(clf, X, names) == pytest.approx(-expected)
    # score stays accuracy, as in scikit-learn
    assert clf.score(X, names) == pytest.approx(np.mean(clf.predict(X) == names))


def test_loss_scorer_in_grid_search_prefers_the_smaller_declared_loss(graded):
    X, names = graded
    grid = {"strength": [1e-3, 10.0]}
    model = ag.AdversarialClassifier(loss="ordinal", classes_order=ORDER)
    search = GridSearchCV(model, grid, scoring=make_loss_scorer(), cv=3).fit(X, names)
    scores = search.cv_results_["mean_test_score"]
    assert np.all(scores <= 0) and search.best_params_ == {"strength": 1e-3}
    assert search.best_score_ == pytest.approx(scores.max())
    # through a pipeline, and for an abstaining model
    pipe = make_pipeline(StandardScaler(), ag.AdversarialClassifier(loss="abstain", alpha=0.3))
    search = GridSearchCV(
        pipe, {"adversarialclassifier__strength": [1e-3, 1e-1]}, scoring=make_loss_scorer(), cv=3
    ).fit(X, names)
    assert -0.3 <= search.best_score_ <= 0.0


def test_loss_scorer_with_a_given_loss_scores_any_classifier(graded):
    X, names = graded
    scorer = make_loss_scorer(ag.losses.ordinal(3), labels=ORDER)
    scores = cross_val_score(LogisticRegression(), X, names, scoring=scorer, cv=3)
    assert np.all(scores <= 0) and np.all(scores >= -2)
    with pytest.raises(ValueError, match="has none: pass the loss"):
        make_loss_scorer()(LogisticRegression().fit(X, names), X, names)
    with pytest.raises(ValueError, match="without a loss reads them from the fitted model"):
        make_loss_scorer(labels=ORDER)


def test_game_compiles_the_fitted_class_order():
    """With ``classes_order`` the declaration's matrix names the classes, so
    ``game_.compile(X, y)`` (string labels) is the program the fit solved."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(45, 2))
    names = np.array(["low", "mid", "high"])
    y = names[np.clip(np.round(X[:, 0] + 1).astype(int), 0, 2)]
    clf = ag.AdversarialClassifier(
        loss="ordinal", classes_order=list(names), solver="compile", uncertainty="soft"
    ).fit(X, y)
    assert list(clf.classes_) == list(names)
    assert clf.game_.loss.structure.kind == "ordinal"
    program = clf.game_.compile(X, y)
    assert program.solve().objective == pytest.approx(clf.objective_, rel=1e-8)


# ------------------------------------------------------------- 6. declared labels and actions
def _cost_matrix(l, k, seed=0):
    C = np.random.default_rng(seed).uniform(0.5, 2.0, size=(l, k))
    C[np.arange(k), np.arange(k)] = 0.0
    return C


def _learning_lp(X, y_index, C, radius, weights):
    """Fathony et al. (2018a)'s learning LP with multiclass features ``f_ij = W_j . [x_i; 1]``
    and the l-infinity moment ball (regulariser ``radius * ||W||_1``), written independently of
    advgame with scipy's ``linprog``: variables ``W+, W- >= 0`` (k x (d+1) each), ``u``
    (free, one per sample) and ``p_i`` on the simplex over the l actions."""
    from scipy.optimize import linprog

    n, d = X.shape
    l, k = C.shape
    Xa = np.hstack([X, np.ones((n, 1))])
    w = weights / weights.sum()
    m = k * (d + 1)  # W[j] occupies columns j*(d+1) .. (j+1)*(d+1)-1 of each half
    observed = np.zeros((k, d + 1))
    np.add.at(observed, y_index, w[:, None] * Xa)
    c = np.concatenate([radius - observed.ravel(), radius + observed.ravel(), w, np.zeros(n * l)])
    # row (i, j): sum_a C[a, j] p_ia + Xa_i . W_j - u_i <= 0
    potential = np.kron(np.ones((n, 1)), np.eye(k))[:, :, None] * np.repeat(Xa, k, 0)[:, None, :]
    potential = potential.reshape(n * k, m)
    slack = -np.kron(np.eye(n), np.ones((k, 1)))
    game = np.kron(np.eye(n), C.T)
    A_ub = np.hstack([potential, -potential, slack, game])
    A_eq = np.hstack([np.zeros((n, 2 * m + n)), np.kron(np.eye(n), np.ones((1, l)))])
    bounds = [(0, None)] * (2 * m) + [(None, None)] * n + [(0, None)] * (n * l)
    result = linprog(c, A_ub, np.zeros(n * k), A_eq, np.ones(n), bounds=bounds, method="highs")
    assert result.status == 0
    return result.fun


def test_declared_labels_are_the_classes_whatever_subset_y_holds(iris):
    """A LossMatrix with labels= fixes classes_ (declared order); a y holding some of them fits
    the game whose absent classes have no rows: the compiled program and the certified solver
    reach the optimum of an independent LP of that game."""
    X, y = iris
    declared = [30, 10, 20, 40, 50]  # not sorted: classes_ keeps this order
    names = np.array([10, 20, 40])[y]  # 30 and 50 never appear
    C = _cost_matrix(5, 5)
    loss = ag.LossMatrix(C, labels=declared)
    w = np.random.default_rng(1).integers(1, 3, names.size).astype(float)
    y_index = np.array([declared.index(label) for label in names])
    optimum = _learning_lp(X, y_index, C, 0.05, w)
    params = {"loss": loss, "uncertainty": "linf", "strength": 0.05}
    exact = ag.AdversarialClassifier(**params, solver="compile").fit(X, names, sample_weight=w)
    fast = ag.AdversarialClassifier(**params, solver="smoothing").fit(X, names, sample_weight=w)
    for clf in (exact, fast):
        assert clf.classes_.tolist() == declared
        assert clf.predict_proba(X).shape == (names.size, 5)
        assert set(np.unique(clf.predict(X))) <= set(declared)
    assert exact.converged_ == "optimal" and exact.objective_ == pytest.approx(optimum, abs=1e-7)
    assert fast.solver_ == "smoothing" and fast.converged_ == "certified"
    assert optimum - 1e-7 <= fast.objective_ <= optimum + fast.gap_ + 1e-7
    # the declaration compiles the same program from the subset
    program = fast.game_.compile(X, names, w)
    assert program.solve().objective == pytest.approx(optimum, abs=1e-7)


def test_declared_labels_score_every_cross_validation_fold(iris):
    """Issue #36: in KFold cross-validation a rare class missing from a training fold made the
    classifier fail where LogisticRegression scores every fold."""
    X, y = iris
    order = np.random.default_rng(0).permutation(y.size)[:100]
    X, labels = X[order], np.array([0, 7, 20])[y[order]]
    labels[[3, 17]] = 11  # a rare class, both samples in the first fold's test part
    cv = KFold(4)
    assert 11 not in labels[next(cv.split(X))[0]]
    reference = cross_val_score(LogisticRegression(), X, labels, cv=cv)
    clf = ag.AdversarialClassifier(loss=ag.LossMatrix(_cost_matrix(24, 24), labels=range(24)))
    scores = cross_val_score(clf, X, labels, cv=cv, error_score="raise")
    assert np.all(np.isfinite(scores)) and scores.mean() >= reference.mean() - 0.05
    fitted = clf.fit(X[:40], labels[:40])
    assert fitted.classes_.tolist() == list(range(24))


def test_undeclared_labels_in_y_are_an_error(iris):
    X, y = iris
    loss = ag.LossMatrix(_cost_matrix(3, 3), labels=[0, 1, 5])
    with pytest.raises(
        ValueError,
        match=r"y holds the labels \[2\], which the loss matrix does "
        r"not declare: its labels are \[0, 1, 5\]",
    ):
        ag.AdversarialClassifier(loss=loss).fit(X, y)
    unnamed = ag.LossMatrix(_cost_matrix(4, 4))  # labels not declared: one column per class
    with pytest.raises(ValueError, match="has 4 label columns but y has 3 classes"):
        ag.AdversarialClassifier(loss=unnamed).fit(X, y)


def test_named_actions_are_predicted_by_name(iris, graded):
    """Actions beyond the labels keep their names in predict (object dtype with numeric
    classes); the loss scorer reads them; 'abstain' stays the abstain_label shorthand."""
    X, y = iris
    C = np.vstack([_cost_matrix(3, 3), [0.3, 0.3, 0.3], [0.2, 0.45, 0.45]])
    loss = ag.LossMatrix(C, labels=[0, 1, 2], actions=[0, 1, 2, "refer", "cheap_test"])
    clf = ag.AdversarialClassifier(loss=loss, strength=0.01).fit(X, y)
    assert clf.actions_.tolist() == [0, 1, 2, "refer", "cheap_test"]
    assert clf.actions_.dtype == object and clf.abstain_label_ is None
    chosen = np.argmax(clf.predict_action_proba(X), axis=1)
    predicted = clf.predict(X)
    np.testing.assert_array_equal(predicted, clf.actions_[chosen])
    assert {"refer", "cheap_test"} <= set(predicted.tolist())
    scorer_given = make_loss_scorer(loss)(clf, X, y)
    expected = -C[chosen, y].mean()
    assert make_loss_scorer()(clf, X, y) == pytest.approx(expected)
    assert scorer_given == pytest.approx(expected)
    assert clf.score(X, y) == pytest.approx(np.mean(predicted == y))
    # string classes and string action names: one string dtype
    X, names = graded
    named = ag.LossMatrix(C, labels=ORDER, actions=[*ORDER, "refer", "cheap_test"])
    strings = ag.AdversarialClassifier(loss=named, strength=0.01).fit(X, names)
    assert strings.predict(X).dtype.kind == "U" and "refer" in strings.predict(X)
    # an action named like a class that is not one of the matrix's labels is ambiguous
    display = ag.LossMatrix(C, labels=["a", "b", "c"], actions=["a", "b", "c", 0, "x"])
    with pytest.raises(ValueError, match=r"name \[0\], which are classes"):
        ag.AdversarialClassifier(loss=display).fit(iris[0], iris[1])
