"""Run state in Azure Table storage, shared by every instance of a scaled-out Function App.

Entities (every writer uses optimistic concurrency: read with the ETag, replace only if unchanged — 412 otherwise —,
create only if absent — 409 otherwise —, and retry the whole read-modify-write):

- one per run or static declaration: PartitionKey = 2 hex digits of sha256(key) (runIds are often UUIDv7, whose first
  digits are a timestamp: hashing spreads the runs over 256 partitions), RowKey = the key. The merged state is the
  codec's zlib-compressed JSON split into binary properties `state_0`, `state_1`, ... (a property holds at most
  64 KiB, an entity 1 MiB), with `state_parts`; the written and claimed keys and the pending intentions likewise
  (`written_*`, `claimed_*`, `pending_*`); `version`, `epoch`, `fingerprint`, `updated_at` (Unix seconds),
  `due_at` (when the timer should look at the run: it finds due runs by one query over the 256 run partitions),
  `due_attempts`, and `run_key` when the RowKey is a hash of the key (the timer's query answers with it); the
  previous releases' rows in a `due` partition are read and cleared, no longer written (`table_due.py`);
- per connector-owned entity, a partition of its own (PartitionKey `own-` + sha256 of type and qualifiedName): a head
  row (RowKey `entity`: `type_name`, `qualified_name`, `users`, `legacy`, `deleting_since`) and one row per run using
  it (RowKey `run-` + sha256 of the run key: `run_key`, `epoch`). A claim or a release changes the head's count and
  the run's row in one batch (a transaction within one partition, conditional on the head's ETag): the count is
  always the number of rows, and a run's row, once there, makes claiming again a no-op. (`legacy`: users counted by
  the version that kept only a count, in rows `ref-` + 2 hex digits; read once, never released: such entities are
  kept.);
- one per process qualifiedName (PartitionKey `process-` + 2 hex digits, RowKey = sha256 of the name): `run_time`,
  its newest writers. These and the users rows have no `updated_at`: purging runs keeps them;
- one per interim dataset, a dataset the connector created for want of a scanned asset (PartitionKey `interim`,
  RowKey = sha256 of type and qualifiedName): `type_name`, `qualified_name`, `candidates` (JSON), `registered_at`,
  `checked_at`. The re-link timer reads this one partition, oldest `checked_at` first; purging keeps them too;
- one per process taken over from another connector by `ol2purview migrate accelerator --apply` (PartitionKey
  `takeover`, RowKey = sha256 of type and qualifiedName): `type_name`, `qualified_name`, `owner` and `output` (what
  its successor will have), `run_key` (the ledger run holding it and its datasets), `keys` (those datasets, JSON),
  `registered_at`, `checked_at`. Read as one partition, least recently checked first; kept until forgotten (no
  `updated_at`: purging keeps them);
- one per dataset key whose table may be dropped or renamed (PartitionKey `lifecycle`, RowKey = sha256 of type and
  qualifiedName): `mark` (JSON, `olparser.runs.marks.LifecycleMark`), `marked_at`. A run's keys are read in one query
  (14 at a time) and changed in one batch; the timer purges those unchanged for the run-state TTL.

What the ledger (olparser/runs/ledger.py) decides at a commit is saved with the run's row (its pending intentions)
before any other row changes; the users and writers rows are then changed one compare-and-swap (or one batch) at a
time, each step idempotent, so a crash between two writes leaves intentions that `settle` carries out again.

This module holds the run's row (merges; the claims, commits and intentions of olparser/runs/ownership.py's sequence,
over `_LedgerRows`); the store's parts, each given its `table_base.RunRows` (the table, the run rows' keys, their
conditional reads, writes and transactions, the retries) and delegated to: `table_owned.py` the entities' users and
the processes' writers (and what the ledger holds: `owned`), `table_due.py` the timer's due runs, `table_side.py` the
temporary and interim datasets, the take-overs and the lifecycle marks; `table_rows.py` the conditional reads, writes
and transactions under all of them (shared with the run history's store).
"""

from __future__ import annotations

import time
from contextlib import contextmanager, nullcontext
from typing import Any, Callable, Generic, Iterable, Iterator, Mapping, Sequence, TypeVar

from azure.core.exceptions import ResourceExistsError, ResourceNotFoundError
from azure.data.tables import TableClient, TableEntity

from olparser.adapters.run_state.table_base import RunRows, RunStateConflict, get_keys, put_keys, put_pending
from olparser.adapters.run_state.table_due import DUE_PARTITION, DueRows, name_run
from olparser.adapters.run_state.table_owned import HEAD_ROW, OWNED_PREFIX, OwnedRows, ref_keys
from olparser.adapters.run_state.table_rows import PROPERTY_BYTES, get_blob, put_blob, safe_row_key
from olparser.adapters.run_state.table_side import (
    INTERIM_PARTITION,
    LIFECYCLE_PARTITION,
    TAKEOVER_PARTITION,
    TEMPORARY_PREFIX,
    SideRows,
)
from olparser.adapters.storage_account import StorageConnection, storage_account
from olparser.jsontypes import JSON
from olparser.runs import ledger
from olparser.runs.codec import from_compressed, to_compressed
from olparser.runs.ledger import Key, Writer
from olparser.runs.marks import LifecycleMark
from olparser.runs.merge import merge_event
from olparser.runs.model import RunSnapshot
from olparser.runs.ownership import LedgerSteps, RunRead
from olparser.runs.store import (
    InterimDataset,
    RunSession,
    ScheduleAfterMerge,
    StoreStats,
    Takeover,
    WritersRead,
    event_run_id,
    state_rewrite_needed,
)
from olparser.settings import DEFAULT_TEMPORARY_DATASET_SECONDS

__all__ = [
    "PROPERTY_BYTES",
    "RunStateConflict",
    "RunStateTooLarge",
    "TableRunStateStore",
    "get_blob",
    "put_blob",
    "safe_row_key",
]
# An entity holds at most 1 MiB, and binary properties travel base64-encoded (4/3 larger; Azurite counts that size):
# 720,000 bytes are ~960 KB on the wire, leaving room for the keys and the other properties.
MAX_STATE_BYTES = 720_000
MAX_ATTEMPTS = 40
T = TypeVar("T")
V = TypeVar("V")


class RunStateTooLarge(ValueError):
    """A run whose merged state does not fit in one Table storage entity."""


class _OfRows(Generic[V]):
    """An attribute of the store that is its `RunRows`' attribute of the same name."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, store: TableRunStateStore | None, owner: type | None = None) -> V:
        if store is None:  # (on the class: no value)
            raise AttributeError(self.name)
        value: V = getattr(store.rows, self.name)
        return value

    def __set__(self, store: TableRunStateStore, value: V) -> None:
        setattr(store.rows, self.name, value)


class TableRunStateStore(LedgerSteps):
    """RunStateStore over an Azure Table (see the module docstring and olparser/runs/store.py): the run's row here,
    the rest delegated to its parts, each given the table's row operations (`RunRows`)."""

    def __init__(
        self,
        table: TableClient,
        *,
        ttl_seconds: int,
        max_state_bytes: int = MAX_STATE_BYTES,
        max_attempts: int = MAX_ATTEMPTS,
        max_datasets: int | None = None,
        connection_string: StorageConnection | None = None,
        temporary_seconds: float = DEFAULT_TEMPORARY_DATASET_SECONDS,
    ) -> None:
        self.rows = RunRows(
            table, ttl_seconds=ttl_seconds, temporary_seconds=temporary_seconds, max_attempts=max_attempts
        )
        self.connection_string = connection_string  # what it was opened with (None: given a client)
        self.max_state_bytes = max_state_bytes
        self.max_datasets = max_datasets
        self._owned = OwnedRows(self.rows)
        self._due = DueRows(self.rows)
        self._side = SideRows(self.rows)

    @classmethod
    def from_connection_string(
        cls, connection: StorageConnection, table_name: str, *, ttl_seconds: int, **options: Any
    ) -> "TableRunStateStore":
        """Connect (a connection string, or an identity-based StorageAccount) and create the table if needed."""
        service = storage_account(connection).table_service()
        return cls(
            service.create_table_if_not_exists(table_name),
            ttl_seconds=ttl_seconds,
            connection_string=connection,
            **options,
        )

    # the table and its settings are the rows object's (set here, they change for every part)
    table = _OfRows[TableClient]()
    ttl_seconds = _OfRows[float]()
    temporary_seconds = _OfRows[float]()

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
        rows = self.rows

        # the first attempt reads nothing: it starts from the row as this instance's last scope of the run left it,
        # or from no row for a START of a run it never saw (the write is conditional: a row changed since, or one
        # already there, fails it, and the retry reads); nothing to write on a remembered row is confirmed by a read
        remembered = rows.remembered(run_id)
        unread = [remembered is not None or event.get("eventType") == "START"]

        def attempt() -> tuple[RunSnapshot, int]:
            result = merge_into(remembered, True) if unread and unread.pop() else None
            unread.clear()
            return result if result is not None else merge_into(self._read(run_id), False)  # type: ignore[return-value]

        def merge_into(entity: TableEntity | None, from_memory: bool) -> tuple[RunSnapshot, int] | None:
            live = entity is not None and not rows.expired(entity, now)
            snapshot = merge_event(
                _decode(entity) if entity is not None and live else None, event, max_datasets=max_datasets
            )
            state = _compressed_state(snapshot, run_id, self.max_state_bytes)
            new = rows.copied_row(run_id, entity)
            version = int(entity.get("version", 0)) if entity is not None else 0
            if entity is None or state_rewrite_needed(
                live and get_blob(entity, "state") == state,
                float(entity.get("updated_at", 0.0)),
                now,
                rows.ttl_seconds,
            ):
                version += 1
                put_blob(new, "state", state)
                new.update(updated_at=float(now), version=version)
                if not live:
                    new.pop("fingerprint", None)
            wanted = schedule(snapshot) if schedule is not None else None
            if wanted is not None:
                self._due.schedule_row(run_id, new, entity, wanted.due_at, wanted.keep_earlier, now)
            if new == entity and from_memory:
                return None
            if new != entity:
                rows.write(new, entity)
            return snapshot, version

        return rows.retried(attempt)

    @contextmanager
    def session(self, run_key: str) -> Iterator[RunSession]:
        with self.rows.folding(run_key):
            yield RunSession(run_key, folds=True)

    def get_versioned(self, run_id: str, *, now: float | None = None) -> tuple[RunSnapshot | None, int]:
        entity = self._read(run_id, fresh=True)
        if entity is None:
            return None, 0
        now = time.time() if now is None else now
        return (None if self.rows.expired(entity, now) else _decode(entity)), int(entity.get("version", 0))

    def written_fingerprint(self, run_key: str, *, now: float | None = None) -> str | None:
        entity = self._read(run_key)
        now = time.time() if now is None else now
        return None if entity is None or self.rows.expired(entity, now) else entity.get("fingerprint")

    # --- what runs wrote: the ownership ledger (olparser/runs/ledger.py), an ETag compare-and-swap per row ------
    # (claim, commit, settle: the sequence of olparser/runs/ownership.py over `_LedgerRows`)
    def _ledger_rows(self) -> nullcontext[_LedgerRows]:
        return nullcontext(_LedgerRows(self, self._owned))

    def claimed(self, run_key: str) -> frozenset[Key]:
        return frozenset(get_keys(self._read(run_key), "claimed"))

    def done(self, run_key: str, epoch: int) -> None:
        self._clear_pending(run_key, epoch, None)

    def contested(self, keys: Iterable[Key], *, now: float | None = None) -> frozenset[Key]:
        return self._owned.contested(keys, now=now)

    def finish_deletes(self, keys: Iterable[Key]) -> None:
        self._owned.finish_deletes(keys)

    def abandoned_deletes(self, now: float, limit: int) -> list[Key]:
        return self._owned.abandoned_deletes(now, limit)

    def owned(self, keys: Iterable[Key]) -> set[Key]:
        return self._owned.owned(keys)

    def owned_of_types(self, type_names: Iterable[str]) -> list[Key]:
        return self._owned.owned_of_types(type_names)

    def process_writers(
        self, qualified_names: Sequence[str], *, session: RunSession | None = None
    ) -> dict[str, tuple[float, str]]:
        return self._owned.process_writers(qualified_names, session=session)

    def reset_process_runs(self, qualified_names: Sequence[str]) -> int:
        return self._owned.reset_process_runs(qualified_names)

    # --- the incomplete-runs timer (`table_due.py`) -----------------------------------------------------------
    def schedule(self, run_key: str, due_at: float | None, *, keep_earlier: bool = False) -> None:
        self._due.schedule(run_key, due_at, keep_earlier=keep_earlier)

    def due_runs(self, now: float, limit: int) -> list[str]:
        return self._due.due_runs(now, limit)

    def postpone(self, run_key: str, due_at: float) -> int:
        return self._due.postpone(run_key, due_at)

    # --- temporary and interim datasets, take-overs, lifecycle marks (`table_side.py`) --------------------------
    def record_temporary(
        self, scope: str, writer: str, writes: Mapping[tuple[str, str], bytes], *, now: float | None = None
    ) -> frozenset[str]:
        return self._side.record_temporary(scope, writer, writes, now=now)

    def temporary_sources(
        self, scope: str, names: Sequence[tuple[str, str]], reader: str, *, now: float | None = None
    ) -> dict[tuple[str, str], list[bytes]]:
        return self._side.temporary_sources(scope, names, reader, now=now)

    def record_lifecycle(
        self, marks: Mapping[Key, LifecycleMark], *, now: float | None = None
    ) -> dict[Key, LifecycleMark]:
        return self._side.record_lifecycle(marks, now=now)

    def register_interim(self, entries: Mapping[Key, str], *, now: float | None = None) -> None:
        self._side.register_interim(entries, now=now)

    def interim_keys(self, keys: Iterable[Key]) -> set[Key]:
        return self._side.interim_keys(keys)

    def due_interim(self, limit: int) -> list[InterimDataset]:
        return self._side.due_interim(limit)

    def checked_interim(self, keys: Iterable[Key], *, now: float | None = None) -> None:
        self._side.checked_interim(keys, now=now)

    def forget_interim(self, keys: Iterable[Key]) -> None:
        self._side.forget_interim(keys)

    def register_takeovers(self, entries: Sequence[Takeover]) -> None:
        self._side.register_takeovers(entries)

    def pending_takeovers(self, limit: int | None = None, *, owners: Iterable[str] | None = None) -> list[Takeover]:
        return self._side.pending_takeovers(limit, owners=owners)

    def checked_takeovers(self, processes: Iterable[Key], *, now: float | None = None) -> None:
        self._side.checked_takeovers(processes, now=now)

    def forget_takeovers(self, processes: Iterable[Key]) -> None:
        self._side.forget_takeovers(processes)

    # --- housekeeping ------------------------------------------------------------------------------------------
    def purge_expired(self, now: float | None = None) -> int:
        now = time.time() if now is None else now
        self._side.purge_temporary(now)
        self._side.purge_lifecycle(now)
        cutoff = float(now - self.ttl_seconds)
        expired = self.table.query_entities(
            "updated_at le @cutoff",
            parameters={"cutoff": cutoff},
            select=["PartitionKey", "RowKey", "updated_at", "due_at"],
        )
        deleted = 0
        for entity in expired:
            if entity.get("due_at") is not None:
                continue
            try:
                self.rows.delete(entity)
            except (ResourceNotFoundError, ResourceExistsError, RunStateConflict):  # updated since: not expired
                continue
            deleted += 1
        return deleted

    def stats(self) -> StoreStats:
        counts = {"runs": 0, "due": 0, "entities": 0, "processes": 0, "interim": 0, "takeovers": 0}
        for row in self.table.query_entities("PartitionKey ne ''", select=["PartitionKey", "RowKey", "due_at"]):
            partition = row["PartitionKey"]
            if (
                (partition.startswith(OWNED_PREFIX) and row["RowKey"] != HEAD_ROW)
                or partition.startswith(TEMPORARY_PREFIX)
                or partition == LIFECYCLE_PARTITION
            ):
                continue  # a run's entry among an entity's users; a temporary dataset's writer or reader; a mark
            if partition == DUE_PARTITION:
                continue  # a previous release's due row (its run's row says whether it is due)
            if row.get("due_at") is not None:
                counts["due"] += 1
            kind = (
                "interim"
                if partition == INTERIM_PARTITION
                else "takeovers"
                if partition == TAKEOVER_PARTITION
                else "entities"
                if partition.startswith((OWNED_PREFIX, "ref-"))
                else "processes"
                if partition.startswith("process-")
                else "runs"
            )
            counts[kind] += 1
        return StoreStats(**counts)

    def close(self) -> None:
        self.table.close()

    def __enter__(self) -> "TableRunStateStore":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- the run's pending intentions ---------------------------------------------------------------------------
    def _clear_pending(self, run_key: str, epoch: int, known: TableEntity | None) -> None:
        first = [known]

        def attempt() -> None:
            entity = first.pop() if first and first[0] is not None else self._read(run_key)
            first.clear()
            if entity is None or ledger.done(self.rows.record(entity), epoch) is self.rows.record(entity):
                return
            row = TableEntity(entity)
            put_pending(row, None)
            row.pop("due_at", None)
            row["due_attempts"] = 0
            self.rows.write(row, entity)

        self.rows.retried(attempt)

    # --- the run's row: the store's reads of it (its own, `_LedgerRows`') go through `_read` (a test replaces it) --
    def _keys(self, run_id: str) -> dict[str, str]:
        return self.rows.keys(run_id)

    def _read(self, run_id: str, *, fresh: bool = False) -> TableEntity | None:
        """`RunRows.read` (the run's row; in a `session`, as the session last read or wrote it, unless `fresh`)."""
        return self.rows.read(run_id, fresh=fresh)

    _ref_keys = staticmethod(ref_keys)


def _decode(entity: TableEntity) -> RunSnapshot | None:
    data = get_blob(entity, "state")
    return from_compressed(data) if data else None


def _compressed_state(snapshot: RunSnapshot, run_id: str, limit: int) -> bytes:
    data = to_compressed(snapshot)
    if len(data) > limit:
        raise RunStateTooLarge(
            f"run {run_id}: merged state is {len(data)} bytes compressed, over the {limit}-byte limit of one Table "
            "storage entity; use RUN_STATE_STORE=sqlite or strip large facets (STRIP_FACETS)"
        )
    return data


class _LedgerRows:
    """The ledger's row operations (olparser/runs/ownership.py `LedgerRows`) on the store's table: each row written
    conditionally on what was read (`RunRead.row`: the run's entity with its ETag), a step retried on a conflict."""

    def __init__(self, store: TableRunStateStore, owned: OwnedRows) -> None:
        self.store = store
        self.rows = store.rows
        self.owned = owned

    def retried(self, attempt: Callable[[], T]) -> T:
        return self.rows.retried(attempt)

    def read_run(self, run_key: str) -> RunRead[TableEntity | None]:
        entity = self.store._read(run_key)
        due = entity.get("due_at") if entity is not None else None
        return RunRead(self.rows.record(entity), None if due is None else float(due), entity)

    def save_claim(
        self, run_key: str, read: RunRead[TableEntity | None], new: ledger.OwnershipRecord, now: float
    ) -> None:
        if new is read.record:
            return
        row = self.rows.copied_row(run_key, read.row)
        put_keys(row, "claimed", new.claimed)
        row["updated_at"] = float(now)
        self.rows.write(row, read.row)

    def claim_users(self, run_key: str, keys: set[Key], before: ledger.OwnershipRecord, now: float) -> frozenset[Key]:
        return frozenset(
            key
            for key in sorted(keys)
            if self.owned.claim_user(key, run_key, before.epoch, now, first=key not in before.claimed)
        )

    def save_commit(
        self,
        run_key: str,
        read: RunRead[TableEntity | None],
        new: ledger.OwnershipRecord,
        due_at: float | None,
        now: float,
    ) -> TableEntity | None:
        row = self.rows.copied_row(run_key, read.row)
        put_keys(row, "written", new.claimed)
        put_keys(row, "claimed", new.claimed)
        row.update(fingerprint=new.fingerprint, updated_at=float(now), due_attempts=0, epoch=new.epoch)
        put_pending(row, new.pending)
        if new.pending is None:
            row.pop("due_at", None)
        else:
            name_run(row, run_key)
            row["due_at"] = due_at
        return self.rows.write(row, read.row)

    def release_user(self, key: Key, run_key: str, epoch: int, now: float) -> bool:
        return self.owned.release_user(key, run_key, epoch, now)

    def change_writers(
        self,
        name: str,
        run_key: str,
        intentions: ledger.Intentions,
        read: WritersRead | None,
        seen: Sequence[Writer] | None,
    ) -> ledger.WriterChange:
        return self.owned.change_writers(name, run_key, intentions, read, seen)

    def keep_pending(
        self, run_key: str, row: TableEntity | None, intentions: ledger.Intentions, settle_at: float
    ) -> None:
        """(The commit saved them, due; intentions carried out again stay as they are.)"""

    def clear_pending(self, run_key: str, row: TableEntity | None, epoch: int) -> None:
        self.store._clear_pending(run_key, epoch, row)
