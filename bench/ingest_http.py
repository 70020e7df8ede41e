"""Throughput and latency of the HTTP intake through `ol2purview serve`: 16 keep-alive senders posting a typical
Spark COMPLETE event for ~10 s (BENCH_SECONDS to change). Prints requests/s and p50/p99 latency for each queue storage
(embedded SQLite, Azurite), with the queue trigger off so that only the acknowledgement path is measured
(bench/delivery_load.py measures intake and processing together)."""
from __future__ import annotations

import os
import secrets
import statistics
import tempfile
import threading
import time
from pathlib import Path

import requests

PROJECT_ROOT = Path(__file__).resolve().parent.parent
EVENT = (PROJECT_ROOT.parent / "shared" / "openlineage" / "events"
         / "compat-tests_bigquery-shakespeare-1.23.0__1729097631761_COMPLETE.json")
SENDERS = 16
WARM_UP_SECONDS = 1.0


def _sender(url: str, key: str, body: bytes, stop_at: float, measure_from: float,
            latencies: list[float], failures: list[int]) -> None:
    with requests.Session() as session:
        headers = {"x-functions-key": key, "Content-Type": "application/json"}
        while True:
            started = time.perf_counter()
            if started >= stop_at:
                return
            status = session.post(url, data=body, headers=headers, timeout=10).status_code
            if started >= measure_from:
                (latencies.append(time.perf_counter() - started) if status == 200 else failures.append(status))


def measure(storage: str, seconds: float) -> None:
    from tests.e2e.conftest import start_serve  # the same launcher as the end-to-end tests

    body = EVENT.read_bytes()
    with tempfile.TemporaryDirectory() as data:
        server = start_serve(Path(data), key=secrets.token_urlsafe(24), storage=storage, worker=False,
                             extra_args=("--log-level", "warning"))
        try:
            now = time.perf_counter()
            measure_from, stop_at = now + WARM_UP_SECONDS, now + WARM_UP_SECONDS + seconds
            latencies: list[float] = []
            failures: list[int] = []
            threads = [threading.Thread(target=_sender, args=(f"{server.url}/api/v1/lineage", server.key, body,
                                                                stop_at, measure_from, latencies, failures))
                       for _ in range(SENDERS)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        finally:
            server.stop()
    cuts = statistics.quantiles(latencies, n=100)
    print(f"ingest over HTTP ({storage} queue): {SENDERS} keep-alive senders, {len(body)} B COMPLETE event, "
          f"{seconds:.0f} s")
    print(f"  requests/s: {len(latencies) / seconds:.0f}  (non-200: {len(failures)})")
    print(f"  latency p50: {cuts[49] * 1000:.1f} ms  p99: {cuts[98] * 1000:.1f} ms")


def main() -> None:
    seconds = float(os.environ.get("BENCH_SECONDS", "10"))
    for storage in ("embedded", "azurite"):
        measure(storage, seconds)
