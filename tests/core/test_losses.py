"""Loss matrices: validation, constructors, structure recognition, CSV input, repr, equality."""

import pickle

import numpy as np
import pytest

import advgame as ag
from advgame.losses import STRUCTURE_RTOL, LossMatrix, Structure, recognize


def _diff(k):
    a = np.arange(k)
    return a[:, None] - a[None, :]


# ----------------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "matrix, match",
    [
        (np.array([0.0, 1.0, 2.0]), r"2-D"),
        (np.zeros((2, 2, 2)), r"2-D"),
        (np.array([[0.0], [1.0]]), r"at least 2 labels"),
        (np.array([[0.0, np.nan], [1.0, 0.0]]), r"finite"),
        (np.array([[0.0, 1.0], [np.inf, 0.0]]), r"finite"),
        (np.array([[0.0, 1.0], [-np.inf, 0.0]]), r"finite"),
        (np.array([[0.0, 1.0], [-0.5, 0.0]]), r"non-negative"),
        ([["a", "b"], ["c", "d"]], r"numeric"),
        ([[0.0, "one"], [1.0, 0.0]], r"numeric"),
        ([[0.0, 1.0], [1.0]], r"numeric"),
        (np.zeros((0, 3)), r"at least 1 action"),
    ],
    ids=[
        "1d",
        "3d",
        "one-column",
        "nan",
        "inf",
        "minus-inf",
        "negative",
        "strings",
        "mixed-string",
        "ragged",
        "no-rows",
    ],
)
def test_invalid_matrix_raises(matrix, match):
    with pytest.raises(ValueError, match=match):
        LossMatrix(matrix)


def test_negative_entry_is_located_in_message():
    M = np.ones((3, 3))
    M[2, 1] = -2.0
    with pytest.raises(ValueError, match=r"-2\.0 at action 2, label 1"):
        LossMatrix(M)


def test_nan_entry_is_located_in_message():
    M = np.ones((3, 3))
    M[1, 2] = np.nan
    with pytest.raises(ValueError, match=r"index \(1, 2\)"):
        LossMatrix(M)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"labels": ["a", "b"]}, r"labels must have 3 entries.*got 2"),
        ({"labels": ["a", "b", "c", "d"]}, r"labels must have 3 entries.*got 4"),
        ({"actions": ["x", "y"]}, r"actions must have 3 entries.*got 2"),
    ],
)
def test_wrong_length_names_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        LossMatrix(1 - np.eye(3), **kwargs)


def test_names_default_and_given():
    L = LossMatrix(1 - np.eye(3), labels=["a", "b", "c"])
    assert L.labels == ("a", "b", "c")
    assert L.actions == ("a", "b", "c")  # actions default to the labels for square matrices
    A = ag.losses.abstain(3, alpha=0.3)
    assert A.actions == (0, 1, 2, "abstain")
    G = LossMatrix(np.ones((2, 3)))
    assert G.actions == (0, 1)
    assert (G.n_actions, G.n_labels, G.shape) == (2, 3, (2, 3))


def test_matrix_is_a_read_only_copy():
    M = 2.0 * (1 - np.eye(3))
    L = LossMatrix(M)
    M[0, 1] = 100.0
    assert L.matrix[0, 1] == 2.0
    with pytest.raises(ValueError):
        L.matrix[0, 1] = 5.0
    assert L.matrix.dtype == np.float64


def test_unpickled_matrix_stays_read_only():
    L = pickle.loads(pickle.dumps(ag.losses.zero_one(3)))
    assert L == ag.losses.zero_one(3)
    assert not L.matrix.flags.writeable


# --------------------------------------------------------------------------------- constructors
@pytest.mark.parametrize("k", [2, 3, 6])
@pytest.mark.parametrize("weight", [1.0, 0.5, 3.0])
def test_constructors_exact_matrices(k, weight):
    d = _diff(k)
    np.testing.assert_array_equal(ag.losses.zero_one(k, weight).matrix, weight * (d != 0))
    np.testing.assert_array_equal(ag.losses.ordinal(k, weight).matrix, weight * np.abs(d))
    np.testing.assert_array_equal(
        ag.losses.squared(k, weight).matrix, weight * d.astype(float) ** 2
    )
    for alpha in (0.0, 0.3, 0.5, 1.0):
        A = ag.losses.abstain(k, alpha=alpha, weight=weight).matrix
        assert A.shape == (k + 1, k)
        np.testing.assert_array_equal(A[:k], weight * (d != 0))
        np.testing.assert_array_equal(A[k], np.full(k, weight * alpha))


def test_constructor_examples():
    np.testing.assert_array_equal(
        ag.losses.ordinal(3, weight=2.0).matrix, [[0, 2, 4], [2, 0, 2], [4, 2, 0]]
    )
    np.testing.assert_array_equal(ag.losses.squared(3).matrix, [[0, 1, 4], [1, 0, 1], [4, 1, 0]])
    np.testing.assert_array_equal(
        ag.losses.abstain(2, alpha=0.25, weight=2.0).matrix, [[0, 2], [2, 0], [0.5, 0.5]]
    )


@pytest.mark.parametrize("kind", ["zero_one", "ordinal", "squared", "abstain"])
@pytest.mark.parametrize("k", [1, 0, -3, 2.5, True, "3", None])
def test_constructors_bad_k(kind, k):
    with pytest.raises(ValueError, match=r"k \(number of labels\) must be an integer >= 2"):
        getattr(ag.losses, kind)(k)


@pytest.mark.parametrize("kind", ["zero_one", "ordinal", "squared", "abstain"])
@pytest.mark.parametrize("weight", [0, 0.0, -1, np.nan, np.inf, -np.inf, "1", None])
def test_constructors_bad_weight(kind, weight):
    with pytest.raises(ValueError, match=r"weight must be a finite"):
        getattr(ag.losses, kind)(3, weight=weight)


@pytest.mark.parametrize("alpha", [-0.1, 1.5, np.nan, np.inf, "0.3", None])
def test_abstain_bad_alpha(alpha):
    with pytest.raises(ValueError, match=r"alpha \(abstention penalty\) must"):
        ag.losses.abstain(3, alpha=alpha)


def test_constructors_accept_numpy_integer_k():
    assert ag.losses.zero_one(np.int64(4)).shape == (4, 4)


# ------------------------------------------------------------------------ structure recognition
@pytest.mark.parametrize(
    "matrix, kind, weight, alpha",
    [
        (3.0 * (1 - np.eye(5)), "zero_one", 3.0, None),
        (0.25 * np.abs(_diff(5)), "ordinal", 0.25, None),
        (7.0 * _diff(4).astype(float) ** 2, "squared", 7.0, None),
        (ag.losses.abstain(4, alpha=0.3, weight=2.0).matrix, "abstain", 2.0, 0.3),
        (ag.losses.abstain(3, alpha=0.0).matrix, "abstain", 1.0, 0.0),
        (ag.losses.abstain(3, alpha=0.7, weight=0.5).matrix, "abstain", 0.5, 0.7),
        (1e-6 * (1 - np.eye(3)), "zero_one", 1e-6, None),
        (1e8 * np.abs(_diff(6)), "ordinal", 1e8, None),
    ],
    ids=[
        "zero_one*3",
        "ordinal*0.25",
        "squared*7",
        "abstain-w2-a0.3",
        "abstain-a0",
        "abstain-a0.7",
        "tiny-scale",
        "huge-scale",
    ],
)
def test_recognise_scaled(matrix, kind, weight, alpha):
    s = LossMatrix(matrix).structure
    assert s.kind == kind
    assert s.weight == pytest.approx(weight, rel=1e-12)
    if alpha is None:
        assert s.alpha is None
    else:
        assert s.alpha == pytest.approx(alpha, rel=1e-12, abs=1e-15)
    assert recognize(matrix) == s


@pytest.mark.parametrize("weight", [1.0, 0.3, 5.0])
def test_k2_ordinal_and_squared_are_zero_one(weight):
    for L in (ag.losses.ordinal(2, weight), ag.losses.squared(2, weight)):
        assert L.structure.kind == "zero_one"
        assert L.structure.weight == pytest.approx(weight, rel=1e-14)


@pytest.mark.parametrize("kind", ["zero_one", "ordinal", "squared", "abstain"])
def test_noisy_within_tolerance_is_recognised(kind):
    rng = np.random.default_rng(1)
    k = 6
    L = ag.losses.abstain(k, 0.3, 2.0) if kind == "abstain" else getattr(ag.losses, kind)(k, 2.0)
    M = L.matrix * (1 + 1e-13 * rng.uniform(-1, 1, L.shape))
    s = LossMatrix(M).structure
    assert s.kind == kind
    assert s.weight == pytest.approx(2.0, rel=1e-12)


@pytest.mark.parametrize("kind", ["zero_one", "ordinal", "squared", "abstain"])
def test_near_miss_is_general(kind):
    k = 6
    L = ag.losses.abstain(k, 0.3, 2.0) if kind == "abstain" else getattr(ag.losses, kind)(k, 2.0)
    M = L.matrix.copy()
    M[1, 3] *= 1 + 1e-6
    assert LossMatrix(M).structure.kind == "general"
    if kind == "abstain":  # a perturbed abstain row is not constant any more
        M = L.matrix.copy()
        M[k, 2] *= 1 + 1e-6
        assert LossMatrix(M).structure.kind == "general"


def test_near_miss_on_diagonal_is_general():
    M = 1 - np.eye(4)
    M[2, 2] = 1e-6
    assert LossMatrix(M).structure.kind == "general"


def test_permuted_ordinal_is_general():
    M = np.abs(_diff(5)).astype(float)
    assert LossMatrix(M[[1, 0, 2, 3, 4]]).structure.kind == "general"
    assert LossMatrix(M[:, [0, 2, 1, 3, 4]]).structure.kind == "general"


def test_abstain_with_non_constant_last_row_is_general():
    M = ag.losses.abstain(4, alpha=0.3).matrix.copy()
    M[4] = [0.3, 0.3, 0.3, 0.4]
    assert LossMatrix(M).structure.kind == "general"


@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (2, 5)])
def test_all_zero_matrix_is_general(shape):
    assert LossMatrix(np.zeros(shape)).structure.kind == "general"


def test_rectangular_non_abstain_is_general():
    M = np.vstack([1 - np.eye(3), np.full((2, 3), 0.5)])  # two abstain-like rows: l = k + 2
    assert LossMatrix(M).structure.kind == "general"
    assert LossMatrix((1 - np.eye(4))[:3]).structure.kind == "general"  # l = k - 1
    assert LossMatrix(np.ones((3, 2))).structure.kind == "general"


def test_recognition_tolerance_boundary():
    M = 1 - np.eye(4)
    inside = M.copy()
    inside[0, 1] += 0.5 * STRUCTURE_RTOL
    outside = M.copy()
    outside[0, 1] += 100 * STRUCTURE_RTOL
    assert LossMatrix(inside).structure.kind == "zero_one"
    assert LossMatrix(outside).structure.kind == "general"


def test_structure_has_closed_form():
    assert Structure("abstain", 1.0, 0.5).has_closed_form
    assert Structure("abstain", 1.0, 0.0).has_closed_form
    assert not Structure("abstain", 1.0, 0.51).has_closed_form
    assert not Structure("general").has_closed_form
    for kind in ("zero_one", "ordinal", "squared"):
        assert Structure(kind, 2.0).has_closed_form
    assert ag.losses.abstain(3, alpha=0.5).structure.has_closed_form
    assert not ag.losses.abstain(3, alpha=0.51).structure.has_closed_form


def test_structure_str():
    assert str(Structure("general")) == "general"
    assert str(Structure("zero_one", 3.0)) == "zero_one(weight=3)"
    assert str(Structure("abstain", 2.0, 0.3)) == "abstain(weight=2, alpha=0.3)"


@pytest.mark.parametrize("k", range(2, 9))
def test_abstain_half_keeps_closed_form_for_any_weight(k):
    """Regression: alpha = row / c carries rounding error (0.5000000000000001 for k=4, weight=0.7),
    which used to cost alpha = 1/2 its closed form; recognition must land on 1/2 exactly."""
    for weight in np.r_[np.linspace(0.01, 10, 150), 0.7, 1.3, 0.1, 1.1]:
        s = ag.losses.abstain(k, alpha=0.5, weight=weight).structure
        assert s.kind == "abstain" and s.alpha == 0.5 and s.has_closed_form, (k, weight, s)
        assert s.weight == pytest.approx(weight, rel=1e-12)
    game = ag.Game(ag.losses.abstain(k, alpha=0.5, weight=0.7))
    assert game.fast_path == "abstain"
    F = np.random.default_rng(k).normal(size=(20, k))
    np.testing.assert_allclose(
        game.value(F, method="closed_form"), game.value(F, method="lp"), rtol=1e-9, atol=1e-9
    )


# ------------------------------------------------------------------------------------------ CSV
def test_from_csv_plain_numbers(tmp_path):
    path = tmp_path / "plain.csv"
    path.write_text("0,1,2\n1,0,1\n2,1,0\n")
    L = LossMatrix.from_csv(path)
    np.testing.assert_array_equal(L.matrix, np.abs(_diff(3)))
    assert L.structure.kind == "ordinal"
    assert L.labels == (0, 1, 2)


def test_from_csv_header_row(tmp_path):
    path = tmp_path / "header.csv"
    path.write_text("cat, dog ,bird\n0,2,2\n2,0,2\n2,2,0\n")
    L = LossMatrix.from_csv(str(path))
    assert L.labels == ("cat", "dog", "bird")
    assert L.actions == ("cat", "dog", "bird")
    np.testing.assert_array_equal(L.matrix, 2 * (1 - np.eye(3)))
    assert (L.structure.kind, L.structure.weight) == ("zero_one", 2.0)


def test_from_csv_action_column(tmp_path):
    path = tmp_path / "actions.csv"
    path.write_text("a,0,1\nb,1,0\nabstain,0.3,0.3\n")
    L = LossMatrix.from_csv(path)
    assert L.actions == ("a", "b", "abstain")
    assert L.labels == (0, 1)
    np.testing.assert_array_equal(L.matrix, [[0, 1], [1, 0], [0.3, 0.3]])
    assert L.structure.kind == "abstain"


def test_from_csv_header_and_action_column(tmp_path):
    path = tmp_path / "both.csv"
    path.write_text("action,cat,dog\ncat,0,1.5\ndog,1.5,0\n\n")  # trailing blank line ignored
    L = LossMatrix.from_csv(path)
    assert L.labels == ("cat", "dog")
    assert L.actions == ("cat", "dog")
    np.testing.assert_array_equal(L.matrix, [[0, 1.5], [1.5, 0]])


def test_from_csv_action_column_under_label_header(tmp_path):
    path = tmp_path / "actions.csv"
    path.write_text("y0,y1\na,0,1\nb,1,0\nabstain,0.3,0.3\n")  # header without a corner cell
    L = LossMatrix.from_csv(path)
    assert L.labels == ("y0", "y1")
    assert L.actions == ("a", "b", "abstain")
    np.testing.assert_array_equal(L.matrix, [[0, 1], [1, 0], [0.3, 0.3]])
    assert (L.structure.kind, L.structure.alpha) == ("abstain", pytest.approx(0.3))


@pytest.mark.parametrize(
    "text, match",
    [
        ("0,1,2\n1,0\n2,1,0\n", r"different lengths"),
        ("0,1\n1,x\n", r"every loss must be a number"),
        ("0,1\n1,\n", r"every loss must be a number"),
        ("", r"empty"),
        ("\n  \n,,\n", r"empty"),
        ("0,1\n1,-1\n", r"non-negative"),
        ("0,1\n1,nan\n", r"finite"),
    ],
    ids=["ragged", "non-numeric", "empty-cell", "empty", "blank", "negative", "nan"],
)
def test_from_csv_malformed(tmp_path, text, match):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=match):
        LossMatrix.from_csv(path)


# ------------------------------------------------------------------------------- repr, eq, hash
def test_repr_shows_structure_and_values():
    text = repr(ag.losses.ordinal(3, weight=0.25))
    assert "3 actions x 3 labels" in text
    assert "ordinal(weight=0.25)" in text
    assert "0.25" in text and "0.5" in text
    text = repr(ag.losses.abstain(3, alpha=0.3, weight=2.0))
    assert "abstain(weight=2, alpha=0.3)" in text
    assert "0.6" in text and "abstain" in text.splitlines()[-1]
    text = repr(LossMatrix([[0.0, 1.25], [3.5, 0.0]], labels=["u", "v"]))
    assert "structure=general" in text  # zero diagonal but not c (1 - I)
    assert "1.25" in text and "3.5" in text and "u" in text


def test_repr_general_and_large():
    M = np.arange(12, dtype=float).reshape(3, 4)
    assert "structure=general" in repr(LossMatrix(M))
    big = repr(ag.losses.zero_one(30))
    assert "zero_one(weight=1)" in big and "\n" not in big  # large matrices: header only


def test_equality_and_hash():
    a = LossMatrix(2 * (1 - np.eye(3)))
    b = ag.losses.zero_one(3, weight=2.0)
    assert a == b and hash(a) == hash(b)
    assert len({a, b}) == 1
    assert a != ag.losses.zero_one(3, weight=2.5)
    assert a != ag.losses.zero_one(4, weight=2.0)
    assert a != LossMatrix(2 * (1 - np.eye(3)), labels=["x", "y", "z"])
    assert a != LossMatrix(2 * (1 - np.eye(3)), actions=["x", "y", "z"])
    assert a != "not a loss matrix"
    assert LossMatrix(np.ones((2, 3))) != LossMatrix(np.ones((3, 2)))


def test_equal_matrices_have_equal_hashes_with_negative_zero():
    a = LossMatrix([[0.0, 1.0], [1.0, 0.0]])
    b = LossMatrix([[-0.0, 1.0], [1.0, 0.0]])
    assert a == b
    assert hash(a) == hash(b)


def test_as_loss_matrix_and_array_protocol():
    L = ag.losses.squared(3)
    assert ag.losses.as_loss_matrix(L) is L
    assert ag.losses.as_loss_matrix(L.matrix) == L
    np.testing.assert_array_equal(np.asarray(L), L.matrix)
    assert np.asarray(L, dtype=np.float32).dtype == np.float32
