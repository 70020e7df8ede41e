"""The glossary of the Data Map API (/glossary…), as Apache Atlas's GlossaryService keeps it and Purview extends it:
glossaries and terms are entities (AtlasGlossary, AtlasGlossaryTerm); a term is anchored in one glossary
(AtlasGlossaryTermAnchor) and its qualifiedName is `{name}@{glossary}`; assigning a term to an entity is an
AtlasGlossarySemanticAssignment relationship, which carries the term's classifications to the entity. Purview's
term fields (status, templateName and the values of its term templates, resources, contacts, nickName) are kept
with the term (EntityRow.extra, key `_term`). Glossary categories and related terms are not modelled.
"""

from __future__ import annotations

import uuid
from dataclasses import replace

from olparser.jsontypes import JSON

from . import classifications, errors
from .business_metadata import attribute_value
from .classifications import Writer
from .store import EntityRow, RelationshipRow, Session, now_ms
from .typeregistry import TypeRegistry
from .views import TERM_ASSIGNMENT, object_id

GLOSSARY = "AtlasGlossary"
TERM = "AtlasGlossaryTerm"
ANCHOR = "AtlasGlossaryTermAnchor"  # end 1 the glossary, end 2 the term
TERM_FIELDS = "_term"
TERM_STATUSES = ("Draft", "Approved", "Alert", "Expired")  # the spec's TermStatus
_INVALID_NAME = set("@.<>")
_GLOSSARY_ATTRIBUTES = ("shortDescription", "longDescription", "language", "usage")
_TERM_ATTRIBUTES = ("shortDescription", "longDescription", "abbreviation", "examples", "usage")


def _name(body: JSON, missing: errors.AtlasError) -> str:
    name = body.get("name")
    if not isinstance(name, str) or not name.strip():
        raise missing
    if _INVALID_NAME & set(name):
        raise errors.glossary_error("bad name")
    return name


def _row(session: Session, guid: str, type_name: str) -> EntityRow:
    row = session.entity(guid)
    if row is None or row.status != "ACTIVE" or row.type_name != type_name:
        raise errors.instance_guid_not_found(guid)
    return row


def _system(row: EntityRow) -> JSON:
    return {
        "guid": row.guid,
        "qualifiedName": row.qualified_name,
        "name": row.name,
        "lastModifiedTS": str(row.modifications),
        "createTime": row.create_time,
        "createdBy": row.created_by,
        "updateTime": row.update_time,
        "updatedBy": row.updated_by,
    }


def _terms_of(session: Session, glossary: str) -> list[tuple[RelationshipRow, EntityRow]]:
    anchors = session.relationships_at(1, ANCHOR, [glossary])
    rows = session.entities([r.end2_guid for r in anchors])
    return [(r, rows[r.end2_guid]) for r in anchors if r.end2_guid in rows and rows[r.end2_guid].status == "ACTIVE"]


def render_glossary(session: Session, row: EntityRow) -> JSON:
    """An AtlasGlossary, with its terms as AtlasRelatedTermHeaders."""
    return {
        **_system(row),
        **{k: row.attributes[k] for k in _GLOSSARY_ATTRIBUTES if row.attributes.get(k) is not None},
        "classifications": classifications.direct(row),
        "terms": [
            {"termGuid": term.guid, "relationGuid": r.guid, "displayText": term.name}
            for r, term in _terms_of(session, row.guid)
        ],
        "categories": [],
    }


def anchor_of(session: Session, term: EntityRow) -> tuple[RelationshipRow, EntityRow] | None:
    anchors = session.relationships_at(2, ANCHOR, [term.guid])
    glossaries = session.entities([r.end1_guid for r in anchors])
    return next(((r, glossaries[r.end1_guid]) for r in anchors if r.end1_guid in glossaries), None)


def term_fields(row: EntityRow) -> JSON:
    return dict(row.extra.get(TERM_FIELDS) or {})


def render_term(session: Session, row: EntityRow) -> JSON:
    """An AtlasGlossaryTerm: its attributes, Purview's fields, its anchor and the entities it is assigned to."""
    anchor = anchor_of(session, row)
    assignments = session.relationships_at(1, TERM_ASSIGNMENT, [row.guid])
    entities = session.entities([r.end2_guid for r in assignments])
    fields = term_fields(row)
    return {
        **_system(row),
        **{k: row.attributes[k] for k in _TERM_ATTRIBUTES if row.attributes.get(k) is not None},
        "status": fields.get("status", "Draft"),
        **{k: fields[k] for k in ("nickName", "templateName", "attributes", "resources", "contacts") if k in fields},
        "classifications": classifications.direct(row),
        **(
            {"anchor": {"glossaryGuid": anchor[1].guid, "relationGuid": anchor[0].guid, "displayText": anchor[1].name}}
            if anchor
            else {}
        ),
        "assignedEntities": [
            {
                **object_id(entities[r.end2_guid]),
                "displayText": entities[r.end2_guid].name or entities[r.end2_guid].qualified_name,
                "entityStatus": entities[r.end2_guid].status,
                "relationshipType": TERM_ASSIGNMENT,
                "relationshipGuid": r.guid,
                "relationshipStatus": "ACTIVE",
            }
            for r in assignments
            if r.end2_guid in entities
        ],
        "categories": [],
    }


# --- glossaries --------------------------------------------------------------------------------------------------
def list_glossaries(session: Session, limit: int, offset: int, descending: bool) -> list[JSON]:
    rows = sorted(session.search([GLOSSARY], None), key=lambda r: (r.name or "").lower(), reverse=descending)
    return [render_glossary(session, row) for row in (rows[offset:] if limit < 0 else rows[offset : offset + limit])]


def _stored(guid: str, type_name: str, qualified_name: str, attributes: JSON, extra: JSON, user: str) -> EntityRow:
    when = now_ms()
    return EntityRow(guid, type_name, qualified_name, "ACTIVE", attributes, extra, when, when, user, user, 1)


def create_glossary(w: Writer, body: object) -> JSON:
    """POST /glossary (GlossaryService.createGlossary): its qualifiedName is its name unless given; names are
    unique; it is kept in the collection the writer creates in."""
    session = w.session
    if not isinstance(body, dict):
        raise errors.bad_request("Glossary definition missing")
    name = _name(body, errors.glossary_error("glossary unnamed"))
    qualified_name = body.get("qualifiedName")
    qualified_name = qualified_name if isinstance(qualified_name, str) and qualified_name else name
    if session.active_entity([GLOSSARY], qualified_name) is not None or any(
        row.name == name for row in session.search([GLOSSARY], None)
    ):
        raise errors.glossary_error("glossary exists", name)
    attributes = {"qualifiedName": qualified_name, "name": name}
    attributes |= {k: body[k] for k in _GLOSSARY_ATTRIBUTES if isinstance(body.get(k), str)}
    collection = w.placement.of_new() if w.placement is not None else None
    row = _stored(str(uuid.uuid4()), GLOSSARY, qualified_name, attributes, _placed(collection), w.user)
    session.insert_entity(row)
    return render_glossary(session, row)


def _placed(collection: str | None) -> JSON:
    return {"collectionId": collection} if collection else {}


def get_glossary(session: Session, guid: str) -> JSON:
    return render_glossary(session, _row(session, guid, GLOSSARY))


def _updating(w: Writer, guid: str, type_name: str, body: object) -> tuple[EntityRow, JSON]:
    """The glossary or term a PUT updates (one the writer may write), and its body (an object)."""
    row = w.may_write(_row(w.session, guid, type_name))
    if not isinstance(body, dict):
        raise errors.bad_request(f"{type_name} is null/empty")
    return row, body


def update_glossary(w: Writer, guid: str, body: object) -> JSON:
    """PUT /glossary/{guid}: its name and descriptions (the qualifiedName stays)."""
    row, body = _updating(w, guid, GLOSSARY, body)
    name = _name(body, errors.bad_request("DisplayName can't be null/empty"))
    attributes = {"qualifiedName": row.qualified_name, "name": name}
    attributes |= {k: body[k] for k in _GLOSSARY_ATTRIBUTES if isinstance(body.get(k), str)}
    row = replace(row, attributes=attributes).touched(w.user, now_ms())
    w.session.update_entity(row)
    return render_glossary(w.session, row)


def delete_glossary(w: Writer, guid: str) -> None:
    """DELETE /glossary/{guid}: the glossary and its terms (none of which may be assigned)."""
    row = w.may_write(_row(w.session, guid, GLOSSARY))
    for _, term in _terms_of(w.session, guid):
        delete_term(w, term.guid)
    w.session.update_entity(replace(row, status="DELETED").touched(w.user, now_ms()))


# --- terms -------------------------------------------------------------------------------------------------------
def _term_fields(registry: TypeRegistry, body: JSON) -> JSON:
    """Purview's fields of a term: a status of TermStatus, term templates that exist and values of their
    attributes."""
    status = body.get("status", "Draft")
    if status not in TERM_STATUSES:
        raise errors.invalid_parameters(f"status must be one of {', '.join(TERM_STATUSES)}")
    fields: JSON = {"status": status}
    templates = body.get("templateName") or []
    if not isinstance(templates, list) or not all(isinstance(t, str) for t in templates):
        raise errors.invalid_parameters("templateName must be a list of term template names")
    for template in templates:
        definition = registry.get(template)
        if definition is None or definition["category"] != "TERM_TEMPLATE":
            raise errors.type_name_not_found(template)
    values = body.get("attributes") or {}
    if not isinstance(values, dict) or not all(isinstance(v, dict) for v in values.values()):
        raise errors.invalid_parameters('attributes must be {"<term template>": {"<attribute>": value}}')
    checked: JSON = {}
    for template, given in values.items():
        if template not in templates:
            raise errors.invalid_parameters(f"attributes of term template {template}, which templateName lacks")
        definition = registry.get(template) or {}
        declared = {a["name"]: a for a in definition.get("attributeDefs") or ()}
        for attribute, value in given.items():
            if attribute not in declared:
                raise errors.unknown_attribute(attribute, template)
            field = f"{template}.{attribute}"
            checked.setdefault(template, {})[attribute] = attribute_value(registry, declared[attribute], value, field)
    if templates:
        fields["templateName"] = templates
    if checked:
        fields["attributes"] = checked
    for key in ("nickName", "resources", "contacts"):
        if body.get(key) is not None:
            fields[key] = body[key]
    return fields


def create_term(w: Writer, body: object) -> JSON:
    """POST /glossary/term (GlossaryService.createTerm): anchored in an existing glossary the writer may write, named
    without '@', '.', '<' or '>', qualifiedName `{name}@{glossary qualifiedName}`, unique."""
    session, registry = w.session, w.registry
    if not isinstance(body, dict):
        raise errors.bad_request("GlossaryTerm definition missing")
    anchor = body.get("anchor")
    if not isinstance(anchor, dict) or not isinstance(anchor.get("glossaryGuid"), str):
        raise errors.glossary_error("no anchor")
    name = _name(body, errors.glossary_error("term unnamed"))
    glossary = w.may_write(_row(session, anchor["glossaryGuid"], GLOSSARY))
    qualified_name = f"{name}@{glossary.qualified_name}"
    if session.active_entity([TERM], qualified_name) is not None:
        raise errors.glossary_error("term exists", qualified_name)
    attributes = {"qualifiedName": qualified_name, "name": name}
    attributes |= {k: body[k] for k in _TERM_ATTRIBUTES if body.get(k) is not None}
    extra = {**_placed(glossary.extra.get("collectionId")), TERM_FIELDS: _term_fields(registry, body)}
    row = _stored(str(uuid.uuid4()), TERM, qualified_name, attributes, extra, w.user)
    session.insert_entity(row)
    session.insert_relationship(RelationshipRow(str(uuid.uuid4()), ANCHOR, glossary.guid, row.guid, 0), now_ms())
    return render_term(session, row)


def get_term(session: Session, guid: str) -> JSON:
    return render_term(session, _row(session, guid, TERM))


def update_term(w: Writer, guid: str, body: object) -> JSON:
    """PUT /glossary/term/{guid}: its descriptions and Purview's fields (its name and anchor stay)."""
    row, body = _updating(w, guid, TERM, body)
    attributes = {"qualifiedName": row.qualified_name, "name": row.name}
    attributes |= {k: body[k] for k in _TERM_ATTRIBUTES if body.get(k) is not None}
    extra = {**row.extra, TERM_FIELDS: _term_fields(w.registry, body)}
    row = replace(row, attributes=attributes, extra=extra).touched(w.user, now_ms())
    w.session.update_entity(row)
    return render_term(w.session, row)


def delete_term(w: Writer, guid: str) -> None:
    """DELETE /glossary/term/{guid}: only a term assigned to no entity (TERM_HAS_ENTITY_ASSOCIATION)."""
    session = w.session
    row = w.may_write(_row(session, guid, TERM))
    assigned = session.relationships_at(1, TERM_ASSIGNMENT, [guid])
    if assigned:
        raise errors.glossary_error("term assigned", len(assigned), guid)
    session.delete_relationships(r.guid for r in session.relationships_at(2, ANCHOR, [guid]))
    session.update_entity(replace(row, status="DELETED").touched(w.user, now_ms()))


def list_terms(session: Session, glossary: str, limit: int, offset: int) -> list[JSON]:
    _row(session, glossary, GLOSSARY)
    terms = sorted((term for _, term in _terms_of(session, glossary)), key=lambda t: (t.name or "").lower())
    return [render_term(session, t) for t in (terms[offset:] if limit < 0 else terms[offset : offset + limit])]


# --- term assignment ---------------------------------------------------------------------------------------------
def assigned_entities(session: Session, guid: str) -> list[JSON]:
    return list(render_term(session, _row(session, guid, TERM))["assignedEntities"])


def _object_ids(body: object) -> list[JSON]:
    if not isinstance(body, list) or not body or not all(isinstance(o, dict) for o in body):
        raise errors.invalid_parameters('the body must be a list of entities: [{"guid": "<entity guid>"}]')
    return body


def assign(w: Writer, guid: str, body: object) -> None:
    """POST /glossary/terms/{guid}/assignedEntities (GlossaryTermUtils.processTermAssignments): each entity (one the
    writer may write) gets the term once; the term's classifications flow to it."""
    session, user = w.session, w.user
    term = _row(session, guid, TERM)
    added: list[RelationshipRow] = []
    for item in _object_ids(body):
        target = w.target(str(item.get("guid")))
        if session.relationships_between(TERM_ASSIGNMENT, term.guid, target.guid) or target.guid in {
            r.end2_guid for r in added
        }:
            raise errors.relationship_already_exists(TERM_ASSIGNMENT, term.guid, target.guid)
        attributes = (item.get("relationshipAttributes") or {}).get("attributes") or {}
        row = RelationshipRow(str(uuid.uuid4()), TERM_ASSIGNMENT, term.guid, target.guid, 0)
        session.insert_relationship(row, now_ms(), user, attributes if isinstance(attributes, dict) else {})
        session.update_entity(target.touched(user, now_ms()))
        added.append(row)
    classifications.relationships_changed(session, w.registry, added, [])


def dissociate(w: Writer, guid: str, body: object) -> None:
    """DELETE /glossary/terms/{guid}/assignedEntities (GlossaryTermUtils.processTermDissociation): each entity (one
    the writer may write) with the guid of its assignment (`relationshipGuid`); what the term's classifications gave
    it goes."""
    session = w.session
    term = _row(session, guid, TERM)
    current = {r.guid: r for r in session.relationships_at(1, TERM_ASSIGNMENT, [term.guid])}
    removed: list[RelationshipRow] = []
    for item in _object_ids(body):
        relationship = item.get("relationshipGuid")
        if relationship is None:
            raise errors.glossary_error("no relationship")
        found = current.get(str(relationship))
        if found is None or found.end2_guid != item.get("guid"):
            raise errors.glossary_error("bad relationship", relationship, term.guid, item.get("guid"))
        removed.append(found)
    targets = [w.may_write(row) for row in session.entities([r.end2_guid for r in removed]).values()]
    session.delete_relationships(r.guid for r in removed)
    for target in targets:
        session.update_entity(target.touched(w.user, now_ms()))
    classifications.relationships_changed(session, w.registry, [], removed)
