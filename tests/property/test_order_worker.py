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
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from olparser.adapters import operations
from olparser.adapters.delivery.queues import poison_queue_name
from olparser.adapters.runtime import Runtime
from tests.property.scenarios import deliveries, scenarios
from tests.support.order_worker import FAR_FUTURE, _settings, catalog_content, in_order
from tests.support.repository import PROJECT_ROOT
from tests.support.stores import open_test_run_state_store
from tests.support.waiting import wait_until
from tools.catalog import CatalogServer
from tools.functions_host.queue_worker import QueueWorker
from tools.functions_host.trigger_settings import load_queue_trigger_settings

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

HOST_JSON = PROJECT_ROOT / "host.json"
EXAMPLES = {"sqlite": 40, "table": 6}


def through_the_worker(events: list[dict[str, Any]], hold: int, kind: str = "sqlite", request=None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder, CatalogServer(Path(folder) / "catalog.db") as catalog:
        store = open_test_run_state_store(kind, Path(folder), request)  # a fresh table on Azurite for `table`
        runtime = Runtime(_settings(Path(folder), catalog.atlas_url, hold), run_state_store=store)
        try:
            service = runtime.queue_service()
            queue = service.queue("lineage-events")
            courier = runtime.courier()
            for event in events:
                run = event.get("run") or {}
                queue.send(courier.deliver(json.dumps(event).encode("utf-8"), run.get("runId"), event.get("eventType")))

            def handler(text: str, dequeue_count: int) -> None:  # what function_app.process_lineage_event does
                operations.process_event(runtime, courier.open_event(text))

            worker = QueueWorker(
                queue,
                service.queue(poison_queue_name("lineage-events")),
                handler,
                load_queue_trigger_settings(HOST_JSON),
            )
            with worker:
                wait_until(
                    lambda: worker.counts.succeeded + worker.counts.failed >= len(events),
                    120,
                    0.01,
                    what=f"{len(events)} events handled",
                )
            assert (worker.counts.succeeded, worker.counts.failed, worker.counts.poisoned) == (len(events), 0, 0)
            operations.write_due_runs(runtime, now=FAR_FUTURE)
        finally:
            runtime.close()
        return catalog_content(catalog.atlas_url)


@st.composite
def cases(draw):
    events = draw(scenarios())
    return events, draw(deliveries(events)), draw(st.sampled_from([0, 60]))


def test_the_real_worker_gives_the_in_order_catalog_whatever_the_order(run_state_store_kind, request):
    kind = run_state_store_kind

    @settings(
        max_examples=EXAMPLES[kind],
        deadline=None,
        print_blob=False,
        derandomize=False,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
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
