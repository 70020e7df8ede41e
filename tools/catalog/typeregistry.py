"""The type registry: typedefs as plain data, resolved into entity types with inherited attributes and references.

Pure: no I/O. A registry is immutable; `with_defs` returns a new, validated one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Iterable, Mapping

from olparser.jsontypes import JSON

from . import errors
from .business_metadata import check_definition

# typedef payload key -> category, as in Atlas's AtlasTypesDef
CATEGORY_BY_KEY = {
    "enumDefs": "ENUM",
    "structDefs": "STRUCT",
    "classificationDefs": "CLASSIFICATION",
    "entityDefs": "ENTITY",
    "relationshipDefs": "RELATIONSHIP",
    "businessMetadataDefs": "BUSINESS_METADATA",
    "termTemplateDefs": "TERM_TEMPLATE",  # Purview's term templates (the Data Map spec's TermTemplateDef)
}
KEY_BY_CATEGORY = {category: key for key, category in CATEGORY_BY_KEY.items()}
PRIMITIVE_TYPES = frozenset(
    {"boolean", "byte", "short", "int", "long", "float", "double", "biginteger", "bigdecimal", "string", "date"}
)
_TYPE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_ .\-]*$")
_ARRAY = re.compile(r"^array<(.+)>$")
_MAP = re.compile(r"^map<([^,]+),(.+)>$")


@dataclass(frozen=True)
class AttributeDef:
    """An attribute of an entity type, inherited ones included."""

    name: str
    type_name: str
    optional: bool
    declared_by: str


@dataclass(frozen=True)
class Reference:
    """An attribute whose values are entities: a relationshipDef end, or an attribute typed with an entity type.

    Stored as relationships `(relationship_type, end1, end2)`; `end` says which end the owning entity is.
    """

    attribute: str
    relationship_type: str
    end: int
    target_type: str
    many: bool
    in_attributes: bool  # also an attributeDef (a "legacy" attribute: rendered in `attributes` as well)

    @property
    def other_end(self) -> int:
        return 2 if self.end == 1 else 1


@dataclass(frozen=True)
class EntityType:
    name: str
    super_types: tuple[str, ...]  # every ancestor
    attributes: Mapping[str, AttributeDef]
    references: Mapping[str, tuple[Reference, ...]]  # attribute name -> candidates (first is the default)

    def reference(self, attribute: str, relationship_type: str | None = None) -> Reference | None:
        candidates = self.references.get(attribute, ())
        for candidate in candidates:
            if relationship_type is None or candidate.relationship_type == relationship_type:
                return candidate
        return candidates[0] if candidates else None

    def primitive(self, attribute: str) -> AttributeDef | None:
        if attribute in self.references:
            return None
        return self.attributes.get(attribute)

    @cached_property
    def required(self) -> tuple[AttributeDef, ...]:
        return tuple(a for a in self.attributes.values() if not a.optional and a.name not in self.references)


def element_type(type_name: str) -> tuple[str, bool]:
    """`array<X>` -> (X, True); `X` -> (X, False)."""
    match = _ARRAY.match(type_name)
    return (match.group(1).strip(), True) if match else (type_name, False)


class TypeRegistry:
    """Typedefs by name, with entity types resolved on demand."""

    def __init__(self, defs: Iterable[JSON]) -> None:
        self._defs: dict[str, JSON] = {d["name"]: d for d in defs}
        self._entity_types: dict[str, EntityType] = {}

    # --- lookups ---------------------------------------------------------------------------------------------
    def get(self, name: str) -> JSON | None:
        return self._defs.get(name)

    def get_by_guid(self, guid: str) -> JSON | None:
        return next((d for d in self._defs.values() if d.get("guid") == guid), None)

    def all(self) -> list[JSON]:
        return list(self._defs.values())

    def is_entity_type(self, name: str) -> bool:
        d = self._defs.get(name)
        return d is not None and d["category"] == "ENTITY"

    def entity_type(self, name: str) -> EntityType | None:
        if not self.is_entity_type(name):
            return None
        if name not in self._entity_types:
            self._entity_types[name] = self._resolve(name)
        return self._entity_types[name]

    def is_a(self, name: str, ancestor: str) -> bool:
        if name == ancestor:
            return True
        et = self.entity_type(name)
        return et is not None and ancestor in et.super_types

    @cached_property
    def _subtypes(self) -> dict[str, tuple[str, ...]]:
        result: dict[str, list[str]] = {}
        for d in self._defs.values():
            if d["category"] == "ENTITY":
                for ancestor in self._ancestors(d["name"]):
                    result.setdefault(ancestor, []).append(d["name"])
        return {k: tuple(sorted(v)) for k, v in result.items()}

    def subtypes(self, name: str) -> tuple[str, ...]:
        """Every entity type that inherits from `name` (not `name` itself)."""
        return self._subtypes.get(name, ())

    def direct_subtypes(self, name: str) -> list[str]:
        return sorted(d["name"] for d in self._defs.values() if name in (d.get("superTypes") or ()))

    # --- resolution ------------------------------------------------------------------------------------------
    def _ancestors(self, name: str) -> list[str]:
        seen: list[str] = []
        stack = list(self._defs[name].get("superTypes") or ())
        while stack:
            parent = stack.pop(0)
            if parent not in seen and parent in self._defs:
                seen.append(parent)
                stack.extend(self._defs[parent].get("superTypes") or ())
        return seen

    def _resolve(self, name: str) -> EntityType:
        ancestors = self._ancestors(name)
        attributes: dict[str, AttributeDef] = {}
        for type_name in [*reversed(ancestors), name]:
            for a in self._defs[type_name].get("attributeDefs") or ():
                attributes[a["name"]] = AttributeDef(
                    a["name"], a.get("typeName", "string"), bool(a.get("isOptional", True)), type_name
                )
        lineage = {name, *ancestors}
        references: dict[str, list[Reference]] = {}
        for d in self._defs.values():
            if d["category"] != "RELATIONSHIP":
                continue
            for end, mine, other in (
                (1, d.get("endDef1") or {}, d.get("endDef2") or {}),
                (2, d.get("endDef2") or {}, d.get("endDef1") or {}),
            ):
                if mine.get("type") in lineage and mine.get("name"):
                    references.setdefault(mine["name"], []).append(
                        Reference(
                            mine["name"],
                            d["name"],
                            end,
                            other.get("type", ""),
                            mine.get("cardinality", "SINGLE") != "SINGLE",
                            mine["name"] in attributes,
                        )
                    )
        for a in attributes.values():
            target, many = element_type(a.type_name)
            if a.name not in references and self.is_entity_type(target):
                references[a.name] = [Reference(a.name, f"attribute:{a.name}", 1, target, many, True)]
        return EntityType(name, tuple(ancestors), attributes, {k: tuple(v) for k, v in references.items()})

    # --- validation ------------------------------------------------------------------------------------------
    def with_defs(self, defs: Iterable[JSON]) -> "TypeRegistry":
        """A new registry with `defs` added or replaced, after checking that every type they name exists."""
        merged = dict(self._defs)
        for d in defs:
            merged[d["name"]] = d
        registry = TypeRegistry(merged.values())
        for d in defs:
            registry._validate(d)
        return registry

    def _known_type(self, type_name: str) -> bool:
        type_name = type_name.strip()
        if type_name in PRIMITIVE_TYPES or type_name in self._defs:
            return True
        array = _ARRAY.match(type_name)
        if array:
            return self._known_type(array.group(1))
        mapping = _MAP.match(type_name)
        return mapping is not None and self._known_type(mapping.group(1)) and self._known_type(mapping.group(2))

    def _validate(self, d: JSON) -> None:
        name = d["name"]
        if d["category"] == "ENTITY":
            for parent in d.get("superTypes") or ():
                if parent not in self._defs:
                    raise errors.type_name_not_found(parent)
                if self._defs[parent]["category"] != "ENTITY":
                    raise errors.AtlasError(400, "ATLAS-400-00-003", f"{name}: incompatible supertype {parent}")
            if name in self._ancestors(name):
                raise errors.AtlasError(
                    400, "ATLAS-400-00-002", f"{name}: invalid supertypes - circular reference back to self {name}"
                )
        for a in d.get("attributeDefs") or ():
            if not self._known_type(a.get("typeName", "string")):
                raise errors.unknown_attribute_type(a.get("typeName"), name, a["name"])
        if d["category"] == "BUSINESS_METADATA":
            check_definition(self, d)
        if d["category"] == "RELATIONSHIP":
            for key in ("endDef1", "endDef2"):
                end = d.get(key)
                if not isinstance(end, dict) or not end.get("type"):
                    raise errors.invalid_type_definition(f"{name}: {key} is missing or has no type")
                if not self.is_entity_type(end["type"]):
                    raise errors.relationship_end_type_not_found(name, end["type"])


def normalize_typedef(d: object, category: str) -> JSON:
    """Check the shape of one typedef from a request and return a copy carrying its category."""
    if not isinstance(d, dict):
        raise errors.invalid_type_definition(f"{d!r}: a typedef must be a JSON object")
    name = d.get("name")
    if not isinstance(name, str) or not _TYPE_NAME.match(name):
        raise errors.AtlasError(
            400,
            "ATLAS-400-00-019",
            f"{name}: invalid name for {category.lower()} type.  Names must consist of a letter followed by a "
            "sequence of letter, number, space, or '_' characters",
        )
    attribute_defs = d.get("attributeDefs") or []
    if not isinstance(attribute_defs, list) or not all(isinstance(a, dict) and a.get("name") for a in attribute_defs):
        raise errors.invalid_type_definition(f"{name}: attributeDefs must be a list of objects with a name")
    out = dict(d)
    out["category"] = category
    return out


def typedefs_from_payload(payload: object) -> list[JSON]:
    """Every typedef of an AtlasTypesDef payload (`{"entityDefs": [...], ...}`), categories filled in."""
    if not isinstance(payload, dict):
        raise errors.invalid_parameters("the body must be an AtlasTypesDef JSON object")
    defs: list[JSON] = []
    for key, category in CATEGORY_BY_KEY.items():
        items = payload.get(key) or []
        if not isinstance(items, list):
            raise errors.invalid_parameters(f"{key} must be a list")
        defs.extend(normalize_typedef(item, category) for item in items)
    return defs
