"""advgame.plotting: every figure is checked against an independent computation of what it shows."""

import itertools
import json
import sys
from fractions import Fraction

import numpy as np
import pytest
from scipy.optimize import linprog

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from matplotlib.container import BarContainer  # noqa: E402

import advgame as ag  # noqa: E402
from advgame import plotting  # noqa: E402
from advgame.polytopes import Birkhoff, Simplex, Unconstrained, UnitCube  # noqa: E402

CUSTOM = np.array([[0.0, 1.0, 3.0], [2.0, 0.0, 1.0], [1.0, 2.0, 0.0]])


@pytest.fixture(autouse=True)
def _no_show_and_close(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("plotting must never call plt.show()")

    monkeypatch.setattr(plt, "show", refuse)
    rc = dict(matplotlib.rcParams)
    yield
    changed = {k for k, v in rc.items() if matplotlib.rcParams[k] is not v and k != "backend"}
    plt.close("all")
    assert not changed, f"rcParams changed: {sorted(changed)}"


def lp_value(L, f):
    """max_{q, v} v + f.q  s.t.  L q >= v 1, sum q = 1, q >= 0, by scipy's linprog."""
    L = np.asarray(L, dtype=float)
    l, k = L.shape
    c = -np.append(f, 1.0)
    A_ub = np.hstack([-L, np.ones((l, 1))])
    A_eq = np.append(np.ones(k), 0.0)[None, :]
    bounds = [(0, None)] * k + [(None, None)]
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(l), A_eq=A_eq, b_eq=[1.0], bounds=bounds)
    assert res.status == 0
    return -res.fun


def brute_force_vertices(L):
    """Vertices of {(q, v): L q >= v 1, q >= 0, sum q = 1} by trying every set of 3 active
    inequalities (4 unknowns, with the equality)."""
    L = np.asarray(L, dtype=float)
    l, k = L.shape
    rows = [np.append(-L[a], 1.0) for a in range(l)] + [
        np.append(-np.eye(k)[i], 0.0) for i in range(k)
    ]
    eq = np.append(np.ones(k), 0.0)
    found = []
    for active in itertools.combinations(range(len(rows)), k):
        A = np.vstack([rows[i] for i in active] + [eq])
        if abs(np.linalg.det(A)) < 1e-12:
            continue
        x = np.linalg.solve(A, np.append(np.zeros(k), 1.0))
        q, v = x[:k], x[k]
        if q.min() >= -1e-12 and (L @ q - v).min() >= -1e-12:
            if not any(np.allclose(x, y, atol=1e-9) for y in found):
                found.append(x)
    return np.array(found)


def sorted_rows(A):
    A = np.round(np.asarray(A, dtype=float), 9)
    return A[np.lexsort(A.T[::-1])]


# --------------------------------------------------------------------------------- surrogate
@pytest.mark.parametrize(
    "loss, y",
    [
        (ag.losses.zero_one(3), 0),
        (ag.losses.ordinal(3), 1),
        (ag.losses.abstain(3, 0.7), 0),
        (CUSTOM, 2),
    ],
)
def test_surrogate_grid_matches_lp_point_by_point(loss, y):
    grid, Z, others = plotting.surrogate_grid(loss, y=y, span=2.0, resolution=21)
    assert Z.shape == (21, 21) and others == tuple(j for j in range(3) if j != y)
    rng = np.random.default_rng(y)
    for r, c in rng.integers(0, 21, size=(6, 2)):
        f = np.zeros(3)
        f[others[0]], f[others[1]] = grid[c], grid[r]
        assert Z[r, c] == pytest.approx(lp_value(np.asarray(loss), f) - f[y], abs=1e-7)


def test_surrogate_contour_draws_the_grid_into_the_given_axes():
    fig, ax = plt.subplots()
    out = plotting.surrogate_contour(ag.losses.squared(3), y=1, span=2.0, resolution=31, ax=ax)
    assert out is ax
    _, Z, _ = plotting.surrogate_grid(ag.losses.squared(3), y=1, span=2.0, resolution=31)
    filled = [c for c in ax.collections if getattr(c, "filled", False)]
    assert len(filled) == 1
    assert filled[0].zmin == pytest.approx(Z.min()) and filled[0].zmax == pytest.approx(Z.max())
    assert "f_{0} - f_{1}" in ax.get_xlabel() and "f_{2} - f_{1}" in ax.get_ylabel()
    assert len(fig.axes) == 2  # the axes and its colour bar


def test_surrogate_zero_one_known_values():
    # AL^{0-1}(f, y) = max_S (sum_S f + |S| - 1)/|S| - f_y  (Fathony et al. 2018a Thm 5); at psi = (0, 0): 2/3
    grid, Z, _ = plotting.surrogate_grid(ag.losses.zero_one(3), y=0, span=1.0, resolution=3)
    assert Z[1, 1] == pytest.approx(2 / 3)
    assert Z[0, 0] == pytest.approx(0.0)  # psi = (-1, -1): S = {y} or {y, j} tie at 0


@pytest.mark.parametrize("loss", [ag.losses.zero_one(4), ag.losses.zero_one(2)])
def test_simplex_plots_refuse_k_other_than_3(loss):
    with pytest.raises(ValueError, match="k = 3"):
        plotting.surrogate_contour(loss)
    with pytest.raises(ValueError, match="k = 3"):
        plotting.polytope_vertices(loss)


def test_surrogate_bad_arguments():
    with pytest.raises(ValueError, match="y must be"):
        plotting.surrogate_grid(ag.losses.zero_one(3), y=3)
    with pytest.raises(ValueError, match="span"):
        plotting.surrogate_grid(ag.losses.zero_one(3), span=np.nan)


# ----------------------------------------------------------------------------- vertex table
@pytest.mark.parametrize(
    "loss",
    [
        ag.losses.zero_one(3),
        ag.losses.ordinal(3),
        ag.losses.squared(3),
        ag.losses.abstain(3, 0.4),
        CUSTOM,
    ],
)
def test_polytope_vertices_are_the_brute_force_vertices(loss):
    ax = plotting.polytope_vertices(loss, resolution=10)
    (scatter,) = [c for c in ax.collections if c.get_label() == "vertices"]
    expected = brute_force_vertices(np.asarray(loss))
    points = scatter.get_offsets()
    assert sorted_rows(points).shape == (len(expected), 2)
    np.testing.assert_allclose(
        sorted_rows(points), sorted_rows(expected[:, :3] @ plotting.SIMPLEX_CORNERS), atol=1e-8
    )
    texts = {t.get_text() for t in ax.texts if t.get_text().startswith("v=")}
    values = [float(Fraction(t[2:])) for t in texts]  # "v=1/2" etc.
    np.testing.assert_allclose(
        sorted(set(np.round(values, 9))), sorted(set(np.round(expected[:, 3], 9))), atol=1e-3
    )


def test_polytope_vertices_zero_one_annotations_are_fractions():
    ax = plotting.polytope_vertices(ag.losses.zero_one(3), resolution=5)
    texts = sorted(t.get_text() for t in ax.texts if t.get_text().startswith("v="))
    assert texts == ["v=0"] * 3 + ["v=1/2"] * 3 + ["v=2/3"]


# ------------------------------------------------------------------------------ projections
def test_projection_plot_2d_simplex_segments_are_the_nearest_points():
    rng = np.random.default_rng(0)
    T = rng.normal(0.5, 1.0, size=(7, 2))
    fig, ax = plt.subplots()
    assert plotting.projection_plot(Simplex(), T, ax=ax) is ax
    t = np.clip((T[:, 0] - T[:, 1] + 1) / 2, 0, 1)  # nearest point (t, 1 - t) of the segment
    nearest = np.column_stack([t, 1 - t])
    (segments,) = [c for c in ax.collections if c.get_label() == "segments"]
    S = np.array(segments.get_segments())
    np.testing.assert_allclose(S[:, 0], T)
    np.testing.assert_allclose(S[:, 1], nearest, atol=1e-12)
    (proj,) = [c for c in ax.collections if c.get_label() == "projections"]
    np.testing.assert_allclose(proj.get_offsets(), nearest, atol=1e-12)
    (edges,) = [c for c in ax.collections if c.get_label() == "polytope"]
    np.testing.assert_allclose(sorted_rows(np.array(edges.get_segments())[0]), [[0, 1], [1, 0]])


def test_projection_plot_3d_cube_uses_3d_axes_and_draws_the_12_edges():
    rng = np.random.default_rng(1)
    T = rng.normal(0.5, 1.0, size=(5, 3))
    ax = plotting.projection_plot(UnitCube(), T)
    assert ax.name == "3d"
    (edges,) = [c for c in ax.collections if c.get_label() == "polytope"]
    E = np.asarray(edges._segments3d)  # the 3-D segments (get_segments is the 2-D projection)
    assert E.shape == (12, 2, 3)
    assert np.allclose(np.abs(E[:, 0] - E[:, 1]).sum(axis=1), 1.0)  # unit edges of the cube
    (proj,) = [c for c in ax.collections if c.get_label() == "projections"]
    xyz = np.column_stack(proj._offsets3d)
    np.testing.assert_allclose(xyz, np.clip(T, 0, 1))


def test_projection_plot_sampled_boundary_and_bad_inputs():
    ax = plotting.projection_plot(Unconstrained(), [[0.0, 1.0], [2.0, -1.0]], geometry="kl")
    assert any(c.get_label() == "polytope (sampled)" for c in ax.collections)
    with pytest.raises(ValueError, match="matrix points"):
        plotting.projection_plot(Birkhoff(), np.eye(3)[None])
    with pytest.raises(ValueError, match=r"\(n, 2\) or \(n, 3\)"):
        plotting.projection_plot(Simplex(), np.ones((2, 4)))
    with pytest.raises(ValueError):
        plotting.projection_plot(Simplex(), [[np.nan, 1.0]])
    fig, ax2 = plt.subplots()
    with pytest.raises(ValueError, match="3-D axes"):
        plotting.projection_plot(Simplex(), np.ones((2, 3)), ax=ax2)


# ------------------------------------------------------------------------ soft permutation
def test_soft_permutation_cells_are_the_matrix_entries():
    rng = np.random.default_rng(2)
    P = Birkhoff().project(rng.normal(size=(4, 4)))
    fig, ax = plt.subplots()
    assert plotting.soft_permutation(P, labels=list("abcd"), ax=ax) is ax
    np.testing.assert_allclose(ax.images[0].get_array(), P)
    cells = {
        (round(t.get_position()[1]), round(t.get_position()[0])): t.get_text() for t in ax.texts
    }
    assert len(cells) == 16
    for (i, j), text in cells.items():
        assert text == f"{P[i, j]:.2f}"
    assert [t.get_text() for t in ax.get_yticklabels()] == list("abcd")


@pytest.mark.parametrize(
    "P, match",
    [
        (np.ones((2, 3)) / 3, "square"),
        (np.ones(3), "square"),
        ([[np.nan, 1.0], [1.0, 0.0]], "finite"),
    ],
)
def test_soft_permutation_bad_inputs(P, match):
    with pytest.raises(ValueError, match=match):
        plotting.soft_permutation(P)


def test_soft_permutation_labels_length():
    with pytest.raises(ValueError, match="labels"):
        plotting.soft_permutation(np.eye(3), labels=["a", "b"])


# ------------------------------------------------------------------------- prediction sets
@pytest.fixture(scope="module")
def gps_2d():
    rng = np.random.default_rng(3)
    centres = np.array([[0.0, 0.0], [3.0, 0.0], [1.5, 2.5]])
    X = np.vstack([c + rng.normal(size=(30, 2)) for c in centres])
    y = np.repeat([0, 1, 2], 30)
    return ag.GeneralizedPredictionSet(error_rate=0.1, random_state=0).fit(X, y), X, y


def test_acceptance_regions_colours_are_the_predicted_sets(gps_2d):
    gps, X, y = gps_2d
    fig, ax = plt.subplots()
    assert plotting.acceptance_regions(gps, X, y, resolution=25, ax=ax) is ax
    mesh = ax.collections[0]
    category = np.asarray(mesh.get_array())
    assert category.shape == (25, 25)
    edges = mesh.get_coordinates()  # (26, 26, 2) cell corners
    centres = 0.25 * (edges[:-1, :-1] + edges[1:, :-1] + edges[:-1, 1:] + edges[1:, 1:])
    sets = gps.predict_set(centres.reshape(-1, 2))
    expected = []
    for row in sets:
        members = np.flatnonzero(row)
        expected.append(0 if members.size == 0 else 1 + members[0] if members.size == 1 else 4)
    np.testing.assert_array_equal(category.ravel(), expected)
    # the colour of each category: outlier grey, one pale colour per class, ambiguous dark grey
    colours = mesh.cmap(mesh.norm(np.arange(5)))
    assert len({tuple(c) for c in colours}) == 5
    assert np.allclose(colours[0][:3], 0.93) and np.allclose(colours[4][:3], 0.45)
    pale_c0 = 0.35 * np.array(to_rgba("C0")[:3]) + 0.65
    np.testing.assert_allclose(colours[1][:3], pale_c0)


def test_acceptance_regions_refuses_non_2d(gps_2d):
    gps, X, y = gps_2d
    with pytest.raises(ValueError, match=r"\(n, 2\)"):
        plotting.acceptance_regions(gps, np.ones((3, 3)))
    rng = np.random.default_rng(4)
    X3 = rng.normal(size=(40, 3))
    gps3 = ag.GeneralizedPredictionSet(calibration=None, gamma=1.0, C=0.1).fit(
        X3, np.arange(40) % 2
    )
    with pytest.raises(ValueError, match="2 features"):
        plotting.acceptance_regions(gps3)


def test_acceptance_regions_without_points_uses_the_unlabelled_window(gps_2d):
    gps, X, y = gps_2d
    ax = plotting.acceptance_regions(gps, resolution=10)
    lo, hi = gps.X_unlabeled_.min(0), gps.X_unlabeled_.max(0)
    x0, x1 = ax.get_xlim()
    assert x0 <= lo[0] and x1 >= hi[0]


# -------------------------------------------------------------------------- learning curves
def test_learning_curve_mean_and_band():
    rng = np.random.default_rng(5)
    sizes = np.array([10, 20, 40, 80])
    S = rng.uniform(size=(2, 4, 5))
    fig, ax = plt.subplots()
    assert plotting.learning_curve(sizes, S, labels=["a", "b"], ax=ax) is ax
    assert [line.get_label() for line in ax.lines] == ["a", "b"]
    for m, line in enumerate(ax.lines):
        np.testing.assert_allclose(line.get_xdata(), sizes)
        np.testing.assert_allclose(line.get_ydata(), S[m].mean(axis=1))
    bands = ax.collections
    assert len(bands) == 2
    for m, band in enumerate(bands):
        ys = band.get_paths()[0].vertices[:, 1]
        mean, sd = S[m].mean(axis=1), S[m].std(axis=1, ddof=1)
        np.testing.assert_allclose(ys.max(), (mean + sd).max())
        np.testing.assert_allclose(ys.min(), (mean - sd).min())


def test_learning_curve_2d_and_bad_inputs():
    ax = plotting.learning_curve([1, 2, 3], [[0.1, 0.2, 0.3]])
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [0.1, 0.2, 0.3])
    assert not ax.collections
    with pytest.raises(ValueError, match="n_sizes = 3"):
        plotting.learning_curve([1, 2, 3], np.ones((2, 4)))
    with pytest.raises(ValueError):
        plotting.learning_curve([1, 2], [[0.1, np.nan]])
    with pytest.raises(ValueError, match="labels"):
        plotting.learning_curve([1, 2], [[0.1, 0.2]], labels=["a", "b"])


# ------------------------------------------------------------------------------ benchmarks
RECORDS = {
    "date": "2026-01-01",
    "records": [
        {
            "table": "zero-one",
            "dataset": "iris",
            "columns": {"A": [97.0, 1.0, "*"], "B": [90.0, 2.5, ""]},
        },
        {"table": "ordinal", "dataset": "iris", "columns": {"C": [0.3, 0.1, "*"]}},
        {
            "table": "zero-one",
            "dataset": "wine",
            "columns": {"A": [80.0, 0.5, ""], "B": [85.0, 1.5, "*"]},
        },
    ],
}


def test_benchmark_bars_heights_errors_and_marks(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(RECORDS))
    fig, ax = plt.subplots()
    assert plotting.benchmark_bars(str(path), "zero-one", ax=ax) is ax
    bars = [c for c in ax.containers if isinstance(c, BarContainer)]
    assert [b.get_label() for b in bars] == ["A", "B"]
    expected = {
        "A": ([97.0, 80.0], [1.0, 0.5], [True, False]),
        "B": ([90.0, 85.0], [2.5, 1.5], [False, True]),
    }
    for container in bars:
        mean, sd, marked = expected[container.get_label()]
        np.testing.assert_allclose([p.get_height() for p in container.patches], mean)
        segments = container.errorbar.lines[2][0].get_segments()
        np.testing.assert_allclose([s[1][1] - s[0][1] for s in segments], 2 * np.array(sd))
        assert [bool(p.get_hatch()) for p in container.patches] == marked
    assert sum(t.get_text() == "*" for t in ax.texts) == 2
    assert [t.get_text() for t in ax.get_xticklabels()] == ["iris", "wine"]
    # the same from the records list and from the loaded dict
    for source in (RECORDS, RECORDS["records"]):
        other = plotting.benchmark_bars(source, "zero-one")
        got = [p.get_height() for c in other.containers if isinstance(c, BarContainer) for p in c]
        assert got == [97.0, 80.0, 90.0, 85.0]


def test_benchmark_bars_unknown_metric():
    with pytest.raises(ValueError, match="ordinal"):
        plotting.benchmark_bars(RECORDS, "accuracy")


# --------------------------------------------------------------------------- optional extra
def test_missing_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"pip install advgame\[plot\]"):
        plotting.soft_permutation(np.eye(2))
