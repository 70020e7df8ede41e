"""One process per output dataset, under the run's owner, with a qualifiedName that does not change between runs.

`{owner qn}/processes/{output qn}`: re-runs update the same process, and since its `inputs` list is replaced on
every upsert, inputs the code no longer reads disappear (the reference connector hashed the inputs into the name,
so every input combination made a new process and old inputs never went away). Inputs are the run's inputs plus
every dataset the output's column lineage names. Run attributes (`lastRun*`) describe the newest run.
"""
from __future__ import annotations

import json
from typing import Iterable

from olparser.runs.model import RunSnapshot

from .columns import ColumnLineage
from .context import RunContext
from .datasets import ResolvedDataset
from .entities import JSON, entity, object_id
from .owners import Owner

RUN_ATTRIBUTES = ("lastRunId", "lastRunTime", "lastRunStatus", "lastRunUser")


def process_qualified_name(owner: Owner, output: ResolvedDataset) -> str:
    return f"{owner.qualified_name}/processes/{output.qualified_name}"


def build_process(run: RunSnapshot, ctx: RunContext, owner: Owner, output: ResolvedDataset,
                  inputs: Iterable[ResolvedDataset], lineage: ColumnLineage | None) -> JSON:
    unique_inputs = {d.key: d for d in inputs}
    if lineage is not None:
        for source in lineage.sources:
            unique_inputs.setdefault(source.key, source)
    ordered_inputs = [unique_inputs[key] for key in sorted(unique_inputs)]
    locations = {d.qualified_name: d.location for d in [*ordered_inputs, output] if d.location}
    attributes: JSON = {
        "name": ctx.display_job_name or output.display_name,
        "inputs": [object_id(*d.key) for d in ordered_inputs],
        "outputs": [object_id(*output.key)],
        "columnMapping": lineage.column_mapping if lineage else None,
        "columnLineageDetail": lineage.detail if lineage else None,
        "datasetLocations": json.dumps(locations, sort_keys=True, separators=(",", ":")) if locations else None,
        "openlineageJob": f"{run.job_namespace}/{run.job_name}",
        "lastRunId": run.run_id,
        "lastRunTime": run.event_time or None,
        "lastRunStatus": run.event_type,
        "lastRunUser": ctx.user,
    }
    return entity(owner.process_type, process_qualified_name(owner, output), attributes,
                  {owner.process_relationship: owner.reference()})
