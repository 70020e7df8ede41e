"""`ol2purview spark` from the command line: the single-process runner, the Spark entry point that spark-submit runs
(remap over the archive of the data folder), the report files, and clear errors for bad arguments."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from olparser.adapters.delivery.archive import EventArchive, FolderArchiveStore
from tests.spark.events import spark_run, write_json_lines
from tests.support.repository import PROJECT_ROOT


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in ("ATLAS_ENDPOINT", "PURVIEW_ACCOUNT_NAME")}
    return subprocess.run(
        [sys.executable, *args],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**environment, **(env or {})},
    )


def test_single_process_backfill_prints_the_table_and_writes_the_report(tmp_path: Path):
    source = write_json_lines(tmp_path / "in" / "events.jsonl", [e for n in range(3) for e in spark_run(n)] + [{}])
    done = run(
        "-m",
        "tools.cli",
        "spark",
        "backfill",
        str(tmp_path / "in"),
        "--single-process",
        "--dry-run",
        str(tmp_path / "planned.jsonl"),
        "--report",
        str(tmp_path / "report"),
        "--since",
        "2025-03-01",
        "--until",
        "2025-03-02T00:00:00+00:00",
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "ol2purview spark backfill"
    # the one rule file, as every command reads it in a checkout (tests/support/rules.py)
    assert "ol2purview spark backfill: mapping rules from config/OlToPurviewMappings.json" in done.stderr.splitlines()
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert (report["events"], report["runs"], report["processes"]["planned"], report["dryRunEntities"]) == (
        {"read": 7, "refused": 1, "outsideTimeRange": 0},
        {"total": 3, "withLineage": 3, "waiting": 0, "skipped": 0},
        3,
        13,
    )
    planned = [json.loads(line) for line in (tmp_path / "planned.jsonl").read_text().splitlines()]
    assert sorted({e["typeName"] for e in planned}) == [
        "azure_blob_path",
        "azure_datalake_gen2_path",
        "spark_application",
        "spark_process",
    ]
    assert source.exists()


@pytest.mark.spark
def test_remap_on_spark_reads_the_archive_of_the_data_folder(tmp_path: Path):
    archive = EventArchive(FolderArchiveStore(tmp_path / "archive"))
    for event in spark_run(0) + spark_run(1):
        archive.keep(event)
    done = run(
        "tools/spark/main.py",
        "remap",
        "--master",
        "local[1]",
        "--dry-run",
        str(tmp_path / "planned.jsonl"),
        "--report",
        str(tmp_path / "report"),
        env={"OL2PURVIEW_DATA_DIR": str(tmp_path)},
    )

    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert (report["command"], report["events"]["read"], report["runs"]["withLineage"], report["dryRunEntities"]) == (
        "remap",
        4,
        2,
        9,
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ("backfill", "/no/such/folder", "--single-process", "--dry-run", os.devnull),
            "ol2purview spark backfill: no such file or folder: /no/such/folder",
        ),
        (
            ("backfill", ".", "--since", "2025-03-02", "--until", "2025-03-01"),
            "ol2purview spark: --until must be after --since",
        ),
        (("backfill", ".", "--since", "last week"), "not an ISO 8601 date or date-time: 'last week'"),
        (("backfill", ".", "--max-calls-per-second", "0"), "must be greater than 0"),
        (
            ("backfill", "/tmp", "--single-process"),
            "ol2purview spark backfill: no catalog: pass --atlas-url URL, set "
            "PURVIEW_ACCOUNT_NAME, PURVIEW_ENDPOINT or ATLAS_ENDPOINT, or start "
            "`ol2purview serve` "
            "(its data folder: --data DIR); or use --dry-run",
        ),
    ],
)
def test_bad_arguments_get_a_clear_message(args, message, tmp_path: Path):
    if args[1] == "/tmp":
        args = ("backfill", str(write_json_lines(tmp_path / "e.jsonl", spark_run(0))), "--single-process")
    done = run("-m", "tools.cli", "spark", *args, env={"OL2PURVIEW_DATA_DIR": str(tmp_path)})
    assert done.returncode == 2
    assert message in done.stderr


@pytest.mark.spark
def test_system_lineage_through_the_spark_submit_entry_point(spark, tmp_path: Path):
    from tools.samples.system_tables import HOST, WORKSPACE, row, write_parquet

    write_parquet(
        spark,
        [
            row(
                "2025-03-01T10:00:00", entity=("NOTEBOOK", "11", "r1"), source="main.s.a", target="main.s.b", record="1"
            ),
            row("2025-03-01T10:00:01", entity=("NOTEBOOK", "11", "r1"), source="main.s.b", record="2"),
        ],
        tmp_path / "table_lineage",
    )
    done = run(
        "tools/spark/main.py",
        "system-lineage",
        "--master",
        "local[1]",
        "--table-lineage",
        str(tmp_path / "table_lineage"),
        "--workspace",
        f"{WORKSPACE}={HOST}",
        "--until",
        "2025-03-02",
        "--dry-run",
        str(tmp_path / "planned.jsonl"),
        "--report",
        str(tmp_path / "report"),
    )

    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert (report["command"], report["rows"], report["runs"]["withLineage"], report["dryRunEntities"]) == (
        "system-lineage",
        {"table lineage rows read": 2, "rows without a target (reads, dashboards): nothing to write": 1},
        1,
        5,
    )
    assert not (tmp_path / "report" / "watermark.json").exists()  # a dry run moves no watermark


@pytest.mark.spark
def test_the_demo_system_table_rows_are_read_as_written_by_ol2purview_demo(tmp_path: Path):
    """`ol2purview demo` writes the rows as JSON lines (no Spark, no pyarrow); `spark system-lineage` reads such a
    folder with the tables' documented schema, as the demo's "try next" line runs it."""
    from datetime import datetime, timezone

    from tools.samples import demo
    from tools.samples.system_tables import HOST, METASTORE, WORKSPACE, write_json_lines

    table, column = demo.system_table_rows(datetime.now(timezone.utc))
    write_json_lines(table, tmp_path / "table_lineage")
    write_json_lines(column, tmp_path / "column_lineage")
    done = run(
        "-m",
        "tools.cli",
        "spark",
        "system-lineage",
        "--master",
        "local[1]",
        "--table-lineage",
        str(tmp_path / "table_lineage"),
        "--column-lineage",
        str(tmp_path / "column_lineage"),
        "--workspace",
        f"{WORKSPACE}={HOST}",
        "--dry-run",
        str(tmp_path / "planned.jsonl"),
        "--report",
        str(tmp_path / "report"),
    )

    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert (report["rows"], report["runs"]["withLineage"]) == (
        {"table lineage rows read": 3, "column lineage rows read": 6},
        3,
    )
    planned = [json.loads(line) for line in (tmp_path / "planned.jsonl").read_text().splitlines()]
    [process] = [e for e in planned if e["typeName"] == "databricks_process"]
    assert process["attributes"]["qualifiedName"].endswith(
        f"/main.sales.daily_revenue/databricks://{METASTORE}/catalogs/main/schemas/sales/tables/daily_revenue"
    )
