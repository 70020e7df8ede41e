"""One contract for both run-history stores (SQLite file, Azure Table storage on Azurite): records read back as
written, a replay changes nothing, a newer record of a run replaces the old one (no duplicate row anywhere), the
process summaries are exact, old runs are not recorded and are purged, and a window read finds long and open runs."""

from __future__ import annotations

from olparser.history.model import ProcessRun, ProcessSummary, RunFacts
from olparser.history.store import slim
from olparser.history.window import Window
from tests.support.history_records import DAY, LAKE, RETENTION_DAYS, T0, dataset, record

NOW = T0 + 10 * DAY
ORDERS_PROCESS = "databricks://h/notebooks/orders/processes/curated/orders"
WHOLE = Window(T0 - DAY, T0 + 20 * DAY)


def accesses(history, name: str, window: Window = WHOLE) -> list[tuple]:
    return [
        (a.dataset.qualified_name[len(LAKE) + 1 :], a.access, a.run.run_id, a.run.status, a.run.end)
        for a in history.dataset_accesses(f"{LAKE}/{name}", window, 1000)
    ]


def process_runs(history, window: Window = WHOLE) -> list[tuple]:
    return [
        (facts.run_id, facts.status, [d.qualified_name[len(LAKE) + 1 :] for d in run.inputs])
        for facts, run in history.process_runs(ORDERS_PROCESS, window, 1000)
    ]


def test_a_record_reads_back_from_every_side(history):
    first = record("run-1", T0 + 3600, T0 + 3660, inputs=("raw/orders", "raw/customers"))
    assert history.record(first, now=NOW) == {ORDERS_PROCESS}
    assert history.run("run-1") == first
    assert history.run("run-2") is None
    assert accesses(history, "raw/customers") == [("raw/customers", "read", "run-1", "COMPLETE", T0 + 3660)]
    assert accesses(history, "curated/orders") == [("curated/orders", "write", "run-1", "COMPLETE", T0 + 3660)]
    (found,) = history.dataset_accesses(f"{LAKE}/raw/orders", WHOLE, 10)
    assert (found.dataset, found.process, found.process_type, found.run) == (
        dataset("raw/orders"),
        ORDERS_PROCESS,
        "databricks_process",
        slim(first.facts),
    )
    assert found.run.metadata == {"user": "etl@contoso.com"}  # index rows keep the slim facts, the run row all
    assert history.process_runs(ORDERS_PROCESS, WHOLE, 10) == [(slim(first.facts), first.processes[0])]
    assert history.process_summaries([ORDERS_PROCESS, "unknown"]) == {ORDERS_PROCESS: ProcessSummary(1, T0 + 3600)}
    assert history.newest_access(f"{LAKE}/raw/orders").run.run_id == "run-1"
    assert history.newest_access(f"{LAKE}/raw/other") is None


def test_a_replay_changes_nothing_and_answers_no_change(history):
    first = record("run-1", T0, T0 + 60)
    history.record(first, now=NOW)
    history.refreshed("run-1", {ORDERS_PROCESS})
    assert history.record(first, now=NOW) == frozenset()
    assert accesses(history, "raw/orders") == [("raw/orders", "read", "run-1", "COMPLETE", T0 + 60)]
    assert history.process_summaries([ORDERS_PROCESS]) == {ORDERS_PROCESS: ProcessSummary(1, T0)}


def test_changes_are_answered_again_until_the_catalog_copies_are_refreshed(history):
    # a worker that dies between the record and the catalog's rewrite: the redelivery writes the same record again
    first = record("run-1", T0, T0 + 60)
    assert history.record(first, now=NOW) == {ORDERS_PROCESS}
    assert history.record(first, now=NOW) == {ORDERS_PROCESS}
    shell = "databricks://h/notebooks/databricks_shell/processes/curated/orders"
    moved = record("run-1", T0, T0 + 60, process="databricks_shell")
    assert history.record(moved, now=NOW) == {ORDERS_PROCESS, shell}  # left one, joined the other
    history.refreshed("run-1", {shell, "databricks://h/never/changed"})
    assert history.record(moved, now=NOW) == {ORDERS_PROCESS}
    history.refreshed("run-1", {ORDERS_PROCESS})
    assert history.record(moved, now=NOW) == frozenset()
    history.refreshed("run-2", {ORDERS_PROCESS})  # a run the history does not hold: nothing to do
    assert history.process_summaries([shell, ORDERS_PROCESS]) == {shell: ProcessSummary(1, T0)}


def test_a_caller_that_rewrites_every_process_itself_keeps_nothing_for_later(history):
    first = record("run-1", T0, T0 + 60)
    assert history.record(first, now=NOW, keep_changes=False) == {ORDERS_PROCESS}
    assert history.record(first, now=NOW) == frozenset()


def test_a_run_whose_start_and_status_became_known_later_replaces_its_rows(history):
    # written as INCOMPLETE first (no START, no terminal event), then its START and COMPLETE arrive
    incomplete = record("run-1", T0 + 100, None, status="INCOMPLETE", inputs=("raw/orders", "raw/customers"))
    history.record(incomplete, now=NOW)
    complete = record("run-1", T0 + 40, T0 + 160, inputs=("raw/orders",))
    assert history.record(complete, now=NOW) == {ORDERS_PROCESS}  # its start moved
    assert accesses(history, "raw/orders") == [("raw/orders", "read", "run-1", "COMPLETE", T0 + 160)]
    assert accesses(history, "raw/customers") == []  # no longer read: its row is gone
    assert process_runs(history) == [("run-1", "COMPLETE", ["raw/orders"])]
    assert history.process_summaries([ORDERS_PROCESS]) == {ORDERS_PROCESS: ProcessSummary(1, T0 + 40)}
    assert history.run("run-1") == complete


def test_a_run_that_moves_to_another_process_leaves_the_old_one(history):
    interim = record("run-1", T0, T0 + 2, process="databricks_shell")
    history.record(interim, now=NOW)
    history.record(record("run-2", T0 + DAY, T0 + DAY + 2, process="databricks_shell"), now=NOW)
    shell = "databricks://h/notebooks/databricks_shell/processes/curated/orders"
    assert history.process_summaries([shell]) == {shell: ProcessSummary(2, T0)}
    final = record("run-1", T0, T0 + 2)
    assert history.record(final, now=NOW) == {shell, ORDERS_PROCESS}
    assert history.process_summaries([shell, ORDERS_PROCESS]) == {
        shell: ProcessSummary(1, T0 + DAY),
        ORDERS_PROCESS: ProcessSummary(1, T0),
    }
    assert [(a.run.run_id, a.process) for a in history.dataset_accesses(f"{LAKE}/raw/orders", WHOLE, 10)] == [
        ("run-2", shell),
        ("run-1", ORDERS_PROCESS),
    ]


def test_summaries_count_every_run_and_follow_the_earliest(history):
    for number in range(10):  # more runs than a Table summary remembers starts of
        history.record(record(f"run-{number}", T0 + number * 3600, T0 + number * 3600 + 60), now=NOW)
    assert history.process_summaries([ORDERS_PROCESS]) == {ORDERS_PROCESS: ProcessSummary(10, T0)}
    for number in range(9):  # the earliest runs move after the others, one by one
        history.record(record(f"run-{number}", T0 + DAY + number * 60, T0 + DAY + number * 60 + 60), now=NOW)
        assert history.process_summaries([ORDERS_PROCESS]) == {
            ORDERS_PROCESS: ProcessSummary(10, T0 + (number + 1) * 3600)
        }


def test_newest_runs_come_first_and_the_limit_holds(history):
    for number in range(5):
        history.record(record(f"run-{number}", T0 + number * 3600, T0 + number * 3600 + 60), now=NOW)
    history.record(record("run-open", T0 + 2.5 * 3600, None, status="INCOMPLETE"), now=NOW)
    found = [a.run.run_id for a in history.dataset_accesses(f"{LAKE}/raw/orders", WHOLE, 1000)]
    assert found == ["run-4", "run-3", "run-open", "run-2", "run-1", "run-0"]
    assert [a.run.run_id for a in history.dataset_accesses(f"{LAKE}/raw/orders", WHOLE, 3)] == [
        "run-4",
        "run-3",
        "run-open",
    ]
    assert [f.run_id for f, _ in history.process_runs(ORDERS_PROCESS, WHOLE, 2)] == ["run-4", "run-3"]
    assert history.newest_access(f"{LAKE}/raw/orders").run.run_id == "run-4"


def test_a_window_read_finds_long_runs_and_open_runs(history):
    history.record(record("short", T0, T0 + 60), now=NOW)
    history.record(record("long", T0 - 2 * DAY, T0 + 3 * DAY), now=NOW)  # three days before the window, still on
    history.record(record("open", T0 - 5 * DAY, None, status="INCOMPLETE"), now=NOW)
    history.record(record("later", T0 + 6 * DAY, T0 + 6 * DAY + 60), now=NOW)
    window = Window(T0 + 2 * DAY, T0 + 4 * DAY)
    found = {
        a.run.run_id
        for a in history.dataset_accesses(f"{LAKE}/raw/orders", window, 1000)
        if window.overlaps(a.run.start, a.run.end)
    }
    assert found == {"long", "open"}
    assert {
        f.run_id for f, _ in history.process_runs(ORDERS_PROCESS, window, 1000) if window.overlaps(f.start, f.end)
    } == {"long", "open"}


def test_runs_older_than_the_retention_are_not_recorded_and_are_purged(history):
    ancient = record("ancient", NOW - (RETENTION_DAYS + 1) * DAY, NOW - (RETENTION_DAYS + 1) * DAY + 60)
    assert history.record(ancient, now=NOW) == frozenset()
    assert history.run("ancient") is None
    old = record("old", T0, T0 + 60, inputs=("raw/orders", "raw/customers"))
    recent = record("recent", T0 + 5 * DAY, T0 + 5 * DAY + 60)
    history.record(old, now=NOW)
    history.record(recent, now=NOW)
    assert history.purge(now=T0 + (RETENTION_DAYS - 1) * DAY) == 0  # nothing is old enough yet
    assert history.purge(now=T0 + (RETENTION_DAYS + 2) * DAY) == 1
    assert history.run("old") is None and history.run("recent") == recent
    assert accesses(history, "raw/customers") == []
    assert [a[2] for a in accesses(history, "raw/orders")] == ["recent"]
    assert process_runs(history) == [("recent", "COMPLETE", ["raw/orders"])]
    assert history.process_summaries([ORDERS_PROCESS]) == {ORDERS_PROCESS: ProcessSummary(1, T0 + 5 * DAY)}
    assert history.purge(now=T0 + (RETENTION_DAYS + 2) * DAY) == 0


def test_a_run_of_two_processes_records_both_with_their_column_lineage(history):
    detail = '{"dataset":[],"fields":[{"field":"total","inputFields":[]}]}'
    audit = ProcessRun(
        "databricks://h/notebooks/orders/processes/audit/orders",
        "databricks_process",
        "audit",
        (dataset("raw/orders"),),
        (dataset("audit/orders"),),
        '[]',
        detail,
    )
    both = record("run-1", T0, T0 + 60, extra_processes=(audit,))
    assert history.record(both, now=NOW) == {ORDERS_PROCESS, audit.qualified_name}
    assert sorted((a.process, a.access) for a in history.dataset_accesses(f"{LAKE}/raw/orders", WHOLE, 10)) == [
        (audit.qualified_name, "read"),
        (ORDERS_PROCESS, "read"),
    ]
    assert history.process_runs(audit.qualified_name, WHOLE, 10) == [(slim(both.facts), audit)]
    assert history.run("run-1").processes[1].column_lineage_detail == detail


def test_facts_of_an_open_run_have_no_end():
    facts = RunFacts("r", "j", "o", "t", T0, None, "INCOMPLETE", {"user": "u", "errorMessage": "x"})
    assert slim(facts) == RunFacts("r", "j", "o", "t", T0, None, "INCOMPLETE", {"user": "u"})
    assert facts.duration_ms is None


def test_one_access_kind_is_read_alone(history):
    for number in range(3):  # three jobs read the calendar; one writes it
        history.record(
            record(
                f"read-{number}",
                T0 + number,
                T0 + number + 1,
                inputs=("ref/calendar",),
                output=f"out/{number}",
                process=f"p{number}",
            ),
            now=NOW,
        )
    history.record(
        record("load", T0 + 10, T0 + 11, inputs=("raw/calendar",), output="ref/calendar", process="load"), now=NOW
    )
    calendar = f"{LAKE}/ref/calendar"
    assert [a.run.run_id for a in history.dataset_accesses(calendar, WHOLE, 100, "write")] == ["load"]
    assert [a.run.run_id for a in history.dataset_accesses(calendar, WHOLE, 100, "read")] == [
        "read-2",
        "read-1",
        "read-0",
    ]
    assert [a.run.run_id for a in history.dataset_accesses(calendar, WHOLE, 100)] == [
        "load",
        "read-2",
        "read-1",
        "read-0",
    ]
    assert history.newest_access(calendar).run.run_id == "load"
