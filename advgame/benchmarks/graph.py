r"""``advgame bench graph``: the graph game of one structured example (Fathony et al. 2018b), three ways.

For a graph, ``k`` labels and a loss (zero-one, ordinal, squared), each example draws node and
edge potentials ``psi, Psi ~ N(0, 1)`` (seeded) and the game value is computed by

``LP``
    :class:`advgame.GraphGame` with ``method='lp'``: one persistent HiGHS model of the marginal
    polytope (a junction tree on graphs with cycles), warm-started from the previous example;
    the model is built on an extra example before timing, so its one-off construction is not
    included;
``DD``
    ``method='dual_decomposition'`` (forests only, Fathony et al. 2018b, Theorem 2): column
    generation with the node games' closed forms and a master LP built per example, certified by its
    duality gap and falling back to the LP when the gap does not close (its time then includes the
    fallback);
``brute force``
    :func:`advgame.graph.brute_force_game`, the ordinary game over all ``k^N`` joint labelings,
    where ``k^N <= MAX_BRUTE_FORCE_LABELINGS``.

Graphs: chains of 6 nodes (where brute force is feasible for ``k = 2, 3``), chains of 50 nodes, a
random tree of 50 nodes (``networkx.random_labeled_tree``, seeded) and, with cycles, the 4 x 4
grid through the junction-tree LP (decomposition does not apply there).  Times are wall-clock
milliseconds per example, averaged over the examples, with DD and brute force as ratios to the
LP.  Before a time is reported every value is compared with the LP's (within
:data:`CHECK_ATOL`, what DD is required to meet): a benchmark must not report the speed of a
wrong answer.  DD's certificate is checked too: its reported gap must bound its distance to the
LP value.
"""

import statistics
import time
from dataclasses import asdict, dataclass

import networkx as nx
import numpy as np

from .. import losses
from ..graph import MAX_BRUTE_FORCE_LABELINGS, GraphGame, brute_force_game
from .protocol import Progress
from .report import dev, publish, report_header, run_meta, table

__all__ = ["run", "Settings", "FULL", "QUICK", "GRAPHS", "LOSSES", "CHECK_ATOL"]

LOSSES = {"zero-one": losses.zero_one, "ordinal": losses.ordinal, "squared": losses.squared}
#: Seed of the random potentials (and of the random tree).
SEED = 0
#: Largest allowed ``|method - LP|`` (what the dual decomposition is required to meet).
CHECK_ATOL = 1e-6
#: Slack for the LP's own accuracy when checking that DD's gap bounds its distance to the LP.
LP_RTOL = 1e-9

GRAPHS = {
    "chain 6": lambda: nx.path_graph(6),
    "chain 50": lambda: nx.path_graph(50),
    "tree 50": lambda: nx.random_labeled_tree(50, seed=SEED),
    "grid 4x4": lambda: nx.convert_node_labels_to_integers(nx.grid_2d_graph(4, 4)),
}


@dataclass(frozen=True)
class Settings:
    """Examples per (graph, k, loss) and the ``(graph, k values)`` cases."""

    examples: int
    cases: tuple


FULL = Settings(
    examples=10,
    cases=(
        ("chain 6", (2, 3)),
        ("chain 50", (3, 5, 10)),
        ("tree 50", (3, 5, 10)),
        ("grid 4x4", (3,)),
    ),
)
#: ``--quick`` (for tests; seconds): two examples, the small ``k`` of each graph.
QUICK = Settings(
    examples=2,
    cases=(("chain 6", (2, 3)), ("chain 50", (3,)), ("tree 50", (3,)), ("grid 4x4", (3,))),
)


def _examples(graph, k, n, seed):
    """``n`` examples of node and edge potentials drawn from N(0, 1)."""
    rng = np.random.default_rng(seed)
    shape = (graph.number_of_nodes(), k), (graph.number_of_edges(), k, k)
    return [(rng.normal(size=shape[0]), rng.normal(size=shape[1])) for _ in range(n)]


def _timed(solve, examples):
    """Results of ``solve`` on every example and the median wall time per example (ms)."""
    results, times = [], []
    for psi, Psi in examples:
        start = time.perf_counter()
        results.append(solve(psi, Psi))
        times.append(time.perf_counter() - start)
    return results, 1e3 * statistics.median(times)


def _checked(where, values, reference):
    """The largest ``|value - LP|``; refuses (AssertionError) one over :data:`CHECK_ATOL`."""
    deviation = float(np.max(np.abs(np.asarray(values) - reference)))
    if deviation > CHECK_ATOL:
        raise AssertionError(
            f"{where} deviates from the LP by {deviation:.1e} (> {CHECK_ATOL:g}); refusing to "
            "time a wrong answer."
        )
    return deviation


def _decomposition(game, examples, reference, where):
    """DD's record fields: time, certified count, deviation from the LP and largest gap."""
    dd, dd_ms = _timed(lambda psi, Psi: game.solve(psi, Psi, method="dual_decomposition"), examples)
    deviation = _checked(f"{where}: dual decomposition", [s.value for s in dd], reference)
    certified = [(s, v) for s, v in zip(dd, reference) if s.method == "dual_decomposition"]
    for solution, value in certified:
        if abs(solution.value - value) > solution.gap + LP_RTOL * max(1.0, abs(value)):
            raise AssertionError(
                f"{where}: the certified gap {solution.gap:.1e} does not bound the distance "
                f"{abs(solution.value - value):.1e} to the LP."
            )
    return {
        "dd_ms": dd_ms,
        "dd_certified": len(certified),
        "dd_dev": deviation,
        "dd_max_gap": max((s.gap for s, _ in certified), default=None),
    }


def _brute_force(loss, graph, examples, reference, where):
    """Brute force's record fields: time and deviation from the LP."""
    values, brute_ms = _timed(lambda psi, Psi: brute_force_game(loss, graph, psi, Psi), examples)
    return {"brute_ms": brute_ms, "brute_dev": _checked(f"{where}: brute force", values, reference)}


def bench_case(graph_name, k, loss_name, examples_count, seed):
    """Time and check LP, DD and brute force on one (graph, k, loss); returns its record."""
    graph = GRAPHS[graph_name]()
    loss = LOSSES[loss_name](k)
    game = GraphGame(loss, graph)
    warm_up, *examples = _examples(graph, k, examples_count + 1, seed)
    game.solve(*warm_up, method="lp")  # builds the persistent model
    where = f"{graph_name} k={k} {loss_name}"
    lp, lp_ms = _timed(lambda psi, Psi: game.solve(psi, Psi, method="lp"), examples)
    reference = np.array([solution.value for solution in lp])
    record = {
        "graph": graph_name,
        "nodes": graph.number_of_nodes(),
        "edges": graph.number_of_edges(),
        "treewidth": game.regions.width,
        "k": k,
        "loss": loss_name,
        "examples": len(examples),
        "lp_ms": lp_ms,
        **dict.fromkeys(("dd_ms", "dd_certified", "dd_dev", "dd_max_gap"), None),
        **dict.fromkeys(("brute_ms", "brute_dev"), None),
    }
    if game.fast_path == "dual_decomposition":
        record.update(_decomposition(game, examples, reference, where))
    if k ** graph.number_of_nodes() <= MAX_BRUTE_FORCE_LABELINGS:
        record.update(_brute_force(loss, graph, examples, reference, where))
    return record


# ------------------------------------------------------------------------------- reporting
def _ms(x):
    return "-" if x is None else f"{x:.1f}" if x < 100 else f"{x:,.0f}"


def _ratio(x, lp):
    return "-" if x is None else f"{x / lp:.2f}" if x < 10 * lp else f"{x / lp:,.0f}"


COLUMNS = (
    ("graph", lambda r: r["graph"]),
    ("k", lambda r: str(r["k"])),
    ("loss", lambda r: r["loss"]),
    ("LP ms", lambda r: _ms(r["lp_ms"])),
    ("DD/LP", lambda r: _ratio(r["dd_ms"], r["lp_ms"])),
    ("brute/LP", lambda r: _ratio(r["brute_ms"], r["lp_ms"])),
    (
        "DD certified",
        lambda r: "-" if r["dd_certified"] is None else f"{r['dd_certified']}/{r['examples']}",
    ),
    ("max |DD-LP|", lambda r: dev(r["dd_dev"], "-")),
    ("max |brute-LP|", lambda r: dev(r["brute_dev"], "-")),
)


def format_report(records, meta):
    """The header (machine, date), the table and its legend."""
    forests = [r for r in records if r["dd_certified"] is not None]
    certified = sum(r["dd_certified"] for r in forests)
    total = sum(r["examples"] for r in forests)
    deviation = max((r["dd_dev"] for r in forests), default=0.0)
    graphs = {r["graph"]: r for r in records}
    shapes = "graphs: " + "; ".join(
        f"{name} ({r['nodes']} nodes, {r['edges']} edges, treewidth {r['treewidth']})"
        for name, r in graphs.items()
    )
    legend = [
        f"ms: wall time per example (median over {meta['settings']['examples']} examples of "
        f"N(0, 1) potentials, seed {meta['seed']}); DD/LP, brute/LP: time ratios to the LP; "
        "'-': not applicable (DD needs a forest; brute force needs k^N <= "
        f"{MAX_BRUTE_FORCE_LABELINGS:,}).",
        "LP: persistent HiGHS model warm-started across examples (build excluded). DD: "
        "Fathony et al. (2018b) Theorem 2 by column generation, master LP built per example; certified: examples "
        "solved without LP fallback.",
        f"every value checked against the LP before its time is reported (|. - LP| <= "
        f"{CHECK_ATOL:g}; DD's gap must bound its distance).",
        f"DD certified {certified} of {total} forest examples; max |DD - LP| = {deviation:.1e}.",
        shapes,
    ]
    header = report_header("graph", meta, ("numpy", "scipy", "highspy"))
    return "\n".join([header, ""] + table(records, COLUMNS, left=3) + [""] + legend)


def run(quick=False, out=None, print_fn=print, progress=True):
    """Run the benchmark (the protocol of :mod:`advgame.benchmarks`).

    Returns
    -------
    list of dict
        One record per (graph, k, loss): milliseconds per example of each method (None when not
        applicable), DD's certified count and largest gap, and the largest deviations from the
        LP.
    """
    settings = QUICK if quick else FULL
    meta = run_meta(settings=asdict(settings), seed=SEED)
    cases = [(g, k, loss) for g, ks in settings.cases for k in ks for loss in LOSSES]
    records = []
    progress = Progress("graph", progress)
    for i, (graph_name, k, loss_name) in enumerate(progress.bar(cases, "case"), 1):
        progress(f"{i}/{len(cases)} {graph_name} k={k} {loss_name}")
        records.append(bench_case(graph_name, k, loss_name, settings.examples, [SEED, i]))
    publish(format_report(records, meta), meta, records, out, print_fn)
    return records
