"""Catalog calls per run for bench/merge.py's Databricks event (a notebook run as a job task), this tree against the
tree before issue 42 (`git archive BASE`): each tree's own pipeline, run state (SQLite) and client against an embedded
catalog of its own over HTTP, counted by route by the catalog.

Counted: the first run on a fresh catalog (the typedef registration apart), then 20 more runs of the same code (new
run ids; every answer still cached: its steady state), and, for this tree, the first run on a catalog that holds the
accelerator's job and task for it (the task found by the job's tasks). Calls are counted, not timed: the same on a
busy machine.

Run as `.venv/bin/python -m bench databricks_calls` (BASE: OL2PURVIEW_BENCH_BASE, default the commit before #42).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

from bench import MAPPINGS_PATH
from olparser.settings import PROJECT_ROOT

BASE = os.environ.get("OL2PURVIEW_BENCH_BASE", "7e07770")
RUNS = 21

_CORE = r"""
import json, statistics, sys, tempfile, uuid
from pathlib import Path
import requests
from bench.merge import databricks_run
from olparser.adapters import operations
from olparser.adapters.runtime import Runtime
from olparser.settings import Settings
from tools.catalog import CatalogServer

rules, runs, seed = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "estate"
with tempfile.TemporaryDirectory() as folder:
    catalog = CatalogServer(Path(folder) / "catalog.sqlite").start()
    settings = Settings.from_env({
        "ATLAS_ENDPOINT": catalog.atlas_url, "OL2PURVIEW_DATA_DIR": folder, "RUN_STATE_STORE": "sqlite",
        "OL_TO_PURVIEW_MAPPINGS_PATH": rules, "DATABRICKS_ENVIRONMENT_WAIT_SECONDS": "0",
    })
    runtime = Runtime(settings)
    runtime.uploader().ensure_typedefs()
    if seed:  # the accelerator's job 881 and its task running the notebook, as it wrote them
        host = "databricks://adb-1234.5.azuredatabricks.net"
        job = host + "/jobs/881"
        body = {"entities": [
            {"typeName": "databricks_workspace", "guid": "-1", "attributes": {"qualifiedName": host, "name": "w"}},
            {"typeName": "databricks_job", "guid": "-2", "attributes": {"qualifiedName": job, "name": "Sales"},
             "relationshipAttributes": {"workspace": {"guid": "-1", "relationshipType": "databricks_workspace_jobs"}}},
            {"typeName": "databricks_notebook_task", "guid": "-3",
             "attributes": {"qualifiedName": job + "/tasks/enrich", "name": "enrich",
                            "notebookPath": "/Repos/etl/sales/enrich_orders"},
             "relationshipAttributes": {"job": {"guid": "-2", "relationshipType": "databricks_job_job_tasks"}}},
        ]}
        requests.post(catalog.atlas_url + "/entity/bulk", json=body, timeout=10).raise_for_status()
    counts = []
    for number in range(runs):
        requests.post(catalog.url + "/_ol2purview/calls/reset", timeout=10).raise_for_status()
        for event in databricks_run(str(uuid.UUID(int=number + 1))):
            operations.process_event(runtime, event)
        counts.append(requests.get(catalog.url + "/_ol2purview/calls", timeout=10).json())
    runtime.close()
    catalog.stop()
print(json.dumps({"first": counts[0], "steady": statistics.median(c["total"] for c in counts[1:])}))
"""


def _calls(tree: Path, rules: Path, runs: int, seed: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _CORE, str(rules), str(runs), seed],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        timeout=900,
        check=True,
    )
    result: dict = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    archive = subprocess.run(["git", "-C", str(PROJECT_ROOT), "archive", BASE], capture_output=True, check=True).stdout
    with tempfile.TemporaryDirectory() as folder:
        before_tree = Path(folder) / "before"
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(before_tree, filter="data")
        before = _calls(before_tree, before_tree / "config" / "OlToPurviewMappings.json", RUNS, "fresh")
    after = _calls(PROJECT_ROOT, MAPPINGS_PATH, RUNS, "fresh")
    estate = _calls(PROJECT_ROOT, MAPPINGS_PATH, 2, "estate")
    for label, result in ((f"before ({BASE})", before), ("after", after), ("after, accelerator's job", estate)):
        first = result["first"]
        print(
            f"{label}: first run {first['total']} calls ({', '.join(f'{k} {v}' for k, v in first['byRoute'].items())}); "
            f"then a median of {result['steady']:g} per run"
        )


if __name__ == "__main__":
    main()
