"""A stable hash of what a plan would write, to skip writing what the catalog already has (e.g. streaming
micro-batches that repeat the same lineage). Placeholder guids and run attributes (`lastRun*`) are ignored."""
from __future__ import annotations

import hashlib
import json
from typing import Any

from .plan import LineagePlan
from .processes import RUN_ATTRIBUTES


def plan_fingerprint(plan: LineagePlan) -> str:
    """Hex SHA-256 of the plan's entities and external datasets without guids and run attributes."""
    content = {"entities": sorted(_canonical(e) for e in plan.entities),
               "external_datasets": sorted(_canonical(e) for e in plan.external_datasets)}
    return hashlib.sha256(json.dumps(content, separators=(",", ":")).encode("utf-8")).hexdigest()


def _canonical(body: dict[str, Any]) -> str:
    stripped = _without_guids(body)
    attributes = stripped.get("attributes")
    if isinstance(attributes, dict):
        stripped["attributes"] = {k: v for k, v in attributes.items() if k not in RUN_ATTRIBUTES}
    return json.dumps(stripped, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _without_guids(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_guids(v) for k, v in value.items() if k != "guid"}
    if isinstance(value, list):
        return [_without_guids(v) for v in value]
    return value
