"""The week of tests/history_scenario.py through the real runner (run state in SQLite, the catalog a boundary fake)
into each history store: the window queries answer exactly the runs and edges of each period; replays, retries and
any order give the same history; the catalog's processes carry the newest run's system metadata and the history's
run counts; a failed run is recorded but writes nothing; retention purges."""

from __future__ import annotations

from pathlib import Path

import pytest

from olparser.adapters.run_state.sqlite_store import SqliteRunStateStore
from olparser.history.api import lineage_answer, run_answer
from olparser.history.model import ProcessSummary
from olparser.lineage import LineageOptions
from olparser.naming import MappingEngine
from olparser.pipeline import LineagePipeline, WritePolicy
from olparser.runs.merge import instant_seconds
from tests.support import history_scenario as week
from tests.support.rules import MAPPINGS_PATH
from tests.unit.pipeline.fake_catalog import FakeCatalog

ENGINE = MappingEngine.from_path(MAPPINGS_PATH)
SATURDAY_NOON = instant_seconds(week.iso(5, 12))


def run_week(history, folder: Path, events=None, catalog: FakeCatalog | None = None) -> FakeCatalog:
    """Process `events` (default: the week in emission order), each at its own eventTime, then the timer on
    Saturday noon (r5 is written as INCOMPLETE)."""
    catalog = catalog or FakeCatalog()
    store = SqliteRunStateStore(folder / "runs.sqlite3", ttl_seconds=30 * 86400)
    pipeline = LineagePipeline(
        store, ENGINE, LineageOptions(), catalog, WritePolicy(incomplete_run_seconds=3600), history=history
    )
    for event in week.week_events() if events is None else events:
        pipeline.process(event, now=instant_seconds(event["eventTime"]) + 1)
    pipeline.write_due(now=SATURDAY_NOON)
    store.close()
    return catalog


def answer(history, qualified_name: str, window: tuple[str, str], direction: str, depth: int = 1, **extra: str) -> dict:
    status, body = lineage_answer(
        history,
        {
            "qualifiedName": qualified_name,
            "since": window[0],
            "until": window[1],
            "direction": direction,
            "depth": str(depth),
            **extra,
        },
        SATURDAY_NOON,
    )
    assert status == 200, body
    return body


@pytest.mark.parametrize("window", list(week.UPSTREAM_OF_CURATED), ids=lambda w: w[0][:10])
def test_upstream_of_curated_orders_in_each_period(history, tmp_path, window):
    run_week(history, tmp_path)
    body = answer(history, week.CURATED, window, "upstream")
    assert week.view(body) == week.UPSTREAM_OF_CURATED[window]
    assert (body["since"], body["until"], body["truncated"]) == (
        f"{window[0][:-1]}.000Z",
        f"{window[1][:-1]}.000Z",
        None,
    )


def test_downstream_and_both_directions(history, tmp_path):
    run_week(history, tmp_path)
    assert week.view(answer(history, week.CUSTOMERS, week.WEEK, "downstream", 2)) == week.DOWNSTREAM_OF_CUSTOMERS_WEEK
    assert week.view(answer(history, week.CURATED, week.THURSDAY, "both")) == week.BOTH_OF_CURATED_THURSDAY


def test_column_lineage_in_a_window(history, tmp_path):
    run_week(history, tmp_path)
    assert (
        week.column_view(answer(history, week.GOLD, week.WEEK, "upstream", 2, column="amount"))
        == week.AMOUNT_OF_GOLD_WEEK
    )
    tuesday = answer(history, week.CURATED, week.TUESDAY, "upstream", column="name")
    assert week.column_view(tuesday) == week.NAME_OF_CURATED_TUESDAY
    assert week.view(tuesday)["datasets"] == {"CUSTOMERS": -1, "CURATED": 0}  # what the column goes through
    assert week.column_view(answer(history, week.CURATED, week.THURSDAY, "upstream", column="name")) == []


def test_a_run_with_its_accesses_and_metadata(history, tmp_path):
    run_week(history, tmp_path)
    status, failed = run_answer(history, week.RUNS["r3"])
    assert status == 200
    assert failed == {
        "runId": week.RUNS["r3"],
        "status": "FAIL",
        "start": "2026-03-04T08:00:00.000Z",
        "end": "2026-03-04T08:00:02.000Z",
        "durationMs": 2000,
        "user": "etl@contoso.com",
        "job": f"{week.dr.JOB_NAMESPACE}/databricks_shell.execute_insert_into_hadoop_fs_relation_command.orders",
        "owner": f"{week.WORKSPACE}/notebooks/Repos/etl/orders",
        "ownerType": "databricks_notebook",
        "metadata": {
            "startTime": "2026-03-04T08:00:00.000Z",
            "endTime": "2026-03-04T08:00:02.000Z",
            "durationMs": 2000,
            "producer": week.dr.PRODUCER,
            "openlineageVersion": "1.23.0",
            "user": "etl@contoso.com",
            "clusterName": "etl-cluster",
            "notebookPath": "/Repos/etl/orders",
            # the parent run as sent: the Spark application (tools/samples/databricks.py), no root
            "parentJobNamespace": week.dr.JOB_NAMESPACE,
            "parentJobName": "databricks_shell",
            "parentRunId": "0190f000-0000-7000-8000-000000000000",
        },
        "processes": [
            {
                "qualifiedName": week.ORDERS_JOB,
                "typeName": "databricks_process",
                "name": "execute_insert_into_hadoop_fs_relation_command.orders",
                "inputs": [
                    {"qualifiedName": week.CUSTOMERS, "typeName": "azure_datalake_gen2_path"},
                    {"qualifiedName": week.ORDERS, "typeName": "azure_datalake_gen2_path"},
                ],
                "outputs": [{"qualifiedName": week.CURATED, "typeName": "azure_datalake_gen2_path"}],
            }
        ],
        "accesses": [
            {
                "dataset": week.CUSTOMERS,
                "typeName": "azure_datalake_gen2_path",
                "access": "read",
                "process": week.ORDERS_JOB,
            },
            {
                "dataset": week.ORDERS,
                "typeName": "azure_datalake_gen2_path",
                "access": "read",
                "process": week.ORDERS_JOB,
            },
            {
                "dataset": week.CURATED,
                "typeName": "azure_datalake_gen2_path",
                "access": "write",
                "process": week.ORDERS_JOB,
            },
        ],
    }
    status, incomplete = run_answer(history, week.RUNS["r5"])
    assert (incomplete["status"], incomplete["end"], incomplete["durationMs"]) == ("INCOMPLETE", None, None)
    assert run_answer(history, "0190f000-0000-7000-8000-0000000000ff") == (
        404,
        {
            "error": "the run history holds no run 0190f000-0000-7000-8000-0000000000ff (runs are kept "
            "RUN_HISTORY_DAYS days)",
            "path": "runId",
        },
    )


def test_the_catalog_process_carries_the_newest_runs_metadata_and_the_run_count(history, tmp_path):
    catalog = run_week(history, tmp_path)
    process = catalog.entities[("databricks_process", week.ORDERS_JOB)]["attributes"]
    shown = {k: v for k, v in process.items() if k.startswith("lastRun") or k in ("runCount", "firstRunTime")}
    assert shown == {  # r5 (INCOMPLETE, written by the timer) is the newest writer; r3 failed: counted, not written
        "lastRunId": week.RUNS["r5"],
        "lastRunTime": "2026-03-06T08:00:01.000Z",
        "lastRunStatus": "INCOMPLETE",
        "lastRunUser": "etl@contoso.com",
        "lastRunStartTime": "2026-03-06T08:00:00.000Z",
        "lastRunEndTime": "",
        "lastRunDurationMs": None,
        "lastRunClusterId": "",
        "lastRunJobId": "",
        "lastRunJobRunId": "",
        "lastRunApplicationId": "",
        "lastRunSparkVersion": "",
        "lastRunOpenLineageVersion": "1.23.0",
        "lastRunParentJobNamespace": week.dr.JOB_NAMESPACE,
        "lastRunParentJobName": "databricks_shell",
        "lastRunParentRunId": "0190f000-0000-7000-8000-000000000000",
        "lastRunRootJobNamespace": "",
        "lastRunRootJobName": "",
        "lastRunRootRunId": "",
        "lastRunRowsWritten": None,
        "lastRunBytesWritten": None,
        "runCount": 5,
        "firstRunTime": "2026-03-02T08:00:00.000Z",
    }
    assert catalog.entities[("databricks_process", week.REVENUE_JOB)]["attributes"]["runCount"] == 2
    assert history.process_summaries([week.ORDERS_JOB]) == {
        week.ORDERS_JOB: ProcessSummary(5, instant_seconds(week.iso(0, 8)))
    }


def test_replays_retries_and_any_order_give_the_same_history_and_catalog(history, tmp_path):
    catalog = run_week(history, tmp_path)
    queries = [
        (week.CURATED, week.WEEK, "upstream", 1),
        (week.CUSTOMERS, week.WEEK, "downstream", 2),
        (week.CURATED, week.SATURDAY, "both", 1),
    ]
    before = [answer(history, *query) for query in queries]
    events = week.week_events()
    run_week(history, tmp_path, events[::-1] + events, catalog)  # everything again, newest first, then in order
    assert [answer(history, *query) for query in queries] == before
    assert history.process_summaries([week.ORDERS_JOB, week.REVENUE_JOB]) == {
        week.ORDERS_JOB: ProcessSummary(5, instant_seconds(week.iso(0, 8))),
        week.REVENUE_JOB: ProcessSummary(2, instant_seconds(week.iso(1, 9))),
    }


def test_newest_first_in_any_order_builds_the_same_catalog(history, tmp_path):
    in_order = run_week(history, tmp_path / "a")
    (tmp_path / "b").mkdir()
    from olparser.adapters.history_stores.sqlite_store import SqliteHistoryStore

    with SqliteHistoryStore(tmp_path / "b" / "history.sqlite3", retention_days=36500) as other:
        reverse = run_week(other, tmp_path / "b", week.week_events()[::-1])
    assert reverse.state() == in_order.state()


def test_the_last_run_window_and_bad_parameters(history, tmp_path):
    run_week(history, tmp_path)
    status, body = lineage_answer(
        history, {"qualifiedName": week.GOLD, "since": "last-run", "direction": "upstream"}, SATURDAY_NOON
    )
    assert (status, body["since"], body["until"]) == (200, "2026-03-05T09:00:00.000Z", "2026-03-05T09:00:02.000Z")
    assert week.view(body)["processes"] == {"REVENUE_JOB": [("r7", "COMPLETE")]}
    assert lineage_answer(history, {"qualifiedName": f"{week.LAKE}/nothing", "since": "last-run"}, SATURDAY_NOON) == (
        404,
        {"error": f"no run in the history read or wrote {week.LAKE}/nothing", "path": "qualifiedName"},
    )
    for params, path, error in [
        ({}, "qualifiedName", "give ?qualifiedName=... (the dataset's qualifiedName)"),
        (
            {"qualifiedName": "q", "since": "yesterday"},
            "since",
            "since must be an ISO 8601 date or date-time, now, or a duration such as -24h or -7d; got 'yesterday'",
        ),
        (
            {"qualifiedName": "q", "until": "2026-13-01"},
            "until",
            "until must be an ISO 8601 date or date-time, now, or a duration such as -24h or -7d; got '2026-13-01'",
        ),
        ({"qualifiedName": "q", "since": week.iso(3), "until": week.iso(2)}, "since", "since must be before until"),
        (
            {"qualifiedName": "q", "direction": "sideways"},
            "direction",
            "direction must be one of upstream, downstream, both, got 'sideways'",
        ),
        ({"qualifiedName": "q", "depth": "0"}, "depth", "depth must be a whole number from 1 to 10, got '0'"),
        ({"qualifiedName": "q", "depth": "11"}, "depth", "depth must be a whole number from 1 to 10, got '11'"),
        ({"qualifiedName": "q\x00"}, "qualifiedName", "qualifiedName contains a control character"),
        (
            {"qualifiedName": "q", "column": "c" * 4097},
            "column",
            "column is 4097 characters long, more than the limit of 4096",
        ),
    ]:
        assert lineage_answer(history, params, SATURDAY_NOON) == (400, {"error": error, "path": path}), params


def test_relative_times_and_default_window(history, tmp_path):
    run_week(history, tmp_path)
    friday_noon = instant_seconds(week.iso(4, 12))
    status, body = lineage_answer(history, {"qualifiedName": week.CURATED, "direction": "upstream"}, friday_noon)
    assert (body["since"], body["until"]) == ("2026-03-05T12:00:00.000Z", "2026-03-06T12:00:00.000Z")
    assert week.view(body)["processes"] == {"ORDERS_JOB": [("r5", "INCOMPLETE")]}
    status, body = lineage_answer(
        history, {"qualifiedName": week.CURATED, "since": "-3d", "until": "-1d", "direction": "upstream"}, friday_noon
    )
    assert (body["since"], body["until"]) == ("2026-03-03T12:00:00.000Z", "2026-03-05T12:00:00.000Z")
    assert week.view(body)["processes"] == {"ORDERS_JOB": [("r4", "COMPLETE"), ("r3", "FAIL")]}


def test_retention_purges_the_week(history, tmp_path):
    run_week(history, tmp_path)
    assert history.purge(now=instant_seconds(week.iso(3)) + 30 * 86400) == 4  # r1 (Mon), r2 and r6 (Tue), r3 (Wed)
    assert week.view(answer(history, week.CURATED, week.WEEK, "upstream"))["processes"] == {
        "ORDERS_JOB": [("r5", "INCOMPLETE"), ("r4", "COMPLETE")]
    }
    assert history.process_summaries([week.ORDERS_JOB]) == {
        week.ORDERS_JOB: ProcessSummary(2, instant_seconds(week.iso(3, 8)))
    }
    assert history.run(week.RUNS["r2"]) is None
