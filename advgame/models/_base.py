"""What every fitted estimator shares: its compiled program stays out of its pickle."""

__all__ = ["ProgramNotPickled"]


class ProgramNotPickled:
    """Keep a fitted estimator's compiled program (``program_``, ``compiled_``) for inspection
    in memory, but not in its pickle.

    A compiled program holds the training data (its constraint matrix is built from every row),
    so a pickled model would grow with ``n``; the model's declaration ``game_`` rebuilds it:
    ``model.game_.compile(X, y)``.
    """

    _NOT_PICKLED = ("program_", "compiled_")

    def __getstate__(self):
        state = dict(super().__getstate__())  # object.__getstate__ returns __dict__ itself
        for name in self._NOT_PICKLED:
            state.pop(name, None)
        return state
