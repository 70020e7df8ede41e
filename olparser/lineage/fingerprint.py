"""A stable hash of what a plan would write, to skip writing what the catalog already has (a duplicate event; a
late START only when it does not change when the run started). Placeholder guids are ignored; everything else counts, the run's status included
(a run written as INCOMPLETE is written again when it completes).

One `json.dumps` of the whole plan (entities and external datasets, each list in (typeName, qualifiedName) order,
keys sorted), with the placeholder guids ("-N") cut out of the text: every placeholder sits in an entity or an
object id, next to a `typeName` that sorts after it, so it always reads `"guid":"-N",` there, and that text cannot
occur inside a JSON string (its quotes would be escaped). Fingerprints stored by versions before 2026-11 (a hash of
per-entity texts) differ from these: a deployment that upgrades writes each run it sees again once, then skips.
"""
from __future__ import annotations

import hashlib
import json
import re

from .entities import key_of
from .plan import LineagePlan

_PLACEHOLDER_GUID = re.compile(r'"guid":"-\d+",')


def plan_fingerprint(plan: LineagePlan) -> str:
    """Hex SHA-256 of the plan's entities and external datasets without placeholder guids."""
    text = json.dumps([sorted(plan.entities, key=key_of), sorted(plan.external_datasets, key=key_of)],
                      sort_keys=True, separators=(",", ":"))  # ASCII: a lone surrogate in a name cannot fail
    return hashlib.sha256(_PLACEHOLDER_GUID.sub("", text).encode("ascii")).hexdigest()
