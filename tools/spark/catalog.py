"""The catalog edge of a backfill: a call rate shared by every task, what the catalog already holds, bulk writes of
many runs per call, and removing placeholders. Every call goes through the live path's retry policy and uploader.

- `RateLimiter`: calls spaced 1/rate apart (a task gets the global rate divided by the number of upload tasks).
- `ThrottledClient`: a catalog client whose every HTTP call waits for the limiter (retries included).
- `process_verdict`: write, or unchanged (the catalog holds the same process).
- `PlanWriter`: one task's share of the plans: resolves their datasets against the scanned assets with the live
  path's `ScannedAssetResolver` (all runs of the task together: one lookup per type, the answers cached for the
  task) and links each plan (`link_plan`), then writes them through the live path's own write procedure
  (olparser/pipeline/writing.py `write_plans` and `finish_catalog_work`) with the live path's run-state store (`registry`):
  claim, the store's newer-run test, upload, commit, delete what no run uses any more, done. Its own parts are the
  batch's: it reads the processes the plans write (one GET per type and URL-sized chunk) and drops the unchanged
  ones, and packs the rest (`olparser.lineage.combine`) into one bulk call each. The interim datasets the live path
  created count as the connector's and those the backfill creates are registered for the re-link timer.
- `delete_entities`: `DELETE /entity/bulk?guid=...` of entities already read (the remap reads the placeholders with
  their relationships to see which are unused, so their guids are known: `CatalogUploader.delete`, which looks them
  up by key, would read them a second time).
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Callable, Iterable, Mapping

from olparser.adapters.catalog import CatalogUploader, RetryPolicy
from olparser.adapters.catalog.existence import guid_batches
from olparser.adapters.runtime import Runtime
from olparser.catalog_rules import REBUILD, RETRIES
from olparser.history import RunHistoryStore, with_run_history
from olparser.jsontypes import JSON
from olparser.lineage import LineagePlan
from olparser.lineage.combine import combine_plans, pack_plans
from olparser.lineage.datasets import PLACEHOLDER_TYPE
from olparser.lineage.entities import Key, key_of
from olparser.lineage.lifecycle import LifecycleChanges, standing
from olparser.lineage.link import link_plan, task_links
from olparser.lineage.plan import is_process
from olparser.pipeline import apply_lifecycle
from olparser.pipeline.ports import Resolver
from olparser.pipeline.writing import CatalogWrite, RunWrite, finish_catalog_work, write_plans
from olparser.resolution.model import Resolution
from olparser.runs import RunSession, RunStateStore
from olparser.runs.marks import LifecycleMark
from olparser.settings import Settings

from .runs import Selected

log = logging.getLogger(__name__)
# a linked scanned asset vanished during the upload: the plans are resolved again, at most so often (the live path's)
MAX_RESOLUTIONS = RETRIES[REBUILD].attempts
WRITE, UNCHANGED = "write", "unchanged"


class RateLimiter:
    """At most `rate` calls per second: each call waits for its slot, slots 1/rate apart (no bursts)."""

    def __init__(
        self,
        rate: float | None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
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
    """`unchanged` when the catalog holds what we would write (every attribute and reference we send), else
    `write`. Whether a newer run wrote the process is the run-state store's answer (`writing.newer_writers`), not
    the catalog's: such a process is not read at all."""
    if theirs is None:
        return WRITE
    their_attributes = theirs.get("attributes") or {}
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
        return WriteStats(
            self.written + other.written,
            self.unchanged + other.unchanged,
            self.superseded + other.superseded,
            self.requests + other.requests,
            self.calls + other.calls,
            self.placeholders | other.placeholders,
            {**self.links, **other.links},
            self.deleted + other.deleted,
        )


class PlanWriter:
    """Writes plans of many runs through one CatalogUploader and one resolver (their caches shared by all of them).

    `registry`: the live path's run-state store (needed to write). Through it the writes keep the live path's ledger
    with the live path's procedure (olparser/pipeline/writing.py): each run claims what its plan has before the upload and
    commits it after, a process a newer run wrote (the store says so) is left alone, and what an earlier plan of
    the same run had that no run uses any more is deleted (a remap's old process and its placeholders)."""

    def __init__(
        self,
        uploader: CatalogUploader,
        registry: RunStateStore | None,
        resolver: Resolver | None,
        history: RunHistoryStore | None = None,
        bulk_size: int = 100,
    ) -> None:
        self.uploader = uploader
        self.bulk_size = bulk_size
        self.registry = registry
        self.resolver = resolver  # None: RESOLVE_SCANNED_ASSETS off
        self.history = history  # the processes' runCount and firstRunTime come from it, as on the live path
        # the writer's one CatalogWrite: the batch writes alone in its process, so no process locks (the live
        # workers' ledger still orders the writes)
        self.catalog = CatalogWrite(registry, uploader, resolver, serial=False) if registry is not None else None

    @classmethod
    def build(
        cls,
        client: ThrottledClient,
        settings: Settings,
        bulk_size: int | None = None,
        registry: RunStateStore | None = None,
        history: RunHistoryStore | None = None,
    ) -> "PlanWriter":
        """The writer over the live path's composition (olparser/adapters/runtime.py `Runtime`): its uploader and resolver."""
        parts = Runtime(settings, catalog_client=client, run_state_store=registry)
        resolver = parts.resolver() if registry is not None else None
        return cls(parts.catalog_uploader(), registry, resolver, history, bulk_size or settings.catalog_bulk_size)

    def write(self, selected: Iterable[Selected]) -> WriteStats:
        """Write the runs' plans through the one write procedure (olparser/pipeline/writing.py `write_plans`: claim, the
        run-state store's newer-run test, upload with the interim datasets registered, commit; `finish_catalog_work`:
        delete what no run uses any more, done), many runs per bulk call. The processes the catalog already holds as
        they would be written are not uploaded again (one read per type and URL-sized chunk)."""
        if self.registry is None or self.catalog is None:
            raise ValueError("PlanWriter.write needs the run-state store (registry)")
        stats = WriteStats()
        catalog = self.catalog
        selected = list(selected)
        stats.superseded = sum(s.superseded for s in selected)
        calls = [0]
        for _ in range(MAX_RESOLUTIONS):
            linked, resolution = self._linked(selected, calls, stats.links)
            runs = [s for s in linked if s.plan is not None]
            if self.history is not None:
                # Why the type errors are ignored: runs: the selected runs with a plan (filtered above)
                summaries = self.history.process_summaries(sorted({n for s in runs for n in s.plan.process_names()}))  # type: ignore[union-attr]
                runs = [replace(s, plan=with_run_history(s.plan, summaries)) for s in runs]  # type: ignore[arg-type]
            verdicts = WriteStats()
            written = write_plans(
                catalog,
                [_run_write(s) for s in runs],
                resolution,
                session=RunSession(),  # the batch's: its commits check what its newer-run test read
                select=partial(self._changed, calls=calls, stats=verdicts),
                pack=lambda plans: [combine_plans(group) for group in pack_plans(plans, self.bulk_size, _itself)],
            )
            if written is not None:
                break
        else:
            raise RuntimeError("the scanned assets the plans link to kept vanishing while they were written")
        calls[0] += written.calls
        stats.written, stats.unchanged, stats.placeholders = verdicts.written, verdicts.unchanged, verdicts.placeholders
        stats.superseded += sum(len(c.superseded) for c in written.committed)
        stats.requests = written.requests
        stats.deleted, delete_calls = finish_catalog_work(
            catalog, [(c.run.key, c.result) for c in written.committed]
        )  # one request
        stats.calls = calls[0] + delete_calls
        return stats

    def _changed(
        self, chosen: list[tuple[RunWrite, LineagePlan]], calls: list[int], stats: WriteStats
    ) -> list[LineagePlan]:
        """The plans minus the processes the catalog already holds as they would be written (`process_verdict`);
        `stats` counts the written and unchanged processes and the placeholders written processes stop using."""
        processes = {key_of(e): e for _, plan in chosen for e in plan.entities if is_process(e)}
        held = read_entities(self.uploader, processes, calls) if processes else {}
        skip: set[str] = set()
        for key, ours in processes.items():
            if process_verdict(ours, held.get(key)) == WRITE:
                stats.written += 1
                stats.placeholders |= replaced_placeholders(ours, held.get(key))
            else:
                skip.add(key[1])
                stats.unchanged += 1
        return [plan for plan in (_without(plan, skip) for _, plan in chosen) if plan is not None]

    def apply_lifecycle(
        self,
        changes: list[tuple[str, LifecycleChanges]],
        links: dict[Key, Key],
        marks: Mapping[Key, LifecycleMark] | None = None,
    ) -> WriteStats:
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
            stats.deleted += apply_lifecycle(
                change, self.uploader, self.registry, self.resolver, _no_lock, links, calls, now, label=f"run {key}"
            )
        applied = {k for _, change in changes for k in change.keys()}
        live = standing({k: mark for k, mark in merged.items() if k not in applied})
        if live:
            stats.deleted += apply_lifecycle(
                live,
                self.uploader,
                self.registry,
                self.resolver,
                _no_lock,
                {},
                calls,
                now,
                label="changes recorded by the live path",
            )
        stats.calls = calls[0]
        return stats

    def _linked(
        self, selected: list[Selected], calls: list[int], links: dict[Key, Key]
    ) -> tuple[list[Selected], Resolution | None]:
        """The plans linked to the scanned assets their datasets resolve to (one resolution for all of them, which
        has the interim datasets with their candidates); `links` gets the datasets linked to another asset."""
        if self.resolver is None:
            return selected, None
        datasets = list(dict.fromkeys(d for s in selected if s.plan is not None for d in s.plan.datasets))
        extra = {k: v for s in selected if s.plan is not None for k, v in s.plan.resolution_extra().items()}
        tasks = list(dict.fromkeys(s.plan.task for s in selected if s.plan is not None and s.plan.task is not None))
        if not datasets and not extra and not tasks:
            return selected, None
        # the backfill's call rate bounds it
        resolution = self.resolver.resolve(datasets, bounded=False, extra=extra, tasks=tasks)
        calls[0] += resolution.calls
        links.update((source, target) for source, target in resolution.links.items() if source != target)
        for s in selected:  # a job run's task that stands for the builder's: its history record's owner
            if s.plan is not None:
                links.update(task_links(s.plan, resolution.tasks))
        if resolution.taken_over and self.registry is not None:
            self.registry.forget_interim(resolution.taken_over)
        linked = [
            replace(s, plan=link_plan(s.plan, resolution.links, resolution.interim, resolution.tasks))
            if s.plan is not None
            else s
            for s in selected
        ]
        return linked, resolution


def _itself(plan: LineagePlan) -> LineagePlan:
    return plan


def _no_lock(names: Iterable[str]) -> nullcontext[None]:
    return nullcontext()


def _run_write(selected: Selected) -> RunWrite:
    """What the write procedure takes of a selected run that has a plan (its time order: None without a run time)."""
    assert selected.plan is not None  # the writer passes only the runs with a plan
    order = None if selected.run_time is None else selected.order
    return RunWrite(selected.key, selected.plan, order, None, selected.owned_keys(), selected.processes)


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
        retry.run("delete", partial(client.delete_guids, chunk), calls)
    return len(guids)
