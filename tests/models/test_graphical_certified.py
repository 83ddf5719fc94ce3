"""Certified fits of the adversarial graphical model (issue #22): the weak-duality bound of the
graph learning problem (Fathony et al. 2018b; Farnia and Tse 2016) and the cutting planes that
close it."""

import itertools

import networkx as nx
import numpy as np
import pytest

import advgame as ag
import advgame.models.graphical as graphical
from advgame.datasets import make_ordinal_sequences
from advgame.exceptions import ConvergenceWarning
from advgame.models.graphical import AdversarialGraphicalModel, graph_dual_bound

STAR = nx.star_graph(3)  # a tree on 4 nodes: centre 0


def _examples(graph, n=6, k=3, d=2, seed=0):
    """``n`` examples on ``graph`` ('chain': lengths 2-4) with every label present."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 5, size=n) if graph == "chain" else [graph.number_of_nodes()] * n
    X = [rng.normal(size=(N, d)) for N in sizes]
    y = [rng.integers(0, k, size=N) for N in sizes]
    y[0][: min(k, len(y[0]))] = np.arange(min(k, len(y[0])))
    y[1][0] = k - 1
    return X, y


def _fit(X, y, graph, loss, uncertainty, **params):
    return AdversarialGraphicalModel(
        loss=loss, graph=graph, uncertainty=uncertainty, strength=0.1, **params
    ).fit(X, y)


def _random_marginals(model, data, rng):
    """Node and edge marginals of a random joint distribution over each example's labelings
    (points of the marginal polytope)."""
    k = model.classes_.size
    q = np.zeros((data.X1.shape[0], k))
    Q = np.zeros((data.Z1.shape[0], k, k))
    for group in data.groups:
        N, edges = group.nodes.shape[1], list(group.graph.edges())
        labelings = np.array(list(itertools.product(range(k), repeat=N)))
        for nodes, edge_rows in zip(group.nodes, group.edges):
            p = rng.dirichlet(np.full(len(labelings), 0.3))
            for i in range(N):
                np.add.at(q[nodes[i]], labelings[:, i], p)
            for e, (i, j) in enumerate(edges):
                np.add.at(Q[edge_rows[e]], (labelings[:, i], labelings[:, j]), p)
    return q, Q


def _compiled_adversary(model, data):
    """The compiled optimum's adversary: each example's region marginals are the multipliers of
    its ``game`` rows divided by its weight ``1/n``, read onto nodes and edges."""
    k = model.classes_.size
    solution = model.compiled_.solve()
    multipliers = solution.duals["game"] * data.n_examples
    offsets = np.r_[0, np.cumsum(model.compiled_.layout.mu_sizes)]
    q = np.zeros((data.X1.shape[0], k))
    Q = np.zeros((data.Z1.shape[0], k, k))
    for group in data.groups:
        inner = ag.GraphGame(model.loss_matrix_, group.graph, group.node_weights).inner_program()
        for s, nodes, edges in zip(group.examples, group.nodes, group.edges):
            mu = np.clip(multipliers[offsets[s] : offsets[s + 1]], 0.0, None)
            q[nodes] = (inner.node_maps @ mu).reshape(-1, k)
            Q[edges] = (inner.edge_maps @ mu).reshape(-1, k, k)
    return q, Q, solution.objective


@pytest.mark.parametrize("graph", ["chain", STAR], ids=["chain", "star"])
@pytest.mark.parametrize("uncertainty", ["soft", "l1", "l2"])
def test_dual_bound_is_below_the_optimum_and_tight_at_the_compiled_adversary(graph, uncertainty):
    """D(mu) <= J* for random points of the marginal polytope, and D(mu*) = J* at the compiled
    program's adversary (its optimal dual point)."""
    X, y = _examples(graph)
    model = _fit(X, y, graph, "ordinal", uncertainty, solver="compile", node_weights="position")
    data = model._bind(X, None, y)
    L, fmap, unc = model.loss_matrix_.matrix, model.feature_map_, model.uncertainty_
    rng = np.random.default_rng(1)
    for _ in range(5):
        q, Q = _random_marginals(model, data, rng)
        assert graph_dual_bound(L, fmap, unc, data, q, Q) <= model.objective_ + 1e-9
    q, Q, optimum = _compiled_adversary(model, data)
    assert optimum == pytest.approx(model.objective_, abs=1e-7)
    bound = graph_dual_bound(L, fmap, unc, data, q, Q)
    assert bound == pytest.approx(model.objective_, abs=1e-6)
    # the labels themselves (r = 0) give the weakest bound: sum_s omega_s H_s(e_y)
    Y = np.eye(model.classes_.size)[data.y]
    base = graph_dual_bound(L, fmap, ag.uncertainty.Exact(), data, Y, _edge_labels(data, model))
    assert base <= bound


def _edge_labels(data, model):
    from advgame.compile.graph import _one_hot

    Q = np.zeros((data.Z1.shape[0], model.classes_.size, model.classes_.size))
    for group in data.groups:
        Q[group.edges] = _one_hot(group.graph, data.y[group.nodes], model.classes_.size)[1]
    return Q


@pytest.mark.parametrize("loss", ["zero_one", "ordinal"])
@pytest.mark.parametrize("uncertainty", ["soft", "l1"])
def test_default_fit_beyond_the_compile_size_is_certified(monkeypatch, loss, uncertainty):
    """Beyond AUTO_COMPILE_SIZE the default fit runs the cutting planes and ends certified:
    objective_ - gap_ <= J* <= objective_ with gap_ <= tol * max(1, |objective_|)."""
    X, y = make_ordinal_sequences(n_sequences=10, length=(3, 5), random_state=3)
    optimum = _fit(X, y, "chain", loss, uncertainty, solver="compile").objective_
    monkeypatch.setattr(graphical, "AUTO_COMPILE_SIZE", 0)
    model = _fit(X, y, "chain", loss, uncertainty)
    assert model.solver_ == "cutting_plane"
    assert model.converged_ == "certified"
    assert 0.0 <= model.gap_ <= model.tol * max(1.0, abs(model.objective_))
    assert model.objective_ - model.gap_ <= optimum + 1e-8
    assert optimum <= model.objective_ + 1e-8


@pytest.mark.parametrize(
    "graph, uncertainty",
    [(STAR, "exact"), (nx.cycle_graph(4), "l2")],
    ids=["tree-exact", "cycle-junction-tree-l2"],
)
def test_trees_cycles_and_exact_matching_are_certified(graph, uncertainty):
    """A tree, a cycle (its games over a junction tree) and exact moment matching (certified by
    the master's optimum, the weak-duality bound degenerating there)."""
    X, y = _examples(graph, n=5)
    optimum = _fit(X, y, graph, "zero_one", uncertainty, solver="compile").objective_
    model = _fit(X, y, graph, "zero_one", uncertainty, solver="cutting_plane")
    assert model.converged_ == "certified"
    assert model.objective_ - model.gap_ <= optimum + 1e-8 <= model.objective_ + 2e-8


def test_subgradient_is_certified_unless_asked_not_to_be():
    X, y = make_ordinal_sequences(n_sequences=8, length=(3, 5), random_state=4)
    optimum = _fit(X, y, "chain", "zero_one", "soft", solver="compile").objective_
    params = {"solver": "subgradient", "max_iter": 3, "random_state": 0}
    raw = _fit(X, y, "chain", "zero_one", "soft", certify=False, **params)
    assert raw.gap_ == np.inf
    assert raw.converged_ == "uncertified"
    assert raw.stop_reason_.startswith("uncertified subgradient")
    assert "certify=False" in raw.stop_reason_
    certified = _fit(X, y, "chain", "zero_one", "soft", **params)
    assert certified.converged_ == "certified"
    assert certified.objective_ <= raw.objective_ + 1e-12
    assert certified.objective_ - certified.gap_ <= optimum + 1e-8 <= certified.objective_ + 2e-8


def test_round_budget_warns_with_an_honest_gap():
    X, y = make_ordinal_sequences(n_sequences=8, length=(3, 5), random_state=5)
    optimum = _fit(X, y, "chain", "ordinal", "soft", solver="compile").objective_
    with pytest.warns(ConvergenceWarning, match="max_rounds=2 reached"):
        model = _fit(X, y, "chain", "ordinal", "soft", solver="cutting_plane", max_iter=2)
    assert model.converged_ == "uncertified"
    assert model.stop_reason_.startswith("max_rounds=2 reached")
    assert model.gap_ > model.tol * max(1.0, abs(model.objective_))
    assert model.objective_ - model.gap_ <= optimum + 1e-8 <= model.objective_ + 1e-8


def test_verbose_reports_the_rounds_and_the_certified_gap(capsys):
    X, y = make_ordinal_sequences(n_sequences=6, length=(3, 4), random_state=6)
    _fit(X, y, "chain", "zero_one", "l1", solver="cutting_plane", verbose=2)
    err = capsys.readouterr().err
    assert "cutting planes, round 1:" in err
    assert "certified gap" in err and "certified" in err.splitlines()[-1]


def test_compiled_and_crf_fits_say_what_their_gap_means():
    X, y = make_ordinal_sequences(n_sequences=6, length=(3, 4), random_state=7)
    compiled = _fit(X, y, "chain", "zero_one", "soft", solver="compile")
    assert compiled.gap_ == 0.0 and compiled.converged_ == "optimal"
    with pytest.warns(ConvergenceWarning, match="iteration budget"):
        crf = AdversarialGraphicalModel(loss="log", max_iter=5).fit(X, y)
    assert crf.gap_ > crf.tol * max(1.0, abs(crf.objective_))  # reported, not enforced
    assert crf.converged_ == "uncertified" and "tol=1e-06 * max(1, |J|)" in crf.stop_reason_
    with pytest.raises(ValueError, match="certify"):
        AdversarialGraphicalModel(certify="yes").fit(X, y)
    with pytest.raises(ag.exceptions.NotApplicableError, match="cutting planes"):
        AdversarialGraphicalModel(loss="log", solver="cutting_plane").fit(X, y)


def test_crf_bound_uses_the_tree_entropy_and_certifies_a_smooth_fit():
    """The CRF's bound: the tree entropy equals the brute-force entropy of the tree-factored
    distribution, the bound lies below the objective at any marginals, and an L-BFGS fit with
    soft moments is certified by it (Farnia and Tse 2016's duality for the log loss)."""
    from advgame.inference import marginals
    from advgame.models.graphical import _entropy, crf_dual_bound

    X, y = make_ordinal_sequences(n_sequences=12, length=(3, 4), random_state=8)
    model = AdversarialGraphicalModel(loss="log", uncertainty="soft", strength=0.05).fit(X, y)
    assert model.converged_ == "certified"
    assert 0.0 <= model.gap_ <= model.tol * max(1.0, abs(model.objective_))
    data = model._bind(X, None, y)
    rng = np.random.default_rng(0)
    theta = rng.normal(size=model.feature_map_.n_params)
    psi, Psi = model.feature_map_.potentials(theta, data.X1, data.Z1)
    q, Q = np.empty_like(psi), np.empty_like(Psi)
    for group in data.groups:
        q[group.nodes], Q[group.edges] = marginals(group.graph, psi[group.nodes], Psi[group.edges])[
            :2
        ]
    bound = crf_dual_bound(model.feature_map_, model.uncertainty_, data, q, Q)
    assert bound <= model.objective_ - model.gap_ + 1e-9
    # on one chain the tree entropy is the entropy of the joint distribution p(y) ~ exp s(y)
    group = data.groups[0]
    nodes, edges = group.nodes[0], group.edges[0]
    labelings, scores = ag.inference.brute_force_scores(group.graph, psi[nodes], Psi[edges])
    p = np.exp(scores - scores.max())
    p /= p.sum()
    degree = np.array([group.graph.degree(i) for i in range(len(nodes))])
    tree = _entropy(Q[edges], (1, 2)).sum() - _entropy(q[nodes], 1) @ (degree - 1.0)
    assert tree == pytest.approx(_entropy(p, 0), abs=1e-9)
