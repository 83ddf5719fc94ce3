"""Progress bars (issue #36, point 2): ``tqdm`` bars on stderr for a fit's phases (``verbose >= 1``)
and a benchmark's or reproduction's cases, shown only when stderr is a terminal and not turned
off (``verbose=0``, ``progress=False``); lines print above them."""

import io
import subprocess
import sys
import warnings
from contextlib import redirect_stderr

import numpy as np

import advgame as ag
from advgame.benchmarks.protocol import Progress as RunProgress


class Terminal(io.StringIO):
    """A stderr that says it is a terminal (what ``tqdm``'s ``disable=None`` checks)."""

    def isatty(self):
        return True


def _fit(verbose):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    model = ag.AdversarialClassifier(uncertainty="l2", strength=0.01, max_iter=8, verbose=verbose)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)


def test_a_fit_shows_its_phases_bars_in_a_terminal_only_when_verbose():
    with redirect_stderr(Terminal()) as terminal:  # inside the test: pytest swaps stderr
        _fit(0)
        assert terminal.getvalue() == ""
        _fit(1)
    text = terminal.getvalue()
    assert "smoothing:" in text and "cutting planes:" in text  # the bars' descriptions
    assert "\r" in text  # redrawn in place
    lines = [line.split("\r")[-1] for line in text.split("\n")]
    assert any(line.startswith("[AdversarialClassifier] fitted in ") for line in lines)


def test_a_fit_outside_a_terminal_has_no_bar(capfd):
    _fit(1)
    err = capfd.readouterr().err
    assert "\r" not in err and "handing over to cutting planes" in err


def test_a_run_shows_a_bar_of_its_cases_in_a_terminal_unless_quiet():
    with redirect_stderr(Terminal()) as terminal:
        progress = RunProgress("bench")
        assert list(progress.bar([1, 2, 3], "case")) == [1, 2, 3]
        progress("one line")
    text = terminal.getvalue()
    assert "\rbench:   0%|" in text and "0/3" in text and "case/s" in text
    assert "[bench      0s] one line ..." in text
    with redirect_stderr(Terminal()) as terminal:
        quiet = RunProgress("bench", enabled=False)
        assert list(quiet.bar(iter([1, 2]), "case", total=2)) == [1, 2]
        quiet("one line")
    assert terminal.getvalue() == ""


def test_a_run_outside_a_terminal_prints_its_lines_without_a_bar(capfd):
    progress = RunProgress("bench")
    for case in progress.bar(["a", "b"], "case"):
        progress(f"case {case}")
    err = capfd.readouterr().err
    assert err.splitlines() == ["[bench      0s] case a ...", "[bench      0s] case b ..."]


def test_importing_advgame_and_its_solvers_does_not_import_tqdm():
    code = (
        "import sys, advgame, advgame.solvers.auto, advgame.benchmarks.protocol\n"
        "print('tqdm' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
