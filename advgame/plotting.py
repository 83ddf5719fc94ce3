r"""Figures of the papers, drawn from the package's own computations (optional: ``matplotlib``).

Install the extra with ``pip install advgame[plot]``.  Every function draws into the ``ax`` it is
given (a new figure and axes otherwise), returns that :class:`matplotlib.axes.Axes` (its figure is
``ax.figure``), never calls ``plt.show()`` and never changes ``rcParams``.

================================  ===================================================================
function                          what it draws (figure of the paper)
================================  ===================================================================
:func:`surrogate_contour`         ``AL(f, y)`` over the potential differences
                                  (Fathony et al. 2018a, Figs 3-4, 7-10)
:func:`polytope_vertices`         the adversary's vertex table ``(q, v)`` in the simplex
                                  (Fathony et al. 2018a, §3)
:func:`projection_plot`           points, their projections onto a polytope (Blondel 2019, Fig. 1)
:func:`soft_permutation`          a soft permutation matrix as an annotated heatmap
                                  (Blondel 2019, Fig. 3)
:func:`acceptance_regions`        prediction sets of a 2-D :class:`GeneralizedPredictionSet`
                                  (Wang and Qiao 2022, Figs 1-2)
:func:`learning_curve`            scores against training size, mean ± sd band
:func:`benchmark_bars`            a metric of ``advgame bench`` / ``advgame reproduce`` records
================================  ===================================================================
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._validation import check_finite
from .exceptions import NotApplicableError, SizeLimitError
from .game import Game

__all__ = [
    "surrogate_grid",
    "surrogate_contour",
    "simplex_coordinates",
    "polytope_vertices",
    "projection_plot",
    "soft_permutation",
    "acceptance_regions",
    "set_categories",
    "learning_curve",
    "benchmark_bars",
]

#: Corners of the probability simplex Δ_3 in the plane: label 0 bottom left, 1 bottom right, 2 top.
SIMPLEX_CORNERS = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, np.sqrt(3.0) / 2.0]])
#: Relative tolerance of the affine-dimension test of a polytope's vertex set.
AFFINE_RTOL = 1e-9
#: Points per axis of the grid projected when a polytope cannot list its vertices.
SAMPLE_GRID = 41
_INSTALL = "pip install advgame[plot]"


def _pyplot():
    """``matplotlib.pyplot``, or an ImportError saying how to install it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            f"advgame.plotting needs matplotlib, an optional extra: {_INSTALL}"
        ) from exc
    return plt


def _axes(ax, projection=None):
    """The given axes, or new ones on a new figure."""
    plt = _pyplot()
    if ax is not None:
        if projection == "3d" and getattr(ax, "name", None) != "3d":
            raise ValueError("3-D points need a 3-D axes: fig.add_subplot(projection='3d').")
        return ax
    fig = plt.figure()
    return fig.add_subplot(projection=projection)


def _game(loss):
    return loss if isinstance(loss, Game) else Game(loss)


def _label_names(game):
    return list(getattr(game.loss, "labels", range(game.n_labels)))


def _need_three(game, what):
    if game.n_labels != 3:
        raise ValueError(f"{what} draws 3-label games (k = 3); this loss has k = {game.n_labels}.")


# ------------------------------------------------------------------------------- surrogate
def surrogate_grid(
    loss: Any, y: int = 0, span: float | None = None, resolution: int = 101
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""The adversarial surrogate ``AL(f, y)`` on a grid of potential differences (k = 3).

    With ``j_1 < j_2`` the two labels other than ``y``, potentials ``f_y = 0``,
    ``f_{j_1} = \psi_1``, ``f_{j_2} = \psi_2`` (``AL`` depends on ``f`` only through ``f - f_y``):

    .. math::  Z[r, c] = \mathrm{AL}(f, y) = \max_{q \in \Delta} \min_{p} p^\top L q + f^\top q - f_y,
               \qquad \psi_1 = \text{grid}[c],\ \psi_2 = \text{grid}[r],

    computed by one batched :meth:`advgame.Game.surrogate` call over all grid points.

    Returns
    -------
    grid : ndarray of shape (resolution,)
        ``linspace(-span, span, resolution)``.
    Z : ndarray of shape (resolution, resolution)
    others : tuple of two ints
        ``(j_1, j_2)``, the labels whose potential differences are the x and y axes.
    """
    game = _game(loss)
    _need_three(game, "surrogate_contour")
    y = int(y)
    if not 0 <= y < 3:
        raise ValueError(f"y must be a label index 0, 1 or 2; got {y}.")
    # AL = 0 needs margins f_y - f_j as large as the losses: show that corner at any scale
    span = max(3.0, 1.25 * float(game.loss.matrix.max())) if span is None else float(span)
    if not np.isfinite(span) or span <= 0:
        raise ValueError(f"span must be a positive finite number; got {span}.")
    resolution = int(resolution)
    if resolution < 2:
        raise ValueError(f"resolution must be at least 2; got {resolution}.")
    others = tuple(j for j in range(3) if j != y)
    grid = np.linspace(-span, span, resolution)
    P1, P2 = np.meshgrid(grid, grid)  # rows follow psi_2, columns psi_1
    F = np.zeros((P1.size, 3))
    F[:, others[0]], F[:, others[1]] = P1.ravel(), P2.ravel()
    Z = game.surrogate(F, np.full(P1.size, y)).reshape(P1.shape)
    return grid, Z, others


def surrogate_contour(
    loss: Any,
    y: int = 0,
    span: float | None = None,
    resolution: int = 101,
    ax: Any = None,
    *,
    levels: int = 15,
    colorbar: bool = True,
) -> Any:
    r"""Filled contours of the adversarial surrogate loss of a 3-label game (Fathony et al. 2018a, Figs 3-4, 7-10).

    .. math::  \mathrm{AL}(f, y) = \max_{q \in \Delta_3} \min_{p \in \Delta_l} p^\top L q +
               f^\top q - f_y

    over the two potential differences ``\psi_j = f_j - f_y`` (``j != y``) on
    ``[-span, span]^2``, as in Fathony et al. (2018a), Figure 4a (zero-one), 7 (ordinal), 8
    (squared) and 10 (abstain; the paper numbers labels from 1, so its ``y = 1`` is ``y=0`` here).
    The values come from :func:`surrogate_grid`, i.e. one batched :meth:`advgame.Game.surrogate`
    call (closed form, vertex table or LP, whichever the game's ``fast_path`` is).  Thin black lines
    are the contour levels; the lowest outlines the region where ``AL = 0`` (the flat corner).

    Parameters
    ----------
    loss : LossMatrix, array-like (l, 3), Entropy or Game
        Anything :class:`advgame.Game` accepts, with three labels.
    y : int
        The true label's index.
    span, resolution : float or None, int
        The grid ``linspace(-span, span, resolution)`` on both axes; ``span=None`` is
        ``max(3, 1.25 max L)``, wide enough to show the flat corner ``AL = 0`` (margins
        ``f_y - f_j`` as large as the losses) for a matrix of any scale.
    ax : matplotlib Axes, optional
    levels : int or array-like
        Passed to ``contourf``.
    colorbar : bool
        Add a colour bar labelled ``AL``.

    Returns
    -------
    ax : matplotlib.axes.Axes
        Its ``collections`` hold the filled ``ContourSet`` and the contour lines.
    """
    game = _game(loss)
    grid, Z, (j1, j2) = surrogate_grid(game, y, span, resolution)
    ax = _axes(ax)
    names = _label_names(game)
    filled = ax.contourf(grid, grid, Z, levels=levels, cmap="viridis")
    ax.contour(filled, colors="k", linewidths=0.4, alpha=0.5)
    if colorbar:
        ax.figure.colorbar(filled, ax=ax, label=r"$\mathrm{AL}(f, y)$")
    yname = names[int(y)]
    ax.set_xlabel(rf"$\psi_{{{names[j1]}}} = f_{{{names[j1]}}} - f_{{{yname}}}$")
    ax.set_ylabel(rf"$\psi_{{{names[j2]}}} = f_{{{names[j2]}}} - f_{{{yname}}}$")
    kind = getattr(game.structure, "kind", None) or getattr(game.loss, "kind", "")
    ax.set_title(f"adversarial surrogate ({kind}), true label y = {yname}")
    ax.set_aspect("equal")
    return ax


# ------------------------------------------------------------------------- vertex table
def simplex_coordinates(Q: ArrayLike) -> np.ndarray:
    """Barycentric plane coordinates of rows of ``Q`` (distributions over 3 labels): ``Q @ C``
    with ``C`` = :data:`SIMPLEX_CORNERS`."""
    Q = np.asarray(Q, dtype=float)
    if Q.ndim != 2 or Q.shape[1] != 3:
        raise ValueError(f"Q must have shape (n, 3); got {Q.shape}.")
    return Q @ SIMPLEX_CORNERS


def _fraction(x):
    f = Fraction(float(x)).limit_denominator(24)
    return str(f) if abs(float(f) - x) <= 1e-9 * max(1.0, abs(x)) else f"{x:.3g}"


def polytope_vertices(
    loss: Any, ax: Any = None, *, resolution: int = 60, colorbar: bool = True
) -> Any:
    r"""The adversary's vertex table of a 3-label game, drawn in the probability simplex.

    The game's LP (Fathony et al. 2018a, Eq. 4) is ``max_{(q, v) in C} v + f^T q`` over
    ``C = {(q, v): L q >= v 1, q in Δ_3}``, the hypograph of the Bayes risk
    ``H_L(q) = min_a (L q)_a``.  Its extreme points :meth:`advgame.Game.extreme_points` (the set
    ``D`` of the proofs of Fathony et al. (2018a): 7 for zero-one, 6 for ordinal, Theorems 5-7, 12;
    the table that ``method='vertices'`` multiplies by) are drawn at ``q`` in barycentric
    coordinates (:func:`simplex_coordinates`), each annotated with ``v = H_L(q)`` (as a fraction
    when rational), over filled contours of ``H_L`` (from :meth:`advgame.Game.entropy`), whose
    breakpoints they are.

    Parameters
    ----------
    loss : LossMatrix, array-like (l, 3) or Game
        A loss matrix with three labels (raises ``ValueError`` otherwise).
    ax : matplotlib Axes, optional
    resolution : int
        Subdivisions per simplex edge of the ``H_L`` background.
    colorbar : bool
        Add a colour bar labelled ``H_L(q)``.

    Returns
    -------
    ax : matplotlib.axes.Axes
        ``ax.collections`` holds the ``H_L`` background and the vertex scatter (its offsets are
        the vertices' plane coordinates; label ``'vertices'``).
    """
    game = _game(loss)
    _need_three(game, "polytope_vertices")
    Q, v = game.extreme_points()
    ax = _axes(ax)
    n = int(resolution)
    if n < 2:
        raise ValueError(f"resolution must be at least 2; got {n}.")
    i, j = np.meshgrid(np.arange(n + 1), np.arange(n + 1))
    keep = i + j <= n
    B = np.column_stack([n - i[keep] - j[keep], i[keep], j[keep]]) / n
    xy = simplex_coordinates(B)
    shade = ax.tricontourf(xy[:, 0], xy[:, 1], game.entropy(B), levels=12, cmap="Greens")
    if colorbar:
        ax.figure.colorbar(shade, ax=ax, label=r"Bayes risk $H_L(q) = \min_a (Lq)_a$")
    corners = np.vstack([SIMPLEX_CORNERS, SIMPLEX_CORNERS[:1]])
    ax.plot(corners[:, 0], corners[:, 1], color="k", linewidth=1.0)
    names = _label_names(game)
    for (cx, cy), name, (dx, dy, ha) in zip(
        SIMPLEX_CORNERS,
        names,
        ((-0.03, -0.06, "right"), (0.03, -0.06, "left"), (-0.03, 0.02, "right")),
    ):
        ax.text(cx + dx, cy + dy, f"$q = e_{{{name}}}$", ha=ha, fontsize=10)
    P = simplex_coordinates(Q)
    ax.scatter(P[:, 0], P[:, 1], s=40, color="tab:red", edgecolor="k", zorder=3, label="vertices")
    for (px, py), value in zip(P, v):
        ax.annotate(
            f"v={_fraction(value)}",
            (px, py),
            xytext=(6, -3),
            textcoords="offset points",
            fontsize=8,
            zorder=4,
        )
    kind = getattr(game.structure, "kind", "")
    ax.set_title(f"{kind} game: {len(v)} extreme points (q, v)")
    ax.set_aspect("equal")
    pad = 0.025 * max(len(str(name)) for name in names)  # room for long label names
    ax.set_xlim(-0.1 - pad, 1.1 + pad)
    ax.set_ylim(-0.12, 0.97)
    ax.set_axis_off()
    return ax


# ---------------------------------------------------------------------------- projections
def _affine_basis(V):
    """Centre and orthonormal basis (rows) of the affine hull of the rows of ``V``."""
    centre = V.mean(axis=0)
    _, s, Vt = np.linalg.svd(V - centre, full_matrices=False)
    rank = int(np.sum(s > AFFINE_RTOL * max(1.0, s.max(initial=0.0))))
    return centre, Vt[:rank]


def _hull_edges(V):
    """Edges (pairs of points) of the convex hull of ``V`` (d = 2 or 3 points of any affine
    dimension), and the facets (as polygons) when the hull is a 2-D polygon or a 3-D body."""
    from scipy.spatial import ConvexHull

    centre, basis = _affine_basis(V)
    r = basis.shape[0]
    if r == 0:
        return [], []
    if r == 1:
        t = (V - centre) @ basis[0]
        return [(V[np.argmin(t)], V[np.argmax(t)])], []
    if r == 2:  # a polygon, possibly lying in a plane of R^3
        hull = ConvexHull((V - centre) @ basis.T)
        ring = V[hull.vertices]
        edges = [(ring[a], ring[(a + 1) % len(ring)]) for a in range(len(ring))]
        return edges, [ring]
    hull = ConvexHull(V)
    edges = []
    for a, (simplex, nbrs) in enumerate(zip(hull.simplices, hull.neighbors)):
        for b in nbrs:  # keep the edges between facets of different planes
            if b > a and not np.allclose(hull.equations[a], hull.equations[b], atol=1e-9):
                shared = sorted(set(simplex) & set(hull.simplices[b]))
                edges.append((V[shared[0]], V[shared[1]]))
    return edges, [V[s] for s in hull.simplices]


def projection_plot(
    polytope: Any, points: ArrayLike, geometry: str = "euclidean", ax: Any = None
) -> Any:
    r"""Points, their projections onto a polytope and the polytope, in 2-D or 3-D (Blondel 2019, Fig. 1).

    Each point ``theta`` is joined by a segment to its regularised prediction

    .. math::  P^\Psi_{\mathcal C}(\theta) = \operatorname{argmax}_{\mu \in \mathcal C}
               \langle\theta, \mu\rangle - \Psi(\mu)

    (:meth:`advgame.polytopes.Polytope.project`; ``geometry='euclidean'`` is the nearest point,
    ``'kl'`` the KL projection of ``exp(theta - 1)``).  The polytope is drawn as the convex hull
    of :meth:`~advgame.polytopes.Polytope.vertices` (its edges, and its faces shaded); when it
    cannot list them (unbounded, too many) the hull of the projections of a grid of points
    around the data is drawn instead, dashed.  With 3 coordinates the axes are 3-D.

    Parameters
    ----------
    polytope : advgame.polytopes.Polytope
        One whose points are vectors (not Birkhoff / RowStochastic matrices).
    points : array-like of shape (n, 2) or (n, 3)
    geometry : {'euclidean', 'kl'}
    ax : matplotlib Axes, optional
        A 3-D axes (``projection='3d'``) for 3 coordinates.

    Returns
    -------
    ax : matplotlib.axes.Axes (or ``Axes3D``)
        The points are the scatter labelled ``'points'``, the projections the one labelled
        ``'projections'``, the joining segments the collection labelled ``'segments'``.
    """
    if getattr(polytope, "point_ndim", 1) != 1:
        raise ValueError(
            f"projection_plot draws polytopes of vectors; {polytope!r} has matrix points "
            "(use soft_permutation for Birkhoff projections)."
        )
    T = np.asarray(points, dtype=float)
    if T.ndim == 1:
        T = T[None, :]
    if T.ndim != 2 or T.shape[1] not in (2, 3) or T.shape[0] == 0:
        raise ValueError(f"points must have shape (n, 2) or (n, 3); got {np.shape(points)}.")
    check_finite("points", T)
    d = T.shape[1]
    M = np.asarray(polytope.project(T, geometry=geometry), dtype=float)
    try:
        V, sampled = np.asarray(polytope.vertices(d), dtype=float), False
    except (NotApplicableError, SizeLimitError):
        low, high = np.minimum(T.min(0), M.min(0)), np.maximum(T.max(0), M.max(0))
        pad = 0.5 * (high - low) + 1.0
        axes = [np.linspace(a - p, b + p, SAMPLE_GRID) for a, b, p in zip(low, high, pad)]
        grid = np.stack(np.meshgrid(*axes), -1).reshape(-1, d)
        V, sampled = np.asarray(polytope.project(grid, geometry=geometry), dtype=float), True
    edges, faces = _hull_edges(V)
    created = ax is None
    ax = _axes(ax, "3d" if d == 3 else None)
    if d == 3 and created:
        ax.view_init(elev=30, azim=30)  # roughly along (1, 1, 1): simplex faces show face-on
    style = {"color": "0.3", "linestyle": "--" if sampled else "-", "linewidth": 1.2}
    what = "polytope (sampled)" if sampled else "polytope"
    if d == 2:
        from matplotlib.collections import LineCollection
        from matplotlib.patches import Polygon

        for face in faces:
            ax.add_patch(Polygon(face, closed=True, facecolor="tab:blue", alpha=0.15))
        ax.add_collection(LineCollection([np.array(e) for e in edges], label=what, **style))
        segments = LineCollection(
            np.stack([T, M], 1), colors="tab:gray", linewidths=0.8, label="segments"
        )
    else:
        from mpl_toolkits.mplot3d.art3d import Line3DCollection, Poly3DCollection

        if faces:
            ax.add_collection3d(Poly3DCollection(faces, facecolor="tab:blue", alpha=0.12))
        ax.add_collection3d(Line3DCollection([np.array(e) for e in edges], label=what, **style))
        segments = Line3DCollection(
            np.stack([T, M], 1), colors="tab:gray", linewidths=0.8, label="segments"
        )
    if not sampled:
        ax.scatter(*V.T, s=12, color="0.3")
    if d == 2:
        ax.add_collection(segments)
    else:
        ax.add_collection3d(segments)
    ax.scatter(*T.T, marker="x", color="tab:red", label="points")
    ax.scatter(*M.T, marker="o", s=25, color="tab:blue", edgecolor="k", label="projections")
    everything = np.vstack([T, M] + ([V] if not sampled else []))
    low, high = everything.min(0), everything.max(0)
    pad = 0.08 * np.maximum(high - low, 1e-3)
    ax.set_xlim(low[0] - pad[0], high[0] + pad[0])
    ax.set_ylim(low[1] - pad[1], high[1] + pad[1])
    ax.set_xlabel(r"$\mu_1$")
    ax.set_ylabel(r"$\mu_2$")
    if d == 3:
        ax.set_zlim(low[2] - pad[2], high[2] + pad[2])
        ax.zaxis.set_rotate_label(False)
        ax.set_zlabel(r"$\mu_3$")
        ax.set_box_aspect((high - low + 2 * pad).tolist())
    else:
        ax.set_aspect("equal")
    name = type(polytope).__name__
    ax.set_title(f"{geometry.capitalize()} projections onto the {name} polytope")
    ax.legend(fontsize=8)
    return ax


# ------------------------------------------------------------------------ soft permutation
def soft_permutation(
    P: ArrayLike,
    labels: list | None = None,
    ax: Any = None,
    *,
    fmt: str = "{:.2f}",
    colorbar: bool = True,
) -> Any:
    r"""A soft permutation matrix as a heatmap with its values in the cells (Blondel 2019, Fig. 3).

    ``P[i, j]`` is the weight of item (label) ``i`` at rank ``j + 1``; for a doubly stochastic
    ``P`` (a point of the Birkhoff polytope, e.g. ``Birkhoff().project(theta)`` or
    :class:`advgame.LabelRanker`'s projected scores) every row and column sums to one, and a
    permutation matrix is a vertex.  Only the shape and finiteness are checked, so row-stochastic
    or unnormalised scores can be drawn too (the colour scale then covers their range).

    Parameters
    ----------
    P : array-like of shape (k, k)
    labels : sequence of k str, optional
        Row (item) names; default ``label 1 .. label k``.  Columns are ``rank 1 .. rank k``.
    ax : matplotlib Axes, optional
    fmt : str
        Format of the cell texts.
    colorbar : bool

    Returns
    -------
    ax : matplotlib.axes.Axes
        ``ax.images[0]`` is the heatmap; ``ax.texts`` the ``k^2`` cell texts, row by row.
    """
    P = np.asarray(P, dtype=float)
    if P.ndim != 2 or P.shape[0] != P.shape[1] or P.shape[0] == 0:
        raise ValueError(f"P must be a non-empty square (k, k) matrix; got shape {P.shape}.")
    check_finite("P", P)
    k = P.shape[0]
    if labels is None:
        labels = [f"label {i + 1}" for i in range(k)]
    labels = [str(s) for s in labels]
    if len(labels) != k:
        raise ValueError(f"labels must have k = {k} names; got {len(labels)}.")
    ax = _axes(ax)
    low, high = min(0.0, float(P.min())), max(1.0, float(P.max()))
    image = ax.imshow(P, cmap="Blues", vmin=low, vmax=high)
    middle = 0.5 * (low + high)
    for i in range(k):
        for j in range(k):
            colour = "white" if P[i, j] > middle else "black"
            ax.text(j, i, fmt.format(P[i, j]), ha="center", va="center", color=colour, fontsize=9)
    ax.set_xticks(range(k), [f"rank {j + 1}" for j in range(k)])
    ax.set_yticks(range(k), labels)
    ax.set_xlabel("rank")
    ax.set_ylabel("item")
    ax.set_title("soft permutation matrix")
    if colorbar:
        ax.figure.colorbar(image, ax=ax)
    return ax


# ------------------------------------------------------------------------ prediction sets
def set_categories(sets: Any) -> np.ndarray:
    """Category of each prediction set: ``0`` empty (outlier), ``1 + k`` the singleton ``{k}``,
    ``K + 1`` two or more classes (ambiguous); ``sets`` is boolean ``(n, K)``."""
    sets = np.asarray(sets, dtype=bool)
    size = sets.sum(axis=1)
    K = sets.shape[1]
    return np.where(size == 0, 0, np.where(size == 1, 1 + np.argmax(sets, axis=1), K + 1))


def acceptance_regions(
    estimator: Any,
    X: ArrayLike | None = None,
    y: ArrayLike | None = None,
    resolution: int = 200,
    ax: Any = None,
) -> Any:
    r"""Acceptance regions of a fitted :class:`advgame.GeneralizedPredictionSet` on 2-D inputs
    (Wang and Qiao 2022, Figures 1-2, left panels).

    The plane is coloured by the prediction set ``{k : f_k(x) - tau_k >= 0}``
    (:meth:`~advgame.GeneralizedPredictionSet.predict_set`) at a ``resolution x resolution`` grid
    (:func:`set_categories`): light grey for the empty set (outlier), a pale class colour for a
    single class, dark grey for two or more classes (ambiguous).  Each class's acceptance
    boundary ``f_k(x) = tau_k`` (:meth:`~advgame.GeneralizedPredictionSet.decision_function`
    ``= 0``) is a contour line in its colour, and ``(X, y)`` is scattered on top when given.
    With an RBF kernel ``f_k(x) -> -rho_k`` far from the data, so a class whose
    ``-rho_k >= tau_k`` accepts the whole far field: the picture then shows that class's colour
    at the edges of the window.

    Parameters
    ----------
    estimator : GeneralizedPredictionSet
        Fitted on two features.
    X : array-like of shape (n, 2), optional
        Points to scatter; they also set the plotted window (else the estimator's unlabelled
        sample does).
    y : array-like of shape (n,), optional
        Their labels (colours by ``classes_``; other labels are drawn as black crosses).
    resolution : int
    ax : matplotlib Axes, optional

    Returns
    -------
    ax : matplotlib.axes.Axes
        ``ax.collections[0]`` is the ``QuadMesh`` of categories (its array, ``resolution x
        resolution``, holds :func:`set_categories` of the grid cells).
    """
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator)
    K = len(estimator.classes_)
    if getattr(estimator, "n_features_in_", None) != 2:
        raise ValueError(
            "acceptance_regions draws estimators fitted on 2 features; this one has "
            f"{getattr(estimator, 'n_features_in_', '?')}."
        )
    resolution = int(resolution)
    if resolution < 2:
        raise ValueError(f"resolution must be at least 2; got {resolution}.")
    if X is None and y is not None:
        raise ValueError("y was given without X: pass the points X to scatter with their labels.")
    if X is not None:
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != 2:
            raise ValueError(f"X must have shape (n, 2); got {X.shape}.")
        check_finite("X", X)
        window = X
    else:
        window = estimator.X_unlabeled_
        if estimator.scaler_ is not None:
            window = estimator.scaler_.inverse_transform(window)
    low, high = window.min(0), window.max(0)
    pad = 0.1 * np.maximum(high - low, 1e-6)
    gx = np.linspace(low[0] - pad[0], high[0] + pad[0], resolution)
    gy = np.linspace(low[1] - pad[1], high[1] + pad[1], resolution)
    XX, YY = np.meshgrid(gx, gy)
    grid = np.column_stack([XX.ravel(), YY.ravel()])
    scores = estimator.decision_function(grid)
    category = set_categories(scores >= 0).reshape(XX.shape)

    from matplotlib.colors import ListedColormap, to_rgba
    from matplotlib.patches import Patch

    ax = _axes(ax)
    colours = [f"C{k % 10}" for k in range(K)]
    pale = [tuple(0.35 * np.array(to_rgba(c)[:3]) + 0.65) + (1.0,) for c in colours]
    cmap = ListedColormap([(0.93, 0.93, 0.93, 1.0)] + pale + [(0.45, 0.45, 0.45, 1.0)])
    ax.pcolormesh(gx, gy, category, cmap=cmap, vmin=-0.5, vmax=K + 1.5, shading="nearest")
    for k in range(K):
        column = scores[:, k].reshape(XX.shape)
        if column.min() < 0 < column.max():
            ax.contour(gx, gy, column, levels=[0.0], colors=[colours[k]], linewidths=1.8)
    names = [str(c) for c in estimator.classes_]
    handles = [Patch(color=cmap(0), label="outlier (empty set)")]
    handles += [Patch(color=pale[k], label=f"{{{names[k]}}}") for k in range(K)]
    handles += [Patch(color=cmap(K + 1), label="ambiguous (2+ classes)")]
    if X is not None:
        if y is None:
            ax.scatter(X[:, 0], X[:, 1], s=10, color="k", alpha=0.6)
        else:
            y = np.asarray(y)
            if y.shape != (X.shape[0],):
                raise ValueError(f"y must have shape ({X.shape[0]},); got {y.shape}.")
            known = np.isin(y, estimator.classes_)
            for k, c in enumerate(estimator.classes_):
                rows = y == c
                ax.scatter(*X[rows].T, s=12, color=colours[k], edgecolor="k", linewidths=0.3)
            if np.any(~known):
                ax.scatter(*X[~known].T, s=14, marker="x", color="k", label="unknown class")
                handles.append(ax.collections[-1])
    ax.legend(
        handles=handles,
        fontsize=8,
        title="prediction set",
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
    )
    ax.set_xlabel(r"$x_1$")
    ax.set_ylabel(r"$x_2$")
    ax.set_title(f"acceptance regions, error rate {estimator.error_rate:g} (lines: f_k(x) = tau_k)")
    return ax


# ------------------------------------------------------------------------ learning curves
def learning_curve(
    sizes: ArrayLike,
    scores: ArrayLike,
    labels: list | None = None,
    ax: Any = None,
    *,
    xlabel: str = "training size",
    ylabel: str = "score",
) -> Any:
    r"""Scores against training size, one line per model.

    ``scores`` is ``(n_models, n_sizes)`` (one value per size) or ``(n_models, n_sizes,
    n_repeats)``: then the line is the mean over repeats and the band ``mean ± sd`` (sample sd,
    ``ddof=1``, when there are two or more repeats).

    Returns
    -------
    ax : matplotlib.axes.Axes
        ``ax.lines`` hold the mean curves (one per model, in order), ``ax.collections`` the bands.
    """
    sizes = np.asarray(sizes, dtype=float)
    S = np.asarray(scores, dtype=float)
    if sizes.ndim != 1 or sizes.size == 0:
        raise ValueError(f"sizes must be a non-empty 1-D array; got shape {sizes.shape}.")
    if S.ndim == 1:
        S = S[None, :]
    if S.ndim not in (2, 3) or S.shape[1] != sizes.size:
        raise ValueError(
            "scores must have shape (n_models, n_sizes) or (n_models, n_sizes, n_repeats) with "
            f"n_sizes = {sizes.size}; got {S.shape}."
        )
    check_finite("sizes", sizes)
    check_finite("scores", S)
    if labels is None:
        labels = [f"model {m + 1}" for m in range(S.shape[0])]
    if len(labels) != S.shape[0]:
        raise ValueError(f"labels must have {S.shape[0]} names (one per model); got {len(labels)}.")
    ax = _axes(ax)
    for m, name in enumerate(labels):
        if S.ndim == 3:
            mean = S[m].mean(axis=1)
            sd = S[m].std(axis=1, ddof=1) if S.shape[2] > 1 else np.zeros_like(mean)
        else:
            mean, sd = S[m], None
        (line,) = ax.plot(sizes, mean, marker="o", label=str(name))
        if sd is not None:
            ax.fill_between(sizes, mean - sd, mean + sd, color=line.get_color(), alpha=0.2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    title = "learning curve" + (f" (mean ± sd over {S.shape[2]} repeats)" if S.ndim == 3 else "")
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return ax


# ---------------------------------------------------------------------------- benchmarks
def _records(records):
    if isinstance(records, (str, Path)):
        records = json.loads(Path(records).read_text())
    if isinstance(records, dict):
        records = records.get("records", [records])
    return list(records)


def benchmark_bars(records: Any, metric: str, ax: Any = None, *, ylabel: str | None = None) -> Any:
    r"""Bars of one metric of ``advgame bench`` / ``advgame reproduce`` records, with sd error bars.

    The records are those written to ``--out FILE.json`` (the file's ``"records"`` list, the
    loaded JSON dict, or its path): each has a ``"table"`` (the metric, e.g. ``'zero-one'``
    accuracy %, ``'ordinal'`` MAE, ``'Euclidean'`` Hamming loss), a ``"dataset"`` (and a
    ``"kernel"`` for the tables of Fathony et al. 2018a) and ``"columns"`` mapping a model to
    ``(mean, sd, mark)``.  The records whose ``table`` equals ``metric`` give one group of bars per
    data set, one bar per model (height = mean, error bar = sd across splits); ``ylabel`` defaults
    to ``metric``.  Marked bars (``mark == '*'``: the best and those not significantly worse, paired
    Wilcoxon test) are hatched and starred.

    Returns
    -------
    ax : matplotlib.axes.Axes
        ``ax.containers`` holds one ``BarContainer`` per model, in the records' column order.
    """
    chosen = [r for r in _records(records) if isinstance(r, dict) and r.get("table") == metric]
    if not chosen:
        tables = sorted({str(r.get("table")) for r in _records(records) if isinstance(r, dict)})
        raise ValueError(f"no record has table == {metric!r}; the tables are {tables}.")
    models = []
    for r in chosen:
        models += [m for m in r["columns"] if m not in models]
    groups = [
        r["dataset"] + (f" ({r['kernel']})" if r.get("kernel") not in (None, "") else "")
        for r in chosen
    ]
    from matplotlib.patches import Patch

    ax = _axes(ax)
    handles = []
    width = 0.8 / len(models)
    x = np.arange(len(chosen))
    for m, model in enumerate(models):
        cells = [r["columns"].get(model, (np.nan, np.nan, "")) for r in chosen]
        mean = np.array([float(c[0]) for c in cells])
        sd = np.array([float(c[1]) for c in cells])
        marked = [c[2] == "*" for c in cells]
        offset = (m - (len(models) - 1) / 2) * width
        bars = ax.bar(
            x + offset, mean, width, yerr=sd, capsize=2, label=model, edgecolor="k", linewidth=0.5
        )
        handles.append(Patch(facecolor=bars.patches[0].get_facecolor(), edgecolor="k", label=model))
        for bar, star, top in zip(bars, marked, mean + np.nan_to_num(sd)):
            if star:
                bar.set_hatch("//")
                centre = bar.get_x() + bar.get_width() / 2
                ax.annotate(
                    "*",
                    (centre, top),
                    xytext=(0, 1),
                    textcoords="offset points",
                    ha="center",
                    va="bottom",
                    fontsize=11,
                )
    tilt = len(groups) > 4
    ax.set_xticks(x, groups, rotation=30 if tilt else 0, ha="right" if tilt else "center")
    ax.set_ylabel(str(metric) if ylabel is None else ylabel)
    ax.set_title(f"{metric}: mean ± sd over splits")
    ax.margins(y=0.08)  # room for the stars above the error bars
    if any(c[2] == "*" for r in chosen for c in r["columns"].values()):
        handles.append(
            Patch(
                facecolor="white",
                edgecolor="k",
                hatch="//",
                label="* best or not\nsignificantly worse",
            )
        )
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return ax
