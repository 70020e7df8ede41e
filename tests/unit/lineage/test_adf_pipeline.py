"""Recognising the Azure Data Factory pipeline a run's ParentRunFacet names (olparser/lineage/adf.py): the three
namespace forms of the documented convention, the candidates each gives, wrong forms ignored, and `link_plan` adding
the reference only for a resolved pipeline.

Event input: openlineage-spark's parent facet as `SparkApplicationExecutionContext` / `SparkSQLExecutionContext`
build it from `spark.openlineage.parentJobNamespace` / `parentJobName` / `parentRunId` (ParentRunFacet 1-1-0 `run`,
`job`; 1-2-0 `root`), with the values the ADF Databricks activity passes (docs/guides/job-identity.md)."""

from __future__ import annotations

import pytest

from olparser.lineage.adf import ADF_PIPELINE, PENDING_TYPE, AdfPipeline, adf_pipeline
from olparser.lineage.identity import JobRef, Orchestration, orchestration
from olparser.lineage.link import link_plan
from olparser.lineage.plan import LineagePlan

RUN = "5f0d2c1e-8a3b-4c6d-9e7f-0a1b2c3d4e5f"  # @pipeline().RunId
ARM = "/subscriptions/0000-sub/resourceGroups/rg-etl/providers/Microsoft.DataFactory/factories/contoso-adf"
QN = f"{ARM}/pipelines/LoadOrders"


def facet(parent_namespace: str, parent_name: str, run_id: str = RUN, root: tuple[str, str] | None = None) -> dict:
    body = {"run": {"runId": run_id}, "job": {"namespace": parent_namespace, "name": parent_name}}
    if root is not None:
        body["root"] = {"run": {"runId": RUN}, "job": {"namespace": root[0], "name": root[1]}}
    return {"parent": body}


@pytest.mark.parametrize(
    "namespace",
    ["adf://contoso-adf", "ADF://contoso-adf/", "azuredatafactory://contoso-adf", "AzureDataFactory://contoso-adf"],
)
def test_the_factory_name_forms_give_a_search_for_the_pipeline(namespace):
    found = adf_pipeline(orchestration("databricks_shell", facet(namespace, "LoadOrders")))
    assert found == AdfPipeline("contoso-adf", "LoadOrders")
    assert found.pending == (PENDING_TYPE, "adf://contoso-adf/pipelines/loadorders")
    (candidate,) = found.candidates()
    assert candidate.search is not None and candidate.search.type_name == ADF_PIPELINE
    assert candidate.search.keywords == "LoadOrders"
    assert candidate.search.matches(ADF_PIPELINE, QN)
    assert candidate.search.matches(ADF_PIPELINE, QN.lower())  # an ARM id in any case
    assert not candidate.search.matches(ADF_PIPELINE, QN.replace("contoso-adf", "other-adf"))
    assert not candidate.search.matches(ADF_PIPELINE, QN + "/activities/Copy")
    assert not candidate.search.matches("adf_copy_activity", QN)


def test_the_factory_arm_id_gives_the_exact_qualified_name_then_a_search():
    found = adf_pipeline(orchestration("databricks_shell", facet(ARM, "LoadOrders")))
    assert found == AdfPipeline("contoso-adf", "LoadOrders", "0000-sub", "rg-etl")
    exact, search = found.candidates()
    assert (exact.key, exact.exact) == ((ADF_PIPELINE, QN), True)
    assert search.search is not None and search.search.matches(ADF_PIPELINE, QN.upper())
    assert not search.search.matches(ADF_PIPELINE, QN.replace("rg-etl", "rg-other"))


def test_a_sql_job_whose_root_is_the_pipeline_names_it():
    # openlineage-spark: a SQL job's parent is its application, its root the `parentJob*` settings
    facets = facet("databricks", "databricks_shell", RUN, root=("adf://contoso-adf", "LoadOrders"))
    found = adf_pipeline(orchestration("databricks_shell.execute_insert.orders", facets))
    assert found == AdfPipeline("contoso-adf", "LoadOrders")


@pytest.mark.parametrize(
    "parent",
    [
        JobRef("adf://contoso-adf", "LoadOrders", "not-a-guid"),  # not @pipeline().RunId
        JobRef("adf://contoso-adf", "LoadOrders", ""),
        JobRef("adf://", "LoadOrders", RUN),  # no factory
        JobRef("adf://contoso-adf/pipelines", "LoadOrders", RUN),  # a path after the factory
        JobRef("adfx://contoso-adf", "LoadOrders", RUN),
        JobRef("https://contoso-adf", "LoadOrders", RUN),
        JobRef("contoso-adf", "LoadOrders", RUN),
        JobRef("adf://contoso-adf", "Load/Orders", RUN),  # not a pipeline name
        JobRef("adf://contoso-adf", " LoadOrders", RUN),
        JobRef("/subscriptions/s/resourceGroups/rg/providers/Microsoft.Synapse/workspaces/w", "LoadOrders", RUN),
        JobRef("/subscriptions/s/providers/Microsoft.DataFactory/factories/f", "LoadOrders", RUN),  # no group
        JobRef(f"{ARM}/pipelines/LoadOrders", "LoadOrders", RUN),  # the pipeline's id, not the factory's
        JobRef("airflow", "etl.load", RUN),
    ],
)
def test_other_forms_name_no_pipeline(parent):
    assert adf_pipeline(Orchestration(parent, None, parent)) is None
    assert adf_pipeline(Orchestration()) is None


def _plan(pipeline: AdfPipeline | None) -> LineagePlan:
    process = {
        "typeName": "databricks_process",
        "guid": "-1",
        "attributes": {"qualifiedName": "p", "inputs": [], "outputs": [], "lastRunId": RUN},
        "relationshipAttributes": {"task": {"typeName": "databricks_notebook"}},
    }
    return LineagePlan(entities=(process,), pipeline=pipeline)


def test_link_plan_references_the_resolved_pipeline_only():
    pipeline = AdfPipeline("contoso-adf", "LoadOrders")
    plan = _plan(pipeline)
    assert plan.resolution_extra() == {pipeline.pending: pipeline.candidates()}
    linked = link_plan(plan, {pipeline.pending: (ADF_PIPELINE, QN)})
    assert linked.entities[0]["relationshipAttributes"] == {
        "task": {"typeName": "databricks_notebook"},
        "adfPipeline": {
            "typeName": ADF_PIPELINE,
            "uniqueAttributes": {"qualifiedName": QN},
            "relationshipType": "adf_pipeline_databricks_processes",
        },
    }
    assert [e["typeName"] for e in linked.entities] == ["databricks_process"]  # the pipeline itself never written
    assert link_plan(plan, {}) == plan  # not found: no reference
    assert _plan(None).resolution_extra() == {}
