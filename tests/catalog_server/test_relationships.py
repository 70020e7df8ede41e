"""The relationship REST API typed by the connector's own relationship defs (olparser/lineage/typedefs), with attributes, and
its errors."""

from __future__ import annotations

import json
from pathlib import Path

import requests

from tests.support.catalog_server import PASSWORD, USER
from tools.catalog import CatalogServer

AUTH = (USER, PASSWORD)
TYPEDEFS = Path(__file__).resolve().parents[2] / "olparser" / "lineage" / "typedefs"
WORKSPACE = "databricks://adb-1.azuredatabricks.net"


def post(catalog: CatalogServer, path: str, body: dict) -> requests.Response:
    return requests.post(f"{catalog.atlas_url}{path}", json=body, auth=AUTH, timeout=10)


def test_config_relationship_defs_with_attributes_and_errors(catalog: CatalogServer) -> None:
    for file in sorted(TYPEDEFS.glob("*.json")):
        post(catalog, "/types/typedefs", json.loads(file.read_text())).raise_for_status()
    post(
        catalog,
        "/types/typedefs",
        {
            "relationshipDefs": [
                {
                    "name": "job_owner_note",
                    "relationshipCategory": "ASSOCIATION",
                    "attributeDefs": [{"name": "note", "typeName": "string"}],
                    "endDef1": {"type": "databricks_job", "name": "notedWorkspaces", "cardinality": "SET"},
                    "endDef2": {"type": "databricks_workspace", "name": "notedJobs", "cardinality": "SET"},
                }
            ]
        },
    ).raise_for_status()
    created = post(
        catalog,
        "/entity/bulk",
        {
            "entities": [
                {
                    "typeName": "databricks_workspace",
                    "guid": "-1",
                    "attributes": {"qualifiedName": WORKSPACE, "name": "ws"},
                },
                {
                    "typeName": "databricks_job",
                    "guid": "-2",
                    "attributes": {"qualifiedName": f"{WORKSPACE}/jobs/7", "name": "job 7", "jobId": "7"},
                },
            ]
        },
    ).json()
    workspace, job = created["guidAssignments"]["-1"], created["guidAssignments"]["-2"]

    link = post(
        catalog,
        "/relationship",
        {
            "typeName": "databricks_workspace_jobs",
            "end1": {"guid": workspace},
            "end2": {"typeName": "databricks_job", "uniqueAttributes": {"qualifiedName": f"{WORKSPACE}/jobs/7"}},
        },
    )
    assert (link.status_code, link.json()["label"], link.json()["end2"]["guid"]) == (
        200,
        "r:databricks_workspace_jobs",
        job,
    )
    read_job = requests.get(f"{catalog.atlas_url}/entity/guid/{job}", auth=AUTH, timeout=10).json()["entity"]
    assert read_job["relationshipAttributes"]["workspace"]["guid"] == workspace

    noted = post(
        catalog,
        "/relationship",
        {
            "typeName": "job_owner_note",
            "end1": {"guid": job},
            "end2": {"guid": workspace},
            "attributes": {"note": "first", "x": 1},
        },
    )
    assert noted.json()["attributes"] == {"note": "first"}  # undeclared attributes are dropped
    updated = requests.put(
        f"{catalog.atlas_url}/relationship",
        auth=AUTH,
        timeout=10,
        json={"guid": noted.json()["guid"], "typeName": "job_owner_note", "attributes": {"note": "second"}},
    ).json()
    assert (updated["attributes"], updated["version"]) == ({"note": "second"}, 1)

    errors = {
        "unknown type": post(
            catalog, "/relationship", {"typeName": "nope", "end1": {"guid": job}, "end2": {"guid": workspace}}
        ),
        "no end2": post(catalog, "/relationship", {"typeName": "databricks_workspace_jobs", "end1": {"guid": job}}),
        "missing end": post(
            catalog,
            "/relationship",
            {"typeName": "databricks_workspace_jobs", "end1": {"guid": "no-such"}, "end2": {"guid": job}},
        ),
        "end change": requests.put(
            f"{catalog.atlas_url}/relationship",
            auth=AUTH,
            timeout=10,
            json={"guid": noted.json()["guid"], "typeName": "job_owner_note", "end1": {"guid": workspace}},
        ),
    }
    assert {k: (r.status_code, r.json()) for k, r in errors.items()} == {
        "unknown type": (
            400,
            {"errorCode": "ATLAS-400-00-014", "errorMessage": "Type RELATIONSHIP with name nope does not exist"},
        ),
        "no end2": (
            400,
            {"errorCode": "ATLAS-400-00-07D", "errorMessage": "Relationship end is invalid. Expected end2 but is NULL"},
        ),
        "missing end": (
            404,
            {"errorCode": "ATLAS-404-00-005", "errorMessage": "Given instance guid no-such is invalid/not found"},
        ),
        "end change": (
            404,
            {
                "errorCode": "ATLAS-400-00-069",
                "errorMessage": f"change of relationship end is not permitted. relationship-type="
                f"job_owner_note, relationship-guid={noted.json()['guid']}, "
                f"end-guid={job}, updated-end-guid={workspace}",
            },
        ),
    }

    requests.delete(f"{catalog.atlas_url}/entity/guid/{workspace}", auth=AUTH, timeout=10).raise_for_status()
    deleted_end = post(
        catalog, "/relationship", {"typeName": "job_owner_note", "end1": {"guid": job}, "end2": {"guid": workspace}}
    )
    assert deleted_end.json() == {
        "errorCode": "ATLAS-404-00-012",
        "errorMessage": f"Given instance guid {workspace} has been deleted",
    }
