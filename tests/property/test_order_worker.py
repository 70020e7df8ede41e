"""Whatever the order, through the real parts: every real sequence, the Databricks samples and generated Databricks
runs, delivered in random orders with duplicates to the real queue worker (host.json's production batch settings:
16 messages at a time, up to 24 in flight, concurrently) in front of the runtime that function_app.py's queue trigger
calls, writing to the embedded catalog over HTTP. The catalog — every active entity's type, qualifiedName and
attributes, every relationship, every lineage relation — must equal the catalog that processing the same events in
emission order gives. One timer tick at the end writes held and incomplete runs in both. The worker runs on each
run-state store the product ships (SQLite; Azure Table storage on Azurite, fewer examples); in-order processing on
SQLite is the reference."""
from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from olparser.adapters.delivery.queues import poison_queue_name
from tools.functions_host.trigger_settings import load_queue_trigger_settings
from tools.functions_host.queue_worker import QueueWorker
from olparser.adapters.runtime import Runtime
from olparser.settings import Settings
from tests.conftest import PROJECT_ROOT, open_test_run_state_store, wait_until
from tests.property.scenarios import WORKSPACE_HOSTS, deliveries, scenarios
from tests.rules import MAPPINGS_PATH
from tools.catalog import CatalogServer

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

HOST_JSON = PROJECT_ROOT / "host.json"
FAR_FUTURE = time.time() + 2 * 3600  # every held (60 s) or incomplete (3,600 s) run is due, none expired (7 days)
VOLATILE = {"guid", "createTime", "updateTime", "version", "createdBy", "updatedBy", "lastModifiedTS",
            "relationshipGuid", "relationshipStatus", "relationshipType", "relationshipAttributes", "displayText",
            "entityStatus"}
EXAMPLES = {"sqlite": 40, "table": 6}


def _settings(folder: Path, atlas_url: str, hold: int) -> Settings:
    return Settings(data_dir=folder, atlas_endpoint=atlas_url, databricks_workspace_hosts=WORKSPACE_HOSTS,
                    databricks_environment_wait_seconds=hold, incomplete_run_seconds=3600, mappings_path=MAPPINGS_PATH)


def _by_key(value: Any, names: dict[str, tuple[str, str]]) -> Any:
    """Object ids and headers as (typeName, qualifiedName), everything the catalog adds on its own left out."""
    if isinstance(value, dict):
        if "guid" in value and value["guid"] in names:
            return names[value["guid"]]
        return {k: _by_key(v, names) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):  # a relationship to a deleted entity is history, not lineage
        items = [_by_key(v, names) for v in value
                 if not (isinstance(v, dict) and "DELETED" in (v.get("entityStatus"), v.get("relationshipStatus")))]
        return sorted(items, key=repr) if all(isinstance(i, tuple) for i in items) else items
    return value


def catalog_content(atlas_url: str) -> dict[str, Any]:
    """Every active entity (attributes and relationships by key) and every lineage relation around each process."""
    guids: list[str] = []
    while True:
        page = requests.post(f"{atlas_url}/search/basic", json={"query": "*", "limit": 1000, "offset": len(guids)},
                             timeout=30).json()["entities"]
        guids += [e["guid"] for e in page or []]
        if len(page or []) < 1000:
            break
    if not guids:
        return {"entities": {}, "lineage": set()}
    body = requests.get(f"{atlas_url}/entity/bulk", params=[("guid", g) for g in guids], timeout=30).json()
    active = [e for e in body["entities"] if e.get("status", "ACTIVE") == "ACTIVE"]
    names = {e["guid"]: (e["typeName"], e["attributes"]["qualifiedName"]) for e in active}
    entities = {}
    for entity in active:
        relationships = {k: _by_key(v, names) for k, v in (entity.get("relationshipAttributes") or {}).items()}
        entities[names[entity["guid"]]] = {"attributes": _by_key(entity["attributes"], names),
                                           "relationships": {k: v for k, v in relationships.items()
                                                             if v not in (None, [])}}
    lineage = set()
    for entity in active:
        if entity["typeName"].endswith("_process"):
            graph = requests.get(f"{atlas_url}/lineage/{entity['guid']}", params={"direction": "BOTH", "depth": 1},
                                 timeout=30).json()
            keys = {g: (h["typeName"], h["attributes"]["qualifiedName"]) for g, h in graph["guidEntityMap"].items()}
            lineage |= {(keys[r["fromEntityId"]], keys[r["toEntityId"]]) for r in graph["relations"]}
    return {"entities": entities, "lineage": lineage}


def in_order(events: list[dict[str, Any]], hold: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder, CatalogServer(Path(folder) / "catalog.db") as catalog:
        runtime = Runtime(_settings(Path(folder), catalog.atlas_url, hold))
        try:
            for event in events:
                runtime.process(event)
            runtime.write_due_runs(now=FAR_FUTURE)
        finally:
            runtime.close()
        return catalog_content(catalog.atlas_url)


def through_the_worker(events: list[dict[str, Any]], hold: int, kind: str = "sqlite",
                       request=None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder, CatalogServer(Path(folder) / "catalog.db") as catalog:
        runtime = Runtime(_settings(Path(folder), catalog.atlas_url, hold))
        store = open_test_run_state_store(kind, Path(folder), request)
        runtime._once("run_state_store", lambda: store)  # this test's store (a fresh table on Azurite for `table`)
        try:
            service = runtime.queue_service()
            queue = service.queue("lineage-events")
            courier = runtime.courier()
            for event in events:
                run = event.get("run") or {}
                queue.send(courier.deliver(json.dumps(event).encode("utf-8"), run.get("runId"),
                                           event.get("eventType")))

            def handler(text: str, dequeue_count: int) -> None:  # what function_app.process_lineage_event does
                runtime.process(courier.open_event(text))

            worker = QueueWorker(queue, service.queue(poison_queue_name("lineage-events")), handler,
                                 load_queue_trigger_settings(HOST_JSON))
            with worker:
                wait_until(lambda: worker.counts.succeeded + worker.counts.failed >= len(events), 120, 0.01,
                           what=f"{len(events)} events handled")
            assert (worker.counts.succeeded, worker.counts.failed, worker.counts.poisoned) == (len(events), 0, 0)
            runtime.write_due_runs(now=FAR_FUTURE)
        finally:
            runtime.close()
        return catalog_content(catalog.atlas_url)


@st.composite
def cases(draw):
    events = draw(scenarios())
    return events, draw(deliveries(events)), draw(st.sampled_from([0, 60]))


def test_the_real_worker_gives_the_in_order_catalog_whatever_the_order(run_state_store_kind, request):
    kind = run_state_store_kind

    @settings(max_examples=EXAMPLES[kind], deadline=None, print_blob=False, derandomize=False,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(cases())
    def check(case):
        ordered, delivered, hold = case
        got, expected = through_the_worker(delivered, hold, kind, request), in_order(ordered, hold)
        assert expected["entities"] and expected["lineage"]  # every scenario writes some lineage
        assert got["lineage"] == expected["lineage"]
        assert sorted(got["entities"]) == sorted(expected["entities"])
        for key, entity in expected["entities"].items():
            assert got["entities"][key] == entity, key

    check()
