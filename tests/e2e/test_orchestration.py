"""Issue 35, orchestrator lineage, end to end over `ol2purview serve` (events sent with openlineage-python, the
embedded catalog read through the Atlas API, the history through `ol2purview history`), on each run-state store: an
Airflow task runs a Databricks job; its SQL job's process records the application as parent and the DAG run as root
and is shown "run by" the DAG; the application-level run (jobType APPLICATION) is no process, even with outputs. The Airflow task, which
reports no datasets, writes its DAG and task whatever the order of the events; a run whose parent is the task and
root the DAG references the task (`orchestrator`), whatever the order; so does a SQL job, whose facet names only its
application and the DAG, through its application run's parent (the task) — whichever of the application run and
the SQL job comes first.

Events: the one builder of Databricks runs (tools/samples/databricks.py) with the ParentRunFacet 1-2-0 openlineage-spark
sends when Airflow handed it its task and DAG (tests/unit/lineage/test_identity.py says where each part comes from)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta

import pytest

from tests.e2e.lineage_helpers import Atlas, replay, write_events
from tests.support import databricks_runs as dr
from tests.support.airflow_identity import DAG, TASK, parent_facet
from tests.support.orchestration_events import (
    APP_RUN,
    TASK_QN,
    airflow_task_events,
    application_events,
    dr_env,
    orchestrated_events,
    sql_job_events,
)
from tests.support.repository import PROJECT_ROOT
from tools.samples.databricks import event_time

pytestmark = pytest.mark.e2e


def test_the_process_records_parent_and_root_and_the_history_shows_run_by(serve_on_each_store, tmp_path):
    serve = serve_on_each_store(env=dr_env())
    replay(serve, write_events(tmp_path / "events", *orchestrated_events()))
    serve.wait_until_processed()

    processes = [e for e in Atlas(serve.atlas_url).all_entities() if e["typeName"].endswith("_process")]
    assert [p["attributes"]["qualifiedName"].split("/processes/")[0] for p in processes] == [TASK_QN]
    attributes = processes[0]["attributes"]
    assert {k: attributes[k] for k in sorted(attributes) if k.startswith(("lastRunParent", "lastRunRoot"))} == {
        "lastRunParentJobName": "databricks_shell",
        "lastRunParentJobNamespace": dr.JOB_NAMESPACE,
        "lastRunParentRunId": APP_RUN.run_id,
        "lastRunRootJobName": "sales_daily",
        "lastRunRootJobNamespace": "airflow",
        "lastRunRootRunId": DAG.run_id,
    }

    output = "https://contosolake.dfs.core.windows.net/curated/orders"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tools.cli",
            "history",
            output,
            "--since",
            "2026-03-01",
            "--until",
            "2026-03-03",
            "--direction",
            "upstream",
            "--depth",
            "1",
            "--json",
            "--data",
            str(serve.data_dir),
        ],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    runs = [r for p in json.loads(done.stdout)["processes"] for r in p["runs"]]
    assert [(r["runId"], r["runBy"]) for r in runs] == [(dr.run_id(1), "airflow/sales_daily")]
    table = subprocess.run(
        [
            sys.executable,
            "-m",
            "tools.cli",
            "history",
            output,
            "--since",
            "2026-03-01",
            "--until",
            "2026-03-03",
            "--direction",
            "upstream",
            "--depth",
            "1",
            "--data",
            str(serve.data_dir),
        ],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.splitlines()
    header = next(line for line in table if line.strip().startswith("RUN ID"))
    row = next(line for line in table if line.strip().startswith(dr.run_id(1)))
    assert "RUN BY" in header and row[header.index("RUN BY") :].startswith("airflow/sales_daily")


@pytest.mark.parametrize("airflow_first", [True, False], ids=["airflow-first", "spark-first"])
def test_the_airflow_task_and_dag_are_written_whatever_the_order(serve_on_each_store, tmp_path, airflow_first):
    serve = serve_on_each_store(env=dr_env())
    airflow, spark = airflow_task_events(), orchestrated_events()
    replay(serve, write_events(tmp_path / "events", *(airflow + spark if airflow_first else spark + airflow)))
    serve.wait_until_processed()

    entities = Atlas(serve.atlas_url).all_entities()
    by_type = {}
    for e in entities:
        by_type.setdefault(e["typeName"], []).append(e)
    (dag,), (task,) = by_type["airflow_dag"], by_type["airflow_task"]
    assert (dag["attributes"]["qualifiedName"], task["attributes"]["qualifiedName"]) == (
        "airflow://airflow/sales_daily",
        "airflow://airflow/sales_daily/tasks/load_orders",
    )
    assert task["relationshipAttributes"]["dag"]["guid"] == dag["guid"]
    assert "airflow_process" not in by_type  # the task moved no data itself
    processes = [e for e in entities if e["typeName"].endswith("_process")]
    assert [p["attributes"]["qualifiedName"].split("/processes/")[0] for p in processes] == [TASK_QN]
    # the SQL job's facet names its application as parent and the DAG as root: the task comes from the application
    # run's facet (docs/guides/job-identity.md); the DAG run stays its root
    assert processes[0]["attributes"]["lastRunRootJobName"] == "sales_daily"
    orchestrator = processes[0]["relationshipAttributes"]["orchestrator"]
    assert (orchestrator["typeName"], orchestrator["guid"]) == ("airflow_task", task["guid"])


# A run whose ParentRunFacet names the Airflow task as parent and the DAG as root: a script the task starts with the
# provider's macros (docs/apache-airflow-providers-openlineage/macros.rst: `lineage_parent_id(task_instance)` =
# `{namespace}/{dag_id}.{task_id}/{run id}`, `lineage_root_parent_id(task_instance)` = `{namespace}/{dag_id}/{run id}`)
# put into its ParentRunFacet 1-2-0 (spec/facets/ParentRunFacet.json: run, job, root); it writes an ADLS Gen2 path
# (the naming spec's abfss form). Its process references the task: pipeline -> job -> table.
def _script_events() -> list[dict]:
    facets = parent_facet(TASK, DAG)
    return [
        {
            "eventType": kind,
            "eventTime": event_time(dr.T0 + timedelta(seconds=seconds)),
            "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.40.1/client/python",
            "schemaURL": dr.SCHEMA_URL,
            "run": {"runId": "0190f000-0000-7000-8000-00000000e000", "facets": facets},
            "job": {"namespace": "scripts", "name": "export_orders"},
            "inputs": [{"namespace": "abfss://raw@contosolake.dfs.core.windows.net", "name": "/orders"}],
            "outputs": [{"namespace": "abfss://curated@contosolake.dfs.core.windows.net", "name": "/orders_export"}],
        }
        for kind, seconds in (("START", 0), ("COMPLETE", 30))
    ]


@pytest.mark.parametrize("airflow_first", [True, False], ids=["airflow-first", "script-first"])
def test_a_process_run_by_an_airflow_task_references_it_whatever_the_order(
    serve_on_each_store, tmp_path, airflow_first
):
    serve = serve_on_each_store(env=dr_env())
    airflow, script = airflow_task_events(), _script_events()
    replay(serve, write_events(tmp_path / "events", *(airflow + script if airflow_first else script + airflow)))
    serve.wait_until_processed()

    entities = Atlas(serve.atlas_url).all_entities()
    (dag,) = [e for e in entities if e["typeName"] == "airflow_dag"]
    (task,) = [e for e in entities if e["typeName"] == "airflow_task"]
    # a script of the Python client: a producer with no model of its own, so the generic process (issue 43)
    (process,) = [e for e in entities if e["typeName"] == "openlineage_process"]
    assert (
        dag["attributes"]["qualifiedName"],
        task["attributes"]["qualifiedName"],
        task["attributes"]["taskId"],
        task["relationshipAttributes"]["dag"]["guid"],
    ) == (
        "airflow://airflow/sales_daily",
        "airflow://airflow/sales_daily/tasks/load_orders",
        "load_orders",
        dag["guid"],
    )
    orchestrator = process["relationshipAttributes"]["orchestrator"]
    assert (orchestrator["typeName"], orchestrator["guid"]) == ("airflow_task", task["guid"])
    assert [p["guid"] for p in task["relationshipAttributes"]["orchestratedOpenLineageProcesses"]] == [process["guid"]]
    assert (process["attributes"]["lastRunParentJobName"], process["attributes"]["lastRunRootJobName"]) == (
        "sales_daily.load_orders",
        "sales_daily",
    )


# The chain: Airflow DAG -> task -> Databricks job -> one Spark process that references the task, with the
# DAG as root. The SQL job's facet names only its application run and the DAG; the application run's names the task.
# Application last: the SQL job is written first (no task known yet), then written again when its application's
# START and COMPLETE come (the run-state store answers it as a reader of what the application passes on).
@pytest.mark.parametrize("application_last", [False, True], ids=["application-first", "application-last"])
def test_a_sql_job_references_the_task_that_ran_its_application_whatever_the_order(
    serve_on_each_store, tmp_path, application_last
):
    serve = serve_on_each_store(env=dr_env())
    atlas = Atlas(serve.atlas_url)

    def the_process() -> dict:
        (process,) = [e for e in atlas.all_entities() if e["typeName"].endswith("_process")]
        return process

    if application_last:
        replay(serve, write_events(tmp_path / "first", *airflow_task_events(), *sql_job_events()))
        serve.wait_until_processed()
        assert not the_process()["relationshipAttributes"].get("orchestrator")  # its application is not known yet
        replay(serve, write_events(tmp_path / "last", *application_events()))
    else:
        replay(
            serve, write_events(tmp_path / "events", *application_events(), *sql_job_events(), *airflow_task_events())
        )
    serve.wait_until_processed()

    entities = atlas.all_entities()
    (dag,) = [e for e in entities if e["typeName"] == "airflow_dag"]
    (task,) = [e for e in entities if e["typeName"] == "airflow_task"]
    process = the_process()
    assert (process["typeName"], process["attributes"]["qualifiedName"].split("/processes/")[0]) == (
        "databricks_process",
        TASK_QN,
    )
    orchestrator = process["relationshipAttributes"]["orchestrator"]
    assert (orchestrator["typeName"], orchestrator["guid"]) == ("airflow_task", task["guid"])
    assert task["relationshipAttributes"]["dag"]["guid"] == dag["guid"]
    assert [p["guid"] for p in task["relationshipAttributes"]["orchestratedDatabricksProcesses"]] == [process["guid"]]
    attributes = process["attributes"]
    assert {k: attributes[k] for k in sorted(attributes) if k.startswith(("lastRunParent", "lastRunRoot"))} == {
        "lastRunParentJobName": "databricks_shell",
        "lastRunParentJobNamespace": dr.JOB_NAMESPACE,
        "lastRunParentRunId": APP_RUN.run_id,
        "lastRunRootJobName": "sales_daily",
        "lastRunRootJobNamespace": "airflow",
        "lastRunRootRunId": DAG.run_id,
    }
    assert (dag["attributes"]["qualifiedName"], task["attributes"]["qualifiedName"]) == (
        "airflow://airflow/sales_daily",
        "airflow://airflow/sales_daily/tasks/load_orders",
    )
