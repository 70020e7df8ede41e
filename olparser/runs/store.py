"""The run-state store interface: where the merged state of each run lives between its events, and what each run has
written to the catalog.

Two implementations, in olparser/adapters/run_state: SQLite (one local file; the default, and what tests and
`ol2purview serve` use) and Azure Table storage (what a scaled-out Function App uses, so that every instance sees the
same runs). Both merge atomically, so concurrent workers handling events of the same run lose nothing.

Besides the merged events, the store keeps the bookkeeping that makes the catalog independent of the order in which
events are processed (see olparser/pipeline/__init__.py for the protocol). What that bookkeeping becomes at each step is
decided by one set of pure rules, the ownership ledger (olparser/runs/ledger.py); a store only loads the rows the
ledger needs and saves its result under its own atomic write:

- per run (or static declaration): `version` (bumped by every merge), the keys — (typeName, qualifiedName) — of the
  connector-owned entities its last written plan contains (`written`) and of those it may have uploaded (`claimed`),
  its commit `epoch`, the fingerprint of what it last wrote, its pending intentions (what its last commit decided
  and has not yet been carried out), and when the timer should look at it (`due_at`);
- per connector-owned entity: the runs whose plans contain it (a set of entries, one per run: claiming twice counts
  once), and a tombstone while the entity is being deleted from the catalog because no run uses it any more;
- per process: the newest runs that wrote it, so that a late event of an older run cannot put back what a newer run
  replaced;
- per interim dataset (one the connector created because no scanned asset was found, see olparser/adapters/catalog/
  resolver.py): its candidates, when it was registered and when it was last re-resolved, so that the re-link timer
  can look again, oldest first, and the resolver can tell the connector's own entities from scanned ones. These do
  not expire with the runs either;
- per process taken over from another connector (`ol2purview migrate accelerator --apply`, `Takeover`): the owner
  and output its successor will have, the ledger run that holds it and the datasets it uses, when it was registered
  and when the timer last looked for its successor. Kept until forgotten: neither the purge nor the run TTL touches
  them;
- per dataset key the connector creates (olparser/lineage/lifecycle.py): the newest drop or rename of its table and
  the newest run that wrote it (`LifecycleMark`), so that the runs of a queue, processed in any order, leave the
  catalog as processing them in time order does. Purged with the runs, after the run-state TTL without a change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, ContextManager, Iterable, Mapping, Protocol, Sequence

from olparser.jsontypes import JSON
from olparser.runs.ledger import MAX_WRITERS, CommitResult, Key, Writer, add_writer, drop_writer, sorted_keys  # noqa: F401  (re-exported)
from olparser.runs.marks import LifecycleMark
from olparser.runs.model import RunSnapshot

if TYPE_CHECKING:
    pass

SQLITE_FILE_NAME = "run-state.sqlite3"
RUN_STATE_TABLE = "olrunstate"
STORE_KINDS = ("sqlite", "table")
# A deletion that has not finished after this long is taken to have died with its worker: writers stop waiting.
TOMBSTONE_SECONDS = 180.0
MAX_TEMPORARY_ROWS = 100  # writers (and readers) of one temporary dataset read back


def state_rewrite_needed(same_state: bool, updated_at: float, now: float, ttl_seconds: float) -> bool:
    """Whether a merge writes the run's row again: when its state changed, or when half its time to live has passed
    (a replayed event leaves the state as it is: no write, its version stays, unless the row is to be kept alive).
    The one rule of every store."""
    return not same_state or updated_at <= now - ttl_seconds / 2


@dataclass(frozen=True)
class InterimDataset:
    """A dataset the connector created itself: its key, its candidates (JSON text, as the resolver wrote them), when
    it was registered and when the re-link timer last looked for its scanned asset."""

    key: Key
    candidates: str
    registered_at: float
    checked_at: float


@dataclass(frozen=True)
class Takeover:
    """A process another connector wrote that `ol2purview migrate accelerator --apply` took over (the accelerator's
    hash-named `databricks_process`): the ledger run `run_key` holds it and the placeholder datasets it uses (`keys`)
    for the connector until the connector's own process of the same `owner` (the runnable's qualifiedName) and
    `output` (its output's qualifiedName, lower-cased: the accelerator lower-cased its placeholders) is written —
    its successor —, when that run lets them go. `checked_at`: when the timer last looked for the successor in the
    catalog. Kept (not purged with the runs) until forgotten."""

    process: Key
    owner: str
    output: str
    run_key: str
    keys: tuple[Key, ...]
    registered_at: float
    checked_at: float


@dataclass(frozen=True)
class StoreStats:
    """Sizes for the status endpoint: runs held, of which due for the timer; entities and processes tracked; interim
    datasets registered; processes taken over from another connector."""

    runs: int
    due: int
    entities: int
    processes: int
    interim: int = 0  # datasets the connector created for want of a scanned asset, waiting for a re-link
    takeovers: int = 0  # processes taken over from another connector, waiting for their successor

    def to_json(self) -> JSON:
        return {
            "runs": self.runs,
            "dueRuns": self.due,
            "trackedEntities": self.entities,
            "trackedProcesses": self.processes,
            "interimDatasets": self.interim,
            "takeovers": self.takeovers,
        }


@dataclass(frozen=True)
class Schedule:
    """When the timer should look at a run (None: never), as `RunStateStore.schedule` takes it."""

    due_at: float | None
    keep_earlier: bool = False


# what a merge schedules, given the merged state: None leaves the run's schedule as it is
ScheduleAfterMerge = Callable[[RunSnapshot], "Schedule | None"]


@dataclass(frozen=True)
class WritersRead:
    """What `process_writers` answered for one process in a session: its writers, newest first (those the upload was
    decided on: `ledger.writers_after`'s `seen`), and the store's row as it had it (`row`; None for a store that
    keeps none: the commit's change of the writers may start from it, conditionally), `remembered` when that row was
    this instance's memory rather than a read."""

    writers: tuple[Writer, ...]
    row: object = None
    remembered: bool = False


class RunSession:
    """One handling of a run — an event or a timer entry, under the run's lock (`RunStateStore.session`) — or one
    batch of runs (the Spark paths, `RunSession()`): what `process_writers` answered in it, kept for the `commit`
    that follows, which is given the session explicitly. `folds`: reads in it may be answered from what this
    instance last read or wrote (every write stays conditional on what was read); a batch's session reads. Used by
    one thread at a time."""

    def __init__(self, run_key: str | None = None, *, folds: bool = False) -> None:
        self.run_key = run_key
        self.folds = folds
        self._reads: dict[str, WritersRead] = {}

    def note(self, name: str, read: WritersRead) -> None:
        """`process_writers` answered `read` for process `name` (a newer answer replaces an older one)."""
        self._reads[name] = read

    def take(self, name: str) -> WritersRead | None:
        """What was answered for process `name` (once: the commit that checks it consumes it)."""
        return self._reads.pop(name, None)


class RunStates(Protocol):
    """The merged state of each run (or static declaration) between its events, and the store's housekeeping."""

    def merge_versioned(
        self,
        event: JSON,
        *,
        now: float | None = None,
        max_datasets: int | None = None,
        schedule: ScheduleAfterMerge | None = None,
    ) -> tuple[RunSnapshot, int]:
        """Load the run's state, merge the event, save: atomically; concurrent writers are safe. Returns the merged
        state and the run's version after it (every merge that changes the state bumps it; see
        `state_rewrite_needed`). `schedule`: asked with the merged state; what it returns is saved in the same
        write, as `schedule` would save it afterwards. `max_datasets` overrides the store's own limit
        on inputs (and outputs) per run."""

    def session(self, run_key: str) -> ContextManager[RunSession]:
        """The handling of one event or timer entry of the run, under its lock: reads of the run's row in it may be
        answered from the row as this session last read or wrote it (every write stays conditional on what was
        read, so a row another writer changed meanwhile fails the write and is read again; stores whose reads cost
        nothing fold none), and the session it yields carries what `process_writers` answers to the `commit`."""

    def get_versioned(self, run_id: str, *, now: float | None = None) -> tuple[RunSnapshot | None, int]:
        """The run's merged state (None if unknown or expired), and its version (0 when unknown)."""

    def written_fingerprint(self, run_key: str, *, now: float | None = None) -> str | None:
        """The fingerprint of what the run last wrote (as given to `commit`)."""

    def purge_expired(self, now: float | None = None) -> int:
        """Delete runs not updated for ttl_seconds; returns how many were deleted."""

    def stats(self) -> StoreStats:
        """How much the store holds."""


class RunClaims(Protocol):
    """Claims: the runs using each connector-owned entity, the tombstones of those being deleted, and what the ledger
    holds for the connector."""

    def claim(self, run_key: str, keys: Iterable[Key], *, now: float | None = None) -> frozenset[Key]:
        """Before uploading a plan: record the run as a user of `keys` (an entry per run: claiming again counts
        nothing), and return the keys that another writer is deleting from the catalog right now (wait for them
        with `contested` before uploading)."""

    def contested(self, keys: Iterable[Key], *, now: float | None = None) -> frozenset[Key]:
        """The keys among `keys` whose deletion from the catalog is still in progress."""

    def claimed(self, run_key: str) -> frozenset[Key]:
        """The keys the run has claimed (what its plans may have uploaded and its next commit may release)."""

    def finish_deletes(self, keys: Iterable[Key]) -> None:
        """The tombstoned `keys` were deleted from the catalog: forget them (a key claimed again meanwhile stays)."""

    def abandoned_deletes(self, now: float, limit: int) -> list[Key]:
        """Tombstoned keys whose deletion has not finished for TOMBSTONE_SECONDS (a failed delete): tombstoned anew
        (so that writers wait again) and returned, for the timer to delete them."""

    def owned(self, keys: Iterable[Key]) -> set[Key]:
        """Of `keys`, those the ledger holds for the connector: some run (or a take-over) uses it, or an older version
        counted users for it that are never released."""
        ...

    def owned_of_types(self, type_names: Iterable[str]) -> list[Key]:
        """Every key of these entity types the ledger holds for the connector (see `owned`), sorted."""
        ...


class RunCommits(Protocol):
    """Commits and their intentions (the sequence of olparser/runs/ownership.py, over each store's rows), and the
    processes' newest writers."""

    def commit(
        self,
        run_key: str,
        keys: Iterable[Key],
        *,
        version: int | None,
        fingerprint: str,
        process_names: Sequence[str] = (),
        run_time: float | None = None,
        dangling: Iterable[Key] = (),
        process_types: frozenset[str] = frozenset(),
        session: RunSession | None = None,
        now: float | None = None,
    ) -> CommitResult:
        """After uploading a plan built from the run's state at `version` (None: static lineage, not versioned):
        record `keys` as what the run has written and, in the same atomic write, the intentions (ledger.commit):
        stop being a user of what it claimed before and no longer has, tombstone the entities that then have no
        user — including `dangling` keys this writer uploaded in an earlier attempt that nobody uses —, become a
        writer of `process_names` (every process of its plan, superseded or not) and stop being one of the
        processes it drops (keys of `process_types`). The store carries out its part of them before returning;
        when the result leaves catalog work (orphans to delete, processes to restore), the intentions stay
        recorded until `done(run_key, result.epoch)`, and `settle` carries them out again after a crash. `session`:
        where the upload was decided (`process_writers`'s answers in it are checked: a newer writer they did not
        show is restored, `ledger.writers_after`'s `seen`); None: nothing was asked."""

    def settle(self, run_key: str, *, now: float | None = None) -> CommitResult | None:
        """Carry out the run's pending intentions again (idempotent): None when none are pending, else what is
        left for the catalog — delete the orphans, restore the processes, then call `done`."""

    def done(self, run_key: str, epoch: int) -> None:
        """The catalog work of the intentions of `epoch` is done: forget them (newer intentions stay)."""

    def process_writers(
        self, qualified_names: Sequence[str], *, session: RunSession | None = None
    ) -> dict[str, tuple[float, str]]:
        """For each process qualifiedName known here, the newest run that wrote it: (its time in Unix seconds, its
        key). Runs are ordered by time, then by key, so that two runs of the same instant are ordered too. These
        records do not expire with the runs: they are what stops a late event of an old run (a requeued poison
        message, say) from putting back inputs that a newer run of the same code no longer reads. `session`: the
        answers are kept in it for its commit, which checks them (a newer writer they did not show is restored:
        `ledger.writers_after`'s `seen`); in a session that `folds`, they may be what this instance last read or
        wrote."""

    def reset_process_runs(self, qualified_names: Sequence[str]) -> int:
        """Forget the newest run time of these processes (an admin repair after a run with a wrong clock)."""


class DueRuns(Protocol):
    """When the timer looks at each run."""

    def schedule(self, run_key: str, due_at: float | None, *, keep_earlier: bool = False) -> None:
        """When the timer should write this run if no event does it first (None: never). While intentions are
        pending, the timer still comes within ledger.SETTLE_SECONDS to carry them out."""

    def due_runs(self, now: float, limit: int) -> list[str]:
        """Runs whose `due_at` has passed, the most overdue first."""

    def postpone(self, run_key: str, due_at: float) -> int:
        """A due write failed: try again at `due_at`; returns how many times it has failed so far."""


class SideRecords(Protocol):
    """The side records: interim datasets (the re-link timer), processes taken over from another connector
    (ol2purview migrate accelerator), tables dropped and renamed, temporary datasets."""

    def register_interim(self, entries: Mapping[Key, str], *, now: float | None = None) -> None:
        """Record these datasets (key -> candidates JSON) as created by the connector; a key registered before keeps
        its times (its candidates are replaced)."""

    def interim_keys(self, keys: Iterable[Key]) -> set[Key]:
        """The keys among `keys` registered as interim datasets."""

    def due_interim(self, limit: int) -> list[InterimDataset]:
        """At most `limit` interim datasets, the longest unchecked first."""

    def checked_interim(self, keys: Iterable[Key], *, now: float | None = None) -> None:
        """The re-link timer looked at these now (they move to the back of the line)."""

    def forget_interim(self, keys: Iterable[Key]) -> None:
        """These are no longer interim datasets of the connector (re-linked, deleted, or taken over by a scan)."""

    def register_takeovers(self, entries: Sequence[Takeover]) -> None:
        """Record these take-overs (by `process`): a new one as given, one already registered with its `owner`,
        `output`, `run_key` and `keys` as given and its `registered_at` and `checked_at` kept. Idempotent."""
        ...

    def pending_takeovers(self, limit: int | None = None, *, owners: Iterable[str] | None = None) -> list[Takeover]:
        """The registered take-overs (of these owners only, when given), the least recently checked first (then by
        process key), at most `limit`."""
        ...

    def checked_takeovers(self, processes: Iterable[Key], *, now: float | None = None) -> None:
        """The timer looked for these take-overs' successors at `now` (a process no longer registered: ignored)."""
        ...

    def forget_takeovers(self, processes: Iterable[Key]) -> None:
        """These take-overs are over (their successor was written, or the process is gone)."""
        ...

    def record_lifecycle(
        self, marks: Mapping[Key, LifecycleMark], *, now: float | None = None
    ) -> dict[Key, LifecycleMark]:
        """Merge each mark into the one stored for its key (`LifecycleMark.merged`: the newer change, the newer
        write), atomically, and answer the merged marks of these keys (one read and at most one write)."""

    def record_temporary(
        self, scope: str, writer: str, writes: Mapping[tuple[str, str], bytes], *, now: float | None = None
    ) -> frozenset[str]:
        """Remember what run `writer` passes on through each temporary dataset (namespace, name) it writes in
        `scope` (`codec.passed_on_to_bytes`; a writer's earlier entry is replaced), then answer the runs that read
        any of them (at most MAX_TEMPORARY_ROWS each), each given a new version (its state unchanged): a plan of a
        reader built before this, and not yet committed, is stale and built again (from a lookup that finds this
        writer); the runner writes again the readers already written. Expires after TEMPORARY_DATASET_SECONDS
        without a write."""

    def temporary_sources(
        self, scope: str, names: Sequence[tuple[str, str]], reader: str, *, now: float | None = None
    ) -> dict[tuple[str, str], list[bytes]]:
        """Note `reader` as a run that reads these temporary datasets of `scope` (before looking: a writer recorded
        afterwards finds it), then answer what their writers pass on (at most MAX_TEMPORARY_ROWS writers each)."""


class RunStateStore(RunStates, RunClaims, RunCommits, DueRuns, SideRecords, Protocol):
    """Everything a run-state store does (the runner's view; a part that needs less may take one of the above)."""


def event_run_id(event: JSON) -> str:
    """The runId of a RunEvent, or ValueError naming what is missing."""
    run = event.get("run")
    run_id = run.get("runId") if isinstance(run, dict) else None
    if not isinstance(run_id, str) or not run_id:
        raise ValueError("event has no run.runId: only RunEvents have run state")
    return run_id
