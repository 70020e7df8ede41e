"""The runner (`LineagePipeline`): when a run is written. The queue trigger (`process`) folds an event into its run and
writes the run when it is due; the timer (`write_due`, olparser/pipeline/timer.py) writes the runs whose wait is over;
a writer of temporary datasets has their readers written again, and a notebook run under its stable identity takes
over its session-specific processes (olparser/pipeline/takeover.py). How a run is written: its `RunWriter`
(olparser/pipeline/run_writer.py); the timer and the take-over answer the runs to write, the runner writes them."""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import Any, Callable

from olparser.history import RunHistoryStore
from olparser.lineage import LineageOptions
from olparser.runs import RunSnapshot, RunStateStore, is_static_event, snapshot_from_static
from olparser.runs.rules import INCOMPLETE, RunStatus, run_key
from olparser.runs.store import RunSession, Schedule
from olparser.sql import ParseSql

from . import timer
from .accelerator import Takeovers
from .inherited_orchestrators import record_passed_orchestration
from .policy import Decision, DueReport, LineageOutcome, WritePolicy, decide
from .ports import Resolver, RuleSource, Uploader
from .reporting import ReportedOnce
from .run_writer import MAX_REBUILDS, RunWriter, outcome
from .takeover import session_specific_writers, taken_over
from .temporary import record_temporary
from .writing import CatalogWrite, StripedLocks

log = logging.getLogger(__name__)


class LineagePipeline:
    """The runner: `process` (the queue trigger) folds an event into its run and writes the run when it is due;
    `write_due` (the timer) writes the runs whose wait is over and retries deletions. It has a `RunWriter` (how a run
    is written) over a `CatalogWrite` (olparser/pipeline/writing.py: the store, uploader, resolver, history and
    process locks), the composition root's (`catalog`) or one built from the parts passed in."""

    def __init__(
        self,
        store: RunStateStore,
        engine: RuleSource,
        options: LineageOptions,
        uploader: Uploader,
        policy: WritePolicy = WritePolicy(),
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        resolver: Resolver | None = None,
        history: RunHistoryStore | None = None,
        parse_sql: ParseSql | None = None,
        takeovers: Takeovers | None = None,
        catalog: CatalogWrite | None = None,
    ) -> None:
        self._catalog = catalog or CatalogWrite(store, uploader, resolver, history, clock=clock, sleep=sleep)
        self._writer = RunWriter(self._catalog, engine, options, policy, parse_sql=parse_sql, takeovers=takeovers)
        self._store = self._catalog.store
        self._history = self._catalog.history
        self._options = options
        self._policy = policy
        self._clock = clock
        self._run_locks = StripedLocks()  # the handling of one run in this process
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
            with self._run_locks.one(key), self._store.session(key) as session:
                run = snapshot_from_static(event, max_datasets=self._policy.max_datasets)
                return self._writer.write(
                    key, run, None, run.event_type, now, event_type, session=session, rewrite=redelivered
                )
        run_id = key
        run, readers, outcome = self._merge_and_decide(run_id, event, now, event_type, redelivered)
        self._rewrite_readers(readers, now)  # outside this run's lock: a reader's lock may share its stripe
        if outcome.status in (RunStatus.WRITTEN, RunStatus.UNCHANGED, RunStatus.SUPERSEDED):
            outcome = self._take_over(run_id, run, outcome, now)
        return outcome

    def _merge_and_decide(
        self, run_id: str, event: dict[str, Any], now: float, event_type: str | None, redelivered: bool
    ) -> tuple[RunSnapshot, frozenset[str], LineageOutcome]:
        """Under the run's lock, in one session of the run-state store: the event merged into its run, the temporary
        datasets and orchestration it passes on recorded, and the run written when due."""
        with self._run_locks.one(run_id), self._store.session(run_id) as session:
            run, version = self._store.merge_versioned(
                event,
                now=now,
                max_datasets=self._policy.max_datasets,
                schedule=lambda merged: self._waiting(merged, now),
            )
            readers = record_temporary(self._store, run_id, run, now) | record_passed_orchestration(
                self._store, run_id, run, now
            )  # an application run's orchestrator, for its SQL jobs
            return run, readers, self._decide(run_id, run, version, now, event_type, session, rewrite=redelivered)

    # --- the timer ---------------------------------------------------------------------------------------------
    def write_due(self, *, now: float | None = None, limit: int = 200) -> DueReport:
        """Write the runs whose time has come (INCOMPLETE runs, held Databricks runs) and retry deletions that did
        not finish. A failed run is tried again later, at most MAX_DUE_ATTEMPTS times (olparser/pipeline/timer.py)."""
        now = self._clock() if now is None else now
        outcomes: list[LineageOutcome] = []
        failed = 0
        for key in self._store.due_runs(now, limit):
            with self._run_locks.one(key):
                try:
                    outcome = self._write_due_run(key, now)
                except Exception as error:  # the next tick tries again; a run never blocks the others
                    failed += 1
                    timer.postponed(self._store, key, now, failed, error)
                    continue
            if outcome is not None:
                outcomes.append(outcome)
        return timer.finish_tick(
            self._store, self._catalog.uploader, self._history, outcomes, failed, now, resolver=self._catalog.resolver
        )

    def _write_due_run(self, key: str, now: float) -> LineageOutcome | None:
        """One due run, under its lock: written (as INCOMPLETE when it has not ended), or unscheduled."""
        with self._store.session(key) as session:
            # a commit's intentions that a crash left (the timer's sweep)
            self._writer.resume_interrupted_commit(key, now)
            run, version = self._store.get_versioned(key, now=now)
            if run is None:
                self._store.schedule(key, None)
                return None
            decision = decide(run, self._policy.complete(), self._options)  # the hold, if any, is over
            if decision is Decision.SKIP:
                self._store.schedule(key, None)
                self._record_skipped(key, run, version, now)
                return None
            if decision is Decision.WRITE:
                return self._writer.write(key, run, version, run.event_type, now, None, session=session)
            if not (run.inputs or run.outputs):
                self._store.schedule(key, None)
                return None
            return self._writer.write(key, run, version, INCOMPLETE, now, None, session=session)

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
        self,
        run_id: str,
        run: RunSnapshot,
        version: int,
        now: float,
        event_type: str | None,
        session: RunSession,
        *,
        rewrite: bool = False,
    ) -> LineageOutcome:
        """What to do with the run after a merge (which scheduled it if it waits: `_waiting`)."""
        policy = self._policy
        decision = decide(run, policy, self._options)
        if decision is Decision.WAIT:
            return outcome(run, event_type, RunStatus.WAITING)
        if decision is Decision.SKIP:
            if self._store.written_fingerprint(run_id, now=now) is not None:  # an INCOMPLETE write is taken back
                return self._writer.write(
                    run_id, run, version, run.event_type, now, event_type, session=session, empty=True, rewrite=rewrite
                )
            self._store.schedule(run_id, None)
            calls = self._record_skipped(run_id, run, version, now)
            return outcome(run, event_type, RunStatus.SKIPPED, calls=calls)
        if decision is Decision.HOLD:
            return outcome(run, event_type, RunStatus.HELD)
        return self._writer.write(
            run_id, run, version, run.event_type, now, event_type, session=session, rewrite=rewrite
        )

    def _record_skipped(self, key: str, run: RunSnapshot, version: int, now: float) -> int:
        """A run that writes nothing (FAIL, ABORT) recorded in the history, then again from its newer state while
        another instance merged more of its events meanwhile: the last record must be the newest state's, whatever
        order the instances record in (a written run gets that from its commit's version). Returns the catalog
        calls it cost."""
        calls = 0
        for _ in range(MAX_REBUILDS):
            calls += self._writer.record_unwritten(key, run, now)
            if self._history is None:
                break
            fresh, fresh_version = self._store.get_versioned(key, now=now)
            if (
                fresh is None
                or fresh_version == version
                or decide(fresh, self._policy.complete(), self._options) is not Decision.SKIP
            ):
                break
            run, version = fresh, fresh_version
        return calls

    def _rewrite_readers(self, readers: frozenset[str], now: float) -> None:
        """A writer of temporary datasets came: the runs that read them and were written already are written again
        (their plans now list what it read). Order-independence: a reader handled first wrote without it."""
        for reader in sorted(readers):
            with self._run_locks.one(reader):
                if self._store.written_fingerprint(reader, now=now) is None:
                    continue  # not written yet: it looks the writer up when it is
                run, version = self._store.get_versioned(reader, now=now)
                if run is None or decide(run, self._policy.complete(), self._options) is Decision.SKIP:
                    continue
                status = run.event_type if run.is_terminal else INCOMPLETE
                # a session of its own: nothing of the reader's was folded
                self._writer.write(reader, run, version, status, now, None, session=RunSession(reader))

    # --- take-over of session-specific identities ----------------------------------------------------------------
    def _take_over(self, key: str, run: RunSnapshot, outcome: LineageOutcome, now: float) -> LineageOutcome:
        """A notebook run written under its stable identity takes over the processes earlier versions wrote under a
        session-specific owner (`takeover.session_specific_writers` names the runs to write again); needs the history."""
        if self._history is None:
            return outcome
        calls, deleted = 0, 0
        for process, legacy in session_specific_writers(self._history, self._options, run, now, self._taken_over):
            for legacy_key in legacy:
                done = self._write_again(legacy_key, now)
                calls, deleted = calls + done.catalog_calls, deleted + done.deleted
            taken_over(process, legacy, self._taken_over)
        return replace(outcome, catalog_calls=outcome.catalog_calls + calls, deleted=outcome.deleted + deleted)

    def _write_again(self, key: str, now: float) -> LineageOutcome:
        """Write a finished run again from its state (its plan built anew)."""
        with self._run_locks.one(key):
            run, version = self._store.get_versioned(key, now=now)
            if run is None or decide(run, self._policy.complete(), self._options) is not Decision.WRITE:
                log.info("run %s is no longer known (or not finished): its session-specific processes stay", key)
                return LineageOutcome(key, None, RunStatus.SKIPPED)
            # a session of its own: nothing was folded
            return self._writer.write(key, run, version, run.event_type, now, None, session=RunSession(key))
