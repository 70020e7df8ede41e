"""`ol2purview spark history` on real local Spark: the week of tests/history_scenario.py kept in an event archive by
the live path's own archive gives exactly the hand-written runs and edges of each period; on the archive that a real
`ol2purview serve` wrote while it processed the week, every answer equals the endpoint's, and a backfill of that
archive records the same history; the command line writes JSON lines and Parquet."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import requests

from olparser.adapters.delivery.archive import EventArchive, FolderArchiveStore
from olparser.history import Window
from olparser.history.api import lineage_answer
from olparser.runs.merge import instant_seconds
from tests.e2e.lineage_helpers import SEQUENTIAL_ENV, Atlas, replay, write_events
from tests.support import history_scenario as week
from tests.support import temporary_runs as tr
from tests.support.repository import PROJECT_ROOT
from tests.support.spark_jobs import job_for
from tests.support.waiting import wait_until
from tools.functions_host.launcher import start_serve
from tools.spark.history import PARQUET_COLUMNS, HistoryQuery, run_history
from tools.spark.spark_job import run_spark

pytestmark = pytest.mark.spark


def window(pair: tuple[str, str]) -> Window:
    return Window(instant_seconds(pair[0]), instant_seconds(pair[1]))


def query(
    *roots: str, of: tuple[str, str], direction: str = "upstream", depth: int = 1, column: str | None = None
) -> HistoryQuery:
    return HistoryQuery(roots, window(of), direction, depth, column)


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The week, archived event by event as the queue trigger archives them."""
    folder = tmp_path_factory.mktemp("archive")
    keeper = EventArchive(FolderArchiveStore(folder))
    for event in week.week_events():
        keeper.keep(event)
    return folder


def test_each_period_of_the_archive_answers_its_runs_and_edges(spark, archive):
    job = job_for(None)
    for period in (week.WEDNESDAY, week.THURSDAY):  # the failed run; the dropped input (the rest: compared below)
        (answer,) = run_history(spark, [str(archive)], job, query(week.CURATED, of=period))
        assert week.view(answer) == week.UPSTREAM_OF_CURATED[period], period
    downstream, both = run_history(
        spark, [str(archive)], job, HistoryQuery((week.CUSTOMERS, week.CURATED), window(week.WEEK), "downstream", 2)
    )
    assert week.view(downstream) == week.DOWNSTREAM_OF_CUSTOMERS_WEEK
    (columns,) = run_history(spark, [str(archive)], job, query(week.GOLD, of=week.WEEK, depth=2, column="amount"))
    assert week.column_view(columns) == week.AMOUNT_OF_GOLD_WEEK


def test_a_window_before_the_week_reads_no_day_of_it(spark, archive):
    (answer,) = run_history(spark, [str(archive)], job_for(None), query(week.CURATED, of=(week.iso(-10), week.iso(-3))))
    assert week.view(answer) == {"datasets": {"CURATED": 0}, "processes": {}, "edges": {}}


def endpoint(
    url: str, key: str, root: str, period: tuple[str, str], direction: str, depth: int, column: str | None = None
) -> dict[str, Any]:
    params = {
        "qualifiedName": root,
        "since": period[0],
        "until": period[1],
        "direction": direction,
        "depth": str(depth),
        **({"column": column} if column else {}),
    }
    response = requests.get(
        f"{url}/api/ol2purview/lineage", params=params, headers={"x-functions-key": key}, timeout=30
    )
    assert response.status_code == 200, response.text
    return response.json()


QUERIES = [
    (week.CURATED, week.TUESDAY, "upstream", 1, None),
    (week.CURATED, week.WEEK, "both", 2, None),
    (week.CUSTOMERS, week.WEEK, "downstream", 2, None),
    (week.CURATED, week.SATURDAY, "upstream", 1, None),
    (week.GOLD, week.WEEK, "upstream", 3, "amount"),
    (week.CURATED, week.TUESDAY, "upstream", 1, "name"),
]


@pytest.mark.e2e
def test_the_archive_serve_wrote_answers_as_its_endpoint_and_a_backfill_records_the_same(
    spark, tmp_path, catalog_factory
):
    serve = start_serve(
        tmp_path / "serve",
        env={
            **SEQUENTIAL_ENV,
            "RUN_HISTORY_DAYS": "36500",
            "INCOMPLETE_RUN_SECONDS": "1",
            "LINEAGE_TIMER_SCHEDULE": "*/1 * * * * *",
        },
    )
    try:
        replay(serve, write_events(tmp_path / "events", *week.week_events()))
        serve.wait_until_processed(timeout=120)
        wait_until(
            lambda: (
                requests.get(
                    f"{serve.url}/api/ol2purview/runs/{week.RUNS['r5']}",
                    timeout=10,
                    headers={"x-functions-key": serve.key},
                ).status_code
                == 200
            ),
            what="the timer recording r5",
        )
        served = [endpoint(serve.url, serve.key, *q) for q in QUERIES]
    finally:
        assert serve.stop() == 0, serve.output()
    archive = str(serve.data_dir / "archive")
    computed = [
        run_history(spark, [archive], job_for(None), HistoryQuery((root,), window(period), direction, depth, column))[0]
        for root, period, direction, depth, column in QUERIES
    ]
    assert computed == served

    catalog = catalog_factory()
    job = job_for(catalog, run_history_days=36500)
    report = run_spark(spark, [archive], job)
    assert report.runs_recorded == 6  # every finished run; r5 never finished, and a backfill writes no INCOMPLETE
    history = job.history()
    try:
        params = {
            "qualifiedName": week.CURATED,
            "since": week.TUESDAY[0],
            "until": week.TUESDAY[1],
            "direction": "upstream",
            "depth": "1",
        }
        assert lineage_answer(history, params, instant_seconds(week.iso(5, 12))) == (200, served[0])
    finally:
        history.close()
    process = Atlas(catalog.atlas_url).entity("databricks_process", week.ORDERS_JOB)["attributes"]
    assert (process["lastRunId"], process["runCount"], process["firstRunTime"]) == (
        week.RUNS["r4"],
        4,
        "2026-03-02T08:00:00.000Z",
    )


def test_the_command_line_writes_json_lines_and_parquet(spark, archive, tmp_path):
    out = tmp_path / "answers.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "tools/spark/main.py",
            "history",
            week.CURATED,
            week.GOLD,
            "--archive",
            str(archive),
            "--since",
            week.TUESDAY[0],
            "--until",
            week.TUESDAY[1],
            "--direction",
            "upstream",
            "--depth",
            "1",
            "--master",
            "local[1]",
            "--out",
            str(out),
        ],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    curated, gold = [json.loads(line) for line in out.read_text().splitlines()]
    assert week.view(curated) == week.UPSTREAM_OF_CURATED[week.TUESDAY]
    assert week.view(gold)["processes"] == {"REVENUE_JOB": [("r6", "COMPLETE")]}

    folder = tmp_path / "parquet"
    done = subprocess.run(
        [
            sys.executable,
            "tools/spark/main.py",
            "history",
            week.CURATED,
            "--archive",
            str(archive),
            "--since",
            week.WEDNESDAY[0],
            "--until",
            week.WEDNESDAY[1],
            "--direction",
            "upstream",
            "--depth",
            "1",
            "--master",
            "local[1]",
            "--format",
            "parquet",
            "--out",
            str(folder),
        ],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = sorted(tuple(row) for row in spark.read.parquet(str(folder)).select(*PARQUET_COLUMNS).collect())
    head = (week.CURATED, None, "2026-03-04T00:00:00.000Z", "2026-03-05T00:00:00.000Z", "upstream")
    run = (week.RUNS["r3"], "FAIL", "2026-03-04T08:00:00.000Z", "2026-03-04T08:00:02.000Z")
    assert rows == sorted(
        [
            (*head, "read", week.CUSTOMERS, None, week.ORDERS_JOB, None, week.ORDERS_JOB, *run),
            (*head, "read", week.ORDERS, None, week.ORDERS_JOB, None, week.ORDERS_JOB, *run),
            (*head, "write", week.ORDERS_JOB, None, week.CURATED, None, week.ORDERS_JOB, *run),
        ]
    )


def test_the_single_process_backfill_records_the_same_history(archive, catalog_factory):
    from tools.spark.local import run_local

    catalog = catalog_factory()
    job = job_for(catalog, run_history_days=36500)
    report = run_local([str(archive)], job)
    assert (report.runs_recorded, report.processes_written) == (6, 2)
    history = job.history()
    try:
        assert week.view(
            lineage_answer(
                history,
                {"qualifiedName": week.CURATED, "since": week.WEEK[0], "until": week.WEEK[1], "direction": "upstream"},
                instant_seconds(week.iso(5)),
            )[1]
        )["processes"] == {"ORDERS_JOB": [("r4", "COMPLETE"), ("r3", "FAIL"), ("r2", "COMPLETE"), ("r1", "COMPLETE")]}
    finally:
        history.close()
    process = Atlas(catalog.atlas_url).entity("databricks_process", week.REVENUE_JOB)["attributes"]
    assert (process["lastRunId"], process["runCount"], process["firstRunTime"]) == (
        week.RUNS["r7"],
        2,
        "2026-03-03T09:00:00.000Z",
    )


def test_a_window_over_runs_passing_temporary_datasets_answers_as_the_live_path_records_them(spark, tmp_path):
    keeper = EventArchive(FolderArchiveStore(tmp_path / "archive"))
    chain = tr.etl_chain("history")
    for event in (*chain[4:], *chain[:4]):  # the reader's events first
        keeper.keep(event)
    curated = f"{tr.LAKE_QN}/curated/orders"
    (answer,) = run_history(
        spark,
        [str(tmp_path / "archive")],
        job_for(None),
        HistoryQuery(
            (curated,),
            Window(instant_seconds("2026-08-20T09:00:00Z"), instant_seconds("2026-08-20T11:00:00Z")),
            "upstream",
            2,
        ),
    )
    save = f"spark://{tr.JOB_NAMESPACE}/{tr.ETL_JOB}/processes/Save task/{curated}"
    assert sorted((e["from"], e["to"]) for e in answer["edges"]) == [
        (f"{tr.LAKE_QN}/raw/orders", save),
        (f"{tr.LAKE_QN}/raw/rates", save),
        (save, curated),
    ]
