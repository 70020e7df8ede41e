"""Entity writes with Atlas v2 semantics: bulk create-or-update with placeholder guids, and soft delete.

Runs inside one store write transaction: any error raised here rolls the whole request back.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
import time
import uuid
from dataclasses import replace

from olparser.jsontypes import JSON

from . import business_metadata, classifications, errors
from .collections import Placement
from .store import EntityRow, RelationshipRow, Session, now_ms
from .typeregistry import EntityType, Reference, TypeRegistry
from .views import created_header, mutation_header

KEPT_TOP_LEVEL_FIELDS = ("contacts", "labels", "customAttributes")  # stored and answered as sent
_server_placeholders = itertools.count(time.time_ns())


def is_placeholder(guid: str) -> bool:
    return guid.startswith("-")


def entities_of(body: object) -> list[JSON]:
    """The entities of an AtlasEntitiesWithExtInfo (`entities` + `referredEntities`) or AtlasEntityWithExtInfo."""
    if not isinstance(body, dict):
        raise errors.invalid_parameters("the body must be a JSON object with an 'entities' list")
    items = [body["entity"]] if "entity" in body and "entities" not in body else body.get("entities")
    if not isinstance(items, list):
        raise errors.invalid_parameters("'entities' must be a list of entities")
    referred = body.get("referredEntities") or {}
    if not isinstance(referred, dict):
        raise errors.invalid_parameters("'referredEntities' must be an object keyed by guid")
    found = list(items)
    for key, entity in referred.items():
        found.append({**entity, "guid": entity.get("guid") or key} if isinstance(entity, dict) else entity)
    for index, entity in enumerate(found):
        if not isinstance(entity, dict):
            raise errors.invalid_parameters(f"entity #{index} is not a JSON object")
        for key in ("attributes", "relationshipAttributes"):
            if entity.get(key) is not None and not isinstance(entity[key], dict):
                raise errors.invalid_parameters(f"entity #{index}: '{key}' must be a JSON object")
    return found


def upsert_entities(
    session: Session,
    registry: TypeRegistry,
    body: object,
    user: str,
    placement: Placement | None = None,
    business_behaviour: str = "ignore",
    full_created_headers: bool = False,
) -> JSON:
    """POST /entity/bulk: an EntityMutationResponse (`mutatedEntities`, `guidAssignments`). `placement`: the
    collection of new entities (and of the existing ones sent, which move there), and who may write where.
    `business_behaviour`: what the entities' `businessAttributes` do (business_metadata.written).
    `full_created_headers`: answer a created entity with its full header (header attributes, classifications,
    labels), as the Data Map answers POST /entity (the spec's example Entity_AddCustomAttribute); its bulk answer
    (example Entity_BulkCreateOrUpdate) and every update are the short header."""
    upsert = _Upsert(session, registry, user, placement, business_behaviour)
    upsert.full_created_headers = full_created_headers
    return upsert.run(entities_of(body))


def move_entities(session: Session, guids: object, placement: Placement) -> JSON:
    """POST /entity/moveTo?collectionId=: the entities (`{"entityGuids": [...]}`) into the placement's target."""
    if not isinstance(guids, list) or not guids or not all(isinstance(g, str) for g in guids):
        raise errors.invalid_parameters("the body must be {\"entityGuids\": [\"<guid>\", ...]} with at least one guid")
    when = now_ms()
    moved: list[EntityRow] = []
    assigned: dict[str, str] = {}
    for guid in dict.fromkeys(guids):
        row = session.entity(guid)
        if row is None or row.status != "ACTIVE":
            raise errors.instance_guid_not_found(guid)
        collection = placement.of_existing(row.extra.get("collectionId"))
        if collection != row.extra.get("collectionId"):
            row = replace(row, extra={**row.extra, "collectionId": collection}).touched(placement.user, when)
            session.update_entity(row)
        moved.append(row)
        assigned[f"-{next(_server_placeholders)}"] = row.guid
    # the Data Map answers the move as an entity update: with the guids it assigned to the entities it was sent
    # (the spec's example Entity_MoveEntitiesToCollection)
    return {"mutatedEntities": {"UPDATE": [mutation_header(r) for r in moved]}, "guidAssignments": assigned}


def partial_update(
    session: Session, registry: TypeRegistry, guid: str, body: object, user: str, placement: Placement | None = None
) -> JSON:
    """PUT /entity/guid/{guid}?name= and PUT /entity/uniqueAttribute/type/{t}: update the entity `guid` with only the
    attributes sent (an AtlasEntityWithExtInfo); Atlas reports the entity as PARTIAL_UPDATE."""
    if not isinstance(body, dict) or not isinstance(body.get("entity"), dict):
        raise errors.invalid_parameters("the body must be an AtlasEntityWithExtInfo: {\"entity\": {...}}")
    existing = session.entity(guid)
    if existing is None:
        raise errors.instance_guid_not_found(guid)
    entity = {**body["entity"], "guid": guid}
    entity.setdefault("typeName", existing.type_name)
    response = upsert_entities(session, registry, {**body, "entity": entity}, user, placement)
    mutated = response.get("mutatedEntities") or {}
    updated = mutated.get("UPDATE") or []
    partial = [header for header in updated if header["guid"] == guid]
    if partial:
        mutated["PARTIAL_UPDATE"] = partial
        rest = [header for header in updated if header["guid"] != guid]
        if rest:
            mutated["UPDATE"] = rest
        else:
            del mutated["UPDATE"]
    return response


def delete_entities(
    session: Session,
    guids: list[str],
    user: str,
    placement: Placement | None = None,
    registry: TypeRegistry | None = None,
) -> JSON:
    """Soft delete (status DELETED); unknown or already deleted entities are skipped, as Atlas does. With the
    registry, the classifications they passed on go as Atlas lets them (classifications.entities_deleted)."""
    when = now_ms()
    deleted: list[EntityRow] = []
    for guid in dict.fromkeys(guids):
        row = session.entity(guid)
        if row is None or row.status == "DELETED":
            continue
        if placement is not None:
            placement.of_existing(row.extra.get("collectionId"))
        row = replace(row, status="DELETED").touched(user, when)
        session.update_entity(row)
        deleted.append(row)
    if registry is not None and deleted:
        classifications.entities_deleted(session, registry, deleted)
    return {"mutatedEntities": {"DELETE": [mutation_header(r) for r in deleted]}} if deleted else {}


def write_business_attributes(
    session: Session,
    registry: TypeRegistry,
    guid: str,
    body: object,
    user: str,
    mode: str,
    placement: Placement | None = None,
) -> None:
    """POST /entity/guid/{guid}/businessmetadata (`mode` merge, or replace with ?isOverwrite=true) and DELETE (`mode`
    remove), as Atlas's AtlasEntityStoreV2.addOrUpdateBusinessAttributes / removeBusinessAttributes do them: the
    body is `{"<business metadata>": {"<attribute>": value}}`. The entity counts as updated when they changed."""
    if not isinstance(body, dict) or not body:
        raise errors.invalid_parameters("businessAttributes is null/empty")
    row = session.entity(guid)
    if row is None:
        raise errors.instance_guid_not_found(guid)
    if placement is not None:
        placement.of_existing(row.extra.get("collectionId"))
    current = business_metadata.of(row.extra)
    if mode == "remove":
        values = business_metadata.removed(
            current, business_metadata.checked(registry, row.type_name, body, with_values=False)
        )
    else:
        sent = business_metadata.checked(registry, row.type_name, body)
        values = business_metadata.applied(current, sent, replace=mode == "replace")
    extra = business_metadata.with_values(row.extra, values)
    if extra != row.extra:
        session.update_entity(replace(row, extra=extra).touched(user, now_ms()))


def _object_id_text(item: object) -> str:
    return json.dumps(item, sort_keys=True) if isinstance(item, dict) else repr(item)


class _Upsert:
    def __init__(
        self, session: Session, registry: TypeRegistry, user: str, placement: Placement | None, business: str
    ) -> None:
        self.session = session
        self.business = business
        self.placement = placement
        self.registry = registry
        self.user = user
        self.when = now_ms()
        self.assigned: dict[str, str] = {}  # placeholder guid -> real guid
        self.rows: dict[str, EntityRow] = {}  # the current state of every entity this request touched
        self.created: dict[str, None] = {}
        self.updated: dict[str, None] = {}
        self.affected: dict[str, None] = {}  # gained or lost a relationship
        self.full_created_headers = False
        self.added_relationships: list[RelationshipRow] = []
        self.removed_relationships: list[RelationshipRow] = []

    def run(self, entities: list[JSON]) -> JSON:
        identified = []
        for entity in entities:
            type_name = entity.get("typeName")
            entity_type = self.registry.entity_type(type_name) if isinstance(type_name, str) else None
            if entity_type is None:
                raise errors.unknown_type(type_name)
            sent_guid = entity.get("guid")
            sent_guid = f"-{next(_server_placeholders)}" if sent_guid in (None, "") else str(sent_guid)
            identified.append((entity, self._identify(entity, entity_type, sent_guid)))
        for entity, guid in identified:
            self._link(entity, guid)
        for guid in self.affected:
            if guid not in self.created and guid not in self.updated:
                row = self._row(guid).touched(self.user, self.when)
                self.session.update_entity(row)
                self.rows[guid] = row
                self.updated[guid] = None
        classifications.relationships_changed(
            self.session, self.registry, self.added_relationships, self.removed_relationships
        )
        for guid in self.created:
            classifications.propagate_own(self.session, self.registry, self.rows[guid])
        response: JSON = {}
        mutated: JSON = {}
        if self.created:
            header = created_header if self.full_created_headers else mutation_header
            mutated["CREATE"] = [header(self.rows[g]) for g in self.created]
        if self.updated:
            mutated["UPDATE"] = [mutation_header(self.rows[g]) for g in self.updated]
        if mutated:
            response["mutatedEntities"] = mutated
        if self.assigned:
            response["guidAssignments"] = dict(self.assigned)
        return response

    # --- pass 1: find or create each entity, with its primitive attributes -------------------------------------
    def _find(self, type_name: str, qualified_name: object) -> EntityRow | None:
        if not isinstance(qualified_name, str):
            return None
        row = self.session.active_entity([type_name, *self.registry.subtypes(type_name)], qualified_name)
        return self.rows.get(row.guid, row) if row else None

    def _identify(self, entity: JSON, entity_type: EntityType, sent_guid: str) -> str:
        sent = entity.get("attributes") or {}
        primitives = {k: v for k, v in sent.items() if entity_type.primitive(k) is not None}
        qualified_name = primitives.get("qualifiedName")
        if qualified_name is not None and not isinstance(qualified_name, str):
            raise errors.invalid_value(f"{entity_type.name}.qualifiedName must be a string")
        kept = {k: entity[k] for k in KEPT_TOP_LEVEL_FIELDS if entity.get(k) is not None}
        if "labels" in kept:
            kept["labels"] = classifications.checked_labels(kept["labels"])
        if sent_guid in self.assigned:
            existing: EntityRow | None = self.rows[self.assigned[sent_guid]]
        elif is_placeholder(sent_guid):
            existing = self._find(entity_type.name, qualified_name)
        else:
            existing = (
                self.rows.get(sent_guid)
                or self.session.entity(sent_guid)
                or self._find(entity_type.name, qualified_name)
            )
        if existing is None:
            self._check_required(entity_type, primitives)
            if qualified_name is None:  # a type outside Referenceable still needs its identity
                raise errors.missing_mandatory_attribute(entity_type.name, "qualifiedName", entity_type.name)
            guid = str(uuid.uuid4()) if is_placeholder(sent_guid) else sent_guid
            if self.placement is not None:
                kept["collectionId"] = self.placement.of_new()
            kept = self._with_business(entity, entity_type.name, kept)
            row = EntityRow(
                guid,
                entity_type.name,
                qualified_name,
                "ACTIVE",
                primitives,
                kept,
                self.when,
                self.when,
                self.user,
                self.user,
                1,
            )
            # an entity's classifications are written when it is created; an update leaves them (Atlas's default,
            # replaceClassifications=false): the classification routes change them
            row = classifications.created(self.session, self.registry, row, entity.get("classifications"))
            self._write(row, insert=True)
            self.created[guid] = None
        else:
            if not self.registry.is_a(existing.type_name, entity_type.name):
                raise errors.type_match_failed(entity_type.name, existing.type_name)
            merged = {**existing.attributes, **primitives}
            self._check_required(self.registry.entity_type(existing.type_name) or entity_type, merged)
            extra = self._with_business(entity, existing.type_name, {**existing.extra, **kept})
            if self.placement is not None and existing.guid not in self.created:
                extra["collectionId"] = self.placement.of_existing(existing.extra.get("collectionId"))
            row = existing
            if merged != existing.attributes or extra != existing.extra:
                row = replace(existing, attributes=merged, qualified_name=merged["qualifiedName"], extra=extra)
                if existing.guid not in self.created and existing.guid not in self.updated:
                    row = row.touched(self.user, self.when)
                    self.updated[row.guid] = None
                self._write(row, insert=False)
        if is_placeholder(sent_guid):
            self.assigned[sent_guid] = row.guid
        self.rows[row.guid] = row
        return row.guid

    def _with_business(self, entity: JSON, type_name: str, extra: JSON) -> JSON:
        sent = entity.get(business_metadata.KEY)
        return business_metadata.written(self.registry, type_name, extra, sent, self.business)

    @staticmethod
    def _check_required(entity_type: EntityType, attributes: JSON) -> None:
        for attribute in entity_type.required:
            if attributes.get(attribute.name) is None:
                raise errors.missing_mandatory_attribute(entity_type.name, attribute.name, attribute.declared_by)

    def _write(self, row: EntityRow, insert: bool) -> None:
        try:
            self.session.insert_entity(row) if insert else self.session.update_entity(row)
        except sqlite3.IntegrityError as exc:
            raise errors.instance_already_exists(
                f"{row.type_name} with qualifiedName {row.qualified_name} already exists"
            ) from exc

    def _row(self, guid: str) -> EntityRow:
        row = self.rows.get(guid) or self.session.entity(guid)
        assert row is not None, guid
        return row

    # --- pass 2: references (attributes typed with entity types, relationship attributes) ---------------------
    def _link(self, entity: JSON, guid: str) -> None:
        entity_type = self.registry.entity_type(self._row(guid).type_name)
        assert entity_type is not None
        sent: dict[str, tuple[Reference, object]] = {}
        for source in (entity.get("attributes") or {}, entity.get("relationshipAttributes") or {}):
            for name, value in source.items():
                hint = (
                    value.get("relationshipType")
                    if isinstance(value, dict)
                    else (
                        value[0].get("relationshipType")
                        if isinstance(value, list) and value and isinstance(value[0], dict)
                        else None
                    )
                )
                reference = entity_type.reference(name, hint)
                if reference is not None and value is not None:
                    sent[name] = (reference, value)
        for reference, value in sent.values():
            self._replace(guid, reference, self._targets(entity_type, reference, value))

    def _targets(self, entity_type: EntityType, reference: Reference, value: object) -> list[str]:
        where = f"{entity_type.name}.{reference.attribute}"
        if reference.many and not isinstance(value, list):
            raise errors.invalid_value(f"{where} expects a list of object ids, got {_object_id_text(value)}")
        if not reference.many and isinstance(value, list):
            raise errors.invalid_value(f"{where} expects one object id, got a list")
        guids: list[str] = []
        for item in value if isinstance(value, list) else [value]:
            target = self._resolve(item)
            if not self.registry.is_a(target.type_name, reference.target_type):
                raise errors.invalid_relationship_end(
                    reference.attribute, target.guid, target.type_name, reference.target_type
                )
            if target.guid not in guids:
                guids.append(target.guid)
        return guids

    def _resolve(self, item: object) -> EntityRow:
        """The entity an AtlasObjectId names: `{guid}` (placeholder or real) or `{typeName, uniqueAttributes}`."""
        if not isinstance(item, dict):
            raise errors.invalid_object_id(_object_id_text(item))
        guid = item.get("guid")
        if guid not in (None, ""):
            guid = str(guid)
            real = self.assigned.get(guid, guid)
            if real in self.rows:
                return self.rows[real]
            row = None if is_placeholder(real) else self.session.entity(real)
            if row is None:
                raise errors.referenced_entity_not_found(guid)
            return row
        type_name = item.get("typeName")
        unique = item.get("uniqueAttributes")
        qualified_name = unique.get("qualifiedName") if isinstance(unique, dict) else None
        if not isinstance(type_name, str) or not isinstance(qualified_name, str):
            raise errors.invalid_object_id(_object_id_text(item))
        if not self.registry.is_entity_type(type_name):
            raise errors.unknown_type(type_name)
        row = self._find(type_name, qualified_name)
        if row is None:
            raise errors.referenced_entity_not_found(
                f"AtlasObjectId{{guid='null', typeName='{type_name}', "
                f"uniqueAttributes={{qualifiedName:{qualified_name}}}}}"
            )
        return row

    def _replace(self, owner: str, reference: Reference, targets: list[str]) -> None:
        """Make the owner's relationships of this reference exactly `targets`, in order (a new list replaces)."""

        def other(r: RelationshipRow) -> str:
            return r.end2_guid if reference.end == 1 else r.end1_guid

        current = {
            other(r): r for r in self.session.relationships_at(reference.end, reference.relationship_type, [owner])
        }
        removed = [r for g, r in current.items() if g not in targets]
        self.session.delete_relationships(r.guid for r in removed)
        self.removed_relationships += removed
        for r in removed:
            self.affected.update({owner: None, other(r): None})
        single_at_target = self._single_at_other_end(reference)
        for position, target in enumerate(targets):
            if target in current:
                if current[target].position != position:
                    self.session.set_relationship_position(current[target].guid, position)
                continue
            if single_at_target:  # the target can belong to one owner only: it moves
                taken = self.session.relationships_at(reference.other_end, reference.relationship_type, [target])
                self.session.delete_relationships(r.guid for r in taken)
                self.removed_relationships += taken
                self.affected.update({(r.end1_guid if reference.end == 1 else r.end2_guid): None for r in taken})
            end1, end2 = (owner, target) if reference.end == 1 else (target, owner)
            added = RelationshipRow(str(uuid.uuid4()), reference.relationship_type, end1, end2, position)
            self.session.insert_relationship(added, self.when)
            self.added_relationships.append(added)
            self.affected.update({owner: None, target: None})

    def _single_at_other_end(self, reference: Reference) -> bool:
        relationship = self.registry.get(reference.relationship_type)
        if relationship is None:
            return False
        return (relationship.get(f"endDef{reference.other_end}") or {}).get("cardinality", "SINGLE") == "SINGLE"
