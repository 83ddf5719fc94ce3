"""Second bad-input catalogue: the ends of floating point ([extremes]).

Every case asserts the right number against an independent reference (the same problem at a
harmless scale, using the game's homogeneity in the loss and its equivariance in the features and
weights; a brute-force or closed-form value) or a clear error that names the argument and what is
expected.  The causes: (1) weight totals that overflow or underflow, (2) solver tolerances at
small scales, (3) magnitudes a solver cannot represent, (4) overflow near the top of float64,
(5) 0/0 in the closed-form predictor; then unclear errors, each now one message.
"""

import numpy as np
import pytest

import advgame as ag
from advgame.cli import main

NAN, INF = np.nan, np.inf
RTOL = 1e-6


def _data(n=40, d=3, k=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.argmax(X @ rng.normal(size=(d, k)) + rng.normal(size=(n, k)), axis=1)
    return X, y


X, Y = _data()
ZERO_ONE = ag.PredictionGame("zero_one")
#: The reference optimum of the zero-one learning problem with exact moments on (X, Y).
REFERENCE = ZERO_ONE.compile(X, Y).solve().objective


# --------------------------------------------------------------- (1) weight totals
@pytest.mark.parametrize("scale", [1e308, 1e300, 1e-300, 1e-310, 5e-324])
def test_compile_objective_does_not_depend_on_a_common_weight_scale(scale):
    weights = np.full(len(Y), scale)
    objective = ZERO_ONE.compile(X, Y, sample_weight=weights).solve().objective
    assert objective == pytest.approx(REFERENCE, rel=RTOL)


def test_compile_weights_spanning_the_float_range():
    """Weights 1e300 and 1e-300 at once: the tiny ones are negligible, the result is the
    problem on the heavy rows alone."""
    weights = np.where(np.arange(len(Y)) % 2 == 0, 1e300, 1e-300)
    objective = ZERO_ONE.compile(X, Y, sample_weight=weights).solve().objective
    heavy = ZERO_ONE.compile(X[::2], Y[::2]).solve().objective
    assert objective == pytest.approx(heavy, rel=1e-6)


@pytest.mark.parametrize("scale", [1e308, 1e-310])
@pytest.mark.parametrize("solver", ["compile", "auto"])
def test_adversarial_classifier_weight_scale(scale, solver):
    """With an explicit strength the fit does not depend on a common weight scale."""
    base = ag.AdversarialClassifier(strength=0.1, solver=solver).fit(X, Y)
    scaled = ag.AdversarialClassifier(strength=0.1, solver=solver).fit(
        X, Y, sample_weight=np.full(40, scale)
    )
    assert scaled.objective_ == pytest.approx(base.objective_, rel=1e-9)
    np.testing.assert_allclose(scaled.predict_proba(X), base.predict_proba(X), atol=1e-9)


@pytest.mark.parametrize("scale", [1e308, 1e-310])
def test_default_strength_does_not_read_the_weight_total(scale):
    """The default strength is a constant (DEFAULT_STRENGTH): weights whose total leaves
    float64 fit the same model as no weights at all."""
    from advgame.models.classifier import DEFAULT_STRENGTH

    base = ag.AdversarialClassifier().fit(X, Y)
    model = ag.AdversarialClassifier().fit(X, Y, sample_weight=np.full(40, scale))
    assert model.uncertainty_.lam == base.uncertainty_.lam == DEFAULT_STRENGTH
    assert model.converged_ == "certified"
    assert model.objective_ == pytest.approx(base.objective_, rel=1e-9)


@pytest.mark.parametrize("scale", [1e308, 1e-310])
def test_minimax_regressor_weight_scale(scale):
    t = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * np.random.default_rng(1).normal(size=40)
    base = ag.MinimaxRegressor(radius=0.1).fit(X, t).predict(X)
    scaled = ag.MinimaxRegressor(radius=0.1).fit(X, t, sample_weight=np.full(40, scale)).predict(X)
    np.testing.assert_allclose(scaled, base, rtol=1e-5, atol=1e-8)
    assert np.abs(base).max() > 0.1  # not the all-zero predictor


@pytest.mark.parametrize("scale", [1e308, 1e-310])
def test_minimax_classifier_weight_scale(scale):
    yy = np.where(Y == 0, -1, 1)
    base = ag.MinimaxClassifier(solver="fast", radius=0.1).fit(X, yy)
    scaled = ag.MinimaxClassifier(solver="fast", radius=0.1).fit(
        X, yy, sample_weight=np.full(40, scale)
    )
    np.testing.assert_allclose(scaled.decision_function(X), base.decision_function(X), atol=1e-6)


@pytest.mark.parametrize("scale", [1e308, 1e-310])
def test_projection_classifier_weight_scale(scale):
    base = ag.ProjectionClassifier().fit(X, Y)
    scaled = ag.ProjectionClassifier().fit(X, Y, sample_weight=np.full(40, scale))
    np.testing.assert_allclose(scaled.coef_, base.coef_, atol=1e-9)


@pytest.mark.parametrize("scale", [1e308, 1e-310])
def test_duplicated_rows_of_huge_weight_merge_without_overflow(scale):
    Xd, Yd = np.vstack([X, X[:5]]), np.concatenate([Y, Y[:5]])
    weights = np.full(45, scale)
    doubled = np.where(np.arange(40) < 5, 2.0, 1.0)  # only the weights' ratios matter
    a = ag.AdversarialClassifier(strength=0.1).fit(Xd, Yd, sample_weight=weights)
    b = ag.AdversarialClassifier(strength=0.1).fit(X, Y, sample_weight=doubled)
    np.testing.assert_allclose(a.theta_, b.theta_)


def test_weights_that_are_all_zero_are_refused():
    with pytest.raises(ValueError, match="sample_weight"):
        ZERO_ONE.compile(X, Y, sample_weight=np.zeros(40))


# --------------------------------------------------------------- (2) solver tolerances
@pytest.mark.parametrize("scale", [1e-4, 1e-8, 1e-12, 1e4, 1e6])
def test_compile_objective_does_not_depend_on_the_feature_scale(scale):
    """Exact moments: the optimum is invariant to rescaling X (theta rescales inversely)."""
    objective = ZERO_ONE.compile(scale * X, Y).solve().objective
    assert objective == pytest.approx(REFERENCE, rel=RTOL)


@pytest.mark.parametrize("scale", [1e-12, 1e-8, 1e-4, 1e4, 1e12])
@pytest.mark.parametrize("backend", ["highs", "cvxpy"])
def test_compile_objective_is_homogeneous_in_the_loss(scale, backend):
    game = ag.PredictionGame(ag.LossMatrix(scale * (1 - np.eye(3))))
    objective = game.compile(X, Y).solve(backend=backend).objective
    assert objective == pytest.approx(scale * REFERENCE, rel=RTOL)


@pytest.mark.parametrize("scale", [1e-6, 1e-10])
def test_dual_of_a_small_scale_problem_is_feasible(scale):
    program = ZERO_ONE.compile(scale * X, Y)
    assert program.dual().solve().value == pytest.approx(REFERENCE, rel=RTOL)


@pytest.mark.parametrize("scale", [1e-10, 1e-6])
def test_classifier_on_tiny_features_predicts_as_on_unit_features(scale):
    base = ag.AdversarialClassifier(uncertainty="exact", solver="compile").fit(X, Y)
    tiny = ag.AdversarialClassifier(uncertainty="exact", solver="compile").fit(scale * X, Y)
    assert np.mean(tiny.predict(scale * X) == base.predict(X)) >= 0.95


# --------------------------------------------------------------- (3) magnitudes
@pytest.mark.parametrize("scale", [1e8, 1e14, 1e20])
def test_compile_on_huge_features_is_right_or_refused(scale):
    try:
        objective = ZERO_ONE.compile(scale * X, Y).solve().objective
    except ValueError as exc:
        assert "X" in str(exc) and "scale" in str(exc)
    else:
        assert objective == pytest.approx(REFERENCE, rel=RTOL)


def test_compile_on_a_huge_loss_is_right_or_refused():
    game = ag.PredictionGame(ag.LossMatrix(1e20 * (1 - np.eye(3))))
    try:
        objective = game.compile(X, Y).solve().objective
    except ValueError as exc:
        assert "loss" in str(exc)
    else:
        assert objective == pytest.approx(1e20 * REFERENCE, rel=RTOL)


def test_feature_map_returning_huge_values_is_refused():
    def phi(X_, j):
        return np.full((len(X_), 2), 1e300) * (j + 1)

    with pytest.raises(ValueError, match="feature"):
        ag.PredictionGame("zero_one", features=phi).compile(X, Y).solve()


def test_graphical_model_on_huge_features_is_refused():
    Xs = [1e300 * np.ones((4, 2)), 1e300 * np.ones((3, 2))]
    ys = [np.array([0, 1, 1, 0]), np.array([1, 0, 1])]
    with pytest.raises(ValueError, match="feature"):
        ag.AdversarialGraphicalModel(solver="compile").fit(Xs, ys)


def test_graph_game_on_huge_potentials_is_refused():
    import networkx as nx

    game = ag.GraphGame(ag.losses.zero_one(2), nx.path_graph(3))
    small = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.2]])
    assert np.isfinite(game.value(small, np.zeros((2, 2, 2))))
    with pytest.raises(ValueError, match=r"node_potentials reach 1e\+100, over 2\^50 times"):
        game.value(1e100 * small, np.zeros((2, 2, 2)))


# --------------------------------------------------------------- (4) the top of float64
HUGE = ag.LossMatrix(1e308 * (1 - np.eye(3)))


@pytest.mark.parametrize("method", ["lp", "vertices", "closed_form", "auto"])
def test_huge_loss_value_is_finite_and_right(method):
    f = np.array([0.5, -0.25, 0.0]) * 1e308
    value = ag.Game(HUGE).value(f, method=method)
    reference = 1e308 * ag.Game(ag.losses.zero_one(3)).value(f / 1e308, method="lp")
    assert np.isfinite(value) and value == pytest.approx(reference, rel=1e-9)


def test_huge_loss_extreme_points_are_finite():
    Q, v = ag.Game(HUGE).extreme_points()
    assert np.all(np.isfinite(Q)) and np.all(np.isfinite(v))


def test_cli_explain_huge_weight_does_not_crash(capsys):
    code = main(["explain", "zero_one", "--k", "3", "--weight", "1e308"])
    out = capsys.readouterr()
    assert code in (0, 2) and "Traceback" not in out.err + out.out


def test_cli_explain_extreme_potentials_prints_no_nan(capsys):
    code = main(["explain", "zero_one", "--k", "3", "--potentials=1e308,-1e308,0"])
    out = capsys.readouterr()
    assert "nan" not in out.out.lower()
    assert code == 0 or "potentials" in out.err


def test_cli_verify_tiny_weight_does_not_report_agreement_over_nan(capsys):
    code = main(["verify", "zero_one", "--k", "3", "--weight", "1e-300"])
    out = capsys.readouterr()
    if "nan" in (out.out + out.err).lower():
        assert code != 0 and "every method agrees" not in out.out


# --------------------------------------------------------------- (5) 0/0 in the predictor
@pytest.mark.parametrize(
    "L, f, expected",
    [
        (ag.losses.zero_one(3), [1e308, -1e308, 0.0], [1.0, 0.0, 0.0]),
        (ag.LossMatrix(1e-300 * (1 - np.eye(3))), [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]),
        (ag.losses.zero_one(3), [1e300, 1e300, -1e300], [0.5, 0.5, 0.0]),
        (ag.losses.ordinal(3), [1e308, -1e308, 0.0], [1.0, 0.0, 0.0]),
    ],
)
def test_predictor_at_extreme_potentials_is_a_distribution(L, f, expected):
    p = ag.Game(L).predictor(np.array(f))
    assert np.all(np.isfinite(p)) and p.sum() == pytest.approx(1.0)
    reference = ag.Game(L).predictor(np.array(f), method="lp")
    value = ag.Game(L).value(np.array(f), method="lp")
    # optimal: the predictor's worst case equals the game value (p* need not be unique)
    worst = np.max(np.asarray(L.matrix).T @ p + np.array(f))
    assert worst == pytest.approx(value, rel=1e-9)
    assert np.all(np.isfinite(reference))
    if L is not None and expected is not None:
        assert p == pytest.approx(expected, abs=1e-9) or worst == pytest.approx(value, rel=1e-9)


def test_surrogate_overflow_is_an_error_not_inf():
    with pytest.raises((ValueError, OverflowError), match="overflow|float64"):
        ag.Game(ag.losses.zero_one(2)).surrogate(np.array([1e308, -1e308]), 1)


# --------------------------------------------------------------- unclear errors
def test_nan_label_in_compile_is_refused():
    y = Y.astype(float)
    y[3] = NAN
    with pytest.raises(ValueError, match=r"y\[3\] is nan \(1 NaN or infinite labels\)"):
        ZERO_ONE.compile(X, y)


@pytest.mark.parametrize("labels", [np.array([None] * 40, dtype=object), [object()] * 40])
def test_object_labels_in_compile_are_refused(labels):
    with pytest.raises(ValueError, match="y"):
        ZERO_ONE.compile(X, labels)


def test_feature_map_returning_strings_is_refused():
    with pytest.raises(ValueError, match="feature"):
        ag.PredictionGame("zero_one", features=lambda X_, j: np.full((len(X_), 2), "a")).compile(
            X, Y
        )


def test_feature_map_returning_sparse_is_named():
    import scipy.sparse as sp

    def phi(X_, j):
        return sp.csr_matrix(np.ones((len(X_), 2)) * j)

    try:
        program = ag.PredictionGame("zero_one", features=phi).compile(X, Y)
    except ValueError as exc:
        assert "sparse" in str(exc)
    else:
        assert np.isfinite(program.solve().objective)


def test_sparse_X_in_compile_is_named():
    import scipy.sparse as sp

    try:
        objective = ZERO_ONE.compile(sp.csr_matrix(X), Y).solve().objective
    except (TypeError, ValueError) as exc:
        assert "sparse" in str(exc)
    else:
        assert objective == pytest.approx(REFERENCE, rel=RTOL)


@pytest.mark.parametrize("tolerance", [NAN, 10.0, -1.0, "x", INF])
def test_solve_tolerance_is_validated(tolerance):
    with pytest.raises(ValueError, match="tolerance"):
        ZERO_ONE.compile(X, Y).solve(backend="highs", tolerance=tolerance)


@pytest.mark.parametrize("alpha", ["x", NAN, -0.1, 1.5, None])
def test_prediction_game_alpha_is_validated(alpha):
    with pytest.raises(ValueError, match="alpha"):
        ag.PredictionGame("abstain", alpha=alpha)


@pytest.mark.parametrize(
    "make",
    [
        lambda: ag.AdversarialClassifier(verbose="x"),
        lambda: ag.AdversarialClassifier(verbose=-1),
        lambda: ag.MinimaxClassifier(verbose="x"),
        lambda: ag.AdversarialGraphicalModel(verbose="x"),
        lambda: ag.ProjectionClassifier(verbose="x"),
    ],
)
def test_verbose_is_validated(make):
    model = make()
    with pytest.raises(ValueError, match="verbose"):
        model.fit(X, Y) if not isinstance(model, ag.AdversarialGraphicalModel) else model.fit(
            [X[:4]], [Y[:4]]
        )


@pytest.mark.parametrize(
    "make",
    [
        lambda: ag.AdversarialClassifier(solver="subgradient", random_state="x"),
        lambda: ag.AdversarialClassifier(solver="pegasos", kernel="rbf", random_state=-1),
        lambda: ag.AdversarialGraphicalModel(solver="subgradient", random_state=1.5),
        lambda: ag.MinimaxClassifier(loss="brier", randomized=True, random_state="x"),
    ],
)
def test_random_state_is_validated(make):
    model = make()
    with pytest.raises(ValueError, match="random_state"):
        if isinstance(model, ag.AdversarialGraphicalModel):
            model.fit([X[:4], X[4:8]], [Y[:4], Y[4:8]])
        elif isinstance(model, ag.MinimaxClassifier):
            model.fit(X, np.where(Y == 0, -1, 1))
        else:
            model.fit(X, Y)


def test_minimax_regressor_string_targets_are_refused():
    with pytest.raises(ValueError, match="y"):
        ag.MinimaxRegressor().fit(X, ["1"] * 40)


def test_projection_classifier_on_birkhoff_with_labels_is_refused():
    with pytest.raises(ValueError, match="polytope"):
        ag.ProjectionClassifier(polytope=ag.polytopes.Birkhoff()).fit(X, Y)


def test_loss_csv_comment_lines_are_skipped(tmp_path):
    path = tmp_path / "loss.csv"
    path.write_text("# a comment\n0,1\n1,0\n")
    np.testing.assert_array_equal(ag.LossMatrix.from_csv(path).matrix, 1 - np.eye(2))


@pytest.mark.parametrize(
    "text, match",
    [
        ("0,NA\n1,0\n", r"line 1, column 2: 'NA' is not a finite number"),
        ("0,0x1\n1,0\n", r"line 1, column 2: '0x1' is not a finite number"),
        ("# c\n0,1\n1,inf\n", r"line 3, column 2: 'inf'"),
        (
            "a,b\nx,0,1\ny,1\n",
            r"line 3: rows have different lengths \(1 losses where line 2 has 2\)",
        ),
    ],
)
def test_loss_csv_errors_name_the_file_and_line(tmp_path, text, match):
    path = tmp_path / "loss.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=match) as info:
        ag.LossMatrix.from_csv(path)
    assert "loss.csv" in str(info.value)


def test_compare_on_a_huge_column_prints_one_message(tmp_path, capsys):
    rng = np.random.default_rng(0)
    data = np.column_stack(
        [rng.normal(size=60), 1e300 * rng.normal(size=60), rng.integers(0, 3, 60)]
    )
    path = tmp_path / "data.csv"
    np.savetxt(path, data, delimiter=",", header="a,b,y", comments="")
    code = main(["compare", "--data", str(path), "--target", "y", "--splits", "1"])
    out = capsys.readouterr()
    assert code != 0
    assert out.err.count("Warning") == 0 and "b" in out.err


# --------------------------------------------------------------- more: every structure, both ends
LOSSES = {
    "zero_one": ag.losses.zero_one(4),
    "ordinal": ag.losses.ordinal(4),
    "squared": ag.losses.squared(4),
    "abstain": ag.losses.abstain(4, alpha=0.3),
    "general": ag.LossMatrix(np.random.default_rng(3).uniform(0.1, 2.0, (3, 4))),
}


@pytest.mark.parametrize("method", ["auto", "vertices", "lp"])
@pytest.mark.parametrize("scale", [1e-300, 1e-150, 1e150, 1e300])
@pytest.mark.parametrize("name", list(LOSSES))
def test_game_value_is_homogeneous_at_every_scale(name, scale, method):
    """value(c L, c f) = c value(L, f) and the players do not change, at both ends of float64
    (the game works in units of its loss scale)."""
    L = LOSSES[name]
    F = np.random.default_rng(7).normal(size=(5, 4))
    reference = ag.Game(L)
    scaled = ag.Game(ag.LossMatrix(L.matrix * scale))
    np.testing.assert_allclose(
        scaled.value(F * scale, method=method), scale * reference.value(F, method="lp"), rtol=1e-9
    )
    P = scaled.predictor(F * scale, method=method)
    worst = np.max(F[:, None, :] + np.einsum("na,ak->nk", P, L.matrix)[:, None, :], axis=(1, 2))
    np.testing.assert_allclose(worst, reference.value(F, method="lp"), rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: ZERO_ONE.compile(X, Y).solve(time_limit=NAN), "time_limit"),
        (lambda: ZERO_ONE.compile(X, Y).solve(time_limit=-1), "time_limit"),
        (lambda: ZERO_ONE.compile(X, Y).solve(time_limit="x"), "time_limit"),
        (lambda: ZERO_ONE.compile(X, Y).solve(iteration_limit=0), "iteration_limit"),
        (lambda: ZERO_ONE.compile(X, Y).solve(iteration_limit=1.5), "iteration_limit"),
        (lambda: ZERO_ONE.compile(X, Y).solve(backend="gurobi"), "backend"),
        (lambda: ag.verify_closed_form(ag.losses.zero_one(3), np.max, n=0), "n"),
        (lambda: ag.verify_closed_form(ag.losses.zero_one(3), np.max, n="x"), "n"),
        (lambda: ag.verify_closed_form(ag.losses.zero_one(3), np.max, seed="x"), "seed"),
        (lambda: ag.polytopes.Polytope.from_vertices([[0.0, NAN], [1.0, 0.0]]), "finite"),
        (lambda: ag.polytopes.Polytope.from_vertices([[0.0, INF], [1.0, 0.0]]), "finite"),
        (lambda: ag.polytopes.Polytope.from_vertices(np.zeros((0, 2))), "V must be a non-empty"),
        (lambda: ag.polytopes.Polytope.from_constraints([[1.0, NAN]], [1.0]), "finite"),
        (lambda: ag.polytopes.Polytope.from_constraints([[1.0, 0.0]], [1.0, 2.0]), "b_ub"),
        (lambda: ag.Game(ag.losses.zero_one(3)).value([1.0, NAN, 0.0]), "finite"),
        (lambda: ag.Game(ag.losses.zero_one(3)).value([1.0, 0.0]), "shape|3"),
        (lambda: ag.Game(ag.losses.zero_one(3)).value([1.0, 0.0, 0.0], method="x"), "method"),
        (lambda: ag.Game(ag.losses.zero_one(3)).surrogate([1.0, 0.0, 0.0], 3), "y|label"),
        (lambda: ag.SoftMoments(NAN), "lam"),
        (lambda: ag.SoftMoments(0.0), "lam"),
        (lambda: ag.NormBall(-1.0), "radius"),
        (lambda: ag.NormBall(0.1, norm=3), "norm"),
        (lambda: ag.AdversarialClassifier(strength=NAN).fit(X, Y), "strength"),
        (lambda: ag.AdversarialClassifier(strength="x").fit(X, Y), "strength"),
        (lambda: ag.AdversarialClassifier(tol=NAN).fit(X, Y), "tol"),
        (lambda: ag.AdversarialClassifier(max_iter=0).fit(X, Y), "max_iter"),
        (lambda: ag.ProjectionClassifier(strength=-1.0).fit(X, Y), "strength"),
        (lambda: ag.ProjectionClassifier(tol=0.0).fit(X, Y), "tol"),
        (lambda: ag.MinimaxClassifier(radius=NAN).fit(X, np.where(Y == 0, -1, 1)), "radius"),
    ],
)
def test_parameters_with_a_wrong_type_nan_or_boundary_are_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_a_closed_form_that_is_not_callable_is_a_type_error():
    with pytest.raises(TypeError, match="value must be a callable"):
        ag.verify_closed_form(ag.losses.zero_one(3), "max")


def test_a_nan_error_never_counts_as_agreement():
    from advgame.verify import MethodCheck

    for position in range(4):
        errors = [0.0, 0.0, 0.0, 0.0]
        errors[position] = NAN
        check = MethodCheck("lp", *errors, seconds=0.0, per_row_us=0.0)
        assert not check.ok() and check.max_error == INF
