"""Runs that write, drop and rename tables (the lifecycle tests, live and on Spark)."""

from __future__ import annotations

import uuid
from typing import Any

PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.26.0/integration/spark"


LAKE = "abfss://curated@contosolake.dfs.core.windows.net"


def table(
    namespace: str,
    name: str,
    change: str | None = None,
    previous: tuple[str, str] | None = None,
    symlink: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """A dataset as openlineage-spark's DDL visitors send it (shared/openlineage/events/
    container__pysparkDropTableEvent.json, container__pysparkAlterTableRenameEnd.json: the location, a TABLE symlink,
    `lifecycleStateChange` with `previousIdentifier` for RENAME)."""
    facets: dict[str, Any] = {}
    if symlink:
        facets["symlinks"] = {"identifiers": [{"namespace": symlink[0], "name": symlink[1], "type": "TABLE"}]}
    if change:
        facets["lifecycleStateChange"] = {"lifecycleStateChange": change}
        if previous:
            facets["lifecycleStateChange"]["previousIdentifier"] = {"namespace": previous[0], "name": previous[1]}
    return {"namespace": namespace, "name": name, "facets": facets}


def run_event(run: str, job: str, inputs: list, outputs: list, at: str = "2026-09-23T10:00:00Z") -> dict[str, Any]:
    return {
        "eventType": "COMPLETE",
        "eventTime": at,
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": str(uuid.uuid5(uuid.NAMESPACE_URL, run))},
        "job": {"namespace": "etl", "name": job},
        "inputs": inputs,
        "outputs": outputs,
    }


# DropTableCommandVisitor: the dropped table as the only output, no input; job `{app}.execute_drop_table_command.{t}`
def drop(run: str, dataset: dict[str, Any], at: str = "2026-09-23T11:00:00Z") -> dict[str, Any]:
    name = dataset["name"].rsplit("/", 1)[-1]
    return run_event(
        run,
        f"app.execute_drop_table_command.{name}",
        [],
        [{**dataset, "facets": {**dataset["facets"], "lifecycleStateChange": {"lifecycleStateChange": "DROP"}}}],
        at,
    )


def write(run: str, output: dict[str, Any], at: str = "2026-09-23T10:00:00Z") -> dict[str, Any]:
    return run_event(
        run, "app.execute_insert_into_hadoop_fs_relation_command.t", [table(LAKE, "raw/orders")], [output], at
    )


NOW = 1_800_000_000.0


def lifecycle_pipeline(store: Any, engine: Any, catalog: Any) -> Any:
    """The runner of the lifecycle tests: nothing waits for the environment, the clock stands at NOW."""
    from olparser.lineage import LineageOptions
    from olparser.pipeline import LineagePipeline, WritePolicy

    return LineagePipeline(
        store, engine, LineageOptions(), catalog, WritePolicy(environment_wait_seconds=0), clock=lambda: NOW
    )
