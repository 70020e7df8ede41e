"""Issue 10 end to end over `ol2purview serve` (embedded catalog, events sent with openlineage-python), once on each
run-state store (SQLite with the embedded queues; Azure Table storage on Azurite):
a COMPLETE processed before its RUNNING leaves nothing behind, a held run never shows its interim version, a
Synapse-style table is linked through its scanned storage location, a quirky producer's event maps as its plain
form, a run that never completes is written by the timer, `prune` removes processes of code that no longer runs,
and the admin route resets a process's remembered newest run. Everything is asserted through the Atlas API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import requests

from tests.e2e.lineage_helpers import Atlas, refs, replay, write_events
from tests.support import databricks_runs as dr
from tests.support.repository import PROJECT_ROOT
from tests.support.waiting import wait_until
from tools.functions_host.launcher import ServeHandle

pytestmark = pytest.mark.e2e

WS = f"databricks://{dr.HOST}"
NOTEBOOK = f"{WS}/notebooks/Repos/etl/orders"
APP = f"{WS}/applications/databricks_shell"
LAKE = "https://contosolake.dfs.core.windows.net"
STATEMENT = "execute_insert_into_hadoop_fs_relation_command.orders"
PROCESS = f"{NOTEBOOK}/processes/{STATEMENT}/{LAKE}/curated/orders"
INTERIM_PROCESS = f"{APP}/processes/{STATEMENT}/dbfs:/mnt/curated/orders"
FINAL_KEYS = {
    ("azure_datalake_gen2_path", f"{LAKE}/curated/orders"),
    ("azure_datalake_gen2_path", f"{LAKE}/raw/customers"),
    ("azure_datalake_gen2_path", f"{LAKE}/raw/orders"),
    ("databricks_notebook", NOTEBOOK),
    ("databricks_process", PROCESS),
    ("databricks_workspace", WS),
}


def send(serve: ServeHandle, folder: Path, *events: dict) -> None:
    """Send the events (in this order, one request each) and wait until the worker has processed them."""
    replay(serve, write_events(folder, *events))
    serve.wait_until_processed()


def test_a_complete_processed_before_its_running_leaves_no_interim_process_or_placeholder(
    serve_on_each_store, tmp_path
):
    serve = serve_on_each_store(key="k", env={"DATABRICKS_ENVIRONMENT_WAIT_SECONDS": "0"})
    atlas = Atlas(serve.atlas_url)
    start, running, complete = dr.events(dr.orders_run(1))

    send(serve, tmp_path / "complete", complete)
    interim = atlas.keys()
    assert ("spark_process", INTERIM_PROCESS) in interim
    assert ("openlineage_dataset", "dbfs:/mnt/raw/orders") in interim

    send(serve, tmp_path / "running", running, start)
    assert atlas.keys() == FINAL_KEYS  # the generic process, its application and the /mnt placeholders are gone
    process = atlas.entity("databricks_process", PROCESS)
    assert (refs(process, "inputs"), refs(process, "outputs"), refs(process, "task")) == (
        [f"{LAKE}/raw/customers", f"{LAKE}/raw/orders"],
        [f"{LAKE}/curated/orders"],
        [NOTEBOOK],
    )
    assert atlas.lineage(process["guid"], "BOTH", 1) == {
        (f"{LAKE}/raw/customers", PROCESS),
        (f"{LAKE}/raw/orders", PROCESS),
        (PROCESS, f"{LAKE}/curated/orders"),
    }


def test_a_held_run_never_shows_its_interim_version(serve_on_each_store, tmp_path):
    serve = serve_on_each_store(key="k")  # DATABRICKS_ENVIRONMENT_WAIT_SECONDS: the default, 60 s
    atlas = Atlas(serve.atlas_url)
    start, running, complete = dr.events(dr.orders_run(1))
    serve.reset_catalog_calls()

    send(serve, tmp_path / "complete", complete)
    assert atlas.keys() == set()
    send(serve, tmp_path / "rest", running, start)
    assert atlas.keys() == FINAL_KEYS
    assert serve.catalog_calls()["byRoute"].get("DELETE /entity/bulk", 0) == 0  # nothing written to take back


def test_a_synapse_table_no_rule_maps_is_linked_through_its_scanned_storage_location(serve_on_each_store, tmp_path):
    serve = serve_on_each_store(key="k")
    atlas = Atlas(serve.atlas_url)
    location = "abfss://data@synapselake.dfs.core.windows.net"
    event = {
        "eventType": "COMPLETE",
        "eventTime": "2026-02-01T10:00:00.000Z",
        "producer": dr.PRODUCER,
        "schemaURL": dr.SCHEMA_URL,
        "run": {
            "runId": dr.run_id(300),
            "facets": {
                "environment-properties": {
                    "_producer": dr.PRODUCER,
                    "_schemaURL": "file:/opt/spark/facets/EnvironmentFacet.json",
                    "environment-properties": {},
                }
            },
        },  # Synapse and Fabric send it empty
        "job": {"namespace": "synapse-ws", "name": "load_dims.execute_insert_into_hadoop_fs_relation_command"},
        "inputs": [
            {
                "namespace": location,
                "name": "reference/dim_region",
                "facets": {
                    "symlinks": {
                        "_producer": dr.PRODUCER,
                        "_schemaURL": "file:/opt/spark/facets/SymlinksDatasetFacet.json",
                        "identifiers": [{"namespace": "/reference", "name": "reference.dim_region", "type": "TABLE"}],
                    }
                },
            }
        ],
        "outputs": [{"namespace": location, "name": "curated/dim_region"}],
    }
    send(serve, tmp_path / "synapse", event)
    process_name = (
        "spark://synapse-ws/load_dims/processes/execute_insert_into_hadoop_fs_relation_command/"
        "https://synapselake.dfs.core.windows.net/data/curated/dim_region"
    )
    process = atlas.entity("spark_process", process_name)
    assert refs(process, "inputs") == ["https://synapselake.dfs.core.windows.net/data/reference/dim_region"]
    assert atlas.entity(
        "azure_datalake_gen2_path", "https://synapselake.dfs.core.windows.net/data/reference/dim_region"
    )["typeName"] == ("azure_datalake_gen2_path")
    assert json.loads(process["attributes"]["datasetTables"]) == {
        "https://synapselake.dfs.core.windows.net/data/reference/dim_region": "reference/reference.dim_region"
    }
    assert not any(t == "openlineage_dataset" for t, _ in atlas.keys())


def test_a_quirky_producers_event_maps_as_its_plain_forms(serve_on_each_store, tmp_path):
    serve = serve_on_each_store(key="k")
    atlas = Atlas(serve.atlas_url)
    postgres = {"namespace": "jdbc:postgresql://pg.contoso.com:5432/sales", "name": "public.orders"}
    lake = {"namespace": f"abfss://raw@{dr.LAKE_ACCOUNT}", "name": "/payments"}  # a leading slash
    event = {
        "eventType": "COMPLETE",
        "eventTime": "2026-02-01T10:00:00.000Z",
        "producer": "https://example.com/p",
        "schemaURL": "file:/unresolvable/OpenLineage.json",
        "run": {"runId": dr.run_id(301)},
        "job": {"namespace": "team,finance", "name": "nightly.join_orders"},
        "inputs": [postgres, postgres, {**lake, "facets": {}}],  # listed twice; empty facets
        "outputs": [
            {
                "namespace": f"abfss://curated@{dr.LAKE_ACCOUNT}",
                "name": "orders",
                "facets": {
                    "columnLineage": {
                        "_producer": "p",
                        "_schemaURL": "file:/x.json",
                        "fields": {
                            "amount": {
                                "inputFields": [
                                    {
                                        "namespace": f"abfss://raw@{dr.LAKE_ACCOUNT}",
                                        "name": "refunds",
                                        "field": "amount",
                                    }
                                ]
                            }
                        },
                    }
                },
            }
        ],
    }
    send(serve, tmp_path / "quirky", event)
    # a producer with no model of its own: the generic process, its job name whole (issue 43)
    process = atlas.entity(
        "openlineage_process",
        f"openlineage://team,finance/nightly.join_orders/processes/nightly.join_orders/{LAKE}/curated/orders",
    )
    assert refs(process, "inputs") == [  # the column-lineage source not in `inputs` is an input too
        f"{LAKE}/raw/payments",
        f"{LAKE}/raw/refunds",
        "postgresql://servers/pg.contoso.com:5432/dbs/sales/schemas/public/tables/orders",
    ]
    assert {t for t, _ in atlas.keys()} == {
        "azure_datalake_gen2_path",
        "postgresql_table",
        "openlineage_job",
        "openlineage_process",
    }


def test_a_run_that_never_completes_is_written_by_the_timer_and_updated_when_it_completes(
    serve_on_each_store, tmp_path
):
    serve = serve_on_each_store(key="k", env={"INCOMPLETE_RUN_SECONDS": "1", "LINEAGE_TIMER_SCHEDULE": "*/1 * * * * *"})
    atlas = Atlas(serve.atlas_url)
    start, running, complete = dr.events(dr.orders_run(1))
    send(serve, tmp_path / "started", start, running)

    status = wait_until(
        lambda: (
            ("databricks_process", PROCESS) in atlas.keys()
            and atlas.entity("databricks_process", PROCESS)["attributes"]["lastRunStatus"]
        ),
        30,
        0.1,
        what="the timer writing the incomplete run",
    )
    assert status == "INCOMPLETE"
    assert atlas.keys() == FINAL_KEYS
    send(serve, tmp_path / "completed", complete)
    assert atlas.entity("databricks_process", PROCESS)["attributes"]["lastRunStatus"] == "COMPLETE"
    status = serve.status()
    assert status["timers"]["write_due_runs"]["failures"] == 0
    assert (status["runState"]["runs"], status["runState"]["dueRuns"]) == (1, 0)


def _prune(serve: ServeHandle, store: str, *args: str) -> str:
    """`ol2purview prune` against the serve's catalog, with its ledger (the run-state store of its data folder)."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tools.cli",
            "prune",
            "--atlas-url",
            serve.atlas_url,
            "--data",
            str(serve.data_dir),
            *args,
        ],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "RUN_STATE_STORE": store},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_prune_removes_processes_of_code_that_no_longer_runs_and_placeholders_only_they_used(
    serve_on_each_store, run_state_store_kind, tmp_path
):
    serve = serve_on_each_store(key="k", env={"DATABRICKS_ENVIRONMENT_WAIT_SECONDS": "0"})
    atlas = Atlas(serve.atlas_url)
    long_ago = datetime.now(timezone.utc) - timedelta(days=120)
    recent = datetime.now(timezone.utc) - timedelta(days=2)
    old = dr.orders_run(1, long_ago, statement="legacy_copy.orders", inputs=(dr.KAFKA_PAYMENTS, dr.RAW_ORDERS))
    new = dr.orders_run(2, recent, inputs=(dr.RAW_ORDERS,))
    send(serve, tmp_path / "runs", *dr.events(old), *dr.events(new))
    legacy = ("databricks_process", f"{NOTEBOOK}/processes/legacy_copy.orders/{LAKE}/curated/orders")
    kafka = ("openlineage_dataset", "kafka://broker.contoso.com:9092/payments")
    assert {legacy, kafka, ("databricks_process", PROCESS)} <= atlas.keys()
    before = atlas.keys()

    listed = _prune(serve, run_state_store_kind, "--older-than", "30", "--dry-run")
    assert listed.splitlines()[1:] == [f"  {legacy[0]}  {legacy[1]}", f"  {kafka[0]}  {kafka[1]}"]
    assert "would remove 1 processes" in listed and "and 1 placeholders only they used" in listed
    assert atlas.keys() == before

    _prune(serve, run_state_store_kind, "--older-than", "30")
    assert atlas.keys() == before - {
        legacy,
        kafka,
        ("openlineage_column", f"{kafka[1]}#id"),
        ("openlineage_column", f"{kafka[1]}#amount"),
    }


def test_the_admin_route_resets_a_process_remembered_newest_run(serve_on_each_store, tmp_path):
    serve = serve_on_each_store(key="k", env={"DATABRICKS_ENVIRONMENT_WAIT_SECONDS": "0"})
    atlas = Atlas(serve.atlas_url)
    # a cluster with a wrong clock ran the notebook "in 2031": a later real run would be superseded
    send(
        serve,
        tmp_path / "future",
        *dr.events(dr.orders_run(1, datetime(2031, 1, 1, tzinfo=timezone.utc), inputs=(dr.RAW_ORDERS,))),
    )
    url = f"{serve.url}/api/ol2purview/processes/reset"
    refused = requests.post(url, params={"code": serve.key}, json={"processes": [PROCESS]}, timeout=10)
    assert refused.status_code == 401
    answer = requests.post(url, params={"code": serve.master_key}, json={"processes": [PROCESS]}, timeout=10)
    assert (answer.status_code, answer.json()) == (200, {"requested": 1, "reset": 1})
    send(serve, tmp_path / "real", *dr.events(dr.orders_run(2)))
    process = atlas.entity("databricks_process", PROCESS)
    assert (process["attributes"]["lastRunId"], refs(process, "inputs")) == (
        dr.run_id(2),
        [f"{LAKE}/raw/customers", f"{LAKE}/raw/orders"],
    )
    bad = requests.post(url, params={"code": serve.master_key}, json={"processes": []}, timeout=10)
    assert (bad.status_code, bad.json()["path"]) == (400, "$.processes")
