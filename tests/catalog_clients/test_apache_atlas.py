"""The official Apache Atlas Python client (`apache-atlas` 0.0.16) against the embedded catalog, route by route.

The client's models are dicts that add every field they know as None; `present()` drops those so that what the
server answered is compared exactly. Two client bugs are worked around through the client's own `call_api` (same
path, method and headers): `get_relationship_by_guid` cannot parse any AtlasRelationshipWithExtInfo
(`super(AtlasBase, self)` in its model), and `update_relationship` sends the relationship as query parameters
instead of the body.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from apache_atlas.client.base_client import AtlasClient
from apache_atlas.client.entity import EntityClient
from apache_atlas.client.relationship import RelationshipClient
from apache_atlas.exceptions import AtlasServiceException
from apache_atlas.model.instance import AtlasEntitiesWithExtInfo, AtlasEntityWithExtInfo, EntityMutationResponse
from apache_atlas.model.misc import SearchFilter
from apache_atlas.model.relationship import AtlasRelationship
from apache_atlas.model.typedef import AtlasTypesDef
from apache_atlas.utils import API, HTTPMethod, HTTPStatus, attributes_to_params

from tests.support.catalog_clients import HOST, LAKE, SCANNER_RELATIONSHIPS, Calls, without_times
from tools.catalog import CatalogServer

ORDERS, SALES = f"{LAKE}/orders.csv", f"default.sales@{HOST}"
PROCESS = f"{HOST}/jobs/7/processes/load_sales"


def present(value: Any) -> Any:
    """The value without the None fields the client's models add."""
    if isinstance(value, dict):
        return {k: present(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [present(v) for v in value]
    return value


def header(guid: str, type_name: str, qualified_name: str, status: str = "ACTIVE") -> dict:
    """A mutation response header as the client's model keeps it (the model has no lastModifiedTS field)."""
    return {
        "typeName": type_name,
        "attributes": {"qualifiedName": qualified_name},
        "guid": guid,
        "status": status,
        "isIncomplete": False,
    }


def load(atlas: AtlasClient) -> dict[str, str]:
    """orders.csv -> load_sales -> sales, created through the client; returns guids by name."""
    atlas.typedef.create_atlas_typedefs(
        AtlasTypesDef(
            {
                "entityDefs": [
                    {
                        "name": "client_suite_process",
                        "superTypes": ["Process"],
                        "attributeDefs": [{"name": "columnMapping", "typeName": "string", "isOptional": True}],
                    }
                ]
            }
        )
    )
    created = atlas.entity.create_entities(
        AtlasEntitiesWithExtInfo(
            {
                "entities": [
                    {
                        "typeName": "azure_datalake_gen2_path",
                        "guid": "-1",
                        "attributes": {"qualifiedName": ORDERS, "name": "orders.csv"},
                    },
                    {"typeName": "hive_table", "guid": "-2", "attributes": {"qualifiedName": SALES, "name": "sales"}},
                    {
                        "typeName": "client_suite_process",
                        "guid": "-3",
                        "attributes": {
                            "qualifiedName": PROCESS,
                            "name": "load_sales",
                            "inputs": [{"guid": "-1"}],
                            "outputs": [{"guid": "-2"}],
                            "columnMapping": json.dumps(
                                [
                                    {
                                        "DatasetMapping": {"Source": ORDERS, "Sink": SALES},
                                        "ColumnMapping": [{"Source": "amount", "Sink": "amount"}],
                                    }
                                ]
                            ),
                        },
                    },
                ]
            }
        )
    )
    g = created.guidAssignments
    return {"orders": g["-1"], "sales": g["-2"], "process": g["-3"]}


def test_typedefs_create_read_filter_update_delete(atlas: AtlasClient, catalog: CatalogServer) -> None:
    created = atlas.typedef.create_atlas_typedefs(
        AtlasTypesDef(
            {
                "entityDefs": [
                    {
                        "name": "suite_dataset",
                        "superTypes": ["DataSet"],
                        "attributeDefs": [{"name": "format", "typeName": "string"}],
                    }
                ]
            }
        )
    )
    assert [(d.name, d.superTypes, d.version) for d in created.entityDefs] == [("suite_dataset", ["DataSet"], 1)]
    assert atlas.typedef.get_entitydef_by_name("suite_dataset").attributeDefs[0]["name"] == "format"
    assert atlas.typedef.get_entitydef_by_guid(created.entityDefs[0].guid).name == "suite_dataset"
    assert present(atlas.typedef.get_relationshipdef_by_name("dataset_process_inputs").endDef1) == {
        "type": "Process",
        "name": "inputs",
        "isContainer": True,
        "cardinality": "SET",
        "isLegacyAttribute": True,
    }
    relationships_only = SearchFilter()
    relationships_only.params = {"type": "relationship"}  # SearchFilter's constructor drops `params`
    headers = atlas.typedef.get_all_typedef_headers(relationships_only)
    assert [h["name"] for h in headers] == ["dataset_process_inputs", "process_dataset_outputs", *SCANNER_RELATIONSHIPS]
    relationship_defs = atlas.typedef.get_all_typedefs(relationships_only)
    assert (relationship_defs.entityDefs, len(relationship_defs.relationshipDefs)) == ([], 20)
    updated = atlas.typedef.update_atlas_typedefs(
        AtlasTypesDef(
            {
                "entityDefs": [
                    {
                        "name": "suite_dataset",
                        "superTypes": ["DataSet"],
                        "attributeDefs": [
                            {"name": "format", "typeName": "string"},
                            {"name": "rows", "typeName": "long"},
                        ],
                    }
                ]
            }
        )
    )
    assert [(d.name, d.version, [a["name"] for a in d.attributeDefs]) for d in updated.entityDefs] == [
        ("suite_dataset", 2, ["format", "rows"])
    ]
    atlas.typedef.delete_type_by_name("suite_dataset")
    assert atlas.typedef.type_with_name_exists("suite_dataset") is False
    assert Calls(catalog).routes() == {
        "POST /types/typedefs": 1,
        "GET /types/{category}/name/{name}": 3,
        "GET /types/{category}/guid/{guid}": 1,
        "GET /types/typedefs/headers": 1,
        "GET /types/typedefs": 1,
        "PUT /types/typedefs": 1,
        "DELETE /types/{category}/name/{name}": 1,
    }


def test_entities_create_read_by_guid_and_unique_attributes(atlas: AtlasClient, catalog: CatalogServer) -> None:
    g = load(atlas)
    Calls(catalog).reset()
    orders = atlas.entity.get_entity_by_guid(g["orders"])
    assert without_times(present(orders.entity)) == {
        "typeName": "azure_datalake_gen2_path",
        "attributes": {"qualifiedName": ORDERS, "name": "orders.csv"},
        "guid": g["orders"],
        "status": "ACTIVE",
        "createdBy": "steward",
        "updatedBy": "steward",
        "createTime": "<time>",
        "updateTime": "<time>",
        "version": 0,
        "relationshipAttributes": {
            "inputToProcesses": [
                {
                    "guid": g["process"],
                    "typeName": "client_suite_process",
                    "uniqueAttributes": {"qualifiedName": PROCESS},
                    "entityStatus": "ACTIVE",
                    "displayText": "load_sales",
                    "relationshipType": "dataset_process_inputs",
                    "relationshipGuid": orders.entity.relationshipAttributes["inputToProcesses"][0]["relationshipGuid"],
                    "relationshipStatus": "ACTIVE",
                    "relationshipAttributes": {"typeName": "dataset_process_inputs"},
                }
            ],
            "outputFromProcesses": [],
            "meanings": [],  # glossary terms assigned (none)
        },
    }
    by_guids = atlas.entity.get_entities_by_guids([g["sales"], g["orders"]], ignore_relationships=True)
    assert [e.guid for e in by_guids.entities] == [g["sales"], g["orders"]]
    by_name = atlas.entity.get_entity_by_attribute("hive_table", {"qualifiedName": SALES})
    assert (by_name.entity.guid, by_name.entity.attributes) == (g["sales"], {"qualifiedName": SALES, "name": "sales"})
    several = atlas.entity.get_entities_by_attribute(
        "hive_table", [{"qualifiedName": SALES}, {"qualifiedName": "default.none@x"}]
    )
    assert [e.guid for e in several.entities] == [g["sales"]]
    entity_header = atlas.entity.get_entity_header_by_guid(g["process"])
    assert without_times(present(entity_header)) == {
        "typeName": "client_suite_process",
        "attributes": {"qualifiedName": PROCESS, "name": "load_sales"},
        "guid": g["process"],
        "status": "ACTIVE",
        "displayText": "load_sales",
        "classificationNames": [],
        "classifications": [],
        "meaningNames": [],
        "isIncomplete": False,
        "labels": [],
    }
    by_attribute = atlas.entity.get_entity_header_by_attribute("hive_table", {"qualifiedName": SALES})
    assert (by_attribute.guid, by_attribute.displayText) == (g["sales"], "sales")
    assert Calls(catalog).routes() == {
        "GET /entity/guid/{guid}": 1,
        "GET /entity/bulk": 1,
        "GET /entity/uniqueAttribute/type/{type_name}": 1,
        "GET /entity/bulk/uniqueAttribute/type/{type_name}": 1,
        "GET /entity/guid/{guid}/header": 1,
        "GET /entity/uniqueAttribute/type/{type_name}/header": 1,
    }


def test_entity_updates_partial_by_guid_by_unique_attribute_and_whole(
    atlas: AtlasClient, catalog: CatalogServer
) -> None:
    g = load(atlas)
    Calls(catalog).reset()
    partial = atlas.entity.partial_update_entity_by_guid(g["orders"], "raw orders", "description")
    assert present(partial.mutatedEntities) == {
        "PARTIAL_UPDATE": [header(g["orders"], "azure_datalake_gen2_path", ORDERS)]
    }
    by_attribute = atlas.call_api(
        EntityClient.UPDATE_ENTITY_BY_ATTRIBUTE.format_path_with_params("hive_table"),
        EntityMutationResponse,
        attributes_to_params({"qualifiedName": SALES}),
        {"entity": {"typeName": "hive_table", "attributes": {"owner": "sales-team", "comment": "curated"}}},
    )
    assert present(by_attribute.mutatedEntities) == {"PARTIAL_UPDATE": [header(g["sales"], "hive_table", SALES)]}
    whole = atlas.entity.update_entity(
        AtlasEntityWithExtInfo(
            {
                "entity": {
                    "typeName": "hive_table",
                    "attributes": {"qualifiedName": SALES, "name": "sales", "tableType": "MANAGED"},
                }
            }
        )
    )
    assert present(whole.mutatedEntities) == {"UPDATE": [header(g["sales"], "hive_table", SALES)]}
    assert atlas.entity.get_entity_by_guid(g["sales"], ignore_relationships=True).entity.attributes == {
        "qualifiedName": SALES,
        "name": "sales",
        "owner": "sales-team",
        "comment": "curated",
        "tableType": "MANAGED",
    }
    assert atlas.entity.get_entity_by_guid(g["orders"]).entity.attributes["description"] == "raw orders"
    with pytest.raises(AtlasServiceException) as unknown:
        atlas.entity.partial_update_entity_by_guid(g["orders"], "x", "no_such_attribute")
    assert (
        "'errorCode': 'ATLAS-400-00-023', 'errorMessage': 'Attribute no_such_attribute not found for type "
        "azure_datalake_gen2_path'" in str(unknown.value)
    )
    assert Calls(catalog).routes() == {
        "PUT /entity/guid/{guid}": 2,
        "PUT /entity/uniqueAttribute/type/{type_name}": 1,
        "POST /entity": 1,
        "GET /entity/guid/{guid}": 2,
    }


def test_entity_deletes_are_soft_and_leave_lineage(atlas: AtlasClient, catalog: CatalogServer) -> None:
    g = load(atlas)
    extra = atlas.entity.create_entity(
        AtlasEntityWithExtInfo(
            {
                "entity": {
                    "typeName": "hive_table",
                    "attributes": {"qualifiedName": f"default.tmp@{HOST}", "name": "tmp"},
                }
            }
        )
    )
    tmp = extra.mutatedEntities["CREATE"][0]["guid"]
    Calls(catalog).reset()
    by_attribute = atlas.entity.delete_entity_by_attribute("hive_table", {"qualifiedName": f"default.tmp@{HOST}"})
    assert present(by_attribute.mutatedEntities) == {
        "DELETE": [header(tmp, "hive_table", f"default.tmp@{HOST}", "DELETED")]
    }
    by_guid = atlas.entity.delete_entity_by_guid(g["process"])
    assert [(h.guid, h.status) for h in by_guid.mutatedEntities["DELETE"]] == [(g["process"], "DELETED")]
    assert atlas.entity.delete_entities_by_guids([g["process"]]).mutatedEntities is None  # already deleted: {}
    lineage = atlas.lineage.get_lineage_info(g["orders"], "BOTH", 3)
    assert (list(lineage.guidEntityMap), lineage.relations) == ([g["orders"]], [])
    assert Calls(catalog).routes() == {
        "DELETE /entity/uniqueAttribute/type/{type_name}": 1,
        "DELETE /entity/guid/{guid}": 1,
        "DELETE /entity/bulk": 1,
        "GET /lineage/{guid}": 1,
    }


def test_lineage_by_guid_and_by_unique_attribute(atlas: AtlasClient, catalog: CatalogServer) -> None:
    g = load(atlas)
    Calls(catalog).reset()
    by_guid = atlas.lineage.get_lineage_info(g["sales"], "INPUT", 3)
    by_name = atlas.lineage.get_lineage_info_attr("hive_table", {"qualifiedName": SALES}, "INPUT", 3)
    for lineage in (by_guid, by_name):
        assert (lineage.baseEntityGuid, lineage.lineageDirection, lineage.lineageDepth) == (g["sales"], "INPUT", 3)
        assert sorted(lineage.guidEntityMap) == sorted(g.values())
        assert sorted((r["fromEntityId"], r["toEntityId"]) for r in lineage.relations) == sorted(
            [(g["orders"], g["process"]), (g["process"], g["sales"])]
        )
    with pytest.raises(AtlasServiceException) as missing:
        atlas.lineage.get_lineage_info_attr("hive_table", {"qualifiedName": "default.none@x"}, "BOTH", 3)
    assert "failed with status 404" in str(missing.value) and "ATLAS-404-00-009" in str(missing.value)
    assert Calls(catalog).routes() == {"GET /lineage/{guid}": 1, "GET /lineage/uniqueAttribute/type/{type_name}": 2}


def test_basic_search_by_get_and_by_post(atlas: AtlasClient, catalog: CatalogServer) -> None:
    g = load(atlas)
    Calls(catalog).reset()
    found = atlas.discovery.basic_search("DataSet", None, "sales", True, limit=10)
    assert (found.queryType, [e.guid for e in found.entities], found.approximateCount) == ("BASIC", [g["sales"]], 1)
    faceted = atlas.discovery.faceted_search({"typeName": "Process", "query": "load", "limit": 5})
    assert [(e.guid, e.displayText) for e in faceted.entities] == [(g["process"], "load_sales")]
    assert Calls(catalog).routes() == {"GET /search/basic": 1, "POST /search/basic": 1}


def test_relationships_create_read_update_delete(atlas: AtlasClient, catalog: CatalogServer) -> None:
    g = load(atlas)
    Calls(catalog).reset()
    created = atlas.relationship.create_relationship(
        AtlasRelationship(
            {
                "typeName": "dataset_process_inputs",
                "end1": {"guid": g["process"]},
                "end2": {"typeName": "hive_table", "uniqueAttributes": {"qualifiedName": SALES}},
            }
        )
    )
    expected = {
        "typeName": "dataset_process_inputs",
        "attributes": {},
        "guid": created.guid,
        "provenanceType": 0,
        "status": "ACTIVE",
        "createdBy": "steward",
        "updatedBy": "steward",
        "createTime": "<time>",
        "updateTime": "<time>",
        "version": 0,
        "end1": {
            "guid": g["process"],
            "typeName": "client_suite_process",
            "uniqueAttributes": {"qualifiedName": PROCESS},
        },
        "end2": {"guid": g["sales"], "typeName": "hive_table", "uniqueAttributes": {"qualifiedName": SALES}},
        "label": "__Process.inputs",
        "propagateTags": "TWO_TO_ONE",  # an input's classifications flow to the process (Atlas's base model)
        "propagatedClassifications": [],
        "blockedPropagatedClassifications": [],
    }
    assert without_times(present(created)) == expected
    read = atlas.call_api(
        RelationshipClient.GET_RELATIONSHIP_BY_GUID.format_path_with_params(created.guid), dict, {"extendedInfo": True}
    )
    assert without_times(read["relationship"]) == expected
    assert sorted(read["referredEntities"]) == sorted([g["process"], g["sales"]])
    assert atlas.entity.get_entity_by_guid(g["process"]).entity.attributes["inputs"] == [
        {"guid": g["orders"], "typeName": "azure_datalake_gen2_path", "uniqueAttributes": {"qualifiedName": ORDERS}},
        {"guid": g["sales"], "typeName": "hive_table", "uniqueAttributes": {"qualifiedName": SALES}},
    ]
    updated = atlas.call_api(
        RelationshipClient.UPDATE_RELATIONSHIP,
        AtlasRelationship,
        None,
        {"guid": created.guid, "typeName": "dataset_process_inputs", "attributes": {}},
    )
    assert (updated.guid, updated.version) == (created.guid, 1)
    with pytest.raises(AtlasServiceException) as duplicate:
        atlas.relationship.create_relationship(
            AtlasRelationship(
                {"typeName": "dataset_process_inputs", "end1": {"guid": g["process"]}, "end2": {"guid": g["sales"]}}
            )
        )
    assert (
        f"'errorCode': 'ATLAS-409-00-004', 'errorMessage': 'relationship dataset_process_inputs already exists "
        f"between entities {g['process']} and {g['sales']}'"
    ) in str(duplicate.value)
    atlas.relationship.delete_relationship_by_guid(created.guid)
    gone = atlas.call_api(RelationshipClient.GET_RELATIONSHIP_BY_GUID.format_path_with_params(created.guid), dict)
    assert (gone["relationship"]["status"], gone["relationship"]["version"]) == ("DELETED", 2)
    with pytest.raises(AtlasServiceException) as again:
        atlas.relationship.delete_relationship_by_guid(created.guid)
    assert "ATLAS-404-00-00F" in str(again.value)
    with pytest.raises(AtlasServiceException) as wrong_ends:
        atlas.relationship.create_relationship(
            AtlasRelationship(
                {"typeName": "process_dataset_outputs", "end1": {"guid": g["sales"]}, "end2": {"guid": g["orders"]}}
            )
        )
    assert (
        "invalid relationshipDef: process_dataset_outputs: actual: [end type 1: hive_table, end type 2: "
        "azure_datalake_gen2_path]. expected: [end type 1: Process, end type 2: DataSet]"
    ) in str(wrong_ends.value)
    assert Calls(catalog).routes() == {
        "POST /relationship": 3,
        "GET /relationship/guid/{guid}": 2,
        "PUT /relationship": 1,
        "DELETE /relationship/guid/{guid}": 2,
        "GET /entity/guid/{guid}": 1,
    }


def test_errors_are_atlas_json_for_every_status(atlas: AtlasClient, catalog: CatalogServer) -> None:
    with pytest.raises(AtlasServiceException) as not_found:
        atlas.entity.get_entity_by_guid("no-such-guid")
    assert str(not_found.value) == (
        "Metadata service API HTTPMethod.GET api/atlas/v2/entity/guid/no-such-guid failed with status 404. Response "
        "body is: {'errorCode': 'ATLAS-404-00-005', 'errorMessage': 'Given instance guid no-such-guid is "
        "invalid/not found'}"
    )
    with pytest.raises(AtlasServiceException) as wrong_method:  # Atlas has no PUT on /lineage: a JSON 405
        atlas.call_api(API("api/atlas/v2/lineage/x", HTTPMethod.PUT, HTTPStatus.OK), dict)
    assert str(wrong_method.value).endswith(
        "failed with status 405. Response body is: {'errorCode': 'ATLAS-405-00-001', 'errorMessage': 'Error 405 - "
        "The request method PUT is inappropriate for the URL: /api/atlas/v2/lineage/x'}"
    )
