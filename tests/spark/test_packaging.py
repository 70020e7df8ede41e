"""The Databricks job definitions run the backfill and the system-table lineage through the wheel's `ol2purview`
entry point with arguments the command accepts (what the wheel carries: tests/unit/test_wheel.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.repository import PROJECT_ROOT
from tools.cli import build_parser
from tools.spark.cli import add_arguments

JOB = PROJECT_ROOT / "deploy" / "databricks" / "backfill-job.json"
SYSTEM_LINEAGE_JOB = PROJECT_ROOT / "deploy" / "databricks" / "system-lineage-job.json"


def test_the_databricks_job_runs_the_backfill_through_the_wheel_entry_point():
    task = json.loads(JOB.read_text(encoding="utf-8"))["tasks"][0]["python_wheel_task"]
    assert (task["package_name"], task["entry_point"]) == ("ol2purview", "ol2purview")
    parser, subparsers = build_parser()
    add_arguments(subparsers["spark"])
    args = parser.parse_args(task["parameters"])
    assert (args.command, args.spark_command, args.sources, args.max_calls_per_second) == (
        "spark",
        "backfill",
        ["abfss://lineage-archive@<storage account>.dfs.core.windows.net/"],
        20.0,
    )


def test_the_databricks_job_runs_system_lineage_daily_through_the_wheel_entry_point():
    job = json.loads(SYSTEM_LINEAGE_JOB.read_text(encoding="utf-8"))
    task = job["tasks"][0]["python_wheel_task"]
    assert (task["package_name"], task["entry_point"], job["schedule"]["quartz_cron_expression"]) == (
        "ol2purview",
        "ol2purview",
        "0 0 7 * * ?",
    )
    parser, subparsers = build_parser()
    add_arguments(subparsers["spark"])
    args = parser.parse_args(task["parameters"])
    assert (
        args.command,
        args.spark_command,
        args.table_lineage,
        args.workspace,
        args.report,
        args.watermark,
        args.lag,
        args.lookback,
    ) == (
        "spark",
        "system-lineage",
        None,
        [("<workspace id>", "adb-<workspace id>.<n>.azuredatabricks.net")],
        Path("/Volumes/<catalog>/<schema>/<volume>/ol2purview/system-lineage"),
        None,
        6.0,
        24.0,
    )
