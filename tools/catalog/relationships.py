"""Atlas's relationship REST API over the store: create, update (attributes), read and soft delete, typed by the
relationship defs of the registry (the base model's, the built-in scanner types', and any registered later).

Runs inside one store transaction per request; errors are Atlas's (codes from AtlasErrorCode).
"""

from __future__ import annotations

import uuid

from olparser.jsontypes import JSON

from . import classifications, errors
from .store import EntityRow, RelationshipDetail, RelationshipRow, Session, now_ms
from .typeregistry import TypeRegistry
from .views import entity_header, object_id


def relationship_label(definition: JSON) -> str:
    """The edge label Atlas gives a relationship type: its relationshipLabel, else `__Type.attribute` of a legacy
    end, else `r:<name>`."""
    if isinstance(definition.get("relationshipLabel"), str) and definition["relationshipLabel"]:
        return definition["relationshipLabel"]
    for key in ("endDef1", "endDef2"):
        end = definition.get(key) or {}
        if end.get("isLegacyAttribute"):
            return f"__{end.get('type')}.{end.get('name')}"
    return f"r:{definition['name']}"


def render_relationship(session: Session, registry: TypeRegistry, detail: RelationshipDetail) -> JSON:
    """An AtlasRelationship."""
    definition = registry.get(detail.row.type_name) or {"name": detail.row.type_name}
    ends = session.entities([detail.row.end1_guid, detail.row.end2_guid])
    return {
        "typeName": detail.row.type_name,
        "attributes": dict(detail.attributes),
        "guid": detail.row.guid,
        "provenanceType": 0,
        "status": detail.status,
        "createdBy": detail.created_by,
        "updatedBy": detail.updated_by,
        "createTime": detail.create_time,
        "updateTime": detail.update_time,
        "version": detail.version,
        "end1": _end(ends.get(detail.row.end1_guid), detail.row.end1_guid),
        "end2": _end(ends.get(detail.row.end2_guid), detail.row.end2_guid),
        "label": relationship_label(definition),
        "propagateTags": definition.get("propagateTags", "NONE"),
        "propagatedClassifications": [],
        "blockedPropagatedClassifications": [],
    }


def _end(row: EntityRow | None, guid: str) -> JSON:
    return object_id(row) if row is not None else {"guid": guid}


def get_relationship(session: Session, registry: TypeRegistry, guid: str, extended_info: bool) -> JSON:
    """GET /relationship/guid/{guid}: an AtlasRelationshipWithExtInfo (the ends' headers when `extended_info`)."""
    detail = _existing(session, guid)
    referred: JSON = {}
    if extended_info:
        ends = session.entities([detail.row.end1_guid, detail.row.end2_guid])
        referred = {g: entity_header(row) for g, row in ends.items()}
    return {"relationship": render_relationship(session, registry, detail), "referredEntities": referred}


def create_relationship(session: Session, registry: TypeRegistry, body: object, user: str) -> JSON:
    """POST /relationship: a new ACTIVE relationship between two existing entities of the def's end types."""
    definition, relationship = _typed(registry, body)
    end1, end2 = (_resolve_end(session, registry, relationship.get(key), key) for key in ("end1", "end2"))
    expected1, expected2 = definition["endDef1"]["type"], definition["endDef2"]["type"]
    if not (registry.is_a(end1.type_name, expected1) and registry.is_a(end2.type_name, expected2)):
        raise errors.invalid_relationship_end_types(
            definition["name"], end1.type_name, end2.type_name, expected1, expected2
        )
    if session.relationships_between(definition["name"], end1.guid, end2.guid):
        raise errors.relationship_already_exists(definition["name"], end1.guid, end2.guid)
    guid = str(uuid.uuid4())
    position = len(session.relationships_at(1, definition["name"], [end1.guid]))
    row = RelationshipRow(guid, definition["name"], end1.guid, end2.guid, position)
    session.insert_relationship(row, now_ms(), user, _declared_attributes(definition, relationship.get("attributes")))
    classifications.relationships_changed(session, registry, [row], [])
    detail = session.relationship(guid)
    assert detail is not None
    return render_relationship(session, registry, detail)


def update_relationship(session: Session, registry: TypeRegistry, body: object, user: str) -> JSON:
    """PUT /relationship: change the attributes of an existing relationship (its type and ends cannot change)."""
    definition, relationship = _typed(registry, body)
    guid = relationship.get("guid")
    if not isinstance(guid, str) or not guid:
        raise errors.invalid_parameters("a relationship update needs the relationship's guid")
    detail = _existing(session, guid)
    if detail.row.type_name != definition["name"]:
        raise errors.relationship_type_change(guid, detail.row.type_name, definition["name"])
    for key, current in (("end1", detail.row.end1_guid), ("end2", detail.row.end2_guid)):
        if relationship.get(key) is not None:
            sent = _resolve_end(session, registry, relationship[key], key)
            if sent.guid != current:
                raise errors.relationship_end_change(definition["name"], guid, current, sent.guid)
    attributes = {**detail.attributes, **_declared_attributes(definition, relationship.get("attributes"))}
    session.update_relationship(guid, detail.status, attributes, user, now_ms())
    updated = session.relationship(guid)
    assert updated is not None
    return render_relationship(session, registry, updated)


def delete_relationship(session: Session, guid: str, user: str, registry: TypeRegistry | None = None) -> None:
    """DELETE /relationship/guid/{guid}: soft delete (status DELETED), as Atlas does; with the registry, the
    classifications it carried go as Atlas lets them (classifications.relationships_changed)."""
    detail = _existing(session, guid)
    if detail.status == "DELETED":
        raise errors.relationship_already_deleted(guid)
    session.update_relationship(guid, "DELETED", detail.attributes, user, now_ms())
    if registry is not None:
        classifications.relationships_changed(session, registry, [], [detail.row])


def _existing(session: Session, guid: str) -> RelationshipDetail:
    detail = session.relationship(guid)
    if detail is None:
        raise errors.relationship_guid_not_found(guid)
    return detail


def _typed(registry: TypeRegistry, body: object) -> tuple[JSON, JSON]:
    if not isinstance(body, dict):
        raise errors.invalid_parameters("the body must be an AtlasRelationship JSON object")
    type_name = body.get("typeName")
    definition = registry.get(type_name) if isinstance(type_name, str) else None
    if definition is None or definition.get("category") != "RELATIONSHIP":
        raise errors.unknown_relationship_type(type_name)
    if body.get("attributes") is not None and not isinstance(body["attributes"], dict):
        raise errors.invalid_parameters("'attributes' must be a JSON object")
    return definition, body


def _declared_attributes(definition: JSON, sent: object) -> JSON:
    """The sent attributes the relationship def declares (others are dropped, as for entities)."""
    declared = {a.get("name") for a in definition.get("attributeDefs") or ()}
    return {k: v for k, v in (sent or {}).items() if k in declared} if isinstance(sent, dict) else {}


def _resolve_end(session: Session, registry: TypeRegistry, item: object, which: str) -> EntityRow:
    """The active entity an end's AtlasObjectId names: `{guid}` or `{typeName, uniqueAttributes}`."""
    if item is None:
        raise errors.relationship_end_is_null(which)
    if not isinstance(item, dict):
        raise errors.invalid_object_id(item)
    guid = item.get("guid")
    if isinstance(guid, str) and guid and not guid.startswith("-"):
        row = session.entity(guid)
        if row is None:
            raise errors.instance_guid_not_found(guid)
    else:
        type_name = item.get("typeName")
        unique = item.get("uniqueAttributes")
        qualified_name = unique.get("qualifiedName") if isinstance(unique, dict) else None
        if not isinstance(type_name, str) or not isinstance(qualified_name, str):
            raise errors.invalid_object_id(item)
        if not registry.is_entity_type(type_name):
            raise errors.unknown_type(type_name)
        row = session.active_entity([type_name, *registry.subtypes(type_name)], qualified_name)
        if row is None:
            raise errors.instance_by_unique_attribute_not_found(type_name, qualified_name)
    if row.status != "ACTIVE":
        raise errors.instance_guid_deleted(row.guid)
    return row
