"""Collections on the embedded catalog, as Purview models them: the account API (list, get, create, delete), the
root named after the account, `collectionId` on entity creation and in every entity answer, moving entities
(`moveTo`, and the bulk's `collectionId` on existing entities, "the collection where entities will be moved to" in the
Data Map spec), the discovery query's `collectionId` filter, and 403 for a caller who is not Data Curator there."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
import requests

from tools.catalog import CatalogServer

ACCOUNT_API = "api-version=2019-11-01-preview"
DATAMAP = "api-version=2023-09-01"
LAKE = "https://lake.dfs.core.windows.net/raw"


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[CatalogServer]:
    server = CatalogServer(tmp_path / "catalog.sqlite", account_name="contoso-purview").start()
    yield server
    server.stop()


def put_collection(catalog: CatalogServer, name: str, parent: str, friendly: str | None = None) -> requests.Response:
    body = {"parentCollection": {"referenceName": parent}, **({"friendlyName": friendly} if friendly else {})}
    return requests.put(f"{catalog.url}/account/collections/{name}?{ACCOUNT_API}", json=body, timeout=10)


def create(catalog: CatalogServer, qualified_name: str, collection: str | None = None) -> requests.Response:
    query = f"?{DATAMAP}" + (f"&collectionId={collection}" if collection else "")
    return requests.post(
        f"{catalog.url}/datamap/api/atlas/v2/entity/bulk{query}",
        timeout=10,
        json={
            "entities": [
                {
                    "typeName": "azure_datalake_gen2_path",
                    "guid": "-1",
                    "collectionId": "ignored-read-only",
                    "attributes": {"qualifiedName": qualified_name, "name": qualified_name.rsplit("/", 1)[-1]},
                }
            ]
        },
    )


def collection_of(catalog: CatalogServer, qualified_name: str) -> str:
    answer = requests.get(
        f"{catalog.atlas_url}/entity/uniqueAttribute/type/azure_datalake_gen2_path",
        params={"attr:qualifiedName": qualified_name},
        timeout=10,
    )
    return answer.json()["entity"]["collectionId"]


def test_the_account_api_lists_creates_reads_and_deletes_collections(catalog):
    root = requests.get(f"{catalog.url}/account/collections?{ACCOUNT_API}", timeout=10).json()
    assert root == {
        "count": 1,
        "value": [
            {
                "name": "contoso-purview",
                "friendlyName": "contoso-purview",
                "description": "The root collection.",
                "collectionProvisioningState": "Succeeded",
            }
        ],
    }
    created = put_collection(catalog, "fin01a", "contoso-purview", "Finance")
    assert created.status_code == 200
    body = created.json()
    assert {k: body[k] for k in ("name", "friendlyName", "parentCollection", "collectionProvisioningState")} == {
        "name": "fin01a",
        "friendlyName": "Finance",
        "parentCollection": {"type": "CollectionReference", "referenceName": "contoso-purview"},
        "collectionProvisioningState": "Succeeded",
    }
    assert put_collection(catalog, "fin-lineage", "fin01a").json()["friendlyName"] == "fin-lineage"
    listed = requests.get(f"{catalog.url}/account/collections?{ACCOUNT_API}", timeout=10).json()
    assert [c["name"] for c in listed["value"]] == ["contoso-purview", "fin01a", "fin-lineage"]
    assert requests.get(f"{catalog.url}/account/collections/fin01a?{ACCOUNT_API}", timeout=10).json() == body
    # a collection with a child cannot go; a leaf can, then it is gone
    assert requests.delete(f"{catalog.url}/account/collections/fin01a?{ACCOUNT_API}", timeout=10).json() == {
        "error": {"code": "CollectionNotEmpty", "message": "Collection fin01a has child collections: fin-lineage."}
    }
    assert (
        requests.delete(f"{catalog.url}/account/collections/fin-lineage?{ACCOUNT_API}", timeout=10).status_code == 204
    )
    missing = requests.get(f"{catalog.url}/account/collections/fin-lineage?{ACCOUNT_API}", timeout=10)
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "CollectionNotFound")


@pytest.mark.parametrize(
    "name, body, status, message",
    [
        (
            "x1",
            {},
            400,
            "parentCollection.referenceName is required (the name of the parent collection; the root is "
            "contoso-purview)",
        ),
        ("x1", {"parentCollection": {"referenceName": "nowhere"}}, 400, "Parent collection nowhere is not found."),
        (
            "bad name",
            {"parentCollection": {"referenceName": "contoso-purview"}},
            400,
            "Collection name 'bad name' is invalid: 1-36 letters, digits, '-' or '_', starting with a letter or digit.",
        ),
        (
            "contoso-purview",
            {"parentCollection": {"referenceName": "contoso-purview"}},
            400,
            "the root collection cannot be changed",
        ),
    ],
)
def test_bad_collection_requests_are_named(catalog, name, body, status, message):
    answer = requests.put(f"{catalog.url}/account/collections/{name}?{ACCOUNT_API}", json=body, timeout=10)
    assert (answer.status_code, answer.json()["error"]["message"]) == (status, message)


def test_the_account_api_needs_its_api_version(catalog):
    answer = requests.get(f"{catalog.url}/account/collections", timeout=10)
    assert (answer.status_code, answer.json()["error"]["code"]) == (400, "MissingApiVersionParameter")


def test_entities_land_in_the_root_or_the_collection_named_and_the_body_cannot_choose(catalog):
    put_collection(catalog, "fin01a", "contoso-purview")
    assert create(catalog, f"{LAKE}/a.csv").status_code == 200
    assert create(catalog, f"{LAKE}/b.csv", "fin01a").status_code == 200
    assert collection_of(catalog, f"{LAKE}/a.csv") == "contoso-purview"
    assert collection_of(catalog, f"{LAKE}/b.csv") == "fin01a"
    unknown = create(catalog, f"{LAKE}/c.csv", "nowhere")
    assert (unknown.status_code, unknown.json()["errorMessage"]) == (
        404,
        "collection nowhere is not found in account contoso-purview",
    )


def test_a_bulk_with_collection_id_moves_the_existing_entities_it_sends(catalog):
    put_collection(catalog, "fin01a", "contoso-purview")
    create(catalog, f"{LAKE}/a.csv")
    again = create(catalog, f"{LAKE}/a.csv", "fin01a")
    assert [h["attributes"]["qualifiedName"] for h in again.json()["mutatedEntities"]["UPDATE"]] == [f"{LAKE}/a.csv"]
    assert collection_of(catalog, f"{LAKE}/a.csv") == "fin01a"
    create(catalog, f"{LAKE}/a.csv")  # no collectionId: it stays where it is
    assert collection_of(catalog, f"{LAKE}/a.csv") == "fin01a"


def test_move_to_moves_entities_and_answers_their_headers(catalog):
    put_collection(catalog, "fin01a", "contoso-purview")
    guid = create(catalog, f"{LAKE}/a.csv").json()["guidAssignments"]["-1"]
    moved = requests.post(
        f"{catalog.url}/datamap/api/entity/moveTo?{DATAMAP}&collectionId=fin01a",
        json={"entityGuids": [guid]},
        timeout=10,
    )
    assert moved.status_code == 200
    answer = moved.json()
    # the guids it assigned to what it was sent, as the Data Map answers a move (placeholders it makes up)
    assigned = answer.pop("guidAssignments")
    assert (list(assigned.values()), all(key.startswith("-") for key in assigned)) == ([guid], True)
    assert answer == {
        "mutatedEntities": {
            "UPDATE": [
                {
                    "typeName": "azure_datalake_gen2_path",
                    "attributes": {"qualifiedName": f"{LAKE}/a.csv"},
                    "lastModifiedTS": "2",
                    "guid": guid,
                    "status": "ACTIVE",
                }
            ]
        }
    }
    assert collection_of(catalog, f"{LAKE}/a.csv") == "fin01a"
    missing = requests.post(
        f"{catalog.url}/datamap/api/entity/moveTo?{DATAMAP}", json={"entityGuids": [guid]}, timeout=10
    )
    assert (missing.status_code, missing.json()["errorMessage"]) == (
        400,
        "invalid parameters: give the collection to move to as ?collectionId=<collection name>",
    )
    # a collection holding entities cannot be deleted
    assert requests.delete(f"{catalog.url}/account/collections/fin01a?{ACCOUNT_API}", timeout=10).status_code == 409


def test_the_discovery_query_filters_on_the_collection(catalog):
    put_collection(catalog, "fin01a", "contoso-purview")
    create(catalog, f"{LAKE}/a.csv")
    create(catalog, f"{LAKE}/b.csv", "fin01a")
    found = requests.post(
        f"{catalog.url}/datamap/api/search/query?{DATAMAP}",
        timeout=10,
        json={"keywords": None, "limit": 10, "filter": {"collectionId": "fin01a"}},
    ).json()
    assert [v["qualifiedName"] for v in found["value"]] == [f"{LAKE}/b.csv"]


def test_a_caller_without_data_curator_on_a_collection_gets_403_until_granted(tmp_path):
    server = CatalogServer(tmp_path / "c.sqlite", account_name="contoso-purview", curator_of=["fin01a"]).start()
    try:
        put_collection(server, "fin01a", "contoso-purview")
        put_collection(server, "fin-lineage", "fin01a")  # inherits the role from its parent
        refused = create(server, f"{LAKE}/a.csv")  # the root
        assert refused.status_code == 403
        assert refused.json() == {
            "errorCode": "ATLAS-403-00-001",
            "errorMessage": (
                "admin is not authorized to perform write on collection contoso-purview of account contoso-purview"
            ),
        }
        assert create(server, f"{LAKE}/b.csv", "fin01a").status_code == 200
        guid = create(server, f"{LAKE}/c.csv", "fin-lineage").json()["guidAssignments"]["-1"]
        # moving out of the collections one curates is a write to the target: refused, nothing changes
        out = requests.post(
            f"{server.url}/datamap/api/entity/moveTo?{DATAMAP}&collectionId=contoso-purview",
            json={"entityGuids": [guid]},
            timeout=10,
        )
        assert out.status_code == 403 and collection_of(server, f"{LAKE}/c.csv") == "fin-lineage"
        grant = requests.put(
            f"{server.url}/_ol2purview/permissions", json={"curatorOf": ["contoso-purview"]}, timeout=10
        )
        assert grant.json() == {"curatorOf": ["contoso-purview"]}
        assert create(server, f"{LAKE}/a.csv").status_code == 200
    finally:
        server.stop()


def test_the_purview_sdk_moves_entities(tmp_path):
    """azure-purview-datamap's `entity.move_entities_to_collection` against the catalog."""
    from azure.purview.datamap import DataMapClient

    from tests.support.catalog_clients import AllowPlainHttp, FakeCredential

    server = CatalogServer(tmp_path / "c.sqlite", account_name="contoso-purview").start()
    try:
        put_collection(server, "fin01a", "contoso-purview")
        guid = create(server, f"{LAKE}/a.csv").json()["guidAssignments"]["-1"]
        client = DataMapClient(server.url, FakeCredential(), per_call_policies=[AllowPlainHttp()], retry_total=0)
        result = client.entity.move_entities_to_collection({"entityGuids": [guid]}, collection_id="fin01a")
        assert [h.guid for h in result.mutated_entities["UPDATE"]] == [guid]
        assert client.entity.get(guid).entity.collection_id == "fin01a"
    finally:
        server.stop()
