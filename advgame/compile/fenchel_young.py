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
"""

from __future__ import annotations

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


def _kind(uncertainty: UncertaintySet) -> str:
    """The program's kind: a QP (the entropy's square), an SOCP with a norm ball's cones."""
    return "SOCP" if uncertainty.program_kind == "SOCP" else "QP"


def _per_sample_scale(data: PolytopeData, factor: float) -> sp.csr_matrix:
    """``diag(sqrt(factor w_i)) ⊗ I_d``: the square root of each sample's weighted quadratic."""
    return sp.diags(np.repeat(np.sqrt(factor * data.w), data.d), format="csr")


def fenchel_young_primal(data: PolytopeData) -> Program:
    """The predictor's program of the Brier game over a polytope (blocks ``theta``, ``s``,
    ``lam``, ``eta``, ``constant`` and the uncertainty set's; rows ``game``, ``game aux`` and
    the uncertainty set's): see the module's docstring."""
    uncertainty = data.uncertainty
    program = Program(f"Fenchel-Young game ({_kind(uncertainty)})")
    theta = program.add_variables(
        "theta", data.fmap.n_params, cost=-data.observed, label="-Phi^T (w ⊗ emb(y))"
    )
    uncertainty.add_to_program(program, theta, data.fmap)
    _add_constant(program, BRIER_CONSTANT)
    s = program.add_variables("s", data.w.size * data.d)
    program.add_quadratic(s, _per_sample_scale(data, 0.5), "sqrt(w/2) ⊗ I")
    multipliers = _add_multipliers(program, data, ("lam", "eta"), 1.0)
    _add_game_rows(
        program,
        data,
        multipliers,
        (s, sp.identity(data.d, format="csr"), "I"),
        [(theta, data.minus_D, "-Phi")],
        np.zeros(data.d),
    )
    return program


def fenchel_young_dual(data: PolytopeData) -> Program:
    """The adversary's program of the Brier game over a polytope (blocks ``mu``, ``mu_aux``,
    ``constant`` and the uncertainty set's moment gap; rows ``polytope``, ``polytope eq``,
    ``moments`` and the uncertainty set's): see the module's docstring."""
    uncertainty = data.uncertainty
    program = Program(f"Fenchel-Young adversary ({_kind(uncertainty)})", sense="maximize")
    _add_constant(program, BRIER_CONSTANT)
    mu = _add_points(program, data, "mu", (np.zeros(data.w.size * data.d), "0"))
    program.add_quadratic(mu, _per_sample_scale(data, 2.0), "sqrt(2 w) ⊗ I")
    weighted = (data.minus_D.T @ sp.diags(-np.repeat(data.w, data.d))).tocsr()
    uncertainty.add_to_dual(program, [(mu, weighted, "Phi^T W")], data.observed, data.fmap)
    label_moments(program, "Phi^T (w ⊗ emb(y))")
    return program


class FenchelYoungProgram(PolytopeProgram):
    r"""The compiled learning problem of the Brier game over a polytope: the predictor's QP
    (:func:`fenchel_young_primal`), the adversary's (:meth:`dual`, :func:`fenchel_young_dual`)
    and their LaTeX.  Solutions give each sample's point ``P[i] = Q[i] = mu_i = s_i / 2``, the
    Euclidean projection of ``g_i / 2`` onto the polytope, and ``theta = vec(Theta)`` with
    ``Theta`` of shape ``(d_x + 1, d)``."""

    def _predictor(self, x):
        return 0.5 * x[self.program.variables["s"]].reshape(self.n_samples, self.n_labels)


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
        ``ag.losses.brier(d)``, ``d`` the polytope's dimension.
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
    if loss.kind != "brier":
        raise NotApplicableError(
            f"loss = {loss!r}: only the Brier entropy's game over a polytope compiles to a "
            "program (a QP); the Shannon entropy's needs an exponential cone."
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
    latex = fenchel_young_latex(polytope, uncertainty)
    return FenchelYoungProgram(
        fenchel_young_primal(data), partial(fenchel_young_dual, data), n, d, d, data.w, latex
    )


def fenchel_young_latex(polytope: Polytope, uncertainty: UncertaintySet) -> str:
    r"""The primal and dual of the Brier game over a polytope as LaTeX, in the layout of the
    other families (:func:`~advgame.compile.learning.latex_programs`)."""
    primal = [
        r"\min_{\theta,\, s,\, \lambda \ge 0,\, \eta}\quad & \sum_{i=1}^{n} w_i\,\big(1 + "
        r"b^\top\lambda_i + e^\top\eta_i",
        r"& \qquad + \tfrac14\|s_i\|^2 - g_i(\theta)^\top y_i\big)",
        r"\text{s.t.}\quad & A^\top\lambda_i + E^\top\eta_i = \begin{pmatrix} g_i(\theta) - "
        r"s_i \\ 0 \end{pmatrix} \quad \forall i \quad (\text{game})",
    ]
    dual = [
        r"\max_{\mu}\quad & \sum_{i=1}^{n} w_i\,H(\mu_i)",
        r"\text{s.t.}\quad & \mu_i \in \mathcal P \quad \forall i \quad (\text{polytope})\\",
    ]
    residual = r"& m(\mu) = \sum_{i=1}^{n} w_i\, (\mu_i - y_i) \otimes [x_i; 1]"
    where = [
        r"(x_i, y_i),\ i = 1, \dots, n: \text{the samples},\ y_i \in \mathcal P",
        r"H(\mu) = 1 - \|\mu\|_2^2 \text{ (the Brier entropy)}",
        r"g_i(\theta) = \Theta^\top [x_i; 1],\ \Theta: \theta \text{ as a matrix}",
        r"\mathcal P = \{\mu : \exists z,\ A[\mu; z] \le b,\ E[\mu; z] = e\}",
        r"A, b, E, e: \text{its linear description (" + _short_name(polytope) + ")}",
        r"s_i: \text{the projection's residual},\ \lambda_i, \eta_i: \text{its multipliers}",
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
