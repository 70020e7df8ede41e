"""Unity Catalog's lineage system tables as OpenLineage runs: pure functions over rows, the same on every executor.

The rows are those of `system.access.table_lineage` and `system.access.column_lineage` (Databricks, "Lineage system
tables reference"): one row per read or write of a table or path, with `workspace_id`, `metastore_id`,
`entity_type` (NOTEBOOK, JOB, PIPELINE, DASHBOARD_V3, DBSQL_DASHBOARD, DBSQL_QUERY or NULL), `entity_id`,
`entity_run_id`, `source_table_full_name`/`source_path`/`source_type` (TABLE, VIEW, PATH, STREAMING_TABLE,
MATERIALIZED_VIEW...), the same for `target_*`, `created_by`, `event_time`, `statement_id`, `event_id`, `record_id`,
`entity_metadata` (job_info {job_id, job_run_id}, notebook_id, dlt_pipeline_info {dlt_pipeline_id, dlt_update_id},
sql_query_id, dashboard_id...) and, in column_lineage, `source_column_name`/`target_column_name`.

- **Groups.** Rows are grouped by what ran them: (workspace, entity_type, entity_id, entity_run_id, the notebook of a
  job's task, statement_id); a row with neither an entity nor a statement id is grouped by its `event_id` (else its
  `record_id`). A row pairs a source with a target, so each target of a group is one run: its inputs are the sources
  of its rows, its column lineage the group's column rows into it. A notebook run without statement ids that writes
  `t` from `a` and `u` from `b` gives `t <- a` and `u <- b`, not both from both. Rows with no target (reads,
  dashboards) make no run.
- **Datasets.** A Unity Catalog table is its storage location (`source_path`, as openlineage-spark 1.51+ names it)
  with the `unity-catalog` symlink `catalog.schema.table`, so the builder names it as the live path does (the
  `databricks_table` of the row's metastore, DATABRICKS_METASTORE_IDS); a table without a location (a view) is the
  symlink's identity itself; a PATH is its location, through the mapping rules like any OpenLineage dataset.
- **Owners.** The run's `environment-properties` facet says what a Databricks cluster would: the workspace host and
  id, the user (`created_by`), the notebook id, the job and its run (with the notebook of a notebook task), or the
  Delta Live Tables pipeline (`olparser/lineage/owners.py`). SQL queries, dashboards and rows without an entity belong
  to a Spark application per entity (`dbsql_query_<id>`...).
- **Process identity.** The job is `unity_catalog_lineage.<target>` (`<application>.<target>` under an
  application), the target being the table's three-part name or the path: one process per (owner, target), whatever
  statement or run wrote it, so a re-run replaces its inputs.
- **Time.** A run's time is its newest row's `event_time`. `in_window` decides which runs a time window owns: the
  runs whose newest row is in [since, until). Each window writes exactly the runs it owns, with all their rows.
"""

from __future__ import annotations

import json
import uuid
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterable, Iterator, Mapping

from olparser.lineage.datasets import UNITY_CATALOG_NAMESPACE
from olparser.lineage.owners import NOTEBOOK_ID_KEY, PIPELINE_ID_KEY
from olparser.naming.mounts import location_dataset
from olparser.resolution.unity_catalog import split_three_part_name

PRODUCER = "urn:ol2purview:spark-system-lineage"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
FACET_PRODUCER = {"_producer": PRODUCER}
JOB_PREFIX = "unity_catalog_lineage"
RUN_NAMESPACE = uuid.UUID("6f1b0a3e-6b1f-5c1a-9a7e-0c0ffee0c0de")  # run ids: uuid5 of the run's key in this space
OWNED_ENTITY_TYPES = ("NOTEBOOK", "JOB", "PIPELINE")
TABLE_ROWS, COLUMN_ROWS = "table", "column"
DATASETS_PER_EVENT = 500  # inputs per event; a run with more is sent as several events the merger unions

# The tables' documented schema (Databricks, "Lineage system tables reference"), as a Spark DDL string: what a JSON
# copy of the rows is read with (a Delta or Parquet copy carries its own).
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

# The row as the Spark job selects it (event_time as Unix seconds; entity_metadata's ids already extracted).
ROW_FIELDS = (
    "kind",
    "workspace_id",
    "metastore_id",
    "entity_type",
    "entity_id",
    "entity_run_id",
    "statement_id",
    "event_id",
    "record_id",
    "source_table_full_name",
    "source_path",
    "source_type",
    "target_table_full_name",
    "target_path",
    "target_type",
    "source_column_name",
    "target_column_name",
    "created_by",
    "event_time",
    "job_id",
    "job_run_id",
    "notebook_id",
    "pipeline_id",
)


@dataclass(frozen=True)
class LineageRow:
    """One row of either system table (column rows carry column names)."""

    kind: str
    workspace_id: str | None
    metastore_id: str | None
    entity_type: str | None
    entity_id: str | None
    entity_run_id: str | None
    statement_id: str | None
    event_id: str | None
    record_id: str | None
    source_table_full_name: str | None
    source_path: str | None
    source_type: str | None
    target_table_full_name: str | None
    target_path: str | None
    target_type: str | None
    source_column_name: str | None
    target_column_name: str | None
    created_by: str | None
    event_time: float | None
    job_id: str | None = None
    job_run_id: str | None = None
    notebook_id: str | None = None
    pipeline_id: str | None = None

    @classmethod
    def of(cls, values: Iterable[Any]) -> "LineageRow":
        """From the Spark row (ROW_FIELDS order): ids as text, empty text as None."""
        return cls(*cleaned(values))


def cleaned(values: Iterable[Any]) -> tuple[Any, ...]:
    """A Spark row's values (ROW_FIELDS order) as LineageRow takes them: ids as text, empty text as None."""
    return tuple(
        _text(v) if name != "event_time" else (float(v) if v is not None else None)
        for name, v in zip(ROW_FIELDS, values, strict=False)
    )


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


GroupKey = tuple[str | None, ...]


def group_key(row: LineageRow) -> GroupKey:
    """What ran the row: (workspace, entity type, entity id, entity run, the job task's notebook, statement)."""
    statement = row.statement_id
    if statement is None and row.entity_type is None:
        statement = f"event:{row.event_id}" if row.event_id else f"record:{row.record_id}"
    notebook = row.notebook_id if row.entity_type == "JOB" else None
    return (row.workspace_id, row.entity_type, row.entity_id, row.entity_run_id, notebook, statement)


@dataclass(frozen=True)
class Dataset:
    """An OpenLineage dataset: (namespace, name) and the Unity Catalog table it is, when it is one."""

    namespace: str
    name: str
    table: str | None = None  # catalog.schema.table (lower case)

    @property
    def key(self) -> tuple[str, str]:
        return self.namespace, self.name

    def label(self) -> str:
        return self.table or (f"{self.namespace}/{self.name}" if self.name else self.namespace)

    def to_json(self, facets: Mapping[str, Any] | None = None) -> dict[str, Any]:
        all_facets: dict[str, Any] = {}
        if self.table and (self.namespace, self.name) != (UNITY_CATALOG_NAMESPACE, self.table):
            all_facets["symlinks"] = {
                **FACET_PRODUCER,
                "identifiers": [{"namespace": UNITY_CATALOG_NAMESPACE, "name": self.table, "type": "TABLE"}],
            }
        all_facets.update(facets or {})
        body: dict[str, Any] = {"namespace": self.namespace, "name": self.name}
        if all_facets:
            body["facets"] = all_facets
        return body


def row_dataset(full_name: str | None, path: str | None) -> Dataset | None:
    """The dataset a row's source or target is: a table at its location with its `unity-catalog` symlink, a table
    without a location as that symlink's identity, or a path; None when the row names neither."""
    parts = split_three_part_name(full_name) if full_name else None
    table = ".".join(parts).lower() if parts else None
    if path:
        namespace, name = location_dataset(path)
        return Dataset(namespace, name, table)
    if table:
        return Dataset(UNITY_CATALOG_NAMESPACE, table, table)
    return None


def source_of(row: LineageRow) -> Dataset | None:
    return row_dataset(row.source_table_full_name, row.source_path)


def target_of(row: LineageRow) -> Dataset | None:
    return row_dataset(row.target_table_full_name, row.target_path)


def in_window(instant: float, since: float | None, until: float | None) -> bool:
    """Whether a run whose newest row is at `instant` belongs to the window [since, until)."""
    return (since is None or instant >= since) and (until is None or instant < until)


def iso_time(instant: float) -> str:
    """Unix seconds as an ISO 8601 UTC eventTime with milliseconds."""
    moment = datetime.fromtimestamp(instant, timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@dataclass(frozen=True)
class GroupOutcome:
    """What one group gave: runs as (run id, events), and counts of what it did not make runs of."""

    runs: tuple[tuple[str, tuple[dict[str, Any], ...]], ...]
    counts: Mapping[str, int]


NO_TARGET = "rows without a target (reads, dashboards): nothing to write"
NO_DATASET = "rows naming no table and no path"
NO_HOST = "rows of workspace {} skipped: its host is unknown (--workspace {}=HOST)"
OUTSIDE_WINDOW = "runs outside the time range (written by another window)"


def group_runs(
    key: GroupKey,
    group: Iterable[LineageRow | tuple[Any, ...]],
    hosts: Mapping[str, str],
    since: float | None,
    until: float | None,
) -> GroupOutcome:
    """The runs of one group that the window [since, until) owns, as OpenLineage RunEvents (one COMPLETE per run, or
    several when it has more than DATASETS_PER_EVENT inputs). Rows are LineageRows or their `cleaned` values."""
    rows = sorted(
        (r if isinstance(r, LineageRow) else LineageRow(*r) for r in group), key=_row_order
    )  # groupByKey gives a group's rows in any order
    counts: dict[str, int] = defaultdict(int)
    workspace = key[0]
    host = hosts.get(workspace or "")
    if host is None:
        counts[NO_HOST.format(workspace, workspace)] += len(rows)
        return GroupOutcome((), counts)
    by_target: dict[tuple[str, str], list[LineageRow]] = defaultdict(list)
    targets: dict[tuple[str, str], Dataset] = {}
    for row in rows:
        target = target_of(row)
        if target is None:
            counts[NO_DATASET if source_of(row) is None else NO_TARGET] += 1
            continue
        by_target[target.key].append(row)
        targets[target.key] = target
    runs = []
    for target_key in sorted(by_target):
        target_rows = by_target[target_key]
        newest = max((r.event_time for r in target_rows if r.event_time is not None), default=None)
        if newest is None or not in_window(newest, since, until):
            counts[OUTSIDE_WINDOW] += 1
            continue
        run_id = str(uuid.uuid5(RUN_NAMESPACE, json.dumps([*key, *target_key])))
        runs.append((run_id, _events(run_id, key, host, targets[target_key], target_rows, newest)))
    return GroupOutcome(tuple(runs), counts)


def _row_order(row: LineageRow) -> tuple[Any, ...]:
    return (
        row.event_time or 0.0,
        row.record_id or "",
        row.kind,
        row.source_path or "",
        row.source_table_full_name or "",
        row.source_column_name or "",
        row.target_column_name or "",
    )


def _events(
    run_id: str, key: GroupKey, host: str, target: Dataset, rows: list[LineageRow], newest: float
) -> tuple[dict[str, Any], ...]:
    inputs: dict[tuple[str, str], Dataset] = {}
    columns: dict[str, dict[tuple[str, str, str], None]] = defaultdict(dict)
    for row in rows:
        source = source_of(row)
        if source is None:
            continue
        inputs.setdefault(source.key, source)
        if row.kind == COLUMN_ROWS and row.source_column_name and row.target_column_name:
            columns[row.target_column_name][(source.namespace, source.name, row.source_column_name)] = None
    output_facets = (
        {
            "columnLineage": {
                **FACET_PRODUCER,
                "fields": {
                    column: {
                        "inputFields": [
                            {"namespace": ns, "name": name, "field": field} for ns, name, field in sorted(fields)
                        ]
                    }
                    for column, fields in sorted(columns.items())
                },
            }
        }
        if columns
        else None
    )
    ordered = [inputs[k] for k in sorted(inputs)]
    chunks = [ordered[i : i + DATASETS_PER_EVENT] for i in range(0, len(ordered), DATASETS_PER_EVENT)] or [[]]
    first = rows[0]
    run_facets = _run_facets(key, host, rows, first)
    job = {"namespace": f"databricks://{host}", "name": f"{_application(key) or JOB_PREFIX}.{target.label()}"}
    return tuple(
        {
            "eventType": "COMPLETE",
            "eventTime": iso_time(newest),
            "producer": PRODUCER,
            "schemaURL": SCHEMA_URL,
            "run": {"runId": run_id, "facets": run_facets},
            "job": job,
            "inputs": [d.to_json() for d in chunk],
            "outputs": [target.to_json(output_facets if number == 0 else None)],
        }
        for number, chunk in enumerate(chunks)
    )


def _run_facets(key: GroupKey, host: str, rows: list[LineageRow], first: LineageRow) -> dict[str, Any]:
    workspace, entity_type, entity_id, entity_run_id = key[0], key[1], key[2], key[3]
    users = sorted({r.created_by for r in rows if r.created_by})
    environment: dict[str, Any] = {
        "spark.databricks.workspaceUrl": host,
        "spark.databricks.clusterUsageTags.clusterOwnerOrgId": workspace,
    }
    if users:
        environment["user"] = ", ".join(users)
    notebook = key[4] or first.notebook_id
    if entity_type == "NOTEBOOK":
        environment[NOTEBOOK_ID_KEY] = entity_id or notebook
    elif entity_type == "JOB":
        environment["spark.databricks.job.id"] = entity_id or first.job_id
        environment["spark.databricks.job.runId"] = entity_run_id or first.job_run_id
        if notebook:
            environment[NOTEBOOK_ID_KEY] = notebook
            environment["spark.databricks.job.type"] = "notebook"
    elif entity_type == "PIPELINE":
        environment[PIPELINE_ID_KEY] = entity_id or first.pipeline_id
    facets: dict[str, Any] = {
        "environment-properties": {
            **FACET_PRODUCER,
            "environment-properties": {k: v for k, v in environment.items() if v},
        }
    }
    application = _application(key)
    if application:
        facets["parent"] = {
            **FACET_PRODUCER,
            "run": {
                "runId": str(uuid.uuid5(RUN_NAMESPACE, json.dumps([workspace, entity_type, entity_id, entity_run_id])))
            },
            "job": {"namespace": f"databricks://{host}", "name": application},
        }
    return facets


def _application(key: GroupKey) -> str | None:
    """The Spark application that owns the runs of an entity that is no notebook, job or pipeline (a SQL query, a
    dashboard: `dbsql_query_<id>`; rows without an entity: `unattributed`); None for the others."""
    entity_type, entity_id = key[1], key[2]
    if entity_type in OWNED_ENTITY_TYPES:
        return None
    return f"{entity_type.lower()}_{entity_id}" if entity_type and entity_id else "unattributed"


def keyed_rows(values: Iterable[Iterable[Any]]) -> Iterator[tuple[GroupKey, tuple[Any, ...]]]:
    """(group key, the row's `cleaned` values: plain tuples cross a shuffle fastest) for every row."""
    for value in values:
        row = cleaned(value)
        yield group_key(LineageRow(*row)), row
