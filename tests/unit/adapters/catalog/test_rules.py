"""The catalog rules that call the catalog (olparser/adapters/catalog/rules.py): the ACTIVE lookup against the
embedded catalog over loopback HTTP, its requests counted by route (one GET per type and URL-sized chunk), and the
RetryPolicy of each kind of call, its attempts and waits counted on a clock that only moves when code sleeps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import requests

from olparser.adapters.catalog import CatalogTarget, CatalogUnavailable, make_atlas_client, read_active, retry_for
from olparser.adapters.catalog.errors import CatalogHttpError
from olparser.catalog_rules import INTERACTIVE, REBUILD, REQUEST
from olparser.settings import Settings
from tests.support.catalog_server import calls_since_reset
from tests.support.fake_clock import FakeTime, MaxRandom
from tools.catalog import CatalogServer

PATH, TABLE = "azure_datalake_gen2_path", "hive_table"
LOOKUP = "GET /entity/bulk/uniqueAttribute/type/{type_name}"
# 800 characters each: two names fill one lookup's URL (SAFE_URL_LENGTH, 2,000), a third goes to the next lookup
PATHS = [(PATH, f"https://lake.dfs.core.windows.net/{n}/" + "a" * (800 - 36)) for n in range(5)]
ORDERS = (TABLE, "sales.orders@cluster")


@pytest.fixture
def catalog(tmp_path: Path):
    with CatalogServer(tmp_path / "catalog.db") as server:
        yield server


@pytest.fixture
def client(catalog: CatalogServer):
    client = make_atlas_client(CatalogTarget("atlas", catalog.atlas_url), timeout=10)
    yield client
    client.close()


def _create(catalog: CatalogServer, keys: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The entities, created; their guids by key."""
    body = {
        "entities": [
            {"typeName": t, "guid": f"-{n}", "attributes": {"qualifiedName": q, "name": q[-8:]}}
            for n, (t, q) in enumerate(keys, 1)
        ]
    }
    assigned = requests.post(f"{catalog.atlas_url}/entity/bulk", json=body, timeout=10).json()["guidAssignments"]
    return {key: assigned[f"-{n}"] for n, key in enumerate(keys, 1)}


def test_the_active_lookup_asks_once_per_type_and_url_sized_chunk(catalog, client):
    guids = _create(catalog, [*PATHS, ORDERS])
    requests.delete(f"{catalog.atlas_url}/entity/guid/{guids[PATHS[4]]}", timeout=10).raise_for_status()
    calls_since_reset(catalog)
    calls = [0]
    # a duplicate asked once, a deleted entity and one the catalog never had not found
    keys = [PATHS[0], PATHS[1], PATHS[0], PATHS[2], PATHS[3], PATHS[4], ORDERS, (TABLE, "sales.absent@cluster")]

    found = read_active(client, keys, retry_for(), calls, relationships=True)

    assert sorted(found) == sorted([*PATHS[:4], ORDERS])
    assert {key: entity["guid"] for key, entity in found.items()} == {key: guids[key] for key in found}
    assert "relationshipAttributes" in found[PATHS[0]]
    # paths: [0, 1], [2, 3], [4] (three lookups); tables: one
    assert calls == [4]
    assert calls_since_reset(catalog) == {LOOKUP: 4}


def test_the_active_lookup_costs_nothing_for_no_keys(catalog, client):
    calls_since_reset(catalog)
    calls = [0]
    assert read_active(client, [], retry_for(), calls) == {}
    assert calls == [0]
    assert calls_since_reset(catalog) == {}


class Answers:
    """A lookup client answering with what a catalog may send back: a deleted entity, another name, an active one."""

    endpoint_url = "https://contoso.purview.azure.com/datamap/api/atlas/v2"

    def __init__(self) -> None:
        self.asked: list[tuple[str, list[str], bool]] = []

    def _answer(self, type_name: str, names: list[str], relationships: bool) -> list[dict[str, Any]]:
        self.asked.append((type_name, names, relationships))
        return [
            {"typeName": type_name, "guid": "g-deleted", "status": "DELETED", "attributes": {"qualifiedName": "a"}},
            {"typeName": type_name, "guid": "g-other", "status": "ACTIVE", "attributes": {"qualifiedName": "other"}},
            {"typeName": type_name, "guid": "g-b", "attributes": {"qualifiedName": "b"}},  # no status: active
        ]

    def find_entities(self, type_name: str, qualified_names: list[str]) -> list[dict[str, Any]]:
        return self._answer(type_name, qualified_names, False)

    def find_entities_with_relationships(self, type_name: str, qualified_names: list[str]) -> list[dict[str, Any]]:
        return self._answer(type_name, qualified_names, True)


def test_the_active_lookup_keeps_only_active_entities_it_asked_for():
    client = Answers()
    calls = [0]
    found = read_active(client, [("t2", "b"), ("t1", "a"), ("t1", "b")], retry_for(), calls)
    assert {key: entity["guid"] for key, entity in found.items()} == {("t1", "b"): "g-b", ("t2", "b"): "g-b"}
    assert client.asked == [("t1", ["a", "b"], False), ("t2", ["b"], False)]  # types in the order of their names
    assert calls == [2]


def test_each_kind_of_call_has_its_attempts_and_waits():
    limits = {
        kind: (p.max_attempts, p.max_total_seconds, p.initial_wait, p.max_wait)
        for kind, p in ((kind, retry_for(kind)) for kind in (REQUEST, INTERACTIVE, REBUILD))
    }
    assert limits == {
        REQUEST: (6, 120.0, 0.5, 30.0),
        INTERACTIVE: (2, 120.0, 0.5, 30.0),
        REBUILD: (5, float("inf"), 0.0, 0.0),
    }
    configured = Settings(catalog_max_attempts=3)
    assert retry_for(REQUEST, configured).max_attempts == 3  # CATALOG_MAX_ATTEMPTS sets a request's attempts
    assert retry_for(INTERACTIVE, configured).max_attempts == 2  # and no other kind's
    assert retry_for(REQUEST, configured, max_attempts=4).max_attempts == 4  # a limit given explicitly wins


@pytest.mark.parametrize(
    ("kind", "attempts", "waits"), [(REQUEST, 6, [0.5, 1.0, 2.0, 4.0, 8.0]), (INTERACTIVE, 2, [0.5])]
)
def test_a_failing_request_is_tried_as_its_kind_says(kind, attempts, waits):
    time = FakeTime()
    policy = retry_for(kind, sleep=time.sleep, clock=time.clock, rng=MaxRandom())
    calls = [0]

    def unavailable() -> None:
        raise CatalogHttpError(503, None, "busy")

    with pytest.raises(CatalogUnavailable):
        policy.run("lookup", unavailable, calls)
    assert calls == [attempts]
    assert time.sleeps == waits
