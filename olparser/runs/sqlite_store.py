"""Run state in one SQLite file: WAL journal, one BEGIN IMMEDIATE transaction per merge.

Safe with several threads (a connection per thread) and several processes (SQLite's file locks; writers wait up to
`busy_timeout_seconds`). Rows: run_id, state (codec JSON), fingerprint, updated_at (Unix seconds); and, per process
qualifiedName, the time of the newest run that wrote it.
"""
from __future__ import annotations

import json
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

from olparser.runs.codec import from_json, to_json
from olparser.runs.merge import merge_event
from olparser.runs.model import JSON, RunSnapshot
from olparser.runs.store import event_run_id

_SCHEMA = """
CREATE TABLE IF NOT EXISTS run_state (
    run_id TEXT PRIMARY KEY,
    state TEXT,
    fingerprint TEXT,
    updated_at REAL NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS run_state_updated_at ON run_state (updated_at);
CREATE TABLE IF NOT EXISTS process_runs (
    qualified_name TEXT PRIMARY KEY,
    run_time REAL NOT NULL
) WITHOUT ROWID;
"""


class SqliteRunStateStore:
    """RunStateStore over a local SQLite file (see the module docstring)."""

    def __init__(self, path: Path, *, ttl_seconds: int, busy_timeout_seconds: float = 30.0) -> None:
        self.path = Path(path)
        self.ttl_seconds = ttl_seconds
        self._busy_timeout = busy_timeout_seconds
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = self._connection()
        db.execute("PRAGMA journal_mode=WAL")
        db.executescript(_SCHEMA)

    def merge(self, event: JSON, *, now: float | None = None) -> RunSnapshot:
        run_id = event_run_id(event)
        now = time.time() if now is None else now
        with self._immediate() as db:
            row = db.execute("SELECT state, fingerprint, updated_at FROM run_state WHERE run_id = ?",
                             (run_id,)).fetchone()
            live = row is not None and not self._expired(row[2], now)
            previous = from_json(row[0]) if live and row[0] else None
            snapshot = merge_event(previous, event)
            db.execute(
                "INSERT INTO run_state (run_id, state, fingerprint, updated_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (run_id) DO UPDATE SET state = excluded.state, fingerprint = excluded.fingerprint, "
                "updated_at = excluded.updated_at",
                (run_id, to_json(snapshot), row[1] if live else None, now),
            )
        return snapshot

    def get(self, run_id: str, *, now: float | None = None) -> RunSnapshot | None:
        row = self._live_row(run_id, now)
        return from_json(row[0]) if row is not None and row[0] else None

    def written_fingerprint(self, run_id: str, *, now: float | None = None) -> str | None:
        row = self._live_row(run_id, now)
        return row[1] if row is not None else None

    def record_written(self, run_id: str, fingerprint: str, *, now: float | None = None) -> None:
        now = time.time() if now is None else now
        with self._immediate() as db:
            db.execute(
                "INSERT INTO run_state (run_id, state, fingerprint, updated_at) VALUES (?, NULL, ?, ?) "
                "ON CONFLICT (run_id) DO UPDATE SET fingerprint = excluded.fingerprint, "
                "state = CASE WHEN run_state.updated_at <= ? THEN NULL ELSE run_state.state END, "
                "updated_at = excluded.updated_at",
                (run_id, fingerprint, now, now - self.ttl_seconds),
            )

    def purge_expired(self, now: float | None = None) -> int:
        now = time.time() if now is None else now
        with self._immediate() as db:
            return db.execute("DELETE FROM run_state WHERE updated_at <= ?", (now - self.ttl_seconds,)).rowcount

    def process_run_times(self, qualified_names: Sequence[str]) -> dict[str, float]:
        rows = self._connection().execute(
            "SELECT qualified_name, run_time FROM process_runs WHERE qualified_name IN (SELECT value FROM json_each(?))",
            (json.dumps(list(qualified_names)),))
        return dict(rows.fetchall())

    def record_process_runs(self, qualified_names: Sequence[str], run_time: float) -> None:
        with self._immediate() as db:
            db.executemany(
                "INSERT INTO process_runs (qualified_name, run_time) VALUES (?, ?) ON CONFLICT (qualified_name) "
                "DO UPDATE SET run_time = max(process_runs.run_time, excluded.run_time)",
                [(name, run_time) for name in dict.fromkeys(qualified_names)])

    def close(self) -> None:
        """Close every connection this store opened (in any thread)."""
        with self._connections_lock:
            for db in self._connections:
                db.close()
            self._connections.clear()
        self._local = threading.local()

    def __enter__(self) -> "SqliteRunStateStore":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _live_row(self, run_id: str, now: float | None) -> tuple | None:
        now = time.time() if now is None else now
        row = self._connection().execute("SELECT state, fingerprint, updated_at FROM run_state WHERE run_id = ?",
                                         (run_id,)).fetchone()
        return None if row is None or self._expired(row[2], now) else row

    def _expired(self, updated_at: float, now: float) -> bool:
        return updated_at <= now - self.ttl_seconds

    @contextmanager
    def _immediate(self) -> Iterator[sqlite3.Connection]:
        """A write transaction that takes the write lock up front, so that read-merge-write cannot interleave."""
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
            db = sqlite3.connect(self.path, timeout=self._busy_timeout, isolation_level=None,
                                 check_same_thread=False)
            db.execute("PRAGMA synchronous=NORMAL")
            with self._connections_lock:
                self._connections.append(db)
            self._local.db = db
        return db
