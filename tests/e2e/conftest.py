"""End-to-end fixtures: `ol2purview serve` (and `ol2purview worker`) as real subprocesses, each on the port the
system gives it (`--port 0`, read back from its `ready:` line), so two servers never race for one port.

`start_serve(data_dir, storage=..., worker=...)` returns a `ServeHandle`: url, keys, its embedded catalog, the status
endpoint, `wait_until_processed()`, `stop()`. The `serve` fixture gives one per test module in intake-only mode
(`--no-worker --storage embedded`, so a test reads what was queued with `drain_queue`); `serve_factory` lets a test
start its own (stopped at the end of the test). `start_worker(...)` runs `ol2purview worker` against a serve's storage
and catalog.
"""
from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
import requests

from tests.conftest import PROJECT_ROOT

READY_PREFIX = "ready:"
START_TIMEOUT = 30.0


@dataclass
class ServeHandle:
    """A running `ol2purview serve`: where it listens, its key, its data folder, and how to stop it."""

    url: str
    key: str
    data_dir: Path
    process: subprocess.Popen
    log_path: Path
    exit_code: int | None = field(default=None)
    master_key: str = ""
    catalog_url: str | None = None  # the embedded catalog's page, e.g. http://127.0.0.1:1234
    storage_connection: str | None = None  # AzureWebJobsStorage of the Azurite it started

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    @property
    def atlas_url(self) -> str:
        return f"{self.catalog_url}/api/atlas/v2"

    def status(self) -> dict[str, Any]:
        """GET /admin/ol2purview/status with the master key."""
        response = requests.get(f"{self.url}/admin/ol2purview/status", params={"code": self.master_key}, timeout=10)
        response.raise_for_status()
        return response.json()

    def wait_until_processed(self, timeout: float = 60.0, queue: str = "lineage-events",
                             interval: float = 0.1) -> dict[str, Any]:
        """Wait until the lineage queue is empty (every message deleted: handled or poisoned) and nothing is in
        flight, asking every `interval` seconds; returns the last status."""
        deadline = time.monotonic() + timeout
        while True:
            status = self.status()
            worker = status.get("worker") or {}
            if status["queues"][queue]["approximateCount"] == 0 and not worker.get("inFlight"):
                return status
            if time.monotonic() > deadline:
                raise AssertionError(f"still not processed after {timeout} s: {status}")
            time.sleep(interval)

    def catalog_calls(self) -> dict[str, Any]:
        """The embedded catalog's call counter: {"total", "byRoute"}."""
        return requests.get(f"{self.catalog_url}/_ol2purview/calls", timeout=10).json()

    def reset_catalog_calls(self) -> None:
        requests.post(f"{self.catalog_url}/_ol2purview/calls/reset", timeout=10).raise_for_status()

    def output(self) -> str:
        """Everything the server printed so far (stdout and stderr)."""
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15.0) -> int:
        """Signal the server and wait for it to exit; returns its exit status (0 when it stopped cleanly)."""
        if self.exit_code is None:
            if self.process.poll() is None:
                self.process.send_signal(sig)
            try:
                self.exit_code = self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                self.exit_code = -9
        return self.exit_code


def _printed(output: str, prefix: str) -> str | None:
    line = next((line for line in output.splitlines() if line.startswith(prefix)), None)
    return line[len(prefix):].split()[0] if line else None


def _wait_ready(process: subprocess.Popen, log_path: Path, what: str) -> str:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        output = log_path.read_text(encoding="utf-8", errors="replace")
        if any(line.startswith(READY_PREFIX) for line in output.splitlines()):
            return output
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}:\n{output}")
        time.sleep(0.05)
    process.terminate()  # SIGTERM: it stops what it started (Azurite)
    try:
        process.wait(15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    raise RuntimeError(f"{what} was not ready after {START_TIMEOUT} s:\n{log_path.read_text(errors='replace')}")


def start_serve(data_dir: Path, key: str | None = None, extra_args: tuple[str, ...] = (),
                env: dict[str, str] | None = None, *, storage: str = "embedded", worker: bool = True,
                default_ports: bool = False) -> ServeHandle:
    """Start `ol2purview serve` on port 0 (its catalog too), wait for its `ready` line and read the ports back.

    `key=None` lets it generate one. `storage`: "embedded" or "azurite" (started by serve, on free ports).
    `default_ports`: no port flags, as a user starts it (the defaults, else free ports it prints).
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    log_path = data_dir / f"serve-{secrets.token_hex(4)}.log"
    ports = () if default_ports else ("--port", "0", "--catalog-port", "0")
    command = [sys.executable, "-m", "tools.cli", "serve", *ports, "--data", str(data_dir),
               f"--master-key={secrets.token_urlsafe(24)}", "--storage", storage,
               *([f"--key={key}"] if key else []), *([] if worker else ["--no-worker"]), *extra_args]
    base_env = {name: value for name, value in os.environ.items()
                if name not in ("AzureWebJobsStorage", "ATLAS_ENDPOINT", "PURVIEW_ACCOUNT_NAME")}
    with open(log_path, "wb") as log:  # a file, not a pipe: a full pipe would block the server
        process = subprocess.Popen(command, cwd=PROJECT_ROOT, stdout=log, stderr=subprocess.STDOUT,
                                   env={**base_env, "PYTHONUNBUFFERED": "1", **(env or {})})
    output = _wait_ready(process, log_path, "ol2purview serve")
    catalog = _printed(output, "catalog page: ")
    url = _printed(output, READY_PREFIX + " ") or ""
    return ServeHandle(
        url, key or _printed(output, "function key: ") or "", data_dir, process, log_path,
        master_key=_printed(output, "master key: ") or "",
        catalog_url=catalog.rstrip("/") if catalog and catalog.startswith("http") else None,
        storage_connection=(output.split("AzureWebJobsStorage=", 1)[1].split()[0]
                            if "AzureWebJobsStorage=" in output else None),
    )


@dataclass
class WorkerHandle:
    """A running `ol2purview worker`."""

    process: subprocess.Popen
    log_path: Path

    def output(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


def start_worker(serve: ServeHandle, storage: str, env: dict[str, str] | None = None,
                 extra_args: tuple[str, ...] = ()) -> WorkerHandle:
    """`ol2purview worker` on the storage and catalog of `serve` (started with `worker=False`), with these app
    settings (`env`) and options (`extra_args`, e.g. `--lease 5`) besides."""
    log_path = serve.data_dir / f"worker-{time.monotonic_ns()}.log"
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {}), "ATLAS_ENDPOINT": serve.atlas_url}
    env.pop("AzureWebJobsStorage", None)
    command = [sys.executable, "-m", "tools.cli", "worker", "--data", str(serve.data_dir), *extra_args]
    if storage == "embedded":
        command += ["--storage", "embedded"]
    else:
        env["AzureWebJobsStorage"] = serve.storage_connection or ""
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, cwd=PROJECT_ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
    _wait_ready(process, log_path, "ol2purview worker")
    return WorkerHandle(process, log_path)


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

    def factory(key: str | None = None, extra_args: tuple[str, ...] = (), env: dict[str, str] | None = None,
                storage: str = "embedded", worker: bool = True, default_ports: bool = False) -> ServeHandle:
        handle = start_serve(tmp_path / f"serve{len(started)}", key=key, extra_args=extra_args, env=env,
                             storage=storage, worker=worker, default_ports=default_ports)
        started.append(handle)
        return handle

    yield factory
    for handle in started:
        handle.stop()


STORAGE_OF_RUN_STATE_STORE = {"sqlite": "embedded", "table": "azurite"}  # the queues each store runs with


@pytest.fixture
def serve_on_each_store(serve_factory: Callable[..., ServeHandle],
                        run_state_store_kind: str) -> Callable[..., ServeHandle]:
    """`serve_factory` on each run-state store the product ships (the test runs once per store, see
    `run_state_store_kind` in tests/conftest.py): RUN_STATE_STORE=sqlite with the embedded queues, or
    RUN_STATE_STORE=table on the Azurite that serve starts (the test's own emulator: run-state and queue names are
    the product's fixed ones)."""
    if run_state_store_kind == "table":
        from tests.azurite_fixture import require_azurite

        require_azurite()

    def factory(key: str | None = None, extra_args: tuple[str, ...] = (), env: dict[str, str] | None = None,
                worker: bool = True) -> ServeHandle:
        return serve_factory(key=key, extra_args=extra_args, worker=worker,
                             env={**(env or {}), "RUN_STATE_STORE": run_state_store_kind},
                             storage=STORAGE_OF_RUN_STATE_STORE[run_state_store_kind])

    return factory


# --- helpers for ingest tests ---------------------------------------------------------------------------------------
SHARED_OPENLINEAGE = PROJECT_ROOT.parent / "shared" / "openlineage"


def real_event_files() -> list[Path]:
    """The real events emitted by producers (reference/openlineage.md says which are real, not templates)."""
    events = SHARED_OPENLINEAGE / "events"
    return sorted([*events.glob("compat-tests_*.json"), *events.glob("website-docs__*.json")])


def sequence_folders() -> list[Path]:
    """The three complete real Spark runs, each a folder of events in emission order."""
    return sorted(p for p in (SHARED_OPENLINEAGE / "sequences").iterdir() if p.is_dir())


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
    from olparser.delivery.envelope import parse
    from olparser.delivery.queues import SqliteQueueService, embedded_queue_path
    from olparser.delivery.sender import courier_from_settings
    from olparser.settings import Settings

    service = SqliteQueueService(embedded_queue_path(handle.data_dir))
    courier = courier_from_settings(Settings(data_dir=handle.data_dir))
    queue = service.queue(queue_name)
    taken: list[QueuedEvent] = []
    try:
        while batch := queue.receive(32, 60):
            for message in batch:
                envelope = parse(message.text)
                taken.append(QueuedEvent(envelope.run_id, envelope.event_type, courier.open_event(message.text),
                                         message.dequeue_count))
                queue.delete(message)
    finally:
        service.close()
    return taken
