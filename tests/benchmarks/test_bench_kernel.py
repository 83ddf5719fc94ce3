"""``advgame bench kernel --quick``: the CLI, the printed table and the JSON records."""

import json

from advgame.benchmarks import kernel
from advgame.cli import main


def test_bench_kernel_quick_writes_json(tmp_path, capsys):
    out = tmp_path / "kernel.json"
    assert main(["bench", "kernel", "--quick", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "2/2 digits ..." in captured.err
    printed = captured.out
    assert printed.startswith("advgame bench kernel") and "median of 1 fit(s)" in printed
    records = json.loads(out.read_text())["records"]
    assert [(r["problem"], r["n_train"], r["k"]) for r in records] == [
        ("optdigits", 210, 10),
        ("digits", 210, 10),
    ]
    for r in records:
        assert r["status"] == "smoothing: certified"
        assert 0 <= r["gap"] <= kernel.TOL * max(1.0, r["objective"])
        assert r["ours fit s"] > 0 and r["svc fit s"] > 0 and r["ratio"] > 0
        # the reference solver reaches the same optimum within the two certified gaps
        assert r["newton fit s"] > 0 and r["newton gap"] <= kernel.TOL * max(1.0, r["objective"])
        assert abs(r["newton objective"] - r["objective"]) <= r["gap"] + r["newton gap"] + 1e-12
        # well above chance (1/k) on 90 test rows
        assert 0.5 < r["ours accuracy"] <= 1.0 and 0.5 < r["svc accuracy"] <= 1.0
