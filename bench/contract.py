"""Intake cost: decode + validate + strip per event, for a typical Spark COMPLETE event and a 20 MB one carrying a
spark.logicalPlan facet. Inputs are generated here (no ../shared needed). Prints medians and the peak memory ratio."""

from __future__ import annotations

import gzip
import json
import statistics
import time
import tracemalloc
import uuid
from typing import Any, Callable

from bench import report
from olparser.contract import IntakeLimits, read_event
from olparser.contract.reader import check_depth

PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/spark"
HEADERS = {"Content-Type": "application/json"}
COLUMNS = 30
ROUNDS = 15


def _facet(schema_url: str, **fields: Any) -> dict[str, Any]:
    return {"_producer": PRODUCER, "_schemaURL": schema_url, **fields}


def _dataset(namespace: str, name: str, columns: int, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    facets = {
        "dataSource": _facet(
            "https://openlineage.io/spec/facets/1-0-1/DatasourceDatasetFacet.json", name=namespace, uri=namespace
        ),
        "schema": _facet(
            "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
            fields=[{"name": f"col_{i}", "type": "string" if i % 2 else "long"} for i in range(columns)],
        ),
        "symlinks": _facet(
            "https://openlineage.io/spec/facets/1-0-1/SymlinksDatasetFacet.json",
            identifiers=[
                {"namespace": "hive://metastore:9083", "name": f"sales.{name.rsplit('/', 1)[-1]}", "type": "TABLE"}
            ],
        ),
        "storage": _facet(
            "https://openlineage.io/spec/facets/1-0-1/StorageDatasetFacet.json",
            storageLayer="delta",
            fileFormat="parquet",
        ),
    }
    facets.update(extra or {})
    return {"namespace": namespace, "name": name, "facets": facets}


def spark_complete_event(columns: int = COLUMNS) -> dict[str, Any]:
    """A Databricks-style COMPLETE event: two inputs, one output with `columns` columns of column lineage."""
    ns = "abfss://lake@account.dfs.core.windows.net"
    inputs = [_dataset(ns, f"raw/orders_{i}", columns) for i in range(2)]
    lineage = {
        f"col_{c}": {
            "inputFields": [
                {
                    "namespace": ns,
                    "name": f"raw/orders_{i}",
                    "field": f"col_{c}",
                    "transformations": [{"type": "DIRECT", "subtype": "IDENTITY", "description": "", "masking": False}],
                }
                for i in range(2)
            ]
        }
        for c in range(columns)
    }
    output = _dataset(
        ns,
        "curated/orders",
        columns,
        {
            "columnLineage": _facet(
                "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json", fields=lineage
            )
        },
    )
    output["outputFacets"] = {"outputStatistics": _facet("x", rowCount=1234, size=56789)}
    env = {
        "spark.databricks.notebook.path": "/Repos/team/etl/orders",
        "spark.databricks.clusterUsageTags.clusterOwnerOrgId": "1234567890123456",
        "mountPoints": [
            {"mountPoint": f"/mnt/m{i}", "source": f"abfss://c{i}@account.dfs.core.windows.net/"} for i in range(8)
        ],
        "user": "someone@example.com",
    }
    return {
        "eventTime": "2024-10-16T16:47:11.761Z",
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "eventType": "COMPLETE",
        "run": {
            "runId": str(uuid.uuid4()),
            "facets": {
                "parent": _facet(
                    "p", run={"runId": str(uuid.uuid4())}, job={"namespace": "default", "name": "databricks_shell"}
                ),
                "processing_engine": _facet("e", version="3.5.0", name="spark", openlineageAdapterVersion="1.23.0"),
                "environment-properties": _facet("v", **{"environment-properties": env}),
                "spark_properties": _facet(
                    "s", properties={"spark.master": "local", "spark.app.name": "databricks_shell"}
                ),
            },
        },
        "job": {
            "namespace": "default",
            "name": "adb-123.4.azuredatabricks.net.execute_insert_into_hadoop_fs_relation_command.curated_orders",
            "facets": {"jobType": _facet("j", processingType="BATCH", integration="SPARK", jobType="SQL_JOB")},
        },
        "inputs": inputs,
        "outputs": [output],
    }


def logical_plan_event(target_bytes: int = 20 * 1024 * 1024) -> dict[str, Any]:
    """The typical event plus a spark.logicalPlan facet of about `target_bytes` (Spark's flat list of plan nodes)."""
    event = spark_complete_event()
    node = {
        "class": "org.apache.spark.sql.catalyst.plans.logical.Project",
        "num-children": 1,
        "projectList": [
            [
                {
                    "class": "org.apache.spark.sql.catalyst.expressions.AttributeReference",
                    "num-children": 0,
                    "name": f"col_{i}",
                    "dataType": "string",
                    "nullable": True,
                    "metadata": {},
                    "exprId": {"id": i, "jvmId": str(uuid.UUID(int=i))},
                    "qualifier": [],
                }
            ]
            for i in range(20)
        ],
        "child": 0,
    }
    node_size = len(json.dumps(node))
    plan = [node] * (target_bytes // node_size)
    event["run"]["facets"]["spark.logicalPlan"] = _facet("l", plan=plan)
    return event


def _median_ms(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append((time.process_time() - start) * 1000)
    return statistics.median(times)


def _peak_ratio(body: bytes, limits: IntakeLimits) -> float:
    tracemalloc.start()
    read_event(body, HEADERS, limits)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / len(body)


def main() -> None:
    limits = IntakeLimits()
    typical = json.dumps(spark_complete_event()).encode()
    typical_gz = gzip.compress(typical)
    stripped = read_event(typical, HEADERS, limits).event
    rounds = [
        (_median_ms(lambda: read_event(typical, HEADERS, limits), 30), _median_ms(lambda: json.loads(typical), 30))
        for _ in range(ROUNDS)
    ]  # interleaved, so that load changing between rounds moves both alike
    contract = statistics.median(c for c, _ in rounds)
    floor = statistics.median(f for _, f in rounds)
    print(
        f"typical COMPLETE ({len(typical)} bytes, {COLUMNS} columns of lineage): "
        f"median {contract:.3f} ms CPU (json.loads of the same bytes: {floor:.3f} ms; {ROUNDS} rounds of 30)"
    )
    report.record(
        __name__,
        f"contract: decode, validate and strip a typical {len(typical) // 1000} KB COMPLETE "
        f"({COLUMNS} columns of lineage)",
        contract * 1000,
        "µs CPU",
        floor * 1000,
        "json.loads of the same bytes",
        paired=statistics.median(c / f for c, f in rounds),
    )
    print(
        f"  of which the nesting-depth walk: median "
        f"{_median_ms(lambda: [check_depth(stripped, limits.max_depth) for _ in range(100)], 30) / 100:.3f} ms CPU"
    )
    print(
        f"typical COMPLETE gzipped ({len(typical_gz)} bytes): "
        f"median {_median_ms(lambda: read_event(typical_gz, HEADERS, limits), 300):.3f} ms CPU"
    )
    big = json.dumps(logical_plan_event()).encode()
    print(
        f"logical-plan event ({len(big) / 2**20:.1f} MiB): "
        f"median {_median_ms(lambda: read_event(big, HEADERS, limits), 5):.0f} ms CPU, "
        f"peak memory {_peak_ratio(big, limits):.1f}x the body"
    )


if __name__ == "__main__":
    main()
