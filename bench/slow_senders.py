"""Slow senders against `ol2purview serve`: the latency of ordinary requests while 200 connections hold a request whose
body never finishes (each sends its headers and a few bytes, then stalls), compared with no slow senders. Before the
body deadline and the outstanding-request count moved after the body, 200 such senders took every slot for over a
minute. Prints the median and p99 of 100 sequential keep-alive POSTs of a typical event in each case."""

from __future__ import annotations

import secrets
import socket
import statistics
import tempfile
import time
from pathlib import Path

import requests

PROJECT_ROOT = Path(__file__).resolve().parent.parent
EVENT = (
    PROJECT_ROOT.parent
    / "shared"
    / "openlineage"
    / "events"
    / "compat-tests_bigquery-shakespeare-1.23.0__1729097631761_COMPLETE.json"
)
SLOW_SENDERS = 200
REQUESTS = 100


def _latencies(url: str, key: str, body: bytes) -> list[float]:
    found = []
    with requests.Session() as session:
        for _ in range(REQUESTS):
            started = time.perf_counter()
            response = session.post(
                f"{url}/api/v1/lineage",
                data=body,
                timeout=30,
                headers={"x-functions-key": key, "Content-Type": "application/json"},
            )
            found.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200, response.text
    return found


def _stall(url: str, key: str) -> list[socket.socket]:
    host, port = url.rsplit("//", 1)[1].split(":")
    head = (
        f"POST /api/v1/lineage HTTP/1.1\r\nHost: {host}\r\nx-functions-key: {key}\r\n"
        "Content-Type: application/json\r\nContent-Length: 10000\r\n\r\n{\"eventType\": "
    ).encode()
    sockets = []
    for _ in range(SLOW_SENDERS):
        sock = socket.create_connection((host, int(port)), timeout=10)
        sock.sendall(head)
        sockets.append(sock)
    return sockets


def _report(label: str, values: list[float]) -> None:
    p99 = statistics.quantiles(values, n=100)[98]
    print(
        f"{label}: median {statistics.median(values):.1f} ms, p99 {p99:.1f} ms over {len(values)} requests", flush=True
    )


def main() -> None:
    from tools.functions_host.launcher import start_serve  # a real `ol2purview serve` on free ports

    key = secrets.token_urlsafe(24)
    body = EVENT.read_bytes()
    with tempfile.TemporaryDirectory() as data:
        handle = start_serve(Path(data), key=key, worker=False)
        try:
            _report("no slow senders", _latencies(handle.url, key, body))
            stalled = _stall(handle.url, key)
            try:
                _report(f"{SLOW_SENDERS} slow senders holding a request", _latencies(handle.url, key, body))
            finally:
                for sock in stalled:
                    sock.close()
        finally:
            handle.stop()


if __name__ == "__main__":
    main()
