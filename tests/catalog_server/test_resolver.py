"""The resolver against the embedded catalog over loopback (real HTTP, the connector's own client): which candidate a
dataset links to, what it leaves interim, and exactly how many catalog calls each answer costs, first and from its
caches (positive, negative, their lifetimes, searches)."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from olparser.adapters.catalog import CatalogTarget, RetryPolicy, load_typedefs, make_atlas_client, register_typedefs
from olparser.adapters.catalog.existence import ExistenceCache
from olparser.adapters.catalog.resolver import (
    RULES_RETRY_SECONDS,
    TASK_MATCH_SECONDS,
    ResourceSetRuleSource,
    ScannedAssetResolver,
)
from olparser.resolution.model import Identity, NamedDataset, UnityTable
from olparser.resolution.tasks import TaskLookup, TaskMatch
from olparser.settings import TYPEDEFS_DIR
from tests.support.catalog_server import calls_since_reset
from tools.catalog import CatalogServer

LAKE = "https://acct.dfs.core.windows.net/silver"
PATH, SET = "azure_datalake_gen2_path", "azure_datalake_gen2_resource_set"
LOOKUP = "GET /entity/bulk/uniqueAttribute/type/{type_name}"
SEARCH = "POST /search/query"
RULES = "GET /resourceSetRuleConfigs/defaultResourceSetRuleConfig"
POSITIVE, NEGATIVE = 600.0, 60.0


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def catalog(open_catalog: CatalogServer) -> CatalogServer:
    return open_catalog


def register(catalog: CatalogServer, *entities: tuple[str, str, dict[str, Any]]) -> None:
    """Entities as a scanner would register them, through the Atlas API."""
    body = {
        "entities": [
            {"typeName": t, "guid": f"-{i}", "attributes": {"qualifiedName": q, "name": q.split("/")[-1], **attributes}}
            for i, (t, q, attributes) in enumerate(entities, 1)
        ]
    }
    requests.post(f"{catalog.atlas_url}/entity/bulk", json=body, timeout=10).raise_for_status()


def make_resolver(catalog: CatalogServer, clock: Clock, owned: set | None = None, **options: Any):
    client = make_atlas_client(CatalogTarget("atlas", catalog.atlas_url), timeout=10)
    cache = ExistenceCache(POSITIVE, absent_ttl_seconds=NEGATIVE, clock=clock)
    retry = RetryPolicy(max_attempts=1)
    return ScannedAssetResolver(
        client,
        cache=cache,
        retry=retry,
        owned=lambda keys: set(keys) & (owned or set()),
        clock=clock,
        rules=ResourceSetRuleSource(client, retry, clock=clock),
        **options,
    )


def folder(name: str) -> NamedDataset:
    identity = Identity(PATH, f"{LAKE}/{name}", "abfss://silver@acct.dfs.core.windows.net", name, True)
    return NamedDataset(identity.key, (identity,))


def test_a_folder_links_to_its_resource_set_at_the_cost_of_one_lookup_per_type_then_nothing(catalog):
    register(catalog, (SET, f"{LAKE}/orders/{{SparkPartitions}}", {"partitionCount": 4}))
    calls_since_reset(catalog)
    resolver = make_resolver(catalog, Clock())

    resolution = resolver.resolve([folder("orders")])
    assert resolution.links == {(PATH, f"{LAKE}/orders"): (SET, f"{LAKE}/orders/{{SparkPartitions}}")}
    assert (resolution.interim, resolution.taken_over, resolution.calls) == ({}, frozenset(), 3)
    assert calls_since_reset(catalog) == {
        RULES: 1,
        LOOKUP: 2,
    }  # the account's rules once; the path and the resource set types

    assert resolver.resolve([folder("orders")]).calls == 0
    assert calls_since_reset(catalog) == {}


def test_nothing_scanned_leaves_the_dataset_interim_and_the_negative_answers_last_their_own_time(catalog):
    clock = Clock()
    resolver = make_resolver(catalog, clock)
    first = resolver.resolve([folder("orders")])
    assert first.links == {}
    assert [c.qualified_name for c in first.interim[(PATH, f"{LAKE}/orders")]] == [
        f"{LAKE}/orders",
        f"{LAKE}/orders/{{SparkPartitions}}",
        f"{LAKE}/orders[/k={{k}}]+/{{SparkPartitions}}",
    ]
    assert calls_since_reset(catalog) == {RULES: 1, LOOKUP: 2, SEARCH: 1}  # the partitioned shape needs a search

    clock.now += NEGATIVE - 1
    assert resolver.resolve([folder("orders")]).calls == 0
    clock.now += 1
    assert resolver.resolve([folder("orders")]).calls == 3
    assert calls_since_reset(catalog) == {LOOKUP: 2, SEARCH: 1}


def test_a_partitioned_output_named_by_its_root_is_found_by_the_search(catalog):
    register(
        catalog,
        (SET, f"{LAKE}/sales/Year={{Year}}/Month={{Month}}/{{SparkPartitions}}", {}),
        (SET, f"{LAKE}/sales_eu/Year={{Year}}/{{SparkPartitions}}", {}),
    )
    clock = Clock()
    resolver = make_resolver(catalog, clock)
    calls_since_reset(catalog)
    resolution = resolver.resolve([folder("sales")])
    assert resolution.links == {
        (PATH, f"{LAKE}/sales"): (SET, f"{LAKE}/sales/Year={{Year}}/Month={{Month}}/{{SparkPartitions}}")
    }
    assert calls_since_reset(catalog) == {RULES: 1, LOOKUP: 2, SEARCH: 1}
    assert resolver.resolve([folder("sales")]).calls == 0
    clock.now += NEGATIVE  # the exact names ranked above it are looked up again; the search answer is still known
    assert resolver.resolve([folder("sales")]).calls == 2
    assert calls_since_reset(catalog) == {LOOKUP: 2}


def test_the_rule_identity_wins_when_a_scanner_registered_it_and_no_search_is_made(catalog):
    register(catalog, (PATH, f"{LAKE}/orders", {"isFile": False}))
    resolver = make_resolver(catalog, Clock())
    calls_since_reset(catalog)
    resolution = resolver.resolve([folder("orders")])
    assert resolution.links == {(PATH, f"{LAKE}/orders"): (PATH, f"{LAKE}/orders")}
    assert calls_since_reset(catalog) == {RULES: 1, LOOKUP: 2}


def test_an_entity_the_connector_created_is_not_taken_for_a_scanned_one(catalog):
    register(catalog, (PATH, f"{LAKE}/orders", {}))  # created by the connector: qualifiedName and name only
    resolver = make_resolver(catalog, Clock(), owned={(PATH, f"{LAKE}/orders")})
    resolution = resolver.resolve([folder("orders")])
    assert resolution.links == {}
    assert list(resolution.interim) == [(PATH, f"{LAKE}/orders")]


def test_an_entity_the_connector_created_that_a_scan_filled_in_since_is_the_scanners(catalog):
    register(catalog, (PATH, f"{LAKE}/orders", {"size": 2048, "path": "silver/orders"}))
    resolver = make_resolver(catalog, Clock(), owned={(PATH, f"{LAKE}/orders")})
    resolution = resolver.resolve([folder("orders")])
    assert resolution.links == {(PATH, f"{LAKE}/orders"): (PATH, f"{LAKE}/orders")}
    assert resolution.taken_over == {(PATH, f"{LAKE}/orders")}


def test_fifty_folders_cost_one_lookup_per_type_and_one_search_each_that_is_not_found(catalog):
    register(catalog, *((SET, f"{LAKE}/t{i:02d}/{{SparkPartitions}}", {}) for i in range(25)))
    resolver = make_resolver(catalog, Clock(), max_url_length=100_000)
    calls_since_reset(catalog)
    resolution = resolver.resolve([folder(f"t{i:02d}") for i in range(50)])
    assert len(resolution.links) == 25 and len(resolution.interim) == 25
    assert calls_since_reset(catalog) == {RULES: 1, LOOKUP: 2, SEARCH: 25}


def test_lookups_are_split_to_keep_urls_short(catalog):
    resolver = make_resolver(catalog, Clock())  # URLs of at most 2,000 characters
    calls_since_reset(catalog)
    resolver.resolve([folder(f"table_{i:03d}") for i in range(50)])
    assert (
        calls_since_reset(catalog)[LOOKUP] == 7
    )  # 50 paths in 3 requests (21, 21, 8), their resource sets in 4 (16, 16, 16, 2)


UNITY = Identity(
    "databricks_unity_catalog_table",
    "unity-catalog://main.sales.orders",
    "unity-catalog",
    "main.sales.orders",
    False,
    UnityTable("main", "sales", "orders"),
)
UC_TABLE = "databricks://0a1b2c3d-0000-4000-8000-00000000abcd/catalogs/main/schemas/sales/tables/orders"


def test_a_unity_catalog_table_of_an_unknown_metastore_is_found_by_a_search_and_checked_exactly(catalog):
    register(
        catalog,
        ("databricks_table", UC_TABLE, {"catalogName": "main", "schemaName": "sales"}),
        (
            "databricks_table",
            UC_TABLE.replace("/orders", "/orders_old"),
            {"catalogName": "main", "schemaName": "sales"},
        ),
    )
    resolver = make_resolver(catalog, Clock())
    calls_since_reset(catalog)
    resolution = resolver.resolve([NamedDataset(UNITY.key, (UNITY,))])
    assert resolution.links == {UNITY.key: ("databricks_table", UC_TABLE)}
    assert calls_since_reset(catalog) == {RULES: 1, SEARCH: 1}  # no exact name to look up


def test_two_metastores_with_the_same_table_are_ambiguous_and_nothing_is_linked(catalog):
    attributes = {"catalogName": "main", "schemaName": "sales"}
    register(
        catalog,
        ("databricks_table", UC_TABLE, attributes),
        ("databricks_table", UC_TABLE.replace("0a1b2c3d", "ffffffff"), attributes),
    )
    resolver = make_resolver(catalog, Clock())
    resolution = resolver.resolve([NamedDataset(UNITY.key, (UNITY,))])
    assert (resolution.links, list(resolution.interim)) == ({}, [UNITY.key])


def test_fresh_resolution_looks_again_where_the_answer_was_no_but_trusts_the_yes(catalog):
    clock = Clock()
    resolver = make_resolver(catalog, clock)
    resolver.resolve([folder("orders"), folder("customers")])
    register(catalog, (SET, f"{LAKE}/orders/{{SparkPartitions}}", {}))  # a scan since
    calls_since_reset(catalog)
    assert resolver.resolve([folder("orders")]).links == {}  # still the negative answer
    fresh = resolver.resolve([folder("orders")], fresh=True)
    assert fresh.links == {(PATH, f"{LAKE}/orders"): (SET, f"{LAKE}/orders/{{SparkPartitions}}")}
    assert calls_since_reset(catalog) == {LOOKUP: 2}  # found before the search was needed
    assert resolver.resolve([folder("orders")]).calls == 0  # the found answer serves the next run


def test_the_accounts_own_rules_are_used(catalog):
    config = requests.get(
        f"{catalog.url}/resourceSetRuleConfigs/defaultResourceSetRuleConfig",
        params={"api-version": "2019-11-01-preview"},
        timeout=10,
    ).json()
    config["pathPatternConfig"]["enableDefaultPatterns"] = False  # no replacers: Spark's files are not grouped
    requests.put(
        f"{catalog.url}/resourceSetRuleConfigs/defaultResourceSetRuleConfig",
        params={"api-version": "2019-11-01-preview"},
        json=config,
        timeout=10,
    ).raise_for_status()
    resolver = make_resolver(catalog, Clock())
    assert [c.qualified_name for c in resolver.candidates(folder("orders"))] == [
        f"{LAKE}/orders",
        f"{LAKE}/orders[/k={{k}}]+/{{SparkPartitions}}",
    ]


class RefusingClient:
    endpoint_url = "http://127.0.0.1:9/api/atlas/v2"

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.asked = 0

    def resource_set_rule_config(self) -> dict:
        self.asked += 1
        raise self.error


def test_rules_fall_back_to_the_defaults_for_good_on_403_and_for_a_while_on_an_outage():
    from olparser.adapters.catalog.errors import CatalogHttpError

    clock = Clock()
    refused = RefusingClient(CatalogHttpError(403, None, "Forbidden"))
    source = ResourceSetRuleSource(refused, RetryPolicy(max_attempts=1), clock=clock)
    assert source.rules([0]) == source.rules([0])
    clock.now += 10 * RULES_RETRY_SECONDS
    source.rules([0])
    assert refused.asked == 1

    down = RefusingClient(CatalogHttpError(503, None, "Service Unavailable"))
    source = ResourceSetRuleSource(down, RetryPolicy(max_attempts=1, sleep=lambda s: None), clock=clock)
    source.rules([0])
    clock.now += RULES_RETRY_SECONDS - 1
    source.rules([0])
    assert down.asked == 1
    clock.now += 1
    source.rules([0])
    assert down.asked == 2


def test_a_run_makes_at_most_its_share_of_searches_and_later_runs_ask_the_rest(catalog):
    register(catalog, *((SET, f"{LAKE}/t{i:02d}/{{SparkPartitions}}", {}) for i in range(25)))
    resolver = make_resolver(catalog, Clock(), max_url_length=100_000, max_searches=10)
    folders = [folder(f"t{i:02d}") for i in range(50)]
    calls_since_reset(catalog)
    first = resolver.resolve(folders)
    assert (len(first.links), len(first.interim)) == (25, 25)  # 10 searched, 15 deferred: interim for now
    assert calls_since_reset(catalog) == {RULES: 1, LOOKUP: 2, SEARCH: 10}
    assert [resolver.resolve(folders).calls for _ in range(3)] == [10, 5, 0]
    assert resolver.resolve(folders, bounded=False).calls == 0
    fresh = make_resolver(catalog, Clock(), max_url_length=100_000, max_searches=10)
    assert fresh.resolve(folders, bounded=False).calls == 1 + 2 + 25  # a backfill: every search at once


WORKSPACE = "databricks://adb-1.2.azuredatabricks.net"
JOB = f"{WORKSPACE}/jobs/881"
OWN_TASK = f"{JOB}/tasks/Shared/etl/ingest"
TASK_LOOKUP = TaskLookup(JOB, OWN_TASK, "databricks_notebook_task", "notebookPath", "/Shared/etl/ingest")
JOB_LOOKUP = "GET /entity/bulk/uniqueAttribute/type/{type_name}"
BY_GUID = "GET /entity/bulk"


def seed_job(catalog: CatalogServer, *tasks: tuple[str, str]) -> None:
    """The accelerator's job 881 and its tasks (task key, notebook path), as it wrote them."""
    client = make_atlas_client(CatalogTarget("atlas", catalog.atlas_url), timeout=10)
    register_typedefs(client, load_typedefs(TYPEDEFS_DIR))  # Purview's model, where the catalog lacks it
    job = {"typeName": "databricks_job", "guid": "-1", "attributes": {"qualifiedName": JOB, "name": "Daily sales"}}
    entities = [job] + [
        {
            "typeName": "databricks_notebook_task",
            "guid": f"-{i}",
            "attributes": {"qualifiedName": f"{JOB}/tasks/{key}", "name": key, "notebookPath": path, "jobId": 881},
            "relationshipAttributes": {"job": {"guid": "-1", "relationshipType": "databricks_job_job_tasks"}},
        }
        for i, (key, path) in enumerate(tasks, 2)
    ]
    requests.post(f"{catalog.atlas_url}/entity/bulk", json={"entities": entities}, timeout=10).raise_for_status()
    client.close()


def test_a_job_run_finds_the_accelerators_task_in_two_calls_then_none(catalog):
    seed_job(catalog, ("load_customers", "/Shared/etl/customers"), ("ingest_orders", "/Shared/etl/ingest"))
    resolver = make_resolver(catalog, Clock())
    calls_since_reset(catalog)

    first = resolver.resolve([], tasks=[TASK_LOOKUP])
    assert first.tasks == {
        OWN_TASK: TaskMatch("databricks_notebook_task", f"{JOB}/tasks/ingest_orders", "ingest_orders", "Daily sales")
    }
    assert (first.calls, calls_since_reset(catalog)) == (2, {JOB_LOOKUP: 1, BY_GUID: 1})

    again = resolver.resolve([], tasks=[TASK_LOOKUP])
    assert (again.tasks, again.calls, calls_since_reset(catalog)) == (first.tasks, 0, {})


def test_a_job_holding_the_builders_own_task_costs_one_call_a_day(catalog):
    seed_job(catalog, ("Shared/etl/ingest", "/Shared/etl/ingest"))
    clock = Clock()
    resolver = make_resolver(catalog, clock)
    calls_since_reset(catalog)
    found = resolver.resolve([], tasks=[TASK_LOOKUP])
    assert found.tasks[OWN_TASK].qualified_name == OWN_TASK
    assert (found.calls, calls_since_reset(catalog)) == (1, {JOB_LOOKUP: 1})
    clock.now += POSITIVE * 10  # a task found stays the task: not asked again with the existence answers
    assert resolver.resolve([], tasks=[TASK_LOOKUP]).calls == 0
    clock.now += TASK_MATCH_SECONDS
    assert resolver.resolve([], tasks=[TASK_LOOKUP]).calls == 1


def test_a_job_the_catalog_lacks_is_asked_once_per_negative_lifetime(catalog):
    clock = Clock()
    resolver = make_resolver(catalog, clock)
    calls_since_reset(catalog)
    assert resolver.resolve([], tasks=[TASK_LOOKUP]).tasks == {}
    assert calls_since_reset(catalog) == {JOB_LOOKUP: 1}
    clock.now += NEGATIVE - 1
    assert resolver.resolve([], tasks=[TASK_LOOKUP]).calls == 0
    clock.now += 2
    assert resolver.resolve([], tasks=[TASK_LOOKUP]).calls == 1


# naming spec (OpenLineage website/docs/spec/naming.md, commit 8f02abfb) L34: `oracle://{host}:{port}` +
# `{serviceName}.{schema}.{table}`; the connector writes it as its placeholder and searches for Oracle's scan
ORACLE = Identity(
    "openlineage_dataset",
    "oracle://ora.example.com:1521/ORCL.SALES.ORDERS",
    "oracle://ora.example.com:1521",
    "ORCL.SALES.ORDERS",
    False,
)
ORACLE_TABLE = ("oracle_table", "oracle://ora.example.com:1521/ORCL/SALES/ORDERS")


def oracle_dataset() -> NamedDataset:
    return NamedDataset(ORACLE.key, (ORACLE,))


def test_a_store_found_by_search_costs_one_query_then_nothing_while_the_answer_lasts(catalog):
    from tests.support.searched_stores import register_assets, register_store_types

    register_store_types(catalog.atlas_url)
    register_assets(catalog.atlas_url, ORACLE_TABLE, ("oracle_table", f"{ORACLE_TABLE[1]}_OLD"))
    clock = Clock()
    resolver = make_resolver(catalog, clock)
    calls_since_reset(catalog)
    first = resolver.resolve([oracle_dataset()])
    assert (first.links, first.calls) == ({ORACLE.key: ORACLE_TABLE}, 2)
    assert calls_since_reset(catalog) == {RULES: 1, SEARCH: 1}  # no exact name to look up: one discovery query
    for _ in range(3):  # steady state: every later run is answered from the cache
        assert resolver.resolve([oracle_dataset()]).calls == 0
    clock.now += POSITIVE
    assert resolver.resolve([oracle_dataset()]).calls == 1  # the found answer expired: asked once again
    assert calls_since_reset(catalog) == {SEARCH: 1}


def test_a_store_found_by_search_with_two_or_no_assets_of_its_parts_stays_interim_then_relinks(catalog):
    from tests.support.searched_stores import register_assets, register_store_types

    register_store_types(catalog.atlas_url)
    clock = Clock()
    resolver = make_resolver(catalog, clock)
    calls_since_reset(catalog)
    none = resolver.resolve([oracle_dataset()])
    assert (none.links, list(none.interim), none.calls) == ({}, [ORACLE.key], 2)
    assert resolver.resolve([oracle_dataset()]).calls == 0  # "nothing" is believed for NEGATIVE seconds
    register_assets(catalog.atlas_url, ORACLE_TABLE, ("oracle_table", "oracle://ora.example.com/orcl.sales.orders"))
    clock.now += NEGATIVE
    two = resolver.resolve([oracle_dataset()])
    assert (two.links, list(two.interim), two.calls) == ({}, [ORACLE.key], 1)  # ambiguous: nothing linked
    requests.delete(
        f"{catalog.atlas_url}/entity/uniqueAttribute/type/oracle_table",
        params={"attr:qualifiedName": "oracle://ora.example.com/orcl.sales.orders"},
        timeout=10,
    ).raise_for_status()
    calls_since_reset(catalog)
    # the re-link timer's resolution (fresh: negative answers not believed) finds the one left, with one query
    relinked = resolver.resolve_candidates(two.interim, fresh=True)
    assert relinked.links == {ORACLE.key: ORACLE_TABLE}
    assert calls_since_reset(catalog) == {SEARCH: 1}


def test_searches_for_stores_count_against_the_runs_budget(catalog):
    from tests.support.searched_stores import register_store_types

    register_store_types(catalog.atlas_url)
    tables = []
    for i in range(5):
        identity = Identity(
            "openlineage_dataset",
            f"oracle://ora.example.com:1521/ORCL.SALES.T{i}",
            "oracle://ora.example.com:1521",
            f"ORCL.SALES.T{i}",
            False,
        )
        tables.append(NamedDataset(identity.key, (identity,)))
    resolver = make_resolver(catalog, Clock(), max_searches=2)
    calls_since_reset(catalog)
    assert resolver.resolve(tables).calls == 1 + 2  # the rules, then two searches; three deferred to later runs
    assert resolver.resolve(tables).calls == 2  # the next run asks two of the rest (the first two are known)
    assert calls_since_reset(catalog) == {RULES: 1, SEARCH: 4}
