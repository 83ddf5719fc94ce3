"""The cvxpy view of every family's programs (``program.to_cvxpy()``, ``str(problem)``) names
every constant and prints no cvxpy internals, and naming them changes no optimum: the printed
problem solves to the HiGHS backend's value (LP and QP) and to its dual's (every kind)."""

import re

import cvxpy as cp
import numpy as np
import pytest
from family_cases import CASES

from advgame.compile.cvx import readable

#: What the printouts must not show: cvxpy's internal atom names and argument lists, a raw
#: vector of numbers, a variable fixed by ``name == number``, an unnamed scaled label.
INTERNALS = {
    "quad_over_lin": r"quad_over_lin",
    "PnormApprox": r"PnormApprox|Pnorm\(",
    "SOC": r"\bSOC\(",
    "reshape": r"reshape\(reshape",
    "default arguments": r"None, False",
    "raw vector": r"\[\s*-?\d+\.\d*(?:e[-+]\d+)?\s+-?\d",
    "fixed variable": r"(?m)(?:^|subject to)\s*[A-Za-z_]\w* == -?[\d.]+\s*$",
    "scaled label": r"eps 1 @",
    "sqrt label": r"sqrt\(lam\) I",
}
#: Names the printouts must show (``(primal, dual)`` patterns), by case.
NAMES = {
    "zero_one exact": ([r"-b @ theta"], [r"Phi\^T W @ q == b\b", r"\n  b: 9 \(parameter\)"]),
    "zero_one l1": ([r"eps \* linf_bound", r"eps = 0\.1"], [r"== b\b"]),
    "zero_one l2": (
        [r"norm2\(G @ theta\) <= l2_bound", r"\n  G: 9 x 9 identity"],
        [r"norm2\(I @ moment_gap\) <= radius", r"radius = 0\.1 \(parameter\)", r"== b\b"],
    ),
    "zero_one soft": (
        [r"0\.5 \* lam \* sum_squares\(theta\)", r"lam = 0\.1"],
        [r"\(1/lam\) \* sum_squares\(moment_gap\)", r"\(1/lam\) = 10"],
    ),
    "abstain linf": ([r"eps \* sum\(l1_bound\)"], [r"== b\b"]),
    "ordinal group": ([r"norm2\(S_0 @ theta\) <= group_bound_0"], [r"<= radius\[2\]"]),
    "birkhoff hamming": ([r"eps \* linf_bound"], [r"== sum_i w_i vec\(P_i\)"]),
    "graph chain": ([r"-b_obs @ theta"], [r"E @ mu == b\b", r"== b_obs\b"]),
    "polytope unit cube": (
        [r"<= 1_n ⊗ b\b", r"norm2\(G @ theta\)"],
        [r"== Phi\^T \(w ⊗ emb\(y\)\)", r"radius = 0\.1"],
    ),
    "fenchel-young brier": (
        [r"lam_reg \* sum_squares\(theta\)"],
        [r"== Phi\^T \(w ⊗ emb\(y\)\)", r"\(1/lam\) \* sum_squares\(moment_gap\)"],
    ),
    "fenchel-young shannon": (
        [r"\+ w ⊗ 1 @ exp\(r\)", r"lam_reg \* sum_squares\(theta\)"],
        [r"\+ w ⊗ 1 @ entr\(mu\)", r"== Phi\^T \(w ⊗ emb\(y\)\)"],
    ),
}
#: The cases with a compiled :class:`~advgame.compile.program.Program` (the minimax family's
#: cvxpy problem is built by its own compiler; the oracle game has none).
PROGRAM_CASES = [name for name in CASES if name in NAMES]


def test_every_program_case_is_checked():
    assert set(PROGRAM_CASES) == set(NAMES)
    assert set(CASES) - set(NAMES) == {"minimax log", "polytope oracle cube"}


@pytest.mark.parametrize("name", PROGRAM_CASES)
def test_printout_names_every_constant_and_no_internals(name):
    game, X, y = CASES[name]()
    program = game.compile(X, y)
    for problem, patterns in zip((program.to_cvxpy(), program.dual().to_cvxpy()), NAMES[name]):
        text = str(problem)
        for what, pattern in INTERNALS.items():
            assert not re.search(pattern, text), (what, text)
        for pattern in patterns:
            assert re.search(pattern, text), (pattern, text)
        assert problem.is_dpp(), text  # the named constants are parameters


def test_the_minimax_printout_uses_the_user_facing_functions():
    """The minimax family builds its cvxpy problem directly: its printout names cvxpy's atoms as
    a user calls them, names the radii and the moment gap, and adds no zero penalty."""
    game, X, y = CASES["minimax log"]()
    program = game.compile(X, y)
    primal, dual = program.to_cvxpy(), program.dual().to_cvxpy()
    for problem in (primal, dual):
        text = str(problem)
        for what in ("quad_over_lin", "PnormApprox", "SOC", "default arguments", "raw vector"):
            assert not re.search(INTERNALS[what], text), (what, text)
        assert "reshape" not in text and "\n  radius: 2 (parameter)" in text
        assert problem.is_dpp(), text
    primal, dual = str(primal), str(dual)
    assert "log_sum_exp(" in primal and "radius[1] * norm2(" in primal
    assert "sum(entr(q), axis=1)" in dual and "norm2(moment_gap[1, 0:2]) <= radius[1]" in dual
    assert "-0.0" not in dual


@pytest.mark.parametrize("name", PROGRAM_CASES)
def test_the_named_problem_has_the_compiled_optimum(name):
    """The printed problem solves (Clarabel) to the HiGHS optimum of the same program (LP, QP)
    and to its dual's value; ``program.solve('cvxpy')`` reads the same point back."""
    game, X, y = CASES[name]()
    program = game.compile(X, y)
    primal, dual = program.to_cvxpy(), program.dual().to_cvxpy()
    value = primal.solve(solver=cp.CLARABEL)
    assert dual.solve(solver=cp.CLARABEL) == pytest.approx(value, abs=1e-6)
    via_cvxpy = program.solve(backend="cvxpy")
    assert via_cvxpy.objective == pytest.approx(value, abs=1e-6)
    if program.kind in ("LP", "QP"):
        assert program.solve(backend="highs").objective == pytest.approx(value, abs=1e-6)


def test_a_parameter_value_changes_the_optimum_as_the_constant_would():
    """The radius is a parameter: a new value re-solves the same problem to the optimum of the
    program compiled with that radius (DPP: the problem is not rebuilt)."""
    import advgame as ag

    X, y = CASES["zero_one exact"]()[1:]
    problem = ag.PredictionGame("zero_one", uncertainty=ag.NormBall(0.1, 2)).compile(X, y)
    problem = problem.dual().to_cvxpy()
    (radius,) = [p for p in problem.parameters() if p.name() == "radius"]
    radius.value = np.array([0.3])
    value = problem.solve(solver=cp.CLARABEL)
    other = ag.PredictionGame("zero_one", uncertainty=ag.NormBall(0.3, 2)).compile(X, y)
    assert value == pytest.approx(other.dual().solve(backend="cvxpy").value, abs=1e-6)


def test_readable_writes_the_user_facing_functions():
    text = "0.5 * quad_over_lin(PnormApprox(x, 2), 1.0, None, False) + Sum(abs(y), None, False)"
    assert readable(text) == "0.5 * sum_squares(norm2(x)) + sum(abs(y))"
    assert readable("log_sum_exp(F, 1, False)") == "log_sum_exp(F, axis=1)"
    assert readable("quad_over_lin(x, t, None, False)") == "quad_over_lin(x, t, None, False)"
