"""Numerical robustness of the estimators ([reliability] item 2): nearly singular features and
highly unbalanced classes.  The exact compiled program is the reference for the fast solvers."""

import warnings

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import advgame as ag


def _nearly_singular(n=80, seed=0):
    """Three informative columns, a copy of the first perturbed by 1e-9, and a column scaled by
    1e6: the Gram matrix X^T X has a condition number beyond 1e20."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 3))
    y = np.argmax(Z @ rng.normal(size=(3, 3)), axis=1)
    X = np.column_stack([Z, Z[:, 0] + 1e-9 * rng.normal(size=n), 1e6 * Z[:, 1]])
    return X, y


def _unbalanced(n=200, minority=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.zeros(n, dtype=int)
    y[:minority] = 1
    X[:minority] += 3.0  # the minority class is separable, so a good model must predict it
    return X, y


@pytest.mark.parametrize("loss", ["zero_one", "ordinal", "abstain"])
def test_classifier_fast_solver_matches_the_exact_program_on_nearly_singular_features(loss):
    X, y = _nearly_singular()
    exact = ag.AdversarialClassifier(loss=loss, solver="compile").fit(X, y)
    fast = ag.AdversarialClassifier(loss=loss, solver="lbfgs", random_state=0, tol=1e-4)
    fast.fit(X, y)
    for model in (exact, fast):
        assert np.all(np.isfinite(model.theta_)) and np.all(np.isfinite(model.predict_proba(X)))
    # the certified fast solver reaches the exact optimum (relative to the objective's scale)
    assert fast.objective_ == pytest.approx(exact.objective_, rel=1e-5, abs=1e-7)
    assert fast.objective_ - fast.gap_ <= exact.objective_ + 1e-7


@pytest.mark.parametrize("loss", ["brier", "log"])
def test_minimax_classifier_never_claims_convergence_it_cannot_certify(loss):
    X, y = _nearly_singular()  # the 1e6-scaled column makes first-order steps tiny
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        raw = ag.MinimaxClassifier(loss=loss, radius=0.05, max_iter=300).fit(X, y)
    certified = raw.duality_gap_ <= 1e-4 * max(1.0, abs(raw.objective_))
    warned = any(issubclass(w.category, ag.ConvergenceWarning) for w in caught)
    assert certified or (warned and raw.converged_ == "uncertified")
    scaled = make_pipeline(StandardScaler(), ag.MinimaxClassifier(loss=loss, radius=0.05))
    model = scaled.fit(X, y)[-1]
    assert model.stop_reason_.startswith(("FISTA: converged", "L-BFGS"))
    assert model.duality_gap_ <= 1e-4 * max(1.0, abs(model.objective_))


@pytest.mark.parametrize(
    "make",
    [
        lambda: ag.AdversarialClassifier(solver="compile"),
        lambda: ag.AdversarialClassifier(solver="lbfgs", random_state=0),
        lambda: ag.MinimaxClassifier(loss="brier", radius=0.01),
        lambda: ag.ProjectionClassifier(),
    ],
    ids=["adversarial-compile", "adversarial-lbfgs", "minimax-brier", "projection"],
)
def test_highly_unbalanced_classes_are_learnt_not_ignored(make):
    X, y = _unbalanced()
    model = make().fit(X, y)
    assert list(model.classes_) == [0, 1]
    predicted = model.predict(X)
    assert np.all(predicted[4:] == 0)  # 196 majority points
    assert np.mean(predicted[:4] == 1) >= 0.75  # the 4 separable minority points
    if hasattr(model, "predict_proba"):
        proba = model.predict_proba(X)
        assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)


def test_sample_weights_rebalance_like_duplication():
    X, y = _unbalanced(minority=6)
    weights = np.where(y == 1, 10.0, 1.0)
    weighted = ag.AdversarialClassifier(solver="compile").fit(X, y, sample_weight=weights)
    duplicated = ag.AdversarialClassifier(solver="compile").fit(
        np.vstack([X] + [X[y == 1]] * 9), np.concatenate([y] + [y[y == 1]] * 9)
    )
    np.testing.assert_allclose(weighted.theta_, duplicated.theta_, atol=1e-6)
