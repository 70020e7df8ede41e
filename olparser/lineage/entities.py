"""Atlas entity JSON: entities, object ids, and placeholder guids in dependency order. Pure helpers."""

from __future__ import annotations

from typing import Any, Callable, Iterable

from olparser.jsontypes import JSON

from .relationships import relationship_type

Key = tuple[str, str]  # (typeName, qualifiedName)


def entity(
    type_name: str, qualified_name: str, attributes: JSON | None = None, relationships: JSON | None = None
) -> JSON:
    """An entity without guid (assign_guids gives one). None-valued attributes are left out; each relationship
    attribute names its relationship def (`relationshipType`, olparser/lineage/relationships.py)."""
    attrs = {"qualifiedName": qualified_name}
    attrs.update({k: v for k, v in (attributes or {}).items() if v is not None})
    body: JSON = {"typeName": type_name, "attributes": attrs}
    if relationships:
        body["relationshipAttributes"] = {
            name: related(type_name, name, value) for name, value in relationships.items()
        }
    return body


def related(type_name: str, attribute: str, value: Any) -> Any:
    """`value` (an object id, or a list of them) as the relationship attribute `attribute` of a `type_name` entity
    sends it: each object id with its `relationshipType` when the connector knows it (and the id does not say)."""
    kind = relationship_type(type_name, attribute)
    if kind is None:
        return value
    if isinstance(value, list):
        return [related(type_name, attribute, item) for item in value]
    if isinstance(value, dict) and "relationshipType" not in value:
        return {**value, "relationshipType": kind}
    return value


def object_id(type_name: str, qualified_name: str) -> JSON:
    """A reference by unique attribute; assign_guids adds the placeholder guid when the target is in the plan."""
    return {"typeName": type_name, "uniqueAttributes": {"qualifiedName": qualified_name}}


def key_of(body: JSON) -> Key:
    return body["typeName"], body["attributes"]["qualifiedName"]


def assign_guids(groups: Iterable[Iterable[JSON]]) -> list[JSON]:
    """Entities with placeholder guids "-1", "-2"... in the given order (duplicates by key dropped, the first
    kept), and every object id that points at one of them completed with its guid."""
    ordered: list[JSON] = []
    guids: dict[Key, str] = {}
    for group in groups:
        for body in group:
            key = key_of(body)
            if key in guids:
                continue
            guids[key] = f"-{len(ordered) + 1}"
            ordered.append(body)
    return [_placed(body, guids) for body in ordered]


def _placed(body: JSON, guids: dict[Key, str]) -> JSON:
    """A new dict: typeName, the entity's placeholder guid, then the entity's items (its own guid, if it has one,
    in the placeholder's place) with their object ids completed."""
    placed = {"typeName": body["typeName"], "guid": guids[key_of(body)]}
    for name, value in body.items():
        placed[name] = value if value.__class__ in _LEAVES else _with_guids(value, guids)
    return placed


_LEAVES = frozenset({str, int, float, bool, type(None)})  # values that hold no object id


def _with_guids(value: Any, guids: dict[Key, str]) -> Any:
    """`value` with its object ids completed. Copy on write: a dict or list is copied only when something inside
    it changes, everything else is shared with `value` (plans are never changed in place)."""
    if isinstance(value, dict):
        unique = value.get("uniqueAttributes")
        if isinstance(unique, dict) and "guid" not in value:
            # A reference whose names are not both strings finds no guid.
            guid = guids.get((value.get("typeName"), unique.get("qualifiedName")))  # type: ignore[arg-type]
            return {"guid": guid, **value} if guid else value
        entries: Iterable[tuple[Any, Any]] = value.items()
        copy: Callable[[Any], Any] = dict
    elif isinstance(value, list):
        entries, copy = enumerate(value), list
    else:
        return value
    changed = None
    for place, item in entries:
        if item.__class__ not in _LEAVES:  # the usual leaves are passed over without a call
            new = _with_guids(item, guids)
            if new is not item:
                if changed is None:
                    changed = copy(value)
                changed[place] = new
    return value if changed is None else changed
