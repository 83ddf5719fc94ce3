"""The ``advgame`` command line.

Subcommands
-----------
``advgame explain LOSS --k K`` (or ``--matrix FILE.csv``)
    Walk through one game: the loss matrix, its recognised structure, the game LP (Fathony et al.
    2018a, Eq. 4) and its dual (Eq. 10) written out, the extreme points of the adversary's polytope
    as exact fractions, the closed form that applies and an agreement check of every method.
``advgame verify LOSS --k K`` (or ``--matrix FILE.csv``)
    Every method against the LP and its optimality certificates; exit code 1 on disagreement.
    With ``--function module:attr`` (and ``--adversary``, ``--predictor``; ``module`` may also
    be a ``path/to/file.py``), your closed form instead, by
    :func:`advgame.verify.verify_closed_form`: the report with its shrunk counterexample.
    Every time printed is measured after a warm-up call.
``advgame demo``
    A short tour: four games on fixed potentials, then the adversarial classifier on real data
    vendored with advgame (abstention on vehicle, the ordinal loss on red-wine quality), scored
    by the loss it optimises, next to logistic regression with the Bayes rule for that loss
    (:mod:`advgame.demo`).
``advgame bench oracle``
    Time per row of closed forms, vertex tables, the LP oracle (bulk and per row) and cvxpy
    (:mod:`advgame.benchmarks.oracle`).
``advgame bench train``
    Fit time and accuracy of AdversarialClassifier next to scikit-learn
    (:mod:`advgame.benchmarks.train`).
``advgame bench kernel``
    Fit time and accuracy of the certified exact-kernel AdversarialClassifier next to ``SVC``
    with the same Gaussian kernel (:mod:`advgame.benchmarks.kernel`).
``advgame bench minimax``
    Farnia and Tse's (2016) high-dimensional experiment and breast cancer: mmSVM, mmBC, mmRBC next
    to LinearSVC and logistic regression (:mod:`advgame.reproductions.farnia_tse2016`).
``advgame bench graph``
    Time per example of the graph game (Fathony et al. 2018b) by the LP, dual decomposition and
    brute force on chains, a tree and a grid, with DD's certification rate
    (:mod:`advgame.benchmarks.graph`).
``advgame bench graphical``
    Fathony et al.'s (2018b) Table 1 protocol on synthetic ordinal sequences: the adversarial
    graphical model next to a CRF and a structured SVM under six node losses
    (:mod:`advgame.reproductions.fathony2018b`).
``advgame bench auto``
    CPU time of every exact or certified solver (compile, smoothing, L-BFGS certified) on the
    classifier's agreement matrix, norm balls and kernels, against the one ``solver='auto'``
    picks (:mod:`advgame.benchmarks.auto`; the report is docs/results/auto.md).
``advgame bench defaults``
    The default ``strength`` against ``LogisticRegression()``'s default on every vendored and
    bundled multiclass and ordinal set (zero-one, abstain, ordinal losses), and the speed of the
    default fit and of ``AdversarialClassifierCV`` (:mod:`advgame.benchmarks.defaults`; the
    report is docs/results/defaults.md).
``advgame bench all`` (``--quick``, ``--out DIR``)
    Every benchmark in turn; with ``--out``, ``NAME.json`` and ``NAME.md`` for each in ``DIR``.
``advgame reproduce PAPER`` (or ``all``)
    The experiment tables of the five papers advgame implements (docs/references.md), with the
    published numbers beside ours: ``fathony2018a``, ``farnia_tse2016``, ``fathony2018b``,
    ``wang_qiao2022`` and ``blondel2019``, each the module of :mod:`advgame.reproductions` that
    reproduces the paper (:data:`REPRODUCTIONS`, :data:`RUNS`).
    ``reproduce fathony2018a`` also takes ``--n-jobs J`` (parallel joblib jobs, the tables
    unchanged), ``--subsampled`` (the earlier runs' subsampled rows and kernel principal
    components; by default every row and exact Gaussian kernels), ``--gaussian {exact,kpca}``
    and ``--models`` (the columns to run).
``advgame bench prediction-sets``
    Wang and Qiao's (2022) Tables 1-3 (Examples 1-2, optdigits in place of zipcode): set-valued
    classifiers with split-conformal thresholds (KDE, OCSVM, BSVM, GPS, GPSKFS) beside the published
    numbers, and the time of one class's dual QP and of a GPS fit
    (:mod:`advgame.reproductions.wang_qiao2022`).
``advgame compare --data FILE.csv --target COLUMN --loss LOSS`` (or ``--matrix FILE.csv``)
    Your data by the evaluation protocol of Fathony et al., "Consistent Robust Adversarial
    Prediction for General Multiclass Classification" (arXiv:1812.07526, 2018): the
    adversarial model against the baselines that paper compares it with, cross-validated
    regularisation, seeded stratified splits
    (:func:`advgame.reproductions.fathony2018a.compare.compare`).  ``--alpha`` sets the cost of
    abstaining of ``--loss abstain``; ``--matrix`` scores the models by your own loss matrix
    (the adversarial model of it against logistic regression deciding by its Bayes rule).
``advgame --version``
    Prints ``advgame VERSION``.

Labels and actions are numbered from 0, as in the printed loss matrix.  Every file argument
(``--matrix``, ``--data``, ``--out``) must be a regular file (or, for ``--out DIR``, a
directory): devices such as ``/dev/zero``, FIFOs and sockets are refused with :func:`os.stat`
before anything is opened.  Size arguments are capped (:data:`VERIFY_MAX_K`,
:data:`VERIFY_MAX_ROWS`, :data:`VERIFY_MAX_ENTRIES`, :data:`MATRIX_MAX_ACTIONS`,
:data:`COMPARE_MAX_JOBS` and the limits of
:func:`~advgame.reproductions.fathony2018a.compare.compare`) so that
a run stays under about 1 GiB of memory.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import numpy as np

# Only light modules at the top (numpy, no scipy): ``advgame --help`` and the argument checks
# run before scikit-learn, cvxpy, numba or scipy load; each subcommand imports what it runs.
from . import __version__, losses
from ._files import check_regular_file
from .exceptions import SizeLimitError
from .losses import LossMatrix

__all__ = ["main"]

#: Largest number of labels ``explain`` accepts for a built-in loss (it prints every constraint).
EXPLAIN_MAX_K = 30
#: Most rows (constraints, extreme points) printed in one listing.
MAX_LISTED = 40
#: Rows of random potentials in the agreement check of ``explain`` and ``demo``.
CHECK_ROWS = 200
#: Most labels ``verify`` accepts (``--k`` or the columns of ``--matrix``): k = 1,000 takes about
#: 15 s and 350 MB, k = 2,000 a minute and 600 MB, k = 4,096 (MAX_LABELS) over 5 minutes.
VERIFY_MAX_K = 1_000
#: Largest ``verify --n`` (rows of random potentials; each is one LP).
VERIFY_MAX_ROWS = 100_000
#: Largest ``--n`` times the number of labels in ``verify`` (potentials and solutions of every
#: method stay a few tens of MB).
VERIFY_MAX_ENTRIES = 2_000_000
#: Most actions (rows) of a ``--matrix`` file.
MATRIX_MAX_ACTIONS = 2_000
#: Most parallel jobs of ``compare`` (each worker is a process of about 200 MB).
COMPARE_MAX_JOBS = 4
#: Most parallel jobs of ``reproduce fathony2018a --n-jobs`` (a full-data Gaussian worker holds
#: Gram matrices of up to 4,504 x 4,504 rows, a few hundred MB; larger clusters go through
#: ``joblib.parallel_config`` and :func:`advgame.reproductions.fathony2018a.run`).
REPRODUCE_MAX_JOBS = 16

#: The built-in losses of ``explain`` and ``verify``, in the API's spelling (the hyphenated
#: ``zero-one`` is accepted too, see :func:`_loss_name`).
LOSSES = {
    "zero_one": losses.zero_one,
    "ordinal": losses.ordinal,
    "squared": losses.squared,
    "abstain": losses.abstain,
}

#: ``advgame bench NAME``: (name, summary, what ``--quick`` does); the module of each is in
#: :data:`RUNS` (four are reproductions, named also by :data:`REPRODUCTIONS`).
BENCHMARKS = (
    ("oracle", "closed forms vs vertex tables vs LPs", "fewer rows and repeats"),
    ("train", "AdversarialClassifier vs scikit-learn", "2,000-row subsamples (for tests)"),
    ("kernel", "certified exact-kernel AdversarialClassifier vs SVC", "300-row subsamples"),
    (
        "minimax",
        "Farnia and Tse's (2016) experiments (mmSVM, mmBC, mmRBC)",
        "1 run, coarse grid (for tests)",
    ),
    ("graph", "graph games: LP vs dual decomposition vs brute", "2 examples, small k (for tests)"),
    (
        "graphical",
        "Fathony et al.'s (2018b) Table 1 protocol: AGM vs CRF vs SSVM",
        "30 sequences, 2 splits, one strength",
    ),
    ("projections", "polytope projections vs cvxpy vs Frank-Wolfe", "small sizes, few points"),
    (
        "projection-losses",
        "Blondel's (2019) Tables 1, 2, 4, 6, 7 (label ranking, multilabel, ordinal)",
        "1 split, 2 alphas, iris / 300 yeast rows / machine CPU",
    ),
    (
        "prediction-sets",
        "Wang and Qiao's (2022) Tables 1-3 (KDE, OCSVM, BSVM, GPS, GPSKFS) and QP / fit timings",
        "2 replications, small samples, small QP",
    ),
    (
        "compile",
        "PredictionGame.compile: build time per nonzero, peak memory, HiGHS vs closed forms",
        "n = 1,000 and 10,000, small solves",
    ),
    (
        "auto",
        "solver='auto' vs the fastest certified solver (compile, smoothing, lbfgs) per problem",
        "iris, 2 losses x 3 sets, one ball, small kernels, one run each",
    ),
    (
        "defaults",
        "default strength vs LogisticRegression(); AdversarialClassifierCV vs LogisticRegressionCV",
        "iris and wine, 1 split; speed on iris; best strength in hindsight on iris",
    ),
)

#: ``advgame reproduce PAPER``: (the name of its run in :data:`RUNS` (``advgame bench NAME``
#: when it differs from the paper's, and the files ``reproduce all --out DIR`` writes), summary
#: naming the paper).  The subcommand is the paper's module name, e.g. ``fathony2018a``.
REPRODUCTIONS = (
    (
        "fathony2018a",
        "Fathony et al.'s (2018a) Tables 2, 4, 5 and 6 (zero-one, ordinal, abstain; linear, Gaussian)",
    ),
    ("minimax", "Farnia and Tse's (2016) minimax SVM / Brier / robust experiments"),
    ("graphical", "Fathony et al.'s (2018b) Tables 1-2 (adversarial graphical models)"),
    ("prediction-sets", "Wang and Qiao's (2022) Tables 1-3 (generalised prediction sets)"),
    ("projection-losses", "Blondel's (2019) Tables 1, 2, 4, 6, 7 (projection losses)"),
)

#: ``advgame reproduce PAPER --part NAME``: the parts of the full runs that take over an hour,
#: by run (the names of the module's ``PARTS``, kept here so that building the parser imports no
#: reproduction; a test checks them), with what they are.
REPRODUCTION_PARTS = {
    "fathony2018a": (
        ("multiclass", "ordinal", "added"),
        "the multiclass Tables 2 and 6, the ordinal Tables 4 and 5, or every table on the data "
        "sets vendored later (glass, boston; on a stream of their own)",
    ),
    "graphical": (
        ("log-linear", "misspecified", "ocr-hamming", "ocr-cost-sensitive"),
        "Table 1 on the correctly specified or the misspecified synthetic sequences, or the OCR "
        "words under the Hamming or the cost-sensitive loss",
    ),
    "projection-losses": (
        ("tables-1-2", "table-3-small", "table-3-large", "glass-vowel", "multilabel-ordinal"),
        "Tables 1-2 on four sets, Table 3 on iris and wine or on vehicle and authorship, Tables "
        "1-3 on glass and vowel, or the multilabel and ordinal tables",
    ),
}

#: The module (relative to advgame) whose ``run(quick, out, print_fn)`` does each run: the timing
#: benchmarks, then the papers' reproductions, each module named after its paper.
RUNS = {
    "oracle": ".benchmarks.oracle",
    "train": ".benchmarks.train",
    "kernel": ".benchmarks.kernel",
    "graph": ".benchmarks.graph",
    "projections": ".benchmarks.projections",
    "compile": ".benchmarks.compile",
    "auto": ".benchmarks.auto",
    "defaults": ".benchmarks.defaults",
    "fathony2018a": ".reproductions.fathony2018a",
    "minimax": ".reproductions.farnia_tse2016",
    "graphical": ".reproductions.fathony2018b",
    "prediction-sets": ".reproductions.wang_qiao2022",
    "projection-losses": ".reproductions.blondel2019",
}

DEMO_GAMES = (
    ("zero-one loss, k=4", lambda: losses.zero_one(4), (1.0, 0.8, -0.5, 0.2)),
    ("ordinal (absolute) loss, k=5", lambda: losses.ordinal(5), (0.2, 1.0, 1.3, 0.4, -1.0)),
    ("squared ordinal loss, k=5", lambda: losses.squared(5), (0.2, 1.0, 1.3, 0.4, -1.0)),
    ("abstain loss, k=3, alpha=0.3", lambda: losses.abstain(3, alpha=0.3), (1.0, 0.8, -0.5)),
)


# ------------------------------------------------------------------------------ number formats
def _short(x):
    """Six significant digits (no ``-0``): for computed solutions."""
    return f"{float(x) + 0.0:.6g}"


def _fraction(x):
    """``x`` as ``'p/q'`` when a fraction with denominator <= 1e6 matches it to 1e-12, else None."""
    fraction = Fraction(float(x)).limit_denominator(10**6)
    if abs(float(fraction) - x) <= 1e-12 * max(1.0, abs(x)):
        return str(fraction)
    return None


def _exact(x):
    """An exact fraction where ``x`` is one (``'1/2'``, ``'0'``), else a float."""
    return _fraction(x) or f"{float(x):.12g}"


def _number(x):
    """Compact number: a short decimal if exact (``'0.3'``), else a fraction, else a float."""
    short = _short(x)
    if abs(float(short) - x) <= 1e-12 * max(1.0, abs(x)):
        return short
    return _fraction(x) or short


def _vector(values):
    return "(" + ", ".join(_short(x) for x in values) + ")"


def _capped(lines, limit=MAX_LISTED):
    """The first ``limit`` lines, then ``'... and N more'``."""
    if len(lines) <= limit:
        return list(lines)
    return list(lines[:limit]) + [f"... and {len(lines) - limit} more"]


def _section(title, lines):
    print(f"\n== {title} ==")
    for line in lines:
        print(line)


# ----------------------------------------------------------------------------------- the loss
def _regular_file(path, option):
    """Refuse ``path`` unless it is an existing regular file, before it is opened."""
    try:
        check_regular_file(path, f"{option} FILE")
    except OSError as exc:
        raise ValueError(f"{option}: {exc.strerror or exc}: {path}") from None


def _check_out(path, directory=False):
    """``--out``: refuse, before any work, a path whose result could not be written."""
    if path is None:
        return
    target = Path(path)
    if directory:
        if target.exists() and not target.is_dir():
            raise ValueError(f"--out DIR: {path} exists and is not a directory.")
        return
    if target.suffix not in (".json", ".md"):
        raise ValueError(f"--out must end with .json or .md; got {str(path)!r}.")
    if os.path.lexists(target):
        _regular_file(target, "--out")
    elif not target.parent.is_dir():
        raise ValueError(f"--out {path}: the directory {str(target.parent)!r} does not exist.")


def _read_matrix(path):
    """The :class:`LossMatrix` of a ``--matrix`` file (a regular file of numbers; at most
    :data:`MATRIX_MAX_ACTIONS` rows)."""
    _regular_file(path, "--matrix")
    L = LossMatrix.from_csv(path)
    if L.n_actions > MATRIX_MAX_ACTIONS:
        raise ValueError(
            f"--matrix {path}: {L.n_actions:,} actions (rows), over the limit of "
            f"{MATRIX_MAX_ACTIONS:,} (MATRIX_MAX_ACTIONS)."
        )
    return L


def _loss_from_args(args, max_k=None, command="explain"):
    """Build the LossMatrix named on the command line (a built-in loss or ``--matrix``)."""
    if args.matrix is not None:
        if any(x is not None for x in (args.loss, args.k, args.weight, args.alpha)):
            raise ValueError(
                "--matrix replaces the loss name, --k, --weight and --alpha; give one or the other."
            )
        L = _read_matrix(args.matrix)
        if max_k is not None and L.n_labels > max_k:
            raise ValueError(
                f"--matrix {args.matrix}: {L.n_labels:,} labels (columns), over the {max_k:,} that "
                f"'advgame {command}' accepts"
                + (
                    " (it prints every constraint and extreme point); use 'advgame verify'."
                    if command == "explain"
                    else " (VERIFY_MAX_K)."
                )
            )
        return L
    if args.loss is None:
        raise ValueError(f"give a loss ({', '.join(LOSSES)}) with --k K, or --matrix FILE.csv.")
    if args.k is None:
        raise ValueError(f"the {args.loss} loss needs --k (the number of labels).")
    if max_k is not None and args.k > max_k and command == "explain":
        raise ValueError(
            f"explain prints every constraint and extreme point, so it is limited to k <= {max_k}; "
            f"got k={args.k}. Use 'advgame verify' for larger k, or --matrix for a custom matrix."
        )
    # beyond MAX_LABELS the loss constructor refuses k itself, before allocating anything
    if max_k is not None and max_k < args.k <= losses.MAX_LABELS:
        raise ValueError(
            f"--k must be at most {max_k:,} for 'advgame {command}' (VERIFY_MAX_K: k = 2,000 "
            f"already takes a minute and 600 MB); got --k {args.k:,}."
        )
    weight = 1.0 if args.weight is None else args.weight
    if args.loss == "abstain":
        alpha = 0.5 if args.alpha is None else args.alpha
        return losses.abstain(args.k, alpha=alpha, weight=weight)
    if args.alpha is not None:
        raise ValueError("--alpha (the abstention penalty) only applies to the abstain loss.")
    return LOSSES[args.loss](args.k, weight=weight)


def _parse_potentials(text, k):
    """Parse ``'1,0.5,-2'`` into a vector of ``k`` potentials."""
    try:
        f = np.array([float(x) for x in text.split(",")])
    except ValueError:
        raise ValueError(
            f"--potentials must be comma-separated numbers such as '1,0.5,-2'; got {text!r}."
        ) from None
    if f.size != k:
        raise ValueError(f"--potentials has {f.size} numbers; the loss has {k} labels.")
    return f


# ----------------------------------------------------------------------------- explanations
def _linear(coefficients, variable):
    return " + ".join(f"{_number(c)} {variable}{i}" for i, c in enumerate(coefficients))


def _constraint_block(rows, tail):
    """``subject to`` followed by the rows (capped) and the simplex constraint, aligned."""
    indent = " " * len("subject to  ")
    rows = _capped(rows)
    return [f"subject to  {rows[0]}"] + [indent + r for r in rows[1:]] + [indent + tail]


def primal_lines(L):
    """The game LP of Fathony et al. (2018a), Eq. 4, row by row with the actual numbers."""
    M = L.matrix
    k = L.n_labels
    rows = [f"{_linear(M[a], 'q')} - v >= 0   (action {L.actions[a]})" for a in range(L.n_actions)]
    simplex = " + ".join(f"q{y}" for y in range(k)) + " = 1,  q >= 0"
    return [
        "the adversary picks a label distribution q; v is the predictor's best-response loss",
        "maximise    v + " + " + ".join(f"f{y} q{y}" for y in range(k)),
        *_constraint_block(rows, simplex),
    ]


def dual_lines(L):
    """The predictor's LP (Fathony et al. 2018a, Eq. 10), the dual of Eq. 4, row by row."""
    M = L.matrix
    rows = [
        f"{_linear(M[:, y], 'p')} + f{y} <= u   (label {L.labels[y]})" for y in range(L.n_labels)
    ]
    simplex = " + ".join(f"p{a}" for a in range(L.n_actions)) + " = 1,  p >= 0"
    return [
        "for each label y: sum_a L[a, y] p_a + f_y <= u; the optimal p is the predictor p* (Eq. 9)",
        "and, by LP duality, the optimal u is the game value",
        "minimise    u",
        *_constraint_block(rows, simplex),
    ]


def vertex_lines(game):
    """The extreme points ``(q, v)`` as exact fractions, their count and the theorem's count."""
    from .explain import theorem_vertex_count

    predicted = theorem_vertex_count(game.loss)
    expected = (
        ""
        if predicted is None
        else f"Fathony et al. (2018a) predict {predicted[1]} = {predicted[0]:,}"
    )
    try:
        Q, v = game.extreme_points()
    except SizeLimitError as exc:
        return [f"not enumerated: {exc}"] + ([expected] if expected else [])
    cells = [[_exact(x) for x in q] + [_exact(t)] for q, t in zip(Q, v)]
    width = max(len(c) for row in cells for c in row)
    rows = [
        "q = (" + ", ".join(c.rjust(width) for c in row[:-1]) + f")   v = {row[-1]}"
        for row in cells
    ]
    total = f"total: {len(Q):,} extreme points"
    if not expected:
        return _capped(rows) + [f"{total} (enumerated from the matrix by bases, Proposition 4)"]
    return _capped(rows) + [f"{total}; {expected}"]


def solution_lines(game, f):
    """Value, q*, p*, predicted action and surrogate losses for one potential vector."""
    L = game.loss
    k = game.n_labels
    surrogate = game.surrogate(np.tile(f, (k, 1)), np.arange(k))
    return [
        f"potentials f            = {_vector(f)}",
        f"value(f)                = {_short(game.value(f))}",
        f"adversary q* (labels)   = {_vector(game.adversary(f))}",
        f"predictor p* (actions)  = {_vector(game.predictor(f))}   actions {list(L.actions)}",
        f"predicted action        = {L.actions[game.predict(f)]}   (argmax p*)",
        "surrogate AL(f, y)      = "
        + ", ".join(f"y={y}: {_short(s)}" for y, s in zip(L.labels, surrogate)),
    ]


def verify_summary(report):
    """One line: ok or not, the largest error, microseconds per row per method."""
    status = "ok" if report.ok() else "NOT OK"
    speed = ", ".join(f"{c.method} {c.per_row_us:.1f}" for c in report.checks)
    return (
        f"verify ({report.n_rows} rows): {status}, max error {report.max_error:.1e}; "
        f"us/row (value + q* + p*): {speed}"
    )


# ----------------------------------------------------------------------------- subcommands
def cmd_explain(args):
    """``advgame explain``: print the game of one loss matrix, step by step."""
    from . import explain
    from .declaration import PredictionGame
    from .game import Game
    from .uncertainty import as_uncertainty
    from .verify import verify_game

    L = _loss_from_args(args, max_k=EXPLAIN_MAX_K)
    f = None if args.potentials is None else _parse_potentials(args.potentials, L.n_labels)
    game = Game(L)
    _section("Loss matrix L[a, y] (rows: actions a, columns: labels y)", [repr(L)])
    _section("Structure", explain.structure_lines(game))
    _section("The game LP (Fathony et al. 2018a, Eq. 4)", primal_lines(L))
    _section("Its dual: the predictor's LP (Fathony et al. 2018a, Eq. 10)", dual_lines(L))
    _section("Extreme points of {(q, v): L q >= v 1, q in simplex}", vertex_lines(game))
    _section("Closed form", explain.closed_form_lines(L, _number))
    _section("Agreement check", [str(verify_game(game, n=CHECK_ROWS))])
    if f is not None:
        _section("One potential vector (method='auto')", solution_lines(game, f))
    declared = PredictionGame(
        L, features=args.features, uncertainty=as_uncertainty(args.uncertainty, args.strength)
    )
    _section("The declared learning game (PredictionGame.explain)", [declared.explain()])
    if args.latex:
        _section("Its learning programs in LaTeX (PredictionGame.latex)", [declared.latex(L)])
    return 0


def _user_function(spec, option):
    """The callable named ``module:attr`` (``module`` importable from the current directory, or
    a ``.py`` file)."""
    import importlib
    import importlib.util

    module_name, _, attr = spec.rpartition(":")
    if not module_name or not attr:
        raise ValueError(f"{option} must be module:attr (or path/to/file.py:attr); got {spec!r}.")
    if module_name.endswith(".py"):
        _regular_file(module_name, option)
        spec_ = importlib.util.spec_from_file_location(Path(module_name).stem, module_name)
        module = importlib.util.module_from_spec(spec_)
        spec_.loader.exec_module(module)
    else:
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ValueError(f"{option} {spec}: cannot import {module_name!r} ({exc}).") from None
    function = module
    for part in attr.split("."):
        function = getattr(function, part, None)
        if function is None:
            raise ValueError(f"{option} {spec}: {module_name!r} has no attribute {attr!r}.")
    if not callable(function):
        raise ValueError(f"{option} {spec}: {attr!r} is not callable.")
    return function


def _verify_closed_form(args, L):
    """``advgame verify --function``: the user's closed form against the LP."""
    from .verify import verify_closed_form

    functions = {
        key: None if spec is None else _user_function(spec, f"--{key.replace('value', 'function')}")
        for key, spec in (
            ("value", args.function),
            ("adversary", args.adversary),
            ("predictor", args.predictor),
        )
    }
    report = verify_closed_form(L, n=args.n or 2000, seed=args.seed, **functions)
    print(report)
    return 0 if report.passed else 1


def cmd_verify(args):
    """``advgame verify``: every method against the LP, or with ``--function`` the user's closed
    form; exit code 1 if any disagrees."""
    from .verify import VERIFY_RTOL, verify_game

    if args.function is None and (args.adversary or args.predictor):
        raise ValueError("--adversary and --predictor check a closed form: give --function too.")
    L = _loss_from_args(args, max_k=VERIFY_MAX_K, command="verify")
    if args.function is not None:
        return _verify_closed_form(args, L)
    args.n = args.n or 200
    if args.n * L.n_labels > VERIFY_MAX_ENTRIES:
        raise ValueError(
            f"--n {args.n:,} rows x {L.n_labels:,} labels = {args.n * L.n_labels:,} potentials, "
            f"over the limit of {VERIFY_MAX_ENTRIES:,} (VERIFY_MAX_ENTRIES); use --n <= "
            f"{VERIFY_MAX_ENTRIES // L.n_labels:,} for {L.n_labels:,} labels."
        )
    report = verify_game(L, n=args.n, seed=args.seed)
    print(report)
    if report.ok():
        print(f"ok: every method agrees with the LP and its certificates within {VERIFY_RTOL:g}")
        return 0
    print(f"FAILED: a method is off by {report.max_error:.1e} (tolerance {VERIFY_RTOL:g})")
    return 1


def cmd_demo(args):
    """``advgame demo``: a short tour of four games on fixed potentials."""
    print(
        "advgame solves the game  value(f) = max_q min_p p'Lq + f'q  (Fathony et al. 2018a, Eq. 4)\n"
        "for a loss matrix L and potentials f (one score per label). The adversary's q* is a\n"
        "subgradient of the value (what learning needs); the predictor's p* is the minimax\n"
        "prediction.",
        flush=True,  # before the imports and the first compile of the kernels
    )
    from . import explain
    from .game import Game
    from .verify import verify_game

    for title, make_loss, f in DEMO_GAMES:
        L = make_loss()
        game = Game(L)
        _section(title, explain.structure_lines(game)[:1] + explain.closed_form_lines(L, _number))
        for line in solution_lines(game, np.array(f)):
            print(line)
        print(verify_summary(verify_game(game, n=CHECK_ROWS)))
    _section("Training: the loss you declare, against scikit-learn baselines", [])
    from .demo import training_report  # scikit-learn: about a second to import

    training_report()
    print("\nNext: 'advgame explain zero_one --k 3' shows the LP, its dual and the extreme points.")
    return 0


def _benchmark(name):
    """The module of the run ``name`` (:data:`RUNS`; its ``run(quick, out, print_fn)`` does the
    work)."""
    from importlib import import_module

    return import_module(RUNS[name], __package__)


def _paper(name):
    """The paper (its module's name, e.g. ``fathony2018a``) that the run ``name`` reproduces."""
    return RUNS[name].rpartition(".")[2]


def run_all(names, quick, out_dir, progress=True):
    """Run the benchmarks ``names`` in turn, numbered progress on stderr; with ``out_dir``, write
    ``NAME.json`` (records) and ``NAME.md`` (the printed report) there.  Stops at the first
    benchmark that fails (each checks its own answers).  ``progress=False`` prints only the
    reports."""
    from pathlib import Path

    from .benchmarks.report import write_results

    if out_dir is not None:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
    for number, name in enumerate(names, 1):
        if progress:
            print(f"[{number}/{len(names)}] advgame bench {name}", file=sys.stderr, flush=True)
        reports = []

        def show(report, reports=reports):
            print(report)
            reports.append(report)

        out = None if out_dir is None else Path(out_dir) / f"{name}.json"
        _benchmark(name).run(quick=quick, out=out, print_fn=show, progress=progress)
        if out_dir is not None:
            write_results(Path(out_dir) / f"{name}.md", None, None, reports[-1])
    return 0


def cmd_bench(args):
    """``advgame bench NAME`` (:data:`BENCHMARKS`) or ``advgame bench all``."""
    _check_out(args.out, directory=args.benchmark == "all")
    if args.benchmark == "all":
        return run_all([name for name, _, _ in BENCHMARKS], args.quick, args.out, args.progress)
    _benchmark(args.benchmark).run(quick=args.quick, out=args.out, progress=args.progress)
    return 0


def cmd_reproduce(args):
    """``advgame reproduce PAPER`` (:data:`REPRODUCTIONS`) or ``advgame reproduce all``."""
    _check_out(args.out, directory=args.paper == "all")
    if args.paper == "all":
        return run_all([bench for bench, _ in REPRODUCTIONS], args.quick, args.out, args.progress)
    bench = next(b for b, _ in REPRODUCTIONS if args.paper == _paper(b))
    options = {}
    if getattr(args, "n_jobs", None) is not None:
        options["n_jobs"] = args.n_jobs
    if getattr(args, "part", None) is not None:
        options["parts"] = (args.part,)
    models = getattr(args, "models", None)
    if getattr(args, "gaussian", None) is not None or getattr(args, "subsampled", False) or models:
        from .reproductions.fathony2018a.settings import FULL, QUICK, SUBSAMPLED

        settings = QUICK if args.quick else SUBSAMPLED if args.subsampled else FULL
        if args.gaussian is not None:
            settings = replace(settings, gaussian=args.gaussian)
        if models:
            settings = replace(settings, models=tuple(m for m in models.split(",") if m))
        options["settings"] = settings
    _benchmark(bench).run(quick=args.quick, out=args.out, progress=args.progress, **options)
    return 0


def cmd_compare(args):
    """``advgame compare``: the adversarial model against its baselines on the user's CSV."""
    from .datasets import load_csv
    from .reproductions.fathony2018a.compare import compare

    _regular_file(args.data, "--data")
    if args.matrix is not None and args.loss is not None:
        raise ValueError("--matrix replaces --loss (the models are scored by your matrix).")
    loss = _read_matrix(args.matrix) if args.matrix is not None else args.loss or "zero_one"
    if args.alpha is not None and loss != "abstain":
        raise ValueError("--alpha (the cost of abstaining) needs --loss abstain.")
    if args.bins is not None and loss != "ordinal":
        raise ValueError(
            "--bins (equal-frequency classes of a numeric target) needs --loss ordinal."
        )
    X, y = load_csv(args.data, args.target, delimiter=args.delimiter)
    name = Path(args.data).name
    print(
        f"advgame compare: read {name}: {X.shape[0]:,} rows, {X.shape[1]:,} "
        f"feature{'s' if X.shape[1] > 1 else ''}, target "
        f"{args.target!r}",
        file=sys.stderr,
        flush=True,
    )
    _, report = compare(
        X,
        y,
        loss,
        alpha=args.alpha,
        splits=args.splits,
        test_size=args.test_size,
        random_state=args.random_state,
        n_jobs=args.n_jobs,
        kernel=args.kernel,
        bins=args.bins,
        max_rows=args.max_rows,
        name=name,
    )
    print(report)
    return 0


# --------------------------------------------------------------------------------- parsing
def _integer(text):
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer; got {text!r}") from None


def _positive_int(text):
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer; got {text}")
    return value


def _seed(text):
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer; got {text}")
    return value


def _bounded(low, high, name):
    """An argparse type: an integer in ``[low, high]``; ``name`` is the cap's constant."""

    def parse(text):
        value = _integer(text)
        if value < low:
            wanted = "a positive integer" if low == 1 else f"an integer >= {low}"
            raise argparse.ArgumentTypeError(f"must be {wanted}; got {text}")
        if value > high:
            raise argparse.ArgumentTypeError(
                f"must be at most {high:,} (the cap {name}); got {value:,}"
            )
        return value

    return parse


def _fraction_in_unit_interval(text):
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(
            f"must be a fraction strictly between 0 and 1, e.g. 0.3; got {text!r}"
        )
    return value


def _loss_name(text):
    """A loss name in the API's spelling: ``zero-one`` and ``zero_one`` both name ``zero_one``."""
    return text.replace("-", "_")


def _delimiter(text):
    text = {"tab": "\t", "\\t": "\t"}.get(text, text)
    if len(text) != 1:
        raise argparse.ArgumentTypeError(
            f"must be one character such as ',' or ';' (or 'tab'); got {text!r}"
        )
    return text


class _UsageError(Exception):
    """A command-line usage error (reported on one line, exit code 2)."""


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors become :class:`_UsageError` (so that ``main``
    prints one line instead of argparse's usage block); ``--help`` still prints and exits 0."""

    def error(self, message):
        raise _UsageError(f"{message} (see '{self.prog} --help')")


def _loss_arguments():
    """The arguments naming a loss, shared by ``explain`` and ``verify``."""
    parent = _Parser(add_help=False)
    parent.add_argument(
        "loss",
        nargs="?",
        type=_loss_name,
        choices=list(LOSSES),
        help="a built-in loss (zero-one is accepted for zero_one)",
    )
    parent.add_argument("--k", type=int, help="number of labels")
    parent.add_argument("--weight", type=float, help="scale c of the loss (default 1)")
    parent.add_argument(
        "--alpha", type=float, help="abstention penalty, relative to the weight (default 0.5)"
    )
    parent.add_argument("--matrix", metavar="FILE.csv", help="a custom loss matrix (numbers only)")
    return parent


def _run_options(command, run, quick="each in its quick mode", all_=False):
    """``--quick``, ``--out`` (``PATH`` of a benchmark, ``DIR`` of a run of several) and
    ``--no-progress``."""
    command.add_argument("--quick", action="store_true", help=quick)
    command.add_argument(
        "--no-progress",
        dest="progress",
        action="store_false",
        help="print the report only: no progress lines or bars on stderr",
    )
    if all_:
        command.add_argument("--out", metavar="DIR", help="write NAME.json and NAME.md into DIR")
    else:
        command.add_argument("--out", metavar="PATH", help="also write PATH (.json or .md)")
    command.set_defaults(run=run)


class _Formatter(argparse.HelpFormatter):
    """Help with each command name and its one-line summary on the same line.

    argparse measures the names of subcommands without their extra indent, so a name as long as
    ``reproduce`` got its summary pushed to the next line; this counts the indent.
    """

    def add_argument(self, action):
        super().add_argument(action)
        if action.help is not argparse.SUPPRESS:
            for subaction in self._iter_indented_subactions(action):
                length = len(self._format_action_invocation(subaction)) + self._current_indent
                self._action_max_length = max(self._action_max_length, length)


def _formatter(prog):
    return _Formatter(prog, max_help_position=28)


def build_parser():
    """The argparse parser of the ``advgame`` command."""
    parser = _Parser(
        prog="advgame",
        description="Robust prediction as minimax games: explain, verify, bench, reproduce, "
        "compare.",
        formatter_class=_formatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"advgame {__version__}", help="print the version"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    loss = _loss_arguments()

    explain = commands.add_parser(
        "explain",
        parents=[loss],
        help="walk through one game: LP, dual, extreme points, closed form",
        formatter_class=_formatter,
    )
    explain.add_argument(
        "--potentials",
        metavar="F",
        help="also solve for one potential vector, e.g. --potentials=1,0.5,-2",
    )
    explain.add_argument(
        "--features",
        choices=["multiclass", "thresholded", "rbf", "poly", "linear"],
        default="multiclass",
        help="the declared feature map (default multiclass)",
    )
    explain.add_argument(
        "--uncertainty",
        choices=["exact", "soft", "l1", "l2", "linf", "group"],
        default="exact",
        help="the declared uncertainty set (default exact)",
    )
    explain.add_argument(
        "--strength",
        type=float,
        help="its radius, or lam for soft (default 0.01)",
    )
    explain.add_argument(
        "--latex", action="store_true", help="also print the learning programs in LaTeX"
    )
    explain.set_defaults(run=cmd_explain)

    verify = commands.add_parser(
        "verify",
        parents=[loss],
        help="check every method against the LP and its certificates",
        formatter_class=_formatter,
    )
    verify.add_argument(
        "--n",
        type=_bounded(1, VERIFY_MAX_ROWS, "VERIFY_MAX_ROWS"),
        default=None,
        help=f"random rows (default 200, 2,000 with --function; at most {VERIFY_MAX_ROWS:,}, and "
        f"--n times the labels at most {VERIFY_MAX_ENTRIES:,}); --k is at most {VERIFY_MAX_K:,}",
    )
    verify.add_argument("--seed", type=_seed, default=0, help="seed of the random potentials")
    verify.add_argument(
        "--function",
        metavar="MODULE:ATTR",
        help="check your closed form value(F) -> (n,) instead (verify_closed_form); MODULE is "
        "imported from the current directory, or is a path/to/file.py",
    )
    verify.add_argument(
        "--adversary", metavar="MODULE:ATTR", help="with --function: your q*(F) -> (n, k)"
    )
    verify.add_argument(
        "--predictor", metavar="MODULE:ATTR", help="with --function: your p*(F) -> (n, l)"
    )
    verify.set_defaults(run=cmd_verify)

    demo = commands.add_parser("demo", help="a short tour: four games, then trained classifiers")
    demo.set_defaults(run=cmd_demo)

    bench = commands.add_parser(
        "bench", help="benchmarks: speed and accuracy against peers", formatter_class=_formatter
    )
    benchmarks = bench.add_subparsers(dest="benchmark", required=True, metavar="BENCHMARK")
    papers = {bench: _paper(bench) for bench, _ in REPRODUCTIONS}
    for name, summary, quick in BENCHMARKS:
        also = f" (= advgame reproduce {papers[name]})" if name in papers else ""
        _run_options(benchmarks.add_parser(name, help=summary + also), cmd_bench, quick)
    _run_options(
        benchmarks.add_parser("all", help="every benchmark above, in turn"), cmd_bench, all_=True
    )

    reproduce = commands.add_parser(
        "reproduce",
        help="the papers' experiment tables, published numbers beside ours",
        # room for the papers' names on the line of their summaries
        formatter_class=lambda prog: _Formatter(prog, max_help_position=32),
    )
    papers = reproduce.add_subparsers(dest="paper", required=True, metavar="PAPER")
    for bench, summary in REPRODUCTIONS:
        also = "" if bench == _paper(bench) else f" (= advgame bench {bench})"
        command = papers.add_parser(_paper(bench), help=summary + also)
        _run_options(command, cmd_reproduce, "few splits, small grids")
        if bench == "fathony2018a":
            _fathony2018a_options(command)
        if bench in REPRODUCTION_PARTS:
            parts, what = REPRODUCTION_PARTS[bench]
            command.add_argument(
                "--part",
                choices=parts,
                default=None,
                help=f"run one part ({what}; each under an hour); default all of them",
            )
    _run_options(
        papers.add_parser("all", help="every paper above, in turn"), cmd_reproduce, all_=True
    )
    _compare_parser(commands)
    return parser


def _fathony2018a_options(command):
    """``reproduce fathony2018a``'s ``--n-jobs``, ``--gaussian``, ``--subsampled`` and
    ``--models``."""
    command.add_argument(
        "--n-jobs",
        type=_bounded(1, REPRODUCE_MAX_JOBS, "REPRODUCE_MAX_JOBS"),
        default=None,
        metavar="J",
        help="parallel joblib jobs over the data sets, splits and tuning fits (default 2, 1 with "
        f"--quick; at most {REPRODUCE_MAX_JOBS}); the tables do not depend on it",
    )
    command.add_argument(
        "--gaussian",
        choices=["exact", "kpca"],
        default=None,
        help="Gaussian tables: exact kernels or the models on the top kernel principal "
        "components (default: exact, or kpca with --subsampled)",
    )
    command.add_argument(
        "--subsampled",
        action="store_true",
        help="the earlier runs' settings: the larger data sets subsampled per split and the "
        "Gaussian tables on kernel principal components; by default every row of every data set "
        "and exact Gaussian kernels, the paper's protocol (46 minutes on 2 cores)",
    )
    command.add_argument(
        "--models",
        default=None,
        metavar="NAMES",
        help="comma-separated columns to run (e.g. AL01,ALabs,OVA,AL-th: the adversarial models "
        "and OVA, about 15 minutes); default all",
    )


def _compare_parser(commands):
    """``advgame compare``: its options, with their caps in the help."""
    from .datasets import MAX_CSV_BYTES
    from .reproductions.fathony2018a.settings import (
        COMPARE,
        COMPARE_LOSSES,
        MAX_COMPARE_ROWS,
        MAX_COMPARE_SPLITS,
        MAX_ORDINAL_CLASSES,
    )

    compare = commands.add_parser(
        "compare",
        help="the adversarial model against its baselines on your CSV file",
        formatter_class=_formatter,
        description="Evaluate the adversarial model and its baselines on your data by the "
        'protocol of Fathony et al., "Consistent Robust Adversarial Prediction for General '
        'Multiclass Classification" (arXiv:1812.07526, 2018): seeded stratified random '
        "splits, features standardised on each training part, the regularisation tuned once by "
        "cross-validation on the first split's training part; then a table of mean(sd) over the "
        "splits (stdout) and progress lines (stderr). zero_one: accuracy of AL01 against the "
        "Weston-Watkins, Crammer-Singer and Lee-Lin-Wahba SVMs and logistic regression; ordinal: "
        "mean absolute error of AL-th and AL-mc against threshold SVMs and reductions; abstain: "
        "the abstention loss (alpha = 1/2, or --alpha) of ALabs against one-vs-all and "
        "Crammer-Singer with abstention. --matrix FILE.csv: your own loss matrix L[a, y], the "
        "adversarial model of L against logistic regression deciding by the Bayes rule for L, "
        "each scored by the mean L[a, y] of the actions it plays.",
    )
    compare.add_argument(
        "--data",
        metavar="FILE.csv",
        required=True,
        help=f"your data: a header row of column names, then one row per example (numbers only "
        f"in the feature columns; a regular file of at most {MAX_CSV_BYTES // 1_000_000} MB)",
    )
    compare.add_argument(
        "--target",
        metavar="COLUMN",
        required=True,
        help="the label column: its name, or its position (0 = first, -1 = last)",
    )
    compare.add_argument(
        "--loss",
        type=_loss_name,
        choices=list(COMPARE_LOSSES),
        help="the loss the models are scored by (default zero_one)",
    )
    compare.add_argument(
        "--matrix",
        metavar="FILE.csv",
        help="your loss matrix L[a, y] instead of --loss (numbers only: one row per action, one "
        "column per label, the labels in sorted order): the adversarial model of L against "
        "logistic regression deciding by the Bayes rule for L, scored by the mean L[a, y] of the "
        "actions they play",
    )
    compare.add_argument(
        "--alpha",
        type=_fraction_in_unit_interval,
        metavar="A",
        help="--loss abstain: the cost of abstaining, in (0, 1) (default 0.5, as in the paper)",
    )
    compare.add_argument(
        "--splits",
        type=_bounded(1, MAX_COMPARE_SPLITS, "MAX_COMPARE_SPLITS"),
        default=COMPARE.splits,
        help=f"random splits (default {COMPARE.splits}, at most {MAX_COMPARE_SPLITS}; 6 or more "
        "mark the best models by a paired Wilcoxon test)",
    )
    compare.add_argument(
        "--test-size",
        type=_fraction_in_unit_interval,
        default=0.3,
        metavar="F",
        help="fraction of the rows tested in each split (default 0.3)",
    )
    compare.add_argument(
        "--random-state",
        type=_seed,
        default=0,
        metavar="S",
        help="seed of the splits and folds (default 0)",
    )
    compare.add_argument(
        "--n-jobs",
        type=_bounded(1, COMPARE_MAX_JOBS, "COMPARE_MAX_JOBS"),
        default=1,
        metavar="J",
        help=f"parallel processes (default 1, at most {COMPARE_MAX_JOBS}: about 200 MB each)",
    )
    compare.add_argument(
        "--kernel",
        choices=["linear", "rbf"],
        default="linear",
        help="linear features, or Gaussian kernel principal components (default linear)",
    )
    compare.add_argument(
        "--bins",
        type=_bounded(2, MAX_ORDINAL_CLASSES, "MAX_ORDINAL_CLASSES"),
        metavar="B",
        help="ordinal loss: cut a numeric target into B equal-frequency classes (edges from each "
        f"training part; 2 to {MAX_ORDINAL_CLASSES})",
    )
    compare.add_argument(
        "--max-rows",
        type=_bounded(1, MAX_COMPARE_ROWS, "MAX_COMPARE_ROWS"),
        metavar="N",
        help=f"subsample N rows afresh for each split (needed above {MAX_COMPARE_ROWS:,} rows, "
        f"at most {MAX_COMPARE_ROWS:,})",
    )
    compare.add_argument(
        "--delimiter",
        type=_delimiter,
        default=",",
        help="the cell separator of --data (default ','; e.g. ';' or 'tab')",
    )
    compare.set_defaults(run=cmd_compare)


def main(argv: list[str] | None = None) -> int:
    """Run the ``advgame`` command; returns the exit code (2 for bad input)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse exits on --help and --version (0)
        return exc.code or 0
    except _UsageError as exc:
        print(f"advgame: error: {exc}", file=sys.stderr)
        return 2
    try:
        return args.run(args)
    # ValueError includes SizeLimitError and NotApplicableError; OSError covers missing files.
    except (ValueError, OSError) as exc:
        message = f"{exc.strerror}: {exc.filename}" if getattr(exc, "filename", None) else exc
        print(f"advgame: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
