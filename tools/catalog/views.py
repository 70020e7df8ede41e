"""How stored entities are answered: Atlas entities, entity headers and object ids, as plain JSON."""

from __future__ import annotations

from typing import Iterable

from olparser.jsontypes import JSON

from .classifications import direct, names, of_entities
from .store import EntityRow, RelationshipRow, Session
from .typeregistry import Reference, TypeRegistry

TERM_ASSIGNMENT = "AtlasGlossarySemanticAssignment"  # end 1 the glossary term, end 2 the entity it means
_ASSIGNMENT_FIELDS = ("description", "expression", "status", "confidence", "createdBy", "steward", "source")


def meanings_of(session: Session, guids: Iterable[str]) -> dict[str, list[JSON]]:
    """The glossary terms assigned to each entity, as AtlasTermAssignmentHeaders
    (EntityGraphRetriever.toTermAssignmentHeader): the term's guid, name and qualifiedName, the assignment's guid and
    attributes."""
    guids = list(dict.fromkeys(guids))
    found: dict[str, list[JSON]] = {guid: [] for guid in guids}
    assignments = session.relationships_at(2, TERM_ASSIGNMENT, guids) if guids else []
    if not assignments:
        return found
    terms = session.entities({r.end1_guid for r in assignments})
    details = {r.guid: session.relationship(r.guid) for r in assignments}
    for r in assignments:
        term = terms.get(r.end1_guid)
        if term is None or term.status != "ACTIVE":
            continue
        detail = details[r.guid]
        attributes = detail.attributes if detail is not None else {}
        found[r.end2_guid].append(
            {
                "termGuid": term.guid,
                "relationGuid": r.guid,
                "displayText": term.name,
                "qualifiedName": term.qualified_name,
                **{k: attributes[k] for k in _ASSIGNMENT_FIELDS if attributes.get(k) is not None},
            }
        )
    return found


def labels_of(row: EntityRow) -> list[str]:
    return [str(label) for label in row.extra.get("labels") or ()]


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


def entity_header(
    row: EntityRow,
    attribute_names: Iterable[str] | None = None,
    classifications: list[JSON] | None = None,
    meanings: list[JSON] | None = None,
) -> JSON:
    """An AtlasEntityHeader: qualifiedName and name, plus the primitive attributes named (all when None); its
    classifications (own and propagated: `classifications` from classifications.of_entities, else its own) and
    glossary terms (`meanings`, from meanings_of)."""
    if attribute_names is None:
        attributes = dict(row.attributes)
    else:
        wanted = {"qualifiedName", "name", *attribute_names}
        attributes = {k: v for k, v in row.attributes.items() if k in wanted}
    attributes.setdefault("qualifiedName", row.qualified_name)
    carried = classifications if classifications is not None else direct(row)
    return {
        "typeName": row.type_name,
        "attributes": attributes,
        "guid": row.guid,
        "status": row.status,
        "displayText": display_text(row),
        "lastModifiedTS": str(row.modifications),
        "classificationNames": names(carried),
        "classifications": carried,
        "meaningNames": [str(m.get("displayText")) for m in meanings or ()],
        "meanings": list(meanings or ()),
        "isIncomplete": False,
        "labels": labels_of(row),
    }


HEADER_ATTRIBUTES = ("name", "description", "owner", "createTime")  # with qualifiedName: what an entity header carries


def headers(session: Session, rows: Iterable[EntityRow], attribute_names: Iterable[str] | None = None) -> list[JSON]:
    """Entity headers of many entities, with their classifications (own and propagated) and glossary terms."""
    rows = list(rows)
    carried = of_entities(session, rows)
    meanings = meanings_of(session, [row.guid for row in rows])
    return [entity_header(row, attribute_names, carried[row.guid], meanings[row.guid]) for row in rows]


def full_header(session: Session, row: EntityRow) -> JSON:
    """The AtlasEntityHeader of `GET /entity/guid/{guid}/header`: the header attributes and the system fields."""
    return {
        **headers(session, [row], HEADER_ATTRIBUTES)[0],
        "createdBy": row.created_by,
        "updatedBy": row.updated_by,
        "createTime": row.create_time,
        "updateTime": row.update_time,
    }


def created_header(row: EntityRow) -> JSON:
    """The header of an entity a write created, as the Data Map answers it (the spec's example
    Entity_AddCustomAttribute; Atlas's EntityGraphMapper.constructHeader): header attributes that have a value,
    display text, classifications and labels."""
    header = entity_header(row, HEADER_ATTRIBUTES, meanings=[])
    header["attributes"] = {k: v for k, v in header["attributes"].items() if v is not None}
    return header


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
    entity.update({k: v for k, v in row.extra.items() if not k.startswith("_")})  # `_…`: the catalog's own
    carried = of_entities(session, [row])[row.guid]
    if carried:
        entity["classifications"] = carried
    return entity
