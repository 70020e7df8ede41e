"""Fixtures of the hostile suite: the work of an honest event, against which hostile payloads are bounded
(tests/support/hostile_work.py)."""

from __future__ import annotations

import pytest

from olparser.contract import IntakeLimits, read_event
from tests.support.hostile_work import work
from tools.samples.hostile import body, honest_event


@pytest.fixture(scope="session")
def honest_intake_lines_per_kib() -> float:
    """Lines of olparser/ that intake runs per KiB of an honest 1 MB event."""
    data = body(honest_event(1_000_000))
    return work(lambda: read_event(data, {}, IntakeLimits())) / (len(data) / 1024)
