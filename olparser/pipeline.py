"""The runner that orders the steps: merge → decide → build → resolve → link → claim → upload → commit → delete what
no run uses.

The catalog must end up the same whatever the order in which a run's events are processed, with duplicates and with
concurrent workers: exactly what processing every event in order gives. Three rules get it there.

1. **A run's plan replaces what the run wrote before.** Each run (or static declaration) remembers the keys of the
   connector-owned entities its last plan contained; each such entity counts the runs whose plans contain it. When a
   run writes a new plan, what its old plan had and the new one lacks (a process under a generic owner that the
   Databricks environment facet later replaced, a `/mnt` placeholder that its mount points later resolved) loses a
   user, and an entity left without users is deleted from the catalog. The protocol is safe against concurrent
   writers: a run is counted as a user (`claim`) before it uploads, an entity is tombstoned while it is deleted, and
   a writer that claims a tombstoned entity waits for the deletion to finish before uploading it.
2. **A process shows its newest run.** Every process remembers the time of the newest run that wrote it; a late
   event of an older run (a requeued poison message, a retry) leaves that process alone ("superseded"), but still
   writes the datasets and owners its plan needs, as in-order processing would have.
3. **A plan is built from the newest state.** If the run was merged again (by another worker) while its plan was
   being written, the plan is built again from the newer state and written again.

The run history (olparser.history, optional) records every run that ends or is written as INCOMPLETE, from the
run's plan — FAIL and ABORT runs too, whose plan is built but not uploaded — before the plan's processes get their
`runCount` and `firstRunTime` from it. A run that joins, leaves or moves in a process's history without writing
that process (a failed run, an older run arriving late, a run whose plan dropped it) has the process rewritten from
its newest writer, so that the catalog ends up as in-order processing leaves it. The history keeps the processes a
run changed until the runner says they are rewritten: a worker that dies in between leaves them to the redelivery. The timer purges old history.

Temporary datasets (olparser/lineage/edges.py): a run that writes one records, in the run-state store, what it
passes on (its inputs); a run that reads one is noted as its reader when its plan looks the writers up. A writer that
comes after a reader gives the reader a new version (a plan of it being built is stale and built again) and writes
again each reader already written, after releasing its own run's lock: the catalog ends up as in-order processing
leaves it, whichever run comes first.

When: a COMPLETE run is written at once; a Databricks run whose environment facet has not arrived yet is held for
`environment_wait_seconds` (the RUNNING that carries it is usually processed within the same queue batch); a run that
has datasets but no terminal event is written as INCOMPLETE after `incomplete_run_seconds` by the timer
(`write_due`), which also retries deletions that failed. FAIL and ABORT write nothing unless `lineage_on_failure`
(and remove what an INCOMPLETE write of the run had put there).

Resolve and link (when a resolver is given): the plan's datasets are looked up against the assets Purview's scanners
registered (`olparser/adapters/catalog/resolver.py`) and the plan is rewritten to reference them
(`olparser/lineage/link.py`)
before it is fingerprinted, so the ledger and the fingerprint see what is actually written. A dataset left on its
rule identity although it has candidates (an interim dataset) is connector-owned: registered in the run-state store
when the upload creates it, re-resolved later by the re-link timer (`olparser/relink.py`). A scanned asset that
vanished between resolution and upload (404 on its reference) is forgotten and the plan resolved again.

The catalog write itself — claim, the newer-run test, upload with the interim datasets registered, commit, then
delete, restore and done — is the one write procedure (`olparser/writing.py`), which the Spark paths use too; this
runner adds what a single live run needs around it (rebuilds, the history, the streaming window, the log lines).

It owns no I/O of its own: the run-state store, the resolver and the catalog uploader are passed in, so the same runner
serves the queue trigger in Azure, the local host, the tests and the benchmarks.
"""

from __future__ import annotations

import logging
import threading
import time
import zlib
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Callable, Iterable

from olparser.history import RunHistoryStore, history_record, with_run_history
from olparser.history.model import WRITE
from olparser.history.records import history_run_id
from olparser.history.window import Window
from olparser.inherited_orchestrators import look_up_orchestration, record_passed_orchestration
from olparser.lineage import (
    LineageOptions,
    LineagePlan,
    awaits_environment,
    build_lineage,
    plan_fingerprint,
    should_write_lineage,
)
from olparser.lineage.build import dataset_resolver
from olparser.lineage.edges import temporary_scope, temporary_writes, upstream_inputs
from olparser.lineage.governance import UNRESOLVED_NOTE
from olparser.lineage.identity import job_identity, legacy_writers
from olparser.lineage.lifecycle import LifecycleChanges, lifecycle_changes, lifecycle_marks, standing
from olparser.lineage.link import link_plan
from olparser.lineage.plan import UploadReport, unmatched_text
from olparser.lineage.streaming import stream_run_id
from olparser.naming import MappingEngine
from olparser.relink import drop_datasets, move_datasets
from olparser.runs import RunSnapshot, RunStateStore, is_static_event, snapshot_from_static
from olparser.runs.codec import passed_on_from_bytes, passed_on_to_bytes
from olparser.runs.ledger import CommitResult, Key
from olparser.runs.model import DatasetFacts
from olparser.runs.rules import INCOMPLETE, RunStatus, run_key, run_order
from olparser.runs.store import MergeSuperseded, Schedule
from olparser.sql import ParseSql
from olparser.writing import (
    Committed,
    Linked,
    Resolver,
    RunWrite,
    Uploader,
    carry_out,
    delete_orphans,
    upload_linked,
    wait_for_deletions,
    write_plans,
)

log = logging.getLogger(__name__)

LOCK_STRIPES = 64
MAX_REBUILDS = 5
MAX_MERGE_ATTEMPTS = 20  # an event handled again because another writer merged the run first (MergeSuperseded)
DUE_RETRY_SECONDS = 60.0
MAX_DUE_ATTEMPTS = 5
TAKE_OVER_ROWS = 200  # history rows read per output when a notebook process looks for its session-specific forms
TAKE_OVER_DAYS = 366  # how far back (run starts) it looks: beyond the run state's lifetime, whose runs it rewrites


@dataclass(frozen=True)
class WritePolicy:
    """When runs are written. `max_datasets`: inputs (and outputs) kept per run (MAX_DATASETS_PER_RUN)."""

    incomplete_run_seconds: float = 3600.0
    environment_wait_seconds: float = 60.0
    max_datasets: int | None = 500

    @classmethod
    def from_settings(cls, settings: Any) -> "WritePolicy":
        return cls(
            incomplete_run_seconds=settings.incomplete_run_seconds,
            environment_wait_seconds=settings.databricks_environment_wait_seconds,
            max_datasets=settings.max_datasets_per_run,
        )

    def complete(self) -> "WritePolicy":
        """The policy when every event of every run is there (a backfill): nothing left to hold a run for."""
        return replace(self, environment_wait_seconds=0.0)


@dataclass(frozen=True)
class LineageOutcome:
    """What processing one event did.

    `event_type` is the event's own type, `run_state` the run's state after merging it. `status`: written | unchanged
    (the catalog already has this plan) | waiting (run not finished) | held (waiting for the Databricks environment
    facet) | skipped (FAIL/ABORT) | superseded (a newer run of the same code already wrote every process).
    `superseded` counts processes left alone, `deleted` entities removed because no run uses them any more."""

    run_id: str | None
    event_type: str | None
    status: str
    entities: int = 0
    unmatched: int = 0
    catalog_calls: int = 0
    superseded: int = 0
    deleted: int = 0
    run_state: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "runId": self.run_id,
            "eventType": self.event_type,
            "runState": self.run_state,
            "status": self.status,
            "entities": self.entities,
            "unmatched": self.unmatched,
            "catalogCalls": self.catalog_calls,
            "superseded": self.superseded,
            "deleted": self.deleted,
        }


@dataclass(frozen=True)
class DueReport:
    """What one timer tick did: runs written (INCOMPLETE or after the environment wait), failed, deletions retried,
    run states purged, runs purged from the history (RUN_HISTORY_DAYS); and the messages waiting in the poison
    queue (the timer warns while there are any)."""

    written: int = 0
    failed: int = 0
    deletes_retried: int = 0
    purged: int = 0
    outcomes: tuple[LineageOutcome, ...] = field(default_factory=tuple)
    history_purged: int = 0
    poison_waiting: int = 0

    @property
    def did_something(self) -> bool:
        """Whether the tick wrote, failed, retried or purged anything (the timer logs at INFO only then)."""
        return any((self.written, self.failed, self.deletes_retried, self.purged, self.history_purged))

    def to_json(self) -> dict[str, Any]:
        return {
            "written": self.written,
            "failed": self.failed,
            "deletesRetried": self.deletes_retried,
            "purged": self.purged,
            "historyPurged": self.history_purged,
        }


class Decision(StrEnum):
    """What to do with a run after merging an event: write it, wait for its end (the timer writes it as INCOMPLETE
    later), hold it for its Databricks environment facet, or skip it (FAIL/ABORT without lineage_on_failure)."""

    WRITE = "write"
    WAIT = "wait"
    HOLD = "hold"
    SKIP = "skip"


def decide(run: RunSnapshot, policy: WritePolicy, options: LineageOptions) -> Decision:
    """The one write/wait/hold/skip rule, for the runner and the Spark paths (which pass `policy.complete()`)."""
    if run.is_static:
        return Decision.WRITE
    if not run.is_terminal:
        return Decision.WAIT
    if not should_write_lineage(run, options):
        return Decision.SKIP
    if policy.environment_wait_seconds > 0 and run.outputs and awaits_environment(run, options):
        return Decision.HOLD
    return Decision.WRITE


def apply_lifecycle(
    changes: LifecycleChanges,
    catalog: Any,
    store: RunStateStore,
    resolver: Resolver | None,
    locked: Callable[[Iterable[str]], Any],
    links: dict[Key, Key],
    calls: list[int],
    now: float,
    *,
    reads_catalog: bool = True,
    label: str = "run",
) -> int:
    """What a run that drops or renames tables does to what the connector created (olparser/lineage/lifecycle.py),
    on the live path (`LineageRunner`) and the Spark batch paths (tools/spark/catalog.py) alike: a dropped dataset
    the connector created (a placeholder or Unity Catalog table it owns, or an interim entity) is deleted; a renamed
    one is moved to its new name (`links`: the new name's dataset linked to its scanned asset) — the connector's
    processes that use it point at the new one, and it is deleted (`relink.move_datasets`, the re-link's step).
    Scanned assets are never touched: a dataset linked to one is not the connector's. The run history keeps the old
    names for the old runs. Interim entities and moves need a catalog that reads entities with their relationships
    (`reads_catalog`). Returns how many entities were deleted; `calls` counts the catalog calls."""
    owned = {d.key for d in changes.drops if d.owned}  # placeholders: the connector's types, no one else's process
    interim = store.interim_keys({d.key for d in changes.drops} - owned)
    deleted = 0
    if owned:
        deleted, delete_calls = delete_orphans(store, catalog, tuple(sorted(owned)), resolver)
        calls[0] += delete_calls
    if interim and reads_catalog:
        deleted += drop_datasets(sorted(interim), catalog, store, resolver, calls)
    if owned or interim:
        log.info("%s: %d dropped dataset(s) the connector had created are deleted", label, deleted)
    olds = [old for old, _ in changes.moves]
    created = {d.key for d in olds if d.owned} | store.interim_keys({d.key for d in olds if not d.owned})
    moved = {
        old.key: links.get(new.key, new.key) for old, new in changes.moves if old.key in created and old.key != new.key
    }
    if moved and reads_catalog:
        _, count, _ = move_datasets(moved, catalog, store, resolver, locked, calls, now)
        deleted += count
        log.info("%s: %d renamed dataset(s) moved to their new names", label, len(moved))
    return deleted


class LineagePipeline:
    """The runner: `process` (the queue trigger) folds an event into its run and writes the run when it is due;
    `write_due` (the timer) writes the runs whose wait is over and retries deletions. The catalog write is the one
    write procedure's (olparser/writing.py); the store, uploader, resolver and history are passed in."""

    def __init__(
        self,
        store: RunStateStore,
        engine: MappingEngine,
        options: LineageOptions,
        uploader: Uploader,
        policy: WritePolicy = WritePolicy(),
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        resolver: Resolver | None = None,
        history: RunHistoryStore | None = None,
        parse_sql: ParseSql | None = None,
    ) -> None:
        self._store = store
        self._history = history
        self._engine = engine
        self._options = options
        self._uploader = uploader
        self._resolver = resolver
        self._policy = policy
        self._clock = clock
        self._sleep = sleep
        self._parse_sql = parse_sql  # column lineage from a run's `sql` facet (None: not derived)
        self._run_locks = tuple(threading.Lock() for _ in range(LOCK_STRIPES))
        self._process_locks = tuple(threading.Lock() for _ in range(LOCK_STRIPES))
        self._unmatched_reported = ReportedOnce()  # the "no mapping rule" line: once per run (and set of datasets)
        self._taken_over = ReportedOnce()  # stable notebook processes whose session-specific forms were looked for

    # --- the queue trigger -------------------------------------------------------------------------------------
    def process(self, event: dict[str, Any], *, now: float | None = None, redelivered: bool = False) -> LineageOutcome:
        """Fold the event into its run and write the run's lineage when there is something new to write.

        `redelivered`: the queue delivers this message again (its dequeue count is above 1), so an earlier attempt
        may have died between its upload and its commit. That upload may have landed after another writer committed
        the run's current plan, leaving the catalog older than the plan the store records: the run is written again
        even when its fingerprint says unchanged.

        Raises what the uploader raises (CatalogUnavailable, CatalogRejected): the caller's queue retries, and after
        its last attempt the message goes to the poison queue, from which `ol2purview requeue` brings it back.
        """
        now = self._clock() if now is None else now
        event_type = event.get("eventType") if isinstance(event.get("eventType"), str) else None
        key = run_key(event)
        if is_static_event(event):
            with self._locked(key), self._store.folded_reads(key):
                run = snapshot_from_static(event, max_datasets=self._policy.max_datasets)
                return self._write(key, run, None, run.event_type, now, event_type, rewrite=redelivered)
        run_id = key
        for attempt in range(MAX_MERGE_ATTEMPTS):
            try:
                with self._locked(run_id):
                    with self._store.folded_reads(run_id):
                        run, version = self._store.merge_versioned(
                            event,
                            now=now,
                            max_datasets=self._policy.max_datasets,
                            schedule=lambda merged: self._waiting(merged, now),
                        )
                        readers = self._record_temporary(run_id, run, now) | record_passed_orchestration(
                            self._store, run_id, run, now
                        )  # an application run's orchestrator, for its SQL jobs
                        outcome = self._decide(run_id, run, version, now, event_type, rewrite=redelivered)
                break
            except MergeSuperseded:  # another writer merged first: the event again, from the run's row as it is
                if attempt == MAX_MERGE_ATTEMPTS - 1:
                    raise
                log.info("run %s changed before this event's merge was written: handling the event again", run_id)
        self._rewrite_readers(readers, now)  # outside this run's lock: a reader's lock may share its stripe
        if outcome.status in (RunStatus.WRITTEN, RunStatus.UNCHANGED, RunStatus.SUPERSEDED):
            outcome = self._take_over(run_id, run, outcome, now)
        return outcome

    # --- the timer ---------------------------------------------------------------------------------------------
    def write_due(self, *, now: float | None = None, limit: int = 200) -> DueReport:
        """Write the runs whose time has come (INCOMPLETE runs, held Databricks runs) and retry deletions that did
        not finish. A failed run is tried again later, at most MAX_DUE_ATTEMPTS times."""
        now = self._clock() if now is None else now
        outcomes: list[LineageOutcome] = []
        failed = 0
        for key in self._store.due_runs(now, limit):
            with self._locked(key):
                try:
                    outcome = self._write_due_run(key, now)
                except Exception as exc:  # the next tick tries again; a run never blocks the others
                    failed += 1
                    attempts = self._store.postpone(key, now + DUE_RETRY_SECONDS * 2**failed)
                    log.warning(
                        "timer: run %s could not be written (attempt %d of %d): %s",
                        key,
                        attempts,
                        MAX_DUE_ATTEMPTS,
                        type(exc).__name__,
                    )
                    if attempts >= MAX_DUE_ATTEMPTS:
                        log.error("timer: run %s given up after %d attempts", key, attempts)
                        self._store.schedule(key, None)
                    continue
            if outcome is not None:
                outcomes.append(outcome)
        retried = self._retry_deletes(now)
        purged = self._store.purge_expired(now)
        history_purged = self._history.purge(now) if self._history is not None else 0
        written = sum(1 for o in outcomes if o.status == RunStatus.WRITTEN)
        return DueReport(
            written=written,
            failed=failed,
            deletes_retried=retried,
            purged=purged,
            outcomes=tuple(outcomes),
            history_purged=history_purged,
        )

    def _write_due_run(self, key: str, now: float) -> LineageOutcome | None:
        with self._store.folded_reads(key):
            return self._write_due_run_folded(key, now)

    def _write_due_run_folded(self, key: str, now: float) -> LineageOutcome | None:
        self._carry_out_pending(key, now)  # a commit's intentions that a crash left (the timer's sweep)
        run, version = self._store.get_versioned(key, now=now)
        if run is None:
            self._store.schedule(key, None)
            return None
        decision = decide(run, self._policy.complete(), self._options)  # the hold, if any, is over
        if decision is Decision.SKIP:
            self._store.schedule(key, None)
            self._record_unwritten(key, run, now)
            return None
        if decision is Decision.WRITE:
            return self._write(key, run, version, run.event_type, now, None)
        if not (run.inputs or run.outputs):
            self._store.schedule(key, None)
            return None
        return self._write(key, run, version, INCOMPLETE, now, None)

    def _retry_deletes(self, now: float) -> int:
        keys = self._store.abandoned_deletes(now, limit=500)
        if not keys:
            return 0
        try:
            self._uploader.delete(keys)
        except Exception as exc:
            log.warning("timer: %d deletions failed again: %s", len(keys), type(exc).__name__)
            return 0
        self._store.finish_deletes(keys)
        return len(keys)

    # --- deciding and writing ----------------------------------------------------------------------------------
    def _waiting(self, run: RunSnapshot, now: float) -> Schedule | None:
        """When the timer should look at a run that waits (for more events, or for its environment), saved with
        the merge that made it wait; None: the decision is another (it schedules, or not, itself)."""
        policy = self._policy
        decision = decide(run, policy, self._options)
        if decision is Decision.WAIT and (run.inputs or run.outputs) and policy.incomplete_run_seconds > 0:
            return Schedule(now + policy.incomplete_run_seconds)
        if decision is Decision.HOLD:
            return Schedule(now + policy.environment_wait_seconds, keep_earlier=True)
        return None

    def _decide(
        self, run_id: str, run: RunSnapshot, version: int, now: float, event_type: str | None, *, rewrite: bool = False
    ) -> LineageOutcome:
        """What to do with the run after a merge (which scheduled it if it waits: `_waiting`)."""
        policy = self._policy
        decision = decide(run, policy, self._options)
        if decision is Decision.WAIT:
            return self._outcome(run, event_type, RunStatus.WAITING)
        if decision is Decision.SKIP:
            if self._store.written_fingerprint(run_id, now=now) is not None:  # an INCOMPLETE write is taken back
                return self._write(run_id, run, version, run.event_type, now, event_type, empty=True, rewrite=rewrite)
            self._store.schedule(run_id, None)
            calls = self._record_unwritten(run_id, run, now)
            return self._outcome(run, event_type, RunStatus.SKIPPED, calls=calls)
        if decision is Decision.HOLD:
            return self._outcome(run, event_type, RunStatus.HELD)
        return self._write(run_id, run, version, run.event_type, now, event_type, rewrite=rewrite)

    def _write(
        self,
        key: str,
        run: RunSnapshot,
        version: int | None,
        status: str,
        now: float,
        event_type: str | None,
        *,
        empty: bool = False,
        rewrite: bool = False,
    ) -> LineageOutcome:
        """Write the run's plan (`empty`: take back what it wrote), unless the store says this very plan is written;
        `rewrite` writes it even then (a redelivered message: the catalog may be older than the store says). The
        catalog work is the one write procedure's (olparser/writing.py `write_plans`, `carry_out`)."""
        uploaded: set[Key] = set()
        changed: set[str] = set()
        calls = self._carry_out_pending(key, now)[1]  # what an earlier commit of this run decided and a crash left
        stream = None if empty else stream_run_id(run, self._options)  # a micro-batch: its window's plan
        for _ in range(MAX_REBUILDS):
            linked = self.linked_plan(run, status)  # resolved even when empty: the history records the names written
            calls += linked.calls
            changed |= self._record(run, linked.plan, status, now)
            plan = LineagePlan() if empty else self._counted(linked.plan, recorded=run.run_id)
            if not (uploaded or rewrite) and self._written_already(key, stream, plan, now):
                self._store.schedule(key, None)
                calls += self._rewrite_changed(changed, key, now)
                self._history_rewritten(run, changed)
                return self._outcome(run, event_type, RunStatus.UNCHANGED, plan, calls=calls)
            written = write_plans(
                self._store,
                self._uploader,
                self._resolver,
                [
                    RunWrite(
                        key, plan if empty else linked.plan, run_order(key, run), version, dangling=frozenset(uploaded)
                    )
                ],
                linked.resolution,
                now=now,
                wait=self._wait_for_deletions,
                locked=self._locked_processes,
                count=None if empty else self._counted,
            )
            if written is None:  # a linked scanned asset vanished: resolve the plan again
                continue
            (done,), calls = written.committed, calls + written.calls
            uploaded |= set(done.run.owned_keys())
            if done.result.stale:
                fresh, version = self._store.get_versioned(key, now=now)
                if fresh is None:
                    break
                run = fresh
                log.info("run %s changed while it was being written: writing it again", key)
                continue
            return self._written(key, run, event_type, done, stream, changed, calls, now, None if empty else linked)
        raise RuntimeError(f"run {key} kept changing while it was being written")

    def _written_already(self, key: str, stream: str | None, plan: LineagePlan, now: float) -> bool:
        """Whether the store says this very plan is what the run (or its streaming window) last wrote."""
        fingerprint = plan_fingerprint(plan)
        return self._store.written_fingerprint(key, now=now) == fingerprint or self._window_written(
            stream, plan, fingerprint, now
        )

    def _written(
        self,
        key: str,
        run: RunSnapshot,
        event_type: str | None,
        done: Committed,
        stream: str | None,
        changed: set[str],
        calls: int,
        now: float,
        linked: Linked | None,
    ) -> LineageOutcome:
        """After the commit: the catalog work it left, the window's record, the history's rewrites, the log lines,
        and the tables it (or a run whose events came first) drops or renames (`linked`: the plan written; None when
        the run took back what it wrote)."""
        plan, result, superseded = done.plan, done.result, done.superseded
        processes = plan.process_names()
        deleted, catalog_calls = self._settle(key, result, now)
        if stream is not None and stream != key:  # what the window's batches now write: the next one skips it
            self._settle(
                stream, self._store.commit(stream, (), version=None, fingerprint=done.fingerprint, now=now), now
            )
        calls += catalog_calls
        calls += self._rewrite_changed(
            changed - (set(processes) - superseded) - {n for n, _ in result.restores}, key, now
        )
        self._history_rewritten(run, changed)  # every process it changed is rewritten: uploaded, restored or refreshed
        self._log_plan(key, plan)
        status_word = RunStatus.SUPERSEDED if processes and len(superseded) == len(processes) else RunStatus.WRITTEN
        if linked is not None and done.run.order is not None:
            lifecycle_calls, lifecycle_deleted = self._apply_lifecycle(done.run.order, run, linked, now)
            calls, deleted = calls + lifecycle_calls, deleted + lifecycle_deleted
        return self._outcome(
            run, event_type, status_word, plan, calls=calls, superseded=len(superseded), deleted=deleted
        )

    def _log_plan(self, key: str, plan: LineagePlan) -> None:
        """What the plan could not write as asked: said once per run (and set of datasets, or note)."""
        if plan.unmatched and self._unmatched_reported.first_time(key, plan.unmatched):
            log.info(
                "run %s: no mapping rule for %d dataset(s), written as placeholders (qn-tester --explain says why): %s",
                key,
                len(plan.unmatched),
                unmatched_text(plan.unmatched),
            )
        for note in plan.notes:  # an ownership name without an object id: said once per process and names
            if note.startswith(UNRESOLVED_NOTE) and self._unmatched_reported.first_time("contacts:" + note, True):
                log.warning("%s; they are not written as contacts", note)
        if plan.notes and any("MAX_" in note for note in plan.notes):
            log.warning("run %s: %s", key, "; ".join(n for n in plan.notes if "MAX_" in n))

    def linked_plan(self, run: RunSnapshot, status: str) -> Linked:
        """build → resolve → link: the plan of a run as it will be written."""
        plan = build_lineage(
            run,
            self._engine,
            self._options,
            status=status,
            parse_sql=self._parse_sql,
            upstream=self._upstream(run),
            inherited=look_up_orchestration(self._store, run, self._clock()),
        )
        extra = plan.resolution_extra()
        if self._resolver is None or not (plan.datasets or extra):
            return Linked(plan)
        resolution = self._resolver.resolve(plan.datasets, extra=extra)
        if resolution.taken_over:
            self._store.forget_interim(resolution.taken_over)
        return Linked(link_plan(plan, resolution.links, resolution.interim), resolution)

    def _upload_linked(self, linked: Linked) -> UploadReport | None:
        """Upload through the write procedure's step (`writing.upload_linked`); None: resolve the plan again."""
        return upload_linked(self._store, self._uploader, self._resolver, linked)

    def _carry_out_pending(self, key: str, now: float) -> tuple[int, int]:
        """Carry out the intentions an earlier commit of the run recorded and a crash left undone."""
        result = self._store.settle(key, now=now)
        if result is None:
            return 0, 0
        log.info(
            "run %s: carrying out what its last commit decided (%d deletions, %d restores)",
            key,
            len(result.orphans),
            len(result.restores),
        )
        return self._settle(key, result, now)

    def _window_written(self, stream: str | None, plan: LineagePlan, fingerprint: str, now: float) -> bool:
        """True when `stream` (a micro-batch's window, olparser.lineage.streaming) last wrote this very plan: every
        batch of a window writes the same plan, so a batch that changes nothing costs no catalog write. The window's
        record in the run state holds only that fingerprint (it claims nothing: the batches that wrote claim)."""
        return (
            stream is not None
            and bool(plan.entities)
            and self._store.written_fingerprint(stream, now=now) == fingerprint
        )

    def _settle(self, key: str, result: CommitResult, now: float) -> tuple[int, int]:
        """The catalog work a commit left (`writing.carry_out`): delete the orphans, restore the processes, then
        tell the store it is done. Returns the entities deleted and the catalog calls."""
        return carry_out(
            self._store,
            self._uploader,
            self._resolver,
            [(key, result)],
            lambda process, writer: self._restore(process, writer, now),
        )

    def _restore(self, process: str, writer: str | None, now: float, *, unless: str | None = None) -> int:
        """Write `process` again as its newest writer wrote it (`writer`, unless a newer one committed meanwhile;
        nothing when it has none, or when it is run `unless`): the run that wrote it last no longer has it, or its
        run history changed. Returns the catalog calls it cost."""
        with self._locked_processes([process]):  # the newest writer and the counts, as they are under the lock
            newest = self._store.process_writers([process]).get(process)
            writer = newest[1] if newest is not None else writer
            if writer is None or writer == unless:
                return 0
            run, _ = self._store.get_versioned(writer, now=now)
            if run is None:
                log.info("process %s: run %s, which still has it, is no longer known; left as it is", process, writer)
                return 0
            calls = 0
            for _ in range(2):  # once more if a linked asset vanished meanwhile (resolved again)
                linked = self.linked_plan(run, run.event_type if run.is_terminal else INCOMPLETE)
                calls += linked.calls
                others = set(linked.plan.process_names()) - {process}
                if len(others) == len(linked.plan.process_names()):
                    return calls
                report = self._upload_linked(
                    Linked(self._counted(linked.plan).without_processes(others), linked.resolution)
                )
                if report is not None:
                    break
            else:
                log.warning(
                    "process %s: its datasets kept vanishing while it was written again; left as it is", process
                )
                return calls
        log.info("process %s: written again from run %s, its newest writer", process, writer)
        return calls + report.calls

    # --- temporary datasets ------------------------------------------------------------------------------------
    def _record_temporary(self, key: str, run: RunSnapshot, now: float) -> frozenset[str]:
        """Remember what the run passes on through the temporary datasets it writes (olparser/lineage/edges.py);
        the runs that read them, to be written again."""
        scope = temporary_scope(run)
        writes = temporary_writes(run) if scope is not None else {}
        if scope is None or not writes:
            return frozenset()
        return self._store.record_temporary(
            scope, key, {name: passed_on_to_bytes(datasets) for name, datasets in writes.items()}, now=now
        )

    def _upstream(self, run: RunSnapshot) -> dict[tuple[str, str], tuple[DatasetFacts, ...]]:
        """What the run's temporary inputs stand for: their writers' inputs, as far as the store knows them (the run
        is noted as their reader, so that a writer that comes later writes it again)."""
        scope, run_id = temporary_scope(run), run.run_id
        if scope is None or run_id is None:
            return {}

        def lookup(names: Iterable[tuple[str, str]]) -> dict[tuple[str, str], tuple[DatasetFacts, ...]]:
            found = self._store.temporary_sources(scope, list(names), run_id, now=self._clock())
            return {
                name: tuple(d for data in passed for d in passed_on_from_bytes(data)) for name, passed in found.items()
            }

        return upstream_inputs(run, lookup)

    def _rewrite_readers(self, readers: frozenset[str], now: float) -> None:
        """A writer of temporary datasets came: the runs that read them and were written already are written again
        (their plans now list what it read). Order-independence: a reader handled first wrote without it."""
        for reader in sorted(readers):
            with self._locked(reader):
                if self._store.written_fingerprint(reader, now=now) is None:
                    continue  # not written yet: it looks the writer up when it is
                run, version = self._store.get_versioned(reader, now=now)
                if run is None or decide(run, self._policy.complete(), self._options) is Decision.SKIP:
                    continue
                self._write(reader, run, version, run.event_type if run.is_terminal else INCOMPLETE, now, None)

    # --- tables dropped and renamed -----------------------------------------------------------------------------
    def _apply_lifecycle(
        self, order: tuple[float, str], run: RunSnapshot, linked: Linked, now: float
    ) -> tuple[int, int]:
        """After a run is written: the store remembers the run's drops and renames and the connector's datasets its
        plan wrote (olparser/lineage/lifecycle.py, `LifecycleMark`), and what then stands on those keys is applied
        — the run's own changes unless a newer run wrote the name again, and a change of a newer run whose events
        came first, over what this older run just wrote. A dropped dataset the connector created (a placeholder or
        Unity Catalog table it owns, or an interim entity) is deleted; a renamed one is moved to its new name — the
        connector's processes that use it point at the new one, and it is deleted (`relink.move_datasets`, the
        re-link's step). Scanned assets are never touched. Returns the catalog calls and the entities deleted."""
        changes = lifecycle_changes(run, lambda r: dataset_resolver(r, self._engine, self._options))
        owned = set(linked.plan.owned_keys())
        written = [d.default for d in linked.plan.datasets if d.default in owned]
        links = linked.resolution.links if linked.resolution is not None else {}
        if not changes and not written:
            return 0, 0
        todo = standing(self._store.record_lifecycle(lifecycle_marks(order, written, changes, links), now=now))
        if not todo:
            return 0, 0
        calls = [0]
        deleted = apply_lifecycle(
            todo,
            self._uploader,
            self._store,
            self._resolver,
            self._locked_processes,
            {},
            calls,
            now,
            reads_catalog=self._reads_catalog(),
            label=f"run {run.run_id}",
        )
        return calls[0], deleted

    def _reads_catalog(self) -> bool:
        """Whether the uploader reads entities with their relationships (CatalogUploader does)."""
        return all(hasattr(self._uploader, name) for name in ("read", "read_guids"))

    # --- take-over of session-specific identities ----------------------------------------------------------------
    def _take_over(self, key: str, run: RunSnapshot, outcome: LineageOutcome, now: float) -> LineageOutcome:
        """A notebook run (Fabric, Synapse) written under its stable identity takes over the processes earlier
        versions wrote for the same code under a session-specific owner (olparser.lineage.identity): the run
        history names the runs that wrote the same output through such a process, and each of them is written
        again — its plan now has the stable process, so its commit releases the session-specific process and owner
        and the ledger deletes them once no run uses them, as a re-map does. Needs the run history, and the run
        state of those runs (RUN_STATE_TTL_SECONDS); each stable process is looked up once per worker."""
        if self._history is None:
            return outcome
        identity = job_identity(run.job_namespace, run.job_name, run.run_facets)
        if identity.legacy_app_key is None:
            return outcome
        record = self._history.run(history_run_id(run, self._options))
        if record is None:
            return outcome
        calls = deleted = 0
        window = Window(now - TAKE_OVER_DAYS * 86400.0, now + 1.0)
        for process in record.processes:
            if self._taken_over.seen(process.qualified_name):
                continue
            writes = [
                (access.process, access.run.run_id)
                for output in process.outputs
                for access in self._history.dataset_accesses(
                    output.qualified_name, window, TAKE_OVER_ROWS, access=WRITE
                )
            ]
            legacy = legacy_writers(process.qualified_name, record.facts.owner, run.job_namespace, identity, writes)
            for legacy_key in legacy:
                done = self._write_again(legacy_key, now)
                calls, deleted = calls + done.catalog_calls, deleted + done.deleted
            if legacy:
                log.info(
                    "process %s: took over the session-specific processes of %d earlier run(s)",
                    process.qualified_name,
                    len(legacy),
                )
            self._taken_over.first_time(process.qualified_name, True)
        return replace(outcome, catalog_calls=outcome.catalog_calls + calls, deleted=outcome.deleted + deleted)

    def _write_again(self, key: str, now: float) -> LineageOutcome:
        """Write a finished run again from its state (its plan built anew)."""
        with self._locked(key):
            run, version = self._store.get_versioned(key, now=now)
            if run is None or decide(run, self._policy.complete(), self._options) is not Decision.WRITE:
                log.info("run %s is no longer known (or not finished): its session-specific processes stay", key)
                return LineageOutcome(key, None, RunStatus.SKIPPED)
            return self._write(key, run, version, run.event_type, now, None)

    # --- the run history ---------------------------------------------------------------------------------------
    def _record(self, run: RunSnapshot, plan: LineagePlan, status: str, now: float) -> frozenset[str]:
        """Record the run in the history (idempotent); the processes whose history it changed."""
        if self._history is None or run.is_static:
            return frozenset()
        record = history_record(run, plan, self._options, status=status)
        return self._history.record(record, now=now) if record is not None else frozenset()

    def _history_rewritten(self, run: RunSnapshot, changed: Iterable[str]) -> None:
        """The processes whose history this run changed are rewritten in the catalog: the history stops answering
        them (until then a redelivery of the message finds them again, even when its record is unchanged). The
        record's key is the run's, or its streaming window's."""
        if self._history is not None and changed:
            self._history.refreshed(history_run_id(run, self._options), changed)

    def _counted(self, plan: LineagePlan, *, recorded: str | None = None) -> LineagePlan:
        """The plan with its processes' runCount and firstRunTime from the history (`recorded`: the run just
        recorded, when the counts as its record left them will do)."""
        names = plan.process_names()
        if self._history is None or not names:
            return plan
        return with_run_history(plan, self._history.process_summaries(names, recorded=recorded))

    def _record_unwritten(self, key: str, run: RunSnapshot, now: float) -> int:
        """A run that writes nothing (FAIL, ABORT): its plan is built for the history only."""
        if self._history is None:
            return 0
        linked = self.linked_plan(run, run.event_type)  # resolved, so that the history records the names written
        changed = self._record(run, linked.plan, run.event_type, now)
        calls = linked.calls + self._rewrite_changed(changed, key, now)
        self._history_rewritten(run, changed)
        return calls

    def _rewrite_changed(self, processes: Iterable[str], key: str, now: float) -> int:
        """Processes whose history this run changed without writing them: written again from their newest writer,
        so that their runCount and firstRunTime are the history's. Returns the catalog calls it cost."""
        return sum(self._restore(name, None, now, unless=key) for name in sorted(processes))

    def _wait_for_deletions(self, contested: frozenset[Key]) -> None:
        wait_for_deletions(self._store, contested, self._clock, self._sleep)

    # --- helpers -----------------------------------------------------------------------------------------------
    def _locked(self, key: str) -> threading.Lock:
        return self._run_locks[zlib.crc32(key.encode("utf-8")) % LOCK_STRIPES]

    def locked_processes(self, names: Iterable[str]) -> ExitStack:
        """The locks that serialise writes of these processes in this process (the re-link timer takes them too)."""
        return self._locked_processes(names)

    def _locked_processes(self, names: Iterable[str]) -> ExitStack:
        stack = ExitStack()
        for stripe in sorted({zlib.crc32(name.encode("utf-8")) % LOCK_STRIPES for name in names}):
            stack.enter_context(self._process_locks[stripe])
        return stack

    @staticmethod
    def _outcome(
        run: RunSnapshot,
        event_type: str | None,
        status: str,
        plan: LineagePlan | None = None,
        calls: int = 0,
        superseded: int = 0,
        deleted: int = 0,
    ) -> LineageOutcome:
        plan = plan or LineagePlan()
        return LineageOutcome(
            run.run_id,
            event_type,
            status,
            entities=len(plan.entities) + len(plan.external_datasets),
            unmatched=len(plan.unmatched),
            catalog_calls=calls,
            superseded=superseded,
            deleted=deleted,
            run_state=run.event_type,
        )


class ReportedOnce:
    """Which runs' unmatched datasets this process has logged, so that a run written again (a later event, the
    timer) does not repeat the line unless its set of unmatched datasets changed. Bounded: the oldest are forgotten."""

    def __init__(self, capacity: int = 4096) -> None:
        self._seen: dict[str, object] = {}
        self._capacity = capacity
        self._lock = threading.Lock()

    def seen(self, key: str) -> bool:
        with self._lock:
            return key in self._seen

    def first_time(self, key: str, value: object) -> bool:
        """True (and remembered) unless `key` was last reported with this same `value`."""
        with self._lock:
            if self._seen.get(key) == value:
                return False
            self._seen.pop(key, None)
            self._seen[key] = value  # dicts keep insertion order: the first key is the oldest
            if len(self._seen) > self._capacity:
                del self._seen[next(iter(self._seen))]
            return True
