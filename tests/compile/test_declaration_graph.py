"""Graph declarations: PredictionGame(loss, GraphFeatures(), uncertainty, Marginal(graph)).

References are independent: the graph game equals the ordinary multiclass game over joint
labelings (Fathony et al. 2018b Theorem 1) with ``L_joint[a, y] = sum_i w_i L[a_i, y_i]`` and joint features
``phi(x, y) = sum_i e_{y_i} (x) [x_i; 1] + sum_e e_{(y_i, y_j)} (x) [z_e; 1]``, written here in
cvxpy over all ``k^N`` labelings.
"""

import itertools

import cvxpy as cp
import networkx as nx
import numpy as np
import pytest

import advgame as ag
from advgame.compile import GraphLearningProgram
from advgame.exceptions import NotApplicableError
from advgame.models.graphical import AdversarialGraphicalModel, GraphFeatures
from advgame.polytopes import Marginal

UNCERTAINTIES = {
    "exact": ag.Exact(),
    "l1": ag.NormBall(0.2, norm=1),
    "soft": ag.SoftMoments(0.5),
    "l2": ag.NormBall(0.3, norm=2),
}


def _data(graph, n=3, k=3, d=2, seed=0, edge_inputs=False):
    rng = np.random.default_rng(seed)
    N = graph.number_of_nodes()
    X = [rng.normal(size=(N, d)) for _ in range(n)]
    y = [rng.integers(0, k, size=N) for _ in range(n)]
    y[0][:k] = np.arange(k)  # every label appears
    Z = [rng.normal(size=(graph.number_of_edges(), 1)) for _ in range(n)] if edge_inputs else None
    return X, y, Z


def _joint_features(graph, x, z, labeling, k):
    """phi(x, y') in GraphFeatures' layout, built directly from the definition."""
    X1 = np.hstack([x, np.ones((x.shape[0], 1))])
    node = sum(np.outer(X1[i], np.eye(k)[labeling[i]]) for i in range(x.shape[0]))
    edges = list(graph.edges())
    Z1 = np.hstack([z, np.ones((len(edges), 1))]) if z is not None else np.ones((len(edges), 1))
    edge = np.zeros((Z1.shape[1], k * k))
    for e, (i, j) in enumerate(edges):
        edge += np.outer(Z1[e], np.eye(k * k)[labeling[i] * k + labeling[j]])
    return np.concatenate([node.ravel(), edge.ravel()])


def _brute_force(graph, L, X, y, Z, uncertainty, node_weights=None, sample_weight=None):
    """The joint multiclass learning problem over all k^N labelings, in cvxpy."""
    l, k = L.shape
    N = graph.number_of_nodes()
    w = np.ones(N) if node_weights is None else np.asarray(node_weights, dtype=float)
    labelings = np.array(list(itertools.product(range(k), repeat=N)))
    actions = np.array(list(itertools.product(range(l), repeat=N)))
    L_joint = np.array([[np.sum(w * L[a, t]) for t in labelings] for a in actions])
    n = len(X)
    omega = np.full(n, 1.0 / n) if sample_weight is None else sample_weight / sample_weight.sum()
    Phis = [
        np.array(
            [_joint_features(graph, X[s], None if Z is None else Z[s], t, k) for t in labelings]
        )
        for s in range(n)
    ]
    theta = cp.Variable(Phis[0].shape[1])
    u = cp.Variable(n)
    P = cp.Variable((n, len(actions)), nonneg=True)
    constraints = [cp.sum(P, axis=1) == 1]
    objective = 0
    for s in range(n):
        truth = int(np.flatnonzero((labelings == y[s]).all(axis=1))[0])
        constraints.append(u[s] >= L_joint.T @ P[s] + Phis[s] @ theta)
        objective += omega[s] * (u[s] - Phis[s][truth] @ theta)
    if isinstance(uncertainty, ag.SoftMoments):
        objective += uncertainty.lam / 2 * cp.sum_squares(theta)
    elif isinstance(uncertainty, ag.NormBall):
        dual = {1: "inf", 2: 2}[uncertainty.norm]
        objective += uncertainty.radius * cp.norm(theta, dual)
    problem = cp.Problem(cp.Minimize(objective), constraints)
    problem.solve(solver=cp.CLARABEL)
    return problem.value


def _declare(loss, uncertainty, graph, **kwargs):
    return ag.PredictionGame(loss, GraphFeatures(), uncertainty, Marginal(graph, **kwargs))


def _inputs(X, Z):
    return X if Z is None else list(zip(X, Z))


CASES = [
    # (graph, k, loss, node_weights, edge inputs, sample weights)
    (nx.path_graph(3), 3, "ordinal", None, False, None),
    (nx.star_graph(3), 2, "zero_one", "position", True, None),
    (nx.cycle_graph(4), 2, "zero_one", None, False, np.array([1.0, 2.0, 0.5])),
]


@pytest.mark.parametrize("name", list(UNCERTAINTIES))
@pytest.mark.parametrize("case", range(len(CASES)))
def test_compiled_graph_program_equals_joint_brute_force_and_its_dual(case, name):
    graph, k, loss, node_weights, edges, sample_weight = CASES[case]
    uncertainty = UNCERTAINTIES[name]
    X, y, Z = _data(graph, k=k, edge_inputs=edges, seed=case)
    pg = _declare(loss, uncertainty, graph, node_weights=node_weights)
    assert pg.family == "graph"
    program = pg.compile(_inputs(X, Z), y, sample_weight=sample_weight)
    assert isinstance(program, GraphLearningProgram) and program.exact
    assert program.kind == uncertainty.program_kind
    L = ag.losses.ordinal(k).matrix if loss == "ordinal" else ag.losses.zero_one(k).matrix
    weights = None if node_weights is None else np.arange(1.0, graph.number_of_nodes() + 1)
    reference = _brute_force(graph, L, X, y, Z, uncertainty, weights, sample_weight)
    backends = ["cvxpy"] if program.kind == "SOCP" else ["highs", "cvxpy"]
    primal = {b: program.solve(backend=b) for b in backends}
    dual = {b: program.dual().solve(backend=b) for b in backends}
    for b in backends:
        assert primal[b].objective == pytest.approx(reference, abs=2e-6)
        assert dual[b].value == pytest.approx(reference, abs=2e-6)
    solution = primal[backends[0]]
    assert len(solution.P) == len(X) and solution.P[0].shape == (graph.number_of_nodes(), k)
    np.testing.assert_allclose([P.sum(axis=1) for P in solution.P], 1.0, atol=1e-7)
    if solution.Q is not None:
        np.testing.assert_allclose([Q.sum(axis=1) for Q in solution.Q], 1.0, atol=1e-7)
    assert dual[backends[0]].Q[0].shape == (graph.number_of_nodes(), k)


def test_latex_and_cvxpy_view_name_the_declared_pieces():
    graph = nx.cycle_graph(4)
    X, y, _ = _data(graph, k=2)
    exact = _declare("zero_one", ag.NormBall(0.25, norm=1), graph).compile(X, y)
    text = exact.latex()
    assert r"\mathcal M(G)" in text and "junction tree" in text
    assert r"\mathbf{1}[a \ne y]" in text and "0.25" in text and r"\|\theta\|_{\infty}" in text
    assert "(\\text{moments})" in text and "marginal polytope" in text
    local = _declare("zero_one", ag.SoftMoments(0.1), graph, relaxation="local").compile(X, y)
    assert "relaxation" in local.latex() and r"\mathbb L(G)" in local.latex()
    printed = str(exact.to_cvxpy())
    assert "E^T" in printed and "C Phi" in printed
    assert "(C Phi)^T Omega" in str(exact.dual().to_cvxpy())


def test_local_relaxation_on_a_cycle_says_so_and_bounds_the_exact_program():
    graph = nx.cycle_graph(4)
    polytope = Marginal(graph, relaxation="local")
    assert not polytope.exact and "relaxation" in repr(polytope)
    assert "RELAXATION" in polytope.describe()
    assert Marginal(nx.path_graph(3), relaxation="local").exact
    assert Marginal(graph).exact and "junction tree" in repr(Marginal(graph))
    X, y, _ = _data(graph, k=3, seed=4)
    local = _declare("zero_one", ag.SoftMoments(0.2), graph, relaxation="local").compile(X, y)
    exact = _declare("zero_one", ag.SoftMoments(0.2), graph).compile(X, y)
    assert not local.exact
    value = local.solve(backend="cvxpy").objective  # HiGHS's QP stalls on this one
    assert value >= exact.solve(backend="cvxpy").objective - 1e-7  # the adversary has more room
    assert local.dual().solve(backend="cvxpy").value == pytest.approx(value, abs=1e-6)


def test_invalid_declarations_name_both_pieces():
    graph = nx.path_graph(3)
    with pytest.raises(ValueError, match=r"features = .*does not fit polytope = Marginal"):
        ag.PredictionGame("zero_one", "multiclass", None, Marginal(graph))
    with pytest.raises(ValueError, match=r"loss = .*does not fit polytope = Marginal.*Valid"):
        ag.PredictionGame(ag.losses.brier(3), GraphFeatures(), None, Marginal(graph))
    with pytest.raises(ValueError, match=r"uncertainty = .*MomentBalls"):
        ag.PredictionGame("zero_one", GraphFeatures(), ag.MomentBalls(0.1), Marginal(graph))
    with pytest.raises(ValueError, match="0..2"):
        Marginal(nx.relabel_nodes(graph, {0: 5}))
    with pytest.raises(ValueError, match="networkx"):
        Marginal(np.eye(3))
    with pytest.raises(ValueError, match="relaxation"):
        Marginal(graph, relaxation="bethe")
    with pytest.raises(NotApplicableError, match="GraphGame"):
        Marginal(graph).argmax(np.zeros(3))
    pg = _declare("zero_one", None, graph)
    X, y, _ = _data(graph, k=2)
    with pytest.raises(ValueError, match="n_labels=3"):
        ag.PredictionGame("zero_one", GraphFeatures(2, 0, 3), None, Marginal(graph)).compile(X, y)
    with pytest.raises(ValueError, match="one finite weight per example"):
        pg.compile(X, y, sample_weight=np.ones(2))
    with pytest.raises(ValueError, match="list"):
        pg.compile(np.zeros((3, 2)), y)


def test_estimator_declares_its_game_and_compiles_through_it():
    X, y, Z = _data(nx.path_graph(3), n=4, k=2, seed=7, edge_inputs=True)
    X[1], y[1], Z[1] = X[1][:2], y[1][:2], Z[1][:1]  # chains of different lengths
    model = AdversarialGraphicalModel(
        loss="ordinal", node_weights="position", strength=0.1, solver="compile"
    ).fit(X, y, Z)
    assert isinstance(model.game_.polytope, Marginal) and model.game_.family == "graph"
    compiled = model.game_.compile(list(zip(X, Z)), y)
    again = compiled.solve(backend="cvxpy")  # the backend 'auto' chose for this QP
    assert again.objective == pytest.approx(model.objective_, abs=1e-9)
    np.testing.assert_allclose(again.theta, model.theta_, atol=1e-7)
    assert compiled.solve().objective == pytest.approx(model.objective_, abs=1e-6)
    assert compiled.dual().solve(backend="cvxpy").value == pytest.approx(model.objective_, abs=1e-6)
    first_order = AdversarialGraphicalModel(solver="subgradient", max_iter=2, random_state=0)
    first_order.fit(X, y)
    assert first_order.game_.compile(X, y).solve().objective > 0
    crf = AdversarialGraphicalModel(loss="log", solver="lbfgs", max_iter=3)
    with pytest.warns(Warning):
        crf.fit(X, y)
    with pytest.raises(NotApplicableError, match="CRF"):
        crf.game_.compile(X, y)


def test_explain_and_latex_describe_the_graph_family():
    cycle = nx.cycle_graph(4)
    pg = ag.PredictionGame(
        "ordinal", GraphFeatures(), ag.NormBall(0.1, 1), Marginal(cycle, "local")
    )
    text = pg.explain()
    assert "relaxation" in text and "closed form for ordinal" in text and "program: LP" in text
    assert "mu (the region marginals)" in text
    latex = ag.PredictionGame("zero_one", GraphFeatures(), None, Marginal("chain")).latex()
    assert r"\mathcal M(G)" in latex and r"\max_{\mu" in latex
