"""Fixtures of the run-state store tests: a fresh store of each kind the product ships (SQLite; Table storage on
Azurite), behind one parametrised fixture."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from tests.support.stores import SHORT_TTL_SECONDS, open_test_run_state_store


@pytest.fixture
def store(run_state_store_kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator:
    """A fresh, empty run-state store of each kind, with a TTL of 60 s."""
    opened = open_test_run_state_store(run_state_store_kind, tmp_path, request, ttl_seconds=SHORT_TTL_SECONDS)
    yield opened
    opened.close()
