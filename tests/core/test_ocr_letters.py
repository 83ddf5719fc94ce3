"""``datasets.load_ocr_letters``: Taskar's OCR words as chains (shapes, folds, labels)."""

import numpy as np
import pytest

from advgame import datasets

#: Words per fold, as counted in advgame/data/NOTICE.md.
FOLD_SIZES = (626, 704, 684, 698, 693, 651, 739, 717, 690, 675)


def test_words_letters_and_folds():
    X_list, y_list, folds = datasets.load_ocr_letters()
    assert len(X_list) == len(y_list) == folds.size == 6877
    lengths = np.array([len(y) for y in y_list])
    assert lengths.min() == 3 and lengths.max() == 14 and lengths.sum() == 52152
    assert all(X.shape == (len(y), 128) and X.dtype == np.float64 for X, y in zip(X_list, y_list))
    pixels = np.concatenate(X_list)
    assert set(np.unique(pixels)) == {0.0, 1.0}
    letters = np.concatenate(y_list)
    assert letters.dtype == np.int64 and set(np.unique(letters)) == set(range(26))
    assert np.bincount(letters)[[0, 4, 9]].tolist() == [4034, 4955, 189]  # a, e, j
    assert tuple(np.bincount(folds)) == FOLD_SIZES
    # word 0 is "ommanding" (its capital C removed, as in Taskar's data)
    assert "".join(chr(ord("a") + c) for c in y_list[0]) == "ommanding"


def test_checksum_is_verified(monkeypatch):
    monkeypatch.setattr(datasets, "_OCR_LETTERS_SHA256", "0" * 64)
    with pytest.raises(ValueError, match="does not match its SHA-256"):
        datasets.load_ocr_letters()
