"""One SQLite file shared by the threads (a connection each) and processes (SQLite's file locks) of a local run:
what the run-state store and the run-history store have in common."""

from __future__ import annotations

import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Self


class SqliteFile:
    """WAL journal, a connection per thread, writers waiting up to `busy_timeout_seconds` for each other."""

    def __init__(self, path: Path, busy_timeout_seconds: float = 30.0) -> None:
        self.path = Path(path)
        self._busy_timeout = busy_timeout_seconds
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._use_wal()

    def _use_wal(self) -> None:
        """Switch the file to WAL. Several processes opening a new file at once (the tasks of a Spark job) can get
        "database is locked" at once from this switch, which SQLite does not retry through the busy timeout: try
        again for as long as that timeout."""
        deadline = time.monotonic() + self._busy_timeout
        while True:
            try:
                self._connection().execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.01)  # back off before the next try

    def close(self) -> None:
        """Close every connection this store opened (in any thread)."""
        with self._connections_lock:
            for db in self._connections:
                db.close()
            self._connections.clear()
        self._local = threading.local()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def _immediate(self) -> Iterator[sqlite3.Connection]:
        """A write transaction that takes the write lock up front, so that read-modify-write cannot interleave."""
        db = self._connection()
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _connection(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=self._busy_timeout, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA synchronous=NORMAL")
            with self._connections_lock:
                self._connections.append(db)
            self._local.db = db
        return db
