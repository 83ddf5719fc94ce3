"""Moved to :mod:`advgame.baselines`; this name stays so that existing imports keep working."""

from ..baselines.svm import *  # noqa: F403
from ..baselines.svm import __all__  # noqa: F401
