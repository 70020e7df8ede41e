"""Atlas entity semantics over the store, without HTTP: upsert, placeholders, references, errors, delete."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from tests.catalog_server.builders import BLOB, Catalog, blob, process
from tools.catalog.errors import AtlasError
from tools.catalog.mutations import delete_entities


@pytest.fixture
def cat(tmp_path: Path) -> Iterator[Catalog]:
    catalog = Catalog(tmp_path / "c.sqlite")
    yield catalog
    catalog.store.close()


def header(entity: dict, guid: str, ts: str) -> dict:
    return {
        "typeName": entity["typeName"],
        "attributes": {"qualifiedName": entity["attributes"]["qualifiedName"]},
        "lastModifiedTS": ts,
        "guid": guid,
        "status": "ACTIVE",
    }


def ids(entity_json: dict, attribute: str) -> list[str]:
    return [ref["uniqueAttributes"]["qualifiedName"] for ref in entity_json["attributes"][attribute]]


def test_placeholders_resolve_within_the_request(cat: Catalog) -> None:
    a, b = blob("-1", "a.csv"), blob("-2", "b.csv")
    p = process("-3", "copy", [{"guid": "-1"}], [{"guid": "-2"}])
    result = cat.upsert(p, a, b)  # the process comes first: references are resolved after every entity exists
    g = result["guidAssignments"]
    assert set(g) == {"-1", "-2", "-3"} and len(set(g.values())) == 3
    assert result["mutatedEntities"] == {
        "CREATE": [header(p, g["-3"], "1"), header(a, g["-1"], "1"), header(b, g["-2"], "1")]
    }
    stored = cat.get(g["-3"])
    assert ids(stored, "inputs") == [f"{BLOB}/a.csv"] and ids(stored, "outputs") == [f"{BLOB}/b.csv"]
    assert [r["guid"] for r in cat.get(g["-1"])["relationshipAttributes"]["inputToProcesses"]] == [g["-3"]]
    assert [r["guid"] for r in cat.get(g["-2"])["relationshipAttributes"]["outputFromProcesses"]] == [g["-3"]]


def test_referred_entities_and_unique_attribute_references(cat: Catalog) -> None:
    created = cat.upsert(blob("-1", "a.csv"))["guidAssignments"]["-1"]
    p = process(
        "-5",
        "p",
        [{"typeName": "azure_blob_path", "uniqueAttributes": {"qualifiedName": f"{BLOB}/a.csv"}}],
        [{"guid": "-6"}],
        where="relationshipAttributes",
    )
    result = cat.upsert(
        p, referred={"-6": {"typeName": "hive_table", "attributes": {"qualifiedName": "db.t@ws", "name": "t"}}}
    )
    g = result["guidAssignments"]
    assert [h["guid"] for h in result["mutatedEntities"]["CREATE"]] == [g["-5"], g["-6"]]
    assert result["mutatedEntities"]["UPDATE"] == [header(blob("", "a.csv"), created, "2")]  # gained an edge
    assert ids(cat.get(g["-5"]), "inputs") == [f"{BLOB}/a.csv"]
    assert ids(cat.get(g["-5"]), "outputs") == ["db.t@ws"]


def test_update_touches_only_sent_attributes_and_unchanged_is_not_reported(cat: Catalog) -> None:
    g = cat.upsert(blob("-1", "a.csv", description="first", size=10))["guidAssignments"]["-1"]
    result = cat.upsert(
        {
            "typeName": "azure_blob_path",
            "guid": "-9",
            "attributes": {"qualifiedName": f"{BLOB}/a.csv", "size": 20, "notAnAttribute": 1},
        }
    )
    assert result == {"mutatedEntities": {"UPDATE": [header(blob("", "a.csv"), g, "2")]}, "guidAssignments": {"-9": g}}
    assert cat.get(g)["attributes"] == {
        "qualifiedName": f"{BLOB}/a.csv",
        "name": "a.csv",
        "description": "first",
        "size": 20,
    }
    again = cat.upsert(blob("-7", "a.csv", size=20))
    assert again == {"guidAssignments": {"-7": g}}


def test_entities_without_guid_get_server_placeholders(cat: Catalog) -> None:
    result = cat.upsert({"typeName": "azure_blob_path", "attributes": {"qualifiedName": f"{BLOB}/x", "name": "x"}})
    [(placeholder, guid)] = result["guidAssignments"].items()
    assert placeholder.startswith("-") and result["mutatedEntities"]["CREATE"][0]["guid"] == guid


def test_a_new_list_replaces_the_old_and_both_datasets_are_reported(cat: Catalog) -> None:
    g = cat.upsert(
        blob("-1", "a.csv"),
        blob("-2", "b.csv"),
        blob("-3", "out.csv"),
        process("-4", "p", [{"guid": "-1"}], [{"guid": "-3"}]),
    )["guidAssignments"]
    result = cat.upsert(process("-9", "p", [{"guid": g["-2"]}], None))
    assert [h["guid"] for h in result["mutatedEntities"]["UPDATE"]] == [g["-4"], g["-1"], g["-2"]]
    stored = cat.get(g["-4"])
    assert ids(stored, "inputs") == [f"{BLOB}/b.csv"] and ids(stored, "outputs") == [f"{BLOB}/out.csv"]
    assert cat.get(g["-1"])["relationshipAttributes"]["inputToProcesses"] == []
    assert cat.upsert(process("-9", "p", [{"guid": g["-2"]}], None)) == {"guidAssignments": {"-9": g["-4"]}}


def test_same_qualified_name_under_two_types_is_two_entities(cat: Catalog) -> None:
    result = cat.upsert(
        blob("-1", "a"),
        {
            "typeName": "azure_datalake_gen2_path",
            "guid": "-2",
            "attributes": {"qualifiedName": f"{BLOB}/a", "name": "a"},
        },
    )
    assert len(result["mutatedEntities"]["CREATE"]) == 2


def test_column_relationship_moves_a_column_between_tables(cat: Catalog) -> None:
    col = {"typeName": "hive_column", "guid": "-1", "attributes": {"qualifiedName": "db.t.c@ws", "name": "c"}}
    t1 = {
        "typeName": "hive_table",
        "guid": "-2",
        "attributes": {"qualifiedName": "db.t@ws", "name": "t"},
        "relationshipAttributes": {"columns": [{"guid": "-1"}]},
    }
    g = cat.upsert(col, t1)["guidAssignments"]
    t2 = {
        "typeName": "hive_table",
        "guid": "-3",
        "attributes": {"qualifiedName": "db.u@ws", "name": "u"},
        "relationshipAttributes": {"columns": [{"guid": g["-1"]}]},
    }
    g2 = cat.upsert(t2)["guidAssignments"]
    assert cat.get(g["-2"])["relationshipAttributes"]["columns"] == []
    assert cat.get(g["-1"])["relationshipAttributes"]["table"]["guid"] == g2["-3"]


@pytest.mark.parametrize(
    "entities, status, code, message",
    [
        (
            [{"typeName": "no_such_type", "attributes": {"qualifiedName": "x"}}],
            400,
            "ATLAS-400-00-014",
            "Type ENTITY with name no_such_type does not exist",
        ),
        (
            [{"typeName": "azure_blob_path", "guid": "-1", "attributes": {"qualifiedName": "x"}}],
            404,
            "ATLAS-404-00-007",
            "Invalid instance creation/updation parameters passed : azure_blob_path.name: mandatory attribute value missing "
            "in type Asset",
        ),
        ([process("-1", "p", [{"guid": "-42"}], [])], 404, "ATLAS-404-00-00A", "Referenced entity -42 is not found"),
        (
            [process("-1", "p", [{"typeName": "hive_table", "uniqueAttributes": {"qualifiedName": "db.x@ws"}}], [])],
            404,
            "ATLAS-404-00-00A",
            "Referenced entity AtlasObjectId{guid='null', typeName='hive_table', "
            "uniqueAttributes={qualifiedName:db.x@ws}} is not found",
        ),
        ([process("-1", "p", ["just-a-string"], [])], 400, "ATLAS-400-00-021", "ObjectId is not valid 'just-a-string'"),
        (
            [process("-1", "p", [{"typeName": "hive_table"}], [])],
            400,
            "ATLAS-400-00-021",
            'ObjectId is not valid {"typeName": "hive_table"}',
        ),
    ],
)
def test_errors_carry_atlas_codes_and_roll_back(
    cat: Catalog, entities: list, status: int, code: str, message: str
) -> None:
    with pytest.raises(AtlasError) as raised:
        cat.upsert(blob("-100", "rolled-back.csv"), *entities)
    assert (raised.value.status, raised.value.code, raised.value.message) == (status, code, message)
    with cat.store.read() as session:
        assert session.search(None, "rolled-back") == []


def test_reference_to_the_wrong_type_is_refused(cat: Catalog) -> None:
    g = cat.upsert(process("-1", "other", [], []))["guidAssignments"]["-1"]
    with pytest.raises(AtlasError) as raised:
        cat.upsert(process("-2", "p", [{"guid": g}], []))
    assert raised.value.code == "ATLAS-400-00-045"
    assert raised.value.message == (
        f"Invalid entity-type for relationship attribute 'inputs': entity specified "
        f"(guid={g}) is of type 'Process', but expected type is 'DataSet'"
    )


def test_delete_is_soft_and_idempotent(cat: Catalog) -> None:
    g = cat.upsert(blob("-1", "a.csv"))["guidAssignments"]["-1"]
    with cat.store.write() as session:
        first = delete_entities(session, [g, "unknown-guid"], "tester")
        second = delete_entities(session, [g], "tester")
    assert first == {"mutatedEntities": {"DELETE": [{**header(blob("", "a.csv"), g, "2"), "status": "DELETED"}]}}
    assert second == {}
    assert cat.get(g)["status"] == "DELETED"
    recreated = cat.upsert(blob("-2", "a.csv"))  # a deleted qualifiedName can be created again, as a new entity
    assert recreated["guidAssignments"]["-2"] != g
