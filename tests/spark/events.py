"""Generated Spark runs for the backfill tests: START and COMPLETE of a job that reads ADLS Gen2 inputs (with
schemas) and writes one Blob Storage output, under a plain Spark application (no Databricks facets)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/spark"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
LAKE = "abfss://raw@contosolake.dfs.core.windows.net"
BLOB = "wasbs://out@contosoblob.blob.core.windows.net"


def spark_run(number: int, inputs: int = 2, minute: int = 0) -> list[dict[str, Any]]:
    """START and COMPLETE of run `number`: job `job_{number}` reads `inputs` lake folders and writes its own output."""
    run_id = str(uuid.UUID(int=number + 1))
    schema = {
        "_producer": PRODUCER,
        "_schemaURL": f"{PRODUCER}#schema",
        "fields": [{"name": "id", "type": "long"}, {"name": "amount", "type": "double"}],
    }
    job = {"namespace": "default", "name": f"etl_app.job_{number}"}
    parent = {
        "_producer": PRODUCER,
        "_schemaURL": f"{PRODUCER}#parent",
        "run": {"runId": str(uuid.UUID(int=10**9 + number))},
        "job": {"namespace": "default", "name": "etl_app"},
    }

    def event(event_type: str, second: int) -> dict[str, Any]:
        return {
            "eventType": event_type,
            "eventTime": f"2025-03-01T10:{minute:02d}:{second:02d}.000Z",
            "producer": PRODUCER,
            "schemaURL": SCHEMA_URL,
            "run": {"runId": run_id, "facets": {"parent": parent}},
            "job": job,
            "inputs": [
                {"namespace": LAKE, "name": f"sales/part_{number}_{i}", "facets": {"schema": schema}}
                for i in range(inputs)
            ],
            "outputs": [{"namespace": BLOB, "name": f"reports/out_{number}"}],
        }

    return [event("START", 1), event("COMPLETE", 9)]


def write_json_lines(path: Path, events: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path
