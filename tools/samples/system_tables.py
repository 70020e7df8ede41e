"""Rows of Unity Catalog's lineage system tables with their documented schema (Databricks, "Lineage system tables
reference": system.access.table_lineage and system.access.column_lineage): written as Parquet by a Spark (the tests),
or as JSON lines without one (`ol2purview demo`), which `ol2purview spark system-lineage` reads the same way."""

from __future__ import annotations

import json
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

from ..spark.system_rows import COLUMN_LINEAGE_SCHEMA, TABLE_LINEAGE_SCHEMA

ACCOUNT = "7af234db-66d7-4db3-bbf0-956098224879"
METASTORE = "5a31ba44-bbf4-4174-bf33-e1fa078e6765"
WORKSPACE = "1234567890123456"
HOST = f"adb-{WORKSPACE}.7.azuredatabricks.net"
LAKE = "abfss://lake@contosolake.dfs.core.windows.net"


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


def _side(prefix: str, table: str | None, path: str | None, kind: str | None) -> dict[str, Any]:
    parts = table.split(".") if table else [None, None, None]
    return {
        f"{prefix}_table_full_name": table,
        f"{prefix}_table_catalog": parts[0],
        f"{prefix}_table_schema": parts[1],
        f"{prefix}_table_name": parts[2],
        f"{prefix}_path": path,
        f"{prefix}_type": kind if kind else ("TABLE" if table else "PATH" if path else None),
    }


def row(
    time: str,
    *,
    entity: tuple[str | None, str | None, str | None],
    source: str | None = None,
    source_path: str | None = None,
    target: str | None = None,
    target_path: str | None = None,
    source_type: str | None = None,
    target_type: str | None = None,
    user: str = "ana@contoso.com",
    record: str,
    statement: str | None = None,
    notebook: str | None = None,
    job_run: str | None = None,
    pipeline_update: str | None = None,
    columns: tuple[str, str] | None = None,
    workspace: str = WORKSPACE,
) -> dict[str, Any]:
    """One row; `entity` is (entity_type, entity_id, entity_run_id); `columns` (source, target) for column_lineage."""
    entity_type, entity_id, entity_run_id = entity
    metadata: dict[str, Any] = {
        "job_info": None,
        "dashboard_id": None,
        "legacy_dashboard_id": None,
        "notebook_id": notebook,
        "sql_query_id": entity_id if entity_type == "DBSQL_QUERY" else None,
        "dlt_pipeline_info": None,
    }
    if entity_type == "JOB":
        metadata["job_info"] = {"job_id": entity_id, "job_run_id": job_run or entity_run_id}
    if entity_type == "PIPELINE":
        metadata["dlt_pipeline_info"] = {"dlt_pipeline_id": entity_id, "dlt_update_id": pipeline_update}
    moment = at(time)
    body = {
        "account_id": ACCOUNT,
        "metastore_id": METASTORE,
        "workspace_id": workspace,
        "entity_type": entity_type,
        "entity_id": entity_id,
        "entity_run_id": entity_run_id,
        **_side("source", source, source_path, source_type),
        **_side("target", target, target_path, target_type),
        "created_by": user,
        "event_time": moment,
        "event_date": date(moment.year, moment.month, moment.day),
        "record_id": record,
        "event_id": f"event-{record}",
        "statement_id": statement,
        "entity_metadata": metadata,
    }
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


def write_json_lines(rows: list[dict[str, Any]], folder: Path) -> Path:
    """The rows as one JSON-lines file in `folder` (times as ISO 8601 in UTC, as Spark writes them)."""
    folder.mkdir(parents=True, exist_ok=True)

    def plain(value: Any) -> Any:
        if isinstance(value, datetime):
            return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        if isinstance(value, date):
            return value.isoformat()
        if isinstance(value, dict):
            return {key: plain(item) for key, item in value.items()}
        return value

    path = folder / "part-00000.json"
    path.write_text("".join(json.dumps(plain(row), sort_keys=True) + "\n" for row in rows), encoding="utf-8")
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
