"""The run history in Azure Table storage (table `olrunhistory`), shared by every instance of a scaled-out app.

Partitions and rows (`inv` = inverted start in ms, 13 digits, so that a key scan meets the newest runs first; `c`
closed runs, `o` open ones, INCOMPLETE, which overlap every later window; `run` = the run's RowKey):

- `run-{2 hex}` / `run`: the run's record (zlib-compressed, split over binary properties), its digest, its `start`,
  `complete`, `unrefreshed` (the processes whose summary the run changed and whose catalog copies are not confirmed
  rewritten), and, while a replacement is under way, `previous` (the record it replaces) and `pending` (access rows
  to delete). The timer's purge finds old runs by their `start`, one scan of the run partitions a day;
- `purge-{yyyymmdd}` / `run`: written by the previous release only (one per run, under the day it started, naming the
  record whose rows were all written); the purge still reads and deletes them;
- `d-{sha256 of dataset}` / `{read|write}-{c|o}-{inv}-{run}-{sha256 of process, 20 hex}`: one per dataset access
  (partition per dataset; a walk reads one access kind), with the run's slim facts;
- `p-{sha256 of process}`: `{c|o}-{inv}-{run}` per run of the process (slim facts and what that run did),
  `m-{run}` (marker: the run's start and its row's key) and `summary` (runs held, earliest starts). Markers and the
  summary change in one entity-group transaction, conditional on what was read, so a process's count is exact
  whatever retries, replays and concurrent writers do;
- `stats` / `max-duration`: the longest run recorded, which bounds how far back a query reads closed runs.

A record is written in this order: the run's row (new record, not complete, listing what it replaces), the access
rows, each process partition (one transaction each), the stale access rows deleted, then the run's row marked
complete — at once, or, when processes wait for the catalog to show their counts, in the runner's `refreshed` write.
A crash anywhere leaves the run's row listing everything to finish or undo; the retry does it (every write is
idempotent: a row left incomplete is written again). Two instances recording the run at once are ordered by the
run's row (each write conditional); the one whose record was replaced while it wrote its process rows finds it in
`refreshed`, makes the processes it touched hold what the row's record says, and answers them. Each row is built by one function here (`_run_row`,
`_access_row`, `_process_run_rows`), which `record` and `seed` (many runs at once, for benches and tests) share.

A window query reads two key ranges of a partition per step, newest first, at most one page of each
(`max_rows_per_read`), and at most `max_reads` partitions: under 200 requests whatever the table holds.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
import threading
import time
import zlib
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Mapping, Sequence, TypeVar

from azure.core.exceptions import ServiceResponseError
from azure.data.tables import TableClient, TableEntity, UpdateMode
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_random_exponential

from olparser.adapters.run_state.table_rows import (
    TableConflict,
    get_blob,
    put_blob,
    read_row,
    remember_row,
    retried,
    safe_row_key,
    submit,
    unchanged,
    with_etag,
    write_row,
)
from olparser.adapters.storage_account import StorageConnection, TableAnswer, TableOperation, storage_account
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

T = TypeVar("T")  # what one read-modify-write attempt returns (_with_retries)

MAX_ATTEMPTS = 40
MAX_RECORD_BYTES = 600_000  # compressed; two of them (record, previous) must fit in one 1 MiB entity, base64
EARLIEST_KEPT = 8  # earliest starts a summary remembers; re-read from the markers when they run out
STATS_CACHE_SECONDS = 60.0
KNOWN_ROWS = 4096  # run ids recorded here, and process summaries as last read or written here (each write conditional)
SUMMARY = "summary"
UNREFRESHED = "unrefreshed"
UNREFRESHED_PARTS = 4  # what `refreshed` selects: 256 KiB of compressed process names, far more than a run has
_UNREFRESHED_SELECT = [f"{UNREFRESHED}_parts", *(f"{UNREFRESHED}_{i}" for i in range(UNREFRESHED_PARTS))]
_ACCESS_SELECT = ["RowKey", "dataset_type", "access", "process", "process_type", "facts"]
BLOB_PARTS = 16  # a 1 MiB entity holds at most 16 binary properties of 64 KiB
_PROCESS_RUN_SELECT = ["RowKey", "facts", "run_parts", *(f"run_{i}" for i in range(BLOB_PARTS))]
PAGE_ROWS = 1000  # what one request of a query answers at most
LAYOUT = "layout"  # 2 on the run rows of this release: no purge row (an incomplete row is written again)
BATCH_ROWS = 100  # what one entity-group transaction holds at most
BATCH_BYTES = 2_500_000  # binary values go base64 (4/3): under the 4 MiB of a transaction's body


class HistoryConflict(TableConflict):
    """Another writer changed what was read (retried)."""


class RunHistoryTooLarge(ValueError):
    """A run record that does not fit in one Table storage entity, even without its column lineage."""


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _day(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y%m%d")


def _prefix(facts: RunFacts) -> str:
    return f"{'o' if is_open(facts) else 'c'}-{inverted_ms(facts.start):013d}"


def _start_order(entity: TableEntity) -> str:
    """Orders rows of either kind (access rows `read-c-...`, process rows `c-...`) by inverted start, then run."""
    key: str = entity["RowKey"]
    return key.split("-", 1)[1][2:] if key.startswith(("read-", "write-")) else key[2:]


def _json(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _compressed(record: RunRecord) -> bytes:
    """The record as stored in the run's row; column lineage left out when the whole would not fit."""
    data = zlib.compress(record.canonical().encode("utf-8"), 6)
    if len(data) > MAX_RECORD_BYTES:
        lean = RunRecord(
            record.facts,
            tuple(ProcessRun(p.qualified_name, p.type_name, p.name, p.inputs, p.outputs) for p in record.processes),
        )
        data = zlib.compress(lean.canonical().encode("utf-8"), 6)
        if len(data) > MAX_RECORD_BYTES:
            raise RunHistoryTooLarge(
                f"run {record.run_id}: its history record is {len(data)} bytes compressed, "
                f"over the {MAX_RECORD_BYTES}-byte limit of a Table storage entity"
            )
    return data


def _summary_of(row: Mapping[str, Any]) -> ProcessSummary:
    earliest = json.loads(row["earliest"])
    return ProcessSummary(int(row["count"]), float(earliest[0][0]) if earliest else None)


def _names_blob(names: Iterable[str]) -> bytes:
    return zlib.compress(_json(sorted(names)).encode("utf-8"), 6) if names else b""


def _unrefreshed_of(entity: TableEntity | None) -> frozenset[str]:
    data = get_blob(entity, UNREFRESHED)
    return frozenset(json.loads(zlib.decompress(data))) if data else frozenset()


def _record_of(entity: TableEntity | None, name: str) -> RunRecord | None:
    data = get_blob(entity, name)
    return RunRecord.from_json(json.loads(zlib.decompress(data))) if data else None


def _run_row(
    keys: dict[str, str],
    record: RunRecord,
    digest: str,
    *,
    pending: Iterable[str],
    unrefreshed: Iterable[str],
    previous: RunRecord | None,
) -> TableEntity:
    """The run's row as step 1 of `record` writes it (not complete yet)."""
    row = TableEntity(
        keys,
        run_id=record.run_id,
        start=record.facts.start,
        digest=digest,
        complete=False,
        day=_day(record.facts.start),
        **{LAYOUT: 2},
        pending=_json(sorted(pending)),
    )
    put_blob(row, "record", _compressed(record))
    put_blob(row, UNREFRESHED, _names_blob(frozenset(unrefreshed)))
    if previous is not None:
        put_blob(row, "previous", _compressed(previous))
    return row


def _completed(row: TableEntity) -> TableEntity:
    """The run's row as the last step of `record` writes it."""
    done = TableEntity({k: v for k, v in row.items() if not k.startswith("previous_")})
    done.update(complete=True, pending="[]")
    return done


def _access_row(keys: tuple[str, str], access: Access, facts_text: str) -> TableEntity:
    return TableEntity(
        {"PartitionKey": keys[0], "RowKey": keys[1]},
        dataset=access.dataset.qualified_name,
        dataset_type=access.dataset.type_name,
        access=access.access,
        process=access.process,
        process_type=access.process_type,
        facts=facts_text,
    )


def _process_run_rows(
    partition: str, run_key: str, facts: RunFacts, process_run: ProcessRun
) -> tuple[TableEntity, TableEntity]:
    """The row of one run of a process (slim facts, what it did) and its marker."""
    row_key = f"{_prefix(facts)}-{run_key}"
    run_row = TableEntity({"PartitionKey": partition, "RowKey": row_key}, facts=_json(facts_to_json(facts)))
    put_blob(run_row, "run", zlib.compress(_json(process_to_json(process_run)).encode("utf-8"), 6))
    marker = TableEntity({"PartitionKey": partition, "RowKey": f"m-{run_key}"}, start=facts.start, key=row_key)
    return run_row, marker


def _batches(rows: list[TableEntity]) -> Iterable[list[TableEntity]]:
    """Rows of one partition in entity-group transactions: at most BATCH_ROWS rows and about BATCH_BYTES each."""
    batch: list[TableEntity] = []
    size = 0
    for row in rows:
        row_size = 200 + sum(len(v) for v in row.values() if isinstance(v, (str, bytes)))
        if batch and (len(batch) >= BATCH_ROWS or size + row_size > BATCH_BYTES):
            yield batch
            batch, size = [], 0
        batch.append(row)
        size += row_size
    if batch:
        yield batch


class TableHistoryStore:
    """RunHistoryStore over an Azure Table (see the module docstring and olparser/history/store.py)."""

    # a window query reads at most this many dataset or process partitions, each read two key ranges (closed runs,
    # open runs) of at most `max_rows_per_read` rows, one page each: under 200 requests whatever the history holds,
    # cut short (`truncated`) at a dataset hundreds of processes read, or thousands of runs wrote in the window
    max_reads = 95
    max_rows_per_read = PAGE_ROWS

    def __init__(
        self,
        table: TableClient,
        *,
        retention_days: int,
        max_attempts: int = MAX_ATTEMPTS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.table = table
        self.retention_seconds = retention_days * 86400.0
        self._max_attempts = max_attempts
        self._clock = clock
        self._max_duration: tuple[float, float] | None = None  # (value, read at)
        self._purged_day: str | None = None  # the day before which `purge` last found every run purged
        # what this thread's last `record` wrote, for the reads that follow it at once (folded into its writes): the
        # run's row (run id, ETag, unrefreshed processes) for `refreshed`, and the summaries of its processes for
        # `process_summaries(recorded=<that run>)` (answered from `_summaries`: the newest this instance wrote)
        self._written = threading.local()
        self._known_lock = threading.Lock()
        self._recorded: OrderedDict[str, None] = OrderedDict()  # run ids this instance recorded (else: a new run)
        self._summaries: OrderedDict[str, TableEntity] = OrderedDict()  # process partition -> its summary row

    @classmethod
    def from_connection_string(
        cls, connection: StorageConnection, table_name: str, **options: Any
    ) -> "TableHistoryStore":
        service = storage_account(connection).table_service()
        return cls(service.create_table_if_not_exists(table_name), **options)

    # --- writing -----------------------------------------------------------------------------------------------
    def record(self, record: RunRecord, *, now: float | None = None, keep_changes: bool = True) -> frozenset[str]:
        now = time.time() if now is None else now
        # the processes this thread's earlier record of the run touched, not confirmed rewritten yet: one of its rows
        # may have landed after another instance's pass (a record replaced meanwhile), so this record makes them
        # hold what it says too (the runner records again after a stale commit, before any `refreshed`)
        prior = getattr(self._written, "row", None)
        carried: frozenset[str] = prior[4] if prior is not None and prior[0] == record.run_id else frozenset()
        self._written.row, self._written.summaries = None, (record.run_id, {})
        if record.facts.start < now - self.retention_seconds:
            return frozenset()
        with self._known_lock:
            new = [record.run_id not in self._recorded]
        # a run this instance never recorded is taken to be new: its row is created without reading it first (one
        # that exists fails the create, and the retry reads it)
        recorded: frozenset[str] = self._with_retries(
            lambda: self._record_once(record, keep_changes, new.pop() if new else False, carried)
        )
        return recorded

    def refreshed(self, run_id: str, names: Iterable[str]) -> frozenset[str]:
        names = frozenset(names)
        if not names:
            return frozenset()
        keys = self._run_keys(run_id)
        written = getattr(self._written, "row", None)
        self._written.row = None
        mine = written is not None and written[0] == run_id
        # the record whose rows this thread's `record` wrote, all of them (None: none, or the row was complete)
        digest = written[3]["digest"] if written is not None and mine and written[3] else None
        touched: frozenset[str] = written[4] if written is not None and mine else frozenset()
        replaced: list[RunRecord | None] = []  # the record that replaced this thread's while it wrote its rows

        def attempt() -> None:
            nonlocal written
            done = None
            if written is not None and written[0] == run_id:  # the row as `record` just wrote it: no read
                etag, unrefreshed, done = written[1], written[2], written[3]
            else:
                entity = read_row(self.table, keys, select=None if digest else _UNREFRESHED_SELECT)
                if entity is None:
                    return
                etag, unrefreshed = entity.metadata["etag"], _unrefreshed_of(entity)
                if digest and not entity.get("complete") and entity.get("digest") == digest:
                    # another writer of the same record (a concurrent batch of a streaming window, a redelivery)
                    # wrote the row again meanwhile: the rows of that record are all written (this thread wrote
                    # them), so the row is marked complete now, else each next record of the run writes it again
                    done = _completed(entity)
                elif digest and entity.get("digest") != digest:
                    replaced[:] = [_record_of(entity, "record")]
            written = None  # a conflict: read it
            if done is not None:  # the record's rows are all written: marked complete in the same write
                row = TableEntity(done)
                put_blob(row, UNREFRESHED, _names_blob(unrefreshed - names))
                write_row(self.table, row, etag, HistoryConflict)
            elif unrefreshed & names:
                row = TableEntity(keys)
                put_blob(row, UNREFRESHED, _names_blob(unrefreshed - names))
                write_row(self.table, row, etag, HistoryConflict, mode=UpdateMode.MERGE)

        self._with_retries(attempt)
        if not replaced:
            return frozenset()
        # Another writer's record of the run (a concurrent delivery of another of its events) replaced this one's
        # while this thread wrote its process rows: a row it wrote after the other writer's pass would count the run
        # where the run's record no longer has it. Each process this thread touched is made to hold what the row's
        # record says; those whose runs changed are answered, to be rewritten in the catalog.
        record = replaced[0]
        changed = frozenset(
            name
            for name in sorted(touched)
            if self._with_retries(functools.partial(self._update_process, name, run_id, record))
        )
        return changed

    def _record_once(
        self, record: RunRecord, keep_changes: bool, new: bool = False, carried: frozenset[str] = frozenset()
    ) -> frozenset[str]:
        digest = _sha(record.canonical())
        keys = self._run_keys(record.run_id)
        entity = None if new else self._read(keys)
        unrefreshed = _unrefreshed_of(entity)
        complete = entity is not None and (bool(entity.get("complete")) or self._rows_written(entity))
        if complete and entity.get("digest") == digest:  # type: ignore[union-attr]
            assert entity is not None
            reconciled = frozenset(
                name
                for name in sorted(carried)
                if self._with_retries(functools.partial(self._update_process, name, record.run_id, record))
            )
            self._finish(record.run_id, entity.metadata["etag"], entity, unrefreshed, keep_changes, carried)
            return unrefreshed | reconciled
        current = _record_of(entity, "record")
        previous = current if entity is None or complete else _record_of(entity, "previous")
        changed = changed_processes(previous, record)
        new_accesses = {self._access_keys(a): a for a in record.accesses()}
        stale = {self._access_key_text(k) for k in self._record_access_keys(current)} | set(
            json.loads(entity.get("pending") or "[]") if entity is not None else ()
        )
        stale -= {self._access_key_text(k) for k in new_accesses}
        row = _run_row(
            keys,
            record,
            digest,
            pending=stale,
            previous=previous,
            unrefreshed=unrefreshed | changed if keep_changes else unrefreshed,
        )
        etag = self._write(row, entity)
        facts_text = _json(facts_to_json(slim(record.facts)))
        for access_keys_, access in new_accesses.items():
            self.table.upsert_entity(_access_row(access_keys_, access, facts_text), mode=UpdateMode.REPLACE)

        def update_process(name: str, first: list[bool]) -> None:
            """`first`: whether the run is new to the process, on the first attempt only (a retry reads it again)."""
            self._update_process(name, record.run_id, record, new=bool(first and first.pop()))

        known = process_runs_of(current).keys() | process_runs_of(previous).keys()
        touched = frozenset(known | process_runs_of(record).keys() | carried)
        for name in sorted(touched):
            self._with_retries(functools.partial(update_process, name, [name not in known | carried]))
        for text in sorted(stale):
            self.table.delete_entity(*json.loads(text))  # absent: no error
        self._note_duration(record.facts)
        self._finish(record.run_id, etag, row, _unrefreshed_of(row), keep_changes, touched)
        with self._known_lock:
            self._recorded[record.run_id] = None
            self._recorded.move_to_end(record.run_id)
            while len(self._recorded) > KNOWN_ROWS:
                self._recorded.popitem(last=False)
        return changed | unrefreshed

    def _rows_written(self, entity: TableEntity) -> bool:
        """Whether the record the (incomplete) row of the previous release holds has all its rows written: its purge
        row, the last of them, names it (one read). This release's incomplete rows are written again."""
        if not entity.get("day") or entity.get(LAYOUT):
            return False
        purge = self._read({"PartitionKey": f"purge-{entity['day']}", "RowKey": entity["RowKey"]})
        return purge is not None and purge.get("digest") == entity.get("digest")

    def _finish(
        self,
        run_id: str,
        etag: str | None,
        row: TableEntity,
        unrefreshed: frozenset[str],
        keep_changes: bool,
        touched: frozenset[str] = frozenset(),
    ) -> None:
        """Mark the run's row complete (what it replaces dropped), conditional on `etag`: now when no process waits
        for the catalog to show its counts, else with the runner's `refreshed` mark (one write: until then the row
        says incomplete, and a record of the run writes its rows again). A conflict: the retry
        reads the other writer's record."""
        if row.get("complete"):
            self._written.row = (run_id, etag, unrefreshed, None, touched)
            return
        done = TableEntity({k: v for k, v in row.items() if not k.startswith("previous_")})
        done.update(complete=True, pending="[]")
        if unrefreshed and keep_changes:
            self._written.row = (run_id, etag, unrefreshed, done, touched)
            return
        self._written.row = (run_id, self._write(done, etag=etag), unrefreshed, None, touched)

    def purge(self, now: float | None = None, limit: int = PURGE_BATCH) -> int:
        """Delete the runs that started before the day the retention ends in (at most `limit`): the previous
        release's purge rows of those days, then a scan of the run partitions by `start`. A scan that finished finds
        nothing more until that day changes, so an instance scans once a day (or until it has caught up)."""
        now = time.time() if now is None else now
        day = _day(now - self.retention_seconds)
        if self._purged_day == day:
            return 0
        day_start = datetime.strptime(day, "%Y%m%d").replace(tzinfo=timezone.utc).timestamp()
        legacy = self.table.query_entities(
            "PartitionKey ge 'purge-' and PartitionKey lt @last",
            parameters={"last": f"purge-{day}"},
            select=["PartitionKey", "RowKey", "run_id"],
        )
        runs = self.table.query_entities(
            "PartitionKey ge 'run-' and PartitionKey lt 'run.' and start lt @before",
            parameters={"before": float(day_start)},
            select=["PartitionKey", "RowKey", "run_id"],
        )
        purged = 0
        for row in itertools.chain(legacy, runs):
            if purged >= limit:
                return purged
            self._purge_run(row["run_id"])
            if row["PartitionKey"].startswith("purge-"):
                self.table.delete_entity(row["PartitionKey"], row["RowKey"])
            purged += 1
        self._purged_day = day
        return purged

    def _purge_run(self, run_id: str) -> None:
        """Delete everything the run's record (and the one it was replacing) wrote, then its row."""
        keys = self._run_keys(run_id)
        entity = self._read(keys)
        for record in (_record_of(entity, "record"), _record_of(entity, "previous")):
            if record is None:
                continue
            for partition, row_key in self._record_access_keys(record):
                self.table.delete_entity(partition, row_key)
            for name in process_runs_of(record):
                self._with_retries(functools.partial(self._update_process, name, record.run_id, None))
        for text in json.loads(entity.get("pending") or "[]") if entity is not None else ():
            self.table.delete_entity(*json.loads(text))
        self.table.delete_entity(keys["PartitionKey"], keys["RowKey"])

    def seed(self, records: Sequence[RunRecord], *, threads: int = 2) -> int:
        """Write runs into an empty history at once, each as `record(r, keep_changes=False)` would leave it (the
        same rows, built by the same functions), without its per-run requests: every partition's rows in
        entity-group transactions of at most 100 rows, on `threads` threads (Azurite drops connections under
        more). For benches and tests that need a large history; answers the transactions sent."""
        partitions: dict[str, list[TableEntity]] = {}
        process_runs: dict[str, list[TableEntity]] = {}
        longest = 0.0
        for record in records:
            keys = self._run_keys(record.run_id)
            digest = _sha(record.canonical())
            row = _completed(_run_row(keys, record, digest, pending=(), unrefreshed=(), previous=None))
            partitions.setdefault(keys["PartitionKey"], []).append(row)
            facts = slim(record.facts)
            facts_text = _json(facts_to_json(facts))
            for access in access_keys(record).values():
                access_keys_ = self._access_keys(access)
                partitions.setdefault(access_keys_[0], []).append(_access_row(access_keys_, access, facts_text))
            for name, process_run in process_runs_of(record).items():
                partition = self._process_partition(name)
                run_row, marker = _process_run_rows(partition, keys["RowKey"], facts, process_run)
                partitions.setdefault(partition, []).extend((run_row, marker))
                process_runs.setdefault(partition, []).append(marker)
            if record.facts.end is not None:
                longest = max(longest, record.facts.end - record.facts.start)
        for partition, markers in process_runs.items():
            earliest = sorted((float(m["start"]), m["RowKey"][2:]) for m in markers)[:EARLIEST_KEPT]
            operation = self._summary_operation(partition, None, len(markers), earliest)
            assert operation is not None and isinstance(
                operation[1], TableEntity
            )  # a count > 0 with no summary: created
            partitions[partition].append(operation[1])
        batches = [batch for rows in partitions.values() for batch in _batches(rows)]

        def send(batch: list[TableEntity]) -> None:
            """Created (the history is empty: a row there already fails the batch); after a dropped connection,
            which may have written them, upserted."""
            sent: list[bool] = []
            for attempt in Retrying(
                retry=retry_if_exception_type(ServiceResponseError),
                reraise=True,
                stop=stop_after_attempt(10),
                wait=wait_random_exponential(multiplier=0.2, max=5),
            ):
                with attempt:
                    operations = [
                        ("upsert", row, {"mode": UpdateMode.REPLACE}) if sent else ("create", row) for row in batch
                    ]
                    sent.append(True)
                    self.table.submit_transaction(operations)

        with ThreadPoolExecutor(max(1, threads)) as pool:
            list(pool.map(send, batches))
        if longest > self._longest():
            self._note_duration(RunFacts("", "", "", "", 0.0, longest, ""))
        return len(batches)

    def _update_process(self, name: str, run_id: str, record: RunRecord | None, *, new: bool = False) -> bool:
        """Make the process partition hold what `record` says of this run (None: nothing), in one transaction
        (`new`: the run's earlier records did not have the process: with the summary as this instance last wrote it,
        no read; a marker already there or a summary changed since fails the batch, and the retry reads them)."""
        partition = self._process_partition(name)
        run_key = safe_row_key(run_id)
        marker_key = f"m-{run_key}"
        with self._known_lock:
            summary, marker = (self._summaries.get(partition) if new else None), None
        if summary is None:
            found = {
                e["RowKey"]: e
                for e in self.table.query_entities(
                    "PartitionKey eq @p and ( RowKey eq @s or RowKey eq @m )",
                    parameters={"p": partition, "s": SUMMARY, "m": marker_key},
                )
            }
            summary, marker = found.get(SUMMARY), found.get(marker_key)
        process_run = process_runs_of(record).get(name)
        if process_run is None and marker is None:
            return False
        earliest = sorted(tuple(item) for item in json.loads(summary["earliest"])) if summary is not None else []
        count = int(summary["count"]) if summary is not None else 0
        before = (count, earliest[:1])
        operations: list[TableOperation] = []
        if marker is not None:
            earliest = [item for item in earliest if item[1] != run_key]
            count -= 1
            # Why the type error is ignored: a process run comes from a record (not None)
            if process_run is None or marker["key"] != _prefix(record.facts) + f"-{run_key}":  # type: ignore[union-attr]
                operations.append(("delete", {"PartitionKey": partition, "RowKey": marker["key"]}))
        if process_run is not None:
            assert record is not None
            facts = slim(record.facts)
            run_row, new_marker = _process_run_rows(partition, run_key, facts, process_run)
            operations.append(("upsert", run_row, {"mode": UpdateMode.REPLACE}))
            operations.append(
                ("create", new_marker)
                if marker is None
                else ("update", new_marker, {"mode": UpdateMode.REPLACE, **unchanged(marker)})
            )
            # the list holds the earliest starts: every run it leaves out starts at or after its last one
            if len(earliest) == count or (earliest and facts.start <= earliest[-1][0]):
                earliest.append((facts.start, run_key))
            count += 1
        elif marker is not None:
            operations.append(("delete", marker, unchanged(marker)))
        earliest = sorted(earliest)[:EARLIEST_KEPT]
        if count > 0 and not earliest:
            earliest = self._earliest_markers(partition, exclude=run_key)
        summary_operation = self._summary_operation(partition, summary, count, earliest)
        if summary_operation is not None:
            operations.append(summary_operation)
        try:
            answers = self._submit([operation for operation in operations if operation is not None])
        except HistoryConflict:
            self._know_summary(partition, None)
            raise
        self._know_summary(
            partition,
            summary_operation[1] if summary_operation is not None and count > 0 else None,
            (answers[-1] or {}).get("etag") if answers else None,
        )
        recorded = getattr(self._written, "summaries", None)
        if record is not None and recorded is not None and recorded[0] == run_id:  # (not the purge)
            recorded[1][name] = count > 0  # (whether the process still has runs)
        return (count, earliest[:1]) != before  # the process's runCount or firstRunTime changed

    def _earliest_markers(self, partition: str, exclude: str) -> list[tuple[float, str]]:
        """The earliest starts among the process's markers (when the summary's list ran out)."""
        found = [
            (float(m["start"]), m["RowKey"][2:])
            for m in self.table.query_entities(
                "PartitionKey eq @p and RowKey ge 'm-' and RowKey lt 'm.'",
                parameters={"p": partition},
                select=["RowKey", "start"],
            )
            if m["RowKey"][2:] != exclude
        ]
        return sorted(found)[:EARLIEST_KEPT]

    @staticmethod
    def _summary_operation(
        partition: str, summary: TableEntity | None, count: int, earliest: list[tuple[float, str]]
    ) -> TableOperation | None:
        keys = {"PartitionKey": partition, "RowKey": SUMMARY}
        condition = unchanged(summary) if summary is not None else {}
        if count <= 0:
            return ("delete", keys, condition) if summary is not None else None
        row = TableEntity(keys, count=count, earliest=_json([list(item) for item in earliest]))
        return ("create", row) if summary is None else ("update", row, {"mode": UpdateMode.REPLACE, **condition})

    def _know_summary(self, partition: str, row: Mapping[str, Any] | None, etag: str | None = None) -> None:
        """Remember the process's summary row as this batch wrote it (None, or no ETag: forget it)."""
        with self._known_lock:
            remember_row(self._summaries, partition, None if row is None else with_etag(row, etag), KNOWN_ROWS)

    def _submit(self, operations: list[TableOperation]) -> list[TableAnswer]:
        return submit(self.table, operations, HistoryConflict)

    def _note_duration(self, facts: RunFacts) -> None:
        """Raise the recorded longest run when this one is longer."""
        if facts.end is None or facts.end - facts.start <= self._longest():
            return
        keys = {"PartitionKey": "stats", "RowKey": "max-duration"}

        def attempt() -> float:
            entity = self._read(keys)
            longest = float(entity["value"]) if entity is not None else 0.0
            if longest < facts.end - facts.start:  # type: ignore[operator]
                longest = float(facts.end - facts.start)  # type: ignore[operator]
                self._write(TableEntity(keys, value=longest), entity)
            return longest

        # the value as this write left it (or found it, larger): the next run's `_longest` needs no read
        self._max_duration = (self._with_retries(attempt), self._clock())

    def _longest(self) -> float:
        if self._max_duration is None or self._clock() - self._max_duration[1] > STATS_CACHE_SECONDS:
            entity = self._read({"PartitionKey": "stats", "RowKey": "max-duration"})
            self._max_duration = (float(entity["value"]) if entity is not None else 0.0, self._clock())
        return self._max_duration[0]

    # --- reading -----------------------------------------------------------------------------------------------
    def process_summaries(self, names: Sequence[str], *, recorded: str | None = None) -> dict[str, ProcessSummary]:
        """Each process's summary row, read; for the processes this thread's record of `recorded` just wrote, the
        summary as this instance last wrote it (that record's batch, or a newer one of another thread: every batch
        here leaves its row in `_summaries`, and one that conflicts removes it), without a read."""
        found: dict[str, ProcessSummary] = {}
        written: dict[str, bool]  # process -> whether it still has runs, for the processes the record wrote
        run_id, written = getattr(self._written, "summaries", None) or (None, {})
        written = written if recorded is not None and recorded == run_id else {}
        for name in dict.fromkeys(names):
            partition = self._process_partition(name)
            if name in written:
                with self._known_lock:
                    known = self._summaries.get(partition)
                if known is not None:
                    found[name] = _summary_of(known)
                    continue
                if not written[name]:  # the record took the run out of the process, whose last run it was
                    continue
            summary = self._read({"PartitionKey": partition, "RowKey": SUMMARY})
            if summary is not None:
                found[name] = _summary_of(summary)
        return found

    def _ranges(self, partition: str, window: Window, prefixes: Iterable[str]) -> list[tuple[str, dict[str, Any]]]:
        """Key ranges that hold every row that may overlap: closed runs that started in [since - longest, until),
        open runs that started before until (each under every prefix)."""
        newest = max(math.floor(inverted_ms(window.until)), 0)
        oldest = math.ceil(inverted_ms(window.since - self._longest())) + 1
        query = "PartitionKey eq @p and RowKey ge @lo and RowKey lt @hi"
        ranges = []
        for prefix in prefixes:
            ranges += [
                (query, {"p": partition, "lo": f"{prefix}c-{newest:013d}", "hi": f"{prefix}c-{oldest:013d}"}),
                (query, {"p": partition, "lo": f"{prefix}o-{newest:013d}", "hi": f"{prefix}o."}),
            ]
        return ranges

    def _rows(
        self, partition: str, window: Window, limit: int, select: list[str], prefixes: Iterable[str] = ("",)
    ) -> list[TableEntity]:
        """The first `limit` rows of each range (newest first; no page requested beyond them), merged."""
        rows: list[TableEntity] = []
        limit = max(limit, 0)
        for query, parameters in self._ranges(partition, window, prefixes):
            rows += itertools.islice(
                self.table.query_entities(
                    query, parameters=parameters, select=select, results_per_page=max(1, min(limit, PAGE_ROWS))
                ),
                limit,
            )
        return sorted(rows, key=_start_order)[:limit]

    def dataset_accesses(self, dataset: str, window: Window, limit: int, access: str | None = None) -> list[Access]:
        prefixes = [f"{kind}-" for kind in ((access,) if access else (READ, WRITE))]
        return [
            self._access(dataset, e)
            for e in self._rows(self._dataset_partition(dataset), window, limit, _ACCESS_SELECT, prefixes)
        ]

    def process_runs(self, process: str, window: Window, limit: int) -> list[tuple[RunFacts, ProcessRun]]:
        return [
            (
                facts_from_json(json.loads(e["facts"])),
                process_from_json(json.loads(zlib.decompress(get_blob(e, "run") or b""))),
            )
            for e in self._rows(self._process_partition(process), window, limit, _PROCESS_RUN_SELECT)
        ]

    def newest_access(self, dataset: str) -> Access | None:
        partition = self._dataset_partition(dataset)
        newest = None
        for prefix in (f"{kind}-{state}" for kind in (READ, WRITE) for state in "co"):  # the first row of each range
            for entity in self.table.query_entities(
                "PartitionKey eq @p and RowKey ge @lo and RowKey lt @hi",
                results_per_page=1,
                parameters={"p": partition, "lo": f"{prefix}-", "hi": f"{prefix}."},
                select=_ACCESS_SELECT,
            ):
                if newest is None or _start_order(entity) < _start_order(newest):
                    newest = entity
                break
        return None if newest is None else self._access(dataset, newest)

    def run(self, run_id: str) -> RunRecord | None:
        entity = self._read(self._run_keys(run_id))
        return _record_of(entity, "record") if entity is not None else None

    @staticmethod
    def _access(dataset: str, entity: TableEntity) -> Access:
        return Access(
            DatasetRef(dataset, entity["dataset_type"]),
            entity["access"],
            entity["process"],
            entity["process_type"],
            facts_from_json(json.loads(entity["facts"])),
        )

    # --- keys --------------------------------------------------------------------------------------------------
    @staticmethod
    def _run_keys(run_id: str) -> dict[str, str]:
        return {"PartitionKey": f"run-{_sha(run_id)[:2]}", "RowKey": safe_row_key(run_id)}

    @staticmethod
    def _dataset_partition(dataset: str) -> str:
        return f"d-{_sha(dataset)}"

    @staticmethod
    def _process_partition(process: str) -> str:
        return f"p-{_sha(process)}"

    def _access_keys(self, access: Access) -> tuple[str, str]:
        run_key = safe_row_key(access.run.run_id)
        return (
            self._dataset_partition(access.dataset.qualified_name),
            f"{access.access}-{_prefix(access.run)}-{run_key}-{_sha(access.process)[:20]}",
        )

    def _record_access_keys(self, record: RunRecord | None) -> list[tuple[str, str]]:
        return [self._access_keys(a) for a in access_keys(record).values()]

    @staticmethod
    def _access_key_text(keys: Iterable[str]) -> str:
        return json.dumps(list(keys))

    # --- entities ----------------------------------------------------------------------------------------------
    def _read(self, keys: dict[str, str]) -> TableEntity | None:
        return read_row(self.table, keys)

    def _write(self, entity: TableEntity, read: TableEntity | None = None, *, etag: str | None = None) -> str:
        """Create `entity` if nothing was read (and no etag given), else replace it if nobody changed it since it was
        read (or written with `etag`); the new etag. HistoryConflict when somebody did."""
        return (
            write_row(
                self.table, entity, etag or (read.metadata["etag"] if read is not None else None), HistoryConflict
            )
            or ""
        )

    def _with_retries(self, attempt: Callable[[], Any]) -> Any:
        return retried(attempt, HistoryConflict, self._max_attempts)

    def close(self) -> None:
        self.table.close()

    def __enter__(self) -> "TableHistoryStore":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
