"""End-to-end fixtures: `ol2purview serve` (and `ol2purview worker`) as real subprocesses, each on the port the
system gives it (`--port 0`, read back from its `ready:` line), so two servers never race for one port. The launcher
is `tools/functions_host/launcher.py` (the benchmarks start servers with it too).

`start_serve(data_dir, storage=..., worker=...)` returns a `ServeHandle`: url, keys, its embedded catalog, the status
endpoint, `wait_until_processed()`, `stop()`. The `serve` fixture gives one per test module in intake-only mode
(`--no-worker --storage embedded`, so a test reads what was queued with `drain_queue`); `serve_factory` lets a test
start its own (stopped at the end of the test). `start_worker(...)` runs `ol2purview worker` against a serve's storage
and catalog.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from tests.support.repository import PROJECT_ROOT
from tools.functions_host.launcher import ServeHandle, start_serve
from tools.functions_host.launcher import WorkerHandle as WorkerHandle  # for the e2e tests that start a worker
from tools.functions_host.launcher import start_worker as start_worker

# The modules whose serves take the default ports (7071, 21000), as a user's do: one worker runs them all (`make test`
# runs --dist loadgroup), so one's serve never takes the port another expects to find taken, or free.
DEFAULT_PORTS_GROUP = pytest.mark.xdist_group("default_ports")


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    """One server per test module, with a known key; stopped (and checked to exit 0) afterwards."""
    handle = start_serve(tmp_path_factory.mktemp("serve"), key=secrets.token_urlsafe(24), worker=False)
    yield handle
    assert handle.stop() == 0, handle.output()


@pytest.fixture
def serve_factory(tmp_path: Path) -> Iterator[Callable[..., ServeHandle]]:
    """Start servers of one's own: `serve_factory(key=None, extra_args=(), env=None, storage="embedded",
    worker=True)`; stopped after the test."""
    started: list[ServeHandle] = []

    def factory(
        key: str | None = None,
        extra_args: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        storage: str = "embedded",
        worker: bool = True,
        default_ports: bool = False,
    ) -> ServeHandle:
        handle = start_serve(
            tmp_path / f"serve{len(started)}",
            key=key,
            extra_args=extra_args,
            env=env,
            storage=storage,
            worker=worker,
            default_ports=default_ports,
        )
        started.append(handle)
        return handle

    yield factory
    for handle in started:
        handle.stop()


STORAGE_OF_RUN_STATE_STORE = {"sqlite": "embedded", "table": "azurite"}  # the queues each store runs with


@pytest.fixture
def serve_on_each_store(
    serve_factory: Callable[..., ServeHandle], run_state_store_kind: str
) -> Callable[..., ServeHandle]:
    """`serve_factory` on each run-state store the product ships (the test runs once per store, see
    `run_state_store_kind` in tests/conftest.py): RUN_STATE_STORE=sqlite with the embedded queues, or
    RUN_STATE_STORE=table on the Azurite that serve starts (the test's own emulator: run-state and queue names are
    the product's fixed ones)."""
    if run_state_store_kind == "table":
        from tests.support.azurite_fixture import require_azurite

        require_azurite()

    def factory(
        key: str | None = None, extra_args: tuple[str, ...] = (), env: dict[str, str] | None = None, worker: bool = True
    ) -> ServeHandle:
        return serve_factory(
            key=key,
            extra_args=extra_args,
            worker=worker,
            env={**(env or {}), "RUN_STATE_STORE": run_state_store_kind},
            storage=STORAGE_OF_RUN_STATE_STORE[run_state_store_kind],
        )

    return factory


def start_serve_on_store(kind: str, folder: Path, env: dict[str, str], key: str = "e2e-key") -> ServeHandle:
    """`start_serve` on one run-state store, for module-scoped fixtures parametrized over ("sqlite", "table"):
    RUN_STATE_STORE=sqlite with the embedded queues, or RUN_STATE_STORE=table on the Azurite that serve starts."""
    if kind == "table":
        from tests.support.azurite_fixture import require_azurite

        require_azurite()
        env = {**env, "RUN_STATE_STORE": "table"}
    return start_serve(folder, key=key, env=env, storage=STORAGE_OF_RUN_STATE_STORE[kind])


# --- helpers for ingest tests ---------------------------------------------------------------------------------------
SHARED_OPENLINEAGE = PROJECT_ROOT.parent / "shared" / "openlineage"


def real_event_files() -> list[Path]:
    """The real events emitted by producers (reference/openlineage.md says which are real, not templates)."""
    events = SHARED_OPENLINEAGE / "events"
    return sorted([*events.glob("compat-tests_*.json"), *events.glob("website-docs__*.json")])


def sequence_folders() -> list[Path]:
    """The three complete real Spark runs, each a folder of events in emission order (none without ../shared: the
    tests that use them are marked `shared`, tests/shared_marker.py, and collect without it)."""
    sequences = SHARED_OPENLINEAGE / "sequences"
    return sorted(p for p in sequences.iterdir() if p.is_dir()) if sequences.is_dir() else []


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
