"""Purview's discovery query (Data Map API 2023-09-01, "Discovery - Query") on the embedded catalog, driven by
Microsoft's own SDK `azure-purview-datamap`: the filter grammar of the documented examples (and/or/not, entityType
with includeSubTypes, objectType, assetType, id, fileExtension, createTime/updateTime, attributeName/operator/
attributeValue), orderby, paging with the continuation token until it is exhausted, limit bounds and errors."""

from __future__ import annotations

from typing import Any

import pytest
from azure.core.exceptions import HttpResponseError
from azure.purview.datamap import DataMapClient

from tests.support.catalog_clients import Calls
from tools.catalog import CatalogServer

LAKE = "https://contosolake.dfs.core.windows.net/silver"
BLOB = "https://contosoblob.blob.core.windows.net/landing"
UC = "databricks://0c1d2e3f-0000-4000-8000-00000000abcd/catalogs/main/schemas/sales/tables"


def _load(datamap: DataMapClient) -> dict[str, str]:
    entities = [
        ("azure_datalake_gen2_resource_set", f"{LAKE}/orders/{{SparkPartitions}}", "orders", {"partitionCount": 4}),
        (
            "azure_datalake_gen2_resource_set",
            f"{LAKE}/sales/Year={{Year}}/{{SparkPartitions}}",
            "sales",
            {"partitionCount": 12},
        ),
        ("azure_datalake_gen2_path", f"{LAKE}/orders", "orders", {"isFile": False}),
        ("azure_datalake_gen2_path", f"{LAKE}/readme.txt", "readme.txt", {"isFile": True, "size": 120}),
        ("azure_blob_path", f"{BLOB}/drop/orders.csv", "orders.csv", {"isFile": True, "size": 2048}),
        ("azure_blob_resource_set", f"{BLOB}/logs/{{N}}.json", "logs", {"partitionCount": 30}),
        ("databricks_table", f"{UC}/orders", "orders", {"catalogName": "main", "schemaName": "sales"}),
        ("databricks_table_column", f"{UC}/orders/columns/amount", "amount", {"dataType": "decimal(10,2)"}),
        ("azure_datalake_gen2_filesystem", "https://contosolake.dfs.core.windows.net/silver", "silver", {}),
    ]
    created = datamap.entity.batch_create_or_update(
        {
            "entities": [
                {"typeName": type_name, "guid": f"-{i}", "attributes": {"qualifiedName": qn, "name": name, **extra}}
                for i, (type_name, qn, name, extra) in enumerate(entities, start=1)
            ]
        }
    )
    return {qn: created.guid_assignments[f"-{i}"] for i, (_t, qn, _n, _e) in enumerate(entities, start=1)}


def _names(result: Any) -> list[tuple[str, str]]:
    return [(v["entityType"], v["qualifiedName"]) for v in result["value"]]


def test_and_or_not_and_entity_types(datamap: DataMapClient, open_catalog: CatalogServer) -> None:
    g = _load(datamap)
    Calls(open_catalog).reset()
    either = datamap.discovery.query(
        {
            "keywords": "orders",
            "filter": {
                "and": [
                    {"or": [{"entityType": "azure_datalake_gen2_resource_set"}, {"entityType": "databricks_table"}]},
                    {"not": {"attributeName": "qualifiedName", "operator": "contains", "attributeValue": "/columns/"}},
                ]
            },
        }
    )
    assert (either["@search.count"], _names(either)) == (
        2,
        [  # by name, then qualifiedName
            ("databricks_table", f"{UC}/orders"),
            ("azure_datalake_gen2_resource_set", f"{LAKE}/orders/{{SparkPartitions}}"),
        ],
    )
    record = dict(either["value"][1])
    assert all(isinstance(record.pop(key), int) for key in ("createTime", "updateTime"))
    assert record == {
        "@search.highlights": {
            "qualifiedName": [f"{LAKE}/<em>orders</em>/{{SparkPartitions}}"],
            "name": ["<em>orders</em>"],
        },
        "objectType": "Files",
        "@search.score": 1.0,
        "id": g[f"{LAKE}/orders/{{SparkPartitions}}"],
        "qualifiedName": f"{LAKE}/orders/{{SparkPartitions}}",
        "name": "orders",
        "description": None,
        "owner": None,
        "entityType": "azure_datalake_gen2_resource_set",
        "classification": [],
        "label": [],
        "assetType": ["Azure Data Lake Storage Gen2"],
        "term": [],
        "contact": [],
    }
    datasets = datamap.discovery.query(
        {
            "keywords": None,
            "filter": {
                "and": [{"entityType": "DataSet", "includeSubTypes": True}, {"assetType": "Azure Blob Storage"}]
            },
        }
    )
    assert _names(datasets) == [
        ("azure_blob_resource_set", f"{BLOB}/logs/{{N}}.json"),
        ("azure_blob_path", f"{BLOB}/drop/orders.csv"),
    ]
    without_subtypes = datamap.discovery.query({"filter": {"entityType": "DataSet", "includeSubTypes": False}})
    assert without_subtypes["@search.count"] == 0
    tables = datamap.discovery.query({"filter": {"and": [{"objectType": "Tables"}, {"id": g[f"{UC}/orders"]}]}})
    assert _names(tables) == [("databricks_table", f"{UC}/orders")]
    folders = datamap.discovery.query({"filter": {"objectType": "Folders"}})
    assert _names(folders) == [("azure_datalake_gen2_filesystem", "https://contosolake.dfs.core.windows.net/silver")]
    assert _names(datamap.discovery.query({"filter": {"fileExtension": "TXT"}})) == [
        ("azure_datalake_gen2_path", f"{LAKE}/readme.txt")
    ]
    assert Calls(open_catalog).routes() == {"POST /search/query": 6}


@pytest.mark.parametrize(
    "operator, value, expected",
    [
        ("eq", f"{LAKE}/orders", [f"{LAKE}/orders"]),
        ("startswith", f"{LAKE}/orders", [f"{LAKE}/orders", f"{LAKE}/orders/{{SparkPartitions}}"]),
        ("prefix", f"{LAKE.upper()}/SALES/", [f"{LAKE}/sales/Year={{Year}}/{{SparkPartitions}}"]),
        (
            "endswith",
            "{SparkPartitions}",
            [f"{LAKE}/orders/{{SparkPartitions}}", f"{LAKE}/sales/Year={{Year}}/{{SparkPartitions}}"],
        ),
        (
            "contains",
            "/silver/",
            [
                f"{LAKE}/orders",
                f"{LAKE}/orders/{{SparkPartitions}}",
                f"{LAKE}/readme.txt",
                f"{LAKE}/sales/Year={{Year}}/{{SparkPartitions}}",
            ],
        ),
    ],
)
def test_string_operators_on_the_qualified_name(
    datamap: DataMapClient, operator: str, value: str, expected: list[str]
) -> None:
    _load(datamap)
    found = datamap.discovery.query(
        {
            "filter": {
                "and": [
                    {"attributeName": "qualifiedName", "operator": operator, "attributeValue": value},
                    {"entityType": "DataSet", "includeSubTypes": True},
                ]
            }
        }
    )
    assert [v["qualifiedName"] for v in found["value"]] == expected


def test_ne_and_number_operators_on_attributes(datamap: DataMapClient) -> None:
    _load(datamap)
    big = datamap.discovery.query(
        {
            "filter": {"attributeName": "partitionCount", "operator": "ge", "attributeValue": 12},
            "orderby": [{"qualifiedName": "DESC"}],
        }
    )
    assert [v["qualifiedName"] for v in big["value"]] == [
        f"{LAKE}/sales/Year={{Year}}/{{SparkPartitions}}",
        f"{BLOB}/logs/{{N}}.json",
    ]
    small = datamap.discovery.query(
        {
            "filter": {
                "or": [
                    {"attributeName": "size", "operator": "lt", "attributeValue": 1000},
                    {"attributeName": "partitionCount", "operator": "le", "attributeValue": 4},
                ]
            }
        }
    )
    assert [v["name"] for v in small["value"]] == ["orders", "readme.txt"]
    not_orders = datamap.discovery.query(
        {
            "filter": {
                "and": [
                    {"entityType": "azure_datalake_gen2_resource_set"},
                    {"attributeName": "name", "operator": "ne", "attributeValue": "orders"},
                ]
            }
        }
    )
    assert [v["name"] for v in not_orders["value"]] == ["sales"]
    over = datamap.discovery.query({"filter": {"attributeName": "size", "operator": "gt", "attributeValue": 2000}})
    assert [v["name"] for v in over["value"]] == ["orders.csv"]


def test_system_times(datamap: DataMapClient) -> None:
    _load(datamap)
    recent = datamap.discovery.query(
        {"filter": {"and": [{"updateTime": "LAST_24H"}, {"entityType": "databricks_table"}]}}
    )
    assert recent["@search.count"] == 1
    assert datamap.discovery.query({"filter": {"createTime": "MORE_THAN_365D"}})["@search.count"] == 0
    before_2020 = datamap.discovery.query(
        {"filter": {"createTime": {"operator": "lt", "timeThreshold": 1577836800000}}}
    )
    after_2020 = datamap.discovery.query(
        {
            "filter": {
                "and": [
                    {"createTime": {"operator": "gt", "timeThreshold": 1577836800000}},
                    {"attributeName": "updateTime", "operator": "timerange", "attributeValue": "LAST_7D"},
                ]
            }
        }
    )
    assert (before_2020["@search.count"], after_2020["@search.count"]) == (0, 9)


def test_paging_with_the_continuation_token_until_exhausted(
    datamap: DataMapClient, open_catalog: CatalogServer
) -> None:
    _load(datamap)
    Calls(open_catalog).reset()
    query: dict[str, Any] = {
        "keywords": None,
        "limit": 2,
        "orderby": [{"name": "ASC"}, {"qualifiedName": "DESC"}],
        "filter": {"entityType": "DataSet", "includeSubTypes": True},
    }
    pages, token = [], None
    while True:
        page = datamap.discovery.query({**query, "continuationToken": token} if token else query)
        pages.append([v["name"] for v in page["value"]])
        assert page["@search.count"] == 9
        token = page.get("continuationToken")
        if token is None:
            break
    assert pages == [
        ["amount", "logs"],
        ["orders", "orders"],
        ["orders", "orders.csv"],
        ["readme.txt", "sales"],
        ["silver"],
    ]
    assert Calls(open_catalog).routes() == {"POST /search/query": 5}


def test_limit_bounds_and_errors(datamap: DataMapClient) -> None:
    _load(datamap)
    assert len(datamap.discovery.query({"limit": 1000})["value"]) == 9
    assert len(datamap.discovery.query({})["value"]) == 9  # default 50
    first = datamap.discovery.query({"limit": 1, "keywords": "orders"})
    cases = [
        ({"limit": 1001}, "invalid parameters: 'limit' must be an integer from 1 to 1000"),
        ({"limit": 0}, "invalid parameters: 'limit' must be an integer from 1 to 1000"),
        (
            {"keywords": "sales", "limit": 1, "continuationToken": first["continuationToken"]},
            "invalid parameters: continuationToken belongs to another query (keywords, filter, orderby)",
        ),
        ({"continuationToken": "not-a-token"}, "invalid parameters: continuationToken is not one this catalog issued"),
        (
            {"filter": {"attributeName": "name", "operator": "like", "attributeValue": "x"}},
            "invalid parameters: unsupported filter operator 'like' (use one of ['contains', 'endswith', 'eq', 'ge', "
            "'gt', 'le', 'lt', 'ne', 'prefix', 'startswith', 'timerange'])",
        ),
        (
            {"filter": {"updateTime": "YESTERDAY"}},
            "invalid parameters: time range on 'updateTime' must be one of ['LAST_24H', 'LAST_7D', 'LAST_30D', "
            "'LAST_365D', 'MORE_THAN_365D'], got \"YESTERDAY\"",
        ),
        ({"filter": {"and": []}}, "invalid parameters: filter 'and' must be a non-empty list of clauses"),
        (
            {"orderby": [{"size": "ASC"}]},
            'invalid parameters: orderby {"size": "ASC"}: sort by one of '
            "['createTime', 'entityType', 'id', 'name', 'qualifiedName', 'updateTime'], "
            "ASC or DESC",
        ),
    ]
    for body, message in cases:
        with pytest.raises(HttpResponseError) as refused:
            datamap.discovery.query(body)
        assert (refused.value.status_code, refused.value.response.json()) == (
            400,
            {"errorCode": "ATLAS-400-00-01A", "errorMessage": message},
        ), body
    with pytest.raises(HttpResponseError) as unknown:
        datamap.discovery.query({"filter": {"entityType": "no_such_type"}})
    assert (unknown.value.status_code, unknown.value.response.json()) == (
        400,
        {"errorCode": "ATLAS-400-00-014", "errorMessage": "Type ENTITY with name no_such_type does not exist"},
    )
