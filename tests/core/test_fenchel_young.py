"""Fenchel-Young losses over Blondel 2019's polytopes."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp

from advgame.polytopes import (
    Birkhoff,
    FenchelYoungLoss,
    Knapsack,
    OrderSimplex,
    Permutahedron,
    RowStochastic,
    Simplex,
    UnitCube,
)

POLYTOPES = {
    "simplex": (Simplex(), (4,)),
    "cube": (UnitCube(), (4,)),
    "knapsack": (Knapsack(1, 2), (4,)),
    "order simplex": (OrderSimplex(), (3,)),
    "permutahedron": (Permutahedron(np.array([3.0, 2.0, 1.0, 0.5])), (4,)),
    "birkhoff": (Birkhoff(), (3, 3)),
    "row stochastic": (RowStochastic(), (3, 3)),
}


def _case(name, seed):
    polytope, shape = POLYTOPES[name]
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(5, *shape))
    target = polytope.argmax(rng.normal(size=(5, *shape)))  # vertices, i.e. phi(y) of labels
    return polytope, theta, target


@pytest.mark.parametrize("geometry", ["euclidean", "kl"])
@pytest.mark.parametrize("name", list(POLYTOPES))
def test_gradient_matches_finite_differences(name, geometry):
    polytope, theta, target = _case(name, 0)
    loss = FenchelYoungLoss(polytope, geometry)
    value, gradient = loss.value_and_gradient(theta, target)
    assert np.all(value >= 0)
    h = 1e-6
    numeric = np.zeros_like(theta)
    for index in np.ndindex(theta.shape[1:]):
        step = np.zeros_like(theta)
        step[(slice(None), *index)] = h
        numeric[(slice(None), *index)] = (
            loss(theta + step, target) - loss(theta - step, target)
        ) / (2 * h)
    np.testing.assert_allclose(gradient, numeric, atol=1e-5)


def test_simplex_kl_is_the_logistic_loss():
    rng = np.random.default_rng(1)
    theta = rng.normal(size=(20, 5)) * 3
    y = rng.integers(0, 5, size=20)
    value = FenchelYoungLoss(Simplex(), "kl")(theta, np.eye(5)[y])
    np.testing.assert_allclose(
        value, logsumexp(theta, axis=1) - theta[np.arange(20), y], atol=1e-10
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-1e3, 1e3), min_size=2, max_size=6),
    st.integers(0, 5),
    st.sampled_from(["euclidean", "kl"]),
)
def test_non_negative_and_zero_iff_prediction_hits_target(values, label, geometry):
    theta = np.array(values)
    k = theta.size
    target = np.eye(k)[label % k]
    loss = FenchelYoungLoss(Simplex(), geometry)
    value, gradient = loss.value_and_gradient(theta, target)
    assert value >= 0
    scale = max(1.0, np.abs(theta).max())
    if np.allclose(gradient, 0, atol=1e-12):
        assert value <= 1e-9 * scale
    # a decisive potential on the target drives the Euclidean loss to exactly zero
    decisive = target * 10.0
    assert FenchelYoungLoss(Simplex(), "euclidean")(decisive, target) == 0.0


def test_bad_inputs():
    loss = FenchelYoungLoss(Simplex())
    with pytest.raises(ValueError, match="lie in"):
        loss(np.zeros(3), np.array([0.5, 0.6, 0.0]))
    with pytest.raises(ValueError, match="shape"):
        loss(np.zeros((2, 3)), np.eye(3)[:1])
    with pytest.raises(ValueError, match="Polytope"):
        FenchelYoungLoss("simplex")
    with pytest.raises(ValueError):
        FenchelYoungLoss(Simplex(), "l2")
    with pytest.raises(ValueError):
        loss(np.array([np.nan, 0.0, 1.0]), np.eye(3)[0])
