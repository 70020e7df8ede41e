"""Fixtures of the run tests: the real Spark sequences, and both run-state stores behind one parametrised fixture."""
from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Iterator

import pytest

from olparser.runs.sqlite_store import SqliteRunStateStore
from tests.conftest import SHARED

SEQUENCES = SHARED / "openlineage" / "sequences"
TTL_SECONDS = 60


def load_sequence(name: str) -> list[dict]:
    """The events of one real sequence in emission order (files are numbered)."""
    folder = SEQUENCES / name
    files = sorted((p for p in folder.glob("*.json") if not p.name.startswith("_")), key=lambda p: int(p.stem))
    return [json.loads(p.read_text()) for p in files]


def events_of_run(events: list[dict], run_id: str) -> list[dict]:
    return [e for e in events if e["run"]["runId"] == run_id]


@pytest.fixture(params=["sqlite", pytest.param("table", marks=pytest.mark.azurite)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator:
    """A fresh, empty run-state store of each kind, with a TTL of 60 s."""
    if request.param == "sqlite":
        with SqliteRunStateStore(tmp_path / "runs.sqlite3", ttl_seconds=TTL_SECONDS) as sqlite_store:
            yield sqlite_store
        return
    from olparser.runs.table_store import TableRunStateStore

    emulator = request.getfixturevalue("azurite")
    table = f"runs{uuid.uuid4().hex[:16]}"
    with TableRunStateStore.from_connection_string(emulator.connection_string, table,
                                                   ttl_seconds=TTL_SECONDS) as table_store:
        yield table_store
