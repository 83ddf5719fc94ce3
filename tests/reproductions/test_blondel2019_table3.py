"""Blondel (2019), Table 3 and the scene cells: the two permutahedron encodings, the polynomial
model, the paper's test-part size and the scene data's own split
(:mod:`advgame.reproductions.blondel2019`)."""

from itertools import permutations

import numpy as np
import pytest

from advgame.datasets import load
from advgame.metrics import permutation_hamming_loss
from advgame.reproductions import blondel2019 as pl

ALL_RANKINGS_4 = np.array(list(permutations(range(1, 5))))


def _label_at_rank(R):
    """By a loop: ``out[i, p]`` = the label (0-based) that ranking ``R[i]`` puts at rank ``p + 1``."""
    out = np.empty_like(R)
    for i, row in enumerate(R):
        for label, rank in enumerate(row):
            out[i, rank - 1] = label
    return out


def test_order_encoding_is_one_plus_the_label_at_each_rank_and_inverts():
    R = ALL_RANKINGS_4
    encoded = pl.order_encoded(R)
    # LabelRanker's permutahedron target k + 1 - R' is then the published code's target, + 1
    np.testing.assert_array_equal(5 - encoded, 1 + _label_at_rank(R))
    assert all(sorted(row) == [1, 2, 3, 4] for row in encoded)  # rankings again
    np.testing.assert_array_equal(pl.order_decoded(encoded), R)


def test_hamming_loss_is_the_same_on_rankings_and_on_their_order_encoding():
    rng = np.random.default_rng(3)
    truth = ALL_RANKINGS_4[rng.integers(len(ALL_RANKINGS_4), size=50)]
    guess = ALL_RANKINGS_4[rng.integers(len(ALL_RANKINGS_4), size=50)]
    direct = permutation_hamming_loss(truth, guess)
    assert direct > 0
    assert permutation_hamming_loss(
        pl.order_encoded(truth), pl.order_encoded(guess)
    ) == pytest.approx(direct)


@pytest.mark.parametrize("encoding", ["ranks", "order"])
def test_permutahedron_ranker_recovers_rankings_a_linear_model_can_express(encoding):
    # x = one-hot of the ranking: the linear model can give each ranking its own target, so a
    # weakly regularised fit decodes every row back, whichever encoding it was trained on
    truth = np.repeat(ALL_RANKINGS_4, 4, axis=0)
    X = np.repeat(np.eye(len(ALL_RANKINGS_4)), 4, axis=0)
    model = pl.PermutahedronRanker(1e-3, None, encoding).fit(X, truth)
    np.testing.assert_array_equal(model.predict(X), truth)
    np.testing.assert_array_equal(
        model.predict_matrix(X).argmax(axis=2) + 1, truth
    )  # rank of label j at [i, j]


def test_polynomial_model_uses_the_kernel_values_against_the_training_inputs():
    rng = np.random.default_rng(1)
    X, Z = rng.normal(size=(30, 3)), rng.normal(size=(5, 3))
    R = ALL_RANKINGS_4[rng.integers(len(ALL_RANKINGS_4), size=30)]
    model = pl.PermutahedronRanker(1.0, 2, "ranks").fit(X, R)
    np.testing.assert_allclose(model._features(Z), (Z @ X.T + 1.0) ** 2)
    assert model.ranker_.coef_.shape[0] == 30  # one weight per training input and label


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"encoding": "labels"}, "encoding must be"), ({"degree": 0}, "degree must be")],
)
def test_permutahedron_ranker_rejects_bad_options(kwargs, message):
    with pytest.raises(ValueError, match=message):
        pl.PermutahedronRanker(1.0, **kwargs)


def test_paper_hamming_losses_are_multiples_of_one_test_entry_for_our_test_size():
    """Tables 1-2 of Blondel (2019) on a test part of ``test_size(n)`` rows: every published
    value (2 decimals) is a whole number of wrong entries of the ``k x k`` matrices; for vehicle
    and authorship one row fewer (rounding 0.2 n to nearest) does not fit."""
    sizes = {"iris": (150, 3), "wine": (178, 3), "vehicle": (846, 4), "authorship": (841, 4)}

    def worst_residual(name, n_test):
        k = sizes[name][1]
        entry = 100.0 / (k * k * n_test)
        values = [v for table in pl.PAPER_RANKING.values() for v in table[name] if v is not None]
        return max(abs(v / entry - round(v / entry)) * entry for v in values)

    for name, (n, _) in sizes.items():
        assert worst_residual(name, pl.test_size(n)) <= 0.005 + 1e-9, name
    assert [pl.test_size(n) for n, _ in sizes.values()] == [30, 36, 170, 169]
    for name in ("vehicle", "authorship"):
        assert worst_residual(name, pl.test_size(sizes[name][0]) - 1) > 0.005, name


def test_scene_is_run_on_its_authors_split():
    data = load("multilabel/scene")
    X, Y, splits = pl._multilabel_splits("scene", data, pl.FULL, np.random.default_rng(0))
    assert X.shape == (2407, 294) and Y.shape == (2407, 6)
    [(train, test)] = splits
    assert (len(train), len(test)) == (1211, 1196)  # Blondel (2019), Table 5: 908 + 303, 1196
    assert set(data.split[train]) == {"train"} and set(data.split[test]) == {"test"}


def test_published_values_align_by_column_name():
    papers = pl._published()
    assert papers["Table 3"]["iris"]["P/P D=3 order"] == 5.93
    assert papers["Table 3"]["vehicle"]["B/B"] == papers["Euclidean"]["vehicle"]["B/B"] == 5.88
    assert papers["accuracy"]["scene"]["K/K"] == 90.79
    assert papers["F1"]["scene"]["R/K"] == 50.33
    assert "matching" not in papers["Euclidean"]["iris"] or (
        papers["Euclidean"]["iris"]["matching"] is None
    )


def test_split_shift_recovers_a_shift_common_to_every_column():
    common = np.array([1.0, -1.0, 0.5, -0.5])
    splits = {"a": list(5 + common), "b": list(9 + common), "c": list(7 + common + [0, 0, 0, 0])}
    paper = {"a": 4.0, "b": 8.0, "c": None}  # one below the mean in both published columns
    out = pl.split_shift(splits, paper)
    np.testing.assert_allclose(out["shifts"], common)
    assert out["paper"] == pytest.approx(-1.0)
    assert out["as_far"] == pytest.approx(0.25)  # only the split at -1 is as far down
    assert out["sd"] == pytest.approx(np.std(common, ddof=1))
    with pytest.raises(ValueError, match="no column"):
        pl.split_shift(splits, {"z": 1.0})
