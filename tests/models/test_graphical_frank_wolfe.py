"""Block Frank-Wolfe for the graphical models (``solver='frank_wolfe'``): the adversarial graphical
model's and the structured SVM's dual ascended block by block with cached adversaries, certified
by weak duality, checked against the compiled program and against a brute-force QP over every
labeling."""

import itertools
import warnings

import cvxpy as cp
import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import advgame.solvers.structured as structured
from advgame.datasets import make_ordinal_sequences
from advgame.exceptions import ConvergenceWarning, NotApplicableError
from advgame.models.graphical import AdversarialGraphicalModel, StructuredSVM

STAR = nx.star_graph(3)


def _star_examples(n=6, k=3, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = [rng.normal(size=(4, d)) for _ in range(n)]
    y = [rng.integers(0, k, size=4) for _ in range(n)]
    y[0][:k] = np.arange(k)
    return X, y


def _bracket(model, optimum, slack=1e-8):
    assert model.objective_ - model.gap_ <= optimum + slack
    assert optimum <= model.objective_ + slack


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("loss", ["zero_one", "ordinal"])
@pytest.mark.parametrize("graph", ["chain", STAR], ids=["chain", "star"])
def test_agm_is_certified_and_brackets_the_compiled_optimum(loss, graph, k):
    if graph == "chain":
        X, y = make_ordinal_sequences(n_sequences=8, length=(3, 5), n_labels=k, random_state=2)
    else:
        X, y = _star_examples(k=k)
    params = {"loss": loss, "graph": graph, "node_weights": "position", "strength": 0.1}
    optimum = AdversarialGraphicalModel(solver="compile", **params).fit(X, y).objective_
    model = AdversarialGraphicalModel(
        solver="frank_wolfe", tol=1e-3, max_iter=500, random_state=0, **params
    ).fit(X, y)
    assert model.solver_ == "frank_wolfe"
    assert model.converged_ == "certified" and model.stop_reason_ == "certified"
    assert 0.0 <= model.gap_ <= 1e-3 * max(1.0, abs(model.objective_))
    _bracket(model, optimum)


def _brute_force_ssvm(X, y, L, lam):
    """The structured SVM's objective minimised by cvxpy over an explicit maximum over every
    labeling of each chain (no max-sum, no marginals)."""
    k, d = L.shape[0], X[0].shape[1]
    node, edge = cp.Variable((d + 1, k)), cp.Variable((k, k))
    hinges = []
    for x, labels in zip(X, y):
        x1 = np.hstack([x, np.ones((len(x), 1))])

        def score(labeling, x1=x1):
            nodes = sum(x1[i] @ node[:, a] for i, a in enumerate(labeling))
            return nodes + sum(edge[a, b] for a, b in zip(labeling[:-1], labeling[1:]))

        truth = score(labels)
        terms = [
            sum(L[a, b] for a, b in zip(labeling, labels)) + score(labeling) - truth
            for labeling in itertools.product(range(k), repeat=len(labels))
        ]
        hinges.append(cp.max(cp.hstack(terms)))
    regulariser = lam / 2 * (cp.sum_squares(node) + cp.sum_squares(edge))
    problem = cp.Problem(cp.Minimize(sum(hinges) / len(X) + regulariser))
    problem.solve()
    return problem.value


@pytest.mark.parametrize("k", [2, 3])
def test_ssvm_is_certified_against_a_brute_force_qp(k):
    X, y = make_ordinal_sequences(n_sequences=8, length=(3, 4), n_labels=k, random_state=1)
    L = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    optimum = _brute_force_ssvm(X, y, L, 0.05)
    model = StructuredSVM(
        loss="ordinal", solver="frank_wolfe", strength=0.05, tol=1e-3, max_iter=500, random_state=0
    ).fit(X, y)
    assert model.solver_ == "frank_wolfe" and model.converged_ == "certified"
    _bracket(model, optimum, slack=1e-6)  # cvxpy's own tolerance
    default = StructuredSVM(loss="ordinal", strength=0.05, max_iter=3, random_state=0).fit(X, y)
    assert default.solver_ == "subgradient" and default.gap_ == np.inf


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**16),
    strength=st.sampled_from([1e-3, 0.05, 1.0, 50.0]),
    loss=st.sampled_from(["zero_one", "ordinal", "squared"]),
    passes=st.integers(1, 6),
)
def test_the_certificate_holds_at_any_budget(seed, strength, loss, passes):
    """Whatever the pass budget (a warning when it runs out), ``objective_ - gap_ <= J* <=
    objective_``: the bound is weak duality, not a convergence claim."""
    X, y = make_ordinal_sequences(n_sequences=5, length=(2, 4), random_state=seed)
    params = {"loss": loss, "strength": strength}
    optimum = AdversarialGraphicalModel(solver="compile", **params).fit(X, y).objective_
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        model = AdversarialGraphicalModel(
            solver="frank_wolfe", max_iter=passes, random_state=seed, **params
        ).fit(X, y)
    if model.converged_ != "certified":
        assert any(issubclass(w.category, ConvergenceWarning) for w in record)
        assert model.stop_reason_.startswith(f"max_passes={passes} reached")
    assert np.isfinite(model.gap_)
    _bracket(model, optimum, slack=1e-7 * max(1.0, abs(optimum)))


def test_pass_budget_warns_and_a_small_cache_still_certifies(monkeypatch):
    X, y = make_ordinal_sequences(n_sequences=8, length=(3, 5), random_state=5)
    optimum = AdversarialGraphicalModel(solver="compile", strength=0.1).fit(X, y).objective_
    with pytest.warns(ConvergenceWarning, match="max_passes=1 reached"):
        short = AdversarialGraphicalModel(solver="frank_wolfe", strength=0.1, max_iter=1).fit(X, y)
    assert short.converged_ == "uncertified" and short.n_iter_ == 1
    _bracket(short, optimum)
    monkeypatch.setattr(structured, "FW_CACHE_BYTES", 1)  # one adversary kept per example
    small = AdversarialGraphicalModel(
        solver="frank_wolfe", strength=0.1, tol=1e-3, max_iter=2000, random_state=0
    ).fit(X, y)
    assert small.converged_ == "certified"
    _bracket(small, optimum)


def test_fits_are_reproducible_and_verbose_reports_the_passes(capsys):
    X, y = make_ordinal_sequences(n_sequences=6, length=(3, 4), random_state=6)
    params = {"solver": "frank_wolfe", "strength": 0.1, "tol": 1e-3, "random_state": 3}
    first = AdversarialGraphicalModel(verbose=2, **params).fit(X, y)
    second = AdversarialGraphicalModel(**params).fit(X, y)
    np.testing.assert_array_equal(first.theta_, second.theta_)
    err = capsys.readouterr().err
    assert "block Frank-Wolfe, epoch 1:" in err
    assert "certified gap" in err.splitlines()[-1]


def test_frank_wolfe_refuses_what_it_cannot_certify():
    X, y = make_ordinal_sequences(n_sequences=4, length=(3, 4), random_state=7)
    for uncertainty in ("l1", "l2", "exact"):
        with pytest.raises(NotApplicableError, match="uncertainty='soft'"):
            AdversarialGraphicalModel(solver="frank_wolfe", uncertainty=uncertainty).fit(X, y)
    with pytest.raises(NotApplicableError, match="uncertainty='soft'"):
        StructuredSVM(solver="frank_wolfe", uncertainty="l1").fit(X, y)
    with pytest.raises(NotApplicableError, match="block Frank-Wolfe"):
        AdversarialGraphicalModel(loss="log", solver="frank_wolfe").fit(X, y)
    with pytest.raises(ValueError, match="solver must be 'subgradient' or 'frank_wolfe'"):
        StructuredSVM(solver="compile").fit(X, y)
    with pytest.raises(ValueError, match="max_passes must be a positive integer"):
        structured._check_rounds(0, "max_passes")
