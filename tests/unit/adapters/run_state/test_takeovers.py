"""The run-state stores' take-over registry (processes `ol2purview migrate accelerator --apply` takes over from
Microsoft's accelerator, until their successor is written) and what the ledger holds for the connector (`owned`,
`owned_of_types`: what `prune` may act on). Each contract test runs on both stores (SQLite; Table storage on Azurite);
the Table store's own cases, and its requests, after them."""

from __future__ import annotations

import sqlite3
import uuid
from dataclasses import replace

import pytest

from olparser.adapters.run_state.sqlite_store import SqliteRunStateStore
from olparser.runs.store import StoreStats, Takeover
from tests.support.stores import SHORT_TTL_SECONDS
from tests.support.table_requests import RequestCount

T0 = 1_700_000_000.0
HOST = "databricks://adb-1.2.azuredatabricks.net"
# the accelerator's processes: hash-named, under the notebook (or job task) that ran them
HASHED_A = ("databricks_process", f"{HOST}/notebooks/etl/orders/processes/5D1A3C0F9E8B7A6D")
HASHED_B = ("databricks_process", f"{HOST}/notebooks/etl/orders/processes/0B9C8D7E6F5A4B3C")
HASHED_C = ("databricks_process", f"{HOST}/jobs/42/tasks/load/processes/AA11BB22CC33DD44")
ORDERS_NOTEBOOK = f"{HOST}/notebooks/etl/orders"
LOAD_TASK = f"{HOST}/jobs/42/tasks/load"
# the placeholders the accelerator wrote for the datasets it could not resolve (it lower-cased their names)
RAW_ORDERS = ("purview_custom_connector_generic_entity_with_columns", "abfss://raw@lake.dfs.core.windows.net/orders")
SILVER_ORDERS = ("purview_custom_connector_generic_entity_with_columns", "abfss://silver@lake.dfs.core.windows.net/o")
MIGRATION = "migrate:accelerator"


def takeover(process, owner=ORDERS_NOTEBOOK, output=SILVER_ORDERS[1], keys=(RAW_ORDERS, SILVER_ORDERS), at=T0):
    return Takeover(process, owner, output, MIGRATION, tuple(keys), registered_at=at, checked_at=at)


# --- the take-over registry ----------------------------------------------------------------------------------------


def test_registering_a_takeover_again_takes_its_new_fields_and_keeps_its_times(store):
    store.register_takeovers([takeover(HASHED_A), takeover(HASHED_B, keys=[SILVER_ORDERS, RAW_ORDERS], at=T0 + 5)])
    store.checked_takeovers([HASHED_A], now=T0 + 7)
    again = Takeover(HASHED_A, LOAD_TASK, "abfss://gold@lake/o", "migrate:again", (RAW_ORDERS,), T0 + 9, T0 + 9)
    store.register_takeovers([again])
    store.register_takeovers([again])  # idempotent
    assert store.pending_takeovers() == [
        Takeover(HASHED_B, ORDERS_NOTEBOOK, SILVER_ORDERS[1], MIGRATION, (SILVER_ORDERS, RAW_ORDERS), T0 + 5, T0 + 5),
        Takeover(HASHED_A, LOAD_TASK, "abfss://gold@lake/o", "migrate:again", (RAW_ORDERS,), T0, T0 + 7),
    ]
    store.register_takeovers([])  # nothing to do
    assert len(store.pending_takeovers()) == 2


def test_pending_takeovers_come_least_recently_checked_first_then_by_process_at_most_limit(store):
    store.register_takeovers(
        [takeover(HASHED_C, owner=LOAD_TASK, at=T0 + 1), takeover(HASHED_B, at=T0 + 1), takeover(HASHED_A, at=T0 + 2)]
    )
    assert [entry.process for entry in store.pending_takeovers()] == [
        HASHED_C,
        HASHED_B,
        HASHED_A,
    ]  # (jobs/ < notebooks/)
    assert [entry.process for entry in store.pending_takeovers(2)] == [HASHED_C, HASHED_B]
    assert store.pending_takeovers(0) == []
    assert [entry.process for entry in store.pending_takeovers(owners=[ORDERS_NOTEBOOK])] == [HASHED_B, HASHED_A]
    assert [entry.process for entry in store.pending_takeovers(1, owners=iter([ORDERS_NOTEBOOK]))] == [HASHED_B]
    assert [entry.process for entry in store.pending_takeovers(owners=[LOAD_TASK, "x"])] == [HASHED_C]
    assert store.pending_takeovers(owners=[]) == []


def test_a_checked_takeover_goes_to_the_back_of_the_line(store):
    store.register_takeovers([takeover(HASHED_A), takeover(HASHED_B), takeover(HASHED_C, owner=LOAD_TASK)])
    store.checked_takeovers([HASHED_A, HASHED_B], now=T0 + 30)
    store.checked_takeovers([("databricks_process", "never registered")], now=T0 + 31)  # ignored
    assert [(entry.process, entry.checked_at) for entry in store.pending_takeovers()] == [
        (HASHED_C, T0),
        (HASHED_B, T0 + 30),  # (the same time: by process key)
        (HASHED_A, T0 + 30),
    ]
    store.checked_takeovers([HASHED_C], now=T0 + 40)
    store.checked_takeovers([HASHED_B], now=T0 + 41)
    assert [entry.process for entry in store.pending_takeovers()] == [HASHED_A, HASHED_C, HASHED_B]
    assert [entry.registered_at for entry in store.pending_takeovers()] == [T0, T0, T0]
    assert store.stats().takeovers == 3  # checking registers nothing


def test_forgotten_takeovers_are_gone(store):
    store.register_takeovers([takeover(HASHED_A), takeover(HASHED_B), takeover(HASHED_C, owner=LOAD_TASK)])
    store.forget_takeovers([HASHED_A, HASHED_C, ("databricks_process", "never registered")])
    assert store.pending_takeovers() == [takeover(HASHED_B)]
    store.forget_takeovers([HASHED_A])  # again: nothing to do
    store.checked_takeovers([HASHED_A], now=T0 + 1)  # a forgotten one is not checked back in
    assert store.pending_takeovers() == [takeover(HASHED_B)]
    assert store.stats().takeovers == 1
    store.register_takeovers([takeover(HASHED_A, at=T0 + 50)])  # registered anew: new times
    assert store.pending_takeovers() == [takeover(HASHED_B), takeover(HASHED_A, at=T0 + 50)]


def test_takeovers_outlive_run_purges_and_are_counted(store):
    store.claim(MIGRATION, [HASHED_A, RAW_ORDERS], now=T0)
    store.commit(MIGRATION, [HASHED_A, RAW_ORDERS], version=None, fingerprint="m1", now=T0)
    store.register_takeovers([takeover(HASHED_A), takeover(HASHED_B)])
    store.register_interim({("azure_datalake_gen2_path", "https://lake.dfs.core.windows.net/silver/o"): "[]"}, now=T0)
    # (`entities`: what each store tracks per entity differs, SQLite counts only tombstones: not compared here)
    assert replace(store.stats(), entities=0) == StoreStats(
        runs=1, due=0, entities=0, processes=0, interim=1, takeovers=2
    )
    assert store.purge_expired(now=T0 + 10 * SHORT_TTL_SECONDS) == 1  # the migration's run record
    assert store.pending_takeovers() == [takeover(HASHED_B), takeover(HASHED_A)]
    assert replace(store.stats(), entities=0) == StoreStats(
        runs=0, due=0, entities=0, processes=0, interim=1, takeovers=2
    )
    assert {**store.stats().to_json(), "trackedEntities": 0} == {
        "runs": 0,
        "dueRuns": 0,
        "trackedEntities": 0,
        "trackedProcesses": 0,
        "interimDatasets": 1,
        "takeovers": 2,
    }
    assert store.owned([HASHED_A, RAW_ORDERS]) == {HASHED_A, RAW_ORDERS}  # the users outlive the purge too


# --- what the ledger holds for the connector -----------------------------------------------------------------------

SPARK_APP = ("spark_application", f"{HOST}/applications/databricks_shell")
NOTEBOOK_PROCESS = ("databricks_process", f"{HOST}/notebooks/etl/orders/processes/ol-silver-orders")
SAME_NAME_PATH = ("azure_datalake_gen2_path", RAW_ORDERS[1])  # another type, the same qualifiedName


def test_owned_follows_claims_releases_tombstones_and_finished_deletes(store):
    assert store.owned([RAW_ORDERS, SPARK_APP]) == set()
    store.claim("run-a", [RAW_ORDERS, SPARK_APP], now=T0)  # claimed: it may be uploaded, the run holds it
    assert store.owned([RAW_ORDERS, SPARK_APP, SAME_NAME_PATH, NOTEBOOK_PROCESS]) == {RAW_ORDERS, SPARK_APP}
    store.commit("run-a", [RAW_ORDERS, SPARK_APP], version=None, fingerprint="a1", now=T0)
    store.claim("run-b", [SPARK_APP], now=T0)
    store.commit("run-b", [SPARK_APP], version=None, fingerprint="b1", now=T0)
    assert store.owned([RAW_ORDERS, SPARK_APP]) == {RAW_ORDERS, SPARK_APP}
    assert store.owned([]) == set()

    # run a lets both go: the placeholder has no user left (tombstoned, being deleted), run b still uses the app
    result = store.commit("run-a", [], version=None, fingerprint="a2", now=T0 + 1)
    assert result.orphans == (RAW_ORDERS,)
    assert store.owned([RAW_ORDERS, SPARK_APP]) == {SPARK_APP}
    # run c claims the placeholder while its deletion is in flight: held again (run c waits, then uploads it)
    assert store.claim("run-c", [RAW_ORDERS], now=T0 + 2) == frozenset({RAW_ORDERS})
    assert store.owned([RAW_ORDERS]) == {RAW_ORDERS}
    store.finish_deletes(result.orphans)  # the delete finished: run c's claim keeps it
    assert store.owned([RAW_ORDERS]) == {RAW_ORDERS}
    store.done("run-a", result.epoch)

    orphans = store.commit("run-c", [], version=None, fingerprint="c", now=T0 + 3).orphans
    assert orphans == (RAW_ORDERS,)
    store.finish_deletes(orphans)
    assert store.owned([RAW_ORDERS, SPARK_APP]) == {SPARK_APP}
    assert store.commit("run-b", [], version=None, fingerprint="b2", now=T0 + 4).orphans == (SPARK_APP,)
    assert store.owned([RAW_ORDERS, SPARK_APP]) == set()  # tombstoned, not yet deleted: no longer held


def test_owned_of_types_is_every_held_key_of_those_types_sorted(store):
    store.claim(MIGRATION, [HASHED_B, HASHED_A, RAW_ORDERS, SILVER_ORDERS], now=T0)
    store.commit(MIGRATION, [HASHED_B, HASHED_A, RAW_ORDERS, SILVER_ORDERS], version=None, fingerprint="m", now=T0)
    store.claim("run-a", [NOTEBOOK_PROCESS, SPARK_APP, SAME_NAME_PATH], now=T0)
    store.commit("run-a", [NOTEBOOK_PROCESS, SPARK_APP, SAME_NAME_PATH], version=None, fingerprint="a", now=T0)

    assert store.owned_of_types(["databricks_process"]) == [HASHED_B, HASHED_A, NOTEBOOK_PROCESS]
    assert store.owned_of_types(["spark_application", "azure_datalake_gen2_path", "spark_application"]) == [
        SAME_NAME_PATH,
        SPARK_APP,
    ]
    assert store.owned_of_types([RAW_ORDERS[0]]) == [RAW_ORDERS, SILVER_ORDERS]
    assert store.owned_of_types(["databricks_notebook"]) == []
    assert store.owned_of_types([]) == []

    # the migration lets its hashed process B and a placeholder go (their successor was written): no longer held
    store.claim(MIGRATION, [HASHED_A, SILVER_ORDERS], now=T0 + 1)
    result = store.commit(MIGRATION, [HASHED_A, SILVER_ORDERS], version=None, fingerprint="m2", now=T0 + 1)
    assert result.orphans == (HASHED_B, RAW_ORDERS)
    assert store.owned_of_types(["databricks_process", RAW_ORDERS[0]]) == [HASHED_A, NOTEBOOK_PROCESS, SILVER_ORDERS]
    store.finish_deletes(result.orphans)
    assert store.owned_of_types(["databricks_process", RAW_ORDERS[0]]) == [HASHED_A, NOTEBOOK_PROCESS, SILVER_ORDERS]


# --- SQLite --------------------------------------------------------------------------------------------------------


def test_sqlite_file_of_the_previous_release_gets_the_takeovers_table(tmp_path):
    """The previous release's file is this release's without the `takeovers` table (and its indexes): opening it adds
    them and keeps everything else."""
    path = tmp_path / "previous.sqlite3"
    with SqliteRunStateStore(path, ttl_seconds=SHORT_TTL_SECONDS) as store:
        store.claim("run-a", [RAW_ORDERS], now=T0)
        store.commit("run-a", [RAW_ORDERS], version=None, fingerprint="a", now=T0)
    previous = sqlite3.connect(path)
    previous.executescript("DROP INDEX takeovers_owner; DROP INDEX takeovers_checked_at; DROP TABLE takeovers;")
    previous.close()

    with SqliteRunStateStore(path, ttl_seconds=SHORT_TTL_SECONDS) as store:
        schema = {
            (kind, name, table)
            for kind, name, table in store._connection().execute(
                "SELECT type, name, tbl_name FROM sqlite_master WHERE tbl_name = 'takeovers'"
            )
        }
        assert schema == {
            ("table", "takeovers", "takeovers"),
            ("index", "takeovers_checked_at", "takeovers"),
            ("index", "takeovers_owner", "takeovers"),
        }
        assert store.pending_takeovers() == []
        store.register_takeovers([takeover(HASHED_A)])
        assert store.pending_takeovers() == [takeover(HASHED_A)]
        assert store.owned([RAW_ORDERS]) == {RAW_ORDERS}
        assert store.written_fingerprint("run-a", now=T0) == "a"


# --- Azure Table storage -------------------------------------------------------------------------------------------


@pytest.fixture
def counted_store(azurite):
    """A Table store on Azurite whose client counts its requests."""
    from azure.data.tables import TableServiceClient

    from olparser.adapters.run_state.table_store import TableRunStateStore

    counted = RequestCount()
    service = TableServiceClient.from_connection_string(azurite.connection_string, raw_request_hook=counted)
    table = service.create_table_if_not_exists(f"runs{uuid.uuid4().hex[:16]}")
    with TableRunStateStore(table, ttl_seconds=SHORT_TTL_SECONDS) as store:
        counted.take()
        yield store, counted


@pytest.mark.azurite
def test_table_takeover_requests(counted_store):
    """register: one request per new take-over, two per one registered before; pending: one query of the partition;
    checked and forget: one request per process."""
    store, counted = counted_store
    store.register_takeovers([takeover(HASHED_A), takeover(HASHED_B), takeover(HASHED_C, owner=LOAD_TASK)])
    assert counted.take() == 3
    store.register_takeovers([takeover(HASHED_A, keys=[RAW_ORDERS]), takeover(HASHED_B)])
    assert counted.take() == 4
    assert [entry.process for entry in store.pending_takeovers(1, owners=[ORDERS_NOTEBOOK])] == [HASHED_B]
    assert counted.take() == 1
    store.checked_takeovers([HASHED_A, HASHED_B, ("databricks_process", "never registered")], now=T0 + 1)
    assert counted.take() == 3
    store.forget_takeovers([HASHED_A, HASHED_C])
    assert counted.take() == 2
    assert store.pending_takeovers() == [
        Takeover(HASHED_B, ORDERS_NOTEBOOK, SILVER_ORDERS[1], MIGRATION, (RAW_ORDERS, SILVER_ORDERS), T0, T0 + 1)
    ]


@pytest.mark.azurite
def test_table_owned_requests(counted_store):
    """owned: a point read of each key's head; owned_of_types: one query per type over the heads."""
    store, counted = counted_store
    store.claim("run-a", [RAW_ORDERS, SPARK_APP, NOTEBOOK_PROCESS], now=T0)  # (looks for rows of an older version)
    counted.take()
    assert store.owned([RAW_ORDERS, SPARK_APP, SAME_NAME_PATH, HASHED_A]) == {RAW_ORDERS, SPARK_APP}
    assert counted.take() == 4
    assert store.owned_of_types(["databricks_process", "spark_application", "databricks_notebook"]) == [
        NOTEBOOK_PROCESS,
        SPARK_APP,
    ]
    assert counted.take() == 3


@pytest.mark.azurite
def test_table_a_takeover_forgotten_while_registered_again_is_registered_anew(counted_store):
    """Another instance forgets the take-over between this registration's refused create and its merge: the merge
    finds no row, and the registration creates it again, with this registration's times."""
    store, _ = counted_store
    store.register_takeovers([takeover(HASHED_A)])
    merge = store.table.update_entity
    forgotten = []

    def forget_first(*args, **kwargs):
        if not forgotten:
            forgotten.append(True)
            store.forget_takeovers([HASHED_A])
        return merge(*args, **kwargs)

    store.table.update_entity = forget_first
    store.register_takeovers([takeover(HASHED_A, owner=LOAD_TASK, at=T0 + 9)])
    assert forgotten == [True]
    assert store.pending_takeovers() == [takeover(HASHED_A, owner=LOAD_TASK, at=T0 + 9)]


@pytest.mark.azurite
def test_table_refuses_a_takeover_whose_keys_do_not_fit_in_a_property(counted_store):
    store, counted = counted_store
    many = [(RAW_ORDERS[0], f"abfss://raw@lake.dfs.core.windows.net/part_{i:04d}") for i in range(500)]
    with pytest.raises(
        ValueError,
        match=r"take-over of databricks_process '.*5D1A3C0F9E8B7A6D': its 500 keys are "
        r"\d+ characters of JSON, over the 32000 a Table storage property holds",
    ):
        store.register_takeovers([takeover(HASHED_A, keys=many)])
    assert counted.take() == 0
    assert store.pending_takeovers() == []


@pytest.mark.azurite
def test_table_entities_counted_by_the_previous_version_are_held_until_a_head_says_otherwise(counted_store):
    """Rows `ref-xx` of the version that only counted users: an entity with users there and no head row yet is held
    (those users never release); once a head row exists, it says (its `legacy` count kept what the row counted)."""
    from azure.data.tables import TableEntity

    store, counted = counted_store

    def legacy_row(key, users):
        store.table.create_entity(
            TableEntity(store._ref_keys(key), type_name=key[0], qualified_name=key[1], users=users)
        )

    legacy_row(RAW_ORDERS, 2)
    legacy_row(SILVER_ORDERS, 0)
    legacy_row(SPARK_APP, 1)
    counted.take()
    assert store.owned([RAW_ORDERS, SILVER_ORDERS, SPARK_APP]) == {RAW_ORDERS, SPARK_APP}
    assert counted.take() == 7  # a head each, a `ref-` row each, and the one look for such rows
    assert store.owned_of_types([RAW_ORDERS[0], SPARK_APP[0]]) == [RAW_ORDERS, SPARK_APP]
    assert counted.take() == 4  # the heads and the `ref-` rows, per type

    # a head now: the run's user and the one the previous version counted, which never releases
    store.claim("run-a", [SPARK_APP], now=T0)
    assert store.commit("run-a", [], version=None, fingerprint="a1", now=T0).orphans == ()
    assert store.owned([SPARK_APP]) == {SPARK_APP}
    # a head that counted none from its row (claimed before the row was there), released: the head says
    store.claim("run-b", [SAME_NAME_PATH], now=T0)
    assert store.commit("run-b", [], version=None, fingerprint="b1", now=T0).orphans == (SAME_NAME_PATH,)
    legacy_row(SAME_NAME_PATH, 3)  # an instance of the previous version, still running during the upgrade
    assert store.owned([SAME_NAME_PATH]) == set()
    assert store.owned_of_types([RAW_ORDERS[0], SPARK_APP[0], SAME_NAME_PATH[0]]) == [RAW_ORDERS, SPARK_APP]
