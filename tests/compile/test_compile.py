"""The compiled learning program (DESIGN §2) against independent recomputation and across backends."""

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.preprocessing import StandardScaler

import advgame as ag
from advgame.compile import compile_learning
from advgame.features import CallableFeatures, KernelFeatures, Multiclass, Thresholded
from advgame.uncertainty import Exact, NormBall, SoftMoments, as_uncertainty


@pytest.fixture(scope="module")
def iris_small():
    X, y = load_iris(return_X_y=True)
    rng = np.random.default_rng(0)
    keep = rng.choice(len(y), 60, replace=False)
    return StandardScaler().fit_transform(X[keep]), y[keep]


def objective_from_game(L, fmap, uncertainty, X, y, theta):
    """The learning objective recomputed from the closed forms / LP oracle of ``Game``."""
    F = fmap.bind(X).forward(theta)
    return ag.Game(L).surrogate(F, y).mean() + uncertainty.penalty(theta, fmap)


LOSSES = [
    ag.losses.zero_one(3),
    ag.losses.ordinal(3),
    ag.losses.abstain(3, 0.3),
    ag.LossMatrix(np.random.default_rng(3).uniform(0.2, 2.0, (3, 3)) * (1 - np.eye(3))),
]
LP_SETS = [Exact(), NormBall(0.05, 1), NormBall(0.02, np.inf)]


@pytest.mark.parametrize("loss", LOSSES, ids=lambda L: str(L.structure))
@pytest.mark.parametrize("uncertainty", LP_SETS, ids=repr)
@pytest.mark.parametrize("fmap_class", [Multiclass, Thresholded])
def test_lp_backends_agree_and_match_recomputed_objective(
    loss, uncertainty, fmap_class, iris_small
):
    X, y = iris_small
    fmap = fmap_class().fit(X, 3)
    compiled = compile_learning(loss.matrix, fmap, uncertainty, X, y)
    assert compiled.kind == "LP"
    highs = compiled.solve("highs")
    cvx = compiled.solve("cvxpy")
    scale = max(1.0, abs(highs.objective))
    assert abs(highs.objective - cvx.objective) <= 1e-6 * scale
    recomputed = objective_from_game(loss.matrix, fmap, uncertainty, X, y, highs.theta)
    assert abs(recomputed - highs.objective) <= 1e-7 * scale
    # per-sample predictors are distributions
    assert np.allclose(highs.P.sum(axis=1), 1) and highs.P.min() >= 0


@pytest.mark.parametrize(
    "uncertainty", [NormBall(0.05, 2), NormBall(0.05, "group"), SoftMoments(0.05)], ids=repr
)
def test_conic_programs_match_recomputed_objective(uncertainty, iris_small):
    X, y = iris_small
    L = ag.losses.zero_one(3)
    fmap = Multiclass().fit(X, 3)
    compiled = compile_learning(L.matrix, fmap, uncertainty, X, y)
    assert compiled.kind == uncertainty.program_kind
    solution = compiled.solve("cvxpy")
    recomputed = objective_from_game(L.matrix, fmap, uncertainty, X, y, solution.theta)
    assert abs(recomputed - solution.objective) <= 1e-6 * max(1.0, solution.objective)
    # optimality: random perturbations of theta never lower the objective
    rng = np.random.default_rng(1)
    for _ in range(20):
        theta = solution.theta + 1e-2 * rng.normal(size=solution.theta.shape)
        assert objective_from_game(L.matrix, fmap, uncertainty, X, y, theta) >= recomputed - 1e-7


def test_highs_qp_matches_cvxpy_on_small_problem(iris_small):
    X, y = iris_small[0][:30], iris_small[1][:30]
    L = ag.losses.zero_one(3)
    fmap = Multiclass().fit(X, 3)
    compiled = compile_learning(L.matrix, fmap, SoftMoments(0.1), X, y)
    a, b = compiled.solve("highs", time_limit=60), compiled.solve("cvxpy")
    assert abs(a.objective - b.objective) <= 1e-6 * max(1.0, b.objective)


def test_socp_refused_by_highs(iris_small):
    X, y = iris_small
    fmap = Multiclass().fit(X, 3)
    compiled = compile_learning(ag.losses.zero_one(3).matrix, fmap, NormBall(0.1, 2), X, y)
    with pytest.raises(ag.NotApplicableError, match="cvxpy"):
        compiled.solve("highs")


def test_kernel_program_rkhs_norm(iris_small):
    X, y = iris_small
    fmap = KernelFeatures("rbf", gamma=0.5).fit(X, 3)
    L = ag.losses.zero_one(3)
    for uncertainty in (SoftMoments(0.1), NormBall(0.05, 2)):
        solution = compile_learning(L.matrix, fmap, uncertainty, X, y).solve("cvxpy")
        recomputed = objective_from_game(L.matrix, fmap, uncertainty, X, y, solution.theta)
        assert abs(recomputed - solution.objective) <= 1e-6 * max(1.0, solution.objective)
    with pytest.raises(ValueError, match="norm=2"):
        compile_learning(L.matrix, fmap, NormBall(0.1, 1), X, y)


def test_feature_operators_are_adjoint_and_match_design():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(7, 4))
    for fmap in (
        Multiclass(),
        Multiclass(fit_intercept=False),
        Thresholded(),
        KernelFeatures("poly", degree=2),
        CallableFeatures(lambda X, j: np.hstack([X * (j + 1), np.ones((len(X), 1))])),
    ):
        fmap.fit(X, 3)
        op = fmap.bind(X)
        theta = rng.normal(size=fmap.n_params)
        G = rng.normal(size=(7, 3))
        F = op.forward(theta)
        assert F.shape == (7, 3)
        np.testing.assert_allclose(F.ravel(), op.matrix() @ theta, atol=1e-10)
        np.testing.assert_allclose(np.sum(G * F), op.adjoint(G) @ theta, rtol=1e-10)


def test_thresholded_potentials_follow_seed_formula():
    X = np.array([[1.0, 2.0], [-1.0, 0.5]])
    fmap = Thresholded().fit(X, 4)
    w, eta = np.array([0.3, -0.2]), np.array([0.5, -1.0, 2.0])
    F = fmap.bind(X).forward(np.concatenate([w, eta]))
    for i in range(2):
        for y in range(1, 5):  # f_y = y w.x + sum_{t >= y} eta_t, labels 1..k
            assert np.isclose(F[i, y - 1], y * X[i] @ w + eta[y - 1 :].sum())


def test_uncertainty_validation():
    for bad in (-1.0, np.nan, np.inf, "a"):
        with pytest.raises(ValueError, match="radius"):
            NormBall(bad)
    for bad in (3, "l7", True, 0):
        with pytest.raises(ValueError, match="norm"):
            NormBall(0.1, bad)
    for bad in (0.0, -1.0, np.nan):
        with pytest.raises(ValueError, match="lam"):
            SoftMoments(bad)
    assert isinstance(as_uncertainty("linf", 0.2), NormBall)
    with pytest.raises(ValueError, match="uncertainty"):
        as_uncertainty("box")


def test_kernel_parameter_validation():
    X = np.zeros((3, 2))
    for kwargs, match in (
        ({"kernel": "sigmoid2"}, "kernel"),
        ({"gamma": -1.0}, "gamma"),
        ({"kernel": "poly", "degree": 0}, "degree"),
    ):
        with pytest.raises(ValueError, match=match):
            KernelFeatures(**kwargs).fit(X, 2)


def test_program_matrix_equals_the_stacked_terms():
    """Direct CSR assembly against the terms stacked with scipy (duplicated blocks add up)."""
    import scipy.sparse as sp

    from advgame.compile import Program

    rng = np.random.default_rng(5)
    program = Program("assembly")
    a = program.add_variables("a", 4)
    b = program.add_variables("b", 3)
    c = program.add_variables("c", 5)
    terms = {
        "one": [
            (a, sp.random(6, 4, 0.5, random_state=1)),
            (c, sp.random(6, 5, 0.3, random_state=2)),
        ],
        "two": [(b, rng.normal(size=(2, 3))), (a, sp.csr_matrix((2, 4)))],
        "twice": [
            (c, sp.random(3, 5, 0.6, random_state=3)),
            (c, sp.random(3, 5, 0.6, random_state=4)),
        ],
    }
    for name, group in terms.items():
        program.add_rows(name, group, lower=0.0)
    expected = sp.vstack(
        [
            sum(
                sp.hstack(
                    [
                        sp.csr_matrix((A.shape[0], block.start)),
                        sp.csr_matrix(A),
                        sp.csr_matrix((A.shape[0], program.n_variables - block.stop)),
                    ]
                )
                for block, A in group
            )
            for group in terms.values()
        ]
    )
    np.testing.assert_allclose(program.matrix().toarray(), expected.toarray(), atol=1e-15)


def test_multiclass_design_is_the_kronecker_product():
    import scipy.sparse as sp

    rng = np.random.default_rng(6)
    for X in (rng.normal(size=(7, 3)), np.where(rng.random((7, 3)) < 0.3, 0.0, 1.5)):
        fmap = Multiclass().fit(X, 4)
        D = fmap.bind(X).matrix()
        X1 = np.hstack([X, np.ones((7, 1))])
        np.testing.assert_array_equal(D.toarray(), sp.kron(X1, np.eye(4)).toarray())
