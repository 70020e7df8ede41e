"""Who to ask about a process, and what it does: the job's `ownership`, `documentation` and `tags` facets on the entities the
connector creates for a run, applied after they are built (pure; never on datasets, so never on scanned assets).

- `ownership` (`{"owners": [{"name": "user:jdoe@contoso.com", "type": "MAINTAINER"}, ...]}`, OpenLineage
  OwnershipJobFacet) -> Purview `contacts` on each process and on its direct owner (notebook, task, pipeline or Spark
  application): `Owner` for owners and maintainers (a type containing "owner" or "maintainer", or no type), `Expert`
  for any other type. Purview wants Entra object ids: a name is looked up in OWNER_CONTACTS (the name as sent, or
  without its `user:` / `team:` prefix); a name it does not hold is skipped (and named in the plan's notes, which the
  runner logs once per name). At most 20 contacts per type (Purview's limit), in the facet's order.
- `documentation` (`{"description", "contentType"}`) -> the process's `description`, never `userDescription` (what
  Purview users write themselves).
- `tags` (`{"tags": [{"key", "value", "source"}]}`, TagsJobFacet) -> the process's `labels`, `{key}_{value}` with
  what Atlas refuses in a label (anything but letters, digits, `_` and `-`) made `_`, at most 50 characters. Sent
  only when the facet is there (a bulk write replaces an entity's labels).
- Purview's 2 MB asset limit: a process whose column lineage texts (`columnMapping`, `columnLineageDetail`) would take
  it over is written without them and says so in `lineageTruncated`.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

from olparser.jsontypes import JSON

MAX_CONTACTS_PER_TYPE = 20
MAX_ASSET_BYTES = 2 * 1024 * 1024  # Purview: an asset is at most 2 MB
_OTHER_ATTRIBUTES_BYTES = 256 * 1024  # room kept for everything but the two column lineage texts
OWNER_WORDS = ("owner", "maintainer")
NAME_PREFIXES = ("user:", "team:")
GOVERNANCE_FACETS = frozenset({"ownership", "documentation", "tags"})  # the job facets applied here
MAX_LABEL_CHARS = 50  # Atlas INVALID_LABEL_LENGTH
_NOT_IN_LABEL = re.compile(r"[^A-Za-z0-9_-]")  # Atlas INVALID_LABEL_CHARACTERS
UNRESOLVED_NOTE = "ownership: no Entra object id in OWNER_CONTACTS for "
TRIMMED = (
    "column lineage left out: the process would exceed Purview's 2 MB asset limit "
    "(columnMapping {mapping} characters, columnLineageDetail {detail} characters)"
)


def contacts_of(job_facets: Mapping[str, Any], directory: Mapping[str, str]) -> tuple[JSON, tuple[str, ...]]:
    """(Purview `contacts` from the job's ownership facet, the names no object id was found for)."""
    owners = ((job_facets.get("ownership") or {}).get("owners")) or []
    contacts: dict[str, list[JSON]] = {}
    unresolved: list[str] = []
    for owner in owners if isinstance(owners, list) else []:
        name = owner.get("name") if isinstance(owner, dict) else None
        if not isinstance(name, str) or not name:
            continue
        object_id = directory.get(name) or directory.get(_without_prefix(name))
        if not object_id:
            if name not in unresolved:
                unresolved.append(name)
            continue
        kind = owner.get("type") if isinstance(owner.get("type"), str) else ""
        contact_type = "Owner" if not kind or any(word in kind.lower() for word in OWNER_WORDS) else "Expert"
        chosen = contacts.setdefault(contact_type, [])
        if len(chosen) < MAX_CONTACTS_PER_TYPE and all(c["id"] != object_id for c in chosen):
            chosen.append({"id": object_id, "info": f"{name} ({kind})" if kind else name})
    return contacts, tuple(unresolved)


def description_of(job_facets: Mapping[str, Any]) -> str | None:
    description = (job_facets.get("documentation") or {}).get("description")
    return description if isinstance(description, str) and description else None


def labels_of(job_facets: Mapping[str, Any]) -> list[str] | None:
    """The process's labels from the job's tags facet (sorted, each once); None without the facet."""
    facet = job_facets.get("tags")
    if not isinstance(facet, dict):
        return None
    labels = set()
    for tag in facet.get("tags") or []:
        if isinstance(tag, dict) and isinstance(tag.get("key"), str) and tag["key"]:
            value = tag.get("value") if isinstance(tag.get("value"), str) else ""
            labels.add(_NOT_IN_LABEL.sub("_", f"{tag['key']}_{value}" if value else tag["key"])[:MAX_LABEL_CHARS])
    return sorted(labels)


def with_governance(
    processes: Iterable[JSON],
    owner_entities: Iterable[JSON],
    owner_key: tuple[str, str],
    job_facets: Mapping[str, Any],
    directory: Mapping[str, str],
) -> tuple[list[JSON], tuple[JSON, ...], tuple[str, ...]]:
    """(processes, owner entities, notes) with contacts, description and the 2 MB guard applied. Entities are
    copied where changed, never mutated."""
    if GOVERNANCE_FACETS.isdisjoint(job_facets):  # most runs: nothing to apply but the 2 MB guard
        return [within_asset_limit(process) for process in processes], tuple(owner_entities), ()
    contacts, unresolved = contacts_of(job_facets, directory)
    description = description_of(job_facets)
    labels = labels_of(job_facets)
    governed = []
    for process in processes:
        process = within_asset_limit(process)
        if contacts or description or labels is not None:
            process = {
                **process,
                "attributes": {**process["attributes"], **({"description": description} if description else {})},
            }
            if contacts:
                process["contacts"] = contacts
            if labels is not None:
                process["labels"] = labels
        governed.append(process)
    owners = tuple(
        {**e, "contacts": contacts}
        if contacts and (e.get("typeName"), (e.get("attributes") or {}).get("qualifiedName")) == owner_key
        else e
        for e in owner_entities
    )
    notes = (UNRESOLVED_NOTE + ", ".join(unresolved),) if unresolved else ()
    return governed, owners, notes


def within_asset_limit(process: JSON) -> JSON:
    """The process, without its column lineage texts when they would take it over Purview's 2 MB asset limit."""
    attributes = process.get("attributes") or {}
    mapping, detail = attributes.get("columnMapping") or "", attributes.get("columnLineageDetail") or ""
    if len(mapping) + len(detail) <= (MAX_ASSET_BYTES - _OTHER_ATTRIBUTES_BYTES) // 2:
        return process  # cannot be over, even with every character escaped in the request body
    sent = (
        len(mapping) + mapping.count('"') + mapping.count("\\") + len(detail) + detail.count('"') + detail.count("\\")
    )  # the texts are ASCII-escaped: a quote or a backslash takes two bytes in the body
    if sent <= MAX_ASSET_BYTES - _OTHER_ATTRIBUTES_BYTES:
        return process
    note = TRIMMED.format(mapping=len(mapping), detail=len(detail))
    return {
        **process,
        "attributes": {
            **attributes,
            "columnMapping": "[]",
            "columnLineageDetail": "",
            "lineageTruncated": "; ".join(filter(None, (attributes.get("lineageTruncated"), note))),
        },
    }


def _without_prefix(name: str) -> str:
    for prefix in NAME_PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name
