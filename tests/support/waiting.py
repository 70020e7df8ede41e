"""The one way tests wait: on a condition, polled, with a generous limit (tests/unit/test_no_timing.py)."""

from __future__ import annotations

import time
from typing import Callable, TypeVar

T = TypeVar("T")


def wait_until(condition: Callable[[], T], timeout: float = 15.0, interval: float = 0.05, what: str = "condition") -> T:
    """Poll `condition` every `interval` seconds until it returns something truthy, and return that; AssertionError
    naming `what` (and the last value) after `timeout` seconds. Tests wait on conditions this way, never for a fixed
    time."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached after {timeout:.0f} s (last: {value!r})")
        time.sleep(interval)
    return value
