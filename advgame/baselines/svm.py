r"""The baselines Fathony et al. (2018a) compare against (§7, Tables 2 and 4-6), each trained
exactly.

Every baseline is a hinge-loss SVM on scores that are linear in (explicit) features,

.. math::

    \min_{W, b, \xi \ge 0}\ \tfrac12 \|W\|_F^2 + \sum_s c_s\, \xi_s \quad\text{s.t.}\quad
    \xi_{s(r)} \ge 1 + g_r(W, b) \quad (r = 1..m),

where each hinge row ``r`` is a linear function ``g_r`` of the scores of one sample and the cost
``c_s`` is ``C`` times the weight of the sample owning slack ``s``.  The formulations differ only
in their hinge rows (and in a few equality or ordering rows), so each is a small function of the
labels, and all of them are one convex QP built with :class:`advgame.compile.Program` and solved
by cvxpy (Clarabel, the default) or HiGHS (the Hessian is the identity on ``W``).

Kernels are made explicit so that the models stay linear in features: for ``kernel='rbf'`` the
training Gram matrix ``K = U diag(s) U^T`` (:func:`advgame.features.psd_eigen`) gives training
features ``Z = U sqrt(s)`` (so ``Z Z^T = K``) and out-of-sample features
``z(x) = K(x, X_train) U / sqrt(s)``, which reproduce ``z(X_train) = Z``.  By the representer
theorem the optimal ``W`` lies in the span of the training features, so this is the kernel SVM
(up to the eigenmodes ``psd_eigen`` drops as numerically empty).  The price is density: the
hinge rows then hold about ``n (k - 1) n`` nonzeros, so exact RBF training is for a few hundred
samples: one Weston-Watkins fit on optdigits (10 classes) takes about 6 s of one core on 210
rows and 51 s on 420, growing like ``n^3``; thousands of rows need a dedicated decomposition
(SMO-type) solver.  :class:`OneVsAllAbstain` has one: ``backend='libsvm'`` solves its ``k``
independent binary SVMs with libsvm's SMO on the Gram matrix (about 1 s of one core on 3,934
optdigits rows).  The three multiclass SVMs have one: ``backend='dual'`` runs dual coordinate
ascent over each sample's block of multipliers (:mod:`advgame.solvers.svm_dual`),
certified by the duality gap, on the Gram matrix (RBF: 0.4-10 s of one core per optdigits fit on
3,934 rows at ``tol = 1e-4``, against minutes for the QP on a tenth of them) or on the weights
(linear: ``O(dk)`` per sample).  The linear Lee-Lin-Wahba SVM, on which that ascent needs
thousands of epochs, goes instead through a primal-dual interior-point method on the weights
(:mod:`advgame.solvers.svm_newton`, certified by the same duality gap: 0.4-0.7 s of one
core per optdigits fit on 3,147 rows at any ``C``, against about 19 s for the QP), with the QP's
free offsets; so does the linear :class:`OneVsAllAbstain` with ``backend='dual'``, its ``k``
binary SVMs side by side (:mod:`advgame.solvers.svm_newton`, certified by the duality gap:
0.3-0.8 s of one core per optdigits fit on 3,147 rows at any ``C``, against 5-9 s for the QP).
The ascent's offsets are regularised: the weights of a constant feature 1, as in LIBLINEAR and
in the adversarial models' ``[x; 1]`` (the QP's are not).

Linear programs with more than :data:`WORKING_SET_ROWS` hinge rows are solved by constraint
generation (:meth:`_ExactHingeModel.fit`): the QP on a working set of rows, adding the rows its
solution violates, until none is; the result is the full QP's optimum.  It pays off for relative-margin
models, where few rows are tight (Weston-Watkins on 3,934 optdigits rows: 18 s of one core
against 45 s for the full QP); :class:`LeeLinWahbaSVC`, whose absolute margins keep most rows
tight, always solves the full QP, and so does every RBF program (its dense rows make each
round nearly as costly as the full QP).

Models (Fathony et al. 2018a, §7):

* Table 2: :class:`WestonWatkinsSVC`, :class:`CrammerSingerSVC`, :class:`LeeLinWahbaSVC`;
* Tables 4-5: :class:`AllThresholdSVOR` (AT / SVORIM), :class:`ImmediateThresholdSVOR`
  (IT / SVOREX) of Chu & Keerthi (2005);
* Table 6: :class:`OneVsAllAbstain`, :class:`CrammerSingerAbstain` with the threshold rules of
  Ramaswamy et al. (2018).

References
----------
Weston, J. and Watkins, C. (1999). Support vector machines for multi-class pattern recognition.
ESANN.
Crammer, K. and Singer, Y. (2001). On the algorithmic implementation of multiclass kernel-based
vector machines. JMLR 2.
Lee, Y., Lin, Y. and Wahba, G. (2004). Multicategory support vector machines. JASA 99.
Chu, W. and Keerthi, S. S. (2005). New approaches to support vector ordinal regression. ICML.
Ramaswamy, H. G., Tewari, A. and Agarwal, S. (2018). Consistent algorithms for multiclass
classification with an abstain option. Electronic Journal of Statistics 12.
"""

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.svm import SVC
from sklearn.utils.validation import check_is_fitted

from .._estimator.base import record_convergence
from .._estimator.inputs import check_classification_fit, validate_numeric
from .._validation import check_positive
from ..compile import Program
from ..exceptions import SolverError
from ..features import KernelFeatures, psd_eigen
from ..solvers.svm_dual import fit_hinge_dual
from ..solvers.svm_newton import fit_llw_linear, fit_ova_linear

__all__ = [
    "WestonWatkinsSVC",
    "CrammerSingerSVC",
    "LeeLinWahbaSVC",
    "AllThresholdSVOR",
    "ImmediateThresholdSVOR",
    "OneVsAllAbstain",
    "CrammerSingerAbstain",
    "one_vs_all_answers",
    "top_two_gap_answers",
]

_KERNELS = ("linear", "rbf")
_BACKENDS = ("cvxpy", "highs")
#: HiGHS feasibility tolerances tried in turn: its active-set QP solver can finish a few 1e-9
#: above the tightest one (and then reports a solve error), rarely above its own default 1e-7.
HIGHS_TOLERANCES = (1e-9, 1e-7)
#: Stopping tolerance of libsvm's SMO (its KKT-violation gap; scikit-learn's default is 1e-3)
#: for ``OneVsAllAbstain(backend='libsvm')``.
LIBSVM_TOL = 1e-8
#: The certified relative duality gap of ``backend='dual'`` (that of the adversarial models'
#: default ``tol``).
DUAL_TOL = 1e-4
#: Programs with more hinge rows than this are solved on a working set of rows (constraint
#: generation, see :meth:`_ExactHingeModel.fit`); it is also the size of the first working set.
WORKING_SET_ROWS = 3000
#: The first working set of the multiclass SVMs: the hinge rows within ``WARM_MARGIN`` of
#: their hinge after ``WARM_EPOCHS`` epochs of dual ascent (see ``_first_working_set``).
WARM_EPOCHS, WARM_MARGIN = 50, 0.5
#: A hinge row outside the working set is added when the working set's solution violates it by
#: more than this (the margin is 1); none left: the solution is optimal for every row.
WORKING_SET_TOL = 1e-7


# ------------------------------------------------------------------------- program pieces
def _rows(sample, index, coef, width, Z=None):
    """Sparse rows ``coef_r e_{index_r}`` over ``width`` columns; with ``Z``, the rows
    ``coef_r z_{sample_r} ⊗ e_{index_r}`` acting on ``W.ravel()`` for ``W`` of shape ``(p, width)``
    (so row ``r`` times ``W.ravel()`` is ``coef_r * z_{sample_r} . W[:, index_r]``)."""
    m = sample.size
    if Z is None:
        return sp.csr_matrix((coef, (np.arange(m), index)), shape=(m, width))
    p = Z.shape[1]
    data = coef[:, None] * Z[sample]
    columns = np.arange(p)[None, :] * width + index[:, None]
    rows = np.repeat(np.arange(m), p)
    return sp.csr_matrix((data.ravel(), (rows, columns.ravel())), shape=(m, p * width))


def _hinge_program(name, Z, width, A_W, slack, slack_cost, A_b=None, offsets="b", margin=1.0):
    r"""The shared QP: ``min ½||W||² + Σ_s c_s ξ_s`` s.t. ``ξ_{slack_r} >= m_r + A_W W + A_b b``.

    ``W`` has shape ``(p, width)`` (variable block ``'W'``, row-major), ``b`` has
    ``A_b.shape[1]`` entries (block ``offsets``; none when ``A_b`` is None) and ``ξ >= 0`` one
    entry per ``slack_cost`` (block ``'slack'``).  The quadratic factor is the identity on ``W``
    only: offsets and slacks are not regularised.  ``margin`` is the hinge's ``m_r``: 1 for
    every row by default, or one value per row.
    """
    program = Program(name)
    n_weights = Z.shape[1] * width
    W = program.add_variables("W", n_weights)
    program.add_quadratic(W, sp.identity(n_weights, format="csr"))
    xi = program.add_variables("slack", slack_cost.size, lower=0.0, cost=slack_cost)
    m = slack.size
    pick = sp.csr_matrix((np.ones(m), (np.arange(m), slack)), shape=(m, slack_cost.size))
    terms = [(xi, pick), (W, -A_W)]
    if A_b is not None:
        terms.append((program.add_variables(offsets, A_b.shape[1]), -A_b))
    program.add_rows("hinge", terms, lower=margin)
    return program


def _solve(program, backend):
    """Solve with cvxpy (Clarabel), or with HiGHS at the tolerances of ``HIGHS_TOLERANCES``."""
    if backend == "cvxpy":
        return program.solve("cvxpy")
    error = None
    for tolerance in HIGHS_TOLERANCES:
        try:
            return program.solve("highs", tolerance=tolerance)
        except SolverError as exc:
            error = exc
    raise error


class _Hinges:
    """The rows of a hinge program (:func:`_hinge_program`): ``A_W`` and ``A_b`` (None: no
    offsets, block ``offsets``), the slack of each row, the slack costs, the margin and the
    number of columns ``width`` of ``W``."""

    def __init__(self, A_W, A_b, slack, costs, width, offsets="b", margin=1.0):
        self.A_W, self.A_b, self.slack, self.costs = A_W.tocsr(), A_b, slack, costs
        if A_b is not None:
            self.A_b = A_b.tocsr()
        self.width, self.offsets, self.margin = width, offsets, margin

    def violation(self, program, x, rows):
        """``margin + A_W W + A_b b - xi_slack`` of every row at the solution ``x`` of the QP
        on the hinge rows ``rows`` (:meth:`_ExactHingeModel._assemble`; a slack it does not
        hold is 0 at the optimum: nothing pushes it up)."""
        xi = np.zeros(self.costs.size)
        xi[np.unique(self.slack[rows])] = x[program.variables["slack"]]
        g = self.margin + self.A_W @ x[program.variables["W"]] - xi[self.slack]
        if self.A_b is not None:
            g += self.A_b @ x[program.variables[self.offsets]]
        return g


def _slack_costs(sample, slack, cost):
    """``c_s``: the cost of the sample owning each slack (every slack owns at least one row)."""
    owner = np.empty(slack.max() + 1, dtype=np.intp)
    owner[slack] = sample
    return cost[owner]


def _other_labels(y, k):
    """All pairs ``(i, j)`` with ``j != y_i``, sample-major: ``n (k - 1)`` of them."""
    return np.nonzero(np.arange(k)[None, :] != y[:, None])


# ----------------------------------------------------------------------------- estimators
class _ExactHingeModel(ClassifierMixin, BaseEstimator):
    """Shared fit: input checks, explicit kernel features, one QP through ``Program``.

    Subclasses implement ``_hinges_of(Z, y_index, cost)`` (the hinge rows, :class:`_Hinges`)
    and ``_extra_rows(program, Z)``, or the whole ``_program(Z, y_index, cost)``, and
    ``_read(program, x)``.
    """

    _backends = _BACKENDS
    #: The kernels whose large programs go through a working set of hinge rows (see ``fit``):
    #: not ``'rbf'``, whose dense eigen-feature rows make each round nearly as costly as the
    #: full QP (Weston-Watkins on 420 optdigits rows: 126 s of one core against 51 s).
    _working_set_kernels = ("linear",)

    def _check_params(self):
        check_positive("C", self.C)
        if not isinstance(self.kernel, str) or self.kernel not in _KERNELS:
            raise ValueError(f"kernel must be one of {_KERNELS}; got {self.kernel!r}.")
        if self.backend not in self._backends:
            raise ValueError(f"backend must be one of {self._backends}; got {self.backend!r}.")

    def fit(self, X, y, sample_weight=None):
        """Solve the training QP exactly on ``X`` (n, d) and labels ``y`` (n,).

        ``sample_weight`` multiplies ``C`` per sample (so a weight of 2 equals a duplicate).

        With more than :data:`WORKING_SET_ROWS` hinge rows (linear kernel; not for
        :class:`LeeLinWahbaSVC`) the QP is solved by constraint
        generation: on a working set of rows (first a seeded random choice), adding the rows
        its solution violates by more than :data:`WORKING_SET_TOL` (the most violated first,
        at most doubling the set) until none is.  Each working-set QP is a relaxation of the
        full one, so its solution, once feasible for every row, is the full QP's optimum (to
        that tolerance); ``program_`` is then the last working-set QP.
        """
        self._check_params()
        X, y_index, sample_weight = check_classification_fit(self, X, y, sample_weight)
        Z = self._fit_features(X)
        if not hasattr(self, "_hinges_of"):  # a subclass building its whole program itself
            self.program_ = self._program(Z, y_index, self.C * sample_weight)
            solution = _solve(self.program_, self.backend)
            self.n_rounds_ = 1
            self.objective_ = solution.objective
            self._read(self.program_, solution.x)
            self._record_optimal()
            return self
        hinges = self._hinges_of(Z, y_index, self.C * sample_weight)
        active = np.ones(hinges.slack.size, dtype=bool)
        if self.kernel in self._working_set_kernels and active.size > WORKING_SET_ROWS:
            active = self._first_working_set(Z, y_index, self.C * sample_weight, hinges)
        self.n_rounds_ = 0
        while True:
            self.program_ = self._assemble(Z, hinges, np.flatnonzero(active))
            solution = _solve(self.program_, self.backend)
            self.n_rounds_ += 1
            if active.all():
                break
            g = hinges.violation(self.program_, solution.x, np.flatnonzero(active))
            violated = np.flatnonzero(~active & (g > WORKING_SET_TOL))
            if violated.size == 0:
                break
            order = np.argsort(-g[violated], kind="stable")
            active[violated[order[: max(WORKING_SET_ROWS, int(active.sum()))]]] = True
        self.objective_ = solution.objective
        self._read(self.program_, solution.x)
        self._record_optimal()
        return self

    def _record_optimal(self):
        """``gap_ = 0``, ``converged_ = 'optimal'``: the training QP is an exact program, solved
        to optimality (its backend raises :class:`SolverError` otherwise)."""
        rounds = f" in {self.n_rounds_} working-set rounds" if self.n_rounds_ > 1 else ""
        reason = f"{self.backend} solved the training QP{rounds}"
        record_convergence(self, 0.0, DUAL_TOL, self.objective_, exact=True, reason=reason)

    def _first_working_set(self, Z, y, cost, hinges):
        """The first working set (a mask of the hinge rows): a seeded random choice of
        :data:`WORKING_SET_ROWS` rows."""
        active = np.zeros(hinges.slack.size, dtype=bool)
        active[np.random.default_rng(0).choice(active.size, WORKING_SET_ROWS, replace=False)] = True
        return active

    def _program(self, Z, y, cost):
        """The full training QP (every hinge row)."""
        hinges = self._hinges_of(Z, y, cost)
        return self._assemble(Z, hinges, np.arange(hinges.slack.size))

    def _assemble(self, Z, hinges, rows):
        """The QP on the hinge rows ``rows`` and their slacks (the model's other rows kept; a
        slack no row of ``rows`` holds would be 0, and is left out)."""
        used, slack = np.unique(hinges.slack[rows], return_inverse=True)
        A_b = None if hinges.A_b is None else hinges.A_b[rows]
        program = _hinge_program(
            type(self).__name__,
            Z,
            hinges.width,
            hinges.A_W[rows],
            slack,
            hinges.costs[used],
            A_b,
            hinges.offsets,
            hinges.margin,
        )
        self._extra_rows(program, Z)
        return program

    def _extra_rows(self, program, Z):
        """Rows besides the hinges (equalities, orderings); none by default."""

    def _fit_features(self, X):
        """Training features: ``X`` itself, or ``U sqrt(s)`` from the RBF Gram matrix."""
        if self.kernel == "linear":
            self.kernel_map_ = None
            return X
        self.kernel_map_ = KernelFeatures("rbf", gamma=self.gamma).fit(X, 1)
        U, s = psd_eigen(self.kernel_map_.gram(X))
        # z(x) = K(x, X_train) U / sqrt(s): on the training inputs this is U sqrt(s).
        self.eigen_map_ = U / np.sqrt(s)
        return U * np.sqrt(s)

    def _features(self, X):
        check_is_fitted(self)
        X = validate_numeric(self, X, reset=False)
        if self.kernel_map_ is None:
            return X
        return self.kernel_map_.gram(X) @ self.eigen_map_

    def decision_function(self, X):
        """Class scores, shape ``(n_samples, n_classes)``; for two classes ``f_1 - f_0``."""
        F = self._scores(X)
        return F[:, 1] - F[:, 0] if self.classes_.size == 2 else F


class _MulticlassHinge(_ExactHingeModel):
    r"""Scores ``f_j(x) = w_j . z(x) + b_j``; subclasses give the hinge rows.

    ``_hinges(y, k)`` returns ``(sample, slack, terms)``: hinge row ``r`` reads
    ``ξ_{slack_r} >= 1 + Σ_{(c, a) in terms} a_r f_{c_r}(x_{sample_r})``.
    """

    def __init__(self, C=1.0, kernel="linear", gamma=None, fit_intercept=True, backend="cvxpy"):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.fit_intercept = fit_intercept
        self.backend = backend

    _backends = (*_BACKENDS, "dual")
    #: The model of :func:`advgame.solvers.svm_dual.fit_hinge_dual` (``backend='dual'``;
    #: ``'llw'`` with the linear kernel: :func:`advgame.solvers.svm_newton.fit_llw_linear`).
    _dual_kind = None

    #: The certified interior-point method of ``backend='dual'`` with the linear kernel (free
    #: offsets; ``(X, y, cost, **options) -> (W, b, objective, gap, steps)``), a static method
    #: of the subclasses that have one; None: the dual ascent serves.
    _interior_point = None

    def fit(self, X, y, sample_weight=None):
        """Solve the training program on ``X`` (n, d) and labels ``y`` (n,); see ``backend``."""
        if self.backend != "dual":
            self.dual_coef_ = None
            return super().fit(X, y, sample_weight)
        self._check_params()
        X, y_index, sample_weight = check_classification_fit(self, X, y, sample_weight)
        linear = self.kernel == "linear"
        self.program_, self.n_rounds_ = None, 0
        if linear and self._interior_point is not None:
            W, b, self.objective_, self.gap_, self.n_iter_ = self._interior_point(
                X,
                y_index,
                self.C * sample_weight,
                tol=DUAL_TOL,
                n_classes=self.classes_.size,
                fit_intercept=self.fit_intercept,
            )
            self._check_certified("the interior-point method", "steps")
            self.kernel_map_, self.dual_coef_, self.coef_, self.intercept_ = None, None, W.T, b
            return self
        # offsets as the weights of a constant feature 1 (regularised, as in LIBLINEAR): the
        # Gram matrix gains 1 everywhere
        if linear:
            self.kernel_map_ = None
            M = np.hstack([X, np.ones((X.shape[0], 1))]) if self.fit_intercept else X
        else:
            M = self._fit_kernel_map(X) + (1.0 if self.fit_intercept else 0.0)
        B, self.objective_, self.gap_, self.n_iter_ = fit_hinge_dual(
            M, y_index, self.C * sample_weight, self._dual_kind, linear=linear, tol=DUAL_TOL
        )
        self._check_certified("dual coordinate ascent", "epochs")
        self.intercept_ = B.sum(axis=0) if self.fit_intercept else np.zeros(B.shape[1])
        if linear:
            self.dual_coef_, self.coef_ = None, (B.T @ X)
        else:
            self.dual_coef_, self.coef_ = B, None
        return self

    def _check_certified(self, method, unit):
        """Record ``gap_`` (``converged_ = 'certified'``); raise :class:`SolverError` unless it
        is within :data:`DUAL_TOL` of ``objective_`` (relative, at least 1)."""
        reason = f"{method}: {self.n_iter_} {unit}"
        record_convergence(self, self.gap_, DUAL_TOL, self.objective_, reason=reason)
        relative = self.gap_ / max(1.0, abs(self.objective_))
        if not relative <= DUAL_TOL:
            raise SolverError(
                f"{type(self).__name__}: {method} stopped at the relative gap {relative:.1e} "
                f"after {self.n_iter_} {unit} (asked: {DUAL_TOL:g})."
            )

    def _first_working_set(self, Z, y, cost, hinges):
        """The hinge rows within :data:`WARM_MARGIN` of their hinge at a rough solution:
        :data:`WARM_EPOCHS` epochs of dual ascent (:func:`fit_hinge_dual`, offsets
        regularised).  Few rows are active at the optimum (Weston-Watkins on 3,934 optdigits
        rows, ``C = 0.25``: 511 of 35,397), and the rough solution names most of them.  A model
        without a dual ascent (one-vs-all) starts from the random choice."""
        if self._dual_kind is None:
            return super()._first_working_set(Z, y, cost, hinges)
        M = np.hstack([Z, np.ones((Z.shape[0], 1))])
        B = fit_hinge_dual(M, y, cost, self._dual_kind, linear=True, max_epochs=WARM_EPOCHS)[0]
        W = M.T @ B  # (p + 1, k): the weights, then the offsets
        g = hinges.margin + hinges.A_W @ W[:-1].ravel()
        if hinges.A_b is not None:
            g += hinges.A_b @ W[-1]
        return g > -WARM_MARGIN

    def _fit_kernel_map(self, X):
        """The Gram matrix of the training inputs (``kernel_map_`` fitted on them)."""
        options = {"gamma": self.gamma} if self.kernel == "rbf" else {}
        self.kernel_map_ = KernelFeatures(self.kernel, **options).fit(X, 1)
        return self.kernel_map_.gram(X)

    #: Add ``sum_j b_j = 0``: relative margins (WW, CS) see only differences of offsets, so this
    #: fixes the one free direction of ``b`` (unregularised) without changing the model; for
    #: LLW it is part of the model.
    _centred_offsets = True

    def _hinges_of(self, Z, y, cost):
        k = self.classes_.size
        sample, slack, terms = self._hinges(y, k)
        A_W = sum(_rows(sample, c, a, k, Z) for c, a in terms)
        A_b = sum(_rows(sample, c, a, k) for c, a in terms) if self.fit_intercept else None
        return _Hinges(A_W, A_b, slack, _slack_costs(sample, slack, cost), k)

    def _extra_rows(self, program, Z):
        if self.fit_intercept and self._centred_offsets:
            ones = sp.csr_matrix(np.ones((1, self.classes_.size)))
            program.add_rows("sum_to_zero_b", [(program.variables["b"], ones)], lower=0, upper=0)

    def _read(self, program, x):
        k = self.classes_.size
        self.coef_ = x[program.variables["W"]].reshape(-1, k).T.copy()
        b = program.variables.get("b")
        self.intercept_ = np.zeros(k) if b is None else x[b].copy()

    def _scores(self, X):
        if getattr(self, "dual_coef_", None) is None:
            return self._features(X) @ self.coef_.T + self.intercept_
        check_is_fitted(self)
        X = validate_numeric(self, X, reset=False)
        return self.kernel_map_.gram(X) @ self.dual_coef_ + self.intercept_

    def predict(self, X):
        """The class with the largest score."""
        F = self._scores(X)  # checks fitted before classes_ is read
        return self.classes_[np.argmax(F, axis=1)]


class WestonWatkinsSVC(_MulticlassHinge):
    r"""Weston-Watkins multiclass SVM, trained exactly (Fathony et al. 2018a, Table 2, "WW").

    .. math::

        \min_{W, b}\ \tfrac12 \sum_j \|w_j\|^2
        + C \sum_i \sum_{j \ne y_i} \big[1 - (w_{y_i} - w_j) \cdot z_i - (b_{y_i} - b_j)\big]_+

    one slack per pair ``(i, j != y_i)`` (Weston & Watkins, 1999, with margin 1; their margin 2
    is the same model with ``C`` doubled and the scores doubled).  Predicts the argmax score.

    Parameters
    ----------
    C : float, default=1.0
        Cost of the hinge slacks (per sample, times ``sample_weight``).
    kernel : {'linear', 'rbf'}, default='linear'
        ``'rbf'`` uses the explicit eigen feature map of the training Gram matrix.
    gamma : float or None, default=None
        RBF width ``exp(-gamma ||x - x'||^2)``; None means ``1 / n_features``.
    fit_intercept : bool, default=True
        Per-class offsets ``b``: unregularised (the QP backends, and the linear
        :class:`LeeLinWahbaSVC`'s interior-point method) or regularised (the ascent of
        ``'dual'``).
    backend : {'cvxpy', 'highs', 'dual'}, default='cvxpy'
        Solver of the QP (:meth:`advgame.compile.Program.solve`): cvxpy with Clarabel (interior
        point, robust), or HiGHS's active-set QP solver, which is fast on small generic problems
        but can cycle without terminating on degenerate ones (e.g. separable data, where many
        hinge rows are tight with zero slack) and stalls on the ill-conditioned RBF eigen
        features (highspy 1.15).  ``'dual'``: dual coordinate ascent
        (:func:`advgame.solvers.svm_dual.fit_hinge_dual`) on the Gram matrix (RBF; no
        eigen features, thousands of rows in seconds; the scores are then ``K(x, X_train)
        dual_coef_ + intercept_``) or on the weights (linear; for the linear
        :class:`LeeLinWahbaSVC` a primal-dual interior-point method instead,
        :func:`advgame.solvers.svm_newton.fit_llw_linear`), certified to the relative
        duality gap :data:`DUAL_TOL` (``gap_``; :class:`~advgame.exceptions.SolverError`
        when not reached); with ``fit_intercept`` the ascent's offsets are regularised, the
        weights of a constant feature 1 (as in LIBLINEAR).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_classes, n_features_z)
        ``w_j`` in feature space (the inputs for ``'linear'``, the eigen map for ``'rbf'``; None
        for ``backend='dual'`` with ``'rbf'``).
    intercept_ : ndarray of shape (n_classes,)
    objective_ : float
        The optimal training objective.
    gap_ : float
        Its certified duality gap (``backend='dual'``; 0 for the QP solvers' optimum).
    converged_ : {'optimal', 'certified'}
        ``'optimal'`` for the QP backends (an exact program), ``'certified'`` for
        ``backend='dual'`` (a fit whose gap exceeds :data:`DUAL_TOL` raises instead).
    stop_reason_ : str
        Which solver stopped, and after how many steps.
    n_iter_ : int
        ``backend='dual'`` only: the epochs of the dual ascent, or the interior-point steps
        (the linear :class:`LeeLinWahbaSVC`).
    dual_coef_ : ndarray of shape (n_train, n_classes) or None
        ``backend='dual'`` with ``kernel='rbf'``: the expansion ``F(x) = K(x, X_train)
        dual_coef_ + intercept_`` (None otherwise).
    program_ : Program
        The solved QP (``program_.describe()``, ``program_.to_cvxpy()``; None for
        ``backend='dual'``).
    """

    _dual_kind = "ww"

    def _hinges(self, y, k):
        i, j = _other_labels(y, k)
        return i, np.arange(i.size), [(j, np.ones(i.size)), (y[i], -np.ones(i.size))]


class CrammerSingerSVC(_MulticlassHinge):
    r"""Crammer-Singer multiclass SVM, trained exactly (Fathony et al. 2018a, Table 2, "CS").

    .. math::

        \min_{W, b}\ \tfrac12 \sum_j \|w_j\|^2
        + C \sum_i \max_{j \ne y_i} \big[1 - (w_{y_i} - w_j) \cdot z_i - (b_{y_i} - b_j)\big]_+

    one slack per sample, bounded below by every ``j != y_i`` (Crammer & Singer, 2001, with
    ``C = 1 / beta``; they have no offsets, hence ``fit_intercept=False`` by default).  For two
    classes this is the binary hinge SVM with ``2 C`` and ``w = w_1 - w_0``.  Predicts the argmax.

    Parameters and attributes are those of :class:`WestonWatkinsSVC`.
    """

    def __init__(self, C=1.0, kernel="linear", gamma=None, fit_intercept=False, backend="cvxpy"):
        super().__init__(C, kernel, gamma, fit_intercept, backend)

    _dual_kind = "cs"

    def _hinges(self, y, k):
        i, j = _other_labels(y, k)
        return i, i, [(j, np.ones(i.size)), (y[i], -np.ones(i.size))]


class LeeLinWahbaSVC(_MulticlassHinge):
    r"""Lee-Lin-Wahba multiclass SVM (absolute margins), trained exactly (Fathony et al. 2018a, Table 2, "LLW").

    .. math::

        \min_{W, b}\ \tfrac12 \sum_j \|w_j\|^2 + C \sum_i \sum_{j \ne y_i} [1 + f_j(x_i)]_+
        \quad\text{s.t.}\quad \sum_j f_j(x) = 0\ \ \forall x
        \iff \sum_j w_j = 0,\ \sum_j b_j = 0,

    with ``f_j(x) = w_j . z(x) + b_j`` (Lee, Lin & Wahba, 2004; their ``[f_j + 1/(k-1)]_+`` is
    the same model with scores scaled by ``k - 1`` and ``C`` by ``k - 1``).  The only Fisher
    consistent one of the three SVMs (Fathony et al. 2018a, §7.1).  Predicts the argmax.

    Parameters and attributes are those of :class:`WestonWatkinsSVC`.  With
    ``backend='dual'`` and the linear kernel the program above (free offsets, as for the QP
    backends) is solved by a primal-dual interior-point method on the weights
    (:func:`advgame.solvers.svm_newton.fit_llw_linear`), certified by its duality gap;
    the dual coordinate ascent would need thousands of epochs at large ``C``.
    """

    #: Absolute margins keep most hinge rows tight: a working set would grow to the full QP
    #: (3,934 optdigits rows: 86 s of one core in 9 rounds against 17 s).
    _working_set_kernels = ()
    _dual_kind = "llw"

    @staticmethod
    def _interior_point(X, y, cost, **options):
        # 10-20 steps at any C on the benchmark's data, where the ascent needs thousands of
        # epochs
        return fit_llw_linear(X, y, cost, **options)

    def _hinges(self, y, k):
        i, j = _other_labels(y, k)
        return i, np.arange(i.size), [(j, np.ones(i.size))]

    def _extra_rows(self, program, Z):
        super()._extra_rows(program, Z)  # sum_j b_j = 0
        # sum_j w_j = 0: the rows of W (p, k) sum to zero.
        ones = sp.csr_matrix(np.ones((1, self.classes_.size)))
        W = sp.kron(sp.identity(Z.shape[1]), ones, format="csr")
        program.add_rows("sum_to_zero_W", [(program.variables["W"], W)], lower=0.0, upper=0.0)


# ------------------------------------------------------------------------------- ordinal
class _ThresholdHinge(_ExactHingeModel):
    r"""One direction ``w`` and thresholds ``theta_1 <= ... <= theta_{k-1}`` (Chu & Keerthi, 2005).

    Classes are ordered as ``classes_`` (sorted labels).  Threshold ``t`` separates classes
    ``t`` and ``t + 1``: a sample of class ``y`` wants ``u = w . z(x)`` at least 1 above the
    thresholds ``t < y`` and at least 1 below those ``t >= y``; ``_immediate`` keeps only the two
    thresholds adjacent to ``y``.
    """

    _immediate = False

    def __init__(self, C=1.0, kernel="linear", gamma=None, backend="cvxpy"):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.backend = backend

    def _hinges_of(self, Z, y, cost):
        k = self.classes_.size
        i, t = np.divmod(np.arange(y.size * (k - 1)), k - 1)
        if self._immediate:
            keep = (t == y[i] - 1) | (t == y[i])
            i, t = i[keep], t[keep]
        side = np.where(t < y[i], 1.0, -1.0)  # +1: u should exceed theta_t
        # xi >= 1 - side (u_i - theta_t) = 1 + (-side) w . z_i + side theta_t
        A_W = _rows(i, np.zeros_like(t), -side, 1, Z)
        A_theta = _rows(i, t, side, k - 1)
        return _Hinges(A_W, A_theta, np.arange(i.size), cost[i], 1, "thresholds")

    def _extra_rows(self, program, Z):
        k = self.classes_.size
        if k > 2:
            # theta_{t+1} - theta_t >= 0.  Needed for IT (SVOREX); for AT (SVORIM) the optimum
            # is ordered anyway (Chu & Keerthi, 2005, Lemma 1), and the rows only pick an
            # ordered optimum when the thresholds are not unique.
            order = sp.diags([-np.ones(k - 2), np.ones(k - 2)], [0, 1], shape=(k - 2, k - 1))
            program.add_rows("ordered", [(program.variables["thresholds"], order)], lower=0.0)

    def _read(self, program, x):
        self.coef_ = x[program.variables["W"]].copy()
        self.thresholds_ = x[program.variables["thresholds"]].copy()

    def _scores(self, X):
        """Ordinal potentials ``f_j = Σ_{t < j} (u - theta_t)``: concave in ``j`` when the
        thresholds are ordered, so their argmax is the number of thresholds below ``u``."""
        excess = (self._features(X) @ self.coef_)[:, None] - self.thresholds_[None, :]
        return np.hstack([np.zeros((excess.shape[0], 1)), np.cumsum(excess, axis=1)])

    def predict(self, X):
        """The class whose index is the number of thresholds below ``w . z(x)``."""
        u = self._features(X) @ self.coef_
        return self.classes_[np.sum(self.thresholds_[None, :] < u[:, None], axis=1)]


_ORDINAL_DOC = """
    Parameters
    ----------
    C : float, default=1.0
        Cost of the hinge slacks (per sample, times ``sample_weight``).
    kernel : {'linear', 'rbf'}, default='linear'
        ``'rbf'`` uses the explicit eigen feature map of the training Gram matrix.
    gamma : float or None, default=None
        RBF width; None means ``1 / n_features``.
    backend : {'cvxpy', 'highs'}, default='cvxpy'
        As for :class:`WestonWatkinsSVC`.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted labels: the ordinal order.
    coef_ : ndarray of shape (n_features_z,)
        The direction ``w``.
    thresholds_ : ndarray of shape (n_classes - 1,)
        ``theta_1 <= ... <= theta_{k-1}``.
    objective_ : float
    program_ : Program

    Notes
    -----
    ``decision_function`` gives the ordinal potentials ``f_j(x) = Σ_{t < j} (w . z(x) - theta_t)``
    (for two classes ``w . z(x) - theta_1``), whose argmax is ``predict``.
    """


class AllThresholdSVOR(_ThresholdHinge):
    r"""All-threshold support vector ordinal regression (SVORIM), trained exactly.

    Fathony et al. (2018a), Tables 4-5 ("AT", "SVORIM"; Chu & Keerthi, 2005, implicit constraints):

    .. math::

        \min_{w, \theta}\ \tfrac12 \|w\|^2 + C \sum_i \Big(\sum_{t < y_i}
        [1 - (w \cdot z_i - \theta_t)]_+ + \sum_{t \ge y_i} [1 + (w \cdot z_i - \theta_t)]_+\Big)

    a hinge for every threshold on its correct side (classes ``0..k-1``, thresholds
    ``t = 0..k-2``).
    """

    __doc__ += _ORDINAL_DOC


class ImmediateThresholdSVOR(_ThresholdHinge):
    r"""Immediate-threshold support vector ordinal regression (SVOREX), trained exactly.

    Fathony et al. (2018a), Tables 4-5 ("IT", "SVOREX"; Chu & Keerthi, 2005, explicit constraints):

    .. math::

        \min_{w, \theta}\ \tfrac12 \|w\|^2 + C \sum_i \Big([1 - (w \cdot z_i - \theta_{y_i - 1})]_+
        + [1 + (w \cdot z_i - \theta_{y_i})]_+\Big)
        \quad\text{s.t.}\quad \theta_1 \le \dots \le \theta_{k-1},

    only the two thresholds adjacent to the true class (one for the extreme classes).
    """

    __doc__ += _ORDINAL_DOC
    _immediate = True


# ----------------------------------------------------------------------------- abstention
def one_vs_all_answers(F, threshold=0.0):
    """Ramaswamy et al. (2018) OVA rule: answer ``argmax_j f_j`` iff ``max_j f_j >= threshold``."""
    return F.max(axis=1) >= threshold


def top_two_gap_answers(F, threshold=0.5):
    """Ramaswamy et al. (2018) Crammer-Singer rule: answer iff ``f_(1) - f_(2) >= threshold``
    (largest minus second-largest score)."""
    top = -np.partition(-F, 1, axis=1)[:, :2]
    return top[:, 0] - top[:, 1] >= threshold


def _abstaining_init(fit_intercept, threshold):
    """The ``__init__`` of an abstaining SVM: its multiclass SVM's parameters, with these
    defaults, then the rule's ``threshold`` and ``abstain_label`` (scikit-learn reads the
    parameters from this signature)."""

    def __init__(
        self,
        C=1.0,
        kernel="linear",
        gamma=None,
        fit_intercept=fit_intercept,
        backend="cvxpy",
        threshold=threshold,
        abstain_label=-1,
    ):
        _MulticlassHinge.__init__(self, C, kernel, gamma, fit_intercept, backend)
        self.threshold = threshold
        self.abstain_label = abstain_label

    return __init__


class _Abstains:
    """``predict``: the argmax class where ``_answers(F)`` holds, else ``abstain_label``."""

    def _check_params(self):
        super()._check_params()
        if not isinstance(self.threshold, numbers.Real) or not np.isfinite(self.threshold):
            raise ValueError(f"threshold must be a finite number; got {self.threshold!r}.")

    def predict(self, X):
        """A class label, or ``abstain_label`` where the threshold rule abstains."""
        F = self._scores(X)
        out = np.empty(F.shape[0], dtype=object)
        answered = self._answers(F, self.threshold)
        out[answered] = self.classes_[np.argmax(F[answered], axis=1)]
        out[~answered] = self.abstain_label
        # Same output type as AdversarialClassifier(loss='abstain').predict.
        try:
            return out.astype(np.result_type(self.classes_, np.asarray(self.abstain_label)))
        except (TypeError, ValueError):
            return out


class OneVsAllAbstain(_Abstains, _MulticlassHinge):
    r"""One-vs-all hinge SVMs with the abstain rule of Ramaswamy et al. (2018) (Fathony et al. 2018a, Table 6).

    Training solves the ``k`` binary SVMs (class ``j`` against the rest) as one QP,

    .. math::

        \min_{W, b}\ \tfrac12 \sum_j \|w_j\|^2 + C \sum_i \sum_j [1 - s_{ij} f_j(x_i)]_+,
        \qquad s_{ij} = \pm 1 \ (y_i = j \text{ or not}),

    and ``predict`` answers ``argmax_j f_j(x)`` if ``max_j f_j(x) >= threshold``, else returns
    ``abstain_label`` (the OVA predictor of Ramaswamy et al., consistent for ``alpha = 1/2``
    with ``threshold`` in ``(-1, 1)``; Fathony et al. 2018a use the default ``threshold = 0``).

    Parameters
    ----------
    C, kernel, gamma, fit_intercept : as for :class:`WestonWatkinsSVC`.
    backend : {'cvxpy', 'highs', 'libsvm'}, default='cvxpy'
        ``'cvxpy'``, ``'highs'``: the QP above, as for :class:`WestonWatkinsSVC`.
        ``'libsvm'``: the same program as its ``k`` separate binary SVMs (the objective is a
        sum over ``j`` of independent terms), each solved by libsvm's SMO on the Gram matrix
        (scikit-learn's ``SVC(kernel='precomputed')``, stopping tolerance
        :data:`LIBSVM_TOL`); much faster for kernels (no eigen features).  Needs
        ``fit_intercept=True``; the scores are then ``K(x, X_train) dual_coef_ + intercept_``
        (``dual_coef_`` of shape ``(n_train, k)``), and ``coef_`` (the linear kernel only) is
        ``dual_coef_^T X_train``; ``gap_`` is the duality gap of libsvm's multipliers
        (``converged_ = 'certified'`` within :data:`DUAL_TOL`).  On a low-rank Gram matrix (the linear kernel with few
        features) SMO can need minutes to reach that tolerance: use the QP backends there.
        ``'dual'`` (the linear kernel only; use ``'libsvm'`` for kernels): the same program
        (free offsets, or none without ``fit_intercept``) by a primal-dual interior-point
        method on the weights (:func:`advgame.solvers.svm_newton.fit_ova_linear`),
        certified by the duality gap to :data:`DUAL_TOL` (``gap_``;
        :class:`~advgame.exceptions.SolverError` otherwise, ``n_iter_`` its steps): 0.3-0.8 s
        of one core per fit on 3,147 optdigits rows, against 5-9 s for the QP.
    threshold : float, default=0.0
        ``tau`` of the rule above.
    abstain_label : default=-1
        What ``predict`` returns when abstaining (as ``AdversarialClassifier(loss='abstain')``).
    """

    _answers = staticmethod(one_vs_all_answers)
    _centred_offsets = False  # k separate binary SVMs: each offset is its own
    _backends = (*_BACKENDS, "libsvm", "dual")

    def fit(self, X, y, sample_weight=None):
        """Solve the training program on ``X`` (n, d) and labels ``y`` (n,); see ``backend``."""
        if self.backend == "dual" and self.kernel != "linear":
            self._check_params()
            raise ValueError(
                f"backend='dual' is for the linear kernel only; got kernel={self.kernel!r}: "
                "use backend='libsvm' for kernels."
            )
        if self.backend != "libsvm":
            return super().fit(X, y, sample_weight)
        self._check_params()
        if not self.fit_intercept:
            raise ValueError("backend='libsvm' needs fit_intercept=True (libsvm fits offsets).")
        X, y_index, sample_weight = check_classification_fit(self, X, y, sample_weight)
        K = self._fit_kernel_map(X)
        k = self.classes_.size
        self.dual_coef_ = np.zeros((X.shape[0], k))
        self.intercept_ = np.zeros(k)
        hinge = 0.0
        for j in range(k):
            side = np.where(y_index == j, 1.0, -1.0)
            svm = SVC(C=self.C, kernel="precomputed", tol=LIBSVM_TOL).fit(
                K, side, sample_weight=sample_weight
            )
            # decision = dual_coef @ K(sv, x) + b, positive for classes_[1] = +1
            self.dual_coef_[svm.support_, j] = svm.dual_coef_[0]
            self.intercept_[j] = svm.intercept_[0]
            f = K @ self.dual_coef_[:, j] + self.intercept_[j]
            hinge += sample_weight @ np.maximum(0.0, 1.0 - side * f)
        norm = np.einsum("ij,ik,kj->", self.dual_coef_, K, self.dual_coef_)
        self.objective_ = 0.5 * norm + self.C * hinge
        # libsvm's multipliers are dual feasible (0 <= alpha_i <= C w_i, sum_i s_i alpha_i = 0),
        # so sum_j (1^T alpha_j - ||w_j||^2 / 2) bounds the optimum below (weak duality)
        dual = np.abs(self.dual_coef_).sum() - 0.5 * norm
        record_convergence(
            self,
            max(self.objective_ - dual, 0.0),
            DUAL_TOL,
            self.objective_,
            reason=f"libsvm's SMO solved the {k} binary SVMs to tol={LIBSVM_TOL:g}",
        )
        self.coef_ = self.dual_coef_.T @ X if self.kernel == "linear" else None
        self.program_, self.n_rounds_ = None, 0
        return self

    @staticmethod
    def _interior_point(X, y, cost, **options):
        return fit_ova_linear(X, y, cost, **options)

    __init__ = _abstaining_init(fit_intercept=True, threshold=0.0)

    def _hinges(self, y, k):
        i, j = np.divmod(np.arange(y.size * k), k)
        side = np.where(y[i] == j, 1.0, -1.0)
        return i, np.arange(i.size), [(j, -side)]


class CrammerSingerAbstain(_Abstains, CrammerSingerSVC):
    r"""Crammer-Singer SVM with the abstain rule of Ramaswamy et al. (2018) (Fathony et al. 2018a, Table 6).

    Trains :class:`CrammerSingerSVC`; ``predict`` answers ``argmax_j f_j(x)`` if the largest
    score exceeds the second largest by at least ``threshold`` (``f_(1) - f_(2) >= tau``), else
    returns ``abstain_label`` (consistent for ``alpha = 1/2`` with ``tau`` in ``(0, 1)``;
    Fathony et al. 2018a use the default ``tau = 0.5``).

    Parameters
    ----------
    C, kernel, gamma, fit_intercept, backend : as for :class:`CrammerSingerSVC`.
    threshold : float, default=0.5
        ``tau`` of the rule above.
    abstain_label : default=-1
        What ``predict`` returns when abstaining.
    """

    _answers = staticmethod(top_two_gap_answers)

    __init__ = _abstaining_init(fit_intercept=False, threshold=0.5)
