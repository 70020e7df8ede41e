"""Issue 45 end to end: the stores Purview scans whose scanned form no source confirms (Oracle, Teradata, Db2,
Cassandra, BigQuery, Redshift, S3, Fabric Warehouse) are found by Purview's own search, through `ol2purview serve`
(openlineage-python's HttpTransport sends, the worker writes into the embedded catalog).

Scanner-shaped assets are registered first through the Atlas API: a plausible type per store whose `serviceType` is
the source's `assetType` (tests/support/searched_stores.py), the stores' qualifiedNames in two layouts. A Databricks
notebook run reading the naming spec's form of each store links to the registered assets; two assets holding a
dataset's parts, or none, leave the placeholder, and `qn-tester --explain --catalog` says which; an asset registered
after the run (a scan that comes later) is re-linked by the timer (every second here) and the placeholder removed.
No registered asset is ever changed by the connector."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.e2e.lineage_helpers import Atlas, notebook_process, refs, send_and_wait
from tests.support import databricks_runs as dr
from tests.support.qn_tester_runs import qn_tester
from tests.support.scanned_assets import dataset, notebook_run, stable
from tests.support.searched_stores import STORES, register_assets, register_store_types
from tests.support.serves import start_serve_on_store
from tests.support.waiting import wait_until
from tools.functions_host.launcher import ServeHandle

pytestmark = pytest.mark.e2e

SILVER = "abfss://silver@lakeacct.dfs.core.windows.net"
NOTEBOOK = f"databricks://{dr.HOST}/notebooks/Repos/etl/orders"
# one asset per store, the layouts alternating, so that each layout kind is met; and a near miss per store (a longer
# table name) that must never be taken
SCANNED = [(s.type_name, s.layouts[i % 2]) for i, s in enumerate(STORES)]
NEAR_MISSES = [(s.type_name, s.layouts[i % 2] + "_old") for i, s in enumerate(STORES)]
# Teradata's `sales.customers` registered twice (two layouts): ambiguous
TWICE = [
    ("teradata_table", "teradata://td.example.com/sales/customers"),
    ("teradata_table", "teradata://td.example.com:1025/SALES.CUSTOMERS"),
]


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    env = {"RELINK_TIMER_SCHEDULE": "* * * * * *", "DATABRICKS_WORKSPACE_HOSTS": f"{dr.WORKSPACE_ID}={dr.HOST}"}
    handle = start_serve_on_store("sqlite", tmp_path_factory.mktemp("serve-searched"), env)
    register_store_types(handle.atlas_url)
    register_assets(handle.atlas_url, *SCANNED, *NEAR_MISSES, *TWICE)
    handle.scanned = registered(handle)  # type: ignore[attr-defined]
    yield handle
    assert handle.stop() == 0, handle.output()


def registered(serve: ServeHandle) -> dict[tuple[str, str], str]:
    atlas = Atlas(serve.atlas_url)
    return {key: stable(atlas.entity(*key)) for key in (*SCANNED, *NEAR_MISSES, *TWICE)}


def send(serve: ServeHandle, folder: Path, events: list[dict]) -> None:
    send_and_wait(serve, folder, events)


def process(serve: ServeHandle, statement: str) -> dict[str, Any]:
    return notebook_process(serve, NOTEBOOK, statement)


def placeholders(serve: ServeHandle) -> set[str]:
    return {q for t, q in Atlas(serve.atlas_url).keys() if t == "openlineage_dataset"}


def test_a_run_reading_each_of_the_eight_stores_links_to_the_assets_their_scans_registered(serve, tmp_path):
    inputs = [dataset(s.namespace, s.name) for s in STORES]
    send(serve, tmp_path, notebook_run(201, "extract.all_sources", inputs, dataset(SILVER, "all_sources")))

    extract = process(serve, "extract.all_sources")
    assert refs(extract, "inputs") == sorted(q for _, q in SCANNED)
    # nothing written beside the scanned assets
    assert [q for q in placeholders(serve) if any(s.name in q for s in STORES)] == []
    assert registered(serve) == serve.scanned  # type: ignore[attr-defined]


def test_two_assets_or_none_leave_the_placeholder_and_explain_says_which(serve, tmp_path):
    # naming spec L36 Teradata `teradata://{host}:{port}` + `{database}.{table}`; L34 Oracle
    # `oracle://{host}:{port}` + `{serviceName}.{schema}.{table}`
    customers = dataset("teradata://td.example.com:1025", "sales.customers")
    returns = dataset("oracle://ora.example.com:1521", "ORCL.SALES.RETURNS")
    send(serve, tmp_path, notebook_run(202, "extract.unresolved", [customers, returns], dataset(SILVER, "unresolved")))

    both = [
        "oracle://ora.example.com:1521/ORCL.SALES.RETURNS",
        "teradata://td.example.com:1025/sales.customers",
    ]
    assert refs(process(serve, "extract.unresolved"), "inputs") == both
    assert set(both) <= placeholders(serve)

    done = qn_tester(
        "--namespace", "teradata://td.example.com:1025", "--name", "sales.customers", "--explain",
        "--catalog", serve.atlas_url,
    )  # fmt: skip
    assert done.stdout.splitlines()[-2:] == [
        "  1. search assetType Teradata …//td.example.com…sales…customers  (Teradata scan (search: assetType "
        "Teradata, the dataset's parts in order))  [2 hits of that shape, ambiguous, nothing linked: "
        "teradata://td.example.com/sales/customers, teradata://td.example.com:1025/SALES.CUSTOMERS]",
        f"nothing found in {serve.atlas_url}: written as openlineage_dataset "
        "teradata://td.example.com:1025/sales.customers; the re-link timer looks again later",
    ]
    done = qn_tester(
        "--namespace", "oracle://ora.example.com:1521", "--name", "ORCL.SALES.RETURNS", "--explain",
        "--catalog", serve.atlas_url,
    )  # fmt: skip
    assert done.stdout.splitlines()[-2] == (
        "  1. search assetType Oracle …//ora.example.com…ORCL…SALES…RETURNS  (Oracle scan (search: assetType "
        "Oracle, the dataset's parts in order))  [no hit of that shape]"
    )
    assert registered(serve) == serve.scanned  # type: ignore[attr-defined]


def test_a_run_before_the_scan_is_relinked_by_the_timer_and_its_placeholder_removed(serve, tmp_path):
    # naming spec L25 Cassandra `cassandra://{host}:{port}` + `{keyspace}.{table}`
    shipments = dataset("cassandra://cass.example.com:9042", "shop.shipments")
    placeholder = "cassandra://cass.example.com:9042/shop.shipments"
    send(serve, tmp_path, notebook_run(203, "extract.shipments", [shipments], dataset(SILVER, "shipments")))
    assert refs(process(serve, "extract.shipments"), "inputs") == [placeholder]  # nothing scanned yet

    scanned = ("cassandra_table", "cassandra://cass.example.com:9042/keyspaces/shop/tables/shipments")
    register_assets(serve.atlas_url, scanned)  # the scan, later
    after_scan = stable(Atlas(serve.atlas_url).entity(*scanned))
    wait_until(
        lambda: refs(process(serve, "extract.shipments"), "inputs") == [scanned[1]],
        timeout=60,
        what="the timer re-linking the process to the scanned Cassandra table",
    )
    wait_until(lambda: placeholder not in placeholders(serve), timeout=30, what="the placeholder deleted")
    assert stable(Atlas(serve.atlas_url).entity(*scanned)) == after_scan
    assert registered(serve) == serve.scanned  # type: ignore[attr-defined]
