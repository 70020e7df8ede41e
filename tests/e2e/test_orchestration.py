"""Issue 35, orchestrator lineage, end to end over `ol2purview serve` (events sent with openlineage-python, the
embedded catalog read through the Atlas API, the history through `ol2purview history`), on each run-state store: an
Airflow task runs a Databricks job; its SQL job's process records the application as parent and the DAG run as root
and is shown "run by" the DAG; the application-level run (jobType APPLICATION) is no process, even with outputs.

Events: the one builder of Databricks runs (tools/samples/databricks.py) with the ParentRunFacet 1-2-0 openlineage-spark
sends when Airflow handed it its task and DAG (tests/unit/lineage/test_identity.py says where each part comes from)."""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from datetime import timedelta

import pytest

from tests import databricks_runs as dr
from tools.samples.databricks import event_time
from tests.conftest import PROJECT_ROOT
from tests.e2e.lineage_helpers import Atlas, replay, write_events
from tests.unit.lineage.test_identity import APP, DAG, TASK, parent_facet

pytestmark = pytest.mark.e2e

APP_RUN = APP._replace(namespace=dr.JOB_NAMESPACE, run_id=dr.run_id(0))  # the builder's application run
JOB_ENV = {"spark.databricks.job.id": "812", "spark.databricks.job.runId": "5001", "spark.databricks.job.type": "notebook"}
TASK_QN = f"databricks://{dr.HOST}/jobs/812/tasks/Repos/etl/orders"


def _events() -> list[dict]:
    sql_job = replace(dr.orders_run(1), environment_extra=JOB_ENV, run_facets=parent_facet(APP_RUN, DAG),
                      job_type=True)
    application = {  # SparkApplicationExecutionContext's COMPLETE, here with an output (some producers send them)
        "eventType": "COMPLETE", "eventTime": event_time(dr.T0 + timedelta(seconds=5)), "producer": dr.PRODUCER,
        "schemaURL": dr.SCHEMA_URL, "run": {"runId": APP_RUN.run_id, "facets": parent_facet(TASK, DAG)},
        "job": {"namespace": dr.JOB_NAMESPACE, "name": "databricks_shell",
                "facets": {"jobType": {"processingType": "BATCH", "integration": "SPARK", "jobType": "APPLICATION"}}},
        "inputs": [], "outputs": [{"namespace": "dbfs", "name": "/mnt/curated/app_log"}]}
    return [*dr.events(sql_job), application]


def test_the_process_records_parent_and_root_and_the_history_shows_run_by(serve_on_each_store, tmp_path):
    serve = serve_on_each_store(env=dr_env())
    replay(serve, write_events(tmp_path / "events", *_events()))
    serve.wait_until_processed()

    processes = [e for e in Atlas(serve.atlas_url).all_entities() if e["typeName"].endswith("_process")]
    assert [p["attributes"]["qualifiedName"].split("/processes/")[0] for p in processes] == [TASK_QN]
    attributes = processes[0]["attributes"]
    assert {k: attributes[k] for k in sorted(attributes) if k.startswith(("lastRunParent", "lastRunRoot"))} == {
        "lastRunParentJobName": "databricks_shell", "lastRunParentJobNamespace": dr.JOB_NAMESPACE,
        "lastRunParentRunId": APP_RUN.run_id, "lastRunRootJobName": "sales_daily",
        "lastRunRootJobNamespace": "airflow", "lastRunRootRunId": DAG.run_id}

    output = "https://contosolake.dfs.core.windows.net/curated/orders"
    done = subprocess.run([sys.executable, "-m", "tools.cli", "history", output, "--since", "2026-03-01",
                           "--until", "2026-03-03", "--direction", "upstream", "--depth", "1", "--json",
                           "--data", str(serve.data_dir)], cwd=PROJECT_ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    runs = [r for p in json.loads(done.stdout)["processes"] for r in p["runs"]]
    assert [(r["runId"], r["runBy"]) for r in runs] == [(dr.run_id(1), "airflow/sales_daily")]
    table = subprocess.run([sys.executable, "-m", "tools.cli", "history", output, "--since", "2026-03-01",
                            "--until", "2026-03-03", "--direction", "upstream", "--depth", "1",
                            "--data", str(serve.data_dir)], cwd=PROJECT_ROOT, capture_output=True, text=True,
                           timeout=60).stdout.splitlines()
    header = next(line for line in table if line.strip().startswith("RUN ID"))
    row = next(line for line in table if line.strip().startswith(dr.run_id(1)))
    assert "RUN BY" in header and row[header.index("RUN BY"):].startswith("airflow/sales_daily")


def dr_env() -> dict[str, str]:
    return {"DATABRICKS_ENVIRONMENT_WAIT_SECONDS": "0"}
