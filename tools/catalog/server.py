"""CatalogServer: the embedded catalog on a port, in a background thread (tests, the local host) or in the foreground."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from typing import Callable, Iterable

import uvicorn

from ..log_setup import UVICORN_LOG_CONFIG
from .app import build_app
from .calls import CallCounter
from .collections import DEFAULT_ACCOUNT_NAME, Permissions
from .faults import FaultInjector, FaultSpec, parse_fault_spec
from .history_link import HistoryLink
from .protocol import ResettableHttpToolsProtocol
from .store import CatalogStore
from .typedefs import TypeCatalog


class CatalogServer:
    """An Atlas-compatible catalog over SQLite at `db_path`. Port 0 picks a free port (see `url` after `start`).

    It answers requests whose `Host` is a loopback name or address, the bind host, or one of `allowed_hosts`
    (`"*"`: any), and refuses cross-origin writes and non-JSON write bodies (tools.catalog.guard)."""

    def __init__(
        self,
        db_path: str | Path,
        host: str = "127.0.0.1",
        port: int = 0,
        user: str | None = None,
        password: str | None = None,
        faults: str | FaultSpec | None = None,
        log_level: str = "warning",
        access_log: bool = False,
        allowed_hosts: Iterable[str] = (),
        history: HistoryLink | None = None,
        account_name: str = DEFAULT_ACCOUNT_NAME,
        curator_of: Iterable[str] | None = None,
    ) -> None:
        self.db_path = Path(db_path)
        self.host = host
        self.port = port
        self.counter = CallCounter()
        self.faults = FaultInjector(parse_fault_spec(faults) if isinstance(faults, str) or faults is None else faults)
        self._user, self._password = user, password
        # Host names the catalog answers besides loopback ones (DNS-rebinding guard); a non-wildcard bind host too.
        self.allowed_hosts = (*allowed_hosts, *(() if host in ("0.0.0.0", "::", "") else (host,)))
        self._log_level, self._access_log = log_level, access_log
        self.history = history  # where the page's time window asks the run history (a running serve)
        self.account_name = account_name  # the root collection's name, as a Purview account's
        self.permissions = Permissions(curator_of)  # the caller's Data Curator collections (None: all)
        self._store: CatalogStore | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def atlas_url(self) -> str:
        return self.url + "/api/atlas/v2"

    def set_faults(self, spec: str | FaultSpec) -> None:
        self.faults.configure(parse_fault_spec(spec) if isinstance(spec, str) else spec)

    def _prepare(self) -> uvicorn.Server:
        self._store = CatalogStore(self.db_path)
        with self._store.write() as session:
            session.place_unplaced(self.account_name)
        app = build_app(
            self._store,
            TypeCatalog(self._store),
            self.counter,
            self.faults,
            self._user,
            self._password,
            self.allowed_hosts,
            self.history,
            self.account_name,
            self.permissions,
        )
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(
            family, socket.SOCK_STREAM, socket.IPPROTO_TCP
        )  # IPPROTO_TCP: asyncio then sets TCP_NODELAY
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        sock.listen(2048)  # connections made as soon as the port is announced wait in the backlog, not refused
        self.port = sock.getsockname()[1]
        self._socket = sock
        config = uvicorn.Config(
            app,
            http=ResettableHttpToolsProtocol,
            lifespan="off",
            ws="none",
            log_level=self._log_level,
            access_log=self._access_log,
            timeout_graceful_shutdown=2,
            log_config=UVICORN_LOG_CONFIG,
        )
        self._server = uvicorn.Server(config)
        return self._server

    def start(self, timeout: float = 10.0) -> "CatalogServer":
        """Serve in a background thread; returns once the port accepts connections."""
        server = self._prepare()
        self._thread = threading.Thread(
            target=server.run, kwargs={"sockets": [self._socket]}, name=f"catalog:{self.port}", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the catalog did not start on {self.url}")
            time.sleep(0.01)
        return self

    def serve_forever(self, on_listening: Callable[["CatalogServer"], None] | None = None) -> None:
        """Serve in this thread until interrupted (Ctrl+C / SIGTERM); `on_listening` runs once the port is bound."""
        server = self._prepare()
        if on_listening is not None:
            on_listening(self)
        try:
            server.run(sockets=[self._socket])  # type: ignore[list-item]  # _prepare opened it
        finally:
            self._close()

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        self._close()

    def _close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        if self._store is not None:
            self._store.close()
            self._store = None

    def __enter__(self) -> "CatalogServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
