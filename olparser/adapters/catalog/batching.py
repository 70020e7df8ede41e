"""Turning a run's entities into `POST /entity/bulk` requests: pure functions over entity JSON.

Everything goes in one request when it fits (placeholders resolve within it). Above the size limit the entities are
ordered so that each comes after the entities it references (datasets and owners before processes), cut into
batches, and every reference that leaves its batch is rewritten from `{"guid": "-N"}` to
`{"typeName", "uniqueAttributes": {"qualifiedName"}}`, which the catalog resolves against entities an earlier
request created (or that already existed). The same rewrite points references at existing datasets that are not sent.
"""

from __future__ import annotations

import heapq
from typing import Any, Iterator, Mapping, Sequence

from olparser.adapters.catalog.existence import DatasetKey
from olparser.jsontypes import JSON

_REFERENCE_FIELDS = ("attributes", "relationshipAttributes")


def entity_key(entity: Mapping[str, Any]) -> DatasetKey | None:
    """(typeName, qualifiedName) of an entity, or None when it has no qualifiedName."""
    qualified_name = (entity.get("attributes") or {}).get("qualifiedName")
    if not isinstance(qualified_name, str):
        qualified_name = (entity.get("uniqueAttributes") or {}).get("qualifiedName")
    type_name = entity.get("typeName")
    if isinstance(type_name, str) and isinstance(qualified_name, str):
        return type_name, qualified_name
    return None


def placeholder_keys(entities: Sequence[Mapping[str, Any]]) -> dict[str, DatasetKey]:
    """Placeholder guid ("-N") -> (typeName, qualifiedName) for every entity that has both."""
    found = {}
    for entity in entities:
        guid, key = entity.get("guid"), entity_key(entity)
        if isinstance(guid, str) and guid.startswith("-") and key is not None:
            found[guid] = key
    return found


def _referenced_placeholders(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        guid = value.get("guid")
        if isinstance(guid, str) and guid.startswith("-"):
            yield guid
        for item in value.values():
            yield from _referenced_placeholders(item)
    elif isinstance(value, list):
        for item in value:
            yield from _referenced_placeholders(item)


def references(entity: Mapping[str, Any]) -> set[str]:
    """The placeholder guids an entity refers to in its attributes and relationshipAttributes."""
    return {guid for name in _REFERENCE_FIELDS for guid in _referenced_placeholders(entity.get(name))}


def _rewrite(value: Any, outside: Mapping[str, DatasetKey | str]) -> Any:
    """`value` with object ids pointing at `outside` placeholders replaced (copy on change): by a unique-attribute
    id when mapped to a key, by another placeholder when mapped to a guid."""
    if isinstance(value, dict):
        guid = value.get("guid")
        if isinstance(guid, str) and guid in outside:
            target = outside[guid]
            if isinstance(target, str):
                return {**value, "guid": target}
            type_name, qualified_name = target
            rewritten = {k: v for k, v in value.items() if k not in ("guid", "uniqueAttributes")}
            rewritten["typeName"] = type_name
            rewritten["uniqueAttributes"] = {"qualifiedName": qualified_name}
            return rewritten
        items = {k: _rewrite(v, outside) for k, v in value.items()}
        return value if all(items[k] is value[k] for k in value) else items
    if isinstance(value, list):
        rewritten_items = [_rewrite(v, outside) for v in value]
        return value if all(a is b for a, b in zip(rewritten_items, value, strict=True)) else rewritten_items
    return value


def rewrite_references(entity: JSON, outside: Mapping[str, DatasetKey | str]) -> JSON:
    """The entity with references to `outside` placeholders made resolvable by qualifiedName."""
    if not outside:
        return entity
    changed = {name: _rewrite(entity[name], outside) for name in _REFERENCE_FIELDS if name in entity}
    if all(changed[name] is entity[name] for name in changed):
        return entity
    return {**entity, **changed}


def dependency_order(entities: list[JSON]) -> list[JSON]:
    """Entities reordered so that each follows those it references; otherwise the given order is kept.
    A reference cycle is broken at its earliest entity."""
    position = {e["guid"]: i for i, e in enumerate(entities) if isinstance(e.get("guid"), str)}
    needs = [{position[g] for g in references(e) if g in position and position[g] != i} for i, e in enumerate(entities)]
    needed_by: list[list[int]] = [[] for _ in entities]
    for i, deps in enumerate(needs):
        for dep in deps:
            needed_by[dep].append(i)
    waiting = [len(deps) for deps in needs]
    ready = [i for i, count in enumerate(waiting) if count == 0]
    heapq.heapify(ready)
    placed = [False] * len(entities)
    order: list[int] = []
    while len(order) < len(entities):
        if not ready:  # a cycle: release the earliest entity not yet placed
            heapq.heappush(ready, next(i for i, done in enumerate(placed) if not done))
        i = heapq.heappop(ready)
        if placed[i]:
            continue
        placed[i] = True
        order.append(i)
        for dependent in needed_by[i]:
            waiting[dependent] -= 1
            if waiting[dependent] == 0 and not placed[dependent]:
                heapq.heappush(ready, dependent)
    return [entities[i] for i in order]


def bulk_batches(
    entities: list[JSON], bulk_size: int, not_sent: Mapping[str, DatasetKey], aliases: Mapping[str, str] | None = None
) -> list[list[JSON]]:
    """The bulk requests for `entities`: one when they fit in `bulk_size`, else dependency-ordered slices.

    `not_sent` maps placeholders of entities that are not sent (datasets that already exist) to their keys; any
    reference to them, or to an entity in another batch, is rewritten to a unique-attribute reference. `aliases`
    maps placeholders of dropped duplicates to the placeholder of the entity that is sent instead.
    """
    if bulk_size < 1:
        raise ValueError("bulk_size must be at least 1")
    if not entities:
        return []
    if aliases:
        entities = [rewrite_references(e, aliases) for e in entities]
    ordered = entities if len(entities) <= bulk_size else dependency_order(entities)
    everything = {**not_sent, **placeholder_keys(ordered)}
    batches = []
    for start in range(0, len(ordered), bulk_size):
        batch = ordered[start : start + bulk_size]
        inside = {e.get("guid") for e in batch}
        outside = {g: key for g, key in everything.items() if g not in inside}
        batches.append([rewrite_references(e, outside) for e in batch])
    return batches
