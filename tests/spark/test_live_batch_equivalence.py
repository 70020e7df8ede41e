"""One set of run rules: the same runs through the live path (the runtime's pipeline, in process, one event at a
time in emission order) and through `spark backfill` give the same catalog — entities, attributes, process inputs
and outputs, columnMapping — including the per-run limit (MAX_DATASETS_PER_RUN), static lineage (a job declared
twice, a dataset), Databricks notebook runs in Purview's built-in model (with and without their environment facet,
one superseded by a newer run of the same cell, and one as the task of a job the accelerator wrote, written under
that task), a failed run, two sessions of one Fabric notebook (one process: the job identity is the live path's in
batch too), streaming micro-batches (one history entry per window in both), temporary datasets passed
between the tasks of one job (read before or after they are written: the events of a backfill come in any order) and
a run with two outputs whose column lineage names different inputs, an Airflow task with no datasets (its DAG and
task written) that ran a Databricks job (whose SQL job references the task its application run names, the application
coming after the SQL job: written again live, deferred in batch), and a dropped table and a renamed one (issue 35: what the connector created
for them deleted and moved, on the live path when the statement's run is written, in batch after every write, through
the same function), also when the older write's events reach the live path after the drop or the rename."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
import requests

from olparser.adapters.runtime import Runtime
from tests.e2e.lineage_helpers import Atlas, refs
from tests.spark.events import spark_run, write_json_lines
from tests.support import databricks_runs as dr
from tests.support import lifecycle_events as lc
from tests.support import temporary_runs as tr
from tests.support.catalog_compare import assert_same_catalog
from tests.support.orchestration_events import airflow_task_events, orchestrated_events
from tests.support.spark_jobs import catalog_view, job_for
from tools.samples.notebooks import FABRIC_NAMESPACE, FABRIC_NOTEBOOK_ID, T0, fabric_ctas_run, streaming_batches
from tools.spark.spark_job import run_spark

pytestmark = pytest.mark.spark

MAX_DATASETS = 500
WIDE_INPUTS = 600
PRODUCER = dr.PRODUCER


def _static(kind: str, namespace: str, name: str, time: str, **body: Any) -> dict[str, Any]:
    schema = "JobEvent" if kind == "job" else "DatasetEvent"
    return {
        "eventTime": time,
        "producer": PRODUCER,
        "schemaURL": f"https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/{schema}",
        kind: {"namespace": namespace, "name": name},
        **body,
    }


def _failed(number: int) -> list[dict[str, Any]]:
    """A Spark run that fails: START, FAIL (written only with LINEAGE_ON_FAILURE, which is off)."""
    start, complete = spark_run(number)
    return [start, {**complete, "eventType": "FAIL"}]


DROPPED, RENAMED = "/tmp/lifecycle/dropped_table", "/tmp/lifecycle/renamed_table"  # `file`: placeholders
LATE_DROPPED, LATE_RENAMED = "/tmp/lifecycle/late_dropped", "/tmp/lifecycle/late_renamed"  # older writes come last


def _lifecycle_job(event: dict[str, Any]) -> dict[str, Any]:
    return {**event, "job": {**event["job"], "namespace": "lifecycle"}}


def _lifecycle_runs() -> list[list[dict[str, Any]]]:
    """A table written then dropped, another written then renamed, in openlineage-spark's shapes
    (OpenLineage/OpenLineage@8f02abf integration/spark/shared/src/main/java/io/openlineage/spark/agent/lifecycle/
    plan/DropTableCommandVisitor.java:43, the dropped table as the only output with `lifecycleStateChange: DROP`;
    AlterTableRenameCommandVisitor.java:43-50, the new table with `RENAME` and `previousIdentifier` = its location
    with the old table name in place of the new one, in its namespace; helpers in tests/unit/pipeline/
    test_lifecycle.py)."""
    return [
        [_lifecycle_job(lc.write("lw1", lc.table("file", DROPPED)))],
        [_lifecycle_job(lc.drop("ld1", lc.table("file", DROPPED)))],
        [
            _lifecycle_job(
                lc.run_event(
                    "lw2",
                    "app.execute_insert_into_hadoop_fs_relation_command.r",
                    [lc.table(lc.LAKE, "raw/orders")],
                    [lc.table("file", RENAMED)],
                )
            )
        ],
        [
            _lifecycle_job(
                lc.run_event(
                    "ln1",
                    "app.execute_alter_table_rename_command",
                    [],
                    [lc.table("file", RENAMED + "_v2", "RENAME", previous=("file", RENAMED))],
                    at="2026-09-23T11:00:00Z",
                )
            )
        ],
        # the drop and the rename (11:00) come before the older writes (10:00) whose events were delayed: the
        # live path applies them again after those writes, as the batch applies them after every write
        [_lifecycle_job(lc.drop("ld2", lc.table("file", LATE_DROPPED)))],
        [
            _lifecycle_job(
                lc.run_event(
                    "lw3",
                    "app.execute_insert_into_hadoop_fs_relation_command.late_d",
                    [lc.table(lc.LAKE, "raw/orders")],
                    [lc.table("file", LATE_DROPPED)],
                )
            )
        ],
        [
            _lifecycle_job(
                lc.run_event(
                    "ln2",
                    "app.execute_alter_table_rename_command",
                    [],
                    [lc.table("file", LATE_RENAMED + "_v2", "RENAME", previous=("file", LATE_RENAMED))],
                    at="2026-09-23T11:00:00Z",
                )
            )
        ],
        [
            _lifecycle_job(
                lc.run_event(
                    "lw4",
                    "app.execute_insert_into_hadoop_fs_relation_command.late_r",
                    [lc.table(lc.LAKE, "raw/orders")],
                    [lc.table("file", LATE_RENAMED)],
                )
            )
        ],
    ]


WORKSPACE = f"databricks://{dr.HOST}"
ACCELERATORS_JOB = f"{WORKSPACE}/jobs/4242"
ACCELERATORS_TASK = f"{ACCELERATORS_JOB}/tasks/load_orders_task"


def _the_accelerators_job(atlas_url: str) -> None:
    """Job 4242 with the task that runs the orders notebook, as the C# accelerator wrote them (its task key from the
    Jobs API): a job run of that notebook is written under it, on both paths."""
    entities = [
        {"typeName": "databricks_workspace", "guid": "-1", "attributes": {"qualifiedName": WORKSPACE, "name": dr.HOST}},
        {
            "typeName": "databricks_job",
            "guid": "-2",
            "attributes": {"qualifiedName": ACCELERATORS_JOB, "name": "Orders daily", "jobId": 4242},
            "relationshipAttributes": {"workspace": {"guid": "-1", "relationshipType": "databricks_workspace_jobs"}},
        },
        {
            "typeName": "databricks_notebook_task",
            "guid": "-3",
            "attributes": {
                "qualifiedName": ACCELERATORS_TASK,
                "name": "load_orders_task",
                "jobId": 4242,
                "notebookPath": "/Repos/etl/orders",
            },
            "relationshipAttributes": {"job": {"guid": "-2", "relationshipType": "databricks_job_job_tasks"}},
        },
    ]
    requests.post(f"{atlas_url}/entity/bulk", json={"entities": entities}, timeout=10).raise_for_status()


def runs() -> list[list[dict[str, Any]]]:
    """Every run's events in emission order, oldest run first."""
    older = dr.orders_run(1, dr.T0)
    newer = dr.orders_run(2, dr.T0 + timedelta(hours=1), inputs=(dr.RAW_ORDERS, dr.KAFKA_PAYMENTS))
    ddl = dr.orders_run(
        3,
        dr.T0 + timedelta(hours=2),
        statement="create_table_command.orders_copy",
        inputs=(dr.RAW_ORDERS,),
        running=False,
    )
    job_run = replace(  # the orders notebook as a task of job 4242 (the accelerator's task: _the_accelerators_job)
        dr.orders_run(13, dr.T0 + timedelta(hours=3), statement="append_data.daily_orders", inputs=(dr.RAW_ORDERS,)),
        environment_extra={"spark.databricks.job.id": "4242", "spark.databricks.job.type": "notebook"},
    )
    lake = "abfss://raw@contosolake.dfs.core.windows.net"
    declared = [
        _static(
            "job",
            "adf",
            "copy_orders",
            "2026-03-02T07:00:00Z",
            inputs=[{"namespace": "kafka://b:9092", "name": "orders"}],
            outputs=[{"namespace": lake, "name": "orders"}],
        ),
        _static(
            "job",
            "adf",
            "copy_orders",
            "2026-03-02T07:30:00Z",
            inputs=[{"namespace": "kafka://b:9092", "name": "orders_v2"}],
            outputs=[{"namespace": lake, "name": "orders"}],
        ),
    ]
    dataset = [_static("dataset", "kafka://b:9092", "refunds", "2026-03-02T07:10:00Z")]
    # two sessions of one Fabric notebook (tools/samples/notebooks.py: DataHub's Fabric fixture's shape)
    fabric = [
        fabric_ctas_run(session, started=T0 + timedelta(hours=number))
        for number, session in enumerate(
            ("00000000-1111-4222-8333-444444444444", "9b2f6c1e-7d4a-4c3b-a5e8-0f1d2c3b4a59")
        )
    ]
    # six Structured Streaming micro-batches 20 minutes apart: two history windows of an hour (tools/samples)
    stream = streaming_batches(6, every_seconds=1200, started=T0.replace(minute=0, second=0))
    return [
        dr.events(older),
        dr.events(newer),
        dr.events(ddl),
        dr.events(job_run),
        spark_run(7, inputs=WIDE_INPUTS),
        spark_run(8),
        _failed(9),
        declared,
        dataset,
        *fabric,
        stream,
        tr.etl_chain(),
        tr.two_outputs(),
        # an Airflow task (no datasets: its DAG and task only) that ran a Databricks job (tests/e2e/
        # test_orchestration.py: the application run, no process, and a SQL job with the DAG run as root, which
        # references the task its application names)
        airflow_task_events(),
        orchestrated_events(11),
        *_lifecycle_runs(),
    ]


def test_the_live_path_and_spark_backfill_write_the_same_catalog(spark, catalog_factory, tmp_path):
    live_catalog, batch_catalog = catalog_factory(), catalog_factory()
    for catalog in (live_catalog, batch_catalog):
        _the_accelerators_job(catalog.atlas_url)
    events = [event for run in runs() for event in run]
    settings = replace(
        job_for(live_catalog, max_datasets_per_run=MAX_DATASETS).settings, databricks_environment_wait_seconds=0
    )  # one event at a time: nothing to hold a run for
    live = Runtime(settings)
    try:
        statuses = [live.pipeline().process(event).status for event in events]
    finally:
        live.close()
    # the ETL job's three runs and the two-output run are written (load and transform, whose outputs are temporary
    # datasets, with nothing in their plans; the backfill counts those as skipped); of the six micro-batches, the
    # first of each window is written and the four others plan what their window wrote: unchanged, no catalog write
    # (the eight lifecycle runs: four writes, two DROPs and two RENAMEs, all written)
    assert (statuses.count("written"), statuses.count("unchanged"), statuses.count("skipped")) == (28, 4, 1)

    report = run_spark(
        spark,
        [str(write_json_lines(tmp_path / "runs.jsonl", events))],
        job_for(batch_catalog, max_datasets_per_run=MAX_DATASETS),
    )

    batch, served = catalog_view(batch_catalog.atlas_url), catalog_view(live_catalog.atlas_url)
    assert_same_catalog(batch, served)
    # the Airflow task's run is planned (its DAG and task), the Spark application-level run skipped
    assert dict(report.tally.runs) == {"planned": 28, "skipped": 4}
    atlas = Atlas(batch_catalog.atlas_url)
    wide = [
        e
        for e in atlas.all_entities()
        if e["typeName"] == "spark_process" and e["attributes"]["qualifiedName"].endswith("/reports/out_7")
    ]
    assert len(refs(wide[0], "inputs")) == MAX_DATASETS
    copy = [
        e
        for e in atlas.all_entities()
        if e["typeName"] == "spark_process" and e["attributes"].get("name") == "copy_orders"
    ]
    assert [refs(e, "inputs") for e in copy] == [["kafka://b:9092/orders_v2"]]
    assert ("openlineage_dataset", "kafka://b:9092/orders") not in set(atlas.keys())
    assert json.dumps(sorted(atlas.keys())).count("kafka://b:9092/refunds") == 1
    processes = {
        refs(e, "outputs")[0]: sorted(refs(e, "inputs"))
        for e in atlas.all_entities()
        if e["typeName"] == "spark_process" and e["attributes"]["qualifiedName"].startswith("spark://etl/")
    }
    assert processes == {**tr.ETL_EDGES, **tr.TWO_OUTPUT_EDGES}
    assert not [
        key for key in atlas.keys() if "inmemory" in key[1] or ".Load task" in key[1] or ".Transform task" in key[1]
    ]
    # the job run, in Purview's built-in model, under the job's existing task that runs its notebook (both paths)
    for view in (atlas, Atlas(live_catalog.atlas_url)):
        (daily,) = [
            e
            for e in view.all_entities()
            if e["typeName"] == "databricks_process" and e["attributes"]["name"] == "append_data.daily_orders"
        ]
        assert daily["attributes"]["qualifiedName"].startswith(f"{ACCELERATORS_JOB}/tasks/Repos/etl/orders/processes/")
        assert refs(daily, "task") == [ACCELERATORS_TASK]
        assert ("databricks_notebook_task", f"{ACCELERATORS_JOB}/tasks/Repos/etl/orders") not in set(view.keys())
        assert view.entity("databricks_job", ACCELERATORS_JOB)["attributes"]["name"] == "Orders daily"
    # the superseded notebook run's own input stays, as the live path writes a superseded run's datasets
    assert ("azure_datalake_gen2_path", "https://contosolake.dfs.core.windows.net/raw/customers") in set(atlas.keys())
    notebook = f"spark://{FABRIC_NAMESPACE}/notebooks/{FABRIC_NOTEBOOK_ID}"
    fabric = [
        e
        for e in atlas.all_entities()
        if e["typeName"] == "spark_process"
        and e["attributes"]["qualifiedName"].startswith(f"spark://{FABRIC_NAMESPACE}/")
    ]
    assert [(refs(e, "application"), e["attributes"]["runCount"]) for e in fabric] == [([notebook], 2)]
    streamed = [
        e["attributes"]["runCount"]
        for e in atlas.all_entities()
        if e["typeName"] == "spark_process" and e["attributes"]["qualifiedName"].startswith("spark://streams/")
    ]
    assert streamed == [2]  # one history entry per window, not per micro-batch
    assert sorted(key for key in atlas.keys() if key[0].startswith("airflow_")) == [
        ("airflow_dag", "airflow://airflow/sales_daily"),
        ("airflow_task", "airflow://airflow/sales_daily/tasks/load_orders"),
    ]
    for view in (atlas, Atlas(live_catalog.atlas_url)):  # the SQL job inherits the task from its application run
        entities = view.all_entities()
        (task,) = [e for e in entities if e["typeName"] == "airflow_task"]
        assert [
            e["relationshipAttributes"]["orchestrator"]["guid"]
            for e in entities
            if e["typeName"] == "databricks_process" and e["relationshipAttributes"].get("orchestrator")
        ] == [task["guid"]]
    keys = set(atlas.keys())
    assert ("openlineage_dataset", f"file:{DROPPED}") not in keys  # dropped: the placeholder deleted
    assert ("openlineage_dataset", f"file:{RENAMED}") not in keys  # renamed: moved to the new name
    assert ("openlineage_dataset", f"file:{RENAMED}_v2") in keys
    lifecycle = {
        e["attributes"]["name"]: refs(e, "outputs")
        for e in atlas.all_entities()
        if e["typeName"] == "spark_process" and e["attributes"]["qualifiedName"].startswith("spark://lifecycle/")
    }
    # the writers stay (their history kept), no DDL process; the renamed table's writer points at the new name
    assert sorted(lifecycle) == [
        "execute_insert_into_hadoop_fs_relation_command.late_d",
        "execute_insert_into_hadoop_fs_relation_command.late_r",
        "execute_insert_into_hadoop_fs_relation_command.r",
        "execute_insert_into_hadoop_fs_relation_command.t",
    ]
    assert lifecycle["execute_insert_into_hadoop_fs_relation_command.r"] == [f"file:{RENAMED}_v2"]
    # the older writes processed after the drop and the rename: not re-created under the old names
    assert ("openlineage_dataset", f"file:{LATE_DROPPED}") not in keys
    assert ("openlineage_dataset", f"file:{LATE_RENAMED}") not in keys
    assert lifecycle["execute_insert_into_hadoop_fs_relation_command.late_r"] == [f"file:{LATE_RENAMED}_v2"]
