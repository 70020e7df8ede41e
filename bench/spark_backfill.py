"""`ol2purview spark backfill --dry-run` end to end, as a user runs it: the command on Spark `local[2]` against the
single-process runner (`--single-process`, the floor) on the same files, then the JVM's peak memory on a million
events, then catalog calls per run on a 50,000-event subset written to the embedded catalog (cross-run batching).

- Speed: BENCH_SPARK_EVENTS (default 120,000) events in two shapes, a folder of gzip files of 30,000 events (the
  archive's, an export's parts) and one gzip file of them all (the file transport's, an Event Hubs capture: gzip
  cannot be split, the parsing after the read is shared by the cores), BENCH_SPARK_ROUNDS (default 1; 0 skips it)
  rounds, each timing both commands one after the other; the ratio is the median of the rounds' ratios
  (single-process seconds / Spark seconds: above 1, Spark is faster). Each command's start (interpreter, imports, and for Spark the session) is its
  wall time minus the seconds its report counts from the first file read.
- Memory: the JVM's peak resident memory (VmHWM, driver and executors in one process) running the command on
  BENCH_SPARK_MEMORY_EVENTS (default 1,000,000; 0 skips it) events, against the same command's JVM on 3 events
  (the session's own footprint).

Workload: Databricks notebook runs (START, RUNNING with environment-properties, COMPLETE with 30 columns of
lineage; bench/merge.py's run), 1,000 notebooks each writing its own table and run again and again, 5% of the runs
reading a source no rule maps. Events are written as gzipped JSON lines to a temporary folder, deleted afterwards.
BENCH_SPARK_SUBSET=0 skips the catalog calls. Run as `.venv/bin/python -m bench spark_backfill`; both figures are
recorded for README's table, with the load average at the end of each.
"""

from __future__ import annotations

import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from bench import MAPPINGS_PATH, report
from bench.merge import databricks_run

EVENTS = int(os.environ.get("BENCH_SPARK_EVENTS", "120000"))
ROUNDS = int(os.environ.get("BENCH_SPARK_ROUNDS", "1"))
MEMORY_EVENTS = int(os.environ.get("BENCH_SPARK_MEMORY_EVENTS", "1000000"))
MEMORY_BUDGET_MB = 1536
SUBSET = int(os.environ.get("BENCH_SPARK_SUBSET", "50000"))
EVENTS_PER_FILE = 30_000
NOTEBOOKS = 1_000
UNMATCHED_EVERY = 20  # 5% of the runs read a source no rule maps
WORKSPACE_HOSTS = "1234567890123456=adb-1234567890123456.5.azuredatabricks.net"
RUN_ID = "00000000-0000-4000-8000-00000000feed"
PARENT_ID = "00000000-0000-4000-8000-00000000beef"
BASE = datetime(2025, 3, 1, tzinfo=timezone.utc)
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"


def _templates() -> tuple[list[str], list[str]]:
    """The run's three events as JSON text with markers to replace: a matched run and an unmatched one."""
    events = databricks_run(RUN_ID)
    for event in events:
        event["schemaURL"] = SCHEMA_URL
        event["run"]["facets"]["parent"]["run"]["runId"] = PARENT_ID
    matched = [json.dumps(e) for e in events]
    for event in events:
        customers = event["inputs"][1]
        customers["namespace"] = "sftp://legacy-host:22"
        customers["facets"] = {k: v for k, v in customers["facets"].items() if k != "symlinks"}
        for field in (event["outputs"][0]["facets"].get("columnLineage") or {}).get("fields", {}).values():
            field["inputFields"][1]["namespace"] = "sftp://legacy-host:22"
    return matched, [json.dumps(e) for e in events]


def _run_lines(run: int, templates: tuple[list[str], list[str]]) -> list[str]:
    notebook = run % NOTEBOOKS
    start = BASE + timedelta(seconds=run * 10)
    texts = templates[1] if run % UNMATCHED_EVERY == 0 else templates[0]
    times = {
        "2025-03-01T10:00:00.100Z": start,
        "2025-03-01T10:00:01.200Z": start + timedelta(seconds=1),
        "2025-03-01T10:00:09.300Z": start + timedelta(seconds=9),
    }
    lines = []
    for text in texts:
        for marker, moment in times.items():
            text = text.replace(marker, moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z")
        lines.append(
            text.replace(RUN_ID, f"00000000-0000-4000-8000-{run:012d}")
            .replace(PARENT_ID, f"00000000-0000-4000-9000-{run:012d}")
            .replace("enrich_orders", f"enrich_{notebook}")
            .replace("orders_enriched", f"enriched_{notebook}")
            .replace("curated_orders", f"curated_{notebook}")
        )
    return lines


def generate(folder: Path, events: int, per_file: int = EVENTS_PER_FILE) -> int:
    """`events` events (whole runs) as gzipped JSON lines files of `per_file` events; returns how many bytes of JSON
    that is."""
    folder.mkdir(parents=True, exist_ok=True)
    templates = _templates()
    written, raw, run, part = 0, 0, 0, 0
    while written < events:
        with gzip.open(folder / f"part-{part:05d}.jsonl.gz", "wt", encoding="utf-8", compresslevel=1) as out:
            in_file = 0
            while in_file < per_file and written < events:
                for line in _run_lines(run, templates):
                    out.write(line + "\n")
                    raw += len(line) + 1
                written += 3
                in_file += 3
                run += 1
        part += 1
    return raw


class PeakMemory:
    """Peak resident memory (VmHWM) of a process, read from /proc when asked."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def peak_mb(self) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return 0.0


def descendants(pid: int) -> list[int]:
    """The processes below `pid` (children, their children...), read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _java_peak_mb(pid: int) -> float:
    """The largest peak resident memory among the java processes below `pid` (0 when none)."""
    peak = 0.0
    for child in descendants(pid):
        try:
            if Path(f"/proc/{child}/comm").read_text().strip() == "java":
                peak = max(peak, PeakMemory(child).peak_mb())
        except (OSError, ValueError):
            continue
    return peak


@dataclass(frozen=True)
class Command:
    """One `ol2purview spark backfill --dry-run` as a user runs it: wall seconds, the seconds its report counts
    (from the first file read), events read, and the peak memory of its JVM (0 without Spark)."""

    seconds: float
    work_seconds: float
    events: int
    jvm_peak_mb: float

    @property
    def start_seconds(self) -> float:
        return self.seconds - self.work_seconds


def backfill_command(folder: Path, out: Path, *runner: str) -> Command:
    """Run the command on `folder` (`runner`: --single-process or --master URL) in a process of its own, polling
    its JVM's peak memory until it ends."""
    report_dir = out.parent / f"report-{out.stem}"
    started = time.perf_counter()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tools.cli",
            "spark",
            "backfill",
            str(folder),
            *runner,
            "--dry-run",
            str(out),
            "--report",
            str(report_dir),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={
            **os.environ,
            "DATABRICKS_WORKSPACE_HOSTS": WORKSPACE_HOSTS,
            "OL_TO_PURVIEW_MAPPINGS_PATH": str(MAPPINGS_PATH),
        },
    )
    peak = [0.0]
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.5):  # a high-water mark: reading it now and then is enough
            peak[0] = max(peak[0], _java_peak_mb(process.pid))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    if process.wait() != 0:
        raise RuntimeError(f"spark backfill {' '.join(runner)} failed with {process.returncode}")
    seconds = time.perf_counter() - started
    done.set()
    watcher.join()
    report = json.loads((report_dir / "report.json").read_text())
    return Command(seconds, report["seconds"], report["events"]["read"], peak[0])


def _class_archive() -> str:
    """Whether local Spark sessions find the class archive (tools/spark/class_sharing.py) now: without it, the
    first Spark command writes it as it exits (about 15 s more, that once)."""
    from tools.spark.class_sharing import archive_path

    path = archive_path()
    return "class archive present" if path is not None and path.is_file() else "no class archive yet"


def speed(folder: Path, root: Path, shape: str, in_row: str = "") -> None:
    """Both commands on the same events, ROUNDS times; prints each round and records the median ratio (`in_row`:
    the shape as the row names it; the folder's row keeps the name it always had)."""
    if ROUNDS <= 0:
        return
    print(f"-- {shape}", flush=True)
    archive = _class_archive()
    ratios, singles, sparks = [], [], []
    for round_ in range(ROUNDS):
        single = backfill_command(folder, root / "single.jsonl", "--single-process")
        spark = backfill_command(folder, root / "spark.jsonl", "--master", "local[2]")
        same = (root / "spark.jsonl").read_bytes() == (root / "single.jsonl").read_bytes()
        if not same or spark.events != single.events:
            raise AssertionError("Spark and the single-process runner planned different entities")
        ratios.append(single.seconds / spark.seconds)
        singles.append(single)
        sparks.append(spark)
        print(
            f"round {round_ + 1}: single process {single.seconds:.1f} s (start {single.start_seconds:.1f} s), "
            f"Spark local[2] {spark.seconds:.1f} s (start with session {spark.start_seconds:.1f} s, JVM peak "
            f"{spark.jvm_peak_mb:,.0f} MB): {ratios[-1]:.2f}x; planned entities identical",
            flush=True,
        )
    single_s = statistics.median(c.seconds for c in singles)
    spark_s = statistics.median(c.seconds for c in sparks)
    print(
        f"spark backfill --dry-run, {EVENTS:,} events {shape}, end to end: "
        f"Spark local[2] {EVENTS / spark_s:,.0f} events/s "
        f"(median {spark_s:.1f} s, of which {statistics.median(c.start_seconds for c in sparks):.1f} s start), "
        f"single process {EVENTS / single_s:,.0f} events/s (median {single_s:.1f} s, "
        f"{statistics.median(c.start_seconds for c in singles):.1f} s start): "
        f"{statistics.median(ratios):.2f}x the single-process runner (median of {ROUNDS} paired rounds; {archive} "
        "at the start)"
    )
    report.record(
        __name__,
        f"`spark backfill --dry-run` end to end as a user runs it, {EVENTS:,} generated Databricks "
        f"events{in_row}, Spark `local[2]`",
        EVENTS / spark_s,
        "events/s",
        EVENTS / single_s,
        "the single-process runner on the same files, one after the other",
        f"median {spark_s:.1f} s of which {statistics.median(c.start_seconds for c in sparks):.1f} s start "
        f"with the session (single process: {single_s:.1f} s), median of {ROUNDS} paired rounds ({archive} "
        f"at the start), load average {_load()}",
        statistics.median(ratios),
    )


def _load() -> str:
    """The one-minute load average now (the machine is shared: what the figures were measured under)."""
    return f"{os.getloadavg()[0]:.1f}"


def memory(root: Path) -> None:
    """The JVM's peak on MEMORY_EVENTS events, and on 3 events (its floor: the session itself)."""
    if MEMORY_EVENTS <= 0:
        return
    big = root / "memory-events" if MEMORY_EVENTS != EVENTS else root / "events"
    if big.name == "memory-events":
        generate(big, MEMORY_EVENTS)
    generate(root / "tiny", 3)
    idle = backfill_command(root / "tiny", root / "tiny.jsonl", "--master", "local[2]")
    loaded = backfill_command(big, root / "memory.jsonl", "--master", "local[2]")
    print(
        f"spark backfill --dry-run, {MEMORY_EVENTS:,} events on Spark local[2]: JVM peak {loaded.jvm_peak_mb:,.0f} MB "
        f"({loaded.jvm_peak_mb / MEMORY_BUDGET_MB:.2f}x the {MEMORY_BUDGET_MB:,} MB budget; the same command on 3 "
        f"events: {idle.jvm_peak_mb:,.0f} MB, {loaded.jvm_peak_mb / idle.jvm_peak_mb:.2f}x), "
        f"{MEMORY_EVENTS / loaded.seconds:,.0f} events/s end to end",
        flush=True,
    )
    report.record(
        __name__,
        f"JVM peak (driver and executors) of `spark backfill --dry-run` on Spark `local[2]`, "
        f"{MEMORY_EVENTS:,} generated Databricks events",
        loaded.jvm_peak_mb,
        "MB",
        idle.jvm_peak_mb,
        "the same command on 3 events (the session itself)",
        f"{loaded.jvm_peak_mb / MEMORY_BUDGET_MB:.2f}x the {MEMORY_BUDGET_MB:,} MB budget, "
        f"{MEMORY_EVENTS / loaded.seconds:,.0f} events/s end to end ({loaded.seconds / 60:.0f} min), load "
        f"average {_load()}",
    )


def calls_per_run(spark, folder: Path, data: Path) -> tuple[int, int, int, int]:
    """(catalog calls, runs with lineage, processes written, bulk requests) writing the folder to a fresh catalog."""
    from olparser.settings import Settings
    from tools.catalog import CatalogServer
    from tools.spark.job import BackfillJob
    from tools.spark.spark_job import run_spark

    with CatalogServer(data / "catalog.sqlite") as catalog:
        settings = Settings.from_env(
            {
                "DATABRICKS_WORKSPACE_HOSTS": WORKSPACE_HOSTS,
                "OL_TO_PURVIEW_MAPPINGS_PATH": str(MAPPINGS_PATH),
                "ATLAS_ENDPOINT": catalog.atlas_url,
                "OL2PURVIEW_DATA_DIR": str(data),
            }
        )  # its run history too, not the project's
        report = run_spark(spark, [str(folder)], BackfillJob.create(settings, calls_per_second=None))
    return report.catalog_calls, report.tally.runs["planned"], report.processes_written, report.bulk_requests


def main() -> None:
    from tools.spark.spark_job import spark_session

    with tempfile.TemporaryDirectory(prefix="ol2purview-bench-") as temp:
        root = Path(temp)
        started = time.perf_counter()
        raw = generate(root / "events", EVENTS)
        generate(root / "one-file", EVENTS, per_file=EVENTS)
        size = sum(p.stat().st_size for p in (root / "events").iterdir())
        print(
            f"generated {EVENTS:,} events ({raw / 1e9:.1f} GB of JSON, {size / 1e6:.0f} MB gzipped) twice in "
            f"{time.perf_counter() - started:.0f} s",
            flush=True,
        )
        speed(root / "events", root, f"in {-(-EVENTS // EVENTS_PER_FILE)} gzip files")
        speed(root / "one-file", root, "in one gzip file", " in one gzip file")
        memory(root)
        if SUBSET <= 0:
            return
        generate(root / "subset", SUBSET)
        spark = spark_session("local[2]", "ol2purview-bench", progress=False)
        spark.sparkContext.setLogLevel("ERROR")
        try:
            calls, runs, written, requests = calls_per_run(spark, root / "subset", root)
            print(
                f"{SUBSET:,}-event subset into the embedded catalog: {calls} catalog calls for {runs:,} runs "
                f"= {calls / runs:.3f} calls per run ({written:,} processes written in {requests} bulk requests)"
            )
        finally:
            spark.stop()


if __name__ == "__main__":
    main()
