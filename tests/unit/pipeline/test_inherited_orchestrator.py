"""The runner with a SQL job that inherits the Airflow task from its Spark application run (olparser/lineage/
inherited.py), on each run-state store: whatever the order of the task's, the SQL job's and the application's runs,
the catalog is the one in-order processing leaves, and the process references the task. Counted: the SQL job written
before its application is written again once when the application's START comes (one catalog write), and not again
(an unchanged plan) when its COMPLETE comes.

Events: tests/support/orchestration_events.py (openlineage-spark's application and SQL job facets, the Airflow provider's
task run; each helper says where its shape comes from)."""

from __future__ import annotations

import itertools

from tests.support.orchestration_events import TASK_QN, airflow_task_events, application_events, dr_env, sql_job_events
from tests.support.pipelines import make_pipeline
from tests.unit.pipeline.fake_catalog import FakeCatalog

AIRFLOW_TASK = ("airflow_task", "airflow://airflow/sales_daily/tasks/load_orders")
assert dr_env() == {"DATABRICKS_ENVIRONMENT_WAIT_SECONDS": "0"}  # as make_pipeline's policy: nothing held


def _catalog_after(store, engine, runs) -> FakeCatalog:
    catalog = FakeCatalog()
    pipeline = make_pipeline(store, engine, catalog)
    for run in runs:
        for event in run:
            pipeline.process(event)
    return catalog


def _process(catalog: FakeCatalog) -> dict:
    (key,) = [key for key in catalog.keys() if key[0].endswith("_process")]
    assert (key[0], key[1].split("/processes/")[0]) == ("databricks_process", TASK_QN)
    return catalog.entities[key]


def test_whatever_the_order_the_sql_job_references_the_task_its_application_names(store, engine, fresh_store):
    runs = [airflow_task_events(), application_events(), sql_job_events()]
    in_order = _catalog_after(fresh_store(), engine, runs)
    assert _process(in_order)["relationshipAttributes"]["orchestrator"] == AIRFLOW_TASK
    assert AIRFLOW_TASK in in_order.entities
    for order in itertools.permutations(range(3)):
        catalog = _catalog_after(fresh_store(), engine, [runs[index] for index in order])
        assert catalog.state() == in_order.state(), order


def test_a_sql_job_written_first_is_written_again_once(store, engine):
    catalog = FakeCatalog()
    pipeline = make_pipeline(store, engine, catalog)
    for event in [*airflow_task_events(), *sql_job_events()]:
        pipeline.process(event)
    assert "orchestrator" not in _process(catalog).get("relationshipAttributes", {})
    written = catalog.calls
    start, complete = application_events()
    pipeline.process(start)  # the application's START: its SQL job, already written, is written again
    assert catalog.calls == written + 1
    assert _process(catalog)["relationshipAttributes"]["orchestrator"] == AIRFLOW_TASK
    pipeline.process(complete)  # its COMPLETE: the SQL job's plan is unchanged, no catalog write
    assert catalog.calls == written + 1
