"""System-table rows to OpenLineage runs (no Spark): grouping, datasets, one run per target, the events through the
live contract and merger, and windows that own each run exactly once whatever the watermarks."""

from __future__ import annotations

import uuid
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from olparser.contract import IntakeLimits
from olparser.lineage import LineageOptions
from olparser.naming import MappingEngine
from olparser.pipeline import WritePolicy
from olparser.runs.merge import merge_events
from tests.support.rules import MAPPINGS_PATH
from tools.spark.records import AcceptedRecord, read_record
from tools.spark.runs import plan_run
from tools.spark.system_job import _json_bytes
from tools.spark.system_rows import (
    NO_DATASET,
    NO_HOST,
    NO_TARGET,
    OUTSIDE_WINDOW,
    ROW_FIELDS,
    Dataset,
    LineageRow,
    group_key,
    group_runs,
    in_window,
    row_dataset,
)

HOST = "adb-42.4.azuredatabricks.net"
LAKE = "abfss://lake@acct.dfs.core.windows.net"
MARCH_1 = 1740823200.0  # 2025-03-01T10:00:00Z


def lineage_row(**values) -> LineageRow:
    base = {name: None for name in ROW_FIELDS}
    base.update(
        kind="table",
        workspace_id="42",
        metastore_id="m-1",
        entity_type="NOTEBOOK",
        entity_id="7",
        entity_run_id="r1",
        created_by="ana",
        event_time=MARCH_1,
        record_id="x",
    )
    base.update(values)
    return LineageRow.of(base[name] for name in ROW_FIELDS)


@pytest.mark.parametrize(
    "values, key",
    [
        ({}, ("42", "NOTEBOOK", "7", "r1", None, None)),
        ({"entity_type": "JOB", "notebook_id": "11"}, ("42", "JOB", "7", "r1", "11", None)),
        ({"entity_type": "NOTEBOOK", "notebook_id": "11"}, ("42", "NOTEBOOK", "7", "r1", None, None)),
        ({"entity_type": "DBSQL_QUERY", "statement_id": "s1"}, ("42", "DBSQL_QUERY", "7", "r1", None, "s1")),
        (
            {"entity_type": None, "entity_id": None, "entity_run_id": None, "event_id": "e1"},
            ("42", None, None, None, None, "event:e1"),
        ),
        (
            {"entity_type": None, "entity_id": None, "entity_run_id": None, "record_id": "x9"},
            ("42", None, None, None, None, "record:x9"),
        ),
    ],
)
def test_rows_are_grouped_by_what_ran_them(values, key):
    assert group_key(lineage_row(**values)) == key


def test_ids_are_text_and_empty_text_is_none():
    row = LineageRow.of(
        (
            "table",
            42,
            " ",
            None,
            7,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            1.5,
            None,
            None,
            None,
            None,
        )
    )
    assert (row.workspace_id, row.metastore_id, row.entity_id, row.event_time) == ("42", None, "7", 1.5)


@pytest.mark.parametrize(
    "full_name, path, expected",
    [
        ("Main.Sales.Orders", f"{LAKE}/uc/orders", Dataset(LAKE, "uc/orders", "main.sales.orders")),
        ("main.sales.v_orders", None, Dataset("unity-catalog", "main.sales.v_orders", "main.sales.v_orders")),
        (None, "dbfs:/mnt/raw/x", Dataset("dbfs", "/mnt/raw/x")),
        ("not_three_parts", None, None),
        (None, None, None),
    ],
)
def test_a_row_side_is_a_table_at_its_location_a_table_alone_or_a_path(full_name, path, expected):
    assert row_dataset(full_name, path) == expected


def test_a_table_at_a_location_carries_its_unity_catalog_symlink_as_openlineage_spark_sends_it():
    assert Dataset(LAKE, "uc/orders", "main.sales.orders").to_json() == {
        "namespace": LAKE,
        "name": "uc/orders",
        "facets": {
            "symlinks": {
                "_producer": "urn:ol2purview:spark-system-lineage",
                "identifiers": [{"namespace": "unity-catalog", "name": "main.sales.orders", "type": "TABLE"}],
            }
        },
    }
    assert Dataset("unity-catalog", "main.sales.v", "main.sales.v").to_json() == {
        "namespace": "unity-catalog",
        "name": "main.sales.v",
    }


def test_each_target_of_a_group_is_one_run_with_the_sources_of_its_own_rows():
    rows = [
        lineage_row(source_table_full_name="main.s.a", target_table_full_name="main.s.t", record_id="1"),
        lineage_row(source_table_full_name="main.s.b", target_table_full_name="main.s.u", record_id="2"),
        lineage_row(source_table_full_name="main.s.c", record_id="3"),
        lineage_row(record_id="4"),
        lineage_row(
            kind="column",
            source_table_full_name="main.s.a",
            target_table_full_name="main.s.t",
            source_column_name="x",
            target_column_name="y",
            record_id="5",
        ),
    ]
    outcome = group_runs(group_key(rows[0]), rows, {"42": HOST}, None, None)
    runs = {events[0]["outputs"][0]["name"]: events for _, events in outcome.runs}
    assert sorted(runs) == ["main.s.t", "main.s.u"]
    assert [i["name"] for i in runs["main.s.t"][0]["inputs"]] == ["main.s.a"]
    assert runs["main.s.t"][0]["outputs"][0]["facets"] == {
        "columnLineage": {
            "_producer": "urn:ol2purview:spark-system-lineage",
            "fields": {"y": {"inputFields": [{"namespace": "unity-catalog", "name": "main.s.a", "field": "x"}]}},
        }
    }
    assert [i["name"] for i in runs["main.s.u"][0]["inputs"]] == ["main.s.b"]
    assert dict(outcome.counts) == {NO_TARGET: 1, NO_DATASET: 1}
    event = runs["main.s.t"][0]
    assert (event["eventType"], event["eventTime"], event["job"]) == (
        "COMPLETE",
        "2025-03-01T10:00:00.000Z",
        {"namespace": f"databricks://{HOST}", "name": "unity_catalog_lineage.main.s.t"},
    )
    assert event["run"]["facets"]["environment-properties"]["environment-properties"] == {
        "spark.databricks.workspaceUrl": HOST,
        "spark.databricks.clusterUsageTags.clusterOwnerOrgId": "42",
        "user": "ana",
        "spark.databricks.notebook.id": "7",
    }


def test_the_run_id_depends_only_on_the_group_and_the_target():
    one = group_runs(
        ("42", "NOTEBOOK", "7", "r1", None, None),
        [lineage_row(source_table_full_name="main.s.a", target_table_full_name="main.s.t")],
        {"42": HOST},
        None,
        None,
    )
    again = group_runs(
        ("42", "NOTEBOOK", "7", "r1", None, None),
        [lineage_row(source_table_full_name="main.s.b", target_table_full_name="main.s.t", event_time=MARCH_1 + 60)],
        {"42": HOST},
        None,
        None,
    )
    other = group_runs(
        ("42", "NOTEBOOK", "7", "r1", None, None),
        [lineage_row(source_table_full_name="main.s.a", target_table_full_name="main.s.u")],
        {"42": HOST},
        None,
        None,
    )
    assert one.runs[0][0] == again.runs[0][0] != other.runs[0][0]
    assert uuid.UUID(one.runs[0][0]).version == 5


def test_rows_of_a_workspace_without_a_host_make_no_run_and_are_counted():
    outcome = group_runs(
        ("9", "NOTEBOOK", "7", "r1", None, None),
        [lineage_row(workspace_id="9", target_table_full_name="main.s.t")] * 3,
        {},
        None,
        None,
    )
    assert (outcome.runs, dict(outcome.counts)) == ((), {NO_HOST.format("9", "9"): 3})


def test_a_run_belongs_to_the_window_of_its_newest_row():
    rows = [
        lineage_row(source_table_full_name="main.s.a", target_table_full_name="main.s.t", event_time=MARCH_1),
        lineage_row(source_table_full_name="main.s.b", target_table_full_name="main.s.t", event_time=MARCH_1 + 120),
    ]
    key = group_key(rows[0])
    assert group_runs(key, rows, {"42": HOST}, None, MARCH_1 + 60).counts == {OUTSIDE_WINDOW: 1}
    later = group_runs(key, rows, {"42": HOST}, MARCH_1 + 60, None)
    assert [i["name"] for i in later.runs[0][1][0]["inputs"]] == ["main.s.a", "main.s.b"]


def test_a_run_with_many_inputs_is_sent_as_several_events_the_contract_takes_and_the_merger_unions():
    rows = [
        lineage_row(source_path=f"{LAKE}/in/{n:04d}", target_table_full_name="main.s.t", record_id=str(n))
        for n in range(1_200)
    ]
    ((run_id, events),) = group_runs(group_key(rows[0]), rows, {"42": HOST}, None, None).runs
    assert [len(e["inputs"]) for e in events] == [500, 500, 200]
    records = [read_record(_json_bytes(e), IntakeLimits()) for e in events]
    assert all(isinstance(r, AcceptedRecord) and r.key == run_id for r in records)
    assert len(merge_events(events).inputs) == 1_200
    engine = MappingEngine.from_path(MAPPINGS_PATH)
    result = plan_run(
        run_id,
        [zlib.compress(r.event_json) for r in records],
        engine,
        LineageOptions(workspace_metastores=(("42", "m-1"),)),
        WritePolicy(max_datasets=500),
    )
    process = result.plan.entities[-1]["attributes"]
    assert (len(process["inputs"]), process["lineageTruncated"]) == (
        500,
        (
            "more than 500 inputs or outputs were sent; the first 500 of each (in name order) are kept "
            "(MAX_DATASETS_PER_RUN)"
        ),
    )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(min_value=0, max_value=1e6), min_size=1, max_size=30),
    st.lists(st.floats(min_value=0, max_value=1e6), min_size=1, max_size=6, unique=True),
)
def test_consecutive_windows_own_every_run_exactly_once(run_times, cuts):
    """Windows (-inf, c1), [c1, c2), ... [ck, +inf) as daily runs make them: each run has exactly one owner."""
    bounds = [None, *sorted(cuts), None]
    for time in run_times:
        owners = [i for i in range(len(bounds) - 1) if in_window(time, bounds[i], bounds[i + 1])]
        assert len(owners) == 1


@settings(max_examples=100, deadline=None)
@given(st.permutations(list(range(8))))
def test_a_groups_runs_do_not_depend_on_the_order_its_rows_arrive_in(order):
    rows = [
        lineage_row(
            source_table_full_name=f"main.s.in{n % 3}",
            target_table_full_name=f"main.s.out{n % 2}",
            created_by=f"user{n % 2}",
            event_time=MARCH_1 + n % 4,
            record_id=str(n),
        )
        for n in range(8)
    ]
    rows += [
        lineage_row(
            kind="column",
            source_table_full_name="main.s.in0",
            target_table_full_name="main.s.out0",
            source_column_name=f"c{n}",
            target_column_name="total",
            record_id=f"c{n}",
        )
        for n in range(2)
    ]
    expected = group_runs(group_key(rows[0]), rows, {"42": HOST}, None, None)
    shuffled = [rows[i] for i in order] + rows[8:]
    assert group_runs(group_key(rows[0]), list(reversed(shuffled)), {"42": HOST}, None, None) == expected
