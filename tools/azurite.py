"""Start and stop Azurite, the Azure Storage emulator (blob, queue, table), by its own process id.

`node_modules/.bin/azurite` is installed by `npm ci` (or `make node`) from package.json. The node process is started
directly (no shell), so the recorded PID is Azurite's own and `stop()` ends exactly that process.

    with start_azurite(Path(".data/azurite")) as azurite:
        print(azurite.connection_string)

Run `python -m tools.azurite [--location DIR]` to keep one running in the foreground and print its connection string.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
AZURITE_BIN = PROJECT_ROOT / "node_modules" / ".bin" / "azurite"
LOOPBACK = "127.0.0.1"
ACCOUNT_NAME = "devstoreaccount1"
# The emulator's documented, public development key (the same for every Azurite; not a secret).
ACCOUNT_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
DEFAULT_PORTS = (10000, 10001, 10002)  # blob, queue, table: what UseDevelopmentStorage=true means
DEVELOPMENT_STORAGE = "UseDevelopmentStorage=true"


class AzuriteNotInstalled(RuntimeError):
    """node_modules/.bin/azurite (or node) is missing."""


class AzuriteStartError(RuntimeError):
    """Azurite exited or did not open its ports in time."""


def connection_string(blob_port: int, queue_port: int, table_port: int, host: str = LOOPBACK) -> str:
    """The full connection string for an Azurite listening on these ports."""
    base = f"http://{host}:{{}}/{ACCOUNT_NAME}"
    return (
        f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT_NAME};AccountKey={ACCOUNT_KEY};"
        f"BlobEndpoint={base.format(blob_port)};QueueEndpoint={base.format(queue_port)};"
        f"TableEndpoint={base.format(table_port)};"
    )


def resolve_connection_string(value: str) -> str:
    """`UseDevelopmentStorage=true` spelled out (Azurite on its default ports); any other value unchanged."""
    if value.strip().rstrip(";").replace(" ", "").lower() == DEVELOPMENT_STORAGE.lower():
        return connection_string(*DEFAULT_PORTS)
    return value


@dataclass
class Azurite:
    """A running Azurite started by start_azurite; stop() ends exactly its process."""

    process: subprocess.Popen[bytes]
    location: Path
    blob_port: int
    queue_port: int
    table_port: int
    host: str = LOOPBACK
    log_path: Path | None = field(default=None)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def connection_string(self) -> str:
        return connection_string(self.blob_port, self.queue_port, self.table_port, self.host)

    def running(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout: float = 10.0) -> int:
        """SIGTERM this PID, SIGKILL it if it has not exited after `timeout` seconds; returns its exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def __enter__(self) -> "Azurite":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def azurite_command(binary: Path = AZURITE_BIN) -> list[str]:
    """`node <azurite.js>`: the node process itself, without a shell or `env` in between."""
    if not binary.exists():
        raise AzuriteNotInstalled(
            f"Azurite is not installed at {binary}: run `npm ci` (or `make node`) in {PROJECT_ROOT}"
        )
    node = shutil.which("node")
    if node is None:
        raise AzuriteNotInstalled("node is not on PATH: Azurite needs Node.js 20")
    return [node, str(binary.resolve())]


def start_azurite(
    location: Path,
    *,
    blob_port: int = 0,
    queue_port: int = 0,
    table_port: int = 0,
    host: str = LOOPBACK,
    startup_timeout: float = 30.0,
    binary: Path = AZURITE_BIN,
    in_memory: bool = False,
) -> Azurite:
    """Start Azurite with its data in `location`; a port of 0 picks a free one. Returns once all ports answer.
    `in_memory`: Azurite keeps its data in memory only (`--inMemoryPersistence`: no periodic save of the whole
    database, which stalls it for seconds once a table holds hundreds of thousands of rows).

    Picked ports can be taken by someone else before Azurite binds them: then it starts again on new ones.
    """
    command = azurite_command(binary)
    location = Path(location).resolve()
    location.mkdir(parents=True, exist_ok=True)
    requested = (blob_port, queue_port, table_port)

    def pick_ports() -> list[int]:
        return [port or _free_port(host) for port in requested]

    if 0 in requested:
        for _ in range(2):
            try:
                return _launch(command, location, pick_ports(), host, startup_timeout, in_memory)
            except AzuriteStartError:
                continue  # a picked port was taken before Azurite bound it: pick again
    return _launch(command, location, pick_ports(), host, startup_timeout, in_memory)


def _launch(
    command: list[str], location: Path, ports: list[int], host: str, timeout: float, in_memory: bool = False
) -> Azurite:
    log_path = location / "azurite.log"
    arguments = [
        "--silent",
        "--skipApiVersionCheck",
        "--disableTelemetry",
        *(["--inMemoryPersistence"] if in_memory else ["--location", str(location)]),
        "--blobHost",
        host,
        "--blobPort",
        str(ports[0]),
        "--queueHost",
        host,
        "--queuePort",
        str(ports[1]),
        "--tableHost",
        host,
        "--tablePort",
        str(ports[2]),
    ]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command + arguments, stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=location, start_new_session=True
        )
    blob_port, queue_port, table_port = ports
    azurite = Azurite(process, location, blob_port, queue_port, table_port, host=host, log_path=log_path)
    try:
        _wait_for_ports(azurite, timeout)
    except BaseException:
        azurite.stop()
        raise
    return azurite


def _wait_for_ports(azurite: Azurite, timeout: float) -> None:
    """Wait until Azurite says each service listens on its port and the port answers.

    The log line matters: a port that answers may belong to another process, while ours is failing to bind it.
    """
    deadline = time.monotonic() + timeout
    waiting = [azurite.blob_port, azurite.queue_port, azurite.table_port]
    while waiting:
        if not azurite.running():
            raise AzuriteStartError(f"Azurite exited with code {azurite.process.returncode}: {_tail(azurite.log_path)}")
        if time.monotonic() > deadline:
            raise AzuriteStartError(
                f"Azurite did not open ports {waiting} within {timeout:.0f} s: {_tail(azurite.log_path)}"
            )
        log = azurite.log_path.read_text(errors="replace") if azurite.log_path else ""
        waiting = [
            port
            for port in waiting
            if f"successfully listening at http://{azurite.host}:{port}" not in log or not _answers(azurite.host, port)
        ]
        if waiting:
            time.sleep(0.05)


def _answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _tail(path: Path | None, limit: int = 2000) -> str:
    if path is None or not path.exists():
        return "(no log)"
    return path.read_text(errors="replace")[-limit:].strip() or "(empty log)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.azurite", description=__doc__.splitlines()[0])
    parser.add_argument("--location", type=Path, default=PROJECT_ROOT / ".data" / "azurite")
    parser.add_argument(
        "--default-ports", action="store_true", help="listen on 10000-10002 (what UseDevelopmentStorage=true means)"
    )
    args = parser.parse_args(argv)
    ports = DEFAULT_PORTS if args.default_ports else (0, 0, 0)
    with start_azurite(args.location, blob_port=ports[0], queue_port=ports[1], table_port=ports[2]) as azurite:
        print(f"Azurite running (pid {azurite.pid}); AzureWebJobsStorage=\"{azurite.connection_string}\"", flush=True)
        try:
            azurite.process.wait()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
