"""``advgame bench defaults`` on a tiny instance: the criterion of issue 39 computed by hand,
the CLI, the printed tables and the JSON records."""

import json

import numpy as np
import pytest

from advgame.benchmarks import defaults
from advgame.cli import main

#: iris alone, one split; the speed part on iris
TINY = defaults.Settings(("iris",), 1, ("iris",))


def test_verdicts_apply_the_criterion():
    """margin = LR points - candidate points per set; a candidate passes when the median margin
    is >= 0 and the worst >= -1 (here: a passes, b is 1.5 points worse on one set, c worse on
    the median)."""
    points = {"s1": (10.0, 9.0, 11.5, 11.0), "s2": (20.0, 20.5, 19.0, 21.0), "s3": (5, 5, 5, 5)}
    records = [
        {"set": name, "loss": "zero_one", "model": model, "points": p}
        for name, row in points.items()
        for model, p in zip(("LR", "a", "b", "c"), row)
    ]
    verdict = {v["model"]: v for v in defaults.verdicts(records)}
    assert verdict["a"]["passes"] and verdict["a"]["worst margin"] == -0.5
    assert verdict["b"]["median margin"] == 0.0 and verdict["b"]["worst margin"] == -1.5
    assert not verdict["b"]["passes"]
    assert verdict["c"]["median margin"] == -1.0 and not verdict["c"]["passes"]
    assert {v["sets"] for v in verdict.values()} == {3}


@pytest.mark.slow  # about 20 s: 6 candidates x 2 losses, then 5 x 10 path and grid fits
def test_bench_defaults_tiny_writes_json(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(defaults, "QUICK", TINY)
    out = tmp_path / "defaults.json"
    assert main(["bench", "defaults", "--quick", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Part 1" in printed and "Part 2" in printed
    saved = json.loads(out.read_text())
    records, speed = saved["records"], saved["speed"]
    assert {(r["set"], r["loss"]) for r in records} == {("iris", "zero_one"), ("iris", "abstain")}
    assert {r["model"] for r in records} == {"LR", *defaults.CANDIDATES}
    for r in records:  # 45 test rows: at most a few errors for any of these models
        assert 0 <= r["points"] <= 20 and r["cpu s"] >= 0
    (s,) = speed
    assert s["CV strength"] == s["grid strength"]  # the same choice, warm or cold
    # certified at the default tol=1e-3 (relative to max(1, |J|), and J <= 2 here)
    assert s["CV worst gap"] <= 2e-3 and np.isfinite(s["default gap"])
    assert s["default s"] >= 0 and s["former s"] >= 0 and 0 <= s["default error"] <= 100
