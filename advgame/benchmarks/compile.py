r"""``advgame bench compile``: the cost of compiling a declared game, and of solving it.

One declaration, ``ag.PredictionGame('zero_one', uncertainty=ag.NormBall(0.1, norm=1))`` with
multiclass features (an LP: the adversary's moments in an l1 ball, the predictor's parameters
penalised by the linf norm), on seeded Gaussian data with ``k = 10`` classes and ``d = 50``
features (labels: the argmax of a random linear score plus Gumbel noise).  For each ``n``:

``build s``
    the wall time of ``pg.compile(X, y)`` plus ``program.program.matrix()`` (the assembled CSR
    constraint matrix ``A``), the median of :attr:`Settings.build_repeats` builds; ``compile s``
    and ``matrix s`` split it;
``nnz``, ``ns/nnz``
    the nonzeros of ``A`` and the build time per nonzero (the target: flat in ``n``);
``peak MB``, ``A MB``, ``peak/A``
    the peak of Python's traced memory during one build (``tracemalloc``, a separate untimed
    build; numpy and scipy report their buffers to it) next to the bytes of ``A`` itself
    (``data + indices + indptr``) (the target: within 3x).

Then, at ``n =`` :attr:`Settings.solve_rows`, the LP solved by HiGHS as the predictor's program
(``program.solve('highs')``) and as the adversary's (``program.dual().solve('highs')``), whose
optima must agree; and the per-sample games, where the closed form takes over: ``Game(L).value``
of the zero-one loss on :attr:`Settings.value_rows` rows of N(0, 1) potentials by its closed form
(Fathony et al. 2018a, Theorem 5) and by one LP per row (``method='lp'``), whose values must agree.
Every timing runs with one BLAS thread (``threadpoolctl``); HiGHS runs its own default threads.
"""

import gc
import time
import tracemalloc
from dataclasses import asdict, dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from ..declaration import PredictionGame
from ..exceptions import SolverError
from ..game import Game
from ..losses import zero_one
from ..uncertainty import NormBall
from .protocol import Progress, median_seconds
from .report import publish, report_header, run_meta, table

__all__ = ["run", "Settings", "FULL", "QUICK", "FLAT_TARGET", "MEMORY_TARGET", "CHECK_ATOL"]

SEED = 0
#: Classes, features and the l1 radius of the uncertainty set.
K, D, RADIUS = 10, 50, 0.1
#: The issue's targets: ns/nnz at the largest n within this factor of the smallest n's ...
FLAT_TARGET = 1.5
#: ... and the build's peak traced memory within this factor of the constraint matrix's bytes.
MEMORY_TARGET = 3.0
#: Largest allowed |primal - dual| and |closed form - LP| (a wrong answer is never timed).
CHECK_ATOL = 1e-6


@dataclass(frozen=True)
class Settings:
    """The sizes ``n`` built, builds per size (the median time is reported), the ``n`` of the
    HiGHS solves and their time limit (seconds), and the rows of per-sample potentials."""

    sizes: tuple
    build_repeats: int
    solve_rows: int
    solve_time_limit: float
    value_rows: int


FULL = Settings(
    sizes=(1_000, 3_000, 10_000, 30_000, 100_000),
    build_repeats=3,
    solve_rows=1_000,
    solve_time_limit=600.0,
    value_rows=10_000,
)
#: ``--quick`` (for tests; seconds): two sizes, one build each, small solves.
QUICK = Settings(
    sizes=(1_000, 10_000),
    build_repeats=1,
    solve_rows=100,
    solve_time_limit=120.0,
    value_rows=1_000,
)


def declaration():
    """The benchmarked declaration: zero-one loss, multiclass features, an l1 ball (an LP)."""
    return PredictionGame("zero_one", uncertainty=NormBall(RADIUS, norm=1))


def data(n, seed=SEED):
    """``(X, y)``: ``n`` rows of N(0, 1) features, labels the argmax of a random linear score
    plus Gumbel noise (every class present for ``n >= 100``)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D))
    W = rng.normal(size=(D, K))
    return X, np.argmax(X @ W + 2.0 * rng.gumbel(size=(n, K)), axis=1)


def _matrix_bytes(A):
    return A.data.nbytes + A.indices.nbytes + A.indptr.nbytes


def _build(pg, X, y, times=None):
    """``(program, A)``; ``times`` (a list) receives the compile and matrix seconds."""
    start = time.perf_counter()
    program = pg.compile(X, y)
    middle = time.perf_counter()
    A = program.program.matrix()
    if times is not None:
        times.append((middle - start, time.perf_counter() - middle))
    return program, A


def _peak_bytes(pg, X, y):
    """Peak traced memory of one build (numpy and scipy buffers included)."""
    gc.collect()
    tracemalloc.start()
    try:
        _build(pg, X, y)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def bench_build(n, repeats):
    """One record: sizes of the program and of ``A``, build time split, per-nnz time, memory."""
    pg = declaration()
    X, y = data(n)
    times = []
    program, A = _build(pg, X, y, times)
    del program
    times.clear()
    build = median_seconds(lambda: _build(pg, X, y, times), repeats)
    compile_s = float(np.median([t[0] for t in times]))
    matrix_s = float(np.median([t[1] for t in times]))
    peak = _peak_bytes(pg, X, y)
    matrix_bytes = _matrix_bytes(A)
    return {
        "measure": "build",
        "n": n,
        "d": D,
        "k": K,
        "rows": A.shape[0],
        "columns": A.shape[1],
        "nnz": int(A.nnz),
        "repeats": repeats,
        "build_s": build,
        "compile_s": compile_s,
        "matrix_s": matrix_s,
        "ns_per_nnz": 1e9 * build / A.nnz,
        "peak_mb": peak / 1e6,
        "matrix_mb": matrix_bytes / 1e6,
        "peak_over_matrix": peak / matrix_bytes,
    }


def _timed(function):
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


def bench_solve(n, time_limit):
    """HiGHS on the predictor's LP and on the adversary's LP at ``n`` rows; their optima must
    agree within :data:`CHECK_ATOL`.  A solve that reaches ``time_limit`` is recorded as such
    (its time None) instead of failing the run."""
    X, y = data(n)
    program = declaration().compile(X, y)
    record = {
        "measure": "solve",
        "n": n,
        "kind": program.kind,
        "variables": program.program.n_variables,
        "constraints": program.program.n_rows,
        "time_limit": time_limit,
    }
    dual, record["dual_build_s"] = _timed(program.dual)
    results = {}
    for side, solve in (
        ("primal", lambda: program.solve("highs", time_limit=time_limit).objective),
        ("dual", lambda: dual.solve("highs", time_limit=time_limit).value),
    ):
        try:
            results[side], record[f"{side}_s"] = _timed(solve)
            record[f"{side}_status"] = "optimal"
        except SolverError as exc:
            if "imit" not in str(exc):
                raise
            results[side], record[f"{side}_s"] = None, None
            record[f"{side}_status"] = f"time limit ({time_limit:g} s) reached"
    record["primal_objective"] = results["primal"]
    record["dual_value"] = results["dual"]
    record["gap"] = None
    if None not in results.values():
        record["gap"] = abs(results["primal"] - results["dual"])
        if record["gap"] > CHECK_ATOL:
            raise AssertionError(
                f"n={n}: the primal optimum {results['primal']:.10g} and the dual's "
                f"{results['dual']:.10g} differ by {record['gap']:.1e} (> {CHECK_ATOL:g}); "
                "refusing to time a wrong answer."
            )
    return record


def bench_values(rows):
    """The zero-one game's value on ``rows`` rows of potentials: closed form vs one LP a row."""
    F = np.random.default_rng(SEED).normal(size=(rows, K))
    game = Game(zero_one(K))
    game.value(F[:2], method="lp")  # builds the persistent model
    closed = game.value(F, method="closed_form")
    closed_s = median_seconds(lambda: game.value(F, method="closed_form"), 5)
    lp, lp_s = _timed(lambda: game.value(F, method="lp"))
    deviation = float(np.max(np.abs(closed - lp)))
    if deviation > CHECK_ATOL:
        raise AssertionError(
            f"the closed form deviates from the LP by {deviation:.1e} (> {CHECK_ATOL:g}); "
            "refusing to time a wrong answer."
        )
    return {
        "measure": "value",
        "rows": rows,
        "k": K,
        "closed_form_s": closed_s,
        "lp_s": lp_s,
        "closed_form_us_per_row": 1e6 * closed_s / rows,
        "lp_us_per_row": 1e6 * lp_s / rows,
        "lp_over_closed_form": lp_s / closed_s,
        "max_deviation": deviation,
    }


# ------------------------------------------------------------------------------- reporting
COLUMNS = (
    ("n", lambda r: f"{r['n']:,}"),
    ("rows", lambda r: f"{r['rows']:,}"),
    ("columns", lambda r: f"{r['columns']:,}"),
    ("nnz", lambda r: f"{r['nnz']:,}"),
    ("compile s", lambda r: f"{r['compile_s']:.3f}"),
    ("matrix s", lambda r: f"{r['matrix_s']:.3f}"),
    ("build s", lambda r: f"{r['build_s']:.3f}"),
    ("ns/nnz", lambda r: f"{r['ns_per_nnz']:.1f}"),
    ("peak MB", lambda r: f"{r['peak_mb']:,.1f}"),
    ("A MB", lambda r: f"{r['matrix_mb']:,.1f}"),
    ("peak/A", lambda r: f"{r['peak_over_matrix']:.2f}"),
)


def summary(builds):
    """The targets: per-nnz time at the largest n over the smallest, and the worst peak/A."""
    flat = builds[-1]["ns_per_nnz"] / builds[0]["ns_per_nnz"]
    memory = max(r["peak_over_matrix"] for r in builds)
    return {
        "measure": "summary",
        "n_smallest": builds[0]["n"],
        "n_largest": builds[-1]["n"],
        "ns_per_nnz_ratio": flat,
        "flat_target": FLAT_TARGET,
        "flat_met": bool(flat <= FLAT_TARGET),
        "max_peak_over_matrix": memory,
        "memory_target": MEMORY_TARGET,
        "memory_met": bool(memory <= MEMORY_TARGET),
    }


def _seconds(x):
    return "-" if x is None else f"{x:.2f} s"


def format_report(records, meta):
    """The header, the build table and the targets, then the solve and value comparisons."""
    builds = [r for r in records if r["measure"] == "build"]
    (total,) = [r for r in records if r["measure"] == "summary"]
    (solve,) = [r for r in records if r["measure"] == "solve"]
    (values,) = [r for r in records if r["measure"] == "value"]
    met = {True: "met", False: "NOT met"}
    lines = [
        report_header("compile", meta, ("numpy", "scipy", "highspy")),
        "",
        f"build: PredictionGame('zero_one', uncertainty=NormBall({RADIUS:g}, norm=1)).compile(X, y)"
        f" + program.matrix(); k = {K}, d = {D}, seeded Gaussian X (one BLAS thread)",
        "",
        *table(builds, COLUMNS, left=0),
        "",
        f"ns/nnz at n = {total['n_largest']:,} / at n = {total['n_smallest']:,}: "
        f"{total['ns_per_nnz_ratio']:.2f}x (target <= {FLAT_TARGET:g}x: "
        f"{met[total['flat_met']]}); largest peak/A {total['max_peak_over_matrix']:.2f}x "
        f"(target <= {MEMORY_TARGET:g}x: {met[total['memory_met']]}).",
        f"build s: median of {builds[0]['repeats']} build(s) = compile s + matrix s; peak MB: "
        "tracemalloc peak of one more build; A MB: data + indices + indptr of the CSR matrix.",
        "",
        f"solve at n = {solve['n']:,} ({solve['kind']}, {solve['variables']:,} variables, "
        f"{solve['constraints']:,} rows), HiGHS (dual simplex):",
        f"  predictor's program  program.solve('highs')         {_seconds(solve['primal_s'])} "
        f"({solve['primal_status']})",
        f"  adversary's program  program.dual().solve('highs')  {_seconds(solve['dual_s'])} "
        f"({solve['dual_status']}); building the dual {solve['dual_build_s']:.3f} s",
        "  |primal - dual| = "
        + ("-" if solve["gap"] is None else f"{solve['gap']:.1e}")
        + (
            ""
            if solve["gap"] is None
            else f" (optimum {solve['primal_objective']:.6f}; checked <= {CHECK_ATOL:g})"
        ),
        "",
        f"where the closed form takes over: Game(zero_one({K})).value(F) on "
        f"{values['rows']:,} rows of N(0, 1) potentials",
        f"  closed form (Fathony et al. (2018a) Theorem 5)  {1e3 * values['closed_form_s']:10.2f} ms  "
        f"({values['closed_form_us_per_row']:.3f} us/row)",
        f"  method='lp' (the bulk LP oracle)  {1e3 * values['lp_s']:10.2f} ms  "
        f"({values['lp_us_per_row']:.1f} us/row): {values['lp_over_closed_form']:,.0f}x the "
        f"closed form; max |closed form - LP| = {values['max_deviation']:.1e}",
    ]
    return "\n".join(lines)


def run(quick=False, out=None, print_fn=print, progress=True):
    """Run the benchmark (the protocol of :mod:`advgame.benchmarks`).

    Returns
    -------
    list of dict
        One ``'build'`` record per ``n``, then a ``'summary'`` record (the two targets), a
        ``'solve'`` record (HiGHS on the primal and the dual) and a ``'value'`` record (closed
        form vs LP per sample); each has a ``measure`` field naming its kind.
    """
    settings = QUICK if quick else FULL
    meta = run_meta(settings=asdict(settings), seed=SEED, blas_threads=1)
    progress = Progress("compile", progress)
    records = []
    with threadpool_limits(limits=1, user_api="blas"):
        for i, n in enumerate(progress.bar(settings.sizes, "size"), 1):
            progress(f"{i}/{len(settings.sizes)} build n={n:,}")
            records.append(bench_build(n, settings.build_repeats))
        records.append(summary(records))
        progress(f"solve n={settings.solve_rows:,} (HiGHS, primal and dual)")
        records.append(bench_solve(settings.solve_rows, settings.solve_time_limit))
        progress(f"closed form vs LP on {settings.value_rows:,} rows")
        records.append(bench_values(settings.value_rows))
    publish(format_report(records, meta), meta, records, out, print_fn)
    return records
