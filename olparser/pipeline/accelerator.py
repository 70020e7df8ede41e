"""Taking over the accelerator's estate (olparser/lineage/accelerator.py says what and why): reading it from the
catalog, carrying the plan out through the ownership ledger, and retiring a taken-over process when its successor is
written.

Everything goes through the ledger's crash-safe steps (olparser/runs/ledger.py): each taken-over process is held by a
ledger run of its own (`accelerator:{sha256}`, `takeover_run_key`) that claims the process and the placeholders it
uses; retiring it, or letting a repointed placeholder go, is a commit of that run with fewer keys, whose orphans are
deleted by the one write procedure's `finish_catalog_work`. A crash anywhere leaves pending intentions that the next
`--apply`, or the timer, carries out (`settle`), and every step can be taken again: `--apply` is resumable.

When a successor appears:
- at `--apply`, when the catalog holds it already (the connector wrote the same code's run before the take-over);
- when a run writes it (`Takeovers.after_write`, the runner's, from the registry as this process last read it);
- at the latest at the next re-link tick (`sweep_takeovers`): the least recently checked take-overs, their owners'
  processes read from the catalog. The sweep's read of the registry is also what refreshes `Takeovers`.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any, Iterable, Protocol, Sequence

from olparser.lineage.accelerator import (
    PLACEHOLDER_TYPE,
    PROCESS_TYPE,
    Estate,
    EstateProcess,
    MigrationPlan,
    hashed_owner,
    successor_of,
    takeover_run_key,
)
from olparser.lineage.link import relink_attributes
from olparser.runs import RunStateStore
from olparser.runs.ledger import Key
from olparser.runs.store import Takeover

from .ports import Resolver, Uploader
from .writing import CatalogWrite, finish_catalog_work

log = logging.getLogger(__name__)

TAKEOVER_FINGERPRINT = "accelerator"


class EstateCatalog(Uploader, Protocol):
    """What taking over needs of the uploader (olparser.adapters.catalog.CatalogUploader): its reads and writes,
    retried, in URL-sized chunks, besides deleting."""

    def read(self, keys: Iterable[Key], calls: list[int]) -> dict[Key, dict[str, Any]]: ...
    def read_guids(self, guids: Iterable[str], calls: list[int]) -> list[dict[str, Any]]: ...
    def write_entities(self, entities: list[dict[str, Any]], calls: list[int]) -> dict[str, Any]: ...


# --- reading the catalog ---------------------------------------------------------------------------------------------
def references(entity: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """The active object ids of a relationship (or legacy) attribute, from `relationshipAttributes`, else
    `attributes`."""
    value = (entity.get("relationshipAttributes") or {}).get(name)
    if value is None:
        value = (entity.get("attributes") or {}).get(name)
    items = value if isinstance(value, list) else [value] if isinstance(value, dict) else []
    return [
        item
        for item in items
        if isinstance(item, dict)
        and item.get("entityStatus", "ACTIVE") == "ACTIVE"
        and item.get("relationshipStatus", "ACTIVE") == "ACTIVE"
    ]


def reference_key(item: dict[str, Any]) -> Key | None:
    name = (item.get("uniqueAttributes") or {}).get("qualifiedName")
    type_name = item.get("typeName")
    return (type_name, name) if isinstance(type_name, str) and isinstance(name, str) else None


def entity_key(entity: dict[str, Any]) -> Key:
    return str(entity.get("typeName")), str((entity.get("attributes") or {}).get("qualifiedName"))


def estate_process(entity: dict[str, Any]) -> EstateProcess:
    owners = [k for k in map(reference_key, references(entity, "task")) if k is not None]
    return EstateProcess(
        entity_key(entity),
        owners[0] if owners else None,
        tuple(k for k in map(reference_key, references(entity, "inputs")) if k is not None),
        tuple(k for k in map(reference_key, references(entity, "outputs")) if k is not None),
    )


@dataclass
class OwnerReads:
    """Runnables as read from the catalog, with what hangs under them."""

    owners: dict[Key, dict[str, Any]]

    def processes(self) -> list[dict[str, Any]]:
        return [item for owner in self.owners.values() for item in references(owner, "processes")]

    def around(self) -> set[Key]:
        """The runnables and what holds them (their job, their workspace)."""
        keys = set(self.owners)
        for owner in self.owners.values():
            for name in ("job", "workspace"):
                keys.update(k for k in map(reference_key, references(owner, name)) if k is not None)
        return keys


def read_owners(catalog: EstateCatalog, guids: Iterable[str], calls: list[int]) -> OwnerReads:
    return OwnerReads({entity_key(e): e for e in catalog.read_guids(sorted(set(guids)), calls)})


def successors_under(
    catalog: EstateCatalog, store: RunStateStore, owners: OwnerReads, calls: list[int]
) -> tuple[EstateProcess, ...]:
    """The connector's processes under these runnables: not hash-named, and held by the ledger."""
    candidates = {
        key: item["guid"]
        for item in owners.processes()
        if (key := reference_key(item)) is not None
        and key[0] == PROCESS_TYPE
        and hashed_owner(key[1]) is None
        and isinstance(item.get("guid"), str)
    }
    ours = store.owned(candidates)
    if not ours:
        return ()
    return tuple(estate_process(e) for e in catalog.read_guids(sorted(candidates[k] for k in ours), calls))


def read_estate(
    catalog: EstateCatalog, guids_of_type: Any, store: RunStateStore, calls: list[int]
) -> tuple[Estate, dict[Key, dict[str, Any]]]:
    """The estate as the catalog and the ledger hold it, and the accelerator's processes as read (by key)."""
    processes = catalog.read_guids(list(guids_of_type(PROCESS_TYPE)), calls)
    accelerator = {entity_key(e): e for e in processes if hashed_owner(entity_key(e)[1]) is not None}
    owner_guids = [item["guid"] for e in accelerator.values() for item in references(e, "task") if "guid" in item]
    owners = read_owners(catalog, owner_guids, calls)
    estate_processes = tuple(estate_process(e) for e in accelerator.values())
    placeholder_guids = {
        item["guid"]
        for e in accelerator.values()
        for name in ("inputs", "outputs")
        for item in references(e, name)
        if item.get("typeName") == PLACEHOLDER_TYPE and isinstance(item.get("guid"), str)
    }
    placeholders = {
        entity_key(e): str((e.get("attributes") or {}).get("data_type") or "")
        for e in catalog.read_guids(sorted(placeholder_guids), calls)
    }
    wanted = [(data_type, key[1]) for key, data_type in placeholders.items() if data_type]
    existing = frozenset(catalog.read(wanted, calls)) if wanted else frozenset()
    estate = Estate(
        accelerator=estate_processes,
        successors=successors_under(catalog, store, owners, calls),
        placeholders=placeholders,
        existing=existing,
        owners=tuple(sorted(owners.around())),
        registered=frozenset(t.process for t in store.pending_takeovers()),
    )
    return estate, accelerator


# --- carrying the plan out -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ApplyReport:
    registered: int = 0
    repointed: int = 0
    retired: int = 0
    deleted: int = 0
    calls: int = 0


def settle_takeovers(store: RunStateStore, catalog: Uploader, resolver: Resolver | None, now: float) -> int:
    """Carry out what a crash left of earlier take-over commits; the entities deleted."""
    deleted, write = 0, CatalogWrite(store, catalog, resolver, serial=False)
    for entry in store.pending_takeovers():
        result = store.settle(entry.run_key, now=now)
        if result is not None:
            deleted += finish_catalog_work(write, [(entry.run_key, result)])[0]
    return deleted


def apply_migration(
    plan: MigrationPlan,
    accelerator: dict[Key, dict[str, Any]],
    store: RunStateStore,
    catalog: EstateCatalog,
    resolver: Resolver | None,
    *,
    now: float,
) -> ApplyReport:
    """Carry the plan out (see the module docstring): take every accelerator process over in the ledger, repoint the
    pending ones away from placeholders that have a real dataset, retire the processes whose successor exists, then
    let the repointed placeholders go. Each step is idempotent."""
    calls = [0]
    deleted = settle_takeovers(store, catalog, resolver, now)
    entries = [
        Takeover(
            process=p.key,
            owner=p.owner[1] if p.owner else "",
            output=p.output[1].lower() if p.output else "",
            run_key=takeover_run_key(p.key),
            keys=(p.key, *sorted({k for k in p.datasets() if k[0] == PLACEHOLDER_TYPE})),
            registered_at=now,
            checked_at=now,
        )
        for p in plan.taken_over
    ]
    for entry in entries:  # held by the ledger from now on: prune, remap and deletes treat them as the connector's
        store.claim(entry.run_key, entry.keys, now=now)
        store.commit(entry.run_key, entry.keys, version=None, fingerprint=TAKEOVER_FINGERPRINT, now=now)
    store.register_takeovers(entries)
    repoint = dict(plan.repoint)
    repointed = [p for p in plan.pending if any(k in repoint for k in p.datasets())]
    if repointed:
        catalog.write_entities([_repointed(accelerator[p.key], repoint) for p in repointed], calls)
    by_key = {e.process: e for e in entries}
    retired = [by_key[process] for process, _ in plan.retire]
    deleted += retire(store, catalog, resolver, retired, now=now)
    write = CatalogWrite(store, catalog, resolver, serial=False)
    for process in repointed:
        kept = (process.key, *plan.placeholders_of(process))
        deleted += _commit(write, by_key[process.key].run_key, kept, now)
    return ApplyReport(len(entries), len(repointed), len(retired), deleted, calls[0])


def _repointed(entity: dict[str, Any], links: dict[Key, Key]) -> dict[str, Any]:
    """A partial update of an accelerator process: its inputs, outputs and columnMapping with the placeholders
    replaced by their real datasets (nothing else is sent: Atlas keeps what an update leaves out)."""
    attributes = entity.get("attributes") or {}
    current = {
        "inputs": [_object_id(i) for i in references(entity, "inputs")],
        "outputs": [_object_id(o) for o in references(entity, "outputs")],
        "columnMapping": attributes.get("columnMapping") or "",
    }
    rewritten = relink_attributes(current, links)
    return {
        "typeName": entity["typeName"],
        "guid": entity["guid"],
        "attributes": {"qualifiedName": attributes.get("qualifiedName"), "name": attributes.get("name"), **rewritten},
    }


def _object_id(item: dict[str, Any]) -> dict[str, Any]:
    return {"typeName": item.get("typeName"), "uniqueAttributes": dict(item.get("uniqueAttributes") or {})}


def _commit(write: CatalogWrite, run_key: str, keys: Sequence[Key], now: float) -> int:
    """A take-over run's keys committed, then the catalog work the commit left (deletions, done)."""
    result = write.store.commit(run_key, keys, version=None, fingerprint=TAKEOVER_FINGERPRINT, now=now)
    return finish_catalog_work(write, [(run_key, result)])[0]


def retire(
    store: RunStateStore, catalog: Uploader, resolver: Resolver | None, entries: Sequence[Takeover], *, now: float
) -> int:
    """Let these taken-over processes go (their successor is written): the ledger releases each with its placeholders,
    deletes what no run uses any more, and forgets the take-over. Returns the entities deleted."""
    deleted, write = 0, CatalogWrite(store, catalog, resolver, serial=False)
    for entry in entries:
        store.claim(entry.run_key, entry.keys, now=now)  # the run's record may have expired: claiming again is free
        deleted += _commit(write, entry.run_key, (), now)
    if entries:
        store.forget_takeovers([e.process for e in entries])
        log.info("retired %d process(es) the accelerator wrote: their successors are written", len(entries))
    return deleted


# --- when a successor is written ---------------------------------------------------------------------------------------
class Takeovers:
    """The take-overs still waiting for their successor, by owner, as this process last read them (the re-link tick
    reads them; the first use reads them once). Thread-safe."""

    def __init__(self) -> None:
        self._by_owner: dict[str, list[Takeover]] | None = None
        self._lock = threading.Lock()

    def refresh(self, entries: Iterable[Takeover]) -> None:
        by_owner: dict[str, list[Takeover]] = {}
        for entry in entries:
            by_owner.setdefault(entry.owner, []).append(entry)
        with self._lock:
            self._by_owner = by_owner

    def loaded(self) -> bool:
        return self._by_owner is not None

    def matching(self, written: Iterable[tuple[str, str]]) -> list[Takeover]:
        """The take-overs whose successor is among `written`: (owner qualifiedName, output qualifiedName)."""
        with self._lock:
            by_owner = self._by_owner or {}
            found = {
                entry.process: entry
                for owner, output in written
                for entry in by_owner.get(owner, ())
                if entry.output == output.lower()
            }
        return [found[k] for k in sorted(found)]

    def forget(self, entries: Iterable[Takeover]) -> None:
        gone = {e.process for e in entries}
        with self._lock:
            if self._by_owner is not None:
                self._by_owner = {
                    owner: kept
                    for owner, listed in self._by_owner.items()
                    if (kept := [e for e in listed if e.process not in gone])
                }


def written_pairs(entities: Iterable[dict[str, Any]]) -> list[tuple[str, str]]:
    """(owner, output) of the databricks_processes of a written plan."""
    pairs = []
    for entity in entities:
        if entity.get("typeName") != PROCESS_TYPE:
            continue
        owner = reference_key(((entity.get("relationshipAttributes") or {}).get("task")) or {})
        outputs = (entity.get("attributes") or {}).get("outputs") or []
        output = reference_key(outputs[0]) if outputs and isinstance(outputs[0], dict) else None
        if owner is not None and output is not None:
            pairs.append((owner[1], output[1]))
    return pairs


def sweep_takeovers(
    store: RunStateStore,
    catalog: EstateCatalog,
    resolver: Resolver | None,
    index: Takeovers,
    *,
    now: float,
    limit: int,
) -> tuple[int, int]:
    """The re-link tick's part: the least recently checked take-overs whose successor the catalog now holds are
    retired (and those whose process is gone from the catalog, with what they held); the others are checked. Returns
    (retired, catalog calls)."""
    calls = [0]
    entries = store.pending_takeovers()
    index.refresh(entries)
    batch = entries[:limit]
    if not batch:
        return 0, 0
    found = catalog.read([e.process for e in batch], calls)
    owners = read_owners(
        catalog, [item["guid"] for e in found.values() for item in references(e, "task") if "guid" in item], calls
    )
    successors = successors_under(catalog, store, owners, calls)
    done = [
        e
        for e in batch
        if e.process not in found or successor_of(estate_process(found[e.process]), successors) is not None
    ]
    retire(store, catalog, resolver, done, now=now)
    index.forget(done)
    store.checked_takeovers([e.process for e in batch if e not in done], now=now)
    return len(done), calls[0]
