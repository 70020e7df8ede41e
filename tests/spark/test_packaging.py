"""The wheel carries what a Spark executor and a Databricks wheel task need, and the Databricks job definition runs
the backfill through the wheel's `ol2purview` entry point with arguments the command accepts."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.conftest import PROJECT_ROOT
from tests.rules import user_rules_file_allowed
from tools.cli import build_parser
from tools.spark.cli import add_arguments

JOB = PROJECT_ROOT / "deploy" / "databricks" / "backfill-job.json"
SYSTEM_LINEAGE_JOB = PROJECT_ROOT / "deploy" / "databricks" / "system-lineage-job.json"


def test_the_wheel_carries_the_code_the_rules_and_the_typedefs(tmp_path: Path):
    source = tmp_path / "source"  # a copy, so that the build leaves no build/ folder in the project
    with user_rules_file_allowed("the wheel carries config/OlToPurviewMappings.json"):
        shutil.copytree(PROJECT_ROOT, source, ignore=shutil.ignore_patterns(
            ".git", ".venv", "node_modules", ".data", "build", "*.egg-info", "__pycache__", ".pytest_cache"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "-q", "-w", str(tmp_path)],
                          cwd=source, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    wheel = next(tmp_path.glob("ol2purview-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"config/OlToPurviewMappings.json", "olparser/naming/shipped/OlToPurviewMappings.json",
            "olparser/lineage/typedefs/databricks.json", "olparser/lineage/typedefs/spark.json",
            "olparser/lineage/typedefs/openlineage_datasets.json", "olparser/contract/event-contract.schema.json",
            "olparser/naming/mappings.schema.json", "tools/spark/spark_job.py", "tools/spark/main.py",
            "olparser/lineage/combine.py", "olparser/adapters/delivery/archive.py", "tools/spark/system_job.py",
            "olparser/adapters/sql/worker.py"} <= names
    entry_points = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "ol2purview = tools.cli:main" in entry_points
    assert not any(name.startswith(("tests/", "bench/")) for name in names)


def test_the_databricks_job_runs_the_backfill_through_the_wheel_entry_point():
    task = json.loads(JOB.read_text(encoding="utf-8"))["tasks"][0]["python_wheel_task"]
    assert (task["package_name"], task["entry_point"]) == ("ol2purview", "ol2purview")
    parser, subparsers = build_parser()
    add_arguments(subparsers["spark"])
    args = parser.parse_args(task["parameters"])
    assert (args.command, args.spark_command, args.sources, args.max_calls_per_second) == (
        "spark", "backfill", ["abfss://lineage-archive@<storage account>.dfs.core.windows.net/"], 20.0)


def test_the_databricks_job_runs_system_lineage_daily_through_the_wheel_entry_point():
    job = json.loads(SYSTEM_LINEAGE_JOB.read_text(encoding="utf-8"))
    task = job["tasks"][0]["python_wheel_task"]
    assert (task["package_name"], task["entry_point"], job["schedule"]["quartz_cron_expression"]) == (
        "ol2purview", "ol2purview", "0 0 7 * * ?")
    parser, subparsers = build_parser()
    add_arguments(subparsers["spark"])
    args = parser.parse_args(task["parameters"])
    assert (args.command, args.spark_command, args.table_lineage, args.workspace, args.report, args.watermark,
            args.lag, args.lookback) == (
        "spark", "system-lineage", None, [("<workspace id>", "adb-<workspace id>.<n>.azuredatabricks.net")],
        Path("/Volumes/<catalog>/<schema>/<volume>/ol2purview/system-lineage"), None, 6.0, 24.0)
