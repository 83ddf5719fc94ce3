"""Adversarial graphical models, the CRF and the structured SVM (Fathony et al. 2018b)."""

import itertools
import pickle

import cvxpy as cp
import networkx as nx
import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

import advgame as ag
from advgame.datasets import make_ordinal_sequences
from advgame.exceptions import NotApplicableError
from advgame.models.graphical import (
    AdversarialGraphicalModel,
    GraphFeatures,
    StructuredSVM,
    _StructuredObjective,
)


def _tiny(n=4, length=(2, 3), k=2, d=2, seed=0):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(length[0], length[1] + 1, size=n)
    X = [rng.normal(size=(N, d)) for N in sizes]
    y = [rng.integers(0, k, size=N) for N in sizes]
    for labels in y:
        labels[0] = 0
    y[0][-1] = k - 1  # every label appears
    return X, y


def _joint_tables(model, X, y):
    """Brute force: every example's joint labelings, their scores' feature rows and losses."""
    fmap = model.feature_map_
    k = model.classes_.size
    data = model._bind(X, None, y)
    rows = []
    for group in data.groups:
        N = group.nodes.shape[1]
        edges = list(group.graph.edges())
        labelings = np.array(list(itertools.product(range(k), repeat=N)))
        for nodes, edge_rows in zip(group.nodes, group.edges):
            # s(y') = theta . phi(x, y'): one design row per joint labeling
            Phi = []
            for lab in labelings:
                G_node = np.zeros((data.X1.shape[0], k))
                G_edge = np.zeros((data.Z1.shape[0], k, k))
                G_node[nodes, lab] = 1.0
                for e, (i, j) in enumerate(edges):
                    G_edge[edge_rows[e], lab[i], lab[j]] = 1.0
                Phi.append(fmap.adjoint(data.X1, data.Z1, G_node, G_edge))
            truth = np.array([np.array_equal(lab, data.y[nodes]) for lab in labelings])
            rows.append((labelings, np.array(Phi), data.y[nodes], group.node_weights, truth))
    return rows


def _penalty(uncertainty, strength, theta, fmap):
    if uncertainty == "soft":
        return strength / 2 * cp.sum_squares(theta)
    if uncertainty == "group":
        return strength * sum(cp.norm(theta[b], 2) for b in fmap.blocks())
    dual = {"l1": "inf", "linf": 1, "l2": 2}[uncertainty]
    return strength * cp.norm(theta, dual)


@pytest.mark.parametrize("uncertainty", ["soft", "l1", "linf", "l2", "group"])
def test_compiled_agm_equals_brute_force_joint_program(uncertainty):
    """The compiled program (each example's inner LP dualised) has the optimum of the flat
    joint-label game, written independently in cvxpy over all k^N labelings, for every
    uncertainty set on the clique moments."""
    X, y = _tiny()
    strength = 0.3
    model = AdversarialGraphicalModel(
        loss="ordinal",
        uncertainty=uncertainty,
        strength=strength,
        solver="compile",
        node_weights="position",
    ).fit(X, y)
    L = model.loss_matrix_.matrix
    theta = cp.Variable(model.feature_map_.n_params)
    terms, constraints = [], []
    for labelings, Phi, _, w, truth in _joint_tables(model, X, y):
        joint = (w * L[labelings[:, None, :], labelings[None, :, :]]).sum(axis=2)
        p = cp.Variable(len(labelings), nonneg=True)
        u = cp.Variable()
        constraints += [cp.sum(p) == 1, u >= joint.T @ p + Phi @ theta]
        terms.append(u - Phi[truth][0] @ theta)
    penalty = _penalty(uncertainty, strength, theta, model.feature_map_)
    problem = cp.Problem(cp.Minimize(sum(terms) / len(X) + penalty), constraints)
    problem.solve(solver=cp.CLARABEL)
    assert model.objective_ == pytest.approx(problem.value, abs=1e-6)


def test_compiled_objective_matches_evaluated_objective_and_subgradient_approaches_it():
    X, y = make_ordinal_sequences(n_sequences=20, length=(3, 6), random_state=1)
    compiled = AdversarialGraphicalModel(loss="zero_one", solver="compile", strength=0.05).fit(X, y)
    data = compiled._bind(X, None, y)
    objective = _StructuredObjective(
        _inner_lp(compiled, data), data, compiled.feature_map_, compiled.uncertainty_
    )
    assert objective(compiled.theta_)[0] == pytest.approx(compiled.objective_, abs=1e-7)
    first_order = AdversarialGraphicalModel(
        loss="zero_one",
        solver="subgradient",
        certify=False,  # AdaGrad alone (certified fits: tests/test_graphical_certified.py)
        strength=0.05,
        max_iter=60,
        random_state=0,
    ).fit(X, y)
    assert compiled.objective_ <= first_order.objective_ + 1e-9
    assert first_order.objective_ <= compiled.objective_ * 1.05


def _inner_lp(model, data):
    from advgame.models.graphical import _AdversarialInner

    games = [ag.GraphGame(model.loss_matrix_, g.graph, g.node_weights) for g in data.groups]
    return _AdversarialInner(games, "lp")


def test_crf_objective_and_gradient_equal_brute_force():
    X, y = _tiny(k=3, length=(2, 3))
    model = AdversarialGraphicalModel(loss="log", uncertainty="exact", max_iter=3).fit(X, y)
    data = model._bind(X, None, y)
    from advgame.models.graphical import _crf_inner

    objective = _StructuredObjective(_crf_inner, data, model.feature_map_, model.uncertainty_)
    theta = np.random.default_rng(0).normal(size=model.feature_map_.n_params)
    value, gradient = objective(theta)
    expected, expected_grad = 0.0, 0.0
    for _, Phi, _, _, truth in _joint_tables(model, X, y):
        scores = Phi @ theta
        expected += logsumexp(scores) - scores[truth][0]
        expected_grad = expected_grad + np.exp(scores - logsumexp(scores)) @ Phi - Phi[truth][0]
    assert value == pytest.approx(expected / len(X), rel=1e-10)
    np.testing.assert_allclose(gradient, expected_grad / len(X), atol=1e-10)


def test_ssvm_hinge_equals_brute_force_loss_augmented_max():
    X, y = _tiny(k=3, length=(2, 4), seed=3)
    model = StructuredSVM(loss="squared", node_weights="position", max_iter=2).fit(X, y)
    data = model._bind(X, None, y)
    from advgame.models.graphical import _HingeInner

    objective = _StructuredObjective(
        _HingeInner(model.loss_matrix_.matrix), data, model.feature_map_, ag.uncertainty.Exact()
    )
    theta = np.random.default_rng(1).normal(size=model.feature_map_.n_params)
    L = model.loss_matrix_.matrix
    expected = 0.0
    for labelings, Phi, truth_labels, w, truth in _joint_tables(model, X, y):
        augmented = Phi @ theta + (w * L[labelings, truth_labels]).sum(axis=1)
        expected += augmented.max() - Phi[truth][0] @ theta
    assert objective(theta)[0] == pytest.approx(expected / len(X), rel=1e-10)


@pytest.mark.slow  # five fits on sequences: 5 s
def test_models_learn_ordinal_sequences():
    X, y = make_ordinal_sequences(n_sequences=80, random_state=0)
    train, test = slice(0, 60), slice(60, None)
    for model in (
        AdversarialGraphicalModel(loss="ordinal"),
        AdversarialGraphicalModel(loss="log"),
        StructuredSVM(loss="ordinal", max_iter=30, random_state=0),
    ):
        model.fit(X[train], y[train])
        assert -model.score(X[test], y[test]) < 0.45  # three labels: chance is ~0.9 absolute
        predicted = model.predict(X[test])
        assert [p.shape for p in predicted] == [t.shape for t in y[test]]
        assert set(np.concatenate(predicted)) <= {0, 1, 2}


def test_predict_marginals_are_distributions():
    X, y = make_ordinal_sequences(n_sequences=15, random_state=2)
    for loss in ("zero_one", "log"):
        model = AdversarialGraphicalModel(loss=loss).fit(X, y)
        for p, x in zip(model.predict_marginals(X), X):
            assert p.shape == (len(x), 3)
            np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-8)
            assert np.all(p >= -1e-9)


@pytest.mark.parametrize("solver", ["compile", "subgradient"])
def test_hamming_is_the_node_wise_zero_one_loss(solver):
    """``loss='hamming'`` over a graph's nodes is ``sum_i w_i [a_i != y_i]``, the zero-one loss
    per node: the fit, the predictions and the score equal those of ``loss='zero_one'``."""
    X, y = make_ordinal_sequences(n_sequences=10, length=(2, 4), random_state=7)
    options = {"solver": solver, "max_iter": 20, "random_state": 0}
    hamming = AdversarialGraphicalModel(loss="hamming", **options).fit(X, y)
    zero_one = AdversarialGraphicalModel(loss="zero_one", **options).fit(X, y)
    np.testing.assert_array_equal(hamming.loss_matrix_.matrix, ag.losses.zero_one(3).matrix)
    np.testing.assert_allclose(hamming.theta_, zero_one.theta_, rtol=1e-9, atol=1e-12)
    assert hamming.objective_ == pytest.approx(zero_one.objective_, rel=1e-12)
    assert [p.tolist() for p in hamming.predict(X)] == [p.tolist() for p in zero_one.predict(X)]
    assert hamming.score(X, y) == pytest.approx(zero_one.score(X, y))
    # brute force: minus the node-weighted mean Hamming distance of the predictions
    predicted = np.concatenate(hamming.predict(X))
    assert hamming.score(X, y) == pytest.approx(-np.mean(predicted != np.concatenate(y)))


def test_hamming_declaration_on_a_graph_compiles_like_zero_one():
    X, y = _tiny(n=5)
    model = AdversarialGraphicalModel(loss="zero_one", solver="compile").fit(X, y)
    declared = model.game_
    programs = {}
    for loss in ("hamming", "zero_one"):
        game = ag.PredictionGame(loss, declared.features, declared.uncertainty, declared.polytope)
        np.testing.assert_array_equal(game.loss_matrix(2).matrix, ag.losses.zero_one(2).matrix)
        programs[loss] = game.compile(X, y).solve()
    assert programs["hamming"].objective == pytest.approx(programs["zero_one"].objective)
    text = ag.PredictionGame(
        "hamming", declared.features, declared.uncertainty, declared.polytope
    ).explain()
    assert "with L 'hamming'" in text and "recognised as zero_one" in text
    with pytest.raises(ValueError, match="'hamming'"):
        AdversarialGraphicalModel(loss="hammming").fit(X, y)


def test_fixed_graph_with_cycle_compiles_and_decodes_like_brute_force():
    graph = nx.cycle_graph(4)
    rng = np.random.default_rng(0)
    X = [rng.normal(size=(4, 2)) for _ in range(6)]
    y = [rng.integers(0, 2, size=4) for _ in range(6)]
    model = AdversarialGraphicalModel(loss="zero_one", graph=graph, strength=0.1).fit(X, y)
    assert model.solver_ == "compile"
    data = model._bind(X)
    psi, Psi = model._potentials(data)
    labels = np.concatenate(model.predict(X))
    for nodes, edges in zip(data.groups[0].nodes, data.groups[0].edges):
        _, scores = ag.inference.brute_force_scores(graph, psi[nodes], Psi[edges])
        assert scores.max() == pytest.approx(
            ag.GraphGame(ag.losses.zero_one(2), graph).score(psi[nodes], Psi[edges], labels[nodes])
        )


def test_edge_inputs_node_weights_and_reproducibility():
    X, y = make_ordinal_sequences(n_sequences=12, length=(3, 5), random_state=4)
    Z = [np.abs(np.diff(x, axis=0)) for x in X]
    a = AdversarialGraphicalModel(solver="subgradient", max_iter=5, random_state=3).fit(X, y, Z)
    b = AdversarialGraphicalModel(solver="subgradient", max_iter=5, random_state=3).fit(X, y, Z)
    np.testing.assert_array_equal(a.theta_, b.theta_)
    assert a.transitions_.shape == (X[0].shape[1] + 1, 3, 3)
    with pytest.raises(ValueError, match="edge_X_list"):
        a.predict(X)
    weighted = AdversarialGraphicalModel(node_weights=lambda N: np.linspace(1, 2, N)).fit(X, y)
    assert np.isfinite(weighted.objective_)


@pytest.mark.slow  # pipelines and a grid search of sequence models: 4 s
def test_sklearn_integration():
    X, y = make_ordinal_sequences(n_sequences=24, random_state=5)
    model = AdversarialGraphicalModel(loss="ordinal")
    assert clone(model).get_params() == model.get_params()
    search = GridSearchCV(model, {"strength": [0.01, 0.1]}, cv=2).fit(X, y)
    assert search.best_params_["strength"] in (0.01, 0.1)
    restored = pickle.loads(pickle.dumps(search.best_estimator_))
    assert [p.tolist() for p in restored.predict(X[:3])] == [
        p.tolist() for p in search.best_estimator_.predict(X[:3])
    ]


def test_string_labels_and_pandas_elements():
    pd = pytest.importorskip("pandas")
    X, y = make_ordinal_sequences(n_sequences=10, random_state=6)
    names = np.array(["apex", "increasing", "neutral"])
    frames = [pd.DataFrame(x) for x in X]
    model = AdversarialGraphicalModel(loss="zero_one").fit(frames, [names[t] for t in y])
    assert list(model.classes_) == ["apex", "increasing", "neutral"]
    assert set(np.concatenate(model.predict(frames))) <= set(names)


def test_bad_inputs():
    X, y = make_ordinal_sequences(n_sequences=6, random_state=7)
    model = AdversarialGraphicalModel()
    with pytest.raises(ValueError, match="one array per example"):
        model.fit(np.zeros((5, 2)), y)
    with pytest.raises(ValueError, match="y_list has"):
        model.fit(X, y[:-1])
    with pytest.raises(ValueError, match="labels"):
        model.fit(X, [t[:-1] for t in y])
    with pytest.raises(ValueError, match="NaN"):
        model.fit([np.full_like(X[0], np.nan)] + X[1:], y)
    with pytest.raises(ValueError, match="at least 2"):
        model.fit(X, [np.zeros_like(t) for t in y])
    with pytest.raises(ValueError, match="graph has"):
        AdversarialGraphicalModel(graph=nx.path_graph(3)).fit(X, y)
    with pytest.raises(ValueError, match="graph must"):
        AdversarialGraphicalModel(graph="grid").fit(X, y)
    with pytest.raises(ValueError, match="loss must"):
        AdversarialGraphicalModel(loss="hinge").fit(X, y)
    with pytest.raises(ValueError, match="solver"):
        AdversarialGraphicalModel(solver="newton").fit(X, y)
    with pytest.raises(NotApplicableError, match="smooth"):
        AdversarialGraphicalModel(solver="lbfgs").fit(X, y)
    with pytest.raises(NotApplicableError, match="CRF"):
        AdversarialGraphicalModel(loss="log", solver="compile").fit(X, y)
    with pytest.raises(ValueError, match="node_weights"):
        AdversarialGraphicalModel(node_weights=[1.0, 2.0]).fit(X, y)
    with pytest.raises(ValueError, match="max_iter"):
        StructuredSVM(max_iter=0).fit(X, y)
    cycle = nx.cycle_graph(3)
    Xc = [np.ones((3, 2)), np.zeros((3, 2))]
    yc = [np.array([0, 1, 0]), np.array([1, 1, 0])]
    with pytest.raises(NotApplicableError, match="cycles"):
        AdversarialGraphicalModel(loss="log", graph=cycle).fit(Xc, yc)
    with pytest.raises(NotApplicableError, match="cycles"):
        StructuredSVM(graph=cycle).fit(Xc, yc)
    fitted = AdversarialGraphicalModel().fit(X, y)
    with pytest.raises(ValueError, match="not seen in fit"):
        fitted.score(X, [t + 5 for t in y])
    with pytest.raises(ValueError, match="columns"):
        fitted.predict([x[:, :2] for x in X])


def test_graph_features_blocks_partition_theta():
    fmap = GraphFeatures(n_node_inputs=3, n_edge_inputs=0, n_labels=3)
    blocks = np.concatenate(fmap.blocks())
    assert sorted(blocks.tolist()) == list(range(fmap.n_params))


def test_named_actions_are_predicted_by_name():
    """A loss with an action beyond the labels ('refer'): predict names each node's most likely
    action under the minimax predictor, the CRF's Bayes decision names its decision loss's
    actions (it raised IndexError before), and score rates those actions with the matrix."""
    X, y = make_ordinal_sequences(n_sequences=8, length=(3, 5), random_state=4)
    H = np.vstack([1.0 - np.eye(3), np.full((1, 3), 0.2)])
    loss = ag.LossMatrix(H, actions=[0, 1, 2, "refer"])
    truth = np.concatenate(y)
    for model in (
        AdversarialGraphicalModel(loss=loss).fit(X, y),
        AdversarialGraphicalModel(loss="log", decision_loss=loss).fit(X, y),
    ):
        assert model.actions_.tolist() == [0, 1, 2, "refer"]
        marginals = model.predict_marginals(X)
        if model.loss == "log":  # Bayes decision: the smallest expected decision loss
            rows = [np.argmin(p @ H.T, axis=1) for p in marginals]
        else:
            rows = [np.argmax(p, axis=1) for p in marginals]
        predicted = model.predict(X)
        for got, expected in zip(predicted, rows):
            np.testing.assert_array_equal(got, model.actions_[expected])
        assert "refer" in np.concatenate(predicted).tolist()
        expected_loss = H[np.concatenate(rows), truth].mean()
        assert model.score(X, y) == pytest.approx(-expected_loss)
    plain = AdversarialGraphicalModel().fit(X, y)  # actions are the labels: max-sum decoding
    assert plain.actions_.tolist() == [0, 1, 2]
    assert all(p.dtype == truth.dtype for p in plain.predict(X))
