"""Hand-made run-history records for the history tests, and a history table on Azurite whose requests are counted."""

from __future__ import annotations

import uuid
from typing import Any

from olparser.history.model import DatasetRef, ProcessRun, RunFacts, RunRecord
from tests.support.table_requests import RequestCount

RETENTION_DAYS = 30
DAY = 86400.0
T0 = 1_772_409_600.0  # 2026-03-02T00:00:00Z
LAKE = "https://contosolake.dfs.core.windows.net"
ADLS = "azure_datalake_gen2_path"


def dataset(name: str) -> DatasetRef:
    return DatasetRef(f"{LAKE}/{name}", ADLS)


def record(
    run_id: str,
    start: float,
    end: float | None,
    *,
    inputs: tuple[str, ...] = ("raw/orders",),
    output: str = "curated/orders",
    process: str = "orders",
    status: str = "COMPLETE",
    extra_processes: tuple[ProcessRun, ...] = (),
) -> RunRecord:
    """A run of notebook job `process` reading `inputs` and writing `output` (lake paths)."""
    facts = RunFacts(
        run_id,
        f"ns/{process}",
        f"databricks://h/notebooks/{process}",
        "databricks_notebook",
        start,
        end,
        status,
        {"user": "etl@contoso.com", "clusterId": "0101-1"},
    )
    main = ProcessRun(
        f"databricks://h/notebooks/{process}/processes/{output}",
        "databricks_process",
        process,
        tuple(dataset(i) for i in inputs),
        (dataset(output),),
    )
    return RunRecord(facts, (main, *extra_processes))


def counted_table(
    connection_string: str, name: str | None = None, counted: RequestCount | None = None
) -> tuple[Any, RequestCount]:
    """A history table on Azurite (a new one unless `name` is given) whose client counts its requests."""
    from azure.data.tables import TableServiceClient

    counted = counted if counted is not None else RequestCount()
    service = TableServiceClient.from_connection_string(connection_string, raw_request_hook=counted)
    return service.create_table_if_not_exists(name or f"hist{uuid.uuid4().hex[:12]}"), counted
