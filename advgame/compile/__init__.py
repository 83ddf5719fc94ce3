"""Compilation of learning problems into LP / QP / SOCP programs with HiGHS and cvxpy backends."""

from .learning import CompiledGame, LearningSolution, compile_cuts, compile_learning
from .program import Program, Solution

__all__ = [
    "CompiledGame",
    "LearningSolution",
    "Program",
    "Solution",
    "compile_cuts",
    "compile_learning",
]
