"""The backfill and remap as a Spark job (PySpark RDDs): the same steps as the single-process runner, distributed.

    files (local master and local files: read by the Python workers; else binaryFile, files over
           LARGE_FILE_BYTES as text lines)
      -> event bodies -> contract (refusals counted by reason) -> (runId, event JSON)        [executors]
      -> groupByKey(runId) -> merge_event ... -> build_lineage -> RunResult, its facts reduced per
         partition; the runs and the partition's facts cached pickled (each read back alone); for a
         dry run only the runs newest for some entity (dry_run.NewestRuns)                    [executors]
      -> one reduce of per-run facts: newest run per process, newest version of the shared
         entities runs disagree about, counts, unmatched namespaces (broadcast back)         [driver]
      -> selected plans -> --dry-run: distinct entities as JSON lines on the driver
                        -> else: the runs' history records into the run history, then the plans spread over
                           the upload tasks, each packing many runs per bulk call at rate/tasks calls per
                           second, with run counts from the history                          [executors]

Counts travel with the data (one Tally per input partition through the same shuffle), never through
accumulators, so a retried task cannot count twice.
"""

from __future__ import annotations

import os
import pickle
import sys
import time
from contextlib import contextmanager
from dataclasses import replace
from functools import partial, reduce
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from . import class_sharing
from .catalog import PlanWriter, WriteStats
from .dry_run import NewestRuns
from .job import (
    TALLY_KEY,
    BackfillJob,
    finish_writes,
    is_planned,
    keyed_records,
    planned_entities,
    record_history,
    register_typedefs,
    relink_history,
    write_dry_run,
)
from .records import bodies_in_file, bodies_in_lines, bodies_in_path
from .report import BackfillReport, Tally, ranked_namespaces
from .runs import (
    DEFERRED,
    FactReducer,
    RunResult,
    Selected,
    Summary,
    batch_marks,
    lifecycle_keys,
    merge_facts,
    plan_run,
    replan,
    run_facts,
    selected_plan,
    standing_changes,
)
from .sources import is_remote, local_files, spark_paths

LARGE_FILE_BYTES = 128 << 20  # larger files are read as lines by Spark, not whole
READ_PARTITIONS_PER_CORE = 16  # at most, for large files: the last of them ends soon after the others
READ_TASK_BYTES = 4 << 20  # a file read task is worth its start from this many (compressed) bytes on
# A local session (one JVM holding the driver and the executors, started by this process) is tuned for short jobs
# whose work is in the Python workers; a cluster's session (Databricks, spark-submit) keeps its own settings.
JAVA_OPTIONS = "spark.driver.extraJavaOptions"
LOCAL_SESSION = {
    # The JVM only moves bytes (file contents, compressed events, pickled results): a 1 GB heap holds a partition's
    # shuffle buffers and the cached results beyond which Spark spills to disk; a larger heap only lets the
    # collector wait longer, raising the peak without speeding anything up.
    "spark.driver.memory": "1g",
    # C1 only and the serial collector: the JIT and GC threads of the default setup compete with the Python
    # workers for the same cores (a third of the session start on 2 cores) for code that runs a few seconds.
    JAVA_OPTIONS: "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
    # every task of a stage reuses its Python worker (its imports, compiled rules and SQL parser)
    "spark.python.worker.reuse": "true",
    # cached results (pickled plans, largely repeated JSON) kept compressed: 5-10 times less heap or disk
    "spark.rdd.compress": "true",
}
RUN, FACTS = "run", "facts"  # what the cache after planning holds: pickled runs, then each partition's facts
SUPERSEDED_RUNS = "superseded"  # and for a dry run, how many processes the runs it did not keep lose
SUPERSEDED = ("\x00", "superseded")  # sorts before every (typeName, qualifiedName) key of the dry run


def spark_session(
    master: str | None,
    app_name: str = "ol2purview-backfill",
    progress: bool = True,
    config: dict[str, str] | None = None,
    write_class_archive: bool = False,
) -> Any:
    """The active SparkSession (Databricks, spark-submit), else a new one on `master` with `config`: by default the
    cluster's master under Databricks or spark-submit, `local[*]` anywhere else. A local session maps the classes
    its JVM loads from the archive the first local session of the command line wrote (class_sharing), or writes it
    (`write_class_archive`: then stop the session with class_sharing.publish)."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    on_cluster = any(name in os.environ for name in ("DATABRICKS_RUNTIME_VERSION", "SPARK_ENV_LOADED"))
    master = master or (None if on_cluster else "local[*]")  # None: the cluster's (Databricks, spark-submit)
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    if master is not None and master.startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # local workers run this interpreter (its packages)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # a local run listens on loopback only
        builder = builder.config("spark.ui.enabled", "false")  # no web UI port for a local run
        for key, value in LOCAL_SESSION.items():
            builder = builder.config(key, value)
        sharing = class_sharing.java_options(write_class_archive)
        if sharing:
            builder = builder.config(JAVA_OPTIONS, f"{LOCAL_SESSION[JAVA_OPTIONS]} {sharing}")
    builder = builder.config("spark.ui.showConsoleProgress", str(progress).lower())
    for key, value in (config or {}).items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def _bodies_of_files(limit: int, rows: Iterable[Any]) -> Iterator[bytes | Exception]:
    for row in rows:
        yield from bodies_in_file(bytes(row.content), limit)


def _bodies_of_bins(limit: int, bins: Iterable[list[tuple[str, int, int]]]) -> Iterator[bytes | Exception]:
    for pieces in bins:
        for path, mine, readers in pieces:
            yield from bodies_in_path(Path(path), limit, (mine, readers))


def _bodies_of_lines(limit: int, rows: Iterable[Any]) -> Iterator[bytes | Exception]:
    return bodies_in_lines((row.value.encode("utf-8") for row in rows), limit)


def _records(job: Any, bodies: Iterable[bytes | Exception]) -> Iterator[tuple[str, object]]:
    return keyed_records(job.value, bodies)


def _plan_runs(job: Any, groups: Iterable[tuple[str, Iterable[Any]]]) -> Iterator[RunResult | Tally]:
    value = job.value
    engine, options, parse_sql = value.engine(), value.options(), value.sql_parser()
    for key, values in groups:
        if key == TALLY_KEY:
            yield reduce(Tally.add, values, Tally())
        else:
            yield plan_run(key, values, engine, options, parse_sql, value.policy())


def _runs_and_facts(listing: bool, items: Iterable[RunResult | Tally]) -> Iterator[tuple[str, bytes]]:
    """What the steps after planning read again, pickled here once: each run a later step uses (planned, or with a
    history record), then the partition's facts reduced (run_facts, merge_facts). Cached like this, the reduce of
    the facts never unpickles a run and the selection never unpickles the facts. For a dry run's `listing`, only
    the planned runs it can need (dry_run.NewestRuns: about one in ten when runs repeat), without their history
    records, and the count of the superseded processes of the others."""
    reducer = FactReducer()
    newest: NewestRuns[RunResult] = NewestRuns()
    for item in items:
        if isinstance(item, Tally):
            reducer.add_facts([(("r",), item)])
            continue
        reducer.add(item)
        if item.status == DEFERRED:  # planned after the reduce (`_replanned`), whatever is listed
            yield RUN, pickle.dumps(item, pickle.HIGHEST_PROTOCOL)
        elif listing:
            if is_planned(item):
                yield from map(_pickled_run, newest.add(item, item))
        elif is_planned(item) or item.record is not None:
            yield RUN, pickle.dumps(item, pickle.HIGHEST_PROTOCOL)
    if listing:
        yield from map(_pickled_run, newest.kept())
        yield SUPERSEDED_RUNS, pickle.dumps(newest.superseded)
    yield FACTS, pickle.dumps(reducer.items(), pickle.HIGHEST_PROTOCOL)


def _pickled_run(result: RunResult) -> tuple[str, bytes]:
    return RUN, pickle.dumps(replace(result, record=None), pickle.HIGHEST_PROTOCOL)


def _is_run(pair: tuple[str, bytes]) -> bool:
    return pair[0] == RUN


def _is_facts(pair: tuple[str, bytes]) -> bool:
    return pair[0] == FACTS


def _listed_pairs(summary: Any, pair: tuple[str, bytes]) -> list[tuple[Any, Any]]:
    """What a dry run's cache item lists: a run's selected entities and its superseded processes, or the count of
    the superseded processes of the runs its partition did not keep."""
    kind, data = pair
    if kind == RUN:
        return _dry_run_pairs(_selected(summary, pickle.loads(data)))
    return [(SUPERSEDED, pickle.loads(data))] if kind == SUPERSEDED_RUNS else []


def _unpickled(pair: tuple[str, bytes]) -> Any:
    return pickle.loads(pair[1])


def _is_planned(item: RunResult) -> bool:
    return is_planned(item)


def _is_deferred(item: RunResult) -> bool:
    return item.status == DEFERRED


def _is_not_deferred(item: RunResult) -> bool:
    return item.status != DEFERRED


def _replan_partition(job: Any, temporary: Any, items: Iterable[RunResult]) -> Iterator[RunResult]:
    value = job.value
    engine, options, parse_sql = value.engine(), value.options(), value.sql_parser()
    for item in items:
        yield replan(item, temporary.value, engine, options, parse_sql, value.policy())


def _is_kept_fact(pair: tuple[tuple[Any, ...], Any]) -> bool:
    """What the driver needs: every fact but the versions of entities all runs agree on."""
    return pair[0][0] != "e" or pair[1].differs


def _selected(summary: Any, result: RunResult) -> Selected:
    return selected_plan(result, summary.value.winners, summary.value.versions)


def _dry_run_pairs(selected: Selected) -> list[tuple[Any, Any]]:
    return [*planned_entities(selected), (SUPERSEDED, selected.superseded)]


def _first_or_sum(a: Any, b: Any) -> Any:
    return a + b if isinstance(a, int) else a


def _sorted_partition(pairs: Iterable[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    return sorted(pairs, key=lambda pair: pair[0])


def _dealt(tasks: int, partition: int, items: Iterable[Selected]) -> Iterator[tuple[int, Selected]]:
    """Runs dealt to the upload tasks like cards, each partition starting where its index says: every task gets as
    many (to within the number of partitions), so all of them keep their share of the call rate busy until about
    the same time; no global index, whose count would compute every run twice."""
    for index, item in enumerate(items, start=partition):
        yield index % tasks, item


def _identity(key: int) -> int:
    return key


def _write_partition(job: Any, share: int, items: Iterable[Selected]) -> Iterator[WriteStats]:
    value = job.value
    history, run_state = value.history(), value.run_state()
    try:
        yield PlanWriter.build(value.client(share), value.settings, registry=run_state, history=history).write(items)
    finally:
        history.close()
        run_state.close()


def _apply_lifecycle(job: Any, selected: Any, links: dict[tuple[str, str], tuple[str, str]]) -> WriteStats:
    """After every write: the tables the batch's runs drop and rename (few runs, collected), in time order, without
    what a newer run of the batch writes again, as the live runner applies them (`PlanWriter.apply_lifecycle`)."""
    changing = selected.filter(_changes_lifecycle).collect()
    if not changing:
        return WriteStats()
    wanted = frozenset(key for s in changing for key in s.lifecycle.keys())
    written = dict(selected.flatMap(partial(lifecycle_keys, wanted=wanted)).reduceByKey(max).collect())
    history, run_state = job.history(), job.run_state()
    try:
        return PlanWriter.build(job.client(), job.settings, registry=run_state, history=history).apply_lifecycle(
            standing_changes(changing, written), links, batch_marks(changing, written, links)
        )
    finally:
        history.close()
        run_state.close()


def _changes_lifecycle(item: Selected) -> bool:
    return bool(item.lifecycle)


def _has_record(item: RunResult) -> bool:
    return item.record is not None


def _record_partition(job: Any, items: Iterable[RunResult]) -> Iterator[int]:
    # Why the type error is ignored: Spark's broadcast value (Any): the job
    yield record_history(job.value, (item.record for item in items))  # type: ignore[misc]


def _relink_partition(job: Any, links: Any, items: Iterable[RunResult]) -> None:
    # Why the type error is ignored: Spark's broadcast value (Any): the job
    relink_history(job.value, (item.record for item in items), links.value)  # type: ignore[misc]


def _read_partitions(cores: int, files: int, size: int) -> int:
    """How many partitions to ask of the file read: one per file of at least READ_TASK_BYTES, at most
    READ_PARTITIONS_PER_CORE per core, never fewer than the cores (Spark's own default): a few large files (the
    OpenLineage file transport's, exports) keep every core busy to the end, while small ones (the archive's, one
    event each) are packed by Spark's usual rule (its open cost per file)."""
    return max(cores, min(files, READ_PARTITIONS_PER_CORE * cores, size // READ_TASK_BYTES))


def _run_partitions(sc: Any, records: Any) -> int:
    """How many partitions the runs are grouped into: a multiple of the cores, at least two per core, and at least
    as many as the read gave (each holds its share of the compressed events while its runs are planned)."""
    cores = sc.defaultParallelism
    return cores * max(2, -(-records.getNumPartitions() // cores))


@contextmanager
def _session_conf(spark: Any, key: str, value: str) -> Iterator[None]:
    """A session setting changed while the block builds its RDD (a file read's partitions are fixed then), then
    restored: a session the job borrows (Databricks, the tests') keeps its settings."""
    before = spark.conf.get(key, None)
    spark.conf.set(key, value)
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)


def event_bodies(spark: Any, paths: list[str], limit: int) -> Any:
    """An RDD of the event bodies (or refusals) in the files at `paths`: files up to LARGE_FILE_BYTES read whole,
    in about one partition per file of READ_TASK_BYTES or more (see _read_partitions), larger ones as text lines,
    spread over the cores when they come in fewer partitions (a gzip file is one)."""
    from pyspark.sql import functions as F

    files = spark.read.format("binaryFile").option("recursiveFileLookup", "true").load(paths)
    length = F.col("length")
    is_large = length > LARGE_FILE_BYTES
    whole, whole_bytes, large_files = files.agg(
        F.count(F.when(~is_large, 1)), F.sum(F.when(~is_large, length)), F.count(F.when(is_large, 1))
    ).first()
    with _session_conf(
        spark,
        "spark.sql.files.minPartitionNum",
        str(_read_partitions(spark.sparkContext.defaultParallelism, whole, whole_bytes or 0)),
    ):
        bodies = files.filter(~is_large).select("content").rdd.mapPartitions(partial(_bodies_of_files, limit))
    if large_files:
        large = [row.path for row in files.filter(is_large).select("path").collect()]
        lines = spark.read.text(large)
        cores = spark.sparkContext.defaultParallelism
        if lines.rdd.getNumPartitions() < cores:  # gzip cannot be split: its lines go to every core (a JVM shuffle)
            lines = lines.repartition(cores)
        bodies = bodies.union(lines.rdd.mapPartitions(partial(_bodies_of_lines, limit)))
    return bodies


def local_event_bodies(sc: Any, sources: list[str], job: BackfillJob, limit: int) -> Any | None:
    """On a local master, local files are read by the Python workers themselves (as the single-process runner reads
    them): no file contents through the JVM and no SQL engine to start for the listing (about 2 s of a local run).
    None when the sources are not all local files of at most LARGE_FILE_BYTES (then `event_bodies` reads them)."""
    if not sc.master.startswith("local") or any(is_remote(s) and not s.startswith("file:") for s in sources):
        return None
    try:
        files = local_files(sources, job.since, job.until)
    except (FileNotFoundError, ValueError):
        return None  # the Spark read names the problem as it always has
    sizes = [path.stat().st_size for path in files]
    if not files or max(sizes) > LARGE_FILE_BYTES:
        return None
    cores = sc.defaultParallelism
    pieces, piece_sizes = _shared_files(files, sizes, cores)
    bins = _balanced_bins(pieces, piece_sizes, _read_partitions(cores, len(pieces), sum(sizes)))
    return sc.parallelize(bins, len(bins)).mapPartitions(partial(_bodies_of_bins, limit))


def _shared_files(files: list[Path], sizes: list[int], cores: int) -> tuple[list[tuple[str, int, int]], list[int]]:
    """Each file as (path, j, k) for its k readers (records.bodies_in_file's `share`), with the size each one
    parses: a file larger than a core's fair share of all the bytes is read by as many tasks as it holds shares (at
    most one per core), so that one big gzip file (an export, the file transport's) is parsed on every core."""
    total = max(sum(sizes), 1)
    pieces, piece_sizes = [], []
    for path, size in zip(files, sizes, strict=True):
        readers = max(1, min(cores, round(size * cores / total)))
        for mine in range(readers):
            pieces.append((str(path), mine, readers))
            piece_sizes.append(size // readers)
    return pieces, piece_sizes


def _balanced_bins(files: Sequence[Any], sizes: list[int], count: int) -> list[list[Any]]:
    """The files (or pieces of files) dealt into at most `count` bins of about equal size, largest first into
    the lightest bin."""
    bins: list[list[Any]] = [[] for _ in range(min(count, len(files)))]
    loads = [0] * len(bins)
    for number in sorted(range(len(files)), key=lambda n: -sizes[n]):
        lightest = loads.index(min(loads))
        item = files[number]
        bins[lightest].append(str(item) if isinstance(item, Path) else item)
        loads[lightest] += sizes[number]
    return bins


def run_spark(
    spark: Any, sources: list[str], job: BackfillJob, *, command: str = "backfill", dry_run: Path | None = None
) -> BackfillReport:
    started = time.monotonic()
    sc = spark.sparkContext
    job_b = sc.broadcast(job)
    limit = job.limits().max_body_bytes
    paths = spark_paths(sources, job.since, job.until, job.settings.archive_container)
    tally = Tally()
    if not paths:
        return BackfillReport(command, tally, seconds=time.monotonic() - started)
    bodies = local_event_bodies(sc, sources, job, limit)
    if bodies is None:
        bodies = event_bodies(spark, paths, limit)
    records = bodies.mapPartitions(partial(_records, job_b))
    results = records.groupByKey(_run_partitions(sc, records)).mapPartitions(partial(_plan_runs, job_b))
    return write_results(spark, job, results, command=command, dry_run=dry_run, started=started)


def write_results(
    spark: Any, job: BackfillJob, results: Any, *, command: str, dry_run: Path | None, started: float
) -> BackfillReport:
    """The steps after planning, shared by every command: reduce the facts of the runs (`results`, an RDD of
    RunResult and Tally), select what to write, then the dry run or the writes."""
    from pyspark import StorageLevel

    sc = spark.sparkContext
    job_b = sc.broadcast(job)
    cached = results.mapPartitions(partial(_runs_and_facts, dry_run is not None)).persist(StorageLevel.MEMORY_AND_DISK)
    replanned = None
    try:
        facts = cached.filter(_is_facts).flatMap(_unpickled)
        summary = Summary.of(facts.reduceByKey(merge_facts).filter(_is_kept_fact).collect())
        results = cached.filter(_is_run).map(_unpickled)
        if summary.deferred:  # runs that read temporary datasets: planned now that every writer is known
            temporary_b = sc.broadcast(summary.temporary)
            replanned = (
                results.filter(_is_deferred)
                .mapPartitions(partial(_replan_partition, job_b, temporary_b))
                .persist(StorageLevel.MEMORY_AND_DISK)
            )
            summary = Summary.of(
                facts.union(replanned.flatMap(run_facts)).reduceByKey(merge_facts).filter(_is_kept_fact).collect()
            )
            results = results.filter(_is_not_deferred).union(replanned)
        summary_b = sc.broadcast(summary)
        selected = results.filter(_is_planned).map(partial(_selected, summary_b))
        report = BackfillReport(
            command,
            summary.tally,
            processes_planned=len(summary.winners),
            unmatched_namespaces=ranked_namespaces(summary.unmatched),
        )
        if dry_run is not None:
            listed = cached.flatMap(partial(_listed_pairs, summary_b))
            if replanned is not None:
                listed = listed.union(
                    replanned.filter(_is_planned).map(partial(_selected, summary_b)).flatMap(_dry_run_pairs)
                )
            pairs = listed.reduceByKey(_first_or_sum, numPartitions=1)
            superseded = [0]

            def entities() -> Iterator[Any]:  # streamed to the file; the count of superseded sorts first
                for key, value in pairs.mapPartitions(_sorted_partition).toLocalIterator():
                    if key == SUPERSEDED:
                        superseded[0] = value
                    else:
                        yield value

            report.dry_run_entities = write_dry_run(dry_run, entities())
            report.processes_superseded = superseded[0]
        else:
            # the run history first: the writers read the processes' run counts from it
            report.runs_recorded = results.filter(_has_record).mapPartitions(partial(_record_partition, job_b)).sum()
            client = job.client()
            calls = register_typedefs(client, job)
            tasks = max(1, sc.defaultParallelism)
            dealt = selected.mapPartitionsWithIndex(partial(_dealt, tasks)).partitionBy(tasks, _identity).values()
            stats = dealt.mapPartitions(partial(_write_partition, job_b, tasks)).fold(WriteStats(), WriteStats.add)
            stats = stats.add(_apply_lifecycle(job, selected, stats.links))
            finish_writes(report, client, job, stats, calls)
            if stats.links:  # the history names what the writes linked (as the live path records it)
                links_b = sc.broadcast(stats.links)
                results.filter(_has_record).foreachPartition(partial(_relink_partition, job_b, links_b))
    finally:
        cached.unpersist()
        if replanned is not None:
            replanned.unpersist()
    report.seconds = time.monotonic() - started
    return report
