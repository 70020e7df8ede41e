"""What a typedef update (PUT /types/typedefs) may change, as Apache Atlas allows it. Pure: plain typedef JSON.

Atlas keeps what exists: an update may add optional attributes, add supertypes, change descriptions, options and
tag propagation, never take away or retype what is there. Each check below cites the Atlas class it follows (read in
apache/atlas, release 2.4.0); the first refused change of a request refuses all of it (the caller saves nothing).
"""

from __future__ import annotations

from olparser.jsontypes import JSON

from . import errors
from .business_metadata import applicable_types


def check_category(existing: JSON | None, new: JSON) -> None:
    """An update names an existing type of the category it is sent in. Atlas answers a name it stores in another
    category as unknown: AtlasTypeDefGraphStore.updateGraphStore updates each type in the category it was sent in,
    where the store has no vertex of that name (AtlasStructDefStoreV2 & co. .updateByName:
    findTypeVertexByNameAndCategory is null, TYPE_NAME_NOT_FOUND)."""
    if existing is None or existing["category"] != new["category"]:
        raise errors.type_name_not_found(new["name"])


def check_update(existing: JSON, new: JSON) -> None:
    """Raise the AtlasError Atlas answers when `new` may not replace `existing` (same name and category)."""
    category = new["category"]
    if category == "RELATIONSHIP":
        _check_relationship(existing, new)
    if category == "BUSINESS_METADATA":
        _check_applicable_types(existing, new)
    _check_attributes(existing, new)
    if category in ("ENTITY", "CLASSIFICATION"):
        # AtlasTypeDefGraphStoreV2.createSuperTypeEdges (from AtlasEntityDefStoreV2 / AtlasClassificationDefStoreV2
        # .updateVertexAddReferences): the new supertypes must include every current one
        if not set(existing.get("superTypes") or ()) <= set(new.get("superTypes") or ()):
            raise errors.supertype_removal_not_supported()


def _check_attributes(existing: JSON, new: JSON) -> None:
    """AtlasStructDefStoreV2.updateVertexPreUpdate: no attribute removed; an added one optional; none retyped."""
    name = new["name"]
    current = {a["name"]: a for a in existing.get("attributeDefs") or ()}
    sent = {a["name"]: a for a in new.get("attributeDefs") or ()}
    for attribute in current:
        if attribute not in sent:
            raise errors.attribute_deletion_not_supported(name, attribute)
    for attribute, definition in sent.items():
        before = current.get(attribute)
        if before is None:
            # a missing isOptional is optional here, as everywhere in this catalog (typeregistry.AttributeDef)
            if not definition.get("isOptional", True):
                raise errors.cannot_add_mandatory_attribute(name, attribute)
        elif definition.get("typeName", "string") != before.get("typeName", "string"):
            raise errors.attribute_type_update_not_supported()


def _end_text(end: JSON) -> str:
    """An end as Atlas's AtlasRelationshipEndDef.toString() writes it in its error messages."""

    def text(value: object) -> str:
        return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)

    return (
        f"AtlasRelationshipEndDef{{type='{text(end.get('type'))}', name==>'{text(end.get('name'))}', "
        f"description==>'{text(end.get('description'))}', isContainer==>'{text(bool(end.get('isContainer')))}', "
        f"cardinality==>'{text(end.get('cardinality', 'SINGLE'))}', "
        f"isLegacyAttribute==>'{text(bool(end.get('isLegacyAttribute')))}'}}"
    )


def _same_end(existing: JSON, new: JSON) -> bool:
    """AtlasRelationshipDefStoreV2.isValidUpdate: type, name, isContainer and cardinality unchanged (description and
    isLegacyAttribute may change)."""
    return (
        existing.get("type") == new.get("type")
        and existing.get("name") == new.get("name")
        and bool(existing.get("isContainer")) == bool(new.get("isContainer"))
        and existing.get("cardinality", "SINGLE") == new.get("cardinality", "SINGLE")
    )


def _check_relationship(existing: JSON, new: JSON) -> None:
    """AtlasRelationshipDefStoreV2.preUpdateCheck: the category, then end 1, then end 2 stay as they are."""
    name = new["name"]
    before, after = existing.get("relationshipCategory", "ASSOCIATION"), new.get("relationshipCategory", "ASSOCIATION")
    if before != after:
        raise errors.relationship_category_update(name, str(after), str(before))
    for key, refuse in (("endDef1", errors.relationship_end1_update), ("endDef2", errors.relationship_end2_update)):
        current, sent = existing.get(key) or {}, new.get(key) or {}
        if not _same_end(current, sent):
            raise refuse(name, _end_text(sent), _end_text(current))


def _check_applicable_types(existing: JSON, new: JSON) -> None:
    """AtlasBusinessMetadataDefStoreV2.updateVertexPreUpdate: an attribute keeps every entity type it applied to."""
    current = {a["name"]: a for a in existing.get("attributeDefs") or ()}
    for attribute in new.get("attributeDefs") or ():
        before = current.get(attribute["name"])
        kept = applicable_types(before) if before is not None else None
        if kept and not set(kept) <= set(applicable_types(attribute) or ()):
            raise errors.applicable_entity_types_deletion(attribute["name"], new["name"])
