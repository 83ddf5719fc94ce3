"""``advgame verify --function module:attr``: a user's closed form checked from the command line
(:func:`advgame.verify_closed_form`), and the timings of ``explain`` measured after a warm-up."""

import pytest

from advgame.cli import main

USER_MODULE = '''
import numpy as np


def _top_sets(F, constant):
    top = -np.sort(-F, axis=1)
    m = np.arange(1, F.shape[1] + 1)
    return ((np.cumsum(top, axis=1) + constant * (m - 1)) / m).max(axis=1)


def zero_one(F):
    """Fathony et al. (2018a), Theorem 5."""
    return _top_sets(F, 1.0)


def wrong(F):
    """A sign slip: - (|S| - 1) instead of + (|S| - 1)."""
    return _top_sets(F, -1.0)


def uniform(F):
    return np.full(F.shape, 1.0 / F.shape[1])


def broken(F):
    return F
'''


@pytest.fixture
def user(tmp_path, monkeypatch):
    """A module ``mycf`` importable from the current directory, and a zero-one CSV matrix."""
    (tmp_path / "mycf_cli.py").write_text(USER_MODULE)
    (tmp_path / "z4.csv").write_text("0,1,1,1\n1,0,1,1\n1,1,0,1\n1,1,1,0\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys, *args):
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_correct_closed_form_passes(capsys, user):
    code, out, _ = run(capsys, "verify", "--matrix", "z4.csv", "--function", "mycf_cli:zero_one")
    assert code == 0
    assert "closed form 'zero_one': PASSED" in out
    assert "rational check: exact in fractions" in out
    assert "us/row after a warm-up call" in out


def test_a_wrong_closed_form_fails_with_its_counterexample(capsys, user):
    code, out, _ = run(
        capsys, "verify", "--matrix", "z4.csv", "--function", str(user / "mycf_cli.py") + ":wrong"
    )
    assert code == 1
    assert "FAILED" in out
    assert "f               = [0, 0, 0, 0]" in out
    assert "LP value        = 0.75" in out


def test_adversary_and_a_built_in_loss(capsys, user):
    code, out, _ = run(
        capsys,
        "verify",
        "zero-one",
        "--k",
        "3",
        "--function",
        "mycf_cli:zero_one",
        "--adversary",
        "mycf_cli:uniform",
        "--n",
        "100",
    )
    assert code == 1  # the uniform q* is optimal only when every label is in the best set
    assert "counterexample (adversary" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--function", "nocolon"], "--function must be module:attr"),
        (["--function", "no_such_module_35:f"], "cannot import 'no_such_module_35'"),
        (["--function", "mycf_cli:missing"], "has no attribute 'missing'"),
        (["--function", "mycf_cli:broken"], r"value(F) must return an array of shape"),
        (["--adversary", "mycf_cli:uniform"], "give --function too"),
    ],
)
def test_bad_functions(capsys, user, args, message):
    code, _, err = run(capsys, "verify", "--matrix", "z4.csv", *args)
    assert code == 2
    assert message in err


def test_the_existing_verify_still_works(capsys, user):
    code, out, _ = run(capsys, "verify", "--matrix", "z4.csv")
    assert code == 0
    assert "ok: every method agrees" in out and "200 random potential rows" in out


def test_explain_times_after_a_warm_up(capsys, monkeypatch):
    """Each method is called once on two rows before its timed call (the first call of a
    compiled closed form compiles its kernel)."""
    from advgame import game as game_module

    sizes = []
    original = game_module.Game.value

    def value(self, F, method="auto"):
        sizes.append((method, len(F)))
        return original(self, F, method)

    monkeypatch.setattr(game_module.Game, "value", value)
    code, out, _ = run(capsys, "explain", "zero-one", "--k", "4")
    assert code == 0
    for method in ("lp", "closed_form", "vertices"):
        assert sizes.index((method, 2)) < sizes.index((method, 200))
