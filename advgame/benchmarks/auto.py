r"""``advgame bench auto``: which of advgame's exact or certified solvers is fastest, problem by
problem, and how close ``solver='auto'`` comes to it.

Every problem is one :class:`~advgame.models.AdversarialClassifier` fit (``tol=1e-4``, the
default), run by every solver of advgame that reaches an exact or certified answer on it:

``compile``
    the exact LP / QP / SOCP (HiGHS for LPs, cvxpy with Clarabel otherwise), optimal;
``smoothing``
    the certified smoothing family (:func:`advgame.solvers.auto.certified_fit`: dual ascent,
    smoothing steps, exact-kernel Newton), where :func:`~advgame.solvers.auto.certified_obstacle`
    finds nothing in its way, finished by cutting planes when it stalls on a small problem;
``lbfgs``
    L-BFGS on the non-smooth surrogate, certified afterwards (``certify='auto'``: cutting planes
    up to ``n p = 200,000``, the smoothing solver from its point beyond); not for exact moment
    matching (no regulariser bounds it).

AdaGrad and PEGASOS (first-order methods certified by the same refinements as L-BFGS) are left
out to keep the full run within about half an hour of CPU.

The problems: the agreement matrix of the classifier's tests (iris, wine and vehicle, standardised;
zero-one, ordinal, squared, abstain (``alpha = 0.3``) and a seeded random cost matrix; soft
moments, exact matching, and l1, l2, linf and group balls of radius 0.01), then moment norm
balls (l1, l2, linf) on optdigits (scaled to [0, 1]; the first ``n`` rows, every class) at
``n`` from 100 to 5,000 and radii 1e-3 to 1, with the zero-one loss and a random cost matrix, and
RBF-kernel fits (soft moments and the RKHS ball).

Protocol: one BLAS thread; CPU time (``time.process_time``, every thread of the process, HiGHS's
included).  Each solver first runs once (auto's choice first), capped at
:attr:`Settings.cap_factor` times the fastest certified time met so far on the problem (between
:attr:`Settings.cap_min` and :attr:`Settings.cap_max` seconds; a capped run is interrupted by
``SIGXCPU`` and recorded as ``>cap``); the solvers within :attr:`Settings.repeat_within` of the
fastest and under :attr:`Settings.repeat_below` seconds then report the median of three
timings, each the mean of a batch of runs where one run takes less than a third of
:attr:`Settings.settle`.  An answer counts when its gap is certified
(``gap_ <= tol * max(1, |objective_|)``) and it agrees with the compiled optimum
(``objective_ - gap_ <= optimum + 1e-6 max(1, |optimum|)`` and ``objective_ >= optimum - that``);
the fastest such answer names the problem's fastest solver.  ``auto`` is the solver
:func:`advgame.solvers.auto.auto_solver` picks (it runs that solver and nothing else, so its time
is that solver's), and ``auto/fastest`` the ratio of their times: the target is at most
:data:`TARGET` everywhere.
"""

from __future__ import annotations

import contextlib
import math
import signal
import statistics
import time
import warnings
from dataclasses import asdict, dataclass, replace

import numpy as np
from sklearn.datasets import load_iris, load_wine
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from ..datasets import load
from ..exceptions import SolverError
from ..models import AdversarialClassifier
from ..solvers.auto import auto_solver, certified_obstacle, describe_auto_choice

try:
    import resource
except ImportError:  # not on Windows: no CPU caps there
    resource = None
from .protocol import Progress
from .report import publish, report_header, run_meta, table

__all__ = ["run", "Settings", "Problem", "FULL", "QUICK", "TARGET", "problems", "measure"]

#: The issue's target: auto's CPU time at most this many times the fastest solver's.
TARGET = 1.2
#: The certified relative gap every fit is asked for (the classifier's default).
TOL = 1e-4
#: How far a certified objective may sit from the compiled optimum (solver tolerances).
AGREE = 1e-6
#: The seed of the random cost matrices (uniform in [0.2, 2] off the diagonal), as in the tests.
COST_SEED = 7
SOLVERS = ("compile", "smoothing", "lbfgs")


@dataclass(frozen=True)
class Problem:
    """One fit: the data (``'iris'``, ``'wine'``, ``'vehicle'`` or ``'digits'``, its first ``n``
    rows, 0 for all), the loss (``'zero_one'``, ``'ordinal'``, ``'squared'``, ``'abstain'`` or
    ``'cost'``, a seeded random matrix), the uncertainty set and its strength (None: ``1/n``
    for soft moments, the estimator's default when the rule was measured, and the estimator's
    own default ``0.01`` for the balls), and the kernel (None: linear multiclass features)."""

    group: str
    data: str
    n: int
    loss: str
    uncertainty: str
    strength: float | None = None
    kernel: str | None = None

    def label(self):
        strength = "" if self.strength is None else f" {self.strength:g}"
        kernel = "" if self.kernel is None else f" {self.kernel}"
        rows = f" {self.n}" if self.n else ""  # 0: every row
        return f"{self.data}{rows} {self.loss} {self.uncertainty}{strength}{kernel}"


@dataclass(frozen=True)
class Settings:
    """The problems and the timing protocol.

    ``agreement``: ``(data set, losses)`` pairs, each loss with every set of ``agreement_sets``;
    ``balls``: ``(n, loss, radii)`` triples on optdigits, each with every norm of ``ball_norms``;
    ``lp_balls``: ``(data set, n, losses, radii)`` of the LP balls (each norm of
    ``lp_norms``) on the vendored multiclass sets, few parameters per game row (a seeded
    stratified sample of ``n`` rows; 0: all);
    ``kernel_sizes``: optdigits rows of the RBF-kernel problems (zero-one and cost losses, soft
    moments and the RKHS ball).  ``repeats`` timings (median) for the solvers within
    ``repeat_within`` times the fastest first run and under ``repeat_below`` CPU seconds, each
    the mean of enough consecutive runs to take about ``settle / repeats`` CPU seconds (a fit of
    a few milliseconds is below the CPU clock's granularity and the noise of a shared machine;
    a batch of them is not); a run
    is capped at ``cap_factor`` times the fastest certified time so far, between ``cap_min`` and
    ``cap_max`` CPU seconds.  ``compile`` runs up to ``compile_max_rows`` game rows (``n k``):
    HiGHS cannot be interrupted mid-solve, and beyond it runs into its own 300 s limit (the l1
    ball on 1,000 optdigits rows, 10,000 game rows, stopped there unsolved)."""

    agreement: tuple
    agreement_sets: tuple
    balls: tuple
    ball_norms: tuple
    lp_balls: tuple
    lp_norms: tuple
    kernel_sizes: tuple
    repeats: int
    repeat_within: float
    repeat_below: float
    settle: float
    cap_factor: float
    cap_min: float
    cap_max: float
    compile_max_rows: int


_LOSSES = ("zero_one", "ordinal", "squared", "abstain", "cost")
_RADII = (1e-3, 1e-2, 1e-1, 1.0)
FULL = Settings(
    agreement=(("iris", _LOSSES), ("wine", _LOSSES), ("vehicle", ("zero_one", "cost"))),
    agreement_sets=("soft", "exact", "l1", "l2", "linf", "group"),
    balls=(
        (100, "zero_one", _RADII),
        (100, "cost", (1e-3, 1e-1)),
        (300, "zero_one", _RADII),
        (1_000, "zero_one", (1e-3, 1e-1)),
        (5_000, "zero_one", (1e-2,)),
    ),
    ball_norms=("l1", "l2", "linf"),
    lp_balls=(
        ("vehicle", 0, ("ordinal",), (1e-2, 1e-1)),
        ("redwine", 800, ("zero_one", "cost"), (1e-2,)),
        ("segment", 700, ("cost",), (1e-2,)),
        ("satimage", 800, ("cost",), (1e-2,)),
    ),
    lp_norms=("l1", "linf"),
    kernel_sizes=(150, 300),
    repeats=3,
    repeat_within=1.5,
    repeat_below=5.0,
    settle=1.0,
    cap_factor=3.0,
    cap_min=2.0,
    cap_max=30.0,
    compile_max_rows=5_000,
)
#: ``--quick`` (for tests; seconds): iris, two losses, four sets.
QUICK = Settings(
    agreement=(("iris", ("zero_one", "cost")),),
    agreement_sets=("soft", "exact", "l1", "l2"),
    balls=(),
    ball_norms=(),
    lp_balls=(),
    lp_norms=(),
    kernel_sizes=(),
    repeats=1,
    repeat_within=1.5,
    repeat_below=1.0,
    settle=0.0,
    cap_factor=3.0,
    cap_min=3.0,
    cap_max=30.0,
    compile_max_rows=5_000,
)
#: The untimed warm-up before either: tiny problems of each kind, every loss on soft moments, an
#: LP ball and an SOCP ball, so that no timed fit compiles a numba kernel (a first zero-one or
#: abstain fit on soft moments, 0.004 s warm, took 0.8-3.3 s with its compilation).  Its fits
#: have no CPU cap: a cap's signal inside numba's compiler leaves the kernel unusable ("no
#: compiled object yet") for the rest of the process.
WARM_UP = Settings(
    agreement=(("iris", _LOSSES),),
    agreement_sets=("soft", "l1", "l2"),
    balls=(),
    ball_norms=(),
    lp_balls=(),
    lp_norms=(),
    kernel_sizes=(60,),
    repeats=1,
    repeat_within=1.0,
    repeat_below=0.0,
    settle=0.0,
    cap_factor=3.0,
    cap_min=math.inf,
    cap_max=math.inf,
    compile_max_rows=5_000,
)


def problems(settings):
    """The problems of ``settings``, in order: agreement matrix, norm balls, LP balls, kernels."""
    out = [
        Problem("agreement", data, 0, loss, uncertainty, None if uncertainty == "soft" else 0.01)
        for data, losses in settings.agreement
        for loss in losses
        for uncertainty in settings.agreement_sets
    ]
    out += [
        Problem("balls", "digits", n, loss, norm, radius)
        for n, loss, radii in settings.balls
        for norm in settings.ball_norms
        for radius in radii
    ]
    out += [
        Problem("lp", data, n, loss, norm, radius)
        for data, n, losses, radii in settings.lp_balls
        for loss in losses
        for norm in settings.lp_norms
        for radius in radii
    ]
    out += [
        Problem("kernel", "digits", n, loss, uncertainty, strength, "rbf")
        for n in settings.kernel_sizes
        for loss in ("zero_one", "cost")
        for uncertainty, strength in (("soft", None), ("l2", 0.01), ("l2", 0.1))
    ]
    return out


def _data(name, n):
    """``(X, y)``: optdigits' first ``n`` rows scaled to [0, 1] (``'digits'``); else iris, wine
    or a vendored multiclass set standardised, all rows (``n = 0``) or a stratified sample of
    ``n`` (seed 0)."""
    if name == "iris":
        X, y = load_iris(return_X_y=True)
    elif name == "wine":
        X, y = load_wine(return_X_y=True)
    elif name == "digits":
        data = load("multiclass/optdigits")
        return np.asarray(data.X[:n], dtype=float) / 16.0, data.y[:n]
    else:
        data = load(f"multiclass/{name}")
        X, y = np.asarray(data.X, dtype=float), data.y
    if n:
        X, _, y, _ = train_test_split(X, y, train_size=n, stratify=y, random_state=0)
    return StandardScaler().fit_transform(X), y


def estimator(problem, y, solver):
    """The classifier of ``problem`` with ``solver`` (the cost matrix drawn for ``y``'s
    classes)."""
    strength = problem.strength
    if strength is None and problem.uncertainty == "soft":
        strength = 1.0 / len(y)
    params = {"uncertainty": problem.uncertainty, "strength": strength, "tol": TOL}
    k = np.unique(y).size
    if problem.loss == "cost":
        rng = np.random.default_rng(COST_SEED)
        params["loss"] = rng.uniform(0.2, 2.0, (k, k)) * (1 - np.eye(k))
    elif problem.loss == "abstain":
        params.update(loss="abstain", alpha=0.3)
    else:
        params["loss"] = problem.loss
    if problem.loss in ("ordinal", "squared") and y.dtype.kind not in "iu":
        params["classes_order"] = np.unique(y)  # vehicle's classes are names: any fixed order
    if problem.kernel is not None:
        params["kernel"] = problem.kernel
    return AdversarialClassifier(solver=solver, **params)


class CpuLimitReached(BaseException):
    """A fit ran past its CPU cap (a ``BaseException``, so no solver's ``except`` swallows it)."""


def _cpu_used():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _interrupt(signum, frame):
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    resource.setrlimit(resource.RLIMIT_CPU, (resource.RLIM_INFINITY, hard))
    raise CpuLimitReached


@contextlib.contextmanager
def cpu_cap(seconds):
    """Interrupt the block (:class:`CpuLimitReached`) once the process has used ``seconds``
    more CPU seconds (``RLIMIT_CPU`` and ``SIGXCPU``; no cap where the platform has neither or
    the hard limit is lower)."""
    if resource is None or not hasattr(signal, "SIGXCPU"):
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    limit = int(_cpu_used() + seconds) + 1
    if hard != resource.RLIM_INFINITY and limit > hard:
        yield
        return
    previous = signal.signal(signal.SIGXCPU, _interrupt)
    resource.setrlimit(resource.RLIMIT_CPU, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
        signal.signal(signal.SIGXCPU, previous)


def _fit_once(problem, X, y, solver, cap=None):
    """``(seconds, fitted)`` of one fit, or ``(None, None)`` when the cap (CPU seconds; None:
    none) interrupted it or the solver gave up (a ``SolverError``: HiGHS's time limit)."""
    clf = estimator(problem, y, solver)
    start = time.process_time()
    capped = contextlib.nullcontext() if cap is None else cpu_cap(cap)
    try:
        with capped, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an uncertified answer is recorded, not warned
            clf.fit(X, y)
    except (CpuLimitReached, SolverError):
        return None, None
    except SystemError as exc:  # the cap interrupted compiled (numba) code
        if not _interrupted(exc):
            raise
        return None, None
    return time.process_time() - start, clf


def _mean_time(problem, X, y, solver, count):
    """The mean CPU seconds of ``count`` consecutive fits (None when one fails), timed
    together."""
    start = time.process_time()
    for _ in range(count):
        if _fit_once(problem, X, y, solver)[0] is None:
            return None
    return (time.process_time() - start) / count


def _interrupted(exc):
    """Whether ``exc`` comes from :class:`CpuLimitReached` (numba wraps it in ``SystemError``)."""
    while exc is not None:
        if isinstance(exc, CpuLimitReached):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def _applies(problem, solver, obstacle, rows, settings):
    if solver == "smoothing":
        return obstacle is None
    if solver == "lbfgs":
        return problem.uncertainty != "exact"
    return rows <= settings.compile_max_rows


def measure(problem, settings, X=None, y=None):
    """One record: every applicable solver's CPU seconds (median of its runs), objective, gap
    and status, the fastest certified solver, auto's choice, its description and the ratio."""
    if X is None:
        X, y = _data(problem.data, problem.n)
    # one uncertified L-BFGS step declares the game, the uncertainty set and the feature map
    probe = estimator(problem, y, "lbfgs").set_params(certify=False, max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        probe.fit(X, y)
    choice_args = (probe.game_.game(), probe.uncertainty_, probe.feature_map_, X.shape[0])
    auto = auto_solver(*choice_args)
    obstacle = certified_obstacle(*choice_args[:3])
    order = [auto] + [s for s in SOLVERS if s != auto]
    runs, fits, best = {}, {}, np.inf
    for solver in order:
        if not _applies(problem, solver, obstacle, X.shape[0] * probe.classes_.size, settings):
            continue
        cap = min(settings.cap_max, max(settings.cap_min, settings.cap_factor * best))
        cap = None if math.isinf(cap) else cap  # the warm-up: never interrupt a compilation
        seconds, fitted = _fit_once(problem, X, y, solver, cap)
        runs[solver] = [seconds] if seconds is not None else []
        fits[solver] = fitted if fitted is not None else cap
        if fitted is not None and _certified(fitted):
            best = min(best, seconds)
    for solver, seconds in runs.items():
        if (
            seconds
            and seconds[0] <= settings.repeat_within * best
            and seconds[0] < (settings.repeat_below)
        ):
            batch = math.ceil(settings.settle / settings.repeats / max(seconds[0], 1e-3))
            if batch > 1:  # too fast for one run a timing: each timing a batch's mean
                seconds.clear()
            while len(seconds) < settings.repeats:
                seconds.append(_mean_time(problem, X, y, solver, batch))
    record = {
        "group": problem.group,
        "problem": problem.label(),
        **asdict(problem),
        "n": len(y),
        "k": int(np.unique(y).size),
        "p": int(probe.feature_map_.n_params) if problem.kernel is None else None,
        "auto": auto,
        "rule": describe_auto_choice(*choice_args),
    }
    optimum = fits["compile"].objective_ if _fitted(fits.get("compile")) else None
    for solver in SOLVERS:
        record.update(_solver_fields(solver, runs.get(solver), fits.get(solver), optimum))
    valid = {s: record[f"{s}_s"] for s in SOLVERS if record[f"{s}_status"] == "certified"}
    record["fastest"] = min(valid, key=valid.get) if valid else None
    record["fastest_s"] = valid[record["fastest"]] if valid else None
    auto_s = valid.get(auto)
    record["auto_s"] = auto_s
    record["ratio"] = auto_s / max(record["fastest_s"], 1e-9) if auto_s is not None else None
    return record


def _fitted(fit):
    return fit is not None and not isinstance(fit, float)


def _certified(fit):
    return fit.gap_ <= TOL * max(1.0, abs(fit.objective_))


def _solver_fields(solver, seconds, fit, optimum):
    """``{solver}_s`` (median CPU seconds, or the cap), ``_runs``, ``_objective``, ``_gap`` and
    ``_status``: ``'certified'`` (or optimal), ``'uncertified'``, ``'disagrees'`` (with the
    compiled optimum), ``'capped'`` or ``'n/a'`` (the solver does not apply)."""
    fields = {f"{solver}_{key}": None for key in ("s", "runs", "objective", "gap")}
    if fit is None:
        return {**fields, f"{solver}_status": "n/a"}
    if not _fitted(fit):
        return {**fields, f"{solver}_s": fit, f"{solver}_status": "capped"}
    status = "certified" if _certified(fit) else "uncertified"
    if optimum is not None and status == "certified":
        slack = AGREE * max(1.0, abs(optimum))
        if fit.objective_ - fit.gap_ > optimum + slack or fit.objective_ < optimum - slack:
            status = "disagrees"
    return {
        f"{solver}_s": statistics.median(seconds),
        f"{solver}_runs": len(seconds),
        f"{solver}_objective": float(fit.objective_),
        f"{solver}_gap": float(fit.gap_),
        f"{solver}_status": status,
    }


# ------------------------------------------------------------------------------- reporting
def _cell(solver):
    def cell(r):
        status, seconds = r[f"{solver}_status"], r[f"{solver}_s"]
        if status == "n/a":
            return "-"
        if status == "capped":
            return f">{seconds:.0f}"
        mark = "" if status == "certified" else f" ({status})"
        star = "*" if r["fastest"] == solver else ""
        return f"{star}{seconds:.3f}{mark}" if seconds < 1 else f"{star}{seconds:.2f}{mark}"

    return cell


COLUMNS = (
    ("problem", lambda r: r["problem"]),
    ("k", lambda r: str(r["k"])),
    *((f"{s} s", _cell(s)) for s in SOLVERS),
    ("fastest", lambda r: r["fastest"] or "none"),
    ("auto", lambda r: r["auto"]),
    ("auto/fastest", lambda r: "n/a" if r["ratio"] is None else f"{r['ratio']:.2f}"),
)


def _outcome(record):
    """One progress line: each solver's time, the fastest and auto's choice."""
    cells = ", ".join(f"{s} {_cell(s)(record)}" for s in SOLVERS)
    return f"{cells}; fastest {record['fastest']}, auto {record['auto']}"


def summary(records):
    """The target: the worst and median auto/fastest ratio, and the problems above it."""
    ratios = [r["ratio"] for r in records if r["fastest"] is not None]
    missing = [r["problem"] for r in records if r["fastest"] is not None and r["ratio"] is None]
    finite = [x for x in ratios if x is not None]
    above = [r["problem"] for r in records if r["ratio"] is not None and r["ratio"] > TARGET]
    return {
        "measure": "summary",
        "problems": len(records),
        "worst_ratio": max(finite) if finite else None,
        "median_ratio": statistics.median(finite) if finite else None,
        "above_target": above,
        "auto_uncertified": missing,
        "target": TARGET,
        "target_met": not above and not missing,
    }


def format_report(records, total, meta):
    """The header, the protocol, the table (markdown) and the target."""
    worst, median = total["worst_ratio"], total["median_ratio"]
    lines = [
        report_header("auto", meta, ("numpy", "scipy", "highspy", "cvxpy")),
        "",
        f"CPU seconds (time.process_time, one BLAS thread) of AdversarialClassifier(solver=S, "
        f"tol={TOL:g}).fit on each problem; * marks the fastest certified answer; >C a run "
        f"interrupted at C CPU seconds; medians of {meta['settings']['repeats']} timings for the "
        f"solvers within {meta['settings']['repeat_within']:g}x of the fastest and under "
        f"{meta['settings']['repeat_below']:g} s (each the mean of a batch of runs taking about "
        f"{meta['settings']['settle'] / max(meta['settings']['repeats'], 1):.2g} s where one run "
        "is faster), one run otherwise.",
        "",
        *table(records, COLUMNS, left=1, markdown=True),
        "",
        f"auto/fastest over {total['problems']} problems: worst "
        + ("n/a" if worst is None else f"{worst:.2f}")
        + ", median "
        + ("n/a" if median is None else f"{median:.2f}")
        + f" (target <= {TARGET:g}: {'met' if total['target_met'] else 'NOT met'}).",
    ]
    above = [r for r in records if r["problem"] in total["above_target"]]
    if above:
        excess = (
            f"{r['problem']} ({r['ratio']:.2f}x, +{r['auto_s'] - r['fastest_s']:.3f} s)"
            for r in above
        )
        lines.append("above the target (auto's excess CPU time): " + "; ".join(excess) + ".")
    if total["auto_uncertified"]:
        lines.append("auto's solver uncertified: " + "; ".join(total["auto_uncertified"]) + ".")
    return "\n".join(lines)


def run(quick=False, out=None, print_fn=print, progress=True):
    """Run the benchmark (the protocol of :mod:`advgame.benchmarks`; ``progress=False`` is
    quiet).

    Returns
    -------
    list of dict
        One record per problem (its solvers' times, objectives, gaps and statuses, the fastest,
        auto's choice and the ratio), then a ``'summary'`` record (``measure``).
    """
    settings = QUICK if quick else FULL
    meta = run_meta(settings=asdict(settings), tol=TOL, blas_threads=1, clock="process_time")
    progress = Progress("auto", progress)
    todo = problems(settings)
    records = []
    with threadpool_limits(limits=1, user_api="blas"):
        # the compiled kernels, HiGHS and cvxpy, untimed (the kernel solvers only when timed)
        warm_up = WARM_UP if settings.kernel_sizes else replace(WARM_UP, kernel_sizes=())
        for problem in problems(warm_up):
            measure(problem, warm_up)
        for i, problem in enumerate(progress.bar(todo, "problem"), 1):
            progress(f"{i}/{len(todo)} {problem.label()}")
            records.append(measure(problem, settings))
            progress(f"{i}/{len(todo)} {_outcome(records[-1])}")
    total = summary(records)
    publish(format_report(records, total, meta), meta, records + [total], out, print_fn)
    return records + [total]
