"""Hostile payloads of issue #15 that are intake- or naming-bound, each next to an honest event of the same size.

Every builder returns plain data (an event dict, or body bytes for the gzip shapes) so that tests/hostile and
bench/hostile.py measure exactly the same inputs, with the same `cpu_times`. Sizes are the issue's, scaled where noted.
"""

from __future__ import annotations

import gzip
import json
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable

from olparser.contract import IngestError
from olparser.jsontypes import JSON
from olparser.naming import MountPoint

PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/spark"
LAKE = "abfss://lake@account.dfs.core.windows.net"
WORKSPACE = "adb-1234567890123456.7.azuredatabricks.net"


def run_id(index: int) -> str:
    return str(uuid.UUID(int=0x01912800_0000_7000_8000_000000000000 + index))


def base_event(
    index: int = 0, inputs: list[JSON] | None = None, outputs: list[JSON] | None = None, run_facets: JSON | None = None
) -> JSON:
    """A COMPLETE RunEvent of a Databricks-style run."""
    return {
        "eventTime": "2025-03-01T12:00:00.000Z",
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "eventType": "COMPLETE",
        "run": {"runId": run_id(index), "facets": run_facets or {}},
        "job": {"namespace": "default", "name": f"{WORKSPACE}.execute_insert_into_hadoop_fs_relation_command.out"},
        "inputs": inputs if inputs is not None else [],
        "outputs": outputs if outputs is not None else [{"namespace": LAKE, "name": "curated/out", "facets": {}}],
    }


def body(event: Any) -> bytes:
    return json.dumps(event, separators=(",", ":")).encode()


def honest_event(target_bytes: int, index: int = 0) -> JSON:
    """An honest event of about `target_bytes` of JSON: realistic inputs with schemas and column lineage onto one
    output, as many as it takes (the size is what hostile shapes are compared against)."""

    def dataset(i: int) -> JSON:
        fields = [{"name": f"col_{c}", "type": "string"} for c in range(20)]
        return {"namespace": LAKE, "name": f"raw/sales/region_{i:05d}/orders", "facets": {"schema": {"fields": fields}}}

    one = len(body(dataset(0))) + 220  # the dataset and its share of the column lineage
    count = max(1, min(900, target_bytes // one))
    inputs = [dataset(i) for i in range(count)]
    lineage = {
        f"col_{c}": {
            "inputFields": [
                {"namespace": LAKE, "name": d["name"], "field": f"col_{c}"} for d in inputs[:: max(1, count // 100)]
            ]
        }
        for c in range(20)
    }
    output = {"namespace": LAKE, "name": "curated/sales", "facets": {"columnLineage": {"fields": lineage}}}
    return base_event(index, inputs=inputs, outputs=[output])


# --- hostile shapes ----------------------------------------------------------------------------------------------


def bracket_names_event(count: int = 200, length: int = 4000) -> JSON:
    """Inputs whose names are ~4,000 `[` (issue: 84 s of worker CPU with the quadratic name-group regex)."""
    inputs = [{"namespace": LAKE, "name": "[" * (length - 6) + f"{i:06d}"} for i in range(count)]
    return base_event(1, inputs=inputs)


def honest_long_names_event(count: int = 200, length: int = 4000) -> JSON:
    """The same number of names of the same length, as paths."""
    inputs = [{"namespace": LAKE, "name": ("d/" * length)[: length - 6] + f"{i:06d}"} for i in range(count)]
    return base_event(1, inputs=inputs)


def mounts(count: int) -> list[JSON]:
    return [
        {"mountPoint": f"/mnt/m{i:05d}", "source": f"abfss://c{i:05d}@account.dfs.core.windows.net/"}
        for i in range(count)
    ]


def mounts_event(mount_count: int = 15_000, input_count: int = 15_000) -> JSON:
    """15,000 mount points and 15,000 `/mnt` inputs (issue: 206 s, every name compared with every mount)."""
    env = {"environment-properties": {"mountPoints": mounts(mount_count)}}
    inputs = [{"namespace": "dbfs", "name": f"/mnt/m{(i * 7919) % mount_count:05d}/t{i}"} for i in range(input_count)]
    return base_event(2, inputs=inputs, run_facets={"environment-properties": env})


def mount_points(count: int) -> tuple[MountPoint, ...]:
    return tuple(MountPoint(m["mountPoint"], m["source"]) for m in mounts(count))


def empty_gzip_members_body(members: int = 400_000) -> bytes:
    """`members` empty gzip members, then the event (issue: 400,000 of them cost 55 s inside the request)."""
    return gzip.compress(b"", mtime=0) * members + gzip.compress(body(base_event(3)), mtime=0)


def malformed_facets_event(facets: int = 600_000) -> JSON:
    """600,000 malformed facets in one facet map (issue: 37 s before the 400, every schema error collected)."""
    return base_event(4, run_facets={f"f{i}": i for i in range(facets)})


def malformed_read_facets_event(datasets: int = 900) -> JSON:
    """Every dataset carrying three malformed facets the connector reads (each one validated, each one dropped)."""
    bad = {
        "schema": {"fields": [{"name": 1}] * 5},
        "symlinks": {"identifiers": [{"name": 2}]},
        "columnLineage": {"fields": {"c": {"inputFields": [{"field": 3}]}}},
    }
    outputs = [{"namespace": LAKE, "name": f"curated/o{i}", "facets": dict(bad)} for i in range(datasets)]
    return base_event(5, outputs=outputs)


def inputs_outputs_event(inputs: int, outputs: int) -> JSON:
    """`inputs` × `outputs` (issue: 600 × 600 cost 36 s and 769 MB in the worker; 1,500 × 2,000 cost 1,503 calls)."""
    return base_event(
        6,
        inputs=[{"namespace": LAKE, "name": f"raw/i{i}"} for i in range(inputs)],
        outputs=[{"namespace": LAKE, "name": f"curated/o{i}"} for i in range(outputs)],
    )


def forged_date_event() -> JSON:
    event = base_event(7)
    event["eventTime"] = "9999-12-31T23:59:59.999Z"
    return event


# --- one payload per new limit, just over its default ---------------------------------------------------------------


def _schema_columns_event() -> JSON:
    fields = [{"name": f"c{i}"} for i in range(10_001)]
    return base_event(
        8, outputs=[{"namespace": LAKE, "name": "curated/wide", "facets": {"schema": {"fields": fields}}}]
    )


def _lineage_event(output_fields: int, inputs_each: int) -> JSON:
    field = {"namespace": LAKE, "name": "raw/i0", "field": "c"}
    lineage = {"fields": {f"o{i}": {"inputFields": [field] * inputs_each} for i in range(output_fields)}}
    return base_event(9, outputs=[{"namespace": LAKE, "name": "curated/o", "facets": {"columnLineage": lineage}}])


@dataclass(frozen=True)
class OverLimit:
    """A payload just over one limit's default and the answer it must get."""

    setting: str
    status: int
    make: Callable[[], bytes]


OVER_LIMITS = (
    OverLimit("MAX_DATASETS_PER_EVENT", 413, lambda: body(inputs_outputs_event(501, 500))),
    OverLimit(
        "MAX_FACETS_PER_EVENT", 413, lambda: body(base_event(10, run_facets={f"f{i}": {} for i in range(10_001)}))
    ),
    OverLimit("MAX_SCHEMA_COLUMNS", 413, lambda: body(_schema_columns_event())),
    OverLimit("MAX_COLUMN_LINEAGE_FIELDS", 413, lambda: body(_lineage_event(10_001, 1))),
    OverLimit("MAX_COLUMN_LINEAGE_INPUT_FIELDS", 413, lambda: body(_lineage_event(1_000, 101))),
    OverLimit(
        "MAX_MOUNT_POINTS",
        413,
        lambda: body(
            base_event(
                11, run_facets={"environment-properties": {"environment-properties": {"mountPoints": mounts(2_001)}}}
            )
        ),
    ),
    OverLimit("MAX_GZIP_MEMBERS", 400, lambda: empty_gzip_members_body(65)),
    OverLimit("MAX_NAME_CHARS", 400, lambda: body(base_event(12, inputs=[{"namespace": LAKE, "name": "n" * 4_097}]))),
)


def cpu_times(fn: Callable[[], Any], repeat: int) -> list[float]:
    """The CPU seconds of each of `repeat` runs of `fn`."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        try:
            fn()
        except IngestError:
            pass
        times.append(time.process_time() - start)
    return times
