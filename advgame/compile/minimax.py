r"""Compile Farnia & Tse's minimax learning problem and its maximum-entropy dual (cvxpy).

Farnia and Tse, "A Minimax Approach to Supervised Learning" (2016), Theorem 3: the maximum
conditional entropy problem over the moment set (Eq. 19) equals the regularised generalised linear
model (Eq. 21)

.. math::  \min_A \; \sum_i w_i \big[F(A x_i) - \theta(y_i)^\top A x_i\big]
           + \sum_r \epsilon_r \|A_r\|_*,
           \qquad F(f) = \max_{q} \; H(q) + f^\top q,

whose dual is the adversary's maximum-entropy program

.. math::  \max_{q_i} \; \sum_i w_i H(q_i) \quad\text{s.t.}\quad
           \Big\|\sum_i w_i \big(\theta(y_i) - q_i\big)_r x_i\Big\| \le \epsilon_r.

``theta(Y)`` is the one-hot encoding of the first ``k - 1`` classes (the last class is pinned at
potential 0) or the real target ``Y`` for the quadratic loss; intercept moments (the class
marginals, or the target's mean) are matched exactly.  ``H`` is the loss's generalised entropy:
``min_a (L q)_a`` for a loss matrix (an LP with the predictor's ``p_i`` as in the adversarial
family), ``1 - ||q||^2`` (Brier, a QP), Shannon's (an exponential-cone program) or
``rho^2 - m^2`` (the quadratic loss on a target with ``E[Y^2] <= rho^2``).  The log entropy
needs exponential cones, so this family is compiled to cvxpy directly (HiGHS solves its LPs
through cvxpy, Clarabel the rest).
"""

from __future__ import annotations

import copy
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import as_float_array, check_finite
from ..exceptions import SolverError
from ..losses import Entropy, LossMatrix
from .inputs import (
    check_data,
    check_sample_weight,
    classes_of,
    declared_loss_matrix,
    normalised_weights,
)
from .latex import latex_where
from .learning import AdversarySolution, LearningSolution, _rows_to_distributions
from .solution import Solution

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..features import Multiclass
    from ..polytopes import Polytope
    from ..uncertainty import MomentBalls
    from .cvx import NamedProblem

__all__ = [
    "MinimaxAdversary",
    "MinimaxProgram",
    "build_minimax",
    "compile_minimax",
    "minimax_kind",
    "minimax_latex",
]

#: Clarabel's gap and feasibility tolerances when no ``tol`` is given.
CLARABEL_TOL = 1e-8


def minimax_kind(loss: Entropy | LossMatrix, balls: MomentBalls) -> str:
    """'LP', 'QP', 'SOCP' or 'EXP' (exponential cones) of the primal and the dual."""
    if isinstance(loss, Entropy) and loss.kind == "log":
        return "EXP"
    if not np.any(balls.radius) or (balls.norm in (1, "inf", "l1inf") and not balls.squared):
        penalty = "LP"
    else:
        penalty = "QP" if balls.squared and balls.norm == 2 else "SOCP"
    if isinstance(loss, Entropy):  # Brier and the quadratic loss are quadratic
        return "SOCP" if penalty == "SOCP" else "QP"
    return penalty


class MinimaxProgram:
    r"""The compiled minimax learning problem (the primal, Eq. 21) and its dual (:meth:`dual`).

    Both are :class:`~advgame.compile.cvx.NamedProblem`\ s: named variables (``A`` the moment
    multipliers, one row per encoded target; ``u`` and ``p`` the per-sample game of a loss
    matrix; ``tau`` Brier's threshold; ``q`` / ``m`` the adversary's conditionals) and named
    constraint groups (``game``, ``simplex``, ``intercept``, ``moments``, ``bounds``).
    """

    def __init__(
        self,
        loss: Entropy | LossMatrix,
        balls: MomentBalls,
        X1: np.ndarray,
        Theta: np.ndarray,
        weights: np.ndarray,
        fit_intercept: bool,
        latex: str,
    ) -> None:
        self.loss, self.balls = loss, balls
        self.X1, self.Theta, self.weights = X1, Theta, weights
        self.fit_intercept = fit_intercept
        self.n_samples, self.n_features = X1.shape[0], X1.shape[1] - bool(fit_intercept)
        self.regression = isinstance(loss, Entropy) and loss.kind == "quadratic"
        self.n_rows = 1 if self.regression else Theta.shape[1] - 1
        self._latex = latex
        self._primal = self._dual = None

    def _named(self):
        """The data as named cvxpy constants, so that printed programs read as the math."""
        import cvxpy as cp

        d = self.n_features
        return (
            cp.Constant(self.weights, name="w"),
            cp.Constant(self.X1, name="[X, 1]" if self.fit_intercept else "X"),
            cp.Constant(self.X1[:, :d], name="X"),
            cp.Constant(self.Theta, name="y" if self.regression else "Theta"),
        )

    def _radius(self):
        """The balls' radii as the cvxpy parameter ``radius`` (printed by name, DPP)."""
        from .cvx import _parameter

        return _parameter(self.balls.radii, "radius", nonneg=True)

    @property
    def kind(self) -> str:
        """'LP', 'QP', 'SOCP' or 'EXP' (exponential cones, the log loss)."""
        return minimax_kind(self.loss, self.balls)

    # ------------------------------------------------------------------------------ primal
    def _potentials(self, A):
        """``f_i = (A x_i, 0)`` for classification (last class pinned), ``a^T x_i`` else."""
        import cvxpy as cp

        Z = self._named()[1] @ A.T
        if self.regression:
            return Z
        return cp.hstack([Z, cp.Constant(np.zeros((self.n_samples, 1)), name="0")])

    def _conjugate(self, F):
        """``sum_i w_i F(f_i)`` as a cvxpy expression, with its variables' constraint groups."""
        import cvxpy as cp

        n, w, loss = self.n_samples, self._named()[0], self.loss
        if isinstance(loss, LossMatrix):  # F(f) = min_{p in simplex} max_j (L^T p + f)_j
            u = cp.Variable(n, name="u")
            p = cp.Variable((n, loss.n_actions), nonneg=True, name="p")
            game = cp.reshape(u, (n, 1), order="C") @ _ones(loss.n_labels)
            groups = {
                "game": [(game >= p @ cp.Constant(loss.matrix, name="L") + F, "lower")],
                "simplex": [(cp.sum(p, axis=1) == 1, "equal")],
            }
            return w @ u, groups
        if loss.kind == "log":
            return w @ cp.log_sum_exp(F, axis=1), {}
        if loss.kind == "brier":  # F(f) = 1 + min_tau tau + sum_j (f_j - tau)_+^2 / 4
            tau = cp.Variable(n, name="tau")
            excess = cp.pos(F - cp.reshape(tau, (n, 1), order="C") @ _ones(F.shape[1]))
            return 1 + w @ (tau + cp.sum(cp.square(excess), axis=1) / 4), {}
        z = F[:, 0]
        if loss.rho is None:
            return w @ cp.square(z) / 4, {}
        return loss.rho**2 + w @ cp.huber(z / 2, loss.rho), {}

    def to_cvxpy(self) -> NamedProblem:
        """The primal (Eq. 21) as a :class:`NamedProblem`; ``var_dict['A']`` holds ``A``."""
        import cvxpy as cp

        from .cvx import NamedProblem

        if self._primal is None:
            A = cp.Variable((self.n_rows, self.X1.shape[1]), name="A")
            F = self._potentials(A)
            fit, groups = self._conjugate(F)
            w, _, _, Theta = self._named()
            fit -= w @ cp.sum(cp.multiply(Theta, F), axis=1)
            penalty = self.balls.cvxpy(A[:, : self.n_features], self._radius())
            self._primal = NamedProblem(cp.Minimize(fit + penalty), groups)
        return self._primal

    def solve(
        self, backend: str = "auto", tol: float | None = None, **options: Any
    ) -> LearningSolution:
        """Solve the primal: ``backend='auto'`` (HiGHS through cvxpy for an LP, else Clarabel),
        ``'highs'`` (LP only) or ``'cvxpy'`` (Clarabel).  ``tol`` sets Clarabel's gap and
        feasibility tolerances (default 1e-8).

        Returns a :class:`LearningSolution`: ``theta`` is ``A``, ``P`` each sample's Bayes act
        (the predictor's ``p*_i`` for a loss matrix, ``∇F`` for an entropy, the conditional mean
        for the quadratic loss) and ``Q`` its worst-case conditional (``∇F(A x_i)``, or the
        ``game`` multipliers over ``w_i`` for a loss matrix).
        """
        problem = self.to_cvxpy()
        what = f"minimax program ({self.balls!r})"
        status, seconds = _solve(problem, self.kind, backend, tol, options, what)
        A = np.asarray(problem.var_dict["A"].value, dtype=float)
        duals = {
            name: [np.asarray(c.dual_value, dtype=float) for c, _ in pairs]
            for name, pairs in problem.constraint_groups.items()
        }
        duals = {name: values[0] if len(values) == 1 else values for name, values in duals.items()}
        F = self.X1 @ A.T
        if not self.regression:
            F = np.hstack([F, np.zeros((self.n_samples, 1))])
        if isinstance(self.loss, LossMatrix):
            P = _rows_to_distributions(np.asarray(problem.var_dict["p"].value, dtype=float))
            Q = _rows_to_distributions(duals["game"] / self.weights[:, None])
        else:
            game = _entropy_game(self.loss)
            Q = game.adversary(F)
            P = Q[:, 0] if self.regression else Q
        x = np.concatenate([np.ravel(v.value) for v in problem.variables()])
        solution = Solution(x, float(problem.value), status, "cvxpy", seconds)
        return LearningSolution(A, float(problem.value), P, Q, duals, solution)

    # -------------------------------------------------------------------------------- dual
    def _entropy(self, Q):
        """``sum_i w_i H(q_i)`` for the cvxpy variable ``Q``, with its constraint groups."""
        import cvxpy as cp

        n, w, loss = self.n_samples, self._named()[0], self.loss
        if self.regression:
            bounds = {} if loss.rho is None else {"bounds": [(cp.abs(Q[:, 0]) <= loss.rho, "cone")]}
            return (0.0 if loss.rho is None else loss.rho**2) - w @ cp.square(Q[:, 0]), bounds
        groups = {"simplex": [(cp.sum(Q, axis=1) == 1, "equal")]}
        if isinstance(loss, LossMatrix):  # H_L(q) = min_a (L q)_a
            v = cp.Variable(n, name="v")
            game = cp.reshape(v, (n, 1), order="C") @ _ones(loss.n_actions)
            groups["game"] = [(game <= Q @ cp.Constant(loss.matrix.T, name="L^T"), "upper")]
            return w @ v, groups
        if loss.kind == "brier":
            return 1 - w @ cp.sum(cp.square(Q), axis=1), groups
        return w @ cp.sum(cp.entr(Q), axis=1), groups

    def dual(self) -> MinimaxAdversary:
        """The adversary's maximum-entropy program (:class:`MinimaxAdversary`)."""
        if self._dual is None:
            self._dual = MinimaxAdversary(self)
        return self._dual

    # ------------------------------------------------------------------------------ report
    def latex(self) -> str:
        """The primal and the dual as LaTeX, the declared loss, encoding and balls substituted."""
        return self._latex

    def _repr_latex_(self):
        return self._latex

    def describe(self) -> str:
        """Kind, named variables with their shapes and named constraint groups, for both sides."""
        lines = [f"minimax program ({self.kind}): n = {self.n_samples}, d = {self.n_features}"]
        for side, problem in (("primal", self.to_cvxpy()), ("dual", self.dual().to_cvxpy())):
            variables = ", ".join(f"{v.name()} {v.shape}" for v in problem.variables())
            groups = ", ".join(problem.constraint_groups) or "none"
            lines.append(f"  {side}: variables {variables}; constraint groups {groups}")
        return "\n".join(lines)

    def __repr__(self):
        return f"MinimaxProgram({self.kind}, n={self.n_samples}, d={self.n_features})"


class MinimaxAdversary:
    """The dual of a :class:`MinimaxProgram`: each sample's conditional ``q_i`` (``m_i``, the
    conditional mean, for the quadratic loss) maximising the average entropy over the moment set."""

    def __init__(self, program: MinimaxProgram) -> None:
        self.program = program
        self._problem = None

    @property
    def kind(self) -> str:
        return self.program.kind

    def to_cvxpy(self) -> NamedProblem:
        """The adversary's program as a :class:`NamedProblem` (``var_dict['q']`` or ``['m']``)."""
        import cvxpy as cp

        from .cvx import NamedProblem

        if self._problem is None:
            pg = self.program
            name = "m" if pg.regression else "q"
            shape = (pg.n_samples, pg.Theta.shape[1])
            Q = cp.Variable(shape, nonneg=not pg.regression, name=name)
            entropy, groups = pg._entropy(Q)
            t = pg.n_rows
            _, _, X, Theta = pg._named()
            W = cp.Constant(np.broadcast_to(pg.weights[:, None], (pg.n_samples, t)), name="w")
            residual = cp.multiply(W, Theta[:, :t] - Q[:, :t])
            if pg.fit_intercept:  # the intercept's moments are matched exactly
                groups["intercept"] = [(cp.sum(residual, axis=0) == 0, "equal")]
            # named, so that each ball's row prints as moment_gap[i, :], not as an index into a
            # product
            G = cp.Variable((t, X.shape[1]), name="moment_gap")
            groups["moment_gap"] = [(G == residual.T @ X, "equal")]
            penalty, balls = pg.balls.cvxpy_conjugate(G, pg._radius())
            if balls:
                groups["moments"] = [(c, "cone") for c in balls]
            if isinstance(penalty, cp.Expression):  # squared balls (no penalty: nothing printed)
                entropy = entropy - penalty
            self._problem = NamedProblem(cp.Maximize(entropy), groups)
        return self._problem

    def solve(
        self, backend: str = "auto", tol: float | None = None, **options: Any
    ) -> AdversarySolution:
        """Solve (``backend`` as :meth:`MinimaxProgram.solve`); returns an
        :class:`AdversarySolution` whose ``value`` equals the primal's optimum."""
        problem = self.to_cvxpy()
        what = f"adversary program ({self.program.balls!r})"
        status, seconds = _solve(problem, self.kind, backend, tol, options, what)
        variable = problem.var_dict["m" if self.program.regression else "q"]
        Q = np.asarray(variable.value, dtype=float)
        if not self.program.regression:
            Q = _rows_to_distributions(Q)
        x = np.concatenate([np.ravel(v.value) for v in problem.variables()])
        solution = Solution(x, float(problem.value), status, "cvxpy", seconds)
        return AdversarySolution(float(problem.value), Q, solution)

    def __repr__(self):
        return f"MinimaxAdversary({self.kind}, n={self.program.n_samples})"


def _ones(k):
    import cvxpy as cp

    return cp.Constant(np.ones((1, k)), name="1^T")


def _entropy_game(loss):
    from ..game import Game

    return Game(loss)


def _solve(problem, kind, backend, tol, options, what):
    """Solve a cvxpy problem of the given kind; returns ``(status, seconds)`` or raises."""
    import cvxpy as cp

    if backend not in ("auto", "highs", "cvxpy"):
        raise ValueError(f"backend must be 'auto', 'highs' or 'cvxpy'; got {backend!r}.")
    if backend == "highs" and kind != "LP":
        raise ValueError(
            f"backend='highs' solves LPs; this {what} is {'an' if kind == 'EXP' else 'a'} "
            f"{kind}: use backend='auto' or 'cvxpy'."
        )
    if kind == "LP" and backend != "cvxpy":
        solver, settings = cp.HIGHS, {}
    else:
        accuracy = CLARABEL_TOL if tol is None else min(tol, CLARABEL_TOL)
        solver = cp.CLARABEL
        settings = {f"tol_{k}": accuracy for k in ("gap_abs", "gap_rel", "feas")}
    start = time.perf_counter()
    try:
        with np.errstate(invalid="ignore"):  # cvxpy's bound propagation meets inf * 0
            problem.solve(solver=solver, **{**settings, **options})
    except cp.error.SolverError as exc:
        raise SolverError(
            f"the {what} failed ({solver}): {exc} It is unbounded or infeasible when a radius is "
            "0 on separable classes, or (regression) when rho is small next to the targets; "
            "raise radius or rho."
        ) from exc
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        raise SolverError(
            f"the {what} ended with status {problem.status!r} ({solver}); it has no optimum "
            "when a radius is 0 on separable classes, or (regression) when rho is small next "
            "to the targets: raise radius or rho."
        )
    return problem.status, time.perf_counter() - start


def compile_minimax(
    loss: Entropy | LossMatrix,
    balls: MomentBalls,
    X: np.ndarray,
    Theta: np.ndarray,
    sample_weight: np.ndarray | None = None,
    fit_intercept: bool = True,
) -> MinimaxProgram:
    r"""The minimax learning program of ``loss`` with the moment balls ``balls`` (Farnia and
    Tse 2016, Theorem 3: Eq. 21 and, as :meth:`MinimaxProgram.dual`, the maximum-entropy
    program over the moment set of Eq. 19).

    .. math::  \min_A \sum_i w_i \big[F(A \tilde x_i) - \theta(y_i)^\top A \tilde x_i\big]
               + \sum_r \epsilon_r \|A_r\|_*

    Parameters
    ----------
    loss : LossMatrix or Entropy
        A loss matrix (``F`` is its game value) or a generalised entropy (Brier, log,
        quadratic).
    balls : MomentBalls
        Bound to ``A``'s shape (:meth:`MomentBalls.bind`).
    X : ndarray of shape (n, d)
    Theta : ndarray of shape (n, k) or (n, 1)
        The encoded targets ``theta(y_i)``: one-hot rows (the last class is pinned at potential
        0), or the real targets of the quadratic loss.
    sample_weight : ndarray of shape (n,), optional
        Normalised to ``w``; uniform by default.
    fit_intercept : bool
        Append the constant feature (its moments are matched exactly).

    Returns
    -------
    MinimaxProgram
    """
    n = X.shape[0]
    w = normalised_weights(sample_weight, n)
    X1 = np.hstack([X, np.ones((n, 1))]) if fit_intercept else X
    latex = minimax_latex(loss, balls, fit_intercept)
    return MinimaxProgram(loss, balls, X1, Theta, w, fit_intercept, latex)


def build_minimax(
    loss: str | Entropy | LossMatrix,
    features: Multiclass,
    uncertainty: MomentBalls,
    polytope: Polytope,
    X: ArrayLike,
    y: ArrayLike,
    sample_weight: ArrayLike | None = None,
    alpha: float = 0.5,
) -> MinimaxProgram:
    """The minimax family's :class:`MinimaxProgram` from a declaration's parts and data: the
    targets encoded as Farnia and Tse's ``theta(Y)`` (one-hot of the first ``k - 1`` classes,
    or the real ``Y`` of the quadratic loss), the moment balls bound to ``A``'s shape.

    ``loss``: a generalised entropy, a loss matrix or a name built for the classes of ``y``
    (``alpha`` the abstention cost of ``'abstain'``); ``features``: ``[x; 1]``
    (``features.fit_intercept``); ``polytope``: the simplex.
    """
    X, y = check_data(X, y)
    sample_weight = check_sample_weight(sample_weight, X.shape[0])
    if isinstance(loss, Entropy) and loss.kind == "quadratic":
        targets = as_float_array("y (real targets)", y)
        check_finite("y (real targets)", targets)
        Theta, t = targets[:, None], 1
    else:
        classes, y_index = classes_of(y, loss)
        k = classes.size
        if k < 2:
            raise ValueError(f"y must contain at least 2 classes; got {list(classes)}.")
        if isinstance(loss, Entropy):
            if loss.n_labels != k:
                raise ValueError(
                    f"loss = {loss!r} has {loss.n_labels} labels but y has {k} classes."
                )
        else:
            loss = declared_loss_matrix(
                loss, k, alpha, classes=None if isinstance(loss, str) else classes
            )
        Theta, t = np.eye(k)[y_index], k - 1
    balls = copy.deepcopy(uncertainty).bind(t, X.shape[1])
    return compile_minimax(
        loss, balls, X, Theta, sample_weight, fit_intercept=features.fit_intercept
    )


# ----------------------------------------------------------------------------------- LaTeX
_DUAL_NORM = {"inf": "1", 2: "2", 1: r"\infty"}
_BALL_NORM = {"inf": r"\infty", 2: "2", 1: "1"}


def _latex_conjugate(loss):
    """``(F, H)`` of the loss as LaTeX."""
    if not isinstance(loss, Entropy):  # a loss matrix, or a name built for k classes
        return (
            r"F(f) = \min_{p \in \Delta_l} \max_j \big(L^\top p + f\big)_j",
            r"H(q) = \min_a (L q)_a",
        )
    return {
        "log": (r"F(f) = \log \sum_j e^{f_j}", r"H(q) = -\sum_j q_j \log q_j"),
        "brier": (
            r"F(f) = 1 + \min_\tau \Big[\tau + \tfrac14 \sum_j (f_j - \tau)_+^2\Big]",
            r"H(q) = 1 - \|q\|_2^2",
        ),
        "quadratic": (
            r"F(z) = z^2 / 4" if loss.rho is None else r"F(z) = \rho^2 + \mathrm{huber}_\rho(z/2)",
            r"H(m) = -m^2" if loss.rho is None else r"H(m) = \rho^2 - m^2",
        ),
    }[loss.kind]


def _latex_radius(balls, symbol):
    """The radius: its value when it is one number, else the symbol (values listed after)."""
    radius = np.asarray(balls.radius, dtype=float)
    return f"{float(radius):g}" if radius.ndim == 0 else symbol


def _latex_balls(balls):
    """``(penalty on A, the adversary's moment constraint or penalty on G)``."""
    if balls.norm == "group":
        eps = _latex_radius(balls, r"\epsilon_g")
        return (
            rf"\sum_r \sum_g {eps} \|A_{{r,g}}\|_2",
            rf"\|G_{{r,g}}\|_2 \le {eps} \quad \forall r, g",
        )
    if balls.norm == "l1inf":
        eps = _latex_radius(balls, r"\epsilon")
        return rf"{eps} \sum_j \max_r |A_{{rj}}|", rf"\max_j \sum_r |G_{{rj}}| \le {eps}"
    eps = _latex_radius(balls, r"\lambda_r" if balls.squared else r"\epsilon_r")
    penalty = rf"\|A_r\|_{{{_DUAL_NORM[balls.norm]}}}"
    ball = rf"\|G_r\|_{{{_BALL_NORM[balls.norm]}}}"
    if balls.squared:
        return rf"\sum_r {eps} {penalty}^2", rf"\sum_r {ball}^2 / (4 \cdot {eps})"
    return rf"\sum_r {eps}\, {penalty}", rf"{ball} \le {eps} \quad \forall r"


def minimax_latex(
    loss: Entropy | LossMatrix | str, balls: MomentBalls, fit_intercept: bool = True
) -> str:
    r"""The minimax family's primal (Eq. 21) and maximum-entropy dual as LaTeX (``loss``: an
    :class:`Entropy`, or a loss matrix or its name), in the layout of the other families."""
    F, H = _latex_conjugate(loss)
    penalty, ball = _latex_balls(balls)
    regression = isinstance(loss, Entropy) and loss.kind == "quadratic"
    target = "y_i" if regression else r"\theta(y_i)"
    q, x = ("m" if regression else "q"), (r"\tilde x_i" if fit_intercept else "x_i")
    residual = rf"w_i \big({target} - {q}_i\big)_{{1..t}}"
    constraints = []
    if not balls.squared:
        constraints.append(rf"& {ball} \quad (\text{{moments}})")
    if fit_intercept:
        constraints.append(rf"& \textstyle\sum_i {residual} = 0 \quad (\text{{intercept}})")
    if not regression:
        constraints.append(r"& q_i \in \Delta_k \quad \forall i \quad (\text{simplex})")
    elif loss.rho is not None:
        constraints.append(r"& |m_i| \le \rho \quad \forall i \quad (\text{bounds})")
    constraints.append(rf"& G = \textstyle\sum_i {residual}\, x_i^\top")
    objective = rf"\sum_{{i=1}}^n w_i\, H({q}_i)" + (
        rf"\\ & \qquad - {ball}" if balls.squared else ""
    )
    encoding = (
        [r"\theta(y) = y,\ t = 1"]
        + (
            []
            if loss.rho is None
            else [rf"\rho = {loss.rho:g},\ \mathrm{{huber}}_\rho: \text{{the Huber function}}"]
        )
        if regression
        else [
            r"\theta(y) = (\mathbf{1}[y = j])_{j < k},\ t = k - 1",
            r"f = (A \tilde x, 0) \in \mathbb R^k",
        ]
    )
    where = [
        r"(x_i, y_i),\ i = 1, \dots, n: \text{the samples},\ j \in [k]: \text{labels}",
        F,
        H,
        *encoding,
        *([r"\tilde x = [x; 1]"] if fit_intercept else []),
        r"A \in \mathbb R^{t \times d}: \text{the weights},\ A_r: \text{its row } r",
        r"G \in \mathbb R^{t \times d}: \text{the moment residual},\ G_r: \text{its row } r",
        *_latex_radii(balls),
        *(
            []
            if isinstance(loss, Entropy)
            else [r"L \in \mathbb R^{l \times k}: \text{the loss matrix}"]
        ),
        *(
            []
            if regression
            else [r"\Delta_m = \{p \in \mathbb R^m : p \ge 0,\ \textstyle\sum_j p_j = 1\}"]
        ),
        r"w_i = \tfrac{1}{n} \text{ (or the normalised sample weights)}",
    ]
    return (
        "\n".join(
            [
                "% primal: Farnia and Tse's regularised generalised linear model (Eq. 21)",
                "$$",
                r"\begin{aligned}",
                rf"\min_{{A}}\quad & \sum_{{i=1}}^n w_i \big[F(A {x}) - {target}^\top A {x}\big]\\",
                rf"& \qquad + {penalty}",
                r"\end{aligned}",
                "$$",
                "% dual: the adversary's maximum-entropy program over the moment balls",
                "$$",
                r"\begin{aligned}",
                rf"\max_{{{q}}}\quad & {objective}\\",
                r"\text{s.t.}\quad " + "\\\\\n".join(constraints),
                r"\end{aligned}",
                "$$",
            ]
        )
        + "\n"
        + latex_where(where)
    )


def _latex_radii(balls):
    """The ``where`` entries of the balls' radii and groups (none for one number)."""
    radius = np.asarray(balls.radius, dtype=float)
    entries = []
    if balls.norm == "group":
        entries.append(r"A_{r,g}, G_{r,g}: \text{the coordinates of group } g \text{ of row } r")
    if radius.ndim:
        symbol = {"group": r"\epsilon_g", "l1inf": r"\epsilon"}.get(
            balls.norm, r"\lambda_r" if balls.squared else r"\epsilon_r"
        )
        values = ", ".join(f"{value:g}" for value in radius.ravel())
        entries.append(rf"{symbol} \in \{{{values}\}}: \text{{the radii}}")
    return entries
