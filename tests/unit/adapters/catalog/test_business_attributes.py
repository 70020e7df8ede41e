"""The connector's attributes on Purview's built-in databricks_process travel as its business metadata group
`ol2purview` (olparser/adapters/catalog/business_attributes.py): moved out of `attributes` on every entity write, with
`businessAttributeUpdateBehavior=merge`, and folded back into `attributes` on every read, so that nothing inside the
connector sees the difference."""

from __future__ import annotations

from olparser.adapters.catalog import load_typedefs
from olparser.adapters.catalog.business_attributes import BusinessAttributes
from olparser.settings import TYPEDEFS_DIR

OURS = BusinessAttributes.from_typedefs(load_typedefs(TYPEDEFS_DIR))
PROCESS = {
    "typeName": "databricks_process",
    "guid": "-3",
    "attributes": {
        "qualifiedName": "p",
        "name": "append",
        "columnMapping": "[]",
        "lastRunId": "r1",
        "runCount": None,
        "columnLineageDetail": "",
    },
    "relationshipAttributes": {"task": {"typeName": "databricks_notebook"}},
}


def test_a_write_carries_what_purviews_type_lacks_as_the_connectors_business_attributes():
    sent, carried = OURS.outgoing(
        {"entities": [PROCESS, {"typeName": "spark_process", "attributes": {"lastRunId": "r"}}]}
    )
    assert carried
    assert sent["entities"][0] == {
        "typeName": "databricks_process",
        "guid": "-3",
        "attributes": {"qualifiedName": "p", "name": "append", "columnMapping": "[]"},
        "relationshipAttributes": {"task": {"typeName": "databricks_notebook"}},
        "businessAttributes": {"ol2purview": {"columnLineageDetail": "", "lastRunId": "r1", "runCount": None}},
    }
    assert sent["entities"][1] == {"typeName": "spark_process", "attributes": {"lastRunId": "r"}}  # its own type
    assert PROCESS["attributes"]["lastRunId"] == "r1"  # the plan is never changed


def test_a_write_without_such_entities_is_sent_as_it_is():
    body = {"entities": [{"typeName": "databricks_notebook", "attributes": {"qualifiedName": "n", "name": "n"}}]}
    assert OURS.outgoing(body) == (body, False)


def test_a_read_folds_the_group_back_never_over_a_real_attribute():
    read = {
        "entities": [
            {
                "typeName": "databricks_process",
                "attributes": {"qualifiedName": "p", "columnMapping": "[]"},
                "businessAttributes": {
                    "ol2purview": {"lastRunId": "r1", "columnMapping": "not this"},
                    "Governance": {"steward": "ana"},  # someone else's managed attributes: left where they are
                },
            }
        ],
        "referredEntities": {"g": {"typeName": "x", "attributes": {}}},
    }
    folded = OURS.incoming(read)
    assert folded["entities"][0]["attributes"] == {"qualifiedName": "p", "columnMapping": "[]", "lastRunId": "r1"}
    assert folded["entities"][0]["businessAttributes"] == read["entities"][0]["businessAttributes"]
    assert folded["referredEntities"] is read["referredEntities"]


def test_with_type_prefix_the_group_has_its_prefixed_name():
    prefixed = BusinessAttributes.from_typedefs(load_typedefs(TYPEDEFS_DIR), "ol_")
    sent, _ = prefixed.outgoing({"entity": PROCESS})
    assert set(sent["entity"]["businessAttributes"]) == {"ol_ol2purview"}


def test_the_client_writes_and_reads_them_through_http(atlas, client):
    client.upload_bulk([PROCESS])
    (post,) = atlas.calls("POST", "/entity/bulk")
    assert ("businessAttributeUpdateBehavior", "merge") in post.query
    assert post.body["entities"][0]["businessAttributes"] == {
        "ol2purview": {"columnLineageDetail": "", "lastRunId": "r1", "runCount": None}
    }
    guid = atlas.put("databricks_process", "q", name="n")
    atlas.entities[guid]["businessAttributes"] = {"ol2purview": {"lastRunTime": "2024-01-01T00:00:00Z"}}
    (found,) = client.find_entities("databricks_process", ["q"])
    assert found["attributes"]["lastRunTime"] == "2024-01-01T00:00:00Z"
