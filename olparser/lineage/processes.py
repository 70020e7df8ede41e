"""One process per (owner, OpenLineage job, output), with a qualifiedName that does not change between runs.

`{owner qn}/processes/{job}/{output qn}`, where `{job}` is the job name without its application prefix (`/` and `%`
percent-encoded so that the name stays unambiguous). Re-runs of one statement update the same process, and since its
`inputs` list is replaced on every upsert, inputs the code no longer reads disappear (the reference connector hashed
the inputs into the name, so every input combination made a new process and old inputs never went away). Different
statements that write the same output (a CTAS that creates a table, a later INSERT into it) are different processes.

Inputs are the run's inputs plus every dataset the output's column lineage names. Every attribute the builder owns
is sent on every write, empty when there is nothing (Atlas keeps an attribute that an update leaves out, so a value
from an older run would otherwise survive). Run attributes (`lastRun*`) describe the newest run, with its system
metadata (`olparser.lineage.metadata`); `runCount` and `firstRunTime` come from the run history
(`olparser.history.with_run_history`), null and "" until it fills them.
"""

from __future__ import annotations

from json.encoder import encode_basestring_ascii
from typing import Iterable

from olparser.jsontypes import JSON
from olparser.runs.model import RunSnapshot

from .columns import ColumnLineage
from .context import RunContext
from .datasets import ResolvedDataset
from .entities import entity, object_id
from .metadata import process_run_attributes
from .owners import Owner

RUN_ATTRIBUTES = ("lastRunId", "lastRunTime", "lastRunStatus", "lastRunUser")
NO_COLUMN_MAPPING = "[]"  # Purview parses columnMapping as a JSON list


def job_key(job_name: str) -> str:
    """The job part of a process qualifiedName: the job name with `%` and `/` percent-encoded."""
    return job_name.replace("%", "%25").replace("/", "%2F")


def process_qualified_name(owner: Owner, job_name: str, output: ResolvedDataset) -> str:
    return f"{owner.qualified_name}/processes/{job_key(job_name)}/{output.qualified_name}"


def build_process(
    run: RunSnapshot,
    ctx: RunContext,
    owner: Owner,
    output: ResolvedDataset,
    inputs: Iterable[ResolvedDataset],
    lineage: ColumnLineage | None,
    *,
    status: str,
    truncation: str = "",
    max_inputs: int | None = None,
    lineage_source: str = "",
    summary: JSON | None = None,
    last_run: tuple[str, str] | None = None,
    orchestrator: JSON | None = None,
) -> JSON:
    """`last_run`: the (id, time) the `lastRunId` and `lastRunTime` attributes show instead of the run's own (a
    streaming micro-batch's window: olparser.lineage.streaming). `orchestrator`: the reference (by unique
    attributes) to the entity of the orchestrator's job that ran it (olparser.lineage.owners.airflow_orchestrator)."""
    unique_inputs = {d.key: d for d in inputs}
    if lineage is not None:
        for source in lineage.sources:
            unique_inputs.setdefault(source.key, source)
    ordered_inputs = [unique_inputs[key] for key in sorted(unique_inputs)][:max_inputs]
    datasets = [*ordered_inputs, output]
    locations = {d.qualified_name: d.location for d in datasets if d.location}
    tables = {d.qualified_name: d.table for d in datasets if d.table}
    job = owner.process_job or ctx.display_job_name or run.job_name
    attributes: JSON = {
        "name": job or output.display_name,
        "inputs": [object_id(*d.key) for d in ordered_inputs],
        "outputs": [object_id(*output.key)],
        "columnMapping": lineage.column_mapping if lineage else NO_COLUMN_MAPPING,
        "columnLineageDetail": lineage.detail if lineage else "",
        "datasetLocations": _json_or_empty(locations),
        "datasetTables": _json_or_empty(tables),
        "openlineageJob": f"{run.job_namespace}/{run.job_name}",
        "lastRunId": last_run[0] if last_run else run.run_id or "",
        "lastRunTime": last_run[1] if last_run else run.event_time,
        "lastRunStatus": status,
        "lastRunUser": ctx.user or "",
        "lineageTruncated": truncation,
        "columnLineageSource": lineage_source,
    }
    body = entity(
        owner.process_type,
        process_qualified_name(owner, job, output),
        attributes,
        {owner.process_relationship: owner.reference(), **({"orchestrator": orchestrator} if orchestrator else {})},
    )
    body["attributes"].update(process_run_attributes(summary or {}))  # null numbers kept: sent to clear old values
    return body


def _json_or_empty(mapping: dict[str, str]) -> str:
    """`mapping` as `json.dumps` writes it with sorted keys, compact (ASCII-escaped), or "" when empty."""
    if not mapping:
        return ""
    encode = encode_basestring_ascii  # the text json.dumps writes for each key and value, without its encoder's setup
    return "{" + ",".join([f"{encode(key)}:{encode(value)}" for key, value in sorted(mapping.items())]) + "}"
