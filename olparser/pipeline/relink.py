"""The re-link timer: datasets the connector created for want of a scanned asset, looked at again until a scan
registers theirs; then the processes that use them are pointed at the scanned asset and the interim entity goes.

Each tick (`relink_scanned_assets` in function_app.py, `RELINK_TIMER_SCHEDULE`) takes at most `RELINK_BATCH_SIZE`
interim datasets from the run-state registry, the longest unchecked first, and resolves their candidates afresh
(negative answers ignored, positive ones trusted: `ScannedAssetResolver.resolve_candidates(fresh=True)`). For each
one that now has a scanned asset:

1. the interim entity is read with its relationships: the processes that read or write it (the catalog knows them
   all, including those of runs whose run state has expired);
2. each of those processes that is the connector's (`spark_process`, `databricks_process` carrying its
   `openlineageJob`) is rewritten in one bulk call: only `inputs`, `outputs`, `columnMapping`, `columnLineageDetail`, `datasetLocations` and `datasetTables`
   are sent (Atlas keeps the rest), with the interim entity replaced by the scanned one (`relink_attributes`, the
   link step's own rewrite). The process keeps its qualifiedName. In this process, writes of one process are
   serialised with the pipeline's (the same striped locks);
3. the interim entity is deleted unless another tool's process still uses it, or a scan has since filled it in
   (`CatalogUploader.delete` checks both again after the rewrite); then it leaves the registry.

Datasets with nothing new go to the back of the line. A run that is written later resolves to the scanned asset by
itself (the resolver's cache was refreshed here; other workers' negative answers expire within
`RESOLUTION_NEGATIVE_CACHE_SECONDS`, and if one writes the interim entity again meanwhile, it is registered again and
the next tick re-links it). Scanned entities are only ever referenced.
"""

from __future__ import annotations

import json
import logging
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from olparser.catalog_rules import forget_gone, used_by
from olparser.jsontypes import JSON
from olparser.lineage import PROCESS_TYPES, LineagePlan
from olparser.lineage.entities import Key, object_id
from olparser.lineage.link import LINKED_ATTRIBUTES, relink_attributes
from olparser.lineage.plan import DeleteReport
from olparser.resolution.model import candidates_from_json
from olparser.runs import RunStateStore

from .ports import RelinkCatalog, RelinkResolver, Resolver

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RelinkReport:
    """One tick: interim datasets looked at, re-linked (a scanned asset found), processes rewritten, interim entities
    deleted and kept (another process uses them, or a scan took them over), catalog calls."""

    checked: int = 0
    relinked: int = 0
    processes: int = 0
    deleted: int = 0
    kept: int = 0
    calls: int = 0
    retired: int = 0  # processes taken over from the accelerator whose successor is written (pipeline/accelerator.py)

    @property
    def did_something(self) -> bool:
        """Whether the tick changed the catalog (the timer logs at INFO only then; a check that found nothing
        new is logged at DEBUG)."""
        return any((self.relinked, self.processes, self.deleted, self.kept, self.retired))

    def to_json(self) -> dict[str, int]:
        return {
            "checked": self.checked,
            "relinked": self.relinked,
            "processes": self.processes,
            "deleted": self.deleted,
            "kept": self.kept,
            "calls": self.calls,
            "retired": self.retired,
        }


class Relinker:
    def __init__(
        self,
        store: RunStateStore,
        resolver: RelinkResolver,
        catalog: RelinkCatalog,
        *,
        batch_size: int,
        locked_processes: Callable[[Iterable[str]], AbstractContextManager[Any]] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._resolver = resolver
        self._catalog = catalog
        self._batch_size = batch_size
        self._locked = locked_processes or (lambda names: nullcontext())
        self._clock = clock

    def run(self, *, now: float | None = None) -> RelinkReport:
        now = self._clock() if now is None else now
        entries = self._store.due_interim(self._batch_size)
        planned = {}
        for entry in entries:
            try:
                planned[entry.key] = candidates_from_json(json.loads(entry.candidates))
            except ValueError as exc:
                log.warning("re-link: unreadable candidates for %s (%s); forgotten", entry.key[0], exc)
                self._store.forget_interim([entry.key])
        if not planned:
            return RelinkReport()
        resolution = self._resolver.resolve_candidates(planned, fresh=True)
        settled = set(resolution.taken_over) | {k for k, t in resolution.links.items() if t == k}
        if settled:  # it is the scanner's own asset now: nothing to re-link, never to delete
            self._store.forget_interim(settled)
        moved = {k: t for k, t in resolution.links.items() if t != k}
        self._store.checked_interim([k for k in planned if k not in moved and k not in settled], now=now)
        if not moved:
            return RelinkReport(checked=len(planned), calls=resolution.calls)
        calls = [resolution.calls]
        processes, deleted, kept = self._relink(moved, calls, now)
        return RelinkReport(
            checked=len(planned), relinked=len(moved), processes=processes, deleted=deleted, kept=kept, calls=calls[0]
        )

    def _relink(self, moved: dict[Key, Key], calls: list[int], now: float) -> tuple[int, int, int]:
        return move_datasets(moved, self._catalog, self._store, self._resolver, self._locked, calls, now)


def move_datasets(
    moved: dict[Key, Key],
    catalog: RelinkCatalog,
    store: RunStateStore,
    resolver: Resolver | None,
    locked: Callable[[Iterable[str]], AbstractContextManager[Any]],
    calls: list[int],
    now: float,
) -> tuple[int, int, int]:
    """Point the connector's processes that use each dataset of `moved` at its target (which exists) and delete the
    dataset unless another tool's process uses it or a scan filled it in: the re-link's step, and what the runner
    does for a renamed table (olparser/lineage/lifecycle.py). Returns (processes rewritten, deleted, kept)."""
    interim = catalog.read(moved, calls)
    gone = [key for key in moved if key not in interim]
    if gone:
        forget_gone(store, resolver, gone)
    by_guid = {entity["guid"]: key for key, entity in interim.items()}
    users = {key: _users(entity) for key, entity in interim.items()}
    processes = catalog.read_guids(sorted({g for guids in users.values() for g in guids}), calls)
    held = _held(store, processes)
    ours = [p for p in processes if _ours(p, held)]
    foreign = {p.get("guid") for p in processes if not _ours(p, held)}
    rewritten = [entity for entity in (_rewritten(p, by_guid, moved) for p in ours) if entity is not None]
    if rewritten:
        names = [e["attributes"]["qualifiedName"] for e in rewritten]
        with locked(names):
            calls[0] += catalog.upload(
                LineagePlan(entities=tuple({**e, "guid": f"-{i}"} for i, e in enumerate(rewritten, 1)))
            ).calls
        for key, target in moved.items():
            log.info("re-linked %d process(es) from %s to %s", len(rewritten), key[0], target[0])
    deletable = [key for key in interim if not users[key] & foreign]
    report = catalog.delete(deletable) if deletable else DeleteReport()
    deleted = list(report.deleted)
    calls[0] += report.calls
    forget_gone(store, resolver, deleted)
    kept = [key for key in interim if key not in set(deleted)]
    store.checked_interim(kept, now=now)
    return len(rewritten), len(deleted), len(kept)


def drop_datasets(
    keys: Iterable[Key], catalog: RelinkCatalog, store: RunStateStore, resolver: Resolver | None, calls: list[int]
) -> int:
    """Delete datasets the connector created for tables that were dropped, unless another tool's process uses
    them (the connector's own processes keep their history; Atlas drops their references). Returns how many."""
    found = catalog.read(keys, calls)
    users = {key: _users(entity) for key, entity in found.items()}
    processes = catalog.read_guids(sorted({g for guids in users.values() for g in guids}), calls)
    held = _held(store, processes)
    foreign = {p.get("guid") for p in processes if not _ours(p, held)}
    deletable = [key for key in found if not users[key] & foreign]
    report = catalog.delete(deletable, in_use=True) if deletable else DeleteReport()
    calls[0] += report.calls
    forget_gone(store, resolver, report.deleted)
    return len(report.deleted)


def _held(store: RunStateStore, processes: list[dict[str, Any]]) -> set[Key]:
    """Of these processes, those the ledger holds for the connector."""
    keys = [_key(p) for p in processes if p.get("typeName") in PROCESS_TYPES]
    return store.owned(keys) if keys else set()


def _key(entity: dict[str, Any]) -> Key:
    return str(entity.get("typeName")), str((entity.get("attributes") or {}).get("qualifiedName"))


def _ours(process: dict[str, Any], held: set[Key]) -> bool:
    """A process the connector wrote: the ledger holds it, and it carries the OpenLineage job it came from (the
    accelerator's `databricks_process`es, of the same type, do not; those taken over stay as they are)."""
    job = (process.get("attributes") or {}).get("openlineageJob")
    return _key(process) in held and isinstance(job, str) and bool(job)


def _users(entity: dict[str, Any]) -> set[str]:
    """Guids of the active processes that read or write an entity (`used_by`; a relation without a guid names no
    process to read)."""
    return {item["guid"] for item in used_by(entity) if isinstance(item.get("guid"), str)}


def _rewritten(process: dict[str, Any], by_guid: dict[str, Key], moved: dict[Key, Key]) -> JSON | None:
    """The connector's process with its linked attributes rewritten (only those sent), or None if nothing changes."""
    attributes = dict(process.get("attributes") or {})
    relations = process.get("relationshipAttributes") or {}
    for name in ("inputs", "outputs"):
        refs = relations.get(name) if relations.get(name) is not None else attributes.get(name)
        attributes[name] = [
            _reference(ref, by_guid)
            for ref in refs or []
            if isinstance(ref, dict) and ref.get("relationshipStatus", "ACTIVE") == "ACTIVE"
        ]
    changed = relink_attributes(attributes, moved)
    if changed is attributes:
        return None
    sent = {name: changed[name] for name in LINKED_ATTRIBUTES if name in changed}
    return {"typeName": process["typeName"], "attributes": {"qualifiedName": attributes["qualifiedName"], **sent}}


def _reference(ref: dict[str, Any], by_guid: dict[str, Key]) -> JSON:
    """A reference as the builder writes it: by type and qualifiedName (by guid when the catalog gave no name)."""
    key = by_guid.get(ref.get("guid", ""))
    if key is not None:
        return object_id(*key)
    qualified_name = (ref.get("uniqueAttributes") or {}).get("qualifiedName")
    if isinstance(qualified_name, str) and isinstance(ref.get("typeName"), str):
        return object_id(ref["typeName"], qualified_name)
    return {"guid": ref.get("guid"), "typeName": ref.get("typeName")}
