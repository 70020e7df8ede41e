"""Contract tests: pyapacheatlas (AtlasClient + BasicAuthentication) against the catalog over real HTTP."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import requests
from pyapacheatlas.core import AtlasClient, AtlasEntity, AtlasProcess
from pyapacheatlas.core.typedef import AtlasAttributeDef, EntityTypeDef, RelationshipTypeDef
from pyapacheatlas.core.util import AtlasException

from tests.support.catalog_server import PASSWORD, USER
from tools.catalog import CatalogServer

ABFSS = "https://acct.dfs.core.windows.net/lake"


def spark_types() -> dict:
    process = EntityTypeDef(
        "spark_test_process",
        superTypes=["Process"],
        attributeDefs=[AtlasAttributeDef("columnMapping"), AtlasAttributeDef("sparkPlan")],
    )
    app = EntityTypeDef("spark_test_application", superTypes=["Asset"])
    rel = RelationshipTypeDef(
        "spark_test_application_processes",
        relationshipCategory="COMPOSITION",
        endDef1={"type": "spark_test_application", "name": "processes", "cardinality": "SET", "isContainer": True},
        endDef2={"type": "spark_test_process", "name": "application", "cardinality": "SINGLE"},
    )
    return {"entityDefs": [process.to_json(), app.to_json()], "relationshipDefs": [rel.to_json()]}


def upload_run(client: AtlasClient) -> dict:
    """Two input files -> one Spark process -> one output table, with a column mapping; returns guid assignments."""
    a = AtlasEntity("orders.csv", "azure_datalake_gen2_path", f"{ABFSS}/raw/orders.csv", guid="-1")
    b = AtlasEntity("customers.csv", "azure_datalake_gen2_path", f"{ABFSS}/raw/customers.csv", guid="-2")
    out = AtlasEntity("sales", "hive_table", "default.sales@adb-1.azuredatabricks.net", guid="-3")
    app = AtlasEntity("nightly", "spark_test_application", "spark://nightly", guid="-4")
    mapping = [
        {
            "DatasetMapping": {"Source": f"{ABFSS}/raw/orders.csv", "Sink": out.qualifiedName},
            "ColumnMapping": [{"Source": "id", "Sink": "order_id"}, {"Source": "amount", "Sink": "amount"}],
        }
    ]
    proc = AtlasProcess(
        "join_orders",
        "spark_test_process",
        "spark://nightly/join_orders",
        inputs=[a, b],
        outputs=[out],
        guid="-5",
        attributes={"columnMapping": json.dumps(mapping)},
        relationshipAttributes={"application": app.to_json(minimum=True)},
    )
    result = client.upload_entities([proc, a, b, out, app])
    return result["guidAssignments"]


def within(value: object, start: int, end: int) -> bool:
    return isinstance(value, int) and start <= value <= end


def test_typedefs_upload_conflict_update_and_read(client: AtlasClient, catalog: CatalogServer) -> None:
    created = client.upload_typedefs(spark_types())
    assert [d["name"] for d in created["entityDefs"]] == ["spark_test_process", "spark_test_application"]
    assert [d["name"] for d in created["relationshipDefs"]] == ["spark_test_application_processes"]
    with pytest.raises(AtlasException) as conflict:
        client.upload_typedefs(spark_types())
    assert json.loads(str(conflict.value)) == {
        "errorCode": "ATLAS-409-00-001",
        "errorMessage": "Given type spark_test_process already exists",
    }
    updated_types = spark_types()
    updated_types["entityDefs"][0]["attributeDefs"].append(AtlasAttributeDef("notebook").to_json())
    updated = client.upload_typedefs(updated_types, force_update=True)  # GET headers, then PUT existing
    assert updated["entityDefs"][0]["version"] == 2
    fetched = client.get_typedef(name="spark_test_process")
    assert [a["name"] for a in fetched["attributeDefs"]] == ["columnMapping", "sparkPlan", "notebook"]
    assert fetched["superTypes"] == ["Process"] and fetched["category"] == "ENTITY"
    headers = {
        h["name"]: h["category"]
        for h in requests.get(f"{catalog.atlas_url}/types/typedefs/headers", auth=(USER, PASSWORD), timeout=10).json()
    }
    assert headers["spark_test_process"] == "ENTITY"
    assert headers["spark_test_application_processes"] == "RELATIONSHIP"
    assert headers["azure_datalake_gen2_path"] == "ENTITY" and headers["Referenceable"] == "ENTITY"
    dataset = client.get_typedef(name="DataSet")
    assert "hive_table" in dataset["subTypes"] and dataset["superTypes"] == ["Asset"]


def test_entities_with_placeholders_read_back_by_guid_and_qualified_name(client: AtlasClient) -> None:
    client.upload_typedefs(spark_types())
    start = int(time.time() * 1000)
    g = upload_run(client)
    end = int(time.time() * 1000)
    assert sorted(g) == ["-1", "-2", "-3", "-4", "-5"]
    single = client.get_single_entity(g["-5"])
    entity = single["entity"]
    assert within(entity.pop("createTime"), start, end) and within(entity.pop("updateTime"), start, end)
    rel = {
        name: [r.pop("relationshipGuid") for r in (refs if isinstance(refs, list) else [refs])]
        for name, refs in entity["relationshipAttributes"].items()
    }
    assert {k: len(v) for k, v in rel.items()} == {"inputs": 2, "outputs": 1, "application": 1, "meanings": 0}

    def oid(key: str, type_name: str, qn: str) -> dict:
        return {"guid": g[key], "typeName": type_name, "uniqueAttributes": {"qualifiedName": qn}}

    def related(key: str, type_name: str, qn: str, name: str, relationship: str) -> dict:
        return {
            **oid(key, type_name, qn),
            "entityStatus": "ACTIVE",
            "displayText": name,
            "relationshipType": relationship,
            "relationshipStatus": "ACTIVE",
            "relationshipAttributes": {"typeName": relationship},
        }

    mapping = json.loads(entity["attributes"].pop("columnMapping"))
    assert mapping[0]["ColumnMapping"][0] == {"Source": "id", "Sink": "order_id"}
    orders = ("-1", "azure_datalake_gen2_path", f"{ABFSS}/raw/orders.csv")
    customers = ("-2", "azure_datalake_gen2_path", f"{ABFSS}/raw/customers.csv")
    sales = ("-3", "hive_table", "default.sales@adb-1.azuredatabricks.net")
    assert single == {
        "entity": {
            "typeName": "spark_test_process",
            "attributes": {
                "qualifiedName": "spark://nightly/join_orders",
                "name": "join_orders",
                "inputs": [oid(*orders), oid(*customers)],
                "outputs": [oid(*sales)],
            },
            "guid": g["-5"],
            "status": "ACTIVE",
            "createdBy": USER,
            "updatedBy": USER,
            "version": 0,
            "lastModifiedTS": "1",
            "collectionId": "ol2purview",
            "relationshipAttributes": {
                "inputs": [
                    related(*orders, "orders.csv", "dataset_process_inputs"),
                    related(*customers, "customers.csv", "dataset_process_inputs"),
                ],
                "outputs": [related(*sales, "sales", "process_dataset_outputs")],
                "application": related(
                    "-4", "spark_test_application", "spark://nightly", "nightly", "spark_test_application_processes"
                ),
                "meanings": [],  # the glossary terms assigned to it (none), as Purview answers every entity
            },
        },
        "referredEntities": {},
    }

    by_qn = client.get_entity(
        qualifiedName=[f"{ABFSS}/raw/customers.csv", f"{ABFSS}/raw/orders.csv"], typeName="azure_datalake_gen2_path"
    )
    assert [(e["guid"], e["attributes"]["name"]) for e in by_qn["entities"]] == [
        (g["-2"], "customers.csv"),
        (g["-1"], "orders.csv"),
    ]
    assert [r["guid"] for r in by_qn["entities"][1]["relationshipAttributes"]["inputToProcesses"]] == [g["-5"]]
    by_guid = client.get_entity(guid=[g["-3"], g["-4"]])
    assert [e["typeName"] for e in by_guid["entities"]] == ["hive_table", "spark_test_application"]
    assert client.get_entity(qualifiedName="nope", typeName="hive_table") == {}
    with pytest.raises(AtlasException) as missing:
        client.get_single_entity("00000000-0000-0000-0000-000000000000")
    assert json.loads(str(missing.value))["errorCode"] == "ATLAS-404-00-005"


def test_lineage_in_atlas_shape(client: AtlasClient) -> None:
    client.upload_typedefs(spark_types())
    g = upload_run(client)
    lineage = client.get_entity_lineage(g["-1"], depth=1, width=10, direction="BOTH")
    relations = sorted((r["fromEntityId"], r["toEntityId"]) for r in lineage.pop("relations"))
    assert relations == sorted([(g["-1"], g["-5"]), (g["-5"], g["-3"])])  # a sibling input is neither up nor down
    entity_map = lineage.pop("guidEntityMap")
    assert lineage == {
        "baseEntityGuid": g["-1"],
        "lineageDirection": "BOTH",
        "lineageDepth": 1,
        "lineageWidth": 10,
        "childrenCount": -1,
        "parentRelations": [],
        "widthCounts": {},
    }
    assert sorted(entity_map) == sorted(g[k] for k in ("-1", "-3", "-5"))
    assert entity_map[g["-3"]] == {
        "typeName": "hive_table",
        "attributes": {"qualifiedName": "default.sales@adb-1.azuredatabricks.net", "name": "sales"},
        "guid": g["-3"],
        "status": "ACTIVE",
        "displayText": "sales",
        "lastModifiedTS": "1",
        "classificationNames": [],
        "classifications": [],
        "meaningNames": [],
        "meanings": [],
        "isIncomplete": False,
        "labels": [],
        "collectionId": "ol2purview",
    }  # Purview's lineage headers carry the entity's collection
    assert "columnMapping" in entity_map[g["-5"]]["attributes"]
    around_process = client.get_entity_lineage(g["-5"], depth=1, direction="BOTH")
    assert sorted((r["fromEntityId"], r["toEntityId"]) for r in around_process["relations"]) == sorted(
        [(g["-1"], g["-5"]), (g["-2"], g["-5"]), (g["-5"], g["-3"])]
    )
    upstream = client.get_entity_lineage(g["-3"], depth=1, direction="INPUT")
    assert sorted(upstream["guidEntityMap"]) == sorted(g[k] for k in ("-1", "-2", "-3", "-5"))
    downstream = client.get_entity_lineage(g["-3"], depth=1, direction="OUTPUT")
    assert list(downstream["guidEntityMap"]) == [g["-3"]] and downstream["relations"] == []


def test_purview_bulk_example_is_answered_in_the_same_shape(client: AtlasClient, shared_dir: Path) -> None:
    example = json.loads(
        (
            shared_dir / "atlas/purview_examples/Entity_BulkCreateOrUpdate_azure-rest-api-specs_2023-09-01.json"
        ).read_text()
    )
    first = {"typeName": "azure_storage_account", "attributes": {"qualifiedName": "exampleaccount2", "name": "old"}}
    client.upload_entities([first])
    response = client.upload_entities(example["request"]["body"])
    expected = example["response_200"]
    assert sorted(response) == sorted(expected)
    assert sorted(response["mutatedEntities"]) == sorted(expected["mutatedEntities"])
    for operation, headers in expected["mutatedEntities"].items():
        got = response["mutatedEntities"][operation]
        assert [{k: (v if k != "guid" else None) for k, v in h.items()} for h in got] == [
            {k: (v if k != "guid" else None) for k, v in h.items()} for h in headers
        ]
    assigned = list(response["guidAssignments"].items())
    assert len(assigned) == 2 and all(placeholder.startswith("-") for placeholder, _ in assigned)
    assert [guid for _, guid in assigned] == [
        response["mutatedEntities"]["CREATE"][0]["guid"],
        response["mutatedEntities"]["UPDATE"][0]["guid"],
    ]
    stored = client.get_entity(qualifiedName="exampleaccount2", typeName="azure_storage_account")["entities"][0]
    assert stored["attributes"] == {
        "qualifiedName": "exampleaccount2",
        "name": "ExampleStorageAccount2",
        "owner": "ExampleOwner",
        "modifiedTime": 0,
        "createTime": 0,
        "description": "Example Description",
        "publicAccessLevel": None,
    }
    assert stored["contacts"] == example["request"]["body"]["entities"][1]["contacts"]


def test_search_basic_and_purview_query(client: AtlasClient, catalog: CatalogServer) -> None:
    client.upload_typedefs(spark_types())
    g = upload_run(client)
    auth = (USER, PASSWORD)
    basic = requests.post(
        f"{catalog.atlas_url}/search/basic",
        auth=auth,
        timeout=10,
        json={"typeName": "DataSet", "query": "CSV", "limit": 10},
    ).json()
    assert basic["queryType"] == "BASIC" and basic["approximateCount"] == 2
    assert [(e["guid"], e["attributes"]) for e in basic["entities"]] == [
        (g["-2"], {"qualifiedName": f"{ABFSS}/raw/customers.csv", "name": "customers.csv"}),
        (g["-1"], {"qualifiedName": f"{ABFSS}/raw/orders.csv", "name": "orders.csv"}),
    ]
    query = requests.post(
        f"{catalog.atlas_url.replace('/api/atlas/v2', '/datamap/api')}/search/query",
        auth=auth,
        timeout=10,
        json={
            "keywords": "raw",
            "limit": 1,
            "filter": {
                "and": [
                    {"entityType": "azure_datalake_gen2_path"},
                    {"attributeName": "qualifiedName", "operator": "contains", "attributeValue": "orders"},
                ]
            },
        },
    ).json()
    record = query["value"][0]
    assert (record.pop("createTime") > 0, record.pop("updateTime") > 0) == (True, True)
    assert query == {
        "@search.count": 1,
        "@search.count.approximate": False,
        "value": [
            {
                # the keywords in every field, the `contains` filter's words in its own (qualifiedName)
                "@search.highlights": {
                    "qualifiedName": ["https://acct.dfs.core.windows.net/lake/<em>raw</em>/<em>orders</em>.csv"]
                },
                "@search.score": 1.0,
                "objectType": "Files",
                "id": g["-1"],
                "qualifiedName": f"{ABFSS}/raw/orders.csv",
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
    paged = requests.post(
        f"{catalog.atlas_url}/search/query",
        auth=auth,
        timeout=10,
        json={"keywords": None, "limit": 2, "filter": {"entityType": "DataSet", "includeSubTypes": True}},
    ).json()
    assert paged["@search.count"] == 3 and len(paged["value"]) == 2 and "continuationToken" in paged
    rest = requests.post(
        f"{catalog.atlas_url}/search/query",
        auth=auth,
        timeout=10,
        json={
            "limit": 2,
            "continuationToken": paged["continuationToken"],
            "filter": {"entityType": "DataSet", "includeSubTypes": True},
        },
    ).json()
    assert [v["name"] for v in paged["value"] + rest["value"]] == ["customers.csv", "orders.csv", "sales"]
    bad = requests.post(f"{catalog.atlas_url}/search/query", auth=auth, timeout=10, json={"filter": {"color": "red"}})
    assert (
        bad.status_code == 400
        and bad.json()["errorMessage"] == 'invalid parameters: unsupported filter clause {"color": "red"}'
    )


def test_delete_by_guid_is_soft(client: AtlasClient) -> None:
    client.upload_typedefs(spark_types())
    g = upload_run(client)
    deleted = client.delete_entity(guid=[g["-5"]])
    assert [(h["guid"], h["status"]) for h in deleted["mutatedEntities"]["DELETE"]] == [(g["-5"], "DELETED")]
    assert client.delete_entity(guid=[g["-5"]]) == {}  # idempotent
    assert client.get_single_entity(g["-5"])["entity"]["status"] == "DELETED"
    assert list(client.get_entity_lineage(g["-1"])["guidEntityMap"]) == [g["-1"]]


def test_http_errors_name_the_problem(catalog: CatalogServer) -> None:
    auth = (USER, PASSWORD)
    not_json = requests.post(
        f"{catalog.atlas_url}/entity/bulk",
        auth=auth,
        data=b"{nope",
        timeout=10,
        headers={"Content-Type": "application/json"},
    )
    assert (not_json.status_code, not_json.json()) == (
        400,
        {
            "errorCode": "ATLAS-400-00-01A",
            "errorMessage": "invalid parameters: the request body is not valid JSON (Expecting property name enclosed in "
            "double quotes at char 1)",
        },
    )
    not_utf8 = requests.post(
        f"{catalog.atlas_url}/entity/bulk",
        auth=auth,
        data=b'{"a": "\xff"}',
        timeout=10,
        headers={"Content-Type": "application/json"},
    )
    assert (not_utf8.status_code, not_utf8.json()) == (
        400,
        {
            "errorCode": "ATLAS-400-00-01A",
            "errorMessage": "invalid parameters: the request body is not valid JSON (not UTF-8 at byte 7)",
        },
    )
    unknown = requests.get(
        f"{catalog.atlas_url}/entity/uniqueAttribute/type/hive_table",
        params={"attr:qualifiedName": "db.none@x"},
        auth=auth,
        timeout=10,
    )
    assert (unknown.status_code, unknown.json()) == (
        404,
        {
            "errorCode": "ATLAS-404-00-009",
            "errorMessage": "Instance hive_table with unique attribute {qualifiedName=db.none@x} does not exist",
        },
    )
    bad_direction = requests.get(
        f"{catalog.atlas_url}/lineage/x", params={"direction": "SIDEWAYS"}, auth=auth, timeout=10
    )
    assert bad_direction.json() == {
        "errorCode": "ATLAS-400-00-026",
        "errorMessage": "Invalid lineage query parameters passed direction: SIDEWAYS",
    }
    no_type = requests.get(f"{catalog.atlas_url}/types/typedef/name/nothing", auth=auth, timeout=10)
    assert (no_type.status_code, no_type.json()["errorCode"]) == (404, "ATLAS-404-00-001")


def test_single_entity_post_and_typedef_delete(client: AtlasClient, catalog: CatalogServer) -> None:
    auth = (USER, PASSWORD)
    client.upload_typedefs(
        {
            "entityDefs": [
                {"name": "temp_dataset", "superTypes": ["DataSet"]},
                {"name": "unused_dataset", "superTypes": ["DataSet"]},
            ]
        }
    )
    created = requests.post(
        f"{catalog.atlas_url}/entity",
        auth=auth,
        timeout=10,
        json={"entity": {"typeName": "temp_dataset", "attributes": {"qualifiedName": "temp://1", "name": "one"}}},
    ).json()
    # POST /entity answers a created entity's header attributes (the spec's example Entity_AddCustomAttribute)
    assert [h["attributes"] for h in created["mutatedEntities"]["CREATE"]] == [
        {"qualifiedName": "temp://1", "name": "one"}
    ]
    in_use = requests.delete(f"{catalog.atlas_url}/types/typedef/name/temp_dataset", auth=auth, timeout=10)
    assert (in_use.status_code, in_use.json()) == (
        409,
        {"errorCode": "ATLAS-409-00-002", "errorMessage": "Given type temp_dataset has references"},
    )
    assert client.delete_type("unused_dataset") == {"message": "successfully delete unused_dataset"}  # 204
    gone = requests.get(f"{catalog.atlas_url}/types/entitydef/name/unused_dataset", auth=auth, timeout=10)
    assert gone.status_code == 404
    assert "unused_dataset" not in client.get_typedef(name="DataSet")["subTypes"]
