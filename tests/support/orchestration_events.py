"""Events of orchestrated runs: Airflow tasks and the Spark runs whose parent facet names them."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from olparser.runs.merge import merge_event
from tests.support import databricks_runs as dr
from tests.support.airflow_identity import APP, DAG, TASK, parent_facet
from tools.samples.databricks import event_time

APP_RUN = APP._replace(namespace=dr.JOB_NAMESPACE, run_id=dr.run_id(0))  # the builder's application run


JOB_ENV = {
    "spark.databricks.job.id": "812",
    "spark.databricks.job.runId": "5001",
    "spark.databricks.job.type": "notebook",
}


TASK_QN = f"databricks://{dr.HOST}/jobs/812/tasks/Repos/etl/orders"  # the SQL job's process (its owner's name)


def orchestrated_events(number: int = 1) -> list[dict]:
    return [*sql_job_events(number), application_events()[1]]


def sql_job_events(number: int = 1) -> list[dict]:
    """A SQL job's events (SparkSQLExecutionContext.buildApplicationParentFacet: parent the application run, root
    the DAG that the provider's rootParentJob* settings name)."""
    return dr.events(
        replace(dr.orders_run(number), environment_extra=JOB_ENV, run_facets=parent_facet(APP_RUN, DAG), job_type=True)
    )


def application_events() -> list[dict]:
    """SparkApplicationExecutionContext's START and COMPLETE: parent the Airflow task, root the DAG (its
    buildApplicationParentFacet, from the provider's parentJob* and rootParentJob* settings); the COMPLETE here with
    an output (some producers send them)."""
    return [
        {
            "eventType": kind,
            "eventTime": event_time(dr.T0 + timedelta(seconds=seconds)),
            "producer": dr.PRODUCER,
            "schemaURL": dr.SCHEMA_URL,
            "run": {"runId": APP_RUN.run_id, "facets": parent_facet(TASK, DAG)},
            "job": {
                "namespace": dr.JOB_NAMESPACE,
                "name": "databricks_shell",
                "facets": {"jobType": {"processingType": "BATCH", "integration": "SPARK", "jobType": "APPLICATION"}},
            },
            "inputs": [],
            "outputs": outputs,
        }
        for kind, seconds, outputs in (
            ("START", -5, []),
            ("COMPLETE", 5, [{"namespace": "dbfs", "name": "/mnt/curated/app_log"}]),
        )
    ]


# The Airflow task that triggered the Databricks job: apache-airflow-providers-openlineage's START and COMPLETE
# (plugins/adapter.py: job `{dag_id}.{task_id}`, `_JOB_TYPE_TASK` {TASK, AIRFLOW, BATCH}, the DAG run as parent and
# root; a DatabricksRunNowOperator's task reports no datasets). Its run writes the task and its DAG, no process.
AIRFLOW_PRODUCER = "https://github.com/apache/airflow/tree/providers-openlineage/2.7.3"


def airflow_task_events() -> list[dict]:
    dag = {"run": {"runId": DAG.run_id}, "job": {"namespace": DAG.namespace, "name": DAG.name}}
    return [
        {
            "eventType": kind,
            "eventTime": event_time(dr.T0 + timedelta(seconds=seconds)),
            "producer": AIRFLOW_PRODUCER,
            "schemaURL": dr.SCHEMA_URL,
            "run": {"runId": TASK.run_id, "facets": {"parent": {**dag, "root": dag}}},
            "job": {
                "namespace": TASK.namespace,
                "name": TASK.name,
                "facets": {"jobType": {"processingType": "BATCH", "integration": "AIRFLOW", "jobType": "TASK"}},
            },
            "inputs": [],
            "outputs": [],
        }
        for kind, seconds in (("START", -60), ("COMPLETE", 600))
    ]


def dr_env() -> dict[str, str]:
    """The settings a serve of these runs gets: a Databricks run is written without waiting for its environment."""
    return {"DATABRICKS_ENVIRONMENT_WAIT_SECONDS": "0"}


# One COMPLETE each of an application run and of its SQL job, as merged runs (tests of olparser/lineage/inherited.py)
APPLICATION_TYPE = {"processingType": "BATCH", "integration": "SPARK", "jobType": "APPLICATION"}
SQL_JOB_TYPE = {"processingType": "BATCH", "integration": "SPARK", "jobType": "SQL_JOB"}
SQL_RUN_ID = "0190f000-0000-7000-8000-00000000d000"


def _event(run_id: str, job_name: str, facets: dict, job_type: dict, outputs: list) -> dict:
    return {
        "eventType": "COMPLETE",
        "eventTime": "2026-03-02T06:12:00.000Z",
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.40.1/integration/spark",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run_id, "facets": facets},
        "job": {"namespace": APP.namespace, "name": job_name, "facets": {"jobType": job_type}},
        "inputs": [],
        "outputs": outputs,
    }


def application_run(facets: dict | None = None):
    return merge_event(
        None, _event(APP.run_id, APP.name, parent_facet(TASK, DAG) if facets is None else facets, APPLICATION_TYPE, [])
    )


def sql_job_run(facets: dict | None = None, outputs: list | None = None):
    out = [{"namespace": "abfss://curated@contosolake.dfs.core.windows.net", "name": "/orders"}]
    return merge_event(
        None,
        _event(
            SQL_RUN_ID,
            "databricks_shell.execute_insert_into_hadoop_fs_relation_command",
            parent_facet(APP, DAG) if facets is None else facets,
            SQL_JOB_TYPE,
            out if outputs is None else outputs,
        ),
    )
