"""Moved to :mod:`advgame.baselines.reductions`; this name stays so that existing imports keep
working."""

from ..baselines.reductions import *  # noqa: F403
from ..baselines.reductions import __all__  # noqa: F401
