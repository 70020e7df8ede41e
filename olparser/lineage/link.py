"""Linking a plan to the assets Purview's scanners registered: pure rewrites of entity JSON, no I/O.

Resolution (`olparser/adapters/catalog/resolver.py`) says, for some datasets of a plan, which scanned asset each one is
(`links`: the key the builder wrote it as -> the scanned asset's key). `link_plan` then

- rewrites every process so that it references the scanned asset: `inputs`, `outputs`, the `Source`/`Sink` of
  `columnMapping`, the datasets of `columnLineageDetail`, and the keys of `datasetLocations`/`datasetTables`;
- drops the linked datasets' own entities (the external dataset JSON, or the connector's placeholder and its
  columns, which is then no longer reported as unmatched): a scanned asset is referenced by type and qualifiedName
  only, never written;
- records `interim`: the datasets the connector creates itself because nothing scanned was found;
- writes a job run under the job's existing task that runs the same code, when resolution found one
  (olparser/resolution/tasks.py): the task's qualifiedName, type and name, its processes' `task` references, and the
  job's name as the catalog holds them.

Process qualifiedNames are not touched: they were built from the rule identity of the output, so a process keeps its
name when its datasets are linked later (the re-link timer rewrites the same process, with `relink_attributes`).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Iterable, Mapping

from olparser.jsontypes import JSON
from olparser.resolution.tasks import TaskMatch

from .adf import PENDING_TYPE, PIPELINE_ATTRIBUTE
from .databricks_model import JOB
from .datasets import PLACEHOLDER_TYPE, placeholder_qualified_name
from .entities import Key, key_of, object_id, related
from .plan import COLUMN_TYPE, LineagePlan, is_process

LINKED_ATTRIBUTES = ("inputs", "outputs", "columnMapping", "columnLineageDetail", "datasetLocations", "datasetTables")


def link_plan(
    plan: LineagePlan,
    links: Mapping[Key, Key],
    interim: Iterable[Key] = (),
    tasks: Mapping[str, TaskMatch] | None = None,
) -> LineagePlan:
    """The plan with each dataset of `links` replaced by the asset it links to (see the module docstring); `interim`
    lists the plan's external datasets the connector creates (kept as they are, counted as connector-owned); `tasks`:
    the job's existing task a job run's task stands for (`Resolution.tasks`)."""
    plan = _with_task(_with_pipeline(plan, links), tasks or {})
    moved = {source: target for source, target in links.items() if source != target and source[0] != PENDING_TYPE}
    external_keys = {key_of(e) for e in plan.external_datasets}
    interim_keys = tuple(sorted(set(interim) & external_keys - set(moved)))
    if not moved:
        return replace(plan, interim=interim_keys) if interim_keys != plan.interim else plan
    gone = set(moved)
    entities = []
    for entity in plan.entities:
        if key_of(entity) in gone or _column_of(entity, gone):
            continue
        if is_process(entity):
            entity = {**entity, "attributes": relink_attributes(entity["attributes"], moved)}
        entities.append(entity)
    unmatched = tuple(
        u for u in plan.unmatched if (PLACEHOLDER_TYPE, placeholder_qualified_name(u.namespace, u.name)) not in gone
    )
    return replace(
        plan,
        entities=tuple(entities),
        external_datasets=tuple(e for e in plan.external_datasets if key_of(e) not in gone),
        interim=interim_keys,
        unmatched=unmatched,
    )


def _with_pipeline(plan: LineagePlan, links: Mapping[Key, Key]) -> LineagePlan:
    """The plan whose processes reference the scanned adf_pipeline its pipeline resolved to (`adfPipeline`), and no
    longer asks for it; unchanged when no pipeline, or none was found (Microsoft's type: never written)."""
    if plan.pipeline is None:
        return plan
    target = links.get(plan.pipeline.pending)
    if target is None:
        return plan
    reference = object_id(*target)
    entities = tuple(
        {
            **e,
            "relationshipAttributes": {
                **(e.get("relationshipAttributes") or {}),
                PIPELINE_ATTRIBUTE: related(e["typeName"], PIPELINE_ATTRIBUTE, reference),
            },
        }
        if is_process(e)
        else e
        for e in plan.entities
    )
    return replace(plan, entities=entities)


def _with_task(plan: LineagePlan, tasks: Mapping[str, TaskMatch]) -> LineagePlan:
    """The plan written under the job's existing task its task stands for (unchanged when none was found): the task
    entity is that task (its qualifiedName, type and name), the processes' `task` references point at it, and the job
    keeps the name the catalog holds. The processes keep their qualifiedNames, built from the builder's own task
    (`{job}/tasks/{notebook path}/processes/...`), as they keep theirs when their datasets are linked: a name never
    depends on what the catalog held when the run was written."""
    lookup = plan.task
    match = tasks.get(lookup.task) if lookup is not None else None
    if lookup is None or match is None:
        return plan
    own, found = (lookup.task_type, lookup.task), (match.type_name, match.qualified_name)
    entities = []
    for entity in plan.entities:
        key = key_of(entity)
        if key == (JOB, lookup.job) and match.job_name:
            entity = {**entity, "attributes": {**entity["attributes"], "name": match.job_name}}
        elif key == own:
            attributes = {**entity["attributes"], "qualifiedName": found[1]}
            if match.name:
                attributes["name"] = match.name
            entity = {**entity, "typeName": found[0], "attributes": attributes}
        elif is_process(entity) and found != own:
            relations = entity.get("relationshipAttributes") or {}
            reference = relations.get("task")
            if isinstance(reference, dict) and _ref_key(reference) == own:
                reference = {**reference, "typeName": found[0], "uniqueAttributes": {"qualifiedName": found[1]}}
                entity = {**entity, "relationshipAttributes": {**relations, "task": reference}}
        entities.append(entity)
    return replace(plan, entities=tuple(entities))


def task_links(plan: LineagePlan, tasks: Mapping[str, TaskMatch]) -> dict[Key, Key]:
    """The builder's own task -> the job's existing task it stands for, as a link (a record of the run history made
    from the plan before it was linked names the builder's task as the processes' owner: `relink_record`)."""
    lookup = plan.task
    match = tasks.get(lookup.task) if lookup is not None else None
    if lookup is None or match is None or (lookup.task_type, lookup.task) == (match.type_name, match.qualified_name):
        return {}
    return {(lookup.task_type, lookup.task): (match.type_name, match.qualified_name)}


def relink_attributes(attributes: JSON, links: Mapping[Key, Key]) -> JSON:
    """A process's attributes with its references to the datasets of `links` pointing at their targets (a copy;
    only the attributes that change are replaced)."""
    names = _names(links)
    changed: JSON = {}
    for attribute in ("inputs", "outputs"):
        value = attributes.get(attribute)
        if isinstance(value, list) and any(_ref_key(ref) in links for ref in value):
            changed[attribute] = _relinked_refs(value, links)
    for attribute, rewrite in (
        ("columnMapping", _column_mapping),
        ("columnLineageDetail", _lineage_detail),
        ("datasetLocations", _keyed_map),
        ("datasetTables", _keyed_map),
    ):
        value = attributes.get(attribute)
        if isinstance(value, str) and value and any(name in value for name in names):
            text = rewrite(value, links, names)
            if text != value:
                changed[attribute] = text
    return {**attributes, **changed} if changed else attributes


def _column_of(entity: JSON, datasets: set[Key]) -> bool:
    if entity.get("typeName") != COLUMN_TYPE:
        return False
    return _ref_key((entity.get("relationshipAttributes") or {}).get("dataset")) in datasets


def _ref_key(ref: Any) -> Key | None:
    if not isinstance(ref, dict):
        return None
    qualified_name = (ref.get("uniqueAttributes") or {}).get("qualifiedName")
    type_name = ref.get("typeName")
    return (type_name, qualified_name) if isinstance(type_name, str) and isinstance(qualified_name, str) else None


def _relinked_refs(refs: list[Any], links: Mapping[Key, Key]) -> list[Any]:
    """References with the linked ones replaced (by type and qualifiedName), each key once, sorted as the builder
    sorts them; references by guid alone (another tool's) kept after them."""
    by_key: dict[Key, Any] = {}
    others = []
    for ref in refs:
        key = _ref_key(ref)
        if key in links:
            # Why the type error is ignored: a reference without both names finds no link
            target = links[key]  # type: ignore[index]
            by_key.setdefault(target, object_id(*target))
        elif key is not None:
            by_key.setdefault(key, ref)
        else:
            others.append(ref)
    return [by_key[key] for key in sorted(by_key)] + others


def _names(links: Mapping[Key, Key]) -> dict[str, str]:
    """qualifiedName -> target qualifiedName (what columnMapping and the location maps know datasets by)."""
    names: dict[str, str] = {}
    for (_, source), (_, target) in sorted(links.items()):
        names.setdefault(source, target)
    return names


def _column_mapping(text: str, links: Mapping[Key, Key], names: Mapping[str, str]) -> str:
    """Purview's columnMapping with Source and Sink renamed; entries that now share a pair are merged."""
    entries = _parsed(text, list)
    if entries is None:
        return text
    merged: dict[tuple[str, str], dict[tuple[str, str], Any]] = {}
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("DatasetMapping"), dict):
            return text
        mapping = entry["DatasetMapping"]
        pair = (
            names.get(mapping.get("Source"), mapping.get("Source")),
            names.get(mapping.get("Sink"), mapping.get("Sink")),
        )
        columns = merged.setdefault(pair, {})
        for column in entry.get("ColumnMapping") or []:
            if isinstance(column, dict):
                columns.setdefault((str(column.get("Source")), str(column.get("Sink"))), column)
    rewritten = [
        {"DatasetMapping": {"Source": source, "Sink": sink}, "ColumnMapping": [columns[key] for key in sorted(columns)]}
        for (source, sink), columns in sorted(merged.items(), key=lambda item: (str(item[0][0]), str(item[0][1])))
    ]
    return _compact(rewritten)


def _lineage_detail(text: str, links: Mapping[Key, Key], names: Mapping[str, str]) -> str:
    """columnLineageDetail with every input field's dataset (qualifiedName, typeName) linked."""
    detail = _parsed(text, dict)
    if detail is None:
        return text

    def relinked(items: Any) -> Any:
        if not isinstance(items, list):
            return items
        out = []
        for item in items:
            key = (item.get("typeName"), item.get("qualifiedName")) if isinstance(item, dict) else None
            if key in links:
                # Why the type error is ignored: a reference without both names finds no link
                target = links[key]  # type: ignore[index]
                item = {**item, "typeName": target[0], "qualifiedName": target[1]}
            out.append(item)
        return out

    detail = {**detail, "dataset": relinked(detail.get("dataset"))}
    if isinstance(detail.get("fields"), list):
        detail["fields"] = [
            {**field, "inputFields": relinked(field.get("inputFields"))} if isinstance(field, dict) else field
            for field in detail["fields"]
        ]
    return _compact(detail)


def _keyed_map(text: str, links: Mapping[Key, Key], names: Mapping[str, str]) -> str:
    """datasetLocations / datasetTables (`{dataset qualifiedName: other identity}`) with the keys linked."""
    mapping = _parsed(text, dict)
    if mapping is None:
        return text
    return json.dumps({names.get(k, k): v for k, v in mapping.items()}, sort_keys=True, separators=(",", ":"))


def _parsed(text: str, kind: type) -> Any:
    """The JSON value of `text` when it is a `kind`, else None (an attribute someone else wrote is left alone)."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, kind) else None


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
