"""``advgame bench projections``: the quick run through the CLI (slow tier) and a tiny run of the
same path, and its refusal to time a wrong projection."""

import json
import math
import re
from dataclasses import replace

import numpy as np
import pytest

from advgame import polytopes
from advgame.benchmarks import projections
from advgame.cli import main

#: cvxpy may flag Clarabel's answer as inaccurate; the benchmark checks every answer itself.
pytestmark = pytest.mark.filterwarnings("ignore:Solution may be inaccurate")


@pytest.mark.slow
def test_bench_projections_quick_writes_json(tmp_path, capsys):
    out = tmp_path / "projections.json"
    assert main(["bench", "projections", "--quick", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "cvxpy/adv" in printed and "FW/adv" in printed and "Clarabel" in printed
    records = json.loads(out.read_text())["records"]
    cases = {(r["polytope"], r["geometry"]) for r in records}
    assert cases == {(name, g) for name in projections.POLYTOPES for g in polytopes.GEOMETRIES}
    assert len(records) == len(cases)  # one size each in --quick
    for r in records:
        for key in ("advgame_us", "cvxpy_us", "fw_us", "cvxpy_over_advgame", "fw_over_advgame"):
            assert math.isfinite(r[key]) and r[key] > 0, (r["polytope"], r["geometry"], key)
        assert r["cvxpy_dev"] <= projections.CHECK_ATOL and r["fw_dev"] <= projections.CHECK_ATOL
        assert r["cvxpy_points"] == projections.QUICK.cvxpy_points and r["fw_points"] == 1
        assert r["points"] == projections.QUICK.points


TINY = replace(projections.QUICK, points=5, repeats=1, cvxpy_points=2, fw_points=1)


def test_bench_projections_tiny_writes_json(tmp_path, capsys, monkeypatch):
    """The quick run's path on a vector polytope and a matrix one, one size each."""
    cases = (("simplex", (10,)), ("Birkhoff", (5,)))
    monkeypatch.setattr(projections, "QUICK", replace(TINY, cases=cases))
    out = tmp_path / "projections.json"
    assert main(["bench", "projections", "--quick", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "4/4 Birkhoff kl k=5 ..." in captured.err
    header = next(line for line in captured.out.splitlines() if line.startswith("polytope "))
    assert re.split(r"\s{2,}", header.strip()) == [name for name, _ in projections.COLUMNS]
    assert "cvxpy/adv" in header and "FW/adv" in header and "Clarabel" in captured.out
    data = json.loads(out.read_text())
    assert data["settings"]["points"] == 5 and data["check_atol"] == projections.CHECK_ATOL
    records = data["records"]
    assert [(r["polytope"], r["geometry"], r["k"]) for r in records] == [
        (name, g, k) for name, ks in cases for k in ks for g in polytopes.GEOMETRIES
    ]
    for r in records:
        for key in ("advgame_us", "cvxpy_us", "fw_us", "cvxpy_over_advgame", "fw_over_advgame"):
            assert math.isfinite(r[key]) and r[key] > 0, (r["polytope"], r["geometry"], key)
        assert r["cvxpy_dev"] <= projections.CHECK_ATOL and r["fw_dev"] <= projections.CHECK_ATOL
        assert (r["points"], r["cvxpy_points"], r["fw_points"]) == (5, 2, 1)
        assert r["coordinates"] == (25 if r["polytope"] == "Birkhoff" else 10)


@pytest.mark.parametrize(
    "wrong, reference",
    [
        (lambda self, theta, geometry="euclidean": np.asarray(theta), "not in the polytope"),
        # feasible but not the projection: only the comparison with cvxpy catches it
        (
            lambda self, theta, geometry="euclidean": np.full_like(theta, 1.0 / theta.shape[-1]),
            "cvxpy",
        ),
    ],
)
def test_wrong_projection_is_refused(monkeypatch, wrong, reference):
    monkeypatch.setattr(polytopes.Simplex, "project", wrong)
    with pytest.raises(
        AssertionError, match=rf"^simplex \(Simplex\(\)\) euclidean k=10: .*{reference}"
    ):
        projections.bench_case("simplex", "euclidean", 10, TINY)


def test_frank_wolfe_disagreement_is_refused(monkeypatch):
    """A reference that disagrees fails the run too: Frank-Wolfe stopped after one step."""
    monkeypatch.setattr(projections, "FW_MAX_ITER", 1)
    with pytest.raises(AssertionError, match=r"^unit cube .* Frank-Wolfe's by"):
        projections.bench_case("unit cube", "euclidean", 10, TINY)
