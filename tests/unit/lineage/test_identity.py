"""Job identity: Fabric and Synapse sessions of one notebook are one piece of code; everything else as before."""

from __future__ import annotations

import pytest

from olparser.lineage import LineageOptions, build_lineage
from olparser.lineage.identity import JobIdentity, is_application_run, is_session_of, job_identity, orchestration
from olparser.runs.merge import merge_event
from olparser.runs.model import RunSnapshot
from tests.support.airflow_identity import APP, DAG, TASK, parent_facet
from tests.support.fake_engine import FakeEngine
from tools.samples.notebooks import (
    CTAS,
    FABRIC_NAMESPACE,
    FABRIC_NOTEBOOK_ID,
    fabric_ctas_run,
    fabric_properties,
    session_job,
)

SESSION_A = "00000000-1111-4222-8333-444444444444"  # DataHub's Fabric fixture (tools/samples/notebooks.py)
SESSION_B = "9b2f6c1e-7d4a-4c3b-a5e8-0f1d2c3b4a59"
FABRIC_PROPS = {"spark_properties": {"properties": fabric_properties()}}


def _parent(name: str) -> dict:
    return {"parent": {"run": {"runId": "r"}, "job": {"namespace": "ns", "name": name}}}


@pytest.mark.parametrize(
    "namespace, job_name, facets, expected",
    [
        # Fabric: the fixture's SQL job (fabric_runtime_notebook_events.jsonl, event 3), parent = the session job
        (
            FABRIC_NAMESPACE,
            f"{session_job('nb_bronze_to_silver', SESSION_A)}.{CTAS}",
            {**_parent(session_job("nb_bronze_to_silver", SESSION_A)), **FABRIC_PROPS},
            JobIdentity(
                f"notebooks/{FABRIC_NOTEBOOK_ID}",
                "nb_bronze_to_silver",
                CTAS,
                session_job("nb_bronze_to_silver", SESSION_A),
                "fabric",
            ),
        ),
        # Fabric: the application-level run (fixture event 11: job name = the session job) is named after the notebook
        (
            FABRIC_NAMESPACE,
            session_job("nb_bronze_to_silver", SESSION_A),
            FABRIC_PROPS,
            JobIdentity(
                f"notebooks/{FABRIC_NOTEBOOK_ID}",
                "nb_bronze_to_silver",
                "nb_bronze_to_silver",
                session_job("nb_bronze_to_silver", SESSION_A),
                "fabric",
            ),
        ),
        # Fabric, an upper-case artifact guid: keyed lower case (FabricNotebookRun.java lowercases it too)
        (
            FABRIC_NAMESPACE,
            f"{session_job('nb', SESSION_B)}.execute_merge_into_command.customers",
            {"spark_properties": {"properties": {"trident.artifact.id": FABRIC_NOTEBOOK_ID.upper()}}},
            JobIdentity(
                f"notebooks/{FABRIC_NOTEBOOK_ID}",
                "nb",
                "execute_merge_into_command.customers",
                session_job("nb", SESSION_B),
                "fabric",
            ),
        ),
        # Synapse: Livy session `Notebook 1_sparkpool001_1778577132` normalised by openlineage-spark's NameNormalizer
        (
            "azuresynapsespark-contoso",
            "notebook_1_sparkpool001_1778577132.execute_insert_into_hadoop_fs_relation_command.t",
            {"spark_properties": {"properties": {"spark.synapse.context.notebookname": "Notebook 1"}}},
            JobIdentity(
                "notebooks/Notebook 1",
                "Notebook 1",
                "execute_insert_into_hadoop_fs_relation_command.t",
                "notebook_1_sparkpool001_1778577132",
                "synapse",
            ),
        ),
        # Synapse without captured properties: the notebook from the session name
        (
            "azuresynapsespark-contoso",
            "notebook_1_sparkpool001_1778577132.execute_insert_into_hadoop_fs_relation_command.t",
            {},
            JobIdentity(
                "notebooks/notebook_1",
                "notebook_1",
                "execute_insert_into_hadoop_fs_relation_command.t",
                "notebook_1_sparkpool001_1778577132",
                "synapse",
            ),
        ),
        # Databricks and plain Spark: as before (the application job, the job name without it)
        (
            "adb-1.2#c",
            "databricks_shell.append_data_exec_v1.orders",
            {},
            JobIdentity("databricks_shell", None, "append_data_exec_v1.orders"),
        ),
        (
            "default",
            "my_app.execute_insert_into_hadoop_fs_relation_command.out",
            _parent("my_app"),
            JobIdentity("my_app", None, "execute_insert_into_hadoop_fs_relation_command.out"),
        ),
        # a plain Spark app whose name merely ends like a Synapse session is left alone outside Synapse namespaces
        ("default", "etl_pool_1778577132.save", {}, JobIdentity("etl_pool_1778577132", None, "save")),
    ],
)
def test_job_identity(namespace, job_name, facets, expected):
    assert job_identity(namespace, job_name, facets) == expected


def test_a_session_of_the_notebook_is_recognised_and_nothing_else():
    identity = job_identity(
        FABRIC_NAMESPACE,
        f"{session_job('nbBronze', SESSION_A)}.x",
        {"spark_properties": {"properties": fabric_properties(notebook="nbBronze")}},
    )

    assert is_session_of("nb_bronze_" + SESSION_B.replace("-", "_"), identity)  # NameNormalizer: nbBronze -> nb_bronze
    assert not is_session_of("other_" + SESSION_B.replace("-", "_"), identity)
    assert not is_session_of("nb_bronze", identity)
    assert not is_session_of(identity.app_key, identity)
    assert not is_session_of("nb_bronze_x", job_identity("default", "nb_bronze_x.y", {}))


def _merged(events: list[dict]) -> RunSnapshot:
    run = None
    for event in events:
        run = merge_event(run, event)
    return run


def test_two_sessions_of_one_notebook_write_one_owner_and_one_process():
    plans = [
        build_lineage(_merged(fabric_ctas_run(session)), FakeEngine(), LineageOptions())
        for session in (SESSION_A, SESSION_B)
    ]

    keys = [
        sorted(
            e["typeName"] + " " + e["attributes"]["qualifiedName"]
            for e in plan.entities
            if e["typeName"] in ("spark_application", "spark_process")
        )
        for plan in plans
    ]
    owner = f"spark://{FABRIC_NAMESPACE}/notebooks/{FABRIC_NOTEBOOK_ID}"
    assert (
        keys[0]
        == keys[1]
        == [
            f"spark_application {owner}",
            f"spark_process {owner}/processes/{CTAS}/abfss://0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
            "@onelake.dfs.fabric.microsoft.com/aaaabbbb-cccc-dddd-eeee-ffff00001111/Tables/dbo/"
            "customers",
        ]
    )
    app = next(e for e in plans[0].entities if e["typeName"] == "spark_application")
    process = next(e for e in plans[1].entities if e["typeName"] == "spark_process")
    assert (app["attributes"]["name"], app["attributes"]["appName"]) == (
        "nb_bronze_to_silver",
        f"notebooks/{FABRIC_NOTEBOOK_ID}",
    )
    assert process["attributes"]["name"] == CTAS
    assert process["attributes"]["openlineageJob"] == (
        f"{FABRIC_NAMESPACE}/{session_job('nb_bronze_to_silver', SESSION_B)}.{CTAS}"
    )


# --- who ran it ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "job_name, facets, expected",
    [
        # a SQL job of an Airflow-run application: parent the application, root the DAG -> run by the DAG
        (
            "databricks_shell.execute_insert_into_hadoop_fs_relation_command.orders",
            parent_facet(APP, DAG),
            (APP, DAG, DAG),
        ),
        # the application-level run: parent the task, root the DAG -> run by the task
        ("databricks_shell", parent_facet(TASK, DAG), (TASK, DAG, TASK)),
        # an older provider (ParentRunFacet 1-1-0, no root): Spark makes the task the root of the SQL jobs
        (
            "databricks_shell.execute_insert_into_hadoop_fs_relation_command.orders",
            parent_facet(APP, TASK),
            (APP, TASK, TASK),
        ),
        # nothing ran it: the application is parent and root (or the root is left out)
        (
            "databricks_shell.execute_insert_into_hadoop_fs_relation_command.orders",
            parent_facet(APP, APP),
            (APP, APP, None),
        ),
        (
            "databricks_shell.execute_insert_into_hadoop_fs_relation_command.orders",
            parent_facet(APP),
            (APP, None, None),
        ),
        ("databricks_shell.x", {}, (None, None, None)),
    ],
)
def test_orchestration(job_name, facets, expected):
    found = orchestration(job_name, facets)
    assert (found.parent, found.root, found.run_by) == expected


def test_an_application_level_run_is_known_by_its_job_type():
    # the jobType job facet 2-0-x: {processingType, integration, jobType: SQL_JOB | APPLICATION | ...}
    assert is_application_run(
        {"jobType": {"processingType": "BATCH", "integration": "SPARK", "jobType": "APPLICATION"}}
    )
    assert not is_application_run(
        {"jobType": {"processingType": "BATCH", "integration": "SPARK", "jobType": "SQL_JOB"}}
    )
    assert not is_application_run({})
