"""Sphinx configuration for the advgame documentation.

Built with ``sphinx-build -W --keep-going -b html docs docs/_build/html`` (warnings are errors);
the notebooks in ``notebooks/`` (reached through the ``docs/notebooks`` link) are executed by
myst-nb through nbclient on every build unless ``ADVGAME_DOCS_EXECUTE=cache`` asks it to reuse
the outputs of the previous build.
"""

import os

import advgame

project = "advgame"
author = "advgame developers"
copyright = "2026, advgame developers"
version = release = advgame.__version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "sphinx.ext.viewcode",
]

exclude_patterns = ["_build", "README.md", "notebooks/README.md", "**.ipynb_checkpoints"]
templates_path = ["_templates"]

# The API reference: one page per public module, members as listed in each module's __all__.
autosummary_generate = True
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "none"
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False

intersphinx_mapping = {}  # no network in CI: links to numpy/sklearn stay plain text

myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# Notebook execution (nbclient). "force": run every notebook top to bottom on every build.
nb_execution_mode = os.environ.get("ADVGAME_DOCS_EXECUTE", "force")
nb_execution_timeout = 120
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True

html_theme = "pydata_sphinx_theme"
html_title = f"advgame {release}"
html_theme_options = {
    "navigation_depth": 2,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_static_path = []


def _skip_metadata_requests(app, what, name, obj, skip, options):
    # scikit-learn attaches set_*_request methods to every estimator; they are documented there.
    return True if name.startswith("set_") and name.endswith("_request") else skip


def setup(app):
    app.connect("autodoc-skip-member", _skip_metadata_requests)
