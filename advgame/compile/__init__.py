"""Compilation of learning problems into LP / QP / SOCP programs with HiGHS and cvxpy backends."""

from .learning import (
    AdversaryProgram,
    AdversarySolution,
    LearningProgram,
    LearningSolution,
    compile_cuts,
    compile_learning,
)
from .program import Program, Solution

__all__ = [
    "AdversaryProgram",
    "AdversarySolution",
    "LearningProgram",
    "LearningSolution",
    "Program",
    "Solution",
    "compile_cuts",
    "compile_learning",
]
