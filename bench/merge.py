"""Run merging: merges per second of the pure merger, and the per-event cost of the SQLite run-state store.

The workload is a typical Databricks notebook write: START (two inputs, one output with a 30-column schema),
RUNNING carrying the `environment-properties` facet, COMPLETE with column lineage for all 30 columns.
"""
from __future__ import annotations

import statistics
import tempfile
import time
import uuid
from pathlib import Path

from olparser.runs.codec import to_json
from olparser.runs.merge import merge_event
from olparser.runs.sqlite_store import SqliteRunStateStore

COLUMNS = 30
PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/spark"
REPEATS = 7


def databricks_run(run_id: str) -> list[dict]:
    """START, RUNNING (environment-properties), COMPLETE (30 columns of lineage) of one run."""
    lake = "abfss://curated@contosolake.dfs.core.windows.net"
    raw = "abfss://raw@contosolake.dfs.core.windows.net"
    schema = {"_producer": PRODUCER, "fields": [{"name": f"col_{i}", "type": "string"} for i in range(COLUMNS)]}

    def dataset(namespace: str, name: str, table: str) -> dict:
        return {"namespace": namespace, "name": name, "facets": {
            "dataSource": {"_producer": PRODUCER, "name": namespace, "uri": namespace},
            "schema": schema,
            "symlinks": {"_producer": PRODUCER, "identifiers": [
                {"namespace": "hive://adb-1234.5.azuredatabricks.net", "name": table, "type": "TABLE"}]},
        }}

    inputs = [dataset(raw, "sales/orders", "raw.orders"), dataset(raw, "sales/customers", "raw.customers")]
    output = dataset(lake, "sales/orders_enriched", "curated.orders_enriched")
    lineage = {"_producer": PRODUCER, "fields": {f"col_{i}": {"inputFields": [
        {"namespace": raw, "name": "sales/orders", "field": f"col_{i}",
         "transformations": [{"type": "DIRECT", "subtype": "IDENTITY", "description": "", "masking": False}]},
        {"namespace": raw, "name": "sales/customers", "field": "customer_id",
         "transformations": [{"type": "INDIRECT", "subtype": "JOIN", "description": "", "masking": False}]},
    ]} for i in range(COLUMNS)}}
    environment = {"_producer": PRODUCER, "environment-properties": {
        "spark.databricks.notebook.path": "/Repos/etl/sales/enrich_orders",
        "spark.databricks.job.id": "881",
        "spark.databricks.job.runId": "42017",
        "spark.databricks.clusterUsageTags.clusterOwnerOrgId": "1234567890123456",
        "spark.databricks.clusterUsageTags.clusterName": "etl-cluster",
        "user": "etl@contoso.com",
        "mountPoints": [{"mountPoint": f"/mnt/m{i}", "source": f"abfss://c{i}@contosolake.dfs.core.windows.net/"}
                        for i in range(8)],
    }}
    job = {"namespace": "adb-1234.5.azuredatabricks.net", "name": "databricks_shell.append_data.curated_orders",
           "facets": {"jobType": {"_producer": PRODUCER, "processingType": "BATCH", "integration": "SPARK",
                                  "jobType": "SQL_JOB"}}}
    parent = {"_producer": PRODUCER, "run": {"runId": str(uuid.uuid4())},
              "job": {"namespace": job["namespace"], "name": "databricks_shell"}}

    def event(event_type: str, time_text: str, run_facets: dict, with_lineage: bool) -> dict:
        out = {**output, "facets": {**output["facets"], **({"columnLineage": lineage} if with_lineage else {})}}
        return {"eventType": event_type, "eventTime": time_text, "producer": PRODUCER,
                "run": {"runId": run_id, "facets": {"parent": parent, **run_facets}},
                "job": job, "inputs": inputs, "outputs": [out]}

    return [
        event("START", "2025-03-01T10:00:00.100Z", {}, False),
        event("RUNNING", "2025-03-01T10:00:01.200Z", {"environment-properties": environment}, False),
        event("COMPLETE", "2025-03-01T10:00:09.300Z", {}, True),
    ]


def _median_seconds_per_event(runs: list[list[dict]], handle) -> float:
    samples = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        for events in runs:
            handle(events)
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
    print(f"SqliteRunStateStore.merge: median {per_event * 1e3:.3f} ms per event "
          f"({1 / per_event:,.0f} events/s, load + merge + save in one transaction)")


if __name__ == "__main__":
    main()
