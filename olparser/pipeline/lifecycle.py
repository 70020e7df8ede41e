"""Tables dropped and renamed (the rules: olparser/lineage/lifecycle.py), applied to what the connector created:
`apply_lifecycle` on the live path and the Spark batch paths alike, `apply_run_lifecycle` for one live run."""

from __future__ import annotations

import logging
from typing import Any, Callable, Iterable

from olparser.lineage import LineageOptions
from olparser.lineage.build import dataset_resolver
from olparser.lineage.lifecycle import LifecycleChanges, lifecycle_changes, lifecycle_marks, standing
from olparser.naming import MappingEngine
from olparser.runs import RunSnapshot, RunStateStore
from olparser.runs.ledger import Key

from .ports import Resolver, Uploader
from .relink import drop_datasets, move_datasets
from .writing import Linked, delete_orphans

log = logging.getLogger(__name__)


def apply_lifecycle(
    changes: LifecycleChanges,
    catalog: Any,
    store: RunStateStore,
    resolver: Resolver | None,
    locked: Callable[[Iterable[str]], Any],
    links: dict[Key, Key],
    calls: list[int],
    now: float,
    *,
    reads_catalog: bool = True,
    label: str = "run",
) -> int:
    """What a run that drops or renames tables does to what the connector created (olparser/lineage/lifecycle.py),
    on the live path (`LineageRunner`) and the Spark batch paths (tools/spark/catalog.py) alike: a dropped dataset
    the connector created (a placeholder or Unity Catalog table it owns, or an interim entity) is deleted; a renamed
    one is moved to its new name (`links`: the new name's dataset linked to its scanned asset) — the connector's
    processes that use it point at the new one, and it is deleted (`relink.move_datasets`, the re-link's step).
    Scanned assets are never touched: a dataset linked to one is not the connector's. The run history keeps the old
    names for the old runs. Interim entities and moves need a catalog that reads entities with their relationships
    (`reads_catalog`). Returns how many entities were deleted; `calls` counts the catalog calls."""
    owned = {d.key for d in changes.drops if d.owned}  # placeholders: the connector's types, no one else's process
    interim = store.interim_keys({d.key for d in changes.drops} - owned)
    deleted = 0
    if owned:
        deleted, delete_calls = delete_orphans(store, catalog, tuple(sorted(owned)), resolver)
        calls[0] += delete_calls
    if interim and reads_catalog:
        deleted += drop_datasets(sorted(interim), catalog, store, resolver, calls)
    if owned or interim:
        log.info("%s: %d dropped dataset(s) the connector had created are deleted", label, deleted)
    olds = [old for old, _ in changes.moves]
    created = {d.key for d in olds if d.owned} | store.interim_keys({d.key for d in olds if not d.owned})
    moved = {
        old.key: links.get(new.key, new.key) for old, new in changes.moves if old.key in created and old.key != new.key
    }
    if moved and reads_catalog:
        _, count, _ = move_datasets(moved, catalog, store, resolver, locked, calls, now)
        deleted += count
        log.info("%s: %d renamed dataset(s) moved to their new names", label, len(moved))
    return deleted


def apply_run_lifecycle(
    order: tuple[float, str],
    run: RunSnapshot,
    linked: Linked,
    now: float,
    *,
    engine: MappingEngine,
    options: LineageOptions,
    store: RunStateStore,
    uploader: Uploader,
    resolver: Resolver | None,
    locked: Callable[[Iterable[str]], Any],
) -> tuple[int, int]:
    """After a run is written: the store remembers the run's drops and renames and the connector's datasets its
    plan wrote (olparser/lineage/lifecycle.py, `LifecycleMark`), and what then stands on those keys is applied
    — the run's own changes unless a newer run wrote the name again, and a change of a newer run whose events
    came first, over what this older run just wrote. A dropped dataset the connector created (a placeholder or
    Unity Catalog table it owns, or an interim entity) is deleted; a renamed one is moved to its new name — the
    connector's processes that use it point at the new one, and it is deleted (`relink.move_datasets`, the
    re-link's step). Scanned assets are never touched. Returns the catalog calls and the entities deleted."""
    changes = lifecycle_changes(run, lambda r: dataset_resolver(r, engine, options))
    owned = set(linked.plan.owned_keys())
    written = [d.default for d in linked.plan.datasets if d.default in owned]
    links = linked.resolution.links if linked.resolution is not None else {}
    if not changes and not written:
        return 0, 0
    todo = standing(store.record_lifecycle(lifecycle_marks(order, written, changes, links), now=now))
    if not todo:
        return 0, 0
    calls = [0]
    deleted = apply_lifecycle(
        todo,
        uploader,
        store,
        resolver,
        locked,
        {},
        calls,
        now,
        reads_catalog=reads_catalog(uploader),
        label=f"run {run.run_id}",
    )
    return calls[0], deleted


def reads_catalog(uploader: Uploader) -> bool:
    """Whether the uploader reads entities with their relationships (CatalogUploader does)."""
    return all(hasattr(uploader, name) for name in ("read", "read_guids"))
