"""Issue 5 end to end on the production path's storage: `ol2purview serve` with Azurite (queue, claim checks) and the
embedded catalog. Databricks-like runs built from the real accelerator event (new runId, eventTime, inputs, job
properties): catalog calls per run from the catalog's own counter, a notebook re-run that no longer reads an input,
and a job run with its job and task owners."""

from __future__ import annotations

import copy
import json
import secrets
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.lineage_helpers import (
    ACCELERATOR_EVENT,
    WORKSPACE_HOST,
    WORKSPACE_HOSTS_ENV,
    Atlas,
    load_event,
    refs,
    replay,
    write_events,
)
from tests.support.azurite_fixture import require_azurite
from tools.functions_host.launcher import ServeHandle, start_serve

pytestmark = [pytest.mark.e2e, pytest.mark.azurite]

WORKSPACE = f"databricks://{WORKSPACE_HOST}"
NOTEBOOK_PATH = "/Shared/Scenario01DimOrg/S01DimOrg_raw2int"
NOTEBOOK = f"{WORKSPACE}/notebooks{NOTEBOOK_PATH}"
ADLS = "abfss://raw@aaiarchdesignpurviewadls.dfs.core.windows.net"
ORGANIZATION = "https://aaiarchdesignpurviewadls.dfs.core.windows.net/raw/DimOrganization.parquet"
CURRENCY = "https://aaiarchdesignpurviewadls.dfs.core.windows.net/raw/DimCurrency.parquet"


@pytest.fixture
def serve(tmp_path) -> ServeHandle:
    """A serve of its own for every test (its catalog, its existence cache, its counters): no test depends on
    another's datasets or calls."""
    require_azurite()
    handle = start_serve(tmp_path / "serve", key=secrets.token_urlsafe(16), storage="azurite", env=WORKSPACE_HOSTS_ENV)
    assert "storage: Azurite (pid " in handle.output()
    yield handle
    assert handle.stop() == 0, handle.output()


def notebook_run(
    event_time: str,
    *,
    inputs: tuple[str, ...] = ("DimOrganization.parquet",),
    environment: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The real accelerator COMPLETE event as a new run of its notebook: new runId and eventTime, these ADLS inputs
    (same container, same schema facet), extra environment properties."""
    event = load_event(ACCELERATOR_EVENT)
    template = event["inputs"][0]
    event["run"]["runId"] = str(uuid.uuid4())
    event["eventTime"] = event_time
    event["inputs"] = [{**copy.deepcopy(template), "namespace": ADLS, "name": f"/{name}"} for name in inputs]
    event["run"]["facets"]["environment-properties"]["environment-properties"].update(environment or {})
    return event


def process_and_count_calls(serve: ServeHandle, folder: Path, *events: dict[str, Any]) -> int:
    """Replay the events, wait until the worker has processed them; the catalog calls they cost."""
    serve.reset_catalog_calls()
    replay(serve, write_events(folder, *events))
    serve.wait_until_processed()
    return serve.catalog_calls()["total"]


def test_a_run_over_new_datasets_costs_six_catalog_calls_and_over_cached_ones_one(serve, tmp_path):
    first = notebook_run("2024-05-01T10:00:00.000Z", inputs=("DimOrganization.parquet", "DimGeography.parquet"))
    assert process_and_count_calls(serve, tmp_path / "first", first) == 6
    assert serve.catalog_calls() == {
        "total": 6,
        "byRoute": {
            "GET /resourceSetRuleConfigs/defaultResourceSetRuleConfig": 1,  # the account's resource-set rules, once
            "GET /entity/bulk/uniqueAttribute/type/{type_name}": 2,  # the inputs' paths, their resource sets
            "POST /search/query": 2,  # a partitioned resource set under each input folder
            "POST /entity/bulk": 1,
        },
    }
    again = notebook_run("2024-05-01T11:00:00.000Z", inputs=("DimOrganization.parquet", "DimGeography.parquet"))
    assert process_and_count_calls(serve, tmp_path / "again", again) == 1  # datasets cached: the bulk write only
    duplicate = copy.deepcopy(again)
    assert process_and_count_calls(serve, tmp_path / "duplicate", duplicate) == 0  # nothing new: no call at all


def test_a_rerun_of_the_notebook_without_one_input_leaves_the_process_without_it(serve, tmp_path):
    atlas = Atlas(serve.atlas_url)
    process_qn = f"{NOTEBOOK}/processes/overwrite_by_expression_exec_v1/N2/outputTable"
    with_currency = notebook_run("2024-06-01T10:00:00.000Z", inputs=("DimOrganization.parquet", "DimCurrency.parquet"))
    process_and_count_calls(serve, tmp_path / "before", with_currency)
    process = atlas.entity("databricks_process", process_qn)
    assert refs(process, "inputs") == ["N1/inputTable", CURRENCY, ORGANIZATION]
    assert process["attributes"]["lastRunId"] == with_currency["run"]["runId"]

    without_currency = notebook_run("2024-06-02T10:00:00.000Z", inputs=("DimOrganization.parquet",))
    process_and_count_calls(serve, tmp_path / "after", without_currency)
    process = atlas.entity("databricks_process", process_qn)
    assert refs(process, "inputs") == ["N1/inputTable", ORGANIZATION]
    assert refs(process, "outputs") == ["N2/outputTable"]
    assert (process["attributes"]["lastRunId"], process["attributes"]["lastRunTime"]) == (
        without_currency["run"]["runId"],
        "2024-06-02T10:00:00.000Z",
    )
    currency = atlas.entity("azure_datalake_gen2_path", CURRENCY)  # the dataset stays, only the edge is gone
    assert refs(currency, "inputToProcesses") == []


def test_a_job_run_is_attached_to_its_job_and_notebook_task(serve, tmp_path):
    atlas = Atlas(serve.atlas_url)
    job_run = notebook_run(
        "2024-07-01T10:00:00.000Z",
        environment={
            "spark.databricks.job.id": "918273",
            "spark.databricks.job.runId": "5550001",
            "spark.databricks.job.type": "notebook",
        },
    )
    process_and_count_calls(serve, tmp_path / "job", job_run)
    job_qn = f"{WORKSPACE}/jobs/918273"
    task_qn = f"{job_qn}/tasks/{NOTEBOOK_PATH.strip('/')}"
    job = atlas.entity("databricks_job", job_qn)
    assert (job["attributes"]["jobId"], refs(job, "workspace")) == (918273, [WORKSPACE])  # Purview's: a long
    task = atlas.entity("databricks_notebook_task", task_qn)
    assert (task["attributes"]["jobId"], task["attributes"]["notebookPath"]) == (918273, NOTEBOOK_PATH)
    assert refs(task, "job") == [job_qn]
    assert refs(task, "notebook") == [NOTEBOOK]
    process = atlas.entity("databricks_process", f"{task_qn}/processes/overwrite_by_expression_exec_v1/N2/outputTable")
    assert refs(process, "task") == [task_qn]
    assert refs(process, "inputs") == ["N1/inputTable", ORGANIZATION]
    assert json.loads(process["attributes"]["columnMapping"]) == [
        {
            "DatasetMapping": {"Source": "N1/inputTable", "Sink": "N2/outputTable"},
            "ColumnMapping": [{"Source": "col_a", "Sink": "col_a"}, {"Source": "col_b", "Sink": "col_b"}],
        }
    ]
    lineage = atlas.lineage(process["guid"], "BOTH", 1)
    assert lineage == {
        ("N1/inputTable", process["attributes"]["qualifiedName"]),
        (ORGANIZATION, process["attributes"]["qualifiedName"]),
        (process["attributes"]["qualifiedName"], "N2/outputTable"),
    }
