"""The notebooks are committed with their outputs stripped, so that their diffs stay reviewable.

They are executed (by nbclient, through myst-nb) when the documentation is built:
``python -m sphinx -W -b html docs docs/_build/html``, which CI runs after the tests.
"""

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).parents[2] / "notebooks").glob("*.ipynb"))


def test_there_are_eight_teaching_notebooks():
    assert len(NOTEBOOKS) >= 8


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_outputs_are_stripped(path):
    notebook = json.loads(path.read_text())
    assert set(notebook["metadata"]) <= {"kernelspec", "language_info"}
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, (
                f"{path.name} has outputs; strip them (see notebooks/README.md)"
            )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_has_one_title(path):
    cells = json.loads(path.read_text())["cells"]
    first = "".join(cells[0]["source"])
    assert cells[0]["cell_type"] == "markdown" and first.startswith("# ")
    titles = [
        c for c in cells if c["cell_type"] == "markdown" and "".join(c["source"]).startswith("# ")
    ]
    assert len(titles) == 1
