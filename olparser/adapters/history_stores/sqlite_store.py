"""The run history in one SQLite file (WAL; one BEGIN IMMEDIATE transaction per record, so a record is replaced
atomically). Tables: `history_runs` (run -> its record, start, digest), `history_accesses` (dataset, open, inverted
start, run, access, process -> slim facts), `history_process_runs` (process, open, inverted start, run -> slim facts
and what that run of the process did), `history_stats` (the longest run recorded), `history_unrefreshed` (run, process: a summary the run changed whose
catalog copy is not confirmed rewritten). A process's summary is counted from its rows (the primary key's prefix),
so it is exact by construction.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path
from typing import Iterable, Sequence

from olparser.adapters.sqlite_file import SqliteFile
from olparser.history.model import (
    READ,
    WRITE,
    Access,
    DatasetRef,
    ProcessRun,
    ProcessSummary,
    RunFacts,
    RunRecord,
    facts_from_json,
    facts_to_json,
    process_from_json,
    process_to_json,
)
from olparser.history.store import (
    PURGE_BATCH,
    access_keys,
    changed_processes,
    inverted_ms,
    is_open,
    process_runs_of,
    slim,
)
from olparser.history.window import Window

_SCHEMA = """
CREATE TABLE IF NOT EXISTS history_runs (
    run_id TEXT PRIMARY KEY, start REAL NOT NULL, digest TEXT NOT NULL, record TEXT NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS history_runs_start ON history_runs (start);
CREATE TABLE IF NOT EXISTS history_accesses (
    dataset TEXT NOT NULL, access TEXT NOT NULL, open INTEGER NOT NULL, inv INTEGER NOT NULL, run_id TEXT NOT NULL,
    process TEXT NOT NULL, dataset_type TEXT NOT NULL, process_type TEXT NOT NULL, facts TEXT NOT NULL,
    PRIMARY KEY (dataset, access, open, inv, run_id, process)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS history_process_runs (
    process TEXT NOT NULL, open INTEGER NOT NULL, inv INTEGER NOT NULL, run_id TEXT NOT NULL, start REAL NOT NULL,
    facts TEXT NOT NULL, run TEXT NOT NULL, PRIMARY KEY (process, open, inv, run_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS history_stats (name TEXT PRIMARY KEY, value REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS history_unrefreshed (
    run_id TEXT NOT NULL, process TEXT NOT NULL, PRIMARY KEY (run_id, process)) WITHOUT ROWID;
"""
MAX_DURATION = "max_duration"


def _json(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class SqliteHistoryStore(SqliteFile):
    """RunHistoryStore over a local SQLite file (see olparser/history/store.py)."""

    def __init__(self, path: Path, *, retention_days: int, busy_timeout_seconds: float = 30.0) -> None:
        super().__init__(path, busy_timeout_seconds)
        self.retention_seconds = retention_days * 86400.0
        with self._immediate() as db:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)

    # --- writing -----------------------------------------------------------------------------------------------
    def record(self, record: RunRecord, *, now: float | None = None, keep_changes: bool = True) -> frozenset[str]:
        now = time.time() if now is None else now
        if record.facts.start < now - self.retention_seconds:
            return frozenset()
        text = record.canonical()
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        with self._immediate() as db:
            row = db.execute("SELECT digest, record FROM history_runs WHERE run_id = ?", (record.run_id,)).fetchone()
            unrefreshed = frozenset(
                name
                for (name,) in db.execute("SELECT process FROM history_unrefreshed WHERE run_id = ?", (record.run_id,))
            )
            if row is not None and row[0] == digest:
                return unrefreshed
            old = RunRecord.from_json(json.loads(row[1])) if row is not None else None
            self._delete_rows(db, old)
            facts = slim(record.facts)
            facts_text, opened, inv = _json(facts_to_json(facts)), int(is_open(facts)), inverted_ms(facts.start)
            db.executemany(
                "INSERT OR REPLACE INTO history_accesses VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        a.dataset.qualified_name,
                        a.access,
                        opened,
                        inv,
                        record.run_id,
                        a.process,
                        a.dataset.type_name,
                        a.process_type,
                        facts_text,
                    )
                    for a in access_keys(record).values()
                ],
            )
            db.executemany(
                "INSERT OR REPLACE INTO history_process_runs VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (p.qualified_name, opened, inv, record.run_id, facts.start, facts_text, _json(process_to_json(p)))
                    for p in record.processes
                ],
            )
            db.execute(
                "INSERT OR REPLACE INTO history_runs VALUES (?, ?, ?, ?)",
                (record.run_id, record.facts.start, digest, text),
            )
            duration = (record.facts.end - record.facts.start) if record.facts.end is not None else 0.0
            db.execute(
                "INSERT INTO history_stats VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET "
                "value = max(value, excluded.value)",
                (MAX_DURATION, max(duration, 0.0)),
            )
            changed = changed_processes(old, record)
            if keep_changes:
                db.executemany(
                    "INSERT OR IGNORE INTO history_unrefreshed VALUES (?, ?)",
                    [(record.run_id, name) for name in changed],
                )
        return changed | unrefreshed

    def refreshed(self, run_id: str, names: Iterable[str]) -> frozenset[str]:
        names = sorted(set(names))
        if names:
            with self._immediate() as db:
                db.executemany(
                    "DELETE FROM history_unrefreshed WHERE run_id = ? AND process = ?",
                    [(run_id, name) for name in names],
                )
        return frozenset()  # a record is one transaction: no other record of the run interleaves with it

    def purge(self, now: float | None = None, limit: int = PURGE_BATCH) -> int:
        now = time.time() if now is None else now
        with self._immediate() as db:
            rows = db.execute(
                "SELECT run_id, record FROM history_runs WHERE start < ? ORDER BY start LIMIT ?",
                (now - self.retention_seconds, limit),
            ).fetchall()
            for run_id, text in rows:
                self._delete_rows(db, RunRecord.from_json(json.loads(text)))
                db.execute("DELETE FROM history_runs WHERE run_id = ?", (run_id,))
                db.execute("DELETE FROM history_unrefreshed WHERE run_id = ?", (run_id,))
        return len(rows)

    @staticmethod
    def _delete_rows(db: sqlite3.Connection, record: RunRecord | None) -> None:
        if record is None:
            return
        opened, inv = int(is_open(record.facts)), inverted_ms(record.facts.start)
        db.executemany(
            "DELETE FROM history_accesses WHERE dataset = ? AND access = ? AND open = ? AND inv = ? AND "
            "run_id = ? AND process = ?",
            [
                (dataset, access, opened, inv, record.run_id, process)
                for dataset, access, process in access_keys(record)
            ],
        )
        db.executemany(
            "DELETE FROM history_process_runs WHERE process = ? AND open = ? AND inv = ? AND run_id = ?",
            [(name, opened, inv, record.run_id) for name in process_runs_of(record)],
        )

    # --- reading -----------------------------------------------------------------------------------------------
    def process_summaries(self, names: Sequence[str], *, recorded: str | None = None) -> dict[str, ProcessSummary]:
        rows = self._connection().execute(
            "SELECT process, count(*), min(start) FROM history_process_runs WHERE process IN "
            "(SELECT value FROM json_each(?)) GROUP BY process",
            (json.dumps(list(names)),),
        )
        return {name: ProcessSummary(count, first) for name, count, first in rows}

    def _bounds(self, window: Window) -> tuple[float, float]:
        """Inverted-start bounds of the rows that may overlap: started before `until`, and (closed runs) not before
        `since` minus the longest run recorded."""
        row = self._connection().execute("SELECT value FROM history_stats WHERE name = ?", (MAX_DURATION,)).fetchone()
        lowest = window.since - (row[0] if row else 0.0)
        return inverted_ms(window.until), inverted_ms(lowest)

    def dataset_accesses(self, dataset: str, window: Window, limit: int, access: str | None = None) -> list[Access]:
        newest, oldest = self._bounds(window)
        ranges, parameters = [], []
        for kind in (access,) if access else (READ, WRITE):
            ranges += [
                "SELECT inv, access, dataset_type, process, process_type, facts FROM history_accesses WHERE "
                "dataset = ? AND access = ? AND open = 0 AND inv > ? AND inv <= ?",
                "SELECT inv, access, dataset_type, process, process_type, facts FROM history_accesses WHERE "
                "dataset = ? AND access = ? AND open = 1 AND inv > ?",
            ]
            parameters += [dataset, kind, newest, oldest, dataset, kind, newest]
        rows = self._connection().execute(
            f"SELECT * FROM ({' UNION ALL '.join(ranges)}) ORDER BY inv LIMIT ?", (*parameters, max(limit, 0))
        )
        return [
            Access(DatasetRef(dataset, dataset_type), kind, process, process_type, facts_from_json(json.loads(facts)))
            for _, kind, dataset_type, process, process_type, facts in rows
        ]

    def process_runs(self, process: str, window: Window, limit: int) -> list[tuple[RunFacts, ProcessRun]]:
        newest, oldest = self._bounds(window)
        rows = self._connection().execute(
            "SELECT * FROM (SELECT inv, facts, run FROM history_process_runs WHERE process = ? AND open = 0 AND "
            "inv > ? AND inv <= ? UNION ALL SELECT inv, facts, run FROM history_process_runs WHERE process = ? AND "
            "open = 1 AND inv > ?) ORDER BY inv LIMIT ?",
            (process, newest, oldest, process, newest, max(limit, 0)),
        )
        return [(facts_from_json(json.loads(facts)), process_from_json(json.loads(run))) for _, facts, run in rows]

    def newest_access(self, dataset: str) -> Access | None:
        found = []
        for kind in (READ, WRITE):
            for opened in (0, 1):  # the lowest inverted start of each key range
                row = (
                    self._connection()
                    .execute(
                        "SELECT inv, dataset_type, process, process_type, facts FROM history_accesses WHERE dataset = ? "
                        "AND access = ? AND open = ? ORDER BY inv LIMIT 1",
                        (dataset, kind, opened),
                    )
                    .fetchone()
                )
                if row is not None:
                    found.append((row[0], kind, *row[1:]))
        if not found:
            return None
        _, kind, dataset_type, process, process_type, facts = min(found)
        return Access(
            DatasetRef(dataset, dataset_type), kind, process, process_type, facts_from_json(json.loads(facts))
        )

    def run(self, run_id: str) -> RunRecord | None:
        row = self._connection().execute("SELECT record FROM history_runs WHERE run_id = ?", (run_id,)).fetchone()
        return RunRecord.from_json(json.loads(row[0])) if row is not None else None

    def count_runs(self) -> int:
        count: int = self._connection().execute("SELECT count(*) FROM history_runs").fetchone()[0]
        return count
