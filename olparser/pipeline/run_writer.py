"""Writing one run (`RunWriter`, which the runner has, over its `CatalogWrite`): build → resolve → link its plan, write it through the one write
procedure (olparser/pipeline/writing.py `write_plans`, `finish_catalog_work`) — again when the run changed meanwhile or a
linked asset vanished —, then the catalog work the commit left, the run history's rewrites, the log lines and the
tables the run drops or renames. When a run is written is the runner's (olparser/pipeline/runner.py)."""

from __future__ import annotations

import logging
from typing import Iterable

from olparser.catalog_rules import REBUILD, RETRIES
from olparser.history import history_record
from olparser.history.records import history_run_id
from olparser.lineage import LineageOptions, LineagePlan, build_lineage, plan_fingerprint
from olparser.lineage.link import link_plan
from olparser.lineage.streaming import stream_run_id
from olparser.runs import RunSession, RunSnapshot
from olparser.runs.ledger import CommitResult, Key
from olparser.runs.rules import INCOMPLETE, RunStatus, run_order
from olparser.sql import ParseSql

from .accelerator import Takeovers, retire, written_pairs
from .inherited_orchestrators import look_up_orchestration
from .lifecycle import apply_run_lifecycle
from .policy import LineageOutcome, WritePolicy
from .ports import RuleSource
from .reporting import ReportedOnce, log_plan
from .temporary import upstream
from .writing import (
    BatchWritten,
    CatalogWrite,
    Committed,
    Linked,
    RunWrite,
    write_plans,
)

log = logging.getLogger(__name__)

MAX_REBUILDS = RETRIES[REBUILD].attempts  # a write's plan built again (olparser/catalog_rules.py)


class RunWriter:
    """Writes a run's plan when asked (`write`), through the `CatalogWrite` it is given (the run-state store,
    uploader, resolver, history and process locks); the rules, options and policy are passed in. When a run is
    written is the runner's (`LineagePipeline`), which has one."""

    def __init__(
        self,
        catalog: CatalogWrite,
        engine: RuleSource,
        options: LineageOptions,
        policy: WritePolicy = WritePolicy(),
        *,
        parse_sql: ParseSql | None = None,
        takeovers: Takeovers | None = None,
    ) -> None:
        self._catalog = catalog
        self._store = catalog.store
        self._uploader = catalog.uploader
        self._resolver = catalog.resolver
        self._history = catalog.history
        self._clock = catalog.clock
        self._takeovers = takeovers  # the accelerator's processes a run's own may replace (pipeline/accelerator.py)
        self._engine = engine
        self._options = options
        self._policy = policy
        self._parse_sql = parse_sql  # column lineage from a run's `sql` facet (None: not derived)
        self._unmatched_reported = ReportedOnce()  # the "no mapping rule" line: once per run (and set of datasets)

    # --- writing ----------------------------------------------------------------------------------------------
    def write(
        self,
        key: str,
        run: RunSnapshot,
        version: int | None,
        status: str,
        now: float,
        event_type: str | None,
        *,
        session: RunSession,
        empty: bool = False,
        rewrite: bool = False,
    ) -> LineageOutcome:
        """Write the run's plan (`empty`: take back what it wrote) through the one write procedure, unless the store
        says this very plan is written; `rewrite`: even then (a redelivery: the catalog may be older than the store).
        `session`: the run's handling (`RunStateStore.session`), or a session of this write alone."""
        uploaded, changed = set[Key](), set[str]()  # the keys this write uploaded; the processes its history changed
        calls = self.resume_interrupted_commit(key, now)[1]  # what a crash left of the run's last commit
        stream = None if empty else stream_run_id(run, self._options)  # a micro-batch: its window's plan
        for _ in range(MAX_REBUILDS):
            linked = self.linked_plan(run, status)  # resolved even when empty: the history records the names written
            calls += linked.calls
            recorded_changes, recorded = self._record(run, linked.plan, status, now)
            changed |= recorded_changes
            plan = LineagePlan() if empty else self._catalog.counted(linked.plan, recorded=recorded)
            if not (uploaded or rewrite) and self._written_already(key, stream, plan, now):
                return self._unchanged(key, run, event_type, plan, changed, calls, now)
            written = self._attempt_write(
                key, run, version, plan, linked, uploaded, now, session=session, empty=empty, recorded=recorded
            )
            if written is None:  # a linked scanned asset vanished: resolve the plan again
                continue
            (done,), calls = written.committed, calls + written.calls
            uploaded |= set(done.run.owned_keys())
            if not done.result.stale:
                return self._after_commit(
                    key, run, event_type, done, stream, changed, calls, now, None if empty else linked, rewrite
                )
            fresh, version = self._store.get_versioned(key, now=now)
            if fresh is None:
                break
            run = fresh
            log.info("run %s changed while it was being written: writing it again", key)
        raise RuntimeError(f"run {key} kept changing while it was being written")

    def _attempt_write(
        self,
        key: str,
        run: RunSnapshot,
        version: int | None,
        plan: LineagePlan,
        linked: Linked,
        uploaded: set[Key],
        now: float,
        *,
        session: RunSession,
        empty: bool,
        recorded: str | None,
    ) -> BatchWritten | None:
        """One attempt of the write procedure for the run: its linked plan, counted (`empty`: the empty `plan`, which
        takes back what the run wrote; `recorded`: the history record this thread just wrote, whose counts the
        history may answer without reading); `uploaded`: what its earlier attempts uploaded. None: resolve again."""
        write = RunWrite(
            key, plan if empty else linked.plan, run_order(key, run), version, dangling=frozenset(uploaded)
        )
        return write_plans(
            self._catalog, [write], linked.resolution, now=now, session=session, count=not empty, recorded=recorded
        )

    def _unchanged(
        self,
        key: str,
        run: RunSnapshot,
        event_type: str | None,
        plan: LineagePlan,
        changed: set[str],
        calls: int,
        now: float,
    ) -> LineageOutcome:
        """The store says this very plan is written: nothing to upload; the history's changes are rewritten."""
        self._store.schedule(key, None)
        calls += self._rewrite_changed(changed, key, now)
        calls += self._history_rewritten(key, run, changed, now)
        return outcome(run, event_type, RunStatus.UNCHANGED, plan, calls=calls)

    def _written_already(self, key: str, stream: str | None, plan: LineagePlan, now: float) -> bool:
        """Whether the store says this very plan is what the run (or its streaming window) last wrote."""
        fingerprint = plan_fingerprint(plan)
        return self._store.written_fingerprint(key, now=now) == fingerprint or self._window_written(
            stream, plan, fingerprint, now
        )

    def _after_commit(
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
        redelivered: bool = False,
    ) -> LineageOutcome:
        """After the commit: the catalog work it left, the window's record, the history's rewrites, the log lines,
        and the tables it (or a run whose events came first) drops or renames (`linked`: the plan written; None when
        the run took back what it wrote). `redelivered`: the processes a newer run wrote are written again from it
        too — the worker that died with this message may have uploaded them over the newer run's just before."""
        plan, result, superseded = done.plan, done.result, done.superseded
        processes = plan.process_names()
        deleted, catalog_calls = self._finish_catalog_work(key, result, now)
        if stream is not None and stream != key:  # what the window's batches now write: the next one skips it
            self._finish_catalog_work(
                stream, self._store.commit(stream, (), version=None, fingerprint=done.fingerprint, now=now), now
            )
        calls += catalog_calls
        again = changed | superseded if redelivered else changed
        calls += self._rewrite_changed(
            again - (set(processes) - superseded) - {n for n, _ in result.restores}, key, now
        )
        calls += self._history_rewritten(key, run, changed, now)  # every process it changed is rewritten
        log_plan(key, plan, self._unmatched_reported)
        status_word = RunStatus.SUPERSEDED if processes and len(superseded) == len(processes) else RunStatus.WRITTEN
        if linked is not None and done.run.order is not None:
            lifecycle_calls, lifecycle_deleted = self._apply_lifecycle(done.run.order, run, linked, now)
            calls, deleted = calls + lifecycle_calls, deleted + lifecycle_deleted
        if linked is not None:
            deleted += self._retire_predecessors(plan, now)
        return outcome(run, event_type, status_word, plan, calls=calls, superseded=len(superseded), deleted=deleted)

    def _retire_predecessors(self, plan: LineagePlan, now: float) -> int:
        """The accelerator's processes taken over that this plan's processes succeed (same owner and output):
        retired now (olparser/pipeline/accelerator.py). Returns the entities deleted."""
        written = written_pairs(plan.entities) if self._takeovers is not None else []
        if not written or self._takeovers is None:
            return 0
        if not self._takeovers.loaded():
            self._takeovers.refresh(self._store.pending_takeovers())
        entries = self._takeovers.matching(written)
        if not entries:
            return 0
        deleted = retire(self._store, self._uploader, self._resolver, entries, now=now)
        self._takeovers.forget(entries)
        return deleted

    def linked_plan(self, run: RunSnapshot, status: str) -> Linked:
        """build → resolve → link: the plan of a run as it will be written."""
        rules = self._engine.snapshot()  # one rule set for the whole plan, whatever a reload does meanwhile
        plan = build_lineage(
            run,
            rules,
            self._options,
            status=status,
            parse_sql=self._parse_sql,
            upstream=upstream(self._store, run, self._clock),
            inherited=look_up_orchestration(self._store, run, self._clock()),
        )
        extra = plan.resolution_extra()
        if self._resolver is None or not (plan.datasets or extra or plan.task):
            return Linked(plan, rules=rules)
        resolution = self._resolver.resolve(plan.datasets, extra=extra, tasks=(plan.task,) if plan.task else ())
        if resolution.taken_over:
            self._store.forget_interim(resolution.taken_over)
        return Linked(link_plan(plan, resolution.links, resolution.interim, resolution.tasks), resolution, rules)

    def resume_interrupted_commit(self, key: str, now: float) -> tuple[int, int]:
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
        return self._finish_catalog_work(key, result, now)

    def _window_written(self, stream: str | None, plan: LineagePlan, fingerprint: str, now: float) -> bool:
        """True when `stream` (a micro-batch's window, olparser.lineage.streaming) last wrote this very plan: every
        batch of a window writes the same plan, so a batch that changes nothing costs no catalog write. The window's
        record in the run state holds only that fingerprint (it claims nothing: the batches that wrote claim)."""
        return (
            stream is not None
            and bool(plan.entities)
            and self._store.written_fingerprint(stream, now=now) == fingerprint
        )

    def _finish_catalog_work(self, key: str, result: CommitResult, now: float) -> tuple[int, int]:
        """The catalog work a commit left: delete the orphans, restore the processes (this writer holds the older
        runs' states), then tell the store it is done. Returns the entities deleted and the catalog calls."""
        deleted, calls = self._catalog.delete_orphans([(key, result)])
        for name, writer in result.restores:
            calls += self._restore(name, writer, now)
        if result.epoch is not None:
            self._store.done(key, result.epoch)
        return deleted, calls

    def _restore(self, process: str, writer: str | None, now: float, *, unless: str | None = None) -> int:
        """Write `process` again as its newest writer wrote it (`writer`, unless a newer one committed meanwhile;
        nothing when it has none, or when it is run `unless`): the run that wrote it last no longer has it, or its
        run history changed. Returns the catalog calls it cost."""
        with self._catalog.locked_processes([process]):  # the newest writer and the counts, as they are under the lock
            newest = self._store.process_writers([process]).get(process)
            writer = newest[1] if newest is not None else writer
            if writer is None or writer == unless:
                return 0
            run, _ = self._store.get_versioned(writer, now=now)
            if run is None:
                log.info("process %s: run %s, which still has it, is no longer known; left as it is", process, writer)
                return 0
            calls = 0
            for _ in range(MAX_REBUILDS):  # again while a linked asset vanished meanwhile (resolved again)
                linked = self.linked_plan(run, run.event_type if run.is_terminal else INCOMPLETE)
                calls += linked.calls
                others = set(linked.plan.process_names()) - {process}
                if len(others) == len(linked.plan.process_names()):
                    return calls
                report = self._catalog.upload_linked(
                    Linked(
                        self._catalog.counted(linked.plan).without_processes(others), linked.resolution, linked.rules
                    )
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

    # --- tables dropped and renamed -----------------------------------------------------------------------------
    def _apply_lifecycle(
        self, order: tuple[float, str], run: RunSnapshot, linked: Linked, now: float
    ) -> tuple[int, int]:
        """The run's drops and renames, and a newer run's over what it wrote (`lifecycle.apply_run_lifecycle`).
        Returns the catalog calls and the entities deleted."""
        return apply_run_lifecycle(
            order,
            run,
            linked,
            now,
            engine=linked.rules or self._engine.snapshot(),
            options=self._options,
            store=self._store,
            uploader=self._uploader,
            resolver=self._resolver,
            locked=self._catalog.locked_processes,
        )

    # --- the run history ---------------------------------------------------------------------------------------
    def _record(
        self, run: RunSnapshot, plan: LineagePlan, status: str, now: float
    ) -> tuple[frozenset[str], str | None]:
        """Record the run in the history (idempotent): the processes whose history it changed, and the record's
        run id (None: nothing recorded)."""
        if self._history is None or run.is_static:
            return frozenset(), None
        record = history_record(run, plan, self._options, status=status)
        if record is None:
            return frozenset(), None
        return self._history.record(record, now=now), record.run_id

    def _history_rewritten(self, key: str, run: RunSnapshot, changed: Iterable[str], now: float) -> int:
        """The processes whose history this run changed are rewritten in the catalog: the history stops answering
        them (until then a redelivery of the message finds them again, even when its record is unchanged). The
        record's key is the run's, or its streaming window's. Processes the history answers back (another record of
        the run replaced this one while it was written: olparser/history/store.py) are rewritten in turn. Returns
        the catalog calls it cost."""
        calls, names = 0, frozenset(changed)
        for _ in range(MAX_REBUILDS):
            if self._history is None or not names:
                break
            names = self._history.refreshed(history_run_id(run, self._options), names)
            # from their newest writer, this run included: what it uploaded was counted before the history changed
            calls += sum(self._restore(name, None, now) for name in sorted(names))
        return calls

    def record_unwritten(self, key: str, run: RunSnapshot, now: float) -> int:
        """A run that writes nothing (FAIL, ABORT): its plan is built for the history only."""
        if self._history is None:
            return 0
        linked = self.linked_plan(run, run.event_type)  # resolved, so that the history records the names written
        changed, _ = self._record(run, linked.plan, run.event_type, now)
        calls = linked.calls + self._rewrite_changed(changed, key, now)
        return calls + self._history_rewritten(key, run, changed, now)

    def _rewrite_changed(self, processes: Iterable[str], key: str, now: float) -> int:
        """Processes whose history this run changed without writing them: written again from their newest writer,
        so that their runCount and firstRunTime are the history's. Returns the catalog calls it cost."""
        return sum(self._restore(name, None, now, unless=key) for name in sorted(processes))


def outcome(
    run: RunSnapshot,
    event_type: str | None,
    status: str,
    plan: LineagePlan | None = None,
    calls: int = 0,
    superseded: int = 0,
    deleted: int = 0,
) -> LineageOutcome:
    """What writing (or not writing) a run did, for the caller's log and report."""
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
