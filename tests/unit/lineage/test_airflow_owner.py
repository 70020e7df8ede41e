"""Issue 35: an Airflow task's run is an `airflow_process` of its task (`airflow_task`) in its DAG (`airflow_dag`),
named as the Airflow OpenLineage provider names them, not a Spark application's process.

The events are shaped as apache-airflow-providers-openlineage sends a task's COMPLETE: the job
`{dag_id}.{task_id}` in the provider's namespace (plugins/adapter.py `complete_task`: `job_name`, from
utils `get_job_name(task)` = f"{dag_id}.{task_id}"), the job facet
`jobType: {jobType: TASK, integration: AIRFLOW, processingType: BATCH}` (adapter.py `_JOB_TYPE_TASK`), the DAG run as
parent (adapter.py `_build_run`: `parent_job_name=dag_id`), producer
`https://github.com/apache/airflow/tree/providers-openlineage/{version}` (adapter.py `_PRODUCER`); the datasets of a
SQLExecuteQueryOperator on Postgres (`postgres://{host}:{port}`, `{database}.{schema}.{table}`: the naming spec)."""
from __future__ import annotations

from olparser.lineage import PROCESS_TYPES, LineageOptions, build_lineage
from olparser.naming import MappingEngine
from olparser.runs.merge import merge_event
from tests.rules import MAPPINGS_PATH

ENGINE = MappingEngine.from_path(MAPPINGS_PATH)
PRODUCER = "https://github.com/apache/airflow/tree/providers-openlineage/2.7.3"
TASK_FACET = {"_producer": PRODUCER, "processingType": "BATCH", "integration": "AIRFLOW", "jobType": "TASK",
              "_schemaURL": "https://openlineage.io/spec/facets/2-0-3/JobTypeJobFacet.json#/$defs/JobTypeJobFacet"}


def _task_run(task_id: str = "load.orders_daily", job_type: dict | None = None):
    event = {"eventType": "COMPLETE", "eventTime": "2026-03-02T06:10:00.000Z", "producer": PRODUCER,
             "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
             "run": {"runId": "01908223-0782-79b8-9495-b1c38aaee840", "facets": {"parent": {
                 "_producer": PRODUCER,
                 "_schemaURL": "https://openlineage.io/spec/facets/1-1-0/ParentRunFacet.json#/$defs/ParentRunFacet",
                 "run": {"runId": "01908223-0782-79b8-9495-b1c38aaee839"},
                 "job": {"namespace": "airflow-prod", "name": "sales_daily"}}}},
             "job": {"namespace": "airflow-prod", "name": f"sales_daily.{task_id}",
                     "facets": {"jobType": job_type if job_type is not None else TASK_FACET}},
             "inputs": [{"namespace": "postgres://pg.contoso.com:5432", "name": "sales.public.orders"}],
             "outputs": [{"namespace": "postgres://pg.contoso.com:5432", "name": "sales.public.orders_daily"}]}
    return merge_event(None, event)


def _by_type(plan):
    found: dict[str, list[dict]] = {}
    for body in plan.entities:
        found.setdefault(body["typeName"], []).append(body)
    return found


def test_an_airflow_task_run_is_a_process_of_its_task_in_its_dag():
    plan = build_lineage(_task_run(), ENGINE, LineageOptions())
    found = _by_type(plan)
    dag, task = found["airflow_dag"][0], found["airflow_task"][0]
    (process,) = found["airflow_process"]

    assert "airflow_process" in PROCESS_TYPES and "spark_process" not in found and "spark_application" not in found
    assert (dag["attributes"]["qualifiedName"], dag["attributes"]["name"], dag["attributes"]["dagId"]) == (
        "airflow://airflow-prod/sales_daily", "sales_daily", "sales_daily")
    assert (task["attributes"]["qualifiedName"], task["attributes"]["taskId"]) == (
        "airflow://airflow-prod/sales_daily/tasks/load.orders_daily", "load.orders_daily")  # a task group's task
    assert task["relationshipAttributes"]["dag"]["uniqueAttributes"]["qualifiedName"] == \
        "airflow://airflow-prod/sales_daily"
    output = process["attributes"]["outputs"][0]["uniqueAttributes"]["qualifiedName"]
    assert process["attributes"]["qualifiedName"] == \
        f"airflow://airflow-prod/sales_daily/tasks/load.orders_daily/processes/load.orders_daily/{output}"
    assert (process["attributes"]["name"], process["attributes"]["openlineageJob"]) == (
        "load.orders_daily", "airflow-prod/sales_daily.load.orders_daily")
    task_ref = process["relationshipAttributes"]["task"]
    assert (set(process["relationshipAttributes"]), task_ref["typeName"], task_ref["guid"]) == (
        {"task"}, "airflow_task", task["guid"])


def test_only_the_airflow_task_facet_makes_an_airflow_process():
    spark_job = {**TASK_FACET, "integration": "SPARK", "jobType": "SQL_JOB"}  # openlineage-spark's jobType
    found = _by_type(build_lineage(_task_run(job_type=spark_job), ENGINE, LineageOptions()))
    assert sorted(t for t in found if t.startswith(("airflow", "spark_"))) == ["spark_application", "spark_process"]
