"""ProjectionClassifier and LabelRanker (Blondel 2019 §6) against independent references."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris, make_multilabel_classification
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

import advgame as ag
from advgame.exceptions import NotApplicableError
from advgame.models.projection import knapsack_bounds
from advgame.polytopes import Birkhoff, FenchelYoungLoss, Simplex


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.fixture(scope="module")
def ranking():
    data = ag.datasets.load("label_ranking/iris")
    return StandardScaler().fit_transform(data.X), data.y


def _recomputed(model, X, targets):
    """Objective and gradient norm in the scores recomputed with FenchelYoungLoss."""
    T = model.decision_scores(X)
    loss = FenchelYoungLoss(model.projection_set_, model.geometry)
    shape = model._set_shape(model.projection_set_)
    value, G = loss.value_and_gradient(T.reshape(len(X), *shape), targets.reshape(len(X), *shape))
    W = model.coef_
    objective = value.mean() + 0.5 * model.strength_ * np.sum(W * W)
    grad_W = X.T @ G.reshape(len(X), -1) / len(X) + model.strength_ * W
    grad_b = G.reshape(len(X), -1).mean(axis=0)
    return objective, max(np.abs(grad_W).max(), np.abs(grad_b).max())


@pytest.mark.parametrize("polytope", ["simplex", "unit_cube", "none"])
@pytest.mark.parametrize("geometry", ["euclidean", "kl"])
def test_classifier_reaches_a_stationary_point_of_the_stated_objective(iris, polytope, geometry):
    X, y = iris
    model = ag.ProjectionClassifier(polytope=polytope, geometry=geometry, strength=0.05).fit(X, y)
    objective, gradient = _recomputed(model, X, np.eye(3)[y])
    assert objective == pytest.approx(model.objective_, rel=1e-9)
    assert gradient < 1e-5


def test_kl_simplex_is_multinomial_logistic_regression(iris):
    X, y = iris
    alpha = 0.02
    ours = ag.ProjectionClassifier(geometry="kl", strength=alpha, tol=1e-10).fit(X, y)
    reference = LogisticRegression(C=1.0 / (alpha * len(y)), tol=1e-12, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(ours.predict_marginals(X), reference.predict_proba(X), atol=1e-5)


def test_no_projection_is_ridge_regression_on_the_encodings(iris):
    X, y = iris
    alpha = 0.1
    ours = ag.ProjectionClassifier(polytope="none", strength=alpha, tol=1e-10).fit(X, y)
    reference = Ridge(alpha=alpha * len(y)).fit(X, np.eye(3)[y])
    np.testing.assert_allclose(ours.coef_, reference.coef_.T, atol=1e-6)
    np.testing.assert_allclose(ours.intercept_, reference.intercept_, atol=1e-6)


def test_linear_kernel_equals_the_linear_model(iris):
    X, y = iris
    linear = ag.ProjectionClassifier(strength=0.1, tol=1e-10).fit(X, y)
    kernel = ag.ProjectionClassifier(strength=0.1, kernel="linear", tol=1e-10, max_iter=5000).fit(
        X, y
    )
    np.testing.assert_allclose(kernel.decision_scores(X), linear.decision_scores(X), atol=1e-4)


def test_integer_weights_equal_repetition(iris):
    X, y = iris
    w = np.random.default_rng(0).integers(0, 3, size=len(y))
    weighted = ag.ProjectionClassifier(strength=0.1, tol=1e-10).fit(X, y, sample_weight=w)
    repeated = ag.ProjectionClassifier(strength=0.1, tol=1e-10).fit(
        np.repeat(X, w, 0), np.repeat(y, w)
    )
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, atol=1e-6)


def test_ordinal_decoding_is_the_median_of_the_projected_distribution(iris):
    X, y = iris
    model = ag.ProjectionClassifier(loss="absolute", strength=0.1).fit(X, y)
    u = model.predict_marginals(X)  # u_i = P(Y > i) on the order simplex
    assert ag.polytopes.OrderSimplex().contains(u).all()
    median = np.sum(u > 0.5, axis=1)  # the ties u_i = 1/2 do not occur here
    np.testing.assert_array_equal(model.predict(X), model.classes_[median])


def test_multilabel_knapsack_and_cube(tmp_path):
    X, Y = make_multilabel_classification(300, 10, n_classes=6, random_state=0)
    low, high = knapsack_bounds(Y)
    counts = Y.sum(axis=1)
    assert low == 0 and high == int(np.ceil(counts.mean() + counts.std()))
    knapsack = ag.ProjectionClassifier(strength=0.1).fit(X, Y)
    assert repr(knapsack.projection_set_) == f"Knapsack(low=0, high={high})"
    predicted = knapsack.predict(X)
    assert predicted.shape == Y.shape and predicted.sum(axis=1).max() <= high
    cube = ag.ProjectionClassifier(polytope="unit_cube", decoding="unit_cube", strength=0.1).fit(
        X, Y
    )
    assert np.mean(cube.predict(X) == Y) > 0.8
    # the knapsack decoding is the cube decoding capped at `high` labels
    u = knapsack.predict_marginals(X)
    manual = knapsack.decomposition_.decode(u)
    np.testing.assert_array_equal(manual, predicted)


def test_label_ranker_birkhoff_beats_unit_cube_decoding(ranking):
    X, R = ranking
    birkhoff = ag.LabelRanker(strength=1e-2).fit(X, R)
    cube = ag.LabelRanker(polytope="unit_cube", decoding="unit_cube", strength=1e-2).fit(X, R)
    assert birkhoff.score(X, R) > cube.score(X, R)
    ranks = birkhoff.predict(X)
    assert np.array_equal(np.sort(ranks, axis=1), np.tile([1, 2, 3], (len(X), 1)))
    soft = birkhoff.predict_marginals(X)
    assert Birkhoff().contains(soft).all()
    with pytest.raises(NotApplicableError, match="predict_matrix"):
        cube.predict(X)
    error = ag.metrics.permutation_hamming_loss(R, birkhoff.predict_matrix(X))
    assert error == pytest.approx(1 - birkhoff.score(X, R))


@pytest.mark.parametrize(
    "polytope, geometry, decoding",
    [
        ("birkhoff", "kl", "auto"),
        ("row_stochastic", "euclidean", "birkhoff"),
        ("none", "kl", "birkhoff"),
        ("permutahedron", "euclidean", "auto"),
        ("permutahedron", "kl", "auto"),
    ],
)
def test_label_ranker_combinations_are_stationary(ranking, polytope, geometry, decoding):
    X, R = ranking
    model = ag.LabelRanker(polytope=polytope, geometry=geometry, decoding=decoding, strength=0.05)
    model.fit(X, R)
    if polytope == "permutahedron":
        targets = 4.0 - R
    else:
        targets = ag.decoding.hamming_ranking(3).phi(R)
    objective, gradient = _recomputed(model, X, targets)
    assert objective == pytest.approx(model.objective_, rel=1e-8)
    assert gradient < 1e-5
    assert model.predict(X).shape == R.shape


def test_permutahedron_decoding_sorts_the_scores(ranking):
    X, R = ranking
    model = ag.LabelRanker(polytope="permutahedron", strength=0.1).fit(X, R)
    scores = model.predict_marginals(X)
    expected = np.argsort(np.argsort(-scores, axis=1, kind="stable"), axis=1) + 1
    np.testing.assert_array_equal(model.predict(X), expected)


def test_pipeline_grid_search_pickle_and_pandas(iris):
    pd = pytest.importorskip("pandas")
    X, y = iris
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(4)])
    search = GridSearchCV(
        make_pipeline(StandardScaler(), ag.ProjectionClassifier()),
        {"projectionclassifier__strength": [0.01, 1.0]},
        cv=3,
    ).fit(frame, y)
    assert search.score(frame, y) > 0.9
    model = ag.LabelRanker().fit(*_ranking_arrays())
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(
        again.predict(_ranking_arrays()[0]), model.predict(_ranking_arrays()[0])
    )
    assert clone(model).get_params() == model.get_params()


def _ranking_arrays():
    data = ag.datasets.load("label_ranking/wine")
    return StandardScaler().fit_transform(data.X), data.y


@pytest.mark.parametrize(
    "estimator",
    [
        ag.ProjectionClassifier(),
        ag.ProjectionClassifier(geometry="kl"),
        ag.ProjectionClassifier(loss="absolute"),
        ag.ProjectionClassifier(polytope="unit_cube", kernel="rbf", strength=0.1),
    ],
    ids=repr,
)
def test_check_estimator(estimator):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(estimator)


@pytest.mark.parametrize(
    "params, fit_args, match",
    [
        ({"loss": "hinge"}, "iris", "loss must be"),
        ({"polytope": "birkhoff"}, "iris", "polytope must be"),
        ({"decoding": "unit_cube"}, "iris", "decoding must be"),
        ({"loss": "absolute", "polytope": "simplex"}, "iris", "polytope must be"),
        ({"loss": "hamming"}, "iris", "indicator target"),
        ({"strength": -1.0}, "iris", "strength must be"),
        ({"geometry": "l2"}, "iris", "geometry must be"),
        ({"kernel": "rbf", "strength": 0.0}, "iris", "strength > 0"),
        ({"max_iter": 0}, "iris", "max_iter"),
        ({"knapsack_bounds": (0, 9)}, "multilabel", "high <= k"),
        ({"knapsack_bounds": 3}, "multilabel", "knapsack_bounds"),
        ({"polytope": Simplex()}, "multilabel", "must lie in the projection set"),
    ],
)
def test_classifier_bad_input(iris, params, fit_args, match):
    if fit_args == "iris":
        X, y = iris
    else:
        X, y = make_multilabel_classification(50, 4, n_classes=5, random_state=0)
    with pytest.raises(ValueError, match=match):
        ag.ProjectionClassifier(**params).fit(X, y)


def test_classifier_refuses_non_finite_features(iris):
    X, y = iris
    X = X.copy()
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ag.ProjectionClassifier().fit(X, y)


@pytest.mark.parametrize(
    "params, R, match",
    [
        ({}, lambda R: np.where(R == 3, 2, R), "permutation of 1..3"),
        ({}, lambda R: R[:-1], "rows but X has"),
        ({}, lambda R: R[:, :1], "at least 2 labels"),
        ({}, lambda R: R + 0.5, "integer ranks"),
        ({"polytope": "permutahedron", "decoding": "birkhoff"}, None, "decoding must be"),
        ({"polytope": "knapsack"}, None, "polytope must be"),
        ({"decoding": "simplex"}, None, "decoding must be"),
    ],
)
def test_label_ranker_bad_input(ranking, params, R, match):
    X, ranks = ranking
    ranks = ranks if R is None else R(ranks)
    with pytest.raises(ValueError, match=match):
        ag.LabelRanker(**params).fit(X, ranks)


def test_label_ranker_score_checks_width(ranking):
    X, R = ranking
    model = ag.LabelRanker(strength=1.0).fit(X, R)
    with pytest.raises(ValueError, match="fitted on 3"):
        model.score(X, np.tile([1, 2, 3, 4], (len(X), 1)))


@pytest.mark.parametrize("geometry", ["euclidean", "kl"])
def test_warm_started_birkhoff_projection_equals_the_cold_one(geometry):
    """The estimators train with Birkhoff(warm_start=True); each call must still be exact."""
    rng = np.random.default_rng(3)
    warm, cold = Birkhoff(warm_start=True), Birkhoff()
    T = rng.normal(size=(50, 4, 4))
    for _ in range(4):
        T = T + 0.1 * rng.normal(size=T.shape)  # an optimiser's next iterate
        np.testing.assert_allclose(warm.project(T, geometry), cold.project(T, geometry), atol=1e-9)
    assert warm._duals is not None and cold._duals is None
    np.testing.assert_allclose(  # a batch of another shape starts cold
        warm.project(T[:3], geometry), cold.project(T[:3], geometry), atol=1e-9
    )
