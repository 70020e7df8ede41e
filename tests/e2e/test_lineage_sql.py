"""Column lineage from SQL on the live path: events with a `sql` job facet and no `columnLineage` go through
`ol2purview replay` (openlineage-python) into `ol2purview serve` (queue, worker, embedded catalog); the processes get
the column mappings the statements say, marked as derived (`columnLineageSource: sql`). A statement the parser cannot
read is written without columns, with one log line that carries no SQL."""

from __future__ import annotations

import json
import secrets
import uuid

import pytest

from tests.e2e.lineage_helpers import Atlas, refs, replay, write_events
from tests.support.shared_events import SHARED_OPENLINEAGE
from tools.functions_host.launcher import start_serve

pytestmark = pytest.mark.e2e

PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/spark"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
DATAPROC = SHARED_OPENLINEAGE / "sequences" / "compat-tests__spark_dataproc_simple_producer_test_complete"
CTAS_RUN = "019299c5-73cf-7069-a70f-74eb8070b577"
DATAPROC_APP = "spark://default/cl_i_test_application"
T1, T2 = "default.t1@dataproc-producer-test-m", "default.t2@dataproc-producer-test-m"
HIVE = "hive://metastore-prod:9083"
LAKE = "abfss://warehouse@contosolake.dfs.core.windows.net"
APP = "spark://etl/sales_app"


def the_real_ctas_without_its_column_lineage() -> list[dict]:
    events = []
    for number in range(1, 16):
        event = json.loads((DATAPROC / f"{number}.json").read_text())
        if event["run"]["runId"] == CTAS_RUN:
            for output in event.get("outputs") or ():
                (output.get("facets") or {}).pop("columnLineage", None)
            events.append(event)
    return events


def table(name: str, *columns: str) -> dict:
    return {
        "namespace": LAKE,
        "name": f"sales/{name.split('.')[1]}",
        "facets": {
            "symlinks": {
                "_producer": PRODUCER,
                "_schemaURL": f"{PRODUCER}#symlinks",
                "identifiers": [{"namespace": HIVE, "name": name, "type": "TABLE"}],
            },
            "schema": {
                "_producer": PRODUCER,
                "_schemaURL": f"{PRODUCER}#schema",
                "fields": [{"name": c, "type": "string"} for c in columns],
            },
        },
    }


def sql_run(number: int, query: str, inputs: list[dict], output: dict) -> list[dict]:
    """START (with the datasets) and COMPLETE of one SQL statement of the application `sales_app`."""
    run_id = str(uuid.UUID(int=7_000 + number))

    def event(event_type: str, second: int, with_datasets: bool) -> dict:
        body = {
            "eventType": event_type,
            "eventTime": f"2025-03-01T10:00:{second:02d}.000Z",
            "producer": PRODUCER,
            "schemaURL": SCHEMA_URL,
            "run": {
                "runId": run_id,
                "facets": {
                    "parent": {
                        "_producer": PRODUCER,
                        "_schemaURL": f"{PRODUCER}#parent",
                        "run": {"runId": str(uuid.UUID(int=9_999))},
                        "job": {"namespace": "etl", "name": "sales_app"},
                    }
                },
            },
            "job": {
                "namespace": "etl",
                "name": f"sales_app.statement_{number}",
                "facets": {"sql": {"_producer": PRODUCER, "_schemaURL": f"{PRODUCER}#sql", "query": query}},
            },
        }
        if with_datasets:
            body.update(inputs=inputs, outputs=[output])
        return body

    return [event("START", 1, True), event("COMPLETE", 9, False)]


SUMMARY = (
    "INSERT INTO sales.summary SELECT c.region, sum(o.amount) AS revenue, count(*) AS orders "
    "FROM sales.orders o JOIN sales.customers c ON o.customer_id = c.id GROUP BY c.region"
)
BROKEN = "INSERT INTO sales.broken SELEC amount FROM sales.orders"


def qn(name: str) -> str:
    return f"{name}@metastore-prod"


def test_serve_derives_column_lineage_from_sql_when_the_producer_sent_none(tmp_path):
    serve = start_serve(tmp_path / "serve", key=secrets.token_urlsafe(16))
    try:
        replay(serve, write_events(tmp_path / "ctas", *the_real_ctas_without_its_column_lineage()))
        replay(
            serve,
            write_events(
                tmp_path / "statements",
                *sql_run(
                    1,
                    SUMMARY,
                    [table("sales.orders", "customer_id", "amount"), table("sales.customers", "id", "region")],
                    table("sales.summary", "region", "revenue", "orders"),
                ),
                *sql_run(2, BROKEN, [table("sales.orders", "amount")], table("sales.broken", "amount")),
            ),
        )
        serve.wait_until_processed(timeout=120)
        atlas = Atlas(serve.atlas_url)
        found = {}
        for type_name, name in [
            ("spark_process", f"{DATAPROC_APP}/processes/execute_insert_into_hive_table.warehouse_t2/{T2}"),
            ("spark_process", f"{APP}/processes/statement_1/{qn('sales.summary')}"),
            ("spark_process", f"{APP}/processes/statement_2/{qn('sales.broken')}"),
        ]:
            process = atlas.entity(type_name, name)
            attributes = process["attributes"]
            found[name.rsplit("/", 1)[-1]] = (
                refs(process, "inputs"),
                json.loads(attributes["columnMapping"]),
                attributes["columnLineageSource"],
            )
    finally:
        assert serve.stop() == 0, serve.output()[-3000:]

    assert found == {
        T2: (
            [T1],
            [
                {
                    "DatasetMapping": {"Source": T1, "Sink": T2},
                    "ColumnMapping": [{"Source": "a", "Sink": "a"}, {"Source": "b", "Sink": "b"}],
                }
            ],
            "sql",
        ),
        qn("sales.summary"): (
            [qn("sales.customers"), qn("sales.orders")],
            [
                {
                    "DatasetMapping": {"Source": qn("sales.customers"), "Sink": qn("sales.summary")},
                    "ColumnMapping": [{"Source": "region", "Sink": "region"}],
                },
                {
                    "DatasetMapping": {"Source": qn("sales.orders"), "Sink": qn("sales.summary")},
                    "ColumnMapping": [{"Source": "amount", "Sink": "revenue"}],
                },
            ],
            "sql",
        ),
        qn("sales.broken"): ([qn("sales.orders")], [], ""),
    }
    lines = [line for line in serve.output().splitlines() if "column lineage from SQL" in line]
    assert len(lines) == 1 and lines[0].endswith(
        "column lineage from SQL: the spark SQL parser could not read the statement (line 1, column 26); the table "
        "lineage is written without columns"
    )
    assert "SELEC" not in lines[0]
