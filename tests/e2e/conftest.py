"""End-to-end fixtures: `ol2purview serve` as a real subprocess on a free port.

`start_serve(data_dir)` returns a `ServeHandle` (url, key, data_dir, stop()); the `serve` fixture gives one per test
module, `serve_factory` lets a test start its own (stopped at the end of the test).
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
from typing import Callable, Iterator

import pytest

from tests.conftest import PROJECT_ROOT, free_port

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

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    @property
    def inbox_path(self) -> Path:
        return self.data_dir / "inbox.sqlite3"

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


def start_serve(data_dir: Path, key: str | None = None, extra_args: tuple[str, ...] = (),
                env: dict[str, str] | None = None) -> ServeHandle:
    """Start `ol2purview serve` on a free port and wait for its `ready` line. `key=None` lets it generate one."""
    data_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log_path = data_dir / f"serve-{port}.log"
    command = [sys.executable, "-m", "tools.cli", "serve", "--port", str(port), "--data", str(data_dir),
               *(["--key", key] if key else []), *extra_args]
    with open(log_path, "wb") as log:  # a file, not a pipe: a full pipe would block the server
        process = subprocess.Popen(command, cwd=PROJECT_ROOT, stdout=log, stderr=subprocess.STDOUT,
                                   env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})})
    handle = ServeHandle(f"http://127.0.0.1:{port}", key or "", data_dir, process, log_path)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        output = handle.output()
        if any(line.startswith(READY_PREFIX) for line in output.splitlines()):
            if not key:
                handle.key = next(line.split(": ", 1)[1].split()[0] for line in output.splitlines()
                                  if line.startswith("function key: "))
            return handle
        if process.poll() is not None:
            raise RuntimeError(f"ol2purview serve exited with {process.returncode}:\n{output}")
        time.sleep(0.05)
    handle.stop()
    raise RuntimeError(f"ol2purview serve was not ready after {START_TIMEOUT} s:\n{handle.output()}")


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    """One server per test module, with a known key; stopped (and checked to exit 0) afterwards."""
    handle = start_serve(tmp_path_factory.mktemp("serve"), key=secrets.token_urlsafe(24))
    yield handle
    assert handle.stop() == 0, handle.output()


@pytest.fixture
def serve_factory(tmp_path: Path) -> Iterator[Callable[..., ServeHandle]]:
    """Start servers of one's own: `serve_factory(key=None, extra_args=(), env=None)`; stopped after the test."""
    started: list[ServeHandle] = []

    def factory(key: str | None = None, extra_args: tuple[str, ...] = (),
                env: dict[str, str] | None = None) -> ServeHandle:
        handle = start_serve(tmp_path / f"serve{len(started)}", key=key, extra_args=extra_args, env=env)
        started.append(handle)
        return handle

    yield factory
    for handle in started:
        handle.stop()


# --- helpers for ingest tests ---------------------------------------------------------------------------------------
SHARED_OPENLINEAGE = PROJECT_ROOT.parent / "shared" / "openlineage"


def real_event_files() -> list[Path]:
    """The real events emitted by producers (reference/openlineage.md says which are real, not templates)."""
    events = SHARED_OPENLINEAGE / "events"
    return sorted([*events.glob("compat-tests_*.json"), *events.glob("website-docs__*.json")])


def sequence_folders() -> list[Path]:
    """The three complete real Spark runs, each a folder of events in emission order."""
    return sorted(p for p in (SHARED_OPENLINEAGE / "sequences").iterdir() if p.is_dir())


def drain_inbox(handle: ServeHandle) -> list:
    """Take every item out of the server's inbox (oldest first) so that a test sees only what it sent."""
    from olparser.delivery.inbox import SqliteInbox

    inbox = SqliteInbox(handle.inbox_path)
    try:
        items = inbox.claim(100_000)
        for item in items:
            inbox.complete(item.id)
        return items
    finally:
        inbox.close()
