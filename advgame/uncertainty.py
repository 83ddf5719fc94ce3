r"""Uncertainty sets: how closely the adversary must match the training moments (docs/design.md,
"Uncertainty sets are regularisers").

The adversary's conditional distributions ``q_i`` must satisfy a constraint on the moment residual

.. math::  m(q) = \frac1n \sum_i \Big(\sum_j q_{ij} \phi(x_i, j) - \phi(x_i, y_i)\Big).

Dualising it with multipliers ``theta`` (Fathony et al. 2018a, Theorem 2; Farnia and Tse 2016, Theorem 3) turns the game into

.. math::  \min_\theta \frac1n \sum_i \mathrm{AL}(f_i(\theta), y_i) + R(\theta),

where ``R`` is the support function of the set: exact matching gives ``R = 0``, a norm ball
``||m|| <= eps`` gives ``eps ||theta||_*`` (the dual norm), per-block balls give group norms and a
quadratic penalty on the violation gives ``(lam / 2) ||theta||^2``.

Each set provides ``penalty`` and ``subgradient`` (fast solvers) and ``add_to_program`` (the
compiler), so the two always optimise the same objective.  The compiler's program reaches them
as a :class:`ProgramBuilder` (the four methods of :class:`advgame.compile.Program` a set calls):
this module needs nothing from :mod:`advgame.compile`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ._validation import as_float_array, check_real

if TYPE_CHECKING:
    from .features import FeatureMap

__all__ = [
    "UncertaintySet",
    "Exact",
    "NormBall",
    "SoftMoments",
    "MomentBalls",
    "MOMENT_NORMS",
    "as_uncertainty",
]


#: Terms of a group of rows: ``(variable slice, matrix)`` or ``(variable slice, matrix, label)``.
Terms = list[tuple[Any, ...]]


class ProgramBuilder(Protocol):
    """What an uncertainty set adds to a program (:class:`advgame.compile.Program` is one):
    named variable blocks, named groups of linear rows, a quadratic term and second-order
    cones."""

    def add_variables(
        self,
        name: str,
        size: int,
        lower: float | ArrayLike = ...,
        upper: float | ArrayLike = ...,
        cost: float | ArrayLike = ...,
        label: str | None = ...,
    ) -> slice: ...
    def add_rows(
        self,
        name: str,
        terms: Terms,
        lower: float | ArrayLike = ...,
        upper: float | ArrayLike = ...,
    ) -> slice: ...
    def add_quadratic(self, block: slice, factor: Any, label: str | None = ...) -> None: ...
    def add_cone(self, t: slice, block: slice, factor: Any, label: str | None = ...) -> None: ...


class UncertaintySet:
    """Base class.  ``adversary_constraint`` and ``regularizer`` describe the math in words."""

    adversary_constraint = ""
    regularizer = ""
    #: Program kind this set needs: 'LP', 'QP' or 'SOCP'.
    program_kind = "LP"
    smooth = True

    def penalty(self, theta: np.ndarray, fmap: FeatureMap) -> float:
        """The regulariser ``R(theta)`` this set induces in the dual (for the fast solvers)."""
        raise NotImplementedError

    def subgradient(self, theta: np.ndarray, fmap: FeatureMap) -> np.ndarray:
        """An element of ``∂R(theta)`` (the gradient where ``R`` is smooth)."""
        raise NotImplementedError

    def add_to_program(self, program: ProgramBuilder, theta: slice, fmap: FeatureMap) -> None:
        """Add the regulariser over the variable block ``theta`` (a slice) to ``program``."""
        raise NotImplementedError

    def add_to_dual(
        self, program: ProgramBuilder, terms: Terms, observed: np.ndarray, fmap: FeatureMap
    ) -> None:
        r"""Add the adversary's constraint on the moment residual to the dual ``program``.

        ``terms`` are the row terms ``[(slice, matrix, label), ...]`` of the adversary's moments
        ``sum_i w_i sum_j q_ij phi(x_i, j)`` and ``observed`` the empirical moments
        ``sum_i w_i phi(x_i, y_i)``, so the residual is ``m(q) = terms - observed``.  The
        residual is written ``G^T z`` with ``G`` the feature map's norm factor (``z = m`` for
        explicit features), and the set bounds ``z`` (the dual of :meth:`add_to_program`:
        ``R^*(m)``, which is 0 on the set and ``inf`` outside, or a penalty).
        """
        raise NotImplementedError

    def conjugate(self, g: np.ndarray, fmap: FeatureMap) -> float:
        r"""``R^*(g) = sup_theta g . theta - R(theta)`` (``inf`` outside its domain).

        ``g`` is a moment residual in ``theta``'s coordinates (explicit features only: for kernel
        features the residual lives in the RKHS and ``NotApplicableError`` is raised).
        """
        raise NotImplementedError

    def dual_bound(self, g: np.ndarray, base: float, gain: float, fmap: FeatureMap) -> float:
        r"""``max_{0 <= r <= 1} base + r gain - R^*(r g)``: a lower bound on the learning optimum.

        ``g = sum_i w_i Phi_i^T (e_{y_i} - q_i)`` is the moment residual of adversaries ``q_i``,
        ``base = sum_i w_i H_L(e_{y_i})`` and ``gain = sum_i w_i H_L(q_i) - base``.  The mixture
        ``q_r = (1 - r) e_y + r q`` has residual ``r g`` and (``H_L`` concave) entropy at least
        ``base + r gain``, so by weak duality every ``r`` in ``[0, 1]`` gives a bound; this is its
        best ``r``.  Pure: depends on its arguments only.
        """
        raise NotImplementedError

    def mixture(
        self, first: tuple[np.ndarray, float], second: tuple[np.ndarray, float], fmap: FeatureMap
    ) -> float:
        r"""A weight ``s`` in ``[0, 1]`` for mixing two dual points into a better one.

        A dual point is a pair ``(g, gain)`` as in :meth:`dual_bound`.  Mixing the adversaries
        ``(1 - s) q + s q'`` mixes the residuals exactly and the gains from below (``H_L`` is
        concave), so

        .. math::  \mathrm{dual\_bound}\big((1 - s) g + s g',\ base,\
                   (1 - s)\, gain + s\, gain'\big) \le J^*

        for every ``s`` by weak duality (the dual of Fathony et al. 2018a, Theorem 2, with the
        moment constraint relaxed as in Farnia and Tse 2016, Theorem 3).  Sets with a closed
        form for the best ``s`` override this; the others return 1, the second point alone
        (measured on the norm balls with the smoothing solver: a golden-section search for
        ``s`` left the steps unchanged and cost 20-70% more time).  Pure: depends on its
        arguments only.

        Parameters
        ----------
        first, second : tuple of (ndarray, float)
            Dual points ``(g, gain)``: a moment residual in ``theta``'s coordinates and an
            entropy gain, as :meth:`dual_bound` takes them.
        fmap : FeatureMap
            The feature map of the residuals.

        Returns
        -------
        float
            ``s``: the mixture to keep is ``(1 - s) first + s second``.
        """
        return 1.0

    def latex_regularizer(self) -> str:
        """``R(theta)`` as LaTeX (empty for none)."""
        raise NotImplementedError

    def latex_constraint(self) -> tuple[str | None, str | None]:
        """The adversary's constraint on ``m(q)`` as LaTeX, or its penalty (``(penalty, None)``:
        ``(None, constraint)`` for a constraint)."""
        raise NotImplementedError

    def latex_where(self) -> list[str]:
        """Definitions of the symbols :meth:`latex_regularizer` and :meth:`latex_constraint`
        introduce, for the programs' ``where`` block (none by default)."""
        return []

    def __repr__(self):
        params = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({params})"


def _moment_gap(program, terms, observed, fmap):
    """Rows ``m(q) - G^T z = observed`` with a free ``z`` (``moment_gap``); returns its slice."""
    G = fmap.norm_factor()
    z = program.add_variables("moment_gap", G.shape[0])
    label = "G^T" if fmap.coordinate_norms is False else "I"
    program.add_rows("moments", [*terms, (z, -G.T.tocsr(), f"-{label}")], observed, observed)
    return z


def _explicit(fmap, what):
    if not fmap.coordinate_norms:
        from .exceptions import NotApplicableError

        raise NotApplicableError(
            f"{what} needs explicit coordinates; for kernel features the moment residual lives "
            "in the RKHS."
        )


class Exact(UncertaintySet):
    r"""Exact moment matching ``m(q) = 0`` (Fathony et al. 2018a, Eq. 1): no regulariser, ``R = 0``."""

    adversary_constraint = "m(q) = 0"
    regularizer = "none"

    def penalty(self, theta: np.ndarray, fmap: FeatureMap) -> float:
        return 0.0

    def subgradient(self, theta: np.ndarray, fmap: FeatureMap) -> np.ndarray:
        return np.zeros_like(theta)

    def add_to_program(self, program: ProgramBuilder, theta: slice, fmap: FeatureMap) -> None:
        return None

    def add_to_dual(
        self, program: ProgramBuilder, terms: Terms, observed: np.ndarray, fmap: FeatureMap
    ) -> None:
        program.add_rows("moments", terms, observed, observed)

    def conjugate(self, g: np.ndarray, fmap: FeatureMap) -> float:
        """The indicator of ``{0}``: exact matching admits no residual."""
        _explicit(fmap, "Exact.conjugate")
        return 0.0 if not np.any(g) else np.inf

    def dual_bound(self, g: np.ndarray, base: float, gain: float, fmap: FeatureMap) -> float:
        """Only ``r = 0`` (the labels themselves) is feasible unless ``g`` is exactly 0."""
        _explicit(fmap, "Exact.dual_bound")
        return base + max(gain, 0.0) if not np.any(g) else base

    def latex_regularizer(self) -> str:
        return ""

    def latex_constraint(self) -> tuple[str | None, str | None]:
        return None, r"m(q) = 0"


class NormBall(UncertaintySet):
    r"""Norm-ball moment set ``||m(q)|| <= radius`` (Farnia and Tse 2016, Theorem 3).

    ===========  =======================================  ===================================
    norm         adversary constraint                     regulariser (dual norm)
    ===========  =======================================  ===================================
    ``1``        ``||m||_1 <= eps``                       ``eps ||theta||_inf``  (LP)
    ``inf``      ``||m||_inf <= eps``                     ``eps ||theta||_1``    (LP)
    ``2``        ``||m||_2 <= eps``                       ``eps ||theta||_2``    (SOCP)
    ``'group'``  ``||m_b||_2 <= eps`` for every block b   ``eps sum_b ||theta_b||_2`` (SOCP)
    ===========  =======================================  ===================================

    Blocks are the feature map's (per class for multiclass features).  For kernel features only
    ``norm=2`` (the RKHS norm) is defined.
    """

    smooth = False

    def __init__(self, radius: float, norm: int | float | str = 2) -> None:
        if isinstance(norm, str):
            valid = norm in ("group", "inf")
        else:
            valid = not isinstance(norm, bool) and np.isscalar(norm) and norm in (1, 2, np.inf)
        if not valid:
            raise ValueError(f"norm must be one of 1, 2, inf, 'group'; got {norm!r}.")
        self.radius = check_real("radius", radius, low=0)
        self.norm = np.inf if norm in ("inf", np.inf) else norm

    @property
    def adversary_constraint(self) -> str:
        """The constraint on the moment residual, in words."""
        return f"||m(q)||_{self.norm} <= {self.radius:g}"

    @property
    def regularizer(self) -> str:
        """The induced dual-norm penalty, in words."""
        dual = {1: "inf", np.inf: "1", 2: "2", "group": "group (sum of block l2)"}[self.norm]
        return f"{self.radius:g} * ||theta||_{dual}"

    @property
    def program_kind(self) -> str:
        """'LP' for the l1 / linf balls (polyhedral dual norms) and radius 0 (no regulariser),
        'SOCP' for l2 and group."""
        return "LP" if self.norm in (1, np.inf) or self.radius == 0 else "SOCP"

    def _check(self, fmap):
        if self.norm != 2 and not fmap.coordinate_norms:
            raise ValueError(
                f"NormBall(norm={self.norm!r}) needs explicit coordinates; kernel features only "
                "support norm=2 (the RKHS norm)."
            )

    def penalty(self, theta: np.ndarray, fmap: FeatureMap) -> float:
        self._check(fmap)
        if self.norm == 1:
            return self.radius * np.max(np.abs(theta))
        if self.norm == np.inf:
            return self.radius * np.sum(np.abs(theta))
        if self.norm == 2:
            return self.radius * np.sqrt(max(float(theta @ fmap.norm_metric(theta)), 0.0))
        return self.radius * sum(np.linalg.norm(theta[b]) for b in fmap.blocks())

    def subgradient(self, theta: np.ndarray, fmap: FeatureMap) -> np.ndarray:
        self._check(fmap)
        if self.norm == 1:
            g = np.zeros_like(theta)
            i = np.argmax(np.abs(theta))
            g[i] = np.sign(theta[i])
            return self.radius * g
        if self.norm == np.inf:
            return self.radius * np.sign(theta)
        if self.norm == 2:
            metric = fmap.norm_metric(theta)
            norm = np.sqrt(max(float(theta @ metric), 0.0))
            if norm == 0:
                return np.zeros_like(theta)
            return self.radius * metric / norm
        g = np.zeros_like(theta)
        for b in fmap.blocks():
            norm = np.linalg.norm(theta[b])
            if norm > 0:
                g[b] = theta[b] / norm
        return self.radius * g

    def add_to_program(self, program: ProgramBuilder, theta: slice, fmap: FeatureMap) -> None:
        self._check(fmap)
        if self.radius == 0:
            return
        size = theta.stop - theta.start
        eye = sp.identity(size, format="csr")
        if self.norm == 1:  # eps * t with t >= |theta_j|
            t = program.add_variables("linf_bound", 1, lower=0.0, cost=self.radius, label="eps")
            ones = sp.csr_matrix(np.ones((size, 1)))
            program.add_rows("linf_upper", [(t, ones, "1"), (theta, -eye, "-I")], lower=0.0)
            program.add_rows("linf_lower", [(t, ones, "1"), (theta, eye, "I")], lower=0.0)
        elif self.norm == np.inf:  # eps * sum(s) with s >= |theta|
            s = program.add_variables("l1_bound", size, lower=0.0, cost=self.radius, label="eps 1")
            program.add_rows("l1_upper", [(s, eye, "I"), (theta, -eye, "-I")], lower=0.0)
            program.add_rows("l1_lower", [(s, eye, "I"), (theta, eye, "I")], lower=0.0)
        elif self.norm == 2:
            t = program.add_variables("l2_bound", 1, lower=0.0, cost=self.radius, label="eps")
            program.add_cone(t, theta, fmap.norm_factor(), "G")
        else:
            for index, block in enumerate(fmap.blocks()):
                t = program.add_variables(
                    f"group_bound_{index}", 1, lower=0.0, cost=self.radius, label="eps"
                )
                select = sp.csr_matrix(
                    (np.ones(block.size), (np.arange(block.size), block)), shape=(block.size, size)
                )
                program.add_cone(t, theta, select, f"S_{index}")

    def add_to_dual(
        self, program: ProgramBuilder, terms: Terms, observed: np.ndarray, fmap: FeatureMap
    ) -> None:
        self._check(fmap)
        z = _moment_gap(program, terms, observed, fmap)
        size = z.stop - z.start
        eps = self.radius
        if self.norm == np.inf:  # |z_j| <= eps
            program.add_rows("linf ball", [(z, sp.identity(size, format="csr"), "I")], -eps, eps)
        elif self.norm == 1:  # sum |z_j| <= eps through s >= |z|
            s = program.add_variables("moment_abs", size, lower=0.0)
            eye = sp.identity(size, format="csr")
            program.add_rows("l1 ball upper", [(s, eye, "I"), (z, -eye, "-I")], lower=0.0)
            program.add_rows("l1 ball lower", [(s, eye, "I"), (z, eye, "I")], lower=0.0)
            program.add_rows("l1 ball", [(s, sp.csr_matrix(np.ones((1, size))), "1^T")], upper=eps)
        elif self.norm == 2:
            t = program.add_variables("radius", 1, lower=eps, upper=eps)
            program.add_cone(t, z, sp.identity(size, format="csr"), "I")
        else:
            blocks = fmap.blocks()
            t = program.add_variables("radius", len(blocks), lower=eps, upper=eps)
            for index, block in enumerate(blocks):
                select = sp.csr_matrix(
                    (np.ones(block.size), (np.arange(block.size), block)), shape=(block.size, size)
                )
                program.add_cone(
                    slice(t.start + index, t.start + index + 1), z, select, f"S_{index}"
                )

    def moment_norm(self, g: np.ndarray, fmap: FeatureMap) -> float:
        """The norm of the adversary's constraint, ``||g||`` (the largest block l2 norm for
        ``'group'``), so that ``g`` is in the set iff it is at most ``radius``."""
        _explicit(fmap, "NormBall.moment_norm")
        if self.norm == "group":
            return max((float(np.linalg.norm(g[b])) for b in fmap.blocks()), default=0.0)
        return float(np.linalg.norm(g, ord=self.norm))

    def project_moments(self, g: np.ndarray, fmap: FeatureMap) -> np.ndarray:
        """Euclidean projection of ``g`` onto the moment set ``{||g|| <= radius}``: the gradient
        of the Moreau envelope of ``R`` (its support function), used for smoothing ``R``."""
        _explicit(fmap, "NormBall.project_moments")
        eps = self.radius
        if self.norm == np.inf:
            return np.clip(g, -eps, eps)
        if self.norm == 1:
            return _project_l1_ball(g[None, :], eps)[0]
        if self.norm == 2:
            norm = np.linalg.norm(g)
            return g * (eps / norm) if norm > eps else g.copy()
        out = g.copy()
        for b in fmap.blocks():
            norm = np.linalg.norm(g[b])
            if norm > eps:
                out[b] *= eps / norm
        return out

    def conjugate(self, g: np.ndarray, fmap: FeatureMap) -> float:
        """The indicator of the moment set: 0 if ``||g|| <= radius``, ``inf`` otherwise."""
        return 0.0 if self.moment_norm(g, fmap) <= self.radius else np.inf

    def dual_bound(self, g: np.ndarray, base: float, gain: float, fmap: FeatureMap) -> float:
        """``r = min(1, radius / ||g||)``, the largest mixture inside the ball (or ``r = 0``)."""
        norm = self.moment_norm(g, fmap)
        r = 1.0 if norm <= self.radius else self.radius / norm
        return base + max(r * gain, 0.0)

    _LATEX_NORM = {1: r"\infty", np.inf: "1", 2: "2"}

    def latex_regularizer(self) -> str:
        if self.radius == 0:
            return ""
        if self.norm == "group":
            return rf"{self.radius:g} \sum_b \|\theta_b\|_2"
        return rf"{self.radius:g} \|\theta\|_{{{self._LATEX_NORM[self.norm]}}}"

    def latex_constraint(self) -> tuple[str | None, str | None]:
        if self.norm == "group":
            return None, rf"\|m_b(q)\|_2 \le {self.radius:g}\ \text{{for every block }} b"
        norm = {1: "1", np.inf: r"\infty", 2: "2"}[self.norm]
        return None, rf"\|m(q)\|_{{{norm}}} \le {self.radius:g}"

    def latex_where(self) -> list[str]:
        if self.norm != "group":
            return []
        return [r"\theta_b,\ m_b(q): \text{the coordinates of the feature map's block } b"]


class SoftMoments(UncertaintySet):
    r"""Penalised moment violation: the adversary pays ``||m(q)||^2 / (2 lam)``.

    Its conjugate gives the ridge regulariser ``R(theta) = (lam / 2) ||theta||^2`` (the RKHS norm for
    kernels), the objective of Fathony et al. 2018a, §6.2 / Algorithm 1.  A convex QP.
    """

    program_kind = "QP"

    def __init__(self, lam: float = 1e-2) -> None:
        self.lam = check_real("lam", lam, low=0, strict=True)

    @property
    def adversary_constraint(self) -> str:
        return f"none (pays ||m(q)||^2 / (2 * {self.lam:g}))"

    @property
    def regularizer(self) -> str:
        return f"({self.lam:g} / 2) * ||theta||_2^2"

    def penalty(self, theta: np.ndarray, fmap: FeatureMap) -> float:
        return 0.5 * self.lam * max(float(theta @ fmap.norm_metric(theta)), 0.0)

    def subgradient(self, theta: np.ndarray, fmap: FeatureMap) -> np.ndarray:
        return self.lam * fmap.norm_metric(theta)

    def add_to_program(self, program: ProgramBuilder, theta: slice, fmap: FeatureMap) -> None:
        label = r"sqrt(lam) G" if fmap.coordinate_norms is False else "sqrt(lam) I"
        program.add_quadratic(theta, np.sqrt(self.lam) * fmap.norm_factor(), label)

    def add_to_dual(
        self, program: ProgramBuilder, terms: Terms, observed: np.ndarray, fmap: FeatureMap
    ) -> None:
        z = _moment_gap(program, terms, observed, fmap)
        size = z.stop - z.start
        program.add_quadratic(z, sp.identity(size, format="csr") / np.sqrt(self.lam), "I/sqrt(lam)")

    def conjugate(self, g: np.ndarray, fmap: FeatureMap) -> float:
        """``||g||^2 / (2 lam)``."""
        _explicit(fmap, "SoftMoments.conjugate")
        return float(g @ g) / (2.0 * self.lam)

    def dual_bound(self, g: np.ndarray, base: float, gain: float, fmap: FeatureMap) -> float:
        """``base + r gain - r^2 ||g||^2 / (2 lam)`` at its best ``r = clip(gain / (2 R^*(g)))``."""
        curvature = self.conjugate(g, fmap)
        if curvature == 0:
            return base + max(gain, 0.0)
        r = min(1.0, max(gain, 0.0) / (2.0 * curvature))
        return base + r * gain - r * r * curvature

    def mixture(
        self, first: tuple[np.ndarray, float], second: tuple[np.ndarray, float], fmap: FeatureMap
    ) -> float:
        r"""The best mixture weight of two dual points (see :meth:`UncertaintySet.mixture`).

        With the ``r`` of :meth:`dual_bound`, the bound of ``r ((1 - s) q + s q') + (1 - r)
        e_y`` is the concave quadratic of ``(a, b) = r (1 - s, s)``

        .. math::  a A + b B - (a, b)\, C\, (a, b)^\top, \qquad
                   C_{jl} = \frac{g_j \cdot g_l}{2 \lambda},

        (``A``, ``B`` the gains; ``R^*(g) = ||g||^2 / (2 lam)``, Fathony et al. 2018a, §6.2),
        maximised exactly over the triangle ``a, b >= 0, a + b <= 1``: at its stationary point
        when inside, else on one of its three edges (each a one-dimensional concave quadratic).

        Parameters
        ----------
        first, second : tuple of (ndarray, float)
            Dual points ``(g, gain)`` (moment residual, entropy gain).
        fmap : FeatureMap
            The feature map of the residuals (explicit coordinates).

        Returns
        -------
        float
            ``s = b / (a + b)`` at the maximiser (0 when it is ``a = b = 0``).
        """
        (g1, A), (g2, B) = first, second
        c11, c22 = self.conjugate(g1, fmap), self.conjugate(g2, fmap)
        c12 = float(g1 @ g2) / (2.0 * self.lam)

        def value(a, b):
            return A * a + B * b - (c11 * a * a + 2.0 * c12 * a * b + c22 * b * b)

        def clip(slope, curvature):  # the best t in [0, 1] of slope t - curvature t^2
            return (
                min(max(slope / (2.0 * curvature), 0.0), 1.0) if curvature > 0 else float(slope > 0)
            )

        edge = clip(B - A + 2.0 * (c11 - c12), c11 - 2.0 * c12 + c22)  # a + b = 1
        candidates = [(clip(A, c11), 0.0), (0.0, clip(B, c22)), (1.0 - edge, edge)]
        det = c11 * c22 - c12 * c12
        if det > 0:  # the stationary point, when inside the triangle
            a, b = (A * c22 - B * c12) / (2.0 * det), (B * c11 - A * c12) / (2.0 * det)
            if a >= 0 and b >= 0 and a + b <= 1:
                candidates.append((a, b))
        a, b = max(candidates, key=lambda point: value(*point))
        return b / (a + b) if a + b > 0 else 0.0

    def latex_regularizer(self) -> str:
        return rf"\frac{{{self.lam:g}}}{{2}} \|\theta\|_2^2"

    def latex_constraint(self) -> tuple[str | None, str | None]:
        return rf"\frac{{1}}{{2 \cdot {self.lam:g}}} \|m(q)\|_2^2", None


def as_uncertainty(
    uncertainty: UncertaintySet | str, strength: float | None = None
) -> UncertaintySet:
    """Accept an :class:`UncertaintySet` or a name with a strength.

    ``'exact'``; ``'soft'`` (``lam = strength``); ``'l1'``, ``'l2'``, ``'linf'``, ``'group'``
    (``NormBall`` with ``radius = strength`` and that moment norm).
    """
    if isinstance(uncertainty, UncertaintySet):
        return uncertainty
    names = {"l1": 1, "l2": 2, "linf": np.inf, "group": "group"}
    name = uncertainty if isinstance(uncertainty, str) else None
    if name == "exact":
        return Exact()
    if name == "soft":
        return SoftMoments(1e-2 if strength is None else strength)
    if name in names:
        return NormBall(1e-2 if strength is None else strength, norm=names[name])
    raise ValueError(
        "uncertainty must be an UncertaintySet or one of 'exact', 'soft', 'l1', 'l2', 'linf', "
        f"'group'; got {uncertainty!r}."
    )


# ------------------------------------------------- Farnia and Tse (2016): one moment ball per row
#: Moment norms of :class:`MomentBalls` and the dual norm each puts on a row ``A_i``.
MOMENT_NORMS = {1: "linf", 2: "l2", "inf": "l1", "group": "group l2", "l1inf": "l1,inf"}


def _project_l1_ball(V, radius):
    """Euclidean projection of each row of ``V`` onto ``{||v||_1 <= radius_row}`` (sort-based)."""
    radius = np.broadcast_to(radius, V.shape[:1]).astype(float)
    A = np.abs(V)
    outside = A.sum(axis=1) > radius
    if not outside.any():
        return V.copy()
    descending = -np.sort(-A[outside], axis=1)
    sizes = np.arange(1, V.shape[1] + 1)
    levels = (np.cumsum(descending, axis=1) - radius[outside, None]) / sizes
    # the largest entry is always in the support (its level is <= it; equal when radius is 0)
    count = np.maximum(np.count_nonzero(descending > levels, axis=1), 1)
    level = levels[np.arange(count.size), count - 1]
    out = V.copy()
    out[outside] = np.sign(V[outside]) * np.maximum(A[outside] - level[:, None], 0.0)
    return out


def _shrink_blocks(V, threshold):
    """Block soft-thresholding ``v max(0, 1 - t / ||v||)`` of each row (prox of ``t ||.||_2``)."""
    norms = np.linalg.norm(V, axis=1, keepdims=True)
    scale = np.maximum(0.0, 1.0 - threshold[:, None] / np.where(norms > 0, norms, 1.0))
    return V * scale


def _shrink_squared_l1(V, c):
    r"""Prox of ``(c/2) ||v||_1^2`` on each row: ``soft(v, theta)`` with ``theta = c ||prox||_1``.

    On ``|v|`` sorted in decreasing order ``a`` with prefix sums ``S``, ``theta = c S_m / (1 + c m)``
    for the largest ``m`` with ``a_m > c S_m / (1 + c m)``; ``c = inf`` gives 0.
    """
    c = np.broadcast_to(c, V.shape[:1]).astype(float)
    A = np.abs(V)
    descending = -np.sort(-A, axis=1)
    sizes = np.arange(1, V.shape[1] + 1)
    with np.errstate(invalid="ignore"):
        levels = np.where(
            np.isinf(c)[:, None],
            np.inf,
            c[:, None] * np.cumsum(descending, axis=1) / (1.0 + c[:, None] * sizes),
        )
    count = np.maximum(np.count_nonzero(descending > levels, axis=1), 1)
    level = levels[np.arange(count.size), count - 1]
    return np.sign(V) * np.maximum(A - level[:, None], 0.0)


def _group_labels(groups):
    """``groups`` as a 1-D array of one group label per feature, or a clear error."""
    try:
        labels = np.asarray(groups)
    except ValueError:  # ragged nesting, e.g. lists of feature indices
        labels = None
    if labels is None or labels.ndim != 1 or labels.dtype == object:
        raise ValueError(
            "groups must give one label per feature (its group), a 1-D sequence such as [0, 0, 1, 1] "
            f"(features 0-1 in group 0, 2-3 in group 1); got {groups!r}. Lists of feature "
            "indices are not accepted: label each feature with its group instead."
        )
    return labels


class MomentBalls:
    r"""Farnia and Tse's (2016) uncertainty set: one moment ball per row of ``A`` (Eq. 19, 34, 43; Theorem 3, 5).

    For ``t`` encoded targets ``theta_i(Y)`` and features ``X`` the adversary keeps
    ``||E_P[theta_i(Y) X] - E_Q[theta_i(Y) X]|| <= eps_i`` for each ``i``.  By Theorem 3 this adds
    ``sum_i eps_i ||A_i||_*`` to the dual, where ``A_i`` (row ``i`` of the ``t x d`` weights)
    pairs with row ``i``'s moments:

    ============  ============================================  ==================================
    ``norm``      moment ball                                   penalty on the weights ``W``
    ============  ============================================  ==================================
    ``'inf'``     ``||.||_inf <= eps_i``                        ``sum_i eps_i ||W_i||_1`` (lasso)
    ``2``         ``||.||_2 <= eps_i``                          ``sum_i eps_i ||W_i||_2``
    ``1``         ``||.||_1 <= eps_i``                          ``sum_i eps_i ||W_i||_inf``
    ``'group'``   ``||.||_2 <= eps_g`` on each feature group    ``sum_i sum_g eps_g ||W_{i,g}||_2``
                  (Eq. 34)                                      (group lasso)
    ``'l1inf'``   ``sum_i |.|_{i,j} <= eps`` per feature ``j``  ``eps sum_j max_i |W_ij|``
                                                                (Eq. 43, robust feature selection)
    ============  ============================================  ==================================

    ``squared=True`` uses ``sum_i lam_i ||W_i||_*^2`` instead (Theorem 5's strongly convex
    regulariser; ``norm=2`` gives ridge).  Intercepts are not in ``W``: the class marginals are
    matched exactly.

    Parameters
    ----------
    radius : float or array-like
        ``eps`` (or ``lam``): a scalar; one per row ``i`` (norms 1, 2, 'inf'); one per group.
    norm : {1, 2, 'inf', 'group', 'l1inf'}
    squared : bool
    groups : array-like of shape (d,) or None
        Group label of each feature (``norm='group'``).
    """

    def __init__(
        self,
        radius: ArrayLike,
        norm: int | float | str = 2,
        squared: bool = False,
        groups: ArrayLike | None = None,
    ) -> None:
        if isinstance(norm, float) and norm == np.inf:
            norm = "inf"
        if isinstance(norm, bool) or not isinstance(norm, (int, str)) or norm not in MOMENT_NORMS:
            raise ValueError(
                f"norm must be one of {list(MOMENT_NORMS)} (the moment-ball norm); got {norm!r}."
            )
        if squared and norm not in (1, 2, "inf"):
            raise ValueError("squared=True (Theorem 5) is defined for norm in (1, 2, 'inf').")
        if isinstance(squared, np.ndarray) or squared not in (True, False):
            raise ValueError(f"squared must be True or False; got {squared!r}.")
        radius = as_float_array("radius", radius)
        if radius.ndim > 1 or not np.all(np.isfinite(radius)) or np.any(radius < 0):
            raise ValueError(
                f"radius must be a finite non-negative scalar or 1-D array; got {radius!r}."
            )
        if norm == "group" and groups is None:
            raise ValueError("norm='group' needs groups: a group label for each feature.")
        self.radius, self.norm, self.squared = radius, norm, bool(squared)
        self.groups = None if groups is None else _group_labels(groups)

    def bind(self, n_rows: int, n_features: int) -> MomentBalls:
        """Check the radii and groups against ``W``'s shape ``(t, d)``; returns ``self``."""
        if self.norm == "group":
            if self.groups.shape != (n_features,):
                raise ValueError(
                    f"groups must give one label per feature ({n_features}); got shape "
                    f"{self.groups.shape}."
                )
            labels, self._group_index = np.unique(self.groups, return_inverse=True)
            expected, what = labels.size, "group"
        elif self.norm == "l1inf":
            expected, what = 1, "(single) ball"
        else:
            expected, what = n_rows, "row (class)"
        if self.radius.ndim == 1 and self.radius.size != expected:
            raise ValueError(
                f"radius must be a scalar or hold one value per {what} ({expected}); got "
                f"{self.radius.size} values."
            )
        self._eps = np.broadcast_to(self.radius, (expected,)).astype(float)
        return self

    @property
    def radii(self) -> np.ndarray:
        """The radius of every ball (a row, a group, or the single l1inf ball), after
        :meth:`bind`."""
        return self._eps

    @property
    def smooth(self) -> bool:
        """Whether the penalty is differentiable everywhere (ridge, or no penalty)."""
        return (self.squared and self.norm == 2) or not np.any(self._eps)

    @property
    def polyhedral(self) -> bool:
        """Whether the penalty is LP-representable (so a 0-1 model compiles to an LP)."""
        return (self.norm in (1, "inf", "l1inf") and not self.squared) or not np.any(self._eps)

    def _blocks(self, W):
        """``(t * n_groups, ...)`` blocks of ``W`` for the group norm, with their radii."""
        return [(W[:, self._group_index == g], eps) for g, eps in enumerate(self._eps)]

    def _norms(self, M, dual):
        """Each row's norm of ``M`` in the balls' norm (or its ``dual``): rows for 1, 2, inf;
        ``(groups, rows)`` for ``'group'`` (self-dual); ``'l1inf'`` by feature column."""
        if self.norm == "group":
            return np.stack([np.linalg.norm(B, axis=1) for B, _ in self._blocks(M)])
        if self.norm == "l1inf":
            return np.abs(M).max(axis=0) if dual else np.abs(M).sum(axis=0).max(keepdims=True)
        p = {1: "inf", "inf": 1, 2: 2}[self.norm] if dual else self.norm
        if p == 2:
            return np.linalg.norm(M, axis=1)
        return np.abs(M).sum(axis=1) if p == 1 else np.abs(M).max(axis=1)

    def row_norms(self, W: np.ndarray) -> np.ndarray:
        """The dual norm of each row (or of each feature column for ``l1inf``)."""
        return self._norms(W, dual=True)

    def penalty(self, W: np.ndarray) -> float:
        r"""``sum_i eps_i ||W_i||_*`` (or the squared / group / l1inf variant)."""
        norms = self.row_norms(W)
        if self.norm == "group":
            return float(self._eps @ norms.sum(axis=1))
        if self.norm == "l1inf":
            return float(self._eps[0] * norms.sum())
        return float(self._eps @ (norms**2 if self.squared else norms))

    def subgradient(self, W: np.ndarray) -> np.ndarray:
        """A subgradient of :meth:`penalty` with respect to ``W``."""
        eps = self._eps
        if self.norm == "inf":
            G = np.sign(W) * (2 * np.abs(W).sum(axis=1, keepdims=True) if self.squared else 1.0)
            return eps[:, None] * G
        if self.norm == 2:
            if self.squared:
                return 2 * eps[:, None] * W
            norms = np.linalg.norm(W, axis=1, keepdims=True)
            return eps[:, None] * W / np.where(norms > 0, norms, 1.0)
        if self.norm in (1, "l1inf"):
            axis = 1 if self.norm == 1 else 0
            top = np.argmax(np.abs(W), axis=axis)
            G = np.zeros_like(W)
            if axis == 1:
                rows = np.arange(W.shape[0])
                G[rows, top] = np.sign(W[rows, top])
                scale = 2 * np.abs(W).max(axis=1) if self.squared else 1.0
                return (eps * scale)[:, None] * G
            cols = np.arange(W.shape[1])
            G[top, cols] = np.sign(W[top, cols])
            return eps[0] * G
        G = np.zeros_like(W)
        for g, eps_g in enumerate(eps):
            B = W[:, self._group_index == g]
            norms = np.linalg.norm(B, axis=1, keepdims=True)
            G[:, self._group_index == g] = eps_g * B / np.where(norms > 0, norms, 1.0)
        return G

    def prox(self, W: np.ndarray, step: float) -> np.ndarray:
        """``argmin_V penalty(V) + ||V - W||^2 / (2 step)``, for every norm and its squared form.

        Squared ``eps ||.||_1^2`` by sorting (:func:`_shrink_squared_l1`); squared
        ``eps ||.||_inf^2`` by Moreau's identity, its conjugate being ``||.||_1^2 / (4 eps)``.
        """
        eps = step * self._eps
        if self.squared:
            if self.norm == 2:
                return W / (1 + 2 * eps[:, None])
            if self.norm == "inf":
                return _shrink_squared_l1(W, 2 * eps)
            with np.errstate(divide="ignore"):
                return W - _shrink_squared_l1(W, 1.0 / (2 * eps))
        if self.norm == "inf":
            return np.sign(W) * np.maximum(np.abs(W) - eps[:, None], 0.0)
        if self.norm == 2:
            return _shrink_blocks(W, eps)
        if self.norm == 1:  # Moreau: prox of t||.||_inf is v - projection onto the t-l1-ball
            return W - _project_l1_ball(W, eps)
        if self.norm == "l1inf":
            return (W.T - _project_l1_ball(W.T, eps[0])).T
        out = W.copy()
        for g, eps_g in enumerate(eps):
            columns = self._group_index == g
            out[:, columns] = _shrink_blocks(W[:, columns], np.full(W.shape[0], eps_g))
        return out

    def moment_norms(self, G: np.ndarray) -> np.ndarray:
        """The moment-ball norm of each block of ``G``, shaped like :attr:`radius` per block.

        The dual of :meth:`row_norms`: rows (classes) for norms 1, 2, inf; ``(groups, rows)``
        for ``'group'``; the single ``max_j sum_i |G_ij|`` for ``'l1inf'``.
        """
        return self._norms(G, dual=False)

    def _norms_and_radii(self, G):
        norms = self.moment_norms(G)
        eps = self._eps[:, None] if self.norm == "group" else self._eps
        return norms, np.broadcast_to(eps, norms.shape)

    def conjugate(self, G: np.ndarray) -> float:
        r"""``R^*(G) = sup_W <G, W> - penalty(W)``: 0 inside the balls and ``inf`` outside, or
        ``sum_i ||G_i||^2 / (4 lam_i)`` when squared (the moment norms of :meth:`moment_norms`)."""
        norms, eps = self._norms_and_radii(G)
        if self.squared:
            with np.errstate(divide="ignore", invalid="ignore"):
                return float(np.sum(np.where(norms > 0, norms**2 / (4 * eps), 0.0)))
        return 0.0 if np.all(norms <= eps) else np.inf

    def dual_bound(self, G: np.ndarray, entropy: float) -> float:
        r"""``max_{0 <= r <= 1} r * entropy - R^*(r G)``: a lower bound on the optimal value.

        ``G`` is the moment mismatch ``E_P[theta X] - E_Q[theta X]`` of a conditional ``q`` whose
        average entropy exceeds the labels' by ``entropy``.  Mixing ``q`` with the empirical
        labels, ``q_r = (1 - r) e_y + r q``, scales the mismatch by ``r`` and (concavity) the
        entropy gain by at least ``r``, so by weak duality (Theorem 3) any ``r`` gives a bound:
        ``r = min(1, eps_b / ||G_b||)`` for balls, ``min(1, entropy / (2 R^*(G)))`` when squared.
        """
        if self.squared:
            curvature = self.conjugate(G)
            if curvature == 0:
                return entropy
            r = min(1.0, max(entropy, 0.0) / (2 * curvature))
            return r * entropy - r * r * curvature if r > 0 else 0.0
        norms, eps = self._norms_and_radii(G)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = min(1.0, float(np.min(np.where(norms > 0, eps / norms, np.inf))))
        return r * entropy

    def cvxpy(self, W: Any, radius: Any = None) -> Any:
        """The penalty as a cvxpy expression of the variable ``W`` (the compiler's piece): one
        term ``radius[b] * ||W_b||_*`` per ball ``b`` (a row, or a row's group), so that the
        printed program reads as the math.  ``radius`` is the radii as a cvxpy ``Parameter``
        (printed by name); the numbers when ``None``."""
        import cvxpy as cp

        eps = self._eps if radius is None else radius
        if self.norm == "l1inf":
            return eps[0] * cp.sum(cp.max(cp.abs(W), axis=0))
        if self.norm == "group":
            return sum(
                eps[g] * cp.norm(W[i, np.flatnonzero(self._group_index == g)], 2)
                for g in range(len(self._eps))
                for i in range(W.shape[0])
            )
        if self.squared and self.norm == 2:
            return sum(eps[i] * cp.sum_squares(W[i, :]) for i in range(W.shape[0]))
        p = {"inf": 1, 2: 2, 1: "inf"}[self.norm]
        norms = [cp.norm(W[i, :], p) for i in range(W.shape[0])]
        if self.squared:
            return sum(eps[i] * cp.square(norm) for i, norm in enumerate(norms))
        return sum(eps[i] * norm for i, norm in enumerate(norms))

    def cvxpy_moment_norms(self, G: Any, radius: Any = None) -> list[tuple[Any, Any]]:
        """The moment-ball norms of the cvxpy expression ``G`` (``t x d``), as a list of
        ``(norm expression, radius)`` pairs: one per row, per (group, row), or one for l1inf
        (the cvxpy form of :meth:`moment_norms`); ``radius`` as in :meth:`cvxpy`."""
        import cvxpy as cp

        eps = self._eps if radius is None else radius
        if self.norm == "group":
            return [
                (cp.norm(G[i, np.flatnonzero(self._group_index == g)], 2), eps[g])
                for g in range(len(self._eps))
                for i in range(G.shape[0])
            ]
        if self.norm == "l1inf":
            return [(cp.max(cp.sum(cp.abs(G), axis=0)), eps[0])]
        p = {"inf": "inf", 2: 2, 1: 1}[self.norm]
        return [(cp.norm(G[i, :], p), eps[i]) for i in range(G.shape[0])]

    def cvxpy_conjugate(self, G: Any, radius: Any = None) -> tuple[Any, list[Any]]:
        r"""``R^*(G)`` of :meth:`conjugate` for the cvxpy expression ``G``: ``(penalty,
        constraints)``.  Balls give the constraints ``||G_b|| <= eps_b`` (the adversary's moment
        balls) and no penalty; squared balls the penalty ``sum_i ||G_i||^2 / (4 lam_i)`` (rows
        with ``lam_i = 0`` must match exactly).  ``radius`` as in :meth:`cvxpy` (balls only: a
        squared ball's radii divide, which a parameter would make non-DPP)."""
        import cvxpy as cp

        if not self.squared:
            return 0.0, [norm <= eps for norm, eps in self.cvxpy_moment_norms(G, radius)]
        pairs = self.cvxpy_moment_norms(G)
        penalty = sum(cp.square(norm) / (4 * eps) for norm, eps in pairs if eps > 0)
        return penalty, [norm <= 0 for norm, eps in pairs if eps == 0]

    def __repr__(self):
        extra = ", squared=True" if self.squared else ""
        return f"MomentBalls(radius={self.radius.tolist()}, norm={self.norm!r}{extra})"
