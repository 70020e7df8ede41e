"""A stable hash of what a plan would write, to skip writing what the catalog already has (a duplicate event; a
late START only when it does not change when the run started). Placeholder guids are ignored; everything else counts, the run's status included
(a run written as INCOMPLETE is written again when it completes).

The plan is encoded once as JSON (entities and external datasets, each list in (typeName, qualifiedName) order, keys
sorted; orjson, or the standard library for what orjson refuses, such as a lone surrogate or a 20-digit integer)
and the placeholder guids ("-N") are cut out of the text: every placeholder sits in an entity or an object id, next
to a `typeName` that sorts after it, so it always reads `"guid":"-N",` there, and that text cannot occur inside a
JSON string (its quotes would be escaped). Fingerprints stored before 2026-11 (a hash of per-entity texts) differ:
a deployment that upgrades writes a run it already wrote once more when an event of that run comes again (an
idempotent upsert), then stores the new fingerprint and skips as before.
"""
from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import orjson

from .entities import key_of
from .plan import LineagePlan

_PLACEHOLDER_GUID = re.compile(rb'"guid":"-\d+",')


def plan_fingerprint(plan: LineagePlan) -> str:
    """Hex SHA-256 of the plan's entities and external datasets without placeholder guids."""
    content = [sorted(plan.entities, key=key_of), sorted(plan.external_datasets, key=key_of)]
    return hashlib.sha256(_PLACEHOLDER_GUID.sub(b"", _encoded(content))).digest().hex()


def _encoded(content: Any) -> bytes:
    try:
        return orjson.dumps(content, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:  # always the same way for the same plan
        return json.dumps(content, sort_keys=True, separators=(",", ":")).encode("ascii")
