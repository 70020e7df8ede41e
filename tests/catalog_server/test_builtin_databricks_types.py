"""A fresh embedded catalog ships Purview's built-in Databricks model (olparser/lineage/databricks_model.py) as a
Purview account does, with the Hive server its workspace relationship ends on; a store written by an older version
keeps the same-named types it holds."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from olparser.lineage.databricks_model import purview_databricks_typedefs
from tools.catalog import CatalogServer
from tools.catalog.relationships import relationship_label
from tools.catalog.store import CatalogStore

# what a stored typedef carries beyond its definition
STAMPS = {"guid", "createdBy", "updatedBy", "createTime", "updateTime", "version", "subTypes", "lastModifiedTS"}


@pytest.fixture
def atlas(open_catalog: CatalogServer) -> str:
    return open_catalog.atlas_url


def get(url: str) -> dict:
    response = requests.get(url, timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


def test_every_type_of_purviews_databricks_model_is_there_as_purview_defines_it(atlas: str) -> None:
    answered = get(f"{atlas}/types/typedefs")
    model = purview_databricks_typedefs()
    for key in ("entityDefs", "relationshipDefs"):
        served = {d["name"]: d for d in answered[key]}
        for definition in model[key]:
            shipped = {k: v for k, v in served[definition["name"]].items() if k not in STAMPS}
            # what Atlas stores for what a definition leaves out: its name as description, a relationship's label
            defaults = {"description": definition.get("description") or definition["name"]}
            if key == "relationshipDefs":
                defaults |= {"attributeDefs": [], "relationshipLabel": relationship_label(definition)}
            assert shipped == {**definition, **defaults}
    assert sorted(d["name"] for d in answered["entityDefs"] if d.get("serviceType") == "Databricks") == [
        "databricks_job",
        "databricks_job_task",
        "databricks_notebook",
        "databricks_notebook_task",
        "databricks_process",
        "databricks_python_task",
        "databricks_python_wheel_task",
        "databricks_runnable",
        "databricks_spark_jar_task",
        "databricks_spark_submit_task",
        "databricks_workspace",
    ]
    relationships = [d["name"] for d in answered["relationshipDefs"] if d.get("serviceType") == "Databricks"]
    assert relationships == [d["name"] for d in model["relationshipDefs"]] and len(relationships) == 6


def test_databricks_notebook_is_answered_as_purview_defines_it(atlas: str) -> None:
    by_typedef = get(f"{atlas}/types/typedef/name/databricks_notebook")
    assert get(f"{atlas}/types/entitydef/name/databricks_notebook") == by_typedef
    assert (
        by_typedef["category"],
        by_typedef["serviceType"],
        by_typedef["superTypes"],
        [(a["name"], a["typeName"], a["isOptional"]) for a in by_typedef["attributeDefs"]],
        by_typedef["options"],
        by_typedef["subTypes"],
    ) == (
        "ENTITY",
        "Databricks",
        ["databricks_runnable"],
        [("clusterName", "string", True), ("user", "string", True), ("sparkVersion", "string", True)],
        {"derivedLineageSources": '["processes"]'},
        [],
    )
    runnable = get(f"{atlas}/types/entitydef/name/databricks_runnable")
    assert (runnable["superTypes"], runnable["subTypes"]) == (
        ["Process"],
        ["databricks_job_task", "databricks_notebook"],
    )


def test_the_hive_server_the_workspace_relationship_ends_on_is_a_hive_asset(atlas: str) -> None:
    server = get(f"{atlas}/types/entitydef/name/hive_server")
    assert (server["superTypes"], server["serviceType"], server["attributeDefs"]) == (["Asset"], "Hive", [])
    relationship = get(f"{atlas}/types/relationshipdef/name/databricks_workspace_hive_metastore")
    assert (relationship["endDef1"]["type"], relationship["endDef2"]["type"]) == ("databricks_workspace", "hive_server")


def test_a_store_written_by_an_older_version_keeps_its_same_named_types(tmp_path: Path) -> None:
    path = tmp_path / "older.sqlite"
    earlier = {  # databricks_notebook as an earlier ol2purview release registered it
        "category": "ENTITY",
        "name": "databricks_notebook",
        "guid": "0d4c9a7e-0000-4000-8000-000000000001",
        "superTypes": ["Asset"],
        "attributeDefs": [{"name": "path", "typeName": "string", "isOptional": True}],
        "options": {"managedBy": "ol2purview"},
        "version": 3,
    }
    store = CatalogStore(path)
    with store.write() as session:
        session.save_typedef(earlier)
    store.close()
    server = CatalogServer(path).start()
    try:
        assert get(f"{server.atlas_url}/types/typedef/name/databricks_notebook") == {
            **earlier,
            "subTypes": [],
            "lastModifiedTS": "3",
        }
        runnable = get(f"{server.atlas_url}/types/typedef/name/databricks_runnable")
        assert (runnable["superTypes"], runnable["version"]) == (["Process"], 1)  # what it lacked is added
    finally:
        server.stop()
