"""A stable hash of what a plan would write, to skip writing what the catalog already has (a duplicate event; a
late START only when it does not change when the run started). Placeholder guids are ignored; everything else counts, the run's status included
(a run written as INCOMPLETE is written again when it completes)."""
from __future__ import annotations

import hashlib
import json
from typing import Any

from .plan import LineagePlan


def plan_fingerprint(plan: LineagePlan) -> str:
    """Hex SHA-256 of the plan's entities and external datasets without guids."""
    content = {"entities": sorted(_canonical(e) for e in plan.entities),
               "external_datasets": sorted(_canonical(e) for e in plan.external_datasets)}
    return hashlib.sha256(json.dumps(content, separators=(",", ":")).encode("utf-8")).hexdigest()


def _canonical(body: dict[str, Any]) -> str:
    stripped = _without_guids(body)
    return json.dumps(stripped, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _without_guids(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_guids(v) for k, v in value.items() if k != "guid"}
    if isinstance(value, list):
        return [_without_guids(v) for v in value]
    return value
