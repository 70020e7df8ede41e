"""The run-history store interface and what both stores share (pure); `open_history_store(settings)` is in
olparser/adapters/history_stores.

Two stores, chosen with the run state (RUN_STATE_STORE): SQLite (`run-history.sqlite3` in the data folder) and Azure
Table storage (table `olrunhistory` in AzureWebJobsStorage). Both hold, CDAP's way:

- per run: its record (`RunRecord`, the reverse lookup for GET /runs/{runId} and for replacing it);
- per dataset access: a row keyed by dataset, then closed/open, inverted start time, run, access, process (newest
  first in a key scan), carrying the run's slim facts;
- per process run: a row keyed by process, then closed/open, inverted start, run, with what that run of the process
  read and wrote and its column lineage; and per process a summary (runs held, earliest start) for `runCount` and
  `firstRunTime`.

`record` is idempotent: the same record again changes nothing, a new record of a run replaces everything its old one
wrote. It answers the processes whose summary changed (the run joined or left them, or its start moved), so that
the runner can rewrite them in the catalog; they stay answered, kept with the run's record, until the runner says
they are rewritten (`refreshed`): a worker that dies in between leaves them to the message's redelivery. Runs older than `RUN_HISTORY_DAYS` are not recorded and are purged by
the timer. A query reads closed runs that started at most the longest run duration recorded before `since`, and
every open (INCOMPLETE) run that started before `until`; the walk keeps those that overlap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Protocol, Sequence

from .model import Access, ProcessRun, ProcessSummary, RunFacts, RunRecord
from .window import HistoryReader

if TYPE_CHECKING:
    pass

SQLITE_FILE_NAME = "run-history.sqlite3"
HISTORY_TABLE = "olrunhistory"
SLIM_METADATA = ("user", "runBy")  # what the index rows keep of a run's metadata (the run's own row keeps all of it)
INVERT_MS = 10**13  # inverted start = INVERT_MS - start in ms: 13 digits until the year 2286
PURGE_BATCH = 500


class RunHistoryStore(HistoryReader, Protocol):
    def record(self, record: RunRecord, *, now: float | None = None, keep_changes: bool = True) -> frozenset[str]:
        """Write the run's record in place of its previous one (idempotent). Answers the processes whose summary
        changed and whose catalog copies are not confirmed rewritten yet (`refreshed`): those this record changed,
        and those an earlier record of the run changed when the writer died before rewriting them (so a redelivered
        message finds them even though its record is the same). `keep_changes=False`: the caller rewrites every
        changed process itself at once (the backfill), nothing is kept for later."""

    def refreshed(self, run_id: str, names: Iterable[str]) -> frozenset[str]:
        """The catalog copies of these processes now show what the run's record made of their summaries: `record`
        no longer answers them. Answers the processes to rewrite again: those whose summaries changed because another
        writer's record of the same run replaced this thread's while this thread wrote its process rows (a store
        whose record is one transaction answers none)."""

    def process_summaries(self, names: Sequence[str], *, recorded: str | None = None) -> dict[str, ProcessSummary]:
        """Runs held and earliest start of each named process the history knows. `recorded`: the run the caller's
        thread has just recorded (its last call), when the summaries as that record, or a newer record of the same
        instance, left them will do: a store may answer them without reading (the runner's first look, before its
        fingerprint, and its look under the process lock, which serialises one instance's uploads of a process; a
        record by another instance between this record and its upload shows in the process's next upload)."""

    def purge(self, now: float | None = None, limit: int = PURGE_BATCH) -> int:
        """Delete runs that started more than the retention ago (at most `limit`); how many were deleted."""

    def close(self) -> None: ...


def slim(facts: RunFacts) -> RunFacts:
    """The facts an index row carries: the run's metadata cut to SLIM_METADATA."""
    return RunFacts(
        facts.run_id,
        facts.job,
        facts.owner,
        facts.owner_type,
        facts.start,
        facts.end,
        facts.status,
        {k: v for k, v in facts.metadata.items() if k in SLIM_METADATA},
    )


def inverted_ms(seconds: float) -> int:
    return INVERT_MS - round(seconds * 1000)


def is_open(facts: RunFacts) -> bool:
    """A run without end (INCOMPLETE): it overlaps every window that ends after it started."""
    return facts.end is None


def access_keys(record: RunRecord | None) -> dict[tuple[str, str, str], Access]:
    """(dataset, access, process) -> the access, for every access of the record."""
    if record is None:
        return {}
    return {(a.dataset.qualified_name, a.access, a.process): a for a in record.accesses()}


def process_runs_of(record: RunRecord | None) -> dict[str, ProcessRun]:
    return {} if record is None else {p.qualified_name: p for p in record.processes}


def changed_processes(old: RunRecord | None, new: RunRecord | None) -> frozenset[str]:
    """The processes whose summary the replacement of `old` by `new` changes: joined, left, or start moved."""
    before = {name: old.facts.start for name in process_runs_of(old)} if old else {}
    after = {name: new.facts.start for name in process_runs_of(new)} if new else {}
    return frozenset(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))
