"""Plan + run -> history record, and history -> the plan's run counts: the one rule, pure, used by the live path
(olparser.pipeline), the backfill and `spark history` (tools/spark).

`history_record` reads what the run's plan says — its processes' inputs and outputs as written, their owner and
column lineage — and adds the run's facts: start (olparser.runs: the earliest START, else the earliest event), end
(its terminal event; None for an INCOMPLETE run), final status and the system metadata summary. A run whose plan has
no process (no outputs, no job name, static lineage) has no record: it accessed nothing the history can name.
For a run that writes nothing (FAIL, ABORT), the caller builds the plan anyway (build_lineage is pure) and uploads
nothing.

The micro-batches of a streaming job (each its own run) share one record per STREAMING_HISTORY_WINDOW
(`streaming_window`, `history_run_id`): start and end at the window's bounds, only the metadata every batch shares,
so that every batch of the window writes the same record.

`with_run_history` puts the history's `runCount` and `firstRunTime` on the plan's processes. `relink_record` links a
record's datasets to scanned assets as `olparser.lineage.link` links a plan (the backfill records before it writes).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from olparser.jsontypes import JSON
from olparser.lineage import LineageOptions, LineagePlan
from olparser.lineage.context import run_context
from olparser.lineage.entities import Key, object_id
from olparser.lineage.link import relink_attributes
from olparser.lineage.metadata import iso_time, system_metadata
from olparser.lineage.plan import is_process
from olparser.lineage.streaming import PER_BATCH_METADATA, stream_run_id, streaming_window
from olparser.runs.merge import run_end_instant, run_start_instant
from olparser.runs.model import TERMINAL_EVENT_TYPES, RunSnapshot

from .model import DatasetRef, ProcessRun, ProcessSummary, RunFacts, RunRecord


def history_record(run: RunSnapshot, plan: LineagePlan, options: LineageOptions, *, status: str) -> RunRecord | None:
    """The history record of `run` written (or, for FAIL and ABORT, not written) with `plan`; `status` is the run's
    final status: COMPLETE, FAIL, ABORT, or INCOMPLETE (no terminal event). A streaming micro-batch's record is its
    window's (`streaming_window`)."""
    start = run_start_instant(run)
    processes = [e for e in plan.entities if is_process(e)]
    if run.run_id is None or start is None or not processes:
        return None
    owner_type, owner = _owner(processes[0])
    metadata = system_metadata(run, run_context(run, options))
    end = run_end_instant(run) if status in TERMINAL_EVENT_TYPES else None
    window = streaming_window(run, options)
    if window is not None:  # the window's record: the same from every micro-batch in it
        start = start // window * window
        end = start + window if end is not None else None
        metadata = {k: v for k, v in metadata.items() if k not in PER_BATCH_METADATA}
    facts = RunFacts(
        run_id=history_run_id(run, options),
        job=f"{run.job_namespace}/{run.job_name}",
        owner=owner,
        owner_type=owner_type,
        start=start,
        end=end,
        status=status,
        metadata=metadata,
    )
    return RunRecord(facts, tuple(sorted((_process_run(e) for e in processes), key=lambda p: p.qualified_name)))


def history_run_id(run: RunSnapshot, options: LineageOptions) -> str:
    """The key of the run's history record: its runId, or for a streaming micro-batch its window's —
    `stream-{uuid5 of the job and the window's start}`, shared by every micro-batch of the job in that window."""
    return stream_run_id(run, options) or run.run_id or ""


def with_run_history(plan: LineagePlan, summaries: Mapping[str, ProcessSummary]) -> LineagePlan:
    """The plan with each process's `runCount` and `firstRunTime` from `summaries` (null and "" for a process the
    history does not know)."""
    if not any(is_process(e) for e in plan.entities):
        return plan
    entities = []
    for entity in plan.entities:
        if is_process(entity):
            summary = summaries.get(entity["attributes"]["qualifiedName"])
            entity = {
                **entity,
                "attributes": {
                    **entity["attributes"],
                    "runCount": summary.run_count if summary else None,
                    "firstRunTime": iso_time(summary.first_start) if summary else "",
                },
            }
        entities.append(entity)
    return replace(plan, entities=tuple(entities))


def relink_record(record: RunRecord, links: Mapping[Key, Key]) -> RunRecord:
    """The record with each dataset of `links` (the key the builder wrote it as -> the scanned asset it is) replaced
    in its processes' inputs, outputs and column lineage, by the same rewrite that links a plan's processes; and its
    owner, when `links` names it (a job run's task that stands for the builder's: `link.task_links`)."""
    moved = {source: target for source, target in links.items() if source != target}
    if not moved:
        return record
    owner = moved.get((record.facts.owner_type, record.facts.owner))  # a job run's task (link.task_links)
    if owner is not None:
        record = replace(record, facts=replace(record.facts, owner_type=owner[0], owner=owner[1]))
    processes = []
    for process in record.processes:
        attributes = {
            "inputs": [object_id(d.type_name, d.qualified_name) for d in process.inputs],
            "outputs": [object_id(d.type_name, d.qualified_name) for d in process.outputs],
            "columnMapping": process.column_mapping,
            "columnLineageDetail": process.column_lineage_detail,
        }
        linked = relink_attributes(attributes, moved)
        processes.append(
            process
            if linked is attributes
            else replace(
                process,
                inputs=_refs(linked["inputs"]),
                outputs=_refs(linked["outputs"]),
                column_mapping=linked["columnMapping"],
                column_lineage_detail=linked["columnLineageDetail"],
            )
        )
    return replace(record, processes=tuple(processes))


def _refs(value: Any) -> tuple[DatasetRef, ...]:
    refs = []
    for item in value if isinstance(value, list) else ():
        unique = item.get("uniqueAttributes") if isinstance(item, dict) else None
        if isinstance(unique, dict) and isinstance(unique.get("qualifiedName"), str):
            refs.append(DatasetRef(unique["qualifiedName"], str(item.get("typeName") or "")))
    return tuple(sorted(set(refs)))


def _owner(process: JSON) -> tuple[str, str]:
    """(typeName, qualifiedName) of the entity the process belongs to (its one relationship attribute)."""
    for value in (process.get("relationshipAttributes") or {}).values():
        refs = _refs([value])
        if refs:
            return refs[0].type_name, refs[0].qualified_name
    return "", ""


def _process_run(entity: JSON) -> ProcessRun:
    attributes = entity["attributes"]
    return ProcessRun(
        qualified_name=attributes["qualifiedName"],
        type_name=entity["typeName"],
        name=str(attributes.get("name") or ""),
        inputs=_refs(attributes.get("inputs")),
        outputs=_refs(attributes.get("outputs")),
        column_mapping=str(attributes.get("columnMapping") or ""),
        column_lineage_detail=str(attributes.get("columnLineageDetail") or ""),
    )
