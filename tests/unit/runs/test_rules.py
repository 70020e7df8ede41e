"""The run rules the live path and the Spark paths share: keys, order, the newest static declaration, decide."""

from __future__ import annotations

import pytest

from olparser.lineage import LineageOptions
from olparser.pipeline import Decision, WritePolicy, decide
from olparser.runs import merge_event, snapshot_from_static
from olparser.runs.merge import merge_events
from olparser.runs.rules import RunStatus, is_static_key, newest_static, run_key, run_order, static_key
from tests.support import databricks_runs as dr

JOB = {
    "eventTime": "2026-01-01T00:00:00Z",
    "producer": "p",
    "schemaURL": "s",
    "job": {"namespace": "adf", "name": "copy_orders"},
    "inputs": [{"namespace": "kafka://b:9092", "name": "a"}],
}
DATASET = {
    "eventTime": "2026-01-01T00:00:00Z",
    "producer": "p",
    "schemaURL": "s",
    "dataset": {"namespace": "adf", "name": "copy_orders"},
}


def test_a_static_declaration_is_keyed_by_what_it_declares_not_by_its_bytes():
    redeclared = {**JOB, "eventTime": "2026-01-02T00:00:00Z", "inputs": []}
    assert run_key(JOB) == run_key(redeclared) == static_key(JOB)
    assert run_key(DATASET) != run_key(JOB)  # a dataset and a job of the same name are two declarations
    assert is_static_key(run_key(JOB)) and not is_static_key("0190f000-0000-7000-8000-000000000001")
    assert run_key({"run": {"runId": "r-1"}, "job": {}}) == "r-1"
    with pytest.raises(ValueError, match="no run.runId"):
        run_key({"run": {"runId": ""}, "job": {}})


def test_the_newest_declaration_is_the_one_in_order_processing_leaves():
    newer = {**JOB, "eventTime": "2026-01-01T00:00:01+00:00", "inputs": []}
    unreadable = {**JOB, "eventTime": "yesterday"}
    assert newest_static([newer, JOB, unreadable]) is newer
    assert newest_static([unreadable, JOB]) is JOB


def test_runs_are_ordered_by_their_newest_event_time_then_by_key_and_static_lineage_has_no_order():
    run = merge_events(dr.events(dr.orders_run(1)))
    assert run_order("k", run) == (dr.T0.timestamp() + 2, "k")
    assert run_order("static:x", snapshot_from_static(JOB)) is None


@pytest.mark.parametrize(
    ("events", "policy", "decision"),
    [
        (lambda e: e[:1], WritePolicy(), Decision.WAIT),  # START only: not finished
        (lambda e: e, WritePolicy(), Decision.WRITE),  # START, RUNNING (environment), COMPLETE
        (lambda e: [e[0], e[2]], WritePolicy(), Decision.HOLD),  # COMPLETE before the RUNNING with the environment
        (lambda e: [e[0], e[2]], WritePolicy().complete(), Decision.WRITE),  # a backfill: nothing more will come
        (lambda e: [e[0], {**e[2], "eventType": "FAIL"}], WritePolicy(), Decision.SKIP),
    ],
)
def test_decide(events, policy, decision):
    run = merge_events(events(dr.events(dr.orders_run(1))))
    assert decide(run, policy, LineageOptions()) is decision


def test_a_failed_run_is_written_with_lineage_on_failure_and_static_lineage_always():
    start, _, complete = dr.events(dr.orders_run(1))
    failed = merge_event(merge_event(None, start), {**complete, "eventType": "FAIL"})
    assert (
        decide(failed, WritePolicy(environment_wait_seconds=0), LineageOptions(lineage_on_failure=True))
        is Decision.WRITE
    )
    assert decide(snapshot_from_static(JOB), WritePolicy(), LineageOptions()) is Decision.WRITE
    assert [str(s) for s in RunStatus] == [
        "written",
        "unchanged",
        "waiting",
        "held",
        "skipped",
        "superseded",
        "planned",
    ]
