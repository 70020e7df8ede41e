"""Fixtures for the entity builder: a tiny mapping engine with MappingEngine's `map` signature
(tests/support/fake_engine.py), so that these tests do not depend on the default rule file. The real events from
../shared they build from: tests/support/shared_events.py."""

from __future__ import annotations

import pytest

from tests.support.fake_engine import FakeEngine


@pytest.fixture
def engine() -> FakeEngine:
    return FakeEngine()
