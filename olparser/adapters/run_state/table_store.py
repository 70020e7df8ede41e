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
over `_LedgerRows`); `table_owned.py` the entities' users and the
processes' writers (and what the ledger holds: `owned`), `table_due.py` the timer's due runs, `table_side.py` the
temporary and interim datasets, the take-overs and the lifecycle marks (mixins of TableRunStateStore), and
`table_rows.py` the conditional reads, writes and transactions (shared with the run history's store).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
import zlib
from collections import OrderedDict
from contextlib import contextmanager, nullcontext
from typing import Any, Callable, Iterable, Iterator, Sequence, TypeVar

from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.data.tables import TableClient, TableEntity

from olparser.adapters.run_state.table_due import DUE_PARTITION, DueRows
from olparser.adapters.run_state.table_owned import HEAD_ROW, OWNED_PREFIX, OwnedRows, RunStateConflict
from olparser.adapters.run_state.table_rows import (
    PROPERTY_BYTES,
    delete_row,
    get_blob,
    put_blob,
    read_row,
    remember_row,
    retried,
    safe_row_key,
    with_etag,
    write_row,
)
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
from olparser.runs.ledger import Key, Writer, sorted_keys
from olparser.runs.merge import merge_event
from olparser.runs.model import RunSnapshot
from olparser.runs.ownership import LedgerSteps, RunRead
from olparser.runs.store import (
    RunSession,
    ScheduleAfterMerge,
    StoreStats,
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
_BLOBS = ("state", "written", "claimed", "pending")
T = TypeVar("T")
RECENT_ROWS = 64  # run rows remembered after their scope, for the next merge of the run (its write is conditional)


class RunStateTooLarge(ValueError):
    """A run whose merged state does not fit in one Table storage entity."""


class TableRunStateStore(LedgerSteps, OwnedRows, DueRows, SideRows):
    """RunStateStore over an Azure Table (see the module docstring and olparser/runs/store.py)."""

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
        self.table = table
        self.temporary_seconds = temporary_seconds
        self.connection_string = connection_string  # what it was opened with (None: given a client)
        self.ttl_seconds = ttl_seconds
        self.max_state_bytes = max_state_bytes
        self.max_datasets = max_datasets
        self._max_attempts = max_attempts
        self._folding: dict[tuple[str, str], int] = {}  # run rows in a `session` (how many sessions deep)
        self._folded: dict[tuple[str, str], TableEntity | None] = {}  # ... as the session last read or wrote them
        self._recent: OrderedDict[tuple[str, str], TableEntity] = OrderedDict()  # ... as sessions left them
        self._fold_lock = threading.Lock()
        self._legacy_checked: tuple[bool, float] | None = None  # (any `ref-` row found, when looked, monotonic)
        self._heads: OrderedDict[str, TableEntity] = OrderedDict()  # entity partition -> its head row, as last seen
        self._writers: OrderedDict[str, TableEntity] = OrderedDict()  # process RowKey -> its writers row, as last seen

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

        # the first attempt reads nothing: it starts from the row as this instance's last scope of the run left it,
        # or from no row for a START of a run it never saw (the write is conditional: a row changed since, or one
        # already there, fails it, and the retry reads); nothing to write on a remembered row is confirmed by a read
        remembered = self._remembered(run_id)
        unread = [remembered is not None or event.get("eventType") == "START"]

        def attempt() -> tuple[RunSnapshot, int]:
            result = merge_into(remembered, True) if unread and unread.pop() else None
            unread.clear()
            return result if result is not None else merge_into(self._read(run_id), False)  # type: ignore[return-value]

        def merge_into(entity: TableEntity | None, from_memory: bool) -> tuple[RunSnapshot, int] | None:
            live = entity is not None and not self._expired(entity, now)
            snapshot = merge_event(
                self._decode(entity) if entity is not None and live else None, event, max_datasets=max_datasets
            )
            state = _compressed_state(snapshot, run_id, self.max_state_bytes)
            new = self._copied_row(run_id, entity)
            version = int(entity.get("version", 0)) if entity is not None else 0
            if entity is None or state_rewrite_needed(
                live and self._get_blob(entity, "state") == state,
                float(entity.get("updated_at", 0.0)),
                now,
                self.ttl_seconds,
            ):
                version += 1
                self._put_blob(new, "state", state)
                new.update(updated_at=float(now), version=version)
                if not live:
                    new.pop("fingerprint", None)
            wanted = schedule(snapshot) if schedule is not None else None
            if wanted is not None:
                self._schedule_row(run_id, new, entity, wanted.due_at, wanted.keep_earlier, now)
            if new == entity and from_memory:
                return None
            if new != entity:
                self._write(new, entity)
            return snapshot, version

        merged: tuple[RunSnapshot, int] = self._with_retries(attempt)
        return merged

    @contextmanager
    def session(self, run_key: str) -> Iterator[RunSession]:
        keys = self._keys(run_key)
        row = (keys["PartitionKey"], keys["RowKey"])
        with self._fold_lock:
            self._folding[row] = self._folding.get(row, 0) + 1
        done = False
        try:
            yield RunSession(run_key, folds=True)
            done = True
        finally:
            with self._fold_lock:
                self._folding[row] -= 1
                if not self._folding[row]:
                    del self._folding[row]
                    last = self._folded.pop(row, None)
                    remember_row(self._recent, row, last if done else None, RECENT_ROWS)

    def get_versioned(self, run_id: str, *, now: float | None = None) -> tuple[RunSnapshot | None, int]:
        entity = self._read(run_id, fresh=True)
        if entity is None:
            return None, 0
        now = time.time() if now is None else now
        return (None if self._expired(entity, now) else self._decode(entity)), int(entity.get("version", 0))

    def written_fingerprint(self, run_key: str, *, now: float | None = None) -> str | None:
        entity = self._read(run_key)
        now = time.time() if now is None else now
        return None if entity is None or self._expired(entity, now) else entity.get("fingerprint")

    # --- what runs wrote: the ownership ledger (olparser/runs/ledger.py), an ETag compare-and-swap per row ------
    # (claim, commit, settle: the sequence of olparser/runs/ownership.py over `_LedgerRows`)
    def _ledger_rows(self) -> nullcontext[_LedgerRows]:
        return nullcontext(_LedgerRows(self))

    def claimed(self, run_key: str) -> frozenset[Key]:
        return frozenset(self._get_keys(self._read(run_key), "claimed"))

    def done(self, run_key: str, epoch: int) -> None:
        self._clear_pending(run_key, epoch, None)

    # --- housekeeping ------------------------------------------------------------------------------------------
    def purge_expired(self, now: float | None = None) -> int:
        now = time.time() if now is None else now
        self._purge_temporary(now)
        self._purge_lifecycle(now)
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
                delete_row(self.table, entity, RunStateConflict)
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
            if entity is None or ledger.done(self._record(entity), epoch) is self._record(entity):
                return
            row = TableEntity(entity)
            self._put_pending(row, None)
            row.pop("due_at", None)
            row["due_attempts"] = 0
            self._write(row, entity)

        self._with_retries(attempt)

    # --- entity helpers ----------------------------------------------------------------------------------------
    def _record(self, entity: TableEntity | None) -> ledger.OwnershipRecord:
        """The ownership part of the run's row, for the ledger."""
        if entity is None:
            return ledger.OwnershipRecord()
        pending = self._get_blob(entity, "pending")
        return ledger.OwnershipRecord(
            version=int(entity.get("version", 0)),
            epoch=int(entity.get("epoch", 0)),
            claimed=frozenset(self._get_keys(entity, "claimed")),
            fingerprint=entity.get("fingerprint"),
            pending=ledger.Intentions.from_json(json.loads(zlib.decompress(pending))) if pending else None,
        )

    def _put_pending(self, entity: TableEntity, intentions: ledger.Intentions | None) -> None:
        text = b"" if intentions is None else zlib.compress(json.dumps(intentions.to_json()).encode("utf-8"), 6)
        self._put_blob(entity, "pending", text)

    def _copied_row(self, run_key: str, entity: TableEntity | None) -> TableEntity:
        """A new entity for the run with everything `entity` had (the caller changes what it owns)."""
        new = TableEntity(self._keys(run_key))
        if entity is not None:
            new.update({k: v for k, v in entity.items() if k not in ("PartitionKey", "RowKey")})
        return new

    def _put_blob(self, entity: TableEntity, name: str, data: bytes) -> None:
        put_blob(entity, name, data)

    @staticmethod
    def _get_blob(entity: TableEntity | None, name: str) -> bytes | None:
        return get_blob(entity, name)

    def _put_keys(self, entity: TableEntity, name: str, keys: Iterable[Key]) -> None:
        text = json.dumps(sorted_keys(keys), separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        self._put_blob(entity, name, zlib.compress(text, 6))

    def _get_keys(self, entity: TableEntity | None, name: str) -> set[Key]:
        data = self._get_blob(entity, name)
        return {(t, q) for t, q in json.loads(zlib.decompress(data))} if data else set()

    def _decode(self, entity: TableEntity) -> RunSnapshot | None:
        data = self._get_blob(entity, "state")
        return from_compressed(data) if data else None

    def _with_retries(self, attempt: Callable[[], Any]) -> Any:
        return retried(attempt, RunStateConflict, self._max_attempts)

    def _keys(self, run_id: str) -> dict[str, str]:
        return {"PartitionKey": hashlib.sha256(run_id.encode()).hexdigest()[:2], "RowKey": safe_row_key(run_id)}

    def _read(self, run_id: str, *, fresh: bool = False) -> TableEntity | None:
        """The run's row; in a `session`, as the session last read or wrote it (unless `fresh`)."""
        keys = self._keys(run_id)
        row = (keys["PartitionKey"], keys["RowKey"])
        with self._fold_lock:
            if row not in self._folding:
                row = None  # type: ignore[assignment]
            elif not fresh and row in self._folded:
                return self._folded[row]
        entity = self._read_keys(keys)
        if row is not None:
            self._fold(row, entity)
        return entity

    def _remembered(self, run_id: str) -> TableEntity | None:
        """The run's row as the last session of the run left it (None: not known here, or read in this session)."""
        keys = self._keys(run_id)
        row = (keys["PartitionKey"], keys["RowKey"])
        with self._fold_lock:
            return None if row in self._folded else self._recent.get(row)

    def _fold(self, row: tuple[str, str], entity: TableEntity | None, *, forget: bool = False) -> None:
        """Remember `entity` as the run row `row` now is, if a session folds its reads (`forget`: it is unknown)."""
        with self._fold_lock:
            if forget:
                self._recent.pop(row, None)
            if row in self._folding:
                if forget:
                    self._folded.pop(row, None)
                else:
                    self._folded[row] = entity

    def _read_keys(self, keys: dict[str, str]) -> TableEntity | None:
        return read_row(self.table, keys)

    def _expired(self, entity: TableEntity, now: float) -> bool:
        return float(entity.get("updated_at", 0.0)) <= now - self.ttl_seconds

    def _write(self, entity: TableEntity, read: TableEntity | None) -> TableEntity:
        """Create `entity` if nothing was read, else replace what was read if nobody changed it since. Returns
        `entity` as written (with its new ETag, for a next compare-and-swap without reading it again)."""
        row = (entity["PartitionKey"], entity["RowKey"])
        try:
            etag = write_row(self.table, entity, read.metadata["etag"] if read is not None else None, RunStateConflict)
        except (RunStateConflict, HttpResponseError):  # what the row now is is unknown
            self._fold(row, None, forget=True)
            raise
        written = with_etag(entity, etag)
        self._fold(row, written, forget=etag is None)
        return written

    def _delete(self, read: TableEntity) -> None:
        delete_row(self.table, read, RunStateConflict)


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

    def __init__(self, store: TableRunStateStore) -> None:
        self.store = store

    def retried(self, attempt: Callable[[], T]) -> T:
        result: T = self.store._with_retries(attempt)
        return result

    def read_run(self, run_key: str) -> RunRead[TableEntity | None]:
        entity = self.store._read(run_key)
        due = entity.get("due_at") if entity is not None else None
        return RunRead(self.store._record(entity), None if due is None else float(due), entity)

    def save_claim(
        self, run_key: str, read: RunRead[TableEntity | None], new: ledger.OwnershipRecord, now: float
    ) -> None:
        if new is read.record:
            return
        row = self.store._copied_row(run_key, read.row)
        self.store._put_keys(row, "claimed", new.claimed)
        row["updated_at"] = float(now)
        self.store._write(row, read.row)

    def claim_users(self, run_key: str, keys: set[Key], before: ledger.OwnershipRecord, now: float) -> frozenset[Key]:
        return frozenset(
            key
            for key in sorted(keys)
            if self.store._claim_user(key, run_key, before.epoch, now, first=key not in before.claimed)
        )

    def save_commit(
        self,
        run_key: str,
        read: RunRead[TableEntity | None],
        new: ledger.OwnershipRecord,
        due_at: float | None,
        now: float,
    ) -> TableEntity | None:
        store = self.store
        row = store._copied_row(run_key, read.row)
        store._put_keys(row, "written", new.claimed)
        store._put_keys(row, "claimed", new.claimed)
        row.update(fingerprint=new.fingerprint, updated_at=float(now), due_attempts=0, epoch=new.epoch)
        store._put_pending(row, new.pending)
        if new.pending is None:
            row.pop("due_at", None)
        else:
            store._name_run(row, run_key)
            row["due_at"] = due_at
        return store._write(row, read.row)

    def release_user(self, key: Key, run_key: str, epoch: int, now: float) -> bool:
        return self.store._release_user(key, run_key, epoch, now)

    def change_writers(
        self,
        name: str,
        run_key: str,
        intentions: ledger.Intentions,
        read: WritersRead | None,
        seen: Sequence[Writer] | None,
    ) -> ledger.WriterChange:
        return self.store._change_writers(name, run_key, intentions, read, seen)

    def keep_pending(
        self, run_key: str, row: TableEntity | None, intentions: ledger.Intentions, settle_at: float
    ) -> None:
        """(The commit saved them, due; intentions carried out again stay as they are.)"""

    def clear_pending(self, run_key: str, row: TableEntity | None, epoch: int) -> None:
        self.store._clear_pending(run_key, epoch, row)
