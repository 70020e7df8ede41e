"""Run state in Azure Table storage, shared by every instance of a scaled-out Function App.

Entities (every writer uses optimistic concurrency: read with the ETag, replace only if unchanged — 412 otherwise —,
create only if absent — 409 otherwise —, and retry the whole read-modify-write):

- one per run or static declaration: PartitionKey = 2 hex digits of sha256(key) (runIds are often UUIDv7, whose first
  digits are a timestamp: hashing spreads the runs over 256 partitions), RowKey = the key. The merged state is the
  codec's zlib-compressed JSON split into binary properties `state_0`, `state_1`, ... (a property holds at most
  64 KiB, an entity 1 MiB), with `state_parts`; the written and claimed keys and the pending intentions likewise
  (`written_*`, `claimed_*`, `pending_*`); `version`, `epoch`, `fingerprint`, `updated_at` (Unix seconds),
  `due_at`, `due_attempts`;
- one per run that the timer should write (PartitionKey `due`, RowKey = the run's RowKey, `run_key`, `due_at`): the
  timer reads this one partition instead of scanning every run;
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
- one per dataset key whose table may be dropped or renamed (PartitionKey `lifecycle`, RowKey = sha256 of type and
  qualifiedName): `mark` (JSON, `olparser.runs.marks.LifecycleMark`), `marked_at`. A run's keys are read in one query
  (14 at a time) and changed in one batch; the timer purges those unchanged for the run-state TTL.

What the ledger (olparser/runs/ledger.py) decides at a commit is saved with the run's row (its pending intentions)
before any other row changes; the users and writers rows are then changed one compare-and-swap (or one batch) at a
time, each step idempotent, so a crash between two writes leaves intentions that `settle` carries out again.
"""
from __future__ import annotations

import functools
import hashlib
import json
import re
import threading
import time
import zlib
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

from azure.core import MatchConditions
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.data.tables import TableClient, TableEntity, UpdateMode
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_random_exponential

from olparser.runs.codec import from_compressed, to_compressed
from olparser.runs.marks import LifecycleMark
from olparser.runs.merge import merge_event
from olparser.runs.model import JSON, RunSnapshot
from olparser.runs import ledger
from olparser.runs.ledger import CommitResult, Key, Writer, sorted_keys
from olparser.runs.store import (MAX_TEMPORARY_ROWS, TOMBSTONE_SECONDS, InterimDataset, ScheduleAfterMerge,
                                 StoreStats, event_run_id, state_rewrite_needed)
from olparser.settings import DEFAULT_TEMPORARY_DATASET_SECONDS
from olparser.adapters.storage_account import StorageConnection, TableAnswer, TableOperation, storage_account

T = TypeVar("T")  # what one read-modify-write attempt returns (_with_retries)

PROPERTY_BYTES = 64_000  # a binary property holds at most 64 KiB
# An entity holds at most 1 MiB, and binary properties travel base64-encoded (4/3 larger; Azurite counts that size):
# 720,000 bytes are ~960 KB on the wire, leaving room for the keys and the other properties.
MAX_STATE_BYTES = 720_000
MAX_ATTEMPTS = 40
DUE_PARTITION = "due"
INTERIM_PARTITION = "interim"
LIFECYCLE_PARTITION = "lifecycle"
FILTER_KEYS = 14  # RowKeys per query: a filter holds at most 15 comparisons (one is the PartitionKey's)
BATCH_ROWS = 100  # operations per batch transaction
OWNED_PREFIX = "own-"  # + sha256 of an entity's type and qualifiedName: one partition per connector-owned entity
HEAD_ROW = "entity"
TEMPORARY_PREFIX = "tmp-"  # + sha256 of (scope, namespace, name): one partition per temporary dataset
_SAFE_ROW_KEY = re.compile(r"^[A-Za-z0-9._:@=+-]{1,512}$")
_BLOBS = ("state", "written", "claimed", "pending")
# Rows `ref-xx` of the version that only counted users: looked for once (one request), then again after this long
# only, when none was found (no release of this version writes them; one still running during an upgrade might).
LEGACY_RECHECK_SECONDS = 3600.0
RECENT_ROWS = 64  # run rows remembered after their scope, for the next merge of the run (its write is conditional)
KNOWN_HEADS = 4096  # entities' head rows remembered as last read or written here, for the next run's claim


class RunStateTooLarge(ValueError):
    """A run whose merged state does not fit in one Table storage entity."""


class RunStateConflict(RuntimeError):
    """Another writer changed the entity between our read and our write (retried up to max_attempts times)."""


class TableRunStateStore:
    """RunStateStore over an Azure Table (see the module docstring and olparser/runs/store.py)."""

    def __init__(self, table: TableClient, *, ttl_seconds: int, max_state_bytes: int = MAX_STATE_BYTES,
                 max_attempts: int = MAX_ATTEMPTS, max_datasets: int | None = None,
                 connection_string: StorageConnection | None = None,
                 temporary_seconds: float = DEFAULT_TEMPORARY_DATASET_SECONDS) -> None:
        self.table = table
        self.temporary_seconds = temporary_seconds
        self.connection_string = connection_string  # what it was opened with (None: given a client)
        self.ttl_seconds = ttl_seconds
        self.max_state_bytes = max_state_bytes
        self.max_datasets = max_datasets
        self._max_attempts = max_attempts
        self._folding: dict[tuple[str, str], int] = {}  # run rows in a `folded_reads` scope (how many scopes deep)
        self._folded: dict[tuple[str, str], TableEntity | None] = {}  # ... as the scope last read or wrote them
        self._recent: OrderedDict[tuple[str, str], TableEntity] = OrderedDict()  # ... as scopes left them
        self._fold_lock = threading.Lock()
        self._scope = threading.local()  # `processes`: process rows `process_writers` read in this thread's scope
        self._legacy_checked: tuple[bool, float] | None = None  # (any `ref-` row found, when looked, monotonic)
        self._heads: OrderedDict[str, TableEntity] = OrderedDict()  # entity partition -> its head row, as last seen

    @classmethod
    def from_connection_string(cls, connection: StorageConnection, table_name: str, *, ttl_seconds: int,
                               **options: Any) -> "TableRunStateStore":
        """Connect (a connection string, or an identity-based StorageAccount) and create the table if needed."""
        service = storage_account(connection).table_service()
        return cls(service.create_table_if_not_exists(table_name), ttl_seconds=ttl_seconds,
                   connection_string=connection, **options)

    # --- merged events -----------------------------------------------------------------------------------------
    def merge_versioned(self, event: JSON, *, now: float | None = None, max_datasets: int | None = None,
                        schedule: ScheduleAfterMerge | None = None) -> tuple[RunSnapshot, int]:
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
            # Why the type error is ignored: merge_into returns None only from the remembered row
            return result if result is not None else merge_into(self._read(run_id), False)  # type: ignore[return-value]

        def merge_into(entity: TableEntity | None, from_memory: bool) -> tuple[RunSnapshot, int] | None:
            live = entity is not None and not self._expired(entity, now)
            snapshot = merge_event(self._decode(entity) if live and entity is not None else None, event,
                                   max_datasets=max_datasets)
            state = _compressed_state(snapshot, run_id, self.max_state_bytes)
            new = self._carry_over(run_id, entity)
            version = int(entity.get("version", 0)) if entity is not None else 0
            if entity is None or state_rewrite_needed(live and self._get_blob(entity, "state") == state,
                                                      float(entity.get("updated_at", 0.0)), now, self.ttl_seconds):
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
            if wanted is not None and entity is not None and new.get("due_at") is None:
                self._due_row_gone(run_id, entity)
            return snapshot, version

        return self._with_retries(attempt)

    @contextmanager
    def folded_reads(self, run_key: str) -> Iterator[None]:
        keys = self._keys(run_key)
        row = (keys["PartitionKey"], keys["RowKey"])
        with self._fold_lock:
            self._folding[row] = self._folding.get(row, 0) + 1
        done = False
        outer = getattr(self._scope, "processes", None) is None
        if outer:
            self._scope.processes = {}
        try:
            yield
            done = True
        finally:
            if outer:
                self._scope.processes = None
            with self._fold_lock:
                self._folding[row] -= 1
                if not self._folding[row]:
                    del self._folding[row]
                    last = self._folded.pop(row, None)
                    self._recent.pop(row, None)
                    if done and last is not None and last.metadata.get("etag"):
                        self._recent[row] = last
                        while len(self._recent) > RECENT_ROWS:
                            self._recent.popitem(last=False)

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
    def claim(self, run_key: str, keys: Iterable[Key], *, now: float | None = None) -> frozenset[Key]:
        now = time.time() if now is None else now
        keys = set(sorted_keys(keys))

        def attempt() -> tuple[int, frozenset[Key]]:  # the run's record first: a crash before the users rows leaves
            entity = self._read(run_key)                # nothing uploaded
            record = self._record(entity)
            new = ledger.claim(record, keys)
            if new is not record:
                row = self._carry_over(run_key, entity)
                self._put_keys(row, "claimed", new.claimed)
                row["updated_at"] = float(now)
                self._write(row, entity)
            return record.epoch, record.claimed

        epoch, before = self._with_retries(attempt)
        return frozenset(key for key in sorted(keys)
                         if self._claim_user(key, run_key, epoch, now, first=key not in before))

    def claimed(self, run_key: str) -> frozenset[Key]:
        return frozenset(self._get_keys(self._read(run_key), "claimed"))

    def contested(self, keys: Iterable[Key], *, now: float | None = None) -> frozenset[Key]:
        now = time.time() if now is None else now
        found = set()
        for key in sorted_keys(keys):
            head = self._read_keys(_head_keys(key))
            if head is not None and _tombstoned(head, now):
                found.add(key)
        return frozenset(found)

    def commit(self, run_key: str, keys: Iterable[Key], *, version: int | None, fingerprint: str,
               process_names: Sequence[str] = (), run_time: float | None = None, dangling: Iterable[Key] = (),
               process_types: frozenset[str] = frozenset(), now: float | None = None) -> CommitResult:
        now = time.time() if now is None else now

        def attempt() -> tuple[ledger.Intentions, TableEntity] | None:
            entity = self._read(run_key)
            new = ledger.commit(self._record(entity), keys, version=version, fingerprint=fingerprint,
                                process_names=process_names, run_time=run_time, dangling=dangling,
                                process_types=process_types)
            if new is None:
                return None
            assert new.pending is not None  # a commit records its intentions (ledger.commit)
            settle_at = now + ledger.SETTLE_SECONDS
            self._put_due(run_key, settle_at)  # first: the timer finds the run even if we crash after the write
            row = self._carry_over(run_key, entity)
            self._put_keys(row, "written", new.claimed)
            self._put_keys(row, "claimed", new.claimed)
            self._put_pending(row, new.pending)
            row.update(fingerprint=fingerprint, updated_at=float(now), due_attempts=0, epoch=new.epoch,
                       due_at=settle_at)
            return new.pending, self._write(row, entity)

        written = self._with_retries(attempt)
        if written is None:
            return CommitResult(stale=True)
        return self._carry_out(run_key, *written, now)

    def settle(self, run_key: str, *, now: float | None = None) -> CommitResult | None:
        now = time.time() if now is None else now
        entity = self._read(run_key)
        pending = self._record(entity).pending
        return None if pending is None else self._carry_out(run_key, pending, entity, now)

    def done(self, run_key: str, epoch: int) -> None:
        self._clear_pending(run_key, epoch, None)

    def finish_deletes(self, keys: Iterable[Key]) -> None:
        for key in sorted_keys(keys):
            def attempt(key: Key = key) -> None:
                self._forget_head(key)
                head = self._read_keys(_head_keys(key))
                if head is None:
                    return
                if ledger.orphaned(int(head.get("users", 0)), int(head.get("legacy", 0))):
                    self._delete(head)
                else:
                    row = TableEntity(head)
                    row.pop("deleting_since", None)
                    self._write(row, head)

            self._with_retries(attempt)

    def abandoned_deletes(self, now: float, limit: int) -> list[Key]:
        cutoff = {"cutoff": float(now - TOMBSTONE_SECONDS)}
        heads = self.table.query_entities(
            f"PartitionKey ge '{OWNED_PREFIX}' and PartitionKey lt 'own.' and RowKey eq '{HEAD_ROW}' and users le 0 "
            "and legacy le 0 and deleting_since le @cutoff", parameters=cutoff)
        found: list[Key] = []
        for head in heads:
            if len(found) >= limit:
                break
            try:
                self._write(TableEntity(head, deleting_since=float(now)), head)
            except RunStateConflict:  # claimed or finished meanwhile
                continue
            found.append((head["type_name"], head["qualified_name"]))
        # tombstones of the version that counted users (rows `ref-xx`): moved to the rows of this version
        legacy = self.table.query_entities(
            "PartitionKey ge 'ref-' and PartitionKey lt 'ref.' and users le 0 and deleting_since le @cutoff",
            parameters=cutoff)
        for row in legacy:
            if len(found) >= limit:
                break
            key = (row["type_name"], row["qualified_name"])
            try:
                self.table.create_entity(_head_row(key, None, users=0, legacy=0, deleting_since=float(now)))
            except ResourceExistsError:
                continue
            finally:
                self.table.delete_entity(row["PartitionKey"], row["RowKey"])
            found.append(key)
        return sorted(found)

    # --- the incomplete-runs timer -----------------------------------------------------------------------------
    def schedule(self, run_key: str, due_at: float | None, *, keep_earlier: bool = False) -> None:
        def attempt() -> None:
            entity = self._read(run_key)
            if entity is None:
                return
            new = TableEntity(entity)
            self._schedule_row(run_key, new, entity, due_at, keep_earlier, time.time())
            if new != entity:  # (a replayed run is not due, and stays so: no write)
                self._write(new, entity)
            if new.get("due_at") is None:
                self._due_row_gone(run_key, entity)

        self._with_retries(attempt)

    def _schedule_row(self, run_key: str, new: TableEntity, entity: TableEntity | None, due_at: float | None,
                      keep_earlier: bool, now: float) -> None:
        """Set when the run is due in `new` (its row about to replace `entity`), and put its row in the `due`
        partition first when the run becomes due earlier than that row says: a due row may be earlier than the run
        (the timer's look at it moves it, `due_runs`), never later, so postponing a run writes its row only."""
        current = entity.get("due_at") if entity is not None else None
        at = ledger.due_at(self._record(entity), current, due_at, keep_earlier=keep_earlier, now=now)
        new["due_attempts"] = 0
        if at is None:
            new.pop("due_at", None)
            return
        new["due_at"] = float(at)
        if current is None or at < float(current):
            self._put_due(run_key, float(at))

    def _due_row_gone(self, run_key: str, entity: TableEntity | None) -> None:
        """The run is no longer due: its due row goes, after its row says so (a due row left by a crash: the timer
        finds the run not due and deletes it, `due_runs`)."""
        if entity is not None and entity.get("due_at") is not None:
            self._delete_due(run_key)

    def due_runs(self, now: float, limit: int) -> list[str]:
        rows = self.table.query_entities("PartitionKey eq @p and due_at le @now",
                                         parameters={"p": DUE_PARTITION, "now": float(now)},
                                         select=["PartitionKey", "RowKey", "run_key", "due_at"])
        found = sorted(((float(row["due_at"]), row["run_key"], row) for row in rows), key=lambda item: item[:2])
        due: list[str] = []
        for _, run_key, row in found:  # the run's own row says when it is due (its due row may be earlier: postponed)
            if len(due) >= limit:
                break
            entity = self._read(run_key)
            at = entity.get("due_at") if entity is not None else None
            if at is not None and float(at) <= now:
                due.append(run_key)
                continue
            try:  # unless a writer changed the due row since the query (it scheduled the run meanwhile)
                if at is None:  # not due any more (a crash between its row's write and the due row's delete)
                    self.table.delete_entity(row["PartitionKey"], row["RowKey"], **_unchanged(row))
                else:  # postponed
                    self.table.update_entity(TableEntity(row, due_at=float(at)), mode=UpdateMode.REPLACE,
                                             **_unchanged(row))
            except HttpResponseError as error:
                if error.status_code not in (404, 412):
                    raise
        return due

    def postpone(self, run_key: str, due_at: float) -> int:
        def attempt() -> int:
            entity = self._read(run_key)
            if entity is None:
                self._delete_due(run_key)
                return 0
            attempts = int(entity.get("due_attempts", 0)) + 1
            new = TableEntity(entity)
            new.update(due_at=float(due_at), due_attempts=attempts)
            self._write(new, entity)
            self._put_due(run_key, float(due_at))
            return attempts

        return self._with_retries(attempt)

    # --- housekeeping ------------------------------------------------------------------------------------------
    def purge_expired(self, now: float | None = None) -> int:
        now = time.time() if now is None else now
        self._purge_temporary(now)
        self._purge_lifecycle(now)
        cutoff = float(now - self.ttl_seconds)
        expired = self.table.query_entities("updated_at le @cutoff", parameters={"cutoff": cutoff},
                                            select=["PartitionKey", "RowKey", "updated_at", "due_at"])
        deleted = 0
        for entity in expired:
            if entity.get("due_at") is not None:
                continue
            try:
                self.table.delete_entity(entity["PartitionKey"], entity["RowKey"], etag=entity.metadata["etag"],
                                         match_condition=MatchConditions.IfNotModified)
            except (ResourceNotFoundError, ResourceExistsError):
                continue
            except HttpResponseError as error:
                if error.status_code == 412:  # updated since the query: no longer expired
                    continue
                raise
            deleted += 1
        return deleted

    def process_writers(self, qualified_names: Sequence[str]) -> dict[str, tuple[float, str]]:
        found: dict[str, tuple[float, str]] = {}
        scope = getattr(self._scope, "processes", None)
        for name in dict.fromkeys(qualified_names):
            entity = self._read_keys(self._process_keys(name))
            if scope is not None:  # for the commit's change of its writers (a conditional write) in this scope
                scope[name] = entity
            if entity is not None:
                found[name] = (float(entity["run_time"]), str(entity.get("run_key", "")))
        return found

    def _change_writers(self, name: str, run_key: str, intentions: ledger.Intentions) -> ledger.WriterChange:
        """Carry out the intentions' part for process `name` (written only if it changes anything)."""
        keys = self._process_keys(name)
        scope = getattr(self._scope, "processes", None) or {}
        read = [scope.pop(name)] if name in scope else []

        def attempt() -> ledger.WriterChange:
            entity = read.pop() if read else self._read_keys(keys)  # as this scope's `process_writers` read it
            writers: list[Writer] = []
            if entity is not None:
                listed = entity.get("writers")
                writers = ([(float(t), str(k)) for t, k in json.loads(listed)] if listed
                           else [(float(entity["run_time"]), str(entity.get("run_key", "")))])
            change = ledger.writers_after(writers, run_key, intentions, name)
            if change.writers == writers:
                return change
            if not change.writers:
                if entity is not None:
                    self._delete(entity)
                return change
            self._write(TableEntity(keys, run_time=change.writers[0][0], run_key=change.writers[0][1],
                                    writers=json.dumps(change.writers)), entity)
            return change

        return self._with_retries(attempt)

    def reset_process_runs(self, qualified_names: Sequence[str]) -> int:
        reset = 0
        for name in dict.fromkeys(qualified_names):
            entity = self._read_keys(self._process_keys(name))
            if entity is not None:
                self.table.delete_entity(entity["PartitionKey"], entity["RowKey"])  # absent meanwhile: no error
                reset += 1
        return reset

    def stats(self) -> StoreStats:
        counts = {"runs": 0, "due": 0, "entities": 0, "processes": 0, "interim": 0}
        for row in self.table.query_entities("PartitionKey ne ''", select=["PartitionKey", "RowKey"]):
            partition = row["PartitionKey"]
            if (partition.startswith(OWNED_PREFIX) and row["RowKey"] != HEAD_ROW) or partition.startswith(
                    TEMPORARY_PREFIX):
                continue  # a run's entry among an entity's users; a temporary dataset's writer or reader
            kind = ("due" if partition == DUE_PARTITION else "interim" if partition == INTERIM_PARTITION
                    else "entities" if partition.startswith((OWNED_PREFIX, "ref-"))
                    else "processes" if partition.startswith("process-") else "runs")
            counts[kind] += 1
        return StoreStats(**counts)

    # --- temporary datasets -----------------------------------------------------------------------------------
    # One partition per (scope, temporary dataset); a row per writer (`w-` + sha256 of its run key, `passed_on`)
    # and per reader (`r-` + ...), each upserted whole: no read-modify-write, so no conflict between workers. A
    # writer upserts then reads the readers, a reader upserts then reads the writers: one of them sees the other.
    def record_temporary(self, scope: str, writer: str, writes: Mapping[tuple[str, str], bytes], *,
                         now: float | None = None) -> frozenset[str]:
        now = time.time() if now is None else now
        readers: set[str] = set()
        for name, passed_on in sorted(writes.items()):
            partition = self._temporary_partition(scope, name)
            self.table.upsert_entity(TableEntity(PartitionKey=partition, RowKey="w-" + _sha(writer), run_key=writer,
                                                 passed_on=passed_on, temporary_at=float(now)),
                                     mode=UpdateMode.REPLACE)
            readers.update(self._temporary_rows(partition, "r-", now, ("run_key",)))
        readers.discard(writer)
        for reader in sorted(readers):
            self._with_retries(functools.partial(self._bump_version, reader))
        return frozenset(readers)

    def _bump_version(self, run_key: str) -> None:
        """A new version of the run, its state unchanged: a commit of a plan built before is stale (rebuilt)."""
        entity = self._read(run_key)
        if entity is not None:
            new = self._carry_over(run_key, entity)
            new["version"] = int(entity.get("version", 0)) + 1
            self._write(new, entity)

    def temporary_sources(self, scope: str, names: Sequence[tuple[str, str]], reader: str, *,
                          now: float | None = None) -> dict[tuple[str, str], list[bytes]]:
        now = time.time() if now is None else now
        found: dict[tuple[str, str], list[bytes]] = {}
        for name in names:
            partition = self._temporary_partition(scope, name)
            self.table.upsert_entity(TableEntity(PartitionKey=partition, RowKey="r-" + _sha(reader), run_key=reader,
                                                 temporary_at=float(now)), mode=UpdateMode.REPLACE)
            rows = [row for run_key, row in sorted(self._temporary_rows(partition, "w-", now,
                                                                        ("run_key", "passed_on")).items())
                    if run_key != reader]
            if rows:
                found[name] = [bytes(row["passed_on"]) for row in rows]
        return found

    def _temporary_rows(self, partition: str, prefix: str, now: float, select: tuple[str, ...]) -> dict[str, Any]:
        """The live rows of a temporary dataset's partition whose RowKey starts with `prefix`, by run key (at most
        MAX_TEMPORARY_ROWS)."""
        rows = self.table.query_entities(
            "PartitionKey eq @p and RowKey ge @lo and RowKey lt @hi and temporary_at gt @cutoff",
            parameters={"p": partition, "lo": prefix, "hi": prefix[:-1] + ".",
                        "cutoff": float(now - self.temporary_seconds)}, select=list(select))
        found: dict[str, Any] = {}
        for row in rows:
            found[row["run_key"]] = row
            if len(found) >= MAX_TEMPORARY_ROWS:
                break
        return found

    def _purge_temporary(self, now: float) -> None:
        cutoff = float(now - self.temporary_seconds)
        rows = self.table.query_entities("PartitionKey ge @lo and PartitionKey lt @hi and temporary_at le @cutoff",
                                         parameters={"lo": TEMPORARY_PREFIX, "hi": TEMPORARY_PREFIX[:-1] + ".",
                                                     "cutoff": cutoff}, select=["PartitionKey", "RowKey"])
        for row in rows:
            self.table.delete_entity(row["PartitionKey"], row["RowKey"])  # no error when absent

    @staticmethod
    def _temporary_partition(scope: str, name: tuple[str, str]) -> str:
        return TEMPORARY_PREFIX + _sha(json.dumps([scope, *name]))

    # --- tables dropped and renamed ------------------------------------------------------------------------------
    def record_lifecycle(self, marks: Mapping[Key, LifecycleMark], *,
                         now: float | None = None) -> dict[Key, LifecycleMark]:
        now = time.time() if now is None else now
        rows = {_lifecycle_row(key): key for key in sorted_keys(marks)}
        if not rows:
            return {}

        def attempt() -> dict[Key, LifecycleMark]:
            read: dict[str, TableEntity] = {}
            names = sorted(rows)
            for start in range(0, len(names), FILTER_KEYS):  # one query per 14 keys (a run has a few)
                chunk = names[start:start + FILTER_KEYS]
                parameters = {"p": LIFECYCLE_PARTITION, **{f"r{i}": name for i, name in enumerate(chunk)}}
                condition = " or ".join(f"RowKey eq @r{i}" for i in range(len(chunk)))
                read.update((e["RowKey"], e) for e in self.table.query_entities(
                    f"PartitionKey eq @p and ( {condition} )", parameters=parameters))  # spaced: the SDK's @names
            merged: dict[Key, LifecycleMark] = {}
            operations = []
            for name, key in sorted(rows.items()):
                stored = LifecycleMark.from_json(json.loads(read[name]["mark"])) if name in read else None
                merged[key] = stored.merged(marks[key]) if stored is not None else marks[key]
                if merged[key] != stored:
                    row = TableEntity(PartitionKey=LIFECYCLE_PARTITION, RowKey=name, marked_at=float(now),
                                      mark=json.dumps(merged[key].to_json(), separators=(",", ":")))
                    operations.append(_put_op(row, read.get(name)))
            for start in range(0, len(operations), BATCH_ROWS):  # all in one partition: one batch
                self._transact(operations[start:start + BATCH_ROWS])
            return merged
        return self._with_retries(attempt)

    def _purge_lifecycle(self, now: float) -> None:
        rows = self.table.query_entities("PartitionKey eq @p and marked_at le @cutoff", select=["RowKey"],
                                         parameters={"p": LIFECYCLE_PARTITION, "cutoff": float(now - self.ttl_seconds)})
        for row in rows:
            try:
                self.table.delete_entity(LIFECYCLE_PARTITION, row["RowKey"], etag=row.metadata["etag"],
                                         match_condition=MatchConditions.IfNotModified)
            except HttpResponseError as error:  # changed since the query: no longer expired (412)
                if error.status_code != 412:
                    raise

    # --- interim datasets (the re-link timer) ------------------------------------------------------------------
    def register_interim(self, entries: Mapping[Key, str], *, now: float | None = None) -> None:
        now = time.time() if now is None else now
        for key, candidates in sorted(entries.items()):
            row = TableEntity(self._interim_keys(key), type_name=key[0], qualified_name=key[1], candidates=candidates,
                              registered_at=float(now), checked_at=float(now))
            try:
                self.table.create_entity(row)
            except ResourceExistsError:  # registered before: keep its times, take the new candidates
                self.table.update_entity(TableEntity(self._interim_keys(key), candidates=candidates),
                                         mode=UpdateMode.MERGE)

    def interim_keys(self, keys: Iterable[Key]) -> set[Key]:
        return {key for key in sorted_keys(keys) if self._read_keys(self._interim_keys(key)) is not None}

    def due_interim(self, limit: int) -> list[InterimDataset]:
        rows = self.table.query_entities("PartitionKey eq @p", parameters={"p": INTERIM_PARTITION},
                                         select=["type_name", "qualified_name", "candidates", "registered_at",
                                                 "checked_at"])
        found = sorted((float(r["checked_at"]), r["type_name"], r["qualified_name"], r["candidates"],
                        float(r["registered_at"])) for r in rows)
        return [InterimDataset((t, q), candidates, registered, checked)
                for checked, t, q, candidates, registered in found[:limit]]

    def checked_interim(self, keys: Iterable[Key], *, now: float | None = None) -> None:
        now = time.time() if now is None else now
        for key in sorted_keys(keys):
            try:
                self.table.update_entity(TableEntity(self._interim_keys(key), checked_at=float(now)),
                                         mode=UpdateMode.MERGE)
            except ResourceNotFoundError:  # forgotten meanwhile
                continue

    def forget_interim(self, keys: Iterable[Key]) -> None:
        for key in sorted_keys(keys):
            ref = self._interim_keys(key)
            self.table.delete_entity(ref["PartitionKey"], ref["RowKey"])  # no error when absent

    def close(self) -> None:
        self.table.close()

    def __enter__(self) -> "TableRunStateStore":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- users of an entity: a partition per entity, its head row and one row per run using it ---------------
    def _carry_out(self, run_key: str, intentions: ledger.Intentions, entity: TableEntity | None,
                   now: float) -> CommitResult:
        """Release the users rows and change the writers the intentions name; clear them when no catalog work is
        left (`entity`: the run's row as last read or written, for the first attempt)."""
        orphans = [key for key in intentions.release
                   if self._release_user(key, run_key, intentions.epoch, now)]
        changes = {name: self._change_writers(name, run_key, intentions)
                   for name in dict.fromkeys((*intentions.wrote, *intentions.dropped))}
        result = ledger.settlement(intentions, orphans, changes)
        if ledger.has_catalog_work(result):
            return result
        self._clear_pending(run_key, intentions.epoch, entity)
        return replace(result, epoch=None)

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
            self._delete_due(run_key)

        self._with_retries(attempt)

    def _claim_user(self, key: Key, run_key: str, epoch: int, now: float, *, first: bool = False) -> bool:
        """Record the run among the entity's users (the head's count and the run's row change in one batch, in one
        partition); True if the entity is being deleted right now (the writer must wait). `first`: the run's record
        did not list the key (its entry is most likely not there)."""
        known = [self._known_head(key) if first else None]

        def attempt() -> bool:
            # the head as this instance last saw it, and the run not among its users yet (a run's first claim of an
            # entity): one batch, conditional on the head's ETag; a head changed since, or the run's entry already
            # there, fails it, and the retry reads both
            head = known.pop() if known else None
            user = None
            if head is None:
                head, user = self._owned_rows(key, run_key)
            tombstoned = head is not None and _tombstoned(head, now)
            new_epoch = ledger.claimed_epoch(int(user["epoch"]) if user is not None else None, epoch)
            if new_epoch is None:
                return tombstoned
            if user is not None:
                self._write(TableEntity(user, epoch=new_epoch), user)
                return tombstoned
            users, legacy = self._counts(key, head)
            new_head = _head_row(key, head, users=users + 1, legacy=legacy)
            done = self._transact([_put_op(new_head, head), ("create", TableEntity(_user_keys(key, run_key),
                                                                                    run_key=run_key, epoch=new_epoch))],
                                  key)
            self._remember_head(key, new_head, done)
            return tombstoned

        return self._with_retries(attempt)

    def _release_user(self, key: Key, run_key: str, epoch: int, now: float) -> bool:
        """Remove the run from the entity's users (if the intentions of `epoch` still may); True if none is left
        (the entity is then tombstoned: delete it)."""
        def attempt() -> bool:
            head, user = self._owned_rows(key, run_key)
            self._forget_head(key)  # changed below (a rare path: no need to know what it becomes)
            users, legacy = self._counts(key, head)
            if user is not None and ledger.releases(int(user["epoch"]), epoch):
                users = max(users - 1, 0)
                unused = ledger.orphaned(users, legacy)
                since = {"deleting_since": float(now)} if unused else {}
                self._transact([_put_op(_head_row(key, head, users=users, legacy=legacy, **since), head),
                                ("delete", user, _unchanged(user))])
                return unused
            if not ledger.orphaned(users, legacy):
                return False
            self._write(_head_row(key, head, users=users, legacy=legacy, deleting_since=float(now)), head)
            return True

        return self._with_retries(attempt)

    def _owned_rows(self, key: Key, run_key: str) -> tuple[TableEntity | None, TableEntity | None]:
        """The entity's head row and the run's row among its users (one query)."""
        head_keys, user_keys = _head_keys(key), _user_keys(key, run_key)
        rows = list(self.table.query_entities("PartitionKey eq @p and (RowKey eq @h or RowKey eq @u )",
                                              parameters={"p": head_keys["PartitionKey"], "h": HEAD_ROW,
                                                          "u": user_keys["RowKey"]}))
        head = next((r for r in rows if r["RowKey"] == HEAD_ROW), None)
        self._remember_head(key, head)
        return head, next((r for r in rows if r["RowKey"] != HEAD_ROW), None)

    def _known_head(self, key: Key) -> TableEntity | None:
        with self._fold_lock:
            return self._heads.get(_head_keys(key)["PartitionKey"])

    def _remember_head(self, key: Key, head: TableEntity | None, written: list[TableAnswer] | None = None) -> None:
        """Remember the entity's head row as read (`written`: the answers of the batch that wrote it, its ETag
        first); None forgets it."""
        etag = (written[0] or {}).get("etag") if written else (head.metadata.get("etag") if head is not None else None)
        with self._fold_lock:
            partition = _head_keys(key)["PartitionKey"]
            self._heads.pop(partition, None)
            if head is not None and etag:
                if written:
                    head = TableEntity(head)
                    head._metadata = {"etag": etag, "timestamp": None}
                self._heads[partition] = head
                while len(self._heads) > KNOWN_HEADS:
                    self._heads.popitem(last=False)

    def _forget_head(self, key: Key) -> None:
        self._remember_head(key, None)

    def _counts(self, key: Key, head: TableEntity | None) -> tuple[int, int]:
        """The users the head counts, and the users an older version counted (read from its row once, when the
        entity has no head yet: those never release, so the entity is kept)."""
        if head is not None:
            return int(head.get("users", 0)), int(head.get("legacy", 0))
        if not self._legacy_rows():
            return 0, 0
        old = self._read_keys(self._ref_keys(key))
        return 0, max(int(old.get("users", 0)), 0) if old is not None else 0

    def _legacy_rows(self) -> bool:
        """Whether the table holds rows `ref-xx` of the version that only counted users (one request, once, and
        again after LEGACY_RECHECK_SECONDS when there were none)."""
        checked = self._legacy_checked
        if checked is None or (not checked[0] and time.monotonic() - checked[1] > LEGACY_RECHECK_SECONDS):
            rows = self.table.query_entities("PartitionKey ge 'ref-' and PartitionKey lt 'ref.'",
                                             select=["PartitionKey"], results_per_page=1)
            # (the first row, following continuations: a scan across partitions may answer a page with none)
            checked = (next(iter(rows), None) is not None, time.monotonic())
            self._legacy_checked = checked
        return checked[0]

    def _transact(self, operations: list[TableOperation], key: Key | None = None) -> list[TableAnswer]:
        """One batch in one partition: all or nothing (any conflict: retry the whole read-modify-write; `key`: the
        entity whose head it changes, forgotten then). The answers of its operations (their ETags)."""
        try:
            return list(self.table.submit_transaction(operations) or [])
        except HttpResponseError as error:
            if key is not None:
                self._forget_head(key)
            if error.status_code in (404, 409, 412):
                raise RunStateConflict() from error
            raise

    # --- entity helpers ----------------------------------------------------------------------------------------
    def _record(self, entity: TableEntity | None) -> ledger.RunRecord:
        """The ownership part of the run's row, for the ledger."""
        if entity is None:
            return ledger.RunRecord()
        pending = self._get_blob(entity, "pending")
        return ledger.RunRecord(version=int(entity.get("version", 0)), epoch=int(entity.get("epoch", 0)),
                                claimed=frozenset(self._get_keys(entity, "claimed")),
                                fingerprint=entity.get("fingerprint"),
                                pending=ledger.Intentions.from_json(json.loads(zlib.decompress(pending)))
                                if pending else None)

    def _put_pending(self, entity: TableEntity, intentions: ledger.Intentions | None) -> None:
        text = b"" if intentions is None else zlib.compress(json.dumps(intentions.to_json()).encode("utf-8"), 6)
        self._put_blob(entity, "pending", text)

    def _carry_over(self, run_key: str, entity: TableEntity | None) -> TableEntity:
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

    def _put_due(self, run_key: str, due_at: float) -> None:
        keys = {"PartitionKey": DUE_PARTITION, "RowKey": self._keys(run_key)["RowKey"]}
        self.table.upsert_entity(TableEntity(keys, run_key=run_key, due_at=due_at), mode=UpdateMode.REPLACE)

    def _delete_due(self, run_key: str) -> None:
        self.table.delete_entity(DUE_PARTITION, self._keys(run_key)["RowKey"])  # no error when absent

    def _with_retries(self, attempt: Callable[[], T]) -> T:
        retrying = Retrying(retry=retry_if_exception_type(RunStateConflict), reraise=True,
                            stop=stop_after_attempt(self._max_attempts),
                            wait=wait_random_exponential(multiplier=0.005, max=0.25))
        return retrying(attempt)

    def _keys(self, run_id: str) -> dict[str, str]:
        return {"PartitionKey": hashlib.sha256(run_id.encode()).hexdigest()[:2], "RowKey": safe_row_key(run_id)}

    @staticmethod
    def _process_keys(qualified_name: str) -> dict[str, str]:
        digest = hashlib.sha256(qualified_name.encode("utf-8")).hexdigest()
        return {"PartitionKey": "process-" + digest[:2], "RowKey": digest}

    @staticmethod
    def _interim_keys(key: Key) -> dict[str, str]:
        digest = hashlib.sha256(f"{key[0]}\n{key[1]}".encode("utf-8")).hexdigest()
        return {"PartitionKey": INTERIM_PARTITION, "RowKey": digest}

    @staticmethod
    def _ref_keys(key: Key) -> dict[str, str]:
        digest = hashlib.sha256(f"{key[0]}\n{key[1]}".encode("utf-8")).hexdigest()
        return {"PartitionKey": "ref-" + digest[:2], "RowKey": digest}

    def _read(self, run_id: str, *, fresh: bool = False) -> TableEntity | None:
        """The run's row; in a `folded_reads` scope, as the scope last read or wrote it (unless `fresh`)."""
        keys = self._keys(run_id)
        row = (keys["PartitionKey"], keys["RowKey"])
        with self._fold_lock:
            if row not in self._folding:
                # Why the type error is ignored: None: the run's row is in no `folded_reads` scope
                row = None  # type: ignore[assignment]
            elif not fresh and row in self._folded:
                return self._folded[row]
        entity = self._read_keys(keys)
        if row is not None:
            self._fold(row, entity)
        return entity

    def _remembered(self, run_id: str) -> TableEntity | None:
        """The run's row as the last scope of the run left it (None: not known here, or read in this scope)."""
        keys = self._keys(run_id)
        row = (keys["PartitionKey"], keys["RowKey"])
        with self._fold_lock:
            return None if row in self._folded else self._recent.get(row)

    def _fold(self, row: tuple[str, str], entity: TableEntity | None, *, forget: bool = False) -> None:
        """Remember `entity` as the run row `row` now is, if a scope folds its reads (`forget`: it is unknown)."""
        with self._fold_lock:
            if forget:
                self._recent.pop(row, None)
            if row in self._folding:
                if forget:
                    self._folded.pop(row, None)
                else:
                    self._folded[row] = entity

    def _read_keys(self, keys: dict[str, str]) -> TableEntity | None:
        try:
            return self.table.get_entity(keys["PartitionKey"], keys["RowKey"])
        except ResourceNotFoundError:
            return None

    def _expired(self, entity: TableEntity, now: float) -> bool:
        return float(entity.get("updated_at", 0.0)) <= now - self.ttl_seconds

    def _write(self, entity: TableEntity, read: TableEntity | None) -> TableEntity:
        """Create `entity` if nothing was read, else replace what was read if nobody changed it since. Returns
        `entity` as written (with its new ETag, for a next compare-and-swap without reading it again)."""
        try:
            if read is None:
                response = self.table.create_entity(entity)
            else:
                response = self.table.update_entity(entity, mode=UpdateMode.REPLACE, etag=read.metadata["etag"],
                                                    match_condition=MatchConditions.IfNotModified)
        except (ResourceExistsError, ResourceNotFoundError) as error:  # 409: created since our read; 404: deleted
            self._fold((entity["PartitionKey"], entity["RowKey"]), None, forget=True)
            raise RunStateConflict() from error
        except HttpResponseError as error:
            self._fold((entity["PartitionKey"], entity["RowKey"]), None, forget=True)
            if error.status_code == 412:  # changed by another writer since our read
                raise RunStateConflict() from error
            raise
        written = TableEntity(entity)
        etag = (response or {}).get("etag")
        written._metadata = {"etag": etag, "timestamp": None}
        self._fold((entity["PartitionKey"], entity["RowKey"]), written, forget=etag is None)
        return written

    def _delete(self, read: TableEntity) -> None:
        try:
            self.table.delete_entity(read["PartitionKey"], read["RowKey"], etag=read.metadata["etag"],
                                     match_condition=MatchConditions.IfNotModified)
        except HttpResponseError as error:
            if error.status_code == 412:
                raise RunStateConflict() from error
            raise


def put_blob(entity: TableEntity, name: str, data: bytes) -> None:
    """Store `data` in binary properties `{name}_0`, `{name}_1`... (a property holds at most 64 KiB) and
    `{name}_parts`, replacing what `entity` held under that name."""
    for i in range(int(entity.get(f"{name}_parts", 0))):
        entity.pop(f"{name}_{i}", None)
    parts = [data[i:i + PROPERTY_BYTES] for i in range(0, len(data), PROPERTY_BYTES)]
    entity[f"{name}_parts"] = len(parts)
    entity.update({f"{name}_{i}": part for i, part in enumerate(parts)})


def get_blob(entity: TableEntity | Mapping[str, Any] | None, name: str) -> bytes | None:
    """What `put_blob` stored under `name`, or None."""
    if entity is None:
        return None
    parts = int(entity.get(f"{name}_parts", 0))
    if parts == 0:
        return None
    return b"".join(bytes(entity[f"{name}_{i}"]) for i in range(parts))


def safe_row_key(key: str) -> str:
    """`key` itself when Table storage allows it as a RowKey, else `sha256-<hex digest>`."""
    return key if _SAFE_ROW_KEY.match(key) else "sha256-" + hashlib.sha256(key.encode()).hexdigest()


def _compressed_state(snapshot: RunSnapshot, run_id: str, limit: int) -> bytes:
    data = to_compressed(snapshot)
    if len(data) > limit:
        raise RunStateTooLarge(
            f"run {run_id}: merged state is {len(data)} bytes compressed, over the {limit}-byte limit of one Table "
            "storage entity; use RUN_STATE_STORE=sqlite or strip large facets (STRIP_FACETS)")
    return data


def _head_keys(key: Key) -> dict[str, str]:
    digest = hashlib.sha256(f"{key[0]}\n{key[1]}".encode("utf-8")).hexdigest()
    return {"PartitionKey": OWNED_PREFIX + digest, "RowKey": HEAD_ROW}


def _user_keys(key: Key, run_key: str) -> dict[str, str]:
    return {"PartitionKey": _head_keys(key)["PartitionKey"],
            "RowKey": "run-" + hashlib.sha256(run_key.encode("utf-8")).hexdigest()}


def _head_row(key: Key, head: TableEntity | None, **values: Any) -> TableEntity:
    """The entity's head row (its users count, its tombstone): a copy of `head` when there is one, else a new row;
    `values` set on top."""
    row = TableEntity(head) if head is not None else TableEntity(_head_keys(key), type_name=key[0],
                                                                 qualified_name=key[1])
    row.update(values)
    return row


def _unchanged(read: TableEntity) -> dict[str, Any]:
    return {"etag": read.metadata["etag"], "match_condition": MatchConditions.IfNotModified}


def _put_op(row: TableEntity, read: TableEntity | None) -> TableOperation:
    """The batch operation that creates `row` (nothing was read) or replaces what was read if unchanged."""
    if read is None:
        return ("create", row)
    return ("update", row, {"mode": UpdateMode.REPLACE, **_unchanged(read)})


def _tombstoned(ref: TableEntity, now: float) -> bool:
    since = ref.get("deleting_since")
    return since is not None and float(since) > now - TOMBSTONE_SECONDS


def _lifecycle_row(key: Key) -> str:
    return _sha(f"{key[0]}\n{key[1]}")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
