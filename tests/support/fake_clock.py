"""A clock that only moves when code sleeps, and jitter always at its top: retry waits become exact numbers."""

from __future__ import annotations

import random


class FakeTime:
    """clock() and sleep() for injection: sleeping records the wait and moves the clock."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class MaxRandom(random.Random):
    """Jitter always at its top: waits become exact (initial * 2**n, capped)."""

    def uniform(self, a: float, b: float) -> float:
        return b
