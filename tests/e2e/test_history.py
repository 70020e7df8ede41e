"""The run history end to end: the week of tests/history_scenario.py sent with openlineage-python (`ol2purview
replay`) to a real `ol2purview serve`, processed by its queue worker and timer (r5 written as INCOMPLETE), then asked
over real HTTP: `GET /api/ol2purview/lineage` answers exactly the runs and edges of each period, `GET
/api/ol2purview/runs/{runId}` one run, `ol2purview history` the same as a table or JSON; sending everything again
changes nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
import requests

from tests.e2e.lineage_helpers import SEQUENTIAL_ENV, Atlas, replay, write_events
from tests.support import history_scenario as week
from tests.support.repository import PROJECT_ROOT
from tests.support.waiting import wait_until
from tools.functions_host.launcher import ServeHandle, start_serve

pytestmark = pytest.mark.e2e

HISTORY_ENV = {
    **SEQUENTIAL_ENV,
    "RUN_HISTORY_DAYS": "36500",
    "INCOMPLETE_RUN_SECONDS": "1",
    "LINEAGE_TIMER_SCHEDULE": "*/1 * * * * *",
}


def lineage(serve: ServeHandle, key: str | None = None, **params: Any) -> requests.Response:
    return requests.get(
        f"{serve.url}/api/ol2purview/lineage",
        params=params,
        timeout=30,
        headers={"x-functions-key": serve.key if key is None else key},
    )


def run_of(serve: ServeHandle, name: str) -> requests.Response:
    return requests.get(
        f"{serve.url}/api/ol2purview/runs/{week.RUNS.get(name, name)}",
        timeout=30,
        headers={"x-functions-key": serve.key},
    )


def send_week(serve: ServeHandle, folder: Path) -> None:
    replay(serve, write_events(folder, *week.week_events()))
    serve.wait_until_processed(timeout=120)
    wait_until(lambda: run_of(serve, "r5").status_code == 200, timeout=30, what="the timer recording r5")


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    folder = tmp_path_factory.mktemp("history")
    handle = start_serve(folder / "data", env=HISTORY_ENV)  # a generated key, kept: the CLI finds it
    try:
        send_week(handle, folder / "events")
        yield handle
    finally:
        assert handle.stop() == 0, handle.output()


def answer(
    serve: ServeHandle, qualified_name: str, window: tuple[str, str], direction: str, depth: int = 1, **extra: str
) -> dict:
    response = lineage(
        serve, qualifiedName=qualified_name, since=window[0], until=window[1], direction=direction, depth=depth, **extra
    )
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.parametrize("window", list(week.UPSTREAM_OF_CURATED), ids=lambda w: w[0][:10])
def test_each_period_answers_exactly_its_runs_and_edges(serve, window):
    assert week.view(answer(serve, week.CURATED, window, "upstream")) == week.UPSTREAM_OF_CURATED[window]


def test_downstream_both_directions_and_columns(serve):
    assert week.view(answer(serve, week.CUSTOMERS, week.WEEK, "downstream", 2)) == week.DOWNSTREAM_OF_CUSTOMERS_WEEK
    assert week.view(answer(serve, week.CURATED, week.THURSDAY, "both")) == week.BOTH_OF_CURATED_THURSDAY
    assert (
        week.column_view(answer(serve, week.GOLD, week.WEEK, "upstream", 2, column="amount"))
        == week.AMOUNT_OF_GOLD_WEEK
    )
    assert (
        week.column_view(answer(serve, week.CURATED, week.TUESDAY, "upstream", column="name"))
        == week.NAME_OF_CURATED_TUESDAY
    )


def test_one_run_with_its_accesses_and_metadata(serve):
    failed = run_of(serve, "r3").json()
    assert {k: failed[k] for k in ("status", "start", "end", "durationMs", "user", "ownerType")} == {
        "status": "FAIL",
        "start": "2026-03-04T08:00:00.000Z",
        "end": "2026-03-04T08:00:02.000Z",
        "durationMs": 2000,
        "user": "etl@contoso.com",
        "ownerType": "databricks_notebook",
    }
    assert [(a["dataset"], a["access"]) for a in failed["accesses"]] == [
        (week.CUSTOMERS, "read"),
        (week.ORDERS, "read"),
        (week.CURATED, "write"),
    ]
    assert failed["metadata"]["notebookPath"] == "/Repos/etl/orders"
    unknown = run_of(serve, "0190f000-0000-7000-8000-0000000000ff")
    assert (unknown.status_code, unknown.json()["path"]) == (404, "runId")


def test_a_bad_parameter_is_a_400_naming_it_and_the_key_is_required(serve):
    refused = lineage(serve, qualifiedName=week.CURATED, since="yesterday")
    assert (refused.status_code, refused.json()) == (
        400,
        {
            "error": "since must be an ISO 8601 date or date-time, now, or a duration such as -24h or -7d; got "
            "'yesterday'",
            "path": "since",
        },
    )
    assert lineage(serve, qualifiedName=week.CURATED, depth=99).json()["path"] == "depth"
    assert lineage(serve, key="wrong", qualifiedName=week.CURATED).status_code == 401


def test_the_catalog_process_has_the_newest_run_and_the_run_count(serve):
    process = Atlas(serve.atlas_url).entity("databricks_process", week.ORDERS_JOB)["attributes"]
    assert {
        k: process[k]
        for k in ("lastRunId", "lastRunStatus", "lastRunStartTime", "lastRunEndTime", "runCount", "firstRunTime")
    } == {
        "lastRunId": week.RUNS["r5"],
        "lastRunStatus": "INCOMPLETE",
        "lastRunStartTime": "2026-03-06T08:00:00.000Z",
        "lastRunEndTime": "",
        "runCount": 5,
        "firstRunTime": "2026-03-02T08:00:00.000Z",
    }


def history_cli(serve: ServeHandle, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tools.cli", "history", *args, "--data", str(serve.data_dir)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_cli_prints_the_same_as_a_table_or_json(serve):
    args = (
        week.CURATED,
        "--since",
        week.TUESDAY[0],
        "--until",
        week.TUESDAY[1],
        "--direction",
        "upstream",
        "--depth",
        "1",
    )
    done = history_cli(serve, *args, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == answer(serve, week.CURATED, week.TUESDAY, "upstream")
    done = history_cli(serve, *args)
    assert done.returncode == 0, done.stderr
    r2, job = week.RUNS["r2"], "execute_insert_into_hadoop_fs_relation_command.orders"
    assert done.stdout.splitlines() == [
        f"Lineage of {week.CURATED} (upstream, depth 1) from 2026-03-03T00:00:00.000Z to 2026-03-04T00:00:00.000Z",
        "datasets (3)",
        "  DISTANCE  TYPE                      QUALIFIED NAME",
        f"  -1        azure_datalake_gen2_path  {week.CUSTOMERS}",
        f"  -1        azure_datalake_gen2_path  {week.ORDERS}",
        f"  +0        azure_datalake_gen2_path  {week.CURATED}",
        "processes (1)",
        f"  DISTANCE  RUNS  FAILED  NAME{' ' * (len(job) - 4)}  QUALIFIED NAME",
        f"  -1        1     0       {job}  {week.ORDERS_JOB}",
        "edges (3)",
        f"  {week.CUSTOMERS}  --read-->  {job}  runs: {r2}",
        f"  {week.ORDERS}  --read-->  {job}  runs: {r2}",
        f"  {job}  --write-->  {week.CURATED}  runs: {r2}",
        "runs (1)",
        f"  RUN ID{' ' * 30}  STATUS    START                     END                       DURATION  USER"
        f"{' ' * 11}  PROCESS",
        f"  {r2}  COMPLETE  2026-03-03T08:00:00.000Z  2026-03-03T08:00:02.000Z  2.0 s     etl@contoso.com  {job}",
    ]
    failed = history_cli(
        serve,
        week.CURATED,
        "--since",
        week.WEDNESDAY[0],
        "--until",
        week.WEDNESDAY[1],
        "--direction",
        "upstream",
        "--depth",
        "1",
    )
    assert f"  {week.RUNS['r3']}  FAIL !  2026-03-04T08:00:00.000Z" in failed.stdout  # failed runs are marked
    refused = history_cli(serve, week.CURATED, "--since", "yesterday")
    assert (refused.returncode, refused.stderr.strip()) == (
        2,
        (
            "ol2purview history: 400 since must be an ISO 8601 date or date-time, now, or a duration such as -24h or "
            "-7d; got 'yesterday' (parameter since)"
        ),
    )


def test_sending_everything_again_changes_nothing(serve, tmp_path):
    queries = [
        (week.CURATED, week.WEEK, "upstream"),
        (week.CUSTOMERS, week.WEEK, "downstream", 2),
        (week.CURATED, week.SATURDAY, "both"),
    ]
    before = [answer(serve, *query) for query in queries]
    send_week(serve, tmp_path / "again")
    assert [answer(serve, *query) for query in queries] == before
    assert Atlas(serve.atlas_url).entity("databricks_process", week.ORDERS_JOB)["attributes"]["runCount"] == 5


def test_a_misspelled_name_exits_2_offering_the_nearest_names(serve):
    """Issue 43: a qualifiedName no run read or wrote answered an empty graph and exit 0; now the endpoint answers 404
    and the command exits 2 with the catalog's nearest names (the serve's embedded catalog holds the datasets)."""
    misspelled = week.CURATED.replace("curated", "curatd")
    assert misspelled != week.CURATED
    done = history_cli(serve, misspelled, "--since", "-3650d")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"ol2purview history: 404 no run in the history read or wrote {misspelled} (parameter qualifiedName); "
        f"nearest: {week.CURATED}, {week.ORDERS}\n"  # as close as each other, within tools/suggest.py's margin
    )
    assert lineage(serve, qualifiedName=misspelled, since="-3650d").status_code == 404
