"""Shared pytest configuration: hypothesis profiles and the scikit-learn conformity check.

Under pytest-xdist each worker uses one BLAS thread.  The ``ci`` profile is loaded by default: deadline off, a fixed number of examples and
derandomised, so every run tries the same examples (a failure reproduces, and the suite's time
does not wander).  ``HYPOTHESIS_PROFILE=explore`` draws fresh random examples (more of them) for
a local hunt for counterexamples.
"""

import os
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
    max_examples=60,
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
