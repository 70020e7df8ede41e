"""The composition root: each part built once per process (also under concurrent first use), catalog configuration
errors that name the setting, the Purview wiring with a faked credential, typedefs registered once before the first
upload, and one event of a run at a time."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from azure.core.credentials import AccessToken

from olparser.adapters import operations
from olparser.adapters.catalog import CatalogUnavailable
from olparser.adapters.catalog.typedefs_first import TypedefsFirstUploader
from olparser.adapters.runtime import ConfigurationError, Runtime
from olparser.settings import Settings
from tests.support.ports import free_port
from tests.support.repository import SHARED
from tests.support.rules import MAPPINGS_PATH
from tools.catalog import CatalogServer

EVENTS = SHARED / "openlineage" / "events"
SEQUENCES = SHARED / "openlineage" / "sequences"


class FakeCredential:
    def __init__(self) -> None:
        self.scopes: list[tuple[str, ...]] = []

    def get_token(self, *scopes: str, **kwargs) -> AccessToken:
        self.scopes.append(scopes)
        return AccessToken("fake-token", int(time.time() + 3600))


@pytest.fixture
def runtime(tmp_path: Path):
    rt = Runtime(Settings(data_dir=tmp_path, mappings_path=MAPPINGS_PATH))
    yield rt
    rt.close()


def test_each_part_is_built_once_even_when_first_used_concurrently(runtime):
    with ThreadPoolExecutor(8) as pool:
        engines = list(pool.map(lambda _: runtime.engine(), range(16)))
        couriers = list(pool.map(lambda _: runtime.courier(), range(16)))
    assert len({id(e) for e in engines}) == 1 and len({id(c) for c in couriers}) == 1
    assert runtime.run_state_store() is runtime.run_state_store()


def test_the_embedded_target_without_an_endpoint_names_the_settings_to_set(runtime):
    with pytest.raises(ConfigurationError) as raised:
        runtime.pipeline()
    assert str(raised.value) == "no catalog configured: set PURVIEW_ACCOUNT_NAME, PURVIEW_ENDPOINT or ATLAS_ENDPOINT"


def test_purview_and_atlas_together_are_a_configuration_error(tmp_path):
    rt = Runtime(Settings(data_dir=tmp_path, purview_account_name="acct", atlas_endpoint="http://h:1/api/atlas/v2"))
    with pytest.raises(
        ConfigurationError, match=r"set either PURVIEW_ACCOUNT_NAME \(or PURVIEW_ENDPOINT\) or ATLAS_ENDPOINT, not both"
    ):
        rt.catalog_client()


def test_purview_uses_the_datamap_endpoint_and_the_given_credential(tmp_path):
    credential = FakeCredential()
    rt = Runtime(Settings(data_dir=tmp_path, purview_account_name="Contoso-Purview"), credential=credential)
    client = rt.catalog_client()
    assert client.endpoint_url == "https://contoso-purview.purview.azure.com/datamap/api/atlas/v2"
    assert client.generate_request_headers()["Authorization"] == "Bearer fake-token"
    assert credential.scopes == [("https://purview.azure.net/.default",)]
    assert rt.uploader() is rt.uploader()  # one uploader, one existence cache, per process


class CountingUploader:
    def __init__(self, fail_first: int = 0) -> None:
        self.registrations = 0
        self.uploads = 0
        self._fail_first = fail_first

    def register_typedefs(self, typedefs):
        self.registrations += 1
        if self.registrations <= self._fail_first:
            raise CatalogUnavailable("catalog down")
        return "report"

    def upload(self, plan, *, refresh=True):
        self.uploads += 1


def test_typedefs_are_registered_once_before_the_first_upload_and_retried_after_a_failure():
    inner = CountingUploader(fail_first=1)
    uploader = TypedefsFirstUploader(inner, lambda: {"entityDefs": []})  # type: ignore[arg-type]
    with pytest.raises(CatalogUnavailable):
        uploader.upload("plan-1")  # type: ignore[arg-type]
    assert (inner.registrations, inner.uploads) == (1, 0)
    uploader.upload("plan-2")  # type: ignore[arg-type]
    uploader.upload("plan-3")  # type: ignore[arg-type]
    assert (inner.registrations, inner.uploads) == (2, 2)


def test_a_fresh_catalog_gets_the_typedefs_then_runs_cost_five_calls_then_one(tmp_path):
    with CatalogServer(tmp_path / "catalog.db", port=free_port()) as catalog:
        rt = Runtime(Settings(data_dir=tmp_path, atlas_endpoint=catalog.atlas_url, mappings_path=MAPPINGS_PATH))
        complete = json.loads((EVENTS / "accelerator__UnitTestColData_CompleteOlColMessage.json").read_text())
        first = operations.process_event(rt, complete)
        after_first = catalog.counter.snapshot()
        again = json.loads(json.dumps(complete))
        again["run"]["runId"] = "4b0c7f35-8a7b-4f3c-9d61-0d1f6f1f2a11"
        second = operations.process_event(rt, again)
        after_second = catalog.counter.snapshot()
        rt.close()
    assert after_first["byRoute"]["GET /types/typedefs"] == 1
    assert (first.status, first.catalog_calls) == ("written", 5)
    assert after_first == {
        "total": 2 + 5,
        "byRoute": {  # typedefs read + create, then the run:
            "GET /types/typedefs": 1,
            "POST /types/typedefs": 1,
            "GET /resourceSetRuleConfigs/defaultResourceSetRuleConfig": 1,  # the account's resource-set rules, once
            "GET /entity/bulk/uniqueAttribute/type/{type_name}": 2,  # the input's path and resource-set names
            "POST /search/query": 1,  # a partitioned resource set under the input folder
            "POST /entity/bulk": 1,
        },
    }  # the write (the interim path created: the resolver knew it was missing)
    assert (second.status, second.catalog_calls) == ("written", 1)  # datasets cached: only the bulk write
    assert after_second["total"] - after_first["total"] == 1


def test_static_job_and_dataset_events_go_through_the_runtime_into_the_catalog(tmp_path):
    job = {
        "eventTime": "2026-01-01T00:00:00Z",
        "producer": "p",
        "schemaURL": "s",
        "job": {"namespace": "adf", "name": "copy_orders"},
        "inputs": [{"namespace": "kafka://b:9092", "name": "orders"}],
        "outputs": [{"namespace": "abfss://raw@lake.dfs.core.windows.net", "name": "orders"}],
    }
    dataset = {
        "eventTime": "2026-01-01T00:00:00Z",
        "producer": "p",
        "schemaURL": "s",
        "dataset": {"namespace": "kafka://b:9092", "name": "refunds"},
    }
    with CatalogServer(tmp_path / "catalog.db") as catalog:
        rt = Runtime(Settings(data_dir=tmp_path, atlas_endpoint=catalog.atlas_url, mappings_path=MAPPINGS_PATH))
        outcomes = [
            operations.process_event(rt, job),
            operations.process_event(rt, dataset),
            operations.process_event(rt, job),
        ]
        process = catalog.atlas_url + "/entity/uniqueAttribute/type/openlineage_process"
        found = requests.get(
            process,
            params={
                "attr:qualifiedName": "openlineage://adf/copy_orders/processes/copy_orders/"
                "https://lake.dfs.core.windows.net/raw/orders"
            },
            timeout=10,
        ).json()["entity"]
        refunds = requests.get(
            catalog.atlas_url + "/entity/uniqueAttribute/type/openlineage_dataset",
            params={"attr:qualifiedName": "kafka://b:9092/refunds"},
            timeout=10,
        )
        rt.close()
    assert [(o.run_id, o.status) for o in outcomes] == [(None, "written"), (None, "written"), (None, "unchanged")]
    assert [r["uniqueAttributes"]["qualifiedName"] for r in found["relationshipAttributes"]["inputs"]] == [
        "kafka://b:9092/orders"
    ]
    assert (found["attributes"]["lastRunId"], found["attributes"]["lastRunStatus"]) == ("", "COMPLETE")
    assert refunds.status_code == 200


def test_the_timer_tick_counts_the_messages_waiting_in_the_poison_queue(tmp_path):
    with CatalogServer(tmp_path / "catalog.db", port=free_port()) as catalog:
        runtime = Runtime(Settings(data_dir=tmp_path, atlas_endpoint=catalog.atlas_url, mappings_path=MAPPINGS_PATH))
        try:
            counts = poison_counts(runtime)
        finally:
            runtime.close()
    assert counts == (0, 2, False)


def poison_counts(runtime: Runtime) -> tuple[int, int, bool]:
    empty = operations.write_due_runs(runtime).poison_waiting
    poison = runtime.queue_service().queue("lineage-events-poison")
    poison.send('{"v": 1}')
    poison.send('{"v": 2}')
    report = operations.write_due_runs(runtime)
    return empty, report.poison_waiting, report.did_something  # a warning of its own, not "did something"
