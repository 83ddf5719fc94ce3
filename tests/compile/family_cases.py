"""A small declaration and data set of every family, shared by the LaTeX and cvxpy printout
tests (``CASES[name]() -> (PredictionGame, X, y)``)."""

import networkx as nx
import numpy as np

import advgame as ag
from advgame.exceptions import NotApplicableError
from advgame.losses import Bilinear
from advgame.models.graphical import GraphFeatures
from advgame.polytopes import Birkhoff, Marginal, UnitCube


def _flat(n=12, d=2, k=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.arange(n) % k
    return X, y


def _simplex(uncertainty, loss="zero_one"):
    def case():
        X, y = _flat()
        return ag.PredictionGame(loss, uncertainty=uncertainty), X, y

    return case


def _minimax():
    X, y = _flat()
    return ag.PredictionGame(ag.losses.log(3), uncertainty=ag.MomentBalls(0.1)), X, y


def _birkhoff():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(5, 1))
    R = np.array([rng.permutation(3) + 1 for _ in range(5)])
    return ag.PredictionGame("hamming", uncertainty=ag.NormBall(0.1, 1), polytope=Birkhoff()), X, R


def _chain():
    graph = nx.path_graph(3)
    rng = np.random.default_rng(2)
    X = [rng.normal(size=(3, 2)) for _ in range(3)]
    y = [np.array([0, 1, 2]), rng.integers(0, 3, 3), rng.integers(0, 3, 3)]
    game = ag.PredictionGame(
        "zero_one", GraphFeatures(), ag.NormBall(0.1, "group"), Marginal(graph)
    )
    return game, X, y


def _unit_cube():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(6, 2))
    Y = rng.integers(0, 2, size=(6, 2)).astype(float)
    game = ag.PredictionGame(
        Bilinear.hamming(2), uncertainty=ag.NormBall(0.1, 2), polytope=UnitCube()
    )
    return game, X, Y


class _OracleCube(UnitCube):
    """The unit cube without its linear description (its game is solved by mirror-prox)."""

    def _constraints(self, dim):
        raise NotApplicableError("no linear description")


def _oracle_cube():
    game, X, Y = _unit_cube()
    return (
        ag.PredictionGame(game.loss, uncertainty=ag.SoftMoments(0.1), polytope=_OracleCube()),
        X,
        Y,
    )


def _brier():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(8, 2))
    Y = np.eye(3)[np.arange(8) % 3]
    game = ag.PredictionGame(
        ag.losses.brier(3), uncertainty=ag.SoftMoments(0.1), polytope=ag.polytopes.Simplex()
    )
    return game, X, Y


def _shannon():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(8, 2))
    Y = (rng.random((8, 3)) < 0.5).astype(float)
    game = ag.PredictionGame(
        ag.losses.log(3), uncertainty=ag.SoftMoments(0.1), polytope=ag.polytopes.UnitCube()
    )
    return game, X, Y


#: name -> a function returning ``(PredictionGame, X, y)``, one small instance per family (and
#: per uncertainty set of the simplex family).
CASES = {
    "zero_one exact": _simplex(ag.Exact()),
    "zero_one l1": _simplex(ag.NormBall(0.1, 1)),
    "zero_one l2": _simplex(ag.NormBall(0.1, 2)),
    "zero_one soft": _simplex(ag.SoftMoments(0.1)),
    "abstain linf": _simplex(ag.NormBall(0.1, np.inf), loss="abstain"),
    "ordinal group": _simplex(ag.NormBall(0.1, "group"), loss="ordinal"),
    "minimax log": _minimax,
    "birkhoff hamming": _birkhoff,
    "graph chain": _chain,
    "polytope unit cube": _unit_cube,
    "polytope oracle cube": _oracle_cube,
    "fenchel-young brier": _brier,
    "fenchel-young shannon": _shannon,
}
