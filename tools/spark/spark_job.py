"""The backfill and remap as a Spark job (PySpark RDDs): the same steps as the single-process runner, distributed.

    files (binaryFile; files over LARGE_FILE_BYTES as text lines)
      -> event bodies -> contract (refusals counted by reason) -> (runId, event JSON)        [executors]
      -> groupByKey(runId) -> merge_event ... -> build_lineage -> RunResult (persisted)       [executors]
      -> newest run per process, newest version of shared entities (small maps, broadcast)   [driver]
      -> selected plans -> --dry-run: distinct entities as JSON lines on the driver
                        -> else: spread over the upload tasks, each packing many runs per bulk call at
                           rate/tasks calls per second                                       [executors]

Counts travel with the data (one Tally per input partition through the same shuffle), never through
accumulators, so a retried task cannot count twice.
"""
from __future__ import annotations

import os
import sys
import time
from functools import partial
from operator import add
from pathlib import Path
from typing import Any, Iterable, Iterator

from .catalog import PlanWriter, WriteStats
from .job import (TALLY_KEY, BackfillJob, is_planned, keyed_records, planned_entities, register_typedefs,
                  remove_unused_placeholders, run_tally, unmatched_pairs, write_dry_run)
from .records import bodies_in_file, bodies_in_lines
from .report import BackfillReport, Tally, ranked_namespaces
from .runs import (RunResult, Selected, Version, entity_claims, newer_version, newest_claim, plan_run,
                   process_claims, selected_plan)
from .sources import spark_paths

LARGE_FILE_BYTES = 128 << 20  # larger files are read as lines by Spark, not whole


def spark_session(master: str | None, app_name: str = "ol2purview-backfill", progress: bool = True) -> Any:
    """The active SparkSession (Databricks, spark-submit) or a new one on `master` (default local[*])."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    builder = SparkSession.builder.appName(app_name).master(master or "local[*]")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # local workers run this interpreter (its packages)
    if (master or "local").startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # a local run listens on loopback only
    builder = builder.config("spark.ui.showConsoleProgress", str(progress).lower()).config("spark.ui.enabled",
                                                                                              "false")
    return builder.getOrCreate()


def _bodies_of_files(limit: int, rows: Iterable[Any]) -> Iterator[bytes | Exception]:
    for row in rows:
        yield from bodies_in_file(bytes(row.content), limit)


def _bodies_of_lines(limit: int, rows: Iterable[Any]) -> Iterator[bytes | Exception]:
    return bodies_in_lines((row.value.encode("utf-8") for row in rows), limit)


def _records(job: Any, bodies: Iterable[bytes | Exception]) -> Iterator[tuple[str, object]]:
    return keyed_records(job.value, bodies)


def _plan_runs(job: Any, groups: Iterable[tuple[str, Iterable[Any]]]) -> Iterator[tuple[str, Any]]:
    value = job.value
    engine, options = value.engine(), value.options()
    tally = Tally()
    for key, values in groups:
        if key == TALLY_KEY:
            for part in values:
                tally = tally.add(part)
        else:
            yield "run", plan_run(key, values, engine, options)
    yield "tally", tally


def _tally_of(item: tuple[str, Any]) -> Tally:
    kind, value = item
    return value if kind == "tally" else run_tally(value)


def _runs(item: tuple[str, Any]) -> list[RunResult]:
    return [item[1]] if item[0] == "run" else []


def _selected(winners: Any, versions: Any, result: RunResult) -> Selected:
    return selected_plan(result, winners.value, versions.value)


def _write_partition(job: Any, share: int, items: Iterable[Selected]) -> Iterator[WriteStats]:
    value = job.value
    yield PlanWriter(value.client(share), value.settings).write(items)


def _differing(pair: tuple[Any, Version]) -> bool:
    return pair[1].differs


def run_spark(spark: Any, sources: list[str], job: BackfillJob, *, command: str = "backfill",
              dry_run: Path | None = None) -> BackfillReport:
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    started = time.monotonic()
    sc = spark.sparkContext
    job_b = sc.broadcast(job)
    limit = job.limits().max_body_bytes
    paths = spark_paths(sources, job.since, job.until, job.settings.archive_container)
    tally = Tally()
    if not paths:
        return BackfillReport(command, tally, seconds=time.monotonic() - started)
    files = spark.read.format("binaryFile").option("recursiveFileLookup", "true").load(paths)
    bodies = files.filter(F.col("length") <= LARGE_FILE_BYTES).select("content").rdd.mapPartitions(
        partial(_bodies_of_files, limit))
    large = [row.path for row in files.filter(F.col("length") > LARGE_FILE_BYTES).select("path").collect()]
    if large:
        bodies = bodies.union(spark.read.text(large).rdd.mapPartitions(partial(_bodies_of_lines, limit)))

    records = bodies.mapPartitions(partial(_records, job_b))
    results = records.groupByKey().mapPartitions(partial(_plan_runs, job_b)).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        tally = results.map(_tally_of).fold(Tally(), Tally.add)
        runs = results.flatMap(_runs)
        unmatched = runs.flatMap(unmatched_pairs).distinct().map(lambda pair: (pair[0], 1)).reduceByKey(add)
        winners = runs.flatMap(process_claims).reduceByKey(newest_claim).collectAsMap()
        versions = runs.flatMap(entity_claims).reduceByKey(newer_version).filter(_differing).collectAsMap()
        winners_b = sc.broadcast({name: order[1] for name, order in winners.items()})
        versions_b = sc.broadcast({key: version.entity for key, version in versions.items()})
        selected = runs.filter(is_planned).map(partial(_selected, winners_b, versions_b))

        report = BackfillReport(command, tally, processes_planned=len(winners),
                                unmatched_namespaces=ranked_namespaces(dict(unmatched.collect())))
        report.processes_superseded = selected.map(lambda s: s.superseded).fold(0, add)
        if dry_run is not None:
            entities = selected.flatMap(planned_entities).reduceByKey(lambda a, _: a).sortByKey()
            report.dry_run_entities = write_dry_run(dry_run, (entity for _, entity in entities.toLocalIterator()))
        else:
            client = job.client()
            calls = register_typedefs(client, job)
            tasks = max(1, sc.defaultParallelism)
            stats = (selected.filter(lambda s: s.plan is not None).repartition(tasks)
                     .mapPartitions(partial(_write_partition, job_b, tasks)).fold(WriteStats(), WriteStats.add))
            report.count_writes(stats, calls)
            if command == "remap":
                report.placeholders_removed, remap_calls = remove_unused_placeholders(client, job,
                                                                                      stats.placeholders)
                report.catalog_calls += remap_calls
    finally:
        results.unpersist()
    report.seconds = time.monotonic() - started
    return report
