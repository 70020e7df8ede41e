"""Owners: the Databricks workspace host (and the order of its sources), notebooks, jobs and tasks, display names."""

from __future__ import annotations

import pytest

from olparser.lineage import LineageOptions, build_lineage
from olparser.lineage.context import display_job_name, run_context
from olparser.resolution.tasks import TaskLookup
from olparser.runs.model import DatasetFacts, RunSnapshot
from tests.support.fake_engine import FakeEngine

OUTPUT = DatasetFacts(namespace="abfss://out@acct.dfs.core.windows.net", name="gold/orders")
OUTPUT_QN = "https://acct.dfs.core.windows.net/out/gold/orders"


def _run(
    env: dict | None = None,
    *,
    job_namespace: str = "default",
    job_name: str = "databricks_shell.append_data",
    run_facets: dict | None = None,
    event_type: str = "COMPLETE",
) -> RunSnapshot:
    facets = dict(run_facets or {})
    if env is not None:
        facets["environment-properties"] = {"environment-properties": env}
    return RunSnapshot(
        run_id="run-1",
        job_namespace=job_namespace,
        job_name=job_name,
        event_type=event_type,
        event_time="2024-05-01T10:00:00Z",
        producer="test",
        run_facets=facets,
        outputs=(OUTPUT,),
    )


@pytest.mark.parametrize(
    "run, options, host, source",
    [
        (
            _run(
                {
                    "spark.databricks.workspaceUrl": "https://ADB-1.2.azuredatabricks.net/",
                    "spark.databricks.clusterUsageTags.clusterOwnerOrgId": "9",
                },
                job_namespace="9.9#c",
            ),
            LineageOptions(workspace_hosts=(("9", "adb-9.9.azuredatabricks.net"),)),
            "adb-1.2.azuredatabricks.net",
            "environment-properties",
        ),
        (
            _run(
                run_facets={
                    "spark_properties": {"properties": {"spark.databricks.workspaceUrl": "adb-5.6.azuredatabricks.net"}}
                }
            ),
            LineageOptions(),
            "adb-5.6.azuredatabricks.net",
            "spark_properties",
        ),
        (
            _run({"spark.databricks.clusterUsageTags.clusterOwnerOrgId": "9"}, job_namespace="3.4#0501-cluster"),
            LineageOptions(workspace_hosts=(("9", "adb-9.9.azuredatabricks.net"),)),
            "adb-9.9.azuredatabricks.net",
            "workspace_hosts",
        ),
        (
            _run({"spark.databricks.clusterUsageTags.clusterOwnerOrgId": "9"}, job_namespace="3.4#0501-cluster"),
            LineageOptions(),
            "adb-3.4.azuredatabricks.net",
            "job namespace",
        ),
        (
            _run(job_namespace="prod", job_name="adb-7.8.azuredatabricks.net.append_data_exec_v1.orders"),
            LineageOptions(),
            "adb-7.8.azuredatabricks.net",
            "job name",
        ),
        (
            _run(job_namespace="prod", job_name="dbc-954f5d5f-34dd_append_data_exec_v1_orders"),
            LineageOptions(),
            "dbc-954f5d5f-34dd.cloud.databricks.com",
            "job name",
        ),
        (_run(job_namespace="prod"), LineageOptions(), None, None),
    ],
)
def test_workspace_host_sources_in_order(run, options, host, source):
    ctx = run_context(run, options)

    assert (ctx.workspace_host, ctx.workspace_source) == (host, source)
    assert ctx.is_databricks


@pytest.mark.parametrize(
    "job_name, app_key, expected",
    [
        ("databricks_shell.append_data_exec_v1.orders", "databricks_shell", "append_data_exec_v1.orders"),
        ("adb-7.8.azuredatabricks.net.append_data_exec_v1", "adb-7", "append_data_exec_v1"),
        (
            "adb-7_8_azuredatabricks_net_append_data_exec_v1",
            "adb-7_8_azuredatabricks_net_append_data_exec_v1",
            "append_data_exec_v1",
        ),
        (
            "cl_i_test_application.execute_insert_into_hive_table.warehouse_t2",
            "cl_i_test_application",
            "execute_insert_into_hive_table.warehouse_t2",
        ),
        ("cl_i_test_application", "cl_i_test_application", "cl_i_test_application"),
    ],
)
def test_display_job_name_strips_the_application_prefix(job_name, app_key, expected):
    assert display_job_name(job_name, app_key) == expected


def test_notebook_job_task_chain(engine):
    env = {
        "spark.databricks.workspaceUrl": "adb-1.2.azuredatabricks.net",
        "spark.databricks.job.id": "42",
        "spark.databricks.job.type": "notebook",
        "spark.databricks.notebook.path": "/Repos/etl/load_orders",
        "user": "ana@example.com",
    }

    plan = build_lineage(_run(env), engine, LineageOptions())

    ws = "databricks://adb-1.2.azuredatabricks.net"
    task = f"{ws}/jobs/42/tasks/Repos/etl/load_orders"
    assert [
        (e["guid"], e["typeName"], e["attributes"]["qualifiedName"], e.get("relationshipAttributes", {}))
        for e in plan.entities[:4]
    ] == [
        ("-2", "databricks_workspace", ws, {}),
        (
            "-3",
            "databricks_notebook",
            f"{ws}/notebooks/Repos/etl/load_orders",
            {
                "workspace": {
                    "guid": "-2",
                    "typeName": "databricks_workspace",
                    "uniqueAttributes": {"qualifiedName": ws},
                    "relationshipType": "databricks_workspace_notebooks",
                }
            },
        ),
        (
            "-4",
            "databricks_job",
            f"{ws}/jobs/42",
            {
                "workspace": {
                    "guid": "-2",
                    "typeName": "databricks_workspace",
                    "uniqueAttributes": {"qualifiedName": ws},
                    "relationshipType": "databricks_workspace_jobs",
                }
            },
        ),
        (
            "-5",
            "databricks_notebook_task",
            task,
            {
                "job": {
                    "guid": "-4",
                    "typeName": "databricks_job",
                    "uniqueAttributes": {"qualifiedName": f"{ws}/jobs/42"},
                    "relationshipType": "databricks_job_job_tasks",
                },
                "notebook": {
                    "guid": "-3",
                    "typeName": "databricks_notebook",
                    "uniqueAttributes": {"qualifiedName": f"{ws}/notebooks/Repos/etl/load_orders"},
                    "relationshipType": "databricks_notebook_notebook_tasks",
                },
            },
        ),
    ]
    assert plan.entities[1]["attributes"] == {
        "qualifiedName": f"{ws}/notebooks/Repos/etl/load_orders",
        "name": "load_orders",
    }
    assert plan.entities[2]["attributes"] == {"qualifiedName": f"{ws}/jobs/42", "name": "job 42", "jobId": 42}
    assert plan.entities[3]["attributes"] == {
        "qualifiedName": task,
        "name": "load_orders",
        "jobId": 42,
        "notebookPath": "/Repos/etl/load_orders",
    }
    assert plan.task == TaskLookup(
        f"{ws}/jobs/42", task, "databricks_notebook_task", "notebookPath", "/Repos/etl/load_orders"
    )
    process = plan.entities[4]
    assert process["typeName"] == "databricks_process"
    assert process["attributes"]["qualifiedName"] == f"{task}/processes/append_data/{OUTPUT_QN}"
    assert process["attributes"]["name"] == "append_data"
    assert process["attributes"]["lastRunUser"] == "ana@example.com"
    assert process["relationshipAttributes"] == {
        "task": {
            "guid": "-5",
            "typeName": "databricks_notebook_task",
            "uniqueAttributes": {"qualifiedName": task},
            "relationshipType": "databricks_runnable_processes",
        }
    }


def test_an_interactive_notebook_run_hangs_its_processes_under_the_notebook(engine):
    env = {
        "spark.databricks.workspaceUrl": "adb-1.2.azuredatabricks.net",
        "spark.databricks.notebook.path": "/Shared/nb",
    }

    plan = build_lineage(_run(env), engine, LineageOptions())

    notebook = "databricks://adb-1.2.azuredatabricks.net/notebooks/Shared/nb"
    assert [e["typeName"] for e in plan.entities] == [
        "databricks_workspace",
        "databricks_notebook",
        "databricks_process",
    ]
    assert plan.entities[2]["relationshipAttributes"]["task"] == {
        "guid": "-3",
        "typeName": "databricks_notebook",
        "uniqueAttributes": {"qualifiedName": notebook},
        "relationshipType": "databricks_runnable_processes",
    }
    assert plan.task is None


def test_a_run_data_factory_started_belongs_to_the_accelerators_adf_job(engine):
    """Data Factory submits a one-time run (a new job id each time); the accelerator named its job after the factory
    and the pipeline (`ADF_{factory}_{pipeline}`), which the run's parent names (olparser/lineage/adf.py)."""
    env = {
        "spark.databricks.workspaceUrl": "adb-1.2.azuredatabricks.net",
        "spark.databricks.job.id": "990017",
        "spark.databricks.job.type": "notebook",
        "spark.databricks.notebook.path": "/Shared/load",
    }
    parent = {
        "parent": {
            "run": {"runId": "2d3c1f0e-9b7a-4c55-8a10-0f6d2e1b4c3a"},
            "job": {"namespace": "adf://contoso-adf", "name": "LoadSales"},
        }
    }

    plan = build_lineage(_run(env, run_facets=parent), engine, LineageOptions())

    job = "databricks://adb-1.2.azuredatabricks.net/jobs/ADF_contoso-adf_LoadSales"
    assert [(e["typeName"], e["attributes"]["qualifiedName"]) for e in plan.entities[2:4]] == [
        ("databricks_job", job),
        ("databricks_notebook_task", f"{job}/tasks/Shared/load"),
    ]
    assert plan.entities[2]["attributes"] == {"qualifiedName": job, "name": "ADF_contoso-adf_LoadSales"}
    assert plan.task is not None and plan.task.job == job


@pytest.mark.parametrize(
    "job_type, task_type",
    [
        ("python", "databricks_python_task"),
        ("python_wheel", "databricks_python_wheel_task"),
        ("spark_jar", "databricks_spark_jar_task"),
        ("spark_submit", "databricks_spark_submit_task"),
        ("dbt", "databricks_job_task"),
        (None, "databricks_job_task"),
    ],
)
def test_task_type_comes_from_the_job_type(engine, job_type, task_type):
    env = {"spark.databricks.workspaceUrl": "adb-1.2.azuredatabricks.net", "spark.databricks.job.id": "42"}
    if job_type:
        env["spark.databricks.job.type"] = job_type

    plan = build_lineage(_run(env), engine, LineageOptions())

    task = plan.entities[2]
    assert task["typeName"] == task_type
    assert task["attributes"]["qualifiedName"] == (
        f"databricks://adb-1.2.azuredatabricks.net/jobs/42/tasks/{job_type or 'task'}"
    )


def test_databricks_code_outside_notebooks_and_jobs_is_an_application_in_its_workspace(engine):
    plan = build_lineage(
        _run({"spark.databricks.workspaceUrl": "adb-1.2.azuredatabricks.net"}), engine, LineageOptions()
    )

    assert [(e["typeName"], e["attributes"]["qualifiedName"]) for e in plan.entities] == [
        ("databricks_workspace", "databricks://adb-1.2.azuredatabricks.net"),
        ("spark_application", "databricks://adb-1.2.azuredatabricks.net/applications/databricks_shell"),
        (
            "spark_process",
            f"databricks://adb-1.2.azuredatabricks.net/applications/databricks_shell/processes/append_data/{OUTPUT_QN}",
        ),
    ]


HOST = "adb-42.4.azuredatabricks.net"
WORKSPACE = f"databricks://{HOST}"


def _owner_entities(env: dict) -> tuple[list[tuple[str, str, str]], dict]:
    plan = build_lineage(_run({"spark.databricks.workspaceUrl": HOST, **env}), FakeEngine(), LineageOptions())
    owners = [
        (e["typeName"], e["attributes"]["qualifiedName"], e["attributes"]["name"])
        for e in plan.entities
        if not e["typeName"].endswith("process")
    ]
    return owners, plan.entities[-1]["relationshipAttributes"]


def test_a_notebook_known_by_its_id_only_is_named_apart_from_notebook_paths():
    owners, relationships = _owner_entities({"spark.databricks.notebook.id": "4051112223334445"})
    notebook = f"{WORKSPACE}/notebook-ids/4051112223334445"
    assert owners == [
        ("databricks_workspace", WORKSPACE, HOST),
        ("databricks_notebook", notebook, "notebook 4051112223334445"),
    ]
    assert relationships["task"]["uniqueAttributes"]["qualifiedName"] == notebook


def test_a_job_notebook_task_known_by_the_notebook_id():
    owners, relationships = _owner_entities(
        {
            "spark.databricks.notebook.id": "11",
            "spark.databricks.job.id": "801",
            "spark.databricks.job.type": "notebook",
        }
    )
    task = f"{WORKSPACE}/jobs/801/tasks/notebook-11"
    assert owners == [
        ("databricks_workspace", WORKSPACE, HOST),
        ("databricks_notebook", f"{WORKSPACE}/notebook-ids/11", "notebook 11"),
        ("databricks_job", f"{WORKSPACE}/jobs/801", "job 801"),
        ("databricks_notebook_task", task, "notebook-11"),
    ]
    assert relationships["task"]["uniqueAttributes"]["qualifiedName"] == task


def test_a_delta_live_tables_pipeline_owns_its_processes():
    owners, relationships = _owner_entities({"pipelines.id": "e9cd8a31-de2f-4206-adfa-4f6605d68d88"})
    pipeline = f"{WORKSPACE}/pipelines/e9cd8a31-de2f-4206-adfa-4f6605d68d88"
    assert owners == [
        ("databricks_workspace", WORKSPACE, HOST),
        ("databricks_pipeline", pipeline, "pipeline e9cd8a31-de2f-4206-adfa-4f6605d68d88"),
    ]
    assert relationships == {
        "pipeline": {
            "guid": "-3",
            "typeName": "databricks_pipeline",
            "uniqueAttributes": {"qualifiedName": pipeline},
            "relationshipType": "databricks_pipeline_processes",
        }
    }
