"""Run merging: merges per second of the pure merger, and the per-event cost of the SQLite run-state store.

The workload is a typical Databricks notebook write: START (two inputs, one output with a 30-column schema),
RUNNING carrying the `environment-properties` facet, COMPLETE with column lineage for all 30 columns.
"""

from __future__ import annotations

import statistics
import tempfile
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

from olparser.adapters.run_state.sqlite_store import SqliteRunStateStore
from olparser.runs.codec import to_json
from olparser.runs.merge import merge_event
from tools.samples.databricks import ColumnEdge, Dataset, NotebookRun, events

COLUMNS = 30
PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/spark"
REPEATS = 7


RAW = "abfss://raw@contosolake.dfs.core.windows.net"
CURATED = "abfss://curated@contosolake.dfs.core.windows.net"
HIVE = "hive://adb-1234.5.azuredatabricks.net"
BENCH_COLUMNS = tuple(f"col_{i}" for i in range(COLUMNS))


def databricks_run(run_id: str) -> list[dict]:
    """START, RUNNING (environment-properties), COMPLETE (30 columns of lineage) of one run (the one builder of
    Databricks runs, tools/samples/databricks.py)."""
    orders = Dataset(RAW, "sales/orders", BENCH_COLUMNS, data_source=True, symlink=(HIVE, "raw.orders"))
    customers = Dataset(RAW, "sales/customers", BENCH_COLUMNS, data_source=True, symlink=(HIVE, "raw.customers"))
    output = Dataset(
        CURATED, "sales/orders_enriched", BENCH_COLUMNS, data_source=True, symlink=(HIVE, "curated.orders_enriched")
    )
    lineage = tuple(
        edge
        for column in BENCH_COLUMNS
        for edge in (ColumnEdge(column, 0, column), ColumnEdge(column, 1, "customer_id", "INDIRECT", "JOIN"))
    )
    return events(
        NotebookRun(
            run_id=run_id,
            started=datetime(2025, 3, 1, 10, 0, 0, 100000, tzinfo=timezone.utc),
            statement="append_data.curated_orders",
            inputs=(orders, customers),
            output=output,
            notebook="/Repos/etl/sales/enrich_orders",
            column_lineage=lineage,
            mounts=tuple((f"/mnt/m{i}", f"abfss://c{i}@contosolake.dfs.core.windows.net/") for i in range(8)),
            job_namespace="adb-1234.5.azuredatabricks.net",
            workspace_id="1234567890123456",
            environment_extra={"spark.databricks.job.id": "881", "spark.databricks.job.runId": "42017"},
            job_type=True,
            offsets=(0.0, 1.1, 9.2),
        )
    )


def _median_seconds_per_event(runs: list[list[dict]], handle) -> float:
    samples = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        for run_events in runs:
            handle(run_events)
        samples.append((time.perf_counter() - started) / (len(runs) * 3))
    return statistics.median(samples)


def main() -> None:
    runs = [databricks_run(str(uuid.uuid4())) for _ in range(300)]

    def pure(events: list[dict]) -> None:
        snapshot = None
        for event in events:
            snapshot = merge_event(snapshot, event)

    per_merge = _median_seconds_per_event(runs, pure)
    print(f"pure merge_event: {1 / per_merge:,.0f} merges/s (median {per_merge * 1e6:.1f} us per event)")

    snapshot = None
    for event in runs[0]:
        snapshot = merge_event(snapshot, event)
    print(f"merged Databricks run: {len(to_json(snapshot)):,} bytes of state JSON")

    with tempfile.TemporaryDirectory() as folder:
        store_runs = [databricks_run(str(uuid.uuid4())) for _ in range(100)]
        with SqliteRunStateStore(Path(folder) / "bench.sqlite3", ttl_seconds=3600) as store:
            per_event = _median_seconds_per_event(store_runs, lambda events: [store.merge_versioned(e) for e in events])
    print(
        f"SqliteRunStateStore.merge: median {per_event * 1e3:.3f} ms per event "
        f"({1 / per_event:,.0f} events/s, load + merge + save in one transaction)"
    )


if __name__ == "__main__":
    main()
