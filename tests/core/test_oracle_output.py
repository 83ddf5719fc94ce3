"""No HiGHS output reaches stdout or stderr from advgame (issue #23): not the banner highspy prints
when the first ``Highs`` of a process is built, not a solve log."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import advgame as ag
from advgame.oracle import highs_model, new_highs


def run_fresh(code):
    """Run ``code`` in a fresh interpreter (where no Highs has been built yet): (stdout, stderr)."""
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return result.stdout, result.stderr


@pytest.mark.slow  # a fresh interpreter importing cvxpy and highspy (about 5 s)
def test_fresh_process_lp_game_prints_nothing():
    out, err = run_fresh(
        """
        import numpy as np
        import advgame as ag
        L = np.random.default_rng(0).uniform(0, 1, (5, 5))
        ag.Game(L).value(np.zeros((3, 5)), method="lp")
        from advgame.oracle import LPOracle
        LPOracle(L).solve_each(np.zeros((2, 5)))
        """
    )
    assert out == "" and err == ""


@pytest.mark.slow  # a fresh interpreter importing cvxpy and highspy (about 5 s)
def test_fresh_process_cvxpy_highs_prints_nothing():
    """cvxpy's HiGHS interface builds its own Highs: advgame's import spent the banner."""
    out, err = run_fresh(
        """
        import advgame
        import cvxpy as cp
        x = cp.Variable(2, nonneg=True)
        cp.Problem(cp.Minimize(cp.sum(x)), [cp.sum(x) >= 1]).solve(solver=cp.HIGHS)
        """
    )
    assert out == "" and err == ""


@pytest.mark.slow  # a fresh interpreter: 5 s
def test_fresh_process_prints_what_the_caller_prints():
    """The descriptors are restored: output before and after the silenced construction shows."""
    out, err = run_fresh(
        """
        import os, sys
        print("before", flush=True)
        os.write(2, b"err-before\\n")
        import advgame
        from advgame.oracle import new_highs
        new_highs()
        print("after")
        sys.stderr.write("err-after\\n")
        """
    )
    assert out == "before\nafter\n" and err == "err-before\nerr-after\n"


def test_lp_game_prints_nothing(capfd):
    L = np.random.default_rng(1).uniform(0, 1, (4, 6))
    game = ag.Game(L)
    game.value(np.zeros((5, 6)), method="lp")
    game.predictor(np.ones((2, 6)), method="lp")
    game._oracle.solve_each(np.zeros((2, 6)))
    captured = capfd.readouterr()
    assert captured.out == "" and captured.err == ""


def test_highs_backend_program_prints_nothing(capfd):
    from advgame.compile import compile_learning
    from advgame.features import Multiclass
    from advgame.uncertainty import Exact

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 2)), rng.integers(0, 3, 30)
    L = rng.uniform(0.2, 2.0, (3, 3)) * (1 - np.eye(3))
    compiled = compile_learning(L, Multiclass().fit(X, 3), Exact(), X, y)
    compiled.solve("highs")
    captured = capfd.readouterr()
    assert captured.out == "" and captured.err == ""


@pytest.mark.parametrize("verbose", [False, True])
def test_highs_model_output_follows_verbose(capfd, verbose):
    h = highs_model(
        np.ones((1, 2)), [1.0, 1.0], ([0, 0], [np.inf, np.inf]), ([1.0], [np.inf]), verbose=verbose
    )
    h.run()
    captured = capfd.readouterr()
    assert (captured.out != "") == verbose


def test_new_highs_is_silent_from_threads(capfd):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=4) as pool:
        models = list(pool.map(lambda _: new_highs(), range(8)))
    assert len(models) == 8
    captured = capfd.readouterr()
    assert captured.out == "" and captured.err == ""
