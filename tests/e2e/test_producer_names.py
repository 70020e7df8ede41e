"""Issue 31 end to end: today's producers name one scanned asset in different forms, and every form links to it,
through `ol2purview serve` (openlineage-python sends through `ol2purview replay`, the worker writes into the embedded
catalog), on both run-state stores (SQLite, and Azure Table storage on Azurite).

The scanned assets are registered first through the Atlas API, as Purview's scanners would: two Unity Catalog
`databricks_table`s of the workspace's metastore (DATABRICKS_METASTORE_IDS), one `databricks_table` of another
metastore (found by search), and an `azure_sql_table`. Each test asserts the exact inputs and outputs of every
process, and that no placeholder (`openlineage_dataset`, `databricks_unity_catalog_table`) is written beside a
scanned asset."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest
import requests

from tests.e2e.lineage_helpers import Atlas, refs, replay, write_events
from tests.support.serves import start_serve_on_store
from tools.functions_host.launcher import ServeHandle

pytestmark = pytest.mark.e2e

HOST = "adb-5550001112223334.4.azuredatabricks.net"
METASTORE = "0a1b2c3d-0000-4000-8000-00000000abcd"
OTHER_METASTORE = "7f7f7f7f-1111-4222-8333-999999999999"
UC = f"databricks://{METASTORE}/catalogs/main/schemas/sales/tables"
UC_ORDERS, UC_CUSTOMERS = f"{UC}/orders", f"{UC}/customers"
UC_PRODUCTS = f"databricks://{OTHER_METASTORE}/catalogs/shop/schemas/ref/tables/products"
SQL_ORDERS = "mssql://srv.database.windows.net/sales/crm/orders"
LAKE = "https://lakeacct.dfs.core.windows.net"
SILVER = "abfss://silver@lakeacct.dfs.core.windows.net"
PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.52.0/integration/dbt"
SCANNED = [
    ("databricks_table", UC_ORDERS, {"catalogName": "main", "schemaName": "sales", "tableType": "MANAGED"}),
    ("databricks_table", UC_CUSTOMERS, {"catalogName": "main", "schemaName": "sales", "tableType": "MANAGED"}),
    ("databricks_table", UC_PRODUCTS, {"catalogName": "shop", "schemaName": "ref", "tableType": "EXTERNAL"}),
    ("azure_sql_table", SQL_ORDERS, {}),
]
PLACEHOLDERS = ("openlineage_dataset", "databricks_unity_catalog_table")
PROCESS_TYPES = ("spark_process", "databricks_process", "openlineage_process")  # no jobType facet: the generic owner


@pytest.fixture(scope="module", params=["sqlite", pytest.param("table", marks=pytest.mark.azurite)])
def serve(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    """One serve per run-state store, the workspace's metastore configured, the scanned assets registered first."""
    handle = start_serve_on_store(
        request.param,
        tmp_path_factory.mktemp(f"names-{request.param}"),
        {"DATABRICKS_METASTORE_IDS": f"{HOST}={METASTORE}"},
    )
    body = {
        "entities": [
            {
                "typeName": t,
                "guid": f"-{i}",
                "attributes": {"qualifiedName": q, "name": q.rsplit("/", 1)[-1], **attributes},
            }
            for i, (t, q, attributes) in enumerate(SCANNED, 1)
        ]
    }
    requests.post(f"{handle.atlas_url}/entity/bulk", json=body, timeout=10).raise_for_status()
    handle.scanned = {(t, q): _stable(Atlas(handle.atlas_url).entity(t, q)) for t, q, _ in SCANNED}  # type: ignore
    yield handle
    assert handle.stop() == 0, handle.output()


def _stable(entity: dict[str, Any]) -> str:
    return json.dumps(
        {k: entity.get(k) for k in ("typeName", "guid", "status", "attributes", "classifications")}, sort_keys=True
    )


def dataset(namespace: str, name: str, **facets: Any) -> dict[str, Any]:
    return {
        "namespace": namespace,
        "name": name,
        "facets": {
            "schema": {
                "_producer": PRODUCER,
                "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
                "fields": [{"name": "id", "type": "long"}, {"name": "amount", "type": "decimal(10,2)"}],
            },
            **facets,
        },
    }


def run(job_namespace: str, job_name: str, inputs: list[dict], outputs: list[dict]) -> list[dict]:
    """START then COMPLETE of one run, its datasets on both."""
    run_id = str(uuid.uuid4())
    return [
        {
            "eventType": event_type,
            "eventTime": f"2026-05-01T10:0{minute}:00Z",
            "run": {"runId": run_id},
            "job": {"namespace": job_namespace, "name": job_name},
            "inputs": inputs,
            "outputs": outputs,
            "producer": PRODUCER,
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        }
        for minute, event_type in ((0, "START"), (1, "COMPLETE"))
    ]


def send(serve: ServeHandle, folder: Path, *events: dict) -> None:
    replay(serve, write_events(folder, *events))  # ol2purview replay: openlineage-python's HttpTransport
    serve.wait_until_processed()


def processes_writing(serve: ServeHandle, output: str) -> list[dict[str, Any]]:
    atlas = Atlas(serve.atlas_url)
    found = [e for e in atlas.all_entities() if e["typeName"] in PROCESS_TYPES]
    full = [atlas.entity(e["typeName"], e["attributes"]["qualifiedName"]) for e in found]
    return [p for p in full if output in refs(p, "outputs")]


def the_process(serve: ServeHandle, output: str, inputs: list[str]) -> dict[str, Any]:
    """The one process that writes `output` from exactly `inputs`."""
    found = [p for p in processes_writing(serve, output) if refs(p, "inputs") == sorted(inputs)]
    assert len(found) == 1, [(refs(p, "inputs"), refs(p, "outputs")) for p in processes_writing(serve, output)]
    return found[0]


def no_placeholder_beside_scanned(serve: ServeHandle) -> None:
    atlas = Atlas(serve.atlas_url)
    keys = atlas.keys()
    placeholders = sorted(q for t, q in keys if t in PLACEHOLDERS)
    assert not [
        q
        for q in placeholders
        if any(s in q for s in ("main.sales", "shop.ref", "crm", "databricks:", "unitycatalog", "mssql"))
    ], placeholders
    assert {(t, q): _stable(atlas.entity(t, q)) for t, q, _ in SCANNED} == serve.scanned  # type: ignore[attr-defined]


def test_dbt_databricks_model_links_its_scanned_unity_catalog_tables(serve, tmp_path):
    # dbt-ol: integration/common/src/openlineage/common/provider/dbt/processor.py extract_namespace,
    # Adapter.DATABRICKS -> f"databricks://{profile['host']}"; names {database}.{schema}.{table} (catalog.schema.table)
    send(
        serve,
        tmp_path,
        *run(
            "dbt",
            "jaffle.model.main.sales.orders",
            [dataset(f"databricks://{HOST}", "main.sales.customers")],
            [dataset(f"databricks://{HOST}", "main.sales.orders")],
        ),
    )
    process = the_process(serve, UC_ORDERS, [UC_CUSTOMERS])
    assert (refs(process, "inputs"), refs(process, "outputs")) == ([UC_CUSTOMERS], [UC_ORDERS])
    no_placeholder_beside_scanned(serve)


def test_unitycatalog_namespace_of_the_spec_links_its_scanned_table(serve, tmp_path):
    # website/docs/spec/naming.md, Unity Catalog: `unitycatalog://{host}:{port}` + `{catalog}.{schema}.{table}`
    send(
        serve,
        tmp_path,
        *run(
            "flink",
            "orders_export",
            [dataset(f"unitycatalog://{HOST}:443", "main.sales.orders")],
            [dataset(SILVER, "exports/orders")],
        ),
    )
    process = the_process(serve, f"{LAKE}/silver/exports/orders", [UC_ORDERS])
    assert (refs(process, "inputs"), refs(process, "outputs")) == ([UC_ORDERS], [f"{LAKE}/silver/exports/orders"])
    no_placeholder_beside_scanned(serve)


def test_spark4_unitycatalog_symlink_links_the_table_and_keeps_the_storage_path(serve, tmp_path):
    # spark40 UnityCatalogHandler.getDatasetIdentifier: the location, with the TABLE symlink catalog.schema.table in
    # unitycatalog://{authority of spark.sql.catalog.<name>.uri}
    symlink = {
        "_producer": PRODUCER,
        "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/SymlinksDatasetFacet.json",
        "identifiers": [{"namespace": f"unitycatalog://{HOST}", "name": "main.sales.customers", "type": "TABLE"}],
    }
    send(
        serve,
        tmp_path,
        *run(
            "spark",
            "uc_app.execute_insert_into_hadoop_fs_relation_command.orders",
            [dataset(SILVER, "ext/customers", symlinks=symlink)],
            [dataset(SILVER, "exports/customer_orders")],
        ),
    )
    process = the_process(serve, f"{LAKE}/silver/exports/customer_orders", [UC_CUSTOMERS])
    assert (refs(process, "inputs"), refs(process, "outputs")) == (
        [UC_CUSTOMERS],
        [f"{LAKE}/silver/exports/customer_orders"],
    )
    assert json.loads(process["attributes"]["datasetLocations"]) == {UC_CUSTOMERS: f"{LAKE}/silver/ext/customers"}
    assert f"{LAKE}/silver/ext/customers" not in {q for _, q in Atlas(serve.atlas_url).keys()}
    no_placeholder_beside_scanned(serve)


def test_a_unity_catalog_server_without_a_metastore_is_found_by_search(serve, tmp_path):
    # spark40 UnityCatalogHandler.unityCatalogNamespace of a server not in DATABRICKS_METASTORE_IDS
    send(
        serve,
        tmp_path,
        *run(
            "spark",
            "uc_app.products",
            [dataset("unitycatalog://uc.example.com:8080", "shop.ref.products")],
            [dataset(SILVER, "exports/products")],
        ),
    )
    process = the_process(serve, f"{LAKE}/silver/exports/products", [UC_PRODUCTS])
    assert refs(process, "inputs") == [UC_PRODUCTS]
    no_placeholder_beside_scanned(serve)


def test_airflow_mssql_and_spark_jdbc_of_one_table_link_the_one_scanned_table(serve, tmp_path):
    # Airflow MSSQL provider / naming.md MSSQL row: mssql://{host}:{port} + {database}.{schema}.{table}
    airflow = run(
        "airflow",
        "orders_dag.extract_orders",
        [dataset("mssql://srv.database.windows.net:1433", "sales.crm.orders")],
        [dataset(SILVER, "landing/orders")],
    )
    # openlineage-spark SqlServerJdbcExtractor (1.40+): sqlserver://{host}:{port} + {database}.{schema}.{table}
    spark = run(
        "spark",
        "orders_app.execute_save_into_data_source_command.orders",
        [dataset("sqlserver://srv.database.windows.net:1433", "sales.crm.orders")],
        [dataset(SILVER, "bronze/orders")],
    )
    send(serve, tmp_path, *airflow, *spark)
    first = the_process(serve, f"{LAKE}/silver/landing/orders", [SQL_ORDERS])
    second = the_process(serve, f"{LAKE}/silver/bronze/orders", [SQL_ORDERS])
    assert (refs(first, "inputs"), refs(first, "outputs")) == ([SQL_ORDERS], [f"{LAKE}/silver/landing/orders"])
    assert (refs(second, "inputs"), refs(second, "outputs")) == ([SQL_ORDERS], [f"{LAKE}/silver/bronze/orders"])
    assert [q for t, q in Atlas(serve.atlas_url).keys() if t == "azure_sql_table"] == [SQL_ORDERS]
    no_placeholder_beside_scanned(serve)
