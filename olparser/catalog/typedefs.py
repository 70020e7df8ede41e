"""Registering the connector's custom Atlas types: load them from config/typedefs/*.json, create or update.

At most three calls: GET the type headers, POST the new types, PUT the existing ones. Repeating it changes nothing.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import CatalogRejected
from .retry import RetryPolicy

if TYPE_CHECKING:
    from .uploader import CatalogClient

TYPEDEF_CATEGORIES = ("enumDefs", "structDefs", "classificationDefs", "entityDefs", "relationshipDefs",
                      "businessMetadataDefs")
# category in a typedef header -> the TypesDef list it belongs to
_HEADER_CATEGORY = {"ENUM": "enumDefs", "STRUCT": "structDefs", "CLASSIFICATION": "classificationDefs",
                    "ENTITY": "entityDefs", "RELATIONSHIP": "relationshipDefs",
                    "BUSINESS_METADATA": "businessMetadataDefs"}


@dataclass(frozen=True)
class TypedefReport:
    created: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    calls: int = 0


def entity_type_names(typedefs: dict[str, list[dict[str, Any]]]) -> frozenset[str]:
    """The entity types a TypesDef defines: the connector's own types, which it deletes when no run uses them."""
    return frozenset(t["name"] for t in typedefs.get("entityDefs", []))


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


def split_new_and_existing(typedefs: dict[str, list[dict[str, Any]]],
                           headers: list[dict[str, Any]]) -> tuple[dict[str, list], dict[str, list]]:
    """(types to create, types to update), each a TypesDef, given the catalog's typedef headers."""
    present = {(_HEADER_CATEGORY.get(str(h.get("category", "")).upper()), h.get("name")) for h in headers}
    new: dict[str, list] = {}
    existing: dict[str, list] = {}
    for category, defs in typedefs.items():
        if category not in TYPEDEF_CATEGORIES:
            raise ValueError(f"unknown typedef category {category!r}; expected one of {list(TYPEDEF_CATEGORIES)}")
        for typedef in defs:
            side = existing if (category, typedef.get("name")) in present else new
            side.setdefault(category, []).append(typedef)
    return new, existing


def _names(typesdef: dict[str, list]) -> tuple[str, ...]:
    return tuple(typedef["name"] for category in TYPEDEF_CATEGORIES for typedef in typesdef.get(category, []))


def register_typedefs(client: "CatalogClient", typedefs: dict[str, list[dict[str, Any]]],
                      retry: RetryPolicy | None = None) -> TypedefReport:
    """Create the types the catalog lacks (POST), update the ones it has (PUT): at most 3 calls.

    A 409 (another process created one of the types in between) starts over once from fresh headers.
    """
    retry = retry or RetryPolicy()
    calls = [0]
    try:
        created, updated = _register_once(client, typedefs, retry, calls)
    except CatalogRejected as exc:
        if exc.status != 409:
            raise
        created, updated = _register_once(client, typedefs, retry, calls)
    return TypedefReport(created=created, updated=updated, calls=calls[0])


def _register_once(client: "CatalogClient", typedefs: dict[str, list[dict[str, Any]]], retry: RetryPolicy,
                   calls: list[int]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    headers = retry.run("typedef headers", client.typedef_headers, calls)
    new, existing = split_new_and_existing(typedefs, headers)
    if new:
        retry.run("typedef create", lambda: client.create_typedefs(new), calls)
    if existing:
        retry.run("typedef update", lambda: client.update_typedefs(existing), calls)
    return _names(new), _names(existing)
