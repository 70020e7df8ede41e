"""Runs with temporary datasets and runs with several outputs, shaped as the OpenLineage spec's own example of
job-to-job lineage (website/docs/spec/examples.md of the OpenLineage repo, "Job-to-Job lineage - ETL Job with several
tasks", lines 175-520: tasks of one ETL job, each a run whose `parent` facet names the job's run, passing data through
`inmemory://` datasets marked `datasetType` JOB_OUTPUT / `subType` TEMPORARY). Shared by the unit, property, e2e and
equivalence tests: one builder, so every test sends the same shapes.

- `etl_chain`: Load (reads the lake's orders, writes `inmemory://` "orders.Load task"), Transform (reads it and the
  lake's rates, writes `inmemory://` "orders.Transform task") and Save (reads that, writes the lake's curated orders):
  in the catalog, Save's process reads orders and rates, and no temporary dataset is an entity.
- `two_outputs`: one run reads orders and customers and writes two outputs whose column lineage is disjoint (the
  ColumnLineageDatasetFacet's `fields`, spec/facets/ColumnLineageDatasetFacet.json line 13): each output's process
  lists only its own input.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

# examples.md line 197 names the Python client as the producer; these runs are Spark's (an application's `{app}.{task}`
# jobs writing through temporary datasets), so they say so: a producer the connector has no model of gets a generic
# owner and keeps its job name whole (olparser/lineage/owners.py).
PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.30.0/integration/spark"
LAKE = "abfss://lake@contosolake.dfs.core.windows.net"
LAKE_QN = "https://contosolake.dfs.core.windows.net/lake"
JOB_NAMESPACE = "etl"
ETL_JOB = "orders_etl"
T0 = datetime(2026, 8, 20, 10, 0, tzinfo=timezone.utc)


def _facet(schema: str, **body: Any) -> dict[str, Any]:
    return {"_producer": PRODUCER, "_schemaURL": f"https://openlineage.io/spec/facets/{schema}", **body}


def _schema(*columns: str) -> dict[str, Any]:
    return _facet("1-1-1/SchemaDatasetFacet.json", fields=[{"name": c, "type": "string"} for c in columns])


def temporary(name: str, *columns: str) -> dict[str, Any]:
    """A temporary dataset as examples.md lines 254-262 write it: `inmemory://`, datasetType JOB_OUTPUT/TEMPORARY."""
    return {
        "namespace": "inmemory://",
        "name": name,
        "facets": {
            "datasetType": _facet("1-0-0/DatasetTypeDatasetFacet.json", datasetType="JOB_OUTPUT", subType="TEMPORARY"),
            "schema": _schema(*columns),
        },
    }


def lake(path: str, *columns: str, lineage: dict[str, list[tuple[str, str, str]]] | None = None) -> dict[str, Any]:
    """A dataset of the lake; `lineage`: output column -> [(namespace, name, field)] of its direct inputs."""
    facets: dict[str, Any] = {"schema": _schema(*columns)} if columns else {}
    if lineage:
        facets["columnLineage"] = _facet(
            "1-2-0/ColumnLineageDatasetFacet.json",
            fields={
                column: {
                    "inputFields": [
                        {
                            "namespace": ns,
                            "name": name,
                            "field": field,
                            "transformations": [
                                {"type": "DIRECT", "subtype": "IDENTITY", "description": "", "masking": False}
                            ],
                        }
                        for ns, name, field in sources
                    ]
                }
                for column, sources in lineage.items()
            },
        )
    return {"namespace": LAKE, "name": path, "facets": facets}


def run_events(
    run_id: str, job: str, started: datetime, inputs: list[dict], outputs: list[dict], *, parent: str | None
) -> list[dict[str, Any]]:
    """START (datasets without facets) and COMPLETE (with them) of one task run; `parent`: the ETL job's runId
    (examples.md lines 220-228, ParentRunFacet)."""
    run_facets = (
        {
            "parent": _facet(
                "1-0-0/ParentRunFacet.json", run={"runId": parent}, job={"namespace": JOB_NAMESPACE, "name": ETL_JOB}
            )
        }
        if parent
        else {}
    )

    def event(kind: str, minutes: int, full: bool) -> dict[str, Any]:
        def datasets(items: list[dict]) -> list[dict]:
            return [item if full else {"namespace": item["namespace"], "name": item["name"]} for item in items]

        return {
            "eventType": kind,
            "eventTime": (started + timedelta(minutes=minutes)).isoformat(),
            "producer": PRODUCER,
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": run_id, "facets": run_facets},
            "job": {"namespace": JOB_NAMESPACE, "name": job},
            "inputs": datasets(inputs),
            "outputs": datasets(outputs),
        }

    return [event("START", 0, False), event("COMPLETE", 1, True)]


def run_id(seed: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"ol2purview-tests/{seed}"))


def etl_chain(seed: str = "etl", started: datetime = T0) -> list[dict[str, Any]]:
    """The three task runs of one ETL job run (see the module docstring), in emission order."""
    parent = run_id(f"{seed}/job")
    load = temporary("orders.Load task", "id", "amount")
    transformed = temporary("orders.Transform task", "id", "amount", "rate")
    return [
        *run_events(
            run_id(f"{seed}/load"),
            f"{ETL_JOB}.Load task",
            started,
            [lake("/raw/orders", "id", "amount")],
            [load],
            parent=parent,
        ),
        *run_events(
            run_id(f"{seed}/transform"),
            f"{ETL_JOB}.Transform task",
            started + timedelta(minutes=2),
            [load, lake("/raw/rates", "rate")],
            [transformed],
            parent=parent,
        ),
        *run_events(
            run_id(f"{seed}/save"),
            f"{ETL_JOB}.Save task",
            started + timedelta(minutes=4),
            [transformed],
            [
                lake(
                    "/curated/orders",
                    "id",
                    "amount",
                    lineage={
                        "id": [("inmemory://", "orders.Transform task", "id")],
                        "amount": [("inmemory://", "orders.Transform task", "amount")],
                    },
                )
            ],
            parent=parent,
        ),
    ]


def two_outputs(seed: str = "split", started: datetime = T0) -> list[dict[str, Any]]:
    """One run, two outputs with disjoint column lineage, and an input (rates) no output's lineage names."""
    return run_events(
        run_id(seed),
        "split_orders",
        started,
        [lake("/raw/orders", "id", "amount"), lake("/raw/customers", "id", "name"), lake("/raw/rates", "rate")],
        [
            lake(
                "/gold/order_amounts",
                "id",
                "amount",
                lineage={"id": [(LAKE, "/raw/orders", "id")], "amount": [(LAKE, "/raw/orders", "amount")]},
            ),
            lake(
                "/gold/customer_names",
                "id",
                "name",
                lineage={"id": [(LAKE, "/raw/customers", "id")], "name": [(LAKE, "/raw/customers", "name")]},
            ),
        ],
        parent=run_id(f"{seed}/job"),
    )


# What the catalog must show (process output qualifiedName -> its input qualifiedNames, sorted).
ETL_EDGES = {f"{LAKE_QN}/curated/orders": [f"{LAKE_QN}/raw/orders", f"{LAKE_QN}/raw/rates"]}
TWO_OUTPUT_EDGES = {
    f"{LAKE_QN}/gold/order_amounts": [f"{LAKE_QN}/raw/orders", f"{LAKE_QN}/raw/rates"],
    f"{LAKE_QN}/gold/customer_names": [f"{LAKE_QN}/raw/customers", f"{LAKE_QN}/raw/rates"],
}
