"""AdversarialClassifierCV (issue 39): scikit-learn conformance, the same choice as a
GridSearchCV over the same folds and strengths, and bad input."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris, load_wine
from sklearn.metrics import check_scoring
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.preprocessing import StandardScaler

import advgame as ag
from advgame.metrics import make_loss_scorer
from advgame.models.classifier_cv import STRENGTH_RANGE, strength_grid


@pytest.mark.slow  # about 40 s: every check fits a path per fold
def test_check_estimator(conforms):
    conforms(ag.AdversarialClassifierCV(strengths=3, cv=3), {})


@pytest.mark.parametrize(
    "loss, scoring, tol",
    [
        ("zero_one", None, 1e-4),
        ("abstain", None, 1e-4),
        pytest.param("ordinal", "accuracy", 1e-8, marks=pytest.mark.slow),  # 13 s
    ],
)
def test_choice_and_scores_equal_a_grid_search_over_the_same_folds(loss, scoring, tol):
    """The warm-started paths score every (fold, strength) as GridSearchCV's cold fits do, and
    choose the same strength; the refit is the cold fit at that strength.  Warm and cold fits
    reach the same certified optimum, not the same point: for the ordinal loss at ``tol=1e-4``
    one test row of one fold flips (at the weakest strength), so those fits are asked for
    ``1e-8``."""
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    folds = StratifiedKFold(3, shuffle=True, random_state=0)
    strengths = [1.0, 0.1, 0.01, 1e-3]
    params = {"loss": loss, "alpha": 0.3, "tol": tol}
    cv = ag.AdversarialClassifierCV(strengths=strengths, cv=folds, scoring=scoring, **params)
    cv.fit(X, y)
    grid = GridSearchCV(
        ag.AdversarialClassifier(**params),
        {"strength": strengths},
        cv=folds,
        scoring=make_loss_scorer() if scoring is None else scoring,
    ).fit(X, y)
    expected = np.array([grid.cv_results_[f"split{i}_test_score"] for i in range(3)])
    np.testing.assert_allclose(cv.scores_, expected, rtol=0, atol=1e-12)
    assert cv.strength_ == grid.best_params_["strength"]
    np.testing.assert_array_equal(cv.strengths_, strengths)
    # certified within tol * max(1, |J|), and J <= J(0) <= 2 for these losses on 3 classes
    assert cv.gaps_.shape == (3, 4) and np.all(cv.gaps_ <= 2 * tol)
    refit = grid.best_estimator_
    np.testing.assert_array_equal(cv.predict(X), refit.predict(X))
    assert abs(cv.objective_ - refit.objective_) <= cv.gap_ + refit.gap_


@pytest.mark.slow  # 30 s: each joblib worker compiles the kernels
def test_folds_in_parallel_give_the_serial_answer():
    X, y = load_iris(return_X_y=True)
    serial = ag.AdversarialClassifierCV(strengths=3, cv=3).fit(X, y)
    parallel = ag.AdversarialClassifierCV(strengths=3, cv=3, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(serial.scores_, parallel.scores_)
    assert serial.strength_ == parallel.strength_


def test_strength_grid():
    grid = strength_grid(5, "soft")
    np.testing.assert_allclose(grid[[0, -1]], STRENGTH_RANGE)
    assert np.all(np.diff(np.log(grid)) < 0)
    np.testing.assert_array_equal(strength_grid([0.01, 1.0, 0.1], "soft"), [1.0, 0.1, 0.01])
    np.testing.assert_array_equal(strength_grid([0.0, 0.1], "l2"), [0.1, 0.0])


@pytest.mark.parametrize(
    "strengths, match",
    [
        (0, "a count >= 1"),
        ([], "non-empty"),
        ([0.1, 0.1], "distinct"),
        ([0.1, 0.0], "strength must be"),
        (True, "a count >= 1 or a non-empty list"),
    ],
)
def test_bad_strengths_are_refused(strengths, match):
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match=match):
        ag.AdversarialClassifierCV(strengths=strengths).fit(X, y)


@pytest.mark.parametrize(
    "estimator, parameter, values",
    [
        (ag.AdversarialClassifier(), "strength", [1.0, 0.01, 1e-4]),
        (ag.AdversarialClassifier(loss="ordinal", kernel="rbf"), "strength", [0.1, 1e-3]),
        (ag.MinimaxClassifier(loss="brier"), "radius", [0.3, 0.03]),
    ],
    ids=["linear", "kernel", "minimax"],
)
def test_a_fold_path_is_the_warm_started_fits_on_rows_prepared_once(
    estimator, parameter, values, monkeypatch
):
    """fold_path checks the training rows, puts them in canonical form and binds the feature
    map once per fold, and its fits are bit for bit those of ``fit`` with ``warm_start``."""
    from advgame._estimator import inputs
    from advgame.models.classifier_cv import fold_path

    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    train, test = np.arange(0, 178, 2), np.arange(1, 178, 2)
    values = np.array(values)
    scorer = make_loss_scorer() if parameter == "strength" else "accuracy"
    scorer = check_scoring(estimator, scorer)
    calls = []
    distinct_rows = inputs.distinct_rows
    monkeypatch.setattr(inputs, "distinct_rows", lambda *a: calls.append(1) or distinct_rows(*a))
    scores, gaps, points = fold_path(estimator, parameter, X, y, None, train, test, values, scorer)
    assert len(calls) == 1
    model = clone(estimator).set_params(warm_start=True)
    for j, value in enumerate(values):
        model.set_params(**{parameter: float(value)}).fit(X[train], y[train])
        assert scores[j] == scorer(model, X[test], y[test]) and gaps[j] == model.gap_
        if parameter == "radius":
            np.testing.assert_array_equal(points[j], model.A_)
        elif model.kernel is None:
            np.testing.assert_array_equal(points[j], model.theta_)
        else:  # kernel coefficients, one per fitted row: no start for other rows
            assert points[j] is None
    assert len(calls) == 1 + values.size


def test_a_fold_path_resumes_each_fit_from_the_smoothing_memo(monkeypatch):
    """Where the smoothing solver's fits end at their first smoothing (noisy labels: the dual
    ascent gives up), each fit of a fold path starts from the last one's final evaluation and
    L-BFGS pairs (the rows' ``SmoothingMemo``): fewer evaluations than a loop of ``fit`` with
    ``warm_start``, every fit certified, the objectives those of the loop within the two
    certified gaps."""
    from sklearn.datasets import make_classification

    from advgame.models import classifier_cv
    from advgame.solvers import smoothing

    X, y = make_classification(
        n_samples=600, n_features=10, n_informative=6, n_classes=3, flip_y=0.3, random_state=0
    )
    train, test = np.arange(0, 600, 2), np.arange(1, 600, 2)
    estimator, values = ag.AdversarialClassifier(), np.array([0.1, 0.01, 0.001])
    evaluations, objectives = [0], []
    call, finished = smoothing.SmoothedSurrogate.__call__, classifier_cv.fit_finished

    def counted(self, theta, F=None):
        evaluations[0] += 1
        return call(self, theta, F)

    def recorded(model, started):
        objectives.append(model.objective_)
        return finished(model, started)

    monkeypatch.setattr(smoothing.SmoothedSurrogate, "__call__", counted)
    monkeypatch.setattr(classifier_cv, "fit_finished", recorded)
    scorer = check_scoring(estimator, make_loss_scorer())
    _, gaps, _ = classifier_cv.fold_path(
        estimator, "strength", X, y, None, train, test, values, scorer
    )
    path_evaluations, evaluations[0] = evaluations[0], 0
    model = clone(estimator).set_params(warm_start=True)
    for value, objective, gap in zip(values, objectives, gaps):
        model.set_params(strength=value).fit(X[train], y[train])
        assert model.solver_ == "smoothing" and model.converged_
        assert gap <= model.tol * max(1.0, abs(objective))
        assert abs(objective - model.objective_) <= gap + model.gap_
    assert path_evaluations < evaluations[0]


@pytest.mark.parametrize(
    "cv_estimator, base, parameter, point",
    [
        (
            ag.AdversarialClassifierCV(strengths=[0.1, 1e-3]),
            ag.AdversarialClassifier(),
            "strength",
            "theta_",
        ),
        (
            ag.AdversarialClassifierCV(strengths=[0.1, 1e-3], kernel="rbf"),
            ag.AdversarialClassifier(kernel="rbf"),
            "strength",
            None,
        ),
        (
            ag.MinimaxClassifierCV(loss="brier", radii=[0.3, 0.03]),
            ag.MinimaxClassifier(loss="brier"),
            "radius",
            "A_",
        ),
    ],
    ids=["linear", "kernel", "minimax"],
)
def test_the_refit_starts_from_the_folds_mean_parameters(
    cv_estimator, base, parameter, point, monkeypatch
):
    """The refit at the chosen value starts from the mean over the folds of their fits'
    parameters at it (cold for kernel features, whose parameters are tied to their rows) and
    reaches a cold fit's certified optimum."""
    from advgame.models import classifier, minimax

    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    starts = []
    if parameter == "radius":
        module, name, position = minimax, "fit_proximal", 1  # the Brier loss's solver, A0
    else:
        module, name, position = classifier, "fit_first_order", 8  # theta0
    solver = getattr(module, name)
    monkeypatch.setattr(module, name, lambda *args: starts.append(args[position]) or solver(*args))
    cv_estimator.set_params(cv=folds).fit(X, y)
    refit_start = starts[-1]
    monkeypatch.undo()
    best = getattr(cv_estimator, parameter + "_")
    values = cv_estimator.strengths_ if parameter == "strength" else cv_estimator.radii_
    if point is None:
        assert refit_start is None
    else:  # each fold's warm path up to the chosen value (fold_path's fits, bit for bit)
        fits = []
        for train, _ in folds:
            model = clone(base).set_params(warm_start=True)
            for value in values:
                model.set_params(**{parameter: value}).fit(X[train], y[train])
                if value == best:
                    break
            fits.append(getattr(model, point))
        np.testing.assert_allclose(refit_start, np.mean(fits, axis=0), rtol=1e-12, atol=0)
    cold = base.set_params(**{parameter: best}).fit(X, y)
    gap = cv_estimator.gap_ if parameter == "strength" else cv_estimator.tol
    assert abs(cv_estimator.objective_ - cold.objective_) <= 2 * max(gap, cold.gap_, 1e-12) + 1e-9
