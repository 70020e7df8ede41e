"""The run-state and run-history stores the product ships, opened fresh for a test: `sqlite` (a file in a folder)
or `table` (a new table on the session's Azurite, tests/support/azurite_fixture.py). Every test of the runner runs
on each (the `run_state_store_kind` fixture in tests/conftest.py)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

RUN_STATE_TTL_SECONDS = 7 * 86400
SHORT_TTL_SECONDS = 60  # the run-state store tests' TTL (tests/unit/adapters/run_state)
RUN_STATE_STORE_KINDS = ["sqlite", pytest.param("table", marks=pytest.mark.azurite)]


def open_test_run_state_store(
    kind: str, folder: Path, request: pytest.FixtureRequest | None = None, *, ttl_seconds: int = RUN_STATE_TTL_SECONDS
):
    """A fresh, empty run-state store of `kind` (`sqlite`: a file in `folder`; `table`: a new table on the session's
    Azurite, which `request` provides)."""
    if kind == "sqlite":
        from olparser.adapters.run_state.sqlite_store import SqliteRunStateStore

        return SqliteRunStateStore(folder / "runs.sqlite3", ttl_seconds=ttl_seconds)
    from olparser.adapters.run_state.table_store import TableRunStateStore

    emulator = request.getfixturevalue("azurite")
    return TableRunStateStore.from_connection_string(
        emulator.connection_string, f"runs{uuid.uuid4().hex[:16]}", ttl_seconds=ttl_seconds
    )


def open_test_history_store(kind: str, folder: Path, request: pytest.FixtureRequest, *, retention_days: int):
    """A fresh, empty run-history store of `kind` (`sqlite`: a file in `folder`; `table`: a new table on the
    session's Azurite, which `request` provides)."""
    if kind == "sqlite":
        from olparser.adapters.history_stores.sqlite_store import SqliteHistoryStore

        return SqliteHistoryStore(folder / "history.sqlite3", retention_days=retention_days)
    from olparser.adapters.history_stores.table_store import TableHistoryStore

    emulator = request.getfixturevalue("azurite")
    return TableHistoryStore.from_connection_string(
        emulator.connection_string, f"hist{uuid.uuid4().hex[:16]}", retention_days=retention_days
    )


def same_store_elsewhere(store):
    """A second handle on the storage of `store`, as another worker process (or instance) would open it."""
    from olparser.adapters.run_state.sqlite_store import SqliteRunStateStore

    if isinstance(store, SqliteRunStateStore):
        return SqliteRunStateStore(store.path, ttl_seconds=store.ttl_seconds, max_datasets=store.max_datasets)
    from azure.data.tables import TableClient

    from olparser.adapters.run_state.table_store import TableRunStateStore

    table = TableClient.from_connection_string(store.connection_string, store.table.table_name)
    return TableRunStateStore(
        table, ttl_seconds=store.ttl_seconds, max_datasets=store.max_datasets, connection_string=store.connection_string
    )
