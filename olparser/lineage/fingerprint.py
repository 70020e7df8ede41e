"""A stable hash of what a plan would write, to skip writing what the catalog already has (a duplicate event; a
late START only when it does not change when the run started). Placeholder guids are ignored; everything else counts, the run's status included
(a run written as INCOMPLETE is written again when it completes).

What is hashed: the plan encoded once as JSON (entities and external datasets, each list in (typeName, qualifiedName)
order, keys sorted; orjson, or the standard library for what orjson refuses, such as a lone surrogate or a 20-digit
integer), each entity as `[entity without its column lineage texts, names of the texts taken out]`, followed by those
texts (a process's `columnLineageDetail` and `columnMapping`, most of a plan's bytes) as they are, in UTF-8, each
after its length: the builder assembled them as JSON already, so they are hashed once rather than escaped into the
plan's JSON and searched. The stream can be read back in one way only (the JSON ends where its brackets close, the
names say how many texts follow, each length where its text ends), so different plans hash different bytes.

The placeholder guids ("-N") are cut out of the JSON: every placeholder sits in an entity or an object id, next to a
`typeName` that sorts after it, so it always reads `"guid":"-N",` there, and that text cannot occur inside a JSON
string (its quotes would be escaped). Fingerprints stored before 2026-11-25 differ: a deployment that upgrades
writes a run it already wrote once more when an event of that run comes again (an idempotent upsert), then stores
the new fingerprint and skips as before.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import orjson

from olparser.jsontypes import JSON

from .entities import key_of
from .plan import LineagePlan

_PLACEHOLDER_GUID = re.compile(rb'"guid":"-\d+",')
HASHED_APART = ("columnLineageDetail", "columnMapping")  # attributes hashed as text, not encoded into the JSON


def plan_fingerprint(plan: LineagePlan) -> str:
    """Hex SHA-256 of the plan's entities and external datasets without placeholder guids."""
    texts: list[str] = []
    content = [
        [_without_texts(e, texts) for e in sorted(plan.entities, key=key_of)],
        [_without_texts(e, texts) for e in sorted(plan.external_datasets, key=key_of)],
    ]
    digest = hashlib.sha256(_PLACEHOLDER_GUID.sub(b"", _encoded(content)))
    for text in texts:
        data = text.encode("utf-8", "surrogatepass")  # a lone surrogate too, as its own bytes
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


def _without_texts(entity: JSON, texts: list[str]) -> list[Any]:
    """`[entity, names]`: the entity without the text attributes of HASHED_APART, which are appended to `texts`, and
    their names."""
    attributes = entity.get("attributes")
    names = (
        [name for name in HASHED_APART if name in attributes and attributes[name].__class__ is str]
        if attributes.__class__ is dict
        else ()
    )
    if not names:
        return [entity, ()]
    kept = dict(attributes)  # type: ignore[arg-type]  # a dict: `names` is empty otherwise (`__class__ is dict`)
    for name in names:
        texts.append(kept.pop(name))
    return [{**entity, "attributes": kept}, names]


def _encoded(content: Any) -> bytes:
    try:
        return orjson.dumps(content, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:  # always the same way for the same plan
        return json.dumps(content, sort_keys=True, separators=(",", ":")).encode("ascii")
