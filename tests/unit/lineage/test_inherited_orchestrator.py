"""Issue 35: a SQL job inherits the Airflow task that ran its Spark application (olparser/lineage/inherited.py).

Inputs as openlineage-spark builds them from the Airflow provider's Spark properties
(providers/openlineage/utils/spark.py `_get_parent_job_information_as_spark_properties`: parentJobName
`{dag_id}.{task_id}`, rootParentJobName `{dag_id}`): the application run's ParentRunFacet names the task as parent and
the DAG as root (SparkApplicationExecutionContext.buildApplicationParentFacet); a SQL job's names the application run
as parent and the DAG as root (SparkSQLExecutionContext.buildApplicationParentFacet: root = rootParentJob*, else
parentJob*, else the application). The live path passes them through the run-state store (both stores), the Spark
path through its reduced facts: the same pure functions decide on both."""

from __future__ import annotations

import pytest

from olparser.lineage import LineageOptions, build_lineage
from olparser.lineage.identity import Orchestration
from olparser.lineage.inherited import (
    CHANNEL,
    inherited_orchestration,
    inheriting_scope,
    lookup_passed,
    orchestration_from_bytes,
    orchestration_to_bytes,
    passed_orchestration,
)
from olparser.naming import MappingEngine
from tests.support.airflow_identity import APP, DAG, TASK, parent_facet
from tests.support.orchestration_events import application_run, sql_job_run
from tests.support.rules import MAPPINGS_PATH

ENGINE = MappingEngine.from_path(MAPPINGS_PATH)


def test_the_application_run_passes_on_its_parent_and_root_in_the_scope_of_its_run_id():
    scope, data = passed_orchestration(application_run())
    assert scope == APP.run_id
    assert data == (
        b'[["airflow","sales_daily.load_orders","0190f000-0000-7000-8000-00000000b000"],'
        b'["airflow","sales_daily","0190f000-0000-7000-8000-00000000c000"]]'
    )
    assert orchestration_from_bytes(data) == Orchestration(TASK, DAG, None)


@pytest.mark.parametrize(
    "run",
    [
        application_run({}),  # nothing ran the application
        application_run(parent_facet(TASK)),  # parent only (no root): not `{root}.{task}` under a root
        application_run(parent_facet(DAG, DAG)),  # a parent that is not a task of the root
        sql_job_run(),  # not an application run
    ],
)
def test_only_an_application_run_that_an_airflow_task_ran_passes_anything_on(run):
    assert passed_orchestration(run) is None


def test_a_sql_job_of_an_application_something_ran_looks_in_its_parents_scope():
    assert inheriting_scope(sql_job_run()) == APP.run_id


@pytest.mark.parametrize(
    "run",
    [
        sql_job_run(parent_facet(APP, APP)),  # plain Spark: the root is the application itself -> no lookup
        sql_job_run(parent_facet(APP)),  # no root
        sql_job_run({}),  # no parent
        sql_job_run(parent_facet(TASK, DAG)),  # its own facet names the task
        sql_job_run(outputs=[]),  # no outputs: no process to reference anything
        application_run(),  # an application run is no process
    ],
)
def test_no_lookup_for_a_run_that_needs_none(run):
    assert inheriting_scope(run) is None


def test_what_is_passed_on_is_read_back_or_ignored():
    data = orchestration_to_bytes(Orchestration(TASK, DAG, None))
    assert inherited_orchestration([b"not json", data]) == Orchestration(TASK, DAG, None)
    assert inherited_orchestration([b'[["a","b","c"]]', b'[["a","","c"],["a","b","c"]]', b"[1,2]"]) is None
    assert lookup_passed({(APP.run_id, *CHANNEL): [data]}, APP.run_id) == Orchestration(TASK, DAG, None)
    assert lookup_passed({(APP.run_id, *CHANNEL): [data]}, "another") is None


def _process(plan) -> dict:
    (process,) = [e for e in plan.entities if e["typeName"].endswith("_process")]
    return process


def test_a_sql_job_references_the_task_its_application_passed_on_and_keeps_the_dag_as_root():
    inherited = orchestration_from_bytes(passed_orchestration(application_run())[1])
    plan = build_lineage(sql_job_run(), ENGINE, LineageOptions(), inherited=inherited)
    process = _process(plan)
    task = next(e for e in plan.entities if e["typeName"] == "airflow_task")
    assert (
        process["relationshipAttributes"]["orchestrator"]["uniqueAttributes"]["qualifiedName"],
        process["relationshipAttributes"]["orchestrator"]["guid"],
    ) == ("airflow://airflow/sales_daily/tasks/load_orders", task["guid"])
    assert (
        process["attributes"]["lastRunParentJobName"],
        process["attributes"]["lastRunRootJobName"],
        process["attributes"]["lastRunRootRunId"],
    ) == ("databricks_shell", "sales_daily", DAG.run_id)
    without = build_lineage(sql_job_run(), ENGINE, LineageOptions())
    assert "orchestrator" not in _process(without)["relationshipAttributes"]
    # the same process but for the reference and the DAG and task placeholders
    assert {k: v for k, v in process["attributes"].items()} == _process(without)["attributes"]
