"""Exact entities for real events: the accelerator's column-lineage sample, the 0.12 Databricks quickstart, and
the compat-tests runs merged by the real run merger."""

from __future__ import annotations

import json

from olparser.lineage import LineageOptions, LineagePlan, UnmatchedDataset, build_lineage
from olparser.runs.merge import merge_events
from tests.support.shared_events import load_event, load_sequence

WS = "databricks://adb-3464153745686717.17.azuredatabricks.net"
NOTEBOOK = f"{WS}/notebooks/Shared/Scenario01DimOrg/S01DimOrg_raw2int"
ADLS = "https://aaiarchdesignpurviewadls.dfs.core.windows.net/raw/DimOrganization.parquet"


def _ref(guid: str, type_name: str, qualified_name: str, relationship: str | None = None) -> dict:
    reference = {"guid": guid, "typeName": type_name, "uniqueAttributes": {"qualifiedName": qualified_name}}
    return {**reference, "relationshipType": relationship} if relationship else reference


def _run_of(directory: str, run_id_suffix: str):
    return merge_events(e for e in load_sequence(directory) if e["run"]["runId"].endswith(run_id_suffix))


def _process(plan: LineagePlan) -> dict:
    (process,) = [e for e in plan.entities if e["typeName"] in ("databricks_process", "spark_process")]
    return process


def test_accelerator_event_gives_notebook_owner_adls_input_and_placeholders(engine):
    run = merge_events([load_event("accelerator__UnitTestColData_CompleteOlColMessage.json")])
    options = LineageOptions(workspace_hosts=(("3464153745686717", "adb-3464153745686717.17.azuredatabricks.net"),))

    plan = build_lineage(run, engine, options)

    assert plan.external_datasets == (
        {
            "typeName": "azure_datalake_gen2_path",
            "guid": "-1",
            "attributes": {"qualifiedName": ADLS, "name": "DimOrganization.parquet"},
        },
    )
    assert plan.entities == (
        {
            "typeName": "databricks_workspace",
            "guid": "-2",
            "attributes": {"qualifiedName": WS, "name": "adb-3464153745686717.17.azuredatabricks.net"},
        },
        {
            "typeName": "databricks_notebook",
            "guid": "-3",
            "attributes": {"qualifiedName": NOTEBOOK, "name": "S01DimOrg_raw2int"},
            "relationshipAttributes": {
                "workspace": _ref("-2", "databricks_workspace", WS, "databricks_workspace_notebooks")
            },
        },
        {
            "typeName": "openlineage_dataset",
            "guid": "-4",
            "attributes": {
                "qualifiedName": "N1/inputTable",
                "name": "inputTable",
                "openlineageNamespace": "N1",
                "openlineageName": "inputTable",
                "storageLocation": "",
            },
        },
        {
            "typeName": "openlineage_dataset",
            "guid": "-5",
            "attributes": {
                "qualifiedName": "N2/outputTable",
                "name": "outputTable",
                "openlineageNamespace": "N2",
                "openlineageName": "outputTable",
                "storageLocation": "",
            },
        },
        {
            "typeName": "openlineage_column",
            "guid": "-6",
            "attributes": {
                "qualifiedName": "N2/outputTable#col_a",
                "name": "col_a",
                "dataType": "VARCHAR",
                "description": "",
                "position": 0,
            },
            "relationshipAttributes": {
                "dataset": _ref("-5", "openlineage_dataset", "N2/outputTable", "openlineage_dataset_columns")
            },
        },
        {
            "typeName": "openlineage_column",
            "guid": "-7",
            "attributes": {
                "qualifiedName": "N2/outputTable#col_b",
                "name": "col_b",
                "dataType": "int",
                "description": "",
                "position": 1,
            },
            "relationshipAttributes": {
                "dataset": _ref("-5", "openlineage_dataset", "N2/outputTable", "openlineage_dataset_columns")
            },
        },
        {
            "typeName": "databricks_process",
            "guid": "-8",
            "attributes": {
                "qualifiedName": f"{NOTEBOOK}/processes/overwrite_by_expression_exec_v1/N2/outputTable",
                "name": "overwrite_by_expression_exec_v1",
                # the column lineage names N1/inputTable, absent from `inputs`: it becomes an input too
                "inputs": [
                    _ref("-1", "azure_datalake_gen2_path", ADLS),
                    _ref("-4", "openlineage_dataset", "N1/inputTable"),
                ],
                "outputs": [_ref("-5", "openlineage_dataset", "N2/outputTable")],
                "columnMapping": '[{"DatasetMapping":{"Source":"N1/inputTable","Sink":"N2/outputTable"},'
                '"ColumnMapping":[{"Source":"col_a","Sink":"col_a"},{"Source":"col_b","Sink":"col_b"}]}]',
                "columnLineageDetail": json.dumps(
                    {
                        "dataset": [],
                        "fields": [
                            {
                                "field": "col_a",
                                "inputFields": [
                                    {
                                        "field": "col_a",
                                        "name": "inputTable",
                                        "namespace": "N1",
                                        "qualifiedName": "N1/inputTable",
                                        "transformations": [],
                                        "typeName": "openlineage_dataset",
                                    }
                                ],
                            },
                            {
                                "field": "col_b",
                                "inputFields": [
                                    {
                                        "field": "col_b",
                                        "name": "inputTable",
                                        "namespace": "N1",
                                        "qualifiedName": "N1/inputTable",
                                        "transformations": [],
                                        "typeName": "openlineage_dataset",
                                    }
                                ],
                            },
                        ],
                    },
                    separators=(",", ":"),
                ),
                "datasetLocations": "",
                "datasetTables": "",
                "openlineageJob": "adbpurviewol1/databricks_shell.overwrite_by_expression_exec_v1",
                "lastRunId": "225e05d7-5c5a-434c-a544-ffbda7dfa44b",
                "lastRunTime": "2022-01-25T19:36:00.668Z",
                "lastRunStatus": "COMPLETE",
                "lastRunUser": "marktayl@cmiaaval.cummins.com",
                "lineageTruncated": "",
                "columnLineageSource": "facet",
                # system metadata: one COMPLETE (no START) is both the start and the end; Spark 3.1.2 and
                # openlineage-spark 0.6.0-SNAPSHOT from the spark_version facet; no cluster id, job or statistics
                "lastRunStartTime": "2022-01-25T19:36:00.668Z",
                "lastRunEndTime": "2022-01-25T19:36:00.668Z",
                "lastRunDurationMs": 0,
                "lastRunClusterId": "",
                "lastRunJobId": "",
                "lastRunJobRunId": "",
                "lastRunApplicationId": "",
                "lastRunSparkVersion": "3.1.2",
                "lastRunOpenLineageVersion": "0.6.0-SNAPSHOT",
                "lastRunParentJobNamespace": "",
                "lastRunParentJobName": "",
                "lastRunParentRunId": "",
                "lastRunRootJobNamespace": "",
                "lastRunRootJobName": "",
                "lastRunRootRunId": "",
                "lastRunRowsWritten": None,
                "lastRunBytesWritten": None,
                "runCount": None,
                "firstRunTime": "",
            },
            "relationshipAttributes": {
                "task": _ref("-3", "databricks_notebook", NOTEBOOK, "databricks_runnable_processes")
            },
        },
    )
    assert plan.unmatched == (
        UnmatchedDataset("N1", "inputTable", "no rule for N1"),
        UnmatchedDataset("N2", "outputTable", "no rule for N2"),
    )
    assert plan.notes == ()


def test_accelerator_event_maps_with_the_runs_mount_points_and_workspace(engine):
    run = merge_events([load_event("accelerator__UnitTestColData_CompleteOlColMessage.json")])
    options = LineageOptions(workspace_hosts=(("3464153745686717", "adb-3464153745686717.17.azuredatabricks.net"),))

    build_lineage(run, engine, options)

    namespace, name, mounts, workspace_url = engine.calls[0]
    assert (namespace, name, workspace_url) == (
        "abfss://raw@aaiarchdesignpurviewadls.dfs.core.windows.net",
        "/DimOrganization.parquet",
        "adb-3464153745686717.17.azuredatabricks.net",
    )
    assert len(mounts) == 8 and mounts[3].mount_point == "/mnt/raw"


def test_databricks_event_without_workspace_host_falls_back_to_an_application_and_says_why(engine):
    run = merge_events([load_event("accelerator__UnitTestColData_CompleteOlColMessage.json")])

    plan = build_lineage(run, engine, LineageOptions())

    assert plan.entities[0] == {
        "typeName": "spark_application",
        "guid": "-2",
        "attributes": {
            "qualifiedName": "spark://adbpurviewol1/databricks_shell",
            "name": "databricks_shell",
            "appName": "databricks_shell",
        },
    }
    assert _process(plan)["attributes"]["qualifiedName"] == (
        "spark://adbpurviewol1/databricks_shell/processes/overwrite_by_expression_exec_v1/N2/outputTable"
    )
    assert len(plan.notes) == 1 and "without a workspace host" in plan.notes[0]


def test_quickstart_databricks_event_keeps_its_unmapped_output_with_columns(engine):
    run = merge_events([load_event("website-docs__quickstart_databricks_COMPLETE_0.12.0.json")])

    plan = build_lineage(run, engine, LineageOptions())

    output = "dbfs:/user/hive/warehouse/temp"
    assert [(e["typeName"], e["attributes"]["qualifiedName"]) for e in plan.entities] == [
        ("spark_application", "spark://default/databricks_shell"),
        ("openlineage_dataset", output),
        ("openlineage_column", f"{output}#a"),
        ("openlineage_column", f"{output}#b"),
        ("spark_process", f"spark://default/databricks_shell/processes/atomic_replace_table_as_select/{output}"),
    ]
    process = _process(plan)
    assert process["attributes"]["name"] == "atomic_replace_table_as_select"
    assert process["attributes"]["inputs"] == []
    # sent empty, so that a later run without column lineage clears what an earlier one wrote
    assert (process["attributes"]["columnMapping"], process["attributes"]["columnLineageDetail"]) == ("[]", "")
    assert plan.unmatched == (UnmatchedDataset("dbfs", "/user/hive/warehouse/temp", "no rule for dbfs"),)
    assert plan.external_datasets == ()


def test_cll_sequence_represents_hive_tables_and_maps_only_direct_columns(engine):
    run = _run_of("compat-tests__CLL", "588a6")  # CREATE TABLE tbl1 AS SELECT ... JOIN ... GROUP BY

    plan = build_lineage(run, engine, LineageOptions())

    source1, source2, target = (f"file:/tmp/cll_test/default.{t}" for t in ("cll_source1", "cll_source2", "tbl1"))
    process = _process(plan)["attributes"]
    assert process["qualifiedName"] == (
        "spark://testColumnLevelLineage/open_lineage_integration_create_table/processes/"
        f"execute_create_hive_table_as_select_command.default_tbl1/{target}"
    )
    assert process["name"] == "execute_create_hive_table_as_select_command.default_tbl1"
    assert [i["uniqueAttributes"]["qualifiedName"] for i in process["inputs"]] == [source1, source2]
    assert json.loads(process["columnMapping"]) == [
        {
            "DatasetMapping": {"Source": source1, "Sink": target},
            "ColumnMapping": [{"Source": "a", "Sink": "ident"}, {"Source": "b", "Sink": "trans"}],
        },
        {"DatasetMapping": {"Source": source2, "Sink": target}, "ColumnMapping": [{"Source": "c", "Sink": "agg"}]},
    ]
    assert json.loads(process["datasetLocations"]) == {
        source1: "file:/tmp/cll_test/cll_source1",
        source2: "file:/tmp/cll_test/cll_source2",
        target: "file:/tmp/cll_test/tbl1",
    }
    detail = json.loads(process["columnLineageDetail"])
    agg = next(f for f in detail["fields"] if f["field"] == "agg")
    assert [
        (i["qualifiedName"], i["field"], [t["subtype"] for t in i["transformations"]]) for i in agg["inputFields"]
    ] == [
        (source1, "a", ["FILTER", "GROUP_BY", "JOIN"]),
        (source1, "b", ["GROUP_BY"]),
        (source2, "a", ["FILTER", "JOIN"]),
        (source2, "c", ["AGGREGATION"]),
    ]
    assert [e["attributes"]["qualifiedName"] for e in plan.entities if e["typeName"] == "openlineage_column"] == [
        f"{source1}#a",
        f"{source1}#b",
        f"{source2}#a",
        f"{source2}#c",
        f"{target}#agg",
        f"{target}#ident",
        f"{target}#trans",
    ]
    assert process["lastRunUser"] == ""  # environment-properties is empty outside Databricks


def test_dataproc_run_is_a_spark_application_over_hive_tables(engine):
    run = _run_of("compat-tests__spark_dataproc_simple_producer_test_complete", "b577")  # INSERT INTO t2 FROM t1

    plan = build_lineage(run, engine, LineageOptions())

    app = "spark://default/cl_i_test_application"
    assert plan.entities == (
        {
            "typeName": "spark_application",
            "guid": "-3",
            "attributes": {"qualifiedName": app, "name": "CLI test application", "appName": "cl_i_test_application"},
        },
        {
            "typeName": "spark_process",
            "guid": "-4",
            "attributes": {
                "qualifiedName": f"{app}/processes/execute_insert_into_hive_table.warehouse_t2/"
                "default.t2@dataproc-producer-test-m",
                "name": "execute_insert_into_hive_table.warehouse_t2",
                "inputs": [_ref("-1", "hive_table", "default.t1@dataproc-producer-test-m")],
                "outputs": [_ref("-2", "hive_table", "default.t2@dataproc-producer-test-m")],
                "columnMapping": '[{"DatasetMapping":{"Source":"default.t1@dataproc-producer-test-m",'
                '"Sink":"default.t2@dataproc-producer-test-m"},'
                '"ColumnMapping":[{"Source":"a","Sink":"a"},{"Source":"b","Sink":"b"}]}]',
                "columnLineageDetail": json.dumps(
                    {
                        "dataset": [],
                        "fields": [
                            {
                                "field": column,
                                "inputFields": [
                                    {
                                        "field": column,
                                        "name": "/user/hive/warehouse/t1",
                                        "namespace": "hdfs://dataproc-producer-test-m",
                                        "qualifiedName": "default.t1@dataproc-producer-test-m",
                                        "transformations": [
                                            {
                                                "description": "",
                                                "masking": False,
                                                "subtype": "IDENTITY",
                                                "type": "DIRECT",
                                            }
                                        ],
                                        "typeName": "hive_table",
                                    }
                                ],
                            }
                            for column in ("a", "b")
                        ],
                    },
                    separators=(",", ":"),
                ),
                "datasetLocations": '{"default.t1@dataproc-producer-test-m":"hdfs://dataproc-producer-test-m/user/hive'
                '/warehouse/t1","default.t2@dataproc-producer-test-m":"hdfs://dataproc-producer-'
                'test-m/user/hive/warehouse/t2"}',
                "datasetTables": "",
                "openlineageJob": "default/cl_i_test_application.execute_insert_into_hive_table.warehouse_t2",
                "lastRunId": "019299c5-73cf-7069-a70f-74eb8070b577",
                "lastRunTime": "2024-10-17T09:18:29.267Z",
                "lastRunStatus": "COMPLETE",
                "lastRunUser": "",
                "lineageTruncated": "",
                "columnLineageSource": "facet",
                # START 09:18:26.825 .. COMPLETE 09:18:29.267; 2 rows and 8 bytes from the RUNNING's outputStatistics
                "lastRunStartTime": "2024-10-17T09:18:26.825Z",
                "lastRunEndTime": "2024-10-17T09:18:29.267Z",
                "lastRunDurationMs": 2442,
                "lastRunClusterId": "",
                "lastRunJobId": "",
                "lastRunJobRunId": "",
                "lastRunApplicationId": "",
                "lastRunSparkVersion": "3.5.1",
                "lastRunOpenLineageVersion": "1.23.0",
                # ParentRunFacet 1-0-1: the Spark application is the parent (and nothing ran it: no root, no runBy)
                "lastRunParentJobNamespace": "default",
                "lastRunParentJobName": "cl_i_test_application",
                "lastRunParentRunId": "019299c5-12f5-7946-b5b2-c6abab662e20",
                "lastRunRootJobNamespace": "",
                "lastRunRootJobName": "",
                "lastRunRootRunId": "",
                "lastRunRowsWritten": 2,
                "lastRunBytesWritten": 8,
                "runCount": None,
                "firstRunTime": "",
            },
            "relationshipAttributes": {
                "application": _ref("-3", "spark_application", app, "spark_application_processes")
            },
        },
    )
    assert plan.external_datasets == (
        {
            "typeName": "hive_table",
            "guid": "-1",
            "attributes": {"qualifiedName": "default.t1@dataproc-producer-test-m", "name": "default.t1"},
        },
        {
            "typeName": "hive_table",
            "guid": "-2",
            "attributes": {"qualifiedName": "default.t2@dataproc-producer-test-m", "name": "default.t2"},
        },
    )
    assert plan.unmatched == ()


def test_two_statements_writing_one_output_are_two_processes(engine):
    directory = "compat-tests__spark_dataproc_simple_producer_test_complete"
    insert = build_lineage(_run_of(directory, "b577"), engine, LineageOptions())  # INSERT INTO t2 SELECT * FROM t1
    ctas = build_lineage(_run_of(directory, "2b6047"), engine, LineageOptions())  # CREATE TABLE t2 AS SELECT (empty)

    first, second = _process(insert)["attributes"], _process(ctas)["attributes"]
    app = "spark://default/cl_i_test_application/processes"
    assert (
        first["qualifiedName"]
        == f"{app}/execute_insert_into_hive_table.warehouse_t2/default.t2@dataproc-producer-test-m"
    )
    assert second["qualifiedName"] == (
        f"{app}/execute_create_hive_table_as_select_command.default_t2/default.t2@dataproc-producer-test-m"
    )
    assert [i["uniqueAttributes"]["qualifiedName"] for i in first["inputs"]] == ["default.t1@dataproc-producer-test-m"]
    assert (second["inputs"], second["columnMapping"], second["columnLineageDetail"]) == ([], "[]", "")


def test_application_level_run_without_outputs_writes_nothing(engine):
    run = _run_of("compat-tests__spark_dataproc_simple_producer_test_complete", "662e20")

    assert build_lineage(run, engine, LineageOptions()) == LineagePlan(  # jobType APPLICATION (issue 35)
        notes=("an application-level run (jobType APPLICATION): the parent of its jobs' runs, not a process",)
    )


def test_same_run_always_gives_byte_identical_json(engine):
    run = _run_of("compat-tests__CLL", "588a6")
    reordered = merge_events(reversed(load_sequence("compat-tests__CLL")[4:8]))

    first = json.dumps(build_lineage(run, engine, LineageOptions()).entities)
    assert json.dumps(build_lineage(run, engine, LineageOptions()).entities) == first
    assert json.dumps(build_lineage(reordered, engine, LineageOptions()).entities) == first
