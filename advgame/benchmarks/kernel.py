"""``advgame bench kernel``: certified exact-kernel fits of AdversarialClassifier next to SVC.

Data: the vendored optdigits (3,934 training rows) and scikit-learn's digits (1,257), each split
70/30 (stratified, ``random_state=0``) and standardised on the training part.  Models:
``AdversarialClassifier(loss='zero_one', kernel='rbf', gamma=1/d, tol=1e-4)`` with its default
solver (:func:`advgame.solvers.fit_kernel`: the exact Gram matrix, dual coordinate ascent for
the zero-one loss, a certified gap) and ``strength`` ``lam = 1/n`` (the default until
2026-11-28), whose objective
times ``n`` is ``sum_i loss_i + ||theta||^2 / 2``: the scale of
``sklearn.svm.SVC(kernel='rbf', gamma=1/d, C=1)`` (one-vs-one hinge losses, libsvm), measured in
the same run, and the reference way, ``fit_kernel(method='newton')`` on the same Gram matrix
(one fit).  Reported: the median fit time, the time of the Gram matrix ``K(X, X)`` alone
(:meth:`advgame.features.KernelFeatures.gram`, part of our fit; SVC computes the kernel rows it
needs lazily), the Newton solver's time, test accuracies, our certified gap and epochs, and the
ratio of fit times to SVC's.  Run it with one BLAS thread (``OPENBLAS_NUM_THREADS=1``).
``--quick`` subsamples every problem to 300 rows (for tests; the numbers are not comparable).
The sizes are :data:`FULL` and :data:`QUICK` (:class:`Settings`).
"""

import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.svm import SVC

from ..features import KernelFeatures
from ..models import AdversarialClassifier
from ..solvers import fit_kernel
from .protocol import Progress, median_seconds
from .report import publish, report_header, run_meta
from .train import _split, _vendored

__all__ = ["run", "Settings", "FULL", "QUICK", "PROBLEMS"]

#: The certified relative gap asked of the adversarial model (``tol``).
TOL = 1e-4
#: SVC's ``C`` matching the classifier's ``strength = 1/n`` (see the module notes).
SVC_C = 1.0
#: The problems, in the order of the table.
PROBLEMS = ("optdigits", "digits")


@dataclass(frozen=True)
class Settings:
    """The problems run (names of :data:`PROBLEMS`), the stratified subsample of every problem
    (None: all rows) and the fits per model (the median time is reported)."""

    problems: tuple
    max_rows: int | None
    fit_repeats: int


FULL = Settings(problems=PROBLEMS, max_rows=None, fit_repeats=3)
#: ``--quick`` (for tests; seconds): every problem subsampled to 300 rows, one fit per model.
QUICK = Settings(problems=PROBLEMS, max_rows=300, fit_repeats=1)


def bench_problem(name, X, y, max_rows=None, repeats=1):
    """Fit and score both models on one problem: one record with median fit times, the Gram
    matrix time, accuracies, our certified gap and the ratio to SVC."""
    X_train, X_test, y_train, y_test = _split(X, y, max_rows)
    gamma = 1.0 / X_train.shape[1]
    record = {"problem": name, "n_train": len(y_train), "d": X.shape[1], "k": np.unique(y).size}
    record.update({"gamma": gamma, "repeats": repeats, "tol": TOL})
    ours = AdversarialClassifier(
        loss="zero_one", kernel="rbf", gamma=gamma, strength=1.0 / len(y_train), tol=TOL
    )
    svc = SVC(kernel="rbf", gamma=gamma, C=SVC_C)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an uncertified fit shows in the status column
        record["ours fit s"] = median_seconds(lambda: ours.fit(X_train, y_train), repeats)
    record["svc fit s"] = median_seconds(lambda: svc.fit(X_train, y_train), repeats)
    # our Gram matrix as the fit computes it (KernelFeatures.gram: one product, one exp)
    record["gram s"] = median_seconds(lambda: ours.feature_map_.gram(X_train), repeats)
    record["ours accuracy"] = float(np.mean(ours.predict(X_test) == y_test))
    record["svc accuracy"] = float(np.mean(svc.predict(X_test) == y_test))
    record["gap"] = float(ours.gap_)
    record["objective"] = float(ours.objective_)
    record["steps"] = int(ours.n_iter_)
    record["status"] = f"{ours.solver_}: {ours.converged_}"  # 'optimal' | 'certified' | ...
    record["stop reason"] = ours.stop_reason_
    record["svc support vectors"] = int(svc.n_support_.sum())
    record["ratio"] = record["ours fit s"] / record["svc fit s"]
    # the reference way: the Newton solver on the same Gram matrix (timed once: it is slow)
    K = KernelFeatures("rbf", gamma).fit(X_train, ours.classes_.size).gram(X_train)  # row order
    problem = (ours.game_.game(), K, np.searchsorted(ours.classes_, y_train))
    weights = np.full(len(y_train), 1.0 / len(y_train))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        newton = []
        record["newton fit s"] = median_seconds(
            lambda: newton.append(
                fit_kernel(*problem, weights, ours.uncertainty_, tol=TOL, method="newton")
            ),
            1,
        )
    record["newton gap"] = float(newton[-1].gap)
    record["newton objective"] = float(newton[-1].objective)
    return record


def format_report(records, meta):
    """The printed table: per problem, both fit times, the Gram matrix time, accuracies, our
    certified gap and the ratio."""
    lines = [
        report_header("kernel", meta, ("numpy", "scipy")),
        "",
        f"{'problem':<10} {'n':>5} {'ours s':>7} {'(K s)':>6} {'SVC s':>6} {'ratio':>6} "
        f"{'Newton s':>8} {'ours acc':>8} {'SVC acc':>8} {'gap':>8} {'steps':>5}  status",
    ]
    for r in records:
        lines.append(
            f"{r['problem']:<10} {r['n_train']:>5} {r['ours fit s']:>7.2f} {r['gram s']:>6.2f} "
            f"{r['svc fit s']:>6.2f} {r['ratio']:>5.1f}x {r['newton fit s']:>8.2f} "
            f"{r['ours accuracy']:>8.4f} "
            f"{r['svc accuracy']:>8.4f} {r['gap']:>8.1e} {r['steps']:>5}  {r['status']}"
        )
    lines += [
        "",
        f"fit s: median of {records[0]['repeats']} fit(s) on a 70/30 stratified split "
        f"(standardised), gamma = 1/d; ours: AdversarialClassifier(kernel='rbf', tol={TOL:g}), "
        f"strength 1/n; SVC: C={SVC_C:g}. K s: the Gram matrix K(X, X) alone (part of "
        "our fit). Newton s: fit_kernel(method='newton') on the same Gram matrix (the solver "
        "before dual coordinate ascent; one fit, Gram matrix excluded). gap: certified objective "
        "- optimum; steps: epochs of dual coordinate ascent.",
    ]
    return "\n".join(lines)


def run(quick=False, out=None, print_fn=print, progress=True):
    """Run the benchmark (the protocol of :mod:`advgame.benchmarks`); returns one record per
    problem."""
    settings = QUICK if quick else FULL
    meta = run_meta()
    progress = Progress("kernel", progress)
    records = []
    for i, name in enumerate(progress.bar(settings.problems, "problem"), 1):
        progress(f"{i}/{len(settings.problems)} {name}")
        X, y = _vendored(name)
        records.append(bench_problem(name, X, y, settings.max_rows, settings.fit_repeats))
    publish(format_report(records, meta), meta, records, out, print_fn)
    return records
