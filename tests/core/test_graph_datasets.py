"""The synthetic ordinal-sequence generator (``datasets.make_ordinal_sequences``)."""

import numpy as np
import pytest

from advgame import datasets


def test_shapes_dtypes_and_label_range():
    X_list, y_list = datasets.make_ordinal_sequences(
        n_sequences=30, length=(5, 9), n_features=4, n_labels=5, random_state=0
    )
    assert isinstance(X_list, list) and isinstance(y_list, list)
    assert len(X_list) == len(y_list) == 30
    lengths = set()
    for X, y in zip(X_list, y_list):
        assert X.dtype == np.float64 and y.dtype == np.int64
        assert X.ndim == 2 and X.shape[1] == 4 and y.shape == (X.shape[0],)
        assert 5 <= len(y) <= 9
        assert y.min() >= 0 and y.max() <= 4
        assert np.all(np.isfinite(X))
        lengths.add(len(y))
    assert len(lengths) > 1  # lengths vary
    assert "make_ordinal_sequences" in datasets.__all__


def test_fixed_length_and_defaults():
    X_list, y_list = datasets.make_ordinal_sequences(n_sequences=3, length=7, random_state=1)
    assert [X.shape for X in X_list] == [(7, 6)] * 3
    X_list, y_list = datasets.make_ordinal_sequences(random_state=2)
    assert len(X_list) == 200 and all(8 <= len(y) <= 16 for y in y_list)
    assert set(np.concatenate(y_list)) == {0, 1, 2}


def test_reproducible_with_a_seed_and_different_across_seeds():
    first = datasets.make_ordinal_sequences(n_sequences=10, random_state=42)
    again = datasets.make_ordinal_sequences(n_sequences=10, random_state=np.random.default_rng(42))
    for a, b in zip(first[0] + first[1], again[0] + again[1]):
        np.testing.assert_array_equal(a, b)
    other = datasets.make_ordinal_sequences(n_sequences=10, random_state=43)
    assert not all(a.shape == b.shape and np.array_equal(a, b) for a, b in zip(first[0], other[0]))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_labels_are_ordinal_along_one_direction(seed):
    X_list, y_list = datasets.make_ordinal_sequences(
        n_sequences=300, n_features=8, n_labels=4, noise=0.1, random_state=seed
    )
    X, y = np.concatenate(X_list), np.concatenate(y_list)
    # First principal direction of the pooled features, oriented from class 0 to the top class.
    centred = X - X.mean(axis=0)
    direction = np.linalg.svd(centred, full_matrices=False)[2][0]
    projection = centred @ direction
    means = np.array([projection[y == c].mean() for c in range(4)])
    if means[-1] < means[0]:
        means = -means
    assert np.all(np.diff(means) > 0), means


def test_sequences_tend_to_rise_from_neutral():
    _, y_list = datasets.make_ordinal_sequences(n_sequences=400, noise=0.0, random_state=5)
    starts = np.array([y[0] for y in y_list])
    ends = np.array([y[-1] for y in y_list])
    assert np.mean(starts == 0) > 0.7
    assert ends.mean() > starts.mean() + 0.5


def test_without_noise_labels_move_by_at_most_one_step():
    _, y_list = datasets.make_ordinal_sequences(
        n_sequences=100, n_labels=5, noise=0.0, transition_stickiness=0.3, random_state=6
    )
    steps = np.concatenate([np.diff(y) for y in y_list])
    assert np.abs(steps).max() == 1  # moves happen, and only by one step
    _, y_list = datasets.make_ordinal_sequences(
        n_sequences=50, n_labels=5, noise=0.5, transition_stickiness=0.3, random_state=6
    )
    assert np.abs(np.concatenate([np.diff(y) for y in y_list])).max() > 1  # label noise jumps


def test_full_stickiness_gives_constant_clean_chains():
    _, y_list = datasets.make_ordinal_sequences(
        n_sequences=20, noise=0.0, transition_stickiness=1.0, random_state=7
    )
    assert all(np.all(y == y[0]) for y in y_list)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_sequences": 0}, "n_sequences"),
        ({"n_sequences": 2.5}, "n_sequences"),
        ({"n_features": 0}, "n_features"),
        ({"n_labels": 1}, "n_labels"),
        ({"noise": -0.1}, "noise"),
        ({"noise": 1.0}, "noise"),
        ({"noise": "a"}, "noise"),
        ({"transition_stickiness": 1.5}, "transition_stickiness"),
        ({"length": (0, 5)}, "length"),
        ({"length": (9, 8)}, "length"),
        ({"length": 0}, "length"),
        ({"length": (3.0, 5)}, "length"),
        ({"length": (1, 2, 3)}, "length"),
        ({"length": None}, "length"),
    ],
)
def test_bad_arguments_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        datasets.make_ordinal_sequences(**kwargs)
