"""Solver failure handling: compiled programs (HiGHS, cvxpy) and the iterative solvers.

Every failing solve must raise ``SolverError`` naming the program and the status (or, for a
limit, the limit and the progress made) and never return a partial result as optimal; every
iterative method stopped by its budget must warn with ``ConvergenceWarning``.
"""

import inspect
import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.preprocessing import StandardScaler

import advgame as ag
from advgame.compile import Program
from advgame.compile.cvx import solve_cvxpy
from advgame.compile.highs import dual_program, solve_highs
from advgame.compile.program import DEFAULT_TIME_LIMIT
from advgame.exceptions import ConvergenceWarning, SolverError
from advgame.features import Multiclass
from advgame.solvers import SurrogateObjective, fit_adagrad, fit_lbfgs, refine_cutting_plane
from advgame.uncertainty import SoftMoments

BACKENDS = ["highs", "cvxpy"]


# ------------------------------------------------------------------------------ toy programs
def _toy(verdict, quadratic):
    """Two variables ``x >= 0``: an infeasible, unbounded or solvable LP / QP."""
    program = Program(f"toy {verdict} {'QP' if quadratic else 'LP'}")
    cost = {"infeasible": [1.0, 1.0], "unbounded": [0.0, -1.0], "solvable": [2.0, -1.0]}[verdict]
    x = program.add_variables("x", 2, lower=0.0, cost=cost)
    if verdict == "infeasible":  # x0 + x1 <= -1 with x >= 0
        program.add_rows("row", [(x, np.array([[1.0, 1.0]]))], upper=-1.0)
    else:  # x1 <= x0 + 1 for 'solvable'; for 'unbounded' x1 is free of any row
        row = [[-1.0, 1.0]] if verdict == "solvable" else [[1.0, 0.0]]
        program.add_rows("row", [(x, np.array(row))], upper=1.0)
    if quadratic:  # curvature on x0 only: x1 stays unbounded in the 'unbounded' program
        program.add_quadratic(slice(0, 1), np.array([[1.0]]))
    return program


def _random(kind, n=60, m=40, seed=0):
    """A random bounded LP or QP large enough that one iteration does not solve it."""
    rng = np.random.default_rng(seed)
    program = Program(f"random {kind}")
    x = program.add_variables("x", n, lower=0.0, upper=1.0, cost=rng.normal(size=n))
    program.add_rows("rows", [(x, rng.normal(size=(m, n)))], upper=1.0)
    if kind == "QP":
        program.add_quadratic(x, rng.normal(size=(n, n)) / n)
    return program


#: (verdict, quadratic, backend, message match): each backend's status in its own words.
VERDICTS = [
    ("infeasible", False, "highs", r"toy infeasible LP \(LP\): status 'Infeasible'"),
    ("infeasible", False, "cvxpy", r"toy infeasible LP \(LP\): CLARABEL: 'infeasible'"),
    ("unbounded", False, "highs", r"toy unbounded LP \(LP\): status 'Unbounded'"),
    ("unbounded", False, "cvxpy", r"toy unbounded LP \(LP\): CLARABEL: 'unbounded'"),
    ("infeasible", True, "highs", r"toy infeasible QP \(QP\): status 'Infeasible'"),
    ("infeasible", True, "cvxpy", r"toy infeasible QP \(QP\): CLARABEL: 'infeasible'"),
    ("unbounded", True, "highs", r"toy unbounded QP \(QP\): status 'Unbounded'"),
    ("unbounded", True, "cvxpy", r"toy unbounded QP \(QP\): CLARABEL: 'unbounded'"),
]


@pytest.mark.parametrize(
    "verdict, quadratic, backend, match",
    VERDICTS,
    ids=[f"{v}-{'QP' if q else 'LP'}-{b}" for v, q, b, _ in VERDICTS],
)
def test_infeasible_and_unbounded_programs_raise(verdict, quadratic, backend, match):
    with pytest.raises(SolverError, match=match):
        _toy(verdict, quadratic).solve(backend)


@pytest.mark.parametrize("quadratic", [False, True], ids=["LP", "QP"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_solvable_toy_is_optimal(quadratic, backend):
    solution = _toy("solvable", quadratic).solve(backend)
    assert solution.status.lower() == "optimal"
    # optimum: x0 = 0 (LP: x = (0, 1), objective -1; QP: the same, ½ x0² vanishes)
    np.testing.assert_allclose(solution.x, [0.0, 1.0], atol=1e-6)
    assert solution.objective == pytest.approx(-1.0, abs=1e-6)


#: (kind, backend, options, message match): a limit stops the solve; no result comes back.
LIMITS = [
    ("LP", "highs", {"iteration_limit": 1}, r"random LP \(LP\): .*\(iteration_limit=1\)"),
    ("LP", "highs", {"time_limit": 1e-6}, r"random LP \(LP\): .*\(time_limit=1e-06\)"),
    ("LP", "highs", {"time_limit": 0}, r"random LP \(LP\): status 'Time limit reached'"),
    ("QP", "highs", {"iteration_limit": 1}, r"random QP \(QP\): .*\(iteration_limit=1\)"),
    ("QP", "highs", {"time_limit": 1e-6}, r"random QP \(QP\): .*\(time_limit=1e-06\)"),
    ("LP", "cvxpy", {"time_limit": 1e-6}, r"random LP .*CLARABEL: .user_limit.*time_limit=1e-06"),
    ("QP", "cvxpy", {"time_limit": 1e-6}, r"random QP .*CLARABEL: .user_limit.*time_limit=1e-06"),
    ("QP", "cvxpy", {"max_iter": 1}, r"random QP \(QP\): CLARABEL: 'user_limit'.*limit"),
]


@pytest.mark.parametrize(
    "kind, backend, options, match",
    LIMITS,
    ids=[f"{k}-{b}-" + "-".join(f"{key}={v:g}" for key, v in o.items()) for k, b, o, _ in LIMITS],
)
def test_limits_raise_without_partial_result(kind, backend, options, match):
    program = _random(kind)
    with pytest.raises(SolverError, match=match) as error:
        program.solve(backend, **options)
    assert "no partial result is returned" in str(error.value).lower()
    assert program.solve(backend).status.lower() == "optimal"  # the limit was the only trouble


def test_highs_limit_reports_progress_and_bound():
    with pytest.raises(SolverError, match="objective .*infeasibility") as error:
        _random("QP").solve("highs", iteration_limit=1)
    assert "best lower bound" in str(error.value) and "gap" in str(error.value)


def test_cvxpy_lp_falls_back_to_highs_when_clarabel_fails(monkeypatch):
    """Clarabel raising cvxpy's SolverError (seen on degenerate LPs) is retried, then HiGHS."""
    solve = cp.Problem.solve

    def clarabel_fails(self, *args, solver=None, **kwargs):
        if solver == cp.CLARABEL:
            raise cp.error.SolverError("Solver 'CLARABEL' failed.")
        return solve(self, *args, solver=solver, **kwargs)

    monkeypatch.setattr(cp.Problem, "solve", clarabel_fails)
    assert _random("LP").solve("cvxpy").status == "optimal"
    with pytest.raises(SolverError, match=r"random QP \(QP\): CLARABEL: Solver 'CLARABEL' failed"):
        _random("QP").solve("cvxpy")  # no LP fallback for a QP


def test_cvxpy_inaccurate_warns_with_status(monkeypatch):
    solve = cp.Problem.solve

    def inaccurate(self, *args, **kwargs):
        value = solve(self, *args, **kwargs)
        self._status = cp.OPTIMAL_INACCURATE
        return value

    monkeypatch.setattr(cp.Problem, "solve", inaccurate)
    with pytest.warns(RuntimeWarning, match="'optimal_inaccurate' for random LP"):
        solution = _random("LP").solve("cvxpy")
    assert solution.status == "optimal_inaccurate"


@pytest.mark.parametrize(
    "options, match",
    [
        ({"time_limit": np.nan}, "time_limit must be a non-negative number"),
        ({"time_limit": -1}, "time_limit must be a non-negative number"),
        ({"time_limit": "1"}, "time_limit must be a non-negative number"),
        ({"iteration_limit": 0}, "iteration_limit must be a positive integer"),
        ({"iteration_limit": 2.5}, "iteration_limit must be a positive integer"),
        ({"formulation": "both"}, "formulation must be 'auto', 'dual' or 'primal'"),
    ],
    ids=[
        "time_limit=nan",
        "time_limit<0",
        "time_limit-str",
        "iteration_limit=0",
        "iteration_limit-float",
        "formulation",
    ],
)
def test_bad_limit_options(options, match):
    with pytest.raises(ValueError, match=match):
        _random("LP").solve("highs", **options)
    if "time_limit" in options:
        with pytest.raises(ValueError, match=match):
            _random("LP").solve("cvxpy", **options)


def test_default_time_limit_exists_and_is_documented():
    assert np.isfinite(DEFAULT_TIME_LIMIT) and DEFAULT_TIME_LIMIT > 0
    for function in (solve_highs, solve_cvxpy):
        assert inspect.signature(function).parameters["time_limit"].default == DEFAULT_TIME_LIMIT
        assert "time_limit" in function.__doc__
    assert "time_limit" in Program.solve.__doc__ and "DEFAULT_TIME_LIMIT" in Program.solve.__doc__


# ------------------------------------------------------------------- the dual QP formulation
def _mixed_qp(seed):
    """A strictly convex QP with every kind of row and variable bound."""
    rng = np.random.default_rng(seed)
    program = Program("mixed QP")
    x = program.add_variables(
        "x",
        6,
        lower=[-np.inf, 0.0, -1.0, -np.inf, 0.5, -2.0],
        upper=[np.inf, np.inf, 1.0, 2.0, 0.5, -1.0],
        cost=rng.normal(size=6),
    )
    A = rng.normal(size=(4, 6))
    Ax0 = A @ np.array([0.0, 0.5, 0.0, 0.0, 0.5, -1.5])  # a feasible point
    program.add_rows("ranged", [(x, A[:1])], Ax0[0] - 1.0, Ax0[0] + 1.0)
    program.add_rows("equal", [(x, A[1:2])], Ax0[1], Ax0[1])
    program.add_rows("lower", [(x, A[2:3])], lower=Ax0[2] - 0.5)
    program.add_rows("upper", [(x, A[3:4])], upper=Ax0[3] + 0.5)
    program.add_quadratic(x, rng.normal(size=(6, 6)))
    return program


def _solve_dual_with_cvxpy(program):
    """Minimise the HiGHS dual data of :func:`dual_program` with cvxpy: ``constant - min``."""
    M, cost, (z_lo, z_hi), (r_lo, r_hi), hessian, constant, shift = dual_program(program)
    assert shift.shape == (program.n_variables,)
    z = cp.Variable(M.shape[1])
    constraints = []
    for matrix, lower, upper in ((M, r_lo, r_hi), (np.eye(M.shape[1]), z_lo, z_hi)):
        for bound, sign in ((lower, 1.0), (upper, -1.0)):
            rows = np.flatnonzero(np.isfinite(bound))
            constraints.append(sign * (matrix[rows] @ z) >= sign * bound[rows])
    v = hessian.diagonal() > 0
    problem = cp.Problem(cp.Minimize(cost @ z + 0.5 * cp.sum_squares(z[v])), constraints)
    problem.solve(solver=cp.CLARABEL)
    return constant - problem.value


@pytest.mark.parametrize("seed", range(3))
def test_dual_program_has_the_primal_optimum(seed):
    """Strong duality on a QP with free, one-sided, boxed and fixed variables and every row."""
    program = _mixed_qp(seed)
    reference = program.solve("cvxpy").objective
    assert _solve_dual_with_cvxpy(program) == pytest.approx(reference, rel=1e-6, abs=1e-7)
    for formulation in ("auto", "primal"):  # 'auto' returns the dual's x only if certified
        solution = solve_highs(program, formulation=formulation)
        assert solution.objective == pytest.approx(reference, rel=1e-6, abs=1e-7)


def test_dual_formulation_failure_is_reported():
    with pytest.raises(SolverError, match=r"toy unbounded QP \(QP, through its dual\): status"):
        solve_highs(_toy("unbounded", True), formulation="dual")


def test_learning_qp_solves_through_the_dual():
    """The learning QP the primal active-set method stalls on (see compile/highs.py)."""
    X, y = load_iris(return_X_y=True)
    keep = np.random.default_rng(0).choice(len(y), 60, replace=False)
    X, y = StandardScaler().fit_transform(X[keep]), y[keep]
    fmap = Multiclass().fit(X, 3)
    compiled = ag.compile.compile_learning(
        ag.losses.zero_one(3).matrix, fmap, SoftMoments(0.02), X, y
    )
    highs = solve_highs(compiled.program, formulation="dual", time_limit=30)
    reference = compiled.program.solve("cvxpy")
    assert highs.objective == pytest.approx(reference.objective, rel=1e-6)


# ---------------------------------------------------------------------- iterative solvers
@pytest.fixture(scope="module")
def surrogate():
    X, y = load_iris(return_X_y=True)
    keep = np.random.default_rng(1).choice(len(y), 40, replace=False)
    X, y = StandardScaler().fit_transform(X[keep]), y[keep]
    fmap = Multiclass().fit(X, 3)
    weights = np.full(y.size, 1.0 / y.size)
    game = ag.Game(ag.losses.zero_one(3))
    return SurrogateObjective(game, fmap.bind(X), y, weights, SoftMoments(0.01), fmap)


def _start(surrogate):
    return np.zeros(surrogate.fmap.n_params)


def test_lbfgs_max_iter_warns(surrogate):
    with pytest.warns(ConvergenceWarning, match=r"L-BFGS .*max_iter=1 reached.*subgradient"):
        result = fit_lbfgs(surrogate, _start(surrogate) + 0.1, max_iter=1, tol=1e-12)
    assert result.limit_reached and "max_iter=1 reached" in result.message


def test_lbfgs_converged_run_is_silent(surrogate):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = fit_lbfgs(surrogate, _start(surrogate) + 0.1, max_iter=500, tol=1e-6)
    assert not result.limit_reached and "max_iter" not in result.message


def test_adagrad_budget_warns_with_tol(surrogate):
    with pytest.warns(
        ConvergenceWarning, match=r"AdaGrad .*n_epochs=1 reached.*changed the objective"
    ):
        result = fit_adagrad(surrogate, _start(surrogate), n_epochs=1, random_state=0, tol=1e-9)
    assert result.limit_reached
    quiet = fit_adagrad(surrogate, _start(surrogate), n_epochs=1, random_state=0)
    assert not quiet.limit_reached and "no convergence test" in quiet.message


def test_cutting_plane_max_rounds_warns(surrogate):
    with pytest.warns(ConvergenceWarning, match=r"cutting-plane .*(max_rounds=1 reached|stalled)"):
        result = refine_cutting_plane(surrogate, _start(surrogate), tol=1e-12, max_rounds=1)
    assert result.message != "certified" and "gap" in result.message and result.gap > 0


def test_cutting_plane_certifies_without_warning(surrogate):
    theta = fit_lbfgs(surrogate, _start(surrogate) + 0.1, max_iter=500, tol=1e-8).theta
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = refine_cutting_plane(surrogate, theta, tol=1e-6)
    assert result.message == "certified" and not result.limit_reached


@pytest.mark.parametrize("max_rounds", [0, -1, 1.5, True], ids=["0", "-1", "1.5", "True"])
def test_cutting_plane_bad_max_rounds(surrogate, max_rounds):
    with pytest.raises(ValueError, match="max_rounds must be a positive integer"):
        refine_cutting_plane(surrogate, _start(surrogate), max_rounds=max_rounds)
