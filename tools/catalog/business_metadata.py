"""Business metadata (Purview's "managed attributes"): the rules of its typedefs, as Apache Atlas keeps them (read in
apache/atlas, release 2.4.0). Pure: plain JSON over a type registry.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from . import errors

if TYPE_CHECKING:
    from .typeregistry import TypeRegistry

JSON = dict[str, Any]

_ATTRIBUTE_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_ ]*$")  # AtlasAbstractDefStoreV2.NAME_REGEX
_STRUCTURED = ("ENTITY", "STRUCT", "CLASSIFICATION", "BUSINESS_METADATA")


def applicable_types(attribute: JSON) -> list[str] | None:
    """The entity type names of a business attribute's `options.applicableEntityTypes` (a JSON list, as a string);
    None when it has none or the option is not such a list."""
    raw = (attribute.get("options") or {}).get("applicableEntityTypes")
    if not isinstance(raw, str):
        return None
    try:
        names = json.loads(raw)
    except json.JSONDecodeError:
        return None
    return names if isinstance(names, list) and all(isinstance(n, str) for n in names) else None


def _max_length(attribute: JSON) -> int | None:
    raw = (attribute.get("options") or {}).get("maxStrLength")
    try:
        return int(raw) if isinstance(raw, (str, int)) and not isinstance(raw, bool) else None
    except ValueError:
        return None


def _element(type_name: str) -> str:
    """The type an attribute's values are made of: X for array<X>, V for map<K,V> (AtlasBusinessMetadataType)."""
    type_name = type_name.strip()
    if type_name.startswith("array<") and type_name.endswith(">"):
        return type_name[len("array<") : -1].strip()
    if type_name.startswith("map<") and type_name.endswith(">"):
        return type_name[len("map<") : -1].split(",", 1)[-1].strip()
    return type_name


def check_definition(registry: "TypeRegistry", definition: JSON) -> None:
    """A business metadata typedef as Atlas checks it (AtlasBusinessMetadataType.resolveReferences, then
    AtlasBusinessMetadataDefStoreV2.validateType): values of primitive or enum types (or arrays or maps of them),
    applicable to existing entity types, strings bounded by `options.maxStrLength`; attribute names of letters,
    digits, '_' and spaces. An unknown applicable type is TYPE_NAME_NOT_FOUND, which the caller answers as Atlas does.
    `options.applicableEntityTypes` is required here: Atlas accepts an attribute without it, which then applies to no
    entity type at all."""
    name = definition["name"]
    for attribute in definition.get("attributeDefs") or ():
        element = _element(attribute.get("typeName", "string"))
        target = registry.get(element)
        if target is not None and target["category"] in _STRUCTURED:
            raise errors.business_metadata_attribute_type_invalid(name, attribute["name"])
        if "applicableEntityTypes" not in (attribute.get("options") or {}):
            raise errors.missing_mandatory_field(attribute["name"], "options.applicableEntityTypes")
        applicable = applicable_types(attribute)
        if applicable is None:
            raise errors.bad_request(
                f"{name}.{attribute['name']}: options.applicableEntityTypes must be a JSON list of entity type "
                "names, as a string"
            )
        for type_name in applicable:
            if not registry.is_entity_type(type_name):
                raise errors.type_name_not_found(type_name)
        if element == "string" and _max_length(attribute) is None:
            raise errors.missing_mandatory_field(attribute["name"], "options.maxStrLength")
    for attribute in definition.get("attributeDefs") or ():
        if not _ATTRIBUTE_NAME.match(attribute["name"]):
            raise errors.attribute_name_invalid_chars(attribute["name"])
