"""Catalog data made the way the connector makes it: OpenLineage events read by the intake contract and run through
the real pipeline (adapters.runtime), which writes to a catalog over HTTP. Nothing here writes entities by hand, so
tests see what the connector really writes (process qualifiedNames included, whatever their format)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any, Iterable

from olparser.adapters import operations
from olparser.adapters.runtime import Runtime
from olparser.contract import read_event
from olparser.settings import Settings
from tests.support.rules import MAPPINGS_PATH

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "openlineage"
CLL_SEQUENCE = SHARED / "sequences" / "compat-tests__CLL"
LAKE_NAMESPACE = "abfss://lake@contosolake.dfs.core.windows.net"
LAKE = "https://contosolake.dfs.core.windows.net/lake"
BRONZE, SILVER, GOLD, CUSTOMERS = (
    f"{LAKE}/bronze/orders",
    f"{LAKE}/silver/orders",
    f"{LAKE}/gold/sales_by_country",
    f"{LAKE}/bronze/customers",
)
PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.19.0/integration/spark"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"


def sequence_events(folder: Path) -> list[dict[str, Any]]:
    """The numbered event files of a shared sequence, in order."""
    files = sorted((p for p in folder.glob("*.json") if p.stem.isdigit()), key=lambda p: int(p.stem))
    return [json.loads(p.read_text(encoding="utf-8")) for p in files]


def write_through_pipeline(atlas_url: str, data_dir: Path, events: Iterable[dict[str, Any]]) -> list[str]:
    """Each event through the intake contract and the lineage pipeline into the catalog at `atlas_url`; returns the
    outcomes' statuses."""
    runtime = Runtime(
        Settings.from_env(
            {
                "ATLAS_ENDPOINT": atlas_url,
                "OL2PURVIEW_DATA_DIR": str(data_dir),
                "RUN_STATE_STORE": "sqlite",
                "OL_TO_PURVIEW_MAPPINGS_PATH": str(MAPPINGS_PATH),
            }
        )
    )
    try:
        statuses = []
        for event in events:
            accepted = read_event(json.dumps(event).encode(), {"Content-Type": "application/json"}, runtime.limits())
            statuses.append(operations.process_event(runtime, json.loads(accepted.to_json_bytes())).status)
        return statuses
    finally:
        runtime.close()


def _field(namespace: str, name: str, field: str, *transformations: tuple[str, str]) -> dict[str, Any]:
    return {
        "namespace": namespace,
        "name": name,
        "field": field,
        "transformations": [{"type": t, "subtype": s, "description": "", "masking": False} for t, s in transformations],
    }


def _dataset(name: str, columns: list[str], lineage: dict[str, Any] | None = None) -> dict[str, Any]:
    facets: dict[str, Any] = {
        "schema": {
            "_producer": PRODUCER,
            "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet",
            "fields": [{"name": c, "type": "string"} for c in columns],
        }
    }
    if lineage is not None:
        facets["columnLineage"] = {
            "_producer": PRODUCER,
            "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/"
            "ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet",
            **lineage,
        }
    return {"namespace": LAKE_NAMESPACE, "name": name, "facets": facets}


def _run(job: str, inputs: list[dict[str, Any]], output: dict[str, Any], when: str) -> dict[str, Any]:
    return {
        "eventType": "COMPLETE",
        "eventTime": when,
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
        "run": {"runId": str(uuid.uuid5(uuid.NAMESPACE_URL, f"ol2purview-test:{job}")), "facets": {}},
        "job": {"namespace": "medallion", "name": job, "facets": {}},
        "inputs": inputs,
        "outputs": [output],
    }


def medallion_events() -> list[dict[str, Any]]:
    """bronze/orders -> silver/orders (IDENTITY, a CONCAT, filtered on status) -> gold/sales_by_country (SUM of
    amount, country from bronze/customers joined on customer_id, grouped by country)."""
    ns = LAKE_NAMESPACE
    silver = _run(
        "silver_orders",
        [_dataset("/bronze/orders", ["order_id", "customer_id", "amount", "status", "first", "last"])],
        _dataset(
            "/silver/orders",
            ["order_id", "customer_id", "amount", "full_name"],
            {
                "fields": {
                    "order_id": {"inputFields": [_field(ns, "/bronze/orders", "order_id", ("DIRECT", "IDENTITY"))]},
                    "customer_id": {
                        "inputFields": [_field(ns, "/bronze/orders", "customer_id", ("DIRECT", "IDENTITY"))]
                    },
                    "amount": {"inputFields": [_field(ns, "/bronze/orders", "amount", ("DIRECT", "IDENTITY"))]},
                    "full_name": {
                        "inputFields": [
                            _field(ns, "/bronze/orders", "first", ("DIRECT", "TRANSFORMATION")),
                            _field(ns, "/bronze/orders", "last", ("DIRECT", "TRANSFORMATION")),
                        ]
                    },
                },
                "dataset": [_field(ns, "/bronze/orders", "status", ("INDIRECT", "FILTER"))],
            },
        ),
        "2024-05-01T10:00:00.000Z",
    )
    gold = _run(
        "gold_sales_by_country",
        [
            _dataset("/silver/orders", ["order_id", "customer_id", "amount", "full_name"]),
            _dataset("/bronze/customers", ["customer_id", "country"]),
        ],
        _dataset(
            "/gold/sales_by_country",
            ["country", "total_amount"],
            {
                "fields": {
                    "total_amount": {
                        "inputFields": [
                            _field(ns, "/silver/orders", "amount", ("DIRECT", "AGGREGATION")),
                            _field(ns, "/silver/orders", "customer_id", ("INDIRECT", "JOIN")),
                            _field(ns, "/bronze/customers", "customer_id", ("INDIRECT", "JOIN")),
                            _field(ns, "/bronze/customers", "country", ("INDIRECT", "GROUP_BY")),
                        ]
                    },
                    "country": {
                        "inputFields": [
                            _field(ns, "/bronze/customers", "country", ("DIRECT", "IDENTITY")),
                            _field(ns, "/silver/orders", "customer_id", ("INDIRECT", "JOIN")),
                            _field(ns, "/bronze/customers", "customer_id", ("INDIRECT", "JOIN")),
                        ]
                    },
                }
            },
        ),
        "2024-05-01T11:00:00.000Z",
    )
    return [silver, gold]
