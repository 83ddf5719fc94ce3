r"""Compile a generalised-entropy game over a polytope (a Fenchel-Young loss) into one QP.

The adversary plays a point :math:`\mu` of a polytope :math:`\mathcal P \subset \mathbb R^d`
(the simplex, unit cube, order simplex, permutahedron, ...: :mod:`advgame.polytopes`) and is
paid the Brier (Gini) entropy :math:`H(\mu) = 1 - \|\mu\|^2` plus the potentials
:math:`g^\top\mu`, with :math:`g = \Theta^\top [x; 1]` (``features="multiclass"``:
``phi(x, y) = emb(y) ⊗ [x; 1]``).  The per-sample game's value is the conjugate

.. math::  F(g) = \max_{\mu \in \mathcal P}\ H(\mu) + g^\top\mu ,

and the learning problem (Farnia and Tse 2016, Theorem 3, with the uncertainty set's regulariser
``R``) is :math:`\min_\Theta \sum_i w_i\,[F(g_i) - g_i^\top y_i] + R(\Theta)`, ``y_i`` each
sample's embedding (a vertex of :math:`\mathcal P`).

**The projection-oracle loss** (Blondel 2019, Eq. 5-6; :class:`advgame.polytopes.FenchelYoungLoss`
with ``geometry='euclidean'``) is, with :math:`\Psi = \tfrac12\|\cdot\|^2` restricted to
:math:`\mathcal P`, :math:`L_\Psi(\theta; y) = \Psi^*(\theta) + \tfrac12\|y\|^2 -
\theta^\top y`, :math:`\Psi^*(\theta) = \max_{\mu\in\mathcal P} \theta^\top\mu -
\tfrac12\|\mu\|^2`.  Since :math:`H(\mu) + g^\top\mu = 1 + 2\,[(g/2)^\top\mu -
\tfrac12\|\mu\|^2]`, the exact correspondence is

.. math::  F(g) = 1 + 2\Psi^*(g/2), \qquad F(g) - g^\top y = 1 - \|y\|^2 + 2 L_\Psi(g/2; y),

and the adversary's best point is the Euclidean projection :math:`\mu^* = P_{\mathcal
P}(g/2)` (``polytope.project(g / 2)``).  So with scores :math:`\theta_i = g_i / 2`, i.e.
:math:`\Theta = 2 W`, and :class:`~advgame.uncertainty.SoftMoments` of ``lam``
(:math:`R(\Theta) = \tfrac{\lambda}{2}\|\Theta\|^2 = 2\lambda\|W\|^2`),

.. math::  \sum_i w_i [F(g_i) - g_i^\top y_i] + R(\Theta) = \sum_i w_i (1 - \|y_i\|^2)
           + 2 \Big(\sum_i w_i L_\Psi(\theta_i; y_i) + \lambda \|W\|^2\Big),

twice the objective of :class:`advgame.ProjectionClassifier` / :class:`advgame.LabelRanker`
(``alpha / 2 ||W||^2``) at ``lam = alpha / 2`` plus a constant (zero on the simplex, where
``||y|| = 1``) -- when the estimator's intercept is penalised as well, i.e. without an intercept.

**Dualising the inner QP.**  With the linear description :math:`\mathcal P = \{\mu : \exists z,\
A[\mu; z] \le b,\ E[\mu; z] = e\}` (:meth:`~advgame.polytopes.Polytope.constraints`; ``A =
[A_mu A_z]``), Lagrange duality of the strictly concave QP (Slater holds: the constraints are
linear and feasible) gives

.. math::  \max_{\mu \in \mathcal P} g^\top\mu - \|\mu\|^2 = \min_{\lambda \ge 0, \eta}\
           b^\top\lambda + e^\top\eta + \tfrac14\|g - A_\mu^\top\lambda - E_\mu^\top\eta\|^2
           \quad\text{s.t.}\quad A_z^\top\lambda + E_z^\top\eta = 0,

the maximiser being :math:`\mu = s/2` with :math:`s = g - A_\mu^\top\lambda - E_\mu^\top\eta`.
Substituted into the learning problem, **the predictor's program** (:func:`fenchel_young_primal`) is

.. math::

    \min_{\theta, s, \lambda \ge 0, \eta}\ & \sum_i w_i \big(1 + b^\top\lambda_i + e^\top\eta_i
        + \tfrac14\|s_i\|^2 - g_i(\theta)^\top y_i\big) + R(\theta) \\
    \text{s.t.}\ & A_\mu^\top\lambda_i + E_\mu^\top\eta_i + s_i - g_i(\theta) = 0,
        \quad A_z^\top\lambda_i + E_z^\top\eta_i = 0 \quad (\text{game}, \text{game aux}),

a QP for exact moments and soft moments (an SOCP for the norm balls), and **the adversary's
program** (:func:`fenchel_young_dual`) is

.. math::  \max_{\mu_i \in \mathcal P}\ \sum_i w_i (1 - \|\mu_i\|^2) - R^*(m(\mu)), \qquad
           m(\mu) = \sum_i w_i\, (\mu_i - y_i) \otimes [x_i; 1].

At the optimum ``s_i / 2`` is the adversary's (and the Brier predictor's: the Bayes act of the
Brier score is the distribution itself) point :math:`\mu_i^*`, and the primal's ``game``
multipliers are ``w_i mu_i``.

**The Shannon entropy** :math:`H(\mu) = -\sum_j \mu_j \log\mu_j` (``ag.losses.log``; the KL
geometry of Blondel 2019, :math:`\Psi(\mu) = \sum_j \mu_j\log\mu_j`, so :math:`F = \Psi^*` and
the scores are the potentials, :math:`\theta_i = g_i`) dualises the same way: maximising
:math:`r^\top\mu - \sum_j \mu_j\log\mu_j` over :math:`\mu \ge 0` gives :math:`\mu_j =
e^{r_j - 1}` and the value :math:`\sum_j e^{r_j - 1}`, hence

.. math::  \max_{\mu \in \mathcal P} g^\top\mu - \sum_j \mu_j\log\mu_j = \min_{\lambda \ge 0,
           \eta}\ b^\top\lambda + e^\top\eta + \sum_j e^{r_j} \quad\text{s.t.}\quad
           r = g - A_\mu^\top\lambda - E_\mu^\top\eta - \mathbf 1,\
           A_z^\top\lambda + E_z^\top\eta = 0,

(strong duality: the constraints are linear and the simplex, cube, order simplex, knapsack and
permutahedron have points with every coordinate positive), so the predictor's program has the
variables ``r`` in place of ``s`` and the exponential-cone term :math:`\sum_{ij} w_i e^{r_{ij}}`
in place of :math:`\tfrac14\|s_i\|^2`, and the adversary's maximises :math:`\sum_i w_i
H(\mu_i) - R^*(m(\mu))`.  The adversary's point is :math:`\mu_i^* = e^{r_i}` (the KL
projection of :math:`g_i` onto the polytope).  These are exponential-cone programs (kind
``EXP``), solved through cvxpy (Clarabel).  On the simplex this is multinomial logistic
regression (:math:`F(g) = \log\sum_j e^{g_j}`).  With :class:`advgame.ProjectionClassifier`'s
``geometry='kl'`` and ``lam = alpha`` the optimum is its objective minus :math:`\sum_i w_i
\Psi(y_i)` (zero for 0/1 embeddings).
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from ..exceptions import NotApplicableError
from ..polytopes import Simplex
from .inputs import check_inputs, check_sample_weight, fresh, polytope_outputs
from .learning import SAMPLE_WEIGHTS, label_moments, latex_programs, moments_of
from .polytope import (
    PolytopeData,
    PolytopeProgram,
    _add_constant,
    _add_game_rows,
    _add_multipliers,
    _add_points,
    _short_name,
    linear_description,
    polytope_data,
)
from .program import Program

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..features import FeatureMap
    from ..losses import Entropy
    from ..polytopes import Polytope
    from ..uncertainty import UncertaintySet

__all__ = [
    "FenchelYoungProgram",
    "build_fenchel_young",
    "fenchel_young_dual",
    "fenchel_young_latex",
    "fenchel_young_primal",
]

#: The entropy's constant: ``H(mu) = BRIER_CONSTANT - ||mu||^2``.
BRIER_CONSTANT = 1.0
#: The entropies whose game over a polytope compiles (``Entropy.kind``).
COMPILED_ENTROPIES = ("brier", "log")


def _kind(data: PolytopeData) -> str:
    """The program's kind: EXP for the Shannon entropy, else a QP (the entropy's square) or an
    SOCP with a norm ball's cones."""
    if data.entropy == "log":
        return "EXP"
    return "SOCP" if data.uncertainty.program_kind == "SOCP" else "QP"


def _per_sample_scale(data: PolytopeData, factor: float) -> sp.csr_matrix:
    """``diag(sqrt(factor w_i)) ⊗ I_d``: the square root of each sample's weighted quadratic."""
    return sp.diags(np.repeat(np.sqrt(factor * data.w), data.d), format="csr")


def fenchel_young_primal(data: PolytopeData) -> Program:
    """The predictor's program of the Brier or Shannon game over a polytope (blocks ``theta``,
    ``s`` (Brier) or ``r`` (Shannon), ``lam``, ``eta``, ``constant`` and the uncertainty set's;
    rows ``game``, ``game aux`` and the uncertainty set's): see the module's docstring."""
    program = Program(f"Fenchel-Young game ({_kind(data)})")
    theta = program.add_variables(
        "theta", data.fmap.n_params, cost=-data.observed, label="-Phi^T (w ⊗ emb(y))"
    )
    data.uncertainty.add_to_program(program, theta, data.fmap)
    multipliers = _add_multipliers(program, data, ("lam", "eta"), 1.0)
    size = data.w.size * data.d
    if data.entropy == "log":
        point = program.add_variables("r", size)
        program.add_exponential(point, "exp", np.repeat(data.w, data.d), "w ⊗ 1")
        right = -np.ones(data.d)
    else:
        _add_constant(program, BRIER_CONSTANT)
        point = program.add_variables("s", size)
        program.add_quadratic(point, _per_sample_scale(data, 0.5), "sqrt(w/2) ⊗ I")
        right = np.zeros(data.d)
    _add_game_rows(
        program,
        data,
        multipliers,
        (point, sp.identity(data.d, format="csr"), "I"),
        [(theta, data.minus_D, "-Phi")],
        right,
    )
    return program


def fenchel_young_dual(data: PolytopeData) -> Program:
    """The adversary's program of the Brier or Shannon game over a polytope (blocks ``mu``,
    ``mu_aux``, ``constant`` and the uncertainty set's moment gap; rows ``polytope``,
    ``polytope eq``, ``moments`` and the uncertainty set's): see the module's docstring."""
    program = Program(f"Fenchel-Young adversary ({_kind(data)})", sense="maximize")
    mu = _add_points(program, data, "mu", (np.zeros(data.w.size * data.d), "0"))
    if data.entropy == "log":
        program.add_exponential(mu, "xlogx", np.repeat(data.w, data.d), "w ⊗ 1")
    else:
        _add_constant(program, BRIER_CONSTANT)
        program.add_quadratic(mu, _per_sample_scale(data, 2.0), "sqrt(2 w) ⊗ I")
    weighted = (data.minus_D.T @ sp.diags(-np.repeat(data.w, data.d))).tocsr()
    data.uncertainty.add_to_dual(program, [(mu, weighted, "Phi^T W")], data.observed, data.fmap)
    label_moments(program, "Phi^T (w ⊗ emb(y))")
    return program


class FenchelYoungProgram(PolytopeProgram):
    r"""The compiled learning problem of the Brier or Shannon game over a polytope: the
    predictor's program (:func:`fenchel_young_primal`), the adversary's (:meth:`dual`,
    :func:`fenchel_young_dual`) and their LaTeX.  Solutions give each sample's point ``P[i] =
    Q[i] = mu_i``: ``s_i / 2``, the Euclidean projection of ``g_i / 2`` onto the polytope (Brier),
    or ``exp(r_i)``, the KL projection of ``g_i`` (Shannon); and ``theta = vec(Theta)`` with
    ``Theta`` of shape ``(d_x + 1, d)``."""

    def _predictor(self, x):
        variables = self.program.variables
        if "r" in variables:  # Shannon: mu = exp(r)
            return np.exp(x[variables["r"]]).reshape(self.n_samples, self.n_labels)
        return 0.5 * x[variables["s"]].reshape(self.n_samples, self.n_labels)


def build_fenchel_young(
    loss: Entropy,
    features: FeatureMap,
    uncertainty: UncertaintySet,
    polytope: Polytope,
    X: ArrayLike,
    y: ArrayLike,
    sample_weight: ArrayLike | None = None,
    alpha: float = 0.5,
) -> FenchelYoungProgram:
    """The Fenchel-Young family's :class:`FenchelYoungProgram` from a declaration's parts.

    Parameters
    ----------
    loss : Entropy
        ``ag.losses.brier(d)`` or ``ag.losses.log(d)``, ``d`` the polytope's dimension.
    features : Multiclass
        ``phi(x, y) = emb(y) ⊗ [x; 1]``.
    uncertainty : UncertaintySet
    polytope : Polytope
        Any polytope with a linear description (:meth:`~advgame.polytopes.Polytope.constraints`).
    X : array-like of shape (n, d_x)
    y : array-like of shape (n, d), or labels
        Each sample's output as its embedding, a vertex of ``polytope``
        (:func:`~advgame.compile.inputs.polytope_outputs`; class labels ``0..d - 1`` for the
        simplex).
    sample_weight : array-like of shape (n,), optional
    alpha : float
        Unused (the signature of every family's builder).
    """
    if loss.kind not in COMPILED_ENTROPIES:
        raise NotApplicableError(
            f"loss = {loss!r}: the game over a polytope compiles for the Brier entropy (a QP) "
            "and the Shannon entropy (an exponential-cone program), ag.losses.brier(d) or "
            "ag.losses.log(d)."
        )
    X = check_inputs(X)
    d = loss.n_labels
    n = X.shape[0]
    y = np.asarray(y)
    if y.ndim == 1 and isinstance(polytope, Simplex):
        labels = y.astype(np.int64)
        if labels.min(initial=0) < 0 or labels.max(initial=0) >= d or np.any(labels != y):
            raise ValueError(f"y must hold class labels 0..{d - 1} for the simplex; got {y!r}.")
        y = np.eye(d)[labels]
    E = polytope_outputs(polytope, y, d, n)
    sample_weight = check_sample_weight(sample_weight, n)
    description = linear_description(polytope, d)
    fmap = fresh(features).fit(X, d)
    data = polytope_data(
        (np.zeros((d, d)), np.zeros(d), np.zeros(d), 0.0),
        description,
        fmap,
        uncertainty,
        X,
        E,
        sample_weight,
    )
    data = replace(data, entropy=loss.kind)
    latex = fenchel_young_latex(loss, polytope, uncertainty)
    return FenchelYoungProgram(
        fenchel_young_primal(data), partial(fenchel_young_dual, data), n, d, d, data.w, latex
    )


def fenchel_young_latex(loss: Entropy, polytope: Polytope, uncertainty: UncertaintySet) -> str:
    r"""The primal and dual of the Brier or Shannon game over a polytope as LaTeX, in the layout
    of the other families (:func:`~advgame.compile.learning.latex_programs`)."""
    if loss.kind == "log":
        point, conjugate, shift = "r", r"\sum_j e^{r_{ij}}", r" - \mathbf{1}"
        entropy = r"H(\mu) = -\sum_j \mu_j \log \mu_j \text{ (the Shannon entropy)}"
        residual_name = r"r_i: \text{the exponents},\ \mu_i = e^{r_i} \text{ at the optimum}"
    else:
        point, conjugate, shift = "s", r"1 + \tfrac14\|s_i\|^2", ""
        entropy = r"H(\mu) = 1 - \|\mu\|_2^2 \text{ (the Brier entropy)}"
        residual_name = r"s_i: \text{the projection's residual}"
    primal = [
        rf"\min_{{\theta,\, {point},\, \lambda \ge 0,\, \eta}}\quad & \sum_{{i=1}}^{{n}} "
        rf"w_i\,\big({conjugate} + b^\top\lambda_i + e^\top\eta_i",
        r"& \qquad - g_i(\theta)^\top y_i\big)",
        r"\text{s.t.}\quad & A^\top\lambda_i + E^\top\eta_i = \begin{pmatrix} g_i(\theta) - "
        rf"{point}_i{shift} \\ 0 \end{{pmatrix}} \quad \forall i \quad (\text{{game}})",
    ]
    dual = [
        r"\max_{\mu}\quad & \sum_{i=1}^{n} w_i\,H(\mu_i)",
        r"\text{s.t.}\quad & \mu_i \in \mathcal P \quad \forall i \quad (\text{polytope})\\",
    ]
    residual = r"& m(\mu) = \sum_{i=1}^{n} w_i\, (\mu_i - y_i) \otimes [x_i; 1]"
    where = [
        r"(x_i, y_i),\ i = 1, \dots, n: \text{the samples},\ y_i \in \mathcal P",
        entropy,
        r"g_i(\theta) = \Theta^\top [x_i; 1],\ \Theta: \theta \text{ as a matrix}",
        r"\mathcal P = \{\mu : \exists z,\ A[\mu; z] \le b,\ E[\mu; z] = e\}",
        r"A, b, E, e: \text{its linear description (" + _short_name(polytope) + ")}",
        residual_name + r",\ \lambda_i, \eta_i: \text{its multipliers}",
        SAMPLE_WEIGHTS,
    ]
    return latex_programs(
        primal,
        dual,
        residual,
        where,
        uncertainty,
        "the adversary's maximum-entropy program over each sample's point mu_i",
        rename=moments_of(r"\mu"),
    )
