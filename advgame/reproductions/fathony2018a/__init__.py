"""Fathony et al. (2018a), "Consistent Robust Adversarial Prediction for General Multiclass
Classification" (arXiv:1812.07526): the experiments of §7 (Tables 2, 4, 5 and 6) on vendored
data, and the same protocol on a user's data.

:mod:`.tables`
    the tables' columns, titles and published numbers;
:mod:`.settings`
    the runs' settings (:data:`FULL`, :data:`SUBSAMPLED`, :data:`QUICK`, :data:`COMPARE`) and
    the limits of ``compare``;
:mod:`.plans`
    the models of each column (the adversarial models and their baselines);
:mod:`.protocol`
    the evaluation protocol (splits, tuning, parallel scheduling) and :func:`run`, the
    reproduction (``advgame reproduce fathony2018a``); :func:`binning_study` and
    :func:`grid_study`, the runs that test the protocol's binning and grids against the paper's;
:mod:`.report`
    its report, the published numbers beside ours;
:mod:`.compare`
    :func:`~advgame.reproductions.fathony2018a.compare.compare`, the protocol on your data
    (``advgame compare``).

The public names of :mod:`.protocol` and :mod:`.settings` are imported here on first access, so
that the command line reads the settings without loading the models.
"""

from ..._lazy import lazy_attributes

#: Public name -> the module (relative to this package) that defines it.
_LAZY = {
    "run": ".protocol",
    "evaluate": ".protocol",
    "tune": ".protocol",
    "check_jobs": ".protocol",
    "bin_edges": ".protocol",
    "binning_study": ".protocol",
    "grid_study": ".protocol",
    "compare_plans": ".plans",
    "columns": ".tables",
    "PAPER": ".tables",
    "Settings": ".settings",
    "Tuning": ".settings",
    "PARTS": ".settings",
    "part_settings": ".settings",
    "FULL": ".settings",
    "QUICK": ".settings",
    "SUBSAMPLED": ".settings",
    "GAUSSIAN": ".settings",
    "COMPARE": ".settings",
    "BINNING_STUDY": ".settings",
    "GRID_STUDY": ".settings",
    "PAPER_ORDINAL": ".settings",
    "paper_tuning": ".settings",
}

__all__ = list(_LAZY)

__getattr__, __dir__ = lazy_attributes(globals(), _LAZY, __all__)
