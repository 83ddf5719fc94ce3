"""Shared pytest configuration: hypothesis profiles.

``default`` is used locally; ``ci`` (derandomised, so a CI failure reproduces) is loaded when the
``CI`` environment variable is set.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    deadline=None,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "ci",
    deadline=None,
    max_examples=60,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("ci" if "CI" in os.environ else "default")
