"""Databricks notebook runs as openlineage-spark emits them, for tests that need runs of their own.

One SQL execution of a notebook cell is one run: START (datasets, no environment), RUNNING (the
`environment-properties` facet: notebook path, mount points, user), COMPLETE (datasets with schema and column
lineage, no environment). The job namespace follows the reference connector's convention
(`adb-<workspace id>.<shard>#<cluster id>`), so the workspace host is known even before the environment facet
arrives — and a COMPLETE processed before its RUNNING would land under the generic `databricks_shell` application.
A run without a Spark job (DDL such as CREATE TABLE) has no RUNNING, hence no environment facet at all.
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
MOUNTS = (("/mnt/raw", f"abfss://raw@{LAKE_ACCOUNT}/"), ("/mnt/curated", f"abfss://curated@{LAKE_ACCOUNT}/"),
          ("/mnt/curated/gold", f"abfss://gold@{LAKE_ACCOUNT}/"))
PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/spark"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
T0 = datetime(2026, 3, 2, 8, 0, 0, tzinfo=timezone.utc)


@dataclass(frozen=True)
class Dataset:
    namespace: str
    name: str
    columns: tuple[str, ...] = ("id", "amount")


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
    mounts: tuple[tuple[str, str], ...] = MOUNTS
    running: bool = True  # False: no Spark job, so no RUNNING and no environment facet
    user: str = "etl@contoso.com"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def job_name(self) -> str:
        return f"databricks_shell.{self.statement}"


def run_id(number: int) -> str:
    """A stable UUID for the n-th generated run."""
    return str(uuid.UUID(int=0x0190F000_0000_7000_8000_000000000000 + number))


def _time(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _schema(columns: tuple[str, ...]) -> dict[str, Any]:
    return {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
            "fields": [{"name": c, "type": "string" if c != "amount" else "decimal(10,2)"} for c in columns]}


def _column_lineage(run: NotebookRun) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for edge in run.column_lineage:
        source = run.inputs[edge.input]
        fields.setdefault(edge.output, {"inputFields": []})["inputFields"].append({
            "namespace": source.namespace, "name": source.name, "field": edge.column,
            "transformations": [{"type": edge.type, "subtype": edge.subtype, "description": "", "masking": False}]})
    return {"_producer": PRODUCER,
            "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json",
            "fields": fields}


def _environment(run: NotebookRun) -> dict[str, Any]:
    return {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunFacet",
            "environment-properties": {
                "spark.databricks.clusterUsageTags.clusterOwnerOrgId": WORKSPACE_ID,
                "spark.databricks.clusterUsageTags.clusterName": "etl-cluster",
                "spark.databricks.notebook.path": run.notebook,
                "mountPoints": [{"mountPoint": m, "source": s} for m, s in run.mounts],
                "user": run.user}}


def events(run: NotebookRun) -> list[dict[str, Any]]:
    """The run's events in emission order: START, RUNNING (if it has a Spark job), COMPLETE."""
    def event(event_type: str, offset: float, *, environment: bool, complete: bool) -> dict[str, Any]:
        output: dict[str, Any] = {"namespace": run.output.namespace, "name": run.output.name,
                                  "facets": {"schema": _schema(run.output.columns)}}
        if complete and run.column_lineage:
            output["facets"]["columnLineage"] = _column_lineage(run)
        facets: dict[str, Any] = {"parent": {
            "_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/ParentRunFacet.json",
            "run": {"runId": run_id(0)}, "job": {"namespace": JOB_NAMESPACE, "name": "databricks_shell"}}}
        if environment:
            facets["environment-properties"] = _environment(run)
        body = {"eventType": event_type, "eventTime": _time(run.started + timedelta(seconds=offset)),
                "producer": PRODUCER, "schemaURL": SCHEMA_URL,
                "run": {"runId": run.run_id, "facets": facets},
                "job": {"namespace": JOB_NAMESPACE, "name": run.job_name, "facets": {}},
                "inputs": [{"namespace": d.namespace, "name": d.name, "facets": {"schema": _schema(d.columns)}}
                           for d in run.inputs],
                "outputs": [output]}
        body.update(run.extra)
        return body

    emitted = [event("START", 0, environment=False, complete=False)]
    if run.running:
        emitted.append(event("RUNNING", 1, environment=True, complete=False))
    emitted.append(event("COMPLETE", 2, environment=False, complete=True))
    return emitted


RAW_ORDERS = Dataset("dbfs", "/mnt/raw/orders")
RAW_CUSTOMERS = Dataset("dbfs", "/mnt/raw/customers", ("id", "name"))
KAFKA_PAYMENTS = Dataset("kafka://broker.contoso.com:9092", "payments", ("id", "amount"))
CURATED_ORDERS = Dataset("dbfs", "/mnt/curated/orders", ("id", "amount", "name"))
GOLD_REVENUE = Dataset("dbfs", "/mnt/curated/gold/revenue", ("amount",))


def orders_run(number: int, started: datetime = T0, *, inputs: tuple[Dataset, ...] = (RAW_ORDERS, RAW_CUSTOMERS),
               statement: str = "execute_insert_into_hadoop_fs_relation_command.orders",
               running: bool = True) -> NotebookRun:
    """raw orders (+ customers) → curated orders, with column lineage from whichever inputs it reads."""
    edges = []
    for index, dataset in enumerate(inputs):
        for column in dataset.columns:
            if column in CURATED_ORDERS.columns:
                edges.append(ColumnEdge(column, index, column))
    return NotebookRun(run_id=run_id(number), started=started, statement=statement, inputs=inputs,
                       output=CURATED_ORDERS, column_lineage=tuple(edges), running=running)
