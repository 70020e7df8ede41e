"""The job's ownership and documentation facets on the entities the connector creates (olparser/lineage/governance.py):
contacts by Entra object id (Owner / Expert, at most 20 each), the description, never on datasets; and the 2 MB
asset limit."""

from __future__ import annotations

import json

from olparser.lineage.governance import (
    MAX_ASSET_BYTES,
    UNRESOLVED_NOTE,
    contacts_of,
    labels_of,
    with_governance,
    within_asset_limit,
)

# OpenLineage spec/tests/OwnershipJobFacet/1.json, with types as OwnershipJobFacet.json describes them
OWNERSHIP = {
    "ownership": {
        "owners": [
            {"name": "user:jdoe@contoso.com", "type": "MAINTAINER"},
            {"name": "team:data-platform"},
            {"name": "user:asmith@contoso.com", "type": "SME"},
            {"name": "user:nobody@contoso.com", "type": "OWNER"},
        ]
    }
}
# OpenLineage spec/tests/DocumentationJobFacet/1.json
DOCUMENTATION = {
    "documentation": {
        "description": "Determines the popular day of week orders are placed.",
        "contentType": "text/markdown",
    }
}
DIRECTORY = {
    "user:jdoe@contoso.com": "0b6f9d1e-1111-4c2a-9d3e-000000000001",
    "data-platform": "0b6f9d1e-2222-4c2a-9d3e-000000000002",  # a name without its team: prefix
    "asmith@contoso.com": "0b6f9d1e-3333-4c2a-9d3e-000000000003",
}
NOTEBOOK = ("databricks_notebook", "databricks://h/notebooks/Repos/etl/orders")


def process(**attributes):
    return {
        "typeName": "databricks_process",
        "guid": "-9",
        "attributes": {"qualifiedName": "p", "lastRunId": "r", "columnMapping": "[]", **attributes},
    }


def test_owners_and_maintainers_are_owners_others_experts_unknown_names_skipped_and_noted():
    contacts, unresolved = contacts_of(OWNERSHIP, DIRECTORY)
    assert contacts == {
        "Owner": [
            {"id": DIRECTORY["user:jdoe@contoso.com"], "info": "user:jdoe@contoso.com (MAINTAINER)"},
            {"id": DIRECTORY["data-platform"], "info": "team:data-platform"},
        ],
        "Expert": [{"id": DIRECTORY["asmith@contoso.com"], "info": "user:asmith@contoso.com (SME)"}],
    }
    assert unresolved == ("user:nobody@contoso.com",)


def test_at_most_20_contacts_per_type_in_the_facets_order():
    owners = [{"name": f"user:u{i}", "type": "OWNER"} for i in range(25)]
    contacts, _ = contacts_of({"ownership": {"owners": owners}}, {f"user:u{i}": f"id-{i}" for i in range(25)})
    assert [c["id"] for c in contacts["Owner"]] == [f"id-{i}" for i in range(20)]


def test_processes_and_their_owner_get_contacts_and_the_description_datasets_nothing():
    workspace = {"typeName": "databricks_workspace", "attributes": {"qualifiedName": "databricks://h"}}
    notebook = {"typeName": NOTEBOOK[0], "attributes": {"qualifiedName": NOTEBOOK[1]}}
    processes, owners, notes = with_governance(
        [process()], [workspace, notebook], NOTEBOOK, {**OWNERSHIP, **DOCUMENTATION}, DIRECTORY
    )
    assert processes[0]["attributes"]["description"] == "Determines the popular day of week orders are placed."
    assert "userDescription" not in processes[0]["attributes"]
    assert [c["id"] for c in processes[0]["contacts"]["Owner"]] == [
        DIRECTORY["user:jdoe@contoso.com"],
        DIRECTORY["data-platform"],
    ]
    assert owners[1]["contacts"] == processes[0]["contacts"] and "contacts" not in owners[0]  # not the workspace
    assert notes == (UNRESOLVED_NOTE + "user:nobody@contoso.com",)


def test_without_facets_nothing_changes():
    built = process()
    processes, owners, notes = with_governance([built], [], NOTEBOOK, {}, DIRECTORY)
    assert (processes, owners, notes) == ([built], (), ())


def test_a_process_over_the_2_mb_asset_limit_loses_its_column_lineage_and_says_so():
    mapping = json.dumps(
        [
            {
                "DatasetMapping": {"Source": "a", "Sink": "b"},
                "ColumnMapping": [{"Source": f"c{i}", "Sink": f"c{i}"} for i in range(60_000)],
            }
        ]
    )
    big = process(columnMapping=mapping, columnLineageDetail="", lineageTruncated="")
    assert len(json.dumps(big)) > MAX_ASSET_BYTES
    trimmed = within_asset_limit(big)
    assert len(json.dumps(trimmed)) < 1000
    assert (trimmed["attributes"]["columnMapping"], trimmed["attributes"]["lineageTruncated"]) == (
        "[]",
        "column lineage left out: the process would exceed Purview's 2 MB asset limit (columnMapping "
        f"{len(mapping)} characters, columnLineageDetail 0 characters)",
    )
    small = process(columnMapping=mapping[:900_000])  # not over: kept as it is
    assert within_asset_limit(small) is small


def test_tags_become_labels_atlas_accepts():
    # OpenLineage spec/tests/TagsJobFacet/1.json, and a tag with characters Atlas refuses in a label
    tags = {
        "tags": {
            "tags": [
                {"key": "test_tag", "value": "test_value", "source": "test_source"},
                {"key": "test_tag2", "value": "test_value2"},
                {"key": "domain", "value": "sales & marketing/EMEA"},
                {"key": "k" * 60, "value": "v"},
            ]
        }
    }
    assert labels_of(tags) == [
        "domain_sales___marketing_EMEA",
        "k" * 50,
        "test_tag2_test_value2",
        "test_tag_test_value",
    ]
    processes, _, _ = with_governance([process()], [], NOTEBOOK, tags, {})
    assert processes[0]["labels"] == labels_of(tags)
    assert labels_of({}) is None and "labels" not in with_governance([process()], [], NOTEBOOK, {}, {})[0][0]
