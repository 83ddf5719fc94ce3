r"""Compile the Birkhoff (permutation) game's learning problem (Fathony et al. 2018c).

Labels are permutations of ``k`` items, given as rankings ``R[i, j]`` = rank of item ``j``
(1 = best) and encoded as permutation matrices ``P_i[j, R_ij - 1] = 1``.  A linear model scores
every item at every position, ``Θ_i = reshape(W^T x_i + b, (k, k))``, and the loss is the Hamming
loss ``k - <P̂, P>``.  Since every doubly stochastic ``Q`` has ``1^T Q 1 = k``, the loss is
``<E - P̂, Q>`` with ``E`` the all-ones matrix, and LP duality of the inner assignment problem gives

.. math::  \mathrm{value}(Θ) = \min_{\hat P \in B_k} \max_{Q \in B_k} \langle Θ + E - \hat P,
           Q\rangle = \min_{\hat P \in B_k,\, a,\, c}\ 1^\top a + 1^\top c
           \quad\text{s.t.}\quad a_j + c_r + \hat P_{jr} - Θ_{jr} \ge 1,

so the learning problem ``min_{W, b} sum_i w_i [value(Θ_i) - <Θ_i, P_i>] + R(W)`` is one convex
program in ``(W, b, P̂_i, a_i, c_i)`` (:func:`matching_primal`).  Its Lagrangian dual is the
adversary's program (:func:`matching_dual`): each ``Q_i`` doubly stochastic, the moment residual
``m = sum_i w_i x_i ⊗ vec(Q_i - P_i)`` bounded by the uncertainty set (the intercept's moments
``sum_i w_i (Q_i - P_i) = 0`` matched exactly: ``b`` is not regularised).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from ..features import FeatureMap
from ..permutation import ranks_to_matrices
from .inputs import check_data, check_sample_weight, hamming_items, normalised_weights
from .learning import SAMPLE_WEIGHTS, LearningProgram, label_moments, latex_programs, moments_of
from .program import Program

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..losses import LossMatrix
    from ..polytopes import Polytope
    from ..uncertainty import UncertaintySet

__all__ = [
    "MatchingData",
    "MatchingProgram",
    "build_matching",
    "compile_matching",
    "matching_dual",
    "matching_latex",
    "matching_primal",
]


class CellFeatures(FeatureMap):
    r"""The parameter space of the scores ``Θ(x) = reshape(W^T x, (k, k))``: ``theta = vec(W)``
    (row-major ``(d, k^2)``), explicit coordinates, one block per cell ``(j, r)`` (for group
    norms).  What :mod:`advgame.uncertainty` needs of a feature map."""

    def __init__(self, n_features, k):
        self.n_features, self.k = int(n_features), int(k)
        self.n_params = self.n_features * self.k * self.k

    def blocks(self):
        kk = self.k * self.k
        return [np.arange(cell, self.n_params, kk) for cell in range(kk)]


def _design(X, k):
    """``D`` with ``vec(Θ_1..Θ_n) = D vec(W)`` for row-major ``W`` of shape ``(d, k^2)``."""
    return sp.kron(sp.csr_matrix(X), sp.identity(k * k), format="csr")


def _cells(k):
    """``(item_of_cell, position_of_cell)``: cell ``j k + r`` -> item ``j``, -> position ``r``."""
    item = sp.kron(sp.identity(k), np.ones((k, 1)), format="csr")
    position = sp.kron(np.ones((k, 1)), sp.identity(k), format="csr")
    return item, position


@dataclass(frozen=True)
class MatchingData:
    """What both programs of the Birkhoff game are built from: features ``X`` (n, d), the true
    permutation matrices ``P`` (n, k, k), the normalised sample weights ``w``, the uncertainty
    set on ``W`` and its parameter space ``fmap`` (:class:`CellFeatures`)."""

    X: np.ndarray
    P: np.ndarray
    w: np.ndarray
    uncertainty: UncertaintySet
    fmap: FeatureMap
    fit_intercept: bool = True

    @property
    def sizes(self) -> tuple[int, int, int]:
        """``(n, d, k)``."""
        return *self.X.shape, self.P.shape[1]

    @property
    def weighted_truth(self) -> np.ndarray:
        """``w_i vec(P_i)`` as an ``(n, k^2)`` array."""
        n, _, k = self.sizes
        return self.w[:, None] * self.P.reshape(n, k * k)


def matching_primal(data: MatchingData) -> Program:
    r"""The predictor's program

    .. math::  \min\ \sum_i w_i \big(1^\top a_i + 1^\top c_i - \langle Θ_i, P_i\rangle\big) + R(W)
               \quad\text{s.t.}\quad a_{ij} + c_{ir} + \hat P_{i,jr} - Θ_{i,jr} \ge 1,\quad
               \hat P_i 1 = 1,\ \hat P_i^\top 1 = 1,\ \hat P_i \ge 0;

    its optimum is the training objective itself (no constant offset).  One column sum per sample
    is dropped (implied by the others).  Variable blocks ``W`` (row-major, ``d k^2``), ``b``
    (``k^2``, if ``fit_intercept``), ``predictor`` (``P̂_i``, row-major, ``n k^2``), ``a``, ``c``
    (``n k`` each) and the uncertainty set's; row blocks ``game``, ``predictor rows``,
    ``predictor columns`` and the uncertainty set's.  Sparse Kronecker products, no loop over
    samples.
    """
    X, w, uncertainty, fit_intercept = data.X, data.w, data.uncertainty, data.fit_intercept
    n, d, k = data.sizes
    kk = k * k
    weighted_truth = data.weighted_truth
    program = Program(f"adversarial matching ({uncertainty.program_kind})")
    W = program.add_variables(
        "W", d * kk, cost=-(X.T @ weighted_truth).ravel(), label="-(sum_i w_i x_i ⊗ vec(P_i))"
    )
    scores = [(W, -_design(X, k), "-kron(X, I_k²)")]
    if fit_intercept:
        b = program.add_variables(
            "b", kk, cost=-weighted_truth.sum(axis=0), label="-(sum_i w_i vec(P_i))"
        )
        scores.append(
            (b, -sp.kron(np.ones((n, 1)), sp.identity(kk), format="csr"), "-kron(1_n, I_k²)")
        )
    predictor = program.add_variables("predictor", n * kk, lower=0.0)
    a = program.add_variables("a", n * k, cost=np.repeat(w, k), label="(w ⊗ 1_k)")
    c = program.add_variables("c", n * k, cost=np.repeat(w, k), label="(w ⊗ 1_k)")
    samples = sp.identity(n, format="csr")
    item, position = _cells(k)
    program.add_rows(
        "game",
        [
            (predictor, sp.identity(n * kk, format="csr"), "I"),
            (a, sp.kron(samples, item, format="csr"), "kron(I_n, I_k ⊗ 1_k)"),
            (c, sp.kron(samples, position, format="csr"), "kron(I_n, 1_k ⊗ I_k)"),
            *scores,
        ],
        lower=1.0,
    )
    program.add_simplex_rows("predictor rows", predictor, k, "kron(I_n, I_k ⊗ 1_k^T)")
    program.add_rows(
        "predictor columns",
        [
            (
                predictor,
                sp.kron(samples, position.T.tocsr()[: k - 1], format="csr"),
                "kron(I_n, 1_k^T ⊗ I_k)[:k-1]",
            )
        ],
        1.0,
        1.0,
    )
    uncertainty.add_to_program(program, W, data.fmap)
    return program


def matching_dual(data: MatchingData) -> Program:
    r"""The adversary's program

    .. math::  \max_{Q, a, c}\ \sum_i w_i \big(k - 1^\top a_i - 1^\top c_i\big) - R^*(m)
               \quad\text{s.t.}\quad a_{ij} + c_{ir} \ge Q_{i,jr},\quad Q_i \in B_k,\quad
               m = \sum_i w_i\, x_i \otimes \mathrm{vec}(Q_i - P_i),\quad
               \sum_i w_i (Q_i - P_i) = 0\ (\text{with an intercept}),

    the constant ``k`` written as ``<E, Q_i>`` (``Q_i`` doubly stochastic).  Variable blocks ``Q``
    (row-major, ``n k^2``), ``a``, ``c`` and the uncertainty set's (``moment_gap``, ...); row
    blocks ``Q rows``, ``Q columns``, ``game``, ``intercept moments``, ``moments`` and the
    uncertainty set's.
    """
    X, w, uncertainty, fit_intercept = data.X, data.w, data.uncertainty, data.fit_intercept
    n, _, k = data.sizes
    kk = k * k
    weighted_truth = data.weighted_truth
    program = Program(f"matching adversary ({uncertainty.program_kind})", sense="maximize")
    q = program.add_variables("Q", n * kk, lower=0.0, cost=np.repeat(w, kk), label="(w ⊗ 1_k²)")
    a = program.add_variables("a", n * k, cost=-np.repeat(w, k), label="-(w ⊗ 1_k)")
    c = program.add_variables("c", n * k, cost=-np.repeat(w, k), label="-(w ⊗ 1_k)")
    samples = sp.identity(n, format="csr")
    item, position = _cells(k)
    program.add_simplex_rows("Q rows", q, k, "kron(I_n, I_k ⊗ 1_k^T)")
    program.add_rows(
        "Q columns",
        [
            (
                q,
                sp.kron(samples, position.T.tocsr()[: k - 1], format="csr"),
                "kron(I_n, 1_k^T ⊗ I_k)[:k-1]",
            )
        ],
        1.0,
        1.0,
    )
    program.add_rows(
        "game",
        [
            (a, sp.kron(samples, item, format="csr"), "kron(I_n, I_k ⊗ 1_k)"),
            (c, sp.kron(samples, position, format="csr"), "kron(I_n, 1_k ⊗ I_k)"),
            (q, -sp.identity(n * kk, format="csr"), "-I"),
        ],
        lower=0.0,
    )
    if fit_intercept:
        observed = weighted_truth.sum(axis=0)
        program.add_rows(
            "intercept moments",
            [(q, sp.kron(sp.csr_matrix(w), sp.identity(kk), format="csr"), "kron(w^T, I_k²)")],
            observed,
            observed,
        )
        program.label_bounds("intercept moments", "sum_i w_i vec(P_i)")
    moments = (_design(X, k).T @ sp.diags(np.repeat(w, kk))).tocsr()
    observed = (X.T @ weighted_truth).ravel()
    uncertainty.add_to_dual(
        program, [(q, moments, "kron(X, I_k²)^T diag(w ⊗ 1_k²)")], observed, data.fmap
    )
    label_moments(program, "sum_i w_i x_i ⊗ vec(P_i)")
    return program


def matching_latex(
    uncertainty: UncertaintySet, fit_intercept: bool = True, k: int | str = "k"
) -> str:
    """The primal and the dual of the Birkhoff learning problem as LaTeX, the declared pieces
    (Hamming loss, Birkhoff polytope, the uncertainty set's norm and radius) substituted."""
    intercept = " + b" if fit_intercept else ""
    primal = [
        r"\min_{W,\, b,\, \hat P,\, a,\, c}\quad & \sum_{i=1}^{n} w_i\,\big(1^\top a_i + "
        r"1^\top c_i - \langle \Theta_i, P_i\rangle\big)",
        r"\text{s.t.}\quad & a_{ij} + c_{ir} + \hat P_{i,jr} - \Theta_{i,jr} \ge 1"
        r" \quad \forall i, j, r \quad (\text{game})\\",
        rf"& \hat P_i \in B_{{{k}}} \quad \forall i \quad (\text{{predictor rows, columns}})",
    ]
    dual = [
        rf"\max_{{Q,\, a,\, c}}\quad & \sum_{{i=1}}^{{n}} w_i\,\big({k} - 1^\top a_i - "
        r"1^\top c_i\big)",
        r"\text{s.t.}\quad & a_{ij} + c_{ir} \ge Q_{i,jr} \quad \forall i, j, r"
        r" \quad (\text{game})\\",
        rf"& Q_i \in B_{{{k}}} \quad \forall i \quad (\text{{Q rows, columns}})\\",
    ]
    if fit_intercept:
        dual.append(r"& \sum_{i=1}^{n} w_i (Q_i - P_i) = 0 \quad (\text{intercept moments})\\")
    residual = r"& m(Q) = \sum_{i=1}^{n} w_i\, x_i \otimes \operatorname{vec}(Q_i - P_i)"
    where = [
        rf"(x_i, P_i),\ i = 1, \dots, n: \text{{the samples}},\ P_i \in \{{0, 1\}}^{{{k} "
        rf"\times {k}}}",
        r"P_i: \text{the permutation matrix of ranking } i \text{ (items } j \text{, positions } "
        r"r)",
        rf"L(\hat P, P) = {k} - \langle \hat P, P\rangle \text{{ (Hamming)}}",
        rf"\Theta_i = \operatorname{{reshape}}(W^\top x_i{intercept}, ({k}, {k}))",
        rf"B_{{{k}}} = \{{Q \in \mathbb R^{{{k} \times {k}}} : Q \ge 0,\ Q 1 = 1,\ Q^\top 1 "
        r"= 1\}",
        r"a_i, c_i: \text{the multipliers of the row and column sums}",
        r"\operatorname{vec}: \text{the entries of a matrix as a vector}",
        SAMPLE_WEIGHTS,
    ]
    note = "the adversary's maximisation over each sample's doubly stochastic Q_i"
    return latex_programs(
        primal, dual, residual, where, uncertainty, note, rename=_matching_symbols
    )


def _matching_symbols(text: str) -> str:
    """An uncertainty set's LaTeX in the Birkhoff game's symbols: ``W`` for ``theta``, ``m(Q)``
    for ``m(q)``."""
    return moments_of("Q")(text.replace(r"\theta", "W"))


class MatchingProgram(LearningProgram):
    r"""The compiled learning problem of the Birkhoff game: the predictor's program (the primal,
    :func:`matching_primal`), the adversary's (:meth:`dual`, :func:`matching_dual`) and their
    LaTeX.  ``n_labels = n_actions = k`` items; solutions give each sample's predictor ``P̂_i``
    and adversary ``Q_i`` as ``(k, k)`` doubly stochastic matrices."""

    def __init__(
        self,
        primal: Program,
        dual_builder: Callable[[], Program],
        n_samples: int,
        k: int,
        weights: np.ndarray,
        latex: str,
        fit_intercept: bool,
    ) -> None:
        super().__init__(primal, dual_builder, n_samples, k, k, weights, latex)
        self.fit_intercept = fit_intercept

    def _theta(self, x):
        names = ("W", "b") if self.fit_intercept else ("W",)
        return np.concatenate([x[self.program.variables[name]] for name in names])

    def _predictor(self, x):
        k = self.n_labels
        return np.clip(x[self.program.variables["predictor"]], 0.0, None).reshape(-1, k, k)

    def _adversary_from_multipliers(self, multipliers):
        n, k = self.n_samples, self.n_labels
        G = np.clip(multipliers.reshape(n, k * k), 0.0, None)
        w = self.weights[:, None]
        return np.where(w > 0, G / np.where(w > 0, w, 1.0), 1.0 / k).reshape(n, k, k)

    def _adversary_q(self, x):
        k = self.n_labels
        return np.clip(x[self._dual.program.variables["Q"]], 0.0, None).reshape(-1, k, k)


def compile_matching(
    X: np.ndarray,
    R: np.ndarray,
    uncertainty: UncertaintySet,
    sample_weight: np.ndarray | None = None,
    fit_intercept: bool = True,
    latex: str | None = None,
) -> MatchingProgram:
    """The :class:`MatchingProgram` of the Birkhoff game on features ``X`` (n, d) and validated
    rankings ``R`` (n, k) (:func:`check_rankings`), for an uncertainty set (:class:`Exact`,
    :class:`SoftMoments` (ridge ``lam/2 ||W||_F^2``), :class:`NormBall`) on ``W``; the intercept
    ``b`` (if ``fit_intercept``) is not regularised.  ``sample_weight`` is normalised to sum to
    one; ``latex`` defaults to :func:`matching_latex`."""
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    k = R.shape[1]
    w = normalised_weights(sample_weight, n)
    data = MatchingData(X, ranks_to_matrices(R), w, uncertainty, CellFeatures(d, k), fit_intercept)
    if latex is None:
        latex = matching_latex(uncertainty, fit_intercept, k)
    return MatchingProgram(
        matching_primal(data), partial(matching_dual, data), n, k, w, latex, fit_intercept
    )


def build_matching(
    loss: str | LossMatrix,
    features: FeatureMap,
    uncertainty: UncertaintySet,
    polytope: Polytope,
    X: ArrayLike,
    y: ArrayLike,
    sample_weight: ArrayLike | None = None,
    alpha: float = 0.5,
) -> MatchingProgram:
    """The Birkhoff family's :class:`MatchingProgram` from a declaration's parts and data:
    ``loss`` the Hamming loss (``'hamming'``, or its matrix over the ``k!`` permutations, whose
    ``k`` must be that of the rankings), ``features`` linear (``features.fit_intercept``), the
    ``polytope`` Birkhoff's; ``y`` the rankings ``R[i, j]`` = rank of item ``j``; ``alpha``
    unused (the signature of every family's builder)."""
    X, R = check_data(X, y, rankings=True)
    sample_weight = check_sample_weight(sample_weight, X.shape[0])
    items = hamming_items(loss)
    if items is not None and items != R.shape[1]:
        raise ValueError(
            f"the loss is the Hamming loss between permutations of {items} items but the "
            f"rankings order {R.shape[1]}; use loss='hamming' (items from the rankings) or "
            f"ag.permutation.hamming_loss_matrix({R.shape[1]})."
        )
    return compile_matching(X, R, uncertainty, sample_weight, fit_intercept=features.fit_intercept)
