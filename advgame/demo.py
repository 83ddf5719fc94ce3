"""The training part of ``advgame demo``: the adversarial classifier on the loss it is scored by,
against logistic regression with the Bayes decision rule for that loss.

Two tasks on real data vendored with advgame (:func:`advgame.datasets.load`), where the loss is
not the zero-one loss and the decision rule matters:

* abstention (``alpha = 0.3``) on ``multiclass/vehicle`` (846 vehicle silhouettes, 4 classes):
  0 for a right answer, 1 for a wrong one, ``alpha`` to abstain;
* the ordinal absolute loss on ``multiclass/redwine`` (1,599 wines, quality 3-8: 6 ordered
  classes): the mean absolute error in classes.

Each model is scored by the task's loss matrix ``L[a, y]``.  ``AdversarialClassifier(loss=...)``
minimises the worst-case expected loss under moment constraints (Fathony et al. 2018a); its game
value is that worst case on the training data, plus the regulariser (Theorem 2).  Logistic
regression's fair peer applies the Bayes rule for the same loss to its probabilities,
``argmin_a sum_y L[a, y] p_y`` (abstain when ``max p < 1 - alpha``; the median class for the
ordinal loss); its plain ``predict`` (the most probable class) is shown as well.  One stratified
70/30 split (``random_state=0``), features standardised on the training part; each model's
regularisation ``lambda`` (``C = 1 / (n lambda)`` for logistic regression) is chosen from
:data:`STRENGTHS` by 3-fold stratified cross-validation on the training part, scored by the
task's loss.  The fit time is the CPU time (``time.process_time``) of the final fit, measured
after the cross-validation fits (which compile advgame's numba kernels on first use).
"""

import time
import warnings

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.preprocessing import StandardScaler

from .datasets import load
from .losses import abstain, ordinal
from .models import AdversarialClassifier

__all__ = ["STRENGTHS", "training_report"]

ABSTAIN = "abstain"  # the vehicle classes are names
ALPHA = 0.3
#: The regularisation strengths ``lambda`` every model's cross-validation chooses from.
STRENGTHS = (1e-4, 1e-3, 1e-2, 1e-1)


class _BayesRule:
    """Logistic regression deciding by the Bayes rule for the loss matrix ``L``: the action of
    least expected loss under its probabilities (``actions[a]`` is what it predicts)."""

    def __init__(self, strength, L, actions):
        self.strength, self.L, self.actions = strength, L, actions

    def fit(self, X, y):
        C = 1.0 / (len(y) * self.strength)  # the objective of advgame's: mean loss + lambda/2 |w|^2
        self.model = LogisticRegression(C=C, max_iter=5000).fit(X, y)
        return self

    def predict(self, X):
        risk = self.model.predict_proba(X) @ self.L.T
        return self.actions[np.argmin(risk, axis=1)]


class _Argmax(_BayesRule):
    """Logistic regression's own ``predict``: the most probable class."""

    def predict(self, X):
        return self.model.predict(X)


def _tasks():
    vehicle, wine = load("multiclass/vehicle"), load("multiclass/redwine")
    return [
        (
            f"vehicle, abstention alpha={ALPHA} (0 right, 1 wrong, {ALPHA} to abstain)",
            vehicle.X,
            vehicle.y,
            "abstain",
        ),
        (
            "red wine quality, ordinal loss (mean absolute error in classes)",
            wine.X,
            wine.y,
            "ordinal",
        ),
    ]


def _loss_matrix(kind, classes):
    """``L[a, y]`` over the label indices, and what each action predicts."""
    k = classes.size
    if kind == "abstain":
        return abstain(k, alpha=ALPHA).matrix, np.append(classes, ABSTAIN)
    return ordinal(k).matrix, classes


def _mean_loss(L, actions, y_index, predicted):
    """The mean of ``L[a_i, y_i]``, the action ``a_i`` read from the prediction."""
    order = np.argsort(actions)
    played = order[np.searchsorted(actions[order], predicted)]
    return float(np.mean(L[played, y_index]))


def _models(kind, L, actions):
    """``(name, make(strength))`` of every model of a task."""

    def adversarial(strength):
        options = {"alpha": ALPHA, "abstain_label": ABSTAIN} if kind == "abstain" else {}
        if kind == "ordinal":
            options["features"] = "thresholded"  # AL-th, Fathony et al. (2018a), §3.2.1
        return AdversarialClassifier(loss=kind, strength=strength, random_state=0, **options)

    return [
        ("AdversarialClassifier", adversarial),
        ("LogReg + Bayes rule", lambda s: _BayesRule(s, L, actions)),
        ("LogReg predict (argmax)", lambda s: _Argmax(s, L, actions)),
    ]


def _cross_validated(make, X, y, y_index, L, actions):
    """The strength of :data:`STRENGTHS` with the least 3-fold mean loss."""
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    scores = []
    for strength in STRENGTHS:
        losses = []
        for fit, held_out in folds:
            model = make(strength).fit(X[fit], y[fit])
            losses.append(_mean_loss(L, actions, y_index[held_out], model.predict(X[held_out])))
        scores.append(np.mean(losses))
    return STRENGTHS[int(np.argmin(scores))]


def training_report(print_fn=print):
    """Tune, train and evaluate every model on every task; print one small table per task."""
    print_fn(
        "Each model is scored by the task's loss L[a, y] on a held-out 30%. AdversarialClassifier\n"
        "optimises that loss; its game value is the worst-case expected loss that an adversary\n"
        "reproducing the training moments can force (Fathony et al. 2018a, Theorem 2), plus\n"
        "the regulariser. Its fair peer is logistic regression deciding by the Bayes rule for L\n"
        "(argmin_a sum_y L[a, y] p_y).\n"
        "lambda: chosen by 3-fold cross-validation on the loss; fit CPU s: after a warm-up."
    )
    for title, X, y, kind in _tasks():
        classes = np.unique(y)
        X_train, X_test, y_train, y_test = train_test_split(
            X, y, test_size=0.3, random_state=0, stratify=y
        )
        scaler = StandardScaler().fit(X_train)
        X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
        train_index, test_index = (
            np.searchsorted(classes, y_train),
            np.searchsorted(classes, y_test),
        )
        L, actions = _loss_matrix(kind, classes)
        print_fn(f"\n{title}: {len(y_train)} train / {len(y_test)} test, {classes.size} classes")
        print_fn(f"  {'model':<25} {'test loss':>9} {'fit CPU s':>9} {'lambda':>7}  notes")
        for name, make in _models(kind, L, actions):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # lbfgs convergence chatter at small lambda
                strength = _cross_validated(make, X_train, y_train, train_index, L, actions)
                model = make(strength)
                start = time.process_time()
                model.fit(X_train, y_train)
                seconds = time.process_time() - start
            predicted = model.predict(X_test)
            notes = ""
            if isinstance(model, AdversarialClassifier):
                notes = f"game value {model.objective_:.4f} ({model.solver_})"
            if kind == "abstain":
                notes += (
                    ", " if notes else ""
                ) + f"abstains on {np.mean(predicted == ABSTAIN):.0%}"
            loss = _mean_loss(L, actions, test_index, predicted)
            print_fn(f"  {name:<25} {loss:>9.4f} {seconds:>9.3f} {strength:>7.0e}  {notes}")
