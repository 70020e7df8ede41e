"""Fixtures for the catalog client tests: a loopback Atlas stub and a clock that only moves when code sleeps."""

from __future__ import annotations

import pytest

from olparser.adapters.catalog import CatalogTarget, make_atlas_client
from olparser.adapters.catalog.retry import RetryPolicy
from tests.support.fake_clock import FakeTime, MaxRandom

from .atlas_stub import AtlasStub


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
