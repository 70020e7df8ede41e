"""The re-link timer over the real stack (the runtime's pipeline, resolver, uploader and SQLite run state, the
embedded catalog over HTTP): a run written before the scan leaves interim paths; once the scan has registered the
output folder's resource set, one tick points the process at it and deletes the interim path, whatever happened to
the run's state; an interim entity another tool's process uses, or that a scan took over, is kept."""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests

from olparser.adapters import operations
from olparser.adapters.runtime import Runtime
from olparser.settings import Settings
from tests.support import databricks_runs as dr
from tests.support.catalog_reads import as_the_connector_reads
from tests.support.catalog_server import calls_since_reset
from tests.support.rules import MAPPINGS_PATH
from tools.catalog import CatalogServer

LAKE = "https://contosolake.dfs.core.windows.net"
CURATED = f"{LAKE}/curated/orders"
CURATED_SET = f"{CURATED}/{{SparkPartitions}}"
RAW = f"{LAKE}/raw/orders"
PATH, SET = "azure_datalake_gen2_path", "azure_datalake_gen2_resource_set"
NOTEBOOK = f"databricks://{dr.HOST}/notebooks/Repos/etl/orders"
PROCESS = f"{NOTEBOOK}/processes/execute_insert_into_hadoop_fs_relation_command.orders/{CURATED}"
STABLE = ("typeName", "guid", "status", "attributes", "createdBy", "createTime", "classifications", "labels")


@pytest.fixture
def catalog(open_catalog: CatalogServer) -> CatalogServer:
    return open_catalog


def atlas(catalog: CatalogServer, method: str, path: str, **kwargs: Any) -> Any:
    response = requests.request(method, f"{catalog.atlas_url}{path}", timeout=10, **kwargs)
    response.raise_for_status()
    return response.json()


def entity(catalog: CatalogServer, type_name: str, qualified_name: str) -> dict[str, Any] | None:
    found = (
        atlas(
            catalog,
            "GET",
            f"/entity/bulk/uniqueAttribute/type/{type_name}",
            params={"attr_0:qualifiedName": qualified_name},
        ).get("entities")
        or []
    )
    return next((as_the_connector_reads(e) for e in found if e.get("status") == "ACTIVE"), None)


def scan(catalog: CatalogServer, type_name: str, qualified_name: str, **attributes: Any) -> dict[str, Any]:
    """What a scanner registers, through the Atlas API; returns the entity as the catalog then holds it."""
    atlas(
        catalog,
        "POST",
        "/entity/bulk",
        json={
            "entities": [
                {
                    "typeName": type_name,
                    "guid": "-1",
                    "attributes": {"qualifiedName": qualified_name, "name": "orders (scanned)", **attributes},
                }
            ]
        },
    )
    return entity(catalog, type_name, qualified_name)


def stable(scanned: dict[str, Any]) -> str:
    """What the connector must never change on a scanned entity (a process referencing it adds relationships and
    Atlas's update bookkeeping, nothing else)."""
    return json.dumps({k: scanned.get(k) for k in STABLE}, sort_keys=True)


def write_run(runtime: Runtime, number: int) -> None:
    for event in dr.events(dr.orders_run(number, dr.T0 + dr.timedelta(hours=number))):
        operations.process_event(runtime, event)


def refs(process: dict[str, Any], name: str) -> list[tuple[str, str]]:
    return sorted(
        (r["typeName"], r["uniqueAttributes"]["qualifiedName"])
        for r in process["relationshipAttributes"][name]
        if r.get("relationshipStatus") == "ACTIVE"
    )


def test_a_scan_after_the_run_is_picked_up_by_one_tick_and_the_interim_path_goes(catalog, runtime):
    write_run(runtime, 1)
    assert entity(catalog, PATH, CURATED) is not None  # interim: nothing scanned yet
    store = runtime.run_state_store()
    assert [e.key for e in store.due_interim(10)] == [(PATH, CURATED), (PATH, f"{LAKE}/raw/customers"), (PATH, RAW)]
    scanned = scan(catalog, SET, CURATED_SET, partitionCount=3)
    calls_since_reset(catalog)

    report = operations.relink_scanned_assets(runtime)

    assert report.to_json() == {
        "checked": 3,
        "relinked": 1,
        "processes": 1,
        "deleted": 1,
        "kept": 0,
        "calls": 9,
        "retired": 0,
    }
    assert calls_since_reset(catalog) == {
        "GET /entity/bulk/uniqueAttribute/type/{type_name}": 2 + 1 + 1,  # the interim paths
        # (a scan may have filled them in) and the resource sets, the interim path's users,
        # the lookup before deleting it
        "POST /search/query": 2,  # the raw inputs: no resource set, partitioned or not
        "GET /entity/bulk": 1,
        "POST /entity/bulk": 1,
        "DELETE /entity/bulk": 1,
    }
    process = entity(catalog, "databricks_process", PROCESS)
    assert refs(process, "outputs") == [(SET, CURATED_SET)]
    mapping = json.loads(process["attributes"]["columnMapping"])
    assert {m["DatasetMapping"]["Sink"] for m in mapping} == {CURATED_SET}
    detail = json.loads(process["attributes"]["columnLineageDetail"])
    assert detail["fields"][0]["field"] == "amount"
    assert entity(catalog, PATH, CURATED) is None  # the interim path is gone
    assert [e.key for e in store.due_interim(10)] == [(PATH, f"{LAKE}/raw/customers"), (PATH, RAW)]
    assert stable(entity(catalog, SET, CURATED_SET)) == stable(scanned)

    assert operations.relink_scanned_assets(runtime).to_json() == {
        "checked": 2,
        "relinked": 0,
        "processes": 0,
        "deleted": 0,
        "kept": 0,
        "calls": 4,
        "retired": 0,
    }  # the same lookups and searches


def test_the_next_run_links_by_itself_and_the_process_keeps_its_name(catalog, runtime):
    write_run(runtime, 1)
    scanned = scan(catalog, SET, CURATED_SET, partitionCount=3)
    operations.relink_scanned_assets(runtime)
    write_run(runtime, 2)  # a newer run of the same statement
    process = entity(catalog, "databricks_process", PROCESS)
    assert refs(process, "outputs") == [(SET, CURATED_SET)]
    assert process["attributes"]["lastRunId"] == dr.run_id(2)
    assert entity(catalog, PATH, CURATED) is None
    assert stable(entity(catalog, SET, CURATED_SET)) == stable(scanned)


def test_runs_whose_state_expired_are_relinked_from_what_the_catalog_holds(catalog, runtime):
    write_run(runtime, 1)
    store = runtime.run_state_store()
    assert store.purge_expired(now=4_000_000_000.0) == 1
    scan(catalog, SET, CURATED_SET)
    assert operations.relink_scanned_assets(runtime).processes == 1
    assert refs(entity(catalog, "databricks_process", PROCESS), "outputs") == [(SET, CURATED_SET)]
    assert entity(catalog, PATH, CURATED) is None


def test_an_interim_entity_another_tools_process_uses_is_kept_but_no_longer_used_by_ours(catalog, runtime):
    write_run(runtime, 1)
    atlas(
        catalog,
        "POST",
        "/entity/bulk",
        json={
            "entities": [
                {
                    "typeName": "Process",
                    "guid": "-1",
                    "attributes": {
                        "qualifiedName": "adf://copy_orders",
                        "name": "copy_orders",
                        "inputs": [{"typeName": PATH, "uniqueAttributes": {"qualifiedName": CURATED}}],
                        "outputs": [],
                    },
                }
            ]
        },
    )
    scan(catalog, SET, CURATED_SET)

    assert operations.relink_scanned_assets(runtime).to_json()["kept"] == 1
    assert entity(catalog, PATH, CURATED) is not None
    assert refs(entity(catalog, "Process", "adf://copy_orders"), "inputs") == [(PATH, CURATED)]
    assert refs(entity(catalog, "databricks_process", PROCESS), "outputs") == [(SET, CURATED_SET)]
    assert (PATH, CURATED) in runtime.run_state_store().interim_keys([(PATH, CURATED)])  # looked at again later


def test_an_interim_path_a_scan_has_filled_in_is_the_scanners_and_stays(catalog, runtime):
    write_run(runtime, 1)
    scan(catalog, PATH, CURATED, size=4096, isFile=False)  # the scanner registered that very name
    scan(catalog, SET, CURATED_SET)
    assert operations.relink_scanned_assets(runtime).to_json()["relinked"] == 0
    assert entity(catalog, PATH, CURATED) is not None
    assert refs(entity(catalog, "databricks_process", PROCESS), "outputs") == [(PATH, CURATED)]
    assert runtime.run_state_store().interim_keys([(PATH, CURATED)]) == set()


def test_a_worker_that_still_believes_nothing_was_scanned_links_the_next_run_to_the_scanned_asset(
    catalog, runtime, tmp_path
):
    write_run(runtime, 1)  # this worker's caches: no resource set for curated/orders, for an hour
    scan(catalog, SET, CURATED_SET)
    timer_instance = Runtime(
        Settings(data_dir=tmp_path / "data", atlas_endpoint=catalog.atlas_url, mappings_path=MAPPINGS_PATH)
    )
    try:
        assert (
            operations.relink_scanned_assets(timer_instance).deleted == 1
        )  # on another instance: the interim path goes
    finally:
        timer_instance.close()

    write_run(runtime, 2)  # its bulk write names the deleted path: 404, so it resolves the run again
    assert refs(entity(catalog, "databricks_process", PROCESS), "outputs") == [(SET, CURATED_SET)]
    assert entity(catalog, PATH, CURATED) is None  # not written again
    assert (PATH, CURATED) not in runtime.run_state_store().interim_keys([(PATH, CURATED)])


def test_a_registry_entry_whose_candidates_cannot_be_read_is_forgotten_not_fatal(catalog, runtime):
    store = runtime.run_state_store()
    store.register_interim({(PATH, f"{LAKE}/broken"): "not json", (PATH, f"{LAKE}/odd"): '[{"typeName": 1}]'})
    assert operations.relink_scanned_assets(runtime).to_json() == {
        "checked": 0,
        "relinked": 0,
        "processes": 0,
        "deleted": 0,
        "kept": 0,
        "calls": 0,
        "retired": 0,
    }
    assert store.due_interim(10) == []


def test_a_process_of_the_same_type_written_by_another_tool_is_not_rewritten(catalog, runtime):
    write_run(runtime, 1)
    other = f"{NOTEBOOK}/processes/reference-connector/abc->def"  # the reference connector's databricks_process
    atlas(
        catalog,
        "POST",
        "/entity/bulk",
        json={
            "entities": [
                {
                    "typeName": "databricks_process",
                    "guid": "-1",
                    "attributes": {
                        "qualifiedName": other,
                        "name": "x",
                        "inputs": [{"typeName": PATH, "uniqueAttributes": {"qualifiedName": CURATED}}],
                        "outputs": [],
                    },
                }
            ]
        },
    )
    scan(catalog, SET, CURATED_SET)
    assert operations.relink_scanned_assets(runtime).to_json()["kept"] == 1
    assert refs(entity(catalog, "databricks_process", other), "inputs") == [(PATH, CURATED)]
    assert refs(entity(catalog, "databricks_process", PROCESS), "outputs") == [(SET, CURATED_SET)]
