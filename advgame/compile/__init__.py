"""Compilation of learning problems into LP / QP / SOCP programs with HiGHS and cvxpy backends.

One builder per family takes a declaration's parts (loss, feature map, uncertainty set,
polytope) and the data: :func:`build_learning` (the simplex), :func:`build_matching` (the
Birkhoff polytope), :func:`build_graph` (a graph's marginal polytope), :func:`build_minimax`
(Farnia and Tse's moment balls) and :func:`build_polytope` (a bilinear loss over any polytope
with a linear description); :data:`advgame.declaration.BUILDERS` maps each family to its
builder.  Dependencies point one way: builders -> :mod:`~advgame.compile.program` ->
backends (:mod:`~advgame.compile.highs`, :mod:`~advgame.compile.cvx`) ->
:mod:`~advgame.compile.solution`; nothing here imports the declaration.
"""

from .fenchel_young import FenchelYoungProgram, build_fenchel_young
from .graph import GraphLearningProgram, build_graph, compile_graph, compile_graph_cuts
from .learning import (
    AdversaryProgram,
    AdversarySolution,
    LearningProgram,
    LearningSolution,
    ProgramView,
    add_cuts,
    build_learning,
    compile_cuts,
    compile_learning,
)
from .matching import MatchingProgram, build_matching, compile_matching
from .minimax import MinimaxAdversary, MinimaxProgram, build_minimax, compile_minimax
from .polytope import PolytopeProgram, build_polytope, compile_polytope
from .program import Program
from .solution import Solution

__all__ = [
    "AdversaryProgram",
    "AdversarySolution",
    "FenchelYoungProgram",
    "GraphLearningProgram",
    "LearningProgram",
    "LearningSolution",
    "MatchingProgram",
    "MinimaxAdversary",
    "MinimaxProgram",
    "PolytopeProgram",
    "Program",
    "ProgramView",
    "Solution",
    "add_cuts",
    "build_fenchel_young",
    "build_graph",
    "build_learning",
    "build_matching",
    "build_minimax",
    "build_polytope",
    "compile_cuts",
    "compile_graph",
    "compile_graph_cuts",
    "compile_learning",
    "compile_matching",
    "compile_minimax",
    "compile_polytope",
]
