"""End to end: the uploader against the embedded Atlas-compatible catalog over real HTTP (no fakes).

Call counts come from the catalog's own counter (`GET /_ol2purview/calls`); faults from its injector.
"""

from __future__ import annotations

import json
import urllib.request

import pytest

from olparser.adapters.catalog import (
    CatalogRejected,
    CatalogUnavailable,
    CatalogUploader,
    load_typedefs,
    make_atlas_client,
    register_typedefs,
    resolve_target,
)
from olparser.lineage.plan import LineagePlan
from olparser.settings import TYPEDEFS_DIR, Settings
from tools.catalog import CatalogServer

pytestmark = pytest.mark.e2e

ADLS = "azure_datalake_gen2_path"
RAW = "https://lake.dfs.core.windows.net/raw/orders"
CURATED = "https://lake.dfs.core.windows.net/curated/orders"
NOTEBOOK = "databricks://adb-1.azuredatabricks.net/notebooks/etl/orders"
PROCESS = NOTEBOOK + "/processes/orders"


def orders_plan(inputs: tuple[str, ...] = (RAW,)) -> LineagePlan:
    datasets = [
        {
            "typeName": ADLS,
            "guid": f"-{i + 10}",
            "attributes": {"qualifiedName": qn, "name": qn.rsplit("/", 1)[1], "description": "from lineage"},
        }
        for i, qn in enumerate(inputs + (CURATED,))
    ]
    return LineagePlan(
        external_datasets=tuple(datasets),
        entities=(
            {
                "typeName": "databricks_process",
                "guid": "-2",
                "attributes": {"qualifiedName": PROCESS, "name": "orders"},
                "relationshipAttributes": {
                    "inputs": [{"guid": d["guid"]} for d in datasets[:-1]],
                    "outputs": [{"guid": datasets[-1]["guid"]}],
                    "notebook": {"guid": "-1"},
                },
            },
            {
                "typeName": "databricks_notebook",
                "guid": "-1",
                "attributes": {"qualifiedName": NOTEBOOK, "name": "orders", "path": "/etl/orders"},
            },
        ),
    )


class Waits:
    def __init__(self) -> None:
        self.seconds: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


@pytest.fixture
def catalog(tmp_path):
    """A fresh catalog with the connector's types for every test, so that no test depends on what another wrote."""
    server = CatalogServer(tmp_path / "catalog.db", port=0).start()
    client = make_atlas_client(resolve_target(Settings()).with_endpoint(server.atlas_url), timeout=10)
    register_typedefs(client, load_typedefs(TYPEDEFS_DIR))
    yield server
    server.stop()


@pytest.fixture
def client(catalog):
    catalog.set_faults("none")
    client = make_atlas_client(resolve_target(Settings()).with_endpoint(catalog.atlas_url), timeout=10)
    yield client
    catalog.set_faults("none")
    client.close()


def calls(catalog) -> int:
    return get_json(catalog.url + "/_ol2purview/calls")["total"]


def lineage_edges(catalog, guid: str) -> set[tuple[str, str]]:
    graph = get_json(f"{catalog.atlas_url}/lineage/{guid}?direction=BOTH&depth=3")
    name = {g: e["attributes"]["qualifiedName"] for g, e in graph["guidEntityMap"].items()}
    return {(name[r["fromEntityId"]], name[r["toEntityId"]]) for r in graph["relations"]}


def test_typedefs_register_once_then_update(catalog, client):
    typedefs = load_typedefs(TYPEDEFS_DIR)
    names = tuple(t["name"] for category in typedefs.values() for t in category)
    before = calls(catalog)
    report = register_typedefs(client, typedefs)
    assert (report.created, report.updated, report.unchanged, report.calls) == ((), (), names, 1)  # the fixture's
    assert calls(catalog) - before == 1


def test_new_run_takes_two_calls_and_a_cached_one_takes_one(catalog, client):
    uploader = CatalogUploader(client)
    before = calls(catalog)
    first = uploader.upload(orders_plan())
    after_first = calls(catalog)
    second = uploader.upload(orders_plan())

    assert after_first - before == 2 and first.calls == 2  # the reference connector: about 13-23 per event
    assert calls(catalog) - after_first == 1 and second.calls == 1
    assert set(first.created) == {
        (ADLS, RAW),
        (ADLS, CURATED),
        ("databricks_notebook", NOTEBOOK),
        ("databricks_process", PROCESS),
    }
    assert second.referenced == ((ADLS, RAW), (ADLS, CURATED))
    process_guid = first.guid_assignments["-2"]
    assert lineage_edges(catalog, process_guid) == {(RAW, PROCESS), (PROCESS, CURATED)}


def test_scanned_dataset_keeps_its_attributes(catalog, client):
    scanned = "https://lake.dfs.core.windows.net/raw/customers"
    client.upload_bulk(
        [
            {
                "typeName": ADLS,
                "guid": "-1",
                "attributes": {"qualifiedName": scanned, "name": "customers", "description": "scanned by Purview"},
            }
        ]
    )
    before = client.find_entities(ADLS, [scanned])[0]

    report = CatalogUploader(client).upload(orders_plan(inputs=(scanned,)))

    # Referenced, not sent (it is reported as updated only because it gained a lineage edge).
    assert (ADLS, scanned) in report.referenced and (ADLS, scanned) not in report.created
    after = client.find_entities(ADLS, [scanned])[0]
    assert after["guid"] == before["guid"]
    assert after["attributes"]["description"] == "scanned by Purview"
    assert (scanned, PROCESS) in lineage_edges(catalog, report.guid_assignments["-2"])


def test_split_bulk_keeps_references_resolvable(catalog, client):
    inputs = tuple(f"https://lake.dfs.core.windows.net/raw/split/part-{i}" for i in range(5))
    before = calls(catalog)
    report = CatalogUploader(client, bulk_size=2).upload(orders_plan(inputs=inputs))
    assert calls(catalog) - before == 1 + 4  # one lookup, 8 entities in bulks of 2
    edges = lineage_edges(catalog, report.guid_assignments["-2"])
    assert {(qn, PROCESS) for qn in inputs} <= edges and (PROCESS, CURATED) in edges


def test_throttling_honours_retry_after_then_gives_up(catalog, client):
    catalog.set_faults("429:1,retry-after:2")
    waits = Waits()
    uploader = CatalogUploader(client, max_attempts=3, sleep=waits)
    with pytest.raises(CatalogUnavailable) as raised:
        uploader.upload(orders_plan(inputs=("https://lake.dfs.core.windows.net/raw/throttled",)))
    assert waits.seconds == [2.0, 2.0]
    assert (raised.value.status, raised.value.attempts) == (429, 3)


def test_outage_with_resets_is_unavailable_and_recovers(catalog, client):
    catalog.set_faults("down:reset")
    waits = Waits()
    uploader = CatalogUploader(client, max_attempts=2, sleep=waits)
    plan = orders_plan(inputs=("https://lake.dfs.core.windows.net/raw/outage",))
    with pytest.raises(CatalogUnavailable, match="unreachable after 2 attempts"):
        uploader.upload(plan)
    assert len(waits.seconds) == 1
    catalog.set_faults("none")
    assert uploader.upload(plan).calls == 2


def test_unknown_type_is_rejected_without_retry(catalog, client):
    waits = Waits()
    plan = LineagePlan(entities=({"typeName": "no_such_type", "guid": "-1", "attributes": {"qualifiedName": "x"}},))
    with pytest.raises(CatalogRejected) as raised:
        CatalogUploader(client, sleep=waits).upload(plan)
    assert (raised.value.status, raised.value.error_code) == (400, "ATLAS-400-00-014")
    assert "no_such_type" in raised.value.message
    assert waits.seconds == []
