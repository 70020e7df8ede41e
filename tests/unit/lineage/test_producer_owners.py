"""Issue 35: Airflow, dbt and Flink runs are processes of owner types of their own, named as their producers name
them, not a Spark application's processes. An Airflow task's run is an `airflow_process` of its task
(`airflow_task`) in its DAG (`airflow_dag`); a dbt model's a `dbt_process` of the model (`dbt_model`) in its project
(`dbt_project`); a Flink job's a `flink_process` of the job (`flink_job`).

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
from tests.support.producer_runs import TASK_FACET, _dbt_model_run, _task_run
from tests.support.rules import MAPPINGS_PATH

ENGINE = MappingEngine.from_path(MAPPINGS_PATH)


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
        "airflow://airflow-prod/sales_daily",
        "sales_daily",
        "sales_daily",
    )
    assert (task["attributes"]["qualifiedName"], task["attributes"]["taskId"]) == (
        "airflow://airflow-prod/sales_daily/tasks/load.orders_daily",
        "load.orders_daily",
    )  # a task group's task
    assert (
        task["relationshipAttributes"]["dag"]["uniqueAttributes"]["qualifiedName"]
        == "airflow://airflow-prod/sales_daily"
    )
    output = process["attributes"]["outputs"][0]["uniqueAttributes"]["qualifiedName"]
    assert (
        process["attributes"]["qualifiedName"]
        == f"airflow://airflow-prod/sales_daily/tasks/load.orders_daily/processes/load.orders_daily/{output}"
    )
    assert (process["attributes"]["name"], process["attributes"]["openlineageJob"]) == (
        "load.orders_daily",
        "airflow-prod/sales_daily.load.orders_daily",
    )
    task_ref = process["relationshipAttributes"]["task"]
    assert (set(process["relationshipAttributes"]), task_ref["typeName"], task_ref["guid"]) == (
        {"task"},
        "airflow_task",
        task["guid"],
    )


def test_only_the_airflow_task_facet_makes_an_airflow_process():
    spark_job = {**TASK_FACET, "integration": "SPARK", "jobType": "SQL_JOB"}  # openlineage-spark's jobType
    found = _by_type(build_lineage(_task_run(job_type=spark_job), ENGINE, LineageOptions()))
    assert sorted(t for t in found if t.startswith(("airflow", "spark_"))) == ["spark_application", "spark_process"]


def test_a_dbt_model_run_is_a_process_of_its_model_in_its_project():
    found = _by_type(build_lineage(_dbt_model_run(), ENGINE, LineageOptions()))
    project, model = found["dbt_project"][0], found["dbt_model"][0]
    (process,) = found["dbt_process"]

    assert "dbt_process" in PROCESS_TYPES and "spark_process" not in found
    assert (project["attributes"]["qualifiedName"], project["attributes"]["projectName"]) == (
        "dbt://dbt/jaffle_shop",
        "jaffle_shop",
    )
    assert (model["attributes"]["qualifiedName"], model["attributes"]["name"], model["attributes"]["uniqueId"]) == (
        "dbt://dbt/jaffle_shop/model.jaffle_shop.customers",
        "customers",
        "model.jaffle_shop.customers",
    )
    assert model["relationshipAttributes"]["project"]["guid"] == project["guid"]
    output = process["attributes"]["outputs"][0]["uniqueAttributes"]["qualifiedName"]
    assert (
        process["attributes"]["qualifiedName"]
        == f"dbt://dbt/jaffle_shop/model.jaffle_shop.customers/processes/model.jaffle_shop.customers/{output}"
    )
    assert (set(process["relationshipAttributes"]), process["relationshipAttributes"]["model"]["guid"]) == (
        {"model"},
        model["guid"],
    )


# openlineage-flink's job facet (as Marquez's Flink fixtures carry it: `jobType: {processingType: STREAMING,
# integration: FLINK, jobType: JOB}`), the job named after the Flink job, Kafka topics as the naming spec names them
FLINK_PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.33.0/integration/flink"


def test_a_flink_job_run_is_a_process_of_its_job():
    run = merge_event(
        None,
        {
            "eventType": "RUNNING",
            "eventTime": "2025-05-20T08:30:00.000Z",
            "producer": FLINK_PRODUCER,
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": "0196eccd-8aa4-7274-9116-824575596ac0", "facets": {}},
            "job": {
                "namespace": "flink-jobs",
                "name": "orders_enrichment",
                "facets": {"jobType": {"processingType": "STREAMING", "integration": "FLINK", "jobType": "JOB"}},
            },
            "inputs": [{"namespace": "kafka://broker.contoso.com:9092", "name": "orders"}],
            "outputs": [{"namespace": "kafka://broker.contoso.com:9092", "name": "orders_enriched"}],
        },
    )
    found = _by_type(build_lineage(run, ENGINE, LineageOptions()))
    (job,) = found["flink_job"]
    (process,) = found["flink_process"]

    assert "flink_process" in PROCESS_TYPES and "spark_process" not in found
    assert (job["attributes"]["qualifiedName"], job["attributes"]["jobName"]) == (
        "flink://flink-jobs/orders_enrichment",
        "orders_enrichment",
    )
    output = process["attributes"]["outputs"][0]["uniqueAttributes"]["qualifiedName"]
    assert (
        process["attributes"]["qualifiedName"]
        == f"flink://flink-jobs/orders_enrichment/processes/orders_enrichment/{output}"
    )
    assert process["relationshipAttributes"]["job"]["guid"] == job["guid"]


def test_the_dbt_command_run_is_no_dbt_model():
    """The dbt command's own run (`jobType: JOB`) is the parent of the nodes' runs: not a model."""
    found = _by_type(build_lineage(_dbt_model_run(job_type="JOB"), ENGINE, LineageOptions()))
    assert "dbt_model" not in found and "dbt_process" not in found


# --- issue 43: a producer the connector has no model of ---------------------------------------------------------------
SPARK_PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.30.0/integration/spark"


def _plain_run(producer: str, job_facets: dict | None = None, run_facets: dict | None = None):
    """An Airflow task's run from a provider that sends no jobType facet (or any client): job `{dag}.{task}`."""
    return merge_event(
        None,
        {
            "eventType": "COMPLETE",
            "eventTime": "2026-05-01T10:00:00Z",
            "run": {"runId": "0195f0c2-1111-7000-8000-0000000000a1", "facets": run_facets or {}},
            "job": {"namespace": "airflow-prod", "name": "sales_daily.load_orders", "facets": job_facets or {}},
            "inputs": [{"namespace": "postgres://db.example.com:5432", "name": "shop.public.orders"}],
            "outputs": [{"namespace": "abfss://silver@lakeacct.dfs.core.windows.net", "name": "/orders"}],
            "producer": producer,
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        },
    )


def test_a_producer_with_no_model_gets_the_generic_owner_named_by_the_whole_job_name():
    """Before: `spark_application` `spark://airflow-prod/sales_daily` and a `spark_process` named `load_orders` (the
    job name split at its first dot, as openlineage-spark's `{application}.{action}` is)."""
    plan = build_lineage(
        _plain_run("https://github.com/apache/airflow/tree/providers-openlineage/1.8.0"), ENGINE, LineageOptions()
    )
    found = _by_type(plan)
    assert sorted(found) == ["openlineage_job", "openlineage_process"]  # no Spark application, no spark_process
    (job,), (process,) = found["openlineage_job"], found["openlineage_process"]
    assert job["attributes"] == {
        "qualifiedName": "openlineage://airflow-prod/sales_daily.load_orders",
        "name": "sales_daily.load_orders",
        "jobNamespace": "airflow-prod",
        "jobName": "sales_daily.load_orders",
        "producer": "https://github.com/apache/airflow/tree/providers-openlineage/1.8.0",
    }
    assert (process["attributes"]["qualifiedName"], process["attributes"]["name"]) == (
        "openlineage://airflow-prod/sales_daily.load_orders/processes/sales_daily.load_orders/"
        "https://lakeacct.dfs.core.windows.net/silver/orders",
        "sales_daily.load_orders",
    )
    assert process["relationshipAttributes"] == {
        "job": {
            "guid": job["guid"],
            "typeName": "openlineage_job",
            "uniqueAttributes": {"qualifiedName": job["attributes"]["qualifiedName"]},
            "relationshipType": "openlineage_job_processes",
        }
    }
    assert "openlineage_process" in PROCESS_TYPES


def test_spark_runs_keep_the_spark_application_by_the_producer_or_by_spark_facets():
    for run in (
        _plain_run(SPARK_PRODUCER),
        _plain_run("p", run_facets={"spark_properties": {"properties": {"spark.app.name": "sales_daily"}}}),
        _plain_run(
            "p", job_facets={"jobType": {"integration": "SPARK", "jobType": "SQL_JOB", "processingType": "BATCH"}}
        ),
    ):
        found = _by_type(build_lineage(run, ENGINE, LineageOptions()))
        assert sorted(found["spark_application"][0]["attributes"].items())[-1] == (
            "qualifiedName",
            "spark://airflow-prod/sales_daily",
        )
        assert [p["attributes"]["name"] for p in found["spark_process"]] == ["load_orders"]
        assert "openlineage_job" not in found
