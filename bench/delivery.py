"""Lineage queue throughput on the embedded SQLite queue and on Azurite: send, receive + delete, a worker draining
the queue with a no-op handler; and the cost of a 2 MB claim check (deliver + open). Prints medians of 3 rounds."""

from __future__ import annotations

import json
import statistics
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

from bench import report
from olparser.adapters.delivery.claim_check import BlobClaimCheckStore, ClaimCheckStore, FolderClaimCheckStore
from olparser.adapters.delivery.queues import (
    MAX_RECEIVE,
    AzureQueueService,
    LineageQueue,
    QueueService,
    SqliteQueueService,
    poison_queue_name,
)
from olparser.adapters.delivery.sender import EventCourier
from tools.azurite import start_azurite
from tools.functions_host.queue_worker import QueueWorker
from tools.functions_host.trigger_settings import QueueTriggerSettings

MESSAGES = 500
ROUNDS = 3
SENDERS = 16
SMALL_EVENT = json.dumps(
    {
        "eventType": "COMPLETE",
        "run": {"runId": "r"},
        "job": {"namespace": "ns", "name": "j"},
        "outputs": [{"namespace": "abfss://c@acct.dfs.core.windows.net", "name": f"/t/{i}"} for i in range(10)],
    }
).encode()
BIG_EVENT = json.dumps(
    {
        "eventType": "COMPLETE",
        "run": {
            "runId": "r",
            "facets": {
                "spark.logicalPlan": {
                    "plan": [{"class": "Project", "projectList": [f"col_{i}"]} for i in range(40_000)]
                }
            },
        },
    }
).encode()


def _median_rate(measure: Callable[[], float]) -> float:
    return statistics.median(MESSAGES / measure() for _ in range(ROUNDS))


def _fresh(service: QueueService) -> tuple[LineageQueue, LineageQueue]:
    name = f"bench-{uuid.uuid4().hex[:10]}"
    return service.queue(name), service.queue(poison_queue_name(name))


def _send_then_drain(service: QueueService, courier: EventCourier) -> tuple[float, float]:
    queue, _ = _fresh(service)
    text = courier.deliver(SMALL_EVENT, "r", "COMPLETE")
    started = time.perf_counter()
    for _ in range(MESSAGES):
        queue.send(text)
    sent = time.perf_counter()
    drained = 0
    while drained < MESSAGES:
        for message in queue.receive(MAX_RECEIVE, 30):
            queue.delete(message)
            drained += 1
    return sent - started, time.perf_counter() - sent


def _concurrent_send(service: QueueService, courier: EventCourier, threads: int) -> float:
    """Seconds for `threads` threads to send MESSAGES messages between them (as concurrent requests do)."""
    queue, _ = _fresh(service)
    text = courier.deliver(SMALL_EVENT, "r", "COMPLETE")
    with ThreadPoolExecutor(threads) as pool:
        started = time.perf_counter()
        list(pool.map(lambda _: queue.send(text), range(MESSAGES)))
        return time.perf_counter() - started


def _worker_drain(service: QueueService) -> float:
    queue, poison = _fresh(service)
    for _ in range(MESSAGES):
        queue.send("{}")
    settings = QueueTriggerSettings(batch_size=16, new_batch_threshold=8, max_polling_interval=0.5)
    started = time.perf_counter()
    with QueueWorker(queue, poison, lambda text, count: None, settings, lease_seconds=30) as worker:
        while worker.counts.succeeded < MESSAGES:
            time.sleep(0.01)
    return time.perf_counter() - started


def _claim_check_ms(store: ClaimCheckStore) -> float:
    courier = EventCourier(store)
    timings = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        courier.open_event(courier.deliver(BIG_EVENT, "r", "COMPLETE"))
        timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings)


def _report(label: str, service: QueueService, store: ClaimCheckStore) -> None:
    courier = EventCourier(store)
    rounds = [_send_then_drain(service, courier) for _ in range(ROUNDS)]
    send_rate = statistics.median(MESSAGES / s for s, _ in rounds)
    drain_rate = statistics.median(MESSAGES / d for _, d in rounds)
    worker_rate = _median_rate(lambda: _worker_drain(service))
    print(
        f"{label:8s} send {send_rate:8.0f} msg/s | receive+delete {drain_rate:8.0f} msg/s | "
        f"worker (no-op handler) {worker_rate:8.0f} msg/s | "
        f"claim check {len(BIG_EVENT) / 1e6:.1f} MB deliver+open {_claim_check_ms(store):6.0f} ms",
        flush=True,
    )
    paired = [
        (MESSAGES / _concurrent_send(service, courier, SENDERS), MESSAGES / _concurrent_send(service, courier, 1))
        for _ in range(ROUNDS)
    ]
    how = "group commit" if label == "sqlite" else "no batch put in Azure queues: concurrent puts"
    report.record(
        __name__,
        f"sends from {SENDERS} threads, {label} queue ({how})",
        statistics.median(c for c, _ in paired),
        "messages/s",
        statistics.median(s for _, s in paired),
        "one thread sending",
        paired=statistics.median(c / s for c, s in paired),
    )


def main() -> None:
    print(f"medians of {ROUNDS} rounds, {MESSAGES} messages per round, one client thread (worker: 24 threads)")
    with tempfile.TemporaryDirectory() as tmp:
        sqlite = SqliteQueueService(Path(tmp) / "queues.sqlite3")
        _report("sqlite", sqlite, FolderClaimCheckStore(Path(tmp) / "claim-checks", "lineage-events"))
        sqlite.close()
        with start_azurite(Path(tmp) / "azurite") as azurite:
            _report(
                "azurite",
                AzureQueueService(azurite.connection_string),
                BlobClaimCheckStore(azurite.connection_string, "lineage-events"),
            )


if __name__ == "__main__":
    main()
