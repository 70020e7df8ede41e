"""Temporary datasets in every run-state store (SQLite file, Azure Table storage on Azurite): what a writer passes on,
who reads it, bounded and expiring (olparser/runs/store.py `record_temporary`, `temporary_sources`)."""

from __future__ import annotations

from hashlib import sha256

from olparser.runs.codec import passed_on_from_bytes, passed_on_to_bytes
from olparser.runs.model import DatasetFacts
from olparser.runs.store import MAX_TEMPORARY_ROWS
from tests.support.stores import same_store_elsewhere
from tests.support.temporary_runs import etl_chain

T0 = 1_700_000_000.0
# website/docs/spec/examples.md (OpenLineage repo) line 255: the temporary output of the "Load task"
TEMP = ("inmemory://", "Dataset3.Load task")
APP = "0190a8c1-0000-7000-8000-00000000a000"  # the parent run (ParentRunFacet.json line 8: run.runId)
ORDERS = DatasetFacts(
    "abfss://lake@acct.dfs.core.windows.net",
    "/raw/orders",
    {
        "symlinks": {"identifiers": [{"namespace": "hive://h", "name": "db.orders", "type": "TABLE"}]},
        "columnLineage": {"fields": {}},
    },
)


def test_a_reader_finds_what_the_writer_passes_on_and_the_writer_finds_the_reader(store):
    assert store.temporary_sources(APP, [TEMP], "reader", now=T0) == {}
    readers = store.record_temporary(APP, "writer", {TEMP: passed_on_to_bytes((ORDERS,))}, now=T0 + 1)
    assert readers == {"reader"}
    found = store.temporary_sources(APP, [TEMP], "reader", now=T0 + 2)
    assert list(found) == [TEMP]
    [passed] = found[TEMP]
    # the facets naming needs are kept, column lineage is not
    assert passed_on_from_bytes(passed) == (
        DatasetFacts(ORDERS.namespace, ORDERS.name, {"symlinks": ORDERS.facets["symlinks"]}),
    )


def test_scopes_and_names_are_apart_and_a_writer_is_not_its_own_reader(store):
    store.record_temporary(APP, "writer", {TEMP: passed_on_to_bytes((ORDERS,))}, now=T0)
    assert store.temporary_sources("another-application", [TEMP], "reader", now=T0) == {}
    assert store.temporary_sources(APP, [("inmemory://", "other")], "reader", now=T0) == {}
    assert store.temporary_sources(APP, [TEMP], "writer", now=T0) == {}
    assert store.record_temporary(APP, "writer", {TEMP: passed_on_to_bytes((ORDERS,))}, now=T0) == frozenset()


def test_a_writer_written_again_replaces_its_entry_and_every_writer_counts(store):
    other = DatasetFacts("abfss://lake@acct.dfs.core.windows.net", "/raw/customers")
    store.record_temporary(APP, "w1", {TEMP: passed_on_to_bytes(())}, now=T0)
    store.record_temporary(APP, "w1", {TEMP: passed_on_to_bytes((ORDERS,))}, now=T0 + 1)
    store.record_temporary(APP, "w2", {TEMP: passed_on_to_bytes((other,))}, now=T0 + 2)
    found = store.temporary_sources(APP, [TEMP], "reader", now=T0 + 3)
    assert sorted(d.name for data in found[TEMP] for d in passed_on_from_bytes(data)) == [
        "/raw/customers",
        "/raw/orders",
    ]


def test_entries_expire_after_the_setting_and_are_purged(store):
    store.temporary_seconds = 100
    store.record_temporary(APP, "writer", {TEMP: passed_on_to_bytes((ORDERS,))}, now=T0)
    assert store.temporary_sources(APP, [TEMP], "reader", now=T0 + 99) != {}
    assert store.temporary_sources(APP, [TEMP], "reader", now=T0 + 101) == {}
    store.purge_expired(now=T0 + 150)  # the writer's row is gone; the reader's (T0 + 101) is not yet
    assert store.record_temporary(APP, "w2", {TEMP: passed_on_to_bytes(())}, now=T0 + 150) == {"reader"}
    store.purge_expired(now=T0 + 260)
    assert store.record_temporary(APP, "w3", {TEMP: passed_on_to_bytes(())}, now=T0 + 260) == frozenset()
    assert store.temporary_sources(APP, [TEMP], "reader", now=T0 + 260) != {}  # w3, just written


def test_readers_answered_are_bounded(store):
    for index in range(MAX_TEMPORARY_ROWS + 5):
        store.temporary_sources(APP, [TEMP], f"reader-{index:03d}", now=T0)
    assert len(store.record_temporary(APP, "writer", {TEMP: passed_on_to_bytes(())}, now=T0)) == MAX_TEMPORARY_ROWS


def test_another_worker_sees_the_same_entries(store):
    elsewhere = same_store_elsewhere(store)
    try:
        elsewhere.record_temporary(APP, "writer", {TEMP: passed_on_to_bytes((ORDERS,))}, now=T0)
        assert list(store.temporary_sources(APP, [TEMP], "reader", now=T0)) == [TEMP]
    finally:
        elsewhere.close()


def test_a_large_list_is_kept_by_names_within_one_table_property():
    many = tuple(
        DatasetFacts(
            "abfss://lake@acct.dfs.core.windows.net",
            f"/raw/{index:04d}",
            {
                "schema": {
                    "fields": [
                        {"name": sha256(f"{index}.{column}".encode()).hexdigest(), "type": "string"}
                        for column in range(60)
                    ]
                }
            },
        )
        for index in range(300)
    )
    data = passed_on_to_bytes(many)
    assert len(data) <= 48_000
    assert passed_on_from_bytes(data) == tuple(DatasetFacts(d.namespace, d.name) for d in many)


def test_a_writer_gives_its_readers_a_new_version_so_that_a_plan_built_before_is_stale(store):
    save_start = etl_chain()[4]  # the save task's START: it reads the transform task's temporary output
    reader = save_start["run"]["runId"]
    _, version = store.merge_versioned(save_start, now=T0)
    name = ("inmemory://", "orders.Transform task")
    store.temporary_sources(APP, [name], reader, now=T0)
    assert store.record_temporary(APP, "writer", {name: passed_on_to_bytes((ORDERS,))}, now=T0) == {reader}
    snapshot, newer = store.get_versioned(reader, now=T0)
    assert newer == version + 1 and snapshot == store.merge_versioned(save_start, now=T0)[0]
    assert store.commit(reader, [], version=version, fingerprint="f", now=T0).stale
