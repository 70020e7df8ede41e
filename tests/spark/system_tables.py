"""Rows of Unity Catalog's lineage system tables with their documented schema (Databricks, "Lineage system tables
reference": system.access.table_lineage and system.access.column_lineage), written as Parquet by the test Spark."""
from __future__ import annotations

from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

ACCOUNT = "7af234db-66d7-4db3-bbf0-956098224879"
METASTORE = "5a31ba44-bbf4-4174-bf33-e1fa078e6765"
WORKSPACE = "1234567890123456"
HOST = f"adb-{WORKSPACE}.7.azuredatabricks.net"
LAKE = "abfss://lake@contosolake.dfs.core.windows.net"

_COMMON = """account_id STRING, metastore_id STRING, workspace_id STRING, entity_type STRING, entity_id STRING,
    entity_run_id STRING, source_table_full_name STRING, source_table_catalog STRING, source_table_schema STRING,
    source_table_name STRING, source_path STRING, source_type STRING, target_table_full_name STRING,
    target_table_catalog STRING, target_table_schema STRING, target_table_name STRING, target_path STRING,
    target_type STRING"""
_TAIL = """created_by STRING, event_time TIMESTAMP, event_date DATE, record_id STRING, event_id STRING,
    statement_id STRING, entity_metadata STRUCT<job_info: STRUCT<job_id: STRING, job_run_id: STRING>,
    dashboard_id: STRING, legacy_dashboard_id: STRING, notebook_id: STRING, sql_query_id: STRING,
    dlt_pipeline_info: STRUCT<dlt_pipeline_id: STRING, dlt_update_id: STRING>>"""
TABLE_LINEAGE_SCHEMA = f"{_COMMON}, {_TAIL}"
COLUMN_LINEAGE_SCHEMA = f"{_COMMON}, source_column_name STRING, target_column_name STRING, {_TAIL}"


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


def _side(prefix: str, table: str | None, path: str | None, kind: str | None) -> dict[str, Any]:
    parts = table.split(".") if table else [None, None, None]
    return {f"{prefix}_table_full_name": table, f"{prefix}_table_catalog": parts[0],
            f"{prefix}_table_schema": parts[1], f"{prefix}_table_name": parts[2], f"{prefix}_path": path,
            f"{prefix}_type": kind if kind else ("TABLE" if table else "PATH" if path else None)}


def row(time: str, *, entity: tuple[str | None, str | None, str | None], source: str | None = None,
        source_path: str | None = None, target: str | None = None, target_path: str | None = None,
        source_type: str | None = None, target_type: str | None = None, user: str = "ana@contoso.com",
        record: str, statement: str | None = None, notebook: str | None = None, job_run: str | None = None,
        pipeline_update: str | None = None, columns: tuple[str, str] | None = None,
        workspace: str = WORKSPACE) -> dict[str, Any]:
    """One row; `entity` is (entity_type, entity_id, entity_run_id); `columns` (source, target) for column_lineage."""
    entity_type, entity_id, entity_run_id = entity
    metadata = {"job_info": None, "dashboard_id": None, "legacy_dashboard_id": None, "notebook_id": notebook,
                "sql_query_id": entity_id if entity_type == "DBSQL_QUERY" else None, "dlt_pipeline_info": None}
    if entity_type == "JOB":
        metadata["job_info"] = {"job_id": entity_id, "job_run_id": job_run or entity_run_id}
    if entity_type == "PIPELINE":
        metadata["dlt_pipeline_info"] = {"dlt_pipeline_id": entity_id, "dlt_update_id": pipeline_update}
    moment = at(time)
    body = {"account_id": ACCOUNT, "metastore_id": METASTORE, "workspace_id": workspace, "entity_type": entity_type,
            "entity_id": entity_id, "entity_run_id": entity_run_id,
            **_side("source", source, source_path, source_type), **_side("target", target, target_path, target_type),
            "created_by": user, "event_time": moment, "event_date": date(moment.year, moment.month, moment.day),
            "record_id": record, "event_id": f"event-{record}", "statement_id": statement,
            "entity_metadata": metadata}
    if columns is not None:
        body["source_column_name"], body["target_column_name"] = columns
    return body


def write_parquet(spark: Any, rows: list[dict[str, Any]], folder: Path, *, columns: bool = False) -> Path:
    """The rows as a Parquet folder with the documented schema (appended when the folder exists)."""
    schema = COLUMN_LINEAGE_SCHEMA if columns else TABLE_LINEAGE_SCHEMA
    names = [field.split()[0] for field in _fields(schema)]
    frame = spark.createDataFrame([tuple(r.get(n) for n in names) for r in rows], schema=schema)
    frame.coalesce(1).write.mode("append").parquet(str(folder))
    return folder


def _fields(schema: str) -> list[str]:
    """Top-level `name TYPE` entries of a DDL schema string (commas inside <...> are not separators)."""
    fields, depth, current = [], 0, ""
    for char in schema:
        depth += char == "<"
        depth -= char == ">"
        if char == "," and depth == 0:
            fields.append(current.strip())
            current = ""
        else:
            current += char
    fields.append(current.strip())
    return fields
