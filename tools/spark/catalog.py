"""The catalog edge of a backfill: a call rate shared by every task, what the catalog already holds, bulk writes of
many runs per call, and removing placeholders. Every call goes through the live path's retry policy and uploader.

- `RateLimiter`: calls spaced 1/rate apart (a task gets the global rate divided by the number of upload tasks).
- `ThrottledClient`: a catalog client whose every HTTP call waits for the limiter (retries included).
- `process_verdict`: write, unchanged (the catalog holds the same process) or superseded (the catalog holds it
  from a newer run, by `lastRunTime`).
- `PlanWriter`: one task's share of the plans: resolves their datasets against the scanned assets with the live
  path's `ScannedAssetResolver` (all runs of the task together: one lookup per type, the answers cached for the
  task) and links each plan (`link_plan`), reads the processes they write (one GET per type and URL-sized chunk),
  drops the unchanged and superseded ones, packs the rest (`olparser.lineage.combine`) and uploads each pack with
  `CatalogUploader` in one bulk call. Through the live path's run-state store (`registry`) it keeps the live path's
  ledger (claim, upload, commit, delete what no run uses any more), the interim datasets the live path created
  count as the connector's and those the backfill creates are registered for the re-link timer.
- `delete_entities`: `DELETE /entity/bulk?guid=...` of entities already read (the remap reads the placeholders with
  their relationships to see which are unused, so their guids are known: `CatalogUploader.delete`, which looks them
  up by key, would read them a second time).
"""
from __future__ import annotations

import functools
import json
import logging
import threading
import time
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping

from olparser.adapters.catalog import CatalogUploader, RetryPolicy, entity_type_names, load_typedefs
from olparser.adapters.catalog.existence import existence_cache_for, guid_batches
from olparser.adapters.catalog.placement import placement_from_settings
from olparser.adapters.catalog.resolver import resolver_for
from olparser.history import RunHistoryStore, with_run_history
from olparser.lineage import PROCESS_TYPES, LineagePlan, plan_fingerprint
from olparser.lineage.combine import combine_plans, pack_plans
from olparser.lineage.lifecycle import LifecycleChanges, standing
from olparser.runs.marks import LifecycleMark
from olparser.lineage.link import link_plan
from olparser.lineage.plan import is_process
from olparser.resolution.model import candidates_to_json
from olparser.lineage.datasets import PLACEHOLDER_TYPE
from olparser.lineage.entities import JSON, Key, key_of
from olparser.pipeline import apply_lifecycle, delete_orphans, wait_for_deletions
from olparser.runs import RunStateStore
from olparser.settings import TYPEDEFS_DIR, Settings

from .records import event_instant
from .runs import Selected

log = logging.getLogger(__name__)
WRITE, UNCHANGED, SUPERSEDED = "write", "unchanged", "superseded"


class RateLimiter:
    """At most `rate` calls per second: each call waits for its slot, slots 1/rate apart (no bursts)."""

    def __init__(self, rate: float | None, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.interval = 1.0 / rate if rate else 0.0
        self._clock, self._sleep = clock, sleep
        self._next = 0.0
        self._lock = threading.Lock()

    def acquire(self) -> None:
        if not self.interval:
            return
        with self._lock:
            now = self._clock()
            slot = max(now, self._next)
            self._next = slot + self.interval
        if slot > now:
            self._sleep(slot - now)


class ThrottledClient:
    """The calls of a catalog client, each one after the rate limiter let it go."""

    def __init__(self, client: Any, limiter: RateLimiter) -> None:
        self._client = client
        self._limiter = limiter
        self.endpoint_url = client.endpoint_url
        self.type_prefix = getattr(client, "type_prefix", "")  # TYPE_PREFIX: registration prefixes the typedefs

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        self._limiter.acquire()
        return getattr(self._client, name)(*args, **kwargs)

    def find_entities(self, type_name: str, qualified_names: list[str]) -> list[dict[str, Any]]:
        return self._call("find_entities", type_name, qualified_names)

    def find_entities_with_relationships(self, type_name: str, qualified_names: list[str]) -> list[dict[str, Any]]:
        return self._call("find_entities_with_relationships", type_name, qualified_names)

    def entities_by_guid(self, guids: list[str]) -> list[dict[str, Any]]:
        return self._call("entities_by_guid", guids)

    def upload_bulk(self, entities: list[dict[str, Any]], collection_id: str | None = None) -> dict[str, Any]:
        return self._call("upload_bulk", entities, **({"collection_id": collection_id} if collection_id else {}))

    def collections(self) -> list[dict[str, Any]]:
        return self._call("collections")

    def search_assets(self, query: dict[str, Any]) -> list[tuple[str, str]]:
        return self._call("search_assets", query)

    def resource_set_rule_config(self) -> dict[str, Any]:
        return self._call("resource_set_rule_config")

    def delete_guids(self, guids: list[str]) -> dict[str, Any]:
        return self._call("delete_entity", guid=list(guids)) or {}

    def typedef_headers(self) -> list[dict[str, Any]]:
        return self._call("typedef_headers")

    def typedefs(self) -> dict[str, Any]:
        return self._call("typedefs")

    def create_typedefs(self, typedefs: dict[str, Any]) -> dict[str, Any]:
        return self._call("create_typedefs", typedefs)

    def update_typedefs(self, typedefs: dict[str, Any]) -> dict[str, Any]:
        return self._call("update_typedefs", typedefs)


def read_entities(uploader: CatalogUploader, keys: Iterable[Key], calls: list[int]) -> dict[Key, JSON]:
    """The ACTIVE entities among `keys`, with relationships (the live path's uploader: one GET per type and
    URL-sized chunk)."""
    return uploader.read(keys, calls)


def _reference_keys(value: Any) -> list[Key] | None:
    """(typeName, qualifiedName) of an object id or a list of them, sorted; None when one has no unique name."""
    items = value if isinstance(value, list) else [value]
    keys = []
    for item in items:
        if not isinstance(item, dict):
            return None
        qualified_name = (item.get("uniqueAttributes") or {}).get("qualifiedName")
        if not isinstance(qualified_name, str):
            return None
        keys.append((item.get("typeName"), qualified_name))
    return sorted(keys)  # type: ignore[arg-type]  # an object id with a unique name names its type


def _is_reference(value: Any) -> bool:
    items = value if isinstance(value, list) else [value]
    return bool(items) and all(isinstance(i, dict) and "uniqueAttributes" in i for i in items)


def process_verdict(ours: JSON, theirs: JSON | None) -> str:
    """`superseded` when the catalog's version comes from a newer run, `unchanged` when it holds what we would
    write (every attribute and reference we send), else `write`."""
    if theirs is None:
        return WRITE
    their_attributes = theirs.get("attributes") or {}
    our_time = event_instant(ours["attributes"].get("lastRunTime"))
    their_time = event_instant(their_attributes.get("lastRunTime"))
    if our_time is not None and their_time is not None and their_time > our_time:
        return SUPERSEDED
    their_relations = {**their_attributes, **(theirs.get("relationshipAttributes") or {})}
    for name, value in ours["attributes"].items():
        if _is_reference(value):
            if _reference_keys(value) != _reference_keys(their_relations.get(name, [])):
                return WRITE
        elif their_attributes.get(name) != value:
            return WRITE
    for name, value in (ours.get("relationshipAttributes") or {}).items():
        if _reference_keys(value) != _reference_keys(their_relations.get(name)):
            return WRITE
    return UNCHANGED


def replaced_placeholders(ours: JSON, theirs: JSON | None) -> set[str]:
    """Placeholders (`openlineage_dataset`) the catalog's version of a process references and ours no longer does."""
    if theirs is None:
        return set()
    names: set[str] = set()
    for attribute in ("inputs", "outputs"):
        before = _reference_keys((theirs.get("attributes") or {}).get(attribute) or []) or []
        after = set(_reference_keys(ours["attributes"].get(attribute) or []) or [])
        names |= {qn for type_name, qn in before if type_name == PLACEHOLDER_TYPE and (type_name, qn) not in after}
    return names


@dataclass
class WriteStats:
    """What one task's writes did."""

    written: int = 0
    unchanged: int = 0
    superseded: int = 0
    requests: int = 0
    calls: int = 0
    placeholders: set[str] = field(default_factory=set)  # placeholders that processes stopped referencing
    links: dict[Key, Key] = field(default_factory=dict)  # datasets linked to another asset: key -> the asset's key
    deleted: int = 0  # entities deleted because no run uses them any more (the run-state ledger)

    def add(self, other: "WriteStats") -> "WriteStats":
        return WriteStats(self.written + other.written, self.unchanged + other.unchanged,
                          self.superseded + other.superseded, self.requests + other.requests,
                          self.calls + other.calls, self.placeholders | other.placeholders,
                          {**self.links, **other.links}, self.deleted + other.deleted)


class PlanWriter:
    """Writes plans of many runs through one CatalogUploader and one resolver (their caches shared by all of them).

    `registry`: the live path's run-state store. Through it the writes keep the live path's ledger: each run claims
    what its plan has before the upload and commits it after, and what an earlier plan of the same run had that no
    run uses any more is deleted (a remap's old process and its placeholders), as the live path's runner does."""

    def __init__(self, client: ThrottledClient, settings: Settings, bulk_size: int | None = None,
                 registry: RunStateStore | None = None, history: RunHistoryStore | None = None) -> None:
        self.client = client
        cache = existence_cache_for(settings)
        self.uploader = CatalogUploader(client, settings=settings, cache=cache,
                                        connector_types=entity_type_names(load_typedefs(TYPEDEFS_DIR)),
                                        placement=placement_from_settings(client, settings))
        self.bulk_size = bulk_size or settings.catalog_bulk_size
        self.registry = registry
        self.resolver = resolver_for(client, settings, cache, owned=registry.interim_keys if registry else None) \
            if settings.resolve_scanned_assets else None
        self.history = history  # the processes' runCount and firstRunTime come from it, as on the live path

    def write(self, selected: Iterable[Selected]) -> WriteStats:
        stats = WriteStats()
        selected = list(selected)
        stats.superseded = sum(s.superseded for s in selected)
        calls = [0]
        selected, interim = self._linked(selected, calls, stats.links)
        runs = [s for s in selected if s.plan is not None]
        if self.history is not None:
            summaries = self.history.process_summaries(
                sorted({n for s in runs for n in s.plan.process_names()}))  # type: ignore[union-attr]  # runs: planned
            # Why the type error is ignored: runs: the selected runs with a plan (filtered above)
            runs = [replace(s, plan=with_run_history(s.plan, summaries)) for s in runs]  # type: ignore[arg-type]
        self._claim(runs)
        # Why the type error is ignored: runs: the selected runs with a plan (filtered above)
        processes = {key_of(e): e for s in runs for e in s.plan.entities if is_process(e)}  # type: ignore[union-attr]
        held = read_entities(self.uploader, processes, calls) if processes else {}
        skip: set[str] = set()
        for key, ours in processes.items():
            verdict = process_verdict(ours, held.get(key))
            if verdict == WRITE:
                stats.written += 1
                stats.placeholders |= replaced_placeholders(ours, held.get(key))
            else:
                skip.add(key[1])
                stats.unchanged += verdict == UNCHANGED
                stats.superseded += verdict == SUPERSEDED
        # Why the type error is ignored: runs: the selected runs with a plan (filtered above)
        plans = [plan for plan in (_without(s.plan, skip) for s in runs) if plan is not None]  # type: ignore[arg-type]
        for group in pack_plans(plans, self.bulk_size, lambda plan: plan):
            report = self.uploader.upload(combine_plans(group))
            stats.requests += 1
            calls[0] += report.calls
            created = set(report.created) & set(interim)
            if created and self.registry is not None:
                self.registry.register_interim({k: json.dumps(candidates_to_json(interim[k]), separators=(",", ":"))
                                                for k in created})
        stats.deleted = self._commit(runs, calls)
        stats.calls = calls[0]
        return stats

    def apply_lifecycle(self, changes: list[tuple[str, LifecycleChanges]], links: dict[Key, Key],
                        marks: Mapping[Key, LifecycleMark] | None = None) -> WriteStats:
        """After every write of the batch, in the runs' time order: the tables these runs drop and rename (each
        run's key with its changes, those a newer run of the batch undoes left out: `LifecycleChanges.newer_than`),
        as the live runner applies them (`olparser.pipeline.apply_lifecycle`, one implementation): what the
        connector created for a dropped table is deleted, what it created for a renamed one moves to the new name
        (`links`: the writes' links to scanned assets). Needs the run-state store (which knows the interim
        entities). `marks` (`runs.batch_marks`) are recorded in it, as the live path records them; a change the
        live path recorded that still stands over what the batch wrote is applied too."""
        stats = WriteStats()
        if self.registry is None:
            return stats
        calls = [0]
        now = time.time()
        merged = self.registry.record_lifecycle(marks, now=now) if marks else {}
        for key, change in changes:
            stats.deleted += apply_lifecycle(change, self.uploader, self.registry, self.resolver, _no_lock, links,
                                             calls, now, label=f"run {key}")
        applied = {k for _, change in changes for k in change.keys()}
        live = standing({k: mark for k, mark in merged.items() if k not in applied})
        if live:
            stats.deleted += apply_lifecycle(live, self.uploader, self.registry, self.resolver, _no_lock, {}, calls,
                                             now, label="changes recorded by the live path")
        stats.calls = calls[0]
        return stats

    def _claim(self, runs: list[Selected]) -> None:
        """Before the upload: each run counts as a user of what its plan has; wait for a deletion of one of those
        entities that a live worker has under way."""
        if self.registry is None:
            return
        contested: set[Key] = set()
        for selected in runs:
            contested |= self.registry.claim(selected.key, selected.owned_keys())
        wait_for_deletions(self.registry, frozenset(contested), time.time, time.sleep)

    def _commit(self, runs: list[Selected], calls: list[int]) -> int:
        """After the upload: record each run's plan as what it has written, then delete what no run uses any more
        (what earlier plans of these runs had and theirs lack) and tell the store it is done. A run that dropped a
        process whose older writer still has it leaves that restore pending in the store: the live path's timer
        carries it out (the older run's state is there, not in this batch). Returns how many entities were
        deleted."""
        if self.registry is None:
            return 0
        results = [(selected.key, self.registry.commit(
            selected.key, selected.owned_keys(), version=None,
            # Why the type error is ignored: only a selected run with a plan is committed
            fingerprint=plan_fingerprint(selected.plan),  # type: ignore[arg-type]
            process_names=selected.processes, run_time=selected.run_time, process_types=PROCESS_TYPES))
            for selected in runs]
        orphans = tuple(sorted({key for _, result in results for key in result.orphans}))
        deleted, delete_calls = delete_orphans(self.registry, self.uploader, orphans, self.resolver)  # one request
        calls[0] += delete_calls
        for key, result in results:
            if result.restores:
                log.info("run %s: %d process(es) it no longer has go back to their older writers; the live path's "
                         "timer writes them", key, len(result.restores))
            elif result.epoch is not None:
                self.registry.done(key, result.epoch)
        return deleted

    def _linked(self, selected: list[Selected], calls: list[int],
                links: dict[Key, Key]) -> tuple[list[Selected], dict[Key, Any]]:
        """The plans linked to the scanned assets their datasets resolve to (one resolution for all of them), and
        the interim datasets with their candidates; `links` gets the datasets linked to another asset."""
        if self.resolver is None:
            return selected, {}
        datasets = list(dict.fromkeys(d for s in selected if s.plan is not None for d in s.plan.datasets))
        if not datasets:
            return selected, {}
        resolution = self.resolver.resolve(datasets, bounded=False)  # the backfill's call rate bounds it
        calls[0] += resolution.calls
        links.update((source, target) for source, target in resolution.links.items() if source != target)
        if resolution.taken_over and self.registry is not None:
            self.registry.forget_interim(resolution.taken_over)
        linked = [replace(s, plan=link_plan(s.plan, resolution.links, resolution.interim)) if s.plan is not None
                  else s for s in selected]
        return linked, resolution.interim


def _no_lock(names: Iterable[str]) -> nullcontext[None]:
    return nullcontext()


def _without(plan: LineagePlan, skipped: set[str]) -> LineagePlan | None:
    """The plan minus skipped processes; None when it had processes and none is left to write."""
    names = plan.process_names()
    lost = skipped.intersection(names)
    if not lost:
        return plan
    return None if len(lost) == len(names) else plan.without_processes(lost)


def delete_entities(client: ThrottledClient, retry: RetryPolicy, entities: Iterable[JSON], calls: list[int]) -> int:
    """Delete entities read from the catalog (they carry their guids): `DELETE /entity/bulk?guid=...` in chunks."""
    guids = sorted({e["guid"] for e in entities if isinstance(e.get("guid"), str)})
    for chunk in guid_batches(client.endpoint_url, guids):
        retry.run("delete", functools.partial(client.delete_guids, chunk), calls)
    return len(guids)
