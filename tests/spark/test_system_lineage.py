"""`ol2purview spark system-lineage` on the test session's local[2] Spark, into the embedded catalog: rows of
system.access.table_lineage and column_lineage with the documented schema, written as Parquet (Delta needs jars
Maven would bring), land as the exact processes, owners, inputs, outputs and column mappings; the watermark makes the
next run incremental (nothing is written twice; a run that crosses the watermark is written whole, once).

Every run goes through the command line entry point (`tools.spark.cli.main`) in this process, on the session's Spark,
with the catalog and the one rule file in the environment."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.lineage_helpers import Atlas, refs
from tests.support.rules import MAPPINGS_PATH
from tests.support.spark_jobs import catalog_view
from tools.samples.system_tables import HOST, LAKE, WORKSPACE, row, write_parquet
from tools.spark.cli import main

pytestmark = [pytest.mark.spark, pytest.mark.e2e]

UC = "databricks://5a31ba44-bbf4-4174-bf33-e1fa078e6765/catalogs/main/schemas"
ADLS = "https://contosolake.dfs.core.windows.net/lake"
WS = f"databricks://{HOST}"
NOTEBOOK = ("NOTEBOOK", "4051112223334445", "run-n1")
JOB = ("JOB", "801", "9001")
PIPELINE = ("PIPELINE", "e9cd8a31-de2f-4206-adfa-4f6605d68d88", "update-1")


def uc(name: str) -> dict[str, str]:
    """A Unity Catalog table at its managed location, as a row names it."""
    schema, table = name.split(".")[1:]
    return {"table": name, "path": f"{LAKE}/uc/{schema}/{table}"}


def source(name: str) -> dict[str, str]:
    table = uc(name)
    return {"source": table["table"], "source_path": table["path"]}


def target(name: str) -> dict[str, str]:
    table = uc(name)
    return {"target": table["table"], "target_path": table["path"]}


FIRST_TABLE_ROWS = [
    # an interactive notebook run (no statement ids): daily <- orders, customers; and a display() of orders
    row(
        "2025-03-01T10:00:00", entity=NOTEBOOK, **source("main.sales.orders"), **target("main.sales.daily"), record="t1"
    ),
    row(
        "2025-03-01T10:00:05",
        entity=NOTEBOOK,
        **source("main.sales.customers"),
        **target("main.sales.daily"),
        record="t2",
    ),
    row("2025-03-01T10:01:00", entity=NOTEBOOK, **source("main.sales.orders"), record="t3"),
    # a job run with two tasks: a notebook task exports daily to a path on ADLS; another task cleans customers
    row(
        "2025-03-01T11:00:00",
        entity=JOB,
        notebook="4051112220000001",
        **source("main.sales.daily"),
        target_path=f"{LAKE}/exports/daily",
        user="svc-etl",
        record="t4",
    ),
    row(
        "2025-03-01T11:05:00",
        entity=JOB,
        **source("main.sales.customers"),
        **target("main.sales.customers_clean"),
        user="svc-etl",
        record="t5",
    ),
    # a Delta Live Tables pipeline ingests a landing path into a streaming table
    row(
        "2025-03-01T12:00:00",
        entity=PIPELINE,
        pipeline_update="update-1",
        source_path=f"{LAKE}/landing/events",
        **target("main.bronze.events"),
        target_type="STREAMING_TABLE",
        user="System-User",
        record="t6",
    ),
    # a dashboard only reads; a SQL warehouse query writes (with a statement id)
    row(
        "2025-03-01T12:30:00",
        entity=("DASHBOARD_V3", "01ef070d110715f2b6d3061b8bda89ea", None),
        **source("main.sales.daily"),
        record="t7",
    ),
    row(
        "2025-03-01T13:00:00",
        entity=("DBSQL_QUERY", "e9cd8a31-0000-4206-adfa-4f6605d68d88", None),
        statement="01f0-statement-1",
        **source("main.sales.daily"),
        **target("main.sales.top_customers"),
        record="t8",
    ),
    # a workspace whose host nobody gave: skipped and reported
    row(
        "2025-03-01T14:00:00",
        entity=("NOTEBOOK", "77", "r77"),
        workspace="999",
        **source("main.sales.orders"),
        **target("main.sales.elsewhere"),
        record="t9",
    ),
]
FIRST_COLUMN_ROWS = [
    row(
        "2025-03-01T10:00:00",
        entity=NOTEBOOK,
        **source("main.sales.orders"),
        **target("main.sales.daily"),
        columns=("amount", "total"),
        record="c1",
    ),
    row(
        "2025-03-01T10:00:00",
        entity=NOTEBOOK,
        **source("main.sales.orders"),
        **target("main.sales.daily"),
        columns=("order_date", "order_date"),
        record="c2",
    ),
    row(
        "2025-03-01T10:00:05",
        entity=NOTEBOOK,
        **source("main.sales.customers"),
        **target("main.sales.daily"),
        columns=("region", "region"),
        record="c3",
    ),
    row(
        "2025-03-01T11:00:00",
        entity=JOB,
        notebook="4051112220000001",
        **source("main.sales.daily"),
        target_path=f"{LAKE}/exports/daily",
        columns=("total", "total"),
        user="svc-etl",
        record="c4",
    ),
]

NOTEBOOK_QN = f"{WS}/notebook-ids/4051112223334445"
TASK_QN = f"{WS}/jobs/801/tasks/notebook-4051112220000001"
OTHER_TASK_QN = f"{WS}/jobs/801/tasks/task"
PIPELINE_QN = f"{WS}/pipelines/e9cd8a31-de2f-4206-adfa-4f6605d68d88"
QUERY_APP = f"{WS}/applications/dbsql_query_e9cd8a31-0000-4206-adfa-4f6605d68d88"


def mapping(*pairs: tuple[str, str, list[tuple[str, str]]]) -> list[dict]:
    return [
        {"DatasetMapping": {"Source": s, "Sink": t}, "ColumnMapping": [{"Source": a, "Sink": b} for a, b in cols]}
        for s, t, cols in pairs
    ]


# process -> (type, owner relationship, owner, inputs, outputs, columnMapping, lastRunTime, lastRunUser)
FIRST_PROCESSES = {
    f"{NOTEBOOK_QN}/processes/main.sales.daily/{UC}/sales/tables/daily": (
        "databricks_process",
        "task",  # Purview's model: a notebook is a runnable, its processes hang under it as under a job's task
        NOTEBOOK_QN,
        [f"{UC}/sales/tables/customers", f"{UC}/sales/tables/orders"],
        [f"{UC}/sales/tables/daily"],
        mapping(
            (f"{UC}/sales/tables/customers", f"{UC}/sales/tables/daily", [("region", "region")]),
            (
                f"{UC}/sales/tables/orders",
                f"{UC}/sales/tables/daily",
                [("amount", "total"), ("order_date", "order_date")],
            ),
        ),
        "2025-03-01T10:00:05.000Z",
        "ana@contoso.com",
    ),
    f"{TASK_QN}/processes/abfss:%2F%2Flake@contosolake.dfs.core.windows.net%2Fexports%2Fdaily/{ADLS}/exports/daily": (
        "databricks_process",
        "task",
        TASK_QN,
        [f"{UC}/sales/tables/daily"],
        [f"{ADLS}/exports/daily"],
        mapping((f"{UC}/sales/tables/daily", f"{ADLS}/exports/daily", [("total", "total")])),
        "2025-03-01T11:00:00.000Z",
        "svc-etl",
    ),
    f"{OTHER_TASK_QN}/processes/main.sales.customers_clean/{UC}/sales/tables/customers_clean": (
        "databricks_process",
        "task",
        OTHER_TASK_QN,
        [f"{UC}/sales/tables/customers"],
        [f"{UC}/sales/tables/customers_clean"],
        [],
        "2025-03-01T11:05:00.000Z",
        "svc-etl",
    ),
    f"{PIPELINE_QN}/processes/main.bronze.events/{UC}/bronze/tables/events": (
        "databricks_process",
        "pipeline",
        PIPELINE_QN,
        [f"{ADLS}/landing/events"],
        [f"{UC}/bronze/tables/events"],
        [],
        "2025-03-01T12:00:00.000Z",
        "System-User",
    ),
    f"{QUERY_APP}/processes/main.sales.top_customers/{UC}/sales/tables/top_customers": (
        "spark_process",
        "application",
        QUERY_APP,
        [f"{UC}/sales/tables/daily"],
        [f"{UC}/sales/tables/top_customers"],
        [],
        "2025-03-01T13:00:00.000Z",
        "ana@contoso.com",
    ),
}


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, catalog_factory) -> Any:
    """The embedded catalog and the one rule file, as the command reads them (the environment)."""
    catalog = catalog_factory()
    rules = tmp_path / "rules.json"
    shutil.copyfile(MAPPINGS_PATH, rules)
    for name in (
        "PURVIEW_ACCOUNT_NAME",
        "OlToPurviewMappings",
        "DATABRICKS_WORKSPACE_HOSTS",
        "DATABRICKS_METASTORE_IDS",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ATLAS_ENDPOINT", catalog.atlas_url)
    monkeypatch.setenv("OL_TO_PURVIEW_MAPPINGS_PATH", str(rules))
    # the test's own run state and history (not the worktree's .data): the run-state store says which run last wrote
    # each process, and a store left by another test's catalog would have this test's processes written already
    monkeypatch.setenv("OL2PURVIEW_DATA_DIR", str(tmp_path / "data"))
    return catalog


def system_lineage(folder: Path, *args: str) -> dict[str, Any]:
    """One run of the command over the Parquet folders; returns report.json."""
    status = main(
        [
            "system-lineage",
            "--table-lineage",
            str(folder / "table_lineage"),
            "--column-lineage",
            str(folder / "column_lineage"),
            "--workspace",
            f"{WORKSPACE}={HOST}",
            "--report",
            str(folder / "report"),
            *args,
        ]
    )
    assert status == 0
    return json.loads((folder / "report" / "report.json").read_text())


def processes(atlas_url: str) -> dict[str, tuple]:
    found = {}
    for entity in Atlas(atlas_url).all_entities():
        attributes = entity["attributes"]
        if "lastRunId" not in attributes:
            continue
        relationship = next(r for r in ("task", "pipeline", "application") if refs(entity, r))
        found[attributes["qualifiedName"]] = (
            entity["typeName"],
            relationship,
            refs(entity, relationship)[0],
            refs(entity, "inputs"),
            refs(entity, "outputs"),
            json.loads(attributes["columnMapping"]),
            attributes["lastRunTime"],
            attributes["lastRunUser"],
        )
    return found


def test_system_tables_land_as_processes_and_the_watermark_makes_runs_incremental(spark, environment, tmp_path):
    write_parquet(spark, FIRST_TABLE_ROWS, tmp_path / "table_lineage")
    write_parquet(spark, FIRST_COLUMN_ROWS, tmp_path / "column_lineage", columns=True)

    first = system_lineage(tmp_path, "--until", "2025-03-02")
    assert processes(environment.atlas_url) == FIRST_PROCESSES
    assert first["rows"] == {
        "table lineage rows read": 9,
        "column lineage rows read": 4,
        "rows of workspace 999 skipped: its host is unknown (--workspace 999=HOST)": 1,
        "rows without a target (reads, dashboards): nothing to write": 2,
    }
    assert (first["runs"], first["processes"]) == (
        {"total": 5, "withLineage": 5, "waiting": 0, "skipped": 0},
        {"planned": 5, "written": 5, "unchanged": 0, "superseded": 0},
    )
    owners = {
        (e["typeName"], e["attributes"]["qualifiedName"], e["attributes"]["name"])
        for e in Atlas(environment.atlas_url).all_entities()
        if e["typeName"].startswith(("databricks_notebook", "databricks_job", "databricks_pipeline"))
    }
    assert owners == {
        ("databricks_notebook", NOTEBOOK_QN, "notebook 4051112223334445"),
        ("databricks_notebook", f"{WS}/notebook-ids/4051112220000001", "notebook 4051112220000001"),
        ("databricks_job", f"{WS}/jobs/801", "job 801"),
        ("databricks_notebook_task", TASK_QN, "notebook-4051112220000001"),
        ("databricks_job_task", OTHER_TASK_QN, "task"),
        ("databricks_pipeline", PIPELINE_QN, "pipeline e9cd8a31-de2f-4206-adfa-4f6605d68d88"),
    }
    assert json.loads((tmp_path / "report" / "watermark.json").read_text())["until"] == "2025-03-02T00:00:00.000Z"
    before = catalog_view(environment.atlas_url)

    # the next window [2025-03-02, 2025-03-03) reads the day before too (lookback) but owns none of those runs
    second = system_lineage(tmp_path, "--until", "2025-03-03")
    assert second["rows"]["runs outside the time range (written by another window)"] == 5
    assert (second["runs"]["total"], second["processes"]["written"]) == (0, 0)
    assert catalog_view(environment.atlas_url) == before

    # new rows: the notebook runs again without customers; a job run crosses the next watermark (2025-03-04)
    write_parquet(
        spark,
        [
            row(
                "2025-03-03T09:00:00",
                entity=("NOTEBOOK", "4051112223334445", "run-n2"),
                **source("main.sales.orders"),
                **target("main.sales.daily"),
                record="t10",
            ),
            row(
                "2025-03-03T23:59:30",
                entity=("JOB", "801", "9002"),
                **source("main.sales.customers"),
                **target("main.sales.customers_clean"),
                user="svc-etl",
                record="t11",
            ),
            row(
                "2025-03-04T00:00:30",
                entity=("JOB", "801", "9002"),
                **source("main.sales.orders"),
                **target("main.sales.customers_clean"),
                user="svc-etl",
                record="t12",
            ),
        ],
        tmp_path / "table_lineage",
    )
    third = system_lineage(tmp_path, "--until", "2025-03-04")  # reads from 2025-03-02: the three new rows
    assert (third["rows"], third["processes"]["written"]) == (
        {"table lineage rows read": 3, "runs outside the time range (written by another window)": 1},
        1,
    )
    daily = f"{NOTEBOOK_QN}/processes/main.sales.daily/{UC}/sales/tables/daily"
    assert processes(environment.atlas_url)[daily] == (
        "databricks_process",
        "task",  # Purview's model: a notebook is a runnable, its processes hang under it as under a job's task
        NOTEBOOK_QN,
        [f"{UC}/sales/tables/orders"],
        [f"{UC}/sales/tables/daily"],
        [],
        "2025-03-03T09:00:00.000Z",
        "ana@contoso.com",
    )

    fourth = system_lineage(tmp_path, "--until", "2025-03-05")
    clean = f"{OTHER_TASK_QN}/processes/main.sales.customers_clean/{UC}/sales/tables/customers_clean"
    assert fourth["processes"]["written"] == 1
    assert processes(environment.atlas_url)[clean] == (
        "databricks_process",
        "task",
        OTHER_TASK_QN,
        [f"{UC}/sales/tables/customers", f"{UC}/sales/tables/orders"],
        [f"{UC}/sales/tables/customers_clean"],
        [],
        "2025-03-04T00:00:30.000Z",
        "svc-etl",
    )


def test_a_dry_run_lists_what_would_be_written_and_leaves_the_watermark(spark, environment, tmp_path):
    write_parquet(spark, FIRST_TABLE_ROWS, tmp_path / "table_lineage")
    write_parquet(spark, FIRST_COLUMN_ROWS, tmp_path / "column_lineage", columns=True)
    report = system_lineage(tmp_path, "--until", "2025-03-02", "--dry-run", str(tmp_path / "planned.jsonl"))

    planned = [json.loads(line) for line in (tmp_path / "planned.jsonl").read_text().splitlines()]
    assert sorted(e["attributes"]["qualifiedName"] for e in planned if "lastRunId" in e["attributes"]) == sorted(
        FIRST_PROCESSES
    )
    assert (report["dryRunEntities"], report["catalog"]["calls"]) == (len(planned), 0)
    assert not (tmp_path / "report" / "watermark.json").exists()
    assert Atlas(environment.atlas_url).all_entities() == []


def test_the_tables_are_read_by_name(spark, environment, tmp_path):
    """On Databricks the sources are table names (system.access.table_lineage by default); here a global view."""
    write_parquet(spark, FIRST_TABLE_ROWS, tmp_path / "rows")
    spark.read.parquet(str(tmp_path / "rows")).createOrReplaceGlobalTempView("uc_table_lineage")
    try:
        status = main(
            [
                "system-lineage",
                "--table-lineage",
                "global_temp.uc_table_lineage",
                "--workspace",
                f"{WORKSPACE}={HOST}",
                "--until",
                "2025-03-02",
                "--report",
                str(tmp_path / "report"),
            ]
        )
    finally:
        spark.catalog.dropGlobalTempView("uc_table_lineage")
    assert status == 0
    found = processes(environment.atlas_url)
    assert sorted(found) == sorted(FIRST_PROCESSES)
    assert all(process[5] == [] for process in found.values())  # no column_lineage source: no column mappings


def test_a_delta_folder_is_read_as_delta_which_needs_the_delta_jars_here(spark, environment, tmp_path, capsys):
    write_parquet(spark, FIRST_TABLE_ROWS, tmp_path / "delta")
    (tmp_path / "delta" / "_delta_log").mkdir()
    status = main(["system-lineage", "--table-lineage", str(tmp_path / "delta"), "--until", "2025-03-02"])
    assert status == 2
    assert capsys.readouterr().err == (
        f"ol2purview spark system-lineage: mapping rules from {tmp_path / 'rules.json'}\n"  # read before the table
        f"ol2purview spark system-lineage: {tmp_path / 'delta'} is a Delta table: reading it needs the delta-spark "
        "package (built into Databricks; elsewhere start Spark with io.delta:delta-spark)\n"
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (
            (),
            "ol2purview spark system-lineage: --table-lineage is required outside Databricks (a table name or a "
            "Delta/Parquet folder)\n",
        ),
        (
            ("--table-lineage", "/no/such/folder", "--dry-run", "out.jsonl"),
            "ol2purview spark system-lineage: mapping rules from config/OlToPurviewMappings.json\n"  # before the table
            "ol2purview spark system-lineage: no such table or folder: /no/such/folder\n",
        ),
        (
            ("--table-lineage", "t.x", "--watermark", "{folder}/bad.json"),
            "ol2purview spark system-lineage: {folder}/bad.json is not a watermark: expected a JSON object with \"until\" "
            "(ISO 8601)\n",
        ),
    ],
)
def test_bad_arguments_get_a_clear_message(args, message, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("DATABRICKS_RUNTIME_VERSION", raising=False)
    (tmp_path / "bad.json").write_text('{"since": "yesterday"}')
    status = main(["system-lineage", *(a.format(folder=tmp_path) for a in args)])
    assert (status, capsys.readouterr().err) == (2, message.format(folder=tmp_path))


def test_a_workspace_must_be_id_equals_host(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["system-lineage", "--workspace", "1234"])
    assert exit_.value.code == 2
    assert "expected WORKSPACE_ID=HOST, got '1234'" in capsys.readouterr().err


def test_an_empty_window_does_nothing(tmp_path, capsys):
    (tmp_path / "watermark.json").write_text('{"until": "2025-03-02T00:00:00Z"}')
    status = main(
        [
            "system-lineage",
            "--table-lineage",
            "t.x",
            "--watermark",
            str(tmp_path / "watermark.json"),
            "--until",
            "2025-03-01",
        ]
    )
    assert (status, capsys.readouterr().out) == (
        0,
        (
            "ol2purview spark system-lineage: nothing to do: the time range from 2025-03-02T00:00:00.000Z to "
            "2025-03-01T00:00:00.000Z is empty\n"
        ),
    )


def test_the_watermark_can_be_kept_in_a_table(spark, environment, tmp_path):
    """`--watermark-table`: a row per successful run (here a table of the session's warehouse; Delta on Databricks);
    the next run starts where the newest row says."""
    write_parquet(spark, FIRST_TABLE_ROWS, tmp_path / "table_lineage")
    write_parquet(spark, FIRST_COLUMN_ROWS, tmp_path / "column_lineage", columns=True)
    name = f"watermark_{tmp_path.name.replace('-', '_')}"
    try:
        first = system_lineage(tmp_path, "--until", "2025-03-02", "--watermark-table", name)
        assert first["processes"]["written"] == 5
        second = system_lineage(tmp_path, "--until", "2025-03-03", "--watermark-table", name)
        assert (second["runs"]["total"], second["processes"]["written"]) == (0, 0)
        rows = sorted(
            ((r["since"], r["until"], r["untilSeconds"], r["tableLineage"]) for r in spark.table(name).collect()),
            key=lambda r: r[2],
        )
        assert rows == [
            (None, "2025-03-02T00:00:00.000Z", 1740873600.0, str(tmp_path / "table_lineage")),
            ("2025-03-02T00:00:00.000Z", "2025-03-03T00:00:00.000Z", 1740960000.0, str(tmp_path / "table_lineage")),
        ]
        assert not (tmp_path / "report" / "watermark.json").exists()
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")
