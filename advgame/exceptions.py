"""Exceptions raised by advgame.

Every error names the argument that was wrong and what was expected.  The classes subclass the
built-in exception a scikit-learn or numpy user would already catch (``ValueError`` for bad input,
``RuntimeError`` for solver failure).
"""

from sklearn.exceptions import ConvergenceWarning as _SklearnConvergenceWarning

__all__ = ["ConvergenceWarning", "NotApplicableError", "SizeLimitError", "SolverError"]


class NotApplicableError(ValueError):
    """A closed form (or other specialised method) was requested outside its validity range.

    Example: the abstain closed form of Fathony et al. (2018a), Theorem 12 requires
    ``alpha <= 1/2``.
    """


class SizeLimitError(ValueError):
    """A computation would exceed a documented size limit (memory or time), so it was refused.

    Example: enumerating the extreme points of a large loss matrix.  The message says which limit
    applied and how to raise it or what to use instead.
    """


class SolverError(RuntimeError):
    """An LP/QP solver did not return an optimal solution (infeasible, unbounded, limit reached)."""


class ConvergenceWarning(_SklearnConvergenceWarning):
    """An iterative method stopped at ``max_iter`` before reaching its tolerance; the message
    states the accuracy achieved.  A subclass of scikit-learn's, so one filter catches both."""
