"""`relationshipType` on a relationship attribute's value: which relationship def an attribute name that belongs to
several defs is written in and read from, and what Atlas does with a relationshipType that names none of them
(AtlasEntityType.getRelationshipAttribute: the attribute's default def); the built-in Databricks model's ends."""

from __future__ import annotations

import pytest
import requests

from tools.catalog import CatalogServer

WORKSPACE = "databricks://adb-1.azuredatabricks.net"
# item.owner belongs to two relationship defs: rt_owner_a's (the default: defined first) and rt_owner_b's
TYPES = {
    "entityDefs": [
        {"name": "rt_item", "superTypes": ["DataSet"]},
        {"name": "rt_owner_a", "superTypes": ["Asset"]},
        {"name": "rt_owner_b", "superTypes": ["Asset"]},
    ],
    "relationshipDefs": [
        {
            "name": f"rt_item_owner_{x}",
            "relationshipCategory": "ASSOCIATION",
            "endDef1": {"type": "rt_item", "name": "owner", "cardinality": "SINGLE"},
            "endDef2": {"type": f"rt_owner_{x}", "name": "items", "cardinality": "SET"},
        }
        for x in ("a", "b")
    ],
}


@pytest.fixture
def atlas(open_catalog: CatalogServer) -> str:
    requests.post(f"{open_catalog.atlas_url}/types/typedefs", json=TYPES, timeout=10).raise_for_status()
    owners = [
        {"typeName": f"rt_owner_{x}", "attributes": {"qualifiedName": f"owner://{x}", "name": x}} for x in ("a", "b")
    ]
    requests.post(f"{open_catalog.atlas_url}/entity/bulk", json={"entities": owners}, timeout=10).raise_for_status()
    return open_catalog.atlas_url


def item_owned_by(owner: str, relationship_type: str | None = None) -> dict:
    value: dict = {"typeName": f"rt_owner_{owner}", "uniqueAttributes": {"qualifiedName": f"owner://{owner}"}}
    if relationship_type is not None:
        value["relationshipType"] = relationship_type
    return {
        "typeName": "rt_item",
        "attributes": {"qualifiedName": "item://1", "name": "item"},
        "relationshipAttributes": {"owner": value},
    }


def write(atlas: str, *entities: dict) -> requests.Response:
    return requests.post(f"{atlas}/entity/bulk", json={"entities": list(entities)}, timeout=10)


def owner_of_item(atlas: str) -> tuple[str, str]:
    entity = requests.get(
        f"{atlas}/entity/uniqueAttribute/type/rt_item", params={"attr:qualifiedName": "item://1"}, timeout=10
    ).json()["entity"]
    owner = entity["relationshipAttributes"]["owner"]
    return owner["uniqueAttributes"]["qualifiedName"], owner["relationshipType"]


def wrong_end(guid: str, actual: str, expected: str, attribute: str = "owner") -> dict:
    return {
        "errorCode": "ATLAS-400-00-045",
        "errorMessage": f"Invalid entity-type for relationship attribute '{attribute}': entity specified (guid={guid}) "
        f"is of type '{actual}', but expected type is '{expected}'",
    }


def guid_of(atlas: str, type_name: str, qualified_name: str) -> str:
    return requests.get(
        f"{atlas}/entity/uniqueAttribute/type/{type_name}", params={"attr:qualifiedName": qualified_name}, timeout=10
    ).json()["entity"]["guid"]


def test_the_relationship_def_named_is_the_one_written_and_read(atlas: str) -> None:
    assert write(atlas, item_owned_by("b", "rt_item_owner_b")).ok
    assert owner_of_item(atlas) == ("owner://b", "rt_item_owner_b")
    owner = requests.get(f"{atlas}/entity/guid/{guid_of(atlas, 'rt_owner_b', 'owner://b')}", timeout=10).json()
    assert [i["uniqueAttributes"]["qualifiedName"] for i in owner["entity"]["relationshipAttributes"]["items"]] == [
        "item://1"
    ]


def test_without_relationship_type_the_default_def_is_used_and_a_target_of_another_type_refused(atlas: str) -> None:
    assert write(atlas, item_owned_by("a")).ok
    assert owner_of_item(atlas) == ("owner://a", "rt_item_owner_a")
    answer = write(atlas, item_owned_by("b"))
    assert (answer.status_code, answer.json()) == (
        400,
        wrong_end(guid_of(atlas, "rt_owner_b", "owner://b"), "rt_owner_b", "rt_owner_a"),
    )


def test_a_relationship_type_of_no_def_of_that_attribute_is_the_default_def_as_in_atlas(atlas: str) -> None:
    """Atlas does not refuse the name itself: it falls back to the attribute's default def, whose end type decides."""
    assert write(atlas, item_owned_by("a", "dataset_process_inputs")).ok
    assert owner_of_item(atlas) == ("owner://a", "rt_item_owner_a")
    answer = write(atlas, item_owned_by("b", "no_such_relationship"))
    assert (answer.status_code, answer.json()) == (
        400,
        wrong_end(guid_of(atlas, "rt_owner_b", "owner://b"), "rt_owner_b", "rt_owner_a"),
    )
    assert owner_of_item(atlas) == ("owner://a", "rt_item_owner_a")


def test_a_databricks_process_task_is_a_runnable_a_notebook_yes_a_workspace_no(atlas: str) -> None:
    workspace = {"typeName": "databricks_workspace", "attributes": {"qualifiedName": WORKSPACE, "name": "adb-1"}}
    notebook = {
        "typeName": "databricks_notebook",
        "attributes": {"qualifiedName": f"{WORKSPACE}/notebooks/etl", "name": "etl"},
        "relationshipAttributes": {
            "workspace": {"typeName": "databricks_workspace", "uniqueAttributes": {"qualifiedName": WORKSPACE}}
        },
    }
    assert write(atlas, workspace, notebook).ok

    def process_of(task_type: str, task_qualified_name: str) -> dict:
        return {
            "typeName": "databricks_process",
            "attributes": {"qualifiedName": f"{task_qualified_name}/processes/p", "name": "p"},
            "relationshipAttributes": {
                "task": {"typeName": task_type, "uniqueAttributes": {"qualifiedName": task_qualified_name}}
            },
        }

    assert write(atlas, process_of("databricks_notebook", f"{WORKSPACE}/notebooks/etl")).ok
    process = requests.get(
        f"{atlas}/entity/uniqueAttribute/type/databricks_process",
        params={"attr:qualifiedName": f"{WORKSPACE}/notebooks/etl/processes/p"},
        timeout=10,
    ).json()["entity"]
    assert (
        process["relationshipAttributes"]["task"]["relationshipType"],
        process["relationshipAttributes"]["task"]["typeName"],
    ) == (
        "databricks_runnable_processes",
        "databricks_notebook",
    )
    refused = write(atlas, process_of("databricks_workspace", WORKSPACE))
    assert (refused.status_code, refused.json()) == (
        400,
        wrong_end(
            guid_of(atlas, "databricks_workspace", WORKSPACE), "databricks_workspace", "databricks_runnable", "task"
        ),
    )
