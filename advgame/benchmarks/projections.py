r"""``advgame bench projections``: batch projections of :mod:`advgame.polytopes`, three ways.

For every polytope of :mod:`advgame.polytopes`, both geometries (``"euclidean"``:
:math:`\operatorname{argmin}_\mu \|\mu - \theta\|^2`; ``"kl"``: :math:`\operatorname{argmax}_\mu
\langle\theta,\mu\rangle - \sum_i \mu_i\log\mu_i`, the module's convention) and two sizes, the
projections of ``theta ~ N(0, 1)`` (seeded) are computed by

``advgame``
    ``polytope.project(theta, geometry)`` on a batch of ``Settings.points`` points: the median
    over ``Settings.repeats`` runs of the batch's wall time, divided by the number of points;
``cvxpy``
    one cvxpy ``Problem`` per (polytope, geometry, size) with a ``Parameter`` for ``theta``,
    re-solved per point by Clarabel (:data:`CLARABEL_SETTINGS`) on the first
    ``Settings.cvxpy_points`` points; the problem is solved once on an extra point before timing,
    so its one-off (DPP) compilation is not included.  Euclidean: the QP ``minimize
    sum_squares(mu - theta)``; KL: the exponential-cone program ``maximize theta.mu +
    sum(entr(mu))``; both over the polytope's explicit constraints (:func:`_constraints`; the
    permutahedron by majorisation, ``sum_largest(mu, j) <= w_(1) + ... + w_(j)``);
``Frank-Wolfe``
    :func:`advgame.polytopes.frank_wolfe_projection` through ``polytope.argmax``, one point per
    call, with ``tol`` = :data:`FW_TOL` (its Frank-Wolfe gap) and ``max_iter`` =
    :data:`FW_MAX_ITER`.  It needs hundreds to thousands of oracle calls per point (seconds for
    the KL geometry, whose line search is a Brent search), so it is timed on at most
    ``Settings.fw_points`` points and stops taking new points once :data:`FW_BUDGET` seconds are
    spent on a case; the table gives the points timed and the mean oracle calls per point.

Times are microseconds per point; ``cvxpy/adv`` and ``FW/adv`` are ratios to advgame's time.
Before a time is reported every advgame projection of the batch must lie in the polytope
(``polytope.contains``) and, on the points each reference is timed on, be within
:data:`CHECK_ATOL` (max abs difference, reported in the table) of cvxpy's and of Frank-Wolfe's
answers: a benchmark must not report the speed of a wrong answer.  A failed check raises
``AssertionError`` naming the polytope, the geometry and the size.

Cases: the simplex, the unit cube, the knapsack polytope ``Knapsack(k // 10, k // 5)`` (the sum
bound is active on most points: the Euclidean cube projection of ``N(0, 1)`` sums to about
``0.32 k``, the KL one to more), the
order simplex, for ``k = 10, 100``; the permutahedron of ``w = (k, k - 1, ..., 1) / k`` for
``k = 10, 20`` (``w`` is scaled to ``theta``'s: with ``w = (k, ..., 1)`` the Euclidean projection of
``N(0, 1)`` is interior, a mere shift, and the KL one nearly a vertex; larger ``k`` is out of the
references' reach: at ``k = 30`` Frank-Wolfe takes ~40 s per KL point, and at ``k = 100`` Clarabel
stops at "optimal_inaccurate" on the KL program, ~5e-3 off); the Birkhoff and row-stochastic
polytopes of ``k x k`` matrices for ``k = 5, 10`` (Frank-Wolfe: ~1 s per KL point at ``k = 10``,
~15 s for Birkhoff at ``k = 20``).  :class:`advgame.polytopes.Unconstrained` is left out: its
projections are the identity and ``exp(theta - 1)``, and it has no ``argmax`` for Frank-Wolfe.
"""

import time
import warnings
from dataclasses import asdict, dataclass
from importlib.metadata import version

import numpy as np

from .. import polytopes
from .protocol import Progress, median_seconds
from .report import dev, publish, report_header, run_meta, table, times, us

__all__ = [
    "run",
    "bench_case",
    "Settings",
    "FULL",
    "QUICK",
    "POLYTOPES",
    "CHECK_ATOL",
    "CLARABEL_SETTINGS",
    "FW_TOL",
    "FW_MAX_ITER",
    "FW_BUDGET",
]

#: Seed of the random ``theta`` (with the size ``k``: every polytope of a size sees the same points).
SEED = 0
#: Largest allowed max abs difference between advgame's projection and a reference (cvxpy's
#: interior-point answer is accurate to ~1e-6 at the settings below, Frank-Wolfe's to ~1e-7).
CHECK_ATOL = 1e-5
#: Clarabel's stopping tolerances: at its defaults (1e-8), and even at 1e-10, the Euclidean QP stops
#: short of the optimal objective by ~1e-8 relative, up to 6e-5 away in the point (row-stochastic).
CLARABEL_SETTINGS = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12}
#: Frank-Wolfe gap at which it stops.  Euclidean: the point is then within ``sqrt(2 tol)`` ~ 1.4e-6;
#: KL: its Brent line search cannot push the gap much below ~1e-9 (the loop would run to
#: ``max_iter``), and 1e-8 already gives points within ~1e-7.
FW_TOL = {"euclidean": 1e-12, "kl": 1e-8}
#: Frank-Wolfe iteration cap (the cases below need at most ~2,000; a point it stops before
#: convergence fails the check).
FW_MAX_ITER = 20_000
#: Seconds of Frank-Wolfe per case after which no further point is started.
FW_BUDGET = 5.0


def _permutahedron(k):
    return polytopes.Permutahedron(np.arange(k, 0, -1.0) / k)


#: name -> (polytope for size ``k``, points are ``k x k`` matrices?)
POLYTOPES = {
    "simplex": (lambda k: polytopes.Simplex(), False),
    "unit cube": (lambda k: polytopes.UnitCube(), False),
    "knapsack": (lambda k: polytopes.Knapsack(k // 10, k // 5), False),
    "order simplex": (lambda k: polytopes.OrderSimplex(), False),
    "permutahedron": (_permutahedron, False),
    "Birkhoff": (lambda k: polytopes.Birkhoff(), True),
    "row-stochastic": (lambda k: polytopes.RowStochastic(), True),
}


@dataclass(frozen=True)
class Settings:
    """Batch size and repeats of advgame, points of the references, ``(polytope, sizes)`` cases."""

    points: int
    repeats: int
    cvxpy_points: int
    fw_points: int
    cases: tuple


FULL = Settings(
    points=1_000,
    repeats=5,
    cvxpy_points=20,
    fw_points=5,
    cases=(
        ("simplex", (10, 100)),
        ("unit cube", (10, 100)),
        ("knapsack", (10, 100)),
        ("order simplex", (10, 100)),
        ("permutahedron", (10, 20)),
        ("Birkhoff", (5, 10)),
        ("row-stochastic", (5, 10)),
    ),
)
#: ``--quick`` (for tests; seconds): 200 points, 3 cvxpy points and 1 Frank-Wolfe point, the small
#: size of each polytope.
QUICK = Settings(
    points=200,
    repeats=3,
    cvxpy_points=3,
    fw_points=1,
    cases=tuple((name, sizes[:1]) for name, sizes in FULL.cases),
)


# ------------------------------------------------------------------------------- references
def _constraints(polytope, mu, k):
    """The polytope's explicit constraints on the cvxpy variable ``mu`` (shape ``(k,)`` or
    ``(k, k)``)."""
    import cvxpy as cp

    if isinstance(polytope, polytopes.RowStochastic):  # before Simplex, its base class
        return [mu >= 0, cp.sum(mu, axis=1) == 1]
    if isinstance(polytope, polytopes.Simplex):
        return [mu >= 0, cp.sum(mu) == 1]
    if isinstance(polytope, polytopes.UnitCube):
        return [mu >= 0, mu <= 1]
    if isinstance(polytope, polytopes.Knapsack):
        return [mu >= 0, mu <= 1, cp.sum(mu) >= polytope.low, cp.sum(mu) <= polytope.high]
    if isinstance(polytope, polytopes.OrderSimplex):
        return [mu[0] <= 1, mu[1:] <= mu[:-1], mu[k - 1] >= 0]
    if isinstance(polytope, polytopes.Permutahedron):
        # majorisation: the j largest entries sum to at most the j largest weights, all to all
        top = np.cumsum(np.sort(polytope.w)[::-1])
        return [cp.sum(mu) == top[-1]] + [cp.sum_largest(mu, j) <= top[j - 1] for j in range(1, k)]
    if isinstance(polytope, polytopes.Birkhoff):
        return [mu >= 0, cp.sum(mu, axis=0) == 1, cp.sum(mu, axis=1) == 1]
    raise ValueError(f"no cvxpy constraints for {polytope!r}.")


def _cvxpy_solver(polytope, geometry, shape, warm_up, where):
    """``solve(Theta)``: every point's projection by one parametrised cvxpy Problem, compiled and
    solved once on ``warm_up`` here."""
    import cvxpy as cp

    theta = cp.Parameter(shape)
    mu = cp.Variable(shape)
    if geometry == "euclidean":
        objective = cp.Minimize(cp.sum_squares(mu - theta))
    else:
        objective = cp.Maximize(cp.sum(cp.multiply(theta, mu)) + cp.sum(cp.entr(mu)))
    problem = cp.Problem(objective, _constraints(polytope, mu, shape[0]))

    def solve(Theta):
        out = np.empty_like(Theta)
        for i, t in enumerate(Theta):
            theta.value = t
            try:
                with warnings.catch_warnings():  # its accuracy is the table's deviation column
                    warnings.filterwarnings("ignore", message="Solution may be inaccurate")
                    problem.solve(solver=cp.CLARABEL, **CLARABEL_SETTINGS)
            except cp.error.SolverError as exc:
                raise AssertionError(f"{where}: cvxpy (Clarabel) failed on point {i}.") from exc
            if mu.value is None:
                raise AssertionError(f"{where}: cvxpy returned no point ({problem.status}).")
            out[i] = mu.value
        return out

    solve(warm_up[None])
    return solve


def _frank_wolfe(polytope, geometry, Theta, points):
    """Frank-Wolfe projections of up to ``points`` rows of ``Theta`` (fewer once
    :data:`FW_BUDGET` is spent), their mean time (us) and oracle calls per point."""
    calls = 0

    def argmax(direction):
        nonlocal calls
        calls += 1
        return polytope.argmax(direction)

    out = []
    start = time.perf_counter()
    for t in Theta[:points]:
        out.append(
            polytopes.frank_wolfe_projection(
                argmax, t, geometry, max_iter=FW_MAX_ITER, tol=FW_TOL[geometry]
            )
        )
        if time.perf_counter() - start > FW_BUDGET:
            break
    seconds = time.perf_counter() - start
    return np.array(out), 1e6 * seconds / len(out), calls / len(out)


# ------------------------------------------------------------------------------- measuring
def _timed(solve, Theta):
    """``solve(Theta)`` and its wall time per point (us)."""
    start = time.perf_counter()
    out = solve(Theta)
    return out, 1e6 * (time.perf_counter() - start) / len(Theta)


def _median_us(solve, Theta, repeats):
    """Median over ``repeats`` of the wall time of ``solve(Theta)``, in microseconds per point."""
    return 1e6 * median_seconds(lambda: solve(Theta), repeats) / len(Theta)


def _checked(where, reference, values, expected):
    """The max abs difference of ``values`` from advgame's ``expected``; refuses (AssertionError)
    one over :data:`CHECK_ATOL`."""
    deviation = float(np.max(np.abs(values - expected)))
    if not deviation <= CHECK_ATOL:  # also refuses NaN
        raise AssertionError(
            f"{where}: advgame's projection differs from {reference}'s by {deviation:.1e} "
            f"(> {CHECK_ATOL:g}); refusing to time a wrong answer."
        )
    return deviation


def bench_case(name, geometry, k, settings):
    """Check, then time, advgame, cvxpy and Frank-Wolfe on one (polytope, geometry, size).

    Returns
    -------
    dict
        The case, microseconds per point of each method, the points each reference was timed on,
        Frank-Wolfe's oracle calls per point, the max abs differences from advgame and the ratios.
    """
    factory, matrices = POLYTOPES[name]
    polytope = factory(k)
    shape = (k, k) if matrices else (k,)
    where = f"{name} ({polytope!r}) {geometry} k={k}"
    rng = np.random.default_rng([SEED, k])
    warm_up, *rows = rng.normal(size=(settings.points + 1, *shape))
    Theta = np.array(rows)

    def project(T):
        return polytope.project(T, geometry)

    mu = project(Theta)  # also the warm-up of the timed runs
    if not np.all(polytope.contains(mu)):
        raise AssertionError(f"{where}: advgame's projection is not in the polytope.")
    solve = _cvxpy_solver(polytope, geometry, shape, warm_up, where)
    cvx_points = Theta[: settings.cvxpy_points]
    cvx, cvxpy_us = _timed(solve, cvx_points)
    cvxpy_dev = _checked(where, "cvxpy", cvx, mu[: len(cvx_points)])
    fw, fw_us, fw_calls = _frank_wolfe(polytope, geometry, Theta, settings.fw_points)
    fw_dev = _checked(where, "Frank-Wolfe", fw, mu[: len(fw)])
    advgame_us = _median_us(project, Theta, settings.repeats)
    return {
        "polytope": name,
        "repr": repr(polytope),
        "geometry": geometry,
        "k": k,
        "coordinates": int(np.prod(shape)),
        "points": len(Theta),
        "advgame_us": advgame_us,
        "cvxpy_points": len(cvx_points),
        "cvxpy_us": cvxpy_us,
        "cvxpy_dev": cvxpy_dev,
        "fw_points": len(fw),
        "fw_us": fw_us,
        "fw_dev": fw_dev,
        "fw_oracle_calls": fw_calls,
        "cvxpy_over_advgame": cvxpy_us / advgame_us,
        "fw_over_advgame": fw_us / advgame_us,
    }


# ------------------------------------------------------------------------------- reporting
COLUMNS = (
    ("polytope", lambda r: r["polytope"]),
    ("geometry", lambda r: r["geometry"]),
    ("k", lambda r: str(r["k"])),
    ("advgame us", lambda r: us(r["advgame_us"])),
    ("cvxpy us", lambda r: us(r["cvxpy_us"])),
    ("FW us", lambda r: us(r["fw_us"])),
    ("cvxpy/adv", lambda r: times(r["cvxpy_over_advgame"])),
    ("FW/adv", lambda r: times(r["fw_over_advgame"])),
    ("max |adv-cvxpy|", lambda r: dev(r["cvxpy_dev"])),
    ("max |adv-FW|", lambda r: dev(r["fw_dev"])),
    ("FW points", lambda r: str(r["fw_points"])),
    ("FW calls/pt", lambda r: f"{r['fw_oracle_calls']:,.0f}"),
)


def format_report(records, meta):
    """The header (machine, date), the table and its legend."""
    s = meta["settings"]
    header = report_header("projections", meta, ("numpy", "scipy", "cvxpy"))
    header += f" with Clarabel {meta['clarabel']}"
    polytope_reprs = "; ".join(
        f"{r['polytope']} k={r['k']}: {r['repr']}"
        for r in records
        if r["geometry"] == "euclidean" and r["polytope"] in ("knapsack", "permutahedron")
    )
    legend = [
        f"us: wall time per point. advgame: one batched project() call on {s['points']:,} points "
        f"of theta ~ N(0, 1) (seed ({meta['seed']}, k)), median of {s['repeats']} runs. cvxpy: "
        f"one parametrised Problem re-solved per point by Clarabel {meta['clarabel_settings']} "
        f"(compilation excluded), first {s['cvxpy_points']} points. FW: frank_wolfe_projection "
        f"through argmax, tol {meta['fw_tol']}, max_iter {meta['fw_max_iter']:,}, first "
        f"{s['fw_points']} point(s), no new point after {meta['fw_budget']:g} s ('FW points'); "
        "'FW calls/pt': oracle (argmax) calls per point.",
        "cvxpy/adv, FW/adv: time ratios to advgame. Before timing, every advgame projection is "
        f"checked to lie in the polytope and to be within {CHECK_ATOL:g} (max abs difference, "
        "columns max |.|) of cvxpy's and Frank-Wolfe's on the points they are timed on.",
        "k: points are k-vectors, or k x k matrices for Birkhoff and row-stochastic. "
        + polytope_reprs,
    ]
    return "\n".join([header, ""] + table(records, COLUMNS, left=2) + [""] + legend)


def run(quick=False, out=None, print_fn=print, progress=True):
    """Run the benchmark (the protocol of :mod:`advgame.benchmarks`).

    Returns
    -------
    list of dict
        One record per (polytope, geometry, k), see :func:`bench_case`.
    """
    settings = QUICK if quick else FULL
    meta = run_meta(
        clarabel=version("clarabel"),
        clarabel_settings=CLARABEL_SETTINGS,
        fw_tol=FW_TOL,
        fw_max_iter=FW_MAX_ITER,
        fw_budget=FW_BUDGET,
        check_atol=CHECK_ATOL,
        settings=asdict(settings),
        seed=SEED,
    )
    cases = [
        (name, geometry, k)
        for name, sizes in settings.cases
        for k in sizes
        for geometry in polytopes.GEOMETRIES
    ]
    records = []
    progress = Progress("projections", progress)
    for i, (name, geometry, k) in enumerate(progress.bar(cases, "case"), 1):
        progress(f"{i}/{len(cases)} {name} {geometry} k={k}")
        records.append(bench_case(name, geometry, k, settings))
    publish(format_report(records, meta), meta, records, out, print_fn)
    return records
