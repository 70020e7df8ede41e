"""Fixtures of the runner's tests: a fresh SQLite run-state store, and the mapping engine with the shipped rules
(the tests' copy, tests/rules; read, never edited)."""
from __future__ import annotations

from pathlib import Path

import pytest

from olparser.naming import MappingEngine
from olparser.runs.sqlite_store import SqliteRunStateStore
from tests.rules import MAPPINGS_PATH


@pytest.fixture
def store(tmp_path: Path):
    with SqliteRunStateStore(tmp_path / "runs.sqlite3", ttl_seconds=7 * 86400) as opened:
        yield opened


@pytest.fixture
def engine() -> MappingEngine:
    return MappingEngine.from_path(MAPPINGS_PATH)
