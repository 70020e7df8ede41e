"""Business metadata typedefs (Purview's managed attribute groups): created, listed and read like any typedef, and
checked as Atlas's AtlasBusinessMetadataType checks them (tools/catalog/business_metadata.py)."""

from __future__ import annotations

import pytest
import requests

from tools.catalog import CatalogServer

RUN = "ol2purview"


def string_attribute(name: str, applicable: str = '["databricks_process"]', **options: str) -> dict:
    return {
        "name": name,
        "typeName": "string",
        "isOptional": True,
        "cardinality": "SINGLE",
        "options": {"maxStrLength": "200", "applicableEntityTypes": applicable, **options},
    }


GROUP = {
    "name": RUN,
    "description": "the run metadata ol2purview keeps on processes",
    "attributeDefs": [
        string_attribute("lastRunId"),
        {
            "name": "runCount",
            "typeName": "int",
            "isOptional": True,
            "options": {"applicableEntityTypes": '["databricks_process"]'},
        },
    ],
}


@pytest.fixture
def atlas(open_catalog: CatalogServer) -> str:
    return open_catalog.atlas_url


def create(atlas: str, *groups: dict) -> requests.Response:
    return requests.post(f"{atlas}/types/typedefs", json={"businessMetadataDefs": list(groups)}, timeout=10)


def test_a_business_metadata_def_is_created_listed_and_read_by_name(atlas: str) -> None:
    created = create(atlas, GROUP)
    assert created.status_code == 200, created.text
    answered = created.json()["businessMetadataDefs"]
    assert [(d["name"], d["category"], d["version"]) for d in answered] == [(RUN, "BUSINESS_METADATA", 1)]
    by_name = requests.get(f"{atlas}/types/businessmetadatadef/name/{RUN}", timeout=10).json()
    assert by_name == answered[0]
    assert requests.get(f"{atlas}/types/typedef/name/{RUN}", timeout=10).json() == by_name
    assert [a["name"] for a in by_name["attributeDefs"]] == ["lastRunId", "runCount"]
    listed = requests.get(f"{atlas}/types/typedefs", timeout=10).json()["businessMetadataDefs"]
    filtered = requests.get(f"{atlas}/types/typedefs", params={"type": "business_metadata"}, timeout=10).json()
    assert listed == filtered["businessMetadataDefs"] == [by_name] and filtered["entityDefs"] == []
    headers = requests.get(f"{atlas}/types/typedefs/headers", params={"type": "business_metadata"}, timeout=10)
    assert headers.json() == [{"guid": by_name["guid"], "name": RUN, "category": "BUSINESS_METADATA"}]
    entity_def = requests.get(f"{atlas}/types/entitydef/name/{RUN}", timeout=10)
    assert (entity_def.status_code, entity_def.json()["errorCode"]) == (404, "ATLAS-404-00-001")


def _invalid(attribute: dict) -> dict:
    return {"name": "bad_group", "attributeDefs": [attribute]}


@pytest.mark.parametrize(
    ("group", "status", "code", "message"),
    [
        pytest.param(
            _invalid(string_attribute("owner", '["databricks_process", "no_such_type"]')),
            400,
            "ATLAS-400-00-029",
            "Given typename no_such_type was invalid",
            id="applicable-type-unknown",
        ),
        pytest.param(
            _invalid(string_attribute("owner", '["DataSet"]') | {"options": {"maxStrLength": "20"}}),
            400,
            "ATLAS-400-00-02B",
            "Mandatory field owner.options.applicableEntityTypes has empty/null value",
            id="applicable-types-missing",
        ),
        pytest.param(
            _invalid(string_attribute("owner", "DataSet")),
            400,
            "ATLAS-400-00-029",
            "bad_group.owner: options.applicableEntityTypes must be a JSON list of entity type names, as a string",
            id="applicable-types-not-a-json-list",
        ),
        pytest.param(
            _invalid({"name": "owner", "typeName": "string", "options": {"applicableEntityTypes": '["DataSet"]'}}),
            400,
            "ATLAS-400-00-02B",
            "Mandatory field owner.options.maxStrLength has empty/null value",
            id="string-without-max-length",
        ),
        pytest.param(
            _invalid(
                {"name": "tags", "typeName": "array<string>", "options": {"applicableEntityTypes": '["DataSet"]'}}
            ),
            400,
            "ATLAS-400-00-02B",
            "Mandatory field tags.options.maxStrLength has empty/null value",
            id="string-array-without-max-length",
        ),
        pytest.param(
            _invalid({"name": "input", "typeName": "DataSet", "options": {"applicableEntityTypes": '["Process"]'}}),
            400,
            "ATLAS-400-00-094",
            "bad_group.input: invalid attribute type. Business-metadata attribute cannot be of type "
            "entity/classification/struct/business-metadata",
            id="entity-typed",
        ),
        pytest.param(
            _invalid(
                {"name": "inputs", "typeName": "array<DataSet>", "options": {"applicableEntityTypes": '["Process"]'}}
            ),
            400,
            "ATLAS-400-00-094",
            "bad_group.inputs: invalid attribute type. Business-metadata attribute cannot be of type "
            "entity/classification/struct/business-metadata",
            id="array-of-entities",
        ),
        pytest.param(
            _invalid({"name": "when", "typeName": "instant", "options": {"applicableEntityTypes": '["Process"]'}}),
            400,
            "ATLAS-400-00-001",
            "Unknown type instant for bad_group.when",
            id="unknown-attribute-type",
        ),
        pytest.param(
            _invalid(string_attribute("2nd-owner", '["DataSet"]')),
            400,
            "ATLAS-400-00-09A",
            "2nd-owner: invalid name. Attribute names must begin with a letter followed by a sequence of letters, "
            "numbers, or '_' characters",
            id="attribute-name",
        ),
    ],
)
def test_a_business_metadata_def_atlas_refuses_is_refused(
    atlas: str, group: dict, status: int, code: str, message: str
) -> None:
    refused = create(atlas, GROUP, group)
    assert (refused.status_code, refused.json()) == (status, {"errorCode": code, "errorMessage": message})
    assert requests.get(f"{atlas}/types/businessmetadatadef/name/{RUN}", timeout=10).status_code == 404  # none saved


def test_attributes_of_primitive_and_enum_types_and_arrays_of_them_are_accepted(atlas: str) -> None:
    applicable = {"applicableEntityTypes": '["Process"]'}
    created = requests.post(
        f"{atlas}/types/typedefs",
        timeout=10,
        json={
            "enumDefs": [{"name": "run_state", "elementDefs": [{"value": "COMPLETE", "ordinal": 0}]}],
            "businessMetadataDefs": [
                {
                    "name": "typed",
                    "attributeDefs": [
                        *({"name": t, "typeName": t, "options": applicable} for t in ("boolean", "byte", "short")),
                        *({"name": t, "typeName": t, "options": applicable} for t in ("int", "long", "float")),
                        {"name": "double", "typeName": "double", "options": applicable},
                        {"name": "date", "typeName": "date", "options": applicable},
                        {"name": "state", "typeName": "run_state", "options": applicable},
                        {"name": "counts", "typeName": "array<long>", "options": applicable},
                        {"name": "names", "typeName": "array<string>", "options": {**applicable, "maxStrLength": "9"}},
                    ],
                }
            ],
        },
    )
    assert created.status_code == 200, created.text
    assert len(created.json()["businessMetadataDefs"][0]["attributeDefs"]) == 11


def test_an_entity_type_a_business_metadata_def_applies_to_is_not_deleted(atlas: str) -> None:
    requests.post(
        f"{atlas}/types/typedefs",
        json={"entityDefs": [{"name": "rule_applies", "superTypes": ["DataSet"]}]},
        timeout=10,
    ).raise_for_status()
    create(atlas, {"name": "notes", "attributeDefs": [string_attribute("note", '["rule_applies"]')]}).raise_for_status()
    applied_to = requests.delete(f"{atlas}/types/typedef/name/rule_applies", timeout=10)
    assert (applied_to.status_code, applied_to.json()) == (
        409,
        {"errorCode": "ATLAS-409-00-002", "errorMessage": "Given type rule_applies has references"},
    )
    assert requests.delete(f"{atlas}/types/typedef/name/notes", timeout=10).status_code == 204  # nothing carries it
    assert requests.delete(f"{atlas}/types/typedef/name/rule_applies", timeout=10).status_code == 204
