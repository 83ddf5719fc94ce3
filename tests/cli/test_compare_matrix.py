"""``advgame compare --matrix FILE`` and ``--alpha``: models compared on the user's own loss."""

import re

import numpy as np
import pytest
from test_cli_inputs import TINY, _tiny_csv, one_error, run_cli

import advgame as ag
from advgame.reproductions.fathony2018a import compare as fathony2018a
from advgame.reproductions.fathony2018a import plans

pytestmark = pytest.mark.filterwarnings("ignore:Solution may be inaccurate")

#: A cost-sensitive loss over the sorted labels (high, low, mid) and a fourth action.
COSTS = "0,2,1\n3,0,1\n1,1,0\n0.4,0.4,0.4\n"


def _table(out, title):
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(title))
    header = re.split(r"\s{2,}", lines[at + 1].strip())
    cells = re.findall(r"(\d+\.\d+)\((\d+\.\d+)\)", lines[at + 2])
    return header, [float(mean) for mean, _ in cells]


def test_compare_with_a_loss_matrix_file(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(fathony2018a, "COMPARE", TINY)
    data, matrix = _tiny_csv(tmp_path), tmp_path / "costs.csv"
    matrix.write_text(COSTS)
    code, out, err = run_cli(
        capsys, "compare", "--data", data, "--target", "grade", "--matrix", matrix, "--splits", "2"
    )
    assert code == 0, err
    header, means = _table(out, "Your loss matrix (4 actions x 3 labels)")
    assert header == ["data", "AL", "LR-Bayes"]
    assert len(means) == 2 and all(0.0 <= m <= 0.4 for m in means)  # 0.4: always the 4th action
    assert any("tiny.csv (matrix, linear): tuning on 42 rows" in line for line in err.splitlines())


def test_a_zero_one_matrix_scores_as_the_zero_one_table(monkeypatch, tmp_path):
    """The zero-one matrix's table is one minus the zero-one table's accuracy: the same
    adversarial game (recognised from the matrix), and the Bayes rule of the zero-one loss is
    logistic regression's argmax."""
    rng = np.random.default_rng(0)
    y = np.arange(60) % 3
    X = np.c_[y + 0.8 * rng.standard_normal(60), rng.standard_normal(60)]
    options = {"splits": 2, "settings": TINY, "name": "toy"}
    (accuracy,), _ = fathony2018a.compare(X, y, "zero_one", **options)
    (matrix,), report = fathony2018a.compare(X, y, ag.losses.zero_one(3), **options)
    assert tuple(matrix["columns"]) == ("AL", "LR-Bayes")
    for ours, theirs in (("AL", "AL01"), ("LR-Bayes", "LR")):
        expected = 1.0 - accuracy["columns"][theirs][0] / 100.0
        assert matrix["columns"][ours][0] == pytest.approx(expected, abs=1e-12)
    assert "Your loss matrix (3 actions x 3 labels)" in report


def test_the_matrix_plans_play_actions():
    L = ag.LossMatrix(np.array([[0.0, 2.0], [1.0, 0.0], [0.3, 0.3]]))
    (_, make, al), (_, _, lr) = plans.matrix_plans(L)
    scorer, bayes = lr["matrix"]
    assert scorer(np.array([2, 0, 1]), np.array([0, 1, 1])) == pytest.approx((0.3 + 2 + 0) / 3)

    class Probabilities:  # what the Bayes rule reads of a fitted model
        def predict_proba(self, X):
            return np.array([[0.9, 0.1], [0.5, 0.5], [0.1, 0.9]])

    # expected losses per action: [0.2, 0.9, 0.3], [1, 0.5, 0.3], [1.8, 0.1, 0.3]
    np.testing.assert_array_equal(bayes(Probabilities(), None), [0, 2, 1])
    assert make(0.01, 10).loss is L


def test_compare_alpha_sets_the_abstention_cost(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(fathony2018a, "COMPARE", TINY)
    code, out, err = run_cli(
        capsys,
        "compare",
        "--data",
        _tiny_csv(tmp_path),
        "--target",
        "grade",
        "--loss",
        "abstain",
        "--alpha",
        "0.2",
        "--splits",
        "2",
    )
    assert code == 0, err
    header, means = _table(out, "Abstention loss with alpha = 0.2")
    assert header == ["data", *fathony2018a.ABSTAIN_COLUMNS]
    (_, make, scorers), *_ = plans.compare_plans("abstain", alpha=0.2)
    assert make(0.01, 10).alpha == 0.2
    scorer = scorers["abstain"][0]
    assert scorer(np.array([-1, 0, 1]), np.array([0, 0, 0])) == pytest.approx((0.2 + 0 + 1) / 3)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--alpha", "1.5"], "argument --alpha: must be a fraction strictly between 0 and 1"),
        (["--alpha", "0.2"], "--alpha (the cost of abstaining) needs --loss abstain"),
        (["--loss", "ordinal", "--alpha", "0.2"], "needs --loss abstain"),
        (["--loss", "abstain", "--matrix", "m.csv"], "--matrix replaces --loss"),
        (["--matrix", "absent.csv"], "--matrix"),
    ],
)
def test_compare_matrix_and_alpha_arguments(capsys, tmp_path, args, message):
    data = _tiny_csv(tmp_path)
    code, _, err = run_cli(capsys, "compare", "--data", data, "--target", "grade", *args)
    one_error(code, err, message)


def test_the_matrix_must_have_a_column_per_class(capsys, tmp_path):
    matrix = tmp_path / "two.csv"
    matrix.write_text("0,1\n1,0\n")
    code, _, err = run_cli(
        capsys, "compare", "--data", _tiny_csv(tmp_path), "--target", "grade", "--matrix", matrix
    )
    one_error(code, err, "the loss matrix has 2 label columns but the target has 3 classes")
