"""Run state in one SQLite file: WAL journal, one BEGIN IMMEDIATE transaction per operation.

Safe with several threads (a connection per thread) and several processes (SQLite's file locks; writers wait up to
`busy_timeout_seconds`). Tables: `run_state` (per run or static declaration: merged state as codec JSON, version,
fingerprint, written and claimed keys, due time), `entity_refs` (per connector-owned entity: how many runs use it,
and a tombstone while it is being deleted), `process_runs` (per process: the newest run time that wrote it),
`interim_datasets` (per dataset the connector created for want of a scanned asset: its candidates, when it was
registered and last re-resolved).
"""
from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from olparser.runs.codec import from_json, to_json
from olparser.runs.merge import merge_event
from olparser.runs.model import JSON, RunSnapshot
from olparser.runs.store import (TOMBSTONE_SECONDS, CommitResult, InterimDataset, Key, StoreStats, Writer, add_writer,
                                 drop_writer, event_run_id, sorted_keys)
from olparser.sqlite_file import SqliteFile

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
    run_time REAL NOT NULL,
    run_key TEXT NOT NULL DEFAULT '',
    writers TEXT
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS interim_datasets (
    type_name TEXT NOT NULL,
    qualified_name TEXT NOT NULL,
    candidates TEXT NOT NULL,
    registered_at REAL NOT NULL,
    checked_at REAL NOT NULL,
    PRIMARY KEY (type_name, qualified_name)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS interim_datasets_checked_at ON interim_datasets (checked_at);
CREATE TABLE IF NOT EXISTS entity_refs (
    type_name TEXT NOT NULL,
    qualified_name TEXT NOT NULL,
    users INTEGER NOT NULL,
    deleting_since REAL,
    PRIMARY KEY (type_name, qualified_name)
) WITHOUT ROWID;
"""
# Columns added after the first release (ALTER TABLE on an older file).
_RUN_STATE_COLUMNS = {
    "version": "INTEGER NOT NULL DEFAULT 0",
    "written": "TEXT",
    "claimed": "TEXT",
    "due_at": "REAL",
    "due_attempts": "INTEGER NOT NULL DEFAULT 0",
}
_KEYS_IN = "SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)"


def _keys_json(keys: Iterable[Key]) -> str:
    return json.dumps(sorted_keys(keys), separators=(",", ":"))


def _keys_from(text: str | None) -> set[Key]:
    return {(t, q) for t, q in json.loads(text)} if text else set()


class SqliteRunStateStore(SqliteFile):
    """RunStateStore over a local SQLite file (see the module docstring and olparser/runs/store.py)."""

    def __init__(self, path: Path, *, ttl_seconds: int, busy_timeout_seconds: float = 30.0,
                 max_datasets: int | None = None) -> None:
        super().__init__(path, busy_timeout_seconds)
        self.ttl_seconds = ttl_seconds
        self.max_datasets = max_datasets
        with self._immediate() as db:  # one process creates or upgrades the schema, the others then see it done
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            present = {row[1] for row in db.execute("PRAGMA table_info(run_state)")}
            for column, declaration in _RUN_STATE_COLUMNS.items():
                if column not in present:
                    db.execute(f"ALTER TABLE run_state ADD COLUMN {column} {declaration}")
            db.execute("CREATE INDEX IF NOT EXISTS run_state_due_at ON run_state (due_at) WHERE due_at IS NOT NULL")
            process_columns = {row[1] for row in db.execute("PRAGMA table_info(process_runs)")}
            if "run_key" not in process_columns:
                db.execute("ALTER TABLE process_runs ADD COLUMN run_key TEXT NOT NULL DEFAULT ''")
            if "writers" not in process_columns:
                db.execute("ALTER TABLE process_runs ADD COLUMN writers TEXT")

    # --- merged events -----------------------------------------------------------------------------------------
    def merge(self, event: JSON, *, now: float | None = None) -> RunSnapshot:
        return self.merge_versioned(event, now=now)[0]

    def merge_versioned(self, event: JSON, *, now: float | None = None,
                        max_datasets: int | None = None) -> tuple[RunSnapshot, int]:
        run_id = event_run_id(event)
        max_datasets = self.max_datasets if max_datasets is None else max_datasets
        now = time.time() if now is None else now
        with self._immediate() as db:
            row = db.execute("SELECT state, fingerprint, updated_at, version FROM run_state WHERE run_id = ?",
                             (run_id,)).fetchone()
            live = row is not None and not self._expired(row[2], now)
            previous = from_json(row[0]) if live and row[0] else None
            snapshot = merge_event(previous, event, max_datasets=max_datasets)
            version = (row[3] if row is not None else 0) + 1
            db.execute(
                "INSERT INTO run_state (run_id, state, fingerprint, updated_at, version) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (run_id) DO UPDATE SET state = excluded.state, fingerprint = excluded.fingerprint, "
                "updated_at = excluded.updated_at, version = excluded.version",
                (run_id, to_json(snapshot), row[1] if live else None, now, version),
            )
        return snapshot, version

    def get(self, run_id: str, *, now: float | None = None) -> RunSnapshot | None:
        return self.get_versioned(run_id, now=now)[0]

    def get_versioned(self, run_id: str, *, now: float | None = None) -> tuple[RunSnapshot | None, int]:
        now = time.time() if now is None else now
        row = self._connection().execute("SELECT state, updated_at, version FROM run_state WHERE run_id = ?",
                                         (run_id,)).fetchone()
        if row is None:
            return None, 0
        live = not self._expired(row[1], now)
        return (from_json(row[0]) if live and row[0] else None), row[2]

    def written_fingerprint(self, run_key: str, *, now: float | None = None) -> str | None:
        now = time.time() if now is None else now
        row = self._connection().execute("SELECT fingerprint, updated_at FROM run_state WHERE run_id = ?",
                                         (run_key,)).fetchone()
        return None if row is None or self._expired(row[1], now) else row[0]

    # --- what runs wrote ---------------------------------------------------------------------------------------
    def claim(self, run_key: str, keys: Iterable[Key], *, now: float | None = None) -> frozenset[Key]:
        now = time.time() if now is None else now
        keys = set(sorted_keys(keys))
        with self._immediate() as db:
            row = db.execute("SELECT claimed FROM run_state WHERE run_id = ?", (run_key,)).fetchone()
            claimed = _keys_from(row[0]) if row is not None else set()
            new = keys - claimed
            db.executemany(
                "INSERT INTO entity_refs (type_name, qualified_name, users) VALUES (?, ?, 1) "
                "ON CONFLICT (type_name, qualified_name) DO UPDATE SET users = users + 1", sorted(new))
            db.execute(
                "INSERT INTO run_state (run_id, updated_at, claimed) VALUES (?, ?, ?) ON CONFLICT (run_id) DO UPDATE "
                "SET claimed = excluded.claimed, updated_at = excluded.updated_at",
                (run_key, now, _keys_json(claimed | keys)))
            return self._contested(db, keys, now)

    def claimed(self, run_key: str) -> frozenset[Key]:
        row = self._connection().execute("SELECT claimed FROM run_state WHERE run_id = ?", (run_key,)).fetchone()
        return frozenset(_keys_from(row[0]) if row is not None else ())

    def contested(self, keys: Iterable[Key], *, now: float | None = None) -> frozenset[Key]:
        return self._contested(self._connection(), set(keys), time.time() if now is None else now)

    def commit(self, run_key: str, keys: Iterable[Key], *, version: int | None, fingerprint: str,
               process_names: Sequence[str] = (), run_time: float | None = None, dangling: Iterable[Key] = (),
               process_types: frozenset[str] = frozenset(), now: float | None = None) -> CommitResult:
        now = time.time() if now is None else now
        keys = set(sorted_keys(keys))
        restores: list[tuple[str, str]] = []
        with self._immediate() as db:
            row = db.execute("SELECT claimed, version FROM run_state WHERE run_id = ?", (run_key,)).fetchone()
            if version is not None and (row is None or row[1] != version):
                return CommitResult(stale=True)
            claimed = _keys_from(row[0]) if row is not None else set()
            removed = claimed - keys
            db.executemany("UPDATE entity_refs SET users = users - 1 WHERE type_name = ? AND qualified_name = ?",
                           sorted(removed))
            candidates = removed | (set(sorted_keys(dangling)) - keys - claimed)
            orphans = [key for key in sorted(candidates) if self._users(db, key) <= 0]
            db.executemany(
                "INSERT INTO entity_refs (type_name, qualified_name, users, deleting_since) VALUES (?, ?, 0, ?) "
                "ON CONFLICT (type_name, qualified_name) DO UPDATE SET deleting_since = excluded.deleting_since",
                [(t, q, now) for t, q in orphans])
            db.execute(
                "INSERT INTO run_state (run_id, updated_at, written, claimed, fingerprint) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (run_id) DO UPDATE SET written = excluded.written, claimed = excluded.claimed, "
                "fingerprint = excluded.fingerprint, updated_at = excluded.updated_at, due_at = NULL, "
                "due_attempts = 0",
                (run_key, now, _keys_json(keys), _keys_json(keys), fingerprint))
            newest: set[str] = set()
            if process_names and run_time is not None:
                newest = self._record_process_runs(db, process_names, run_time, run_key)
            for _, name in sorted(key for key in removed if key[0] in process_types):
                writers, was_newest = drop_writer(self._writers(db, name), run_key)
                self._save_writers(db, name, writers)
                if was_newest and writers:
                    restores.append((name, writers[0][1]))
        return CommitResult(orphans=tuple(orphans), restores=tuple(restores), newest=frozenset(newest))

    def finish_deletes(self, keys: Iterable[Key]) -> None:
        keys = sorted_keys(keys)
        if not keys:
            return
        with self._immediate() as db:
            db.executemany("DELETE FROM entity_refs WHERE type_name = ? AND qualified_name = ? AND users <= 0", keys)
            db.executemany("UPDATE entity_refs SET deleting_since = NULL WHERE type_name = ? AND qualified_name = ?",
                           keys)

    def abandoned_deletes(self, now: float, limit: int) -> list[Key]:
        with self._immediate() as db:
            rows = db.execute(
                "UPDATE entity_refs SET deleting_since = ? WHERE (type_name, qualified_name) IN (SELECT type_name, "
                "qualified_name FROM entity_refs WHERE users <= 0 AND deleting_since <= ? LIMIT ?) "
                "RETURNING type_name, qualified_name", (now, now - TOMBSTONE_SECONDS, limit)).fetchall()
        return sorted((t, q) for t, q in rows)

    # --- the incomplete-runs timer -----------------------------------------------------------------------------
    def schedule(self, run_key: str, due_at: float | None, *, keep_earlier: bool = False) -> None:
        with self._immediate() as db:
            db.execute(
                "UPDATE run_state SET due_attempts = 0, due_at = CASE WHEN ? AND due_at IS NOT NULL AND "
                "due_at < ? THEN due_at ELSE ? END WHERE run_id = ?",
                (keep_earlier, due_at, due_at, run_key))

    def due_runs(self, now: float, limit: int) -> list[str]:
        rows = self._connection().execute(
            "SELECT run_id FROM run_state WHERE due_at IS NOT NULL AND due_at <= ? ORDER BY due_at, run_id LIMIT ?",
            (now, limit))
        return [row[0] for row in rows]

    def postpone(self, run_key: str, due_at: float) -> int:
        with self._immediate() as db:
            row = db.execute("UPDATE run_state SET due_at = ?, due_attempts = due_attempts + 1 WHERE run_id = ? "
                             "RETURNING due_attempts", (due_at, run_key)).fetchone()
        return row[0] if row is not None else 0

    # --- housekeeping ------------------------------------------------------------------------------------------
    def purge_expired(self, now: float | None = None) -> int:
        now = time.time() if now is None else now
        with self._immediate() as db:
            return db.execute("DELETE FROM run_state WHERE updated_at <= ? AND due_at IS NULL",
                              (now - self.ttl_seconds,)).rowcount

    def process_writers(self, qualified_names: Sequence[str]) -> dict[str, tuple[float, str]]:
        rows = self._connection().execute(
            "SELECT qualified_name, run_time, run_key FROM process_runs "
            "WHERE qualified_name IN (SELECT value FROM json_each(?))", (json.dumps(list(qualified_names)),))
        return {name: (time_, key) for name, time_, key in rows}

    def record_process_runs(self, qualified_names: Sequence[str], run_time: float, run_key: str = "") -> None:
        with self._immediate() as db:
            self._record_process_runs(db, qualified_names, run_time, run_key)

    def reset_process_runs(self, qualified_names: Sequence[str]) -> int:
        with self._immediate() as db:
            return db.execute("DELETE FROM process_runs WHERE qualified_name IN (SELECT value FROM json_each(?))",
                              (json.dumps(list(qualified_names)),)).rowcount

    def stats(self) -> StoreStats:
        db = self._connection()
        runs, due = db.execute("SELECT count(*), count(due_at) FROM run_state").fetchone()
        entities = db.execute("SELECT count(*) FROM entity_refs").fetchone()[0]
        processes = db.execute("SELECT count(*) FROM process_runs").fetchone()[0]
        interim = db.execute("SELECT count(*) FROM interim_datasets").fetchone()[0]
        return StoreStats(runs=runs, due=due, entities=entities, processes=processes, interim=interim)

    # --- interim datasets (the re-link timer) ------------------------------------------------------------------
    def register_interim(self, entries: Mapping[Key, str], *, now: float | None = None) -> None:
        now = time.time() if now is None else now
        rows = [(t, q, candidates, now, now) for (t, q), candidates in sorted(entries.items())]
        if not rows:
            return
        with self._immediate() as db:
            db.executemany(
                "INSERT INTO interim_datasets (type_name, qualified_name, candidates, registered_at, checked_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (type_name, qualified_name) DO UPDATE SET "
                "candidates = excluded.candidates", rows)

    def interim_keys(self, keys: Iterable[Key]) -> set[Key]:
        wanted = sorted_keys(keys)
        if not wanted:
            return set()
        rows = self._connection().execute(
            f"SELECT type_name, qualified_name FROM interim_datasets WHERE (type_name, qualified_name) IN "
            f"({_KEYS_IN})", (_keys_json(wanted),))
        return {(t, q) for t, q in rows}

    def due_interim(self, limit: int) -> list[InterimDataset]:
        rows = self._connection().execute(
            "SELECT type_name, qualified_name, candidates, registered_at, checked_at FROM interim_datasets "
            "ORDER BY checked_at, type_name, qualified_name LIMIT ?", (limit,))
        return [InterimDataset((t, q), candidates, registered, checked) for t, q, candidates, registered, checked
                in rows]

    def checked_interim(self, keys: Iterable[Key], *, now: float | None = None) -> None:
        now = time.time() if now is None else now
        with self._immediate() as db:
            db.executemany("UPDATE interim_datasets SET checked_at = ? WHERE type_name = ? AND qualified_name = ?",
                           [(now, t, q) for t, q in sorted_keys(keys)])

    def forget_interim(self, keys: Iterable[Key]) -> None:
        with self._immediate() as db:
            db.executemany("DELETE FROM interim_datasets WHERE type_name = ? AND qualified_name = ?",
                           sorted_keys(keys))

    # --- internals ---------------------------------------------------------------------------------------------
    @classmethod
    def _record_process_runs(cls, db: sqlite3.Connection, qualified_names: Sequence[str], run_time: float,
                             run_key: str) -> set[str]:
        """Add the run as a writer of these processes; those it is now the newest writer of."""
        newest = set()
        for name in dict.fromkeys(qualified_names):
            writers = add_writer(cls._writers(db, name), (run_time, run_key))
            cls._save_writers(db, name, writers)
            if writers[0][1] == run_key:
                newest.add(name)
        return newest

    @staticmethod
    def _writers(db: sqlite3.Connection, name: str) -> list[Writer]:
        row = db.execute("SELECT run_time, run_key, writers FROM process_runs WHERE qualified_name = ?",
                         (name,)).fetchone()
        if row is None:
            return []
        return [(float(t), str(k)) for t, k in json.loads(row[2])] if row[2] else [(float(row[0]), row[1])]

    @staticmethod
    def _save_writers(db: sqlite3.Connection, name: str, writers: list[Writer]) -> None:
        if not writers:
            db.execute("DELETE FROM process_runs WHERE qualified_name = ?", (name,))
            return
        db.execute(
            "INSERT INTO process_runs (qualified_name, run_time, run_key, writers) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (qualified_name) DO UPDATE SET run_time = excluded.run_time, run_key = excluded.run_key, "
            "writers = excluded.writers", (name, writers[0][0], writers[0][1], json.dumps(writers)))

    @staticmethod
    def _users(db: sqlite3.Connection, key: Key) -> int:
        row = db.execute("SELECT users FROM entity_refs WHERE type_name = ? AND qualified_name = ?", key).fetchone()
        return row[0] if row is not None else 0

    @staticmethod
    def _contested(db: sqlite3.Connection, keys: set[Key], now: float) -> frozenset[Key]:
        if not keys:
            return frozenset()
        rows = db.execute(
            f"SELECT type_name, qualified_name FROM entity_refs WHERE (type_name, qualified_name) IN ({_KEYS_IN}) "
            "AND deleting_since > ?", (_keys_json(keys), now - TOMBSTONE_SECONDS))
        return frozenset((t, q) for t, q in rows)

    def _expired(self, updated_at: float, now: float) -> bool:
        return updated_at <= now - self.ttl_seconds
