"""Exceptions raised by advgame.

Every error names the argument that was wrong and what was expected.  The classes subclass the
built-in exception a scikit-learn or numpy user would already catch (``ValueError`` for bad input,
``RuntimeError`` for solver failure).
"""

# ConvergenceWarning is defined on first access (module __getattr__ below)
__all__ = ["ConvergenceWarning", "NotApplicableError", "SizeLimitError", "SolverError"]  # noqa: F822


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


def _convergence_warning():
    """Define :class:`ConvergenceWarning` as a subclass of scikit-learn's, so that one filter
    catches both.  Deferred to first access (PEP 562) so that ``import advgame`` does not load
    scikit-learn (about a second)."""
    from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning

    class ConvergenceWarning(SklearnConvergenceWarning):
        """An iterative method stopped at ``max_iter`` before reaching its tolerance; the message
        states the accuracy achieved.  A subclass of scikit-learn's, so one filter catches both."""

        # pickle finds the class by its qualified name, the module attribute
        __qualname__ = "ConvergenceWarning"

    return ConvergenceWarning


def __getattr__(name):
    if name != "ConvergenceWarning":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = cls = _convergence_warning()
    return cls


def __dir__():
    return sorted({*globals(), *__all__})
