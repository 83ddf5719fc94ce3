"""Explanations of a game and of a declared learning game, written from the fast-path table.

:meth:`advgame.Game.explain`, :meth:`advgame.PredictionGame.explain` and ``advgame explain``
say which structure a loss has, which fast path ``method='auto'`` takes and why, which it does
not use and why, and (for a declaration) the program the learning problem compiles to.  Every
statement about a fast path (formula, theorem, cost) comes from its row of
:data:`advgame.fast_paths.TABLE`; this module only arranges them.  The per-sample game's own
explanation (:func:`game_explanation`, :func:`fast_path_lines`) lives next to the table, in the
core, so that :class:`advgame.Game` needs nothing from this layer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from . import fast_paths
from .fast_paths import PerSampleGame, fast_path_lines, game_explanation
from .features import KernelFeatures, Multiclass, Thresholded
from .losses import STRUCTURE_RTOL, Entropy, LossMatrix
from .uncertainty import Exact

if TYPE_CHECKING:
    from .features import FeatureMap
    from .losses import Structure
    from .uncertainty import MomentBalls, UncertaintySet

__all__ = [
    "birkhoff_lines",
    "closed_form_lines",
    "fast_path_lines",
    "fenchel_young_lines",
    "game_explanation",
    "graph_lines",
    "minimax_lines",
    "polytope_lines",
    "rounded",
    "simplex_lines",
    "structure_lines",
    "theorem_vertex_count",
]


#: Significant digits of the numbers of a declaration in an explanation (:func:`rounded`).
DECLARATION_DIGITS = 4

#: A decimal number written in full (``0.0013192612137203166``, ``2.5e-07``), not inside a name.
_DECIMAL = re.compile(r"(?<![\w.])\d+\.\d+(?:e[+-]?\d+)?(?![\w.])")


def _round_decimal(match: re.Match) -> str:
    text = match.group()
    short = f"{float(text):.{DECLARATION_DIGITS}g}"
    return short if float(short) != float(text) else text


def rounded(value: Any) -> str:
    """``repr(value)`` with every decimal number at :data:`DECLARATION_DIGITS` significant digits.

    Explanations print declarations this way (``SoftMoments(lam=0.001319)``); ``repr`` keeps
    full precision, so that it still recreates the object.  A number that the rounding would not
    change is left as written (``1.0`` stays ``1.0``).
    """
    return _DECIMAL.sub(_round_decimal, repr(value))


# ------------------------------------------------------------------------- the per-sample game
def _general(x: float) -> str:
    return f"{x:g}"


def _formula(row: fast_paths.FastPath, structure: Structure, fmt: Callable[[float], str]) -> str:
    """The row's formula with the weight and the abstention cost of ``structure``."""
    text = row.formula.replace("{c}", fmt(structure.weight))
    return text if structure.alpha is None else text.replace("{alpha}", fmt(structure.alpha))


def structure_lines(game: PerSampleGame) -> list[str]:
    """The recognised structure and what ``method='auto'`` uses."""
    row, _ = fast_paths.find(game.loss)
    return [
        f"recognised structure: {game.structure}",
        f"method='auto' uses:   {row.summary}   (Game.fast_path = {game.fast_path!r})",
    ]


def theorem_vertex_count(loss: LossMatrix) -> tuple[int, str] | None:
    """``(count, formula)`` of the extreme points the closed form's theorem predicts, or None."""
    found = fast_paths.closed_form(loss)
    if found is None or found[0].vertex_count is None:
        return None
    row, params = found
    return row.vertex_count(loss.n_labels, *params)


def closed_form_lines(loss: LossMatrix, fmt: Callable[[float], str] = _general) -> list[str]:
    """The closed form that applies, as a formula with its theorem; or why none does.  ``fmt``
    writes the weight and the abstention cost."""
    structure = loss.structure
    row, _ = fast_paths.find(loss)
    if row.is_closed_form:
        lines = [f"{_formula(row, structure, fmt)}   [{row.theorem}]"]
        return lines + ([f"prediction: {row.prediction}"] if row.prediction else [])
    if structure.kind == "permutation_hamming":
        birkhoff = fast_paths.BIRKHOFF
        formula = _formula(birkhoff, structure, fmt)
        return [
            f"none in closed form: the Birkhoff game ({birkhoff.theorem}). "
            + formula[0].upper()
            + formula[1:]
        ]
    if structure.kind == "abstain":
        return [
            "none: Theorems 12-13 need alpha <= 1/2 (here alpha = "
            f"{fmt(structure.alpha)}): vertex table / LP"
        ]
    return ["none (general matrix): vertex table / LP"]


# ---------------------------------------------------------------------- declared learning games
def simplex_lines(
    loss: str | LossMatrix,
    alpha: float,
    L: LossMatrix | None,
    example: LossMatrix,
    features: FeatureMap,
    uncertainty: UncertaintySet,
    polytope: Any,
) -> list[str]:
    """The simplex family: the loss and its fast path, then the program (``L`` None while a
    loss name waits for ``k``; ``example``: the loss built for 3 classes)."""
    if L is None:
        lines = [
            f"loss: '{loss}', built for the k classes of y"
            + (f" (abstention cost alpha = {alpha:g})" if loss == "abstain" else "")
            + f"; recognised as {example.structure.kind}."
        ]
    else:
        lines = [
            f"loss: {L.n_actions} actions x {L.n_labels} labels, recognised as {L.structure} "
            f"(from its numbers, to relative tolerance {STRUCTURE_RTOL:g})."
        ]
    lines += fast_path_lines(L, example)
    return lines + [""] + _program_lines(L, features, uncertainty, polytope)


def _program_lines(
    L: LossMatrix | None, fmap: FeatureMap, u: UncertaintySet, polytope: Any
) -> list[str]:
    kind = u.program_kind
    l = "l" if L is None else str(L.n_actions)
    k = "k" if L is None else str(L.n_labels)
    params = {
        Multiclass: f"(d + 1) * {k}",
        Thresholded: f"d + {k} - 1",
        KernelFeatures: f"n * {k}",
    }.get(type(fmap), "p (the callable's features)")
    return [
        f"features: {type(fmap).__name__} -> theta has {params} parameters.",
        f"uncertainty: {rounded(u)}: the adversary keeps {u.adversary_constraint}; regulariser "
        f"R(theta) = {u.regularizer}.",
        f"polytope: {rounded(polytope)} (each sample's conditional q_i).",
        f"program: {kind}. Primal blocks theta ({params}), u (n), p (n * {l}); rows game "
        f"(n * {k}), simplex (n)"
        + {
            "LP": ""
            if isinstance(u, Exact) or getattr(u, "radius", 0) == 0
            else ", plus the norm's epigraph rows",
            "QP": ", quadratic objective (lam/2) ||theta||^2",
            "SOCP": ", plus second-order cones",
        }[kind]
        + f". Dual blocks q (n * {k}), v (n)"
        + ("" if isinstance(u, Exact) else ", moment_gap")
        + "; rows simplex (n), game (n * "
        + l
        + "), moments.",
        "solve: program.solve(backend='highs') for LP/QP"
        + (", backend='cvxpy' (SOCP needs it)" if kind == "SOCP" else ", or backend='cvxpy'")
        + "; program.dual().solve() gives the same optimum and q*.",
    ]


def birkhoff_lines(u: UncertaintySet) -> list[str]:
    """The permutation (Birkhoff) game (Fathony et al. 2018c)."""
    return [
        "loss: the Hamming loss between permutations of the k items of the rankings, "
        "k - <P_hat, P> (recognised as permutation_hamming).",
        "fast path: the Birkhoff game's compact LP, max_Q k - sum(a) - sum(c) + <Theta, Q> over "
        "doubly stochastic Q with a_i + c_j >= Q_ij (k^2 + 2k variables instead of k! labels); "
        f"prediction {fast_paths.BIRKHOFF.prediction}.",
        "not used: the k!-label simplex game (its loss matrix has (k!)^2 entries).",
        "",
        f"uncertainty: {rounded(u)}: the adversary keeps {u.adversary_constraint}; regulariser "
        f"R(W) = {u.regularizer} on the item-position weights W (not the intercepts).",
        "polytope: Birkhoff() (each sample's adversary Q_i is doubly stochastic).",
        f"program: {u.program_kind}. Primal blocks W (d * k^2), b (k^2), predictor (n * k^2), "
        "a, c (n * k each); rows game (n * k^2), predictor rows and columns. Dual blocks Q "
        "(n * k^2), a, c; rows Birkhoff, game, moments.",
    ]


def polytope_lines(
    loss: Any, polytope: Any, description: Any, fmap: FeatureMap, u: UncertaintySet
) -> list[str]:
    """A game over a polytope with a bilinear loss (:mod:`advgame.compile.polytope`);
    ``description`` is the polytope's linear description for the loss's dimension, or None when
    it has none."""
    M = np.asarray(loss.M)
    d = M.shape[0]
    lines = [
        f"loss: {rounded(loss)}, bilinear on the embeddings: loss(a, y) = c + u.a + v.y + a' M y with "
        f"M {d} x {M.shape[1]}, c = {float(loss.c):g}.",
        "game: the loss is affine in each side's embedding, so each sample's game over the "
        "vertices of the polytope is the bilinear game max_{mu in P} min_{nu in P} loss(nu, mu) "
        "+ g_i . mu with g_i = Theta^T [x_i; 1]; its inner LP is dualised through P's linear "
        "description (Fathony et al. 2018a, §3; 2018c).",
        "fast path: none per sample; the compiled program holds every sample's LP at once.",
        "",
        f"features: {type(fmap).__name__} -> phi(x, y) = emb(y) ⊗ [x; 1], theta = vec(Theta) "
        f"with (d + 1) * {d} parameters.",
        f"uncertainty: {rounded(u)}: the adversary keeps {u.adversary_constraint}; regulariser "
        f"R(theta) = {u.regularizer}.",
    ]
    if description is None:
        return lines + [
            f"polytope: {rounded(polytope)} has no linear description (constraints()): no compiled "
            "program; compile(X, Y).solve() runs mirror-prox (Nemirovski 2004) with the "
            "polytope's projection and linear maximisation oracle, and returns a certified gap "
            "(advgame.solvers.polytope_game)."
        ]
    m_ub, m_eq, n_aux = description.A_ub.shape[0], description.A_eq.shape[0], description.n_aux
    aux = f", nu_aux (n * {n_aux})" if n_aux else ""
    return lines + [
        f"polytope: {rounded(polytope)}: {d} coordinates, linear description with {m_ub} inequality "
        f"rows, {m_eq} equality rows and {n_aux} auxiliary variables (each sample's nu_i and "
        "mu_i).",
        f"program: {u.program_kind}. Primal blocks theta ((d + 1) * {d}), nu (n * {d}){aux}, "
        f"lam (n * {m_ub}), eta (n * {m_eq}); rows game (n * {d})"
        + (f", game aux (n * {n_aux})" if n_aux else "")
        + f", polytope (n * {m_ub}), polytope eq (n * {m_eq}). Dual blocks mu, alpha, beta"
        + ("" if isinstance(u, Exact) else ", moment_gap")
        + "; rows polytope, game, moments.",
        "solve: program.solve() (HiGHS for an LP, cvxpy otherwise); program.dual().solve() "
        "gives the same optimum and each sample's mu*.",
    ]


def fenchel_young_lines(
    loss: Entropy, polytope: Any, description: Any, fmap: FeatureMap, u: UncertaintySet
) -> list[str]:
    """A generalised entropy over a polytope (:mod:`advgame.compile.fenchel_young`): the
    Fenchel-Young loss of the projection oracles; ``description`` is the polytope's linear
    description, or None when it has none."""
    d = loss.n_labels
    geometry = "Euclidean" if loss.kind == "brier" else "KL"
    lines = [
        f"loss: {rounded(loss)}, H(mu) = "
        + ("1 - ||mu||^2" if loss.kind == "brier" else "-sum_j mu_j log mu_j")
        + f" over the polytope: the {geometry} Fenchel-Young (projection) loss of Blondel (2019, "
        "Eq. 5-6), "
        + (
            "F(g) - g.y = 1 - ||y||^2 + 2 L(g / 2; y), mu* = project(g / 2)."
            if loss.kind == "brier"
            else "F(g) - g.y = L(g; y) - sum_j y_j log y_j, mu* = project(g, 'kl')."
        ),
        "fast path: the polytope's projection per sample (polytope.project); the compiled "
        "program holds every sample's inner maximisation at once.",
        "",
        f"features: {type(fmap).__name__} -> phi(x, y) = emb(y) ⊗ [x; 1], theta = vec(Theta) "
        f"with (d + 1) * {d} parameters.",
        f"uncertainty: {rounded(u)}: the adversary keeps {u.adversary_constraint}; regulariser "
        f"R(theta) = {u.regularizer}.",
    ]
    if description is None:
        return lines + [
            "program: none (a polytope without constraints() has no linear description); "
            "ag.ProjectionClassifier and ag.LabelRanker fit this loss by L-BFGS through the "
            "projections."
        ]
    m_ub = description.A_ub.shape[0]
    m_eq = 0 if description.A_eq is None else description.A_eq.shape[0]
    shannon = loss.kind == "log"
    kind = "EXP" if shannon else ("SOCP" if u.program_kind == "SOCP" else "QP")
    point = (
        f"r (n * {d}, the exponential-cone terms exp(r_ij))"
        if shannon
        else f"s (n * {d}, the quadratic ||s_i||^2 / 4)"
    )
    return lines + [
        f"polytope: {rounded(polytope)}: {d} coordinates, linear description with {m_ub} inequality "
        f"rows, {m_eq} equality rows and {description.n_aux} auxiliary variables.",
        f"program: {kind}. Primal blocks theta ((d + 1) * {d}), {point}, lam (n * {m_ub}), "
        f"eta (n * {m_eq}); rows game (n * {d})"
        + (f", game aux (n * {description.n_aux})" if description.n_aux else "")
        + (
            ". Dual blocks mu (with the entropy -mu log mu)"
            if shannon
            else ". Dual blocks mu (with -||mu_i||^2)"
        )
        + ("" if isinstance(u, Exact) else ", moment_gap")
        + "; rows polytope, moments.",
        (
            "solve: program.solve() (cvxpy; HiGHS takes no exponential cones); "
            "program.dual().solve() gives the same optimum and each sample's mu* = "
            "project(g_i, 'kl')."
            if shannon
            else "solve: program.solve() (HiGHS or cvxpy); program.dual().solve() gives the same "
            "optimum and each sample's mu* = project(g_i / 2)."
        ),
    ]


def graph_lines(
    loss: str | LossMatrix,
    L: LossMatrix | None,
    example: LossMatrix,
    polytope: Any,
    u: UncertaintySet,
) -> list[str]:
    """A graph game over a :class:`~advgame.polytopes.Marginal` polytope."""
    structure = example.structure
    if L is None:
        described = f"'{loss}' (built for the k labels of y), recognised as {structure.kind}"
    else:
        described = f"a {L.shape} matrix, recognised as {structure}"
    found = fast_paths.closed_form(example)
    node_game = (
        f"the closed form for {found[0].name}"
        if found is not None
        else "the node game's vertex table or LP (no closed form)"
    )
    return [
        f"loss: additive over nodes, sum_i w_i L[a_i, y_i] with L {described}.",
        f"polytope: {rounded(polytope)}: "
        + (
            "the marginal polytope (exact; on a forest the local polytope, otherwise clique "
            "marginals on a junction tree)."
            if polytope.exact
            else "the local polytope, a relaxation on a graph with cycles (the value is an upper "
            "bound)."
        ),
        "fast path: on forests, dual decomposition (Fathony et al. 2018b, Theorem 2): each node's "
        f"game is an ordinary game solved by {node_game}, edge marginals by an optimal-transport "
        "LP, certified by the duality gap; other graphs: the LP over the regions' marginals.",
        "",
        f"uncertainty: {rounded(u)}: the adversary keeps {u.adversary_constraint} on the node and edge "
        f"moments; regulariser R(theta) = {u.regularizer}.",
        f"program: {u.program_kind}. Primal blocks theta, alpha (one per marginal-polytope row), "
        "p (the predictor's node marginals); rows game, predictor simplex. Dual blocks mu (the "
        "region marginals), v; rows marginal polytope, game, moments.",
    ]


def minimax_lines(
    loss: Any, L: LossMatrix | None, example: LossMatrix | None, balls: MomentBalls, kind: str
) -> list[str]:
    """Farnia and Tse's minimax model: a generalised entropy ``loss``, or a loss matrix ``L``
    (None while a name waits for ``k``; ``example`` built for 3 classes); ``kind`` the compiled
    program's kind."""
    if isinstance(loss, Entropy):
        regression = loss.kind == "quadratic"
        row, _ = fast_paths.find(loss)
        lines = [
            f"loss: generalised entropy {loss.kind} ({loss.formula}); Farnia and Tse's "
            "minimax model.",
            f"fast path: F, the conjugate of the entropy, in closed form ({row.formula}), so the "
            "fast solver is L-BFGS (smooth penalty) or FISTA (norm balls).",
        ]
    else:
        regression = False
        structure = example.structure
        found = fast_paths.closed_form(example)
        lines = [
            f"loss: {'a loss matrix' if L is None else f'{L.n_actions}x{L.n_labels} matrix'}"
            f" recognised as {structure}; its generalised entropy H(q) = min_a (L q)_a is "
            "polyhedral (Farnia and Tse's minimax model with a loss matrix).",
            "fast path: F(f) = max_q H(q) + f^T q is the game value ("
            + (
                f"the {found[0].name} closed form, {found[0].theorem}"
                if found is not None
                else "advgame.Game's fast path"
            )
            + "); it is not smooth, so the fast solver smooths it (F_mu, mu -> 0) and "
            "certifies the result by a dual bound.",
        ]
    target = (
        "theta(Y) = Y (the real target)"
        if regression
        else (
            "theta(Y) = the one-hot encoding of the first k - 1 classes (the last pinned at "
            "potential 0)"
        )
    )
    return lines + [
        "",
        f"features: [x; 1], {target}; A has one row per encoded target.",
        f"uncertainty: {rounded(balls)}: one moment ball per row of A; regulariser "
        + (
            "sum_r lam_r ||A_r||_*^2 (Theorem 5)"
            if balls.squared
            else "sum_r eps_r ||A_r||_* (Theorem 3)"
        )
        + "; intercept moments matched exactly.",
        f"program: {kind} (primal: A, plus "
        + (
            "u, p per sample and rows game, simplex"
            if not isinstance(loss, Entropy)
            else "tau for Brier"
            if loss.kind == "brier"
            else "nothing else"
        )
        + "; dual: "
        + ("m per sample" if regression else "q per sample (simplex)")
        + ", rows intercept, moments).",
        "solve: program.solve() (HiGHS through cvxpy for an LP, Clarabel otherwise); "
        "program.dual().solve() gives the same optimum (the maximum-entropy adversary).",
    ]
