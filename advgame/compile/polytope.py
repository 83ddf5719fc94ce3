r"""Compile a game over any polytope with a bilinear loss into one convex program.

The outputs are the vertices of a polytope :math:`\mathcal P \subset \mathbb R^d` (one-hot
vectors: the simplex; 0/1 vectors: unit cube and knapsack; cumulative 0/1 vectors: the order
simplex; rank vectors: the permutahedron; permutation matrices: Birkhoff; node and edge
indicators: a tree's marginal polytope; Blondel 2019, §4).  The loss is affine in each side's
embedding,

.. math::  \ell(a, y) = c + u^\top a + v^\top y + a^\top M y ,

and the features are ``phi(x, y) = emb(y) ⊗ [x; 1]``, so the potentials are linear in the
embedding, :math:`f(y) = g^\top \mathrm{emb}(y)` with :math:`g = \Theta^\top [x; 1]`
(``theta = vec(Theta)``, ``Theta`` of shape ``(d_x + 1, d)``: :class:`~advgame.features.Multiclass`
with one "class" per coordinate).

**The game is bilinear.**  A mixed strategy over the vertices enters the expected loss only
through its mean, a point of :math:`\mathcal P`, and every point of :math:`\mathcal P` is such a
mean.  So the per-sample game over the vertex sets equals the bilinear game over the polytope
(von Neumann's minimax theorem on two compact convex sets),

.. math::  \mathrm{value}(g) = \max_{\mu \in \mathcal P} \min_{\nu \in \mathcal P}
           c + u^\top\nu + v^\top\mu + \nu^\top M \mu + g^\top\mu
           = \min_{\nu \in \mathcal P} \max_{\mu \in \mathcal P} (\text{the same}).

**Dualising an inner LP** (the technique of Fathony et al. 2018a, §3 and Theorem 2, which
Fathony et al. 2018c apply to the Birkhoff polytope).  Let the polytope have the linear
description (:meth:`~advgame.polytopes.Polytope.constraints`; an extended formulation with
auxiliary variables ``z`` where that is smaller)

.. math::  \mathcal P = \{\mu : \exists z,\ A [\mu; z] \le b,\ E [\mu; z] = e\},
           \qquad A = [A_\mu\ A_z],\ E = [E_\mu\ E_z].

For a fixed predictor ``nu`` the adversary's problem is the LP
:math:`\max_{\mu \in \mathcal P} h^\top \mu` with :math:`h = v + M^\top\nu + g`, whose LP dual
is :math:`\min_{\lambda \ge 0, \eta}\ b^\top\lambda + e^\top\eta` s.t.
:math:`A_\mu^\top\lambda + E_\mu^\top\eta = h`, :math:`A_z^\top\lambda + E_z^\top\eta = 0`.
Substituting it into the learning problem
:math:`\min_\theta \sum_i w_i [\mathrm{value}(g_i) - g_i^\top \mathrm{emb}(y_i)] + R(\theta)`
gives **the predictor's program** (the primal, :func:`polytope_primal`)

.. math::

    \min_{\theta, \nu, \lambda \ge 0, \eta}\ & \sum_i w_i \big(c + u^\top\nu_i + b^\top\lambda_i
        + e^\top\eta_i - g_i(\theta)^\top \mathrm{emb}(y_i)\big) + R(\theta) \\
    \text{s.t.}\ & A_\mu^\top\lambda_i + E_\mu^\top\eta_i - M^\top\nu_i - g_i(\theta) = v,
        \quad A_z^\top\lambda_i + E_z^\top\eta_i = 0 \quad (\text{game}, \text{game aux}) \\
    & \nu_i \in \mathcal P \text{ (with its auxiliary variables)} \quad (\text{polytope}),

with ``R`` the uncertainty set's regulariser (Farnia and Tse 2016, Theorem 3).  The other way
round, for a fixed adversary ``mu`` the predictor's LP :math:`\min_{\nu\in\mathcal P} (u +
M\mu)^\top\nu` has the dual :math:`\max_{\alpha \ge 0, \beta} -b^\top\alpha - e^\top\beta`
s.t. :math:`A_\mu^\top\alpha + E_\mu^\top\beta = -(u + M\mu)`, :math:`A_z^\top\alpha +
E_z^\top\beta = 0`, so the generalised entropy :math:`H(\mu) = \min_{\nu \in \mathcal P}
\ell(\nu, \mu)` is an LP's optimum and, exchanging ``min_theta`` and ``max_mu``, **the
adversary's program** (the dual, :func:`polytope_dual`) is

.. math::

    \max_{\mu, \alpha \ge 0, \beta}\ & \sum_i w_i \big(c + v^\top\mu_i - b^\top\alpha_i
        - e^\top\beta_i\big) - R^*(m(\mu)) \\
    \text{s.t.}\ & A_\mu^\top\alpha_i + E_\mu^\top\beta_i + M\mu_i = -u,
        \quad A_z^\top\alpha_i + E_z^\top\beta_i = 0, \quad \mu_i \in \mathcal P, \\
    & m(\mu) = \sum_i w_i\, (\mu_i - \mathrm{emb}(y_i)) \otimes [x_i; 1].

Both are LPs for exact moments and the l1 / linf balls (a QP for soft moments, an SOCP for the
l2 and group balls) with ``O(n (d + rows + aux))`` variables, polynomial where the polytope has
exponentially many vertices (the permutahedron's ``k!``, through its ``k^2`` Birkhoff extended
formulation).  With the simplex, ``M = -I`` and ``c = 1`` it is the zero-one game of
:mod:`advgame.compile.learning`; the tests check this and every polytope against the same game
written over its enumerated vertices.  At the optimum ``nu_i`` is the predictor's mean
embedding, the primal's ``game`` multipliers are ``w_i mu_i`` and ``mu_i`` the adversary's.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from ..exceptions import NotApplicableError
from .inputs import (
    check_inputs,
    check_sample_weight,
    fresh,
    normalised_weights,
    polytope_outputs,
)
from .learning import (
    SAMPLE_WEIGHTS,
    LearningProgram,
    label_moments,
    latex_features,
    latex_programs,
    moments_of,
)
from .program import Program

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..features import FeatureMap
    from ..polytopes import Polytope
    from ..uncertainty import UncertaintySet

__all__ = [
    "PolytopeData",
    "PolytopeProgram",
    "build_polytope",
    "compile_polytope",
    "linear_description",
    "polytope_dual",
    "polytope_data",
    "polytope_latex",
    "polytope_symbols",
    "polytope_primal",
]


def _csr(A: Any, rows: int, columns: int) -> sp.csr_matrix:
    """``A`` (dense, sparse or None for no rows) as a CSR matrix with ``columns`` columns."""
    if A is None:
        return sp.csr_matrix((rows, columns))
    return sp.csr_matrix(A, dtype=np.float64)


@dataclass(frozen=True)
class PolytopeData:
    r"""What both programs of a polytope game are built from.

    ``M``, ``u``, ``v``, ``c``: the bilinear loss; ``A``, ``b``, ``E``, ``e``: the polytope's
    linear description over ``[mu; z]`` (``d`` coordinates, ``n_aux`` auxiliary variables);
    ``minus_D`` the negated design ``-kron([X, 1], I_d)`` (``vec G = D theta``), ``observed``
    the empirical moments ``sum_i w_i phi(x_i, y_i)``, ``w`` the normalised sample weights;
    ``entropy`` the generalised entropy of a Fenchel-Young game (``'brier'``, ``'log'``; empty
    for a bilinear loss).
    """

    M: np.ndarray
    u: np.ndarray
    v: np.ndarray
    c: float
    A: sp.csr_matrix
    b: np.ndarray
    E: sp.csr_matrix
    e: np.ndarray
    n_aux: int
    fmap: FeatureMap
    uncertainty: UncertaintySet
    minus_D: sp.csr_matrix
    observed: np.ndarray
    w: np.ndarray
    entropy: str = ""

    @property
    def d(self) -> int:
        """The embedding's dimension."""
        return self.M.shape[0]

    def per_sample(self, matrix: Any) -> sp.csr_matrix:
        """``kron(I_n, matrix)``: one copy of ``matrix`` per sample."""
        return sp.kron(sp.identity(self.w.size, format="csr"), matrix, format="csr")

    def weighted(self, vector: np.ndarray) -> np.ndarray:
        """``w ⊗ vector``: each sample's copy of ``vector`` times its weight."""
        return np.kron(self.w, vector)

    def split(self, matrix: sp.csr_matrix) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        """The columns of the point and of the auxiliary variables."""
        return matrix[:, : self.d], matrix[:, self.d :]


def _add_points(
    program: Program, data: PolytopeData, name: str, cost: tuple[np.ndarray, str]
) -> slice:
    """One point of the polytope per sample: blocks ``name`` (``n d``) and ``name_aux`` (``n
    n_aux``), rows ``polytope`` (``A [p; z] <= b``) and ``polytope eq`` (``E [p; z] = e``)."""
    n = data.w.size
    point = program.add_variables(name, n * data.d, cost=cost[0], label=cost[1])
    blocks = [point]
    if data.n_aux:
        blocks.append(program.add_variables(f"{name}_aux", n * data.n_aux))
    for group, matrix, bounds, label, rhs in (
        ("polytope", data.A, (None, data.b), "A", "1_n ⊗ b"),
        ("polytope eq", data.E, (data.e, data.e), "E", "1_n ⊗ e"),
    ):
        if not matrix.shape[0]:
            continue
        parts = data.split(matrix)
        terms = [
            (block, data.per_sample(part), f"kron(I_n, {label}_{side})")
            for block, part, side in zip(blocks, parts, ("mu", "z"))
        ]
        low, high = (None if x is None else np.tile(x, n) for x in bounds)
        program.add_rows(group, terms, -np.inf if low is None else low, high)
        program.label_bounds(group, rhs)
    return point


def _add_multipliers(
    program: Program, data: PolytopeData, names: tuple[str, str], sign: float
) -> list[tuple[slice, sp.csr_matrix, str]]:
    """The multipliers of the other side's polytope rows (``names``: the inequality rows',
    non-negative, and the equality rows', free), with cost ``sign (w ⊗ b)`` and ``sign (w ⊗
    e)``; returns the terms ``A^T`` and ``E^T`` of their ``game`` rows (point columns first,
    auxiliary columns after)."""
    terms = []
    for name, matrix, bound, lower, label, rhs in (
        (names[0], data.A, data.b, 0.0, "A", "b"),
        (names[1], data.E, data.e, -np.inf, "E", "e"),
    ):
        if not matrix.shape[0]:
            continue
        cost_label = ("-" if sign < 0 else "") + f"w ⊗ {rhs}"
        block = program.add_variables(
            name,
            data.w.size * matrix.shape[0],
            lower=lower,
            cost=sign * data.weighted(bound),
            label=cost_label,
        )
        terms.append((block, matrix.T.tocsr(), label))
    return terms


def _add_game_rows(
    program: Program,
    data: PolytopeData,
    multipliers: list[tuple[slice, sp.csr_matrix, str]],
    point: tuple[slice, sp.csr_matrix, str],
    extra: list[tuple[slice, sp.csr_matrix, str]],
    right: np.ndarray,
) -> None:
    """Rows ``game``: ``A_mu^T x + E_mu^T y + (point and extra terms) = right`` per sample, and
    ``game aux``: ``A_z^T x + E_z^T y = 0`` (the auxiliary variables' columns)."""
    d, n = data.d, data.w.size
    game = [
        (block, data.per_sample(matrix[:d]), f"kron(I_n, {label}_mu^T)")
        for block, matrix, label in multipliers
    ]
    game.append((point[0], data.per_sample(point[1]), point[2]))
    program.add_rows("game", game + extra, np.tile(right, n), np.tile(right, n))
    if data.n_aux:
        aux = [
            (block, data.per_sample(matrix[d:]), f"kron(I_n, {label}_z^T)")
            for block, matrix, label in multipliers
        ]
        program.add_rows("game aux", aux, 0.0, 0.0)


def _add_constant(program: Program, c: float) -> None:
    """The loss's constant ``c`` (``sum_i w_i c = c``): a variable fixed at 1 with cost ``c``."""
    if c:
        program.add_variables("constant", 1, lower=1.0, upper=1.0, cost=c, label="c")


def polytope_primal(data: PolytopeData) -> Program:
    """The predictor's program (blocks ``theta``, ``nu``, ``nu_aux``, ``lam``, ``eta``,
    ``constant`` and the uncertainty set's; rows ``game``, ``game aux``, ``polytope``,
    ``polytope eq`` and the uncertainty set's): see the module's docstring."""
    uncertainty = data.uncertainty
    program = Program(f"polytope game ({uncertainty.program_kind})")
    theta = program.add_variables(
        "theta", data.fmap.n_params, cost=-data.observed, label="-Phi^T (w ⊗ emb(y))"
    )
    uncertainty.add_to_program(program, theta, data.fmap)
    _add_constant(program, data.c)
    nu = _add_points(program, data, "nu", (data.weighted(data.u), "w ⊗ u"))
    multipliers = _add_multipliers(program, data, ("lam", "eta"), 1.0)
    _add_game_rows(
        program,
        data,
        multipliers,
        (nu, sp.csr_matrix(-data.M.T), "-kron(I_n, M^T)"),
        [(theta, data.minus_D, "-Phi")],
        data.v,
    )
    return program


def polytope_dual(data: PolytopeData) -> Program:
    """The adversary's program (blocks ``mu``, ``mu_aux``, ``alpha``, ``beta``, ``constant``
    and the uncertainty set's moment gap; rows ``polytope``, ``polytope eq``, ``game``, ``game
    aux``, ``moments`` and the uncertainty set's): see the module's docstring."""
    uncertainty = data.uncertainty
    program = Program(f"polytope adversary ({uncertainty.program_kind})", sense="maximize")
    _add_constant(program, data.c)
    mu = _add_points(program, data, "mu", (data.weighted(data.v), "w ⊗ v"))
    multipliers = _add_multipliers(program, data, ("alpha", "beta"), -1.0)
    _add_game_rows(
        program, data, multipliers, (mu, sp.csr_matrix(data.M), "kron(I_n, M)"), [], 0.0 - data.u
    )
    weighted = (data.minus_D.T @ sp.diags(-np.repeat(data.w, data.d))).tocsr()
    uncertainty.add_to_dual(program, [(mu, weighted, "Phi^T W")], data.observed, data.fmap)
    label_moments(program, "Phi^T (w ⊗ emb(y))")
    return program


class PolytopeProgram(LearningProgram):
    r"""The compiled learning problem of a game over a polytope: the predictor's program (the
    primal, :func:`polytope_primal`), the adversary's (:meth:`dual`, :func:`polytope_dual`) and
    their LaTeX.  ``n_labels = n_actions = d``, the embedding's dimension; solutions give each
    sample's predictor ``P[i] = nu_i`` and adversary ``Q[i] = mu_i`` as points of the polytope
    (mean embeddings), and ``theta = vec(Theta)`` with ``Theta`` of shape ``(d_x + 1, d)``."""

    def _predictor(self, x):
        return x[self.program.variables["nu"]].reshape(self.n_samples, self.n_labels)

    def _adversary_from_multipliers(self, multipliers):
        w = self.weights[:, None]
        G = multipliers.reshape(self.n_samples, self.n_labels)
        return np.where(w > 0, G / np.where(w > 0, w, 1.0), np.nan)

    def _adversary_q(self, x):
        return x[self._dual.program.variables["mu"]].reshape(self.n_samples, self.n_labels)


def polytope_data(
    bilinear: tuple[np.ndarray, np.ndarray, np.ndarray, float],
    description: Any,
    fmap: FeatureMap,
    uncertainty: UncertaintySet,
    X: np.ndarray,
    E: np.ndarray,
    sample_weight: np.ndarray | None = None,
) -> PolytopeData:
    """The :class:`PolytopeData` of a bilinear loss's ``(M, u, v, c)`` over a polytope's linear
    ``description``, a fitted feature map, an uncertainty set, inputs ``X`` (n, d_x) and the
    outputs' embeddings ``E`` (n, d)."""
    M, u, v, c = bilinear
    width = M.shape[0] + description.n_aux
    w = normalised_weights(sample_weight, X.shape[0])
    D = fmap.bind(X).matrix()
    observed = D.T @ (w[:, None] * E).ravel()
    minus_D = -D  # a copy: D's data may be a read-only broadcast (one coordinate)
    return PolytopeData(
        M=M,
        u=u,
        v=v,
        c=c,
        A=_csr(description.A_ub, 0, width),
        b=np.asarray(description.b_ub, dtype=np.float64).ravel(),
        E=_csr(description.A_eq, 0, width),
        e=np.zeros(0) if description.b_eq is None else np.asarray(description.b_eq, float).ravel(),
        n_aux=int(description.n_aux),
        fmap=fmap,
        uncertainty=uncertainty,
        minus_D=minus_D,
        observed=observed,
        w=w,
    )


def compile_polytope(
    loss: Any,
    description: Any,
    fmap: FeatureMap,
    uncertainty: UncertaintySet,
    X: np.ndarray,
    E: np.ndarray,
    sample_weight: np.ndarray | None = None,
    latex: str = "",
) -> PolytopeProgram:
    """The :class:`PolytopeProgram` of a bilinear ``loss`` (``M``, ``u``, ``v``, ``c``) over a
    polytope's linear ``description`` (``A_ub, b_ub, A_eq, b_eq, n_aux``), a fitted feature
    map (``fmap.fit(X, d)``), an uncertainty set, inputs ``X`` (n, d_x) and the outputs'
    embeddings ``E`` (n, d)."""
    M = np.asarray(loss.M, dtype=np.float64)
    d = M.shape[0]
    data = polytope_data(
        (
            M,
            np.zeros(d) if loss.u is None else np.asarray(loss.u, dtype=np.float64),
            np.zeros(d) if loss.v is None else np.asarray(loss.v, dtype=np.float64),
            float(loss.c),
        ),
        description,
        fmap,
        uncertainty,
        X,
        E,
        sample_weight,
    )
    n, w = X.shape[0], data.w
    return PolytopeProgram(polytope_primal(data), partial(polytope_dual, data), n, d, d, w, latex)


def linear_description(polytope: Polytope, d: int) -> Any:
    """``polytope.constraints(d)``, or a NotApplicableError saying how to declare a polytope
    that has a linear description."""
    try:
        return polytope.constraints(d)
    except NotApplicableError:
        raise NotApplicableError(
            f"polytope = {polytope!r} has no linear description (constraints()), so its game "
            "has no compiled program; declare the polytope by Polytope.from_constraints(A_ub, "
            "b_ub, A_eq, b_eq) or Polytope.from_vertices(V)."
        ) from None


def build_polytope(
    loss: Any,
    features: FeatureMap,
    uncertainty: UncertaintySet,
    polytope: Polytope,
    X: ArrayLike,
    y: ArrayLike,
    sample_weight: ArrayLike | None = None,
    alpha: float = 0.5,
) -> PolytopeProgram:
    """The polytope family's :class:`PolytopeProgram` from a declaration's parts and data.

    Parameters
    ----------
    loss : Bilinear
        ``c + u.a + v.y + a' M y`` on the embeddings (:class:`advgame.losses.Bilinear`); ``M``
        is ``d x d`` with ``d`` the polytope's dimension.
    features : Multiclass
        ``phi(x, y) = emb(y) ⊗ [x; 1]`` (``features.fit_intercept`` appends the 1).
    uncertainty : UncertaintySet
    polytope : Polytope
        Any polytope with a linear description (:meth:`~advgame.polytopes.Polytope.constraints`).
    X : array-like of shape (n, d_x)
    y : array-like of shape (n, d), or labels
        Each sample's output as its embedding, a vertex of ``polytope``
        (:func:`~advgame.compile.inputs.polytope_outputs`: ordinal labels ``1..d + 1`` for the
        order simplex and rankings for the Birkhoff polytope are converted).
    sample_weight : array-like of shape (n,), optional
    alpha : float
        Unused (the signature of every family's builder).
    """
    X = check_inputs(X)
    d = np.shape(loss.M)[0]
    E = polytope_outputs(polytope, y, d, X.shape[0])
    sample_weight = check_sample_weight(sample_weight, X.shape[0])
    description = linear_description(polytope, d)
    fmap = fresh(features).fit(X, d)
    latex = polytope_latex(loss, polytope, features, uncertainty, description)
    return compile_polytope(loss, description, fmap, uncertainty, X, E, sample_weight, latex)


def polytope_latex(
    loss: Any,
    polytope: Polytope,
    fmap: FeatureMap,
    uncertainty: UncertaintySet,
    description: Any = None,
) -> str:
    r"""The primal and dual of a polytope game as LaTeX, the declared pieces substituted: the
    bilinear loss, the polytope and the size of its linear description, the features, the
    uncertainty set's norm and radius."""
    primal = [
        r"\min_{\theta,\, \nu,\, \lambda \ge 0,\, \eta}\quad & \sum_{i=1}^{n} w_i\,\big(c + "
        r"u^\top\nu_i + b^\top\lambda_i + e^\top\eta_i",
        r"& \qquad - g_i(\theta)^\top \operatorname{emb}(y_i)\big)",
        r"\text{s.t.}\quad & A^\top\lambda_i + E^\top\eta_i = \begin{pmatrix} v + M^\top\nu_i + "
        r"g_i(\theta) \\ 0 \end{pmatrix}\\",
        r"& \qquad \forall i \quad (\text{game, game aux})\\",
        r"& \nu_i \in \mathcal P \quad \forall i \quad (\text{polytope})",
    ]
    dual = [
        r"\max_{\mu,\, \alpha \ge 0,\, \beta}\quad & \sum_{i=1}^{n} w_i\,\big(c + v^\top\mu_i - "
        r"b^\top\alpha_i - e^\top\beta_i\big)",
        r"\text{s.t.}\quad & A^\top\alpha_i + E^\top\beta_i = \begin{pmatrix} -u - M\mu_i \\ 0 "
        r"\end{pmatrix} \quad \forall i\\",
        r"& \qquad (\text{game, game aux})\\",
        r"& \mu_i \in \mathcal P \quad \forall i \quad (\text{polytope})\\",
    ]
    residual = r"& m(\mu) = \sum_{i=1}^{n} w_i\, (\mu_i - \operatorname{emb}(y_i)) \otimes [x_i; 1]"
    size = ""
    if description is not None:
        rows_eq = 0 if description.A_eq is None else description.A_eq.shape[0]
        size = (
            f"{description.A_ub.shape[0]} + {rows_eq} rows, {description.n_aux} auxiliary variables"
        )
    where = [
        *polytope_symbols(loss, polytope, size),
        *(
            entry.replace("e_y", r"\operatorname{emb}(y)")
            for entry in latex_features(fmap)
            if not entry.startswith("e_y")
        ),
        r"\nu_i, \mu_i: \text{the predictor's and the adversary's points}",
        r"\lambda_i, \eta_i, \alpha_i, \beta_i: \text{the multipliers of } \mathcal P\text{'s rows}",
        SAMPLE_WEIGHTS,
    ]
    note = "the adversary's maximisation over each sample's point mu_i of the polytope"
    return latex_programs(
        primal,
        dual,
        residual,
        where,
        uncertainty,
        note,
        rename=moments_of(r"\mu"),
    )


def polytope_symbols(loss: Any, polytope: Polytope, size: str | None = None) -> list[str]:
    r"""The ``where`` entries of a bilinear loss over a polytope: the loss, ``emb``, ``g_i``
    and the polytope, by its linear description (``size``: its rows and auxiliary variables)
    or, when ``size`` is None, by its oracles."""
    d = np.shape(loss.M)[0]
    name = _short_name(polytope)
    if size is None:
        region = [
            r"\mathcal P: \text{the polytope (" + name + ")}",
            r"\text{through its projection and linear maximisation oracles}",
        ]
    else:
        region = [
            r"\mathcal P = \{\mu : \exists z,\ A[\mu; z] \le b,\ E[\mu; z] = e\}",
            r"A, b, E, e: \text{its linear description (" + name + ")}",
            *([r"\text{(" + size + ")}"] if size else []),
        ]
    return [
        r"(x_i, y_i),\ i = 1, \dots, n: \text{the samples}",
        r"\ell(a, y) = c + u^\top a + v^\top y + a^\top M y: \text{the loss}",
        r"\text{(" + _escape(repr(loss)) + rf"}}:\ M \in \mathbb R^{{{d} \times {d}}},\ "
        rf"c = {float(loss.c):g})",
        r"\operatorname{emb}(y) \in \mathbb R^{" + str(d) + r"}: \text{the point of output } y",
        r"g_i(\theta) = \Theta^\top [x_i; 1],\ \Theta: \theta \text{ as a matrix}",
        *region,
    ]


def _short_name(polytope: Polytope, width: int = 32) -> str:
    """The polytope's ``repr`` for ``\\text{}`` (its class name when longer than ``width``)."""
    name = repr(polytope)
    return _escape(name if len(name) <= width else type(polytope).__name__)


def _escape(text: str) -> str:
    """Text for ``\\text{}``: TeX's special characters escaped."""
    return text.replace("\\", r"\textbackslash{}").replace("_", r"\_").replace("#", r"\#")
