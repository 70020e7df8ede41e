"""A durable embedded inbox for accepted events: one SQLite file, written before the endpoint answers 200.

Durability: WAL journal with `synchronous=FULL`. The endpoint promises a producer that answered events are kept, and
Spark never resends, so a commit must survive a power loss, not only a process crash. With WAL, NORMAL would skip the
fsync of each commit and could lose the last ones on power loss; FULL syncs the WAL on every commit. In WAL mode that
is one sequential append plus one fsync, and readers (the consumer) never block the writer.

Consumption (by the processing stage) follows queue semantics: `claim` leases a batch (attempts + 1), `complete`
removes an item, `fail` puts it back or, after `max_attempts`, parks it as `dead` (the poison queue of this inbox).
A claim whose lease ran out (a consumer that died) is claimable again.
"""
from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from olparser.contract import AcceptedEvent

INBOX_FILE = "inbox.sqlite3"
STATES = ("pending", "claimed", "dead")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS inbox (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    received_at   REAL    NOT NULL,
    kind          TEXT    NOT NULL,
    run_id        TEXT,
    event_type    TEXT,
    body          BLOB    NOT NULL,
    state         TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'claimed', 'dead')),
    attempts      INTEGER NOT NULL DEFAULT 0,
    lease_until   REAL,
    last_error    TEXT
);
CREATE INDEX IF NOT EXISTS inbox_by_state ON inbox (state, id);
"""


@dataclass(frozen=True)
class InboxItem:
    """One stored event as the consumer sees it; `body` is the accepted event as UTF-8 JSON."""

    id: int
    received_at: float
    kind: str
    run_id: str | None
    event_type: str | None
    body: bytes
    attempts: int


class SqliteInbox:
    """`EventHandoff` that stores each event in a SQLite inbox; also the consumer side (`claim/complete/fail`).

    Safe to share between threads (one connection behind a lock) and between processes (SQLite file locking).
    """

    def __init__(self, path: Path, *, max_attempts: int = 5, lease_seconds: float = 60.0) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.max_attempts = max_attempts
        self.lease_seconds = lease_seconds
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(_SCHEMA)

    def hand_off(self, event: "AcceptedEvent") -> str:
        """Store the event durably (committed and synced) and return "stored"."""
        with self._lock:
            self._db.execute(
                "INSERT INTO inbox (received_at, kind, run_id, event_type, body) VALUES (?, ?, ?, ?, ?)",
                (time.time(), event.kind, event.run_id, event.event_type, event.to_json_bytes()),
            )
        return "stored"

    def claim(self, batch: int) -> list[InboxItem]:
        """Lease up to `batch` of the oldest available items (pending, or claimed with an expired lease)."""
        now = time.time()
        with self._lock:
            rows = self._db.execute(
                "UPDATE inbox SET state = 'claimed', attempts = attempts + 1, lease_until = ? "
                "WHERE id IN (SELECT id FROM inbox WHERE state = 'pending' "
                "             OR (state = 'claimed' AND lease_until < ?) ORDER BY id LIMIT ?) "
                "RETURNING id, received_at, kind, run_id, event_type, body, attempts",
                (now + self.lease_seconds, now, batch),
            ).fetchall()
        return sorted((InboxItem(*row) for row in rows), key=lambda item: item.id)

    def complete(self, item_id: int) -> None:
        """The item was processed: remove it."""
        with self._lock:
            self._db.execute("DELETE FROM inbox WHERE id = ?", (item_id,))

    def fail(self, item_id: int, error: str) -> str:
        """The item could not be processed: back to pending, or `dead` after `max_attempts`. Returns the new state."""
        with self._lock:
            row = self._db.execute(
                "UPDATE inbox SET state = CASE WHEN attempts >= ? THEN 'dead' ELSE 'pending' END, "
                "lease_until = NULL, last_error = ? WHERE id = ? RETURNING state",
                (self.max_attempts, error[:2000], item_id),
            ).fetchone()
        if row is None:
            raise KeyError(f"no inbox item {item_id}")
        return row[0]

    def counts(self) -> dict[str, int]:
        """How many items are in each state."""
        with self._lock:
            rows = self._db.execute("SELECT state, COUNT(*) FROM inbox GROUP BY state").fetchall()
        return {state: 0 for state in STATES} | dict(rows)

    def close(self) -> None:
        with self._lock:
            self._db.close()
