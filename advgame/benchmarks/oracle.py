r"""Benchmark of the per-sample game oracle (``advgame bench oracle``).

Learning needs, for every row of potentials ``f``, the game value and an optimal adversary ``q*``
(a subgradient of the value, seed 000 Theorem 19).  For the zero-one, ordinal, squared and
abstain (``alpha = 0.3``) losses and ``k`` in 3, 10, 30, 100 this times four ways to get both:

``closed_form``
    the vectorised closed forms (seed 000 Theorems 5-7, 12);
``vertices``
    the vertex table: one matrix product (its one-off build is timed separately; skipped when
    the table is refused or has more than :data:`MAX_VERTICES` rows);
``lp``
    one persistent HiGHS model, only the costs changed between rows;
``cvxpy``
    the naive way: a fresh cvxpy ``Problem`` per row (:meth:`advgame.Game.lp`), default solver.

Every method sees the same random potentials (:func:`advgame.verify.random_potentials`, fixed
seed); a method timed on fewer rows takes evenly spaced rows, so every kind of potential appears.
Before timing, each method's value and ``q*`` are checked against the closed form on the rows it is
timed on: a benchmark must not report the speed of a wrong answer.
"""

import datetime
import json
import os
import platform
import time
from dataclasses import asdict, dataclass
from importlib.metadata import version
from pathlib import Path

import numpy as np

from .. import __version__, losses
from ..exceptions import SizeLimitError
from ..game import Game
from ..verify import VERIFY_RTOL, random_potentials
from ._protocol import Progress, median_seconds

__all__ = ["run", "Settings", "FULL", "QUICK", "LOSSES", "SIZES", "MAX_VERTICES"]

LOSSES = {
    "zero-one": losses.zero_one,
    "ordinal": losses.ordinal,
    "squared": losses.squared,
    "abstain(alpha=0.3)": lambda k: losses.abstain(k, alpha=0.3),
}
SIZES = (3, 10, 30, 100)
#: Largest vertex table the benchmark times.
MAX_VERTICES = 200_000
#: Seed of the random potentials shared by all methods.
SEED = 0
#: Agreement required of cvxpy: its default solver is an interior-point method (gap ~1e-8).
CVXPY_RTOL = 1e-6
EXACT_METHODS = ("closed_form", "vertices", "lp")


@dataclass(frozen=True)
class Settings:
    """Rows timed per method and repeats (the median is reported; cvxpy always runs once)."""

    rows: int
    lp_rows: int
    cvxpy_rows: int
    repeats: int


FULL = Settings(rows=10_000, lp_rows=2_000, cvxpy_rows=30, repeats=3)
QUICK = Settings(rows=1_000, lp_rows=200, cvxpy_rows=5, repeats=1)


def run(quick=False, out=None, print_fn=print):
    """Run the benchmark, print its table and return one record per (loss, k).

    Parameters
    ----------
    quick : bool
        Use :data:`QUICK` (seconds) instead of :data:`FULL` (minutes).
    out : str or Path, optional
        Also write the results: JSON (metadata and records) if it ends with ``.json``, the
        markdown table if ``.md``.
    print_fn : callable
        Receives the report text.  Progress goes to stderr.

    Returns
    -------
    list of dict
        Per (loss, k): microseconds per row of each method (None when not applicable), the rows
        timed, the vertex count and build time, the ratios and the largest disagreement.
    """
    _check_out(out)
    settings = QUICK if quick else FULL
    meta = {
        "date": datetime.datetime.now().isoformat(timespec="minutes"),
        "machine": machine_info(),
        "cvxpy_solver": _cvxpy_default_solver(),
        "settings": asdict(settings),
        "seed": SEED,
    }
    games = [(name, k) for name in LOSSES for k in SIZES]
    records = []
    progress = Progress("oracle")
    for i, (name, k) in enumerate(games, 1):
        progress(f"{i}/{len(games)} {name} k={k}")
        records.append(bench_game(name, k, settings))
    print_fn(format_report(records, meta))
    if out is not None:
        _write(Path(out), records, meta)
    return records


# ------------------------------------------------------------------------------- measuring
def _solver(game, method):
    """Value and ``q*`` of all rows in one call (``Game.value`` + ``Game.adversary`` would each
    solve the game, doubling the cost)."""
    return lambda F: game.value_and_adversary(F, method)


def _cvxpy_solver(game):
    """Value and ``q*`` row by row, building and solving a fresh cvxpy Problem for each.

    A row the solver fails on (cvxpy ``SolverError``, e.g. on potentials of magnitude ~1e6) is
    left as NaN: it is timed like any other row and counted as a failure.
    """
    import cvxpy

    def solve(F):
        value = np.full(F.shape[0], np.nan)
        Q = np.full(F.shape, np.nan)
        for i, f in enumerate(F):
            problem = game.lp(f)
            try:
                problem.solve()
            except cvxpy.error.SolverError:
                continue
            if problem.value is not None:
                value[i] = problem.value
                Q[i] = problem.var_dict["q"].value
        return value, Q

    return solve


def _cvxpy_default_solver():
    """Name of the solver cvxpy picks for the game LP (this also warms up cvxpy's imports)."""
    problem = Game(losses.zero_one(2)).lp([0.0, 0.0])
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


def _per_row_us(solve, F, repeats):
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
        record[f"{method}_us"] = _per_row_us(solve, F[rows], repeats)
    record["max_dev"] = max(record[f"{m}_dev"] or 0.0 for m in EXACT_METHODS)
    record["cvxpy_over_closed_form"] = _ratio(record["cvxpy_us"], record["closed_form_us"])
    record["lp_over_closed_form"] = _ratio(record["lp_us"], record["closed_form_us"])
    record["lp_over_vertices"] = _ratio(record["lp_us"], record["vertices_us"])
    return record


# ------------------------------------------------------------------------------- reporting
def _cpu_name():
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def write_results(out, meta, records, report):
    """Write ``out``: ``.json`` (metadata and records) or anything else as a fenced text block."""
    path = Path(out)
    if path.suffix == ".json":
        path.write_text(json.dumps({**meta, "records": records}, indent=2) + "\n")
    else:
        path.write_text("```\n" + report + "\n```\n")


def report_header(name, meta, libraries=(), command="advgame bench"):
    """First line of every benchmark report: the command, date, machine and library versions
    (``libraries`` names keys of ``meta['machine']``, e.g. ``('numpy', 'scipy')``)."""
    m = meta["machine"]
    versions = ", ".join(f"{lib} {m[lib]}" for lib in libraries)
    return (
        f"{command} {name}, {meta['date']}: {m['platform']}, {m['cpu']}, {m['cpu_count']} "
        f"CPUs (load average {m['load_average']} at start)" + (f"; {versions}" if versions else "")
    )


def machine_info():
    """Platform, CPU, and the versions of the libraries that do the work."""
    return {
        "platform": platform.platform(),
        "cpu": _cpu_name(),
        "cpu_count": os.cpu_count(),
        "load_average": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
        "python": platform.python_version(),
        **{package: version(package) for package in ("numpy", "scipy", "highspy", "cvxpy")},
        "advgame": __version__,
    }


def _us(x):
    if x is None:
        return "n/a"
    return f"{x:.2f}" if x < 10 else f"{x:.1f}" if x < 1000 else f"{x:,.0f}"


def _times(x):
    if x is None:
        return "n/a"
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}" if x >= 1 else f"{x:.2f}"


def _dev(x):
    return "n/a" if x is None else f"{x:.0e}"


COLUMNS = (
    ("loss", lambda r: r["loss"]),
    ("k", lambda r: str(r["k"])),
    ("closed form us", lambda r: _us(r["closed_form_us"])),
    ("vertices us", lambda r: _us(r["vertices_us"])),
    ("build ms", lambda r: _us(r["vertices_build_ms"])),
    ("LP us", lambda r: _us(r["lp_us"])),
    ("cvxpy us", lambda r: _us(r["cvxpy_us"])),
    ("cvxpy/cf", lambda r: _times(r["cvxpy_over_closed_form"])),
    ("LP/cf", lambda r: _times(r["lp_over_closed_form"])),
    ("LP/vert", lambda r: _times(r["lp_over_vertices"])),
    ("max dev", lambda r: _dev(r["max_dev"])),
    ("cvxpy dev", lambda r: _dev(r["cvxpy_dev"])),
)


def _table(records, markdown):
    header = [name for name, _ in COLUMNS]
    rows = [[cell(r) for _, cell in COLUMNS] for r in records]
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|:---|" + "---:|" * (len(header) - 1)]
        return lines + ["| " + " | ".join(row) + " |" for row in rows]
    widths = [max(len(row[j]) for row in [header] + rows) for j in range(len(header))]

    def line(cells):
        return "  ".join(
            c.ljust(w) if j == 0 else c.rjust(w) for j, (c, w) in enumerate(zip(cells, widths))
        )

    return [line(header), "-" * len(line(header))] + [line(row) for row in rows]


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
        "LP: one persistent HiGHS model, only the costs changed per row. cvxpy: a fresh Problem "
        "per row (Game.lp), solved with cvxpy's default solver.",
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
    if markdown:
        legend = ["- " + line for line in legend]
    return "\n".join([header, ""] + _table(records, markdown) + [""] + legend)


def _check_out(out):
    """Refuse an unusable ``--out`` before the run, not after it."""
    if out is None:
        return
    path = Path(out)
    if path.suffix not in (".json", ".md"):
        raise ValueError(f"--out must end with .json or .md; got {str(out)!r}.")
    if not path.parent.is_dir():
        raise ValueError(f"--out: the directory {str(path.parent)!r} does not exist.")


def _write(path, records, meta):
    if path.suffix == ".json":
        path.write_text(json.dumps({**meta, "records": records}, indent=2) + "\n")
    else:
        path.write_text(format_report(records, meta, markdown=True) + "\n")
