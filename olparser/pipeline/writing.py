"""The one write procedure: how plans go into the catalog under the run-state store's ledger, for the live path
(`olparser.pipeline.LineagePipeline`, one run at a time) and the Spark batch paths (tools/spark/catalog.py
`PlanWriter`, many runs per bulk call) alike.

For a batch of runs (the live path passes one): each run claims what its plan has (`claim`) and waits for a
deletion of one of those entities that another writer has under way; under the processes' locks the run-state store
says which processes a newer run already wrote (`newer_writers`: left alone, the run still writes its datasets and
owners); the plans are counted (their processes' runCount and firstRunTime), uploaded — the interim datasets an
upload created are registered for the re-link timer (`upload_linked`) — and committed; a process whose newer writer
dropped it meanwhile is uploaded after all. Then `finish_catalog_work` does the catalog work the commits left: delete
what no run uses any more, restore the processes their last writer no longer has, tell the store it is done.

It owns no I/O of its own: `CatalogWrite` holds the run-state store, the uploader, the resolver and the run history
that the composition root (olparser/adapters/runtime.py) built, with the locks that serialise one process's writes in
this process, and every writer — the runner, the timer, the take-over, the re-link (its locks) and the Spark
`PlanWriter` — writes through the one it is given.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import zlib
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from olparser.catalog_rules import forget_gone
from olparser.history import RunHistoryStore, with_run_history
from olparser.lineage import PROCESS_TYPES, LineagePlan, plan_fingerprint
from olparser.lineage.plan import DeleteReport, UploadReport
from olparser.naming import MappingEngine
from olparser.resolution.model import Resolution, candidates_to_json
from olparser.runs import RunStateStore
from olparser.runs.ledger import CommitResult, Key
from olparser.runs.rules import RunOrder
from olparser.runs.store import TOMBSTONE_SECONDS, RunSession

from .ports import Resolver, Uploader

log = logging.getLogger(__name__)

REFERENCE_NOT_FOUND = "ATLAS-404-00-00A"


@dataclass(frozen=True)
class Linked:
    """A plan after resolution and linking, with what resolution found (None: no resolver)."""

    plan: LineagePlan
    resolution: Resolution | None = None
    rules: MappingEngine | None = None  # the rules it was built with (one snapshot per plan: RuleSource)

    @property
    def calls(self) -> int:
        return 0 if self.resolution is None else self.resolution.calls


@dataclass(frozen=True)
class RunWrite:
    """One run's plan to write. `keys`: what the run answers for in the ledger (default: the plan's connector-owned
    entities); `processes`: the processes its whole plan has (default: the plan's); `order`: its place among the
    runs that write the same process (None: static lineage or no readable time, never superseded); `version`: the
    run state the plan was built from (None: not versioned); `dangling`: keys an earlier attempt uploaded."""

    key: str
    plan: LineagePlan
    order: RunOrder | None = None
    version: int | None = None
    keys: tuple[Key, ...] | None = None
    processes: tuple[str, ...] | None = None
    dangling: frozenset[Key] = frozenset()

    def owned_keys(self) -> tuple[Key, ...]:
        return self.plan.owned_keys() if self.keys is None else self.keys

    def process_names(self) -> tuple[str, ...]:
        return tuple(self.plan.process_names()) if self.processes is None else self.processes


@dataclass(frozen=True)
class Committed:
    """A run after its commit: the plan as counted and fingerprinted, the processes a newer run wrote (left alone)
    and the store's answer."""

    run: RunWrite
    plan: LineagePlan
    fingerprint: str
    superseded: frozenset[str]
    result: CommitResult


class StripedLocks:
    """A fixed set of locks a name is hashed onto: what serialises the work on one name in this process (a run's
    handling, a process's writes) without a lock per name. Several names are taken in one order: no deadlock."""

    STRIPES = 64

    def __init__(self) -> None:
        self._locks = tuple(threading.Lock() for _ in range(self.STRIPES))

    def _stripe(self, name: str) -> int:
        return zlib.crc32(name.encode("utf-8")) % self.STRIPES

    def one(self, name: str) -> threading.Lock:
        return self._locks[self._stripe(name)]

    def all(self, names: Iterable[str]) -> ExitStack:
        stack = ExitStack()
        for stripe in sorted({self._stripe(name) for name in names}):
            stack.enter_context(self._locks[stripe])
        return stack


class CatalogWrite:
    """The catalog writer of the write path, built once in the composition root: the run-state store (its ledger),
    the uploader, the resolver (None: off), the run history whose counts a process carries (None: none) and the locks
    that serialise the writes of one process in this process — the runner's, the timer's, the take-over's and the
    re-link's alike (`serial=False`: no locks, for the Spark batch, the only writer in its process, and for the
    take-over's commits, which upload nothing)."""

    def __init__(
        self,
        store: RunStateStore,
        uploader: Uploader,
        resolver: Resolver | None = None,
        history: RunHistoryStore | None = None,
        *,
        serial: bool = True,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.store = store
        self.uploader = uploader
        self.resolver = resolver
        self.history = history
        self.serial = serial
        self.clock = clock
        self.sleep = sleep
        self._process_locks = StripedLocks() if serial else None

    def locked_processes(self, names: Iterable[str]) -> ExitStack | nullcontext[None]:
        """The locks that serialise writes of these processes in this process (none when not `serial`)."""
        return self._process_locks.all(names) if self._process_locks is not None else nullcontext()

    def wait_for_deletions(self, contested: frozenset[Key]) -> None:
        wait_for_deletions(self.store, contested, self.clock, self.sleep)

    def counted(self, plan: LineagePlan, *, recorded: str | None = None) -> LineagePlan:
        """The plan with its processes' runCount and firstRunTime from the history (`recorded`: the record this
        thread just wrote: the counts as that record, or a newer one of this instance, left them will do)."""
        names = plan.process_names()
        if self.history is None or not names:
            return plan
        return with_run_history(plan, self.history.process_summaries(names, recorded=recorded))

    def upload_linked(self, linked: Linked) -> UploadReport | None:
        """`upload_linked` through this writer's store, uploader and resolver."""
        return upload_linked(self.store, self.uploader, self.resolver, linked)

    def delete_orphans(self, results: Sequence[tuple[str, CommitResult]]) -> tuple[int, int]:
        """The orphans the commits left, deleted in one request (`delete_orphans`): the entities deleted, calls."""
        orphans = tuple(sorted({key for _, result in results for key in result.orphans}))
        return delete_orphans(self.store, self.uploader, orphans, self.resolver)


@dataclass(frozen=True)
class BatchWritten:
    """What `write_plans` did: each run's commit, the catalog calls, the upload requests."""

    committed: tuple[Committed, ...]
    calls: int
    requests: int


def _each(plans: list[LineagePlan]) -> list[LineagePlan]:
    return plans


def write_plans(
    catalog: CatalogWrite,
    runs: Sequence[RunWrite],
    resolution: Resolution | None,
    *,
    now: float | None = None,
    session: RunSession,
    count: bool = False,
    recorded: str | None = None,
    select: Callable[[list[tuple[RunWrite, LineagePlan]]], list[LineagePlan]] | None = None,
    pack: Callable[[list[LineagePlan]], Iterable[LineagePlan]] = _each,
) -> BatchWritten | None:
    """Claim, wait for the entities another writer is deleting, test for newer writers, count, upload (registering
    the interim datasets created), commit — the runs of the batch together, through `catalog`, under its locks of
    these processes when it has them (`CatalogWrite.serial`; else no lookup of what the runs dropped either).
    `count`: the plans get their processes' counts once the writes are serial (`CatalogWrite.counted`; `recorded`:
    the history record this thread just wrote; else the plans are counted already); `select`: the plans
    to upload (default: each plan minus its superseded processes); `pack`: how they are grouped into uploads. None
    when an entity a plan references has vanished from the catalog (the caller resolves the plans again).
    `session`: the run's (the live path), or the batch's: what the newer-run test reads in it is checked by the
    commits (`RunStateStore.commit`)."""
    store = catalog.store
    contested: set[Key] = set()
    for run in runs:
        contested |= store.claim(run.key, run.owned_keys(), **_at(now))
    catalog.wait_for_deletions(frozenset(contested))
    names = sorted({name for run in runs for name in run.process_names()})
    # the processes an earlier plan of a run had and this one drops are locked too: a restore of one of them (from
    # the run's older state) must not upload it after this commit has released and deleted it
    dropped = (
        {name for run in runs for type_name, name in store.claimed(run.key) if type_name in PROCESS_TYPES} - set(names)
        if catalog.serial
        else set()
    )
    with catalog.locked_processes([*names, *sorted(dropped)]):
        newer = newer_writers(store, runs, session)
        for run in runs:
            if newer[run.key]:
                log.info(
                    "run %s: %d process(es) were written by a newer run and are left alone",
                    run.key,
                    len(newer[run.key]),
                )
        # the counts as they are now that writes are serial
        counted = [catalog.counted(run.plan, recorded=recorded) if count else run.plan for run in runs]
        chosen = [(run, plan.without_processes(newer[run.key])) for run, plan in zip(runs, counted, strict=True)]
        plans = select(chosen) if select is not None else [plan for _, plan in chosen]
        calls = requests = 0
        for group in pack([plan for plan in plans if plan.entities or plan.external_datasets]):
            report = catalog.upload_linked(Linked(group, resolution))
            if report is None:  # a linked scanned asset vanished: resolve the plans again
                return None
            calls, requests = calls + report.calls, requests + 1
        committed = []
        for run, plan in zip(runs, counted, strict=True):
            fingerprint = plan_fingerprint(plan)
            keys = run.owned_keys()
            processes = run.process_names()
            result = store.commit(
                run.key,
                keys,
                version=run.version,
                fingerprint=fingerprint,
                process_names=processes,
                run_time=None if run.order is None else run.order[0],
                dangling=run.dangling - set(keys),
                process_types=PROCESS_TYPES,
                session=session,
                **_at(now),
            )
            late = newer[run.key] & result.newest  # their newer writer dropped them meanwhile: this run is newest now
            if late and not result.stale:
                calls += catalog.uploader.upload(plan.without_processes(set(processes) - late)).calls
            committed.append(Committed(run, plan, fingerprint, frozenset(newer[run.key]), result))
    return BatchWritten(tuple(committed), calls, requests)


def _at(now: float | None) -> dict[str, float]:
    return {} if now is None else {"now": now}


def newer_writers(store: RunStateStore, runs: Sequence[RunWrite], session: RunSession) -> dict[str, set[str]]:
    """For each run, the processes of its plan that a newer run already wrote, as the run-state store knows them
    (one lookup for the whole batch, kept in `session` for the commits): the one newer-run test of the live and
    batch paths."""
    names = sorted({name for run in runs if run.order is not None for name in run.process_names()})
    writers = store.process_writers(names, session=session) if names else {}
    return {
        run.key: (
            {name for name in run.process_names() if name in writers and writers[name] > run.order}
            if run.order is not None
            else set()
        )
        for run in runs
    }


def upload_linked(
    store: RunStateStore, uploader: Uploader, resolver: Resolver | None, linked: Linked
) -> UploadReport | None:
    """Upload; register the interim datasets the upload created. None when an entity the plan references has
    vanished — a scanned asset deleted, or an interim entity the re-link timer replaced while this worker still
    believed nothing was scanned: every answer about the plan's datasets is forgotten and the caller resolves
    the plan again."""
    if resolver is None or linked.resolution is None:
        return uploader.upload(linked.plan)
    try:
        report = uploader.upload(linked.plan, refresh=False)
    except Exception as exc:  # CatalogRejected: the catalog's error code tells a vanished reference apart
        if getattr(exc, "error_code", None) != REFERENCE_NOT_FOUND:
            raise
        log.warning(
            "an entity the plan references is gone from the catalog (deleted, or re-linked): resolving the plan again"
        )
        resolver.forget_datasets(linked.plan.datasets)
        return None
    resolution = linked.resolution
    created = set(report.created) & set(resolution.interim)
    if created:
        store.register_interim(
            {k: json.dumps(candidates_to_json(resolution.interim[k]), separators=(",", ":")) for k in created}
        )
        resolver.note_interim(created)
    return report


def finish_catalog_work(catalog: CatalogWrite, results: Sequence[tuple[str, CommitResult]]) -> tuple[int, int]:
    """The catalog work the commits of the batch paths left (which do not hold the older runs' states): delete the
    orphans (one request for all of them), then tell the store it is done — except for a run with restores, which
    stay recorded for the live path's timer (the runner restores them itself, then says done: `RunWriter`). Returns
    the entities deleted and the catalog calls."""
    deleted, calls = catalog.delete_orphans(results)
    for key, result in results:
        if result.restores:
            log.info(
                "run %s: %d process(es) it no longer has go back to their older writers; the live path's "
                "timer writes them",
                key,
                len(result.restores),
            )
            continue
        if result.epoch is not None:
            catalog.store.done(key, result.epoch)
    return deleted, calls


def delete_orphans(
    store: RunStateStore, uploader: Uploader, orphans: tuple[Key, ...], resolver: Resolver | None = None
) -> tuple[int, int]:
    """Delete entities no run uses (a commit's `orphans`) and forget their tombstones; on failure the timer tries
    again (their tombstones stay). Returns (entities deleted, catalog calls). The runner and the Spark paths."""
    if not orphans:
        return 0, 0
    try:
        report = uploader.delete(orphans)
    except Exception as exc:
        log.warning(
            "%d entities no run uses could not be deleted now (%s); the timer tries again",
            len(orphans),
            type(exc).__name__,
        )
        return 0, 0
    finish_deleted(store, resolver, orphans, report)
    return len(orphans), report.calls


def finish_deleted(
    store: RunStateStore, resolver: Resolver | None, orphans: Sequence[Key], report: DeleteReport
) -> None:
    """After the delete of entities no run uses (a commit's orphans, or the timer's retry of them): their
    tombstones go, and with resolution on, what is gone is no longer an interim dataset to re-link nor known to the
    resolver (`forget_gone`; without a resolver no interim dataset was registered)."""
    store.finish_deletes(orphans)
    if resolver is not None:
        forget_gone(store, resolver, orphans, kept=report.kept)


def wait_for_deletions(
    store: RunStateStore, contested: frozenset[Key], clock: Callable[[], float], sleep: Callable[[float], None]
) -> None:
    """Another writer is deleting some of the entities a plan needs (`claim` said so): let it finish first
    (bounded by TOMBSTONE_SECONDS)."""
    deadline = clock() + TOMBSTONE_SECONDS
    while contested and clock() < deadline:
        sleep(0.05)
        contested = store.contested(contested)
