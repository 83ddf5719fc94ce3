"""Shared pytest configuration: hypothesis profiles and the scikit-learn conformity check.

Under pytest-xdist each worker uses one BLAS thread.  The ``ci`` profile is loaded by default: deadline off, a fixed number of examples and
derandomised, so every run tries the same examples (a failure reproduces, and the suite's time
does not wander).  ``HYPOTHESIS_PROFILE=explore`` draws fresh random examples (more of them) for
a local hunt for counterexamples.
"""

import functools
import os
import signal
import warnings

import pytest
from hypothesis import HealthCheck, settings
from sklearn.utils.estimator_checks import check_estimator
from threadpoolctl import threadpool_limits

if "PYTEST_XDIST_WORKER" in os.environ:
    # one BLAS thread per worker: two workers with a BLAS thread pool each oversubscribe the
    # two cores (measured: 2.7x the CPU time of the sequential run for the same tests)
    threadpool_limits(limits=1)

settings.register_profile(
    "ci",
    deadline=None,
    max_examples=20,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "explore",
    deadline=None,
    max_examples=300,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def conforms():
    """``conforms(estimator, expected)``: scikit-learn's ``check_estimator`` fails exactly the
    checks named in ``expected`` (name -> reason), each of them every time it runs."""

    def check(estimator, expected):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = check_estimator(estimator, expected_failed_checks=expected, on_fail=None)
        status = {}
        for result in results:  # some checks run several times (e.g. for several datasets)
            status.setdefault(result["check_name"], set()).add(result["status"])
        assert not [name for name, seen in status.items() if "failed" in seen]
        assert all(status[name] == {"xfail"} for name in expected)

    return check


@pytest.fixture
def no_hang():
    """Fail instead of hanging if the code under test opens a FIFO and blocks (Unix only)."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def fail(signum, frame):
        raise AssertionError("opened a FIFO and blocked")

    previous = signal.signal(signal.SIGALRM, fail)
    signal.alarm(20)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def assert_game_solution(L, F, value, Q, P, reference, what, rtol=1e-9):
    """``value`` equals ``reference``, ``q*`` attains it and ``p*`` guarantees it, relative to
    ``max(|value|, max L)`` (the scale of the game); both are distributions.  Shared by the
    LP-oracle tests (``from conftest import assert_game_solution``)."""
    import numpy as np

    scale = np.maximum(np.abs(reference), L.max())
    attained = (Q @ L.T).min(axis=1) + np.einsum("ij,ij->i", F, Q)
    guaranteed = (P @ L + F).max(axis=1)
    for name, got in (
        ("value", value),
        ("H(q*) + f.q*", attained),
        ("max(L^T p* + f)", guaranteed),
    ):
        error = np.max(np.abs(got - reference) / scale)
        assert error <= rtol, f"{what}: {name} off by {error:.1e} (relative)"
    assert np.allclose(Q.sum(axis=1), 1.0) and Q.min() >= 0
    assert np.allclose(P.sum(axis=1), 1.0) and P.min() >= 0


def assert_raises_naming(call, names, exception=ValueError):
    """``call()`` raises ``exception`` whose message contains every one of ``names`` (the
    arguments or declarations it must name)."""
    with pytest.raises(exception) as info:
        call()
    message = str(info.value)
    for name in names:
        assert name in message, (name, message)


def standardised_iris():
    """Iris, features standardised, labels 0..2: shared by the baselines' interior-point tests
    (``from conftest import standardised_iris``)."""
    from sklearn.datasets import load_iris
    from sklearn.preprocessing import StandardScaler

    X, y = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@functools.cache
def standardised_optdigits(rows):
    """The first ``rows`` optdigits rows, features standardised, labels 0..9."""
    import numpy as np
    from sklearn.preprocessing import StandardScaler

    from advgame.datasets import load

    data = load("multiclass/optdigits")
    y = np.unique(data.y, return_inverse=True)[1][:rows]
    return StandardScaler().fit_transform(data.X[:rows]), y
