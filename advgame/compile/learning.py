r"""Compile the learning problem into one convex program (Fathony et al. 2018a, Theorem 2).

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

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from .. import losses
from .._validation import MAX_COMPILED_MAGNITUDE, check_feature_scale, power_of_two_unit
from ..exceptions import SolverError
from ..features import KernelFeatures, Multiclass, Thresholded
from ..uncertainty import SoftMoments
from .inputs import (
    check_data,
    check_sample_weight,
    classes_of,
    declared_loss_matrix,
    fresh,
    normalised_weights,
)
from .latex import latex_where
from .program import Program
from .solution import Solution

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..features import FeatureMap
    from ..polytopes import Polytope
    from ..uncertainty import UncertaintySet
    from .cvx import NamedProblem

__all__ = [
    "ProgramView",
    "AdversaryProgram",
    "LearningData",
    "AdversarySolution",
    "LearningProgram",
    "LearningSolution",
    "build_learning",
    "add_cuts",
    "compile_cuts",
    "compile_learning",
    "learning_dual",
    "learning_latex",
    "latex_features",
    "latex_loss",
    "learning_primal",
]


@dataclass
class LearningSolution:
    """A solved learning program.

    Attributes
    ----------
    theta : ndarray
        The model parameters (the moment multipliers).
    objective : float
        The optimal learning objective.
    P : ndarray of shape (n, l), or per family
        Each sample's minimax predictor ``p*_i`` (Fathony et al. 2018a, Eq. 9); ``(n, k, k)`` doubly
        stochastic matrices for the Birkhoff game, a list of ``(N_s, l)`` node marginals for
        graph games.
    Q : ndarray of shape (n, k), per family, or None
        Each sample's worst-case conditional ``q*_i``: the multipliers of sample ``i``'s ``game``
        rows divided by its weight (Fathony et al. 2018a, Theorem 2: the adversary's side of the
        saddle point); shaped like ``P``.  None when the backend gave no multipliers.
    duals : dict
        The multipliers of every constraint group, by name.
    solution : Solution
        The raw solution of the program.
    """

    theta: np.ndarray
    objective: float
    P: object
    Q: object
    duals: dict
    solution: Solution


@dataclass
class AdversarySolution:
    """The solved adversary's program: its optimal ``value`` and each sample's ``Q`` (shaped as
    :attr:`LearningSolution.Q`)."""

    value: float
    Q: object
    solution: Solution


def _rows_to_distributions(M):
    """Rows of a non-negative (n, k) array scaled to sum to one (uniform where a row is 0)."""
    M = np.clip(M, 0.0, None)
    total = M.sum(axis=1, keepdims=True)
    uniform = np.full_like(M, 1.0 / M.shape[1])
    return np.where(total > 0, M / np.where(total > 0, total, 1.0), uniform)


class ProgramView:
    """What every compiled program shows: its kind, named blocks and groups, a summary and the
    cvxpy ``Problem`` (the views of one :class:`~advgame.compile.Program`)."""

    def __init__(self, program: Program) -> None:
        self.program = program

    @property
    def kind(self) -> str:
        """'LP', 'QP' or 'SOCP' (set by the uncertainty set)."""
        return self.program.kind

    @property
    def variables(self) -> dict[str, slice]:
        """The named variable blocks (name -> slice)."""
        return self.program.variables

    @property
    def constraints(self) -> dict[str, slice]:
        """The named constraint groups (name -> slice of rows)."""
        return self.program.rows

    def describe(self) -> str:
        """Kind, variable and constraint blocks, sizes (see :meth:`Program.describe`)."""
        return self.program.describe()

    def to_cvxpy(self) -> NamedProblem:
        """The program as a cvxpy ``Problem`` with named variables (``var_dict``) and named
        constraint groups (``constraint_groups``)."""
        return self.program.to_cvxpy()

    def __repr__(self):
        return f"{type(self).__name__}({self.program!r})"


class AdversaryProgram(ProgramView):
    """The adversary's program of a :class:`LearningProgram` (a maximisation); ``read_q`` turns
    its solution vector into each sample's ``Q``."""

    def __init__(
        self, program: Program, read_q: Callable[[np.ndarray], Any], loss_scale: float = 1.0
    ) -> None:
        super().__init__(program)
        self._read_q = read_q
        self.loss_scale = loss_scale

    def solve(self, backend: str = "auto", **options: Any) -> AdversarySolution:
        """Solve (``backend`` as :meth:`LearningProgram.solve`); returns an
        :class:`AdversarySolution` whose ``value`` equals the primal's optimum and whose ``Q``
        is a worst-case conditional for every sample."""
        solution = self.program.solve(backend=backend, **options)
        return AdversarySolution(
            value=self.loss_scale * solution.objective,
            Q=self._read_q(solution.x),
            solution=solution,
        )


class LearningProgram(ProgramView):
    r"""The compiled learning problem of a declared game: the predictor's program (the primal),
    the adversary's program (:meth:`dual`), and their LaTeX.

    The primal is Fathony et al.'s (2018a) learning problem with each game dualised:

    .. math::  \min_{\theta, u, p}\ \sum_i w_i (u_i - f_{i, y_i}(\theta)) + R(\theta)
               \quad\text{s.t.}\quad u_i \ge (L^\top p_i)_j + f_{ij}(\theta),\ p_i \in \Delta_l;

    the dual is the adversary's maximisation over each sample's conditional ``q_i`` in the
    polytope, with the uncertainty set as a constraint on the moment residual ``m(q)`` (or a
    penalty on it):

    .. math::  \max_{q, v}\ \sum_i w_i v_i - R^*(m(q)) \quad\text{s.t.}\quad
               v_i \le (L q_i)_a\ \forall a,\ q_i \in \Delta_k.

    Both have the same optimum (strong duality; tested), the primal's ``game`` multipliers are
    ``w_i q*_i`` and the dual's ``game`` multipliers are ``w_i p*_i``.  The Birkhoff and graph
    families (:mod:`advgame.compile.matching`, :mod:`advgame.compile.graph`) override only how
    ``theta``, ``P`` and ``Q`` are read from a solution.

    A loss whose largest entry is far from 1 (outside :data:`NATIVE_LOSS_SCALES`) is compiled
    in units of its scale ``s`` (a power of two): the learning problem is positively homogeneous,
    ``J(s L, R) = s J(L, R_s)`` at ``theta = s theta'`` with soft moments of ``s lam`` (norm
    balls unchanged), so a solver's absolute tolerances see numbers of order one.  ``loss_scale``
    is ``s``; the objective, ``theta`` and the adversary's value are reported in the loss's own
    units, the programs (``program``, ``to_cvxpy``, ``describe``) and the raw ``solution`` in
    units of ``s``.
    """

    def __init__(
        self,
        primal: Program,
        dual_builder: Callable[[], Program],
        n_samples: int,
        n_labels: int,
        n_actions: int,
        weights: np.ndarray,
        latex: str,
        loss_scale: float = 1.0,
    ) -> None:
        super().__init__(primal)
        self._dual_builder = dual_builder
        self._dual = None
        self.n_samples = n_samples
        self.n_labels = n_labels
        self.n_actions = n_actions
        self.weights = weights
        self._latex = latex
        self.loss_scale = loss_scale

    def dual(self) -> AdversaryProgram:
        """The adversary's program (:class:`AdversaryProgram`), built on first use."""
        if self._dual is None:
            self._dual = AdversaryProgram(self._dual_builder(), self._adversary_q, self.loss_scale)
        return self._dual

    def latex(self) -> str:
        """The primal and the dual as LaTeX (``align*`` blocks), the declared pieces
        substituted: the loss matrix, the features, the polytope, the norm and radius."""
        return self._latex

    def _repr_latex_(self):
        return self._latex

    def solve(self, backend: str = "auto", **options: Any) -> LearningSolution:
        """Solve with ``backend='auto'`` (HiGHS for an LP, cvxpy for a QP or SOCP), ``'highs'``
        (LP, QP) or ``'cvxpy'`` (any kind).

        Returns a :class:`LearningSolution` with ``theta``, the objective, each sample's predictor
        ``P`` and adversary ``Q``, and the duals of every constraint group.
        """
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
        duals = self.program.duals(solution) if solution.row_duals is not None else {}
        return LearningSolution(
            theta=self.loss_scale * self._theta(x),
            objective=self.loss_scale * solution.objective,
            P=self._predictor(x),
            Q=self._adversary_from_multipliers(duals["game"]) if duals else None,
            duals=duals,
            solution=solution,
        )

    # -------------------------------------------------- readouts (overridden by the families)
    def _theta(self, x):
        return x[self.program.variables["theta"]].copy()

    def _predictor(self, x):
        p = x[self.program.variables["p"]]
        return _rows_to_distributions(p.reshape(self.n_samples, self.n_actions))

    def _adversary_from_multipliers(self, multipliers):
        """``Q`` from the primal's ``game`` multipliers (``w_i q_i``)."""
        return _rows_to_distributions(multipliers.reshape(self.n_samples, self.n_labels))

    def _adversary_q(self, x):
        """``Q`` from the dual's solution vector."""
        q = x[self._dual.program.variables["q"]]
        return _rows_to_distributions(q.reshape(self.n_samples, self.n_labels))


def _observed(D, y, w):
    """``sum_i w_i phi(x_i, y_i)``: the empirical moments."""
    n = y.size
    k = D.shape[0] // n
    return D[np.arange(n) * k + y].T @ w


@dataclass(frozen=True)
class LearningData:
    """What the predictor's and the adversary's programs of the simplex family are built from.

    ``minus_D`` is the negated feature design ``-Phi`` (``vec F = Phi theta``), ``observed`` the
    empirical moments ``sum_i w_i phi(x_i, y_i)`` and ``w`` the normalised sample weights.
    """

    L: np.ndarray
    fmap: FeatureMap
    uncertainty: UncertaintySet
    minus_D: sp.csr_matrix
    observed: np.ndarray
    w: np.ndarray


def learning_primal(data: LearningData, name: str = "adversarial learning") -> Program:
    """The predictor's program (blocks ``theta``, ``u``, ``p``; rows ``game``, ``simplex``)."""
    L, uncertainty, w = data.L, data.uncertainty, data.w
    l, k = L.shape
    n = w.size
    program = Program(f"{name} ({uncertainty.program_kind})")
    theta = program.add_variables("theta", data.fmap.n_params, cost=-data.observed, label="-b")
    u = program.add_variables("u", n, cost=w, label="w")
    uncertainty.add_to_program(program, theta, data.fmap)
    p = program.add_variables("p", n * l, lower=0.0)
    eye = sp.identity(n, format="csr")
    program.add_rows(
        "game",
        [
            (u, sp.kron(eye, np.ones((k, 1)), format="csr"), "kron(I_n, 1_k)"),
            (p, sp.kron(eye, -L.T, format="csr"), "-kron(I_n, L^T)"),
            (theta, data.minus_D, "-Phi"),
        ],
        lower=0.0,
    )
    program.add_simplex_rows("simplex", p, l, "kron(I_n, 1_l^T)")
    return program


def learning_dual(data: LearningData, name: str = "adversary") -> Program:
    """The adversary's program (blocks ``q``, ``v``, moment-gap variables; rows ``simplex``,
    ``game``, ``moments`` and the uncertainty set's)."""
    L, uncertainty, w = data.L, data.uncertainty, data.w
    l, k = L.shape
    n = w.size
    program = Program(f"{name} ({uncertainty.program_kind})", sense="maximize")
    q = program.add_variables("q", n * k, lower=0.0)
    v = program.add_variables("v", n, cost=w, label="w")
    eye = sp.identity(n, format="csr")
    program.add_simplex_rows("simplex", q, k, "kron(I_n, 1_k^T)")
    program.add_rows(
        "game",
        [
            (q, sp.kron(eye, L, format="csr"), "kron(I_n, L)"),
            (v, -sp.kron(eye, np.ones((l, 1)), format="csr"), "-kron(I_n, 1_l)"),
        ],
        lower=0.0,
    )
    weighted = (data.minus_D.T @ sp.diags(-np.repeat(w, k))).tocsr()
    uncertainty.add_to_dual(program, [(q, weighted, "Phi^T W")], data.observed, data.fmap)
    label_moments(program, "b")
    return program


def compile_learning(
    loss_matrix: ArrayLike,
    fmap: FeatureMap,
    uncertainty: UncertaintySet,
    X: np.ndarray,
    y: np.ndarray,
    sample_weight: np.ndarray | None = None,
    latex: str = "",
) -> LearningProgram:
    """The :class:`LearningProgram` for a fitted feature map, an uncertainty set and data.

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
    latex : str
        The programs' LaTeX (:meth:`LearningProgram.latex`), written by the declaration.
    """
    L = np.asarray(loss_matrix, dtype=np.float64)
    l, k = L.shape
    n = X.shape[0]
    w = normalised_weights(sample_weight, n)
    scale = compiled_loss_scale(L)
    if scale != 1.0:  # in units of the loss scale (see LearningProgram)
        L, uncertainty = L / scale, uncertainty_in_loss_units(uncertainty, scale)
    minus_D = fmap.bind(X).matrix()
    check_feature_scale(minus_D.data, "the feature map's output", MAX_COMPILED_MAGNITUDE)
    observed = _observed(minus_D, y, w)
    minus_D.data *= -1.0  # in place: the programs hold this one copy of the design
    data = LearningData(L, fmap, uncertainty, minus_D, observed, w)
    return LearningProgram(
        learning_primal(data), partial(learning_dual, data), n, k, l, w, latex, scale
    )


#: Largest loss entries a program is compiled at as they are; beyond, in units of the loss
#: scale.  Measured on the zero-one learning problem (40 rows, exact moments): HiGHS keeps
#: 1e-15 relative accuracy at every scale, Clarabel 2e-8 at a largest entry of 1e-2 but 4e-6 at
#: 1e-4 and 3e-5 at 1e-5 (its absolute feasibility and gap tolerances).
NATIVE_LOSS_SCALES = (2.0**-7, 2.0**7)


def compiled_loss_scale(L: np.ndarray) -> float:
    """1 for a loss whose largest entry is within :data:`NATIVE_LOSS_SCALES`, else the power of
    two that puts it in ``[1, 2)`` (``advgame._validation.power_of_two_unit``)."""
    return power_of_two_unit(L, NATIVE_LOSS_SCALES)


def uncertainty_in_loss_units(uncertainty: UncertaintySet, scale: float) -> UncertaintySet:
    """The uncertainty set of the problem in units of the loss scale ``s``: ``J(s L, lam) = s
    J(L, s lam)`` at ``theta = s theta'`` for soft moments; exact moments and norm balls (their
    regulariser is positively homogeneous of degree one) are unchanged."""
    if isinstance(uncertainty, SoftMoments):
        return SoftMoments(uncertainty.lam * scale)
    return uncertainty


def build_learning(
    loss: str | losses.LossMatrix,
    features: FeatureMap,
    uncertainty: UncertaintySet,
    polytope: Polytope,
    X: ArrayLike,
    y: ArrayLike,
    sample_weight: ArrayLike | None = None,
    alpha: float = 0.5,
) -> LearningProgram:
    """The simplex family's :class:`LearningProgram` from a declaration's parts and data.

    Parameters
    ----------
    loss : LossMatrix or str
        A loss matrix over the classes of ``y``, or a name built for them (``alpha``: the
        abstention cost of ``'abstain'``).
    features : FeatureMap
        The declared (unfitted) feature map; a fitted copy builds the design.
    uncertainty : UncertaintySet
    polytope : Polytope
        The probability simplex (the only polytope of this family).
    X : array-like of shape (n, d)
    y : array-like of shape (n,)
        Labels; the classes are in the loss matrix's label order when its labels name them
        (:func:`~advgame.compile.inputs.classes_of`), else sorted.
    sample_weight : array-like of shape (n,), optional
    alpha : float
    """
    X, y = check_data(X, y)
    classes, y_index = classes_of(y, loss)
    sample_weight = check_sample_weight(sample_weight, X.shape[0])
    k = classes.size
    if k < 2 and not (isinstance(loss, losses.LossMatrix) and loss.n_labels == 1):
        raise ValueError(f"y must contain at least 2 classes; got {list(classes)}.")
    L = declared_loss_matrix(loss, k, alpha, classes=None if isinstance(loss, str) else classes)
    fmap = fresh(features).fit(X, k)
    latex = learning_latex(L, loss, alpha, features, uncertainty)
    return compile_learning(L.matrix, fmap, uncertainty, X, y_index, sample_weight, latex=latex)


def compile_cuts(
    loss_matrix: ArrayLike,
    fmap: FeatureMap,
    uncertainty: UncertaintySet,
    D: sp.csr_matrix,
    y: np.ndarray,
    weights: np.ndarray,
    cut_rows: np.ndarray,
    cut_Q: np.ndarray,
) -> Program:
    r"""The cutting-plane master: the learning program with each game replaced by cuts.

    Every ``q`` in the simplex gives ``value(f) >= H_L(q) + q^T f`` (``H_L(q) = min_a (Lq)_a``),
    so the cuts ``u_i >= H_L(q_t) + q_t^T f_i(theta)`` for collected pairs ``(i, q_t)`` relax the
    program: its optimum is a lower bound on the learning objective, and equals it once the
    optimal adversaries are among the cuts (Theorem 19 of Fathony et al. 2018a gives them as
    ``q*``).  More cuts join it by :func:`add_cuts`.

    Parameters
    ----------
    D : sparse matrix (n k, p)
        The bound feature map's design.
    cut_rows : ndarray of shape (m,)
        The sample of each cut.
    cut_Q : ndarray of shape (m, k)
        The adversary distribution of each cut.
    """
    program = Program("cutting-plane master")
    program.add_variables("theta", fmap.n_params, cost=-_observed(D, y, weights))
    program.add_variables("u", y.size, cost=weights)
    uncertainty.add_to_program(program, program.variables["theta"], fmap)
    add_cuts(program, loss_matrix, D, cut_rows, cut_Q, "cuts")
    return program


def add_cuts(
    program: Program,
    loss_matrix: ArrayLike,
    D: sp.csr_matrix,
    cut_rows: np.ndarray,
    cut_Q: np.ndarray,
    name: str,
) -> slice:
    r"""Add to a master of :func:`compile_cuts` the cuts ``u_i >= H_L(q_t) + q_t^T f_i(theta)``
    (``H_L(q) = min_a (Lq)_a``, Fathony et al. 2018a, Theorem 19's game value as a maximum
    over ``q``) of the samples ``cut_rows`` and adversaries ``cut_Q``.

    Parameters
    ----------
    program : Program
        A master built by :func:`compile_cuts` (its blocks ``theta`` and ``u``).
    loss_matrix : array-like
        ``L[a, y]``, one row per action and one column per label.
    D : sparse matrix (n k, p)
        The bound feature map's design.
    cut_rows : ndarray of shape (m,)
        The sample of each cut.
    cut_Q : ndarray of shape (m, k)
        The adversary distribution of each cut.
    name : str
        The new row group's name (unique in ``program``).

    Returns
    -------
    slice
        The rows of the new cuts.
    """
    L = np.asarray(loss_matrix, dtype=np.float64)
    theta, u = program.variables["theta"], program.variables["u"]
    n, k, m = u.stop - u.start, L.shape[1], cut_rows.size
    columns = (cut_rows[:, None] * k + np.arange(k)).ravel()
    C = sp.csr_matrix((cut_Q.ravel(), (np.repeat(np.arange(m), k), columns)), shape=(m, n * k))
    select = sp.csr_matrix((np.ones(m), (np.arange(m), cut_rows)), shape=(m, n))
    return program.add_rows(name, [(u, select), (theta, -(C @ D))], lower=(cut_Q @ L.T).min(axis=1))


def label_moments(program: Program, label: str) -> None:
    """Name, in the cvxpy view of a dual ``program``, the right-hand side of its ``moments`` rows
    ``label`` (the primal's name for the observed moments) and the radius of an uncertainty
    ball's rows (``l1 ball``, ``linf ball``) ``radius``."""
    program.label_bounds("moments", label)
    for group in ("l1 ball", "linf ball"):
        if group in program.rows:
            program.label_bounds(group, "radius")


def moments_of(symbol: str) -> Callable[[str], str]:
    """A ``rename`` for :func:`latex_programs`: an uncertainty set's moment residual ``m(q)``
    (and a block's ``m_b(q)``) written as a function of the family's variable ``symbol``."""
    return lambda text: re.sub(r"m(_b)?\(q\)", lambda match: f"m{match[1] or ''}({symbol})", text)


def latex_programs(
    primal: list[str],
    dual: list[str],
    residual: str,
    where: list[str],
    uncertainty: UncertaintySet,
    dual_note: str,
    primal_note: str = "the predictor's regularised risk",
    rename: Callable[[str], str] = str,
) -> str:
    """The LaTeX layout every family shares: the primal's ``aligned`` block (its objective
    ``primal[0]`` plus the uncertainty set's regulariser, then its constraints), the dual's (its
    objective ``dual[0]`` minus the set's penalty, its constraints, the set's moment constraint
    if any and the moment ``residual``) and the ``where`` block (:func:`latex_where`: the
    definitions ``where``, then the uncertainty set's), each between ``$$``; ``rename`` adapts
    the set's LaTeX to the family's symbols."""
    regularizer = rename(uncertainty.latex_regularizer())
    penalty, constraint = (None if t is None else rename(t) for t in uncertainty.latex_constraint())
    primal = [
        r"\begin{aligned}",
        *_objective(primal, f"+ {regularizer}" if regularizer else ""),
        r"\end{aligned}",
    ]
    dual = [r"\begin{aligned}", *_objective(dual, f"- {penalty}" if penalty else "")]
    if constraint:
        dual.append(rf"& {constraint} \quad (\text{{moments}})\\")
    dual += [residual, r"\end{aligned}"]
    definitions = [*where, *(rename(entry) for entry in uncertainty.latex_where())]
    return (
        f"% primal: {primal_note}\n$$\n"
        + "\n".join(primal)
        + f"\n$$\n% dual: {dual_note}\n$$\n"
        + "\n".join(dual)
        + "\n$$\n"
        + latex_where(definitions)
    )


def _objective(lines: list[str], term: str) -> list[str]:
    """A program's lines with ``term`` (the regulariser or the penalty) on a line of its own
    after the objective's lines (those before the first ``\\text{s.t.}``)."""
    end = next((i for i, line in enumerate(lines) if line.startswith(r"\text{s.t.}")), 1)
    objective = [line + r"\\" for line in lines[:end]]
    if term:
        objective.append(rf"& \qquad {term}\\")
    return [*objective, *lines[end:]]


#: The simplex family's sets and indices, defined in its ``where`` block.
SIMPLEX_SYMBOLS = [
    r"(x_i, y_i),\ i = 1, \dots, n: \text{the samples}",
    r"j, y \in [k] = \{1, \dots, k\}: \text{labels},\ a \in [l]: \text{actions}",
    r"\Delta_m = \{p \in \mathbb R^m : p \ge 0,\ \textstyle\sum_j p_j = 1\}",
]
#: The sample weights, as every family defines them.
SAMPLE_WEIGHTS = r"w_i = \tfrac{1}{n} \text{ (or the normalised sample weights)}"


def learning_latex(
    L: losses.LossMatrix | None,
    declared: str | losses.LossMatrix | ArrayLike,
    alpha: float | None,
    fmap: FeatureMap,
    uncertainty_set: UncertaintySet,
) -> str:
    r"""The simplex family's primal and dual learning programs as LaTeX: the loss matrix ``L``
    (None while a named loss waits for ``k``: ``declared`` and ``alpha`` describe it), the
    feature map and the uncertainty set substituted."""
    primal = [
        r"\min_{\theta,\, u,\, p}\quad & \sum_{i=1}^{n} w_i\,\big(u_i - "
        r"\theta^\top\phi(x_i, y_i)\big)",
        r"\text{s.t.}\quad & u_i \ge (L^\top p_i)_j + \theta^\top \phi(x_i, j)"
        r" \quad \forall i,\ \forall j \in [k] \quad (\text{game})\\",
        r"& p_i \in \Delta_l \quad \forall i \quad (\text{simplex})",
    ]
    dual = [
        r"\max_{q,\, v}\quad & \sum_{i=1}^{n} w_i\, v_i",
        r"\text{s.t.}\quad & v_i \le (L q_i)_a \quad \forall i,\ \forall a \in [l]"
        r" \quad (\text{game})\\",
        r"& q_i \in \Delta_k \quad \forall i \quad (\text{simplex})\\",
    ]
    residual = (
        r"& m(q) = \sum_{i=1}^{n} w_i \Big(\sum_{j} q_{ij}\, \phi(x_i, j) - "
        r"\phi(x_i, y_i)\Big)"
    )
    where = [
        *SIMPLEX_SYMBOLS,
        latex_loss(L, declared, alpha),
        *latex_features(fmap),
        SAMPLE_WEIGHTS,
    ]
    note = "the adversary's maximisation over each sample's conditional"
    return latex_programs(primal, dual, residual, where, uncertainty_set, note)


def latex_loss(
    L: losses.LossMatrix | None, declared: str | losses.LossMatrix | ArrayLike, alpha: float | None
) -> str:
    """The loss matrix's structure in LaTeX (its numbers for a general matrix of size <= 5)."""
    if L is None:
        name = declared if isinstance(declared, str) else "general"
        structure = losses.Structure(name, 1.0, alpha if name == "abstain" else None)
    else:
        structure = L.structure
    c = "" if structure.weight in (None, 1.0) else f"{structure.weight:g}\\,"
    forms = {
        "zero_one": rf"L_{{ay}} = {c}\mathbf{{1}}[a \ne y]",
        "ordinal": rf"L_{{ay}} = {c}|a - y|",
        "squared": rf"L_{{ay}} = {c}(a - y)^2",
        "abstain": rf"L_{{ay}} = {c}\mathbf{{1}}[a \ne y],\ L_{{\text{{abstain}}, y}} = "
        rf"{c}{structure.alpha if structure.alpha is not None else alpha:g}",
        "permutation_hamming": rf"L_{{\hat\pi\pi}} = {c}\sum_j \mathbf{{1}}[\hat\pi_j \ne \pi_j]",
    }
    if structure.kind in forms:
        return forms[structure.kind]
    if L is not None and max(L.shape) <= 5:
        rows = r" \\ ".join(" & ".join(f"{x:g}" for x in row) for row in L.matrix)
        return r"L = \begin{pmatrix} " + rows + r" \end{pmatrix}"
    size = rf" \in \mathbb R^{{{L.n_actions} \times {L.n_labels}}}" if L is not None else ""
    return rf"L{size}: \text{{a general loss matrix}}"


def latex_features(fmap: FeatureMap) -> list[str]:
    """The feature map's definitions for a ``where`` block (its formula, then its symbols)."""
    if isinstance(fmap, Multiclass):
        return [
            r"\phi(x, y) = e_y \otimes [x; 1]",
            r"e_y \in \mathbb R^k: \text{the } y\text{-th unit vector}",
        ]
    if isinstance(fmap, Thresholded):
        return [
            r"\phi(x, y) = [\,y\,x;\ \mathbf{1}[y \le 1], \dots, \mathbf{1}[y \le k-1]\,]",
        ]
    if isinstance(fmap, KernelFeatures):
        return [
            r"\theta^\top\phi(x, j) = \textstyle\sum_{m} A_{mj} K(x_m, x)",
            r"\|\theta\|^2 = \operatorname{tr}(A^\top K A),\ K: \text{the "
            + str(fmap.kernel)
            + r" kernel}",
        ]
    return [r"\phi \text{ given by the user}"]
