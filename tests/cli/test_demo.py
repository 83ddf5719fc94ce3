"""The demo's scoring (advgame/demo.py): the mean loss of the played actions and logistic
regression's Bayes rule, against direct computations."""

import numpy as np
import pytest

from advgame import demo


def test_mean_loss_reads_the_actions():
    classes = np.array(["bus", "opel", "van"])
    L, actions = demo._loss_matrix("abstain", classes)
    predicted = np.array(["van", demo.ABSTAIN, "bus", "opel"])
    y_index = np.array([2, 0, 1, 1])
    # right, abstained, wrong, right
    assert demo._mean_loss(L, actions, y_index, predicted) == pytest.approx((0 + 0.3 + 1 + 0) / 4)


@pytest.mark.parametrize("kind", ["abstain", "ordinal"])
def test_bayes_rule(kind):
    """Abstain exactly when the top probability is below 1 - alpha; the median class for the
    ordinal loss."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(120, 3)), np.arange(120) % 4
    L, actions = demo._loss_matrix(kind, np.arange(4))
    rule = demo._BayesRule(0.01, L, actions).fit(X, y)
    P = rule.model.predict_proba(X)
    predicted = rule.predict(X)
    if kind == "abstain":
        expected = np.where(P.max(axis=1) < 1 - demo.ALPHA, demo.ABSTAIN, P.argmax(axis=1))
    else:
        expected = np.argmax(np.cumsum(P, axis=1) >= 0.5, axis=1)
    np.testing.assert_array_equal(predicted.astype(str), expected.astype(str))
    assert rule.model.C == pytest.approx(1 / (120 * 0.01))
