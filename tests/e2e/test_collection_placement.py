"""Issue 32, placement in collections, end to end over `ol2purview serve` on both run-state stores: the real
openlineage-python client sends Databricks notebook runs, the worker writes them into an embedded catalog that
models Purview's collections (created here through its account API) and Data Curator permissions.

A run goes to the collection of the first matching placement rule (by output qualifiedName prefix, by job namespace,
a collection named by its friendly name), else to the collection of its output's scanned asset, else to
PURVIEW_COLLECTION; the exact `collectionId` of each process is asserted. A changed placement moves the connector's
process and never the scanned asset. Without the Data Curator role on the target collection the run's message goes
to the poison queue with a message naming the collection and the role; after the grant, `ol2purview requeue`
writes it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
import requests

from tests.e2e.lineage_helpers import Atlas, replay, write_events
from tests.support import databricks_runs as dr
from tests.support.repository import PROJECT_ROOT
from tests.support.scanned_assets import dataset, notebook_run, stable
from tests.support.waiting import wait_until
from tools.catalog import CatalogServer

pytestmark = pytest.mark.e2e

ACCOUNT = "contoso-purview"
ACCOUNT_API = "api-version=2019-11-01-preview"
GOLD = "abfss://gold@lakeacct.dfs.core.windows.net"  # qn-tester: https://lakeacct.dfs.core.windows.net/gold/{path}
LAKE_GOLD = "https://lakeacct.dfs.core.windows.net/gold"
SCANNED_OUTPUT = f"{LAKE_GOLD}/sales/scanned.csv"
# (name, friendly name, parent)
COLLECTIONS = [
    ("fin01a", "Finance", ACCOUNT),
    ("lineage-team", "Lineage team", ACCOUNT),
    ("sales01", "Sales", ACCOUNT),
    ("dflt01", "Default team", ACCOUNT),
]
RULES = {
    "rules": [
        {"collection": "Finance", "outputPrefix": f"{LAKE_GOLD}/finance/"},
        {"collection": "lineage-team", "jobNamespace": "other-namespace"},
    ]
}
QUICK_POISON_ENV = {
    "AzureFunctionsJobHost__extensions__queues__maxDequeueCount": "2",
    "AzureFunctionsJobHost__extensions__queues__visibilityTimeout": "00:00:00",
    "CATALOG_MAX_ATTEMPTS": "1",
}


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[CatalogServer]:
    """The estate: four collections under the root, and a scanned file in `sales01`."""
    server = CatalogServer(tmp_path / "catalog.sqlite", account_name=ACCOUNT).start()
    for name, friendly, parent in COLLECTIONS:
        requests.put(
            f"{server.url}/account/collections/{name}?{ACCOUNT_API}",
            timeout=10,
            json={"friendlyName": friendly, "parentCollection": {"referenceName": parent}},
        ).raise_for_status()
    requests.post(
        f"{server.atlas_url}/entity/bulk?collectionId=sales01",
        timeout=10,
        json={
            "entities": [
                {
                    "typeName": "azure_datalake_gen2_path",
                    "guid": "-1",
                    "attributes": {"qualifiedName": SCANNED_OUTPUT, "name": "scanned.csv"},
                }
            ]
        },
    ).raise_for_status()
    yield server
    server.stop()


def start(serve_on_each_store: Callable[..., Any], catalog: CatalogServer, rules: dict, folder: Path) -> Any:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "placement.json").write_text(json.dumps(rules))
    return serve_on_each_store(
        key="k",
        env={
            "ATLAS_ENDPOINT": catalog.atlas_url,
            "PLACEMENT_RULES_PATH": str(folder / "placement.json"),
            "PURVIEW_COLLECTION": "Default team",
            "DATABRICKS_WORKSPACE_HOSTS": f"{dr.WORKSPACE_ID}={dr.HOST}",
            **QUICK_POISON_ENV,
        },
    )


def run_events(number: int, output_path: str, job_namespace: str | None = None) -> list[dict]:
    # a Databricks notebook run as openlineage-spark sends it (tools/samples/databricks.py), writing a plain file
    events = notebook_run(
        number, f"write_file.run{number}", [dataset(GOLD, "raw/input.csv")], dataset(GOLD, output_path)
    )
    if job_namespace:
        for event in events:
            event["job"]["namespace"] = job_namespace
    return events


def send(serve: Any, folder: Path, events: list[dict]) -> dict:
    replay(serve, write_events(folder, *events))
    return serve.wait_until_processed(timeout=120)


def process_of(atlas_url: str, statement: str) -> dict:
    atlas = Atlas(atlas_url)
    found = [
        e
        for e in atlas.all_entities()
        if e["typeName"] == "databricks_process" and f"/processes/{statement}/" in e["attributes"]["qualifiedName"]
    ]
    assert len(found) == 1, [e["attributes"]["qualifiedName"] for e in found]
    return atlas.entity("databricks_process", found[0]["attributes"]["qualifiedName"])


def collection_of(atlas_url: str, type_name: str, qualified_name: str) -> str:
    return Atlas(atlas_url).entity(type_name, qualified_name)["collectionId"]


def set_curator_of(catalog: CatalogServer, names: list[str] | None) -> None:
    requests.put(f"{catalog.url}/_ol2purview/permissions", json={"curatorOf": names}, timeout=10).raise_for_status()


def requeue_all(serve: Any) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "tools.cli", "requeue", "--all", "--data", str(serve.data_dir)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_runs_are_placed_moved_and_refused_as_purview_would(catalog, serve_on_each_store, tmp_path):
    atlas_url = catalog.atlas_url
    scanned_before = stable(Atlas(atlas_url).entity("azure_datalake_gen2_path", SCANNED_OUTPUT))
    serve = start(serve_on_each_store, catalog, RULES, tmp_path / "a")

    # 1. by rule: the output is under finance/ (the rule names the collection by its friendly name)
    send(serve, tmp_path / "r201", run_events(201, "finance/daily.csv"))
    finance = process_of(atlas_url, "write_file.run201")
    assert finance["collectionId"] == "fin01a"
    assert collection_of(atlas_url, "azure_datalake_gen2_path", f"{LAKE_GOLD}/finance/daily.csv") == "fin01a"

    # 2. by job namespace
    send(serve, tmp_path / "r202", run_events(202, "misc/other.csv", job_namespace="other-namespace"))
    assert process_of(atlas_url, "write_file.run202")["collectionId"] == "lineage-team"

    # 3. no rule: the collection of the scanned output; the scanned asset stays as it was
    send(serve, tmp_path / "r203", run_events(203, "sales/scanned.csv"))
    assert process_of(atlas_url, "write_file.run203")["collectionId"] == "sales01"
    assert collection_of(atlas_url, "azure_datalake_gen2_path", SCANNED_OUTPUT) == "sales01"

    # 4. neither: PURVIEW_COLLECTION, by friendly name; but first the connector is no Data Curator there
    set_curator_of(catalog, ["fin01a", "lineage-team", "sales01"])
    status = send(serve, tmp_path / "r204", run_events(204, "misc/plain.csv"))
    wait_until(
        lambda: serve.status()["queues"]["lineage-events"]["poisonCount"] >= 1,
        timeout=60,
        what="the refused run in the poison queue",
    )
    assert (
        "CatalogRejected: catalog rejected the request: 403 OL2PURVIEW-COLLECTION-NOT-ALLOWED: grant the "
        "connector's identity the Data Curator role on collection dflt01 (Default team), then requeue"
    ) in serve.output()
    assert not [
        e
        for e in Atlas(atlas_url).all_entities()
        if "/processes/write_file.run204/" in e["attributes"]["qualifiedName"]
    ]
    set_curator_of(catalog, None)  # the grant
    assert requeue_all(serve).strip().splitlines()[-1].startswith("moved ")
    status = serve.wait_until_processed(timeout=120)
    assert status["queues"]["lineage-events"]["poisonCount"] == 0
    assert process_of(atlas_url, "write_file.run204")["collectionId"] == "dflt01"

    # steady state: a run of known datasets costs its one bulk write, placement included (collections listed once,
    # the scanned output's collection cached), as without placement
    send(serve, tmp_path / "r205", run_events(205, "sales/scanned.csv"))
    requests.post(f"{catalog.url}/_ol2purview/calls/reset", timeout=10).raise_for_status()
    send(serve, tmp_path / "r206", run_events(206, "sales/scanned.csv"))
    assert catalog_calls(catalog) == {"POST /entity/bulk": 1}
    assert process_of(atlas_url, "write_file.run206")["collectionId"] == "sales01"
    assert serve.stop() == 0

    # 5. a placement change (a new rule for the scanned output's folder) moves the process, not the scanned asset
    moved_rules = {"rules": [*RULES["rules"], {"collection": "lineage-team", "outputPrefix": f"{LAKE_GOLD}/sales/"}]}
    serve = start(serve_on_each_store, catalog, moved_rules, tmp_path / "b")
    send(serve, tmp_path / "r203c", run_events(203, "sales/scanned.csv"))
    assert process_of(atlas_url, "write_file.run203")["collectionId"] == "lineage-team"
    assert collection_of(atlas_url, "azure_datalake_gen2_path", SCANNED_OUTPUT) == "sales01"
    assert stable(Atlas(atlas_url).entity("azure_datalake_gen2_path", SCANNED_OUTPUT)) == scanned_before
    assert process_of(atlas_url, "write_file.run201")["collectionId"] == "fin01a"  # not in this run: unchanged


def catalog_calls(catalog: CatalogServer) -> dict[str, int]:
    return requests.get(f"{catalog.url}/_ol2purview/calls", timeout=10).json()["byRoute"]
