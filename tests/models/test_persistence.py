"""Persistence of every fitted estimator ([reliability] item 5).

Each estimator, fitted on tiny data, survives ``pickle`` with identical outputs, ``clone`` gives an
unfitted copy with equal parameters, and the pickle holds no solver handle: no ``highspy``
object, cvxpy problem, lock or joblib pool is referenced by the byte stream (such handles are
dropped by ``__getstate__`` and rebuilt lazily).
"""

import pickle
import pickletools
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from advgame.baselines import (
    AllThresholdSVOR,
    CostSensitiveOneVsOneSVC,
    CrammerSingerAbstain,
    ReductionThresholdSVOR,
    WestonWatkinsSVC,
)
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
)

RNG = np.random.default_rng(1)
X = RNG.normal(size=(12, 2))
Y = np.arange(12) % 3
RANKS = np.array([RNG.permutation(3) + 1 for _ in range(12)])
#: A loss matrix with no closed form: the game runs on the persistent HiGHS LP oracle.
GENERAL = np.array([[0.0, 1.0, 2.5], [1.3, 0.0, 0.7], [2.0, 0.4, 0.0], [0.9, 0.8, 0.6]])

ESTIMATORS = {
    "AdversarialClassifier-general-compile": (
        lambda: AdversarialClassifier(loss=GENERAL, solver="compile"),
        Y,
    ),
    "AdversarialClassifier-general-lbfgs": (
        lambda: AdversarialClassifier(loss=GENERAL, solver="lbfgs", random_state=0),
        Y,
    ),
    "AdversarialClassifier-abstain-rbf": (
        lambda: AdversarialClassifier(loss="abstain", kernel="rbf", solver="compile"),
        Y,
    ),
    "MinimaxClassifier-compile": (lambda: MinimaxClassifier(solver="compile"), Y),
    "MinimaxClassifier-fast": (lambda: MinimaxClassifier(solver="fast"), Y),
    "MinimaxRegressor": (lambda: MinimaxRegressor(), X[:, 0] * 2.0),
    "ProjectionClassifier": (lambda: ProjectionClassifier(), Y),
    "LabelRanker": (lambda: LabelRanker(), RANKS),
    "AdversarialMatching-compile": (lambda: AdversarialMatching(solver="compile"), RANKS),
    "GeneralizedPredictionSet": (
        lambda: GeneralizedPredictionSet(error_rate=0.2, n_unlabeled=5, random_state=0),
        Y,
    ),
    "WestonWatkinsSVC": (lambda: WestonWatkinsSVC(), Y),
    "CrammerSingerAbstain": (lambda: CrammerSingerAbstain(), Y),
    "AllThresholdSVOR": (lambda: AllThresholdSVOR(), Y),
    "ReductionThresholdSVOR": (lambda: ReductionThresholdSVOR(), Y),
    "CostSensitiveOneVsOneSVC": (lambda: CostSensitiveOneVsOneSVC(), Y),
}
OUTPUTS = (
    "predict",
    "predict_proba",
    "predict_action_proba",
    "decision_function",
    "decision_scores",
    "predict_set",
    "predict_matrix",
    "predict_marginals",
)
#: Modules whose objects are solver state or synchronisation handles, never to be pickled.
FORBIDDEN_MODULES = ("highspy", "cvxpy", "_thread", "threading", "joblib", "loky", "clarabel")


def _fit(factory, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return factory().fit(*args)


def _pickled_modules(blob):
    """Module names referenced by the pickle's GLOBAL / STACK_GLOBAL opcodes."""
    modules, strings = set(), []
    for opcode, arg, _ in pickletools.genops(blob):
        if opcode.name == "GLOBAL":
            modules.add(arg.split(" ")[0])
        elif opcode.name == "STACK_GLOBAL" and len(strings) >= 2:
            modules.add(strings[-2])
        if isinstance(arg, str):
            strings.append(arg)
    return modules


def _handles(obj, seen=None, path="model"):
    """Paths of live solver handles reachable from ``obj`` (highspy.Highs, cvxpy problems)."""
    import cvxpy as cp
    import highspy

    seen = set() if seen is None else seen
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    if isinstance(obj, (highspy.Highs, cp.Problem)):
        return [path]
    found = []
    if isinstance(obj, dict):
        items = obj.items()
    elif isinstance(obj, (list, tuple)):
        items = enumerate(obj)
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        items = vars(obj).items()
    else:
        return []
    for key, value in items:
        found += _handles(value, seen, f"{path}.{key}")
    return found


def _is_crf(model):
    return isinstance(getattr(model, "loss", None), str) and model.loss == "log"


def _outputs(model, *args):
    return {
        name: getattr(model, name)(*args)
        for name in OUTPUTS
        if hasattr(model, name) and not (name == "predict_marginals" and not _is_crf(model))
    }


def _assert_same(before, after):
    """Labels and sets bitwise; real outputs to 1e-12 (BLAS kernels round differently with the
    memory alignment of an array, and an unpickled ``X_fit_`` lives at a new address: the same
    model given ``X.copy()`` differs by an ulp too)."""
    assert before.keys() == after.keys()
    for name in before:
        a, b = before[name], after[name]
        pairs = zip(a, b) if isinstance(a, list) else [(a, b)]  # graphical: one per example
        assert len(a) == len(b)
        for u, v in pairs:
            u, v = np.asarray(u), np.asarray(v)
            if u.dtype.kind == "f":
                np.testing.assert_allclose(u, v, rtol=0, atol=1e-12, err_msg=name)
            else:
                np.testing.assert_array_equal(u, v, err_msg=name)


def _check_roundtrip(model, *predict_args):
    before = _outputs(model, *predict_args)  # builds any lazy solver state first
    blob = pickle.dumps(model)
    bad = sorted(m for m in _pickled_modules(blob) if m.split(".")[0] in FORBIDDEN_MODULES)
    assert not bad, f"the pickle references solver/lock modules {bad}"
    restored = pickle.loads(blob)
    assert not _handles(restored), _handles(restored)
    _assert_same(before, _outputs(restored, *predict_args))
    _assert_same(before, _outputs(pickle.loads(pickle.dumps(restored)), *predict_args))
    return restored


def _check_clone(model):
    for source in (model, clone(model)):
        copy = clone(source)
        with pytest.raises(NotFittedError):
            check_is_fitted(copy)
        params, expected = copy.get_params(deep=False), model.get_params(deep=False)
        assert params.keys() == expected.keys()
        for key, value in expected.items():
            if isinstance(value, np.ndarray):
                np.testing.assert_array_equal(params[key], value)
            else:
                assert params[key] == value or params[key] is value, key


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_pickle_roundtrip_gives_identical_outputs_and_no_handles(name):
    factory, target = ESTIMATORS[name]
    model = _fit(factory, X, target)
    _check_roundtrip(model, X)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_clone_of_fitted_and_unfitted_is_unfitted_with_equal_params(name):
    factory, target = ESTIMATORS[name]
    _check_clone(_fit(factory, X, target))


def test_unpickled_general_game_rebuilds_its_lp_oracle_lazily():
    """The HiGHS oracle of the fitted game is dropped by pickling and rebuilt on first use."""
    model = _fit(ESTIMATORS["AdversarialClassifier-general-compile"][0], X, Y)
    F = model.decision_function(X)
    lp = model.game_.game().value(F, method="lp")
    assert model.game_.game()._oracle._highs is not None
    restored = pickle.loads(pickle.dumps(model))
    assert restored.game_.game()._oracle._highs is None
    np.testing.assert_array_equal(restored.game_.game().value(F, method="lp"), lp)
    assert restored.game_.game()._oracle._highs is not None


SIZES = [2, 3, 3, 2]
XL = [RNG.normal(size=(n, 2)) for n in SIZES]
YL = [np.array([0, 1]), np.array([0, 1, 0]), np.array([1, 1, 0]), np.array([0, 0])]
GRAPH_ESTIMATORS = {
    "AdversarialGraphicalModel-compile": lambda: AdversarialGraphicalModel(solver="compile"),
    "AdversarialGraphicalModel-general-subgradient": lambda: AdversarialGraphicalModel(
        loss=GENERAL[:2, :2] + [[0, 0.5], [0.2, 0]], solver="subgradient", random_state=0
    ),
    "AdversarialGraphicalModel-crf": lambda: AdversarialGraphicalModel(loss="log"),
    "StructuredSVM": lambda: StructuredSVM(random_state=0),
}


@pytest.mark.parametrize("name", list(GRAPH_ESTIMATORS))
def test_graphical_pickle_and_clone(name):
    model = _fit(GRAPH_ESTIMATORS[name], XL, YL)
    _check_roundtrip(model, XL)
    _check_clone(model)


def test_the_handle_checks_can_fail():
    """The byte-stream check sees a pickled cvxpy object; the walk finds a live HiGHS handle."""
    import cvxpy as cp
    import highspy

    assert "cvxpy" in {m.split(".")[0] for m in _pickled_modules(pickle.dumps(cp.Variable(2)))}
    holder = type("Holder", (), {})()
    holder.inner = {"h": [highspy.Highs()]}
    assert _handles(holder) == ["model.inner.h.0"]


LINEAR_COMPILED = {
    "AdversarialClassifier": lambda: AdversarialClassifier(solver="compile"),
    "MinimaxClassifier": lambda: MinimaxClassifier(solver="compile"),
    "AdversarialMatching": lambda: AdversarialMatching(solver="compile"),
}


@pytest.mark.parametrize("name", list(LINEAR_COMPILED))
def test_pickle_of_a_linear_model_does_not_grow_with_the_training_data(name):
    """The compiled program (the training data) stays in memory, out of the pickle."""
    sizes = []
    for n in (30, 240):
        rng = np.random.default_rng(n)
        X_n = rng.normal(size=(n, 2))
        target = (
            np.array([rng.permutation(3) + 1 for _ in range(n)])
            if name == "AdversarialMatching"
            else np.arange(n) % 3
        )
        model = LINEAR_COMPILED[name]().fit(X_n, target)
        assert model.program_ is not None
        restored = pickle.loads(pickle.dumps(model))
        assert not hasattr(restored, "program_") and model.program_ is not None
        sizes.append(len(pickle.dumps(model)))
    assert sizes[1] <= 1.1 * sizes[0], sizes


def test_graphical_model_pickle_drops_its_compiled_program():
    import networkx as nx

    chain = nx.path_graph(3)
    rng = np.random.default_rng(0)
    X_list = [rng.normal(size=(3, 2)) for _ in range(8)]
    y_list = [rng.integers(0, 2, size=3) for _ in range(8)]
    model = AdversarialGraphicalModel(graph=chain, solver="compile").fit(X_list, y_list)
    assert model.compiled_ is not None
    restored = pickle.loads(pickle.dumps(model))
    assert not hasattr(restored, "program_") and not hasattr(restored, "compiled_")
    assert model.compiled_ is not None  # pickling leaves the fitted model itself untouched
    for a, b in zip(model.predict(X_list), restored.predict(X_list)):
        np.testing.assert_array_equal(a, b)
