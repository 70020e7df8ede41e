"""The ledger's sequence — claim, commit, carry out the intentions — written once, for both run-state stores.

What each step decides is the ledger's (olparser/runs/ledger.py, pure); in which order the rows are read and
written is here (`claim`, `commit`, `settle`, `carry_out`); how one row is read or written is the backend's
(`LedgerRows`: SQLite runs a step in one transaction, Table storage writes each row conditionally and retries).
`LedgerSteps` gives a store the three public steps over its `_ledger_rows()`.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from typing import Any, Callable, Generic, Iterable, Protocol, Sequence, TypeVar

from olparser.runs import ledger
from olparser.runs.ledger import CommitResult, Intentions, Key, OwnershipRecord, Writer, WriterChange, sorted_keys
from olparser.runs.store import RunSession, WritersRead

R = TypeVar("R")  # a backend's run row as read or written (what its next conditional write compares against)
T = TypeVar("T")


@dataclass(frozen=True)
class RunRead(Generic[R]):
    """The run's row as read: its ownership record, when it is due, and the backend's row itself."""

    record: OwnershipRecord
    due_at: float | None
    row: R


class LedgerRows(Protocol[R]):
    """One backend's row operations, as the sequence drives them (within one SQLite transaction, or row by row)."""

    def retried(self, attempt: Callable[[], T]) -> T:
        """Run `attempt`, again while another writer changed a row it read (SQLite: once, its transaction holds)."""
        ...

    def read_run(self, run_key: str) -> RunRead[R]:
        """The run's row."""
        ...

    def save_claim(self, run_key: str, read: RunRead[R], new: OwnershipRecord, now: float) -> None:
        """Save the run's record after `ledger.claim` (`new` is `read.record` when the claim changes nothing)."""
        ...

    def claim_users(self, run_key: str, keys: set[Key], before: OwnershipRecord, now: float) -> frozenset[Key]:
        """Record the run among the users of `keys` (at `before.epoch`: its record before the claim); the keys being
        deleted from the catalog right now."""
        ...

    def save_commit(self, run_key: str, read: RunRead[R], new: OwnershipRecord, due_at: float | None, now: float) -> R:
        """Save the run's record after `ledger.commit` (its pending intentions `new.pending`, due at `due_at`; None:
        carried out already, none saved); the row as written."""
        ...

    def release_user(self, key: Key, run_key: str, epoch: int, now: float) -> bool:
        """Remove the run from the entity's users if intentions of `epoch` still may; True when no user is left
        (the entity is then tombstoned: delete it)."""
        ...

    def change_writers(
        self, name: str, run_key: str, intentions: Intentions, read: WritersRead | None, seen: Sequence[Writer] | None
    ) -> WriterChange:
        """Carry out the intentions' part for process `name` (`ledger.writers_after` with `seen`; `read`: what the
        session's `process_writers` answered for it, a first attempt's row)."""
        ...

    def keep_pending(self, run_key: str, row: R, intentions: Intentions, settle_at: float) -> None:
        """Catalog work is left: the intentions stay recorded, due at `settle_at`."""
        ...

    def clear_pending(self, run_key: str, row: R, epoch: int) -> None:
        """No catalog work is left: the intentions of `epoch` are cleared (`row`: the run's row as last known)."""
        ...


def claim(rows: LedgerRows[R], run_key: str, keys: Iterable[Key], now: float) -> frozenset[Key]:
    """The run's record first (a crash before the users rows leaves nothing uploaded), then the users rows."""
    wanted = set(sorted_keys(keys))

    def attempt() -> OwnershipRecord:
        read = rows.read_run(run_key)
        rows.save_claim(run_key, read, ledger.claim(read.record, wanted), now)
        return read.record

    return rows.claim_users(run_key, wanted, rows.retried(attempt), now)


def commit(
    rows: LedgerRows[R],
    run_key: str,
    decide: Callable[[OwnershipRecord], OwnershipRecord | None],
    session: RunSession | None,
    now: float,
) -> CommitResult:
    """The commit (`decide`: `ledger.commit` of the run's record with the commit's plan) saved with its intentions,
    then the intentions carried out. Intentions that only make the run a writer (`ledger.writers_only`) are carried
    out first, and the commit saved without them when they leave no catalog work: the commit's write is the last
    one."""

    def attempt() -> tuple[Intentions, R, CommitResult | None] | None:
        read = rows.read_run(run_key)
        new = decide(read.record)
        if new is None:
            return None
        intentions = new.pending
        assert intentions is not None  # a commit records its intentions (ledger.commit)
        settle_at = now + ledger.SETTLE_SECONDS  # due when settled: the timer finds intentions a crash leaves
        if ledger.writers_only(read.record, intentions):
            changes = _changes(rows, run_key, intentions, intentions.wrote, session)
            done = ledger.settlement(intentions, (), changes)
            if not ledger.has_catalog_work(done):
                return intentions, rows.save_commit(run_key, read, replace(new, pending=None), None, now), done
            return intentions, rows.save_commit(run_key, read, new, settle_at, now), done  # (a restore left)
        return intentions, rows.save_commit(run_key, read, new, settle_at, now), None

    written = rows.retried(attempt)
    if written is None:
        return CommitResult(stale=True)
    intentions, row, done = written
    if done is not None:
        return done if ledger.has_catalog_work(done) else replace(done, epoch=None)
    return carry_out(rows, run_key, intentions, row, now, now + ledger.SETTLE_SECONDS, session)


def settle(rows: LedgerRows[R], run_key: str, now: float) -> CommitResult | None:
    """Carry out the run's pending intentions again (None: none pending); what the upload was decided on is not
    known any more (`ledger.AGAIN`)."""
    read = rows.read_run(run_key)
    pending = read.record.pending
    if pending is None:
        return None
    settle_at = read.due_at if read.due_at is not None else now + ledger.SETTLE_SECONDS
    return carry_out(rows, run_key, pending, read.row, now, settle_at, again=True)


def carry_out(
    rows: LedgerRows[R],
    run_key: str,
    intentions: Intentions,
    row: R,
    now: float,
    settle_at: float,
    session: RunSession | None = None,
    *,
    again: bool = False,
) -> CommitResult:
    """Release the users the intentions name, change the writers; the intentions stay recorded (due at `settle_at`)
    while catalog work is left, else they are cleared (`row`: the run's row as last read or written)."""
    orphans = [key for key in intentions.release if rows.release_user(key, run_key, intentions.epoch, now)]
    names = tuple(dict.fromkeys((*intentions.wrote, *intentions.dropped)))
    result = ledger.settlement(intentions, orphans, _changes(rows, run_key, intentions, names, session, again=again))
    if ledger.has_catalog_work(result):
        rows.keep_pending(run_key, row, intentions, settle_at)
        return result
    rows.clear_pending(run_key, row, intentions.epoch)
    return replace(result, epoch=None)


def _changes(
    rows: LedgerRows[R],
    run_key: str,
    intentions: Intentions,
    names: Sequence[str],
    session: RunSession | None,
    *,
    again: bool = False,
) -> dict[str, WriterChange]:
    """Each process's writers changed, checked against what the session's `process_writers` answered for it."""
    changes = {}
    for name in names:
        read = session.take(name) if session is not None else None
        seen = read.writers if read is not None else ledger.AGAIN if again else None
        changes[name] = rows.change_writers(name, run_key, intentions, read, seen)
    return changes


class LedgerSteps:
    """`claim`, `commit` and `settle` of a run-state store (olparser/runs/store.py documents them), over the rows
    its `_ledger_rows()` yields for one step."""

    def _ledger_rows(self) -> AbstractContextManager[LedgerRows[Any]]:
        raise NotImplementedError

    def claim(self, run_key: str, keys: Iterable[Key], *, now: float | None = None) -> frozenset[Key]:
        with self._ledger_rows() as rows:
            return claim(rows, run_key, keys, time.time() if now is None else now)

    def commit(
        self,
        run_key: str,
        keys: Iterable[Key],
        *,
        version: int | None,
        fingerprint: str,
        process_names: Sequence[str] = (),
        run_time: float | None = None,
        dangling: Iterable[Key] = (),
        process_types: frozenset[str] = frozenset(),
        session: RunSession | None = None,
        now: float | None = None,
    ) -> CommitResult:
        kept, released = sorted_keys(keys), sorted_keys(dangling)  # (the decision may be taken again)

        def decide(record: OwnershipRecord) -> OwnershipRecord | None:
            return ledger.commit(
                record,
                kept,
                version=version,
                fingerprint=fingerprint,
                process_names=process_names,
                run_time=run_time,
                dangling=released,
                process_types=process_types,
            )

        with self._ledger_rows() as rows:
            return commit(rows, run_key, decide, session, time.time() if now is None else now)

    def settle(self, run_key: str, *, now: float | None = None) -> CommitResult | None:
        with self._ledger_rows() as rows:
            return settle(rows, run_key, time.time() if now is None else now)
