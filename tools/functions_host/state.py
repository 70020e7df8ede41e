"""What the local host keeps in its data folder, owner-only, so that restarts and the other tools find it.

- `host-keys.json`: the generated function key and master key, reused by every later `serve` on the same folder (so
  Spark configs and shell variables survive a restart). A key given with `--key` / `--master-key` (or their
  environment variables) wins for that run and is not written.
- `serve.json`: what a running `serve` started (its pid, URL, storage connection, catalog, Azurite pid). `worker` and
  every command that needs the host or the catalog (tools/catalog_options.py) read it to find it by themselves; `serve`
  removes it on exit, and a later `serve` uses it to stop an Azurite that a killed `serve` left behind.

The data folder is created 0700 and these files 0600: they hold keys and a storage connection string.
"""

from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .keys import generate_key

KEYS_FILE = "host-keys.json"
RUNNING_FILE = "serve.json"
OWNER_ONLY_DIR = 0o700
OWNER_ONLY_FILE = 0o600


def owner_only_dir(path: Path) -> Path:
    """Create `path` (and parents) if missing and make it owner-only (rwx------)."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, OWNER_ONLY_DIR)
    return path


def write_private_json(path: Path, document: dict[str, Any]) -> None:
    """Write `document` to `path` atomically with mode 0600 (a reader never sees a half-written file)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, OWNER_ONLY_FILE)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2)
        handle.write("\n")
    os.chmod(temporary, OWNER_ONLY_FILE)  # in case the file existed with wider permissions
    os.replace(temporary, path)


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return document if isinstance(document, dict) else None


@dataclass(frozen=True)
class HostKeys:
    """The keys a `serve` uses; `path` is where generated keys are kept (None when both were given)."""

    function_key: str
    master_key: str
    path: Path | None
    function_key_kept: bool  # the function key came from the data folder or was generated and written there
    created: bool  # at least one key was generated on this start

    @classmethod
    def load_or_create(
        cls, data_dir: Path, function_key: str | None = None, master_key: str | None = None
    ) -> "HostKeys":
        """Given keys win; missing ones come from `<data>/host-keys.json`, else are generated and written there."""
        path = Path(data_dir) / KEYS_FILE
        stored = _read_json(path) or {}
        kept_function = stored.get("functionKey") if isinstance(stored.get("functionKey"), str) else None
        kept_master = stored.get("masterKey") if isinstance(stored.get("masterKey"), str) else None
        created = (function_key is None and not kept_function) or (master_key is None and not kept_master)
        if created:
            owner_only_dir(path.parent)
            write_private_json(
                path, {"functionKey": kept_function or generate_key(), "masterKey": kept_master or generate_key()}
            )
            stored = _read_json(path) or {}
        if function_key is not None and master_key is not None:
            return cls(function_key, master_key, None, False, False)
        return cls(
            function_key or stored["functionKey"],
            master_key or stored["masterKey"],
            path,
            function_key is None,
            created,
        )


def read_keys(data_dir: Path) -> dict[str, str]:
    """The kept keys of a data folder ({"functionKey", "masterKey"}), or {} when none were kept."""
    stored = _read_json(Path(data_dir) / KEYS_FILE) or {}
    return {name: value for name, value in stored.items() if isinstance(value, str)}


def pid_alive(pid: int | None) -> bool:
    if not pid or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


@dataclass(frozen=True)
class RunningHost:
    """What a running `ol2purview serve` recorded in its data folder."""

    pid: int
    url: str
    data_dir: str
    storage_mode: str  # azurite | embedded | connection
    storage_connection: str | None  # AzureWebJobsStorage the host runs with (Azurite's is a public dev key)
    atlas_url: str | None  # the catalog the worker writes to
    catalog_page: str | None  # the embedded catalog's page, when serve started it
    azurite_pid: int | None
    azurite_location: str | None
    started_at: float

    def write(self) -> Path:
        path = Path(self.data_dir) / RUNNING_FILE
        owner_only_dir(path.parent)
        write_private_json(path, {_camel(k): v for k, v in asdict(self).items()})
        return path

    @classmethod
    def recorded(cls, data_dir: Path) -> "RunningHost | None":
        """What was recorded in `data_dir`, whether or not that serve still runs (None when nothing was)."""
        document = _read_json(Path(data_dir) / RUNNING_FILE)
        if document is None:
            return None
        try:
            # The document's fields by name; a missing or mistyped one is caught below (TypeError) or by the caller.
            return cls(**{name: document.get(_camel(name)) for name in cls.__dataclass_fields__})  # type: ignore[arg-type]
        except TypeError:
            return None

    @classmethod
    def find(cls, data_dir: Path) -> "RunningHost | None":
        """The `serve` running on `data_dir`, or None when none is (a record left by a killed serve is ignored)."""
        recorded = cls.recorded(data_dir)
        return recorded if recorded is not None and pid_alive(recorded.pid) else None

    def is_running(self) -> bool:
        return pid_alive(self.pid)


def kept_function_key(url: str, data_dir: Path, which: str = "functionKey") -> str | None:
    """The function key (or with `which="masterKey"` the master key) kept in `data_dir` when `url` (scheme, host and
    port) is the `serve` running on it: a tool sends the local host's own key to that host, never elsewhere."""
    running = RunningHost.find(data_dir)
    if running is None or url.rstrip("/") != running.url.rstrip("/"):
        return None
    return read_keys(data_dir).get(which)


def forget_running(data_dir: Path, pid: int) -> None:
    """Remove `serve.json` if it is still this process's record."""
    recorded = RunningHost.recorded(data_dir)
    if recorded is not None and recorded.pid == pid:
        (Path(data_dir) / RUNNING_FILE).unlink(missing_ok=True)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _is_azurite(pid: int, location: str | None) -> bool:
    """Whether `pid` is an Azurite process using `location` (read from /proc; False when that cannot be told)."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    words = [part.decode("utf-8", "replace") for part in command]
    return any("azurite" in word for word in words) and (location is None or location in words)


def stop_leftover_azurite(recorded: RunningHost, timeout: float = 10.0) -> int | None:
    """Stop the Azurite a killed `serve` left running on this data folder (by its recorded pid, after checking
    that the pid is still that Azurite). Returns the pid stopped, or None."""
    pid = recorded.azurite_pid
    if recorded.is_running() or not pid or not pid_alive(pid) or not _is_azurite(pid, recorded.azurite_location):
        return None
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while pid_alive(pid) and not _reaped(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if pid_alive(pid) and not _reaped(pid):
        os.kill(pid, signal.SIGKILL)
    return pid


def _reaped(pid: int) -> bool:
    """True once `pid` is a zombie (it exited; its parent has not collected it yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except (OSError, IndexError):
        return True
