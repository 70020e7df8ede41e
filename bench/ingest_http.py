"""Throughput and latency of the HTTP intake through `ol2purview serve`: 16 keep-alive senders posting a typical
Spark COMPLETE event for ~10 s (BENCH_SECONDS to change). Prints requests/s and p50/p99 latency for each queue storage
(embedded SQLite, Azurite), with the queue trigger off so that only the acknowledgement path is measured
(bench/delivery_load.py measures intake and processing together)."""
from __future__ import annotations

import os
import secrets
import socket
import statistics
import subprocess
import sys
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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_server(data_dir: Path, port: int, key: str, storage: str) -> subprocess.Popen:
    log = open(data_dir / "serve.log", "wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "tools.cli", "serve", "--port", str(port), "--key", key, "--data", str(data_dir),
         "--storage", storage, "--no-worker", "--catalog-port", "0", "--log-level", "warning"],
        cwd=PROJECT_ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if "ready:" in (data_dir / "serve.log").read_text(errors="replace"):
            return process
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    raise RuntimeError("ol2purview serve did not start:\n" + (data_dir / "serve.log").read_text(errors="replace"))


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
    body = EVENT.read_bytes()
    key = secrets.token_urlsafe(24)
    port = _free_port()
    with tempfile.TemporaryDirectory() as data:
        server = _start_server(Path(data), port, key, storage)
        try:
            now = time.perf_counter()
            measure_from, stop_at = now + WARM_UP_SECONDS, now + WARM_UP_SECONDS + seconds
            latencies: list[float] = []
            failures: list[int] = []
            threads = [threading.Thread(target=_sender, args=(f"http://127.0.0.1:{port}/api/v1/lineage", key, body,
                                                                stop_at, measure_from, latencies, failures))
                       for _ in range(SENDERS)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        finally:
            server.terminate()
            server.wait(15)
    cuts = statistics.quantiles(latencies, n=100)
    print(f"ingest over HTTP ({storage} queue): {SENDERS} keep-alive senders, {len(body)} B COMPLETE event, "
          f"{seconds:.0f} s")
    print(f"  requests/s: {len(latencies) / seconds:.0f}  (non-200: {len(failures)})")
    print(f"  latency p50: {cuts[49] * 1000:.1f} ms  p99: {cuts[98] * 1000:.1f} ms")


def main() -> None:
    seconds = float(os.environ.get("BENCH_SECONDS", "10"))
    for storage in ("embedded", "azurite"):
        measure(storage, seconds)
