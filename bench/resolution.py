"""Resolution against the scanned assets (issue 19): what it costs.

1. Catalog calls per run for a stream of 1,000 runs over 50 datasets, through the real pipeline (SQLite run state,
   the connector's uploader and resolver, the embedded catalog over HTTP), half of the datasets scanned (resource
   sets registered first, some partitioned). The stream is spread over two simulated hours (a run every 7.2 s; the
   caches' clock is simulated too), so the positive (CATALOG_CACHE_SECONDS) and negative
   (RESOLUTION_NEGATIVE_CACHE_SECONDS) answers expire as they would with the default settings.
   The same stream with RESOLVE_SCANNED_ASSETS off, for comparison.
2. merge + map + build events/s on bench/merge.py's Databricks run, this tree against the tree before issue 19
   (`git archive BASE`), interleaved A/B/A/B in fresh processes on the same machine, medians; and this tree's
   merge + map + build + resolve + link with the resolver's answers cached (its steady state: no call).

Run as `.venv/bin/python -m bench resolution` (BASE: the environment variable OL2PURVIEW_BENCH_BASE, default the
commit before issue 19's resolution work).
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
import uuid
from io import BytesIO
from pathlib import Path
from typing import Any

import requests

from bench import MAPPINGS_PATH
from olparser.adapters.catalog import CatalogTarget, CatalogUploader, RetryPolicy, load_typedefs, make_atlas_client
from olparser.adapters.catalog.existence import ExistenceCache
from olparser.adapters.catalog.resolver import ScannedAssetResolver
from olparser.adapters.run_state.sqlite_store import SqliteRunStateStore
from olparser.lineage import LineageOptions
from olparser.naming import MappingEngine
from olparser.pipeline import LineagePipeline, WritePolicy
from olparser.pipeline.relink import Relinker
from olparser.settings import PROJECT_ROOT, TYPEDEFS_DIR, Settings
from tools.catalog import CatalogServer

RUNS, DATASETS, SECONDS_APART = 1000, 50, 7.2
BASE = os.environ.get("OL2PURVIEW_BENCH_BASE", "21c1e3c")
AB_ROUNDS = 7
LAKE = "abfss://lake@benchacct.dfs.core.windows.net"
LAKE_QN = "https://benchacct.dfs.core.windows.net/lake"
PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/spark"


class SimulatedClock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _event(number: int, rng: random.Random) -> dict[str, Any]:
    """One COMPLETE of job `job_{n % 60}`: two inputs and one output drawn from the 50 datasets."""
    picked = rng.sample(range(DATASETS), 3)
    dataset = lambda i: {"namespace": LAKE, "name": f"table_{i:02d}", "facets": {}}  # noqa: E731
    return {
        "eventType": "COMPLETE",
        "eventTime": f"2026-01-01T00:00:{number % 60:02d}.{number % 1000:03d}Z",
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": str(uuid.UUID(int=number + 1)), "facets": {}},
        "job": {"namespace": "bench", "name": f"bench_app.job_{number % 60}"},
        "inputs": [dataset(picked[0]), dataset(picked[1])],
        "outputs": [dataset(picked[2])],
    }


def _scanned(catalog: CatalogServer) -> None:
    """Half the datasets have their resource set: 20 plain, 5 partitioned (found by a search)."""
    entities = [
        {
            "typeName": "azure_datalake_gen2_resource_set",
            "guid": f"-{i + 1}",
            "attributes": {
                "qualifiedName": f"{LAKE_QN}/table_{i:02d}"
                + ("/Year={Year}" if i >= 20 else "")
                + "/{SparkPartitions}",
                "name": f"table_{i:02d}",
            },
        }
        for i in range(25)
    ]
    requests.post(f"{catalog.atlas_url}/entity/bulk", json={"entities": entities}, timeout=30).raise_for_status()


def stream_calls(resolve: bool) -> tuple[list[int], list[int]]:
    """Catalog calls of each run of the stream, and of each re-link timer tick (every 10 simulated minutes)."""
    with tempfile.TemporaryDirectory() as folder, CatalogServer(Path(folder) / "catalog.sqlite") as catalog:
        clock = SimulatedClock()
        client = make_atlas_client(CatalogTarget("atlas", catalog.atlas_url), timeout=30)
        defaults = Settings()
        cache = ExistenceCache(
            defaults.catalog_cache_seconds, clock=clock, absent_ttl_seconds=defaults.resolution_negative_cache_seconds
        )
        typedefs = load_typedefs(TYPEDEFS_DIR)
        uploader = CatalogUploader(
            client, cache=cache, connector_types=frozenset(t["name"] for t in typedefs["entityDefs"])
        )
        uploader.register_typedefs(typedefs)
        _scanned(catalog)
        store = SqliteRunStateStore(Path(folder) / "runs.sqlite3", ttl_seconds=7 * 86400)
        resolver = (
            ScannedAssetResolver(client, cache=cache, retry=RetryPolicy(), owned=store.interim_keys, clock=clock)
            if resolve
            else None
        )
        pipeline = LineagePipeline(
            store,
            MappingEngine.from_path(MAPPINGS_PATH),
            LineageOptions(),
            uploader,
            WritePolicy(environment_wait_seconds=0),
            clock=clock,
            sleep=clock.sleep,
            resolver=resolver,
        )
        relinker = (
            Relinker(store, resolver, uploader, batch_size=Settings().relink_batch_size, clock=clock)
            if resolver is not None
            else None
        )
        rng = random.Random(19)
        calls, ticks = [], []
        for number in range(RUNS):
            calls.append(pipeline.process(_event(number, rng)).catalog_calls)
            clock.now += SECONDS_APART
            if relinker is not None and int(clock.now // 600) != int((clock.now - SECONDS_APART) // 600):
                ticks.append(relinker.run().calls)
        store.close()
        client.close()
    return calls, ticks


def report_stream() -> None:
    for resolve in (True, False):
        calls, ticks = stream_calls(resolve)
        steady = calls[100:]
        label = "with resolution" if resolve else "RESOLVE_SCANNED_ASSETS=false"
        print(
            f"{label}: first run {calls[0]} calls; runs 2-100 mean {statistics.mean(calls[1:100]):.2f}; "
            f"steady state (runs 101-1000) median {statistics.median(steady):.0f}, mean {statistics.mean(steady):.2f}"
            f", max {max(steady)}; {sum(calls)} calls for {RUNS} runs over {DATASETS} datasets in 2 simulated hours"
        )
        if ticks:
            print(
                f"  re-link timer: {len(ticks)} ticks, median {statistics.median(ticks):.0f} calls per tick "
                f"({sum(ticks)} in all) for the {DATASETS // 2} interim datasets nothing is scanned for"
            )


_CORE = """
import statistics, sys, time, uuid
from bench.merge import databricks_run
from olparser.lineage import LineageOptions, build_lineage
from olparser.naming import MappingEngine
from olparser.runs.merge import merge_event
engine = MappingEngine.from_path(sys.argv[2])
options = LineageOptions(workspace_hosts=(("1234567890123456", "adb-1234567890123456.5.azuredatabricks.net"),))
prepared = []
for _ in range(300):
    start, running, complete = databricks_run(str(uuid.uuid4()))
    prepared.append((merge_event(merge_event(None, start), running), complete))
link = None
if sys.argv[1] == "link":
    from olparser.adapters.catalog.existence import ExistenceCache
    from olparser.adapters.catalog.resolver import ScannedAssetResolver
    from olparser.adapters.catalog.retry import RetryPolicy
    from olparser.lineage.link import link_plan

    class Offline:
        endpoint_url = "http://unused/api/atlas/v2"
        def find_entities(self, t, names): return []
        def search_assets(self, query): return []
        def resource_set_rule_config(self): return {}

    resolver = ScannedAssetResolver(Offline(), cache=ExistenceCache(1e9, absent_ttl_seconds=1e9),
                                    retry=RetryPolicy(max_attempts=1))
    def link(plan):
        resolution = resolver.resolve(plan.datasets)
        return link_plan(plan, resolution.links, resolution.interim)
    link(build_lineage(merge_event(*prepared[0]), engine, options))  # warm: every answer cached from here on
samples = []
for _ in range(7):
    started = time.perf_counter()
    for snapshot, complete in prepared:
        plan = build_lineage(merge_event(snapshot, complete), engine, options)
        if link is not None:
            link(plan)
    samples.append((time.perf_counter() - started) / len(prepared))
print(1 / statistics.median(samples))
"""


def _rate(tree: Path, mode: str, rules: Path) -> float:
    done = subprocess.run(
        [sys.executable, "-c", _CORE, mode, str(rules)],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return float(done.stdout.strip().splitlines()[-1])


def report_ab() -> None:
    archive = subprocess.run(["git", "-C", str(PROJECT_ROOT), "archive", BASE], capture_output=True, check=True).stdout
    with tempfile.TemporaryDirectory() as folder:
        before = Path(folder) / "before"
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(before, filter="data")
        rates: dict[str, list[float]] = {"before": [], "after": [], "after+link": []}
        for _ in range(AB_ROUNDS):  # interleaved, so that the machine's load falls on both alike
            # each tree with its own rule file: BASE's from git, this tree's config/
            rates["before"].append(_rate(before, "build", before / "config" / "OlToPurviewMappings.json"))
            rates["after"].append(_rate(PROJECT_ROOT, "build", MAPPINGS_PATH))
            rates["after+link"].append(_rate(PROJECT_ROOT, "link", MAPPINGS_PATH))
    medians = {k: statistics.median(v) for k, v in rates.items()}
    print(
        f"merge + map + build, bench.merge's Databricks run ({AB_ROUNDS} interleaved rounds, medians of 7): "
        f"before ({BASE}) {medians['before']:,.0f} events/s, after {medians['after']:,.0f} events/s "
        f"({(medians['after'] / medians['before'] - 1) * 100:+.1f}%); with resolve (cached) + link "
        f"{medians['after+link']:,.0f} events/s ({(medians['after+link'] / medians['before'] - 1) * 100:+.1f}%)"
    )
    print("  rounds: " + "; ".join(f"{k} " + ", ".join(f"{r:,.0f}" for r in v) for k, v in rates.items()))


def main() -> None:
    report_stream()
    report_ab()


if __name__ == "__main__":
    main()
