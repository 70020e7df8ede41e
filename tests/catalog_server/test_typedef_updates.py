"""PUT /types/typedefs changes a type only as Apache Atlas lets it (tools/catalog/typeupdates.py): what Atlas refuses is
refused with its error code and message, and nothing of the request is saved; what it allows still works."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import requests

from tools.catalog import CatalogServer

END = "AtlasRelationshipEndDef{{type='{type}', name==>'{name}', description==>'null', isContainer==>'false', \
cardinality==>'{cardinality}', isLegacyAttribute==>'false'}}"


def optional(name: str, type_name: str = "string", **extra: Any) -> dict:
    return {"name": name, "typeName": type_name, "isOptional": True, "cardinality": "SINGLE", **extra}


TYPES: dict[str, list[dict]] = {
    "structDefs": [{"name": "rule_struct", "attributeDefs": [optional("x")]}],
    "classificationDefs": [{"name": "rule_tag", "attributeDefs": [optional("level", "int")]}],
    "entityDefs": [
        {"name": "rule_dataset", "superTypes": ["DataSet"], "attributeDefs": [optional("rows", "long")]},
        {"name": "rule_marker", "superTypes": ["Asset"], "attributeDefs": []},
    ],
    "relationshipDefs": [
        {
            "name": "rule_dataset_parent",
            "relationshipCategory": "ASSOCIATION",
            "endDef1": {"type": "rule_dataset", "name": "parent", "cardinality": "SINGLE"},
            "endDef2": {"type": "rule_dataset", "name": "children", "cardinality": "SET"},
        }
    ],
    "businessMetadataDefs": [
        {
            "name": "rule_meta",
            "attributeDefs": [
                optional("steward", options={"maxStrLength": "20", "applicableEntityTypes": '["DataSet", "Process"]'})
            ],
        }
    ],
}


@pytest.fixture
def atlas(open_catalog: CatalogServer) -> str:
    requests.post(f"{open_catalog.atlas_url}/types/typedefs", json=TYPES, timeout=10).raise_for_status()
    return open_catalog.atlas_url


def definition(key: str, name: str) -> dict:
    """A copy of one of TYPES, to change and send back."""
    return copy.deepcopy(next(d for d in TYPES[key] if d["name"] == name))


def put(atlas: str, body: dict) -> tuple[int, dict]:
    response = requests.put(f"{atlas}/types/typedefs", json=body, timeout=10)
    return response.status_code, response.json()


def stored(atlas: str, name: str) -> dict:
    return requests.get(f"{atlas}/types/typedef/name/{name}", timeout=10).json()


def refused(code: str, message: str, status: int = 400) -> tuple[int, dict]:
    return status, {"errorCode": code, "errorMessage": message}


def purview_notebook(atlas: str) -> dict:
    """databricks_notebook as the catalog answers it (Purview's built-in definition)."""
    return {k: v for k, v in stored(atlas, "databricks_notebook").items() if k != "subTypes"}


def test_removing_a_supertype_is_refused(atlas: str) -> None:
    notebook = purview_notebook(atlas)
    assert put(atlas, {"entityDefs": [{**notebook, "superTypes": ["Asset"]}]}) == refused(
        "ATLAS-400-00-00E", "superType remove not supported"
    )
    assert stored(atlas, "databricks_notebook")["superTypes"] == ["databricks_runnable"]


@pytest.mark.parametrize(
    ("key", "name", "attribute"),
    [
        ("entityDefs", "rule_dataset", "rows"),
        ("structDefs", "rule_struct", "x"),
        ("classificationDefs", "rule_tag", "level"),
        ("businessMetadataDefs", "rule_meta", "steward"),
    ],
)
def test_removing_an_attribute_is_refused(atlas: str, key: str, name: str, attribute: str) -> None:
    changed = {**definition(key, name), "attributeDefs": []}
    assert put(atlas, {key: [changed]}) == refused(
        "ATLAS-400-00-00D", f"{name}.{attribute} : attribute delete not supported"
    )
    assert [a["name"] for a in stored(atlas, name)["attributeDefs"]] == [attribute]


def test_the_connectors_earlier_databricks_notebook_cannot_replace_purviews(atlas: str) -> None:
    earlier = {"name": "databricks_notebook", "superTypes": ["Asset"], "attributeDefs": [optional("path")]}
    assert put(atlas, {"entityDefs": [earlier]}) == refused(
        "ATLAS-400-00-00D", "databricks_notebook.clusterName : attribute delete not supported"
    )


def test_adding_a_mandatory_attribute_is_refused(atlas: str) -> None:
    changed = definition("entityDefs", "rule_dataset")
    changed["attributeDefs"].append({**optional("owner"), "isOptional": False})
    assert put(atlas, {"entityDefs": [changed]}) == refused(
        "ATLAS-400-00-00C", "rule_dataset.owner : can not add mandatory attribute"
    )


def test_changing_an_attributes_type_is_refused(atlas: str) -> None:
    """AtlasStructDefStoreV2 answers BAD_REQUEST here, not ATTRIBUTE_UPDATE_NOT_SUPPORTED (ATLAS-400-00-027)."""
    changed = {**definition("entityDefs", "rule_dataset"), "attributeDefs": [optional("rows", "string")]}
    assert put(atlas, {"entityDefs": [changed]}) == refused(
        "ATLAS-400-00-029", "Data type update for attribute is not supported"
    )
    assert stored(atlas, "rule_dataset")["attributeDefs"][0]["typeName"] == "long"


def test_changing_a_relationship_category_is_refused(atlas: str) -> None:
    changed = {**definition("relationshipDefs", "rule_dataset_parent"), "relationshipCategory": "AGGREGATION"}
    assert put(atlas, {"relationshipDefs": [changed]}) == refused(
        "ATLAS-400-00-039",
        "invalid  update for relationship rule_dataset_parent: new relationshipDef category AGGREGATION, existing "
        "relationshipDef category ASSOCIATION",
    )


@pytest.mark.parametrize(
    ("end", "field", "value", "code"),
    [("endDef1", "type", "DataSet", "ATLAS-400-00-037"), ("endDef2", "name", "kids", "ATLAS-400-00-038")],
    ids=["end-1-type", "end-2-name"],
)
def test_changing_a_relationship_end_is_refused(atlas: str, end: str, field: str, value: str, code: str) -> None:
    changed = definition("relationshipDefs", "rule_dataset_parent")
    before = dict(changed[end])
    changed[end][field] = value
    new, existing = (
        END.format(type=e["type"], name=e["name"], cardinality=e["cardinality"]) for e in (changed[end], before)
    )
    which = end[-1]
    assert put(atlas, {"relationshipDefs": [changed]}) == refused(
        code,
        f"invalid update for relationshipDef rule_dataset_parent: new end{which} {new}, existing end{which} {existing}",
    )
    assert stored(atlas, "rule_dataset_parent")[end][field] == before[field]


def test_a_type_sent_in_another_category_is_unknown_there(atlas: str) -> None:
    notebook = purview_notebook(atlas)
    assert put(
        atlas, {"structDefs": [{"name": "databricks_notebook", "attributeDefs": notebook["attributeDefs"]}]}
    ) == (refused("ATLAS-404-00-001", "Given typename databricks_notebook was invalid", 404))
    assert stored(atlas, "databricks_notebook")["category"] == "ENTITY"


def test_removing_an_applicable_entity_type_of_a_business_attribute_is_refused(atlas: str) -> None:
    changed = definition("businessMetadataDefs", "rule_meta")
    changed["attributeDefs"][0]["options"]["applicableEntityTypes"] = '["DataSet"]'
    assert put(atlas, {"businessMetadataDefs": [changed]}) == refused(
        "ATLAS-400-00-093",
        "Cannot remove applicableEntityTypes in Attribute Def: steward, defined in business-metadata: rule_meta",
    )


def test_a_refused_request_saves_nothing_of_it(atlas: str) -> None:
    grown = definition("entityDefs", "rule_dataset")
    grown["attributeDefs"].append(optional("bytes", "long"))
    recategorized = {**definition("relationshipDefs", "rule_dataset_parent"), "relationshipCategory": "COMPOSITION"}
    status, body = put(atlas, {"entityDefs": [grown], "relationshipDefs": [recategorized]})
    assert (status, body["errorCode"]) == (400, "ATLAS-400-00-039")
    dataset = stored(atlas, "rule_dataset")
    assert ([a["name"] for a in dataset["attributeDefs"]], dataset["version"]) == (["rows"], 1)


def test_what_atlas_allows_is_saved(atlas: str) -> None:
    grown = definition("entityDefs", "rule_dataset")
    grown.update(description="rows counted", superTypes=["DataSet", "rule_marker"], options={"purpose": "tests"})
    grown["attributeDefs"].append(optional("bytes", "long"))
    relationship = {**definition("relationshipDefs", "rule_dataset_parent"), "propagateTags": "ONE_TO_TWO"}
    relationship["endDef1"]["description"] = "the parent"
    meta = definition("businessMetadataDefs", "rule_meta")
    meta["attributeDefs"][0]["options"]["applicableEntityTypes"] = '["DataSet", "Process", "rule_marker"]'
    status, body = put(
        atlas, {"entityDefs": [grown], "relationshipDefs": [relationship], "businessMetadataDefs": [meta]}
    )
    assert status == 200, body
    dataset = stored(atlas, "rule_dataset")
    assert (
        dataset["description"],
        dataset["superTypes"],
        dataset["options"],
        [a["name"] for a in dataset["attributeDefs"]],
        dataset["version"],
    ) == ("rows counted", ["DataSet", "rule_marker"], {"purpose": "tests"}, ["rows", "bytes"], 2)
    assert stored(atlas, "rule_marker")["subTypes"] == ["rule_dataset"]
    assert stored(atlas, "rule_dataset_parent")["propagateTags"] == "ONE_TO_TWO"
    assert stored(atlas, "rule_meta")["attributeDefs"][0]["options"]["applicableEntityTypes"] == (
        '["DataSet", "Process", "rule_marker"]'
    )


def test_an_unknown_supertype_is_a_bad_request(atlas: str) -> None:
    """AtlasTypeDefGraphStore translates its registry's TYPE_NAME_NOT_FOUND into BAD_REQUEST, on create and update."""
    changed = {**definition("entityDefs", "rule_dataset"), "superTypes": ["DataSet", "nothing"]}
    expected = refused("ATLAS-400-00-029", "Given typename nothing was invalid")
    assert put(atlas, {"entityDefs": [changed]}) == expected
    created = requests.post(
        f"{atlas}/types/typedefs", json={"entityDefs": [{**changed, "name": "rule_other"}]}, timeout=10
    )
    assert (created.status_code, created.json()) == expected
