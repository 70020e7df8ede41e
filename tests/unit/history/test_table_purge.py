"""The run history's purge and its records' completeness on Table storage (Azurite), without a purge row per run
(issue #34: one request less per new run). The purge finds old runs by their `start` (a scan of the run partitions,
once a day per instance); rows the previous release wrote (a `purge-{day}` row per run, naming the record whose rows
are all written) are still read and deleted; an incomplete row of this release is written again, idempotently."""

from __future__ import annotations

import pytest
from azure.data.tables import UpdateMode

from olparser.adapters.history_stores.table_store import LAYOUT, TableHistoryStore
from olparser.history.model import ProcessSummary
from tests.support.history_records import DAY, RETENTION_DAYS, T0, counted_table, record

pytestmark = pytest.mark.azurite

NOW = T0 + 10 * DAY


@pytest.fixture
def table_history(azurite):
    table, counted = counted_table(azurite.connection_string)
    store = TableHistoryStore(table, retention_days=RETENTION_DAYS)
    yield store, table, counted
    store.close()


def _rows(table) -> dict[tuple[str, str], dict]:
    return {(e["PartitionKey"], e["RowKey"]): dict(e) for e in table.list_entities()}


def _as_the_previous_release_left_it(store: TableHistoryStore, table, run_id: str, *, complete: bool = True) -> None:
    """The run's row without this release's layout mark, and the purge row the previous release wrote under its day."""
    keys = store._run_keys(run_id)
    row = table.get_entity(keys["PartitionKey"], keys["RowKey"])
    del row[LAYOUT]
    row["complete"] = complete
    table.upsert_entity(row, mode=UpdateMode.REPLACE)
    table.create_entity(
        {
            "PartitionKey": f"purge-{row['day']}",
            "RowKey": keys["RowKey"],
            "run_id": run_id,
            "digest": row["digest"],
        }
    )


def test_a_record_writes_no_purge_row(table_history):
    store, table, _ = table_history
    store.record(record("run-1", T0, T0 + 60), now=NOW, keep_changes=False)
    partitions = sorted({p for p, _ in _rows(table)})
    assert [p for p in partitions if p.startswith("purge-")] == []
    assert sorted(p.split("-")[0] for p in partitions) == ["d", "d", "p", "run", "stats"]  # 2 datasets, 1 process


def test_the_purge_scans_the_run_partitions_once_a_day(table_history):
    store, table, counted = table_history
    for n in range(3):  # three runs on three days
        store.record(record(f"run-{n}", T0 + n * DAY, T0 + n * DAY + 60), now=NOW, keep_changes=False)
    before = _rows(table)
    counted.requests = 0
    # the retention ends on day 1 at noon: only the run of day 0 started before that day
    assert store.purge(now=T0 + DAY + DAY / 2 + RETENTION_DAYS * DAY) == 1
    # the legacy purge rows' query, the run partitions' scan, then the run: its row read, its two access rows, its
    # process partition (the summary and marker read, one transaction), its row deleted
    assert counted.requests == 2 + 1 + 2 + 2 + 1
    assert store.run("run-0") is None and store.run("run-1") is not None
    assert len(_rows(table)) == len(before) - 5  # its row, two access rows, its process row and its marker

    counted.requests = 0
    assert store.purge(now=T0 + DAY + DAY * 0.9 + RETENTION_DAYS * DAY) == 0  # the same day: no request
    assert counted.requests == 0
    assert store.purge(now=T0 + 2 * DAY + DAY / 2 + RETENTION_DAYS * DAY) == 1  # the next day: run-1
    assert store.run("run-1") is None and store.run("run-2") is not None


def test_a_purge_cut_short_by_its_limit_goes_on_at_the_next_tick(table_history):
    store, _, _ = table_history
    for n in range(3):
        store.record(record(f"run-{n}", T0 + n * 60, T0 + n * 60 + 30), now=NOW, keep_changes=False)
    after = T0 + 2 * DAY + RETENTION_DAYS * DAY
    assert store.purge(now=after, limit=2) == 2
    assert store.purge(now=after, limit=2) == 1
    assert store.purge(now=after, limit=2) == 0
    assert [store.run(f"run-{n}") for n in range(3)] == [None, None, None]


def test_runs_the_previous_release_recorded_are_purged_with_their_purge_rows(table_history):
    store, table, _ = table_history
    store.record(record("old", T0, T0 + 60), now=NOW, keep_changes=False)
    store.record(record("new", T0 + 5 * DAY, T0 + 5 * DAY + 60), now=NOW, keep_changes=False)
    _as_the_previous_release_left_it(store, table, "old")
    _as_the_previous_release_left_it(store, table, "new")
    assert store.purge(now=T0 + 2 * DAY + RETENTION_DAYS * DAY) == 1
    assert store.run("old") is None and store.run("new") is not None
    assert sorted(p for p, _ in _rows(table) if p.startswith("purge-")) == ["purge-20260307"]  # the new run's
    assert store.purge(now=T0 + 7 * DAY + RETENTION_DAYS * DAY) == 1
    assert _rows(table) == {
        ("stats", "max-duration"): {"PartitionKey": "stats", "RowKey": "max-duration", "value": 60.0}
    }


def test_an_incomplete_row_of_the_previous_release_whose_purge_row_names_it_is_only_marked(table_history):
    """A worker of the previous release died after the purge row: its record's rows are all written."""
    store, table, counted = table_history
    run = record("run-1", T0, T0 + 60)
    assert store.record(run, now=NOW) == {run.processes[0].qualified_name}  # waits for `refreshed`
    _as_the_previous_release_left_it(store, table, "run-1", complete=False)
    replayed = TableHistoryStore(table, retention_days=RETENTION_DAYS)  # another worker: nothing remembered
    counted.requests = 0
    assert replayed.record(run, now=NOW) == {run.processes[0].qualified_name}
    # a run this instance never recorded is taken to be new: its row's create fails, it is read, then the purge row
    # that names its record: nothing written again
    assert counted.requests == 3
    replayed.refreshed("run-1", {run.processes[0].qualified_name})
    assert table.get_entity(*store._run_keys("run-1").values())["complete"] is True


def test_an_incomplete_row_of_this_release_is_written_again_to_the_same_rows(table_history):
    """A worker died after the record, before the catalog showed the counts (`refreshed`): the redelivery's record
    writes the same rows again (every write idempotent) and still answers the process to refresh."""
    store, table, _ = table_history
    run = record("run-1", T0, T0 + 60, inputs=("raw/orders", "raw/customers"))
    assert store.record(run, now=NOW) == {run.processes[0].qualified_name}
    left = _rows(table)
    replayed = TableHistoryStore(table, retention_days=RETENTION_DAYS)
    assert replayed.record(run, now=NOW) == {run.processes[0].qualified_name}
    assert {k: {n: v for n, v in row.items() if n != "Timestamp"} for k, row in _rows(table).items()} == {
        k: {n: v for n, v in row.items() if n != "Timestamp"} for k, row in left.items()
    }
    replayed.refreshed("run-1", {run.processes[0].qualified_name})
    assert replayed.process_summaries([run.processes[0].qualified_name]) == {
        run.processes[0].qualified_name: ProcessSummary(1, T0)
    }


def test_a_row_written_again_meanwhile_by_a_writer_of_the_same_record_is_marked_complete_at_the_refresh(table_history):
    """Two batches of one streaming window (one history record) handled at once: the second records the window while
    the first waits for the catalog. The first's `refreshed` then finds the row changed; it wrote every row of that
    record, so it still marks it complete — else every next batch of the window would find it incomplete, write it
    again and rewrite the process in the catalog (tests/e2e/test_streaming.py: 84 writes instead of about 15)."""
    store, table, _ = table_history
    window = record("stream-1", T0, T0 + 600)
    name = window.processes[0].qualified_name
    assert store.record(window, now=NOW) == {name}  # the first batch: waits for `refreshed`
    second = TableHistoryStore(table, retention_days=RETENTION_DAYS)
    assert second.record(window, now=NOW) == {name}  # the second batch, meanwhile: the row is written again
    store.refreshed("stream-1", {name})  # the first batch's catalog write is done
    assert table.get_entity(*store._run_keys("stream-1").values())["complete"] is True
    assert second.record(window, now=NOW) == frozenset()  # the next batch: nothing to rewrite
    second.close()
