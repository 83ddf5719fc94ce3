r"""The declaration layer: one object that holds a game's four declarations.

A robust prediction game is declared by

* a **loss** -- a loss matrix ``L[a, y]`` (a :class:`~advgame.losses.LossMatrix`, an array, or a
  name: ``'zero_one'``, ``'ordinal'``, ``'squared'``, ``'abstain'``), a generalised entropy
  (:func:`advgame.losses.brier`, ``log``, ``quadratic``) or the Hamming loss between permutations;
* a **feature map** ``phi(x, y)``, the statistics the adversary must match
  (:mod:`advgame.features`);
* an **uncertainty set**, how closely the adversary must match them
  (:mod:`advgame.uncertainty`: exact, a norm ball, soft moments, per-class moment balls);
* a **polytope** in which the adversary's conditional distribution lives
  (:mod:`advgame.polytopes`: the simplex by default).

:class:`PredictionGame` checks that they fit together, compiles the learning problem
(:meth:`PredictionGame.compile`) into its primal (the predictor's regularised risk) and its dual
(the adversary's constrained maximisation), and says which fast path solves its per-sample
games and why (:meth:`PredictionGame.explain`).  Estimators translate their parameters into a
declaration (their ``game_``) and fit through it.
"""

import copy
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from . import losses, polytopes
from ._validation import as_float_array, check_finite, check_rankings, check_real
from .compile import compile_learning
from .compile.graph import graph_latex
from .compile.learning import LearningProgram, learning_latex
from .compile.matching import compile_matching, matching_latex
from .compile.minimax import MinimaxProgram, compile_minimax, minimax_kind, minimax_latex
from .features import (
    CallableFeatures,
    FeatureMap,
    GraphFeatures,
    KernelFeatures,
    Multiclass,
    Thresholded,
)
from .game import AUTO_LP_CALL_ROWS, AUTO_TABLE_ROWS_PER_BASIS, AUTO_VERTEX_BASES, Game
from .losses import (
    ABSTAIN_CLOSED_FORM_MAX_ALPHA,
    STRUCTURE_RTOL,
    Entropy,
    LossMatrix,
)
from .uncertainty import Exact, MomentBalls, NormBall, UncertaintySet, as_uncertainty
from .vertices import basis_count

__all__ = ["PredictionGame", "LOSS_NAMES", "FEATURE_NAMES", "classes_of", "resolve_loss_matrix"]

#: Loss names a declaration accepts (built for ``k`` classes when the data are seen).
LOSS_NAMES = ("zero_one", "ordinal", "squared", "abstain")
#: Accepted aliases of loss names.
LOSS_ALIASES = {"absolute": "ordinal", "zero-one": "zero_one"}
#: Feature-map names a declaration accepts.
FEATURE_NAMES = ("multiclass", "thresholded")
#: The Hamming loss between permutations, ``k - <P_hat, P>``, for the ``k`` items of the rankings
#: (the loss of the Birkhoff game, Fathony et al. 2018c).
HAMMING = "hamming"
#: A permutation Hamming loss matrix over the simplex (``k!`` labels) is enumerated for at most
#: this many items (``5! = 120`` labels; the program holds ``n (k!)^2`` loss entries).
MAX_SIMPLEX_PERMUTATION_ITEMS = 5

_UNCERTAINTY_HELP = (
    "ag.Exact(), ag.NormBall(radius, norm) with norm in 1, 2, inf, 'group', ag.SoftMoments(lam), "
    "a name ('exact', 'soft', 'l1', 'l2', 'linf', 'group'), or None (exact)"
)


def resolve_loss_matrix(
    loss: str | LossMatrix | ArrayLike,
    k: int,
    names: Sequence[str] = LOSS_NAMES,
    classes: ArrayLike | None = None,
    name: str = "loss",
    **options: Any,
) -> LossMatrix:
    """A named loss ``losses.<name>(k, **options)`` (``names`` lists the accepted ones) or a
    user matrix with one column per class.  A matrix whose labels were named is aligned with
    ``classes`` (columns, and the actions named like them, reordered to class order)."""
    if isinstance(loss, str):
        loss = LOSS_ALIASES.get(loss, loss)
        if loss not in names:
            raise ValueError(f"{name} must be one of {names} or a loss matrix; got {loss!r}.")
        return getattr(losses, loss)(k, **options)
    try:
        L = losses.as_loss_matrix(loss)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} is not a valid loss matrix: {exc}") from exc
    if L.n_labels != k:
        seen = "" if classes is None else f" {list(classes)}"
        raise ValueError(
            f"the {name} matrix has {L.n_labels} label columns but y has {k} classes{seen}; give "
            "one column per class in sorted label order."
        )
    return L if classes is None else _align_to_classes(L, list(classes))


def classes_of(y: ArrayLike, loss: object = None) -> tuple[np.ndarray, np.ndarray]:
    """The classes of ``y`` and each label's class index.

    The classes are sorted, unless ``loss`` is a :class:`LossMatrix` whose labels name exactly
    the classes of ``y``: then they are in its label order, so that a declared order (an ordinal
    scale of string labels, ``['low', 'mid', 'high']``) and the matrix's structure survive.

    Parameters
    ----------
    y : array-like of shape (n,)
        Labels.
    loss : LossMatrix or other, optional
        The declared loss; only a :class:`LossMatrix` whose labels name the classes fixes the
        order.

    Returns
    -------
    classes : ndarray of shape (k,)
    y_index : ndarray of shape (n,)
        ``classes[y_index] == y``.
    """
    classes, y_index = np.unique(y, return_inverse=True)
    if not isinstance(loss, LossMatrix) or len(loss.labels) != classes.size:
        return classes, y_index
    labels = list(loss.labels)
    try:
        position = {label: j for j, label in enumerate(labels)}
        order = np.array([position[c] for c in classes.tolist()])
    except (KeyError, TypeError):  # the labels are display names, not the classes
        return classes, y_index
    ordered = np.empty_like(classes)
    ordered[order] = classes
    return ordered, order[y_index]


def _align_to_classes(L, classes):
    """``L`` with its columns in ``classes`` order when its labels name the classes.  Labels
    that share no name with the classes (display names such as 'poor', 'good' for classes 0, 1)
    and the default names ``0..k-1`` are taken in sorted class order; labels that name some
    classes but not all are an error."""
    if list(L.labels) in (list(range(L.n_labels)), classes):
        return L
    column = {label: j for j, label in enumerate(L.labels)}
    named = [c for c in classes if c in column]
    if not named:
        return L
    if len(named) < len(classes):
        raise ValueError(
            f"the loss matrix's labels {list(L.labels)} are not the classes of y {classes}; "
            "name its columns by the class labels, or leave them unnamed and give them in "
            "sorted label order."
        )
    order = [column[c] for c in classes]
    k = len(classes)
    rows = list(range(L.n_actions))
    actions = list(L.actions)
    if actions[:k] == list(L.labels):  # actions named like the labels move with them
        rows[:k] = order
    return losses.LossMatrix(
        L.matrix[np.ix_(rows, order)], labels=classes, actions=[actions[r] for r in rows]
    )


# ------------------------------------------------------------------------ the declarations
def _declare_loss(loss, alpha):
    """A :class:`LossMatrix`, an :class:`Entropy`, or a loss name (kept until ``k`` is known)."""
    if isinstance(loss, (LossMatrix, Entropy)):
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
    loss : LossMatrix, array-like, str or Entropy
        A loss matrix ``L[a, y] >= 0`` (``l`` actions by ``k`` labels), a name built for the
        number of classes when the data are seen (``'zero_one'``, ``'ordinal'``, ``'squared'``,
        ``'abstain'`` with ``alpha``), a generalised entropy (:func:`advgame.losses.brier`,
        ``log``, ``quadratic``), or the Hamming loss between permutations
        (:func:`advgame.permutation.hamming_loss_matrix`).
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
        and the only one a loss matrix over labels defines).
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
        (the permutation game), ``'graph'`` (a graph's marginal polytope)."""
        if isinstance(self.polytope, polytopes.Marginal):
            return "graph"
        if isinstance(self.loss, Entropy):
            return "minimax"
        if isinstance(self.polytope, polytopes.Birkhoff):
            return "birkhoff"
        if isinstance(self.uncertainty, MomentBalls):
            return "minimax"
        return "simplex"

    def _check_simplex(self):
        items = _hamming_items(self.loss)
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
        if self.loss != HAMMING and _hamming_items(self.loss) is None:
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
                "a loss matrix or one of " + str(LOSS_NAMES) + " with "
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

    # ----------------------------------------------------------------------- resolution
    def loss_matrix(self, k: int | None = None, classes: ArrayLike | None = None) -> LossMatrix:
        """The loss matrix for ``k`` classes (a name is built for ``k``; a matrix is checked
        against it and aligned with ``classes`` when its labels name them)."""
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
        options = {"alpha": self.alpha} if self.loss == "abstain" else {}
        return resolve_loss_matrix(self.loss, k, classes=classes, **options)

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
    ) -> "LearningProgram | MinimaxProgram":
        r"""Compile the learning problem on data ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n, d)
        y : array-like of shape (n,)
            Labels.  The classes (the columns of ``P`` and ``Q``) are in the order of the loss
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
            ``latex`` and ``describe``.
        """
        if self.family == "graph":  # X, y: lists of examples (advgame.compile.graph)
            return _compile_family(self, X, y, sample_weight)
        X = as_float_array("X", X)
        if X.ndim != 2 or X.shape[0] == 0:
            raise ValueError(
                f"X must be a non-empty 2-D array (n_samples, n_features); got shape {X.shape}."
            )
        check_finite("X", X)
        y = np.asarray(y)
        if self.family == "birkhoff":
            y = check_rankings(y, X.shape[0], name="y (rankings R[i, j] = rank of item j)")
        elif y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(
                f"y must be a 1-D array with one label per row of X ({X.shape[0]}); got shape "
                f"{y.shape}."
            )
        classes, y_index = classes_of(y, self.loss)
        if sample_weight is not None:
            sample_weight = as_float_array("sample_weight", sample_weight)
            if sample_weight.shape != (X.shape[0],) or not np.all(np.isfinite(sample_weight)):
                raise ValueError(
                    f"sample_weight must hold one finite weight per row of X ({X.shape[0]})."
                )
            if np.any(sample_weight < 0) or sample_weight.sum() <= 0:
                raise ValueError("sample_weight must be non-negative with a positive sum.")
        if self.family != "simplex":
            return _compile_family(self, X, y, sample_weight)
        k = classes.size
        if k < 2 and not (isinstance(self.loss, LossMatrix) and self.loss.n_labels == 1):
            raise ValueError(f"y must contain at least 2 classes; got {list(classes)}.")
        L = self.loss_matrix(k, classes=classes if not isinstance(self.loss, str) else None)
        fmap = _fresh(self.features).fit(X, k)
        return compile_learning(
            L.matrix,
            fmap,
            self.uncertainty,
            X,
            y_index,
            sample_weight,
            latex=self.latex(L),
        )

    # ----------------------------------------------------------------------------- LaTeX
    def latex(self, loss_matrix: LossMatrix | None = None) -> str:
        r"""The primal and dual learning programs as LaTeX, the declarations substituted."""
        if self.family == "minimax":
            return minimax_latex(self.loss, self.uncertainty, self.features.fit_intercept)
        if self.family == "birkhoff":
            return matching_latex(self.uncertainty, self.features.fit_intercept)
        L = loss_matrix if loss_matrix is not None else self._known_loss_matrix()
        if self.family == "graph":
            return graph_latex(self, L)
        return learning_latex(L, self.loss, self.alpha, self.features, self.uncertainty)

    def _known_loss_matrix(self):
        if isinstance(self.loss, LossMatrix):
            return self.loss
        return None

    # --------------------------------------------------------------------------- explain
    def explain(self, k: int | None = None) -> str:
        """Readable text: the recognised structure of the loss (and the tolerance), the fast
        path ``auto`` uses for the per-sample games and why, those it does not use and why, and
        the program kind with its sizes (as formulas in ``n`` and ``d``)."""
        lines = [repr(self), ""]
        if self.family == "birkhoff":
            return "\n".join(lines + _explain_birkhoff(self.uncertainty))
        if self.family == "graph":
            return "\n".join(lines + _explain_graph(self, k))
        if self.family == "minimax":
            return "\n".join(lines + self._explain_minimax(k))
        if isinstance(self.loss, str) and k is None:
            structure = losses.recognize(self.loss_matrix(3).matrix)
            lines.append(
                f"loss: '{self.loss}', built for the k classes of y"
                + (f" (abstention cost alpha = {self.alpha:g})" if self.loss == "abstain" else "")
                + f"; recognised as {structure.kind}."
            )
            L = None
        else:
            L = self.loss_matrix(k)
            structure = L.structure
            lines.append(
                f"loss: {L.n_actions} actions x {L.n_labels} labels, recognised as {structure} "
                f"(from its numbers, to relative tolerance {STRUCTURE_RTOL:g})."
            )
        lines += _explain_fast_path(structure, L)
        lines += [""] + self._explain_program(L)
        return "\n".join(lines)

    def _explain_minimax(self, k):
        loss, balls = self.loss, self.uncertainty
        if isinstance(loss, Entropy):
            regression = loss.kind == "quadratic"
            lines = [
                f"loss: generalised entropy {loss.kind} ({loss.formula}); Farnia and Tse's "
                "minimax model.",
                "fast path: F, the conjugate of the entropy, in closed form ("
                + {
                    "log": "log-sum-exp; grad F = softmax",
                    "brier": "grad F = the Euclidean projection of f / 2 onto the simplex",
                    "quadratic": "Huber; grad F = clip(z / 2, -rho, rho)",
                }[loss.kind]
                + "), so the fast solver is L-BFGS (smooth penalty) or FISTA (norm balls).",
            ]
            compiled = minimax_kind(loss, balls)
        else:
            regression = False
            L = None if isinstance(loss, str) and k is None else self.loss_matrix(k)
            structure = losses.recognize(self.loss_matrix(3).matrix) if L is None else L.structure
            lines = [
                f"loss: {'a loss matrix' if L is None else f'{L.n_actions}x{L.n_labels} matrix'}"
                f" recognised as {structure}; its generalised entropy H(q) = min_a (L q)_a is "
                "polyhedral (Farnia and Tse's minimax model with a loss matrix).",
                "fast path: F(f) = max_q H(q) + f^T q is the game value ("
                + (
                    "the 0-1 closed form"
                    if getattr(structure, "kind", structure) == "zero_one"
                    else "advgame.Game's fast path"
                )
                + "); it is not smooth, so the fast solver smooths it (F_mu, mu -> 0) and "
                "certifies the result by a dual bound.",
            ]
            compiled = minimax_kind(losses.zero_one(2), balls)
        target = (
            "theta(Y) = Y (the real target)"
            if regression
            else (
                "theta(Y) = the one-hot encoding of the first k - 1 classes (the last pinned at "
                "potential 0)"
            )
        )
        lines += [
            "",
            f"features: [x; 1], {target}; A has one row per encoded target.",
            f"uncertainty: {balls!r}: one moment ball per row of A; regulariser "
            + (
                "sum_r lam_r ||A_r||_*^2 (Theorem 5)"
                if balls.squared
                else "sum_r eps_r ||A_r||_* (Theorem 3)"
            )
            + "; intercept moments matched exactly.",
            f"program: {compiled} (primal: A, plus "
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
        return lines

    def _explain_program(self, L):
        u = self.uncertainty
        fmap = self.features
        kind = u.program_kind
        l = "l" if L is None else str(L.n_actions)
        k = "k" if L is None else str(L.n_labels)
        params = {
            Multiclass: f"(d + 1) * {k}",
            Thresholded: f"d + {k} - 1",
            KernelFeatures: f"n * {k}",
        }.get(type(fmap), "p (the callable's features)")
        lines = [
            f"features: {type(fmap).__name__} -> theta has {params} parameters.",
            f"uncertainty: {u!r}: the adversary keeps {u.adversary_constraint}; regulariser "
            f"R(theta) = {u.regularizer}.",
            f"polytope: {self.polytope!r} (each sample's conditional q_i).",
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
        return lines

    def __repr__(self):
        parts = [f"loss={_describe(self.loss)}"]
        if self.loss == "abstain":
            parts.append(f"alpha={self.alpha:g}")
        parts += [
            f"features={self.features!r}"
            if not isinstance(self.features, Multiclass)
            else "features=Multiclass()",
            f"uncertainty={self.uncertainty!r}",
            f"polytope={self.polytope!r}",
        ]
        return f"PredictionGame({', '.join(parts)})"


def _compile_family(pg, X, y, sample_weight):
    """The learning program of a non-simplex family (see :attr:`PredictionGame.family`)."""
    if pg.family == "birkhoff":
        return _compile_birkhoff(pg, X, y, sample_weight)
    if pg.family == "graph":
        from .compile.graph import compile_graph_game

        return compile_graph_game(pg, X, y, sample_weight)
    return _compile_minimax(pg, X, y, sample_weight)


def _compile_minimax(pg, X, y, sample_weight):
    """The minimax family's :class:`~advgame.compile.minimax.MinimaxProgram`: targets encoded
    as Farnia and Tse's ``theta(Y)`` (one-hot of the first ``k - 1`` classes, or ``Y``)."""
    loss = pg.loss
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
            loss = pg.loss_matrix(k, classes=classes if not isinstance(loss, str) else None)
        Theta, t = np.eye(k)[y_index], k - 1
    balls = copy.deepcopy(pg.uncertainty).bind(t, X.shape[1])
    return compile_minimax(
        loss, balls, X, Theta, sample_weight, fit_intercept=pg.features.fit_intercept
    )


def _hamming_items(loss):
    """``k`` when ``loss`` is the Hamming loss matrix between the ``k!`` permutations of ``k``
    items (:func:`advgame.permutation.hamming_loss_matrix`, weight 1), else None."""
    if not isinstance(loss, LossMatrix) or loss.n_actions != loss.n_labels:
        return None
    for k in range(2, losses.MAX_RECOGNISED_ITEMS + 1):
        if math.factorial(k) == loss.n_labels:
            template = losses.permutation_hamming_template(k)
            return k if np.allclose(loss.matrix, template, rtol=0, atol=STRUCTURE_RTOL) else None
    return None


def _compile_birkhoff(pg, X, R, sample_weight):
    """The Birkhoff game's :class:`~advgame.compile.MatchingProgram` on rankings ``R``."""
    items = _hamming_items(pg.loss)
    if items is not None and items != R.shape[1]:
        raise ValueError(
            f"the loss is the Hamming loss between permutations of {items} items but the "
            f"rankings order {R.shape[1]}; use loss='hamming' (items from the rankings) or "
            f"ag.permutation.hamming_loss_matrix({R.shape[1]})."
        )
    return compile_matching(
        X, R, pg.uncertainty, sample_weight, fit_intercept=pg.features.fit_intercept
    )


def _fresh(fmap):
    """An unfitted copy of a declared feature map (the declaration is never mutated)."""
    fresh = copy.copy(fmap)
    for name in [n for n in vars(fresh) if n.endswith("_") and not n.startswith("__")]:
        delattr(fresh, name)
    return fresh


def _explain_fast_path(structure, L):
    """The fast path ``Game(L).value(F, method='auto')`` takes, and why; and what it does not."""
    kind = structure.kind
    theorems = {
        "zero_one": "Fathony et al. 2018a, Theorem 5: sort the potentials and grow the top set, O(k log k)",
        "ordinal": "Fathony et al. 2018a, Theorem 6: the best pair (i, j) by two running maxima, O(k)",
        "squared": "Fathony et al. 2018a, Theorem 7: pair and single vertex sets",
        "abstain": "Fathony et al. 2018a, Theorems 12-13: the two largest potentials, O(k)",
    }
    lines = []
    if structure.has_closed_form:
        lines.append(f"fast path: closed form for {kind} ({theorems[kind]}), vectorised over rows.")
        lines.append(
            "not used: the vertex table and the LP (the closed form is exact and cheaper)."
        )
        return lines
    if kind == "abstain":
        lines.append(
            f"no closed form: abstain with alpha = {structure.alpha:g} > "
            f"{ABSTAIN_CLOSED_FORM_MAX_ALPHA:g} (Theorems 12-13 hold only for alpha <= 1/2)."
        )
    elif kind == "permutation_hamming":
        lines.append(
            "no closed form over labels: the Hamming loss between permutations is solved by the "
            "Birkhoff game's compact LP (k^2 + 2k variables instead of k!)."
        )
    else:
        lines.append(
            "no closed form: the matrix is not zero-one, ordinal, squared or abstain "
            "(alpha <= 1/2) up to scale."
        )
    if L is None:
        lines.append(
            "fast path: decided once k is known (a vertex table when it is small and a call has "
            "enough rows to pay for building it, else the bulk LP oracle)."
        )
        return lines
    bases = basis_count(L.n_actions, L.n_labels)
    lp = (
        "the LP oracle: one vectorised simplex over all rows of a call, each row certified by its "
        "duality gap (HiGHS for any row it cannot certify)"
    )
    if bases <= AUTO_VERTEX_BASES:
        rows = max(0, math.ceil(AUTO_TABLE_ROWS_PER_BASIS * bases - AUTO_LP_CALL_ROWS))
        lines.append(
            f"fast path: the vertex table (enumerating {bases:,} candidate bases <= "
            f"{AUTO_VERTEX_BASES:,}; then value(F) = max(F @ Q.T + v), one matrix product) for a "
            f"call of at least {rows:,} rows or once it is built; {lp} for smaller calls (building "
            "the table would cost more than it saves)."
        )
    else:
        lines.append(
            f"not used: the vertex table ({bases:,} candidate bases > {AUTO_VERTEX_BASES:,})."
        )
        lines.append(f"fast path: {lp}.")
    return lines


def _explain_birkhoff(u):
    """``explain`` for the permutation (Birkhoff) game (Fathony et al. 2018c)."""
    return [
        "loss: the Hamming loss between permutations of the k items of the rankings, "
        "k - <P_hat, P> (recognised as permutation_hamming).",
        "fast path: the Birkhoff game's compact LP, max_Q k - sum(a) - sum(c) + <Theta, Q> over "
        "doubly stochastic Q with a_i + c_j >= Q_ij (k^2 + 2k variables instead of k! labels); "
        "prediction by an assignment problem (Hungarian, scipy's linear_sum_assignment).",
        "not used: the k!-label simplex game (its loss matrix has (k!)^2 entries).",
        "",
        f"uncertainty: {u!r}: the adversary keeps {u.adversary_constraint}; regulariser "
        f"R(W) = {u.regularizer} on the item-position weights W (not the intercepts).",
        "polytope: Birkhoff() (each sample's adversary Q_i is doubly stochastic).",
        f"program: {u.program_kind}. Primal blocks W (d * k^2), b (k^2), predictor (n * k^2), "
        "a, c (n * k each); rows game (n * k^2), predictor rows and columns. Dual blocks Q "
        "(n * k^2), a, c; rows Birkhoff, game, moments.",
    ]


def _explain_graph(pg, k):
    """``explain`` for a graph game over a :class:`~advgame.polytopes.Marginal` polytope."""
    polytope, u = pg.polytope, pg.uncertainty
    if isinstance(pg.loss, str) and k is None:
        structure = losses.recognize(pg.loss_matrix(3).matrix)
        loss = f"'{pg.loss}' (built for the k labels of y), recognised as {structure.kind}"
    else:
        structure = pg.loss_matrix(k).structure
        loss = f"a {pg.loss_matrix(k).shape} matrix, recognised as {structure}"
    node_game = (
        f"the closed form for {structure.kind}"
        if structure.has_closed_form
        else "the node game's vertex table or LP (no closed form)"
    )
    return [
        f"loss: additive over nodes, sum_i w_i L[a_i, y_i] with L {loss}.",
        f"polytope: {polytope!r}: "
        + (
            "the marginal polytope (exact; on a forest the local polytope, otherwise clique "
            "marginals on a junction tree)."
            if polytope.exact
            else "the local polytope, a relaxation on a graph with cycles (the value is an upper "
            "bound)."
        ),
        "fast path: on forests, dual decomposition (Fathony et al. 2018b, Theorem 2): each node's game is "
        f"an ordinary game solved by {node_game}, edge marginals by an optimal-transport LP, "
        "certified by the duality gap; other graphs: the LP over the regions' marginals.",
        "",
        f"uncertainty: {u!r}: the adversary keeps {u.adversary_constraint} on the node and edge "
        f"moments; regulariser R(theta) = {u.regularizer}.",
        f"program: {u.program_kind}. Primal blocks theta, alpha (one per marginal-polytope row), "
        "p (the predictor's node marginals); rows game, predictor simplex. Dual blocks mu (the "
        "region marginals), v; rows marginal polytope, game, moments.",
    ]
