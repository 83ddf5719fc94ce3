"""Progress (issue #36, point 2): ``verbose=1`` prints one line per solver phase (solver, why it
ran, time, certified gap), ``verbose=2`` also the iteration blocks of every phase, at most one a
second (a fake clock here, no sleeping) plus each phase's first and last; a phase that stops on
its budget and hands over says so instead of "reached"; ``verbose=0`` prints nothing."""

import re
import warnings

import networkx as nx
import numpy as np
import pytest

import advgame as ag
from advgame.solvers import _progress, auto
from advgame.solvers._progress import Progress

RNG = np.random.default_rng(0)
X = RNG.normal(size=(60, 4))
Y = (X[:, 0] + 0.5 * RNG.normal(size=60) > 0).astype(int) + (X[:, 1] > 0)
STEP_LINE = re.compile(
    r"^\[\w+\]   (?P<phase>[^,]+), (?P<unit>\w+) (?P<n>\d+): .*, (?P<t>[\d.]+) s$"
)


class FakeClock:
    """Advances ``tick`` seconds at each reading."""

    def __init__(self, tick):
        self.now, self.tick = 0.0, tick

    def __call__(self):
        self.now += self.tick
        return self.now


def _reporter(verbose, tick=0.25):
    lines = []
    return Progress(lines.append, verbose, clock=FakeClock(tick)), lines


def test_iteration_lines_are_rate_limited_with_the_first_and_the_last():
    progress, lines = _reporter(verbose=2, tick=0.25)
    phase = progress.phase("smoothing", "a reason", "step", total=None)
    for n in range(1, 11):  # readings at 0.5, 0.75, ..., 2.75 s after the start (0.25)
        phase.step(n, 1e-3 / n, J=1.0 / n)
    phase.end("certified", 10, 1e-4)
    steps = [int(line.split("step ")[1].split(":")[0]) for line in lines[:-1]]
    # the first; then the first 1 s after the last printed (0.5 -> 1.5 -> 2.5 s); the last
    assert steps == [1, 5, 9, 10]
    assert lines[0] == "  smoothing, step 1: J 1, certified gap 1.00e-03, 0.2 s"
    assert lines[-1].startswith("smoothing (a reason): certified; 10 steps, ")
    assert lines[-1].endswith("certified gap 1.00e-04")


def test_an_uncertified_step_says_so_and_verbose_one_prints_the_phases_only():
    progress, lines = _reporter(verbose=2)
    phase = progress.phase("L-BFGS", unit="iteration")
    phase.step(1, J=0.5)
    phase.step(2, np.inf)
    assert lines[0].endswith("gap not yet certified, 0.2 s") and len(lines) == 1
    progress, lines = _reporter(verbose=1)
    phase = progress.phase("L-BFGS", unit="iteration")
    phase.step(1, J=0.5)
    phase.end("converged", 1)
    assert lines == ["L-BFGS: converged; 1 iteration, 0.2 s, gap not yet certified"]
    for quiet in (Progress(None, 2), Progress(lines.append, 0)):
        phase = quiet.phase("L-BFGS")
        phase.step(1)
        phase.end("converged", 1)
    assert len(lines) == 1


def test_a_phase_that_hands_over_says_so_instead_of_reached():
    progress, lines = _reporter(verbose=1)
    message = "max_iter=300 reached: gap 1.24e-03 above tol=0.0001 * max(1, |J|)"
    phase = progress.phase("smoothing")
    phase.end(message, 300, 1.24e-3, handover="cutting planes", limit_reached=True)
    phase = progress.phase("linear dual ascent", unit="epoch")
    phase.end("dense: 9 of 10 rows still active; gap 1e-02 above tol", 8, 1e-2, "smoothing")
    assert lines[0].startswith("smoothing: stopped at its budget (max_iter=300); 300 steps")
    assert lines[0].endswith("certified gap 1.24e-03; handing over to cutting planes")
    assert lines[1].startswith("linear dual ascent: stopped (dense: 9 of 10 rows still active)")
    assert "reached" not in "".join(lines)


def _fit_lines(model, capfd, monkeypatch, data=(X, Y), tick=0.3):
    monkeypatch.setattr(_progress, "clock", FakeClock(tick))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(*data)
    captured = capfd.readouterr()
    assert captured.out == ""
    return captured.err.splitlines()


def test_a_fit_prints_each_phase_and_the_cutting_plane_rounds_rate_limited(capfd, monkeypatch):
    # smoothing stops at max_iter=12 and hands over to cutting planes, which certify
    model = ag.AdversarialClassifier(uncertainty="l2", strength=0.01, max_iter=12, verbose=2)
    lines = _fit_lines(model, capfd, monkeypatch)
    assert model.converged_ == "certified"
    name = "[AdversarialClassifier] "
    phases = [line for line in lines if line.startswith(name) and " (" in line.split(":")[0]]
    assert phases[0].startswith(name + "smoothing (solver='smoothing'): stopped at its budget")
    assert phases[0].endswith("; handing over to cutting planes")
    assert phases[1].startswith(name + "cutting planes (n * p = ") and ": certified;" in phases[1]
    steps = [STEP_LINE.match(line) for line in lines]
    rounds = [m for m in steps if m and m["phase"] == "cutting planes"]
    smoothing = [m for m in steps if m and m["phase"] == "smoothing"]
    assert rounds and rounds[0]["n"] == "1" and smoothing[0]["n"] == "0"
    assert [m["unit"] for m in rounds] == ["round"] * len(rounds)
    # the clock reads 0.3 s later at every call: 13 steps in 12 readings at least, yet at most
    # one line a second (plus the last, at the end of the phase)
    assert smoothing[-1]["n"] == "12" and len(smoothing) < 13
    times = [float(m["t"]) for m in smoothing[:-1]]
    assert all(later - earlier >= 1.0 for earlier, later in zip(times, times[1:]))
    # no stop reason that "reached" its limit "above tol" before a certified end
    assert not any("reached" in line and "above tol" in line for line in lines)


def test_verbose_zero_prints_nothing_and_one_prints_phases_without_iterations(capfd, monkeypatch):
    quiet = ag.AdversarialClassifier(uncertainty="l2", strength=0.01, max_iter=12)
    assert _fit_lines(quiet, capfd, monkeypatch) == []
    loud = ag.AdversarialClassifier(uncertainty="l2", strength=0.01, max_iter=12, verbose=1)
    lines = _fit_lines(loud, capfd, monkeypatch)
    assert not any(STEP_LINE.match(line) for line in lines)
    assert sum("handing over to cutting planes" in line for line in lines) == 1
    assert "\r" not in "".join(lines)  # no progress bar outside a terminal


KERNEL = {"kernel": "rbf", "gamma": 0.5}


@pytest.mark.parametrize(
    ("make", "data", "phase"),
    [
        (lambda: ag.AdversarialClassifier(strength=0.05), (X, Y), "linear dual ascent"),
        (
            lambda: ag.AdversarialClassifier(solver="subgradient", max_iter=3, certify=False),
            (X, Y),
            "averaged AdaGrad",
        ),
        (lambda: ag.AdversarialClassifier(uncertainty="l1", solver="lbfgs"), (X, Y), "L-BFGS"),
        (lambda: ag.AdversarialClassifier(strength=0.05, **KERNEL), (X, Y), "kernel dual ascent"),
        (
            lambda: ag.AdversarialClassifier(loss="ordinal", strength=0.05, **KERNEL),
            (X, Y),
            "kernel Newton",
        ),
        (lambda: ag.MinimaxClassifier(solver="fast"), (X, Y), "smoothed FISTA"),
        (lambda: ag.MinimaxRegressor(), (X, X[:, 0]), "FISTA"),
        (
            lambda: ag.AdversarialGraphicalModel(graph=nx.path_graph(3), solver="cutting_plane"),
            ([RNG.normal(size=(3, 2)) for _ in range(6)], [np.arange(3) % 2 for _ in range(6)]),
            "cutting planes",
        ),
    ],
)
def test_every_solver_loop_reports_its_iterations(make, data, phase, capfd, monkeypatch):
    model = make().set_params(verbose=2)
    lines = _fit_lines(model, capfd, monkeypatch, data)
    name = f"[{type(model).__name__}] "
    assert any((m := STEP_LINE.match(line)) and m["phase"] == phase for line in lines), lines
    assert any(line.startswith(f"{name}{phase}") for line in lines), lines


def test_a_large_first_order_fit_hands_over_to_the_certified_solver(capfd, monkeypatch):
    monkeypatch.setattr(auto, "AUTO_CERTIFY_SIZE", 0)  # too large for cutting planes
    model = ag.AdversarialClassifier(solver="lbfgs", uncertainty="l2", strength=0.01, verbose=1)
    lines = _fit_lines(model, capfd, monkeypatch)
    name = "[AdversarialClassifier] "
    phases = [line for line in lines if line.startswith((name + "L-BFGS", name + "smoothing"))]
    assert phases[0].startswith(name + "L-BFGS (solver='lbfgs'): stopped (")
    assert phases[0].endswith("gap not yet certified; handing over to the certified solver")
    assert phases[1].startswith(name + "smoothing (certify='auto', n * p = 900 > 0: from lbfgs")
    assert model.converged_ == "certified" and ": certified; " in phases[1]
