"""The system metadata of a run: what the producer and the platform say about it, kept apart from what users annotate
(CDAP's SYSTEM scope). Pure: from the merged run and its context, no I/O. It includes who ran the run: the parent
and root runs of its ParentRunFacet and the orchestrator among them (`runBy`, olparser/lineage/identity.py).

One summary (`system_metadata`) serves both places that need it: the run history (every record of the run carries
it) and the processes the connector owns in Purview (`process_run_attributes`: the newest run's start, end,
duration, cluster and job ids, Spark and OpenLineage versions, rows and bytes written, plus `runCount` and
`firstRunTime` from the history). Every process attribute is sent on every write: "" for unknown text, null for an
unknown number (Atlas keeps an attribute an update leaves out).
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any, Mapping

from olparser.jsontypes import JSON
from olparser.runs.merge import run_end_instant, run_start_instant
from olparser.runs.model import RunSnapshot

from .context import RunContext
from .identity import Orchestration, orchestration

ENVIRONMENT_KEYS = (  # environment-properties (Databricks) -> summary key
    ("spark.databricks.clusterUsageTags.clusterId", "clusterId"),
    ("spark.databricks.clusterUsageTags.clusterName", "clusterName"),
    ("spark.databricks.notebook.path", "notebookPath"),
    ("spark.databricks.job.id", "jobId"),
    ("spark.databricks.job.runId", "jobRunId"),
)
MAX_ERROR_CHARS = 500
MAX_QUALITY_DATASETS = 20
MAX_QUALITY_COLUMNS = 50
_PRODUCER_VERSION = re.compile(r"/tree/([^/]+)/")
# Process attributes from the summary, text ones ("" when unknown) and numbers (null when unknown).
TEXT_ATTRIBUTES = (
    ("lastRunStartTime", "startTime"),
    ("lastRunEndTime", "endTime"),
    ("lastRunClusterId", "clusterId"),
    ("lastRunJobId", "jobId"),
    ("lastRunJobRunId", "jobRunId"),
    ("lastRunApplicationId", "applicationId"),
    ("lastRunSparkVersion", "sparkVersion"),
    ("lastRunOpenLineageVersion", "openlineageVersion"),
    ("lastRunParentJobNamespace", "parentJobNamespace"),
    ("lastRunParentJobName", "parentJobName"),
    ("lastRunParentRunId", "parentRunId"),
    ("lastRunRootJobNamespace", "rootJobNamespace"),
    ("lastRunRootJobName", "rootJobName"),
    ("lastRunRootRunId", "rootRunId"),
)
NUMBER_ATTRIBUTES = (
    ("lastRunDurationMs", "durationMs"),
    ("lastRunRowsWritten", "rowsWritten"),
    ("lastRunBytesWritten", "bytesWritten"),
)
_NO_RUN_TEXT = {name: "" for name, _ in TEXT_ATTRIBUTES}
_TEXT_ATTRIBUTE_OF = {key: name for name, key in TEXT_ATTRIBUTES}  # summary key -> process attribute
HISTORY_ATTRIBUTES = ("runCount", "firstRunTime")  # set from the run history (olparser.history)


def iso_time(seconds: float | None) -> str:
    """Unix seconds as ISO 8601 UTC text with milliseconds (`2026-03-02T08:00:00.000Z`), "" for None."""
    if seconds is None:
        return ""
    moment = datetime.fromtimestamp(seconds, timezone.utc)
    if moment.year >= 1000:  # isoformat writes what strftime does, faster; strftime does not pad a year below 1000
        return moment.isoformat(timespec="milliseconds")[:-6] + "Z"
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def system_metadata(run: RunSnapshot, ctx: RunContext, orchestrated: Orchestration | None = None) -> JSON:
    """The run's system metadata summary: only what is known (no empty values), keys in camelCase. `orchestrated`:
    the run's `orchestration`, when the caller has it already (else taken from the run)."""
    start, end = run_start_instant(run), run_end_instant(run)
    engine = _facet(run.run_facets, "processing_engine")
    legacy = _facet(run.run_facets, "spark_version")
    application = _facet(run.run_facets, "spark_applicationDetails")
    summary: JSON = {
        "startTime": iso_time(start),
        "endTime": iso_time(end),
        "durationMs": round((end - start) * 1000) if start is not None and end is not None and end >= start else None,
        "producer": run.producer,
        "openlineageVersion": _text(engine.get("openlineageAdapterVersion"))
        or _text(legacy.get("openlineage-spark-version"))
        or _producer_version(run.producer),
        "sparkVersion": (_text(engine.get("version")) if _text(engine.get("name")).lower() in ("", "spark") else "")
        or _text(legacy.get("spark-version")),
        "user": ctx.user or "",
        "applicationId": _text(application.get("applicationId")),
        **{name: ctx.env_text(key) or "" for key, name in ENVIRONMENT_KEYS},
        "rowsWritten": _total(run, "rowCount"),
        "bytesWritten": _total(run, "size"),
        "errorMessage": _text(_facet(run.run_facets, "errorMessage").get("message"))[:MAX_ERROR_CHARS],
        "dataQuality": _data_quality(run),
        **_orchestration(run, orchestrated),
    }
    return {key: value for key, value in summary.items() if value not in (None, "", [])}


def _orchestration(run: RunSnapshot, found: Orchestration | None) -> JSON:
    """The parent and root runs as sent, and `runBy` (`{namespace}/{name}` of the orchestrator's job), when known."""
    if found is None:
        found = orchestration(run.job_name, run.run_facets)
    summary: JSON = {}
    parent, root = found.parent, found.root
    if parent is not None:
        summary.update(parentJobNamespace=parent.namespace, parentJobName=parent.name, parentRunId=parent.run_id)
    if root is not None:
        summary.update(rootJobNamespace=root.namespace, rootJobName=root.name, rootRunId=root.run_id)
    if found.run_by is not None:
        summary["runBy"] = found.run_by.job
        summary["runByRunId"] = found.run_by.run_id
    return summary


def process_run_attributes(summary: Mapping[str, Any]) -> JSON:
    """The system attributes of a process written from a run with this summary (every one, empty when unknown)."""
    attributes: JSON = dict(_NO_RUN_TEXT)  # every text attribute, in order; then those the summary knows
    for key in _TEXT_ATTRIBUTE_OF.keys() & summary.keys():
        attributes[_TEXT_ATTRIBUTE_OF[key]] = str(summary[key] or "")
    attributes.update({name: summary.get(key) for name, key in NUMBER_ATTRIBUTES})
    attributes.update({"runCount": None, "firstRunTime": ""})
    return attributes


def _facet(facets: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = facets.get(name)
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _producer_version(producer: str) -> str:
    found = _PRODUCER_VERSION.search(producer or "")
    return found.group(1) if found else ""


def _number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _total(run: RunSnapshot, field: str) -> int | None:
    """The sum of `outputStatistics.<field>` over the outputs that report it; None when none does."""
    values = [_number(_facet(d.io_facets, "outputStatistics").get(field)) for d in run.outputs]
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _data_quality(run: RunSnapshot) -> list[JSON]:
    """The inputs' `dataQualityMetrics` (the input facet, else the dataset facet), bounded: dataset totals and the
    first columns' metrics."""
    found = []
    for dataset in run.inputs:
        metrics = _facet(dataset.io_facets, "dataQualityMetrics") or _facet(dataset.facets, "dataQualityMetrics")
        if not metrics:
            continue
        entry: JSON = {"namespace": dataset.namespace, "name": dataset.name}
        for key in ("rowCount", "bytes", "fileCount"):
            if _number(metrics.get(key)) is not None:
                entry[key] = metrics[key]
        columns = metrics.get("columnMetrics")
        if isinstance(columns, dict) and columns:
            entry["columnMetrics"] = {
                name: {k: v for k, v in values.items() if isinstance(v, (int, float, str))}
                for name, values in sorted(columns.items())[:MAX_QUALITY_COLUMNS]
                if isinstance(values, dict)
            }
        found.append(entry)
        if len(found) == MAX_QUALITY_DATASETS:
            break
    return found
