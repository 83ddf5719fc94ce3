"""The peer models of the papers, as scikit-learn estimators: the multiclass SVMs (Weston-Watkins,
Crammer-Singer, Lee-Lin-Wahba), the ordinal SVMs (all and immediate thresholds) and the
abstaining SVMs that Fathony et al. (2018a) compare against, and the cost-sensitive reductions
of its ordinal tables. Their solvers live in :mod:`advgame.solvers`.
"""

from . import reductions, svm
from .reductions import *  # noqa: F403
from .svm import *  # noqa: F403

__all__ = [*svm.__all__, *reductions.__all__]
