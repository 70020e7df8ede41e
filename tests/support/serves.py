"""`ol2purview serve` for the end-to-end tests, on top of the launcher (tools/functions_host/launcher.py:
`start_serve`, `start_worker`): a serve on each run-state store, the group of modules that take the default ports,
and reading what an intake-only serve queued."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tools.functions_host.launcher import ServeHandle, start_serve

# The modules whose serves take the default ports (7071, 21000), as a user's do: one worker runs them all (`make test`
# runs --dist loadgroup), so one's serve never takes the port another expects to find taken, or free.
DEFAULT_PORTS_GROUP = pytest.mark.xdist_group("default_ports")
STORAGE_OF_RUN_STATE_STORE = {"sqlite": "embedded", "table": "azurite"}  # the queues each store runs with


def start_serve_on_store(kind: str, folder: Path, env: dict[str, str], key: str = "e2e-key") -> ServeHandle:
    """`start_serve` on one run-state store, for module-scoped fixtures parametrized over ("sqlite", "table"):
    RUN_STATE_STORE=sqlite with the embedded queues, or RUN_STATE_STORE=table on the Azurite that serve starts."""
    if kind == "table":
        from tests.support.azurite_fixture import require_azurite

        require_azurite()
        env = {**env, "RUN_STATE_STORE": "table"}
    return start_serve(folder, key=key, env=env, storage=STORAGE_OF_RUN_STATE_STORE[kind])


@dataclass(frozen=True)
class QueuedEvent:
    """One event taken off the lineage queue of an embedded-storage serve."""

    run_id: str | None
    event_type: str | None
    event: dict[str, Any]
    dequeue_count: int


def drain_queue(handle: ServeHandle, queue_name: str = "lineage-events") -> list[QueuedEvent]:
    """Take every message off the serve's embedded lineage queue (oldest first) and open its envelope, so that a
    test sees exactly what it sent. The serve must run with `--storage embedded --no-worker`."""
    from olparser.adapters.delivery.envelope import parse
    from olparser.adapters.delivery.queues import SqliteQueueService, embedded_queue_path
    from olparser.adapters.delivery.sender import courier_from_settings
    from olparser.settings import Settings

    service = SqliteQueueService(embedded_queue_path(handle.data_dir))
    courier = courier_from_settings(Settings(data_dir=handle.data_dir))
    queue = service.queue(queue_name)
    taken: list[QueuedEvent] = []
    try:
        while batch := queue.receive(32, 60):
            for message in batch:
                envelope = parse(message.text)
                taken.append(
                    QueuedEvent(
                        envelope.run_id, envelope.event_type, courier.open_event(message.text), message.dequeue_count
                    )
                )
                queue.delete(message)
    finally:
        service.close()
    return taken
