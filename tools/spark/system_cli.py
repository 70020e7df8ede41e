"""The arguments and the run of `ol2purview spark system-lineage` (registered by `tools/spark/cli.py`).

The window: `--since` (default: the watermark's `until`, else the beginning) to `--until` (default: now minus
`--lag`, because rows reach the system tables late); rows are read from `--lookback` before the window so that runs
that began before it are whole. The watermark (`--watermark FILE`, default `watermark.json` in the `--report`
folder) is moved to `until` after a successful run that was not a dry run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

from olparser.settings import Settings

from .job import BackfillJob, rules_read
from .report import BackfillReport
from .watermark import WATERMARK_FILE, WatermarkTable, load_watermark, save_watermark

DEFAULT_LAG_HOURS = 6.0
DEFAULT_LOOKBACK_HOURS = 24.0


def workspace_pair(text: str) -> tuple[str, str]:
    workspace, separator, host = text.partition("=")
    if not separator or not workspace.strip() or not host.strip():
        raise argparse.ArgumentTypeError(f"expected WORKSPACE_ID=HOST, got {text!r}")
    return workspace.strip(), host.strip().lower()


def hours(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of hours: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def on_databricks() -> bool:
    return "DATABRICKS_RUNTIME_VERSION" in os.environ


def add_system_arguments(parser: argparse.ArgumentParser) -> None:
    from .system_job import SYSTEM_COLUMN_LINEAGE, SYSTEM_TABLE_LINEAGE

    parser.add_argument(
        "--table-lineage",
        metavar="SRC",
        help=f"a table name or a Delta/Parquet folder (default on Databricks: {SYSTEM_TABLE_LINEAGE})",
    )
    parser.add_argument(
        "--column-lineage",
        metavar="SRC",
        help=f"a table name or a Delta/Parquet folder (default on Databricks: {SYSTEM_COLUMN_LINEAGE}; elsewhere none)",
    )
    parser.add_argument(
        "--workspace",
        type=workspace_pair,
        action="append",
        default=[],
        metavar="ID=HOST",
        help="the host of a workspace id (adb-<id>.<n>.azuredatabricks.net), repeatable; also read "
        "from DATABRICKS_WORKSPACE_HOSTS. Rows of a workspace without a host are skipped",
    )
    parser.add_argument(
        "--lag",
        type=hours,
        default=DEFAULT_LAG_HOURS,
        metavar="HOURS",
        help=f"without --until, stop this long before now: rows reach the system tables late "
        f"(default {DEFAULT_LAG_HOURS:g})",
    )
    parser.add_argument(
        "--lookback",
        type=hours,
        default=DEFAULT_LOOKBACK_HOURS,
        metavar="HOURS",
        help=f"also read rows this long before --since, so that a run that began earlier is written "
        f"whole (default {DEFAULT_LOOKBACK_HOURS:g})",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--watermark",
        type=Path,
        metavar="FILE",
        help=f"where the last successful run stopped (default: {WATERMARK_FILE} in the --report "
        "folder; without either, every run starts at --since or the beginning)",
    )
    where.add_argument(
        "--watermark-table",
        metavar="NAME",
        help="keep the watermark in this table instead (Delta on Databricks, e.g. "
        "main.ops.system_lineage_watermark): a row per successful run, the newest counts",
    )


def run_system(args: argparse.Namespace, settings: Settings, show: Callable[[BackfillReport, Path | None], int]) -> int:
    from .system_job import SYSTEM_COLUMN_LINEAGE, SYSTEM_TABLE_LINEAGE

    name = "ol2purview spark system-lineage"
    table_source = args.table_lineage or (SYSTEM_TABLE_LINEAGE if on_databricks() else None)
    column_source = args.column_lineage or (SYSTEM_COLUMN_LINEAGE if on_databricks() else None)
    if table_source is None:
        print(
            f"{name}: --table-lineage is required outside Databricks (a table name or a Delta/Parquet folder)",
            file=sys.stderr,
        )
        return 2
    watermark_path = (
        None if args.watermark_table else (args.watermark or (args.report / WATERMARK_FILE if args.report else None))
    )
    try:
        stored = load_watermark(watermark_path) if watermark_path else None
    except ValueError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    table = None
    if not args.watermark_table and (window := _window(args, stored, name)) is None:
        return 0  # nothing to do
    print(rules_read(name, settings), file=sys.stderr)
    job = BackfillJob.create(settings, calls_per_second=args.max_calls_per_second)
    try:
        if args.dry_run is None:
            job.client()  # no catalog configured: say so before reading anything
        from .spark_job import spark_session
        from .system_job import run_system_lineage

        spark = spark_session(args.master, "ol2purview-system-lineage", sys.stderr.isatty())
        if args.watermark_table:
            table = WatermarkTable(spark, args.watermark_table)
            if (window := _window(args, table.load(), name)) is None:
                return 0
        report = run_system_lineage(
            spark, table_source, column_source, job, window, dict(args.workspace), dry_run=args.dry_run
        )
    except (FileNotFoundError, ValueError) as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    status = show(report, args.report)
    if status == 0 and args.dry_run is None:
        if table is not None:
            table.save(window.since, window.until, table_source, column_source)
            print(f"watermark: table {args.watermark_table} (until {_iso(window.until)})")
        elif watermark_path is not None:
            save_watermark(watermark_path, window.since, window.until, table_source, column_source)
            print(f"watermark: {watermark_path} (until {_iso(window.until)})")
    return status


def _window(args: argparse.Namespace, stored: Any, name: str) -> Any:
    """The window to read: from --since, else the watermark's `until`, else the beginning; to --until, else now minus
    --lag. None (and a line saying so) when it is empty."""
    from .system_job import Window

    since = args.since if args.since is not None else (stored.until if stored else None)
    until = args.until if args.until is not None else time.time() - args.lag * 3600
    if since is not None and until <= since:
        print(f"{name}: nothing to do: the time range from {_iso(since)} to {_iso(until)} is empty")
        return None
    return Window(since, until, args.lookback * 3600)


def _iso(instant: Any) -> str:
    from .system_rows import iso_time

    return iso_time(instant)
