"""Issue 32, owners, descriptions and labels, end to end over `ol2purview serve` on both run-state stores: a Databricks run
whose events carry the job's `ownership` and `documentation` and `tags` facets (the OpenLineage spec's own test facets)
lands with Purview contacts (Entra object ids from OWNER_CONTACTS) on the process and its notebook, the description
and the labels on the process, nothing on the datasets, and one log line for the name without an object id."""

from __future__ import annotations

import json

import pytest

from tests.e2e.lineage_helpers import Atlas, replay, write_events
from tests.support import databricks_runs as dr

pytestmark = pytest.mark.e2e

NOTEBOOK = f"databricks://{dr.HOST}/notebooks/Repos/etl/orders"
PRODUCER = "https://github.com/OpenLineage/OpenLineage/blob/v1-0-0/client"
# OpenLineage spec/tests/OwnershipJobFacet/1.json (names and types as spec/facets/OwnershipJobFacet.json describes)
OWNERSHIP = {
    "_producer": PRODUCER,
    "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/OwnershipJobFacet.json",
    "owners": [
        {"name": "user:jdoe@contoso.com", "type": "MAINTAINER"},
        {"name": "team:data-platform", "type": "SME"},
        {"name": "user:gone@contoso.com"},
    ],
}
# OpenLineage spec/tests/DocumentationJobFacet/1.json
DOCUMENTATION = {
    "_producer": PRODUCER,
    "description": "Determines the popular day of week orders are placed.",
    "contentType": "text/markdown",
    "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/DocumentationJobFacet.json",
}
# OpenLineage spec/tests/TagsJobFacet/1.json
TAGS = {
    "_producer": "https://github.com/OpenLineage/OpenLineage/tree/1.27.0/client/python",
    "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/TagsJobFacet.json#/$defs/TagsJobFacet",
    "tags": [
        {"key": "test_tag", "value": "test_value", "source": "test_source"},
        {"key": "test_tag2", "value": "test_value2"},
    ],
}
CONTACTS = {
    "user:jdoe@contoso.com": "6c1f0b2e-0d1a-4a7b-9d7e-1f2e3d4c5b6a",
    "team:data-platform": "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d",
}


def test_contacts_and_description_from_the_job_facets(serve_on_each_store, tmp_path):
    serve = serve_on_each_store(
        key="k",
        env={"OWNER_CONTACTS": json.dumps(CONTACTS), "DATABRICKS_WORKSPACE_HOSTS": f"{dr.WORKSPACE_ID}={dr.HOST}"},
    )
    events = dr.events(dr.orders_run(31))
    for event in events:
        event["job"].setdefault("facets", {}).update(ownership=OWNERSHIP, documentation=DOCUMENTATION, tags=TAGS)
    replay(serve, write_events(tmp_path / "events", *events))
    serve.wait_until_processed(timeout=120)

    atlas = Atlas(serve.atlas_url)
    entities = atlas.all_entities()
    processes = [e for e in entities if e["typeName"] == "databricks_process"]
    assert len(processes) == 1
    expected = {
        "Owner": [{"id": CONTACTS["user:jdoe@contoso.com"], "info": "user:jdoe@contoso.com (MAINTAINER)"}],
        "Expert": [{"id": CONTACTS["team:data-platform"], "info": "team:data-platform (SME)"}],
    }
    assert processes[0]["contacts"] == expected
    assert processes[0]["attributes"]["description"] == DOCUMENTATION["description"]
    assert processes[0]["attributes"].get("userDescription") is None
    assert processes[0]["labels"] == ["test_tag2_test_value2", "test_tag_test_value"]
    assert atlas.entity("databricks_notebook", NOTEBOOK)["contacts"] == expected
    with_contacts = sorted(e["typeName"] for e in entities if e.get("contacts"))
    assert with_contacts == ["databricks_notebook", "databricks_process"]  # no dataset, no workspace
    output = serve.output()
    assert output.count("ownership: no Entra object id in OWNER_CONTACTS for user:gone@contoso.com") == 1
