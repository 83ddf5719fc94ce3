import numpy as np
import pytest

from advgame import datasets


@pytest.mark.parametrize("name", datasets.list_datasets())
def test_every_vendored_file_loads_with_manifest_shape(name):
    data = datasets.load(name)  # verifies the SHA-256 of the uncompressed CSV
    manifest = datasets._manifest()[name]
    one_hot_extra = 2 if name == "ordinal/abalone" else 0  # sex in {F, I, M} -> 3 columns
    assert data.X.shape == (int(manifest["n_rows"]), int(manifest["n_features"]) + one_hot_extra)
    assert np.all(np.isfinite(data.X))
    if data.task == "label_ranking":
        k = int(manifest["n_classes_or_labels"])
        assert np.array_equal(
            np.sort(data.y, axis=1), np.tile(np.arange(1, k + 1), (len(data.y), 1))
        )
    elif data.task == "multilabel":
        assert data.y.shape[1] == int(manifest["n_classes_or_labels"])
        assert set(np.unique(data.y)) == {0, 1}
    elif data.task == "multiclass":
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
