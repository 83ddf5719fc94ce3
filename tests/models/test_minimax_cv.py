"""MinimaxClassifierCV (issue 39): scikit-learn conformance, the same choice as a GridSearchCV
over the same folds and radii, warm paths against cold fits, and bad input."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.preprocessing import StandardScaler

import advgame as ag
from advgame.models.minimax_cv import DEFAULT_SCORING


@pytest.mark.slow  # every check fits a path per fold
def test_check_estimator(conforms):
    conforms(ag.MinimaxClassifierCV(loss="brier", radii=3, cv=3), {})


def _wine():
    X, y = load_wine(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.mark.parametrize(
    "loss, solver",
    [("brier", "auto"), ("log", "auto"), ("zero_one", "compile")],
)
def test_choice_and_scores_equal_a_grid_search_over_the_same_folds(loss, solver):
    """The warm-started paths score every (fold, radius) as GridSearchCV's cold fits do (the
    same certified optimum: scores equal to 1e-9 on probabilities, the same predictions), and
    choose the same radius; the refit is the cold fit at that radius."""
    X, y = _wine()
    folds = StratifiedKFold(3, shuffle=True, random_state=0)
    radii = [0.3, 0.1, 0.03, 0.01]
    params = {"loss": loss, "solver": solver, "tol": 1e-8}
    cv = ag.MinimaxClassifierCV(radii=radii, cv=folds, **params).fit(X, y)
    grid = GridSearchCV(
        ag.MinimaxClassifier(**params), {"radius": radii}, cv=folds, scoring=DEFAULT_SCORING[loss]
    ).fit(X, y)
    expected = np.array([grid.cv_results_[f"split{i}_test_score"] for i in range(3)])
    np.testing.assert_allclose(cv.scores_, expected, rtol=1e-6, atol=1e-9)
    assert cv.radius_ == grid.best_params_["radius"]
    np.testing.assert_array_equal(cv.radii_, radii)
    assert cv.gaps_.shape == (3, 4) and np.all(np.nan_to_num(cv.gaps_) <= 1e-6)
    refit = grid.best_estimator_
    np.testing.assert_array_equal(cv.predict(X), refit.predict(X))
    assert cv.objective_ == pytest.approx(refit.objective_, rel=1e-6)


def test_warm_paths_take_fewer_iterations_than_cold_fits():
    """Along a path of radii the fast solver starts from the previous ``A_``."""
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    radii = np.geomspace(0.3, 0.003, 5)
    warm = ag.MinimaxClassifier(loss="brier", warm_start=True)
    warm_iters, cold_iters = [], []
    for radius in radii:
        warm.set_params(radius=radius).fit(X, y)
        cold = ag.MinimaxClassifier(loss="brier", radius=radius).fit(X, y)
        warm_iters.append(warm.n_iter_)
        cold_iters.append(cold.n_iter_)
        assert warm.objective_ == pytest.approx(cold.objective_, rel=1e-5)
    assert sum(warm_iters[1:]) < sum(cold_iters[1:])


def test_brier_score_against_scikit_learn():
    """On 0/1 labels scikit-learn's binary Brier score counts the positive class only: half the
    sum over both classes."""
    from sklearn.metrics import brier_score_loss

    from advgame.models.minimax_cv import neg_brier_score

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    model = ag.MinimaxClassifier(loss="brier").fit(X, y)
    binary = brier_score_loss(y, model.predict_proba(X)[:, 1])
    assert neg_brier_score(model, X, y) == pytest.approx(-2 * binary, rel=1e-12)


def test_default_scoring_is_the_models_loss():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    cv = ag.MinimaxClassifierCV(loss="log", radii=[0.1, 0.01], cv=3).fit(X, y)
    assert np.all(cv.scores_ < 0)  # minus the log loss
    accuracy = ag.MinimaxClassifierCV(loss="log", radii=[0.1, 0.01], cv=3, scoring="accuracy")
    assert np.all(accuracy.fit(X, y).scores_ > 0.9)


@pytest.mark.parametrize(
    "radii, match",
    [(0, "radii must be a count >= 1"), ([], "radii must be"), ([0.1, 0.1], "distinct")],
)
def test_bad_radii_are_refused(radii, match):
    X, y = _wine()
    with pytest.raises(ValueError, match=match):
        ag.MinimaxClassifierCV(radii=radii).fit(X, y)


def test_an_unknown_loss_is_refused_before_any_fold_runs():
    X, y = _wine()
    with pytest.raises(ValueError, match="loss must be one of"):
        ag.MinimaxClassifierCV(loss="hinge", radii=2, cv=2).fit(X, y)
