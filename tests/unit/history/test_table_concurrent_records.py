"""Two records of one run written at once by two workers (two deliveries of its events, merged into different
states) in the Table history, whose record spans partitions: whatever the interleaving, every process partition
ends holding what the run's record says, and a process a late row of the replaced record counted is answered to be
rewritten in the catalog. (The chaos test found it: a FAIL run counted in a process its record no longer had.)"""

from __future__ import annotations

import threading
import uuid
from typing import Callable

import pytest

from olparser.adapters.history_stores.table_store import TableHistoryStore
from olparser.history.model import ProcessSummary, RunRecord
from tests.support.history_records import DAY, T0, counted_table, record

pytestmark = pytest.mark.azurite

NOW = T0 + 10 * DAY
EARLY = record("run-1", T0, T0 + 60, process="early")  # the run as its first events tell it
LATE = record("run-1", T0, T0 + 60, process="late")  # the same run once its notebook is known
EARLY_PROCESS, LATE_PROCESS = EARLY.processes[0].qualified_name, LATE.processes[0].qualified_name


@pytest.fixture
def two_workers(azurite):
    name = f"hist{uuid.uuid4().hex[:12]}"
    stores = [TableHistoryStore(counted_table(azurite.connection_string, name)[0], retention_days=30) for _ in "ab"]
    yield stores
    for store in stores:
        store.close()


def paused_before(store: TableHistoryStore, process: str) -> tuple[threading.Event, threading.Event]:
    """The store's record stops before it writes `process`'s partition until `go` is set."""
    reached, go = threading.Event(), threading.Event()
    update = store._update_process

    def update_process(name: str, *args: object, **kwargs: object) -> bool:
        if name == process and not reached.is_set():
            reached.set()
            assert go.wait(30)
        return update(name, *args, **kwargs)  # type: ignore[arg-type]

    store._update_process = update_process  # type: ignore[method-assign]
    return reached, go


def interleaved(
    stalled: TableHistoryStore,
    stalled_at: str,
    stalled_work: Callable[[], dict[str, frozenset[str]]],
    other: TableHistoryStore,
    other_record: RunRecord,
) -> tuple[dict[str, frozenset[str]], frozenset[str]]:
    """`stalled_work` on its own thread (record and refreshed on one thread, as the runner calls them), stalled
    before `stalled`'s record writes the partition of process `stalled_at`; meanwhile `other` records and refreshes
    `other_record` from start to end. Answers what each said."""
    reached, go = paused_before(stalled, stalled_at)
    answers: dict[str, frozenset[str]] = {}
    thread = threading.Thread(target=lambda: answers.update(stalled_work()))
    thread.start()
    assert reached.wait(30)
    try:
        other_answer = other.refreshed("run-1", other.record(other_record, now=NOW))
    finally:
        go.set()
        thread.join(30)
    return answers, other_answer


def record_then_refresh(store: TableHistoryStore, record: RunRecord) -> Callable[[], dict[str, frozenset[str]]]:
    def work() -> dict[str, frozenset[str]]:
        recorded = store.record(record, now=NOW)
        return {"recorded": recorded, "again": store.refreshed("run-1", recorded)}

    return work


def test_a_record_replaced_while_its_rows_were_written_leaves_no_count_behind(two_workers):
    """Worker a writes the run's row, then stalls before its process row; worker b records the run as it now is
    (another process) from start to end; a's process row lands after b's pass. a finds its record replaced when
    it marks the processes rewritten, takes its row back and answers the process to rewrite."""
    a, b = two_workers
    answers, other_answer = interleaved(a, EARLY_PROCESS, record_then_refresh(a, EARLY), b, LATE)

    assert other_answer == frozenset()
    assert answers == {"recorded": frozenset({EARLY_PROCESS}), "again": frozenset({EARLY_PROCESS})}
    assert a.run("run-1") == LATE
    assert a.process_summaries([EARLY_PROCESS, LATE_PROCESS]) == {LATE_PROCESS: ProcessSummary(1, T0)}


def test_a_record_that_replaced_the_other_one_stands_and_the_other_takes_its_rows_back(two_workers):
    """The other way round: b's record is replaced by a's, written after b read nothing of it; b, stalled, writes
    its process row after a's pass, then takes it back."""
    a, b = two_workers
    answers, other_answer = interleaved(b, LATE_PROCESS, record_then_refresh(b, LATE), a, EARLY)

    assert other_answer == frozenset()
    assert answers == {"recorded": frozenset({LATE_PROCESS}), "again": frozenset({LATE_PROCESS})}
    assert a.run("run-1") == EARLY
    assert a.process_summaries([EARLY_PROCESS, LATE_PROCESS]) == {EARLY_PROCESS: ProcessSummary(1, T0)}


def test_records_without_interleaving_answer_nothing_more_to_rewrite(two_workers):
    a, b = two_workers
    assert a.refreshed("run-1", a.record(EARLY, now=NOW)) == frozenset()
    assert b.refreshed("run-1", b.record(LATE, now=NOW)) == frozenset()
    assert a.process_summaries([EARLY_PROCESS, LATE_PROCESS]) == {LATE_PROCESS: ProcessSummary(1, T0)}


def test_the_same_thread_recording_the_newer_state_next_takes_back_what_its_replaced_record_wrote_late(two_workers):
    """The runner's way after a stale commit: a's record is replaced while it writes (b recorded the newer state),
    then a records that newer state itself before any `refreshed`: the run's row already holds it, complete, and
    a's late process row is taken back there, its process answered to be rewritten."""
    a, b = two_workers

    def stale_then_newer() -> dict[str, frozenset[str]]:
        return {"stale": a.record(EARLY, now=NOW), "newer": a.record(LATE, now=NOW)}

    answers, other_answer = interleaved(a, EARLY_PROCESS, stale_then_newer, b, LATE)

    assert other_answer == frozenset()
    assert answers == {"stale": frozenset({EARLY_PROCESS}), "newer": frozenset({EARLY_PROCESS})}
    assert a.run("run-1") == LATE
    assert a.process_summaries([EARLY_PROCESS, LATE_PROCESS]) == {LATE_PROCESS: ProcessSummary(1, T0)}
