"""Atlas errors: the status, code and message Apache Atlas answers with, raised by the core, rendered by the HTTP layer.

Codes and message wording follow Atlas's AtlasErrorCode enum; messages are built with f-strings, never templates.
"""

from __future__ import annotations

from typing import Any, Literal


class AtlasError(Exception):
    """An error answered as `{"errorCode": ..., "errorMessage": ...}` with an HTTP status."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message

    def body(self) -> dict[str, Any]:
        return {"errorCode": self.code, "errorMessage": self.message}


def unknown_type(type_name: object) -> AtlasError:
    return AtlasError(400, "ATLAS-400-00-014", f"Type ENTITY with name {type_name} does not exist")


def unknown_attribute_type(attr_type: str, type_name: str, attribute: str) -> AtlasError:
    return AtlasError(400, "ATLAS-400-00-001", f"Unknown type {attr_type} for {type_name}.{attribute}")


def type_name_not_found(name: str) -> AtlasError:
    return AtlasError(404, "ATLAS-404-00-001", f"Given typename {name} was invalid")


def type_guid_not_found(guid: str) -> AtlasError:
    return AtlasError(404, "ATLAS-404-00-002", f"Given type guid {guid} was invalid")


def type_already_exists(name: str) -> AtlasError:
    return AtlasError(409, "ATLAS-409-00-001", f"Given type {name} already exists")


def type_has_references(name: str) -> AtlasError:
    return AtlasError(409, "ATLAS-409-00-002", f"Given type {name} has references")


def invalid_type_definition(detail: str) -> AtlasError:
    return AtlasError(400, "ATLAS-400-00-011", f"Invalid type definition {detail}")


def relationship_end_type_not_found(relationship: str, end_type: str) -> AtlasError:
    return AtlasError(
        404, "ATLAS-404-00-00E", f"RelationshipDef {relationship} endDef typename {end_type} cannot be found"
    )


def bad_request(detail: str) -> AtlasError:
    """Atlas's BAD_REQUEST; Atlas also answers a typedef naming a type that does not exist with it (the registry's
    TYPE_NAME_NOT_FOUND, translated by AtlasTypeDefGraphStore.tryTypeCreation / updateTypesDef)."""
    return AtlasError(400, "ATLAS-400-00-029", detail)


# --- typedef updates Atlas refuses (AtlasStructDefStoreV2.updateVertexPreUpdate, AtlasTypeDefGraphStoreV2
# .createSuperTypeEdges, AtlasRelationshipDefStoreV2.preUpdateCheck, AtlasBusinessMetadataDefStoreV2) ---------------
def cannot_add_mandatory_attribute(type_name: str, attribute: str) -> AtlasError:
    return AtlasError(400, "ATLAS-400-00-00C", f"{type_name}.{attribute} : can not add mandatory attribute")


def attribute_deletion_not_supported(type_name: str, attribute: str) -> AtlasError:
    return AtlasError(400, "ATLAS-400-00-00D", f"{type_name}.{attribute} : attribute delete not supported")


def supertype_removal_not_supported() -> AtlasError:
    return AtlasError(400, "ATLAS-400-00-00E", "superType remove not supported")


def attribute_type_update_not_supported() -> AtlasError:
    return bad_request("Data type update for attribute is not supported")


def relationship_end1_update(name: str, new_end: str, existing_end: str) -> AtlasError:
    return AtlasError(
        400,
        "ATLAS-400-00-037",
        f"invalid update for relationshipDef {name}: new end1 {new_end}, existing end1 {existing_end}",
    )


def relationship_end2_update(name: str, new_end: str, existing_end: str) -> AtlasError:
    return AtlasError(
        400,
        "ATLAS-400-00-038",
        f"invalid update for relationshipDef {name}: new end2 {new_end}, existing end2 {existing_end}",
    )


def relationship_category_update(name: str, new: str, existing: str) -> AtlasError:
    return AtlasError(
        400,
        "ATLAS-400-00-039",
        f"invalid  update for relationship {name}: new relationshipDef category {new}, "
        f"existing relationshipDef category {existing}",
    )


def applicable_entity_types_deletion(attribute: str, business_metadata: str) -> AtlasError:
    return AtlasError(
        400,
        "ATLAS-400-00-093",
        f"Cannot remove applicableEntityTypes in Attribute Def: {attribute}, defined in business-metadata: "
        f"{business_metadata}",
    )


# --- business metadata (AtlasBusinessMetadataType, AtlasBusinessMetadataDefStoreV2) ---------------------------------
def missing_mandatory_field(owner: str, field: str) -> AtlasError:
    return AtlasError(400, "ATLAS-400-00-02B", f"Mandatory field {owner}.{field} has empty/null value")


def business_metadata_attribute_type_invalid(business_metadata: str, attribute: str) -> AtlasError:
    return AtlasError(
        400,
        "ATLAS-400-00-094",
        f"{business_metadata}.{attribute}: invalid attribute type. Business-metadata attribute cannot be of type "
        "entity/classification/struct/business-metadata",
    )


def attribute_name_invalid_chars(attribute: str) -> AtlasError:
    return AtlasError(
        400,
        "ATLAS-400-00-09A",
        f"{attribute}: invalid name. Attribute names must begin with a letter followed by a sequence of letters, "
        "numbers, or '_' characters",
    )


def unknown_business_metadata(name: object) -> AtlasError:
    return AtlasError(400, "ATLAS-400-00-014", f"Type BUSINESS_METADATA with name {name} does not exist")


def business_metadata_not_applicable(attribute: str, applicable: list[str]) -> AtlasError:
    return AtlasError(
        400,
        "ATLAS-400-00-095",
        f"Invalid business-metadata: {attribute} specified for entity, applicable business-metadata: "
        f"[{', '.join(applicable)}]",
    )


def missing_mandatory_attribute(type_name: str, attribute: str, declared_by: str) -> AtlasError:
    return AtlasError(
        404,
        "ATLAS-404-00-007",
        f"Invalid instance creation/updation parameters passed : {type_name}.{attribute}: "
        f"mandatory attribute value missing in type {declared_by}",
    )


def referenced_entity_not_found(reference: str) -> AtlasError:
    return AtlasError(404, "ATLAS-404-00-00A", f"Referenced entity {reference} is not found")


def invalid_object_id(value: object) -> AtlasError:
    return AtlasError(400, "ATLAS-400-00-021", f"ObjectId is not valid {value}")


def invalid_value(detail: str) -> AtlasError:
    return AtlasError(400, "ATLAS-400-00-028", f"invalid value: {detail}")


def invalid_parameters(detail: str) -> AtlasError:
    return AtlasError(400, "ATLAS-400-00-01A", f"invalid parameters: {detail}")


def type_match_failed(given: str, existing: str) -> AtlasError:
    return AtlasError(400, "ATLAS-400-00-010", f"Given type {given} doesn't match {existing}")


def invalid_relationship_end(attribute: str, guid: str, actual: str, expected: str) -> AtlasError:
    return AtlasError(
        400,
        "ATLAS-400-00-045",
        f"Invalid entity-type for relationship attribute '{attribute}': entity specified (guid={guid}) "
        f"is of type '{actual}', but expected type is '{expected}'",
    )


def unique_attribute_invalid(type_name: str, attribute: str) -> AtlasError:
    return AtlasError(400, "ATLAS-400-00-013", f"Type {type_name} with unique attribute {attribute} does not exist")


def instance_guid_not_found(guid: str) -> AtlasError:
    return AtlasError(404, "ATLAS-404-00-005", f"Given instance guid {guid} is invalid/not found")


def instance_by_unique_attribute_not_found(type_name: str, qualified_name: str) -> AtlasError:
    return AtlasError(
        404,
        "ATLAS-404-00-009",
        f"Instance {type_name} with unique attribute {{qualifiedName={qualified_name}}} does not exist",
    )


def instance_already_exists(detail: str) -> AtlasError:
    return AtlasError(409, "ATLAS-409-00-003", f"failed to update entity: {detail}")


def invalid_lineage_params(name: str, value: object) -> AtlasError:
    return AtlasError(400, "ATLAS-400-00-026", f"Invalid lineage query parameters passed {name}: {value}")


def invalid_lineage_entity_type(guid: str, type_name: str) -> AtlasError:
    return AtlasError(
        404, "ATLAS-404-00-011", f"Given instance guid {guid} with type {type_name} is not a valid lineage entity type."
    )


def invalid_search_params() -> AtlasError:
    return AtlasError(
        400,
        "ATLAS-400-00-047",
        "No search parameter was found. One of the following MUST be specified in the request; "
        "typeName, classification, termName or queryText",
    )


def unknown_relationship_type(type_name: object) -> AtlasError:
    return AtlasError(400, "ATLAS-400-00-014", f"Type RELATIONSHIP with name {type_name} does not exist")


def unknown_attribute(attribute: str, type_name: str) -> AtlasError:
    return AtlasError(400, "ATLAS-400-00-023", f"Attribute {attribute} not found for type {type_name}")


def instance_guid_deleted(guid: str) -> AtlasError:
    return AtlasError(404, "ATLAS-404-00-012", f"Given instance guid {guid} has been deleted")


def relationship_guid_not_found(guid: str) -> AtlasError:
    return AtlasError(404, "ATLAS-404-00-00C", f"Given relationship guid {guid} is invalid/not found")


def relationship_already_deleted(guid: str) -> AtlasError:
    return AtlasError(404, "ATLAS-404-00-00F", f"Attempting to delete a relationship which is already deleted : {guid}")


def relationship_already_exists(type_name: str, end1: str, end2: str) -> AtlasError:
    return AtlasError(
        409, "ATLAS-409-00-004", f"relationship {type_name} already exists between entities {end1} and {end2}"
    )


def relationship_end_is_null(which: str) -> AtlasError:
    return AtlasError(400, "ATLAS-400-00-07D", f"Relationship end is invalid. Expected {which} but is NULL")


def invalid_relationship_end_types(name: str, end1: str, end2: str, expected1: str, expected2: str) -> AtlasError:
    return AtlasError(
        400,
        "ATLAS-400-00-036",
        f"invalid relationshipDef: {name}: actual: [end type 1: {end1}, end type 2: {end2}]. "
        f"expected: [end type 1: {expected1}, end type 2: {expected2}]",
    )


def relationship_type_change(guid: str, current: str, new: str) -> AtlasError:
    return AtlasError(
        404,
        "ATLAS-400-00-06A",
        f"change of relationship type is not permitted. relationship-guid={guid}, "
        f"current-type={current}, new-type={new}",
    )


def relationship_end_change(type_name: str, guid: str, end: str, new_end: str) -> AtlasError:
    return AtlasError(
        404,
        "ATLAS-400-00-069",
        f"change of relationship end is not permitted. relationship-type={type_name}, "
        f"relationship-guid={guid}, end-guid={end}, updated-end-guid={new_end}",
    )


def method_not_allowed(method: str, path: str) -> AtlasError:
    return AtlasError(
        405, "ATLAS-405-00-001", f"Error 405 - The request method {method} is inappropriate for the URL: {path}"
    )


def no_such_resource(method: str, path: str) -> AtlasError:
    """Atlas has no error code for an unknown URL (its web server answers an HTML page); the nearest is EMPTY_RESULTS."""
    return AtlasError(404, "ATLAS-404-00-004", f"No result found for {method} {path}")


def unsupported_media_type(content_type: str) -> AtlasError:
    """415 with Atlas's BAD_REQUEST code: writes must be JSON (a cross-site form can only send text or form data)."""
    shown = content_type or "no Content-Type"
    return AtlasError(
        415, "ATLAS-400-00-029", f"the request body must be JSON (Content-Type: application/json), got {shown}"
    )


def forbidden(detail: str) -> AtlasError:
    return AtlasError(403, "ATLAS-403-00-001", detail)


def unauthenticated() -> AtlasError:
    """401 with Atlas's UNAUTHORIZED_ACCESS code (Atlas's own 401 comes from its servlet filter, without a body)."""
    return AtlasError(
        401,
        "ATLAS-403-00-001",
        "anonymous is not authorized to perform this request: this catalog requires HTTP basic authentication",
    )


# --- classifications, labels, the glossary: one factory a family, its errors a table (kind -> status, code, message) ---
ClassificationProblem = Literal["unknown", "none", "not associated", "propagated", "restricted"]
GlossaryProblem = Literal[
    "glossary exists", "term exists", "glossary unnamed", "term unnamed", "no anchor", "bad name", "term assigned",
    "no relationship", "bad relationship"
]  # fmt: skip


def classification_error(
    problem: ClassificationProblem, name: object, guid: str = "", type_name: str = ""
) -> AtlasError:
    """Atlas's errors about classification `name` of entity `guid` (AtlasEntityStoreV2, EntityGraphMapper): an
    unknown classification type, an entity with none, one the entity does not have, one propagated to it (only its
    source updates it), one whose def restricts it to other entity types."""
    status, code, message = {
        "unknown": (404, "ATLAS-404-00-008", f"Given classification {name} was invalid"),
        "none": (404, "ATLAS-404-00-003", f"No classifications associated with entity: {guid}"),
        "not associated": (400, "ATLAS-400-00-06D", f"Classification {name} is not associated with entity"),
        "propagated": (
            400,
            "ATLAS-400-00-06B",
            f"Update to classification {name} is not allowed from propagated entity",
        ),
        "restricted": (
            400,
            "ATLAS-400-00-055",
            f"Entity (guid=‘{guid}‘,typename=‘{type_name}‘) cannot be classified by Classification ‘{name}‘, because "
            f"‘{type_name}‘ is not in the ClassificationDef's restrictions.",
        ),
    }[problem]
    return AtlasError(status, code, message)


def invalid_label(label: str, max_length: int | None = None) -> AtlasError:
    """Atlas's label checks (EntityGraphMapper.validateLabels): longer than `max_length` when given, else a character
    a label may not have."""
    if max_length is not None:
        return AtlasError(
            400, "ATLAS-400-00-08F", f"Invalid label: {label}, label size should not be greater than {max_length}"
        )
    return AtlasError(
        400,
        "ATLAS-400-00-090",
        f"Invalid label: {label}, label should contain alphanumeric characters, '_', '-' or '.'",
    )


def glossary_error(problem: GlossaryProblem, subject: object = "", term: str = "", entity: object = "") -> AtlasError:
    """Atlas's glossary errors (GlossaryService, GlossaryTermUtils); `subject`: the glossary's name, the term's
    qualifiedName, guid or assignment count, or the assignment's relationship guid, as the message says."""
    status, code, message = {
        "glossary exists": (409, "ATLAS-409-00-007", f"Glossary with name {subject} already exists"),
        "term exists": (409, "ATLAS-409-00-009", f"Glossary term with qualifiedName {subject} already exists"),
        "glossary unnamed": (
            400,
            "ATLAS-400-00-079",
            "Attributes qualifiedName and name are missing. Failed to derive a unique name for Glossary",
        ),
        "term unnamed": (
            400,
            "ATLAS-400-00-07A",
            "Attributes qualifiedName, name & glossary name are missing. Failed to derive a unique name for Glossary "
            "term",
        ),
        "no anchor": (400, "ATLAS-400-00-072", "Mandatory anchor attribute is missing"),
        "bad name": (400, "ATLAS-400-00-083", "name cannot contain following special chars ('@', '.', '<', '>')"),
        "term assigned": (
            400,
            "ATLAS-400-00-084",
            f"Term (guid={term}) cannot be deleted as it has been assigned to {subject} entities.",
        ),
        "no relationship": (400, "ATLAS-400-00-078", "Missing mandatory attribute, TermAssignment relationship guid"),
        "bad relationship": (
            400,
            "ATLAS-400-00-080",
            f"Given relationshipGuid({subject}) is invalid for term (guid={term}) and entity(guid={entity})",
        ),
    }[problem]
    return AtlasError(status, code, message)
