"""One run from its first POST to its lineage in the catalog, through `ol2purview serve` (embedded storage, the
embedded catalog, the queue trigger in the same process): the three events of bench/merge.py's Databricks run are
posted one after the other, then the bench waits until the queue is empty and nothing is in flight (the COMPLETE's
lineage is written by then).

Its floor, in the same run: the same three events handed to the pipeline in this process (`Runtime.process`, the
queue trigger's own call) against another embedded catalog: the work that must happen, without HTTP, contract and
queue. Medians over LATENCY_RUNS runs after a first one that registers the datasets.
"""

from __future__ import annotations

import os
import secrets
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import requests

from bench import report
from bench.merge import databricks_run

WORKSPACE_HOSTS = "1234567890123456=adb-1234567890123456.5.azuredatabricks.net"
RUNS = int(os.environ.get("LATENCY_RUNS", "30"))


def through_serve(runs: int) -> list[float]:
    """Seconds from the first POST of each run to its lineage in the catalog (the first run left out)."""
    from tools.functions_host.launcher import start_serve  # the same launcher as the end-to-end tests

    seconds = []
    with tempfile.TemporaryDirectory() as folder:
        serve = start_serve(
            Path(folder),
            key=secrets.token_urlsafe(16),
            extra_args=("--log-level", "warning"),
            env={"DATABRICKS_WORKSPACE_HOSTS": WORKSPACE_HOSTS},
        )
        try:
            with requests.Session() as session:
                for _ in range(runs + 1):
                    events = databricks_run(str(uuid.uuid4()))
                    started = time.perf_counter()
                    for event in events:
                        session.post(
                            f"{serve.url}/api/v1/lineage",
                            headers={"x-functions-key": serve.key},
                            json=event,
                            timeout=30,
                        ).raise_for_status()
                    serve.wait_until_processed(interval=0.002)
                    seconds.append(time.perf_counter() - started)
        finally:
            serve.stop(timeout=30)
    return seconds[1:]


def in_process(runs: int) -> list[float]:
    """Seconds for the pipeline to process each run's events in this process (the first run left out)."""
    from olparser.adapters import operations
    from olparser.adapters.runtime import Runtime
    from olparser.settings import Settings
    from tools.catalog import CatalogServer

    seconds = []
    with tempfile.TemporaryDirectory() as folder:
        catalog = CatalogServer(Path(folder) / "catalog.db", port=0).start()
        runtime = Runtime(
            Settings.from_env(
                {
                    **os.environ,
                    "ATLAS_ENDPOINT": catalog.atlas_url,
                    "OL2PURVIEW_DATA_DIR": folder,
                    "DATABRICKS_WORKSPACE_HOSTS": WORKSPACE_HOSTS,
                }
            )
        )
        try:
            for _ in range(runs + 1):
                events = databricks_run(str(uuid.uuid4()))
                started = time.perf_counter()
                for event in events:
                    operations.process_event(runtime, event)
                seconds.append(time.perf_counter() - started)
        finally:
            runtime.close()
            catalog.stop()
    return seconds[1:]


def main() -> None:
    floor = statistics.median(in_process(RUNS)) * 1000
    served = through_serve(RUNS)
    median, p90 = statistics.median(served) * 1000, statistics.quantiles(served, n=10)[8] * 1000
    print(
        f"one run (3 events) from first POST to lineage in the catalog through serve: median {median:.0f} ms, "
        f"p90 {p90:.0f} ms ({RUNS} runs); the pipeline alone in-process: median {floor:.0f} ms"
    )
    report.record(
        __name__,
        "one run (3 events) from its first POST to its lineage in the catalog, through serve",
        median,
        "ms",
        floor,
        "the same events through the pipeline in-process (no HTTP, no queue)",
        f"p90 {p90:.0f} ms",
    )
