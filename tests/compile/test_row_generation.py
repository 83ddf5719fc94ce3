"""``RowGeneration``: an LP kept in one HiGHS model as rows join it, against scipy's ``linprog``
on the grown program solved from scratch (at native scale and far from it), and its errors."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from advgame.compile import Program
from advgame.compile.highs import IPM_MIN_ROWS, RowGeneration
from advgame.exceptions import NotApplicableError, SolverError


def _random_lp(rng, n, m):
    """``min c^T x`` over the box ``[-1, 2]^n`` with ``m`` random rows ``a^T x >= b`` (the box
    keeps it bounded, ``b <= a^T x0`` at a box point ``x0`` keeps it feasible)."""
    x0 = rng.uniform(-1.0, 2.0, n)
    A = rng.normal(size=(m, n))
    b = A @ x0 - rng.uniform(0.0, 1.0, m)
    return rng.normal(size=n), A, b, (-1.0, 2.0)


def _reference(c, A, b, box):
    result = linprog(c, A_ub=-A, b_ub=-b, bounds=[box] * c.size, method="highs")
    assert result.status == 0
    return result.fun


def _program(c, A, b, box, batches):
    """The program over the first batch of rows, and a function adding the next batch."""
    program = Program("row generation test")
    x = program.add_variables("x", c.size, lower=box[0], upper=box[1], cost=c)
    cuts = np.array_split(np.arange(b.size), batches)
    program.add_rows("rows 0", [(x, sp.csr_matrix(A[cuts[0]]))], lower=b[cuts[0]])

    def add(t):
        program.add_rows(f"rows {t}", [(x, sp.csr_matrix(A[cuts[t]]))], lower=b[cuts[t]])

    return program, add, cuts


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(1, 12),
    batches=st.integers(1, 5),
    scale=st.sampled_from([1.0, 1e-9, 1e9]),
)
def test_each_round_equals_the_grown_program_solved_from_scratch(seed, n, batches, scale):
    """``scale`` multiplies the columns of ``A`` and ``c`` (so ``x`` shrinks by it and the
    optimum stays that of the unscaled LP, the reference): far from 1 the program is
    equilibrated, and so must be the rows added to it."""
    rng = np.random.default_rng(seed)
    c, A, b, box = _random_lp(rng, n, 6 * batches)
    program, add, cuts = _program(
        c * scale, A * scale, b, (box[0] / scale, box[1] / scale), batches
    )
    rows = RowGeneration(program)
    for t in range(batches):
        if t:
            add(t)
        solution = rows.solve()
        met = np.concatenate(cuts[: t + 1])
        reference = _reference(c, A[met], b[met], box)
        assert solution.status == "Optimal"
        assert solution.objective == pytest.approx(reference, rel=1e-7, abs=1e-7)
        x = solution.x * scale  # the unscaled LP's point
        assert np.all(A[met] @ x >= b[met] - 1e-7 * np.maximum(1.0, np.abs(b[met])))
        assert np.all((x >= box[0] - 1e-9) & (x <= box[1] + 1e-9))


def test_interior_point_first_then_simplex_from_its_basis():
    """From :data:`IPM_MIN_ROWS` rows the first solve is HiGHS' interior-point method; the
    rounds after it restart the simplex from the basis it left (few iterations)."""
    rng = np.random.default_rng(3)
    c, A, b, box = _random_lp(rng, 30, IPM_MIN_ROWS + 200)
    cuts = np.arange(IPM_MIN_ROWS), np.arange(IPM_MIN_ROWS, b.size)
    program = Program("row generation test")
    x = program.add_variables("x", c.size, lower=box[0], upper=box[1], cost=c)
    program.add_rows("rows 0", [(x, sp.csr_matrix(A[cuts[0]]))], lower=b[cuts[0]])
    rows = RowGeneration(program)
    first = rows.solve()
    assert first.objective == pytest.approx(_reference(c, A[cuts[0]], b[cuts[0]], box), rel=1e-8)
    program.add_rows("rows 1", [(x, sp.csr_matrix(A[cuts[1]]))], lower=b[cuts[1]])
    second = rows.solve()
    assert second.objective == pytest.approx(_reference(c, A, b, box), rel=1e-8)
    assert rows._h.getInfo().simplex_iteration_count < 200


def test_errors():
    program = Program("qp")
    x = program.add_variables("x", 2, lower=0.0, cost=[1.0, 1.0])
    program.add_quadratic(x, np.eye(2))
    with pytest.raises(NotApplicableError, match="QP"):
        RowGeneration(program)

    program = Program("lp")
    x = program.add_variables("x", 2, lower=0.0, cost=[1.0, 1.0])
    program.add_rows("rows", [(x, np.array([[1.0, 1.0]]))], lower=1.0)
    rows = RowGeneration(program)
    assert rows.solve().objective == pytest.approx(1.0)
    program.add_rows("infeasible", [(x, np.array([[1.0, 1.0]]))], upper=-1.0)
    with pytest.raises(SolverError, match="row generation|lp"):
        rows.solve()
    program.add_variables("y", 1)
    with pytest.raises(ValueError, match="adds rows only"):
        rows.solve()
    with pytest.raises(ValueError, match="time_limit"):
        RowGeneration(Program("empty"), time_limit=-1.0)
