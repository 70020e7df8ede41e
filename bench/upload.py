"""Catalog calls per run and upload throughput, against the embedded catalog over real HTTP.

Each run is one notebook, one process and two ADLS datasets (one type): a run over new datasets should take
2 calls (1 existence read + 1 bulk), a repeat with the datasets cached 1 call. The reference connector makes
about 13-23 calls per event.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
import urllib.request
from pathlib import Path

from olparser.adapters.catalog import (
    CatalogTarget,
    CatalogUploader,
    load_typedefs,
    make_atlas_client,
    register_typedefs,
)
from olparser.lineage.plan import LineagePlan
from olparser.settings import TYPEDEFS_DIR, Settings

RUNS = 200
ADLS = "azure_datalake_gen2_path"


def run_plan(i: int) -> LineagePlan:
    """Run i: raw/table-i -> notebook-i process -> curated/table-i."""
    notebook = f"databricks://adb-1.azuredatabricks.net/notebooks/etl/job-{i}"
    raw = f"https://lake.dfs.core.windows.net/raw/table-{i}"
    curated = f"https://lake.dfs.core.windows.net/curated/table-{i}"
    return LineagePlan(
        external_datasets=(
            {"typeName": ADLS, "guid": "-1", "attributes": {"qualifiedName": raw, "name": f"table-{i}"}},
            {"typeName": ADLS, "guid": "-2", "attributes": {"qualifiedName": curated, "name": f"table-{i}"}},
        ),
        entities=(
            {
                "typeName": "databricks_notebook",
                "guid": "-3",
                "attributes": {"qualifiedName": notebook, "name": f"job-{i}"},
            },
            {
                "typeName": "databricks_process",
                "guid": "-4",
                "attributes": {"qualifiedName": notebook + "/processes/p", "name": "p"},
                "relationshipAttributes": {
                    "inputs": [{"guid": "-1"}],
                    "outputs": [{"guid": "-2"}],
                    "notebook": {"guid": "-3"},
                },
            },
        ),
    )


def _calls_total(atlas_url: str) -> int:
    root = atlas_url.split("/api/atlas/v2")[0]
    with urllib.request.urlopen(root + "/_ol2purview/calls", timeout=10) as response:
        return int(json.load(response)["total"])


def _phase(uploader: CatalogUploader, atlas_url: str, plans: list[LineagePlan]) -> tuple[float, float, float]:
    """(median calls per run by the catalog's own counter, median ms per run, runs per second)."""
    calls, seconds = [], []
    for plan in plans:
        before = _calls_total(atlas_url)
        t0 = time.perf_counter()
        uploader.upload(plan)
        seconds.append(time.perf_counter() - t0)
        calls.append(_calls_total(atlas_url) - before)
    return statistics.median(calls), statistics.median(seconds) * 1000, len(plans) / sum(seconds)


def main() -> None:
    try:
        from tools.catalog import CatalogServer
    except ImportError:
        print("upload: skipped (the embedded catalog, tools.catalog.CatalogServer, is not available)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        server = CatalogServer(Path(tmp) / "catalog.db", port=0).start()
        try:
            client = make_atlas_client(CatalogTarget("embedded", server.atlas_url), timeout=30)
            register_typedefs(client, load_typedefs(TYPEDEFS_DIR))
            uploader = CatalogUploader(client, settings=Settings())
            plans = [run_plan(i) for i in range(RUNS)]
            new_calls, new_ms, new_rate = _phase(uploader, server.atlas_url, plans)
            cached_calls, cached_ms, cached_rate = _phase(uploader, server.atlas_url, plans)
        finally:
            server.stop()
    print(
        f"upload, new datasets:    median {new_calls:g} catalog calls/run, {new_ms:.2f} ms/run, "
        f"{new_rate:.0f} runs/s ({RUNS} runs)"
    )
    print(
        f"upload, cached datasets: median {cached_calls:g} catalog calls/run, {cached_ms:.2f} ms/run, "
        f"{cached_rate:.0f} runs/s ({RUNS} runs)"
    )
    print("reference connector: about 13-23 Purview calls per event")
