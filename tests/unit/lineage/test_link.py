"""The link step: a plan rewritten so that its processes reference the scanned assets its datasets resolved to (inputs,
outputs, columnMapping, columnLineageDetail, datasetLocations/datasetTables), the linked datasets' own entities
dropped, interim datasets counted as connector-owned; and the same rewrite on a process read back from a catalog."""

from __future__ import annotations

import json

from olparser.lineage import LineageOptions, build_lineage
from olparser.lineage.link import link_plan, relink_attributes, task_links
from olparser.resolution.tasks import TaskMatch
from olparser.runs.model import DatasetFacts, RunSnapshot

LAKE = "https://acct.dfs.core.windows.net"
PATH, SET = "azure_datalake_gen2_path", "azure_datalake_gen2_resource_set"
ORDERS, CUSTOMERS, OUT = f"{LAKE}/raw/orders", f"{LAKE}/raw/customers", f"{LAKE}/silver/orders"
OUT_SET = f"{OUT}/{{SparkPartitions}}"
UC = "databricks://m1/catalogs/main/schemas/sales/tables/customers"


def _field(name: str, column: str) -> dict:
    return {
        "namespace": "abfss://raw@acct.dfs.core.windows.net",
        "name": name,
        "field": column,
        "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}],
    }


def _run() -> RunSnapshot:
    output = DatasetFacts(
        "abfss://silver@acct.dfs.core.windows.net",
        "orders",
        facets={
            "schema": {"fields": [{"name": "id"}, {"name": "name"}]},
            "columnLineage": {
                "fields": {
                    "id": {"inputFields": [_field("orders", "id")]},
                    "name": {"inputFields": [_field("customers", "name")]},
                }
            },
        },
    )
    inputs = (
        DatasetFacts("abfss://raw@acct.dfs.core.windows.net", "orders"),
        DatasetFacts("abfss://raw@acct.dfs.core.windows.net", "customers"),
        DatasetFacts("kafka://broker:9092", "events"),
    )
    return RunSnapshot(
        run_id="r1",
        job_namespace="etl",
        job_name="app.insert",
        event_type="COMPLETE",
        event_time="2024-05-01T10:00:00Z",
        producer="test",
        inputs=inputs,
        outputs=(output,),
    )


def _process(plan) -> dict:
    return next(e for e in plan.entities if "lastRunId" in e["attributes"])


def test_linked_datasets_are_referenced_by_their_scanned_assets_and_never_written(engine):
    plan = build_lineage(_run(), engine, LineageOptions())
    linked = link_plan(
        plan,
        {(PATH, OUT): (SET, OUT_SET), (PATH, CUSTOMERS): ("databricks_table", UC), (PATH, ORDERS): (PATH, ORDERS)},
        interim=[],
    )

    assert [(e["typeName"], e["attributes"]["qualifiedName"]) for e in linked.external_datasets] == [(PATH, ORDERS)]
    process = _process(linked)["attributes"]
    assert process["qualifiedName"] == _process(plan)["attributes"]["qualifiedName"]  # still the rule identity's
    assert process["outputs"] == [{"typeName": SET, "uniqueAttributes": {"qualifiedName": OUT_SET}}]
    assert [(r["typeName"], r["uniqueAttributes"]["qualifiedName"]) for r in process["inputs"]] == [
        (PATH, ORDERS),
        ("databricks_table", UC),
        ("openlineage_dataset", "kafka://broker:9092/events"),
    ]
    assert json.loads(process["columnMapping"]) == [  # sorted by source, as the builder sorts them
        {"DatasetMapping": {"Source": UC, "Sink": OUT_SET}, "ColumnMapping": [{"Source": "name", "Sink": "name"}]},
        {"DatasetMapping": {"Source": ORDERS, "Sink": OUT_SET}, "ColumnMapping": [{"Source": "id", "Sink": "id"}]},
    ]
    detail = json.loads(process["columnLineageDetail"])
    assert [
        (f["field"], [(i["typeName"], i["qualifiedName"]) for i in f["inputFields"]]) for f in detail["fields"]
    ] == [("id", [(PATH, ORDERS)]), ("name", [("databricks_table", UC)])]
    assert linked.owned_keys() == plan.owned_keys()


def test_interim_datasets_are_kept_as_external_datasets_and_counted_as_the_connectors(engine):
    plan = build_lineage(_run(), engine, LineageOptions())
    linked = link_plan(plan, {}, interim=[(PATH, OUT), (PATH, ORDERS), ("openlineage_dataset", "not/in/plan")])

    assert linked.external_datasets == plan.external_datasets and linked.entities == plan.entities
    assert linked.interim == ((PATH, ORDERS), (PATH, OUT))
    assert set(linked.owned_keys()) == set(plan.owned_keys()) | {(PATH, ORDERS), (PATH, OUT)}


def test_a_linked_placeholder_goes_with_its_columns(engine):
    plan = build_lineage(_run(), engine, LineageOptions())
    placeholder = ("openlineage_dataset", "kafka://broker:9092/events")
    assert any(e["typeName"] == placeholder[0] for e in plan.entities)
    linked = link_plan(plan, {placeholder: ("azure_event_hub", "sb://ns/events")})

    assert not any(e["attributes"]["qualifiedName"].startswith(placeholder[1]) for e in linked.entities)
    assert [u.name for u in plan.unmatched] == ["events"] and linked.unmatched == ()
    assert ("azure_event_hub", "sb://ns/events") in [
        (r["typeName"], r["uniqueAttributes"]["qualifiedName"]) for r in _process(linked)["attributes"]["inputs"]
    ]


def test_two_datasets_linked_to_one_asset_are_referenced_once_and_their_column_mappings_merged():
    attributes = {
        "inputs": [
            {"typeName": PATH, "uniqueAttributes": {"qualifiedName": ORDERS}},
            {"typeName": PATH, "uniqueAttributes": {"qualifiedName": f"{ORDERS}/2024"}},
        ],
        "columnMapping": json.dumps(
            [
                {"DatasetMapping": {"Source": ORDERS, "Sink": OUT}, "ColumnMapping": [{"Source": "id", "Sink": "id"}]},
                {
                    "DatasetMapping": {"Source": f"{ORDERS}/2024", "Sink": OUT},
                    "ColumnMapping": [{"Source": "id", "Sink": "id"}, {"Source": "ts", "Sink": "ts"}],
                },
            ]
        ),
        "datasetLocations": json.dumps({ORDERS: "x"}),
    }
    target = (SET, f"{ORDERS}/{{N}}/{{SparkPartitions}}")
    changed = relink_attributes(attributes, {(PATH, ORDERS): target, (PATH, f"{ORDERS}/2024"): target})

    assert changed["inputs"] == [{"typeName": SET, "uniqueAttributes": {"qualifiedName": target[1]}}]
    assert json.loads(changed["columnMapping"]) == [
        {
            "DatasetMapping": {"Source": target[1], "Sink": OUT},
            "ColumnMapping": [{"Source": "id", "Sink": "id"}, {"Source": "ts", "Sink": "ts"}],
        }
    ]
    assert json.loads(changed["datasetLocations"]) == {target[1]: "x"}


def test_attributes_that_name_no_linked_dataset_are_returned_as_they_are():
    attributes = {"inputs": [{"guid": "g-1", "typeName": "Process"}], "columnMapping": "not json", "datasetTables": ""}
    assert relink_attributes(attributes, {(PATH, ORDERS): (SET, OUT_SET)}) is attributes


def test_another_tools_text_in_a_linked_attribute_is_left_alone():
    attributes = {
        "columnMapping": f"written by hand: {ORDERS}",
        "inputs": [{"typeName": PATH, "uniqueAttributes": {"qualifiedName": ORDERS}}, {"guid": "g-1", "typeName": "x"}],
    }
    changed = relink_attributes(attributes, {(PATH, ORDERS): (SET, OUT_SET)})
    assert changed["columnMapping"] == attributes["columnMapping"]
    assert changed["inputs"] == [
        {"typeName": SET, "uniqueAttributes": {"qualifiedName": OUT_SET}},
        {"guid": "g-1", "typeName": "x"},
    ]


def _job_run() -> RunSnapshot:
    env = {
        "spark.databricks.workspaceUrl": "adb-1.2.azuredatabricks.net",
        "spark.databricks.job.id": "881",
        "spark.databricks.job.type": "notebook",
        "spark.databricks.notebook.path": "/Shared/etl/ingest",
    }
    return RunSnapshot(
        "r",
        "adb-1.2#0501-cluster",
        "databricks_shell.append_data",
        "COMPLETE",
        "2024-01-01T00:00:00Z",
        "p",
        run_facets={"environment-properties": {"environment-properties": env}},
        outputs=(DatasetFacts("abfss://out@acct.dfs.core.windows.net", "gold/orders"),),
    )


def test_a_job_run_is_written_under_the_jobs_existing_task_that_runs_the_same_notebook(engine):
    plan = build_lineage(_job_run(), engine, LineageOptions())
    job = "databricks://adb-1.2.azuredatabricks.net/jobs/881"
    theirs = f"{job}/tasks/ingest_orders"
    assert plan.task is not None and plan.task.task == f"{job}/tasks/Shared/etl/ingest"

    linked = link_plan(plan, {}, (), {plan.task.task: TaskMatch("databricks_notebook_task", theirs, "ingest", "Sales")})

    by_type = {e["typeName"]: e for e in linked.entities}
    assert by_type["databricks_job"]["attributes"] == {"qualifiedName": job, "name": "Sales", "jobId": 881}
    assert by_type["databricks_notebook_task"]["attributes"] == {
        "qualifiedName": theirs,
        "name": "ingest",
        "jobId": 881,
        "notebookPath": "/Shared/etl/ingest",
    }
    process = by_type["databricks_process"]
    assert process["attributes"]["qualifiedName"] == (  # a name never depends on what the catalog held
        f"{job}/tasks/Shared/etl/ingest/processes/append_data/https://acct.dfs.core.windows.net/out/gold/orders"
    )
    assert process["relationshipAttributes"]["task"] == {
        "guid": by_type["databricks_notebook_task"]["guid"],
        "typeName": "databricks_notebook_task",
        "uniqueAttributes": {"qualifiedName": theirs},
        "relationshipType": "databricks_runnable_processes",
    }
    assert link_plan(plan, {}, (), {}) == plan  # nothing found: the builder's own task
    assert task_links(plan, {plan.task.task: TaskMatch("databricks_notebook_task", theirs, "ingest", "Sales")}) == {
        ("databricks_notebook_task", plan.task.task): ("databricks_notebook_task", theirs)
    }
