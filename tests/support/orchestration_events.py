"""Events of orchestrated runs: Airflow tasks and the Spark runs whose parent facet names them."""
from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from tests.support import databricks_runs as dr
from tests.support.airflow_identity import APP, DAG, TASK, parent_facet
from tools.samples.databricks import event_time

APP_RUN = APP._replace(namespace=dr.JOB_NAMESPACE, run_id=dr.run_id(0))  # the builder's application run


JOB_ENV = {"spark.databricks.job.id": "812", "spark.databricks.job.runId": "5001", "spark.databricks.job.type": "notebook"}


def orchestrated_events(number: int = 1) -> list[dict]:
    sql_job = replace(dr.orders_run(number), environment_extra=JOB_ENV, run_facets=parent_facet(APP_RUN, DAG),
                      job_type=True)
    application = {  # SparkApplicationExecutionContext's COMPLETE, here with an output (some producers send them)
        "eventType": "COMPLETE", "eventTime": event_time(dr.T0 + timedelta(seconds=5)), "producer": dr.PRODUCER,
        "schemaURL": dr.SCHEMA_URL, "run": {"runId": APP_RUN.run_id, "facets": parent_facet(TASK, DAG)},
        "job": {"namespace": dr.JOB_NAMESPACE, "name": "databricks_shell",
                "facets": {"jobType": {"processingType": "BATCH", "integration": "SPARK", "jobType": "APPLICATION"}}},
        "inputs": [], "outputs": [{"namespace": "dbfs", "name": "/mnt/curated/app_log"}]}
    return [*dr.events(sql_job), application]


# The Airflow task that triggered the Databricks job: apache-airflow-providers-openlineage's START and COMPLETE
# (plugins/adapter.py: job `{dag_id}.{task_id}`, `_JOB_TYPE_TASK` {TASK, AIRFLOW, BATCH}, the DAG run as parent and
# root; a DatabricksRunNowOperator's task reports no datasets). Its run writes the task and its DAG, no process.
AIRFLOW_PRODUCER = "https://github.com/apache/airflow/tree/providers-openlineage/2.7.3"


def airflow_task_events() -> list[dict]:
    dag = {"run": {"runId": DAG.run_id}, "job": {"namespace": DAG.namespace, "name": DAG.name}}
    return [{"eventType": kind, "eventTime": event_time(dr.T0 + timedelta(seconds=seconds)),
             "producer": AIRFLOW_PRODUCER, "schemaURL": dr.SCHEMA_URL,
             "run": {"runId": TASK.run_id, "facets": {"parent": {**dag, "root": dag}}},
             "job": {"namespace": TASK.namespace, "name": TASK.name, "facets": {"jobType": {
                 "processingType": "BATCH", "integration": "AIRFLOW", "jobType": "TASK"}}},
             "inputs": [], "outputs": []} for kind, seconds in (("START", -60), ("COMPLETE", 600))]


def dr_env() -> dict[str, str]:
    """The settings a serve of these runs gets: a Databricks run is written without waiting for its environment."""
    return {"DATABRICKS_ENVIRONMENT_WAIT_SECONDS": "0"}
