"""Embedded catalog benchmarks over real HTTP: bulk upsert throughput (batches of 500) and lineage over ~1,000 nodes.

Targets: at least 2,000 entities/s when upserting in batches of 500; a lineage query under 200 ms.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import requests

from tools.catalog import CatalogServer

BATCH = 500
BATCHES = 8
LINEAGE_QUERIES = 20
LAKE = "https://benchlake.dfs.core.windows.net/data"


def _path(qn: str, guid: str | None = None) -> dict:
    entity = {
        "typeName": "azure_datalake_gen2_path",
        "attributes": {"qualifiedName": qn, "name": qn.rsplit("/", 1)[-1]},
    }
    if guid:
        entity["guid"] = guid
    return entity


def upsert_batch(index: int) -> list[dict]:
    """500 entities: 100 processes, each reading 2 and writing 2 new datasets given as placeholders."""
    entities: list[dict] = []
    for p in range(BATCH // 5):
        refs = [f"-{index}{p:03d}{k}" for k in range(4)]
        entities += [_path(f"{LAKE}/b{index}/p{p}/f{k}", ref) for k, ref in enumerate(refs)]
        entities.append(
            {
                "typeName": "Process",
                "guid": f"-{index}{p:03d}9",
                "attributes": {
                    "qualifiedName": f"bench://b{index}/p{p}",
                    "name": f"p{p}",
                    "inputs": [{"guid": refs[0]}, {"guid": refs[1]}],
                    "outputs": [{"guid": refs[2]}, {"guid": refs[3]}],
                },
            }
        )
    return entities


def _timed_posts(http: requests.Session, url: str, batches: list[list[dict]]) -> list[float]:
    seconds = []
    for entities in batches:
        started = time.perf_counter()
        response = http.post(url, json={"entities": entities}, timeout=60)
        seconds.append(time.perf_counter() - started)
        response.raise_for_status()
    return seconds


def layered_graph(http: requests.Session, atlas_url: str) -> str:
    """10 layers of 50 datasets and 50 processes, all feeding one warehouse dataset; returns the warehouse guid."""
    width, layers = 50, 10
    datasets = [_path(f"{LAKE}/layer{layer}/d{j}") for layer in range(layers) for j in range(width)]
    datasets.append(_path(f"{LAKE}/warehouse"))
    http.post(f"{atlas_url}/entity/bulk", json={"entities": datasets}, timeout=60).raise_for_status()

    def ref(qn: str) -> dict:
        return {"typeName": "azure_datalake_gen2_path", "uniqueAttributes": {"qualifiedName": qn}}

    processes = []
    for layer in range(layers):
        for j in range(width):
            target = f"{LAKE}/layer{layer + 1}/d{j}" if layer + 1 < layers else f"{LAKE}/warehouse"
            processes.append(
                {
                    "typeName": "Process",
                    "attributes": {
                        "qualifiedName": f"bench://layer{layer}/p{j}",
                        "name": f"p{layer}.{j}",
                        "inputs": [ref(f"{LAKE}/layer{layer}/d{j}"), ref(f"{LAKE}/layer{layer}/d{(j + 1) % width}")],
                        "outputs": [ref(target)],
                    },
                }
            )
    for start in range(0, len(processes), BATCH):
        http.post(
            f"{atlas_url}/entity/bulk", json={"entities": processes[start : start + BATCH]}, timeout=60
        ).raise_for_status()
    found = http.get(
        f"{atlas_url}/entity/uniqueAttribute/type/azure_datalake_gen2_path",
        params={"attr:qualifiedName": f"{LAKE}/warehouse"},
        timeout=60,
    )
    return found.json()["entity"]["guid"]


def main() -> None:
    with (
        tempfile.TemporaryDirectory() as tmp,
        CatalogServer(Path(tmp) / "bench.sqlite") as server,
        requests.Session() as http,
    ):
        bulk_url = f"{server.atlas_url}/entity/bulk"
        batches = [upsert_batch(i + 1) for i in range(BATCHES)]
        created = _timed_posts(http, bulk_url, batches)
        unchanged = _timed_posts(http, bulk_url, batches)
        for label, seconds in (("create", created), ("re-upsert, unchanged", unchanged)):
            median = statistics.median(seconds)
            print(
                f"bulk upsert ({label}): median {median * 1000:.0f} ms per batch of {BATCH} = "
                f"{BATCH / median:,.0f} entities/s (target >= 2,000)"
            )

        warehouse = layered_graph(http, server.atlas_url)
        timings, size = [], 0
        for _ in range(LINEAGE_QUERIES):
            started = time.perf_counter()
            lineage = http.get(
                f"{server.atlas_url}/lineage/{warehouse}", params={"direction": "INPUT", "depth": 0}, timeout=60
            ).json()
            timings.append(time.perf_counter() - started)
            size = len(lineage["guidEntityMap"])
        print(
            f"lineage (INPUT, unlimited depth, {size} nodes, {len(lineage['relations'])} edges): median "
            f"{statistics.median(timings) * 1000:.1f} ms (target < 200 ms)"
        )


if __name__ == "__main__":
    main()
