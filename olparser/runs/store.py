"""The run-state store interface: where the merged state of each run lives between its events.

Two implementations: SQLite (one local file; the default, and what tests and `ol2purview serve` use) and Azure Table
storage (what a scaled-out Function App uses, so that every instance sees the same runs). Both merge atomically,
so concurrent workers handling events of the same run lose nothing.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, Sequence

from olparser.runs.model import JSON, RunSnapshot

if TYPE_CHECKING:
    from olparser.settings import Settings

SQLITE_FILE_NAME = "run-state.sqlite3"
RUN_STATE_TABLE = "olrunstate"
STORE_KINDS = ("sqlite", "table")


class RunStateStore(Protocol):
    def merge(self, event: JSON, *, now: float | None = None) -> RunSnapshot:
        """Load the run's state, merge the event, save: atomically; concurrent writers are safe."""

    def get(self, run_id: str) -> RunSnapshot | None:
        """The run's merged state, or None if unknown or expired."""

    def written_fingerprint(self, run_id: str) -> str | None:
        """What lineage was last written for this run (as recorded by record_written)."""

    def record_written(self, run_id: str, fingerprint: str) -> None:
        """Remember the fingerprint of the lineage just written for this run."""

    def purge_expired(self, now: float | None = None) -> int:
        """Delete runs not updated for ttl_seconds; returns how many were deleted."""

    def process_run_times(self, qualified_names: Sequence[str]) -> dict[str, float]:
        """For each process qualifiedName known here, the time (Unix seconds) of the newest run that wrote it."""

    def record_process_runs(self, qualified_names: Sequence[str], run_time: float) -> None:
        """Remember that a run of `run_time` wrote these processes (a newer time recorded before is kept).

        These records do not expire with the runs: they are what stops a late event of an old run (a requeued
        poison message, say) from putting back inputs that a newer run of the same code no longer reads."""


def event_run_id(event: JSON) -> str:
    """The runId of a RunEvent, or ValueError naming what is missing."""
    run = event.get("run")
    run_id = run.get("runId") if isinstance(run, dict) else None
    if not isinstance(run_id, str) or not run_id:
        raise ValueError("event has no run.runId: only RunEvents have run state")
    return run_id


def open_run_state_store(settings: "Settings") -> RunStateStore:
    """The store chosen by RUN_STATE_STORE: `sqlite` (a file in data_dir) or `table` (AzureWebJobsStorage)."""
    kind = settings.run_state_store
    ttl = settings.run_state_ttl_seconds
    if kind == "sqlite":
        from olparser.runs.sqlite_store import SqliteRunStateStore

        return SqliteRunStateStore(settings.data_dir / SQLITE_FILE_NAME, ttl_seconds=ttl)
    if kind == "table":
        if not settings.storage_connection:
            raise ValueError("RUN_STATE_STORE=table needs the AzureWebJobsStorage connection string")
        from olparser.runs.table_store import TableRunStateStore

        return TableRunStateStore.from_connection_string(settings.storage_connection, RUN_STATE_TABLE,
                                                         ttl_seconds=ttl)
    raise ValueError(f"RUN_STATE_STORE must be one of {', '.join(STORE_KINDS)}, not {kind!r}")
