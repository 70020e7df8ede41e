"""A week of one notebook job, for the run-history tests (unit, endpoint, CLI, Spark, page): the same events and the
same hand-written expectations everywhere.

The orders job (notebook /Repos/etl/orders) writes curated orders every morning at 08:00 UTC:
  Mon 2026-03-02 r1  reads raw orders                      COMPLETE
  Tue 2026-03-03 r2  reads raw orders + raw customers      COMPLETE   (customers added)
  Wed 2026-03-04 r3  reads raw orders + raw customers      FAIL
  Thu 2026-03-05 r4  reads raw orders                      COMPLETE   (customers dropped)
  Fri 2026-03-06 r5  reads raw orders                      START and RUNNING only: never completes (INCOMPLETE)
The revenue job (notebook /Repos/etl/revenue) reads curated orders and writes gold revenue on Tue (r6) and Thu (r7)
at 09:00. Each run: START at :00, RUNNING (with the Databricks environment) at :01, COMPLETE (or FAIL) at :02,
column lineage on the terminal event.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from tests.support import databricks_runs as dr

LAKE = "https://contosolake.dfs.core.windows.net"
ORDERS, CUSTOMERS = f"{LAKE}/raw/orders", f"{LAKE}/raw/customers"
CURATED, GOLD = f"{LAKE}/curated/orders", f"{LAKE}/gold/revenue"
WORKSPACE = f"databricks://{dr.HOST}"
ORDERS_JOB = (
    f"{WORKSPACE}/notebooks/Repos/etl/orders/processes/execute_insert_into_hadoop_fs_relation_command.orders/{CURATED}"
)
REVENUE_JOB = (
    f"{WORKSPACE}/notebooks/Repos/etl/revenue/processes/execute_insert_into_hadoop_fs_relation_command.revenue/{GOLD}"
)
NAMES = {
    ORDERS: "ORDERS",
    CUSTOMERS: "CUSTOMERS",
    CURATED: "CURATED",
    GOLD: "GOLD",
    ORDERS_JOB: "ORDERS_JOB",
    REVENUE_JOB: "REVENUE_JOB",
}
MONDAY = datetime(2026, 3, 2, tzinfo=timezone.utc)
RUNS = {f"r{n}": dr.run_id(n) for n in range(1, 8)}
NUMBERS = {run_id: name for name, run_id in RUNS.items()}


def _day(offset: int, hour: int = 8) -> datetime:
    return MONDAY + timedelta(days=offset, hours=hour)


def iso(offset_days: int, hour: int = 0) -> str:
    return _day(offset_days, hour).strftime("%Y-%m-%dT%H:%M:%SZ")


def _orders(number: int, offset: int, inputs: tuple[dr.Dataset, ...]) -> dr.NotebookRun:
    return dr.orders_run(number, _day(offset), inputs=inputs)


def _revenue(number: int, offset: int) -> dr.NotebookRun:
    return dr.NotebookRun(
        run_id=dr.run_id(number),
        started=_day(offset, 9),
        statement="execute_insert_into_hadoop_fs_relation_command.revenue",
        inputs=(dr.CURATED_ORDERS,),
        output=dr.GOLD_REVENUE,
        notebook="/Repos/etl/revenue",
        column_lineage=(dr.ColumnEdge("amount", 0, "amount", "DIRECT", "AGGREGATION"),),
    )


def week_events() -> list[dict[str, Any]]:
    """Every event of the week, in emission order."""
    both = (dr.RAW_ORDERS, dr.RAW_CUSTOMERS)
    failed = dr.events(_orders(3, 2, both))
    failed[-1]["eventType"] = "FAIL"
    runs = [
        dr.events(_orders(1, 0, (dr.RAW_ORDERS,))),
        dr.events(_orders(2, 1, both)),
        dr.events(_revenue(6, 1)),
        failed,
        dr.events(_orders(4, 3, (dr.RAW_ORDERS,))),
        dr.events(_revenue(7, 3)),
        dr.events(_orders(5, 4, (dr.RAW_ORDERS,)))[:2],
    ]
    return sorted((e for run in runs for e in run), key=lambda e: e["eventTime"])


# --- windows and what they hold (hand-written) ----------------------------------------------------------------------
TUESDAY = (iso(1), iso(2))
WEDNESDAY = (iso(2), iso(3))
THURSDAY = (iso(3), iso(4))
WEEK = (iso(0), iso(5))
SATURDAY = (iso(5), iso(6))


def view(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer of GET /lineage with short names: datasets by distance, processes with their runs (newest first,
    with status), edges with their runs."""

    def name(qualified_name: str) -> str:
        return NAMES.get(qualified_name, qualified_name)

    return {
        "datasets": {name(d["qualifiedName"]): d["distance"] for d in answer["datasets"]},
        "processes": {
            name(p["qualifiedName"]): [(NUMBERS.get(r["runId"], r["runId"]), r["status"]) for r in p["runs"]]
            for p in answer["processes"]
        },
        "edges": {
            (name(e["from"]), name(e["to"]), e["kind"]): [NUMBERS.get(r, r) for r in e["runs"]] for e in answer["edges"]
        },
    }


UPSTREAM_OF_CURATED = {  # direction upstream, depth 1, per window
    TUESDAY: {
        "datasets": {"ORDERS": -1, "CUSTOMERS": -1, "CURATED": 0},
        "processes": {"ORDERS_JOB": [("r2", "COMPLETE")]},
        "edges": {
            ("ORDERS", "ORDERS_JOB", "read"): ["r2"],
            ("CUSTOMERS", "ORDERS_JOB", "read"): ["r2"],
            ("ORDERS_JOB", "CURATED", "write"): ["r2"],
        },
    },
    WEDNESDAY: {
        "datasets": {"ORDERS": -1, "CUSTOMERS": -1, "CURATED": 0},
        "processes": {"ORDERS_JOB": [("r3", "FAIL")]},
        "edges": {
            ("ORDERS", "ORDERS_JOB", "read"): ["r3"],
            ("CUSTOMERS", "ORDERS_JOB", "read"): ["r3"],
            ("ORDERS_JOB", "CURATED", "write"): ["r3"],
        },
    },
    THURSDAY: {
        "datasets": {"ORDERS": -1, "CURATED": 0},
        "processes": {"ORDERS_JOB": [("r4", "COMPLETE")]},
        "edges": {("ORDERS", "ORDERS_JOB", "read"): ["r4"], ("ORDERS_JOB", "CURATED", "write"): ["r4"]},
    },
    WEEK: {
        "datasets": {"ORDERS": -1, "CUSTOMERS": -1, "CURATED": 0},
        "processes": {
            "ORDERS_JOB": [
                ("r5", "INCOMPLETE"),
                ("r4", "COMPLETE"),
                ("r3", "FAIL"),
                ("r2", "COMPLETE"),
                ("r1", "COMPLETE"),
            ]
        },
        "edges": {
            ("ORDERS", "ORDERS_JOB", "read"): ["r5", "r4", "r3", "r2", "r1"],
            ("CUSTOMERS", "ORDERS_JOB", "read"): ["r3", "r2"],
            ("ORDERS_JOB", "CURATED", "write"): ["r5", "r4", "r3", "r2", "r1"],
        },
    },
    SATURDAY: {
        "datasets": {"ORDERS": -1, "CURATED": 0},  # r5 never ended: it may still be running
        "processes": {"ORDERS_JOB": [("r5", "INCOMPLETE")]},
        "edges": {("ORDERS", "ORDERS_JOB", "read"): ["r5"], ("ORDERS_JOB", "CURATED", "write"): ["r5"]},
    },
}

DOWNSTREAM_OF_CUSTOMERS_WEEK = {  # direction downstream, depth 2: only the runs that read customers, then on
    "datasets": {"CUSTOMERS": 0, "CURATED": 1, "GOLD": 2},
    "processes": {
        "ORDERS_JOB": [
            ("r5", "INCOMPLETE"),
            ("r4", "COMPLETE"),
            ("r3", "FAIL"),
            ("r2", "COMPLETE"),
            ("r1", "COMPLETE"),
        ],
        "REVENUE_JOB": [("r7", "COMPLETE"), ("r6", "COMPLETE")],
    },
    "edges": {
        ("CUSTOMERS", "ORDERS_JOB", "read"): ["r3", "r2"],
        ("ORDERS_JOB", "CURATED", "write"): ["r3", "r2"],
        ("CURATED", "REVENUE_JOB", "read"): ["r7", "r6"],
        ("REVENUE_JOB", "GOLD", "write"): ["r7", "r6"],
    },
}

BOTH_OF_CURATED_THURSDAY = {  # direction both, depth 1
    "datasets": {"ORDERS": -1, "CURATED": 0, "GOLD": 1},
    "processes": {"ORDERS_JOB": [("r4", "COMPLETE")], "REVENUE_JOB": [("r7", "COMPLETE")]},
    "edges": {
        ("ORDERS", "ORDERS_JOB", "read"): ["r4"],
        ("ORDERS_JOB", "CURATED", "write"): ["r4"],
        ("CURATED", "REVENUE_JOB", "read"): ["r7"],
        ("REVENUE_JOB", "GOLD", "write"): ["r7"],
    },
}


def column_view(answer: dict[str, Any]) -> list[tuple]:
    """The column edges of an answer with `column`: (from, to, process, label, runs)."""

    def name(qualified_name: str) -> str:
        return NAMES.get(qualified_name, qualified_name)

    return [
        (
            f"{name(e['from']['dataset'])}.{e['from']['column']}",
            f"{name(e['to']['dataset'])}.{e['to']['column']}",
            name(e["process"]),
            e["label"],
            [NUMBERS.get(r, r) for r in e["runs"]],
        )
        for e in answer["columnEdges"]
    ]


# upstream of gold revenue's `amount` over the week, depth 2: r5's only terminal-less events carry no column lineage
AMOUNT_OF_GOLD_WEEK = [
    ("CURATED.amount", "GOLD.amount", "REVENUE_JOB", "AGGREGATION", ["r7", "r6"]),
    ("ORDERS.amount", "CURATED.amount", "ORDERS_JOB", "IDENTITY", ["r4", "r3", "r2", "r1"]),
]
NAME_OF_CURATED_TUESDAY = [("CUSTOMERS.name", "CURATED.name", "ORDERS_JOB", "IDENTITY", ["r2"])]
