"""Comparing the embedded catalog's answers with the documented Data Map examples (key by key)."""

from __future__ import annotations

from typing import Any

FREE_FORM = frozenset(
    {"attributes", "guidAssignments", "guidEntityMap", "referredEntities", "widthCounts", "relationshipAttributes"}
)  # keyed by data (guids, attribute names): only their values' types


def kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}[type(value)]


def paths(value: Any, prefix: str = "$") -> dict[str, set[str]]:
    """Every key path of a JSON value with the types found there (list items merged under `[]`)."""
    found: dict[str, set[str]] = {prefix: {kind(value)}}
    children: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        free = prefix.rsplit(".", 1)[-1] in FREE_FORM or prefix.endswith("widthCounts.*")
        children = [(f"{prefix}.{'*' if free else key}", item) for key, item in value.items()]
    elif isinstance(value, list):
        children = [(f"{prefix}[]", item) for item in value]
    for path, item in children:
        for sub, kinds in paths(item, path).items():
            found.setdefault(sub, set()).update(kinds)
    return found


def compare(ours: Any, documented: Any) -> tuple[set[str], set[str], dict[str, tuple[set[str], set[str]]]]:
    """(paths only documented, paths only ours, paths whose types differ and are not null on one side)."""
    a, b = paths(ours), paths(documented)
    differ = {
        p: (a[p], b[p])
        for p in a.keys() & b.keys()
        if a[p] != b[p] and not ({"null"} in (a[p] - b[p], b[p] - a[p]) or a[p] & b[p])
    }
    return b.keys() - a.keys(), a.keys() - b.keys(), differ
