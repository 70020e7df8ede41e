"""When a run is written: the write policy (`WritePolicy`), the one write/wait/hold/skip rule (`decide`, shared with
the Spark paths) and what the runner reports (`LineageOutcome` per event, `DueReport` per timer tick)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from olparser.lineage import LineageOptions, awaits_environment, should_write_lineage
from olparser.runs import RunSnapshot


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
