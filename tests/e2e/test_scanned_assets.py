"""Issue 19 end to end: lineage on the assets Purview's scanners registered, through `ol2purview serve` (the real
openlineage-python client sends, the worker writes into the embedded catalog), on both run-state stores (SQLite, and
Azure Table storage on Azurite).

Scanned assets are registered first through the Atlas API, as a scan would: a Delta output folder links to its
resource set (and no path is written beside it), a partitioned output to its partitioned resource set, a Unity
Catalog input to its `databricks_table`, a OneLake table to its `fabric_lakehouse_table`. A job run before
`ol2purview catalog scan` is re-linked by the timer (every second here) and its interim path removed. No scanned
entity is ever changed by the connector."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterator

import pytest
import requests

from tests.e2e.lineage_helpers import Atlas, notebook_process, refs, send_and_wait
from tests.support import databricks_runs as dr
from tests.support.repository import PROJECT_ROOT
from tests.support.scanned_assets import dataset, notebook_run, stable
from tests.support.serves import start_serve_on_store
from tests.support.waiting import wait_until
from tools.functions_host.launcher import ServeHandle

pytestmark = pytest.mark.e2e

LAKE = "https://lakeacct.dfs.core.windows.net"
SILVER = "abfss://silver@lakeacct.dfs.core.windows.net"
GOLD = "abfss://gold@lakeacct.dfs.core.windows.net"
UC_STORAGE = "abfss://uc@lakeacct.dfs.core.windows.net"
METASTORE = "0a1b2c3d-0000-4000-8000-00000000abcd"
WS_ID, LH_ID = "6f3c1a2b-1111-4222-8333-444455556666", "9e8d7c6b-aaaa-4bbb-8ccc-ddddeeeeffff"
ONELAKE = f"abfss://{WS_ID}@onelake.dfs.fabric.microsoft.com"
FABRIC_TABLE = f"https://app.fabric.microsoft.com/groups/{WS_ID}/lakehouses/{LH_ID}/tables/daily_orders"
UC_CUSTOMERS = f"databricks://{METASTORE}/catalogs/main/schemas/sales/tables/customers"
NOTEBOOK = f"databricks://{dr.HOST}/notebooks/Repos/etl/orders"
SCANNED = [
    ("azure_datalake_gen2_resource_set", f"{LAKE}/silver/orders/{{SparkPartitions}}", {"partitionCount": 4}),
    (
        "azure_datalake_gen2_resource_set",
        f"{LAKE}/silver/sales/Year={{Year}}/Month={{Month}}/{{SparkPartitions}}",
        {"partitionCount": 24},
    ),
    ("azure_datalake_gen2_resource_set", f"{LAKE}/silver/sales_eu/Year={{Year}}/{{SparkPartitions}}", {}),
    ("databricks_table", UC_CUSTOMERS, {"catalogName": "main", "schemaName": "sales", "tableType": "MANAGED"}),
    ("fabric_lakehouse_table", FABRIC_TABLE, {"format": "delta"}),
]


@pytest.fixture(scope="module", params=["sqlite", pytest.param("table", marks=pytest.mark.azurite)])
def serve(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    """One serve per run-state store, its scanned assets registered before any event; the re-link timer every
    second."""
    env = {"RELINK_TIMER_SCHEDULE": "* * * * * *", "DATABRICKS_WORKSPACE_HOSTS": f"{dr.WORKSPACE_ID}={dr.HOST}"}
    handle = start_serve_on_store(request.param, tmp_path_factory.mktemp(f"serve-{request.param}"), env)
    body = {
        "entities": [
            {
                "typeName": t,
                "guid": f"-{i}",
                "attributes": {"qualifiedName": q, "name": f"scanned {q.rsplit('/', 2)[-2]}", **attributes},
            }
            for i, (t, q, attributes) in enumerate(SCANNED, 1)
        ]
    }
    requests.post(f"{handle.atlas_url}/entity/bulk", json=body, timeout=10).raise_for_status()
    handle.scanned = {(t, q): stable(Atlas(handle.atlas_url).entity(t, q)) for t, q, _ in SCANNED}  # type: ignore
    yield handle
    assert handle.stop() == 0, handle.output()


def send(serve: ServeHandle, folder: Path, events: list[dict]) -> None:
    send_and_wait(serve, folder, events)


def process(serve: ServeHandle, statement: str) -> dict[str, Any]:
    return notebook_process(serve, NOTEBOOK, statement)


def keys(serve: ServeHandle, type_name: str) -> set[str]:
    return {q for t, q in Atlas(serve.atlas_url).keys() if t == type_name}


def assert_scanned_unchanged(serve: ServeHandle) -> None:
    atlas = Atlas(serve.atlas_url)
    assert {(t, q): stable(atlas.entity(t, q)) for t, q, _ in SCANNED} == serve.scanned  # type: ignore[attr-defined]


def test_a_delta_output_links_to_its_resource_set_and_no_path_is_written_beside_it(serve, tmp_path):
    raw = dataset(SILVER, "raw_orders")
    output = dataset(
        SILVER,
        "orders",
        storage={"_producer": dr.PRODUCER, "_schemaURL": "x", "storageLayer": "delta", "fileFormat": "parquet"},
    )
    send(serve, tmp_path, notebook_run(101, "write_delta.orders", [raw], output))

    orders = process(serve, "write_delta.orders")
    assert orders["attributes"]["qualifiedName"] == f"{NOTEBOOK}/processes/write_delta.orders/{LAKE}/silver/orders"
    assert refs(orders, "outputs") == [f"{LAKE}/silver/orders/{{SparkPartitions}}"]
    assert f"{LAKE}/silver/orders" not in keys(serve, "azure_datalake_gen2_path")
    assert [m["DatasetMapping"]["Sink"] for m in json.loads(orders["attributes"]["columnMapping"])] == [
        f"{LAKE}/silver/orders/{{SparkPartitions}}"
    ]
    assert_scanned_unchanged(serve)


def test_a_partitioned_output_named_by_its_root_links_to_its_partitioned_resource_set(serve, tmp_path):
    send(
        serve,
        tmp_path,
        notebook_run(102, "write_partitioned.sales", [dataset(SILVER, "raw_sales")], dataset(SILVER, "sales")),
    )
    sales = process(serve, "write_partitioned.sales")
    assert refs(sales, "outputs") == [f"{LAKE}/silver/sales/Year={{Year}}/Month={{Month}}/{{SparkPartitions}}"]
    assert f"{LAKE}/silver/sales" not in keys(serve, "azure_datalake_gen2_path")
    assert_scanned_unchanged(serve)


def test_a_unity_catalog_input_links_to_its_databricks_table(serve, tmp_path):
    customers = dataset(
        UC_STORAGE,
        "__unitystorage/catalogs/5e1f/tables/8a2c",
        symlinks={
            "_producer": dr.PRODUCER,
            "_schemaURL": "x",
            "identifiers": [{"namespace": "unity-catalog", "name": "main.sales.customers", "type": "TABLE"}],
        },
    )
    send(
        serve,
        tmp_path,
        notebook_run(103, "join_customers.customer_orders", [customers], dataset(SILVER, "customer_orders")),
    )
    joined = process(serve, "join_customers.customer_orders")
    assert refs(joined, "inputs") == [UC_CUSTOMERS]
    assert [m["DatasetMapping"]["Source"] for m in json.loads(joined["attributes"]["columnMapping"])] == [UC_CUSTOMERS]
    assert keys(serve, "databricks_unity_catalog_table") == set()  # nothing interim: the scanned table was found
    assert_scanned_unchanged(serve)


def test_a_onelake_table_links_to_its_fabric_lakehouse_table(serve, tmp_path):
    send(
        serve,
        tmp_path,
        notebook_run(
            104,
            "aggregate.daily_orders",
            [dataset(SILVER, "raw_orders")],
            dataset(ONELAKE, f"{LH_ID}/Tables/daily_orders"),
        ),
    )
    daily = process(serve, "aggregate.daily_orders")
    assert refs(daily, "outputs") == [FABRIC_TABLE]
    assert not any("onelake" in q for q in keys(serve, "openlineage_dataset"))
    assert_scanned_unchanged(serve)


def spark_output(folder: Path) -> None:
    """A Delta table folder as Spark leaves it: part files, the transaction log, a success marker."""
    for name in (
        "part-00000-8f850371-9b03-42c4-9d22-f83bc81c9b68-c000.snappy.parquet",
        "part-00001-8f850371-9b03-42c4-9d22-f83bc81c9b68-c000.snappy.parquet",
        "_delta_log/00000000000000000000.json",
        "_SUCCESS",
    ):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(b"PAR1" if name.endswith(".parquet") else b"{}")


def test_a_job_run_before_the_scan_is_relinked_by_the_timer_and_its_interim_path_removed(serve, tmp_path):
    revenue = f"{LAKE}/gold/revenue"
    send(
        serve,
        tmp_path / "events",
        notebook_run(105, "summarise.revenue", [dataset(SILVER, "raw_orders")], dataset(GOLD, "revenue")),
    )
    assert refs(process(serve, "summarise.revenue"), "outputs") == [revenue]  # interim: nothing scanned yet
    assert revenue in keys(serve, "azure_datalake_gen2_path")
    interim = serve.status()["runState"]["interimDatasets"]  # revenue, and inputs nothing was found for

    lake = tmp_path / "gold"
    spark_output(lake / "revenue")
    scanned = subprocess.run(
        [
            sys.executable,
            "-m",
            "tools.cli",
            "catalog",
            "scan",
            str(lake),
            "--account",
            "lakeacct",
            "--container",
            "gold",
            "--atlas-url",
            serve.atlas_url,
        ],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert scanned.returncode == 0, scanned.stdout + scanned.stderr
    resource_set = ("azure_datalake_gen2_resource_set", f"{revenue}/{{SparkPartitions}}")
    after_scan = stable(Atlas(serve.atlas_url).entity(*resource_set))

    wait_until(
        lambda: refs(process(serve, "summarise.revenue"), "outputs") == [resource_set[1]],
        timeout=60,
        what="the timer re-linking the process to the scanned resource set",
    )
    wait_until(
        lambda: revenue not in keys(serve, "azure_datalake_gen2_path"), timeout=30, what="the interim path deleted"
    )
    relinked = process(serve, "summarise.revenue")
    assert relinked["attributes"]["qualifiedName"] == f"{NOTEBOOK}/processes/summarise.revenue/{revenue}"
    assert [m["DatasetMapping"]["Sink"] for m in json.loads(relinked["attributes"]["columnMapping"])] == [
        resource_set[1]
    ]
    # the timer logs its summary after its deletions: wait for the line rather than read the output once
    wait_until(lambda: "Re-link: checked=" in serve.output(), timeout=30, what="the re-link summary line")
    assert serve.status()["runState"]["interimDatasets"] == interim - 1
    assert stable(Atlas(serve.atlas_url).entity(*resource_set)) == after_scan
    assert_scanned_unchanged(serve)


def test_prune_removes_a_linked_process_of_code_that_no_longer_runs_and_never_a_scanned_asset(serve, tmp_path, request):
    long_ago = datetime.now(timezone.utc) - timedelta(days=400)
    send(
        serve,
        tmp_path,
        notebook_run(
            106,
            "legacy_export.orders",
            [dataset("kafka://broker:9092", "legacy")],
            dataset(SILVER, "orders"),
            started=long_ago,
        ),
    )
    legacy = process(serve, "legacy_export.orders")
    assert refs(legacy, "outputs") == [f"{LAKE}/silver/orders/{{SparkPartitions}}"]
    placeholder = ("openlineage_dataset", "kafka://broker:9092/legacy")
    assert placeholder in Atlas(serve.atlas_url).keys()

    ledger = ["--data", str(serve.data_dir)]  # the connector's ledger: the run-state store of serve's data folder
    done = subprocess.run(
        [sys.executable, "-m", "tools.cli", "prune", "--older-than", "365", "--atlas-url", serve.atlas_url, *ledger],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "RUN_STATE_STORE": request.node.callspec.params["serve"]},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1:3] == [
        f"  databricks_process  {legacy['attributes']['qualifiedName']}",
        f"  {placeholder[0]}  {placeholder[1]}",
    ]
    keys = Atlas(serve.atlas_url).keys()
    assert ("databricks_process", legacy["attributes"]["qualifiedName"]) not in keys and placeholder not in keys
    assert {(t, q) for t, q, _ in SCANNED} <= keys
    assert_scanned_unchanged(serve)
