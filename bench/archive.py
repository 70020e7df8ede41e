"""What archiving every event costs: per event in the queue trigger (gzip + a file flushed to disk, or a blob in
Azurite), and the HTTP intake with ARCHIVE_EVENTS off and on (the archive is written by the queue trigger, so the
acknowledgement should not change). Medians of REPEATS. Run as `.venv/bin/python -m bench archive`."""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from bench.merge import databricks_run
from olparser.adapters.delivery.archive import BlobArchiveStore, EventArchive, FolderArchiveStore

REPEATS = 5
EVENTS = 200
INTAKE_SECONDS = float(os.environ.get("BENCH_SECONDS", "5"))


def _events() -> list[dict]:
    return [databricks_run(str(uuid.uuid4()))[2] for _ in range(EVENTS)]  # COMPLETE, 30 columns of lineage


def _median_ms_per_event(archive_for) -> float:
    samples = []
    for _ in range(REPEATS):
        events = _events()
        with tempfile.TemporaryDirectory() as folder:
            archive = archive_for(Path(folder))
            started = time.perf_counter()
            for event in events:
                archive.keep(event)
            samples.append((time.perf_counter() - started) / EVENTS * 1e3)
    return statistics.median(samples)


def trigger_cost() -> None:
    size = len(json.dumps(_events()[0]))
    folder = _median_ms_per_event(lambda root: EventArchive(FolderArchiveStore(root)))
    print(f"archive a {size:,} B COMPLETE event, folder (gzip, fsync, rename): median {folder:.2f} ms")
    from tools.azurite import start_azurite

    with tempfile.TemporaryDirectory() as location, start_azurite(Path(location)) as azurite:
        blob = _median_ms_per_event(
            lambda root: EventArchive(BlobArchiveStore(azurite.connection_string, f"archive-{uuid.uuid4().hex[:8]}"))
        )
    print(f"archive a {size:,} B COMPLETE event, blob (Azurite): median {blob:.2f} ms")


def intake_cost() -> None:
    from bench.ingest_http import measure

    for setting in ("false", "true", "false", "true"):
        os.environ["ARCHIVE_EVENTS"] = setting
        print(f"ARCHIVE_EVENTS={setting}:")
        measure("embedded", INTAKE_SECONDS)
    os.environ.pop("ARCHIVE_EVENTS")


def main() -> None:
    trigger_cost()
    intake_cost()


if __name__ == "__main__":
    main()
