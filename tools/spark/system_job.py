"""`ol2purview spark system-lineage` on Spark: Unity Catalog's lineage system tables through the live path's parts.

    table_lineage (+ column_lineage) rows, a table or a Delta/Parquet path, event_time in the window widened by the
    lookback (event_date prunes partitions)                                                     [executors]
      -> (group, row) -> groupByKey(group) -> the runs the window owns, as OpenLineage events
         (system_rows) -> the live contract -> merge_event -> build_lineage (plan_run)           [executors]
      -> the steps every command shares (spark_job.write_results): newest run per process,
         dry run or bulk writes at the global call rate                                          [driver, executors]

The job's options carry the (workspace, metastore) pairs of the rows, so that Unity Catalog tables are named as
Purview's Unity Catalog scan names them. Counts travel with the data (a Tally per partition), as in the backfill.
"""

from __future__ import annotations

import json
import re
import time
import zlib
from collections import Counter
from dataclasses import dataclass, replace
from functools import partial, reduce
from pathlib import Path
from typing import Any, Iterable, Iterator

from .job import TALLY_KEY, BackfillJob
from .records import AcceptedRecord, read_record
from .report import BackfillReport, Tally
from .runs import RunResult, plan_run
from .spark_job import write_results
from .system_rows import (
    COLUMN_LINEAGE_SCHEMA,
    COLUMN_ROWS,
    ROW_FIELDS,
    TABLE_LINEAGE_SCHEMA,
    TABLE_ROWS,
    GroupKey,
    LineageRow,
    group_runs,
    iso_time,
    keyed_rows,
)

SYSTEM_TABLE_LINEAGE = "system.access.table_lineage"
SYSTEM_COLUMN_LINEAGE = "system.access.column_lineage"
_TABLE_NAME = re.compile(r"^[\w`-]+(\.[\w`-]+){1,2}$")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_METADATA_IDS = {
    "job_id": "$.job_info.job_id",
    "job_run_id": "$.job_info.job_run_id",
    "notebook_id": "$.notebook_id",
    "pipeline_id": "$.dlt_pipeline_info.dlt_pipeline_id",
}
ROWS_READ = {TABLE_ROWS: "table lineage rows read", COLUMN_ROWS: "column lineage rows read"}


@dataclass(frozen=True)
class Window:
    """The runs to write: those whose newest row's event_time is in [since, until) (Unix seconds; None: open).
    Rows are read from `lookback_seconds` before `since` (and after `until`), so that a run that started before the
    window, or goes on after it, is seen whole and written by the one window that owns it."""

    since: float | None
    until: float | None
    lookback_seconds: float

    def read_from(self) -> float | None:
        return None if self.since is None else self.since - self.lookback_seconds

    def read_until(self) -> float | None:
        return None if self.until is None else self.until + self.lookback_seconds

    def iso(self) -> tuple[str | None, str | None]:
        return (
            iso_time(self.since) if self.since is not None else None,
            iso_time(self.until) if self.until is not None else None,
        )


@dataclass(frozen=True)
class SystemPlan:
    """What the executors need: the job (settings, rules, limits), workspace hosts and the window."""

    job: BackfillJob
    hosts: tuple[tuple[str, str], ...]
    window: Window


def is_table_name(source: str) -> bool:
    """`catalog.schema.table` or `schema.table` (a path has a `/` or a scheme)."""
    return bool(_TABLE_NAME.match(source)) and "/" not in source and ":" not in source


def _is_url(source: str) -> bool:
    return bool(_URL.match(source)) and not source.startswith("file:")


def source_format(spark: Any, path: str) -> str:
    """`delta` for a folder with a `_delta_log`; `json` for a local folder of JSON-lines files (a copy of the rows
    made without Spark, such as `ol2purview demo` writes); else `parquet` (local paths and any URL the cluster
    reads)."""
    if not _is_url(path):
        folder = Path(path)
        if (folder / "_delta_log").is_dir():
            return "delta"
        if folder.is_dir() and any(folder.glob("*.json")) and not any(folder.glob("*.parquet")):
            return "json"
        return "parquet"
    jvm, conf = spark.sparkContext._jvm, spark.sparkContext._jsc.hadoopConfiguration()
    log = jvm.org.apache.hadoop.fs.Path(path.rstrip("/") + "/_delta_log")
    return "delta" if log.getFileSystem(conf).exists(log) else "parquet"


def read_source(spark: Any, source: str, kind_of_rows: str = TABLE_ROWS) -> Any:
    """A system table (or a copy) by name, or a Delta or Parquet folder (local, or any URL the cluster reads), or a
    local folder of JSON lines (read with the documented schema of `kind_of_rows`' table)."""
    if is_table_name(source):
        return spark.table(source)
    if _is_url(source):
        path = source
    else:
        local = Path(re.sub(r"^file:(//)?", "", source))
        if not local.exists():
            raise FileNotFoundError(f"no such table or folder: {source}")
        path = str(local.resolve())
    kind = source_format(spark, path)
    if kind == "json":
        schema = COLUMN_LINEAGE_SCHEMA if kind_of_rows == COLUMN_ROWS else TABLE_LINEAGE_SCHEMA
        return spark.read.schema(schema).json(path)
    try:
        return spark.read.format(kind).load(path)
    except Exception as exc:
        if kind == "delta" and "data source: delta" in str(exc).lower():  # DATA_SOURCE_NOT_FOUND
            raise ValueError(
                f"{source} is a Delta table: reading it needs the delta-spark package (built into "
                "Databricks; elsewhere start Spark with io.delta:delta-spark)"
            ) from None
        raise


def select_rows(frame: Any, kind: str, window: Window) -> Any:
    """The columns the job uses, in ROW_FIELDS order (a column the source lacks is null), rows of the read range."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    columns = set(frame.columns)

    def text(name: str) -> Any:
        return (F.col(name).cast("string") if name in columns else F.lit(None).cast("string")).alias(name)

    if "entity_metadata" in columns:
        metadata = F.col("entity_metadata")
        if not isinstance(frame.schema["entity_metadata"].dataType, StringType):
            metadata = F.to_json(metadata)
    else:
        metadata = F.lit(None).cast("string")
    selected = []
    for name in ROW_FIELDS:
        if name == "kind":
            selected.append(F.lit(kind).alias(name))
        elif name == "event_time":
            selected.append(F.col("event_time").cast("double").alias(name))
        elif name in _METADATA_IDS:
            selected.append(F.get_json_object(metadata, _METADATA_IDS[name]).alias(name))
        else:
            selected.append(text(name))
    first, last = window.read_from(), window.read_until()
    if first is not None:
        frame = frame.where(F.col("event_time") >= F.lit(first).cast("timestamp"))
        if "event_date" in columns:
            frame = frame.where(F.col("event_date") >= F.to_date(F.lit(first).cast("timestamp")))
    if last is not None:
        frame = frame.where(F.col("event_time") < F.lit(last).cast("timestamp"))
        if "event_date" in columns:
            frame = frame.where(F.col("event_date") <= F.to_date(F.lit(last).cast("timestamp")))
    return frame.select(*selected)


def _keyed(rows: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
    counts: Counter[str] = Counter()
    for key, row in keyed_rows(rows):
        counts[ROWS_READ[row[0]]] += 1  # kind
        yield key, row
    yield TALLY_KEY, Tally(rows=counts)


def _plan_groups(plan_b: Any, groups: Iterable[tuple[Any, Iterable[Any]]]) -> Iterator[RunResult | Tally]:
    plan: SystemPlan = plan_b.value
    job = plan.job
    engine, options, parse_sql, limits = job.engine(), job.options(), job.sql_parser(), job.limits()
    hosts = dict(plan.hosts)
    counted, read = Tally(), Tally()
    for key, values in groups:
        if key == TALLY_KEY:
            read = reduce(Tally.add, values, read)
        else:
            yield from plan_group(key, values, plan, hosts, counted, engine, options, parse_sql, limits)
    yield read.add(counted)


def plan_group(
    key: GroupKey,
    rows: Iterable[LineageRow],
    plan: SystemPlan,
    hosts: dict[str, str],
    tally: Tally,
    engine: Any,
    options: Any,
    parse_sql: Any,
    limits: Any,
) -> Iterator[RunResult]:
    """The runs of one group through the live contract, merger and builder; counts go to `tally`."""
    outcome = group_runs(key, rows, hosts, plan.window.since, plan.window.until)
    tally.rows.update(outcome.counts)
    for run_id, events in outcome.runs:
        accepted = []
        for event in events:
            tally.events_read += 1
            record = read_record(_json_bytes(event), limits)
            if isinstance(record, AcceptedRecord):
                accepted.append(_compressed(record.event_json))
            else:
                tally.refused[record.reason] += 1
        if accepted:
            yield plan_run(run_id, accepted, engine, options, parse_sql, plan.job.policy())


def _json_bytes(event: dict[str, Any]) -> bytes:
    return json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _compressed(data: bytes) -> bytes:
    return zlib.compress(data, 1)


def with_metastores(job: BackfillJob, pairs: Iterable[tuple[str, str]]) -> BackfillJob:
    """The job with the rows' (workspace id, metastore id) pairs added to DATABRICKS_METASTORE_IDS."""
    known = dict(job.settings.databricks_metastore_ids)
    for workspace, metastore in pairs:
        known.setdefault(workspace, metastore)
    return replace(job, settings=replace(job.settings, databricks_metastore_ids=tuple(sorted(known.items()))))


def run_system_lineage(
    spark: Any,
    table_source: str,
    column_source: str | None,
    job: BackfillJob,
    window: Window,
    hosts: dict[str, str],
    *,
    dry_run: Path | None = None,
) -> BackfillReport:
    started = time.monotonic()
    from pyspark.sql import functions as F

    rows = select_rows(read_source(spark, table_source), TABLE_ROWS, window)
    if column_source:
        rows = rows.unionByName(select_rows(read_source(spark, column_source, COLUMN_ROWS), COLUMN_ROWS, window))
    pairs = (
        rows.where(F.col("workspace_id").isNotNull() & F.col("metastore_id").isNotNull())
        .select("workspace_id", "metastore_id")
        .distinct()
        .collect()
    )
    job = with_metastores(job, sorted((row.workspace_id, row.metastore_id) for row in pairs))
    hosts = {**dict(job.settings.databricks_workspace_hosts), **hosts}
    plan_b = spark.sparkContext.broadcast(SystemPlan(job, tuple(sorted(hosts.items())), window))
    results = rows.rdd.mapPartitions(_keyed).groupByKey().mapPartitions(partial(_plan_groups, plan_b))
    report = write_results(spark, job, results, command="system-lineage", dry_run=dry_run, started=started)
    report.window = window.iso()
    return report
