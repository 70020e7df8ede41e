"""`ol2purview spark history`: lineage in a time window computed from the event archive on Spark, for periods the run
history no longer holds (RUN_HISTORY_DAYS) or never held (before the connector ran).

    archive days of [since - lookback, until + lookback)                                          [driver]
      -> event bodies -> the live path's contract -> (runId, event)                               [executors]
      -> groupByKey(runId) -> merge_event ... -> build_lineage -> history_record: the record the live path keeps
         (a run without terminal event as INCOMPLETE); a run that reads temporary datasets once
         what their writers pass on is collected [driver]; those that overlap the window, persisted [executors]
      -> (dataset, process) pairs; the datasets and processes within `depth` hops of the roots, one Spark
         filter per hop and side                                                                 [executors]
      -> the records of those processes, collected; for each root the live path's walk
         (olparser.history.lineage_in_window) over them                                          [driver]

Each answer is exactly what `GET /api/ol2purview/lineage` answers for the same root and window. A run is built
from the events read: one that started more than `--lookback` before the window (or ended that long after it)
is seen only in part.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Iterable, Iterator

from olparser.history import RunRecord, Window, lineage_in_window
from olparser.history.memory import MemoryHistory
from olparser.history.window import WalkLimits
from olparser.jsontypes import JSON
from olparser.runs.rules import is_static_key

from .job import TALLY_KEY, BackfillJob
from .runs import DEFERRED, RunResult, Summary, history_of_run, history_replan, run_facts
from .sources import spark_paths
from .spark_job import _bodies_of_files, _records

DEFAULT_LOOKBACK_HOURS = 24.0
FORMATS = ("jsonl", "parquet")
PARQUET_COLUMNS = (
    "root",
    "rootColumn",
    "since",
    "until",
    "direction",
    "kind",
    "from",
    "fromColumn",
    "to",
    "toColumn",
    "process",
    "runId",
    "status",
    "start",
    "end",
)


@dataclass(frozen=True)
class HistoryQuery:
    roots: tuple[str, ...]
    window: Window
    direction: str = "both"
    depth: int = 3
    column: str | None = None
    lookback_seconds: float = DEFAULT_LOOKBACK_HOURS * 3600


def _history_results(job: Any, groups: Iterable[tuple[str, Iterable[Any]]]) -> Iterator[RunResult]:
    value = job.value
    engine, options, parse_sql = value.engine(), value.options(), value.sql_parser()
    for key, events in groups:
        if key != TALLY_KEY and not is_static_key(key):
            yield history_of_run(key, events, engine, options, parse_sql, value.policy())


def _passed_on(result: RunResult) -> list[tuple[tuple[Any, ...], Any]]:
    return [fact for fact in run_facts(result) if fact[0][0] in ("t", "d")]


def _window_records(job: Any, window: Window, temporary: Any, results: Iterable[RunResult]) -> Iterator[RunRecord]:
    """The records that overlap the window; a deferred run's record built now that every writer is known."""
    value = job.value
    engine, options, parse_sql = value.engine(), value.options(), value.sql_parser()
    for result in results:
        if result.status == DEFERRED:
            result = history_replan(result, temporary.value, engine, options, parse_sql)
        record = result.record
        if record is not None and window.overlaps(record.facts.start, record.facts.end):
            yield record


def _pairs(record: RunRecord) -> list[tuple[str, str]]:
    return [(a.dataset.qualified_name, a.process) for a in record.accesses()]


def _touches(names: Any, record: RunRecord) -> bool:
    return any(p.qualified_name in names.value for p in record.processes)


def reachable_processes(pairs: Any, roots: Iterable[str], depth: int) -> set[str]:
    """The processes within `depth` hops of the roots, either way (a superset of what any direction reaches)."""
    sc = pairs.context
    datasets, processes = set(roots), set[str]()
    for _ in range(depth):
        known = sc.broadcast(datasets)
        found = set(pairs.filter(lambda pair, k=known: pair[0] in k.value).values().distinct().collect())
        if found <= processes:
            break
        processes |= found
        reached = sc.broadcast(processes)
        datasets |= set(pairs.filter(lambda pair, r=reached: pair[1] in r.value).keys().distinct().collect())
    return processes


def _files(spark: Any, paths: list[str]) -> Any:
    """The files of `paths` as Spark's binaryFile rows; None when there are none (no archive day of the range)."""
    from pyspark.errors import AnalysisException

    if not paths:
        return None
    try:
        return spark.read.format("binaryFile").option("recursiveFileLookup", "true").load(paths)
    except AnalysisException as error:
        if "PATH_NOT_FOUND" in str(error):
            return None
        raise


def run_history(spark: Any, sources: list[str], job: BackfillJob, query: HistoryQuery) -> list[JSON]:
    """The lineage answer of each root, from the events in `sources` (the archive layout is read by day)."""
    sc = spark.sparkContext
    window = query.window
    reading = BackfillJob(
        job.settings,
        since=window.since - query.lookback_seconds,
        until=window.until + query.lookback_seconds,
        calls_per_second=None,
    )
    paths = spark_paths(sources, reading.since, reading.until, job.settings.archive_container)
    records: list[RunRecord] = []
    files = _files(spark, paths)
    if files is not None:
        job_b = sc.broadcast(reading)
        limit = reading.limits().max_body_bytes
        grouped = (
            files.select("content")
            .rdd.mapPartitions(partial(_bodies_of_files, limit))
            .mapPartitions(partial(_records, job_b))
            .groupByKey()
        )
        results = grouped.mapPartitions(partial(_history_results, job_b)).cache()
        summary = Summary.of(results.flatMap(_passed_on).collect())  # what temporary datasets pass on: small
        temporary_b = sc.broadcast(summary.temporary if summary.deferred else {})
        in_window = results.mapPartitions(partial(_window_records, job_b, window, temporary_b)).cache()
        try:
            pairs = in_window.flatMap(_pairs).distinct().cache()
            processes = reachable_processes(pairs, query.roots, query.depth)
            names = sc.broadcast(processes)
            records = in_window.filter(partial(_touches, names)).collect()
            pairs.unpersist()
        finally:
            in_window.unpersist()
            results.unpersist()
    reader = MemoryHistory(records)
    return [
        lineage_in_window(
            reader, root, window, query.direction, query.depth, column=query.column, limits=WalkLimits(seconds=3600.0)
        )
        for root in query.roots
    ]


def parquet_rows(answers: Iterable[JSON]) -> list[tuple[Any, ...]]:
    """One row per (root, edge, run), column edges included (kind `column`), in PARQUET_COLUMNS order."""
    rows = []
    for answer in answers:
        runs = {r["runId"]: r for p in answer["processes"] for r in p["runs"]}
        head = (answer["qualifiedName"], answer["column"], answer["since"], answer["until"], answer["direction"])
        processes = {p["qualifiedName"] for p in answer["processes"]}
        for edge in answer["edges"]:
            process = edge["from"] if edge["from"] in processes else edge["to"]
            rows += [
                (
                    *head,
                    edge["kind"],
                    edge["from"],
                    None,
                    edge["to"],
                    None,
                    process,
                    run_id,
                    *_run_columns(runs.get(run_id)),
                )
                for run_id in edge["runs"]
            ]
        for edge in answer.get("columnEdges") or ():
            rows += [
                (
                    *head,
                    "column",
                    edge["from"]["dataset"],
                    edge["from"]["column"],
                    edge["to"]["dataset"],
                    edge["to"]["column"],
                    edge["process"],
                    run_id,
                    *_run_columns(runs.get(run_id)),
                )
                for run_id in edge["runs"]
            ]
    return rows


def _run_columns(run: JSON | None) -> tuple[Any, ...]:
    return (run["status"], run["start"], run["end"]) if run else (None, None, None)


def write_answers(spark: Any, answers: list[JSON], out: Path | None, output_format: str) -> None:
    """JSON lines (one answer per root) to `out` or stdout, or Parquet rows (`parquet_rows`) to the folder `out`."""
    if output_format == "parquet":
        from pyspark.sql.types import StringType, StructField, StructType

        schema = StructType([StructField(name, StringType(), True) for name in PARQUET_COLUMNS])
        spark.createDataFrame(parquet_rows(answers), schema).write.mode("overwrite").parquet(str(out))
        return
    lines = "".join(json.dumps(answer, sort_keys=True, ensure_ascii=False) + "\n" for answer in answers)
    if out is None:
        sys.stdout.write(lines)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(lines, encoding="utf-8")
