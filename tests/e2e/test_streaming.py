"""Issue 35, streaming stays cheap, end to end over `ol2purview serve` (events sent with openlineage-python, the
embedded catalog read through the Atlas API, the history through GET /api/ol2purview/lineage), on each run-state
store: 200 Structured Streaming micro-batches (each a run of its own, tools/samples/notebooks.py) make one process,
one history entry and one catalog write per STREAMING_HISTORY_WINDOW (600 s here)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
import requests

from tests.e2e.lineage_helpers import SEQUENTIAL_ENV, Atlas, replay, write_events
from tools.samples.notebooks import streaming_batches

pytestmark = pytest.mark.e2e

BATCHES, EVERY, WINDOW = 200, 10, 600
STARTED = datetime(2026, 9, 23, 22, 0, tzinfo=timezone.utc)  # a window boundary
OUTPUT = "https://contosolake.dfs.core.windows.net/curated/orders"


def test_micro_batches_make_one_process_and_one_history_entry_per_window(serve_on_each_store, tmp_path):
    serve = serve_on_each_store(env={"STREAMING_HISTORY_WINDOW": str(WINDOW), **SEQUENTIAL_ENV})
    replay(serve, write_events(tmp_path / "events", *streaming_batches(BATCHES, every_seconds=EVERY, started=STARTED)))
    serve.wait_until_processed(timeout=300)

    windows = BATCHES * EVERY // WINDOW + (BATCHES * EVERY % WINDOW > 0)
    # the first batch of each window writes the window's plan; every other batch plans the same: no catalog write
    # (before: one write per batch). One message at a time, in queue order (SEQUENTIAL_ENV): with several at once, a
    # few batches would race their window's first write, and how many would depend on the machine's load
    writes = serve.catalog_calls()["byRoute"].get("POST /entity/bulk")
    assert writes == windows
    processes = [e for e in Atlas(serve.atlas_url).all_entities() if e["typeName"] == "spark_process"]
    assert [(p["attributes"]["name"], p["attributes"]["runCount"]) for p in processes] == [
        ("micro_batch_execution.orders", windows)
    ]
    answer = requests.get(
        f"{serve.url}/api/ol2purview/lineage",
        headers={"x-functions-key": serve.key},
        timeout=30,
        params={
            "qualifiedName": OUTPUT,
            "since": "2026-09-23T21:00:00Z",
            "until": "2026-09-24T00:00:00Z",
            "direction": "upstream",
            "depth": "1",
        },
    ).json()
    runs = [r for p in answer["processes"] for r in p["runs"]]
    assert sorted(r["start"] for r in runs) == [f"2026-09-23T22:{10 * n:02d}:00.000Z" for n in range(windows)]
    assert all(r["runId"].startswith("stream-") and r["durationMs"] == WINDOW * 1000 for r in runs)
