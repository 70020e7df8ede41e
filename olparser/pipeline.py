"""The runner that orders the steps for one accepted event: merge → decide → build → compare → upload → remember.

A process belongs to one output of one notebook or job and is written by each of its runs. A late event of an older
run (a requeued poison message, a retried event) must not put back what a newer run replaced, so every process
remembers the time of the newest run that wrote it, and an older run leaves it alone ("superseded").

It owns no I/O of its own: the run-state store and the catalog uploader are passed in, so the same runner serves the
queue trigger in Azure, the local host, the tests and the benchmarks.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol

from olparser.lineage import LineageOptions, LineagePlan, build_lineage, plan_fingerprint, should_write_lineage
from olparser.naming import MappingEngine
from olparser.runs import RunSnapshot, RunStateStore, is_static_event, run_instant, snapshot_from_static

log = logging.getLogger(__name__)


class Uploader(Protocol):
    def upload(self, plan: LineagePlan) -> Any: ...


@dataclass(frozen=True)
class LineageOutcome:
    """What processing one event did. `status`: written | unchanged | waiting (run not finished) | skipped |
    superseded (a newer run of the same code already wrote every process); `superseded` counts processes left alone."""

    run_id: str | None
    event_type: str | None
    status: str
    entities: int = 0
    unmatched: int = 0
    catalog_calls: int = 0
    superseded: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"runId": self.run_id, "eventType": self.event_type, "status": self.status,
                "entities": self.entities, "unmatched": self.unmatched, "catalogCalls": self.catalog_calls,
                "superseded": self.superseded}


class LineagePipeline:
    def __init__(self, store: RunStateStore, engine: MappingEngine, options: LineageOptions,
                 uploader: Uploader) -> None:
        self._store = store
        self._engine = engine
        self._options = options
        self._uploader = uploader

    def process(self, event: dict[str, Any]) -> LineageOutcome:
        """Fold the event into its run and write the run's lineage when there is something new to write.

        Raises what the uploader raises (CatalogUnavailable, CatalogRejected): the caller's queue retries, and after
        its last attempt the message goes to the poison queue, from which `ol2purview requeue` brings it back.
        """
        static = is_static_event(event)
        run = snapshot_from_static(event) if static else self._store.merge(event)
        if not should_write_lineage(run, self._options):
            status = "waiting" if not run.is_terminal else "skipped"
            return LineageOutcome(run.run_id, run.event_type, status)
        plan = build_lineage(run, self._engine, self._options)
        for dataset in plan.unmatched:
            log.info("no mapping rule for a dataset of run %s (%s); written as a placeholder", run.run_id,
                     dataset.reason)
        fingerprint = plan_fingerprint(plan)
        if not static and self._store.written_fingerprint(run.run_id) == fingerprint:
            return self._outcome(run, plan, "unchanged")
        run_time = None if static else run_instant(run)
        processes = plan.process_names() if run_time is not None else ()
        superseded = {name for name, time in self._store.process_run_times(processes).items()
                      if time > run_time} if processes else set()
        if superseded:
            log.info("run %s: %d process(es) were written by a newer run and are left alone", run.run_id,
                     len(superseded))
            plan = plan.without_processes(superseded)
            processes = tuple(name for name in processes if name not in superseded)
            if not processes:
                self._store.record_written(run.run_id, fingerprint)
                return self._outcome(run, plan, "superseded", superseded=len(superseded))
        report = self._uploader.upload(plan)
        if processes:
            self._store.record_process_runs(processes, run_time)
        if not static:
            self._store.record_written(run.run_id, fingerprint)
        return self._outcome(run, plan, "written", calls=getattr(report, "calls", 0), superseded=len(superseded))

    @staticmethod
    def _outcome(run: RunSnapshot, plan: LineagePlan, status: str, calls: int = 0,
                 superseded: int = 0) -> LineageOutcome:
        return LineageOutcome(run.run_id, run.event_type, status, entities=len(plan.entities) + len(plan.external_datasets),
                              unmatched=len(plan.unmatched), catalog_calls=calls, superseded=superseded)
