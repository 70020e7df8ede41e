"""The pure merger on the real openlineage-spark sequences and on the cases Spark produces in the field."""

from __future__ import annotations

import copy
import itertools
import random

import pytest

from olparser.runs.merge import (
    KEPT_DATASET_FACETS,
    KEPT_JOB_FACETS,
    KEPT_RUN_FACETS,
    merge_event,
    merge_events,
    run_end_instant,
    run_start_instant,
    snapshot_from_static,
)
from olparser.runs.model import RunSnapshot
from tests.support.shared_events import events_of_run, load_sequence

CLL = "compat-tests__CLL"
SHAKESPEARE = "compat-tests__spark_dataproc_bigquery_shakespare"
DATAPROC = "compat-tests__spark_dataproc_simple_producer_test_complete"
CLL_CTAS_RUN = "019127df-0850-72bc-b214-b255290588a6"  # events 5 START, 6 RUNNING, 7 RUNNING, 8 COMPLETE
SHAKESPEARE_WRITE_RUN = "0192963f-f6f8-71c0-8380-500bc70883ee"  # START, 3 x RUNNING, COMPLETE
PRODUCER_1_19 = "https://github.com/OpenLineage/OpenLineage/tree/1.19.0-SNAPSHOT/integration/spark"
PRODUCER_1_23 = "https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/spark"


def names(datasets) -> list[tuple[str, str]]:
    return [(d.namespace, d.name) for d in datasets]


def test_cll_ctas_run_merges_into_one_complete_snapshot_with_the_used_facets_only():
    events = events_of_run(load_sequence(CLL), CLL_CTAS_RUN)
    snapshot = merge_events(events)

    assert snapshot.run_id == CLL_CTAS_RUN
    assert snapshot.event_type == "COMPLETE"
    assert snapshot.event_time == "2024-08-06T13:26:54.34Z"
    assert snapshot.job_namespace == "testColumnLevelLineage"
    assert snapshot.job_name == (
        "open_lineage_integration_create_table.execute_create_hive_table_as_select_command.default_tbl1"
    )
    assert snapshot.producer == PRODUCER_1_19
    # spark.logicalPlan and spark_jobDetails are dropped
    assert set(snapshot.run_facets) == {"environment-properties", "parent", "processing_engine", "spark_properties"}
    assert snapshot.run_facets["parent"]["run"] == {"runId": "019127de-fd25-7707-bfa4-3ec02693a531"}
    assert snapshot.job_facets == {"jobType": events[-1]["job"]["facets"]["jobType"]}
    assert names(snapshot.inputs) == [("file", "/tmp/cll_test/cll_source1"), ("file", "/tmp/cll_test/cll_source2")]
    assert all(set(d.facets) == {"dataSource", "schema", "symlinks"} for d in snapshot.inputs)
    assert names(snapshot.outputs) == [("file", "/tmp/cll_test/tbl1")]
    output = snapshot.outputs[0]
    assert set(output.facets) == {"columnLineage", "dataSource", "lifecycleStateChange", "schema", "symlinks"}
    assert output.facets["columnLineage"] == events[-1]["outputs"][0]["facets"]["columnLineage"]
    assert sorted(output.facets["columnLineage"]["fields"]) == ["agg", "ident", "trans"]
    assert [f["name"] for f in output.facets["schema"]["fields"]] == ["ident", "trans", "agg"]
    # outputStatistics only came on the second RUNNING (event 7): kept although COMPLETE lacks it
    assert output.io_facets == {"outputStatistics": events[2]["outputs"][0]["outputFacets"]["outputStatistics"]}
    assert output.io_facets["outputStatistics"]["rowCount"] == 0


def test_shakespeare_run_keeps_inputs_sent_only_on_start_and_complete_and_newest_statistics():
    events = events_of_run(load_sequence(SHAKESPEARE), SHAKESPEARE_WRITE_RUN)
    assert [e["eventType"] for e in events] == ["START", "RUNNING", "RUNNING", "RUNNING", "COMPLETE"]
    snapshot = merge_events(events)

    assert snapshot.event_type == "COMPLETE"
    assert snapshot.event_time == "2024-10-16T16:53:51.761Z"
    assert snapshot.job_namespace == "default"
    assert snapshot.job_name == "shakespeare_on_spark.adaptive_spark_plan.outputs_1729097570970"
    assert snapshot.producer == PRODUCER_1_23
    assert set(snapshot.run_facets) == {"parent", "processing_engine", "spark_properties"}  # gcp_* dropped
    assert set(snapshot.job_facets) == {"jobType"}  # gcp_lineage dropped
    assert names(snapshot.inputs) == [("bigquery", "bigquery-public-data.samples.shakespeare")]
    assert set(snapshot.inputs[0].facets) == {"dataSource", "schema"}
    assert names(snapshot.outputs) == [("file", "/tmp/outputs/1729097570970")]
    assert set(snapshot.outputs[0].facets) == {"columnLineage", "dataSource", "schema"}
    statistics = snapshot.outputs[0].io_facets["outputStatistics"]
    assert (statistics["rowCount"], statistics["size"]) == (1, 9)  # from COMPLETE, not the RUNNING's 0/0


def test_dataproc_sequence_gives_one_snapshot_per_run_with_sql_and_symlinks():
    events = load_sequence(DATAPROC)
    snapshots: dict[str, RunSnapshot] = {}
    for event in events:
        run_id = event["run"]["runId"]
        snapshots[run_id] = merge_event(snapshots.get(run_id), event)

    assert len(snapshots) == 7
    assert {s.event_type for s in snapshots.values()} == {"COMPLETE"}
    insert_t1 = snapshots["019299c5-5488-7db5-a64e-11439fc53117"]
    assert insert_t1.job_name == "cl_i_test_application.execute_insert_into_hive_table.warehouse_t1"
    assert insert_t1.event_time == "2024-10-17T09:18:25.647Z"
    assert insert_t1.job_facets["sql"]["query"] == "INSERT INTO t1 VALUES (1,2),(3,4);"
    assert set(insert_t1.job_facets) == {"jobType", "sql"}
    assert insert_t1.inputs == ()
    assert names(insert_t1.outputs) == [("hdfs://dataproc-producer-test-m", "/user/hive/warehouse/t1")]
    assert insert_t1.outputs[0].facets["symlinks"]["identifiers"] == [
        {"namespace": "hive://dataproc-producer-test-m:9083", "name": "default.t1", "type": "TABLE"}
    ]
    assert insert_t1.outputs[0].io_facets["outputStatistics"]["rowCount"] == 2
    insert_t2 = snapshots["019299c5-73cf-7069-a70f-74eb8070b577"]
    assert names(insert_t2.inputs) == [("hdfs://dataproc-producer-test-m", "/user/hive/warehouse/t1")]
    assert "columnLineage" in insert_t2.outputs[0].facets


def test_complete_without_start_is_a_complete_snapshot():
    events = events_of_run(load_sequence(DATAPROC), "019299c5-4630-75cc-a27a-33e6e55ec50d")
    assert [e["eventType"] for e in events] == ["COMPLETE"]
    snapshot = merge_event(None, events[0])
    assert snapshot.event_type == "COMPLETE"
    assert snapshot.is_terminal
    assert snapshot.job_name == "cl_i_test_application.drop_table"
    assert names(snapshot.outputs) == [("hdfs://dataproc-producer-test-m", "/user/hive/warehouse/t2")]
    assert set(snapshot.outputs[0].facets) == {"dataSource", "lifecycleStateChange", "schema", "symlinks"}


@pytest.mark.parametrize("sequence,run_id", [(CLL, CLL_CTAS_RUN), (SHAKESPEARE, SHAKESPEARE_WRITE_RUN)])
def test_result_does_not_depend_on_arrival_order(sequence, run_id):
    events = events_of_run(load_sequence(sequence), run_id)
    expected = merge_events(events)
    for order in itertools.permutations(events):
        assert merge_events(order) == expected


def test_duplicates_change_nothing():
    events = events_of_run(load_sequence(CLL), CLL_CTAS_RUN)
    once = merge_events(events)
    for event in events:
        assert merge_event(once, event) == once
    shuffled = events * 3
    random.Random(7).shuffle(shuffled)
    assert merge_events(shuffled) == once


def test_running_after_complete_keeps_complete_but_advances_the_time():
    events = events_of_run(load_sequence(CLL), CLL_CTAS_RUN)
    late_running = copy.deepcopy(events[1])
    late_running["eventTime"] = "2024-08-06T13:27:10Z"
    snapshot = merge_events(events + [late_running])
    assert snapshot.event_type == "COMPLETE"
    assert snapshot.event_time == "2024-08-06T13:27:10Z"


def test_terminal_state_newest_by_instant_wins_whatever_the_order_and_offset():
    complete = copy.deepcopy(events_of_run(load_sequence(CLL), CLL_CTAS_RUN)[-1])
    fail = copy.deepcopy(complete)
    fail["eventType"] = "FAIL"
    # 14:00+02:00 is 12:00Z: earlier than 13:00Z although its text sorts after it
    fail["eventTime"] = "2024-08-06T14:00:00+02:00"
    complete["eventTime"] = "2024-08-06T13:00:00Z"
    assert merge_events([fail, complete]).event_type == "COMPLETE"
    assert merge_events([complete, fail]).event_type == "COMPLETE"
    assert merge_events([complete, fail]).event_time == "2024-08-06T13:00:00Z"
    fail["eventTime"] = "2024-08-06T13:00:00.5Z"
    assert merge_events([fail, complete]).event_type == "FAIL"
    assert merge_events([complete, fail]).event_type == "FAIL"


def test_start_after_running_in_arrival_keeps_running():
    events = events_of_run(load_sequence(CLL), CLL_CTAS_RUN)
    assert merge_events([events[1], events[0]]).event_type == "RUNNING"


def test_notebook_path_sent_on_running_survives_an_empty_environment_facet_on_complete():
    start, running, _, complete = copy.deepcopy(events_of_run(load_sequence(CLL), CLL_CTAS_RUN))
    properties = {
        "spark.databricks.notebook.path": "/Users/ana@contoso.com/etl/load_orders",
        "spark.databricks.job.id": "881",
        "spark.databricks.job.runId": "42017",
        "spark.databricks.clusterUsageTags.clusterOwnerOrgId": "3464153745686717",
        "mountPoints": [{"mountPoint": "/mnt/raw", "source": "abfss://raw@lake.dfs.core.windows.net/"}],
        "user": "ana@contoso.com",
    }
    running["run"]["facets"]["environment-properties"]["environment-properties"] = properties
    assert complete["run"]["facets"]["environment-properties"]["environment-properties"] == {}
    for order in itertools.permutations([start, running, complete]):
        snapshot = merge_events(order)
        assert snapshot.run_facets["environment-properties"]["environment-properties"] == properties


def test_later_facet_replaces_earlier_and_missing_facet_is_kept():
    start, _, _, complete = copy.deepcopy(events_of_run(load_sequence(CLL), CLL_CTAS_RUN))
    complete["outputs"][0]["facets"]["schema"]["fields"].append({"name": "loaded_at", "type": "timestamp"})
    del complete["outputs"][0]["facets"]["symlinks"]
    snapshot = merge_events([complete, start])
    output = snapshot.outputs[0]
    assert [f["name"] for f in output.facets["schema"]["fields"]] == ["ident", "trans", "agg", "loaded_at"]
    assert output.facets["symlinks"] == start["outputs"][0]["facets"]["symlinks"]


def test_inputs_and_outputs_are_unioned_across_events():
    start, running, _, complete = copy.deepcopy(events_of_run(load_sequence(CLL), CLL_CTAS_RUN))
    start["inputs"] = start["inputs"][:1]  # cll_source2
    running["inputs"] = running["inputs"][1:]  # cll_source1
    complete["inputs"] = []
    complete["outputs"][0]["name"] = "/tmp/cll_test/tbl1_copy"
    snapshot = merge_events([start, running, complete])
    assert names(snapshot.inputs) == [("file", "/tmp/cll_test/cll_source1"), ("file", "/tmp/cll_test/cll_source2")]
    assert names(snapshot.outputs) == [("file", "/tmp/cll_test/tbl1"), ("file", "/tmp/cll_test/tbl1_copy")]


def test_job_name_is_the_newest_non_empty_one():
    start, running, _, complete = copy.deepcopy(events_of_run(load_sequence(CLL), CLL_CTAS_RUN))
    running["job"]["name"] = "adb-1234.5.azuredatabricks.net.execute_create_hive_table_as_select_command.default_tbl1"
    complete["job"]["name"] = ""
    for order in itertools.permutations([start, running, complete]):
        assert merge_events(order).job_name == running["job"]["name"]


def test_unused_facets_are_dropped():
    event = copy.deepcopy(events_of_run(load_sequence(CLL), CLL_CTAS_RUN)[1])
    event["run"]["facets"]["acme_custom"] = {"payload": "x" * 100}
    event["run"]["facets"]["spark_unknown"] = {"inputs": []}
    event["run"]["facets"]["nominalTime"] = {"nominalStartTime": "2024-08-06T13:00:00Z"}
    event["job"]["facets"]["gcp_lineage"] = {"origin": {}}
    event["job"]["facets"]["sql"] = {"query": "CREATE TABLE tbl1 AS SELECT 1"}
    event["outputs"][0]["facets"]["tags"] = {"tags": []}
    event["outputs"][0]["outputFacets"]["dataQualityMetrics"] = {"rowCount": 3}
    event["inputs"][0]["facets"]["storage"] = {"storageLayer": "delta", "fileFormat": "parquet"}
    snapshot = merge_event(None, event)
    assert set(snapshot.run_facets) == {
        "environment-properties",
        "parent",
        "processing_engine",
        "spark_properties",
        "nominalTime",
    }
    assert set(snapshot.job_facets) == {"jobType", "sql"}
    assert "tags" not in snapshot.outputs[0].facets
    assert snapshot.outputs[0].io_facets == {}
    source2 = [d for d in snapshot.inputs if d.name.endswith("cll_source2")][0]
    assert source2.facets["storage"] == {"storageLayer": "delta", "fileFormat": "parquet"}
    assert {"spark.logicalPlan", "spark_jobDetails", "spark_unknown"}.isdisjoint(KEPT_RUN_FACETS)
    assert "gcp_lineage" not in KEPT_JOB_FACETS and "tags" not in KEPT_DATASET_FACETS


def test_merging_does_not_modify_the_previous_snapshot_or_the_event():
    events = events_of_run(load_sequence(CLL), CLL_CTAS_RUN)
    first = merge_event(None, events[0])
    first_copy = copy.deepcopy(first)
    last = copy.deepcopy(events[-1])
    merge_event(first, last)
    assert first == first_copy
    assert last == events[-1]


def test_event_without_run_or_of_another_run_is_refused():
    events = events_of_run(load_sequence(CLL), CLL_CTAS_RUN)
    with pytest.raises(ValueError, match="snapshot_from_static"):
        merge_event(
            None, {"eventTime": "2024-01-01T00:00:00Z", "producer": "p", "job": {"namespace": "n", "name": "j"}}
        )
    other = load_sequence(CLL)[0]
    with pytest.raises(ValueError, match="cannot be merged into run " + CLL_CTAS_RUN):
        merge_event(merge_event(None, events[0]), other)


def test_static_job_event_gives_a_complete_snapshot_without_run():
    job_event = {
        "eventTime": "2024-09-01T10:00:00Z",
        "producer": "https://example.com/static-lineage",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
        "job": {
            "namespace": "adf",
            "name": "copy_orders",
            "facets": {
                "jobType": {"processingType": "BATCH", "integration": "ADF", "jobType": "COPY"},
                "gcp_lineage": {"origin": {}},
            },
        },
        "inputs": [
            {
                "namespace": "sqlserver://db.contoso.com:1433",
                "name": "sales.dbo.orders",
                "facets": {"schema": {"fields": [{"name": "id", "type": "int"}]}, "tags": {"tags": []}},
            }
        ],
        "outputs": [{"namespace": "abfss://raw@lake.dfs.core.windows.net", "name": "orders"}],
    }
    snapshot = snapshot_from_static(job_event)
    assert snapshot.run_id is None and snapshot.is_static
    assert snapshot.event_type == "COMPLETE"
    assert (snapshot.job_namespace, snapshot.job_name) == ("adf", "copy_orders")
    assert snapshot.event_time == "2024-09-01T10:00:00Z"
    assert snapshot.producer == "https://example.com/static-lineage"
    assert set(snapshot.job_facets) == {"jobType"}
    assert names(snapshot.inputs) == [("sqlserver://db.contoso.com:1433", "sales.dbo.orders")]
    assert set(snapshot.inputs[0].facets) == {"schema"}
    assert names(snapshot.outputs) == [("abfss://raw@lake.dfs.core.windows.net", "orders")]


def test_static_dataset_event_gives_its_dataset_as_the_single_output():
    dataset_event = {
        "eventTime": "2024-09-01T10:00:00Z",
        "producer": "https://example.com/catalog-sync",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
        "dataset": {
            "namespace": "dbfs",
            "name": "/mnt/raw/orders",
            "facets": {"documentation": {"description": "raw orders"}},
        },
    }
    snapshot = snapshot_from_static(dataset_event)
    assert (snapshot.run_id, snapshot.job_name, snapshot.inputs) == (None, "", ())
    assert names(snapshot.outputs) == [("dbfs", "/mnt/raw/orders")]
    assert snapshot.outputs[0].facets == {"documentation": {"description": "raw orders"}}
    with pytest.raises(ValueError, match="merge_event"):
        snapshot_from_static(events_of_run(load_sequence(CLL), CLL_CTAS_RUN)[0])


def _run_with_outputs(run_id: str, names: list[str], time: str) -> dict:
    return {
        "eventType": "RUNNING",
        "eventTime": time,
        "run": {"runId": run_id},
        "job": {"namespace": "ns", "name": "app.job"},
        "producer": "p",
        "outputs": [{"namespace": "file", "name": name, "facets": {}} for name in names],
        "inputs": [{"namespace": "file", "name": f"in/{name}"} for name in names[:2]],
    }


def test_a_run_past_the_dataset_limit_keeps_the_first_datasets_by_name_whatever_the_order():
    run_id = "0190f000-0000-7000-8000-00000000ab01"
    events = [
        _run_with_outputs(run_id, [f"/o/{i:02d}" for i in range(start, start + 4)], f"2024-01-01T00:00:{start:02d}Z")
        for start in (0, 4, 8)
    ]
    expected_outputs = [("file", f"/o/{i:02d}") for i in range(5)]
    for order in itertools.permutations(events):
        snapshot = merge_events(order, max_datasets=5)
        assert names(snapshot.outputs) == expected_outputs
        assert names(snapshot.inputs) == [
            ("file", "in//o/00"),
            ("file", "in//o/01"),
            ("file", "in//o/04"),
            ("file", "in//o/05"),
            ("file", "in//o/08"),
        ]
        assert snapshot.truncated == 5
    assert merge_events(events, max_datasets=12).truncated == 0
    assert len(merge_events(events, max_datasets=12).outputs) == 12


# --- when a run started and ended ------------------------------------------------------------------------------------


def test_start_is_the_earliest_start_event_and_end_the_terminal_event():
    events = events_of_run(load_sequence(CLL), CLL_CTAS_RUN)  # START 13:26:53.776, RUNNING x2, COMPLETE 13:26:54.34
    snapshot = merge_events(events)
    assert (snapshot.start_time, snapshot.merge_times["start_from"]) == ("2024-08-06T13:26:53.776Z", "START")
    assert (run_start_instant(snapshot), run_end_instant(snapshot)) == (1722950813.776, 1722950814.34)
    for order in itertools.permutations(events):
        assert merge_events(order) == snapshot


def test_without_a_start_event_the_run_starts_at_its_earliest_event_until_the_start_arrives():
    start, running, _, complete = events_of_run(load_sequence(CLL), CLL_CTAS_RUN)
    late = merge_events([complete, running])
    assert (late.start_time, late.merge_times["start_from"]) == ("2024-08-06T13:26:54.118Z", "event")
    assert merge_event(late, start).start_time == "2024-08-06T13:26:53.776Z"
    # a START sent later than another event (a clock running behind) still says when the run started
    skewed = merge_events([running, dict(copy.deepcopy(start), eventTime="2024-08-06T13:26:59Z")])
    assert skewed.start_time == "2024-08-06T13:26:59Z"


def test_a_run_without_terminal_event_has_no_end():
    start, running, _, _ = events_of_run(load_sequence(CLL), CLL_CTAS_RUN)
    assert run_end_instant(merge_events([start, running])) is None
    assert run_start_instant(merge_events([start, running])) == 1722950813.776
