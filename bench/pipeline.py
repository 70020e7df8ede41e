"""The whole processing path: events per second through merge + map + build (no network), and catalog calls per run
through the whole local stack (`ol2purview serve` with embedded storage and the embedded catalog, over HTTP).

Workload: bench/merge.py's typical Databricks notebook run (START, RUNNING with environment-properties, COMPLETE with
30 columns of lineage). Run as `.venv/bin/python -m bench pipeline`.

The floor is `json.loads` of the same COMPLETE event's text, timed in the same run: the figures are CPU time of this
process (`time.process_time`, so that other processes on a busy machine do not count), each work interleaved with the
floor within every round; the ratio is the median of the rounds' ratios (`bench/report.py`).
"""

from __future__ import annotations

import json
import secrets
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Callable

import requests

from bench import MAPPINGS_PATH, report
from bench.merge import databricks_run
from olparser.lineage import LineageOptions, build_lineage, plan_fingerprint
from olparser.naming import MappingEngine
from olparser.runs.merge import merge_event

REPEATS = 7
RUNS = 300
STACK_RUNS = 20
WORKSPACE_HOSTS = "1234567890123456=adb-1234567890123456.5.azuredatabricks.net"


def _interleaved_rounds(count: int, works: dict[str, Callable[[], None]]) -> dict[str, list[float]]:
    """CPU seconds per event of each work (handling `count` events), REPEATS rounds; within a round the works run
    one after the other, so that a busy machine slows them alike."""
    samples: dict[str, list[float]] = {label: [] for label in works}
    for _ in range(REPEATS):
        for label, work in works.items():
            started = time.process_time()
            work()
            samples[label].append((time.process_time() - started) / count)
    return samples


def core_throughput() -> None:
    """COMPLETE events/s through merge (onto START+RUNNING) -> map every dataset -> build entities -> fingerprint,
    each with `json.loads` of the COMPLETE event as its floor."""
    engine = MappingEngine.from_path(MAPPINGS_PATH)
    options = LineageOptions(workspace_hosts=(("1234567890123456", "adb-1234567890123456.5.azuredatabricks.net"),))
    prepared = []
    for _ in range(RUNS):
        start, running, complete = databricks_run(str(uuid.uuid4()))
        prepared.append((merge_event(merge_event(None, start), running), complete))
    texts = [json.dumps(complete) for _, complete in prepared]
    plan = build_lineage(merge_event(prepared[0][0], prepared[0][1]), engine, options)

    def parse() -> None:
        for text in texts:
            json.loads(text)

    def build() -> None:
        for snapshot, complete in prepared:
            build_lineage(merge_event(snapshot, complete), engine, options)

    def build_and_fingerprint() -> None:
        for snapshot, complete in prepared:
            plan_fingerprint(build_lineage(merge_event(snapshot, complete), engine, options))

    floor = f"json.loads of the same {len(texts[0]) // 1000} KB COMPLETE"
    rounds = _interleaved_rounds(
        RUNS, {floor: parse, "merge + map + build": build, "merge + map + build + fingerprint": build_and_fingerprint}
    )
    floor_seconds = statistics.median(rounds[floor])
    entities = len(plan.entities) + len(plan.external_datasets)
    for label, samples in rounds.items():
        if label == floor:
            continue
        seconds = statistics.median(samples)
        print(
            f"{label}: {1 / seconds:,.0f} COMPLETE events/s on one core (median {seconds * 1e6:.0f} us CPU per "
            f"event; {entities} entities, 30 columns of lineage per run)"
        )
        report.record(
            __name__,
            f"{label}, Databricks COMPLETE with 30 columns of lineage, per event",
            seconds * 1e6,
            "µs CPU",
            floor_seconds * 1e6,
            floor,
            f"{1 / seconds:,.0f} events/s on one core",
            paired=statistics.median(s / f for s, f in zip(samples, rounds[floor], strict=True)),
        )


def stack_calls_per_run() -> None:
    """Catalog calls per run, counted by the embedded catalog, for runs over new and over cached datasets."""
    from tools.functions_host.launcher import start_serve  # the same launcher as the end-to-end tests

    with tempfile.TemporaryDirectory() as folder:
        serve = start_serve(
            Path(folder),
            key=secrets.token_urlsafe(16),
            extra_args=("--log-level", "warning"),
            env={"DATABRICKS_WORKSPACE_HOSTS": WORKSPACE_HOSTS},
        )
        try:
            calls, seconds = [], []
            with requests.Session() as session:
                for _ in range(STACK_RUNS):
                    serve.reset_catalog_calls()
                    started = time.perf_counter()
                    for event in databricks_run(str(uuid.uuid4())):
                        session.post(
                            f"{serve.url}/api/v1/lineage", headers={"x-functions-key": serve.key}, json=event
                        ).raise_for_status()
                    serve.wait_until_processed(interval=0.01)
                    seconds.append(time.perf_counter() - started)
                    calls.append(serve.catalog_calls()["total"])
        finally:
            serve.stop(timeout=30)
    print(
        f"catalog calls per run through serve: first run (new datasets) {calls[0]}, "
        f"then median {statistics.median(calls[1:]):.0f} (cached datasets); max {max(calls)}"
    )
    print(
        f"one run (3 events) from first POST to lineage in the catalog: median "
        f"{statistics.median(seconds) * 1e3:.0f} ms (includes the queue's polling)"
    )


def main() -> None:
    core_throughput()
    stack_calls_per_run()


if __name__ == "__main__":
    main()
