"""The ``advgame`` command line, run in-process through ``advgame.cli.main``.

The ``--quick`` benchmark and reproduction runs are in the slow tier; each benchmark's tiny run is
in ``test_bench_NAME.py`` (``tests/reproductions/test_fathony2018a.py`` for fathony2018a), and ``bench all`` / ``reproduce all``
run two tiny benchmarks here."""

import json
import re
import subprocess
import sys
from dataclasses import replace

import pytest

from advgame import cli
from advgame.benchmarks import graph, oracle, projections
from advgame.cli import BENCHMARKS, REPRODUCTIONS, main
from advgame.reproductions import blondel2019 as projection_losses
from advgame.reproductions.fathony2018a import protocol as fathony2018a
from advgame.reproductions.fathony2018b import METRICS
from advgame.verify import VerificationReport


def run_cli(capsys, *args):
    """Run ``advgame ARGS``; returns (exit code, stdout, stderr)."""
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def custom_csv(tmp_path):
    path = tmp_path / "loss.csv"
    path.write_text("a,b,c\nx,0,2,5\ny,1,0,3\nz,4,1,0\nw,1.5,1.5,1.5\n")
    return path


EXPLAIN_CASES = {
    "zero-one": (
        ["zero-one", "--k", "3"],
        [
            "recognised structure: zero_one(weight=1)",
            "0 q0 + 1 q1 + 1 q2 - v >= 0   (action 0)",
            "0 p0 + 1 p1 + 1 p2 + f0 <= u   (label 0)",
            "q = (1/3, 1/3, 1/3)   v = 2/3",
            "q = (1/2, 1/2,   0)   v = 1/2",
            "total: 7 extreme points; Fathony et al. (2018a) predict 2^k - 1 (Theorem 5) = 7",
            "Theorem 5, Corollary 9",
            "closed_form",  # the agreement check lists every method
            "vertices",
        ],
    ),
    "ordinal": (
        ["ordinal", "--k", "4"],
        [
            "3 q0 + 2 q1 + 1 q2 + 0 q3 - v >= 0   (action 3)",
            "total: 10 extreme points; Fathony et al. (2018a) predict k(k+1)/2 (Theorem 6) = 10",
            "q = (1/2,   0,   0, 1/2)   v = 3/2",
            "Theorem 6, Eq. 7, Corollary 10",
        ],
    ),
    "squared": (
        ["squared", "--k", "3", "--weight", "2"],
        [
            "recognised structure: squared(weight=2)",
            "8 q0 + 2 q1 + 0 q2 - v >= 0   (action 2)",
            "total: 7 extreme points; Fathony et al. (2018a) predict k + (k+1)k(k-1)/6 (Theorem 7) = 7",
            "Theorem 7, Corollary 11",
        ],
    ),
    "abstain-closed-form": (
        ["abstain", "--k", "3", "--alpha", "0.3"],
        [
            "0.3 q0 + 0.3 q1 + 0.3 q2 - v >= 0   (action abstain)",
            "q = (7/10, 3/10,    0)   v = 3/10",
            "Fathony et al. (2018a) predict k^2 for 0 < alpha < 1/2 (Theorem 12) = 9",
            "Theorem 13",
            "Corollary 14",
        ],
    ),
    "abstain-no-closed-form": (
        ["abstain", "--k", "3", "--alpha", "0.7"],
        [
            "Game.fast_path = 'vertices'",
            "none: Theorems 12-13 need alpha <= 1/2 (here alpha = 0.7): vertex table / LP",
            "total: 7 extreme points (enumerated",
            "closed_form  skipped",
        ],
    ),
}


@pytest.mark.parametrize("case", list(EXPLAIN_CASES))
def test_explain_builtin_losses(capsys, case):
    args, expected = EXPLAIN_CASES[case]
    code, out, _ = run_cli(capsys, "explain", *args)
    assert code == 0
    missing = [text for text in expected if text not in out]
    assert not missing, f"explain {' '.join(args)} lacks {missing}"


def test_explain_custom_matrix(capsys, custom_csv):
    code, out, _ = run_cli(capsys, "explain", "--matrix", str(custom_csv))
    assert code == 0
    assert "recognised structure: general" in out
    assert "1.5 q0 + 1.5 q1 + 1.5 q2 - v >= 0   (action w)" in out
    assert "q = ( 2/3, 1/18, 5/18)   v = 3/2" in out
    assert "total: 9 extreme points" in out
    assert "none (general matrix): vertex table / LP" in out


def test_explain_potentials(capsys):
    code, out, _ = run_cli(capsys, "explain", "zero-one", "--k", "3", "--potentials=1,0.5,-2")
    assert code == 0
    assert "value(f)                = 1.25" in out  # (1 + 0.5 + 1) / 2
    assert "adversary q* (labels)   = (0.5, 0.5, 0)" in out
    assert "predictor p* (actions)  = (0.75, 0.25, 0)" in out
    assert "y=0: 0.25, y=1: 0.75, y=2: 3.25" in out


def test_explain_potentials_abstain(capsys):
    args = ("explain", "abstain", "--k", "3", "--alpha", "0.3", "--potentials=1,0.8,-0.5")
    code, out, _ = run_cli(capsys, *args)
    assert code == 0
    assert "predicted action        = abstain" in out  # gap 0.2 < 1/2 (Corollary 14)


def test_explain_refuses_large_k(capsys):
    code, _, err = run_cli(capsys, "explain", "zero-one", "--k", "31")
    assert code == 2
    assert "limited to k <= 30" in err


def test_explain_reports_refused_enumeration(capsys):
    code, out, _ = run_cli(capsys, "explain", "zero-one", "--k", "30")
    assert code == 0
    assert "not enumerated: the zero-one vertex table for k=30" in out
    assert "2^k - 1 (Theorem 5) = 1,073,741,823" in out


def test_verify(capsys, custom_csv):
    code, out, _ = run_cli(capsys, "verify", "squared", "--k", "6", "--n", "40", "--seed", "3")
    assert code == 0
    assert "ok: every method agrees" in out
    code, out, _ = run_cli(capsys, "verify", "--matrix", str(custom_csv))
    assert code == 0
    assert "vertices" in out


def test_verify_failure_exit_code(capsys, monkeypatch):
    monkeypatch.setattr(VerificationReport, "ok", lambda self, rtol=None: False)
    code, out, _ = run_cli(capsys, "verify", "zero-one", "--k", "3", "--n", "8")
    assert code == 1
    assert "FAILED" in out


def test_demo(capsys):
    code, out, _ = run_cli(capsys, "demo")
    assert code == 0
    for title in ("zero-one loss, k=4", "ordinal", "squared", "abstain loss, k=3, alpha=0.3"):
        assert title in out
    assert out.count("verify (200 rows): ok") == 4
    # the training tables: each model scored by the task's loss, on two vendored data sets
    for title in ("vehicle, abstention alpha=0.3", "red wine quality, ordinal loss"):
        assert title in out
    rows = [line.split() for line in out.splitlines() if line.startswith("  Adversarial")]
    assert len(rows) == 2 and all(0.0 <= float(row[1]) <= 1.0 for row in rows)
    assert out.count("LogReg + Bayes rule") == out.count("LogReg predict (argmax)") == 2


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")  # cvxpy; its accuracy is checked
def test_bench_oracle_quick(capsys, tmp_path):
    """``--quick`` takes about 15 s (well under a minute)."""
    path = tmp_path / "bench.json"
    code, out, err = run_cli(capsys, "bench", "oracle", "--quick", "--out", str(path))
    assert code == 0
    assert "16/16 abstain(alpha=0.3) k=100 ..." in err
    assert "vertices n/a for zero-one k=30" in out
    data = json.loads(path.read_text())
    assert len(data["records"]) == 16
    assert {r["loss"] for r in data["records"]} == set(oracle.LOSSES)
    assert all(r["max_dev"] <= 1e-9 for r in data["records"])
    markdown = oracle.format_report(data["records"], data, markdown=True)
    # the games' table (header and 16 rows), then the bulk table (header and one row per n)
    assert markdown.count("\n| ") == 17 + 1 + len(data["bulk"])


@pytest.mark.parametrize(
    "args, message",
    [
        (["explain", "--matrix", "nonexistent.csv"], "No such file"),
        (["explain", "zero-one", "--k", "1"], "k (number of labels)"),
        (["explain", "abstain", "--k", "3", "--alpha", "2"], "alpha"),
        (["explain", "zero-one"], "needs --k"),
        (["explain", "zero-one", "--k", "3", "--alpha", "0.2"], "only applies to the abstain"),
        (["explain", "zero-one", "--k", "3", "--potentials=1,2"], "--potentials has 2 numbers"),
        (["verify", "ordinal", "--k", "3", "--weight", "-1"], "weight"),
        (["bench", "oracle", "--out", "results.txt"], ".json or .md"),
    ],
)
def test_bad_input(capsys, args, message):
    code, out, err = run_cli(capsys, *args)
    assert code == 2
    assert err.startswith("advgame: error: ")
    assert message in err
    assert "Traceback" not in err


def test_negative_entry_in_csv(capsys, tmp_path):
    path = tmp_path / "negative.csv"
    path.write_text("0,1\n-1,0\n")
    code, _, err = run_cli(capsys, "explain", "--matrix", str(path))
    assert code == 2
    assert "non-negative" in err


def test_usage_error(capsys):
    code, _, err = run_cli(capsys, "explain", "hinge", "--k", "3")
    assert code == 2
    assert "invalid choice" in err


@pytest.mark.parametrize("command", [("explain",), ("verify", "--n", "8")])
def test_loss_names_in_the_api_spelling(capsys, command):
    """``zero_one`` (the API's name) and ``zero-one`` (the older CLI name) run the same game."""
    expected = "zero_one(weight=1)" if command[0] == "explain" else "ok: every method agrees"
    for name in ("zero_one", "zero-one"):
        code, out, err = run_cli(capsys, command[0], name, "--k", "3", *command[1:])
        assert code == 0, err
        assert expected in out


def test_loss_choices_use_the_api_spelling(capsys):
    code, out, _ = run_cli(capsys, "explain", "--help")
    assert code == 0
    assert "{zero_one,ordinal,squared,abstain}" in out
    code, _, err = run_cli(capsys, "explain", "zero_two", "--k", "3")
    assert code == 2 and "invalid choice: 'zero_two'" in err


def test_help_lists_every_subcommand(capsys):
    code, out, _ = run_cli(capsys, "--help")
    assert code == 0
    listed = re.findall(r"^    (\w+)\s", out, flags=re.MULTILINE)
    commands = next(
        action
        for action in cli.build_parser()._actions
        if isinstance(action, cli.argparse._SubParsersAction)
    )
    assert listed == list(commands.choices)
    assert "demo" in listed


@pytest.mark.slow  # a fresh interpreter: 6 s
def test_python_dash_m():
    result = subprocess.run(
        [sys.executable, "-m", "advgame", "explain", "zero-one", "--k", "3"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "Theorem 5" in result.stdout


@pytest.mark.slow
def test_bench_train_quick_writes_json(tmp_path, capsys):
    out = tmp_path / "train.json"
    assert main(["bench", "train", "--quick", "--out", str(out)]) == 0
    records = json.loads(out.read_text())["records"]
    assert [r["problem"] for r in records] == [
        "digits",
        "optdigits",
        "satimage",
        "segment",
        "synthetic n=2000",
        "classification n=2000",
    ]
    for r in records:  # every model was fitted and scored in the same run
        for label in ("AdversarialClassifier", "LogisticRegression", "LinearSVC (CS)"):
            assert r[f"{label} fit s"] > 0 and 0.5 < r[f"{label} accuracy"] <= 1.0
        assert r["eval / GEMMs"] > 0
    assert "fit/LR" in capsys.readouterr().out


@pytest.mark.slow
def test_bench_minimax_quick_writes_json(tmp_path, capsys):
    out = tmp_path / "minimax.json"
    assert main(["bench", "minimax", "--quick", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "mmSVM" in printed and "paper" in printed
    assert "Table 1 (Farnia and Tse 2016" in printed
    records = json.loads(out.read_text())["records"]
    assert [r["problem"] for r in records] == [
        "credit",
        "promoters",
        "votes",
        "hepatitis",
        "synthetic 200x2000",
        "synthetic 200x100",
        "breast cancer",
    ]
    for record in records:
        for model in ("mmSVM", "mmBC", "mmRBC", "LinearSVC", "LogisticRegression"):
            assert 0.0 <= record[model][0] <= 100.0
    assert records[-1]["mmBC"][0] < 15.0  # breast cancer is easy for every linear model


@pytest.mark.slow
def test_bench_graph_quick_writes_json(tmp_path, capsys):
    out = tmp_path / "graph.json"
    assert main(["bench", "graph", "--quick", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "DD/LP" in printed and "brute/LP" in printed
    records = json.loads(out.read_text())["records"]
    assert {r["graph"] for r in records} == {"chain 6", "chain 50", "tree 50", "grid 4x4"}
    for r in records:
        assert r["lp_ms"] > 0
        forest = r["graph"] != "grid 4x4"
        assert (r["dd_ms"] is not None) == forest  # no decomposition with cycles
        assert (r["brute_ms"] is not None) == (r["k"] ** r["nodes"] <= 5_000)
        if forest:  # every example certified by the decomposition itself, close to the LP
            assert r["dd_certified"] == r["examples"] and r["dd_dev"] <= 1e-6


@pytest.mark.slow
def test_bench_graphical_quick_writes_json(tmp_path, capsys):
    out = tmp_path / "graphical.json"
    assert main(["bench", "graphical", "--quick", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "AGM exact" in printed and "CRF" in printed and "SSVM" in printed
    records = json.loads(out.read_text())["records"]
    synthetic = [r for r in records if not r["part"].startswith("ocr")]
    assert [r["metric"] for r in synthetic] == [m[0] for m in METRICS] * 2  # two generators
    for record in synthetic:
        for model in ("AGM exact", "AGM SGD", "CRF", "SSVM"):
            mean, spread, _ = record[model]
            assert 0.0 <= mean < 2.0 and spread >= 0.0  # a node loss of at most 4 (squared)
    assert [r["metric"] for r in records][-2:] == ["Hamming", "cost-sensitive"]  # OCR parts


@pytest.mark.slow
def test_bench_projection_losses_quick_writes_json(tmp_path, capsys):
    out = tmp_path / "projection_losses.json"
    assert main(["bench", "projection-losses", "--quick", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    for title in ("Table 1", "Table 2", "Table 3", "Table 6", "Table 7", "Table 4"):
        assert title in printed
    records = json.loads(out.read_text())["records"]
    tables = {r["table"] for r in records}
    assert tables == {"Euclidean", "KL", "Table 3", "accuracy", "micro F1", "F1", "ordinal"}
    ranking = next(r for r in records if r["table"] == "Euclidean")["columns"]
    assert set(ranking) >= {"B/B", "matching", "[0,1]/[0,1]"}
    assert all(0 <= mean <= 100 for mean, _, _ in ranking.values())


def _check_reports(directory, names):
    """``NAME.json`` (records) and ``NAME.md`` (the printed report, fenced) for every name."""
    for name in names:
        records = json.loads((directory / f"{name}.json").read_text())["records"]
        assert records, name
        report = (directory / f"{name}.md").read_text()
        assert report.startswith("```\nadvgame ") and report.endswith("```\n"), name


# ------------------------------------------------ bench all / reproduce all on two tiny benchmarks
#: Tiny settings of the benchmarks that the orchestration tests run (one row or data set each).
TINY = {
    graph: graph.Settings(examples=1, cases=(("chain 6", (2,)),)),
    projections: replace(
        projections.QUICK,
        points=5,
        repeats=1,
        cvxpy_points=2,
        fw_points=1,
        cases=(("simplex", (10,)),),
    ),
    fathony2018a: replace(
        fathony2018a.QUICK,
        linear=fathony2018a.Tuning(folds=2, grid=(1e-2,), widths=(None,), refine=()),
        multiclass=(),
        ordinal=("machinecpu",),
        ordinal_rbf=(),
        rows={"machinecpu": 60},
    ),
    projection_losses: replace(
        projection_losses.QUICK,
        grid=(1.0,),
        ranking=("iris",),
        table3=(),
        ordinal=("machinecpu/5",),
        multilabel_rows=100,
    ),
}


def _check_run_all(directory, out, err, names, counts):
    """Numbered progress, each report printed in turn and its NAME.md, the records in NAME.json
    (``counts``: how many per benchmark), and no other file."""
    _check_reports(directory, names)
    progress = [line for line in err.splitlines() if re.match(r"\[\d+/\d+\] ", line)]
    assert progress == [f"[{i}/{len(names)}] advgame bench {n}" for i, n in enumerate(names, 1)]
    files = sorted(path.name for path in directory.iterdir())
    assert files == sorted(f"{name}.{suffix}" for name in names for suffix in ("json", "md"))
    positions = []
    for name, count in zip(names, counts):
        report = (
            (directory / f"{name}.md").read_text().removeprefix("```\n").removesuffix("\n```\n")
        )
        assert out.count(report) == 1, name  # the report printed for this benchmark, fenced
        positions.append(out.index(report))
        assert len(json.loads((directory / f"{name}.json").read_text())["records"]) == count
    assert positions == sorted(positions)  # in the order of the progress lines


def test_bench_all_runs_each_benchmark_in_turn(tmp_path, capsys, monkeypatch):
    names = ["graph", "projections"]
    monkeypatch.setattr(cli, "BENCHMARKS", tuple(b for b in BENCHMARKS if b[0] in names))
    for module in (graph, projections):
        monkeypatch.setattr(module, "QUICK", TINY[module])
    directory = tmp_path / "results"  # created by the run
    assert main(["bench", "all", "--quick", "--out", str(directory)]) == 0
    captured = capsys.readouterr()
    # graph: one example of chain 6, k=2, three losses; projections: simplex k=10, two geometries
    _check_run_all(directory, captured.out, captured.err, names, counts=[3, 2])


def test_reproduce_all_runs_each_paper_in_turn(tmp_path, capsys, monkeypatch):
    # every paper has its reproduction; each one's --quick run is tested with its benchmark
    papers = ["fathony2018a", "farnia_tse2016", "fathony2018b", "wang_qiao2022", "blondel2019"]
    assert [cli._paper(bench) for bench, _ in REPRODUCTIONS] == papers
    runs = ["fathony2018a", "projection-losses"]
    monkeypatch.setattr(cli, "REPRODUCTIONS", tuple(r for r in REPRODUCTIONS if r[0] in runs))
    for module in (fathony2018a, projection_losses):
        monkeypatch.setattr(module, "QUICK", TINY[module])
    assert main(["reproduce", "all", "--quick", "--out", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("advgame reproduce fathony2018a")
    # fathony2018a: Table 4 on machine CPU; blondel2019: 2 ranking, 3 multilabel, 1 ordinal record
    _check_run_all(tmp_path, captured.out, captured.err, runs, [1, 6])
    code, _, err = run_cli(capsys, "reproduce", "seed000")
    assert code == 2 and "invalid choice: 'seed000'" in err


def test_explain_prints_the_declared_learning_game(capsys):
    code, out, _ = run_cli(
        capsys,
        "explain",
        "abstain",
        "--k",
        "3",
        "--alpha",
        "0.7",
        "--uncertainty",
        "l1",
        "--strength",
        "0.1",
        "--latex",
    )
    assert code == 0
    assert "The declared learning game (PredictionGame.explain)" in out
    assert "abstain with alpha = 0.7 > 0.5" in out and "fast path: the vertex table" in out
    assert "||m(q)||_1 <= 0.1" in out and "program: LP" in out
    assert r"0.1 \|\theta\|_{\infty}" in out and r"\|m(q)\|_{1} \le 0.1" in out


def test_explain_refuses_a_declaration_that_does_not_fit(capsys):
    code, _, err = run_cli(
        capsys, "explain", "zero-one", "--k", "3", "--features", "rbf", "--uncertainty", "l1"
    )
    assert code == 2 and "does not fit features" in err and "NormBall(radius, norm=2)" in err


def test_no_progress_prints_the_reports_only(tmp_path, capsys, monkeypatch):
    names = ["graph"]
    monkeypatch.setattr(cli, "BENCHMARKS", tuple(b for b in BENCHMARKS if b[0] in names))
    monkeypatch.setattr(graph, "QUICK", TINY[graph])
    assert main(["bench", "graph", "--quick"]) == 0
    loud = capsys.readouterr()
    assert "[graph" in loud.err  # the progress lines this flag silences
    assert main(["bench", "all", "--quick", "--no-progress", "--out", str(tmp_path)]) == 0
    assert main(["bench", "graph", "--quick", "--no-progress"]) == 0
    quiet = capsys.readouterr()
    assert quiet.err == "" and quiet.out.count("advgame bench graph, ") == 2  # both reports


def test_reproduction_parts_are_the_modules_parts(monkeypatch):
    """``--part`` offers exactly each module's ``PARTS`` (listed in the CLI so that building
    the parser imports no reproduction) and hands the name to its ``run``."""
    for bench, (parts, _) in cli.REPRODUCTION_PARTS.items():
        module = cli._benchmark(bench)
        assert tuple(module.PARTS) == parts
        calls = []
        monkeypatch.setattr(module, "run", lambda calls=calls, **options: calls.append(options))
        for part in parts:
            assert main(["reproduce", cli._paper(bench), "--part", part]) == 0
        assert [call["parts"] for call in calls] == [(part,) for part in parts]


def test_blondel_parts_select_their_settings():
    with pytest.raises(ValueError, match="parts must name one part"):
        projection_losses.run(parts=("table-3", "tables-1-2"), progress=False)
    with pytest.raises(ValueError, match="parts must name one part"):
        projection_losses.run(parts=("tables-1-2", "table-3-small"), progress=False)
