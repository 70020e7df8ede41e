"""Fixtures of the runner's tests: a fresh run-state store of each kind (tests/conftest.py's `run_state_store`), a
fresh run-history store of the same kind, and the mapping engine with the shipped rules (the tests' copy, tests/rules; read, never edited)."""
from __future__ import annotations

import itertools
import uuid
from pathlib import Path

import pytest

from olparser.adapters.history_stores.sqlite_store import SqliteHistoryStore
from olparser.naming import MappingEngine
from tests.conftest import open_test_run_state_store
from tests.rules import MAPPINGS_PATH


@pytest.fixture
def store(run_state_store):
    return run_state_store


@pytest.fixture
def fresh_store(run_state_store_kind: str, tmp_path: Path, request: pytest.FixtureRequest):
    """Opens another empty store of the same kind (closed after the test)."""
    opened = []
    numbers = itertools.count(1)

    def open_one():
        folder = tmp_path / f"store-{next(numbers)}"
        folder.mkdir()
        opened.append(open_test_run_state_store(run_state_store_kind, folder, request))
        return opened[-1]

    yield open_one
    for store in opened:
        store.close()


@pytest.fixture
def fresh_history(run_state_store_kind: str, tmp_path: Path, request: pytest.FixtureRequest):
    """Opens another empty run-history store of the kind the run-state store is (closed after the test)."""
    opened = []
    numbers = itertools.count(1)

    def open_one():
        if run_state_store_kind == "sqlite":
            opened.append(SqliteHistoryStore(tmp_path / f"history-{next(numbers)}.sqlite3", retention_days=36500))
        else:
            from olparser.adapters.history_stores.table_store import TableHistoryStore

            emulator = request.getfixturevalue("azurite")
            opened.append(TableHistoryStore.from_connection_string(
                emulator.connection_string, f"hist{uuid.uuid4().hex[:16]}", retention_days=36500))
        return opened[-1]

    yield open_one
    for history in opened:
        history.close()


@pytest.fixture
def engine() -> MappingEngine:
    return MappingEngine.from_path(MAPPINGS_PATH)
