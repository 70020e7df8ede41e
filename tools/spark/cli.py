"""`ol2purview spark backfill|remap|history|system-lineage`: OpenLineage history into the catalog on Spark (or in
one process), lineage in a time window from the event archive, and Unity Catalog's lineage system tables on Spark.

    ol2purview spark backfill SOURCE... [--since T] [--until T] [--master URL] [--dry-run OUT] [--report DIR]
                                        [--max-calls-per-second N] [--single-process]
    ol2purview spark remap [--archive PATH] [--since T] [same options]
    ol2purview spark history QUALIFIED_NAME... --since T --until T [--archive PATH] [--direction D] [--depth N]
                                        [--column C] [--lookback HOURS] [--format jsonl|parquet] [--out PATH]
    ol2purview spark system-lineage [--table-lineage SRC] [--column-lineage SRC] [--workspace ID=HOST]...
                                    [--since T] [--until T] [--lag HOURS] [--lookback HOURS] [--watermark FILE]
                                    [--master URL] [--dry-run OUT] [--report DIR] [--max-calls-per-second N]

The same arguments work under `spark-submit tools/spark/main.py backfill ...` and as the parameters of a Databricks
Python wheel task (entry point `ol2purview`, parameters `["spark", "backfill", ...]`). The catalog is chosen as every
tool chooses it (tools/catalog_options.py: `--atlas-url`, else PURVIEW_ACCOUNT_NAME or ATLAS_ENDPOINT, else the
catalog of the `ol2purview serve` running on `--data DIR`); the mapping rules come from the usual settings
(OL_TO_PURVIEW_MAPPINGS_PATH...).
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from olparser.adapters.delivery.archive import ARCHIVE_FOLDER
from olparser.settings import Settings

from ..catalog_options import NoCatalog, add_target_arguments, catalog_target, data_dir, with_catalog
from ..log_setup import configure_logging
from .java import java_problem
from .job import DEFAULT_CALLS_PER_SECOND, BackfillJob, rules_read
from .report import BackfillReport
from .system_cli import add_system_arguments, run_system

log = logging.getLogger("ol2purview.spark")


def parse_time(text: str) -> float:
    """An ISO 8601 date or date-time (UTC when it has no offset) as Unix seconds."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 date or date-time: {text!r}") from None
    return (moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment).timestamp()


def positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be greater than 0")
    return value


def _common(
    parser: argparse.ArgumentParser, single_process: bool = True, subject: str = "only events with eventTime"
) -> None:
    parser.add_argument("--since", type=parse_time, help=f"{subject} at or after T (ISO 8601)")
    parser.add_argument("--until", type=parse_time, help=f"{subject} before T (ISO 8601)")
    parser.add_argument("--master", help="Spark master URL (default: the active session, else local[*])")
    parser.add_argument(
        "--dry-run",
        type=Path,
        metavar="OUT",
        help="write the planned entities as JSON lines to OUT instead of uploading",
    )
    parser.add_argument("--report", type=Path, metavar="DIR", help="also write report.csv and report.json to DIR")
    parser.add_argument(
        "--max-calls-per-second",
        type=positive,
        default=DEFAULT_CALLS_PER_SECOND,
        metavar="N",
        help=f"catalog calls per second, all tasks together (default {DEFAULT_CALLS_PER_SECOND:g}, "
        "room for the live path on one Purview capacity unit)",
    )
    if single_process:
        parser.add_argument(
            "--single-process",
            action="store_true",
            help="run the same steps in this Python process, without Spark (small histories)",
        )
    add_target_arguments(parser, catalog=True)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="spark_command", metavar="COMMAND", required=True)
    backfill = sub.add_parser(
        "backfill",
        help="write the lineage of archived or exported OpenLineage events",
        description="Write the lineage of OpenLineage events read from files: folders, "
        "files, globs, JSON, JSON lines, gzip, the archive layout, local or abfss://",
    )
    backfill.add_argument("sources", nargs="+", metavar="SOURCE")
    _common(backfill)
    remap = sub.add_parser(
        "remap",
        help="re-derive archived lineage with the current rules; drop resolved placeholders",
        description="Rebuild the lineage of the archive with the current mapping rules, write "
        "what changed, and remove placeholders that are resolved and no longer used",
    )
    remap.add_argument("--archive", metavar="PATH", help="the event archive (default: where ARCHIVE_STORE keeps it)")
    _common(remap)
    system = sub.add_parser(
        "system-lineage",
        help="write the lineage of Unity Catalog's lineage system tables",
        description="Write the lineage that Unity Catalog records in system.access.table_lineage "
        "and column_lineage (or copies of them), incrementally",
    )
    add_system_arguments(system)
    _common(system, single_process=False, subject="only runs whose newest row has event_time")
    _history_arguments(
        sub.add_parser(
            "history",
            help="lineage of datasets in a time window, computed from the event archive",
            description="The lineage of each dataset (or column) in a time window, computed from the event archive "
            "exactly as GET /api/ol2purview/lineage answers it from the run history",
        )
    )


def _history_arguments(parser: argparse.ArgumentParser) -> None:
    from olparser.history.window import DIRECTIONS

    from .history import DEFAULT_LOOKBACK_HOURS, FORMATS

    parser.add_argument("roots", nargs="+", metavar="QUALIFIED_NAME", help="datasets to start from")
    parser.add_argument("--archive", metavar="PATH", help="the event archive (default: where ARCHIVE_STORE keeps it)")
    parser.add_argument("--since", type=parse_time, required=True, help="start of the window (ISO 8601)")
    parser.add_argument("--until", type=parse_time, required=True, help="end of the window, excluded (ISO 8601)")
    parser.add_argument("--direction", choices=DIRECTIONS, default="both", help="default: both")
    parser.add_argument("--depth", type=int, default=3, help="process hops, 1 to 10 (default 3)")
    parser.add_argument("--column", help="trace this column through the column lineage each run recorded")
    parser.add_argument(
        "--lookback",
        type=positive,
        default=DEFAULT_LOOKBACK_HOURS,
        metavar="HOURS",
        help=f"read events this long before and after the window, for runs that overlap it "
        f"(default {DEFAULT_LOOKBACK_HOURS:g})",
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="jsonl",
        help="jsonl: one answer per dataset, as the endpoint gives it (default); parquet: one row "
        "per dataset, edge and run (needs --out)",
    )
    parser.add_argument("--out", type=Path, help="file (jsonl) or folder (parquet) to write; default: stdout (jsonl)")
    parser.add_argument("--master", help="Spark master URL (default: the active session, else local[*])")
    add_target_arguments(parser)


def job_settings(args: argparse.Namespace, settings: Settings) -> Settings:
    """The settings a command runs with: `--data`'s folder (its archive and run history), and unless `--dry-run` the
    catalog chosen as every tool chooses it. None found is said where the catalog is first needed (`job.client()`),
    after the arguments were checked; a malformed setting raises ValueError."""
    if getattr(args, "data", None):
        settings = replace(settings, data_dir=data_dir(args))
    if hasattr(args, "atlas_url") and getattr(args, "dry_run", None) is None:
        try:
            settings = with_catalog(settings, catalog_target(args, settings))
        except NoCatalog:
            pass
    return settings


def run_history_command(args: argparse.Namespace, settings: Settings) -> int:
    from olparser.history import Window
    from olparser.history.window import WalkLimits

    from .history import HistoryQuery, run_history, write_answers
    from .spark_job import spark_session

    if args.until <= args.since:
        print("ol2purview spark history: --until must be after --since", file=sys.stderr)
        return 2
    if not 1 <= args.depth <= WalkLimits().max_depth:
        print(f"ol2purview spark history: --depth must be from 1 to {WalkLimits().max_depth}", file=sys.stderr)
        return 2
    if args.format == "parquet" and args.out is None:
        print("ol2purview spark history: --format parquet needs --out FOLDER", file=sys.stderr)
        return 2
    query = HistoryQuery(
        tuple(args.roots), Window(args.since, args.until), args.direction, args.depth, args.column, args.lookback * 3600
    )
    print(rules_read("ol2purview spark history", settings), file=sys.stderr)
    spark = spark_session(args.master, "ol2purview-history", sys.stderr.isatty())
    try:
        answers = run_history(spark, [args.archive or default_archive(settings)], BackfillJob.create(settings), query)
    except (FileNotFoundError, ValueError) as exc:
        print(f"ol2purview spark history: {exc}", file=sys.stderr)
        return 2
    write_answers(spark, answers, args.out, args.format)
    return 0


def default_archive(settings: Settings) -> str:
    """The archive the settings write: the data folder's, or the blob container as an abfss:// URL."""
    if settings.archive_store == "blob" and settings.storage_connection:
        account = re.search(r"AccountName=([^;]+)", settings.storage_connection)
        if account:
            return f"abfss://{settings.archive_container}@{account.group(1)}.dfs.core.windows.net/"
    if settings.archive_store == "blob" and settings.storage_endpoints is not None:
        host = settings.storage_endpoints.blob.split("://", 1)[1].split("/", 1)[0]
        account_name, _, suffix = host.partition(".blob.")
        if suffix:
            return f"abfss://{settings.archive_container}@{account_name}.dfs.{suffix}/"
    return str(settings.data_dir / ARCHIVE_FOLDER)


def run(args: argparse.Namespace) -> int:
    configure_logging("warning")
    command = args.spark_command
    if (
        command in ("backfill", "remap")
        and args.until is not None
        and args.since is not None
        and args.until <= args.since
    ):
        print("ol2purview spark: --until must be after --since", file=sys.stderr)
        return 2
    try:
        settings = job_settings(args, Settings.from_env())
    except ValueError as exc:
        print(f"ol2purview spark {command}: {exc}", file=sys.stderr)
        return 2
    if not getattr(args, "single_process", False):  # every command but --single-process starts a Spark
        problem = java_problem()
        if problem:
            print(f"ol2purview spark {command}: {problem}", file=sys.stderr)
            return 1
    if command == "system-lineage":
        return run_system(args, settings, _print)
    if command == "history":
        return run_history_command(args, settings)
    sources = args.sources if command == "backfill" else [args.archive or default_archive(settings)]
    print(rules_read(f"ol2purview spark {command}", settings), file=sys.stderr)
    job = BackfillJob.create(settings, since=args.since, until=args.until, calls_per_second=args.max_calls_per_second)
    progress = sys.stderr.isatty()
    try:
        if args.dry_run is None:
            job.client()  # no catalog configured: say so before reading anything
        if args.single_process:
            from .local import run_local

            report = run_local(sources, job, command=command, dry_run=args.dry_run, progress=progress)
        else:
            from .class_sharing import publish
            from .spark_job import run_spark, spark_session

            spark = spark_session(args.master, f"ol2purview-{command}", progress, write_class_archive=True)
            try:
                report = run_spark(spark, sources, job, command=command, dry_run=args.dry_run)
                return _print(report, args.report)  # shown before a first run's JVM writes the class archive
            finally:
                publish(spark)
    except (FileNotFoundError, ValueError) as exc:
        print(f"ol2purview spark {command}: {exc}", file=sys.stderr)
        return 2
    return _print(report, args.report)


def _print(report: BackfillReport, folder: Path | None) -> int:
    print(report.table())
    if folder is not None:
        csv_path, json_path = report.write(folder)
        print(f"report: {csv_path} {json_path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    from ..cli import as_written

    parser = argparse.ArgumentParser(prog="ol2purview spark", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(as_written(sys.argv[1:] if argv is None else argv)))
