"""``advgame bench defaults`` on a tiny instance: the criterion of issue 39 computed by hand,
the CLI, the printed tables and the JSON records."""

import json

import numpy as np
import pytest

from advgame.benchmarks import defaults
from advgame.cli import main

#: iris alone, one split; the speed part on iris; the best strength in hindsight on iris
#: (2 splits, 2 strengths)
TINY = defaults.Settings(("iris",), 1, ("iris",), {"iris": 2}, (1e-3, 1.0))


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


def test_oracle_verdicts_apply_the_criterion_to_the_best_margins():
    """The best-in-hindsight margins per set go through part 1's criterion, per loss."""
    records = [
        {"set": "s1", "loss": "zero_one", "best margin": 0.5},
        {"set": "s2", "loss": "zero_one", "best margin": -0.8},
        {"set": "s3", "loss": "zero_one", "best margin": 0.1},
        {"set": "s1", "loss": "abstain", "best margin": 2.0},
        {"set": "s2", "loss": "abstain", "best margin": -1.2},
    ]
    verdict = {v["loss"]: v for v in defaults.oracle_verdicts(records)}
    assert verdict["zero_one"]["passes"] and verdict["zero_one"]["worst margin"] == -0.8
    assert verdict["zero_one"]["median margin"] == 0.1
    assert not verdict["abstain"]["passes"] and verdict["abstain"]["sets"] == 2
    assert "ordinal" not in verdict


def test_bench_oracle_margins_are_logistic_minus_adversarial_points():
    """On iris (2 splits, 2 strengths) the best strength is the one of the largest mean margin,
    and the margins are LR's test points minus the classifier's, recomputed here."""
    from sklearn.linear_model import LogisticRegression

    from advgame import AdversarialClassifier
    from advgame.metrics import make_loss_scorer

    records = defaults.bench_oracle("iris", 2, (1e-3, 1.0), lambda message: None)
    assert [r["loss"] for r in records] == ["zero_one", "abstain"]
    X, y = defaults.load_set("iris")
    for r in records:
        expected = []
        for seed in range(2):
            X_train, X_test, y_train, y_test = defaults.split(X, y, seed)
            lr = LogisticRegression().fit(X_train, y_train)
            model = AdversarialClassifier(loss=r["loss"], strength=1.0).fit(X_train, y_train)
            score = make_loss_scorer()
            # LR never abstains: its points under either loss are its error rate
            expected.append(
                100 * (1 - lr.score(X_test, y_test)) + 100 * score(model, X_test, y_test)
            )
        assert r["margins"][1] == pytest.approx(np.mean(expected), abs=1e-9)
        assert r["best margin"] == max(r["margins"])
        assert r["best strength"] == (1e-3, 1.0)[int(np.argmax(r["margins"]))]
        assert r["splits"] == 2 and r["best se"] >= 0


@pytest.mark.slow  # about 20 s: 6 candidates x 2 losses, then 5 x 10 path and grid fits
def test_bench_defaults_tiny_writes_json(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(defaults, "QUICK", TINY)
    out = tmp_path / "defaults.json"
    assert main(["bench", "defaults", "--quick", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Part 1" in printed and "Part 2" in printed and "Part 3" in printed
    saved = json.loads(out.read_text())
    records, speed = saved["records"], saved["speed"]
    assert {(r["set"], r["loss"]) for r in records} == {("iris", "zero_one"), ("iris", "abstain")}
    assert {r["model"] for r in records} == {"LR", *defaults.CANDIDATES}
    for r in records:  # 45 test rows: at most a few errors for any of these models
        assert 0 <= r["points"] <= 20 and r["cpu s"] >= 0
    (s,) = speed
    # the same choice, warm or cold, on every split
    assert s["CV strengths"] == s["grid strengths"] and s["CV = grid"] == s["splits"]
    grid = defaults.strength_grid(defaults.CV_STRENGTHS, "soft").tolist()
    assert s["former grid s"] > 0 and set(s["former grid strengths"]) <= set(grid)
    assert 0 <= s["CV = former grid"] <= s["splits"] == len(s["CV strengths"])
    assert s["grid choice margin"] == 0 <= s["former grid choice margin"]
    # certified at the default tol=1e-3 (relative to max(1, |J|), and J <= 2 here)
    assert s["CV worst gap"] <= 2e-3 and np.isfinite(s["default gap"])
    assert s["default s"] >= 0 and s["former s"] >= 0 and 0 <= s["default error"] <= 100
