r"""Benchmark of the per-sample game oracle (``advgame bench oracle``).

Learning needs, for every row of potentials ``f``, the game value and an optimal adversary ``q*``
(a subgradient of the value, Fathony et al. 2018a, Theorem 19).  For the zero-one, ordinal, squared and
abstain (``alpha = 0.3``) losses and ``k`` in 3, 10, 30, 100 this times four ways to get both:

``closed_form``
    the vectorised closed forms (Fathony et al. 2018a, Theorems 5-7, 12);
``vertices``
    the vertex table: one matrix product (its one-off build is timed separately; skipped when
    the table is refused or has more than :data:`MAX_VERTICES` rows);
``lp``
    the exact LP oracle, ``method='lp'`` (:class:`advgame.oracle.LPOracle`: a simplex vectorised
    over rows, certified by duality);
``cvxpy``
    the naive way: a fresh cvxpy ``Problem`` per row (:meth:`advgame.Game.lp`), default solver.

Every method sees the same random potentials (:func:`advgame.verify.random_potentials`, fixed
seed); a method timed on fewer rows takes evenly spaced rows, so every kind of potential appears.
Before timing, each method's value and ``q*`` are checked against the closed form on the rows it is
timed on: a benchmark must not report the speed of a wrong answer.  cvxpy's
``optimal_inaccurate`` answers are counted and reported (they must still meet
:data:`CVXPY_RTOL`), not left to leak a warning.

A second table times the LP oracle in bulk on a general ``10 x 10`` loss matrix (no closed form;
:func:`bulk_matrix`) for ``n`` = 100, 1,000 and 10,000 rows (:data:`BULK_SIZES`): the bulk oracle
(:meth:`~advgame.oracle.LPOracle.solve`), the per-row HiGHS loop it replaced
(:meth:`~advgame.oracle.LPOracle.solve_each`, warm-started, on at most ``loop_rows`` evenly spaced
rows) and the vertex table counting its build (``(build + query) / n``), each checked against
the vertex table first.
"""

import time
import warnings
from dataclasses import asdict, dataclass

import numpy as np

from ..exceptions import SizeLimitError
from ..game import Game
from ..losses import abstain, ordinal, squared, zero_one
from ..oracle import LPOracle
from ..verify import VERIFY_RTOL, random_potentials
from ..vertices import VertexTable, enumerate_extreme_points
from .protocol import Progress, median_seconds
from .report import check_out, dev, report_header, run_meta, table, times, us, write_results

__all__ = [
    "run",
    "Settings",
    "FULL",
    "QUICK",
    "LOSSES",
    "SIZES",
    "MAX_VERTICES",
    "BULK_K",
    "BULK_SIZES",
    "bulk_matrix",
]

LOSSES = {
    "zero-one": zero_one,
    "ordinal": ordinal,
    "squared": squared,
    "abstain(alpha=0.3)": lambda k: abstain(k, alpha=0.3),
}
SIZES = (3, 10, 30, 100)
#: Largest vertex table the benchmark times.
MAX_VERTICES = 200_000
#: Seed of the random potentials shared by all methods.
SEED = 0
#: Agreement required of cvxpy: its default solver is an interior-point method (gap ~1e-8).
CVXPY_RTOL = 1e-6
EXACT_METHODS = ("closed_form", "vertices", "lp")
#: Labels (and actions) of the general loss matrix of the bulk-oracle table.
BULK_K = 10
#: Rows of the bulk-oracle table (those up to ``Settings.bulk_max_rows``).
BULK_SIZES = (100, 1_000, 10_000)


@dataclass(frozen=True)
class Settings:
    """Rows timed per method and repeats (the median is reported; cvxpy always runs once).

    ``bulk_max_rows``: the largest of :data:`BULK_SIZES` in the bulk-oracle table;
    ``loop_rows``: rows the per-row HiGHS loop is timed on there (its cost per row is constant).
    """

    rows: int
    lp_rows: int
    cvxpy_rows: int
    repeats: int
    bulk_max_rows: int = 10_000
    loop_rows: int = 1_000


FULL = Settings(rows=10_000, lp_rows=2_000, cvxpy_rows=30, repeats=3)
QUICK = Settings(rows=1_000, lp_rows=200, cvxpy_rows=5, repeats=1, loop_rows=200)


def run(quick=False, out=None, print_fn=print, progress=True):
    """Run the benchmark (the protocol of :mod:`advgame.benchmarks`; ``out`` ending in ``.md``
    gets the markdown tables).

    Returns
    -------
    list of dict
        Per (loss, k): microseconds per row of each method (None when not applicable), the rows
        timed, the vertex count and build time, the ratios and the largest disagreement.
    """
    check_out(out)
    settings = QUICK if quick else FULL
    meta = run_meta(cvxpy_solver=_cvxpy_default_solver(), settings=asdict(settings), seed=SEED)
    games = [(name, k) for name in LOSSES for k in SIZES]
    records = []
    progress = Progress("oracle", progress)
    for i, (name, k) in enumerate(progress.bar(games, "game"), 1):
        progress(f"{i}/{len(games)} {name} k={k}")
        records.append(bench_game(name, k, settings))
    progress(f"bulk LP oracle, general {BULK_K}x{BULK_K}")
    meta["bulk"] = bench_bulk(settings)
    print_fn(format_report(records, meta))
    if out is not None:
        write_results(out, meta, records, format_report(records, meta, markdown=True), False)
    return records


# ------------------------------------------------------------------------------- measuring
def _solver(game, method):
    """Value and ``q*`` of all rows in one call (``Game.value`` + ``Game.adversary`` would each
    solve the game, doubling the cost)."""
    return lambda F: game.value_and_adversary(F, method)


def _cvxpy_solver(game):
    """Value and ``q*`` row by row, building and solving a fresh cvxpy Problem for each.

    A row the solver fails on (cvxpy ``SolverError``, e.g. on potentials of magnitude ~1e6) is
    left as NaN: it is timed like any other row and counted as a failure.  A row solved with
    status ``optimal_inaccurate`` is kept (and checked like the others) and counted in
    ``solve.inaccurate`` (rows of the last call) instead of cvxpy's warning being printed.
    """
    import cvxpy

    def solve(F):
        value = np.full(F.shape[0], np.nan)
        Q = np.full(F.shape, np.nan)
        solve.inaccurate = 0
        for i, f in enumerate(F):
            problem = game.lp(f)
            try:
                with warnings.catch_warnings():
                    warnings.filterwarnings("ignore", message="Solution may be inaccurate")
                    problem.solve()
            except cvxpy.error.SolverError:
                continue
            solve.inaccurate += problem.status == cvxpy.OPTIMAL_INACCURATE
            if problem.value is not None:
                value[i] = problem.value
                Q[i] = problem.var_dict["q"].value
        return value, Q

    solve.inaccurate = 0
    return solve


def _cvxpy_default_solver():
    """Name of the solver cvxpy picks for the game LP (this also warms up cvxpy's imports)."""
    problem = Game(zero_one(2)).lp([0.0, 0.0])
    problem.solve()
    return problem.solver_stats.solver_name


def _build_table(game):
    """Build the vertex table (timed): the record fields describing it."""
    start = time.perf_counter()
    try:
        table = game.vertex_table()
    except SizeLimitError as exc:
        return {"vertices_count": None, "vertices_build_ms": None, "vertices_note": str(exc)}
    build_ms = 1e3 * (time.perf_counter() - start)
    note = None
    if len(table) > MAX_VERTICES:
        note = f"{len(table):,} vertices, over the benchmark's limit of {MAX_VERTICES:,}"
    return {"vertices_count": len(table), "vertices_build_ms": build_ms, "vertices_note": note}


def _spread(n, m):
    """``m`` evenly spaced indices into ``n`` rows."""
    return np.linspace(0, n - 1, min(m, n)).round().astype(np.int64)


def _deviation(L, F, value, Q, reference):
    """Largest relative gap of ``value`` and of ``H_L(q*) + f.q*`` from the reference value."""
    scale = np.maximum(np.maximum(np.abs(reference), L.max()), 1.0)
    attained = (Q @ L.T).min(axis=1) + np.sum(F * Q, axis=1)
    value_gap = np.max(np.abs(value - reference) / scale)
    adversary_gap = np.max(np.abs(attained - reference) / scale)
    return float(np.maximum(value_gap, adversary_gap))


def _check(game, method, solve, F, reference):
    """Solve once (untimed) and require agreement with the closed form.

    Returns ``(deviation, failures)``.  Only cvxpy may fail on a row (its failures are counted and
    the other rows checked); the exact methods must solve every row.
    """
    value, Q = solve(F)
    failed = ~np.isfinite(value)
    solved = ~failed
    deviation = None
    if solved.any():
        deviation = _deviation(
            game.loss.matrix, F[solved], value[solved], Q[solved], reference[solved]
        )
    where = f"{game.structure} k={game.n_labels}: method {method!r}"
    if failed.any() and method != "cvxpy":
        raise AssertionError(f"{where} returned no value on {failed.sum()} rows.")
    tolerance = CVXPY_RTOL if method == "cvxpy" else VERIFY_RTOL
    if deviation is not None and deviation > tolerance:
        raise AssertionError(
            f"{where} deviates from the closed form by {deviation:.1e} (> {tolerance:g}); "
            "refusing to time a wrong answer."
        )
    return deviation, int(failed.sum())


def _per_rowus(solve, F, repeats):
    """Median over ``repeats`` of the wall time of ``solve(F)``, in microseconds per row."""
    return 1e6 * median_seconds(lambda: solve(F), repeats) / F.shape[0]


def _ratio(numerator, denominator):
    return None if numerator is None or denominator is None else numerator / denominator


def bench_game(name, k, settings):
    """Check, then time, every applicable method on one game; returns its record."""
    game = Game(LOSSES[name](k))
    F = random_potentials(k, n=settings.rows, seed=SEED)
    reference = game.value_and_adversary(F, "closed_form")[0]
    record = {"loss": name, "k": k, **_build_table(game)}
    methods = {
        "closed_form": (_solver(game, "closed_form"), settings.rows, settings.repeats),
        "vertices": (_solver(game, "vertices"), settings.rows, settings.repeats),
        "lp": (_solver(game, "lp"), settings.lp_rows, settings.repeats),
        "cvxpy": (_cvxpy_solver(game), settings.cvxpy_rows, 1),
    }
    if record["vertices_note"] is not None:
        del methods["vertices"]
    for method in ("closed_form", "vertices", "lp", "cvxpy"):
        record.update({f"{method}_rows": None, f"{method}_dev": None, f"{method}_us": None})
    for method, (solve, n_rows, repeats) in methods.items():
        rows = _spread(settings.rows, n_rows)
        record[f"{method}_rows"] = len(rows)
        deviation, failures = _check(game, method, solve, F[rows], reference[rows])
        record[f"{method}_dev"] = deviation
        if method == "cvxpy":
            record["cvxpy_failures"] = failures
            record["cvxpy_inaccurate"] = int(solve.inaccurate)
        record[f"{method}_us"] = _per_rowus(solve, F[rows], repeats)
    record["max_dev"] = max(record[f"{m}_dev"] or 0.0 for m in EXACT_METHODS)
    record["cvxpy_over_closed_form"] = _ratio(record["cvxpy_us"], record["closed_form_us"])
    record["lp_over_closed_form"] = _ratio(record["lp_us"], record["closed_form_us"])
    record["lp_over_vertices"] = _ratio(record["lp_us"], record["vertices_us"])
    return record


def bulk_matrix(k=BULK_K, seed=SEED):
    """The general loss matrix of the bulk-oracle table: uniform on ``[0, 1)``, zero diagonal."""
    L = np.random.default_rng(seed).uniform(0.0, 1.0, size=(k, k))
    np.fill_diagonal(L, 0.0)
    return L


def bench_bulk(settings):
    """The bulk-oracle table: one record per ``n`` in :data:`BULK_SIZES` (up to
    ``settings.bulk_max_rows``), every method checked against the vertex table before timing."""
    L = bulk_matrix()
    build_s = median_seconds(lambda: VertexTable(L, *enumerate_extreme_points(L)), settings.repeats)
    table = VertexTable(L, *enumerate_extreme_points(L))
    oracle = LPOracle(L)

    def query(F):
        value, index = table.value(F)
        return value, table.Q[index]

    def first_two(solve):
        return lambda F: solve(F)[:2]

    records = []
    for n in [n for n in BULK_SIZES if n <= settings.bulk_max_rows]:
        F = random_potentials(BULK_K, n=n, seed=SEED)
        reference = table.value(F)[0]
        loop = _spread(n, settings.loop_rows)
        record = {"k": BULK_K, "n": n, "loop_rows": len(loop), "table_build_ms": 1e3 * build_s}
        timed = {
            "bulk": (first_two(oracle.solve), F, reference),
            "loop": (first_two(oracle.solve_each), F[loop], reference[loop]),
        }
        for name, (solve, rows, ref) in timed.items():
            value, Q = solve(rows)
            deviation = _deviation(L, rows, value, Q, ref)
            if not deviation <= VERIFY_RTOL:
                raise AssertionError(
                    f"the {name} LP oracle deviates from the vertex table by {deviation:.1e} on "
                    f"the general {BULK_K}x{BULK_K} matrix; refusing to time a wrong answer."
                )
            record[f"{name}_dev"] = deviation
            record[f"{name}_us"] = _per_rowus(solve, rows, settings.repeats)
        record["query_us"] = _per_rowus(query, F, settings.repeats)
        record["table_us"] = record["query_us"] + 1e6 * build_s / n
        record["loop_over_bulk"] = record["loop_us"] / record["bulk_us"]
        record["table_over_bulk"] = record["table_us"] / record["bulk_us"]
        records.append(record)
    return records


# ------------------------------------------------------------------------------- reporting
COLUMNS = (
    ("loss", lambda r: r["loss"]),
    ("k", lambda r: str(r["k"])),
    ("closed form us", lambda r: us(r["closed_form_us"])),
    ("vertices us", lambda r: us(r["vertices_us"])),
    ("build ms", lambda r: us(r["vertices_build_ms"])),
    ("LP us", lambda r: us(r["lp_us"])),
    ("cvxpy us", lambda r: us(r["cvxpy_us"])),
    ("cvxpy/cf", lambda r: times(r["cvxpy_over_closed_form"])),
    ("LP/cf", lambda r: times(r["lp_over_closed_form"])),
    ("LP/vert", lambda r: times(r["lp_over_vertices"])),
    ("max dev", lambda r: dev(r["max_dev"])),
    ("cvxpy dev", lambda r: dev(r["cvxpy_dev"])),
)


BULK_COLUMNS = (
    ("n rows", lambda r: f"{r['n']:,}"),
    ("bulk us", lambda r: us(r["bulk_us"])),
    ("per-row us", lambda r: us(r["loop_us"])),
    ("table us", lambda r: us(r["table_us"])),
    ("query us", lambda r: us(r["query_us"])),
    ("build ms", lambda r: us(r["table_build_ms"])),
    ("per-row/bulk", lambda r: times(r["loop_over_bulk"])),
    ("table/bulk", lambda r: times(r["table_over_bulk"])),
    ("max dev", lambda r: dev(max(r["bulk_dev"], r["loop_dev"]))),
)


def format_report(records, meta, markdown=False):
    """The header (machine, date), the table and its legend, as text or markdown."""
    s = meta["settings"]
    header = report_header("oracle", meta, ("python", "numpy", "scipy", "highspy", "cvxpy")) + (
        f" (default solver {meta['cvxpy_solver']})"
    )
    legend = [
        f"us: microseconds per row for the value and q* of every row, median of {s['repeats']} "
        f"run(s) (cvxpy: 1); rows: closed form and vertices {s['rows']:,}, LP {s['lp_rows']:,}, "
        f"cvxpy {s['cvxpy_rows']:,} (evenly spaced rows of the same random potentials, "
        f"seed {meta['seed']}).",
        "build ms: one-off construction of the vertex table, not included in 'vertices us'.",
        "LP: the bulk LP oracle (method='lp'). cvxpy: a fresh Problem per row (Game.lp), solved "
        "with cvxpy's default solver.",
        "max dev: largest relative deviation from the closed-form value, of the value and of "
        "H_L(q*) + f.q*, over the timed rows of closed form, vertices and LP (required <= "
        f"{VERIFY_RTOL:g} before timing); cvxpy dev: the same for cvxpy (required <= "
        f"{CVXPY_RTOL:g}).",
    ]
    legend += [
        f"vertices n/a for {r['loss']} k={r['k']}: {r['vertices_note']}"
        for r in records
        if r["vertices_note"] is not None
    ]
    legend += [
        f"cvxpy failed (SolverError) on {r['cvxpy_failures']} of {r['cvxpy_rows']} rows for "
        f"{r['loss']} k={r['k']}: timed, not checked."
        for r in records
        if r["cvxpy_failures"]
    ]
    legend += [
        f"cvxpy answered 'optimal_inaccurate' on {r['cvxpy_inaccurate']} of {r['cvxpy_rows']} "
        f"rows for {r['loss']} k={r['k']}: kept, and within cvxpy dev."
        for r in records
        if r.get("cvxpy_inaccurate")
    ]
    if markdown:
        legend = ["- " + line for line in legend]
    lines = [header, ""] + table(records, COLUMNS, markdown=markdown) + [""] + legend
    bulk = meta.get("bulk")
    if bulk:
        lines += [""] + _bulk_section(bulk, s, markdown)
    return "\n".join(lines)


def _bulk_section(bulk, s, markdown):
    """The bulk-oracle table and its legend."""
    title = (
        f"LP oracle in bulk: general {BULK_K}x{BULK_K} loss matrix (uniform [0, 1), zero "
        "diagonal; no closed form), value and q* of n rows"
    )
    loop_rows = ", ".join(f"{r['loop_rows']:,}" for r in bulk)
    legend = [
        f"us: microseconds per row, median of {s['repeats']} run(s). bulk: LPOracle.solve "
        "(method='lp'), all rows at once. per-row: LPOracle.solve_each, one warm-started HiGHS "
        f"run per row, on {loop_rows} evenly spaced rows. "
        "table: the vertex table counting its build, (build + query) / n; query: the table's "
        "matrix product alone.",
        "per-row/bulk, table/bulk: ratios of us per row in this run. max dev: largest relative "
        "deviation of bulk and per-row from the vertex table (value and H_L(q*) + f.q*; "
        f"required <= {VERIFY_RTOL:g} before timing).",
    ]
    if markdown:
        legend = ["- " + line for line in legend]
    return [title, ""] + table(bulk, BULK_COLUMNS, markdown=markdown) + [""] + legend
