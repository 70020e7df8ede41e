"""`ol2purview spark system-lineage` at scale: over a million generated rows of Unity Catalog's lineage system tables
(833,340 table_lineage and 166,668 column_lineage rows, the documented schema, Parquet) through `--dry-run` on Spark
`local[2]`: rows/s, runs/s and peak memory.

Workload: one workspace (1% of the rows from a second one whose host is not given), 83,334 entity runs of 10 table
rows and 2 column rows each (1,000,008 rows): 2 targets fed by 4 sources each, and 2 reads without a target (display(),
dashboards). Entities: 60% notebook runs (2,000 notebooks), 30% job runs with notebook tasks (500 jobs), 10% Delta
Live Tables updates (100 pipelines); each entity writes the same two tables every run, so there are about 5,200
processes and most runs are superseded by a newer run of their entity. Sources come from 5,000 tables, one in ten
given by path (ADLS). event_time spans 30 days. BENCH_SYSTEM_ROWS changes the size. Run as
`.venv/bin/python -m bench system_lineage`; the rows are written to a temporary folder, deleted afterwards.

One measurement (a million rows take minutes), so the "median" is of one sample.
"""

from __future__ import annotations

import os
import resource
import tempfile
import time
from pathlib import Path

from bench import MAPPINGS_PATH

ROWS = int(os.environ.get("BENCH_SYSTEM_ROWS", "1000000"))
WORKSPACE, HOST = "1234567890123456", "adb-1234567890123456.5.azuredatabricks.net"
LAKE = "abfss://lake@contosolake.dfs.core.windows.net"
START = 1740787200  # 2025-03-01T00:00:00Z
SPAN_SECONDS = 30 * 24 * 3600


def generate(spark, folder: Path, rows: int) -> int:
    """Table rows (8 of every 10 rows of a run have a target) and column rows, from spark.range."""
    from pyspark.sql import functions as F

    runs = -(-rows // 12)  # at least `rows` rows
    table_rows = runs * 10
    column_rows = runs * 2

    def common(frame, position):
        run = F.col("run")
        kind = run % 10  # 0-5 notebook, 6-8 job, 9 pipeline
        entity_type = F.when(kind < 6, "NOTEBOOK").when(kind < 9, "JOB").otherwise("PIPELINE")
        serial = F.floor(run / 10).cast("long")  # the entity does not follow from the kind
        entity = F.when(kind < 6, serial % 2000).when(kind < 9, 10_000 + serial % 500).otherwise(20_000 + serial % 100)
        target_number = F.floor(position / 4).cast("long")
        target = F.concat(
            F.lit("main.s"),
            (entity % 50).cast("string"),
            F.lit(".t"),
            entity.cast("string"),
            F.lit("_"),
            target_number.cast("string"),
        )
        source_number = (run * 7 + position * 13) % 5000
        source_table = F.concat(
            F.lit("main.src"), (source_number % 20).cast("string"), F.lit(".t"), source_number.cast("string")
        )
        by_path = source_number % 10 == 0
        moment = (F.lit(START) + (run * 7919) % SPAN_SECONDS + position).cast("timestamp")
        workspace = F.when(run % 100 == 0, F.lit("999")).otherwise(F.lit(WORKSPACE))
        return frame.select(
            F.lit("7af234db-66d7-4db3-bbf0-956098224879").alias("account_id"),
            F.lit("5a31ba44-bbf4-4174-bf33-e1fa078e6765").alias("metastore_id"),
            workspace.alias("workspace_id"),
            entity_type.alias("entity_type"),
            entity.cast("string").alias("entity_id"),
            run.cast("string").alias("entity_run_id"),
            F.when(by_path, None).otherwise(source_table).alias("source_table_full_name"),
            F.when(by_path, F.concat(F.lit(f"{LAKE}/landing/"), source_number.cast("string")))
            .otherwise(F.concat(F.lit(f"{LAKE}/uc/"), source_number.cast("string")))
            .alias("source_path"),
            F.when(by_path, "PATH").otherwise("TABLE").alias("source_type"),
            F.when(position < 8, target).alias("target_table_full_name"),
            F.when(position < 8, F.concat(F.lit(f"{LAKE}/uc/"), target)).alias("target_path"),
            F.when(position < 8, "TABLE").alias("target_type"),
            F.lit("ana@contoso.com").alias("created_by"),
            moment.alias("event_time"),
            F.to_date(moment).alias("event_date"),
            F.concat(F.lit("r"), F.col("id").cast("string")).alias("record_id"),
            F.struct(
                F.when(
                    entity_type == "JOB",
                    F.struct(entity.cast("string").alias("job_id"), run.cast("string").alias("job_run_id")),
                ).alias("job_info"),
                F.when(entity_type == "JOB", (30_000 + entity).cast("string")).alias("notebook_id"),
                F.when(
                    entity_type == "PIPELINE",
                    F.struct(entity.cast("string").alias("dlt_pipeline_id"), run.cast("string").alias("dlt_update_id")),
                ).alias("dlt_pipeline_info"),
            ).alias("entity_metadata"),
        )

    table = spark.range(table_rows).withColumn("run", F.col("id") / 10).withColumn("run", F.col("run").cast("long"))
    common(table, F.col("id") % 10).write.parquet(str(folder / "table_lineage"))
    columns = spark.range(column_rows).withColumn("run", (F.col("id") / 2).cast("long"))
    position = (F.col("id") % 2) * 4  # one column row into each target, from its first source
    common(columns, position).withColumn("source_column_name", F.lit("amount")).withColumn(
        "target_column_name", F.lit("total")
    ).write.parquet(str(folder / "column_lineage"))
    return table_rows + column_rows


def main() -> None:
    from bench.spark_backfill import PeakMemory
    from olparser.settings import Settings
    from tools.spark.job import BackfillJob
    from tools.spark.spark_job import spark_session
    from tools.spark.system_job import Window, run_system_lineage

    with tempfile.TemporaryDirectory(prefix="ol2purview-bench-") as temp:
        root = Path(temp)
        spark = spark_session("local[2]", "ol2purview-bench", progress=False, config={"spark.driver.memory": "2g"})
        spark.sparkContext.setLogLevel("ERROR")
        try:
            started = time.perf_counter()
            generated = generate(spark, root, ROWS)
            print(f"generated {generated:,} rows in {time.perf_counter() - started:.0f} s")
            job = BackfillJob.create(Settings(mappings_path=MAPPINGS_PATH))
            jvm = PeakMemory(spark.sparkContext._gateway.proc.pid)
            started = time.perf_counter()
            report = run_system_lineage(
                spark,
                str(root / "table_lineage"),
                str(root / "column_lineage"),
                job,
                Window(None, None, 86_400),
                {WORKSPACE: HOST},
                dry_run=root / "planned.jsonl",
            )
            seconds = time.perf_counter() - started
            rows = sum(count for item, count in report.tally.rows.items() if item.endswith("rows read"))
            runs = sum(report.tally.runs.values())
            python_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(
                f"Spark local[2], --dry-run: {rows:,} rows in {seconds:.0f} s = {rows / seconds:,.0f} rows/s "
                f"({runs:,} runs, {runs / seconds:,.0f} runs/s; {report.processes_planned:,} processes, "
                f"{report.processes_superseded:,} superseded versions, {report.dry_run_entities:,} entities "
                f"planned); peak memory: JVM (driver and executors) {jvm.peak_mb():,.0f} MB, driver Python "
                f"{python_peak:,.0f} MB"
            )
        finally:
            spark.stop()


if __name__ == "__main__":
    main()
