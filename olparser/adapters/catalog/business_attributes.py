"""The connector's attributes on types it does not own, carried as Purview business attributes ("managed attributes").

The connector writes Databricks lineage in Purview's built-in `databricks_process` (olparser/lineage/databricks_model.py),
which has `sparkPlan` and `columnMapping` and must never be changed. What the connector knows besides — the newest
run (`lastRun*`), the run history's `runCount`, the full column lineage (`columnLineageDetail`), the OpenLineage job —
is defined as business metadata of its own (`businessMetadataDefs` in olparser/lineage/typedefs/databricks.json,
applicable to `databricks_process`): Purview's way of adding attributes to a type one does not own, shown in
Purview as the process's managed attributes.

Everything inside the connector keeps these as plain `attributes` of the entity (the builder, the fingerprint, the
linking, the run history, prune, columns, re-link all read them there). This module moves them at the HTTP edge
(olparser/adapters/catalog/client.py), one rule both ways:

- `outgoing`: in an entity write (`POST /entity`, `POST /entity/bulk`), an attribute of an entity whose type the
  business metadata applies to, and that the business metadata defines, moves to `businessAttributes[{name}]`; the
  write then asks `businessAttributeUpdateBehavior=merge` (the Data Map API's: the group's attributes sent are set, a
  null removes one, the other groups of the entity — someone else's managed attributes — stay);
- `incoming`: an entity read back has the group's attributes folded into its `attributes` (never over a real one).
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

from olparser.jsontypes import JSON

UPDATE_BEHAVIOR = {"businessAttributeUpdateBehavior": "merge"}  # the Data Map API's query parameter


class BusinessAttributes:
    """The business metadata groups of the connector's typedefs: which attributes of which entity types they carry."""

    def __init__(self, groups: Mapping[str, Mapping[str, frozenset[str]]]) -> None:
        self._groups = {name: dict(by_type) for name, by_type in groups.items() if by_type}
        by_type: dict[str, list[tuple[str, frozenset[str]]]] = {}
        for name, types in self._groups.items():
            for type_name, attributes in types.items():
                by_type.setdefault(type_name, []).append((name, attributes))
        self._by_type = by_type

    @classmethod
    def from_typedefs(cls, typedefs: Mapping[str, Any], prefix: str = "") -> "BusinessAttributes":
        """From a TypesDef (the connector's, unprefixed): each business metadata group (`{prefix}{name}`, as the
        catalog knows it) and, per entity type it applies to, the attributes it defines."""
        groups: dict[str, dict[str, frozenset[str]]] = {}
        for definition in typedefs.get("businessMetadataDefs") or []:
            by_type: dict[str, set[str]] = {}
            for attribute in definition.get("attributeDefs") or []:
                for type_name in _applicable(attribute):
                    by_type.setdefault(type_name, set()).add(attribute["name"])
            groups[prefix + definition["name"]] = {t: frozenset(a) for t, a in by_type.items()}
        return cls(groups)

    def __bool__(self) -> bool:
        return bool(self._by_type)

    def outgoing(self, body: Any) -> tuple[Any, bool]:
        """An entity write's body with the groups' attributes moved to `businessAttributes`, and whether any entity
        carries business attributes now (the write then needs `UPDATE_BEHAVIOR`)."""
        if not self._by_type or not isinstance(body, dict):
            return body, False
        moved = False
        out = dict(body)
        if isinstance(body.get("entities"), list):
            out["entities"] = [self._outgoing_entity(e) for e in body["entities"]]
            moved = any(e is not o for e, o in zip(out["entities"], body["entities"], strict=True))
        if isinstance(body.get("entity"), dict):
            out["entity"] = self._outgoing_entity(body["entity"])
            moved = moved or out["entity"] is not body["entity"]
        return (out, True) if moved else (body, False)

    def incoming(self, body: Any) -> Any:
        """A read's body with every entity's group attributes folded into its `attributes` (a copy when any)."""
        if not self._groups or not isinstance(body, dict):
            return body
        changed = False
        out = dict(body)
        if isinstance(body.get("entity"), dict):
            out["entity"] = self._incoming_entity(body["entity"])
            changed = out["entity"] is not body["entity"]
        for key in ("entities",):
            if isinstance(body.get(key), list):
                out[key] = [self._incoming_entity(e) for e in body[key]]
                changed = changed or any(a is not b for a, b in zip(out[key], body[key], strict=True))
        referred = body.get("referredEntities")
        if isinstance(referred, dict):
            folded = {g: self._incoming_entity(e) for g, e in referred.items()}
            if any(folded[g] is not e for g, e in referred.items()):
                out["referredEntities"], changed = folded, True
        return out if changed else body

    def _outgoing_entity(self, entity: Any) -> Any:
        type_name = entity.get("typeName") if isinstance(entity, dict) else None
        groups = self._by_type.get(type_name) if isinstance(type_name, str) else None
        attributes = entity.get("attributes") if groups else None
        if not groups or not isinstance(attributes, dict):
            return entity
        kept = dict(attributes)
        business: JSON = dict(entity.get("businessAttributes") or {})
        for name, names in groups:
            values = {a: kept.pop(a) for a in sorted(names) if a in kept}
            if values:
                business[name] = {**(business.get(name) or {}), **values}
        if len(kept) == len(attributes):
            return entity
        return {**entity, "attributes": kept, "businessAttributes": business}

    def _incoming_entity(self, entity: Any) -> Any:
        business = entity.get("businessAttributes") if isinstance(entity, dict) else None
        if not isinstance(business, dict):
            return entity
        folded = {
            attribute: value
            for name in self._groups
            if isinstance(business.get(name), dict)
            for attribute, value in business[name].items()
        }
        if not folded:
            return entity
        attributes = entity.get("attributes") or {}
        return {**entity, "attributes": {**folded, **attributes}}


def connector_business_attributes(prefix: str = "") -> BusinessAttributes:
    """The groups of the connector's own typedefs (olparser/lineage/typedefs), as the catalog knows them."""
    from olparser.adapters.catalog.typedefs import load_typedefs
    from olparser.settings import TYPEDEFS_DIR

    return BusinessAttributes.from_typedefs(load_typedefs(TYPEDEFS_DIR), prefix)


def as_the_connector_reads(entity: JSON, groups: BusinessAttributes | None = None) -> JSON:
    """One entity as the connector's client reads it: its business attributes of the connector's groups folded into
    its attributes (tools and tests that read the catalog over plain HTTP)."""
    read: JSON = (groups or connector_business_attributes()).incoming({"entity": entity})["entity"]
    return read


def _applicable(attribute: Mapping[str, Any]) -> Iterable[str]:
    try:
        types = json.loads((attribute.get("options") or {}).get("applicableEntityTypes") or "[]")
    except ValueError:
        return ()
    return [t for t in types if isinstance(t, str)] if isinstance(types, list) else ()
