"""The running server: concurrent upserts, restarts, fault injection, call counting, auth, the page."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
import requests
from pyapacheatlas.auth import BasicAuthentication
from pyapacheatlas.core import AtlasClient

from tests.support.catalog_server import PASSWORD, USER
from tools.catalog import CatalogServer
from tools.catalog import app as catalog_app

AUTH = (USER, PASSWORD)
QN = "https://acct.dfs.core.windows.net/lake/shared/table"


def entity(guid: str, name: str) -> dict:
    return {"typeName": "azure_datalake_gen2_path", "guid": guid, "attributes": {"qualifiedName": QN, "name": name}}


def test_concurrent_upserts_of_one_qualified_name_end_with_one_entity(catalog: CatalogServer) -> None:
    clients = 8
    barrier = threading.Barrier(clients)
    results: list[str] = []

    def upsert(index: int) -> None:
        client = AtlasClient(catalog.atlas_url, BasicAuthentication(USER, PASSWORD), requests_timeout=10)
        barrier.wait()
        for round_ in range(5):
            answer = client.upload_entities([entity(f"-{index}{round_}", f"name-{index}")])
            results.append(answer["guidAssignments"][f"-{index}{round_}"])

    threads = [threading.Thread(target=upsert, args=(i + 1,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == clients * 5 and len(set(results)) == 1
    found = requests.post(
        f"{catalog.atlas_url}/search/basic",
        auth=AUTH,
        timeout=10,
        json={"typeName": "azure_datalake_gen2_path", "query": "shared"},
    ).json()
    assert [e["guid"] for e in found["entities"]] == [results[0]]


def test_restart_keeps_types_entities_and_relationships(db_path: Path) -> None:
    with CatalogServer(db_path) as first:
        requests.post(
            f"{first.atlas_url}/types/typedefs",
            timeout=10,
            json={
                "entityDefs": [
                    {
                        "name": "custom_dataset",
                        "superTypes": ["DataSet"],
                        "attributeDefs": [{"name": "format", "typeName": "string"}],
                    }
                ]
            },
        )
        created = requests.post(
            f"{first.atlas_url}/entity/bulk",
            timeout=10,
            json={
                "entities": [
                    {
                        "typeName": "custom_dataset",
                        "guid": "-1",
                        "attributes": {"qualifiedName": "c://a", "name": "a", "format": "delta"},
                    },
                    {
                        "typeName": "Process",
                        "guid": "-2",
                        "attributes": {"qualifiedName": "p://x", "name": "x", "outputs": [{"guid": "-1"}]},
                    },
                ]
            },
        ).json()
        before = requests.get(f"{first.atlas_url}/entity/guid/{created['guidAssignments']['-2']}", timeout=10).json()
    with CatalogServer(db_path) as second:
        after = requests.get(f"{second.atlas_url}/entity/guid/{created['guidAssignments']['-2']}", timeout=10).json()
        dataset = requests.get(
            f"{second.atlas_url}/entity/uniqueAttribute/type/custom_dataset",
            params={"attr:qualifiedName": "c://a"},
            timeout=10,
        ).json()
    assert after == before
    assert dataset["entity"]["attributes"] == {"qualifiedName": "c://a", "name": "a", "format": "delta"}


def test_injected_429_carries_retry_after_and_calls_are_counted(db_path: Path) -> None:
    with CatalogServer(db_path, faults="429:1,retry-after:2") as server:
        throttled = requests.get(f"{server.atlas_url}/types/typedefs/headers", timeout=10)
        assert throttled.status_code == 429 and throttled.headers["Retry-After"] == "2"
        assert throttled.json()["error"]["code"] == "TooManyRequests"
        page = requests.get(f"{server.url}/", timeout=10)  # faults never hit the page or the control endpoints
        assert page.status_code == 200 and 'id="graph"' in page.text
        assert requests.put(f"{server.url}/_ol2purview/faults", data="", timeout=10).json() == {"spec": ""}
        requests.get(f"{server.atlas_url}/entity/guid/abc", timeout=10)
        requests.get(f"{server.atlas_url}/entity/guid/def", timeout=10)
        requests.post(f"{server.url}/datamap/api/atlas/v2/entity/bulk", json={"entities": []}, timeout=10)
        assert requests.get(f"{server.url}/_ol2purview/calls", timeout=10).json() == {
            "total": 4,
            "byRoute": {"GET /entity/guid/{guid}": 2, "GET /types/typedefs/headers": 1, "POST /entity/bulk": 1},
        }
        assert requests.post(f"{server.url}/_ol2purview/calls/reset", timeout=10).json() == {"total": 0, "byRoute": {}}


def test_outage_on_and_off_at_runtime_and_connection_resets(db_path: Path) -> None:
    with CatalogServer(db_path) as server:
        url = f"{server.atlas_url}/types/typedefs/headers"
        assert requests.get(url, timeout=10).status_code == 200
        assert requests.put(f"{server.url}/_ol2purview/faults", data="down", timeout=10).json() == {"spec": "down"}
        down = requests.get(url, timeout=10)
        assert (down.status_code, down.headers["Retry-After"]) == (503, "1")
        requests.put(f"{server.url}/_ol2purview/faults", json={"spec": "reset:1"}, timeout=10)
        with pytest.raises(requests.ConnectionError):
            requests.get(url, timeout=10)
        requests.put(f"{server.url}/_ol2purview/faults", data="none", timeout=10)
        assert requests.get(url, timeout=10).status_code == 200
        bad = requests.put(f"{server.url}/_ol2purview/faults", data="429:2", timeout=10)
        assert (bad.status_code, bad.json()) == (
            400,
            {
                "errorCode": "ATLAS-400-00-01A",
                "errorMessage": "invalid parameters: bad fault spec item '429:2': expected <status 400-599>:<p>, "
                "reset:<p>, latency:<ms>, retry-after:<s>, seed:<n> or down",
            },
        )


def test_latency_delays_atlas_calls(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    real = catalog_app.asyncio

    async def sleep(seconds: float) -> None:  # the server's own asyncio, noting each wait it asks for
        waits.append(seconds)
        await real.sleep(seconds)

    monkeypatch.setattr(catalog_app, "asyncio", SimpleNamespace(sleep=sleep))
    with CatalogServer(db_path, faults="latency:150ms") as server:
        assert requests.get(f"{server.atlas_url}/types/typedefs/headers", timeout=10).status_code == 200
        assert requests.get(f"{server.url}/_ol2purview/faults", timeout=10).status_code == 200
    assert [w for w in waits if w] == [0.15]  # one Atlas call, one delay of 150 ms; the control API is not delayed


def test_basic_auth_is_required_when_configured(catalog: CatalogServer) -> None:
    url = f"{catalog.atlas_url}/types/typedefs/headers"
    missing = requests.get(url, timeout=10)
    assert missing.status_code == 401 and missing.headers["WWW-Authenticate"] == 'Basic realm="ol2purview catalog"'
    assert requests.get(url, auth=(USER, "wrong"), timeout=10).status_code == 401
    assert requests.get(url, auth=AUTH, timeout=10).status_code == 200
    assert requests.get(f"{catalog.url}/", timeout=10).status_code == 401


def test_page_assets_are_served_without_any_cdn(db_path: Path) -> None:
    with CatalogServer(db_path) as server:
        html = requests.get(f"{server.url}/", timeout=10).text
        script = requests.get(f"{server.url}/static/app.js", timeout=10)
        style = requests.get(f"{server.url}/static/style.css", timeout=10)
    assert script.status_code == 200 and style.status_code == 200
    assert "http" not in html.replace('http-equiv', '') and "https://" not in script.text.replace(
        "http://www.w3.org/2000/svg", ""
    )
