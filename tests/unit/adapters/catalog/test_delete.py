"""Deleting what no run uses, against the embedded catalog over loopback HTTP: one lookup per type (with the
columns of a placeholder dataset), one bulk delete; what is already gone costs only the lookup."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from olparser.adapters.catalog import (
    CatalogTarget,
    CatalogUploader,
    DeleteReport,
    entity_type_names,
    load_typedefs,
    make_atlas_client,
)
from olparser.adapters.catalog.existence import guid_batches
from olparser.lineage.plan import LineagePlan
from olparser.settings import TYPEDEFS_DIR, Settings
from tools.catalog import CatalogServer

PLACEHOLDER = "dbfs:/mnt/raw/orders"
APP = "databricks://adb-1.2.azuredatabricks.net/applications/databricks_shell"
PROCESS = f"{APP}/processes/job/{PLACEHOLDER}"


def _plan() -> LineagePlan:
    dataset = {
        "typeName": "openlineage_dataset",
        "guid": "-1",
        "attributes": {
            "qualifiedName": PLACEHOLDER,
            "name": "orders",
            "openlineageNamespace": "dbfs",
            "openlineageName": "/mnt/raw/orders",
            "storageLocation": "",
        },
    }
    columns = [
        {
            "typeName": "openlineage_column",
            "guid": f"-{2 + i}",
            "attributes": {
                "qualifiedName": f"{PLACEHOLDER}#{name}",
                "name": name,
                "dataType": "string",
                "description": "",
                "position": i,
            },
            "relationshipAttributes": {"dataset": {"guid": "-1"}},
        }
        for i, name in enumerate(("id", "amt"))
    ]
    app = {
        "typeName": "spark_application",
        "guid": "-4",
        "attributes": {"qualifiedName": APP, "name": "shell", "appName": "databricks_shell"},
    }
    process = {
        "typeName": "spark_process",
        "guid": "-5",
        "attributes": {
            "qualifiedName": PROCESS,
            "name": "job",
            "inputs": [{"guid": "-1"}],
            "outputs": [],
            "lastRunId": "r",
        },
        "relationshipAttributes": {"application": {"guid": "-4"}},
    }
    return LineagePlan(entities=(dataset, *columns, app, process))


@pytest.fixture
def catalog(tmp_path: Path):
    with CatalogServer(tmp_path / "catalog.db") as server:
        yield server


@pytest.fixture
def uploader(catalog):
    client = make_atlas_client(CatalogTarget(kind="atlas", endpoint=catalog.atlas_url), timeout=10)
    uploader = CatalogUploader(client, settings=Settings())
    uploader.register_typedefs(load_typedefs(TYPEDEFS_DIR))
    yield uploader
    client.close()


def _status(catalog, type_name: str, qualified_name: str) -> str:
    response = requests.get(
        f"{catalog.atlas_url}/entity/uniqueAttribute/type/{type_name}",
        params={"attr:qualifiedName": qualified_name},
        timeout=10,
    )
    return response.json()["entity"]["status"] if response.status_code == 200 else str(response.status_code)


def test_a_placeholder_is_deleted_with_its_columns_in_one_lookup_per_type_and_one_delete(catalog, uploader):
    uploader.upload(_plan())
    before = catalog.counter.snapshot()["total"]

    report = uploader.delete([("openlineage_dataset", PLACEHOLDER), ("spark_process", PROCESS)])

    assert (report.calls, report.deleted, report.entities) == (
        3,
        (("openlineage_dataset", PLACEHOLDER), ("spark_process", PROCESS)),
        4,
    )
    assert catalog.counter.snapshot()["total"] - before == 3
    # deleted entities are no longer found by unique attribute (only active ones are), the application stays
    assert [
        _status(catalog, t, q)
        for t, q in (
            ("openlineage_dataset", PLACEHOLDER),
            ("openlineage_column", f"{PLACEHOLDER}#id"),
            ("spark_process", PROCESS),
            ("spark_application", APP),
        )
    ] == ["404", "404", "404", "ACTIVE"]


def test_deleting_what_is_already_gone_costs_only_the_lookup(catalog, uploader):
    uploader.upload(_plan())
    uploader.delete([("spark_process", PROCESS)])

    assert uploader.delete([("spark_process", PROCESS), ("spark_process", "never-written")]) == DeleteReport(
        calls=1, deleted=(), entities=0
    )


def test_many_guids_are_split_into_requests_whose_urls_stay_short():
    guids = [f"{i:08d}-0000-4000-8000-000000000000" for i in range(100)]
    batches = guid_batches("http://127.0.0.1:21000/api/atlas/v2", guids, max_url_length=500)
    assert [len(b) for b in batches] == [10] * 10
    assert [g for b in batches for g in b] == guids


WORKSPACE = "databricks://adb-1.2.azuredatabricks.net"
NOTEBOOK = f"{WORKSPACE}/notebooks/Shared/etl"
LAKE = "https://acct.dfs.core.windows.net/raw"


def _notebook_plan(*outputs: str) -> LineagePlan:
    """A workspace, a notebook and one databricks_process per output (Purview's model), each reading the lake path
    `{LAKE}/in` (a type that is not the connector's own)."""
    workspace = {
        "typeName": "databricks_workspace",
        "guid": "-1",
        "attributes": {"qualifiedName": WORKSPACE, "name": "w"},
    }
    notebook = {
        "typeName": "databricks_notebook",
        "guid": "-2",
        "attributes": {"qualifiedName": NOTEBOOK, "name": "etl"},
        "relationshipAttributes": {"workspace": {"guid": "-1", "relationshipType": "databricks_workspace_notebooks"}},
    }
    path = {
        "typeName": "azure_datalake_gen2_path",
        "guid": "-3",
        "attributes": {"qualifiedName": f"{LAKE}/in", "name": "in"},
    }
    processes = [
        {
            "typeName": "databricks_process",
            "guid": f"-{4 + i}",
            "attributes": {
                "qualifiedName": f"{NOTEBOOK}/processes/{o}",
                "name": o,
                "inputs": [{"guid": "-3"}],
                "outputs": [],
            },
            "relationshipAttributes": {"task": {"guid": "-2", "relationshipType": "databricks_runnable_processes"}},
        }
        for i, o in enumerate(outputs)
    ]
    return LineagePlan(entities=(workspace, notebook, path, *processes))


@pytest.fixture
def model_uploader(uploader, catalog):
    """The uploader as the runtime builds it: it knows which types are the connector's (and Purview's model)."""
    client = make_atlas_client(CatalogTarget(kind="atlas", endpoint=catalog.atlas_url), timeout=10)
    yield CatalogUploader(client, settings=Settings(), connector_types=entity_type_names(load_typedefs(TYPEDEFS_DIR)))
    client.close()


def test_a_runnable_still_holding_another_process_is_kept_and_goes_with_its_last(catalog, model_uploader):
    model_uploader.upload(_notebook_plan("a", "b"))
    notebook, a, b = (
        ("databricks_notebook", NOTEBOOK),
        *(("databricks_process", f"{NOTEBOOK}/processes/{o}") for o in "ab"),
    )

    first = model_uploader.delete([notebook, a])
    assert (first.deleted, first.kept) == ((a,), (notebook,))  # deleting it would delete b with it
    assert _status(catalog, *b) == "ACTIVE"

    second = model_uploader.delete([notebook, b, ("databricks_workspace", WORKSPACE)])
    assert set(second.deleted) == {notebook, b, ("databricks_workspace", WORKSPACE)}


def test_a_dataset_only_processes_deleted_with_it_used_is_deleted_too(catalog, model_uploader):
    model_uploader.upload(_notebook_plan("a"))
    path, a = ("azure_datalake_gen2_path", f"{LAKE}/in"), ("databricks_process", f"{NOTEBOOK}/processes/a")
    report = model_uploader.delete([path, a])
    assert set(report.deleted) == {path, a}
