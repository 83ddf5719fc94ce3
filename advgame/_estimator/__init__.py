"""What every estimator shares, models and baselines alike: input checks with one message style
(:mod:`.inputs`), and progress reports and pickling rules of fitted estimators (:mod:`.base`).

It sits between the declaration layer and the estimators, so that :mod:`advgame.models` and
:mod:`advgame.baselines` use the same checks without importing each other.
"""
