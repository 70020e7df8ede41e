"""The watermark of `spark system-lineage`: where the last successful run stopped, so that a daily schedule is
incremental. A JSON file (local, or a `/dbfs/...` or `/Volumes/...` path on Databricks), written after a run
succeeded and never by a dry run:

    {"until": "2025-03-02T00:00:00.000Z", "since": "2025-03-01T00:00:00.000Z", "writtenAt": "...",
     "tableLineage": "system.access.table_lineage", "columnLineage": "system.access.column_lineage"}

Or, with `--watermark-table NAME`, rows of a table (Delta on Databricks, the session's default table format
elsewhere), one appended per successful run with the same fields; the newest `until` counts. A table suits a job
whose driver has no durable folder, and keeps the history of the runs.

The next run starts at `until`: the window [since, until) owns the runs whose newest row's event_time is in it, so
consecutive windows share no run and miss none (`system_rows.in_window`).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .records import event_instant
from .system_rows import iso_time

WATERMARK_FILE = "watermark.json"


@dataclass(frozen=True)
class Watermark:
    until: float


def load_watermark(path: Path) -> Watermark | None:
    """The stored watermark; None when there is no file yet. ValueError when the file is not one."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        data = json.loads(text)
        until = event_instant(data.get("until")) if isinstance(data, dict) else None
    except ValueError:
        until = None
    if until is None:
        raise ValueError(f"{path} is not a watermark: expected a JSON object with \"until\" (ISO 8601)")
    return Watermark(until)


def save_watermark(path: Path, since: float | None, until: float, table_source: str, column_source: str | None) -> None:
    """Write the watermark atomically (a temporary file renamed over the old one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = _body(since, until, table_source, column_source)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, path)


def _body(since: float | None, until: float, table_source: str, column_source: str | None) -> dict[str, Any]:
    return {
        "until": iso_time(until),
        "since": iso_time(since) if since is not None else None,
        "writtenAt": iso_time(time.time()),
        "tableLineage": table_source,
        "columnLineage": column_source,
    }


class WatermarkTable:
    """The watermark kept as rows of a Spark table: `until` (ISO 8601) and `untilSeconds` of each successful run."""

    def __init__(self, spark: Any, name: str) -> None:
        self.spark = spark
        self.name = name

    def load(self) -> Watermark | None:
        """The newest stored `until`; None when the table does not exist or is empty."""
        if not self.spark.catalog.tableExists(self.name):
            return None
        from pyspark.sql import functions as F

        newest = self.spark.table(self.name).agg(F.max("untilSeconds").alias("until")).first()
        return Watermark(float(newest["until"])) if newest is not None and newest["until"] is not None else None

    def save(self, since: float | None, until: float, table_source: str, column_source: str | None) -> None:
        """Append this run's row (the table is created by the first run)."""
        from pyspark.sql.types import DoubleType, StringType, StructField, StructType

        schema = StructType(
            [
                StructField(name, DoubleType() if name == "untilSeconds" else StringType())
                for name in ("until", "untilSeconds", "since", "writtenAt", "tableLineage", "columnLineage")
            ]
        )
        body = _body(since, until, table_source, column_source)
        row = (
            body["until"],
            float(until),
            body["since"],
            body["writtenAt"],
            body["tableLineage"],
            body["columnLineage"],
        )
        self.spark.createDataFrame([row], schema).write.mode("append").saveAsTable(self.name)
