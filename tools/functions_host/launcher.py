"""`ol2purview serve` and `ol2purview worker` as subprocesses, each on the port the system gives it (`--port 0`,
read back from its `ready:` line), so two servers never race for a port: what the end-to-end tests and the benchmarks
start (`start_serve`, `start_worker`), with a handle to reach and stop each.
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
from typing import Any

import requests

from olparser.settings import PROJECT_ROOT

READY_PREFIX = "ready:"
CLI_MODULE = f"{__package__.rpartition('.')[0]}.cli"  # `tools.cli` in the repository, `ol2purview_tools.cli` installed
START_TIMEOUT = 30.0


@dataclass
class ServeHandle:
    """A running `ol2purview serve`: where it listens, its key, its data folder, and how to stop it."""

    url: str
    key: str
    data_dir: Path
    process: subprocess.Popen[bytes]
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

    def wait_until_processed(
        self, timeout: float = 60.0, queue: str = "lineage-events", interval: float = 0.1
    ) -> dict[str, Any]:
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
    return line[len(prefix) :].split()[0] if line else None


def _wait_ready(process: subprocess.Popen[bytes], log_path: Path, what: str) -> str:
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


def start_serve(
    data_dir: Path,
    key: str | None = None,
    extra_args: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
    *,
    storage: str = "embedded",
    worker: bool = True,
    default_ports: bool = False,
    root: Path = PROJECT_ROOT,
) -> ServeHandle:
    """Start `ol2purview serve` on port 0 (its catalog too), wait for its `ready` line and read the ports back.

    `key=None` lets it generate one. `storage`: "embedded" or "azurite" (started by serve, on free ports).
    `default_ports`: no port flags, as a user starts it (the defaults, else free ports it prints). `root`: the source
    tree it runs (another release's, to test an upgrade: its packages come first on the path).
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    log_path = data_dir / f"serve-{secrets.token_hex(4)}.log"
    ports = () if default_ports else ("--port", "0", "--catalog-port", "0")
    command = [
        sys.executable,
        "-m",
        CLI_MODULE,
        "serve",
        *ports,
        "--data",
        str(data_dir),
        f"--master-key={secrets.token_urlsafe(24)}",
        "--storage",
        storage,
        *([f"--key={key}"] if key else []),
        *([] if worker else ["--no-worker"]),
        *extra_args,
    ]
    base_env = {
        name: value
        for name, value in os.environ.items()
        if name not in ("AzureWebJobsStorage", "ATLAS_ENDPOINT", "PURVIEW_ACCOUNT_NAME", "PURVIEW_ENDPOINT")
    }
    with open(log_path, "wb") as log:  # a file, not a pipe: a full pipe would block the server
        process = subprocess.Popen(
            command,
            cwd=root,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**base_env, "PYTHONUNBUFFERED": "1", **(env or {})},
        )
    output = _wait_ready(process, log_path, "ol2purview serve")
    catalog = _printed(output, "catalog page: ")
    url = _printed(output, READY_PREFIX + " ") or ""
    return ServeHandle(
        url,
        key or _printed(output, "function key: ") or "",
        data_dir,
        process,
        log_path,
        master_key=_printed(output, "master key: ") or "",
        catalog_url=catalog.rstrip("/") if catalog and catalog.startswith("http") else None,
        storage_connection=(
            output.split("AzureWebJobsStorage=", 1)[1].split()[0] if "AzureWebJobsStorage=" in output else None
        ),
    )


@dataclass
class WorkerHandle:
    """A running `ol2purview worker`."""

    process: subprocess.Popen[bytes]
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


def start_worker(
    serve: ServeHandle, storage: str, env: dict[str, str] | None = None, extra_args: tuple[str, ...] = ()
) -> WorkerHandle:
    """`ol2purview worker` on the storage and catalog of `serve` (started with `worker=False`), with these app
    settings (`env`) and options (`extra_args`, e.g. `--lease 5`) besides."""
    log_path = serve.data_dir / f"worker-{time.monotonic_ns()}.log"
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {}), "ATLAS_ENDPOINT": serve.atlas_url}
    env.pop("AzureWebJobsStorage", None)
    command = [sys.executable, "-m", CLI_MODULE, "worker", "--data", str(serve.data_dir), *extra_args]
    if storage == "embedded":
        command += ["--storage", "embedded"]
    else:
        env["AzureWebJobsStorage"] = serve.storage_connection or ""
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, cwd=PROJECT_ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
    _wait_ready(process, log_path, "ol2purview worker")
    return WorkerHandle(process, log_path)
