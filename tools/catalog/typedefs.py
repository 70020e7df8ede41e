"""Typedef operations (create, update, read, delete) over the registry and the store, as Atlas answers them."""

from __future__ import annotations

import threading
import uuid

from olparser.jsontypes import JSON

from . import errors
from .builtin_types import builtin_typedefs
from .business_metadata import applicable_types
from .relationships import relationship_label
from .store import CatalogStore, now_ms
from .typeregistry import KEY_BY_CATEGORY, TypeRegistry, typedefs_from_payload
from .typeupdates import check_category, check_update

_CATEGORY_BY_PATH = {
    "entitydef": "ENTITY",
    "relationshipdef": "RELATIONSHIP",
    "enumdef": "ENUM",
    "structdef": "STRUCT",
    "classificationdef": "CLASSIFICATION",
    "businessmetadatadef": "BUSINESS_METADATA",
    "termtemplatedef": "TERM_TEMPLATE",
    "typedef": None,
}
_MAX_VALUES = 2147483647  # Atlas's valuesMaxCount of a SET or LIST attribute (Integer.MAX_VALUE)


def _attribute_defaults(a: JSON) -> JSON:
    """An attributeDef with what Atlas answers for the keys it was sent without (AtlasStructDefStoreV2
    .toAttributeDefFromJson): SINGLE, at least one value when mandatory, at most one when SINGLE, flags false. A
    missing isOptional is optional here, as everywhere in this catalog (typeregistry.AttributeDef)."""
    out = dict(a)
    out.setdefault("typeName", "string")
    out.setdefault("isOptional", True)
    out.setdefault("cardinality", "SINGLE")
    out.setdefault("valuesMinCount", 0 if out["isOptional"] else 1)
    out.setdefault("valuesMaxCount", 1 if out["cardinality"] == "SINGLE" else _MAX_VALUES)
    for flag in ("isUnique", "isIndexable", "includeInNotification"):
        out.setdefault(flag, False)
    return out


def _guid(d: JSON, taken_by: str | None) -> str:
    """A new type's guid: the one it was sent with (Atlas keeps a given guid: AtlasTypeDefGraphStoreV2
    .createTypeVertex), else one derived from its name."""
    sent = d.get("guid")
    if not isinstance(sent, str) or not sent.strip():
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"ol2purview:type:{d['name']}"))
    try:
        uuid.UUID(sent)
    except ValueError:
        raise errors.invalid_type_definition(f"{d['name']}: guid {sent} is not a UUID") from None
    if taken_by is not None and taken_by != d["name"]:
        raise errors.invalid_type_definition(f"{d['name']}: guid {sent} is the guid of type {taken_by}")
    return sent


def _stamped(d: JSON, user: str, when: int, previous: JSON | None, taken_by: str | None = None) -> JSON:
    """A typedef as stored and answered: system fields, `lastModifiedTS` (the version, as the Data Map answers it),
    the name as description when it has none (AtlasTypeDefGraphStoreV2.createTypeVertex) and Atlas's defaults of its
    attributeDefs; a relationshipDef's label is the one Atlas derives (relationships.relationship_label)."""
    out = dict(d)
    out["guid"] = previous["guid"] if previous else _guid(d, taken_by)
    out["createdBy"] = previous["createdBy"] if previous else user
    out["createTime"] = previous["createTime"] if previous else when
    out["updatedBy"] = user
    out["updateTime"] = when
    out["version"] = previous["version"] + 1 if previous else 1
    out["lastModifiedTS"] = str(out["version"])
    if not out.get("description"):
        out["description"] = d["name"]
    out.setdefault("typeVersion", "1.0")
    out["attributeDefs"] = [_attribute_defaults(a) for a in out.get("attributeDefs") or []]
    if d["category"] == "ENTITY":
        out.setdefault("superTypes", [])
    if d["category"] == "RELATIONSHIP":
        out.setdefault("relationshipLabel", relationship_label(out))
        out.setdefault("propagateTags", "NONE")
    return out


class TypeCatalog:
    """The current type registry, persisted; changes are serialized and swap in a new immutable registry."""

    def __init__(self, store: CatalogStore) -> None:
        self._store = store
        self._lock = threading.Lock()
        with store.write() as session:
            stored = {d["name"]: d for d in session.typedefs()}
            when = now_ms()
            for d in builtin_typedefs():
                if d["name"] not in stored:
                    stamped = _stamped(d, "admin", when, None)
                    session.save_typedef(stamped)
                    stored[d["name"]] = stamped
        self.registry = TypeRegistry(stored.values())

    def create(self, payload: object, user: str) -> JSON:
        """POST /types/typedefs: every type must be new (409 otherwise)."""
        defs = typedefs_from_payload(payload)
        with self._lock:
            for d in defs:
                if self.registry.get(d["name"]) is not None:
                    raise errors.type_already_exists(d["name"])
            return self._save(defs, user)

    def update(self, payload: object, user: str) -> JSON:
        """PUT /types/typedefs: every type must exist in the category it is sent in (404 otherwise) and change only as
        Atlas lets it (typeupdates.py); one refused change refuses the whole request."""
        defs = typedefs_from_payload(payload)
        with self._lock:
            for d in defs:
                check_category(self.registry.get(d["name"]), d)
            return self._save(defs, user, updating=True)

    def _save(self, defs: list[JSON], user: str, updating: bool = False) -> JSON:
        when = now_ms()
        stamped = [_stamped(d, user, when, self.registry.get(d["name"]), self._guid_owner(d.get("guid"))) for d in defs]
        try:
            registry = self.registry.with_defs(stamped)
        except errors.AtlasError as exc:
            # Atlas answers a type its registry cannot find (a supertype, an applicable entity type) with BAD_REQUEST
            # (AtlasTypeDefGraphStore.tryTypeCreation and updateTypesDef translate TYPE_NAME_NOT_FOUND)
            if exc.code == "ATLAS-404-00-001":
                raise errors.bad_request(exc.message) from None
            raise
        for d in defs if updating else ():
            existing = self.registry.get(d["name"])
            assert existing is not None  # check_category
            check_update(existing, d)
        with self._store.write() as session:
            for d in stamped:
                session.save_typedef(d)
        self.registry = registry
        return self._grouped([self.render(d) for d in stamped])

    def _guid_owner(self, guid: object) -> str | None:
        found = self.registry.get_by_guid(guid) if isinstance(guid, str) else None
        return found["name"] if found else None

    def delete(self, names: list[str]) -> None:
        with self._lock:
            for name in names:
                if self.registry.get(name) is None:
                    raise errors.type_name_not_found(name)
            remaining = [d for d in self.registry.all() if d["name"] not in names]
            for d in remaining:
                used = {
                    *(d.get("superTypes") or ()),
                    (d.get("endDef1") or {}).get("type"),
                    (d.get("endDef2") or {}).get("type"),
                    *(t for a in d.get("attributeDefs") or () for t in applicable_types(a) or ()),
                }
                if used & set(names):
                    raise errors.type_has_references(next(iter(used & set(names))))
            with self._store.write() as session:
                for name in names:
                    # an entity of the type, or one carrying attributes of the business metadata
                    # (AtlasBusinessMetadataDefStoreV2.checkBusinessMetadataRef)
                    if session.count_entities_of_type(name) or session.count_entities_with_business_metadata(name):
                        raise errors.type_has_references(name)
                    session.delete_typedef(name)
            self.registry = TypeRegistry(remaining)

    def render(self, d: JSON) -> JSON:
        out = dict(d)
        out.setdefault("lastModifiedTS", str(d.get("version", 1)))  # a type stored before the catalog kept it
        if d["category"] == "ENTITY":
            out["subTypes"] = self.registry.direct_subtypes(d["name"])
        return out

    def find(self, path_category: str, name: str | None = None, guid: str | None = None) -> JSON:
        """GET /types/{typedef|entitydef|...}/name/{name} or /guid/{guid}."""
        if path_category not in _CATEGORY_BY_PATH:
            raise errors.invalid_parameters(f"unknown typedef category '{path_category}'")
        d = self.registry.get(name) if name is not None else self.registry.get_by_guid(guid or "")
        category = _CATEGORY_BY_PATH[path_category]
        if d is None or (category is not None and d["category"] != category):
            raise errors.type_name_not_found(name) if name is not None else errors.type_guid_not_found(guid or "")
        return self.render(d)

    def all(self, category: str | None = None) -> JSON:
        return self._grouped([self.render(d) for d in self.registry.all() if category in (None, d["category"])])

    def headers(self, category: str | None = None) -> list[JSON]:
        return [
            {k: d[k] for k in ("guid", "name", "category", "serviceType") if d.get(k) is not None}
            for d in self.registry.all()
            if category in (None, d["category"])
        ]

    @staticmethod
    def _grouped(defs: list[JSON]) -> JSON:
        out: JSON = {key: [] for key in KEY_BY_CATEGORY.values()}
        for d in defs:
            out[KEY_BY_CATEGORY[d["category"]]].append(d)
        return out
