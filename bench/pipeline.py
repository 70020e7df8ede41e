"""The whole processing path: events per second through merge + map + build (no network), and catalog calls per run
through the whole local stack (`ol2purview serve` with embedded storage and the embedded catalog, over HTTP).

Workload: bench/merge.py's typical Databricks notebook run (START, RUNNING with environment-properties, COMPLETE with
30 columns of lineage). Run as `.venv/bin/python -m bench pipeline`.
"""
from __future__ import annotations

import secrets
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import requests

from bench.merge import databricks_run
from olparser.lineage import LineageOptions, build_lineage, plan_fingerprint
from olparser.naming import MappingEngine
from olparser.runs.merge import merge_event
from bench import MAPPINGS_PATH

REPEATS = 7
RUNS = 300
STACK_RUNS = 20
WORKSPACE_HOSTS = "1234567890123456=adb-1234567890123456.5.azuredatabricks.net"


def _median_rate(count: int, work) -> tuple[float, float]:
    """(median events/s, median microseconds per event) over REPEATS timings of `work()` handling `count` events."""
    samples = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        work()
        samples.append((time.perf_counter() - started) / count)
    per_event = statistics.median(samples)
    return 1 / per_event, per_event * 1e6


def core_throughput() -> None:
    """COMPLETE events/s through merge (onto START+RUNNING) -> map every dataset -> build entities -> fingerprint."""
    engine = MappingEngine.from_path(MAPPINGS_PATH)
    options = LineageOptions(workspace_hosts=(("1234567890123456", "adb-1234567890123456.5.azuredatabricks.net"),))
    prepared = []
    for _ in range(RUNS):
        start, running, complete = databricks_run(str(uuid.uuid4()))
        prepared.append((merge_event(merge_event(None, start), running), complete))
    plan = build_lineage(merge_event(prepared[0][0], prepared[0][1]), engine, options)

    def build() -> None:
        for snapshot, complete in prepared:
            build_lineage(merge_event(snapshot, complete), engine, options)

    def build_and_fingerprint() -> None:
        for snapshot, complete in prepared:
            plan_fingerprint(build_lineage(merge_event(snapshot, complete), engine, options))

    entities = len(plan.entities) + len(plan.external_datasets)
    for label, work in (("merge + map + build", build), ("merge + map + build + fingerprint", build_and_fingerprint)):
        rate, micros = _median_rate(RUNS, work)
        print(f"{label}: {rate:,.0f} COMPLETE events/s on one core (median {micros:.0f} us per event; "
              f"{entities} entities, 30 columns of lineage per run)")


def stack_calls_per_run() -> None:
    """Catalog calls per run, counted by the embedded catalog, for runs over new and over cached datasets."""
    from tests.e2e.conftest import start_serve  # the same launcher as the end-to-end tests

    with tempfile.TemporaryDirectory() as folder:
        serve = start_serve(Path(folder), key=secrets.token_urlsafe(16), extra_args=("--log-level", "warning"),
                            env={"DATABRICKS_WORKSPACE_HOSTS": WORKSPACE_HOSTS})
        try:
            calls, seconds = [], []
            with requests.Session() as session:
                for _ in range(STACK_RUNS):
                    serve.reset_catalog_calls()
                    started = time.perf_counter()
                    for event in databricks_run(str(uuid.uuid4())):
                        session.post(f"{serve.url}/api/v1/lineage", headers={"x-functions-key": serve.key},
                                     json=event).raise_for_status()
                    serve.wait_until_processed(interval=0.01)
                    seconds.append(time.perf_counter() - started)
                    calls.append(serve.catalog_calls()["total"])
        finally:
            serve.stop(timeout=30)
    print(f"catalog calls per run through serve: first run (new datasets) {calls[0]}, "
          f"then median {statistics.median(calls[1:]):.0f} (cached datasets); max {max(calls)}")
    print(f"one run (3 events) from first POST to lineage in the catalog: median "
          f"{statistics.median(seconds) * 1e3:.0f} ms (includes the queue's polling)")


def main() -> None:
    core_throughput()
    stack_calls_per_run()


if __name__ == "__main__":
    main()
