"""Microsoft's Purview Data Map SDK (`azure-purview-datamap` 1.0.0b2) against the embedded catalog, route by route.

The SDK targets `{endpoint}/datamap/api` (Atlas under `/atlas/v2`, Purview's search under `/search`), sends a bearer
token from a TokenCredential and `api-version=2023-09-01` on Purview routes. Over plain HTTP it needs
`enforce_https=False` in the request context (AllowPlainHttp, tests/support/catalog_clients.py). Its models are
dict-like: `dict(model)` is what the server answered.
"""

from __future__ import annotations

from typing import Any

import pytest
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.purview.datamap import DataMapClient

from tests.support.catalog_clients import HOST, LAKE, SCANNER_RELATIONSHIPS, Calls, without_times
from tools.catalog import CatalogServer

ORDERS, RETURNS, SALES = f"{LAKE}/orders.csv", f"{LAKE}/returns.csv", f"default.sales@{HOST}"
PROCESS = f"{HOST}/jobs/7/processes/load_sales"


def plain(model: Any) -> Any:
    """An SDK model (or list of them) as plain JSON."""
    if isinstance(model, list):
        return [plain(m) for m in model]
    if hasattr(model, "as_dict"):
        return model.as_dict()
    return model


def load(datamap: DataMapClient) -> dict[str, str]:
    datamap.type_definition.batch_create(
        {
            "entityDefs": [
                {
                    "name": "datamap_suite_process",
                    "superTypes": ["Process"],
                    "attributeDefs": [{"name": "columnMapping", "typeName": "string", "isOptional": True}],
                }
            ]
        }
    )
    created = datamap.entity.batch_create_or_update(
        {
            "entities": [
                {
                    "typeName": "azure_datalake_gen2_path",
                    "guid": "-1",
                    "attributes": {"qualifiedName": ORDERS, "name": "orders.csv"},
                },
                {
                    "typeName": "azure_datalake_gen2_path",
                    "guid": "-2",
                    "attributes": {"qualifiedName": RETURNS, "name": "returns.csv"},
                },
                {"typeName": "hive_table", "guid": "-3", "attributes": {"qualifiedName": SALES, "name": "sales"}},
                {
                    "typeName": "datamap_suite_process",
                    "guid": "-4",
                    "attributes": {
                        "qualifiedName": PROCESS,
                        "name": "load_sales",
                        "inputs": [{"guid": "-1"}],
                        "outputs": [{"guid": "-3"}],
                    },
                },
            ]
        }
    )
    g = created.guid_assignments
    return {"orders": g["-1"], "returns": g["-2"], "sales": g["-3"], "process": g["-4"]}


def mutation(guid: str, type_name: str, qualified_name: str, modifications: str, status: str = "ACTIVE") -> dict:
    return {
        "typeName": type_name,
        "attributes": {"qualifiedName": qualified_name},
        "lastModifiedTS": modifications,
        "guid": guid,
        "status": status,
    }


def test_typedefs(datamap: DataMapClient, open_catalog: CatalogServer) -> None:
    created = datamap.type_definition.batch_create({"entityDefs": [{"name": "sdk_dataset", "superTypes": ["DataSet"]}]})
    assert [(d.name, d.super_types, d.version) for d in created.entity_defs] == [("sdk_dataset", ["DataSet"], 1)]
    dataset = datamap.type_definition.get_entity_by_name("DataSet")
    assert (dataset.super_types, "sdk_dataset" in dataset.sub_types) == (["Asset"], True)
    assert datamap.type_definition.get_by_name("sdk_dataset").category == "ENTITY"
    assert datamap.type_definition.get_entity_by_id(created.entity_defs[0].guid).name == "sdk_dataset"
    relationship = datamap.type_definition.get_relationship_by_name("process_dataset_outputs")
    assert (relationship.end_def1.name, relationship.end_def2.name) == ("outputs", "outputFromProcesses")
    headers = datamap.type_definition.get_headers(type="relationship")
    assert [h.name for h in headers] == ["dataset_process_inputs", "process_dataset_outputs", *SCANNER_RELATIONSHIPS]
    relationship_defs = datamap.type_definition.get(type="relationship")
    assert (relationship_defs.entity_defs, len(relationship_defs.relationship_defs)) == ([], 20)
    updated = datamap.type_definition.batch_update(
        {
            "entityDefs": [
                {
                    "name": "sdk_dataset",
                    "superTypes": ["DataSet"],
                    "attributeDefs": [{"name": "rows", "typeName": "long"}],
                }
            ]
        }
    )
    assert [(d.version, [a.name for a in d.attribute_defs]) for d in updated.entity_defs] == [(2, ["rows"])]
    datamap.type_definition.delete("sdk_dataset")
    with pytest.raises(ResourceNotFoundError) as gone:
        datamap.type_definition.get_by_name("sdk_dataset")
    assert gone.value.response.json() == {
        "errorCode": "ATLAS-404-00-001",
        "errorMessage": "Given typename sdk_dataset was invalid",
    }
    assert Calls(open_catalog).routes() == {
        "POST /types/typedefs": 1,
        "GET /types/{category}/name/{name}": 4,
        "GET /types/typedefs/headers": 1,
        "GET /types/{category}/guid/{guid}": 1,
        "GET /types/typedefs": 1,
        "PUT /types/typedefs": 1,
        "DELETE /types/{category}/name/{name}": 1,
    }


def test_entity_reads(datamap: DataMapClient, open_catalog: CatalogServer) -> None:
    g = load(datamap)
    Calls(open_catalog).reset()
    single = datamap.entity.get(g["process"], ignore_relationships=True)
    assert without_times(plain(single.entity)) == {
        "typeName": "datamap_suite_process",
        "guid": g["process"],
        "status": "ACTIVE",
        "createdBy": "admin",
        "updatedBy": "admin",
        "createTime": "<time>",
        "updateTime": "<time>",
        "version": 0,
        "lastModifiedTS": "1",
        "collectionId": "ol2purview",
        "attributes": {
            "qualifiedName": PROCESS,
            "name": "load_sales",
            "inputs": [
                {
                    "guid": g["orders"],
                    "typeName": "azure_datalake_gen2_path",
                    "uniqueAttributes": {"qualifiedName": ORDERS},
                }
            ],
            "outputs": [{"guid": g["sales"], "typeName": "hive_table", "uniqueAttributes": {"qualifiedName": SALES}}],
        },
    }
    several = datamap.entity.get_by_ids(guid=[g["sales"], g["orders"]], ignore_relationships=True)
    assert [e.guid for e in several.entities] == [g["sales"], g["orders"]]
    by_name = datamap.entity.get_by_unique_attribute("hive_table", attribute=SALES)
    assert (by_name.entity.guid, by_name.entity.attributes) == (g["sales"], {"qualifiedName": SALES, "name": "sales"})
    batch = datamap.entity.batch_get_by_unique_attributes("azure_datalake_gen2_path", attr_n_qualified_name=RETURNS)
    assert [e.guid for e in batch.entities] == [g["returns"]]  # the key is literally `attr_N:qualifiedName`
    header = datamap.entity.get_header(g["orders"])
    assert without_times(plain(header)) == {
        "typeName": "azure_datalake_gen2_path",
        "attributes": {"qualifiedName": ORDERS, "name": "orders.csv"},
        "guid": g["orders"],
        "status": "ACTIVE",
        "displayText": "orders.csv",
        "lastModifiedTS": "1",
        "classificationNames": [],
        "meaningNames": [],
        "meanings": [],
        "isIncomplete": False,
        "labels": [],
        "createdBy": "admin",
        "updatedBy": "admin",
        "createTime": "<time>",
        "updateTime": "<time>",
        "classifications": [],
    }
    assert Calls(open_catalog).routes() == {
        "GET /entity/guid/{guid}": 1,
        "GET /entity/bulk": 1,
        "GET /entity/uniqueAttribute/type/{type_name}": 1,
        "GET /entity/bulk/uniqueAttribute/type/{type_name}": 1,
        "GET /entity/guid/{guid}/header": 1,
    }


def test_entity_writes_and_deletes(datamap: DataMapClient, open_catalog: CatalogServer) -> None:
    g = load(datamap)
    Calls(open_catalog).reset()
    one = datamap.entity.create_or_update(
        {
            "entity": {
                "typeName": "datamap_suite_process",
                "attributes": {
                    "qualifiedName": PROCESS,
                    "name": "load_sales",
                    "inputs": [{"guid": g["orders"]}, {"guid": g["returns"]}],
                },
            }
        }
    )
    assert plain(one.mutated_entities) == {
        "UPDATE": [
            mutation(g["process"], "datamap_suite_process", PROCESS, "2"),
            mutation(g["returns"], "azure_datalake_gen2_path", RETURNS, "2"),
        ]
    }
    by_guid = datamap.entity.update_attribute_by_id(g["sales"], "curated sales", name="description")
    assert plain(by_guid.mutated_entities) == {"PARTIAL_UPDATE": [mutation(g["sales"], "hive_table", SALES, "2")]}
    by_name = datamap.entity.update_by_unique_attribute(
        "hive_table", {"entity": {"typeName": "hive_table", "attributes": {"owner": "sales-team"}}}, attribute=SALES
    )
    assert plain(by_name.mutated_entities) == {"PARTIAL_UPDATE": [mutation(g["sales"], "hive_table", SALES, "3")]}
    assert datamap.entity.get(g["sales"], ignore_relationships=True).entity.attributes == {
        "qualifiedName": SALES,
        "name": "sales",
        "description": "curated sales",
        "owner": "sales-team",
    }
    removed = datamap.entity.delete_by_unique_attribute("azure_datalake_gen2_path", attribute=RETURNS)
    assert plain(removed.mutated_entities) == {
        "DELETE": [mutation(g["returns"], "azure_datalake_gen2_path", RETURNS, "3", "DELETED")]
    }
    assert [h.guid for h in datamap.entity.delete(g["orders"]).mutated_entities["DELETE"]] == [g["orders"]]
    assert [h.status for h in datamap.entity.batch_delete(guid=[g["process"]]).mutated_entities["DELETE"]] == [
        "DELETED"
    ]
    assert Calls(open_catalog).routes() == {
        "POST /entity": 1,
        "PUT /entity/guid/{guid}": 1,
        "PUT /entity/uniqueAttribute/type/{type_name}": 1,
        "GET /entity/guid/{guid}": 1,
        "DELETE /entity/uniqueAttribute/type/{type_name}": 1,
        "DELETE /entity/guid/{guid}": 1,
        "DELETE /entity/bulk": 1,
    }


def test_lineage(datamap: DataMapClient, open_catalog: CatalogServer) -> None:
    g = load(datamap)
    Calls(open_catalog).reset()
    by_guid = datamap.lineage.get(g["orders"], direction="OUTPUT", depth=2)
    by_name = datamap.lineage.get_by_unique_attribute(
        "azure_datalake_gen2_path", direction="OUTPUT", depth=2, attribute=ORDERS
    )
    for lineage in (by_guid, by_name):
        assert (lineage.base_entity_guid, lineage.lineage_direction, lineage.lineage_depth) == (
            g["orders"],
            "OUTPUT",
            2,
        )
        assert sorted(lineage.guid_entity_map) == sorted([g["orders"], g["process"], g["sales"]])
        assert sorted((r.from_entity_id, r.to_entity_id) for r in lineage.relations) == sorted(
            [(g["orders"], g["process"]), (g["process"], g["sales"])]
        )
    assert Calls(open_catalog).routes() == {
        "GET /lineage/{guid}": 1,
        "GET /lineage/uniqueAttribute/type/{type_name}": 1,
    }


def test_search_query_suggest_autocomplete(datamap: DataMapClient, open_catalog: CatalogServer) -> None:
    g = load(datamap)
    Calls(open_catalog).reset()
    found = datamap.discovery.query({"keywords": "orders", "filter": {"entityType": "azure_datalake_gen2_path"}})
    answer = plain(found)
    times = [answer["value"][0].pop(key) for key in ("createTime", "updateTime")]
    assert all(isinstance(t, int) and t > 0 for t in times)
    assert answer == {
        "@search.count": 1,
        "@search.count.approximate": False,
        "value": [
            {
                "@search.highlights": {
                    "qualifiedName": [ORDERS.replace("orders", "<em>orders</em>")],
                    "name": ["<em>orders</em>.csv"],
                },
                "objectType": "Files",
                "@search.score": 1.0,
                "id": g["orders"],
                "qualifiedName": ORDERS,
                "name": "orders.csv",
                "description": None,
                "owner": None,
                "entityType": "azure_datalake_gen2_path",
                "classification": [],
                "label": [],
                "assetType": ["Azure Data Lake Storage Gen2"],
                "term": [],
                "contact": [],
            }
        ],
    }
    suggested = datamap.discovery.suggest({"keywords": "sal", "limit": 5})
    assert [(v.search_text, v.id, v.entity_type, v.object_type) for v in suggested.value] == [  # by name
        ("load_<em>sal</em>es", g["process"], "datamap_suite_process", "Processes"),
        ("<em>sal</em>es", g["sales"], "hive_table", "Tables"),
    ]
    completed = datamap.discovery.auto_complete({"keywords": "ret"})
    assert plain(completed) == {"value": [{"text": "returns.csv", "queryPlusText": "returns.csv"}]}
    with pytest.raises(HttpResponseError) as empty:
        datamap.discovery.suggest({"keywords": " "})
    assert (empty.value.status_code, empty.value.response.json()) == (
        400,
        {
            "errorCode": "ATLAS-400-00-01A",
            "errorMessage": "invalid parameters: suggest needs 'keywords' with at least one character",
        },
    )
    assert Calls(open_catalog).routes() == {
        "POST /search/query": 1,
        "POST /search/suggest": 2,
        "POST /search/autocomplete": 1,
    }


def test_relationships(datamap: DataMapClient, open_catalog: CatalogServer) -> None:
    g = load(datamap)
    Calls(open_catalog).reset()
    created = datamap.relationship.create(
        {
            "typeName": "dataset_process_inputs",
            "end1": {"guid": g["process"]},
            "end2": {"typeName": "azure_datalake_gen2_path", "uniqueAttributes": {"qualifiedName": RETURNS}},
        }
    )
    expected = {
        "typeName": "dataset_process_inputs",
        "attributes": {},
        "guid": created.guid,
        "provenanceType": 0,
        "status": "ACTIVE",
        "createdBy": "admin",
        "updatedBy": "admin",
        "createTime": "<time>",
        "updateTime": "<time>",
        "version": 0,
        "label": "__Process.inputs",
        "end1": {
            "guid": g["process"],
            "typeName": "datamap_suite_process",
            "uniqueAttributes": {"qualifiedName": PROCESS},
        },
        "end2": {
            "guid": g["returns"],
            "typeName": "azure_datalake_gen2_path",
            "uniqueAttributes": {"qualifiedName": RETURNS},
        },
        "propagateTags": "TWO_TO_ONE",  # an input's classifications flow to the process (Atlas's base model)
        "propagatedClassifications": [],
        "blockedPropagatedClassifications": [],
    }
    assert without_times(plain(created)) == expected
    read = datamap.relationship.get(created.guid, extended_info=True)
    assert without_times(plain(read.relationship)) == expected
    assert sorted(read.referred_entities) == sorted([g["process"], g["returns"]])
    updated = datamap.relationship.update({"guid": created.guid, "typeName": "dataset_process_inputs"})
    assert (updated.version, updated.status) == (1, "ACTIVE")
    lineage = datamap.lineage.get(g["sales"], direction="INPUT", depth=1)
    assert sorted(lineage.guid_entity_map) == sorted([g["orders"], g["returns"], g["process"], g["sales"]])
    datamap.relationship.delete(created.guid)
    with pytest.raises(ResourceNotFoundError) as twice:
        datamap.relationship.delete(created.guid)
    assert twice.value.response.json() == {
        "errorCode": "ATLAS-404-00-00F",
        "errorMessage": f"Attempting to delete a relationship which is already deleted : {created.guid}",
    }
    with pytest.raises(HttpResponseError) as change:
        datamap.relationship.update({"guid": created.guid, "typeName": "process_dataset_outputs"})
    assert change.value.response.json()["errorCode"] == "ATLAS-400-00-06A"
    with pytest.raises(ResourceNotFoundError) as unknown:
        datamap.relationship.get("no-such-relationship")
    assert unknown.value.response.json() == {
        "errorCode": "ATLAS-404-00-00C",
        "errorMessage": "Given relationship guid no-such-relationship is invalid/not found",
    }
    assert Calls(open_catalog).routes() == {
        "POST /relationship": 1,
        "GET /relationship/guid/{guid}": 2,
        "PUT /relationship": 2,
        "GET /lineage/{guid}": 1,
        "DELETE /relationship/guid/{guid}": 2,
    }


def test_the_sdk_sent_its_bearer_token_and_api_version(open_catalog: CatalogServer) -> None:
    from tests.support.catalog_clients import AllowPlainHttp, FakeCredential

    credential = FakeCredential()
    client = DataMapClient(open_catalog.url, credential, per_call_policies=[AllowPlainHttp()], retry_total=0)
    seen: dict[str, str] = {}
    client.discovery.query(
        {"keywords": "*"},
        raw_request_hook=lambda request: seen.update(
            {"authorization": request.http_request.headers["Authorization"], "url": request.http_request.url}
        ),
    )
    assert credential.scopes == [("https://purview.azure.net/.default",)]
    assert seen == {
        "authorization": "Bearer fake-purview-token",
        "url": f"{open_catalog.url}/datamap/api/search/query?api-version=2023-09-01",
    }
