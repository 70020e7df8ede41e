"""Issue 35: the orchestrator's own job as an entity. An Airflow task that only triggers other work reports no
datasets: its run writes no process but its DAG and task (`airflow_dag`, `airflow_task`), which a Spark process the
task ran references (`orchestrator`) when its ParentRunFacet names the task — by unique attributes computed from the
facet alone, so whichever run is processed first, both meet on one qualifiedName.

Inputs: the Airflow task's COMPLETE as apache-airflow-providers-openlineage sends it (tests/unit/lineage/
test_producer_owners.py says where each part comes from), here without datasets (a DatabricksRunNowOperator's task);
the Spark parent facets as openlineage-spark builds them from the provider's Spark properties
(providers/openlineage/utils/spark.py `_get_parent_job_information_as_spark_properties`: parentJobName
`{dag_id}.{task_id}`, rootParentJobName `{dag_id}`, both in the provider's namespace;
SparkApplicationExecutionContext.buildApplicationParentFacet: the application run's parent the task, root the DAG;
SparkSQLExecutionContext.buildApplicationParentFacet: a SQL job's parent the application, root the DAG)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from olparser.lineage import LineageOptions, build_lineage
from olparser.lineage.identity import orchestration
from olparser.lineage.owners import airflow_orchestrator
from olparser.naming import MappingEngine
from olparser.runs.merge import merge_event
from tests.support.airflow_identity import APP, DAG, TASK, parent_facet
from tests.support.producer_runs import TASK_FACET, _task_run
from tests.support.rules import MAPPINGS_PATH

ENGINE = MappingEngine.from_path(MAPPINGS_PATH)
TASK_QN = "airflow://airflow/sales_daily/tasks/load_orders"
DAG_QN = "airflow://airflow/sales_daily"


def _spark_run(facets: dict):
    # openlineage-spark's SQL job writing a Delta table on ADLS (the naming spec's abfss form)
    event = {
        "eventType": "COMPLETE",
        "eventTime": "2026-03-02T06:12:00.000Z",
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.40.1/integration/spark",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": "0190f000-0000-7000-8000-00000000d000", "facets": facets},
        "job": {"namespace": "default", "name": "etl_app.execute_insert_into_hadoop_fs_relation_command.orders"},
        "inputs": [],
        "outputs": [{"namespace": "abfss://curated@contosolake.dfs.core.windows.net", "name": "/orders"}],
    }
    return merge_event(None, event)


def _by_type(plan) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for body in plan.entities:
        found.setdefault(body["typeName"], []).append(body)
    return found


def test_an_airflow_task_run_without_datasets_writes_its_dag_and_task_and_no_process():
    run = _task_run("load_orders")
    run = replace(run, inputs=(), outputs=())
    plan = build_lineage(run, ENGINE, LineageOptions())
    assert [(e["typeName"], e["attributes"]["qualifiedName"]) for e in plan.entities] == [
        ("airflow_dag", "airflow://airflow-prod/sales_daily"),
        ("airflow_task", "airflow://airflow-prod/sales_daily/tasks/load_orders"),
    ]
    assert plan.process_names() == ()
    assert plan.entities[1]["relationshipAttributes"]["dag"]["guid"] == plan.entities[0]["guid"]


def test_only_an_airflow_task_writes_entities_without_datasets():
    spark_job = {**TASK_FACET, "integration": "SPARK", "jobType": "SQL_JOB"}  # openlineage-spark's jobType
    run = replace(_task_run("load_orders", job_type=spark_job), inputs=(), outputs=())
    assert build_lineage(run, ENGINE, LineageOptions()).entities == ()


def test_the_orchestrating_task_is_found_in_the_facet_alone():
    dag, task = airflow_orchestrator(orchestration("etl_app", parent_facet(TASK, DAG)))
    assert (dag["attributes"]["qualifiedName"], task["attributes"]["qualifiedName"], task["attributes"]["taskId"]) == (
        DAG_QN,
        TASK_QN,
        "load_orders",
    )
    # a SQL job: its parent is its application, its root the DAG -> the task is not in its facet
    assert airflow_orchestrator(orchestration("databricks_shell.x", parent_facet(APP, DAG))) is None
    # a parent that is not `{root}.{task}` in the root's namespace is not taken for a task
    assert airflow_orchestrator(orchestration("a", parent_facet(TASK, DAG._replace(namespace="other")))) is None
    assert airflow_orchestrator(orchestration("a", parent_facet(TASK, TASK))) is None
    assert airflow_orchestrator(orchestration("a", parent_facet(TASK))) is None
    assert airflow_orchestrator(orchestration("a", parent_facet(DAG._replace(name="sales_daily."), DAG))) is None


def test_a_spark_process_run_by_an_airflow_task_references_it_and_writes_the_same_dag_and_task():
    plan = build_lineage(_spark_run(parent_facet(TASK, DAG)), ENGINE, LineageOptions())
    found = _by_type(plan)
    (process,) = found["spark_process"]
    ref = process["relationshipAttributes"]["orchestrator"]
    (task,) = found["airflow_task"]
    assert (ref["typeName"], ref["uniqueAttributes"]["qualifiedName"], ref["guid"]) == (
        "airflow_task",
        TASK_QN,
        task["guid"],
    )
    # the same entities the task's own run writes (its namespace `airflow` here): one qualifiedName whatever the order
    own = build_lineage(
        replace(_task_run("load_orders"), job_namespace="airflow", inputs=(), outputs=()), ENGINE, LineageOptions()
    )
    strip = lambda e: {k: v for k, v in e.items() if k != "guid"}  # noqa: E731
    assert [strip(e) for e in own.entities] == [
        strip(found["airflow_dag"][0]),
        {
            **strip(task),
            "relationshipAttributes": {
                "dag": {**task["relationshipAttributes"]["dag"], "guid": own.entities[0]["guid"]}
            },
        },
    ]


def test_a_spark_process_without_an_airflow_task_parent_has_no_orchestrator():
    for facets in (parent_facet(APP, DAG), {}):
        found = _by_type(build_lineage(_spark_run(facets), ENGINE, LineageOptions()))
        (process,) = found["spark_process"]
        assert "orchestrator" not in process["relationshipAttributes"]
        assert not any(t.startswith("airflow") for t in found)


# Airflow's KEY_REGEX for dag_id and task_id (airflow/utils/helpers.py: `^[\w.-]+$`); a task group adds `group.`
_AIRFLOW_ID = st.text(alphabet=st.sampled_from("abcXYZ019_-."), min_size=1, max_size=12)


@settings(max_examples=200, deadline=None)
@given(dag_id=_AIRFLOW_ID, task_id=_AIRFLOW_ID, namespace=st.sampled_from(["airflow", "default", "prod.airflow"]))
def test_the_task_own_run_and_the_run_it_started_write_one_dag_and_one_task(dag_id, task_id, namespace):
    own = build_lineage(
        replace(
            _task_run(task_id),
            job_namespace=namespace,
            job_name=f"{dag_id}.{task_id}",
            run_facets={"parent": {"run": {"runId": DAG.run_id}, "job": {"namespace": namespace, "name": dag_id}}},
            inputs=(),
            outputs=(),
        ),
        ENGINE,
        LineageOptions(),
    )
    task, dag = (
        TASK._replace(namespace=namespace, name=f"{dag_id}.{task_id}"),
        DAG._replace(namespace=namespace, name=dag_id),
    )
    started = _by_type(build_lineage(_spark_run(parent_facet(task, dag)), ENGINE, LineageOptions()))

    def keys(bodies: list[dict]) -> list[tuple[str, str, str]]:
        return [(e["typeName"], e["attributes"]["qualifiedName"], e["attributes"]["name"]) for e in bodies]

    assert keys(own.entities) == keys([*started["airflow_dag"], *started["airflow_task"]])
    (process,) = started["spark_process"]
    assert (
        process["relationshipAttributes"]["orchestrator"]["uniqueAttributes"]["qualifiedName"]
        == own.entities[1]["attributes"]["qualifiedName"]
    )
