"""`ol2purview columns` and the page's column routes, on catalog data written by the real pipeline from events
(a bronze -> silver -> gold chain of our own, and the shared compat-tests CLL sequence)."""

from __future__ import annotations

import json
from typing import Iterator

import pytest
import requests

from tests.catalog_server.pipeline_data import (
    BRONZE,
    CLL_SEQUENCE,
    CUSTOMERS,
    GOLD,
    SILVER,
    medallion_events,
    sequence_events,
    write_through_pipeline,
)
from tools.catalog import CatalogServer
from tools.cli import main

CLL_OUTPUT, CLL_SOURCE1, CLL_SOURCE2 = (
    "file:/tmp/cll_test/default.tbl1",
    "file:/tmp/cll_test/default.cll_source1",
    "file:/tmp/cll_test/default.cll_source2",
)


@pytest.fixture(scope="module")
def lineage_catalog(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CatalogServer]:
    """One catalog for the module (read-only tests): the medallion chain and the CLL sequence, via the pipeline."""
    folder = tmp_path_factory.mktemp("columns")
    server = CatalogServer(folder / "catalog.sqlite").start()
    assert write_through_pipeline(server.atlas_url, folder, medallion_events()) == ["written", "written"]
    write_through_pipeline(server.atlas_url, folder, sequence_events(CLL_SEQUENCE))
    yield server
    server.stop()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["columns", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def edges(answer: dict) -> list[tuple[str, str, str, str, str, bool, bool]]:
    return [
        (
            e["from"]["dataset"],
            e["from"]["column"],
            e["to"]["dataset"],
            e["to"]["column"],
            e["label"],
            e["indirect"],
            e["datasetLevel"],
        )
        for e in answer["edges"]
    ]


def test_json_traces_a_gold_column_up_through_both_hops(
    lineage_catalog: CatalogServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys, GOLD, "total_amount", "--direction", "up", "--json", "--atlas-url", lineage_catalog.atlas_url
    )
    assert (code, err) == (0, "")
    answer = json.loads(out)
    assert edges(answer) == [  # the first hop, then the second
        (CUSTOMERS, "country", GOLD, "total_amount", "INDIRECT GROUP_BY", True, False),
        (CUSTOMERS, "customer_id", GOLD, "total_amount", "INDIRECT JOIN", True, False),
        (SILVER, "amount", GOLD, "total_amount", "AGGREGATION", False, False),
        (SILVER, "customer_id", GOLD, "total_amount", "INDIRECT JOIN", True, False),
        (BRONZE, "amount", SILVER, "amount", "IDENTITY", False, False),
        (BRONZE, "status", SILVER, "amount", "INDIRECT FILTER", True, True),  # a filter on the whole dataset
        (BRONZE, "customer_id", SILVER, "customer_id", "IDENTITY", False, False),
        (BRONZE, "status", SILVER, "customer_id", "INDIRECT FILTER", True, True),
    ]
    assert [
        (d["qualifiedName"], d["typeName"], d["distance"], d["indirectOnly"], d["columns"]) for d in answer["datasets"]
    ] == [
        (BRONZE, "azure_datalake_gen2_path", -2, False, ["amount", "customer_id", "status"]),
        (CUSTOMERS, "azure_datalake_gen2_path", -1, True, ["country", "customer_id"]),
        (SILVER, "azure_datalake_gen2_path", -1, False, ["amount", "customer_id"]),
        (GOLD, "azure_datalake_gen2_path", 0, False, ["total_amount"]),
    ]
    assert sorted(p["name"] for p in answer["processes"]) == ["gold_sales_by_country", "silver_orders"]


def test_text_traces_down_with_depth(lineage_catalog: CatalogServer, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        BRONZE,
        "amount",
        "--type",
        "azure_datalake_gen2_path",
        "--direction",
        "down",
        "--atlas-url",
        lineage_catalog.atlas_url,
    )
    assert code == 0
    assert out.splitlines() == [
        f"Column lineage of {BRONZE} . amount  (down, depth 10)",
        "downstream: 2 edge(s)",
        f"  +1  {BRONZE} . amount  --IDENTITY-->  {SILVER} . amount  via silver_orders",
        f"  +2  {SILVER} . amount  --AGGREGATION-->  {GOLD} . total_amount  via gold_sales_by_country",
    ]
    _, one_hop, _ = run(
        capsys, BRONZE, "amount", "--direction", "down", "--depth", "1", "--atlas-url", lineage_catalog.atlas_url
    )
    assert one_hop.splitlines()[1:] == [
        "downstream: 1 edge(s)",
        f"  +1  {BRONZE} . amount  --IDENTITY-->  {SILVER} . amount  via silver_orders",
    ]


def test_the_shared_cll_sequence(lineage_catalog: CatalogServer, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, CLL_OUTPUT, "agg", "--json", "--atlas-url", lineage_catalog.atlas_url)
    assert code == 0
    assert edges(json.loads(out)) == [
        (CLL_SOURCE1, "a", CLL_OUTPUT, "agg", "INDIRECT FILTER, INDIRECT GROUP_BY, INDIRECT JOIN", True, False),
        (CLL_SOURCE1, "b", CLL_OUTPUT, "agg", "INDIRECT GROUP_BY", True, False),
        (CLL_SOURCE2, "a", CLL_OUTPUT, "agg", "INDIRECT FILTER, INDIRECT JOIN", True, False),
        (CLL_SOURCE2, "c", CLL_OUTPUT, "agg", "AGGREGATION", False, False),
    ]


def test_unknown_dataset_and_bad_arguments(lineage_catalog: CatalogServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "lake://nowhere", "x", "--atlas-url", lineage_catalog.atlas_url) == (
        2,
        "",
        "ol2purview columns: no entity with qualifiedName lake://nowhere\n",
    )
    assert run(capsys, GOLD, "x", "--type", "hive_table", "--atlas-url", lineage_catalog.atlas_url) == (
        2,
        "",
        f"ol2purview columns: no hive_table with qualifiedName {GOLD}; nearest: {GOLD}\n",  # another type's
    )
    code, _, err = run(capsys, GOLD, "x", "--type", "no_such_type", "--atlas-url", lineage_catalog.atlas_url)
    assert (code, err) == (
        1,
        "ol2purview columns: the catalog answered an error: catalog answered 400 "
        "ATLAS-400-00-014: Type ENTITY with name no_such_type does not exist\n",
    )
    assert run(capsys, GOLD, "x", "--depth", "-1", "--atlas-url", lineage_catalog.atlas_url) == (
        2,
        "",
        "ol2purview columns: --depth must be 0 (no limit) or more\n",
    )


def test_a_misspelled_column_or_dataset_exits_2_offering_the_nearest_names(
    lineage_catalog: CatalogServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 43: a misspelled column answered an empty trace and exit 0."""
    assert run(capsys, GOLD, "total_amout", "--atlas-url", lineage_catalog.atlas_url) == (
        2,
        "",
        f"ol2purview columns: no column lineage names column total_amout of {GOLD}; nearest: total_amount\n",
    )
    misspelled = GOLD[:-2] + GOLD[-1]
    assert run(capsys, misspelled, "total_amount", "--atlas-url", lineage_catalog.atlas_url) == (
        2,
        "",
        f"ol2purview columns: no entity with qualifiedName {misspelled}; nearest: {GOLD}\n",
    )


def test_page_routes_columns_lineage_and_grouped_search(lineage_catalog: CatalogServer) -> None:
    search = requests.get(f"{lineage_catalog.url}/_ol2purview/page/search", params={"q": "tbl1"}, timeout=10).json()
    datasets = [g for g in search["groups"] if g["entity"]["typeName"] == "openlineage_dataset"]
    assert [
        (g["entity"]["attributes"]["qualifiedName"], [c["attributes"]["name"] for c in g["columns"]]) for g in datasets
    ] == [(CLL_OUTPUT, ["agg", "ident", "trans"])]  # its columns grouped under it
    assert [(g["entity"]["typeName"], g["columns"]) for g in search["groups"] if g not in datasets] == [
        ("spark_process", [])
    ]  # the process writing tbl1 (its qualifiedName names its output)
    silver = requests.get(
        f"{lineage_catalog.atlas_url}/entity/uniqueAttribute/type/azure_datalake_gen2_path",
        params={"attr:qualifiedName": SILVER},
        timeout=10,
    ).json()["entity"]["guid"]
    columns = requests.get(
        f"{lineage_catalog.url}/_ol2purview/page/columns", params={"guid": silver}, timeout=10
    ).json()["columns"]
    assert columns == [
        {"name": n, "inSchema": False, "inLineage": True} for n in ("amount", "customer_id", "full_name", "order_id")
    ]
    graph = requests.get(
        f"{lineage_catalog.url}/_ol2purview/page/column-lineage",
        timeout=10,
        params={"guid": silver, "column": "full_name", "direction": "both"},
    ).json()
    assert edges(graph) == [
        (BRONZE, "first", SILVER, "full_name", "TRANSFORMATION", False, False),
        (BRONZE, "last", SILVER, "full_name", "TRANSFORMATION", False, False),
        (BRONZE, "status", SILVER, "full_name", "INDIRECT FILTER", True, True),
    ]
    bad = requests.get(
        f"{lineage_catalog.url}/_ol2purview/page/column-lineage",
        timeout=10,
        params={"guid": silver, "column": "x", "direction": "left"},
    )
    assert (bad.status_code, bad.json()) == (
        400,
        {
            "errorCode": "ATLAS-400-00-01A",
            "errorMessage": "invalid parameters: direction must be one of up, down, both, got 'left'",
        },
    )
