"""Size: 25 MB events (the reference connector broke on a 23 MB one) through `ol2purview serve` on Azurite.

- A COMPLETE with a generated 25 MB `spark.logicalPlan` facet: accepted, the plan stripped at the intake (the
  connector never reads it), the rest queued, processed, and its lineage lands.
- A COMPLETE whose 25 MB is in a facet that is kept (a SQL text): too big for a queue message, so it is stored as a
  blob (claim check) that the message points at, then processed, and its lineage lands.
"""

from __future__ import annotations

import gzip
import json
import time

import pytest
import requests
from azure.storage.blob import BlobServiceClient

from tools.functions_host.launcher import start_serve, start_worker
from tools.samples.delivery import PRODUCER, catalog_dump, catalog_mismatches, databricks_run, run_id_for

pytestmark = [pytest.mark.e2e, pytest.mark.azurite, pytest.mark.slow]

SIZE = 25 * 1024 * 1024
PLAN_RUN, SQL_RUN = 600, 601


def logical_plan(size: int) -> dict:
    """A `spark.logicalPlan` facet shaped like Spark's (a flat list of plan nodes) of about `size` bytes."""
    node = {
        "class": "org.apache.spark.sql.catalyst.plans.logical.Project",
        "num-children": 1,
        "projectList": [
            [
                {
                    "class": "org.apache.spark.sql.catalyst.expressions.AttributeReference",
                    "num-children": 0,
                    "name": "amount",
                    "dataType": "decimal(18,2)",
                    "nullable": True,
                    "metadata": {},
                    "exprId": {
                        "product-class": "org.apache.spark.sql.catalyst.expressions.ExprId",
                        "id": 0,
                        "jvmId": "6f0b7a52-4c1e-4d8e-9a55-0d2f3c9e1a10",
                    },
                    "qualifier": ["spark_catalog", "raw"],
                }
            ]
        ],
    }
    count = size // len(json.dumps(node)) + 1
    return {
        "_producer": PRODUCER,
        "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/LogicalPlanFacet.json",
        "plan": [
            {
                **node,
                "projectList": [
                    [{**node["projectList"][0][0], "exprId": {**node["projectList"][0][0]["exprId"], "id": i}}]
                ],
            }
            for i in range(count)
        ],
    }


def blob_names(connection: str) -> list[str]:
    service = BlobServiceClient.from_connection_string(connection)
    return [blob.name for blob in service.get_container_client("lineage-events").list_blobs()]


def test_25_mb_events_are_accepted_stored_processed_and_land(tmp_path):
    with_plan = databricks_run(PLAN_RUN, extra_run_facets={"spark.logicalPlan": logical_plan(SIZE)})[1]
    with_sql = databricks_run(SQL_RUN)[1]
    with_sql["job"]["facets"]["sql"] = {"_producer": PRODUCER, "query": "select * from raw.orders -- " + "x" * SIZE}
    plan_body, sql_body = json.dumps(with_plan).encode(), gzip.compress(json.dumps(with_sql).encode(), 1)
    assert len(plan_body) > SIZE and len(gzip.decompress(sql_body)) > SIZE
    serve = start_serve(tmp_path / "size", key="k", storage="azurite", worker=False)
    try:
        started = time.monotonic()
        plan_answer = requests.post(
            f"{serve.url}/api/v1/lineage",
            data=plan_body,
            timeout=120,
            headers={"x-functions-key": serve.key, "Content-Type": "application/json"},
        )
        sql_answer = requests.post(
            f"{serve.url}/api/v1/lineage",
            data=sql_body,
            timeout=120,
            headers={"x-functions-key": serve.key, "Content-Type": "application/json", "Content-Encoding": "gzip"},
        )
        acknowledged = time.monotonic() - started
        for answer, index in ((plan_answer, PLAN_RUN), (sql_answer, SQL_RUN)):
            assert (answer.status_code, answer.json()) == (
                200,
                {"runId": run_id_for(index), "eventType": "COMPLETE", "status": "accepted", "handoff": "queued"},
            )
        # Stored before the answer: one claim-check blob (the SQL event); the stripped plan event travels inline.
        (blob,) = blob_names(serve.storage_connection)
        assert blob.endswith(".json.gz")
        assert serve.status()["queues"]["lineage-events"]["approximateCount"] == 2
        worker = start_worker(serve, "azurite")
        started = time.monotonic()
        try:
            status = serve.wait_until_processed(timeout=120)
            processed = time.monotonic() - started
        finally:
            assert worker.stop() == 0
        dump = catalog_dump(serve.atlas_url)
    finally:
        assert serve.stop() == 0
    print(f"\n25 MB events: both acknowledged in {acknowledged:.1f} s, processed in {processed:.1f} s")
    assert status["queues"]["lineage-events"]["poisonCount"] == 0
    assert catalog_mismatches(dump, [PLAN_RUN, SQL_RUN]) == []
