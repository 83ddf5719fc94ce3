r"""A game over a polytope known only by its oracles: mirror-prox with a certified gap.

When a polytope :math:`\mathcal P` has no linear description, the game of
:mod:`advgame.compile.polytope` (a :class:`~advgame.losses.Bilinear` loss, features
``phi(x, y) = emb(y) ⊗ [x; 1]``) is still the convex-concave saddle-point problem

.. math::

    \min_{\theta,\ \nu_i \in \mathcal P}\ \max_{\mu_i \in \mathcal P}\
    \Phi = \sum_i w_i \big(c + u^\top\nu_i + v^\top\mu_i + \nu_i^\top M\mu_i
    + g_i(\theta)^\top(\mu_i - \mathrm{emb}(y_i))\big) + R(\theta),
    \qquad g_i(\theta) = \Theta^\top [x_i; 1],

whose value is the learning optimum (the inner games are bilinear; the moment constraint is
dualised as in Farnia and Tse 2016, Theorem 3).  Its gradient field is affine, so Nemirovski's
(2004) mirror-prox (extragradient) method with Euclidean projections onto the polytope
(:meth:`~advgame.polytopes.Polytope.project`) and the proximal map of ``R`` converges at the rate
``O(1/T)`` for the averaged iterates.  Each sample's ``nu_i`` and ``mu_i`` take steps scaled by
``1 / w_i`` (a diagonal preconditioner: the field is divided by ``w_i`` there), so that the samples' blocks and ``theta`` move at
comparable speeds; the step is ``STEP_FRACTION`` over the norm of the preconditioned operator.

**The certificate** uses the linear maximisation oracle (:meth:`~advgame.polytopes.Polytope.argmax`)
only.  Upper bound: for any ``nu_i`` in the polytope, ``value(g_i) <= max_{mu in P} loss(nu_i,
mu) + g_i . mu``, so

.. math::  J(\bar\theta) \le U = \sum_i w_i \big(\max_{\mu\in\mathcal P}
           (c + u^\top\bar\nu_i + (v + M^\top\bar\nu_i + g_i)^\top\mu) - g_i^\top
           \mathrm{emb}(y_i)\big) + R(\bar\theta).

Lower bound: the generalised entropy :math:`H(\mu) = \min_{\nu\in\mathcal P} \ell(\nu, \mu)`
is concave, so the mixtures ``(1 - r) emb(y_i) + r mu_i`` of the averaged adversaries give the
weak-duality bound of :meth:`advgame.uncertainty.UncertaintySet.dual_bound` (the bound
Fathony et al. 2018a, §6.1, build for the simplex).  ``U - lower`` bounds the distance of
``theta`` to optimality.  With exact moment matching the lower bound stays at the labels' own
entropy unless the adversaries match the moments exactly: declare a norm ball or soft moments for
a gap that closes.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import svds

from ..compile.inputs import (
    check_inputs,
    check_sample_weight,
    fresh,
    normalised_weights,
    point_shape,
    polytope_outputs,
)
from ..compile.latex import latex_where
from ..compile.learning import SAMPLE_WEIGHTS
from ..compile.polytope import polytope_symbols
from ..exceptions import ConvergenceWarning, NotApplicableError
from ..uncertainty import Exact, NormBall, SoftMoments
from ._progress import quiet

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..features import FeatureMap
    from ..polytopes import Polytope
    from ..uncertainty import UncertaintySet

__all__ = [
    "CHECK_EVERY",
    "OracleProgram",
    "OracleSolution",
    "STEP_FRACTION",
    "build_oracle_game",
    "solve_oracle_game",
]

#: The mirror-prox step is this fraction of ``1 / ||K||`` (``K`` the preconditioned operator;
#: the method converges for any fraction below 1).
STEP_FRACTION = 0.9
#: Iterations between two certificates (each costs two calls of the oracle on all samples).
CHECK_EVERY = 50


@dataclass
class OracleSolution:
    """A solved oracle game.

    Attributes
    ----------
    theta : ndarray
        ``vec(Theta)``, ``Theta`` of shape ``(d_x + 1, d)`` (as the compiled family's).
    objective : float
        The certified upper bound ``U`` on the learning objective at ``theta``.
    lower_bound : float
        A weak-duality lower bound on the optimum.
    gap : float
        ``objective - lower_bound``: ``theta`` is within ``gap`` of optimal.
    P, Q : ndarray of shape (n, d)
        The averaged predictor and adversary points of every sample (points of the polytope).
    n_iter : int
    converged : bool
        Whether ``gap <= tol * max(1, |objective|)``.
    """

    theta: np.ndarray
    objective: float
    lower_bound: float
    gap: float
    P: np.ndarray
    Q: np.ndarray
    n_iter: int
    converged: bool


class _Game:
    """The saddle function's pieces on fixed data (dense; the samples' blocks are ``(n, d)``)."""

    def __init__(self, loss, polytope, uncertainty, fmap, X1, E, w):
        self.M = np.asarray(loss.M, dtype=np.float64)
        self.u, self.v, self.c = np.asarray(loss.u), np.asarray(loss.v), float(loss.c)
        self.polytope, self.uncertainty, self.fmap = polytope, uncertainty, fmap
        self.X1, self.E, self.w = X1, E, w
        self.shape = (X1.shape[1], E.shape[1])  # Theta
        self.point_shape = (E.shape[0], *point_shape(polytope, E.shape[1]))

    def project(self, Z):
        try:
            return self.polytope.project(Z.reshape(self.point_shape)).reshape(Z.shape)
        except NotImplementedError:
            raise NotApplicableError(
                f"{self.polytope!r} has neither a linear description nor a Euclidean projection; "
                "mirror-prox needs the projection (and the linear maximisation oracle)."
            ) from None

    def best(self, H):
        """Each row's ``max_{mu in P} h . mu`` and its maximiser (the linear oracle)."""
        mu = self.polytope.argmax(H.reshape(self.point_shape)).reshape(H.shape)
        return np.einsum("ij,ij->i", H, mu), mu

    def potentials(self, theta):
        return self.X1 @ theta.reshape(self.shape)

    def field(self, theta, nu, mu):
        """The preconditioned gradient field ``(dPhi/dtheta, dPhi/dnu_i / w_i, -dPhi/dmu_i /
        w_i)`` (a norm ball's ``R`` is left to :meth:`prox`)."""
        grad_theta = (self.X1.T @ (self.w[:, None] * (mu - self.E))).ravel()
        if isinstance(self.uncertainty, SoftMoments):
            grad_theta = grad_theta + self.uncertainty.lam * theta
        return (
            grad_theta,
            self.u + mu @ self.M.T,
            -(self.v + nu @ self.M + self.potentials(theta)),
        )

    def prox(self, theta, step):
        """The proximal map of ``step * R`` (the identity without a nonsmooth ``R``): for a norm
        ball's ``R = eps ||.||_*``, ``x - step P(x / step)`` with ``P`` the projection onto the
        ball (Moreau's decomposition)."""
        if isinstance(self.uncertainty, NormBall):
            return theta - step * self.uncertainty.project_moments(theta / step, self.fmap)
        return theta

    def upper(self, theta, nu):
        G = self.potentials(theta)
        top, _ = self.best(self.v + nu @ self.M + G)
        value = self.c + nu @ self.u + top - np.einsum("ij,ij->i", G, self.E)
        return float(self.w @ value) + self.uncertainty.penalty(theta, self.fmap)

    def entropy(self, mu):
        """``H(mu) = min_{nu in P} loss(nu, mu)`` row by row (the linear oracle on ``-(u + M mu)``)."""
        top, _ = self.best(-(self.u + mu @ self.M.T))
        return self.c + mu @ self.v - top

    def lower(self, mu):
        base = float(self.w @ self.entropy(self.E))
        gain = float(self.w @ self.entropy(mu)) - base
        g = (self.X1.T @ (self.w[:, None] * (self.E - mu))).ravel()
        return self.uncertainty.dual_bound(g, base, gain, self.fmap)

    def operator_norm(self):
        """``||K||_2`` of the preconditioned linear part of the field (``theta`` steps 1, the
        samples' steps ``1 / w_i``)."""
        n, d = self.E.shape
        p = self.X1.shape[1]
        root = np.sqrt(self.w)
        coupling = sp.kron(sp.csr_matrix(root[:, None] * self.X1), sp.identity(d))  # (n d, p d)
        bilinear = sp.kron(sp.identity(n), sp.csr_matrix(self.M))
        lam = self.uncertainty.lam if isinstance(self.uncertainty, SoftMoments) else 0.0
        K = sp.bmat(
            [
                [lam * sp.identity(p * d), None, coupling.T],
                [None, sp.csr_matrix((n * d, n * d)), bilinear],
                [-coupling, -bilinear.T, None],
            ],
            format="csr",
        )
        if min(K.shape) <= 2:
            return float(np.linalg.norm(K.toarray(), 2))
        return float(svds(K, k=1, return_singular_vectors=False)[0])


def solve_oracle_game(
    loss: Any,
    polytope: Polytope,
    uncertainty: UncertaintySet,
    fmap: FeatureMap,
    X: np.ndarray,
    E: np.ndarray,
    sample_weight: np.ndarray | None = None,
    max_iter: int = 20_000,
    tol: float = 1e-3,
    progress: Any = None,
) -> OracleSolution:
    """Mirror-prox on the saddle-point problem of the module's docstring, stopped when the
    certified gap is at most ``tol * max(1, |objective|)`` (checked every
    :data:`CHECK_EVERY` iterations) or after ``max_iter`` iterations (a
    :class:`~advgame.exceptions.ConvergenceWarning`, the gap reported).

    Parameters
    ----------
    loss : Bilinear
    polytope : Polytope
        With ``project(., 'euclidean')`` and ``argmax``.
    uncertainty : Exact, NormBall or SoftMoments
    fmap : Multiclass
        Fitted with one class per coordinate (``fmap.fit(X, d)``).
    X : ndarray of shape (n, d_x)
    E : ndarray of shape (n, d)
        The outputs' embeddings (vertices of the polytope).
    progress : Phase, optional
        Told at every check (:class:`advgame.solvers._progress.Phase`).
    """
    n, d = E.shape
    w = normalised_weights(sample_weight, n)
    X1 = np.hstack([X, np.ones((n, 1))]) if fmap.fit_intercept else X
    game = _Game(loss, polytope, uncertainty, fmap, X1, E, w)
    step = STEP_FRACTION / max(game.operator_norm(), np.finfo(float).tiny)
    theta = np.zeros(X1.shape[1] * d)
    nu, mu = game.project(np.zeros((n, d))), E.copy()
    sums = [np.zeros_like(theta), np.zeros((n, d)), np.zeros((n, d))]
    upper, lower = np.inf, -np.inf
    best_theta, best_nu = theta, nu
    iteration = 0
    for iteration in range(1, max_iter + 1):
        f_theta, f_nu, f_mu = game.field(theta, nu, mu)
        half = (
            game.prox(theta - step * f_theta, step),
            game.project(nu - step * f_nu),
            game.project(mu - step * f_mu),
        )
        f_theta, f_nu, f_mu = game.field(*half)
        theta = game.prox(theta - step * f_theta, step)
        nu = game.project(nu - step * f_nu)
        mu = game.project(mu - step * f_mu)
        for total, point in zip(sums, half):
            total += point
        if iteration % CHECK_EVERY == 0 or iteration == max_iter:
            averages = [total / iteration for total in sums]
            # every point gives valid bounds: keep the best of the averages and the last iterate
            candidates = [(game.upper(t, v), t, v) for t, v in ((theta, nu), averages[:2])]
            upper, best_theta, best_nu = min(candidates, key=lambda c: c[0])
            lower = max(lower, game.lower(mu), game.lower(averages[2]))
            quiet(progress).step(iteration, upper - lower, objective=upper)
            if upper - lower <= tol * max(1.0, abs(upper)):
                break
    converged = upper - lower <= tol * max(1.0, abs(upper))
    if not converged:
        warnings.warn(
            f"mirror-prox stopped after {iteration} iterations with the certified gap "
            f"{upper - lower:.3g} above tol * max(1, |objective|) = {tol * max(1, abs(upper)):.3g}"
            + (
                " (exact moment matching: the lower bound closes only when the adversaries "
                "match the moments exactly; declare a NormBall or SoftMoments)."
                if isinstance(uncertainty, Exact)
                else "; raise max_iter."
            ),
            ConvergenceWarning,
            stacklevel=3,
        )
    return OracleSolution(
        theta=best_theta,
        objective=upper,
        lower_bound=lower,
        gap=upper - lower,
        P=best_nu,
        Q=sums[2] / iteration,
        n_iter=iteration,
        converged=converged,
    )


class OracleProgram:
    """The learning problem of a game over a polytope without a linear description: no
    compiled program, but :meth:`solve` by mirror-prox with a certified gap
    (:func:`solve_oracle_game`)."""

    kind = "first-order (mirror-prox)"

    def __init__(
        self,
        loss: Any,
        polytope: Polytope,
        uncertainty: UncertaintySet,
        fmap: FeatureMap,
        X: np.ndarray,
        E: np.ndarray,
        sample_weight: np.ndarray | None,
        latex: str,
    ) -> None:
        self._args = (loss, polytope, uncertainty, fmap, X, E, sample_weight)
        self._latex = latex

    def solve(self, max_iter: int = 20_000, tol: float = 1e-3) -> OracleSolution:
        """Mirror-prox until the certified gap is at most ``tol * max(1, |objective|)``."""
        return solve_oracle_game(*self._args, max_iter=max_iter, tol=tol)

    def latex(self) -> str:
        """The saddle-point problem the solver works on, as LaTeX."""
        return self._latex

    def _unavailable(self, what):
        raise NotApplicableError(
            f"{self._args[1]!r} has no linear description, so this game has no {what}; "
            "solve() runs mirror-prox with a certified gap. Declare the polytope by "
            "Polytope.from_constraints or from_vertices for the compiled programs."
        )

    def dual(self) -> NoReturn:
        """Raises :class:`~advgame.exceptions.NotApplicableError`: no compiled dual."""
        self._unavailable("compiled dual program")

    def to_cvxpy(self) -> NoReturn:
        """Raises :class:`~advgame.exceptions.NotApplicableError`: no cvxpy problem."""
        self._unavailable("cvxpy problem")

    def describe(self) -> str:
        """What :meth:`solve` works on, in one line."""
        loss, polytope, uncertainty, fmap, X, E, _ = self._args
        return (
            f"oracle game over {polytope!r}: mirror-prox on theta ({fmap.n_params}) and each "
            f"sample's nu_i, mu_i ({E.shape[0]} x {E.shape[1]} each), projections and the "
            f"linear maximisation oracle of the polytope; {uncertainty!r}."
        )


def oracle_latex(loss: Any, polytope: Polytope, uncertainty: UncertaintySet) -> str:
    r"""The saddle-point problem :func:`solve_oracle_game` works on, as LaTeX (one display, then
    the ``where`` block of :func:`~advgame.compile.latex.latex_where`)."""
    regularizer = uncertainty.latex_regularizer()
    lines = [
        r"\min_{\theta,\ \nu_i \in \mathcal P}\ \max_{\mu_i \in \mathcal P}\quad & \sum_{i=1}^n "
        r"w_i \big(c + u^\top\nu_i + v^\top\mu_i + \nu_i^\top M\mu_i",
        r"& \qquad + g_i(\theta)^\top(\mu_i - \operatorname{emb}(y_i))\big)",
        *([rf"& \qquad + {regularizer}"] if regularizer else []),
    ]
    where = [
        *polytope_symbols(loss, polytope),
        r"\nu_i, \mu_i: \text{the predictor's and the adversary's points}",
        SAMPLE_WEIGHTS,
        *uncertainty.latex_where(),
    ]
    return (
        "% the saddle-point problem mirror-prox solves\n$$\n\\begin{aligned}\n"
        + "\\\\\n".join(lines)
        + "\n\\end{aligned}\n$$\n"
        + latex_where(where)
    )


def build_oracle_game(
    loss: Any,
    features: FeatureMap,
    uncertainty: UncertaintySet,
    polytope: Polytope,
    X: ArrayLike,
    y: ArrayLike,
    sample_weight: ArrayLike | None = None,
    alpha: float = 0.5,
) -> OracleProgram:
    """The :class:`OracleProgram` of a declaration whose polytope has no linear description
    (arguments as :func:`advgame.compile.polytope.build_polytope`)."""
    X = check_inputs(X)
    d = np.shape(loss.M)[0]
    E = polytope_outputs(polytope, y, d, X.shape[0])
    sample_weight = check_sample_weight(sample_weight, X.shape[0])
    fmap = fresh(features).fit(X, d)
    latex = oracle_latex(loss, polytope, uncertainty)
    return OracleProgram(loss, polytope, uncertainty, fmap, X, E, sample_weight, latex)
