"""Table storage requests per run of the run-state store (billed, and throttled per partition), counted with
azure-core's raw_request_hook on Azurite, for three scenarios of bench/merge.py's Databricks run:

- new run: START, RUNNING (environment), COMPLETE processed in order (the write happens at the COMPLETE);
- replayed run: its COMPLETE delivered once more (unchanged: nothing written);
- changed run that drops a process: COMPLETE processed first (no environment yet: the generic `spark_process`, no
  hold), then the RUNNING that carries the environment: the requests of that RUNNING, whose plan drops the generic
  process and application (released, deleted).

The catalog is a stand-in that answers at once: only the store's requests are counted. Medians over RUNS runs
(BENCH_LEDGER_DROPS: how many runs of the third scenario; 1 on a checkout whose Table store crashes there).
Run as `.venv/bin/python -m bench ledger`. It only uses the pipeline's and the store's public constructors, so the
same file runs against an older checkout (PYTHONPATH=<checkout>) for a before/after comparison.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import uuid
from pathlib import Path
from typing import Any, Iterable

from bench.merge import databricks_run

RUNS = 15
WORKSPACE_HOSTS = {"1234567890123456": "adb-1234567890123456.5.azuredatabricks.net"}


class Report:
    """What the uploader reports (the fields of UploadReport and DeleteReport; this bench also runs older checkouts)."""

    calls = 1
    created: tuple = ()
    updated: tuple = ()
    referenced: tuple = ()
    deleted: tuple = ()
    kept: tuple = ()


class NullCatalog:
    """Accepts every upload and delete at once (what is measured is the store)."""

    def upload(self, plan: Any, *, refresh: bool = True) -> Report:
        return Report()

    def delete(self, keys: Iterable[Any]) -> Report:
        return Report()


class CountingHook:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, request: Any) -> None:
        self.calls += 1


def _mappings() -> Path:
    try:
        from bench import MAPPINGS_PATH  # the one rule file, config/OlToPurviewMappings.json

        return MAPPINGS_PATH
    except ImportError:
        return Path("config/OlToPurviewMappings.json")


def requests_per_scenario(table: Any, hook: CountingHook) -> dict[str, list[int]]:
    from olparser.adapters.run_state.table_store import TableRunStateStore
    from olparser.lineage import LineageOptions
    from olparser.naming import MappingEngine
    from olparser.pipeline import LineagePipeline, WritePolicy

    store = TableRunStateStore(table, ttl_seconds=7 * 86400)
    pipeline = LineagePipeline(
        store,
        MappingEngine.from_path(_mappings()),
        LineageOptions(workspace_hosts=WORKSPACE_HOSTS),
        NullCatalog(),
        WritePolicy(environment_wait_seconds=0),
    )
    counts: dict[str, list[int]] = {"new run": [], "replayed run": [], "changed run that drops a process": []}
    statuses: dict[str, set[tuple[str, int]]] = {kind: set() for kind in counts}

    def measure(kind: str, events: list[dict]) -> None:
        before = hook.calls
        try:
            outcomes = [pipeline.process(event) for event in events]
            statuses[kind].add((outcomes[-1].status, outcomes[-1].deleted))
        except TypeError as error:  # a checkout with the Table store's bug of #24 item 1: raises after its writes,
            statuses[kind].add((f"crashed: {error}", 0))  # leaving what it dropped tombstoned (a next run would wait)
        counts[kind].append(hook.calls - before)

    for _ in range(RUNS):
        start, running, complete = databricks_run(str(uuid.uuid4()))
        measure("new run", [start, running, complete])
        measure("replayed run", [complete])
    for _ in range(int(os.environ.get("BENCH_LEDGER_DROPS", RUNS))):  # 1 on a checkout with the crash (see above)
        start, running, complete = databricks_run(str(uuid.uuid4()))
        pipeline.process(complete)
        measure("changed run that drops a process", [running])
    for kind, seen in statuses.items():
        print(f"  ({kind}: last outcome {sorted(seen)})")
    return counts


def main() -> None:
    from azure.data.tables import TableServiceClient

    from tools.azurite import start_azurite

    with tempfile.TemporaryDirectory() as folder, start_azurite(Path(folder) / "azurite") as azurite:
        hook = CountingHook()
        service = TableServiceClient.from_connection_string(azurite.connection_string, raw_request_hook=hook)
        table = service.create_table_if_not_exists(f"bench{uuid.uuid4().hex[:12]}")
        counts = requests_per_scenario(table, hook)
    for kind, samples in counts.items():
        print(
            f"run-state store on Table storage, {kind}: median {statistics.median(samples):.0f} requests "
            f"(min {min(samples)}, max {max(samples)}, {len(samples)} runs)"
        )


if __name__ == "__main__":
    main()
