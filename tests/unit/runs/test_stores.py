"""One contract for every run-state store (SQLite file, Azure Table storage on Azurite), and each store's own limits."""
from __future__ import annotations

import copy
import multiprocessing
import os
import threading
from pathlib import Path

import pytest

from olparser.runs.merge import merge_events
from olparser.runs.sqlite_store import SqliteRunStateStore
from olparser.runs.store import open_run_state_store
from olparser.settings import Settings
from tests.unit.runs.conftest import TTL_SECONDS, events_of_run, load_sequence

CLL_CTAS_RUN = "019127df-0850-72bc-b214-b255290588a6"
T0 = 1_700_000_000.0


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
        returned = store.merge(event, now=T0)
    expected = merge_events(events)
    assert returned == expected
    assert store.get(CLL_CTAS_RUN, now=T0) == expected


def test_unknown_run_has_no_state_and_no_fingerprint(store):
    assert store.get("0190f000-0000-7000-8000-000000000000", now=T0) is None
    assert store.written_fingerprint("0190f000-0000-7000-8000-000000000000", now=T0) is None


def test_fingerprint_is_recorded_and_survives_later_merges(store):
    start, running, _, complete = cll_events()
    store.merge(start, now=T0)
    assert store.written_fingerprint(CLL_CTAS_RUN, now=T0) is None
    store.record_written(CLL_CTAS_RUN, "sha256:aa11", now=T0 + 1)
    assert store.written_fingerprint(CLL_CTAS_RUN, now=T0 + 1) == "sha256:aa11"
    snapshot = store.merge(complete, now=T0 + 2)
    assert snapshot.event_type == "COMPLETE"
    assert store.written_fingerprint(CLL_CTAS_RUN, now=T0 + 2) == "sha256:aa11"
    store.record_written(CLL_CTAS_RUN, "sha256:bb22", now=T0 + 3)
    assert store.written_fingerprint(CLL_CTAS_RUN, now=T0 + 3) == "sha256:bb22"
    assert store.get(CLL_CTAS_RUN, now=T0 + 3) == merge_events([start, complete])


def test_fingerprint_of_a_run_without_state(store):
    store.record_written("static-job-adf-copy_orders", "sha256:cc33", now=T0)
    assert store.written_fingerprint("static-job-adf-copy_orders", now=T0) == "sha256:cc33"
    assert store.get("static-job-adf-copy_orders", now=T0) is None


def test_state_expires_ttl_seconds_after_the_last_update(store):
    start, running, _, complete = cll_events()
    store.merge(start, now=T0)
    store.merge(running, now=T0 + 30)  # the TTL counts from here
    store.record_written(CLL_CTAS_RUN, "sha256:aa11", now=T0 + 30)
    assert store.get(CLL_CTAS_RUN, now=T0 + 30 + TTL_SECONDS - 1) == merge_events([start, running])
    assert store.get(CLL_CTAS_RUN, now=T0 + 30 + TTL_SECONDS) is None
    assert store.written_fingerprint(CLL_CTAS_RUN, now=T0 + 30 + TTL_SECONDS) is None
    # an event after expiry starts a new snapshot, without the old fingerprint
    late = store.merge(complete, now=T0 + 200)
    assert late == merge_events([complete])
    assert store.get(CLL_CTAS_RUN, now=T0 + 200) == late
    assert store.written_fingerprint(CLL_CTAS_RUN, now=T0 + 200) is None


def test_recording_a_fingerprint_on_an_expired_run_does_not_revive_its_state(store):
    store.merge(cll_events()[0], now=T0)
    store.record_written(CLL_CTAS_RUN, "sha256:dd44", now=T0 + TTL_SECONDS + 5)
    assert store.get(CLL_CTAS_RUN, now=T0 + TTL_SECONDS + 5) is None
    assert store.written_fingerprint(CLL_CTAS_RUN, now=T0 + TTL_SECONDS + 5) == "sha256:dd44"


def test_purge_deletes_exactly_the_expired_runs(store):
    old, fresh = numbered_events("0190f000-0000-7000-8000-00000000000a", 1)[0], cll_events()[0]
    store.merge(old, now=T0)
    store.merge(fresh, now=T0 + 50)
    assert store.purge_expired(now=T0 + TTL_SECONDS + 10) == 1
    assert store.get("0190f000-0000-7000-8000-00000000000a", now=T0) is None  # deleted, not only ignored
    assert store.get(CLL_CTAS_RUN, now=T0 + TTL_SECONDS + 10) == merge_events([fresh])
    assert store.purge_expired(now=T0 + TTL_SECONDS + 10) == 0
    assert store.purge_expired(now=T0 + 50 + TTL_SECONDS) == 1


def test_process_run_times_keep_the_newest_run_and_outlive_purges(store):
    a, b = "notebooks/etl/processes/x", "notebooks/etl/processes/y"
    assert store.process_run_times([a, b]) == {}
    store.record_process_runs([a, b], 1_700_000_100.5)
    store.record_process_runs([a], 1_700_000_050.0)  # an older run: the newer time stays
    store.record_process_runs([b], 1_700_000_200.0)
    assert store.process_run_times([b, a, b, "unknown"]) == {a: 1_700_000_100.5, b: 1_700_000_200.0}
    assert store.purge_expired(now=T0 + 10 * TTL_SECONDS) == 0  # not run state: never purged
    assert store.process_run_times([a]) == {a: 1_700_000_100.5}


def test_threads_merging_events_of_one_run_lose_nothing(store):
    run_id = "0190f000-0000-7000-8000-0000000000cc"
    events = numbered_events(run_id, 32)
    errors: list[BaseException] = []

    def worker(mine: list[dict]) -> None:
        try:
            for event in mine:
                store.merge(event, now=T0)
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(events[i::8],)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    snapshot = store.get(run_id, now=T0)
    assert [d.name for d in snapshot.outputs] == [f"/tmp/out/part_{i:03d}" for i in range(32)]
    assert snapshot == merge_events(events)


def test_an_event_without_run_id_is_refused(store):
    with pytest.raises(ValueError, match="no run.runId"):
        store.merge({"eventTime": "2024-01-01T00:00:00Z", "job": {"namespace": "n", "name": "j"}}, now=T0)


# --- SQLite ------------------------------------------------------------------------------------------------------

def _merge_in_process(path: str, events: list[dict]) -> None:
    with SqliteRunStateStore(Path(path), ttl_seconds=3600) as store:
        for event in events:
            store.merge(event, now=T0)


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
        assert len(store.get(run_id, now=T0).outputs) == 24


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
        {"name": os.urandom(32).hex(), "type": "string"} for _ in range(columns)]
    return event


@pytest.fixture
def table_store(azurite):
    import uuid

    from olparser.runs.table_store import TableRunStateStore

    with TableRunStateStore.from_connection_string(azurite.connection_string, f"big{uuid.uuid4().hex[:16]}",
                                                   ttl_seconds=TTL_SECONDS) as store:
        yield store


@pytest.mark.azurite
def test_table_splits_large_state_across_numbered_properties(table_store):
    run_id = "0190f000-0000-7000-8000-0000000000ee"
    event = _incompressible_event(run_id, 3000)  # ~200 KB of random hex, ~110 KB compressed
    snapshot = table_store.merge(event, now=T0)
    keys = table_store._keys(run_id)
    entity = table_store.table.get_entity(keys["PartitionKey"], keys["RowKey"])
    assert entity["state_parts"] == 2
    assert len(entity["state_0"]) == 64_000 and 0 < len(entity["state_1"]) <= 64_000
    assert "state_2" not in entity
    assert table_store.get(run_id, now=T0) == snapshot
    # after expiry a small state replaces the entity: no stale part is left behind
    small = {**cll_events()[0], "run": {**cll_events()[0]["run"], "runId": run_id}}
    table_store.merge(small, now=T0 + TTL_SECONDS + 10)
    entity = table_store.table.get_entity(keys["PartitionKey"], keys["RowKey"])
    assert entity["state_parts"] == 1 and "state_1" not in entity
    assert table_store.get(run_id, now=T0 + TTL_SECONDS + 10) == merge_events([small])


@pytest.mark.azurite
def test_table_refuses_a_run_too_large_for_one_entity_and_keeps_the_previous_state(table_store):
    from olparser.runs.table_store import RunStateTooLarge

    run_id = "0190f000-0000-7000-8000-0000000000ff"
    first = cll_events()[0]
    first = {**first, "run": {**first["run"], "runId": run_id}}
    before = table_store.merge(first, now=T0)
    with pytest.raises(RunStateTooLarge, match=f"run {run_id}: merged state is .* over the 720000-byte limit"):
        table_store.merge(_incompressible_event(run_id, 30_000), now=T0 + 1)
    assert table_store.get(run_id, now=T0 + 1) == before


@pytest.mark.azurite
def test_table_stores_a_state_just_under_the_limit(table_store):
    from olparser.runs.codec import to_compressed

    run_id = "0190f000-0000-7000-8000-0000000000fe"
    snapshot = table_store.merge(_incompressible_event(run_id, 18_000), now=T0)  # ~708 KB compressed
    assert 690_000 < len(to_compressed(snapshot)) <= 720_000
    assert table_store.get(run_id, now=T0) == snapshot


@pytest.mark.azurite
def test_table_partition_keys_spread_uuid7_run_ids(table_store):
    partitions = {table_store._keys(f"0192963f-{i:04x}-7dff-8d04-a90a16c16859")["PartitionKey"] for i in range(64)}
    assert len(partitions) > 30


# --- choosing a store from settings ------------------------------------------------------------------------------

@pytest.mark.parametrize("env,kind", [
    ({}, "sqlite"),
    ({"WEBSITE_INSTANCE_ID": "8d2f0a"}, "table"),  # in Azure: shared by every instance
    ({"WEBSITE_INSTANCE_ID": "8d2f0a", "RUN_STATE_STORE": "SQLite"}, "sqlite"),  # an explicit choice wins
])
def test_run_state_store_default_is_table_in_azure_and_sqlite_elsewhere(env, kind):
    assert Settings.from_env(env).run_state_store == kind


def test_open_sqlite_store_from_settings(tmp_path):
    store = open_run_state_store(Settings(run_state_store="sqlite", data_dir=tmp_path / "data",
                                          run_state_ttl_seconds=120))
    try:
        assert isinstance(store, SqliteRunStateStore)
        assert store.path == tmp_path / "data" / "run-state.sqlite3"
        assert store.ttl_seconds == 120
        store.merge(cll_events()[0])
        assert store.get(CLL_CTAS_RUN).event_type == "START"  # real clock: fresh
    finally:
        store.close()


@pytest.mark.azurite
def test_open_table_store_from_settings(azurite):
    store = open_run_state_store(Settings(run_state_store="table", storage_connection=azurite.connection_string))
    try:
        assert store.table.table_name == "olrunstate"
        assert store.merge(cll_events()[0]).event_type == "START"
    finally:
        store.close()


@pytest.mark.parametrize("settings,message", [
    (Settings(run_state_store="redis"), "RUN_STATE_STORE must be one of sqlite, table, not 'redis'"),
    (Settings(run_state_store="table"), "RUN_STATE_STORE=table needs the AzureWebJobsStorage connection string"),
])
def test_bad_store_settings_are_named(settings, message):
    with pytest.raises(ValueError, match=message):
        open_run_state_store(settings)
