"""``make_ordinal_sequences``'s misspecification options: downward label noise and class-dependent
feature spread, checked against the clean draws of the same seed."""

import numpy as np
import pytest

from advgame import datasets


def _stacked(**options):
    X, y = datasets.make_ordinal_sequences(n_sequences=300, random_state=11, **options)
    return np.concatenate(X), np.concatenate(y)


def test_downward_noise_lowers_the_corrupted_labels_one_step():
    X_clean, clean = _stacked(noise=0.0)
    X_noisy, noisy = _stacked(noise=0.3, noise_kind="downward")
    np.testing.assert_array_equal(X_noisy, X_clean)  # same draws: only the labels change
    changed = noisy != clean
    assert np.all(noisy[changed] == clean[changed] - 1)  # one step down, never up
    assert not np.any(changed & (clean == 0))  # neutral stays neutral
    rate = changed[clean > 0].mean()  # corrupted with probability 0.3 where it can move
    assert 0.25 < rate < 0.35
    _, symmetric = _stacked(noise=0.3)
    assert np.any(symmetric > clean)  # the default noise also moves labels up


def test_scale_growth_multiplies_each_class_spread():
    X_flat, clean = _stacked(noise=0.0)
    X_grown, same = _stacked(noise=0.0, scale_growth=2.0)
    np.testing.assert_array_equal(same, clean)
    for c in range(3):
        rows = clean == c
        # the same noise draws, scaled by 2**c around the class mean
        centre = X_flat[rows].mean(axis=0)
        np.testing.assert_allclose(
            X_grown[rows] - X_grown[rows].mean(axis=0), 2.0**c * (X_flat[rows] - centre)
        )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"noise_kind": "upward"}, "noise_kind must be one of"),
        ({"scale_growth": 0.0}, "scale_growth must be a finite positive number"),
        ({"scale_growth": float("nan")}, "scale_growth must be a finite positive number"),
        ({"scale_growth": True}, "scale_growth must be a finite positive number"),
    ],
)
def test_bad_options_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        datasets.make_ordinal_sequences(n_sequences=3, **options)
