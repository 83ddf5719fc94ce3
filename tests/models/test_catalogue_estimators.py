"""Bad-input catalogue of the estimators and model-level functions ([reliability] item 1).

Each table row is (entry point, bad input, expected exception, message regex naming the argument).
The data are tiny so that every fit takes milliseconds.  Inputs that must *work* (one feature,
one sample where meaningful, string labels) are in the ``*_WORKS`` tables.
"""

import warnings

import networkx as nx
import numpy as np
import pytest

from advgame.baselines import (
    AllThresholdSVOR,
    CostSensitiveOneVsOneSVC,
    ReductionThresholdSVOR,
    WestonWatkinsSVC,
)
from advgame.exceptions import NotApplicableError, SolverError
from advgame.models import (
    AdversarialClassifier,
    AdversarialGraphicalModel,
    AdversarialMatching,
    GeneralizedPredictionSet,
    LabelRanker,
    MinimaxClassifier,
    MinimaxRegressor,
    ProjectionClassifier,
    StructuredSVM,
    error_rate_curve,
    robust_feature_selection,
)

NAN, INF = float("nan"), float("inf")
RNG = np.random.default_rng(0)
X = RNG.normal(size=(12, 2))
Y = np.arange(12) % 3
RANKS = np.array([RNG.permutation(3) + 1 for _ in range(12)])
STRINGS = np.array([["a", "b"]] * 12, dtype=object)


def _gps(**params):
    return GeneralizedPredictionSet(
        **{"error_rate": 0.2, "n_unlabeled": 5, "random_state": 0, **params}
    )


#: name -> (factory, training target); the targets are classes, a real target or rankings.
ESTIMATORS = {
    "AdversarialClassifier": (AdversarialClassifier, Y),
    "AdversarialClassifier-lbfgs": (lambda **p: AdversarialClassifier(solver="lbfgs", **p), Y),
    "MinimaxClassifier": (MinimaxClassifier, Y),
    "MinimaxRegressor": (MinimaxRegressor, X[:, 0] * 2.0),
    "ProjectionClassifier": (ProjectionClassifier, Y),
    "LabelRanker": (LabelRanker, RANKS),
    "AdversarialMatching": (AdversarialMatching, RANKS),
    "GeneralizedPredictionSet": (_gps, Y),
    "WestonWatkinsSVC": (WestonWatkinsSVC, Y),
    "AllThresholdSVOR": (AllThresholdSVOR, Y),
    "ReductionThresholdSVOR": (ReductionThresholdSVOR, Y),
    "CostSensitiveOneVsOneSVC": (CostSensitiveOneVsOneSVC, Y),
}
CLASSIFIERS = [n for n, (_, t) in ESTIMATORS.items() if t is Y]
WEIGHTED = [n for n in ESTIMATORS if n != "GeneralizedPredictionSet"]


def _with(value, index=(0, 0)):
    A = X.copy()
    A[index] = value
    return A


#: (case, X for fit/predict, exception, regex)
BAD_X = [
    ("nan", _with(NAN), ValueError, "X contains NaN"),
    ("inf", _with(INF), ValueError, "X contains infinity"),
    ("1-D", X[:, 0], ValueError, "Expected 2D array"),
    ("3-D", X[:, :, None], ValueError, "dim 3"),
    ("empty", X[:0], ValueError, r"0 sample\(s\)"),
    ("strings", STRINGS, ValueError, "X must be a numeric array.*dtype object"),
    ("string-dtype", STRINGS.astype(str), ValueError, "X must be a numeric array.*dtype <U1"),
    ("dicts", np.array([[{}, {}]] * 12, dtype=object), TypeError, "X must be a numeric array"),
]


def _target(target, n):
    return target[:n] if n <= len(target) else target


@pytest.mark.parametrize("case, Xb, exc, match", BAD_X, ids=[c[0] for c in BAD_X])
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_fit_rejects_bad_X(name, case, Xb, exc, match):
    factory, target = ESTIMATORS[name]
    with pytest.raises(exc, match=match):
        factory().fit(Xb, _target(target, np.shape(Xb)[0] if np.ndim(Xb) else 0))


_FITTED = {}


def _fitted(name):
    if name not in _FITTED:
        factory, target = ESTIMATORS[name]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _FITTED[name] = factory().fit(X, target)
    return _FITTED[name]


BAD_PREDICT_X = BAD_X + [
    ("fewer-features", X[:, :1], ValueError, "X has 1 features, but .* expecting 2"),
    ("more-features", np.hstack([X, X]), ValueError, "X has 4 features, but .* expecting 2"),
]


@pytest.mark.parametrize("case, Xb, exc, match", BAD_PREDICT_X, ids=[c[0] for c in BAD_PREDICT_X])
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_predict_rejects_bad_X(name, case, Xb, exc, match):
    with pytest.raises(exc, match=match):
        _fitted(name).predict(Xb)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_one_feature_and_one_sample_predict_work(name):
    """One feature is a valid problem; predicting one sample gives one prediction."""
    factory, target = ESTIMATORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = factory().fit(X[:, :1], target)
    assert len(model.predict(X[:1, :1])) == 1
    assert len(_fitted(name).predict(X[:1])) == 1


BAD_Y = [
    ("short", lambda t: t[:-1], ValueError, "inconsistent numbers of samples|R has 11 rows"),
    (
        "nan",
        lambda t: np.where(np.arange(12).reshape(-1, *[1] * (t.ndim - 1)) == 0, NAN, t),
        ValueError,
        r"y contains NaN|\bR must hold integer ranks",
    ),
]


@pytest.mark.parametrize("case, make, exc, match", BAD_Y, ids=[c[0] for c in BAD_Y])
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_fit_rejects_bad_y(name, case, make, exc, match):
    factory, target = ESTIMATORS[name]
    with pytest.raises(exc, match=match):
        factory().fit(X, make(target.astype(float)))


CLASS_Y = [
    ("one-class", np.zeros(12), ValueError, "y must contain at least 2 classes"),
    ("one-sample", Y[:1], ValueError, "inconsistent numbers of samples"),
    ("continuous", X[:, 0], ValueError, "Unknown label type: continuous"),
    ("2-D", np.c_[Y, Y, Y, Y], ValueError, r"y should be a 1d array|loss='hamming' needs"),
]


@pytest.mark.parametrize("case, yb, exc, match", CLASS_Y, ids=[c[0] for c in CLASS_Y])
@pytest.mark.parametrize("name", CLASSIFIERS)
def test_classifiers_reject_bad_labels(name, case, yb, exc, match):
    factory, _ = ESTIMATORS[name]
    with pytest.raises(exc, match=match):
        factory().fit(X, yb)


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_string_labels_work_and_match_integer_labels(name):
    """String labels are classes like any other: predictions are the same labels renamed."""
    factory, _ = ESTIMATORS[name]
    names = np.array(["ant", "bee", "cat"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        as_int = factory(random_state=0) if "random_state" in factory().get_params() else factory()
        as_str = factory(random_state=0) if "random_state" in factory().get_params() else factory()
        ints = as_int.fit(X, Y).predict(X)
        strs = as_str.fit(X, names[Y]).predict(X)
    assert list(as_str.classes_) == list(names)
    known = np.isin(ints, [0, 1, 2])  # set predictors also answer 'outlier' / 'ambiguous'
    assert np.array_equal(strs[known], names[ints[known].astype(int)])


@pytest.mark.parametrize("name", [n for n in CLASSIFIERS if n != "GeneralizedPredictionSet"])
def test_score_with_labels_unseen_in_fit_counts_them_wrong(name):
    """scikit-learn convention: predict never sees labels; score with unseen labels is 0."""
    assert _fitted(name).score(X, Y + 5) == 0.0


BAD_WEIGHTS = [
    ("negative", -np.ones(12), "sample_weight must be non-negative"),
    ("all-zero", np.zeros(12), "(?i)sample weights must contain at least one non-zero"),
    ("nan", np.r_[NAN, np.ones(11)], "sample_weight contains NaN"),
    ("inf", np.r_[INF, np.ones(11)], "sample_weight contains infinity"),
    ("short", np.ones(5), r"sample_weight.shape == \(5,\), expected \(12,\)"),
    ("2-D", np.ones((12, 2)), "Sample weights must be 1D"),
]


@pytest.mark.parametrize("case, weights, match", BAD_WEIGHTS, ids=[c[0] for c in BAD_WEIGHTS])
@pytest.mark.parametrize("name", WEIGHTED)
def test_fit_rejects_bad_sample_weight(name, case, weights, match):
    factory, target = ESTIMATORS[name]
    with pytest.raises(ValueError, match=match):
        factory().fit(X, target, sample_weight=weights)


# ------------------------------------------------------------------------------ hyperparameters
def _matrix(value, shape=(3, 3)):
    return np.full(shape, value)


#: (estimator, params, exception, regex)
BAD_PARAMS = [
    (
        "AdversarialClassifier",
        {"strength": -1.0},
        ValueError,
        "strength must be None or a finite number > 0",
    ),
    ("AdversarialClassifier", {"strength": NAN}, ValueError, "strength must be"),
    ("AdversarialClassifier", {"strength": INF}, ValueError, "strength must be"),
    ("AdversarialClassifier", {"strength": 0.0}, ValueError, "strength must be .*> 0"),
    (
        "AdversarialClassifier",
        {"strength": -1.0, "uncertainty": "l2"},
        ValueError,
        "strength must be .*>= 0",
    ),
    ("AdversarialClassifier", {"loss": "abstain", "alpha": -0.1}, ValueError, "alpha"),
    ("AdversarialClassifier", {"loss": "abstain", "alpha": NAN}, ValueError, "alpha"),
    ("AdversarialClassifier", {"loss": "abstain", "alpha": 1.5}, ValueError, "alpha"),
    ("AdversarialClassifier", {"max_iter": 0}, ValueError, "max_iter must be an integer >= 1"),
    ("AdversarialClassifier", {"max_iter": 1.5}, ValueError, "max_iter must be an integer"),
    ("AdversarialClassifier", {"tol": 0.0}, ValueError, "tol must be a finite positive"),
    ("AdversarialClassifier", {"tol": NAN}, ValueError, "tol must be a finite positive"),
    ("AdversarialClassifier", {"batch_size": 0}, ValueError, "batch_size must be an integer"),
    ("AdversarialClassifier", {"solver": "newton"}, ValueError, "solver must be one of"),
    ("AdversarialClassifier", {"backend": "gurobi"}, ValueError, "backend must be"),
    ("AdversarialClassifier", {"certify": "yes"}, ValueError, "certify must be"),
    ("AdversarialClassifier", {"loss": "hinge"}, ValueError, "loss must be one of"),
    (
        "AdversarialClassifier",
        {"loss": _matrix(1.0, (2, 2))},
        ValueError,
        "loss matrix has 2 label columns but y has 3",
    ),
    (
        "AdversarialClassifier",
        {"loss": _matrix(-1.0)},
        ValueError,
        "loss is not a valid loss matrix.*non-negative",
    ),
    (
        "AdversarialClassifier",
        {"loss": _matrix(NAN)},
        ValueError,
        "loss is not a valid loss matrix.*finite",
    ),
    (
        "AdversarialClassifier",
        {"loss": [["a"] * 3] * 3},
        ValueError,
        "loss is not a valid loss matrix.*numeric",
    ),
    ("AdversarialClassifier", {"uncertainty": "l3"}, ValueError, "uncertainty must be"),
    ("AdversarialClassifier", {"features": "cubic"}, ValueError, "features must be"),
    ("AdversarialClassifier", {"kernel": "sigmoid2"}, ValueError, "kernel must be"),
    (
        "AdversarialClassifier",
        {"kernel": "rbf", "gamma": -1.0},
        ValueError,
        "gamma must be a finite positive number",
    ),
    (
        "AdversarialClassifier",
        {"kernel": "rbf", "gamma": "x"},
        ValueError,
        "gamma must be a finite positive number",
    ),
    (
        "AdversarialClassifier",
        {"kernel": "poly", "degree": 1.5},
        ValueError,
        "degree must be an integer >= 1",
    ),
    (
        "AdversarialClassifier",
        {"kernel": "poly", "coef0": NAN},
        ValueError,
        "coef0 must be a finite number",
    ),
    (
        "AdversarialClassifier",
        {"solver": "pegasos"},
        ValueError,
        "solver='pegasos' .* needs a kernel",
    ),
    ("MinimaxClassifier", {"radius": -1.0}, ValueError, "radius must be a finite non-negative"),
    ("MinimaxClassifier", {"radius": NAN}, ValueError, "radius must be a finite non-negative"),
    ("MinimaxClassifier", {"radius": INF}, ValueError, "radius must be a finite non-negative"),
    (
        "MinimaxClassifier",
        {"radius": np.ones(5)},
        ValueError,
        "radius must be a scalar or hold one value per row",
    ),
    (
        "MinimaxClassifier",
        {"radius": 0.0, "solver": "compile"},
        SolverError,
        r"radius=0.0.*raise radius",
    ),
    ("MinimaxClassifier", {"norm": 3}, ValueError, "norm must be one of"),
    ("MinimaxClassifier", {"norm": "group"}, ValueError, "norm='group' needs groups"),
    (
        "MinimaxClassifier",
        {"norm": "group", "groups": [[0, 5]]},
        ValueError,
        "groups must give one label per feature",
    ),
    ("MinimaxClassifier", {"max_iter": 0}, ValueError, "max_iter must be an integer >= 1"),
    ("MinimaxClassifier", {"tol": -1.0}, ValueError, "tol must be a finite positive"),
    ("MinimaxClassifier", {"solver": "newton"}, ValueError, "solver must be one of"),
    ("MinimaxClassifier", {"loss": "hinge"}, ValueError, "loss must be one of"),
    ("MinimaxClassifier", {"randomized": True}, ValueError, "randomized=True is the Brier rule"),
    ("MinimaxRegressor", {"radius": -1.0}, ValueError, "radius must be a finite non-negative"),
    (
        "MinimaxRegressor",
        {"rho": -1.0},
        ValueError,
        r"rho \(second-moment bound\) must be a finite number > 0",
    ),
    ("MinimaxRegressor", {"rho": INF}, ValueError, "rho .* must be a finite number > 0"),
    ("MinimaxRegressor", {"norm": "bogus"}, ValueError, "norm must be one of"),
    ("MinimaxRegressor", {"solver": "newton"}, ValueError, "solver must be one of"),
    (
        "ProjectionClassifier",
        {"strength": -1.0},
        ValueError,
        "strength must be a finite number >= 0",
    ),
    (
        "ProjectionClassifier",
        {"strength": INF},
        ValueError,
        "strength must be a finite number >= 0",
    ),
    ("ProjectionClassifier", {"loss": "hinge"}, ValueError, "loss must be 'auto' or one of"),
    ("ProjectionClassifier", {"polytope": "sphere"}, ValueError, "polytope must be"),
    ("ProjectionClassifier", {"geometry": "l3"}, ValueError, "geometry must be one of"),
    ("ProjectionClassifier", {"decoding": "sphere"}, ValueError, "decoding must be"),
    (
        "ProjectionClassifier",
        {"kernel": "bogus"},
        ValueError,
        "kernel must be None, a callable or one of",
    ),
    (
        "ProjectionClassifier",
        {"kernel": "rbf", "gamma": -1.0},
        ValueError,
        "gamma must be a finite positive number",
    ),
    (
        "ProjectionClassifier",
        {"kernel": "rbf", "gamma": NAN},
        ValueError,
        "gamma must be a finite positive number",
    ),
    (
        "ProjectionClassifier",
        {"kernel": "poly", "degree": 0},
        ValueError,
        "degree must be an integer >= 1",
    ),
    (
        "ProjectionClassifier",
        {"kernel": "rbf", "strength": 0.0},
        ValueError,
        "a kernel model needs strength > 0",
    ),
    ("ProjectionClassifier", {"max_iter": 0}, ValueError, "max_iter must be an integer >= 1"),
    ("LabelRanker", {"strength": NAN}, ValueError, "strength must be a finite number >= 0"),
    ("LabelRanker", {"polytope": "sphere"}, ValueError, "polytope must be"),
    ("LabelRanker", {"decoding": "sphere"}, ValueError, "decoding must be"),
    ("LabelRanker", {"kernel": "bogus"}, ValueError, "kernel must be None, a callable or one of"),
    (
        "LabelRanker",
        {"kernel": "rbf", "gamma": -1.0},
        ValueError,
        "gamma must be a finite positive number",
    ),
    ("LabelRanker", {"tol": 0.0}, ValueError, "tol must be a finite positive"),
    ("AdversarialMatching", {"alpha": -1.0}, ValueError, "alpha must be a finite number >= 0"),
    ("AdversarialMatching", {"alpha": INF}, ValueError, "alpha must be a finite number >= 0"),
    ("AdversarialMatching", {"solver": "newton"}, ValueError, "solver must be one of"),
    ("AdversarialMatching", {"backend": "gurobi"}, ValueError, "backend must be one of"),
    ("AdversarialMatching", {"decode": "greedy"}, ValueError, "decode must be one of"),
    (
        "AdversarialMatching",
        {"learning_rate": 0.0},
        ValueError,
        "learning_rate must be a finite number > 0",
    ),
    ("AdversarialMatching", {"max_iter": 0}, ValueError, "max_iter must be an integer >= 1"),
    ("AdversarialMatching", {"batch_size": 0}, ValueError, "batch_size must be an integer >= 1"),
    (
        "GeneralizedPredictionSet",
        {"error_rate": 0.0},
        ValueError,
        r"error_rate must be a number in \(0, 1\)",
    ),
    (
        "GeneralizedPredictionSet",
        {"error_rate": 1.0},
        ValueError,
        r"error_rate must be a number in \(0, 1\)",
    ),
    (
        "GeneralizedPredictionSet",
        {"error_rate": -0.1},
        ValueError,
        r"error_rate must be a number in \(0, 1\)",
    ),
    (
        "GeneralizedPredictionSet",
        {"error_rate": NAN},
        ValueError,
        r"error_rate must be a number in \(0, 1\)",
    ),
    ("GeneralizedPredictionSet", {"C": 0.0}, ValueError, "C must be a finite number > 0 or 'auto'"),
    ("GeneralizedPredictionSet", {"C": NAN}, ValueError, "C must be a finite number > 0 or 'auto'"),
    ("GeneralizedPredictionSet", {"kernel": "bogus"}, ValueError, "kernel must be"),
    ("GeneralizedPredictionSet", {"gamma": -1.0}, ValueError, "gamma must be a finite"),
    (
        "GeneralizedPredictionSet",
        {"calibration": 1.0},
        ValueError,
        r"calibration must be None or a number in \(0, 1\)",
    ),
    (
        "GeneralizedPredictionSet",
        {"coverage_confidence": 0.0},
        ValueError,
        "coverage_confidence must be None or",
    ),
    (
        "GeneralizedPredictionSet",
        {"n_unlabeled": 0},
        ValueError,
        "n_unlabeled must be an integer >= 1",
    ),
    ("GeneralizedPredictionSet", {"max_iter": 0}, ValueError, "max_iter must be an integer >= 1"),
    ("GeneralizedPredictionSet", {"tol": NAN}, ValueError, "tol must be a finite positive"),
    ("GeneralizedPredictionSet", {"backend": "gurobi"}, ValueError, "backend must be one of"),
    ("GeneralizedPredictionSet", {"feature_penalty": -1.0}, ValueError, "feature_penalty must be"),
    (
        "GeneralizedPredictionSet",
        {"outlier_label": 0},
        ValueError,
        "outlier_label=0 is one of the classes",
    ),
    ("GeneralizedPredictionSet", {"n_jobs": 0}, ValueError, "n_jobs"),
    ("WestonWatkinsSVC", {"C": -1.0}, ValueError, "C must be a finite positive number"),
    ("WestonWatkinsSVC", {"C": INF}, ValueError, "C must be a finite positive number"),
    ("WestonWatkinsSVC", {"kernel": "poly"}, ValueError, "kernel must be one of"),
    (
        "WestonWatkinsSVC",
        {"kernel": "rbf", "gamma": -1.0},
        ValueError,
        "gamma must be a finite positive number",
    ),
    ("WestonWatkinsSVC", {"backend": "gurobi"}, ValueError, "backend must be one of"),
    ("AllThresholdSVOR", {"C": NAN}, ValueError, "C must be a finite positive number"),
    (
        "ReductionThresholdSVOR",
        {"cost": _matrix(1.0, (2, 2))},
        ValueError,
        r"cost must be a \(K, K\) matrix for the K=3",
    ),
    ("ReductionThresholdSVOR", {"cost": _matrix(-1.0)}, ValueError, "cost must be non-negative"),
    (
        "ReductionThresholdSVOR",
        {"cost": "bogus"},
        ValueError,
        r"cost must be a numeric \(K, K\) matrix",
    ),
    (
        "CostSensitiveOneVsOneSVC",
        {"cost": _matrix(NAN)},
        ValueError,
        "cost must hold finite values",
    ),
]


def _param_id(row):
    name, params, _, _ = row
    text = ",".join(
        f"{k}={'matrix' if isinstance(v, (np.ndarray, list)) else v}" for k, v in params.items()
    )
    return f"{name}-{text}"


@pytest.mark.parametrize(
    "name, params, exc, match", BAD_PARAMS, ids=[_param_id(r) for r in BAD_PARAMS]
)
def test_fit_rejects_absurd_hyperparameters(name, params, exc, match):
    factory, target = ESTIMATORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc, match=match):
            factory(**params).fit(X, target)


# ------------------------------------------------------------------ robust_feature_selection
RFS_BAD = [
    ("n_features=0", {"n_features": 0}, ValueError, "n_features must be an integer >= 1"),
    ("n_features=1.5", {"n_features": 1.5}, ValueError, "n_features must be an integer >= 1"),
    ("n_features=True", {"n_features": True}, ValueError, "n_features must be an integer >= 1"),
    ("n_features>d", {"n_features": 5}, ValueError, "n_features=5 exceeds the 2 features of X"),
    ("n_radii=0", {"n_radii": 0}, ValueError, "n_radii must be an integer >= 1"),
    (
        "min_ratio=2",
        {"min_ratio": 2.0},
        ValueError,
        "min_ratio must be a finite number > 0.0 and <= 1.0",
    ),
    ("min_ratio=-1", {"min_ratio": -1.0}, ValueError, "min_ratio must be"),
    ("min_ratio=nan", {"min_ratio": NAN}, ValueError, "min_ratio must be"),
    ("X-nan", {"X": _with(NAN)}, ValueError, "X must be a finite numeric 2-D array.*NaN"),
    ("X-1-D", {"X": X[:, 0]}, ValueError, "X must be a finite numeric 2-D array.*Expected 2D"),
    ("X-strings", {"X": STRINGS}, ValueError, "X must be a finite numeric 2-D array"),
    ("y-short", {"y": Y[:-1]}, ValueError, "inconsistent numbers of samples"),
    ("y-one-class", {"y": np.zeros(12)}, ValueError, "at least 2 classes"),
    (
        "estimator-not-minimax",
        {"estimator": WestonWatkinsSVC()},
        TypeError,
        "estimator must be a MinimaxClassifier or MinimaxRegressor",
    ),
]


@pytest.mark.parametrize("case, kwargs, exc, match", RFS_BAD, ids=[r[0] for r in RFS_BAD])
def test_robust_feature_selection_rejects(case, kwargs, exc, match):
    args = {"estimator": MinimaxClassifier(), "X": X, "y": Y, "n_features": 1, **kwargs}
    with pytest.raises(exc, match=match):
        robust_feature_selection(**args)


@pytest.mark.parametrize(
    "case, kwargs",
    [
        ("one-feature", {"X": X[:, :1]}),
        ("string-labels", {"y": np.array(list("abc"))[Y]}),
        ("regressor", {"estimator": MinimaxRegressor(), "y": X[:, 0]}),
    ],
)
def test_robust_feature_selection_works(case, kwargs):
    args = {"estimator": MinimaxClassifier(), "X": X, "y": Y, "n_features": 1, **kwargs}
    selection = robust_feature_selection(**args)
    assert selection.selected.shape == (1,)


# --------------------------------------------------------------------------- error_rate_curve
ERC_BAD = [
    (
        "rates-empty",
        {"error_rates": []},
        ValueError,
        r"error_rates must be non-empty values in \(0, 1\)",
    ),
    ("rates-0", {"error_rates": [0.0]}, ValueError, "error_rates must be"),
    ("rates-1", {"error_rates": [0.1, 1.0]}, ValueError, "error_rates must be"),
    ("rates-nan", {"error_rates": [NAN]}, ValueError, "error_rates must be"),
    ("rates-strings", {"error_rates": ["a"]}, ValueError, "error_rates must be"),
    (
        "not-a-set-predictor",
        {"estimator": WestonWatkinsSVC()},
        TypeError,
        "estimator must be a GeneralizedPredictionSet",
    ),
    (
        "y_test-short",
        {"y_test": Y[:-1]},
        ValueError,
        r"y_test must hold one label per row of X_test \(12\)",
    ),
    ("X_test-features", {"X_test": X[:, :1]}, ValueError, "X has 1 features"),
    ("X_test-nan", {"X_test": _with(NAN)}, ValueError, "X contains NaN"),
    ("X-nan", {"X": _with(NAN)}, ValueError, "X contains NaN"),
    (
        "X_unlabeled-features",
        {"X_unlabeled": X[:, :1]},
        ValueError,
        "X_unlabeled has 1 features but X has 2",
    ),
    ("X_unlabeled-nan", {"X_unlabeled": _with(NAN)}, ValueError, "X_unlabeled contains NaN"),
]


def _curve(**kwargs):
    args = {
        "estimator": _gps(),
        "X": X,
        "y": Y,
        "X_test": X,
        "y_test": Y,
        "error_rates": [0.3],
        **kwargs,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return error_rate_curve(**args)


@pytest.mark.parametrize("case, kwargs, exc, match", ERC_BAD, ids=[r[0] for r in ERC_BAD])
def test_error_rate_curve_rejects(case, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        _curve(**kwargs)


def test_error_rate_curve_warns_when_no_test_label_is_a_class():
    """Outliers in y_test are allowed, but a y_test with no training label at all (typically
    strings against integer classes) makes coverage undefined: say so."""
    args = {"estimator": _gps(), "X": X, "y": Y, "X_test": X, "error_rates": [0.3]}
    with pytest.warns(UserWarning, match="no label of y_test is a training class"):
        curve = error_rate_curve(y_test=np.array(list("abc"))[Y], **args)
    assert np.all(np.isnan(curve["coverage"]))


def test_error_rate_curve_counts_unseen_test_labels_as_outliers():
    curve = _curve(y_test=np.where(Y == 2, 9, Y))
    assert curve["detection_rate"].shape == (1,)
    assert np.all(np.isfinite(curve["coverage"][:, :2]))


GPS_BAD_FIT = [
    ("X_unlabeled-1-D", {"X_unlabeled": X[:, 0]}, r"X_unlabeled must be None or an array"),
    ("X_unlabeled-empty", {"X_unlabeled": X[:0]}, r"X_unlabeled has 0 rows"),
    (
        "class-with-one-point",
        {"y": np.r_[Y[:-1], 7]},
        "every class needs at least 2 training points",
    ),
]


@pytest.mark.parametrize("case, kwargs, match", GPS_BAD_FIT, ids=[r[0] for r in GPS_BAD_FIT])
def test_prediction_set_fit_rejects(case, kwargs, match):
    args = {"X": X, "y": Y, **kwargs}
    with pytest.raises(ValueError, match=match):
        _gps().fit(**args)


# --------------------------------------------------------------------------- graphical models
SIZES = [2, 3, 3, 2]
XL = [RNG.normal(size=(n, 2)) for n in SIZES]
YL = [np.array([0, 1]), np.array([0, 1, 0]), np.array([1, 1, 0]), np.array([0, 0])]
EL = [np.ones((n - 1, 1)) for n in SIZES]
GRAPH_MODELS = {
    "AdversarialGraphicalModel": AdversarialGraphicalModel,
    "StructuredSVM": StructuredSVM,
}


def _replace(values, index, value):
    out = list(values)
    out[index] = value
    return out


#: (case, params, fit kwargs, exception, regex)
GRAPH_BAD_FIT = [
    (
        "X-nan",
        {},
        {"X_list": _replace(XL, 0, np.full((2, 2), NAN))},
        ValueError,
        r"X_list\[0\] contains NaN",
    ),
    (
        "X-inf",
        {},
        {"X_list": _replace(XL, 0, np.full((2, 2), INF))},
        ValueError,
        r"X_list\[0\] contains NaN or infinite",
    ),
    (
        "X-single-2-D-array",
        {},
        {"X_list": XL[1], "y_list": YL[1]},
        ValueError,
        "X_list must be a list with one array per example",
    ),
    (
        "X-3-D-array",
        {},
        {"X_list": np.stack([XL[1], XL[2]]), "y_list": YL[1:3]},
        ValueError,
        "got a single 3-d array",
    ),
    (
        "X-element-1-D",
        {},
        {"X_list": _replace(XL, 0, XL[0][:, 0])},
        ValueError,
        r"X_list\[0\] must be a non-empty 2-d array",
    ),
    (
        "X-element-3-D",
        {},
        {"X_list": _replace(XL, 0, XL[0][:, :, None])},
        ValueError,
        r"X_list\[0\] must be a non-empty 2-d",
    ),
    (
        "X-empty-list",
        {},
        {"X_list": [], "y_list": []},
        ValueError,
        "X_list must hold at least one example",
    ),
    (
        "X-element-empty",
        {},
        {"X_list": _replace(XL, 0, XL[0][:0]), "y_list": _replace(YL, 0, YL[0][:0])},
        ValueError,
        r"X_list\[0\] must be a non-empty",
    ),
    (
        "X-strings",
        {},
        {"X_list": _replace(XL, 0, np.array([["a", "b"]] * 2))},
        ValueError,
        r"X_list\[0\] must be a numeric array",
    ),
    (
        "X-feature-counts-differ",
        {},
        {"X_list": _replace(XL, 1, XL[1][:, :1])},
        ValueError,
        r"X_list\[1\] has 1 columns; expected 2",
    ),
    ("y-list-short", {}, {"y_list": YL[:-1]}, ValueError, "y_list has 3 examples; X_list has 4"),
    (
        "y-sequence-short",
        {},
        {"y_list": _replace(YL, 0, YL[0][:1])},
        ValueError,
        r"y_list\[0\] must hold 2 labels \(one per node\)",
    ),
    (
        "y-sequence-2-D",
        {},
        {"y_list": _replace(YL, 0, YL[0][:, None])},
        ValueError,
        r"y_list\[0\] must hold 2 labels",
    ),
    (
        "y-one-class",
        {},
        {"y_list": [np.zeros(n, int) for n in SIZES]},
        ValueError,
        "y_list must contain at least 2 distinct labels",
    ),
    (
        "y-nan",
        {},
        {"y_list": _replace(YL, 0, np.array([0.0, NAN]))},
        ValueError,
        r"y_list\[0\] holds NaN or infinite labels",
    ),
    (
        "y-objects",
        {},
        {"y_list": _replace(YL, 0, np.array([0, "a"], dtype=object))},
        ValueError,
        r"y_list\[0\] must hold numbers or strings",
    ),
    (
        "edge-list-short",
        {},
        {"edge_X_list": EL[:-1]},
        ValueError,
        "edge_X_list has 3 examples; X_list has 4",
    ),
    (
        "edge-rows-wrong",
        {},
        {"edge_X_list": _replace(EL, 0, np.ones((3, 1)))},
        ValueError,
        r"edge_X_list\[0\] must have shape \(1, d_e\)",
    ),
    (
        "edge-1-D",
        {},
        {"edge_X_list": _replace(EL, 0, np.ones(1))},
        ValueError,
        r"edge_X_list\[0\] must have shape",
    ),
    (
        "edge-nan",
        {},
        {"edge_X_list": _replace(EL, 0, np.full((1, 1), NAN))},
        ValueError,
        r"edge_X_list\[0\] contains NaN",
    ),
    (
        "edge-strings",
        {},
        {"edge_X_list": _replace(EL, 0, np.array([["a"]]))},
        ValueError,
        r"edge_X_list\[0\] must be a numeric array",
    ),
    (
        "graph-node-count",
        {"graph": nx.path_graph(3)},
        {},
        ValueError,
        r"X_list\[0\] has 2 rows but the graph has 3 nodes",
    ),
    ("graph-name", {"graph": "grid"}, {}, ValueError, "graph must be 'chain' or a networkx.Graph"),
    ("graph-type", {"graph": 5}, {}, ValueError, "graph must be a networkx.Graph"),
    (
        "node_weights-negative",
        {"node_weights": lambda n: -np.ones(n)},
        {},
        ValueError,
        "node_weights must give 2 finite non-negative",
    ),
    (
        "node_weights-length",
        {"node_weights": np.ones(5)},
        {},
        ValueError,
        "node_weights must give 2",
    ),
    (
        "node_weights-name",
        {"node_weights": "depth"},
        {},
        ValueError,
        "node_weights must be None, 'position'",
    ),
    (
        "strength-negative",
        {"strength": -1.0},
        {},
        ValueError,
        "strength must be None or a finite number > 0",
    ),
    ("strength-nan", {"strength": NAN}, {}, ValueError, "strength must be"),
    ("uncertainty-name", {"uncertainty": "l3"}, {}, ValueError, "uncertainty must be"),
    ("loss-name", {"loss": "hinge"}, {}, ValueError, "loss must be one of"),
    (
        "loss-negative-matrix",
        {"loss": -np.ones((2, 2))},
        {},
        ValueError,
        "loss is not a valid loss matrix.*non-negative",
    ),
    (
        "loss-matrix-size",
        {"loss": np.ones((3, 3))},
        {},
        ValueError,
        "loss matrix has 3 label columns but y has 2",
    ),
    ("max_iter=0", {"max_iter": 0}, {}, ValueError, "max_iter must be an integer >= 1"),
    ("batch_size=0", {"batch_size": 0}, {}, ValueError, "batch_size must be an integer >= 1"),
    (
        "learning_rate-nan",
        {"learning_rate": NAN},
        {},
        ValueError,
        "learning_rate must be a finite positive",
    ),
]
AGM_ONLY_BAD_FIT = [
    ("solver-name", {"solver": "newton"}, {}, ValueError, "solver must be one of"),
    (
        "solver-lbfgs-nonsmooth",
        {"solver": "lbfgs"},
        {},
        NotApplicableError,
        "lbfgs needs a smooth objective",
    ),
    ("backend-name", {"backend": "gurobi"}, {}, ValueError, "backend must be"),
    ("inner-name", {"inner": "bp"}, {}, ValueError, "inner must be one of"),
    ("tol=0", {"tol": 0.0}, {}, ValueError, "tol must be a finite positive"),
    (
        "decision_loss-name",
        {"decision_loss": "hinge"},
        {},
        ValueError,
        "decision_loss must be one of",
    ),
    (
        "crf-compile",
        {"loss": "log", "solver": "compile"},
        {},
        NotApplicableError,
        "the CRF .* has no LP/QP program",
    ),
    (
        "crf-cycle",
        {"loss": "log", "graph": nx.cycle_graph(3)},
        {"X_list": XL[1:3], "y_list": YL[1:3]},
        NotApplicableError,
        "exact on forests",
    ),
]
SSVM_ONLY_BAD_FIT = [
    ("loss-log", {"loss": "log"}, {}, ValueError, "loss='log' is the CRF"),
    ("loss-non-square", {"loss": np.ones((3, 2))}, {}, ValueError, "needs a square loss matrix"),
    (
        "cycle",
        {"graph": nx.cycle_graph(3)},
        {"X_list": XL[1:3], "y_list": YL[1:3]},
        NotApplicableError,
        "exact on forests",
    ),
]
GRAPH_FIT_CASES = [("AdversarialGraphicalModel", *r) for r in GRAPH_BAD_FIT + AGM_ONLY_BAD_FIT] + [
    ("StructuredSVM", *r) for r in GRAPH_BAD_FIT + SSVM_ONLY_BAD_FIT
]


@pytest.mark.parametrize(
    "name, case, params, kwargs, exc, match",
    GRAPH_FIT_CASES,
    ids=[f"{r[0]}-{r[1]}" for r in GRAPH_FIT_CASES],
)
def test_graphical_fit_rejects(name, case, params, kwargs, exc, match):
    args = {"X_list": XL, "y_list": YL, **kwargs}
    if "edge_X_list" in kwargs:
        args.setdefault("edge_X_list", EL)
    with pytest.raises(exc, match=match):
        GRAPH_MODELS[name](**params).fit(**args)


_GRAPH_FITTED = {}


def _graph_fitted(name, edges):
    key = (name, edges)
    if key not in _GRAPH_FITTED:
        _GRAPH_FITTED[key] = GRAPH_MODELS[name](random_state=0).fit(XL, YL, EL if edges else None)
    return _GRAPH_FITTED[key]


#: (case, fitted with edges, predict args, regex)
GRAPH_BAD_PREDICT = [
    (
        "fewer-features",
        False,
        ([XL[0][:, :1]],),
        r"X_list\[0\] has 1 columns; expected 2 \(as in fit\)",
    ),
    ("nan", False, ([np.full((2, 2), NAN)],), r"X_list\[0\] contains NaN"),
    ("single-array", False, (XL[0],), "X_list must be a list"),
    ("edges-missing", True, (XL,), "this model was fitted with edge_X_list; pass it again"),
    ("edges-extra", False, (XL, EL), "this model was fitted without edge_X_list; do not pass one"),
    (
        "edges-width",
        True,
        (XL, [np.ones((n - 1, 2)) for n in SIZES]),
        r"edge_X_list\[0\] must have shape \(1, 1\)",
    ),
]
GRAPH_PREDICT_CASES = [(n, *r) for n in GRAPH_MODELS for r in GRAPH_BAD_PREDICT]


@pytest.mark.parametrize(
    "name, case, edges, args, match",
    GRAPH_PREDICT_CASES,
    ids=[f"{r[0]}-{r[1]}" for r in GRAPH_PREDICT_CASES],
)
def test_graphical_predict_rejects(name, case, edges, args, match):
    with pytest.raises(ValueError, match=match):
        _graph_fitted(name, edges).predict(*args)


@pytest.mark.parametrize("name", list(GRAPH_MODELS))
def test_graphical_score_with_unseen_labels_is_an_error(name):
    """score needs each true label's row of the loss matrix: an unseen label has none."""
    with pytest.raises(ValueError, match="y_list holds labels not seen in fit: \\[5 6\\]"):
        _graph_fitted(name, False).score(XL, [y + 5 for y in YL])


@pytest.mark.parametrize("name", list(GRAPH_MODELS))
@pytest.mark.parametrize(
    "case, X_list, y_list",
    [
        ("one-feature", [x[:, :1] for x in XL], YL),
        ("one-example", XL[1:2], YL[1:2]),
        ("single-node-examples", [x[:1] for x in XL], [np.array([v]) for v in (0, 1, 0, 1)]),
        ("string-labels", XL, [np.array(["p", "q"])[y] for y in YL]),
    ],
)
def test_graphical_edge_cases_work(name, case, X_list, y_list):
    model = GRAPH_MODELS[name](random_state=0).fit(X_list, y_list)
    predicted = model.predict(X_list)
    assert [p.shape for p in predicted] == [np.shape(y) for y in y_list]
    assert set(np.concatenate(predicted)) <= set(np.concatenate(y_list))
