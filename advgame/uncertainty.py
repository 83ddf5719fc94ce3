r"""Uncertainty sets: how closely the adversary must match the training moments (DESIGN §2).

The adversary's conditional distributions ``q_i`` must satisfy a constraint on the moment residual

.. math::  m(q) = \frac1n \sum_i \Big(\sum_j q_{ij} \phi(x_i, j) - \phi(x_i, y_i)\Big).

Dualising it with multipliers ``theta`` (seed 000 Theorem 2; seed 001 Theorem 3) turns the game into

.. math::  \min_\theta \frac1n \sum_i \mathrm{AL}(f_i(\theta), y_i) + R(\theta),

where ``R`` is the support function of the set: exact matching gives ``R = 0``, a norm ball
``||m|| <= eps`` gives ``eps ||theta||_*`` (the dual norm), per-block balls give group norms and a
quadratic penalty on the violation gives ``(lam / 2) ||theta||^2``.

Each set provides ``penalty`` and ``subgradient`` (fast solvers) and ``add_to_program`` (the
compiler), so the two always optimise the same objective.
"""

import numpy as np
import scipy.sparse as sp

from ._validation import check_real

__all__ = ["UncertaintySet", "Exact", "NormBall", "SoftMoments", "as_uncertainty"]


class UncertaintySet:
    """Base class.  ``adversary_constraint`` and ``regularizer`` describe the math in words."""

    adversary_constraint = ""
    regularizer = ""
    #: Program kind this set needs: 'LP', 'QP' or 'SOCP'.
    program_kind = "LP"
    smooth = True

    def penalty(self, theta, fmap):
        """The regulariser ``R(theta)`` this set induces in the dual (for the fast solvers)."""
        raise NotImplementedError

    def subgradient(self, theta, fmap):
        """An element of ``∂R(theta)`` (the gradient where ``R`` is smooth)."""
        raise NotImplementedError

    def add_to_program(self, program, theta, fmap):
        """Add the regulariser over the variable block ``theta`` (a slice) to ``program``."""
        raise NotImplementedError

    def __repr__(self):
        params = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({params})"


class Exact(UncertaintySet):
    r"""Exact moment matching ``m(q) = 0`` (seed 000 Eq. 1): no regulariser, ``R = 0``."""

    adversary_constraint = "m(q) = 0"
    regularizer = "none"

    def penalty(self, theta, fmap):
        return 0.0

    def subgradient(self, theta, fmap):
        return np.zeros_like(theta)

    def add_to_program(self, program, theta, fmap):
        return None


class NormBall(UncertaintySet):
    r"""Norm-ball moment set ``||m(q)|| <= radius`` (seed 001 Theorem 3).

    ==========  =======================================  ===================================
    norm        adversary constraint                     regulariser (dual norm)
    ==========  =======================================  ===================================
    ``1``       ``||m||_1 <= eps``                       ``eps ||theta||_inf``  (LP)
    ``inf``     ``||m||_inf <= eps``                     ``eps ||theta||_1``    (LP)
    ``2``       ``||m||_2 <= eps``                       ``eps ||theta||_2``    (SOCP)
    ``'group'`` ``||m_b||_2 <= eps`` for every block b   ``eps sum_b ||theta_b||_2`` (SOCP)
    ==========  =======================================  ===================================

    Blocks are the feature map's (per class for multiclass features).  For kernel features only
    ``norm=2`` (the RKHS norm) is defined.
    """

    smooth = False

    def __init__(self, radius, norm=2):
        if isinstance(norm, str):
            valid = norm in ("group", "inf")
        else:
            valid = not isinstance(norm, bool) and np.isscalar(norm) and norm in (1, 2, np.inf)
        if not valid:
            raise ValueError(f"norm must be one of 1, 2, inf, 'group'; got {norm!r}.")
        self.radius = check_real("radius", radius, low=0)
        self.norm = np.inf if norm in ("inf", np.inf) else norm

    @property
    def adversary_constraint(self):
        """The constraint on the moment residual, in words."""
        return f"||m(q)||_{self.norm} <= {self.radius:g}"

    @property
    def regularizer(self):
        """The induced dual-norm penalty, in words."""
        dual = {1: "inf", np.inf: "1", 2: "2", "group": "group (sum of block l2)"}[self.norm]
        return f"{self.radius:g} * ||theta||_{dual}"

    @property
    def program_kind(self):
        """'LP' for the l1 / linf balls (polyhedral dual norms), 'SOCP' for l2 and group."""
        return "LP" if self.norm in (1, np.inf) else "SOCP"

    def _check(self, fmap):
        if self.norm != 2 and not fmap.coordinate_norms:
            raise ValueError(
                f"NormBall(norm={self.norm!r}) needs explicit coordinates; kernel features only "
                "support norm=2 (the RKHS norm)."
            )

    def penalty(self, theta, fmap):
        self._check(fmap)
        if self.norm == 1:
            return self.radius * np.max(np.abs(theta))
        if self.norm == np.inf:
            return self.radius * np.sum(np.abs(theta))
        z = fmap.norm_factor() @ theta
        if self.norm == 2:
            return self.radius * np.linalg.norm(z)
        return self.radius * sum(np.linalg.norm(theta[b]) for b in fmap.blocks())

    def subgradient(self, theta, fmap):
        self._check(fmap)
        if self.norm == 1:
            g = np.zeros_like(theta)
            i = np.argmax(np.abs(theta))
            g[i] = np.sign(theta[i])
            return self.radius * g
        if self.norm == np.inf:
            return self.radius * np.sign(theta)
        if self.norm == 2:
            G = fmap.norm_factor()
            z = G @ theta
            norm = np.linalg.norm(z)
            return self.radius * (G.T @ z) / norm if norm > 0 else np.zeros_like(theta)
        g = np.zeros_like(theta)
        for b in fmap.blocks():
            norm = np.linalg.norm(theta[b])
            if norm > 0:
                g[b] = theta[b] / norm
        return self.radius * g

    def add_to_program(self, program, theta, fmap):
        self._check(fmap)
        if self.radius == 0:
            return
        size = theta.stop - theta.start
        eye = sp.identity(size, format="csr")
        if self.norm == 1:  # eps * t with t >= |theta_j|
            t = program.add_variables("linf_bound", 1, lower=0.0, cost=self.radius)
            ones = sp.csr_matrix(np.ones((size, 1)))
            program.add_rows("linf_upper", [(t, ones), (theta, -eye)], lower=0.0)
            program.add_rows("linf_lower", [(t, ones), (theta, eye)], lower=0.0)
        elif self.norm == np.inf:  # eps * sum(s) with s >= |theta|
            s = program.add_variables("l1_bound", size, lower=0.0, cost=self.radius)
            program.add_rows("l1_upper", [(s, eye), (theta, -eye)], lower=0.0)
            program.add_rows("l1_lower", [(s, eye), (theta, eye)], lower=0.0)
        elif self.norm == 2:
            t = program.add_variables("l2_bound", 1, lower=0.0, cost=self.radius)
            program.add_cone(t, theta, fmap.norm_factor())
        else:
            for index, block in enumerate(fmap.blocks()):
                t = program.add_variables(f"group_bound_{index}", 1, lower=0.0, cost=self.radius)
                select = sp.csr_matrix(
                    (np.ones(block.size), (np.arange(block.size), block)), shape=(block.size, size)
                )
                program.add_cone(t, theta, select)


class SoftMoments(UncertaintySet):
    r"""Penalised moment violation: the adversary pays ``||m(q)||^2 / (2 lam)``.

    Its conjugate gives the ridge regulariser ``R(theta) = (lam / 2) ||theta||^2`` (the RKHS norm for
    kernels), the objective of seed 000 §6.2 / Algorithm 1.  A convex QP.
    """

    program_kind = "QP"

    def __init__(self, lam=1e-2):
        self.lam = check_real("lam", lam, low=0, strict=True)

    @property
    def adversary_constraint(self):
        return f"none (pays ||m(q)||^2 / (2 * {self.lam:g}))"

    @property
    def regularizer(self):
        return f"({self.lam:g} / 2) * ||theta||_2^2"

    def penalty(self, theta, fmap):
        z = fmap.norm_factor() @ theta
        return 0.5 * self.lam * float(z @ z)

    def subgradient(self, theta, fmap):
        G = fmap.norm_factor()
        return self.lam * (G.T @ (G @ theta))

    def add_to_program(self, program, theta, fmap):
        program.add_quadratic(theta, np.sqrt(self.lam) * fmap.norm_factor())


def as_uncertainty(uncertainty, strength=None):
    """Accept an :class:`UncertaintySet` or a name with a strength.

    ``'exact'``; ``'soft'`` (``lam = strength``); ``'l1'``, ``'l2'``, ``'linf'``, ``'group'``
    (``NormBall`` with ``radius = strength`` and that moment norm).
    """
    if isinstance(uncertainty, UncertaintySet):
        return uncertainty
    names = {"l1": 1, "l2": 2, "linf": np.inf, "group": "group"}
    if uncertainty == "exact":
        return Exact()
    if uncertainty == "soft":
        return SoftMoments(1e-2 if strength is None else strength)
    if uncertainty in names:
        return NormBall(1e-2 if strength is None else strength, norm=names[uncertainty])
    raise ValueError(
        "uncertainty must be an UncertaintySet or one of 'exact', 'soft', 'l1', 'l2', 'linf', "
        f"'group'; got {uncertainty!r}."
    )
