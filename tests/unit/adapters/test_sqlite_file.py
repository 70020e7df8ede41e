"""SQLite files opened by several workers at once (the tasks of a Spark job opening the run history): the switch to
WAL, which SQLite can refuse at once with "database is locked" when another process opens the new file at the same
moment (its busy timeout does not cover that case), is tried again until the busy timeout has passed."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from olparser.adapters.sqlite_file import SqliteFile


class RefusingConnection:
    """A connection whose switch to WAL is refused `refusals` times (as the racing openers see it)."""

    def __init__(self, refusals: int, message: str = "database is locked") -> None:
        self.refusals, self.message, self.statements = refusals, message, []

    def execute(self, statement: str):
        self.statements.append(statement)
        if statement == "PRAGMA journal_mode=WAL" and self.refusals:
            self.refusals -= 1
            raise sqlite3.OperationalError(self.message)


def file_with(connection: RefusingConnection, tmp_path: Path, busy_timeout: float) -> SqliteFile:
    class Refused(SqliteFile):
        def _connection(self):  # type: ignore[override]
            return connection

    return Refused(tmp_path / "history.sqlite3", busy_timeout_seconds=busy_timeout)


def test_the_switch_to_wal_is_tried_again_while_the_file_is_locked(tmp_path):
    connection = RefusingConnection(refusals=3)
    file_with(connection, tmp_path, busy_timeout=30)
    assert connection.statements == ["PRAGMA journal_mode=WAL"] * 4


def test_a_lock_that_outlasts_the_busy_timeout_or_another_error_is_raised(tmp_path):
    with pytest.raises(sqlite3.OperationalError, match="database is locked"):
        file_with(RefusingConnection(refusals=10**9), tmp_path, busy_timeout=0.05)
    with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
        file_with(RefusingConnection(refusals=1, message="disk I/O error"), tmp_path, busy_timeout=30)


def test_many_workers_opening_a_new_file_at_the_same_moment_all_succeed(tmp_path: Path):
    failures: list[str] = []
    for attempt in range(250):  # without the retry, about one opener in 200 failed here
        barrier = threading.Barrier(4)

        def open_and_write(path: Path = tmp_path / f"{attempt}.sqlite3", barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            try:
                with SqliteFile(path, busy_timeout_seconds=10) as sqlite, sqlite._immediate() as db:
                    db.execute("CREATE TABLE IF NOT EXISTS t (x)")
                    db.execute("INSERT INTO t VALUES (1)")
            except Exception as exc:  # noqa: BLE001 - collected and asserted below
                failures.append(f"{type(exc).__name__}: {exc}")

        workers = [threading.Thread(target=open_and_write) for _ in range(4)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    assert failures == []
    with SqliteFile(tmp_path / "0.sqlite3") as sqlite:
        assert sqlite._connection().execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert sqlite._connection().execute("SELECT count(*) FROM t").fetchone() == (4,)
