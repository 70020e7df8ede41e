"""Quirks of real producers, as the builder sees them after merging (the naming and intake quirks — `jdbc:`
namespaces, leading slashes, OneLake, commas, unresolvable schema URLs — are tested in tests/unit/naming and
tests/unit/contract)."""

from __future__ import annotations

from olparser.lineage import LineageOptions, awaits_environment, build_lineage
from olparser.naming import MappingEngine
from olparser.runs.merge import merge_events
from tests.support.rules import MAPPINGS_PATH

ENGINE = MappingEngine.from_path(MAPPINGS_PATH)
LAKE = "abfss://raw@contosolake.dfs.core.windows.net"


def _event(**overrides) -> dict:
    event = {
        "eventType": "COMPLETE",
        "eventTime": "2026-01-01T00:00:00Z",
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.30.0/integration/spark",  # Synapse Spark
        "schemaURL": "s",
        "run": {"runId": "0190f000-0000-7000-8000-00000000fe01"},
        "job": {"namespace": "synapse-ws", "name": "load.insert"},
        "inputs": [],
        "outputs": [{"namespace": LAKE, "name": "out"}],
    }
    event.update(overrides)
    return event


def _inputs(plan) -> list[str]:
    (process,) = [e for e in plan.entities if e["typeName"].endswith("_process")]
    return [ref["uniqueAttributes"]["qualifiedName"] for ref in process["attributes"]["inputs"]]


def test_an_input_listed_several_times_in_one_event_is_one_input():
    orders = {"namespace": LAKE, "name": "orders"}
    run = merge_events([_event(inputs=[orders, dict(orders), {**orders, "facets": {}}])])
    assert _inputs(build_lineage(run, ENGINE, LineageOptions())) == [
        "https://contosolake.dfs.core.windows.net/raw/orders"
    ]


def test_the_same_dataset_with_and_without_a_leading_slash_is_one_input():
    run = merge_events([_event(inputs=[{"namespace": LAKE, "name": "orders"}, {"namespace": LAKE, "name": "/orders"}])])
    assert _inputs(build_lineage(run, ENGINE, LineageOptions())) == [
        "https://contosolake.dfs.core.windows.net/raw/orders"
    ]


def test_an_empty_environment_facet_is_no_databricks_run_and_is_not_held():
    empty = {"environment-properties": {"_producer": "p", "_schemaURL": "file:/x", "environment-properties": {}}}
    run = merge_events([_event(run={"runId": "0190f000-0000-7000-8000-00000000fe02", "facets": empty})])
    plan = build_lineage(run, ENGINE, LineageOptions())
    assert awaits_environment(run, LineageOptions()) is False
    assert [e["typeName"] for e in plan.entities] == ["spark_application", "spark_process"]
    assert plan.entities[0]["attributes"]["qualifiedName"] == "spark://synapse-ws/load"


def test_a_databricks_run_is_held_only_until_its_environment_facet_has_content():
    job = {"namespace": "adb-5544332211009988.4#0101-123456-abcdefgh", "name": "databricks_shell.insert"}
    complete = _event(job=job)
    running = _event(
        eventType="RUNNING",
        eventTime="2025-12-31T23:59:59Z",
        job=job,
        run={
            "runId": "0190f000-0000-7000-8000-00000000fe01",
            "facets": {
                "environment-properties": {"environment-properties": {"spark.databricks.notebook.path": "/Repos/etl/x"}}
            },
        },
    )
    assert awaits_environment(merge_events([complete]), LineageOptions()) is True
    assert awaits_environment(merge_events([complete, running]), LineageOptions()) is False
    assert (
        awaits_environment(
            merge_events(
                [
                    {
                        **complete,
                        "run": {
                            "runId": complete["run"]["runId"],
                            "facets": {"environment-properties": {"environment-properties": {}}},
                        },
                    }
                ]
            ),
            LineageOptions(),
        )
        is True
    )
