"""Registering the types the connector writes with: its own (olparser/lineage/typedefs/*.json), created or updated,
and Purview's built-in Databricks model (olparser/lineage/databricks_model.py), created only where the catalog lacks
it (Apache Atlas) and then exactly as Purview defines it, never updated.

At most three calls: GET the catalog's typedefs, POST the new types, PUT the ones whose definition differs from
the catalog's. When every type is already there as defined, that is one call and nothing is written.
Only the connector's own types are ever updated (type_ownership.py): each carries its ownership marker and, with
TYPE_PREFIX, its prefixed name; a same-named type someone else created is written with when compatible, never changed.
Purview's model where the catalog holds it is checked (`check_model`: what the connector sends must exist on it) and
used as it is, whatever its serviceType; it is never prefixed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from olparser.adapters.catalog.errors import CatalogRejected
from olparser.adapters.catalog.retry import RetryPolicy
from olparser.adapters.catalog.rules import retry_for
from olparser.adapters.catalog.type_ownership import check_foreign_types, check_model, marked, with_type_prefix
from olparser.lineage.databricks_model import purview_databricks_typedefs

if TYPE_CHECKING:
    from olparser.adapters.catalog.uploader import CatalogClient

TYPEDEF_CATEGORIES = (
    "enumDefs",
    "structDefs",
    "classificationDefs",
    "entityDefs",
    "relationshipDefs",
    "businessMetadataDefs",
)
# category in a typedef header -> the TypesDef list it belongs to
_HEADER_CATEGORY = {
    "ENUM": "enumDefs",
    "STRUCT": "structDefs",
    "CLASSIFICATION": "classificationDefs",
    "ENTITY": "entityDefs",
    "RELATIONSHIP": "relationshipDefs",
    "BUSINESS_METADATA": "businessMetadataDefs",
}


@dataclass(frozen=True)
class TypedefReport:
    created: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    calls: int = 0
    unchanged: tuple[str, ...] = ()
    foreign: tuple[str, ...] = ()  # same-named types someone else created, compatible: written with, never changed
    builtin: tuple[str, ...] = ()  # Purview's Databricks model as the catalog holds it: used as it is

    def describe(self) -> str:
        """One line: `up to date` when nothing changed, else what was created and updated, by name."""
        foreign = f"; not ours, used as they are: {_some(self.foreign)}" if self.foreign else ""
        if self.builtin:
            foreign += f"; Purview's Databricks model used as it is ({len(self.builtin)} types)"
        if not self.created and not self.updated:
            return (
                f"up to date ({len(self.unchanged)} types, {self.calls} call{'s' if self.calls != 1 else ''}){foreign}"
            )
        parts = [
            f"{verb} {len(names)} ({_some(names)})"
            for verb, names in (("created", self.created), ("updated", self.updated))
            if names
        ]
        return f"{', '.join(parts)}; {len(self.unchanged)} up to date ({self.calls} calls){foreign}"


NAMES_SHOWN = 5


def _some(names: tuple[str, ...]) -> str:
    """The first NAMES_SHOWN names, and how many more."""
    more = len(names) - NAMES_SHOWN
    return ", ".join(names[:NAMES_SHOWN]) + (f", +{more} more" if more > 0 else "")


def entity_type_names(typedefs: dict[str, list[dict[str, Any]]]) -> frozenset[str]:
    """The entity types the connector writes entities of, which it deletes when no run uses them: those a TypesDef
    (its own) defines, and Purview's Databricks model (its containers are kept while they hold what another run or
    tool wrote: `CatalogUploader.delete`)."""
    model = purview_databricks_typedefs()
    return frozenset(t["name"] for t in [*typedefs.get("entityDefs", []), *model["entityDefs"]])


def load_typedefs(directory: Path) -> dict[str, list[dict[str, Any]]]:
    """Merge every `*.json` TypesDef in `directory` (sorted by file name) into one. A type defined twice in the
    same category, an unknown top-level key or a file that is not JSON is a ValueError naming the file."""
    merged: dict[str, list[dict[str, Any]]] = {category: [] for category in TYPEDEF_CATEGORIES}
    seen: dict[tuple[str, str], str] = {}
    files = sorted(Path(directory).glob("*.json"))
    if not files:
        raise ValueError(f"no typedef files (*.json) in {directory}")
    for path in files:
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ValueError(f"{path.name}: not valid JSON: {exc}") from None
        if not isinstance(document, dict):
            raise ValueError(f"{path.name}: a TypesDef object ({{\"entityDefs\": [...], ...}}) is expected")
        unknown = sorted(set(document) - set(TYPEDEF_CATEGORIES))
        if unknown:
            raise ValueError(f"{path.name}: unknown keys {unknown}; expected some of {list(TYPEDEF_CATEGORIES)}")
        for category in TYPEDEF_CATEGORIES:
            for typedef in document.get(category) or []:
                name = typedef.get("name") if isinstance(typedef, dict) else None
                if not isinstance(name, str) or not name:
                    raise ValueError(f"{path.name}: an entry in {category} has no name")
                if (category, name) in seen:
                    raise ValueError(f"{path.name}: {name} is already defined in {seen[(category, name)]}")
                seen[(category, name)] = path.name
                merged[category].append(typedef)
    return {category: defs for category, defs in merged.items() if defs}


def split_new_and_existing(
    typedefs: dict[str, list[dict[str, Any]]], headers: list[dict[str, Any]]
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]]]:
    """(types to create, types to update), each a TypesDef, given the catalog's typedef headers."""
    present = {(_HEADER_CATEGORY.get(str(h.get("category", "")).upper()), h.get("name")) for h in headers}
    new: dict[str, list[dict[str, Any]]] = {}
    existing: dict[str, list[dict[str, Any]]] = {}
    for category, defs in typedefs.items():
        if category not in TYPEDEF_CATEGORIES:
            raise ValueError(f"unknown typedef category {category!r}; expected one of {list(TYPEDEF_CATEGORIES)}")
        for typedef in defs:
            side = existing if (category, typedef.get("name")) in present else new
            side.setdefault(category, []).append(typedef)
    return new, existing


def same_definition(ours: Any, theirs: Any) -> bool:
    """Whether the catalog's definition already says everything ours says. The catalog adds fields of its own (guid,
    version, defaults), and attributes or ends someone else added stay (an update cannot remove them either): only
    what we define is compared. Named entries (attributeDefs, ...) are matched by name, other lists as sets."""
    if isinstance(ours, dict):
        return isinstance(theirs, dict) and all(same_definition(value, theirs.get(key)) for key, value in ours.items())
    if isinstance(ours, list):
        if not isinstance(theirs, list):
            return False
        if all(isinstance(item, dict) and "name" in item for item in ours):
            by_name = {item.get("name"): item for item in theirs if isinstance(item, dict)}
            return all(same_definition(item, by_name.get(item["name"])) for item in ours)
        return sorted(map(json.dumps, ours)) == sorted(map(json.dumps, theirs))
    return bool(ours == theirs)


def split_changed(
    existing: dict[str, list[dict[str, Any]]], current: dict[str, list[dict[str, Any]]]
) -> tuple[dict[str, list[dict[str, Any]]], tuple[str, ...]]:
    """(the existing types whose catalog definition differs from ours, as a TypesDef; the names of the others)."""
    theirs = {
        (category, d.get("name")): d
        for category, defs in current.items()
        if isinstance(defs, list)
        for d in defs
        if isinstance(d, dict)
    }
    changed: dict[str, list[dict[str, Any]]] = {}
    unchanged: list[str] = []
    for category, defs in existing.items():
        for typedef in defs:
            if same_definition(typedef, theirs.get((category, typedef["name"]))):
                unchanged.append(typedef["name"])
            else:
                changed.setdefault(category, []).append(typedef)
    return changed, tuple(unchanged)


def headers_of(current: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Typedef headers ({name, category}) of a TypesDef as the catalog returns it."""
    category_of = {key: category for category, key in _HEADER_CATEGORY.items()}
    return [
        {"name": d.get("name"), "category": category_of[key]}
        for key, defs in current.items()
        if key in category_of and isinstance(defs, list)
        for d in defs
        if isinstance(d, dict)
    ]


def without_missing_ends(
    typedefs: dict[str, list[dict[str, Any]]], headers: list[dict[str, Any]]
) -> dict[str, list[dict[str, Any]]]:
    """The typedefs without the relationship defs whose end is a type neither they nor the catalog define: a
    reference to another product's type the catalog lacks (Purview's `adf_pipeline` on a plain Apache Atlas) is
    optional, and would make the whole registration fail."""
    known = {str(h.get("name")) for h in headers if str(h.get("category", "")).upper() == "ENTITY"}
    known |= {d["name"] for d in typedefs.get("entityDefs", [])}
    relationships = typedefs.get("relationshipDefs")
    if not relationships:
        return typedefs
    kept = [d for d in relationships if all((d.get(end) or {}).get("type") in known for end in ("endDef1", "endDef2"))]
    if len(kept) == len(relationships):
        return typedefs
    return {**typedefs, "relationshipDefs": kept}


def _names(typesdef: dict[str, list[dict[str, Any]]]) -> tuple[str, ...]:
    return tuple(typedef["name"] for category in TYPEDEF_CATEGORIES for typedef in typesdef.get(category, []))


def register_typedefs(
    client: "CatalogClient", typedefs: dict[str, list[dict[str, Any]]], retry: RetryPolicy | None = None
) -> TypedefReport:
    """Create the types the catalog lacks (POST), update the connector's own that it defines differently (PUT): at
    most 3 calls, 1 when the catalog is up to date. The client's `type_prefix` (TYPE_PREFIX) prefixes the connector's
    own names. Purview's Databricks model is created where missing, checked and left as it is where present
    (`ModelTypeConflict` when what the connector sends does not exist on it). A same-named type the connector did
    not create is left as it is, or ForeignTypeConflict (a CatalogRejected) names it.

    A 409 (another process created one of the types in between) starts over once from fresh definitions.
    """
    retry = retry or retry_for()
    typedefs = marked(with_type_prefix(typedefs, getattr(client, "type_prefix", "")))
    calls = [0]
    try:
        return _register_once(client, typedefs, retry, calls)
    except CatalogRejected as exc:
        if exc.status != 409:
            raise
        return _register_once(client, typedefs, retry, calls)


def _register_once(
    client: "CatalogClient", typedefs: dict[str, list[dict[str, Any]]], retry: RetryPolicy, calls: list[int]
) -> TypedefReport:
    current = retry.run("typedefs", client.typedefs, calls) or {}
    headers = headers_of(current)
    model = purview_databricks_typedefs()
    builtin, upgrades = check_model(model, current)
    missing_model = without_missing_ends(
        {category: [d for d in defs if d["name"] not in builtin] for category, defs in model.items()}, headers
    )
    typedefs = without_missing_ends(typedefs, headers + headers_of(missing_model))
    ours, foreign = check_foreign_types(typedefs, current)
    new, existing = split_new_and_existing(ours, headers)
    new = _merged(missing_model, new)
    changed, unchanged = split_changed(existing, current)
    changed = _merged(upgrades, changed)  # an earlier release's Databricks types made Purview's model, additively
    if new:
        retry.run("typedef create", lambda: client.create_typedefs(new), calls)
    if changed:
        retry.run("typedef update", lambda: client.update_typedefs(changed), calls)
    return TypedefReport(
        created=_names(new),
        updated=_names(changed),
        calls=calls[0],
        unchanged=unchanged,
        foreign=foreign,
        builtin=tuple(sorted(builtin)),
    )


def _merged(*typesdefs: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """One TypesDef of several, in order, without empty categories."""
    merged: dict[str, list[dict[str, Any]]] = {}
    for typesdef in typesdefs:
        for category, defs in typesdef.items():
            if defs:
                merged.setdefault(category, []).extend(defs)
    return merged
