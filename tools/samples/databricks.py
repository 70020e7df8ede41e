"""Databricks notebook runs as openlineage-spark emits them: the one builder of Databricks runs for the tests and the
benchmarks (bench/ imports nothing from tests/, so it lives here).

One SQL execution of a notebook cell is one run: START (datasets, no environment), RUNNING (the
`environment-properties` facet: notebook path, mount points, user), COMPLETE (datasets with schema and column
lineage, no environment). The job namespace follows the reference connector's convention
(`adb-<workspace id>.<shard>#<cluster id>`), so the workspace host is known even before the environment facet
arrives — and a COMPLETE processed before its RUNNING would land under the generic `databricks_shell` application.
A run without a Spark job (DDL such as CREATE TABLE) has no RUNNING, hence no environment facet at all.

What varies between openlineage-spark versions and cluster set-ups is a field of `NotebookRun` or `Dataset`: which
events carry the environment (older versions and some set-ups send it on every event), extra environment
properties (job ids, `spark.databricks.workspaceUrl`), the `jobType`, `dataSource` and `symlinks` facets, the
parent run, the times of the three events.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

WORKSPACE_ID = "5544332211009988"
HOST = f"adb-{WORKSPACE_ID}.4.azuredatabricks.net"
JOB_NAMESPACE = f"adb-{WORKSPACE_ID}.4#0101-123456-abcdefgh"
LAKE_ACCOUNT = "contosolake.dfs.core.windows.net"
MOUNTS = (
    ("/mnt/raw", f"abfss://raw@{LAKE_ACCOUNT}/"),
    ("/mnt/curated", f"abfss://curated@{LAKE_ACCOUNT}/"),
    ("/mnt/curated/gold", f"abfss://gold@{LAKE_ACCOUNT}/"),
)
PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/spark"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
T0 = datetime(2026, 3, 2, 8, 0, 0, tzinfo=timezone.utc)
EVENT_TYPES = ("START", "RUNNING", "COMPLETE")


@dataclass(frozen=True)
class Dataset:
    """A dataset with its schema (`amount` a decimal, every other column a string); `data_source` adds the
    `dataSource` facet, `symlink` (namespace, name) a `symlinks` facet naming its table."""

    namespace: str
    name: str
    columns: tuple[str, ...] = ("id", "amount")
    data_source: bool = False
    symlink: tuple[str, str] | None = None


@dataclass(frozen=True)
class ColumnEdge:
    """Output column `output` depends on column `column` of input number `input` (DIRECT IDENTITY by default)."""

    output: str
    input: int
    column: str
    type: str = "DIRECT"
    subtype: str = "IDENTITY"


@dataclass(frozen=True)
class NotebookRun:
    run_id: str
    started: datetime
    statement: str  # the plan node and output, e.g. "execute_insert_into_hadoop_fs_relation_command.orders"
    inputs: tuple[Dataset, ...]
    output: Dataset
    notebook: str = "/Repos/etl/orders"
    column_lineage: tuple[ColumnEdge, ...] = ()
    mounts: tuple[tuple[str, str], ...] | None = MOUNTS  # None: no mountPoints property
    running: bool = True  # False: no Spark job, so no RUNNING and no environment facet
    user: str = "etl@contoso.com"
    extra: dict[str, Any] = field(default_factory=dict)  # merged into every event's body
    job_namespace: str = JOB_NAMESPACE
    workspace_id: str = WORKSPACE_ID
    cluster_name: str | None = "etl-cluster"
    environment_on: tuple[str, ...] = ("RUNNING",)  # the events that carry the environment-properties facet
    environment_extra: dict[str, Any] = field(default_factory=dict)  # more environment properties
    run_facets: dict[str, Any] = field(default_factory=dict)  # more run facets, on every event
    parent: bool = True  # the parent facet naming the notebook's `databricks_shell` application run
    job_type: bool = False  # the jobType job facet (BATCH, SPARK, SQL_JOB)
    offsets: tuple[float, float, float] = (0.0, 1.0, 2.0)  # seconds after `started` of START, RUNNING, COMPLETE

    @property
    def job_name(self) -> str:
        return f"databricks_shell.{self.statement}"


def run_id(number: int) -> str:
    """A stable UUID for the n-th generated run."""
    return str(uuid.UUID(int=0x0190F000_0000_7000_8000_000000000000 + number))


def event_time(moment: datetime) -> str:
    """An eventTime as openlineage-spark writes it: milliseconds, `Z`."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _schema(columns: tuple[str, ...]) -> dict[str, Any]:
    return {
        "_producer": PRODUCER,
        "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
        "fields": [{"name": c, "type": "string" if c != "amount" else "decimal(10,2)"} for c in columns],
    }


def _dataset(dataset: Dataset) -> dict[str, Any]:
    facets: dict[str, Any] = {}
    if dataset.data_source:
        facets["dataSource"] = {"_producer": PRODUCER, "name": dataset.namespace, "uri": dataset.namespace}
    facets["schema"] = _schema(dataset.columns)
    if dataset.symlink is not None:
        facets["symlinks"] = {
            "_producer": PRODUCER,
            "identifiers": [{"namespace": dataset.symlink[0], "name": dataset.symlink[1], "type": "TABLE"}],
        }
    return {"namespace": dataset.namespace, "name": dataset.name, "facets": facets}


def _column_lineage(run: NotebookRun) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for edge in run.column_lineage:
        source = run.inputs[edge.input]
        fields.setdefault(edge.output, {"inputFields": []})["inputFields"].append(
            {
                "namespace": source.namespace,
                "name": source.name,
                "field": edge.column,
                "transformations": [{"type": edge.type, "subtype": edge.subtype, "description": "", "masking": False}],
            }
        )
    return {
        "_producer": PRODUCER,
        "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json",
        "fields": fields,
    }


def _environment(run: NotebookRun) -> dict[str, Any]:
    properties: dict[str, Any] = {"spark.databricks.clusterUsageTags.clusterOwnerOrgId": run.workspace_id}
    if run.cluster_name is not None:
        properties["spark.databricks.clusterUsageTags.clusterName"] = run.cluster_name
    properties["spark.databricks.notebook.path"] = run.notebook
    if run.mounts is not None:
        properties["mountPoints"] = [{"mountPoint": m, "source": s} for m, s in run.mounts]
    properties["user"] = run.user
    properties.update(run.environment_extra)
    return {
        "_producer": PRODUCER,
        "_schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunFacet",
        "environment-properties": properties,
    }


def events(run: NotebookRun) -> list[dict[str, Any]]:
    """The run's events in emission order: START, RUNNING (if it has a Spark job), COMPLETE."""
    job_facets = (
        {"jobType": {"_producer": PRODUCER, "processingType": "BATCH", "integration": "SPARK", "jobType": "SQL_JOB"}}
        if run.job_type
        else {}
    )

    def event(event_type: str, offset: float) -> dict[str, Any]:
        output = _dataset(run.output)
        if event_type == "COMPLETE" and run.column_lineage:
            output["facets"]["columnLineage"] = _column_lineage(run)
        facets: dict[str, Any] = {}
        if run.parent:
            facets["parent"] = {
                "_producer": PRODUCER,
                "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/ParentRunFacet.json",
                "run": {"runId": run_id(0)},
                "job": {"namespace": run.job_namespace, "name": "databricks_shell"},
            }
        if event_type in run.environment_on:
            facets["environment-properties"] = _environment(run)
        facets.update(run.run_facets)
        body = {
            "eventType": event_type,
            "eventTime": event_time(run.started + timedelta(seconds=offset)),
            "producer": PRODUCER,
            "schemaURL": SCHEMA_URL,
            "run": {"runId": run.run_id, "facets": facets},
            "job": {"namespace": run.job_namespace, "name": run.job_name, "facets": dict(job_facets)},
            "inputs": [_dataset(d) for d in run.inputs],
            "outputs": [output],
        }
        body.update(run.extra)
        return body

    return [
        event(event_type, offset)
        for event_type, offset in zip(EVENT_TYPES, run.offsets, strict=True)
        if event_type != "RUNNING" or run.running
    ]
