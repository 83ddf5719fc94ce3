r"""The declaration layer: one object that holds a game's four declarations.

A robust prediction game is declared by

* a **loss** -- a loss matrix ``L[a, y]`` (a :class:`~advgame.losses.LossMatrix`, an array, or a
  name: ``'zero_one'``, ``'ordinal'``, ``'squared'``, ``'abstain'``), a generalised entropy
  (:func:`advgame.losses.brier`, ``log``, ``quadratic``), the Hamming loss between permutations,
  or a loss bilinear on the embeddings of a polytope's vertices (:class:`~advgame.losses.Bilinear`);
* a **feature map** ``phi(x, y)``, the statistics the adversary must match
  (:mod:`advgame.features`);
* an **uncertainty set**, how closely the adversary must match them
  (:mod:`advgame.uncertainty`: exact, a norm ball, soft moments, per-class moment balls);
* a **polytope** in which the adversary's conditional distribution lives
  (:mod:`advgame.polytopes`: the simplex by default; with a bilinear loss, any polytope with a
  linear description, whose vertices are the outputs).

:class:`PredictionGame` checks that they fit together, compiles the learning problem
(:meth:`PredictionGame.compile`) into its primal (the predictor's regularised risk) and its dual
(the adversary's constrained maximisation), and says which fast path solves its per-sample
games and why (:meth:`PredictionGame.explain`).  Estimators translate their parameters into a
declaration (their ``game_``) and fit through it.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING

from numpy.typing import ArrayLike

from . import explain, losses, polytopes
from ._validation import check_real
from .compile.fenchel_young import FenchelYoungProgram, build_fenchel_young, fenchel_young_latex
from .compile.graph import build_graph, graph_latex
from .compile.inputs import (
    HAMMING,
    LOSS_ALIASES,
    LOSS_NAMES,
    classes_of,
    declared_loss_matrix,
    graph_loss,
    hamming_items,
    resolve_loss_matrix,
)
from .compile.learning import LearningProgram, build_learning, learning_latex
from .compile.matching import build_matching, matching_latex
from .compile.minimax import MinimaxProgram, build_minimax, minimax_kind, minimax_latex
from .compile.polytope import PolytopeProgram, build_polytope, polytope_latex
from .exceptions import NotApplicableError
from .features import (
    CallableFeatures,
    FeatureMap,
    GraphFeatures,
    KernelFeatures,
    Multiclass,
    Thresholded,
)
from .game import Game
from .losses import Bilinear, Entropy, LossMatrix
from .uncertainty import Exact, MomentBalls, NormBall, UncertaintySet, as_uncertainty

if TYPE_CHECKING:
    from .solvers.polytope_game import OracleProgram

__all__ = [
    "PredictionGame",
    "BUILDERS",
    "LOSS_NAMES",
    "FEATURE_NAMES",
    "classes_of",
    "resolve_loss_matrix",
]

#: Feature-map names a declaration accepts.
FEATURE_NAMES = ("multiclass", "thresholded")
#: A permutation Hamming loss matrix over the simplex (``k!`` labels) is enumerated for at most
#: this many items (``5! = 120`` labels; the program holds ``n (k!)^2`` loss entries).
MAX_SIMPLEX_PERMUTATION_ITEMS = 5

#: The builder of each family's learning program (:attr:`PredictionGame.family`), all called
#: as ``build(loss, features, uncertainty, polytope, X, y, sample_weight, alpha=...)``:
#: :meth:`PredictionGame.compile` is this table's lookup.
BUILDERS = {
    "simplex": build_learning,
    "birkhoff": build_matching,
    "graph": build_graph,
    "minimax": build_minimax,
    "polytope": build_polytope,
    "fenchel-young": build_fenchel_young,
}

_UNCERTAINTY_HELP = (
    "ag.Exact(), ag.NormBall(radius, norm) with norm in 1, 2, inf, 'group', ag.SoftMoments(lam), "
    "a name ('exact', 'soft', 'l1', 'l2', 'linf', 'group'), or None (exact)"
)


# ------------------------------------------------------------------------ the declarations
def _declare_loss(loss, alpha):
    """A :class:`LossMatrix`, an :class:`Entropy`, or a loss name (kept until ``k`` is known)."""
    if isinstance(loss, (LossMatrix, Entropy, Bilinear)):
        return loss
    if isinstance(loss, str):
        name = LOSS_ALIASES.get(loss, loss)
        if name not in LOSS_NAMES + (HAMMING,):
            raise ValueError(
                f"loss must be a LossMatrix, an array, a generalised entropy (ag.losses.brier(k), "
                f"log(k), quadratic()) or one of {LOSS_NAMES + (HAMMING,)}; got {loss!r}."
            )
        return name
    try:
        return LossMatrix(loss)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"loss is not a valid loss matrix: {exc}") from exc


def _declare_features(features):
    if isinstance(features, FeatureMap):
        return features
    if isinstance(features, str):
        if features == "multiclass":
            return Multiclass()
        if features == "thresholded":
            return Thresholded()
        if features in ("rbf", "poly", "linear"):
            return KernelFeatures(features)
    elif callable(features):
        return CallableFeatures(features)
    raise ValueError(
        "features must be a feature map of advgame.features (Multiclass(), Thresholded(), "
        "KernelFeatures(kernel, gamma), CallableFeatures(phi)), one of 'multiclass', "
        f"'thresholded', 'rbf', 'poly', 'linear', or a callable phi(X, j); got {features!r}."
    )


def _declare_uncertainty(uncertainty):
    if uncertainty is None:
        return Exact()
    if isinstance(uncertainty, (UncertaintySet, MomentBalls)):
        return uncertainty
    try:
        return as_uncertainty(uncertainty)
    except ValueError:
        raise ValueError(f"uncertainty must be {_UNCERTAINTY_HELP}; got {uncertainty!r}.") from None


def _describe(value):
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, LossMatrix):
        return f"LossMatrix({value.structure}, {value.n_actions}x{value.n_labels})"
    return repr(value)


class PredictionGame:
    r"""A robust prediction game declared by its loss, features, uncertainty set and polytope.

    The learning problem it declares is Fathony et al.'s (2018a) minimax problem (Eq. 1-2), with the
    moment constraint relaxed by the uncertainty set (Farnia and Tse 2016, Theorem 3)

    .. math::

        \min_{\hat P}\ \max_{\check P \in \Xi}\ \mathbb E_{x \sim \tilde P}\,
        \mathbb E_{\hat y \sim \hat P, \check y \sim \check P}\, L(\hat y, \check y),
        \qquad \Xi = \{\check P : \check P(\cdot | x) \in \mathcal C,\
        \mathbb E_{\check P}[\phi] - \tilde{\mathbb E}[\phi] \in \mathcal U\},

    whose Lagrangian dual is the regularised surrogate risk
    ``min_theta sum_i w_i AL(f_i(theta), y_i) + R(theta)`` (the design notes, docs/design.md,
    "The game that ties the papers together").

    Parameters
    ----------
    loss : LossMatrix, array-like, str, Entropy or Bilinear
        A loss matrix ``L[a, y] >= 0`` (``l`` actions by ``k`` labels), a name built for the
        number of classes when the data are seen (``'zero_one'``, ``'ordinal'``, ``'squared'``,
        ``'abstain'`` with ``alpha``), a generalised entropy (:func:`advgame.losses.brier`,
        ``log``, ``quadratic``), the Hamming loss between permutations
        (:func:`advgame.permutation.hamming_loss_matrix`), or a loss bilinear on the embeddings
        of a polytope's vertices (:class:`advgame.losses.Bilinear`: the game over any polytope
        with a linear description, :mod:`advgame.compile.polytope`).
    features : FeatureMap, str or callable, default='multiclass'
        ``'multiclass'`` (``e_y ⊗ [x; 1]``), ``'thresholded'`` (Fathony et al. 2018a, §3.2.1), a
        kernel name (``'rbf'``, ``'poly'``, ``'linear'``: the representer form of Fathony et al.
        2018a, §6.2), a :class:`~advgame.features.FeatureMap`, or a callable
        ``phi(X, j) -> (n, p)``.
    uncertainty : UncertaintySet, MomentBalls, str or None, default=None
        ``None`` or :class:`~advgame.uncertainty.Exact` (exact moment matching),
        :class:`~advgame.uncertainty.NormBall`, :class:`~advgame.uncertainty.SoftMoments`,
        :class:`~advgame.uncertainty.MomentBalls` (the per-class balls of Farnia and Tse 2016, for
        entropies).
    polytope : Polytope or None, default=None
        Where each sample's adversary lives: :class:`~advgame.polytopes.Simplex` (the default,
        and the only one a loss matrix over labels defines); :class:`~advgame.polytopes.Birkhoff`
        and :class:`~advgame.polytopes.Marginal` for the permutation and graph games; with a
        :class:`~advgame.losses.Bilinear` loss any polytope with
        :meth:`~advgame.polytopes.Polytope.constraints` (the unit cube, knapsack, order simplex,
        permutahedron, a user's ``Polytope.from_constraints`` or ``from_vertices``).
    alpha : float, default=0.5
        The abstention cost when ``loss='abstain'``.

    Examples
    --------
    >>> import numpy as np, advgame as ag
    >>> pg = ag.PredictionGame("zero_one", uncertainty=ag.NormBall(0.1, norm=1))
    >>> X = np.random.default_rng(0).normal(size=(20, 2)); y = (X[:, 0] > 0).astype(int)
    >>> program = pg.compile(X, y)
    >>> program.kind
    'LP'
    >>> primal, dual = program.solve(), program.dual().solve()
    >>> bool(abs(primal.objective - dual.value) < 1e-7)
    True
    """

    def __init__(
        self,
        loss: "LossMatrix | Entropy | ArrayLike | str",
        features: "FeatureMap | str | Callable" = "multiclass",
        uncertainty: "UncertaintySet | MomentBalls | str | None" = None,
        polytope: "polytopes.Polytope | None" = None,
        alpha: float = 0.5,
    ) -> None:
        self.loss = _declare_loss(loss, alpha)
        self.alpha = alpha
        self.features = _declare_features(features)
        self.uncertainty = _declare_uncertainty(uncertainty)
        self.polytope = polytopes.Simplex() if polytope is None else polytope
        self._check()

    # ------------------------------------------------------------------------- validation
    def _invalid(self, first, second, why, valid):
        return ValueError(
            f"{first} = {_describe(getattr(self, first))} does not fit {second} = "
            f"{_describe(getattr(self, second))}: {why} Valid: {valid}."
        )

    def _check(self):
        if not isinstance(self.polytope, polytopes.Polytope):
            raise ValueError(
                "polytope must be an advgame.polytopes polytope (Simplex(), Birkhoff(), "
                f"Marginal(graph)) or None (the simplex); got {self.polytope!r}."
            )
        if self.loss == "abstain":
            self.alpha = check_real("alpha (abstention penalty)", self.alpha, low=0, high=1)
        family = self.family
        if family != "minimax" and isinstance(self.uncertainty, MomentBalls):
            raise self._invalid(
                "uncertainty",
                "loss",
                "MomentBalls are Farnia and Tse's per-class moment balls, over the probability "
                f"simplex (here polytope = {self.polytope!r}).",
                "polytope=None (the simplex) with a loss matrix or ag.losses.brier(k), log(k), "
                f"quadratic(); with polytope = {self.polytope!r}: {_UNCERTAINTY_HELP}",
            )
        {
            "simplex": self._check_simplex,
            "birkhoff": self._check_birkhoff,
            "graph": self._check_graph,
            "minimax": self._check_minimax,
            "polytope": self._check_polytope,
            "fenchel-young": self._check_fenchel_young,
        }[family]()
        if isinstance(self.features, KernelFeatures) and isinstance(self.uncertainty, NormBall):
            if self.uncertainty.norm != 2:
                raise self._invalid(
                    "uncertainty",
                    "features",
                    "kernel features have no coordinates, so only the RKHS (l2) norm is defined.",
                    "NormBall(radius, norm=2), SoftMoments(lam) or Exact()",
                )

    @property
    def family(self) -> str:
        """Which learning program the declaration compiles to: ``'simplex'`` (a loss matrix
        over labels), ``'minimax'`` (Farnia and Tse's minimax model: a generalised entropy, or a
        loss matrix with per-class :class:`~advgame.uncertainty.MomentBalls`), ``'birkhoff'``
        (the permutation game), ``'graph'`` (a graph's marginal polytope), ``'polytope'`` (a
        :class:`~advgame.losses.Bilinear` loss over any polytope with a linear description),
        ``'fenchel-young'`` (the Brier or Shannon entropy over a polytope, with an uncertainty set
        other than MomentBalls: the projection-oracle losses, :mod:`advgame.compile.fenchel_young`)."""
        if isinstance(self.loss, Bilinear):
            return "polytope"
        if isinstance(self.polytope, polytopes.Marginal):
            return "graph"
        if isinstance(self.loss, Entropy):
            if isinstance(self.uncertainty, MomentBalls) or self.loss.kind == "quadratic":
                return "minimax"
            return "fenchel-young"
        if isinstance(self.polytope, polytopes.Birkhoff):
            return "birkhoff"
        if isinstance(self.uncertainty, MomentBalls):
            return "minimax"
        return "simplex"

    def _check_simplex(self):
        items = hamming_items(self.loss)
        if self.loss == HAMMING or (items or 0) > MAX_SIMPLEX_PERMUTATION_ITEMS:
            raise self._invalid(
                "loss",
                "polytope",
                "the Hamming loss between permutations of k items is, over the simplex, a game "
                "with one label per permutation (k! labels; here "
                + ("k is only known from the rankings" if items is None else f"{items} items")
                + f"), enumerated up to {MAX_SIMPLEX_PERMUTATION_ITEMS} items only.",
                "polytope=ag.polytopes.Birkhoff() with y the rankings (n, k) (the compact "
                "Birkhoff LP); or ag.permutation.hamming_loss_matrix(k) for k <= "
                f"{MAX_SIMPLEX_PERMUTATION_ITEMS} with the simplex and y the permutation indices",
            )
        if not isinstance(self.polytope, polytopes.Simplex):
            raise self._invalid(
                "polytope",
                "loss",
                "a loss matrix over labels puts the adversary's conditional distribution in the "
                "probability simplex.",
                "polytope=None or ag.polytopes.Simplex()",
            )

    def _check_birkhoff(self):
        if self.loss != HAMMING and hamming_items(self.loss) is None:
            raise self._invalid(
                "polytope",
                "loss",
                "the Birkhoff polytope holds the adversary's doubly stochastic matrices over "
                "permutations, whose game is the Hamming loss k - <P_hat, P>.",
                "loss='hamming' or ag.permutation.hamming_loss_matrix(k) with "
                "polytope=ag.polytopes.Birkhoff(); another loss with polytope=None or "
                "ag.polytopes.Simplex()",
            )
        if not isinstance(self.features, Multiclass):
            raise self._invalid(
                "features",
                "polytope",
                "the Birkhoff game scores every item at every position linearly, "
                "Theta(x) = reshape(W^T x + b, (k, k)).",
                "features='multiclass' or ag.features.Multiclass(fit_intercept)",
            )

    def _check_graph(self):
        if isinstance(self.loss, Entropy) and self.loss.kind != "log":
            raise self._invalid(
                "loss",
                "polytope",
                "a graph game is played over an additive loss sum_i w_i L[a_i, y_i] (a loss "
                "matrix); of the generalised entropies only the log loss has a graph form (the "
                "CRF, which has no compiled program).",
                "a loss matrix or one of " + str(LOSS_NAMES + (HAMMING,)) + " with "
                "polytope=ag.polytopes.Marginal(graph); a generalised entropy with polytope=None",
            )
        if not isinstance(self.features, GraphFeatures):
            raise self._invalid(
                "features",
                "polytope",
                "the Marginal polytope's adversary plays node and edge marginals of a graph, "
                "whose moments are node and edge features of graph examples (X a list of "
                "(N_s, d) node inputs), not features of a flat X.",
                "features=ag.features.GraphFeatures() with polytope=Marginal(graph); "
                "multiclass features with polytope=None (the simplex)",
            )

    def _check_minimax(self):
        if not isinstance(self.uncertainty, MomentBalls):
            raise self._invalid(
                "loss",
                "uncertainty",
                "a generalised entropy is Farnia and Tse's minimax model, whose uncertainty set "
                "is one moment ball per class.",
                "ag.MomentBalls(radius, norm) (or a loss matrix with " + _UNCERTAINTY_HELP + ")",
            )
        if not isinstance(self.polytope, polytopes.Simplex):
            raise self._invalid(
                "polytope",
                "loss",
                "the minimax model's conditionals live on the probability simplex.",
                "polytope=None or ag.polytopes.Simplex()",
            )
        if self.loss == HAMMING:
            raise self._invalid(
                "loss",
                "uncertainty",
                "the permutation Hamming loss is the Birkhoff game, not a minimax model.",
                f"polytope=ag.polytopes.Birkhoff() with {_UNCERTAINTY_HELP}",
            )
        if type(self.features) is not Multiclass:
            raise self._invalid(
                "features",
                "uncertainty",
                "the minimax model is linear in [x; 1] with one moment ball per encoded class "
                "(the last class pinned at potential 0).",
                "features='multiclass' or Multiclass(fit_intercept)",
            )

    def _check_polytope(self):
        if type(self.features) is not Multiclass:
            raise self._invalid(
                "features",
                "loss",
                "a bilinear loss scores the vertices of the polytope by their embeddings, "
                "phi(x, y) = emb(y) ⊗ [x; 1].",
                "features='multiclass' or ag.features.Multiclass(fit_intercept)",
            )
        self.description()

    def _check_fenchel_young(self):
        if type(self.features) not in (Multiclass, KernelFeatures):
            raise self._invalid(
                "features",
                "loss",
                "a generalised entropy over a polytope scores its points by their embeddings, "
                "phi(x, y) = emb(y) ⊗ [x; 1] (or its kernel form).",
                "features='multiclass', ag.features.Multiclass(fit_intercept, "
                "penalize_intercept) or ag.features.KernelFeatures(kernel, ..., fit_intercept)",
            )
        try:
            self._entropy_description()
        except ValueError as exc:
            raise self._invalid(
                "loss",
                "polytope",
                f"the entropy's points have {self.loss.n_labels} coordinates, which the "
                f"polytope does not take ({exc})",
                f"ag.losses.{self.loss.kind}(d) with d the dimension of the polytope's points",
            ) from None

    def _entropy_description(self):
        """The polytope's linear description for a generalised entropy's points, or None."""
        try:
            return self.polytope.constraints(self.loss.n_labels)
        except NotApplicableError:
            return None

    def description(self) -> "polytopes.LinearDescription | None":
        """The polytope's linear description for the points of a :class:`~advgame.losses.Bilinear`
        loss (``d`` = the size of its ``M``), or None when the polytope has none (its game then
        has no compiled program)."""
        d = self.loss.M.shape[0]
        try:
            return self.polytope.constraints(d)
        except NotApplicableError:
            return None
        except ValueError as exc:
            raise self._invalid(
                "loss",
                "polytope",
                f"the loss's M is {d} x {d}, so each output is a point with {d} coordinates, "
                f"which the polytope does not take ({exc})",
                "a Bilinear loss whose M matches the polytope's points (Bilinear.hamming(k) with "
                "UnitCube() or Knapsack(low, high), Bilinear.absolute(k) with OrderSimplex(), "
                "Bilinear.spearman(k) with Permutahedron(w) of k weights, "
                "Bilinear.permutation_hamming(k) with Birkhoff())",
            ) from None

    # ----------------------------------------------------------------------- resolution
    def loss_matrix(self, k: int | None = None, classes: ArrayLike | None = None) -> LossMatrix:
        """The loss matrix for ``k`` classes (a name is built for ``k``; a matrix is checked
        against it and aligned with ``classes`` when its labels name them)."""
        if isinstance(self.loss, Bilinear):
            raise ValueError(
                f"loss = {self.loss!r} is bilinear on the embeddings of a polytope's vertices, not "
                "a loss matrix over labels; its game over listed vertices V is "
                "ag.Game(loss.matrix(V)), and compile(X, Y) compiles its learning problem."
            )
        if isinstance(self.loss, Entropy):
            raise ValueError(
                f"loss = {self.loss!r} is a generalised entropy, not a loss matrix; its game is "
                "ag.Game(loss); declare it with uncertainty=ag.MomentBalls(radius) to compile its "
                "learning problem."
            )
        if k is None:
            if isinstance(self.loss, str):
                raise ValueError(
                    f"loss = {self.loss!r} is built for the number of classes: give k (or data)."
                )
            k = self.loss.n_labels
        loss = graph_loss(self.loss) if self.family == "graph" else self.loss
        return declared_loss_matrix(loss, k, self.alpha, classes)

    def game(self, k: int | None = None) -> Game:
        """The per-sample game (:class:`~advgame.Game`) of the declared loss, for ``k`` classes
        (``k`` may be omitted when the loss is a matrix or an entropy; that game is cached)."""
        if k is not None and not isinstance(self.loss, (LossMatrix, Entropy)):
            return Game(self.loss_matrix(k))
        if getattr(self, "_game", None) is None:
            self._game = Game(self.loss if isinstance(self.loss, Entropy) else self.loss_matrix(k))
        return self._game

    def __getstate__(self):
        state = dict(vars(self))
        state.pop("_game", None)  # rebuilt on use (it holds a solver)
        return state

    # --------------------------------------------------------------------------- compile
    def compile(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> "LearningProgram | MinimaxProgram | PolytopeProgram | FenchelYoungProgram | OracleProgram":
        r"""Compile the learning problem on data ``(X, y)``: the family's builder
        (:data:`BUILDERS`) called with the four declarations and the data.

        Parameters
        ----------
        X : array-like of shape (n, d)
            For a graph game, a list of examples (:func:`advgame.compile.build_graph`).
        y : array-like of shape (n,)
            Labels (rankings for the Birkhoff game).  The classes (the columns of ``P`` and ``Q``) are in the order of the loss
            matrix's labels when they name the classes (:func:`classes_of`), else sorted
            (``np.unique(y)``; for a loss name such as ``'ordinal'`` the sorted order is the
            ordinal order).
        sample_weight : array-like of shape (n,), optional
            Non-negative weights with a positive sum (normalised to sum to one).

        Returns
        -------
        LearningProgram
            Named blocks (``theta``, ``u``, ``p``, norm epigraphs), named constraint groups
            (``game``, ``simplex``, the uncertainty set's), ``solve``, ``dual``, ``to_cvxpy``,
            ``latex`` and ``describe``.  For a bilinear loss over a polytope without a linear
            description, an :class:`~advgame.solvers.polytope_game.OracleProgram` whose
            ``solve`` runs mirror-prox with the polytope's oracles and returns a certified gap.
        """
        if self.family == "graph" and isinstance(self.loss, Entropy):
            raise NotApplicableError(
                f"{self!r}: the log loss on a graph is the CRF; its learning problem (log Z) is "
                "not an LP/QP/SOCP and has no compiled program. Fit it with "
                "ag.AdversarialGraphicalModel(loss='log', solver='lbfgs' or 'subgradient')."
            )
        build = BUILDERS[self.family]
        if self.family == "polytope" and self.description() is None:
            from .solvers.polytope_game import build_oracle_game as build
        return build(
            self.loss,
            self.features,
            self.uncertainty,
            self.polytope,
            X,
            y,
            sample_weight,
            alpha=self.alpha,
        )

    # ----------------------------------------------------------------------------- LaTeX
    def latex(self, loss_matrix: LossMatrix | None = None) -> str:
        r"""The primal and dual learning programs as LaTeX, the declarations substituted.

        A sequence of ``$$`` displays (``aligned`` environments): the primal, the dual and a
        ``where`` block that defines every symbol they use, one definition a line.  It compiles
        with pdflatex under :func:`advgame.latex_preamble` (``amsmath`` and ``amssymb``).  For
        a polytope without a linear description, the saddle-point problem that mirror-prox
        solves (:func:`advgame.solvers.polytope_game.oracle_latex`).
        """
        if self.family == "polytope" and self.description() is None:
            from .solvers.polytope_game import oracle_latex

            return oracle_latex(self.loss, self.polytope, self.uncertainty)
        if self.family == "polytope":
            return polytope_latex(
                self.loss, self.polytope, self.features, self.uncertainty, self.description()
            )
        if self.family == "fenchel-young":
            return fenchel_young_latex(self.loss, self.polytope, self.uncertainty)
        if self.family == "minimax":
            return minimax_latex(self.loss, self.uncertainty, self.features.fit_intercept)
        if self.family == "birkhoff":
            return matching_latex(self.uncertainty, self.features.fit_intercept)
        L = loss_matrix if loss_matrix is not None else self._known_loss_matrix()
        if self.family == "graph":
            return graph_latex(L, self.loss, self.alpha, self.uncertainty, self.polytope)
        return learning_latex(L, self.loss, self.alpha, self.features, self.uncertainty)

    def _known_loss_matrix(self):
        if isinstance(self.loss, LossMatrix):
            return self.loss
        return None

    # --------------------------------------------------------------------------- explain
    def explain(self, k: int | None = None) -> str:
        """Readable text: the recognised structure of the loss (and the tolerance), the fast
        path ``auto`` uses for the per-sample games and why, those it does not use and why, and
        the program kind with its sizes (as formulas in ``n`` and ``d``); written by
        :mod:`advgame.explain` from :data:`advgame.fast_paths.TABLE`."""
        family = self.family
        if family == "birkhoff":
            body = explain.birkhoff_lines(self.uncertainty)
        elif family == "polytope":
            body = explain.polytope_lines(
                self.loss, self.polytope, self.description(), self.features, self.uncertainty
            )
        elif family == "fenchel-young":
            body = explain.fenchel_young_lines(
                self.loss,
                self.polytope,
                self._entropy_description(),
                self.features,
                self.uncertainty,
            )
        elif family == "minimax" and isinstance(self.loss, Entropy):
            kind = minimax_kind(self.loss, self.uncertainty)
            body = explain.minimax_lines(self.loss, None, None, self.uncertainty, kind)
        else:
            L = None if isinstance(self.loss, str) and k is None else self.loss_matrix(k)
            example = self.loss_matrix(3) if L is None else L
            if family == "minimax":
                kind = minimax_kind(losses.zero_one(2), self.uncertainty)
                body = explain.minimax_lines(self.loss, L, example, self.uncertainty, kind)
            elif family == "graph":
                body = explain.graph_lines(self.loss, L, example, self.polytope, self.uncertainty)
            else:
                from .solvers.auto import AUTO_RULE  # the estimators' policy, for this family

                body = explain.simplex_lines(
                    self.loss,
                    self.alpha,
                    L,
                    example,
                    self.features,
                    self.uncertainty,
                    self.polytope,
                )
                body = [*body, "", f"solver: {AUTO_RULE}"]
        return "\n".join([explain.rounded(self), "", *body])

    def _custom_multiclass(self):
        """Whether the multiclass map is not the default ``Multiclass()``."""
        return not (self.features.fit_intercept and self.features.penalize_intercept)

    def __repr__(self):
        parts = [f"loss={_describe(self.loss)}"]
        if self.loss == "abstain":
            parts.append(f"alpha={self.alpha:g}")
        parts += [
            f"features={self.features!r}"
            if not isinstance(self.features, Multiclass) or self._custom_multiclass()
            else "features=Multiclass()",
            f"uncertainty={self.uncertainty!r}",
            f"polytope={self.polytope!r}",
        ]
        return f"PredictionGame({', '.join(parts)})"
