"""Business attributes on entities (Purview's managed attributes): written by POST /entity and /entity/bulk as
`businessAttributeUpdateBehavior` says, or by the businessmetadata routes; checked against their typedefs; answered by
every entity read; and shown by the lineage page as attributes when they are the `ol2purview` group's."""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests

from tools.catalog import CatalogServer

PROCESS = "databricks://adb-1.azuredatabricks.net/notebooks/etl/processes/p1"
LAKE = "https://lake.dfs.core.windows.net/raw"
ANY_PROCESS = '["Process"]'


def attribute(name: str, type_name: str, applicable: str = ANY_PROCESS, **options: str) -> dict:
    return {
        "name": name,
        "typeName": type_name,
        "isOptional": True,
        "options": {"applicableEntityTypes": applicable, **options},
    }


GROUPS = [
    {
        "name": "ol2purview",
        "attributeDefs": [
            attribute("lastRunId", "string", maxStrLength="12"),
            attribute("runCount", "int"),
            attribute("succeeded", "boolean"),
            attribute("columnMapping", "string", maxStrLength="4000"),
        ],
    },
    {"name": "stewardship", "attributeDefs": [attribute("steward", "string", '["DataSet"]', maxStrLength="40")]},
]


@pytest.fixture
def atlas(open_catalog: CatalogServer) -> str:
    requests.post(
        f"{open_catalog.atlas_url}/types/typedefs", json={"businessMetadataDefs": GROUPS}, timeout=10
    ).raise_for_status()
    return open_catalog.atlas_url


def process(business: dict | None = None, **attributes: Any) -> dict:
    entity: dict[str, Any] = {
        "typeName": "databricks_process",
        "attributes": {"qualifiedName": PROCESS, "name": "p1", **attributes},
    }
    if business is not None:
        entity["businessAttributes"] = business
    return entity


def upsert(atlas: str, *entities: dict, behaviour: str | None = None) -> requests.Response:
    params = {"businessAttributeUpdateBehavior": behaviour} if behaviour else {}
    return requests.post(f"{atlas}/entity/bulk", params=params, json={"entities": list(entities)}, timeout=10)


def read(atlas: str, qualified_name: str = PROCESS, type_name: str = "databricks_process") -> dict:
    return requests.get(
        f"{atlas}/entity/uniqueAttribute/type/{type_name}", params={"attr:qualifiedName": qualified_name}, timeout=10
    ).json()["entity"]


def business_of(atlas: str) -> dict | None:
    return read(atlas).get("businessAttributes")


def refused(response: requests.Response) -> tuple[int, dict]:
    return response.status_code, response.json()


def test_by_default_the_payloads_business_attributes_are_ignored(atlas: str) -> None:
    assert upsert(atlas, process({"ol2purview": {"lastRunId": "r-1"}})).ok
    assert business_of(atlas) is None
    assert upsert(atlas, process({"ol2purview": {"lastRunId": "r-1"}}), behaviour="merge").ok
    again = upsert(atlas, process({"ol2purview": {"runCount": "not a number"}, "nothing": {"x": 1}}))
    assert (again.status_code, again.json().get("mutatedEntities")) == (200, None)  # ignored, even when invalid
    assert business_of(atlas) == {"ol2purview": {"lastRunId": "r-1"}}


def test_replace_makes_them_exactly_the_payloads(atlas: str) -> None:
    assert upsert(atlas, process({"ol2purview": {"lastRunId": "r-1", "runCount": 1}}), behaviour="replace").ok
    assert business_of(atlas) == {"ol2purview": {"lastRunId": "r-1", "runCount": 1}}
    assert upsert(atlas, process({"ol2purview": {"runCount": 2}}), behaviour="replace").ok
    assert business_of(atlas) == {"ol2purview": {"runCount": 2}}
    assert upsert(atlas, process(), behaviour="replace").ok  # an entity sent without any: it keeps none
    assert business_of(atlas) is None


def test_merge_adds_and_updates_the_attributes_sent_and_keeps_the_others(atlas: str) -> None:
    assert upsert(atlas, process({"ol2purview": {"lastRunId": "r-1", "runCount": 1}}), behaviour="merge").ok
    assert upsert(atlas, process({"ol2purview": {"runCount": 2, "succeeded": True}}), behaviour="merge").ok
    assert upsert(atlas, process(), behaviour="merge").ok
    assert business_of(atlas) == {"ol2purview": {"lastRunId": "r-1", "runCount": 2, "succeeded": True}}


def test_a_null_value_removes_its_attribute(atlas: str) -> None:
    assert upsert(atlas, process({"ol2purview": {"lastRunId": "r-1", "runCount": 1}}), behaviour="merge").ok
    assert upsert(atlas, process({"ol2purview": {"lastRunId": None}}), behaviour="merge").ok
    assert business_of(atlas) == {"ol2purview": {"runCount": 1}}
    assert upsert(atlas, process({"ol2purview": {"runCount": None, "succeeded": False}}), behaviour="replace").ok
    assert business_of(atlas) == {"ol2purview": {"succeeded": False}}
    assert upsert(atlas, process({"ol2purview": {"succeeded": None}}), behaviour="merge").ok
    assert business_of(atlas) is None  # a group left empty goes


def test_a_subtype_of_an_applicable_type_may_carry_them(atlas: str) -> None:
    """ol2purview's attributes apply to Process; databricks_process is a Process (through no type of the group's)."""
    assert upsert(atlas, process({"ol2purview": {"runCount": 1}}), behaviour="merge").ok
    assert read(atlas)["typeName"] == "databricks_process" and business_of(atlas) == {"ol2purview": {"runCount": 1}}


def test_values_are_normalized_as_atlas_does(atlas: str) -> None:
    sent = {"ol2purview": {"lastRunId": 12345, "runCount": "7", "succeeded": "TRUE"}}
    assert upsert(atlas, process(sent), behaviour="merge").ok
    assert business_of(atlas) == {"ol2purview": {"lastRunId": "12345", "runCount": 7, "succeeded": True}}


APPLICABLE_TO_PROCESS = "[ol2purview.columnMapping, ol2purview.lastRunId, ol2purview.runCount, ol2purview.succeeded]"


@pytest.mark.parametrize(
    ("business", "code", "message"),
    [
        pytest.param(
            {"nothing": {"x": 1}},
            "ATLAS-400-00-014",
            "Type BUSINESS_METADATA with name nothing does not exist",
            id="unknown-business-metadata",
        ),
        pytest.param(
            {"ol2purview": {"lastRunUser": "jdoe"}},
            "ATLAS-400-00-023",
            "Attribute lastRunUser not found for type ol2purview",
            id="attribute-not-defined",
        ),
        pytest.param(
            {"stewardship": {"steward": "jdoe"}},
            "ATLAS-400-00-095",
            "Invalid business-metadata: stewardship.steward specified for entity, applicable business-metadata: "
            + APPLICABLE_TO_PROCESS,
            id="type-not-applicable",
        ),
        pytest.param(
            {"ol2purview": {"runCount": "many"}},
            "ATLAS-400-00-028",
            'invalid value: databricks_process.ol2purview.runCount="many": invalid value for type int',
            id="wrong-type",
        ),
        pytest.param(
            {"ol2purview": {"runCount": 2**31}},
            "ATLAS-400-00-028",
            "invalid value: databricks_process.ol2purview.runCount=2147483648: invalid value for type int",
            id="out-of-range",
        ),
        pytest.param(
            {"ol2purview": {"lastRunId": "r-0123456789abc"}},
            "ATLAS-400-00-028",
            "invalid value: databricks_process.ol2purview.lastRunId: Business attribute-value exceeds maximum length "
            "limit (15 characters, at most 12)",
            id="too-long",
        ),
        pytest.param(
            {"ol2purview": "r-1"},
            "ATLAS-400-00-01A",
            'invalid parameters: businessAttributes must be an object of business metadata: {"<name>": '
            '{"<attribute>": value}}',
            id="not-an-object",
        ),
    ],
)
@pytest.mark.parametrize("behaviour", ["replace", "merge"])
def test_business_attributes_atlas_would_not_hold_refuse_the_whole_request(
    atlas: str, business: dict, code: str, message: str, behaviour: str
) -> None:
    dataset = {"typeName": "azure_blob_path", "attributes": {"qualifiedName": f"{LAKE}/a.csv", "name": "a.csv"}}
    answer = upsert(atlas, dataset, process(business), behaviour=behaviour)
    assert refused(answer) == (400, {"errorCode": code, "errorMessage": message})
    missing = requests.get(
        f"{atlas}/entity/uniqueAttribute/type/azure_blob_path",
        params={"attr:qualifiedName": f"{LAKE}/a.csv"},
        timeout=10,
    )
    assert missing.status_code == 404  # nothing of the request was saved


def test_an_unknown_update_behaviour_is_refused(atlas: str) -> None:
    assert refused(upsert(atlas, process(), behaviour="overwrite")) == (
        400,
        {
            "errorCode": "ATLAS-400-00-01A",
            "errorMessage": "invalid parameters: businessAttributeUpdateBehavior must be one of ignore, replace, merge",
        },
    )


def test_a_change_of_business_attributes_is_an_update_exactly_when_something_changed(atlas: str) -> None:
    created = upsert(atlas, process({"ol2purview": {"runCount": 1}}), behaviour="merge").json()
    guid = created["mutatedEntities"]["CREATE"][0]["guid"]
    before = read(atlas)
    same = upsert(atlas, process({"ol2purview": {"runCount": 1}}), behaviour="merge").json()
    assert same.get("mutatedEntities") is None
    unchanged = read(atlas)
    assert (unchanged["lastModifiedTS"], unchanged["updateTime"]) == (before["lastModifiedTS"], before["updateTime"])
    changed = upsert(atlas, process({"ol2purview": {"runCount": 2}}), behaviour="merge").json()
    assert [(h["guid"], h["lastModifiedTS"]) for h in changed["mutatedEntities"]["UPDATE"]] == [(guid, "2")]
    after = read(atlas)
    assert (after["lastModifiedTS"], after["updateTime"] >= before["updateTime"]) == ("2", True)


def test_every_entity_read_answers_them(atlas: str) -> None:
    dataset = {"typeName": "azure_blob_path", "attributes": {"qualifiedName": f"{LAKE}/a.csv", "name": "a.csv"}}
    created = upsert(atlas, process({"ol2purview": {"lastRunId": "r-9"}}), dataset, behaviour="merge").json()
    guids = [h["guid"] for h in created["mutatedEntities"]["CREATE"]]
    expected = {"ol2purview": {"lastRunId": "r-9"}}
    by_guid = requests.get(f"{atlas}/entity/guid/{guids[0]}", timeout=10).json()
    bulk = requests.get(f"{atlas}/entity/bulk", params={"guid": guids}, timeout=10).json()
    unique = read(atlas)
    bulk_unique = requests.get(
        f"{atlas}/entity/bulk/uniqueAttribute/type/databricks_process",
        params={"attr_0:qualifiedName": PROCESS},
        timeout=10,
    ).json()
    assert [
        by_guid["entity"]["businessAttributes"],
        bulk["entities"][0]["businessAttributes"],
        unique["businessAttributes"],
        bulk_unique["entities"][0]["businessAttributes"],
    ] == [expected] * 4
    assert "businessAttributes" not in bulk["entities"][1]  # the dataset carries none


def business_metadata_route(atlas: str, guid: str, name: str = "") -> str:
    return f"{atlas}/entity/guid/{guid}/businessmetadata" + (f"/{name}" if name else "")


@pytest.fixture
def guid(atlas: str) -> str:
    created = upsert(atlas, process({"ol2purview": {"lastRunId": "r-1", "runCount": 1}}), behaviour="merge").json()
    return created["mutatedEntities"]["CREATE"][0]["guid"]


def test_post_businessmetadata_merges_and_with_overwrite_replaces(atlas: str, guid: str) -> None:
    merged = requests.post(business_metadata_route(atlas, guid), json={"ol2purview": {"runCount": 2}}, timeout=10)
    assert (merged.status_code, merged.content) == (204, b"")
    assert business_of(atlas) == {"ol2purview": {"lastRunId": "r-1", "runCount": 2}}
    replaced = requests.post(
        business_metadata_route(atlas, guid),
        params={"isOverwrite": "true"},
        json={"ol2purview": {"succeeded": True}},
        timeout=10,
    )
    assert replaced.status_code == 204
    assert business_of(atlas) == {"ol2purview": {"succeeded": True}}
    assert read(atlas)["lastModifiedTS"] == "3"


def test_delete_businessmetadata_removes_the_attributes_named_or_the_whole_group(atlas: str, guid: str) -> None:
    named = requests.delete(business_metadata_route(atlas, guid), json={"ol2purview": {"runCount": None}}, timeout=10)
    assert named.status_code == 204
    assert business_of(atlas) == {"ol2purview": {"lastRunId": "r-1"}}
    whole = requests.delete(business_metadata_route(atlas, guid), json={"ol2purview": {}}, timeout=10)
    assert whole.status_code == 204
    assert business_of(atlas) is None


def test_the_routes_of_one_business_metadata_add_update_and_remove_its_attributes(atlas: str, guid: str) -> None:
    url = business_metadata_route(atlas, guid, "ol2purview")
    assert requests.post(url, json={"runCount": 5, "succeeded": False}, timeout=10).status_code == 204
    assert business_of(atlas) == {"ol2purview": {"lastRunId": "r-1", "runCount": 5, "succeeded": False}}
    assert requests.delete(url, json={"runCount": "", "lastRunId": ""}, timeout=10).status_code == 204
    assert business_of(atlas) == {"ol2purview": {"succeeded": False}}


def test_the_businessmetadata_routes_refuse_what_atlas_refuses(atlas: str, guid: str) -> None:
    empty = requests.post(business_metadata_route(atlas, guid), json={}, timeout=10)
    assert refused(empty) == (
        400,
        {"errorCode": "ATLAS-400-00-01A", "errorMessage": "invalid parameters: businessAttributes is null/empty"},
    )
    unknown = requests.post(business_metadata_route(atlas, "no-such-guid"), json={"ol2purview": {}}, timeout=10)
    assert refused(unknown) == (
        404,
        {"errorCode": "ATLAS-404-00-005", "errorMessage": "Given instance guid no-such-guid is invalid/not found"},
    )
    wrong = requests.post(business_metadata_route(atlas, guid, "ol2purview"), json={"succeeded": "maybe"}, timeout=10)
    assert refused(wrong) == (
        400,
        {
            "errorCode": "ATLAS-400-00-028",
            "errorMessage": 'invalid value: databricks_process.ol2purview.succeeded="maybe": invalid value for type '
            "boolean",
        },
    )
    assert business_of(atlas) == {"ol2purview": {"lastRunId": "r-1", "runCount": 1}}
    assert read(atlas)["lastModifiedTS"] == "1"


def test_a_business_metadata_def_entities_carry_is_not_deleted(atlas: str, guid: str) -> None:
    in_use = requests.delete(f"{atlas}/types/typedef/name/ol2purview", timeout=10)
    assert refused(in_use) == (
        409,
        {"errorCode": "ATLAS-409-00-002", "errorMessage": "Given type ol2purview has references"},
    )
    assert requests.delete(business_metadata_route(atlas, guid), json={"ol2purview": {}}, timeout=10).ok
    assert requests.delete(f"{atlas}/types/typedef/name/ol2purview", timeout=10).status_code == 204


def column_mapping(source: str, sink: str, column: str) -> str:
    return json.dumps(
        [{"DatasetMapping": {"Source": source, "Sink": sink}, "ColumnMapping": [{"Source": "id", "Sink": column}]}]
    )


def test_the_page_reads_the_ol2purview_groups_attributes_as_attributes_never_over_a_real_one(
    open_catalog: CatalogServer, atlas: str
) -> None:
    def dataset(name: str) -> dict:
        return {"typeName": "azure_blob_path", "attributes": {"qualifiedName": f"{LAKE}/{name}", "name": name}}

    def writer(name: str, out: str, business: dict, **attributes: Any) -> dict:
        entity = process(business, **attributes)
        entity["attributes"].update(
            qualifiedName=f"{PROCESS}/{name}",
            inputs=[{"typeName": "azure_blob_path", "uniqueAttributes": {"qualifiedName": f"{LAKE}/in.csv"}}],
            outputs=[{"typeName": "azure_blob_path", "uniqueAttributes": {"qualifiedName": f"{LAKE}/{out}"}}],
        )
        return entity

    kept_only = writer(
        "kept", "a.csv", {"ol2purview": {"columnMapping": column_mapping(f"{LAKE}/in.csv", f"{LAKE}/a.csv", "kept_id")}}
    )
    both = writer(
        "both",
        "b.csv",
        {"ol2purview": {"columnMapping": column_mapping(f"{LAKE}/in.csv", f"{LAKE}/b.csv", "kept_id")}},
        columnMapping=column_mapping(f"{LAKE}/in.csv", f"{LAKE}/b.csv", "real_id"),
    )
    written = upsert(atlas, dataset("in.csv"), dataset("a.csv"), dataset("b.csv"), kept_only, both, behaviour="merge")
    assert written.ok, written.text

    def lineage_columns(name: str) -> list[str]:
        guid = read(atlas, f"{LAKE}/{name}", "azure_blob_path")["guid"]
        answer = requests.get(f"{open_catalog.url}/_ol2purview/page/columns", params={"guid": guid}, timeout=10)
        return [c["name"] for c in answer.json()["columns"] if c["inLineage"]]

    assert (lineage_columns("a.csv"), lineage_columns("b.csv")) == (["kept_id"], ["real_id"])
