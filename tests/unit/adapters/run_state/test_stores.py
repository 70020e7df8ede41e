"""One contract for every run-state store (SQLite file, Azure Table storage on Azurite), and each store's own limits."""

from __future__ import annotations

import copy
import json
import multiprocessing
import os
import sqlite3
import threading
from pathlib import Path

import pytest

from olparser.adapters.run_state import open_run_state_store
from olparser.adapters.run_state.sqlite_store import SqliteRunStateStore
from olparser.runs.merge import merge_events
from olparser.runs.store import TOMBSTONE_SECONDS, CommitResult, InterimDataset, RunSession, StoreStats
from olparser.settings import Settings
from tests.support.shared_events import events_of_run, load_sequence
from tests.support.stores import SHORT_TTL_SECONDS, same_store_elsewhere

CLL_CTAS_RUN = "019127df-0850-72bc-b214-b255290588a6"
T0 = 1_700_000_000.0


def merged(store, event: dict, **options):
    """The run's state after merging `event` (what merge_versioned returns, without the version)."""
    return store.merge_versioned(event, **options)[0]


def got(store, run_id: str, **options):
    return store.get_versioned(run_id, **options)[0]


def record_writers(store, names: list[str], run_time: float, run_key: str = "") -> None:
    """Run `run_key` of `run_time` wrote these processes (a commit of a plan that owns nothing)."""
    store.commit(run_key, [], version=None, fingerprint="", process_names=names, run_time=run_time, now=T0)


def cll_events() -> list[dict]:
    return events_of_run(load_sequence("compat-tests__CLL"), CLL_CTAS_RUN)


def numbered_events(run_id: str, count: int) -> list[dict]:
    """`count` RUNNING events of one run, each writing its own output dataset."""
    template = cll_events()[1]
    events = []
    for i in range(count):
        event = copy.deepcopy(template)
        event["run"]["runId"] = run_id
        event["eventTime"] = f"2024-08-06T13:27:{i % 60:02d}.{i:03d}Z"
        event["outputs"][0]["name"] = f"/tmp/out/part_{i:03d}"
        events.append(event)
    return events


# --- the contract ------------------------------------------------------------------------------------------------


def test_merging_a_sequence_through_the_store_equals_the_pure_merge(store):
    events = cll_events()
    for event in events:
        returned = merged(store, event, now=T0)
    expected = merge_events(events)
    assert returned == expected
    assert got(store, CLL_CTAS_RUN, now=T0) == expected


def test_unknown_run_has_no_state_and_no_fingerprint(store):
    assert got(store, "0190f000-0000-7000-8000-000000000000", now=T0) is None
    assert store.written_fingerprint("0190f000-0000-7000-8000-000000000000", now=T0) is None


def test_fingerprint_is_recorded_by_commit_and_survives_later_merges(store):
    start, running, _, complete = cll_events()
    _, version = store.merge_versioned(start, now=T0)
    assert version == 1
    assert store.written_fingerprint(CLL_CTAS_RUN, now=T0) is None
    assert store.commit(CLL_CTAS_RUN, [], version=1, fingerprint="sha256:aa11", now=T0 + 1) == CommitResult()
    assert store.written_fingerprint(CLL_CTAS_RUN, now=T0 + 1) == "sha256:aa11"
    snapshot, version = store.merge_versioned(complete, now=T0 + 2)
    assert (snapshot.event_type, version) == ("COMPLETE", 2)
    assert store.written_fingerprint(CLL_CTAS_RUN, now=T0 + 2) == "sha256:aa11"
    store.commit(CLL_CTAS_RUN, [], version=2, fingerprint="sha256:bb22", now=T0 + 3)
    assert store.written_fingerprint(CLL_CTAS_RUN, now=T0 + 3) == "sha256:bb22"
    assert store.get_versioned(CLL_CTAS_RUN, now=T0 + 3) == (merge_events([start, complete]), 2)


def test_a_replayed_event_changes_nothing_until_half_the_time_to_live_has_passed(store):
    """The queue delivers a message again (or a producer resends it): the merged state is the same, so the run's row
    is not written and its version stays (a commit of the plan built before the replay is not stale); once half the
    time to live has passed, the same merge writes the row again, so that a run whose events keep coming stays."""
    start, running, _, _ = cll_events()
    store.merge_versioned(start, now=T0)
    assert store.merge_versioned(running, now=T0 + 1)[1] == 2
    assert store.merge_versioned(running, now=T0 + 2) == (merge_events([start, running]), 2)
    assert store.commit(CLL_CTAS_RUN, [], version=2, fingerprint="sha256:aa11", now=T0 + 3) == CommitResult()
    assert store.merge_versioned(running, now=T0 + 3 + SHORT_TTL_SECONDS / 2)[1] == 3  # kept alive (commit: T0 + 3)
    assert store.get_versioned(CLL_CTAS_RUN, now=T0 + 3 + SHORT_TTL_SECONDS) == (merge_events([start, running]), 3)


def test_a_commit_for_an_older_version_is_refused_as_stale(store):
    start, running, _, complete = cll_events()
    merged(store, start, now=T0)
    merged(store, complete, now=T0 + 1)  # version 2: someone merged while version 1's plan was being written
    assert store.commit(CLL_CTAS_RUN, [PROCESS], version=1, fingerprint="f1", now=T0 + 2) == CommitResult(stale=True)
    assert store.written_fingerprint(CLL_CTAS_RUN, now=T0 + 2) is None
    assert store.commit(CLL_CTAS_RUN, [PROCESS], version=2, fingerprint="f2", now=T0 + 2) == CommitResult()
    assert store.written_fingerprint(CLL_CTAS_RUN, now=T0 + 2) == "f2"


def test_fingerprint_of_static_lineage_without_state(store):
    store.claim("static:job-adf-copy_orders", [PROCESS], now=T0)
    store.commit("static:job-adf-copy_orders", [PROCESS], version=None, fingerprint="sha256:cc33", now=T0)
    assert store.written_fingerprint("static:job-adf-copy_orders", now=T0) == "sha256:cc33"
    assert store.get_versioned("static:job-adf-copy_orders", now=T0) == (None, 0)


def test_state_expires_ttl_seconds_after_the_last_update(store):
    start, running, _, complete = cll_events()
    merged(store, start, now=T0)
    merged(store, running, now=T0 + 30)  # the TTL counts from here
    store.commit(CLL_CTAS_RUN, [], version=2, fingerprint="sha256:aa11", now=T0 + 30)
    assert got(store, CLL_CTAS_RUN, now=T0 + 30 + SHORT_TTL_SECONDS - 1) == merge_events([start, running])
    assert got(store, CLL_CTAS_RUN, now=T0 + 30 + SHORT_TTL_SECONDS) is None
    assert store.written_fingerprint(CLL_CTAS_RUN, now=T0 + 30 + SHORT_TTL_SECONDS) is None
    # an event after expiry starts a new snapshot, without the old fingerprint
    late = merged(store, complete, now=T0 + 200)
    assert late == merge_events([complete])
    assert got(store, CLL_CTAS_RUN, now=T0 + 200) == late
    assert store.written_fingerprint(CLL_CTAS_RUN, now=T0 + 200) is None


# --- what runs wrote: reference counts, tombstones, orphans --------------------------------------------------------

PROCESS = ("databricks_process", "databricks://adb-1.2.azuredatabricks.net/notebooks/etl/processes/j/t")
INTERIM_PROCESS = (
    "spark_process",
    "databricks://adb-1.2.azuredatabricks.net/applications/databricks_shell/processes/j/t",
)
APP = ("spark_application", "databricks://adb-1.2.azuredatabricks.net/applications/databricks_shell")
PLACEHOLDER = ("openlineage_dataset", "dbfs:/mnt/raw/orders")
WORKSPACE = ("databricks_workspace", "databricks://adb-1.2.azuredatabricks.net")


def test_what_a_run_no_longer_writes_and_nobody_else_uses_is_orphaned(store):
    assert store.claim("run-a", [WORKSPACE, APP, INTERIM_PROCESS, PLACEHOLDER], now=T0) == frozenset()
    assert (
        store.commit("run-a", [WORKSPACE, APP, INTERIM_PROCESS, PLACEHOLDER], version=None, fingerprint="a1", now=T0)
        == CommitResult()
    )
    # run b (another notebook cell) still reads the unresolved mount through the same generic application
    store.claim("run-b", [WORKSPACE, APP, PLACEHOLDER], now=T0)
    store.commit("run-b", [WORKSPACE, APP, PLACEHOLDER], version=None, fingerprint="b1", now=T0)
    # run a's environment facet arrived: notebook process, resolved input
    store.claim("run-a", [WORKSPACE, PROCESS], now=T0 + 1)
    result = store.commit("run-a", [WORKSPACE, PROCESS], version=None, fingerprint="a2", now=T0 + 1)
    assert result == CommitResult(orphans=(INTERIM_PROCESS,))
    assert store.contested([INTERIM_PROCESS, APP, PLACEHOLDER], now=T0 + 1) == frozenset({INTERIM_PROCESS})
    store.finish_deletes(result.orphans)
    assert store.contested([INTERIM_PROCESS], now=T0 + 1) == frozenset()
    # run b resolves too: now the application and the placeholder have no user left
    store.claim("run-b", [WORKSPACE], now=T0 + 2)
    assert store.commit("run-b", [WORKSPACE], version=None, fingerprint="b2", now=T0 + 2) == CommitResult(
        orphans=(PLACEHOLDER, APP)
    )


def test_a_newer_plan_that_drops_a_process_releases_it_and_restores_it_from_the_older_writer(store):
    # Regression (#24 item 1): the Table store crashed here (TypeError) after recording the commit.
    types = frozenset({PROCESS[0], INTERIM_PROCESS[0]})
    store.claim("run-old", [INTERIM_PROCESS, PLACEHOLDER], now=T0)
    store.commit(
        "run-old",
        [INTERIM_PROCESS, PLACEHOLDER],
        version=None,
        fingerprint="o1",
        process_names=[INTERIM_PROCESS[1]],
        run_time=100.0,
        process_types=types,
        now=T0,
    )
    store.claim("run-new", [INTERIM_PROCESS, PLACEHOLDER], now=T0 + 1)
    result = store.commit(
        "run-new",
        [INTERIM_PROCESS, PLACEHOLDER],
        version=None,
        fingerprint="n1",
        process_names=[INTERIM_PROCESS[1]],
        run_time=200.0,
        process_types=types,
        now=T0 + 1,
    )
    assert result.newest == {INTERIM_PROCESS[1]}
    # run-new's environment facet arrived: its plan now has the notebook's process instead
    store.claim("run-new", [PROCESS], now=T0 + 2)
    result = store.commit(
        "run-new",
        [PROCESS],
        version=None,
        fingerprint="n2",
        process_names=[PROCESS[1]],
        run_time=200.0,
        process_types=types,
        now=T0 + 2,
    )
    assert (result.stale, result.orphans, result.newest) == (False, (), frozenset({PROCESS[1]}))
    assert result.restores == ((INTERIM_PROCESS[1], "run-old"),)
    assert store.process_writers([INTERIM_PROCESS[1], PROCESS[1]]) == {
        INTERIM_PROCESS[1]: (100.0, "run-old"),
        PROCESS[1]: (200.0, "run-new"),
    }
    # the last writer drops it too: nothing to restore, and the entities no run uses are deleted
    store.claim("run-old", [PROCESS], now=T0 + 3)
    result = store.commit(
        "run-old",
        [PROCESS],
        version=None,
        fingerprint="o2",
        process_names=[PROCESS[1]],
        run_time=100.0,
        process_types=types,
        now=T0 + 3,
    )
    assert (result.orphans, result.restores, result.newest) == ((PLACEHOLDER, INTERIM_PROCESS), (), frozenset())
    assert store.process_writers([INTERIM_PROCESS[1], PROCESS[1]]) == {PROCESS[1]: (200.0, "run-new")}


def test_claiming_twice_counts_a_run_once(store):
    for _ in range(3):
        store.claim("run-a", [PLACEHOLDER], now=T0)
    store.commit("run-a", [PLACEHOLDER], version=None, fingerprint="a1", now=T0)
    store.claim("run-b", [PLACEHOLDER], now=T0)
    store.commit("run-b", [PLACEHOLDER], version=None, fingerprint="b1", now=T0)
    assert store.commit("run-a", [], version=None, fingerprint="a2", now=T0).orphans == ()
    assert store.commit("run-b", [], version=None, fingerprint="b2", now=T0).orphans == (PLACEHOLDER,)


def test_a_run_claimed_at_once_by_retries_and_other_instances_is_one_user(store):
    # #25 item 2: two instances claiming one run (a redelivered message) each counted it; the entity was never deleted
    from concurrent.futures import ThreadPoolExecutor

    from tests.support.stores import same_store_elsewhere

    other = same_store_elsewhere(store)
    with ThreadPoolExecutor(6) as pool:
        list(pool.map(lambda handle: handle.claim("run-a", [PLACEHOLDER, APP], now=T0), [store, other] * 3))
    store.commit("run-a", [PLACEHOLDER, APP], version=None, fingerprint="a1", now=T0)
    other.claim("run-a", [PLACEHOLDER, APP], now=T0 + 1)  # the message again, after the commit
    store.claim("run-b", [APP], now=T0 + 1)
    assert other.commit("run-a", [], version=None, fingerprint="a2", now=T0 + 2).orphans == (PLACEHOLDER,)
    assert store.commit("run-b", [], version=None, fingerprint="b", now=T0 + 3).orphans == (APP,)
    other.close()


def test_a_claim_that_was_never_committed_is_released_by_the_next_commit(store):
    store.claim("run-a", [INTERIM_PROCESS, PLACEHOLDER], now=T0)  # uploaded, then the worker died before commit
    store.claim("run-a", [PROCESS], now=T0 + 1)
    assert store.commit("run-a", [PROCESS], version=None, fingerprint="a", now=T0 + 1).orphans == (
        PLACEHOLDER,
        INTERIM_PROCESS,
    )


def test_claimed_keys_are_what_the_run_may_have_uploaded_until_its_commit_releases_them(store):
    assert store.claimed("run-a") == frozenset()
    store.claim("run-a", [INTERIM_PROCESS, PLACEHOLDER], now=T0)
    store.claim("run-a", [PROCESS], now=T0 + 1)
    assert store.claimed("run-a") == {INTERIM_PROCESS, PLACEHOLDER, PROCESS}
    store.commit("run-a", [PROCESS], version=None, fingerprint="a", now=T0 + 1)
    assert store.claimed("run-a") == {PROCESS}


def test_dangling_uploads_that_nobody_claims_are_orphaned(store):
    # a writer uploaded INTERIM_PROCESS in an attempt whose commit was stale; another writer released it since
    store.claim("run-a", [PROCESS], now=T0)
    result = store.commit("run-a", [PROCESS], version=None, fingerprint="a", dangling=[INTERIM_PROCESS], now=T0)
    assert result.orphans == (INTERIM_PROCESS,)
    store.finish_deletes(result.orphans)
    store.done("run-a", result.epoch)
    store.claim("run-c", [APP], now=T0)
    store.commit("run-c", [APP], version=None, fingerprint="c", now=T0)
    assert store.commit("run-a", [PROCESS], version=None, fingerprint="a2", dangling=[APP], now=T0).orphans == ()


def test_a_claim_on_an_entity_being_deleted_is_contested_until_the_delete_finishes(store):
    store.claim("run-a", [PLACEHOLDER], now=T0)
    store.commit("run-a", [PLACEHOLDER], version=None, fingerprint="a1", now=T0)
    orphans = store.commit("run-a", [], version=None, fingerprint="a2", now=T0).orphans
    assert orphans == (PLACEHOLDER,)
    assert store.claim("run-b", [PLACEHOLDER, APP], now=T0 + 1) == frozenset({PLACEHOLDER})
    store.finish_deletes(orphans)  # run a deleted it; run b's claim keeps the count
    assert store.contested([PLACEHOLDER], now=T0 + 1) == frozenset()
    assert store.commit("run-b", [], version=None, fingerprint="b", now=T0 + 2).orphans == (PLACEHOLDER, APP)


def test_a_delete_finished_after_another_worker_claimed_the_entity_keeps_it(store):
    """The worker that released the entity knows its head as the release left it (Table storage deletes it from
    that, conditionally): another worker's claim in between changes the head, so the delete reads it again and keeps
    the entity, tombstone cleared."""
    other = same_store_elsewhere(store)
    store.claim("run-a", [PLACEHOLDER], now=T0)
    store.commit("run-a", [PLACEHOLDER], version=None, fingerprint="a1", now=T0)
    orphans = store.commit("run-a", [], version=None, fingerprint="a2", now=T0).orphans
    assert orphans == (PLACEHOLDER,)
    assert other.claim("run-b", [PLACEHOLDER], now=T0 + 1) == frozenset({PLACEHOLDER})  # waits for the delete
    store.finish_deletes(orphans)
    assert other.contested([PLACEHOLDER], now=T0 + 1) == frozenset()
    store.claim("run-c", [PLACEHOLDER], now=T0 + 2)
    store.commit("run-c", [PLACEHOLDER], version=None, fingerprint="c", now=T0 + 2)
    # two users counted (run b's claim survived the delete): run b letting go leaves it to run c
    assert other.commit("run-b", [], version=None, fingerprint="b", now=T0 + 3).orphans == ()
    assert store.commit("run-c", [], version=None, fingerprint="c2", now=T0 + 4).orphans == (PLACEHOLDER,)
    other.close()


def test_a_tombstone_older_than_its_limit_no_longer_blocks_and_is_handed_to_the_timer(store):
    store.claim("run-a", [PLACEHOLDER, APP], now=T0)
    store.commit("run-a", [PLACEHOLDER, APP], version=None, fingerprint="a1", now=T0)
    store.commit("run-a", [], version=None, fingerprint="a2", now=T0)  # the delete then failed: never finished
    assert store.abandoned_deletes(T0 + TOMBSTONE_SECONDS - 1, limit=10) == []
    assert store.contested([PLACEHOLDER], now=T0 + TOMBSTONE_SECONDS + 1) == frozenset()
    assert store.abandoned_deletes(T0 + TOMBSTONE_SECONDS + 1, limit=10) == [PLACEHOLDER, APP]
    # tombstoned anew, so a writer waits again while the timer deletes
    assert store.contested([PLACEHOLDER], now=T0 + TOMBSTONE_SECONDS + 2) == frozenset({PLACEHOLDER})
    assert store.abandoned_deletes(T0 + TOMBSTONE_SECONDS + 2, limit=10) == []
    store.finish_deletes([PLACEHOLDER, APP])
    assert store.abandoned_deletes(T0 + 10 * TOMBSTONE_SECONDS, limit=10) == []


# --- the timer's schedule ----------------------------------------------------------------------------------------


def test_due_runs_come_back_when_their_time_has_passed_most_overdue_first(store):
    first, second = numbered_events("0190f000-0000-7000-8000-0000000000a1", 1)[0], cll_events()[0]
    merged(store, first, now=T0)
    merged(store, second, now=T0)
    store.schedule("0190f000-0000-7000-8000-0000000000a1", T0 + 20)
    store.schedule(CLL_CTAS_RUN, T0 + 10)
    assert store.due_runs(T0 + 9, limit=10) == []
    assert store.due_runs(T0 + 30, limit=10) == [CLL_CTAS_RUN, "0190f000-0000-7000-8000-0000000000a1"]
    assert store.due_runs(T0 + 30, limit=1) == [CLL_CTAS_RUN]
    store.schedule(CLL_CTAS_RUN, T0 + 50, keep_earlier=True)  # keeps T0 + 10
    store.schedule("0190f000-0000-7000-8000-0000000000a1", T0 + 50)  # moves
    assert store.due_runs(T0 + 30, limit=10) == [CLL_CTAS_RUN]
    assert store.postpone(CLL_CTAS_RUN, T0 + 100) == 1
    assert store.postpone(CLL_CTAS_RUN, T0 + 100) == 2
    assert store.due_runs(T0 + 99, limit=10) == ["0190f000-0000-7000-8000-0000000000a1"]
    store.commit(CLL_CTAS_RUN, [], version=None, fingerprint="f", now=T0 + 100)  # written: no longer due
    store.schedule("0190f000-0000-7000-8000-0000000000a1", None)
    assert store.due_runs(T0 + 1000, limit=10) == []
    assert store.stats() == StoreStats(runs=2, due=0, entities=0, processes=0)


def test_a_due_run_is_not_purged_before_the_timer_has_written_it(store):
    merged(store, cll_events()[0], now=T0)
    store.schedule(CLL_CTAS_RUN, T0 + 10)
    assert store.purge_expired(now=T0 + 10 * SHORT_TTL_SECONDS) == 0
    store.schedule(CLL_CTAS_RUN, None)
    assert store.purge_expired(now=T0 + 10 * SHORT_TTL_SECONDS) == 1


def test_reset_forgets_a_process_run_time(store):
    record_writers(store, ["p1", "p2"], 253402300799.0)  # a run dated 9999-12-31
    assert store.reset_process_runs(["p1", "p3"]) == 1
    assert store.process_writers(["p1", "p2"]) == {"p2": (253402300799.0, "")}
    assert store.stats().processes == 1


def test_purge_deletes_exactly_the_expired_runs(store):
    old, fresh = numbered_events("0190f000-0000-7000-8000-00000000000a", 1)[0], cll_events()[0]
    merged(store, old, now=T0)
    merged(store, fresh, now=T0 + 50)
    assert store.purge_expired(now=T0 + SHORT_TTL_SECONDS + 10) == 1
    assert got(store, "0190f000-0000-7000-8000-00000000000a", now=T0) is None  # deleted, not only ignored
    assert got(store, CLL_CTAS_RUN, now=T0 + SHORT_TTL_SECONDS + 10) == merge_events([fresh])
    assert store.purge_expired(now=T0 + SHORT_TTL_SECONDS + 10) == 0
    assert store.purge_expired(now=T0 + 50 + SHORT_TTL_SECONDS) == 1


def test_process_writers_keep_the_newest_run_and_outlive_purges(store):
    a, b = "notebooks/etl/processes/x", "notebooks/etl/processes/y"
    assert store.process_writers([a, b]) == {}
    record_writers(store, [a, b], 1_700_000_100.5, "run-2")
    record_writers(store, [a], 1_700_000_050.0, "run-1")  # an older run: the newer one stays
    record_writers(store, [b], 1_700_000_200.0, "run-3")
    record_writers(store, [a], 1_700_000_100.5, "run-0")  # the same instant: the greater key wins
    assert store.process_writers([b, a, b, "unknown"]) == {a: (1_700_000_100.5, "run-2"), b: (1_700_000_200.0, "run-3")}
    record_writers(store, [a], 1_700_000_100.5, "run-9")
    assert store.purge_expired(now=T0 + 10 * SHORT_TTL_SECONDS) == 5  # the five runs' records; their writers stay
    assert store.process_writers([a]) == {a: (1_700_000_100.5, "run-9")}


def test_a_commit_decided_on_an_older_writer_than_another_instance_committed_restores_the_newer_one(store):
    p = "notebooks/etl/processes/x"
    elsewhere = same_store_elsewhere(store)
    record_writers(store, [p], 200.0, "run-2")  # this handle wrote run 2: it may remember the row so
    record_writers(elsewhere, [p], 300.0, "run-3")  # another instance: run 3, newer
    with store.session("run-2") as session:  # run 2 again (a changed plan): its upload is decided on this answer
        answered = store.process_writers([p], session=session)
        result = store.commit(
            "run-2", [], version=None, fingerprint="f2", process_names=[p], run_time=200.0, session=session, now=T0
        )
    # the Table store answers from the row it last wrote (no read): run 2 was taken for the newest and its process
    # uploaded, so its commit, which finds run 3, gives the process back to run 3; SQLite read run 3: nothing uploaded
    uploaded = answered[p][1] == "run-2"
    assert answered == ({p: (200.0, "run-2")} if uploaded else {p: (300.0, "run-3")})
    assert uploaded is (store.__class__.__name__ == "TableRunStateStore")
    assert (result.restores, result.newest) == ((((p, "run-3"),) if uploaded else ()), frozenset())
    assert store.process_writers([p]) == {p: (300.0, "run-3")}  # outside a session: read
    with store.session("run-2") as session:  # the rows as they now are: nothing overwritten, nothing to restore
        assert store.process_writers([p], session=session) == {p: (300.0, "run-3")}
        again = store.commit(
            "run-2", [], version=None, fingerprint="f3", process_names=[p], run_time=200.0, session=session, now=T0
        )
    assert again.restores == ()
    # in a batch's session (the Spark paths': it folds nothing) every answer is read
    record_writers(elsewhere, [p], 400.0, "run-4")
    assert store.process_writers([p], session=RunSession()) == {p: (400.0, "run-4")}
    elsewhere.close()


# --- interim datasets: the re-link timer's registry ---------------------------------------------------------------
INTERIM_PATH = ("azure_datalake_gen2_path", "https://lake.dfs.core.windows.net/silver/orders")
INTERIM_UC = ("databricks_unity_catalog_table", "unity-catalog://main.sales.orders")
INTERIM_ONELAKE = ("openlineage_dataset", "abfss://ws@onelake.dfs.fabric.microsoft.com/lh.Lakehouse/Tables/t")
PATH_CANDIDATES = '[{"typeName":"azure_datalake_gen2_resource_set","qualifiedName":"x/{SparkPartitions}"}]'


def test_interim_datasets_come_back_longest_unchecked_first_and_keep_their_registration_time(store):
    store.register_interim({INTERIM_PATH: PATH_CANDIDATES}, now=T0)
    store.register_interim({INTERIM_UC: "[1]", INTERIM_ONELAKE: "[2]"}, now=T0 + 5)
    store.register_interim({INTERIM_PATH: "[3]"}, now=T0 + 9)  # registered again: new candidates, same times

    assert store.due_interim(limit=10) == [
        InterimDataset(INTERIM_PATH, "[3]", T0, T0),
        InterimDataset(INTERIM_UC, "[1]", T0 + 5, T0 + 5),
        InterimDataset(INTERIM_ONELAKE, "[2]", T0 + 5, T0 + 5),
    ]
    assert store.due_interim(limit=1) == [InterimDataset(INTERIM_PATH, "[3]", T0, T0)]
    store.checked_interim([INTERIM_PATH, INTERIM_UC], now=T0 + 20)
    assert [entry.key for entry in store.due_interim(limit=10)] == [INTERIM_ONELAKE, INTERIM_PATH, INTERIM_UC]
    assert store.due_interim(limit=10)[1] == InterimDataset(INTERIM_PATH, "[3]", T0, T0 + 20)


def test_interim_keys_are_the_registered_ones_until_forgotten(store):
    store.register_interim({INTERIM_PATH: PATH_CANDIDATES, INTERIM_UC: "[]"}, now=T0)
    assert store.interim_keys([INTERIM_PATH, INTERIM_ONELAKE, INTERIM_UC]) == {INTERIM_PATH, INTERIM_UC}
    assert store.interim_keys([]) == set()
    store.forget_interim([INTERIM_PATH, INTERIM_ONELAKE])  # forgetting an unknown key is no error
    store.checked_interim([INTERIM_PATH], now=T0 + 1)  # nor is checking a forgotten one
    assert store.interim_keys([INTERIM_PATH, INTERIM_UC]) == {INTERIM_UC}
    assert [entry.key for entry in store.due_interim(limit=10)] == [INTERIM_UC]


def test_interim_datasets_outlive_run_purges_and_are_counted(store):
    merged(store, cll_events()[0], now=T0)
    store.register_interim({INTERIM_PATH: PATH_CANDIDATES}, now=T0)
    assert store.purge_expired(now=T0 + 10 * SHORT_TTL_SECONDS) == 1
    assert store.interim_keys([INTERIM_PATH]) == {INTERIM_PATH}
    assert store.stats() == StoreStats(runs=0, due=0, entities=0, processes=0, interim=1)
    assert store.stats().to_json()["interimDatasets"] == 1


def test_threads_merging_events_of_one_run_lose_nothing(store):
    run_id = "0190f000-0000-7000-8000-0000000000cc"
    events = numbered_events(run_id, 32)
    errors: list[BaseException] = []

    def worker(mine: list[dict]) -> None:
        try:
            for event in mine:
                merged(store, event, now=T0)
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(events[i::8],)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    snapshot = got(store, run_id, now=T0)
    assert [d.name for d in snapshot.outputs] == [f"/tmp/out/part_{i:03d}" for i in range(32)]
    assert snapshot == merge_events(events)


def test_an_event_without_run_id_is_refused(store):
    with pytest.raises(ValueError, match="no run.runId"):
        merged(store, {"eventTime": "2024-01-01T00:00:00Z", "job": {"namespace": "n", "name": "j"}}, now=T0)


# --- SQLite ------------------------------------------------------------------------------------------------------


def _merge_in_process(path: str, events: list[dict]) -> None:
    with SqliteRunStateStore(Path(path), ttl_seconds=3600) as store:
        for event in events:
            merged(store, event, now=T0)


def test_sqlite_processes_merging_one_run_lose_nothing(tmp_path):
    path = tmp_path / "shared.sqlite3"
    run_id = "0190f000-0000-7000-8000-0000000000dd"
    events = numbered_events(run_id, 24)
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_merge_in_process, args=(str(path), events[i::3])) for i in range(3)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(60)
    assert [p.exitcode for p in processes] == [0, 0, 0]
    with SqliteRunStateStore(path, ttl_seconds=3600) as store:
        assert len(got(store, run_id, now=T0).outputs) == 24


def test_sqlite_opens_a_file_of_the_previous_version_and_adds_the_new_columns(tmp_path):
    path = tmp_path / "old.sqlite3"
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE run_state (run_id TEXT PRIMARY KEY, state TEXT, fingerprint TEXT, "
        "updated_at REAL NOT NULL) WITHOUT ROWID;"
    )
    old.execute("INSERT INTO run_state VALUES ('r1', NULL, 'sha256:0ld', ?)", (T0,))
    old.commit()
    old.close()
    with SqliteRunStateStore(path, ttl_seconds=SHORT_TTL_SECONDS) as store:
        assert store.written_fingerprint("r1", now=T0) == "sha256:0ld"
        assert store.get_versioned("r1", now=T0) == (None, 0)
        start = cll_events()[0]
        assert store.merge_versioned(start, now=T0)[1] == 1
        store.schedule(CLL_CTAS_RUN, T0 + 5)
        assert store.due_runs(T0 + 5, limit=5) == [CLL_CTAS_RUN]


def test_sqlite_file_that_counted_users_gets_each_runs_claims_as_its_users(tmp_path):
    path = tmp_path / "counted.sqlite3"
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE run_state (run_id TEXT PRIMARY KEY, state TEXT, fingerprint TEXT, updated_at REAL NOT NULL, "
        "version INTEGER NOT NULL DEFAULT 0, written TEXT, claimed TEXT, due_at REAL, due_attempts INTEGER NOT NULL "
        "DEFAULT 0) WITHOUT ROWID; CREATE TABLE entity_refs (type_name TEXT NOT NULL, qualified_name TEXT NOT NULL, "
        "users INTEGER NOT NULL, deleting_since REAL, PRIMARY KEY (type_name, qualified_name)) WITHOUT ROWID;"
    )
    both = json.dumps([list(PLACEHOLDER), list(APP)])
    old.execute(
        "INSERT INTO run_state (run_id, updated_at, written, claimed) VALUES ('run-a', ?, ?, ?)", (T0, both, both)
    )
    old.execute(
        "INSERT INTO run_state (run_id, updated_at, written, claimed) VALUES ('run-b', ?, ?, ?)",
        (T0, json.dumps([list(APP)]), json.dumps([list(APP)])),
    )
    # run-a was counted twice for APP (the double count of #25 item 2): the migration counts what runs claim
    old.executemany("INSERT INTO entity_refs VALUES (?, ?, ?, NULL)", [(*PLACEHOLDER, 1), (*APP, 3)])
    old.commit()
    old.close()
    with SqliteRunStateStore(path, ttl_seconds=SHORT_TTL_SECONDS) as store:
        assert store.commit("run-a", [], version=None, fingerprint="a", now=T0).orphans == (PLACEHOLDER,)
        assert store.commit("run-b", [], version=None, fingerprint="b", now=T0).orphans == (APP,)


@pytest.mark.azurite
def test_table_entity_counted_by_the_previous_version_is_kept_while_those_users_may_remain(azurite, table_store):
    """Rows `ref-xx` of the version that counted users: an entity first touched now keeps that count as users that
    never release (kept, never deleted while in use); a tombstone it left is handed to the timer once."""
    from azure.data.tables import TableEntity

    def legacy_row(key, users, deleting_since=None):
        row = TableEntity(table_store._ref_keys(key), type_name=key[0], qualified_name=key[1], users=users)
        if deleting_since is not None:
            row["deleting_since"] = deleting_since
        table_store.table.create_entity(row)

    legacy_row(PLACEHOLDER, 2)
    legacy_row(APP, 0, deleting_since=T0)
    table_store.claim("run-a", [PLACEHOLDER], now=T0)
    assert table_store.commit("run-a", [], version=None, fingerprint="a", now=T0).orphans == ()
    assert table_store.abandoned_deletes(T0 + TOMBSTONE_SECONDS + 1, limit=10) == [APP]
    table_store.finish_deletes([APP])
    assert table_store.abandoned_deletes(T0 + 10 * TOMBSTONE_SECONDS, limit=10) == []


@pytest.mark.azurite
def test_table_due_rows_of_the_previous_release_are_read_then_cleared(table_store):
    """The previous release also wrote a row per due run in the `due` partition (its run's key, a due time never later
    than the run's row says): the timer still finds a run named only there (a RowKey hashed from the run's key, and a
    run row without `run_key`), deletes the row of a run no longer due and moves the row of a run due later."""
    from azure.data.tables import TableEntity, UpdateMode

    hashed, done, later = "manual run/1", "0190f000-0000-7000-8000-0000000000b1", "0190f000-0000-7000-8000-0000000000b2"
    for run_id, due_at in ((hashed, T0 + 10), (done, None), (later, T0 + 50)):
        event = copy.deepcopy(cll_events()[0])
        event["run"]["runId"] = run_id
        merged(table_store, event, now=T0)
        table_store.schedule(run_id, due_at)
        row = table_store._read(run_id)
        row.pop("run_key", None)  # as the previous release wrote it
        table_store.table.upsert_entity(row, mode=UpdateMode.REPLACE)
        keys = {"PartitionKey": "due", "RowKey": row["RowKey"]}
        table_store.table.create_entity(TableEntity(keys, run_key=run_id, due_at=T0 + 5))
    assert table_store._read(hashed)["RowKey"].startswith("sha256-")

    assert table_store.due_runs(T0 + 20, limit=10) == [hashed]
    legacy = {row["run_key"]: row["due_at"] for row in table_store.table.query_entities("PartitionKey eq 'due'")}
    assert legacy == {hashed: T0 + 5, later: T0 + 50}
    assert table_store.stats() == StoreStats(runs=3, due=2, entities=0, processes=0)
    table_store.schedule(hashed, None)
    assert table_store.due_runs(T0 + 1000, limit=10) == [later]
    table_store.schedule(later, None)
    assert table_store.due_runs(T0 + 1000, limit=10) == []
    assert list(table_store.table.query_entities("PartitionKey eq 'due'")) == []
    table_store.schedule(hashed, T0 + 7)  # this release names the run in its own row, and writes no due row
    assert table_store.due_runs(T0 + 1000, limit=10) == [hashed]
    assert list(table_store.table.query_entities("PartitionKey eq 'due'")) == []


def test_sqlite_rolls_back_a_merge_that_fails_and_keeps_working(tmp_path, monkeypatch):
    import olparser.adapters.run_state.sqlite_store as module

    start, running, _, _ = cll_events()
    with SqliteRunStateStore(tmp_path / "runs.sqlite3", ttl_seconds=SHORT_TTL_SECONDS) as store:
        merged(store, start, now=T0)

        def broken(snapshot):
            raise OSError("disk full")

        monkeypatch.setattr(module, "to_json", broken)
        with pytest.raises(OSError, match="disk full"):
            merged(store, running, now=T0 + 1)
        monkeypatch.undo()
        assert store.get_versioned(CLL_CTAS_RUN, now=T0 + 1) == (merge_events([start]), 1)
        assert store._connection().in_transaction is False
        assert store.merge_versioned(running, now=T0 + 2) == (merge_events([start, running]), 2)


def test_sqlite_file_uses_the_wal_journal(tmp_path):
    with SqliteRunStateStore(tmp_path / "runs.sqlite3", ttl_seconds=60) as store:
        assert store._connection().execute("PRAGMA journal_mode").fetchone() == ("wal",)


# --- Azure Table storage -----------------------------------------------------------------------------------------


def _incompressible_event(run_id: str, columns: int) -> dict:
    """A START whose output schema has `columns` random 64-character column names (so zlib cannot shrink them)."""
    event = copy.deepcopy(cll_events()[0])
    event["run"]["runId"] = run_id
    event["eventTime"] = "2024-08-06T13:26:58Z"  # after the real START, so that its schema replaces the real one
    event["outputs"][0]["facets"]["schema"]["fields"] = [
        {"name": os.urandom(32).hex(), "type": "string"} for _ in range(columns)
    ]
    return event


@pytest.fixture
def table_store(azurite):
    import uuid

    from olparser.adapters.run_state.table_store import TableRunStateStore

    with TableRunStateStore.from_connection_string(
        azurite.connection_string, f"big{uuid.uuid4().hex[:16]}", ttl_seconds=SHORT_TTL_SECONDS
    ) as store:
        yield store


@pytest.mark.azurite
def test_table_writers_that_collide_retry_and_lose_nothing(azurite, table_store):
    """Another instance merges between this store's read and its write: the ETag check refuses the stale write (412)
    and the whole read-merge-write is retried, so both events end up in the state."""
    from olparser.adapters.run_state.table_store import TableRunStateStore

    start, running, _, complete = cll_events()
    table_store.merge_versioned(start, now=T0)
    other = TableRunStateStore(table_store.table, ttl_seconds=SHORT_TTL_SECONDS)
    interfered = []
    original_read = table_store._read

    def read_then_interfere(run_id):
        entity = original_read(run_id)
        if not interfered:
            interfered.append(run_id)
            other.merge_versioned(running, now=T0 + 1)  # lands after our read: our write must not overwrite it
        return entity

    table_store._read = read_then_interfere
    snapshot, version = table_store.merge_versioned(complete, now=T0 + 2)
    assert interfered == [CLL_CTAS_RUN]
    assert snapshot == merge_events([start, running, complete])
    assert version == 3
    table_store._read = original_read
    # the same for the bookkeeping: a claim that collides with another writer's commit is retried
    table_store.claim(CLL_CTAS_RUN, [PLACEHOLDER], now=T0 + 3)
    assert table_store.commit(CLL_CTAS_RUN, [PLACEHOLDER], version=3, fingerprint="f", now=T0 + 3) == CommitResult()


@pytest.mark.azurite
def test_table_splits_large_state_across_numbered_properties(table_store):
    run_id = "0190f000-0000-7000-8000-0000000000ee"
    event = _incompressible_event(run_id, 3000)  # ~200 KB of random hex, ~110 KB compressed
    snapshot = table_store.merge_versioned(event, now=T0)[0]
    keys = table_store._keys(run_id)
    entity = table_store.table.get_entity(keys["PartitionKey"], keys["RowKey"])
    assert entity["state_parts"] == 2
    assert len(entity["state_0"]) == 64_000 and 0 < len(entity["state_1"]) <= 64_000
    assert "state_2" not in entity
    assert got(table_store, run_id, now=T0) == snapshot
    # after expiry a small state replaces the entity: no stale part is left behind
    small = {**cll_events()[0], "run": {**cll_events()[0]["run"], "runId": run_id}}
    table_store.merge_versioned(small, now=T0 + SHORT_TTL_SECONDS + 10)
    entity = table_store.table.get_entity(keys["PartitionKey"], keys["RowKey"])
    assert entity["state_parts"] == 1 and "state_1" not in entity
    assert got(table_store, run_id, now=T0 + SHORT_TTL_SECONDS + 10) == merge_events([small])


@pytest.mark.azurite
def test_table_refuses_a_run_too_large_for_one_entity_and_keeps_the_previous_state(table_store):
    from olparser.adapters.run_state.table_store import RunStateTooLarge

    run_id = "0190f000-0000-7000-8000-0000000000ff"
    first = cll_events()[0]
    first = {**first, "run": {**first["run"], "runId": run_id}}
    before = table_store.merge_versioned(first, now=T0)[0]
    with pytest.raises(RunStateTooLarge, match=f"run {run_id}: merged state is .* over the 720000-byte limit"):
        table_store.merge_versioned(_incompressible_event(run_id, 30_000), now=T0 + 1)
    assert got(table_store, run_id, now=T0 + 1) == before


@pytest.mark.azurite
def test_table_stores_a_state_just_under_the_limit(table_store):
    from olparser.runs.codec import to_compressed

    run_id = "0190f000-0000-7000-8000-0000000000fe"
    snapshot = table_store.merge_versioned(_incompressible_event(run_id, 18_000), now=T0)[0]  # ~708 KB compressed
    assert 690_000 < len(to_compressed(snapshot)) <= 720_000
    assert got(table_store, run_id, now=T0) == snapshot


@pytest.mark.azurite
def test_table_partition_keys_spread_uuid7_run_ids(table_store):
    partitions = {table_store._keys(f"0192963f-{i:04x}-7dff-8d04-a90a16c16859")["PartitionKey"] for i in range(64)}
    assert len(partitions) > 30


# --- choosing a store from settings ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "env,kind",
    [
        ({}, "sqlite"),
        ({"WEBSITE_INSTANCE_ID": "8d2f0a"}, "table"),  # in Azure: shared by every instance
        ({"WEBSITE_INSTANCE_ID": "8d2f0a", "RUN_STATE_STORE": "SQLite"}, "sqlite"),  # an explicit choice wins
    ],
)
def test_run_state_store_default_is_table_in_azure_and_sqlite_elsewhere(env, kind):
    assert Settings.from_env(env).run_state_store == kind


def test_open_sqlite_store_from_settings(tmp_path):
    store = open_run_state_store(
        Settings(run_state_store="sqlite", data_dir=tmp_path / "data", run_state_ttl_seconds=120)
    )
    try:
        assert isinstance(store, SqliteRunStateStore)
        assert store.path == tmp_path / "data" / "run-state.sqlite3"
        assert store.ttl_seconds == 120
        merged(store, cll_events()[0])
        assert got(store, CLL_CTAS_RUN).event_type == "START"  # real clock: fresh
    finally:
        store.close()


@pytest.mark.azurite
def test_open_table_store_from_settings(azurite):
    store = open_run_state_store(Settings(run_state_store="table", storage_connection=azurite.connection_string))
    try:
        assert store.table.table_name == "olrunstate"
        assert merged(store, cll_events()[0]).event_type == "START"
    finally:
        store.close()


@pytest.mark.parametrize(
    "settings,message",
    [
        (Settings(run_state_store="redis"), "RUN_STATE_STORE must be one of sqlite, table, not 'redis'"),
        (Settings(run_state_store="table"), "RUN_STATE_STORE=table needs AzureWebJobsStorage"),
    ],
)
def test_bad_store_settings_are_named(settings, message):
    with pytest.raises(ValueError, match=message):
        open_run_state_store(settings)
