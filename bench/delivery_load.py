"""Load: 16 concurrent senders x 1,000 events through `ol2purview serve` in queue mode (Azurite, embedded catalog).

Each sender is one keep-alive HTTP session posting START and COMPLETE events of its own generated Databricks runs
(tools/samples/delivery.py). Prints requests/s, p50/p99 acknowledgement latency, errors, and the time until the
last event is processed and its lineage is in the catalog. `OL2PURVIEW_LOAD=SENDERSxEVENTS` (e.g. 4x100) changes the
size; `OL2PURVIEW_LOAD_STORAGE=embedded` uses the SQLite queues instead of Azurite (whose receive and delete calls
slow down as its queue grows: ~3.5 ms a message with 100 waiting, ~29 ms with 6,000, on this 2-core machine).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import requests

from tools.samples.delivery import ENDPOINT, databricks_run

SENDERS, EVENTS_PER_SENDER = 16, 1000


@dataclass(frozen=True)
class LoadResult:
    senders: int
    events: int
    errors: int
    send_seconds: float
    latencies: tuple[float, ...]  # seconds per acknowledged request
    landed_seconds: float  # from the first request until everything was processed

    @property
    def requests_per_second(self) -> float:
        return self.events / self.send_seconds

    def percentile(self, p: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]

    def describe(self) -> str:
        return (
            f"{self.senders} senders x {self.events // self.senders} events: {self.errors} errors, "
            f"{self.requests_per_second:,.0f} requests/s, acknowledgement p50 {self.percentile(50) * 1e3:.1f} ms "
            f"p99 {self.percentile(99) * 1e3:.1f} ms (median of {len(self.latencies)}: "
            f"{statistics.median(self.latencies) * 1e3:.1f} ms); all sent in {self.send_seconds:.1f} s, "
            f"last event in the catalog after {self.landed_seconds:.1f} s"
        )


def sender_events(sender: int, count: int, first_run: int = 0) -> list[dict]:
    """`count` events (START, COMPLETE pairs) of runs of their own for one sender."""
    runs = (count + 1) // 2
    start = first_run + sender * runs
    return [event for index in range(start, start + runs) for event in databricks_run(index)][:count]


def run_load(
    url: str, key: str, senders: int, per_sender: int, wait_processed: Callable[[], object], first_run: int = 0
) -> LoadResult:
    """Send from `senders` threads at once, then call `wait_processed` (it returns once the queue is drained)."""
    batches = [sender_events(s, per_sender, first_run) for s in range(senders)]

    def send(events: list[dict]) -> tuple[list[float], int]:
        latencies, errors = [], 0
        with requests.Session() as session:
            for event in events:
                started = time.perf_counter()
                try:
                    response = session.post(url + ENDPOINT, headers={"x-functions-key": key}, json=event, timeout=60)
                    errors += response.status_code != 200
                except requests.RequestException:
                    errors += 1
                latencies.append(time.perf_counter() - started)
        return latencies, errors

    started = time.monotonic()
    with ThreadPoolExecutor(senders) as pool:
        results = list(pool.map(send, batches))
    sent = time.monotonic() - started
    wait_processed()
    landed = time.monotonic() - started
    return LoadResult(
        senders,
        senders * per_sender,
        sum(e for _, e in results),
        sent,
        tuple(t for latencies, _ in results for t in latencies),
        landed,
    )


def _size() -> tuple[int, int]:
    text = os.environ.get("OL2PURVIEW_LOAD", "")
    if "x" in text:
        senders, events = text.split("x", 1)
        return int(senders), int(events)
    return SENDERS, EVENTS_PER_SENDER


def main() -> None:
    from tools.functions_host.launcher import start_serve  # the same launcher as the end-to-end tests
    from tools.samples.delivery import catalog_dump, counts_by_type

    senders, per_sender = _size()
    with tempfile.TemporaryDirectory() as folder:
        storage = os.environ.get("OL2PURVIEW_LOAD_STORAGE", "azurite")
        serve = start_serve(Path(folder) / "load", key="load-key", storage=storage)
        try:
            result = run_load(
                serve.url, serve.key, senders, per_sender, lambda: serve.wait_until_processed(timeout=3600)
            )
            status = serve.status()
            processes = counts_by_type(catalog_dump(serve.atlas_url)).get("databricks_process", 0)
        finally:
            serve.stop()
    print(f"queue storage: {storage}")
    print(result.describe())
    worker = status.get("worker") or {}
    print(
        f"worker: {worker.get('succeeded')} succeeded, {worker.get('failed')} failed, "
        f"{status['queues']['lineage-events']['poisonCount']} poisoned; {processes} processes in the catalog "
        f"(expected {senders * ((per_sender + 1) // 2)})"
    )


if __name__ == "__main__":
    main()
