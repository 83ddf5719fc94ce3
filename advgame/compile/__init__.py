"""Compilation of learning problems into LP / QP / SOCP programs with HiGHS and cvxpy backends."""

from .graph import (
    GraphAdversaryProgram,
    GraphAdversarySolution,
    GraphLearningProgram,
    GraphLearningSolution,
    compile_graph,
)
from .learning import (
    AdversaryProgram,
    AdversarySolution,
    LearningProgram,
    LearningSolution,
    compile_cuts,
    compile_learning,
)
from .matching import MatchingAdversaryProgram, MatchingProgram, compile_matching
from .program import Program, Solution

__all__ = [
    "AdversaryProgram",
    "AdversarySolution",
    "GraphAdversaryProgram",
    "GraphAdversarySolution",
    "GraphLearningProgram",
    "GraphLearningSolution",
    "LearningProgram",
    "LearningSolution",
    "MatchingAdversaryProgram",
    "MatchingProgram",
    "Program",
    "Solution",
    "compile_cuts",
    "compile_graph",
    "compile_learning",
    "compile_matching",
]
