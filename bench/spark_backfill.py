"""`ol2purview spark backfill` at scale: one million generated events through `--dry-run` on Spark `local[2]` and
through the single-process runner on the same files (events/s, peak memory), then catalog calls per run on a
50,000-event subset written to the embedded catalog (cross-run batching).

Workload: Databricks notebook runs (START, RUNNING with environment-properties, COMPLETE with 30 columns of
lineage; bench/merge.py's run), 1,000 notebooks each writing its own table and run again and again, 5% of the runs
reading a source no rule maps. Events are written as gzipped JSON lines to a temporary folder, deleted afterwards.
BENCH_SPARK_EVENTS and BENCH_SPARK_SUBSET change the sizes. Run as `.venv/bin/python -m bench spark_backfill`.

One measurement each (a million events take minutes per runner), so the "median" is of one sample.
"""
from __future__ import annotations

import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from bench.merge import databricks_run
from bench import MAPPINGS_PATH

EVENTS = int(os.environ.get("BENCH_SPARK_EVENTS", "1000000"))
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
    times = {"2025-03-01T10:00:00.100Z": start, "2025-03-01T10:00:01.200Z": start + timedelta(seconds=1),
             "2025-03-01T10:00:09.300Z": start + timedelta(seconds=9)}
    lines = []
    for text in texts:
        for marker, moment in times.items():
            text = text.replace(marker, moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z")
        lines.append(text.replace(RUN_ID, f"00000000-0000-4000-8000-{run:012d}")
                     .replace(PARENT_ID, f"00000000-0000-4000-9000-{run:012d}")
                     .replace("enrich_orders", f"enrich_{notebook}")
                     .replace("orders_enriched", f"enriched_{notebook}")
                     .replace("curated_orders", f"curated_{notebook}"))
    return lines


def generate(folder: Path, events: int) -> int:
    """`events` events (whole runs) as gzipped JSON lines files; returns how many bytes of JSON that is."""
    folder.mkdir(parents=True, exist_ok=True)
    templates = _templates()
    written, raw, run, part = 0, 0, 0, 0
    while written < events:
        with gzip.open(folder / f"part-{part:05d}.jsonl.gz", "wt", encoding="utf-8", compresslevel=1) as out:
            in_file = 0
            while in_file < EVENTS_PER_FILE and written < events:
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


def single_process(folder: Path, out: Path) -> tuple[float, float]:
    """(events/s, peak MB) of the single-process runner, in a child process of its own."""
    report_dir = out.parent / "report-single"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tools.cli", "spark", "backfill", str(folder), "--single-process",
                    "--dry-run", str(out), "--report", str(report_dir)], check=True, stdout=subprocess.DEVNULL,
                   env={**os.environ, "DATABRICKS_WORKSPACE_HOSTS": WORKSPACE_HOSTS})
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    report = json.loads((report_dir / "report.json").read_text())
    return report["events"]["read"] / seconds, peak


def spark_dry_run(spark, folder: Path, out: Path) -> tuple[float, float, float]:
    """(events/s, peak MB of the driver's Python, peak MB of the JVM) of the Spark job's dry run."""
    from olparser.settings import Settings
    from tools.spark.job import BackfillJob
    from tools.spark.spark_job import run_spark

    jvm = PeakMemory(spark.sparkContext._gateway.proc.pid)
    job = BackfillJob.create(Settings.from_env({"DATABRICKS_WORKSPACE_HOSTS": WORKSPACE_HOSTS,
                                                "OL_TO_PURVIEW_MAPPINGS_PATH": str(MAPPINGS_PATH)}))
    started = time.perf_counter()
    report = run_spark(spark, [str(folder)], job, dry_run=out)
    seconds = time.perf_counter() - started
    python_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return report.tally.events_read / seconds, python_peak, jvm.peak_mb()


def calls_per_run(spark, folder: Path, data: Path) -> tuple[int, int, int, int]:
    """(catalog calls, runs with lineage, processes written, bulk requests) writing the folder to a fresh catalog."""
    from olparser.settings import Settings
    from tools.catalog import CatalogServer
    from tools.spark.job import BackfillJob
    from tools.spark.spark_job import run_spark

    with CatalogServer(data / "catalog.sqlite") as catalog:
        settings = Settings.from_env({"DATABRICKS_WORKSPACE_HOSTS": WORKSPACE_HOSTS,
                                      "OL_TO_PURVIEW_MAPPINGS_PATH": str(MAPPINGS_PATH),
                                      "ATLAS_ENDPOINT": catalog.atlas_url,
                                      "OL2PURVIEW_DATA_DIR": str(data)})  # its run history too, not the project's
        report = run_spark(spark, [str(folder)], BackfillJob.create(settings, calls_per_second=None))
    return report.catalog_calls, report.tally.runs["planned"], report.processes_written, report.bulk_requests


def main() -> None:
    from tools.spark.spark_job import spark_session

    with tempfile.TemporaryDirectory(prefix="ol2purview-bench-") as temp:
        root = Path(temp)
        started = time.perf_counter()
        raw = generate(root / "events", EVENTS)
        generate(root / "subset", SUBSET)
        size = sum(p.stat().st_size for p in (root / "events").iterdir())
        print(f"generated {EVENTS:,} events ({raw / 1e9:.1f} GB of JSON, {size / 1e6:.0f} MB gzipped) in "
              f"{time.perf_counter() - started:.0f} s")
        rate, peak = single_process(root / "events", root / "single.jsonl")
        print(f"single-process runner, --dry-run: {rate:,.0f} events/s, peak memory {peak:,.0f} MB")
        spark = spark_session("local[2]", "ol2purview-bench", progress=False,
                              config={"spark.driver.memory": "2g"})
        spark.sparkContext.setLogLevel("ERROR")
        try:
            rate, python_peak, jvm_peak = spark_dry_run(spark, root / "events", root / "spark.jsonl")
            same = (root / "spark.jsonl").read_bytes() == (root / "single.jsonl").read_bytes()
            print(f"Spark local[2], --dry-run: {rate:,.0f} events/s, peak memory: driver Python {python_peak:,.0f} "
                  f"MB, JVM (driver and executors) {jvm_peak:,.0f} MB; planned entities identical to the "
                  f"single-process runner's: {same}")
            calls, runs, written, requests = calls_per_run(spark, root / "subset", root)
            print(f"{SUBSET:,}-event subset into the embedded catalog: {calls} catalog calls for {runs:,} runs "
                  f"= {calls / runs:.3f} calls per run ({written:,} processes written in {requests} bulk requests)")
        finally:
            spark.stop()


if __name__ == "__main__":
    main()
