"""The watermark of `spark system-lineage`: where the last successful run stopped, so that a daily schedule is
incremental. A JSON file (local, or a `/dbfs/...` or `/Volumes/...` path on Databricks), written after a run
succeeded and never by a dry run:

    {"until": "2025-03-02T00:00:00.000Z", "since": "2025-03-01T00:00:00.000Z", "writtenAt": "...",
     "tableLineage": "system.access.table_lineage", "columnLineage": "system.access.column_lineage"}

The next run starts at `until`: the window [since, until) owns the runs whose newest row's event_time is in it, so
consecutive windows share no run and miss none (`system_rows.in_window`).
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

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


def save_watermark(path: Path, since: float | None, until: float, table_source: str,
                   column_source: str | None) -> None:
    """Write the watermark atomically (a temporary file renamed over the old one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {"until": iso_time(until), "since": iso_time(since) if since is not None else None,
            "writtenAt": iso_time(time.time()), "tableLineage": table_source, "columnLineage": column_source}
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, path)
