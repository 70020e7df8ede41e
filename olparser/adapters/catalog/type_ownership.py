"""Which of the catalog's types are the connector's, and what it may do with a same-named type that is not.

Pure: plain functions over typedef JSON. The connector creates its types and updates only the types it created.

- **Ours**: a definition carrying the marker `options.managedBy = "ol2purview"` (every definition the connector
  writes carries it); a definition an earlier, unmarked ol2purview release wrote: no serviceType, the same category
  and supertypes as ours, and no attribute we do not define. The next registration puts the marker on these.
- **Not ours** (anyone else's, whatever its serviceType): never changed. The connector writes with it when it is
  compatible — same category, its supertypes lead to the same one of Process / DataSet as ours (or to neither), every
  attribute we send exists on it, and none of our types would add a relationship to it or become its subtype;
  otherwise registration stops with `ForeignTypeConflict`, naming the type, what differs, and `TYPE_PREFIX`, which
  gives the connector's types their own names (`{prefix}{name}`) so that both coexist.
- **Purview's Databricks model** (olparser/lineage/databricks_model.py) is nobody's to change: where the catalog
  holds its types (every Purview account, whatever their serviceType says), `check_model` checks that what the
  connector sends exists on them (the supertypes that make notebooks and tasks runnables, the attributes, the
  relationship ends) and they are used as they are; otherwise `ModelTypeConflict` names what differs. TYPE_PREFIX
  never applies to them.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Mapping

from olparser.adapters.catalog.errors import CatalogRejected

OWNER_OPTION = "managedBy"
OWNER_VALUE = "ol2purview"
LINEAGE_ROLES = ("Process", "DataSet")
_PREFIX = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,39}$")
_CATEGORIES = ("enumDefs", "structDefs", "classificationDefs", "entityDefs", "relationshipDefs", "businessMetadataDefs")
TYPE_CONFLICT_CODE = "OL2PURVIEW-TYPE-NOT-OURS"
MODEL_CONFLICT_CODE = "OL2PURVIEW-NOT-PURVIEW-MODEL"

TypesDef = dict[str, list[dict[str, Any]]]


class ForeignTypeConflict(CatalogRejected):
    """A type of the connector's name exists in the catalog, was not created by it, and cannot be written with."""

    def __init__(self, problems: list[str]) -> None:
        message = (
            "; ".join(problems) + ". These types were not created by ol2purview and are never changed: set "
            "TYPE_PREFIX (for example TYPE_PREFIX=ol_) so that the connector's types get their own names"
        )
        super().__init__(400, TYPE_CONFLICT_CODE, message)
        self.problems = tuple(problems)


class ModelTypeConflict(CatalogRejected):
    """The catalog defines a type of Purview's Databricks model in a way the connector cannot write with."""

    def __init__(self, problems: list[str]) -> None:
        message = (
            "; ".join(problems) + ". ol2purview writes Databricks lineage in Purview's built-in Databricks model and "
            "never changes a type it did not create"
        )
        super().__init__(400, MODEL_CONFLICT_CODE, message)
        self.problems = tuple(problems)


def check_model(model: TypesDef, current: TypesDef) -> tuple[set[str], TypesDef]:
    """The names of `model` (Purview's Databricks model) that the catalog (`current`) defines, each checked: an
    entity type must descend from the model's supertype and have every attribute the model defines on it (its own or
    inherited, or a relationship end), a relationship def must have the model's ends. And the updates that make the
    connector's own definitions of those names (an earlier release defined its own Databricks types: they carry its
    marker, or none of the serviceType Purview's have) the model's: supertypes and attributes added, nothing removed
    (Atlas refuses removals, and allows these).
    Raises ModelTypeConflict naming every type that differs and is not the connector's."""
    theirs, mine = _by_name(current), _by_name(model)
    present = {name for name in mine if name in theirs}
    problems, upgrades = [], []
    for name in sorted(present):
        ours, found = mine[name], theirs[name]
        differences: list[str] = []
        missing_supers: list[str] = []
        missing: list[str] = []
        if found.get("category") != ours.get("category"):
            differences.append(f"it is a {found.get('category')} type, Purview's is a {ours.get('category')} type")
        elif ours.get("category") == "ENTITY":
            ancestors = _ancestors(name, theirs)
            missing_supers = [t for t in ours.get("superTypes") or [] if t not in ancestors]
            if missing_supers:
                differences.append(f"it does not descend from {', '.join(missing_supers)}")
            missing = sorted({a["name"] for a in ours.get("attributeDefs") or []} - _attribute_names(name, theirs))
            if missing:
                differences.append(f"it has no attribute {', '.join(missing)}")
        else:
            for end in ("endDef1", "endDef2"):
                mine_end, their_end = ours.get(end) or {}, found.get(end) or {}
                if (mine_end.get("type"), mine_end.get("name")) != (their_end.get("type"), their_end.get("name")):
                    differences.append(
                        f"its {end} is {their_end.get('type')}.{their_end.get('name')}, Purview's "
                        f"{mine_end.get('type')}.{mine_end.get('name')}"
                    )
        if not differences:
            continue
        # an earlier release's own definition: its marker, or (before the marker) no serviceType — Purview's
        # definitions of these names, and the accelerator's, always carry one
        connectors = (found.get("options") or {}).get(OWNER_OPTION) == OWNER_VALUE or not found.get("serviceType")
        if connectors and (missing_supers or missing) and len(differences) == bool(missing_supers) + bool(missing):
            upgrades.append(_upgraded(found, ours, missing_supers, missing))
            continue
        owner = (
            "written by an earlier ol2purview release, which defined its own Databricks types (delete them and "
            "their entities, or start the embedded catalog afresh: make reset)"
            if connectors
            else f"serviceType {found.get('serviceType')!r}"
        )
        problems.append(f"type {name} ({owner}) is not Purview's Databricks model: {'; '.join(differences)}")
    if problems:
        raise ModelTypeConflict(problems)
    return present, ({"entityDefs": upgrades} if upgrades else {})


_SERVER_FIELDS = ("guid", "createdBy", "createTime", "updatedBy", "updateTime", "version", "subTypes", "lastModifiedTS")


def _upgraded(found: dict[str, Any], model: dict[str, Any], supers: list[str], attributes: list[str]) -> dict[str, Any]:
    """The connector's earlier definition with the model's missing supertypes and attributes added."""
    definition = {k: v for k, v in found.items() if k not in _SERVER_FIELDS}
    definition["superTypes"] = [*(found.get("superTypes") or []), *supers]
    added = [a for a in model.get("attributeDefs") or [] if a["name"] in attributes]
    definition["attributeDefs"] = [*(found.get("attributeDefs") or []), *added]
    return definition


def check_type_prefix(prefix: str) -> str:
    """TYPE_PREFIX as given, or a ValueError naming what a prefix may hold."""
    if prefix and not _PREFIX.match(prefix):
        raise ValueError(
            f"TYPE_PREFIX must start with a letter and hold only letters, digits and '_' (at most 40); got {prefix!r}"
        )
    return prefix


def marked(typedefs: TypesDef) -> TypesDef:
    """Every definition with the connector's ownership marker in its `options`."""
    return {
        category: [{**d, "options": {**(d.get("options") or {}), OWNER_OPTION: OWNER_VALUE}} for d in defs]
        for category, defs in typedefs.items()
    }


def with_type_prefix(typedefs: TypesDef, prefix: str) -> TypesDef:
    """The typedefs with every name they define prefixed, and every reference to those names (supertypes,
    relationship ends, attribute types such as `array<name>`) following."""
    if not prefix:
        return typedefs
    names = {d["name"] for defs in typedefs.values() for d in defs}
    renamed = {name: prefix + name for name in names}

    def type_ref(type_name: str) -> str:
        return re.sub(r"[A-Za-z_][A-Za-z0-9_ .\-]*", lambda m: renamed.get(m.group(0), m.group(0)), type_name)

    out: TypesDef = {}
    for category, defs in typedefs.items():
        out[category] = []
        for d in defs:
            copy = {**d, "name": renamed[d["name"]]}
            if d.get("superTypes"):
                copy["superTypes"] = [renamed.get(s, s) for s in d["superTypes"]]
            if d.get("attributeDefs"):
                copy["attributeDefs"] = [
                    {**a, "typeName": type_ref(a.get("typeName", "string"))} for a in d["attributeDefs"]
                ]
            for end in ("endDef1", "endDef2"):
                if isinstance(d.get(end), dict):
                    copy[end] = {**d[end], "type": renamed.get(d[end].get("type"), d[end].get("type"))}
            if category == "businessMetadataDefs" and d.get("attributeDefs"):
                copy["attributeDefs"] = [_applicable_renamed(a, renamed) for a in copy["attributeDefs"]]
            out[category].append(copy)
    return out


def _applicable_renamed(attribute: dict[str, Any], renamed: Mapping[str, str]) -> dict[str, Any]:
    """A business metadata attribute whose `applicableEntityTypes` (a JSON list in a string) names the renamed
    types by their new names."""
    options = attribute.get("options") or {}
    try:
        types = json.loads(options.get("applicableEntityTypes") or "[]")
    except ValueError:
        return attribute
    if not isinstance(types, list):
        return attribute
    listed = json.dumps([renamed.get(t, t) for t in types])
    return {**attribute, "options": {**options, "applicableEntityTypes": listed}}


def is_ours(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> bool:
    """Whether the catalog's definition `theirs` of one of our type names was written by the connector (or by an
    unmarked earlier release: see the module docstring)."""
    if (theirs.get("options") or {}).get(OWNER_OPTION) == OWNER_VALUE:
        return True
    if theirs.get("serviceType"):
        return False
    if theirs.get("category") != ours.get("category"):
        return False
    if ours.get("category") == "RELATIONSHIP":
        return all(
            (theirs.get(end) or {}).get(k) == (ours.get(end) or {}).get(k)
            for end in ("endDef1", "endDef2")
            for k in ("type", "name")
        )
    our_attributes = {a.get("name") for a in ours.get("attributeDefs") or []}
    return (
        list(theirs.get("superTypes") or []) == list(ours.get("superTypes") or [])
        and {a.get("name") for a in theirs.get("attributeDefs") or []} <= our_attributes
    )


def foreign_types(typedefs: TypesDef, current: TypesDef) -> dict[str, dict[str, Any]]:
    """Our type names that the catalog defines and that are not ours: name -> the catalog's definition."""
    theirs, mine = _by_name(current), _by_name(typedefs)
    return {name: theirs[name] for name, d in mine.items() if name in theirs and not is_ours(d, theirs[name])}


def check_foreign_types(typedefs: TypesDef, current: TypesDef) -> tuple[TypesDef, tuple[str, ...]]:
    """(our typedefs without the compatible foreign ones, their names); raises ForeignTypeConflict naming every
    incompatible one and what differs."""
    foreign = foreign_types(typedefs, current)
    if not foreign:
        return typedefs, ()
    problems = [
        problem
        for name, theirs in sorted(foreign.items())
        for problem in [_incompatibility(name, theirs, typedefs, current, foreign)]
        if problem
    ]
    if problems:
        raise ForeignTypeConflict(problems)
    kept = {category: [d for d in defs if d["name"] not in foreign] for category, defs in typedefs.items()}
    return {category: defs for category, defs in kept.items() if defs}, tuple(sorted(foreign))


def _incompatibility(
    name: str, theirs: Mapping[str, Any], typedefs: TypesDef, current: TypesDef, foreign: Mapping[str, Any]
) -> str | None:
    ours = _by_name(typedefs)[name]
    owner = f"serviceType {theirs['serviceType']!r}" if theirs.get("serviceType") else "no ol2purview marker"
    differences: list[str] = []
    if theirs.get("category") != ours.get("category"):
        differences.append(f"it is a {theirs.get('category')} type, ours is a {ours.get('category')} type")
    elif ours.get("category") == "ENTITY":
        catalog = {**_by_name(current), **{n: d for n, d in _by_name(typedefs).items() if n not in foreign}}
        their_role, our_role = _role(name, _by_name(current)), _role(name, catalog | {name: ours})
        if their_role != our_role:
            differences.append(
                f"its supertypes {list(theirs.get('superTypes') or [])} lead to {their_role}, "
                f"ours {list(ours.get('superTypes') or [])} to {our_role}"
            )
        missing = sorted(
            {a["name"] for a in ours.get("attributeDefs") or []} - _attribute_names(name, _by_name(current))
        )
        if missing:
            differences.append(f"it has no attribute {', '.join(missing)}")
        links = [
            d["name"]
            for d in typedefs.get("relationshipDefs", [])
            if d["name"] not in foreign
            and d["name"] not in _by_name(current)
            and name in ((d.get("endDef1") or {}).get("type"), (d.get("endDef2") or {}).get("type"))
        ]
        if links:
            differences.append(f"our relationships {', '.join(links)} would add attributes to it")
        subtypes = sorted(
            d["name"]
            for d in typedefs.get("entityDefs", [])
            if name in (d.get("superTypes") or []) and d["name"] not in foreign
        )
        if subtypes:
            differences.append(f"our {', '.join(subtypes)} would become its subtypes")
    elif ours.get("category") == "RELATIONSHIP":
        for end in ("endDef1", "endDef2"):
            mine, other = ours.get(end) or {}, theirs.get(end) or {}
            if (mine.get("type"), mine.get("name")) != (other.get("type"), other.get("name")):
                differences.append(
                    f"its {end} is {other.get('type')}.{other.get('name')}, ours {mine.get('type')}.{mine.get('name')}"
                )
    else:
        differences.append("it is not one of ours and the connector does not write with other types of this kind")
    if not differences:
        return None
    return f"type {name} ({owner}) differs from the connector's: {'; '.join(differences)}"


_CATEGORY_OF_KEY = {
    "enumDefs": "ENUM",
    "structDefs": "STRUCT",
    "classificationDefs": "CLASSIFICATION",
    "entityDefs": "ENTITY",
    "relationshipDefs": "RELATIONSHIP",
    "businessMetadataDefs": "BUSINESS_METADATA",
}


def _by_name(typesdef: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Definitions by name, each with its category (from the list it is in when it does not say)."""
    return {
        d["name"]: d if d.get("category") else {**d, "category": _CATEGORY_OF_KEY[category]}
        for category in _CATEGORIES
        for d in typesdef.get(category) or []
        if isinstance(d, dict) and isinstance(d.get("name"), str)
    }


def _ancestors(name: str, defs: Mapping[str, Mapping[str, Any]]) -> list[str]:
    seen: list[str] = []
    stack = list((defs.get(name) or {}).get("superTypes") or [])
    while stack:
        parent = stack.pop(0)
        if parent not in seen:
            seen.append(parent)
            stack.extend((defs.get(parent) or {}).get("superTypes") or [])
    return seen


def _role(name: str, defs: Mapping[str, Mapping[str, Any]]) -> str:
    """Process or DataSet when the type descends from one (or is one), else 'neither'."""
    lineage = {name, *_ancestors(name, defs)}
    return next((role for role in LINEAGE_ROLES if role in lineage), "neither Process nor DataSet")


def _attribute_names(name: str, defs: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """Every attribute a type has: its own and inherited attributeDefs, and its relationship ends."""
    lineage = {name, *_ancestors(name, defs)}
    names = {a.get("name") for t in lineage for a in (defs.get(t) or {}).get("attributeDefs") or []}
    for d in defs.values():
        if d.get("category") == "RELATIONSHIP":
            for end in ("endDef1", "endDef2"):
                if (d.get(end) or {}).get("type") in lineage:
                    names.add((d.get(end) or {}).get("name"))
    return {n for n in names if isinstance(n, str)}


def names_of(typedefs: TypesDef) -> Iterable[str]:
    return (d["name"] for category in _CATEGORIES for d in typedefs.get(category, []))


# --- TYPE_PREFIX on the wire: the connector's plain type names inside, prefixed ones in the catalog ----------------
_TYPE_KEYS = frozenset({"typeName", "relationshipType", "entityType"})
_TYPE_IN_PATH = re.compile(r"(/uniqueAttribute/type/)([^/?]+)")


class TypeNames:
    """Translates the connector's type names (those its typedefs define) to their prefixed catalog names in what is
    sent (JSON bodies, `typeName` parameters, `/uniqueAttribute/type/{name}` paths), and back in what comes back.
    Typedef requests (`/types/`) are not translated: registration prefixes the definitions itself."""

    def __init__(self, names: Iterable[str], prefix: str) -> None:
        self.prefix = prefix
        self._out = {name: prefix + name for name in names} if prefix else {}
        self._in = {prefixed: name for name, prefixed in self._out.items()}

    def __bool__(self) -> bool:
        return bool(self._out)

    def outgoing_url(self, url: str) -> str:
        if not self._out or "/types/" in url:
            return url
        return _TYPE_IN_PATH.sub(lambda m: m.group(1) + self._out.get(m.group(2), m.group(2)), url)

    def outgoing(self, value: Any) -> Any:
        return _rename(value, self._out) if self._out else value

    def incoming(self, value: Any) -> Any:
        return _rename(value, self._in) if self._in else value


def _rename(value: Any, names: Mapping[str, str]) -> Any:
    if isinstance(value, dict):
        return {
            key: (names.get(item, item) if key in _TYPE_KEYS and isinstance(item, str) else _rename(item, names))
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_rename(item, names) for item in value]
    return value
