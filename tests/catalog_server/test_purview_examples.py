"""Purview's documented examples (../shared/atlas/purview_examples) replayed against the embedded catalog: the same
request, through Purview's `/datamap/api` paths with `api-version`, and the response's shape compared with the
documented one — every key path and the JSON type at it. Where the two differ, the difference is written here
exactly (keys only Purview sends, keys only we send), so a new divergence fails the test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import requests

from tests.support.catalog_server import PASSWORD, USER
from tests.support.datamap_compare import compare, paths
from tools.catalog import CatalogServer

EXAMPLES = Path(__file__).resolve().parents[2].parent / "shared" / "atlas" / "purview_examples"
AUTH = (USER, PASSWORD)
API_VERSION = "api-version=2023-09-01"


def example(name: str) -> dict:
    return json.loads((EXAMPLES / name).read_text())


@pytest.fixture
def datamap(catalog: CatalogServer) -> str:
    return catalog.url + "/datamap/api"


def test_bulk_create_or_update(datamap: str) -> None:
    documented = example("Entity_BulkCreateOrUpdate_azure-rest-api-specs_2023-09-01.json")
    second = documented["request"]["body"]["entities"][1]
    requests.post(
        f"{datamap}/atlas/v2/entity/bulk?{API_VERSION}",
        auth=AUTH,
        timeout=10,
        json={"entities": [{"typeName": second["typeName"], "attributes": {**second["attributes"], "name": "before"}}]},
    )
    answer = requests.post(
        f"{datamap}/atlas/v2/entity/bulk?{API_VERSION}", auth=AUTH, timeout=10, json=documented["request"]["body"]
    )
    assert answer.status_code == 200
    body = answer.json()
    assert compare(body, documented["response_200"]) == (set(), set(), {})
    assert [h["attributes"]["qualifiedName"] for h in body["mutatedEntities"]["CREATE"]] == ["exampleaccount1"]
    assert [h["attributes"]["qualifiedName"] for h in body["mutatedEntities"]["UPDATE"]] == ["exampleaccount2"]
    assert len(body["guidAssignments"]) == 2 and all(k.startswith("-") for k in body["guidAssignments"])


def test_get_by_unique_attributes(datamap: str) -> None:
    documented = example("Entity_GetByUniqueAttributes_azure-rest-api-specs_2023-09-01.json")
    entity = documented["response_200"]["entity"]
    requests.post(
        f"{datamap}/atlas/v2/entity/bulk?{API_VERSION}",
        auth=AUTH,
        timeout=10,
        json={"entities": [{"typeName": entity["typeName"], "attributes": entity["attributes"]}]},
    ).raise_for_status()
    answer = requests.get(
        f"{datamap}{documented['request']['path'].removeprefix('/datamap/api')}", auth=AUTH, timeout=10
    )
    assert answer.status_code == 200
    only_documented, only_ours, differ = compare(answer.json(), documented["response_200"])
    # Purview's azure_storage_account also has a `services` relationship (empty here), which we do not model; the
    # glossary's `meanings` we answer (empty); the spec's AtlasEntity has a read-only `collectionId`, which this
    # example leaves out.
    assert (only_documented, only_ours, differ) == (set(), {"$.entity.collectionId"}, {})


def test_lineage_get(datamap: str, catalog: CatalogServer) -> None:
    documented = example("Lineage_Get_azure-rest-api-specs_2023-09-01.json")
    created = requests.post(
        f"{catalog.atlas_url}/entity/bulk",
        auth=AUTH,
        timeout=10,
        json={
            "entities": [
                {
                    "typeName": "azure_blob_path",
                    "guid": "-1",
                    "attributes": {"qualifiedName": "https://a/c/x", "name": "x"},
                }
            ]
        },
    )
    guid = created.json()["guidAssignments"]["-1"]
    parameters = documented["parameters"]
    answer = requests.get(
        f"{datamap}/atlas/v2/lineage/{guid}",
        auth=AUTH,
        timeout=10,
        params={"depth": parameters["depth"], "width": parameters["width"], "direction": parameters["direction"]},
    )
    body = answer.json()
    assert compare(body, documented["responses"]["200"]["body"]) == (
        set(),
        {"$.guidEntityMap.*"} | {p for p in paths(body) if p.startswith("$.guidEntityMap.*.")},
        {},
    )
    assert (body["lineageDirection"], body["lineageDepth"], body["lineageWidth"]) == ("INPUT", 1, 5)


def test_lineage_with_column_mapping_like_purview(datamap: str, catalog: CatalogServer) -> None:
    """The purviewcli doc's real lineage answer (ADF copy with a columnMapping) against ours for a similar graph."""
    documented = example("lineage_response_adf_copy_purviewcli_doc.json")
    requests.post(
        f"{catalog.atlas_url}/types/typedefs",
        auth=AUTH,
        timeout=10,
        json={
            "entityDefs": [
                {
                    "name": "copy_operation",
                    "superTypes": ["Process"],
                    "attributeDefs": [{"name": "columnMapping", "typeName": "string"}],
                }
            ]
        },
    ).raise_for_status()
    created = requests.post(
        f"{catalog.atlas_url}/entity/bulk",
        auth=AUTH,
        timeout=10,
        json={
            "entities": [
                {
                    "typeName": "azure_datalake_gen2_resource_set",
                    "guid": "-1",
                    "attributes": {"qualifiedName": "https://a.dfs.core.windows.net/bing/{N}.tsv", "name": "in"},
                },
                {
                    "typeName": "azure_datalake_gen2_path",
                    "guid": "-2",
                    "attributes": {"qualifiedName": "https://a.dfs.core.windows.net/out/x.csv", "name": "x.csv"},
                },
                {
                    "typeName": "copy_operation",
                    "guid": "-3",
                    "attributes": {
                        "qualifiedName": "adf://copy",
                        "name": "copy",
                        "inputs": [{"guid": "-1"}],
                        "outputs": [{"guid": "-2"}],
                        "columnMapping": json.dumps(
                            [
                                {
                                    "DatasetMapping": {"Source": "*", "Sink": "*"},
                                    "ColumnMapping": [{"Source": "a", "Sink": "a"}],
                                }
                            ]
                        ),
                    },
                },
            ]
        },
    ).json()
    answer = requests.get(
        f"{datamap}/atlas/v2/lineage/{created['guidAssignments']['-3']}",
        auth=AUTH,
        timeout=10,
        params={"direction": "BOTH", "depth": 3},
    )
    only_documented, only_ours, differ = compare(answer.json(), documented)
    assert only_documented == {
        "$.includeParent",  # Purview's parent (containment) lineage, which Atlas does not have
        "$.parentRelations[]",
        "$.parentRelations[].childEntityId",
        "$.parentRelations[].parentEntityId",
        "$.parentRelations[].relationshipId",
        "$.widthCounts.*",
        "$.widthCounts.*.*",  # Purview's paging counts; ours is {}
        "$.guidEntityMap.*.classificationNames[]",  # the doc's assets are classified; ours carry no classification
    }
    # Atlas 2.x header fields (the spec's AtlasEntityHeader has them all)
    assert only_ours == {
        "$.guidEntityMap.*.isIncomplete",
        "$.guidEntityMap.*.labels",
        "$.guidEntityMap.*.classifications",
    }
    assert differ == {}


def test_search_query_first_page(datamap: str, catalog: CatalogServer) -> None:
    documented = example("Discovery_Query_PaginationFirstPage_azure-rest-api-specs_2023-09-01.json")
    requests.post(
        f"{catalog.atlas_url}/entity/bulk",
        auth=AUTH,
        timeout=10,
        json={
            "entities": [
                {
                    "typeName": "azure_blob_path",
                    "guid": f"-{i}",
                    "attributes": {
                        "qualifiedName": f"https://exampleaccount.blob.core.windows.net/examplepath/exampledata{i}.txt",
                        "name": f"exampledata{i}.txt",
                    },
                }
                for i in range(1, 4)
            ]
        },
    ).raise_for_status()
    answer = requests.post(
        f"{datamap}/search/query?{API_VERSION}", auth=AUTH, timeout=10, json=documented["request"]["body"]
    )
    body = answer.json()
    # what this example leaves out and the spec's QueryResult has: the facets it asks for, highlights of its
    # keywords, each record's objectType and times
    _, only_ours, differ = compare(body, documented["response_200"])
    assert (only_ours, differ) == (
        {
            "$.@search.facets",
            "$.@search.facets.assetType",
            "$.@search.facets.assetType[]",
            "$.@search.facets.assetType[].count",
            "$.@search.facets.assetType[].value",
            "$.@search.facets.classification",
            "$.value[].@search.highlights",
            "$.value[].@search.highlights.name",
            "$.value[].@search.highlights.name[]",
            "$.value[].@search.highlights.qualifiedName",
            "$.value[].@search.highlights.qualifiedName[]",
            "$.value[].objectType",
            "$.value[].createTime",
            "$.value[].updateTime",
        },
        {},
    )
    assert compare(body, documented["response_200"])[0] == set()
    assert ([v["name"] for v in body["value"]], body["@search.count"]) == (["exampledata1.txt", "exampledata2.txt"], 3)


def test_entity_def_by_name(datamap: str) -> None:
    documented = example("Type_GetEntityDefByName_DataSet_azure-rest-api-specs_2023-09-01.json")
    answer = requests.get(f"{datamap}/atlas/v2/types/entitydef/name/DataSet?{API_VERSION}", auth=AUTH, timeout=10)
    # the Data Map answers lastModifiedTS on typedefs (the spec's TermTemplateDef and its examples Type_GetByName,
    # Type_ListEnumDefs), which this older example leaves out
    assert compare(answer.json(), documented["response_200"]) == (set(), {"$.serviceType", "$.lastModifiedTS"}, {})
