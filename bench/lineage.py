"""Entity building: builds per second (name mapping with the default rules + entity building, no network), for a
typical Databricks COMPLETE run with 30 columns of lineage (the run-merging benchmark's workload); and the same
with the run's three events merged first."""

from __future__ import annotations

import statistics
import time
import uuid

from bench import MAPPINGS_PATH
from bench.merge import databricks_run
from olparser.lineage import LineageOptions, build_lineage
from olparser.naming import MappingEngine
from olparser.runs.merge import merge_events

REPEATS = 7
RUNS_PER_SAMPLE = 300


def _median_per_second(work) -> float:
    samples = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        for _ in range(RUNS_PER_SAMPLE):
            work()
        samples.append(RUNS_PER_SAMPLE / (time.perf_counter() - started))
    return statistics.median(samples)


def main() -> None:
    engine = MappingEngine.from_path(MAPPINGS_PATH)
    options = LineageOptions()
    events = databricks_run(str(uuid.uuid4()))
    snapshot = merge_events(events)
    plan = build_lineage(snapshot, engine, options)
    print(f"workload: {len(plan.entities)} entities + {len(plan.external_datasets)} external datasets per run")
    build = _median_per_second(lambda: build_lineage(snapshot, engine, options))
    print(f"build_lineage (map + build): median {build:,.0f} builds/s ({1e6 / build:,.0f} us/build)")
    merged = _median_per_second(lambda: build_lineage(merge_events(events), engine, options))
    print(f"merge 3 events + build_lineage: median {merged:,.0f} runs/s ({1e6 / merged:,.0f} us/run)")


if __name__ == "__main__":
    main()
