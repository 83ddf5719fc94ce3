r"""The LaTeX every family's learning programs are written in: the preamble they compile with
(:func:`latex_preamble`) and the ``where`` block that defines their symbols (:func:`latex_where`).

The programs use plain ``amsmath`` and ``amssymb`` constructs only (``aligned`` displays, the
indicator written ``\mathbf{1}[a \ne y]``), so a document whose preamble holds
``latex_preamble()`` typesets every family's ``latex()`` with pdflatex: no undefined control
sequence, and no line wider than a standard ``article`` page (long definitions get a line each).
"""

from __future__ import annotations

__all__ = ["PREAMBLE", "latex_preamble", "latex_where"]

#: The preamble lines of :func:`latex_preamble`.
PREAMBLE = (r"\usepackage{amsmath}", r"\usepackage{amssymb}")


def latex_preamble() -> str:
    r"""The LaTeX preamble lines that advgame's ``latex()`` output compiles with.

    Every family's ``latex()`` (:meth:`advgame.PredictionGame.latex` and the compiled programs'
    ``latex()``) is a sequence of ``$$ ... $$`` displays (``aligned`` environments) that uses
    ``amsmath`` and ``amssymb`` only; no ``\newcommand`` is needed.

    Returns
    -------
    str
        One ``\usepackage`` line per package, to put between ``\documentclass`` and
        ``\begin{document}``.

    Examples
    --------
    >>> import advgame as ag
    >>> print(ag.latex_preamble())
    \usepackage{amsmath}
    \usepackage{amssymb}
    >>> document = "\n".join([
    ...     r"\documentclass{article}", ag.latex_preamble(), r"\begin{document}",
    ...     ag.PredictionGame("zero_one", uncertainty="l1").latex(), r"\end{document}"])
    """
    return "\n".join(PREAMBLE)


def latex_where(entries: list[str]) -> str:
    r"""The ``where`` display: one definition per line of an ``aligned`` block (so that no line
    is wider than the page), the definitions separated by commas."""
    lines = [r"\text{where}\quad & " + entries[0], *(f"& {entry}" for entry in entries[1:])]
    return "$$\n\\begin{aligned}\n" + ",\\\\\n".join(lines) + "\n\\end{aligned}\n$$\n"
