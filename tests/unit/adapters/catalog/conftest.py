"""Fixtures for the catalog client tests: a loopback Atlas stub and a clock that only moves when code sleeps."""

from __future__ import annotations

import random

import pytest

from olparser.adapters.catalog import CatalogTarget, make_atlas_client
from olparser.adapters.catalog.retry import RetryPolicy

from .atlas_stub import AtlasStub


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


@pytest.fixture
def atlas():
    stub = AtlasStub().start()
    yield stub
    stub.stop()


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


@pytest.fixture
def policy(fake_time: FakeTime) -> RetryPolicy:
    return RetryPolicy(
        max_attempts=4,
        max_total_seconds=120.0,
        initial_wait=0.5,
        max_wait=30.0,
        sleep=fake_time.sleep,
        clock=fake_time.clock,
        rng=MaxRandom(),
    )


@pytest.fixture
def client(atlas: AtlasStub):
    client = make_atlas_client(CatalogTarget("atlas", atlas.atlas_url), timeout=5.0)
    yield client
    client.close()
