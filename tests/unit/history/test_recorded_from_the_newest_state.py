"""A run that writes nothing (FAIL) whose events two instances merge at once: the instance that merged fewer of them
may record last, over the other's record of the newer state. It looks at the run state again after its record and
records the newest state when it finds one, so the history holds what in-order processing gives (the chaos test
found a FAIL run counted under the Spark application, its notebook not merged yet, instead of its notebook)."""

from __future__ import annotations

import copy
from pathlib import Path

from olparser.adapters.history_stores.sqlite_store import SqliteHistoryStore
from olparser.adapters.run_state.sqlite_store import SqliteRunStateStore
from olparser.history.model import ProcessSummary
from olparser.lineage import LineageOptions
from olparser.naming import MappingEngine
from olparser.pipeline import LineagePipeline, WritePolicy
from olparser.runs.merge import instant_seconds
from tests.support import history_scenario as week
from tests.support.rules import MAPPINGS_PATH
from tests.unit.pipeline.fake_catalog import FakeCatalog

ENGINE = MappingEngine.from_path(MAPPINGS_PATH)
FAILED = week.RUNS["r3"]


def failed_run_events() -> tuple[dict, dict, dict]:
    start, running, fail = (copy.deepcopy(e) for e in week.week_events() if e["run"]["runId"] == FAILED)
    assert (start["eventType"], running["eventType"], fail["eventType"]) == ("START", "RUNNING", "FAIL")
    return start, running, fail


def pipeline(store: SqliteRunStateStore, history) -> LineagePipeline:
    return LineagePipeline(
        store, ENGINE, LineageOptions(), FakeCatalog(), WritePolicy(environment_wait_seconds=0), history=history
    )


def in_order(folder: Path):
    history = SqliteHistoryStore(folder / "in-order-history.sqlite3", retention_days=3650)
    store = SqliteRunStateStore(folder / "in-order-runs.sqlite3", ttl_seconds=3650 * 86400)
    for event in failed_run_events():
        pipeline(store, history).process(event, now=instant_seconds(event["eventTime"]) + 1)
    try:
        return history.run(FAILED)
    finally:
        store.close()
        history.close()


def test_the_instance_that_merged_less_records_last_and_the_history_still_holds_the_newest_state(history, tmp_path):
    start, running, fail = failed_run_events()
    now = instant_seconds(fail["eventTime"]) + 1
    store = SqliteRunStateStore(tmp_path / "runs.sqlite3", ttl_seconds=3650 * 86400)
    first, second = pipeline(store, history), pipeline(store, history)
    first.process(start, now=now)
    record = history.record
    records: list[str] = []

    def record_after_the_other_instance(run_record, **kwargs):  # the other instance merges RUNNING and records first
        if not records:
            records.append("older state, held")
            second.process(running, now=now)
        records.append(run_record.facts.owner)
        return record(run_record, **kwargs)

    history.record = record_after_the_other_instance
    try:
        first.process(fail, now=now)  # merged without RUNNING (no notebook yet), recorded after the other's record
    finally:
        history.record = record
        store.close()

    expected = in_order(tmp_path)
    notebook = f"{week.WORKSPACE}/notebooks/Repos/etl/orders"
    assert expected.facts.owner == notebook
    assert history.run(FAILED) == expected
    assert records[1] == notebook  # the other instance's record, of the newer state
    assert records[2] != notebook  # this instance's, of the older one: then again from the newest state
    assert records[3:] == [notebook]
    assert history.process_summaries([week.ORDERS_JOB]) == {week.ORDERS_JOB: ProcessSummary(1, expected.facts.start)}
