"""Throughput and latency of the HTTP intake through `ol2purview serve`: 16 keep-alive senders posting a typical
Spark COMPLETE event for 6 s a round (BENCH_SECONDS to change), with the queue trigger off so that only the
acknowledgement path is measured (bench/delivery_load.py measures intake and processing together).

Its floor, with the same client in the same run: a bare uvicorn + Starlette endpoint that parses the same event and
inserts it into SQLite with the queue's durability (bench/_floor_ingest.py). Rounds alternate floor, embedded SQLite
queue, Azurite (BENCH_ROUNDS, default 5); the ratio reported is the median of each round's ratio to that round's
floor, so that load from elsewhere on the machine, which changes from round to round, falls on both alike.
"""

from __future__ import annotations

import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import requests

from bench import report

PROJECT_ROOT = Path(__file__).resolve().parent.parent
EVENT = (
    PROJECT_ROOT.parent
    / "shared"
    / "openlineage"
    / "events"
    / "compat-tests_bigquery-shakespeare-1.23.0__1729097631761_COMPLETE.json"
)
SENDERS = 16
WARM_UP_SECONDS = 1.0


@dataclass(frozen=True)
class Load:
    rate: float  # acknowledged requests per second
    p50_ms: float
    p99_ms: float
    failures: int


def _sender(
    url: str,
    headers: dict[str, str],
    body: bytes,
    stop_at: float,
    measure_from: float,
    latencies: list[float],
    failures: list[int],
) -> None:
    with requests.Session() as session:
        while True:
            started = time.perf_counter()
            if started >= stop_at:
                return
            status = session.post(url, data=body, headers=headers, timeout=10).status_code
            if started >= measure_from:
                (latencies.append(time.perf_counter() - started) if status == 200 else failures.append(status))


def load(url: str, headers: dict[str, str], body: bytes, seconds: float) -> Load:
    """SENDERS keep-alive senders posting `body` for `seconds` after a warm-up."""
    now = time.perf_counter()
    measure_from, stop_at = now + WARM_UP_SECONDS, now + WARM_UP_SECONDS + seconds
    latencies: list[float] = []
    failures: list[int] = []
    threads = [
        threading.Thread(target=_sender, args=(url, headers, body, stop_at, measure_from, latencies, failures))
        for _ in range(SENDERS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    cuts = statistics.quantiles(latencies, n=100)
    return Load(len(latencies) / seconds, cuts[49] * 1000, cuts[98] * 1000, len(failures))


def measure_floor(body: bytes, seconds: float) -> Load:
    with tempfile.TemporaryDirectory() as data:
        process = subprocess.Popen(
            [sys.executable, "-m", "bench._floor_ingest", "0", str(Path(data) / "floor.db")],
            cwd=PROJECT_ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            url = process.stdout.readline().strip().removeprefix("listening on ")  # type: ignore[union-attr]
            return load(url, {"Content-Type": "application/json"}, body, seconds)
        finally:
            process.terminate()
            process.wait(30)


def measure_serve(storage: str, body: bytes, seconds: float) -> Load:
    from tools.functions_host.launcher import start_serve  # the same launcher as the end-to-end tests

    with tempfile.TemporaryDirectory() as data:
        server = start_serve(
            Path(data),
            key=secrets.token_urlsafe(24),
            storage=storage,
            worker=False,
            extra_args=("--log-level", "warning"),
        )
        try:
            headers = {"x-functions-key": server.key, "Content-Type": "application/json"}
            return load(f"{server.url}/api/v1/lineage", headers, body, seconds)
        finally:
            server.stop()


def _median(loads: list[Load]) -> Load:
    return Load(
        statistics.median(x.rate for x in loads),
        statistics.median(x.p50_ms for x in loads),
        statistics.median(x.p99_ms for x in loads),
        sum(x.failures for x in loads),
    )


def main() -> None:
    seconds = float(os.environ.get("BENCH_SECONDS", "6"))
    rounds = int(os.environ.get("BENCH_ROUNDS", "5"))
    body = EVENT.read_bytes()
    runs: dict[str, list[Load]] = {"floor": [], "embedded": [], "azurite": []}
    for _ in range(rounds):
        runs["floor"].append(measure_floor(body, seconds))
        for storage in ("embedded", "azurite"):
            runs[storage].append(measure_serve(storage, body, seconds))
    print(
        f"ingest over HTTP: {SENDERS} keep-alive senders, {len(body)} B COMPLETE event, {rounds} rounds of "
        f"{seconds:.0f} s each, medians"
    )
    medians = {name: _median(loads) for name, loads in runs.items()}
    for name, m in medians.items():
        print(
            f"  {name}: {m.rate:.0f} requests/s, p50 {m.p50_ms:.1f} ms, p99 {m.p99_ms:.1f} ms "
            f"(non-200: {m.failures}); rounds: {', '.join(f'{x.rate:.0f}' for x in runs[name])}"
        )
    floor = medians["floor"]
    floor_what = "bare uvicorn + Starlette endpoint, json.loads + SQLite insert (FULL sync)"
    for storage, label in (("embedded", "SQLite queue"), ("azurite", "Azurite queue")):
        m = medians[storage]
        paired = statistics.median(x.rate / f.rate for x, f in zip(runs[storage], runs["floor"], strict=True))
        report.record(
            __name__,
            f"intake through serve, {SENDERS} keep-alive senders, {len(body) // 1000} KB event, {label}",
            m.rate,
            "requests/s",
            floor.rate,
            floor_what,
            f"p50 {m.p50_ms:.1f} ms, p99 {m.p99_ms:.1f} ms (floor p50 {floor.p50_ms:.1f} ms)",
            paired,
        )
