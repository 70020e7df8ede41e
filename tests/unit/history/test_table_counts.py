"""A process's counts (runs held, earliest start) as the Table history answers them right after a record (issue #34:
the runner's look under the process lock is no request): the summary this instance last wrote for the process —
its record's, or a newer record's of another thread — and a read for anything else. Azurite, requests counted."""

from __future__ import annotations

import threading
import uuid

import pytest

from olparser.adapters.history_stores.table_store import TableHistoryStore
from olparser.history.model import ProcessSummary
from tests.support.history_records import DAY, T0, counted_table, record

pytestmark = pytest.mark.azurite

NOW = T0 + 10 * DAY
PROCESS = record("x", T0, T0 + 1).processes[0].qualified_name


@pytest.fixture
def two_instances(azurite):
    """Two workers' stores over one history table, each with its own request count."""
    name = f"hist{uuid.uuid4().hex[:12]}"
    stores = []
    for _ in range(2):
        table, counted = counted_table(azurite.connection_string, name)
        stores.append((TableHistoryStore(table, retention_days=30), counted))
    yield stores
    for store, _ in stores:
        store.close()


def test_the_counts_after_a_record_cost_no_request_however_often_they_are_looked_at(two_instances):
    (store, counted), _ = two_instances
    store.record(record("run-1", T0, T0 + 60), now=NOW)
    counted.requests = 0
    for _ in range(2):  # the runner's first look (its fingerprint), then its look under the process lock
        assert store.process_summaries([PROCESS], recorded="run-1") == {PROCESS: ProcessSummary(1, T0)}
    assert counted.requests == 0
    assert store.process_summaries([PROCESS]) == {PROCESS: ProcessSummary(1, T0)}  # anyone else: read
    assert counted.requests == 1


def test_another_threads_newer_record_of_the_process_is_counted_without_a_read(two_instances):
    (store, counted), _ = two_instances
    store.record(record("run-1", T0, T0 + 60), now=NOW)
    other = threading.Thread(target=store.record, args=(record("run-2", T0 - DAY, T0 - DAY + 60),), kwargs={"now": NOW})
    other.start()
    other.join()
    counted.requests = 0
    assert store.process_summaries([PROCESS], recorded="run-1") == {PROCESS: ProcessSummary(2, T0 - DAY)}
    assert counted.requests == 0


def test_another_instances_record_in_between_shows_in_the_next_record(two_instances):
    """What a worker cannot know without a read: another worker's record of the same process between its record
    and its upload. Its next record of the process finds the summary changed (the batch is conditional), reads it,
    and counts every run."""
    (store, _), (other, _) = two_instances
    store.record(record("run-1", T0, T0 + 60), now=NOW)
    other.record(record("run-2", T0 + 3600, T0 + 3660), now=NOW)
    assert store.process_summaries([PROCESS], recorded="run-1") == {PROCESS: ProcessSummary(1, T0)}
    store.record(record("run-3", T0 + 7200, T0 + 7260), now=NOW)
    assert store.process_summaries([PROCESS], recorded="run-3") == {PROCESS: ProcessSummary(3, T0)}


def test_a_record_that_takes_the_run_out_of_its_only_process_answers_no_counts(two_instances):
    (store, counted), _ = two_instances
    store.record(record("run-1", T0, T0 + 60), now=NOW)
    store.record(record("run-1", T0, T0 + 60, process="shell", output="curated/shell"), now=NOW)
    counted.requests = 0
    assert store.process_summaries([PROCESS], recorded="run-1") == {}
    assert counted.requests == 0
