"""Classifications and labels on entities, as Apache Atlas keeps them (read in apache/atlas: AtlasEntityStoreV2,
EntityGraphMapper, ClassificationAssociator, DeleteHandlerV1, EntityGraphRetriever.traverseImpactedVertices).

An entity's own classifications are kept with its other top-level fields (EntityRow.extra, key `classifications`):
`{typeName, attributes, entityGuid, entityStatus, propagate, removePropagationsOnEntityDelete, validityPeriods}`.
A classification with `propagate` (true unless sent false) flows along relationships whose relationshipDef says so
(`propagateTags`: ONE_TO_TWO from end 1 to end 2, TWO_TO_ONE back, BOTH) to every entity it reaches, and from a
glossary term to the entities the term is assigned to; the store keeps which entity carries which source's
classification (table propagated_classifications), and an entity answers the source's classification with the
source's guid as `entityGuid`. As in Atlas a propagation stays when the path it came by goes (a relationship deleted,
an entity on the way deleted) unless its classification says `removePropagationsOnEntityDelete`, or the path was a
term assignment; removing the classification, or setting `propagate` false, removes all its propagations. A deleted
entity passes nothing on (Atlas deletes its relationships). Runs inside the caller's write transaction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Iterable

from olparser.jsontypes import JSON

from . import errors
from .business_metadata import attribute_value
from .collections import Placement
from .store import EntityRow, RelationshipRow, Session, now_ms
from .typeregistry import TypeRegistry

KEY = "classifications"
LABELS = "labels"
TERM_ASSIGNMENT = "AtlasGlossarySemanticAssignment"
LABEL_MAX_LENGTH = 50  # atlas.entity.label.max.length
# EntityGraphMapper.LABEL_REGEX (letters, digits, '_', '-', CJK), and '.', which Purview's labels carry (the spec's
# examples: "Example.Label")
_LABEL = re.compile(r"^[\u2E80-\u2FD5\u3190-\u319f\u3400-\u4DBF\u4E00-\u9FCC\uF900-\uFAADa-zA-Z0-9_.\-]*$")


def direct(row: EntityRow) -> list[JSON]:
    """The entity's own classifications."""
    return [dict(c) for c in row.extra.get(KEY) or () if isinstance(c, dict)]


def _with(row: EntityRow, classifications: list[JSON]) -> EntityRow:
    extra = {k: v for k, v in row.extra.items() if k != KEY}
    if classifications:
        extra[KEY] = classifications
    return replace(row, extra=extra)


def _definition_chain(registry: TypeRegistry, name: str) -> list[JSON]:
    """The classificationDef and its supertypes."""
    chain: list[JSON] = []
    pending = [name]
    while pending:
        definition = registry.get(pending.pop(0))
        if definition is not None and definition["category"] == "CLASSIFICATION" and definition not in chain:
            chain.append(definition)
            pending += list(definition.get("superTypes") or ())
    return chain


def checked(registry: TypeRegistry, row: EntityRow, sent: object) -> JSON:
    """A classification for `row` (AtlasEntityStoreV2.validateAndNormalize, validateEntityAssociations' type
    restriction, EntityGraphMapper.addClassifications' defaults): a known classification type, restricted to entity
    types (`entityTypes`) the entity is one of, attributes its def declares with values of their types."""
    if not isinstance(sent, dict) or not isinstance(sent.get("typeName"), str) or not sent["typeName"]:
        raise errors.invalid_parameters('a classification is an object with a "typeName"')
    name = sent["typeName"]
    chain = _definition_chain(registry, name)
    if not chain:
        raise errors.classification_error("unknown", name)
    restricted = [t for d in chain for t in d.get("entityTypes") or ()]
    if restricted and not any(registry.is_a(row.type_name, t) for t in restricted):
        raise errors.classification_error("restricted", name, row.guid, row.type_name)
    declared = {a["name"]: a for d in reversed(chain) for a in d.get("attributeDefs") or ()}
    attributes = sent.get("attributes") or {}
    if not isinstance(attributes, dict):
        raise errors.invalid_parameters(f"{name}: attributes must be an object")
    values: JSON = {}
    for attribute, value in attributes.items():
        if attribute not in declared:
            raise errors.unknown_attribute(attribute, name)
        field = f"{name}.{attribute}"
        values[attribute] = None if value is None else attribute_value(registry, declared[attribute], value, field)
    for attribute, definition in declared.items():
        if definition.get("isOptional") is False and values.get(attribute) is None:
            raise errors.invalid_parameters(f"{name}.{attribute}: mandatory attribute value missing")
    periods = sent.get("validityPeriods") or []
    if not isinstance(periods, list) or not all(isinstance(p, dict) for p in periods):
        raise errors.invalid_parameters(f"{name}: validityPeriods must be a list of time boundaries")
    return {
        "typeName": name,
        "attributes": values,
        "entityGuid": row.guid,
        "entityStatus": row.status,
        "propagate": sent.get("propagate") is not False,
        "removePropagationsOnEntityDelete": sent.get("removePropagationsOnEntityDelete") is True,
        "validityPeriods": periods,
    }


# --- reading ---------------------------------------------------------------------------------------------------
def of_entities(session: Session, rows: Iterable[EntityRow]) -> dict[str, list[JSON]]:
    """Every classification each entity carries: its own, then those propagated to it (the source's classification,
    `entityGuid` the source's guid, `entityStatus` its status)."""
    rows = list(rows)
    found = {row.guid: direct(row) for row in rows}
    propagated = session.propagations_to(found)
    sources = session.entities({source for _, source, _ in propagated}) if propagated else {}
    for entity, source, type_name in propagated:
        row = sources.get(source)
        own = next((c for c in direct(row) if c.get("typeName") == type_name), None) if row else None
        if own is not None:
            found[entity].append({**own, "entityGuid": source, "entityStatus": row.status if row else "DELETED"})
    return found


def names(classifications: list[JSON]) -> list[str]:
    return list(dict.fromkeys(str(c.get("typeName")) for c in classifications))


# --- propagation -------------------------------------------------------------------------------------------------
def _flows_from(registry: TypeRegistry, relationship: RelationshipRow, guid: str) -> str | None:
    """The other end of `relationship` when classifications flow to it from `guid`, else None."""
    definition = registry.get(relationship.type_name) or {}
    way = definition.get("propagateTags") or "NONE"
    if relationship.end1_guid == guid and way in ("ONE_TO_TWO", "BOTH"):
        return relationship.end2_guid
    if relationship.end2_guid == guid and way in ("TWO_TO_ONE", "BOTH"):
        return relationship.end1_guid
    return None


def reach(session: Session, registry: TypeRegistry, source: str) -> set[str]:
    """Every active entity a classification of `source` flows to (not `source` itself); through active entities
    only (EntityGraphRetriever.traverseImpactedVertices, over the relationships a soft delete leaves)."""
    start = session.entity(source)
    if start is None or start.status != "ACTIVE":
        return set()
    seen, queue = {source}, [source]
    while queue:
        guid = queue.pop(0)
        targets = [t for r in session.relationships_of(guid) if (t := _flows_from(registry, r, guid)) is not None]
        rows = session.entities([t for t in targets if t not in seen])
        for target, row in rows.items():
            if row.status == "ACTIVE" and target not in seen:
                seen.add(target)
                queue.append(target)
    return seen - {source}


def _propagate(session: Session, registry: TypeRegistry, source: str, type_name: str) -> None:
    session.add_propagations(source, type_name, reach(session, registry, source))


def _carried(session: Session, guids: Iterable[str]) -> list[tuple[str, JSON]]:
    """(source, its classification) for every propagating classification the entities `guids` carry."""
    guids = list(dict.fromkeys(guids))
    rows = session.entities(guids)
    found: dict[tuple[str, str], JSON] = {}
    for row in rows.values():
        for c in direct(row):
            if c.get("propagate", True):
                found[(row.guid, c["typeName"])] = c
    propagated = session.propagations_to(guids)
    sources = session.entities({source for _, source, _ in propagated}) if propagated else {}
    for _, source, type_name in propagated:
        own = (
            next((c for c in direct(sources[source]) if c["typeName"] == type_name), None)
            if source in sources
            else None
        )
        if own is not None and own.get("propagate", True):
            found[(source, type_name)] = own
    return [(source, c) for (source, _), c in found.items()]


def relationships_changed(
    session: Session, registry: TypeRegistry, added: list[RelationshipRow], removed: list[RelationshipRow]
) -> None:
    """After relationships were created or deleted: a new path carries what its near end carries further
    (DeleteHandlerV1.addTagPropagation); a lost path takes away what no longer reaches an entity, for classifications
    that say removePropagationsOnEntityDelete and over term assignments (DeleteHandlerV1.removeTagPropagation)."""
    if added:
        near = [g for r in added for g in (r.end1_guid, r.end2_guid) if _flows_from(registry, r, g) is not None]
        for source, c in _carried(session, near):
            _propagate(session, registry, source, c["typeName"])
    if removed:
        near = [g for r in removed for g in (r.end1_guid, r.end2_guid) if _flows_from(registry, r, g) is not None]
        assignment = any(r.type_name == TERM_ASSIGNMENT for r in removed)
        for source, c in _carried(session, near):
            if c.get("removePropagationsOnEntityDelete") or assignment:
                kept = reach(session, registry, source)
                gone = session.propagated_entities(source, c["typeName"]) - kept
                session.delete_propagations(source, c["typeName"], gone)


def entities_deleted(session: Session, registry: TypeRegistry, deleted: list[EntityRow]) -> None:
    """After a soft delete: a deleted entity's classifications that say removePropagationsOnEntityDelete leave every
    entity they were propagated to (DeleteHandlerV1.deleteAllClassifications), and the paths through it are lost."""
    for row in deleted:
        for c in direct(row):
            if c.get("removePropagationsOnEntityDelete"):
                session.delete_propagations(row.guid, c["typeName"])
    lost = [r for row in deleted for r in session.relationships_of(row.guid)]
    relationships_changed(session, registry, [], lost)


# --- writes ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Writer:
    """Who writes classifications and labels, in which write: the session, the types, the user, and the collections
    they may write (None: anywhere)."""

    session: Session
    registry: TypeRegistry
    user: str
    placement: Placement | None = None

    def may_write(self, row: EntityRow) -> EntityRow:
        """`row`, when the writer may write its collection (else Atlas's 403)."""
        if self.placement is not None:
            self.placement.of_existing(row.extra.get("collectionId"))
        return row

    def target(self, guid: str) -> EntityRow:
        """The active entity `guid`, which the writer may write."""
        row = self.session.entity(guid)
        if row is None or row.status != "ACTIVE":
            raise errors.instance_guid_not_found(guid)
        return self.may_write(row)

    def save(self, row: EntityRow, classifications: list[JSON]) -> None:
        self.session.update_entity(_with(row, classifications).touched(self.user, now_ms()))

    def propagate(self, source: str, type_name: str) -> None:
        _propagate(self.session, self.registry, source, type_name)


def write(w: Writer, guid: str, sent: object, mode: str = "add") -> None:
    """POST (`mode` add) and PUT (update) /entity/guid/{guid}/classifications: a non-empty list of classifications
    for an active entity the caller may write."""
    if not isinstance(sent, list) or not sent:
        raise errors.invalid_parameters("classifications(s) not specified")
    row = w.target(guid)
    (_add if mode == "add" else _update)(w, row, sent)


def _add(w: Writer, row: EntityRow, sent: list[object]) -> None:
    """AtlasEntityStoreV2.addClassifications: each must be new on the entity; those sent as another entity's
    propagated ones are skipped, as Atlas does."""
    guid = row.guid
    current = direct(row)
    added: list[JSON] = []
    for item in sent:
        if isinstance(item, dict) and item.get("entityGuid") not in (None, "", guid) and item.get("propagate"):
            continue
        c = checked(w.registry, row, item)
        if any(existing["typeName"] == c["typeName"] for existing in current + added):
            raise errors.invalid_parameters(f"entity: {guid}, already associated with classification: {c['typeName']}")
        added.append(c)
    if not added:
        return
    w.save(row, current + added)
    for c in added:
        if c["propagate"]:
            w.propagate(guid, c["typeName"])


def created(session: Session, registry: TypeRegistry, row: EntityRow, sent: object) -> EntityRow:
    """The classifications of an entity being created (POST /entity, /entity/bulk); the caller propagates them once
    its relationships are written (propagate_own)."""
    if sent is None:
        return row
    if not isinstance(sent, list):
        raise errors.invalid_parameters(f"{row.type_name}: classifications must be a list")
    found: list[JSON] = []
    for item in sent:
        c = checked(registry, row, item)
        if not any(existing["typeName"] == c["typeName"] for existing in found):
            found.append(c)
    return _with(row, found)


def propagate_own(session: Session, registry: TypeRegistry, row: EntityRow) -> None:
    for c in direct(row):
        if c.get("propagate", True):
            _propagate(session, registry, row.guid, c["typeName"])


def _update(w: Writer, row: EntityRow, sent: list[object]) -> None:
    """EntityGraphMapper.updateClassifications: each must be the entity's own; attributes are merged, validity
    periods and the flags replaced when sent; turning `propagate` on or off adds or removes its propagations."""
    guid = row.guid
    current = direct(row)
    changes: list[tuple[bool, bool, str]] = []
    for item in sent:
        if not isinstance(item, dict) or not isinstance(item.get("typeName"), str):
            raise errors.invalid_parameters('a classification is an object with a "typeName"')
        name = item["typeName"]
        if item.get("entityGuid") not in (None, "", guid):
            raise errors.classification_error("propagated", name)
        index = next((i for i, c in enumerate(current) if c["typeName"] == name), None)
        if index is None:
            raise errors.classification_error("not associated", name)
        before = current[index]
        merged = {
            **before,
            "attributes": {**before.get("attributes", {}), **(item.get("attributes") or {})},
            **{k: item[k] for k in ("validityPeriods", "propagate", "removePropagationsOnEntityDelete") if k in item},
        }
        c = checked(w.registry, row, merged)
        current[index] = c
        changes.append((bool(before.get("propagate", True)), c["propagate"], name))
    w.save(row, current)
    for was, now, name in changes:
        if now and not was:
            w.propagate(guid, name)
        elif was and not now:
            w.session.delete_propagations(guid, name)


def remove(w: Writer, guid: str, name: str) -> None:
    """DELETE /entity/guid/{guid}/classification/{name} (EntityGraphMapper.deleteClassification): the entity's own
    classification goes, and with it every propagation of it."""
    row = w.target(guid)
    current = direct(row)
    if not current:
        raise errors.classification_error("none", name, guid)
    if not any(c["typeName"] == name for c in current):
        raise errors.classification_error("not associated", name)
    w.save(row, [c for c in current if c["typeName"] != name])
    w.session.delete_propagations(guid, name)


def add_to_entities(w: Writer, body: object) -> None:
    """POST /entity/bulk/classification (AtlasEntityStoreV2.addClassification): `{"classification": {...},
    "entityGuids": [...]}`, one classification on each entity."""
    if not isinstance(body, dict):
        raise errors.invalid_parameters('the body must be {"classification": {...}, "entityGuids": [...]}')
    guids, classification = body.get("entityGuids"), body.get("classification")
    if not isinstance(guids, list) or not guids or not all(isinstance(g, str) for g in guids):
        raise errors.invalid_parameters("Guid(s) not specified")
    if not isinstance(classification, dict):
        raise errors.invalid_parameters("classification not specified")
    for guid in dict.fromkeys(guids):
        one = {k: v for k, v in classification.items() if k != "entityGuid"}
        write(w, guid, [one])


def set_classifications(w: Writer, body: object) -> list[str]:
    """POST /entity/bulk/setClassifications (ClassificationAssociator.Updater): each header names an entity by type
    and unique attributes; its own classifications become exactly the header's (deleted, updated, added, in that
    order). The answer says, per entity and action, `{Action}:{guid}:{type}:{unique attribute} -> {names}:{status}`."""
    headers = body.get("guidHeaderMap") if isinstance(body, dict) else None
    if not isinstance(headers, dict):
        raise errors.invalid_parameters('the body must be {"guidHeaderMap": {"<guid>": {<entity header>}}}')
    summary: list[str] = []
    for header in headers.values():
        header = header if isinstance(header, dict) else {}
        type_name = header.get("typeName")
        if not isinstance(type_name, str) or not w.registry.is_entity_type(type_name):
            summary.append(f"{type_name}: (Skipped)")
            continue
        qualified_name = (header.get("attributes") or {}).get("qualifiedName")
        found = (
            w.session.active_entity([type_name, *w.registry.subtypes(type_name)], qualified_name)
            if isinstance(qualified_name, str)
            else None
        )
        if found is None:
            summary.append(f"Entity:{type_name}:qualifiedName:[Not found]:(Skipped)")
            continue
        incoming = [c for c in header.get("classifications") or () if isinstance(c, dict)]
        incoming = [c for c in incoming if c.get("entityGuid") in (None, "", found.guid)]
        own = direct(found)
        wanted = {c.get("typeName") for c in incoming}
        steps = (
            ("Delete", [c for c in own if c["typeName"] not in wanted]),
            ("Update", [c for c in incoming if any(o["typeName"] == c.get("typeName") for o in own)]),
            ("Add", [c for c in incoming if not any(o["typeName"] == c.get("typeName") for o in own)]),
        )
        for action, items in steps:
            if not items:
                continue
            status = "(Done)"
            try:
                if action == "Delete":
                    for c in items:
                        remove(w, found.guid, c["typeName"])
                else:
                    write(w, found.guid, items, action.lower())
            except errors.AtlasError:
                status = "(Partial)"
            joined = ", ".join(str(c.get("typeName")) for c in items)
            summary.append(f"{action}:{found.guid}:{found.type_name}:qualifiedName -> {joined}:{status}")
    return summary


# --- labels ------------------------------------------------------------------------------------------------------
def checked_labels(sent: object) -> list[str]:
    """Labels as Atlas checks them (EntityGraphMapper.validateLabels): strings of at most 50 characters, letters,
    digits, '_', '-' and '.'."""
    if sent is None:
        return []
    if not isinstance(sent, list) or not all(isinstance(label, str) for label in sent):
        raise errors.invalid_parameters("labels must be a list of strings")
    for label in sent:
        if len(label) > LABEL_MAX_LENGTH:
            raise errors.invalid_label(label, LABEL_MAX_LENGTH)
        if not _LABEL.match(label):
            raise errors.invalid_label(label)
    return list(dict.fromkeys(sent))


def write_labels(w: Writer, guid: str, sent: object, mode: str) -> None:
    """POST (set: exactly these), PUT (add) and DELETE (remove) /entity/guid/{guid}/labels. Add and remove need at
    least one label; the entity counts as updated only when its labels changed."""
    labels = checked_labels(sent)
    if mode != "set" and not labels:
        raise errors.invalid_parameters("labels is null/empty")
    row = w.target(guid)
    current = [str(label) for label in row.extra.get(LABELS) or ()]
    if mode == "set":
        after = labels
    elif mode == "add":
        after = current + [label for label in labels if label not in current]
    else:
        after = [label for label in current if label not in labels]
    if sorted(after) == sorted(current) and (mode != "set" or after == current):
        return
    extra = {k: v for k, v in row.extra.items() if k != LABELS}
    if after:
        extra[LABELS] = after
    w.session.update_entity(replace(row, extra=extra).touched(w.user, now_ms()))
