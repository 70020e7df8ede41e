"""Run state in one SQLite file: WAL journal, one BEGIN IMMEDIATE transaction per operation.

Safe with several threads (a connection per thread) and several processes (SQLite's file locks; writers wait up to
`busy_timeout_seconds`). Tables: `run_state` (per run or static declaration: merged state as codec JSON, version,
fingerprint, written and claimed keys, due time), `entity_refs` (per connector-owned entity: how many runs use it,
and a tombstone while it is being deleted), `process_runs` (per process: the newest run time that wrote it),
`interim_datasets` (per dataset the connector created for want of a scanned asset: its candidates, when it was
registered and last re-resolved), `takeovers` (per process taken over from another connector, `olparser.runs.store.
Takeover`: its successor's owner and output, the ledger run holding it and the keys it uses, when it was registered
and last looked for; neither purged nor expired), `lifecycle_marks` (per dataset key: the newest drop or rename of its table and its
newest writer, `olparser.runs.marks.LifecycleMark`; purged with the runs, after `ttl_seconds` without a change).
"""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

from olparser.adapters.sqlite_file import SqliteFile
from olparser.jsontypes import JSON
from olparser.runs import ledger
from olparser.runs.codec import from_json, to_json
from olparser.runs.ledger import Key, Writer, sorted_keys
from olparser.runs.marks import LifecycleMark
from olparser.runs.merge import merge_event
from olparser.runs.model import RunSnapshot
from olparser.runs.ownership import LedgerSteps, RunRead
from olparser.runs.store import (
    MAX_TEMPORARY_ROWS,
    TOMBSTONE_SECONDS,
    InterimDataset,
    RunSession,
    ScheduleAfterMerge,
    StoreStats,
    Takeover,
    WritersRead,
    event_run_id,
    state_rewrite_needed,
)
from olparser.settings import DEFAULT_TEMPORARY_DATASET_SECONDS as TEMPORARY_DATASET_SECONDS

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
CREATE TABLE IF NOT EXISTS takeovers (
    type_name TEXT NOT NULL,
    qualified_name TEXT NOT NULL,
    owner TEXT NOT NULL,
    output TEXT NOT NULL,
    run_key TEXT NOT NULL,
    keys TEXT NOT NULL,
    registered_at REAL NOT NULL,
    checked_at REAL NOT NULL,
    PRIMARY KEY (type_name, qualified_name)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS takeovers_checked_at ON takeovers (checked_at);
CREATE INDEX IF NOT EXISTS takeovers_owner ON takeovers (owner);
CREATE TABLE IF NOT EXISTS temporary_datasets (
    scope TEXT NOT NULL,
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    role TEXT NOT NULL,
    run_key TEXT NOT NULL,
    passed_on BLOB,
    updated_at REAL NOT NULL,
    PRIMARY KEY (scope, namespace, name, role, run_key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS temporary_datasets_updated_at ON temporary_datasets (updated_at);
CREATE TABLE IF NOT EXISTS lifecycle_marks (
    type_name TEXT NOT NULL,
    qualified_name TEXT NOT NULL,
    mark TEXT NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (type_name, qualified_name)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS lifecycle_marks_updated_at ON lifecycle_marks (updated_at);
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
    "epoch": "INTEGER NOT NULL DEFAULT 0",
    "pending": "TEXT",
}
# One row per (entity, run using it): claiming again finds its row, so a run is never counted twice.
_USERS_SCHEMA = """
CREATE TABLE entity_users (
    type_name TEXT NOT NULL,
    qualified_name TEXT NOT NULL,
    run_key TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    PRIMARY KEY (type_name, qualified_name, run_key)
) WITHOUT ROWID
"""
T = TypeVar("T")
_KEYS_IN = "SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)"


def _keys_json(keys: Iterable[Key]) -> str:
    return json.dumps(sorted_keys(keys), separators=(",", ":"))


def _key_list(keys: Iterable[Key]) -> str:
    """Keys as JSON, in their order (a take-over's keys read back as registered)."""
    return json.dumps([[t, q] for t, q in keys], separators=(",", ":"), ensure_ascii=False)


def _keys_from(text: str | None) -> set[Key]:
    return {(t, q) for t, q in json.loads(text)} if text else set()


class SqliteRunStateStore(LedgerSteps, SqliteFile):
    """RunStateStore over a local SQLite file (see the module docstring and olparser/runs/store.py)."""

    def __init__(
        self,
        path: Path,
        *,
        ttl_seconds: int,
        busy_timeout_seconds: float = 30.0,
        max_datasets: int | None = None,
        temporary_seconds: float = TEMPORARY_DATASET_SECONDS,
    ) -> None:
        super().__init__(path, busy_timeout_seconds)
        self.ttl_seconds = ttl_seconds
        self.temporary_seconds = temporary_seconds
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
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "entity_users" not in tables:
                db.execute(_USERS_SCHEMA)
                self._users_from_counts(db)
            process_columns = {row[1] for row in db.execute("PRAGMA table_info(process_runs)")}
            if "run_key" not in process_columns:
                db.execute("ALTER TABLE process_runs ADD COLUMN run_key TEXT NOT NULL DEFAULT ''")
            if "writers" not in process_columns:
                db.execute("ALTER TABLE process_runs ADD COLUMN writers TEXT")

    # --- merged events -----------------------------------------------------------------------------------------
    def merge_versioned(
        self,
        event: JSON,
        *,
        now: float | None = None,
        max_datasets: int | None = None,
        schedule: ScheduleAfterMerge | None = None,
    ) -> tuple[RunSnapshot, int]:
        run_id = event_run_id(event)
        max_datasets = self.max_datasets if max_datasets is None else max_datasets
        now = time.time() if now is None else now
        with self._immediate() as db:
            row = db.execute(
                "SELECT state, fingerprint, updated_at, version FROM run_state WHERE run_id = ?", (run_id,)
            ).fetchone()
            live = row is not None and not self._expired(row[2], now)
            previous = from_json(row[0]) if live and row[0] else None
            snapshot = merge_event(previous, event, max_datasets=max_datasets)
            wanted = schedule(snapshot) if schedule is not None else None
            if row is None or state_rewrite_needed(live and to_json(snapshot) == row[0], row[2], now, self.ttl_seconds):
                version = (row[3] if row is not None else 0) + 1
                db.execute(
                    "INSERT INTO run_state (run_id, state, fingerprint, updated_at, version) VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT (run_id) DO UPDATE SET state = excluded.state, fingerprint = excluded.fingerprint, "
                    "updated_at = excluded.updated_at, version = excluded.version",
                    (run_id, to_json(snapshot), row[1] if live else None, now, version),
                )
            else:
                version = row[3]
            if wanted is not None:
                record, current = _record(db, run_id)
                at = ledger.due_at(record, current, wanted.due_at, keep_earlier=wanted.keep_earlier, now=now)
                db.execute("UPDATE run_state SET due_attempts = 0, due_at = ? WHERE run_id = ?", (at, run_id))
        return snapshot, version

    @contextmanager
    def session(self, run_key: str) -> Iterator[RunSession]:
        """Nothing to fold (a read is a local query): the session only carries what `process_writers` answers in it
        to its commit."""
        yield RunSession(run_key, folds=True)

    def get_versioned(self, run_id: str, *, now: float | None = None) -> tuple[RunSnapshot | None, int]:
        now = time.time() if now is None else now
        row = (
            self._connection()
            .execute("SELECT state, updated_at, version FROM run_state WHERE run_id = ?", (run_id,))
            .fetchone()
        )
        if row is None:
            return None, 0
        live = not self._expired(row[1], now)
        return (from_json(row[0]) if live and row[0] else None), row[2]

    def written_fingerprint(self, run_key: str, *, now: float | None = None) -> str | None:
        now = time.time() if now is None else now
        row = (
            self._connection()
            .execute("SELECT fingerprint, updated_at FROM run_state WHERE run_id = ?", (run_key,))
            .fetchone()
        )
        return None if row is None or self._expired(row[1], now) else row[0]

    # --- what runs wrote: the ownership ledger (olparser/runs/ledger.py), one transaction per step ---------------
    # (claim, commit, settle: the sequence of olparser/runs/ownership.py over these rows)
    @contextmanager
    def _ledger_rows(self) -> Iterator[_LedgerRows]:
        with self._immediate() as db:
            yield _LedgerRows(db)

    def claimed(self, run_key: str) -> frozenset[Key]:
        row = self._connection().execute("SELECT claimed FROM run_state WHERE run_id = ?", (run_key,)).fetchone()
        return frozenset(_keys_from(row[0]) if row is not None else ())

    def contested(self, keys: Iterable[Key], *, now: float | None = None) -> frozenset[Key]:
        return _contested(self._connection(), set(keys), time.time() if now is None else now)

    def done(self, run_key: str, epoch: int) -> None:
        with self._immediate() as db:
            record, _ = _record(db, run_key)
            if ledger.done(record, epoch) is not record:
                db.execute(
                    "UPDATE run_state SET pending = NULL, due_at = NULL, due_attempts = 0 WHERE run_id = ?", (run_key,)
                )

    def finish_deletes(self, keys: Iterable[Key]) -> None:
        keys = sorted_keys(keys)
        if not keys:
            return
        with self._immediate() as db:
            db.executemany(
                "DELETE FROM entity_refs WHERE type_name = ?1 AND qualified_name = ?2 AND users <= 0 AND NOT EXISTS "
                "(SELECT 1 FROM entity_users u WHERE u.type_name = ?1 AND u.qualified_name = ?2)",
                keys,
            )
            db.executemany(
                "UPDATE entity_refs SET deleting_since = NULL WHERE type_name = ? AND qualified_name = ?", keys
            )

    def abandoned_deletes(self, now: float, limit: int) -> list[Key]:
        with self._immediate() as db:
            rows = db.execute(
                "UPDATE entity_refs SET deleting_since = ? WHERE (type_name, qualified_name) IN (SELECT r.type_name, "
                "r.qualified_name FROM entity_refs r WHERE r.users <= 0 AND r.deleting_since <= ? AND NOT EXISTS "
                "(SELECT 1 FROM entity_users u WHERE u.type_name = r.type_name AND u.qualified_name = r.qualified_name)"
                " LIMIT ?) RETURNING type_name, qualified_name",
                (now, now - TOMBSTONE_SECONDS, limit),
            ).fetchall()
        return sorted((t, q) for t, q in rows)

    # --- the incomplete-runs timer -----------------------------------------------------------------------------
    def schedule(self, run_key: str, due_at: float | None, *, keep_earlier: bool = False) -> None:
        with self._immediate() as db:
            record, current = _record(db, run_key)
            at = ledger.due_at(record, current, due_at, keep_earlier=keep_earlier, now=time.time())
            db.execute("UPDATE run_state SET due_attempts = 0, due_at = ? WHERE run_id = ?", (at, run_key))

    def due_runs(self, now: float, limit: int) -> list[str]:
        rows = self._connection().execute(
            "SELECT run_id FROM run_state WHERE due_at IS NOT NULL AND due_at <= ? ORDER BY due_at, run_id LIMIT ?",
            (now, limit),
        )
        return [row[0] for row in rows]

    def postpone(self, run_key: str, due_at: float) -> int:
        with self._immediate() as db:
            row = db.execute(
                "UPDATE run_state SET due_at = ?, due_attempts = due_attempts + 1 WHERE run_id = ? "
                "RETURNING due_attempts",
                (due_at, run_key),
            ).fetchone()
        return row[0] if row is not None else 0

    # --- housekeeping ------------------------------------------------------------------------------------------
    def purge_expired(self, now: float | None = None) -> int:
        now = time.time() if now is None else now
        with self._immediate() as db:
            db.execute("DELETE FROM temporary_datasets WHERE updated_at <= ?", (now - self.temporary_seconds,))
            db.execute("DELETE FROM lifecycle_marks WHERE updated_at <= ?", (now - self.ttl_seconds,))
            return db.execute(
                "DELETE FROM run_state WHERE updated_at <= ? AND due_at IS NULL", (now - self.ttl_seconds,)
            ).rowcount

    # --- tables dropped and renamed ------------------------------------------------------------------------------
    def record_lifecycle(
        self, marks: Mapping[Key, LifecycleMark], *, now: float | None = None
    ) -> dict[Key, LifecycleMark]:
        now = time.time() if now is None else now
        wanted = sorted_keys(marks)
        if not wanted:
            return {}
        with self._immediate() as db:
            stored = {
                (t, q): LifecycleMark.from_json(json.loads(mark))
                for t, q, mark in db.execute(
                    f"SELECT type_name, qualified_name, mark FROM lifecycle_marks WHERE (type_name, qualified_name) IN "
                    f"({_KEYS_IN})",
                    (_keys_json(wanted),),
                )
            }
            merged = {key: stored[key].merged(marks[key]) if key in stored else marks[key] for key in wanted}
            db.executemany(
                "INSERT INTO lifecycle_marks VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET mark = excluded.mark, "
                "updated_at = excluded.updated_at",
                [
                    (t, q, json.dumps(merged[(t, q)].to_json(), separators=(",", ":")), now)
                    for t, q in wanted
                    if merged[(t, q)] != stored.get((t, q))
                ],
            )
        return merged

    # --- temporary datasets ------------------------------------------------------------------------------------
    def record_temporary(
        self, scope: str, writer: str, writes: Mapping[tuple[str, str], bytes], *, now: float | None = None
    ) -> frozenset[str]:
        now = time.time() if now is None else now
        readers: set[str] = set()
        with self._immediate() as db:
            for (namespace, name), passed_on in sorted(writes.items()):
                db.execute(
                    "INSERT INTO temporary_datasets VALUES (?, ?, ?, 'w', ?, ?, ?) ON CONFLICT DO UPDATE SET "
                    "passed_on = excluded.passed_on, updated_at = excluded.updated_at",
                    (scope, namespace, name, writer, passed_on, now),
                )
                readers.update(
                    row[0]
                    for row in db.execute(
                        "SELECT run_key FROM temporary_datasets WHERE scope = ? AND namespace = ? AND name = ? AND "
                        "role = 'r' AND updated_at > ? ORDER BY run_key LIMIT ?",
                        (scope, namespace, name, now - self.temporary_seconds, MAX_TEMPORARY_ROWS),
                    )
                )
            readers.discard(writer)
            db.executemany(
                "UPDATE run_state SET version = version + 1 WHERE run_id = ?", [(reader,) for reader in sorted(readers)]
            )
        return frozenset(readers)

    def temporary_sources(
        self, scope: str, names: Sequence[tuple[str, str]], reader: str, *, now: float | None = None
    ) -> dict[tuple[str, str], list[bytes]]:
        now = time.time() if now is None else now
        found: dict[tuple[str, str], list[bytes]] = {}
        with self._immediate() as db:
            for namespace, name in names:
                db.execute(
                    "INSERT INTO temporary_datasets VALUES (?, ?, ?, 'r', ?, NULL, ?) ON CONFLICT DO UPDATE "
                    "SET updated_at = excluded.updated_at",
                    (scope, namespace, name, reader, now),
                )
                rows = db.execute(
                    "SELECT passed_on FROM temporary_datasets WHERE scope = ? AND namespace = ? AND "
                    "name = ? AND role = 'w' AND run_key != ? AND updated_at > ? ORDER BY run_key "
                    "LIMIT ?",
                    (scope, namespace, name, reader, now - self.temporary_seconds, MAX_TEMPORARY_ROWS),
                ).fetchall()
                if rows:
                    found[(namespace, name)] = [bytes(row[0]) for row in rows]
        return found

    def process_writers(
        self, qualified_names: Sequence[str], *, session: RunSession | None = None
    ) -> dict[str, tuple[float, str]]:
        rows = self._connection().execute(
            "SELECT qualified_name, run_time, run_key FROM process_runs "
            "WHERE qualified_name IN (SELECT value FROM json_each(?))",
            (json.dumps(list(qualified_names)),),
        )
        found = {name: (time_, key) for name, time_, key in rows}
        if session is not None:  # for the commit that follows in it
            for name in qualified_names:
                session.note(name, WritersRead((found[name],) if name in found else ()))
        return found

    def reset_process_runs(self, qualified_names: Sequence[str]) -> int:
        with self._immediate() as db:
            return db.execute(
                "DELETE FROM process_runs WHERE qualified_name IN (SELECT value FROM json_each(?))",
                (json.dumps(list(qualified_names)),),
            ).rowcount

    def stats(self) -> StoreStats:
        db = self._connection()
        runs, due = db.execute("SELECT count(*), count(due_at) FROM run_state").fetchone()
        entities = db.execute("SELECT count(*) FROM entity_refs").fetchone()[0]
        processes = db.execute("SELECT count(*) FROM process_runs").fetchone()[0]
        interim = db.execute("SELECT count(*) FROM interim_datasets").fetchone()[0]
        takeovers = db.execute("SELECT count(*) FROM takeovers").fetchone()[0]
        return StoreStats(
            runs=runs, due=due, entities=entities, processes=processes, interim=interim, takeovers=takeovers
        )

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
                "candidates = excluded.candidates",
                rows,
            )

    def interim_keys(self, keys: Iterable[Key]) -> set[Key]:
        wanted = sorted_keys(keys)
        if not wanted:
            return set()
        rows = self._connection().execute(
            f"SELECT type_name, qualified_name FROM interim_datasets WHERE (type_name, qualified_name) IN ({_KEYS_IN})",
            (_keys_json(wanted),),
        )
        return {(t, q) for t, q in rows}

    def due_interim(self, limit: int) -> list[InterimDataset]:
        rows = self._connection().execute(
            "SELECT type_name, qualified_name, candidates, registered_at, checked_at FROM interim_datasets "
            "ORDER BY checked_at, type_name, qualified_name LIMIT ?",
            (limit,),
        )
        return [
            InterimDataset((t, q), candidates, registered, checked) for t, q, candidates, registered, checked in rows
        ]

    def checked_interim(self, keys: Iterable[Key], *, now: float | None = None) -> None:
        self._checked("interim_datasets", keys, time.time() if now is None else now)

    def forget_interim(self, keys: Iterable[Key]) -> None:
        self._forget("interim_datasets", keys)

    # --- processes taken over from another connector (ol2purview migrate accelerator) ---------------------------
    def register_takeovers(self, entries: Sequence[Takeover]) -> None:
        rows = [
            (*entry.process, entry.owner, entry.output, entry.run_key, _key_list(entry.keys))
            + (entry.registered_at, entry.checked_at)
            for entry in entries
        ]
        if not rows:
            return
        with self._immediate() as db:
            db.executemany(
                "INSERT INTO takeovers (type_name, qualified_name, owner, output, run_key, keys, registered_at, "
                "checked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (type_name, qualified_name) DO UPDATE SET "
                "owner = excluded.owner, output = excluded.output, run_key = excluded.run_key, keys = excluded.keys",
                rows,
            )

    def pending_takeovers(self, limit: int | None = None, *, owners: Iterable[str] | None = None) -> list[Takeover]:
        parameters: list[object] = [-1 if limit is None else limit]  # (LIMIT -1: no limit)
        among = ""
        if owners is not None:
            among = "WHERE owner IN (SELECT value FROM json_each(?)) "
            parameters = [json.dumps(sorted(set(owners))), *parameters]
        rows = self._connection().execute(
            "SELECT type_name, qualified_name, owner, output, run_key, keys, registered_at, checked_at FROM takeovers "
            f"{among}ORDER BY checked_at, type_name, qualified_name LIMIT ?",
            parameters,
        )
        return [
            Takeover((t, q), owner, output, run_key, tuple((a, b) for a, b in json.loads(keys)), registered, checked)
            for t, q, owner, output, run_key, keys, registered, checked in rows
        ]

    def checked_takeovers(self, processes: Iterable[Key], *, now: float | None = None) -> None:
        self._checked("takeovers", processes, time.time() if now is None else now)

    def forget_takeovers(self, processes: Iterable[Key]) -> None:
        self._forget("takeovers", processes)

    # --- the registries (interim datasets, take-overs): a row per key ------------------------------------------
    def _checked(self, table: str, keys: Iterable[Key], now: float) -> None:
        """The rows of these keys in `table` were looked at `now` (a key not there is passed over)."""
        with self._immediate() as db:
            db.executemany(
                f"UPDATE {table} SET checked_at = ? WHERE type_name = ? AND qualified_name = ?",
                [(now, t, q) for t, q in sorted_keys(keys)],
            )

    def _forget(self, table: str, keys: Iterable[Key]) -> None:
        with self._immediate() as db:
            db.executemany(f"DELETE FROM {table} WHERE type_name = ? AND qualified_name = ?", sorted_keys(keys))

    # --- what the ledger holds for the connector ---------------------------------------------------------------
    def owned(self, keys: Iterable[Key]) -> set[Key]:
        wanted = _keys_json(keys)
        return set(self._held(f"(type_name, qualified_name) IN ({_KEYS_IN})", wanted))

    def owned_of_types(self, type_names: Iterable[str]) -> list[Key]:
        return self._held("type_name IN (SELECT value FROM json_each(?))", json.dumps(sorted(set(type_names))))

    def _held(self, where: str, values: str) -> list[Key]:
        """The keys matching `where` (one parameter, `values`) that some run uses, or that an older version counted
        users for (`ledger.orphaned`: not owned), sorted."""
        rows = self._connection().execute(
            "SELECT type_name, qualified_name, sum(users), sum(legacy) FROM ("
            f"SELECT type_name, qualified_name, 1 AS users, 0 AS legacy FROM entity_users WHERE {where} UNION ALL "
            f"SELECT type_name, qualified_name, 0, max(users, 0) FROM entity_refs WHERE {where}"
            ") GROUP BY type_name, qualified_name ORDER BY type_name, qualified_name",
            (values, values),
        )
        return [(t, q) for t, q, users, legacy in rows if not ledger.orphaned(users, legacy)]

    # --- internals ---------------------------------------------------------------------------------------------
    @staticmethod
    def _users_from_counts(db: sqlite3.Connection) -> None:
        """A file of a version that counted users: each run's claimed keys become its users rows (exact, in the
        schema upgrade's transaction), and the counts are retired."""
        for run_key, claimed in db.execute("SELECT run_id, claimed FROM run_state WHERE claimed IS NOT NULL"):
            db.executemany(
                "INSERT OR IGNORE INTO entity_users (type_name, qualified_name, run_key, epoch) VALUES (?, ?, ?, 0)",
                [(t, q, run_key) for t, q in sorted(_keys_from(claimed))],
            )
        db.execute("UPDATE entity_refs SET users = 0")

    def _expired(self, updated_at: float, now: float) -> bool:
        return updated_at <= now - self.ttl_seconds


# --- rows of one transaction ---------------------------------------------------------------------------------------
def _record(db: sqlite3.Connection, run_key: str) -> tuple[ledger.OwnershipRecord, float | None]:
    """The run's ownership record, and when it is due."""
    row = db.execute(
        "SELECT version, epoch, claimed, fingerprint, pending, due_at FROM run_state WHERE run_id = ?", (run_key,)
    ).fetchone()
    if row is None:
        return ledger.OwnershipRecord(), None
    pending = ledger.Intentions.from_json(json.loads(row[4])) if row[4] else None
    return ledger.OwnershipRecord(
        version=row[0], epoch=row[1], claimed=frozenset(_keys_from(row[2])), fingerprint=row[3], pending=pending
    ), row[5]


def _contested(db: sqlite3.Connection, keys: set[Key], now: float) -> frozenset[Key]:
    if not keys:
        return frozenset()
    rows = db.execute(
        f"SELECT type_name, qualified_name FROM entity_refs WHERE (type_name, qualified_name) IN ({_KEYS_IN}) "
        "AND deleting_since > ?",
        (_keys_json(keys), now - TOMBSTONE_SECONDS),
    )
    return frozenset((t, q) for t, q in rows)


class _LedgerRows:
    """The ledger's row operations (olparser/runs/ownership.py `LedgerRows`) within one transaction: the transaction
    makes each step atomic, so nothing is retried and no row needs remembering (`RunRead.row` is None)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def retried(self, attempt: Callable[[], T]) -> T:
        return attempt()

    def read_run(self, run_key: str) -> RunRead[None]:
        record, due = _record(self.db, run_key)
        return RunRead(record, due, None)

    def save_claim(self, run_key: str, read: RunRead[None], new: ledger.OwnershipRecord, now: float) -> None:
        self.db.execute(
            "INSERT INTO run_state (run_id, updated_at, claimed) VALUES (?, ?, ?) ON CONFLICT (run_id) DO UPDATE "
            "SET claimed = excluded.claimed, updated_at = excluded.updated_at",
            (run_key, now, _keys_json(new.claimed)),
        )

    def claim_users(self, run_key: str, keys: set[Key], before: ledger.OwnershipRecord, now: float) -> frozenset[Key]:
        current = self._user_epochs(run_key, keys)
        rows = [
            (t, q, run_key, epoch)
            for (t, q) in sorted(keys)
            if (epoch := ledger.claimed_epoch(current.get((t, q)), before.epoch)) is not None
        ]
        self.db.executemany(
            "INSERT INTO entity_users (type_name, qualified_name, run_key, epoch) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (type_name, qualified_name, run_key) DO UPDATE SET epoch = excluded.epoch",
            rows,
        )
        return _contested(self.db, keys, now)

    def save_commit(
        self, run_key: str, read: RunRead[None], new: ledger.OwnershipRecord, due_at: float | None, now: float
    ) -> None:
        pending = json.dumps(new.pending.to_json()) if new.pending is not None else None
        self.db.execute(
            "INSERT INTO run_state (run_id, updated_at, written, claimed, fingerprint, epoch, pending, due_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id) DO UPDATE SET written = excluded.written, "
            "claimed = excluded.claimed, fingerprint = excluded.fingerprint, updated_at = excluded.updated_at, "
            "epoch = excluded.epoch, due_attempts = 0, pending = excluded.pending, due_at = excluded.due_at",
            (run_key, now, _keys_json(new.claimed), _keys_json(new.claimed), new.fingerprint, new.epoch)
            + (pending, due_at),
        )

    def release_user(self, key: Key, run_key: str, epoch: int, now: float) -> bool:
        if ledger.releases(self._user_epochs(run_key, [key]).get(key), epoch):
            self.db.execute(
                "DELETE FROM entity_users WHERE type_name = ? AND qualified_name = ? AND run_key = ?", (*key, run_key)
            )
        if not ledger.orphaned(*self._users(key)):
            return False
        self.db.execute(
            "INSERT INTO entity_refs (type_name, qualified_name, users, deleting_since) VALUES (?, ?, 0, ?) "
            "ON CONFLICT (type_name, qualified_name) DO UPDATE SET deleting_since = excluded.deleting_since",
            (*key, now),
        )
        return True

    def change_writers(
        self,
        name: str,
        run_key: str,
        intentions: ledger.Intentions,
        read: WritersRead | None,
        seen: Sequence[Writer] | None,
    ) -> ledger.WriterChange:
        row = self.db.execute(
            "SELECT run_time, run_key, writers FROM process_runs WHERE qualified_name = ?", (name,)
        ).fetchone()
        writers = [] if row is None else ledger.stored_writers(row[2], row[0], row[1])
        change = ledger.writers_after(writers, run_key, intentions, name, seen=seen)
        if not change.writers:
            self.db.execute("DELETE FROM process_runs WHERE qualified_name = ?", (name,))
            return change
        self.db.execute(
            "INSERT INTO process_runs (qualified_name, run_time, run_key, writers) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (qualified_name) DO UPDATE SET run_time = excluded.run_time, run_key = excluded.run_key, "
            "writers = excluded.writers",
            (name, change.writers[0][0], change.writers[0][1], json.dumps(change.writers)),
        )
        return change

    def keep_pending(self, run_key: str, row: None, intentions: ledger.Intentions, settle_at: float) -> None:
        self.db.execute(
            "UPDATE run_state SET pending = ?, due_at = ? WHERE run_id = ?",
            (json.dumps(intentions.to_json()), settle_at, run_key),
        )

    def clear_pending(self, run_key: str, row: None, epoch: int) -> None:
        self.db.execute("UPDATE run_state SET pending = NULL, due_at = NULL WHERE run_id = ?", (run_key,))

    def _user_epochs(self, run_key: str, keys: Iterable[Key]) -> dict[Key, int]:
        rows = self.db.execute(
            f"SELECT type_name, qualified_name, epoch FROM entity_users WHERE run_key = ? AND "
            f"(type_name, qualified_name) IN ({_KEYS_IN})",
            (run_key, _keys_json(keys)),
        )
        return {(t, q): epoch for t, q, epoch in rows}

    def _users(self, key: Key) -> tuple[int, int]:
        """How many runs use the entity, and how many users an older version of this file counted (migrated)."""
        users = self.db.execute(
            "SELECT count(*) FROM entity_users WHERE type_name = ? AND qualified_name = ?", key
        ).fetchone()[0]
        row = self.db.execute(
            "SELECT users FROM entity_refs WHERE type_name = ? AND qualified_name = ?", key
        ).fetchone()
        return users, max(row[0], 0) if row is not None else 0
