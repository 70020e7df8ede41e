"""Deleting what no run uses, against the embedded catalog over loopback HTTP: one lookup per type (with the
columns of a placeholder dataset), one bulk delete; what is already gone costs only the lookup."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from olparser.adapters.catalog import CatalogTarget, CatalogUploader, DeleteReport, load_typedefs, make_atlas_client
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
