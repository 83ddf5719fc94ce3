"""Benchmarks run by ``advgame bench`` (speed is measured here, never asserted in tests)."""
