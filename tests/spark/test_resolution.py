"""`spark backfill` links datasets to the assets Purview's scanners registered, with the live path's resolver: a
folder with a resource set is referenced as that resource set (no path written beside it), the others are written as
before; the scanned entities are never written."""

from __future__ import annotations

import json

import pytest
import requests

from tests.e2e.lineage_helpers import Atlas, refs
from tests.spark.events import spark_run, write_json_lines
from tests.support.spark_jobs import job_for
from tools.spark.spark_job import run_spark

pytestmark = pytest.mark.spark

LAKE = "https://contosolake.dfs.core.windows.net/raw/sales"
BLOB = "https://contosoblob.blob.core.windows.net/out/reports"
SCANNED = [
    ("azure_datalake_gen2_resource_set", f"{LAKE}/part_0_0/{{SparkPartitions}}"),
    ("azure_blob_resource_set", f"{BLOB}/out_0/{{SparkPartitions}}"),
]
STABLE = ("typeName", "guid", "status", "attributes", "createdBy", "createTime")


def test_a_backfill_links_to_the_scanned_resource_sets_and_writes_the_rest_as_before(spark, catalog_factory, tmp_path):
    catalog = catalog_factory()
    requests.post(
        f"{catalog.atlas_url}/entity/bulk",
        timeout=10,
        json={
            "entities": [
                {
                    "typeName": t,
                    "guid": f"-{i}",
                    "attributes": {"qualifiedName": q, "name": "scanned", "partitionCount": 2},
                }
                for i, (t, q) in enumerate(SCANNED, 1)
            ]
        },
    ).raise_for_status()
    atlas = Atlas(catalog.atlas_url)
    before = {key: json.dumps({k: atlas.entity(*key).get(k) for k in STABLE}, sort_keys=True) for key in SCANNED}
    source = write_json_lines(tmp_path / "events.jsonl", [e for n in range(3) for e in spark_run(n)])

    run_spark(spark, [str(source)], job_for(catalog))

    processes = {
        p["attributes"]["qualifiedName"].split("/processes/")[1].split("/")[0]: p
        for p in atlas.all_entities()
        if p["typeName"] == "spark_process"
    }
    assert (refs(processes["job_0"], "inputs"), refs(processes["job_0"], "outputs")) == (
        [f"{LAKE}/part_0_0/{{SparkPartitions}}", f"{LAKE}/part_0_1"],
        [f"{BLOB}/out_0/{{SparkPartitions}}"],
    )
    assert (refs(processes["job_1"], "inputs"), refs(processes["job_1"], "outputs")) == (
        [f"{LAKE}/part_1_0", f"{LAKE}/part_1_1"],
        [f"{BLOB}/out_1"],
    )
    keys = atlas.keys()
    assert ("azure_datalake_gen2_path", f"{LAKE}/part_0_0") not in keys
    assert ("azure_blob_path", f"{BLOB}/out_0") not in keys
    assert {
        key: json.dumps({k: atlas.entity(*key).get(k) for k in STABLE}, sort_keys=True) for key in SCANNED
    } == before


@pytest.mark.parametrize("runner", ["spark", "single process"])
def test_the_backfill_history_names_the_scanned_assets_the_writes_linked(spark, catalog_factory, tmp_path, runner):
    from tools.spark.local import run_local

    catalog = catalog_factory()
    requests.post(
        f"{catalog.atlas_url}/entity/bulk",
        timeout=10,
        json={
            "entities": [
                {
                    "typeName": t,
                    "guid": f"-{i}",
                    "attributes": {"qualifiedName": q, "name": "scanned", "partitionCount": 2},
                }
                for i, (t, q) in enumerate(SCANNED, 1)
            ]
        },
    ).raise_for_status()
    # job_0 runs twice: its older run is superseded (not written) and is linked in the history all the same
    events = [*spark_run(0, minute=0), *spark_run(0, minute=5), *spark_run(1)]
    events[0]["run"]["runId"] = events[1]["run"]["runId"] = "00000000-0000-0000-0000-0000000000aa"
    source = write_json_lines(tmp_path / "events.jsonl", events)
    job = job_for(catalog, run_history_days=36500)

    report = run_spark(spark, [str(source)], job) if runner == "spark" else run_local([str(source)], job)

    assert report.runs_recorded == 3
    history = job.history()
    try:

        def accesses(run_id: str) -> list[tuple[str, str, str]]:
            record = history.run(run_id)
            assert record is not None
            return sorted((a.access, a.dataset.type_name, a.dataset.qualified_name) for a in record.accesses())

        linked = [
            ("read", "azure_datalake_gen2_path", f"{LAKE}/part_0_1"),
            ("read", "azure_datalake_gen2_resource_set", f"{LAKE}/part_0_0/{{SparkPartitions}}"),
            ("write", "azure_blob_resource_set", f"{BLOB}/out_0/{{SparkPartitions}}"),
        ]
        assert accesses("00000000-0000-0000-0000-0000000000aa") == linked  # the older run of job_0
        assert accesses("00000000-0000-0000-0000-000000000001") == linked  # its newer run, the one written
        assert accesses("00000000-0000-0000-0000-000000000002") == [
            ("read", "azure_datalake_gen2_path", f"{LAKE}/part_1_0"),
            ("read", "azure_datalake_gen2_path", f"{LAKE}/part_1_1"),
            ("write", "azure_blob_path", f"{BLOB}/out_1"),
        ]
    finally:
        history.close()


ADF_FACTORY = "/subscriptions/0000-sub/resourceGroups/rg-etl/providers/Microsoft.DataFactory/factories/contoso-adf"


def test_a_backfill_references_the_scanned_adf_pipeline_the_parent_facet_names(spark, catalog_factory, tmp_path):
    # openlineage-spark's SQL job facet when the ADF activity passes `spark.openlineage.parentJob*`: the parent is the
    # application, the root the pipeline run (SparkSQLExecutionContext.buildApplicationParentFacet; olparser/lineage/adf.py)
    catalog = catalog_factory()
    pipelines = [f"{ADF_FACTORY}/pipelines/LoadSales", f"{ADF_FACTORY}/pipelines/Other"]
    requests.post(
        f"{catalog.atlas_url}/entity/bulk",
        timeout=10,
        json={
            "entities": [
                {"typeName": "adf_pipeline", "guid": f"-{i}", "attributes": {"qualifiedName": q, "name": "p"}}
                for i, q in enumerate(pipelines, 1)
            ]
        },
    ).raise_for_status()
    atlas = Atlas(catalog.atlas_url)
    before = {
        q: json.dumps({k: atlas.entity("adf_pipeline", q).get(k) for k in STABLE}, sort_keys=True) for q in pipelines
    }
    root = {"run": {"runId": "5f0d2c1e-8a3b-4c6d-9e7f-0a1b2c3d4e5f"}, "job": {"namespace": "adf://contoso-adf"}}
    events = []
    for number, name in ((0, "LoadSales"), (1, "Missing")):
        for event in spark_run(number):
            parent = event["run"]["facets"]["parent"]
            event["run"]["facets"]["parent"] = {**parent, "root": {**root, "job": {**root["job"], "name": name}}}
            events.append(event)
    source = write_json_lines(tmp_path / "events.jsonl", events)

    run_spark(spark, [str(source)], job_for(catalog))

    processes = {
        p["attributes"]["qualifiedName"].split("/processes/")[1].split("/")[0]: p
        for p in atlas.all_entities()
        if p["typeName"] == "spark_process"
    }
    assert refs(processes["job_0"], "adfPipeline") == [pipelines[0]]
    assert refs(processes["job_1"], "adfPipeline") == []
    assert sorted(q for t, q in atlas.keys() if t == "adf_pipeline") == pipelines  # nothing created
    assert {
        q: json.dumps({k: atlas.entity("adf_pipeline", q).get(k) for k in STABLE}, sort_keys=True) for q in pipelines
    } == before
