"""Fixtures of the history tests: both run-history stores behind one parametrised fixture (the Table one on
Azurite), and hand-made records."""
from __future__ import annotations

import uuid
from pathlib import Path
from typing import Iterator

import pytest

from olparser.history.model import DatasetRef, ProcessRun, RunFacts, RunRecord
from olparser.adapters.history_stores.sqlite_store import SqliteHistoryStore

RETENTION_DAYS = 30
DAY = 86400.0
T0 = 1_772_409_600.0  # 2026-03-02T00:00:00Z
LAKE = "https://contosolake.dfs.core.windows.net"
ADLS = "azure_datalake_gen2_path"


@pytest.fixture(params=["sqlite", pytest.param("table", marks=pytest.mark.azurite)])
def history(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator:
    """A fresh, empty run-history store of each kind, keeping 30 days."""
    if request.param == "sqlite":
        with SqliteHistoryStore(tmp_path / "history.sqlite3", retention_days=RETENTION_DAYS) as sqlite_store:
            yield sqlite_store
        return
    from olparser.adapters.history_stores.table_store import TableHistoryStore

    emulator = request.getfixturevalue("azurite")
    with TableHistoryStore.from_connection_string(emulator.connection_string, f"hist{uuid.uuid4().hex[:16]}",
                                                  retention_days=RETENTION_DAYS) as table_store:
        yield table_store


def dataset(name: str) -> DatasetRef:
    return DatasetRef(f"{LAKE}/{name}", ADLS)


def record(run_id: str, start: float, end: float | None, *, inputs: tuple[str, ...] = ("raw/orders",),
           output: str = "curated/orders", process: str = "orders", status: str = "COMPLETE",
           extra_processes: tuple[ProcessRun, ...] = ()) -> RunRecord:
    """A run of notebook job `process` reading `inputs` and writing `output` (lake paths)."""
    facts = RunFacts(run_id, f"ns/{process}", f"databricks://h/notebooks/{process}", "databricks_notebook", start, end,
                     status, {"user": "etl@contoso.com", "clusterId": "0101-1"})
    main = ProcessRun(f"databricks://h/notebooks/{process}/processes/{output}", "databricks_process", process,
                      tuple(dataset(i) for i in inputs), (dataset(output),))
    return RunRecord(facts, (main, *extra_processes))
