"""Exact forest inference (max-sum, log-partition, marginals) against brute-force enumeration."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import logsumexp

from advgame import inference
from advgame.exceptions import SizeLimitError


# ------------------------------------------------------------------------------------- references
def score_of(graph, psi, Psi, y):
    """``s(y)`` written out term by term (independent of the library's vectorised scorer)."""
    total = sum(psi[i, y[i]] for i in range(len(y)))
    return total + sum(Psi[e, y[i], y[j]] for e, (i, j) in enumerate(graph.edges()))


def brute_force_reference(graph, psi, Psi):
    """``(max score, log Z, node marginals, edge marginals)`` by enumerating every labeling."""
    labelings, scores = inference.brute_force_scores(graph, psi, Psi)
    k = psi.shape[-1]
    p = np.exp(scores - logsumexp(scores))
    node = np.array(
        [np.bincount(labelings[:, i], weights=p, minlength=k) for i in range(psi.shape[0])]
    )
    edge = np.array(
        [
            np.bincount(labelings[:, i] * k + labelings[:, j], weights=p, minlength=k * k)
            for i, j in graph.edges()
        ]
    ).reshape(-1, k, k)
    return scores.max(), logsumexp(scores), node, edge


def two_component_forest():
    graph = nx.Graph()
    graph.add_nodes_from(range(6))
    graph.add_edges_from([(0, 3), (3, 5), (1, 4), (4, 2)])  # {0, 3, 5} and {1, 2, 4}
    return graph


def reversed_edge_graph():
    graph = nx.Graph()
    graph.add_edges_from([(0, 2), (2, 1)])  # nodes listed 0, 2, 1; second edge listed as (2, 1)
    return graph


GRAPHS = {
    "single": nx.empty_graph(1),
    "chain2": nx.path_graph(2),
    "chain6": nx.path_graph(6),
    "tree5": nx.random_labeled_tree(5, seed=3),
    "tree6": nx.random_labeled_tree(6, seed=11),
    "star6": nx.star_graph(5),
    "star-leaf-root": nx.relabel_nodes(nx.star_graph(4), {0: 4, 4: 0}),  # hub is node 4
    "forest": two_component_forest(),
    "isolated": nx.empty_graph(4),
    "reversed-edge": reversed_edge_graph(),
}


def random_potentials(graph, k, rng, scale=2.0, batch=()):
    n_nodes, n_edges = graph.number_of_nodes(), graph.number_of_edges()
    psi = scale * rng.standard_normal(batch + (n_nodes, k))
    Psi = scale * rng.standard_normal(batch + (n_edges, k, k))
    return psi, Psi


def assert_matches_brute_force(graph, psi, Psi, rtol=1e-10, atol=1e-10):
    best, log_Z_ref, node_ref, edge_ref = brute_force_reference(graph, psi, Psi)
    labels, score = inference.max_sum(graph, psi, Psi)
    assert labels.shape == (graph.number_of_nodes(),) and labels.dtype == np.int64
    assert isinstance(score, float)
    assert np.isclose(score, best, rtol=rtol, atol=atol)
    assert np.isclose(score_of(graph, psi, Psi, labels), best, rtol=rtol, atol=atol)
    log_Z = inference.log_partition(graph, psi, Psi)
    assert isinstance(log_Z, float)
    np.testing.assert_allclose(log_Z, log_Z_ref, rtol=rtol)
    node, edge, log_Z2 = inference.marginals(graph, psi, Psi)
    np.testing.assert_allclose(log_Z2, log_Z_ref, rtol=rtol)
    np.testing.assert_allclose(node, node_ref, rtol=0, atol=atol)
    np.testing.assert_allclose(edge, edge_ref, rtol=0, atol=atol)


# ------------------------------------------------------------------------------ exact agreement
def test_reversed_edge_graph_really_lists_an_edge_backwards():
    assert list(GRAPHS["reversed-edge"].edges()) == [(0, 2), (2, 1)]


@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("name", list(GRAPHS))
def test_agrees_with_brute_force(name, k):
    rng = np.random.default_rng([list(GRAPHS).index(name), k])
    graph = GRAPHS[name]
    for _ in range(3):
        assert_matches_brute_force(graph, *random_potentials(graph, k, rng))


def test_edge_orientation_follows_networkx_listing():
    # Psi[e][a, b] belongs to (y_i, y_j) for e = (i, j) as listed: (2, 1), not (1, 2).
    graph = GRAPHS["reversed-edge"]
    psi = np.zeros((3, 2))
    Psi = np.zeros((2, 2, 2))
    Psi[1, 1, 0] = 5.0  # rewards y_2 = 1, y_1 = 0
    labels, score = inference.max_sum(graph, psi, Psi)
    assert labels[2] == 1 and labels[1] == 0 and score == 5.0
    _, edge, _ = inference.marginals(graph, psi, Psi)
    assert edge[1, 1, 0] > 0.9 and edge[1, 0, 1] < 0.05

    # The same model with the edge listed as (1, 2) needs the transposed potential and gives the
    # transposed marginal.
    other = nx.Graph()
    other.add_nodes_from(range(3))  # nodes listed 0, 1, 2: the edge is listed as (1, 2)
    other.add_edges_from([(0, 2), (2, 1)])
    assert list(other.edges()) == [(0, 2), (1, 2)]
    rng = np.random.default_rng(0)
    psi, Psi = random_potentials(graph, 3, rng)
    Psi_other = np.stack([Psi[0], Psi[1].T])
    node_a, edge_a, log_Z_a = inference.marginals(graph, psi, Psi)
    node_b, edge_b, log_Z_b = inference.marginals(other, psi, Psi_other)
    np.testing.assert_allclose(log_Z_a, log_Z_b, rtol=1e-13)
    np.testing.assert_allclose(node_a, node_b, atol=1e-13)
    np.testing.assert_allclose(edge_a[1], edge_b[1].T, atol=1e-13)
    assert not np.allclose(edge_a[1], edge_a[1].T)  # the check above is not vacuous


def test_forest_factorises_over_components():
    graph = GRAPHS["forest"]
    rng = np.random.default_rng(1)
    psi, Psi = random_potentials(graph, 3, rng)
    total_log_Z, total_score = 0.0, 0.0
    for nodes in ([0, 3, 5], [1, 2, 4]):
        sub = nx.convert_node_labels_to_integers(graph.subgraph(nodes), ordering="sorted")
        index = {edge: e for e, edge in enumerate(graph.edges())}
        sub_Psi = np.array(
            [
                Psi[index[(nodes[i], nodes[j])]]
                if (nodes[i], nodes[j]) in index
                else Psi[index[(nodes[j], nodes[i])]].T
                for i, j in sub.edges()
            ]
        )
        total_log_Z += inference.log_partition(sub, psi[nodes], sub_Psi)
        total_score += inference.max_sum(sub, psi[nodes], sub_Psi)[1]
    assert np.isclose(inference.log_partition(graph, psi, Psi), total_log_Z, rtol=1e-13)
    assert np.isclose(inference.max_sum(graph, psi, Psi)[1], total_score, rtol=1e-13)


def test_huge_potentials_do_not_overflow():
    rng = np.random.default_rng(2)
    for name in ("chain6", "tree6", "forest"):
        graph = GRAPHS[name]
        psi, Psi = random_potentials(graph, 3, rng, scale=1e4)
        node, edge, log_Z = inference.marginals(graph, psi, Psi)
        assert np.isfinite(log_Z) and np.all(np.isfinite(node)) and np.all(np.isfinite(edge))
        np.testing.assert_allclose(node.sum(axis=1), 1.0, atol=1e-12)
        # Relative accuracy of log Z ~ 1e4 is what float64 allows; marginals are ~0/1.
        assert_matches_brute_force(graph, psi, Psi, rtol=1e-12, atol=1e-9)


def test_all_ties_give_a_valid_map_and_uniform_marginals():
    for name in ("chain6", "star6", "forest"):
        graph = GRAPHS[name]
        n_nodes, n_edges = graph.number_of_nodes(), graph.number_of_edges()
        psi, Psi = np.zeros((n_nodes, 3)), np.zeros((n_edges, 3, 3))
        labels, score = inference.max_sum(graph, psi, Psi)
        assert score == 0.0 and labels.min() >= 0 and labels.max() < 3
        again, _ = inference.max_sum(graph, psi, Psi)
        np.testing.assert_array_equal(labels, again)  # deterministic
        node, edge, log_Z = inference.marginals(graph, psi, Psi)
        assert np.isclose(log_Z, n_nodes * np.log(3), rtol=1e-13)
        np.testing.assert_allclose(node, 1 / 3, atol=1e-14)
        np.testing.assert_allclose(edge, 1 / 9, atol=1e-14)


@pytest.mark.parametrize("name", ["chain6", "tree6", "forest", "reversed-edge", "single"])
def test_batched_equals_per_example(name):
    graph = GRAPHS[name]
    rng = np.random.default_rng(3)
    psi, Psi = random_potentials(graph, 3, rng, batch=(5,))
    labels, scores = inference.max_sum(graph, psi, Psi)
    log_Z = inference.log_partition(graph, psi, Psi)
    node, edge, log_Z2 = inference.marginals(graph, psi, Psi)
    _, brute = inference.brute_force_scores(graph, psi, Psi)
    assert labels.shape == (5, graph.number_of_nodes()) and scores.shape == (5,)
    assert log_Z.shape == log_Z2.shape == (5,) and brute.shape == (5, 3 ** graph.number_of_nodes())
    assert node.shape == (5, graph.number_of_nodes(), 3)
    assert edge.shape == (5, graph.number_of_edges(), 3, 3)
    for b in range(5):
        one_labels, one_score = inference.max_sum(graph, psi[b], Psi[b])
        np.testing.assert_array_equal(labels[b], one_labels)
        assert scores[b] == one_score
        assert log_Z[b] == inference.log_partition(graph, psi[b], Psi[b])
        one_node, one_edge, one_log_Z = inference.marginals(graph, psi[b], Psi[b])
        np.testing.assert_allclose(node[b], one_node, rtol=0, atol=1e-15)
        np.testing.assert_allclose(edge[b], one_edge, rtol=0, atol=1e-15)
        assert log_Z2[b] == one_log_Z
        np.testing.assert_array_equal(
            brute[b], inference.brute_force_scores(graph, psi[b], Psi[b])[1]
        )


def test_unbatched_argument_is_shared_across_the_batch():
    graph = GRAPHS["tree6"]
    rng = np.random.default_rng(4)
    psi, Psi = random_potentials(graph, 2, rng, batch=(4,))
    shared = np.broadcast_to(Psi[0], Psi.shape)
    np.testing.assert_allclose(
        inference.log_partition(graph, psi, Psi[0]), inference.log_partition(graph, psi, shared)
    )
    shared_psi = np.broadcast_to(psi[0], psi.shape)
    labels, _ = inference.max_sum(graph, psi[0], Psi)
    np.testing.assert_array_equal(labels, inference.max_sum(graph, shared_psi, Psi)[0])


# --------------------------------------------------------------------------------- property tests
@st.composite
def forest_models(draw):
    """A random forest on 1..6 nodes (each node joins an earlier one or starts a new tree)."""
    n_nodes = draw(st.integers(1, 6))
    k = draw(st.integers(2, 4 if n_nodes <= 4 else 3))
    graph = nx.Graph()
    graph.add_nodes_from(draw(st.permutations(range(n_nodes))))  # varies the edge listing order
    for v in range(1, n_nodes):
        parent = draw(st.one_of(st.none(), st.integers(0, v - 1)))
        if parent is not None:
            graph.add_edge(*draw(st.sampled_from([(parent, v), (v, parent)])))
    values = st.integers(-3, 3).map(float)  # integer-valued: many ties
    psi = np.array(draw(st.lists(values, min_size=n_nodes * k, max_size=n_nodes * k)))
    n_edge_values = graph.number_of_edges() * k * k
    Psi = np.array(draw(st.lists(values, min_size=n_edge_values, max_size=n_edge_values)))
    return graph, psi.reshape(n_nodes, k), Psi.reshape(-1, k, k)


@given(forest_models())
def test_property_agrees_with_brute_force_with_ties(model):
    assert_matches_brute_force(*model)


@given(forest_models(), st.integers(0, 2**32 - 1))
def test_property_real_valued_potentials(model, seed):
    graph, psi, Psi = model
    rng = np.random.default_rng(seed)
    psi = psi + rng.standard_normal(psi.shape)
    Psi = Psi + rng.standard_normal(Psi.shape)
    assert_matches_brute_force(graph, psi, Psi)


# ------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "function", [inference.max_sum, inference.log_partition, inference.marginals]
)
def test_cycle_is_rejected(function):
    with pytest.raises(ValueError, match="cycle|forest"):
        function(nx.cycle_graph(5), np.zeros((5, 2)), np.zeros((5, 2, 2)))
    with pytest.raises(ValueError, match="cycle|forest"):
        inference.check_forest(nx.cycle_graph(5))


def test_check_forest_accepts_forests_and_rejects_bad_graphs():
    for graph in GRAPHS.values():
        assert inference.check_forest(graph) is None
    with pytest.raises(ValueError, match="0..2"):
        inference.check_forest(nx.path_graph([1, 2, 3]))
    with pytest.raises(ValueError, match="0..1"):
        inference.check_forest(nx.path_graph(["a", "b"]))
    loop = nx.path_graph(3)
    loop.add_edge(1, 1)
    with pytest.raises(ValueError, match="self-loop"):
        inference.check_forest(loop)
    with pytest.raises(ValueError, match="at least one node"):
        inference.check_forest(nx.Graph())
    with pytest.raises(ValueError, match="undirected"):
        inference.check_forest(nx.path_graph(3, create_using=nx.DiGraph))
    with pytest.raises(ValueError, match="networkx.Graph"):
        inference.check_forest([(0, 1)])


@pytest.mark.parametrize(
    ("psi_shape", "Psi_shape", "match"),
    [
        ((4, 3), (2, 3, 3), r"psi must have shape .*got \(4, 3\)"),  # N = 3
        ((3,), (2, 3, 3), "psi must have shape"),
        ((3, 0), (2, 0, 0), "k >= 1"),
        ((3, 3), (3, 3, 3), r"Psi must have shape \(\|E\|, k, k\) = \(2, 3, 3\)"),
        ((3, 3), (2, 2, 2), r"\(2, 3, 3\).*got \(2, 2, 2\)"),
        ((3, 3), (2, 3, 2), r"got \(2, 3, 2\)"),
        ((3, 3), (3, 3), "Psi must have shape"),
        ((4, 3, 3), (5, 2, 3, 3), "same batch size"),
    ],
)
def test_wrong_shapes_are_rejected(psi_shape, Psi_shape, match):
    graph = nx.path_graph(3)
    for function in (inference.max_sum, inference.log_partition, inference.marginals):
        with pytest.raises(ValueError, match=match):
            function(graph, np.zeros(psi_shape), np.zeros(Psi_shape))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_potentials_are_rejected(bad):
    graph = nx.path_graph(3)
    psi, Psi = np.zeros((3, 2)), np.zeros((2, 2, 2))
    bad_psi, bad_Psi = psi.copy(), Psi.copy()
    bad_psi[1, 1] = bad
    bad_Psi[0, 1, 0] = bad
    for function in (
        inference.max_sum,
        inference.log_partition,
        inference.marginals,
        inference.brute_force_scores,
    ):
        with pytest.raises(ValueError, match="psi must be finite"):
            function(graph, bad_psi, Psi)
        with pytest.raises(ValueError, match="Psi must be finite"):
            function(graph, psi, bad_Psi)
    with pytest.raises(ValueError, match="numeric"):
        inference.max_sum(graph, [["a", "b"]] * 3, Psi)


def test_brute_force_enumeration_order_size_limit_and_cycles():
    graph = nx.path_graph(2)
    psi = np.array([[0.0, 1.0], [0.0, 10.0]])
    Psi = np.array([[[0.0, 0.0], [100.0, 0.0]]])
    labelings, scores = inference.brute_force_scores(graph, psi, Psi)
    np.testing.assert_array_equal(labelings, [[0, 0], [0, 1], [1, 0], [1, 1]])
    np.testing.assert_array_equal(scores, [0.0, 10.0, 101.0, 11.0])
    with pytest.raises(SizeLimitError, match="MAX_BRUTE_FORCE_LABELINGS"):
        inference.brute_force_scores(nx.path_graph(21), np.zeros((21, 2)), np.zeros((20, 2, 2)))
    cycle = nx.cycle_graph(3)  # enumeration does not need a forest
    _, scores = inference.brute_force_scores(cycle, np.zeros((3, 2)), np.ones((3, 2, 2)))
    np.testing.assert_array_equal(scores, 3.0)
