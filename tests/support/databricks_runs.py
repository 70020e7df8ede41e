"""The tests' Databricks notebook runs: named datasets and the orders run most scenarios use, built with the one
builder of Databricks runs (`tools/samples/databricks.py`, which the benchmarks use too)."""

from __future__ import annotations

from datetime import datetime, timedelta  # noqa: F401  (tests shift run times with dr.timedelta)

from tools.samples.databricks import (  # noqa: F401
    HOST,
    JOB_NAMESPACE,
    LAKE_ACCOUNT,
    MOUNTS,
    PRODUCER,
    SCHEMA_URL,
    T0,
    WORKSPACE_ID,
    ColumnEdge,
    Dataset,
    NotebookRun,
    events,
    run_id,
)

RAW_ORDERS = Dataset("dbfs", "/mnt/raw/orders")
RAW_CUSTOMERS = Dataset("dbfs", "/mnt/raw/customers", ("id", "name"))
KAFKA_PAYMENTS = Dataset("kafka://broker.contoso.com:9092", "payments", ("id", "amount"))
CURATED_ORDERS = Dataset("dbfs", "/mnt/curated/orders", ("id", "amount", "name"))
GOLD_REVENUE = Dataset("dbfs", "/mnt/curated/gold/revenue", ("amount",))


def orders_run(
    number: int,
    started: datetime = T0,
    *,
    inputs: tuple[Dataset, ...] = (RAW_ORDERS, RAW_CUSTOMERS),
    statement: str = "execute_insert_into_hadoop_fs_relation_command.orders",
    running: bool = True,
) -> NotebookRun:
    """raw orders (+ customers) → curated orders, with column lineage from whichever inputs it reads."""
    edges = []
    for index, dataset in enumerate(inputs):
        for column in dataset.columns:
            if column in CURATED_ORDERS.columns:
                edges.append(ColumnEdge(column, index, column))
    return NotebookRun(
        run_id=run_id(number),
        started=started,
        statement=statement,
        inputs=inputs,
        output=CURATED_ORDERS,
        column_lineage=tuple(edges),
        running=running,
    )
