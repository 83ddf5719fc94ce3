"""Compilation of learning problems into LP / QP / SOCP programs with HiGHS and cvxpy backends."""

from .graph import GraphLearningProgram, compile_graph, compile_graph_cuts
from .learning import (
    AdversaryProgram,
    AdversarySolution,
    LearningProgram,
    LearningSolution,
    ProgramView,
    compile_cuts,
    compile_learning,
)
from .matching import MatchingProgram, compile_matching
from .minimax import MinimaxAdversary, MinimaxProgram, compile_minimax
from .program import Program, Solution

__all__ = [
    "AdversaryProgram",
    "AdversarySolution",
    "GraphLearningProgram",
    "LearningProgram",
    "LearningSolution",
    "MatchingProgram",
    "MinimaxAdversary",
    "MinimaxProgram",
    "Program",
    "ProgramView",
    "Solution",
    "compile_cuts",
    "compile_graph",
    "compile_graph_cuts",
    "compile_learning",
    "compile_matching",
    "compile_minimax",
]
