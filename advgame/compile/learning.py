r"""Compile the learning problem into one convex program (DESIGN §2, seed 000 Theorem 2).

By LP duality each sample's game value is ``min_{p_i in Δ_l} max_j (L^T p_i + f_i)_j``, so

.. math::

    \min_{\theta, u, P}\ \sum_i w_i \big(u_i - f_{i, y_i}(\theta)\big) + R(\theta)
    \quad\text{s.t.}\quad u_i \ge (L^\top p_i)_j + f_{ij}(\theta)\ \ \forall i, j,\qquad
    p_i \in \Delta_l,

with ``w`` the normalised sample weights and ``R`` the uncertainty set's regulariser.  It is an
LP (exact, l1 and linf balls), a QP (soft moments) or an SOCP (l2 and group balls).  All blocks
are sparse Kronecker products; nothing loops over samples.  At the optimum ``p_i`` is the
predictor's minimax distribution for sample ``i`` (Eq. 9).
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..exceptions import SolverError
from .program import Program, Solution

__all__ = ["CompiledGame", "LearningSolution", "compile_cuts", "compile_learning"]


@dataclass
class LearningSolution:
    """``theta``, the objective, each sample's predictor ``P`` (n, l) and the raw solution."""

    theta: np.ndarray
    objective: float
    P: np.ndarray
    solution: Solution


class CompiledGame:
    """The compiled learning program plus what is needed to read its solution."""

    def __init__(self, program, n_samples, n_actions):
        self.program = program
        self.n_samples = n_samples
        self.n_actions = n_actions

    @property
    def kind(self):
        """'LP', 'QP' or 'SOCP' (set by the uncertainty set)."""
        return self.program.kind

    def describe(self):
        """Kind, variable and constraint blocks, sizes (see :meth:`Program.describe`)."""
        return self.program.describe()

    def to_cvxpy(self):
        """The program as a cvxpy ``Problem`` (and its variable vector)."""
        return self.program.to_cvxpy()

    def solve(self, backend="highs", **options):
        """Solve with ``backend='highs'`` or ``'cvxpy'``; returns a :class:`LearningSolution`."""
        try:
            solution = self.program.solve(backend=backend, **options)
        except SolverError as exc:
            if "nbounded" not in str(exc):
                raise
            raise SolverError(
                f"{exc} The learning objective is bounded below by 0 (every surrogate loss and "
                "regulariser is non-negative), so this verdict is numerical trouble, typical of "
                "unregularised kernel programs. Use backend='cvxpy' or a regularising uncertainty "
                "set (SoftMoments or NormBall)."
            ) from None
        x = solution.x
        theta = x[self.program.variables["theta"]].copy()
        P = x[self.program.variables["p"]].reshape(self.n_samples, self.n_actions)
        P = np.clip(P, 0.0, None)
        P /= P.sum(axis=1, keepdims=True)
        return LearningSolution(theta=theta, objective=solution.objective, P=P, solution=solution)

    def __repr__(self):
        return f"CompiledGame({self.program!r})"


def _objective_blocks(fmap, uncertainty, D, y, w, name):
    """``theta`` and ``u`` with the objective ``sum_i w_i (u_i - f_{i,y_i}) + R(theta)``."""
    n = y.size
    k = D.shape[0] // n
    observed = D[np.arange(n) * k + y]
    program = Program(name)
    theta = program.add_variables("theta", fmap.n_params, cost=-(observed.T @ w))
    u = program.add_variables("u", n, cost=w)
    uncertainty.add_to_program(program, theta, fmap)
    return program, theta, u


def _weights(sample_weight, n):
    return np.full(n, 1.0 / n) if sample_weight is None else sample_weight / sample_weight.sum()


def compile_learning(loss_matrix, fmap, uncertainty, X, y, sample_weight=None):
    """Build the program for a fitted feature map, an uncertainty set and data.

    Parameters
    ----------
    loss_matrix : ndarray of shape (l, k)
    fmap : FeatureMap
        Already fitted (``fmap.fit(X, k)``).
    uncertainty : UncertaintySet
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        Label indices ``0..k-1``.
    sample_weight : ndarray of shape (n,), optional
        Non-negative; normalised to sum to one.
    """
    L = np.asarray(loss_matrix, dtype=np.float64)
    l, k = L.shape
    n = X.shape[0]
    D = fmap.bind(X).matrix()
    name = f"adversarial learning ({uncertainty.program_kind})"
    program, theta, u = _objective_blocks(fmap, uncertainty, D, y, _weights(sample_weight, n), name)
    p = program.add_variables("p", n * l, lower=0.0)
    eye = sp.identity(n, format="csr")
    program.add_rows(
        "game",
        [
            (u, sp.kron(eye, np.ones((k, 1)), format="csr")),
            (p, sp.kron(eye, -L.T, format="csr")),
            (theta, -D),
        ],
        lower=0.0,
    )
    program.add_rows("simplex", [(p, sp.kron(eye, np.ones((1, l)), format="csr"))], 1.0, 1.0)
    return CompiledGame(program, n, l)


def compile_cuts(loss_matrix, fmap, uncertainty, D, y, weights, cut_rows, cut_Q):
    r"""The cutting-plane master: the learning program with each game replaced by cuts.

    Every ``q`` in the simplex gives ``value(f) >= H_L(q) + q^T f`` (``H_L(q) = min_a (Lq)_a``),
    so the cuts ``u_i >= H_L(q_t) + q_t^T f_i(theta)`` for collected pairs ``(i, q_t)`` relax the
    program: its optimum is a lower bound on the learning objective, and equals it once the
    optimal adversaries are among the cuts (seed 000 Theorem 19 gives them as ``q*``).

    Parameters
    ----------
    D : sparse matrix (n k, p)
        The bound feature map's design.
    cut_rows : ndarray of shape (m,)
        The sample of each cut.
    cut_Q : ndarray of shape (m, k)
        The adversary distribution of each cut.
    """
    L = np.asarray(loss_matrix, dtype=np.float64)
    n, k, m = y.size, L.shape[1], cut_rows.size
    program, theta, u = _objective_blocks(fmap, uncertainty, D, y, weights, "cutting-plane master")
    columns = (cut_rows[:, None] * k + np.arange(k)).ravel()
    C = sp.csr_matrix((cut_Q.ravel(), (np.repeat(np.arange(m), k), columns)), shape=(m, n * k))
    select = sp.csr_matrix((np.ones(m), (np.arange(m), cut_rows)), shape=(m, n))
    program.add_rows("cuts", [(u, select), (theta, -(C @ D))], lower=(cut_Q @ L.T).min(axis=1))
    return program
