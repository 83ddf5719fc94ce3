import numpy as np
import pytest

from advgame import datasets


@pytest.mark.parametrize("name", datasets.list_datasets())
def test_every_vendored_file_loads_with_manifest_shape(name):
    data = datasets.load(name)  # verifies the SHA-256 of the uncompressed CSV
    manifest = datasets._manifest()[name]
    assert data.X.shape[0] == int(manifest["n_rows"])
    # one-hot categories (abalone's sex in {F, I, M}; the binary sets' attributes) widen X
    categorical = {name_.split("=")[0] for name_ in data.feature_names if "=" in name_}
    plain = [name_ for name_ in data.feature_names if "=" not in name_]
    assert len(categorical) + len(plain) == int(manifest["n_features"])
    if name == "ordinal/abalone":
        assert data.X.shape[1] == int(manifest["n_features"]) + 2
    if data.task != "binary":  # only the binary sets have missing values (NaN if numeric)
        assert np.all(np.isfinite(data.X))
    if data.task == "label_ranking":
        k = int(manifest["n_classes_or_labels"])
        assert np.array_equal(
            np.sort(data.y, axis=1), np.tile(np.arange(1, k + 1), (len(data.y), 1))
        )
    elif data.task == "multilabel":
        assert data.y.shape[1] == int(manifest["n_classes_or_labels"])
        assert set(np.unique(data.y)) == {0, 1}
    elif data.task in ("multiclass", "binary"):
        assert np.unique(data.y).size == int(manifest["n_classes_or_labels"])


def test_quantile_bins_and_errors():
    y = datasets.load("ordinal/machinecpu").y
    classes, edges = datasets.quantile_bins(y, 5)
    assert set(classes) == set(range(5)) and edges.size == 4
    assert np.all(np.diff([y[classes == c].max() for c in range(5)]) > 0)  # ordered bins
    with pytest.raises(ValueError, match="unknown data set"):
        datasets.load("multiclass/iris2")
    with pytest.raises(ValueError, match="n_bins"):
        datasets.quantile_bins(y, 1)


def test_prediction_set_example1_follows_seed_003():
    X, y = datasets.make_prediction_set_example1(n_per_class=3000, n_outliers=400, random_state=1)
    assert X.shape == (12_400, 10) and set(np.unique(y)) == {1, 2, 3, 4, datasets.OUTLIER}
    frame = np.abs(X[y == datasets.OUTLIER, :2]).max(axis=1)
    assert frame.min() >= 8 and frame.max() <= 10
    np.testing.assert_allclose(X[:, 2:].std(axis=0), 0.1, rtol=0.1)  # the eight noise features
    for k in range(1, 5):
        points = X[y == k, :2]
        assert np.linalg.norm(points.mean(axis=0)) <= 6 + 0.2  # mu_k = r_k (cos, sin), r_k <= 6
        eigenvalues = np.linalg.eigvalsh(np.cov(points.T))
        # Sigma^(1/2) = sigma I + eps (11' - I): eigenvalues (sigma +- eps)^2 within [0.09, 2.89]
        assert 0.09 * 0.8 <= eigenvalues.min() and eigenvalues.max() <= 2.89 * 1.2
    again = datasets.make_prediction_set_example1(n_per_class=3000, n_outliers=400, random_state=1)
    np.testing.assert_array_equal(again[0], X)


def test_prediction_set_example1_class_state_fixes_the_classes_alone():
    """With ``class_state`` the class means and covariances repeat across ``random_state``s
    (sample moments of 3,000 points agree to sampling error) while the points differ; without
    it the classes move with ``random_state``."""

    def moments(**kwargs):
        X, y = datasets.make_prediction_set_example1(n_per_class=3000, n_outliers=0, **kwargs)
        return X, np.array([np.r_[X[y == k, :2].mean(0), np.cov(X[y == k, :2].T).ravel()]
                            for k in range(1, 5)])  # fmt: skip

    (X1, fixed1), (X2, fixed2) = (moments(random_state=s, class_state=7) for s in (1, 2))
    assert not np.allclose(X1, X2)
    np.testing.assert_allclose(fixed1, fixed2, atol=0.1)
    _, free2 = moments(random_state=2)
    assert np.abs(free2 - fixed2).max() > 0.5


def test_prediction_set_example2_rings():
    X, y = datasets.make_prediction_set_example2(n_per_class=500, n_outliers=100, random_state=0)
    assert X.shape == (1_600, 100)
    radius = np.hypot(X[:, 0], X[:, 1])
    for label, (low, high) in {
        1: (0, 5),
        2: (4, 9),
        3: (8, 13),
        datasets.OUTLIER: (15, 20),
    }.items():
        assert low <= radius[y == label].min() and radius[y == label].max() <= high
    np.testing.assert_allclose(X[:, 2:].std(), 1.0, rtol=0.05)
    with pytest.raises(ValueError, match="n_per_class"):
        datasets.make_prediction_set_example2(n_per_class=0)
