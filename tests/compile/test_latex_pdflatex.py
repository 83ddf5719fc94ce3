r"""Every family's LaTeX (``PredictionGame.latex()`` and the compiled program's ``latex()``):

* (fast) every symbol its programs use is defined in its ``where`` block (or is a decision
  variable, under ``\min`` / ``\max``, or an index), and no ``\mathbb 1`` (blackboard-bold 1 needs
  bbm or dsfont, which the preamble does not load);
* (slow) it compiles with pdflatex and :func:`advgame.latex_preamble`: exit 0, no "Undefined
  control sequence", no "Overfull \hbox" (nothing wider than an ``article`` page).  Skipped where
  no TeX engine is installed (``.ci/run`` installs texlive-latex-base and texlive-latex-extra).
"""

import re
import shutil
import subprocess

import pytest
from family_cases import CASES

import advgame as ag

#: Indices and letters every program uses without a definition.
INDICES = {"i", "j", "r", "s", "g"}
#: Control words that name symbols (the rest are operators, spacing and delimiters).
GREEK = (
    "alpha beta gamma delta epsilon eta theta lambda mu nu xi pi rho sigma tau phi psi omega "
    "ell Theta Lambda Delta Phi Psi Omega Sigma Pi"
).split()
#: Standard operators and sets, defined by mathematics rather than by the program.
STANDARD = {r"\mathbb R", r"\mathbb E", "vec", "reshape", "tr", "log"}


def _outputs():
    """``(case name, which, LaTeX)`` for every case's declaration and compiled program."""
    for name, case in CASES.items():
        game, X, y = case()
        yield name, "declaration", game.latex()
        yield name, "program", game.compile(X, y).latex()


OUTPUTS = list(_outputs())
IDS = [f"{name} {which}" for name, which, _ in OUTPUTS]


def _strip_group(text, command):
    r"""``text`` without every ``\command{...}`` (balanced braces)."""
    out, start = [], 0
    for match in re.finditer(re.escape(command) + r"\s*\{", text):
        if match.start() < start:
            continue
        depth, end = 1, match.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            end += 1
        out.append(text[start : match.start()])
        start = end
    return "".join(out) + text[start:]


def symbols(fragment):
    r"""The symbols of a LaTeX fragment: Greek letters, ``\mathcal``/``\mathbb`` letters,
    operator names and single Latin letters (text, numbers and other control words dropped)."""
    for command in (r"\text", r"\mathbf", r"\begin", r"\end"):
        fragment = _strip_group(fragment, command)
    found = set()
    for name in re.findall(r"\\(?:operatorname|mathrm)\{(\w+)\}", fragment):
        found.add(name)
    fragment = re.sub(r"\\(?:operatorname|mathrm)\{\w+\}", " ", fragment)
    for kind, letter in re.findall(r"\\(mathcal|mathbb)\s*\{?([A-Za-z])", fragment):
        found.add(rf"\{kind} {letter}")
    fragment = re.sub(r"\\(?:mathcal|mathbb)\s*\{?[A-Za-z]\}?", " ", fragment)
    for word in re.findall(r"\\([A-Za-z]+)", fragment):
        if word in GREEK:
            found.add("\\" + word)
    fragment = re.sub(r"\\[A-Za-z]+", " ", fragment)
    found.update(re.findall(r"[A-Za-z]", fragment))
    return found


def _top_level_split(text, separator):
    """``text`` split at ``separator`` outside braces."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        if text[i] in "{}":
            depth += 1 if text[i] == "{" else -1
        elif depth == 0 and text.startswith(separator, i):
            parts.append(text[start:i])
            start = i + len(separator)
            i = start
            continue
        i += 1
    return [*parts, text[start:]]


def defined(where_lines):
    r"""The symbols the ``where`` lines define: each clause (lines split at ``,\ ``) defines
    the symbols left of its first ``:`` (outside braces), else of its first ``=`` or ``\in``."""
    names = set()
    for line in where_lines:
        for clause in _top_level_split(line, r",\ "):
            head = _top_level_split(clause, ":")
            lhs = head[0] if len(head) > 1 else re.split(r"=|\\in\b", clause)[0]
            names |= symbols(lhs)
    return names


def undefined_symbols(text):
    """The symbols ``text``'s programs use that its ``where`` block does not define."""
    displays = re.findall(r"\$\$(.*?)\$\$", text, flags=re.S)
    (where,) = [d for d in displays if r"\text{where}" in d]
    lines = [
        line.strip().lstrip("&").strip().rstrip("\\").rstrip(",")
        for line in where.replace(r"\text{where}\quad", "").splitlines()
        if line.strip().startswith(("&", r"\text{where}"))
    ]
    known = defined(lines) | INDICES | STANDARD
    used = set()
    for display in (d for d in displays if d is not where):
        for bound in re.findall(r"\\(?:min|max)_\{((?:[^{}]|\{[^{}]*\})*)\}", display):
            known |= symbols(bound)  # the decision variables
        known |= {s for s in re.findall(r"^&\s*([A-Za-z])(?:\([^)]*\))?\s*=", display, re.M)}
        used |= symbols(display)
    return used - known


def test_the_checker_finds_a_missing_definition():
    text = "$$\n\\min_{x}\\quad & L x + \\Phi y\n$$\n$$\n\\text{where}\\quad & y: \\text{data}\n$$"
    assert undefined_symbols(text) == {"L", r"\Phi"}
    assert symbols(r"\operatorname{emb}(y) \in \mathcal P,\ \text{the x}") == {
        "emb",
        "y",
        r"\mathcal P",
    }
    assert defined([r"c, u: \text{the loss},\ \Delta_m = \{p : p \ge 0\}"]) == {
        "c",
        "u",
        r"\Delta",
        "m",
    }


@pytest.mark.parametrize("name, which, text", OUTPUTS, ids=IDS)
def test_every_symbol_is_defined(name, which, text):
    assert undefined_symbols(text) == set(), text
    residuals = set(re.findall(r"\bm(?:_b)?\((\\?\w+)\)", text))  # m(q), m(\mu), m_b(Q)
    assert len(residuals) <= 1, (residuals, text)  # one moment residual, as defined
    assert r"\mathbb 1" not in text and r"\mathbb{1}" not in text


def test_latex_preamble_is_the_documented_packages():
    preamble = ag.latex_preamble()
    assert preamble.splitlines() == [r"\usepackage{amsmath}", r"\usepackage{amssymb}"]


def _pdflatex(tmp_path, body):
    """pdflatex's exit code and log for ``body`` in an article with advgame's preamble."""
    document = "\n".join(
        [
            r"\documentclass{article}",
            ag.latex_preamble(),
            r"\begin{document}",
            body,
            r"\end{document}",
        ]
    )
    (tmp_path / "program.tex").write_text(document)
    result = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "program.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return result.returncode, (tmp_path / "program.log").read_text(errors="replace")


NEEDS_TEX = pytest.mark.skipif(
    shutil.which("pdflatex") is None,
    reason="no TeX engine: pdflatex is not on PATH (apt-get install texlive-latex-base "
    "texlive-latex-extra; .ci/run does so where it can)",
)


@pytest.mark.slow
@NEEDS_TEX
def test_pdflatex_reports_what_the_test_rejects(tmp_path):
    """The log markers the test looks for are there for a too-wide line and an unknown macro
    (blackboard-bold 1 without bbm), so their absence below means something."""
    wide = "$$\n" + " + ".join(f"x_{{{i}}}" for i in range(80)) + "\n$$\n$$\\mathbbm 1$$"
    returncode, log = _pdflatex(tmp_path, wide)
    assert returncode != 0  # -halt-on-error stops at the unknown macro
    assert "Overfull \\hbox" in log and "Undefined control sequence" in log


@pytest.mark.slow
@NEEDS_TEX
@pytest.mark.parametrize("name, which, text", OUTPUTS, ids=IDS)
def test_latex_compiles_with_pdflatex(tmp_path, name, which, text):
    returncode, log = _pdflatex(tmp_path, text)
    assert returncode == 0, log[-3000:]
    assert "Undefined control sequence" not in log, log[-3000:]
    assert "Overfull \\hbox" not in log, log[-3000:]
