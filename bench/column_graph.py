"""Column-lineage query time on the embedded catalog, over real HTTP: a generated catalog with 5,000 column edges.

50 datasets of 100 columns in a chain, written by 49 `spark_process`es whose columnLineageDetail maps every column
(IDENTITY) plus one INDIRECT FILTER on the whole output (49 x 101 = 4,949 edges), and one extra process with 51
edges: 5,000 column edges. Each query is the page's route `GET /_ol2purview/page/column-lineage`: the dataset
lineage walk, the process reads, parsing every process's detail, and the column walk. Target: median < 200 ms.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

import requests

from tools.catalog import CatalogServer

DATASETS, COLUMNS, QUERIES = 50, 100, 20
LAKE = "https://benchlake.dfs.core.windows.net/columns"
TYPEDEFS = Path(__file__).resolve().parents[1] / "olparser" / "lineage" / "typedefs" / "spark.json"


def _qn(index: int) -> str:
    return f"{LAKE}/d{index:02d}"


def _detail(source: str, columns: list[tuple[str, str]]) -> str:
    def field(name: str, transformation: tuple[str, str]) -> dict:
        return {
            "field": name,
            "name": source,
            "namespace": "bench",
            "qualifiedName": source,
            "transformations": [{"type": transformation[0], "subtype": transformation[1]}],
            "typeName": "azure_datalake_gen2_path",
        }

    return json.dumps(
        {
            "dataset": [field("c0", ("INDIRECT", "FILTER"))],
            "fields": [{"field": sink, "inputFields": [field(src, ("DIRECT", "IDENTITY"))]} for src, sink in columns],
        }
    )


def build_catalog(server: CatalogServer) -> int:
    """Write the generated catalog; returns the number of column edges."""
    http = requests.Session()
    http.post(f"{server.atlas_url}/types/typedefs", json=json.loads(TYPEDEFS.read_text()), timeout=60)
    entities = [
        {
            "typeName": "azure_datalake_gen2_path",
            "guid": f"-{i + 1}",
            "attributes": {"qualifiedName": _qn(i), "name": f"d{i:02d}"},
        }
        for i in range(DATASETS + 1)
    ]
    edges = 0
    for i in range(DATASETS - 1):
        columns = [(f"c{c}", f"c{c}") for c in range(COLUMNS)]
        entities.append(_process(f"p{i:02d}", i, i + 1, _detail(_qn(i), columns)))
        edges += COLUMNS + 1
    extra = [(f"c{c}", f"x{c}") for c in range(5000 - edges - 1)]
    entities.append(_process("p_extra", DATASETS - 1, DATASETS, _detail(_qn(DATASETS - 1), extra)))
    edges += len(extra) + 1
    http.post(f"{server.atlas_url}/entity/bulk", json={"entities": entities}, timeout=120).raise_for_status()
    return edges


def _process(name: str, source: int, sink: int, detail: str) -> dict:
    return {
        "typeName": "spark_process",
        "guid": f"-p{name}",
        "attributes": {
            "qualifiedName": f"bench://{name}",
            "name": name,
            "inputs": [{"guid": f"-{source + 1}"}],
            "outputs": [{"guid": f"-{sink + 1}"}],
            "columnLineageDetail": detail,
        },
    }


def _guid(server: CatalogServer, index: int) -> str:
    return requests.get(
        f"{server.atlas_url}/entity/uniqueAttribute/type/azure_datalake_gen2_path",
        params={"attr:qualifiedName": _qn(index)},
        timeout=10,
    ).json()["entity"]["guid"]


def _median_ms(server: CatalogServer, params: dict) -> tuple[float, int]:
    http = requests.Session()
    url = f"{server.url}/_ol2purview/page/column-lineage"
    times, answer = [], {}
    for _ in range(QUERIES):
        started = time.perf_counter()
        response = http.get(url, params=params, timeout=60)
        times.append((time.perf_counter() - started) * 1000)
        response.raise_for_status()
        answer = response.json()
    return statistics.median(times), len(answer["edges"])


def main() -> None:
    with tempfile.TemporaryDirectory() as folder, CatalogServer(Path(folder) / "catalog.sqlite") as server:
        edges = build_catalog(server)
        last, middle = _guid(server, DATASETS - 1), _guid(server, DATASETS // 2)
        up, up_edges = _median_ms(server, {"guid": last, "column": "c7", "direction": "up"})
        both, both_edges = _median_ms(server, {"guid": middle, "column": "c7", "direction": "both"})
        print(
            f"column graph, {edges} column edges in {DATASETS} datasets: "
            f"upstream of the last dataset's column over {DATASETS - 1} hops ({up_edges} edges in the answer) "
            f"median {up:.1f} ms; both ways from the middle ({both_edges} edges) median {both:.1f} ms "
            f"(target < 200 ms)"
        )


if __name__ == "__main__":
    main()
