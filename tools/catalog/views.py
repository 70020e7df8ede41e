"""How stored entities are answered: Atlas entities, entity headers and object ids, as plain JSON."""

from __future__ import annotations

from typing import Any, Iterable

from .store import EntityRow, RelationshipRow, Session
from .typeregistry import Reference, TypeRegistry

JSON = dict[str, Any]


def display_text(row: EntityRow) -> str:
    return row.name or row.qualified_name


def object_id(row: EntityRow) -> JSON:
    return {"guid": row.guid, "typeName": row.type_name, "uniqueAttributes": {"qualifiedName": row.qualified_name}}


def related_object_id(row: EntityRow, relationship: RelationshipRow) -> JSON:
    return {
        **object_id(row),
        "entityStatus": row.status,
        "displayText": display_text(row),
        "relationshipType": relationship.type_name,
        "relationshipGuid": relationship.guid,
        "relationshipStatus": "ACTIVE",
        "relationshipAttributes": {"typeName": relationship.type_name},
    }


def mutation_header(row: EntityRow) -> JSON:
    """The entity header of a mutation response, in the shape Purview answers."""
    return {
        "typeName": row.type_name,
        "attributes": {"qualifiedName": row.qualified_name},
        "lastModifiedTS": str(row.modifications),
        "guid": row.guid,
        "status": row.status,
    }


def entity_header(row: EntityRow, attribute_names: Iterable[str] | None = None) -> JSON:
    """An AtlasEntityHeader: qualifiedName and name, plus the primitive attributes named (all when None)."""
    if attribute_names is None:
        attributes = dict(row.attributes)
    else:
        wanted = {"qualifiedName", "name", *attribute_names}
        attributes = {k: v for k, v in row.attributes.items() if k in wanted}
    attributes.setdefault("qualifiedName", row.qualified_name)
    return {
        "typeName": row.type_name,
        "attributes": attributes,
        "guid": row.guid,
        "status": row.status,
        "displayText": display_text(row),
        "lastModifiedTS": str(row.modifications),
        "classificationNames": [],
        "meaningNames": [],
        "meanings": [],
        "isIncomplete": False,
        "labels": [],
    }


HEADER_ATTRIBUTES = ("name", "description", "owner", "createTime")  # with qualifiedName: what an entity header carries


def full_header(row: EntityRow) -> JSON:
    """The AtlasEntityHeader of `GET /entity/guid/{guid}/header`: the header attributes and the system fields."""
    return {
        **entity_header(row, HEADER_ATTRIBUTES),
        "createdBy": row.created_by,
        "updatedBy": row.updated_by,
        "createTime": row.create_time,
        "updateTime": row.update_time,
        "classifications": [],
    }


def _held(candidates: tuple[Reference, ...], relationships: list[RelationshipRow], guid: str) -> Reference:
    """Which of an attribute's relationship defs an entity's value is read from: the one it holds a relationship of
    (an attribute name may belong to several), else the default (Atlas's GraphHelper.getRelationshipTypeName)."""
    for reference in candidates:
        if any(
            r.type_name == reference.relationship_type and (r.end1_guid if reference.end == 1 else r.end2_guid) == guid
            for r in relationships
        ):
            return reference
    return candidates[0]


def render_entity(session: Session, registry: TypeRegistry, row: EntityRow, ignore_relationships: bool = False) -> JSON:
    """The full Atlas entity: attributes (references as object ids), relationshipAttributes, system fields."""
    attributes = dict(row.attributes)
    relationship_attributes: JSON = {}
    entity_type = registry.entity_type(row.type_name)
    if entity_type is not None and entity_type.references:
        relationships = session.relationships_of(row.guid)
        others = (
            session.entities({r.end2_guid if r.end1_guid == row.guid else r.end1_guid for r in relationships})
            if relationships
            else {}
        )
        for name, candidates in entity_type.references.items():
            reference = _held(candidates, relationships, row.guid)
            pairs = [
                (r, others.get(r.end2_guid if reference.end == 1 else r.end1_guid))
                for r in relationships
                if r.type_name == reference.relationship_type
                and (r.end1_guid if reference.end == 1 else r.end2_guid) == row.guid
            ]
            linked = [(r, other) for r, other in pairs if other is not None]
            if reference.in_attributes and (reference.many or linked):
                ids = [object_id(other) for _, other in linked]
                attributes[name] = ids if reference.many else ids[-1]
            if not reference.relationship_type.startswith("attribute:") and not ignore_relationships:
                related = [related_object_id(other, r) for r, other in linked]
                relationship_attributes[name] = related if reference.many else (related[-1] if related else None)
    entity: JSON = {
        "typeName": row.type_name,
        "attributes": attributes,
        "guid": row.guid,
        "status": row.status,
        "createdBy": row.created_by,
        "updatedBy": row.updated_by,
        "createTime": row.create_time,
        "updateTime": row.update_time,
        "version": 0,
        "lastModifiedTS": str(row.modifications),
    }
    if not ignore_relationships:
        entity["relationshipAttributes"] = relationship_attributes
    entity.update(row.extra)
    return entity
