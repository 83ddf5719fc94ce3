"""``advgame reproduce fathony2018a``: the quick run end to end (Tables 2, 4, 5
and 6 of Fathony et al. 2018a; slow tier) and a tiny run of the same path, the tuner and the
Gaussian features."""

import json
import math
import re
from dataclasses import asdict, replace

import numpy as np
import pytest
from sklearn.model_selection import KFold
from sklearn.preprocessing import StandardScaler

from advgame import AdversarialClassifier
from advgame.cli import main
from advgame.reproductions import fathony2018a
from advgame.reproductions.fathony2018a import protocol, tables
from advgame.reproductions.fathony2018a.settings import FULL_ROWS

#: cvxpy may flag Clarabel's answer as inaccurate at the grid's weakest regularisation.
pytestmark = pytest.mark.filterwarnings("ignore:Solution may be inaccurate")


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("fathony2018a") / "x.json"
    printed = []
    records = protocol.run(quick=True, out=out, print_fn=printed.append)
    return records, json.loads(out.read_text()), "\n".join(printed)


@pytest.mark.slow
@pytest.mark.xdist_group("fathony2018a_quick")  # one worker runs the quick_run fixture once
def test_quick_records_complete_and_in_range(quick_run):
    records, saved, _ = quick_run
    settings = protocol.QUICK
    assert saved["records"] == json.loads(json.dumps(records))
    expected = {
        (table, kernel, d)
        for table in ("zero-one", "abstain")
        for kernel in ("linear", "rbf")
        for d in settings.multiclass
    }
    expected |= {("ordinal", "linear", d) for d in settings.ordinal}
    expected |= {("ordinal", "rbf", d) for d in settings.ordinal_rbf}
    assert {(r["table"], r["kernel"], r["dataset"]) for r in records} == expected
    upper = {
        "zero-one": 100.0,
        "abstain": 1.0,
        "ordinal": max(b for _, b in tables.ORDINAL_BINNING.values()) - 1,
    }
    for r in records:
        assert tuple(r["columns"]) == tables.columns(r["table"], r["kernel"])
        tuning = settings.linear if r["kernel"] == "linear" else settings.rbf
        stage2 = [1.0, *tuning.refine]
        lambdas = {lam * f for lam in tuning.grid for f in stage2}
        for column, (mean, sd, mark) in r["columns"].items():
            assert math.isfinite(mean) and 0.0 <= mean <= upper[r["table"]], (r["dataset"], column)
            assert math.isfinite(sd) and sd >= 0.0
            assert mark == ""  # 2 splits: too few for the Wilcoxon marks
            lam, width = r["chosen"][column]
            assert any(math.isclose(lam, v) for v in lambdas), (column, lam)
            assert (width is None) == (r["kernel"] == "linear")
        if r["table"] == "abstain":
            assert all(0.0 <= v <= 100.0 for v in r["abstained"].values())
    iris = {(r["table"], r["kernel"]): r for r in records if r["dataset"] == "iris"}
    for kernel in ("linear", "rbf"):
        assert iris["zero-one", kernel]["columns"]["AL01"][0] > 85.0  # iris is easy
        assert iris["abstain", kernel]["columns"]["ALabs"][0] < 0.15


@pytest.mark.slow
@pytest.mark.xdist_group("fathony2018a_quick")  # one worker runs the quick_run fixture once
def test_quick_report_has_paper_numbers_and_no_marks(quick_run):
    _, _, report = quick_run
    assert report.startswith("advgame reproduce fathony2018a")
    assert "96.3(3.1)" in report  # Table 2 linear, iris, AL01
    assert "96.7(2.4)" in report  # Table 2 Gaussian, iris, AL01
    assert "0.449(0.090)" in report  # Table 4, machinecpu, AL-th
    assert "0.702(0.140)" in report  # Table 4, machinecpu, CSOVA
    assert "0.652(0.120)" in report  # Table 5, machinecpu, SVORIM
    assert "0.037(0.020) [7%]" in report  # Table 6 linear, iris, AL-abstain
    assert "0.043(0.030) [1%]" in report  # Table 6 Gaussian, iris, CS
    assert "# *" not in report


#: 60-row subsamples, 2 splits, 2 folds, one lambda (and a stage-2 refinement for the linear
#: models), one Gaussian width, rank 10; the data sets are set by each case below.
TINY = replace(
    protocol.QUICK,
    splits=2,
    jobs=1,
    linear=protocol.Tuning(folds=2, grid=(1e-2,), widths=(None,), refine=(3,)),
    rbf=protocol.Tuning(folds=2, grid=(1e-2,), widths=(1.0,), refine=()),
    rank=10,
    rows={"iris": 60, "machinecpu": 60},
)
#: Tables 2 and 6 on iris, Tables 4 and 5 on machine CPU (linear and Gaussian each): the data sets
#: of the case, its records and published numbers that the report must show.
TINY_CASES = {
    "multiclass": (
        {"multiclass": ("iris",), "ordinal": (), "ordinal_rbf": ()},
        [
            ("zero-one", "linear", "iris"),
            ("abstain", "linear", "iris"),
            ("zero-one", "rbf", "iris"),
            ("abstain", "rbf", "iris"),
        ],
        ("96.3(3.1)", "96.7(2.4)", "0.037(0.020) [7%]", "0.043(0.030) [1%]"),
    ),
    "ordinal": (
        {"multiclass": (), "ordinal": ("machinecpu",), "ordinal_rbf": ("machinecpu",)},
        [("ordinal", "linear", "machinecpu"), ("ordinal", "rbf", "machinecpu")],
        ("0.449(0.090)", "0.702(0.140)", "0.652(0.120)"),
    ),
}


def _columns(report, title):
    """The cells of the header line under the table titled ``title ...``."""
    lines = report.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    return re.split(r"\s{2,}", lines[start + 1].strip())


@pytest.mark.parametrize("case", list(TINY_CASES))
def test_tiny_reproduce_writes_json(tmp_path, capsys, monkeypatch, case):
    """``advgame reproduce fathony2018a --quick`` on a tiny instance: its records and report."""
    data_sets, expected, published = TINY_CASES[case]
    settings = replace(TINY, **data_sets)
    monkeypatch.setattr(protocol, "QUICK", settings)
    out = tmp_path / "protocol.json"
    assert main(["reproduce", "fathony2018a", "--quick", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert f"{expected[-1][2]} (rbf): split 2/2 (42/18) ..." in captured.err
    report = captured.out
    saved = json.loads(out.read_text())
    assert saved["settings"] == json.loads(json.dumps(asdict(settings)))
    records = saved["records"]
    assert [(r["table"], r["kernel"], r["dataset"]) for r in records] == expected
    upper = {
        "zero-one": 100.0,
        "abstain": 1.0,
        "ordinal": max(b for _, b in tables.ORDINAL_BINNING.values()) - 1,
    }
    for r in records:
        table = (r["table"], r["kernel"])
        assert tuple(r["columns"]) == tables.columns(*table) and r["splits"] == 2
        tuning = settings.linear if r["kernel"] == "linear" else settings.rbf
        lambdas = {lam * f for lam in tuning.grid for f in (1.0, *tuning.refine)}
        for column, (mean, sd, mark) in r["columns"].items():
            assert math.isfinite(mean) and 0.0 <= mean <= upper[r["table"]], (table, column)
            assert math.isfinite(sd) and sd >= 0.0 and mark == ""  # 2 splits: no marks
            lam, width = r["chosen"][column]
            assert any(math.isclose(lam, v) for v in lambdas), (table, column, lam)
            assert width == (None if r["kernel"] == "linear" else 1.0), (table, column)
        if r["table"] == "abstain":
            assert set(r["abstained"]) == set(r["columns"])
            assert all(0.0 <= v <= 100.0 for v in r["abstained"].values())
        if r["table"] == "zero-one":
            assert r["columns"]["AL01"][0] > 50.0  # iris: well above chance (33%)
    assert report.startswith("advgame reproduce fathony2018a")
    assert "2 random 70/30 splits (rows subsampled per split: iris 60, machinecpu 60)" in report
    for table, kernel, _ in expected:
        title = tables.TITLES[table, kernel]
        assert _columns(report, title) == ["data", *tables.columns(table, kernel)], title
    missing = [number for number in published if number not in report]
    assert not missing, f"the report lacks the published {missing}"
    assert "# *" not in report


def test_tuning_picks_the_value_with_the_lowest_validation_loss():
    """The tuner's choice equals a cross-validation written out by hand."""
    X, y = protocol._load("iris")
    train = np.arange(0, 150, 2)
    tuning = protocol.Tuning(folds=3, grid=(1e-4, 1.0, 30.0), widths=(None,), refine=())
    plans = protocol._multiclass_plans()[:1]  # AL01
    chosen = protocol.tune(plans, X, y, train, tuning, rank=5, seed=3)
    folds = KFold(3, shuffle=True, random_state=3).split(train)
    by_hand = np.zeros(len(tuning.grid))
    for a, b in folds:
        scaler = StandardScaler().fit(X[train[a]])
        for i, lam in enumerate(tuning.grid):
            model = AdversarialClassifier(strength=lam).fit(
                scaler.transform(X[train[a]]), y[train[a]]
            )
            by_hand[i] += np.mean(model.predict(scaler.transform(X[train[b]])) != y[train[b]])
    assert chosen["AL01"]["zero-one"] == (tuning.grid[int(np.argmin(by_hand))], None)
    assert by_hand[2] > by_hand[0]  # lambda = 30 underfits: the choice is not arbitrary


def test_gaussian_features_are_kernel_principal_components():
    """Gaussian features: their Gram matrix on the fitted rows is the best rank-r approximation
    of the kernel matrix of the standardised rows (centred, as kernel PCA)."""
    X, _ = protocol._load("iris")
    fit, other = np.arange(100), np.arange(100, 150)
    A, B = protocol._features(X, fit, other, width=1.0, rank=150)
    S = StandardScaler().fit(X[fit]).transform(X[fit])
    K = np.exp(-1.0 / X.shape[1] * ((S[:, None] - S[None]) ** 2).sum(-1))
    J = np.eye(100) - 1.0 / 100
    np.testing.assert_allclose(A @ A.T, J @ K @ J, atol=1e-8)
    assert B.shape == (50, 100)
    A3, _ = protocol._features(X, fit, other, width=1.0, rank=3)
    s = np.linalg.eigvalsh(J @ K @ J)[::-1]
    np.testing.assert_allclose(np.linalg.eigvalsh(A3.T @ A3)[::-1], s[:3], rtol=1e-8)


def test_marks_with_enough_splits():
    """With >= MIN_SPLITS_FOR_TEST splits a record carries Wilcoxon marks, the best one starred."""
    losses = {"a": [0.1, 0.2, 0.1, 0.2, 0.1, 0.2], "b": [0.9, 0.8, 0.9, 0.8, 0.9, 0.7]}
    record = protocol._record("abstain", "linear", "toy", losses, splits=6)
    assert record["columns"]["a"][2] == "*" and record["columns"]["b"][2] == ""


#: Two small data sets of both kinds, each linear and Gaussian (exact kernels), 2 splits.
PARALLEL = replace(
    TINY,
    multiclass=("iris",),
    ordinal=("machinecpu",),
    ordinal_rbf=("machinecpu",),
    rows={"iris": 60, "machinecpu": 60},
)


def _tables(report):
    """The report without its first line (date, machine, load) and its last lines (the fit
    times)."""
    lines = report.splitlines()[1:]
    return "\n".join(
        lines[: next(i for i, line in enumerate(lines) if line.startswith("fit time"))]
    )


def _without_seconds(records):
    """The records without the fit times, which differ from run to run."""
    return [{key: value for key, value in r.items() if key != "seconds"} for r in records]


@pytest.mark.slow
def test_parallel_reproduce_through_loky_equals_the_sequential_one():
    """The same records and tables whatever ``n_jobs``: a tiny reproduce on joblib's loky
    backend (two worker processes) against one process."""
    from joblib import parallel_config

    printed = []
    sequential = protocol.run(settings=PARALLEL, n_jobs=1, print_fn=printed.append)
    with parallel_config(backend="loky", n_jobs=2):
        parallel = protocol.run(settings=PARALLEL, n_jobs=2, print_fn=printed.append)
    assert _without_seconds(parallel) == _without_seconds(sequential)
    assert len(sequential) == 6  # Tables 2 and 6 on iris, linear and Gaussian; Tables 4 and 5
    assert _tables(printed[1]) == _tables(printed[0])


def test_n_jobs_is_validated(capsys):
    for bad in (0, -2, 1.5, True, "2", None):
        with pytest.raises(ValueError, match="n_jobs must be a positive integer or -1"):
            protocol.check_jobs(bad)
    assert protocol.check_jobs(np.int64(3)) == 3 and protocol.check_jobs(-1) == -1
    with pytest.raises(ValueError, match="n_jobs must be"):
        protocol.run(settings=PARALLEL, n_jobs=0)
    with pytest.raises(ValueError, match="gaussian must be one of"):
        protocol.run(settings=replace(PARALLEL, gaussian="nystroem"))
    assert main(["reproduce", "fathony2018a", "--quick", "--n-jobs", "0"]) == 2
    assert "--n-jobs: must be a positive integer; got 0" in capsys.readouterr().err


def test_parallel_dispatches_longest_first_and_keeps_the_order():
    """``_parallel`` starts the units in decreasing estimated cost (one job: strictly in that
    order) and returns results and seconds in the units' order."""
    started = []

    def work(name):
        started.append(name)
        return name.upper()

    units = [(work, (name,)) for name in "abcd"]
    results, seconds = protocol._parallel(units, 1, costs=[1.0, 5.0, 0.5, 3.0])
    assert started == ["b", "d", "a", "c"]
    assert results == ["A", "B", "C", "D"]
    assert len(seconds) == 4 and all(s >= 0.0 for s in seconds)


def test_tuner_cost_estimates_from_measured_times():
    """A fit's estimated cost is its measured mean time, else that of the same model's nearest
    measured values (log scale), else a size estimate that grows with the rows."""
    X, y = protocol._load("iris")
    plans = protocol._multiclass_plans()[:2]
    tuning = protocol.QUICK.linear
    tuner = protocol._Tuner(plans, X, y, np.arange(120), tuning, 3, 0, False, False)
    small = protocol._Tuner(plans, X, y, np.arange(60), tuning, 3, 0, False, False)
    assert tuner.cost("AL01", (1e-3, None)) > small.cost("AL01", (1e-3, None)) > 0
    assert tuner.cost("AL01", (1e-3, 1.0)) > tuner.cost("AL01", (1e-3, None))  # Gaussian
    tuner.seconds[("AL01", (1e-3, None))] = 2.0
    tuner.seconds[("AL01", (1e-1, None))] = 7.0
    assert tuner.cost("AL01", (1e-3, None)) == 2.0
    assert tuner.cost("AL01", (3e-4, None)) == 2.0  # nearest on the log scale
    assert tuner.cost("AL01", (3e-2, None)) == 7.0
    # twice the rows: twice the linear estimate (rows x features), four times the Gaussian
    assert tuner.cost("WW", (1e-3, None)) == pytest.approx(2 * small.cost("WW", (1e-3, None)))
    assert tuner.cost("WW", (1e-3, 1.0)) == pytest.approx(4 * small.cost("WW", (1e-3, 1.0)))


def test_n_jobs_reaches_every_parallel_batch(monkeypatch, tmp_path, capsys):
    """``--n-jobs`` goes to every joblib batch (each tuning stage, then the splits) and into the
    recorded settings; the threading backend keeps the test in one process."""
    from joblib import parallel_config

    settings = replace(PARALLEL, multiclass=(), ordinal_rbf=())  # machinecpu, linear
    monkeypatch.setattr(protocol, "QUICK", settings)
    calls = []
    original = protocol._parallel

    def spy(units, n_jobs, costs, bar=None):
        units = list(units)
        calls.append((n_jobs, len(units)))
        return original(units, n_jobs, costs, bar)

    monkeypatch.setattr(protocol, "_parallel", spy)
    out = tmp_path / "protocol.json"
    with parallel_config(backend="threading"):
        assert (
            main(["reproduce", "fathony2018a", "--quick", "--n-jobs", "2", "--out", str(out)]) == 0
        )
    # stage 1 (9 models x 1 value x 2 folds), stage 2 (x 3: 9 x 2), then 2 splits x 9 models
    assert calls == [(2, 18), (2, 18), (2, 18)]
    written = json.loads(out.read_text())
    assert written["settings"]["jobs"] == 2
    # every model's fit seconds (tuning and splits) are recorded and summed in the report
    for record in written["records"]:
        assert set(record["seconds"]) == set(record["columns"])
        assert all(seconds > 0 for seconds in record["seconds"].values())
    printed = capsys.readouterr()
    assert "machinecpu (linear): split 2/2" in printed.err
    assert "worker minutes; the largest (data set, kernel, model):" in printed.out


def test_exact_gaussian_models_use_the_kernel():
    """Exact Gaussian tables fit every model on the kernel ``exp(-width/d ||x - x'||^2)`` (no
    kernel principal components) and leave LR out; ``gaussian='kpca'`` keeps the features."""
    X, y = protocol._load("iris")
    fit, other = np.arange(0, 150, 2), np.arange(1, 150, 2)
    plans = protocol._multiclass_plans(exact_kernel=True)
    assert [p[0] for p in plans] == ["AL01", "WW", "CS", "LLW", "ALabs", "OVA"]
    for _, make, _ in plans:
        model = make(1e-2, fit.size, 0.25)
        assert model.get_params()["kernel"] == "rbf" and model.get_params()["gamma"] == 0.25
    # OVA: libsvm's SMO on the Gaussian kernel, the certified interior-point method if linear
    ova = dict((column, make) for column, make, _ in plans)["OVA"]
    assert ova(1e-2, fit.size, 0.25).backend == "libsvm"
    assert ova(1e-2, fit.size).backend == "dual" and ova(1e-2, fit.size).kernel == "linear"
    exact = protocol._trial(plans[1], X, y, fit, other, (1e-2, 1.0), rank=3, exact_kernel=True)
    pca = protocol._trial(plans[1], X, y, fit, other, (1e-2, 1.0), rank=3, exact_kernel=False)
    assert exact["zero-one"][0] < 0.1  # WW on the full kernel: iris is easy
    assert exact != pca  # rank 3 components are another model
    assert tables.columns("zero-one", "rbf") == ("AL01", "WW", "CS", "LLW")
    assert tables.columns("zero-one", "rbf", "kpca") == tables.ZERO_ONE_COLUMNS
    assert protocol.FULL.rows == {} and protocol.FULL.gaussian == "exact"
    assert protocol.SUBSAMPLED.rows == FULL_ROWS


@pytest.mark.parametrize(
    "flags, expected",
    [
        ([], None),
        (["--subsampled"], ("SUBSAMPLED", "kpca")),
        (["--gaussian", "kpca"], ("FULL", "kpca")),
        (["--subsampled", "--gaussian", "exact"], ("SUBSAMPLED", "exact")),
    ],
)
def test_the_default_run_is_the_full_one_and_subsampled_asks_for_the_earlier_one(
    monkeypatch, flags, expected
):
    """``reproduce fathony2018a`` runs :data:`FULL` (``run``'s default) unless ``--subsampled`` asks
    for the earlier runs' settings."""
    seen = {}
    monkeypatch.setattr(fathony2018a, "run", lambda **options: seen.update(options))
    assert main(["reproduce", "fathony2018a", *flags]) == 0
    settings = seen.get("settings")
    if expected is None:
        assert settings is None
        return
    name, gaussian = expected
    base = getattr(protocol, name)
    assert settings.rows == base.rows and settings.gaussian == gaussian


def test_run_defaults_to_every_row_and_exact_kernels(monkeypatch):
    """``run()`` without settings draws its jobs from :data:`FULL` (stopped before any fit)."""
    seen = []

    class Drawn(Exception):
        pass

    def job(**args):
        seen.append(args["settings"])
        raise Drawn

    monkeypatch.setattr(protocol, "_job", job)
    with pytest.raises(Drawn):
        protocol.run()
    assert seen == [protocol.FULL]


def test_models_flag_selects_the_columns(monkeypatch):
    seen = {}
    monkeypatch.setattr(fathony2018a, "run", lambda **options: seen.update(options))
    assert main(["reproduce", "fathony2018a", "--models", "AL01,ALabs,OVA,AL-th"]) == 0
    assert seen["settings"].models == ("AL01", "ALabs", "OVA", "AL-th")
    assert seen["settings"].rows == {}


def test_kernels_setting_runs_the_linear_halves_alone():
    """``Settings.kernels`` restricts Tables 2 and 6 to the kernels given (the full-data linear
    tables are affordable while the exact Gaussian ones are not)."""
    settings = replace(protocol.QUICK, kernels=("linear",), ordinal=(), ordinal_rbf=(), splits=2)
    records = protocol.run(settings=settings, print_fn=lambda report: None)
    assert {(r["table"], r["kernel"]) for r in records} == {
        ("zero-one", "linear"),
        ("abstain", "linear"),
    }


def test_models_setting_runs_the_columns_given():
    """``Settings.models`` keeps the models named (the full-data Gaussian columns of the
    adversarial models are affordable while the exact Gaussian baselines are not)."""
    settings = replace(
        protocol.QUICK, kernels=("rbf",), ordinal=(), ordinal_rbf=(), splits=2, models=("AL01",)
    )
    records = protocol.run(settings=settings, print_fn=lambda report: None)
    assert [(r["table"], r["kernel"]) for r in records] == [("zero-one", "rbf")]
    assert set(records[0]["columns"]) == {"AL01"}
    with pytest.raises(ValueError, match="Settings.models must name columns"):
        protocol.run(settings=replace(settings, models=("SVM",)), print_fn=lambda r: None)


@pytest.mark.parametrize("kernels", [(), ("poly",), ("linear", "gaussian")])
def test_unknown_kernels_are_refused_with_the_expected_names(kernels):
    with pytest.raises(ValueError, match="Settings.kernels must list 'linear' and/or 'rbf'"):
        protocol.run(settings=replace(protocol.QUICK, kernels=kernels), print_fn=lambda r: None)


def test_parts_split_the_tables_between_three_runs():
    """``--part multiclass`` runs Tables 2 and 6 (no ordinal set), ``--part ordinal`` Tables 4
    and 5 (no multiclass set), ``--part added`` every table on the sets vendored later
    (``ADDED``); together they are the full run's data sets."""
    from advgame.reproductions.fathony2018a.settings import ADDED, FULL, PARTS, part_settings

    multiclass, ordinal, added = (part_settings(FULL, (part,)) for part in PARTS)
    assert multiclass.multiclass + added.multiclass == FULL.multiclass
    assert ordinal.ordinal + added.ordinal == FULL.ordinal
    assert ordinal.ordinal_rbf + added.ordinal_rbf == FULL.ordinal_rbf
    assert set(added.multiclass + added.ordinal) == set(ADDED) == {"glass", "boston"}
    assert not multiclass.ordinal and not multiclass.ordinal_rbf and not ordinal.multiclass
    assert not set(ADDED) & set(multiclass.multiclass + ordinal.ordinal + ordinal.ordinal_rbf)
    assert part_settings(FULL, None) == FULL == part_settings(FULL, PARTS)
    for bad in ((), ("tables",)):
        with pytest.raises(ValueError, match="parts must name some of"):
            part_settings(FULL, bad)
    records = protocol.run(settings=PARALLEL, parts=("ordinal",), print_fn=print, progress=False)
    assert records and {r["table"] for r in records} == {"ordinal"}


def test_full_run_is_its_parts():
    """Each part draws its splits and seeds from its own stream, so the full run's tables are
    those of ``--part multiclass``, ``--part ordinal`` and ``--part added`` run one by one, and
    glass (vendored later) leaves the other sets' records as they were without it."""
    settings = replace(TINY, multiclass=("iris", "glass"), ordinal=("machinecpu",), ordinal_rbf=())
    quiet = {"print_fn": lambda report: None, "progress": False}
    full = protocol.run(settings=settings, **quiet)
    parts = [r for part in ("multiclass", "ordinal", "added") for r in protocol.run(
        settings=settings, parts=(part,), **quiet)]  # fmt: skip
    assert {r["table"] for r in full} == {"zero-one", "abstain", "ordinal"}

    def tables(records):  # everything but the fit times
        return sorted(
            ({k: v for k, v in r.items() if k != "seconds"} for r in records),
            key=lambda r: (r["table"], r["kernel"], r["dataset"]),
        )

    assert tables(full) == tables(parts)
    without_glass = protocol.run(settings=replace(settings, multiclass=("iris",)), **quiet)
    assert tables(without_glass) == tables([r for r in full if r["dataset"] != "glass"])
