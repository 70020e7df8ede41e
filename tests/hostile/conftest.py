"""Fixtures of the hostile suite: the cost of an honest event, against which hostile payloads are bounded
(tests/support/hostile_costs.py)."""

from __future__ import annotations

import pytest

from olparser.contract import IntakeLimits, read_event
from tests.support.hostile_costs import cpu_seconds
from tools.samples.hostile import body, honest_event


@pytest.fixture(scope="session")
def honest_intake_per_kib() -> float:
    """CPU seconds per KiB that intake spends on an honest 1 MB event."""
    data = body(honest_event(1_000_000))
    return cpu_seconds(lambda: read_event(data, {}, IntakeLimits()), repeat=5) / (len(data) / 1024)
