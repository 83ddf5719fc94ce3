"""The training part of ``advgame demo``: adversarial classifiers next to scikit-learn baselines.

Three tasks on data bundled with scikit-learn, one fixed 70/30 split each (``random_state=0``),
features standardised on the training part:

* zero-one loss on digits (10 classes): error rate;
* ordinal absolute loss on diabetes, its target cut at the quintiles into 5 ordered classes:
  mean absolute error in classes;
* abstention (alpha = 0.3) on wine: the abstain loss (0 right, 1 wrong, alpha to abstain).

Baselines are ``LogisticRegression`` and ``LinearSVC(multi_class="crammer_singer")``, which never
abstain.  The adversarial models report their game value (the training objective), which by
Fathony et al. (2018a), Theorem 2, is the worst-case expected loss the adversary can force under the
moment constraints, plus the regulariser.
"""

import time
import warnings

import numpy as np
from sklearn.datasets import load_diabetes, load_digits, load_wine
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from .models import AdversarialClassifier

__all__ = ["training_report"]

ABSTAIN = -1
ALPHA = 0.3


def _diabetes_ordinal():
    X, target = load_diabetes(return_X_y=True)
    return X, np.digitize(target, np.quantile(target, [0.2, 0.4, 0.6, 0.8]))


def _tasks():
    return [
        ("digits, zero-one loss (error rate)", load_digits(return_X_y=True), "zero_one"),
        ("diabetes quintiles, ordinal loss (MAE in classes)", _diabetes_ordinal(), "ordinal"),
        (
            f"wine, abstain loss alpha={ALPHA} (0 right, 1 wrong, alpha abstain)",
            load_wine(return_X_y=True),
            "abstain",
        ),
    ]


def _task_loss(kind, y_true, y_pred):
    if kind == "ordinal":
        return float(np.mean(np.abs(y_true - y_pred)))
    if kind == "abstain":
        return float(np.mean(np.where(y_pred == ABSTAIN, ALPHA, y_pred != y_true)))
    return float(np.mean(y_true != y_pred))


def _models(kind):
    ours = AdversarialClassifier(loss=kind, alpha=ALPHA, abstain_label=ABSTAIN)
    return [
        ("AdversarialClassifier", ours),
        ("LogisticRegression", LogisticRegression(max_iter=5000)),
        ("LinearSVC (Crammer-Singer)", LinearSVC(multi_class="crammer_singer", max_iter=20000)),
    ]


def training_report(print_fn=print):
    """Train and evaluate every model on every task; print one small table per task."""
    for title, (X, y), kind in _tasks():
        X_train, X_test, y_train, y_test = train_test_split(
            X, y, test_size=0.3, random_state=0, stratify=y
        )
        scaler = StandardScaler().fit(X_train)
        X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
        print_fn(
            f"\n{title}: {len(y_train)} train / {len(y_test)} test, {np.unique(y).size} classes"
        )
        print_fn(f"  {'model':<28} {'test loss':>10} {'fit s':>7}  notes")
        for name, model in _models(kind):
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # LinearSVC convergence chatter
                model.fit(X_train, y_train)
            seconds = time.perf_counter() - start
            predicted = model.predict(X_test)
            notes = ""
            if isinstance(model, AdversarialClassifier):
                notes = f"game value {model.objective_:.4f} ({model.solver_})"
                if kind == "abstain":
                    notes += f", abstains on {np.mean(predicted == ABSTAIN):.0%}"
            loss = _task_loss(kind, y_test, predicted)
            print_fn(f"  {name:<28} {loss:>10.4f} {seconds:>7.2f}  {notes}")
