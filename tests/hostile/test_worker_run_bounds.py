"""What a run can make the worker do when it grows past the limits through many events, each of which intake accepts:
before, 600 outputs × 600 inputs cost 36 s of CPU, 769 MB and +258 MB in the catalog (a process per output, each
listing every input), and 1,500 outputs × 2,000 inputs cost 1,503 catalog calls. Now the run keeps the first
MAX_DATASETS_PER_RUN inputs and outputs, writes at most MAX_PROCESS_EDGES_PER_RUN inputs × outputs, and says so on
the processes. Measured through the real runner, intake contract and embedded catalog over HTTP, as counts (catalog
calls, processes, edges) and peak memory; CPU time is the benchmarks' (`bench/hostile.py`)."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from olparser.adapters.catalog import CatalogTarget, CatalogUploader, load_typedefs, make_atlas_client
from olparser.adapters.catalog.existence import existence_cache_for
from olparser.adapters.catalog.resolver import resolver_for
from olparser.adapters.run_state.sqlite_store import SqliteRunStateStore
from olparser.contract import IntakeLimits, read_event
from olparser.lineage import LineageOptions
from olparser.naming import MappingEngine
from olparser.pipeline import LineagePipeline, WritePolicy
from olparser.settings import TYPEDEFS_DIR, Settings
from tests.support.rules import MAPPINGS_PATH
from tools.catalog import CatalogServer
from tools.samples.hostile import LAKE, base_event, body

pytestmark = pytest.mark.slow

# The shipped limits (500 datasets per run, 10,000 edges per run); these Databricks-style runs carry no environment
# facet, so they are written at once instead of waiting for it.
SETTINGS = Settings(databricks_environment_wait_seconds=0)


def spread(inputs: int, outputs: int, per_event: int = 400) -> list[dict]:
    """A run naming `inputs` inputs and `outputs` outputs over RUNNING events of at most `per_event` datasets each,
    then a COMPLETE: every event is one intake accepts."""
    names = [("inputs", f"raw/i{i:05d}") for i in range(inputs)] + [
        ("outputs", f"curated/o{i:05d}") for i in range(outputs)
    ]
    events = []
    for start in range(0, len(names), per_event):
        event = base_event(61, inputs=[], outputs=[])
        event["eventType"] = "RUNNING"
        event["eventTime"] = f"2025-03-01T11:{start // per_event:02d}:00.000Z"
        for side, name in names[start : start + per_event]:
            event[side].append({"namespace": LAKE, "name": name})
        events.append(event)
    events.append(base_event(61, inputs=[], outputs=[]))
    for event in events:
        read_event(body(event), {}, IntakeLimits.from_settings(SETTINGS))  # raises if intake would refuse it
    return events


def process_run(events: list[dict], tmp_path: Path, *, resolve: bool = False) -> tuple[int, int, dict]:
    """(peak bytes, catalog calls, processes written) for processing the run's events (with
    `resolve`, resolving its datasets against the scanned assets as the runtime configures it)."""
    with CatalogServer(tmp_path / "catalog.db") as catalog:
        client = make_atlas_client(CatalogTarget("atlas", catalog.atlas_url), timeout=60)
        cache = existence_cache_for(SETTINGS)
        uploader = CatalogUploader(client, settings=SETTINGS, cache=cache)
        uploader.register_typedefs(load_typedefs(TYPEDEFS_DIR))
        store = SqliteRunStateStore(
            tmp_path / "runs.sqlite3", ttl_seconds=3600, max_datasets=SETTINGS.max_datasets_per_run
        )
        resolver = resolver_for(client, SETTINGS, cache, owned=store.interim_keys) if resolve else None
        pipeline = LineagePipeline(
            store,
            MappingEngine.from_path(MAPPINGS_PATH),
            LineageOptions.from_settings(SETTINGS),
            uploader,
            WritePolicy.from_settings(SETTINGS),
            resolver=resolver,
        )
        calls_before = catalog.counter.snapshot()["total"]
        tracemalloc.start()
        try:
            for event in events:
                pipeline.process(event)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        calls = catalog.counter.snapshot()["total"] - calls_before
        processes = {}
        for guid in client.guids_of_type("spark_process"):
            (entity,) = client.entities_by_guid([guid])
            processes[entity["attributes"]["qualifiedName"]] = entity
        store.close()
        client.close()
    return peak, calls, processes


def test_six_hundred_outputs_by_six_hundred_inputs_write_what_fits_in_calls_and_megabytes(tmp_path):
    peak, calls, processes = process_run(spread(600, 600), tmp_path)
    print(f"600 x 600: peak {peak / 2**20:.1f} MiB, {calls} catalog calls")
    assert len(processes) == 20  # 500 inputs kept, 10,000 // 500 = 20 outputs
    first = processes[min(processes)]
    assert len(first["relationshipAttributes"]["inputs"]) == 500
    assert first["attributes"]["lineageTruncated"] == (
        "more than 500 inputs or outputs were sent; the first 500 of each (in name order) are kept "
        "(MAX_DATASETS_PER_RUN); 20 of 500 outputs and 500 of 500 inputs are written: inputs × outputs is limited to "
        "10000 per run (MAX_PROCESS_EDGES_PER_RUN)"
    )
    assert peak < 150 * 2**20, peak  # was 769 MB
    assert calls <= 30, calls  # ~26 existence lookups (about 20 names fit a 2,000-character URL), then the writes


def test_fifteen_hundred_outputs_by_two_thousand_inputs_cost_a_few_catalog_calls(tmp_path):
    _peak, calls, processes = process_run(spread(2000, 1500), tmp_path)
    assert len(processes) == 20
    assert calls <= 30, calls  # was 1,503
    assert json.loads(processes[min(processes)]["attributes"]["columnMapping"]) == []


def test_resolving_the_largest_run_costs_a_bounded_number_of_lookups_and_searches(tmp_path):
    peak, calls, processes = process_run(spread(2000, 1500), tmp_path, resolve=True)
    print(f"2,000 x 1,500 with resolution: peak {peak / 2**20:.1f} MiB, {calls} catalog calls")
    assert len(processes) == 20
    # the 520 datasets written: the resource-set rules once, about 60 lookups of 20-odd names (their paths and their
    # resource sets), 20 discovery queries (RESOLUTION_MAX_SEARCHES_PER_RUN; the others wait), then the writes
    assert calls <= 90, calls
